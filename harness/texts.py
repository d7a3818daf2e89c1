"""Every learner-facing string in one place, in the lesson's words: the message catalogue, no logic (the formatter
that fills the log lines is harness/transcript.py). An English edition would be a second catalogue."""

from __future__ import annotations

TASK = "sales-notes.txt を短いレポートにまとめて report.txt に書き出してください。"

SAMPLE_NOTES = """営業メモ 2026年11月
- A社: 見積もりを再提出した。来週水曜に返事をもらう。
- B社: 新製品のデモに好反応。導入は来期に検討する。
- C社: 価格に懸念あり。値引きではなく保守期間の延長を提案する。
"""

DONE_OK = "report.txt にレポートを書き出しました。タスク完了。"
OUTPUTS_GONE = (
    "注意: {files} はいまありません（台帳には write_report の記録があります）。"
    "作り直すには --resume なしで最初から実行してください。"
)
DONE_UNKNOWN = "{name} の実行状態が不明です。report.txt を確認してください。"
SCRIPT_EXHAUSTED = (
    "スクリプト化されたモデルのレスポンスは {first}〜{last} の{count}つだけです（{n}個目を要求されました）"
)
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

# What each crash moment is (vocab.CRASH_MOMENTS), and the exercise's words for ①②③.
CRASH_MOMENT_WORDS = {
    "after-save-a": "① 地点A保存直後（ツール未実行）",
    "after-tool-run": "② ツール完了・台帳未記録",
    "after-effect-write": "台帳記録済み・地点B未保存（レッスンのデモ）",
    "after-save-b": "③ 地点B保存直後",
    "checkpoint-torn-write": "checkpoint.json.tmp を半分だけ書いたところ",
    "checkpoint-before-rename": "checkpoint.json.tmp を書き終え、rename する直前",
    "effects-torn-write": "effects.json.tmp を半分だけ書いたところ",
    "effects-before-rename": "effects.json.tmp を書き終え、rename する直前",
}
MOMENT_MARK_WORDS = {"①": "地点A保存直後、ツール未実行", "②": "ツール完了、台帳未記録", "③": "地点B保存直後"}

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
CHECKPOINT_OTHER_VERSION = (
    "{path} の version={version} です。このプログラムは version=1 しか受け付けないため、読み込みを拒否します。\n"
    + START_OVER
)
# What is wrong with a file or a response: the detail inside a loader's refusal (harness/store.py).
SHAPE_PROBLEMS = {
    "not_a_json_number": "JSON ではない数値 {name}",
    "key_twice": "同じキーが2回あります",
    "not_an_object": "JSON オブジェクトではありません",
    "not_object": "{where} がオブジェクトではありません",
    "not_a_name": "{where} が英数字・_・- の文字列ではありません",
    "not_content": "{where} が文字列でも配列でもありません",
    "no_type": "{where} に type がありません",
    "wrong_role": "{where} の {type} は {role} のメッセージには置けません",
    "not_json_safe": (
        "{where} JSON や UTF-8 にできない値（NaN、範囲外の数、対になっていないサロゲートなど）か深すぎる入れ子があります"
    ),
    "must_be": "{where} は {shape} でなければなりません",
    "pending_or_null": "null か {id, name, input}",
    "version_not_integer": "version が整数ではありません",
    "keys_missing": "キー {keys} がありません",
    "keys_unknown": "未知のキー {keys} があります",
    "task_not_text": "task が文字列ではありません",
    "counts": "turns と tokensUsed は 0 以上の整数（10 の 100 乗未満）でなければなりません",
    "no_messages": "messages が空でない配列ではありません",
    "no_role": "messages[{i}] に role (user/assistant) がありません",
    "empty_content": "messages[{i}].content が空です（API は空のメッセージを受け付けません。空でよいのは最後のモデルの言葉だけです）",
    "use_twice": "messages に同じ tool_use id {id} が2回あります",
    "pending_after_assistant": "pendingToolUse があるのに messages の最後が user のメッセージではありません",
    "id_used": "{where} の id {id} はこの会話ですでに使われています",
    "ledger_key": "キーが tool_use_id の形（英数字・_・-）ではありません",
    "record_incomplete": "{key} のレコードに name, result, at がそろっていません",
    "record_name": "{key} の name が文字列ではありません",
    "record_at": "{key} の at が 0 以上の数（時刻）ではありません",
    "ledger_newer": "台帳にはこのチェックポイントが知らない呼び出し {ids} の記録があります（チェックポイントが台帳より古い）",
    "record_other_tool": "台帳の {id} は {name} の記録で、宙ぶらりんな呼び出し {pending} のものではありません",
    "response_not_object": "応答が JSON オブジェクトではありません",
    "content_not_list": "{where} が配列ではありません",
    "text_not_text": "{where}.text が文字列ではありません",
    "stop_not_text": "stop_reason が文字列ではありません",
    "usage": "usage の input_tokens と output_tokens が 0 以上の整数ではありません",
    "too_many_uses": "tool_use が {count} 個あります（宙ぶらりんな呼び出しとして記録できるのは {most} 個まで）",
    "no_tool_use": "stop_reason が tool_use なのに tool_use ブロックがありません",
    "same_id": "同じ tool_use id が2回あります",
    "response_id_used": "tool_use id {id} はこの会話ですでに使われています",
    "unreadable_back": "JSON として読み戻せません",
    "pending_not_list": "pendingToolUses が配列ではありません",
    "too_many_pending": "pendingToolUses に {count} 個の呼び出しがあります（1ターンに記録できるのは {most} 個まで）",
    "pending_twice": "pendingToolUses に同じ id が2度あります",
}
PAIRING_BROKEN = "tool_use と tool_result の対が崩れていて、API はこの会話を受け付けません: {detail}"
PAIRING_FAULTS = {
    "first": "messages[0] が user のメッセージではありません",
    "unanswered": "messages[{i}] の tool_use {ids} に、次のメッセージの tool_result が答えていません",
    "stray": "messages[{i}] の tool_result {ids} には、直前の assistant のメッセージに対の tool_use がありません",
    "not_first": "messages[{i}] の tool_result がメッセージの先頭にありません",
    "twice": "messages[{i}] に同じ tool_use {ids} への tool_result が2つあります",
    "order": "messages[{i}] の tool_result が tool_use と同じ順に並んでいません（tool_use / tool_result: {ids}）",
}
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
LISTENER_FAILED = "[警告] イベントの出力先に書けなくなったので、以後は書きません（{kind}）"
SIMULATED_KILL = "{label} で疑似キル"
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
USAGE = """使い方: python -m harness [--resume] [--workdir DIR] [--real] [--parallel] [--idempotent]
                          [--engine dbos [--database-url URL]]
  --resume        checkpoint.json から再開する（reconcile してから続ける）
  --real          本物の Messages API を使う（ANTHROPIC_API_KEY が必要。モデルは ANTHROPIC_MODEL で変えられる）
  --workdir DIR   作業フォルダ（既定: {workdir}）
  --parallel      レッスンの先へ: 1ターンに複数のツール（チェックポイント version 2、notebook 11）
  --idempotent    レッスンの先へ: 冪等キーで問い合わせられる write_report（reconcile の第4の分岐、notebook 12）
  --engine dbos   レッスンの先へ: 同じタスクを DBOS のワークフローとして走らせる（--resume は DBOS が回復する、notebook 13）
  --database-url URL  DBOS のシステムデータベース（既定: 作業フォルダの dbos.sqlite。環境変数 HARNESS_DATABASE_URL も可。
                      HARNESS_TASK_ID でタスク、HARNESS_EXECUTOR_ID でワーカーの名前、HARNESS_DATABASE_DEADLINE_S で
                      データベースを待つ秒数（既定 60）を指定できる）
環境変数: CRASH_AFTER=LABEL:N（LABEL は {labels}）
          CRASH_MODE=sigkill（疑似キルではなく本物の SIGKILL で落ちる）
          HARNESS_SLOW_MS=N（1ステップごとに N ミリ秒止まる。授業で落とす瞬間を見せるため）
          HARNESS_EVENTS_FILE=PATH（イベントを1行1 JSON で追記する。Crash Lab が使う）
          HARNESS_API_DEADLINE_S=S（--real: モデル呼び出し1回を、再試行も含めて S 秒で打ち切る。既定: {deadline}。
                                   待っている間は 10 秒ごとに stderr へ [待機中] の1行を出す）"""
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
# A response the loop refuses before point A: true whether or not an earlier turn saved a checkpoint.
NOTHING_SAVED_FOR_THIS_RESPONSE = (
    "地点Aは保存せず、チェックポイントは書き換えていません。"
    "原因を確かめてから --resume してください（checkpoint.json がまだなければ --resume なしで最初から）。"
)
MULTIPLE_TOOL_USES = (
    "モデルが1ターンに {count} 個の tool_use を返しました。このハーネスは宙ぶらりんな呼び出しを1つしか扱えません。\n"
    + NOTHING_SAVED_FOR_THIS_RESPONSE
)
WORKDIR_BUSY = (
    "作業フォルダ {path} は別のプロセスが使用中です（python -m harness か notebook の実行）。\n"
    "そのプロセスが終わるのを待つか、止めてから実行してください。"
)
BAD_ARGUMENT = "引数 {arg} を読めません。\n{usage}"
EMPTY_WORKDIR = "--workdir が空です。作業フォルダの名前を指定してください（既定: harness-work）。"
UNPRINTABLE_WORKDIR = (
    "--workdir {shown} には改行などの制御文字があります。メッセージやコマンドで別の名前と取り違えるので使えません。"
    "別の名前を指定するか、フォルダの名前を変えてください。"
)
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
INTERRUPTED_AT_START = "[中断] Ctrl-C で止めました。まだ始める前だったので、ファイルには何も書いていません。同じコマンドをもう一度実行してください。"
DBOS_INTERRUPTED = "[中断] Ctrl-C で止めました。ワークフローの記録はデータベースに残っています。--engine dbos --resume で続きから再開できます。"
DBOS_INTERRUPTED_BEFORE_START = (
    "[中断] Ctrl-C で止めました。ワークフローはまだ始まっていません。{command} で最初から実行してください。"
)
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


