"""The level-2 reproduction script: what the check and show_repro do around the grading (odd shapes, time limits,
floods, leftover processes, files outside the work folder, a script that ends the check). Right and wrong scripts,
with the message each ✗ must give, are lines of tests/answer_corpus (test_answer_corpus.py)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from harness.exercises.jail import IDLE_LIMIT_S, OUTPUT_LIMIT, SCRIPT_TIME_LIMIT_S, TIME_LIMIT_S, run_jailed
from harness.exercises.level1 import INSIGHT_CHOICES
from harness.exercises.level2 import (
    check_level2_repro,
    show_repro,
)
from harness.exercises.repro import STEPS

ROOT = Path(__file__).resolve().parents[1]
SOLUTION_SCRIPT = ROOT / "solutions" / "level2_repro.py"

# ---------------------------------------------------------------------------------------------------------------
# Level 2 (d): the reproduction script, run as real processes in a scratch copy.


def repro_variant(tmp_path, *swaps) -> Path:
    text = SOLUTION_SCRIPT.read_text(encoding="utf-8")
    for old, new in swaps:
        assert old in text, old
        text = text.replace(old, new, 1)
    script = tmp_path / "level2_repro.py"
    script.write_text(text, encoding="utf-8")
    return script


COUNT = "        self.passes += 1\n        if self.passes == self.target:\n"
WRONG_BODY = (
    "            crash.point()\n            output = execute_tool(run, block)\n"
    '            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})\n'
)
FIXED_CRASH = (
    "            crash.point()\n            output = execute_tool(run, block)\n            save_effect("
)
TARGET = 'int(os.environ.get("REPRO_CRASH", "0"))'


def test_level2_repro_skeleton_is_unanswered_naming_every_todo(tmp_path):
    shutil.copy(ROOT / "exercises" / "level2_repro.py", tmp_path / "level2_repro.py")
    verdict = check_level2_repro(tmp_path / "level2_repro.py")
    assert verdict.missing and not verdict.problems
    expected = "TODO 1: Crash.point、TODO 2: run_tool_uses_wrong、TODO 3: run_tool_uses_fixed がまだです"
    assert expected in verdict.report()


def test_level2_repro_given_the_notebook_says_it_wants_the_script(tmp_path):
    notebook = tmp_path / "level2_reversed_ledger.ipynb"
    notebook.write_text("{}", encoding="utf-8")
    verdict = check_level2_repro(notebook)
    expected = (
        "✗ level2_reversed_ledger.ipynb は Python スクリプト（.py）ではありません。TODO を埋めた level2_repro.py を"
        "渡してください"
    )
    assert verdict.problems == [expected]


def test_show_repro_prints_the_kill_line_once_and_the_script_error(tmp_path, capsys, monkeypatch):
    repro_variant(tmp_path, ("        sys.exit(137)", "        sys.exit(0)"))
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert out.count("[kill] REPRO_CRASH=3 で疑似キル") == 2  # once for each order
    repro_variant(tmp_path, ("    crash = Crash()\n", "    crash = Crash()\n    {}['x']\n"))
    show_repro("level2_repro.py")
    assert "level2_repro.py の 64 行目で KeyError: 'x'" in capsys.readouterr().out


def test_show_repro_shows_a_scripts_control_characters_never_sends_them(tmp_path, capsys, monkeypatch):
    """A script's output reaches the verdict as text: escape sequences (a window title, a screen clear) are shown
    escaped, never sent to the learner's terminal."""
    repro_variant(tmp_path, ("def main():\n", "def main():\n    print('\\x1b]0;pwn\\x07\\x1b[2J\\rX')\n"))
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert "\\x1b]0;pwn" in out


@pytest.mark.parametrize("given", [None, Ellipsis, 42, "missing.py", "."])
def test_level2_repro_of_another_shape_is_a_clear_message(tmp_path, given):
    verdict = check_level2_repro(given)
    assert not verdict.passed and (verdict.missing or verdict.problems)


