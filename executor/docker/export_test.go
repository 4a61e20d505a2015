package docker

// BreakForTest kills the session's current container the way a failed
// kill does (breakBox), for tests of that fallback.
func (x *Executor) BreakForTest(why string) string {
	x.mu.Lock()
	b := x.cur
	x.mu.Unlock()
	if b == nil {
		return ""
	}
	return x.breakBox(b, why)
}
