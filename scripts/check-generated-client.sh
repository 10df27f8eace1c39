#!/usr/bin/env bash
# Generates a Python client from the /openapi.json of `crossbook serve --simulate` with
# openapi-python-client, then calls one route of each group through it (scripts/generated_client_calls.py).
# Usage: scripts/check-generated-client.sh [path/to/crossbook]   (default: target/debug/crossbook)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/crossbook}"
command -v openapi-python-client >/dev/null || pip install -q openapi-python-client

source scripts/serve-simulated.sh "$bin"

curl -sf "$base/openapi.json" -o "$work/openapi.json"
(cd "$work" && openapi-python-client generate --path openapi.json --meta none --output-path crossbook_client >/dev/null)
PYTHONPATH="$work" python3 scripts/generated_client_calls.py "$base" "$trader" "$free"
echo "generated client: every call parsed"
