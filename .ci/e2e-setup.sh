#!/usr/bin/env bash
# Install what the real-browser e2e tests (tests/e2e) need; safe to run again and again.
#
#   * Debian's Chromium at /usr/bin/chromium (Playwright drives it; `playwright install`
#     is never used because it downloads browsers and the network is closed),
#   * fonts so screenshots show text and the tool cards' status symbols (e.g. U+23F8),
#   * jupyterlab + playwright (the `e2e` extra) in the Python given as $PYTHON, if missing,
#   * axe-core (Deque's accessibility engine, from the npm registry) under .ci/node_modules,
#     injected by the browser tests to check colour contrast (tests/e2e/test_e2e_cards.py).
#
# Usage: PYTHON=/path/to/venv/bin/python bash .ci/e2e-setup.sh
set -euo pipefail

PYTHON="${PYTHON:-python3}"

if [ ! -x /usr/bin/chromium ] \
    || [ ! -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] \
    || [ ! -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ]; then
    export DEBIAN_FRONTEND=noninteractive
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq chromium fonts-dejavu-core fonts-noto-color-emoji >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null | sed -n 1p  # not head: see .ci/run

if ! "$PYTHON" -c "import jupyterlab, playwright.sync_api" 2>/dev/null; then
    "$PYTHON" -m pip install -q "jupyterlab>=4.2" "playwright>=1.45"
fi
"$PYTHON" -c "import jupyterlab, playwright; print('jupyterlab', jupyterlab.__version__)"

AXE_VERSION=4.14.1
AXE_DIR="$(cd "$(dirname "$0")" && pwd)"
if [ ! -f "$AXE_DIR/node_modules/axe-core/axe.min.js" ] \
    || ! grep -q "\"version\": \"$AXE_VERSION\"" "$AXE_DIR/node_modules/axe-core/package.json"; then
    if ! command -v npm >/dev/null; then
        export DEBIAN_FRONTEND=noninteractive
        SUDO=""
        if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq npm >/dev/null
    fi
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$AXE_DIR" \
        "axe-core@$AXE_VERSION" >/dev/null
fi
echo "axe-core $AXE_VERSION"
