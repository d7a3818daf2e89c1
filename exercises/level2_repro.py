"""Level 2 reproduction (to complete): the reversed ledger, crashed between the ledger write and the tool call.

Usage:  REPRO_CRASH=3 python level2_repro.py wrong|fixed WORKDIR
        (REPRO_CRASH=N dies just before the N-th tool call; without it the run goes to the end.)
Then:   python -m harness --workdir WORKDIR --resume

Fill in the three TODOs. The check is harness.exercises.level2.check_level2_repro("level2_repro.py").
"""

import os
import sys

from harness import TOOL_SCHEMAS, Run, ScriptedModel, SimulatedCrash, execute_tool, run_agent  # noqa: F401
from harness.ledger import save_effect  # noqa: F401


class Crash:
    """The crash point, controlled by the environment: dies on the N-th pass when REPRO_CRASH=N."""

    def __init__(self):
        self.target = int(os.environ.get("REPRO_CRASH", "0"))
        self.passes = 0

    def point(self):
        # TODO 1: count this pass; on the REPRO_CRASH-th pass, raise SimulatedCrash(f"REPRO_CRASH={self.target}")
        raise NotImplementedError("TODO 1: Crash.point")


def make_wrong(crash):
    def run_tool_uses_wrong(run, content):
        # TODO 2: the production order (run_tool_uses_prod), with crash.point() between save_effect and execute_tool
        raise NotImplementedError("TODO 2: run_tool_uses_wrong")

    return run_tool_uses_wrong


def make_fixed(crash):
    def run_tool_uses_fixed(run, content):
        # TODO 3: the lesson's order, with crash.point() at the same place: before the tool runs
        raise NotImplementedError("TODO 3: run_tool_uses_fixed")

    return run_tool_uses_fixed


def main():
    order, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    crash = Crash()
    run_tool_uses = make_wrong(crash) if order == "wrong" else make_fixed(crash)
    try:
        run_agent(Run(workdir), ScriptedModel(), tools=TOOL_SCHEMAS, run_tool_uses=run_tool_uses)
    except SimulatedCrash as err:
        print(f"[kill] {err}")
        sys.exit(137)
    print("[done] 最後まで走りました")


if __name__ == "__main__":
    main()
