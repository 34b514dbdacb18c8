"""The keyword and vector indexes as the agents use them: ranked hits, cosines, term counts, and
every stored vector at once. Only the store package touches `memory_fts`, `memory_vec` and their
shadow tables; a warm process answers from in-memory copies of both (memory.store.textindex,
memory.store.vecindex), caught up with the database on every call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import memory.store.db as db
import memory.store.pg as pg
from memory.embed import to_blob
from memory.lang import text
from memory.store.memories import Store


def keyword_hits(
    store: Store,
    terms: list[str],
    scopes: Sequence[str],
    pool: int,
    where: str = "",
    args: Sequence[Any] = (),
    narrowed: bool = False,
) -> list[tuple[int, float]]:
    """The `pool` memories best matching any of `terms` (FTS5 literals) as (id, BM25 score), best
    first, mostly from `scopes`: the caller filters what it keeps. `where`/`args` are the caller's
    conditions on the memories table (alias m), applied here only when other scopes would crowd
    the pool. `narrowed`: the caller filters on more than scope and currency (layer, time), so the
    in-memory postings, which know only scopes, cannot answer."""
    index = text_index(store)
    if store.backend == "postgresql" and (index is None or narrowed):
        marks = ",".join("?" * len(scopes))
        cond = where or f"m.scope IN ({marks}) AND m.deleted_at IS NULL"
        return pg.keyword_hits(store.conn, terms, cond, args if where else scopes, pool)  # type: ignore[arg-type]
    if index is not None and not narrowed:
        # The warm process's copy of FTS5's postings: the same scores, ~10x faster. It filters by
        # scope only, so queries with other filters let SQL apply them before ranking.
        return index.search(store.conn, terms, scopes, pool)
    match = text.match_or(terms)
    # Rank the index alone and let _load_rows filter the few kept: joining every match to
    # memories first costs more than ranking them (22 vs 8 ms at 100k) ...
    hits = store.conn.execute(
        "SELECT rowid, -bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts) LIMIT ?",
        (match, pool),
    ).fetchall()
    if not hits:
        return hits
    marks = ",".join("?" * len(scopes))
    mine = store.conn.execute(
        f"SELECT count(*) FROM memories WHERE id IN ({','.join('?' * len(hits))}) AND scope IN ({marks})",
        (*(h[0] for h in hits), *scopes),
    ).fetchone()[0]
    if mine * 2 >= len(hits):
        return hits
    # ... unless other projects' memories fill the pool: then filter first.
    sql = (
        f"SELECT f.rowid, -bm25(memory_fts) FROM memory_fts f JOIN memories m ON m.id = f.rowid "
        f"WHERE memory_fts MATCH ? AND {where or f'm.scope IN ({marks}) AND m.deleted_at IS NULL'} "
        f"ORDER BY bm25(memory_fts) LIMIT ?"
    )
    return store.conn.execute(sql, (match, *(args if where else scopes), pool)).fetchall()


def _held(store: Store) -> tuple[str, str]:
    """The (model, revision) of this process's vectors (a team database's reads check it)."""
    return store.vector_model or "", store.vector_revision


def _queried(store: Store) -> tuple[str, str] | None:
    """The (model, revision) this process's vectors come from, for a warm copy to check the
    database's against before each search (None while the store has none recorded)."""
    return _held(store) if store.vector_model else None


def vector_hits(store: Store, qvec: Any, scopes: Sequence[str], k: int) -> list[tuple[int, float]]:
    """The `k` nearest vectors in `scopes` as (id, cosine), nearest first: from the in-memory index
    where numpy is at hand, else sqlite-vec's exact scan."""
    if not store.has_vectors:
        return []
    index = vector_index(store)
    if store.backend == "postgresql" and index is None:
        return pg.vector_hits(store.conn, qvec, scopes, k, _held(store))  # type: ignore[arg-type]
    if index is None:
        return exact_vector_hits(store, qvec, scopes, k)
    return index.search(qvec, scopes, k)


