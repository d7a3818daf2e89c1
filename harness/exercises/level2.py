"""Level 2 (台帳を逆順に書いてしまった順序の誤り): the production bug, the learner's diagnosis, fix and reproduction script.

Every check prints 未完了 or ✗ with what is wrong and never raises. Called without arguments, a check reads the
notebook's own variable (diagnosis, run_tool_uses_fixed), so a deleted answer cell is 未回答, not a NameError.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import texts
from ..crash import crash_on
from ..lab import NOT_EN, NOT_JA
from ..lab.process import IN_BROWSER
from ..ledger import load_effects, save_effect
from ..tools import execute_tool
from ..vocab import EFFECTS_FILE
from . import HIT, Verdict, crash_then_look, internal_error, resume_and_look, scratch_dir
from .answers import (
    BRANCH_WORDS,
    FROM_NOTEBOOK,
    MISSING,
    Question,
    branch_question,
    from_notebook,
    key,
    read_null,
    show,
    take_sheet,
    unwrap,
)
from .fixcheck import TITLE as FIX_TITLE
from .fixcheck import check_fix
from .jail import SCRIPT_TIME_LIMIT_S, TIME_LIMIT_S
from .repro import TITLE as REPRO_TITLE
from .repro import check_repro, show_repro_runs

DIAGNOSIS_TITLE = texts.LEVEL2_DIAGNOSIS_TITLE


def run_tool_uses_prod(run, content):
    """本番で動いていた版: ツールを実行する前に台帳へ書いている。"""
    tool_use_blocks = [b for b in content if b["type"] == "tool_use"]
    results = []
    for block in tool_use_blocks:
        save_effect(run.effects_path, block["id"], {"name": block["name"], "result": None, "at": run.clock()})
        output = execute_tool(run, block)
        results.append({"type": "tool_result", "tool_use_id": block["id"], "content": output})
    return results


def crash_before_write_report(workdir: Path, run_tool_uses) -> dict:
    """Run the loop with run_tool_uses, dying as write_report starts; then resume with the lesson's reconcile."""
    seen: dict = {}

    def note_ledger(event) -> None:
        if event.kind == "tool_start" and event.data["name"] == "write_report":
            seen["ledger_when_tool_started"] = load_effects(workdir / EFFECTS_FILE)

    listeners = [note_ledger, crash_on("tool_start", "write_report")]
    crashed = crash_then_look(workdir, None, listeners=listeners, run_tool_uses=run_tool_uses)
    return {**crashed, **resume_and_look(workdir, run_tool_uses=run_tool_uses), **seen}


DIAGNOSIS_KEYS = {
    "first_call": 0,
    "recorded_result": 0,
    "branch_after_crash": 0,
    "report_exists": 0,
    "tool_ran": 0,
}


def check_level2_diagnosis(
    diagnosis: object = FROM_NOTEBOOK, *, explanation: object = FROM_NOTEBOOK, show_answers: bool = False
) -> Verdict:
    """(a)(b) the structured diagnosis of run_tool_uses_prod, compared with what it really does when it crashes, and
    the free-text explanation read for the consequence it states (完了基準「帰結の説明」).

    Called without arguments, it reads `diagnosis` and `explanation` from the notebook. show_answers=True also
    prints the answers.
    """
    diagnosis = from_notebook(diagnosis, "diagnosis")
    explanation = from_notebook(explanation, "explanation")
    try:
        verdict = _diagnosis(diagnosis, show_answers)
        read_explanation(verdict, explanation)
        return verdict
    except Exception as err:  # noqa: BLE001
        return internal_error(DIAGNOSIS_TITLE, err)


