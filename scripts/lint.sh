#!/usr/bin/env bash
# lint.sh: gofmt, go vet, actionlint (pinned, built into $BUILD_DIR/bin) on
# .github/workflows, and shellcheck on the scripts when it is installed
# (scripts/provision.sh lint installs it as root with apt). actionlint also
# runs shellcheck on the workflows' run: blocks when shellcheck is on PATH.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$CORDON_ROOT"

version="${ACTIONLINT_VERSION:-v1.7.12}"
fail=0
"$CORDON_ROOT/scripts/provision.sh" lint

files="$(find . \( -path ./.git -o -path ./build \) -prune -o -name '*.go' -type f -print)"
unformatted=
if [ -n "$files" ]; then
	# shellcheck disable=SC2086 # file names are words (no spaces in this tree)
	unformatted="$(gofmt -l $files)"
fi
if [ -n "$unformatted" ]; then
	printf 'gofmt needed:\n%s\n' "$unformatted" | sed 's/^/    /' >&2
	fail=1
else
	log "lint: gofmt clean"
fi

if "$GO" vet ./...; then
	log "lint: go vet clean"
else
	fail=1
fi

if [ -d .github/workflows ]; then
	al="$BUILD_DIR/bin/actionlint"
	if [ ! -x "$al" ] || [ "$("$al" -version 2>/dev/null | head -n 1)" != "$version" ]; then
		log "lint: go install github.com/rhysd/actionlint/cmd/actionlint@$version"
		GOBIN="$BUILD_DIR/bin" "$GO" install "github.com/rhysd/actionlint/cmd/actionlint@$version"
	fi
	if "$al"; then
		log "lint: actionlint $version clean"
	else
		fail=1
	fi
fi

if have shellcheck; then
	if shellcheck -x scripts/*.sh .ci/run; then
		log "lint: shellcheck clean"
	else
		fail=1
	fi
else
	log "lint: shellcheck not installed; scripts not checked"
fi
exit "$fail"
