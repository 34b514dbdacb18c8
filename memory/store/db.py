"""The one way MAPLE opens SQLite: driver, extensions, pragmas, transactions and migrations.

The driver is `sqlean` (sqlean.py), a DB-API drop-in that bundles SQLite 3.50 and can load
extensions everywhere, so every process (server, hooks, CLI) sees the same SQLite and features,
even on Pythons whose stdlib sqlite3 cannot load extensions. sqlite-vec is loaded by file path:
`import sqlite_vec` pulls in numpy.typing, about 55 ms we cannot afford in a hook.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlean as sqlite

from memory.errors import StoreUnavailable

Connection = sqlite.Connection
DatabaseError = sqlite.DatabaseError
OperationalError = sqlite.OperationalError
IntegrityError = sqlite.IntegrityError


FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"  # memory_fts's (migration 1); memory.textindex reuses it


def vec0_path() -> str:
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StoreUnavailable("sqlite-vec is not installed; run `pip install sqlite-vec`")
    return os.path.join(spec.submodule_search_locations[0], "vec0")


def connect(path: Path | str, *, busy_timeout_ms: int = 10_000, vectors: bool = True,
            readonly: bool = False) -> Connection:
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
        conn = sqlite.connect(target, isolation_level=None, check_same_thread=False, uri=uri,
                              timeout=busy_timeout_ms / 1000)
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
        conn.execute("PRAGMA temp_store=MEMORY")
        conn.execute("PRAGMA cache_size=-16000")  # 16 MB: a vec0 chunk alone is 1.5 MB (default 2 MB)
    except sqlite.DatabaseError as e:
        raise StoreUnavailable(describe(e, path)) from e
    return conn


def describe(e: BaseException, path: Path | str) -> str:
    """A sentence that says what went wrong with the database file and what to do about it."""
    msg = str(e).lower()
    if "locked" in msg or "busy" in msg:
        return (f"database {path} stayed locked by another process beyond the busy timeout; "
                "retry, or find the process holding it (`fuser` / `lsof`)")
    if "readonly" in msg or "read-only" in msg or "permission" in msg:
        return f"database {path} is read-only for this user; fix its permissions or set MAPLE_HOME"
    if "malformed" in msg or "not a database" in msg or "corrupt" in msg:
        return (f"database {path} is corrupt ({e}); restore a backup with `maple-memory backup --restore FILE` "
                "(`maple-memory backup --list` shows them), or move the file away to start fresh")
    if "disk" in msg and "full" in msg or "database or disk is full" in msg or _disk_full(path):
        return f"the disk holding {path} is full; free space, nothing was written"
    if "unable to open" in msg:
        return f"cannot open database {path}: its folder is missing or not writable; set MAPLE_HOME"
    return f"database {path}: {e}"


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
        e, (sqlite.IntegrityError, sqlite.ProgrammingError, sqlite.InterfaceError, sqlite.DataError))


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
    def atomic(self) -> Iterator[Connection]:
        """A transaction; SQLite's own errors (locked too long, disk full, corrupt) leave it as
        StoreUnavailable saying what to do, never as a driver exception."""
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


# ---------------------------------------------------------------------------------------------
# Migrations: named functions, run in order at open, each in its own transaction, recorded in
# the `migrations` table. Never edit one that has shipped; add the next.

def run_script(conn: Connection, script: str) -> None:
    """Execute SQL statements one by one: executescript() would COMMIT our open transaction."""
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite.complete_statement(pending):
            conn.execute(pending)
            pending = ""
    if pending.strip() and not pending.strip().startswith("--"):
        raise ValueError(f"incomplete SQL statement: {pending[:80]!r}")


def _m001_initial(conn: Connection) -> None:
    run_script(conn, """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

    CREATE TABLE memories (
        id INTEGER PRIMARY KEY,
        content TEXT NOT NULL,
        layer TEXT NOT NULL DEFAULT 'fact' CHECK (layer IN ('fact', 'experience', 'decision')),
        category TEXT NOT NULL DEFAULT 'general',
        subject TEXT,
        scope TEXT NOT NULL,
        importance INTEGER NOT NULL DEFAULT 3 CHECK (importance BETWEEN 1 AND 5),
        confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        valence REAL NOT NULL DEFAULT 0 CHECK (valence BETWEEN -1 AND 1),
        intensity REAL NOT NULL DEFAULT 0 CHECK (intensity BETWEEN 0 AND 1),
        moods TEXT NOT NULL DEFAULT '[]',
        tags TEXT NOT NULL DEFAULT '[]',
        pinned INTEGER NOT NULL DEFAULT 0,
        source TEXT NOT NULL DEFAULT 'manual'
            CHECK (source IN ('manual', 'hook', 'import', 'consolidation', 'extraction')),
        source_ref TEXT,
        session_id TEXT,
        occurred_at REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        last_activated_at REAL,
        activation_count INTEGER NOT NULL DEFAULT 0,
        valid_from REAL,
        valid_to REAL,
        superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL,
        parent_id INTEGER REFERENCES memories(id) ON DELETE CASCADE,
        chunk_index INTEGER,
        content_hash TEXT NOT NULL,
        deleted_at REAL,
        metadata TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX memories_scope_hash ON memories(scope, content_hash);
    CREATE INDEX memories_scope_time ON memories(scope, occurred_at);
    CREATE INDEX memories_session ON memories(session_id, id) WHERE session_id IS NOT NULL;
    CREATE INDEX memories_parent ON memories(parent_id) WHERE parent_id IS NOT NULL;
    CREATE INDEX memories_subject ON memories(scope, subject) WHERE subject IS NOT NULL;
    CREATE INDEX memories_superseded ON memories(superseded_by) WHERE superseded_by IS NOT NULL;

    -- Contentless: the text lives once, in memories; the index holds only tokens.
    -- The body is pre-tokenised by memory.text (English words, CJK bigrams).
    CREATE VIRTUAL TABLE memory_fts USING fts5(
        body, tokenize = 'porter unicode61 remove_diacritics 2', content = '', contentless_delete = 1);

    CREATE TABLE entities (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        name TEXT NOT NULL,
        norm TEXT NOT NULL,
        kind TEXT NOT NULL DEFAULT 'thing',
        created_at REAL NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        UNIQUE (scope, norm)
    );
    CREATE TABLE entity_aliases (
        entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        alias TEXT NOT NULL,
        norm TEXT NOT NULL,
        PRIMARY KEY (norm, entity_id)
    ) WITHOUT ROWID;
    CREATE INDEX entity_aliases_entity ON entity_aliases(entity_id);
    CREATE TABLE relations (
        id INTEGER PRIMARY KEY,
        src INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        dst INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        type TEXT NOT NULL,
        confidence REAL NOT NULL DEFAULT 1.0,
        valid_from REAL,
        valid_to REAL,
        memory_id INTEGER REFERENCES memories(id) ON DELETE SET NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX relations_src ON relations(src, type);
    CREATE INDEX relations_dst ON relations(dst, type);
    CREATE TABLE memory_entities (
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        role TEXT NOT NULL DEFAULT 'mention',
        PRIMARY KEY (memory_id, entity_id)
    ) WITHOUT ROWID;
    CREATE INDEX memory_entities_entity ON memory_entities(entity_id, memory_id);

    -- Who recalled what, when: the raw material of activation-based decay. No query text:
    -- a query may hold a secret.
    CREATE TABLE access_log (
        id INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        session_id TEXT
    );
    CREATE INDEX access_log_memory ON access_log(memory_id, at);

    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL DEFAULT '{}',
        dedup_key TEXT UNIQUE,
        status TEXT NOT NULL DEFAULT 'queued'
            CHECK (status IN ('queued', 'running', 'done', 'failed', 'parked')),
        attempts INTEGER NOT NULL DEFAULT 0,
        run_after REAL NOT NULL,
        locked_by TEXT,
        locked_at REAL,
        last_error TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX jobs_ready ON jobs(status, run_after);

    CREATE TABLE decision_outcomes (
        id INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        outcome TEXT NOT NULL CHECK (outcome IN ('worked', 'failed', 'partial')),
        notes TEXT NOT NULL DEFAULT '',
        recorded_at REAL NOT NULL
    );
    CREATE INDEX decision_outcomes_memory ON decision_outcomes(memory_id);

    -- How far each transcript has been read, so harvesting is incremental and idempotent.
    CREATE TABLE transcript_cursors (
        path TEXT PRIMARY KEY,
        session_id TEXT,
        offset INTEGER NOT NULL DEFAULT 0,
        inode INTEGER,
        head TEXT,
        updated_at REAL NOT NULL
    );

    -- Earlier versions of a memory, written by updates and merges.
    CREATE TABLE memory_versions (
        id INTEGER PRIMARY KEY,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        content TEXT NOT NULL,
        fields TEXT NOT NULL DEFAULT '{}',
        reason TEXT NOT NULL,
        changed_at REAL NOT NULL
    );
    CREATE INDEX memory_versions_memory ON memory_versions(memory_id);
    """)


def _m002_injections(conn: Connection) -> None:
    run_script(conn, """
    -- Which memories were put in front of which conversation (hooks, memory_surface), so a
    -- session never gets the same memory twice: injected context stays in its history.
    CREATE TABLE injections (
        session_id TEXT NOT NULL,
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        at REAL NOT NULL,
        PRIMARY KEY (session_id, memory_id)
    ) WITHOUT ROWID;
    CREATE INDEX injections_at ON injections(at);
    CREATE INDEX injections_memory ON injections(memory_id);

    -- What passive recall shows whatever the prompt (pinned memories, who the user is), the
    -- session brief's "most important", and live memories per scope (search sizes its candidate
    -- pool by that count), without scanning every memory of a large store.
    CREATE INDEX memories_core ON memories(scope, importance) WHERE pinned = 1 OR category = 'identity';
    CREATE INDEX memories_scope_importance ON memories(scope, importance);
    CREATE INDEX memories_live_scope ON memories(scope) WHERE deleted_at IS NULL;
    """)


def _m003_maintenance(conn: Connection) -> None:
    run_script(conn, """
    -- Entity-name vectors for the maintenance agent's embedding pass over duplicate entities,
    -- cached per model so each name is embedded once.
    CREATE TABLE entity_vectors (
        entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (entity_id, model)
    ) WITHOUT ROWID;
    -- Recall events by time: co-retrieval counts over recent searches, pruning old events.
    CREATE INDEX access_log_at ON access_log(at);
    """)


def _m004_purges(conn: Connection) -> None:
    run_script(conn, """
    -- Every memory row deleted for good, by any path (a trigger, so none is missed): processes
    -- that keep an in-memory copy of the indexes (memory.textindex) drop what was purged.
    CREATE TABLE purges (id INTEGER PRIMARY KEY, memory_id INTEGER NOT NULL, at REAL NOT NULL);
    CREATE TRIGGER memories_purged AFTER DELETE ON memories BEGIN
        INSERT INTO purges (memory_id, at) VALUES (old.id, unixepoch('subsec'));
    END;
    """)


MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("001_initial", _m001_initial),
    ("002_injections", _m002_injections),
    ("003_maintenance", _m003_maintenance),
    ("004_purges", _m004_purges),
]


def migrate(conn: Connection, tx: Transactions) -> list[str]:
    """Bring the schema up to date; return the names of the migrations applied."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                 "applied_at REAL NOT NULL)")
    applied = []
    for number, (name, step) in enumerate(MIGRATIONS, 1):
        if conn.execute("SELECT 1 FROM migrations WHERE id = ?", (number,)).fetchone():
            continue
        with tx.atomic():
            # Another process may have applied it while we waited for the write lock.
            if conn.execute("SELECT 1 FROM migrations WHERE id = ?", (number,)).fetchone():
                continue
            step(conn)
            conn.execute("INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)",
                         (number, name, time.time()))
        applied.append(name)
    return applied