def _diagnosis(diagnosis: object, show_answers: bool) -> Verdict:
    verdict = Verdict(DIAGNOSIS_TITLE, show_answers, "check_level2_diagnosis(show_answers=True)")
    given = take_sheet(verdict, diagnosis, "diagnosis", DIAGNOSIS_KEYS)
    with scratch_dir() as tmp:
        seen = crash_before_write_report(Path(tmp), run_tool_uses_prod)
    before = seen.get("ledger_when_tool_started", {})
    recorded = "toolu_03" in before
    runs_after = seen["runs_after"]
    ran = any(r.startswith("write_report") for r in runs_after)
    first = Question(
        texts.LEVEL2_WHAT["first_call"],
        "word",
        {"save_effect": "'save_effect'", "execute_tool": "'execute_tool'"},
        {
            "saveEffect": "save_effect",
            "toolImpls": "execute_tool",
            "tool_impls": "execute_tool",
            "toolImpls[block.name](block.input)": "execute_tool",
            "toolImpls[block.name]": "execute_tool",
        },
        prefix=True,
    )
    verdict.grade(
        first,
        given.get("first_call", MISSING),
        "save_effect" if recorded else "execute_tool",
        texts.LEVEL2_HINTS["first_call_recorded" if recorded else "first_call_not_recorded"],
    )
    result, note = unwrap(given.get("recorded_result", MISSING), "recorded_result")
    if note:
        verdict.notes.append(note)
    if isinstance(result, dict) and "result" in result:
        verdict.notes.append(texts.LEVEL2_WHOLE_RECORD_NOTE.format(record=show(result, 60)))
        result = result["result"]
    if (
        isinstance(result, str)
        and read_null(result) is not None
        and ("プレースホルダ" in result or "placeholder" in key(result))
    ):
        verdict.fail(texts.LEVEL2_PLACEHOLDER_IN_WORDS.format(answer=repr(result)))
    else:
        verdict.grade(
            Question(texts.LEVEL2_WHAT["recorded_result"], "value"),
            result,
            before.get("toolu_03", {}).get("result"),
            texts.LEVEL2_HINTS["recorded_result"],
        )
    verdict.grade(
        branch_question(texts.LEVEL2_WHAT["branch_after_crash"]),
        given.get("branch_after_crash", MISSING),
        BRANCH_WORDS[seen["branch"]],
        texts.LEVEL2_HINTS["branch_after_crash_recorded" if recorded else "branch_after_crash_not_recorded"],
    )
    verdict.grade(
        Question(texts.LEVEL2_WHAT["report_exists"], "bool"),
        given.get("report_exists", MISSING),
        seen["report_after"],
        texts.LEVEL2_HINTS["report_exists"].format(final=seen["final"]),
    )
    verdict.grade(
        Question(texts.LEVEL2_WHAT["tool_ran"], "bool"),
        given.get("tool_ran", MISSING),
        ran,
        texts.LEVEL2_HINTS["tool_ran"],
    )
    return verdict


