//go:build unix && !linux

package conformance

// ttyTwin is Linux-only (it opens a pty through /dev/ptmx ioctls).
func ttyTwin(c *caseRun) {
	c.twinf("no pty twin on this OS: the probe's findings stand alone")
}
