"""memory.store: writes are validated, redacted and atomic; reads give back what was written.

Real SQLite files in tmp_path, HashEmbedder injected, a fixed clock.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder, to_blob
from memory.errors import EmbeddingMismatch, InvalidInput, NotFound, StoreUnavailable, already_superseded
from memory.retrieval import ranking as retrieval
from memory.store import Memory, NewMemory, Store, browse, indexes

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL (tests/conftest.py)

REPO = Path(__file__).resolve().parents[1]
T0 = 1_750_000_000.0  # 2025-06-15T15:06:40Z


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def make_config(tmp_path: Path, **overrides: Any) -> config_mod.Config:
    return config_mod.load(home=tmp_path / "home", env={}, **overrides)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock):
    s = Store.open(make_config(tmp_path, max_content_chars=1000), HashEmbedder(64), clock=clock)
    yield s
    s.close()


def rows(store: Store, sql: str, *args: Any) -> list[tuple]:
    return store.conn.execute(sql, args).fetchall()


def counts(store: Store) -> dict[str, int]:
    """Row counts of every table a memory write touches."""
    tables = ["memories", "memory_fts", "memory_entities", "entities", "memory_versions"]
    if store.has_vectors:
        tables.append("memory_vec")
    return {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def fts_ids(store: Store, word: str) -> list[int]:
    return indexes.matching_ids(store, f'"{word}"')


def stored_vector(store: Store, memory_id: int) -> bytes:
    """A memory's stored vector as little-endian float32 bytes (vec0 gives a blob, pgvector a Vector)."""
    value = rows(store, "SELECT embedding FROM memory_vec WHERE rowid = ?", memory_id)[0][0]
    return value if isinstance(value, bytes) else to_blob(value.to_list())


def vec_ids(store: Store) -> list[int]:
    return [r[0] for r in rows(store, "SELECT rowid FROM memory_vec ORDER BY rowid")]


def search_ids(store: Store, query: str, scopes: Sequence[str] = ("global",)) -> list[int]:
    q = retrieval.make_query(query, list(scopes))
    return [r.memory.id for r in retrieval.search(store, q, record=False)]


# -- round trip ----------------------------------------------------------------------------------


def test_every_field_written_by_add_is_read_back_by_get(store, clock):
    parent = store.add(NewMemory("Parent document about the build pipeline", scope="/proj/a"))
    clock.now = T0 + 60
    item = NewMemory(
        content="Use uv for installs; pip is too slow on CI",
        layer="decision",
        category="tooling",
        subject="package manager",
        scope="/proj/a",
        importance=5,
        confidence=0.8,
        valence=-0.5,
        intensity=0.7,
        moods=["Frustrated", "calm"],
        tags=["CI", "speed"],
        pinned=True,
        source="hook",
        source_ref="transcript.jsonl:12",
        session_id="sess-1",
        occurred_at="2025-03-14T09:30:00Z",
        valid_from="2025-03-01",
        valid_to="2026-01-01T00:00:00+01:00",
        parent_id=parent.id,
        chunk_index=2,
        metadata={"origin": {"tool": "Bash", "args": [1, 2.5, None, True, "x"]}},
        entities=[("uv", "tool"), ("pip", "tool")],
    )

    added = store.add(item)
    got = store.get(added.id)

    assert got == added
    assert isinstance(got, Memory)
    assert (got.content, got.layer, got.category, got.subject, got.scope) == (
        "Use uv for installs; pip is too slow on CI",
        "decision",
        "tooling",
        "package manager",
        "/proj/a",
    )
    assert (got.importance, got.confidence, got.valence, got.intensity) == (5, 0.8, -0.5, 0.7)
    assert got.moods == ["frustrated", "calm"]
    assert got.tags == ["ci", "speed"]
    assert got.pinned is True
    assert (got.source, got.source_ref, got.session_id) == ("hook", "transcript.jsonl:12", "sess-1")
    assert (got.parent_id, got.chunk_index) == (parent.id, 2)
    assert got.metadata == {"origin": {"tool": "Bash", "args": [1, 2.5, None, True, "x"]}}
    assert got.created_at == got.updated_at == T0 + 60
    assert (got.last_activated_at, got.activation_count, got.superseded_by, got.deleted_at) == (None, 0, None, None)
    d = got.to_dict()
    assert d["occurred_at"] == "2025-03-14T09:30:00Z"
    assert d["valid_from"] == "2025-03-01T00:00:00Z"
    assert d["valid_to"] == "2025-12-31T23:00:00Z"
    assert d["created_at"] == "2025-06-15T15:07:40Z"
    linked = rows(
        store,
        "SELECT e.name, e.kind, e.scope FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
        "WHERE l.memory_id = ? ORDER BY e.name",
        added.id,
    )
    assert linked == [("pip", "tool", "/proj/a"), ("uv", "tool", "/proj/a")]
    assert fts_ids(store, "uv") == [added.id]
    assert fts_ids(store, "speed") == [added.id]  # tags are indexed with the content
    assert vec_ids(store) == [parent.id, added.id]


