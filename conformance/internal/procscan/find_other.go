//go:build unix && !linux

package procscan

import (
	"bufio"
	"bytes"
	"os/exec"
	"strconv"
	"strings"
)

// Find returns the processes other than this one whose command line (and,
// where ps shows it with -E, environment) contains tag, from ps(1).
func Find(tag string) ([]Process, error) {
	out, err := exec.Command("ps", "-axwwE", "-o", "pid=,command=").Output()
	if err != nil {
		return nil, err
	}
	var ps []Process
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || self(pid) {
			continue
		}
		line := strings.Join(f[1:], " ")
		if matches([]byte(tag), []byte(line)) {
			ps = append(ps, Process{Pid: pid, Cmdline: line})
		}
	}
	return ps, nil
}
