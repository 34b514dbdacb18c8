"""The database schema: named migrations, run in order at open, each in its own transaction, recorded
in the `migrations` table. Never edit one that has shipped; add the next."""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlean as sqlite

import memory.store.pg as pg
from memory.store.db import Connection, Transactions
from memory.store.records import content_hash


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
    run_script(
        conn,
        """
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
    """,
    )


def _m002_injections(conn: Connection) -> None:
    run_script(
        conn,
        """
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
    """,
    )


def _m003_maintenance(conn: Connection) -> None:
    run_script(
        conn,
        """
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
    """,
    )


def _m004_purges(conn: Connection) -> None:
    run_script(
        conn,
        """
    -- Every memory row deleted for good, by any path (a trigger, so none is missed): processes
    -- that keep an in-memory copy of the indexes (memory.textindex) drop what was purged.
    CREATE TABLE purges (id INTEGER PRIMARY KEY, memory_id INTEGER NOT NULL, at REAL NOT NULL);
    CREATE TRIGGER memories_purged AFTER DELETE ON memories BEGIN
        INSERT INTO purges (memory_id, at) VALUES (old.id, unixepoch('subsec'));
    END;
    """,
    )


def _m005_chunk_spans(conn: Connection) -> None:
    run_script(
        conn,
        """
    -- Where each chunk of a long memory sits in its parent's text (character offsets, end
    -- exclusive), so a result can show the part that matched and say where it is. NULL for a
    -- chunk written before this release, or by hand: `maintain` and `reindex` chunk those parents
    -- again by the current rule (memory.store.chunks).
    ALTER TABLE memories ADD COLUMN chunk_start INTEGER;
    ALTER TABLE memories ADD COLUMN chunk_end INTEGER;
    """,
    )


def _m006_fts_secure_delete(conn: Connection) -> None:
    # A contentless FTS5 delete leaves the row's tokens in their segment (a tombstone) until the
    # segment is merged: the text of a memory deleted for good would stay in the file meanwhile.
    # secure-delete (SQLite 3.44+) removes them at once; it is stored in memory_fts_config.
    # PostgreSQL's keyword index is an ordinary table: a deleted row's tokens go with it.
    if getattr(conn, "backend", "sqlite") == "sqlite":
        conn.execute("INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1)")


def _m007_delivery_prompts(conn: Connection) -> None:
    run_script(
        conn,
        """
    -- The prompt a delivery (kind surface) answered, as a short redacted excerpt written with the
    -- delivery (Store.record_activation), so a person sees what the model was asked while the
    -- session runs. NULL for every other access and for rows written before this release.
    ALTER TABLE access_log ADD COLUMN prompt TEXT;
    """,
    )


def _m008_memory_id_high(conn: Connection) -> None:
    # SQLite hands a deleted newest rowid to the next insert; a memory id names one memory for
    # good (a user, a transcript or another process may still hold it), so the store inserts above
    # the highest id ever used (Store.NEXT_ID), which this trigger keeps in meta. PostgreSQL's
    # identity columns never reuse a value and need neither.
    if getattr(conn, "backend", "sqlite") != "sqlite":
        return
    run_script(
        conn,
        """
    -- Ids deleted before this release that purges still remembers (a new database: none).
    INSERT INTO meta (key, value) SELECT 'memory_id_high', high FROM (SELECT
        max(coalesce((SELECT max(id) FROM memories), 0), coalesce((SELECT max(memory_id) FROM purges), 0)) AS high)
        WHERE high > 0;
    CREATE TRIGGER memories_id_high AFTER DELETE ON memories BEGIN
        INSERT INTO meta (key, value) VALUES ('memory_id_high', old.id)
            ON CONFLICT (key) DO UPDATE SET value = max(CAST(value AS INTEGER), old.id);
    END;
    """,
    )


def _m009_memory_authors(conn: Connection) -> None:
    # Who wrote each memory: the configured `user` (else the OS user) on SQLite, the login role on
    # PostgreSQL (memory.store.pg.enable_row_security sets it in the database, whatever the client
    # sends). NULL for a memory written before this release.
    conn.execute("ALTER TABLE memories ADD COLUMN author TEXT")


def _m010_row_security(conn: Connection) -> None:
    # A team database keeps each user's global memories personal by row-level security
    # (memory.store.pg.enable_row_security). A local SQLite file has one user: nothing to do.
    if getattr(conn, "backend", "sqlite") != "postgresql":
        return
    pg.enable_row_security(conn)  # type: ignore[arg-type]


