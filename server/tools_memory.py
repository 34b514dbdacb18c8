"""MCP tools for looking after memories: update, pin, list, history, stats.

Same rules as server/tools.py: each tool calls one method of the application API and returns a
pydantic model; MapleError becomes a tool error the model can act on. Only the current project's
and global memories are ever touched.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, StrictInt

from server.state import AppState, IndexState, ModelState
from server.tools import Layer, MemoryOut, _calls

LIST_CONTENT_CHARS = 500
MAX_PAGE = 200  # memories per page of memory_list: a page must fit a client's output cap
ScopeChoice = Literal["project", "global", "all"]


# -- memory_update ------------------------------------------------------------------------------


class UpdateOut(BaseModel):
    action: Literal["edited", "superseded", "unchanged"] = Field(
        description=(
            "edited = changed in place (the old version is kept in its history); superseded = a new "
            "memory replaces it; unchanged = it already said that"
        )
    )
    memory: MemoryOut = Field(description="The memory as it is now (for 'superseded', the new memory)")
    replaced: MemoryOut | None = Field(description="For 'superseded': the old memory, now history")
    versions: int = Field(description="Earlier versions kept for this memory (memory_history shows them)")


def memory_update(
    id: Annotated[StrictInt, Field(description="The memory's id (from memory_search or memory_list)")],
    ctx: Context[AppState],
    content: Annotated[
        str | None,
        Field(min_length=1, description=("New text, self-contained like a new memory; leave out to keep the text")),
    ] = None,
    layer: Annotated[Layer | None, Field(description="New layer: fact, experience or decision")] = None,
    category: Annotated[str | None, Field(min_length=1, max_length=64, description="New category")] = None,
    subject: Annotated[str | None, Field(max_length=200, description="New subject")] = None,
    importance: Annotated[StrictInt | None, Field(ge=1, le=5, description="New importance, 1-5")] = None,
    tags: Annotated[list[str] | None, Field(description="New tags (replace the old ones)")] = None,
    scope: Annotated[
        Literal["project", "global"] | None, Field(description=("Move it: global makes it visible in every project"))
    ] = None,
    occurred_at: Annotated[str | None, Field(description="When it happened, ISO 8601")] = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="New metadata object (replaces the old one)")] = None,
    mode: Annotated[
        Literal["edit", "supersede"],
        Field(
            description=(
                "edit = change this memory in place, keeping the old version in its history (fixing a "
                "typo or wording); supersede = store the changed memory as a new one and retire this one "
                "as history (the fact itself changed: 'we moved from MySQL to Postgres')"
            )
        ),
    ] = "edit",
    reason: Annotated[
        str, Field(min_length=1, max_length=200, description=("Why it changed, kept with the old version"))
    ] = "update",
    forget_old: Annotated[
        bool,
        Field(
            description=(
                "true = the old text is deleted for good, not kept as a version (a secret pasted by "
                "mistake); edit mode only"
            )
        ),
    ] = False,
) -> UpdateOut:
    """Change a memory that is partly wrong or out of date. Nothing is lost: the previous version
    stays in the memory's history (memory_history). Use memory_forget for memories that are
    simply wrong."""
    with _calls(ctx) as app:
        d = app.update(
            id,
            content=content,
            layer=layer,
            category=category,
            subject=subject,
            importance=importance,
            tags=tags,
            scope=scope,
            occurred_at=occurred_at,
            metadata=metadata,
            mode=mode,
            reason=reason,
            forget_old=forget_old,
        )
    return UpdateOut(
        action=d["action"],
        memory=MemoryOut.of(d["memory"]),
        replaced=MemoryOut.of(d["replaced"]) if d["replaced"] else None,
        versions=d["versions"],
    )


# -- memory_pin ---------------------------------------------------------------------------------


def memory_pin(
    id: Annotated[StrictInt, Field(description="The memory's id")],
    ctx: Context[AppState],
    pinned: Annotated[
        bool, Field(description="true = pin (always surfaced first, never decays); false = unpin")
    ] = True,
) -> MemoryOut:
    """Pin a memory so it is always put in front of the assistant and kept from decay and
    consolidation; or unpin it. Pin only what matters in nearly every session."""
    with _calls(ctx) as app:
        return MemoryOut.of(app.pin(id, pinned)["memory"])


# -- memory_list --------------------------------------------------------------------------------


class ListItem(BaseModel):
    id: int
    content: str
    truncated: bool = Field(description="Content was cut to 500 characters; memory_get returns all of it")
    status: Literal["current", "superseded", "expired", "archived"]
    layer: str
    category: str
    subject: str | None
    scope: str
    importance: int
    pinned: bool
    tags: list[str]
    occurred_at: str | None
    updated_at: str | None


class ListOut(BaseModel):
    memories: list[ListItem]
    total: int = Field(description="Memories matching the filters, over all pages")
    next_cursor: str | None = Field(
        description="Pass as cursor (with the same filters and sort) for the next page; null = no more"
    )


def memory_list(
    ctx: Context[AppState],
    scope: Annotated[ScopeChoice, Field(description="project, global, or all (both)")] = "all",
    layer: Annotated[Layer | None, Field(description="Only this layer")] = None,
    category: Annotated[str | None, Field(description="Only this category")] = None,
    subject: Annotated[str | None, Field(description="Only memories about this subject (case-insensitive)")] = None,
    tag: Annotated[str | None, Field(description="Only memories with this tag")] = None,
    pinned: Annotated[bool | None, Field(description="true = only pinned, false = only unpinned")] = None,
    status: Annotated[
        Literal["current", "history", "archived", "all"],
        Field(description=("current = in use; history = superseded or expired; archived = forgotten or merged; all")),
    ] = "current",
    sort: Annotated[
        Literal["newest", "oldest", "updated", "importance", "recently_used"],
        Field(
            description=("Order: newest/oldest by when it happened, updated, importance, or recently_used (recalled)")
        ),
    ] = "newest",
    limit: Annotated[StrictInt, Field(ge=1, le=MAX_PAGE, description="Memories per page")] = 20,
    cursor: Annotated[str | None, Field(description="next_cursor from the previous page")] = None,
) -> ListOut:
    """Browse memories by filters instead of by relevance (memory_search ranks by a query).
    Pages with next_cursor."""
    with _calls(ctx) as app:
        page = app.list(
            scope=scope,
            layer=layer,
            category=category,
            subject=subject,
            tag=tag,
            pinned=pinned,
            status=status,
            sort=sort,
            limit=limit,
            cursor=cursor,
        )
    items = [
        ListItem(
            content=m["content"][:LIST_CONTENT_CHARS],
            truncated=len(m["content"]) > LIST_CONTENT_CHARS,
            **{k: m[k] for k in ListItem.model_fields if k not in ("content", "truncated")},
        )
        for m in page["memories"]
    ]
    return ListOut(memories=items, total=page["total"], next_cursor=page["next_cursor"])


# -- memory_history -----------------------------------------------------------------------------


class VersionOut(BaseModel):
    content: str = Field(description="The text before this change")
    reason: str = Field(description="Why it changed (update, superseded, outcome failed, merge, ...)")
    changed_at: str | None
    changed: list[str] = Field(description="Fields this change altered")
    editor: str | None = Field(None, description="Who made the change (a user name or team database role)")


class HistoryEntry(BaseModel):
    memory: MemoryOut
    status: Literal["current", "superseded", "expired", "archived"]
    superseded_by: int | None = Field(description="The memory that replaced this one")
    supersedes: list[int] = Field(description="Memories this one replaced")
    valid_to: str | None = Field(description="When it stopped being true, if it did")
    versions: list[VersionOut] = Field(description="Earlier versions of this memory, oldest first")


class HistoryOut(BaseModel):
    entries: list[HistoryEntry] = Field(description="Oldest first")
    current: list[int] = Field(description="Ids of the entries still current: what is true now")


def memory_history(
    ctx: Context[AppState],
    id: Annotated[
        StrictInt | None, Field(description="A memory id: its chain of replacements and its versions")
    ] = None,
    subject: Annotated[
        str | None, Field(max_length=200, description=("Or a subject: every memory about it, current and past"))
    ] = None,
) -> HistoryOut:
    """How a memory, or what is known about a subject, changed over time: which memories replaced
    which (supersession), each one's earlier versions, and what is current now."""
    with _calls(ctx) as app:
        d = app.history(id, subject)
    out = [
        HistoryEntry(
            memory=MemoryOut.of(e["memory"]),
            status=e["status"],
            superseded_by=e["memory"]["superseded_by"],
            supersedes=e["supersedes"],
            valid_to=e["memory"]["valid_to"],
            versions=[VersionOut(**v) for v in e["versions"]],
        )
        for e in d["entries"]
    ]
    return HistoryOut(entries=out, current=d["current"])


