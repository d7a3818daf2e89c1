"""Write the lesson notebooks (unexecuted) into notebooks/. Block cells are the package's own source, verbatim.

Usage: python scripts/build_notebooks.py && python scripts/run_notebooks.py
tests/test_notebooks.py proves the committed notebooks still show the package's code.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from exercise_notebooks import level1, level2

import harness  # noqa: F401

checkpoint, ledger, loop, reconcile = (
    sys.modules[f"harness.{m}"] for m in ("checkpoint", "ledger", "loop", "reconcile")
)

KERNEL = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def src(*fns) -> str:
    """The package's source of each function, verbatim, as one cell."""
    return "\n\n\n".join(inspect.getsource(f).rstrip() for f in fns)


def md(text: str):
    return new_markdown_cell(inspect.cleandoc(text))


def code(text: str):
    return new_code_cell(inspect.cleandoc(text))


def setup(name: str, extra: str = "") -> object:
    return code(f"""
        from harness.lab import FileWatch, cli, fixed_clock, print_transcript, scratch, summary

        WORK = scratch("{name}")  # この notebook 専用の作業フォルダ
        {extra}
        print(WORK)
    """)


NOTEBOOKS: dict[str, list] = {}

NOTEBOOKS["01_run_first.ipynb"] = [
    md("""
        # 01 まず動かして見る

        **復習**: 第7コースのループは「モデルを呼ぶ → `stop_reason` が `tool_use` ならツールを実行して結果を返す →
        もう一度呼ぶ」の繰り返しでした。

        **目標**: このレッスンのハーネスを本物のプロセスとして走らせ、3ターン目の一番いやな瞬間で落とし、
        `--resume` で拾い直したときにレポートが二重に書かれないことを、ディスク上のファイルで確かめる。

        タスクは「営業メモをレポートにする」。モデル（ここでは決まった応答を返すスクリプト化されたモデル）は
        `read_notes` → `count_words` → `write_report` を1ターンに1つずつ呼びます。
    """),
    setup("01"),
    md("""
        ## 落とす

        `CRASH_AFTER=after-effect-write:3` は「台帳への3回目の書き込みが終わった直後に落ちる」という指定です。
        3ターン目の `write_report` は実行を終え、その結果も台帳に書かれた。けれども地点Bはまだ保存されていない。
        その瞬間にプロセスが死にます。終了コード 137 は SIGKILL で殺されたときの慣例の値です。
    """),
    code("""
        cli(WORK, env={"CRASH_AFTER": "after-effect-write:3"})
    """),
    md("""
        ## ディスクに何が残ったか

        `checkpoint.json` の `pendingToolUse` にはまだ `write_report` が残っています（地点Aで書かれ、地点Bで消されるはずだった）。
        一方 `effects.json` には、同じ `tool_use_id` のレコードがすでにあります。
    """),
    code("""
        import json

        print(summary(WORK))
        cp = json.loads((WORK / "checkpoint.json").read_text(encoding="utf-8"))
        effects = json.loads((WORK / "effects.json").read_text(encoding="utf-8"))
        print("pendingToolUse:", cp["pendingToolUse"]["id"], cp["pendingToolUse"]["name"])
        print("effects.json の toolu_03:", json.dumps(effects["toolu_03"], ensure_ascii=False))
    """),
    md("""
        ## 拾い直す

        同じフォルダで `--resume` を付けて起動します。`reconcile` が台帳を引き、`write_report` は実行済みだと分かるので
        結果を再利用し、欠けていた地点Bを補ってから、モデルの締めくくりへ進みます。
    """),
    code("""
        cli(WORK, "--resume")
    """),
    md("""
        ## 本当に1回だけ書かれたか

        `tool-runs.log` は台帳とは別に、ツールの実装が実際に動くたびに1行ずつ追記される「外の世界から見た記録」です。
    """),
    code("""
        log = (WORK / "tool-runs.log").read_text(encoding="utf-8")
        print(log, end="")
        print("write_report が実際に走った回数:", log.splitlines().count("write_report toolu_03"))
        print(summary(WORK))
    """),
    md("""
        ## まとめ

        - 落ちたのは「ツールは終わった、台帳も書いた、でも地点Bはまだ」という窓の中でした。
        - 再開は最初からやり直さず、台帳のレコードを使って3ターン目だけを締めくくりました。`write_report` は1回だけです。
        - 次の notebook から、この動きを作っているブロックを1つずつ組み立てます。
    """),
]

