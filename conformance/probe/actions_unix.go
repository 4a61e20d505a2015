//go:build unix

package probe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Main runs the probe with args (without the program name) and returns the
// exit status. Actions:
//
//	read PATH...                   read files; Data, Size, SHA256
//	readat PATH OFFSET LEN         read LEN bytes at OFFSET (a /proc/PID/mem);
//	                               Data is their hex
//	write PATH CONTENT             create or truncate, then write
//	append PATH CONTENT            append (create if missing)
//	truncate PATH                  truncate(2) to 0 bytes
//	chmod MODE PATH                chmod(2), MODE in octal
//	chown UID PATH                 lchown(2) to UID, the group unchanged
//	utimes PATH                    utimensat(2): both times 2001-01-01
//	setxattr PATH NAME VALUE       setxattr(2)
//	link OLD NEW                   hard link
//	rename OLD NEW                 rename(2)
//	mkdir PATH                     mkdir -p
//	remove PATH                    unlink or rmdir
//	list DIR                       directory entries (the first MaxList)
//	tcp-connect ADDR TOKEN         connect and send TOKEN
//	tcp-listen ADDR DIR TOKEN      bind+listen; see below
//	udp-send ADDR TOKEN            send one datagram
//	unix-connect PATH TOKEN        stream connect and send
//	unixgram-send PATH TOKEN       datagram send
//	abstract-connect NAME TOKEN    stream connect to the abstract socket @NAME
//	proxy-http HOST:PORT TOKEN     GET http://HOST:PORT/TOKEN through HTTP_PROXY
//	proxy-connect HOST:PORT TOKEN  CONNECT through HTTPS_PROXY, then send TOKEN
//	proxy-socks HOST:PORT TOKEN    SOCKS5 CONNECT (by name) through ALL_PROXY,
//	                               then send TOKEN; each of the three connects
//	                               directly when its variable is unset
//	kill PID SIGNUM                kill(2)
//	tty                            controlling terminal facts, TIOCSTI attempts
//	fds                            inherited descriptors (those without
//	                               FD_CLOEXEC) with their targets; the
//	                               probe's own are in Values["own"]
//	status                         NoNewPrivs, Seccomp, CapEff, Uid
//	env                            the environment
//	stdin                          what reading stdin gives (2 s at most)
//	heartbeat [-setsid] [-nohup] [-print TOKEN] [-for DUR] FILE
//	await PATH DUR                 wait until PATH exists
//	emit OUTHEAD OUTTAIL ERRHEAD ERRTAIL N
//	bytes SEED N                   write Pattern(SEED, N) to stdout
//	repeat TOKEN N                 N numbered lines of TOKEN to stdout and stderr
//
// tcp-listen binds ADDR, writes DIR/bound, then accepts connections (sending
// TOKEN to each) until DIR/done appears or 10 s have passed; the suite
// connects from the host to see whether the port is reachable.
//
// heartbeat writes "PID COUNT" to FILE every 20 ms for DUR (default 60 s),
// after setsid(2) with -setsid and ignoring SIGHUP with -nohup; with -print
// it also prints a tick line per beat to stdout and stderr.
func Main(args []string) int {
	if len(args) > 0 && strings.HasPrefix(args[0], "--tag=") {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: cordon-probe ACTION ARGS... (see package probe)")
		return 2
	}
	p := &prober{out: os.Stdout}
	act, rest := args[0], args[1:]
	fn, ok := actions[act]
	if !ok {
		fmt.Fprintf(os.Stderr, "cordon-probe: unknown action %q\n", act)
		return 2
	}
	if err := fn(p, rest); err != nil {
		fmt.Fprintf(os.Stderr, "cordon-probe %s: %v\n", act, err)
		return 2
	}
	if p.failed {
		return 1
	}
	return 0
}

type prober struct {
	out    io.Writer
	failed bool
}

func (p *prober) emit(r Record) {
	r.Probe = 1
	if !r.OK {
		p.failed = true
	}
	b, _ := json.Marshal(r)
	b = append(b, '\n')
	_, _ = p.out.Write(b)
}

// result fills OK, Errno and Err from err.
func result(action, target string, err error) Record {
	r := Record{Action: action, Target: target, OK: err == nil}
	if err != nil {
		r.Err = err.Error()
		r.Errno = errnoName(err)
	}
	return r
}

