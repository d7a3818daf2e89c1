"""A hostile work folder, through the real command line: planted links, hard links and FIFOs, notes the tools cannot
read, a forged ledger, an older checkpoint put back, a foreign folder, an empty --workdir, a state file without
permission. Each run ends (no hang), says what is wrong in Japanese without a traceback, follows no link, changes
nothing outside the folder and deletes nothing it did not make."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hostile import assert_quiet, assert_refused, cli, crashed, log_lines, snapshot

from harness.vocab import DB_FILES, SUMMARY_FILE

SECRET = "- 秘密: 口座番号 0000-1234\n"
PRECIOUS = b"precious: not the harness's to touch\n"
DONE_OK = "[done] report.txt にレポートを書き出しました。タスク完了。"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    d = tmp_path / "outside"
    d.mkdir()
    return d


def first_result(work: Path) -> dict:
    """The tool_result that answered read_notes (toolu_01), as the final checkpoint holds it."""
    cp = json.loads((work / "checkpoint.json").read_text(encoding="utf-8"))
    result = cp["messages"][2]["content"][0]
    assert result["tool_use_id"] == "toolu_01"
    return result


def harness_files(work: Path) -> bytes:
    """What the harness and the model wrote: where a secret read through a link would end up."""
    names = ("checkpoint.json", "effects.json", "report.txt", "tool-runs.log")
    return b"".join((work / n).read_bytes() for n in names if (work / n).is_file())


# ---- planted symbolic links ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["resume", "fresh"])
def test_symlinked_temp_files_are_replaced_never_written_through(workdir, outside, how):
    crashed(workdir, "after-save-a:2")  # the resume saves both files: count_words re-runs, then point B
    victims = {}
    for name in ("checkpoint.json.tmp", "effects.json.tmp", "report.txt.tmp"):
        victims[name] = outside / f"victim-{name}"
        victims[name].write_bytes(PRECIOUS)
        os.symlink(victims[name], workdir / name)
    proc = cli(workdir, *(["--resume"] if how == "resume" else []))
    assert proc.returncode == 0, proc.stderr
    assert_quiet(proc)
    for name, victim in victims.items():
        assert victim.read_bytes() == PRECIOUS
        assert not os.path.lexists(workdir / name)
    for name in ("checkpoint.json", "effects.json"):
        assert not (workdir / name).is_symlink()
        json.loads((workdir / name).read_text(encoding="utf-8"))


def test_symlinked_tool_log_is_refused_and_the_tool_does_not_run(workdir, outside):
    crashed(workdir, "after-save-b:2")
    victim = outside / "victim.log"
    victim.write_bytes(PRECIOUS)
    (workdir / "tool-runs.log").unlink()
    os.symlink(victim, workdir / "tool-runs.log")
    before = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    proc = cli(workdir, "--resume")
    assert_refused(proc, "tool-runs.log", "リンク", "ツールは実行していません")
    assert victim.read_bytes() == PRECIOUS
    assert not (
        workdir / "report.txt"
    ).exists()  # write_report did not run: the outside view could not record it
    after = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    assert after["pendingToolUse"]["name"] == "write_report" and after["messages"] == before["messages"]


@pytest.mark.parametrize("target", ["inside", "outside"])
def test_symlinked_notes_are_not_read(workdir, outside, target):
    secret = (workdir / "private.txt") if target == "inside" else (outside / "secret.txt")
    secret.write_text(SECRET, encoding="utf-8")
    os.symlink(secret, workdir / "sales-notes.txt")
    proc = cli(workdir)
    assert proc.returncode == 0, proc.stderr
    assert_quiet(proc)
    assert first_result(workdir).get("is_error") is True
    assert SECRET.strip().encode() not in harness_files(workdir)
    assert secret.read_text(encoding="utf-8") == SECRET


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_symlinked_state_file_is_refused_on_resume(workdir, outside, name):
    crashed(workdir, "after-effect-write:3")
    copy = outside / name
    copy.write_bytes((workdir / name).read_bytes())  # a perfectly valid file, but not the folder's own
    (workdir / name).unlink()
    os.symlink(copy, workdir / name)
    before = snapshot(workdir)
    assert_refused(cli(workdir, "--resume"), name, "リンク")
    assert snapshot(workdir) == before


def test_symlinked_report_is_replaced_never_written_through(workdir, outside):
    victim = outside / "victim.txt"
    victim.write_bytes(PRECIOUS)
    os.symlink(victim, workdir / "report.txt")
    from harness import texts

    # a folder the harness used before (its own marker): it may clean it
    (workdir / ".harness-workdir").write_text(texts.MARKER_TEXT, encoding="utf-8")
    proc = cli(workdir)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == DONE_OK, proc.stderr
    assert victim.read_bytes() == PRECIOUS
    assert (
        not (workdir / "report.txt").is_symlink()
        and "営業メモのレポート" in (workdir / "report.txt").read_text()
    )


# ---- hard links to files outside the folder ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_hard_linked_state_file_is_refused(workdir, outside, name):
    crashed(workdir, "after-effect-write:3")
    twin = outside / name
    os.link(workdir / name, twin)  # the same bytes under a second name: someone else can change them
    before = snapshot(workdir)
    assert_refused(cli(workdir, "--resume"), name, "ハードリンク")
    assert snapshot(workdir) == before


def test_hard_linked_tool_log_is_refused_and_the_outside_file_is_unchanged(workdir, outside):
    crashed(workdir, "after-save-b:2")
    victim = outside / "victim.log"
    victim.write_bytes(PRECIOUS)
    (workdir / "tool-runs.log").unlink()
    os.link(victim, workdir / "tool-runs.log")
    assert_refused(cli(workdir, "--resume"), "tool-runs.log", "ハードリンク")
    assert victim.read_bytes() == PRECIOUS
    assert not (workdir / "report.txt").exists()


def test_hard_linked_report_is_replaced_and_the_outside_file_is_unchanged(workdir, outside):
    crashed(workdir, "after-save-b:2")
    victim = outside / "victim.txt"
    victim.write_bytes(PRECIOUS)
    os.link(victim, workdir / "report.txt")
    proc = cli(workdir, "--resume")
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == DONE_OK, proc.stderr
    assert victim.read_bytes() == PRECIOUS
    assert "営業メモのレポート" in (workdir / "report.txt").read_text(encoding="utf-8")


def test_hard_linked_notes_are_not_read(workdir, outside):
    secret = outside / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    os.link(secret, workdir / "sales-notes.txt")
    proc = cli(workdir)
    assert proc.returncode == 0, proc.stderr
    assert (
        first_result(workdir).get("is_error") is True and "ハードリンク" in first_result(workdir)["content"]
    )
    assert SECRET.strip().encode() not in harness_files(workdir)


# ---- a FIFO in place of any work file: no hang ---------------------------------------------------------------------

WORK_FILES = [
    "checkpoint.json",
    "effects.json",
    "tool-runs.log",
    "sales-notes.txt",
    "report.txt",
    "checkpoint.json.tmp",
    "effects.json.tmp",
    ".harness-workdir",
]
REFUSED_ON_RESUME = {
    "checkpoint.json": "普通のファイルではありません",
    "effects.json": "普通のファイルではありません",
    "tool-runs.log": "ツールは実行していません",
}


@pytest.mark.parametrize("how", ["resume", "fresh"])
@pytest.mark.parametrize("name", WORK_FILES)
def test_a_fifo_in_place_of_a_work_file_never_hangs_the_run(workdir, name, how):
    # after-save-a:1 leaves read_notes pending, so the resume reads the notes; otherwise write_report is next
    crashed(workdir, "after-save-a:1" if name == "sales-notes.txt" else "after-save-b:2")
    if os.path.lexists(workdir / name):
        (workdir / name).unlink()
    os.mkfifo(workdir / name)
    proc = cli(workdir, *(["--resume"] if how == "resume" else []), timeout=120)  # a hang fails here
    if how == "resume" and name in REFUSED_ON_RESUME:
        assert_refused(proc, name, REFUSED_ON_RESUME[name])
        assert not (workdir / "report.txt").exists()
        return
    if (
        how == "fresh" and name == ".harness-workdir"
    ):  # a FIFO is not the marker: the folder is not known to be ours
        assert_refused(proc, "checkpoint.json", "消しません")
        return
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    if name == "sales-notes.txt":  # the input is kept (never deleted) and refused by the tool that reads it
        assert (workdir / name).is_fifo()
        assert first_result(workdir)["is_error"] is True and "FIFO" in first_result(workdir)["content"]


def test_a_fifo_as_the_work_folder_is_refused(tmp_path):
    os.mkfifo(tmp_path / "w")
    assert_refused(cli(tmp_path / "w", timeout=120), "フォルダではありません")
    assert_refused(cli(tmp_path / "w", "--resume", timeout=120), "フォルダではありません")


# ---- notes the tools cannot read: an is_error tool_result, never the end of the run --------------------------------

NOTES = {
    "shift_jis": lambda p: p.write_bytes("営業メモ\n- A社: 見積もり\n".encode("shift_jis")),
    "folder": lambda p: p.mkdir(),
    "dangling-link": lambda p: os.symlink(p.parent / "gone.txt", p),
    "fifo": lambda p: os.mkfifo(p),
}


@pytest.mark.parametrize("kind", list(NOTES))
def test_unreadable_notes_become_a_tool_error_and_the_run_finishes(workdir, kind):
    NOTES[kind](workdir / "sales-notes.txt")
    proc = cli(workdir, timeout=120)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    assert proc.stdout.splitlines()[-1] == DONE_OK
    assert "メモの要点を読み取れませんでした" in (workdir / "report.txt").read_text(encoding="utf-8")
    assert first_result(workdir)["is_error"] is True


@pytest.mark.parametrize("kind", list(NOTES))
def test_unreadable_notes_in_reconciles_rerun_become_a_tool_error(workdir, kind):
    crashed(workdir, "after-save-a:1")  # read_notes pending: the resume re-runs it (read-only branch)
    (workdir / "sales-notes.txt").unlink()
    NOTES[kind](workdir / "sales-notes.txt")
    proc = cli(workdir, "--resume", timeout=120)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    assert "台帳ミス、読み取り専用ツール、再実行する" in proc.stdout
    assert proc.stdout.splitlines()[-1] == DONE_OK
    assert first_result(workdir)["is_error"] is True


def test_shift_jis_notes_say_how_to_fix_them(workdir):
    NOTES["shift_jis"](workdir / "sales-notes.txt")
    proc = cli(workdir)
    assert "UTF-8 のテキストではありません" in proc.stdout and "UTF-8 で保存し直してください" in proc.stdout


def test_notes_without_permission_become_a_tool_error(nobody_workdir):
    work, options = nobody_workdir
    owner = options.pop("owner", None)
    notes = work / "sales-notes.txt"
    notes.write_text("- 自分のメモ\n", encoding="utf-8")
    if owner:
        os.chown(notes, *owner)
    notes.chmod(0o000)
    proc = cli(work, **options)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert first_result(work)["is_error"] is True and "Permission denied" in first_result(work)["content"]


# ---- what a resume is told by the ledger: only what really happened ------------------------------------------------


def test_a_forged_ledger_record_for_another_tool_is_refused(workdir):
    crashed(workdir, "after-save-a:3")  # write_report pending, never run, no record
    effects = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    effects["toolu_03"] = {"name": "read_notes", "result": "report.txt に書き出しました", "at": 1}
    (workdir / "effects.json").write_text(json.dumps(effects, ensure_ascii=False), encoding="utf-8")
    before = snapshot(workdir)
    proc = cli(workdir, "--resume")
    assert_refused(proc, "checkpoint.json", "食い違っています", "toolu_03")
    assert "台帳ヒット" not in proc.stdout and snapshot(workdir) == before
    assert not (workdir / "report.txt").exists()


def test_a_forged_ledger_record_the_checkpoint_never_made_is_refused(workdir):
    crashed(workdir, "after-save-b:2")
    effects = json.loads((workdir / "effects.json").read_text(encoding="utf-8"))
    effects["toolu_99"] = {"name": "write_report", "result": "済み", "at": 1}
    (workdir / "effects.json").write_text(json.dumps(effects, ensure_ascii=False), encoding="utf-8")
    before = snapshot(workdir)
    assert_refused(cli(workdir, "--resume"), "食い違っています", "toolu_99")
    assert snapshot(workdir) == before


@pytest.mark.parametrize("old_label", ["after-save-b:2", "after-save-a:2", "after-save-b:1"])
def test_an_older_checkpoint_put_back_never_repeats_write_report(workdir, old_label):
    crashed(workdir, old_label)
    older = (workdir / "checkpoint.json").read_bytes()
    assert cli(workdir, "--resume").returncode == 0
    assert log_lines(workdir).count("write_report toolu_03") == 1
    report = (workdir / "report.txt").read_bytes()
    (workdir / "checkpoint.json").write_bytes(older)  # a backup put back, a sync tool, a careless copy
    before = snapshot(workdir)
    proc = cli(workdir, "--resume")
    assert_refused(proc, "checkpoint.json", "チェックポイントが台帳より古い")
    assert snapshot(workdir) == before
    assert (
        log_lines(workdir).count("write_report toolu_03") == 1
        and (workdir / "report.txt").read_bytes() == report
    )


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_non_standard_json_numbers_are_refused_on_load(workdir, value):
    crashed(workdir, "after-save-b:2")
    for name, key in (("checkpoint.json", '"tokensUsed": '), ("effects.json", '"at": ')):
        good = (workdir / name).read_text(encoding="utf-8")
        assert key in good
        bad = good.replace(key, key + value + ', "x": ', 1)
        (workdir / name).write_text(bad, encoding="utf-8")
        proc = cli(workdir, "--resume")
        assert_refused(proc, name)
        (workdir / name).write_text(good, encoding="utf-8")
    assert cli(workdir, "--resume").returncode == 0


# ---- never destroy what the harness did not make -------------------------------------------------------------------


@pytest.mark.parametrize("arg", [["--workdir="], ["--workdir", ""], ["--workdir", "  "]])
def test_an_empty_workdir_is_refused_and_the_current_folder_is_untouched(tmp_path, arg):
    (tmp_path / "report.txt").write_text("ユーザーのレポート\n", encoding="utf-8")
    (tmp_path / "checkpoint.json").write_text('{"mine": true}\n', encoding="utf-8")
    before = snapshot(tmp_path)
    import subprocess
    import sys

    from hostile import child_env

    proc = subprocess.run(
        [sys.executable, "-m", "harness", *arg],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=child_env({"PYTHONPATH": os.pathsep.join(sys.path)}),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert_quiet(proc)
    assert "--workdir が空です" in proc.stderr
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("theirs", ["report.txt", "checkpoint.json", "effects.json", "tool-runs.log"])
def test_a_fresh_start_in_a_foreign_folder_deletes_nothing(workdir, theirs):
    (workdir / theirs).write_text("持ち主のファイル\n", encoding="utf-8")
    (workdir / "sales-notes.txt").write_text("- 自分のメモ\n", encoding="utf-8")
    before = snapshot(workdir)
    proc = cli(workdir)
    assert_refused(proc, theirs, "消しません")
    assert snapshot(workdir) == before


@pytest.mark.parametrize(
    "marker", ["dangling-link", "link-to-a-marker", "empty-file", "other-text", "folder", "fifo"]
)
def test_only_the_marker_a_fresh_start_wrote_makes_a_folder_ours(workdir, tmp_path, marker):
    """A .harness-workdir the harness did not write (a link, even to a real marker; an empty or other file; a folder;
    a FIFO) does not make a foreign folder ours: the user's files stay."""
    from harness import texts
    from harness.vocab import MARKER_FILE

    (workdir / "report.txt").write_text("持ち主のファイル\n", encoding="utf-8")
    place = workdir / MARKER_FILE
    if marker == "dangling-link":
        place.symlink_to(tmp_path / "nowhere")
    elif marker == "link-to-a-marker":
        real = tmp_path / "real-marker"
        real.write_text(texts.MARKER_TEXT, encoding="utf-8")
        place.symlink_to(real)
    elif marker == "folder":
        place.mkdir()
    elif marker == "fifo":
        os.mkfifo(place)
    else:
        place.write_text("" if marker == "empty-file" else "mine\n", encoding="utf-8")
    before = snapshot(workdir)
    proc = cli(workdir)
    assert_refused(proc, "report.txt", "消しません")
    assert snapshot(workdir) == before