NOTEBOOKS["02_checkpoint.ipynb"] = [
    md("""
        # 02 チェックポイントの読み書き: `save_checkpoint` / `load_checkpoint`

        **復習**: チェックポイントは、ループの場面 `{version, task, turns, tokensUsed, messages, pendingToolUse}` を
        JSON にしてディスクへ置いたものです。

        **目標**: ファイルを決して「半分だけ」にしない書き方（一時ファイル＋rename）と、怪しいファイルを推測で
        読まない読み方を、自分の手で試す。
    """),
    setup(
        "02",
        "import json, os\n        from pathlib import Path\n        from harness import HarnessError, texts\n"
        "        from harness.checkpoint import VERSION, checkpoint_shape_problem, read_json",
    ),
    md("""
        ## 書く側

        まず `.tmp` に全部書き、`flush` と `fsync` でディスクに届けてから `os.replace` で本物の名前に付け替えます。
        同じファイルシステムの中での rename は不可分なので、読む側には「古い版」か「新しい版」しか見えません。
        最後にフォルダも `fsync` して、rename そのものが停電を越えて残るようにします。
    """),
    new_code_cell(src(checkpoint.write_json_atomic, checkpoint._fsync_folder, checkpoint.save_checkpoint)),
    md("### 実験: 1つ書いてみる（`.tmp` は残らない）"),
    code("""
        scene = {"version": 1, "task": "テスト", "turns": 0, "tokensUsed": 0,
                 "messages": [{"role": "user", "content": "テスト"}], "pendingToolUse": None}
        save_checkpoint(WORK / "checkpoint.json", scene)
        print(sorted(p.name for p in WORK.iterdir()))
        print((WORK / "checkpoint.json").read_text(encoding="utf-8"))
    """),
    md("""
        ### 実験: rename の直前で落ちたら

        `os.replace` を一時的に「落ちる」関数に差し替えて、書き込みの途中で死んだ場面を作ります。
        新しい場面は `.tmp` にだけあり、`checkpoint.json` は古いまま無傷です。
    """),
    code("""
        real_replace = os.replace

        def crash_before_rename(src, dst):
            raise KeyboardInterrupt("rename の直前で落ちた")

        os.replace = crash_before_rename
        try:
            save_checkpoint(WORK / "checkpoint.json", {**scene, "turns": 1})
        except KeyboardInterrupt as err:
            print("落ちた:", err)
        finally:
            os.replace = real_replace

        print(sorted(p.name for p in WORK.iterdir()))
        print("checkpoint.json の turns     =", json.loads((WORK / "checkpoint.json").read_text())["turns"])
        print("checkpoint.json.tmp の turns =", json.loads((WORK / "checkpoint.json.tmp").read_text())["turns"])
    """),
    md("""
        ## 読む側

        読み込みが拒否すべきものは4つ。ファイルがない、JSON として壊れている、`version` が違う、形が違う。
        どの場合も、もっともらしい既定値を返すことはせず、ファイル名と「削除して `--resume` なしでやり直す」という
        助言を添えたエラーにします。ファイルには一切触れません。
    """),
    new_code_cell(src(checkpoint.read_json, checkpoint.load_checkpoint)),
    md("### 実験: 怪しいファイルを食わせる"),
    code("""
        def try_load(content):
            path = WORK / "checkpoint.json"
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_text(content, encoding="utf-8")
            try:
                print("読み込めた:", load_checkpoint(path))
            except HarnessError as err:
                print("拒否:", err)
            print()

        try_load('{"version":1,"turns":3,"pendingT')     # 書き込み途中で切れた
        try_load(json.dumps({**scene, "version": 2}))     # 別の version
        try_load(json.dumps({**scene, "turns": "3"}))     # 形が違う
        try_load(None)                                    # ファイルがない
    """),
    md("""
        ## ループの中で

        本物のループを `after-save-a:3`（3ターン目の地点A直後）で落とし、残ったファイルを同じ `load_checkpoint` で読みます。
    """),
    code("""
        from harness import TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, run_agent

        run = Run(WORK, clock=fixed_clock, crash=CrashPlan("after-save-a", 3), listeners=[print_transcript])
        try:
            run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS, save_checkpoint=save_checkpoint)
        except SimulatedCrash:
            pass
        cp = load_checkpoint(WORK / "checkpoint.json")
        print("turns =", cp["turns"], "/ pendingToolUse =", cp["pendingToolUse"]["name"],
              "/ messages =", len(cp["messages"]), "件")
    """),
    md("""
        ## まとめ

        - 書くときは `.tmp` → `fsync` → `os.replace` → フォルダの `fsync`。途中で落ちても古い版が残る。
        - 読むときは、壊れた・違う版・違う形をすべて拒否する。推測で埋めた場面から再開すると、タスクを静かに失う。
    """),
]