# What a sentence says happens on --resume. HIT: the placeholder is hit and the tool never runs (what the disk shows);
# MISS: a ledger miss, a re-run, a duplicate, an is_error result. A word negated right after it (Japanese) or before it
# (English), within its own stretch up to the next such word, says the other. A misconception stated and then denied
# ("…と思うかもしれませんが、そうはなりません") is not read. Sentences about the fixed order are not read.
HIT_WORDS = re.compile(
    r"ヒット|ひっと|\bhits?\b(?![.\[(_])|完了(?:扱|あつか)い|実行済み|済み扱い|記録済み|再利用|スキップ|reuse\w*|"
    r"treated\s+as\s+(?:done|complete\w*|finished|executed)",
    re.IGNORECASE,
)
HIT_ALWAYS = re.compile(  # these carry their own negation: never flipped
    r"一度も|一回も|[1１]回も|いちども|走っていない|走ってない|走らない|実行されていない|実行されてない|実行されない|"
    r"実行しない|"
    r"呼ばない|呼ばれない|呼ばれず|実行されず|走らず|走らせ(?:ず|ない)|実行せず|実行させ(?:ず|ない)|呼び出さ(?:ず|ない)|"
    r"動かさ(?:ず|ない)|本物と思い込|本物とみな|"
    r"(?:never\s+(?:ran|run|runs|executed|written|called)|(?:is|was)(?:n't|\s+not)\s+(?:run|executed|called)|"
    r"does(?:n't|\s+not)\s+(?:run|execute|call)\b(?:\s+(?:it|write_report|the\s+tool))?)(?:\s+again\b)?|"
    r"skipp\w*|skips?\b|飛ばされ",
    re.IGNORECASE,
)
MISS_ALWAYS = re.compile(  # a miss stated with its own negation: never flipped
    r"見つからない|見つけられない|見つけられず|見つからず|cannot\s+find|can't\s+find|doesn't\s+find|"
    r"does\s+not\s+find|not\s+found|"
    # the resume stopping with an error (it does not: it ends as done), in its positive forms only
    r"エラーで(?:止ま|終わ)(?:る|り|って|った)|エラーになって止ま|再開(?:は|が)失敗(?:する|し)|resume\s+fails|"
    r"(?:stops|fails|ends)\s+with\s+an?\s+error",
    re.IGNORECASE,
)
MISS_WORDS = re.compile(
    r"ミス|\bmiss(?:es|ed)?\b|再実[行効]|実行し直|もう一度|もう[1１]回|再び|re-?runs?|re-?execut\w*|二重|[2２二]\s*回|"
    r"\btwice\b|duplicat\w*|重複|\bagain\b|is_error|is\s+error",
    re.IGNORECASE,
)
JA_CLAUSE_END = re.compile(r"[。、，,.!?！？\n→]|ので|から|けど|けれど|ため|のに")
JA_NOT = re.compile(
    rf"{NOT_JA}|(?<!み)なし|なら(?:ず|ない)|では|じゃ|どころか"
)  # not 「みなして」; 「…どころか」
EN_NOT = re.compile(
    rf"{NOT_EN}|\b(?:no|nothing|nobody|without|instead\s+of|rather\s+than|skip(?:s|ped|ping)?|avoids?)\b",
    re.IGNORECASE,
)
ABOUT_FIX = re.compile(
    r"修正|正しい順序|直した|直す|直し方|レッスンの順序|\bfix|correct\s+order|lesson'?s\s+order|"
    r"(?:もし|仮に)[^。]*?(?:順序|順番|実行が先|記録が後)[^。]*?(?:なら|れば|たら)|"
    r"\bif\s+the\s+order\s+(?:were|was|is|had\s+been)\b",
    re.IGNORECASE,
)
# A counterfactual ("もし記録が無ければ…返していたはずだ", "if there were no record, it would …", 「本来なら…べきです」)
# says what does not happen.
COUNTERFACTUAL = re.compile(
    r"(?:もし|仮に)[^。]*?(?:はず|だろう|でしょう)|本来(?:なら|は|であれば)|べき(?:です|だ|でした|である)?[。.]?\s*$|"
    r"\bshould\s+have\b|\bwas\s+supposed\s+to\b|\bif\b[^.]*\b(?:were|had)\b[^.]*\bwould\b|\bwould\s+have\s+\w+ed\b|"
    r"\bwith\s+(?:the\s+)?(?:fix\w*|correct\s+order|right\s+order|execute-then-record)\b",
    re.IGNORECASE,
)
# A story the disk contradicts besides a miss: the resume does not reconcile at all (there is a pending call).
NO_RECONCILE_STORY = re.compile(
    r"NO_RECONCILE|pendingToolUse\s*(?:が|は|も)\s*null\s*(?:に?な|です|だ|で)|pendingToolUse\s+(?:is|becomes|was)\s+null|"
    r"地点B(?:が|は|も)(?:すでに|もう)?保存され(?:てい|た)|"
    r"pendingToolUse\s*(?:が|は)\s*(?:見えず|見えない|見つからず|空に)|"
    r"reconcile\s*(?:は|が|も)?\s*(?:素通り|呼ばれ(?:ない|ず)|走ら(?:ない|ず)|何もしな|何もせず|スキップされ|飛ばされ)|"
    r"reconcile\s+(?:is\s+|gets\s+)?(?:skipped|bypassed|never\s+(?:runs|called)|not\s+(?:run|called))",
    re.IGNORECASE,
)
# 「…ないわけではない」「…しないということはなく」: a negation denied again says the word after all.
DENIED_AGAIN = re.compile(r"^\s*(?:という|って)?(?:こと|わけ)(?:は|では|でも|が)?(?:ない|なく|ありません)")
DENIED_TWICE = re.compile(
    r"(?:ない|なく|ず|ません)(?:という|って)?(?:こと|わけ)(?:は|では|でも|が)?(?:ない|なく|ありません)"
)
# The crash placed after write_report finished (then report.txt is there): not the lesson's moment.
AFTER_THE_TOOL = re.compile(
    r"(?:ツール結果|ツールの結果|tool_result)\s*(?:が|を)\s*messages\s*に\s*(?:入|追加|push|積)|"
    r"(?:ツール|write_report)(?:の実行)?が(?:終わ|完了し|済ん)[^。、]{0,6}(?:後|あと|ところ)|"
    r"after\s+(?:the\s+tool|write_report)\s+(?:ran|finished|returned|completed|has\s+run|had\s+run)",
    re.IGNORECASE,
)
CRASH_WORDS = re.compile(r"クラッシュ|落ち|落と|死|キル|crash|kill|dies|died", re.IGNORECASE)
# What places a statement at the resume: the consequence 完了基準 asks for is what --resume does.
RESUME_CONTEXT = re.compile(
    r"再開|resume|reconcile|再起動|復帰|restart|ヒット|\bhits?\b|再利用|reuse|\bagain\b|再実行|もう一度",
    re.IGNORECASE,
)
# A sentence going on about the fix just described ("こうすれば…", "With this fix …") is about the fix too.
STILL_THE_FIX = re.compile(
    r"^\s*(?:こうすれば|そうすれば|こうすると|そうすると|これなら|これで|そうなら|"
    r"with\s+(?:this|that|the)\s+(?:fix|change|order)|this\s+way|that\s+way)",
    re.IGNORECASE,
)
# A misconception in one sentence ("最初は…と思いました。") denied by the next ("でも違います。").
THOUGHT = re.compile(r"と思|と考え|思って|\b(?:thought|assumed|expected|guessed)\b", re.IGNORECASE)
DENIED_NEXT = re.compile(
    r"^\s*(?:でも|しかし|ですが|だが|けれど|ところが|実際には|実際は)?[、,]?\s*(?:それは|そう|実際は)?\s*"
    r"(?:違います|違う|違いました|ちがいます|そうではありません|そうではない|そうはなりません|間違いです|誤りです)"
    r"|^\s*(?:でも|しかし|ところが|だが)[、,]?\s*(?:(?:それ|これ|そう)は[^。]*?(?:の話|場合|とき)(?:だった|です|でした|だ)|"
    r"(?:実際|本当|現実)は)"  # 「でもそれは台帳が空のときの話だった」
    r"|^\s*(?:but\s+)?(?:that|this|it)(?:'s|\s+is|\s+was)\s+(?:wrong|not\s+(?:true|right|the\s+case|what\s+happens))",
    re.IGNORECASE,
)
DENIED = re.compile(  # "you might think X, but it does not happen": X is the misconception, denied
    r"^[^。]*?(?:と思う|と考える|と思われる|と思いがち|と思った)[^。]*?(?:が|けど|けれど|ものの)[、,]?\s*"
    r"[^。、]{0,20}?(?:(?:そう|それ|これ|実際に?)は?)?(?:なりません|ならない|ではありません|ではない|違います|違う|しません|しない)[。.]?"
    r"|(?:you|one|we)\s+(?:might|may|could|would)\s+(?:think|expect|guess)\b[^.;]*?[,;]?\s*but\s+"
    r"(?:it|that|this)\s+(?:does(?:n't|\s+not)|is(?:n't|\s+not)|won't|will\s+not)(?:\s+happen)?[.,;]?",
    re.IGNORECASE,
)
# the notebook's placeholder line (「（なぜ…を、ここに書く）」), not an answer that starts with なぜ
TEMPLATE = re.compile(r"[（(]?(?:なぜ[^\n]{0,60}?)?ここに書く[）)]?")
WORDS = re.compile(
    f"{HIT_ALWAYS.pattern}|{MISS_ALWAYS.pattern}|{HIT_WORDS.pattern}|{MISS_WORDS.pattern}", re.IGNORECASE
)


