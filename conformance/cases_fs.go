//go:build unix

package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cordon-sandbox/cordon/executor"
	"github.com/cordon-sandbox/cordon/policy"
)

func fsCases() []*caseDef {
	iso := func(id, title string, ctl executor.Control, expected Outcome, verified string, run func(*caseRun)) *caseDef {
		return &caseDef{CaseInfo: CaseInfo{ID: id, Title: title, Layer: Filesystem, Control: ctl, Isolation: true, Expected: expected, Verified: verified}, probe: true, run: run}
	}
	return []*caseDef{
		iso("write-inside-root", "writes inside the root succeed", executor.ControlFSWrite, Allowed,
			"the probe writes a token to a new file and to a new nested directory; the host reads both tokens back", caseWriteInside),
		iso("write-outside", "writes outside the root are denied", executor.ControlFSWrite, Denied,
			"the probe overwrites outside/canary.txt and creates outside/new.txt; host-side listing and hashes of outside/ unchanged. Twin: the same under a writable grant for outside/", caseWriteOutside),
		iso("read-home-secrets", "the home directory's secrets are unreadable", executor.ControlFSRead, Denied,
			"the probe reads ~/.ssh/id_rsa, ~/.aws/credentials and ~/.gitconfig; none of their random tokens appears in the output. Twin: the same under a readable grant for the home", caseReadHome),
		iso("system-paths", "system paths are readable and executable", executor.ControlFSRead, Allowed,
			"the probe reads /bin/sh and /etc/passwd (non-empty) and lists /usr/bin; a nested /bin/sh runs and returns its exit status", caseSystemPaths),
		iso("denied-paths", "a denied_paths match (.env*) is unreadable and unwritable at depth 0 and depth 5", executor.ControlFSRead, Denied,
			"the probe reads root/.env and root/a/b/c/d/e/.env.local and overwrites root/.env; no token in the output, both files unchanged on the host, while root/a/b/c/d/e/env.txt, which no rule denies, is read (else a setup error). Twin: the same policy without denied_paths", caseDeniedPaths),
		iso("denied-new-file", "a denied_paths match created while the command runs is unreadable", executor.ControlFSNewFiles, Denied,
			"the host creates root/late/.env.late after the command started; the probe then reads it; its token must not appear (a command whose start never reaches the host is a setup error). Twin: without denied_paths", caseDeniedNewFile),
		iso("symlink-escape", "a symlink inside the root to an outside file or directory gives no access", executor.ControlFSRead, Denied,
			"the probe reads and writes through root/link-file → outside/canary.txt and root/link-dir → outside/; no token in the output, outside/ unchanged. Twin: a writable grant for outside/", caseSymlinkEscape),
		iso("dotdot-escape", "`..` routes out of the root give no access", executor.ControlFSRead, Denied,
			"the probe reads and writes root/../outside/… and, from root/sub, ../../outside/…; no token, outside/ unchanged. Twin: a writable grant for outside/", caseDotDotEscape),
		iso("proc-root-escape", "/proc/self/root, /proc/self/cwd and /proc/1/root routes give no access", executor.ControlFSRead, Denied,
			"the probe reads and writes the outside canary through /proc magic links; no token, outside/ unchanged. Twin: a writable grant for outside/", caseProcRootEscape),
		iso("hardlink-outside", "a hard link to an outside file cannot be made", executor.ControlFSWrite, Denied,
			"the probe links outside/canary.txt into the root and a root file into outside/; no new link on the host (listing, link counts). Twin: executor.Local", caseHardlink),
		iso("hardlink-denied", "another name of a denied file is denied too", executor.ControlFSRead, Denied,
			"root/docs/.env.production is a hard link of root/docs/notes.md (as an earlier command could make it), and the host then writes a secret into it in place; the probe reads both names and overwrites notes.md: no token in the output, the file unchanged, while root/docs/readme.md is read (else a setup error). Twin: the same policy without denied_paths", caseHardlinkDenied),
		iso("system-private", "a file in a System tree that other users may not read is not granted", executor.ControlFSRead, Denied,
			"outside/sys, added to Policy.System, holds key.json (0600, a token: a root-only key such as /etc/docker/key.json) and pub.conf (0644); the probe reads both: the key's token must not appear, while pub.conf's does (else a setup error). Twin: the same policy with key.json named in System by its own path", caseSystemPrivate),
		iso("truncate-outside", "truncating an outside file fails", executor.ControlFSWrite, Denied,
			"the probe truncates outside/canary.txt; host-side size and hash unchanged. Twin: a writable grant for outside/", caseTruncate),
		iso("chmod-outside", "chmod of an outside file or directory fails", executor.ControlFSMetadata, Denied,
			"the probe chmods outside/canary.txt and outside/ to 0777; host-side modes unchanged. Twin: a writable grant for outside/", caseChmod),
		iso("metadata-outside", "times, owner and extended attributes of an outside file cannot be changed", executor.ControlFSMetadata, Denied,
			"the probe sets the times of outside/meta.txt and outside/ to 2001, chowns the file to 65534, sets its user.cordon attribute and chmods it 4777; host-side mode, owner, modification time and user.cordon of both unchanged. Twin: a writable grant for outside/", caseMetadataOutside),
		iso("metadata-inside", "chmod +x and times of files inside the root can be changed", executor.ControlFSMetadata, Allowed,
			"the probe chmods root/tool.sh 755 and sets its times to 2001; the host sees the mode and the modification time", caseMetadataInside),
		iso("readonly-mode", "readonly mode writes nothing anywhere", executor.ControlFSWrite, Denied,
			"under mode readonly the probe creates, overwrites, appends, truncates, renames, links, removes and mkdirs in the root and writes outside and in the home; host-side listings and hashes of root, outside and home unchanged. Twin: the same in coding mode", caseReadonly),
		iso("trusted-read-outside", "trusted mode reads outside the root", executor.ControlFSRead, Allowed,
			"under mode trusted the probe reads outside/canary.txt and ~/.ssh/id_rsa; both tokens appear", caseTrustedRead),
		iso("trusted-denied-paths", "trusted mode still hides denied paths", executor.ControlFSRead, Denied,
			"under mode trusted with denied_paths [.env*, <outside>/private] the probe reads ~/.env, outside/private/key.txt and root/sub/.env.production; no token appears, while outside/public/key.txt, which no rule denies, is read (else a setup error). Twin: trusted without denied_paths", caseTrustedDenied),
	}
}