def test_defaults_fill_the_fields_a_caller_leaves_out(store):
    m = store.add(NewMemory("Tabs, not spaces, in the Makefile"))
    assert (m.layer, m.category, m.scope, m.importance, m.confidence, m.source) == (
        "fact",
        "general",
        "global",
        3,
        1.0,
        "manual",
    )
    assert m.occurred_at == T0  # occurred_at defaults to now
    assert (m.tags, m.moods, m.metadata, m.pinned) == ([], [], {}, False)


def test_get_many_keeps_the_order_asked_and_skips_missing_ids(store):
    a = store.add(NewMemory("alpha fact"))
    b = store.add(NewMemory("beta fact"))
    assert [m.id for m in store.get_many([b.id, 999, a.id])] == [b.id, a.id]


def test_get_of_an_unknown_id_raises_not_found_and_a_bad_id_raises_invalid_input(store):
    with pytest.raises(NotFound, match="no memory 42"):
        store.get(42)
    with pytest.raises(InvalidInput):
        store.get("42")  # type: ignore[arg-type]


# -- duplicates ----------------------------------------------------------------------------------


def test_whitespace_and_case_variants_in_one_scope_are_the_same_memory(store):
    first = store.add(NewMemory("Run the tests with  pytest -x", scope="/proj/a"))
    again = store.add(NewMemory("  run THE tests\nwith pytest   -X ", scope="/proj/a"))
    assert again.id == first.id
    assert again.content == "Run the tests with  pytest -x"  # the first wording is kept
    assert counts(store)["memories"] == counts(store)["memory_fts"] == 1


def test_the_same_text_in_another_scope_is_a_separate_memory(store):
    a = store.add(NewMemory("Run the tests with pytest -x", scope="/proj/a"))
    b = store.add(NewMemory("Run the tests with pytest -x", scope="/proj/b"))
    assert a.id != b.id
    assert (a.scope, b.scope) == ("/proj/a", "/proj/b")


def test_each_memory_of_a_batch_gets_its_own_vector_and_fts_row(store):
    texts = ["alpha uses postgres", "beta uses redis", "ALPHA uses  postgres", "gamma uses kafka"]
    ms = store.add_many([NewMemory(t) for t in texts])
    assert ms[0].id == ms[2].id  # the duplicate in the middle adds no rows
    assert len({m.id for m in ms}) == 3
    embedder = HashEmbedder(64)
    for m in (ms[0], ms[1], ms[3]):
        assert stored_vector(store, m.id) == to_blob(embedder.embed_query(m.content)), m.content
    assert (fts_ids(store, "postgres"), fts_ids(store, "redis"), fts_ids(store, "kafka")) == (
        [ms[0].id],
        [ms[1].id],
        [ms[3].id],
    )
    assert store.integrity()["ok"]


def test_duplicates_inside_one_batch_collapse_to_one_memory(store):
    ms = store.add_many([NewMemory("Deploy on Fridays is banned"), NewMemory("deploy on fridays is BANNED")])
    assert ms[0].id == ms[1].id
    assert counts(store)["memories"] == 1


