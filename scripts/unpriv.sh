#!/usr/bin/env bash
# unpriv.sh: the second test run, as an unprivileged user.
#
# Kernel-facing backends must work for ordinary users, not only for root
# (bwrap without CAP_SYS_ADMIN needs unprivileged user namespaces; Landlock
# needs nothing). As root, this compiles each package of UNPRIV_PKGS with
# `go test -c` and runs the test binary, in the package directory, under
#
#   setpriv --reuid=$UNPRIV_UID --regid=$UNPRIV_GID --clear-groups -- env -i ...
#
# with its own HOME and TMPDIR, no capabilities, and this environment:
#   CORDON_UNPRIVILEGED=1                 (internal/testenv.Unprivileged)
#   CORDON_REQUIRE=<the caller's, minus docker and kubernetes>  (no Docker socket
#                   or cluster credentials as uid 65534)
#   HOME, TMPDIR, GOCACHE, PATH, USER, LOGNAME
#
# Knobs: UNPRIV_PKGS (default ./executor/bwrap/ ./executor/landlock/;
# packages that do not exist yet are skipped), UNPRIV_UID / UNPRIV_GID
# (default 65534), UNPRIV_TESTFLAGS (extra test binary flags, e.g. -test.v),
# UNPRIV_TIMEOUT (default 10m), MODULE_DIR (default the cordon checkout),
# UNPRIV_CGO (CGO_ENABLED for these test binaries, default 0, so that the
# landlock helper's pure-Go path is tested here and its C path in the
# first run).
# Elsewhere (not root, not Linux, no setpriv) it prints why it skips and
# exits 0 — unless CORDON_REQUIRE names a backend and we are root on Linux
# without setpriv, which is an error.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

pkgs="${UNPRIV_PKGS-./executor/bwrap/ ./executor/landlock/}"
uid="${UNPRIV_UID:-65534}"
gid="${UNPRIV_GID:-65534}"
timeout="${UNPRIV_TIMEOUT:-10m}"
mod="${MODULE_DIR:-$CORDON_ROOT}"

if ! is_linux; then
	log "unprivileged run: skipped: not Linux ($(uname -s))"
	exit 0
fi
if ! is_root; then
	log "unprivileged run: skipped: needs root to switch to uid $uid (this is uid $(id -u), already unprivileged)"
	exit 0
fi
if ! have setpriv; then
	if [ -n "${CORDON_REQUIRE:-}" ]; then
		die "unprivileged run: setpriv (util-linux) is not installed"
	fi
	log "unprivileged run: skipped: setpriv (util-linux) is not installed"
	exit 0
fi

# The caller's CORDON_REQUIRE without docker and kubernetes: uid $uid
# cannot reach the root-owned Docker socket or read the private
# cluster's admin credentials, so their tests skip in this run.
require=
for item in $(printf '%s' "${CORDON_REQUIRE:-}" | tr ',' ' '); do
	case "$(printf '%s' "$item" | tr '[:upper:]' '[:lower:]')" in
	docker | kubernetes) ;;
	*) require="${require:+$require,}$item" ;;
	esac
done

work="$(mktemp -d /tmp/cordon-unpriv.XXXXXX)"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir -p "$work/bin" "$work/home" "$work/tmp"
chown "$uid:$gid" "$work/home" "$work/tmp"
chmod 700 "$work/home" "$work/tmp"
user="$(getent passwd "$uid" 2>/dev/null | cut -d: -f1 || true)"
user="${user:-nobody}"

as_user() {
	setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
		env -i \
		PATH="$PATH" HOME="$work/home" TMPDIR="$work/tmp" GOCACHE="$work/home/.cache/go-build" \
		USER="$user" LOGNAME="$user" \
		CORDON_UNPRIVILEGED=1 CORDON_REQUIRE="$require" \
		"$@"
}

# The test binary runs in its package directory (tests read testdata/
# relative to it). If uid $uid cannot reach the checkout (a clone under
# /root, say), run from a world-readable copy of the module instead.
src="$mod"
copied=
rundir_for() {
	local dir="$1" rel
	if [ -z "$copied" ] && ! as_user test -r "$dir" -a -x "$dir"; then
		log "unprivileged run: uid $uid cannot read $dir; copying the module to $work/src"
		mkdir -p "$work/src"
		tar -C "$mod" --exclude=./.git --exclude=./build -cf - . | tar -C "$work/src" -xf -
		chmod -R a+rX "$work/src"
		src="$work/src"
		copied=1
	fi
	rel="${dir#"$mod"}"
	printf '%s%s\n' "$src" "$rel"
}

fail=0
ran=0
for pkg in $pkgs; do
	if ! dir="$(go_list_dir "$pkg")"; then
		printf 'skip\t%s\t[package does not exist yet]\n' "$pkg"
		continue
	fi
	ip="$(cd "$mod" && "$GO" list -f '{{.ImportPath}}' "$pkg")"
	bin="$work/bin/$(printf '%s' "$ip" | tr '/.' '__').test"
	# CGO_ENABLED=0: the first run (cgo) covers the landlock helper's C
	# constructor; this one covers its pure-Go path (Init).
	if ! (cd "$mod" && CGO_ENABLED="${UNPRIV_CGO:-0}" "$GO" test -c -o "$bin" "$pkg" >/dev/null); then
		printf 'FAIL\t%s [build failed]\n' "$ip"
		fail=1
		continue
	fi
	if [ ! -e "$bin" ]; then
		printf '?   \t%s\t[no test files]\n' "$ip"
		continue
	fi
	chmod 755 "$bin"
	rundir="$(rundir_for "$dir")"
	start="$(now)"
	rc=0
	# shellcheck disable=SC2086 # UNPRIV_TESTFLAGS is a list of flags
	(cd "$rundir" && as_user "$bin" -test.count=1 -test.timeout="$timeout" ${UNPRIV_TESTFLAGS:-}) || rc=$?
	ran=$((ran + 1))
	if [ "$rc" -eq 0 ]; then
		printf 'ok  \t%s\t%s\t(unprivileged, uid %s)\n' "$ip" "$(since "$start")" "$uid"
	else
		printf 'FAIL\t%s\t%s\t(unprivileged, uid %s, exit %s)\n' "$ip" "$(since "$start")" "$uid" "$rc"
		fail=1
	fi
done
log "unprivileged run: $ran package(s) run as uid $uid (CORDON_REQUIRE=$require)"
exit "$fail"
