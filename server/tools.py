"""The MCP tools: thin typed wrappers over the application API (memory.app.Memories).

Each tool takes the app from the lifespan, calls one of its methods and returns a pydantic model
(the SDK derives `outputSchema` and `structuredContent` from it). Library errors (MapleError)
become ToolError, so the model reads the actionable message; argument shapes and ranges are
checked by pydantic from the signatures before a tool runs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, StrictBool, StrictInt, ValidationError

from memory.app import Memories
from memory.app.memories import MAX_LIMIT
from memory.errors import MapleError
from memory.store import db
from server.state import AppState, ModelState

SEARCH_CONTENT_CHARS = 2_000  # per hit; a search of 100 long memories must fit a client's output cap

Layer = Literal["fact", "experience", "decision"]


# -- results -----------------------------------------------------------------------------------


class MemoryOut(BaseModel):
    id: int = Field(description="Use this id with memory_get and memory_forget")
    content: str
    layer: str
    category: str
    subject: str | None
    scope: str = Field(description="'global' or the project directory the memory belongs to")
    importance: int
    tags: list[str]
    pinned: bool
    source: str = Field(
        description="How it came in: manual (memory_store, the CLI), import, extraction (read from a "
        "conversation) or consolidation (summarised by maintenance)"
    )
    source_ref: str | None = Field(
        default=None, description="Where it came from, as its writer gave it (e.g. an imported file's line)"
    )
    session_id: str | None = Field(
        default=None, description="The conversation it was said in (a Claude Code session id, or an import's)"
    )
    occurred_at: str | None = Field(description="When it happened (ISO 8601, UTC)")
    created_at: str | None
    updated_at: str | None
    archived: bool = Field(description="True once forgotten or merged into another (archived); hidden from search")
    status: Literal["current", "superseded", "expired", "archived"] = Field(
        default="current",
        description=(
            "current = in use; superseded = replaced by the memory superseded_by (kept as history); "
            "expired = no longer true (valid_to has passed); archived = forgotten, or merged by maintenance "
            "into the memory superseded_by (memory_restore undoes either)"
        ),
    )
    superseded_by: int | None = Field(
        default=None, description="For a superseded memory: the id of the one that replaced it (what holds now)"
    )
    valid_to: str | None = Field(
        default=None,
        description="Until when it held (ISO 8601, UTC): for a superseded one, when its successor happened",
    )
    metadata: dict[str, Any]
    author: str | None = Field(
        default=None, description="Who stored it: a user name, or on a team database the teammate's database role"
    )

    @classmethod
    def of(cls, d: dict[str, Any]) -> MemoryOut:
        """From a memory as the app returns it (Memory.to_dict())."""
        fields = {k: d[k] for k in cls.model_fields if k in d and k != "status"}
        return cls(archived=d.get("deleted_at") is not None, status=_status(d), **fields)


class Corrected(BaseModel):
    id: int
    content: str = Field(description="Its text (the start of a long one)")


class StoreOut(MemoryOut):
    duplicate: bool = Field(
        default=False,
        description="True when the same text was already stored in that scope: the memory returned is that one",
    )
    supersedes: list[Corrected] = Field(
        default_factory=list,
        description=(
            "Current memories this one corrects (the same subject, a changed value): now superseded by it and "
            "kept as history. Tell the user; if one is not what this corrects, memory_restore makes it current "
            "again"
        ),
    )


def _status(d: dict[str, Any]) -> str:
    """current, superseded, expired or archived, from a memory's dict (times as ISO 8601)."""
    if d.get("deleted_at") is not None:
        return "archived"
    if d.get("superseded_by") is not None:
        return "superseded"
    valid_to = d.get("valid_to")
    if valid_to and datetime.fromisoformat(valid_to.replace("Z", "+00:00")) <= datetime.now(timezone.utc):
        return "expired"
    return "current"


