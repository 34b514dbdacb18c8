"""MCP tools for the knowledge graph: entity_get, entity_relate, graph_neighbors, graph_path.

Thin wrappers over the application API (memory.app); only entities of the current project and the global
scope are visible (see that module for how a project entity and a global one of the same name
are joined).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, StrictInt

from memory.retrieval import graph_query
from server.state import AppState
from server.tools import MemoryOut, _calls


class NodeOut(BaseModel):
    id: int
    name: str
    kind: str = Field(description="person, file, package, tool, project, thing, ...")
    scope: str
    memories: int = Field(description="Current memories linked to it")


class HopNode(NodeOut):
    hops: int = Field(description="Relations between it and the starting entity")


class EdgeOut(BaseModel):
    id: int | None = Field(description="Relation id; null for same_entity (one name in project and global)")
    src: int
    dst: int
    type: str = Field(description="Relation type, lower_snake_case (uses, depends_on, ...)")
    confidence: float
    valid_from: str | None
    valid_to: str | None = Field(description="Set once the relation was closed")
    memory_id: int | None = Field(description="The memory it was learned from, if any")


class RelationOut(EdgeOut):
    direction: Literal["out", "in"] = Field(description="out = entity -[type]-> other; in = other -[type]-> entity")
    other: NodeOut
    open: bool = Field(description="Still in force")


class EntityInfo(BaseModel):
    id: int
    name: str
    kind: str
    scope: str
    metadata: dict[str, Any]
    memories: int


class EntityOut(BaseModel):
    entity: EntityInfo
    same_entity: list[NodeOut] = Field(description="The same name in the other scope (project/global), merged here")
    aliases: list[str]
    relations: list[RelationOut]
    memories: list[MemoryOut] = Field(description="Linked memories, pinned and most important first")
    memory_count: int = Field(description="All linked current memories (the list may be shorter)")


def entity_get(
    name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            description=("Entity name or alias (case-insensitive), e.g. 'postgres', 'src/app.py', 'Alice'; or its id"),
        ),
    ],
    ctx: Context[AppState],
    memory_limit: Annotated[StrictInt, Field(ge=0, le=100, description="Most linked memories to return")] = 20,
    include_closed: Annotated[bool, Field(description="Also list relations that were closed (history)")] = True,
) -> EntityOut:
    """Everything known about one entity: aliases, relations to other entities and the memories
    that mention it."""
    with _calls(ctx) as app:
        d = app.entity(name, memory_limit=memory_limit, include_closed=include_closed)
    e = d["entity"]
    return EntityOut(
        entity=EntityInfo(**{k: e[k] for k in EntityInfo.model_fields}),
        same_entity=[NodeOut(**n) for n in d["same_entity"]],
        aliases=d["aliases"],
        relations=[RelationOut(**r) for r in d["relations"]],
        memories=[MemoryOut.of(m) for m in d["memories"]],
        memory_count=d["memory_count"],
    )


class RelateOut(BaseModel):
    action: Literal["added", "closed", "aliased"]
    relation: EdgeOut | None = Field(default=None, description="The relation (none when a name was made an alias)")
    source: NodeOut | None = None
    target: NodeOut
    alias: str | None = Field(default=None, description="With alias_of: the name now another name of target")


def entity_relate(
    source: Annotated[str, Field(min_length=1, max_length=200, description="Entity the relation starts from")],
    relation: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description=(
                "Relation type, e.g. uses, depends_on, owned_by, replaced_by, part_of; alias_of makes source "
                "another name of target (a nickname, a login) instead of a relation"
            ),
        ),
    ],
    target: Annotated[str, Field(min_length=1, max_length=200, description="Entity it points to")],
    ctx: Context[AppState],
    close: Annotated[
        bool, Field(description=("false = add the relation; true = close it (no longer true; kept as history)"))
    ] = False,
    scope: Annotated[
        Literal["project", "global"],
        Field(description=("Where the relation lives: project, or global for facts true everywhere")),
    ] = "project",
    confidence: Annotated[float, Field(ge=0, le=1, description="How sure, 0-1")] = 1.0,
    memory_id: Annotated[StrictInt | None, Field(description="The memory this relation comes from, if any")] = None,
) -> RelateOut:
    """Record that source -[relation]-> target (creating the entities if new), or close such a
    relation when it stops being true. Adding a relation that is already open changes nothing."""
    with _calls(ctx) as app:
        d = app.relate(source, relation, target, scope=scope, close=close, memory_id=memory_id, confidence=confidence)
    return RelateOut(**d)


class NeighborsOut(BaseModel):
    center: list[NodeOut] = Field(description="The starting entity (and its twin in the other scope)")
    nodes: list[HopNode] = Field(description="Entities reached, nearest first")
    edges: list[EdgeOut]
    truncated: bool = Field(description="More entities were in reach than limit")


RelationTypes = Annotated[
    list[str] | None, Field(description=("Follow only these relation types (e.g. ['depends_on']); default all"))
]


def graph_neighbors(
    entity: Annotated[str, Field(min_length=1, max_length=200, description="Entity name, alias or id to start from")],
    ctx: Context[AppState],
    hops: Annotated[StrictInt, Field(ge=1, le=graph_query.MAX_HOPS, description="How many relations away to go")] = 1,
    relation_types: RelationTypes = None,
    limit: Annotated[StrictInt, Field(ge=1, le=graph_query.MAX_NODES, description="Most entities to return")] = 100,
) -> NeighborsOut:
    """Entities connected to an entity within n hops (breadth first), with the relations between
    them; optionally only along some relation types."""
    with _calls(ctx) as app:
        d = app.neighbors(entity, hops=hops, types=relation_types, limit=limit)
    return NeighborsOut(**d)


class PathOut(BaseModel):
    found: bool
    hops: int | None = Field(description="Relations on the path (same_entity steps not counted)")
    nodes: list[NodeOut] = Field(description="From source to target")
    edges: list[EdgeOut] = Field(description="The relations walked, in order (direction as stored)")


def graph_path(
    source: Annotated[str, Field(min_length=1, max_length=200, description="Entity to start from")],
    target: Annotated[str, Field(min_length=1, max_length=200, description="Entity to reach")],
    ctx: Context[AppState],
    max_hops: Annotated[StrictInt, Field(ge=1, le=10, description="Longest path to look for")] = 6,
    relation_types: RelationTypes = None,
) -> PathOut:
    """The shortest chain of relations linking two entities (either direction), e.g. how a
    service depends on a library. found is false when none is within max_hops."""
    with _calls(ctx) as app:
        d = app.path(source, target, max_hops=max_hops, types=relation_types)
    return PathOut(**d)


def register(server: MCPServer[AppState]) -> None:
    def hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
        return ToolAnnotations(
            read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
        )

    server.add_tool(entity_get, title="Get an entity", annotations=hints(True, False, True))
    # Closing a relation keeps it as history (valid_to set), so not destructive.
    server.add_tool(entity_relate, title="Relate two entities", annotations=hints(False, False, True))
    server.add_tool(graph_neighbors, title="Neighbouring entities", annotations=hints(True, False, True))
    server.add_tool(graph_path, title="Path between entities", annotations=hints(True, False, True))