# A claim that write_report really ran or that report.txt is there (the disk shows neither): a verb of running or of
# the report being there, in a clause about write_report or report.txt, with no negation after it in its clause and not
# framed as "before it ran", "treated as run", "if it had run", "as if".
RAN_JA = re.compile(
    r"実行され(?:て|た|る|ます|ました)|実行し(?:て|た|ます)|走っ(?:て|た)|走る|走り(?!終え)|書き出され|実行を終え|実行し終え|実行が終わっ|実行が完了し|走り終え"
)
REPORT_JA = re.compile(
    r"ある|あります|あった|できる|できます|できた|できて|できあが|出来上が|残って|残る|書かれ|書き出され|作られ|生成され|"
    r"作成され|存在す"
)
RAN_FRAMED_JA = re.compile(
    r"前|こと|もの|扱|とみな|と思|と記録|と報告|と表示|ふり|よう|はず|れば|たら|なら|べき|見え|どころか"
)
TOOL_JA = re.compile(r"write_report|ツール|レポート")
OTHER_SUBJECT_JA = re.compile(r"台帳|レコード|記録|ツール|write_report|reconcile|モデル|結果|呼び出し")
NOT_THE_TOOL_JA = re.compile(r"save_effect|台帳|記録|execute_tool")
RAN_EN = re.compile(
    r"\b(?:write_report|the\s+tool|report\.txt)\s+(?:\w+ly\s+|already\s+|then\s+|still\s+)?"
    r"(?:(?:is|was|gets|got|has\s+been|had\s+been|will\s+be|has|had)\s+(?:\w+ly\s+|already\s+)?"
    r"(?:executed|run|ran|called|written|created|produced|there)|runs|ran|executes|exists|appears)\b|"
    r"\b(?:runs|ran|executes|executed|calls|called|re-?runs)\s+(?:write_report|the\s+tool)\b|"
    r"\bend(?:s|ed)?\s+up\s+(?:in|creating|writing)\s+report\.txt|\b(?:creat|writ)(?:es|ed|ing)\s+report\.txt|"
    r"\bwrote\s+report\.txt|\breport\.txt\s+(?:ends?\s+up|gets?|got)\s+(?:being\s+)?(?:written|created)",
    re.IGNORECASE,
)
RAN_FRAMED_EN = re.compile(
    r"\b(?:before|until|if|though|whether|without|instead|never|not|no|nobody|nothing|as\s+if|treated|pretend\w*|"
    r"would|should)\b|n't",
    re.IGNORECASE,
)


