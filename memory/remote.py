"""The warm engine, seen from the processes that use it: one request over a local socket.

One engine per MAPLE database (and installation) holds what is slow to build, the embedding model
and the in-memory indexes, and serves the application API (memory.app.Memories) to every other
MAPLE process: each Claude Code session's MCP server, the CLI, the hooks. It is started on demand
(`start`), lives in the background and exits after `hook_resident_minutes` without a request (0:
no engine; every process works on its own, as tests do).

Stdlib only: a hook imports this on every prompt, before anything else of MAPLE.

The socket is `<home>/run/engine-<id>.sock` (the run folder is 0700, the socket 0600: only this
user reaches it), <id> naming the database and the installation, so two checkouts or two
databases never share an engine. One request per connection, one JSON line each way:

  -> {"method": "search", "project": "/path/of/the/caller", "args": [...], "kwargs": {...}}
  <- {"ok": <the method's result>}  or  {"error": {"type": "InvalidInput", "message": "..."}}
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from memory import errors

SPOOL_NAME = "harvest-spool.jsonl"  # <home>/: transcripts the hooks hand over for harvesting, one JSON line each
MAX_MESSAGE = 64 << 20  # bytes of one answer (a graph or a long list); requests are far smaller
SOCKET_PATH_MAX = 100  # AF_UNIX paths longer than ~104-108 bytes cannot be bound
ROOT = Path(__file__).resolve().parent.parent  # the installation: its memory, server and hooks packages


class EngineUnavailable(errors.MapleError):
    """No engine took the request (none running, or not accepting): safe to do it elsewhere."""


class EngineLost(errors.StoreUnavailable):
    """The engine took the request but no answer came back (it stopped, or took too long): the
    request may or may not have been done, so it is not silently done again elsewhere."""


def engine_id(db_path: Path | str) -> str:
    """Names the engine of one database of one installation. `db_path` is config.db_path: the
    SQLite file, or for a team database its URL (which Path has folded to `postgresql:/…`)."""
    database = team_database(db_path)
    if database is None:
        database = str(Path(db_path).expanduser().resolve())
    key = f"{database}\0{ROOT}"
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def team_database(db_path: Path | str) -> str | None:
    """For a PostgreSQL URL, what names its engine: the server, the database and the role it logs
    in as (each teammate's role sees other rows, so two roles on one machine never share an
    engine), never the password; None for a SQLite file. Never resolved as a path: a URL is the
    same whatever folder the caller runs in."""
    text = str(db_path)
    match = re.match(r"^(postgres(?:ql)?):/+(.*)$", text, re.S)
    if not match:
        return None
    parts = urlsplit(f"postgresql://{match.group(2)}")
    try:
        host, port = parts.hostname or "", parts.port or ""
    except ValueError:
        host, port = parts.netloc.rpartition("@")[2], ""
    query = dict(parse_qsl(parts.query))
    role = (
        unquote(parts.username or "")
        or query.get("user")
        or os.environ.get("PGUSER")
        or os.environ.get("USER")
        or os.environ.get("LOGNAME")
        or ""
    )
    query.pop("password", None)
    return f"postgresql://{role}@{host}:{port}{parts.path}?{sorted(query.items())}"


def socket_path(home: Path, db_path: Path) -> Path:
    """Where this database's engine listens: under the MAPLE home, or, when that path is too long
    to bind (a home deep in the file system), in a folder of this user's own in the system's
    temporary folder (`own_folder` checks it is theirs alone), named by the home and the database."""
    path = Path(home) / "run" / f"engine-{engine_id(db_path)}.sock"
    uid = getattr(os, "getuid", None)
    if len(str(path)) <= SOCKET_PATH_MAX or uid is None:
        return path
    key = hashlib.sha1(f"{Path(home).expanduser().resolve()}\0{engine_id(db_path)}".encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"maple-{uid()}" / f"engine-{key}.sock"


def own_folder(folder: Path) -> bool:
    """Whether `folder` is missing (the engine makes it, 0700) or a real folder owned by this user
    that no one else may enter: a socket in a folder someone else made could be theirs."""
    try:
        st = folder.lstat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def possible(home: Path, db_path: Path) -> bool:
    """Whether an engine can serve this database here: the platform has Unix sockets and the
    socket's path (`socket_path`) is short enough to bind, in a folder that is this user's. Where it
    cannot, every process does its own work, loading the model where it needs vectors
    (`memory.app.client.engine_enabled`)."""
    if not hasattr(socket, "AF_UNIX"):
        return False
    path = socket_path(home, db_path)
    return len(str(path)) <= SOCKET_PATH_MAX and (path.parent.parent == Path(home) or own_folder(path.parent))


def lock_path(home: Path, db_path: Path) -> Path:
    """Held by the running engine (and by a process starting one): one engine per database."""
    return Path(home) / "run" / f"engine-{engine_id(db_path)}.lock"


def read_line(conn: socket.socket, limit: int = MAX_MESSAGE) -> bytes:
    """One newline-ended message (or what came before the peer closed); ValueError past `limit`."""
    chunks, size = [], 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
        if size > limit:
            raise ValueError(f"message larger than {limit} bytes")
    return b"".join(chunks)


def call(
    home: Path,
    db_path: Path,
    method: str,
    args: list[Any] | tuple[Any, ...] = (),
    kwargs: dict[str, Any] | None = None,
    *,
    project: str,
    timeout: float = 60.0,
) -> Any:
    """The engine's answer to one call; the error it raised, re-raised here as the same MapleError;
    EngineUnavailable when no engine answers within `timeout` seconds."""
    path = socket_path(home, db_path)
    if not possible(home, db_path):
        raise EngineUnavailable("no engine socket here (no Unix sockets, or the MAPLE home's path is too long)")
    request = (
        json.dumps(
            {"method": method, "project": project, "args": list(args), "kwargs": kwargs or {}}, ensure_ascii=False
        ).encode()
        + b"\n"
    )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.settimeout(min(timeout, 1.0))  # connecting: an engine that is up accepts at once
            conn.connect(str(path))
        except OSError as e:
            raise EngineUnavailable(f"no engine at {path}: {e.strerror or e}") from None
        try:
            conn.settimeout(timeout)
            conn.sendall(request)
            answer = json.loads(read_line(conn))
        except (OSError, ValueError) as e:
            raise EngineLost(
                f"MAPLE's engine did not answer {method} ({e}); check whether it was done, then retry"
            ) from None
    if not isinstance(answer, dict):
        raise EngineLost(f"MAPLE's engine answered {method} with nonsense; retry")
    if "ok" in answer:
        return answer["ok"]
    err = answer.get("error") or {}
    kind = getattr(errors, str(err.get("type")), None)
    if isinstance(kind, type) and issubclass(kind, errors.MapleError):
        raise kind(str(err.get("message", "")))
    raise EngineLost(str(err.get("message") or f"MAPLE's engine could not do {method}"))


def running(home: Path, db_path: Path) -> bool:
    """Whether an engine holds this database's lock (it may still be starting)."""
    try:
        import fcntl
    except ImportError:
        return False
    path = lock_path(home, db_path)
    if not path.exists():
        return False
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def start(home: Path, db_path: Path, env: dict[str, str] | None = None) -> bool:
    """Start the engine for this database, detached, unless one is running or starting. Returns
    whether one was started. Never raises: an engine is an optimisation, never a requirement."""
    try:
        if not possible(home, db_path):
            return False
        folder = Path(home) / "run"
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if running(home, db_path):
            return False
        # `run.py engine --detach` forks the engine off and exits at once: waiting for it leaves
        # no zombie in a long-lived caller, and the engine belongs to no caller's session. It
        # reads its configuration from the environment: the home is this one, also when the
        # caller was given it another way (`maple-memory --home DIR`).
        env = {**(os.environ if env is None else env), "MAPLE_HOME": str(home)}
        subprocess.run(
            [sys.executable, str(ROOT / "hooks" / "run.py"), "engine", "--detach"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            env=env,
            timeout=10,
        )
        return True
    except Exception:  # noqa: BLE001 - see the docstring
        return False


def wait_until_up(home: Path, db_path: Path, seconds: float) -> bool:
    """Poll until the engine answers a ping, for at most `seconds`."""
    stop = time.monotonic() + seconds
    while True:
        try:
            call(home, db_path, "ping", project="", timeout=max(0.05, stop - time.monotonic()))
            return True
        except errors.MapleError:
            if time.monotonic() >= stop:
                return False
            time.sleep(0.05)


def stop(home: Path, db_path: Path, seconds: float = 10.0) -> int | None:
    """Ask this database's engine to exit and wait until it has (its lock is free): the pid it had,
    or None when none was running. For what must not run beside one (restoring a backup,
    re-embedding, uninstalling). Never raises."""
    try:
        pid = call(home, db_path, "stop", project="", timeout=2.0).get("pid")
    except errors.MapleError:
        return None
    stop = time.monotonic() + seconds
    while running(home, db_path) and time.monotonic() < stop:
        time.sleep(0.05)
    return pid


class RemoteMemories:
    """The application API served by the engine: the same methods as memory.app.Memories, the same
    arguments (JSON-like), answering plain data."""

    def __init__(self, home: Path, db_path: Path, project: str, *, timeout: float = 120.0):
        self.home, self.db_path, self.project, self.timeout = Path(home), Path(db_path), project, timeout

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)

        def remote(*args: Any, **kwargs: Any) -> Any:
            return call(self.home, self.db_path, method, args, kwargs, project=self.project, timeout=self.timeout)

        return remote
