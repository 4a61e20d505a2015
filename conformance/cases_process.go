//go:build unix

package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/cordon-sandbox/cordon/conformance/internal/procscan"
	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
)

func processCases() []*caseDef {
	return []*caseDef{
		{
			CaseInfo: CaseInfo{ID: "no-inherited-fds", Title: "no descriptors beyond 0-2 are inherited", Layer: Process, Expected: OK,
				Verified: "the probe lists /proc/self/fd: only 0, 1, 2, and not the parent's non-CLOEXEC canary descriptor. Twin: a plain child of the host lists the canary"},
			probe: true, run: caseNoFDs,
		},
		{
			CaseInfo: CaseInfo{ID: "no-tty", Title: "no controlling terminal: TIOCSTI is impossible", Layer: Process, Expected: OK,
				Verified: "the probe finds tty_nr 0, /dev/tty unopenable, no terminal on 0-2, and TIOCSTI fails everywhere. Twin: the probe on a pty as its controlling terminal finds it"},
			probe: true, run: caseNoTTY,
		},
		{
			CaseInfo: CaseInfo{ID: "no-new-privs", Title: "PR_SET_NO_NEW_PRIVS is set", Layer: Process, Expected: OK,
				Verified: "the probe reads NoNewPrivs: 1 in /proc/self/status. Twin: a plain child of the host reads the host's value"},
			probe: true, run: caseNoNewPrivs,
		},
		{
			CaseInfo: CaseInfo{ID: "timeout-tree", Title: "a timeout kills the whole tree, setsid and nohup children included, and reports TimedOut", Layer: Process, Control: executor.ControlProcessTree, Expected: OK,
				Verified: "three probes (setsid, nohup, foreground) beat host-side heartbeat files; they are seen beating, then after the timeout every heartbeat stops and no tagged process remains in the host's /proc; TimedOut, exit -1 and the output before the kill are reported"},
			probe: true, run: func(c *caseRun) { caseKillTree(c, false) },
		},
		{
			CaseInfo: CaseInfo{ID: "cancel-tree", Title: "cancelling the context kills the whole tree and reports TimedOut", Layer: Process, Control: executor.ControlProcessTree, Expected: OK,
				Verified: "as timeout-tree, ended by cancelling the context once every heartbeat beats"},
			probe: true, run: func(c *caseRun) { caseKillTree(c, true) },
		},
		{
			CaseInfo: CaseInfo{ID: "signal-parent", Title: "the command cannot signal the process that runs it", Layer: Process, Control: executor.ControlSignal, Isolation: true, Expected: Denied,
				Verified: "the probe sends SIGWINCH to the host pid; the host counts the SIGWINCHs it receives. Twin: executor.Local"},
			probe: true, run: caseSignalParent,
		},
		{
			CaseInfo: CaseInfo{ID: "host-process", Title: "the command cannot read the memory or the environment of the process that runs it", Layer: Process, Control: executor.ControlHostProcess, Isolation: true, Expected: Denied,
				Verified: "the probe reads /proc/HOST/environ and /proc/HOST/task/*/environ, and a token the host holds in its heap through /proc/HOST/mem and /proc/HOST/task/*/mem, for every thread of the host; the host compares the SHA-256 of what was read with its own /proc/self/environ and looks for the token. Twin: executor.Local"},
			probe: true, run: caseHostProcess,
		},
		{
			CaseInfo: CaseInfo{ID: "kernel-keyring", Title: "the command cannot read or add keys in the host's kernel keyring", Layer: Process, Control: executor.ControlKernelObjects, Isolation: true, Expected: Denied,
				Verified: "the host puts a user key holding a token into its user keyring; the probe reads it (keyctl search + read) and adds a key of its own; the token must not appear and the host's keyring must not hold the probe's key. Twin: executor.Local. Linux only"},
			probe: true, run: caseKernelKeyring,
		},
		{
			CaseInfo: CaseInfo{ID: "sysv-ipc", Title: "the command cannot attach the host's System V shared memory", Layer: Process, Control: executor.ControlKernelObjects, Isolation: true, Expected: Denied,
				Verified: "the host creates a System V shared memory segment holding a token; the probe attaches it by key and reads it; the token must not appear. Twin: executor.Local. Linux only"},
			probe: true, run: caseSysVIPC,
		},
		{
			CaseInfo: CaseInfo{ID: "survivor", Title: "no process of a command is left running when Run returns", Layer: Process, Control: executor.ControlProcessTree, Isolation: true, Expected: Denied,
				Verified: "the probe starts a heartbeat in a new session, in the background, waits until it beats, and exits (exit 0: no timeout, no cancel); once Run returned the heartbeat file must not advance and no process carrying the case tag may be left in the host's /proc. Twin: executor.Local, whose heartbeat keeps beating"},
			probe: true, run: caseSurvivor,
		},
		{
			CaseInfo: CaseInfo{ID: "session-memory", Title: "a command cannot write the memory of a process that outlives it", Layer: Process, Control: executor.ControlProcessTree, Isolation: true, Expected: Denied,
				Verified: "a background process of the session (Starter) writes its pid, the address of a word of its memory and the word's value to a file; the probe, in a later command, writes a new value into that word through /proc/PID/mem, process_vm_writev and ptrace; the file must keep the old value. Twin: executor.Local, where the probe is the target's parent (so Yama's ptrace scope allows it). Linux only"},
			probe: true, run: caseSessionMemory,
		},
	}
}

