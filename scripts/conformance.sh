#!/usr/bin/env bash
# conformance.sh: run the conformance tests (TestConformance*, the tests that
# call conformance.Run) of every backend package present, with the test
# environment (run it through scripts/with-env.sh; make conformance does).
# Knobs: CONFORMANCE_PKGS, CONFORMANCE_RUN (test name regexp), TESTFLAGS.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

present=
for p in ${CONFORMANCE_PKGS:-./executor/landlock/ ./executor/bwrap/ ./executor/docker/ ./executor/seatbelt/ ./conformance/}; do
	if go_list_dir "$p" >/dev/null; then
		present="$present $p"
	else
		printf 'skip\t%s\t[package does not exist yet]\n' "$p"
	fi
done
if [ -z "$present" ]; then
	log "conformance: no backend package exists yet"
	exit 0
fi
# shellcheck disable=SC2086 # word lists
exec "$GO" test -count=1 -run "${CONFORMANCE_RUN:-Conformance|RunLocal|CheckCatches|CheckNoop|CheckRefuser|CheckScratch|MiniBwrap}" ${TESTFLAGS:-} $present
