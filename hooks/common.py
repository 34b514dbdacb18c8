"""What every MAPLE hook process shares: reading the hook's JSON, failing open, logging, the store.

A hook is a fresh process on Claude Code's hot path. It imports only the stdlib, sqlean and
`memory` modules that are stdlib-only (never torch, sentence-transformers, numpy, mcp, pydantic
or jieba), opens the store without vectors, and fails open: any error means exit 0, nothing on
stdout, and one line in `<home>/hooks.log` saying what went wrong.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_INPUT_BYTES = 4_000_000  # a prompt can hold a pasted file; more than this is not a hook input
LOG_NAME = "hooks.log"
MAX_LOG_BYTES = 512_000


# Set by memory.llm for the headless `claude -p` that its claude-cli provider runs (the same name
# as memory.llm.CHILD_ENV, kept here so a hook does not import the LLM module): a hook that fires
# inside that run does nothing, so MAPLE never harvests, briefs or spools its own extraction call.
LLM_CHILD_ENV = "MAPLE_LLM_CHILD"


class HookSkipped(Exception):
    """An expected reason to do nothing (no database yet, nothing to read); still logged."""


def inside_llm_child() -> bool:
    """Whether this hook runs inside MAPLE's own headless extraction call (see LLM_CHILD_ENV)."""
    return bool(os.environ.get(LLM_CHILD_ENV))


def home() -> Path:
    return Path(os.environ.get("MAPLE_HOME") or "~/.maple").expanduser()


