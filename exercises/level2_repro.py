"""レベル2の再現スクリプト（未完成）: 台帳を逆順に書くと、台帳の書き込みとツール実行のあいだのクラッシュで何が起きるか。

使い方:  REPRO_CRASH=3 python level2_repro.py wrong|fixed 作業フォルダ
         （REPRO_CRASH=N なら N 回目のツール呼び出しの直前で疑似キル。REPRO_CRASH がなければ最後まで走る）
そのあと: python -m harness --workdir 作業フォルダ --resume

3つの TODO を埋めてください。チェックは notebook の check_level2_repro("level2_repro.py") です。
"""

import os
import sys

from harness import TOOL_SCHEMAS, Run, ScriptedModel, SimulatedCrash, execute_tool, run_agent  # noqa: F401
from harness.ledger import save_effect  # noqa: F401


class Crash:
    """環境変数で制御する疑似クラッシュ地点: REPRO_CRASH=N なら N 回目に通ったところで落ちる。"""

    def __init__(self):
        self.target = int(os.environ.get("REPRO_CRASH", "0"))
        self.passes = 0

    def point(self):
        # TODO 1: 通った回数を数え、REPRO_CRASH 回目なら raise SimulatedCrash(f"REPRO_CRASH={self.target}")
        raise NotImplementedError("TODO 1: Crash.point")


def make_wrong(crash):
    def run_tool_uses_wrong(run, content):
        """本番の順序: 記録（プレースホルダ）→ クラッシュ地点 → 実行。"""
        # TODO 2: run_tool_uses_prod と同じ順序にし、save_effect と execute_tool のあいだで crash.point() を呼ぶ
        raise NotImplementedError("TODO 2: run_tool_uses_wrong")

    return run_tool_uses_wrong


def make_fixed(crash):
    def run_tool_uses_fixed(run, content):
        """レッスンの順序: 同じクラッシュ地点 → 実行 → 本物の結果を記録。"""
        # TODO 3: レッスンの順序にし、crash.point() は同じ場所（ツールが走る前）に置く
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
        print(f"[kill] {err}")  # レッスンの main と同じく、疑似キルは 137 で終わる
        sys.exit(137)
    print("[done] 最後まで走りました")


if __name__ == "__main__":
    main()