def test_a_folder_holding_only_the_users_notes_is_used_and_the_notes_kept(workdir):
    (workdir / "sales-notes.txt").write_text("- 自分のメモ\n", encoding="utf-8")
    proc = cli(workdir)
    assert (
        proc.returncode == 0 and (workdir / "sales-notes.txt").read_text(encoding="utf-8") == "- 自分のメモ\n"
    )
    assert (workdir / ".harness-workdir").is_file()


@pytest.fixture
def nobody_workdir():
    """A work folder owned by an ordinary user, and the options that run the command line as that user: as root,
    chmod means nothing, so the test runs the harness as `nobody` (through setpriv)."""
    base = Path(tempfile.mkdtemp(prefix="harness-perm-"))
    base.chmod(0o755)
    work = base / "w"
    work.mkdir()
    options: dict = {"cwd": base}
    try:
        if os.geteuid() == 0:
            import pwd
            import subprocess
            import sys

            try:
                user = pwd.getpwnam("nobody")
            except KeyError:
                pytest.skip("running as root, and there is no user `nobody` to make chmod mean something")
            prefix = ("setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups")
            try:
                probe = subprocess.run(
                    [*prefix, sys.executable, "-c", "import harness"],
                    cwd=base,
                    capture_output=True,
                    timeout=120,
                    check=False,
                )
            except FileNotFoundError:
                probe = None
            if probe is None or probe.returncode != 0:
                pytest.skip("running as root, and `nobody` cannot run this Python: chmod would mean nothing")
            os.chown(work, user.pw_uid, user.pw_gid)
            options.update(prefix=prefix, owner=(user.pw_uid, user.pw_gid))
        yield work, options
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("name", ["checkpoint.json", "effects.json"])
def test_a_state_file_without_permission_says_chmod_not_delete(nobody_workdir, name):
    work, options = nobody_workdir
    options.pop("owner", None)
    crash = cli(work, env={"CRASH_AFTER": "after-effect-write:3"}, **options)
    assert crash.returncode == 137, crash.stderr
    (work / name).chmod(0o000)
    proc = cli(work, "--resume", **options)
    assert_refused(proc, name, "chmod", "削除しないでください")
    (work / name).chmod(0o644)
    resumed = cli(work, "--resume", **options)  # the file was fine: once readable, the run goes on
    assert resumed.returncode == 0 and "台帳ヒット" in resumed.stdout, resumed.stderr


