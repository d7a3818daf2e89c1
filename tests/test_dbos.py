"""`python -m harness --engine dbos`: the task as a DBOS workflow, crashed and recovered in real processes.

No mocks: the real engine on a real SQLite file in the work folder, and on a real PostgreSQL server that these tests
start themselves (a throwaway cluster made with initdb in a temporary folder, reached over a unix socket). Without the
server binaries the Postgres tests are skipped, unless REQUIRE_POSTGRES=1 (as in .ci/run), which makes that a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zygote

from conftest import cli_in_process
from harness import TOOL_SCHEMAS, Run, ScriptedModel, run_agent
from harness.vocab import FIXED_TIME_MS

ROOT = Path(__file__).resolve().parents[1]
TASK_ID = "sales-report"
WORKFLOW_FAILED_HINT = (
    "この記録からは再開できません（--resume は同じエラーを返すだけです）。"
    "原因を確かめてから、最初から: python -m harness --engine dbos --workdir {work}（そのとき dbos.sqlite は片付けられます）"
)
TOOLS = ("read_notes", "count_words", "write_report")

CLEAN = """\
[dbos] ワークフロー sales-report を開始（システムデータベース: dbos.sqlite）
[turn 1][step 1 記録] モデル pending=read_notes
[turn 1][step 2 記録] read_notes の結果
[turn 2][step 3 記録] モデル pending=count_words
[turn 2][step 4 記録] count_words の結果
[turn 3][step 5 記録] モデル pending=write_report
[turn 3][step 6 記録] write_report の結果
[step 7 記録] モデルの締めくくり
[done] report.txt にレポートを書き出しました。タスク完了。
"""

# ② on write_report: the tool ran, its step was not recorded. The resume replays steps 1-5 and runs step 6 again.
MOMENT_2_CRASH = """\
[dbos] ワークフロー sales-report を開始（システムデータベース: dbos.sqlite）
[turn 1][step 1 記録] モデル pending=read_notes
[turn 1][step 2 記録] read_notes の結果
[turn 2][step 3 記録] モデル pending=count_words
[turn 2][step 4 記録] count_words の結果
[turn 3][step 5 記録] モデル pending=write_report
[kill] after-tool-run:3 で疑似キル
"""
MOMENT_2_RESUME = """\
[resume] ワークフロー sales-report を DBOS が回復（状態 PENDING、記録済みのステップ 5 個）
[turn 1][step 1 再利用] モデル pending=read_notes
[turn 1][step 2 再利用] read_notes の結果
[turn 2][step 3 再利用] モデル pending=count_words
[turn 2][step 4 再利用] count_words の結果
[turn 3][step 5 再利用] モデル pending=write_report
[turn 3][step 6 記録] write_report の結果
[step 7 記録] モデルの締めくくり
[done] report.txt にレポートを書き出しました。タスク完了。
"""


def harness(
    workdir: Path, *args: str, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m harness --engine dbos --workdir WORKDIR ARGS` as a real process, this checkout's package (forked from
    this worker's zygote, zygote.py, which has imported DBOS already)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    full.update({"PYTHONPATH": str(ROOT), "HARNESS_FIXED_TIME_MS": str(FIXED_TIME_MS), **(env or {})})
    argv = [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir", str(workdir), *args]
    return zygote.run(argv, full, timeout)


def rows(db: Path, sql: str, *args) -> list[tuple]:
    from urllib.parse import quote

    con = sqlite3.connect(f"file:{quote(os.fsencode(db))}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def tool_runs(workdir: Path) -> list[str]:
    path = workdir / "tool-runs.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def lesson_report(tmp_path: Path) -> str:
    """The report the lesson's own harness writes on a clean run: the independent truth for the engine's report."""
    run = Run(tmp_path / "lesson", clock=lambda: FIXED_TIME_MS)
    run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS)
    return (tmp_path / "lesson" / "report.txt").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------- SQLite path


def test_clean_run_records_each_model_call_and_each_tool_call_as_a_step(tmp_path):
    work = tmp_path / "w"
    proc = harness(work)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, CLEAN, "")
    db = work / "dbos.sqlite"
    assert rows(db, "SELECT workflow_uuid, status, name, queue_name FROM workflow_status") == [
        (TASK_ID, "SUCCESS", "lesson6_task", "harness-task/sales-report")
    ]
    steps = rows(db, "SELECT function_id, function_name FROM operation_outputs ORDER BY function_id")
    assert steps == [(1, "call_model"), (2, "read_notes"), (3, "call_model"), (4, "count_words"),
                     (5, "call_model"), (6, "write_report"), (7, "call_model")]  # fmt: skip
    assert tool_runs(work) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]
    assert (work / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)
    assert not (work / "checkpoint.json").exists() and not (work / "effects.json").exists()


def test_a_kill_at_moment_2_leaves_the_workflow_pending_and_the_resume_runs_the_killed_step_again(tmp_path):
    work = tmp_path / "w"
    crash = harness(work, env={"CRASH_AFTER": "after-tool-run:3"})
    assert (crash.returncode, crash.stdout) == (137, MOMENT_2_CRASH)
    db = work / "dbos.sqlite"
    assert rows(db, "SELECT status FROM workflow_status") == [("PENDING",)]
    assert rows(db, "SELECT MAX(function_id) FROM operation_outputs") == [
        (5,)
    ]  # write_report's step: no record
    assert tool_runs(work)[-1] == "write_report toolu_03"  # ... though the tool ran
    resume = harness(work, "--resume")
    assert (resume.returncode, resume.stdout, resume.stderr) == (0, MOMENT_2_RESUME, "")
    assert (
        tool_runs(work).count("write_report toolu_03") == 2
    )  # at least once: the side effect happened twice
    assert rows(db, "SELECT status, recovery_attempts FROM workflow_status") == [("SUCCESS", 2)]
    assert rows(db, "SELECT COUNT(*) FROM operation_outputs") == [(7,)]


LABELS = ("after-save-a", "after-tool-run", "after-effect-write", "after-save-b")
SWEEP = [(label, n, "simulated") for label in LABELS for n in (1, 2, 3)]
SIGKILL = [(label, 3, "sigkill") for label in ("after-save-a", "after-tool-run", "after-save-b")]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Every case crashed, the system database read, then resumed: real processes, four at a time (2-core machine)."""
    base = tmp_path_factory.mktemp("sweep")

    def case(spec):
        label, n, mode = spec
        work = base / f"{label}-{n}-{mode}"
        crash = harness(work, env={"CRASH_AFTER": f"{label}:{n}", "CRASH_MODE": mode})
        recorded = rows(work / "dbos.sqlite", "SELECT COUNT(*) FROM operation_outputs")[0][0]
        resume = harness(work, "--resume")
        return spec, (work, crash, recorded, resume)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(case, SWEEP + SIGKILL)), lesson_report(base)


@pytest.mark.parametrize("spec", SWEEP, ids=lambda s: f"{s[0]}:{s[1]}")
def test_every_crash_label_on_every_turn_recovers_through_the_engine(sweep, spec):
    results, expected_report = sweep
    work, crash, recorded, resume = results[spec]
    label, n, _ = spec
    assert crash.returncode == 137
    assert crash.stdout.splitlines()[-1] == f"[kill] {label}:{n} で疑似キル"
    # ① and ②: the model step of turn n is the last record (2n-1 steps); after the tool step: 2n
    assert recorded == (2 * n - 1 if label in ("after-save-a", "after-tool-run") else 2 * n)
    assert resume.returncode == 0 and resume.stderr == ""
    lines = resume.stdout.splitlines()
    assert lines[0].endswith(f"記録済みのステップ {recorded} 個）")
    assert sum("再利用" in line for line in lines) == recorded  # every recorded step replayed, none run
    assert lines[-1] == "[done] report.txt にレポートを書き出しました。タスク完了。"
    runs = tool_runs(work)
    for turn, tool in enumerate(TOOLS, 1):
        again = label == "after-tool-run" and turn == n  # only a tool killed inside its step runs twice
        assert runs.count(f"{tool} toolu_{turn:02d}") == (2 if again else 1), runs
    assert (work / "report.txt").read_text(encoding="utf-8") == expected_report
    assert rows(work / "dbos.sqlite", "SELECT status FROM workflow_status") == [("SUCCESS",)]


@pytest.mark.parametrize("spec", SIGKILL, ids=lambda s: s[0])
def test_crash_mode_sigkill_really_kills_and_the_engine_recovers(sweep, spec):
    work, crash, _, resume = sweep[0][spec]
    assert crash.returncode == -9
    assert crash.stdout.splitlines()[-1] == f"[kill] {spec[0]}:3 で SIGKILL（本物のキル）"
    assert resume.returncode == 0 and resume.stdout.endswith("タスク完了。\n")
    assert tool_runs(work).count("write_report toolu_03") == (2 if spec[0] == "after-tool-run" else 1)


