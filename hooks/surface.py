"""UserPromptSubmit: memories relevant to the prompt, as additional context (command-hook path).

The default path for every Claude Code version: the warm engine (memory.remote) answers over a
local socket in tens of milliseconds; without one this process answers from keywords and
entities and starts the engine. The server's `memory_surface` tool is the other path
(`type: "mcp_tool"`, install --surface mcp).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from hooks import common

EVENT = "UserPromptSubmit"
BUSY_TIMEOUT_MS = 500  # the brief's store (hooks.brief) waits this long for a writer
ENGINE_SECONDS = 2.0  # the engine's brief at SessionStart; Claude Code's timeout for a hook is 5 s
# The prompt waits for this hook, so recall has a budget: past it the prompt goes on without
# memories (fail open). It covers waiting (the engine's answer, SQLite's locks, the query), not
# the imports before it, which cost the same every time.
RECALL_SECONDS = 0.3
SHOWN_SECONDS = 0.3  # recording what was shown, through the engine: past it, left to the engine
SHOWN_BUSY_MS = 100  # recording it here: a writer holding the lock longer means it is not recorded
# What recall reads of a prompt: its start and its end. A pasted 4 MB log adds time, not meaning.
PROMPT_HEAD, PROMPT_TAIL = 6_000, 2_000


def query_text(prompt: object) -> object:
    """The part of a long prompt recall looks at (a short one, or a non-string, as it is)."""
    if not isinstance(prompt, str) or len(prompt) <= PROMPT_HEAD + PROMPT_TAIL:
        return prompt
    return prompt[:PROMPT_HEAD] + "\n…\n" + prompt[-PROMPT_TAIL:]


def run(event: common.Event) -> Delivery:
    """What to add to this prompt: the warm engine's answer when one runs (with vectors and
    jieba), else this process's own, from keywords and entities (and it starts the engine for the
    next prompts), each within RECALL_SECONDS. Recorded against the session only once delivered
    (`Delivery.done`)."""
    from memory import remote
    from memory.errors import MapleError, StoreUnavailable

    prompt = query_text(event.prompt)
    hook = {k: v for k, v in event.raw.items() if k != "prompt"}  # the gate reads where it came from
    asked = time.monotonic()
    try:
        found = common.ask_engine(
            "recall",
            prompt,
            session_id=event.session_id,
            hook=hook,
            project=event.project_dir,
            timeout=RECALL_SECONDS,
        )
        return Delivery(event, found["block"], found["ids"], engine=True)
    except remote.EngineLost as e:
        if time.monotonic() - asked >= RECALL_SECONDS * 0.9:  # it runs but did not answer in time
            common.log_line(EVENT, f"no memories for this prompt: the engine did not answer in time ({e})")
            return Delivery(event, "", [])
        # It failed at once (a bug, a broken pipe): recall here, within a budget of its own.
    except StoreUnavailable as e:
        # The engine runs but cannot reach the team database: this process would not either (and
        # would pay for the driver's import first), so the prompt goes on without memories.
        common.log_line(EVENT, f"no memories for this prompt: {e}")
        return Delivery(event, "", [])
    except MapleError:
        pass  # no engine: recall here
    common.packages()
    from memory.retrieval import context

    if context.skip_reason(prompt, hook) is not None:  # before touching the database at all
        return Delivery(event, "", [])
    from memory.app import Memories

    common.load_driver()

    opened: list = []

    def recall() -> dict:
        store = common.open_store(busy_timeout_ms=int(RECALL_SECONDS * 1000), create=False)
        opened.append(store)
        try:
            app = Memories(store, event.scope)
            return app.recall(prompt, session_id=event.session_id, hook=hook, segment=False, gated=True)
        finally:
            store.close()

    def stop() -> None:  # a query still running stops at its next step (a lock wait ends by itself)
        for store in opened:
            store.conn.interrupt()

    found = common.within(RECALL_SECONDS, recall, on_late=stop)
    common.start_engine()  # for the next prompts
    if found is None:
        common.log_line(EVENT, f"no memories for this prompt: recall took over {RECALL_SECONDS:g}s")
        return Delivery(event, "", [])
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
        from memory import remote
        from memory.errors import MapleError

        # The prompt these memories answered, recorded with them (the store redacts it and keeps a
        # short excerpt): the web page shows it while the session runs. Its head is enough.
        prompt = (
            self.event.prompt[:PROMPT_HEAD] if self.kind == "surface" and isinstance(self.event.prompt, str) else None
        )
        if self.engine:
            try:
                common.ask_engine(
                    "shown",
                    self.event.session_id,
                    self.ids,
                    self.kind,
                    prompt,
                    project=self.event.project_dir,
                    timeout=SHOWN_SECONDS,
                )
                return
            except remote.EngineUnavailable:
                pass  # the engine went away meanwhile: record it here
            except MapleError as e:  # it answered late, or another process holds the lock: not now
                common.log_line(self.event.name, f"not recorded as shown: {e}")
                return
        common.packages()
        from memory.app import Memories

        def record() -> bool:
            store = common.open_store(busy_timeout_ms=SHOWN_BUSY_MS, create=False)
            try:
                Memories(store, self.event.scope).shown(self.event.session_id, self.ids, self.kind, prompt)
            finally:
                store.close()
            return True

        if not common.config().database_url:  # a local file: the lock wait (SHOWN_BUSY_MS) bounds it
            record()
        elif common.within(SHOWN_SECONDS, record) is None:  # a network that hangs does not
            common.log_line(self.event.name, f"not recorded as shown: it took over {SHOWN_SECONDS:g}s")
