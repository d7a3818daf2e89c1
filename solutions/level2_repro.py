"""レベル2の再現スクリプト: 台帳を逆順に書くと、台帳の書き込みとツール実行のあいだのクラッシュで何が起きるか。

使い方:  REPRO_CRASH=3 python level2_repro.py wrong|fixed 作業フォルダ
         （REPRO_CRASH=N なら N 回目のツール呼び出しの直前で疑似キル。REPRO_CRASH がなければ最後まで走る）
そのあと: python -m harness --workdir 作業フォルダ --resume
"""

import os
import sys

from harness import TOOL_SCHEMAS, Run, ScriptedModel, SimulatedCrash, execute_tool, run_agent
from harness.ledger import save_effect


class Crash:
    """環境変数で制御する疑似クラッシュ地点: REPRO_CRASH=N なら N 回目に通ったところで落ちる。"""

    def __init__(self):
        self.target = int(os.environ.get("REPRO_CRASH", "0"))
        self.passes = 0

    def point(self):
        self.passes += 1
        if self.passes == self.target:
            raise SimulatedCrash(f"REPRO_CRASH={self.target}")


def make_wrong(crash):
    def run_tool_uses_wrong(run, content):
        """本番の順序: 記録（プレースホルダ）→ クラッシュ地点 → 実行。"""
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
        """レッスンの順序: 同じクラッシュ地点 → 実行 → 本物の結果を記録。"""
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
        print(f"[kill] {err}")  # レッスンの main と同じく、疑似キルは 137 で終わる
        sys.exit(137)
    print("[done] 最後まで走りました")


if __name__ == "__main__":
    main()
