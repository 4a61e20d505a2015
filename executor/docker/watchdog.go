package docker

import "time"

// watchdog is how a command is ended, the same for both of its paths
// (the session's command runner, and an exec of its own). The loop
// (Executor.watch) waits until the command's output and control streams
// are read to their end. When the command's shell has exited, what it
// left holding the output gets the wait delay, then the streams are cut.
// On timeout, cancel or kill the command's tree is killed — at once, or
// as soon as the path knows the tree (a runner command once its
// supervisor reported its pid). When the output stays open killWait
// after the kill, the box is marked broken and the streams are closed.
// Each path supplies only how: its channels and functions.
type watchdog struct {
	// streams is closed when every stream of the command is read to its
	// end; exited when the command's shell has exited.
	streams, exited <-chan struct{}
	// started is closed when the command's tree is known and can be
	// killed (nil: it is known already), and then onStarted runs.
	// startBy fires when the path stops waiting for it, and then
	// onStartLost runs.
	started     <-chan struct{}
	startBy     <-chan time.Time
	onStarted   func()
	onStartLost func()
	// kill kills the command's tree; cut stops reading (the shell is
	// gone); close closes the streams (the kill did not end them).
	kill       func() error
	cut, close func()
}

// watch runs w's loop for the command whose outcome is out (out.ended
// and out.notes are set here); it returns whether the streams were cut
// after the wait delay. It returns when the streams ended and any kill
// it started has returned.
func (x *Executor) watch(b *box, w *watchdog, out *execOut, timeout time.Duration, cancel, kill <-chan struct{}) (cut bool) {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var (
		started  = w.started == nil
		startCh  = w.started
		startBy  = w.startBy
		exited   = w.exited
		delay    <-chan time.Time
		killDone chan error
		deadline <-chan time.Time
	)
	killNow := func() {
		killDone = make(chan error, 1)
		go func() { killDone <- w.kill() }()
	}
	killed := func(err error) {
		killDone = nil
		if err != nil {
			out.notes = append(out.notes, x.breakBox(b, "killing the command's processes failed: "+err.Error()))
		}
	}
	end := func(why string) {
		if out.ended != "" {
			return
		}
		out.ended = why
		timer, cancel, kill = nil, nil, nil
		if started {
			killNow()
		}
	}
	for {
		select {
		case <-w.streams:
			if killDone != nil {
				killed(<-killDone)
			}
			return cut
		case <-startCh:
			startCh, startBy, started = nil, nil, true
			w.onStarted()
			if out.ended != "" {
				killNow()
			}
		case <-startBy:
			startBy = nil
			w.onStartLost()
		case <-exited:
			exited = nil
			delay = time.After(x.cfg.waitDelay())
		case <-delay:
			// The shell has exited, but something that left its session
			// keeps the output open: stop reading.
			delay, cut = nil, true
			w.cut()
		case <-timer:
			end(endTimeout)
		case <-cancel:
			end(endCancel)
		case <-kill:
			end(endKill)
		case err := <-killDone:
			killed(err)
			deadline = time.After(killWait)
		case <-deadline:
			deadline = nil
			out.notes = append(out.notes, x.breakBox(b, "the command's output stayed open after its processes were killed"))
			w.close()
		}
	}
}
