"""The PostgreSQL backend: a connection that speaks the SQL MAPLE writes for SQLite.

Design (the smallest honest one found): the store, the agents and the app keep one set of SQL,
written for SQLite. `PgConnection` wraps a psycopg 3 connection and rewrites each statement once
(cached) from the SQLite subset MAPLE uses into PostgreSQL: `?` placeholders, `INSERT OR IGNORE` /
`INSERT OR REPLACE`, scalar `min`/`max`, `IS ?`, `json_each`/`json_extract`/`instr`, the `offset`
column; `lastrowid` comes from an added `RETURNING id`; driver errors come out as the sqlite
driver's classes (IntegrityError, OperationalError), so every `except db.DatabaseError` holds. The
schema is the same list of migrations (memory.store.schema), their DDL translated here
(`translate_ddl`): INTEGER keys become identities, REAL double precision, BLOB bytea.

What cannot be shared is named and lives here, one function per difference:
- the keyword index: `memory_fts` is a table (rowid, tokens tsvector, length) with a GIN index.
  Tokens are FTS5's own (memory.store.textindex tokenises with an in-memory FTS5 table, and so does
  `fts_tokens`), so both backends index the same tokens; `keyword_hits` computes FTS5's BM25 in SQL
  (k1 1.2, b 0.75, FTS5's idf) over the rows the tsquery matches;
- the vector index: `memory_vec` is a table (rowid, scope, embedding vector(dim)) with an HNSW
  index (cosine), searched with pgvector's iterative scan so a scope filter still returns k rows;
  a reindex fills an ordinary table of the new dimension and renames it into place (the owner's
  step: it replaces a table), and a process still holding the old model reads no vectors;
- transactions: one at a time per database for writes, as SQLite's BEGIN IMMEDIATE gives (a
  transaction-level advisory lock), except where a statement takes row locks itself (the job queue
  claims with FOR UPDATE SKIP LOCKED);
- the schema version: a database whose schema is newer than this MAPLE is refused;
- who sees what (`enable_row_security`, schema migration 010): each teammate connects as a role
  of their own; the database records that role as each memory's author and lets a role see every
  project memory but only its own global ones, and the same for every table that holds their text.

Only this module imports psycopg and pgvector, and only when a `postgresql://` database is set.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import memory.store.columns as columns
import memory.store.db as db
from memory.config import is_url, safe_url  # noqa: F401 - config owns what a URL is; callers use pg.*
from memory.errors import StoreUnavailable

WRITE_LOCK = 0x4D41504C45  # "MAPLE": the advisory lock that serialises writers, as BEGIN IMMEDIATE does
K1, B = 1.2, 0.75  # FTS5's bm25() constants


# -- SQL translation ---------------------------------------------------------------------------------

# Tables whose rows have an `id` the database assigns: an INSERT into them gets `RETURNING id`.
ID_TABLES = frozenset(
    {"memories", "entities", "relations", "access_log", "jobs", "decision_outcomes", "memory_versions", "purges"}
)
# INSERT OR REPLACE needs the conflict target PostgreSQL asks for: each table's primary key.
PRIMARY_KEYS = {
    "meta": ("key",),
    "transcript_cursors": ("path", "author"),  # each role's own ledger (PG step personal_cursors)
    "entity_vectors": ("entity_id", "model"),
    "injections": ("session_id", "memory_id"),
    "memory_entities": ("memory_id", "entity_id"),
    "entity_aliases": ("norm", "entity_id"),
}
_INSERT = re.compile(r"^\s*INSERT\s+(?:OR\s+(IGNORE|REPLACE)\s+)?INTO\s+(\w+)\s*(\(([^)]*)\))?", re.I | re.S)


def _split_literals(sql: str) -> list[tuple[bool, str]]:
    """(is_code, text) pieces: quoted strings and identifiers are left alone by the rewrites."""
    out, i, start = [], 0, 0
    while i < len(sql):
        ch = sql[i]
        if ch in "'\"":
            if i > start:
                out.append((True, sql[start:i]))
            j = i + 1
            while j < len(sql):
                if sql[j] == ch:
                    if j + 1 < len(sql) and sql[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            out.append((False, sql[i : j + 1]))
            i = start = j + 1
            continue
        i += 1
    if start < len(sql):
        out.append((True, sql[start:]))
    return out


def _scalar_min_max(code: str) -> str:
    """min(a, b, ...) and max(a, b, ...) (SQLite's scalar forms) -> LEAST / GREATEST."""
    out, i = [], 0
    for m in re.finditer(r"\b(min|max)\s*\(", code, re.I):
        if m.start() < i:
            continue
        depth, j, commas = 1, m.end(), 0
        while j < len(code) and depth:
            if code[j] == "(":
                depth += 1
            elif code[j] == ")":
                depth -= 1
            elif code[j] == "," and depth == 1:
                commas += 1
            j += 1
        if commas:
            out.append(code[i : m.start()])
            out.append("LEAST(" if m.group(1).lower() == "min" else "GREATEST(")
            i = m.end()
    out.append(code[i:])
    result = "".join(out)
    return result if result == code else _scalar_min_max(result)  # nested ones


_CODE_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bBEGIN\s+IMMEDIATE\b", re.I), "BEGIN"),
    (re.compile(r"\bIS\s+NOT\s+\?", re.I), "IS DISTINCT FROM ?"),
    (re.compile(r"\bIS\s+\?", re.I), "IS NOT DISTINCT FROM ?"),
    # SQLite's way to fix the join order ("CROSS JOIN t ON ..."): a plain join in PostgreSQL
    (re.compile(r"\bCROSS\s+JOIN(\s+\w+\s+\w+\s+ON)\b", re.I), r"JOIN\1"),
    # SQLite's way to keep a column off an index ("AND +m.scope IN ..."): the column itself
    (re.compile(r"(\b(?:AND|WHERE|OR|ON)\s+|\(\s*)\+(?=[A-Za-z_])", re.I), r"\1"),
    (re.compile(r"\bWHERE\s+1\b(?!\s*[=<>])", re.I), "WHERE TRUE"),
    (re.compile(r"\binstr\s*\(", re.I), "strpos("),
    # a JSON list of ids: SQLite compares its elements as numbers, PostgreSQL needs the cast
    (
        re.compile(r"\b(id\s+IN\s+\(\s*SELECT\s+)value(\s+FROM\s+)json_each\s*\(([^()]*)\)", re.I),
        r"\1value::bigint\2json_array_elements_text((\3)::json) AS j(value)",
    ),
    (re.compile(r"\bgroup_concat\s*\(([^(),]*)\)", re.I), r"string_agg((\1)::text, ',')"),
    (re.compile(r"\bmax\(rowid\)(\s+FROM\s+memories)\b", re.I), r"max(id)\1"),  # memories' rowid is its id
    (re.compile(r"\s+INDEXED\s+BY\s+\w+", re.I), ""),  # SQLite's index hints; PostgreSQL's planner picks
    (re.compile(r"([\w.]+)\s*=\s*\?\s+COLLATE\s+NOCASE\b", re.I), r"lower(\1) = lower(?)"),
    (re.compile(r"\blength\s*\(\s*CAST\s*\(([^()]*?)\s+AS\s+BLOB\s*\)\s*\)", re.I), r"octet_length(\1)"),
    (re.compile(r"\bCAST\s*\(([^()]*?)\s+AS\s+INTEGER\s*\)", re.I), r"trunc(\1)::bigint"),  # SQLite truncates
    (re.compile(r"[\w.]+\s+NOT\s+IN\s*\(\s*\)", re.I), "TRUE"),  # SQLite allows an empty list
    (re.compile(r"[\w.]+\s+IN\s*\(\s*\)", re.I), "FALSE"),
    # json_each over a JSON array (tags, moods, a list of ids): its `value` column, as text
    (
        re.compile(r"\bjson_each\s*\(([^()]*)\)\s+(?:AS\s+)?(\w+)(?=\s+(?:WHERE|ON|JOIN|,|\)|$))", re.I),
        r"json_array_elements_text((\1)::json) AS \2(value)",
    ),
    (re.compile(r"\bjson_each\s*\(([^()]*)\)", re.I), r"json_array_elements_text((\1)::json) AS j(value)"),
    (re.compile(r"\bunixepoch\('subsec'\)", re.I), "extract(epoch FROM clock_timestamp())"),
    (
        re.compile(r"(?<![\w\"])offset(?![\w\"])"),
        '"offset"',
    ),  # a column of transcript_cursors; OFFSET the keyword is upper case
]
_JSON_EXTRACT = re.compile(r"\bjson_extract\s*\(\s*([\w.]+)\s*,\s*$", re.I)


