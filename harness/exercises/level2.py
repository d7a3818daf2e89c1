"""Level 2 (台帳を逆順に書いてしまった順序の誤り): the production bug, the learner's fix, and their reproduction script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ..crash import crash_on
from ..lab import read_text
from ..lab.process import child_env, run_harness
from ..ledger import load_effects, save_effect
from ..tools import execute_tool
from . import (
    BRANCH_WORDS,
    HIT,
    IS_ERROR,
    Verdict,
    crash_and_resume,
    crash_then_look,
    resume_and_look,
    scratch_dir,
)

HIT_LINE = "[resume][reconcile] tool_use_id=toolu_03 name=write_report 台帳ヒット、結果を再利用、再実行しない"


def run_tool_uses_prod(run, content):
    """本番で動いていた版: ツールを実行する前に台帳へ書いている。"""
    tool_use_blocks = [b for b in content if b["type"] == "tool_use"]
    results = []
    for block in tool_use_blocks:
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        output = execute_tool(run, block)
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def crash_before_write_report(workdir: Path, run_tool_uses) -> dict:
    """Run the loop with run_tool_uses, dying as write_report starts; then resume with the lesson's reconcile."""
    seen: dict = {}

    def note_ledger(event) -> None:
        if event.kind == "tool_start" and event.data["name"] == "write_report":
            seen["ledger_when_tool_started"] = load_effects(workdir / "effects.json")

    listeners = [note_ledger, crash_on("tool_start", "write_report")]
    crashed = crash_then_look(workdir, None, listeners=listeners, run_tool_uses=run_tool_uses)
    if not crashed["crashed"]:
        raise RuntimeError("write_report が一度も呼ばれませんでした")
    return {**crashed, **resume_and_look(workdir, run_tool_uses=run_tool_uses), **seen}


def check_level2_diagnosis(diagnosis: dict) -> Verdict:
    """(a)(b) the structured diagnosis of run_tool_uses_prod, compared with what it really does when it crashes."""
    verdict = Verdict("レベル2 (a)(b) 診断")
    with scratch_dir() as tmp:
        seen = crash_before_write_report(Path(tmp), run_tool_uses_prod)
    before = seen.get("ledger_when_tool_started", {})
    first = "save_effect" if "toolu_03" in before else "execute_tool"
    verdict.compare(
        "run_tool_uses_prod で先に呼ばれるのは",
        diagnosis.get("first_call", ...),
        first,
        "write_report が呼ばれた瞬間、台帳にはすでに toolu_03 がありました" if first == "save_effect" else "",
    )
    verdict.compare(
        "そのとき台帳に書かれる result",
        diagnosis.get("recorded_result", ...),
        before.get("toolu_03", {}).get("result"),
        "ツールがまだ走っていないので本物の結果は存在しません",
    )
    verdict.compare(
        "台帳の書き込み後・ツール実行前に落ちて --resume したときの reconcile",
        diagnosis.get("branch_after_crash", ...),
        BRANCH_WORDS[seen["branch"]],
        "プレースホルダのレコードに台帳ヒットしました" if seen["branch"] == "hit" else "",
    )
    verdict.compare(
        "再開が終わったとき report.txt はあるか", diagnosis.get("report_exists", ...), seen["report_after"]
    )
    verdict.compare(
        "write_report は一度でも実際に実行されたか",
        diagnosis.get("tool_ran", ...),
        any(r.startswith("write_report") for r in seen["runs_after"]),
        "tool-runs.log を見た結果",
    )
    return verdict


