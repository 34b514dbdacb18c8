"""The extraction agent's heuristic path: clean turns in, memory candidates out. No LLM, no DB.

`extract(turns, scope=...)` reads what the user said for preferences, rules, corrections,
decisions with their reasons, project facts and explicit requests to remember; what the
assistant said only for experiences (what broke and what fixed it), gotchas and hard project
facts (ports, commands that pass, where things live); and failed tool calls followed by their
fix. Every candidate says which rule fired (`why`), for `--dry-run` and for tuning.

Writing candidates to the store (surprise, dedup, supersession, chunking) is `memory.ingest`.
Rules live in `memory.extraction_rules`; entities and relations in `memory.entities`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import PurePath
from typing import Any

from memory.extraction import rules as R
from memory.lang import emotion, entities, mentions, privacy, zhnames
from memory.lang.text import has_cjk, is_stopword
from memory.store.chunks import weight

TOOL_WINDOW = 15  # turns after a failed tool call in which its fix is looked for


@dataclass
class Candidate:
    """A memory the extractor proposes; `ingest` decides whether and how it is stored."""

    content: str
    layer: str = "fact"
    category: str = "note"
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None
    importance: int = 3
    confidence: float = 0.8
    valence: float = 0.0
    intensity: float = 0.0
    moods: list[str] = field(default_factory=list)
    entities: list[tuple[str, str]] = field(default_factory=list)
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    why: str = ""
    scope: str = ""
    session_id: str | None = None
    source_ref: str | None = None
    occurred_at: str | None = None
    role: str = "user"
    metadata: dict = field(default_factory=dict)
    felt: bool = True  # False: not someone's words in the moment (a commit message): stored with no mood

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def flashbulb(self) -> bool:
        return bool(self.metadata.get("flashbulb"))


def extract(
    turns: Iterable[dict],
    *,
    scope: str,
    session_id: str | None = None,
    known: dict[str, list[str]] | None = None,
    project: str | None = None,
    context: Sequence[dict] = (),
) -> list[Candidate]:
    """Memory candidates from clean turns (memory.transcript), in conversation order.

    `known` maps configured entity names to aliases; `project` names the project in relations
    such as "we use X" (default: the last part of `scope`). `context`: the turns before these
    (an earlier harvest's), read for the options and proposals they hold; nothing from them is
    returned.
    """
    skip = len(context)
    turns = list(context) + list(turns)
    project = project or project_of(scope)
    out: list[Candidate] = []
    own: list[str] = []  # what the user proposed in their last turn, for the agreement after the assistant's
    own_turn = -1  # the turn it was proposed in
    pushed: tuple[list[str], list[str], list[Candidate], int] | None = None  # own proposal, the push back, what
    # it withdrew, and the turn the proposal was made in
    vague: Candidate | None = None  # the user's last choice that named nothing, for the plan that follows
    why_pending = False  # the user asked why something happens: the next answer is an experience
    how_pending = False  # the user asked how the project does something: the next answer is a fact
    secret_pending = False  # the user handed over a secret: the answer may say where it lives
    asked_opinion = False  # the user asked what the assistant would do: its answer is a proposal
    user_spoke_since: list[int] = []  # turn indexes of user turns that produced candidates
    context: list[Candidate] = []  # what the user's last turn stated, the reason for a choice that follows
    asked = ""  # the user's last turn asked whether or which to choose: what a choice that follows is about
    just_decided: Candidate | None = None  # the decision of the user's last message, the assistant silent since
    noted = False  # or since then the assistant only took note of it ("Textract it is.")
    last_decided: Candidate | None = None  # the decision of the user's last message, whatever the assistant said since
    proposal: list[str] = []  # what the assistant last proposed ("I'd suggest X"), for an agreement
    said: list[str] = []  # the assistant's recent sentences: where a bare choice ("go with manifest") is explained
    last_said: list[str] = []  # the assistant's last message, for the user's "yes, that's the convention"
    listed: list[str] = []  # the items of the assistant's last numbered list, for a pick by place ("第二种")
    listed_for = 0  # user turns the list is still open for: a pick answers the list just laid out
    heading = ""  # what the list decides, when its opening line says so
    offered = ""  # the change the assistant last asked whether to make ("should we move X onto spot?")
    answering = False  # the assistant's last message ended on a question to the user
    asked_why = False  # … why the user chose what they just chose ("Is there a reason I should put in the PR?")
    asked_if_meant = False  # … whether a change it found was meant ("… is now `15 4 * * *`. Is that intentional?")
    asked_still: tuple[str, str] | None = None  # … whether a value it had noted still holds: the note, the value
    last_asked: list[str] = []  # the questions of the assistant's last message
    for i, turn in enumerate(turns):
        kind, role = turn.get("kind"), turn.get("role")
        if kind != "text":
            continue
        text = turn.get("text") or ""
        before = len(out)
        if role == "user":
            text = _self_corrected(text)
            if pushed is not None and not R.CONCEDES.match(R.strip_fillers(text) or text) and _INSISTS.search(text):
                # "no, let's do it anyway, we need persistence": the proposal pushed back on stands, for that reason
                held = pushed[2] or [_stamped(_held_own(pushed[0]), turns[pushed[3]], pushed[3], scope, session_id)]
                out.extend(held)
                before, pushed = len(out), None
                if len(R.sentences(text)) == 1:
                    _add_reason(held[0], _INSISTS_LEAD.sub("", text, count=1) or text)
                    continue
            if (
                just_decided is not None
                and just_decided.metadata.get("turn", 0) >= skip
                and _reason_alone(
                    text,
                    # (once the assistant has taken note, a reason names the pick or an option passed over)
                    _options_named(just_decided) if noted else just_decided.content + " " + " ".join(said[-8:]),
                )
            ):
                # "2 吧" then, in the user's next message, "Redis 挂了会重复扣款，放 Postgres 里更稳。": its reason
                _add_reason(just_decided, text)
                just_decided = None
                continue
            guessed = _THATS_WHY.match(text) if last_asked else None
            if guessed:
                # "was Layout over gs about the proof previews?" -> "yep that's why. customers need to see …": the
                # first paragraph is the reason of the choice the question names
                target = next(
                    (
                        c
                        for c in reversed(out)
                        if c.layer == "decision"
                        and c.metadata.get("chosen")
                        and any(_loose(c.metadata["chosen"]) in _loose(q) for q in last_asked)
                    ),
                    None,
                )
                reason, _, rest = text[guessed.end() :].strip().partition("\n\n")
                if target is not None and R._long_enough(reason):
                    _add_reason(_reopened(target, i, skip, out), reason)
                    text = rest
                    if not text.strip():
                        continue
            if last_decided is not None and (_REASON_LEAD.match(text) or asked_why):
                # (or the assistant asked why: "Will do. Is there a reason I should put in the PR description?")
                # "For the record, the reason: …", the message after a pick: its first sentence is that
                # decision's reason; what follows ("Also, scratch what I said about …") is read as usual
                first, *rest = R.sentences(_REASON_LEAD.sub("", text, count=1)) or [""]
                while rest and _ABOUT_OPTION.match(rest[0]):  # "…。3 的话 Kafka 引擎读不了事务消息。": that one's case
                    first = R.joined([first, rest.pop(0)])
                _add_reason(_reopened(last_decided, i, skip, out), first)
                last_decided = None
                text = " ".join(rest)
                if not text:
                    continue
            target = None
            for sentence in R.sentences(text):
                # "补充一下为什么选 (a)：审计要求 short-lived token": the reason of the pick it names, said later;
                # and what the next sentence says of another option ("A 其实也考虑过，但 3T 的单库迟早要拆")
                about_other = target is not None and (_AGAINST_OPTION.match(sentence) or _ABOUT_OPTION.match(sentence))
                target = target if about_other else _reason_of(sentence, out)
                if target is not None:
                    target = _reopened(target, i, skip, out)
                    _add_reason(target, sentence)
                    text = text.replace(sentence, " ")
            confirmed = _CONFIRMS_THAT.match(text) if last_said else None
            if confirmed:
                # "Migrations here are in `db/migrations/`, named …" -> "yep, that's the convention, and …": what
                # the assistant read off the code, confirmed, is the fact; the rest of the message is read as usual
                stated = _confirmed(last_said)
                if stated is not None:  # (in place of the assistant's own telling of it, if it was kept)
                    out = [
                        c
                        for c in out
                        if not (c.role == "assistant" and _loose(stated.content)[:40] in _loose(c.content))
                    ]
                    before = min(before, len(out))
                    out.append(stated)
                text = R.strip_fillers(text[confirmed.end() :]) or ""
            meant = _confirmed_change(last_said, text) if asked_if_meant else None
            if meant is not None:
                # (in place of the assistant's own telling of what it found, if that was kept)
                # (told after a lead of its own: "One mismatch: my notes say …", "Side note: …")
                out = [
                    c
                    for c in out
                    if not (c.role == "assistant" and _loose(_LEAD.sub("", c.content))[:40] in _loose(meant[0].content))
                ]
                before = min(before, len(out))
                out.append(_stamped(meant[0], turn, i, scope, session_id))
                text = meant[1]
            still = _answered_still(asked_still, text) if asked_still and meant is None else None
            if still is not None:  # "Is it still 72 hours?" -> "no, 48 now. ops wanted …"
                out.append(_stamped(still[0], turn, i, scope, session_id))
                text = still[1]
            told_before, last_said = last_said, []
            # a pasted runbook or design doc is kept whole, as one memory the store cuts into parts for search;
            # what the user said around it ("here's our runbook, walk me through step 4") is read as usual
            text, document = _split_pasted(text)
            if document:  # "We'll go with option B from this doc": its headings name the options a pick names
                said = (said + [h.group(1) for h in map(_HEADING.match, document.split("\n")) if h])[-40:]
            lines = _document_lines(text)  # a short pasted list or table: its headings and rows, as sentences
            # (a log or trace pasted in a code block makes a message long, not a document)
            pasted = lines != text or len(R.without_code(text)) >= PASTED_CHARS
            # "we dropped Sentry. Errors now go to Loki": one change
            text = _RETIRED_ALONE.sub(lambda m: m.group(1) + "; " if m.group(1) else m.group(2) + "；", lines)
            # a pick by its letter or place ("go with (a)", "option 3", "第二种") answers the last list laid out,
            # however many turns later (a held-out trial: "talked to tomek, go with (a)" three exchanges on)
            # (a pasted document picks nothing: "If it is already above, find out why first.")
            still_open = (listed_for > 0 or bool(_NAMES_ITEM.search(text))) and not pasted
            found = _from_user(text, turn, proposal, said, listed if still_open else [], heading)
            folded: list[Candidate] = []  # rules that took a "that way" after them: the way is theirs
            for k, c in reversed(list(enumerate(found))):
                prev = found[k - 1] if k else None
                if prev is not None and prev.category in ("rule", "convention") and _THIS_WAY.search(c.content):
                    # "overdue emails never include the title … from now on every notice template works that
                    # way": the way is the rule just said, not what the assistant last showed
                    prev.content = R.joined([prev.content, c.content])
                    folded.append(prev)
                    del found[k]
                elif not any(c is x for x in folded):
                    _spell_out_this_way(c, told_before)
            # "nah, not now. <why>" to "should we …?", and "changed my mind on spot — <what now>": decisions
            # in words no choice rule reads; each replaces what the rules made of its sentences
            answer = _not_taken(offered, text) or _reversal(text)
            if answer is not None:
                # (what was turned down was agreed to by no one: "KMP 先不搞" read as an agreement is dropped)
                declined = answer.why == "decision (declined)"
                found = [
                    c
                    for c in found
                    if _loose(c.content)[:30] not in _loose(answer.content) and not (declined and c.layer == "decision")
                ] + [answer]
            offered = ""
            for c in found if pasted else ():
                c.metadata["pasted"] = (
                    True  # a document's line: it closes what it says is replaced, not what it resembles
                )
            if R.SIGN_OFF.search(text) and not R.is_choice(text):  # "ok thanks, that's all for today": no agreement
                found = [c for c in found if c.layer != "decision"]
            if pushed is not None and R.CONCEDES.match(R.strip_fillers(text) or text):
                # "I think we should switch X to Y" -> "I'd hold off: …" -> "ok fair": X stays, over Y, for those reasons
                first = (R.sentences(text) or [text])[0].split("。")[0]
                said_first = _loose(R.CONCESSION_LEAD.sub("", first))[:30]
                found = [c for c in found if c.layer != "decision" and said_first not in _loose(c.content)]
                found.append(_declined_own(pushed[0], pushed[1], first))
                # what the proposal's turn said beside it ("data platform 那边有人在推，说 Pulsar …更好") was its
                # case, dropped with it
                out = [
                    c
                    for c in out
                    if not (c.metadata.get("turn") == pushed[3] and c.role == "user" and c.category == "statement")
                ]
                before = min(before, len(out))
            pushed = None
            settles = next((c for c in found if c.layer == "decision" and c.metadata.get("proposal")), None)
            if (
                settles is not None
                and last_decided is not None
                and last_decided.why == "decision (agreed)"
                and not last_decided.metadata.get("chosen")
                and _loose(last_decided.metadata.get("decision", ""))[:40] in _loose(settles.metadata["proposal"])
            ):
                # "What if we cache … in Redis?" -> "Good idea. …" -> "yep, do it": one decision, the user's yes
                out = [c for c in out if c is not last_decided]
                before = min(before, len(out))
            just_decided, noted = next((c for c in found if c.layer == "decision"), None), False
            listed_for = 0 if just_decided is not None else listed_for - 1  # (a list is settled once)
            last_decided = just_decided
            agreed = " ".join(c.metadata.get("proposal") or "" for c in found if c.layer == "decision").casefold()
            if agreed:
                # the proposal the user agreed to is now their decision, not the assistant's experience
                out = [
                    c for c in out if c.role != "assistant" or c.content.casefold().rstrip(" .。")[:80] not in agreed
                ]
                before = len(out)
            settled = next((c for c in found if c.layer == "decision" and c.metadata.get("proposal")), None)
            # (a statement, not a fact with an address: "Flink UI 在 http://…:8081" is kept on its own)
            context = [
                c
                for c in context
                if c.category == "statement"
                and any(c is o for o in out)
                and not _ADDRESS.search(c.content)
                and "port" not in R.value_kinds(c.content)  # ("appt-service 本地起在 8082，…")
                and not _REASON_FOR.search(c.content)  # "补充一下为什么选 (a)：…" explains another pick
                and not R.says_changed(c.content)  # "ReconcileJob 时间改了，挪到…": news of its own, no reason
                and not R.renames(c.content)  # "号源表上周 DBA 改名成 t_schedule_slot 了": likewise
                and not R.INCIDENT.search(c.content)  # "another night of jobs stuck …": what happened, no reason
                and not c.metadata.get("pasted")  # a pasted runbook's lines are the document's, not a reason
                and not c.metadata.get("listed")  # nor the facts of a list handed over ("For the record: …; …")
                # (nor how the system works, named in code: "booking-api publishes booking.created.v1 on …")
                and not _DOTTED_NAME.search(c.content)
            ]
            if settled is not None and asked and not _subject_terms(asked) <= _subject_terms(settled.content):
                # "Booking pitched their push notifications, should we switch?" -> … -> "We stay on pull.":
                # the question says what the choice is about
                settled.content = asked + " " + settled.content
                settled.metadata["question"] = asked
            if settled is not None and asked:
                _pick_among_asked(settled, asked)
            said_now = R.sentences(text)
            at = next(
                (
                    k
                    for k in range(len(said_now) - 1, -1, -1)
                    if R.is_question(said_now[k]) and _ASKS_DECISION.search(said_now[k])
                ),
                None,
            )
            asked = "" if at is None else said_now[at]
            if asked and at and len(re.sub(r"[\W_]", "", _ASKS_DECISION.sub("", asked))) <= 4:
                # "回调那里也别同步结算了吧，太慢了。有什么方案？": the question names nothing, the sentence before it does
                asked = R.strip_fillers(said_now[at - 1]) + " " + asked
            # (what the task must do, "需求：候选阿姨按…打分，…不能派单", is the task, not why an option was picked)
            tasks = [c for c in context if _TASK.search(c.content)]
            context = [c for c in context if not (_REQUIREMENTS.search(c.content) or _TASK.search(c.content))]
            if settled is not None and tasks and not settled.metadata.get("question"):
                # "dealer-gateway 要加 per-dealer rate limit" → options → "A": the task says what the choice is
                # about, as a question would; it is no reason for it
                out = [c for c in out if not any(c is x for x in tasks)]
                before = len(out)
                settled.content = tasks[-1].content + " " + settled.content
                settled.metadata["question"] = tasks[-1].content
            if settled is not None and context:
                # "现在 limiter 是 in-memory 的 dict，我们线上 6 个 replica" → a proposal → "Redis 吧": what the user
                # said before the proposal is why they chose; it leads the decision instead of standing alone
                out = [c for c in out if not any(c is x for x in context)]
                before = len(out)
                # (what the question before the proposal already brought along is not said twice)
                why = " ".join(c.content for c in context if _loose(c.content) not in _loose(settled.content))
                settled.content = (why + " " + settled.content).strip()
                settled.metadata["rationale"] = " ".join(filter(None, [why, settled.metadata.get("rationale")]))
            # (what answered the assistant's question, "Nacos 历史看了，上次改是 9 月" to "Nacos 里最近有没有改过？", is
            # no reason for a choice after it)
            context = [] if answering else [c for c in found if c.layer != "decision"]
            out.extend(found)
            if document:
                out.append(Candidate(document, layer="fact", category="document", importance=3, why="pasted document"))
            proposal = []
            # "我倾向于下线 Redis limiter，…，你觉得呢": the user's own proposal, settled once agreed to
            own = [x for x in R.sentences(text) if R.PROPOSAL.search(x) or _OWN_PROPOSAL.search(x)][-2:]
            own_turn = i
            # "cap our side then": a choice that names nothing; the assistant's next words spell it out
            vague = next((c for c in found if c.layer == "decision" and not c.metadata.get("proposal")), None)
            why_pending = bool(
                (R.WHY_QUESTION.search(text) and R.PROJECT_QUESTION.search(text)) or R.reports_problem(text)
            ) and not _ASKS_OPTIONS.search(text)  # ("… keeps flagging low-res photos. what are our options?")
            secret_pending = "[REDACTED:" in privacy.redact(text)
            asked_opinion = bool(R.ASKS_OPINION.search(text))
            how_pending = not why_pending and any(
                R.is_question(x) and (R.HOW_QUESTION.search(x) or R.confirms(x)) for x in R.sentences(text)
            )
            if len(out) > before:
                user_spoke_since.append(i)
        elif role == "assistant":
            decided_text = _loose(just_decided.content) if just_decided is not None else ""
            user_decided = just_decided is not None
            if _acknowledges(text):
                # ("Textract it is. I'll use AnalyzeExpense for estimates." leaves the pick open for the reason
                # the user adds next: "fwiw legal already cleared Textract …")
                noted = True
            else:
                just_decided = None
            told = R.sentences(text)
            answering = bool(told) and R.is_question(told[-1])  # the user's next message answers it
            # ("是端口改了吗？要不要把 test 的默认地址改成 8090？": the question before the last one)
            asked_if_meant = any(R.is_question(x) and _ASKS_IF_MEANT.search(x) for x in told[-2:])
            asked_why = any(R.is_question(x) and _ASKS_WHY.search(x) for x in told[-2:])
            asked_still = _asked_still(told)
            last_asked = [x for x in told if R.is_question(x)]
            now = [x for x in told if not R.is_question(x)]
            said = (said + now)[-40:]
            last_said = now
            # what it found, said in the question's own sentence: "X 是 `a`，跟我记的 `b` 不一样，是改名了吗？"
            if asked_if_meant:
                # (what it found is what it said before asking, not what it means to do next: "…已经是 axum 了。我手上
                # 的记录还写着 actix-web，是已经迁移了吗？新 handler 我按 axum 的 … 写。")
                q = max(k for k, x in enumerate(told) if R.is_question(x) and _ASKS_IF_MEANT.search(x))
                last_said = [x for x in told[:q] if not R.is_question(x)]
                head = re.match(r"^(.+)[，,]\s*[^，,]+$", told[q])
                if head and R.SPECIFIC.search(head.group(1)) and not last_said:
                    last_said = [head.group(1) + "。"]
            fresh, heading_now = _numbered(text), ""
            if fresh:
                heading_now = _list_heading(text)
            else:
                fresh, heading_now = _inline_options(text)
            if fresh:
                listed, listed_for = fresh, 2  # the next user turn, or the one after a question about it
                heading = heading_now
            elif re.search(r"[(（][A-Da-d1-4][)）]\s*\S", text):
                # "(a) republish them, or (b) rebuild": new options, said inline; a later "(b)" is theirs
                listed, listed_for = [], 0
            # (not the advice about a credential pasted in the chat: "…已经出现在聊天记录里了，建议轮换一下")
            proposal = [x for x in now if R.PROPOSAL.search(x) and not _lead_in(x) and not R.is_status(x)][-2:]
            offered = _offered(text)
            if not proposal and any(R.PROPOSAL.search(x) and not R.is_status(x) for x in now):  # "Options:" and a list
                proposal = [x for x in now if not _lead_in(x)][-4:]
            # (a plan said beside what the turn decided, "the reason we're not doing X is …. I think we should
            # pack it into a bigint": the agreement settles the plan)
            apart = own and not any(_loose(x)[:30] in decided_text for x in own)
            settled_own = (
                _agreed_own(own, now) if own and now and (apart or not user_decided) and R.agrees(now[0]) else None
            )
            if settled_own is not None:
                # "I think we should switch X to Y instead of Z" -> "Agreed. …": the user's proposal, settled;
                # what their turn stored from those sentences is in the decision now
                said_own = _loose(" ".join(own))
                out = [
                    c
                    for c in out
                    if not (
                        c.metadata.get("turn") == own_turn
                        and c.role == "user"
                        and _loose(c.content).rstrip("。.") in said_own
                    )
                ]
                before = len(out)
                settled_own.source_ref = turns[own_turn].get("uuid")  # (said in the user's message, agreed to here)
                out.append(settled_own)
                last_decided = settled_own
            if settled_own is not None and not settled_own.metadata.get("chosen"):
                proposal = own  # (a plan agreed to: a "yep, do it" that follows settles that plan, once)
            elif own and now and R.agrees(now[0]):
                # it agreed to what the user proposed: the user's "就这么办" settles that, not the details the
                # agreement adds ("Good idea. … I'd key entries as `catalog:v1:…`")
                proposal = own
            if not proposal and asked_opinion and now and not R.is_narration(now[0]):
                # "topic 怎么划分你怎么看？" -> "保持一表一 topic 比较好：…": asked for, the answer is the proposal
                proposal = now[:2]
            if not proposal:  # "Should we use Postgres or MySQL here?": the options, asked
                proposal = [x for x in R.sentences(text) if R.is_question(x) and _ASKS_WHICH.search(x)][-1:]
            if own and now and settled_own is None and R.pushes_back(now[0]):
                # the user's own proposal, pushed back on: no decision unless they insist; dropped, the old way stays
                withdrawn = [
                    c for c in out if c.metadata.get("turn") == own_turn and c.role == "user" and c.layer == "decision"
                ]
                out = [c for c in out if not any(c is w for w in withdrawn)]
                before, pushed, proposal = len(out), (own, now, withdrawn, own_turn), []
            own = []
            if vague is not None and now and _PLAN.match(now[0]):
                vague.content = vague.content.rstrip() + " (the plan: " + R.clip(now[0], 300) + ")"
                vague.metadata["proposal"] = now[0]
            vague = None
            after_error = _after_error(turns, i)
            # The first words after a failure explain it, trigger words or not ("`now()` is frozen
            # at the start of the transaction…"): read them as the answer to a why-question.
            found = _from_assistant(text, turn, why_pending or after_error, after_error)
            if settled_own is not None:  # its agreement is the decision's, not an experience of its own
                found = [c for c in found if not (c.layer == "experience" and _loose(now[0])[:40] in _loose(c.content))]
            if how_pending and not found:
                found = _how_answer(R.sentences(R.YES_FIRST.sub("", text, count=1)))
            if secret_pending:
                found += _where_secret_lives(R.sentences(text), found)
                secret_pending = False
            if found or R.has_content(text):
                why_pending = how_pending = False
            out.extend(found)
        for c in out[before:]:
            _stamped(c, turn, i, scope, session_id)
    out.extend(_tool_failures(turns, out, user_spoke_since, scope, session_id))
    out.extend(_project_commands(turns, out, scope, session_id))
    out.sort(key=lambda c: c.metadata.get("turn", 0))
    out = _lessons_with_their_cause(out)
    _name_what_it_is_about(out, turns)
    for c in out:
        finish(c, known, project)
    out = [c for c in map(_without_handed_secrets, out) if c is not None and not _stored_by_assistant(c, turns)]
    out = [c for c in out if not (c.role == "user" and _KEEP_IT_OUT.search(c.content))]
    return _dedup([c for c in out if c.metadata.get("turn", 0) >= skip])


# What a cause says its subject is without naming it: "the test mixes local time with UTC", "该测试…".
_VAGUE_SUBJECT = re.compile(
    r"\b(?:the|this|that) (?:test|tests|job|service|worker|build|pipeline|query|endpoint|migration|deploy|check)\b|"
    r"(?:这个|该|那个)(?:测试|用例|任务|服务|接口|查询|迁移|作业)",
    re.I,
)
# A name in code the user gave the task by: test_invoice_rollover, TestListEntries, billing-service, `app.worker`.
_TASK_NAME = re.compile(r"`([^`\s]{3,60})`|\b(test_\w+|Test[A-Z]\w+|[A-Za-z][\w.]*[-_][\w.-]*\w)\b")


def _name_what_it_is_about(out: list[Candidate], turns: list[dict]) -> None:
    """An assistant's cause or lesson that calls its subject "the test" or "the job" is named by the code names the
    user's last request gave it ("test_invoice_rollover keeps failing on CI" -> "Root cause: the test mixes …" stored
    as "test_invoice_rollover: Root cause: …"): stored alone, "the test" names nothing (a blind trial's prompt
    "test_invoice_rollover is failing again" brought back neither of its two causes)."""
    for c in out:
        if c.role != "assistant" or c.layer != "experience" or not _VAGUE_SUBJECT.search(c.content):
            continue
        at = c.metadata.get("turn", 0)
        asked = next(
            (
                t.get("text") or ""
                for t in reversed(turns[:at])
                if t.get("kind") == "text" and t.get("role") == "user" and (t.get("text") or "").strip()
            ),
            "",
        )
        names = []
        for m in _TASK_NAME.finditer(asked):
            name = (m.group(1) or m.group(2)).strip(".,;:")
            if (m.group(1) or name.startswith(("test_", "Test")) or mentions.code_name(name)) and name not in names:
                names.append(name)
        if names and not any(n.casefold() in c.content.casefold() for n in names):
            c.content = f"{', '.join(names[:2])}: {c.content}"


def _stamped(c: Candidate, turn: dict, i: int, scope: str, session_id: str | None) -> Candidate:
    """`c` marked as said in `turn`, the `i`th."""
    c.scope = scope
    c.session_id = c.session_id or turn.get("session_id") or session_id
    c.source_ref = c.source_ref or turn.get("uuid")
    c.occurred_at = turn.get("timestamp")
    c.metadata["turn"] = i
    return c


# The user confirming what the assistant just said of the project: "yep, that's the convention, and …",
# "对，就是这个规范". Not "that's right, but …" (a correction follows).
_CONFIRMS_THAT = re.compile(
    r"^\W*(?:yep|yes|yeah|right|correct|exactly|对|没错|是的)[,，.!]?\s*(?:that'?s|that is|这就是|就是)\s*"
    r"(?:the |our )?(?:convention|the rule|how we do it|the pattern|规范|约定|规矩|我们的做法)(?![^,.，。]*\bbut\b)[,，.。!]?\s*",
    re.I,
)
# A problem, said right before a proposal to solve it.
_PROBLEM_BEFORE = re.compile(
    r"\bbut\b[^.]{3,}\b(?:rejects?|refuses?|breaks?|fails?|chokes? on|can'?t|doesn'?t)\b|但是?[^。]{2,}(?:不支持|不认|会挂|会失败|拒)"
)
# The user confirming the reason the assistant guessed for their choice: "yep that's why.", "对，就是这个原因。"
_THATS_WHY = re.compile(
    r"^\W*(?:(?:yep|yes|yeah|right|exactly|correct)[,.!]?\s*)?that'?s (?:why|the reason|exactly why)\b[\s.,:;!-]*|"
    r"^\W*(?:对|是的|没错)?[，,]?\s*就是(?:这个|因为这个)(?:原因)?[。，,！!\s]*",
    re.I,
)
# The user asking for options: what answers is a list to choose from, not an explanation.
_ASKS_OPTIONS = re.compile(
    r"\bwhat are (?:our|the|my) options\b|\bwhat (?:options|choices) do (?:we|i) have\b|有(?:哪些|什么|几种)(?:方案|办法|选项|选择)",
    re.I,
)
_ASKS_WHY = re.compile(
    r"\b(?:is there a|any|what'?s the) (?:particular )?reason\b|\bwhy (?:that|this|not)\b|为什么不?选|为啥不?选|原因是|理由是",
    re.I,
)
# A statement put up to confirm ("…, right?"): narrower than `_TAG_QUESTION`, whose "吗？" / "吧？" also end real questions.
_CONFIRM_TAG = re.compile(r"[,，]?\s*(?:right|correct|yeah|isn'?t it|doesn'?t it|对吧|是吧|没错吧)\s*[?？]$", re.I)
# The assistant asking whether what it found was meant, and the user saying it was.
_ASKS_IF_MEANT = re.compile(
    r"\b(?:is|was) (?:that|this|it) (?:intentional|intended|expected|on purpose|deliberate)\b|是故意的|是有意的|是预期的|"
    r"(?:是)?(?:已经)?(?:改名|改|换|迁移?|切换?)了吗|(?:以|按)哪个为准|哪个(?:是)?对|\bwhich (?:one|value) is (?:right|current)\b|"
    # ("Was the queue renamed?", "Has env_logger been dropped everywhere?", "Do you know whether it moved?")
    r"\b(?:was|has|were|have|whether|if|did) (?:it|that|this|the [\w-]+(?: [\w-]+)?|`?[\w.-]*[_.-][\w.-]+`?) "
    r"(?:has |have |had |was |got |get )?(?:been )?(?:renamed|changed|moved|switched|updated|dropped|removed|replaced|"
    r"rename|change|move|switch)\b",
    re.I,
)
_MEANT = re.compile(
    # (relayed: "Ines says yeah it moved to 8090 …")
    r"^\W*(?:(?-i:[A-Z])[a-z]+ (?:says|said|confirmed),? )?(?:yes|yep|yeah|correct|right|对|是的|没错|是)(?:[,，]?\s*(?:intentional|on purpose|deliberate|是故意的|故意的))?"
    r"(?:[,，.。!！:：]\s*|\s+(?=\S)|\s*$)|"
    # the value found, said to be the right one: "730 对的，…", "180 is right, …"
    r"^\W*`?[\w.:/-]{1,40}`?\s*(?:(?:是)?对的|没错|is (?:the )?right(?: one)?|is correct)\s*[,，.。!！]\s*",
    re.I,
)
# What the assistant says it will do after stating the convention: "— I'll follow that", "，我会照这个来".
_WILL_FOLLOW = re.compile(r"\s*(?:[—–-]{1,2}|[,;，；])\s*(?:I'?ll|I will|we'?ll|我会|我就)[^.。]*[.。]?$", re.I)


def _confirmed(last_said: list[str]) -> Candidate | None:
    """The statement of the assistant's last message the user just confirmed as how the project does
    things: its first sentence naming something of the project, without "— I'll follow that"."""
    for s in last_said[:3]:
        s = _WILL_FOLLOW.sub("", s).strip()
        if R.SPECIFIC.search(s) and not R.is_narration(s) and len(s) >= 20:
            return Candidate(
                R.tidy(s),
                layer="fact",
                category="convention",
                importance=3,
                why="the assistant's reading of the project, confirmed by the user",
                role="user",
            )
    return None


# A sentence that corrects a fact ("更正：auth-service 端口是 9443", "Correction: …") is no reason for a choice.
_CORRECTS = re.compile(r"^\W*(?:更正|纠正|订正|correction\b|to correct\b)", re.I)
# A message that gives the reason for what the user's last message decided: "For the record, the reason: …"
_REASON_LEAD = re.compile(
    r"^\W*(?:(?:for the record|btw|also|oh|and)[,:]?\s*)?(?:the )?(?:reasons?|why)"
    r"(?:,?\s+(?:fwiw|btw|iirc|since you asked|for the (?:PR|MR|commit)(?: description| message)?))?"
    r"(?: is| was| being)?\s*[:：—-]\s*|"  # ("and the reason fwiw: …", "and the why, for the PR description: …")
    r"^\W*(?:(?:for the record|btw|also|oh)[,:]?\s*)?(?:the )?reasons? (?:is|was)(?: that)?\s+(?=\S)|"
    r"^\W*(?:补充一下|顺便说下)?[，,]?\s*(?:原因|理由)(?:是)?\s*[:：]\s*|^\W*(?:原因|理由)(?:的话|嘛)\s*[，,:：]\s*|"
    r"^\W*(?:补充一下|顺便说下)[，,]?\s*(?:为什么|为啥)(?:这么|这样)?选[^：:，,。]{0,8}[:：]\s*|"
    # "主要是财务那边根本不看邮件，…", "mainly because nobody reads the e-mails"
    r"^\W*(?:主要是因为|主要是|主要因为|因为|原因是)\s*(?=\S)|^\W*(?:mainly |mostly |partly )?because\s+|"
    r"^\W*(?:the )?reason being[:,]?\s+|"
    # the options not taken, named by place: "1 和 3 我都不想要，说下原因：…", "not 1 or 3, because: …"
    r"^\W*[1-4A-Da-d](?:\s*(?:和|跟|、|,|and|or|&)\s*[1-4A-Da-d])*\s*(?:我)?(?:都|也)?不(?:想要|要|考虑|选|用)[^：:。]{0,12}[:：]\s*",
    re.I,
)
# The reason for a pick made earlier: "补充一下为什么选 (a)：…", "btw the reason for (a): …".
_REASON_FOR = re.compile(
    r"为什么选|选\s*(?P<pick>\S{1,8}?)\s*的原因|\bthe reason (?:for|we (?:picked|chose|went with))\b|"
    # "我选 b 主要是因为…", "I picked (b) mostly because …": the pick named, then why
    r"(?:我|我们)(?:当时|之所以)?(?:选|挑)了?(?=\s*[(（]?[A-Da-d1-4][)）]?\s*(?:主要|其实)?(?:是)?因为)|"
    r"\b(?:I|we) (?:picked|chose|went with)(?=\s*[(（]?[A-Da-d1-4][)）]?,? (?:mostly |mainly |mainly just )?because\b)",
    re.I,
)


def _reopened(decision: Candidate, turn: int, skip: int, out: list[Candidate]) -> Candidate:
    """The decision a reason said now completes. One read from the context (an earlier Stop stored it)
    is returned again, marked `extends` with the words stored, so ingest puts it in that one's place."""
    if decision.metadata.get("turn", 0) >= skip:
        return decision
    again = replace(decision, metadata={**decision.metadata, "extends": decision.content, "turn": turn})
    out.append(again)
    return again