@pytest.mark.parametrize("label", ["after-save-a", "after-tool-run"])
def test_an_idempotent_write_report_keyed_by_workflow_and_step_ids_writes_once_at_moments_1_and_2(
    tmp_path, label
):
    work = tmp_path / "w"
    crash = harness(work, env={"CRASH_AFTER": f"{label}:3", "HARNESS_IDEMPOTENT_TOOLS": "1"})
    assert crash.returncode == 137
    before = (work / "report.txt").stat().st_ino if (work / "report.txt").exists() else None
    resume = harness(work, "--resume")  # no variable: the workflow's recorded input says idempotent
    assert resume.returncode == 0, resume.stderr
    report = (work / "report.txt").read_text(encoding="utf-8")
    expected = lesson_report(tmp_path)
    assert report == f"<!-- 冪等キー: {TASK_ID}/6 -->\n" + expected  # notebook 12's format: the key first
    skipped = "[tool] write_report: キー sales-report/6 のレポートはすでにある、書き直さない"
    if (
        label == "after-tool-run"
    ):  # ran before the kill: the second run of the step finds its key and writes nothing
        assert skipped in resume.stdout.splitlines()
        assert (work / "report.txt").stat().st_ino == before  # the same file: not replaced by a second write
        assert tool_runs(work).count("write_report toolu_03") == 2
    else:  # never ran before the kill: the resume writes it, once
        assert before is None and skipped not in resume.stdout
        assert tool_runs(work).count("write_report toolu_03") == 1
    # the conversation recorded is the clean run's: the tool answers as write_report does, for the report itself
    out = rows(work / "dbos.sqlite", "SELECT output FROM operation_outputs WHERE function_id = 6")[0][0]
    assert json.loads(out)["content"] == f"report.txt に {len(expected)} 文字のレポートを書き出しました"


def test_resuming_a_finished_workflow_returns_its_recorded_result_and_runs_nothing(tmp_path):
    work = tmp_path / "w"
    assert harness(work).returncode == 0
    again = harness(work, "--resume")
    assert again.returncode == 0
    assert again.stdout == (
        "[resume] ワークフロー sales-report はすでに完了しています（状態 SUCCESS）。記録された結果を返し、何も実行しない\n"
        "[done] report.txt にレポートを書き出しました。タスク完了。\n"
    )
    assert len(tool_runs(work)) == 3


def test_a_fresh_run_starts_over_with_a_new_system_database(tmp_path):
    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-save-b:2"}).returncode == 137
    fresh = harness(work)
    assert (fresh.returncode, fresh.stdout) == (0, CLEAN)
    assert rows(work / "dbos.sqlite", "SELECT COUNT(*) FROM operation_outputs") == [(7,)]
    assert len(tool_runs(work)) == 3


def test_the_lesson_command_line_imports_neither_dbos_nor_sqlalchemy(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", "--workdir", str(tmp_path / "w")],
        capture_output=True, text=True, env={**env, "PYTHONPATH": str(ROOT)}, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "harness" in imported
    assert not imported & {"dbos", "sqlalchemy", "psycopg"}


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["--resume"], {}, 1, "dbos.sqlite がありません。--resume する対象のワークフローがありません。"),
        (
            [],
            {"CRASH_AFTER": "effects-torn-write:1"},
            1,
            "CRASH_AFTER=effects-torn-write は --engine dbos では使えません",
        ),
        (
            ["--database-url", "mysql://u:secret@h/x"],
            {},
            1,
            "データベースの URL mysql://… は使えません（postgresql:// か sqlite:/// で始まっていません）",
        ),
        ([], {"HARNESS_TASK_ID": "a b"}, 1, "HARNESS_TASK_ID=a b は使えません"),
        ([], {"HARNESS_EXECUTOR_ID": "x" * 101}, 1, "HARNESS_EXECUTOR_ID="),
    ],
)
def test_bad_settings_are_refused_in_japanese_without_a_traceback(tmp_path, args, env, code, message):
    """In this process for every case (refused before any workflow starts); the same refusal from a real process is
    test_a_refusal_from_a_real_process_is_the_same_as_in_process."""
    work = tmp_path / "w"
    work.mkdir()
    got, _, err = cli_in_process("--engine", "dbos", "--workdir", str(work), *args, env=env)
    assert got == code
    assert message in err and "Traceback" not in err
    assert "secret" not in err
    assert not (work / "dbos.sqlite").exists()


@pytest.mark.parametrize("name", ["checkpoint.json", "report.txt", "sales-notes.txt", "q.db", "sub/q.db"])
@pytest.mark.parametrize("spelling", ["absolute", "through-a-link"])
def test_a_database_url_inside_the_work_folder_is_refused_before_anything_is_written(
    tmp_path, name, spelling
):
    """The work folder's files are the harness's: a SQLite database given by URL inside it (named after a harness
    file or not, through a link to the folder or not) is refused up front, and nothing is written there."""
    work = tmp_path / "w"
    (work / "sub").mkdir(parents=True)
    base = work
    if spelling == "through-a-link":
        base = tmp_path / "link"
        base.symlink_to(work)
    before = sorted(p.name for p in work.rglob("*"))
    code, _, err = cli_in_process(
        "--engine", "dbos", "--workdir", str(work), "--database-url", f"sqlite:///{base / name}"
    )
    assert code == 1 and "Traceback" not in err, err
    assert "作業フォルダ" in err and "の中のファイルです" in err, err
    assert sorted(p.name for p in work.rglob("*")) == before


@pytest.mark.parametrize(
    "argv, shown",
    [
        (["--engine", "redis"], "--engine redis "),
        (["--engine", ""], '--engine "" '),
        (["--database-url", "sqlite:///x.db"], "--database-url "),
    ],
)
def test_an_unknown_engine_or_a_database_url_without_the_engine_is_a_usage_error(tmp_path, argv, shown):
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "--workdir", str(tmp_path / "w"), *argv],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.startswith(shown), (
        proc.stderr
    )


def test_a_system_database_that_is_not_one_is_called_damaged_and_left_alone(tmp_path):
    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-save-a:2"}).returncode == 137
    db = work / "dbos.sqlite"
    db.write_bytes(b"not a database" * 100)
    proc = harness(work, "--resume")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    damaged = "システムデータベース dbos.sqlite は壊れています（file is not a database）。"
    assert proc.stderr.splitlines() == [
        f"エラー: {damaged}ワークフローの記録を読めないので、再開できません。",
        "--resume なしで最初からやり直してください（そのとき dbos.sqlite は片付けられます。この実行では何も消していません）。",
    ]
    assert db.read_bytes() == b"not a database" * 100


@pytest.fixture(scope="module")
def crashed_once(tmp_path_factory):
    """A work folder killed at ① of turn 2: a real system database with a PENDING workflow, copied by each test."""
    work = tmp_path_factory.mktemp("crashed") / "w"
    assert harness(work, env={"CRASH_AFTER": "after-save-a:2"}).returncode == 137
    return work


