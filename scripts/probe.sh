#!/usr/bin/env bash
# probe.sh: build sandbox-probe (CGO_ENABLED=0) into $BUILD_DIR/bin and run
# it with the same provisioning as the tests (scripts/with-env.sh), so a
# fresh Debian machine, as root, sees every Linux backend.
#
# Knobs: PROBE_ARGS (arguments, e.g. "--json" or "detect"), PROBE_OUT (a
# file for its standard output, e.g. build/sandbox-probe.json).
# Until cmd/sandbox-probe exists this says so and exits 0.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

if [ ! -d cmd/sandbox-probe ]; then
	log "probe: cmd/sandbox-probe does not exist yet; nothing to build or run"
	if [ -n "${PROBE_OUT:-}" ]; then
		printf '{"error": "cmd/sandbox-probe does not exist yet"}\n' >"$PROBE_OUT"
	fi
	exit 0
fi
bin="$BUILD_DIR/bin/sandbox-probe"
CGO_ENABLED=0 "$GO" build -o "$bin" ./cmd/sandbox-probe
log "probe: built $bin"
if [ -n "${PROBE_OUT:-}" ]; then
	# shellcheck disable=SC2086 # PROBE_ARGS is a word list
	exec "$CORDON_ROOT/scripts/with-env.sh" "$bin" ${PROBE_ARGS:-} >"$PROBE_OUT"
fi
# shellcheck disable=SC2086
exec "$CORDON_ROOT/scripts/with-env.sh" "$bin" ${PROBE_ARGS:-}