# An option said not to do, by its words: "直接切也不行，…", "Kafka is out".
_REJECTS_NAMED = re.compile(r"也不行|也不考虑|^\W*\S{1,12}?不行[，,]|\b(?:won'?t work|is out|is a non-starter)\b", re.I)
# An option of the list said not to do: "A 不行，…", "C 也解决不了", "2 太依赖发布顺序了", "option 3 is too slow".
_AGAINST_OPTION = re.compile(
    r"^\W*(?:option\s*)?[(（]?([1-4A-D])[)）]?(?:\s*(?:的话|也|太|不|没|还是|会|要|得|其实|解决不了|不要|不行)|"
    r"\s+(?:is|was|would|won't|doesn't|does not|has|needs|can't|isn't)\b)"
)
# A sentence about one option, named by its place: "3 的话 …", "至于 2，…", "as for (b), …".
_ABOUT_OPTION = re.compile(
    r"^\W*(?:至于\s*)?[(（]?[1-4A-Da-d][)）]?\s*(?:的话|呢|嘛)\s*[，,:：]?|^\W*as for (?:option\s*)?[(（]?[1-4a-d]\b",
    re.I,
)


# The day's task, announced: "今天主要是换短信通道。", "Main thing today: …", "Today we're doing the export."
_DAYS_TASK = re.compile(
    r"^\W*(?:今天|今儿|这次)[^，。,.]{0,4}?(?:主要)?(?:是|做|搞|干|弄|要)|^\W*(?:main thing today|today(?: we'?re| I'?m| is)\b)",
    re.I,
)

# A task's brief, said as such: "需求：…", "背景：…", "Requirements: …", "Context: …".
# The task at hand, said before the options: "dealer-gateway 要加 per-dealer rate limit", "we need to add …".
_TASK = re.compile(
    r"^[^，。,.]{0,40}?(?:要|需要)(?:加|做|支持|接入|新增|实现)\s*\S|^\W*(?:we|you) need to (?:add|build|support|implement)\b|"
    r"^\W*(?:new )?task\s*[:：]",
    re.I,
)
_REQUIREMENTS = re.compile(
    r"(?:^|[。.!！]\s*)\W*(?:需求|要求|背景|requirements?|acceptance criteria|spec|context|background)\s*[:：]", re.I
)

# A rule that points at the way just shown: "以后订单状态一律这么改", "from now on do it this way".
_THIS_WAY = re.compile(
    r"(?:这么|这样|照这个|按这个)(?:改|做|写|来|处理|弄|搞)|\b(?:this|that|the same) way\b|\blike (?:this|that)\b", re.I
)


def _spell_out_this_way(c: Candidate, told: list[str]) -> None:
    """A rule that says "do it this way" names the way: the first sentence of the assistant's last
    message that names code ("状态流转改成了 `orderMapper.updateStatus(id, from, to)`…") is added to it."""
    if c.category not in ("rule", "convention") or not _THIS_WAY.search(c.content) or not told:
        return
    way = next((x for x in told if R.SPECIFIC.search(x) and "`" in x and not R.is_question(x)), None)
    if way is not None:
        c.content = c.content.rstrip(" 。.") + ("：" if re.search(r"[\u4e00-\u9fff]", c.content) else ": ") + way


def _options_named(decision: Candidate) -> str:
    """The names a decision weighed: what it chose and what it passed over."""
    meta = decision.metadata
    return " ".join(filter(None, [meta.get("chosen"), *(meta.get("alternatives") or [])]))


def _acknowledges(text: str) -> bool:
    """Whether an assistant message only takes note of what the user just chose: a sentence or two, at most
    one question after them, no options of its own ("Textract it is. I'll use AnalyzeExpense for estimates.")."""
    said = R.sentences(text)
    if len(said) > 1 and R.is_question(said[-1]):
        # and asks one thing of it: "好，用阿里云短信。签名…我放到 Nacos…，你那边签名是现成的吗？" (the answer, naming
        # the options, may be the reason: `_reason_alone` with the options it weighed)
        said = said[:-1]
    return (
        0 < len(said) <= 2
        and len(text) <= 240
        and bool(R.agrees(said[0]) or R.is_choice(said[0]) or _ACK.match(said[0]))
        and "\n" not in text.strip()
        and not any(R.is_question(x) or R.PROPOSAL.search(x) for x in said)
    )


def _reason_alone(text: str, weighed: str) -> bool:
    """Whether a whole message is only the reason for what the message before it decided: one or
    two sentences about the options it weighed (they name one: "Redis 一重启就丢键…", "Offset crawls
    past page 500"), with no rule, correction, question, request, new topic, choice or chat of
    their own. A fact said next ("the release captain is Dana now") stays a fact."""
    sents = R.sentences(text)
    if not sents or len(sents) > 2 or len(text) > 300 or _NEW_TOPIC.match(text):
        return False
    if not (_subject_terms(text) & _subject_terms(weighed)):  # the decision and the options put to it
        return False
    for s in sents:
        bare = R.strip_fillers(s) or s
        if (
            R.is_question(bare)
            or R._REQUEST.match(bare)
            or R.is_chat(bare)
            or R.is_choice(bare)
            or R.REJECTS.search(bare)
        ):
            return False
        if _ADDRESS.search(bare) or "[REDACTED:" in privacy.redact(bare):
            return False  # a fact of its own ("staging 在 10.0.0.5:5432")
        if R.owner_of(bare) or R.oncall_of(bare):
            return False  # news of its own ("Heads-up on people: …; reminder-worker is Aisha's now")
        hit = R.classify_user(bare)
        if hit is not None and hit[1] != "statement":
            return False  # a rule, a change, a correction, a fact of a kind
    return True


# The reason an option was passed over, said later: "顺便说下为啥不选 B：…", "why not option B: …", "Why not the
# CronJob, since someone will ask: …".
_REASON_AGAINST = re.compile(
    r"为(?:什么|啥)(?:不|没)(?:只)?(?:选|用)\s*(?:方案|选项)?\s*|\bwhy not (?:go with |pick |use )?(?:option\s*)?|"
    r"\bthe reason (?:I |we )?(?:didn'?t|did not) (?:pick|choose|go with|take) (?:option\s*)?|"
    r"(?<![\w\u4e00-\u9fff])不(?:选|用|要)\s*(?=[^，。,；;]{1,20}?的(?:原因|理由))|"  # "不选 Leaf 的原因：…"
    # "btw the reason DocRaptor was a non-starter: …"
    r"\bthe reason (?=`?[A-Za-z][\w.+/-]*`? (?:was|is) (?:a non-?starter|out|ruled out|off the table)\b)",
    re.I,
)

# The option passed over, named before why: "C 为啥不行顺便说下：…", "方案 B 为什么不行：…", "2 不行是因为…".
_LETTER_AGAINST = re.compile(
    r"(?<![\w\u4e00-\u9fff])(?:方案\s*)?([(（]?[A-Da-d1-4][)）]?)\s*(?:方案\s*)?(?:(?:为(?:什么|啥)|怎么)不(?:行|选|用)"
    r"(?=[^：:，,]{0,8}[：:，,—-])|不行(?:是|主要是)?因为|不行的原因是)"  # ("2 不行是因为…")
)


def _reason_of(sentence: str, found: list[Candidate]) -> Candidate | None:
    """The decision a later reason names by its pick ("为什么选 (a)", "为什么选第一种", "the reason for Postgres"),
    or by the option it passed over ("为啥不选 B：…", "C 为啥不行顺便说下：…": the pick made from that list, another
    item; "why not the CronJob, …": the decision that passed over the CronJob)."""
    against = _REASON_AGAINST.search(sentence)
    rest = sentence[against.end() :] if against else ""
    other = re.match(r"\s*([(（]?[A-Da-d1-4][)）]?)(?=\s*(?:说一下|说下|讲一下|讲下)?\s*[:：,，—-])", rest)
    other = other or _LETTER_AGAINST.search(sentence)  # "C 为啥不行顺便说下：…"
    if other is not None:
        place = _place(other.group(1))
        return next(
            (c for c in reversed(found) if c.layer == "decision" and c.metadata.get("picked") not in (None, place)),
            None,
        )
    name = re.match(r"\s*(?:the\s+)?`?([A-Za-z\u4e00-\u9fff][\w.+/\u4e00-\u9fff-]{1,})`?", rest) if against else None
    if name is not None:
        key = name.group(1).casefold()
        decided = [c for c in reversed(found) if c.layer == "decision"]
        # the decision that passed it over by name, else the last pick from a list that did not take it
        return next(
            (c for c in decided if any(key in a.casefold() for a in c.metadata.get("alternatives") or [])),
            next(
                (
                    c
                    for c in decided[:1]
                    if c.metadata.get("picked")
                    # ("为啥不只用 received_at：…" passed over "only received_at": the pick may name it with more)
                    and ("只" in against.group(0) or key not in (c.metadata.get("proposal") or c.content).casefold())
                ),
                None,
            ),
        )
    m = _REASON_FOR.search(sentence)
    named = (m.group("pick") or sentence[m.end() :]) if m else ""  # ("选 A 的原因：…" names it inside)
    key = re.match(r"\s*([(（][A-Da-d1-4][)）]|[\w.+/-]+)", named) if m else None
    if key is None:
        return None
    name = key.group(1).casefold()
    place = _place(key.group(1))  # "第一种", "(b)", "the second": a place in the list
    for c in reversed(found):
        chosen = (c.metadata.get("chosen") or "").casefold()
        if c.layer != "decision":
            continue
        if c.content.casefold().startswith(name) or chosen == name:
            return c
        if place is not None and c.metadata.get("picked") == place:
            return c
    return None


def _add_reason(decision: Candidate, text: str) -> None:
    reason = R.tidy(text)
    head, sep, tail = decision.content.partition(" (agreed to the proposal:")
    decision.content = head.rstrip() + " " + reason + (sep + tail if sep else "")
    decision.metadata["rationale"] = " ".join(filter(None, [decision.metadata.get("rationale"), reason]))
    if not decision.metadata.get("alternatives") and R.AGAINST.search(text):
        named = _named_against(
            text, " ".join(filter(None, [decision.metadata.get("decision"), decision.metadata.get("chosen")]))
        )
        if named:
            decision.metadata["alternatives"] = named


