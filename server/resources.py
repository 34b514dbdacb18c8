"""MCP resources: one memory (`memory://{id}`) and the statistics (`memory://stats`), as JSON.

Clients that browse resources (Claude Code's @-mentions, the Inspector) can attach a memory to a
conversation without a tool call. Same scope rule as the tools: this project and global only.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

from memory.errors import MapleError
from server.state import AppState

# The SDK gives a static resource (no URI variables) no Context; a middleware hands the request's
# lifespan state to it through this variable instead (anyio copies it into worker threads).
_current: ContextVar[AppState | None] = ContextVar("maple_state", default=None)


async def _expose_state(ctx: Any, call_next: Any) -> Any:
    token = _current.set(getattr(ctx, "lifespan_context", None))
    try:
        return await call_next(ctx)
    finally:
        _current.reset(token)


def _json(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)


def register(server: MCPServer[AppState]) -> None:
    server.middleware.append(_expose_state)

    @server.resource(
        "memory://stats",
        name="stats",
        title="Memory statistics",
        mime_type="application/json",
        description="Counts by layer, scope and category, decisions, entities, sizes, last "
        "maintenance and model, for this project and global",
    )
    def stats_resource() -> str:
        state = _current.get()
        if state is None:
            raise RuntimeError("no server state for this request")
        try:
            return _json(state.memories.stats())
        except MapleError as e:  # e.g. the database could not be opened: say so, with the fix
            raise ResourceError(str(e)) from None

    @server.resource(
        "memory://{id}",
        name="memory",
        title="A memory",
        mime_type="application/json",
        description="One memory with every field, by id (e.g. memory://12)",
    )
    def memory_resource(id: str, ctx: Context[AppState]) -> str:
        state: AppState = ctx.request_context.lifespan_context
        # ResourceNotFoundError: the client gets JSON-RPC -32602 with this message (others are hidden).
        if not id.isdigit():
            raise ResourceNotFoundError(f"memory://{id} is not a memory; ids are whole numbers, e.g. memory://12")
        try:
            found = state.memories.get([int(id)])["memories"]
        except MapleError as e:
            raise ResourceError(str(e)) from None
        if not found:
            raise ResourceNotFoundError(
                f"no memory {id} in this project or the global scope; search to find the right id"
            )
        return _json({**found[0], "archived": found[0]["deleted_at"] is not None})
