"""SessionStart: a compact brief of the project's memories (pinned, important, open decisions,
recent). Always a command hook: MCP servers are rarely connected yet when a session starts."""

from __future__ import annotations

from hooks import common

EVENT = "SessionStart"
BUSY_TIMEOUT_MS = 500


def run(event: common.Event) -> str:
    from memory.app import Memories

    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        return Memories(store, event.scope).brief(session_id=event.session_id, source=event.source)
    finally:
        store.close()
