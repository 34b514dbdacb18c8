"""The one way MAPLE opens SQLite: driver, extensions, pragmas, transactions and migrations.

The driver is `sqlean` (sqlean.py), a DB-API drop-in that bundles SQLite 3.50 and can load
extensions everywhere, so every process (server, hooks, CLI) sees the same SQLite and features,
even on Pythons whose stdlib sqlite3 cannot load extensions. sqlite-vec is loaded by file path:
`import sqlite_vec` pulls in numpy.typing, about 55 ms we cannot afford in a hook.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlean as sqlite

import memory.store.columns as columns
from memory.config import is_url, safe_url
from memory.errors import StoreUnavailable

# How far a store has gone: its largest memory id, version id and purge id, the model (and
# revision) its vectors come from, and a count of the vectors given to rows that had none
# (Store.embed_missing). The warm indexes catch up to them, and a warm vector copy stops at a
# model switch: memory.store.indexes, textindex, vecindex.
MARKS_SQL = (
    "SELECT (SELECT coalesce(max(id), 0) FROM memories), "
    "(SELECT coalesce(max(id), 0) FROM memory_versions), "
    "(SELECT coalesce(max(id), 0) FROM purges), "
    "(SELECT value FROM meta WHERE key = 'embedding_model'), "
    "coalesce((SELECT value FROM meta WHERE key = 'embedding_revision'), ''), "
    "coalesce((SELECT value FROM meta WHERE key = 'vectors_filled'), '')"
)
IN_LIST_LENGTHS = (8, 32, 128, 256, 500)


def in_list(ids: Sequence[Any]) -> tuple[str, list[Any]]:
    """The `?` marks and values for `IN (...)` over `ids` (at most 500), padded by repeating the
    last to one of a few lengths: a team database plans each statement text anew until psycopg
    has prepared it, and lists of every length are that many texts (planning a 150-id list took
    1.3 ms of a search). Repeats change nothing an IN matches."""
    values = list(ids)
    size = next((n for n in IN_LIST_LENGTHS if n >= len(values)), len(values))
    if values:
        values += [values[-1]] * (size - len(values))
    return ",".join("?" * len(values)), values


class Connection(sqlite.Connection):
    """A connection whose writes pass the redaction choke point (memory.store.columns): every
    string an INSERT, REPLACE or UPDATE binds to a TEXT column is cleaned by that column's
    policy before SQLite sees it, whoever wrote the statement. It also carries the user's
    `redact_patterns` (`Store.open` sets them; any other connection redacts with the built-in
    rules alone). `clean_writes` is off for in-memory databases, which never reach a disk."""

    redact_patterns: tuple[str, ...] = ()
    backend = "sqlite"  # memory.store.pg.PgConnection says "postgresql"
    clean_writes: bool = True

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite.Cursor:  # type: ignore[override]
        if parameters and self.clean_writes:
            parameters = columns.clean_params(sql, parameters, self.redact_patterns)
        return super().execute(sql, parameters)

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """A PostgreSQL connection lends a thread a connection of its own for the block
        (memory.store.pg); a SQLite store has one connection and its threads take turns on it."""
        yield

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> sqlite.Cursor:  # type: ignore[override]
        if self.clean_writes and columns.plan(sql) is not None:
            seq_of_parameters = [columns.clean_params(sql, p, self.redact_patterns) for p in seq_of_parameters]
        elif self.clean_writes:
            seq_of_parameters = (columns.clean_params(sql, p, ()) for p in seq_of_parameters)
        return super().executemany(sql, seq_of_parameters)


DatabaseError = sqlite.DatabaseError
OperationalError = sqlite.OperationalError
IntegrityError = sqlite.IntegrityError


FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # memory_fts's (migration 1); memory.textindex reuses it


def vec0_path() -> str:
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreUnavailable("sqlite-vec is not installed; run `pip install sqlite-vec`")
    return os.path.join(spec.submodule_search_locations[0], "vec0")


def connect(
    path: Path | str, *, busy_timeout_ms: int = 10_000, vectors: bool = True, readonly: bool = False
) -> Connection:
    """Open the database with every setting MAPLE relies on.

    `vectors=False` skips loading sqlite-vec, for processes that only read FTS (a cold hook).
    """
    target = str(path)
    uri = False
    if readonly and target != ":memory:":
        target, uri = f"file:{Path(path).as_posix()}?mode=ro", True
    try:
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves (see atomic()).
        # check_same_thread=False: the MCP SDK runs sync tools on worker threads; Store serialises.
        conn = sqlite.connect(
            target,
            isolation_level=None,
            check_same_thread=False,
            uri=uri,
            timeout=busy_timeout_ms / 1000,
            factory=Connection,
        )
        if vectors:
            conn.enable_load_extension(True)
            conn.load_extension(vec0_path())
            conn.enable_load_extension(False)
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")  # wait for other writers, never fail fast
        if not readonly:
            # Freed pages go back to the disk bit by bit (maintenance runs incremental_vacuum). Takes
            # effect only in a new file, so before WAL writes its header; older files switch over at
            # their first maintenance pass, which VACUUMs once. Only for a new (empty) file: on an
            # existing one the pragma waits for the write lock, so every open, reads included,
            # would queue behind a writer and fail while another process holds the lock.
            if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA journal_mode=WAL")  # server and hooks read while another process writes
        conn.execute("PRAGMA synchronous=NORMAL")  # durable across app crashes in WAL; fsync at checkpoint
        conn.execute("PRAGMA foreign_keys=ON")  # links and outcomes go with their memory
        # Deleted and overwritten text is zeroed in the page, not left in free space where a
        # backup or a copy of the file would still carry it (forget --permanent, a redacting edit).
        conn.execute("PRAGMA secure_delete=ON")
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA cache_size=-16000")  # 16 MB: a vec0 chunk alone is 1.5 MB (default 2 MB)
    except sqlite.DatabaseError as e:
        raise StoreUnavailable(describe(e, path)) from e
    conn.clean_writes = target != ":memory:"  # a scratch database in memory never reaches a disk
    return conn


def describe(e: BaseException, path: Path | str) -> str:
    """A sentence that says what went wrong with the database file and what to do about it.
    `path` may be a team database's URL (Config.where): its advice is the team's, never a file's."""
    url = re.sub(r"^(postgres(?:ql)?):/+", r"\1://", str(path))  # Path() folds a URL's "//" (store.path)
    if is_url(url):
        return _describe_team(e, safe_url(url))
    msg = str(e).lower()
    if "locked" in msg or "busy" in msg:
        return (
            f"database {path} stayed locked by another process beyond the busy timeout; "
            "retry, or find the process holding it (`fuser` / `lsof`)"
        )
    if "readonly" in msg or "read-only" in msg or "permission" in msg:
        return f"database {path} is read-only for this user; fix its permissions or set MAPLE_HOME"
    if "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        # "malformed database schema (memories) - unrecognized token: ..." : the part after the
        # dash is SQLite's parser talking about damaged bytes, which tells a person nothing.
        return (
            f"database {path} is corrupt ({str(e).split(' - ')[0]}); restore a backup with `maple-memory backup --restore FILE` "
            "(`maple-memory backup --list` shows them), or move the file away to start fresh"
        )
    if "disk" in msg and "full" in msg or "database or disk is full" in msg or _disk_full(path):
        return f"the disk holding {path} is full; free space, nothing was written"
    if "unable to open" in msg:
        return f"cannot open database {path}: its folder is missing or not writable; set MAPLE_HOME"
    return f"database {path}: {e}"


