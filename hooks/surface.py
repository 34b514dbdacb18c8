"""UserPromptSubmit: memories relevant to the prompt, as additional context (command-hook path).

The server's `memory_surface` tool does the same from the warm process (`type: "mcp_tool"`);
this is the path for Claude Code versions and clients without MCP-tool hooks. It asks a running
server first (over its local socket, server/resident.py), and surfaces on its own if none answers.
"""

from __future__ import annotations

from typing import Any

from hooks import common

EVENT = "UserPromptSubmit"
BUSY_TIMEOUT_MS = 500  # recording what was shown waits this long for a writer, then gives up


def run(data: dict[str, Any]) -> str:
    """The context block for this prompt ("" for none); records it against the session.

    A MAPLE server already running for this project answers from its warm process (and records
    it); without one, this process surfaces on its own, with keywords and entities, and starts a
    keyword-only resident to answer the next prompts (server/resident.py)."""
    answered = common.ask_resident(data)
    if answered is not None:
        return answered
    from memory.retrieval import context
    from memory.store import GLOBAL

    prompt = data.get("prompt")
    if context.skip_reason(prompt, data) is not None:  # before touching the database at all
        return ""
    store = common.open_store(busy_timeout_ms=BUSY_TIMEOUT_MS, create=False)
    try:
        scopes = list(dict.fromkeys([common.hook_scope(data), GLOBAL]))
        block = context.surface(store, prompt, scopes, session_id=common.session_of(data), hook_input=data,
                                segment=False)  # jieba's dictionary costs ~0.5 s: bigrams here
    finally:
        store.close()
    common.start_resident(data, store.config.hook_resident_minutes)  # for the next prompts
    return block
