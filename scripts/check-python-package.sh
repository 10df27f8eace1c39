#!/usr/bin/env bash
# Builds the Python package (clients/python) as a wheel, installs it into a scratch folder without its source
# tree, and imports it from there: what `pip install ./clients/python` gives a user.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip wheel -q --no-deps -w "$work/wheel" ./clients/python
python3 -m pip install -q --root-user-action=ignore --no-deps --target "$work/site" "$work"/wheel/crossbook-*.whl
(cd "$work" && PYTHONPATH="$work/site" python3 -c '
import crossbook, crossbook.models, crossbook.stream, crossbook.webhooks, crossbook.books
assert crossbook.__file__.startswith("'"$work"'/site"), crossbook.__file__
assert hasattr(crossbook.Client, "search_markets") and hasattr(crossbook.AsyncClient, "replay")
print("python package:", crossbook.__version__, "builds, installs and imports")
')
