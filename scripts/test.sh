#!/usr/bin/env bash
# test.sh: `go test` over the packages, then the unprivileged second run.
# Run it through scripts/with-env.sh so DOCKER_HOST and CORDON_DOCKER_IMAGE
# are set (make test does). Knobs: PKGS (default ./...), TESTFLAGS (extra
# go test flags, e.g. -run X -v), UNPRIV=0 skips the second run; see
# scripts/unpriv.sh for its own. RERUN=0 turns off the rerun below.
# TEST_TIMEOUT (default 30m) is each package's go test timeout: the docker
# package's conformance runs take ~8 minutes on a busy 2-core machine,
# close to go test's default of 10.
#
# A top-level test that fails is run once more, alone (go test -count=1
# -run '^(Name|...)$' in its package). If it passes then, the run still
# passes, but every such test is printed as "FLAKY: pkg TestName" and
# listed in $BUILD_DIR/flaky.txt: a flaky test is a bug to fix, and this
# only keeps one timing flake from throwing away a whole run. A package
# that failed without naming a failed test (a build error, a panic that
# killed the binary, a timeout) is not rerun: it fails.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

mkdir -p "$BUILD_DIR"
out="$BUILD_DIR/test.out"
uout="$BUILD_DIR/unpriv.out"
: >"$uout"
flaky="$BUILD_DIR/flaky.txt"
: >"$flaky"

rc=0
start="$(now)"
# shellcheck disable=SC2086 # PKGS is a word list
log "go test: $("$GO" list ${PKGS:-./...} | wc -l) packages, each printed with ok or FAIL as it ends"
# shellcheck disable=SC2086 # PKGS and TESTFLAGS are word lists
"$GO" test -count=1 -timeout "${TEST_TIMEOUT:-30m}" ${TESTFLAGS:-} ${PKGS:-./...} 2>&1 | tee "$out" || rc=$?
log "go test: exit $rc in $(since "$start")"

if [ "$rc" -ne 0 ] && [ "${RERUN:-1}" != 0 ]; then
	# failed.txt: "pkg TestName" per failed top-level test (its "--- FAIL"
	# line is not indented; subtests' are), attributed to the package whose
	# "FAIL\tpkg" line follows it; bad.txt: packages that failed naming none.
	awk '
		/^--- FAIL: / { pending[++n] = $3; next }
		/^FAIL\t/ {
			pkg = $2
			if (n == 0) { print pkg > "/dev/stderr" }
			for (i = 1; i <= n; i++) print pkg, pending[i]
			n = 0
		}
	' "$out" >"$BUILD_DIR/failed.txt" 2>"$BUILD_DIR/bad.txt"
	if [ -s "$BUILD_DIR/bad.txt" ]; then
		log "not rerun (failed without naming a test): $(tr '\n' ' ' <"$BUILD_DIR/bad.txt")"
	elif [ -s "$BUILD_DIR/failed.txt" ]; then
		rc=0
		while read -r pkg; do
			names="$(awk -v p="$pkg" '$1 == p { print $2 }' "$BUILD_DIR/failed.txt" | sort -u | paste -sd'|' -)"
			log "rerun once: $pkg -run '^($names)\$'"
			# shellcheck disable=SC2086 # TESTFLAGS is a word list
			if "$GO" test -count=1 -timeout "${TEST_TIMEOUT:-30m}" ${TESTFLAGS:-} -run "^($names)\$" "$pkg" </dev/null; then
				for name in ${names//|/ }; do
					printf 'FLAKY: %s %s (failed, then passed when run again alone)\n' "$pkg" "$name" | tee -a "$flaky" >&2
				done
			else
				log "FAILED again on rerun: $pkg $names"
				rc=1
			fi
		done < <(cut -d' ' -f1 "$BUILD_DIR/failed.txt" | sort -u)
	fi
fi

if [ "${UNPRIV:-1}" != 0 ]; then
	# Their output is kept too (unpriv.out), for the summary's names.
	set +e
	"$CORDON_ROOT/scripts/unpriv.sh" 2>&1 | tee "$uout"
	urc=${PIPESTATUS[0]}
	[ "$urc" -eq 0 ] || rc="$urc"
	# The landlock executor's C start path again as uid 65534: its user
	# namespace (the read-only mounts for a non-root caller) runs only there.
	UNPRIV_CGO=1 UNPRIV_PKGS=./executor/landlock/ "$CORDON_ROOT/scripts/unpriv.sh" 2>&1 | tee -a "$uout"
	urc=${PIPESTATUS[0]}
	[ "$urc" -eq 0 ] || rc="$urc"
	set -e
fi
if [ -s "$flaky" ]; then
	log "flaky tests (passed only when run again; fix them):"
	sed 's/^/[cordon]   /' "$flaky" >&2
fi
# The summary: one line, naming every test that failed (and stayed failed).
if [ "$rc" -ne 0 ]; then
	failed="$(grep -h '^--- FAIL: ' "$out" 2>/dev/null | awk '{print $3}' | sort -u | paste -sd' ' - || true)"
	ufailed="$(grep -h '^--- FAIL: ' "$uout" 2>/dev/null | awk '{print $3}' | sort -u | paste -sd' ' - || true)"
	[ -z "$ufailed" ] || failed="${failed:+$failed; }as uid 65534: $ufailed"
	log "FAILED (exit $rc): ${failed:-no test named: a build error, a panic or a timeout; see above}"
else
	log "passed: no test failed"
fi
exit "$rc"
