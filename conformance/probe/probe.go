// Package probe is the small program the conformance suite runs inside a
// sandbox for the actions a shell cannot express portably: TCP, UDP and
// Unix socket connects, binding a port, TIOCSTI, signalling a process,
// reading /proc/self/status, listing descriptors, hard links, truncate,
// chmod, plain reads and writes, and a heartbeat that shows from outside
// whether a process is still alive.
//
// # Running it
//
// The suite needs the probe as an executable file it can grant read and
// execute on. It obtains one, in this order:
//
//   - an explicit path (conformance.WithProbe), or the CORDON_PROBE
//     environment variable;
//   - `CGO_ENABLED=0 go build` of ./cmd/cordon-probe, when a Go toolchain
//     and this module's source are at hand (go test);
//   - a copy of the running program named cordon-probe, when that program
//     registered the probe by calling MaybeRun first thing in main.
//
// Registration, for programs such as sandbox-probe that run the suite on a
// machine without a Go toolchain:
//
//	func main() {
//		probe.MaybeRun() // runs the probe and exits when started as cordon-probe
//		...
//	}
//
// Test binaries register the same way in TestMain. The built probe is a
// static binary, so it also runs inside a minimal (busybox) container
// image; a copied host binary is static only if it was built without cgo.
//
// # Output
//
// Most actions print one JSON line per target, a Record, to stdout and exit
// 0 when every target succeeded, 1 otherwise, 2 on a usage error. The
// suite parses the records with Parse: a record shows that the probe ran
// and what the kernel answered (the errno), but the suite decides a case
// from host-side evidence, never from the exit status or the record alone.
// The output actions (emit, bytes, repeat) print only their payload.
//
// A leading --tag=X argument is ignored; the suite passes one so it can
// find and kill its probes by command line.
package probe

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
)

// Name is the file name under which a registered host program runs as the
// probe (argv[0]'s base name).
const Name = "cordon-probe"

// EnvMain, set to "1", also makes MaybeRun run the probe.
const EnvMain = "CORDON_PROBE_MAIN"

var registered atomic.Bool

// MaybeRun runs the probe with os.Args[1:] and exits when the program was
// started as the probe: argv[0]'s base name is Name, or EnvMain is "1".
// Otherwise it returns at once and records the registration, so that
// Registered reports true and the conformance suite may copy the running
// executable as its probe. Call it first thing in main (or TestMain).
func MaybeRun() {
	registered.Store(true)
	if filepath.Base(os.Args[0]) == Name || os.Getenv(EnvMain) == "1" {
		os.Exit(Main(os.Args[1:]))
	}
}

// Registered reports whether the running program called MaybeRun.
func Registered() bool { return registered.Load() }

// Record is one probe result line.
type Record struct {
	// Probe is always 1; it marks the line as a probe record.
	Probe  int    `json:"cordon_probe"`
	Action string `json:"action"`
	Target string `json:"target,omitempty"`
	OK     bool   `json:"ok"`
	// Errno is the symbolic errno of the failure ("EACCES"), if any.
	Errno string `json:"errno,omitempty"`
	Err   string `json:"error,omitempty"`
	// Data holds the start of what was read (at most MaxData bytes).
	Data   string `json:"data,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Values holds named facts (tty_nr, NoNewPrivs, pid, ...).
	Values map[string]string `json:"values,omitempty"`
	// List holds names: directory entries, descriptors, environment.
	List []string `json:"list,omitempty"`
}

// MaxData bounds Record.Data.
const MaxData = 1024

// MaxList bounds Record.List for directory listings; Values["entries"]
// holds the full count.
const MaxList = 64

// String renders the record compactly for evidence lines.
func (r Record) String() string {
	s := r.Action
	if r.Target != "" {
		s += " " + r.Target
	}
	if r.OK {
		s += ": ok"
	} else {
		s += ": failed"
		if r.Errno != "" {
			s += " " + r.Errno
		} else if r.Err != "" {
			s += " (" + r.Err + ")"
		}
	}
	return s
}

const recordPrefix = `{"cordon_probe":`

// Parse returns the probe records found in out, one per line that starts
// like a record and decodes; other lines are ignored.
func Parse(out []byte) []Record {
	var recs []Record
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(recordPrefix)) {
			continue
		}
		var r Record
		if json.Unmarshal(line, &r) == nil && r.Probe == 1 {
			recs = append(recs, r)
		}
	}
	return recs
}

// Pattern returns n deterministic bytes derived from seed: every byte
// value 0-255 first (NUL, invalid UTF-8, CR, LF), then a SHA-256 chain.
// The binary-output case compares what the probe's bytes action printed
// with Pattern on the host.
func Pattern(seed string, n int) []byte {
	out := make([]byte, 0, n+sha256.Size)
	for i := 0; i < 256 && len(out) < n; i++ {
		out = append(out, byte(i))
	}
	var ctr [8]byte
	for i := uint64(0); len(out) < n; i++ {
		binary.BigEndian.PutUint64(ctr[:], i)
		h := sha256.Sum256(append([]byte(seed), ctr[:]...))
		out = append(out, h[:]...)
	}
	return out[:n]
}

// HeartbeatCount parses a heartbeat file written by the heartbeat action:
// the writer's pid (as it sees itself) and its tick count.
func HeartbeatCount(b []byte) (pid, count int, ok bool) {
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	c, err2 := strconv.Atoi(f[1])
	return p, c, err1 == nil && err2 == nil
}

// MemTarget parses a file written by the mem-target action: the
// writer's pid (as it sees itself), the address of the word and its value.
func MemTarget(b []byte) (pid int, addr, value uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0, 0, 0, false
	}
	p, err1 := strconv.Atoi(f[0])
	a, err2 := strconv.ParseUint(f[1], 10, 64)
	v, err3 := strconv.ParseUint(f[2], 10, 64)
	return p, a, v, err1 == nil && err2 == nil && err3 == nil
}

// RepeatOutput returns what "repeat TOKEN N" prints to stdout and stderr.
func RepeatOutput(token string, n int) (stdout, stderr []byte) {
	var o, e bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&o, "%s out %d\n", token, i)
		fmt.Fprintf(&e, "%s err %d\n", token, i)
	}
	return o.Bytes(), e.Bytes()
}
