"""The package's house, measured: its modules' imports (every `import` and `from ... import`, also those inside a
function), the import cycles among them, and any import from the lesson's part to what is built on it.

Usage: python bench/import_graph.py   (prints the figures; exit 1 if there is a cycle or an import upward)

The lesson's part is every module of harness/ outside beyond/, lab/ and exercises/; __main__ (the command line, the
top of the house) is the one module of it that may call into beyond/ (its modes) and lab/ (the Crash Lab's hooks).
Also prints the lesson part's line count.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILT_ON_THE_LESSON = ("harness.beyond", "harness.lab", "harness.exercises")


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "harness").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                child = f"{target}.{alias.name}"
                found.add(child if child in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


def import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of the package's modules; a package's __init__ importing its own submodules is how a
    package re-exports, not a climb back up, so those are left out."""
    graph = {name: imports(name, path, known) for name, path in known.items()}
    return {n: {m for m in deps if not m.startswith(n + ".")} for n, deps in graph.items()}


def lesson_part(known: dict[str, Path]) -> set[str]:
    return {n for n in known if not n.startswith(BUILT_ON_THE_LESSON)}


def lesson_lines(known: dict[str, Path]) -> int:
    """The lesson part's lines of Python (issue #22's budget: 2,300)."""
    return sum(len(known[n].read_text(encoding="utf-8").splitlines()) for n in lesson_part(known))


def upward(known: dict[str, Path], graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Imports from the lesson's part (but the command line) of what is built on it."""
    front = lesson_part(known) - {"harness.__main__"}
    return sorted((n, m) for n in front for m in graph[n] if m.startswith(BUILT_ON_THE_LESSON))


def main() -> int:
    known = modules()
    graph = import_graph(known)
    found, climbs, front = cycles(graph), upward(known, graph), lesson_part(known)
    lines = lesson_lines(known)
    print(f"modules: {len(known)}, imports: {sum(len(d) for d in graph.values())}")
    print(f"import cycles: {len(found)}" + "".join(f"\n  {' -> '.join(c)}" for c in found))
    print(
        f"imports from the lesson's part upward: {len(climbs)}"
        + "".join(f"\n  {a} -> {b}" for a, b in climbs)
    )
    print(f"the lesson's part: {len(front)} modules, {lines} lines of Python", end="")
    catalogue = ROOT / "harness" / "texts.ja.toml"
    print(
        f" (+ the message catalogue {catalogue.name}, {len(catalogue.read_text(encoding='utf-8').splitlines())} lines of data)"
    )
    return 1 if found or climbs else 0


if __name__ == "__main__":
    sys.exit(main())