def test_add_many_returns_exactly_what_reading_the_memories_back_gives(tmp_path):
    # An int clock and loosely typed fields: what comes back must still be the stored values
    # (REAL columns as floats, session_id as text, parent_id and chunk_index as ints).
    s = Store.open(make_config(tmp_path), HashEmbedder(64), clock=lambda: 1_750_000_000)
    parent = s.add(NewMemory("Parent document about the build"))
    s.forget(s.add(NewMemory("An archived fact")).id)
    out = s.add_many(
        [
            NewMemory("I love how fast the new build is! 太好了"),  # emotion fills valence, intensity, moods
            NewMemory(
                "Plain fact",
                layer="decision",
                category="tooling",
                subject="pkg",
                scope="/p",
                importance=5,
                confidence=0.25,
                moods=["Calm"],
                tags=["CI", "b"],
                pinned=True,
                source="hook",
                source_ref="f.jsonl:1",
                session_id=7,
                occurred_at="2025-03-14",
                valid_from=1.5e9,
                valid_to="2026-01-01T00:00:00+01:00",
                parent_id=str(parent.id),
                chunk_index=2.0,
                metadata={"n": [1, 2.5, None, True], "s": "ü", "d": {"k": -0.0}},
            ),
            NewMemory("parent document about the BUILD"),  # already stored: the stored one comes back
            NewMemory("Parent document about the build", parent_id=parent.id),  # a chunk of it: new
            NewMemory("An archived fact"),  # archived ones are not duplicates
            NewMemory("plain  FACT", scope="/p", parent_id=parent.id),  # the second item, in the same batch
        ]
    )
    again = s.get_many([m.id for m in out])
    assert out == again
    assert [[type(v) for v in vars(m).values()] for m in out] == [[type(v) for v in vars(m).values()] for m in again]
    assert out[2].id == parent.id and out[5].id == out[1].id and len({m.id for m in out}) == 5
    assert (out[1].session_id, out[1].parent_id, out[1].chunk_index, out[1].created_at) == ("7", parent.id, 2, 1.75e9)
    s.close()


# -- atomicity -----------------------------------------------------------------------------------


