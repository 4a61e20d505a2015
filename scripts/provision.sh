#!/usr/bin/env bash
# provision.sh: install what the tests need, when this machine allows it.
#
#   scripts/provision.sh [test]   bubblewrap, docker.io, busybox-static, util-linux (setpriv),
#                                 strace, dash, nodejs and npm; for the private
#                                 cluster (CORDON_KUBE=off skips it) etcd-server,
#                                 containerd, runc, containernetworking-plugins,
#                                 busybox-static, iproute2 and openssl
#   scripts/provision.sh lint     shellcheck
#
# Packages are installed only when missing and only as root with apt-get
# (Debian, Ubuntu). Elsewhere (non-root, no apt, macOS) nothing is installed
# and the reason is printed; a package that cannot be provisioned is an
# error only when CORDON_REQUIRE names the backend that needs it.
# CORDON_DOCKER=off skips everything Docker needs.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

what="${1:-test}"

# missing_for_test prints "package:backend" for every missing facility.
missing_for_test() {
	have bwrap || echo "bubblewrap:bwrap"
	if [ "${CORDON_DOCKER:-auto}" != off ]; then
		# A host that already has a Docker Engine (docker-ce on a CI runner)
		# keeps it: installing docker.io beside it would conflict.
		have dockerd || echo "docker.io:docker"
		have docker || have dockerd || echo "docker.io:docker"
		static_busybox >/dev/null || echo "busybox-static:docker"
	fi
	have setpriv || echo "util-linux:unprivileged"
	# The command gate's execution oracle (policy/internal/gateoracle)
	# runs commands under these shells, traced, inside bwrap.
	have strace || echo "strace:bwrap"
	have dash || echo "dash:bwrap"
	have busybox || static_busybox >/dev/null || echo "busybox-static:bwrap"
	# cmd/cordon's TypeScript MCP client test (scripts/mcp-ts.sh installs
	# the SDK with npm); it runs against the landlock backend. npm is
	# asked for only when missing: some node builds ship it inside nodejs.
	have node || echo "nodejs:landlock"
	have npm || echo "npm:landlock"
	# workspace's scripted agent session (TestPromptCount) and violation
	# report (TestViolationReport) run ordinary tools in the sandboxes.
	have git || echo "git:landlock"
	have make || echo "make:landlock"
	have file || echo "file:landlock"
	[ -x /usr/bin/python3 ] || echo "python3:landlock"
	# The private single-node cluster (scripts/kube.sh): etcd,
	# containerd's CRI plugin, runc, the CNI plugins, openssl (kubectl is
	# built with Kubernetes: Debian has none of a supported version skew).
	if [ "${CORDON_KUBE:-auto}" != off ]; then
		have etcd || echo "etcd-server:kubernetes"
		have containerd || echo "containerd:kubernetes"
		have runc || echo "runc:kubernetes"
		[ -x /usr/lib/cni/bridge ] || echo "containernetworking-plugins:kubernetes"
		have openssl || echo "openssl:kubernetes"
		static_busybox >/dev/null || echo "busybox-static:kubernetes"
		{ have ip && have ss; } || echo "iproute2:kubernetes"
	fi
}

case "$what" in
test)
	if ! is_linux; then
		log "provision: nothing to install on $(uname -s) (the Linux backends do not apply here)"
		exit 0
	fi
	missing="$(missing_for_test | sort -u)"
	if [ -z "$missing" ]; then
		log "provision: bubblewrap, dockerd, static busybox, setpriv, strace, dash, node, git, make, file, python3 and the cluster's etcd, containerd, runc, CNI plugins and openssl are present"
		exit 0
	fi
	pkgs="$(printf '%s\n' "$missing" | cut -d: -f1 | sort -u | tr '\n' ' ')"
	if ! can_apt; then
		for m in $missing; do
			backend="${m#*:}"
			if required "$backend"; then
				die "provision: $backend needs package ${m%%:*}, which cannot be installed here: $(why_no_apt)"
			fi
		done
		log "provision: skipped installing $pkgs: $(why_no_apt); tests needing them will skip"
		exit 0
	fi
	start="$(now)"
	# shellcheck disable=SC2086 # word splitting of the package list is intended
	if ! apt_install $pkgs; then
		for m in $missing; do
			if required "${m#*:}"; then
				die "provision: apt-get install $pkgs failed and CORDON_REQUIRE names ${m#*:}"
			fi
		done
		warn "provision: apt-get install $pkgs failed; tests needing them will skip"
		exit 0
	fi
	log "provision: installed $pkgs in $(since "$start")"
	;;
lint)
	if have shellcheck; then
		exit 0
	fi
	if can_apt; then
		apt_install shellcheck || warn "provision: could not install shellcheck; shell scripts are not checked"
	else
		log "provision: shellcheck not installed ($(why_no_apt)); shell scripts are not checked"
	fi
	;;
*)
	die "provision: unknown target \"$what\" (want test or lint)"
	;;
esac
