"""SessionStart: a compact brief of the project's memories (pinned, important, open decisions,
recent). Always a command hook: MCP servers are rarely connected yet when a session starts."""

from __future__ import annotations

from typing import Any

from hooks import common

EVENT = "SessionStart"
BUSY_TIMEOUT_MS = 500


def run(data: dict[str, Any]) -> str:
    from memory.retrieval import context
    from memory.store import GLOBAL

    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        scopes = list(dict.fromkeys([common.hook_scope(data), GLOBAL]))
        source = data.get("source") if isinstance(data.get("source"), str) else None
        return context.brief(store, scopes, session_id=common.session_of(data), source=source)
    finally:
        store.close()
