#!/usr/bin/env bash
# docker.sh: a private Docker Engine and a local test image, for cordon's tests.
#
#   scripts/docker.sh up      start a private dockerd (or reuse the running one)
#   scripts/docker.sh image   build the test image from a static busybox, no registry
#   scripts/docker.sh check   run a container in the image (network none), print its timing
#   scripts/docker.sh down    stop the daemon, its containerd and shims; unmount; clean up
#   scripts/docker.sh status  say whether the daemon runs; print its env file
#   scripts/docker.sh env     print the env file (DOCKER_HOST=..., CORDON_DOCKER_IMAGE=...)
#
# The daemon is private: its own socket, data root, exec root and pid file,
# and a config file of its own (/etc/docker/daemon.json is ignored), so it
# never touches a system Docker. Layout:
#
#   $BUILD_DIR/docker/docker.sock     API socket (if its path fits in a sun_path; else $EXEC_ROOT/docker.sock)
#   $BUILD_DIR/docker/data/           --data-root (images survive between runs)
#   $BUILD_DIR/docker/dockerd.pid     --pidfile
#   $BUILD_DIR/docker/dockerd.log     daemon log
#   $BUILD_DIR/docker/daemon.json     --config-file ({})
#   $BUILD_DIR/docker/storage-driver  the driver that worked (overlay2, else vfs)
#   $BUILD_DIR/docker/env             DOCKER_HOST and CORDON_DOCKER_IMAGE, for tests
#   /run/cordon-HASH/                 --exec-root (short: dockerd puts unix sockets
#                                     of up to 81 more bytes below it), HASH from $BUILD_DIR
#   $BUILD_DIR/image/rootfs{,.tar}    the test image's root filesystem
#
# The daemon runs with --iptables=false --ip6tables=false --ip-masq=false
# --ip-forward=false --bridge=none: cordon only uses network modes none and
# host, and the host's firewall and sysctls are left alone.
#
# Exit status of "up" and "image": 0 ready, 2 skipped (not possible here and
# CORDON_REQUIRE does not name docker; the reason is printed), 1 error.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

STATE="$BUILD_DIR/docker"
DATA_ROOT="$STATE/data"
PIDFILE="$STATE/dockerd.pid"
LOGFILE="$STATE/dockerd.log"
CONFIG="$STATE/daemon.json"
ENVFILE="$STATE/env"
DRIVERFILE="$STATE/storage-driver"
HASH="$(short_hash "$BUILD_DIR")"
NAMESPACE="cordon-$HASH"
IMAGE_REPO="cordon-test/busybox"
START_TIMEOUT="${DOCKER_START_TIMEOUT:-60}"
STOP_TIMEOUT="${DOCKER_STOP_TIMEOUT:-40}"

# The exec root must be short: libnetwork creates
# EXEC_ROOT/libnetwork/<64 hex>.sock, and a unix socket path has at most 107
# bytes, so EXEC_ROOT may have at most 26.
if [ -d /run ] && [ -w /run ]; then
	EXEC_ROOT="/run/cordon-$HASH"
else
	EXEC_ROOT="/tmp/cordon-$HASH"
fi
SOCK="$STATE/docker.sock"
if [ "${#SOCK}" -gt 100 ]; then
	SOCK="$EXEC_ROOT/docker.sock"
fi
# CORDON_DOCKER=external: use the engine the caller's DOCKER_HOST (or the
# docker CLI's default) names instead of a private one; "up" only checks
# that it answers and "down" leaves it alone.
EXTERNAL=
if [ "${CORDON_DOCKER:-auto}" = external ]; then
	EXTERNAL=1
	DOCKER_HOST="${DOCKER_HOST:-}"
else
	DOCKER_HOST="unix://$SOCK"
fi
export DOCKER_HOST

# skip_or_fail ends "up"/"image" when Docker cannot be provided here: a
# failure if CORDON_REQUIRE names docker, otherwise a stated skip (exit 2).
skip_or_fail() {
	if required docker; then
		die "docker: $* (CORDON_REQUIRE names docker)"
	fi
	log "docker: skipped: $*"
	exit 2
}

# cli runs the docker CLI against the private daemon.
cli() {
	if [ -n "$DOCKER_HOST" ]; then
		docker --host "$DOCKER_HOST" "$@"
	else
		docker "$@"
	fi
}

# engine_name names the engine in messages.
engine_name() {
	if [ -n "$DOCKER_HOST" ]; then
		printf '%s\n' "$DOCKER_HOST"
	else
		echo "the docker CLI's default"
	fi
}

# daemon_pid prints the pid of this build dir's dockerd if it runs.
daemon_pid() {
	local pid
	[ -r "$PIDFILE" ] || return 1
	pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline" | grep -qxF "$DATA_ROOT" || return 1
	printf '%s\n' "$pid"
}

