"""Every learner-facing string in one place, in the lesson's words, and the event-to-log-line formatter."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from .vocab import DEFAULT_WORKDIR

TASK = "sales-notes.txt を短いレポートにまとめて report.txt に書き出してください。"

SAMPLE_NOTES = """営業メモ 2026年11月
- A社: 見積もりを再提出した。来週水曜に返事をもらう。
- B社: 新製品のデモに好反応。導入は来期に検討する。
- C社: 価格に懸念あり。値引きではなく保守期間の延長を提案する。
"""

DONE_OK = "report.txt にレポートを書き出しました。タスク完了。"
DONE_UNKNOWN = "{name} の実行状態が不明です。report.txt を確認してください。"
MAX_TURNS_REACHED = "最大{max_turns}ターンに達したため、自主的に停止します"

# reconcile's three branches, exactly as the lesson logs them.
RECONCILE_LINES = {
    "hit": "台帳ヒット、結果を再利用、再実行しない",
    "rerun": "台帳ミス、読み取り専用ツール、再実行する",
    "unknown": "台帳ミスかつ副作用あり、判断不能、is_error を追加",
}
UNKNOWN_RESULT = (
    "この{name}呼び出しの再開前の実行状態は不明です: 台帳にエントリがなく、副作用の重複を避けるため"
    "再実行していません。完了したかどうかをご自身で確認してください。"
)
TOOL_ERROR_RESULT = "ツール実行エラー: {error}"
LEDGER_ALERT = (
    "[台帳の書き込みに失敗] tool_use_id={id}: 副作用はすでに起きています。"
    "再開時に重複実行のリスクがあるため、手動で確認してください（{error}）"
)

# Loader errors: line 1 says what is wrong, line 2 what to do.
START_OVER = "このファイルを削除し、--resume なしで最初からやり直してください。"
CHECKPOINT_MISSING = (
    "{path} が見つかりません。--resume する対象がありません。\n--resume なしで最初から実行してください。"
)
CHECKPOINT_UNPARSABLE = (
    "{path} のパースに失敗しました。書き込みの途中で中断されたファイルの可能性があります。\n"
    "使い続けるのではなく削除し、--resume なしで最初からやり直してください。"
    "半分だけ書かれたチェックポイントは推測で元に戻せません。"
)
CHECKPOINT_VERSION = (
    "{path} の version={version} です。このプログラムは version=1 しか受け付けないため、読み込みを拒否します。\n"
    + START_OVER
)
CHECKPOINT_SHAPE = (
    "{path} の形が正しくありません（{detail}）。推測で補わずに読み込みを拒否します。\n" + START_OVER
)
NOT_A_FILE = (
    "{path} は普通のファイルではありません（{detail}）。読み込みを拒否します。\n"
    "その場所に何があるかを確かめてください。壊れたチェックポイントなら削除し、--resume なしで最初からやり直してください。"
)
LEDGER_UNPARSABLE = (
    "{path}（副作用台帳）のパースに失敗しました。空の台帳として扱うと記録済みの副作用を失うため、読み込みを拒否します。\n"
    "report.txt と tool-runs.log で何が実行済みかを確かめてから、台帳を削除し --resume なしで最初からやり直してください。"
)
LEDGER_SHAPE = (
    "{path}（副作用台帳）の形が正しくありません（{detail}）。推測で補わずに読み込みを拒否します。\n"
    "report.txt と tool-runs.log で何が実行済みかを確かめてから、台帳を削除し --resume なしで最初からやり直してください。"
)

NO_PERMISSION = (
    "{path} を読む権限がありません。ファイルは壊れていないかもしれないので、削除しないでください。\n"
    "chmod u+rw {path} などで読み書きできるようにしてから、もう一度実行してください。"
)
LINK_REFUSED = "リンクです。作業フォルダの外を指しているかもしれないので、たどりません"
HARD_LINK_REFUSED = (
    "ハードリンクです（別の名前からも同じ中身が見えます）。作業フォルダの外の中身かもしれないので、使いません"
)
SPECIAL_FILE_REFUSED = (
    "普通のファイルではありません（FIFO やデバイスなど）。開くと止まるかもしれないので、開きません"
)
FOLDER_IN_PLACE = "フォルダです"
LEDGER_DISAGREES = (
    "{path} は、隣の副作用台帳と食い違っています（{detail}）。推測で補わずに読み込みを拒否します。\n"
    "report.txt と tool-runs.log で何が実行済みかを確かめてから、checkpoint.json と effects.json の両方を削除し、"
    "--resume なしで最初からやり直してください。"
)
WORKDIR_NOT_FOLDER = "作業フォルダ {path} はフォルダではありません。\n別の --workdir を指定してください。"
NOT_OUR_FOLDER = (
    "作業フォルダ {path} には、このハーネスが作ったのではないかもしれない {files} があります。"
    "自分で作っていないファイルは消しません。\n"
    "空のフォルダか新しい名前を --workdir に指定するか、中身を確かめてから自分で片付けてください。"
)
CANNOT_CLEAN = (
    "{path} を片付けられません（{detail}）。\nその場所を確かめて、自分で片付けてから実行してください。"
)
MARKER_TEXT = "このフォルダは python -m harness の作業フォルダです。新しく実行すると、前回の状態と出力は片付けられます。\n"
REFUSED_TO_SAVE = (
    "{path} に書こうとした内容は、読み込むときに拒否される形です（{detail}）。読めないファイルは書かないので、"
    "保存せずに止めました。\nディスク上の {path} は直前の保存のまま有効です（あれば）。原因を確かめてから --resume してください。"
)
TOOL_LOG_FAILED = (
    "{path} に書けません（{detail}）。ツールは実行していません。\n"
    "そのファイルを確かめてから --resume してください（チェックポイントは地点Aのまま有効です）。"
)

# Tool errors (they become is_error tool_results).
PATH_ESCAPES = "パス {path} は作業フォルダの外を指しています。作業フォルダの中のファイルだけを扱えます"
FILE_NOT_FOUND = "{path} が見つかりません"
BAD_TOOL_INPUT = "{name} の入力が正しくありません: {detail}"
UNKNOWN_TOOL = "未知のツール {name} です"
PATH_IS_HARNESS_FILE = "パス {path} はハーネス自身のファイルです。ツールからは読み書きできません"
NOT_UTF8 = (
    "{path} は UTF-8 のテキストではありません（Shift_JIS などかもしれません）。UTF-8 で保存し直してください"
)
CANNOT_OPEN = "{path} を開けません（{detail}）"
CANNOT_WRITE = "{path} に書けません（{detail}）"

# The command line.
BAD_CRASH_AFTER = (
    "CRASH_AFTER={value} は読めません。LABEL:N の形で、LABEL は {labels} のいずれか、N は 1 以上の整数です。\n"
    "例: CRASH_AFTER=after-effect-write:3 python -m harness"
)
CHECKPOINT_VERSION_2_BY_PARALLEL = (
    "{path} の version=2 です。これは --parallel が書いたチェックポイントで、--parallel なしでは読めないため"
    "読み込みを拒否します。\n削除せずに、{command} で続きから再開してください。"
)
BAD_CRASH_PLAN = (
    "CrashPlan({label!r}, {n!r}) では止める瞬間を作れません。\n"
    'ラベルは {labels} のいずれか、回数は 1 以上の整数です（"2" ではなく 2）。'
)
# A crash inside the writer is placed right after the save's log line: say that this save never reached the disk.
WRITER_KILL_NOTES = {
    "checkpoint-torn-write": "（直前の保存は checkpoint.json.tmp を半分書いたところで止まり、checkpoint.json は前のまま）",
    "checkpoint-before-rename": "（直前の保存は rename の前で止まり、checkpoint.json は前のまま）",
    "effects-torn-write": "（直前の台帳の書き込みは effects.json.tmp を半分書いたところで止まり、effects.json は前のまま）",
    "effects-before-rename": "（直前の台帳の書き込みは rename の前で止まり、effects.json は前のまま）",
}
ENGINE_WITH_SCENARIO = (
    "--engine dbos は --parallel や --idempotent と一緒には使えません（エンジンはレッスンのタスクを走らせます）。\n"
    "冪等なツールは HARNESS_IDEMPOTENT_TOOLS=1 で選べます。"
)
BAD_CRASH_MODE = "CRASH_MODE={value} は読めません。simulated（既定）か sigkill を指定してください。"
MULTIPLE_TOOL_USES = (
    "モデルが1ターンに {count} 個の tool_use を返しました。このハーネスは宙ぶらりんな呼び出しを1つしか扱えません。\n"
    "チェックポイントは直前の地点のまま有効です。原因を確かめてから --resume してください。"
)
WORKDIR_BUSY = (
    "作業フォルダ {path} は別のプロセスが使用中です（python -m harness か notebook の実行）。\n"
    "そのプロセスが終わるのを待つか、止めてから実行してください。"
)
BAD_ARGUMENT = "引数 {arg} を読めません。\n{usage}"
EMPTY_WORKDIR = "--workdir が空です。作業フォルダの名前を指定してください（既定: harness-work）。"
NO_WORKDIR_TO_RESUME = "作業フォルダ {path} がありません。--resume する対象がありません。\n--resume なしで最初から実行してください。"
BAD_FIXED_TIME = (
    "HARNESS_FIXED_TIME_MS={value} は読めません。\nミリ秒を 0 以上の整数（15 桁まで）で指定してください。"
)
BAD_SLOW_MS = "HARNESS_SLOW_MS={value} は読めません。\n1ステップごとに止まるミリ秒を 0〜999999 の整数で指定してください。"
DISK_PROBLEM = (
    "ディスクに書けませんでした（{detail}）。ディスクの空きと、作業フォルダ {path} に書けるかを確かめてください。\n"
    "{hint}"
)
DISK_RESUME_HINT = "チェックポイントは直前の保存のまま有効です。直ったら --resume で続きから再開できます。"
DISK_RESTART_HINT = "まだチェックポイントがありません。直ったら --resume なしで最初から実行してください。"
BAD_EVENTS_FILE = "HARNESS_EVENTS_FILE={value} はハーネス自身のファイルの名前です。作業フォルダの外の別のファイルを指定してください。"
EVENTS_FILE_IN_WORKDIR = (
    "HARNESS_EVENTS_FILE={value} は作業フォルダ {workdir} の中（タスクとハーネスのファイルの場所）を指しています。"
    "作業フォルダの外のファイルを指定してください。"
)
EVENTS_FILE_IS_DATABASE = "HARNESS_EVENTS_FILE={value} はシステムデータベースのファイルを指しています。データベースの外の別のファイルを指定してください。"
BAD_SWITCH = "{name}={value} は読めません。\n1（オン）か 0（オフ）を指定してください（true や yes、空白つきは受け付けません）。"
UNKNOWN_SETTING = (
    "環境変数 {name} はこのハーネスの設定にありません（つづりの誤り？）。黙って無視はしません。\n"
    "使える設定は {known} です。"
)
ENGINE_SETTING_WITHOUT_ENGINE = (
    "{name} は --engine dbos の設定です。エンジンなしでは使われないので、黙って無視せずに止めます。\n"
    "--engine dbos を付けるか、{name} を外してください（ファイル版の冪等なツールは --idempotent）。"
)
BAD_MODEL = (
    "ANTHROPIC_MODEL={value} は読めません。\n"
    "モデル ID を空白や制御文字なしで指定してください（例: claude-sonnet-4-5。なしなら既定のモデル）。"
)
INTERRUPTED = "[中断] Ctrl-C で止めました。チェックポイントは直前の保存のまま有効です。--resume で続きから再開できます。"
INTERRUPTED_BEFORE_SAVE = (
    "[中断] Ctrl-C で止めました。まだチェックポイントがありません。--resume なしで最初から実行してください。"
)
NO_API_KEY = "エラー: --real には環境変数 ANTHROPIC_API_KEY が必要です（鍵なしならスクリプト化されたモデルで --real を外してください）。"
API_TIMEOUT = "API の応答がタイムアウトしました"
API_CONNECTION = "API に接続できませんでした（{error}）"
API_KINDS = {
    0: "接続できないか応答がありません",
    200: "応答を受け付けません",
    400: "リクエストが不正",
    401: "認証エラー",
    403: "権限がありません",
    404: "見つかりません",
    413: "リクエストが大きすぎます",
    429: "レート制限",
    500: "API 内部エラー",
    529: "API が過負荷",
}
API_FAILED = "モデルの API 呼び出しが失敗しました（{kind}、HTTP {status}）: {message}"
API_DEADLINE = (
    "API の応答が上限の {seconds} 秒以内に返りませんでした（上限は HARNESS_API_DEADLINE_S で変えられます）"
)
API_WAITING = (
    "[待機中] モデルの応答を待っています（{elapsed} 秒経過、{deadline} 秒で打ち切ります。"
    "Ctrl-C で止めても --resume で再開できます）"
)
API_ODD_ERROR = "API クライアントが失敗しました（{error}）"
RESPONSE_NOT_JSON = "厳密な JSON ではありません。応答のどの部分も保存していません"
RESPONSE_REFUSED = "{detail}。応答のどの部分も保存していません"
BAD_API_DEADLINE = (
    "HARNESS_API_DEADLINE_S={value} は読めません。\n"
    "モデル呼び出し1回にかけてよい秒数を、0 より大きく 86400 以下の数で指定してください（例: 30 や 2.5）。"
)
API_RESUME_HINT = (
    "チェックポイントは直前の保存のまま有効です。原因が解消したら --resume で続きから再開できます。"
)
API_RESTART_HINT = (
    "まだチェックポイントがありません。原因が解消したら --resume なしで最初から実行してください。"
)
STOPPED_EARLY = (
    "モデルが stop_reason={reason} で止まりました（ツール呼び出しでも通常の終了でもありません）。応答: {text}"
)
UNEXPECTED = (
    "予期しないエラーです（{kind}: {error}）。\nHARNESS_DEBUG=1 を付けて再実行すると詳しい情報が出ます。"
)


def untrusted(value: object, limit: int = 300, indent_lines: bool = False) -> str:
    """Text from outside (a model, a server, an argument) made safe for the terminal: control characters and escape
    sequences shown as escapes, cut at `limit` characters. Newlines too, unless indent_lines: then each further line
    is indented, so no line of it can pass for one of the harness's own `[...]` lines."""
    text = str(value)
    shown = "".join(
        "\n    " if c == "\n" and indent_lines else c if c.isprintable() else repr(c)[1:-1] for c in text
    )
    return shown if len(shown) <= limit else shown[:limit] + "…"


