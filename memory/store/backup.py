"""Safety nets: online backups, restoring one, an export digest, and re-embedding (reindex).

backup        SQLite's online backup API copies the database page by page inside one read
              transaction, so the copy is consistent even while other processes write (WAL lets
              them carry on). Copies go to <home>/backups as memory-<UTC time>.db, 0600, checked with
              `PRAGMA quick_check`; only the newest `backup_keep` are kept. A team database
              (PostgreSQL) is copied into such a file by memory.app.transfer.backup_team.
restore       The backup is verified first (integrity_check, MAPLE's tables present); the current
              database is itself backed up, then the backup is copied into it through the same
              API, so processes that have it open see the restored content, never a torn file.
              A team database is shared, so it is never replaced: the refusal names `migrate
              --from FILE` (adds what is missing) and the server's own pg_dump / pg_restore.
export_digest A sha256 over canonical JSON of every exported field of every memory (ids written as
              positions in the export, entities as a sorted list), so export -> import -> export
              yields the same digest when nothing was lost.
reindex       Re-embeds every memory (chunks of long ones included: they are rows of `memories`)
              with another model or revision into a new vector table, in batches, with progress
              in `meta` (an interrupted run resumes where it stopped, if it targets the same model
              and revision); memories added or changed meanwhile are caught up at the end; then the
              old table is replaced, and the model, dimension and revision recorded, inside one
              transaction. Keyword search never stops working, and vector search answers from the
              old vectors until the swap; a process still holding the old model writes no vectors
              after it (Store._write_vectors). On a team database only the owner of MAPLE's
              tables may run it; it re-embeds what that role can read, and each teammate's MAPLE
              gives their own global memories vectors afterwards (Store.embed_missing).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import memory.store.db as db
import memory.store.pg as pg
import memory.store.schema as schema
from memory.config import Config
from memory.embed import Embedder, revision_of, to_blob
from memory.errors import InvalidInput, NotFound, StoreUnavailable
from memory.store.memories import Store, ensure_private_dir, record_revision

BACKUP_NAME = re.compile(r"^memory-(\d{8}T\d{6}(?:\d{6})?Z)\.db$")
REINDEX_TABLE = pg.REINDEX_TABLE


# -- backup --------------------------------------------------------------------------------------


def backup_dir(config: Config) -> Path:
    return config.home / "backups"


def list_backups(config: Config) -> list[Path]:
    """Backups in the backup folder, newest first."""
    folder = backup_dir(config)
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if BACKUP_NAME.match(p.name)), key=lambda p: p.name, reverse=True)


@dataclass
class BackupResult:
    path: Path
    bytes: int
    removed: list[Path] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"file": str(self.path), "bytes": self.bytes, "removed": [str(p) for p in self.removed]}


def backup(
    store: Store,
    *,
    keep: int | None = None,
    folder: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> BackupResult:
    """Write a consistent copy of the open database and keep only the newest `keep` copies."""
    cfg = store.config
    keep = cfg.backup_keep if keep is None else keep
    folder = folder or backup_dir(cfg)
    if store.backend == "postgresql":
        raise InvalidInput(
            "a team database is copied by `memory.app.transfer.backup_team` (the CLI's `backup` does it); "
            "this copies SQLite files only"
        )
    target = reserve_backup_file(folder, store.clock())
    dest = db.connect(target, vectors=False)
    try:
        # pages=-1: one step inside one read transaction, so concurrent writers cannot make the
        # copy restart or tear; WAL lets them carry on meanwhile.
        store.conn.backup(
            dest,
            pages=-1,
            progress=(lambda status, remaining, total: progress(total - remaining, total)) if progress else None,
        )
        dest.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        check = dest.execute("PRAGMA quick_check").fetchone()[0]
    except db.DatabaseError as e:
        dest.close()
        target.unlink(missing_ok=True)
        raise StoreUnavailable(db.describe(e, target)) from e
    dest.close()
    if check != "ok":
        target.unlink(missing_ok=True)
        raise StoreUnavailable(
            f"the backup copy failed its check ({check}); the database itself may be damaged: run `maple-memory doctor`"
        )
    return BackupResult(target, target.stat().st_size, prune_backups(cfg, folder, keep))


def reserve_backup_file(folder: Path, now: float) -> Path:
    """A new, empty backup file named after `now` in `folder`, 0600 before any byte is written."""
    ensure_private_dir(folder)
    stamp = datetime.fromtimestamp(now, timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"memory-{stamp}.db"
    n = 0
    while target.exists():  # two backups in the same microsecond of a test clock
        n += 1
        target = folder / f"memory-{stamp[:-1]}{n:02d}Z.db"
    try:
        fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
    except OSError as e:
        raise StoreUnavailable(f"cannot write a backup in {folder}: {e.strerror}; free space or fix permissions") from e
    return target


def prune_backups(config: Config, folder: Path, keep: int) -> list[Path]:
    """Delete the backups in `folder` beyond the newest `keep`; the ones deleted."""
    removed = []
    for old in [p for p in list_backups(config) if p.parent == folder][keep:]:
        old.unlink(missing_ok=True)
        removed.append(old)
    return removed


def keep_authors(team: Store, path: Path) -> int:
    """Give a team database's backup copy (`path`, written by the import rule, which makes the
    importer every copy's author) the authors the team database records: a backup keeps who wrote
    what. Memories are matched by scope and content hash (ids differ in the copy; where one text
    was stored twice in a scope, the first author). Returns the rows changed."""
    authors: dict[tuple[str, str], str] = {}
    for scope, digest, author in team.conn.execute(
        "SELECT scope, content_hash, author FROM memories WHERE author IS NOT NULL ORDER BY id DESC"
    ):
        authors[(scope, digest)] = author  # the oldest comes last and stays
    conn = db.connect(path, vectors=False)
    try:
        with db.Transactions(conn).atomic():
            before = conn.total_changes
            conn.executemany(
                "UPDATE memories SET author = ? WHERE scope = ? AND content_hash = ? AND author IS NOT ?",
                [(author, scope, digest, author) for (scope, digest), author in authors.items()],
            )
            changed = conn.total_changes - before
    finally:
        conn.close()
    return changed


def verify_backup(path: Path) -> dict[str, Any]:
    """Open a backup read-only and check it is a whole MAPLE database; raise InvalidInput if not."""
    if not path.is_file():
        raise NotFound(f"no backup file {path}; `maple-memory backup --list` shows the backups")
    try:
        conn = db.connect(path, vectors=True, readonly=True)
    except StoreUnavailable as e:
        raise InvalidInput(f"{path} cannot be opened as a database: {e}") from e
    try:
        check = conn.execute("PRAGMA integrity_check").fetchone()[0]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        missing = {"memories", "migrations", "meta"} - tables
        if check != "ok" or missing:
            raise InvalidInput(
                f"{path} is not a usable MAPLE backup ("
                + (f"integrity check: {check}" if check != "ok" else f"missing tables {sorted(missing)}")
                + "); choose another with `maple-memory backup --list`"
            )
        memories = conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL").fetchone()[0]
        migrations = conn.execute("SELECT max(id) FROM migrations").fetchone()[0]
    except db.DatabaseError as e:
        raise InvalidInput(f"{path} is not a usable MAPLE backup ({e}); choose another") from e
    finally:
        conn.close()
    return {"file": str(path), "integrity": check, "memories": memories, "migrations": migrations}


def restore_backup(store: Store, path: Path, *, dry_run: bool = False) -> dict[str, Any]:
    """Replace the open database's content with the backup at `path` (verified first).

    The current content is backed up first, so a restore can itself be undone.
    """
    if store.backend == "postgresql":
        raise InvalidInput(
            "a team database is shared, so a backup does not replace it: `maple-memory migrate --from "
            f"{path} --to <the database URL>` adds the backup's memories that are missing (nothing is deleted); "
            "to roll the whole database back, restore the server's own backup (pg_dump / pg_restore)"
        )
    info = verify_backup(path)
    current = store.count()
    report = {
        "dry_run": dry_run,
        "backup": info,
        "memories_now": current,
        "why": f"the database would go from {current} to {info['memories']} memories",
    }
    if dry_run:
        return report
    safety = backup(store, keep=max(store.config.backup_keep, 1) + 1)
    src = db.connect(path, vectors=False, readonly=True)
    try:
        src.backup(store.conn, pages=-1)
    except db.DatabaseError as e:
        raise StoreUnavailable(f"restoring {path} failed ({e}); the previous content is in {safety.path}") from e
    finally:
        src.close()
    schema.migrate(store.conn, store.tx)  # a backup from an older release gets today's schema
    store._load_vector_meta()
    report.update({"restored": True, "previous_content": str(safety.path), "memories": store.count()})
    return report


# -- export digest -------------------------------------------------------------------------------


def export_digest(records: Iterable[dict[str, Any]]) -> tuple[str, int]:
    """(sha256 hex, count) over canonical JSON of every field of every exported record.

    Ids are replaced by positions in the export (parent_id and superseded_by too) and entities are
    sorted, so two stores holding the same memories give the same digest whatever their ids.
    """
    records = list(records)
    position = {r["id"]: n for n, r in enumerate(records)}
    h = hashlib.sha256()
    for n, r in enumerate(records):
        canon = dict(r)
        canon["id"] = n
        for key in ("parent_id", "superseded_by"):
            if canon.get(key) is not None:
                canon[key] = position.get(canon[key], "outside the export")
        canon["entities"] = sorted(map(list, canon.get("entities") or []))
        h.update(json.dumps(canon, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest(), len(records)


# -- reindex -------------------------------------------------------------------------------------


@dataclass
class ReindexReport:
    model: str
    dim: int | None
    previous_model: str | None
    total: int
    revision: str = ""
    previous_revision: str = ""
    embedded: int = 0
    resumed_from: int = 0
    remaining: int = 0  # what this run embeds (a dry run: would), as `reindex_plan` counts it
    dry_run: bool = False
    swapped: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _meta(store: Store, key: str) -> str | None:
    row = store.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def reindex_target(model: str, revision: str) -> str:
    """What the meta table keeps of the model a reindex embeds with: a run for another model or
    revision starts afresh."""
    return f"{model}@{revision}" if revision else model


@dataclass(frozen=True)
class ReindexPlan:
    total: int  # memories (chunks and archived ones included): every one gets a vector
    done: int  # embedded by an interrupted run for the same target, kept
    changed: int  # of those, changed since that run began: embedded again
    through: int  # the last id the interrupted run embedded (0: none)
    started: float | None  # when the interrupted run began

    @property
    def remaining(self) -> int:
        """What a run embeds: every memory after `through`, and the ones changed meanwhile."""
        return self.total - self.done + self.changed


def reindex_plan(conn: Any, target: str) -> ReindexPlan:
    """What a reindex to `target` (reindex_target) would do now, read without changing anything:
    it resumes an interrupted run for the same target, and starts afresh for any other."""
    total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    held = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'reindex%'").fetchall())
    if held.get("reindex_model") != target:
        return ReindexPlan(total, 0, 0, 0, None)
    through = int(held.get("reindex_through") or 0)
    started = float(held["reindex_started_at"]) if held.get("reindex_started_at") else None
    done = conn.execute("SELECT count(*) FROM memories WHERE id <= ?", (through,)).fetchone()[0]
    changed = 0
    if started is not None:
        changed = conn.execute(
            "SELECT count(*) FROM memories WHERE updated_at >= ? AND updated_at > created_at AND id <= ?",
            (started, through),
        ).fetchone()[0]
    return ReindexPlan(total, done, changed, through, started)


def require_rights(store: Store, embedder: Embedder) -> None:
    """Refuse, before anything changes, a reindex this connection's role may not do: on a team
    database only the owner of MAPLE's tables may replace the vector table."""
    if store.backend == "postgresql":
        pg.require_owner_to_reindex(store.conn, embedder.name)  # type: ignore[arg-type]


