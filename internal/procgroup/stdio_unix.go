//go:build unix

package procgroup

import (
	"io"
	"os"

	"github.com/creack/pty"
)

// terminal returns the streams of a command on a new pseudo-terminal
// (github.com/creack/pty opens the pair: the one well-kept library for
// it, rather than ptmx ioctls by hand).
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
	// The caller's input is written to the terminal; its end is not
	// closed at the input's EOF: the command may still write.
	st := &streams{stdin: slave, stdout: slave, stderr: slave, ctty: true, feed: nopCloser{master}}
	st.parent[0] = master
	st.child = []*os.File{slave}
	if t.Resize != nil {
		go func() {
			for ws := range t.Resize {
				if pty.Setsize(master, &pty.Winsize{Rows: ws.Rows, Cols: ws.Cols}) != nil {
					return // closed: the command ended
				}
			}
		}()
	}
	return st, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
