"""The committed notebooks: built from their Markdown sources, executed top to bottom with outputs stored, stable,
and showing the package's own code."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import shutil
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

import harness  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p for folder in ("notebooks", "exercises", "solutions") for p in (ROOT / folder).glob("*.ipynb")
)
SOURCES = sorted([*(ROOT / "src" / "notebooks").glob("*.md"), *(ROOT / "src" / "solutions").glob("*.md")])
REBUILD = "edit the .md, then: python scripts/build_notebooks.py && python scripts/run_notebooks.py"
LESSON = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
MODULES = [sys.modules[f"harness.{m}"] for m in ("checkpoint", "ledger", "loop", "reconcile")]
# Every lesson block a notebook may define, mapped to the package's function of the same name.
BLOCKS = {
    name: fn
    for m in MODULES
    for name, fn in vars(m).items()
    if inspect.isfunction(fn) and fn.__module__ == m.__name__
}


def code_cells(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


RECAP = "10_recap"


def number(path: Path) -> int:
    return int(path.name[:2])


def test_the_numbered_notebooks_are_the_lesson_the_recap_and_any_further_ones():
    """01-09 follow the lesson's sections, 10 is the recap; notebooks beyond the lesson may follow as 11, 12, ..."""
    assert [number(p) for p in LESSON] == list(range(1, len(LESSON) + 1)), "one notebook per number, no gaps"
    assert len(LESSON) >= 10 and LESSON[9].stem == RECAP
    for path in LESSON:
        first = nbformat.read(path, as_version=4).cells[0].source
        assert "**復習**" in first and "**目標**" in first, path.name


# What makes a learner work through a numbered notebook, not just run it (checked in the Markdown sources).
NUMBERED_SOURCES = sorted((ROOT / "src" / "notebooks").glob("[0-9][0-9]_*.md"))
LINK = re.compile(r"\]\(([^)\s]+\.ipynb)(?:#[^)]*)?\)")


def markdown_text(md: Path) -> str:
    return "\n".join(c.source for c in read_md(md).cells if c.cell_type == "markdown")


@pytest.mark.parametrize("md", NUMBERED_SOURCES, ids=lambda p: p.name)
def test_a_prediction_is_written_before_an_experiment_and_checked_after_it(md):
    cells = read_md(md).cells
    predicts = [i for i, c in enumerate(cells) if "predict" in tags(c)]
    assert predicts, f"{md.name}: no cell tagged predict"
    for i in predicts:
        name = re.search(r"^(予想\w*) = \.\.\.", cells[i].source, flags=re.MULTILINE)
        assert cells[i].cell_type == "code" and name, (
            f"{md.name}: a predict cell leaves 予想... = ... for the learner to fill in"
        )
        later = [c.source for c in cells[i + 1 :] if c.cell_type == "code"]
        assert any(name.group(1) in src and "check_prediction(" in src for src in later), (
            f"{md.name}: the prediction {name.group(1)} in cell {i + 1} is never checked with check_prediction"
        )


# How a prediction is read (harness.lab.check_prediction): the lesson's own wording of a branch counts as right.
# The log lines are written out here as the lesson prints them (not read from harness.texts), so a drift shows.
LESSON_LINES = {
    "hit": "[resume][reconcile] tool_use_id=toolu_03 name=write_report 台帳ヒット、結果を再利用、再実行しない",
    "rerun": "[resume][reconcile] tool_use_id=toolu_01 name=read_notes 台帳ミス、読み取り専用ツール、再実行する",
    "unknown": "[resume][reconcile] tool_use_id=toolu_04 name=write_report 台帳ミスかつ副作用あり、判断不能、is_error を追加",
}


def branch_prediction(prediction, branch):
    from harness.lab import BRANCH_WORDS, check_prediction

    return check_prediction(prediction, branch, "分岐", accept=BRANCH_WORDS.get(branch, ()))


@pytest.mark.parametrize("branch", list(LESSON_LINES))
def test_a_branch_predicted_with_the_lessons_log_line_or_a_distinctive_part_of_it_is_right(branch, capsys):
    line = LESSON_LINES[branch]
    tail = line.split(" ", 3)[3]
    for prediction in (line, tail, *tail.split("、"), tail.replace("、", ", ")):
        if prediction == "台帳ミス":  # shared by two branches: says nothing about which
            continue
        assert branch_prediction(prediction, branch), prediction
    for other, other_line in LESSON_LINES.items():
        if other != branch:
            assert not branch_prediction(other_line, branch)
            assert not branch_prediction(other_line.split(" ", 3)[3].split("、")[-1], branch)