def version_refused(path, version: object) -> str:
    """Why a checkpoint of another version is refused, and what to do: a version 2 written by --parallel is not
    deleted but resumed with --parallel --resume (in its folder); any other version, the lesson's advice."""
    if version == 2 and type(version) is int:
        command = harness_command(("--parallel",), Path(path).parent)
        return CHECKPOINT_VERSION_2_BY_PARALLEL.format(path=path, command=command)
    return CHECKPOINT_VERSION.format(path=path, version=json.dumps(version, ensure_ascii=False))


def harness_command(flags, workdir, resume: bool = True) -> str:
    """The command line that runs the task in `workdir` with these mode flags, as a person would type it again:
    `python -m harness --parallel --resume --workdir DIR` (no --workdir for the default folder)."""
    words = ["python", "-m", "harness", *flags, *(["--resume"] if resume else [])]
    if Path(workdir) != Path(DEFAULT_WORKDIR):
        words += ["--workdir", shlex.quote(str(workdir))]
    return untrusted(" ".join(words), limit=1000)


def reconcile_line(branch: str) -> str:
    """The log line of a reconcile branch: the lesson's three, or the idempotent tools' fourth (notebook 12)."""
    return RECONCILE_LINES.get(branch) or IDEMPOTENT_RECONCILE_LINES[branch]


