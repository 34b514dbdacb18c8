"""An in-memory copy of the vector index, for fast nearest-neighbour search in a warm process.

sqlite-vec's KNN is a brute-force scan of float32 rows: about 80 ms of CPU at 100k memories, and
its lookup by rowid (to score candidates other channels found) about 34 ms per 200 rows. So a
long-lived process (the MCP server) keeps two compact copies in numpy:
  - 1-bit codes (dim/8 bytes per memory) for a Hamming pre-pass over everything, and
  - float16 vectors (2 x dim bytes per memory) to re-rank the pre-pass's best by cosine, within
    about 1e-4 of float32 (int8 was 4e-3, and cost LoCoMo R@10 .002),
about 820 bytes per memory at 384 dimensions (82 MB at 100k, 820 MB at 1M). The database stays
the source of truth: before each search the copy catches up with rows other processes added
(new ids) or re-embedded (memory_versions), and candidates are re-checked against SQL filters
afterwards, so a deleted or re-scoped memory never leaks through.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

import memory.store.db as db


def _floats(value: Any) -> np.ndarray:
    """A stored vector as float32: sqlite-vec's little-endian blob, or pgvector's value."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return np.frombuffer(value, dtype="<f4")
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value, dtype=np.float32)


class VectorIndex:
    # Memories seen without a vector (stored while the model loaded, by a process without one, or
    # the chunks of a long memory, embedded after the write: Store.vectors_later) get theirs later
    # from embed_missing, which leaves no version row: they are looked up again, at most
    # WAIT_BATCH of them every WAIT_SECONDS, and at once when embed_missing's mark (Marks.filled)
    # moved, so a search right after the background embedding ranks by the new vectors.
    WAIT_SECONDS = 2.0
    WAIT_BATCH = 200

    def __init__(self, dim: int, model: tuple[str, str] | None = None):
        self.dim = dim
        # The (model, revision) this process's query vectors come from. Each sync reads the one the
        # database records: once a reindex (the owner's, on a team database) switched it, this copy
        # and the process's queries no longer fit what is stored, of whatever dimension: `stale`
        # says why, and the copy answers nothing more (the engine leaves; search uses keywords).
        self.model = model
        self.stale = ""
        self.n = 0  # rows in use; the arrays below grow by doubling
        self.ids = np.zeros(0, dtype=np.int64)
        self.scopes = np.zeros(0, dtype=np.int32)
        # The 1-bit codes stored column-wise (a row per 64-bit word, a column per memory): the
        # Hamming pass then runs over contiguous words, 6x faster than row by row.
        self.words = dim // 64 if dim % 64 == 0 else -(-dim // 8)
        self.bits = np.zeros((self.words, 0), dtype=np.uint64 if dim % 64 == 0 else np.uint8)
        self.f16 = np.zeros((0, dim), dtype=np.float16)
        self.row_of: dict[int, int] = {}
        self.scope_code: dict[str, int] = {}
        self.scope_rows: dict[int, int] = {}  # scope code -> rows
        self.seen_id = 0
        self.seen_version = 0
        self.seen_filled = ""
        self.waiting: set[int] = set()  # ids seen without a vector
        self._next_wait_check = 0.0
        self._wait_cursor = 0
        self.lock = threading.Lock()

    # -- keeping up with the database ------------------------------------------------------------

    def sync(self, conn: Any, marks: Any = None) -> None:
        """Load vectors added or re-embedded since the last sync (up to `marks`, an indexes.Marks,
        read here unless the caller read them), unless a reindex switched the model since."""
        with self.lock:
            if self.stale:
                return
            if marks is None:
                top, version, _, model, revision, filled = conn.execute(db.MARKS_SQL).fetchone()
            else:
                top, version, model, revision = marks.top, marks.version, marks.model, marks.revision
                filled = marks.filled
            if self.model is not None and model is not None and (model, revision) != self.model:
                self.stale = (
                    f"the database's vectors are now from {model!r}"
                    + (f" (revision {revision})" if revision else "")
                    + f", this process's from {self.model[0]!r}: a reindex switched the model"
                )
                self._drop()
                return
            if top > self.seen_id:
                new = [
                    r[0] for r in conn.execute("SELECT id FROM memories WHERE id > ? AND id <= ?", (self.seen_id, top))
                ]
                if len(new) > max(1000, self.n // 50):  # a bulk import: one pass over vec0 beats lookups
                    self._load(
                        conn,
                        "SELECT rowid, scope, embedding FROM memory_vec WHERE rowid > ? AND rowid <= ?",
                        (self.seen_id, top),
                    )
                else:
                    self._load_ids(conn, new)
                self.waiting.update(i for i in new if i not in self.row_of)
                self.seen_id = top
            if version > self.seen_version:
                self._load_ids(
                    conn,
                    [
                        r[0]
                        for r in conn.execute(
                            "SELECT DISTINCT memory_id FROM memory_versions WHERE id > ?", (self.seen_version,)
                        )
                    ],
                )
                self.seen_version = version
            if filled != self.seen_filled:
                self.seen_filled = filled
                self._next_wait_check = 0.0
            if self.waiting and time.monotonic() >= self._next_wait_check:
                pending = sorted(self.waiting)  # in turns from where the last look stopped
                at = bisect.bisect_right(pending, self._wait_cursor)
                ids = (pending[at:] + pending[:at])[: self.WAIT_BATCH]
                self._wait_cursor = ids[-1]
                self._load_ids(conn, ids)
                self.waiting.difference_update(i for i in ids if i in self.row_of)
                self._next_wait_check = time.monotonic() + self.WAIT_SECONDS

    def _drop(self) -> None:
        """Forget every vector (another model's now): nothing is ranked by them any more."""
        self.n = 0
        self.row_of.clear()
        self.scope_rows.clear()
        self.waiting.clear()
        self.ids = np.zeros(0, dtype=np.int64)
        self.scopes = np.zeros(0, dtype=np.int32)
        self.bits = np.zeros((self.words, 0), dtype=self.bits.dtype)
        self.f16 = np.zeros((0, self.dim), dtype=np.float16)

    def _load_ids(self, conn: Any, ids: Sequence[int]) -> None:
        """Load these memories' vectors. vec0 answers `rowid = ?` by lookup but scans the whole
        table for a range or an IN list (27 ms at 100k, 270 ms at 1M), so: one lookup each."""
        rows = []
        for mid in ids:
            rows += conn.execute("SELECT rowid, scope, embedding FROM memory_vec WHERE rowid = ?", (mid,)).fetchall()
        self._add_rows(rows)

    def _load(self, conn: Any, sql: str, args: Sequence[Any]) -> None:
        self._add_rows(conn.execute(sql, tuple(args)))

    def _add_rows(self, rows: Any) -> None:
        ids, scopes, vecs = [], [], []
        for rowid, scope, blob in rows:
            vec = _floats(blob)
            if vec.size != self.dim:
                continue  # another model's vector: a reindex swapped the table under this process
            ids.append(rowid)
            scopes.append(self.scope_code.setdefault(scope, len(self.scope_code)))
            vecs.append(vec)
        if not ids:
            return
        v = np.stack(vecs)
        rows = np.empty(len(ids), dtype=np.int64)
        for i, mid in enumerate(ids):
            row = self.row_of.get(mid)
            if row is None:  # new; re-embedded rows are overwritten in place
                row = self.row_of[mid] = self.n
                self.n += 1
            else:
                self.scope_rows[int(self.scopes[row])] -= 1
            rows[i] = row
        self._grow(self.n)
        self.ids[rows] = ids
        self.scopes[rows] = scopes
        for code in scopes:
            self.scope_rows[code] = self.scope_rows.get(code, 0) + 1
        self.bits[:, rows] = self._bits(v).T
        self.f16[rows] = v.astype(np.float16)

    def _grow(self, size: int) -> None:
        have = len(self.ids)
        if size <= have:
            return
        more = max(size, 2 * have) - have
        self.ids = np.concatenate([self.ids, np.zeros(more, dtype=np.int64)])
        self.scopes = np.concatenate([self.scopes, np.full(more, -1, dtype=np.int32)])
        self.bits = np.concatenate([self.bits, np.zeros((self.words, more), dtype=self.bits.dtype)], axis=1)
        self.f16 = np.concatenate([self.f16, np.zeros((more, self.dim), dtype=np.float16)])

    def _bits(self, v: np.ndarray) -> np.ndarray:
        packed = np.packbits(v > 0, axis=1)
        return packed.view(np.uint64) if self.dim % 64 == 0 else packed

    # -- searching -------------------------------------------------------------------------------

    def search(self, qvec: Any, scopes: Sequence[str], k: int, prepass: int = 0) -> list[tuple[int, float]]:
        """The `k` nearest memories in `scopes` as (id, cosine), best first."""
        q = np.asarray(qvec, dtype=np.float32)
        with self.lock:
            n = self.n
            codes = [self.scope_code[s] for s in scopes if s in self.scope_code]
            if not codes or n == 0:
                return []
            far = self.dim + 1
            qbits = self._bits(q[None, :])[0]
            bits = self.bits[:, :n]
            distance = np.bitwise_count(bits[0] ^ qbits[0]).astype(np.uint16)
            for j in range(1, self.words):
                distance += np.bitwise_count(bits[j] ^ qbits[j])
            if sum(self.scope_rows.get(c, 0) for c in codes) < n:
                distance[~np.isin(self.scopes[:n], codes)] = far
            # The pre-pass keeps every row at least as near as the m-th nearest (m or a few more);
            # 4k re-ranked keep recall@10 against exact search at .997 (100k) and .975 (1M).
            m = min(n, max(prepass or 4 * k, 800))
            cut = int(np.searchsorted(np.cumsum(np.bincount(distance, minlength=far + 1)), m))
            rough = np.flatnonzero(distance <= min(cut, self.dim))
            if len(rough) > 2 * m:  # a crowd of ties at the cut: keep m of them
                rough = rough[np.argpartition(distance[rough], m - 1)[:m]]
            sims = self.f16[rough].astype(np.float32) @ q
            best = np.argsort(-sims)[:k]
            return [(int(self.ids[rough[i]]), float(sims[i])) for i in best]

    def cosines(self, qvec: Any, ids: Sequence[int]) -> dict[int, float]:
        """Cosine of the query with each memory of `ids` that has a vector."""
        q = np.asarray(qvec, dtype=np.float32)
        with self.lock:
            pairs = [(mid, self.row_of[mid]) for mid in ids if mid in self.row_of]
            if not pairs:
                return {}
            rows = np.fromiter((r for _, r in pairs), dtype=np.int64, count=len(pairs))
            sims = self.f16[rows].astype(np.float32) @ q
            return {mid: float(s) for (mid, _), s in zip(pairs, sims)}

    def vectors(self, ids: Sequence[int]) -> tuple[list[int], np.ndarray]:
        """(the ids that have a vector, their vectors as float32 rows), in the order given."""
        with self.lock:
            have = [mid for mid in ids if mid in self.row_of]
            rows = np.fromiter((self.row_of[mid] for mid in have), dtype=np.int64, count=len(have))
            return have, self.f16[rows].astype(np.float32)

    @property
    def nbytes(self) -> int:
        n = self.n
        return n * (self.ids.itemsize + self.scopes.itemsize + self.bits.itemsize * self.words + 2 * self.dim)