def _stored_by_assistant(c: Candidate, turns: list[dict]) -> bool:
    """Whether the assistant stored what this user statement says itself, with a memory tool in
    its answer to it ("remember: staging is on 6543 now" -> memory_store "The staging database moved
    to 6543"): the harvest would store the user's words for the same fact a second time."""
    i = c.metadata.get("turn")
    if c.role != "user" or not isinstance(i, int):
        return False
    for t in turns[i + 1 :]:
        if t.get("role") == "user" and t.get("kind") == "text":
            return False  # the answer to that turn has ended
        if t.get("stored") and R.covers(t["stored"], c.content):
            return True
    return False


def _without_handed_secrets(c: Candidate) -> Candidate | None:
    """A user fact less its sentences that hand over a credential ("调试用这个 token：…", "Staging key is
    …, don't commit that"): once redacted, all such a sentence keeps is where a secret was, and the
    secret itself must not be kept; the rule about where it lives is said (and kept) as its own
    sentence. None when nothing else is left; a rule said in the same breath stays ("name 字段必须…。
    告警 webhook 是 https://…?key=…")."""
    if (
        c.role != "user"
        or c.layer != "fact"
        or "[REDACTED:" not in c.content
        or "asked to remember" in c.why
        or c.category == "document"  # (a runbook keeps its steps; the secret in one is redacted already)
    ):
        return c
    kept = [s for s in R.sentences(c.content) if not _hands_over(s)]
    if not kept or (R.starts_with_pronoun(kept[0]) and not R.SPECIFIC.search(" ".join(kept))):
        return None  # (nothing, or "It's the app user, so be gentle with it.": what "it" was went with the secret)
    c.content = R.tidy(" ".join(kept))
    return c


def _hands_over(sentence: str) -> bool:
    # a webhook URL whose path is the secret says nothing else; "UNIDOC_LICENSE_API_KEY=…" still names where it lives
    rest = _SECRET_URL.sub(
        lambda m: (re.search(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+(?==)", m.group()) or [""])[0] + " ", sentence
    )
    return "[REDACTED:" in sentence and not _NAMES_A_PLACE.search(rest)


# a value that is an address: a URL, host:port, an IP
_ADDRESS_VALUE = re.compile(r"https?://\S+|\b[\w.-]+:\d{2,5}\b|\b\d{1,3}(?:\.\d{1,3}){3}\b")
# what says an address, also a host named in full ("The job runs on mac-ci-01.build.corp.internal" is a
# fact of its own, not the reason for a fix agreed to later)
_ADDRESS = re.compile(
    _ADDRESS_VALUE.pattern + r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+){2,}\.(?:internal|local|lan|corp|com|net|io)\b"
)


_ORDINALS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "first": 1, "second": 2, "third": 3, "fourth": 4}


def _lead_in(sentence: str) -> bool:
    """The words that open a list ("Options:", "两个改法：1."), not an option."""
    return re.sub(r"\s*[1-9][.、)）]?$", "", sentence.rstrip()).endswith((":", "："))


def _option_head(option: str) -> str:
    """An option's name: its words before the first colon, dash or comma ("Kafka：持久化…" -> "Kafka"),
    without markdown's emphasis ("**chi** — small…" -> "chi")."""
    option = option.strip()
    # (inside code only a call's bracket ends the name: "Set `retries: 0` on …", "`upsertJobScheduler('sweep', …)`")
    code = [m.span() for m in re.finditer(r"`[^`]*`", option)]
    cut = next(
        (
            m.start()
            for m in re.finditer(r"\s*[：:—,，;；(（]|\s+-\s+", option)
            if m.group().strip() == "(" or not any(a < m.start() < b for a, b in code)
        ),
        len(option),
    )
    return re.sub(r"\*\*|__", "", option[:cut][:60]).strip()


def _short_head(option: str) -> str:
    """An option's name in six words, and the names in code or capitals said after them ("move the sweep out of
    the worker into a k8s CronJob" -> "move the sweep out of the CronJob"): what a later "why not the CronJob" or
    "the CronJob we passed over" names."""
    words = _option_head(option).split()
    return " ".join(
        words[:6] + [w for w in words[6:] if re.fullmatch(r"`?(?:[A-Z][\w.+/-]*|\w+[A-Z_./-][\w./-]*)`?", w)]
    )


def _numbered(text: str) -> list[str]:
    """The items of the last list in a message laid out one a line, numbered or lettered ("1. 保持…\n2. 改成
    MMR window…", "A. Coalesce…\nB. Keep…", "(a) …", "Option B: …", a lettered list under an item: "- a) mTLS: …"),
    first sentence each."""
    items: list[str] = []
    for line in R.without_code(text).splitlines():
        m = re.match(
            r"\s*(?:[-*•]\s+)?\**(?:(?:option|方案|选项)\s*)?[(（]?([1-9]|[A-Da-d])\s*[.、)）:：]\**\s*(?<=[\s.、)）:：])(.+)",
            line,
            re.I,
        )
        if not m:
            continue
        label = m.group(1)
        n, body = (int(label) if label.isdigit() else ord(label.upper()) - 64), (R.sentences(m.group(2)) or [""])[0]
        if n == 1:
            items = [body]
        elif n == len(items) + 1:
            items.append(body)
    return items if len(items) >= 2 else _bulleted_options(text)


# A list of bullets put as options: "Either:\n- `place_id:…`: …; or\n- `lat,lng`: …", "两种做法：\n- … 或者\n- …".
_EITHER_LEAD = re.compile(
    r"(?:\beither|\boptions?|\bchoices?|\bways?|\bcandidates|\balternatives|\bboth (?:work|would work|are fine)|"
    r"方案|做法|选项|选择|两种|几种|候选|(?:两|几)(?:家|个)都(?:能|可以)(?:做|用)?)\s*[:：]\s*$",
    re.I,
)
_OR_END = re.compile(r"(?:[;；,，]\s*)?(?:\bor|或者|还是)\s*$", re.I)


def _bulleted_options(text: str) -> list[str]:
    """The items of the last run of bullets in a message when the line before it calls them options
    ("Either:", "两种做法：") or an item ends with "or": first sentence each."""
    lines = R.without_code(text).splitlines()
    runs: list[tuple[int, list[str]]] = []
    for k, line in enumerate(lines):
        m = re.match(r"\s*[-*•]\s+(.+)", line)
        if not m:
            continue
        if runs and runs[-1][0] + len(runs[-1][1]) == k:
            runs[-1][1].append(m.group(1))
        else:
            runs.append((k, [m.group(1)]))
    if not runs:
        return []
    start, bullets = runs[-1]
    lead = lines[start - 1].strip() if start else ""
    if len(bullets) < 2 or not (_EITHER_LEAD.search(lead) or any(_OR_END.search(b) for b in bullets[:-1])):
        return []
    return [(R.sentences(_OR_END.sub("", b)) or [""])[0] for b in bullets]


# A pick by place or label of an item just listed: "1。", "go with 2", "第二种", "the first one", "B", "(b).",
# "option A" — alone, or before the reason ("A，调休每年都变").
_PICK_PLACE = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|yes|yeah|好的?|行|嗯)[,，.。!！]?\s*)?(?:[A-Z][\w-]* (?:says|said|thinks|wants|votes for)\s+|"
    r"[\u4e00-\u9fff]{1,4}(?:说|觉得)\s*)?(?:(?:i think|i guess|i'?d say|probably|我觉得|我倾向)[,，]?\s*)?"
    r"(?:那就|就|选|用|(?:就)?按(?:照)?|go with|take|let'?s (?:do|go with)|do|"
    r"option|方案|选项)?\s*(?:the\s+)?[(（]?(?:([1-9])|([A-Da-d])|第([一二三四五1-5])(?:种|个|条|项|套|类)?|"
    r"(first|second|third|fourth|last))[)）]?\s*(?:one|option|个|种|吧|就行|来吧?|就这个吧?|it is)?"
    r"(?:[,，]?\s*(?:i think|i guess|probably|then|我觉得))?\s*(?:[.。!！,，:：;；]|$)",  # (hedged: "2 i think")
    re.I,
)


# Two options said in one paragraph: "一种是每晚批量扫表…；另一种是用延迟队列…", "the first is …; the second is …"
_INLINE_OPTIONS = re.compile(
    r"(?:第一种|一种|(?<!\w)the first(?: one)?|(?<!\w)one)\s*(?:是|is)[:：]?\s*(?P<a>[^；;。]{4,}?)\s*[；;。]\s*"
    r"(?:另一种|第二种|the other(?: one)?|the second(?: one)?)\s*(?:是|is)[:：]?\s*(?P<b>[^；;。]{4,}?)\s*(?:[。；;]|$)",
    re.I,
)


# Two courses of action asked of the user: "do you want to keep LWT as a fast path …, or remove LWT completely?"
# (not "是网络问题还是代码问题？": a question about the cause offers nothing to do)
_ASKED_OPTIONS = re.compile(
    r"\b(?:do you want(?: me)? to|should (?:I|we)|would you (?:rather|prefer)(?: to)?|shall (?:I|we))\s+"
    r"(?P<a>[^?]{4,}?),?\s+or\s+(?:to\s+|should (?:I|we)\s+)?(?P<b>[^?]{4,}?)\s*\?$",
    re.I,
)

# An option labelled inside a paragraph: "A) the worker polls …; B) Textract publishes …", "(a) …, or (b) …".
_INLINE_LABEL = re.compile(r"(?:^|(?<=[\s:：;；,，]))[(（]?([A-Da-d1-4])[)）]\s+")


def _inline_options(text: str) -> tuple[list[str], str]:
    """The options of a paragraph that lays them out one after the other ("one is …; the other is …",
    "A) …; B) …") or that asks which course to take ("do you want to X, or Y?"), and what it opens with."""
    m = _INLINE_OPTIONS.search(text)
    if m:
        options, at = [m.group("a").strip(), m.group("b").strip()], m.start()
    else:
        asked = _ASKED_OPTIONS.search((R.sentences(text) or [""])[-1])
        if asked and not re.search(r"\bor\b|还是", asked.group("a")):
            return [asked.group("a").strip(" ,，"), asked.group("b").strip(" ,，")], ""
        options, at = _labelled_inline(R.without_code(text))
        if not options:
            return [], ""
    opening = re.split(r"[。.!！?？\n]", text[:at].strip())[-1].strip(" :：，,")
    return options, opening if len(opening) >= 6 else ""


def _labelled_inline(text: str) -> tuple[list[str], int]:
    """The last run of labelled options in one paragraph ("A) …; B) …", "(a) …, or (b) …"), the
    labels in order from the first, each option up to the next label or the end of its sentence, and
    where the run starts."""
    for para in reversed(text.split("\n")):
        marks = list(_INLINE_LABEL.finditer(para))
        for first in range(len(marks)):
            run = [marks[first]]
            if run[0].group(1) not in "Aa1":
                continue
            for mk in marks[first + 1 :]:
                if ord(mk.group(1)) == ord(run[-1].group(1)) + 1:
                    run.append(mk)
            if len(run) < 2:
                continue
            ends = [mk.start() for mk in run[1:]] + [len(para)]
            options = []
            for mk, end in zip(run, ends):
                body = re.split(r"(?<=[.。!！?？])\s", para[mk.end() : end].strip(), maxsplit=1)[0]
                options.append(re.sub(r"[\s,，;；.。]*(?:\bor|\band|或者?|还是)?\s*$", "", body, flags=re.I))
            if all(len(x) >= 4 for x in options):
                return options, text.index(para) + run[0].start()
    return [], 0


def _list_heading(text: str) -> str:
    """The sentence that opens the last list of a message when it names what the list decides ("对账挪时间以后，
    失败了要不要处理方式也定一下："), not only that options follow ("Options:", "几个改法：")."""
    lines = R.without_code(text).splitlines()
    opens = max((k for k, x in enumerate(lines) if re.match(r"\s*\**(?:[(（]?[1aA][.、)）:：])\s*\S", x)), default=None)
    above = next((x.strip() for x in reversed(lines[:opens] if opens else []) if x.strip()), "")
    said = (R.sentences(above) or [""])[-1]
    if (
        not said.endswith((":", "："))
        or _lead_in(said)
        and len(re.sub(r"[\W\d_]", "", said)) < 12
        or _OPTIONS.match(said)
    ):
        return ""  # ("Three options:", "几个选择：" name no subject)
    return said.rstrip(":：")


def _place(s: str, size: int = 0) -> int | None:
    """The place (1, 2, …) a pick by place or label names: "1。", "B", "(b)", "第二种", "the first", "the last"
    (of `size` items)."""
    m = _PICK_PLACE.match(s.strip())
    if m is None:
        return None
    num, letter, zh, word = m.groups()
    if num:
        return int(num)
    if letter:
        labelled = re.search(r"[(（]\s*" + letter + r"\s*[)）]|(?:option|方案|选项)\s*" + letter, m.group(0), re.I)
        if letter.islower() and not labelled and re.match(r"\W*[a-d]\s*[A-Za-z']", s.strip()):
            # "a…" opens many sentences ("a fix would be…"); "a" alone, "b 吧", "(a)", "go with (b)" and "option a" are labels
            return None
        return ord(letter.upper()) - 64
    if zh:
        return int(zh) if zh.isdigit() else _ORDINALS[zh]
    return size or None if word.casefold() == "last" else _ORDINALS[word.casefold()]


def _list_pick(s: str, items: Sequence[str]) -> int | None:
    """Which item of the list just laid out a user's first sentence picks: by its place or label
    (`_PICK_PLACE`), or by a word or two only that item holds ("Coalesce.", "The threshold one.",
    "阈值那个"). None when it names no one item."""
    s = s.strip()
    # (the pick may close the sentence: "先不换，保持 RabbitMQ，就 A 吧。")
    for said in (s, *re.split(r"\s*[,，;；]\s*", s)[1:]):
        if _PICK_PLACE.match(said):
            n = _place(said, len(items))
            return n - 1 if n is not None and 1 <= n <= len(items) else None
    if R.is_question(s):
        return None
    head = re.split(r"\s*[,，;；.。:：!！—]\s*", s, maxsplit=1)[0]
    head = re.sub(
        r"^(?:the|that|this)\s+|\s+(?:one|option|it is|then|please)$|(?:那个|这个)?(?:吧|就行)?$", "", head, flags=re.I
    )
    words = [
        w for w in re.findall(r"[A-Za-z][\w.+-]{2,}|[\u4e00-\u9fff]{2,}", head) if w.casefold() not in _FILLER_PICKS
    ]
    if not words or len(head.split()) > 3 or len(head) > 24 or re.search(r"\s(?:it|that|this|them)$", head, re.I):
        # "Drop it.", "Ship that": what to do, not which item; but a longer sentence that names, not
        # negated, a package or path only one item holds picks it ("OK, from now on we use coder/websocket.")
        named = {m.group().casefold() for m in _CODE_NAME.finditer(s) if not _turned_down_at(s, m.start())}
        holding = {k for k, x in enumerate(items) for w in named if w in x.casefold()}
        return holding.pop() if len(holding) == 1 else _phrase_pick(s, items)
    holding = [k for k, x in enumerate(items) if all(w.casefold() in x.casefold() for w in words)]
    return holding[0] if len(holding) == 1 else _phrase_pick(s, items) if s != head else None


# The user putting forward a change of their own, for the assistant to agree to: "I think we should switch
# X to Y instead of Z", "我想把 X 都改成 Y，别再用 Z 了，…你觉得呢？".
# A plan put to the assistant, no switch named: "what if we cache the matrices in redis?"
_PLAN_ASKED = re.compile(
    r"\bwhat if we\b|\bhow about we\b|"
    # a plan put as the user's view: "I think we should pack the HLC into a bigint column, not a string",
    # "我觉得 label 拼接以后统一用 point-in-time join" (agreed to, a decision; not "I think we should ask Tom")
    r"\bI think we should (?!(?:ask|check|look|wait|talk|discuss|figure|find|see|try)\b)|"
    r"我觉得[^，,。？?]{0,24}?(?:以后|今后)?(?:都|统一)(?:用|改用|走)\s*\S",
    re.I,
)
# A plan to use something, the user's: "排行榜我想直接用 Redis sorted set，…", "we want to use Temporal for this".
_USE_PLAN = (
    r"(?:我|我们)(?:想|打算|准备)(?:直接|先)?(?:用|上)\s*`?[A-Za-z]|\b(?:I|we) (?:want|plan|intend) to (?:just )?use\b"
)
_OWN_PROPOSAL = re.compile(
    r"\bwe should (?:switch|move|change|migrate|replace|drop|stop using|start using)\b|"
    # a switch asked about: "should we switch the BFF from REST to GraphQL?", "要不要把 Kafka 换成 Pulsar？"
    r"\bshould we (?:switch|move|migrate|replace)\b|要不要(?:把[^？?]*)?(?:换成|改成|改用|换到|迁到|切到)|"
    r"\bI(?:'d| would)? (?:like|want) to (?:switch|move|change|migrate|replace|drop)\b|"
    r"我(?:想|打算|准备|觉得(?:应该|可以))(?:把[^？?]*)?(?:都|全)?(?:改成|换成|改用|换到|改为)|" + _USE_PLAN + "|"
    # "…别用自增 id 了吧，我想用 ULID", "what if we cache the matrices in redis, like 15 min TTL?"
    r"别(?:再)?用[^，,。？?]{1,30}?了?吧?[，,]\s*(?:我|我们)(?:想|打算|准备)(?:改)?用|" + _PLAN_ASKED.pattern + "|"
    # a plan put to the assistant for its opinion: "我想把 recon_diff 里超过 90 天的数据归档到 OSS 上…你觉得可以吗？"
    r"^(?:[^：:？?。]{1,12}[：:])?(?:我|我们)(?:想|打算|准备)(?:把|给|在|先)[^？?]{4,80}[，,][^？?]{0,40}(?:你觉得|你看)(?:可以|行|OK|怎么样|呢)|"
    r"^I(?:'d| would)? (?:like|want) to\b[^?]{8,120}\b(?:what do you think|thoughts|ok\?|okay\?|sound good)",
    re.I,
)
_OPINION_ASKED = re.compile(
    r"[，,]?\s*(?:你觉得呢|你看呢|你觉得怎么样|你觉得可以吗|what do you think|thoughts)\s*[？?]?\s*$", re.I
)
_SWITCH_TO = re.compile(
    r"\b(?:switch|move|change|migrate)\s+(?:the\s+|our\s+)?(?P<what>.+?)\s+(?:over\s+)?to\s+(?P<to>.+?)\s+"
    r"(?:instead of|rather than)\s+(?:the\s+|our\s+|a\s+)?(?P<old>[^,.;]+)|"
    r"(?:改成|换成|改用|换到|改为)\s*(?P<to_zh>[^，,。；;？?]+)|"
    r"(?:我|我们)(?:想|打算|准备)(?:改)?用\s*(?P<use_zh>[^，,。；;？?]+)",  # "别用自增 id 了吧，我想用 ULID"
    re.I,
)
_NO_MORE = re.compile(
    r"(?:别再用|不再用|别用|不用|(?<!要)不要再?|别再)\s*(?P<old>(?:\([^)]*\)|[^，,。；;(])+?)\s*了?吧?(?=[，,。；;]|$)"
)


# "switch the cache from Memcached to Redis", "把队列从 RabbitMQ 换成 Kafka": what a switch replaces, said first.
_SWITCH_FROM = re.compile(
    r"\b(?:switch|move|change|migrate)\s+(?:the\s+|our\s+)?.+?\s+from\s+(?P<old>.+?)\s+to\s+"
    r"(?P<to>[^,.;?]+?)(?:\s+instead)?\s*(?=[,.;?]|$)|从\s*(?P<old_zh>[^，,。；;从]+?)\s*(?:改成|换成|改用|换到|改为|迁到|切到)|"
    # "把 Kafka 换成 Pulsar": a named thing swapped for another (not "把日志级别改成 debug", a setting changed)
    r"把\s*(?P<old_named>[A-Za-z][\w.+-]*)\s*(?:换成|替换成|换到|迁到)",
    re.I,
)


def _switch(said: str) -> tuple[str, str | None] | None:
    """What a proposed switch chooses and what it replaces ("I think we should switch X to Y instead of Z",
    "…from Z to Y", "我想把 X 从 Z 换成 Y", "…改成 Y，别再用 Z 了"); None when it names no switch."""
    switch, source = _SWITCH_TO.search(said), _SWITCH_FROM.search(said)
    if switch is None and (source is None or not source.group("to")):
        return None
    chosen = (source and source.group("to")) or switch.group("to") or switch.group("to_zh") or switch.group("use_zh")
    chosen = chosen.strip()
    old = (switch and switch.group("old")) or (m.group("old") if (m := _NO_MORE.search(said)) else None)
    old = old or (source and (source.group("old") or source.group("old_zh") or source.group("old_named")))
    return chosen, old.strip() if old else None


def _own_said(own: list[str]) -> str:
    """The user's proposal, without its fillers, its opening "also" or its "你觉得呢？"."""
    said = _OPINION_ASKED.sub("", " ".join(R.strip_fillers(x) or x for x in own)).strip(" ，,")
    return re.sub(r"^(?:also|and|so|另外|还有)\s*[,，]?\s*", "", said, flags=re.I)


def _agreed_own(own: list[str], reply: list[str]) -> Candidate | None:
    """The decision a user's own proposal becomes when the assistant agrees to it (`_OWN_PROPOSAL`):
    what it switches to, from what, and why (the user's other clauses, else the assistant's reason).
    None when the proposal names no switch."""
    said = _own_said(own)
    switch = _switch(said)
    if switch is None and not (_PLAN_ASKED.search(said) or re.search(_USE_PLAN, said, re.I)):
        return None
    chosen, old = switch or (None, None)  # ("what if we cache the matrices in redis?": a plan, no switch)
    clauses = [x for x in re.split(r"\s*(?:[，;；]|,(?![^(]*\)))\s*", said) if x]  # ("decimal(18,2)" is one)
    reasons = [x for x in clauses if chosen and chosen not in x and not (old and old in x) and not _NO_MORE.search(x)]
    rationale = R.split_rationale(said)[1] or " ".join(reasons) or (R.clip(reply[1], 300) if len(reply) > 1 else None)
    content = R.tidy(said) + " (agreed: " + R.clip(R.joined(reply[:2]), 300) + ")"
    c = Candidate(content, layer="decision", category="decision", importance=4, why="decision (agreed)", role="user")
    c.metadata.update(decision=said, chosen=chosen, alternatives=[old] if old else None, rationale=rationale)
    c.metadata = {k: v for k, v in c.metadata.items() if v}
    return c


def _held_own(own: list[str]) -> Candidate:
    """The decision a user's own proposal is when they hold to it after the assistant pushed back."""
    said = _own_said(own)
    chosen, old = _switch(said) or (None, None)
    c = Candidate(
        R.tidy(said), layer="decision", category="decision", importance=4, why="decision (held to)", role="user"
    )
    c.metadata.update(decision=said, chosen=chosen, alternatives=[old] if old else None)
    c.metadata = {k: v for k, v in c.metadata.items() if v}
    return c