def format_event(kind: str, data: dict) -> str | None:
    """The lesson's log line for one event, or None if the event has no line."""
    if kind == "save_a":
        return f"[turn {data['turn']}][save A] pending={data['pending']}"
    if kind == "save_b":
        tail = " 再開後にこのターンのツール結果を補完" if data.get("resumed") else ""
        return f"[turn {data['turn']}][save B]{tail}"
    if kind == "resume":
        return f"[resume] turn={data['turn']} pending={data['pending'] or 'なし'} を読み込み"
    if kind == "reconcile":
        line = reconcile_line(data["branch"])
        return f"[resume][reconcile] tool_use_id={data['id']} name={data['name']} {line}"
    if kind == "tool_error":
        error = untrusted(data["error"])
        return f"[tool] {data['name']} {data['id']} {TOOL_ERROR_RESULT.format(error=error)}"
    if kind == "crash":
        how = " SIGKILL（本物のキル）" if data.get("mode") == "sigkill" else "疑似キル"
        inside_writer = data["label"].split(":")[0] in WRITER_KILL_NOTES
        note = WRITER_KILL_NOTES[data["label"].split(":")[0]] if inside_writer else ""
        return f"[kill] {data['label']} で{how}{note}"
    if kind == "done":
        return f"[done] {untrusted(data['text'], limit=4000, indent_lines=True)}"
    if kind == "ledger_write_failed":
        return LEDGER_ALERT.format(id=data["id"], error=untrusted(data["error"]))
    return None


