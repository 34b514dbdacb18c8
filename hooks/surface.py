"""UserPromptSubmit: memories relevant to the prompt, as additional context (command-hook path).

The default path for every Claude Code version: the warm engine (memory.remote) answers over a
local socket in tens of milliseconds; without one this process answers from keywords and
entities and starts the engine. The server's `memory_surface` tool is the other path
(`type: "mcp_tool"`, install --surface mcp).
"""

from __future__ import annotations

from dataclasses import dataclass

from hooks import common

EVENT = "UserPromptSubmit"
BUSY_TIMEOUT_MS = 500  # recording what was shown waits this long for a writer, then gives up
ENGINE_SECONDS = 2.0  # the engine's answer; Claude Code's timeout for the hook is 5 s


def run(event: common.Event) -> Delivery:
    """What to add to this prompt: the warm engine's answer when one runs (with vectors and
    jieba), else this process's own, from keywords and entities (and it starts the engine for the
    next prompts). Recorded against the session only once delivered (`Delivery.done`)."""
    from memory.errors import MapleError

    try:
        found = common.ask_engine(
            "recall",
            event.prompt,
            session_id=event.session_id,
            hook=event.raw,
            project=event.project_dir,
            timeout=ENGINE_SECONDS,
        )
        return Delivery(event, found["block"], found["ids"], engine=True)
    except MapleError:
        pass
    common.packages()
    from memory.retrieval import context

    if context.skip_reason(event.prompt, event.raw) is not None:  # before touching the database at all
        return Delivery(event, "", [])
    from memory.app import Memories

    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        app = Memories(store, event.scope)
        found = app.recall(event.prompt, session_id=event.session_id, hook=event.raw, segment=False, gated=True)
    finally:
        store.close()
    common.start_engine()  # for the next prompts
    return Delivery(event, found["block"], found["ids"])


@dataclass
class Delivery:
    """A block for the prompt and the memories in it; `done()` records them as shown, after the
    hook wrote the block out (a block that never reached Claude Code is not counted as seen)."""

    event: common.Event
    block: str
    ids: list[int]
    engine: bool = False
    kind: str = "surface"

    def done(self) -> None:
        if not self.ids:
            return
        from memory.errors import MapleError

        if self.engine:
            try:
                common.ask_engine(
                    "shown",
                    self.event.session_id,
                    self.ids,
                    self.kind,
                    project=self.event.project_dir,
                    timeout=ENGINE_SECONDS,
                )
                return
            except MapleError:
                pass  # the engine went away meanwhile: record it here
        common.packages()
        from memory.app import Memories

        store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
        try:
            Memories(store, self.event.scope).shown(self.event.session_id, self.ids, self.kind)
        finally:
            store.close()
