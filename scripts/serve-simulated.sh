# Sourced by the checks in this folder: starts `crossbook serve --simulate` on a fresh SQLite file and a free
# port, waits until the simulated catalog is searchable, and sets:
#   base (http://127.0.0.1:PORT), free, builder, trader (the demo keys of the banner), work (a scratch folder,
#   removed on exit with the server).
# Usage: source scripts/serve-simulated.sh path/to/crossbook [more serve flags]
bin="$1"
shift
work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
"$bin" serve --simulate --listen "127.0.0.1:$port" --database-url "sqlite://$work/crossbook.db" "$@" >"$work/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null; rm -rf "$work"' EXIT

base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  if curl -sf "$base/v1/search/markets?q=btc&limit=1" 2>/dev/null | grep -q market_id; then break; fi
  kill -0 $serve_pid 2>/dev/null || { cat "$work/serve.log"; exit 1; }
  sleep 0.5
done
key_of() { sed -n "s/^ *$1 *\(cbk_[A-Za-z0-9]*\).*/\1/p" "$work/serve.log" | head -1; }
free=$(key_of free)
builder=$(key_of builder)
trader=$(key_of trader)
[ -n "$free" ] && [ -n "$builder" ] && [ -n "$trader" ] || { echo "no demo keys in the banner:"; cat "$work/serve.log"; exit 1; }