def terminal_safe(text: str) -> str:
    """A message as it may reach a terminal: every control character (escape sequences, bidi overrides, ...)
    shown as an escape, except the newlines between the message's own lines."""
    return "".join(c if c == "\n" or c.isprintable() else repr(c)[1:-1] for c in text)


def print_transcript(event) -> None:
    """The transcript listener: the lesson's log line for each event on stdout, the ledger alert on stderr."""
    line = format_event(event.kind, event.data)
    stream = sys.stderr if event.kind == "ledger_write_failed" else sys.stdout
    if line is not None and stream is not None:
        print(terminal_safe(line), file=stream, flush=True)


# ---- Beyond the lesson: the pending set (--parallel) and idempotent tools (--idempotent) -------------------------
# (harness/parallel.py, harness/idempotent.py, harness/scenarios.py; notebooks 11 and 12)

PARALLEL_TASK = "sales-notes.txt を読んで文字数も数え、report.txt にレポートを、summary.txt に1行の要約を書き出してください。"
PARALLEL_DONE_OK = "report.txt と summary.txt を書き出しました。タスク完了。"
PARALLEL_DONE_UNKNOWN = "write_report の実行状態が不明です。{files} を確認してください。"
CHECKPOINT_VERSION_2 = (
    "{path} の version={version} です。このプログラムは version=1 と version=2 しか受け付けないため、"
    "読み込みを拒否します。\n" + START_OVER
)
# Which mode a task was started in (mode.json, harness/modes.py): --resume never drops one.
MODE_DROPPED = (
    "作業フォルダ {path} のタスクは {started} で始めたものです（{file}）。{missing} なしで再開するとそのモードの約束を"
    "守れないので、再開しません（ファイルには触れていません）。\n削除せずに、{command} で続きから再開してください。"
)
MODE_NOT_ENGINE = (
    "作業フォルダ {path} のタスクはファイル版（{file}）で始めたもので、--engine dbos のワークフローではありません。"
    "エンジンでは再開しません（ファイルには触れていません）。\n削除せずに、{command} で続きから再開してください。"
)
MODE_NOTHING_TO_RESUME = (
    "{path} が見つかりません。--resume する対象がありません（このフォルダのタスクは {started} で始めたものです）。\n"
    "{command} で最初から実行してください。"
)
MODE_FILE_ODD = (
    "{path} の形が正しくありません（{shapes} のどれかです）。このタスクをどのモードで始めたか推測せずに、再開を拒否します。\n"
    "始めたときのフラグが分かるならその形に直してから --resume し、分からなければ --resume なしで最初からやり直してください。"
)
NO_TOOL_USES = (
    "モデルが stop_reason=tool_use で止まったのに、tool_use を1つも返しませんでした。\n"
    "チェックポイントは直前の地点のまま有効です。原因を確かめてから --resume してください。"
)
# reconcile's fourth branch, beside the lesson's three (format_event reads both dicts).
IDEMPOTENT_RECONCILE_LINES = {
    "asked-done": "台帳ミスかつ副作用あり、冪等キーで問い合わせ: 実行済み、結果を再利用、再実行しない",
    "asked-run": "台帳ミスかつ副作用あり、冪等キーで問い合わせ: 未実行、いま実行する",
}
IDEMPOTENCY_KEY_LINE = "<!-- 冪等キー: {key} -->"
REPORT_WRITTEN = "{path} に {chars} 文字のレポートを書き出しました"
NO_IDEMPOTENCY_KEY = (
    "冪等なツール {name} が冪等キー（tool_use_id）なしで呼ばれたので、実行していません。\n"
    "冪等キーを渡す run_tool_uses_keyed と一緒に使ってください（python -m harness --idempotent）。"
)
LOOKUP_CANNOT_TELL = "{path} は別の呼び出しが書いたもの（または冪等キーのない書き込み）です。呼び出し {key} が起きたかどうかは分かりません"
LOOKUP_FAILED = "{path} を読めないので、呼び出し {key} が起きたかどうかは分かりません（{detail}）"
# What each crash point is, for the Crash Lab's list of moments (scenarios.crash_moments).
MOMENT_SAVE_A = "ターン{turn} 地点A保存直後 pending={pending}"
MOMENT_TOOL_RAN = "ターン{turn} {name} {id} 実行直後（台帳未記録）"
MOMENT_EFFECT_WRITTEN = "ターン{turn} {name} {id} 台帳記録直後（地点B未保存）"
MOMENT_SAVE_B = "ターン{turn} 地点B保存直後"
MOMENT_CHECKPOINT_WRITE = "ターン{turn} 地点{point}の checkpoint.json 書き込み中"
MOMENT_EFFECTS_WRITE = "ターン{turn} {name} {id} の effects.json 書き込み中"
UNKNOWN_MOMENT = (
    "{text!r} はこのタスクの落とす瞬間として読めません。\n"
    '"LABEL:N" の形で、LABEL と N は次のどれかを指定してください（例: "after-tool-run:3"）:'
)
MOMENT_RANGE = "  {label}:1〜{count}"
MOMENT_ONLY_ONE = "  {label}:1"


