"""The Python guide's examples (docs/python.md) run, in order, as one script against the service."""

import os
import re
import subprocess
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "python.md"


def test_the_guide_runs_as_written(env, tmp_path):
    text = GUIDE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    script = tmp_path / "guide.py"
    script.write_text("\n".join(blocks))
    run = subprocess.run(
        [sys.executable, str(script)],
        env={**os.environ, "CROSSBOOK_URL": env.url, "CROSSBOOK_KEY": env.builder},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert "webhook.test" in out and "gaps today:" in out and "best_bid" in out, out
    assert out.count("change") + out.count("snapshot") >= 5, out
    assert "404 not_found" in out, out