# responding reports whether the private daemon answers API calls.
responding() { cli version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# write_env records where tests find the daemon (and the image, once built).
write_env() {
	local image="${1:-}"
	{
		if [ -n "$DOCKER_HOST" ]; then printf 'DOCKER_HOST=%s\n' "$DOCKER_HOST"; fi
		if [ -n "$image" ]; then
			printf 'CORDON_DOCKER_IMAGE=%s\n' "$image"
		elif [ -r "$ENVFILE" ]; then
			grep '^CORDON_DOCKER_IMAGE=' "$ENVFILE" || true
		fi
	} >"$ENVFILE.tmp"
	mv "$ENVFILE.tmp" "$ENVFILE"
}

# our_pids prints the pids of processes that belong to this private engine
# (dockerd, its managed containerd, containerd shims): those whose command
# line names our data root, exec root or containerd namespace.
our_pids() {
	local d pid
	for d in /proc/[0-9]*; do
		pid="${d#/proc/}"
		[ "$pid" != "$$" ] || continue
		if tr '\0' '\n' 2>/dev/null <"$d/cmdline" | awk -v d="$DATA_ROOT" -v e="$EXEC_ROOT" -v n="$NAMESPACE" '
			$0 == d || index($0, d "/") == 1 || $0 == e || index($0, e "/") == 1 ||
			$0 == n || $0 == n "-plugins" { found = 1 }
			END { exit !found }'; then
			printf '%s\n' "$pid"
		fi
	done
}

# stop_daemon stops dockerd (TERM, then KILL), then any leftover process of
# ours, then unmounts whatever it left mounted under the data or exec root.
stop_daemon() {
	local pid rest mnts m
	if pid="$(daemon_pid)"; then
		log "docker: stopping dockerd (pid $pid)"
		kill -TERM "$pid" 2>/dev/null || true
		if ! wait_gone "$pid" "$STOP_TIMEOUT"; then
			warn "docker: dockerd did not stop within ${STOP_TIMEOUT}s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
			wait_gone "$pid" 5 || true
		fi
	fi
	rest="$(our_pids | tr '\n' ' ')"
	if [ -n "${rest// /}" ]; then
		log "docker: stopping leftover processes: $rest"
		# shellcheck disable=SC2086 # one pid per word
		kill -TERM $rest 2>/dev/null || true
		if ! wait_gone "$rest" 10; then
			# shellcheck disable=SC2086
			kill -KILL $rest 2>/dev/null || true
			wait_gone "$rest" 5 || true
		fi
	fi
	if [ -r /proc/self/mountinfo ]; then
		mnts="$(awk -v a="$DATA_ROOT/" -v b="$EXEC_ROOT" \
			'index($5, a) == 1 || $5 == b || index($5, b "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)"
		for m in $mnts; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || warn "docker: could not unmount $m"
		done
	fi
	rm -rf "$EXEC_ROOT"
	rm -f "$PIDFILE" "$ENVFILE"
	[ "$SOCK" = "$EXEC_ROOT/docker.sock" ] || rm -f "$SOCK"
}

# start_daemon starts dockerd with storage driver $1 and waits until it
# answers; on failure it stops what it started and returns 1.
start_daemon() {
	local driver="$1" pid deadline
	mkdir -p "$STATE" "$DATA_ROOT"
	[ -e "$CONFIG" ] || printf '{}\n' >"$CONFIG"
	rm -f "$PIDFILE" "$SOCK"
	printf '\n==== %s: starting dockerd (storage driver %s)\n' "$(date -u +%FT%TZ)" "$driver" >>"$LOGFILE"
	setsid dockerd \
		--host "$DOCKER_HOST" \
		--data-root "$DATA_ROOT" \
		--exec-root "$EXEC_ROOT" \
		--pidfile "$PIDFILE" \
		--config-file "$CONFIG" \
		--containerd-namespace "$NAMESPACE" \
		--containerd-plugins-namespace "$NAMESPACE-plugins" \
		--storage-driver "$driver" \
		--iptables=false --ip6tables=false --ip-masq=false --ip-forward=false \
		--bridge=none --userland-proxy=false \
		--log-level "${DOCKERD_LOG_LEVEL:-warn}" \
		</dev/null >>"$LOGFILE" 2>&1 &
	pid=$!
	deadline=$(($(date +%s) + START_TIMEOUT))
	while :; do
		if responding; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			warn "docker: dockerd exited during start with storage driver $driver; log: $LOGFILE"
			tail -n 5 "$LOGFILE" | sed 's/^/    /' >&2
			stop_daemon
			return 1
		fi
		if [ "$(date +%s)" -ge "$deadline" ]; then
			warn "docker: dockerd did not answer on $SOCK within ${START_TIMEOUT}s; log: $LOGFILE"
			tail -n 5 "$LOGFILE" | sed 's/^/    /' >&2
			stop_daemon
			return 1
		fi
		sleep 0.2
	done
}