class Hit(BaseModel):
    id: int
    content: str = Field(description="The memory, or for a long one found by a part of it, that part")
    truncated: bool = Field(description="Content was cut for the listing; memory_get returns all of it")
    part: str | None = Field(
        default=None,
        description="For a long memory found by a part of it: which characters content shows and how to read the rest",
    )
    score: float = Field(
        description=(
            "Fused relevance score on one scale for every search (not only within this one): a low top score "
            "means nothing stored is close; a strong match on several channels can exceed 1"
        )
    )
    channels: dict[str, float] = Field(
        description="What each retrieval channel (bm25, vector, ...) added to the score; newer: lifted above an "
        "earlier memory it restates with another value; replaced: found through a memory it replaced (see replaces)"
    )
    superseded_by: int | None = Field(
        default=None,
        description="Only in a search with until (what held then): the memory that has replaced this one since",
    )
    restated_by: list[int] = Field(
        default_factory=list,
        description="Later memories in these results that say this one's thing with another value, ranked above "
        "it: this one may be out of date",
    )
    replaces: list[Corrected] = Field(
        default_factory=list,
        description="Memories this one replaced (superseded by it, kept as history): what they say beside the "
        "value that changed may still hold",
    )
    layer: str
    category: str
    subject: str | None
    scope: str
    importance: int
    tags: list[str]
    occurred_at: str | None
    source_ref: str | None = Field(
        default=None, description="Where it came from, as its writer gave it (e.g. an imported file's line)"
    )
    session_id: str | None = Field(default=None, description="The conversation it was said in, when known")
    metadata: dict[str, Any]


class SearchOut(BaseModel):
    results: list[Hit] = Field(description="Best first")
    model: ModelState = Field(description="Embedding model state; while 'loading', only keyword matching is used")
    without_vectors: list[int] = Field(
        default_factory=list,
        description="Results not wholly embedded yet, found by keywords only: stored without a vector, or a long "
        "memory whose parts still wait for theirs (meaning does not reach those parts yet); MAPLE embeds them "
        "in the background, usually within seconds",
    )
    note: str = Field(default="", description="When there are no results, why: nothing matches (never padded)")


class GetOut(BaseModel):
    memories: list[MemoryOut]
    missing: list[int] = Field(description="Requested ids that do not exist in this project or the global scope")
    parts: list[str] = Field(
        default_factory=list,
        description="Requested ids that are parts (chunks) of a long memory, each with the memory returned for it",
    )


class ForgetOut(BaseModel):
    action: Literal["archived", "purged"]
    memory: MemoryOut


class RestoreOut(BaseModel):
    was: Literal["archived", "superseded", "expired"] = Field(
        description="What the memory was before: now it is current"
    )
    memory: MemoryOut


# -- tools -------------------------------------------------------------------------------------


@contextmanager
def _calls(ctx: Context[AppState]) -> Iterator[Memories]:
    """The app for this request; the library's deliberate errors become tool errors the model can
    read and act on."""
    state = ctx.request_context.lifespan_context
    try:
        yield state.memories
    except MapleError as e:
        raise ToolError(str(e)) from e
    except db.DatabaseError as e:  # a read that met a damaged or vanished database: say so, not "Error executing tool"
        raise ToolError(db.describe(e, state.db.where if state.db is not None else "file")) from e


ARGUMENTS: dict[str, list[str]] = {}  # tool -> its argument names (server.app.build_server fills it)


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """A tool call's rejected arguments in plain words: which argument, what it must be, what to
    do next. Never the rejected values (the caller's data) nor pydantic's text and links."""
    problems = []
    for err in error.errors():
        where = ".".join(str(p) for p in err["loc"]) or "the arguments"
        ctx = err.get("ctx") or {}
        kind = err["type"]
        if kind == "missing":
            problems.append(f"{where} is required")
        elif kind == "extra_forbidden":
            known = ", ".join(ARGUMENTS.get(tool, []))
            problems.append(f"{where} is not an argument of {tool}" + (f" (its arguments: {known})" if known else ""))
        elif kind == "string_too_short":
            problems.append(f"{where} must not be empty" if ctx.get("min_length") == 1 else f"{where} is too short")
        elif kind == "string_too_long":
            problems.append(f"{where} must be at most {ctx.get('max_length')} characters")
        elif kind in ("too_short", "too_long"):
            n = ctx.get("min_length") if kind == "too_short" else ctx.get("max_length")
            least = "at least" if kind == "too_short" else "at most"
            problems.append(f"{where} must have {least} {n} item{'' if n == 1 else 's'}")
        elif kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
            bound = next(iter(ctx.values()), "")
            word = {"greater_than_equal": "at least", "greater_than": "more than", "less_than_equal": "at most"}
            problems.append(f"{where} must be {word.get(kind, 'less than')} {bound}")
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            problems.append(f"{where} must be a whole number")
        elif kind in ("bool_type", "bool_parsing"):
            problems.append(f"{where} must be true or false")
        elif kind in ("string_type",):
            problems.append(f"{where} must be a string")
        elif kind in ("list_type",):
            problems.append(f"{where} must be a list")
        elif kind in ("dict_type", "model_type"):
            problems.append(f"{where} must be a JSON object")
        elif kind == "literal_error":
            problems.append(f"{where} must be one of {ctx.get('expected', 'the values the schema lists')}")
        else:  # pydantic's short message, without the value or a link
            problems.append(f"{where}: {err['msg'].rstrip('.')}")
    # The prefix every other tool error has (the SDK's): the model reads one shape of error.
    return f"Error executing tool {tool}: {'; '.join(dict.fromkeys(problems))}. Fix that and call {tool} again."


