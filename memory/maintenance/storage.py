"""Bounded storage, the last maintenance step: pruning, compaction, incremental vacuum, sizes.

- Recall events older than ACCESS_LOG_DAYS and jobs finished more than DONE_JOBS_DAYS ago go.
- The vector index is rebuilt once deletions have left most of its space empty (sqlite-vec frees
  a chunk of 1024 slots only when all of it is deleted), and the keyword index merged after a
  large purge.
- A database created before MAPLE switched on incremental auto-vacuum is rewritten once (VACUUM);
  afterwards `PRAGMA incremental_vacuum` returns freed pages to the disk after every pass.
Rewrites that would hold the write lock for seconds are left to `maple-memory maintain` when the
pass runs inside the server.
"""

from __future__ import annotations

import os
from typing import Any

from memory.maintenance.base import Pass
from memory.store import Store, indexes

DAY = 86400.0
ACCESS_LOG_DAYS = 180  # recall events older than this are pruned (last_activated_at keeps the latest)
DONE_JOBS_DAYS = 7


def size_report(store: Store, detail: bool = False) -> dict[str, Any]:
    """File sizes and page counts; with `detail`, bytes per table and index (dbstat)."""
    c = store.conn
    page_size = c.execute("PRAGMA page_size").fetchone()[0]
    out: dict[str, Any] = {
        "file_bytes": _file_size(str(store.path)),
        "wal_bytes": _file_size(str(store.path) + "-wal"),
        "pages": c.execute("PRAGMA page_count").fetchone()[0],
        "page_size": page_size,
        "free_pages": c.execute("PRAGMA freelist_count").fetchone()[0],
        "auto_vacuum": {0: "none", 1: "full", 2: "incremental"}[c.execute("PRAGMA auto_vacuum").fetchone()[0]],
    }
    # Counted as `stats` counts them, over the whole file: current memories, history (superseded or
    # expired) and archived ones (forgotten or merged); a long memory's parts are rows of their own,
    # not memories.
    now = store.clock()
    current, history, archived = c.execute(
        "SELECT coalesce(sum(CASE WHEN deleted_at IS NOT NULL THEN 0 WHEN superseded_by IS NULL "
        "AND (valid_to IS NULL OR valid_to > ?) THEN 1 ELSE 0 END), 0), "
        "coalesce(sum(CASE WHEN deleted_at IS NOT NULL THEN 0 WHEN superseded_by IS NULL "
        "AND (valid_to IS NULL OR valid_to > ?) THEN 0 ELSE 1 END), 0), "
        "coalesce(sum(CASE WHEN deleted_at IS NOT NULL THEN 1 ELSE 0 END), 0) FROM memories WHERE parent_id IS NULL",
        (now, now),
    ).fetchone()
    out.update(memories=current, history=history, archived=archived)
    if detail:
        try:
            rows = c.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 12").fetchall()
            out["largest"] = {name: size for name, size in rows}
        except Exception as e:  # dbstat is optional in SQLite builds; the rest of the report stands
            out["largest"] = f"unavailable ({e})"
    return out