# PRAGMAs tune SQLite's file; the few whose answer code reads get PostgreSQL's nearest one.
PRAGMAS = {
    "integrity_check": "SELECT 'ok'",
    "quick_check": "SELECT 'ok'",
    "page_count": "SELECT pg_database_size(current_database())",
    "page_size": "SELECT 1",
    "freelist_count": "SELECT 0",
    "auto_vacuum": "SELECT 2",  # "incremental": autovacuum gives space back, nothing to switch on
    "journal_mode": "SELECT 'wal'",
}


@lru_cache(maxsize=2048)
def translate(sql: str, bound: bool = True) -> tuple[str, bool]:
    """`sql` (SQLite, `?` placeholders) as PostgreSQL with psycopg's `%s`; and whether an
    `RETURNING id` was added (the cursor's lastrowid). `bound=False`: run without parameters,
    so a `%` stays single."""
    pragma = re.match(r"\s*PRAGMA\s+(\w+)", sql, re.I)
    if pragma:
        return PRAGMAS.get(pragma.group(1).lower(), "SELECT 1 WHERE false"), False
    if re.match(r"\s*(--[^\n]*\n\s*)*(CREATE|DROP)\b", sql, re.I):
        sql = translate_ddl(sql)
    pieces = _split_literals(sql)
    # json_extract(col, '$.key') -> (col::json ->> 'key'): the path is a literal, so join across pieces
    for n in range(len(pieces) - 1):
        code, text = pieces[n]
        if code and not pieces[n + 1][0] and pieces[n + 1][1].startswith("'$."):
            m = _JSON_EXTRACT.search(text)
            nxt = pieces[n + 2] if n + 2 < len(pieces) else (True, "")
            if m and nxt[0] and nxt[1].lstrip().startswith(")"):
                key = pieces[n + 1][1][3:-1]
                pieces[n] = (True, text[: m.start()] + f"(({m.group(1)})::json ->> ")
                pieces[n + 1] = (False, "'" + key + "'")
    out = []
    for code, text in pieces:
        text = text.replace("%", "%%") if bound else text
        if code:
            for pattern, repl in _CODE_RULES:
                text = pattern.sub(repl, text)
            text = _scalar_min_max(text).replace("?", "%s")
        out.append(text)
    pg = "".join(out)
    returning = False
    # Each role's harvest ledger and job queue are its own (personal_cursors, personal_jobs): a
    # conflict is within the role's rows.
    pg = re.sub(
        r"(INTO transcript_cursors\b.*ON CONFLICT\s*)\(\s*path\s*\)", r"\1(path, author)", pg, flags=re.S | re.I
    )
    pg = re.sub(r"(INTO jobs\b.*ON CONFLICT\s*)\(\s*dedup_key\s*\)", r"\1(dedup_key, author)", pg, flags=re.S | re.I)
    m = _INSERT.match(pg)
    if m:
        how, table, cols = (m.group(1) or "").upper(), m.group(2), m.group(4)
        pg = (
            pg[: m.start()] + re.sub(r"\s+OR\s+(IGNORE|REPLACE)\b", "", m.group(0), count=1, flags=re.I) + pg[m.end() :]
        )
        tail = ""
        if how == "IGNORE":
            tail = " ON CONFLICT DO NOTHING"
        elif how == "REPLACE":
            keys = PRIMARY_KEYS[table]
            others = [c.strip() for c in (cols or "").split(",") if c.strip() and c.strip() not in keys]
            sets = ", ".join(f"{c} = excluded.{c}" for c in others)
            tail = f" ON CONFLICT ({', '.join(keys)}) " + (f"DO UPDATE SET {sets}" if sets else "DO NOTHING")
        body = pg.rstrip().rstrip(";")
        r = re.search(r"\sRETURNING\s", body, re.I)
        if r:
            body = body[: r.start()] + tail + body[r.start() :]
        else:
            body += tail
            if table in ID_TABLES:
                body += " RETURNING id"
                returning = True
        pg = body
    return pg, returning


def translate_ddl(sql: str) -> str:
    """A schema statement of memory.store.schema in PostgreSQL's words."""
    stripped = "\n".join(line for line in sql.splitlines() if not line.strip().startswith("--")).strip()
    for start, replacement in DDL_REPLACEMENTS.items():
        if stripped.startswith(start):
            return replacement
    out = re.sub(r"\bINTEGER PRIMARY KEY\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", sql)
    out = re.sub(r"\bINTEGER\b", "BIGINT", out)
    out = re.sub(r"\bREAL\b", "DOUBLE PRECISION", out)
    out = re.sub(r"\bBLOB\b", "BYTEA", out)
    out = re.sub(r"\)\s*WITHOUT ROWID", ")", out)
    return out


# The statements of the SQLite schema that have no PostgreSQL equivalent word for word.
DDL_REPLACEMENTS = {
    "CREATE VIRTUAL TABLE memory_fts": (
        # FTS5's tokens of each memory's body with their positions, and the token count (BM25's length).
        "CREATE TABLE memory_fts (rowid BIGINT PRIMARY KEY, tokens TSVECTOR NOT NULL, length INTEGER NOT NULL);"
        "CREATE INDEX memory_fts_tokens ON memory_fts USING gin (tokens)"
    ),
    "CREATE TRIGGER memories_purged": (
        "CREATE FUNCTION maple_note_purge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "INSERT INTO purges (memory_id, at) VALUES (old.id, extract(epoch FROM clock_timestamp())); "
        "RETURN old; END $$;"
        "CREATE TRIGGER memories_purged AFTER DELETE ON memories FOR EACH ROW EXECUTE FUNCTION maple_note_purge()"
    ),
}


# -- the connection ----------------------------------------------------------------------------------


def _as_sqlite_error(e: Exception) -> Exception:
    """The sqlite driver's class for a psycopg error, so callers' `except db.X` hold on both."""
    import psycopg

    msg = f"{type(e).__name__}: {e}".strip()
    if isinstance(e, psycopg.errors.IntegrityError):
        return db.IntegrityError(msg)
    if isinstance(e, (psycopg.errors.ProgrammingError, psycopg.errors.DataError)) and not isinstance(
        e, psycopg.errors.InsufficientPrivilege
    ):
        return db.OperationalError(msg)  # sqlite reports a bad statement as OperationalError too
    return db.OperationalError(msg)