# ---------------------------------------------------------------------------------------------------------------------
# --engine dbos (beyond the lesson: the same task as a DBOS durable workflow). Used by harness/engine_dbos.py only.
# ---------------------------------------------------------------------------------------------------------------------
DBOS_LINES = {
    "dbos_start": "[dbos] ワークフロー {task_id} を開始（システムデータベース: {db}）",
    "dbos_recover": "[resume] ワークフロー {task_id} を DBOS が回復（状態 {status}、記録済みのステップ {steps} 個）",
    "dbos_takeover": (
        "[resume] ワークフロー {task_id} を DBOS が回復（状態 {status}、実行者 {owner} → {executor}、"
        "記録済みのステップ {steps} 個）"
    ),
    "dbos_finished": "[resume] ワークフロー {task_id} はすでに完了しています（状態 {status}）。記録された結果を返し、何も実行しない",
    "model": "[turn {turn}][step {step} {how}] モデル pending={pending}",
    "tool": "[turn {turn}][step {step} {how}] {name} の結果",
    "closing": "[step {step} {how}] モデルの締めくくり",
    "already_written": "[tool] {name}: キー {key} のレポートはすでにある、書き直さない",
    "dbos_back": "[dbos] システムデータベースが戻りました。ワークフロー {task_id} をこのプロセスで回復して続けます",
    "dbos_not_here": (
        "[dbos] {name} はこのプロセスでは実行していません（記録を再利用）。{path} はこの作業フォルダにはありません"
        "（書いたのは前のワーカー。ワークフローを始めたフォルダ: {started_in}）"
    ),
}
# With a database shared by several tasks (--database-url), every line of a worker names its task: [task-id]...
DBOS_TASK_PREFIX = "[{task_id}]"
DBOS_HOW = {"ran": "記録", "replayed": "再利用"}
DBOS_ALREADY_WRITTEN = "{path} はキー {key} ですでに書き出されています（書き直していません）"
DBOS_BAD_ENGINE = "--engine {value} は使えません。使えるのは dbos だけです（なしならレッスンのファイル版）。"
DBOS_OPTION_NEEDS_ENGINE = "{option} は --engine dbos と一緒に使います。"
DBOS_BAD_URL = (
    "データベースの URL {url} は使えません（{reason}）。\n"
    "postgresql://ユーザー@ホスト:ポート/データベース名 か sqlite:///ファイルの場所 を指定してください"
    "（例: --database-url postgresql://user@localhost:5432/harness）。"
)
DBOS_URL_REASONS = {
    "scheme": "postgresql:// か sqlite:/// で始まっていません",
    "at": "@ が2つ以上あります。ユーザー名やパスワードの中の @ は %40 と書いてください",
    "port": "ポート番号が 1〜65535 の整数ではありません",
    "bracket": "ホストの [ が ] で閉じていません",
    "unreadable": "URL として読めません",
    "no_database": "データベース名がありません",
    "memory": "メモリ上の SQLite はプロセスが終わると消えるので、再開のための記録を残せません",
    "no_file": "SQLite のファイルの場所がありません",
}
DBOS_BAD_NAME = "{name}={value} は使えません。英数字と - _ . : だけの 1〜100 文字で指定してください。"
DBOS_BAD_DEADLINE = (
    "HARNESS_DATABASE_DEADLINE_S={value} は使えません。データベースを待つ秒数を 1〜86400 の数で指定してください"
    "（既定: {default:g}）。"
)
DBOS_NO_WRITER_LABELS = (
    "CRASH_AFTER={label} は --engine dbos では使えません。DBOS はファイルではなくデータベースのトランザクションで記録するので、"
    "書きかけの .tmp は生まれません。\n使えるのは after-save-a, after-tool-run, after-effect-write, after-save-b です。"
)
DBOS_START_COMMAND = "python -m harness --engine dbos{options}"
DBOS_SECRET_IN_COMMAND = "（URL の *** には実際の値を入れてください）"
DBOS_NO_DATABASE = "{path} がありません。--resume する対象のワークフローがありません。\n{command} で最初から実行してください。"
LESSON_ENGINE_ON_DISK = (
    "{path} が見つかりません。この作業フォルダにあるのは --engine dbos のワークフロー（dbos.sqlite）です。\n"
    "その続きなら: {command}"
)
DBOS_NO_WORKFLOW = (
    "ワークフロー {task_id} はシステムデータベース {db} にありません。--resume する対象がありません。\n"
    "最初から始めるなら: {command}（別のタスクの続きなら HARNESS_TASK_ID でその ID を指定してください）"
)
DBOS_ALREADY_EXISTS = (
    "ワークフロー {task_id} はシステムデータベース {db} にすでにあります（状態 {status}）。同じ ID では新しく始めません。\n"
    "その続きなら: {command}（新しいタスクなら HARNESS_TASK_ID で別の ID を指定してください）"
)
DBOS_TASK_BUSY = (
    "ワークフロー {task_id} は、いま別のプロセスが実行しています（システムデータベース {db}）。"
    "生きているプロセスのワークフローは引き継ぎません。\n"
    "そのプロセスが終わるのを待ってください。止まっているならそのプロセスを終わらせてから: {command}"
)
DBOS_TASK_TAKEN = (
    "ワークフロー {task_id} を別のプロセスが引き継ぎました（データベースが途切れている間に）。"
    "二重に進めないよう、このプロセスはここで止めました。\n続きはそのプロセスが進めます。"
)
DBOS_WORKFLOW_FAILED = "ワークフロー {task_id} はエラーで終わりました（状態 {status}）: {error}"
DBOS_WORKFLOW_FAILED_HINT = (
    "この記録からは再開できません（--resume は同じエラーを返すだけです）。"
    "原因を確かめてから、新しいタスク ID で最初から: {command}"
)
DBOS_WORKFLOW_FAILED_HINT_HERE = (
    "この記録からは再開できません（--resume は同じエラーを返すだけです）。"
    "原因を確かめてから、最初から: {command}（そのとき dbos.sqlite は片付けられます）"
)
DBOS_NO_REASON = "（理由は記録されていません）"
DBOS_OTHER_VERSION = (
    "ワークフロー {task_id} は別の版のハーネス（{version}）が始めたものです。この版では回復できません。\n"
    "新しいタスク ID で最初から: {command}"
)
DBOS_CANNOT_OPEN = (
    "システムデータベース {db} を使えません（{detail}）。\n"
    "URL とサーバーが動いているかを確かめてください。作業フォルダの dbos.sqlite が壊れているなら、"
    "中身を確かめてから削除し、--resume なしで最初からやり直してください。"
)

