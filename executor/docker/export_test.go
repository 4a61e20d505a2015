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

// RunnerStartsForTest returns how often the current container's command
// runner was started, and whether one is running now.
func (x *Executor) RunnerStartsForTest() (int, bool) {
	x.mu.Lock()
	b := x.cur
	x.mu.Unlock()
	if b == nil {
		return 0, false
	}
	b.rmu.Lock()
	defer b.rmu.Unlock()
	x.mu.Lock()
	r := b.run
	x.mu.Unlock()
	return b.starts, r.alive()
}