def memory_store(
    content: Annotated[
        str,
        Field(
            min_length=1,
            description=(
                "The memory: one self-contained fact, decision or experience, worded so it makes sense "
                "later without this conversation. Secrets are redacted before storing."
            ),
        ),
    ],
    ctx: Context[AppState],
    layer: Annotated[
        Layer,
        Field(
            description=(
                "fact = stable knowledge (preferences, setup, conventions); experience = something that "
                "happened (a bug hunt, an outcome); decision = a choice made and why"
            )
        ),
    ] = "fact",
    category: Annotated[
        str,
        Field(
            min_length=1,
            max_length=64,
            description=("Short free-form grouping, e.g. 'build', 'preference', 'architecture'"),
        ),
    ] = "general",
    subject: Annotated[
        str | None, Field(max_length=200, description=("What the memory is about, e.g. a module, tool or person"))
    ] = None,
    importance: Annotated[
        StrictInt, Field(ge=1, le=5, description=("1 = trivia, 3 = useful, 5 = must never be forgotten"))
    ] = 3,
    tags: Annotated[list[str] | None, Field(description="Keywords to find it by (at most 32)")] = None,
    pinned: Annotated[bool, Field(description="Pinned memories are kept from decay and consolidation")] = False,
    scope: Annotated[
        Literal["project", "global"],
        Field(
            description=("project = only this project sees it; global = every project sees it (user-wide preferences)")
        ),
    ] = "project",
    occurred_at: Annotated[
        str | None, Field(description=("When it happened, ISO 8601 (2025-03-14 or 2025-03-14T09:30:00Z); default now"))
    ] = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="Any extra JSON object to keep with it")] = None,
) -> StoreOut:
    """Save a memory for future sessions. Returns it with its id; storing the same text again in
    the same scope returns the existing memory instead of a duplicate, marked duplicate. A memory
    that corrects a current one (the same subject, a changed value) supersedes it: the old one is
    kept as history and listed in supersedes."""
    with _calls(ctx) as app:
        return _stored(
            app.add(
                content,
                layer=layer,
                category=category,
                subject=subject,
                importance=importance,
                tags=tags,
                pinned=pinned,
                scope=scope,
                occurred_at=occurred_at,
                metadata=metadata,
            )
        )


STORE_ECHO_CHARS = 300  # of a long memory, memory_store echoes this much: the caller just sent it all


def _stored(added: dict[str, Any]) -> StoreOut:
    """What memory_store answers: the memory, with a long text shortened to its start (it was
    stored whole; memory_get returns it), whether it was a duplicate and what it superseded
    (`Memories.add`'s rules, as `maple-memory add --json` says them)."""
    m = added["memory"]
    text = m["content"]
    if len(text) > STORE_ECHO_CHARS * 2:
        cut = text[:STORE_ECHO_CHARS].rstrip()
        text = f"{cut}… [{len(m['content']):,} characters stored; memory_get([{m['id']}]) returns them all]"
    corrected = [{"id": old["id"], "content": old["content"][: STORE_ECHO_CHARS * 2]} for old in added["supersedes"]]
    return StoreOut.of({**m, "content": text, "duplicate": added["duplicate"], "supersedes": corrected})


