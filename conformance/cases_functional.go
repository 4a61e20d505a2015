//go:build unix

package conformance

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cordon-sandbox/cordon/conformance/probe"
	"github.com/cordon-sandbox/cordon/executor"
)

func functionalCases() []*caseDef {
	exit := func(code int) *caseDef {
		return &caseDef{
			CaseInfo: CaseInfo{ID: fmt.Sprintf("exit-%d", code), Title: fmt.Sprintf("exit %d is reported as exit code %d, not as an error", code, code), Layer: Functional, Expected: OK,
				Verified: "Result.ExitCode; Run returns no error"},
			run: func(c *caseRun) {
				res := c.run(c.x, "run", c.req(fmt.Sprintf("exit %d", code), nil), roleFunctional)
				c.expect(res.ExitCode == code, "exit code %d, want %d", res.ExitCode, code)
				c.expect(res.Signal == "" && !res.TimedOut, "signal %q timed out %v, want neither", res.Signal, res.TimedOut)
			},
		}
	}
	return []*caseDef{
		exit(0), exit(1), exit(7),
		{
			CaseInfo: CaseInfo{ID: "exit-signal", Title: "death by a signal is exit code -1 with the signal named", Layer: Functional, Expected: OK,
				Verified: "the shell kills itself with SIGKILL; Result.ExitCode -1 and Result.Signal set"},
			run: func(c *caseRun) {
				res := c.run(c.x, "run", c.req("kill -KILL $$", nil), roleFunctional)
				c.expect(res.ExitCode == -1, "exit code %d, want -1", res.ExitCode)
				c.expect(res.Signal != "", "no signal reported")
				c.expect(!res.TimedOut, "reported as timed out")
			},
		},
		{
			CaseInfo: CaseInfo{ID: "stdout-stderr", Title: "stdout and stderr are captured apart", Layer: Functional, Expected: OK,
				Verified: "distinct tokens printed to each stream come back exactly, each in its own field"},
			run: caseStdoutStderr,
		},
		{
			CaseInfo: CaseInfo{ID: "cwd", Title: "the command runs in Request.Dir", Layer: Functional, Expected: OK,
				Verified: "pwd -P prints Dir (a path with a space); a relative write lands in Dir on the host"},
			run: caseCwd,
		},
		{
			CaseInfo: CaseInfo{ID: "env", Title: "the environment is exactly Request.Env; the parent's canary variable is absent", Layer: Functional, Expected: OK,
				Verified: "the probe prints its environment: every requested variable, nothing else but what sh adds (PWD, OLDPWD, SHLVL, _); an empty Env stays empty. Twin: a plain child of the host sees the canary"},
			probe: true, run: caseEnv,
		},
		{
			CaseInfo: CaseInfo{ID: "loopback-server", Title: "network none: a server on 127.0.0.1 inside the command works (a private loopback)", Layer: Functional, Expected: OK,
				Verified: "under the coding preset (network none) the probe listens on 127.0.0.1:0, connects to itself and its server reads the token; net-tcp-connect and net-tcp-bind show that the host's loopback stays out of reach. Unsupported where the executor's Describe says it has no private loopback (Info[\"loopback\"] or, for kubernetes, Info[\"sandbox_loopback\"] \"none: …\")"},
			probe: true, run: caseLoopbackServer,
		},
		{
			CaseInfo: CaseInfo{ID: "stdin", Title: "stdin is closed (/dev/null)", Layer: Functional, Expected: OK,
				Verified: "the probe reads stdin and gets EOF at once with no bytes. Twin: a plain child fed a token reads it"},
			probe: true, run: caseStdin,
		},
		{
			CaseInfo: CaseInfo{ID: "output-limit", Title: "output over the limit keeps head and tail and reports Truncated", Layer: Functional, Expected: OK,
				Verified: "1 MiB per stream with OutputLimit 4096: each stream starts with its head token, ends with its tail token, is bounded, and Truncated is set"},
			probe: true, run: caseOutputLimit,
		},
		{
			CaseInfo: CaseInfo{ID: "binary-output", Title: "binary output is byte-exact", Layer: Functional, Expected: OK,
				Verified: "100000 bytes (all 256 values, then a SHA-256 chain) compared byte for byte with the host's copy"},
			probe: true, run: caseBinary,
		},
		{
			CaseInfo: CaseInfo{ID: "concurrent", Title: "20 concurrent runs on one executor do not mix output", Layer: Functional, Expected: OK,
				Verified: "each run prints 300 numbered lines of its own token to each stream; every result equals its expected output exactly"},
			probe: true, run: caseConcurrent,
		},
		{
			CaseInfo: CaseInfo{ID: "background", Title: "a background process (Starter) streams merged output and can be killed", Layer: Functional, Control: executor.ControlProcessTree, Expected: OK,
				Verified: "ReadOutput shows stdout and stderr ticks while it runs; after Kill, Done is closed, the host-side heartbeat file stops and no tagged process remains"},
			probe: true, run: caseBackground,
		},
	}
}

