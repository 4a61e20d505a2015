package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/cordon-sandbox/cordon/executor"
)

// helperEnv selects a re-exec entry point of this test binary.
const helperEnv = "CORDON_EXECUTOR_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "ctty":
		cttyHelper()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// cttyProbe prints tty_nr (field 7 of /proc/self/stat) and whether
// /dev/tty can be opened.
const cttyProbe = `set -- $(sed 's/.*) //' /proc/self/stat); echo "tty_nr=$5"; if (exec 3</dev/tty) 2>/dev/null; then echo tty=open; else echo tty=refused; fi`

// cttyReport is what cttyHelper prints as JSON.
type cttyReport struct {
	Helper, Plain, Local string
	Err                  string
}

// cttyHelper runs in a session whose controlling terminal is a pty: it
// reports the probe for itself, for a plain os/exec child (the control,
// which shares the terminal) and for a child run by executor.Local.
func cttyHelper() {
	var rep cttyReport
	probe := func(cmd *exec.Cmd) string {
		out, err := cmd.Output()
		if err != nil {
			rep.Err += err.Error() + ";"
		}
		return string(out)
	}
	rep.Helper = probe(exec.Command("/bin/sh", "-c", `set -- $(sed 's/.*) //' /proc/`+fmt.Sprint(os.Getpid())+`/stat); echo "tty_nr=$5"`))
	rep.Plain = probe(exec.Command("/bin/sh", "-c", cttyProbe))
	res, err := executor.NewLocal().Run(context.Background(), &executor.Request{
		Command: cttyProbe,
		Env:     []string{"PATH=/usr/bin:/bin"},
	})
	if err != nil {
		rep.Err += err.Error()
	} else {
		rep.Local = string(res.Stdout)
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
	os.Exit(0)
}
