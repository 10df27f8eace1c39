#!/usr/bin/env bash
# Runs every `curl` line of the README and of the guides in docs/ against `crossbook serve --simulate` (default
# seed), each file as one shell session with the Trader demo key, and fails on a 4xx/5xx the text does not say to
# expect (scripts/readme_examples.py says how the files are read).
# Usage: scripts/check-readme-examples.sh [path/to/crossbook]   (default: target/debug/crossbook)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/debug/crossbook}"

# The webhook examples deliver to a receiver on loopback, as the webhooks guide says to try them.
source scripts/serve-simulated.sh "$bin" --allow-private-webhook-targets

# The paging example needs a book with a second page: wait (at most 60 s) until the first venue_a market has one.
a=$(curl -s "$base/v1/search/markets?q=btc&exchange=venue_a&series_id=KXBTCW&limit=1" | jq -r '.[0].market_id')
for _ in $(seq 1 120); do
  curl -s -H "X-API-Key: $trader" "$base/v1/historical/venue_a/orderbook?market_id=$a&limit=2" \
    | jq -e '.pagination.has_more' >/dev/null && break
  sleep 0.5
done

# The README first, then the guides in name order.
mapfile -t docs < <(LC_ALL=C ls docs/*.md)
python3 scripts/readme_examples.py "$base" "$trader" README.md "${docs[@]}" >"$work/examples.sh"
# `crossbook ...` lines run this binary on the served database.
# They run in the scratch directory: the export examples save files where they stand.
examples_bin="$(realpath "$bin")"
(cd "$work" && EXAMPLE_BODY="$work/body" EXAMPLES_BIN="$examples_bin" CROSSBOOK_DATABASE_URL="sqlite://$work/crossbook.db" \
  bash "$work/examples.sh")
