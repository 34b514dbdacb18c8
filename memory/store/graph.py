"""Entities, aliases, typed relations and memory-entity links.

Functions take a connection inside the caller's transaction, so a memory and its links commit
together. Entity names are resolved case-insensitively, then through aliases.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from memory.errors import InvalidInput, NotFound
from memory.store.records import scrub


def norm(name: str) -> str:
    return " ".join(name.split()).casefold()


def find_entity(conn, scope_list: Sequence[str], name: str) -> int | None:
    """The id of the entity called `name` (or aliased so) in the first scope that has it."""
    n = norm(name)
    for scope in scope_list:
        row = conn.execute("SELECT id FROM entities WHERE scope = ? AND norm = ?", (scope, n)).fetchone()
        if row:
            return row[0]
        # CROSS JOIN keeps aliases first: otherwise SQLite walks every entity in the scope.
        row = conn.execute(
            "SELECT e.id FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
            "WHERE a.norm = ? AND e.scope = ? LIMIT 1",
            (n, scope),
        ).fetchone()
        if row:
            return row[0]
    return None


MAX_NAME = 200  # characters of an entity name


def _secrets(conn) -> Sequence[str]:
    return getattr(conn, "redact_patterns", ())


def upsert_entity(conn, scope: str, name: str, kind: str, now: float, aliases: Iterable[str] = ()) -> int:
    """The id of the entity `name` in `scope`, created if new; the name is redacted like any text
    the store writes (a secret pasted as an entity name is not kept, nor found by it)."""
    if not 0 < len(" ".join(name.split())) <= MAX_NAME:
        raise InvalidInput(f"entity name must be 1-{MAX_NAME} characters")
    # Redacted before its lines are joined (a rule may need the line a secret ends) and after the
    # length check (a label may be longer than the secret it hides).
    name = " ".join(scrub(name, _secrets(conn)).split())
    eid = find_entity(conn, [scope], name)
    if eid is None:
        eid = conn.execute(
            "INSERT INTO entities (scope, name, norm, kind, created_at) VALUES (?, ?, ?, ?, ?)",
            (scope, name, norm(name), kind or "thing", now),
        ).lastrowid
    elif kind and kind not in ("thing", "name"):
        # A more specific kind wins: a name first seen in passing, later seen speaking, is a person.
        conn.execute("UPDATE entities SET kind = ? WHERE id = ? AND kind IN ('thing', 'name')", (kind, eid))
    for alias in aliases:
        alias = scrub(alias, _secrets(conn)) if alias else alias
        if alias and norm(alias) != norm(name):
            conn.execute(
                "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) VALUES (?, ?, ?)",
                (eid, alias, norm(alias)),
            )
    return eid


def link_names(
    conn, memory_id: int, scope: str, entities: Iterable[tuple[str, ...]], now: float, resolved: dict | None = None
) -> list[int]:
    """Link a memory to entities given as (name, kind) or (name, kind, role)."""
    links = resolve_names(conn, memory_id, scope, entities, now, resolved)
    insert_links(conn, links)
    return [eid for _, eid, _ in links]


def resolve_names(
    conn, memory_id: int, scope: str, entities: Iterable[tuple[str, ...]], now: float, resolved: dict | None = None
) -> list[tuple[int, int, str]]:
    """The (memory id, entity id, role) links of `link_names`, creating the entities but not the links.

    `resolved` caches (scope, name, kind) -> entity id across the memories of one transaction,
    where the same few entities recur (most of the SQL of a batch insert otherwise).
    """
    links = []
    for name, kind, *role in entities:
        key = (scope, " ".join(name.split()).casefold(), kind)
        eid = resolved.get(key) if resolved is not None else None
        if eid is None:
            eid = upsert_entity(conn, scope, name, kind, now)
            if resolved is not None:
                resolved[key] = eid
        links.append((memory_id, eid, role[0] if role else "mention"))
    return links


def insert_links(conn, links: Iterable[tuple[int, int, str]]) -> None:
    """Store (memory id, entity id, role) links; a memory's first link to an entity wins."""
    conn.executemany("INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, role) VALUES (?, ?, ?)", links)


def relate(
    conn,
    scope: str,
    src: str,
    rel_type: str,
    dst: str,
    now: float,
    *,
    memory_id: int | None = None,
    confidence: float = 1.0,
    valid_from: float | None = None,
) -> int:
    """Add the relation src -[rel_type]-> dst (creating either entity), unless it is already open."""
    if not 0 < len("_".join(rel_type.split())) <= 64:
        raise InvalidInput("relation type must be 1-64 characters")
    # Redacted after the check: a label may be longer than the secret it hides.
    rel_type = "_".join(scrub(rel_type, _secrets(conn)).lower().split())
    s = upsert_entity(conn, scope, src, "thing", now)
    d = upsert_entity(conn, scope, dst, "thing", now)
    row = conn.execute(
        "SELECT id FROM relations WHERE src = ? AND dst = ? AND type = ? AND valid_to IS NULL", (s, d, rel_type)
    ).fetchone()
    if row:
        return row[0]
    return conn.execute(
        "INSERT INTO relations (src, dst, type, confidence, valid_from, memory_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (s, d, rel_type, confidence, valid_from if valid_from is not None else now, memory_id, now),
    ).lastrowid


def close_relation(conn, scope_list: Sequence[str], src: str, rel_type: str, dst: str, now: float) -> int:
    s, d = find_entity(conn, scope_list, src), find_entity(conn, scope_list, dst)
    if s is None or d is None:
        raise NotFound(f"no entity {src if s is None else dst!r}; entity_get lists what exists")
    return conn.execute(
        "UPDATE relations SET valid_to = ? WHERE src = ? AND dst = ? AND type = ? AND valid_to IS NULL",
        (now, s, d, "_".join(rel_type.lower().split())),
    ).rowcount


def entity_dict(conn, eid: int) -> dict:
    row = conn.execute("SELECT id, scope, name, kind, metadata FROM entities WHERE id = ?", (eid,)).fetchone()
    if row is None:
        raise NotFound(f"no entity {eid}")
    aliases = [r[0] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (eid,))]
    return {
        "id": row[0],
        "scope": row[1],
        "name": row[2],
        "kind": row[3],
        "aliases": aliases,
        "metadata": json.loads(row[4]),
    }