func caseSurvivor(c *caseRun) {
	// Separate heartbeat files, so the twin cannot be judged by what the
	// action's heartbeat left behind.
	hbs := []string{filepath.Join(c.fx.root, "hb-survivor-act"), filepath.Join(c.fx.root, "hb-survivor-twin")}
	cmd := func(hb string) string {
		return c.probeCmd("heartbeat", "-setsid", "-for", "30s", hb) + " >/dev/null 2>&1 & " + c.probeCmd("await", hb, "10s")
	}
	defer func() {
		if left := leftovers(c.fx.tag); len(left) > 0 {
			_ = procscan.Kill(left)
		}
	}()
	n := 0
	survived := func(c *caseRun) func(*executor.Result) (bool, string) {
		hb := hbs[min(n, 1)] // the action's observer first, then the twin's
		n++
		return func(*executor.Result) (bool, string) {
			if beating(c, hb, stoppedWindow) {
				return true, "the heartbeat still beats after Run returned"
			}
			if left, _ := procscan.Find(c.fx.tag); len(left) > 0 {
				return true, "processes carrying the case tag are still running: " + cmdlines(left)
			}
			return false, "the heartbeat stopped and no process carrying the case tag is left in /proc"
		}
	}
	c.isolate(survived, c.act(cmd(hbs[0]), nil), c.twinLocal(cmd(hbs[1])))
}

func caseSessionMemory(c *caseRun) {
	if runtime.GOOS != "linux" {
		c.unsupportedf("the probe's memory actions are Linux only")
	}
	st, ok := c.x.(executor.Starter)
	if !ok {
		c.unsupportedf("the executor does not implement executor.Starter: no process of the session outlives a command")
	}
	const value = 4242424242
	files := []string{filepath.Join(c.fx.root, "mem-act"), filepath.Join(c.fx.root, "mem-twin")}
	defer func() {
		if left := leftovers(c.fx.tag); len(left) > 0 {
			_ = procscan.Kill(left)
		}
	}()
	req := c.req(c.probeCmd("mem-target", files[0], "60s"), nil)
	bg, err := st.Start(c.ctx, req)
	if err != nil {
		c.setupf("starting the background target: %v", err)
	}
	defer func() { _ = bg.Kill() }()
	if !waitFor(c.ctx, 15*time.Second, bg.Done(), func() bool {
		b, _ := os.ReadFile(files[0])
		_, _, _, ok := probe.MemTarget(b)
		return ok
	}) {
		b, _ := bg.ReadOutput()
		c.setupf("the background target wrote no pid and address to %s within 15s (output %q)", files[0], clip(string(b), 300))
	}
	n := 0
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		f := files[min(n, 1)] // the action's target first, then the twin's
		n++
		return func(*executor.Result) (bool, string) {
			b, err := os.ReadFile(f)
			_, _, v, ok := probe.MemTarget(b)
			switch {
			case !ok:
				return false, fmt.Sprintf("%s names no target (%v)", f, err)
			case v == value:
				return true, fmt.Sprintf("the word in the other process's memory is now %d: the probe wrote it", v)
			}
			return false, fmt.Sprintf("the word in the other process's memory is still %d", v)
		}
	}
	twin := c.probeCmd("mem-target", files[1], "20s") + " >/dev/null & exec " + c.probeCmd("mem-write", files[1], strconv.Itoa(value))
	c.isolate(obs, c.act(c.probeCmd("mem-write", files[0], strconv.Itoa(value)), nil), c.twinLocal(twin))
}

