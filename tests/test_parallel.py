"""Beyond the lesson (1): the pending set. `python -m harness --parallel` names several tools per response, keeps them
all in a version-2 checkpoint, reconciles each on --resume, and survives a real SIGKILL at every crash point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import TESTS, parse_transcripts, read_json, run_cli
from harness import (
    APIError,
    CrashPlan,
    HarnessError,
    Run,
    ScriptedModel,
    SimulatedCrash,
    load_checkpoint,
    run_agent,
)
from harness.beyond.parallel import (
    ParallelScriptedModel,
    load_checkpoint_v2,
    pairing_problem,
    report_text,
    run_agent_v2,
)
from harness.beyond.scenarios import clean_events, crash_moments, run_in_folder
from harness.tools import READ_ONLY, TOOL_SCHEMAS
from harness.vocab import ALL_LABELS, FIXED_TIME_MS, WRITER_LABELS

BEYOND = parse_transcripts((TESTS / "transcripts_beyond.md").read_text(encoding="utf-8"))
PARALLEL_CASES = [name for name in BEYOND if name.startswith("parallel ")]
DONE_OK = "[done] report.txt と summary.txt を書き出しました。タスク完了。"
SIDE_EFFECTS = ("toolu_03", "toolu_04")  # write_report report.txt, write_report summary.txt


def test_the_expected_transcripts_cover_the_clean_run_and_every_crash_point():
    assert len(PARALLEL_CASES) == 13
    crash_cases = {name.split()[1] for name in PARALLEL_CASES if "clean" not in name}
    assert crash_cases == {
        f"{label}:{n}"
        for label, count in (
            ("after-save-a", 2),
            ("after-tool-run", 4),
            ("after-effect-write", 4),
            ("after-save-b", 2),
        )
        for n in range(1, count + 1)
    }


@pytest.mark.parametrize("case", PARALLEL_CASES)
def test_command_line_prints_the_expected_parallel_transcript(case, workdir):
    for step in BEYOND[case]:
        proc = run_cli(workdir, *step["args"], env=step["env"])
        assert proc.stdout.splitlines() == step["stdout"], f"{case}: {step['env']} {step['args']}"
        assert proc.returncode == step["exit"]
        assert proc.stderr == ""
    cp = read_json(workdir / "checkpoint.json")
    assert cp["version"] == 2 and cp["pendingToolUses"] == []


def test_one_turn_holds_two_side_effecting_calls_so_a_crash_leaves_it_half_done(workdir):
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan("after-effect-write", 3))
    cp = read_json(workdir / "checkpoint.json")
    assert cp["version"] == 2
    assert [(p["id"], p["name"]) for p in cp["pendingToolUses"]] == [
        ("toolu_03", "write_report"),
        ("toolu_04", "write_report"),
    ]
    assert list(read_json(workdir / "effects.json")) == ["toolu_01", "toolu_02", "toolu_03"]
    assert (workdir / "report.txt").exists() and not (workdir / "summary.txt").exists()


def test_point_b_saves_an_empty_pending_array_and_all_results_in_one_message(workdir):
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan("after-save-b", 1))
    cp = read_json(workdir / "checkpoint.json")
    assert cp["pendingToolUses"] == []
    assert [m["role"] for m in cp["messages"]] == ["user", "assistant", "user"]
    assert [b["tool_use_id"] for b in cp["messages"][2]["content"]] == ["toolu_01", "toolu_02"]


# ---- the loaders: version 2 refused by the lesson's, version 1 read by version 2's --------------------------------


def test_the_lessons_loader_refuses_version_2_with_its_message(workdir):
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan("after-save-a", 1))
    with pytest.raises(HarnessError) as err:
        load_checkpoint(workdir / "checkpoint.json")
    assert str(err.value) == (
        f"{workdir / 'checkpoint.json'} の version=2 です。これは --parallel が書いたチェックポイントで、"
        "--parallel なしでは読めないため読み込みを拒否します。\n"
        f"削除せずに、python -m harness --parallel --resume --workdir {workdir} で続きから再開してください。"
    )


def test_resume_without_parallel_refuses_the_version_2_checkpoint_and_leaves_it(workdir):
    run_cli(workdir, "--parallel", env={"CRASH_AFTER": "after-tool-run:3"})
    before = (workdir / "checkpoint.json").read_bytes()
    proc = run_cli(workdir, "--resume")
    assert proc.returncode == 1 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert "の version=2 です。これは --parallel が書いたチェックポイント" in proc.stderr
    assert "削除せずに、python -m harness --parallel --resume" in proc.stderr
    assert (workdir / "checkpoint.json").read_bytes() == before
    assert run_cli(workdir, "--parallel", "--resume").returncode == 0


def test_the_version_2_loader_reads_a_lessons_version_1_checkpoint(workdir):
    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan("after-tool-run", 3)), ScriptedModel(), tools=TOOL_SCHEMAS)
    v1 = read_json(workdir / "checkpoint.json")
    cp = load_checkpoint_v2(workdir / "checkpoint.json")
    assert cp["version"] == 2 and "pendingToolUse" not in cp
    assert cp["pendingToolUses"] == [v1["pendingToolUse"]]
    assert {k: cp[k] for k in ("task", "turns", "tokensUsed", "messages")} == {
        k: v1[k] for k in ("task", "turns", "tokensUsed", "messages")
    }


def test_the_version_2_loader_reads_a_version_1_checkpoint_with_nothing_pending(workdir):
    with pytest.raises(SimulatedCrash):
        run_agent(Run(workdir, crash=CrashPlan("after-save-b", 1)), ScriptedModel(), tools=TOOL_SCHEMAS)
    assert load_checkpoint_v2(workdir / "checkpoint.json")["pendingToolUses"] == []


def test_parallel_resume_carries_a_lesson_run_to_its_end(workdir):
    crashed = run_cli(workdir, env={"CRASH_AFTER": "after-save-a:2"})
    assert crashed.returncode == 137
    proc = run_cli(workdir, "--parallel", "--resume")
    assert proc.stdout.splitlines() == [
        "[resume] turn=2 pending=[count_words] を読み込み",
        "[resume][reconcile] tool_use_id=toolu_02 name=count_words 台帳ミス、読み取り専用ツール、再実行する",
        "[turn 2][save B] 再開後にこのターンのツール結果を補完",
        "[turn 3][save A] pending=[write_report]",
        "[turn 3][save B]",
        "[done] report.txt にレポートを書き出しました。タスク完了。",
    ]
    assert read_json(workdir / "checkpoint.json")["version"] == 2


def write_v2(workdir: Path, **change) -> Path:
    cp = {
        "version": 2,
        "task": "t",
        "turns": 1,
        "tokensUsed": 0,
        "messages": [{"role": "user", "content": "t"}],
        "pendingToolUses": [{"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}],
        **change,
    }
    path = workdir / "checkpoint.json"
    path.write_text(json.dumps(cp), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "change, detail",
    [
        ({"version": 3}, "の version=3 です。このプログラムは version=1 と version=2 しか受け付けない"),
        ({"pendingToolUses": None}, "pendingToolUses が配列ではありません"),
        (
            {"pendingToolUses": [{"id": "toolu_01", "name": "read_notes"}]},
            "pendingToolUses[0] は {id, name, input}",
        ),
        (
            {"pendingToolUses": [{"id": "a b", "name": "read_notes", "input": {}}]},
            "pendingToolUses[0].id が英数字",
        ),
        (
            {"pendingToolUses": [{"id": "x", "name": "read_notes", "input": {}}] * 2},
            "pendingToolUses に同じ id が2度あります",
        ),
        ({"pendingToolUse": None}, "未知のキー pendingToolUse"),
        ({"turns": -1}, "turns と tokensUsed は 0 以上の整数"),
    ],
)
def test_the_version_2_loader_refuses_what_it_cannot_trust(workdir, change, detail):
    with pytest.raises(HarnessError) as err:
        load_checkpoint_v2(write_v2(workdir, **change))
    assert detail in str(err.value)
    assert "--resume なしで最初からやり直してください" in str(err.value)


def test_the_version_2_loader_refuses_a_ledger_older_or_newer_than_the_checkpoint(workdir):
    effects = {"toolu_09": {"name": "write_report", "result": "x", "at": 1}}
    (workdir / "effects.json").write_text(json.dumps(effects), encoding="utf-8")
    with pytest.raises(HarnessError, match="このチェックポイントが知らない呼び出し toolu_09"):
        load_checkpoint_v2(write_v2(workdir))
    effects = {"toolu_01": {"name": "write_report", "result": "x", "at": 1}}
    (workdir / "effects.json").write_text(json.dumps(effects), encoding="utf-8")
    with pytest.raises(HarnessError, match="台帳の toolu_01 は write_report の記録"):
        load_checkpoint_v2(write_v2(workdir))


# ---- the pairing rule for several tool_use blocks (the scripted model rejects what the API would) ------------------


def request_after_turn_1(workdir) -> list[dict]:
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan("after-save-b", 1))
    return read_json(workdir / "checkpoint.json")["messages"]


def test_a_well_formed_parallel_turn_is_accepted(workdir):
    assert pairing_problem(request_after_turn_1(workdir)) is None


def test_results_out_of_order_are_rejected(workdir):
    messages = request_after_turn_1(workdir)
    messages[2]["content"].reverse()
    assert "must follow the order of the `tool_use` blocks" in pairing_problem(messages)


def test_results_split_over_two_messages_are_rejected(workdir):
    messages = request_after_turn_1(workdir)
    first, second = messages[2]["content"]
    messages[2:] = [{"role": "user", "content": [first]}, {"role": "user", "content": [second]}]
    problem = pairing_problem(messages)
    assert "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_02" in problem


def test_text_before_the_results_is_rejected(workdir):
    messages = request_after_turn_1(workdir)
    messages[2]["content"].insert(0, {"type": "text", "text": "結果です"})
    assert "`tool_result` blocks must come first" in pairing_problem(messages)


def test_a_result_given_twice_is_rejected(workdir):
    messages = request_after_turn_1(workdir)
    messages[2]["content"].append(messages[2]["content"][0])
    assert "more than one `tool_result` for the same `tool_use`: toolu_01" in pairing_problem(messages)


def test_every_parallel_response_validates_as_an_anthropic_message(workdir):
    anthropic = pytest.importorskip("anthropic")
    model, responses = ParallelScriptedModel(), []
    create = model.create
    model.create = lambda **kw: responses.append(create(**kw)) or responses[-1]
    model.messages = model
    run_agent_v2(Run(workdir), model, tools=TOOL_SCHEMAS)
    assert [len([b for b in r["content"] if b["type"] == "tool_use"]) for r in responses] == [2, 2, 0]
    for response in responses:
        anthropic.types.Message.model_validate(response)


def test_the_report_is_composed_from_both_reads_of_the_first_turn(workdir):
    run_in_folder(workdir, "parallel")
    report = (workdir / "report.txt").read_text(encoding="utf-8")
    assert report.startswith("# 営業メモのレポート\n\n要点（3件）:\n- A社:")
    assert report.endswith("元のメモ: 文字数: 97（空白と改行を除く）、行数: 4\n")
    assert (workdir / "summary.txt").read_text(encoding="utf-8") == (
        "営業メモ3件（A社、B社、C社）。詳しくは report.txt。\n"
    )
    assert report_text([]).count("（メモの要点を読み取れませんでした）") == 1


def test_a_fresh_parallel_run_removes_the_previous_summary(workdir):
    run_in_folder(workdir, "parallel", crash=None)
    assert (workdir / "summary.txt").exists()
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan("after-save-a", 2))
    assert not (workdir / "summary.txt").exists()


def test_a_fresh_parallel_run_never_deletes_a_summary_it_did_not_make(workdir):
    (workdir / "summary.txt").write_text("わたしのメモ", encoding="utf-8")
    proc = run_cli(workdir, "--parallel")
    assert (
        proc.returncode == 1
        and "summary.txt" in proc.stderr
        and "自分で作っていないファイルは消しません" in proc.stderr
    )
    assert (workdir / "summary.txt").read_text(encoding="utf-8") == "わたしのメモ"


# ---- the sweep: a real SIGKILL at every label x occurrence, then --resume ---------------------------------------------

# Counted by hand from the scenario: 2 turns (2 saves A, 2 saves B), 4 tools (4 runs, 4 ledger writes),
# so 4 checkpoint writes and 4 ledger writes inside the atomic writer.
EXPECTED_COUNTS = {
    "after-save-a": 2,
    "after-tool-run": 4,
    "after-effect-write": 4,
    "after-save-b": 2,
    "checkpoint-torn-write": 4,
    "checkpoint-before-rename": 4,
    "effects-torn-write": 4,
    "effects-before-rename": 4,
}
SWEEP = [(label, n) for label, count in EXPECTED_COUNTS.items() for n in range(1, count + 1)]


def test_the_sweep_covers_every_occurrence_a_parallel_run_reaches():
    for scenario in ("parallel", "parallel+idempotent"):
        assert {label: len(m) for label, m in crash_moments(scenario).items()} == EXPECTED_COUNTS
    assert set(EXPECTED_COUNTS) == set(ALL_LABELS)
    assert len(SWEEP) == 28


def test_crash_moments_name_each_tool_inside_a_turn():
    moments = crash_moments("parallel")
    assert moments["after-tool-run"] == [
        "ターン1 read_notes toolu_01 実行直後（台帳未記録）",
        "ターン1 count_words toolu_02 実行直後（台帳未記録）",
        "ターン2 write_report toolu_03 実行直後（台帳未記録）",
        "ターン2 write_report toolu_04 実行直後（台帳未記録）",
    ]
    assert moments["after-save-a"][1] == "ターン2 地点A保存直後 pending=[write_report, write_report]"


@pytest.fixture(scope="module")
def clean_messages(tmp_path_factory) -> dict[str, list]:
    out = {}
    for scenario in ("parallel", "parallel+idempotent"):
        work = tmp_path_factory.mktemp(scenario.replace("+", "-"))
        run_in_folder(work, scenario)
        out[scenario] = read_json(work / "checkpoint.json")["messages"]
    return out


def check_after_resume(work: Path, last_line: str, clean: list, ledger_at_crash: dict, exact: bool) -> None:
    """Each side effect ran at most once (exactly once when exact), every tool_use has its tool_result, nothing pending."""
    runs = (work / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    cp = read_json(work / "checkpoint.json")
    assert cp["version"] == 2 and cp["pendingToolUses"] == []
    assert pairing_problem(cp["messages"]) is None
    # the closing text: every tool_use before it was answered
    assert cp["messages"][-1]["role"] == "assistant"
    for tool_use_id in SIDE_EFFECTS:
        count = runs.count(f"write_report {tool_use_id}")
        assert count == 1 if exact or tool_use_id in ledger_at_crash else count <= 1, (tool_use_id, runs)
    for line in set(runs):  # a call that ran twice must be read-only and not in the ledger at the crash
        if runs.count(line) > 1:
            name, tool_use_id = line.split()
            assert name in READ_ONLY and tool_use_id not in ledger_at_crash, line
    errors = [
        b
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]
    errors = [b["tool_use_id"] for b in errors if b.get("is_error")]
    if exact or last_line == DONE_OK:
        assert last_line == DONE_OK and errors == [] and cp["messages"] == clean
    else:  # the honest unknown: exactly the calls the closing line names, none of them recorded at the crash
        assert errors and all(e in SIDE_EFFECTS and e not in ledger_at_crash for e in errors)
        files = {"toolu_03": "report.txt", "toolu_04": "summary.txt"}
        assert (
            last_line
            == f"[done] write_report の実行状態が不明です。{' と '.join(files[e] for e in errors)} を確認してください。"
        )


@pytest.mark.parametrize("scenario", ["parallel", "parallel+idempotent"])
@pytest.mark.parametrize("label, n", SWEEP, ids=[f"{label}:{n}" for label, n in SWEEP])
def test_sigkill_at_every_crash_point_then_resume(tmp_path, clean_messages, scenario, label, n):
    flags = ["--parallel"] + (["--idempotent"] if "idempotent" in scenario else [])
    work = tmp_path / "work"
    crashed = run_cli(work, *flags, env={"CRASH_AFTER": f"{label}:{n}", "CRASH_MODE": "sigkill"})
    assert crashed.returncode == -9, crashed.stderr  # really killed by the kernel
    ledger = read_json(work / "effects.json") if (work / "effects.json").exists() else {}
    if label in WRITER_LABELS:  # killed inside the writer: the visible file is the previous one, intact
        assert (work / (label.split("-")[0] + ".json.tmp")).exists()
    resumed = run_cli(work, *flags, "--resume")
    assert "Traceback" not in resumed.stderr
    if not (work / "checkpoint.json").exists() or resumed.returncode == 1:
        # killed inside the very first checkpoint write: nothing saved, no tool ran; the harness says so
        assert (label, n) in (("checkpoint-torn-write", 1), ("checkpoint-before-rename", 1)), resumed.stderr
        assert "checkpoint.json が見つかりません" in resumed.stderr
        assert not (work / "tool-runs.log").exists()
        resumed = run_cli(work, *flags)
    assert resumed.returncode == 0, resumed.stderr
    last = resumed.stdout.splitlines()[-1]
    check_after_resume(work, last, clean_messages[scenario], ledger, exact="idempotent" in scenario)


def test_a_second_crash_during_the_resume_still_converges(tmp_path, clean_messages):
    """In-process: a first crash at each of the lesson's moments x a second crash at every point the resume reaches
    (writer labels included), then resume. (The first crash inside the writers is swept above, with SIGKILL.)"""
    tried = 0
    for scenario in ("parallel", "parallel+idempotent"):
        for label, n in [(label, n) for label, n in SWEEP if label not in WRITER_LABELS]:
            base = tmp_path / f"{scenario}-{label}-{n}"
            with pytest.raises(SimulatedCrash):
                run_in_folder(base, scenario, crash=CrashPlan(label, n))
            snapshot = {p.name: p.read_bytes() for p in base.iterdir()}
            if "checkpoint.json" not in snapshot:
                continue
            ledger_at_crash = json.loads(snapshot.get("effects.json", b"{}"))
            for label2 in ALL_LABELS:
                n2 = 1
                while True:
                    work = tmp_path / f"{scenario}-{label}-{n}-{label2}-{n2}"
                    work.mkdir()
                    for name, data in snapshot.items():
                        (work / name).write_bytes(data)
                    try:
                        run_in_folder(work, scenario, resume=True, crash=CrashPlan(label2, n2))
                        break  # the resume never reached this occurrence
                    except SimulatedCrash:
                        tried += 1
                    done = []
                    listener = [
                        lambda e, done=done: e.kind == "done" and done.append(f"[done] {e.data['text']}")
                    ]
                    run_in_folder(work, scenario, resume=True, listeners=listener)
                    exact = "idempotent" in scenario
                    check_after_resume(work, done[-1], clean_messages[scenario], ledger_at_crash, exact)
                    n2 += 1
    print(f"double-crash cases: {tried}")
    assert tried > 100


def test_clean_events_report_every_step_in_order():
    kinds = [e.kind for e in clean_events("parallel") if e.kind in ("save_a", "tool_ran", "save_b", "done")]
    assert kinds == [
        "save_a",
        "tool_ran",
        "tool_ran",
        "save_b",
        "save_a",
        "tool_ran",
        "tool_ran",
        "save_b",
        "done",
    ]


def test_the_fixed_clock_makes_two_runs_byte_identical(tmp_path):
    for name in ("a", "b"):
        run_in_folder(tmp_path / name, "parallel")
    for file in ("checkpoint.json", "effects.json", "report.txt", "summary.txt"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert read_json(tmp_path / "a" / "effects.json")["toolu_01"]["at"] == FIXED_TIME_MS


# ---- --real: the model may call tools in parallel (offline: the real SDK against a mock transport) ---------------


class ParallelAPI:
    """Answers like the Messages API with the --parallel conversation; a 400 on a broken pairing. Records requests."""

    def __init__(self):
        self.requests: list[dict] = []

    def handler(self, request):
        import httpx2

        from harness import APIError

        body = json.loads(request.content)
        self.requests.append(body)
        try:
            response = ParallelScriptedModel().create(messages=body["messages"])
        except APIError as err:
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": err.message}}
            return httpx2.Response(400, json=error)
        return httpx2.Response(200, json={**response, "model": body["model"]})


def real_client(api: ParallelAPI):
    pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    from harness.models import AnthropicClient

    http = httpx2.Client(transport=httpx2.MockTransport(api.handler))
    return AnthropicClient(api_key="sk-ant-test", max_retries=0, http_client=http, parallel=True)


def test_real_parallel_requests_let_the_model_call_tools_in_parallel(workdir):
    api = ParallelAPI()
    text = run_in_folder(workdir, "parallel", client=real_client(api))
    assert text == "report.txt と summary.txt を書き出しました。タスク完了。"
    assert len(api.requests) == 3
    for body in api.requests:
        assert body["tool_choice"] == {"type": "auto"}  # no disable_parallel_tool_use
        assert body["tools"] == TOOL_SCHEMAS
        assert pairing_problem(body["messages"]) is None
    assert [b["tool_use_id"] for b in api.requests[1]["messages"][2]["content"]] == ["toolu_01", "toolu_02"]
    cp = read_json(workdir / "checkpoint.json")
    assert [b["name"] for b in cp["messages"][3]["content"]] == ["write_report", "write_report"]


@pytest.mark.parametrize("label, n", [("after-tool-run", 2), ("after-effect-write", 3), ("after-save-a", 2)])
def test_real_parallel_crash_then_resume_sends_a_valid_conversation(workdir, label, n):
    with pytest.raises(SimulatedCrash):
        run_in_folder(workdir, "parallel", crash=CrashPlan(label, n), client=real_client(ParallelAPI()))
    api = ParallelAPI()
    text = run_in_folder(workdir, "parallel", resume=True, client=real_client(api))
    assert api.requests and all(pairing_problem(b["messages"]) is None for b in api.requests)
    assert text.startswith(("report.txt と summary.txt", "write_report の実行状態が不明です"))


def test_the_lessons_real_client_still_forbids_parallel_calls():
    api = ParallelAPI()
    pytest.importorskip("anthropic")
    httpx2 = pytest.importorskip("httpx2")
    from harness.models import AnthropicClient

    http = httpx2.Client(transport=httpx2.MockTransport(api.handler))
    with pytest.raises(APIError, match="tool_use が 2 個"):  # and an answer naming two is refused, not saved
        AnthropicClient(api_key="sk-ant-test", max_retries=0, http_client=http).create(
            messages=[{"role": "user", "content": "t"}], tools=TOOL_SCHEMAS
        )
    assert api.requests[0]["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}


def test_command_line_real_parallel_against_a_local_server(workdir):
    pytest.importorskip("anthropic")
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            data = json.dumps(
                {**ParallelScriptedModel().create(messages=body["messages"]), "model": body["model"]}
            )
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data.encode())))
            self.end_headers()
            self.wfile.write(data.encode())

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        env = {
            "ANTHROPIC_API_KEY": "sk-ant-test",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{httpd.server_address[1]}",
            "ANTHROPIC_MODEL": "claude-test-model",
        }
        proc = run_cli(workdir, "--parallel", "--real", env=env)
    finally:
        httpd.shutdown()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == BEYOND["parallel clean run"][0]["stdout"]
    assert [body["tool_choice"] for body in requests] == [{"type": "auto"}] * 3


# ---- notebook 11 shows this module's code, and works as the other notebooks do -----------------------------------


def notebook_problems(name: str, module) -> list[str]:
    """What notebook NAME lacks: 復習/目標, a predict and a try-it cell, 確認問題, a link onward, outputs stored, and
    block cells equal (as code) to the package's functions."""
    import ast
    import inspect

    import nbformat

    nb = nbformat.read(TESTS.parent / "notebooks" / name, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = [c for c in nb.cells if c.cell_type == "code"]
    problems = [what for what, ok in (
        ("復習/目標", "**復習**" in nb.cells[0].source and "**目標**" in nb.cells[0].source),
        ("確認問題", "## 確認問題" in text),
        ("link onward", "次へ: [" in text),
        ("predict", any("predict" in c.metadata.get("tags", []) for c in code)),
        ("try-it", any("try-it" in c.metadata.get("tags", []) for c in code)),
        ("outputs", [c.execution_count for c in code] == list(range(1, len(code) + 1))),
    ) if not ok]  # fmt: skip
    for cell in code:
        for fn in [n for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)]:
            if "block" in cell.metadata.get("tags", []):
                package = ast.parse(inspect.getsource(getattr(module, fn.name))).body[0]
                if ast.dump(fn) != ast.dump(package):
                    problems.append(f"{fn.name} differs from {module.__name__}")
    return problems


