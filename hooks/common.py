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


class HookSkipped(Exception):
    """An expected reason to do nothing (no database yet, nothing to read); still logged."""


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
        ValueError when a field has the wrong type."""
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


def run_dir(folder: Path) -> Path:
    """Where servers and keyword residents keep their sockets and locks: in the MAPLE home."""
    return folder / "run"


def read_line(conn: Any, limit: int) -> bytes:
    """One newline-ended message from a socket (or what came before it closed); ValueError past `limit`."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
        if len(data) > limit:
            raise ValueError(f"message larger than {limit} bytes")
    return data


def ask_resident(event: Event, seconds: float = 0.5) -> str | None:
    """The context block from a running MAPLE server for this database and project (see
    server/resident.py), or None when none answers within `seconds`. Stdlib only: it runs
    before anything heavy is imported, so an answer costs this process almost nothing."""
    import socket

    if not hasattr(socket, "AF_UNIX"):
        return None
    try:
        found = [(p.stat().st_mtime, p) for p in run_dir(home()).glob("*.sock")]
    except OSError:
        return None
    request = (
        json.dumps(
            {
                "op": "surface",
                "db": os.environ.get("MAPLE_DB") or None,
                "project": event.project_dir,
                "hook": event.raw,
            },
            ensure_ascii=False,
        ).encode()
        + b"\n"
    )
    deadline = time.monotonic() + seconds
    for _, path in sorted(found, reverse=True)[:4]:  # the newest servers first
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(left)
                conn.connect(str(path))
                conn.sendall(request)
                answer = json.loads(read_line(conn, MAX_INPUT_BYTES))
        except (OSError, ValueError):
            continue  # a server that died, is busy past the deadline, or answered nonsense
        if isinstance(answer, dict) and isinstance(answer.get("context"), str):
            return answer["context"]
    return None


def resident_lock(folder: Path, project: str) -> Path:
    """The lock a keyword resident for `project` holds while it lives (server/resident.py uses
    this one too)."""
    import hashlib

    return run_dir(folder) / f"resident-{hashlib.sha1(project.encode()).hexdigest()[:16]}.lock"


def start_resident(event: Event, minutes: float) -> None:
    """Start a keyword-only resident for this project (server/resident.py), detached, unless one
    is running or starting (its lock is held) or `minutes` is 0. Never raises."""
    try:
        import fcntl
        import subprocess
    except ImportError:  # no flock (Windows): no residents
        return
    try:
        if minutes <= 0:
            return
        project = event.project_dir
        lock = resident_lock(home(), project)
        lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # one is running or starting
        finally:
            os.close(fd)  # (releases the lock for the resident to take)
        subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("run.py")), "resident", project],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
        )
    except Exception as e:  # noqa: BLE001 - an optimisation for later prompts, never this one's problem
        log_line("UserPromptSubmit", f"resident not started: {type(e).__name__}: {e}")


def open_store(*, busy_timeout_ms: int, create: bool) -> Any:
    """The store for a hook: configured home, no embedder, no vector extension, a short wait for
    locks. With `create=False` a missing database is HookSkipped (nothing to recall yet)."""
    from memory import config as config_mod
    from memory.store import Store

    config = config_mod.load(busy_timeout_ms=busy_timeout_ms)
    if not create and not config.db_path.exists():
        raise HookSkipped(f"no database at {config.db_path} yet")
    return Store.open(config, None, vectors=False)
