#!/usr/bin/env bash
# Set up what the browser tests (tests/test_site.py) need on a fresh Debian/Ubuntu machine:
#
#   1. Chromium from the distribution (`apt-get install chromium`), when no chromium is found;
#   2. the Python package playwright (in the project's test extra), when it cannot be imported.
#
# Playwright drives the distribution's Chromium (executable_path=/usr/bin/chromium). Never run
# `playwright install`: it downloads browser builds from the network, which CI does not allow.
# Each step is skipped when already done, so running it twice is cheap. Runs as root (apt-get),
# non-interactive. Then check with: python3 -m pytest -m browser
#
#   scripts/setup-browser.sh          # install what is missing, then smoke-test a headless launch
#   scripts/setup-browser.sh --check  # only report what is missing (exit 1 if anything is)
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
CHECK=0
for arg in "$@"; do
    case "$arg" in
        --check) CHECK=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "setup-browser: unknown argument: $arg (try --help)" >&2; exit 2 ;;
    esac
done

find_chromium() {
    if [ -n "${TAKE5_CHROMIUM:-}" ] && [ -x "$TAKE5_CHROMIUM" ]; then echo "$TAKE5_CHROMIUM"; return; fi
    command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null || true
}

missing=0
chromium="$(find_chromium)"
if [ -z "$chromium" ]; then
    if [ "$CHECK" = 1 ]; then
        echo "setup-browser: chromium is missing"; missing=1
    else
        echo "setup-browser: installing chromium (apt-get)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
        chromium="$(find_chromium)"
        [ -n "$chromium" ] || { echo "setup-browser: chromium still not found after apt-get" >&2; exit 1; }
    fi
fi

if ! "$PYTHON" -c "import playwright.sync_api" 2>/dev/null; then
    if [ "$CHECK" = 1 ]; then
        echo "setup-browser: the Python package playwright is missing"; missing=1
    else
        echo "setup-browser: installing the Python package playwright (pip)"
        "$PYTHON" -m pip install --quiet --disable-pip-version-check "playwright>=1.40"
    fi
fi

if [ "$CHECK" = 1 ]; then
    [ "$missing" = 0 ] && echo "setup-browser: chromium ($chromium) and playwright are present"
    exit "$missing"
fi

# Smoke test: the same launch as the tests, on an empty page.
TAKE5_CHROMIUM="$chromium" "$PYTHON" - <<'EOF'
import os
from playwright.sync_api import sync_playwright

args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
with sync_playwright() as p:
    browser = p.chromium.launch(executable_path=os.environ["TAKE5_CHROMIUM"], args=args)
    page = browser.new_page()
    page.set_content("<p id=x>ok</p>")
    assert page.inner_text("#x") == "ok"
    version = browser.version
    browser.close()
print(f"setup-browser: headless chromium {version} works with playwright")
EOF