PHRASE_END = r"[、。,;:\n]|\.(?=\s|$)"  # a full stop, not the dot of report.txt


# 「…、ということもない」: the clause before it is denied (dropped with it).
NEGATED_AFTER = re.compile(
    r"[^、,。]*[、,]\s*(?:という|って)?(?:こと|わけ)(?:も|は)?(?:ない|ありません|なかった)"
)


def ran_claim(sentence: str) -> str | None:
    """The clause of SENTENCE that states write_report ran or report.txt exists, if one does (a quoted log line or
    model's words, 「…」 or "…", is not a claim)."""
    sentence = re.sub(r"「[^」]*」|『[^』]*』|\"[^\"]*\"|“[^”]*”", " ", sentence)
    moment = AFTER_THE_TOOL.search(sentence)
    if (
        moment
        and CRASH_WORDS.search(sentence)
        and not JA_NOT.match(sentence[moment.end() :].lstrip("っただ"))
    ):
        return sentence[max(0, moment.start() - 20) : moment.end() + 10].strip()
    sentence = NEGATED_AFTER.sub("", sentence)
    # report.txt said to be there: the last verb of being there after it, up to another subject or the sentence's
    # end (「report.txt 自体は、空ファイルとして作られて残っている」), not negated within its clause
    at = sentence.find("report.txt")
    tail = OTHER_SUBJECT_JA.split(sentence[at + len("report.txt") :], maxsplit=1)[0] if at >= 0 else ""
    verb = ([None] + list(REPORT_JA.finditer(tail)))[-1]
    after = JA_CLAUSE_END.split(tail[verb.end() :], maxsplit=1)[0] if verb else ""
    if verb and not re.match(r"ず", after) and not JA_NOT.search(after) and not RAN_FRAMED_JA.search(after):
        return sentence[at : at + 60].strip()
    for clause in re.split(r"[、,;:]|が、|but\b|and\s+then\b", sentence):
        found = RAN_EN.search(clause)
        if found and not RAN_FRAMED_EN.search(clause[: found.start()] + clause[found.end() :]):
            return clause.strip()[:60]
        for found in RAN_JA.finditer(clause):
            after, before = clause[found.end() :], clause[: found.start()]
            about_the_tool = TOOL_JA.search(before) and not NOT_THE_TOOL_JA.search(before)
            if about_the_tool and not JA_NOT.search(after) and not RAN_FRAMED_JA.search(after):
                return clause.strip()[:60]
    return None


def en_negated(before: str) -> bool:
    """An English negation governs the word after it unless a new predicate starts in between ("a call that never
    happened is treated as completed": "never" is not about "treated")."""
    last = list(EN_NOT.finditer(before))
    if not last:
        return False
    between = before[last[-1].end() :]
    if re.fullmatch(
        r"nothing|nobody", last[-1].group(0), re.IGNORECASE
    ):  # "Nothing is re-executed", "runs again"
        return not re.search(r"\b(?:that|which|who|and|but)\b|[,;]", between)
    return not re.search(r"\b(?:is|are|was|were|gets|got|be|been)\b", between)


