"""The level-2 fix judge: graded by outcome beside the lesson's run_tool_uses, against 完了基準 only, in a fresh
interpreter, and nothing the learner's code starts outlives the check."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from harness.exercises.level2 import check_level2_fix

LESSON_MINIMAL = """
def run_tool_uses_fixed(run, content):
    tool_use_blocks = [b for b in content if b["type"] == "tool_use"]
    results = []
    for block in tool_use_blocks:
        output = execute_tool(run, block)
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()})
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results
"""


def variant(old: str, new: str) -> str:
    assert old in LESSON_MINIMAL
    return LESSON_MINIMAL.replace(old, new)


def test_the_lessons_minimal_fix_passes_with_at_most_notes():
    verdict = check_level2_fix(LESSON_MINIMAL)
    assert verdict.passed, verdict.report()
    assert any(n.startswith("💡") for n in verdict.notes)  # the uncaught ToolError is a note, not a ✗


def test_the_production_order_fails_citing_the_criterion():
    prod = variant(
        """        output = execute_tool(run, block)
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()})""",
        """        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        output = execute_tool(run, block)""",
    )
    verdict = check_level2_fix(prod)
    assert not verdict.passed and "完了基準「正しい順序の提示」" in verdict.problems[0]


def test_an_extra_key_in_tool_result_fails():
    verdict = check_level2_fix(variant('"content": output}', '"content": output, "name": block["name"]}'))
    assert not verdict.passed and "API にないキー" in verdict.report()


def test_results_kept_by_tool_name_lose_the_second_call_of_the_same_tool():
    verdict = check_level2_fix(
        variant("    return results", '    return list({r["tool_use_id"][:6]: r for r in results}.values())')
    )
    assert not verdict.passed and "toolu_zz9" in verdict.report()


def test_tools_run_in_id_order_fail():
    verdict = check_level2_fix(variant('tool_use_blocks = [b for b in content if b["type"] == "tool_use"]',
                                       'tool_use_blocks = sorted((b for b in content if b["type"] == "tool_use"), key=lambda b: b["id"])'))  # fmt: skip
    assert not verdict.passed and "toolu_aa1" in verdict.report()


def test_a_result_cut_to_200_characters_fails_on_long_notes():
    verdict = check_level2_fix(variant('"result": output,', '"result": output[:200],'))
    assert not verdict.passed and "1,000 文字を超えるメモ" in verdict.report()


def test_writing_the_ledger_without_save_effect_is_told_so():
    verdict = check_level2_fix(
        variant(
            'save_effect(run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()})',
            'effects = load_effects(run.effects_path); effects[block["id"]] = {"name": block["name"], "result": output, "at": run.clock()}; run.effects_path.write_text(json.dumps(effects, ensure_ascii=False))',
        )
    )
    assert not verdict.passed and "save_effect を一度も呼んでいません" in verdict.report()


def test_a_fix_wrong_only_after_a_first_run_is_judged_fresh():
    # a module-level flag the kernel would have flipped: the check never inherits the kernel's state
    src = "DONE = []\n" + variant("    return results", "    DONE.append(1)\n    return results")
    assert check_level2_fix(src).passed


def test_a_daemon_the_fix_double_forks_is_ended_and_named(tmp_path):
    marker = tmp_path / "daemon-alive"
    daemon = (  # the middle child writes the daemon's pid whole, then the function waits for it: a state, not a time
        "import os, time\n"
        "middle = os.fork()\n"
        "if middle == 0:\n"
        "    os.setsid()\n"
        "    daemon = os.fork()\n"
        "    if daemon == 0:\n"
        "        time.sleep(600)\n"
        "        os._exit(0)\n"
        f"    open({str(marker)!r} + '.tmp', 'w').write(str(daemon))\n"
        f"    os.replace({str(marker)!r} + '.tmp', {str(marker)!r})\n"
        "    os._exit(0)\n"
        "os.waitpid(middle, 0)\n"
    )
    src = variant("    return results", textwrap_indent(daemon) + "    return results")
    verdict = check_level2_fix(src)
    assert not verdict.passed and "動き続けていたので、チェックが終わらせました" in verdict.report()
    assert marker.exists()  # the daemon did start
    pid = int(marker.read_text())
    deadline = time.monotonic() + 60  # only a hung test waits this long
    while os.path.exists(f"/proc/{pid}") and not zombie(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}") or zombie(pid)


def deleting(path) -> str:
    return variant(
        "    return results",
        f"    import os\n    if os.path.exists({str(path)!r}):\n        os.remove({str(path)!r})\n    return results",
    )


def test_a_fix_deleting_a_file_outside_its_work_folder_fails_naming_it(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("the learner's own file", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))  # the home folder the check watches
    verdict = check_level2_fix(deleting(home / "notes.txt"))
    assert not verdict.passed and "notes.txt" in verdict.report() and "消えました" in verdict.report()


def test_what_the_repo_rebuilds_beside_a_check_is_not_held_against_the_answer():
    """The site and the browser tests' screenshots are rebuilt by other processes (another test, a build) while a
    check runs: a change there is not the learner's code. Here the answer itself deletes one, the harder case."""
    from harness.exercises.jail import REBUILT, repo_root

    assert "test-artifacts" in REBUILT  # the browser tests only add files there: a probe is safe beside them
    probe = repo_root() / "test-artifacts" / f"probe-{os.getpid()}.txt"
    probe.parent.mkdir(exist_ok=True)
    probe.write_text("rebuilt by the repo's tools", encoding="utf-8")
    try:
        verdict = check_level2_fix(deleting(probe))
    finally:
        probe.unlink(missing_ok=True)
    assert verdict.passed and "消えました" not in verdict.report(), verdict.report()


def zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return False


def textwrap_indent(code: str) -> str:
    return "".join("    " + line + "\n" for line in code.splitlines())


def test_an_endless_loop_is_stopped_at_its_time_limit():
    verdict = check_level2_fix(variant("    return results", "    while True:\n        pass"), time_limit=1)
    assert not verdict.passed and "1 秒以内に終わりませんでした" in verdict.report()


def test_a_function_from_a_module_is_sent_with_what_it_uses():
    from harness.loop import run_tool_uses

    assert check_level2_fix(run_tool_uses).passed
    assert sys.modules  # the kernel itself is untouched: nothing ran here


def test_an_answer_cell_that_never_finishes_is_stopped_and_named():
    verdict = check_level2_fix("while True:\n    pass\n" + LESSON_MINIMAL, time_limit=1)
    assert not verdict.passed and "答えのセルが 9 秒以内に終わりませんでした" in verdict.report()


def test_an_answer_cell_that_calls_the_check_itself_is_judged_once():
    cell = (
        "from harness.exercises.level2 import check_level2_fix\n"
        + LESSON_MINIMAL
        + "\nprint(check_level2_fix())\n"
    )
    verdict = check_level2_fix(cell)
    assert verdict.passed, verdict.report()


# -- the check cannot be talked into a pass: the reference is out of reach, the check's own process is watched -------


def test_a_fix_that_kills_the_check_is_told_its_code_ended_the_check():
    cell = "import os\n" + variant(
        "    results = []\n",
        "    results = []\n    os.kill(int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[1]), 9)\n",
    )
    verdict = check_level2_fix(cell)
    assert not verdict.passed
    assert verdict.problems == [
        "✗ あなたのコードがチェックのプロセスを止めました（SIGKILL）。"
        + verdict.problems[0].split("。", 1)[1]
    ]


def test_a_right_fix_that_rewrites_a_harness_function_is_not_trusted():
    # right by outcome, but it rebinds a harness function the check relies on (unseen by the source scan)
    cell = "import harness.ledger\nload = harness.ledger.load_effects\n" + LESSON_MINIMAL
    verdict = check_level2_fix(cell + "vars(harness.ledger)['load_effects'] = lambda path: load(path)\n")
    assert not verdict.passed and "harness.ledger.load_effects" in verdict.problems[0], verdict.report()