class WrongDimOnSecond:
    """Looks like HashEmbedder(64) but returns a 32-dim vector for the second text of a batch."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(64)
        self.name, self.dim = self.inner.name, self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = self.inner.embed(texts)
        if len(out) > 1:
            out[1] = out[1][:32]
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_a_batch_that_fails_after_its_first_insert_leaves_no_rows_behind(tmp_path, clock):
    cfg = make_config(tmp_path)
    with Store.open(cfg, HashEmbedder(64), clock=clock) as s:
        kept = s.add(NewMemory("an earlier memory stays", entities=[("Earlier", "thing")]))
        before = counts(s)
    with Store.open(cfg, WrongDimOnSecond(), clock=clock) as s:
        batch = [
            NewMemory("zebrafish first item", entities=[("Zebrafish", "project")]),
            NewMemory("quokka second item", entities=[("Quokka", "project")]),
        ]
        with pytest.raises(EmbeddingMismatch):
            s.add_many(batch)
        # The first item's memory, FTS, vector, entity and link rows were written before the
        # second failed; the rollback must take them all.
        assert counts(s) == before
        assert fts_ids(s, "zebrafish") == []
        assert vec_ids(s) == [kept.id]
        assert rows(s, "SELECT name FROM entities ORDER BY name") == [("Earlier",)]
        assert s.integrity()["ok"]


def test_a_bad_entity_in_the_second_item_rolls_back_the_first(store):
    batch = [
        NewMemory("zebrafish tank notes", entities=[("Zebrafish", "thing")]),
        NewMemory("second item", entities=[("x" * 201, "thing")]),
    ]
    with pytest.raises(InvalidInput, match="entity name"):
        store.add_many(batch)
    assert counts(store) == {t: 0 for t in counts(store)}
    assert fts_ids(store, "zebrafish") == []


def test_one_invalid_item_in_a_batch_writes_nothing_of_the_batch(store):
    batch = [
        NewMemory("a perfectly good memory"),
        NewMemory("bad importance", importance=9),
        NewMemory("another good one"),
    ]
    with pytest.raises(InvalidInput, match="importance"):
        store.add_many(batch)
    assert counts(store) == {t: 0 for t in counts(store)}


# -- forget and restore --------------------------------------------------------------------------


def test_forget_archives_a_memory_out_of_get_list_and_search(store):
    m = store.add(NewMemory("The staging database is called orca"))
    other = store.add(NewMemory("The production database is called whale"))
    assert search_ids(store, "orca")[0] == m.id

    store.forget(m.id)

    with pytest.raises(NotFound, match="archived"):
        store.get(m.id)
    assert store.get(m.id, include_deleted=True).deleted_at == T0
    assert [x.id for x in store.list()] == [other.id]
    assert [x.id for x in store.list(only_deleted=True)] == [m.id]
    assert m.id not in search_ids(store, "orca")
    assert store.count() == 1
    assert fts_ids(store, "orca") == [m.id]  # archived, not purged: still restorable


def test_restore_brings_an_archived_memory_back_into_search(store):
    m = store.add(NewMemory("The staging database is called orca"))
    store.forget(m.id)
    restored = store.restore(m.id)
    assert restored.deleted_at is None
    assert search_ids(store, "orca")[0] == m.id
    assert [x.id for x in store.list()] == [m.id]


def test_forget_permanent_removes_the_memory_its_fts_vector_and_links(store):
    keep = store.add(NewMemory("Unrelated memory about lint", entities=[("ruff", "tool")]))
    m = store.add(NewMemory("The staging database is called orca", entities=[("orca", "database")]))
    chunk = store.add(NewMemory("orca chunk two", parent_id=m.id, chunk_index=1, entities=[("orca", "database")]))
    assert vec_ids(store) == [keep.id, m.id, chunk.id]

    store.forget(m.id, permanent=True)

    for mid in (m.id, chunk.id):
        with pytest.raises(NotFound):
            store.get(mid, include_deleted=True)
    assert fts_ids(store, "orca") == []
    assert vec_ids(store) == [keep.id]
    assert rows(store, "SELECT memory_id FROM memory_entities") == [(keep.id,)]
    assert counts(store)["memory_fts"] == 1
    assert store.integrity()["ok"]


def test_ids_are_never_reused_after_the_newest_memories_are_deleted_for_good(store):
    store.add(NewMemory("The first memory stays"))
    gone = [store.add(NewMemory(f"Memory number {n} goes for good")).id for n in range(3)]
    for mid in reversed(gone):
        store.forget(mid, permanent=True)
    later = [m.id for m in store.add_many([NewMemory("A later memory"), NewMemory("And another after it")])]
    assert min(later) > max(gone) and later[1] > later[0]


def test_forget_of_an_unknown_id_raises_not_found(store):
    with pytest.raises(NotFound):
        store.forget(12345)


# -- update --------------------------------------------------------------------------------------


def test_update_keeps_the_old_version_and_reindexes_words_and_vector(store, clock):
    m = store.add(NewMemory("The cache lives in redis", tags=["infra"]))
    clock.now = T0 + 100

    new = store.update(m.id, content="The cache lives in memcached", reason="correction")

    assert new.content == "The cache lives in memcached"
    assert new.updated_at == T0 + 100 and new.created_at == T0
    versions = rows(store, "SELECT content, reason, changed_at FROM memory_versions WHERE memory_id = ?", m.id)
    assert versions == [("The cache lives in redis", "correction", T0 + 100)]
    assert fts_ids(store, "redis") == []
    assert fts_ids(store, "memcached") == [m.id]
    assert fts_ids(store, "infra") == [m.id]  # unchanged tags stay indexed
    assert stored_vector(store, m.id) == to_blob(HashEmbedder(64).embed_query("The cache lives in memcached"))
    assert search_ids(store, "memcached")[0] == m.id
    assert store.integrity()["ok"]


def test_update_of_fields_other_than_content_keeps_the_vector(store):
    m = store.add(NewMemory("The cache lives in redis"))
    before = rows(store, "SELECT embedding FROM memory_vec WHERE rowid = ?", m.id)
    new = store.update(m.id, importance=5, tags=["infra"])
    assert (new.importance, new.tags) == (5, ["infra"])
    assert rows(store, "SELECT embedding FROM memory_vec WHERE rowid = ?", m.id) == before
    assert fts_ids(store, "infra") == [m.id]


def test_update_validates_like_add_and_changes_nothing_on_bad_input(store):
    m = store.add(NewMemory("The cache lives in redis"))
    with pytest.raises(InvalidInput, match="importance"):
        store.update(m.id, importance="high")
    with pytest.raises(InvalidInput, match="cannot update"):
        store.update(m.id, created_at=0)
    assert store.get(m.id) == m
    assert counts(store)["memory_versions"] == 0


# -- bad input -----------------------------------------------------------------------------------


def nested(depth: int) -> dict:
    d: dict = {"leaf": 1}
    for _ in range(depth):
        d = {"k": d}
    return d


BAD_INPUT = [
    pytest.param(dict(content=""), "empty", id="empty content"),
    pytest.param(dict(content=" \n\t  "), "empty", id="whitespace content"),
    pytest.param(dict(content=123), "string", id="content not a string"),
    pytest.param(dict(importance="high"), "importance", id="importance high"),
    pytest.param(dict(importance=0), "importance", id="importance out of range"),
    pytest.param(dict(importance=True), "importance", id="importance a bool"),
    pytest.param(dict(confidence=1.5), "confidence", id="confidence out of range"),
    pytest.param(dict(layer="opinion"), "layer", id="unknown layer"),
    pytest.param(dict(source="web"), "source", id="unknown source"),
    pytest.param(dict(tags="ci,speed"), "tags", id="tags not a list"),
    pytest.param(dict(tags=["ok", 3]), "tags", id="tags not strings"),
    pytest.param(dict(metadata=["not", "an", "object"]), "metadata", id="metadata not an object"),
    pytest.param(dict(metadata=nested(20)), "deeper", id="metadata nested too deep"),
    pytest.param(dict(metadata={"x": float("nan")}), "finite", id="metadata nan"),
    pytest.param(dict(occurred_at="next tuesday"), "ISO 8601", id="occurred_at not a date"),
    pytest.param(dict(valid_to="2025-13-45"), "ISO 8601", id="valid_to impossible date"),
    pytest.param(dict(valid_from=["2025"]), "ISO 8601", id="valid_from not a string"),
    pytest.param(dict(category=["tooling"]), "category", id="category not a string"),
    pytest.param(dict(category="c" * 65), "category", id="category too long"),
]


@pytest.mark.parametrize("fields, message", BAD_INPUT)
def test_bad_input_raises_invalid_input_and_writes_nothing(store, fields, message):
    item = NewMemory(**{"content": "a valid memory", **fields})
    with pytest.raises(InvalidInput, match=message):
        store.add(item)
    assert counts(store) == {t: 0 for t in counts(store)}


def test_oversized_content_names_the_limit_and_the_setting(store):
    with pytest.raises(InvalidInput) as err:
        store.add(NewMemory("x" * 1001))
    assert "1000" in str(err.value) and "max_content_chars" in str(err.value)
    assert counts(store)["memories"] == 0
    assert store.add(NewMemory("y" * 1000)).content == "y" * 1000  # the limit itself is allowed


def test_moderately_nested_metadata_is_accepted(store):
    assert store.add(NewMemory("nested ok", metadata=nested(3))).metadata == nested(3)


# -- embedding model checks ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "embedder", [HashEmbedder(32), HashEmbedder(64, name="another-model")], ids=["other dimension", "other model name"]
)
def test_opening_with_another_embedder_raises_embedding_mismatch_naming_reindex(tmp_path, embedder):
    cfg = make_config(tmp_path)
    with Store.open(cfg, HashEmbedder(64)) as s:
        s.add(NewMemory("vectors are recorded with the first write"))
    with pytest.raises(EmbeddingMismatch, match="maple-memory reindex"):
        Store.open(cfg, embedder)
    with Store.open(cfg, HashEmbedder(64)) as s:  # the right model still opens it
        assert s.count() == 1
    with Store.open(cfg, None) as s:  # and so does a keyword-only reader
        assert s.count() == 1


def test_the_database_records_the_model_and_dimension(store):
    store.add(NewMemory("first write records the vectors' origin"))
    assert dict(rows(store, "SELECT key, value FROM meta WHERE key LIKE 'embedding_%'")) == {
        "embedding_model": "hash-64",
        "embedding_dim": "64",
    }


# -- the home folder -----------------------------------------------------------------------------


def test_a_missing_home_is_created_private_with_a_private_database(tmp_path):
    home = tmp_path / "deep" / "er" / "home"
    cfg = config_mod.load(home=home, env={})
    with Store.open(cfg, HashEmbedder(64)) as s:
        s.add(NewMemory("makes the WAL file exist"))
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        for name in ("memory.db", "memory.db-wal", "memory.db-shm"):
            path = home / name
            if path.exists():
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
        assert (home / "memory.db").exists()


@pytest.mark.sqlite_only
def test_an_existing_home_and_database_with_loose_permissions_are_made_private(tmp_path):
    cfg = make_config(tmp_path)
    Store.open(cfg, HashEmbedder(64)).close()
    cfg.home.chmod(0o755)
    cfg.db_path.chmod(0o644)
    Store.open(cfg, HashEmbedder(64)).close()
    assert stat.S_IMODE(cfg.home.stat().st_mode) == 0o700
    assert stat.S_IMODE(cfg.db_path.stat().st_mode) == 0o600


def test_a_home_that_cannot_be_created_raises_store_unavailable_with_a_clear_message(tmp_path):
    if os.geteuid() == 0:
        # root ignores permission bits: make the home's parent a regular file instead.
        (tmp_path / "afile").write_text("not a folder")
        home = tmp_path / "afile" / "x"
    else:
        parent = tmp_path / "locked"
        parent.mkdir()
        parent.chmod(0o500)
        home = parent / "x"
    try:
        with pytest.raises(StoreUnavailable) as err:
            Store.open(config_mod.load(home=home, env={}), HashEmbedder(64))
    finally:
        if os.geteuid() != 0:
            (tmp_path / "locked").chmod(0o700)
    assert str(home) in str(err.value)
    assert "MAPLE_HOME" in str(err.value)


# -- privacy -------------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_secrets_are_redacted_before_they_reach_the_database_file(tmp_path):
    secret = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    github = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    home = tmp_path / "home"
    s = Store.open(config_mod.load(home=home, env={}), HashEmbedder(64))
    m = s.add(
        NewMemory(f"my key is {secret}", subject=f"token {github}", metadata={"note": f"use {github} for the API"})
    )
    assert secret not in m.content and "[REDACTED:openai-key]" in m.content
    assert github not in m.subject and github not in str(m.metadata)

    def raw_bytes() -> bytes:
        return b"".join(p.read_bytes() for p in home.iterdir() if p.name.startswith("memory.db"))

    assert b"Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" not in raw_bytes()  # database and WAL while open
    assert b"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" not in raw_bytes()
    assert b"my key is" in raw_bytes()  # the check can see content at all
    s.close()
    assert b"Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" not in raw_bytes()  # after the checkpoint on close


# -- Chinese -------------------------------------------------------------------------------------


@pytest.fixture
def zh_store(tmp_path: Path):
    """A keyword-only store (no embedder), so search results come from the FTS index alone."""
    s = Store.open(make_config(tmp_path), None)
    ids = {
        "meeting": s.add(NewMemory("用户喜欢早上开会，下午写代码")).id,
        "allergy": s.add(NewMemory("小王对花生过敏")).id,
        "pytest": s.add(NewMemory("用pytest跑测试")).id,
        "english": s.add(NewMemory("The meeting notes live in docs/meetings")).id,
    }
    yield s, ids
    s.close()


@pytest.mark.parametrize("query, key", [("开会", "meeting"), ("过敏", "allergy")])
def test_a_two_character_chinese_word_finds_the_memory_that_contains_it(zh_store, query, key):
    s, ids = zh_store
    found = search_ids(s, query)
    # 开会 is "meeting" in the glossary (memory.lang.glossary), so the English note about meetings is
    # found too, by its words; nothing else is, and no other Chinese memory.
    translated = [ids["english"]] if key == "meeting" else []
    assert sorted(found) == sorted([ids[key], *translated])


@pytest.mark.parametrize("query", ["pytest", "测试", "怎么跑测试"])
def test_mixed_chinese_and_english_text_is_found_by_either_language(zh_store, query):
    s, ids = zh_store
    assert search_ids(s, query) == [ids["pytest"]]


def test_a_process_that_never_imports_jieba_still_finds_a_chinese_word(tmp_path):
    # Like the command hook: no embedder, vec0 not loaded, segmentation off.
    cfg = make_config(tmp_path)
    with Store.open(cfg, HashEmbedder(64)) as s:
        meeting = s.add(NewMemory("用户喜欢早上开会，下午写代码")).id
        s.add(NewMemory("小王对花生过敏"))
    script = textwrap.dedent(f"""
        import sys
        from memory import config
        from memory.retrieval import ranking as retrieval
        from memory.store import Store
        s = Store.open(config.load(home={str(cfg.home)!r}, env={{}}), None, vectors=False)
        results = retrieval.search(s, retrieval.make_query("开会", ["global"]), segment=False)
        print([(r.memory.id, "bm25" in r.channels) for r in results])
        assert "jieba" not in sys.modules, "jieba was imported"
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"[({meeting}, True)]"


