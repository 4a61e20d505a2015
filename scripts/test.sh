#!/usr/bin/env bash
# test.sh: `go test` over the packages, then the unprivileged second run.
# Run it through scripts/with-env.sh so DOCKER_HOST and CORDON_DOCKER_IMAGE
# are set (make test does). Knobs: PKGS (default ./...), TESTFLAGS (extra
# go test flags, e.g. -run X -v), UNPRIV=0 skips the second run; see
# scripts/unpriv.sh for its own.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

rc=0
start="$(now)"
# shellcheck disable=SC2086 # PKGS and TESTFLAGS are word lists
"$GO" test -count=1 ${TESTFLAGS:-} ${PKGS:-./...} || rc=$?
log "go test: exit $rc in $(since "$start")"

if [ "${UNPRIV:-1}" != 0 ]; then
	urc=0
	"$CORDON_ROOT/scripts/unpriv.sh" || urc=$?
	[ "$urc" -eq 0 ] || rc="$urc"
fi
exit "$rc"