def cosines(store: Store, qvec: Any, ids: Sequence[int]) -> dict[int, float]:
    """Exact cosine of `qvec` with each of these memories' vectors (those that have one)."""
    index = getattr(store, "_vector_index", None)
    if index is not None:
        return dict(index.cosines(qvec, list(ids)))
    out: dict[int, float] = {}
    if not store.has_vectors:
        return out
    if store.backend == "postgresql":
        return pg.cosines(store.conn, qvec, ids, _held(store))  # type: ignore[arg-type]
    blob = to_blob(qvec)
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        out.update(
            store.conn.execute(
                f"SELECT rowid, 1 - vec_distance_cosine(embedding, ?) FROM memory_vec "
                f"WHERE rowid IN ({','.join('?' * len(chunk))})",
                (blob, *chunk),
            )
        )
    return out


def document_count(store: Store, term: str) -> int:
    """How many memories hold `term` (an FTS5 literal) in their keyword index row."""
    if store.backend == "postgresql":
        return pg.document_count(store.conn, term)  # type: ignore[arg-type]
    return store.conn.execute("SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (term,)).fetchone()[0]


def terms_held(store: Store, terms: Sequence[str], ids: Sequence[int]) -> dict[int, set[int]]:
    """Which of `terms` (FTS5 literals, as `keyword_hits` takes them; by their index in `terms`) each
    of `ids` holds in its keyword index row, matched as the keyword channel matches them; ids
    holding none are left out."""
    if not terms or not ids:
        return {}
    if store.backend == "postgresql":  # one statement: every round trip counts on a team database
        queries = [(n, query) for n, query in ((n, pg.tsquery(t)[0]) for n, t in enumerate(terms)) if query]
        if not queries:
            return {}
        held = ", ".join("tokens @@ ?::tsquery" for _ in queries)
        marks = ",".join("?" * len(ids))
        rows = store.conn.execute(
            f"SELECT rowid, {held} FROM memory_fts WHERE rowid IN ({marks})", (*(q for _, q in queries), *ids)
        )
        out = {i: {n for (n, _), hit in zip(queries, hits) if hit} for i, *hits in rows}
        return {i: held_ for i, held_ in out.items() if held_}
    # FTS5 seeks to a rowid range but answers `rowid IN (...)` by running the match once per id (42
    # ms for 150 chunks and 8 terms); the chunks of one memory have consecutive ids: a range each.
    runs: list[list[int]] = []
    for i in sorted(set(ids)):
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    found: dict[int, set[int]] = {}
    for n, t in enumerate(terms):
        for lo, hi in runs:
            for (i,) in store.conn.execute(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? AND rowid BETWEEN ? AND ?", (t, lo, hi)
            ):
                found.setdefault(i, set()).add(n)
    return found


def matching_ids(store: Store, match: str) -> list[int]:
    """The ids whose keyword index row matches `match` (an FTS5 query of literals), in id order."""
    if store.backend == "postgresql":
        query = pg.tsquery(match)[0]
        if not query:
            return []
        sql, arg = "SELECT rowid FROM memory_fts WHERE tokens @@ ?::tsquery ORDER BY rowid", query
    else:
        sql, arg = "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid", match
    return [r[0] for r in store.conn.execute(sql, (arg,))]


@dataclass(frozen=True)
class Marks:
    """How far the store has gone: its largest memory id, version id and purge id, the model and
    revision its vectors come from, and the mark of vectors filled in later; on a team database also the keyword totals
    (memory_fts_totals' rows and length), read in the same statement, since every round trip
    counts there."""

    top: int
    version: int
    purged: int
    model: str | None
    revision: str
    filled: str = ""  # changes when vectors were given to rows that had none (Store.embed_missing)
    totals: tuple[int, int] | None = None


def read_marks(conn: Any) -> Marks:
    """The store's marks in one statement (what a warm search reads before it ranks)."""
    sql = db.MARKS_SQL
    if getattr(conn, "backend", "sqlite") != "postgresql":
        return Marks(*conn.execute(sql).fetchone())
    row = conn.execute(
        sql + ", (SELECT rows FROM memory_fts_totals), (SELECT length FROM memory_fts_totals)"
    ).fetchone()
    return Marks(*row[:6], (int(row[6] or 0), int(row[7] or 0)))


@contextmanager
def caught_up(store: Store) -> Iterator[Marks]:
    """One read of how far the store has gone, for a whole search: the warm indexes are caught
    up with it once, and inside the block neither syncs again nor is the largest id read again
    (`top_id`). On a team database each statement is a round trip: this saves three a search.
    The marks are this thread's only; the caller holds the store's lock."""
    marks = read_marks(store.conn)
    for index in (getattr(store, "_text_index", None), getattr(store, "_vector_index", None)):
        if index is not None:
            index.sync(store.conn, marks)
    outer = store.__dict__.get("_marks")
    store._marks = (threading.get_ident(), marks)  # type: ignore[attr-defined]
    try:
        yield marks
    finally:
        store._marks = outer  # type: ignore[attr-defined]


def _fresh(store: Store) -> Marks | None:
    """The marks of the `caught_up` block this thread is in, if any."""
    held = store.__dict__.get("_marks")
    return held[1] if held is not None and held[0] == threading.get_ident() else None


def top_id(store: Store) -> int:
    """The store's largest memory id (an upper bound of its size)."""
    marks = _fresh(store)
    if marks is not None:
        return marks.top
    return store.conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0]