# A value taken back as it is said: "mlflow registry is at mlflow.ml.internal:5001 — scratch that, its 5000",
# "端口是 8081，不对，是 8082".
# (each value a whole token, found from its first character: a long run of digits costs one pass, not a cube)
_SELF_CORRECTED = re.compile(
    r"(?P<old>(?<![\w.:/-])(?=[\w.:/-]{0,80}\d)[\w.:/-]{1,80}+|`[^`\n]{1,80}`)\s*(?:[—–]|-{1,2}|[,;，；])\s*"
    r"(?:scratch that|no wait|wait no|sorry|I mean|correction|不对|说错了|写错了)[,:，：]?\s*(?:it'?s|its|it is|是|应该是)?\s*"
    r"(?P<new>(?<![\w.:/-])(?=[\w.:/-]{0,80}\d)[\w.:/-]{1,80}?(?=[.:-]?(?:[\s,;。，；!]|$))|`[^`\n]{1,80}`)",
    re.I,
)
_TAKES_BACK = re.compile(r"scratch that|no wait|wait no|sorry|I mean|correction|不对|说错了|写错了", re.I)


def _self_corrected(text: str) -> str:
    """`text` with a value taken back as it is said replaced by the one meant: "…internal:5001 — scratch
    that, its 5000" -> "…internal:5000" (a bare number replaces the number the old value ends with)."""

    def meant(m: re.Match[str]) -> str:
        old, new = m.group("old"), m.group("new")
        if new.isdigit() and re.search(r"\d+$", old) and not old.isdigit():
            return re.sub(r"\d+$", new, old)
        return new

    return _SELF_CORRECTED.sub(meant, text) if _TAKES_BACK.search(text) else text


def _explains(text: str) -> bool:
    """Whether an answer explains something of a system: a name in code or a number (`R.SPECIFIC`), a
    reason, or Chinese (whose system words no such test reads)."""
    return bool(R.SPECIFIC.search(text) or R.RATIONALE.search(text) or _SO.search(text) or has_cjk(text))


_SO = re.compile(r"\bso\b|\bthat'?s why\b|\bwhich is why\b", re.I)


# An "ok" that puts the choice off to someone or later: "好的, 这几个点我会跟通哥对一下.", "ok, let me check with Dana".
_DEFERS = re.compile(
    r"我(?:会|再|先)?(?:跟|和|找)\S{1,8}?(?:对|确认|商量|聊|讨论)一下|我再(?:想想|考虑|确认)|回头再(?:定|说)|"
    r"\b(?:let me|i'?ll|i will|i need to) (?:check|confirm|sync|talk|run it by|think)\b|"
    r"\bleave (?:the|that|this|it)\b[^.;]{0,30}\buntil\b|"
    # the work put in a PR of its own: "好，另开吧", "do it in a separate PR"
    r"另开(?:吧|一个|个)?|\b(?:in|as) a (?:separate|follow-up|later|new) (?:PR|MR|ticket|change)\b",
    re.I,
)


# An option ruled out by name, which picks none of the others: "Redis 那个不考虑", "rule out the Redis one".
_RULED_OUT = re.compile(r"不考虑|排除|就算了|\brul(?:e|ed|ing) out\b|\b(?:is|are) out\b", re.I)


# The assistant asking whether to make a change, its last question: "While we're in the runners: should we
# move the tf-runner pool onto Karpenter spot nodes?", "要不要把 settle-job 迁到 K8s 上？".
_ASKS_WHETHER = re.compile(
    r"^(?:[^?？]{0,80}?[:：,，]\s*)?(?:(?:so )?(?:should|shall) we|do we want to|要不要(?:我们)?|是否要)\s*"
    r"(?P<what>[^?？]{6,160})[?？]\s*$",
    re.I,
)
# Or suggesting one: "I'd suggest moving training to spot with checkpoint+resume.", "我建议把 X 换成 Y。"
_SUGGESTED = re.compile(
    r"^(?:[^.。]{0,40}?[,:，：]\s*)?(?:(?:I'?d|I would|I)\s+(?:suggest|recommend|propose)|(?:it'?s\s+)?worth considering|"
    r"(?:we|you) (?:could|might|should) consider)\s+(?:that\s+)?(?:we\s+)?"
    r"(?P<what>[^?？]{6,160}?)\s*[.!。]?$|"
    r"^(?:[^。]{0,40}?[:：，,]\s*)?(?:所以)?(?:我(?:的)?建议(?:是)?|可以考虑|不妨|或许可以)[:：，,]?\s*(?P<zh>[^?？]{4,120}?)[。！.]?$",
    re.I,
)


def _offered(text: str) -> str:
    """The change the assistant's message last asks about or suggests, "" when none."""
    for x in reversed(R.sentences(text)):
        m = _ASKS_WHETHER.match(x) or _SUGGESTED.match(x)
        if m:
            return next(g for g in m.groups() if g)
    return ""


# Putting off what was offered by its name: "KMP 先不搞.", "dagster: let's park it".
_PUT_OFF = re.compile(
    r"^\W*(?P<topic>[A-Za-z][\w.+-]{1,30}|[\u4e00-\u9fff]{2,8})\s*(?:这个|那个)?\s*[,，:：—-]?\s*"
    r"(?:先不(?:搞|做|上|弄|用|动)|暂缓|不搞了|先放放|先别(?:搞|上|动)|(?:let'?s )?(?:park|shelve|hold off on) (?:it|that)|not now)",
    re.I,
)
# Turning the change down for now: "not now", "not yet", "先不", "暂时不", "以后再说".
_FOR_NOW = re.compile(r"\bnot (?:now|yet)\b|\bfor now\b|先不|暂时|以后再说|回头再说", re.I)


def _not_taken(offered: str, text: str) -> Candidate | None:
    """A change the assistant asked about, turned down with a reason ("nah, not now. spot interruption
    mid-apply = stale locks + half-applied state"): decided against, for that reason, so that a later
    change of mind (`_reversal`) has something to replace. None without a reason: a bare "no" says
    nothing worth keeping."""
    said = R.strip_fillers(text) or text
    no = (_DECLINE.match(said) or _PUT_OFF.match(said)) if offered else None
    if no is None or (no.re is _PUT_OFF and no.group("topic").strip().casefold() not in offered.casefold()):
        return None  # ("KMP 先不搞" puts off what was offered only when the offer named KMP)
    first, *rest = R.sentences(said) or [said]
    after = first[no.end() :].strip(" ,，.。!！")
    if _DIRECTS.search(after):
        return None  # "no, use httpx": a correction that says what to do instead
    reason = R.tidy(" ".join(x for x in [after if len(after) > 10 else "", *rest[:2]] if x))
    if len(reason) < 12:
        return None
    zh = has_cjk(offered + reason)
    now = _FOR_NOW.search(said)
    # (what was offered, without the case made for it: "adding a Redis cache in front of Postgres, since …")
    what = re.split(r",?\s+(?:since|because|as it|so that|which)\b|[，,]?\s*(?:因为|这样)", offered.strip())[0].rstrip(
        "。."
    )
    if zh:
        content = f"{'暂不' if now else '不'}{what}：{reason}"
    else:
        content = f"{'Not now' if now else 'Decided against'}: {what}, because {reason[0].lower() + reason[1:]}"
    c = Candidate(R.tidy(content), layer="decision", category="decision", importance=4, why="decision (declined)")
    c.metadata.update(decision=first, declined=what, alternatives=[what], rationale=reason)
    return c


# A change of mind, with what it is about: "changed my mind on spot — put tf-runner on spot nodes",
# "spot 的事我改主意了：…".
_REVERSES = re.compile(
    r"\b(?:I'?ve |I have |we'?ve |we have |I |we )?changed (?:my|our) minds? (?:on|about) (?:the |using |going with )?"
    r"(?P<what>[^.,;:!?—–]{2,60}?)(?=\s*(?:[—–:,;.!?]|-{1,2}\s|$))|"
    r"(?P<zh>(?<![\w.+/-])[A-Za-z][\w.+/-]{0,40}|[\u4e00-\u9fff]{2,6})\s*(?:这事|这件事|的事|这块)?\s*(?:我|我们)?改主意了|"
    # "Scratch ESO. we're moving to …": the option named is taken back
    r"\bscratch\s+(?!(?:that|this|it|what|the)\b)(?P<scr>[A-Za-z][\w.+/-]{1,40})(?=\s*(?:[.,;:!—–]|-{1,2}\s|$))|"
    # a decision taken back by what it was about: "自动冲正那个决定撤回吧"
    r"(?P<back>(?<![\w.+/-])[A-Za-z][\w.+/-]{0,40}|[\u4e00-\u9fff]{2,8}?)\s*(?:那个|这个)(?:决定|方案)\s*(?:我们)?(?:先|要|得|就)?(?:撤回|撤销|作废|推翻|取消|不要了|回滚|revert\s*掉)|"
    # bad news on what was picked, then what now (`_GOES_BACK`): "bad news on the cronjob from last week: ops says
    # no more CronJobs … so back inside overdue-notifier"
    r"\b(?:bad news|change of plans?) (?:on|about|re:?) (?:the |our )?(?P<news>[A-Za-z][\w.+/-]{1,40})|"
    # a pick taken back by its number: "之前选 1 的那个决定作废"
    r"之前(?:选|定)的?\s*(?P<pick>[(（]?[A-Da-d1-4][)）]?)\s*的?(?:那个|这个)?(?:决定|方案)\s*(?:就|也)?(?:作废|撤回|撤销|推翻|取消|不要了)|"
    # "reverse the hide-below-70 thing, show low matches greyed out again"
    r"\b(?:reverse|undo|roll back|revert) (?:the |our |that )?(?P<rev>[A-Za-z][\w.+/-]{1,40}) (?:thing|decision|call|change)\b",
    re.I,
)
_GOES_BACK = re.compile(r"\bback (?:to|inside|into|in|on)\b|\binstead\b|\bno more\b|改回|退回|回到|还是用", re.I)


def _reversal(text: str) -> Candidate | None:
    """A decision said as a change of mind, with its reason (the sentence after it): what it is about is
    in `reverses`, for the ingest to close the decision it goes back on."""
    sents = R.sentences(R.strip_fillers(text) or text)
    for k, s in enumerate(sents):
        m = _REVERSES.search(s)
        if m is None:
            continue
        body = s[m.end() :].strip(" —–-:：,，")
        if len(body) < 6 and k + 1 >= len(sents) and (k == 0 or not m.group("pick")):
            return None  # "ok I changed my mind on that.": nothing said of what now
        if m.group("news") and not _GOES_BACK.search(" ".join(sents[k : k + 3])):
            continue  # bad news, and nothing taken back
        # what now, and why, in the sentences after it ("sorry for the churn" says neither); said last, in the
        # ones before it ("…要求报告必须附原图，…改成异步生成：…。之前选 1 的那个决定作废。")
        said = sents[k : k + 3] if k + 1 < len(sents) or len(body) >= 6 else sents[max(0, k - 2) : k + 1]
        content = R.tidy(" ".join(x for x in said if x is s or not R.is_chat(x)))
        c = Candidate(content, layer="decision", category="decision", importance=4, why="decision (reversed)")
        topic = next(g for g in m.groups() if g).strip(" `.,;:")
        topic = topic.split("-")[0] if m.group("rev") else topic  # ("hide-below-70": the decision said "hide")
        if m.group("pick"):
            topic = "#" + topic.strip("()（）")  # (the pick's label: `_decided_over` reads it)
        c.metadata.update(decision=s, reverses=topic.split()[0] if topic.isascii() else topic)
        if m.group("news"):
            c.metadata["alternatives"] = [m.group("news")]  # (what the bad news was about is given up)
        return c
    return None


LESSON_TURNS = 8  # turns within which a lesson the assistant draws belongs to the cause it gave before


def _lessons_with_their_cause(found: list[Candidate]) -> list[Candidate]:
    """A lesson drawn in a later message than the cause it was learnt from ("Root cause: NCCL picked
    `docker0` …" then, once the fix worked, "Multi-node run is up. Lesson: always pin NCCL_SOCKET_IFNAME …")
    joins that experience: one memory of what broke, why and what to do, as `lessons_for` should find
    it. The cause is the assistant's last experience within LESSON_TURNS turns that shares a word with
    the lesson; the lesson's own lead-in (what the run did since) is left out."""
    out: list[Candidate] = []
    for c in found:
        lesson = _LESSON_AT.search(c.content) if c.why == "assistant: a lesson" else None
        cause = next(
            (
                e
                for e in reversed(out)
                if e.layer == "experience"
                and e.role == "assistant"
                and not _LESSON_AT.search(e.content)
                and 0 < c.metadata.get("turn", 0) - e.metadata.get("turn", 0) <= LESSON_TURNS
            ),
            None,
        )
        if lesson and cause is not None and R.topic_terms(c.content[lesson.start() :]) & R.topic_terms(cause.content):
            cause.content = R.tidy(R.joined([cause.content, c.content[lesson.start() :]]))
            continue
        out.append(c)
    return out


# Where a lesson starts inside a memory ("… stepping. Lesson: …", "… 教训：…").
_LESSON_AT = re.compile(
    r"(?<![\w])(?:lessons?(?: learned)?|takeaway|the general (?:point|lesson|rule)|worth remembering)"
    r"(?: here| for [^:：\n]{1,60})?\s*[:：—]|(?:经验教训|教训|经验)(?:就是|是)?\s*[:：]|教训就是",
    re.I,
)


def _declined_own(own: list[str], reply: list[str], conceded: str) -> Candidate:
    """The decision a user's own proposal becomes when the assistant pushes back and the user lets it go
    ("I think we should switch the cache from Memcached to Redis" -> "I'd hold off: …" -> "ok fair"):
    what stays, over the switch proposed, for the assistant's reasons."""
    said = _own_said(own)
    switch = _switch(said)
    reasons = R.clip(" ".join(reply[:3]), 400)
    kept = R.CONCESSION_LEAD.sub("", conceded).strip(" ，,。.")
    if switch is not None and switch[1]:
        chosen, over = switch[1], [switch[0]]
        head = f"Keep {chosen}, not {switch[0]}" if said.isascii() else f"保留 {chosen}，不换成 {switch[0]}"
        content = f"{head} (proposed, then dropped after: {reasons})"
    elif len(kept) >= 6 and not R.CONCEDES.match(kept):  # "ods 还是 keep 30 天 TTL": what stays, in the user's words
        chosen, over = None, None
        content = f"{R.tidy(kept)} (proposed instead: {R.tidy(said)}; dropped after: {reasons})"
    else:
        chosen, over = None, None
        head = "Not done: " + R.tidy(said).rstrip(".。") if said.isascii() else "不做：" + R.tidy(said).rstrip(".。")
        content = f"{head} (proposed, then dropped after: {reasons})"
    c = Candidate(content, layer="decision", category="decision", importance=4, why="decision (declined)", role="user")
    c.metadata.update(decision=conceded, declined=said, chosen=chosen, alternatives=over, rationale=reasons)
    c.metadata = {k: v for k, v in c.metadata.items() if v}
    return c


# The lesson a cause and its fix end with: "Lesson: never hold …", "Takeaway: …", "教训：…".
_LESSON = re.compile(
    r"^\W*(?:(?:the\s+)?(?:lessons?(?: learned)?|takeaway|moral|general (?:point|lesson|rule)|worth remembering)"
    r"(?: here| for [^:：]{1,60})?(?:\s+is)?\s*[:：—]|"
    r"(?:the\s+)?(?:lesson|takeaway)(?: here)? is(?: that)?\s|(?:经验教训|教训|经验|值得记住的是|记住)(?:就是|是)?\s*[:：]|"
    r"(?:经验教训|教训|经验)就是)",
    re.I,
)
LESSON_BODY_CHARS = 600  # the explanation kept before a lesson, at most
PASTED_CHARS = 2000  # a user message this long is a pasted document (a runbook), not something said in passing
_HEADING = re.compile(r"^\s*#{1,6}\s+(?:[\d.]+\s+)?(.+?)\s*#*\s*$")
_TABLE_ROW = re.compile(r"^\s*\|(.+)\|\s*$", re.M)