NOTEBOOKS["03_points_a_and_b.ipynb"] = [
    md("""
        # 03 地点Aと地点B: `run_agent` への配線

        **復習**: 02 で、場面を壊さずに保存する `save_checkpoint` を作りました。

        **目標**: ループのどこで2回保存するかを決め、1ターンを1歩ずつ進めながら、地点Aの後と地点Bの後で
        `checkpoint.json` がどう違うかを見る。
    """),
    setup(
        "03",
        "from harness import TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, texts\n"
        "        from harness.checkpoint import VERSION, load_checkpoint, save_checkpoint\n"
        "        from harness.crash import crash_point, writer_hooks\n"
        "        from harness.lock import holds_workdir\n"
        "        from harness.errors import HarnessError\n"
        "        from harness.loop import MAX_TURNS, _done, _scene, run_tool_uses\n"
        "        from harness.reconcile import reconcile\n"
        "        from harness.run import OUTPUT_FILES\n"
        "        from harness.tools import ensure_notes",
    ),
    md("""
        ## ブロック

        地点Aはモデルの応答を受け取った直後、assistant メッセージを `messages` に足す前。ここで「名指しされたが、
        まだ実行していない」呼び出しを `pendingToolUse` に書きます。地点Bはツールの結果（`tool_result`）が `messages` に
        入った後で、`pendingToolUse` を `null` に戻します。2つの保存に挟まれているのが、ツールが実際に動く区間です。
    """),
    new_code_cell(src(loop.run_agent)),
    md("""
        ### 実験: 1ターンだけ、1歩ずつ

        `FileWatch` は保存のたびにディスク上の `checkpoint.json` を読み直し、前回から増えた行に `+`、消えた行に `-` を付けます。
        1ターン目の地点Bの直後（`after-save-b:1`）で止めます。
    """),
    code("""
        watch = FileWatch(WORK)
        run = Run(WORK, clock=fixed_clock, crash=CrashPlan("after-save-b", 1),
                  listeners=[watch.listener(("save_a", "save_b"))])
        try:
            run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS)
        except SimulatedCrash:
            pass
    """),
    md("""
        地点Aの直後、`pendingToolUse` には `read_notes` の呼び出しがあり、`messages` はまだタスクの1件だけです。
        地点Bで、assistant の `tool_use` と user の `tool_result` が足され、`pendingToolUse` は `null` になりました。

        ## ループの中で: 最後まで

        同じ `run_agent` を、落とさずに最後まで走らせます。
    """),
    code("""
        WORK = scratch("03-full")
        run_agent(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), ScriptedModel(), tools=TOOL_SCHEMAS)
        print(summary(WORK))
    """),
    md("""
        ## まとめ

        - 地点A: 応答の直後、`pendingToolUse` = 名指しされた呼び出し。地点B: 結果が `messages` に入った後、`null`。
        - プロセスが2つの保存の間で死ぬと、ディスクには「A はある、B はまだ」という場面が残る。それが再開への合図になる。
    """),
]

NOTEBOOKS["04_ledger.ipynb"] = [
    md("""
        # 04 副作用台帳: `run_tool_uses` への配線

        **復習**: 03 で、地点Aと地点Bの間でツールが動くことを見ました。その間で落ちたとき、ツールが本当に
        動いたのかどうかはチェックポイントだけでは分かりません。

        **目標**: ツールが成功したその瞬間に、`tool_use_id` をキーとして結果を台帳 `effects.json` に書く。
        順序は「実行が先、記録が後」。それを自分の目で確かめる。
    """),
    setup(
        "04",
        "import json\n        from pathlib import Path\n"
        "        from harness import TOOL_SCHEMAS, Run, ScriptedModel, run_agent\n"
        "        from harness.checkpoint import read_json, write_json_atomic\n"
        "        from harness.crash import crash_point, writer_hooks\n"
        "        from harness.errors import HarnessError\n"
        "        from harness.ledger import effects_shape_problem\n"
        "        from harness.tools import ToolError, ensure_notes, execute_tool, tool_error_result\n"
        "        from harness import texts",
    ),
    md("""
        ## ブロック

        台帳の読み書きは、チェックポイントと同じアトミックな書き方を使います。壊れた台帳は空の台帳として扱いません
        （そうすると次の書き込みで、記録済みの副作用が消えてしまうからです）。
    """),
    new_code_cell(src(ledger.load_effects, ledger.save_effect, ledger.record_effect)),
    md("""
        `run_tool_uses` は、ツールの本物の結果を手にしてから `record_effect` を呼びます。台帳への書き込みが失敗しても、
        副作用はもう起きているので `is_error` にはしません（モデルが新しい id で再試行し、副作用が二重になるため）。
        代わりに人間向けの警告を出します。
    """),
    new_code_cell(src(loop.run_tool_uses)),
    md("""
        ### 実験: ブロック単体で

        `read_notes` の呼び出しを1つ手で作って渡します。ツールが走っている最中に台帳を覗く「スパイ」を仕込むと、
        実行中にはまだレコードがないこと（実行が先）が分かります。
    """),
    code("""
        from harness import tools

        ensure_notes(WORK)
        real_read_notes = tools.TOOL_IMPLS["read_notes"]

        def spy(workdir, input):
            print("ツール実行中の台帳:", load_effects(WORK / "effects.json"))
            return real_read_notes(workdir, input)

        tools.TOOL_IMPLS["read_notes"] = spy
        try:
            block = {"type": "tool_use", "id": "toolu_demo", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
            watch = FileWatch(WORK, files=("effects.json", "tool-runs.log"))
            results = run_tool_uses(Run(WORK, clock=fixed_clock), [block])
        finally:
            tools.TOOL_IMPLS["read_notes"] = real_read_notes
        print("ツール実行後:")
        watch.show()
    """),
    md("""
        ## ループの中で

        この notebook の `run_tool_uses` を本物のループに差し込み、台帳に書かれるたびに `effects.json` の変化を表示します。
    """),
    code("""
        WORK = scratch("04-loop")
        watch = FileWatch(WORK, files=("effects.json", "tool-runs.log"))
        run = Run(WORK, clock=fixed_clock, listeners=[watch.listener(("effect_written",))])
        text = run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS, run_tool_uses=run_tool_uses)
    """),
    md("""
        ## まとめ

        - 台帳のレコードは「これは本当に起きた、結果はこれ」という約束。だから本物の結果を手にしてからしか書けない。
        - 台帳が壊れていたら、空として扱わずに止まる。書き込みに失敗したら、結果は返しつつ人間に知らせる。
    """),
]