def test_level2_repro_with_an_endless_loop_is_stopped_at_its_time_limit(tmp_path):
    script = repro_variant(tmp_path, ("def main():\n", "def main():\n    while True:\n        pass\n"))
    start = time.monotonic()
    verdict = check_level2_repro(script, time_limit=1)
    assert (
        time.monotonic() - start < 120
    )  # only a check that never stops fails here, however busy the machine
    assert verdict.problems == [
        "✗ REPRO_CRASH=2 で wrong: 1 秒以内に終わりませんでした（無限ループ？）。そこで打ち切りました"
    ]


def test_level2_repro_printing_50_mb_is_cut(tmp_path, capsys, monkeypatch):
    script = repro_variant(tmp_path, ("def main():\n", "def main():\n    print('x' * 50_000_000)\n"))
    assert check_level2_repro(script).passed
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert f"バイトあったので、最初の {OUTPUT_LIMIT:,} 文字だけ表示しました" in out
    assert len(out) < 4 * OUTPUT_LIMIT + 4000


def test_a_repro_script_deleting_its_folder_cannot_touch_the_exercises(tmp_path, monkeypatch):
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    (exercises / "level1_crash_moments.ipynb").write_text("{}", encoding="utf-8")
    cleaner = "def main():\n    for name in os.listdir('.'):\n        if os.path.isfile(name):\n            os.remove(name)\n"
    script = repro_variant(exercises, ("def main():\n", cleaner))
    assert check_level2_repro(script).passed
    monkeypatch.chdir(exercises)
    show_repro("level2_repro.py")
    assert sorted(p.name for p in exercises.iterdir()) == [
        "_work",
        "level1_crash_moments.ipynb",
        "level2_repro.py",
    ]


def test_show_repro_resumes_both_folders_to_show_the_contrast(tmp_path, capsys, monkeypatch):
    shutil.copy(SOLUTION_SCRIPT, tmp_path / "level2_repro.py")
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert "$ cd _work/repro/wrong && REPRO_CRASH=3 python level2_repro.py wrong work" in out
    assert "$ python -m harness --workdir _work/repro/wrong/work --resume" in out
    assert "[done] report.txt にレポートを書き出しました。タスク完了。" in out
    assert "（インシデントの再現）" in out
    assert "$ python -m harness --workdir _work/repro/fixed/work --resume" in out
    assert "[done] write_report の実行状態が不明です。report.txt を確認してください。" in out
    assert "is_error で「不明」と正直に返しました" in out
    assert str(tmp_path) not in out


def test_show_repro_counts_a_real_sigkill_as_a_crash(tmp_path, capsys, monkeypatch):
    repro_variant(
        tmp_path,
        ("import os\n", "import os\nimport signal\n"),
        (COUNT, "        self.passes += 1\n        if self.passes == self.target:\n            os.kill(os.getpid(), signal.SIGKILL)\n"),
    )  # fmt: skip
    monkeypatch.chdir(tmp_path)
    show_repro("level2_repro.py")
    out = capsys.readouterr().out
    assert out.count("EXIT=-9（SIGKILL で落ちました）") == 2 and "台帳ヒット" in out


# ---------------------------------------------------------------------------------------------------------------
# The child-process recipe the repro check uses, and what the notebooks promise.


