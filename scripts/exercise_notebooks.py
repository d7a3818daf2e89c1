"""The exercise notebooks (exercises/: blank answers) and their solutions (solutions/: the same cells, answered).

Used by build_notebooks.py; the checks themselves live in harness.exercises.
"""

from __future__ import annotations

import inspect

from nbformat.v4 import new_code_cell, new_markdown_cell


def md(text: str):
    return new_markdown_cell(inspect.cleandoc(text))


def code(text: str):
    return new_code_cell(inspect.cleandoc(text))


def raw(text: str):
    """A code cell written flush left already (cleandoc would strip a function body's indentation)."""
    return new_code_cell(text.strip("\n"))


LEVEL1_SOLVED = """
answers = {
    "①": {
        "read_notes":   {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": RERUN},
        "write_report": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": IS_ERROR},
    },
    "②": {
        "read_notes":   {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": RERUN},
        "write_report": {"pendingToolUse": PENDING_CALL, "ledger_entry": False, "reconcile": IS_ERROR},
    },
    "③": {
        "read_notes":   {"pendingToolUse": NULL, "ledger_entry": True, "reconcile": NO_RECONCILE},
        "write_report": {"pendingToolUse": NULL, "ledger_entry": True, "reconcile": NO_RECONCILE},
    },
    "same_disk_1_2": True,       # write_report で ① と ② の checkpoint.json と effects.json は同じか
    "same_recovery_1_2": True,   # write_report で ① と ② の再開の振る舞い（reconcile の分岐）は同じか
}
"""

LEVEL1_BLANK = """
answers = {
    "①": {
        "read_notes":   {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
        "write_report": {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
    },
    "②": {
        "read_notes":   {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
        "write_report": {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
    },
    "③": {
        "read_notes":   {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
        "write_report": {"pendingToolUse": ..., "ledger_entry": ..., "reconcile": ...},
    },
    "same_disk_1_2": ...,       # write_report で ① と ② の checkpoint.json と effects.json は同じか（True/False）
    "same_recovery_1_2": ...,   # write_report で ① と ② の再開の振る舞い（reconcile の分岐）は同じか（True/False）
}
"""

MEANING_SOLVED = '''
meaning = """
② では write_report は実際に終わっていて report.txt も書かれているのに、ハーネスが見る2つのファイル
（checkpoint.json と effects.json）は ① とまったく同じです。コードにはこの2つを区別する材料がありません。
だから再開は ② を「走ったかどうか分からない」として扱い、副作用のあるツールは再利用ではなく is_error になります。
この不確かさの窓は、ツールが返ってから台帳に書くまでのあいだにしか開きません。台帳をツール成功の直後に書くのは、
この窓をできるだけ狭くするためです。窓を完全には閉じられないので、残った分は推測せず正直にモデルへ返します。
"""
'''

MEANING_BLANK = '''
meaning = """
（ここに書く）
"""
'''


def level1(solved: bool) -> list:
    return [
        md("""
            # レベル1: クラッシュ瞬間の訓練マニュアル

            **復習**: 1ターンには、このレッスンのチェックポイントが捕まえうるクラッシュの瞬間が3つあります。
            ① 地点Aを保存した直後（ツールはまだ始まっていない）、② ツールの実装は終わったが台帳はまだ、
            ③ 地点Bを保存した直後。

            **目標**: それぞれの瞬間について、`checkpoint.json` と `effects.json` がどうなっているか、`--resume` で
            `reconcile` がどの分岐に入るかを、読み取り専用の `read_notes`（1ターン目）と副作用のある `write_report`
            （3ターン目）の両方で答える。チェックは本物のハーネスをその瞬間で落とし、あなたの答えと1項目ずつ比べます。
        """),
        code("""
            from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, NULL, PENDING_CALL, RERUN
            from harness.exercises.level1 import check_level1, look
        """),
        md("""
            ## 答えに使う言葉

            - `pendingToolUse`: `PENDING_CALL`（このターンの呼び出しが残っている）か `NULL`
            - `ledger_entry`: `effects.json` にこの呼び出しの `tool_use_id` のレコードがあるか（`True` / `False`）
            - `reconcile`: `HIT`（台帳ヒット、再利用）、`RERUN`（台帳ミス、再実行）、`IS_ERROR`（台帳ミス、is_error）、
              `NO_RECONCILE`（reconcile の出番なし）

            ## 見てみる

            `look(瞬間, ツール)` は、本物のハーネスをその瞬間で落とした直後のディスクを表示します（再開はしません）。
            好きな組み合わせで試してから答えてください。
        """),
        code("""
            look("②", "write_report")
        """),
        md("""
            ## 答える

            `...` をあなたの答えに置き換えてください。
        """),
        raw(LEVEL1_SOLVED if solved else LEVEL1_BLANK),
        md("""
            ## 自由記述（採点しません）

            `write_report` で ① と ② が同じに見えるとしたら、それは何を意味するでしょうか。
        """),
        raw(MEANING_SOLVED if solved else MEANING_BLANK),
        md("## チェック"),
        code("""
            print(check_level1(answers, meaning).report())
        """),
    ]