// writableOutside is coding mode plus a read-write grant for outside/.
func (c *caseRun) writableOutside() *policy.Policy {
	p := c.coding()
	p.PathRules = append(p.PathRules, policy.PathRule{Pattern: c.fx.outside, Action: policy.Allow, Ops: []policy.Op{policy.Read, policy.Write}})
	return p
}

func (c *caseRun) mustWrite(path, content string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		c.setupf("fixture: %v", err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		c.setupf("fixture: %v", err)
	}
}

func caseWriteInside(c *caseRun) {
	t1, t2 := token("inside"), token("inside-deep")
	f1, f2 := filepath.Join(c.fx.root, "new.txt"), filepath.Join(c.fx.root, "d1", "d2", "new.txt")
	cmd := c.probes([]string{"write", f1, t1}, []string{"mkdir", filepath.Dir(f2)}, []string{"write", f2, t2})
	c.permit(filesHold(map[string]string{f1: t1, f2: t2}), c.act(cmd, nil))
}

// filesHold: the action took effect when every file holds its token.
func filesHold(want map[string]string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(*executor.Result) (bool, string) {
			var seen []string
			all := true
			for p, tok := range want {
				b, err := os.ReadFile(p)
				ok := err == nil && bytes.Contains(b, []byte(tok))
				all = all && ok
				seen = append(seen, fmt.Sprintf("%s holds the token: %v", p, ok))
			}
			return all, strings.Join(seen, "; ")
		}
	}
}