def test_recording_a_recall_skips_a_memory_purged_since_it_was_found(store):
    kept, gone = (store.add(NewMemory(t)).id for t in ("The staging database is on port 6543", "Deploys run at noon"))
    store.forget(gone, permanent=True)  # by another process, between a search and its bookkeeping
    store.record_activation([kept, gone], "search")
    assert store.conn.execute("SELECT memory_id FROM access_log").fetchall() == [(kept,)]
    assert store.get(kept).activation_count == 1


def test_a_factual_edit_keeps_the_emotion_and_a_feeling_set_by_hand_survives_a_rewording(store):
    fact = store.add(NewMemory("Bob Li prefers squash merges on ledger-api"))
    edited = store.update(
        fact.id,
        content="Bob Li prefers rebase merges on ledger-api, not squash; 李波更喜欢 rebase (greatly simplifies bisect)",
    )
    assert (edited.valence, edited.intensity, edited.moods) == (0.0, 0.0, [])
    set_by_hand = store.add(NewMemory("The release went out", moods=["pride"], valence=0.7, intensity=0.6))
    reworded = store.update(set_by_hand.id, content="The release went out on Friday, I was so happy")
    assert (reworded.valence, reworded.intensity, reworded.moods) == (0.7, 0.6, ["pride"])


def test_an_emotion_read_from_the_text_is_read_again_from_the_edited_text(store):
    felt = store.add(NewMemory("I am so frustrated that the deploy keeps failing"))
    assert "frustration" in felt.moods
    calm = store.update(felt.id, content="The deploy fails when the cache is cold")
    assert (calm.valence, calm.intensity, calm.moods) == (0.0, 0.0, [])
    chosen = store.update(felt.id, content="The deploy fails when the cache is cold", moods=["stress"], valence=-0.5)
    assert chosen.moods == ["stress"] and chosen.valence == -0.5