func caseStdoutStderr(c *caseRun) {
	out, errTok := token("stdout"), token("stderr")
	res := c.run(c.x, "run", c.req(fmt.Sprintf("printf '%%s\\n' %s; printf '%%s\\n' %s >&2", out, errTok), nil), roleFunctional)
	c.expect(string(res.Stdout) == out+"\n", "stdout %q, want %q", clip(string(res.Stdout), 200), out+"\n")
	c.expect(string(res.Stderr) == errTok+"\n", "stderr %q, want %q", clip(string(res.Stderr), 200), errTok+"\n")
	c.expect(res.ExitCode == 0 && !res.Truncated, "exit %d truncated %v, want 0 and false", res.ExitCode, res.Truncated)
}

func caseCwd(c *caseRun) {
	dir := filepath.Join(c.fx.root, "sub dir", "deep")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.setupf("mkdir: %v", err)
	}
	tok := token("cwd")
	req := c.req("pwd -P && echo "+tok+" > rel.txt", nil)
	req.Dir = dir
	res := c.run(c.x, "run in "+dir, req, roleFunctional)
	c.expect(string(res.Stdout) == dir+"\n", "pwd -P printed %q, want %q", clip(string(res.Stdout), 300), dir+"\n")
	b, err := os.ReadFile(filepath.Join(dir, "rel.txt"))
	c.expect(err == nil && string(b) == tok+"\n", "host: %s/rel.txt holds %q (%v), want the token", dir, b, err)
	if err == nil {
		c.logf("host: rel.txt landed in Dir with the token")
	}
}

// shellVars are the variables a POSIX shell may add to its children's
// environment by itself.
var shellVars = []string{"PWD", "OLDPWD", "SHLVL", "_"}

func caseEnv(c *caseRun) {
	reqTok := token("requested-env")
	check := func(label string, env []string) {
		req := c.req(c.probeCmd("env"), nil)
		req.Env = env
		res := c.run(c.x, label, req, roleFunctional)
		recs := records(res)
		if len(recs) != 1 {
			c.brokenf("%s: the probe printed %d records, want 1 (stderr %q)", label, len(recs), clip(string(res.Stderr), 200))
		}
		got := recs[0].List
		c.logf("%s: the command saw %d variables: %s", label, len(got), clip(strings.Join(got, " "), 600))
		for _, kv := range env {
			c.expect(slices.Contains(got, kv), "%s: requested %q missing or changed", label, kv)
		}
		for _, kv := range got {
			k, _, _ := strings.Cut(kv, "=")
			c.expect(slices.Contains(env, kv) || slices.Contains(shellVars, k), "%s: unrequested variable %q", label, clip(kv, 100))
		}
		c.expect(!bytes.Contains(res.Stdout, []byte(c.fx.envToken)) && !bytes.Contains(res.Stderr, []byte(c.fx.envToken)),
			"%s: the parent's canary %s leaked into the command", label, ParentCanaryEnv)
	}
	check("run with a minimal Env", append(c.env(), "CORDON_REQUESTED="+reqTok))
	check("run with an empty Env", []string{})

	// Twin: a plain child of the host inherits the canary, so its absence
	// above means something.
	if out := c.hostProbe(nil, "env"); !bytes.Contains(out, []byte(c.fx.envToken)) {
		c.setupf("twin: a plain child of the host does not see %s, so its absence proves nothing", ParentCanaryEnv)
	}
	c.twinf("a plain os/exec child of the host sees %s=%s", ParentCanaryEnv, c.fx.envToken)
}

