"""Shared helpers: run the command line as a real subprocess, and read the expected transcripts from the spec."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import zygote

from harness.lab.process import child_env
from harness.vocab import FIXED_TIME_MS

TESTS = Path(__file__).parent
SPEC_TRANSCRIPTS = (
    TESTS / "transcripts.md"
)  # a copy of ../shared/spec/transcripts.md (test_spec_copy checks it)


def run_cli(workdir: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """python -m harness in workdir's parent, as a learner would type it (from this worker's zygote, zygote.py, when
    it runs the real client: the SDK is imported there already)."""
    argv = [sys.executable, "-m", "harness", "--workdir", str(workdir), *args]
    if "--real" in args:
        return zygote.run(argv, child_env(env), 60)
    return subprocess.run(argv, check=False, capture_output=True, text=True, env=child_env(env), timeout=60)


def cli_in_process(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    """python -m harness ARGV in this process (for sweeps too large for real processes): exit code, stdout, stderr.
    The environment is exactly `env` plus the fixed clock."""
    from harness.__main__ import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(list(argv), env={"HARNESS_FIXED_TIME_MS": str(FIXED_TIME_MS), **(env or {})})
    return code, out.getvalue(), err.getvalue()


def parse_transcripts(text: str) -> dict[str, list[dict]]:
    """{case name: [{"env": {...}, "args": [...], "stdout": [...], "exit": int}, ...]} from the spec's markdown."""
    cases: dict[str, list[dict]] = {}
    for name, block in re.findall(r"^## (.+?)\n+```\n(.*?)```", text, flags=re.DOTALL | re.MULTILINE):
        steps: list[dict] = []
        for line in block.splitlines():
            if line.startswith("$ "):
                words = line[2:].split()
                env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
                args = words[words.index("harness") + 1 :]
                steps.append({"env": env, "args": args, "stdout": [], "exit": None})
            elif line.startswith("EXIT="):
                steps[-1]["exit"] = int(line[5:])
            else:
                steps[-1]["stdout"].append(line)
        cases[name] = steps
    return cases


TRANSCRIPTS = parse_transcripts(SPEC_TRANSCRIPTS.read_text(encoding="utf-8"))


def read_json(path: Path):
    return json.loads(Path(path).read_text(encoding="utf-8"))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d
