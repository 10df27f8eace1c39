#!/usr/bin/env bash
# Generates a Python client from the /openapi.json of `crossbook serve --simulate` with
# openapi-python-client, then calls one route of each group through it (scripts/generated_client_calls.py).
# Usage: scripts/check-generated-client.sh [path/to/crossbook]   (default: target/debug/crossbook)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/crossbook}"
command -v openapi-python-client >/dev/null || pip install -q openapi-python-client

work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
"$bin" serve --simulate --listen "127.0.0.1:$port" --database-url "sqlite://$work/crossbook.db" >"$work/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT

base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  # Ready, and the simulated catalog is searchable.
  if curl -sf "$base/v1/search/markets?q=btc&limit=1" 2>/dev/null | grep -q market_id; then break; fi
  kill -0 $pid 2>/dev/null || { cat "$work/serve.log"; exit 1; }
  sleep 0.5
done
trader=$(sed -n 's/^ *trader *\(cbk_[A-Za-z0-9]*\).*/\1/p' "$work/serve.log" | head -1)
free=$(sed -n 's/^ *free *\(cbk_[A-Za-z0-9]*\).*/\1/p' "$work/serve.log" | head -1)
[ -n "$trader" ] && [ -n "$free" ] || { echo "no demo keys in the banner:"; cat "$work/serve.log"; exit 1; }

curl -sf "$base/openapi.json" -o "$work/openapi.json"
(cd "$work" && openapi-python-client generate --path openapi.json --meta none --output-path crossbook_client >/dev/null)
PYTHONPATH="$work" python3 scripts/generated_client_calls.py "$base" "$trader" "$free"
echo "generated client: every call parsed"
