package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/cordon-sandbox/cordon/executor"
)

// The exec wrapper. Every command runs as
//
//	/bin/sh -c WRAPPER cordon-exec NONCE COMMAND
//
// The engine starts each exec as the leader of a session of its own
// inside the container (no controlling terminal, stdin /dev/null, only
// descriptors 0-2). The wrapper prints "NONCE PID" on stderr (its pid in
// the container, which the exec API does not give), unsets the variables
// the engine adds to every exec environment that Request.Env does not
// set, runs /bin/sh -c COMMAND as its child, prints "NONCE exit STATUS" on
// stderr, and kills what is left of its process group (`cmd &`, nohup),
// itself included. The executor strips both lines from stderr. Only
// positional parameters are used, so no shell variable of the wrapper can
// shadow one of Request.Env.
const wrapperHead = `printf '%s %s\n' "$1" "$$" >&2; `
const wrapperTail = `/bin/sh -c "$2" </dev/null; set -- "$1" "$?"; printf '%s exit %s\n' "$1" "$2" >&2; kill -s KILL -- -$$ 2>/dev/null; exit "$2"`

// killScript stops and kills the process tree of a wrapper, run in a
// second exec (the exec API cannot signal an exec): every process whose
// parent, process group or session is already in the set, found in
// rounds that SIGSTOP each new one so nothing can fork away, then SIGKILL
// for all. Container pid 1 and the script itself are never touched; other
// commands of the session are not in the tree.
const killScript = `t=$1 me=$$ all=" $1 "
kill -s STOP "$t" 2>/dev/null
while :; do
	new=
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		case $all in *" $p "*) continue ;; esac
		if [ "$p" = 1 ] || [ "$p" = "$me" ]; then continue; fi
		read -r l 2>/dev/null <"$d/stat" || continue
		l=${l##*) }
		set -- $l
		case $all in *" $2 "*|*" $3 "*|*" $4 "*) new="$new $p" all="$all$p " ;; esac
	done
	[ -z "$new" ] && break
	kill -s STOP $new 2>/dev/null
done
kill -s KILL $all 2>/dev/null
exit 0`

// pid1Script is the container's main process: it idles, reaps orphans
// (the shell's wait reaps every child it is given) and exits on SIGTERM.
const pid1Script = `trap 'exit 0' TERM; while :; do sleep 3600 & wait; done`

// engineEnv are the variables the engine adds to every exec's environment
// (besides the image's): PATH and HOSTNAME always, HOME from the user's
// passwd entry, TERM for a terminal.
var engineEnv = []string{"PATH", "HOSTNAME", "HOME", "TERM"}

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// wrapperArgs returns the exec command for req.
func wrapperArgs(nonce, command string, unset []string) []string {
	script := wrapperHead
	if len(unset) > 0 {
		script += "unset " + strings.Join(unset, " ") + "; "
	}
	script += wrapperTail
	return []string{executor.Shell, "-c", script, "cordon-exec", nonce, command}
}