def test_a_fix_that_reaches_into_the_check_is_refused_before_it_runs():
    verdict = check_level2_fix("import sys\n" + LESSON_MINIMAL + "sys.modules['x'] = sys\n")
    assert not verdict.passed and "modules" in verdict.problems[0], verdict.report()


def test_a_fix_that_deletes_a_file_in_the_home_folder_fails(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "keep.txt").write_text("大事なメモ", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    cell = "from pathlib import Path\n" + variant(
        "    results = []\n",
        "    results = []\n    (Path.home() / 'notes' / 'keep.txt').unlink(missing_ok=True)\n",
    )
    verdict = check_level2_fix(cell)
    assert not verdict.passed and "削除: " in verdict.problems[-1] and "keep.txt" in verdict.problems[-1], (
        verdict.report()
    )


def test_a_fix_that_writes_into_the_home_folder_is_named_in_a_note(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    cell = "from pathlib import Path\n" + variant(
        "    results = []\n",
        "    results = []\n    for n in range(5):\n        (Path.home() / f'leak{n}.txt').write_text('x')\n",
    )
    verdict = check_level2_fix(cell)
    # five files: three named, and the two others counted (the count and the list agree)
    said = [n for n in verdict.notes if "作成: " in n]
    assert len(said) == 1 and "（5 件: " in said[0] and "leak0.txt" in said[0], verdict.report()
    assert said[0].count("作成: ") == 3 and "ほか 2 件" in said[0], verdict.report()


def test_a_right_fix_leaves_the_watched_folders_alone(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    verdict = check_level2_fix(LESSON_MINIMAL)
    assert verdict.passed, verdict.report()


def test_the_reports_length_is_compared_loosely_whatever_the_catalogues_wording():
    from harness.exercises.fixcheck import comparable, loose_length

    assert (
        comparable("report.txt に 123 文字のレポートを書き出しました")
        == "report.txt に # 文字のレポートを書き出しました"
    )
    english = loose_length(
        "Wrote {length} characters to {path}"
    )  # an edition with the parts in another order
    assert english.sub(r"\1#\2", "Wrote 123 characters to report.txt") == "Wrote # characters to report.txt"
    assert (
        english.sub(r"\1#\2", "Wrote many characters to report.txt") == "Wrote many characters to report.txt"
    )


def test_the_lessons_runs_are_made_once_and_again_only_when_the_package_changes(monkeypatch):
    from harness.exercises import fixcheck

    made = []
    real_runner = fixcheck.run_runner

    def counting(source, *rest):
        made.append("lesson" if source is None else "learner")
        return real_runner(source, *rest)

    monkeypatch.setattr(fixcheck, "run_runner", counting)
    fixcheck.lesson_reference.cache_clear()
    first, second = check_level2_fix(LESSON_MINIMAL), check_level2_fix(LESSON_MINIMAL)
    assert first.report() == second.report() and first.passed
    assert made == ["lesson", "learner", "learner"]  # the second check reused the lesson's runs
    files = fixcheck.package_files()
    path, size, mtime = files[0]
    changed = ((path, size, mtime + 1), *files[1:])  # one file saved again
    monkeypatch.setattr(fixcheck, "package_files", lambda: changed)
    check_level2_fix(LESSON_MINIMAL)
    assert made[3:] == ["lesson", "learner"]
    fixcheck.lesson_reference.cache_clear()


def test_an_answer_that_changes_a_file_of_the_package_fails_as_tampering(monkeypatch):
    from harness.exercises import fixcheck

    files = fixcheck.package_files()
    path, size, mtime = files[-1]
    calls = []

    def seen():  # as the package looks before the check, then after the answer cell ran (one file saved again)
        calls.append(1)
        return files if len(calls) == 1 else (*files[:-1], (path, size + 1, mtime + 1))

    monkeypatch.setattr(fixcheck, "package_files", seen)
    verdict = check_level2_fix(LESSON_MINIMAL)
    assert not verdict.passed
    assert "書き換えました" in verdict.problems[0] and Path(path).name in verdict.problems[0]


def test_a_wrong_fix_runs_only_up_to_the_situation_the_verdict_names(monkeypatch):
    from harness.exercises import fixcheck
    from harness.exercises.runner import situations

    reversed_order = variant(
        """        output = execute_tool(run, block)
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()})""",
        """        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        output = execute_tool(run, block)""",
    )
    seen = {}
    real_judge = fixcheck.judge

    def keeping(verdict, found, time_limit):
        seen.update(found)
        return real_judge(verdict, found, time_limit)

    monkeypatch.setattr(fixcheck, "judge", keeping)
    verdict = check_level2_fix(reversed_order)
    ran = seen["situations"]
    assert (
        not verdict.passed and fixcheck.label(ran[-1]) in verdict.problems[0]
    )  # the last one run is the one named
    assert all(fixcheck.compare(s, fixcheck.TIME_LIMIT_S)[0] is None for s in ran[:-1])
    assert len(ran) < len(situations(None))  # the situations after it were not run


def test_a_fix_that_records_a_failed_call_and_lets_the_error_out_fails():
    recorded_then_raised = variant(
        "        output = execute_tool(run, block)\n",
        """        try:
            output = execute_tool(run, block)
        except ToolError as err:
            save_effect(run.effects_path, block["id"], {"name": block["name"], "result": str(err), "at": run.clock()})
            raise
""",
    )
    verdict = check_level2_fix(recorded_then_raised)
    assert not verdict.passed and "失敗した read_notes を台帳に記録しています" in verdict.problems[0]


def test_a_fix_that_stops_at_the_first_failing_tool_leaves_the_rest_of_the_turn_unanswered():
    stops = variant(
        "        output = execute_tool(run, block)\n",
        """        try:
            output = execute_tool(run, block)
        except ToolError as err:
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": str(err), "is_error": True})
            return results
""",
    )
    verdict = check_level2_fix(stops)
    assert not verdict.passed
    assert "toolu_f1" in verdict.problems[0] and "write_report toolu_w4" in verdict.problems[0]


def test_a_fix_that_runs_the_same_call_once_for_two_ids_fails_on_the_runs():
    once = variant(
        "        output = execute_tool(run, block)\n",
        """        key = (block["name"], json.dumps(block["input"], sort_keys=True))
        output = done[key] if key in done else execute_tool(run, block)  # the same call: its result again
        done[key] = output
""",
    ).replace("    results = []\n", "    results = []\n    done = {}\n")
    verdict = check_level2_fix(once)
    assert not verdict.passed and "toolu_s1" in verdict.problems[0]


def test_a_fix_that_changes_the_content_it_was_given_is_told_so():
    removes = variant(
        "    for block in tool_use_blocks:\n",
        "    for block in tool_use_blocks:\n        content.remove(block)  # done with this block\n",
    )
    verdict = check_level2_fix(removes)
    assert not verdict.passed and "受け取った content" in verdict.problems[0]


def test_results_the_harness_refuses_are_named_as_a_missing_pair_not_as_its_error():
    empty = variant("    return results", "    return []")
    verdict = check_level2_fix(empty)
    assert not verdict.passed
    assert "tool_use_id が [] でした" in verdict.problems[0] and "HarnessError" not in verdict.problems[0]


def test_a_right_fix_using_a_dataclass_defined_in_the_cell_passes():
    with_dataclass = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Done:\n    output: str\n"
        + LESSON_MINIMAL.replace(
            "output = execute_tool(run, block)", "output = Done(execute_tool(run, block)).output"
        )
    )
    verdict = check_level2_fix(with_dataclass)
    assert verdict.passed, verdict.report()


def test_a_ledger_that_differs_only_past_what_is_shown_says_how_long_each_result_is():
    cut = variant(
        '{"name": block["name"], "result": output,', '{"name": block["name"], "result": output[:50],'
    )
    verdict = check_level2_fix(cut)
    assert not verdict.passed and "50 文字）" in verdict.problems[0]