def _document_lines(text: str) -> str:
    """A pasted document's lines as the sentences they mean: a heading leads the first line under it
    ("### 2.2 数据库连接失败" + "现象：…" -> "数据库连接失败：现象：…") and is never a sentence of its own; a
    table row is its cells named by the header ("| P3 | 单笔差异 | …" -> "P3：条件 单笔差异；…。")."""
    if "\n" not in text or not ("|" in text or any(map(_HEADING.match, text.split("\n")[1:]))):
        return text
    out: list[str] = []
    heading, header = "", None
    for line in text.split("\n"):
        h, row = _HEADING.match(line), _TABLE_ROW.match(line)
        if h:
            heading, header = h.group(1).rstrip("：:"), None
            continue
        if row:
            cells = [c.strip() for c in row.group(1).split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            if header is None:
                header = cells
                continue
            named = [f"{n} {c}" if n else c for n, c in zip(header[1:], cells[1:], strict=False) if c]
            line = f"{cells[0]}：{'；'.join(named)}。"
        elif not line.strip():
            header = None
        if heading and line.strip():
            colon = ": " if heading.isascii() else "："
            line = heading + colon + re.sub(r"^(?:[-*•]\s*|\d{1,2}[.)]\s+)", "", line.strip())  # (a list's marker)
            heading = ""
            if out and out[-1].strip():
                out.append("")  # a section of its own
        out.append(line)
    return "\n".join(out)


# When a change was made, said after it: "we ditched atlantis last week."
_WHEN = r"(?:\s+(?:last|this) (?:week|month|sprint|friday|monday)|\s+yesterday|\s+today|\s+recently)?"
# What the team stopped using, said alone before what replaced it: "Also we dropped Sentry. pushgate errors now go
# to Grafana Loki", "我们不用 Sentry 了。错误现在都进 Loki".
_RETIRES = r"we(?:'ve| have)? (?:dropped|removed|retired|got rid of|stopped using|no longer use|killed|ditched)"
_RETIRES_ZH = r"我们(?:已经)?(?:不用|不再用|弃用了?|去掉了?)"
_RETIRED_ALONE = re.compile(
    r"((?:^|(?<=[.!?:。！？]\s))(?:also,?\s+|oh,?\s+|btw,?\s+|heads[- ]up,?\s+)?"
    + _RETIRES
    + r" `?[\w.+-]+`?"
    + _WHEN
    + r")\.\s+(?=\S)|"
    r"((?:^|(?<=[。！？]))\s*" + _RETIRES_ZH + r"\s*`?[A-Za-z][\w.+-]*`?\s*了?)。\s*(?=\S)",
    re.I,
)
# The user holding to their proposal after a push back: "no, let's do it anyway", "还是换吧".
_INSISTS = re.compile(r"\banyway\b|\bstill (?:want|think|prefer)\b|\bdo it\b|还是(?:要|换|改|用)|坚持|照样")
_INSISTS_LEAD = re.compile(
    r"^\W*(?:no|nah|不)?[,，]?\s*(?:let'?s (?:do it|switch) anyway|I still want (?:to|it)|还是(?:要)?换吧?)[,，.。]?\s*",
    re.I,
)
# A phrase of a longer pick: two words in a row ("in-process LRU"), or four Chinese characters ("唯一索引").
_PHRASE = re.compile(r"(?=\b([A-Za-z][\w-]+\s+[A-Za-z][\w-]+)\b)|(?=([\u4e00-\u9fff]{4}))")
# What opens a new rule, not a pick: "再加一条规矩：…"
_NEW_RULE = re.compile(r"^\W*(?:再加一条|加一条|还有一条|另外|顺便|one more (?:rule|thing)|also|new rule)", re.I)


def _phrase_pick(s: str, items: Sequence[str]) -> int | None:
    """The item a longer sentence picks by a phrase only that item holds, not turned down where it
    is said ("ok let's not add Redis, an in-process LRU is plenty for now…", "别上 Redis 了，唯一索引就够了"):
    None when its phrases name no item, or more than one."""
    if R.is_question(s) or _NEW_RULE.match(s):
        return None
    holding = {k for phrase in _phrases(s) for k, x in enumerate(items) if phrase.casefold() in _spaced(x)}
    holding -= _turned_down(s, items)  # "Not gobwas/ws, too low level": no pick of what it turns down
    return holding.pop() if len(holding) == 1 else None


def _turned_down(s: str, items: Sequence[str]) -> set[int]:
    """The items a sentence names where it turns them down ("let's not add Redis", "别上 Redis 了")."""
    down: set[int] = set()
    for m in re.finditer(r"[A-Za-z][\w./+-]{2,}", s):
        if not is_stopword(m.group().casefold()) and _turned_down_at(s, m.start()):
            down |= {k for k, x in enumerate(items) if m.group().casefold() in x.casefold()}
    return down


def _turned_down_at(s: str, start: int) -> bool:
    """Whether what `s` names at `start` is turned down where it is said ("not gobwas/ws", "drop Redis")."""
    before = s[:start]
    return bool(R._NEGATED_BEFORE.search(before) or _STAYS_OFF.search(before))


def _numbered_pick(s: str) -> bool:
    """Whether a pick names its item by place or label ("B", "第二种"), not by a phrase."""
    return bool(_PICK_PLACE.match(s.strip()))


def _phrases(s: str) -> list[str]:
    """`s`'s phrases (`_PHRASE`) that are not stopwords and not turned down where they are said."""
    out = []
    for m in _PHRASE.finditer(s):
        phrase = m.group(1) or m.group(2)
        if phrase.isascii() and any(is_stopword(w) or w in _FILLER_PICKS for w in phrase.casefold().split()):
            continue
        if not _turned_down_at(s, m.start()):
            out.append(phrase)
    return out


def _spaced(x: str) -> str:
    return re.sub(r"\s+", " ", x.casefold())


# A name in code a pick may give: a package or path ("coder/websocket", "nhooyr.io/websocket").
_CODE_NAME = re.compile(r"(?<![\w./-])[A-Za-z][\w.+-]*/[\w./+-]*\w")
_STAYS_OFF = re.compile(r"\b(?:drop|off|leave|ditch|replace|instead of)\s*$|(?:换掉|去掉|不用)\s*$", re.I)


def _ordinal_item(pick: str, said: Sequence[str], listed: Sequence[str] = ()) -> str | None:
    """The numbered item of the assistant's list that a pick by place names ("第二种", "the second one")."""
    m = re.search(
        r"第([一二三四1-4])(?:种|个|条|项|套)|\b(first|second|third)\b|^(?:那就|就|选|用|go with|take)?\s*([1-4])(?![\d.])",
        R.strip_fillers(pick) or pick,
        re.I,
    )
    if not m:
        return None
    word = next(g for g in m.groups() if g).casefold()
    n = int(word) if word.isdigit() else _ORDINALS[word]
    if n <= len(listed):  # the list laid out one item a line
        return R.clip(listed[n - 1], 300)
    listed = " ".join(said[-12:])  # or in one paragraph: "两种修法：1. … 2. …"
    found = re.search(rf"(?:^|\s){n}\s*[.、)）]\s*(.+?)(?=\s+{n + 1}\s*[.、)）]\s|$)", listed)
    return R.clip(re.split(r"(?<=[。！!])\s", found.group(1).strip())[0], 300) if found else None


def _loose(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name.casefold())


_OPTION_NAMED = re.compile(r"\b(?:option|plan)\s+([A-Da-d1-4])\b|方案\s*([A-Da-d1-4])(?![\w])", re.I)
BARE_AGREEMENT_CHARS = 40  # an answer this short to a proposal is about it ("Agreed, let's go with that.")


def _bears_on(answer: Sequence[str], proposal: Sequence[str]) -> bool:
    """Whether the user's choice (its sentence and the two after it) answers the proposal: a short
    answer, one that names what the proposal names, or one sharing its topic words."""
    first = R.strip_fillers(answer[0]) or answer[0]
    if len(first) < BARE_AGREEMENT_CHARS:
        return True
    chosen = R.chosen_of(first)
    offered = " ".join(proposal)
    if chosen and chosen.casefold() in offered.casefold():
        return True
    return bool(_subject_terms(" ".join(answer)) & _subject_terms(offered))


def _subject_terms(sentence: str) -> set[str]:
    """A sentence's topic words, less those of the addresses it gives: "broker 地址是 kafka-1.internal:9092"
    is about the broker's address, not about the Kafka client named in the sentence before."""
    return R.topic_terms(_ADDRESS_VALUE.sub(" ", sentence))


_SECRET_URL = re.compile(r"\S*\[REDACTED:[^\]]*\]\S*")
# What makes a sentence about a secret worth keeping: where it lives or what it connects to (an
# environment variable, a config key, a host or an address), not the value.
_NAMES_A_PLACE = re.compile(
    r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b[a-z][\w-]*(?:\.[a-z][\w-]*)+\b"
)


# The assistant's first words after a choice, when they spell out what it will do: "Then I'll add a
# nextest `ci` profile with `test-threads = 4`", "好，那我把扫描间隔改成 5 分钟".
_PLAN = re.compile(
    r"^(?:(?:ok(?:ay)?|sure|right|got it|then|so)[,.!]?\s+)*(?:then\s+)?I(?:'ll| will)\s+(?!check|look|take a look|see)\w+|"
    r"^(?:好的?|行|嗯|OK)?[，,。！!\s]*(?:那)?我(?:先|来|会|就)?(?:把|改|加|换|用|删|写|建)",
    re.I,
)


# -- user turns --------------------------------------------------------------------------------

_FACT = ("statement", "config", "note", "location", "command", "environment", "version", "convention")
_RANK = {"decision": 6, "correction": 5, "rule": 5, "preference": 5, "change": 4}


# A pick by letter or place at a sentence's start: "(b), 帮我写一下", "2，你先改", "第二种，帮我…".
_BY_PLACE = re.compile(
    r"\W*(?:(?:option\s*)?[(（]?[A-Da-d1-9][)）]?(?=[\s,，.。:：]|$)|第[一二三四1-4]\s*(?:种|个|条|项)?)", re.I
)
_ASKS_HELP = re.compile(
    r"^(?:那|那就|最后|然后|另外)?(?:先|再)?(?:帮我|请帮|帮忙|请你|给我|你(?:顺手|顺便|先|再|就)?(?:把|帮|去|来))|"
    r"^(?:can|could|would) (?:you|u)\b",
    re.I,
)


# A dotted name in code: an event, a topic, a module (booking.created.v1, tms.cold.temp.v2).
_DOTTED_NAME = re.compile(r"(?<![\w./-])[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){2,}(?![\w/-])")


# A task handed to the assistant after a choice is no reason for it: "topic 和消费组你想个名字", "名字你定".
_LEFT_TO_YOU = re.compile(
    r"你(?:来)?(?:想|起|定|取|看着|决定|挑)|\b(?:up to you|your call|you (?:pick|choose|name))\b", re.I
)


def _decision(
    sents: list[str], proposal: list[str], said: list[str] = (), listed: list[str] = (), heading: str = ""
) -> tuple[Candidate | None, set[int]]:
    """A decision stated across sentences and turns: the user's choice ("merge it is", "定了：…") or
    their agreement to what the assistant just proposed ("Agreed", "就这么办"), with the reasons
    that follow it in the turn and the proposal it answers. None when the turn settles nothing."""
    start = None
    sents = list(sents)
    for j, raw in enumerate(sents):
        s = R.strip_fillers(raw) or raw
        if R.is_question(s):
            # "用 pushy 吧，it handles the token refresh itself right?": a choice, then a tag question
            head = re.split(r"\s*(?:[，,;；]|—|--)\s*", s, maxsplit=1)[0]
            picked = R.chosen_of(head) or (_short_pick(head, proposal, said) or [None, None])[1]
            if (
                head == s
                or not _TAG_QUESTION.search(s)
                or R.is_question(head)
                or not (R.is_choice(head) or _short_pick(head, proposal, said))
                or not (proposal or (picked and picked.casefold() not in R.VAGUE_CHOICES))
            ):
                continue
            sents[j] = raw = head
            s = R.strip_fillers(raw) or raw
        # (the first sentence, or a later one naming an item by its letter or place: "ugh, the coffee machine.
        # anyway. talked to tomek, go with (a)")
        pick = _list_pick(_PICK_VERB.sub("", s), listed) if listed and (j == 0 or _NAMES_ITEM.search(s)) else None
        if R.suggests(s) and pick is None:
            continue  # "maybe we should switch to Kafka": floated, not chosen
        if pick is None and _LEAVING.search(s) and not R.is_choice(s):
            continue  # "ok I need to run - review at 2pm": the day, not a choice
        if _RULED_OUT.search(s) and not R.is_choice(_RULED_OUT.sub(" ", s)):
            continue  # "Redis 那个不考虑，上次 Redis 主从切换丢过锁": one option ruled out, none chosen (unlike
            # "不考虑 Kafka 了，就用 RabbitMQ")
        if _ASKS_HELP.match(s) and pick is None:
            continue  # "先帮我看下 repo 结构吧": a task asked for, whatever 吧 ends it
        if pick is None and "[REDACTED:" in privacy.redact(s):
            continue  # "用 staging 库试，连这个：postgresql://…": where to try it, a credential handed over, no choice
        if (
            not R.is_choice(s)
            and not _BY_PLACE.match(s)
            and any(_ASKS_HELP.match(x.strip()) for x in re.split(r"[，,;；:：]", s)[1:])
        ):
            continue  # "canary 起不来，帮我看下：": a problem reported and help asked for, though it names an item
        if (
            pick is None
            and R.REJECTS.search(s)
            and (R.is_chat(s) or not R.alternatives(s))
            and not R.CHOICE.search(R.REJECTS.sub("", s))
        ):
            continue  # "let's not run the migrations yet": a step put off, not an option turned down
        # "decorator." answering "I'd use the decorator."; "postgres, the team knows it" answering "Postgres or
        # MySQL?"; "B" answering "Option A: … Option B: …"
        # "(b)，…" after "(a) …，(b) …": a letter needs no proposal words before it
        lettered = re.match(r"[(（][A-Da-d1-4][)）]", s.strip())
        # "行，KCP。" after "可选：1. KCP（kcp-go）… 2. QUIC …": an item of a numbered list, named
        named = (
            (proposal or listed or lettered) and j == 0 and _names_option(s, proposal + list(listed) + list(said[-8:]))
        )
        # "Redis 吧，infra 有现成的": an option the assistant just laid out, picked by its name alone (after
        # the reason, too: "Kafka 太重了，我们不需要 replay。NATS 吧，…")
        bare = j <= 2 and re.match(r"^`?([A-Za-z][\w.+-]{1,30}(?: [A-Za-z][\w.+-]{1,30})?)`?\s*吧", s)
        offered = bare and any(bare.group(1).casefold() in x.casefold() for x in said[-8:])
        short = j == 0 and _short_pick(s, proposal, said)
        takes = proposal and j <= 2 and R.TAKES.match(raw) and not R._NARRATIVE.match(s)
        if (
            pick is not None
            or R.is_choice(raw)
            or R.is_choice(s)
            or (proposal and j == 0 and R.agrees(raw) and not _DEFERS.search(raw))
            or named
            or offered
            or short
            or takes
        ):
            start = j
            break
    if start is None:
        return _use_over(sents)
    if proposal and pick is None and not named and not lettered and not _bears_on(sents[start : start + 3], proposal):
        # "所以上周五我和 Vivian、老王一起定了：以后凡是…模型…先走 5% 灰度" after "建议直接问维护人周婷…": a choice
        # of its own, made after an unrelated suggestion, is no agreement to it
        proposal = []
    letter = named if isinstance(named, str) else R.chosen_of(sents[start]) or ""
    lettered_by_name = _OPTION_NAMED.search(sents[start])
    if lettered_by_name and pick is None and not named:  # "We'll go with option B from this doc", "选方案 B"
        letter = "option " + (lettered_by_name.group(1) or lettered_by_name.group(2))
    others: list[str] = []  # the options of a list the pick did not take: what it passed over
    if pick is not None:  # "B", "1。", "Coalesce." after a list: that item, over the others
        proposal = [R.clip(" ".join(filter(None, [heading, listed[pick]])), 300)]  # (the heading names what it decides)
        others = [x for k, x in enumerate(listed) if k != pick]
        letter = named = ""
    if len(letter) >= 2 and (len(proposal) > 1 or (not proposal and isinstance(named, str))):
        # "双跑。" after "1. 直接切：… 2. 双跑一周：…", "直接换 coder/websocket" after three: that one
        naming = [x for x in proposal or listed if letter.casefold() in x.casefold()]
        others = [x for x in proposal or listed if x not in naming] if len(naming) == 1 else []
        proposal = naming if len(naming) == 1 else proposal
    item = (
        _ordinal_item(sents[start], said, listed) if pick is None and not re.search(r"[A-Za-z]{3,}", letter) else None
    )
    if item:  # "第二种。" after "两种修法：1. … 2. …": the second item is what was decided
        clipped = [R.clip(x, 300) for x in listed]
        others = [x for x, c in zip(listed, clipped) if c != item] if item in clipped else []
        proposal = [item]
    by_letter = bool(re.fullmatch(r"(?:option\s*)?[(（]?[A-Da-d1-4][)）]?", letter, re.I))
    if by_letter:
        # "B" or "let's go with B" answering "Option A: … Option B: …", "(b)." answering "(a) … (b) …": the
        # option it picks is what was decided
        rx = _option_letter(letter.strip("()（）")[-1])
        # "do you want (a) backoff with jitter, or (b) a fixed retry?": the part from its letter to the next
        picked = [_from_letter(x, rx) for x in list(said) + list(proposal) if rx.search(x)][-1:]
        proposal = list(dict.fromkeys(picked + [x for x in proposal if not rx.search(x)]))
    used = {start}
    parts = [sents[start]]
    before = _reason_before(sents, start, used)
    picked_label = re.match(r"\W*(?:option\s*)?[(（]?([1-4A-Da-d])\b", sents[start], re.I)
    for k in range(start + 1, min(len(sents), start + 3)):  # the reasons said right after the choice
        nxt = sents[k]
        other = _AGAINST_OPTION.match(nxt)
        named_off = (
            _REJECTS_NAMED.search(nxt)
            and not R.is_choice(nxt)
            and bool(_subject_terms(nxt.split("不行")[0]) & _subject_terms(" ".join(others or listed or proposal)))
        )  # "直接切也不行，…" after "按 A 来" among "B. 直接切：…"
        if named_off or (
            other and (picked_label is None or other.group(1).casefold() != picked_label.group(1).casefold())
        ):
            parts.append(nxt)  # "B。A 不行，合同里写死了…。C 也解决不了…": why the others were not taken
            used.add(k)
            continue
        found_rule = R.RULE.search(nxt)
        # after a pick by its number, "those are edit distance over words, not trigram overlap" says why, it
        # orders nothing (the only rule-like words an "is/are X, not Y")
        described = bool(
            picked_label is not None
            and found_rule
            and re.match(r"(?:is|are)\s", found_rule.group(0), re.I)
            and not R.RULE.search(nxt[: found_rule.start()] + " " + nxt[found_rule.end() :])
        )
        rule = (
            found_rule and not described and not R.LACKS.search(nxt) and not R.WANT_REASON.search(R.strip_fillers(nxt))
        )
        if (
            R.is_question(nxt)
            or R.is_chat(nxt)
            or rule
            or len(R.strip_fillers(nxt)) < 4
            or _CORRECTS.match(nxt)
            or _ASKS_HELP.match(R.strip_fillers(nxt))
            or _LEFT_TO_YOU.search(nxt)
            or "[REDACTED:" in privacy.redact(nxt)  # (the key handed over for the work, no reason for the choice)
            or R.owner_of(nxt)  # ("alarm-center 是大刘负责的，上线前让他 review": who owns it, news of its own)
        ):
            break
        if _NEW_TOPIC.match(nxt) and (R.replaced_values(nxt) or R.marks_change(nxt) or R.value_slots(nxt)):
            break  # "对，notify 的不动。另外之前说的 on-call 阿杰作废，…": news of its own, not the reason
        if re.search(r"\bbtw\b|\bby the way\b|顺便|另外", nxt, re.I) and R.replaced_values(nxt):
            break  # "b. … ImageSharp is gone btw, we moved photo-resizer to NetVips": likewise
        hit = R.classify_user(nxt)
        if (
            hit is not None
            and hit[1] in ("rule", "preference", "correction")
            and not R.WANT_REASON.search(R.strip_fillers(nxt))
            and not described
        ):
            break
        parts.append(nxt)
        used.add(k)
    context = list(said)
    said = " ".join(R.strip_fillers(p) or p for p in parts)
    alts = R.alternatives(said + " " + " ".join(proposal), R.chosen_of(said))
    if not alts and others:  # "第二种" after "1. 保持段位 bucket：治标 2. MMR window…": over the first
        alts = [_option_head(x) for x in others][:3]
    whole = said + " " + (before or "")
    specific = (
        R.is_statement(whole)
        or bool(re.search(r"[A-Za-z]{3,}|\d", whole))
        or (sum(map(R.entities_cjk, whole)) >= 6 and bool(R.STRONG_CHOICE.search(said)) and not R.is_chat(said))
    )
    strong = bool(R.STRONG_CHOICE.search(said)) or short
    # "那就 PostgreSQL 吧，MySQL 的 JSON 支持太弱了": the clause after the choice gives its reason
    clause = _clause_reason(parts[0], bool(named) or pick is not None) if len(parts) == 1 else None
    by_name = bare.group(1) if offered else None  # "NATS 吧": the option named outranks a "用 X" in what follows
    # ("就 Redis Set。" after "可以把名单放进 Redis Set…；或者…布隆过滤器": the option named, alone)
    alone = re.match(
        r"^(?:那就|就用|就|用)\s*`?([A-Za-z][\w.+/-]*(?: [A-Za-z][\w.+/-]*)?)`?\s*吧?\s*[。.!！]?$", said.strip()
    )
    picked = by_name or R.chosen_of(said) or (alone.group(1) if alone else None)
    # "用 header 吧" after "两个改法：1. … header `X-Accel-Buffering: no` 2. …": it picks one of the options
    offered = bool(picked and len(picked) >= 3 and any(picked.casefold() in x.casefold() for x in context[-8:]))
    if (
        not proposal
        and not (
            alts or R.RATIONALE.search(said) or len(parts) > 1 or strong or before is not None or offered or clause
        )
        or not specific
        and not proposal
    ):
        return None, set()
    then = re.match(r"^`?([\w.+/-]+(?:\s+[\w.+/-]+){0,2}?)`?\s+then\b", said, re.I)  # "Run number then, …"
    chosen = R.chosen_of(said) or picked or (then.group(1) if then else None)
    if not proposal and chosen and len(chosen) >= 3:  # "go with manifest": the option it names, in full
        # "Run number then" names GITHUB_RUN_NUMBER: compared without spaces, dashes and underscores
        naming = [x for x in context if _loose(chosen) in _loose(x)]
        # the option that names it in code (`LoadMode.DBT_MANIFEST`) first, then the latest mention
        coded = [x for x in naming if re.search(r"`[^`]*" + re.escape(chosen) + r"[^`]*`", x, re.I)]
        proposal = list(dict.fromkeys(coded[:1] + naming[-1:]))
    content = R.tidy(said) or "Agreed."  # a bare "ok" is stripped as a filler: the proposal says it all
    if proposal:
        content = content.rstrip() + " (agreed to the proposal: " + R.clip(" ".join(proposal), 300) + ")"
    decision, rationale = R.split_rationale(said)
    if rationale is None and len(parts) > 1:
        decision, rationale = parts[0], " ".join(parts[1:])
    at = next((k for k, x in enumerate(context) if proposal and x == proposal[0]), 0)
    if rationale is None and at and _PROBLEM_BEFORE.search(context[at - 1]):
        # "We export PDF/X-4, …, but PrintHaus's Harlequin RIP rejects it. I'd propose flattening …" -> "ok, X-1a.":
        # the problem said right before the proposal is why it was agreed to
        rationale = context[at - 1]
        head, sep, tail = content.partition(" (agreed to the proposal:")
        content = head.rstrip() + " " + R.tidy(rationale) + sep + tail
    if rationale is None and clause:
        decision, rationale = parts[0][: -len(clause)].rstrip(" ,，;；"), clause
    if not alts and rationale and R.AGAINST.search(rationale):
        # "Temporal is overkill for one nightly job": the reason names the option passed over
        alts = _named_against(rationale, " ".join(filter(None, [decision, R.chosen_of(said), picked or ""])))
    if before is not None:
        # "延时队列没人运维，不值当。定时任务就行": the reason came first; it leads the memory
        used.add(start - 1)
        content = R.tidy(before) + " " + content
        rationale = " ".join(x for x in (before, rationale) if x)
        if not alts and R.AGAINST.search(before):  # "Kafka 太重了 … NATS 吧": the option it speaks against
            alts = _named_against(before, " ".join(filter(None, [decision, picked or ""])))
        alts = _merged(alts, R.alternatives(before))  # "ES 不要，没人运维。A 吧": the option it turns down
    chosen = (
        None
        if by_letter
        else (
            by_name
            or R.chosen_of(said)
            or (short.group(1) if short else None)
            or (named if isinstance(named, str) else None)
        )
    )
    naming = [
        x for x in context if chosen and len(chosen) >= 3 and _loose(chosen) in _loose(x) and not R.is_question(x)
    ]
    if proposal and naming and all(R.is_question(x) for x in proposal):
        # "bucket。" to "bucket 还是 backoff？" after the options were laid out: the option it names, in full
        content = content.replace(R.clip(" ".join(proposal), 300), R.clip(naming[-1], 300), 1)
        alts = alts or _listed_besides(" ".join(proposal), chosen)  # (what the question set against it)
        proposal = naming[-1:]
    if proposal and (not chosen or chosen.casefold() in R.VAGUE_CHOICES or re.fullmatch(r"\W*\w\W*", chosen)):
        # "Agreed, let's go with that": what was chosen, and why, is what the proposal said
        chosen = R.proposed_of(" ".join(proposal)) or chosen
        if rationale is None:
            rationale = R.split_rationale(" ".join(proposal))[1]
    elif (
        proposal
        and rationale is None
        and chosen
        and chosen.casefold() == (R.proposed_of(" ".join(proposal)) or "").casefold()
    ):
        rationale = R.split_rationale(" ".join(proposal))[1]  # "go with Temporal" after "I suggest Temporal because …"
    if chosen and chosen.casefold() in R.VAGUE_CHOICES:
        chosen = None  # ("go with the first": the item below names it)
    by_place = pick is not None and _numbered_pick(sents[start])
    if by_place and chosen and chosen.casefold() not in listed[pick].casefold():
        chosen = None  # "3. translators …, keep the GIN index": the item picked is the choice, not what else is named
    if pick is not None and not chosen:  # "B", "OK, from now on we use coder/websocket": the item's name,
        # or the phrase of the pick that named it ("…an in-process LRU is plenty…": in-process LRU)
        named_by = [p for p in _phrases(sents[start]) if p.casefold() in _spaced(listed[pick])]
        chosen = (named_by[0] if named_by and not _numbered_pick(sents[start]) else _option_head(listed[pick])).strip(
            "`"
        )
        chosen = chosen or None
    if others:  # every item the pick passed over, not only the ones its sentence names
        # (not what the picked item itself says it avoids: "…returns the existing claim instead of creating one")
        own = listed[pick].casefold() if pick is not None else ""
        alts = [a for a in alts if a.casefold() not in own]
        named = {_option_head(x) for x in others} & set(alts)  # (each option once: by its name if it has one)
        alts = _merged(alts, [_short_head(x) for x in others if _option_head(x) not in named])[:4]
    elif not alts and chosen and proposal:  # "we could keep self-hosting Nominatim, …, or try Mapbox": the others
        alts = _listed_besides(" ".join(proposal), chosen)
    removed = re.match(
        r"(?:remove|drop|rip out|get rid of|retire)\s+(?:the\s+)?`?((?-i:[A-Z])[\w.+/-]*)", chosen or "", re.I
    )
    if removed:  # "remove LWT completely": what it takes out is what it passes over
        alts = [*alts, removed.group(1)] if removed.group(1) not in alts else alts
    if by_place and others:  # ("3. … over words, not trigram overlap": a plain word the reason contrasts is no option)
        offered = " ".join(others).casefold()
        alts = [a for a in alts if not re.fullmatch(r"[a-z]+", a) or a in offered]
    alts = [a.rstrip(" ?？") for a in alts]  # ("…, or show them greyed out?": the question's mark is no part of it)
    c = Candidate(content, layer="decision", category="decision", importance=4, why="decision", role="user")
    c.metadata.update(
        decision=R.strip_fillers(decision) or decision,
        rationale=rationale,
        alternatives=alts or None,
        chosen=chosen,
        proposal=" ".join(proposal) or None,
        picked=pick + 1 if pick is not None else None,  # the item's place, for a reason that names it later
    )
    c.metadata = {k: v for k, v in c.metadata.items() if v}
    return c, used


# A question that only asks to confirm what was just said: "…, right?", "…, doesn't it?", "…对吧？".
_TAG_QUESTION = re.compile(
    r"(?:\b(?:right|correct|isn'?t it|doesn'?t it|don'?t they|aren'?t they|no|yes)|对吧|是吧|吧|吗|对不对|没错吧)\s*[?？]\s*$",
    re.I,
)
_FILLER_PICKS = frozenset(
    "ok okay fine alright right and so but well sure yes no that this it them those these good great".split()
)


_ASKS_WHICH = re.compile(r"\bor\b|还是", re.I)
# A question that asks for a choice: "should we switch?", "你觉得 Drizzle 还是 Kysely？", "要不要上 Kafka？"
_ASKS_DECISION = re.compile(
    r"\b(?:should|shall) (?:we|i)\b|\bdo we (?:want|need)\b|\bworth (?:it|switching|moving)\b|\bor\b|"
    r"要不要|该不该|值不值得|还是|换不换|用不用|上不上|"
    # asking how to deal with a problem: "…重复记账，怎么处理比较好？", "how should we handle the retries?"
    r"怎么(?:处理|办|做|解决|搞|弄|修)|如何(?:处理|解决|做|应对)|有什么(?:办法|方案|好办法)|"
    r"\bhow (?:should|do|would|can) we (?:handle|fix|deal|solve|approach|stop|avoid)\b|\bwhat(?:'s| is) the (?:best|right) way\b",
    re.I,
)
_AGREE_LEAD = re.compile(r"^(?:行|好的?|可以|嗯|ok(?:ay)?|sure|yes|yeah|yep)\s*[，,]\s*(?=\S)", re.I)


# A pick that names an item of a list by its letter or place: "(a)", "option 3", "选 B", "第二种".
_NAMES_ITEM = re.compile(
    r"[(（][A-Da-d1-4][)）]|\boption\s*(?:[A-Da-d1-4]|one|two|three|four)\b|选\s*[A-Da-d1-4]\b|第[一二三四1-4][种个条]|"
    r"按\s*[A-Da-d1-4](?![\w.])|\b(?:go(?:ing)? with|do)\s*[A-Da-d1-4]\b|^\W*[A-Da-d1-4]\s*吧",
    re.I,
)
# News of its own after a choice, not its reason: "另外之前说的 on-call 阿杰作废", "fyi marta renamed the table …".
_NEW_TOPIC = re.compile(
    r"^\W*(?:另外|还有|顺便|对了|话说回来|再(?:加|补|建|开|做)(?:个|一个|一条|上)|also\b|btw\b|fyi\b|by the way\b|one more thing\b|another thing\b|oh,? and\b|"
    r"(?:that|having said that|that being) said\b|(?:one )?last thing\b|最后(?:一个|一件|一点|说一下)?[，,：:])",
    re.I,
)


def _from_letter(sentence: str, rx: re.Pattern) -> str:
    """The option a letter labels in a sentence that lists several ("(a) X, or (b) Y": "(a) X")."""
    m = rx.search(sentence)
    rest = sentence[m.start() :]
    nxt = re.search(
        r"[,，;；]?\s*(?:or\s+|或者?\s*)?(?:[(（][A-Da-d1-4][)）]|\boption\s*[A-Da-d1-4]\b)",
        rest[m.end() - m.start() :],
        re.I,
    )
    return rest[: m.end() - m.start() + nxt.start()].strip() if nxt else rest.strip()


def _merged(names: Sequence[str], more: Sequence[str]) -> list[str]:
    """`names` and then those of `more` that neither hold nor are held by one already there."""
    out = list(names)
    for m in more:
        if m and not any(m.casefold() in n.casefold() or n.casefold() in m.casefold() for n in out):
            out.append(m)
    return out


_OPTION_VERB = re.compile(
    r"^(?:(?:we|you) (?:could|can|might)\s+)?(?:either\s+)?(?:keep|stay on|move to|switch to|try|use|go with|adopt)?\s*",
    re.I,
)


# Two or three options put as a question: "Kafka or Redis Streams?", "Postgres SKIP LOCKED or Redis", "用 Kafka
# 还是 RabbitMQ？" (a name and the capitalised words that go on naming it).
_OPTION_NAME = r"[A-Za-z][\w.+/-]*(?:\s+(?-i:[A-Z])[\w.+/-]*)*"
_QUESTION_OPTIONS = re.compile(
    rf"(?<![\w.+/-])({_OPTION_NAME})(?:\s*[,，、]\s*({_OPTION_NAME}))?\s*[,，]?\s*(?:\bor\b|还是|或者)\s*({_OPTION_NAME})",
    re.I,
)


def _pick_among_asked(decision: Candidate, asked: str) -> None:
    """A pick among the options a question named ("should we use Kafka or Redis Streams …?" -> "let's go with
    Redis Streams"): the option chosen in full, the others as what it passed over (a blind trial's decision had
    kept "Redis" chosen over "much lighter")."""
    chosen = decision.metadata.get("chosen")
    m = _QUESTION_OPTIONS.search(asked)
    if not chosen or m is None:
        return
    said = [re.sub(r"^(?:[a-z]+\s+)+(?=[A-Z])", "", o) for o in m.groups() if o]  # ("use Kafka": the name)
    options = [o for o in said if R.known_tech(o) or re.search(r"[A-Z0-9._/-]", o)]
    full = next((o for o in options if o.casefold().startswith(chosen.casefold())), None)
    if full is None or len(options) < 2:
        return
    decision.metadata["chosen"] = full
    decision.metadata["alternatives"] = [o for o in options if o != full]


def _listed_besides(proposal: str, chosen: str) -> list[str]:
    """The other options of a list said in prose ("we could keep self-hosting Nominatim, move to Google
    Maps Platform, or try Mapbox"), for a pick of one of them by name."""
    for sentence in R.sentences(proposal):
        if chosen.casefold() not in sentence.casefold():
            continue
        body = re.sub(r"^[^:：]{0,60}[:：]\s*", "", sentence.rstrip(" .。"))
        items = [x.strip() for x in re.split(r",\s*(?:or\s+)?|\s+or\s+|、|或者|还是", body) if x.strip()]
        if len(items) < 2:
            continue
        others = [_OPTION_VERB.sub("", x).strip() for x in items if chosen.casefold() not in x.casefold()]
        return [x for x in others if x and len(x.split()) <= 6][:3]
    return []


def _option_letter(key: str) -> re.Pattern:
    """Where an option is labelled by a letter or a digit: "Option B", "方案 B", "(b) …"."""
    k = re.escape(key)
    return re.compile(r"\boption\s*" + k + r"\b|方案\s*" + k + r"|[(（]" + k + r"[)）]", re.I)


_PICK_VERB = re.compile(r"^(?:那就|就)?(?:走|用|选|上|采用)(?=[\u4e00-\u9fff]{2})")  # ("走异步。", "用异步")


def _names_option(s: str, offered: list[str]) -> str | None:
    """The option a user's first words only name, of those just put to them: the whole sentence, or its
    head before a comma when that is a specific name (a known technology, capitals, digits)."""
    text = " ".join(offered).casefold()
    letter = re.fullmatch(r"(?:option\s*)?[(（]?([A-Da-d1-4])[)）]?\s*[.!。]?", s.strip(), re.I) or re.match(
        r"[(（]([A-Da-d1-4])[)）]\s*[，,]",
        s.strip(),  # "(a)，团队都用过 Flyway"
    )
    if letter:
        return f"({letter.group(1)})" if _option_letter(letter.group(1)).search(text) else None
    s = _AGREE_LEAD.sub("", s.strip()) or s  # "行，KCP。"
    head = re.split(r"\s*[，,;；.。:：—]\s*", s.strip(), maxsplit=1)[0]
    head = re.sub(r"^(?:那就|就)?按\s*", "", head)  # "按 24 小时" answering "24 小时 … 12 小时 …"
    verb = _PICK_VERB.match(head)  # "走异步。": the option is 异步
    head, s = (head[verb.end() :], s.strip()[verb.end() :]) if verb else (head, s)
    words = re.findall(r"[A-Za-z_][\w.+-]{2,}|\d[\d.]*|[\u4e00-\u9fff]{2,}", head)
    if R._REQUEST.match(head):
        return None  # "fix it" answering "fix the test or leave it?": the task, not an option
    if not words or len(head) > 30 or len(head.split()) > 3 or not all(w.casefold() in text for w in words):
        return None
    if head.strip(" .。!") == s.strip(" .。!"):
        return head
    specific = (
        entities.category_of(w) or w.casefold() in entities.OTHER_TECH or re.search(r"[A-Z]|\d", w) for w in words
    )
    return head if any(specific) or re.search(r"[A-Za-z][/._][A-Za-z]", head) else None  # ("lat/lng", a name too)


def _short_pick(s: str, proposal: list[str], said: list[str]) -> re.Match | None:
    """A verbless pick ("pnpm then.", "Vite over webpack.", "httpx, not requests."): a choice when what it
    names is something specific (a known technology, a name in code or with digits or capitals) or an
    option just talked about, not a filler ("ok then.")."""
    m = R.SHORT_PICK.match(s)
    if not m or R.is_question(s):
        return None
    name = m.group(1).strip("` ")
    if name.casefold() in _FILLER_PICKS or name.split()[0].casefold() in _FILLER_PICKS:
        return None
    context = " ".join(list(said)[-8:] + list(proposal)).casefold()
    known = entities.category_of(name) or name.casefold() in entities.OTHER_TECH
    specific = bool(re.search(r"\d|[._/-]|[a-z][A-Z]|^[A-Z]{2,}", name))
    return m if known or specific or (len(name) >= 3 and name.casefold() in context) else None


def _clause_reason(sentence: str, picked: bool = False) -> str | None:
    """The clause after a choice's comma when it gives a reason ("就用 RocketMQ 吧，运维已经有现成的集群",
    "We'll use Litestream for the backups, it streams the WAL to S3"): a statement, not another order."""
    m = re.search(r"[，,;；]\s*", sentence)
    if not m:
        return None
    head, tail = sentence[: m.start()], sentence[m.end() :].strip()
    if not picked and not R.is_choice(head) and not R.SHORT_PICK.match(R.strip_fillers(head) or head):
        return None
    if len(tail) < 8 or R.is_question(tail) or R.is_chat(tail) or R._REQUEST.match(tail):
        return None
    rule = R.RULE.search(tail) and not R.LACKS.search(tail) and not R.WANT_REASON.search(tail)
    return None if rule else tail


def _use_over(sents: list[str]) -> tuple[Candidate | None, set[int]]:
    """A choice said as a use, then a reason against another option it names: "前端状态管理用 Zustand。Redux
    的模板代码太多了。", "We use Vitest for the unit tests. Jest was too slow with ESM." A decision over it."""
    for j in range(len(sents) - 1):
        first, nxt = R.strip_fillers(sents[j]) or sents[j], R.strip_fillers(sents[j + 1]) or sents[j + 1]
        m = R.USES.search(first)
        if not m or R.is_question(first) or R.is_question(nxt) or _REQUEST_OR_CHAT(first) or not R.AGAINST.search(nxt):
            continue
        chosen = next(g for g in m.groups() if g)
        other = _named_against(nxt, first)
        if not other:
            continue
        said = first.rstrip(" 。.") + ("。" if R.entities_cjk_any(first) else ".") + " " + nxt
        c = Candidate(R.tidy(said), layer="decision", category="decision", importance=4, why="decision", role="user")
        c.metadata.update(decision=first, rationale=nxt, alternatives=other[:2], chosen=chosen)
        return c, {j, j + 1}
    return None, set()


def _named_against(reason: str, chosen_text: str) -> list[str]:
    """The technologies a reason speaks against, less the one chosen ("MySQL 的 JSON 支持太弱了")."""
    out = [
        w
        for w in re.findall(r"`?([A-Za-z][\w.+/-]{1,30})`?", reason)
        if w.casefold() not in chosen_text.casefold()
        and w.casefold() not in _NOT_NAMES
        and (entities.category_of(w) or w.casefold() in entities.OTHER_TECH or re.search(r"[A-Z]", w))
    ]
    return list(dict.fromkeys(out))[:1]  # the first named is what the complaint is about


_NOT_NAMES = frozenset(
    """the we it this that our they a an and but so no not i its there also plus then way too its it's
    json api sql http https url id ui ux ci cd pr mr ok""".split()
)


def _REQUEST_OR_CHAT(s: str) -> bool:
    return bool(R._REQUEST.match(s) or R.is_chat(s) or R._NARRATIVE.match(s) or R.CHAT.search(s))


def _reason_before(sents: list[str], start: int, used: set[int]) -> str | None:
    """The sentence right before a choice in the same message, when it gives the reason ("the static
    pool feels hacky and tests would trample each other. go with sqlx::test"): a statement, not a
    question, a request or a rule of its own."""
    if start == 0 or (start - 1) in used:
        return None
    prev = R.strip_fillers(sents[start - 1]) or sents[start - 1]
    if len(prev) < 8 or R.is_question(prev) or R.is_chat(prev) or R._REQUEST.match(prev) or _DAYS_TASK.match(prev):
        return None
    owned = R.owner_of(prev) or R.oncall_of(prev)
    if owned and (owned[1][:1].isupper() or owned[1] in {n for n, _, _ in zhnames.find(prev)}):
        return None  # "1）release 现在归小林管了；2）yaml-rust2 换成 saphyr 了": news of its own, no reason
    hit = R.classify_user(prev)
    # "Kafka 太重了，我们不需要 replay", "C 不要，MirrorMaker 还得有人运维"
    against = R.AGAINST.search(prev) or R.WANT_REASON.search(prev) or _AGAINST_OPTION.match(prev)
    if hit is not None and hit[1] in ("rule", "preference", "correction", "decision") and not against:
        return None
    return prev


# Turning a proposal down: "no, not now", "不用，crontab 够了", "算了".
_DECLINE = re.compile(
    r"^\W*(?:no|nah|nope|not now|not yet|不用|不要|不了|算了|先不|还是不)\b|^\W*(?:不用|不要|不了|算了|先不|还是不)",
    re.I,
)

# What a correction says to do instead ("no, use httpx"): then the sentence is kept.
_DIRECTS = re.compile(r"\b(?:use|using|should|instead|must|always|never|don'?t)\b|用|应该|改成|换成|必须|别", re.I)

DOCUMENT_CHARS = 600  # a message this long that asks to be remembered is kept whole
# Beside "remember", how a pasted document is handed over to be kept: "runbook, keep this:".
_KEEP_DOCUMENT = re.compile(r"\b(?:keep (?:this|it)|save (?:this|it)|for (?:future )?reference)\b", re.I)


PASTED_DOCUMENT_CHARS = 800  # a pasted document this long (a Han character counts 3) is kept whole
# What makes a pasted text a document rather than a long message: its headings, table rows and list items.
_DOC_HEADING = re.compile(
    r"^\s*(?:#{1,6}\s+\S.*|\*\*[^*\n]{1,60}\*\*[:：]?|[一二三四五六七八九十]{1,3}[、.]\s*\S.{0,40}|\S.{0,60}\n[=-]{3,})\s*$",
    re.M,
)
_DOC_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)]|\[[ x]\])\s+\S", re.M)
# Said to the assistant around a document, not part of it: a question, a request, a decision.
_SAID_AROUND = re.compile(
    r"[?？]|\b(?:can|could|would|will) you\b|\bplease\b|\blet'?s\b|\bwe(?:'ll| will| are going| decided)\b|"
    r"\bI(?:'d| would)? (?:want|need|think|like)\b|\b(?:help|tell|walk|show|give) me\b|\b(?:here'?s|here is|"
    r"attached|pasting|below is)\b|\b(?:for|during) (?:this|today|the)\b|帮我|帮忙|请你?|你(?:看|帮|觉得|先)|"
    r"我们(?:决定|就用|打算|今天|这次)|看一下|看看|这是|下面是|如下|吧[。！!]?\s*$",
    re.I,
)
SAID_AROUND_CHARS = 600  # what the user says before or after a pasted document, at most