NOTEBOOKS["05_reconcile.ipynb"] = [
    md("""
        # 05 `reconcile`: 宙ぶらりんな呼び出しに対する3分岐

        **復習**: チェックポイントの `pendingToolUse` は「名指しされたが、結果が `messages` に入っていない」呼び出し。
        台帳 `effects.json` は「本当に実行を終えた」呼び出しの記録です。

        **目標**: 再開時にその1つの呼び出しをどう扱うかを決める `reconcile` を、3つの場面それぞれで単独に走らせる。
    """),
    setup(
        "05",
        "import json\n"
        "        from harness import READ_ONLY, TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, run_agent, texts\n"
        "        from harness.crash import crash_point\n"
        "        from harness.ledger import load_effects, record_effect\n"
        "        from harness.tools import ToolError, ensure_notes, execute_tool, tool_error_result",
    ),
    md("""
        ## ブロック

        1. 台帳ヒット: 実行済み。記録された結果を再利用し、再実行しない。
        2. 台帳ミス＋読み取り専用（`READ_ONLY`）: もう一度走らせても外の世界は変わらないので、再実行して記録する。
        3. 台帳ミス＋副作用あり: 走ったかどうか分からない。推測せず、`is_error` の `tool_result` で正直にモデルへ返す。
    """),
    new_code_cell(src(reconcile.reconcile)),
    md("### 実験: 手で作った場面で、3分岐を1つずつ"),
    code("""
        def scene(pending):
            return {"version": 1, "task": "t", "turns": 3, "tokensUsed": 0,
                    "messages": [{"role": "user", "content": "t"}], "pendingToolUse": pending}

        write = {"id": "toolu_03", "name": "write_report", "input": {"path": "report.txt", "content": "レポート"}}
        read = {"id": "toolu_01", "name": "read_notes", "input": {"path": "sales-notes.txt"}}
        ensure_notes(WORK)

        print("1) 台帳ヒット")
        (WORK / "effects.json").write_text(json.dumps(
            {"toolu_03": {"name": "write_report", "result": "report.txt に書き出しました", "at": 1}}), encoding="utf-8")
        print(reconcile(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), scene(write)))

        print("2) 台帳ミス＋読み取り専用")
        (WORK / "effects.json").unlink()
        result = reconcile(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), scene(read))
        print(result["tool_use_id"], result["content"].splitlines()[0], "...")
        print("台帳:", list(load_effects(WORK / "effects.json")))

        print("3) 台帳ミス＋副作用あり")
        print(reconcile(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), scene(write)))
        print("report.txt はある?", (WORK / "report.txt").exists())
    """),
    md("""
        ## ループの中で

        本物のループを3つの瞬間で落とし、この notebook の `reconcile` を差し込んで `--resume` します。
        同じ `write_report` でも、落ちた瞬間によって分岐が変わります。
    """),
    code("""
        for label in ["after-effect-write:3", "after-tool-run:3", "after-save-a:1"]:
            WORK = scratch("05-" + label.replace(":", "-"))
            name, n = label.split(":")
            try:
                run_agent(Run(WORK, clock=fixed_clock, crash=CrashPlan(name, int(n))), ScriptedModel(), tools=TOOL_SCHEMAS)
            except SimulatedCrash:
                pass
            print(f"--- {label} で落として再開")
            run_agent(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), ScriptedModel(),
                      tools=TOOL_SCHEMAS, resume=True, reconcile=reconcile)
    """),
    md("""
        ## まとめ

        - どの分岐でも、宙ぶらりんな `tool_use` には必ず対になる `tool_result` が返る（API のペアリング規則）。
        - 分からないときは分からないと言う。`is_error` を受け取ったモデルは「状態が不明」と締めくくり、成功を主張しない。
    """),
]