DIAGNOSIS_SOLVED = '''
diagnosis = {
    "first_call": "save_effect",   # run_tool_uses_prod で先に呼ばれるのは "save_effect" か "execute_tool" か
    "recorded_result": None,       # そのとき台帳に書かれる result（Python の値）
    "branch_after_crash": HIT,     # 台帳の書き込み後・ツール実行前に落ちて --resume したときの reconcile
    "report_exists": False,        # 再開が終わったとき report.txt はあるか
    "tool_ran": False,             # write_report は一度でも実際に実行されたか
}
explanation = """
save_effect がツールの実行より前にあるので、その時点では本物の結果がまだ存在せず、result=None のプレースホルダしか
書けません。台帳の書き込みとツールの実行のあいだで落ちると、再開した reconcile はそのレコードに台帳ヒットし、
「実行済み、再利用、再実行しない」と判定します。一度も走っていない write_report が完了扱いになり、None の結果で
tool_result の対がそろってしまうので、モデルは成功を報告し、report.txt は存在しないままです。
"""
'''

DIAGNOSIS_BLANK = '''
diagnosis = {
    "first_call": ...,          # run_tool_uses_prod で先に呼ばれるのは "save_effect" か "execute_tool" か
    "recorded_result": ...,     # そのとき台帳に書かれる result（Python の値）
    "branch_after_crash": ...,  # 台帳の書き込み後・ツール実行前に落ちて --resume したときの reconcile
    "report_exists": ...,       # 再開が終わったとき report.txt はあるか（True/False）
    "tool_ran": ...,            # write_report は一度でも実際に実行されたか（True/False）
}
explanation = """
（なぜ「一度も走っていないツールが完了扱い」になるのかを、ここに書く）
"""
'''

FIX_SOLVED = """
def run_tool_uses_fixed(run, content, turn=0):
    results = []
    for block in (b for b in content if b["type"] == "tool_use"):
        output = execute_tool(run.workdir, block["name"], block["id"], block["input"])  # 実行が先
        entry = {"name": block["name"], "result": output, "at": run.clock()}
        save_effect(run.effects_path, block["id"], entry)  # 記録が後、本物の結果で
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results
"""

FIX_BLANK = """
def run_tool_uses_fixed(run, content, turn=0):
    # run_tool_uses_prod を写して、順序を直す
    raise NotImplementedError("ここに書く")
"""


def level2(solved: bool) -> list:
    return [
        md("""
            # レベル2: 台帳を逆順に書いてしまった順序の誤り

            **復習**: 台帳は「実行が先、記録が後」。レコードは「本当に起きた、結果はこれ」という約束です。

            **目標**: インシデント報告（「`--resume` の後、ツールが1つ飛ばされた。ログには完了済みと出たのに、
            書き出されるはずのファイルが存在しない」）の原因を、本番で動いていた `run_tool_uses_prod` から見つけ、
            直し、本物のプロセスで再現して証明する。
        """),
        code("""
            import inspect
            from harness import execute_tool
            from harness.ledger import save_effect
            from harness.exercises import HIT, IS_ERROR, NO_RECONCILE, RERUN
            from harness.exercises.level2 import (check_level2_diagnosis, check_level2_fix, check_level2_repro,
                                                  run_tool_uses_prod, show_repro)

            print(inspect.getsource(run_tool_uses_prod))
        """),
        md("""
            ## (a)(b) 診断

            順序の誤りを指摘し、それがなぜ「一度も走っていないツールが完了扱い」を引き起こすのかを答えてください。
            構造化した答えはチェックが本物の実行と照合します。説明文は採点しません。
        """),
        raw(DIAGNOSIS_SOLVED if solved else DIAGNOSIS_BLANK),
        code("""
            print(check_level2_diagnosis(diagnosis).report())
        """),
        md("""
            ## (c) 修正

            `run_tool_uses_fixed(run, content, turn=0)` を書いてください。チェックはそれを本物のループに差し込み、
            通常の実行と、`write_report` が始まった瞬間に落ちる実行の両方を走らせます。
        """),
        raw(FIX_SOLVED if solved else FIX_BLANK),
        code("""
            print(check_level2_fix(run_tool_uses_fixed).report())
        """),
        md("""
            ## (d) 再現スクリプト

            この notebook と同じフォルダの `level2_repro.py` を開き、TODO を埋めてください。環境変数 `REPRO_CRASH=N` で
            N 回目のツール呼び出しの直前（誤った順序では、台帳の書き込みとツール実行のあいだ）に疑似クラッシュを起こし、
            `wrong` と `fixed` の両方の順序を本物の `python` プロセスとして走らせます。そのあと誤った順序のフォルダで
            `python -m harness --resume` すると、インシデントが再現するはずです。
        """),
        code("""
            show_repro("level2_repro.py")
        """),
        code("""
            print(check_level2_repro("level2_repro.py").report())
        """),
    ]