def _describe_team(e: BaseException, url: str) -> str:
    """describe() for a PostgreSQL team database: what its admin or this machine can do."""
    msg = str(e).lower()
    if "read-only transaction" in msg or "read_only" in msg:
        return (
            f"team database {url}: this role may only read (its sessions are read-only), so nothing was written; "
            "the database admin lifts it (`ALTER ROLE <role> RESET default_transaction_read_only`) or gives you a "
            "role that may write"
        )
    if "permission denied" in msg or "insufficientprivilege" in msg or "row-level security" in msg:
        return (
            f"team database {url}: this role is not allowed to do that ({str(e).strip()}); the database admin "
            "grants the rights (README, Team memory on PostgreSQL), or the table owner opens it once with this MAPLE"
        )
    if "lock timeout" in msg or "locknotavailable" in msg:
        return f"team database {url}: another writer held its lock beyond the busy timeout; retry"
    return f"team database {url}: {e}"


def _disk_full(path: Path | str) -> bool:
    """Whether the filesystem holding `path` has no room left (SQLite then often reports only a
    "disk I/O error", e.g. when it cannot create the -shm file of a WAL database)."""
    try:
        st = os.statvfs(Path(path).parent)
    except (OSError, AttributeError):  # no such folder, or no statvfs (Windows)
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