NOTEBOOKS["06_entrypoint.ipynb"] = [
    md("""
        # 06 エントリポイントと `--resume`

        **復習**: ここまでで `save_checkpoint`、台帳、`reconcile`、地点Aと地点Bのループがそろいました。

        **目標**: コマンドラインの入口が下す決定はひとつ、`--resume` があるかどうか。新規実行が前回の残りを片付けること、
        再開がどう続くか、宙ぶらりんな呼び出しがない場面からの再開が何をするかを、本物のプロセスで確かめる。
    """),
    setup("06", "import inspect\n        import harness.__main__"),
    md("""
        ## ブロック

        入口 `main()` はパッケージのソースをそのまま表示します。`--resume` なら `run_agent(..., resume=True)`、
        なければ新規実行です。疑似キル（`SimulatedCrash`）だけを捕まえて 137 で終わります。
    """),
    code("""
        print(inspect.getsource(harness.__main__.main))
    """),
    md("""
        ### 実験: 新規実行は前回の残りを片付ける

        いったん落として、わざと `.tmp` のごみも置いておきます。`--resume` なしで起動すると、チェックポイント・台帳・
        レポート・`tool-runs.log`・`.tmp` は消え、入力の `sales-notes.txt` だけが残った状態から始まります。
    """),
    code("""
        cli(WORK, env={"CRASH_AFTER": "after-effect-write:2"})
        (WORK / "checkpoint.json.tmp").write_text("前回のごみ", encoding="utf-8")
        print(sorted(p.name for p in WORK.iterdir()))
        cli(WORK, env={"CRASH_AFTER": "after-save-a:1"})
        print(sorted(p.name for p in WORK.iterdir()))
    """),
    md("""
        ## ループの中で: 再開

        1ターン目の地点Aの直後で落ちた場面からの再開です。`read_notes` は読み取り専用なので、再実行されます。
    """),
    code("""
        cli(WORK, "--resume")
    """),
    md("""
        ### 宙ぶらりんな呼び出しがない場面からの再開

        地点Bの直後（③）で落ちると、`pendingToolUse` は `null` です。`reconcile` は何もせず、補完も要らないので、
        そのまま次のモデル呼び出しから続きます。
    """),
    code("""
        WORK = scratch("06-b")
        cli(WORK, env={"CRASH_AFTER": "after-save-b:2"})
        print(summary(WORK))
        cli(WORK, "--resume")
    """),
    md("""
        ### 再開するものがないとき

        チェックポイントのないフォルダで `--resume` すると、トレースバックではなく、何をすればよいかを1〜2行で伝えて終わります。
    """),
    code("""
        cli(scratch("06-empty"), "--resume")
    """),
    md("""
        ## 本物のモデルで

        ここまでの実行はすべて、決まった応答を返すスクリプト化されたモデルでした。本物の Messages API との違いは
        クライアントだけで、ループもチェックポイントも台帳も同じです。環境変数 `ANTHROPIC_API_KEY` があれば、次のセルは
        本物のモデル（`ANTHROPIC_MODEL`、既定は `harness.models.DEFAULT_MODEL`）で同じタスクを走らせます。
        なければ1行そう言うだけです。コマンドラインなら `python -m harness --real` です。
    """),
    code("""
        import os

        from harness import TOOL_SCHEMAS, Run, run_agent

        if os.environ.get("ANTHROPIC_API_KEY"):
            from harness.models import AnthropicClient

            client = AnthropicClient()
            print(f"本物のモデル {client.model} で走らせます")
            run_agent(Run(scratch("06-real"), listeners=[print_transcript]), client, tools=TOOL_SCHEMAS)
        else:
            print("ANTHROPIC_API_KEY がないので、スクリプト化されたモデルのまま進みます")
    """),
    md("""
        ## まとめ

        - `--resume` なし: 前回の場面と出力を片付けてから始める。`--resume` あり: 読み込み → reconcile → 続行。
        - 再開するものがなければ、はっきりそう言って止まる。
    """),
]