# -- memory_stats -------------------------------------------------------------------------------


class DecisionCounts(BaseModel):
    total: int
    open: int = Field(description="Decisions with no outcome recorded yet")
    worked: int
    failed: int
    partial: int


class StatsOut(BaseModel):
    scopes: list[str] = Field(description="What these counts cover: this project and global")
    memories: int = Field(description="Current memories")
    history: int = Field(description="Superseded or expired memories kept as history")
    archived: int = Field(description="Forgotten memories, restorable")
    pinned: int
    by_layer: dict[str, int]
    by_scope: dict[str, int]
    by_category: dict[str, int]
    decisions: DecisionCounts
    entities: int
    relations: int = Field(description="Relations in force")
    versions: int = Field(description="Earlier versions kept by updates")
    content_bytes: int = Field(description="Size of the memory texts in these scopes")
    database_bytes: int = Field(description="Size of the whole database file (all projects)")
    last_maintenance: str | None = Field(description="When maintenance last ran (ISO 8601), null if never")
    last_maintenance_changes: dict[str, Any] = Field(description="What that pass changed, per step")
    embedding_model: str | None = Field(description="Model of the stored vectors")
    embedding_dim: int | None
    without_vectors: int = Field(description="Memories only keyword search can find (reindex fills them)")
    model: ModelState = Field(description="Whether the embedding model is loaded in this server")
    vectors: str | None = Field(
        default=None, description="Set while the model is ready but memories still wait for their vectors"
    )
    search_indexes: IndexState = Field(
        description="The server's in-memory search indexes; until ready, "
        "searches rank with SQLite alone (same results, slower)"
    )


def memory_stats(ctx: Context[AppState]) -> StatsOut:
    """Counts for this project and global: memories by layer, scope and category, decisions and
    their outcomes, entities, sizes, last maintenance and the embedding model."""
    with _calls(ctx) as app:
        stats = app.stats()
    return StatsOut(**stats, search_indexes=ctx.request_context.lifespan_context.indexes())


def register(server: MCPServer[AppState]) -> None:
    def hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
        return ToolAnnotations(
            read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
        )

    # Updates keep every previous version (and supersede keeps the old memory), so nothing is lost:
    # not destructive. Repeating the same update changes nothing more: idempotent.
    server.add_tool(memory_update, title="Update a memory", annotations=hints(False, False, True))
    server.add_tool(memory_pin, title="Pin or unpin a memory", annotations=hints(False, False, True))
    server.add_tool(memory_list, title="List memories", annotations=hints(True, False, True))
    server.add_tool(memory_history, title="History of a memory or subject", annotations=hints(True, False, True))
    server.add_tool(memory_stats, title="Memory statistics", annotations=hints(True, False, True))