class PgCursor:
    """The part of sqlite3.Cursor MAPLE uses."""

    def __init__(self, cur: Any, lastrowid: int | None = None, first: Any = None):
        self._cur = cur
        self.lastrowid = lastrowid
        self._first = first

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    def fetchone(self) -> Any:
        if self._cur.description is None:
            return None
        return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        if self._cur.description is None:
            return []
        return self._cur.fetchall()

    def fetchmany(self, n: int) -> list[Any]:
        if self._cur.description is None:
            return []
        return self._cur.fetchmany(n)

    def __iter__(self) -> Iterator[Any]:
        if self._cur.description is None:
            return iter(())
        return iter(self._cur)

    @property
    def description(self) -> Any:
        return self._cur.description


POOL_SIZE = 4  # connections `pinned` blocks may hold at once (the engine's concurrent requests)
POOL_WAIT_S = 0.25  # how long `pinned` waits for one before the shared connection serves instead


class _Session:
    """One psycopg connection and what belongs to it: its lock (a connection serves one thread at a
    time), its transaction depth, the session settings made on it, whether it knows pgvector's types."""

    def __init__(self, raw: Any):
        self.raw = raw
        self.lock = threading.RLock()
        self.depth = 0
        self.settings: dict[str, str] = {}
        self.vector_types = False


class PgConnection:
    """A psycopg connection in autocommit mode (transactions are `Transactions`'s BEGIN/COMMIT),
    answering the calls MAPLE makes on a sqlite connection.

    Statements go to the shared connection, one thread at a time, except inside `pinned()`: there
    a thread has a connection of its own from psycopg's pool until the block ends, so the engine's
    concurrent requests (a prompt's recall while a search runs) do not wait behind each other."""

    backend = "postgresql"
    redact_patterns: tuple[str, ...] = ()
    clean_writes = True  # the redaction choke point, as on SQLite (memory.store.db.Connection)

    def __init__(self, raw: Any, url: str, busy_timeout_ms: int = 10_000):
        self.url = url
        self.busy_timeout_ms = busy_timeout_ms
        self.total_changes = 0
        self.statements = 0  # statements sent (round trips; an executemany counts once): benchmarks print it
        self._main = _Session(raw)
        self._pins = threading.local()  # .session: this thread's pinned session
        self._pool: Any = None  # psycopg_pool.ConnectionPool, made by the first `pinned`
        self._pool_lock = threading.Lock()
        self._sessions: weakref.WeakKeyDictionary[Any, _Session] = weakref.WeakKeyDictionary()  # pool's
        self._vectors = False  # the database has pgvector: every session registers its types

    def _session(self) -> _Session:
        return getattr(self._pins, "session", None) or self._main

    @property
    def raw(self) -> Any:
        """This thread's psycopg connection: its pinned one, else the shared one."""
        return self._session().raw

    @property
    def lock(self) -> threading.RLock:
        return self._session().lock

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """This thread's statements, until the block ends, on a connection of its own from the pool.
        Nested: the outer block's. When the pool has none to give within POOL_WAIT_S (all in use,
        the database away), the shared connection serves, one thread at a time, as outside."""
        if getattr(self._pins, "session", None) is not None:
            yield
            return
        pool = self._pool_for_pins()
        try:
            raw = pool.getconn(timeout=POOL_WAIT_S)
        except Exception:  # noqa: BLE001 - PoolTimeout, PoolClosed, a failed connect: not an error here
            raw = None
        if raw is None:
            yield
            return
        session = self._sessions.get(raw)
        if session is None:
            session = self._sessions[raw] = _Session(raw)
        self._pins.session = session
        try:
            if self._vectors:
                self.register_vectors()  # once per pooled connection: vectors read as vectors, not text
            yield
        finally:
            self._pins.session = None
            pool.putconn(raw)  # a connection left in a transaction is rolled back; a broken one dropped

    def _pool_for_pins(self) -> Any:
        with self._pool_lock:
            if self._pool is None:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    self.url,
                    kwargs=_connect_args(self.busy_timeout_ms),
                    configure=lambda raw: _set_up(raw, self.busy_timeout_ms),
                    # A connection that died idle (the server restarted) is dropped, not handed out:
                    # the shared connection then finds the database gone and the engine says so.
                    check=ConnectionPool.check_connection,
                    min_size=0,
                    max_size=POOL_SIZE,
                    max_idle=60.0,
                    num_workers=1,
                    name="maple",
                    open=True,
                )
            return self._pool

    def execute(self, sql: str, params: Sequence[Any] | None = ()) -> PgCursor:
        if params and self.clean_writes:
            params = columns.clean_params(sql, params, self.redact_patterns)
        args = _params(params)
        pg, returning = translate(sql, bool(args))
        with self.lock:
            raw = self._live()
            self.statements += 1
            try:
                cur = raw.execute(pg, args or None)
            except Exception as e:
                if _is_driver_error(e):
                    raise self._lost(e) or _as_sqlite_error(e) from e
                raise
            if cur.rowcount > 0 and not pg.lstrip()[:6].upper().startswith("SELECT"):
                self.total_changes += cur.rowcount
            if returning:
                row = cur.fetchone()
                return PgCursor(cur, row[0] if row else None)
            return PgCursor(cur)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> PgCursor:
        pg, returning = translate(sql)
        if returning:
            pg = pg[: -len(" RETURNING id")]
        if self.clean_writes:
            seq = [columns.clean_params(sql, p, self.redact_patterns if columns.plan(sql) else ()) for p in seq]
        rows = [_params(p) for p in seq]
        with self.lock:
            cur = self._live().cursor()
            if not rows:
                return PgCursor(cur)
            self.statements += 1
            try:
                cur.executemany(pg, rows)
            except Exception as e:
                if _is_driver_error(e):
                    raise self._lost(e) or _as_sqlite_error(e) from e
                raise
            if cur.rowcount > 0:
                self.total_changes += cur.rowcount
            return PgCursor(cur)

    def setting(self, name: str, value: str) -> None:
        """Set a server setting for this session's later statements: once per connection (a
        round trip per search saved), or for the open transaction only when one is open (a SET
        there would be undone with it, and the connection would not know)."""
        session = self._session()
        with session.lock:
            if session.settings.get(name) == value:
                return
            raw = self._live()
            self.statements += 1
            try:
                if self.in_transaction:
                    raw.execute("SELECT set_config(%s, %s, true)", (name, value))
                else:
                    raw.execute("SELECT set_config(%s, %s, false)", (name, value))
                    session.settings[name] = value
            except Exception as e:
                if _is_driver_error(e):
                    raise self._lost(e) or _as_sqlite_error(e) from e
                raise

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        if self.raw.closed:  # a lost connection took its transaction with it: nothing to roll back
            return False
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    def _live(self) -> Any:
        """The psycopg connection, opened again when the last one was lost (the server restarted,
        the network dropped): a long-lived process (the MCP server, the engine, the worker) then
        works again from the first call after the database is back, with nothing restarted. Only
        between transactions: a statement that fails mid-transaction ends it (`_lost`). A pinned
        connection that was lost stays lost (the pool replaces it once the block returns it)."""
        session = self._session()
        if not session.raw.closed:
            return session.raw
        if session is not self._main:
            raise StoreUnavailable(unreachable(self.url, "the connection was lost"))
        try:
            raw = _open_raw(self.url, self.busy_timeout_ms)
        except StoreUnavailable as e:
            raise StoreUnavailable(unreachable(self.url, str(e.__cause__ or e))) from None
        self._main = _Session(raw)  # session settings and types went with the old connection
        if self._vectors:
            self.register_vectors()
        return raw

    def _lost(self, e: Exception) -> StoreUnavailable | None:
        """StoreUnavailable when `e` came from losing the connection (the next call reconnects),
        None for an error of the statement itself."""
        if not self.raw.closed:
            return None
        return StoreUnavailable(unreachable(self.url, str(e)))

    def register_vectors(self) -> None:
        """Teach this thread's connection pgvector's types (after the extension exists), and every
        connection after it."""
        self._vectors = True
        session = self._session()
        if not session.vector_types:
            from pgvector.psycopg import register_vector

            register_vector(session.raw)
            session.vector_types = True

    def close(self) -> None:
        self._main.raw.close()
        if self._pool is not None:
            self._pool.close(timeout=1.0)