NOTEBOOKS["07_verification.ipynb"] = [
    md("""
        # 07 検証ハーネス: 決まった応答と、狙ったクラッシュ

        **復習**: 01〜06 の実行はすべて、毎回同じ結果になりました。

        **目標**: それを支える2つの仕掛け、スクリプト化されたモデルと `CRASH_AFTER` のラベルを理解し、
        すべてのラベル×ターンで再開がどの分岐に入り、`write_report` が実際に何回走るかを表にする。
    """),
    setup(
        "07",
        "from harness.lab import table\n        from harness import CRASH_LABELS, TOOL_SCHEMAS, APIError, CrashPlan, Run, ScriptedModel, "
        "SimulatedCrash, run_agent",
    ),
    md("""
        ## スクリプト化されたモデル

        `messages.create` が呼ばれるたびに、会話の中身を見て R1〜R4 のどれを返すかを決めます（会話に assistant が
        何回あるか）。だから、どの地点から再開しても正しい続きが返ります。4つを使い切った会話で呼ぶと、エラーになります。
    """),
    code("""
        model = ScriptedModel()
        messages = [{"role": "user", "content": "タスク"}]
        for _ in range(4):
            response = model.messages.create(tools=TOOL_SCHEMAS, messages=messages)
            block = response["content"][0]
            print(response["id"], response["stop_reason"], block.get("name") or block.get("text"))
            messages.append({"role": "assistant", "content": response["content"]})
            if block["type"] == "tool_use":
                messages.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": block["id"], "content": "（結果）"}]})
        messages.append({"role": "user", "content": "もう一度"})
        try:
            model.messages.create(tools=TOOL_SCHEMAS, messages=messages)
        except APIError as err:
            print("5個目:", err)
    """),
    md("""
        ## クラッシュのラベル

        `CRASH_AFTER=LABEL:N` は「このプロセスで LABEL を N 回目に通過した直後に落ちる」。ラベルは4つです。
    """),
    code("""
        for label, meaning in CRASH_LABELS.items():
            print(f"{label:20s} {meaning}")
    """),
    md("""
        ## 全ラベル×全ターンの表

        12通りすべてを落として再開し、`reconcile` の分岐と、`tool-runs.log` に残った `write_report` の実行回数を数えます。
    """),
    code("""
        BRANCH = {"hit": "台帳ヒット（再利用）", "rerun": "台帳ミス・読み取り専用（再実行）",
                  "unknown": "台帳ミス・副作用あり（is_error）", None: "reconcile なし"}
        rows = [["ラベル:N", "落ちたツール", "再開時の分岐", "write_report の実行回数"]]
        for label in CRASH_LABELS:
            for n in (1, 2, 3):
                work = scratch(f"07-{label}-{n}")
                try:
                    run_agent(Run(work, clock=fixed_clock, crash=CrashPlan(label, n)), ScriptedModel(), tools=TOOL_SCHEMAS)
                except SimulatedCrash:
                    pass
                branches = []
                resumed = Run(work, clock=fixed_clock,
                              listeners=[lambda e: e.kind == "reconcile" and branches.append(e.data["branch"])])
                run_agent(resumed, ScriptedModel(), tools=TOOL_SCHEMAS, resume=True)
                runs = (work / "tool-runs.log").read_text().splitlines().count("write_report toolu_03")
                tool = ["read_notes", "count_words", "write_report"][n - 1]
                rows.append([f"{label}:{n}", tool, BRANCH[branches[0] if branches else None], runs])
        print(table(rows))
    """),
    md("""
        3ターン目（`write_report`）の行に注目してください。`after-save-a:3`（①）と `after-tool-run:3`（②）はどちらも
        「is_error」です。②ではレポートがもう書かれている（実行回数 1）のに、台帳にないので再開は区別できません。
        `after-effect-write:3` は台帳ヒットで再利用され、`after-save-b:3`（③）では reconcile の出番がありません。

        ## まとめ

        - 非決定的なもの（モデルの応答、死ぬ瞬間）を先に固定すると、復旧の振る舞いを1行ずつ確かめられる。
        - どのケースでも `write_report` は高々1回。ただし①と②は同じ is_error になる。
    """),
]