def test_notebook_11_shows_the_packages_blocks_and_has_the_notebook_parts():
    from harness.beyond import parallel

    assert notebook_problems("11_parallel.ipynb", parallel) == []


# ---- the version-2 loader applies every check of the version-1 loader, and what a pending set adds ---------------


def snapshot(workdir):
    return {p.name: p.read_bytes() for p in sorted(workdir.iterdir())}


def refused_with_nothing_run(workdir, *fragments):
    """`--parallel --resume` ends in one or two lines naming the checkpoint, and the folder is as it was."""
    before = snapshot(workdir)
    proc = run_cli(workdir, "--parallel", "--resume")
    assert proc.returncode == 1 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "予期しないエラー" not in proc.stderr
    assert 1 <= len(proc.stderr.strip().splitlines()) <= 2, proc.stderr
    for fragment in ("checkpoint.json", *fragments):
        assert fragment in proc.stderr, (fragment, proc.stderr)
    assert snapshot(workdir) == before  # nothing ran, nothing was saved
    return proc


def test_an_old_lesson_checkpoint_put_back_beside_a_newer_ledger_is_refused_by_the_parallel_resume(workdir):
    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-b:1"}).returncode == 137
    old = (workdir / "checkpoint.json").read_bytes()  # turn 1 done: knows only toolu_01
    assert run_cli(workdir, env={"CRASH_AFTER": "after-effect-write:3"}).returncode == 137
    assert run_cli(workdir, "--resume").returncode == 0  # finished: write_report ran once
    (workdir / "checkpoint.json").write_bytes(old)
    refused_with_nothing_run(workdir, "台帳より古い", "toolu_02")
    lines = (workdir / "tool-runs.log").read_text(encoding="utf-8").splitlines()
    assert lines.count("write_report toolu_03") == 1