# ---- Beyond the lesson: the pending set (--parallel) and idempotent tools (--idempotent) -------------------------
# (harness/beyond/parallel.py, harness/beyond/idempotent.py, harness/beyond/scenarios.py; notebooks 11 and 12)

PARALLEL_TASK = "sales-notes.txt を読んで文字数も数え、report.txt にレポートを、summary.txt に1行の要約を書き出してください。"
PARALLEL_DONE_OK = "report.txt と summary.txt を書き出しました。タスク完了。"
PARALLEL_DONE_UNKNOWN = "write_report の実行状態が不明です。{files} を確認してください。"
CHECKPOINT_VERSION_2 = (
    "{path} の version={version} です。このプログラムは version=1 と version=2 しか受け付けないため、"
    "読み込みを拒否します。\n" + START_OVER
)
# Which mode a task was started in (mode.json, harness/beyond/modes.py): --resume never drops one.
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
    + NOTHING_SAVED_FOR_THIS_RESPONSE
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
# --engine dbos (beyond the lesson: the same task as a DBOS durable workflow). Used by harness/beyond/engine_dbos.py only.
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
    "dbos_gone_here": (
        "[dbos] {name} はこのプロセスでは実行していません（記録を再利用）。{path} はいまありません"
        "（この作業フォルダに書いたあとで消えています）"
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
    "not_a_file": "SQLite のファイルの場所に、通常のファイルではないもの（フォルダ、デバイス、FIFO など）があります",
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
    "別のタスクの続きなら HARNESS_TASK_ID でその ID を指定してください。最初から始めるなら: {command}"
)
DBOS_WORKFLOW_IN_FOLDER = (
    "ワークフロー {task_id} はシステムデータベース {db} にありません。この作業フォルダの dbos.sqlite にあるのは"
    "ワークフロー {ids} です。\nその続きなら: {command}"
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

# ---- The prediction cells (harness.lab.check_prediction) ----------------------------------------------------------
PREDICTION_RIGHT = "✓ {what}: 予想どおり {actual!r}{where}"
PREDICTION_BLANK = "… {what}: 未記入です。予想を書いてから、もう一度このセルを実行してください。\n   実際は {actual!r}{where}"
PREDICTION_WRONG = (
    "✗ {what}: 予想は {prediction!r}、実際は {actual!r}{where}。なぜ違ったのかを考えてみてください。"
)
PREDICTION_TOO_LONG = (
    "… {what}: 予想が {n:,} 文字あります。値を1つ、{limit:,} 文字以内で書いてから、もう一度このセルを実行してください。"
    "\n   実際は {actual!r}"
)
PREDICTION_HEDGED = (
    "△ {what}: 予想 {prediction!r} は言い切っていません（「たぶん」「？」などつき）。実際は {actual!r}{where}。"
    "次の予想は一つに決めて書いてみてください。"
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
# the browser edition's real kill: this interpreter dies (SIGKILL), the page restarts the kernel and the lab
LAB_BROWSER_KILL_HOW = "本物のキル（Python ごと SIGKILL）"
LAB_BROWSER_DYING = "Python のインタープリタを SIGKILL します。ページがカーネルを再起動し、このラボを開き直すまで待ってください"
LAB_BROWSER_KILLED = (
    "Python のインタープリタは {where} で SIGKILL され、終わりました（終了コード 137）。ページがカーネルを再起動し、"
    "新しいインタープリタでこのラボを開き直しました。作業フォルダはキルのときのままです。再開を押してください"
)
LAB_BROWSER_KILLED_TRANSCRIPT = (
    "[kill] {where} でインタープリタごと SIGKILL。カーネルを再起動し、作業フォルダから続けます"
)
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
BROWSER_IN_MEMORY = (
    "（ブラウザ版: 実験の作業フォルダ _work/… は、速さのためにメモリの中に作ります。ブラウザの保存領域 /drive は"
    "1回の読み書きに数ミリ秒かかるからです。カーネルを再起動すると消えます）"
)
BROWSER_READ_ONLY = (
    "**ブラウザ版では、この notebook は実行できません。** DBOS はスレッドを使い、ブラウザの Python（Pyodide）は"
    "スレッドを始められないからです（`can't start new thread`）。下の出力は、ローカル版で実行したときのものです。"
    "自分で走らせるには、ノートPCで `bash scripts/lab.sh` を実行し、この notebook（`notebooks/13_dbos.ipynb`）を開いてください。"
)
BROWSER_NEEDS_PROCESSES = (
    "ブラウザ版では確かめられません。この確認は答えを別のプロセスで走らせて落としますが、ブラウザの Python（Pyodide）は"
    "プロセスを起動できないからです。ノートPCで bash scripts/lab.sh を実行し、この notebook を開いて確かめてください"
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
JUDGE_LEDGER_FAILED_IS_ERROR = (
    "💡 台帳の書き込みが失敗したとき、実際に実行された write_report を is_error の tool_result で返しました。"
    "完了基準の外なので合否には数えませんが、副作用はもう起きているので、モデルは失敗と受け取って新しい呼び出しで"
    "繰り返すかもしれません。レッスンの runToolUses は本物の結果を返し、アラートを上げるだけにします"
)
JUDGE_LEDGER_FAILED_OTHER = (
    "💡 台帳の書き込みが失敗したときに返した tool_result がレッスン版と違います。完了基準の外なので合否には数えませんが、"
    "副作用はもう起きているので、レッスンの runToolUses は本物の結果を返し、アラートを上げるだけにします"
)
JUDGE_LEDGER_FAILED_SILENT = (
    "💡 台帳の書き込みが失敗したとき、何も知らせずに続けました。完了基準の外なので合否には数えませんが、台帳に記録のない"
    '副作用は、再開で重複しうるものとして残ります。レッスンの runToolUses は run.emit("ledger_write_failed", ...) で'
    "アラートを上げ、人間が対処できるようにします"
)
JUDGE_READS_AS_MANY = "{given} は {both} の{n}通りに読めます。どれか1つに決めて書いてください"
JUDGE_EXPLANATION_WHAT = "説明文（帰結の説明）"
JUDGE_EXPLANATION_WRONG = (
    "説明文（帰結の説明）: 「{said}」と読めますが、ディスクでは再開の reconcile はプレースホルダのレコードに台帳ヒットし、"
    "write_report を一度も実行せずに完了扱いにしました。見直す: reconcile が最初に調べるのは台帳（レッスン「reconcile」）"
)
JUDGE_EXPLANATION_EMPTY = (
    "まだ書かれていません。--resume したとき reconcile はプレースホルダのレコードをどう判定し、write_report はどうなるかを"
    "書いてください（完了基準「帰結の説明」）"
)
JUDGE_EXPLANATION_VAGUE = (
    "再開したときに何が起きるかが書かれていません。--resume したとき reconcile はプレースホルダのレコードをどう判定し"
    "（台帳ヒットかミスか）、write_report は実行されるのかを書いてください（完了基準「帰結の説明」）"
)
JUDGE_EXPLANATION_BOTH = (
    "「{hit}」と「{miss}」の両方に読めます。再開したとき台帳ヒットして実行しないのか、再実行するのか、"
    "どちらか一方に書き直してください"
)
JUDGE_EXPLANATION_HIT_AND_RAN = (
    "「{hit}」と書いたあとで「{ran}」とも読めます。ディスクでは write_report は一度も実行されず、report.txt は"
    "ありませんでした。台帳ヒットのあと write_report は実行されるのか、どちらが起きるのかを書き直してください"
)
JUDGE_EXPLANATION_LONG = (
    "説明文が {n:,} 文字あります。帰結（再開したとき何が起きるか）を {limit:,} 文字以内で書いてください"
)
JUDGE_EXPLANATION_CLAIM = (
    "「{hit}」は合っていますが、「{said}」とも読めます。ディスクでは: {fact}。そこを書き直してください"
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