NOTEBOOKS["08_only_point_b.ipynb"] = [
    md("""
        # 08 地点Bだけでよいか

        **復習**: 地点Aは `pendingToolUse` を書き、地点Bはそれを `null` に戻します。地点Bの保存は地点Aのフィールドを
        すべて含んでいます。

        **目標**: 「地点Aを省いてディスク書き込みを1回減らす」という提案を、実験で判定する。
    """),
    setup(
        "08",
        "from harness import TOOL_SCHEMAS, APIError, CrashPlan, Run, ScriptedModel, SimulatedCrash, "
        "run_agent, save_checkpoint",
    ),
    md("""
        ## 地点Aを外したループ

        ループ本体はそのままに、`save_checkpoint` だけを「`pendingToolUse` があるときは保存しない」ものに差し替えます。
        これで地点Aが消え、地点Bだけが残ります。
    """),
    code("""
        def save_only_point_b(path, cp):
            if cp["pendingToolUse"] is None:
                save_checkpoint(path, cp)
    """),
    md("### 実験: レッスンのデモと同じ瞬間で落とし、再開する"),
    code("""
        run = Run(WORK, clock=fixed_clock, crash=CrashPlan("after-effect-write", 3), listeners=[print_transcript])
        try:
            run_agent(run, ScriptedModel(), tools=TOOL_SCHEMAS, save_checkpoint=save_only_point_b)
        except SimulatedCrash:
            pass
        print(summary(WORK))
        print()
        run_agent(Run(WORK, clock=fixed_clock, listeners=[print_transcript]), ScriptedModel(), tools=TOOL_SCHEMAS,
                  resume=True, save_checkpoint=save_only_point_b)
        print((WORK / "tool-runs.log").read_text(encoding="utf-8"), end="")
    """),
    md("""
        ディスク上の最後の場面は2ターン目の地点Bです。3ターン目に `write_report` が名指しされたことは、
        チェックポイントのどこにも残っていません。だから再開は `reconcile` すべき呼び出しを知らず（`pending=なし`）、
        モデルにもう一度3ターン目を頼み、`write_report` が**2回目**に走りました（`tool-runs.log` に2行）。
        台帳には記録があったのに、誰もそれを引かなかったのです。地点Aがあれば、`pendingToolUse` がこの呼び出しを指し、
        台帳ヒットで再実行を防げました。

        本物のモデルなら2回目の呼び出しには新しい `tool_use_id` が付くので、台帳を id で引いてもヒットしません。

        ## もう1つの落とし穴: assistant の `tool_use` を戻さずに再開する

        再開時には、地点Aが保存した `pendingToolUse` から assistant の `tool_use` メッセージを組み立て直してから、
        `tool_result` を足します。組み立て直さずに `tool_result` だけを足すと、API はリクエストを拒否します。
        スクリプト化されたモデルは本物の API と同じ規則で断ります。
    """),
    code("""
        WORK = scratch("08-pairing")
        try:
            run_agent(Run(WORK, clock=fixed_clock, crash=CrashPlan("after-effect-write", 3)), ScriptedModel(),
                      tools=TOOL_SCHEMAS)
        except SimulatedCrash:
            pass
        from harness import load_checkpoint
        cp = load_checkpoint(WORK / "checkpoint.json")
        pending = cp["pendingToolUse"]
        messages = cp["messages"] + [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": pending["id"], "content": "（台帳の結果）"}]}]
        try:
            ScriptedModel().messages.create(tools=TOOL_SCHEMAS, messages=messages)
        except APIError as err:
            print(err)
    """),
    md("""
        ## まとめ

        - 地点Bだけでは、「名指しされてから結果が記録されるまで」の窓がチェックポイントから見えなくなる。
          その窓で落ちると、再開は副作用のあるツールをもう一度走らせてしまう。
        - すべての `tool_use` には対になる `tool_result` が要る。地点Aの `pendingToolUse` が、その対を再開後に組み立てる材料になる。
    """),
]

NOTEBOOKS["09_cost.ipynb"] = [
    md("""
        # 09 程度の問題: この仕組みの値段

        **復習**: 1ターンにチェックポイントを2回、台帳を1回、どれも `fsync` 付きで書いています。

        **目標**: その書き込みが会話の成長とともにどれだけ増えるかを実測して絵にし、このレッスンの実装が
        意図的に引いている2つの境界を確認する。
    """),
    setup(
        "09",
        "import json\n"
        "        from harness import TOOL_SCHEMAS, Run, ScriptedModel, run_agent, texts\n"
        "        from harness.lab.plots import plot_checkpoint_bytes",
    ),
    md("""
        ## 実測: 保存のたびに何バイト書いたか

        チェックポイントは毎回、会話全体（`messages`）を書き直します。メモが長いほど、ターンが進むほど大きくなります。
        メモの長さを変えて3回走らせ、保存のたびの `checkpoint.json` の大きさを記録します。
    """),
    code("""
        def measure(notes_lines):
            work = scratch(f"09-{notes_lines}")
            base = [ln for ln in texts.SAMPLE_NOTES.splitlines() if ln.startswith("- ")]
            lines = ["営業メモ"] + [base[i % len(base)] for i in range(notes_lines)]
            (work / "sales-notes.txt").write_text("\\n".join(lines) + "\\n", encoding="utf-8")
            sizes = []

            def on_event(event):
                if event.kind in ("save_a", "save_b"):
                    tag = "A" if event.kind == "save_a" else "B"
                    sizes.append((f"{event.data['turn']}{tag}", (work / "checkpoint.json").stat().st_size))

            run_agent(Run(work, clock=fixed_clock, listeners=[on_event]), ScriptedModel(), tools=TOOL_SCHEMAS)
            return sizes

        series = {f"メモ {n} 行": measure(n) for n in (3, 30, 300)}
        for name, sizes in series.items():
            print(name, " ".join(f"{label}={size}" for label, size in sizes),
                  "合計", sum(size for _, size in sizes), "バイト")
    """),
    code("""
        plot_checkpoint_bytes(series)
    """),
    md("""
        3行のメモなら1回の保存は数百バイトから2キロバイトほどですが、会話が伸びるたびに全体を書き直すので、
        合計はターン数とともにおおよそ2乗で増えます。数秒で終わり、失敗したら最初からやり直せば済むタスクなら、
        この I/O と状態機械を担ぐ価値はないかもしれません。複雑さは、成果を明らかに良くするときにだけ足します。

        ## このレッスンの実装が引いている2つの境界

        | 境界 | いまの実装 | 外すなら変わること |
        |---|---|---|
        | 宙ぶらりんな呼び出しは1つ | `pendingToolUse` は1つのオブジェクト。モデルは1ターンに1つだけツールを名指しする（本物の API には `disable_parallel_tool_use` を付ける）。2つ来たら止まる | `pendingToolUse` を配列にし、それぞれに `reconcile` を走らせる。地点Bは全部の `tool_result` がそろってから |
        | 1プロセスが1タスク | チェックポイントと台帳は1つの作業フォルダに1つ。同時に2つのプロセスが触ることは想定しない | 作業フォルダのロック、複数セッションでの状態の共有、マシンをまたぐ一貫性。いずれもこのコースの範囲外 |

        ## まとめ

        - 保存の値段は会話の大きさに比例し、全体では2乗で効いてくる。長くて、途中に副作用があるタスクにこそ見合う。
        - 境界を知って使う。1ターン1呼び出し、1プロセス1タスク。
    """),
]