func caseStdin(c *caseRun) {
	res := c.run(c.x, "run", c.req(c.probeCmd("stdin"), nil), roleFunctional)
	recs := records(res)
	if len(recs) != 1 {
		c.brokenf("the probe printed %d records, want 1 (stderr %q)", len(recs), clip(string(res.Stderr), 200))
	}
	r := recs[0]
	c.logf("stdin is %s; eof %s after %s bytes", r.Values["fd0"], r.Values["eof"], r.Values["bytes"])
	c.expect(r.Values["eof"] == "true" && r.Values["bytes"] == "0", "stdin is not closed: eof %q, %q bytes read (%s)", r.Values["eof"], r.Values["bytes"], r.Err)

	tok := token("stdin")
	out := c.hostProbe(strings.NewReader(tok), "stdin")
	trecs := probe.Parse(out)
	if len(trecs) != 1 || trecs[0].Data != tok {
		c.setupf("twin: the probe fed %q on stdin did not read it (%q)", tok, clip(string(out), 200))
	}
	c.twinf("a plain child fed a token on stdin reads it: %q", trecs[0].Data)
}

func caseOutputLimit(c *caseRun) {
	const limit, n = 4096, 1 << 20
	oh, ot, eh, et := token("out-head"), token("out-tail"), token("err-head"), token("err-tail")
	req := c.req(c.probeCmd("emit", oh, ot, eh, et, fmt.Sprint(n)), nil)
	req.OutputLimit = limit
	res := c.run(c.x, "run with OutputLimit 4096", req, roleFunctional)
	c.expect(res.Truncated, "Truncated not set after %d bytes per stream", n)
	// The kept bytes may carry an omission marker; allow it some room.
	const slack = 1024
	for _, s := range []struct {
		name       string
		b          []byte
		head, tail string
	}{{"stdout", res.Stdout, oh, ot}, {"stderr", res.Stderr, eh, et}} {
		c.logf("%s: kept %d of %d bytes; head %q … tail %q", s.name, len(s.b), n+len(s.head)+len(s.tail), clip(string(s.b), 60), lastN(s.b, 60))
		c.expect(len(s.b) <= limit+slack, "%s kept %d bytes, limit %d", s.name, len(s.b), limit)
		c.expect(bytes.HasPrefix(s.b, []byte(s.head)), "%s does not start with its head token", s.name)
		c.expect(bytes.HasSuffix(bytes.TrimRight(s.b, "\n"), []byte(s.tail)), "%s does not end with its tail token", s.name)
	}
}