def _file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def storage(p: Pass, vacuum_limit_mb: float | None) -> None:
    c = p.store.conn
    old_log = c.execute("SELECT count(*) FROM access_log WHERE at < ?", (p.now - ACCESS_LOG_DAYS * DAY,)).fetchone()[0]
    if old_log:
        p.report.add(
            "storage",
            f"{old_log} recall events pruned",
            f"older than {ACCESS_LOG_DAYS} days; each memory keeps its last recall time and count",
        )
    old_jobs = c.execute(
        "SELECT count(*) FROM jobs WHERE status = 'done' AND updated_at < ?", (p.now - DONE_JOBS_DAYS * DAY,)
    ).fetchone()[0]
    if old_jobs:
        p.report.add("storage", f"{old_jobs} finished jobs pruned", f"done more than {DONE_JOBS_DAYS} days ago")
    if not p.dry_run:
        with p.store.tx.atomic() as conn:
            conn.execute("DELETE FROM access_log WHERE at < ?", (p.now - ACCESS_LOG_DAYS * DAY,))
            conn.execute("DELETE FROM jobs WHERE status = 'done' AND updated_at < ?", (p.now - DONE_JOBS_DAYS * DAY,))
    compact_vectors(p, vacuum_limit_mb is not None)
    compact_keywords(p, vacuum_limit_mb is not None)
    mode = c.execute("PRAGMA auto_vacuum").fetchone()[0]
    size_mb = _file_size(str(p.store.path)) / 1e6
    if mode != 2:
        why = (
            "auto_vacuum is off in this database (it can only be switched on by rewriting the file once); "
            "afterwards freed pages are returned to the disk a little at a time"
        )
        if vacuum_limit_mb is not None and size_mb > vacuum_limit_mb:
            p.report.notes.append(
                f"storage: {why}; the file is {size_mb:.0f} MB, so the server leaves that to `maple-memory maintain`"
            )
        else:
            p.report.add("storage", f"VACUUM once to switch on incremental auto-vacuum ({size_mb:.1f} MB)", why)
            if not p.dry_run:
                c.execute("PRAGMA auto_vacuum = INCREMENTAL")
                c.execute("VACUUM")  # outside any transaction: the one time the file is rewritten
                mode = 2
    if mode == 2:
        free = c.execute("PRAGMA freelist_count").fetchone()[0]
        if free:
            p.report.add(
                "storage",
                f"incremental vacuum returned {free} free pages "
                f"({free * c.execute('PRAGMA page_size').fetchone()[0] / 1e6:.1f} MB) to the disk",
                "pages freed by deletions",
            )
            if not p.dry_run:
                c.execute("PRAGMA incremental_vacuum").fetchall()
    if not p.dry_run:
        # Fold the WAL back into the file so the size on disk is the real size; PASSIVE never waits.
        c.execute(
            "PRAGMA wal_checkpoint(PASSIVE)" if vacuum_limit_mb is not None else "PRAGMA wal_checkpoint(TRUNCATE)"
        ).fetchall()


COMPACT_BELOW = 0.7  # rebuild an index once less than this share of its space holds live rows
SERVER_COMPACT_ROWS = 50_000  # larger rebuilds hold the write lock for seconds: left to the CLI


def compact_vectors(p: Pass, in_server: bool) -> None:
    """Rebuild the vector index when deletions left it mostly holes.

    sqlite-vec stores vectors in chunks of 1024 slots and frees a chunk only once all of it is
    deleted, so scattered deletions (purged memories) keep their space until the table is rebuilt.
    """
    store = p.store
    if not store.has_vectors:
        return
    slots, rows = indexes.vector_slots(store)
    if p.dry_run:  # what the purge would have deleted is still there
        rows -= sum(1 for ch in p.report.changes if ch.step == "purge" and ch.memory_id is not None)
    if not slots or rows >= COMPACT_BELOW * slots or slots - rows < 2048:
        return
    if in_server and rows > SERVER_COMPACT_ROWS:
        p.report.notes.append(
            f"storage: the vector index is {rows / slots:.0%} full; `maple-memory maintain` "
            "rebuilds it (too long a write for the server's background worker)"
        )
        return
    p.report.add(
        "storage",
        f"vector index rebuilt: {rows} vectors in {slots} slots",
        f"deleted memories left {slots - rows} empty slots that sqlite-vec only frees when a whole chunk is empty",
    )
    if p.dry_run:
        return
    indexes.rebuild_vectors(store)
    p.checkpoint()


def compact_keywords(p: Pass, in_server: bool) -> None:
    """Merge the keyword index's segments after many deletions (contentless FTS keeps tombstones)."""
    purged = sum(1 for ch in p.report.changes if ch.step == "purge" and ch.memory_id is not None)
    total = p.store.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    if purged < 1000 or purged < 0.1 * (total + purged):
        return
    if in_server and total > SERVER_COMPACT_ROWS:
        p.report.notes.append("storage: `maple-memory maintain` will merge the keyword index after the purge")
        return
    p.report.add("storage", "keyword index merged", f"{purged} purged memories left deletion markers in it")
    if not p.dry_run:
        indexes.optimize_keywords(p.store)
        p.checkpoint()
