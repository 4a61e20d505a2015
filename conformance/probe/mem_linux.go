package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// memWord is the word mem-target shows and mem-write tries to change.
var memWord uint64 = 1

// actMemTarget (mem-target FILE DURATION) writes "PID ADDRESS VALUE" to
// FILE every 20 ms for DURATION: its pid, the address of a word of its
// memory and the word's value, read anew each time. Another process
// that can write this process's memory (mem-write) changes the value.
func actMemTarget(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	d, err := time.ParseDuration(args[1])
	if err != nil {
		return err
	}
	f, err := os.OpenFile(args[0], os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	r := result("mem-target", args[0], err)
	r.Values = map[string]string{"pid": strconv.Itoa(os.Getpid())}
	p.emit(r)
	if err != nil {
		return nil
	}
	defer f.Close()
	addr := uintptr(unsafe.Pointer(&memWord))
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		_, _ = f.WriteAt(fmt.Appendf(nil, "%10d %20d %20d\n", os.Getpid(), addr, atomic.LoadUint64(&memWord)), 0)
	}
	return nil
}

// actMemWrite (mem-write FILE VALUE) waits (at most 10 s) for FILE,
// written by mem-target, and tries to write VALUE into the word it names
// in the other process's memory, three ways, one record each: through
// /proc/PID/mem, with process_vm_writev, and with ptrace (attach, poke,
// detach).
func actMemWrite(p *prober, args []string) error {
	if err := nargs(args, 2); err != nil {
		return err
	}
	v, err := strconv.ParseUint(args[1], 10, 64)
	if err != nil {
		return err
	}
	var pid int
	var addr uint64
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(args[0])
		var ok bool
		if pid, addr, _, ok = MemTarget(b); ok {
			break
		}
		if time.Now().After(end) {
			return fmt.Errorf("%s: no target after 10s", args[0])
		}
	}
	if pid == os.Getpid() {
		// The target runs in another PID namespace, where it has this
		// process's number.
		p.emit(result("mem-write", strconv.Itoa(pid), errors.New("the target's pid is this process's own: it runs in another PID namespace")))
		return nil
	}
	word := binary.NativeEndian.AppendUint64(nil, v)
	mem := "/proc/" + strconv.Itoa(pid) + "/mem"
	f, err := os.OpenFile(mem, os.O_RDWR, 0)
	if err == nil {
		_, err = f.WriteAt(word, int64(addr))
		f.Close()
	}
	took := err == nil
	p.emit(result("mem-write", mem, err))
	_, err = unix.ProcessVMWritev(pid, []unix.Iovec{{Base: &word[0], Len: 8}}, []unix.RemoteIovec{{Base: uintptr(addr), Len: 8}}, 0)
	took = took || err == nil
	p.emit(result("process_vm_writev", strconv.Itoa(pid), err))
	err = ptracePoke(pid, uintptr(addr), word)
	took = took || err == nil
	p.emit(result("ptrace", strconv.Itoa(pid), err))
	// Where a write took, wait until the target shows it, so that the
	// effect is in FILE when this command ends.
	for end := time.Now().Add(5 * time.Second); took && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(args[0])
		if _, _, now, ok := MemTarget(b); ok && now == v {
			break
		}
	}
	return nil
}

// ptracePoke attaches to pid, writes word at addr and detaches.
func ptracePoke(pid int, addr uintptr, word []byte) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := syscall.PtraceAttach(pid); err != nil {
		return err
	}
	defer syscall.PtraceDetach(pid)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return err
	}
	if _, err := syscall.PtracePokeData(pid, addr, word); err != nil {
		return err
	}
	return nil
}
