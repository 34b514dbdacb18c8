"""Reading the knowledge graph: an entity in full, its neighbourhood, paths between entities.

Nodes are entities of the readable scopes (a project and global); edges are relations still in
force (valid_to unset or in the future). An entity of the same name in the project and in the
global scope is one thing seen from two places: lookups by name return both, and traversals
step between them for free (an edge of type `same_entity`), so a project fact about "postgres"
connects to a global one.

Writing relations (add / close) goes through memory.graph, inside the store's transaction.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memory.errors import InvalidInput, NotFound
from memory.store import Memory, Store, graph, iso
from memory.store.records import MEMORY_COLUMNS

TWIN = "same_entity"
MAX_HOPS = 6
MAX_NODES = 500


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


def rel_type(value: str) -> str:
    """Relation types are stored lower_snake_case, as memory.graph.relate writes them."""
    t = "_".join(str(value).lower().split())
    if not t or len(t) > 64:
        raise InvalidInput("relation type must be 1-64 characters, e.g. uses, depends_on, owned_by")
    return t


@dataclass
class Node:
    id: int
    name: str
    kind: str
    scope: str
    memories: int = 0  # linked memories that are current

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "kind": self.kind, "scope": self.scope, "memories": self.memories}


@dataclass
class Edge:
    id: int | None  # None for the implicit same_entity edges
    src: int
    dst: int
    type: str
    confidence: float = 1.0
    valid_from: float | None = None
    valid_to: float | None = None
    memory_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "type": self.type,
            "confidence": round(self.confidence, 4),
            "valid_from": iso(self.valid_from),
            "valid_to": iso(self.valid_to),
            "memory_id": self.memory_id,
        }


class Graph:
    """The graph of `scopes` in `store`, read lazily (only the parts a query touches)."""

    def __init__(self, store: Store, scopes: Sequence[str], types: Iterable[str] | None = None):
        self.store, self.scopes = store, list(scopes)
        self.types = sorted({rel_type(t) for t in types}) if types else None
        self.now = store.clock()
        self._nodes: dict[int, Node] = {}

    # -- lookups ------------------------------------------------------------------------------

    def resolve(self, ref: str | int) -> list[int]:
        """Entity ids for an id or a name/alias: the project's first, then global's."""
        c = self.store.conn
        if isinstance(ref, int) or (isinstance(ref, str) and ref.strip().isdigit() and not self._named(ref.strip())):
            row = c.execute(
                f"SELECT id FROM entities WHERE id = ? AND scope IN ({_marks(self.scopes)})", (int(ref), *self.scopes)
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"no entity {ref} in this project or the global scope; "
                    "use a name, or memory_search to find what is known"
                )
            return [row[0]]
        if not isinstance(ref, str) or not ref.strip():
            raise InvalidInput("give an entity name (or id)")
        known = self.store.config.known_entities
        ids = [i for s in self.scopes if (i := graph.find_entity(c, [s], ref, known)) is not None]
        if not ids:
            raise NotFound(
                f"no entity called {ref!r} in this project or the global scope; entities come from "
                "stored memories (names, files, tools) and from entity_relate"
            )
        return list(dict.fromkeys(ids))

    def _named(self, name: str) -> bool:
        known = self.store.config.known_entities
        return any(graph.find_entity(self.store.conn, [s], name, known) is not None for s in self.scopes)

    def nodes(self, ids: Iterable[int]) -> list[Node]:
        ids = list(dict.fromkeys(ids))
        missing = [i for i in ids if i not in self._nodes]
        c = self.store.conn
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            rows = c.execute(
                f"SELECT e.id, e.name, e.kind, e.scope, (SELECT count(*) FROM memory_entities l JOIN memories m "
                f"ON m.id = l.memory_id WHERE l.entity_id = e.id AND m.deleted_at IS NULL "
                f"AND m.superseded_by IS NULL) FROM entities e WHERE e.id IN ({_marks(chunk)}) "
                f"AND e.scope IN ({_marks(self.scopes)})",
                (*chunk, *self.scopes),
            ).fetchall()
            for r in rows:
                self._nodes[r[0]] = Node(*r)
        return [self._nodes[i] for i in ids if i in self._nodes]

    def twins(self, ids: Iterable[int]) -> dict[int, list[int]]:
        """Entities with the same normalised name in the other readable scopes."""
        ids = list(ids)
        if not ids or len(self.scopes) < 2:
            return {}
        out: dict[int, list[int]] = {}
        for a, b in self.store.conn.execute(
            f"SELECT e.id, t.id FROM entities e JOIN entities t ON t.norm = e.norm AND t.id != e.id "
            f"WHERE e.id IN ({_marks(ids)}) AND t.scope IN ({_marks(self.scopes)})",
            (*ids, *self.scopes),
        ):
            out.setdefault(a, []).append(b)
        return out

    def edges_of(self, ids: Sequence[int], include_closed: bool = False) -> list[Edge]:
        """Relations touching `ids` whose both ends are readable."""
        if not ids:
            return []
        c = self.store.conn
        where = [
            f"(r.src IN ({_marks(ids)}) OR r.dst IN ({_marks(ids)}))",
            f"s.scope IN ({_marks(self.scopes)})",
            f"d.scope IN ({_marks(self.scopes)})",
        ]
        args: list[Any] = [*ids, *ids, *self.scopes, *self.scopes]
        if not include_closed:
            where.append("(r.valid_to IS NULL OR r.valid_to > ?)")
            args.append(self.now)
        if self.types:
            where.append(f"r.type IN ({_marks(self.types)})")
            args += self.types
        rows = c.execute(
            f"SELECT r.id, r.src, r.dst, r.type, r.confidence, r.valid_from, r.valid_to, r.memory_id "
            f"FROM relations r JOIN entities s ON s.id = r.src JOIN entities d ON d.id = r.dst "
            f"WHERE {' AND '.join(where)} ORDER BY r.id",
            args,
        ).fetchall()
        return [Edge(*r) for r in rows]

    def step(self, ids: Sequence[int]) -> list[Edge]:
        """Every edge leaving `ids` one hop, twins included (as same_entity edges)."""
        edges = self.edges_of(ids)
        for a, others in self.twins(ids).items():
            edges += [Edge(None, a, b, TWIN) for b in others]
        return edges

    def memories_of(self, ids: Sequence[int], limit: int = 20) -> list[Memory]:
        """Current memories linked to `ids`, most important and most recent first."""
        if not ids:
            return []
        cols = ", ".join(f"m.{c.strip()}" for c in MEMORY_COLUMNS.split(","))
        rows = self.store.conn.execute(
            # EXISTS, not DISTINCT over a join: PostgreSQL wants a DISTINCT's ORDER BY in its select list
            f"SELECT {cols} FROM memories m WHERE EXISTS (SELECT 1 FROM memory_entities l "
            f"WHERE l.memory_id = m.id AND l.entity_id IN ({_marks(ids)})) AND m.scope IN ({_marks(self.scopes)}) "
            f"AND m.deleted_at IS NULL AND m.superseded_by IS NULL ORDER BY m.pinned DESC, m.importance DESC, "
            f"coalesce(m.occurred_at, m.created_at) DESC LIMIT ?",
            (*ids, *self.scopes, limit),
        ).fetchall()
        return [Memory.from_row(r) for r in rows]


# -- whole answers ------------------------------------------------------------------------------


def entity_detail(
    store: Store, scopes: Sequence[str], ref: str | int, *, memory_limit: int = 20, include_closed: bool = True
) -> dict[str, Any]:
    """An entity with its aliases, its relations (closed ones too, marked) and linked memories."""
    g = Graph(store, scopes)
    ids = g.resolve(ref)
    twins = g.twins(ids)
    ids = list(dict.fromkeys([*ids, *(t for ts in twins.values() for t in ts)]))
    main = graph.entity_dict(store.conn, ids[0])
    aliases = sorted({a for i in ids for a in graph.entity_dict(store.conn, i)["aliases"]})
    edges = g.edges_of(ids, include_closed=include_closed)
    others = {n.id: n for n in g.nodes([e.src for e in edges] + [e.dst for e in edges] + ids)}
    relations = []
    for e in edges:
        outgoing = e.src in ids
        other = others.get(e.dst if outgoing else e.src)
        if other is None:
            continue
        relations.append(
            {
                **e.to_dict(),
                "direction": "out" if outgoing else "in",
                "other": other.to_dict(),
                "open": e.valid_to is None or e.valid_to > g.now,
            }
        )
    memories = g.memories_of(ids, memory_limit)
    total = sum(n.memories for n in g.nodes(ids))
    return {
        "entity": {**main, "memories": others[ids[0]].memories if ids[0] in others else 0},
        "same_entity": [others[i].to_dict() for i in ids[1:] if i in others],
        "aliases": aliases,
        "relations": relations,
        "memories": [m.to_dict() for m in memories],
        "memory_count": total,
    }


def neighbors(
    store: Store,
    scopes: Sequence[str],
    ref: str | int,
    *,
    hops: int = 1,
    types: Iterable[str] | None = None,
    limit: int = 100,
) -> dict[str, Any]:
    """Entities within `hops` relations of `ref` (breadth first), optionally only via `types`."""
    if not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops must be 1-{MAX_HOPS}, got {hops!r}")
    if not 1 <= limit <= MAX_NODES:
        raise InvalidInput(f"limit must be 1-{MAX_NODES}, got {limit!r}")
    g = Graph(store, scopes, types)
    start = g.resolve(ref)
    depth = {i: 0 for i in start}
    frontier = list(start)
    edges: dict[tuple, Edge] = {}
    truncated = False
    while frontier:
        nxt: list[int] = []
        for e in g.step(frontier):
            key = (e.id, min(e.src, e.dst), max(e.src, e.dst), e.type)
            for here, there in ((e.src, e.dst), (e.dst, e.src)):
                if here not in depth or there in depth:
                    continue
                d = depth[here] + (0 if e.type == TWIN else 1)
                if d > hops:
                    continue
                if len(depth) >= limit + len(start):
                    truncated = True
                    continue
                depth[there] = d
                nxt.append(there)
            if e.src in depth and e.dst in depth:
                edges[key] = e
        # twins sit at their twin's depth: expand them in the same round when they are new
        frontier = nxt
    nodes = {n.id: n for n in g.nodes(depth)}
    return {
        "center": [nodes[i].to_dict() for i in start if i in nodes],
        "nodes": [
            {**nodes[i].to_dict(), "hops": d}
            for i, d in sorted(depth.items(), key=lambda kv: (kv[1], kv[0]))
            if i in nodes and i not in start
        ],
        "edges": [e.to_dict() for e in edges.values()],
        "truncated": truncated,
    }


def path(
    store: Store,
    scopes: Sequence[str],
    source: str | int,
    target: str | int,
    *,
    max_hops: int = MAX_HOPS,
    types: Iterable[str] | None = None,
) -> dict[str, Any]:
    """The shortest chain of relations from `source` to `target` (breadth first; direction ignored)."""
    if not isinstance(max_hops, int) or not 1 <= max_hops <= 10:
        raise InvalidInput(f"max_hops must be 1-10, got {max_hops!r}")
    g = Graph(store, scopes, types)
    start, goal = g.resolve(source), set(g.resolve(target))
    came: dict[int, tuple[int, Edge] | None] = {i: None for i in start}
    depth = {i: 0 for i in start}
    queue = deque(start)
    found = next((i for i in start if i in goal), None)
    while queue and found is None:
        # one BFS layer at a time: every node of the layer is expanded with one query
        layer = [queue.popleft() for _ in range(len(queue))]
        for e in g.step(layer):
            for here, there in ((e.src, e.dst), (e.dst, e.src)):
                if here in came and there not in came and depth[here] + (e.type != TWIN) <= max_hops:
                    came[there] = (here, e)
                    depth[there] = depth[here] + (e.type != TWIN)
                    queue.append(there)
                    if there in goal and found is None:
                        found = there
        if len(came) > 50 * MAX_NODES:
            break
    if found is None:
        return {"found": False, "hops": None, "nodes": [], "edges": []}
    chain: list[Edge] = []
    at = found
    while came[at] is not None:
        prev, e = came[at]  # type: ignore[misc]
        chain.append(e)
        at = prev
    chain.reverse()
    order = [at]
    for e in chain:
        order.append(e.dst if e.src == order[-1] else e.src)
    nodes = {n.id: n for n in g.nodes(order)}
    return {
        "found": True,
        "hops": sum(e.type != TWIN for e in chain),
        "nodes": [nodes[i].to_dict() for i in order if i in nodes],
        "edges": [e.to_dict() for e in chain],
    }


def relate(
    store: Store,
    scope: str,
    source: str,
    relation: str,
    target: str,
    *,
    close: bool = False,
    readable: Sequence[str],
    memory_id: int | None = None,
    confidence: float = 1.0,
) -> dict[str, Any]:
    """Add the relation source -[relation]-> target in `scope` (entities created as needed), or
    with `close` end it (valid_to now; kept as history). Returns the relation and both ends."""
    rel_type(relation)  # checked before anything is opened
    for name, value in (("source", source), ("target", target)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{name} must be an entity name")
    if not 0 <= confidence <= 1:
        raise InvalidInput(f"confidence must be in [0, 1], got {confidence!r}")
    if not close and rel_type(relation) in ALIAS_TYPES:
        return _alias(store, scope, source, target, readable)
    with store.tx.atomic() as conn:
        now = store.clock()
        t = graph.type_of(conn, relation)
        if close:
            known = store.config.known_entities
            src, dst = graph.find_entity(conn, [scope], source, known), graph.find_entity(conn, [scope], target, known)
            row = (
                None
                if src is None or dst is None
                else conn.execute(
                    "SELECT id FROM relations WHERE src = ? AND dst = ? AND type = ? AND valid_to IS NULL",
                    (src, dst, t),
                ).fetchone()
            )
            if row is None:
                raise NotFound(
                    f"no open relation {source} -[{t}]-> {target} in the {_scope_word(scope)} scope; "
                    "entity_get shows an entity's relations"
                )
            conn.execute("UPDATE relations SET valid_to = ? WHERE id = ?", (now, row[0]))
            rid = row[0]
        else:
            if memory_id is not None:
                m = store.get(memory_id, include_deleted=True)
                if m.scope not in readable:
                    raise NotFound(f"no memory {memory_id} in this project or the global scope")
            rid = graph.relate(
                conn,
                scope,
                source,
                relation,
                target,
                now,
                memory_id=memory_id,
                confidence=confidence,
                known=store.config.known_entities,
            )
        r = conn.execute(
            "SELECT id, src, dst, type, confidence, valid_from, valid_to, memory_id FROM relations WHERE id = ?", (rid,)
        ).fetchone()
    e = Edge(*r)
    g = Graph(store, readable)
    ends = {n.id: n for n in g.nodes([e.src, e.dst])}
    return {
        "action": "closed" if close else "added",
        "relation": e.to_dict(),
        "source": ends[e.src].to_dict(),
        "target": ends[e.dst].to_dict(),
    }


# "jzhou alias_of 老周": not a relation between two entities but another name of one.
ALIAS_TYPES = frozenset(("alias_of", "alias", "is_alias_of", "aka", "also_known_as", "same_as", "same_person_as"))


def _alias(store: Store, scope: str, alias: str, target: str, readable: Sequence[str]) -> dict[str, Any]:
    """Make `alias` another name of the entity `target` names (created as needed): an entity of its
    own by that name is folded into it (memories, relations, aliases). Returns the action, the alias and
    the entity."""
    with store.tx.atomic() as conn:
        known = store.config.known_entities
        win = graph.find_entity(conn, [scope], target, known)
        if win is None:
            win = graph.upsert_entity(conn, scope, graph.canonical(target, known)[0], "thing", store.clock())
        lose = graph.find_entity(conn, [scope], alias, known)
        if lose is not None and lose != win:
            graph.merge_into(conn, lose, win)  # its name becomes an alias
        elif lose is None:
            graph.upsert_entity(conn, scope, graph.entity_dict(conn, win)["name"], "", store.clock(), [alias])
            graph.link_naming_memories(conn, win)  # memories that name it by the new alias
    node = Graph(store, readable).nodes([win])[0]
    return {"action": "aliased", "alias": alias, "target": node.to_dict()}


def _scope_word(scope: str) -> str:
    return "global" if scope == "global" else "project"


def most_connected(store: Store, scopes: Sequence[str]) -> int | None:
    """The entity with the most open relations and linked memories (a graph page's default centre)."""
    row = store.conn.execute(
        f"SELECT e.id, (SELECT count(*) FROM relations r WHERE (r.src = e.id OR r.dst = e.id) AND r.valid_to IS NULL) "
        f"* 2 + (SELECT count(*) FROM memory_entities l WHERE l.entity_id = e.id) AS degree "
        f"FROM entities e WHERE e.scope IN ({_marks(scopes)}) ORDER BY degree DESC, e.id LIMIT 1",
        scopes,
    ).fetchone()
    return row[0] if row and row[1] > 0 else None


def co_mentioned(
    store: Store, scopes: Sequence[str], ids: Sequence[int], per_node: int = 12
) -> list[tuple[int, int, int]]:
    """(a, b, memories) for entities b named in the same current memories as a, the most shared first."""
    out: list[tuple[int, int, int]] = []
    for a in ids:
        rows = store.conn.execute(
            f"SELECT b.entity_id, count(*) AS n FROM memory_entities x JOIN memory_entities b "
            f"ON b.memory_id = x.memory_id AND b.entity_id != x.entity_id JOIN memories m ON m.id = x.memory_id "
            f"JOIN entities e ON e.id = b.entity_id WHERE x.entity_id = ? AND m.deleted_at IS NULL "
            f"AND m.superseded_by IS NULL AND m.scope IN ({_marks(scopes)}) AND e.scope IN ({_marks(scopes)}) "
            f"GROUP BY b.entity_id ORDER BY n DESC, b.entity_id LIMIT ?",
            (a, *scopes, *scopes, per_node),
        ).fetchall()
        out += [(a, b, n) for b, n in rows]
    return out


def subgraph(
    store: Store,
    scopes: Sequence[str],
    ref: str | int | None = None,
    *,
    hops: int = 2,
    max_nodes: int = 80,
    memories_per_node: int = 5,
) -> dict[str, Any]:
    """Nodes, edges and each node's memories around `ref` (default: the most connected entity),
    for drawing. Besides relations, entities named together in a memory are connected
    (`mentioned_with`): most of what people write links things that way."""
    if not isinstance(hops, int) or not 1 <= hops <= MAX_HOPS:
        raise InvalidInput(f"hops must be 1-{MAX_HOPS}, got {hops!r}")
    if ref is None:
        ref = most_connected(store, scopes)
        if ref is None:
            raise NotFound(
                "the knowledge graph is empty in this project and the global scope; entities appear "
                "as memories are stored (or with `maple-memory relate`)"
            )
    g = Graph(store, scopes)
    start = g.resolve(ref)
    depth = {i: 0 for i in start}
    edges: dict[tuple[int, int, str], dict[str, Any]] = {}
    frontier, truncated = list(start), False
    for _ in range(hops + 1):  # one more round than hops: twins sit at their namesake's depth
        found: list[tuple[int, int, dict[str, Any]]] = []
        for e in g.step(frontier):
            found.append((e.src, e.dst, e.to_dict()))
        linked = {(min(a, b), max(a, b)) for a, b, _ in found}
        for a, b, n in co_mentioned(store, scopes, frontier):
            if (min(a, b), max(a, b)) not in linked:
                found.append(
                    (
                        a,
                        b,
                        {
                            "id": None,
                            "src": min(a, b),
                            "dst": max(a, b),
                            "type": "mentioned_with",
                            "confidence": 1.0,
                            "valid_from": None,
                            "valid_to": None,
                            "memory_id": None,
                            "count": n,
                        },
                    )
                )
        nxt = []
        for a, b, e in found:
            for here, there in ((a, b), (b, a)):
                if here in depth and there not in depth:
                    d = depth[here] + (0 if e["type"] == TWIN else 1)
                    if d > hops:
                        continue
                    if len(depth) >= max_nodes:
                        truncated = True
                        continue
                    depth[there] = d
                    nxt.append(there)
            if a in depth and b in depth:
                edges.setdefault((min(a, b), max(a, b), e["type"]), e)
        frontier = nxt
        if not frontier:
            break
    nodes = [{**n.to_dict(), "hops": depth[n.id]} for n in g.nodes(sorted(depth, key=lambda i: (depth[i], i)))]
    for n in nodes:
        n["memories_shown"] = [
            {
                "id": m.id,
                "content": m.content[:400],
                "layer": m.layer,
                "outcome": (m.metadata.get("outcome") or {}).get("result"),
            }
            for m in g.memories_of([n["id"]], memories_per_node)
        ]
    return {"center": start[0], "nodes": nodes, "edges": list(edges.values()), "truncated": truncated}
