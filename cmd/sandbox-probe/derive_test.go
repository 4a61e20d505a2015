package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/executor/bwrap"
	"github.com/cordon-sandbox/cordon/executor/kubernetes"
	"github.com/cordon-sandbox/cordon/executor/landlock"
	"github.com/cordon-sandbox/cordon/internal/testenv"
	"github.com/cordon-sandbox/cordon/policyderive"
)

// TestDeriveShowsWhatRunEnforces: derive --json prints, byte for byte,
// the plan the backend's executor enforces for the same policy on this
// host (its Explain, which Run's own plan is checked against in each
// backend's tests: landlock TestExplain, bwrap TestExplainIsRun, docker
// TestExplainIsRun), not the bare renderer's.
func TestDeriveShowsWhatRunEnforces(t *testing.T) {
	dir := jsonWorkspace(t)
	root, home := filepath.Join(dir, "w"), filepath.Join(dir, "home")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	pf := &policyFlags{files: []string{filepath.Join(dir, "coding.yaml")}, root: root, home: home, noDefaults: true}
	ws, err := pf.load()
	require.NoError(t, err)
	req := func(cmd string) *executor.Request {
		return &executor.Request{Command: cmd, Root: ws.root, Home: ws.home, Dir: ws.root, Policy: ws.policy}
	}
	// derive returns the top-level members of derive --json, compacted,
	// and the report's rendering decoded.
	derive := func(t *testing.T, backend string, extra ...string) (map[string]string, *DeriveReport) {
		t.Helper()
		args := append([]string{"derive", "--json", "--backend", backend, "--policy", pf.files[0], "--no-default-policies", "--root", root, "--home", home}, extra...)
		code, out, errs := runApp(t, "", args...)
		require.Contains(t, []int{0, 1}, code, "stderr: %s", errs)
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		members := map[string]string{}
		for k, v := range raw {
			var b bytes.Buffer
			require.NoError(t, json.Compact(&b, v))
			members[k] = b.String()
		}
		var rep DeriveReport
		for k, dst := range map[string]any{"landlock": &rep.Landlock, "bwrap": &rep.Bwrap, "docker": &rep.Docker} {
			if v, ok := raw[k]; ok {
				require.NoError(t, json.Unmarshal(v, dst))
			}
		}
		return members, &rep
	}
	// asJSON encodes v as derive does (no HTML escaping), compacted.
	asJSON := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		return strings.TrimSuffix(b.String(), "\n")
	}
	// Each landlock executor has a private temporary directory of its own.
	tmp := regexp.MustCompile(`/cordon-landlock-[0-9]+`)
	sameTmp := func(s string) string { return tmp.ReplaceAllString(s, "/cordon-landlock-N") }
	available := func(t *testing.T, name string) {
		ok, err := scriptCondition(name)
		require.NoError(t, err)
		if !ok {
			testenv.Require(t, name, false, name+" is not available here")
		}
	}

	t.Run("landlock", func(t *testing.T) {
		available(t, "landlock")
		out, rep := derive(t, "landlock")
		x, err := landlock.New(landlock.Config{})
		require.NoError(t, err)
		defer x.Close()
		e, err := x.Explain(context.Background(), req("true"))
		require.NoError(t, err)
		require.Equal(t, "executor", rep.Landlock.Source)
		var paths []string
		for _, r := range e.Ruleset.FS {
			paths = append(paths, sameTmp(r.Path))
		}
		var shown []string
		for _, r := range rep.Landlock.FS {
			shown = append(shown, sameTmp(r.Path))
		}
		assert.Equal(t, paths, shown, "the executor's rules")
		assert.Equal(t, e.Filter, rep.Landlock.Filter)
		assert.Equal(t, sameTmp(asJSON(e.Fidelity)), sameTmp(out["fidelity"]), "the executor's fidelity")
		assert.Equal(t, sameTmp(asJSON(blockingOrEmpty(e.Fidelity))), sameTmp(out["blocking"]))
	})
	t.Run("bwrap", func(t *testing.T) {
		available(t, "bwrap")
		out, rep := derive(t, "bwrap")
		x, err := bwrap.New(bwrap.Config{BestEffort: true})
		require.NoError(t, err)
		defer x.Close()
		argv, fid, err := x.Explain(context.Background(), req("CMD"))
		require.NoError(t, err)
		require.Equal(t, "executor", rep.Bwrap.Source)
		assert.Equal(t, asJSON(argv[1:len(argv)-4]), asJSON(rep.Bwrap.Args), "the executor's command line")
		assert.Equal(t, asJSON(fid), out["fidelity"], "the executor's fidelity")
	})
	t.Run("docker", func(t *testing.T) {
		available(t, "docker")
		out, rep := derive(t, "docker", "--host-system")
		require.Equal(t, "executor", rep.Docker.Source)
		dr, fid := explainDocker(ws, ws.root, nil, true, "")
		require.NotNil(t, dr)
		assert.Equal(t, asJSON(dr), out["docker"], "the executor's mounts, network and seccomp")
		assert.Equal(t, asJSON(fid), out["fidelity"], "the executor's fidelity")
		assert.NotEmpty(t, rep.Docker.EngineMounts)
	})
	t.Run("kubernetes", func(t *testing.T) {
		kc, image, _ := testenv.Kube()
		testenv.Require(t, testenv.Kubernetes, kc != "" && image != "", "KUBECONFIG and CORDON_KUBE_IMAGE are not set (scripts/kube.sh up)")
		out, _ := derive(t, "kubernetes", "--kube-cluster", "--kube-image", image)
		var kr KubernetesRendering
		require.NoError(t, json.Unmarshal([]byte(out["kubernetes"]), &kr))
		require.Equal(t, "executor", kr.Source)
		x, err := kubernetes.New(kubernetes.Config{Kubeconfig: kc, Image: image, BestEffort: true})
		require.NoError(t, err)
		defer x.Close()
		r, fid, err := x.Explain(context.Background(), req("true"))
		require.NoError(t, err)
		assert.Equal(t, asJSON(r.Pod), asJSON(kr.Pod), "the executor's pod")
		assert.Equal(t, asJSON(r.NetworkPolicy), asJSON(kr.NetworkPolicy), "the executor's NetworkPolicy")
		assert.Equal(t, asJSON(fid), out["fidelity"], "the executor's fidelity")
	})
}

// blockingOrEmpty is f's blocking elements, never nil (as derive prints them).
func blockingOrEmpty(f *policyderive.Fidelity) []policyderive.Element {
	if b := f.Blocking(); b != nil {
		return b
	}
	return []policyderive.Element{}
}