def reindex(
    store: Store,
    embedder: Embedder,
    *,
    batch: int = 256,
    dry_run: bool = False,
    progress: Callable[[int, int], None] | None = None,
    checkpoint: Callable[[], None] | None = None,
) -> ReindexReport:
    """Re-embed every memory with `embedder` and swap the vector index (resumable).

    Open `store` without an embedder (Store.open refuses a model the database was not built with).
    On a team database the owner of MAPLE's tables runs it (`require_rights`); it re-embeds what
    that role sees, so teammates' global memories get their vectors from their own MAPLE after
    the swap (Store.embed_missing).
    """
    require_rights(store, embedder)
    c = store.conn
    revision = revision_of(embedder)
    target = reindex_target(embedder.name, revision)
    plan = reindex_plan(c, target)
    report = ReindexReport(
        embedder.name,
        embedder.dim,
        store.vector_model,
        plan.total,
        revision=revision,
        previous_revision=store.vector_revision,
        resumed_from=plan.done,
        remaining=plan.remaining,
        dry_run=dry_run,
    )
    if dry_run:
        return report
    total = plan.total
    if _meta(store, "reindex_model") != target:  # a new target model: start afresh
        with store.tx.atomic() as conn:
            conn.execute(f"DROP TABLE IF EXISTS {REINDEX_TABLE}")
            conn.execute(
                "DELETE FROM meta WHERE key IN ('reindex_model', 'reindex_dim', 'reindex_through', "
                "'reindex_started_at')"
            )
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('reindex_model', ?), ('reindex_through', '0'), "
                "('reindex_started_at', ?)",
                (target, repr(store.clock())),
            )
    through = plan.through
    started = float(_meta(store, "reindex_started_at") or store.clock())
    done = report.resumed_from
    if progress:
        progress(done, total)
    while True:
        rows = c.execute(
            "SELECT id, scope, content FROM memories WHERE id > ? ORDER BY id LIMIT ?", (through, batch)
        ).fetchall()
        if not rows:
            break
        _embed_into(store, embedder, rows)
        through = rows[-1][0]
        with store.tx.atomic() as conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'reindex_through'", (str(through),))
        done += len(rows)
        report.embedded += len(rows)
        if progress:
            progress(done, total)
        if checkpoint:
            checkpoint()
    # Memories whose text may have changed after their batch was embedded: updated since the start.
    changed = c.execute(
        "SELECT id, scope, content FROM memories WHERE updated_at >= ? AND updated_at > created_at AND id <= ?",
        (started, through),
    ).fetchall()
    for start in range(0, len(changed), batch):
        _embed_into(store, embedder, changed[start : start + batch])
        report.embedded += len(changed[start : start + batch])
    _swap(store, embedder)
    report.swapped = True
    return report


