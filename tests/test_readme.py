"""The README's promises that code can check: every Python example runs as written in an empty folder."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.lab.process import child_env

README = Path(__file__).resolve().parents[1] / "README.md"
EXAMPLES = re.findall(
    r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE
)


def test_the_readme_has_python_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("code", EXAMPLES, ids=lambda c: c.splitlines()[0][:40])
def test_every_python_example_runs_as_written_in_an_empty_folder(tmp_path, code):
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