# ---- Crash Lab (harness/lab/crashlab.py): the lines it adds to its views ----------------------------------------------
LAB_NOT_SHOWN_YET = "（Crash Lab: このセルを実行すると、ここにラボが出ます）"
LAB_DECISION = "再開時の判断"
LAB_NOTHING_TO_DO = (
    "もう一度の再開: 宙ぶらりんな呼び出しも残りのターンもなく、することはありませんでした"
    "（上の判断は、落ちたあとの再開が下したもの）"
)
LAB_NOTHING_TO_DO_ALONE = "再開: 宙ぶらりんな呼び出しも残りのターンもなく、することはありませんでした"
LAB_RAN_COMMAND = "実行したコマンド: <code>{command}</code>"
LAB_RUNNING_COMMAND = "実行中: <code>{command}</code>"
LAB_KILL_LANDED = "今すぐキル（SIGKILL）が落ちた瞬間: {where}"
LAB_KILL_STATUS = "今すぐキル: {where} で SIGKILL（シェルなら終了コード 137）。再開を押してください"
LAB_KILL_TRANSCRIPT = "[kill] 今すぐキル: {where} で SIGKILL を送信（講師による）"
LAB_KILL_MARK = "今すぐキル"
# where a kill by hand landed, after the last event the process reported (the kill comes during the pause after it)
LAB_LANDED = {
    None: "最初の地点A保存より前（checkpoint.json はまだありません）",
    "start": "最初の地点A保存より前（checkpoint.json はまだありません）",
    "save_a": "① 地点A保存直後（ターン{turn} {pending}、ツール未実行）",
    "tool_start": "① と ② のあいだ（ターン{turn} {name} {id} の実行中）",
    "tool_ran": "② ツール完了・台帳未記録（ターン{turn} {name} {id}）",
    "effect_written": "台帳記録済み・地点B未保存（レッスンのデモ、ターン{turn} {name} {id}）",
    "save_b": "③ 地点B保存直後（ターン{turn}）",
    "resume": "再開の読み込み直後（ターン{turn}、reconcile の前）",
    "reconcile": "reconcile の直後（ターン{turn} {name} {id}、地点B未保存）",
    "done": "完了のあと（プロセスはもう終わるところでした）",
}
LAB_COMPARE_CONCLUSION = "再開すると"
LAB_COMPARE_DISKS = "ディスク"
LAB_COMPARE_SAME = "再開が読む checkpoint.json と effects.json はバイト単位で同じ。だから再開は ① と ② を見分けられず、同じ判断になる"
LAB_COMPARE_ASKED = (
    "再開が読む checkpoint.json と effects.json はバイト単位で同じ。それでも判断が分かれるのは、外の世界"
    "（report.txt の冪等キー）に問い合わせたから"
)

