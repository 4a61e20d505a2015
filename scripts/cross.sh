#!/usr/bin/env bash
# cross.sh: build every package, and sandbox-probe when it exists, for every
# target platform with CGO_ENABLED=0; also `go vet` per platform so test
# files behind build tags (darwin-only, windows-only) are type-checked.
#
# Knobs: CROSS_TARGETS (default linux/amd64 linux/arm64 darwin/amd64
# darwin/arm64 windows/amd64), CROSS_PKGS (default ./...), CROSS_VET=0 skips
# the per-platform vet.
# Binaries: $BUILD_DIR/cross/sandbox-probe-GOOS-GOARCH[.exe].
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

targets="${CROSS_TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64}"
read -r -a pkgs <<<"${CROSS_PKGS:-./...}"
fail=0
for t in $targets; do
	os="${t%/*}"
	arch="${t#*/}"
	start="$(now)"
	rc=0
	# -trimpath here too, so that sandbox-probe's build below finds every
	# package in the build cache (client-go and the Kubernetes API types
	# take minutes to compile per platform).
	GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 "$GO" build -trimpath "${pkgs[@]}" || rc=$?
	if [ "$rc" -eq 0 ] && [ -d cmd/sandbox-probe ]; then
		ext=
		[ "$os" != windows ] || ext=.exe
		GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 "$GO" build -trimpath \
			-o "$BUILD_DIR/cross/sandbox-probe-$os-$arch$ext" ./cmd/sandbox-probe || rc=$?
	fi
	if [ "$rc" -eq 0 ] && [ "${CROSS_VET:-1}" != 0 ]; then
		GOOS="$os" GOARCH="$arch" CGO_ENABLED=0 "$GO" vet "${pkgs[@]}" || rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		printf 'ok  \t%s\t%s\n' "$t" "$(since "$start")"
	else
		printf 'FAIL\t%s\n' "$t"
		fail=1
	fi
done
[ -d cmd/sandbox-probe ] || log "cross: cmd/sandbox-probe does not exist yet; built the packages only"
exit "$fail"