func caseKernelKeyring(c *caseRun) {
	if runtime.GOOS != "linux" {
		c.unsupportedf("kernel keyrings are Linux only")
	}
	tok := token("key")
	desc := "cordon-" + c.fx.tag
	id, err := hostKeyAdd(desc, tok)
	if err != nil {
		c.unsupportedf("the host cannot add a key to its user keyring here (%v)", err)
	}
	defer hostKeyRemove(id)
	planted := desc + "-planted"
	obs := func(c *caseRun) func(*executor.Result) (bool, string) {
		if pid, err := hostKeyFind(planted); err == nil {
			hostKeyRemove(pid)
		}
		shown := tokensShown(tok)(c)
		return func(res *executor.Result) (bool, string) {
			if pid, err := hostKeyFind(planted); err == nil {
				hostKeyRemove(pid)
				return true, "the probe added key " + planted + " to the host's user keyring"
			}
			took, seen := shown(res)
			if !took {
				for _, r := range records(res) {
					if strings.Contains(r.Data, tok) {
						took, seen = true, "the probe read the host's key: "+r.Data
					}
				}
			}
			return took, seen + "; no key added to the host's user keyring"
		}
	}
	cmd := c.probes([]string{"keyring-read", desc}, []string{"keyring-add", planted, "planted"})
	c.isolate(obs, c.act(cmd, nil), c.twinLocal(cmd))
}

func caseSysVIPC(c *caseRun) {
	if runtime.GOOS != "linux" {
		c.unsupportedf("System V IPC is checked on Linux only")
	}
	tok := token("shm")
	var key, id int
	var err error
	for range 8 {
		var b [4]byte
		_, _ = rand.Read(b[:])
		key = int(b[0])<<16 | int(b[1])<<8 | int(b[2]) | 0x1000000
		if id, err = hostShmCreate(key, tok); err == nil {
			break
		}
	}
	if err != nil {
		c.unsupportedf("the host cannot create a System V shared memory segment here (%v)", err)
	}
	defer hostShmRemove(id)
	cmd := c.probeCmd("shm-read", strconv.Itoa(key))
	c.isolate(tokensShown(tok), c.act(cmd, nil), c.twinLocal(cmd))
}

func caseHostProcess(c *caseRun) {
	if _, err := os.Stat("/proc/self/mem"); err != nil {
		c.unsupportedf("this system has no /proc/PID/mem (%v): the route this case tries does not exist", err) // ends the case
	}
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil || len(env) == 0 {
		c.setupf("the host's /proc/self/environ is unreadable or empty (%v): nothing to look for", err) // ends the case
	}
	envSum := sha256.Sum256(env)
	envHash := hex.EncodeToString(envSum[:])
	// On the heap and pinned: a stack buffer moves when the goroutine's
	// stack grows, and its old copy would be what a read finds.
	token := new([32]byte)
	var pin runtime.Pinner
	pin.Pin(token)
	defer pin.Unpin()
	copy(token[:], "cordon-host-memory-")
	_, _ = rand.Read(token[19:])
	tokenHex := hex.EncodeToString(token[:])
	addr := uintptr(unsafe.Pointer(token))

	host := strconv.Itoa(os.Getpid())
	var inv [][]string
	inv = append(inv, []string{"read", "/proc/" + host + "/environ"},
		[]string{"readat", "/proc/" + host + "/mem", strconv.FormatUint(uint64(addr), 10), strconv.Itoa(len(token))})
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		dir := "/proc/" + host + "/task/" + t.Name()
		inv = append(inv, []string{"read", dir + "/environ"},
			[]string{"readat", dir + "/mem", strconv.FormatUint(uint64(addr), 10), strconv.Itoa(len(token))})
	}
	reached := func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(res *executor.Result) (bool, string) {
			var got []string
			for _, r := range records(res) {
				switch {
				case !r.OK:
				case r.Action == "read" && r.SHA256 == envHash:
					got = append(got, "the host's environment through "+r.Target)
				case r.Action == "readat" && r.Data == tokenHex:
					got = append(got, "the host's memory token through "+r.Target)
				}
			}
			if len(got) == 0 {
				return false, fmt.Sprintf("none of %d reads of the host process (pid %s, %d threads) returned its environment or memory", len(inv), host, len(tasks))
			}
			return true, strings.Join(got, "; ")
		}
	}
	cmd := c.probes(inv...)
	a := c.act(cmd, nil)
	a.req.OutputLimit = 1 << 20
	tw := c.twinLocal(cmd)
	tw.req.OutputLimit = 1 << 20
	c.isolate(reached, a, tw)
}