# ---- the outside world's view is written before the tool runs ------------------------------------------------------


def test_a_tool_log_that_cannot_be_written_means_the_tool_never_runs(workdir):
    crashed(workdir, "after-save-b:2")  # write_report is next
    (workdir / "tool-runs.log").unlink()
    (workdir / "tool-runs.log").mkdir()
    proc = cli(workdir, "--resume")
    assert_refused(proc, "tool-runs.log", "ツールは実行していません")
    assert not (workdir / "report.txt").exists()  # had it run, tool-runs.log could not have said so
    (workdir / "tool-runs.log").rmdir()
    resumed = cli(workdir, "--resume")  # point A of turn 3 is on disk: reconcile cannot know, and says so
    assert resumed.returncode == 0 and "判断不能、is_error を追加" in resumed.stdout
    assert log_lines(workdir) == [] and not (workdir / "report.txt").exists()


@pytest.mark.parametrize("name", [SUMMARY_FILE, *DB_FILES])
def test_a_lesson_run_will_not_adopt_a_folder_holding_a_file_another_scenario_would_clean(workdir, name):
    """Once the marker is written, a later --parallel or --engine dbos fresh run may clean these names: so a folder
    that already holds one (the user's own) is refused before any marker is written."""
    (workdir / name).write_text("the user's own file\n", encoding="utf-8")
    proc = cli(workdir)
    assert (
        proc.returncode == 1
        and name in proc.stderr
        and "自分で作っていないファイルは消しません" in proc.stderr
    )
    assert (workdir / name).read_text(encoding="utf-8") == "the user's own file\n"
    assert not (workdir / ".harness-workdir").exists()