def check_level2_fix(run_tool_uses) -> Verdict:
    """(c) the learner's fixed run_tool_uses, plugged into the real loop: a clean run, then a crash as write_report starts."""
    verdict = Verdict("レベル2 (c) 修正版 run_tool_uses")
    if run_tool_uses is Ellipsis or not callable(run_tool_uses):
        verdict.missing.append("修正版 run_tool_uses")
        verdict.lines.append("… 修正版 run_tool_uses: まだ関数が定義されていません")
        return verdict
    with scratch_dir() as tmp:
        try:
            clean = crash_and_resume(Path(tmp), None, run_tool_uses=run_tool_uses)
        except NotImplementedError:
            verdict.missing.append("修正版 run_tool_uses")
            verdict.lines.append("… 修正版 run_tool_uses: まだ書かれていません（NotImplementedError）")
            return verdict
        except Exception as err:  # noqa: BLE001 (the learner's code: report, never raise)
            verdict.fail(f"通常の実行で修正版がエラーを出しました: {type(err).__name__}: {err}")
            return verdict
        effects = json.loads(clean["disk"]["effects.json"] or "{}")
        results = _tool_results(Path(tmp))
    placeholders = [k for k, v in effects.items() if v.get("result") is None]
    if placeholders:
        verdict.fail(
            f"台帳に result=None（プレースホルダ）が記録されています: {', '.join(placeholders)}。"
            "ツールが返した本物の結果を記録してください"
        )
    elif sorted(effects) != ["toolu_01", "toolu_02", "toolu_03"]:
        verdict.fail(
            f"通常の実行のあと台帳にあるべき toolu_01〜03 がそろっていません（実際: {sorted(effects)}）"
        )
    elif any(effects[k]["result"] != results.get(k) for k in effects):
        verdict.fail("台帳の result が、モデルに返した tool_result の content と一致しません")
    else:
        verdict.lines.append("✓ 通常の実行: 3つのツールが走り、台帳には本物の結果が記録された")
    with scratch_dir() as tmp:
        try:
            crashed = crash_before_write_report(Path(tmp), run_tool_uses)
        except Exception as err:  # noqa: BLE001 (the learner's code: report, never raise)
            verdict.fail(f"クラッシュ後の再開でエラーが出ました: {type(err).__name__}: {err}")
            return verdict
    if "toolu_03" in crashed.get("ledger_when_tool_started", {}):
        verdict.fail(
            "write_report を実行する前に台帳へ書いています。実行が先、記録が後です"
            "（ツールが始まった瞬間の effects.json にすでに toolu_03 がありました）"
        )
    elif "toolu_03" in json.loads(crashed["disk"]["effects.json"] or "{}"):
        verdict.fail("write_report が走る前に落ちたのに、台帳に toolu_03 が残りました")
    else:
        verdict.lines.append("✓ write_report の実行直前に落ちた: 台帳に toolu_03 はない")
    verdict.compare(
        "そこから --resume したときの reconcile",
        BRANCH_WORDS[crashed["branch"]],
        IS_ERROR,
        "台帳ミスかつ副作用ありなら is_error で正直に返すはずです",
        mine="あなたのコードでは",
    )
    return verdict