def _params(params: Sequence[Any] | None) -> Any:
    if params is None:
        return ()
    if isinstance(params, (list, tuple)):
        return params
    return tuple(params)


def _is_driver_error(e: BaseException) -> bool:
    import psycopg

    return isinstance(e, psycopg.Error)


def unreachable(url: str, why: str) -> str:
    """What a call says while the team database cannot be reached."""
    why = " ".join(why.split()) or "no answer"
    return (
        f"the team database {safe_url(url)} is unreachable ({why}); check that its server runs and that this "
        "machine reaches it (network, VPN). MAPLE reconnects by itself on the next call once it is back; "
        "meanwhile memories cannot be read or stored (a session's harvest waits in the local spool)"
    )


def connect(url: str, *, busy_timeout_ms: int = 10_000) -> PgConnection:
    """Open the team database with the settings MAPLE relies on."""
    raw = _open_raw(url, busy_timeout_ms)
    conn = PgConnection(raw, url, busy_timeout_ms)
    if raw.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        conn.register_vectors()
    return conn


def _open_raw(url: str, busy_timeout_ms: int) -> Any:
    """A psycopg connection set up as PgConnection expects (also its reconnect)."""
    try:
        import psycopg
    except ImportError as e:
        raise StoreUnavailable(
            f"database is {safe_url(url)} but psycopg is not installed; "
            "run `pip install 'maple-memory[postgres]'` (psycopg[binary,pool] and pgvector)"
        ) from e

    try:
        raw = psycopg.connect(url, **_connect_args(busy_timeout_ms))
    except psycopg.Error as e:
        raise StoreUnavailable(
            f"cannot reach database {safe_url(url)}: {str(e).strip()}; check that the server runs and the URL "
            "(`database` in config.json or MAPLE_DATABASE_URL)"
        ) from e
    _set_up(raw, busy_timeout_ms)
    return raw


def _connect_args(busy_timeout_ms: int) -> dict[str, Any]:
    return {
        "autocommit": True,  # Transactions issues BEGIN itself, as on SQLite
        "connect_timeout": max(1, busy_timeout_ms // 1000),
        "application_name": "maple",
    }


def _set_up(raw: Any, busy_timeout_ms: int) -> None:
    """What every connection MAPLE opens needs (the shared one and the pool's)."""
    from psycopg.types.numeric import NumericLoader

    class _NumberLoader(NumericLoader):
        """sum() and avg() give numeric: an int when whole, else a float (SQLite's types)."""

        def load(self, data: Any) -> Any:
            value = super().load(data)
            return int(value) if value == value.to_integral_value() else float(value)

    raw.adapters.register_loader("numeric", _NumberLoader)
    # A writer waits this long for another's transaction instead of failing at once (busy_timeout).
    raw.execute(f"SET lock_timeout = {int(busy_timeout_ms)}")


class Transactions(db.Transactions):
    """`atomic()` for one PostgreSQL connection: BEGIN at the top level, savepoints inside (the
    rollback, `_undo`, is SQLite's: the statements and the error classes are the same).

    `serial` (the default) takes a transaction-level advisory lock first, so writers run one at a
    time as they do on SQLite, and read-then-write code (duplicate checks) needs no other care.
    """

    def __init__(self, conn: PgConnection):
        self.conn = conn

    @property
    def lock(self) -> threading.RLock:  # type: ignore[override]
        return self.conn.lock

    @property
    def depth(self) -> int:  # type: ignore[override]
        return self.conn._session().depth

    @contextmanager
    def atomic(self, serial: bool = True) -> Iterator[PgConnection]:
        session = self.conn._session()  # this thread's connection: its own transaction
        with session.lock:
            if session.depth == 0:
                self.conn.execute("BEGIN")
                if serial:
                    self.conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
            else:
                self.conn.execute(f"SAVEPOINT sp{session.depth}")
            session.depth += 1
            try:
                yield self.conn
            except BaseException:
                session.depth -= 1
                self._undo()
                raise
            session.depth -= 1
            try:
                self.conn.execute("COMMIT" if session.depth == 0 else f"RELEASE sp{session.depth}")
            except db.DatabaseError:
                self._undo()
                raise


# -- the keyword index -------------------------------------------------------------------------------

_tokenizers = threading.local()


def _tokenizer() -> Any:
    """This thread's in-memory FTS5 table with memory_fts's tokenizer (as memory.store.textindex)."""
    tok = getattr(_tokenizers, "conn", None)
    if tok is None:
        tok = db.connect(":memory:", vectors=False)
        tok.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{db.FTS_TOKENIZER}')")
        tok.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _tokenizers.conn = tok
    return tok


def fts_tokens(bodies: Sequence[str]) -> list[list[str]]:
    """Each body's tokens in order, exactly as FTS5 indexes it."""
    tok = _tokenizer()
    tok.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)", list(enumerate(bodies)))
    found: list[list[tuple[int, str]]] = [[] for _ in bodies]
    for term, doc, offset in tok.execute("SELECT term, doc, offset FROM v"):
        found[doc].append((offset, term))
    tok.execute("DELETE FROM t")
    return [[_fit(term) for _, term in sorted(f)] for f in found]


# PostgreSQL refuses a word of MAXSTRLEN (2047) bytes or more in a tsvector or a tsquery ("word is too long").
MAX_LEXEME = 2046


def _fit(token: str) -> str:
    """A token cut to what a tsvector holds, the same way in a memory and in a query (so a search
    for a 3,000-letter word still finds the memory holding it, as on SQLite, instead of failing)."""
    raw = token.encode("utf-8")
    if len(raw) <= MAX_LEXEME:
        return token
    return raw[:MAX_LEXEME].decode("utf-8", errors="ignore")


def _lexeme(tok: str) -> str:
    return "'" + tok.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(tokens: Sequence[str]) -> str:
    """A tsvector input string keeping each token verbatim, with its positions (1-based, max 16383)."""
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens, start=1):
        positions.setdefault(tok, []).append(min(i, 16383))
    return " ".join(_lexeme(t) + ":" + ",".join(map(str, p)) for t, p in positions.items())


def write_keywords(conn: PgConnection, rows: Sequence[tuple[int, str]]) -> None:
    """Insert or replace the keyword rows of (memory id, body) pairs."""
    if not rows:
        return
    tokens = fts_tokens([body for _, body in rows])
    conn.executemany(
        "INSERT INTO memory_fts (rowid, tokens, length) VALUES (?, ?::tsvector, ?) "
        "ON CONFLICT (rowid) DO UPDATE SET tokens = excluded.tokens, length = excluded.length",
        [(mid, tsvector_literal(t), len(t)) for (mid, _), t in zip(rows, tokens)],
    )


