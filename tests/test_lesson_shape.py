"""The lesson's blocks read like the lesson: short, Japanese comments and docstrings, no test scaffolding inside."""

from __future__ import annotations

import ast
import inspect
import re
import sys

import pytest

import harness
from harness import (
    TOOL_SCHEMAS,
    CrashPlan,
    Run,
    ScriptedModel,
    SimulatedCrash,
    crash_on,
    execute_tool,
    run_agent,
    save_effect,
)
from harness.texts import TOOL_ERROR_RESULT

BLOCK_MODULES = [sys.modules[f"harness.{m}"] for m in ("checkpoint", "ledger", "loop", "reconcile")]
BLOCKS = [
    fn
    for m in BLOCK_MODULES
    for fn in vars(m).values()
    if inspect.isfunction(fn) and fn.__module__ == m.__name__
]
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# What a test harness looks like from inside: none of it may appear in a block.
SCAFFOLDING = {
    "crash",
    "crash_point",
    "crash_on",
    "CrashPlan",
    "SimulatedCrash",
    "writer_hooks",
    "hold_workdir",
    "holds_workdir",
    "flock",
    "lock",
    "plan",
    "sigkill",
}


def test_the_four_modules_define_the_lessons_blocks():
    names = {fn.__name__ for fn in BLOCKS}
    assert {
        "write_json_atomic",
        "save_checkpoint",
        "load_checkpoint",
        "load_effects",
        "save_effect",
        "run_tool_uses",
        "run_agent",
        "reconcile",
    } <= names


@pytest.mark.parametrize("fn", BLOCKS, ids=lambda f: f.__name__)
def test_no_block_is_longer_than_60_lines(fn):
    lines, _ = inspect.getsourcelines(fn)
    assert len(lines) <= 60, f"{fn.__name__}: {len(lines)} lines"


@pytest.mark.parametrize("fn", BLOCKS, ids=lambda f: f.__name__)
def test_blocks_have_japanese_docstrings_and_no_scaffolding(fn):
    assert fn.__doc__ and JAPANESE.search(fn.__doc__), fn.__name__
    code = inspect.getsource(fn)
    names = {n.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Attribute)}
    found = sorted(names & SCAFFOLDING)
    assert not found, f"{fn.__name__} uses {found}"


@pytest.mark.parametrize("module", BLOCK_MODULES, ids=lambda m: m.__name__)
def test_every_comment_in_a_block_module_is_japanese(module):
    source = inspect.getsource(module)
    comments = [c for c in re.findall(r"#\s*(.+)$", source, flags=re.MULTILINE) if not c.startswith("fmt:")]
    assert all(JAPANESE.search(c) for c in comments), [c for c in comments if not JAPANESE.search(c)]


def test_point_a_and_point_b_carry_the_lessons_comments():
    code = inspect.getsource(harness.loop.run_agent)
    assert "地点A: モデルのレスポンスを受け取った直後" in code
    assert "地点B: ツール結果が messages に入り" in code
    assert code.count('"version": CHECKPOINT_VERSION') >= 2  # the scene written out at both save sites


def lesson_run_tool_uses(run, content):
    """A faithful port of the lesson's runToolUses: its `catch (err)` around the tool becomes `except Exception`."""
    results = []
    for block in [b for b in content if b["type"] == "tool_use"]:
        try:
            output = execute_tool(run, block)
        except Exception as err:  # noqa: BLE001 (the lesson's catch-all, on purpose)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": block["id"],
                    "content": TOOL_ERROR_RESULT.format(error=err),
                    "is_error": True,
                }
            )
            continue
        try:
            save_effect(
                run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()}
            )
        except Exception:  # noqa: BLE001, S110 (the lesson only raises an alert here)
            pass
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


@pytest.mark.parametrize("how", ["after-tool-run", "as write_report starts"])
def test_a_learners_catch_all_cannot_swallow_the_simulated_crash(workdir, how):
    """A real kill cannot be caught; the simulated one must not be either."""
    if how == "after-tool-run":
        run = Run(workdir, crash=CrashPlan("after-tool-run", 3))
    else:
        run = Run(workdir, listeners=[crash_on("tool_start", "write_report")])
    with pytest.raises(SimulatedCrash):
        run_agent(
            run,
            ScriptedModel(),
            tools=TOOL_SCHEMAS,
            run_tool_uses=lesson_run_tool_uses,
        )
    assert (workdir / "checkpoint.json").exists()
    assert '"pendingToolUse": {' in (workdir / "checkpoint.json").read_text(encoding="utf-8")


def test_simulated_crash_is_not_an_exception():
    assert not issubclass(SimulatedCrash, Exception)
    assert issubclass(SimulatedCrash, BaseException)


def test_the_package_has_no_import_cycle_and_the_lesson_imports_nothing_built_on_it():
    """bench/import_graph.py's figures (every import, those inside functions too): no cycle, and no module of the
    lesson's part but the command line's __main__ imports beyond/, lab/ or exercises/."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "import_graph", Path(__file__).resolve().parents[1] / "bench" / "import_graph.py"
    )
    house = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(house)
    known = house.modules()
    graph = house.import_graph(known)
    assert "harness.beyond.modes" in graph["harness.beyond.cli"], "the reader must see the imports it judges"
    assert house.cycles(graph) == []
    assert house.upward(known, graph) == []
    assert house.lesson_lines(known) <= 2300  # the lesson's part stays small enough to read (issue #22)