def _tool_results(workdir: Path) -> dict:
    cp = json.loads((workdir / "checkpoint.json").read_text(encoding="utf-8"))
    return {
        b["tool_use_id"]: b["content"]
        for m in cp["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


def _run_script(script: Path, order: str, workdir: Path, crash: str | None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(script), order, str(workdir)],
        capture_output=True,
        text=True,
        env=child_env({"REPRO_CRASH": crash} if crash else None),
        check=False,
        timeout=60,
        cwd=script.parent,
    )


def _last_line(proc: subprocess.CompletedProcess) -> str:
    lines = (proc.stderr or proc.stdout).strip().splitlines()
    return lines[-1] if lines else "（出力なし）"


def check_level2_repro(script: str | Path) -> Verdict:
    """(d) the learner's reproduction script, run as real processes for both orders, then --resume on the wrong one."""
    verdict = Verdict("レベル2 (d) 再現スクリプト")
    script = Path(script).resolve()
    if not script.is_file():
        verdict.fail(f"{script.name} が見つかりません")
        return verdict
    seen = {}
    with scratch_dir() as tmp:
        for order in ("wrong", "fixed"):
            work = Path(tmp) / order
            proc = _run_script(script, order, work, "3")
            if proc.returncode in (0, 1, 2) or "Traceback" in proc.stderr:
                verdict.fail(
                    f"REPRO_CRASH=3 で {order} を実行しても疑似クラッシュしませんでした"
                    f"（終了コード {proc.returncode}、最後の行: {_last_line(proc)}）"
                )
                return verdict
            effects = json.loads(read_text(work / "effects.json") or "{}")
            runs = (read_text(work / "tool-runs.log") or "").splitlines()
            seen[order] = (effects, runs, work)
            if "write_report toolu_03" in runs:
                verdict.fail(
                    f"{order}: クラッシュ地点が write_report の実行より後にあります（tool-runs.log に write_report）。"
                    "台帳の書き込みとツール実行のあいだ、ツールが走る前に置いてください"
                )
                return verdict
        wrong, fixed = seen["wrong"][0], seen["fixed"][0]
        verdict.compare(
            "誤った順序: クラッシュ時に台帳に toolu_03 があるか",
            "toolu_03" in wrong,
            True,
            "誤った順序では、ツールより先に台帳へ書くはずです",
            mine="あなたのスクリプトでは",
        )
        verdict.compare(
            "誤った順序: そのレコードの result",
            wrong.get("toolu_03", {}).get("result", "（なし）"),
            None,
            mine="あなたのスクリプトでは",
        )
        verdict.compare(
            "修正した順序: クラッシュ時に台帳に toolu_03 があるか",
            "toolu_03" in fixed,
            False,
            "修正した順序では、ツールが走る前に記録はできないはずです",
            mine="あなたのスクリプトでは",
        )
        resume = _resume(seen["wrong"][2])
        runs_after = (read_text(seen["wrong"][2] / "tool-runs.log") or "").splitlines()
        verdict.compare(
            "誤った順序で --resume: 台帳ヒットと判定された",
            HIT_LINE in resume.stdout.splitlines(),
            True,
            mine="あなたのスクリプトでは",
        )
        verdict.compare(
            "誤った順序で --resume: report.txt はあるか",
            (seen["wrong"][2] / "report.txt").exists(),
            False,
            mine="あなたのスクリプトでは",
        )
        verdict.compare(
            "誤った順序で --resume: write_report は一度も実行されていないか",
            not any(r.startswith("write_report") for r in runs_after),
            True,
            mine="あなたのスクリプトでは",
        )
        clean = _run_script(script, "wrong", Path(tmp) / "no-crash", None)
        verdict.compare(
            "REPRO_CRASH なしなら最後まで走る（クラッシュは環境変数で制御）",
            clean.returncode,
            0,
            _last_line(clean) if clean.returncode else "",
            mine="終了コード",
        )
    return verdict


def show_repro(script: str, workdir: str = "_work") -> None:
    """Run the reproduction script for both orders with REPRO_CRASH=3, then --resume the wrong one, like a terminal."""
    exits = {}
    for order in ("wrong", "fixed"):
        work = Path(workdir) / f"repro-{order}"
        shutil.rmtree(work, ignore_errors=True)
        proc = _run_script(Path(script).resolve(), order, work.resolve(), "3")
        print(f"$ REPRO_CRASH=3 python {script} {order} {work}")
        print(proc.stdout, end="")
        if proc.returncode not in (137, -9):
            print(_last_line(proc))
        print(f"EXIT={proc.returncode}")
        exits[order] = proc.returncode
        effects = json.loads(read_text(work / "effects.json") or "{}")
        entry = effects.get("toolu_03")
        shown = {k: entry.get(k) for k in ("name", "result")} if isinstance(entry, dict) else "なし"
        print(f"effects.json の toolu_03: {shown}")
        print()
    work = Path(workdir) / "repro-wrong"
    if exits["wrong"] != 137:
        print("（誤った順序のスクリプトが疑似クラッシュしなかったので、--resume は省きます）")
        return
    resume = _resume(work)
    print(f"$ python -m harness --workdir {work} --resume")
    print(resume.stdout + resume.stderr, end="")
    print(f"EXIT={resume.returncode}")
    print("report.txt:", "あり" if (work / "report.txt").exists() else "なし")
    print(
        "tool-runs.log:", " / ".join((read_text(work / "tool-runs.log") or "").splitlines()) or "（実行なし）"
    )


def _resume(workdir: Path) -> subprocess.CompletedProcess:
    """The real command line's --resume in workdir, with the lesson's reconcile."""
    return run_harness(workdir, "--resume")


__all__ = [
    "HIT",
    "check_level2_diagnosis",
    "check_level2_fix",
    "check_level2_repro",
    "run_tool_uses_prod",
    "show_repro",
]