def vector_index(store: Store):
    """The store's in-memory vector index, created on first use and caught up on every call;
    None in processes without numpy (they use sqlite-vec's exact scan), and on PostgreSQL unless
    `warm` built one (cold processes ask the HNSW index)."""
    if not store.has_vectors:
        return None
    index = getattr(store, "_vector_index", None)
    if index is None and store.backend == "postgresql":
        return None
    if index is None:
        try:
            from memory.store.vecindex import VectorIndex
        except ImportError:
            return None
        index = store._vector_index = VectorIndex(store.vector_dim, _queried(store))  # type: ignore[attr-defined]
        index.sync(store.conn, _fresh(store))
    elif _fresh(store) is None:
        index.sync(store.conn)
    return index


def stale_vectors(store: Store) -> str:
    """Why this process's warm vector copy no longer fits the database ("" while it does, or when
    there is none): a reindex switched the model since (VectorIndex.sync saw it before a search)."""
    index = getattr(store, "_vector_index", None)
    return index.stale if index is not None else ""


def text_index(store: Store):
    """The store's in-memory keyword index, caught up, if `warm` built one; else None (FTS5 ranks)."""
    index = getattr(store, "_text_index", None)
    if index is not None and _fresh(store) is None:
        index.sync(store.conn)
    return index