def test_ledger_miss_alone_is_no_branch(capsys):
    assert not branch_prediction("台帳ミス", "rerun") and not branch_prediction("台帳ミス", "unknown")


@pytest.mark.parametrize(
    "prediction, actual",
    [("一", 1), ("二回", 2), ("三 行", 3), ("十", 10), ("〇", 0), ("２つ", 2), ("2回", 2)],
)
def test_a_count_may_be_written_in_kanji_or_with_its_unit(prediction, actual, capsys):
    from harness.lab import check_prediction

    assert check_prediction(prediction, actual, "回数")
    assert not check_prediction(prediction, actual + 1, "回数")


@pytest.mark.parametrize(
    "prediction, actual",
    [
        (True, 1),
        (1, True),
        (False, 0),
        (0, False),
        ("True", 1),
        ("はい", 1),
        ("1", True),
        ("0", False),
        ("null", 0),
    ],
)
def test_a_boolean_is_not_a_count(prediction, actual, capsys):
    """check_prediction's docstring: numbers and booleans stay apart (Python's True == 1 must not make ✓)."""
    from harness.lab import check_prediction

    assert not check_prediction(prediction, actual, "回数")
    assert "✗ 回数" in capsys.readouterr().out


@pytest.mark.parametrize("prediction, actual", [(1, 1), (1.0, 1), ("1", 1), (True, True), ("true", True)])
def test_a_count_or_a_boolean_matched_by_its_own_kind_is_right(prediction, actual, capsys):
    from harness.lab import check_prediction

    assert check_prediction(prediction, actual, "回数")
    assert "✓ 回数" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["after-save-a:①", "after-save-a:²", "after-save-a:", "after-save-a:4", "①"])
def test_a_try_it_moment_that_is_not_one_prints_the_moments_and_never_raises(text, capsys):
    from harness.beyond.scenarios import choose_moment

    assert choose_moment("lesson", text) is None
    out = capsys.readouterr().out
    assert repr(text) in out and "after-save-a:1〜3" in out and "after-tool-run:1〜3" in out


def test_a_try_it_moment_in_full_width_digits_is_read(capsys):
    from harness.beyond.scenarios import choose_moment

    assert choose_moment("parallel", "after-tool-run:４")[:2] == ("after-tool-run", 4)


@pytest.mark.parametrize("md", NUMBERED_SOURCES, ids=lambda p: p.name)
def test_there_is_a_try_it_variation(md):
    cells = read_md(md).cells
    tried = [i for i, c in enumerate(cells) if "try-it" in tags(c)]
    assert tried, f"{md.name}: no cell tagged try-it"
    assert all(cells[i].cell_type == "code" for i in tried), md.name
    assert "やってみよう" in markdown_text(md), f"{md.name}: no やってみよう section"


@pytest.mark.parametrize("md", NUMBERED_SOURCES, ids=lambda p: p.name)
def test_it_ends_with_two_or_three_questions_and_their_answers(md):
    text = markdown_text(md)
    assert "## 確認問題" in text, f"{md.name}: no 確認問題"
    section = text.split("## 確認問題", 1)[1]
    questions = section.split("<details>", 1)[0]
    count = len(re.findall(r"(?m)^\d+\. ", questions))
    assert 2 <= count <= 3, f"{md.name}: {count} questions"
    assert "<details>" in section, f"{md.name}: the answers are not given (folded) after the questions"


@pytest.mark.parametrize("md", NUMBERED_SOURCES, ids=lambda p: p.name)
def test_it_links_onward_to_notebooks_that_exist(md):
    links = LINK.findall(markdown_text(md))
    here = ROOT / "notebooks"  # links are written for the built notebook, not for its source
    for link in links:
        assert (here / link).exists(), f"{md.name}: the link {link} leads nowhere"
    targets = {(here / link).resolve() for link in links}
    if md.stem == RECAP:
        assert (ROOT / "exercises" / "level1_crash_moments.ipynb").resolve() in targets, md.name
        assert (ROOT / "notebooks" / "crash_lab.ipynb").resolve() in targets, md.name
        return
    following = [p for p in NUMBERED_SOURCES if number(p) == number(md) + 1]
    if following:
        assert (here / f"{following[0].stem}.ipynb").resolve() in targets, (
            f"{md.name}: no link to {following[0].stem}"
        )
    else:
        assert targets, f"{md.name}: the last notebook links nowhere onward"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_was_executed_in_order_with_outputs_stored(path):
    counts = [c.execution_count for c in code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), "re-run with scripts/run_notebooks.py"
    for cell in code_cells(path):
        for out in cell.outputs:
            assert out.output_type != "error", cell.source[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_outputs_hold_no_absolute_paths_or_addresses(path):
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in code_cells(path)
        for o in c.outputs
    )
    assert str(ROOT) not in text and "/tmp/" not in text
    assert not re.search(r"0x[0-9a-f]{6,}", text)


