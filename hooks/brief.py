"""SessionStart: a short brief of the project's memories (pinned, open decisions, the most
important), nothing on resume (Claude Code replays the session, its first brief included).
Always a command hook: MCP servers are rarely connected yet when a session starts. It also
starts the warm engine, so that it is ready by the first prompt."""

from __future__ import annotations

from hooks import common
from hooks.surface import ENGINE_SECONDS, Delivery

EVENT = "SessionStart"
BUSY_TIMEOUT_MS = 500


def run(event: common.Event) -> Delivery:
    from memory.errors import MapleError

    try:
        found = common.ask_engine(
            "briefing",
            session_id=event.session_id,
            source=event.source,
            project=event.project_dir,
            timeout=ENGINE_SECONDS,
        )
        return Delivery(event, found["block"], found["ids"], engine=True, kind="brief")
    except MapleError:
        pass
    common.packages()
    from memory.app import Memories

    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        found = Memories(store, event.scope).briefing(session_id=event.session_id, source=event.source)
    finally:
        store.close()
    common.start_engine()
    return Delivery(event, found["block"], found["ids"], kind="brief")
