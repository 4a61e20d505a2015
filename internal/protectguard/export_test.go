package protectguard

// Walks returns how many whole walks g made.
func Walks(g *Guard) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.walks
}