def _create_table(store: Store, dim: int) -> None:
    """The table a reindex fills, and its dimension in meta (a resumed run finds both)."""
    with store.tx.atomic() as conn:
        if store.backend == "postgresql":
            pg.create_reindex_table(conn, dim)  # type: ignore[arg-type]
        else:
            coarse = f", coarse bit[{dim}]" if dim % 8 == 0 else ""
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS {REINDEX_TABLE} USING vec0("
                f"embedding float[{dim}] distance_metric=cosine, scope text{coarse})"
            )
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('reindex_dim', ?)", (str(dim),))


def _embed_into(store: Store, embedder: Embedder, rows: list[tuple[int, str, str]]) -> None:
    vectors = embedder.embed([r[2] for r in rows])
    dim = len(vectors[0])
    if _meta(store, "reindex_dim") is None:
        _create_table(store, dim)
    if store.backend == "postgresql":
        with store.tx.atomic() as conn:
            pairs = [(mid, scope, vec) for (mid, scope, _), vec in zip(rows, vectors)]
            pg.write_vectors(conn, pairs, REINDEX_TABLE)  # type: ignore[arg-type]
        return
    with store.tx.atomic() as conn:
        for (mid, scope, _), vec in zip(rows, vectors):
            blob = to_blob(vec)
            conn.execute(f"DELETE FROM {REINDEX_TABLE} WHERE rowid = ?", (mid,))
            if dim % 8 == 0:
                conn.execute(
                    f"INSERT INTO {REINDEX_TABLE} (rowid, embedding, scope, coarse) "
                    "VALUES (?, ?, ?, vec_quantize_binary(?))",
                    (mid, blob, scope, blob),
                )
            else:
                conn.execute(
                    f"INSERT INTO {REINDEX_TABLE} (rowid, embedding, scope) VALUES (?, ?, ?)", (mid, blob, scope)
                )