// unsetNames returns the variables the wrapper must unset for env:
// those the engine and the image add that env does not set. Names that
// are not shell identifiers cannot be unset by a shell and are left.
func unsetNames(env, imageEnv []string) []string {
	set := map[string]bool{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	for _, k := range append(slices.Clone(engineEnv), imageEnv...) {
		if !set[k] && shellName.MatchString(k) && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func newNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "cordon-" + hex.EncodeToString(b)
}

// ctlWriter filters the wrapper's two lines out of the exec's stderr: the
// header "NONCE PID\n" at its very start and the trailer "NONCE exit
// STATUS\n" wherever it appears; everything else goes to out. It is used
// from the one goroutine that demultiplexes the stream.
type ctlWriter struct {
	out    io.Writer
	nonce  string
	marker []byte // "NONCE exit "

	head    bool   // the header is behind us
	hbuf    []byte // header so far
	pending []byte // bytes held back: they may start the trailer

	mu      sync.Mutex
	pid     int
	status  int
	exited  bool
	started chan struct{} // closed when the header (or something else) arrived
	exitCh  chan struct{} // closed when the trailer arrived
}

func newCtlWriter(out io.Writer, nonce string) *ctlWriter {
	return &ctlWriter{out: out, nonce: nonce, marker: []byte(nonce + " exit "),
		started: make(chan struct{}), exitCh: make(chan struct{})}
}

// maxCtlLine bounds the wrapper's lines; longer ones are not its.
const maxCtlLine = 128

func (w *ctlWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !w.head {
		w.hbuf = append(w.hbuf, p...)
		i := bytes.IndexByte(w.hbuf, '\n')
		if i < 0 && len(w.hbuf) < maxCtlLine && bytes.HasPrefix([]byte(w.nonce+" "), w.hbuf[:min(len(w.hbuf), len(w.nonce)+1)]) {
			return n, nil // wait for the rest of the header
		}
		w.head = true
		close(w.started)
		rest := w.hbuf
		w.hbuf = nil
		if i >= 0 {
			if pid, err := strconv.Atoi(strings.TrimPrefix(string(rest[:i]), w.nonce+" ")); err == nil && bytes.HasPrefix(rest, []byte(w.nonce+" ")) {
				w.mu.Lock()
				w.pid = pid
				w.mu.Unlock()
				rest = rest[i+1:]
			}
		}
		p = rest
	}
	w.write(p)
	return n, nil
}

func (w *ctlWriter) write(p []byte) {
	if w.isExited() {
		_, _ = w.out.Write(p)
		return
	}
	data := p
	if len(w.pending) > 0 {
		data = append(w.pending, p...)
		w.pending = nil
	}
	i := bytes.Index(data, w.marker)
	if i < 0 {
		k := partialSuffix(data, w.marker)
		_, _ = w.out.Write(data[:len(data)-k])
		if k > 0 {
			w.pending = append([]byte(nil), data[len(data)-k:]...)
		}
		return
	}
	_, _ = w.out.Write(data[:i])
	tail := data[i+len(w.marker):]
	j := bytes.IndexByte(tail, '\n')
	if j < 0 {
		if len(tail) < 16 {
			w.pending = append([]byte(nil), data[i:]...)
			return
		}
		_, _ = w.out.Write(data[i:]) // not the wrapper's
		return
	}
	status, err := strconv.Atoi(string(tail[:j]))
	if err != nil {
		_, _ = w.out.Write(data[i:])
		return
	}
	w.mu.Lock()
	w.status, w.exited = status, true
	w.mu.Unlock()
	close(w.exitCh)
	_, _ = w.out.Write(tail[j+1:])
}

// flush writes what was held back, at the end of the stream.
func (w *ctlWriter) flush() {
	if !w.head {
		w.head = true
		close(w.started)
		_, _ = w.out.Write(w.hbuf)
		w.hbuf = nil
	}
	if len(w.pending) > 0 {
		_, _ = w.out.Write(w.pending)
		w.pending = nil
	}
}

func (w *ctlWriter) isExited() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.exited
}

func (w *ctlWriter) wrapperPid() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid
}

func (w *ctlWriter) exitStatus() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status, w.exited
}

// partialSuffix returns the length of the longest suffix of data that is
// a proper prefix of marker.
func partialSuffix(data, marker []byte) int {
	for k := min(len(marker)-1, len(data)); k > 0; k-- {
		if bytes.HasSuffix(data, marker[:k]) {
			return k
		}
	}
	return 0
}

// Why a command was ended by the executor.
const (
	endTimeout = "timeout"
	endCancel  = "cancel"
	endKill    = "kill"
)

// execOut is how one exec ended.
type execOut struct {
	status  int  // the command's shell's exit status (from the trailer or the engine)
	trailer bool // the wrapper reported the status
	started bool // the wrapper ran (its header arrived)
	ended   string
	// inspected is the engine's exit code of the wrapper, -1 if unknown.
	inspected int
	notes     []string
	duration  time.Duration
}

// exec runs req's command in box b, demultiplexing its output into
// stdout and stderr (the same writer for a background process). ctx
// governs the engine calls that create and attach the exec; the command
// is ended on timeout, when cancel or kill is closed, and exec returns
// once it is over. attached, when not nil, receives the outcome of the
// start (nil once the exec is attached). An error means the exec could
// not be created or attached.
func (x *Executor) exec(ctx context.Context, b *box, req *executor.Request, dir string, stdout, stderr io.Writer,
	timeout time.Duration, cancel, kill <-chan struct{}, attached chan<- error) (out *execOut, err error) {
	if attached != nil {
		defer func() {
			if err != nil {
				attached <- err
			}
		}()
	}
	nonce := newNonce()
	env := req.Env
	if env == nil {
		env = []string{}
	}
	command := x.command(req)
	began := time.Now()
	id, err := x.cli.ContainerExecCreate(ctx, b.id, container.ExecOptions{
		User: x.user, AttachStdout: true, AttachStderr: true,
		Env: env, WorkingDir: dir,
		Cmd: wrapperArgs(nonce, command, unsetNames(env, x.imageEnv)),
	})
	if err != nil {
		return nil, x.execError(b, "creating the exec", err)
	}
	hj, err := x.cli.ContainerExecAttach(ctx, id.ID, container.ExecAttachOptions{})
	if err != nil {
		return nil, x.execError(b, "starting the exec", err)
	}
	if attached != nil {
		attached <- nil
	}
	out = &execOut{inspected: -1}
	ctl := newCtlWriter(stderr, nonce)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = stdcopy.StdCopy(stdout, ctl, hj.Reader)
		ctl.flush()
	}()

	cut := x.watch(b, &watchdog{
		streams: copied,
		exited:  ctl.exitCh,
		kill:    func() error { return x.killTree(b, ctl) },
		cut:     func() { hj.Close() },
		close:   func() { hj.Close() },
	}, out, timeout, cancel, kill)
	hj.Close()
	out.duration = time.Since(began)
	out.status, out.trailer = ctl.exitStatus()
	out.started = ctl.wrapperPid() > 0
	if cut && out.ended == "" {
		// Something that left the command's process group keeps the
		// output open: kill what is left of the wrapper's session and
		// tree.
		if err := x.killTree(b, ctl); err != nil {
			out.notes = append(out.notes, x.breakBox(b, "killing the command's processes failed: "+err.Error()))
		}
	}
	if out.trailer && out.ended == "" && !cut {
		// The stream ended normally after the trailer: the wrapper and its
		// process group are gone.
		return out, nil
	}
	// Ask the engine how the wrapper ended (and whether it still runs: a
	// forged trailer, or output closed by the command).
	ictx, stop := context.WithTimeout(context.WithoutCancel(ctx), killWait)
	defer stop()
	ins, err := x.cli.ContainerExecInspect(ictx, id.ID)
	if err == nil {
		if ins.Running && out.ended == "" {
			out.ended = endKill
			if kerr := x.killTree(b, ctl); kerr != nil {
				out.notes = append(out.notes, x.breakBox(b, "killing the command's processes failed: "+kerr.Error()))
			}
			out.notes = append(out.notes, "the command's wrapper still ran after its output ended; its processes were killed")
		} else if !ins.Running {
			out.inspected = ins.ExitCode
		}
	}
	if !out.trailer {
		out.status = out.inspected
		if out.inspected < 0 && out.ended == "" {
			out.notes = append(out.notes, "the command's exit status was not reported: its wrapper ended without reporting and the engine could not tell")
		}
	}
	return out, nil
}

