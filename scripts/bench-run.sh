#!/usr/bin/env bash
# bench-run.sh: the cost of one `sandbox-probe run -- true` invocation per
# backend against a bare `sh -c true`, interleaved round-robin in one run,
# medians of N rounds (default 9). Usage: scripts/bench-run.sh [BIN] [N]
# BIN defaults to build/bin/sandbox-probe (make probe builds it).
# BACKENDS (default "local landlock bwrap") chooses the backends.
set -euo pipefail
bin="${1:-build/bin/sandbox-probe}"
rounds="${2:-9}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
names=("sh -c true")
cmds=("sh -c true")
for b in ${BACKENDS:-local landlock bwrap}; do
	names+=("run --backend $b -- true")
	cmds+=("$bin run --backend $b --root $root --no-default-policies --yes -- true")
done
declare -A samples
for ((r = 0; r < rounds; r++)); do
	for i in "${!cmds[@]}"; do
		start=$(date +%s%N)
		# shellcheck disable=SC2086 # each entry is a word list
		${cmds[$i]} </dev/null >/dev/null 2>&1
		samples[$i]+="$(($(date +%s%N) - start)) "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=$(echo "${samples[0]}" | median)
for i in "${!cmds[@]}"; do
	m=$(echo "${samples[$i]}" | median)
	awk -v n="${names[$i]}" -v m="$m" -v b="$base" 'BEGIN { printf "%-30s %8.1f ms %8.1fx\n", n, m / 1e6, m / b }'
done