# -- two writers changing one memory at once ------------------------------------------------------


def _at_once(config: Any, embedder: Any, calls: Sequence[Any]) -> list[Any]:
    """Run each call with its own Store (its own connection, as two teammates' processes) in its
    own thread, released together; each call's result or the error it raised."""
    import threading

    from memory.app.memories import Memories

    barrier = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        s = Store.open(config, embedder)
        try:
            app = Memories(s, "/p/team")
            barrier.wait()
            out[i] = calls[i](app)
        except Exception as e:  # the refusal under test
            out[i] = e
        finally:
            s.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return out


def test_two_teammates_superseding_one_memory_at_once_one_wins_the_other_is_refused(config, embedder):
    """A blind trial: two processes superseding memory 4 at once both won (two current successors,
    4 pointing at one, history never naming the other). The check that 4 is still current now
    happens inside the write, so the second is refused as it is when they take turns."""
    from memory.app.memories import Memories

    for round_ in range(6):
        with Store.open(config, embedder) as s:
            old = Memories(s, "/p/team").add(f"Standup meets daily, round {round_}")["memory"]["id"]
        texts = [f"Standup meets on Tuesdays only, round {round_}", f"Standup meets after 15:00, round {round_}"]
        got = _at_once(
            config, embedder, [lambda app, t=t, old=old: app.update(old, content=t, mode="supersede") for t in texts]
        )
        won = [r for r in got if isinstance(r, dict)]
        refused = [r for r in got if isinstance(r, Exception)]
        assert len(won) == 1 and len(refused) == 1, (round_, got)
        new = won[0]["memory"]["id"]
        assert isinstance(refused[0], InvalidInput)
        # the same words whichever check refused it, before the write or inside it
        assert str(refused[0]) == str(already_superseded(old, new))
        with Store.open(config, embedder) as s:
            app = Memories(s, "/p/team")
            assert s.get(old, include_deleted=True).superseded_by == new
            assert app.history(old)["current"] == [new]  # exactly one current successor
            current = [m for m in s.list() if "Standup" in m.content and f"round {round_}" in m.content]
            assert [m.id for m in current if m.superseded_by is None] == [new], current
            assert {m.content for m in current} <= {f"Standup meets daily, round {round_}", *texts}