@pytest.mark.parametrize("which", [0, 1])
def test_a_record_for_another_tool_under_any_pending_id_is_refused_naming_the_id_and_the_tool(workdir, which):
    assert run_cli(workdir, "--parallel", env={"CRASH_AFTER": "after-save-a:1"}).returncode == 137
    pending = read_json(workdir / "checkpoint.json")["pendingToolUses"]
    call = pending[which]  # toolu_01 read_notes, or the second: toolu_02 count_words
    (workdir / "effects.json").write_text(
        json.dumps({call["id"]: {"name": "write_report", "result": "x", "at": 1}}), encoding="utf-8"
    )
    refused_with_nothing_run(workdir, call["id"], "write_report", call["name"])


@pytest.mark.parametrize("version", [2.0, True, "2", 2.5])
def test_a_version_2_that_is_not_the_integer_2_is_refused_naming_version(workdir, version):
    path = write_v2(workdir, version=version)
    with pytest.raises(HarnessError) as err:
        load_checkpoint_v2(path)
    assert "version" in str(err.value) and str(path) in str(err.value)
    with pytest.raises(HarnessError) as err:
        load_checkpoint(
            path
        )  # the lesson's loader: not told to resume with --parallel (only 2 was written by it)
    assert "--parallel" not in str(err.value) and "version" in str(err.value)