def test_jail_kills_the_whole_group_at_its_time_limit(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    grandchild = f"import os; open({str(pid_file)!r} + '.tmp', 'w').write(str(os.getpid())); "
    grandchild += (
        f"os.replace({str(pid_file)!r} + '.tmp', {str(pid_file)!r})\nimport time\nwhile True: time.sleep(1)"
    )
    code = (  # the child says "started" once its grandchild runs (a state, not a time), then never ends
        f"import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {grandchild!r}])\n"
        f"while not os.path.exists({str(pid_file)!r}): time.sleep(0.01)\n"
        "print('started', flush=True)\nwhile True: pass\n"
    )
    done = run_jailed([sys.executable, "-c", code], timeout=2)
    # its CPU limit (SIGXCPU), or the wall-clock backstop (SIGKILL) on a machine too busy to give it 2 CPU seconds
    assert (
        done.timed_out
        and done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
        and done.stdout == "started\n"
    )
    assert not alive(int(pid_file.read_text()))  # the grandchild ended with its group


def test_the_script_time_limit_is_cpu_time_so_a_busy_machine_never_makes_a_script_endless():
    done = run_jailed([sys.executable, "-c", "import time; time.sleep(3); print('done')"], timeout=1)
    assert not done.timed_out and done.returncode == 0 and done.stdout == "done\n"


def test_a_script_that_ignores_the_cpu_signal_is_still_stopped_and_not_taken_for_a_crash():
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass\n"
    done = run_jailed([sys.executable, "-c", code], timeout=1)
    assert done.timed_out and done.returncode == -signal.SIGKILL


def test_a_script_that_sleeps_forever_is_stopped_on_the_clock():
    done = run_jailed(
        [sys.executable, "-c", "import time; print('zzz', flush=True); time.sleep(600)"], timeout=1
    )
    assert done.timed_out and done.returncode == -signal.SIGKILL and done.stdout == "zzz\n"
    assert done.idle  # nothing of it ran: stopped as idle, which the verdict says


def test_a_script_waiting_on_children_that_work_is_not_idle():
    """Each child here sleeps and exits, and a new one starts: processes starting and ending are activity, so the
    script runs past the idle limit to its end (it uses almost no CPU of its own)."""
    from harness.exercises.jail import IDLE_LIMIT_S

    code = (
        "import subprocess, sys\n"
        f"for _ in range({IDLE_LIMIT_S + 4}):\n"
        "    subprocess.run([sys.executable, '-c', 'import time; time.sleep(1)'])\n"
        "print('done', flush=True)\n"
    )
    done = run_jailed([sys.executable, "-c", code], timeout=5)
    assert not done.timed_out and not done.idle and done.returncode == 0 and done.stdout == "done\n", (
        done.stderr
    )


def alive(pid: int) -> bool:
    """A process that runs (a zombie waiting to be reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_run_jailed_keeps_the_first_characters_and_counts_the_rest():
    done = run_jailed([sys.executable, "-c", "print('あ' * 100_000)"], timeout=10, max_chars=50)
    assert done.stdout == "あ" * 50 and done.cut and done.output_bytes == 300_001


def test_notebooks_state_the_time_limits_the_checks_use():
    level2 = (ROOT / "src" / "solutions" / "level2_reversed_ledger.md").read_text(encoding="utf-8")
    assert f"**その1回ごとに {TIME_LIMIT_S} 秒で打ち切ります**" in level2
    assert f"合わせて {len(STEPS)} 回走らせ、そのあと `--resume` を 2 回実行します。" in level2
    assert (
        f"**その1回ごとに {SCRIPT_TIME_LIMIT_S} 秒で打ち切ります**（CPU 時間。チェック全体の制限ではありません）"
        in level2
    )
    assert f"最初の {OUTPUT_LIMIT:,} 文字まで" in level2
    assert f"CPU を使わずに\n**{IDLE_LIMIT_S} 秒止まったまま**のとき" in level2


def test_level1_notebook_lists_the_insight_choices_the_check_grades():
    text = (ROOT / "src" / "solutions" / "level1_crash_moments.md").read_text(encoding="utf-8")
    for letter, choice in INSIGHT_CHOICES.items():
        assert f"  - {letter}: {choice}" in text


def test_exercise_notebooks_show_no_answer_before_the_learner_answers():
    for name in ("level1_crash_moments.ipynb", "level2_reversed_ledger.ipynb"):
        nb = json.loads((ROOT / "exercises" / name).read_text(encoding="utf-8"))
        shown = "".join(
            "".join(o.get("text", "")) for c in nb["cells"] if c["cell_type"] == "code" for o in c["outputs"]
        )
        assert "✓" not in shown and "✗" not in shown and "正しくは" not in shown
        assert not re.search(r"pendingToolUse=\w+ \(toolu", shown)  # no look() output


def test_a_script_that_exits_at_once_leaving_a_child_on_its_stdout_is_not_endless():
    code = "import subprocess, sys\nsubprocess.Popen(['sleep', '600'])\nprint('done', flush=True)\n"
    done = run_jailed([sys.executable, "-c", code], timeout=30)
    assert not done.timed_out and done.returncode == 0 and done.stdout == "done\n"
    assert done.leftovers == 1


def test_a_double_forked_daemon_of_a_script_is_ended_and_counted(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    code = (  # the middle child writes the daemon's pid whole, then the script waits for it: a state, not a time
        "import os, time\n"
        "middle = os.fork()\n"
        "if middle == 0:\n"
        "    os.setsid()\n"
        "    daemon = os.fork()\n"
        "    if daemon == 0:\n"
        "        time.sleep(600)\n"
        "        os._exit(0)\n"
        f"    open({str(pidfile)!r} + '.tmp', 'w').write(str(daemon))\n"
        f"    os.replace({str(pidfile)!r} + '.tmp', {str(pidfile)!r})\n"
        "    os._exit(0)\n"
        "os.waitpid(middle, 0)\n"
    )
    done = run_jailed([sys.executable, "-c", code], timeout=30)
    assert done.leftovers >= 1 and pidfile.exists()
    assert ended(int(pidfile.read_text()))


def ended(pid: int) -> bool:
    """The process is gone (or a zombie waiting to be reaped), waiting for that state, not for a time."""
    deadline = time.monotonic() + 60  # only a hung test waits this long
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "swaps",
    [
        [("    except SimulatedCrash as err:", "    except KeyError as err:")],
        [('raise SimulatedCrash(f"REPRO_CRASH={self.target}")', "raise RuntimeError('crash')")],
    ],
    ids=["crash-not-caught", "runtime-error-as-crash"],
)
def test_level2_repro_dying_at_its_crash_point_by_any_exception_passes(tmp_path, swaps):
    # 完了基準 asks for a controlled crash point and what effects.json holds then, not for exit code 137
    verdict = check_level2_repro(repro_variant(tmp_path, *swaps))
    assert verdict.passed, verdict.report()


def test_a_script_that_kills_the_check_is_told_its_code_ended_the_check(tmp_path):
    script = repro_variant(
        tmp_path, ("    crash = Crash()\n", "    crash = Crash()\n    os.kill(os.getppid(), 9)\n")
    )
    verdict = check_level2_repro(script)
    assert (
        not verdict.passed
        and "スクリプトがチェックのプロセス（スクリプトの親）を止めました（SIGKILL）" in verdict.problems[0]
    )


def test_a_script_that_deletes_a_file_in_the_home_folder_fails(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "keep.txt").write_text("大事なメモ", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    script = repro_variant(
        tmp_path,
        (
            "    crash = Crash()\n",
            "    crash = Crash()\n    os.path.exists(os.path.expanduser('~/notes/keep.txt')) and os.remove(os.path.expanduser('~/notes/keep.txt'))\n",
        ),
    )
    verdict = check_level2_repro(script)
    assert not verdict.passed and "削除: " in verdict.problems[-1] and "keep.txt" in verdict.problems[-1], (
        verdict.report()
    )


def test_without_proc_nothing_is_called_idle(monkeypatch):
    """Where there is no /proc (macOS), the jail cannot see its processes run: activity() says so (None), and only the
    clock limit stops a script, never a working one taken for idle."""
    import os

    from harness.exercises import jail

    assert jail.activity(os.getpid()) is not None  # here, on Linux, it sees
    real_isdir = os.path.isdir
    monkeypatch.setattr(
        jail.os.path, "isdir", lambda p: False if str(p).startswith("/proc") else real_isdir(p)
    )
    assert jail.activity(os.getpid()) is None