def test_two_concurrent_edits_of_one_memory_keep_both_versions(config, embedder):
    """Two edits in place at once: both read the memory before either writes. The second write
    finds it changed and starts over from it, so every wording is in the history, none lost."""
    from memory.app.memories import Memories

    for round_ in range(6):
        with Store.open(config, embedder) as s:
            mid = Memories(s, "/p/team").add(f"The build takes ten minutes, round {round_}")["memory"]["id"]
        texts = [f"The build takes twelve minutes, round {round_}", f"The build takes eight minutes, round {round_}"]
        got = _at_once(config, embedder, [lambda app, t=t, mid=mid: app.update(mid, content=t) for t in texts])
        assert all(isinstance(r, dict) and r["action"] == "edited" for r in got), got
        with Store.open(config, embedder) as s:
            now = s.get(mid).content
            (entry,) = Memories(s, "/p/team").history(mid)["entries"]
            seen = [v["content"] for v in entry["versions"]] + [now]
            assert seen[0] == f"The build takes ten minutes, round {round_}"
            assert sorted(seen[1:]) == sorted(texts), seen  # both edits, the last one current


def test_two_concurrent_forgets_archive_once(config, embedder):
    from memory.app.memories import Memories

    for round_ in range(4):
        with Store.open(config, embedder) as s:
            mid = Memories(s, "/p/team").add(f"The old wiki is read-only, round {round_}")["memory"]["id"]
        got = _at_once(config, embedder, [lambda app, mid=mid: app.forget(mid)] * 2)
        with Store.open(config, embedder) as s:
            assert s.get(mid, include_deleted=True).deleted_at is not None, got
            (n,) = s.conn.execute(
                "SELECT count(*) FROM memory_versions WHERE memory_id = ? AND reason = 'archived'", (mid,)
            ).fetchone()
            assert n == 1, got