def crash_in_turn_2(workdir):
    """A --parallel run killed at point A of turn 2: pending [toolu_03, toolu_04], both write_report."""
    assert run_cli(workdir, "--parallel", env={"CRASH_AFTER": "after-save-a:2"}).returncode == 137
    return read_json(workdir / "checkpoint.json")


def rewrite(workdir, cp):
    (workdir / "checkpoint.json").write_text(json.dumps(cp, ensure_ascii=False, indent=2), encoding="utf-8")


@pytest.mark.parametrize("used", ["toolu_01", "toolu_02"])
@pytest.mark.parametrize("which", [0, 1])
def test_a_pending_id_the_conversation_already_used_is_refused_at_load(workdir, used, which):
    cp = crash_in_turn_2(workdir)
    cp["pendingToolUses"][which]["id"] = used  # answered in turn 1: a resume would run write_report under it
    rewrite(workdir, cp)
    refused_with_nothing_run(workdir, used, "すでに使われています")
    assert not (workdir / "report.txt").exists() and not (workdir / "summary.txt").exists()


def test_a_pending_id_that_only_a_tool_result_of_the_conversation_names_is_refused(workdir):
    cp = crash_in_turn_2(workdir)
    cp["messages"][-1]["content"][0]["tool_use_id"] = "toolu_77"  # an answer to a call made under toolu_77
    cp["pendingToolUses"][0]["id"] = "toolu_77"
    rewrite(workdir, cp)
    (workdir / "effects.json").write_text("{}", encoding="utf-8")
    refused_with_nothing_run(
        workdir, "tool_use と tool_result の対が崩れて"
    )  # the answer names no call: pairing broken