@pytest.mark.parametrize(
    "args", [["--resume"], ["--resume", "--parallel"], ["--resume", "--idempotent"]], ids=" ".join
)
@pytest.mark.parametrize("name", ["report.txt", "effects.json", SUMMARY_FILE])
def test_resume_in_a_folder_a_fresh_start_would_refuse_advises_another_folder_not_a_fresh_start(
    workdir, name, args
):
    """No checkpoint, and a file the harness may not have made: --resume cannot continue, and a fresh start would
    refuse the folder too, so the advice is an empty folder or a new name (it used to be "start again without
    --resume", which then failed)."""
    (workdir / name).write_text("the user's own file\n", encoding="utf-8")
    before = snapshot(workdir)
    proc = cli(workdir, *args)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc
    assert name in proc.stderr and "新しい名前を --workdir に指定して" in proc.stderr, proc.stderr
    assert "--resume なしで最初から実行してください" not in proc.stderr  # the advice that would fail
    assert snapshot(workdir) == before
    fresh = cli(workdir)  # the refusal the old advice led to
    assert fresh.returncode == 1 and "自分で作っていないファイルは消しません" in fresh.stderr


def test_resume_in_an_unmarked_folder_with_only_the_learners_own_files_still_advises_a_fresh_start(workdir):
    (workdir / "mine.txt").write_text("mine\n", encoding="utf-8")
    proc = cli(workdir, "--resume")
    assert proc.returncode == 1 and "--resume なしで最初から実行してください" in proc.stderr, proc
    assert cli(workdir).returncode == 0  # and that advice works


