"""An in-memory copy of the keyword index, for fast BM25 in a warm process.

FTS5 ranks an OR query by calling bm25() on every row that holds any of its words. Queries
carry common words ("run", "test", "api"), so at 100k memories that is ~20k rows and 12 ms
median, 22 ms p95, most of a search; at 1M, ten times that. This index holds FTS5's own tokens
(its postings: which memories hold each token, how often, and each memory's length) in numpy
arrays, and computes the same BM25 as FTS5 (k1 1.2, b 0.75, FTS5's idf, its row count and
average length) with a few vector operations: about a millisecond at 100k.

Tokens come from FTS5 itself, never from a second tokenizer that could disagree: the first build
reads the index's instance table; memories added or changed later are tokenised by the same
FTS5 tokenizer in a private in-memory table. The database stays the source of truth: before
each search the copy catches up with new ids, with changed memories (memory_versions) and with
memories deleted for good (the purges table, filled by a trigger). Candidates are re-checked
against the SQL filters afterwards, as every channel's are.

One departure: a multi-token phrase (a CJK word of three or more characters: its bigrams) is
matched as "all its tokens present" rather than "adjacent", with the phrase frequency taken as
the least frequent token's; the bilingual benchmark measures it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

import memory.store.db as db

K1, B = 1.2, 0.75  # FTS5's bm25() constants


class TextIndex:
    def __init__(self) -> None:
        self.term_id: dict[str, int] = {}
        # Postings grouped by term (term t's are docs[start[t]:start[t + 1]]), ordered by doc.
        self.start = np.zeros(1, dtype=np.int64)
        self.docs = np.zeros(0, dtype=np.int32)
        self.tfs = np.zeros(0, dtype=np.int32)
        # Postings of memories added or changed since: term -> {doc: tf}, and doc -> its terms.
        self.delta: dict[int, dict[int, int]] = {}
        self.delta_terms: dict[int, list[int]] = {}
        self.delta_size = 0
        # Per memory id: tokens in its body, scope code (-1: none), base postings out of date.
        self.length = np.zeros(0, dtype=np.int32)
        self.scope = np.zeros(0, dtype=np.int32)
        self.stale = np.zeros(0, dtype=bool)
        self.scope_code: dict[str, int] = {}
        self.seen_id = 0
        self.seen_version = 0
        self.seen_purge = 0
        self.lock = threading.Lock()
        self._tok: Any = None
        self._phrases: dict[str, list[str]] = {}
        self.totals: tuple[int, int] | None = None  # a team database's keyword totals, read by sync

    # -- building and keeping up -----------------------------------------------------------------

    @classmethod
    def build(cls, conn: Any) -> TextIndex:
        """Read FTS5's postings for the whole store (about 1.5 s per 100k memories). A team
        database keeps no FTS5 postings: its memories are tokenised here, by the same tokenizer."""
        self = cls()
        if getattr(conn, "backend", "sqlite") == "postgresql":
            return self._build_by_tokenising(conn)
        with _snapshot(conn):
            self.seen_id, self.seen_version, self.seen_purge = _marks(conn)
            ids, scopes = [], []
            for mid, scope in conn.execute("SELECT id, scope FROM memories WHERE id <= ?", (self.seen_id,)):
                ids.append(mid)
                scopes.append(self.scope_code.setdefault(scope, len(self.scope_code)))
            self._grow(self.seen_id)
            self.scope[ids] = scopes
            for kind in ("row", "instance"):
                conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.maple_fts_{kind} "
                    f"USING fts5vocab(main, memory_fts, '{kind}')"
                )
            # The row table lists terms in the instance table's order, with their instance counts.
            counts = []
            for term, cnt in conn.execute("SELECT term, cnt FROM temp.maple_fts_row"):
                self.term_id[term] = len(counts)
                counts.append(cnt)
            docs = np.fromiter((r[0] for r in conn.execute("SELECT doc FROM temp.maple_fts_instance")), dtype=np.int32)
        terms = np.repeat(np.arange(len(counts), dtype=np.int32), counts)
        if len(terms) != len(docs):  # cannot happen in one read transaction; say so if it does
            raise RuntimeError("FTS5 instance and row tables disagree; rebuild the index")
        self.length[: len(self.length)] = np.bincount(docs, minlength=len(self.length))[: len(self.length)]
        self._set_postings(terms, docs, np.ones(len(docs), dtype=np.int32))
        return self

    def _build_by_tokenising(self, conn: Any, step: int = 5000) -> TextIndex:
        """Every memory this connection may read, tokenised a step of ids at a time and folded
        into the grouped postings (a team database: what the role sees is what it ranks)."""
        with _snapshot(conn):
            self.seen_id, self.seen_version, self.seen_purge = _marks(conn)
            self._grow(self.seen_id)
            for low in range(0, self.seen_id, step):
                self._index(conn, "id > ? AND id <= ?", (low, min(low + step, self.seen_id)))
                self._merge()
        return self

    def sync(self, conn: Any, marks: Any = None) -> None:
        """Catch up with memories added, changed or purged since the last sync (up to `marks`, an
        indexes.Marks, read here unless the caller read them)."""
        with self.lock, _snapshot(conn):
            if marks is None:
                (top, version, purged), self.totals = _marks(conn), None
            else:
                top, version, purged, self.totals = marks.top, marks.version, marks.purged, marks.totals
            if top > self.seen_id:
                self._index(conn, "id > ? AND id <= ?", (self.seen_id, top))
                self.seen_id = top
            if version > self.seen_version:
                changed = [
                    r[0]
                    for r in conn.execute(
                        "SELECT DISTINCT memory_id FROM memory_versions WHERE id > ? AND memory_id <= ?",
                        (self.seen_version, top),
                    )
                ]
                for i in range(0, len(changed), 500):
                    chunk = changed[i : i + 500]
                    self._forget(chunk)
                    self._index(conn, f"id IN ({','.join('?' * len(chunk))})", chunk)
                self.seen_version = version
            if purged > self.seen_purge:  # deleted for good (permanent forget, pruning): gone from FTS5
                self._forget(
                    [
                        r[0]
                        for r in conn.execute(
                            "SELECT DISTINCT memory_id FROM purges WHERE id > ? AND memory_id <= ?",
                            (self.seen_purge, top),
                        )
                    ]
                )
                self.seen_purge = purged
            if self.delta_size > max(50_000, len(self.docs) // 10):
                self._merge()

    def _index(self, conn: Any, where: str, args: Sequence[Any]) -> None:
        """Tokenise these memories' bodies with FTS5 and add their postings to the delta."""
        from memory.store.memories import Store

        rows = conn.execute(
            f"SELECT id, scope, content, subject, tags FROM memories WHERE {where}", tuple(args)
        ).fetchall()
        if not rows:
            return
        self._grow(max(r[0] for r in rows))
        bodies = [(mid, Store._fts_body({"content": c, "subject": s, "tags": t})) for mid, _, c, s, t in rows]
        for mid, scope, *_ in rows:
            self.scope[mid] = self.scope_code.setdefault(scope, len(self.scope_code))
            self.length[mid] = 0
        for term, doc, tf in self._tokenise(bodies):
            tid = self.term_id.setdefault(term, len(self.term_id))
            self.delta.setdefault(tid, {})[doc] = tf
            self.delta_terms.setdefault(doc, []).append(tid)
            self.length[doc] += tf
            self.delta_size += 1

    def _forget(self, ids: Sequence[int]) -> None:
        """Drop these memories' postings (they are about to be re-indexed, or are gone)."""
        for mid in ids:
            if mid >= len(self.scope) or self.scope[mid] < 0:
                continue
            self.stale[mid] = True
            for tid in self.delta_terms.pop(mid, ()):
                del self.delta[tid][mid]
                self.delta_size -= 1
            self.scope[mid] = -1
            self.length[mid] = 0

    def _merge(self) -> None:
        """Fold the delta into the grouped postings."""
        base_terms = np.repeat(np.arange(len(self.start) - 1, dtype=np.int32), np.diff(self.start))
        keep = ~self.stale[self.docs]
        d_terms, d_docs, d_tfs = [], [], []
        for tid, post in self.delta.items():
            d_terms += [tid] * len(post)
            d_docs += post.keys()
            d_tfs += post.values()
        self._set_postings(
            np.concatenate([base_terms[keep], np.asarray(d_terms, dtype=np.int32)]),
            np.concatenate([self.docs[keep], np.asarray(d_docs, dtype=np.int32)]),
            np.concatenate([self.tfs[keep], np.asarray(d_tfs, dtype=np.int32)]),
        )
        self.delta, self.delta_terms, self.delta_size = {}, {}, 0
        self.stale[:] = False

    def _set_postings(self, terms: np.ndarray, docs: np.ndarray, weight: np.ndarray) -> None:
        """Group (term, doc) pairs by term then doc, summing `weight` into each pair's frequency."""
        order = np.lexsort((docs, terms))
        terms, docs, weight = terms[order], docs[order], weight[order]
        first = np.ones(len(terms), dtype=bool)
        first[1:] = (terms[1:] != terms[:-1]) | (docs[1:] != docs[:-1])
        at = np.flatnonzero(first)
        self.docs = docs[at]
        self.tfs = np.add.reduceat(weight, at).astype(np.int32) if len(at) else np.zeros(0, dtype=np.int32)
        self.start = np.searchsorted(terms[at], np.arange(len(self.term_id) + 1)).astype(np.int64)

    def _grow(self, top: int) -> None:
        if top < len(self.scope):
            return
        size = max(top + 1, 2 * len(self.scope))
        self.length = np.concatenate([self.length, np.zeros(size - len(self.length), dtype=np.int32)])
        self.scope = np.concatenate([self.scope, np.full(size - len(self.scope), -1, dtype=np.int32)])
        self.stale = np.concatenate([self.stale, np.zeros(size - len(self.stale), dtype=bool)])

    def _tokenise(self, bodies: Sequence[tuple[int, str]]) -> list[tuple[str, int, int]]:
        """(token, rowid, frequency) for each body, from FTS5's own tokenizer."""
        tok = self._tokenizer()
        tok.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", bodies)
        out = tok.execute("SELECT term, doc, count(*) FROM v GROUP BY term, doc").fetchall()
        tok.execute("DELETE FROM t")
        return out

    def _tokenizer(self) -> Any:
        """A private in-memory FTS5 table with memory_fts's tokenizer, to tokenise text exactly
        as the index does."""
        if self._tok is None:
            self._tok = db.connect(":memory:", vectors=False)
            self._tok.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{db.FTS_TOKENIZER}')")
            self._tok.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        return self._tok

    # -- searching -------------------------------------------------------------------------------

    def phrases(self, terms: Sequence[str]) -> list[list[str]]:
        """Each query term (an FTS5 string literal from memory.text.query_terms) as its tokens."""
        missing = [t for t in terms if t not in self._phrases]
        if missing:
            with self.lock:
                found: dict[int, list[tuple[int, str]]] = {}
                tok = self._tokenizer()
                tok.executemany(
                    "INSERT INTO t (rowid, body) VALUES (?, ?)",
                    [(i, t[1:-1].replace('""', '"')) for i, t in enumerate(missing)],
                )
                for term, doc, offset in tok.execute("SELECT term, doc, offset FROM v"):
                    found.setdefault(doc, []).append((offset, term))
                tok.execute("DELETE FROM t")
                if len(self._phrases) > 50_000:
                    self._phrases.clear()
                for i, t in enumerate(missing):
                    self._phrases[t] = [term for _, term in sorted(found.get(i, []))]
        return [self._phrases[t] for t in terms]

    def search(self, conn: Any, terms: Sequence[str], scopes: Sequence[str], k: int) -> list[tuple[int, float]]:
        """The `k` best memories in `scopes` for an OR of `terms` (FTS5 string literals), with
        FTS5's BM25 score (its sign flipped: higher is better), best first."""
        phrases = self.phrases(terms)
        n, total = self.totals if self.totals is not None else _fts_totals(conn)
        with self.lock:
            codes = [self.scope_code[s] for s in scopes if s in self.scope_code]
            if not codes or not n:
                return []
            avg = total / n
            docs_all, score_all = [], []
            for tokens in phrases:
                docs, tf = self._phrase(tokens)
                if not len(docs):
                    continue
                idf = math.log((n - len(docs) + 0.5) / (len(docs) + 0.5))
                idf = idf if idf > 0 else 1e-6
                norm = K1 * (1 - B + B * self.length[docs] / avg)
                docs_all.append(docs)
                score_all.append(idf * ((tf * (K1 + 1)) / (tf + norm)))  # bm25()'s order of operations
            if not docs_all:
                return []
            docs = np.concatenate(docs_all)
            scores = np.bincount(docs, weights=np.concatenate(score_all))
            hit = np.flatnonzero(scores)
            hit = hit[np.isin(self.scope[hit], codes)]
            if len(hit) > k:  # the k best, and any tied with the k-th, then ordered by id like FTS5
                s = scores[hit]
                kth = np.partition(s, len(s) - k)[len(s) - k]
                hit = hit[s >= kth]
            hit = hit[np.lexsort((hit, -scores[hit]))][:k]
            return [(int(i), float(scores[i])) for i in hit]

    def _phrase(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Memories holding every token of the phrase, and the phrase's frequency in each."""
        docs, tf = None, None
        for token in tokens:
            d, f = self._postings(token)
            if docs is None:
                docs, tf = d, f
            else:
                docs, i, j = np.intersect1d(docs, d, assume_unique=True, return_indices=True)
                tf = np.minimum(tf[i], f[j])
            if not len(docs):
                break
        if docs is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        return docs, tf

    def _postings(self, token: str) -> tuple[np.ndarray, np.ndarray]:
        tid = self.term_id.get(token)
        if tid is None:
            return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
        docs = tfs = np.zeros(0, dtype=np.int32)
        if tid < len(self.start) - 1:
            lo, hi = self.start[tid], self.start[tid + 1]
            docs, tfs = self.docs[lo:hi], self.tfs[lo:hi]
            live = ~self.stale[docs]
            if not live.all():
                docs, tfs = docs[live], tfs[live]
        extra = self.delta.get(tid)
        if extra:
            docs = np.concatenate([docs, np.fromiter(extra.keys(), dtype=np.int32, count=len(extra))])
            tfs = np.concatenate([tfs, np.fromiter(extra.values(), dtype=np.int32, count=len(extra))])
            order = np.argsort(docs, kind="stable")
            docs, tfs = docs[order], tfs[order]
        return docs, tfs

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.start, self.docs, self.tfs, self.length, self.scope, self.stale))


