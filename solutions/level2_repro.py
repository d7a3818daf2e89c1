"""Level 2 reproduction: the reversed ledger, crashed between the ledger write and the tool call.

Usage:  REPRO_CRASH=3 python level2_repro.py wrong|fixed WORKDIR
        (REPRO_CRASH=N dies just before the N-th tool call; without it the run goes to the end.)
Then:   python -m harness --workdir WORKDIR --resume
"""

import os
import sys

from harness import TOOL_SCHEMAS, Run, ScriptedModel, SimulatedCrash, execute_tool, run_agent
from harness.ledger import save_effect


class Crash:
    """The crash point, controlled by the environment: dies on the N-th pass when REPRO_CRASH=N."""

    def __init__(self):
        self.target = int(os.environ.get("REPRO_CRASH", "0"))
        self.passes = 0

    def point(self):
        self.passes += 1
        if self.passes == self.target:
            raise SimulatedCrash(f"REPRO_CRASH={self.target}")


def make_wrong(crash):
    def run_tool_uses_wrong(run, content):
        """The production order: record (a placeholder), crash point, then execute."""
        results = []
        for block in (b for b in content if b["type"] == "tool_use"):
            save_effect(
                run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()}
            )
            crash.point()
            output = execute_tool(run, block)
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
        return results

    return run_tool_uses_wrong


def make_fixed(crash):
    def run_tool_uses_fixed(run, content):
        """The lesson's order: the same crash point, then execute, then record the real result."""
        results = []
        for block in (b for b in content if b["type"] == "tool_use"):
            crash.point()
            output = execute_tool(run, block)
            save_effect(
                run.effects_path, block["id"], {"name": block["name"], "result": output, "at": run.clock()}
            )
            results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
        return results

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
