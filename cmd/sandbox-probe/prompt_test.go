package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/cordon-sandbox/cordon/workspace"
)

// TestPromptScopes: run's terminal prompt offers "s" (for the rest of the
// run) only when the ask offers a session scope, and shows what it covers.
func TestPromptScopes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		scopes []workspace.Scope
		input  string
		want   workspace.Answer
		shows  string
	}{
		{"once", []workspace.Scope{workspace.ScopeOnce}, "y\n", workspace.Answer{Allow: true}, "allow once? [y/N]"},
		{"session offered", []workspace.Scope{workspace.ScopeOnce, workspace.ScopeSession}, "s\n", workspace.Answer{Allow: true, Scope: workspace.ScopeSession}, "[s] covers, for the rest of this run: connections to example.test:443"},
		{"session not offered", []workspace.Scope{workspace.ScopeOnce}, "s\n", workspace.Answer{}, "allow once? [y/N]"},
		{"default no", []workspace.Scope{workspace.ScopeOnce, workspace.ScopeSession}, "\n", workspace.Answer{}, "[N]o"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tty, err := os.CreateTemp(t.TempDir(), "tty")
			if err != nil {
				t.Fatal(err)
			}
			defer tty.Close()
			a := newApp(nil, io.Discard, io.Discard)
			a.color = "never"
			a.in = bufio.NewReader(strings.NewReader(tc.input))
			req := &workspace.ApprovalRequest{Op: "connect", Host: "example.test", Port: 443, Scopes: tc.scopes, Covers: "connections to example.test:443"}
			got, err := a.prompt(tty, req)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("answer = %+v, want %+v", got, tc.want)
			}
			shown, _ := os.ReadFile(tty.Name())
			if !strings.Contains(string(shown), tc.shows) {
				t.Errorf("prompt %q does not show %q", shown, tc.shows)
			}
		})
	}
}