def _marks(conn: Any) -> tuple[int, int, int]:
    """How far the store has gone: its largest memory id, version id and purge id."""
    return tuple(conn.execute(db.MARKS_SQL).fetchone()[:3])


def _fts_totals(conn: Any) -> tuple[int, int]:
    """FTS5's own row count and token total (its 'averages' record), as bm25() reads them. With
    contentless_delete, FTS5 never takes deleted rows out of these, so they drift upwards; the
    index uses them anyway, to give exactly the scores bm25() gives. A team database keeps the
    same two figures in memory_fts_totals (memory.store.pg)."""
    if getattr(conn, "backend", "sqlite") == "postgresql":
        row = conn.execute("SELECT rows, length FROM memory_fts_totals").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    blob, values, pos = row[0], [], 0
    while pos < len(blob) and len(values) < 2:
        value, pos = _varint(blob, pos)
        values.append(value)
    return (values + [0, 0])[0], (values + [0, 0])[1]


def _varint(blob: bytes, pos: int) -> tuple[int, int]:
    """SQLite's varint: big-endian 7-bit groups, high bit set on all but the last; a ninth byte
    carries 8 bits."""
    value = 0
    for i in range(9):
        byte = blob[pos + i]
        if i == 8:
            return (value << 8) | byte, pos + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    raise AssertionError("unreachable")


class _snapshot:
    """A read transaction, so every statement in it sees the same database (unless the caller
    already holds one). Not on a team database: its transactions read each statement afresh
    (read committed) anyway, and its writers take ids in commit order (memory.store.pg)."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.own = conn, False

    def __enter__(self) -> None:
        if getattr(self.conn, "backend", "sqlite") == "sqlite" and not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.own = True

    def __exit__(self, *exc: Any) -> None:
        if self.own:
            self.conn.execute("COMMIT")