def _literals(match: str) -> list[tuple[str, str]]:
    """An FTS5 query of the forms MAPLE writes (string literals joined by OR, side by side, or in
    NEAR(..., 0)) as (joiner before it, literal text) pairs."""
    out, joiner, i = [], "", 0
    while i < len(match):
        if match[i] == '"':
            j = i + 1
            while j < len(match):
                if match[j] == '"':
                    if j + 1 < len(match) and match[j + 1] == '"':
                        j += 2
                        continue
                    break
                j += 1
            out.append((joiner, match[i + 1 : j].replace('""', '"')))
            joiner = "&"
            i = j + 1
        elif match.startswith("OR", i):
            joiner, i = "|", i + 2
        elif match.startswith("NEAR(", i):
            near_end = match.index(")", i)
            inner = match[i + 5 : match.rindex(",", i, near_end)]
            for k, (_, lit) in enumerate(_literals(inner)):
                out.append((joiner if k == 0 else "<->", lit))
            joiner, i = "&", near_end + 1
        else:
            i += 1
    return out


def tsquery(match: str) -> tuple[str, list[list[str]]]:
    """An FTS5 query as a tsquery input string, and each OR-ed term's tokens."""
    parts = _literals(match)
    tokens = fts_tokens([lit for _, lit in parts])
    query, terms = "", []
    for (joiner, _), toks in zip(parts, tokens):
        if not toks:
            continue
        phrase = "(" + " <-> ".join(_lexeme(t) for t in toks) + ")"
        query += (f" {joiner or '|'} " if query else "") + phrase
        if joiner in ("", "|"):
            terms.append(list(toks))
        else:
            terms[-1] += toks
    return query, terms


def document_count(conn: PgConnection, term: str) -> int:
    query, _ = tsquery(term)
    if not query:
        return 0
    return conn.execute("SELECT count(*) FROM memory_fts WHERE tokens @@ ?::tsquery", (query,)).fetchone()[0]


def keyword_hits(
    conn: PgConnection, terms: list[str], where: str, args: Sequence[Any], pool: int
) -> list[tuple[int, float]]:
    """The `pool` best memories for an OR of `terms` (FTS5 literals) passing `where` (on alias m),
    with FTS5's BM25 computed in SQL: phrase frequency = the least frequent of its tokens, as the
    warm SQLite index (memory.store.textindex) takes it.

    One statement: the rows the tsquery matches are read once (GIN), each term's document count
    is taken from them, the corpus figures from memory_fts_totals, and each token's frequency
    from the `tfs` column (unnesting a tsvector costs ~45 us a row, 50x a jsonb lookup)."""
    from memory.lang import text

    query, phrases = tsquery(text.match_or(terms))
    if not query:
        return []
    # Per matched row, each term's frequency: the least of its tokens' counts, NULL when one is
    # missing (one expression a term, no row per token to group). Its document count is the rows
    # where it is not NULL; a phrase's (CJK bigrams) is the rows where its tokens stand in order.
    # The arguments in the order their placeholders stand in the statement: a phrase's tsquery
    # right after its counts (two phrases in one query took each other's otherwise).
    cols, col_args, dfs = [], [], []
    for n, toks in enumerate(phrases):
        toks = list(dict.fromkeys(toks))
        counts = ", ".join("(h.tfs ->> ?)::int" for _ in toks)
        if len(toks) == 1:
            cols.append(f"{counts} AS tf{n}")
            dfs.append(f"count(tf{n}) AS df{n}")
            col_args += toks
        else:
            cols.append(f"CASE WHEN jsonb_exists_all(h.tfs, ?::text[]) THEN least({counts}) END AS tf{n}")
            cols.append(f"h.tokens @@ ?::tsquery AS in{n}")
            col_args += [toks, *toks, " <-> ".join(_lexeme(t) for t in phrases[n])]
            dfs.append(f"count(*) FILTER (WHERE in{n}) AS df{n}")
    # Double precision throughout, as FTS5 computes (numeric arithmetic cost most of the time).
    idf = "greatest(ln((totals.rows - df{n} + 0.5::float8) / (df{n} + 0.5::float8)), 1e-6::float8)"
    norm = f"(1 - {B}::float8 + {B}::float8 * length / totals.avgl)"
    score = " + ".join(
        f"coalesce({idf.format(n=n)} * (tf{n} * {K1 + 1}::float8) / (tf{n} + {K1}::float8 * {norm}), 0)"
        for n in range(len(phrases))
    )
    sql = f"""
    WITH hit AS MATERIALIZED (SELECT rowid, length, tokens, tfs FROM memory_fts WHERE tokens @@ ?::tsquery),
    per_term AS MATERIALIZED (SELECT h.rowid, h.length, {", ".join(cols)} FROM hit h),
    totals AS MATERIALIZED (
        SELECT rows, length::float8 / greatest(rows, 1) AS avgl, d.* FROM memory_fts_totals,
        (SELECT {", ".join(dfs)} FROM per_term) AS d),
    ranked AS (
        SELECT rowid, score FROM (
            SELECT rowid, {score} AS score FROM per_term, totals
            WHERE {" OR ".join(f"tf{n} IS NOT NULL" for n in range(len(phrases)))}) AS s
        ORDER BY round(score * 1e9) DESC, rowid)  -- ties by id, as FTS5; sums differ in the last bit
    -- Best first, each looked up by id until `pool` pass the filters: joining every match to the
    -- memories of the scopes first read all of those (24k rows at 100k, most of the time taken).
    SELECT r.rowid, r.score FROM ranked r
    CROSS JOIN LATERAL (SELECT 1 FROM memories m WHERE m.id = r.rowid AND {where} OFFSET 0) AS kept
    LIMIT ?
    """
    params = (query, *col_args, *args, pool)
    hits = [(r[0], float(r[1])) for r in conn.execute(sql, params).fetchall()]
    hits.sort(key=lambda h: (-round(h[1] * 1e9), h[0]))  # the statement's order, made sure
    return hits


# -- PostgreSQL's own schema steps -------------------------------------------------------------------


def _keyword_totals(conn: PgConnection) -> None:
    """What BM25 reads on every search, kept instead of computed: each keyword row's token counts
    (`tfs`, a jsonb derived from `tokens` by the database, so a writer that does not know the
    column still fills it), and the row count and total length (memory_fts_totals, kept by
    statement triggers: counting 100k rows took ~15 ms a search)."""
    conn.execute(
        "CREATE OR REPLACE FUNCTION maple_token_counts(tsvector) RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE "
        "AS $$ SELECT coalesce(jsonb_object_agg(lexeme, coalesce(array_length(positions, 1), 1)), '{}') "
        "FROM unnest($1) $$"
    )
    conn.execute(
        "ALTER TABLE memory_fts ADD COLUMN IF NOT EXISTS tfs jsonb "
        "GENERATED ALWAYS AS (maple_token_counts(tokens)) STORED"
    )
    conn.execute(
        "CREATE TABLE IF NOT EXISTS memory_fts_totals (one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one), "
        "rows BIGINT NOT NULL, length BIGINT NOT NULL)"
    )
    conn.execute(
        "INSERT INTO memory_fts_totals (rows, length) SELECT count(*), coalesce(sum(length), 0) FROM memory_fts "
        "ON CONFLICT (one) DO UPDATE SET rows = excluded.rows, length = excluded.length"
    )
    # SECURITY DEFINER: a teammate's write keeps the totals without a right to change them itself.
    conn.execute(
        "CREATE OR REPLACE FUNCTION maple_fts_totals() RETURNS trigger LANGUAGE plpgsql "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ BEGIN "
        "IF TG_OP IN ('INSERT', 'UPDATE') THEN UPDATE memory_fts_totals SET "
        "rows = rows + (SELECT count(*) FROM added), length = length + (SELECT coalesce(sum(length), 0) FROM added); "
        "END IF; "
        "IF TG_OP IN ('DELETE', 'UPDATE') THEN UPDATE memory_fts_totals SET "
        "rows = rows - (SELECT count(*) FROM gone), length = length - (SELECT coalesce(sum(length), 0) FROM gone); "
        "END IF; RETURN NULL; END $$"
    )
    # One trigger per event: a trigger with transition tables may have only one.
    for event, tables in (
        ("INSERT", "NEW TABLE AS added"),
        ("UPDATE", "OLD TABLE AS gone NEW TABLE AS added"),
        ("DELETE", "OLD TABLE AS gone"),
    ):
        conn.execute(
            f"CREATE OR REPLACE TRIGGER memory_fts_totals_{event.lower()} AFTER {event} ON memory_fts "
            f"REFERENCING {tables} FOR EACH STATEMENT EXECUTE FUNCTION maple_fts_totals()"
        )
    conn.execute("GRANT SELECT ON memory_fts_totals TO PUBLIC")  # every teammate's search reads them