func caseWriteOutside(c *caseRun) {
	tok := token("write")
	cmd := c.probes([]string{"write", c.fx.outsideFile, tok}, []string{"write", filepath.Join(c.fx.outside, "new.txt"), tok})
	c.isolate(changed(c.fx.outside), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func (c *caseRun) secretPaths() ([]string, []string) {
	var paths, toks []string
	for _, rel := range homeSecrets {
		paths = append(paths, filepath.Join(c.fx.home, rel))
		toks = append(toks, c.fx.secrets[rel])
	}
	return paths, toks
}

func caseReadHome(c *caseRun) {
	paths, toks := c.secretPaths()
	cmd := c.probeCmd(append([]string{"read"}, paths...)...)
	twin := c.coding()
	twin.PathRules = append(twin.PathRules, policy.PathRule{Pattern: c.fx.home, Action: policy.Allow, Ops: []policy.Op{policy.Read}})
	c.isolate(tokensShown(toks...), c.act(cmd, nil), c.twinPolicy("coding + readable home", cmd, twin))
}

func caseSystemPaths(c *caseRun) {
	cmd := c.probes([]string{"read", "/bin/sh", "/etc/passwd"}, []string{"list", "/usr/bin"}) + "; /bin/sh -c 'exit 3'; echo nested=$?"
	ok := func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(res *executor.Result) (bool, string) {
			var seen []string
			good := 0
			for _, r := range records(res) {
				switch {
				case r.Action == "read" && r.OK && r.Size > 0:
					good++
					same := "differs from the host's (an image's own file?)"
					if b, err := os.ReadFile(r.Target); err == nil {
						h := sha256.Sum256(b)
						if hex.EncodeToString(h[:]) == r.SHA256 {
							same = "same as the host's"
						}
					}
					seen = append(seen, fmt.Sprintf("read %s: %d bytes, %s", r.Target, r.Size, same))
				case r.Action == "list" && r.OK && len(r.List) > 0:
					good++
					seen = append(seen, fmt.Sprintf("listed %s: %s entries", r.Target, r.Values["entries"]))
				default:
					seen = append(seen, r.String())
				}
			}
			nested := bytes.Contains(res.Stdout, []byte("nested=3\n"))
			seen = append(seen, fmt.Sprintf("nested /bin/sh returned 3: %v", nested))
			return good == 3 && nested, strings.Join(seen, "; ")
		}
	}
	a := c.act(cmd, nil)
	a.req.OutputLimit = 1 << 20
	c.permit(ok, a)
}

func caseDeniedPaths(c *caseRun) {
	f0, f5 := filepath.Join(c.fx.root, ".env"), filepath.Join(c.fx.root, "a", "b", "c", "d", "e", ".env.local")
	t0, t5 := token("env0"), token("env5")
	c.mustWrite(f0, "SECRET="+t0+"\n")
	c.mustWrite(f5, "SECRET="+t5+"\n")
	sib, ts := filepath.Join(c.fx.root, "a", "b", "c", "d", "e", "env.txt"), token("sibling")
	c.mustWrite(sib, ts+"\n")
	cmd := c.probes([]string{"read", f0, f5, sib}, []string{"write", f0, token("overwrite")})
	p := c.coding()
	p.DeniedPaths = []string{".env*"}
	c.isolate(undeniedShown(anyOf(tokensShown(t0, t5), changed(f0, f5)), sib, ts), c.act(cmd, p), c.twinPolicy("coding without denied_paths", cmd, c.coding()))
}

func caseHardlinkDenied(c *caseRun) {
	docs := filepath.Join(c.fx.root, "docs")
	notes, env := filepath.Join(docs, "notes.md"), filepath.Join(docs, ".env.production")
	c.mustWrite(notes, "notes\n")
	if err := os.Link(notes, env); err != nil {
		c.setupf("fixture: %v", err)
	}
	tok := token("linked")
	// In place, as editors, shell redirects and `env pull` tools write:
	// the link survives and notes.md shows the secret.
	if err := os.WriteFile(env, []byte("SECRET="+tok+"\n"), 0o644); err != nil {
		c.setupf("fixture: %v", err)
	}
	sib, ts := filepath.Join(docs, "readme.md"), token("readme")
	c.mustWrite(sib, ts+"\n")
	cmd := c.probes([]string{"read", notes, env, sib}, []string{"write", notes, token("overwrite")})
	p := c.coding()
	p.DeniedPaths = []string{".env*"}
	c.isolate(undeniedShown(anyOf(tokensShown(tok), changed(env)), sib, ts), c.act(cmd, p), c.twinPolicy("coding without denied_paths", cmd, c.coding()))
}

func caseSystemPrivate(c *caseRun) {
	sys := filepath.Join(c.fx.outside, "sys")
	key, pub := filepath.Join(sys, "key.json"), filepath.Join(sys, "pub.conf")
	tok, tp := token("private"), token("public")
	c.mustWrite(pub, tp+"\n")
	c.mustWrite(key, tok+"\n")
	if err := os.Chmod(key, 0o600); err != nil {
		c.setupf("fixture: %v", err)
	}
	cmd := c.probeCmd("read", key, pub)
	p := c.coding()
	p.System = append(p.System, sys)
	twin := c.coding()
	twin.System = append(twin.System, sys, key)
	c.isolate(undeniedShown(tokensShown(tok), pub, tp), c.act(cmd, p), c.twinPolicy("the key named in System", cmd, twin))
}

// undeniedShown wraps obs so that every attempt must also have read path,
// which no rule denies, and shown its token: a sandbox that hides more
// than the denied paths (the whole workspace, say) proves nothing.
func undeniedShown(obs observer, path, tok string) observer {
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		check := obs(c)
		return func(res *executor.Result) (bool, string) {
			if took, _ := tokensShown(tok)(c)(res); !took {
				c.setupf("%s, which no rule denies, was not readable either: the sandbox hides more than the denied paths, so the denial proves nothing", path)
			}
			return check(res)
		}
	}
}