def _defs(source: str) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("path", LESSON, ids=lambda p: p.name)
def test_block_cells_are_the_packages_code(path):
    shown = {}
    for cell in code_cells(path):
        shown.update({k: v for k, v in _defs(cell.source).items() if k in BLOCKS})
    for name, node in shown.items():
        package = _defs(inspect.getsource(BLOCKS[name]))[name]
        assert ast.dump(node) == ast.dump(package), f"{path.name}: {name} differs from harness"


def test_the_lesson_blocks_are_all_shown_somewhere():
    shown = set()
    for path in LESSON:
        for cell in code_cells(path):
            shown |= set(_defs(cell.source)) & set(BLOCKS)
    assert {
        "save_checkpoint",
        "load_checkpoint",
        "save_effect",
        "load_effects",
        "run_tool_uses",
        "run_agent",
        "reconcile",
    } <= shown


# The Markdown sources (scripts/build_notebooks.py writes the notebooks from them)


def tags(cell) -> list[str]:
    return cell.metadata.get("tags", [])


def read_md(path: Path):
    return jupytext.read(path, fmt="md:myst")


def built_from(md: Path) -> list[tuple[Path, str]]:
    """The notebooks built from a source, each with the tag of the cells it leaves out."""
    pairs = [(ROOT / md.parent.name / f"{md.stem}.ipynb", "blank")]
    if md.parent.name == "solutions":
        pairs.append((ROOT / "exercises" / f"{md.stem}.ipynb", "answer"))
    return pairs


BUILT = [(md, ipynb, left_out) for md in SOURCES for ipynb, left_out in built_from(md)]


def test_every_notebook_is_built_from_a_markdown_source():
    assert sorted(ipynb for _, ipynb, _ in BUILT) == NOTEBOOKS
    assert [p.name for p in SOURCES if p.parent.name == "solutions"], "no solutions source"


@pytest.mark.parametrize(
    "md,ipynb,left_out", BUILT, ids=[p.relative_to(ROOT).as_posix() for _, p, _ in BUILT]
)
def test_notebook_has_the_cells_of_its_markdown_source(md, ipynb, left_out):
    want = [c for c in read_md(md).cells if left_out not in tags(c)]
    have = nbformat.read(ipynb, as_version=4).cells
    where = f"{ipynb.relative_to(ROOT)} differs from {md.relative_to(ROOT)}"
    assert len(have) == len(want), f"{where}: {len(have)} cells, the source gives {len(want)} ({REBUILD})"
    for i, (h, w) in enumerate(zip(have, want), 1):
        assert h.cell_type == w.cell_type, (
            f"{where}: cell {i} is {h.cell_type}, not {w.cell_type} ({REBUILD})"
        )
        assert h.source == w.source, f"{where}: cell {i}'s text ({REBUILD})"
        assert h.metadata == w.metadata, f"{where}: cell {i}'s tags or metadata ({REBUILD})"


@pytest.mark.parametrize("md", [p for p in SOURCES if p.parent.name == "solutions"], ids=lambda p: p.name)
def test_each_answer_cell_is_followed_by_the_exercises_blank(md):
    cells = read_md(md).cells
    answers = [i for i, c in enumerate(cells) if "answer" in tags(c)]
    assert answers, f"{md.name}: no cell tagged answer"
    for i in answers:
        after = cells[i + 1] if i + 1 < len(cells) else None
        assert after is not None and "blank" in tags(after), (
            f"{md.name}: answer cell {i + 1} has no blank after it"
        )
        assert after.cell_type == cells[i].cell_type and after.source != cells[i].source, md.name


def package_source(name: str, where: str) -> str:
    module, _, qualname = name.partition(":")
    try:
        obj = importlib.import_module(module)
        for attr in qualname.split("."):
            obj = getattr(obj, attr)
        return inspect.getsource(obj).rstrip()
    except (ImportError, AttributeError, TypeError, OSError) as err:
        pytest.fail(f"{where}: the block cell shows {name!r}, not found in the package ({err})")