# ---- --engine dbos: the database deadline, URLs, paths and limits --------------------------------------------------
DBOS_WAITING = "[待機中] システムデータベース {db} に届きません（{elapsed} 秒経過、{deadline} 秒で打ち切ります。{detail}）"
DBOS_UNREACHABLE = (
    "システムデータベース {db} に {deadline} 秒つながりませんでした（{detail}）。ワークフロー {task_id} は"
    "記録済みのステップのまま残っています。\n"
    "データベースが戻ったら: {command}（待つ秒数は HARNESS_DATABASE_DEADLINE_S で変えられます）"
)
DBOS_BACK = "システムデータベースが戻りました。このワークフローはここでは続けられないので、続きは: {command}"
DBOS_UNREACHABLE_AT_START = (
    "システムデータベース {db} に {deadline} 秒つながりませんでした（{detail}）。何も始めていません。\n"
    "データベースが戻ったら: {command}（待つ秒数は HARNESS_DATABASE_DEADLINE_S で変えられます）"
)
DBOS_NOT_DEQUEUED = (
    "DBOS が {deadline} 秒たってもワークフロー {task_id} をキューから取り出しません（状態 ENQUEUED のまま）。"
    "時計が戻された、DBOS のスレッドが動けない、などが考えられます。\n"
    "ワークフローはそのまま残っています。原因を確かめてから: {command}"
)
DBOS_API_FAILED_HINT = (
    "ワークフロー {task_id} は記録済みのステップのまま残っています（失敗としては記録していません）。"
    "原因が解消したら、このモデル呼び出しからやり直せます: {command}"
)
DBOS_RESPONSE_NOT_STORABLE = (
    "UTF-8 で書けない文字（対になっていないサロゲート）を含みます。応答のどの部分も記録していません"
)
DBOS_DB_NOT_PLAIN = (
    "作業フォルダの {name} は普通のファイルではありません（{kind}）。システムデータベースとして開かず、何も書いていません。\n"
    "それが何かを確かめて取り除いてから、--resume なしで最初から実行してください。"
)
DBOS_DB_KINDS = {"link": "シンボリックリンク", "hardlink": "ほかの場所と共有されたファイル（ハードリンク）",
                 "folder": "フォルダ", "other": "FIFO などの特殊なファイル"}  # fmt: skip
DBOS_DB_DAMAGED = (
    "システムデータベース {db} は壊れています（{detail}）。ワークフローの記録を読めないので、再開できません。\n"
    "--resume なしで最初からやり直してください（そのとき {db} は片付けられます。この実行では何も消していません）。"
)
DBOS_DB_LOST = (
    "システムデータベース {db} が実行中に使えなくなりました（{detail}）。記録を書けないので、ここで止めました。\n"
    "{db} を確かめてください。置き換えられたり壊れたりしていれば --resume では続けられないので、"
    "--resume なしで最初からやり直してください。"
)
DBOS_DB_LOST_SHARED = (
    "システムデータベース {db} が実行中に使えなくなりました（{detail}）。記録を書けないので、ここで止めました。\n"
    "{db} を確かめてください。直ったら: {command}"
)
DBOS_DB_REPLACED = "実行中に置き換えられたか、消されました"
DBOS_DB_FINAL_WRITE = "ワークフローの終わりを {seconds:g} 秒待っても記録できません"
DBOS_URL_IN_WORKDIR = (
    "システムデータベース {db} は作業フォルダ {path} の中のファイルです。作業フォルダのファイルはハーネスが管理します。\n"
    "作業フォルダの外のファイルを指定するか、--database-url を付けずに実行してください（作業フォルダの dbos.sqlite を使います）。"
)
DBOS_FEW_FILES = (
    "開けるファイルの数の上限（ulimit -n）が {limit} です。--engine dbos はデータベースの接続とスレッドのために"
    "少なくとも {needed} 必要です。\nulimit -n {needed} 以上にしてから実行してください（何も始めていません）。"
)