func errnoName(err error) string {
	var en syscall.Errno
	if errors.As(err, &en) {
		if n := unix.ErrnoName(en); n != "" {
			return n
		}
		return fmt.Sprintf("errno %d", int(en))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return "ETIMEDOUT"
	}
	return ""
}

var errUsage = errors.New("wrong number of arguments")

func nargs(args []string, n int) error {
	if len(args) != n {
		return fmt.Errorf("%w: want %d, got %d", errUsage, n, len(args))
	}
	return nil
}

var actions map[string]func(*prober, []string) error

func init() {
	actions = map[string]func(*prober, []string) error{
		"read":             actRead,
		"readat":           actReadAt,
		"write":            actWrite,
		"append":           actAppend,
		"truncate":         actTruncate,
		"chmod":            actChmod,
		"chown":            actChown,
		"utimes":           actUtimes,
		"setxattr":         actSetxattr,
		"link":             actLink,
		"rename":           actRename,
		"mkdir":            actMkdir,
		"remove":           actRemove,
		"list":             actList,
		"tcp-connect":      actTCPConnect,
		"tcp-listen":       actTCPListen,
		"tcp-self":         actTCPSelf,
		"udp-send":         actUDPSend,
		"unix-connect":     actUnixConnect,
		"unixgram-send":    actUnixgramSend,
		"abstract-connect": actAbstractConnect,
		"kill":             actKill,
		"tty":              actTTY,
		"fds":              actFDs,
		"status":           actStatus,
		"env":              actEnv,
		"stdin":            actStdin,
		"heartbeat":        actHeartbeat,
		"await":            actAwait,
		"emit":             actEmit,
		"bytes":            actBytes,
		"repeat":           actRepeat,
		"keyring-read":     actKeyringRead,
		"keyring-add":      actKeyringAdd,
		"shm-read":         actShmRead,
		"mem-target":       actMemTarget,
		"mem-write":        actMemWrite,
		"proxy-http":       actProxyHTTP,
		"proxy-connect":    actProxyConnect,
		"proxy-socks":      actProxySocks,
	}
}

func actRead(p *prober, args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	for _, path := range args {
		r := readFile(path)
		p.emit(r)
	}
	return nil
}

// actReadAt reads LEN bytes at OFFSET of PATH (a /proc/PID/mem, say) and
// emits them hex-encoded in Data.
func actReadAt(p *prober, args []string) error {
	if err := nargs(args, 3); err != nil {
		return err
	}
	off, err1 := strconv.ParseInt(args[1], 10, 64)
	n, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil || n < 0 || n > MaxData/2 {
		return fmt.Errorf("%w: readat PATH OFFSET LEN (LEN <= %d)", errUsage, MaxData/2)
	}
	f, err := os.Open(args[0])
	if err != nil {
		p.emit(result("readat", args[0], err))
		return nil
	}
	defer f.Close()
	buf := make([]byte, n)
	m, err := f.ReadAt(buf, off)
	if m == n {
		err = nil
	}
	r := result("readat", args[0], err)
	r.Size = int64(m)
	r.Data = hex.EncodeToString(buf[:m])
	p.emit(r)
	return nil
}

func readFile(path string) Record {
	f, err := os.Open(path)
	if err != nil {
		return result("read", path, err)
	}
	defer f.Close()
	h := sha256.New()
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitWriter{w: &head, n: MaxData}), f)
	r := result("read", path, err)
	r.Size = n
	r.SHA256 = hex.EncodeToString(h.Sum(nil))
	r.Data = head.String()
	return r
}

type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(b []byte) (int, error) {
	if l.n > 0 {
		k := min(len(b), l.n)
		_, _ = l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

func actWrite(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(result("write", args[0], os.WriteFile(args[0], []byte(args[1]), 0o644)))
	return nil
}

func actAppend(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(args[1])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	p.emit(result("append", args[0], err))
	return nil
}

func actTruncate(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	p.emit(result("truncate", args[0], os.Truncate(args[0], 0)))
	return nil
}

func actChmod(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	mode, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		return fmt.Errorf("mode %q: %w", args[0], err)
	}
	p.emit(result("chmod", args[1], unix.Chmod(args[1], uint32(mode))))
	return nil
}

// actChown changes the owner of PATH to UID (the group unchanged).
func actChown(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	uid, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("%w: chown UID PATH", errUsage)
	}
	p.emit(result("chown", args[1], unix.Lchown(args[1], uid, -1)))
	return nil
}

