"""Turns the shell examples of the README and the guides into one bash script that checks every `curl` line.

Every ```sh block of a file is read, in order, as one shell session, except blocks right after a line
`<!-- examples: not run -->` (commands for another machine or a benchmark). Each file runs in a session of its
own, so every guide sets the variables it uses (a reader can start at any guide). Kept from a block:
- variable assignments (`M=$(curl ... | jq ...)`), run as written;
- `crossbook` commands, run with the binary and database given in EXAMPLES_BIN and CROSSBOOK_DATABASE_URL;
- `python3 -c` one-liners (the data-loader examples), run as written: they must exit 0;
- `curl` commands (with their `\\` continuations), run with the status captured: it must be 2xx, or the
  status a `# expect NNN` comment on the command gives. Commands piped into another program run as written
  with `curl -f`, so a 4xx/5xx fails them too.
Everything else (comments, other programs) is skipped. A file whose session stops early (a variable it never
set) counts as a failure.

The address `http://127.0.0.1:8080` becomes the base given, and the placeholder key line
`K='X-API-Key: cbk_…'` gets the key given.

Usage: python3 scripts/readme_examples.py BASE KEY FILE... > examples.sh
"""

import re
import shlex
import sys

base, key, files = sys.argv[1], sys.argv[2], sys.argv[3:]


def commands_of(path):
    """(line number, command text) of every command of the file's run blocks."""
    lines = open(path, encoding="utf-8").read().split("\n")
    commands = []
    i = 0
    skip_next = False
    while i < len(lines):
        line = lines[i]
        if line.strip() == "<!-- examples: not run -->":
            skip_next = True
        if line.strip().startswith("```sh"):
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
    return commands


out = [
    "set -uo pipefail",
    'counts="$(mktemp)"',
    "check() {",
    '  local where="$1" expect="$2"; shift 2',
    '  local code; code=$("$@" -sS -o "$EXAMPLE_BODY" -w "%{http_code}")',
    "  ran=$((ran + 1))",
    '  if { [ -z "$expect" ] && [[ "$code" != 2* ]]; } || { [ -n "$expect" ] && [ "$code" != "$expect" ]; }; then',
    '    echo "$where: HTTP $code (expected ${expect:-2xx}): $(head -c 300 "$EXAMPLE_BODY")"',
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


for path in files:
    out.append(f"# {path}")
    out.append("(")
    out.append("ran=0; failed=0")
    for no, cmd in commands_of(path):
        where = shlex.quote(f"{path} line {no}")
        if not cmd or cmd.startswith("#"):
            continue
        cmd = cmd.replace("http://127.0.0.1:8080", base)
        if cmd.startswith("K='X-API-Key:"):
            out.append(f"K={shlex.quote('X-API-Key: ' + key)}")
            continue
        if assignment.match(cmd):
            out.append(cmd)
            continue
        fail = f'|| {{ echo {where}": failed"; failed=$((failed + 1)); }}'
        if cmd.startswith("crossbook "):
            words = shlex.split(cmd, comments=True)
            run = '"$EXAMPLES_BIN" ' + " ".join(shell_word(w) for w in words[1:])
            out.append(f"ran=$((ran + 1)); {run} >/dev/null {fail}")
            continue
        if cmd.startswith("python3 -c "):
            # The data-loader examples: run as written, on the files the examples before them saved.
            out.append(f"ran=$((ran + 1)); {cmd} >/dev/null {fail}")
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
            out.append(f"ran=$((ran + 1)); {piped} >/dev/null {fail}")
            continue
        out.append(f"check {where} '{expect}' curl " + " ".join(shell_word(w) for w in words[1:]))
    out.append(f'echo "{path}: $ran commands run, $failed failed"')
    out.append('echo "$ran $failed" >>"$counts"')
    out.append(")")
    # A session that stopped before its end (an unset variable) wrote no counts: one failure.
    out.append(f'[ "$(wc -l <"$counts")" -eq {files.index(path) + 1} ] '
               f'|| {{ echo "{path}: stopped early"; echo "0 1" >>"$counts"; }}')
out.append("read -r ran failed < <(awk '{r += $1; f += $2} END {print r, f}' \"$counts\")")
out.append('echo "Examples: $ran commands run, $failed failed"')
out.append('[ "$failed" -eq 0 ]')
print("\n".join(out))
