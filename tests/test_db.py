"""memory.db: the one connect(), its pragmas and extensions, migrations and transactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.errors import StoreUnavailable
from memory.store import db, schema


@pytest.fixture
def conn(tmp_path: Path):
    c = db.connect(tmp_path / "test.db", busy_timeout_ms=4321)
    yield c
    c.close()


@pytest.fixture
def migrated(conn):
    tx = db.Transactions(conn)
    schema.migrate(conn, tx)
    return conn, tx


def pragma(conn, name: str):
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def meta_keys(conn) -> list[str]:
    return [r[0] for r in conn.execute("SELECT key FROM meta ORDER BY key")]


# -- connect -------------------------------------------------------------------------------------


def test_connect_turns_on_write_ahead_logging(conn):
    assert pragma(conn, "journal_mode") == "wal"


def test_connect_sets_the_busy_timeout_it_is_given(conn):
    assert pragma(conn, "busy_timeout") == 4321


def test_connect_enforces_foreign_keys(conn):
    assert pragma(conn, "foreign_keys") == 1


def test_connect_sets_synchronous_normal(conn):
    assert pragma(conn, "synchronous") == 1  # 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA


def test_connect_loads_sqlite_vec(conn):
    assert conn.execute("SELECT vec_version()").fetchone()[0].startswith("v")


def test_connect_without_vectors_does_not_load_sqlite_vec(tmp_path):
    c = db.connect(tmp_path / "plain.db", vectors=False)
    with pytest.raises(db.OperationalError, match="vec_version"):
        c.execute("SELECT vec_version()")
    c.close()


def test_connect_has_fts5_with_contentless_delete(conn):
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1)")
    conn.execute("INSERT INTO t (rowid, body) VALUES (1, 'hello world')")
    conn.execute("DELETE FROM t WHERE rowid = 1")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH 'hello'").fetchone()[0] == 0


def test_a_readonly_connection_refuses_writes(tmp_path, conn):
    conn.execute("CREATE TABLE x (a)")
    ro = db.connect(tmp_path / "test.db", readonly=True)
    with pytest.raises(db.OperationalError, match="readonly"):
        ro.execute("INSERT INTO x VALUES (1)")
    ro.close()


def test_connect_to_a_folder_that_does_not_exist_raises_store_unavailable_naming_the_fix(tmp_path):
    with pytest.raises(StoreUnavailable, match="MAPLE_HOME"):
        db.connect(tmp_path / "missing" / "test.db")


def test_describe_explains_a_full_disk_a_lock_and_corruption():
    assert "full" in db.describe(Exception("database or disk is full"), "x.db")
    assert "locked" in db.describe(Exception("database is locked"), "x.db")
    assert "maple-memory backup --restore" in db.describe(Exception("file is not a database"), "x.db")


def test_opening_a_file_that_is_not_a_database_raises_store_unavailable(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite at all, just some bytes" * 100)
    with pytest.raises(StoreUnavailable, match="corrupt"):
        db.connect(bad)


# -- migrations ----------------------------------------------------------------------------------


def test_migrate_applies_every_migration_and_records_it(conn):
    tx = db.Transactions(conn)
    applied = schema.migrate(conn, tx)
    assert applied == [name for name, _ in schema.MIGRATIONS]
    rows = conn.execute("SELECT id, name FROM migrations ORDER BY id").fetchall()
    assert rows == [(i, name) for i, (name, _) in enumerate(schema.MIGRATIONS, 1)]
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"memories", "memory_fts", "entities", "memory_entities", "memory_versions", "meta"} <= tables


def test_running_migrations_again_applies_nothing(migrated, tmp_path):
    conn, tx = migrated
    assert schema.migrate(conn, tx) == []
    other = db.connect(tmp_path / "test.db")  # a second process opening the same file
    assert schema.migrate(other, db.Transactions(other)) == []
    other.close()
    assert conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(schema.MIGRATIONS)


def test_run_script_refuses_an_unfinished_statement(conn):
    with pytest.raises(ValueError, match="incomplete"):
        schema.run_script(conn, "CREATE TABLE a (x);\nCREATE TABLE b (y")


# -- transactions --------------------------------------------------------------------------------


def test_atomic_commits_on_success(migrated):
    conn, tx = migrated
    with tx.atomic():
        conn.execute("INSERT INTO meta VALUES ('a', '1')")
        conn.execute("INSERT INTO meta VALUES ('b', '2')")
    assert meta_keys(conn) == ["a", "b"]
    assert not conn.in_transaction


def test_atomic_rolls_back_everything_on_error(migrated):
    conn, tx = migrated
    with pytest.raises(RuntimeError):
        with tx.atomic():
            conn.execute("INSERT INTO meta VALUES ('a', '1')")
            conn.execute("INSERT INTO meta VALUES ('b', '2')")
            raise RuntimeError("boom")
    assert meta_keys(conn) == []
    assert not conn.in_transaction
    assert tx.depth == 0


def test_atomic_rolls_back_on_a_database_error_and_stays_usable(migrated):
    conn, tx = migrated
    with pytest.raises(db.IntegrityError):
        with tx.atomic():
            conn.execute("INSERT INTO meta VALUES ('a', '1')")
            conn.execute("INSERT INTO meta VALUES ('a', '2')")  # primary key clash
    assert meta_keys(conn) == []
    with tx.atomic():
        conn.execute("INSERT INTO meta VALUES ('c', '3')")
    assert meta_keys(conn) == ["c"]


def test_a_failing_nested_block_rolls_back_only_its_own_writes(migrated):
    conn, tx = migrated
    with tx.atomic():
        conn.execute("INSERT INTO meta VALUES ('outer-before', '1')")
        with pytest.raises(RuntimeError):
            with tx.atomic():
                conn.execute("INSERT INTO meta VALUES ('inner', '2')")
                raise RuntimeError("inner fails")
        conn.execute("INSERT INTO meta VALUES ('outer-after', '3')")
    assert meta_keys(conn) == ["outer-after", "outer-before"]
    assert not conn.in_transaction


def test_an_outer_failure_also_undoes_a_nested_block_that_succeeded(migrated):
    conn, tx = migrated
    with pytest.raises(RuntimeError):
        with tx.atomic():
            with tx.atomic():
                conn.execute("INSERT INTO meta VALUES ('inner', '1')")
            raise RuntimeError("outer fails")
    assert meta_keys(conn) == []


def test_three_levels_of_nesting_roll_back_only_the_innermost(migrated):
    conn, tx = migrated
    with tx.atomic():
        conn.execute("INSERT INTO meta VALUES ('one', '1')")
        with tx.atomic():
            conn.execute("INSERT INTO meta VALUES ('two', '2')")
            with pytest.raises(RuntimeError):
                with tx.atomic():
                    conn.execute("INSERT INTO meta VALUES ('three', '3')")
                    raise RuntimeError
    assert meta_keys(conn) == ["one", "two"]


def test_atomic_takes_the_write_lock_before_the_first_write(migrated, tmp_path):
    # BEGIN IMMEDIATE: a second writer is refused while we merely hold the transaction open,
    # so two writers queue instead of deadlocking on a read-to-write upgrade.
    conn, tx = migrated
    other = db.connect(tmp_path / "test.db", busy_timeout_ms=1)
    with tx.atomic():
        with pytest.raises(db.OperationalError, match="locked"):
            other.execute("INSERT INTO meta VALUES ('x', '1')")
    other.execute("INSERT INTO meta VALUES ('x', '1')")
    other.close()
    assert meta_keys(conn) == ["x"]