def _split_pasted(text: str) -> tuple[str, str]:
    """What the user said, and the document they pasted with it ("" if none): a text of at least
    PASTED_DOCUMENT_CHARS with the structure of a document (two headings, a table, or a heading and
    a list; outside code blocks). The paragraphs before its first structured one, and the last ones
    after its last, are the user's own words when short and addressed to the assistant ("Here's our
    runbook:", "帮我看看第三步"); a title line stays with the document. Read line by line, a runbook
    made dozens of fragments ("Step 3: check the dashboard") that each competed with real memories."""
    if weight(text) < PASTED_DOCUMENT_CHARS or "\n" not in text or _document(text) is not None:
        return text, ""  # (a document the user asks to remember is kept whole with their words: `_document`)
    if not _shaped_as_document(text, short_lines=False):  # (facts typed one per line are facts)
        return text, ""
    paragraphs = _paragraphs(text)

    def structured(p: str) -> bool:
        return p.lstrip().startswith("```") or any(x.search(p) for x in (_DOC_HEADING, _TABLE_ROW, _DOC_ITEM))

    first = next(i for i, p in enumerate(paragraphs) if structured(p))
    last = max(i for i, p in enumerate(paragraphs) if structured(p))
    lead = [p for p in paragraphs[:first] if _SAID_AROUND.search(p) or re.search(r"[:：]\s*$", p)]
    lead = paragraphs[: paragraphs.index(lead[-1]) + 1] if lead else []
    if sum(map(len, lead)) > SAID_AROUND_CHARS:
        lead = []  # a document's own introduction
    tail: list[str] = []  # the last paragraphs addressed to the assistant, short; not the document's own closing
    for p in reversed(paragraphs[max(first, last) + 1 :]):  # lines ("If in doubt, page the on-call.", "---")
        if not _SAID_AROUND.search(p) or sum(map(len, tail)) + len(p) > SAID_AROUND_CHARS:
            break
        tail.insert(0, p)
    document = "\n\n".join(paragraphs[len(lead) : len(paragraphs) - len(tail)]).strip()
    # ("Here's Mack's design doc:" hands the document over and says nothing of its own)
    said = [p for p in lead if not (re.search(r"[:：]\s*$", p) and len(p) < 150)] + tail
    if weight(document) < PASTED_DOCUMENT_CHARS:
        return text, ""
    return "\n\n".join(said), document


def _title(document: str) -> str | None:
    """A document's title: its first heading, else its first line, if short (after a request to keep
    it: "please remember this, it's our postmortem:" names no document)."""
    lines = [ln.strip() for ln in document.split("\n") if ln.strip()]
    while len(lines) > 1 and (R.asks_to_remember(lines[0]) or re.search(r"[:：]$", lines[0])):
        lines = lines[1:]
    if not lines:
        return None
    top = _HEADING.match(lines[0])
    if top or (len(lines[0]) <= 100 and not lines[0].endswith((".", "。"))):  # "Postmortem: INC-2291 — …"
        title = top.group(1) if top else lines[0]
    else:
        title = next((h.group(1) for h in map(_HEADING.match, lines) if h), lines[0])
    title = re.sub(r"^[*_#>\s]+|[*_:：\s]+$", "", title)
    return title if 0 < len(title) <= 120 else None


