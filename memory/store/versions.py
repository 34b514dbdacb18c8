"""A memory's past: earlier versions (`memory_versions`, written by every update), edits that keep
them, supersession (a new memory replaces an old one, which stays as history), and the history of
a memory or a subject read back oldest first."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import memory.store.graph as graph
from memory.errors import InvalidInput, NotFound, already_superseded
from memory.lang import mentions
from memory.store.browse import _marks, status_of
from memory.store.memories import Store
from memory.store.records import Memory, iso

MAX_CHAIN = 100  # memories in one history answer


MAX_VERSIONS = 20  # newest earlier versions shown per memory: an answer must fit a client's output cap


@dataclass
class Version:
    content: str
    reason: str  # why it changed: update, superseded, outcome failed, merge, import, ...
    changed_at: float
    changed: list[str]  # fields that differ from the next version
    editor: str | None = None  # who made the change (None: before MAPLE recorded it)

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reason": self.reason,
            "changed_at": iso(self.changed_at),
            "changed": self.changed,
            "editor": self.editor,
        }


@dataclass
class Entry:
    memory: Memory
    status: str
    supersedes: list[int]  # ids this memory replaced
    versions: list[Version]  # oldest first; the memory itself is the newest

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "status": self.status,
            "supersedes": self.supersedes,
            "versions": [v.to_dict() for v in self.versions],
        }


_IGNORED_CHANGES = {"updated_at", "last_activated_at", "activation_count", "id", "content_hash"}


def _versions(store: Store, m: Memory, scopes: Sequence[str] | None = None) -> list[Version]:
    """The earlier versions of `m`, oldest first; with `scopes`, only those from when the memory
    was in one of them (moved from a project to the global scope, its versions from before stay
    that project's)."""
    rows = store.conn.execute(
        "SELECT content, fields, reason, changed_at, editor FROM memory_versions WHERE memory_id = ? "
        "ORDER BY changed_at, id",
        (m.id,),
    ).fetchall()
    snapshots = [(content, json.loads(fields)) for content, fields, *_ in rows]
    now_fields = {k: v for k, v in m.to_dict().items() if k != "content"}
    snapshots.append((m.content, now_fields))
    out = []
    for i, (content, _, reason, changed_at, editor) in enumerate(rows):
        fields = snapshots[i][1]
        nxt_content, nxt_fields = snapshots[i + 1]
        changed = ["content"] if content != nxt_content else []
        changed += sorted(
            k for k in set(fields) | set(nxt_fields) if k not in _IGNORED_CHANGES and fields.get(k) != nxt_fields.get(k)
        )
        if scopes is None or fields.get("scope", m.scope) in scopes:
            out.append(Version(content, reason, changed_at, changed, editor))
    return out[-MAX_VERSIONS:]


def holds_now(store: Store, memory: Memory) -> int | None:
    """The memory that holds now in place of a superseded one: the end of its chain of successors
    (None when it ends in one forgotten since, or loops)."""
    seen, end = {memory.id}, memory.superseded_by
    while end is not None and end not in seen:
        seen.add(end)
        row = store.conn.execute("SELECT superseded_by, deleted_at FROM memories WHERE id = ?", (end,)).fetchone()
        if row is None or row[1] is not None:
            return None
        if row[0] is None:
            return end
        end = row[0]
    return None


REPLACED_SHOWN = 3  # memories a search result lists as replaced by it


def replaced(store: Store, ids: Sequence[int], scopes: Sequence[str]) -> dict[int, list[Memory]]:
    """For each of these memories, the ones it replaced: superseded by it and kept as history,
    newest first, at most REPLACED_SHOWN. A correction restates one value and leaves the rest of
    the old memory unsaid ("the VPN endpoint is vpn2 now" replaces "... vpn.corp.example.com, using
    WireGuard"), so what the old one said beside the changed value may still hold. Not the
    paraphrases a merge archived (they say nothing the kept one does not)."""
    if not ids:
        return {}
    wanted: dict[int, int] = {}  # replaced id -> the id that replaced it
    for mid, by in store.conn.execute(
        f"SELECT id, superseded_by FROM memories WHERE superseded_by IN ({_marks(ids)}) "
        f"AND scope IN ({_marks(scopes)}) AND deleted_at IS NULL ORDER BY id DESC",
        (*ids, *scopes),
    ):
        if list(wanted.values()).count(by) < REPLACED_SHOWN:
            wanted[mid] = by
    out: dict[int, list[Memory]] = {}
    for m in sorted(store.get_many(list(wanted)), key=lambda m: -m.id):
        out.setdefault(wanted[m.id], []).append(m)
    return out


def history(
    store: Store, scopes: Sequence[str], *, memory_id: int | None = None, subject: str | None = None
) -> list[Entry]:
    """The supersession chain around a memory, or every memory about a subject with their chains;
    oldest first, each with its earlier versions. Archived and superseded memories included."""
    if memory_id is None and (subject is None or not subject.strip()):
        raise InvalidInput("give either a memory id or a subject: the history of what? (search finds the id)")
    if memory_id is not None and subject is not None and subject.strip():
        raise InvalidInput("give either a memory id or a subject, not both")
    c = store.conn
    if memory_id is not None:
        start = store.get(memory_id, include_deleted=True)
        if start.scope not in scopes:
            raise NotFound(f"no memory {memory_id} in this project or the global scope; search to find the right id")
        seeds = [start.id]
    else:
        seeds = [
            r[0]
            for r in c.execute(
                f"SELECT id FROM memories WHERE scope IN ({_marks(scopes)}) AND parent_id IS NULL "
                f"AND subject = ? COLLATE NOCASE ORDER BY id LIMIT ?",
                (*scopes, subject.strip(), MAX_CHAIN),
            )
        ]
        if not seeds:
            raise NotFound(
                f"no memory has the subject {subject!r} in this project or the global scope; "
                "a listing (memory_list, `maple-memory list`) shows subjects, a search finds memories by topic"
            )
    # Walk superseded_by forwards and backwards (a merge can make several memories point at one), and
    # kept_from both ways: what a correction of one value left current of a memory that held several.
    seen: set[int] = set()
    frontier = list(seeds)
    while frontier and len(seen) < MAX_CHAIN:
        seen.update(frontier)
        marks = _marks(frontier)
        nxt = {
            int(r[0])
            for r in c.execute(
                f"SELECT superseded_by FROM memories WHERE id IN ({marks}) AND superseded_by IS NOT NULL "
                f"UNION SELECT id FROM memories WHERE superseded_by IN ({marks}) AND scope IN ({_marks(scopes)}) "
                f"UNION SELECT CAST(json_extract(metadata, '$.kept_from') AS INTEGER) FROM memories WHERE id IN ({marks}) "
                f"AND json_extract(metadata, '$.kept_from') IS NOT NULL "
                f"UNION SELECT id FROM memories WHERE CAST(json_extract(metadata, '$.kept_from') AS INTEGER) IN ({marks}) "
                f"AND scope IN ({_marks(scopes)})",
                (*frontier, *frontier, *scopes, *frontier, *frontier, *scopes),
            )
        }
        frontier = sorted(nxt - seen)
    memories = [m for m in store.get_many(sorted(seen)) if m.scope in scopes]
    now = store.clock()
    ids = {m.id for m in memories}
    entries = []
    for m in sorted(memories, key=lambda m: (m.created_at, m.id)):
        supersedes = [
            r[0]
            for r in c.execute("SELECT id FROM memories WHERE superseded_by = ? ORDER BY id", (m.id,))
            if r[0] in ids
        ]
        entries.append(Entry(m, status_of(m, now), supersedes, _versions(store, m, scopes)))
    return entries


def edit(
    store: Store, memory_id: int, *, reason: str = "update", keep_history: bool = True, **changes: Any
) -> tuple[Memory, bool]:
    """Change a memory in place (the previous version is kept); returns (memory, changed).

    Changes that would leave it as it is write nothing, so repeating an edit is harmless. A new
    content is re-linked to the entities it names (caller-given roles such as speaker stay).
    `keep_history=False` is a redacting edit: the old text leaves the database file (Store.update).
    """
    old = store.get(memory_id)
    given = {k: v for k, v in changes.items() if v is not None}
    if not given:
        raise InvalidInput("nothing to change: give at least one field (content, importance, tags, ...)")
    if all(_same(getattr(old, k, None), v) for k, v in given.items()):
        return old, False
    new = store.update(memory_id, reason=reason, keep_history=keep_history, **given)
    if new.content != old.content:
        _relink(store, new)
    return new, True


def _same(current: Any, wanted: Any) -> bool:
    if isinstance(current, list) and isinstance(wanted, (list, tuple)):
        return [str(x).lower() for x in current] == [str(x).strip().lower() for x in wanted]
    if isinstance(current, str) and isinstance(wanted, str):
        return " ".join(current.split()) == " ".join(wanted.split())
    return current == wanted


def _relink(store: Store, m: Memory) -> None:
    """Link a memory to the entities its new content names; drop plain mentions it no longer makes."""
    found = mentions.entities_for(m.content, store.config.known_entities)
    folded = m.content.casefold()
    with store.tx.atomic() as conn:
        stale = [
            r[0]
            for r in conn.execute(
                "SELECT l.entity_id FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
                "WHERE l.memory_id = ? AND l.role = 'mention'",
                (m.id,),
            ).fetchall()
            if graph.entity_dict(conn, r[0])["name"].casefold() not in folded
        ]
        conn.executemany(
            "DELETE FROM memory_entities WHERE memory_id = ? AND entity_id = ?", [(m.id, e) for e in stale]
        )
        if found:
            graph.link_names(conn, m.id, m.scope, found, store.clock(), known=store.config.known_entities)
        graph.insert_links(conn, [(m.id, eid, "mention") for eid in graph.related_named(conn, m.scope, m.content)])


def supersede(store: Store, memory_id: int, replacement: Any, reason: str = "superseded") -> tuple[Memory, Memory]:
    """Store `replacement` (a NewMemory) and retire `memory_id` in its favour: the old memory stays
    as history (valid_to now, superseded_by the new id) and leaves search. Returns (old, new)."""
    with store.tx.atomic():
        # Checked inside the write: of two teammates replacing the same memory at once, the second
        # finds it already replaced and is refused, as if they had taken turns.
        current = store.get(memory_id)
        if current.superseded_by is not None:
            raise already_superseded(memory_id, current.superseded_by)
        new = store.add(replacement)
        if new.id == memory_id:
            raise InvalidInput(
                "the replacement is the same text as the memory; change the content, or update it in place instead"
            )
        old = store.update(memory_id, valid_to=store.clock(), superseded_by=new.id, reason=reason)
    return old, new