# PostgreSQL's additions to the shared schema (memory.store.schema), in order, recorded in meta as
# `pg_schema`: they add what only this backend reads, so a MAPLE that does not know them still
# works on the database (they take no number from the shared list of migrations).
def _personal_cursors(conn: PgConnection) -> None:
    """transcript_cursors (how far each transcript and git log has been harvested) names a
    teammate's transcript paths and session ids: each role reads and writes only its own rows,
    keyed by (path, author), with the author set by the database as for memories. Rows from
    before belong to the role that applies this step (the owner)."""
    for sql in (
        # Idempotent: a database whose record of the steps was lost gets them again (as keyword_totals).
        "ALTER TABLE transcript_cursors ADD COLUMN IF NOT EXISTS author TEXT NOT NULL DEFAULT current_user",
        "DROP TRIGGER IF EXISTS transcript_cursors_author ON transcript_cursors",
        "CREATE TRIGGER transcript_cursors_author BEFORE INSERT OR UPDATE ON transcript_cursors "
        "FOR EACH ROW EXECUTE FUNCTION maple_author()",
        "ALTER TABLE transcript_cursors DROP CONSTRAINT IF EXISTS transcript_cursors_pkey",
        "ALTER TABLE transcript_cursors ADD PRIMARY KEY (path, author)",
    ):
        conn.execute(sql)
    _protect(conn, "transcript_cursors", "author = current_user")


def _personal_jobs(conn: PgConnection) -> None:
    """The job queue names a teammate's transcript paths and scopes, and a job runs where its files
    are: each role queues, sees and claims only its own jobs (a teammate's engine never harvests
    another's transcript under its own name), and a job's dedup key collapses repeats within the
    role's jobs, keyed by (dedup_key, author) with the author set by the database as for memories.
    Jobs from before belong to the role that applies this step (the owner)."""
    for sql in (
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS author TEXT NOT NULL DEFAULT current_user",
        "DROP TRIGGER IF EXISTS jobs_author ON jobs",
        "CREATE TRIGGER jobs_author BEFORE INSERT OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION maple_author()",
        "ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_dedup_key_key",
        "ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_dedup_key_author",
        "ALTER TABLE jobs ADD CONSTRAINT jobs_dedup_key_author UNIQUE (dedup_key, author)",
    ):
        conn.execute(sql)
    _protect(conn, "jobs", "author = current_user")


def _purge_editors(conn: PgConnection) -> None:
    """A memory deleted for good leaves a row in `purges`: it now names who deleted it (the login
    role, set by the database) and the memory's scope, so a teammate asking for it is told who
    and when, while a personal memory's purge stays its author's."""
    for sql in (
        "ALTER TABLE purges ADD COLUMN IF NOT EXISTS editor TEXT DEFAULT current_user",
        "ALTER TABLE purges ADD COLUMN IF NOT EXISTS scope TEXT",
        "DROP TRIGGER IF EXISTS purges_editor ON purges",
        "CREATE TRIGGER purges_editor BEFORE INSERT OR UPDATE ON purges FOR EACH ROW EXECUTE FUNCTION maple_editor()",
        "CREATE OR REPLACE FUNCTION maple_note_purge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "INSERT INTO purges (memory_id, at, scope) VALUES (old.id, extract(epoch FROM clock_timestamp()), old.scope); "
        "RETURN old; END $$",
    ):
        conn.execute(sql)
    _protect(conn, "purges", "scope IS NULL OR scope <> 'global' OR editor = current_user")


PG_STEPS: list[tuple[str, Any]] = [
    ("keyword_totals", _keyword_totals),
    ("personal_cursors", _personal_cursors),
    ("personal_jobs", _personal_jobs),
    ("purge_editors", _purge_editors),
]


def upgrade(conn: PgConnection, tx: Transactions) -> list[str]:
    """Apply the PG_STEPS this database lacks (after the shared migrations); their names."""
    sql = "SELECT value FROM meta WHERE key = 'pg_schema'"
    row = conn.execute(sql).fetchone()
    if row is not None and int(row[0]) >= len(PG_STEPS):
        return []
    require_owner(conn, f"pg_{PG_STEPS[int(row[0]) if row else 0][0]}")  # as the shared migrations
    applied = []
    with tx.atomic():
        row = conn.execute(sql).fetchone()  # another process may have applied them while we waited
        done = int(row[0]) if row else 0
        for name, step in PG_STEPS[done:]:
            step(conn)
            applied.append(name)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('pg_schema', ?)", (str(len(PG_STEPS)),))
    return applied


# -- who sees what -----------------------------------------------------------------------------------

# Every table MAPLE makes, and what a teammate's role may do with it. `migrations` is read-only:
# the owner (the role that created the schema) runs migrations; teammates have no CREATE on the schema.
TEAM_TABLES = (
    "meta", "memories", "memory_fts", "entities", "entity_aliases", "relations", "memory_entities",
    "access_log", "jobs", "decision_outcomes", "transcript_cursors", "memory_versions", "injections",
    "entity_vectors", "purges",
)  # fmt: skip
TEAM_GRANT = "SELECT, INSERT, UPDATE, DELETE"
# A global memory (or entity) is visible to its author only; a project one to everyone.
PERSONAL = "scope <> 'global' OR author = current_user"
# Tables whose rows belong to one memory or entity: visible when that row is (the subquery is itself
# filtered by the memories/entities policy, so hidden rows stay hidden here too).
_MEMORY_ROW = "EXISTS (SELECT 1 FROM memories m WHERE m.id = {})"
_ENTITY_ROW = "EXISTS (SELECT 1 FROM entities e WHERE e.id = {})"
DEPENDENT_POLICIES = {
    "memory_fts": _MEMORY_ROW.format("rowid"),
    "memory_versions": _MEMORY_ROW.format("memory_id"),
    "memory_entities": _MEMORY_ROW.format("memory_id"),
    "access_log": _MEMORY_ROW.format("memory_id"),
    "injections": _MEMORY_ROW.format("memory_id"),
    "decision_outcomes": _MEMORY_ROW.format("memory_id"),
    "entity_aliases": _ENTITY_ROW.format("entity_id"),
    "entity_vectors": _ENTITY_ROW.format("entity_id"),
    "relations": f"{_ENTITY_ROW.format('src')} AND {_ENTITY_ROW.format('dst')}",
}
# memory_vec carries its memory's scope: only global rows pay for the lookup.
VECTOR_POLICY = f"scope <> 'global' OR {_MEMORY_ROW.format('memory_vec.rowid')}"