// command returns the command text the shell runs for req. The image's
// /bin/sh (busybox) exports a PATH of its own when it starts without one;
// when Request.Env has none, unsetting it first keeps the environment
// exactly Request.Env (busybox still finds its commands without PATH).
func (x *Executor) command(req *executor.Request) string {
	if x.pathProbe {
		return executor.ExactEnvCommand(req.Env, req.Command)
	}
	return req.Command
}

// runIn runs req's command in b: through the box's command runner when
// it has one and the request suits it, else as an exec of its own.
func (x *Executor) runIn(ctx context.Context, b *box, req *executor.Request, dir string, stdout, stderr io.Writer,
	timeout time.Duration, cancel, kill <-chan struct{}, attached chan<- error) (*execOut, error) {
	o, err := x.fastExec(ctx, b, req, dir, stdout, stderr, timeout, cancel, kill, attached)
	if errors.Is(err, errNoFastPath) {
		return x.exec(ctx, b, req, dir, stdout, stderr, timeout, cancel, kill, attached)
	}
	return o, err
}

// killWait bounds how long the executor waits for a killed command's
// output to end and for the engine's answers about it.
const killWait = 10 * time.Second

// killTree kills the wrapper's process tree. It waits briefly for the
// wrapper's header when it has not arrived yet.
func (x *Executor) killTree(b *box, ctl *ctlWriter) error {
	select {
	case <-ctl.started:
	case <-time.After(2 * time.Second):
	}
	return x.killPid(b, ctl.wrapperPid())
}

// killPid kills the process tree of pid (a session leader in the
// container) with an exec of killScript.
func (x *Executor) killPid(b *box, pid int) error {
	if pid <= 1 {
		return errors.New("the command's process id is unknown (the wrapper did not report it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), killWait)
	defer cancel()
	id, err := x.cli.ContainerExecCreate(ctx, b.id, container.ExecOptions{
		User: x.user, AttachStdout: true, AttachStderr: true, Env: []string{}, WorkingDir: "/",
		Cmd: []string{executor.Shell, "-c", killScript, "cordon-kill", strconv.Itoa(pid)},
	})
	if err != nil {
		return fmt.Errorf("creating the kill exec: %w", err)
	}
	hj, err := x.cli.ContainerExecAttach(ctx, id.ID, container.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("starting the kill exec: %w", err)
	}
	var msg bytes.Buffer
	_, _ = stdcopy.StdCopy(&limitWriter{w: &msg, n: 4096}, &limitWriter{w: &msg, n: 4096}, hj.Reader)
	hj.Close()
	ins, err := x.cli.ContainerExecInspect(ctx, id.ID)
	if err != nil {
		return fmt.Errorf("inspecting the kill exec: %w", err)
	}
	if ins.ExitCode != 0 {
		return fmt.Errorf("the kill exec exited %d: %s", ins.ExitCode, strings.TrimSpace(msg.String()))
	}
	return nil
}

// limitWriter keeps at most n bytes.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	k := min(len(p), l.n)
	if k > 0 {
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// execError wraps an exec API error; a container that is gone or stopped
// is marked broken so the next command gets a new one.
func (x *Executor) execError(b *box, what string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	x.breakBox(b, what+" failed: "+err.Error())
	return &SetupError{Stage: "exec", Container: b.id, Message: what, Err: err, lost: true}
}
