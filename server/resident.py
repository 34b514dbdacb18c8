"""The running server answers the command hook over a local socket.

Claude Code versions without MCP-tool hooks run `hooks/run.py user-prompt-submit`, a fresh Python
process that cannot afford the model or the in-memory indexes. When a MAPLE server is already
running for the same database and project, the hook hands it the prompt over a Unix socket in
the MAPLE home (`run/<pid>.<n>.sock`, the home is 0700 and the socket 0600: only this user reaches
it) and prints what comes back: the same block the `memory_surface` tool gives, from the warm
process. No server, another project's, or no answer in time: the hook surfaces on its own, and starts a
keyword-only resident for the project (`serve`, `run.py resident DIR`): the same listener on a
store without the model, which answers the next prompts and exits after `hook_resident_minutes`
without a request (or when its database is gone). One per project: it holds an flock on
`run/resident-<hash>.lock`, and a second one started meanwhile exits at once.

One request per connection, one JSON line each way:
  -> {"op": "surface", "db": <the hook's $MAPLE_DB or null>, "project": <project directory>,
      "hook": <hook input>}
  <- {"context": <block, maybe "">}  or  {"error": <why this server will not answer>}
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from hooks.common import read_line, resident_lock, run_dir
from memory import config as config_mod
from memory.scope import project_scope
from memory.store import indexes
from server.state import AppState

log = logging.getLogger("maple.server")

MAX_REQUEST = 1 << 20  # bytes: a hook input is at most a prompt and a few paths
SOCKET_PATH_MAX = 100  # AF_UNIX paths longer than ~104-108 bytes cannot be bound
_numbers = itertools.count(1)  # tests run several servers in one process


class Listener:
    """Serves surface requests for `state` on a Unix socket until `stop()`."""

    def __init__(self, state: AppState, home: Path):
        self.state = state
        self.path = run_dir(home) / f"{os.getpid()}.{next(_numbers)}.sock"
        self.sock: socket.socket | None = None
        self.home = home
        self.last_request = time.monotonic()
        self._scopes: dict[str, str] = {}  # project directory -> scope (a git call each, so kept)
        self._databases: dict[str | None, Path] = {}

    def start(self) -> bool:
        """Listen, if this platform and path allow it; False (logged) if not."""
        if not hasattr(socket, "AF_UNIX") or self.state.db is None:
            return False
        if len(str(self.path)) > SOCKET_PATH_MAX:
            log.info("hook socket not started: %s is too long a socket path", self.path)
            return False
        try:
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            _remove_stale(self.path.parent)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(str(self.path))
            os.chmod(self.path, 0o600)
            sock.listen(16)
        except OSError as e:
            log.warning("hook socket not started at %s: %s", self.path, e)
            return False
        self.sock = sock
        threading.Thread(target=self._accept, name="maple-hook-socket", daemon=True).start()
        return True

    def stop(self) -> None:
        sock, self.sock = self.sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
            self.path.unlink(missing_ok=True)

    def _accept(self) -> None:
        while self.sock is not None:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # stopped
            threading.Thread(target=self._serve, args=(conn,), name="maple-hook-request", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        self.last_request = time.monotonic()
        with conn:
            try:
                conn.settimeout(2.0)
                reply = self.answer(json.loads(read_line(conn, MAX_REQUEST)))
            except Exception as e:  # noqa: BLE001 - the hook falls back to surfacing on its own
                log.warning("hook socket request failed: %s: %s", type(e).__name__, e)
                reply = {"error": f"{type(e).__name__}: {e}"}
            try:
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
            except OSError:
                pass  # the hook gave up waiting

    def _database(self, db_env: Any) -> Path | None:
        """The database a hook in this home opens, given its $MAPLE_DB (None: unset)."""
        if db_env is not None and not isinstance(db_env, str):
            return None
        if db_env not in self._databases:
            env = {"MAPLE_DB": db_env} if db_env else {}
            self._databases[db_env] = config_mod.load(home=self.home, env=env).db_path.resolve()
        return self._databases[db_env]

    def answer(self, request: Any) -> dict[str, Any]:
        state = self.state
        if not isinstance(request, dict) or request.get("op") != "surface":
            return {"error": "unknown request"}
        hook = request.get("hook")
        if not isinstance(hook, dict):
            return {"error": "no hook input"}
        store = state.store
        if self._database(request.get("db")) != store.path.resolve():
            return {"error": "this server uses another database"}
        where = request.get("project")
        if not isinstance(where, str):
            return {"error": "no project directory"}
        if where not in self._scopes:
            self._scopes[where] = project_scope(where)
        if self._scopes[where] != state.project:
            return {"error": "this server serves another project"}
        session = hook.get("session_id")
        session = session if isinstance(session, str) and 0 < len(session) <= 200 else None
        state.activity.begin()  # the sleep-time worker gives way, as for a tool call
        try:
            block = state.memories.surface(hook.get("prompt"), session_id=session, hook=hook)
        finally:
            state.activity.end()
        return {"context": block}


def serve(argv: list[str]) -> None:
    """`run.py resident PROJECT_DIR`: a keyword-only resident that answers this project's prompt
    hooks from a warm index, until `hook_resident_minutes` pass without a request."""
    import fcntl
    import signal

    from memory.store import Store
    from server.state import ModelGate

    if len(argv) != 1:
        raise ValueError("usage: run.py resident PROJECT_DIR")
    project_dir = argv[0]
    config = config_mod.load()
    idle = config.hook_resident_minutes * 60
    if idle <= 0 or not config.db_path.exists():
        return
    run_dir(config.home).mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(resident_lock(config.home, project_dir), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another resident serves this project
        signal.signal(signal.SIGTERM, _exit_quietly)
        store = Store.open(config, None, vectors=False)
        try:
            state = AppState(db=store, project=project_scope(project_dir), model=ModelGate(None))
            indexes.warm(store, vectors=False)
            listener = Listener(state, config.home)
            if not listener.start():
                return
            try:
                while time.monotonic() - listener.last_request < idle and store.path.exists():
                    time.sleep(min(5.0, idle))
            finally:
                listener.stop()
        finally:
            store.close()
    finally:
        os.close(fd)


def _exit_quietly(*_: Any) -> None:
    raise SystemExit(0)  # unwinds through serve's cleanup: the socket goes, the lock is released


def _remove_stale(folder: Path) -> None:
    """Sockets left by servers that died without cleaning up (named <pid>.<n>.sock)."""
    for path in folder.glob("*.sock"):
        try:
            pid = int(path.name.split(".")[0])
            os.kill(pid, 0)
            continue  # alive (this process included)
        except ValueError:
            continue  # not ours
        except PermissionError:
            continue  # alive, someone else's
        except ProcessLookupError:
            pass
        path.unlink(missing_ok=True)
