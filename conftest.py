"""Repository-wide pytest setup.

The tests never call the real Anthropic API, whatever the environment holds: the notebook kernels nbval starts inherit
this process's environment, so removing the key here keeps them key-free.

Run in parallel (`pytest -n N`, as scripts/test.sh does), what must share one process stays in one: every cell of a
notebook (nbval runs them in order in one kernel), and the tests that share one of this project's module-wide
fixtures (the crash sweep test_dbos.py computes once, the PostgreSQL cluster, the browser), unless marked
`any_worker` (the browser edition's tests: each worker its own server and browser on the one site); every other test
is sent to whichever worker is free. pytest-xdist's own `--dist loadgroup` cannot do this under pytest 9 (it renames test ids
in a way pytest 9 ignores), so the workers write the groups to a file the scheduler reads.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

# Ctrl-C as a terminal sends it, to every process the tests start: a suite started in the background of a shell
# without job control inherits SIGINT ignored, and so would every child, which then never sees the tests' Ctrl-C.
signal.signal(signal.SIGINT, signal.default_int_handler)

os.environ.pop("ANTHROPIC_API_KEY", None)

ROOT = Path(__file__).resolve().parent
GROUPS = pytest.StashKey[Path]()


def shared_setup(item: pytest.Item) -> list[str]:
    """The module- or session-wide fixtures of this project (not pytest's own or a plugin's) the item uses."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    return sorted(
        name
        for name, chain in defs.items()
        if chain and chain[-1].scope != "function" and chain[-1].baseid  # baseid "": a plugin's fixture
    )


def group_of(item: pytest.Item) -> str | None:
    if item.get_closest_marker(
        "any_worker"
    ):  # its module-wide fixtures are made in every worker that needs them
        return None
    marked = item.get_closest_marker("xdist_group")
    if marked:
        return str(marked.args[0] if marked.args else marked.kwargs.get("name", "default"))
    where = item.path.relative_to(ROOT) if item.path.is_relative_to(ROOT) else item.path
    if item.path.suffix == ".ipynb":
        return str(where)
    shared = shared_setup(item)
    return f"{where}::{'+'.join(shared)}" if shared else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or "groups_file" not in workerinput:
        return
    groups = {item.nodeid: group for item in items if (group := group_of(item))}
    done = Path(workerinput["groups_file"])
    part = done.with_name(f"{done.name}.{workerinput['workerid']}")
    part.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(part, done)  # every worker collects the same tests, so every worker writes the same groups


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """Controller side: tell each worker where to write the groups."""
    config = node.config
    if config.getvalue("dist") != "loadgroup":
        return
    if GROUPS not in config.stash:
        folder = Path(tempfile.mkdtemp(prefix="pytest-groups-"))
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        config.stash[GROUPS] = folder / "groups.json"
    node.workerinput["groups_file"] = str(config.stash[GROUPS])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """`--dist loadgroup`: each group one unit of work, every other test a unit of its own; the largest units are
    handed out first (xdist's --loadscope-reorder, on by default)."""
    if config.getvalue("dist") != "loadgroup":
        return None  # any other --dist: xdist's own scheduler
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once, after every worker has collected (scheduling starts then)
                path = config.stash.get(GROUPS, None)
                self.groups = json.loads(path.read_text(encoding="utf-8")) if path and path.exists() else {}
            return self.groups.get(nodeid, nodeid)

    return Grouped(config, log)