def _protect(conn: PgConnection, table: str, using: str) -> None:
    """Row-level security on `table` for everyone, its owner included (FORCE): only superusers and
    BYPASSRLS roles (an administrator's, never a teammate's) see past `using`."""
    conn.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    conn.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    conn.execute(f"DROP POLICY IF EXISTS maple_team ON {table}")
    conn.execute(f"CREATE POLICY maple_team ON {table} USING ({using}) WITH CHECK ({using})")


def enable_row_security(conn: PgConnection) -> None:
    """Schema migration 010 on PostgreSQL: authors set by the database, policies, grants.

    - `memories.author` and `entities.author` are the login role (current_user), set by a trigger
      on insert and kept on update whatever the client sends: a role cannot write a global memory
      as someone else, nor take over another's by editing it. Rows written before (the preview)
      get the role that runs this migration.
    - Two users' global entities may share a name: the unique key of entities includes the author
      for global ones (else the second insert would collide with a row it cannot see).
    - Every team table is granted to PUBLIC (the database's CONNECT privilege is the team list,
      see the README); `migrations` only for reading.
    """
    run = [
        "CREATE OR REPLACE FUNCTION maple_author() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF TG_OP = 'INSERT' THEN NEW.author := current_user; ELSE NEW.author := OLD.author; END IF; "
        "RETURN NEW; END $$",
        "ALTER TABLE memories ALTER COLUMN author SET DEFAULT current_user",
        "ALTER TABLE entities ADD COLUMN author TEXT DEFAULT current_user",
        "UPDATE memories SET author = current_user WHERE author IS NULL",
        "UPDATE entities SET author = current_user WHERE author IS NULL",
        "CREATE TRIGGER memories_author BEFORE INSERT OR UPDATE ON memories FOR EACH ROW EXECUTE FUNCTION maple_author()",
        "CREATE TRIGGER entities_author BEFORE INSERT OR UPDATE ON entities FOR EACH ROW EXECUTE FUNCTION maple_author()",
        "ALTER TABLE entities DROP CONSTRAINT IF EXISTS entities_scope_norm_key",
        "CREATE UNIQUE INDEX entities_scope_norm_author ON entities "
        "(scope, norm, (CASE WHEN scope = 'global' THEN author ELSE '' END))",
        "CREATE INDEX memories_global_author ON memories (author) WHERE scope = 'global'",
    ]
    for sql in run:
        conn.execute(sql)
    _protect(conn, "memories", PERSONAL)
    _protect(conn, "entities", PERSONAL)
    for table, using in DEPENDENT_POLICIES.items():
        _protect(conn, table, using)
    if conn.execute("SELECT to_regclass('memory_vec') IS NOT NULL").fetchone()[0]:
        protect_vectors(conn)
    for table in TEAM_TABLES:
        conn.execute(f"GRANT {TEAM_GRANT} ON {table} TO PUBLIC")
    conn.execute("GRANT SELECT ON migrations TO PUBLIC")


def record_editors(conn: PgConnection) -> None:
    """Schema migration 011 on PostgreSQL: a version's editor is the login role that made the
    change, set by the database whatever the client sends (as memories.author)."""
    conn.execute(
        "CREATE OR REPLACE FUNCTION maple_editor() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "NEW.editor := current_user; RETURN NEW; END $$"
    )
    conn.execute("ALTER TABLE memory_versions ALTER COLUMN editor SET DEFAULT current_user")
    conn.execute(
        "CREATE TRIGGER memory_versions_editor BEFORE INSERT OR UPDATE ON memory_versions "
        "FOR EACH ROW EXECUTE FUNCTION maple_editor()"
    )


def private_recalls(conn: PgConnection) -> None:
    """Schema migration 012 on PostgreSQL: access_log rows (what a role's assistant was shown, the
    prompt excerpt it answered) belong to the role that wrote them; others do not see them.
    Rows from before belong to the role that applies the migration (the owner)."""
    for sql in (
        "ALTER TABLE access_log ADD COLUMN reader TEXT NOT NULL DEFAULT current_user",
        "CREATE OR REPLACE FUNCTION maple_reader() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "NEW.reader := current_user; RETURN NEW; END $$",
        "CREATE TRIGGER access_log_reader BEFORE INSERT OR UPDATE ON access_log "
        "FOR EACH ROW EXECUTE FUNCTION maple_reader()",
    ):
        conn.execute(sql)
    _protect(conn, "access_log", f"reader = current_user AND {DEPENDENT_POLICIES['access_log']}")


def may_create(conn: PgConnection) -> bool:
    """Whether this role may create tables here: the owner's, not a teammate's (see the README)."""
    return bool(conn.execute("SELECT has_schema_privilege(current_schema(), 'CREATE')").fetchone()[0])


def require_owner(conn: PgConnection, migration: str) -> None:
    """Before a schema migration: teammates' roles may not create tables (nor may they own one,
    which would let them switch its policy off), so only the schema's owner migrates."""
    if not may_create(conn):
        raise StoreUnavailable(
            f"database {safe_url(conn.url)} needs schema migration {migration}, which only the role that owns "
            "MAPLE's tables may run; ask the team database's admin to open it once with this MAPLE as that role "
            "(e.g. `MAPLE_DATABASE_URL=postgresql://maple_owner@… maple-memory stats`), then try again"
        )


def protect_vectors(conn: PgConnection) -> None:
    """memory_vec's policy and grant (it is made on the first vector, after the migrations)."""
    _protect(conn, "memory_vec", VECTOR_POLICY)
    conn.execute(f"GRANT {TEAM_GRANT} ON memory_vec TO PUBLIC")


# -- the vector index --------------------------------------------------------------------------------


def create_vector_table(conn: PgConnection, dim: int) -> None:
    """memory_vec with an HNSW index on cosine distance (pgvector `vector`: the float32 values
    SQLite's vec0 holds, so cosines agree across backends)."""
    if not conn.execute("SELECT to_regclass('memory_vec') IS NOT NULL").fetchone()[0] and not may_create(conn):
        raise StoreUnavailable(
            f"database {safe_url(conn.url)} has no vector table yet and only the owner of MAPLE's tables may make "
            "it; ask the admin to open it once as that role with the team's embedding model "
            "(e.g. `maple-memory search setup`)"
        )
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS memory_vec (rowid BIGINT PRIMARY KEY, scope TEXT NOT NULL, "
        f"embedding vector({int(dim)}) NOT NULL)"
    )
    conn.execute("CREATE INDEX IF NOT EXISTS memory_vec_hnsw ON memory_vec USING hnsw (embedding vector_cosine_ops)")
    conn.execute("CREATE INDEX IF NOT EXISTS memory_vec_scope ON memory_vec (scope)")
    if conn.execute("SELECT 1 FROM migrations WHERE name = '010_row_security'").fetchone():
        protect_vectors(conn)


# -- re-embedding (memory.store.backup.reindex) -------------------------------------------------------

REINDEX_TABLE = "memory_vec_reindex"