def memory_search(
    query: Annotated[
        str, Field(min_length=1, description=("What to look for, in words: a question, topic, name or error message"))
    ],
    ctx: Context[AppState],
    limit: Annotated[StrictInt, Field(ge=1, le=MAX_LIMIT, description="How many results at most")] = 10,
    scope: Annotated[
        Literal["project", "global", "all"],
        Field(description=("project = this project's memories, global = user-wide ones, all = both")),
    ] = "all",
    layer: Annotated[Layer | None, Field(description="Only this layer")] = None,
    category: Annotated[str | None, Field(description="Only this category")] = None,
    since: Annotated[
        str | None, Field(description="Only memories that occurred at or after this ISO 8601 time")
    ] = None,
    until: Annotated[
        str | None,
        Field(
            description="Only memories that occurred before this ISO 8601 time, as they stood then (what was "
            "replaced since is included, marked superseded_by)"
        ),
    ] = None,
) -> SearchOut:
    """Find memories relevant to a query, best first, from this project and the global scope.
    A long memory found by one of its parts shows that part (see `part`); other long contents are
    cut to 2,000 characters; memory_get returns the full text."""
    with _calls(ctx) as app:
        found = app.search(query, limit=limit, scope=scope, layer=layer, category=category, since=since, until=until)
    hits = [_hit(r) for r in found["results"]]
    return SearchOut(
        results=hits, model=found["model"], without_vectors=found.get("without_vectors", []), note=found["note"]
    )


def _hit(r: dict[str, Any]) -> Hit:
    """A search result as the model reads it: a long memory found by one of its parts shows
    that part, says where it is and how to read the whole."""
    text, part = r["content"], r.get("part")
    if part:
        text = text[part["start"] : part["end"]]
    fields = {k: r[k] for k in Hit.model_fields if k in r and k not in ("content", "truncated", "part")}
    return Hit(
        content=text[:SEARCH_CONTENT_CHARS],
        truncated=len(r["content"]) > min(len(text), SEARCH_CONTENT_CHARS),
        part=f"{part['where']}; memory_get([{r['id']}]) returns the whole text" if part else None,
        **fields,
    )


def memory_get(
    ids: Annotated[
        list[StrictInt], Field(min_length=1, max_length=100, description="Memory ids, e.g. from memory_search")
    ],
    ctx: Context[AppState],
) -> GetOut:
    """Read whole memories by id (including archived ones, marked archived)."""
    with _calls(ctx) as app:
        d = app.get(ids)
    return GetOut(
        memories=[MemoryOut.of(m) for m in d["memories"]],
        missing=d["missing"],
        parts=[p["note"] for p in d.get("parts", [])],
    )


def memory_forget(
    id: Annotated[StrictInt, Field(description="The memory's id")],
    ctx: Context[AppState],
    permanent: Annotated[
        StrictBool,
        Field(
            description=(
                "false = archive it (hidden from search, restorable with memory_restore); "
                "true = delete it and its chunks for good"
            )
        ),
    ] = False,
) -> ForgetOut:
    """Forget a memory that is wrong or obsolete. Archives it unless permanent is true."""
    with _calls(ctx) as app:
        d = app.forget(id, permanent=permanent)
    return ForgetOut(action=d["action"], memory=MemoryOut.of(d["memory"]))


def memory_restore(
    id: Annotated[StrictInt, Field(description="The memory's id")], ctx: Context[AppState]
) -> RestoreOut:
    """Bring back a forgotten (archived) memory, or make a superseded or expired one current again:
    for a correction that closed the wrong memory (the memory that holds in its place stays
    current; forget it if it is wrong)."""
    with _calls(ctx) as app:
        d = app.restore(id)
    return RestoreOut(was=d["was"], memory=MemoryOut.of(d["memory"]))