def stated(text: str):
    """The sentences of an explanation that state what happens to the bug's run: not those about the fix, a
    counterfactual, a thought denied by the next sentence, nor a misconception denied in its own sentence."""
    # a wrapped line goes on; a list item starts anew
    text = re.sub(r"\n(?!\s*(?:[-*・•＊※●■◆▶]|\d+[.)]|[①-⑩]|\n|$))", " ", text)
    # a sentence ends at 。, a line, a full stop (not the dot of report.txt), ?/! unless と quotes it (「…？と思った」)
    sentences = re.split(r"(?<=[。\n])|(?<=\.)(?=\s|$)|(?<=[!?！？])(?!\s*(?:と|って))", text)
    about_fix = False
    for i, sentence in enumerate(sentences):
        about_fix = bool(ABOUT_FIX.search(sentence) or (about_fix and STILL_THE_FIX.search(sentence)))
        following = next((s for s in sentences[i + 1 :] if s.strip()), "")
        if (
            about_fix
            or COUNTERFACTUAL.search(sentence)
            or re.search(
                r"[?？]\s*$", sentence
            )  # a question asks (「再実行するか？ しない。」): its answer follows
            or (THOUGHT.search(sentence) and DENIED_NEXT.search(following))
        ):
            continue
        sentence = THOUGHT_THEN.sub("", DENIED.sub("", REFUTED_QUOTE.sub(" ", sentence)))
        sentence = re.sub(
            r"(?<=分岐)\s*[（(][^）)]*[）)]", "", sentence
        )  # 「台帳ミスの分岐（…なら再実行…）」: what it is
        yield re.sub(r"かもしれ(?:ない|ません)", "かも", sentence)  # a hedge, not a negation


# 「「…再実行されるだけだ」——これは誤りです」: a quoted idea refuted in its own sentence is not stated.
REFUTED_QUOTE = re.compile(
    r"[「『\"“][^」』\"”]*[」』\"”](?=[^。]*?(?:誤り|間違い|違います|違う|外れ|\bwrong\b|\bnot\s+true\b|\bfalse\b))",
    re.IGNORECASE,
)
# 「最初は…と思ったが、」"I first thought …, but": what was thought before the correction is not stated.
THOUGHT_THEN = re.compile(
    r"^[^。]*?(?:と|って)(?:思|考え)(?:った|っていた|ていた|ました|ていました)(?:が|けど|けれど|ものの)[、,]?|"
    r"^[^.]*?\b(?:thought|assumed|expected)\b[^.]*?,?\s*but\b",
    re.IGNORECASE,
)
# What else the disk contradicts, stated beside a right hit: (pattern, what the disk showed).
FALSE_CLAIMS = (
    (re.compile(r"クラッシュ(?:が|は)?(?:あってもなくても|しなくても|なしでも|がなくても)|落ちなくても|"
                r"\b(?:even\s+)?without\s+(?:a\s+)?crash|\bcrash\s+or\s+(?:no\s+crash|not)\b|"
                r"常に(?:完了扱い|スキップ)|毎回(?:完了扱い|スキップ)|\balways\s+(?:skipped|treated)", re.IGNORECASE),
     texts.LEVEL2_FALSE_CLAIM_FACTS["without_crash"]),
    (re.compile(r"空(?:の|っぽの)\s*(?:report\.txt|ファイル|レポート)|report\.txt[^。\n]{0,30}?空(?:に|の|っぽ|で|のまま)|"
                r"\bempty\s+(?:report\.txt|file|report)|report\.txt[^.\n]{0,60}?\bempty\b|\bthere\s+but\s+empty",
                re.IGNORECASE),
     texts.LEVEL2_FALSE_CLAIM_FACTS["empty_report"]),
    (re.compile(r"(?:正しい内容|レポート本文|本物の(?:実行)?(?:結果|レポート|出力|中身)|実際の(?:実行)?(?:結果|レポート))(?:を|が)"
                r"[^。、]{0,32}(?:返|渡|届)|"
                r"\b(?:real|actual|correct)\s+(?:report\s+)?(?:text|content|result|output)\b[^.]{0,30}"
                r"\b(?:returned|passed|handed|given|reaches)|"
                r"\b(?:returns|passes|hands|gives)\b[^.]{0,30}\b(?:real|actual|correct)\s+(?:report|text|content)",
                re.IGNORECASE),
     texts.LEVEL2_FALSE_CLAIM_FACTS["real_result"]),
    (re.compile(r"(?:失敗|エラー)(?:として|と)(?:受け取|扱|報告|判断|みな)|(?:最後|締めくくり|最終)の(?:メッセージ|返事|応答|報告)"
                r"[^。]{0,40}?(?:エラー|失敗)|失敗(?:を|したと)報告|"
                r"\b(?:treats?|takes?|reads?|sees?|reports?)\s+(?:it\s+)?as\s+(?:a\s+)?(?:failure|failed|error)|"
                r"\breports?\s+(?:a\s+)?failure|\bfinal\s+(?:message|reply|answer)[^.]{0,40}?\b(?:error|failure|failed)",
                re.IGNORECASE),
     texts.LEVEL2_FALSE_CLAIM_FACTS["read_as_failure"]),
)  # fmt: skip