func caseDeniedNewFile(c *caseRun) {
	seq := 0
	var tok string
	attemptWith := func(label string, p *policy.Policy) attempt {
		seq++
		dir := filepath.Join(c.fx.root, fmt.Sprintf("late%d", seq))
		started, ready := filepath.Join(c.fx.root, fmt.Sprintf("started%d", seq)), filepath.Join(c.fx.root, fmt.Sprintf("ready%d", seq))
		late := filepath.Join(dir, ".env.late")
		cmd := c.probes([]string{"write", started, "1"}, []string{"await", ready, "15s"}, []string{"read", late})
		a := attempt{label: label, x: c.x, req: c.req(cmd, p)}
		a.during = func(finished <-chan struct{}) {
			if !waitFor(c.ctx, 15*time.Second, finished, func() bool { _, err := os.Stat(started); return err == nil }) {
				return // the command never started; the missing record shows it
			}
			tok = token("late-env")
			c.mustWrite(late, "SECRET="+tok+"\n")
			c.mustWrite(ready, "1")
		}
		return a
	}
	p := c.coding()
	p.DeniedPaths = []string{".env*"}
	lateShown := func(c *caseRun) func(*executor.Result) (bool, string) {
		tok = ""
		return func(res *executor.Result) (bool, string) {
			if tok == "" {
				// Its write to the root never reached the host: the
				// sandbox hid the workspace, or the command did not run.
				c.setupf("the command never signalled on the host that it started, so the late file was never created")
			}
			return tokensShown(tok)(c)(res)
		}
	}
	act := attemptWith("action", p)
	twin := attemptWith("twin (coding without denied_paths)", c.coding())
	c.isolate(lateShown, act, twin)
}

func (c *caseRun) escapeObserver() observer {
	return anyOf(tokensShown(c.fx.outsideToken), changed(c.fx.outside))
}