def _m011_version_editors(conn: Connection) -> None:
    # Who made each change: a version row is the text a change replaced, `editor` the user who
    # replaced it (config `user`, else the OS user, on SQLite; the login role on PostgreSQL, set by
    # the database as for authors). NULL for a change made before this release.
    conn.execute("ALTER TABLE memory_versions ADD COLUMN editor TEXT")
    if getattr(conn, "backend", "sqlite") == "postgresql":
        pg.record_editors(conn)  # type: ignore[arg-type]


def _m012_private_recalls(conn: Connection) -> None:
    # What a teammate's assistant was shown, and the prompt it answered, is that teammate's: on a
    # team database each role reads only its own access_log rows. A local file has one user.
    if getattr(conn, "backend", "sqlite") == "postgresql":
        pg.private_recalls(conn)  # type: ignore[arg-type]


def _m013_loose_time(conn: Connection) -> None:
    # Memories without a session (memory_store, add, an import without session ids) have as
    # neighbours the others stored within the hour in their scope, and a search counts how many
    # there are (retrieval.ranking._crowded_hours): read down this index alone, not the table
    # (a search on a 100k team database: 7 ms -> 2 ms). On PostgreSQL it carries what the row
    # policy and the neighbour query read, so the scan stays in the index.
    team = getattr(conn, "backend", "sqlite") == "postgresql"
    conn.execute(
        "CREATE INDEX memories_loose_time ON memories(scope, occurred_at)"
        + (" INCLUDE (id, author)" if team else "")
        + " WHERE session_id IS NULL AND parent_id IS NULL"
    )


def _m014_content_hashes(conn: Connection) -> None:
    # content_hash now leaves out the closing full stop, spaces before punctuation and full-width
    # forms (records.content_hash), so a restatement that differs only there is the memory already
    # stored, not a new one that "corrects" it: every row's hash is computed again. Rows this makes
    # equal stay apart (maintenance merges them: the same words). On a team database the migrating
    # owner sees only its own and the shared rows; a teammate's personal ones keep the old hash.
    last = 0
    while rows := conn.execute(
        "SELECT id, content, content_hash FROM memories WHERE id > ? ORDER BY id LIMIT 5000", (last,)
    ).fetchall():  # a batch at a time: a million memories never sit in memory at once
        changed = [(new, mid) for mid, content, old in rows if (new := content_hash(content)) != old]
        conn.executemany("UPDATE memories SET content_hash = ? WHERE id = ?", changed)
        last = rows[-1][0]


MIGRATIONS: list[tuple[str, Callable[[Connection], None]]] = [
    ("001_initial", _m001_initial),
    ("002_injections", _m002_injections),
    ("003_maintenance", _m003_maintenance),
    ("004_purges", _m004_purges),
    ("005_chunk_spans", _m005_chunk_spans),
    ("006_fts_secure_delete", _m006_fts_secure_delete),
    ("007_delivery_prompts", _m007_delivery_prompts),
    ("008_memory_id_high", _m008_memory_id_high),
    ("009_memory_authors", _m009_memory_authors),
    ("010_row_security", _m010_row_security),
    ("011_version_editors", _m011_version_editors),
    ("012_private_recalls", _m012_private_recalls),
    ("013_loose_time", _m013_loose_time),
    ("014_content_hashes", _m014_content_hashes),
]


def migrate(conn: Connection, tx: Transactions) -> list[str]:
    """Bring the schema up to date; return the names of the migrations applied."""
    team = getattr(conn, "backend", "sqlite") == "postgresql"
    # On a team database only the owner of MAPLE's tables migrates (pg.require_owner): PostgreSQL
    # checks the right to create even for CREATE TABLE IF NOT EXISTS on a table that exists.
    create = (
        "CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
    )
    if not team:
        conn.execute(create)
    elif not conn.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()[0]:
        pg.require_owner(conn, "001_initial")  # type: ignore[arg-type]
        # Under the writers' lock: processes opening an empty database at once would otherwise race
        # to create it (IF NOT EXISTS is no guard in PostgreSQL: the loser fails on pg_type's key).
        with tx.atomic():
            if not conn.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()[0]:
                conn.execute(create)
    applied = []
    for number, (name, step) in enumerate(MIGRATIONS, 1):
        if conn.execute("SELECT 1 FROM migrations WHERE id = ?", (number,)).fetchone():
            continue
        if team:
            pg.require_owner(conn, name)  # type: ignore[arg-type]
        with tx.atomic():
            # Another process may have applied it while we waited for the write lock.
            if conn.execute("SELECT 1 FROM migrations WHERE id = ?", (number,)).fetchone():
                continue
            step(conn)
            conn.execute("INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)", (number, name, time.time()))
        applied.append(name)
    return applied