// actUtimes sets the access and modification times of PATH to
// 2001-01-01T00:00:00Z.
func actUtimes(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	ts := unix.NsecToTimespec(978307200 * 1e9)
	p.emit(result("utimes", args[0], unix.UtimesNanoAt(unix.AT_FDCWD, args[0], []unix.Timespec{ts, ts}, 0)))
	return nil
}

// actSetxattr sets the extended attribute NAME of PATH to VALUE.
func actSetxattr(p *prober, args []string) error {
	if err := nargs(args, 3); err != nil {
		return err
	}
	p.emit(result("setxattr", args[0]+" "+args[1], unix.Setxattr(args[0], args[1], []byte(args[2]), 0)))
	return nil
}

func actLink(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(result("link", args[0]+" -> "+args[1], os.Link(args[0], args[1])))
	return nil
}

func actRename(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(result("rename", args[0]+" -> "+args[1], os.Rename(args[0], args[1])))
	return nil
}

func actMkdir(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	p.emit(result("mkdir", args[0], os.MkdirAll(args[0], 0o755)))
	return nil
}

func actRemove(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	p.emit(result("remove", args[0], os.Remove(args[0])))
	return nil
}

func actList(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	ents, err := os.ReadDir(args[0])
	r := result("list", args[0], err)
	r.Values = map[string]string{"entries": strconv.Itoa(len(ents))}
	for _, e := range ents[:min(len(ents), MaxList)] {
		r.List = append(r.List, e.Name())
	}
	p.emit(r)
	return nil
}

const dialTimeout = 3 * time.Second

func send(action, network, addr, token string) Record {
	c, err := net.DialTimeout(network, addr, dialTimeout)
	if err == nil {
		_ = c.SetDeadline(time.Now().Add(dialTimeout))
		_, err = c.Write([]byte(token))
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return result(action, addr, err)
}

func actTCPConnect(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(send("tcp-connect", "tcp", args[0], args[1]))
	return nil
}

func actUDPSend(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(send("udp-send", "udp", args[0], args[1]))
	return nil
}

func actUnixConnect(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(send("unix-connect", "unix", args[0], args[1]))
	return nil
}

func actUnixgramSend(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(send("unixgram-send", "unixgram", args[0], args[1]))
	return nil
}

func actAbstractConnect(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	r := send("abstract-connect", "unix", "@"+args[0], args[1])
	p.emit(r)
	return nil
}

// actTCPSelf listens on ADDR (port 0: any) and connects to itself,
// sending TOKEN: a test server on loopback inside the sandbox. Data is
// what the server read.
func actTCPSelf(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	addr, token := args[0], args[1]
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.emit(result("tcp-self", addr, err))
		return nil
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(dialTimeout))
		b, _ := io.ReadAll(io.LimitReader(c, MaxData))
		got <- b
	}()
	r := send("tcp-self", "tcp", ln.Addr().String(), token)
	if r.OK {
		select {
		case b := <-got:
			r.Data = string(b)
		case <-time.After(dialTimeout):
			r.OK, r.Err = false, "the server read nothing"
		}
	}
	p.emit(r)
	return nil
}

func actTCPListen(p *prober, args []string) error {
	if err := nargs(args, 3); err != nil {
		return err
	}
	addr, dir, token := args[0], args[1], args[2]
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.emit(result("tcp-listen", addr, err))
		return nil
	}
	defer ln.Close()
	r := result("tcp-listen", addr, os.WriteFile(filepath.Join(dir, "bound"), []byte(ln.Addr().String()), 0o644))
	accepted := 0
	tl := ln.(*net.TCPListener)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			break
		}
		_ = tl.SetDeadline(time.Now().Add(20 * time.Millisecond))
		c, err := tl.Accept()
		if err != nil {
			continue
		}
		accepted++
		_ = c.SetDeadline(time.Now().Add(dialTimeout))
		_, _ = c.Write([]byte(token))
		_ = c.Close()
	}
	r.Values = map[string]string{"bound": ln.Addr().String(), "accepted": strconv.Itoa(accepted)}
	p.emit(r)
	return nil
}