func caseSymlinkEscape(c *caseRun) {
	lf, ld := filepath.Join(c.fx.root, "link-file"), filepath.Join(c.fx.root, "link-dir")
	if err := os.Symlink(c.fx.outsideFile, lf); err != nil {
		c.setupf("fixture: %v", err)
	}
	if err := os.Symlink(c.fx.outside, ld); err != nil {
		c.setupf("fixture: %v", err)
	}
	tok := token("via-link")
	cmd := c.probes([]string{"read", lf, filepath.Join(ld, "canary.txt")},
		[]string{"write", lf, tok}, []string{"write", filepath.Join(ld, "new.txt"), tok})
	c.isolate(c.escapeObserver(), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseDotDotEscape(c *caseRun) {
	sub := filepath.Join(c.fx.root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		c.setupf("fixture: %v", err)
	}
	tok := token("dotdot")
	cmd := "cd " + shellQuote(sub) + " && { " + c.probes(
		[]string{"read", c.fx.root + "/../outside/canary.txt", sub + "/../../outside/canary.txt", "../../outside/canary.txt"},
		[]string{"write", sub + "/../../outside/new.txt", tok},
		[]string{"write", "../../outside/canary.txt", tok}) + "; }"
	c.isolate(c.escapeObserver(), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseProcRootEscape(c *caseRun) {
	if runtime.GOOS != "linux" {
		c.unsupportedf("/proc magic links are Linux-only")
	}
	tok := token("proc")
	cmd := c.probes(
		[]string{"read", "/proc/self/root" + c.fx.outsideFile, "/proc/self/cwd/../outside/canary.txt", "/proc/1/root" + c.fx.outsideFile},
		[]string{"write", "/proc/self/root" + filepath.Join(c.fx.outside, "new.txt"), tok},
		[]string{"write", "/proc/self/cwd/../outside/canary.txt", tok})
	c.isolate(c.escapeObserver(), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseHardlink(c *caseRun) {
	inside := filepath.Join(c.fx.root, "inside.txt")
	c.mustWrite(inside, token("inside")+"\n")
	seq := 0
	cmdFor := func() string {
		seq++
		return c.probes([]string{"link", c.fx.outsideFile, filepath.Join(c.fx.root, fmt.Sprintf("hl%d.txt", seq))},
			[]string{"link", inside, filepath.Join(c.fx.outside, fmt.Sprintf("hl%d.txt", seq))})
	}
	act := c.act(cmdFor(), nil)
	twin := c.twinLocal(cmdFor())
	// Link counts of the two sources are in the snapshots, so a link from
	// either direction shows.
	c.isolate(changed(c.fx.outside, inside), act, twin)
}

func caseTruncate(c *caseRun) {
	cmd := c.probeCmd("truncate", c.fx.outsideFile)
	c.isolate(changed(c.fx.outsideFile), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseChmod(c *caseRun) {
	if err := os.Chmod(c.fx.outsideFile, 0o640); err != nil {
		c.setupf("fixture: %v", err)
	}
	cmd := c.probes([]string{"chmod", "777", c.fx.outsideFile}, []string{"chmod", "777", c.fx.outside})
	c.isolate(changed(c.fx.outside), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseMetadataOutside(c *caseRun) {
	f := filepath.Join(c.fx.outside, "meta.txt")
	c.mustWrite(f, "meta\n")
	cmd := c.probes([]string{"utimes", f}, []string{"utimes", c.fx.outside}, []string{"chown", "65534", f},
		[]string{"setxattr", f, "user.cordon", token("xattr")}, []string{"chmod", "4777", f})
	c.isolate(metaChanged(f, c.fx.outside), c.act(cmd, nil), c.twinPolicy("coding + writable outside/", cmd, c.writableOutside()))
}

func caseMetadataInside(c *caseRun) {
	f := filepath.Join(c.fx.root, "tool.sh")
	c.mustWrite(f, "#!/bin/sh\n")
	cmd := c.probes([]string{"chmod", "755", f}, []string{"utimes", f})
	c.permit(func(c *caseRun) func(*executor.Result) (bool, string) {
		return func(*executor.Result) (bool, string) {
			fi, err := os.Stat(f)
			if err != nil {
				return false, err.Error()
			}
			ok := fi.Mode().Perm() == 0o755 && fi.ModTime().Year() == 2001
			return ok, fmt.Sprintf("%s: mode %v, modified %v", f, fi.Mode().Perm(), fi.ModTime().UTC())
		}
	}, c.act(cmd, nil))
}

// metaChanged: the action took effect when the mode, owner, modification
// time or user.cordon attribute of a path changed.
func metaChanged(paths ...string) observer {
	meta := func(p string) string {
		fi, err := os.Lstat(p)
		if err != nil {
			return err.Error()
		}
		buf := make([]byte, 256)
		n, xerr := unix.Getxattr(p, "user.cordon", buf)
		x := "none"
		if xerr == nil {
			x = string(buf[:n])
		}
		uid, gid := fileOwner(fi)
		return fmt.Sprintf("mode %v owner %d:%d mtime %d user.cordon %s", fi.Mode(), uid, gid, fi.ModTime().UnixNano(), x)
	}
	return func(c *caseRun) func(*executor.Result) (bool, string) {
		before := make([]string, len(paths))
		for i, p := range paths {
			before[i] = meta(p)
		}
		return func(*executor.Result) (bool, string) {
			var diffs []string
			for i, p := range paths {
				if after := meta(p); after != before[i] {
					diffs = append(diffs, fmt.Sprintf("%s: %s → %s", p, before[i], after))
				}
			}
			if len(diffs) == 0 {
				return false, "unchanged: mode, owner, modification time and user.cordon of " + strings.Join(paths, ", ")
			}
			return true, "changed: " + strings.Join(diffs, "; ")
		}
	}
}

func caseReadonly(c *caseRun) {
	existing := filepath.Join(c.fx.root, "existing.txt")
	victim := filepath.Join(c.fx.root, "dir", "victim.txt")
	c.mustWrite(existing, token("existing")+"\n")
	c.mustWrite(victim, token("victim")+"\n")
	tok := token("readonly")
	r := c.fx.root
	cmd := c.probes(
		[]string{"write", filepath.Join(r, "new.txt"), tok},
		[]string{"write", existing, tok},
		[]string{"append", existing, tok},
		[]string{"truncate", existing},
		[]string{"mkdir", filepath.Join(r, "newdir")},
		[]string{"link", existing, filepath.Join(r, "hardlink.txt")},
		[]string{"rename", existing, filepath.Join(r, "renamed.txt")},
		[]string{"remove", victim},
		[]string{"write", filepath.Join(c.fx.outside, "new.txt"), tok},
		[]string{"write", filepath.Join(c.fx.home, "new.txt"), tok},
	)
	c.isolate(changed(c.fx.root, c.fx.outside, c.fx.home), c.act(cmd, c.policyFor(policy.Readonly)), c.twinPolicy("coding mode", cmd, c.coding()))
}

func caseTrustedRead(c *caseRun) {
	id := filepath.Join(c.fx.home, ".ssh/id_rsa")
	cmd := c.probeCmd("read", c.fx.outsideFile, id)
	c.permit(allTokensShown(c.fx.outsideToken, c.fx.secrets[".ssh/id_rsa"]), c.act(cmd, c.policyFor(policy.Trusted)))
}

func caseTrustedDenied(c *caseRun) {
	files := map[string]string{
		filepath.Join(c.fx.home, ".env"):                   token("home-env"),
		filepath.Join(c.fx.outside, "private", "key.txt"):  token("private"),
		filepath.Join(c.fx.root, "sub", ".env.production"): token("root-env"),
	}
	var paths, toks []string
	for p, tok := range files {
		c.mustWrite(p, tok+"\n")
		paths = append(paths, p)
		toks = append(toks, tok)
	}
	sib, ts := filepath.Join(c.fx.outside, "public", "key.txt"), token("public")
	c.mustWrite(sib, ts+"\n")
	cmd := c.probeCmd(append([]string{"read", sib}, paths...)...)
	p := c.policyFor(policy.Trusted)
	p.DeniedPaths = []string{".env*", filepath.Join(c.fx.outside, "private")}
	c.isolate(undeniedShown(tokensShown(toks...), sib, ts), c.act(cmd, p), c.twinPolicy("trusted without denied_paths", cmd, c.policyFor(policy.Trusted)))
}

// fileOwner returns the owner of fi, or -1, -1.
func fileOwner(fi os.FileInfo) (uid, gid int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Uid), int64(st.Gid)
	}
	return -1, -1
}
