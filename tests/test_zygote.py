"""The tests' zygote (zygote.py) gives what subprocess.run gives for the same `python -m harness` command line: exit
code or signal, stdout and stderr, the working folder and the environment, and a deadline that ends the run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zygote

from harness.lab.process import child_env


def both(argv: list[str], env: dict) -> tuple:
    ran = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    forked = zygote.run(argv, env, 120)
    return (ran.returncode, ran.stdout, ran.stderr), (forked.returncode, forked.stdout, forked.stderr)


@pytest.mark.parametrize(
    "args, env",
    [
        ([], {}),  # a clean run, in the folder given
        (["--resume"], {}),  # nothing to resume: exit 1, a line on stderr
        (["--no-such-option"], {}),  # argparse: exit 2
        ([], {"CRASH_AFTER": "after-save-a:2"}),  # the harness kills itself: 137
        ([], {"CRASH_AFTER": "after-save-a:2", "CRASH_MODE": "sigkill"}),  # a real SIGKILL: -9
        (["--real"], {"ANTHROPIC_API_KEY": None}),  # the SDK's own path, without a key
    ],
)
def test_a_run_from_the_zygote_is_the_same_as_a_real_process(tmp_path, args, env):
    ran = subprocess.run(
        [sys.executable, "-m", "harness", "--workdir", str(tmp_path / "a"), *args],
        capture_output=True, text=True, env=child_env(env), timeout=120, check=False,
    )  # fmt: skip
    forked = zygote.run(
        [sys.executable, "-m", "harness", "--workdir", str(tmp_path / "b"), *args], child_env(env), 120
    )
    assert forked.returncode == ran.returncode
    assert forked.stdout.replace(str(tmp_path / "b"), "W") == ran.stdout.replace(str(tmp_path / "a"), "W")
    assert forked.stderr.replace(str(tmp_path / "b"), "W") == ran.stderr.replace(str(tmp_path / "a"), "W")
    if (tmp_path / "a").exists():  # the same files made (a refusal makes no folder)
        assert sorted(os.listdir(tmp_path / "b")) == sorted(os.listdir(tmp_path / "a"))


def test_the_zygote_takes_the_environment_and_the_folder_of_each_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = "import os, sys; print(os.getcwd(), os.environ.get('ONLY_HERE'), sys.argv[1:]); sys.exit(3)"
    (tmp_path / "probe.py").write_text(code, encoding="utf-8")
    env = child_env({"ONLY_HERE": "yes", "PYTHONPATH": str(tmp_path)})
    ran, forked = both([sys.executable, "-m", "probe", "x y"], env)
    assert forked == ran == (3, f"{tmp_path} yes ['x y']\n", "")
    ran, forked = both([sys.executable, "-m", "probe"], {**env, "ONLY_HERE": "no"})
    assert forked == ran and "no" in ran[1]


def test_an_uncaught_error_or_exit_message_ends_as_in_python(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = child_env({"PYTHONPATH": str(tmp_path)})
    (tmp_path / "fails.py").write_text("raise ValueError('boom')\n", encoding="utf-8")
    (tmp_path / "says.py").write_text("import sys; print('out'); sys.exit('bye')\n", encoding="utf-8")
    ran, forked = both([sys.executable, "-m", "fails"], env)
    assert forked[0] == ran[0] == 1 and "ValueError: boom" in forked[2] and "ValueError: boom" in ran[2]
    ran, forked = both([sys.executable, "-m", "says"], env)
    assert forked == ran == (1, "out\n", "bye\n")


def test_a_run_past_its_deadline_is_ended_and_said_like_subprocess(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    waits = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n"
    (tmp_path / "waits.py").write_text(waits, encoding="utf-8")
    env = child_env({"PYTHONPATH": str(tmp_path)})
    with pytest.raises(subprocess.TimeoutExpired) as ended:
        zygote.run([sys.executable, "-m", "waits"], env, 3)
    pid = int(ended.value.output)
    for _ in range(1000):  # ended: gone, or a zombie until its parent reaps it
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                break
        except OSError:
            break
        time.sleep(0.01)
    else:
        pytest.fail(f"the run past its deadline (pid {pid}) is still running")
    assert (
        zygote.run([sys.executable, "-m", "json.tool", "--help"], env, 60).returncode == 0
    )  # a new one serves


def test_a_zygote_whose_imports_print_is_not_used(tmp_path, monkeypatch):
    (tmp_path / "noisy.py").write_text("import sys; print('warning', file=sys.stderr)\n", encoding="utf-8")
    monkeypatch.setattr(zygote, "PRELOAD", ("noisy",))
    made = zygote.Zygote(child_env({"PYTHONPATH": str(tmp_path)}))
    assert made.noisy and not made.alive()


def test_a_run_that_leaves_a_process_behind_is_an_error_and_the_process_ends(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    leaves = "import subprocess, sys\nprint(subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']).pid)\n"
    (tmp_path / "leaves.py").write_text(leaves, encoding="utf-8")
    with pytest.raises(RuntimeError, match="left processes behind"):
        zygote.run([sys.executable, "-m", "leaves"], child_env({"PYTHONPATH": str(tmp_path)}), 120)