@pytest.mark.parametrize("how", ["resume", "fresh"])
def test_a_report_temp_file_a_kill_left_is_gone_after_the_next_run(workdir, how):
    """A kill (or Ctrl-C) inside write_report can leave its temp file; it has one fixed name, which the next
    write_report replaces and a fresh start removes: no stray file accumulates in the work folder."""
    crashed(workdir, "after-save-a:2")  # the resume re-runs count_words, then write_report runs in turn 3
    (workdir / "report.txt.tmp").write_bytes(
        "# 営業メモのレポ".encode()[:10]
    )  # half-written, as a kill leaves it
    proc = cli(workdir, *(["--resume"] if how == "resume" else []))
    assert proc.returncode == 0, proc.stderr
    assert not os.path.lexists(workdir / "report.txt.tmp")
    assert sorted(p.name for p in workdir.iterdir() if p.name.endswith(".tmp")) == []


def test_a_folder_planted_at_the_reports_temp_name_is_named_and_nothing_is_written_through_it(workdir):
    crashed(workdir, "after-save-b:2")  # write_report runs in turn 3 of the resume
    (workdir / "report.txt.tmp").mkdir()
    (workdir / "report.txt.tmp" / "keep").write_text("mine", encoding="utf-8")
    proc = cli(workdir, "--resume")
    assert proc.returncode == 0, proc.stderr
    # the tool's error names the file that is in the way (not report.txt, which is not there)
    assert "report.txt.tmp に書けません" in proc.stdout, proc.stdout
    assert not (workdir / "report.txt").exists()
    assert (workdir / "report.txt.tmp" / "keep").read_text(encoding="utf-8") == "mine"