CLAIM_DENIED_EN = re.compile(r"\b(?:not|never|no|without|if|would)\b|n't", re.IGNORECASE)


def false_claim(text: str) -> tuple[str, str] | None:
    """(the phrase, what the disk showed) for a statement FALSE_CLAIMS knows, not negated in its clause."""
    for sentence in stated(text):
        for pattern, fact in FALSE_CLAIMS:
            found = pattern.search(sentence)
            if not found:
                continue
            rest = JA_CLAUSE_END.split(sentence[found.end() :], maxsplit=1)[0]
            clause = re.split(r"[,;]", sentence[: found.start()])[-1] + found.group(0)
            if JA_NOT.match(rest.lstrip("さしすせ")) or CLAIM_DENIED_EN.search(clause):
                continue
            return sentence[max(0, found.start() - 20) : found.end() + 10].strip(), fact
    return None


def consequence(text: str) -> tuple[str | None, str | None, str | None]:
    """(a HIT phrase, a MISS phrase, a RAN phrase) the text states about the crashed prod run's --resume."""
    hit = miss = ran = None
    for sentence in stated(text):
        story = NO_RECONCILE_STORY.search(sentence)
        if story and not JA_NOT.search(JA_CLAUSE_END.split(sentence[story.end() :], maxsplit=1)[0]):
            miss = miss or sentence.strip()[:60]
        ran = ran or ran_claim(sentence)
        found_all = list(WORDS.finditer(sentence))
        for i, found in enumerate(found_all):
            word = found.group(0)
            # A negation belongs to the nearest word: after it up to the next word, before it back to the last one.
            stop = found_all[i + 1].start() if i + 1 < len(found_all) else len(sentence)
            after = JA_CLAUSE_END.split(sentence[found.end() : stop], maxsplit=1)[0]
            back = found_all[i - 1].end() if i else 0
            before = re.split(r"[,;:、。]", sentence[max(back, found.start() - 30) : found.start()])[-1]
            fixed = bool(HIT_ALWAYS.fullmatch(word) or MISS_ALWAYS.fullmatch(word))
            if HIT_ALWAYS.fullmatch(word) and (before.endswith("まだ") or re.match(r"\s*yet\b", after)):
                continue  # "not yet run": the moment of the crash, not what the resume does
            if re.match(r"\s*(?:を|に|が)?(?:さ|し)?(?:れる|する|せる|す)?べき", after) or re.search(
                r"\bshould\s+(?:have\s+)?(?:be(?:en)?\s+)?$", before
            ):
                continue  # 「再実行されるべきなのに」"should be re-run": what ought to happen, not what does
            clause_rest = re.split(PHRASE_END, sentence[found.end() :], maxsplit=1)[0]
            if re.match(r"\s*(?:の|な)?(?:とき|時|場合)|\s*の分岐", after) or re.search(
                r"(?:とき|時|場合)の分岐", clause_rest
            ):
                continue  # 「is_error は台帳ミスのときの分岐」「台帳ミスの分岐に入るのは」: what a branch is
            if re.fullmatch(r"\s*(?:に|で|と)?も\s*", after) and i + 1 < len(
                found_all
            ):  # 「AにもBにもならない」
                following = found_all[i + 2].start() if i + 2 < len(found_all) else len(sentence)
                after = JA_CLAUSE_END.split(sentence[found_all[i + 1].end() : following], maxsplit=1)[0]
            between = sentence[found_all[i - 1].end() : found.start()] if i else "-"
            skipped = not between.strip() and re.fullmatch(
                r"skip\w*|avoids?", found_all[i - 1].group(0), re.IGNORECASE
            )
            negated = not fixed and bool(JA_NOT.search(after) or en_negated(before) or skipped)
            if (fixed and DENIED_AGAIN.match(after)) or (not fixed and DENIED_TWICE.search(after)):
                negated = fixed  # 「走らないわけではなく」: runs; 「ヒットしないということはなく」: hits
            says_hit = bool(HIT_ALWAYS.fullmatch(word) or HIT_WORDS.fullmatch(word)) != negated
            start = max((m.end() for m in re.finditer(PHRASE_END, sentence[: found.start()])), default=0)
            end = re.search(PHRASE_END + "|$", sentence[found.end() :]).start() + found.end()
            phrase = sentence[start:end].strip()[:60]
            if says_hit:
                hit = hit or phrase
            else:
                miss = miss or phrase
    if not RESUME_CONTEXT.search(
        text
    ):  # the cause alone ("まだ実行されていないのに完了のレコード") is not the consequence
        hit = None
    return hit, miss, ran