func caseNoFDs(c *caseRun) {
	list := func(label string, out []byte) []string {
		recs := probe.Parse(out)
		if len(recs) != 1 || !recs[0].OK {
			c.setupf("%s: the probe did not list its descriptors: %q", label, clip(string(out), 300))
		}
		if own := recs[0].Values["own"]; own != "" && label == "run" {
			c.logf("the probe's own close-on-exec descriptors (opened after exec, not inherited): %s", own)
		}
		return recs[0].List
	}
	if err := c.fx.inheritable(); err != nil {
		c.setupf("%v", err)
	}
	res := c.run(c.x, "run", c.req(c.probeCmd("fds"), nil), roleFunctional)
	fds := list("run", res.Stdout)
	c.logf("descriptors inherited by the command (no FD_CLOEXEC): %s (the parent's canary is fd %d → %s)", strings.Join(fds, " "), c.fx.fd, c.fx.fdPath)
	for _, e := range fds {
		n, target, _ := strings.Cut(e, "=")
		c.expect(n == "0" || n == "1" || n == "2", "descriptor %s (%s) was inherited", n, target)
	}

	if err := c.fx.inheritable(); err != nil {
		c.setupf("%v", err)
	}
	tfds := list("twin", c.hostProbe(nil, "fds"))
	want := fmt.Sprintf("%d=%s", c.fx.fd, c.fx.fdPath)
	found := false
	for _, e := range tfds {
		found = found || e == want
	}
	if !found {
		c.setupf("twin: a plain child of the host does not see the canary descriptor %s (%s), so its absence proves nothing", want, strings.Join(tfds, " "))
	}
	c.twinf("a plain os/exec child of the host inherits %s", want)
}

func caseNoTTY(c *caseRun) {
	res := c.run(c.x, "run", c.req(c.probeCmd("tty"), nil), roleFunctional)
	recs := records(res)
	if len(recs) != 1 {
		c.brokenf("the probe printed %d records, want 1 (stderr %q)", len(recs), clip(string(res.Stderr), 200))
	}
	v := recs[0].Values
	c.logf("tty_nr %s; /dev/tty %s; fd0 %s; fd1 %s; fd2 %s", v["tty_nr"], v["dev_tty"], v["fd0"], v["fd1"], v["fd2"])
	c.expect(recs[0].OK, "TIOCSTI injected input: %v", v)
	if runtime.GOOS == "linux" {
		c.expect(v["tty_nr"] == "0", "the command has a controlling terminal (tty_nr %s)", v["tty_nr"])
	}
	c.expect(v["dev_tty"] != "opened", "/dev/tty could be opened")
	for _, fd := range []string{"fd0", "fd1", "fd2"} {
		c.expect(strings.HasPrefix(v[fd], "not a tty"), "%s is a terminal: %s", fd, v[fd])
	}
	ttyTwin(c)
}

func caseNoNewPrivs(c *caseRun) {
	if runtime.GOOS != "linux" {
		c.unsupportedf("PR_SET_NO_NEW_PRIVS is Linux-only")
	}
	res := c.run(c.x, "run", c.req(c.probeCmd("status"), nil), roleFunctional)
	recs := records(res)
	if len(recs) != 1 || !recs[0].OK {
		c.brokenf("the probe could not read /proc/self/status (stderr %q)", clip(string(res.Stderr), 200))
	}
	v := recs[0].Values
	c.logf("NoNewPrivs %s, Seccomp %s, CapEff %s, Uid %s", v["NoNewPrivs"], v["Seccomp"], v["CapEff"], v["Uid"])
	c.expect(v["NoNewPrivs"] == "1", "NoNewPrivs is %q, want 1", v["NoNewPrivs"])

	out := c.hostProbe(nil, "status")
	trecs := probe.Parse(out)
	if len(trecs) != 1 || trecs[0].Values["NoNewPrivs"] == "" {
		c.setupf("twin: the probe on the host did not report NoNewPrivs (%q)", clip(string(out), 200))
	}
	note := ""
	if trecs[0].Values["NoNewPrivs"] == "1" {
		note = " (the host process already runs with no_new_privs, so the twin cannot tell the difference)"
	}
	c.twinf("a plain child of the host reads NoNewPrivs %s%s", trecs[0].Values["NoNewPrivs"], note)
}