def require_owner_to_reindex(conn: PgConnection, model: str) -> None:
    """Before a reindex changes anything: it replaces the vector table, which only the owner of
    MAPLE's tables may do (as the schema migrations, `require_owner`)."""
    if not may_create(conn):
        raise StoreUnavailable(
            f"re-embedding database {safe_url(conn.url)} with {model} replaces its vector table, which only the role "
            "that owns MAPLE's tables may do; ask the team database's admin to run the reindex as that role "
            f"(e.g. `MAPLE_DATABASE_URL=postgresql://maple_owner@… maple-memory reindex --model {model}`). "
            "Afterwards your MAPLE re-embeds your own global memories by itself"
        )


def create_reindex_table(conn: PgConnection, dim: int) -> None:
    """The table a reindex fills (memory_vec's columns with the new model's dimension). It has no
    grant: teammates never read it; the swap gives it memory_vec's policy and grant."""
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {REINDEX_TABLE} (rowid BIGINT PRIMARY KEY, scope TEXT NOT NULL, "
        f"embedding vector({int(dim)}) NOT NULL)"
    )


def index_reindex_table(conn: PgConnection) -> None:
    """The HNSW index of the filled table, built once at the end (faster than row by row) and
    outside the swap's transaction: memory_vec stays searchable and writable while it builds."""
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {REINDEX_TABLE}_hnsw ON {REINDEX_TABLE} USING hnsw (embedding vector_cosine_ops)"
    )


def swap_vector_table(conn: PgConnection, dim: int) -> None:
    """Inside the reindex's swap transaction: the filled table becomes memory_vec, with its
    indexes, row policy and grant (vectors of memories deleted meanwhile left out)."""
    conn.execute(
        f"DELETE FROM {REINDEX_TABLE} WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = {REINDEX_TABLE}.rowid)"
    )
    conn.execute("DROP TABLE IF EXISTS memory_vec")
    conn.execute(f"ALTER TABLE {REINDEX_TABLE} RENAME TO memory_vec")
    conn.execute(f"ALTER TABLE memory_vec RENAME CONSTRAINT {REINDEX_TABLE}_pkey TO memory_vec_pkey")
    conn.execute(f"ALTER INDEX IF EXISTS {REINDEX_TABLE}_hnsw RENAME TO memory_vec_hnsw")
    create_vector_table(conn, dim)  # the indexes not made yet, the policy and the grant


def _vector(vec: Any) -> Any:
    import numpy as np

    return np.asarray(vec, dtype=np.float32)


def write_vectors(conn: PgConnection, rows: Sequence[tuple[int, str, Any]], table: str = "memory_vec") -> None:
    """Insert or replace (memory id, scope, vector) rows of memory_vec (or of REINDEX_TABLE)."""
    conn.register_vectors()
    conn.executemany(
        f"INSERT INTO {table} (rowid, scope, embedding) VALUES (?, ?, ?) "
        "ON CONFLICT (rowid) DO UPDATE SET scope = excluded.scope, embedding = excluded.embedding",
        [(mid, scope, _vector(vec)) for mid, scope, vec in rows],
    )


# A process that opened the database before a reindex swapped memory_vec (a teammate's engine
# still holding the old model) reads no vectors instead of comparing two models' vectors or
# failing on their dimensions: keyword search answers until it restarts (server.engine exits when
# it sees the swap). A condition without columns: PostgreSQL checks it once, before any scan.
SAME_MODEL = (
    "(SELECT value FROM meta WHERE key = 'embedding_model') = ? "
    "AND coalesce((SELECT value FROM meta WHERE key = 'embedding_revision'), '') = ?"
)


def vector_hits(
    conn: PgConnection, qvec: Any, scopes: Sequence[str], k: int, model: tuple[str, str]
) -> list[tuple[int, float]]:
    """The k nearest in `scopes` by the HNSW index; the iterative scan keeps going past rows of
    other scopes until k are found (pgvector 0.8). `model`: the (model, revision) `qvec` came
    from; none when the index holds another's (SAME_MODEL)."""
    conn.register_vectors()
    marks = ",".join("?" * len(scopes))
    with conn.lock:
        conn.setting("hnsw.ef_search", str(max(40, min(int(k), 1000))))
        conn.setting("hnsw.iterative_scan", "relaxed_order")
        rows = conn.execute(
            f"SELECT rowid, embedding <=> ? AS d FROM memory_vec WHERE scope IN ({marks}) AND {SAME_MODEL} "
            "ORDER BY d LIMIT ?",
            (_vector(qvec), *scopes, *model, k),
        ).fetchall()
    rows.sort(key=lambda r: (r[1], r[0]))  # relaxed order: nearly sorted, sort the k exactly
    return [(r[0], 1 - float(r[1])) for r in rows]


def cosines(conn: PgConnection, qvec: Any, ids: Sequence[int], model: tuple[str, str]) -> dict[int, float]:
    conn.register_vectors()
    out: dict[int, float] = {}
    q = _vector(qvec)
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        out.update(
            (r[0], 1 - float(r[1]))
            for r in conn.execute(
                f"SELECT rowid, embedding <=> ? FROM memory_vec WHERE rowid IN ({','.join('?' * len(chunk))}) "
                f"AND {SAME_MODEL}",
                (q, *chunk, *model),
            )
        )
    return out


def load_vectors(conn: PgConnection, ids: list[int], dim: int, model: tuple[str, str]) -> tuple[list[int], Any]:
    """(ids that have a vector, float32 matrix of unit rows), in the order given."""
    import numpy as np

    conn.register_vectors()
    found: dict[int, Any] = {}
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        # `::vector`: no dimension in the result type, so a statement psycopg prepared before a
        # reindex changed it is planned again instead of failing ("cached plan must not change
        # result type"); SAME_MODEL then finds no rows.
        for rowid, emb in conn.execute(
            f"SELECT rowid, embedding::vector FROM memory_vec WHERE rowid IN ({','.join('?' * len(chunk))}) "
            f"AND {SAME_MODEL}",
            (*chunk, *model),
        ):
            found[rowid] = emb
    have = [i for i in ids if i in found]
    if not have:
        return [], np.zeros((0, dim), dtype=np.float32)
    matrix = np.stack([found[i].to_numpy().astype(np.float32) for i in have])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1)
    return have, matrix


# -- the schema version ------------------------------------------------------------------------------


def prepare(conn: PgConnection, url: str, known: int) -> None:
    """Before the migrations: the vector extension (made by an owner, see the README), and a
    schema no newer than this MAPLE's `known` migrations."""
    if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        try:
            # Under the writers' lock, as the migrations: two processes creating it at once collide.
            conn.execute("BEGIN")
            try:
                conn.execute(f"SELECT pg_advisory_xact_lock({WRITE_LOCK})")
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except db.DatabaseError as e:
            raise StoreUnavailable(
                f"database {safe_url(url)} lacks the pgvector extension and this user may not create it ({e}); "
                "ask its owner to run `CREATE EXTENSION vector;` in it"
            ) from e
        conn.register_vectors()
    check_not_newer(conn, known, url)


def check_not_newer(conn: PgConnection, known: int, url: str) -> None:
    """Refuse a database migrated by a newer MAPLE: its tables may mean things this one does not know."""
    exists = conn.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return
    top = conn.execute("SELECT coalesce(max(id), 0) FROM migrations").fetchone()[0]
    if top > known:
        name = conn.execute("SELECT name FROM migrations WHERE id = ?", (top,)).fetchone()[0]
        raise StoreUnavailable(
            f"database {safe_url(url)} has schema version {top} ({name}), newer than this MAPLE knows ({known}); "
            "upgrade MAPLE on this machine (`pip install -U maple-memory`) to use the team database"
        )