def test_a_conversation_with_a_repeated_tool_use_id_is_refused(workdir):
    cp = crash_in_turn_2(workdir)
    cp["messages"][1]["content"][1]["id"] = "toolu_01"  # turn 1 named toolu_01 twice
    rewrite(workdir, cp)
    refused_with_nothing_run(workdir, "toolu_01", "2回")


def test_a_version_1_pending_id_the_conversation_already_used_is_refused(workdir):
    assert run_cli(workdir, env={"CRASH_AFTER": "after-save-a:3"}).returncode == 137
    cp = read_json(workdir / "checkpoint.json")
    cp["pendingToolUse"]["id"] = "toolu_02"
    rewrite(workdir, cp)
    for flags in ([], ["--parallel"]):
        before = snapshot(workdir)
        proc = run_cli(workdir, *flags, "--resume")
        assert proc.returncode == 1 and "toolu_02" in proc.stderr and "すでに使われています" in proc.stderr
        assert "予期しないエラー" not in proc.stderr and snapshot(workdir) == before


@pytest.mark.parametrize("count", [65, 1000])
def test_more_pending_calls_than_one_response_may_carry_are_refused_and_none_runs(workdir, count):
    cp = crash_in_turn_2(workdir)
    cp["pendingToolUses"] = [
        {"id": f"toolu_x{i}", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
        for i in range(count)
    ]
    rewrite(workdir, cp)
    refused_with_nothing_run(workdir, str(count), "64")


def test_as_many_pending_calls_as_one_response_may_carry_are_reconciled(workdir):
    cp = crash_in_turn_2(workdir)
    cp["pendingToolUses"] = [
        {"id": f"toolu_x{i}", "name": "count_words", "input": {"path": "sales-notes.txt"}} for i in range(64)
    ]
    rewrite(workdir, cp)
    proc = run_cli(workdir, "--parallel", "--resume")
    assert proc.stdout.count("読み取り専用ツール、再実行する") == 64, proc.stderr
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8").count("count_words toolu_x") == 64


class RepeatingModel:
    """A client of one's own (notebook 11) whose second response reuses ids of the first."""

    def __init__(self, second_ids):
        self.messages, self.second_ids = self, second_ids

    def create(self, *, messages, tools=None, **_):
        step = sum(1 for m in messages if m["role"] == "assistant")
        ids = ["toolu_01", "toolu_02"] if step == 0 else self.second_ids
        content = [
            {
                "type": "tool_use",
                "id": i,
                "name": "write_report",
                "input": {"path": f"r{n}.txt", "content": "x"},
            }
            for n, i in enumerate(ids)
        ]
        return {
            "content": content,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }


@pytest.mark.parametrize("second_ids", [["toolu_01"], ["toolu_03", "toolu_02"]])
def test_a_pending_set_reusing_an_id_of_the_conversation_is_never_saved_nor_run(workdir, second_ids):
    run = Run(workdir)
    with pytest.raises(HarnessError, match="すでに使われています"):
        run_agent_v2(run, RepeatingModel(second_ids), tools=TOOL_SCHEMAS)
    cp = read_json(workdir / "checkpoint.json")  # the last good save: point B of turn 1
    assert cp["turns"] == 1 and cp["pendingToolUses"] == []
    assert (workdir / "tool-runs.log").read_text(encoding="utf-8").splitlines() == [
        "write_report toolu_01",
        "write_report toolu_02",
    ]
    assert load_checkpoint_v2(workdir / "checkpoint.json")["turns"] == 1


def test_a_pending_set_larger_than_one_response_may_carry_is_never_saved(workdir):
    with pytest.raises(HarnessError, match="64"):
        run_agent_v2(Run(workdir), ManyModel(), tools=TOOL_SCHEMAS)
    assert not (workdir / "checkpoint.json").exists() and not (workdir / "tool-runs.log").exists()


class ManyModel:
    def __init__(self):
        self.messages = self

    def create(self, *, messages, tools=None, **_):
        content = [
            {
                "type": "tool_use",
                "id": f"toolu_{i}",
                "name": "read_notes",
                "input": {"path": "sales-notes.txt"},
            }
            for i in range(65)
        ]
        return {
            "content": content,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