def warm(store: Store, vectors: bool = True) -> None:
    """Make this process a fast searcher of `store` (the server calls it once, after its
    handshake): build the in-memory keyword index, and with `vectors` the vector index where the
    store has vectors (about 1.7 s and 3.5 s per 100k memories), and shorten the interpreter's thread
    switch interval (process-wide). The indexes are read on a connection of their own, so searches
    meanwhile go on with SQLite alone. Cold processes (hooks, one-shot CLI commands) never call this."""
    import sys

    from memory.store.textindex import TextIndex

    # A search embeds its query on a second thread while this one runs the other channels; they
    # hand the GIL back and forth dozens of times a search. At Python's default 5 ms switch
    # interval each hand-over can wait that long (search p50 30 ms at 100k; 1 ms: 26 ms).
    sys.setswitchinterval(min(sys.getswitchinterval(), 0.001))
    # Decided once: a store that gets its first vector meanwhile builds the vector index on its
    # first vector search instead (vector_index; on PostgreSQL the HNSW index serves it).
    vectors = vectors and store.has_vectors and bool(store.vector_dim)
    dim = store.vector_dim
    if store.backend == "postgresql":  # the same role's rows: a warm copy ranks what it may read
        conn: Any = pg.connect(store.conn.url, busy_timeout_ms=store.config.busy_timeout_ms)  # type: ignore[attr-defined]
    else:
        conn = db.connect(store.path, vectors=vectors, readonly=True)
    try:
        keywords = TextIndex.build(conn)
        nearest = None
        if vectors and dim:
            try:
                from memory.store.vecindex import VectorIndex
            except ImportError:
                pass
            else:
                nearest = VectorIndex(dim, _queried(store))
                nearest.sync(conn)
    finally:
        conn.close()
    with store.tx.lock:
        store._text_index = keywords  # type: ignore[attr-defined]
        if nearest is not None and getattr(store, "_vector_index", None) is None:
            store._vector_index = nearest  # type: ignore[attr-defined]


def exact_vector_hits(store: Store, qvec: Any, scopes: Sequence[str], k: int) -> list[tuple[int, float]]:
    """sqlite-vec's exact nearest neighbours (what the in-memory index is checked against)."""
    if store.backend == "postgresql":
        return pg.vector_hits(store.conn, qvec, scopes, k, _held(store))  # type: ignore[arg-type]
    marks = ",".join("?" * len(scopes))
    return [
        (r[0], 1 - r[1])
        for r in store.conn.execute(
            f"SELECT rowid, distance FROM memory_vec WHERE embedding MATCH ? AND k = ? AND scope IN ({marks})",
            (to_blob(qvec), k, *scopes),
        )
    ]


FEW = 64  # ids load_vectors reads one by one (or from a warm process's index)


def load_vectors(store: Store, ids: list[int]) -> tuple[list[int], Any]:
    """(ids that have a vector, float32 matrix of unit rows) for `ids`, in the order given.

    Many ids: one scan of the vector table (vec0 looks rows up by id slowly); few: by id.
    """
    import numpy as np

    dim = store.vector_dim or 1
    if not store.has_vectors or not ids:
        return [], np.zeros((0, dim), dtype=np.float32)
    index = getattr(store, "_vector_index", None)
    if index is not None and len(ids) <= FEW:  # a warm process: already in memory
        return index.vectors(ids)
    if store.backend == "postgresql":
        return pg.load_vectors(store.conn, ids, dim, _held(store))  # type: ignore[arg-type]
    found: dict[int, bytes] = {}
    if len(ids) > 2000:
        every = _scan_vectors(store)
        if every is not None:
            all_ids, matrix = every
            pos = {int(i): n for n, i in enumerate(all_ids.tolist())}
            have = [i for i in ids if i in pos]
            picked = matrix[np.fromiter((pos[i] for i in have), dtype=np.int64, count=len(have))]
            del matrix  # peak: two copies of the vectors, briefly
            return have, picked
        wanted = set(ids)
        for rowid, blob in store.conn.execute("SELECT rowid, embedding FROM memory_vec"):
            if rowid in wanted:
                found[rowid] = blob
    elif len(ids) <= FEW:  # vec0 scans the whole table for an IN list, and looks a rowid up directly
        for mid in ids:
            for rowid, blob in store.conn.execute("SELECT rowid, embedding FROM memory_vec WHERE rowid = ?", (mid,)):
                found[rowid] = blob
    else:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for rowid, blob in store.conn.execute(
                f"SELECT rowid, embedding FROM memory_vec WHERE rowid IN ({','.join('?' * len(chunk))})", chunk
            ):
                found[rowid] = blob
    have = [i for i in ids if i in found]
    if not have:
        return [], np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(found[i] for i in have), dtype="<f4").reshape(len(have), -1).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1)
    return have, matrix