EXPLANATION_LIMIT = (
    3000  # characters: the consequence takes a few sentences; the reader stays quick on any text
)


def read_explanation(verdict: Verdict, explanation: object) -> None:
    """完了基準「帰結の説明」, an item of its own: the text must state the consequence on --resume (ledger hit, result
    reused, not re-run, a call that never ran treated as completed). Empty or the template is 未回答; saying the
    opposite is ✗ with what the disk shows; saying both, or a hit and also that write_report ran or report.txt is there,
    or neither, is asked (never accepted)."""
    what = texts.JUDGE_EXPLANATION_WHAT
    if isinstance(explanation, str):
        explanation = TEMPLATE.sub("", explanation)  # the placeholder left above an answer is not part of it
    if not isinstance(explanation, str) or not explanation.strip():
        verdict.unanswered(what, texts.JUDGE_EXPLANATION_EMPTY)
        return
    if len(explanation) > EXPLANATION_LIMIT:
        verdict.unanswered(
            what, texts.JUDGE_EXPLANATION_LONG.format(n=len(explanation), limit=EXPLANATION_LIMIT)
        )
        return
    hit, miss, ran = consequence(explanation)
    if miss and hit:
        verdict.unanswered(what, texts.JUDGE_EXPLANATION_BOTH.format(hit=hit, miss=miss))
    elif ran and hit:
        verdict.unanswered(what, texts.JUDGE_EXPLANATION_HIT_AND_RAN.format(hit=hit, ran=ran))
    elif miss or ran:
        verdict.fail(texts.JUDGE_EXPLANATION_WRONG.format(said=miss or ran))
    elif hit and false_claim(explanation):
        said, fact = false_claim(explanation)
        verdict.unanswered(what, texts.JUDGE_EXPLANATION_CLAIM.format(hit=hit, said=said, fact=fact))
    elif hit:
        verdict.ok(texts.LEVEL2_EXPLANATION_OK.format(what=what, hit=hit))
    else:
        verdict.unanswered(what, texts.JUDGE_EXPLANATION_VAGUE)


def check_level2_fix(
    run_tool_uses: object = FROM_NOTEBOOK,
    *,
    time_limit: float = TIME_LIMIT_S,
    show_answers: bool = False,
) -> Verdict:
    """(c) the learner's fixed run_tool_uses, run through every path of the lesson's rule (fixcheck.py).

    Called without arguments, it reads `run_tool_uses_fixed` from the notebook. Each run of the function is stopped
    after time_limit seconds. show_answers=True also shows the lesson's run_tool_uses after a ✗.
    """
    if IN_BROWSER:
        return needs_processes(FIX_TITLE)
    run_tool_uses = from_notebook(run_tool_uses, "run_tool_uses_fixed")
    return check_fix(run_tool_uses, time_limit, show_answers)


def check_level2_repro(
    script: object = "level2_repro.py", *, time_limit: float = SCRIPT_TIME_LIMIT_S, show_answers: bool = False
) -> Verdict:
    """(d) the learner's reproduction script, run as real processes in a scratch copy (repro.py)."""
    if IN_BROWSER:
        return needs_processes(REPRO_TITLE)
    return check_repro(script, time_limit, show_answers)


def show_repro(
    script: object = "level2_repro.py", workdir: str = "_work", *, time_limit: float = SCRIPT_TIME_LIMIT_S
):
    """Run the reproduction script for both orders with REPRO_CRASH=3, then --resume both folders, like a terminal."""
    if IN_BROWSER:
        print(texts.BROWSER_NEEDS_PROCESSES)
        return
    show_repro_runs(script, workdir, time_limit)


def needs_processes(title: str) -> Verdict:
    """The browser edition (Pyodide) has no processes: a check that runs some says so, unanswered, instead of
    failing as if something were wrong."""
    verdict = Verdict(title)
    verdict.unanswered(texts.LEVEL2_THIS_CHECK, texts.BROWSER_NEEDS_PROCESSES)
    return verdict


__all__ = [
    "HIT",
    "check_level2_diagnosis",
    "check_level2_fix",
    "check_level2_repro",
    "run_tool_uses_prod",
    "show_repro",
]
