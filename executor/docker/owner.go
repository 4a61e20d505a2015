package docker

import (
	"os"
	"strconv"
)

// owner identifies the process that created a container, so that a later
// New can tell whether it is still alive: the host name, the host's boot
// id and the process's start time (Linux) guard against a recycled pid.
type owner struct {
	host, boot string
	pid        int
	start      string
}

// self returns the identity of the running process.
func self() owner {
	h, _ := os.Hostname()
	pid := os.Getpid()
	return owner{host: h, boot: bootID(), pid: pid, start: startTime(pid)}
}

func (o owner) labels() map[string]string {
	return map[string]string{labelHost: o.host, labelBoot: o.boot, labelPid: strconv.Itoa(o.pid), labelStart: o.start}
}

// alive reports whether the owner process still runs (on this host).
func (o owner) alive() bool {
	if !pidAlive(o.pid) {
		return false
	}
	return o.start == "" || startTime(o.pid) == o.start
}
