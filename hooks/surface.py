"""UserPromptSubmit: memories relevant to the prompt, as additional context (command-hook path).

The server's `memory_surface` tool does the same from the warm process (`type: "mcp_tool"`);
this is the path for Claude Code versions and clients without MCP-tool hooks. It asks a running
server first (over its local socket, server/resident.py), and surfaces on its own if none answers.
"""

from __future__ import annotations

from hooks import common

EVENT = "UserPromptSubmit"
BUSY_TIMEOUT_MS = 500  # recording what was shown waits this long for a writer, then gives up


def run(event: common.Event) -> str:
    """The context block for this prompt ("" for none); records it against the session.

    A MAPLE server already running for this project answers from its warm process (and records
    it); without one, this process surfaces on its own, with keywords and entities, and starts a
    keyword-only resident to answer the next prompts (server/resident.py)."""
    answered = common.ask_resident(event)
    if answered is not None:
        return answered
    from memory.retrieval import context

    if context.skip_reason(event.prompt, event.raw) is not None:  # before touching the database at all
        return ""
    from memory.app import Memories

    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        block = Memories(store, event.scope).surface(
            event.prompt, session_id=event.session_id, hook=event.raw, segment=False, gated=True
        )  # jieba costs ~0.5 s: bigrams
    finally:
        store.close()
    common.start_resident(event, store.config.hook_resident_minutes)  # for the next prompts
    return block