cmd_up() {
	local start drivers d pid
	mkdir -p "$STATE"
	if [ -n "$EXTERNAL" ]; then
		have docker || skip_or_fail "CORDON_DOCKER=external but the docker CLI is not installed"
		responding || skip_or_fail "CORDON_DOCKER=external but the engine at $(engine_name) does not answer"
		log "docker: using the external engine at $(engine_name)"
		write_env
		return 0
	fi
	is_linux || skip_or_fail "a private dockerd needs Linux (this is $(uname -s))"
	if pid="$(daemon_pid)" && responding; then
		log "docker: reusing the private dockerd (pid $pid) on $SOCK"
		write_env
		return 0
	fi
	is_root || skip_or_fail "a private dockerd needs root (uid $(id -u)); run as root, or set DOCKER_HOST and CORDON_DOCKER=external to use an engine you have"
	have dockerd || skip_or_fail "dockerd is not installed (apt-get install docker.io as root)"
	have docker || skip_or_fail "the docker CLI is not installed (apt-get install docker.io as root)"
	stop_daemon # a stale pid file, socket, exec root or mount from a killed run
	start="$(now)"
	drivers="overlay2 vfs"
	if [ -r "$DRIVERFILE" ]; then
		drivers="$(cat "$DRIVERFILE") $drivers"
	fi
	for d in $drivers; do
		if start_daemon "$d"; then
			printf '%s\n' "$d" >"$DRIVERFILE"
			write_env
			log "docker: private dockerd $(cli version --format '{{.Server.Version}}') up on $SOCK (storage $d, exec root $EXEC_ROOT) in $(since "$start")"
			return 0
		fi
	done
	skip_or_fail "dockerd did not start with any storage driver ($drivers); see $LOGFILE"
}

# build_rootfs makes $BUILD_DIR/image/rootfs.tar from a static busybox:
# /bin/busybox with its applet links, /etc/passwd and /etc/group with root
# and nobody, a sticky /tmp. The tar is reproducible (sorted, mtime 0,
# numeric root ownership), so its digest names the image.
build_rootfs() {
	local bb="$1" dir="$BUILD_DIR/image"
	busybox_rootfs "$dir/rootfs" "$bb"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		-C "$dir/rootfs" -cf "$dir/rootfs.tar.tmp" .
	mv "$dir/rootfs.tar.tmp" "$dir/rootfs.tar"
}

cmd_image() {
	local bb start sum ref
	responding || skip_or_fail "the private dockerd is not running (scripts/docker.sh up)"
	bb="$(static_busybox)" || skip_or_fail "no statically linked busybox (apt-get install busybox-static as root)"
	start="$(now)"
	build_rootfs "$bb"
	sum="$(sha256sum "$BUILD_DIR/image/rootfs.tar" | cut -c1-12)"
	ref="$IMAGE_REPO:$sum"
	if cli image inspect "$ref" >/dev/null 2>&1; then
		log "docker: test image $ref already present (rootfs built in $(since "$start"))"
	else
		cli import \
			--change 'CMD ["/bin/sh"]' \
			--change 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
			"$BUILD_DIR/image/rootfs.tar" "$ref" >/dev/null
		log "docker: imported test image $ref from $bb in $(since "$start")"
	fi
	write_env "$ref"
	cmd_check
}

cmd_check() {
	local ref start out
	ref="$(sed -n 's/^CORDON_DOCKER_IMAGE=//p' "$ENVFILE" 2>/dev/null)"
	[ -n "$ref" ] || die "docker: no test image recorded in $ENVFILE (scripts/docker.sh image)"
	start="$(now)"
	if ! out="$(cli run --rm --network none "$ref" /bin/sh -c 'echo ok' 2>&1)" || [ "$out" != ok ]; then
		printf '%s\n' "$out" | sed 's/^/    /' >&2
		if required docker; then
			die "docker: a container in $ref did not run (see above; daemon log $LOGFILE)"
		fi
		warn "docker: a container in $ref did not run; docker tests will fail or skip"
		exit 2
	fi
	log "docker: docker run --rm --network none $ref /bin/sh -c 'echo ok' -> ok in $(since "$start")"
}

cmd_status() {
	local pid
	if [ -n "$EXTERNAL" ] && responding; then
		log "docker: external engine at $(engine_name) answers"
		cat "$ENVFILE" 2>/dev/null || true
	elif pid="$(daemon_pid)" && responding; then
		log "docker: private dockerd running (pid $pid) on $SOCK"
		cat "$ENVFILE" 2>/dev/null || true
	else
		log "docker: private dockerd not running (socket would be $SOCK)"
		return 1
	fi
}

case "${1:-}" in
up) cmd_up ;;
image) cmd_image ;;
check) cmd_check ;;
down)
	if [ -n "$EXTERNAL" ]; then
		log "docker: CORDON_DOCKER=external: the engine is not ours to stop"
	elif is_linux; then
		stop_daemon
		left="$(our_pids | tr '\n' ' ')"
		[ -z "${left// /}" ] || die "docker: processes of the private engine survived: $left"
		log "docker: private dockerd stopped; no process of it is left"
	fi
	;;
status) cmd_status ;;
env) cat "$ENVFILE" ;;
*) die "usage: scripts/docker.sh up|image|check|down|status|env" ;;
esac
