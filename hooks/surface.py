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
# the imports before it, which cost the same every time. An engine that runs but does not answer
# within it (a long maintenance pass, a reindex, a model still loading) hands the prompt to this
# process's own keyword path, which gets a budget of its own (COLD_SECONDS). The whole hook waits
# at most RECALL_SECONDS + COLD_SECONDS + SHOWN_BUSY_MS = 0.7 s on a local file, plus the imports
# (the fixed cost of a hook process: 0.1-0.6 s depending on the machine's load), well inside the
# watchdog (hooks.main.WATCHDOG, 4 s) and Claude Code's 5 s.
RECALL_SECONDS = 0.3
COLD_SECONDS = 0.3  # this process's own recall (no engine, or one too slow to answer on a local file)
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
    jieba), within RECALL_SECONDS; else this process's own, from keywords and entities, within
    COLD_SECONDS (and it starts the engine for the next prompts when none runs). Recorded against
    the session only once delivered (`Delivery.done`)."""
    from memory import remote
    from memory.errors import MapleError, StoreUnavailable

    prompt = query_text(event.prompt)
    hook = {k: v for k, v in event.raw.items() if k != "prompt"}  # the gate reads where it came from
    asked = time.monotonic()
    engine_runs = False
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
            if common.config().database_url:
                # A team database: the engine is slow most often because the database is (a slow
                # network, a busy server), and this process would first import the driver (0.1 s
                # quiet, over 1 s on a loaded machine, outside any budget), then open a connection
                # of its own (TCP, TLS, authentication: several round trips to that same server)
                # before its first query: it would rarely answer within COLD_SECONDS, and would add
                # load where there is already too much. The prompt goes on without memories.
                # Measured (README, "The prompt hook gives recall 300 ms"): even a local PostgreSQL
                # over a Unix socket, the best case, takes the hook on its own 544 ms against
                # 313 ms on a local file (the driver's import 0.2 s of it); 2.6 s at load 10-12.
                common.log_line(EVENT, f"no memories for this prompt: the engine did not answer in time ({e})")
                return Delivery(event, "", [])
            # A local file: the keyword path reads it alongside the busy engine (WAL readers do
            # not wait for its writes). Our socket is closed by now: the engine's late answer
            # reaches no one, and its recall records nothing, so what this process delivers is
            # the one thing recorded as shown (Delivery.done, here, not through the engine).
            common.log_line(EVENT, f"the engine did not answer in time ({e}): recalling from keywords here")
            engine_runs = True
        # Else it failed at once (a bug, a broken pipe): recall here, within a budget of its own.
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
        store = common.open_store(busy_timeout_ms=int(COLD_SECONDS * 1000), create=False)
        opened.append(store)
        try:
            app = Memories(store, event.scope)
            return app.recall(prompt, session_id=event.session_id, hook=hook, segment=False, gated=True)
        finally:
            store.close()

    def stop() -> None:  # a query still running stops at its next step (a lock wait ends by itself)
        for store in opened:
            store.conn.interrupt()

    found = common.within(COLD_SECONDS, recall, on_late=stop)
    if not engine_runs:
        common.start_engine()  # for the next prompts
    if found is None:
        common.log_line(EVENT, f"no memories for this prompt: recall took over {COLD_SECONDS:g}s")
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