BLOCK_CELLS = [
    (path, i, cell)
    for path in [*SOURCES, *NOTEBOOKS]
    for i, cell in enumerate(read_md(path).cells if path.suffix == ".md" else nbformat.read(path, 4).cells, 1)
    if "block" in tags(cell)
]


@pytest.mark.parametrize(
    "path,i,cell", BLOCK_CELLS, ids=[f"{p.relative_to(ROOT).as_posix()}-cell{i}" for p, i, _ in BLOCK_CELLS]
)
def test_block_cell_is_the_package_source_of_the_functions_it_names(path, i, cell):
    where = f"{path.relative_to(ROOT)} cell {i}"
    names = cell.metadata.get("block")
    assert names, f"{where}: tagged block, but no block metadata names its functions"
    assert cell.source == "\n\n\n".join(package_source(n, where) for n in names), (
        f"{where} is not the package's source of {names}: python scripts/build_notebooks.py refills it"
    )


SOURCE_BLOCK_NAMES = sorted(
    {
        (path, name)
        for path, _, cell in BLOCK_CELLS
        if path.suffix == ".md"
        for name in cell.metadata.get("block", [])
    }
)


@pytest.mark.parametrize(
    "path,name", SOURCE_BLOCK_NAMES, ids=[f"{p.name}-{n}" for p, n in SOURCE_BLOCK_NAMES]
)
def test_block_metadata_names_a_function_the_package_has(path, name):
    module, _, qualname = name.partition(":")
    obj = importlib.import_module(module)
    for attr in qualname.split("."):
        assert hasattr(obj, attr), f"{path.name}: {name} does not exist in the package"
        obj = getattr(obj, attr)
    assert inspect.isfunction(obj) or inspect.isclass(obj), f"{path.name}: {name} is not a function"


def test_block_cells_cover_the_lesson_notebooks():
    assert {p.name for p, _, _ in BLOCK_CELLS if p.suffix == ".md"} >= {
        "02_checkpoint.md",
        "03_points_a_and_b.md",
        "04_ledger.md",
        "05_reconcile.md",
    }


def load_build():
    spec = importlib.util.spec_from_file_location("build_notebooks", ROOT / "scripts" / "build_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cell_keys(path: Path) -> list[tuple]:
    return [(c.id, c.cell_type, c.source, c.metadata) for c in nbformat.read(path, as_version=4).cells]


def test_the_build_is_idempotent_and_matches_the_committed_notebooks(tmp_path):
    """Build from the sources alone, twice (no execution): same bytes, and the committed notebooks' cells."""
    build = load_build().build
    trees = []
    for name in ("a", "b"):
        root = tmp_path / name
        for md in SOURCES:
            (root / md.relative_to(ROOT).parent).mkdir(parents=True, exist_ok=True)
            shutil.copy(md, root / md.relative_to(ROOT))
        assert len(build(root)) == len(NOTEBOOKS)
        trees.append({p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()})
    assert trees[0] == trees[1], "two builds of the same sources differ"
    for rel, data in trees[0].items():
        if rel.suffix == ".md":
            assert data == (ROOT / rel).read_bytes(), f"{rel}: the build changes it (block cells not filled?)"
        else:
            assert cell_keys(tmp_path / "a" / rel) == cell_keys(ROOT / rel), (
                f"{rel}: not what the build writes"
            )
    assert build(tmp_path / "a") == [], "a rebuild of unchanged sources rewrote notebooks"


def test_a_rebuild_of_the_committed_tree_changes_no_byte(tmp_path):
    for folder in ("src", "notebooks", "exercises", "solutions"):
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("_work", ".ipynb_checkpoints")
        )
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert load_build().build(tmp_path) == []
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_the_build_names_notebook_and_function_when_a_block_function_is_gone(tmp_path):
    build = load_build()
    (tmp_path / "src" / "notebooks").mkdir(parents=True)
    text = (ROOT / "src" / "notebooks" / "03_points_a_and_b.md").read_text(encoding="utf-8")
    assert "harness.loop:run_agent" in text
    (tmp_path / "src" / "notebooks" / "03_points_a_and_b.md").write_text(
        text.replace("harness.loop:run_agent", "harness.loop:no_such_function"), encoding="utf-8"
    )
    with pytest.raises(build.BuildError, match=r"03_points_a_and_b\.md .*'harness\.loop:no_such_function'"):
        build.build(tmp_path)