# The browser edition (Pyodide): no child processes, one interpreter (harness/lab/process.py).
BROWSER_IN_KERNEL = (
    "（ブラウザ版: ここでは子プロセスを起動できないので、python -m harness と同じ cli() をこのカーネルの中で"
    "走らせます。キルはレッスンの疑似キル（終了コード 137）で、本物の SIGKILL ではありません）"
)
BROWSER_ONE_AT_A_TIME = (
    "（ブラウザ版: プロセスを2つ同時には動かせないので、このプロセスはいまカーネルの中で最後まで走り終えてから、"
    "次の行へ進みます。同時に動く2つのプロセスとロックは、ローカル版で確かめてください）"
)
NO_PLOTS = "（ブラウザ版には matplotlib が入っていないので、図の代わりに同じ数を表で示します。図はローカル版で見られます）"
NO_TIMELINE = "（ブラウザ版には matplotlib が入っていないので、タイムラインの図は出ません。出来事の順はログで見られます）"

# ---------------------------------------------------------------------------------------------------------------------
# The exercise judges (harness/exercises): messages added by the judges-3 work. Kept together at the end of the file.
JUDGE_WRONG_NOT_EVERY_TIME = (
    "{what}: 誤った順序なのに、{name} が始まったとき台帳に {tid} がありませんでした。run_tool_uses_prod は落ちる回だけでなく"
    "毎回、ツールを実行する前に台帳へ書きます（落ちる回だけ手で書くと、バグではなく症状を作ったことになります）"
)
JUDGE_FIXED_RECORDED_FIRST = (
    "{what}: 修正した順序なのに、{name} が始まったとき台帳にもう {tid} がありました。修正した順序では、ツールが走る前に"
    "記録はできないはずです"
)
JUDGE_PLACEHOLDER_NOTE = (
    "💡 誤った順序のプレースホルダが {value} でした。run_tool_uses_prod は None を書きますが、ツールが走る前に書かれた"
    "値はどれもプレースホルダなので、再現としては同じです"
)
JUDGE_FALSE_CLAIM = (
    "{what}: スクリプトは「{line}」と出力しましたが、そのときの effects.json には {tid} が{truth}。"
    "完了基準「スクリプトによる検証」: 観測するのは effects.json です（checkpoint.json の pendingToolUse ではありません）"
)
JUDGE_CLAIM_PRESENT = "ありました"
JUDGE_CLAIM_ABSENT = "ありませんでした"
JUDGE_EXPLANATION_WHAT = "説明文（帰結の説明）"
JUDGE_EXPLANATION_WRONG = (
    "説明文（帰結の説明）: 「{said}」と読めますが、ディスクでは再開の reconcile はプレースホルダのレコードに台帳ヒットし、"
    "write_report を一度も実行せずに完了扱いにしました。見直す: reconcile が最初に調べるのは台帳（レッスン「reconcile」）"
)
JUDGE_EXPLANATION_BOTH = (
    "「{hit}」と「{miss}」の両方に読めます。再開したとき台帳ヒットして実行しないのか、再実行するのか、"
    "どちらか一方に書き直してください"
)
JUDGE_CELL_ENDLESS = (
    "答えのセルが {seconds:g} 秒以内に終わりませんでした（無限ループ？）。セルには関数の定義だけを書き、"
    "関数の外で何かを待ったり回したりしないでください"
)
JUDGE_TAMPERED = (
    "答えのセルが、チェックが頼りにしているもの（{names}）を書き換えました。これではチェックを信頼できないので、"
    "不合格にします。ハーネスのモジュールや関数、組み込み関数を置き換えず、run_tool_uses_fixed だけを定義してください"
)
JUDGE_REACHES = (
    "答えのセルが、チェックの仕組みに手を伸ばすもの（{names}）を使っています。修正版 run_tool_uses には要らないもので、"
    "これがあるとチェックを信頼できません。その行を消して、run_tool_uses_fixed だけを定義してください"
)
JUDGE_CHECK_ENDED = (
    "あなたのコードがチェックのプロセスを止めました（{signal}）。os.kill や os.killpg でほかのプロセスを止めず、"
    "関数の中ではツールの実行と台帳の記録だけをしてから、もう一度実行してください"
)
JUDGE_SCRIPT_ENDED_CHECK = (
    "スクリプトがチェックのプロセス（スクリプトの親）を止めました（{signal}）。疑似クラッシュは自分のプロセスだけを"
    "終わらせます（SimulatedCrash で 137、または自分に SIGKILL）。親や他のプロセスには触れずに、もう一度実行してください"
)
JUDGE_OUTSIDE_DELETED = (
    "チェックのあいだに、作業フォルダの外のファイルが消えました（{count} 件: {first}）。ハーネスは自分が作っていないものを"
    "消しません。あなたのコードが消したのなら、それは演習の外への副作用です。作業フォルダ（run.workdir）の外には触れないでください"
)
JUDGE_OUTSIDE_WRITTEN = (
    "（チェックのあいだに、作業フォルダの外のファイルが書かれました（{count} 件: {first}）。エディタで保存したのでなければ、"
    "あなたのコードが書いたものです。作業フォルダ（run.workdir）の外には書かないでください）"
)