def memory_surface(
    prompt: Annotated[str, Field(description="The user's prompt, as typed")],
    ctx: Context[AppState],
    cwd: Annotated[
        str | None,
        Field(
            description=(
                "The session's working directory (informational: this server only surfaces its own "
                "project's and global memories)"
            )
        ),
    ] = None,
    session_id: Annotated[
        str | None,
        Field(
            max_length=200,
            description=("The Claude Code session id; memories already shown to this session are not shown again"),
        ),
    ] = None,
) -> str:
    """For Claude Code's UserPromptSubmit hook (type mcp_tool), not for you: use memory_search.
    Returns the memories relevant to the prompt as hook JSON, {"hookSpecificOutput":
    {"hookEventName": "UserPromptSubmit", "additionalContext": "<maple-memory>..."}}, which Claude
    Code adds to the prompt's context; an empty text when the prompt is trivial or nothing relevant
    is known."""
    try:
        with _calls(ctx) as app:
            block = app.surface(prompt, session_id=session_id)
    except Exception:  # fail open: a hook error would only show the user a banner
        logging.getLogger("maple.server").exception("memory_surface failed; no context added")
        return ""
    return hook_output(block)


def hook_output(block: str) -> str:
    """What an mcp_tool UserPromptSubmit hook answers to add `block` to the prompt: Claude Code
    2.1.332 injects only hook JSON (text starting with "{"); plain text reaches the model as
    "UserPromptSubmit hook success" and nothing else. Empty when there is nothing to add."""
    if not block:
        return ""
    output = {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}
    return json.dumps(output, ensure_ascii=False)


def memory_context(
    query: Annotated[str, Field(min_length=1, description="What the context is for: a task, question or topic")],
    ctx: Context[AppState],
    budget: Annotated[StrictInt, Field(ge=50, le=2400, description="Most tokens of memories to return")] = 800,
) -> str:
    """A compact briefing for a task: pinned and preference memories first, then the memories
    relevant to the query, within a token budget of memory text, each with its id for memory_get;
    the best matches are shown as fully as the budget allows."""
    with _calls(ctx) as app:
        d = app.context(query, budget=budget)
    if d["block"] or d["note"]:  # the note (matches left out for lack of room) outside the data block
        return "\n".join(x for x in (d["block"], d["note"]) if x)
    return (
        "No memory in this project or the global scope is close enough to this query to brief on; "
        "memory_search lists weaker matches, if any."
    )


class MaintainOut(BaseModel):
    dry_run: bool = Field(description="True: nothing was changed; the report says what a real pass would do")
    counts: dict[str, int] = Field(description="Changes per step (decay, dedup, consolidate, forget, ...)")
    total_changes: int
    changes: list[dict[str, Any]] = Field(
        description=("The first 200 changes, each with its step, action, why and memory_id or entity_id")
    )
    size_before: dict[str, Any] = Field(description="Database size and counts before the pass")
    size_after: dict[str, Any]
    notes: list[str]
    seconds: float


def memory_maintain(
    ctx: Context[AppState],
    dry_run: Annotated[
        bool,
        Field(
            description=(
                "true = only report what would change and why; false = apply it (archived memories stay "
                "restorable with `maple-memory restore ID`)"
            )
        ),
    ] = False,
) -> MaintainOut:
    """Run the maintenance agent now over this project's and the global memories: confidence decay
    for memories not recalled in a while, merging near-duplicates, summarising old episodes,
    archiving stale low-confidence memories, and reclaiming space. Returns every change and why.
    Pinned memories are never changed."""
    with _calls(ctx) as app:
        report = app.maintain(dry_run=dry_run, background=True)
    return MaintainOut(**{**report, "changes": report["changes"][:200]})


def register(server: MCPServer[AppState]) -> None:
    """Add every tool to `server`, each with its behaviour hints."""
    # memory_search records which memories were recalled (input to decay), bookkeeping rather than
    # a change the user asked for, so it is marked read-only: clients then allow it in plan mode.
    server.add_tool(
        memory_store,
        title="Store a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_search,
        title="Search memories",
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_get,
        title="Get memories by id",
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_forget,
        title="Forget a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_restore,
        title="Restore a memory",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_maintain,
        title="Run maintenance",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
    )
    # Text content only, no outputSchema (structuredContent): Claude Code parses an mcp_tool hook's
    # text like a command hook's stdout, here hook JSON.
    server.add_tool(
        memory_surface,
        title="Context for a prompt (hook)",
        structured_output=False,
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    server.add_tool(
        memory_context,
        title="Briefing for a task",
        structured_output=False,
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