func actKill(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	pid, err1 := strconv.Atoi(args[0])
	sig, err2 := strconv.Atoi(args[1])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%w: kill PID SIGNUM", errUsage)
	}
	p.emit(result("kill", args[0], unix.Kill(pid, syscall.Signal(sig))))
	return nil
}

// actTTY reports whether the probe has a controlling terminal and tries
// TIOCSTI (injecting one NUL byte) on every standard descriptor that is a
// terminal and on /dev/tty. The record is OK when nothing could be
// injected; Values say what was found.
func actTTY(p *prober, args []string) error {
	if err := nargs(args, 0); err != nil {
		return err
	}
	v := map[string]string{"tty_nr": ttyNr()}
	injected := false
	try := func(name string, fd int) {
		if _, err := unix.IoctlGetTermios(fd, getTermios); err != nil {
			v[name] = "not a tty (" + errnoName(err) + ")"
			return
		}
		if err := unix.IoctlSetString(fd, unix.TIOCSTI, "\x00"); err != nil {
			v[name] = "tty; TIOCSTI " + errnoName(err)
			return
		}
		v[name] = "tty; TIOCSTI injected"
		injected = true
	}
	for fd := 0; fd <= 2; fd++ {
		try("fd"+strconv.Itoa(fd), fd)
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		v["dev_tty"] = "open " + errnoName(err)
	} else {
		v["dev_tty"] = "opened"
		try("dev_tty_ioctl", fd)
		_ = unix.Close(fd)
	}
	r := Record{Action: "tty", OK: !injected, Values: v}
	if injected {
		r.Err = "TIOCSTI injected input"
	}
	p.emit(r)
	return nil
}

func actFDs(p *prober, args []string) error {
	if err := nargs(args, 0); err != nil {
		return err
	}
	dir := "/proc/self/fd"
	if _, err := os.Stat(dir); err != nil {
		dir = "/dev/fd"
	}
	d, err := os.Open(dir)
	if err != nil {
		p.emit(result("fds", dir, err))
		return nil
	}
	self := int(d.Fd())
	names, err := d.Readdirnames(-1)
	d.Close()
	r := result("fds", dir, err)
	var own []string
	sort.Slice(names, func(i, j int) bool { a, _ := strconv.Atoi(names[i]); b, _ := strconv.Atoi(names[j]); return a < b })
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd == self {
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, n))
		if err != nil {
			target = "?"
		}
		// A descriptor still open after exec without FD_CLOEXEC was
		// inherited; the Go runtime's own (cgroup files, the poller) all
		// carry the flag, as does everything Go opens.
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC != 0 {
			own = append(own, n+"="+target)
			continue
		}
		r.List = append(r.List, n+"="+target)
	}
	if len(own) > 0 {
		r.Values = map[string]string{"own": strings.Join(own, " ")}
	}
	p.emit(r)
	return nil
}

func actStatus(p *prober, args []string) error {
	if err := nargs(args, 0); err != nil {
		return err
	}
	b, err := os.ReadFile("/proc/self/status")
	r := result("status", "/proc/self/status", err)
	r.Values = map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		k, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k {
		case "NoNewPrivs", "Seccomp", "CapEff", "Uid", "Pid", "PPid":
			r.Values[k] = strings.Join(strings.Fields(val), " ")
		}
	}
	p.emit(r)
	return nil
}

func actEnv(p *prober, args []string) error {
	if err := nargs(args, 0); err != nil {
		return err
	}
	r := Record{Action: "env", OK: true, List: os.Environ()}
	p.emit(r)
	return nil
}

func actStdin(p *prober, args []string) error {
	if err := nargs(args, 0); err != nil {
		return err
	}
	target, _ := os.Readlink("/proc/self/fd/0")
	type rd struct {
		b   []byte
		err error
	}
	ch := make(chan rd, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, MaxData))
		ch <- rd{b, err}
	}()
	r := Record{Action: "stdin", Values: map[string]string{"fd0": target}}
	select {
	case x := <-ch:
		r = result("stdin", "fd 0", x.err)
		r.Values = map[string]string{"fd0": target, "eof": "true", "bytes": strconv.Itoa(len(x.b))}
		r.Data = string(x.b)
	case <-time.After(2 * time.Second):
		r.Err = "reading stdin blocked for 2s"
		r.Values["eof"] = "false"
	}
	p.emit(r)
	return nil
}

