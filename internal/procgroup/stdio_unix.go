//go:build unix

package procgroup

import (
	"io"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// terminal returns the streams of a command on a new pseudo-terminal
// (github.com/creack/pty opens the pair: the one well-kept library for
// it, rather than ptmx ioctls by hand). The master is handed to Go's
// poller (a non-blocking descriptor of its own): pty's ioctls go through
// File.Fd, which makes a descriptor blocking, and a blocking read of the
// master would not end when Run closes it after the command, while a
// process that left the command's tree still holds the terminal.
func terminal(t *Terminal) (*streams, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	if t.Rows > 0 && t.Cols > 0 {
		if err := pty.Setsize(master, &pty.Winsize{Rows: t.Rows, Cols: t.Cols}); err != nil {
			master.Close()
			slave.Close()
			return nil, err
		}
	}
	fd, err := unix.FcntlInt(master.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	master.Close()
	if err == nil {
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		slave.Close()
		return nil, err
	}
	m := os.NewFile(uintptr(fd), "/dev/ptmx")
	// The caller's input is written to the terminal; its end is not
	// closed at the input's EOF: the command may still write.
	st := &streams{stdin: slave, stdout: slave, stderr: slave, ctty: true, feed: nopCloser{m}}
	st.parent[0] = m
	st.child = []*os.File{slave}
	if t.Resize != nil {
		rc, err := m.SyscallConn()
		if err != nil {
			st.closeAll()
			return nil, err
		}
		go func() {
			for ws := range t.Resize {
				var serr error
				if err := rc.Control(func(fd uintptr) {
					serr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: ws.Rows, Col: ws.Cols})
				}); err != nil || serr != nil {
					return // closed: the command ended
				}
			}
		}()
	}
	return st, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