def _shaped_as_document(text: str, short_lines: bool = True) -> bool:
    """Whether a text has a document's structure, outside its code blocks: two headings, a table,
    a heading and a list, or (`short_lines`) many short lines (a runbook's "Step 1: …" lines); not
    paragraphs of prose."""
    prose = R.without_code(text)
    headings, rows, items = (len(p.findall(prose)) for p in (_DOC_HEADING, _TABLE_ROW, _DOC_ITEM))
    lines = [ln for ln in prose.split("\n") if ln.strip()]
    return (
        headings >= 2
        or rows >= 3
        or (headings >= 1 and items >= 3)
        or (short_lines and len(lines) >= 8 and sorted(map(len, lines))[len(lines) // 2] < 200)
    )


def _paragraphs(text: str) -> list[str]:
    """`text` cut at its blank lines, a fenced code block never cut."""
    out: list[str] = []
    fenced = False
    for block in re.split(r"\n\s*\n", text.strip()):
        if fenced:
            out[-1] += "\n\n" + block
        else:
            out.append(block)
        fenced ^= block.count("```") % 2 == 1
    return out


def _document(text: str) -> Candidate | None:
    """A long message the user asks to remember ("here is our runbook, please remember it: ...",
    "记住这个流程：..."): kept whole, as one memory (the store chunks it for search), instead of
    taken apart sentence by sentence, where its lead-in would be all that survived."""
    body = text.strip()
    if len(body) < DOCUMENT_CHARS or not _shaped_as_document(body):
        return None  # (prose asked to be remembered, "就这三件，你记一下。", is read statement by statement)
    head, tail = body[:300], body[-200:]
    if not (R.asks_to_remember(head) or R.asks_to_remember(tail) or _KEEP_DOCUMENT.search(body.split("\n", 1)[0])):
        return None
    return Candidate(body, layer="fact", category="document", importance=4, why="asked to remember a document")


def _from_user(
    text: str,
    turn: dict,
    proposal: list[str] | None = None,
    said: list[str] | None = None,
    listed: list[str] | None = None,
    heading: str = "",
) -> list[Candidate]:
    document = _document(text)
    if document is not None:
        return [document]
    lead = re.match(r"\s*([1-9])[.)]\s+(?=\S)", text) if listed else None
    if lead and not re.search(r"\n\s*[1-9][.)]\s", text):
        text = lead.group(1) + ".\n" + text[lead.end() :]  # "1. Dividing by replica count breaks…": item 1, then why
    # (the items of a list handed over are facts apart: never folded together, nor the reason of a choice after)
    sents: list[str] = []
    listed_items: set[int] = set()
    in_list: set[int] = set()
    for sent in _confirmed_joined(R.sentences(text)):
        items = _items_of(sent)
        listed_items.update(range(len(sents) + 1, len(sents) + len(items)))
        in_list.update(range(len(sents), len(sents) + len(items)) if len(items) > 1 else ())
        sents += items
    # (a sentence after a blank line belongs to no sentence before it)
    opens = _paragraph_starts(text, sents) | listed_items
    out: list[Candidate] = []
    decision, used = _decision(sents, proposal or [], said or [], listed or [], heading)
    if decision is not None:
        out.append(decision)
        # "We'll go with Zustand + React Query. RTK is too much boilerplate for the three of us.": the next
        # sentence, speaking against an option that was on the table, is the choice's reason
        k = max(used, default=-1) + 1
        offered = " ".join([*(listed or []), *(proposal or []), *(said or [])[-8:]]).casefold()
        names = re.findall(r"\b[A-Z][\w.+-]+", sents[k]) if 0 < k < len(sents) else []
        if names and R.AGAINST.search(sents[k]) and any(n.casefold() in offered for n in names):
            _add_reason(decision, sents[k])
            used = {*used, k}
    last_end = -2  # index of the last sentence folded into the newest candidate
    raw_of: dict[int, str] = {0: decision.content} if decision is not None else {}  # candidate -> raw text
    for j, raw in enumerate(sents):
        if j in used:
            continue
        hit = R.classify_user(raw)
        declined = _DECLINE.match(raw) if proposal and j == 0 and hit else None
        if declined and not _DIRECTS.search(raw[declined.end() :]) and len(raw) < 40:
            continue  # "不用，crontab 够了" to a proposal: turned down, so nothing was decided
        if hit is None and j in in_list and R._long_enough(raw) and not (R.is_question(raw) or R.is_chat(raw)):
            # an item of a list handed over is kept though it reads plain: "invoices go out through Mailgun"
            hit = (R.strip_fillers(raw), "note", "an item of a list handed over", 3)
        if hit is None and out and last_end == j - 1 and out[-1].category != "decision" and R.is_detail(raw):
            hit = (R.strip_fillers(raw), "statement", "", 3)  # "`amount_minor` bigint plus a `currency`"
        if hit is None:
            continue
        sentence, category, why, importance = hit
        fold = (
            out
            and last_end == j - 1
            and out[-1].category != "decision"
            and not _NEW_TOPIC.match(raw)  # ("另外同步一下：派单半径已经调成 3 公里了": news of its own)
            and (category == "statement" or (out[-1].category in ("change", "statement") and category in _FACT))
            and (
                # on the same subject only: a statement on another is a fact of its own, which a later
                # correction closes alone ("…不要手工 curl PUT。CDC 的 oncall 是李伟。"; "Connect 集群迁了…。oncall 也换了…")
                bool(_subject_terms(sentence) & _subject_terms(raw_of[len(out) - 1]))
                # two values a later change may correct one at a time (a port and a retention, who owns it
                # and who is on call) are two facts: folded, a correction of one closed both
                and not (_holds_value(sentence) and _holds_value(raw_of[len(out) - 1]))
                # (nor a schedule or a port after who owns it: "Jules owns it now. Jules bumped the pull to */5")
                and not (
                    out[-1].category == "ownership" and any(not k.startswith("tech:") for k in R.slot_values(sentence))
                )
                # but where what was left is going is the same change: "we're getting off MinIO. all of
                # cachebox moves to Cloudflare R2 by end of month."
                or (out[-1].category == "change" and bool(_GOES_TO.search(sentence)))
            )
        )
        if (R.starts_with_pronoun(sentence) or fold) and out and last_end == j - 1 and j not in opens:
            # "X owns Y; it depends on Z": the pronoun's sentence belongs to the one before
            prev = out[-1]
            raw_of[len(out) - 1] = raw_of[len(out) - 1].rstrip(" ;；,，.。") + ". " + sentence
            prev.content = R.tidy(raw_of[len(out) - 1])
            if _RANK.get(category, 0) > _RANK.get(prev.category, 0):
                prev.category, prev.why = category, why
                prev.layer = "decision" if category == "decision" else prev.layer
            prev.importance = max(prev.importance, importance)
            last_end = j
            continue
        if R.starts_with_pronoun(sentence):
            prev_s = R.strip_fillers(sents[j - 1]) if j > 0 and (j - 1) not in used else ""
            if prev_s and R.is_chat(prev_s):
                continue  # "Mostly right, but the header band is white. It should be navy …": about the work at hand
            if len(prev_s) > 8 and not R.is_question(prev_s) and "[REDACTED:" not in privacy.redact(prev_s):
                sentence = (
                    prev_s.rstrip(" .。;；") + ". " + sentence
                )  # "it should…" needs its antecedent (never a secret)
            elif re.match(r"(?i:it|they)\b|它", sentence) and not R.SPECIFIC.search(sentence):
                continue  # "They don't really have room types." after a question: nothing says who "they" are
                # (unlike "这个 chunk warning 一直有，不用管。", whose "这个" names what it is about)
        last_end = j
        # Reasons and elaborations that follow a rule belong to it.
        for k in (j + 1, j + 2):
            if k >= len(sents) or k in used or k in opens or R.is_chat(sents[k]) or R.is_question(sents[k]):
                break  # ("thanks, that's it for today" ends the message, it explains nothing)
            on_it = bool(R.subject_stems(sents[k]) & R.subject_stems(sentence))
            if (
                (R.continues(sents[k]) and R.classify_user(sents[k]) is None)
                # why the rule holds, in a sentence of its own on its subject: "episode guids are never changed once
                # published. apps dedupe on guid, change it and every subscriber gets the whole back catalog again."
                or (category == "rule" and on_it and R.classify_user(sents[k]) is None and R._long_enough(sents[k]))
                # and what follows from it: "… so don't 'clean up' the guid code"; of any fact when it points back
                # at it: "asset-sweeper deletes them 30 days after the book ships. so anything older than that we
                # can't re-render"
                or (category == "rule" and on_it and _SO_THEN.match(sents[k]))
                or (
                    category != "decision"
                    and _SO_THEN.match(sents[k])
                    and re.search(r"\b(?:that|this|those|then)\b|这样|那样", sents[k], re.I)
                    and R._long_enough(sents[k])
                )
                # what the owner wants, said of them: "X owns tm-service, tag him on the PR. he wants to see
                # anything that touches the scoring module before it merges."
                or (
                    category == "ownership"
                    and re.match(r"(?:he|she|他|她)(?:\b|(?=[\u4e00-\u9fff]))", sents[k], re.I)
                    and R.classify_user(sents[k]) is None
                    and R._long_enough(sents[k])
                )
                # or why, said with what it leaves: "records are confidential under state law, so only the
                # barcode last 4 + due date"
                or (
                    category == "rule"
                    and re.search(r"[,，]\s*so\b|所以", sents[k])
                    and R.classify_user(sents[k]) is None
                    and R._long_enough(sents[k])
                )
            ):
                said = sents[k].strip() if _SO_THEN.match(sents[k]) else R.strip_fillers(sents[k])  # ("so" is meant)
                sentence = sentence.rstrip(" ;；") + " " + said
                used.add(k)
                last_end = k
            else:
                break
        layer = "decision" if category == "decision" else "experience" if category == "lesson" else "fact"
        c = Candidate(R.tidy(sentence), layer=layer, category=category, importance=importance, why=why, role="user")
        if category == "decision":
            decision, rationale = R.split_rationale(sentence)
            alts, chosen = R.alternatives(sentence), R.chosen_of(sentence)
            c.metadata.update(decision=decision, rationale=rationale)
            c.metadata.update({k: v for k, v in (("alternatives", alts), ("chosen", chosen)) if v})
        if j in in_list:
            c.metadata["listed"] = True
        raw_of[len(out)] = sentence
        out.append(c)
    return out


def _confirmed_joined(sents: list[str]) -> list[str]:
    """`sents` with a statement put up to confirm joined to the sentence after it that needs it: "the merge tool
    publishes a normal ListingChanged, right? it goes out on the listing-updated exchange …" says what "it" is."""
    out: list[str] = []
    for s in sents:
        if out and _CONFIRM_TAG.search(out[-1]) and R.starts_with_pronoun(s):
            out[-1] = _CONFIRM_TAG.sub(".", out[-1]) + " " + s
        else:
            out.append(s)
    return out


# What the assistant puts before what it found: "One mismatch: …", "Side note: …", "顺便发现：…"
_LEAD = re.compile(r"^[^:：`]{0,60}(?::\s+|：\s*)(?=\S)")
# A sentence that turns to something else: "对了磊哥现在转到 payout 了", "btw the queue …", "另外 …"
_NEW_TOPIC = re.compile(r"^\W*(?:对了|另外|还有|顺便|btw\b|by the way\b|also\b|oh and\b|unrelated\b)", re.I)


def _confirmed_change(found: list[str], text: str) -> tuple[Candidate, str] | None:
    """The change the assistant found and asked about, confirmed, with the user's why, and what is left of the
    user's message: "the nightly rebuild is now `15 4 * * *`, not 02:30. Is that intentional?" -> "yes, Ravi moved
    it to 04:15 because …". None when the message does not open by saying it was meant."""
    meant = _MEANT.match(text)
    noted = _noted_values(" ".join(found))
    if meant is None:
        # the value found, given back as the answer: "8091" to "… 是 8091，但 memory 里记的是 8081。以哪个为准？"
        # (with its unit: "1 万，财务上个月提的" to "… 也就是 1 万元，但我这边的记录是 5000 元")
        bare = re.match(
            r"^\W*`?([\w.:/-]{1,40})`?((?:" + R.UNIT_AFTER.pattern + r"|\s*[万千亿元块])*)\s*(?:[,，.。!！]\s*|$)",
            text,
        )
        given = (bare.group(1) + bare.group(2)).strip() if bare else ""
        said = re.search(rf"(?<![\w.]){re.escape(given)}(?![\d.])", " ".join(found)) if len(given) >= 2 else None
        if said and given not in noted and (R.SPECIFIC.search(given) or re.search(r"\d", given)):
            meant = bare
    if meant is None or not found or not R.SPECIFIC.search(found[-1]):
        return None
    why, *rest = R.sentences(text[meant.end() :]) or [""]
    # ("对，已经改名了。上个月 Kafka 集群迁移，统一加了 cj. 前缀…": a why that short is only "yes", the why is next)
    if len(why) < 15 and rest and not _NEW_TOPIC.match(rest[0]):
        why, rest = R.joined([why, rest[0]]), rest[1:]
    # ("One more thing that differs from what I had: the nightly rebuild is now …": what it found)
    # (what it had noted is the old value, not what it found: "… binds `booking-sync.grounding` to it. What I had
    # noted was `aircraft.grounded` …. Was that renamed?")
    seen = next((x for x in reversed(found) if not R.NOTED.match(x)), found[-1])
    read = _LEAD.sub("", seen)
    content = R.tidy(R.joined([read if R.SPECIFIC.search(read) else seen, why]))
    change = Candidate(content, layer="fact", category="change", importance=3, why="a change found, confirmed")
    # what the assistant had noted is the value the change retires ("但我这边记的是保留 400 天，对不上")
    if noted:
        change.metadata["replaces"] = noted
    return change, " ".join(rest)


# A question whether something still holds: "Is it still 72 hours?", "归档阈值现在还是 180 天吗？"
_STILL_ASKED = re.compile(r"\bstill\b|(?:还是|仍然是|依然是|还在用|还用)", re.I)
# Where the assistant says what it had noted, the statement after it: "I have a note that …", "而我记的是 …"
_NOTE_SAID = re.compile(
    r"\b(?:I have (?:a note|it noted)|I(?: had)? noted|my notes? (?:says?|has|have)|what I (?:had )?noted (?:was|is)|"
    r"according to (?:my notes|what I noted)|I remember(?:ed)?)\b(?: that)?[,:]?\s*|"
    r"(?:我|memory\s*里|记忆里)(?:这边|之前|手上的?)?(?:记的|记录的|记录里|笔记里|记得)(?:是)?[:：]?\s*",
    re.I,
)
# A value as a question or answer names it: a span in backticks, or a run holding a digit ("72", "0 2 1 * *" in ticks)
_ASKED_VALUE = re.compile(r"`([^`]{1,60})`|(?<![\w.:/-])(\d[\w.:/-]*)(?![\w.-])")
# The answer that it no longer holds, opening the user's message: "no, 48 now", "不是，90 天了", "nope — 48"
_NO_LONGER = re.compile(
    r"^\W*(?:(?:no|nope|nah|not any ?more)\b|(?:早就|已经)?不是了?|不对|早改了|改了)[\s,，.。!！:：;；—-]*", re.I
)


def _noted_values(text: str) -> list[str]:
    """The values the assistant says it had noted, where they differ from what it found: "my notes say route-service
    listens on 8085, but `default.toml` has `port = 8090`" -> 8085 (route-service is named on both sides); each with
    the unit it was noted in."""
    out = []
    for m in R.NOTED.finditer(text):
        clause = re.split(r"[,，;；。]|\bbut\b|但", text[m.start() :])[0]
        rest = text[: m.start()] + text[m.start() + len(clause) :]
        values = [(v.group(1) or v.group(2), bool(v.group(1))) for v in R.NAMED_VALUE.finditer(clause)]
        # (what it is also said of elsewhere is not what changed: "but `default.toml` has …" names route-service too;
        # unless nothing is left: "no `payruns` queue at all, but what I had noted was … `payruns`")
        changed = [(v, ticked) for v, ticked in values if v not in rest] or values
        # (a value in backticks or with a digit is what was noted; a name beside it is what it was noted of,
        # "memory 里记的 gift-service 端口是 8081")
        sure = [v for v, ticked in changed if ticked or re.search(r"\d", v)]
        # (else a name in code shape, `env_logger`, mysql-ro.xhj.internal; never a service's name, quote-service)
        shaped = [v for v, _ in changed if re.search(r"[._/:]", v)]
        out += [R.with_unit(v, clause) for v in sure or shaped]
    return out


def _asked_still(told: list[str]) -> tuple[str, str] | None:
    """The assistant asking whether a value it had noted still holds: "I have a note that timesheets lock 72
    hours after the pay period closes. Is it still 72 hours?", "而我记的是 gift_order 超过 180 天才归档。归档阈值
    现在还是 180 天吗？". The statement it had noted (from after the words that say so) and the value asked about."""
    for q in reversed(told[-2:]):
        if not R.is_question(q) or not _STILL_ASKED.search(q):
            continue
        asked = [a or b for a, b in _ASKED_VALUE.findall(q)]
        for s in told:
            note = list(_NOTE_SAID.finditer(s)) if s is not q else []
            statement = s[note[-1].end() :] if note else ""
            held = [a or b for a, b in _ASKED_VALUE.findall(statement)]
            # ("Is that still the schedule?": the value is the one the note holds, if it holds one)
            value = asked[0] if asked else (held[0] if len(held) == 1 else "")
            if value and value in statement and R.SPECIFIC.search(statement):
                return statement, value
    return None


def _answered_still(asked: tuple[str, str], text: str) -> tuple[Candidate, str] | None:
    """The user saying a value the assistant had noted no longer holds, and what it is now ("no, 48 now. ops
    wanted the approval step to start earlier"): the noted statement with the new value, and the user's why;
    and what is left of the message. None unless the answer opens by saying no, or by a new value."""
    statement, old = asked
    no = _NO_LONGER.match(text)
    rest = text[no.end() :] if no else text
    rest = rest.strip()
    # the new value follows the "no" closely or opens the answer: "no, 48 now", "不是，90 天了", "`*/3` since …"
    value = _ASKED_VALUE.search(rest[:30]) if no else _ASKED_VALUE.match(rest)
    if value is None or re.search(r"(?:#|\b(?:PR|MR|issue|ticket|commit)\s*)$", rest[: value.start()], re.I):
        return None  # ("no, see PR 1234": a reference, not the value)
    new = value.group(1) or value.group(2)
    if new.casefold() == old.casefold() or any(x.isdigit() for x in new) != any(x.isdigit() for x in old):
        return None
    after = rest[value.end() :]
    # ("48 now.", "90 天了，…", "48 hours now": the value's unit and "now" are the statement's already)
    after = after.lstrip("`")
    unit = R.UNIT_AFTER.match(after)
    after = re.sub(r"^\s*(?:now\b|了|现在)?[\s,，.。!！;；]*", "", after[unit.end() :] if unit else after)
    why, *more = R.sentences(after) or [""]
    if len(why) < 15 and more and not _NEW_TOPIC.match(more[0]):
        why, more = R.joined([why, more[0]]), more[1:]
    retired = R.with_unit(old, statement)
    now = statement.replace(old, new, 1).rstrip()
    if not now.endswith((".", "。", "!", "！")):
        now += "。" if re.search(r"[\u4e00-\u9fff]$", now) else "."
    content = R.tidy(R.joined([now, why]))
    change = Candidate(content, layer="fact", category="change", importance=3, why="a value asked about, changed")
    change.metadata["replaces"] = [retired]
    return change, " ".join(more)


def _paragraph_starts(text: str, sents: Sequence[str]) -> set[int]:
    """The indexes of the sentences that open a paragraph after the first (a blank line before them)."""
    starts, at = set(), 0
    for j, sent in enumerate(sents):
        found = text.find(sent[:20], at)
        if found < 0:
            continue
        if j and re.search(r"\n[ \t]*\n", text[at:found]):
            starts.add(j)
        at = found + len(sent[:20])
    return starts


_RETIRED_FIRST = re.compile(_RETIRES + r"\b|" + _RETIRES_ZH, re.I)
_ITEMS_LEAD = re.compile(r"^([^：:;；]{1,40}?[：:])\s*(?=\S)")


def _items_of(sentence: str) -> list[str]:
    """A sentence handing over several facts at once, cut into them: "其他几个背景你记一下：网关有问题找老周，他是
    owner；抓拍图片存 COS，保留 180 天；…", "for the record: X runs on 8080; Y is owned by Kim". Most items hold a
    value a later change may correct on its own, so each is a fact of its own (kept together, a change of one
    left the others, said in the same breath, behind or took them with it). Only a sentence that asks for it
    to be remembered, gives it as background or as a heads-up is cut, at its semicolons, the lead left out."""

    def hands_over(words: str) -> bool:
        return bool(
            R.asks_to_remember(words)
            or R._FYI.search(words)
            or R.announces_list(words)
            or re.search(r"\bheads[- ]up\b", words, re.I)
        )

    def says_something(
        item: str,
    ) -> bool:  # (a value, a statement, or a name it gives: "newsletters go through Buttondown")
        named = R._long_enough(item) and re.search(r"`|(?<![.!?]\s)(?<!^)\b[A-Z][\w.+-]+", item.strip())
        return bool(_holds_value(item) or R.classify_user(item) is not None or named)

    if not hands_over(sentence):
        return [sentence]
    lead = _ITEMS_LEAD.match(sentence)
    body = sentence[lead.end() :] if lead and hands_over(lead.group(1)) else sentence
    items = [x.strip(" ,，") for x in re.split(r"\s*[；;]\s*", body)]
    items = [x for x in items if x]
    # (an item holding none is still one of the list: "Dima moved to the payments team on Monday")
    # (nor "Alice owns billing-service; she wrote the webhook handler": an item that says "she" goes on the one before)
    if any(re.match(r"(?:he|she|they|it|his|her|their|its|他|她|它)\b", x, re.I) for x in items[1:]):
        return [sentence]
    if len(items) < 2 or 2 * sum(map(says_something, items)) < len(items) or _RETIRED_FIRST.search(items[0]):
        # (nor "we dropped flyway; Migrations now go through dbmate": one change, joined so above)
        return [sentence]
    return [x if re.search(r"[。.!！]$", x) else x + ("。" if re.search(r"[\u4e00-\u9fff]", x) else ".") for x in items]


def _holds_value(sentence: str) -> bool:
    """Whether a sentence states a value a later change may correct on its own: a port, host, span of
    time, weekday, clock time, technology or package, an owner or who is on call."""
    return bool(R.slot_values(sentence) or R.owner_of(sentence) or R.oncall_of(sentence))


# -- assistant turns ---------------------------------------------------------------------------


AFTER_ERROR_WINDOW = 8  # tool turns between a failed call and the assistant's next words about it


def _after_error(turns: list[dict], i: int) -> bool:
    """Whether the assistant is answering a failed tool call: its first words since the failure,
    with only tool calls between (it may have read a file or two to find the cause first)."""
    for k in range(i - 1, max(-1, i - 1 - AFTER_ERROR_WINDOW), -1):
        kind = turns[k].get("kind")
        if kind == "tool_error":
            return True
        if kind == "text":
            return False
    return False


_FIX_HEAD = re.compile(r"^(?:fix|the fix|修法|改法|修复)\s*[:：]", re.I)


def _from_assistant(text: str, turn: dict, why_pending: bool, after_error: bool = False) -> list[Candidate]:
    sents = R.sentences(text)
    out: list[Candidate] = []
    used: set[int] = set()
    # what the assistant only proposes ("We could put Redis in front of it", "可以考虑换成 Kafka") is not what
    # happened: no experience, nor the fix of one; it becomes the user's decision if they agree
    proposed = {j for j, s in enumerate(sents) if R.PROPOSES.search(s)}
    for j in sorted(proposed):  # "How about Temporal? That fixes the retries because …": its case goes with it
        if j + 1 < len(sents) and (R.continues(sents[j + 1]) or R.starts_with_pronoun(sents[j + 1])):
            proposed.add(j + 1)
    for j, s in enumerate(sents):
        if j in used or j in proposed or (R.is_narration(s) and not R.announces_cause(s)):
            continue
        if R.is_experience(s, after_error) or R.announces_cause(s):
            content = s
            fix_next = (
                j + 1 < len(sents)
                and j + 1 not in proposed
                and R.has_fix(sents[j + 1])
                and not sents[j + 1].rstrip().endswith((":", "："))  # ("修复方案：": the options follow, as a list)
            )
            explained = R.announces_cause(s) or R.names_cause(s) or len(s) < R.SHORT_CAUSE
            body = _cause_body(sents, j, proposed) if explained else []
            if body:
                lead = [] if R.only_announces(s) else [s.rstrip()]  # "找到了。" says nothing itself
                content = R.joined([*lead, *(sents[k] for k in body)])
                used.update(body)
            elif fix_next and (not R.has_fix(s) or _FIX_HEAD.match(sents[j + 1])):
                content = R.joined([s, sents[j + 1]])
                used.add(j + 1)
            elif fix_next and R.is_fix_sentence(sents[j + 1]):
                content = R.joined([s, sents[j + 1]])
                used.add(j + 1)
            after = max(k for k in used | {j} if k >= j) + 1
            if body and after < len(sents) and after not in proposed and _FIX_HEAD.match(sents[after]):
                content = R.joined([content, sents[after]])  # "… (the cause, at length) Fix: …": its fix
                used.add(after)
                after += 1
            if after < len(sents) and after not in proposed and _LESSON.match(sents[after]):
                content = R.joined([content, sents[after]])  # "… Fix: …. Lesson: never hold …": the lesson too
                used.add(after)
            out.append(
                Candidate(
                    R.tidy(content),
                    layer="experience",
                    category="experience",
                    importance=3,
                    why="assistant: cause and fix",
                    role="assistant",
                )
            )
            used.add(j)
            continue
        fact = R.classify_assistant_fact(s)
        if fact:
            category, why = fact  # a gotcha is a standing constraint; experiences are what broke and why
            if R.GOTCHA_LEAD.match(s) and j + 1 < len(sents) and R.CONSEQUENCE.match(sents[j + 1]):
                used.add(j + 1)  # "A gotcha …: X fires before the money moved. So we mark it paid only when …"
                s = R.joined([s, sents[j + 1]])
            out.append(_assistant_fact(s, category, why))
            used.add(j)
    out = _with_lesson(sents, out, used, proposed)
    if (
        why_pending
        and not any(c.layer == "experience" for c in out)
        and not (sents and _READ_IT.match(sents[0]))
        and not (sents and (_DONE.match(sents[0]) or R.TEST_HELD_OLD.search(sents[0])))
    ):
        answer: list[str] = []
        for j, s in enumerate(sents):
            if _OPTIONS.match(s):
                break  # the explanation is over (or there was none): what follows is what to do about it
            if _ECHO.match(s):
                continue
            if _GUESS.search(s):
                break  # "My first guess is …", "先列两个猜测：": a hypothesis to check, not the answer found
            if j in proposed:
                break  # the explanation is over: what follows is what could be done about it
            if j in used or s.rstrip().endswith((":", "：")) or R.is_question(s):
                continue
            if _FIX_HEAD.match(s):
                answer.append(s)  # the fix completes the explanation; what follows is the work
                break
            if R.is_status(s):
                continue
            if not R.is_narration(s) or (answer and R.has_fix(s)):  # "I'll switch it to X" completes it
                answer.append(s)
            if len(answer) == 4 or sum(len(x) for x in answer) >= 240:
                if j + 1 < len(sents) and _FIX_HEAD.match(sents[j + 1]):
                    answer.append(sents[j + 1])  # a long cause keeps the fix said right after it
                break
        # (an answer that names nothing of a system is sympathy, not an explanation: "Rough. Hope someone
        # fixes it before the afternoon slump." to "the coffee machine on 3 is broken again")
        if answer and sum(len(s) for s in answer) >= 30 and (after_error or _explains(" ".join(answer))):
            out.insert(
                0,
                Candidate(
                    R.tidy(" ".join(answer)),
                    layer="experience",
                    category="experience",
                    importance=3,
                    why="assistant: answer to a why-question",
                    role="assistant",
                    confidence=0.7,
                ),
            )
    return out


_GOES_TO = re.compile(
    r"\b(?:moves?|moving|goes|going|switch(?:es|ing)?|migrat(?:es|ing)) (?:over )?to\b|换成|迁到|切到", re.I
)
_LEAVING = re.compile(
    r"\bI (?:have|need|got) to (?:drop|leave|hop off|jump off|run|go)\b|我(?:得|要)(?:先)?(?:走了|撤了|去开会)", re.I
)
# What the user asks not to be kept: "… - actually don't write that anywhere", "这个别记"
_KEEP_IT_OUT = re.compile(
    r"\bdon'?t (?:write|put|save|store|keep|remember) (?:that|this|it|them) (?:anywhere|down)\b|"
    r"\bdon'?t (?:save|store|remember) (?:that|this|it|them)\b|(?:这个|这些|这条|这段)\s*(?:就)?(?:别|不要|不用)(?:记|存)|"
    r"(?:别|不要)写到?任何地方",
    re.I,
)
_SO_THEN = re.compile(r"^\W*(?:so|which means|所以|因此)\b", re.I)


# The assistant's hypothesis, said before it checks: what the answer may be, not what it is.
_GUESS = re.compile(
    r"(?:^|^[^.。]{0,40}[,，]\s*)\W*(?:(?:so |ok,? )?my (?:first |best |initial |working |main )?"
    r"(?:guess|theory|hunch|suspicion|suspect)\b|I (?:suspect|guess)\b|"
    r"one (?:possibility|hypothesis|theory)\b|(?:first )?hypothesis\b|"
    r"先(?:排除|列|说|猜)(?:一下)?(?:一个|两个|几个)?(?:可能|猜测|假设)|我?(?:先|首先)?(?:怀疑|猜)|(?:我的)?第一反应是|"
    r"\bfirst (?:thing )?I'?d (?:rule out|check|suspect)\b|^\W*(?:first|initial) (?:guess|thought|hunch|theory)\b|"
    r"\bmy first thought was\b|"  # ("先怀疑容器时区：…", "First thing I'd rule out is …")
    r"(?:[一两几]个)?(?:猜测|假设)[:：])",
    re.I,
)


def _with_lesson(sents: list[str], out: list[Candidate], used: set[int], proposed: set[int]) -> list[Candidate]:
    """A lesson the assistant draws ("Takeaway: every long-lived handler has to select on the request
    context.", "教训就是在线特征别把长序列塞进一个 key。") with what it was drawn from: the explanation before
    it in the message, joined to the experience that explanation began, or an experience of its own."""
    at = next((j for j, s in enumerate(sents) if j not in used and _LESSON.match(s)), None)
    if at is None or len(_LESSON.sub("", sents[at], count=1).strip()) < 12:
        return out
    began = next((c for c in out if c.layer == "experience"), None)
    start = max(used, default=-1) + 1 if began is not None else 0
    body = [
        s
        for k, s in enumerate(sents[start:at], start)
        if k not in used and k not in proposed and not (R.is_question(s) or R.is_narration(s) or R.is_status(s))
    ]
    while body and sum(map(len, body)) > LESSON_BODY_CHARS:
        body.pop(0 if began is None else -1)  # (its own: the cause comes first; joined: what follows it)
    said = R.joined([*body, sents[at]])
    used.update(range(start, at + 1))
    if began is not None:
        began.content = R.tidy(R.joined([began.content, said]))
        return out
    lesson = Candidate(
        R.tidy(said),
        layer="experience",
        category="experience",
        importance=3,
        why="assistant: a lesson",
        role="assistant",
    )
    return [c for c in out if c.content not in lesson.content] + [lesson]


def _assistant_fact(text: str, category: str, why: str) -> Candidate:
    """A standing fact the assistant stated (a gotcha, where a secret lives, how the project does
    something): trusted a little less than what the user says."""
    return Candidate(
        R.tidy(text), layer="fact", category=category, importance=3, why=why, role="assistant", confidence=0.7
    )


# Where a secret lives: an environment variable or config key (or a k8s secret by name, "secret
# `alert-dingtalk`"), in a secret store or the environment.
# (or a config key in code that names a credential: `jz.oss.access-key-id`, `payments.webhook-secret`)
_SECRET_NAME = re.compile(
    r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bsecrets?\s+`[\w./-]+`|"
    r"`[\w.-]*(?i:key|secret|token|password|passwd|webhook|credential)[\w.-]*`"
)
_SECRET_PLACE = re.compile(
    r"\benv\b|environment|\bsecrets?\b|vault|keychain|\bkms\b|parameter store|环境变量|密钥|凭证|加密配置", re.I
)
_ACK = re.compile(r"^(?:明白|好的?|收到|了解|ok(?:ay)?|got it|sure|understood)[，,。.!！\s]+", re.I)


def _where_secret_lives(sents: list[str], found: list[Candidate]) -> list[Candidate]:
    """After the user hands over a secret ("staging key is …, don't commit it"), the assistant's words
    that settle where it lives ("I'll read it from `TIDE_SLACK_WEBHOOK`, from the vault"; "只从环境变量
    `FEISHU_APP_SECRET` 读，值走 k8s secret"): the secret is redacted, where it lives is the fact."""
    for s in sents[:4]:
        if not (_SECRET_NAME.search(s) and _SECRET_PLACE.search(s)) or "[REDACTED:" in privacy.redact(s):
            continue
        s = _ACK.sub("", s)
        if any(s in c.content for c in found):
            return []
        return [_assistant_fact(s, "config", "assistant: where a secret the user handed over lives")]
    return []


# Options laid out ("Two options: …", "有三个方案：…", "选项："): what could be done, not how it is done,
# and where an explanation before them ends.
_OPTIONS = re.compile(
    r"^(?:\w+\s+)?(?:options?|ways(?: out)?|choices|approaches|alternatives)\b|"
    r"^(?:有)?[几两二三四五]个(?:方案|办法|选项|选择|思路|改法|方向)|^(?:方案|选项|候选)",  # (not "改法：", the fix)
    re.I,
)
# The assistant saying it read what was pasted ("Read it. For this deploy: …", "看完了。第四部分仍然适用…"): a
# summary of the document, which is stored from the document itself, not an answer.
_READ_IT = re.compile(
    r"^\W*(?:(?:ok|好的?)[,，]?\s*)?(?:read it|I(?:'ve| have) read (?:it|the \w+)|看完了|读完了|已阅)\b", re.I
)
# The assistant reporting the work done ("加好了：…", "Done: …"): what it changed, not why anything failed.
_DONE = re.compile(r"^\W*(?:加好了|改好了|加上了|弄好了|done|added)\s*[：:]", re.I)
# The assistant saying back what it was told ("记住了：…", "收到：…", "Noted: …"): no answer of its own.
_ECHO = re.compile(r"^(?:好的?[，,]?\s*)?(?:记住了|记下了|收到|明白|了解|noted|got it)\s*[：:，,]", re.I)


def _how_answer(sents: list[str]) -> list[Candidate]:
    """The assistant's answer to how the project does something ("Push a `v*` tag; `release.yml` builds
    each target…"): its first sentences, up to the first that narrates, proposes or asks, kept as a
    fact when they name something of the project (code, a path, a URL)."""
    answer: list[str] = []
    for s in sents:
        if R.is_question(s) or R.is_narration(s) or R.is_status(s) or R.PROPOSES.search(s) or _OPTIONS.match(s):
            break
        if _lead_in(s):  # "做幂等有几种做法：": options follow, not the answer
            break
        answer.append(s)
        if len(answer) == 2 or sum(len(x) for x in answer) >= 200:
            break
    text = " ".join(answer)
    if len(text) < 20 or not R.HOW_ANSWER.search(text):
        return []
    return [_assistant_fact(text, "note", "assistant: answer to a how-question")]


def _cause_body(sents: list[str], j: int, proposed: set[int]) -> list[int]:
    """The sentences that explain a cause only announced or named at j ("根因找到了：" and its list,
    "原因是签名算在了解密之后的明文上。" and how): up to a proposal, a question, narration ("I'll…"), the
    next heading, four sentences or about 300 characters."""
    body: list[int] = []
    size = 0
    for k in range(j + 1, min(len(sents), j + 5)):
        s = sents[k]
        if k in proposed or R.is_question(s) or R.is_narration(s) or s.rstrip().endswith((":", "：")):
            break
        body.append(k)
        size += len(s)
        if size >= 300:
            break
    return body


# -- failed tool calls -------------------------------------------------------------------------


def _tool_failures(
    turns: list[dict], found: list[Candidate], user_turns: list[int], scope: str, session_id: str | None
) -> list[Candidate]:
    """Pair each failed tool call with what fixed it.

    An assistant explanation of the failure (an experience candidate in the window) is the
    better memory: the failure is attached to it as provenance. Otherwise the first later
    successful call of the same tool that differs from the failed one is "the fix". When the user
    spoke up in between and was heard (a candidate came of it), their words are the memory.
    """
    out: list[Candidate] = []
    by_turn: dict[int, list[Candidate]] = {}
    for c in found:
        by_turn.setdefault(c.metadata.get("turn", -1), []).append(c)
    claimed: set[int] = set()
    for i, t in enumerate(turns):
        if t.get("kind") != "tool_error" or not t.get("input"):
            continue
        window = range(i + 1, min(len(turns), i + 1 + TOOL_WINDOW))
        end = next(
            (k for k in window if turns[k].get("kind") == "tool_error" and turns[k].get("input") == t.get("input")),
            None,
        )
        explained = None
        for k in window:
            if end is not None and k >= end:
                break
            for c in by_turn.get(k, []):
                if c.layer == "experience" and c.role == "assistant":
                    explained = c
                    break
            if explained or (k in user_turns):
                break
        failure = {"tool": t.get("tool"), "input": t.get("input"), "error": t.get("error")}
        if explained is not None:
            explained.metadata.setdefault("failed_tool_calls", []).append(failure)
            explained.importance = max(explained.importance, 3)
            _name_the_symptom(explained, t)
            continue
        if not R.is_error_line(t.get("error") or "", t.get("input") or ""):
            continue  # a banner or the command's own echo: nothing to learn from
        fix_at = None
        for k in window:
            r = turns[k]
            if r.get("kind") != "tool_result" or r.get("tool") != t.get("tool") or k in claimed:
                continue
            # A later call really fixed it: the same command changed ("python -m pytest" ->
            # "uv run pytest"), or a command run before the failed one passed on retry ("make db"
            # before "alembic upgrade head" passes). A call that only looked around (`git log`,
            # `ls`) or an unrelated one that happened to succeed says nothing.
            if r.get("input") != t.get("input") and R.same_command(r.get("input") or "", t.get("input") or ""):
                fix_at = k
                break
            if r.get("input") == t.get("input"):
                between = [
                    q
                    for q in range(i + 1, k)
                    if turns[q].get("kind") == "tool_result"
                    and turns[q].get("tool") == t.get("tool")
                    and not R.only_looks(turns[q].get("input") or "")
                    and q not in claimed
                ]
                if between:
                    fix_at = between[-1]
                break
        if fix_at is None or any(i < k < fix_at for k in user_turns):
            continue  # no fix seen, or the user said what to do: their words are the memory
        r = turns[fix_at]
        claimed.add(fix_at)
        fix = r.get("input") or ""
        content = (
            f"`{R.clip(t['input'], 120)}` failed with `{R.clip(t.get('error') or 'an error', 160)}`; "
            f"fixed by `{R.clip(fix, 160)}`."
        )
        out.append(
            Candidate(
                content,
                layer="experience",
                category="experience",
                importance=3,
                confidence=0.6,
                why="failed tool call, then a different call succeeded",
                role="tool",
                scope=scope,
                session_id=t.get("session_id") or session_id,
                source_ref=t.get("uuid"),
                occurred_at=t.get("timestamp"),
                metadata={"turn": i, "failed_tool_calls": [failure], "fix": fix},
            )
        )
    return out


# How a project's whole suite, linter or build is run, as a command the session ran and that passed:
# `uv run pytest -q`, `pnpm lint`, `./gradlew test`, `make test`, `cargo nextest run --profile ci`.
_RUNNER = re.compile(
    r"^(?:(?:uv|poetry|pipenv|pdm|hatch) run |python3? -m )?(?:pytest|tox|nox)\b|^go test\b|^cargo (?:nextest run|test|clippy)\b|"
    r"^(?:npm|pnpm|yarn|bun) (?:run )?(?:test|lint|build|typecheck|check)(?::[\w-]+)?\b|^npx (?:vitest|jest|eslint|tsc)\b|"
    r"^make (?:test|lint|check|build|[\w-]*test[\w-]*)\b|^\./gradlew (?:test|build|check|\w*Test)\b|^mvn (?:test|verify)\b|"
    r"^just (?:test|lint|check)\b|^(?:uv run )?ruff (?:check|format)\b|^dbt (?:test|build)\b"
)
# A run of one test (a file, a test id, a filter): what was being debugged, not how the project runs.
# A filter may be a bare word after the recipe (`just test lock`) or after `--` (`pnpm test:e2e -- sla`).
_ONE_TEST = re.compile(
    r"\.(?:py|go|rs|ts|tsx|js|java|kt)\b|::|\s-k\s|--filter|\s-run\s|--tests?\s|\s/\S+|[<>|]|\s--\s+\w|"
    r"^\s*(?:just|make)\s+[\w:-]+\s+[\w./][^=\s]*(?:\s|$)"
)
# Formatting and builds are run on the way to anything; only the suite and the linter say how the project checks.
_COMMAND_KIND = (
    ("lint", re.compile(r"\blint\b|clippy|ruff check|eslint|typecheck|\btsc\b")),
    ("other", re.compile(r"\bformat\b|prettier|\bbuild\b")),
    ("tests", re.compile(r".")),
)
_COMMAND_SAYS = {"tests": "Run the tests with `{}`.", "lint": "Lint with `{}`."}


def _project_commands(turns: list[dict], found: list[Candidate], scope: str, session_id: str | None) -> list[Candidate]:
    """The commands that run the project's suite, linter or build, learned from the shell calls of the
    session that passed: one per kind, the one run most (the latest on a tie), when nothing said in the
    session already names it. What a later session runs instead supersedes it (same subject, another
    command)."""
    runs: dict[str, list[tuple[int, str]]] = {}
    for i, t in enumerate(turns):
        if t.get("kind") != "tool_result" or str(t.get("tool") or "").lower() not in ("bash", "shell", "terminal"):
            continue
        cmd = re.sub(r"^\s*cd \S+\s*&&\s*", "", t.get("input") or "")
        for part in re.split(r"\s*(?:&&|;)\s*", cmd):
            part = re.sub(r"^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+", "", part.strip())  # env assignments say nothing general
            if not _RUNNER.match(part) or _ONE_TEST.search(" " + part + " ") or len(part) > 80:
                continue
            if part.startswith("go test") and not re.match(r"^go test (?:-\S+ )*\./\.\.\.(?: -\S+)*$", part):
                continue  # `go test ./internal/data/...`: a part of the tree, not the suite
            kind = next(k for k, rx in _COMMAND_KIND if rx.search(part))
            if kind in _COMMAND_SAYS:
                runs.setdefault(kind, []).append((i, part))
    said = " ".join(c.content for c in found).casefold()
    out = []
    for kind, seen in runs.items():
        counts: dict[str, int] = {}
        for _, part in seen:
            counts[part] = counts.get(part, 0) + 1
        last = {part: i for i, part in seen}
        cmd = max(counts, key=lambda p: (counts[p], last[p]))
        if cmd.casefold() in said:
            continue
        t = turns[last[cmd]]
        out.append(
            Candidate(
                _COMMAND_SAYS[kind].format(cmd),
                layer="fact",
                category="command",
                importance=3,
                confidence=0.6,
                why=f"a {kind} command the session ran and that passed",
                role="tool",
                scope=scope,
                session_id=t.get("session_id") or session_id,
                source_ref=t.get("uuid"),
                occurred_at=t.get("timestamp"),
                metadata={"turn": last[cmd], "observed": cmd},
            )
        )
    return out


# Error lines that name no cause: a heading whose message follows (`… panicked at src/x.rs:18:10:`),
# an exit code (`npm ERR! code 1`), a log line below error level, Docker's pull notice.
_SAYS_NOTHING = re.compile(
    r"[:：]\s*$|\b(?:code|exit(?: code| status)?|status)\s+\d+\s*$|\b(?:WARN|WARNING|INFO|DEBUG)\b|"
    r"^Unable to find image\b|^\d+ tests?, \d+ failures?\b|"  # ("23 tests, 9 failures": a count, not what failed)
    # a test's own assertion ("AssertionError: 41 queries executed, 3 expected", "expected: <7> but was: <9>",
    # "Tests run: 15, Failures: 1"): the values are the test's, what failed is in the explanation
    r"\bAssertion(?:Failed)?Error\b|\bexpected:? ?<[^>]*>,? but was\b|\bTests run: \d+, Failures: \d+"
)


_GENERIC_ERROR_WORDS = {"error", "errors", "failed", "failure", "fatal", "exception", "traceback", "could", "cannot"}


def _name_the_symptom(c: Candidate, failed: dict) -> None:
    """An explanation of a failed call leads with the error it explains, when it does not quote it
    already: the error message is what a later session searches for ("openssl-sys", "Error 1064")."""
    error, command = (failed.get("error") or "").strip(), failed.get("input") or ""
    if c.metadata.get("symptom") or not R.is_error_line(error, command) or _SAYS_NOTHING.search(error):
        return
    if R.only_looks(command):
        return  # a look around that failed (`cat` of a missing file) is not what is being explained
    # the error's own names: `openssl-sys`, `orders.main`, PoolTimedOut, 1064, DEADLINE_EXCEEDED
    names = {w.strip(".:-") for w in re.findall(r"[\w.:-]*(?:\d|[._-]\w|[a-z][A-Z])[\w.:-]*", error)}
    words = {
        w for w in re.findall(r"(?<![\w.`-])[A-Za-z]{5,}(?![\w.`-])", error) if w.casefold() not in _GENERIC_ERROR_WORDS
    }
    text = c.content.casefold()
    if any(len(w) >= 3 and w.casefold() in text for w in names | words):
        return  # it names what failed already ("The snapshot mismatch is because …")
    if re.match(r"^(?:I|I'(?:ve|ll|m)|我)\b", c.content) or c.content.startswith("我"):
        return  # "I switched the test to tmp_path": the fix told as what was done, no cause to attach to
    c.metadata["symptom"] = error
    c.content = R.clip(error, 160).rstrip(" .。") + ": " + c.content


# -- finishing touches -------------------------------------------------------------------------


def project_of(scope: str | None) -> str | None:
    """The name a project goes by in relations such as "we use X": the last part of its scope."""
    return PurePath(scope).name if scope and scope != "global" else None


def stated(
    content: str,
    known: dict[str, list[str]] | None,
    project: str | None,
    owners: bool = True,
    found: list[entities.Mention] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The entities a text names, as (name, kind), and the relations it states between them, as
    (source, type, target): "Zhou Wei owns ledger-api", "we moved from Flask to FastAPI", and who
    owns what though no name finder knew the person ("points-api 现在归 May 管了", with `owners`).
    `found`: the text's mentions (`entities.find`), when the caller has them."""
    mentions = entities.find(content, known) if found is None else found
    named = list(dict.fromkeys((m.name, m.kind) for m in mentions))
    related = entities.relations(content, mentions, project)
    owned = R.owner_of(content) if owners else None
    if owned:
        thing, who = owned
        names = {n.casefold(): n for n, _ in named}
        if who.casefold() not in names:
            named.append((who, "person"))
        related = [r for r in related if r[1] != "owns"] + [(who, "owns", names.get(thing, thing))]
    return named, related


def finish(c: Candidate, known: dict[str, list[str]] | None, project: str | None) -> None:
    # Secrets go before anything else sees the text: --dry-run output, logs, the LLM, the store.
    c.content = privacy.redact(c.content)
    mentions = entities.find(c.content, known)
    c.entities, c.relations = stated(c.content, known, project, owners=c.category != "command", found=mentions)
    replaced = next((src for src, rel, _ in c.relations if rel == "replaced"), None)
    subject, attribute, value = R.subject_for(c.content, c.category, mentions, replaced)
    if c.category == "document":  # a runbook is about what its title says, and states no one value
        subject, attribute, value = _title(c.content), None, None
    c.subject, c.attribute, c.value = subject, attribute, value
    # (a change turned down keeps what is: "Not now: a move from Airflow to Dagster" retires no Airflow)
    if c.role == "user" and c.layer != "experience" and c.category != "document" and not c.metadata.get("declined"):
        old = [v for v in R.replaced_values(c.content) if not value or v.casefold() != value.casefold()]
        if old and not c.metadata.get("replaces"):  # (what the assistant said it had noted is surer)
            c.metadata["replaces"] = old
    valence, intensity, moods = feel(
        c.content, [c.content[m.start : m.end] for m in mentions if m.kind in ("person", "known")]
    )
    c.valence, c.intensity, c.moods = valence, intensity, moods
    if emotion.Emotion(intensity=intensity).flashbulb:
        c.metadata["flashbulb"] = True
        c.importance = max(c.importance, 5)
    elif intensity >= 0.6:
        c.importance = min(5, c.importance + 1)
    if c.category in ("rule", "correction") and R.ABSOLUTE.search(c.content):
        c.importance = max(c.importance, 4)
    c.metadata["why"] = c.why
    c.metadata["extractor"] = "heuristic"


def feel(text: str, names: Sequence[str] = ()) -> tuple[float, float, list[str]]:
    """Emotion of a candidate: the shared lexicon (memory.emotion) plus coding incidents
    (outages, data loss, "NEVER again!!!") that a general lexicon misses. `names` are not read."""
    base = emotion.analyze(text, names)
    v, i, moods = R.incident_score(text)
    if i <= base.intensity:
        return base.valence, base.intensity, base.moods
    valence = base.valence if base.moods and abs(base.valence) > abs(v) else v
    return valence, i, list(dict.fromkeys([*moods, *base.moods]))[:4]


def _dedup(cands: list[Candidate]) -> list[Candidate]:
    """Drop exact repeats and candidates wholly contained in a longer one of the same layer."""
    out: list[Candidate] = []
    seen: set[str] = set()
    for c in cands:
        key = hashlib.sha256(" ".join(c.content.split()).casefold().encode()).hexdigest()
        if key in seen:
            continue
        seen.add(key)
        out.append(c)
    keep = []
    for c in out:
        low = c.content.casefold()
        if any(
            o is not c and o.layer == c.layer and len(o.content) > len(c.content) and low in o.content.casefold()
            for o in out
        ):
            continue
        keep.append(c)
    return keep