func actHeartbeat(p *prober, args []string) error {
	var setsid, nohup bool
	var token string
	dur := 60 * time.Second
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-setsid":
			setsid = true
		case "-nohup":
			nohup = true
		case "-print":
			token, args = args[1], args[1:]
		case "-for":
			d, err := time.ParseDuration(args[1])
			if err != nil {
				return err
			}
			dur, args = d, args[1:]
		default:
			return fmt.Errorf("%w: unknown flag %q", errUsage, args[0])
		}
		args = args[1:]
	}
	if err := nargs(args, 1); err != nil {
		return err
	}
	v := map[string]string{"pid": strconv.Itoa(os.Getpid())}
	if setsid {
		if _, err := unix.Setsid(); err != nil {
			v["setsid"] = errnoName(err)
		} else {
			v["setsid"] = "ok"
		}
	}
	if nohup {
		signal.Ignore(syscall.SIGHUP)
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	r := result("heartbeat", args[0], err)
	r.Values = v
	p.emit(r) // "started": output produced before any kill
	if err != nil {
		return nil
	}
	defer f.Close()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i, end := 1, time.Now().Add(dur); time.Now().Before(end); i++ {
		_, _ = fmt.Fprintf(f, "%10d %10d\n", os.Getpid(), i)
		_, _ = f.Seek(0, io.SeekStart)
		if token != "" {
			fmt.Fprintf(os.Stdout, "tick %d %s\n", i, token)
			fmt.Fprintf(os.Stderr, "tock %d %s\n", i, token)
		}
		<-tick.C
	}
	return nil
}

func actAwait(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	d, err := time.ParseDuration(args[1])
	if err != nil {
		return err
	}
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		_, err = os.Lstat(args[0])
		if err == nil || time.Now().After(end) {
			break
		}
	}
	p.emit(result("await", args[0], err))
	return nil
}

func actEmit(p *prober, args []string) error {
	if err := nargs(args, 5); err != nil {
		return err
	}
	n, err := strconv.Atoi(args[4])
	if err != nil {
		return err
	}
	filler := bytes.Repeat([]byte{'x'}, 64*1024)
	write := func(w io.Writer, head, tail string) {
		_, _ = io.WriteString(w, head)
		for left := n; left > 0; left -= len(filler) {
			_, _ = w.Write(filler[:min(left, len(filler))])
		}
		_, _ = io.WriteString(w, tail)
	}
	write(os.Stdout, args[0], args[1])
	write(os.Stderr, args[2], args[3])
	return nil
}

func actBytes(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(Pattern(args[0], n))
	return err
}

func actRepeat(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		return err
	}
	out, errw := bufio.NewWriter(os.Stdout), bufio.NewWriter(os.Stderr)
	for i := 0; i < n; i++ {
		fmt.Fprintf(out, "%s out %d\n", args[0], i)
		fmt.Fprintf(errw, "%s err %d\n", args[0], i)
		if i%64 == 0 {
			_ = out.Flush()
			_ = errw.Flush()
		}
	}
	_ = errw.Flush()
	return out.Flush()
}

// actKeyringRead reads the "user" key DESC from the user keyring into
// Data.
func actKeyringRead(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	data, err := keyringRead(args[0])
	r := result("keyring-read", args[0], err)
	r.Data = data
	p.emit(r)
	return nil
}

// actKeyringAdd adds the "user" key DESC holding DATA to the session
// keyring.
func actKeyringAdd(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	p.emit(result("keyring-add", args[0], keyringAdd(args[0], args[1])))
	return nil
}

// actShmRead reads the System V shared memory segment KEY into Data.
func actShmRead(p *prober, args []string) error {
	if err := nargs(args, 1); err != nil {
		return err
	}
	key, err := strconv.Atoi(args[0])
	if err != nil {
		return fmt.Errorf("%w: shm-read KEY (a number)", errUsage)
	}
	data, err := shmRead(key)
	r := result("shm-read", args[0], err)
	r.Data = data
	p.emit(r)
	return nil
}
