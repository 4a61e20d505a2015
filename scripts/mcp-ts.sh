#!/usr/bin/env bash
# mcp-ts.sh: install the official TypeScript MCP SDK, pinned by
# cmd/cordon/testdata/tsclient/package-lock.json, into $BUILD_DIR/mcp-ts
# with `npm ci` (skipped when that lock is already installed there), for
# cmd/cordon's TestTypeScriptClient. Prints nothing on stdout; exits 0
# when the SDK is ready, 2 when node or npm is missing or the install
# failed (the test then skips), and fails instead when CORDON_REQUIRE
# names landlock (the backend that test runs on).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

src="$CORDON_ROOT/cmd/cordon/testdata/tsclient"
dst="$BUILD_DIR/mcp-ts"

unavailable() {
	if required landlock; then
		die "mcp-ts: $1, and CORDON_REQUIRE names landlock (the TypeScript MCP client test runs on it)"
	fi
	log "mcp-ts: $1; the TypeScript MCP client test will skip"
	exit 2
}

have node || unavailable "node is not installed"
have npm || unavailable "npm is not installed"
mkdir -p "$dst"
if cmp -s "$src/package-lock.json" "$dst/package-lock.json" && [ -d "$dst/node_modules/@modelcontextprotocol/sdk" ]; then
	exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dst/"
start="$(now)"
if ! (cd "$dst" && npm ci --no-audit --no-fund --loglevel=error >&2); then
	rm -f "$dst/package-lock.json"
	unavailable "npm ci of the TypeScript MCP SDK failed"
fi
log "mcp-ts: installed the TypeScript MCP SDK into $dst in $(since "$start")"