def plant(path: Path, kind: str, outside: Path) -> None:
    if path.exists():
        path.unlink()
    if kind == "link":
        path.symlink_to(outside)
    elif kind == "hardlink":
        outside.write_bytes(b"")
        os.link(outside, path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()


@pytest.mark.parametrize(
    ("name", "kind", "said"),
    [
        ("dbos.sqlite", "link", "シンボリックリンク"),
        ("dbos.sqlite", "hardlink", "ハードリンク"),
        ("dbos.sqlite", "folder", "フォルダ"),
        ("dbos.sqlite-journal", "link", "シンボリックリンク"),
        ("dbos.sqlite-wal", "fifo", "FIFO"),
    ],
)
def test_resume_refuses_a_system_database_file_that_is_not_a_plain_file_before_opening_it(
    tmp_path, crashed_once, name, kind, said
):
    work = tmp_path / "w"
    shutil.copytree(crashed_once, work)
    outside = tmp_path / "outside" / "outside.db"
    outside.parent.mkdir()
    if kind == "link" and name == "dbos.sqlite":  # the real database moved out, a link left in its place
        shutil.move(work / name, outside)
    plant(work / name, kind, outside)
    before = outside.read_bytes() if outside.exists() else None
    proc = harness(work, "--resume", timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2 and said in lines[0]
    assert lines[0].startswith(f"エラー: 作業フォルダの {name} は普通のファイルではありません")
    assert "--resume なしで最初から実行してください" in lines[1]
    assert (outside.read_bytes() if outside.exists() else None) == before  # nothing written through it
    assert sorted(p.name for p in outside.parent.iterdir()) == (["outside.db"] if before is not None else [])
    assert tool_runs(work) == ["read_notes toolu_01"]  # nothing ran since the kill


def test_a_folder_the_harness_did_not_make_keeps_its_dbos_sqlite(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    (work / "dbos.sqlite").write_bytes(b"someone else's")
    proc = harness(work)
    assert proc.returncode == 1 and "自分で作っていないファイルは消しません" in proc.stderr
    assert (work / "dbos.sqlite").read_bytes() == b"someone else's"


class TwoToolsAtOnce:
    """A model that names two tools in one response (the lesson's harness handles one pending call per turn)."""

    def __init__(self) -> None:
        self.messages = self

    def create(self, **_: object) -> dict:
        uses = [{"type": "tool_use", "id": f"toolu_{i}", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
                for i in (1, 2)]  # fmt: skip
        return {"content": uses, "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}}


def test_a_workflow_that_fails_ends_with_one_japanese_line_and_stays_failed(tmp_path, capfd):
    from harness import HarnessError
    from harness.__main__ import Options
    from harness.beyond.engine_dbos import main

    options = Options(workdir=str(tmp_path / "w"))
    options.engine = "dbos"
    (tmp_path / "w").mkdir()
    with pytest.raises(HarnessError) as err:
        main(options, Run(tmp_path / "w"), TwoToolsAtOnce(), env={})
    reason = "モデルが1ターンに 2 個の tool_use を返しました。このハーネスは宙ぶらりんな呼び出しを1つしか扱えません。"
    assert str(err.value).splitlines() == [
        f"ワークフロー sales-report はエラーで終わりました（状態 ERROR）: {reason}",
        WORKFLOW_FAILED_HINT.format(work=tmp_path / "w"),
    ]
    assert "Traceback" not in capfd.readouterr().err  # DBOS's own log of the failure stays quiet
    assert rows(tmp_path / "w" / "dbos.sqlite", "SELECT status FROM workflow_status") == [("ERROR",)]
    resume = harness(tmp_path / "w", "--resume")
    assert resume.returncode == 1
    assert resume.stderr.splitlines() == [  # the recorded reason, and what to do
        f"エラー: ワークフロー sales-report はエラーで終わりました（状態 ERROR）: {reason}",
        WORKFLOW_FAILED_HINT.format(work=tmp_path / "w"),
    ]
    followed = run_advice(
        resume.stderr.splitlines()[1], tmp_path
    )  # the advice, followed, starts the task over
    assert followed.returncode == 0, followed.stderr


def test_the_notebook_views_read_the_engine_tables_as_json(tmp_path):
    from harness.lab import dbos_view

    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-tool-run:3"}).returncode == 137
    assert {"workflow_status", "operation_outputs"} <= set(dbos_view.table_names(work))
    steps = dbos_view.steps(work).splitlines()
    assert len(steps) == 1 + 5 and "tool_use write_report (toolu_03)" in steps[-1]
    assert dbos_view.step_output(work, 4)["tool_use_id"] == "toolu_02"
    assert (
        dbos_view.summary(work).splitlines()[0]
        == "dbos.sqlite: sales-report PENDING、記録済みのステップ 5 個"
    )
    assert dbos_view.tool_runs(work) == 1


def test_measured_cost_counts_three_file_writes_and_two_database_commits_per_turn(tmp_path):
    from harness.lab.dbos_view import measure_cost

    cost = measure_cost(tmp_path, runs=1)
    assert (
        cost["lesson"]["writes_per_task"] == 3 * 3 + 1
    )  # point A, ledger, point B on each of 3 turns; closing
    assert (
        cost["dbos"]["writes_per_task"] == 2 * 3 + 1 + 2
    )  # two steps per turn, the closing step, start and end


# ------------------------------------------------------------------------------- a real model server on 127.0.0.1


@pytest.fixture
def api():
    """The hostile stand-in for the Messages API (tests/hostile.py): the lesson's conversation unless planned."""
    pytest.importorskip("anthropic")
    from hostile import HostileAPI

    server = HostileAPI()
    yield server
    server.close()


def message(content: list[dict], stop_reason: str) -> tuple:
    from hostile import json_answer

    return json_answer(200, {"id": "msg_x", "type": "message", "role": "assistant", "model": "m",
                             "content": content, "stop_reason": stop_reason,
                             "usage": {"input_tokens": 1, "output_tokens": 1}})  # fmt: skip


def writes_keep_txt(content: str, tool_use_id: str = "toolu_zz"):
    """A plan: a model that writes keep.txt (a name the fresh start does not clean) with `content`, then ends."""

    def plan(_: int, body: dict) -> tuple:
        if len(body["messages"]) == 1:
            use = {"type": "tool_use", "id": tool_use_id, "name": "write_report",
                   "input": {"path": "keep.txt", "content": content}}  # fmt: skip
            return message([use], "tool_use")
        return message([{"type": "text", "text": "keep.txt に書きました。"}], "end_turn")

    return plan


def recorded_result(work: Path, step: int) -> dict:
    out = rows(work / "dbos.sqlite", "SELECT output FROM operation_outputs WHERE function_id = ?", step)[0][0]
    return json.loads(out)


KEY_2 = "<!-- 冪等キー: sales-report/2 -->\n"  # the first line, as notebook 12's idempotent write_report


def test_a_fresh_run_reusing_a_key_for_other_content_cannot_tell_and_writes_nothing(tmp_path, api):
    """The key is workflow id/step id, the same in every fresh run; keep.txt keeps the first run's key line."""
    work = tmp_path / "w"
    first, second = "一回目の本文\n", "二回目の、もっと長い本文です\n"
    api.plan = writes_keep_txt(first)
    assert harness(work, "--real", env={**api.env(), "HARNESS_IDEMPOTENT_TOOLS": "1"}).returncode == 0
    assert (work / "keep.txt").read_text(encoding="utf-8") == KEY_2 + first
    api.plan = writes_keep_txt(second)
    again = harness(work, "--real", env={**api.env(), "HARNESS_IDEMPOTENT_TOOLS": "1"})
    assert again.returncode == 0, again.stderr
    assert "すでにある" not in again.stdout  # not "already written": this call never wrote keep.txt
    assert (work / "keep.txt").read_text(encoding="utf-8") == KEY_2 + first  # left as it was, not overwritten
    result = recorded_result(work, 2)
    assert result["is_error"] is True
    assert "呼び出し sales-report/2 が起きたかどうかは分かりません" in result["content"]
    assert "書き出しました" not in result["content"]  # the model is never told a write that is not on disk


def test_a_fresh_run_that_asks_for_exactly_what_is_there_is_answered_with_what_is_on_disk(tmp_path, api):
    work = tmp_path / "w"
    api.plan = writes_keep_txt("同じ本文\n")
    assert harness(work, "--real", env={**api.env(), "HARNESS_IDEMPOTENT_TOOLS": "1"}).returncode == 0
    again = harness(work, "--real", env={**api.env(), "HARNESS_IDEMPOTENT_TOOLS": "1"})
    assert "[tool] write_report: キー sales-report/2 のレポートはすでにある、書き直さない" in again.stdout
    assert (work / "keep.txt").read_text(encoding="utf-8") == KEY_2 + "同じ本文\n"
    assert recorded_result(work, 2)["content"] == "keep.txt に 5 文字のレポートを書き出しました"  # 同じ本文\n


def test_write_report_once_writes_skips_or_cannot_tell_by_key_and_content(tmp_path):
    from harness import ToolError
    from harness.beyond.engine_dbos import write_report_once

    events: list = []
    run = Run(tmp_path, listeners=[events.append])
    once = write_report_once(run, "sales-report/6")
    report = {"path": "r.md", "content": "本文\n"}
    assert once(tmp_path, report) == "r.md に 3 文字のレポートを書き出しました"
    written = (tmp_path / "r.md").stat().st_ino
    assert once(tmp_path, report) == "r.md に 3 文字のレポートを書き出しました"  # the same call again
    assert (tmp_path / "r.md").stat().st_ino == written and [e.kind for e in events] == ["already_written"]
    with pytest.raises(ToolError, match="呼び出し sales-report/6 が起きたかどうかは分かりません"):
        once(tmp_path, {**report, "content": "別の本文\n"})  # the same key, other content: another call
    assert (tmp_path / "r.md").read_text(encoding="utf-8") == KEY_2.replace("/2", "/6") + "本文\n"
    assert write_report_once(run, "sales-report/4")(tmp_path, report)  # another key: an ordinary write
    assert (tmp_path / "r.md").read_text(encoding="utf-8").startswith("<!-- 冪等キー: sales-report/4 -->\n")


def failing_second_call(case: str):
    from hostile import error_answer, scripted_answer

    def plan(n: int, body: dict):
        if n != 2:
            return None
        if case == "400":
            return error_answer(400, "bad request")
        if case == "deadline":
            return ("stall",)
        _, response = scripted_answer(body)  # a lone surrogate: valid JSON that cannot be stored as UTF-8
        response["content"].insert(0, {"type": "text", "text": "SURROGATE"})
        data = json.dumps(response).replace("SURROGATE", "\\ud800").encode()
        return ("bytes", 200, data, "application/json")

    return plan


@pytest.mark.parametrize("case", ["400", "deadline", "surrogate"])
def test_an_api_failure_leaves_the_workflow_pending_and_resume_asks_the_model_again(tmp_path, api, case):
    work = tmp_path / "w"
    api.plan = failing_second_call(case)
    failed = harness(work, "--real", env=api.env(HARNESS_API_DEADLINE_S="3"))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    lines = [line for line in failed.stderr.splitlines() if not line.startswith("[待機中]")]
    assert len(lines) == 2 and lines[0].startswith("エラー: モデルの API 呼び出しが失敗しました（")
    assert lines[1] == (
        "ワークフロー sales-report は記録済みのステップのまま残っています（失敗としては記録していません）。"
        f"原因が解消したら、このモデル呼び出しからやり直せます: python -m harness --engine dbos --resume --workdir {work}"
    )
    db = work / "dbos.sqlite"
    assert rows(db, "SELECT status FROM workflow_status") == [("PENDING",)]
    # the failure is not recorded: two steps, neither an error
    assert rows(db, "SELECT COUNT(*), COUNT(error) FROM operation_outputs") == [(2, 0)]
    api.plan = None
    resumed = harness(work, "--resume", "--real", env=api.env())
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines()[3] == "[turn 2][step 3 記録] モデル pending=count_words"
    assert resumed.stdout.endswith("[done] report.txt にレポートを書き出しました。タスク完了。\n")
    assert rows(db, "SELECT status FROM workflow_status") == [("SUCCESS",)]
    assert tool_runs(work) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]


def damage(work: Path, how: str) -> None:
    db = work / "dbos.sqlite"
    if how == "replaced":  # what write_report's rename over dbos.sqlite did
        (work / "x.tmp").write_text("レポート\n", encoding="utf-8")
        os.replace(work / "x.tmp", db)
    elif how == "overwritten":
        with open(db, "r+b") as f:
            f.write(b"garbage!" * 4096)
    else:
        db.unlink()


@pytest.mark.parametrize("how", ["replaced", "overwritten", "removed"])
def test_a_system_database_that_becomes_unusable_during_a_run_ends_it_with_a_message(tmp_path, api, how):
    work = tmp_path / "w"

    def plan(n: int, body: dict):
        if n == 2:
            damage(work, how)  # between the record of step 2 and that of step 3

    api.plan = plan
    proc = harness(work, "--real", env=api.env(), timeout=300)  # it used to wait for its record forever
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("エラー: システムデータベース dbos.sqlite が実行中に使えなくなりました（")
    assert "--resume なしで最初からやり直してください" in lines[1]
    assert proc.stdout.splitlines()[-1] == "[turn 1][step 2 記録] read_notes の結果"
    if how == "replaced":  # never deleted by the harness
        assert (work / "dbos.sqlite").read_text(encoding="utf-8") == "レポート\n"


STOP_TWICE = """
import os, threading
from harness.beyond import dbos_worker

real_exit, both = os._exit, threading.Barrier(2, timeout=5)


def exit_once_both_have_spoken(code):  # the process ends only after a second thread could have printed too
    try:
        both.wait()
    except threading.BrokenBarrierError:  # the other thread never got that far: it was held back
        pass
    real_exit(code)


os._exit = exit_once_both_have_spoken
threads = [threading.Thread(target=dbos_worker.stop_now, args=(f"理由 {i}",)) for i in (1, 2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def test_two_threads_that_end_the_process_at_once_print_one_reason(tmp_path):
    """The watch and the workflow may both find the database gone: the person reads one error, not two interleaved."""
    proc = subprocess.run([sys.executable, "-c", STOP_TWICE], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines() in (["エラー: 理由 1"], ["エラー: 理由 2"]), proc.stderr


# -------------------------------------------------------------------------------------------------- Postgres path


@pytest.fixture(scope="module")
def cluster():
    """A throwaway PostgreSQL cluster (harness/lab/postgres.py) for this module; the tests may stop and restart it."""
    from harness.lab.postgres import Cluster, server_binaries

    if server_binaries() is None:
        if os.environ.get("REQUIRE_POSTGRES") == "1":
            pytest.fail("REQUIRE_POSTGRES=1 but no PostgreSQL server binaries (initdb, pg_ctl) were found")
        pytest.skip(
            "no PostgreSQL server binaries (initdb, pg_ctl); set REQUIRE_POSTGRES=1 to make this a failure"
        )
    server = Cluster()
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def postgres(cluster):
    """A URL maker for databases on the running cluster (started again if a test left it stopped)."""
    cluster.start()
    return cluster.url


def _pg_rows(url: str, sql: str) -> list[tuple]:
    import sqlalchemy as sa

    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
    finally:
        engine.dispose()


def test_postgres_a_killed_workflow_is_recovered_from_the_server(tmp_path, postgres):
    url = postgres("single")
    work = tmp_path / "w"
    crash = harness(
        work, "--database-url", url, env={"CRASH_AFTER": "after-tool-run:3", "CRASH_MODE": "sigkill"}
    )
    assert crash.returncode == -9
    assert not (work / "dbos.sqlite").exists()
    assert _pg_rows(url, "SELECT status FROM dbos.workflow_status") == [("PENDING",)]
    resume = harness(work, "--resume", "--database-url", url)
    assert resume.returncode == 0, resume.stderr
    # a shared database: every line names its task
    assert resume.stdout.splitlines()[1:] == [
        f"[{TASK_ID}]{line}" for line in MOMENT_2_RESUME.splitlines()[1:]
    ]
    assert _pg_rows(url, "SELECT status FROM dbos.workflow_status") == [("SUCCESS",)]
    assert tool_runs(work).count("write_report toolu_03") == 2


def test_postgres_two_workers_the_second_recovers_the_workflow_the_first_was_killed_in(tmp_path, postgres):
    url = postgres("workers")
    work = tmp_path / "shared"  # the outside world both workers reach (one machine here)
    first = harness(work, env={"CRASH_AFTER": "after-save-a:2", "CRASH_MODE": "sigkill",
                               "HARNESS_DATABASE_URL": url, "HARNESS_EXECUTOR_ID": "worker-a"})  # fmt: skip
    assert first.returncode == -9
    assert _pg_rows(url, "SELECT status, executor_id FROM dbos.workflow_status") == [
        ("PENDING", "worker-a/sales-report")
    ]
    second = harness(work, "--resume", env={"HARNESS_DATABASE_URL": url, "HARNESS_EXECUTOR_ID": "worker-b"})
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert lines[0] == (
        "[sales-report][resume] ワークフロー sales-report を DBOS が回復（状態 PENDING、実行者 worker-a → worker-b、"
        "記録済みのステップ 3 個）"
    )
    assert lines[1:4] == [
        "[sales-report][turn 1][step 1 再利用] モデル pending=read_notes",
        "[sales-report][turn 1][step 2 再利用] read_notes の結果",
        "[sales-report][turn 2][step 3 再利用] モデル pending=count_words",
    ]
    assert lines[-1] == "[sales-report][done] report.txt にレポートを書き出しました。タスク完了。"
    assert _pg_rows(url, "SELECT status, executor_id FROM dbos.workflow_status") == [
        ("SUCCESS", "worker-b/sales-report")
    ]
    assert tool_runs(work) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]
    # a second fresh start under the same task id is refused: the database is shared, never wiped
    again = harness(work, env={"HARNESS_DATABASE_URL": url, "HARNESS_EXECUTOR_ID": "worker-a"})
    assert again.returncode == 1 and "すでにあります（状態 SUCCESS）" in again.stderr
    assert (work / "report.txt").exists()


# ------------------------------------------------------------------------- several workers, one shared database


class Worker:
    """`python -m harness --engine dbos` running in the background; its lines are read as they come, so a test can
    wait for a state (a line) rather than for a time. Every wait has a deadline that fails the test, never hangs."""

    def __init__(self, workdir: Path, *args: str, env: dict | None = None) -> None:
        import queue
        import threading

        full = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
        full.update({"PYTHONPATH": str(ROOT), "HARNESS_FIXED_TIME_MS": str(FIXED_TIME_MS), **(env or {})})
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir", str(workdir), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
        )  # fmt: skip
        self.lines: queue.Queue = queue.Queue()
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [threading.Thread(target=self._read, args=(stream, kept), daemon=True)
                        for stream, kept in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]  # fmt: skip
        for reader in self.readers:
            reader.start()

    def _read(self, stream, kept: list[str]) -> None:
        for line in stream:
            kept.append(line.rstrip("\n"))
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 120) -> str:
        import queue
        import time

        end = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                pytest.fail(f"no line with {text!r} within {timeout} s: {self.out} {self.err}")
            if text in line:
                return line

    def finish(self, timeout: float = 180) -> int:
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"the worker did not end within {timeout} s: {self.out} {self.err}")
        for reader in self.readers:  # both pipes read to their end
            reader.join(timeout=30)
        return code


def finish_all(workers: list[Worker], timeout: float = 240) -> list[int]:
    return [w.finish(timeout) for w in workers]


def one_report_each(folders: list[Path], expected: str) -> None:
    for folder in folders:
        assert tool_runs(folder) == [
            "read_notes toolu_01",
            "count_words toolu_02",
            "write_report toolu_03",
        ], folder
        assert (folder / "report.txt").read_text(encoding="utf-8") == expected


@pytest.mark.parametrize("n", [2, 3, 5])
@pytest.mark.parametrize("executors", ["named", "default"])
def test_postgres_n_workers_on_n_tasks_each_finish_their_own_task_in_their_own_folder(
    tmp_path, postgres, n, executors
):
    url = postgres(f"many_{n}_{executors}")
    folders = [tmp_path / f"w{i}" for i in range(n)]
    workers = []
    for i, folder in enumerate(folders):
        env = {"HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": f"t{i}", "HARNESS_SLOW_MS": "100"}
        if executors == "named":
            env["HARNESS_EXECUTOR_ID"] = f"worker-{i}"
        workers.append(Worker(folder, env=env))
        if (
            i == 0
        ):  # the first task is running (its workflow PENDING) while the others launch, recover and run
            workers[0].wait_for("[step 1 記録]")
            os.kill(workers[0].proc.pid, signal.SIGSTOP)
    try:
        assert finish_all(workers[1:]) == [0] * (n - 1), [w.err for w in workers]
    finally:
        os.kill(workers[0].proc.pid, signal.SIGCONT)
    assert workers[0].finish() == 0, workers[0].err
    one_report_each(folders, lesson_report(tmp_path))
    for i, worker in enumerate(workers):
        assert all(line.startswith(f"[t{i}]") for line in worker.out), worker.out  # its own task's lines only
        assert sum("記録]" in line for line in worker.out) == 7  # every step run once, none replayed
    runner = {"named": "worker-{i}/t{i}", "default": "local/t{i}"}[executors]
    assert sorted(_pg_rows(url, "SELECT workflow_uuid, status, executor_id, recovery_attempts FROM dbos.workflow_status")) == [
        (f"t{i}", "SUCCESS", runner.format(i=i), 1) for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "runs_in_b"),
    [("after-save-a:3", ["write_report toolu_03"]), ("after-tool-run:3", ["write_report toolu_03"]),
     ("after-save-b:3", [])],
)  # fmt: skip
def test_postgres_a_killed_worker_is_taken_over_from_another_folder_after_its_folder_is_deleted(
    tmp_path, postgres, label, runs_in_b
):
    url = postgres(f"takeover_{label.split(':')[0].replace('-', '_')}")
    env = {"HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": "job-7"}
    a, b = tmp_path / "machine-a" / "w", tmp_path / "machine-b" / "w"
    killed = harness(
        a, env={**env, "HARNESS_EXECUTOR_ID": "a", "CRASH_AFTER": label, "CRASH_MODE": "sigkill"}
    )
    assert killed.returncode == -9
    shutil.rmtree(tmp_path / "machine-a")  # the other machine is gone
    taken = harness(b, "--resume", env={**env, "HARNESS_EXECUTOR_ID": "b"}, timeout=120)
    assert taken.returncode == 0, taken.stderr
    assert taken.stdout.splitlines()[0].startswith(
        "[job-7][resume] ワークフロー job-7 を DBOS が回復（状態 PENDING、実行者 a → b"
    )
    assert not (tmp_path / "machine-a").exists()  # nothing written where the dead worker was
    assert tool_runs(b) == runs_in_b  # the steps recorded before the kill were replayed, not run again
    if runs_in_b:
        assert (b / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)
    else:  # write_report ran on machine A: the truth is that its report is not here
        assert not (b / "report.txt").exists()
        note = [line for line in taken.stdout.splitlines() if "この作業フォルダにはありません" in line]
        assert note and f"ワークフローを始めたフォルダ: {a}" in note[0]
    assert _pg_rows(url, "SELECT status, executor_id FROM dbos.workflow_status") == [("SUCCESS", "b/job-7")]


FINISHED = "[done-1][resume] ワークフロー done-1 はすでに完了しています（状態 SUCCESS）。記録された結果を返し、何も実行しない"
DONE = "[done-1][done] report.txt にレポートを書き出しました。タスク完了。"


def finished_on_a_shared_database(tmp_path: Path, request, kind: str, name: str) -> tuple[dict, Path]:
    """A task run to its end in folder a on a shared database (SQLite file or PostgreSQL): (its settings, a)."""
    url = (request.getfixturevalue("postgres")(name) if kind == "postgres"
           else f"sqlite:///{tmp_path / 'shared.db'}")  # fmt: skip
    env = {"HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": "done-1"}
    a = tmp_path / "a"
    first = harness(a, env=env)
    assert first.returncode == 0, first.stderr
    return env, a


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_finished_workflow_resumed_in_its_own_folder_returns_its_result_and_says_nothing_more(
    tmp_path, request, kind
):
    env, a = finished_on_a_shared_database(tmp_path, request, kind, "finished_here")
    again = harness(a, "--resume", env=env)
    assert (again.returncode, again.stdout) == (0, f"{FINISHED}\n{DONE}\n"), again.stderr
    assert len(tool_runs(a)) == 3  # nothing ran again


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_a_finished_workflow_resumed_from_another_folder_says_its_report_is_not_here_but_where_it_started(
    tmp_path, request, kind
):
    env, a = finished_on_a_shared_database(tmp_path, request, kind, "finished_elsewhere")
    b = tmp_path / "b"
    for _ in range(2):  # and again: a second look from b still finds no report there
        elsewhere = harness(b, "--resume", env=env)
        assert elsewhere.returncode == 0, elsewhere.stderr
        lines = elsewhere.stdout.splitlines()
        assert (lines[0], lines[-1], len(lines)) == (FINISHED, DONE, 3)
        assert lines[1].startswith("[done-1][dbos] write_report はこのプロセスでは実行していません")
        assert "report.txt はこの作業フォルダにはありません" in lines[1]
        assert lines[1].endswith(f"ワークフローを始めたフォルダ: {a.resolve()}）")
        assert (
            not (b / "report.txt").exists() and tool_runs(b) == []
        )  # nothing ran here, nothing claimed here
    assert (a / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)  # where the line says


def test_a_finished_workflow_whose_report_was_removed_since_says_it_is_not_in_the_folder(tmp_path, request):
    env, a = finished_on_a_shared_database(tmp_path, request, "sqlite", "")
    (a / "report.txt").unlink()
    again = harness(a, "--resume", env=env)
    assert again.returncode == 0, again.stderr
    assert (
        "report.txt はいまありません（この作業フォルダに書いたあとで消えています）"
        in again.stdout.splitlines()[1]
    )
    assert not (a / "report.txt").exists() and len(tool_runs(a)) == 3  # told, not written again


@pytest.mark.parametrize("kind", ["postgres", "sqlite"])
def test_a_task_a_live_worker_holds_is_never_taken_over_or_started_again(tmp_path, postgres, kind):
    url = postgres("live") if kind == "postgres" else f"sqlite:///{tmp_path / 'shared.db'}"
    env = {"HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": "live"}
    a = Worker(tmp_path / "a", env={**env, "HARNESS_EXECUTOR_ID": "a", "HARNESS_SLOW_MS": "300"})
    a.wait_for("[step 2 記録]")
    os.kill(a.proc.pid, signal.SIGSTOP)  # alive, mid-task, and held there for as long as the others take
    held = None
    if (
        kind == "sqlite"
    ):  # the frozen worker may be frozen inside a write: the others must not wait for the file
        held = sqlite3.connect(tmp_path / "shared.db", timeout=0.1)
        try:
            held.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # locked: the worker was frozen inside a write, the same situation
            pass
    try:
        for args, folder in ((["--resume"], tmp_path / "b"), ([], tmp_path / "c")):
            other = harness(folder, *args, env={**env, "HARNESS_EXECUTOR_ID": "b"}, timeout=120)
            assert other.returncode == 1 and "Traceback" not in other.stderr
            lines = other.stderr.splitlines()
            assert lines[0].startswith("エラー: ワークフロー live は、いま別のプロセスが実行しています")
            assert lines[1].endswith(f"--resume --workdir {folder}")
            assert not folder.exists() or list(folder.iterdir()) == []  # nothing written there
    finally:
        if held is not None:
            held.close()  # (a close rolls the write back)
        os.kill(a.proc.pid, signal.SIGCONT)
    assert a.finish() == 0, a.err
    one_report_each([tmp_path / "a"], lesson_report(tmp_path))
    assert sum("記録]" in line for line in a.out) == 7


def test_sqlite_shared_by_workers_each_runs_its_own_task(tmp_path):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    folders = [tmp_path / f"w{i}" for i in range(3)]
    workers = [
        Worker(f, env={"HARNESS_DATABASE_URL": url, "HARNESS_TASK_ID": f"t{i}"})
        for i, f in enumerate(folders)
    ]
    assert finish_all(workers) == [0, 0, 0], [w.err for w in workers]
    one_report_each(folders, lesson_report(tmp_path))
    assert sorted(rows(tmp_path / "shared.db", "SELECT workflow_uuid, executor_id FROM workflow_status")) == [
        (f"t{i}", f"local/t{i}") for i in range(3)
    ]


@pytest.mark.parametrize("label", ["after-save-a:2", "after-tool-run:3"])
def test_sqlite_a_workflow_left_by_a_dead_worker_is_taken_over_from_another_folder(tmp_path, label):
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    a, b = tmp_path / "a", tmp_path / "b"
    dead = harness(a, env={"HARNESS_DATABASE_URL": url, "HARNESS_EXECUTOR_ID": "a", "CRASH_AFTER": label,
                           "CRASH_MODE": "sigkill"})  # fmt: skip
    assert dead.returncode == -9
    shutil.rmtree(a)
    taken = harness(b, "--resume", env={"HARNESS_DATABASE_URL": url, "HARNESS_EXECUTOR_ID": "b"})
    assert taken.returncode == 0, taken.stderr
    assert "実行者 a → b" in taken.stdout.splitlines()[0]
    assert not a.exists()
    assert (b / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)
    assert tool_runs(b)[-1] == "write_report toolu_03"


# --------------------------------------------------------------------------------------- a database that goes away


def test_postgres_stopped_mid_run_the_worker_waits_and_goes_on_when_it_comes_back(
    tmp_path, postgres, cluster
):
    url = postgres("outage_back")
    work = tmp_path / "w"
    worker = Worker(work, env={"HARNESS_DATABASE_URL": url, "HARNESS_SLOW_MS": "500",
                               "HARNESS_DATABASE_DEADLINE_S": "120"})  # fmt: skip
    worker.wait_for("[step 2 記録]")
    os.kill(worker.proc.pid, signal.SIGSTOP)  # mid-task when the server goes, however fast the machine
    cluster.stop()
    os.kill(worker.proc.pid, signal.SIGCONT)
    worker.wait_for("[待機中] システムデータベース postgresql://postgres@/outage_back")
    cluster.start()
    assert worker.finish() == 0, worker.err
    assert worker.out[-1] == "[sales-report][done] report.txt にレポートを書き出しました。タスク完了。"
    assert (work / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)
    assert tool_runs(work).count("write_report toolu_03") == 1
    assert _pg_rows(url, "SELECT status FROM dbos.workflow_status") == [("SUCCESS",)]


def advice_command(stderr: str) -> str:
    """The command a refusal names (`python -m harness ...`, up to the words around it), however it is phrased."""
    found = re.search(r"python -m harness[^\n（]*?(?= で続き| で最初から|（|$)", stderr, flags=re.MULTILINE)
    assert found, stderr
    return found.group(0)


def run_advice(line: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the command a message ends with (after its last ': '), exactly as a person would paste it."""
    command = line.split(": ", 1)[1].split("（", 1)[0]
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    full.update(PYTHONPATH=str(ROOT), HARNESS_FIXED_TIME_MS=str(FIXED_TIME_MS))
    return subprocess.run(["bash", "-c", command.replace("python -m", f"{sys.executable} -m", 1)], cwd=cwd,
                          capture_output=True, text=True, env=full, timeout=120, check=False)  # fmt: skip


def test_the_watch_and_a_waiting_thread_asking_about_the_lock_at_once_never_trip_over_each_other():
    """Seen under load: both found the lock's connection dropped, the second closed it after the first had, and its
    AttributeError ended the task as "ワークフローはエラーで終わりました … 再開できません" (a wrong hint: it is resumable)."""
    import threading
    import types

    import sqlalchemy as sa

    from harness.beyond.dbos_worker import TaskLock

    closed = []

    class Dropped:  # the lock's connection once the server has gone: each query fails after a moment
        def execute(self, *args):
            time.sleep(0.2)
            raise sa.exc.OperationalError(
                "SELECT 1", {}, Exception("server closed the connection unexpectedly")
            )

        def close(self):
            closed.append(1)

    def refused():
        raise sa.exc.OperationalError("connect", {}, Exception("connection refused"))

    lock = TaskLock(types.SimpleNamespace(sqlite=None, secrets=(), url="postgresql://x"), "sales-report")
    lock.conn, lock._take_postgres = Dropped(), refused
    said, raised = [], []

    def ask():
        try:
            said.append(lock.check())
        except Exception as err:  # noqa: BLE001
            raised.append(err)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert raised == []
    assert said == ["connection refused", "connection refused"] and closed == [1]


def test_postgres_gone_past_the_deadline_ends_with_one_message_and_the_command_that_resumes(
    tmp_path, postgres, cluster
):
    url = postgres("outage_gone")
    work = tmp_path / "w"
    worker = Worker(work, env={"HARNESS_DATABASE_URL": url, "HARNESS_SLOW_MS": "500",
                               "HARNESS_DATABASE_DEADLINE_S": "2"})  # fmt: skip
    worker.wait_for("[step 2 記録]")
    os.kill(worker.proc.pid, signal.SIGSTOP)  # mid-task when the server goes, however fast the machine
    cluster.stop()
    os.kill(worker.proc.pid, signal.SIGCONT)
    assert worker.finish(timeout=300) == 1
    errors = [line for line in worker.err if not line.startswith("[待機中]")]
    assert len(errors) == 2 and "Traceback" not in "\n".join(worker.err)
    assert errors[0].startswith("エラー: システムデータベース postgresql://postgres@/outage_gone?host=")
    assert "に 2 秒つながりませんでした（" in errors[0]
    assert any(line.startswith("[待機中]") for line in worker.err)
    cluster.start()
    resumed = run_advice(errors[1], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert (work / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)


def test_a_database_unreachable_at_start_is_waited_for_then_refused_with_the_command_to_run(
    tmp_path, postgres, cluster
):
    url = postgres("down_at_start")
    cluster.stop()
    work = tmp_path / "w"
    proc = harness(work, env={"HARNESS_DATABASE_URL": url, "HARNESS_DATABASE_DEADLINE_S": "3"}, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("[待機中]")]
    assert errors[0].endswith("何も始めていません。") and "[待機中]" in proc.stderr
    cluster.start()
    started = run_advice(errors[1], tmp_path)
    assert started.returncode == 0, started.stderr
    assert (work / "report.txt").exists()


SECRET = "hunter2Secret"


def test_a_short_password_is_hidden_where_it_stands_without_garbling_the_words_around_it():
    from harness.beyond.dbos_database import scrub

    said = 'connection to "postgresql://user:a@127.0.0.1:1/db" failed: password authentication failed'
    assert scrub(said, ("a",)) == (
        'connection to "postgresql://user:***@127.0.0.1:1/db" failed: password authentication failed'
    )
    assert scrub("x hunter2Secretz", (SECRET,)) == "x ***z"  # a long one wherever it is


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://user:{SECRET}@127.0.0.1:1/db",
        f"postgresql://user@127.0.0.1:1/db?password={SECRET}",
        f"postgresql://user@127.0.0.1:1/db?sslmode=disable&password={SECRET}",
        f"postgres://user:{SECRET}%40x@127.0.0.1:1/db",
        f"postgresql://user@127.0.0.1:1/db?sslpassword={SECRET}&password={SECRET}",
    ],
)
def test_an_unreachable_server_is_named_without_its_password(tmp_path, url):
    proc = harness(
        tmp_path / "w", env={"HARNESS_DATABASE_URL": url, "HARNESS_DATABASE_DEADLINE_S": "1"}, timeout=300
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (
        SECRET not in proc.stdout + proc.stderr and SECRET.lower() not in (proc.stdout + proc.stderr).lower()
    )
    assert "127.0.0.1:1/db" in proc.stderr and "***" in proc.stderr
    assert "（URL の *** には実際の値を入れてください）" in proc.stderr  # in the command to type


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (f"postgresql://user:p@{SECRET}@host/db", "@ が2つ以上あります"),
        (f"postgresql://user:{SECRET}@host:abc/db", "ポート番号"),
        (f"postgresql://user:{SECRET}@host:0/db", "ポート番号"),
        (f"postgresql://user:{SECRET}@host:99999/db", "ポート番号"),
        (f"postgresql://user:{SECRET}@host/db?port=x1", "ポート番号"),
        (f"postgresql://user:{SECRET}@[::1/db", "[ が ] で閉じていません"),
        (f"postgresql://user:{SECRET}@host/", "データベース名がありません"),
        (f"postgresql://user:{SECRET}@host:5432:6/db", "ポート番号"),
        ("sqlite:///:memory:", "メモリ上の SQLite"),
        ("sqlite://", "ファイルの場所がありません"),
        ("sqlite:///file::memory:?uri=true", "メモリ上の SQLite"),
        ("sqlite:///file:x.db?mode=memory&uri=true", "メモリ上の SQLite"),
        (f"mysql://u:{SECRET}@h/x", "postgresql:// か sqlite:///"),
        (f"{SECRET}", "postgresql:// か sqlite:///"),
    ],
)
def test_a_database_url_the_engine_cannot_use_is_refused_up_front_with_the_reason(tmp_path, url, reason):
    work = tmp_path / "w"
    code, out, err = cli_in_process("--engine", "dbos", "--workdir", str(work), "--database-url", url)
    assert code == 1 and "Traceback" not in err and out == ""
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("エラー: データベースの URL ") and reason in lines[0]
    assert SECRET not in err
    assert not work.exists() or not (work / "dbos.sqlite").exists()


@pytest.mark.parametrize("kind", ["/dev/stdout", "/dev/null", "fifo", "folder", "fifo-journal"])
def test_a_sqlite_url_at_a_device_a_fifo_or_a_folder_is_refused_before_anything_is_written(tmp_path, kind):
    """SQLite writes its pages into whatever the path names (the terminal, through /dev/stdout), blocks on a FIFO and
    leaves -lock files in /dev: the URL is refused before DBOS opens it."""
    target = tmp_path / "db.sqlite"
    if kind.startswith("fifo"):
        os.mkfifo(target if kind == "fifo" else tmp_path / "db.sqlite-journal")
    elif kind == "folder":
        target.mkdir()
    path = kind if kind.startswith("/dev/") else str(target)
    code, out, err = cli_in_process(
        "--engine", "dbos", "--workdir", str(tmp_path / "w"), "--database-url", f"sqlite:///{path}"
    )
    assert code == 1 and out == "" and "通常のファイルではないもの" in err.splitlines()[0], err
    assert not (tmp_path / "w" / "dbos.sqlite").exists() and not Path(path + "-lock").exists()


@pytest.mark.parametrize(
    "args, env",
    [
        (["--database-url", f"postgresql://user:{SECRET}@host:abc/db"], {}),  # a URL the engine cannot use
        (["--database-url", "sqlite:///{work}/q.db"], {}),  # a database inside the work folder
        (["--resume"], {}),  # nothing to resume
        ([], {"HARNESS_TASK_ID": "a b"}),  # a bad setting
    ],
)
def test_a_refusal_from_a_real_process_is_the_same_as_in_process(tmp_path, args, env):
    """The refusals above are checked in this process (each real process would import DBOS, about a second of CPU);
    one of each kind through the real command line says the same, exit code and stderr, and writes nothing."""
    work = tmp_path / "w"
    work.mkdir()
    args = [a.format(work=work) for a in args]
    proc = harness(work, *args, env=env)
    assert proc.returncode == 1 and proc.stdout == "" and proc.stderr.startswith("エラー: "), proc.stderr
    assert (proc.returncode, proc.stdout, proc.stderr) == cli_in_process(
        "--engine", "dbos", "--workdir", str(work), *args, env=env
    )
    assert SECRET not in proc.stderr and list(work.iterdir()) == []


@pytest.mark.parametrize(
    "name", ["a?b", "p%41q", "h#x", "sp ace", "at@x:y", "semi;c&d=e", os.fsdecode(b"bad\xffbyte")]
)
def test_a_work_folder_with_url_characters_or_odd_bytes_keeps_its_database_inside(tmp_path, name):
    work = tmp_path / name
    crash = harness(work, env={"CRASH_AFTER": "after-tool-run:3"})
    assert crash.returncode == 137, crash.stderr
    assert (work / "dbos.sqlite").is_file()
    resume = harness(work, "--resume")
    assert resume.returncode == 0, resume.stderr
    assert sorted(os.listdir(tmp_path)) == [name]  # nothing beside the folder (no database somewhere else)
    assert rows(work / "dbos.sqlite", "SELECT status FROM workflow_status") == [("SUCCESS",)]


def test_a_low_open_file_limit_is_refused_at_once_or_raised_when_it_may_be(tmp_path):
    import resource

    def limit(soft: int, hard: int):
        return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    full.update(PYTHONPATH=str(ROOT), HARNESS_FIXED_TIME_MS=str(FIXED_TIME_MS))
    argv = [sys.executable, "-m", "harness", "--engine", "dbos", "--workdir"]
    low = subprocess.run([*argv, str(tmp_path / "low")], preexec_fn=limit(12, 12), capture_output=True,
                         text=True, env=full, timeout=300, check=False)  # fmt: skip
    assert low.returncode == 1 and "Traceback" not in low.stderr
    assert low.stderr.startswith("エラー: 開けるファイルの数の上限（ulimit -n）が 12 です。")
    raised = subprocess.run([*argv, str(tmp_path / "raised")], preexec_fn=limit(12, 4096), capture_output=True,
                            text=True, env=full, timeout=120, check=False)  # fmt: skip
    assert raised.returncode == 0, raised.stderr


@pytest.mark.parametrize("when", ["mid-run", "at-resume"])
def test_dbos_sqlite_locked_by_another_program_ends_within_the_deadline_and_resumes_after(tmp_path, when):
    work = tmp_path / "w"
    env = {"HARNESS_DATABASE_DEADLINE_S": "2"}
    holder = None
    if when == "at-resume":
        assert harness(work, env={"CRASH_AFTER": "after-save-a:2"}).returncode == 137
        holder = sqlite3.connect(work / "dbos.sqlite", isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        proc = harness(work, "--resume", env=env, timeout=300)
        code, err = proc.returncode, proc.stderr.splitlines()
    else:
        worker = Worker(work, env={**env, "HARNESS_SLOW_MS": "500"})
        worker.wait_for("[step 2 記録]")
        holder = sqlite3.connect(work / "dbos.sqlite", isolation_level=None, timeout=1)
        for _ in range(60):  # mid-task when the lock is taken, however fast the machine
            os.kill(worker.proc.pid, signal.SIGSTOP)
            try:
                holder.execute("BEGIN EXCLUSIVE")
                break
            except sqlite3.OperationalError:  # stopped while holding the lock: let it finish
                os.kill(worker.proc.pid, signal.SIGCONT)
                time.sleep(0.05)
        else:
            pytest.fail("the worker never let go of dbos.sqlite")
        os.kill(worker.proc.pid, signal.SIGCONT)
        code, err = worker.finish(timeout=300), worker.err
    holder.execute("ROLLBACK")
    holder.close()
    assert code == 1
    errors = [line for line in err if not line.startswith("[待機中]")]
    assert len(errors) == 2 and errors[0].startswith(
        "エラー: システムデータベース dbos.sqlite に 2 秒つながりませんでした（"
    )
    assert "locked" in errors[0]
    resumed = run_advice(errors[1], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert (work / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)


@pytest.mark.skipif(shutil.which("faketime") is None, reason="needs faketime (apt install faketime)")
def test_a_clock_set_back_never_hangs_a_crash_and_resume(tmp_path):
    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-tool-run:2"}).returncode == 137
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRASH_", "HARNESS_"))}
    full.update(
        PYTHONPATH=str(ROOT), HARNESS_FIXED_TIME_MS=str(FIXED_TIME_MS), HARNESS_DATABASE_DEADLINE_S="3"
    )
    proc = subprocess.run(["faketime", "-f", "-1h", sys.executable, "-m", "harness", "--engine", "dbos", "--workdir",
                           str(work), "--resume"], capture_output=True, text=True, env=full, timeout=300, check=False)  # fmt: skip
    if proc.returncode != 0:  # it may end: with one message and the command that resumes, never a hang
        lines = proc.stderr.splitlines()
        assert len(lines) == 2 and "Traceback" not in proc.stderr, proc.stderr
        resumed = run_advice(lines[1], tmp_path)
        assert resumed.returncode == 0, resumed.stderr
    assert rows(work / "dbos.sqlite", "SELECT status FROM workflow_status") == [("SUCCESS",)]


# ------------------------------------------------------------------------------------ the modes across a crash


def test_a_lesson_resume_after_an_engine_crash_names_the_engine_command_that_continues_it(tmp_path):
    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-save-a:2", "HARNESS_TASK_ID": "t-9"}).returncode == 137
    for flags in ([], ["--parallel"], ["--idempotent"]):
        lesson = subprocess.run([sys.executable, "-m", "harness", "--workdir", str(work), "--resume", *flags],
                                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                timeout=60, check=False)  # fmt: skip
        assert lesson.returncode == 1
        lines = lesson.stderr.splitlines()
        assert lines[0].startswith("エラー: ") and "--engine dbos のワークフロー（dbos.sqlite）" in lines[0]
        assert (
            lines[1]
            == f"その続きなら: HARNESS_TASK_ID=t-9 python -m harness --engine dbos --resume --workdir {work}"
        )
    followed = run_advice(lines[1], tmp_path)
    assert followed.returncode == 0, followed.stderr
    assert tool_runs(work) == ["read_notes toolu_01", "count_words toolu_02", "write_report toolu_03"]


def test_a_fresh_lesson_run_abandons_the_engine_workflow_for_good(tmp_path):
    work = tmp_path / "w"
    assert harness(work, env={"CRASH_AFTER": "after-save-a:3"}).returncode == 137
    lesson = subprocess.run([sys.executable, "-m", "harness", "--workdir", str(work)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60, check=False)  # fmt: skip
    assert lesson.returncode == 0
    assert not (work / "dbos.sqlite").exists()
    before = tool_runs(work)
    engine = harness(work, "--resume")
    assert engine.returncode == 1 and tool_runs(work) == before  # the old workflow is not revived
    assert "checkpoint.json" in engine.stderr and "--engine dbos" in engine.stderr, engine.stderr
    command = advice_command(engine.stderr)
    assert command == f"python -m harness --resume --workdir {work}"
    assert run_advice(f": {command}", tmp_path).returncode == 0


def test_an_engine_resume_after_a_parallel_crash_names_the_parallel_command(tmp_path):
    work = tmp_path / "w"
    crashed = subprocess.run([sys.executable, "-m", "harness", "--workdir", str(work), "--parallel"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "CRASH_AFTER": "after-save-a:1"},
                             timeout=60, check=False)  # fmt: skip
    assert crashed.returncode == 137
    engine = harness(work, "--resume")
    assert engine.returncode == 1
    command = advice_command(engine.stderr)
    assert command == f"python -m harness --parallel --resume --workdir {work}"
    followed = run_advice(f": {command}", tmp_path)
    assert followed.returncode == 0, followed.stderr


def test_a_workflow_that_failed_in_a_shared_database_is_told_to_start_under_a_new_id_and_that_works(tmp_path):
    from harness import HarnessError
    from harness.__main__ import Options
    from harness.beyond.engine_dbos import main

    db = tmp_path / "shared.db"
    options = Options(workdir=str(tmp_path / "w"))
    options.engine, options.database_url = "dbos", f"sqlite:///{db}"
    (tmp_path / "w").mkdir()
    with pytest.raises(HarnessError) as err:
        main(options, Run(tmp_path / "w"), TwoToolsAtOnce(), env={})
    hint = str(err.value).splitlines()[1]
    assert hint.endswith(
        f"HARNESS_TASK_ID=sales-report-2 python -m harness --engine dbos --workdir {tmp_path / 'w'} --database-url sqlite:///{db}"
    )
    started = run_advice(hint, tmp_path)
    assert started.returncode == 0, started.stderr


def test_a_shared_sqlite_file_in_a_folder_that_does_not_exist_is_named_as_the_database_that_cannot_open(
    tmp_path,
):
    url = f"sqlite:///{tmp_path / 'no-such-folder' / 'shared.db'}"
    result = harness(tmp_path / "w", env={"HARNESS_DATABASE_URL": url})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"エラー: システムデータベース {url} を使えません")
    assert not (tmp_path / "no-such-folder").exists()


def test_ctrl_c_before_the_workflow_exists_advises_the_fresh_start_that_then_finishes(tmp_path):
    from hostile import INTERRUPT_HOOK

    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(INTERRUPT_HOOK, encoding="utf-8")
    work = tmp_path / "w"
    # the Ctrl-C lands as the engine opens its database for the first time (a state: the SQLite dialect's import)
    stopped = harness(work, env={"PYTHONPATH": f"{hook}{os.pathsep}{ROOT}",
                                 "INTERRUPT_AT_IMPORT": "sqlalchemy.dialects.sqlite.pysqlite"})  # fmt: skip
    assert stopped.returncode == 130 and "Traceback" not in stopped.stderr
    command = f"python -m harness --engine dbos --workdir {work}"
    assert stopped.stderr.splitlines() == [
        f"[中断] Ctrl-C で止めました。ワークフローはまだ始まっていません。{command} で最初から実行してください。"
    ]
    assert not (work / "report.txt").exists()
    again = harness(work)  # exactly what the line says
    assert again.returncode == 0, again.stderr
    assert tool_runs(work)[-1] == "write_report toolu_03"


class _Dropped:
    """A workflow handle whose first status read trips inside the engine's own code, as DBOS did once when the
    PostgreSQL server went away mid-call (AttributeError "'NoneType' object has no attribute 'close'")."""

    workflow_id = "sales-report"

    def __init__(self):
        self.reads = 0

    def get_status(self):
        self.reads += 1
        if self.reads == 1:
            raise AttributeError("'NoneType' object has no attribute 'close'")
        return type("Status", (), {"status": "SUCCESS"})()

    def get_result(self, polling_interval_sec=0.0):
        return "done"


@pytest.mark.parametrize("database_there", [False, True], ids=["server gone", "server there"])
def test_an_engine_error_while_the_database_is_away_is_waited_out_not_called_the_workflows_failure(
    monkeypatch, database_there
):
    """Such an error is the database's going away, not the task failing: the worker waits for the database as after
    any outage (then the deadline's message names --resume), and only an error with the database there is the
    workflow's own (reported as its failure)."""
    from harness.beyond import dbos_worker
    from harness.beyond.dbos_database import Database

    waited = []
    monkeypatch.setattr(dbos_worker, "ready", lambda db: None if database_there else "connection refused")
    monkeypatch.setattr(dbos_worker, "await_database", lambda: waited.append(True))
    db = Database(url="postgresql://u@/d?host=/tmp", shown="postgresql://u@/d?host=/tmp")
    if database_there:
        with pytest.raises(AttributeError):
            dbos_worker.wait_for_result(_Dropped(), db, deadline=2.0)
        assert waited == []
    else:
        assert dbos_worker.wait_for_result(_Dropped(), db, deadline=2.0) == "done"
        assert waited == [True]


@pytest.mark.parametrize("answering", [False, True])
def test_the_watch_thread_never_dies_with_a_traceback_when_the_driver_trips(monkeypatch, answering):
    """A driver error that is not a database error (the server dropped the connection under it) is waited out like
    an outage while the database does not answer, and named in one message when it does; never a thread traceback."""
    import threading

    from harness.beyond import dbos_worker

    calls, escaped, done = [], [], threading.Event()

    class TrippingLock:
        def check(self):
            if calls:
                done.set()
                return
            calls.append("check")
            raise AttributeError("'NoneType' object has no attribute 'close'")

    monkeypatch.setattr(dbos_worker, "PROBE_S", 0.01)
    monkeypatch.setattr(dbos_worker, "answers", lambda db: answering)
    monkeypatch.setattr(dbos_worker, "await_database", lambda: calls.append("await"))
    monkeypatch.setattr(dbos_worker, "stop_for_database", lambda err: calls.append(f"stop {err}"))
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    watch = dbos_worker.Watch(None, TrippingLock(), 60, "t")
    watch.start()
    assert done.wait(60)
    watch.stop.set()
    watch.join(60)
    assert escaped == []
    if answering:
        assert calls[:2] == ["check", "stop AttributeError: 'NoneType' object has no attribute 'close'"]
    else:
        assert calls[:2] == ["check", "await"]


@pytest.mark.parametrize("other", ["url", "task_id"])
def test_a_resume_looking_in_the_wrong_database_or_for_another_task_names_the_task_in_the_folder(
    tmp_path, other
):
    """Crashed in the folder's own database (or under another task id), resumed with a --database-url (or the default
    id): the refusal names the command that continues the workflow that is there; typed as given, it finishes with
    write_report run once, never a fresh start that would remove the recorded steps."""
    work = tmp_path / "w"
    started = {"HARNESS_TASK_ID": "t1"} if other == "task_id" else {}
    assert harness(work, env={"CRASH_AFTER": "after-effect-write:3", **started}).returncode == 137
    args = ("--database-url", f"sqlite:///{tmp_path / 'elsewhere.sqlite'}") if other == "url" else ()
    refused = harness(work, "--resume", *args)
    assert refused.returncode == 1 and refused.stdout == "", refused.stderr
    first, advice = refused.stderr.splitlines()
    assert "この作業フォルダの dbos.sqlite にあるのはワークフロー" in first
    command = advice.removeprefix("その続きなら: ")
    assert (
        command
        == f"{'HARNESS_TASK_ID=t1 ' if started else ''}python -m harness --engine dbos --resume --workdir {work}"
    )
    done = harness(work, "--resume", env=started)
    assert done.returncode == 0 and done.stdout.endswith("タスク完了。\n"), done.stderr
    assert tool_runs(work).count("write_report toolu_03") == 1


def test_no_workflow_to_resume_ends_its_line_with_the_command_that_starts_over(tmp_path):
    """The command was followed by 「（別のタスクの続きなら…」 with no space: pasted by words, it named another folder."""
    work = tmp_path / "w"
    assert harness(work).returncode == 0  # the harness's own folder
    (work / "dbos.sqlite").write_bytes(b"")  # its system database, now with no workflow in it
    resume = harness(work, "--resume")
    assert resume.returncode == 1, resume.stderr
    last = resume.stderr.splitlines()[-1]
    assert last.endswith(f"python -m harness --engine dbos --workdir {work}"), resume.stderr
    followed = run_advice(last, tmp_path)
    assert followed.returncode == 0, followed.stderr
    assert (work / "report.txt").read_text(encoding="utf-8") == lesson_report(tmp_path)


def test_a_report_removed_after_the_workflow_wrote_it_here_is_called_gone_not_written_elsewhere(tmp_path):
    """It said 'written by an earlier worker, in the folder the workflow started in', naming this very folder."""
    work = tmp_path / "w"
    assert harness(work).returncode == 0
    (work / "report.txt").unlink()
    resumed = harness(work, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    line = resumed.stdout.splitlines()[1]
    assert line.endswith("report.txt はいまありません（この作業フォルダに書いたあとで消えています）"), line
    assert not (work / "report.txt").exists() and len(tool_runs(work)) == 3  # told, not written again
