"""Turns the README's shell examples into one bash script that checks every `curl` line.

Every ```sh block is read, in order, as one shell session, except blocks right after a line
`<!-- examples: not run -->` (commands for another machine or a benchmark). Kept from a block:
- variable assignments (`M=$(curl ... | jq ...)`), run as written;
- `crossbook` commands, run with the binary and database given in EXAMPLES_BIN and CROSSBOOK_DATABASE_URL;
- `python3 -c` one-liners (the data-loader examples), run as written: they must exit 0;
- `curl` commands (with their `\\` continuations), run with the status captured: it must be 2xx, or the
  status a `# expect NNN` comment on the command gives. Commands piped into another program run as written
  with `curl -f`, so a 4xx/5xx fails them too.
Everything else (comments, other programs) is skipped.

The README's address `http://127.0.0.1:8080` becomes the base given, and its placeholder key line
`K='X-API-Key: cbk_…'` gets the key given.

Usage: python3 scripts/readme_examples.py README.md BASE KEY > examples.sh
"""

import re
import shlex
import sys

readme, base, key = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(readme, encoding="utf-8").read().split("\n")

commands = []  # (README line number, command text)
i = 0
skip_next = False
while i < len(lines):
    line = lines[i]
    if line.strip() == "<!-- examples: not run -->":
        skip_next = True
    if line.strip().startswith("```sh"):
        start = i
        i += 1
        block = []
        while i < len(lines) and not lines[i].strip().startswith("```"):
            block.append((i + 1, lines[i]))
            i += 1
        if not skip_next:
            j = 0
            while j < len(block):
                no, text = block[j]
                while text.rstrip().endswith("\\") and j + 1 < len(block):
                    j += 1
                    text = text.rstrip()[:-1] + " " + block[j][1].strip()
                commands.append((no, text.strip()))
                j += 1
        skip_next = False
    i += 1

out = [
    "set -uo pipefail",
    "failed=0",
    "ran=0",
    "check() {",
    '  local where="$1" expect="$2"; shift 2',
    '  local code; code=$("$@" -sS -o "$EXAMPLE_BODY" -w "%{http_code}")',
    "  ran=$((ran + 1))",
    '  if { [ -z "$expect" ] && [[ "$code" != 2* ]]; } || { [ -n "$expect" ] && [ "$code" != "$expect" ]; }; then',
    '    echo "README line $where: HTTP $code (expected ${expect:-2xx}): $(head -c 300 "$EXAMPLE_BODY")"',
    "    failed=$((failed + 1))",
    "  fi",
    "}",
]
# `NAME=value` or `NAME=$(...)` as a whole command (not `NAME=value command`).
assignment = re.compile(r"^[A-Z_][A-Z0-9_]*=(\$\(.*\)|\S+)$")


def shell_word(word):
    """A word for bash: variables in it still expand, everything else is literal."""
    if "$" in word:
        return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`") + '"'
    return shlex.quote(word)


for no, cmd in commands:
    if not cmd or cmd.startswith("#"):
        continue
    cmd = cmd.replace("http://127.0.0.1:8080", base)
    if cmd.startswith("K='X-API-Key:"):
        out.append(f"K={shlex.quote('X-API-Key: ' + key)}")
        continue
    if assignment.match(cmd):
        out.append(cmd)
        continue
    if cmd.startswith("crossbook "):
        words = shlex.split(cmd, comments=True)
        run = '"$EXAMPLES_BIN" ' + " ".join(shell_word(w) for w in words[1:])
        out.append(
            f'ran=$((ran + 1)); {run} >/dev/null || {{ echo "README line {no}: failed"; failed=$((failed + 1)); }}'
        )
        continue
    if cmd.startswith("python3 -c "):
        # The data-loader examples: run as written, on the files the examples before them saved.
        out.append(
            f'ran=$((ran + 1)); {cmd} >/dev/null || {{ echo "README line {no}: failed"; failed=$((failed + 1)); }}'
        )
        continue
    if not cmd.startswith("curl "):
        continue
    m = re.search(r"#.*\bexpect (\d{3})\b", cmd)
    expect = m.group(1) if m else ""
    words = shlex.split(cmd, comments=True)
    if "|" in words:
        # Piped into another program: run as written, with curl failing on an HTTP error.
        words.insert(1, "-f")
        piped = " ".join(w if w == "|" else shell_word(w) for w in words)
        out.append(
            f'ran=$((ran + 1)); {piped} >/dev/null || {{ echo "README line {no}: failed"; failed=$((failed + 1)); }}'
        )
        continue
    out.append(f"check {no} '{expect}' curl " + " ".join(shell_word(w) for w in words[1:]))
out.append('echo "README examples: $ran commands run, $failed failed"')
out.append('[ "$failed" -eq 0 ]')
print("\n".join(out))