def log_line(event: str, message: str) -> None:
    """Append one line to <home>/hooks.log (created 0600), never raising."""
    try:
        folder = home()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / LOG_NAME
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} {event} {' '.join(str(message).split())[:1000]}\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_LOG_BYTES:  # keep the newer half: a log that grows forever is its own failure
            data = path.read_bytes()[-MAX_LOG_BYTES // 2 :]
            path.write_bytes(data[data.find(b"\n") + 1 :])
    except Exception:  # noqa: BLE001 - logging must never be the reason a hook fails
        pass


def read_input(stream: Any = None) -> dict[str, Any]:
    """The hook's JSON object from stdin; ValueError when it is not one."""
    stream = stream if stream is not None else sys.stdin.buffer
    raw = stream.read(MAX_INPUT_BYTES + 1)
    if len(raw) > MAX_INPUT_BYTES:
        raise ValueError(f"hook input is larger than {MAX_INPUT_BYTES} bytes")
    data = json.loads(raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw)
    if not isinstance(data, dict):
        raise ValueError(f"hook input is JSON {type(data).__name__}, not an object")
    return data


@dataclass(frozen=True)
class Event:
    """One hook invocation, parsed once from Claude Code's JSON: what every handler reads."""

    name: str  # Claude Code's event name: SessionStart, UserPromptSubmit, Stop, PreCompact, SessionEnd
    raw: dict[str, Any]  # the hook input as given (the prompt gate reads its origin fields)
    session_id: str | None
    project_dir: str  # $CLAUDE_PROJECT_DIR (what the MCP server uses), else the hook's cwd, else ours
    prompt: Any = None  # UserPromptSubmit; not checked here: the prompt gate says what it accepts
    source: str | None = None  # SessionStart: startup, resume, clear, compact
    transcript_path: str | None = None

    @classmethod
    def parse(cls, name: str, data: dict[str, Any]) -> Event:
        """The event named `name` (or the input's hook_event_name) from the hook input `data`;
        ValueError when a field has the wrong type; HookSkipped inside MAPLE's own extraction call."""
        if inside_llm_child():
            raise HookSkipped(
                f"{name or data.get('hook_event_name')} inside MAPLE's own LLM extraction run ({LLM_CHILD_ENV})"
            )
        where = os.environ.get("CLAUDE_PROJECT_DIR") or data.get("cwd")
        if where is not None and not isinstance(where, str):
            raise ValueError("hook input field 'cwd' is not a string")
        sid, source, path = data.get("session_id"), data.get("source"), data.get("transcript_path")
        return cls(
            name=name or str(data.get("hook_event_name") or ""),
            raw=data,
            session_id=sid if isinstance(sid, str) and 0 < len(sid) <= 200 else None,
            project_dir=where or os.getcwd(),
            prompt=data.get("prompt"),
            source=source if isinstance(source, str) else None,
            transcript_path=path if isinstance(path, str) and path.strip() else None,
        )

    @property
    def scope(self) -> str:
        """The project the session belongs to: its directory mapped to its git repository's top."""
        from memory.scope import project_scope

        return project_scope(self.project_dir)


def emit_context(event: str, context: str) -> None:
    """The one JSON document Claude Code reads from a hook that adds context."""
    if not context:
        return
    doc = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def emit_warning(message: str) -> None:
    """A line Claude Code shows the user (not the model): the hook JSON's systemMessage."""
    sys.stdout.write(json.dumps({"systemMessage": message}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def watchdog(seconds: float, event: str, on_fire: Callable[[], None] | None = None) -> threading.Timer:
    """Exit 0 silently if the hook is still running after `seconds` (a lock or a slow disk must
    not eat Claude Code's timeout, whose expiry shows the user an error). `on_fire` runs first
    (a harvest hands its transcript to a background process there)."""

    def fire() -> None:
        log_line(event, f"gave up after {seconds:g}s (watchdog); nothing was output")
        if on_fire is not None:
            try:
                on_fire()
            except Exception as e:  # noqa: BLE001 - exiting is what matters now
                log_line(event, f"watchdog hand-off failed: {type(e).__name__}: {e}")
        os._exit(0)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


_late: list[threading.Thread] = []  # work `within` gave up waiting for, still running


def exit_if_late() -> None:
    """End the process now (exit 0, output flushed) when work past its budget still runs: the
    interpreter's shutdown would wait for it (a thread in SQLite's lock wait holds on to the
    GIL). Called by hooks/run.py, which is a process of its own, never by in-process callers."""
    if any(t.is_alive() for t in _late):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def within(seconds: float, work: Callable[[], Any], on_late: Callable[[], None] | None = None) -> Any:
    """`work()`'s result, or its exception, if it is done within `seconds`; else None, after
    calling `on_late` (to make it stop). The work runs on a daemon thread, which a late one is
    left to finish (or to be ended with the process): a hook returns what it has in time."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread as it is
            box["error"] = e

    thread = threading.Thread(target=run, name="maple-hook-work", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        _late.append(thread)
        if on_late is not None:
            try:
                on_late()
            except Exception:  # noqa: BLE001 - stopping it early is a courtesy, not a need
                pass
        return None
    if "error" in box:
        raise box["error"]
    return box["value"]


_config: Any = None


def config() -> Any:
    """This process's configuration (memory.config, stdlib only), loaded once."""
    global _config
    if _config is None:
        from memory import config as config_mod

        _config = config_mod.load()
    return _config


def ask_engine(method: str, *args: Any, project: str = "", timeout: float, **kwargs: Any) -> Any:
    """A call to the warm engine (memory.remote) for this home and database; MapleError (among
    them EngineUnavailable) when it does not answer. Stdlib only: nothing heavy is imported
    before the engine has had its chance to answer."""
    from memory import remote

    c = config()
    if c.hook_resident_minutes <= 0:
        raise remote.EngineUnavailable("no engine: hook_resident_minutes is 0")
    return remote.call(c.home, c.db_path, method, args, kwargs, project=project, timeout=timeout)


def start_engine() -> bool:
    """Start the warm engine for this database unless it runs, is starting, or is switched off.
    Never raises."""
    try:
        from memory import remote

        c = config()
        # A team database needs no file here: its engine serves the URL (server/engine.py).
        return (
            c.hook_resident_minutes > 0
            and (bool(c.database_url) or c.db_path.exists())
            and remote.start(c.home, c.db_path)
        )
    except Exception as e:  # noqa: BLE001 - an optimisation for later prompts, never this one's problem
        log_line("engine", f"not started: {type(e).__name__}: {e}")
        return False


def engine_takes(method: str) -> bool:
    """Hand work (a method without arguments, e.g. "drain") to the engine: poke the one that runs,
    else start one (it takes the work up when it starts). False when no engine can do it."""
    from memory.errors import MapleError

    try:
        ask_engine(method, timeout=0.5)
        return True
    except MapleError:
        return start_engine()


def packages() -> None:
    """Make the installed packages (sqlean, sqlite-vec, jieba) importable. Installed hook commands
    run Python with -S: without the site machinery (and an editable install's finder) a hook
    starts about 30 ms sooner, and the engine path needs nothing but the stdlib. Working on its
    own, a hook calls this first."""
    if sys.flags.no_site:
        import site

        site.main()


def load_driver() -> None:
    """Import the team database's driver (psycopg) before a budget starts, when one is configured:
    like the other imports it costs the same every time (0.1 s on a quiet machine, over 1 s on a
    loaded one), so it is not waiting and must not eat recall's budget. Never raises: without the
    driver, opening the store says what to install."""
    try:
        if config().database_url:
            packages()
            import psycopg  # noqa: F401
    except Exception:  # noqa: BLE001 - open_store reports it, in the hook's log
        pass


def open_store(*, busy_timeout_ms: int, create: bool) -> Any:
    """The store for a hook: configured home, no embedder, no vector extension, a short wait for
    locks. With `create=False` a missing database file is HookSkipped (nothing to recall yet).
    A team database that cannot be reached is StoreUnavailable: callers bound the wait with
    `within` (a host that drops packets holds a connect for seconds)."""
    packages()
    from memory import config as config_mod
    from memory.store import Store

    config = config_mod.load(busy_timeout_ms=busy_timeout_ms)
    if not create and not config.database_url and not config.db_path.exists():
        raise HookSkipped(f"no database at {config.db_path} yet")
    return Store.open(config, None, vectors=False)