def _swap(store: Store, embedder: Embedder) -> None:
    """Replace memory_vec with the rebuilt table in one transaction (vec0 cannot be renamed; a
    PostgreSQL table is renamed, see pg.swap_vector_table)."""
    dim = int(_meta(store, "reindex_dim") or 0)
    if store.backend == "postgresql":
        if not dim and embedder.dim:
            # Nothing this role sees, but teammates' global memories may need the new table for
            # the vectors their MAPLE gives them (Store.embed_missing).
            _create_table(store, dim := embedder.dim)
        if dim:
            pg.index_reindex_table(store.conn)  # type: ignore[arg-type]
    with store.tx.atomic() as conn:
        if not dim:  # an empty database: nothing was embedded, only the model changes
            conn.execute("DROP TABLE IF EXISTS memory_vec")
            conn.execute("DELETE FROM meta WHERE key IN ('embedding_model', 'embedding_dim', 'embedding_revision')")
        elif store.backend == "postgresql":
            pg.swap_vector_table(conn, dim)  # type: ignore[arg-type]
        else:
            coarse = f", coarse bit[{dim}]" if dim % 8 == 0 else ""
            conn.execute("DROP TABLE IF EXISTS memory_vec")
            conn.execute(
                f"CREATE VIRTUAL TABLE memory_vec USING vec0(embedding float[{dim}] distance_metric=cosine, "
                f"scope text{coarse})"
            )
            cols = "rowid, embedding, scope" + (", coarse" if dim % 8 == 0 else "")
            conn.execute(
                f"INSERT INTO memory_vec ({cols}) SELECT {cols} FROM {REINDEX_TABLE} "
                "WHERE rowid IN (SELECT id FROM memories)"
            )
        if dim:
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('embedding_model', ?), ('embedding_dim', ?)",
                (embedder.name, str(dim)),
            )
            record_revision(conn, revision_of(embedder))
        conn.execute(f"DROP TABLE IF EXISTS {REINDEX_TABLE}")
        conn.execute(
            "DELETE FROM meta WHERE key IN ('reindex_model', 'reindex_dim', 'reindex_through', 'reindex_started_at')"
        )
        # Names' vectors are cached by model name only: another revision's must go too.
        conn.execute("DELETE FROM entity_vectors")
    store._load_vector_meta()
