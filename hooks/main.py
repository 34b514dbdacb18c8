"""Dispatch one hook event: `run.py EVENT` with the hook's JSON on stdin.

Events: session-start, user-prompt-submit, stop, pre-compact, session-end (Claude Code's names
work too), `engine` (the warm engine, server/engine.py, started detached by memory.remote) and
`drain` (the background harvest when there is no engine). Whatever happens, the process exits 0;
stdout carries at most one hook JSON document, and only for the events that add context.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from hooks import common

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "surface": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
EVENTS.update({v: v for v in list(EVENTS.values())})
WATCHDOG = {"SessionStart": 4.0, "UserPromptSubmit": 4.0}  # installed timeouts are 5 s


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    name = argv[0] if argv else ""
    if name == "engine":
        args = argv[1:]
        if "--detach" in args:
            # Fork before importing the engine (seconds on a busy machine): the caller, often a
            # prompt hook, waits for this process, not for the engine to load.
            if os.fork():
                return 0
            os.setsid()  # a session of its own: the engine belongs to no caller
            args = [a for a in args if a != "--detach"]
        try:
            from server import engine

            engine.main(args)
        except Exception as e:  # noqa: BLE001 - detached: the log is the only place it can go
            common.log_line("engine", f"{type(e).__name__}: {e}")
        return 0
    if name == "drain":
        try:
            from hooks import harvest

            harvest.drain_main(argv[1:])
        except Exception as e:  # noqa: BLE001 - detached: the log is the only place it can go
            common.log_line("drain", f"{type(e).__name__}: {e}")
        return 0
    event = EVENTS.get(name, "")
    try:
        data = common.read_input()
        event = event or EVENTS.get(str(data.get("hook_event_name")), "")
        if not event:
            raise ValueError(f"unknown hook event {name or data.get('hook_event_name')!r}")
        handler = _handler(event)
        handler(common.Event.parse(event, data))
    except common.HookSkipped as e:
        common.log_line(event or name or "hook", f"skipped: {e}")
    except Exception as e:  # noqa: BLE001 - fail open: never block or break the session
        common.log_line(event or name or "hook", f"{type(e).__name__}: {e}")
        if event == "SessionStart" and type(e).__name__ in ("StoreUnavailable", "EmbeddingMismatch"):
            # Once a session, to the user: without it a broken memory is silent in Claude Code.
            common.emit_warning(f"MAPLE memory is off for this session: {e} (`maple-memory doctor` says more)")
    return 0


def _handler(event: str) -> Callable[[common.Event], None]:
    if event in WATCHDOG:
        common.watchdog(WATCHDOG[event], event)
    if event in ("UserPromptSubmit", "SessionStart"):
        if event == "UserPromptSubmit":
            from hooks.surface import run
        else:
            from hooks.brief import run

        def deliver(ev: common.Event) -> None:
            found = run(ev)
            common.emit_context(event, found.block)
            found.done()  # recorded as shown only once it is written out

        return deliver
    from hooks import harvest

    return harvest.run
