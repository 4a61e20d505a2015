#!/usr/bin/env bash
# with-env.sh: provision, bring up the test Docker engine and image, run a
# command with the environment that tells tests where things are, and stop
# the engine afterwards (also on failure or interrupt).
#
#   scripts/with-env.sh COMMAND [ARG...]
#
# Environment for COMMAND (when Docker could be provided):
#   DOCKER_HOST          unix:// socket of the private dockerd
#   CORDON_DOCKER_IMAGE  the local test image (busybox, imported, no registry)
#   CORDON_MCP_TS_DIR    where scripts/mcp-ts.sh installed the TypeScript MCP SDK
#   KUBECONFIG, CORDON_KUBE_IMAGE, CORDON_KUBE_NAMESPACE
#                        the private single-node cluster (scripts/kube.sh) and
#                        its test image; PATH starts with the dir of its kubectl
# plus whatever the caller set (CORDON_REQUIRE is passed through).
#
# Knobs: CORDON_PROVISION=0 skips package installation; CORDON_DOCKER=off
# skips Docker, =external uses the caller's DOCKER_HOST engine, =auto (the
# default) starts a private dockerd when root with dockerd installed.
# CORDON_KUBE=off skips the private cluster.
# A dockerd that was already running (make docker-up) is reused and left
# running; one started here is stopped here.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$#" -gt 0 ] || die "usage: scripts/with-env.sh COMMAND [ARG...]"
scripts="$CORDON_ROOT/scripts"
started=
kube_started=

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	if [ -n "$kube_started" ]; then
		"$scripts/kube.sh" down || warn "stopping the private cluster failed; run make kube-down"
	fi
	if [ -n "$started" ]; then
		"$scripts/docker.sh" down || warn "stopping the private dockerd failed; run make docker-down"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

t0="$(now)"
if [ "${CORDON_PROVISION:-1}" != 0 ]; then
	"$scripts/provision.sh" test
fi
t1="$(now)"

docker_mode="${CORDON_DOCKER:-auto}"
if [ "$docker_mode" = off ]; then
	log "docker: skipped: CORDON_DOCKER=off"
elif ! is_linux && [ "$docker_mode" != external ]; then
	log "docker: skipped: no private dockerd on $(uname -s)"
else
	if [ "$docker_mode" = external ] || ! "$scripts/docker.sh" status >/dev/null 2>&1; then
		[ "$docker_mode" = external ] || started=1
	fi
	rc=0
	"$scripts/docker.sh" up || rc=$?
	if [ "$rc" -eq 2 ]; then
		started=
	elif [ "$rc" -ne 0 ]; then
		exit "$rc"
	else
		t2="$(now)"
		rc=0
		"$scripts/docker.sh" image || rc=$?
		[ "$rc" -eq 0 ] || [ "$rc" -eq 2 ] || exit "$rc"
		log "timing: dockerd $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1fs", b - a }'), image + check $(since "$t2")"
		set -a
		# shellcheck source=/dev/null
		. "$BUILD_DIR/docker/env"
		set +a
	fi
	[ "$docker_mode" != external ] || started=
fi
# The private single-node Kubernetes cluster (see kube.sh); one that was
# already running (make kube-up) is reused and left running.
if [ "${CORDON_KUBE:-auto}" = off ]; then
	log "kube: skipped: CORDON_KUBE=off"
else
	"$scripts/kube.sh" status >/dev/null 2>&1 || kube_started=1
	t3="$(now)"
	krc=0
	"$scripts/kube.sh" up || krc=$?
	if [ "$krc" -eq 2 ]; then
		kube_started=
	elif [ "$krc" -ne 0 ]; then
		exit "$krc"
	else
		log "timing: private cluster $(since "$t3")"
		set -a
		# shellcheck source=/dev/null
		. "$BUILD_DIR/kube/env"
		set +a
		# kubectl of the cluster's version (built with it) first on PATH.
		export PATH="$BUILD_DIR/kube/kubectl:$PATH"
	fi
fi
# The TypeScript MCP SDK for cmd/cordon's client test (see mcp-ts.sh).
mrc=0
"$scripts/mcp-ts.sh" || mrc=$?
if [ "$mrc" -eq 0 ]; then
	export CORDON_MCP_TS_DIR="$BUILD_DIR/mcp-ts"
elif [ "$mrc" -ne 2 ]; then
	exit "$mrc"
fi
log "timing: packages $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1fs", b - a }'), provisioning in all $(since "$t0")"
log "env: DOCKER_HOST=${DOCKER_HOST:-} CORDON_DOCKER_IMAGE=${CORDON_DOCKER_IMAGE:-} KUBECONFIG=${KUBECONFIG:-} CORDON_KUBE_IMAGE=${CORDON_KUBE_IMAGE:-} CORDON_KUBE_NAMESPACE=${CORDON_KUBE_NAMESPACE:-} CORDON_REQUIRE=${CORDON_REQUIRE:-}"

rc=0
"$@" || rc=$?
exit "$rc"
