package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/conformance/probe"
)

// ttyTwin runs the probe's tty action on a fresh pty that is its
// controlling terminal and stdin, to show the probe detects a terminal.
func ttyTwin(c *caseRun) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		// A host without ptys (a minimal container) cannot run the twin;
		// the command's own findings then stand alone.
		c.twinf("no pty twin: opening /dev/ptmx: %v", err)
		return
	}
	defer master.Close()
	mfd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		c.setupf("twin: unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		c.setupf("twin: ptsname: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		c.setupf("twin: opening the pty: %v", err)
	}
	defer slave.Close()
	cmd := exec.CommandContext(c.ctx, c.probe.path, "tty")
	cmd.Stdin = slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.Output()
	recs := probe.Parse(out)
	if len(recs) != 1 {
		c.setupf("twin: the probe on a pty printed no record (%v, %q)", err, clip(string(out), 200))
	}
	v := recs[0].Values
	c.twinf("on a pty as controlling terminal: tty_nr %s; /dev/tty %s; fd0 %s", v["tty_nr"], v["dev_tty"], v["fd0"])
	if v["tty_nr"] == "0" || v["dev_tty"] != "opened" {
		c.setupf("twin: the probe does not detect a controlling terminal it has, so not finding one proves nothing")
	}
}
