#!/usr/bin/env bash
# Runs every `curl` line of the README against `crossbook serve --simulate` (default seed), as one shell
# session with the Trader demo key, and fails on a 4xx/5xx the README does not say to expect
# (scripts/readme_examples.py says how the README is read).
# Usage: scripts/check-readme-examples.sh [path/to/crossbook]   (default: target/debug/crossbook)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/crossbook}"

source scripts/serve-simulated.sh "$bin"

python3 scripts/readme_examples.py README.md "$base" "$trader" >"$work/examples.sh"
EXAMPLE_BODY="$work/body" bash "$work/examples.sh"