def _about_the_file(e: BaseException) -> bool:
    """SQLite errors about the file (locked, full, read-only, corrupt, I/O), not about the
    statement (a constraint, a misuse): the former become StoreUnavailable, the latter stay bugs."""
    return isinstance(e, sqlite.DatabaseError) and not isinstance(
        e, (sqlite.IntegrityError, sqlite.ProgrammingError, sqlite.InterfaceError, sqlite.DataError)
    )


class Transactions:
    """`atomic()` for one connection: BEGIN IMMEDIATE at the top level, savepoints inside.

    BEGIN IMMEDIATE takes the write lock up front, so two writers queue on busy_timeout instead
    of deadlocking on a read-to-write upgrade. Shared by the threads of one process under a lock.
    """

    def __init__(self, conn: Connection):
        self.conn = conn
        self.lock = threading.RLock()
        self.depth = 0

    @contextmanager
    def atomic(self, serial: bool = True) -> Iterator[Connection]:
        """A transaction; SQLite's own errors (locked too long, disk full, corrupt) leave it as
        StoreUnavailable saying what to do, never as a driver exception. `serial` is for
        PostgreSQL (memory.store.pg): SQLite's writers always take turns."""
        with self.lock:
            try:
                if self.depth == 0:
                    self.conn.execute("BEGIN IMMEDIATE")
                else:
                    self.conn.execute(f"SAVEPOINT sp{self.depth}")
            except sqlite.DatabaseError as e:
                if _about_the_file(e):
                    raise StoreUnavailable(describe(e, self._path())) from e
                raise
            self.depth += 1
            try:
                yield self.conn
            except BaseException as e:
                self.depth -= 1
                self._undo()
                if _about_the_file(e):
                    raise StoreUnavailable(describe(e, self._path())) from e
                raise
            self.depth -= 1
            try:
                if self.depth == 0:
                    self.conn.execute("COMMIT")
                else:
                    self.conn.execute(f"RELEASE sp{self.depth}")
            except sqlite.DatabaseError as e:
                self._undo()
                if _about_the_file(e):
                    raise StoreUnavailable(describe(e, self._path())) from e
                raise

    def _undo(self) -> None:
        """Roll back this level. SQLite may already have rolled the whole transaction back (a
        full disk does), and a failing rollback must not hide the error that caused it."""
        if not self.conn.in_transaction:
            return
        try:
            if self.depth == 0:
                self.conn.execute("ROLLBACK")
            else:
                self.conn.execute(f"ROLLBACK TO sp{self.depth}")
                self.conn.execute(f"RELEASE sp{self.depth}")
        except sqlite.DatabaseError:
            pass

    def _path(self) -> str:
        try:
            row = self.conn.execute("PRAGMA database_list").fetchone()
            return row[2] or "the database"
        except sqlite.DatabaseError:
            return "the database"
