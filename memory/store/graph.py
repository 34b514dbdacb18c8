"""Entities, aliases, typed relations and memory-entity links.

Functions take a connection inside the caller's transaction, so a memory and its links commit
together. Entity names are resolved case-insensitively, then through aliases.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import memory.store.pg as pg
from memory.errors import InvalidInput, NotFound
from memory.lang import glossary, mentions, text
from memory.store.records import scrub_label


def norm(name: str) -> str:
    return " ".join(name.split()).casefold()


def find_entity(conn, scope_list: Sequence[str], name: str, known: dict[str, list[str]] | None = None) -> int | None:
    """The id of the entity called `name` (or aliased so) in the first scope that has it; failing
    that, of the configured entity `name` is an alias of (`known`, the known_entities setting)."""
    found = _find(conn, scope_list, name)
    if found is None and known:
        canon, _ = mentions.canonical(name, known)
        if canon != name:
            found = _find(conn, scope_list, canon)
    if found is None and not name.isascii():
        found = _translated(conn, scope_list, name)
    return found


def _translated(conn, scope_list: Sequence[str], name: str) -> int | None:
    """The one entity whose name in code a Chinese name for a part translates (账本服务: ledger-api;
    `mentions.same_part`); None when there is none, or more than one (计费服务 with billing-service
    and billing-worker both stored). Each connection remembers what it found and the newest entity
    it had read then, so a name asked again reads only the entities made since (an import naming
    订单服务 in every line, with no order-api stored, scanned the scope's names once a line)."""
    words = mentions.zh_part_names(name) == [name] and glossary.english_of(name)
    first = sorted({w[:4] for w in words[0] if w.isascii()}) if words else []
    if not first:
        return None
    like = " OR ".join("lower(name) LIKE ?" for _ in first)
    known = conn.__dict__.setdefault("_maple_translated", {})
    (newest,) = conn.execute("SELECT coalesce(max(id), 0) FROM entities").fetchone()
    for scope in scope_list:
        read, alike = known.get((scope, name), (0, []))
        if newest < read:  # (entities rolled back or deleted since: read them all again)
            read, alike = 0, []
        if newest > read:
            rows = conn.execute(
                f"SELECT id, name FROM entities WHERE id > ? AND scope = ? AND name LIKE '%-%' AND ({like})",
                (read, scope, *(f"%{w}%" for w in first)),
            ).fetchall()
            alike = alike + [eid for eid, code in rows if code.isascii() and mentions.same_part(name, code)]
            known[(scope, name)] = (newest, alike)
        if alike:
            marks = ",".join("?" * len(alike))
            alive = [r[0] for r in conn.execute(f"SELECT id FROM entities WHERE id IN ({marks})", alike)]
            if alive:
                return alive[0] if len(alive) == 1 else None
    return None


def named_both_ways(conn, scope_list: Sequence[str], ids: Sequence[int]) -> dict[int, int]:
    """The entities that name the same part of the system as one of `ids` in the other language
    (ledger-api and 账本服务, `mentions.same_part`), kept apart because one was stored before the other
    was known: {entity: the one of `ids` it names}. Looked up by name: the Chinese names a code name
    may go by (`mentions.zh_names_for`), the code name a Chinese one translates to (`_translated`)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    found: dict[int, int] = {}
    for eid, name in conn.execute(f"SELECT id, name FROM entities WHERE id IN ({marks})", list(ids)).fetchall():
        if name.isascii() and "-" in name and (zh := [norm(n) for n in mentions.zh_names_for(name)]):
            km, sm = ",".join("?" * len(zh)), ",".join("?" * len(scope_list))
            for (twin,) in conn.execute(
                f"SELECT id FROM entities WHERE norm IN ({km}) AND scope IN ({sm}) UNION "
                f"SELECT e.id FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
                f"WHERE a.norm IN ({km}) AND e.scope IN ({sm})",
                (*zh, *scope_list, *zh, *scope_list),
            ):
                found.setdefault(twin, eid)
        elif mentions.zh_part_names(name) == [name] and (twin := _translated(conn, scope_list, name)) is not None:
            found.setdefault(twin, eid)
    return {twin: eid for twin, eid in found.items() if twin != eid}


def _find(conn, scope_list: Sequence[str], name: str) -> int | None:
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
    name = " ".join(scrub_label(name, _secrets(conn)).split())
    eid = find_entity(conn, [scope], name)
    if eid is not None and not name.isascii() and _find(conn, [scope], name) is None:
        aliases = [*aliases, name]  # found by its translation (`_translated`): 账本服务 is a name of ledger-api
    if eid is None:
        eid = conn.execute(
            "INSERT INTO entities (scope, name, norm, kind, created_at) VALUES (?, ?, ?, ?, ?)",
            (scope, name, norm(name), kind or "thing", now),
        ).lastrowid
    elif kind and kind not in ("thing", "name"):
        # A more specific kind wins: a name first seen in passing, later seen speaking, is a person.
        conn.execute("UPDATE entities SET kind = ? WHERE id = ? AND kind IN ('thing', 'name')", (kind, eid))
    own = conn.execute("SELECT norm FROM entities WHERE id = ?", (eid,)).fetchone()[0]
    for alias in aliases:
        alias = scrub_label(alias, _secrets(conn)) if alias else alias
        if alias and norm(alias) != own:
            conn.execute(
                "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) VALUES (?, ?, ?)",
                (eid, alias, norm(alias)),
            )
    return eid


def link_names(
    conn,
    memory_id: int,
    scope: str,
    entities: Iterable[tuple[str, ...]],
    now: float,
    resolved: dict | None = None,
    known: dict[str, list[str]] | None = None,
) -> list[int]:
    """Link a memory to entities given as (name, kind) or (name, kind, role)."""
    links = resolve_names(conn, memory_id, scope, entities, now, resolved, known)
    insert_links(conn, links)
    return [eid for _, eid, _ in links]


def resolve_names(
    conn,
    memory_id: int,
    scope: str,
    entities: Iterable[tuple[str, ...]],
    now: float,
    resolved: dict | None = None,
    known: dict[str, list[str]] | None = None,
) -> list[tuple[int, int, str]]:
    """The (memory id, entity id, role) links of `link_names`, creating the entities but not the links.

    A name that is a configured alias (`known`, the known_entities setting) resolves to its
    canonical entity, whose aliases are stored with it. `resolved` caches (scope, name, kind) ->
    entity id across the memories of one transaction, where the same few entities recur (most of
    the SQL of a batch insert otherwise).
    """
    links = []
    for name, kind, *rest in entities:
        key = (scope, " ".join(name.split()).casefold(), kind)
        eid = resolved.get(key) if resolved is not None else None
        if eid is None:
            canon, aliases = canonical(name, known)
            others, nicknames = (rest[1:] + [(), ()])[:2]  # a person named several ways (mentions.aliases_in)
            if others or nicknames:
                eid = join(conn, scope, canon, kind, now, [*aliases, *others], known, resolved, nicknames)
            else:
                eid = upsert_entity(conn, scope, canon, kind, now, aliases)
            if resolved is not None:
                resolved[key] = eid
        links.append((memory_id, eid, rest[0] if rest else "mention"))
    return links


_JOINABLE = ("person", "name", "thing", "known")  # kinds a person's entity may have been made with


def join(
    conn,
    scope: str,
    name: str,
    kind: str,
    now: float,
    aliases: Sequence[str],
    known: dict | None = None,
    resolved: dict | None = None,
    nicknames: Sequence[str] = (),
) -> int:
    """One entity for a person a text names several ways ("Alice Chen（陈爱丽）"): the entity one of
    the names already is, `name`'s own first, or else a new one called `name`; the other names
    become its aliases. Entities the other names already were (陈爱丽, made by an earlier memory)
    are merged into it, their links and relations with them, so every name finds every memory.
    A nickname (老王, from "everyone calls him 老王") joins the same way but never names the
    entity: an earlier memory's 老王 is merged into Bob Wang, not Bob Wang into 老王."""
    ids: list[int] = []
    for n in (name, *aliases, *nicknames):
        eid = find_entity(conn, [scope], n, known)
        if eid is not None and eid not in ids:
            ids.append(eid)
    if ids and not any(find_entity(conn, [scope], n, known) for n in (name, *aliases)):
        ids.insert(0, upsert_entity(conn, scope, name, kind, now))  # only nicknames were entities
    aliases = [*aliases, *nicknames]
    if not ids:
        return upsert_entity(conn, scope, name, kind, now, aliases)
    win = ids[0]
    for other in ids[1:]:
        if conn.execute("SELECT kind FROM entities WHERE id = ?", (other,)).fetchone()[0] in _JOINABLE:
            merge_into(conn, other, win)
            if resolved is not None:  # names resolved earlier in this transaction now mean `win`
                for k, v in list(resolved.items()):
                    if v == other:
                        resolved[k] = win
                resolved[("merged", other)] = win
    (win_name,) = conn.execute("SELECT name FROM entities WHERE id = ?", (win,)).fetchone()
    return upsert_entity(conn, scope, win_name, kind, now, [name, *aliases])


# A memory has one link to an entity; two (two of its names in one text, or an entity folded into
# another) keep the stronger role: a speaker or subject over a mention.
_STRONGER_ROLE = (
    "ON CONFLICT(memory_id, entity_id) DO UPDATE SET role = excluded.role "
    "WHERE memory_entities.role = 'mention' AND excluded.role <> 'mention'"
)


def merge_into(conn, lose: int, win: int) -> None:
    """Fold entity `lose` into `win`: its memory links, relations and aliases move over, its name
    becomes an alias of `win`, and it is deleted."""
    (name,) = conn.execute("SELECT name FROM entities WHERE id = ?", (lose,)).fetchone()
    conn.execute(  # (a link both had keeps the stronger role)
        "INSERT INTO memory_entities (memory_id, entity_id, role) "
        "SELECT memory_id, ?, role FROM memory_entities WHERE entity_id = ? " + _STRONGER_ROLE,
        (win, lose),
    )
    conn.execute("UPDATE relations SET src = ? WHERE src = ?", (win, lose))
    conn.execute("UPDATE relations SET dst = ? WHERE dst = ?", (win, lose))
    conn.execute("DELETE FROM relations WHERE src = dst")
    conn.execute(
        "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) "
        "SELECT ?, alias, norm FROM entity_aliases WHERE entity_id = ?",
        (win, lose),
    )
    conn.execute(
        "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) VALUES (?, ?, ?)", (win, name, norm(name))
    )
    conn.execute("DELETE FROM entities WHERE id = ?", (lose,))


def canonical(name: str, known: dict[str, list[str]] | None) -> tuple[str, list[str]]:
    """(name, aliases): the configured entity `name` names, with its aliases, or `name` alone."""
    return mentions.canonical(name, known) if known else (name, [])


def parts_named(conn, scope: str, content: str, now: float, resolved: dict | None = None) -> list[int]:
    """Entities of `scope` that `content` names by a Chinese name for a part of the system: written
    beside its name in code ("计价引擎（pricing-engine）", `mentions.part_pairs`: the Chinese name becomes
    an alias, an entity it was made before joins it), as a name or alias already stored, or by
    translation (账本服务: ledger-api, `_translated`, which makes the name an alias). A name no entity
    answers to makes none: a nickname no alias lists is no entity."""
    found = [join(conn, scope, code, "code", now, [han], None, resolved) for code, han in mentions.part_pairs(content)]
    for name in mentions.zh_part_names(content):
        eid = find_entity(conn, [scope], name)
        if eid is not None:
            found.append(eid)
            if _find(conn, [scope], name) is None:  # found by its translation: a name of it from now on
                conn.execute(
                    "INSERT OR IGNORE INTO entity_aliases (entity_id, alias, norm) VALUES (?, ?, ?)",
                    (eid, name, norm(name)),
                )
    return found


def chinese_names(conn, scope: str) -> dict[str, list[str]]:
    """{name in code: its Chinese names} of `scope`'s parts (aliases such as 计价引擎 for pricing-engine),
    for finding them in a text as `known` names are found (`entities.find`)."""
    out: dict[str, list[str]] = {}
    for name, alias in conn.execute(
        "SELECT e.name, a.alias FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
        "WHERE e.scope = ? AND e.name LIKE '%-%'",
        (scope,),
    ):
        if name.isascii() and text.CJK_RUN.fullmatch(alias):
            out.setdefault(name, []).append(alias)
    return out


def related_named(conn, scope: str, content: str) -> list[int]:
    """Entities of `scope` that `content` names and no detector would find in it: one that takes
    part in a relation, by name or alias, and a person by an alias ("mzhou takes the pages", "浩哥每周四…"
    once a memory said "Li Hao (李浩, 浩哥, login hli)").

    entity_relate makes entities no detector may find again ("pgw", "payments team"); a memory
    naming one is linked to it, so graph expansion reaches the memory. Matched as known names are
    (`mentions.alias_spans`): whole words in any case, Chinese inside its run of characters.
    Latin names of one or two characters are left out: too many words contain them.
    """
    keys = mentions.name_keys(content)
    if not keys:
        return []
    found: set[int] = set()
    for start in range(0, len(keys), 400):
        part = keys[start : start + 400]
        marks = ",".join("?" * len(part))
        for (eid,) in conn.execute(
            f"SELECT e.id FROM entities e WHERE e.scope = ? AND e.norm IN ({marks}) "
            f"AND EXISTS (SELECT 1 FROM relations r WHERE r.src = e.id OR r.dst = e.id) "
            f"UNION SELECT e.id FROM entity_aliases a CROSS JOIN entities e ON e.id = a.entity_id "
            f"WHERE a.norm IN ({marks}) AND e.scope = ? "
            f"AND (e.kind = 'person' OR EXISTS (SELECT 1 FROM relations r WHERE r.src = e.id OR r.dst = e.id))",
            (scope, *part, *part, scope),
        ):
            found.add(eid)
    return sorted(found)


def link_naming_memories(conn, eid: int, limit: int = 500) -> int:
    """Link entity `eid` to the current memories of its scope that name it (by name or alias),
    found through the keyword index and checked as `related_named` checks. Returns how many."""
    scope, name = conn.execute("SELECT scope, name FROM entities WHERE id = ?", (eid,)).fetchone()
    names = [name, *(r[0] for r in conn.execute("SELECT alias FROM entity_aliases WHERE entity_id = ?", (eid,)))]
    links = []
    for n in names:
        phrase = " ".join('"' + t.replace('"', '""') + '"' for t in text.index_text(n).split())
        if not phrase or not (len(" ".join(n.split())) > 2 or text.CJK_RUN.fullmatch(n.strip())):
            continue
        match = f"NEAR({phrase}, 0)" if " " in phrase else phrase
        found = "memory_fts MATCH ?"
        if conn.backend == "postgresql":
            found, match = "f.tokens @@ ?::tsquery", pg.tsquery(match)[0]
        rows = conn.execute(
            "SELECT m.id, m.content FROM memory_fts f JOIN memories m ON m.id = f.rowid "
            f"WHERE {found} AND m.scope = ? AND m.deleted_at IS NULL AND m.parent_id IS NULL LIMIT ?",
            (match, scope, limit),
        ).fetchall()
        links += [(mid, eid, "mention") for mid, content in rows if mentions.names_alias(n, content)]
    before = conn.total_changes
    insert_links(conn, links)
    return conn.total_changes - before


def drop_orphans(conn, entity_ids: Iterable[int]) -> int:
    """Delete those of these entities that no memory links and no relation uses any more (what a
    deletion for good left behind: a name found in a purged memory's text is that text too)."""
    ids = list(dict.fromkeys(entity_ids))
    gone = 0
    for start in range(0, len(ids), 400):
        part = ids[start : start + 400]
        gone += conn.execute(
            f"DELETE FROM entities WHERE id IN ({','.join('?' * len(part))}) "
            "AND NOT EXISTS (SELECT 1 FROM memory_entities l WHERE l.entity_id = entities.id) "
            "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.src = entities.id OR r.dst = entities.id)",
            part,
        ).rowcount
    return gone


def unlink_unnamed(conn, memory_id: int, content: str) -> list[int]:
    """Drop the plain mention links of a memory whose entity its `content` no longer names, by
    name or alias (a memory of 陈爱丽 linked to Alice Chen through the alias); the ids of the
    entities unlinked."""
    folded = content.casefold()
    names: dict[int, list[str]] = {}
    for eid, name in conn.execute(
        "SELECT e.id, e.name FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
        "WHERE l.memory_id = ? AND l.role = 'mention' UNION ALL "
        "SELECT a.entity_id, a.alias FROM memory_entities l JOIN entity_aliases a ON a.entity_id = l.entity_id "
        "WHERE l.memory_id = ? AND l.role = 'mention'",
        (memory_id, memory_id),
    ).fetchall():
        names.setdefault(eid, []).append(name)
    stale = [eid for eid, written in names.items() if not any(n.casefold() in folded for n in written)]
    conn.executemany(
        "DELETE FROM memory_entities WHERE memory_id = ? AND entity_id = ?", [(memory_id, e) for e in stale]
    )
    return stale


def followed(links: Iterable[tuple[int, int, str]], resolved: dict) -> list[tuple[int, int, str]]:
    """Links made earlier in a transaction, pointed at the entities their entities were merged into
    since (`join` notes each merge in `resolved`)."""
    out = []
    for mid, eid, role in links:
        while ("merged", eid) in resolved:
            eid = resolved[("merged", eid)]
        out.append((mid, eid, role))
    return out


def insert_links(conn, links: Iterable[tuple[int, int, str]]) -> None:
    """Store (memory id, entity id, role) links. Two names of one entity in a memory make one link
    with the stronger role: "Nana: I'm Li Na, …" is said by Li Na (a speaker, not a mention)."""
    conn.executemany(
        "INSERT INTO memory_entities (memory_id, entity_id, role) VALUES (?, ?, ?) " + _STRONGER_ROLE,
        links,
    )


def type_of(conn, rel_type: str) -> str:
    """A relation type as stored: checked, redacted, lower_snake_case."""
    if not 0 < len("_".join(rel_type.split())) <= 64:
        raise InvalidInput("relation type must be 1-64 characters, e.g. uses, depends_on, owned_by")
    # Redacted after the check: a label may be longer than the secret it hides.
    return "_".join(scrub_label(rel_type, _secrets(conn)).lower().split())


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
    known: dict[str, list[str]] | None = None,
) -> int:
    """Add the relation src -[rel_type]-> dst (creating either entity), unless it is already open.

    A name resolves through the scope's entities and aliases, then through `known` (the
    known_entities setting), so relating an alias never makes a second entity. Memories already
    stored that name either end are linked to it.
    """
    rel_type = type_of(conn, rel_type)
    (src, src_aliases), (dst, dst_aliases) = canonical(src, known), canonical(dst, known)
    s = upsert_entity(conn, scope, src, "thing", now, src_aliases)
    d = upsert_entity(conn, scope, dst, "thing", now, dst_aliases)
    if s == d:  # the caller's transaction rolls back the entities just made
        same = repr(src) if norm(src) == norm(dst) else f"{src!r} and {dst!r} name one entity"
        raise InvalidInput(
            f"an entity cannot be related to itself ({same}); relate two different entities, "
            "or make one name another's alias with the relation alias_of"
        )
    for eid in {s, d}:
        link_naming_memories(conn, eid)  # memories stored before the relation
    row = conn.execute(
        "SELECT id FROM relations WHERE src = ? AND dst = ? AND type = ? AND valid_to IS NULL", (s, d, rel_type)
    ).fetchone()
    if row:
        if memory_id is not None:  # said again: it holds as long as the newest memory saying it does
            conn.execute("UPDATE relations SET memory_id = ? WHERE id = ?", (memory_id, row[0]))
        return row[0]
    return conn.execute(
        "INSERT INTO relations (src, dst, type, confidence, valid_from, memory_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (s, d, rel_type, confidence, valid_from if valid_from is not None else now, memory_id, now),
    ).lastrowid


def close_relation(
    conn,
    scope_list: Sequence[str],
    src: str,
    rel_type: str,
    dst: str,
    now: float,
    known: dict[str, list[str]] | None = None,
) -> int:
    s, d = find_entity(conn, scope_list, src, known), find_entity(conn, scope_list, dst, known)
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


def unlinked(conn, known: dict[str, list[str]], limit: int | None = None) -> list[tuple[int, str, list]]:
    """(id, scope, entities) of current memories with no entity link at all whose text names
    entities by the store's rule: stored before the rule found them (an import of an earlier
    release detected nothing). Chunks are left out: their parent carries the links."""
    out = []
    for mid, scope, content in conn.execute(
        "SELECT m.id, m.scope, m.content FROM memories m WHERE m.deleted_at IS NULL AND m.parent_id IS NULL "
        "AND NOT EXISTS (SELECT 1 FROM memory_entities l WHERE l.memory_id = m.id) ORDER BY m.id"
    ):
        found = mentions.entities_for(content, known)
        if found:
            out.append((mid, scope, found))
            if limit is not None and len(out) >= limit:
                break
    return out
