"""SessionStart: a short brief of the project's memories (pinned, open decisions, the most
important), nothing on resume (Claude Code replays the session, its first brief included).
Always a command hook: MCP servers are rarely connected yet when a session starts. It also
starts the warm engine, so that it is ready by the first prompt."""

from __future__ import annotations

from hooks import common
from hooks.surface import ENGINE_SECONDS, Delivery

EVENT = "SessionStart"
BUSY_TIMEOUT_MS = 500
BRIEF_SECONDS = 2.0  # the brief made here (no engine): past it the session starts without one


def run(event: common.Event) -> Delivery:
    from hooks import harvest
    from memory import remote
    from memory.errors import MapleError, StoreUnavailable

    harvest.resume_spooled()  # requests a drain left spooled while the team database was away
    try:
        found = common.ask_engine(
            "briefing",
            session_id=event.session_id,
            source=event.source,
            project=event.project_dir,
            timeout=ENGINE_SECONDS,
        )
        return Delivery(event, found["block"], found["ids"], engine=True, kind="brief")
    except StoreUnavailable as e:
        if not isinstance(e, remote.EngineLost):
            # The engine cannot reach the team database: neither would this process; start without.
            common.log_line(EVENT, f"no brief for this session: {e}")
            return Delivery(event, "", [], kind="brief")
    except MapleError:
        pass
    common.packages()
    from memory.app import Memories

    common.load_driver()

    def brief() -> dict:
        store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
        try:
            return Memories(store, event.scope).briefing(session_id=event.session_id, source=event.source)
        finally:
            store.close()

    # A local file's wait is bounded by its lock timeout (BUSY_TIMEOUT_MS); a network that hangs is not.
    found = common.within(BRIEF_SECONDS, brief) if common.config().database_url else brief()
    common.start_engine()
    if found is None:
        common.log_line(EVENT, f"no brief for this session: it took over {BRIEF_SECONDS:g}s")
        return Delivery(event, "", [], kind="brief")
    return Delivery(event, found["block"], found["ids"], kind="brief")