def test_a_long_runbook_with_a_few_feelings_and_warnings_is_no_flashbulb_memory(tmp_path):
    """A 14k-character runbook with one "proud", WARNING lines and a few "!" was stored with
    intensity 1.0 (pride), which exempts a memory from decay (found by the team trial)."""
    steps = "\n".join(
        f"Step {i}: run `ledgerctl check --shard {i}` and wait until the JSON status says DONE; never skip it!"
        for i in range(1, 160)
    )
    runbook = "Ledger failover runbook. We are proud of how rarely we need it.\n" + steps
    assert len(runbook) > 12_000
    with Store.open(make_config(tmp_path), None) as s:
        long = s.add(NewMemory(runbook))
        short = s.add(NewMemory("So proud of the team!! We shipped the ledger failover at last!"))
    assert long.intensity < 0.5
    assert short.intensity > 0.55  # a short outburst keeps its "!!" (0.59, as before)


def test_stats_name_the_model_of_vectors_another_connection_stored_after_it_opened(tmp_path: Path) -> None:
    # `maple-memory stats` right after an import: the engine's connection had opened the file before
    # the first vector was written, and said "embedding_model: -" long after every memory had one.
    cfg = make_config(tmp_path)
    reader = Store.open(cfg, None)
    try:
        with Store.open(cfg, HashEmbedder(64)) as writer:
            writer.add(NewMemory("billing-service listens on 8443 in staging", scope="/work/p"))
        stats = browse.scoped_stats(reader, ["/work/p", "global"])
        assert (stats["embedding_model"], stats["embedding_dim"]) == ("hash-64", 64)
    finally:
        reader.close()