// caseKillTree starts three heartbeating probes — one in its own session,
// one ignoring SIGHUP in the background, one in the foreground — and ends
// the command by its timeout or by cancelling the context.
func caseKillTree(c *caseRun, cancel bool) {
	beats := map[string]string{
		"setsid":     filepath.Join(c.fx.root, "hb-setsid"),
		"nohup":      filepath.Join(c.fx.root, "hb-nohup"),
		"foreground": filepath.Join(c.fx.root, "hb-foreground"),
	}
	tok := token("tree")
	cmd := c.probeCmd("heartbeat", "-setsid", beats["setsid"]) + " & " +
		c.probeCmd("heartbeat", "-nohup", beats["nohup"]) + " >/dev/null 2>&1 & " +
		c.probeCmd("heartbeat", "-print", tok, beats["foreground"])
	req := c.req(cmd, nil)
	ctx, stop := context.WithCancel(c.ctx)
	defer stop()
	label := "run with Timeout 4s"
	if cancel {
		label = "run, cancelled once every heartbeat beats"
	} else {
		req.Timeout = 4 * time.Second
	}
	type out struct {
		res *executor.Result
		err error
	}
	ch := make(chan out, 1)
	finished := make(chan struct{})
	go func() {
		res, err := c.x.Run(ctx, req)
		close(finished)
		ch <- out{res, err}
	}()
	allAlive := waitFor(c.ctx, 20*time.Second, finished, func() bool {
		for _, p := range beats {
			b, err := os.ReadFile(p)
			if _, n, ok := probe.HeartbeatCount(b); err != nil || !ok || n < 3 {
				return false
			}
		}
		return true
	})
	if cancel {
		stop()
	}
	o := <-ch
	c.noteRun(label, req, o.res, o.err, roleFunctional)
	if !allAlive {
		c.setupf("the three heartbeats were never all seen beating before the command ended, so their stopping would prove nothing")
	}
	c.logf("host: all three heartbeats (setsid, nohup, foreground) were beating before the %s", map[bool]string{false: "timeout", true: "cancellation"}[cancel])
	res := o.res
	c.expect(res.TimedOut, "TimedOut not reported")
	c.expect(res.ExitCode == -1, "exit code %d, want -1", res.ExitCode)
	c.expect(bytes.Contains(res.Stdout, []byte("tick 1 "+tok)), "the output produced before the kill was not kept")
	for name, p := range beats {
		c.expect(!beating(c, p, stoppedWindow), "host: the %s heartbeat still beats after Run returned", name)
	}
	c.logf("host: no heartbeat advances after Run returned")
	if left := leftovers(c.fx.tag); len(left) > 0 {
		_ = procscan.Kill(left)
		c.expect(false, "processes survived the kill: %s", cmdlines(left))
	} else {
		c.logf("host: no process carrying the case tag is left in /proc")
	}
}

func caseSignalParent(c *caseRun) {
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	received := func(c *caseRun) func(*executor.Result) (bool, string) {
		for len(sigs) > 0 {
			<-sigs
		}
		return func(res *executor.Result) (bool, string) {
			wait := 300 * time.Millisecond
			for _, r := range records(res) {
				if r.OK {
					wait = 2 * time.Second
				}
			}
			select {
			case <-sigs:
				return true, fmt.Sprintf("the host process (pid %d) received SIGWINCH", os.Getpid())
			case <-time.After(wait):
				return false, fmt.Sprintf("the host process (pid %d) received no SIGWINCH", os.Getpid())
			}
		}
	}
	cmd := c.probeCmd("kill", fmt.Sprint(os.Getpid()), fmt.Sprint(int(syscall.SIGWINCH)))
	c.isolate(received, c.act(cmd, nil), c.twinLocal(cmd))
}
