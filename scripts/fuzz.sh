#!/usr/bin/env bash
# fuzz.sh: run every fuzz target for a bounded time.
#
# Targets are discovered with `go test -list 'Fuzz.*'` over FUZZ_PKGS
# (default ./...), so new ones are picked up; each runs alone (go test
# -fuzz takes one target in one package) for FUZZTIME (default 20s).
# FUZZ selects targets by regexp (default: all). A crasher is written to the
# package's testdata/fuzz/ and fails the run.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

fuzztime="${FUZZTIME:-20s}"
filter="${FUZZ:-.}"
list="$BUILD_DIR/fuzz-targets.txt"

# `go test -list` prints the matching names of a package, then its "ok" line.
# shellcheck disable=SC2086 # FUZZ_PKGS is a word list
"$GO" test -list '^Fuzz' ${FUZZ_PKGS:-./...} |
	awk '/^Fuzz/ { names[n++] = $1; next }
	     /^ok / { for (i = 0; i < n; i++) print $2, names[i]; n = 0 }' |
	grep -E " ($filter)" >"$list" || true

count="$(wc -l <"$list" | tr -d ' ')"
if [ "$count" -eq 0 ]; then
	log "fuzz: no fuzz targets found in ${FUZZ_PKGS:-./...}"
	exit 0
fi
log "fuzz: $count target(s), $fuzztime each"
fail=0
while read -r pkg name; do
	log "fuzz: $name in $pkg"
	if ! "$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" "$pkg" </dev/null; then
		printf 'FAIL\t%s\t%s\n' "$pkg" "$name"
		fail=1
	fi
done <"$list"
exit "$fail"