NOTEBOOKS["crash_lab.ipynb"] = [
    md("""
        # Crash Lab: 落として、見て、拾い直す

        **復習**: 1ターンには、チェックポイントが捕まえうるクラッシュの瞬間が ① 地点A保存直後、② ツール完了・台帳未記録、
        ③ 地点B保存直後の3つあり、レッスンのデモは「台帳記録済み・地点B未保存」の瞬間でした。

        **目標**: 環境変数を書き換える代わりにクリックで瞬間を選び、`checkpoint.json`・`effects.json`・`tool-runs.log` が
        変わる様子を見ながら落とし、再開したときに `reconcile` がどの分岐に入ったかを確かめる。

        ## 使い方

        1. 「落とす瞬間」と「どのターン」を選び、「落とし方」を選ぶ。カーネル内は レッスンの疑似キル、本物のプロセスは
           `python -m harness` を `CRASH_MODE=sigkill` で起動し、本当に SIGKILL で死なせます。
        2. 「実行」。ファイルの欄では、直前の変化で増えた・変わった行が黄色になります。
        3. 「再開（--resume）」。上に `reconcile` の判断がレッスンの言葉で出ます。
        4. 「1歩進む」はイベントを1つずつ進めます（カーネル内のみ）。落ちたあとに押すと、再開を1歩ずつ進めます。

        **講師向け**: 「本物のプロセス」を選び、スロー(ms) を 800 くらいにして「なし（最後まで走る）」で実行すると、
        クラスの前で好きな瞬間に「今すぐキル」を押せます。そのあと「再開」で、その瞬間に `reconcile` が何を決めたかを
        見せられます。この notebook だけを画面いっぱいに出すには、リポジトリで
        `.venv/bin/voila notebooks/crash_lab.ipynb` を実行します。
    """),
    code("""
        from harness.lab.crashlab import CrashLab

        lab = CrashLab()
        lab
    """),
    md("""
        ## 静的な図: ② で `write_report` を落として再開したとき

        GitHub で読む人のために、同じタイムラインを1枚の図にしておきます。赤い帯は、副作用のあるツールの結果が台帳からは
        分からない窓です。そこで落ちると、再開は「台帳ミスかつ副作用あり」で `is_error` を返します。
    """),
    code("""
        from harness import TOOL_SCHEMAS, CrashPlan, Run, ScriptedModel, SimulatedCrash, run_agent
        from harness.lab import fixed_clock, scratch
        from harness.lab.plots import plot_timeline

        work, events = scratch("crash-lab-static"), []
        try:
            run_agent(Run(work, clock=fixed_clock, crash=CrashPlan("after-tool-run", 3), listeners=[events.append]),
                      ScriptedModel(), tools=TOOL_SCHEMAS)
        except SimulatedCrash:
            pass
        text = run_agent(Run(work, clock=fixed_clock, listeners=[events.append]), ScriptedModel(), tools=TOOL_SCHEMAS,
                         resume=True)
        print(text)
        plot_timeline(events)
    """),
]


def main() -> None:
    out = ROOT / "notebooks"
    out.mkdir(exist_ok=True)
    books = {out / name: cells for name, cells in NOTEBOOKS.items()}
    for folder, solved in (("exercises", False), ("solutions", True)):
        (ROOT / folder).mkdir(exist_ok=True)
        books[ROOT / folder / "level1_crash_moments.ipynb"] = level1(solved)
        books[ROOT / folder / "level2_reversed_ledger.ipynb"] = level2(solved)
    for path, cells in books.items():
        for i, cell in enumerate(cells):
            cell.id = f"cell-{i + 1:02d}"  # stable ids: rebuilding an unchanged notebook changes no byte
        nbformat.write(new_notebook(cells=cells, metadata=KERNEL), path)
        print("wrote", path.relative_to(ROOT))


if __name__ == "__main__":
    main()
