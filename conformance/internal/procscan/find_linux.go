package procscan

import (
	"bytes"
	"os"
	"strconv"
)

// Find returns the live processes (zombies excluded) other than this one
// whose command line or environment contains tag. Processes whose files
// this process may not read are not seen.
func Find(tag string) ([]Process, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	t := []byte(tag)
	var out []Process
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || self(pid) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + n + "/cmdline")
		env, _ := os.ReadFile("/proc/" + n + "/environ")
		if len(cmd) == 0 && len(env) == 0 {
			continue // kernel thread, zombie, or not ours to read
		}
		if matches(t, cmd, env) {
			out = append(out, Process{Pid: pid, Cmdline: string(bytes.TrimSpace(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))})
		}
	}
	return out, nil
}