func lastN(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func caseBinary(c *caseRun) {
	seed, n := token("bytes"), 100000
	req := c.req(c.probeCmd("bytes", seed, fmt.Sprint(n)), nil)
	req.OutputLimit = 1 << 20
	res := c.run(c.x, "run", req, roleFunctional)
	want := probe.Pattern(seed, n)
	if bytes.Equal(res.Stdout, want) {
		c.logf("stdout is byte-exact: %d bytes", n)
	} else {
		i := 0
		for i < len(want) && i < len(res.Stdout) && want[i] == res.Stdout[i] {
			i++
		}
		c.expect(false, "stdout differs from the pattern: %d bytes, want %d; first difference at offset %d", len(res.Stdout), n, i)
	}
	c.expect(!res.Truncated && len(res.Stderr) == 0, "truncated %v, stderr %q", res.Truncated, clip(string(res.Stderr), 100))
}

func caseConcurrent(c *caseRun) {
	const runs, lines = 20, 300
	type outcome struct {
		res *executor.Result
		err error
	}
	toks := make([]string, runs)
	outs := make([]outcome, runs)
	var wg sync.WaitGroup
	for i := range runs {
		toks[i] = token(fmt.Sprintf("run%02d", i))
		req := c.req(c.probeCmd("repeat", toks[i], fmt.Sprint(lines)), nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.x.Run(c.ctx, req)
			outs[i] = outcome{res, err}
		}()
	}
	wg.Wait()
	mixed := 0
	for i, o := range outs {
		if o.err != nil {
			c.runError(o.err, roleFunctional)
		}
		wantOut, wantErr := probe.RepeatOutput(toks[i], lines)
		if !bytes.Equal(o.res.Stdout, wantOut) || !bytes.Equal(o.res.Stderr, wantErr) {
			mixed++
			c.expect(false, "run %d: stdout %d bytes, stderr %d bytes, want exactly %d and %d of its own lines (%s)", i, len(o.res.Stdout), len(o.res.Stderr), len(wantOut), len(wantErr), describeResult(o.res))
		}
	}
	c.logf("%d concurrent runs, %d with output other than their own", runs, mixed)
}

func caseBackground(c *caseRun) {
	st, ok := c.x.(executor.Starter)
	if !ok {
		c.unsupportedf("the executor does not implement executor.Starter")
	}
	tok := token("bg")
	hb := filepath.Join(c.fx.root, "bg.heartbeat")
	req := c.req(c.probeCmd("heartbeat", "-print", tok, hb), nil)
	p, err := st.Start(c.ctx, req)
	if err != nil {
		c.logf("Start: %v", err)
		c.runError(err, roleFunctional)
	}
	c.logf("started: %s", clip(c.sanitize(req.Command), 300))
	var out []byte
	streamed := waitFor(c.ctx, 15*time.Second, p.Done(), func() bool {
		b, _ := p.ReadOutput()
		out = append(out, b...)
		return bytes.Contains(out, []byte("tick 2 "+tok)) && bytes.Contains(out, []byte("tock 2 "+tok))
	})
	select {
	case <-p.Done():
		c.expect(false, "the process exited by itself before it was killed: %s", describeResult(p.Wait()))
	default:
	}
	c.expect(streamed, "ReadOutput did not show stdout and stderr ticks while the process ran (%d bytes: %q)", len(out), clip(string(out), 200))
	c.logf("ReadOutput streamed %d bytes while running, both streams merged", len(out))
	alive := beating(c, hb, aliveWindow)
	c.expect(alive, "host: the heartbeat file %s is not advancing while the process runs", hb)
	if err := p.Kill(); err != nil {
		c.expect(false, "Kill: %v", err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		c.brokenf("Done not closed 10s after Kill")
	}
	c.logf("after Kill: %s", describeResult(p.Wait()))
	c.expect(!beating(c, hb, stoppedWindow), "host: the heartbeat still advances after Kill")
	c.logf("host: heartbeat stopped after Kill")
}

// Heartbeat windows: the probe beats every 20 ms. A live process must be
// seen advancing within aliveWindow (generous, for loaded machines); a
// killed one must not advance for stoppedWindow (a process merely stalled
// that long is still caught by the host's /proc scan for the case tag).
const (
	aliveWindow   = 5 * time.Second
	stoppedWindow = 500 * time.Millisecond
)

// beating reports whether the heartbeat file at path advances within window.
func beating(c *caseRun, path string, window time.Duration) bool {
	count := func() int {
		b, err := os.ReadFile(path)
		if err != nil {
			return -1
		}
		_, n, ok := probe.HeartbeatCount(b)
		if !ok {
			return -1
		}
		return n
	}
	first := count()
	return waitFor(c.ctx, window, nil, func() bool { n := count(); return n > 0 && n != first })
}

func caseLoopbackServer(c *caseRun) {
	tok := token("loop")
	res := c.run(c.x, "run", c.req(c.probeCmd("tcp-self", "127.0.0.1:0", tok), nil), roleFunctional)
	recs := records(res)
	if len(recs) != 1 {
		c.brokenf("the probe printed %d records, want 1 (stderr %q)", len(recs), clip(string(res.Stderr), 200))
	}
	r := recs[0]
	if !r.OK && c.caps != nil {
		// The executor's own word, or (kubernetes) its in-pod sandbox's.
		for _, k := range []string{"loopback", "sandbox_loopback"} {
			if v := c.caps.Info[k]; strings.HasPrefix(v, "none") {
				c.unsupportedf("the executor has no private loopback here: %s (%s)", v, r.Err)
			}
		}
	}
	c.logf("tcp-self on %s: ok %v, the server read %q (%s)", r.Target, r.OK, r.Data, r.Err)
	c.expect(r.OK && r.Data == tok, "a server on loopback inside the command did not work: %s %s, read %q", r.Errno, r.Err, r.Data)
}