def _scan_vectors(store: Store) -> tuple[Any, Any] | None:
    """Every stored vector, read from sqlite-vec's chunk tables (about 4x faster than a scan of
    the virtual table), unit-normalised. None if the layout is not the one expected (another
    sqlite-vec version): the caller then scans the virtual table."""
    import numpy as np

    c, dim = store.conn, store.vector_dim
    try:
        rows = np.array(
            c.execute(
                "SELECT rowid, chunk_id, chunk_offset FROM memory_vec_rowids ORDER BY chunk_id, chunk_offset"
            ).fetchall(),
            dtype=np.int64,
        ).reshape(-1, 3)
        if not len(rows) or not dim:
            return None
        out = np.empty((len(rows), dim), dtype=np.float32)
        bounds = np.r_[0, np.flatnonzero(np.diff(rows[:, 1])) + 1, len(rows)]
        for start, end in zip(bounds[:-1], bounds[1:]):  # one chunk blob in memory at a time
            got = c.execute(
                "SELECT vectors FROM memory_vec_vector_chunks00 WHERE rowid = ?", (int(rows[start, 1]),)
            ).fetchone()
            if got is None or len(got[0]) % (4 * dim):
                return None
            out[start:end] = np.frombuffer(got[0], dtype="<f4").reshape(-1, dim)[rows[start:end, 2]]
    except Exception:  # no such table or column: not the layout this reads
        return None
    probe = int(rows[len(rows) // 2, 0])
    check = c.execute("SELECT embedding FROM memory_vec WHERE rowid = ?", (probe,)).fetchone()
    if check is None or not np.array_equal(np.frombuffer(check[0], dtype="<f4"), out[len(rows) // 2]):
        return None
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
    return rows[:, 0], out


# -- upkeep (memory.maintenance.storage decides when) --------------------------------------------


def vector_slots(store: Store) -> tuple[int, int]:
    """(slots, vectors) of the vector index: sqlite-vec frees a chunk of 1024 slots only once all
    of it is deleted, so scattered deletions leave holes."""
    c = store.conn
    if store.backend == "postgresql":  # a table: no slots to waste
        n = c.execute("SELECT count(*) FROM memory_vec").fetchone()[0]
        return n, n
    return (
        c.execute("SELECT coalesce(sum(size), 0) FROM memory_vec_chunks").fetchone()[0],
        c.execute("SELECT count(*) FROM memory_vec_rowids").fetchone()[0],
    )


def rebuild_vectors(store: Store) -> None:
    """Rewrite the vector index without its holes, in one transaction."""
    if store.backend == "postgresql":
        return  # autovacuum's job on PostgreSQL
    sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_vec'").fetchone()[0]
    coarse = "coarse" in sql
    with store.tx.atomic() as conn:
        conn.execute("DROP TABLE IF EXISTS memory_vec_compact")
        conn.execute(
            "CREATE TABLE memory_vec_compact AS SELECT rowid AS id, embedding, scope FROM memory_vec ORDER BY rowid"
        )
        conn.execute("DROP TABLE memory_vec")
        conn.execute(sql)
        conn.execute(
            "INSERT INTO memory_vec (rowid, embedding, scope" + (", coarse" if coarse else "") + ") "
            "SELECT id, embedding, scope"
            + (", vec_quantize_binary(embedding)" if coarse else "")
            + " FROM memory_vec_compact"
        )  # no ORDER BY: a sorter drops the bit vector's subtype
        conn.execute("DROP TABLE memory_vec_compact")


def optimize_keywords(store: Store) -> None:
    """Merge the keyword index's segments (contentless FTS5 keeps deletion markers until then)."""
    if store.backend == "postgresql":
        return  # GIN needs no merging beyond autovacuum
    with store.tx.atomic() as conn:
        conn.execute("INSERT INTO memory_fts (memory_fts) VALUES ('optimize')")
