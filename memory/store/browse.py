"""Looking through a store: paged listings, the history of a memory, and per-scope statistics.

Every function takes the scopes a caller may see (the current project and global) and never
reads outside them, so the MCP tools and the CLI can hand their results out as they are.

`list_memories` pages with an opaque cursor over a stable order (the sort key, then the id), so
memories stored or changed while someone pages do not shift the pages already read.
`history` follows the supersession chain (`superseded_by`) both ways and attaches each memory's
earlier versions (`memory_versions`, written by every `Store.update`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from memory.errors import InvalidInput
from memory.store.memories import Store
from memory.store.records import LAYERS, MEMORY_COLUMNS, Memory

Sort = Literal["newest", "oldest", "updated", "importance", "recently_used"]
Status = Literal["current", "history", "archived", "all"]
SORTS: dict[str, tuple[str, str]] = {  # name -> (sort key expression, direction)
    "newest": ("coalesce(occurred_at, created_at)", "DESC"),
    "oldest": ("coalesce(occurred_at, created_at)", "ASC"),
    "updated": ("updated_at", "DESC"),
    "importance": ("importance", "DESC"),
    "recently_used": ("coalesce(last_activated_at, 0)", "DESC"),
    "id": ("id", "ASC"),  # the order memories were stored in (the CLI's listing, paged with `after`)
}
STATUSES = ("current", "history", "archived", "kept", "all")  # kept: current or history, not archived
MAX_PAGE = 1000


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def status_of(m: Memory, now: float) -> str:
    """current, superseded (replaced by a newer memory), expired (valid_to passed) or archived."""
    if m.deleted_at is not None:
        return "archived"
    if m.superseded_by is not None:
        return "superseded"
    if m.valid_to is not None and m.valid_to <= now:
        return "expired"
    return "current"


# -- listing ----------------------------------------------------------------------------------


@dataclass
class Page:
    memories: list[Memory]
    next_cursor: str | None  # None: this was the last page
    total: int  # memories matching the filters, over all pages


def _encode_cursor(sort: str, key: Any, last_id: int) -> str:
    raw = json.dumps([sort, key, last_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        was, key, last_id = json.loads(raw)
        if not isinstance(last_id, int) or not isinstance(key, (int, float)):
            raise ValueError
    except (ValueError, TypeError):
        raise InvalidInput(
            "cursor is not one this listing returned; pass next_cursor unchanged, "
            "or leave it out to start from the first page"
        ) from None
    if was != sort:
        raise InvalidInput(
            f"this cursor pages a listing sorted by {was!r}, not {sort!r}; "
            f"keep sort={was!r} or leave the cursor out to start over"
        )
    return key, last_id


def list_memories(
    store: Store,
    scopes: Sequence[str],
    *,
    layer: str | None = None,
    category: str | None = None,
    subject: str | None = None,
    tag: str | None = None,
    pinned: bool | None = None,
    status: str = "current",
    sort: str = "newest",
    limit: int = 20,
    cursor: str | None = None,
    after: int | None = None,
) -> Page:
    """One page of the memories in `scopes` that pass the filters, in `sort` order.

    `status`: current (the default: not archived, not superseded, not expired), history
    (superseded or expired), kept (either), archived, or all. Chunks of long memories are left
    out: their parent stands for them. `after`: with sort "id", the page after this id.
    """
    if sort not in SORTS:
        raise InvalidInput(f"sort must be one of {', '.join(SORTS)}, got {sort!r}")
    if status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    if layer is not None and layer not in LAYERS:
        raise InvalidInput(f"layer must be one of {', '.join(LAYERS)}, got {layer!r}")
    if not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be 1-{MAX_PAGE}, got {limit!r}")
    now = store.clock()
    where = [f"scope IN ({_marks(scopes)})", "parent_id IS NULL"]
    args: list[Any] = list(scopes)
    live = "(superseded_by IS NULL AND (valid_to IS NULL OR valid_to > ?))"
    if status == "current":
        where += ["deleted_at IS NULL", live]
        args.append(now)
    elif status == "history":
        where += ["deleted_at IS NULL", f"NOT {live}"]
        args.append(now)
    elif status == "archived":
        where.append("deleted_at IS NOT NULL")
    elif status == "kept":
        where.append("deleted_at IS NULL")
    for column, value in (("layer", layer), ("category", category)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    if subject:
        where.append("subject = ? COLLATE NOCASE")
        args.append(subject.strip())
    if tag:
        # tags are stored lower-cased as a JSON array of strings
        where.append("EXISTS (SELECT 1 FROM json_each(memories.tags) t WHERE t.value = ?)")
        args.append(tag.strip().lower())
    if pinned is not None:
        where.append("pinned = ?")
        args.append(int(pinned))
    total = store.conn.execute(f"SELECT count(*) FROM memories WHERE {' AND '.join(where)}", args).fetchone()[0]
    key, direction = SORTS[sort]
    if after is not None:
        if sort != "id":
            raise InvalidInput("`after` pages a listing sorted by id; for other sorts pass next_cursor")
        where.append("id > ?")
        args.append(after)
    if cursor:
        last_key, last_id = _decode_cursor(cursor, sort)
        op = "<" if direction == "DESC" else ">"
        where.append(f"({key} {op} ? OR ({key} = ? AND id {op} ?))")
        args += [last_key, last_key, last_id]
    sql = (
        f"SELECT {MEMORY_COLUMNS}, {key} FROM memories WHERE {' AND '.join(where)} "
        f"ORDER BY {key} {direction}, id {direction} LIMIT ?"
    )
    rows = store.conn.execute(sql, (*args, limit + 1)).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    memories = [Memory.from_row(r[:-1]) for r in rows]
    next_cursor = _encode_cursor(sort, rows[-1][-1], rows[-1][0]) if more and rows else None
    return Page(memories, next_cursor, total)


# -- history ----------------------------------------------------------------------------------


# -- statistics -------------------------------------------------------------------------------


def scoped_stats(store: Store, scopes: Sequence[str]) -> dict[str, Any]:
    """Counts, sizes and upkeep state for `scopes` only (other projects are not even named)."""
    c = store.conn
    marks = _marks(scopes)
    now = store.clock()
    live = f"scope IN ({marks}) AND deleted_at IS NULL AND parent_id IS NULL"

    def by(column: str) -> dict[str, int]:
        return dict(
            c.execute(
                f"SELECT {column}, count(*) FROM memories WHERE {live} "
                f"AND superseded_by IS NULL AND (valid_to IS NULL OR valid_to > ?) "
                f"GROUP BY {column} ORDER BY count(*) DESC",
                (*scopes, now),
            ).fetchall()
        )

    one = lambda sql, *a: c.execute(sql, a).fetchone()[0]  # noqa: E731
    current = sum(by("layer").values())
    outcomes = dict(
        c.execute(
            f"SELECT o.outcome, count(*) FROM decision_outcomes o JOIN memories m ON m.id = o.memory_id "
            f"WHERE m.scope IN ({marks}) AND m.deleted_at IS NULL AND o.id = (SELECT max(id) FROM decision_outcomes "
            f"WHERE memory_id = o.memory_id) GROUP BY o.outcome",
            scopes,
        ).fetchall()
    )
    decisions = one(f"SELECT count(*) FROM memories WHERE {live} AND layer = 'decision'", *scopes)
    upkeep = dict(
        c.execute("SELECT key, value FROM meta WHERE key IN ('last_maintenance', 'last_maintenance_counts')").fetchall()
    )
    wal = store.path.with_name(store.path.name + "-wal")
    page_bytes = one("PRAGMA page_count") * one("PRAGMA page_size")
    return {
        "scopes": list(scopes),
        "memories": current,
        "history": one(
            f"SELECT count(*) FROM memories WHERE {live} AND NOT (superseded_by IS NULL "
            f"AND (valid_to IS NULL OR valid_to > ?))",
            *scopes,
            now,
        ),
        "archived": one(
            f"SELECT count(*) FROM memories WHERE scope IN ({marks}) AND deleted_at IS NOT NULL AND parent_id IS NULL",
            *scopes,
        ),
        "pinned": one(f"SELECT count(*) FROM memories WHERE {live} AND pinned = 1", *scopes),
        "by_layer": by("layer"),
        "by_scope": by("scope"),
        "by_category": by("category"),
        "decisions": {
            "total": decisions,
            "open": decisions - sum(outcomes.get(k, 0) for k in ("worked", "failed", "partial")),
            **{k: outcomes.get(k, 0) for k in ("worked", "failed", "partial")},
        },
        "entities": one(f"SELECT count(*) FROM entities WHERE scope IN ({marks})", *scopes),
        "relations": one(
            f"SELECT count(*) FROM relations r JOIN entities e ON e.id = r.src "
            f"WHERE e.scope IN ({marks}) AND (r.valid_to IS NULL OR r.valid_to > ?)",
            *scopes,
            now,
        ),
        "versions": one(
            f"SELECT count(*) FROM memory_versions v JOIN memories m ON m.id = v.memory_id WHERE m.scope IN ({marks})",
            *scopes,
        ),
        "content_bytes": one(
            f"SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM memories WHERE scope IN ({marks})", *scopes
        ),
        # The file holds every project's memories; its size is shown, its other contents are not.
        "database_bytes": page_bytes + (wal.stat().st_size if wal.exists() else 0),
        "last_maintenance": upkeep.get("last_maintenance"),
        "last_maintenance_changes": json.loads(upkeep.get("last_maintenance_counts") or "{}"),
        # (has_vectors re-reads what another connection wrote: a store opened before its first vector)
        "embedding_model": store.vector_model if store.has_vectors else None,
        "embedding_dim": store.vector_dim,
        "without_vectors": _without_vectors(store, scopes),
        "database": store.where,
        "jobs": dict(c.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall()),
    }


def _without_vectors(store: Store, scopes: Sequence[str]) -> int:
    """Memories (a long one with its chunks counting once) still waiting for a vector."""
    marks = _marks(scopes)
    if not store.has_vectors:
        return store.conn.execute(
            f"SELECT count(*) FROM memories WHERE scope IN ({marks}) AND parent_id IS NULL", scopes
        ).fetchone()[0]
    return store.conn.execute(
        f"SELECT count(DISTINCT coalesce(m.parent_id, m.id)) FROM memories m WHERE m.scope IN ({marks}) AND NOT EXISTS "
        f"(SELECT 1 FROM memory_vec v WHERE v.rowid = m.id)",
        scopes,
    ).fetchone()[0]
