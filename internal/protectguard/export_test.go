package protectguard

// Walks returns how many whole walks g made.
func Walks(g *Guard) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.walks
}

// Listed returns how many directory entries g's last walk listed.
func Listed(g *Guard) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.listed
}

// Hashed returns how many bytes g has read to hash files.
func Hashed(g *Guard) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hashed
}

// Held returns the most children one listing of g's last walk held.
func Held(g *Guard) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// Compiled is compiled, for the external tests.
var Compiled = compiled
