"""The warm process's in-memory indexes (memory/textindex.py, memory/vecindex.py) against the
database they copy: the keyword index must give FTS5's own BM25 scores, and both must follow
every way the store changes (adds from another connection, updates, archive, purge, re-scope)."""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.lang import text
from memory.retrieval import ranking as retrieval
from memory.store import GLOBAL, NewMemory, Store, indexes, pg
from memory.store.textindex import TextIndex
from memory.store.vecindex import VectorIndex

WORDS = (
    "deploy cache redis postgres timeout retry queue worker billing invoice login token "
    "migration index vacuum backup restore latency alert pager schema rollback build test "
    "flaky docker compose nginx proxy certificate renew cron job report export"
).split()
CHINESE = ["部署", "缓存", "超时", "重试", "数据库", "备份", "恢复", "告警", "测试", "发布"]
PROJECT = "/src/shop"


def _sentence(rng: random.Random) -> str:
    words = rng.sample(WORDS, rng.randint(3, 9)) + rng.sample(WORDS, rng.randint(0, 3))
    if rng.random() < 0.3:
        words.insert(rng.randint(0, len(words)), "".join(rng.sample(CHINESE, rng.randint(1, 3))))
    return " ".join(words) + rng.choice([".", "?", "!"])


def _queries(rng: random.Random, n: int = 40) -> list[str]:
    out = [" ".join(rng.sample(WORDS, rng.randint(1, 5))) for _ in range(n)]
    return out + ["部署 缓存", "数据库超时", "redis 重试 备份", "tests failing", '"quoted" NEAR deploy*']


def _fts_top(store: Store, terms: list[str], k: int) -> list[tuple[int, float]]:
    return store.conn.execute(
        "SELECT rowid, -bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ? ORDER BY bm25(memory_fts), rowid LIMIT ?",
        (text.match_or(terms), k),
    ).fetchall()


def _assert_same_as_fts(store: Store, index: TextIndex, queries: list[str], scopes: list[str], k: int = 25) -> None:
    index.sync(store.conn)
    checked = 0
    for q in queries:
        terms = text.query_terms(q)  # no jieba: CJK as bigrams, each phrase one token (FTS5-exact)
        if not terms:
            continue
        want = [
            (i, s)
            for i, s in _fts_top(store, terms, 10_000)
            if store.conn.execute("SELECT scope FROM memories WHERE id = ?", (i,)).fetchone()[0] in scopes
        ][:k]
        got = index.search(store.conn, terms, scopes, k)
        assert [i for i, _ in got] == [i for i, _ in want], q
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-12, atol=0), q
        checked += bool(want)
    assert checked >= len(queries) // 2  # the queries did find things


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(config_mod.load(home=tmp_path / "home", env={}), HashEmbedder(64))
    yield s
    s.close()


def _fill(store: Store, n: int, seed: int, scope: str = PROJECT) -> list[int]:
    rng = random.Random(seed)
    return [
        m.id
        for m in store.add_many([NewMemory(_sentence(rng), scope=scope, tags=rng.sample(WORDS, 1)) for _ in range(n)])
    ]


def test_the_keyword_index_ranks_and_scores_exactly_as_fts5(store: Store) -> None:
    _fill(store, 600, seed=1)
    _fill(store, 150, seed=2, scope=GLOBAL)
    index = TextIndex.build(store.conn)
    queries = _queries(random.Random(3))
    _assert_same_as_fts(store, index, queries, [PROJECT, GLOBAL])
    _assert_same_as_fts(store, index, queries, [GLOBAL])  # scope filtering happens before the cut


def test_the_keyword_index_follows_adds_updates_archives_and_purges(store: Store, tmp_path: Path) -> None:
    ids = _fill(store, 300, seed=4)
    index = TextIndex.build(store.conn)
    queries = _queries(random.Random(5), 25)
    rng = random.Random(6)

    # Added through another connection (another process), then changed here.
    other = Store.open(store.config, HashEmbedder(64))
    ids += [m.id for m in other.add_many([NewMemory(_sentence(rng), scope=PROJECT) for _ in range(80)])]
    other.close()
    _assert_same_as_fts(store, index, queries, [PROJECT])
    for mid in rng.sample(ids, 40):
        store.update(mid, content=_sentence(rng), reason="test")
    store.update(ids[0], content="redis redis redis postgres", reason="twice")
    store.update(ids[0], content="nginx certificate renew", reason="again")  # changed twice between syncs
    _assert_same_as_fts(store, index, queries + ["nginx certificate"], [PROJECT])

    for mid in ids[10:20]:
        store.forget(mid)  # archived: still in FTS, still counted, filtered later by retrieval
    for mid in ids[20:35]:
        store.forget(mid, permanent=True)  # purged: gone from FTS
    _assert_same_as_fts(store, index, queries, [PROJECT])
    assert not set(ids[20:35]) & {
        i for q in queries for i, _ in index.search(store.conn, text.query_terms(q), [PROJECT], 500)
    }

    store.update(ids[40], scope=GLOBAL, reason="moved")
    _assert_same_as_fts(store, index, queries, [GLOBAL])
    _assert_same_as_fts(store, TextIndex.build(store.conn), queries, [PROJECT])  # built after all that


def test_the_keyword_index_folds_a_large_delta_into_its_postings(store: Store) -> None:
    _fill(store, 50, seed=7)
    index = TextIndex.build(store.conn)
    _fill(store, 400, seed=8)
    index.sync(store.conn)
    assert index.delta_size > 0
    index._merge()
    assert index.delta_size == 0 and not index.stale.any()
    _assert_same_as_fts(store, index, _queries(random.Random(9), 20), [PROJECT])


def test_a_chinese_word_of_three_characters_needs_all_its_bigrams(store: Store) -> None:
    a, b, c = (
        m.id
        for m in store.add_many(
            [NewMemory(t, scope=PROJECT) for t in ("数据库连接池满了", "数据和据库是两个不同的词", "今天部署了缓存")]
        )
    )
    index = TextIndex.build(store.conn)
    found = [i for i, _ in index.search(store.conn, ['"数据 据库"'], [PROJECT], 10)]
    assert found[0] == a and c not in found
    assert b in found  # both bigrams present but not adjacent: the documented approximation


def test_warm_search_returns_what_cold_search_returns(tmp_path: Path) -> None:
    cfg = config_mod.load(home=tmp_path / "home", env={})
    now = time.time()  # one clock for both: recency must not move between the two searches
    cold = Store.open(cfg, HashEmbedder(64), clock=lambda: now)
    _fill(cold, 400, seed=10)
    _fill(cold, 100, seed=11, scope=GLOBAL)
    warm = Store.open(cfg, HashEmbedder(64), clock=lambda: now)
    indexes.warm(warm)
    for q in _queries(random.Random(12), 30):
        query = retrieval.make_query(q, [PROJECT, GLOBAL], limit=10)
        want = retrieval.search(cold, query, record=False)
        got = retrieval.search(warm, query, record=False)
        assert [r.memory.id for r in got] == [r.memory.id for r in want], q
        assert np.allclose([r.score for r in got], [r.score for r in want], rtol=1e-9), q
    cold.close()
    warm.close()


# -- the vector index ---------------------------------------------------------------------------


def test_the_vector_index_finds_the_exact_nearest_and_keeps_to_its_scopes(store: Store) -> None:
    _fill(store, 800, seed=13)
    _fill(store, 300, seed=14, scope=GLOBAL)
    index = VectorIndex(64)
    index.sync(store.conn)  # more than 1,000 new rows: one pass over vec0
    assert index.n == 1100 and len(index.ids) >= 1100
    rows = store.conn.execute(
        "SELECT m.id, m.scope, v.embedding FROM memories m JOIN memory_vec v ON v.rowid = m.id"
    ).fetchall()
    ids = np.array([r[0] for r in rows])
    scopes = np.array([r[1] for r in rows])
    vecs = np.stack([np.frombuffer(r[2], dtype="<f4") for r in rows])
    rng = np.random.default_rng(15)
    recall = []
    for _ in range(30):
        q = vecs[rng.integers(len(vecs))] + 0.3 * rng.standard_normal(64).astype(np.float32)
        q /= np.linalg.norm(q)
        for wanted in ([PROJECT, GLOBAL], [GLOBAL]):
            mask = np.isin(scopes, wanted)
            exact = set(ids[mask][np.argsort(-(vecs[mask] @ q))[:10]])
            got = index.search(q, wanted, 10)
            assert {scopes[ids == i][0] for i, _ in got} <= set(wanted)
            assert all(abs(s - float(vecs[ids == i][0] @ q)) < 2e-3 for i, s in got)
            recall.append(len(exact & {i for i, _ in got}) / 10)
    assert np.mean(recall) >= 0.95


def test_the_vector_index_takes_new_and_re_embedded_rows_in_place(store: Store) -> None:
    ids = _fill(store, 100, seed=16)
    index = VectorIndex(64)
    index.sync(store.conn)
    store.update(ids[5], content="a wholly different sentence about sourdough bread", reason="edit")
    more = _fill(store, 300, seed=17)  # grows the arrays past their first size
    index.sync(store.conn)  # a few new rows and a changed one: looked up one by one
    assert index.n == 400 and len(index.row_of) == 400
    q = np.asarray(store.embedder.embed_query("a wholly different sentence about sourdough bread"), dtype=np.float32)
    assert index.search(q, [PROJECT], 1)[0][0] == ids[5]
    assert index.cosines(q, [ids[5], more[-1]])[ids[5]] == pytest.approx(1.0, abs=2e-3)


def test_a_store_warmed_before_its_first_vector_gets_its_vector_index_on_the_first_search(store: Store) -> None:
    indexes.warm(store)  # empty: no vectors yet, so no vector index (and no sqlite-vec connection)
    assert getattr(store, "_vector_index", None) is None
    stored = store.add(NewMemory("The nightly backup runs at 02:00 from the cron on db-3", scope=PROJECT))
    found = retrieval.search(store, retrieval.make_query("nightly backup cron", [PROJECT]), record=False)
    assert found[0].memory.id == stored.id and found[0].channels["vector"] > 0 and found[0].channels["bm25"] > 0
    assert store._vector_index.n == 1


# -- PostgreSQL ranks as SQLite does -------------------------------------------------------------


@pytest.fixture
def both(tmp_path: Path, pg_url: str) -> tuple[Store, Store]:
    """The same 750 memories in a SQLite store and in a PostgreSQL one (same ids: filled in order)."""
    lite = Store.open(config_mod.load(home=tmp_path / "lite", env={}), HashEmbedder(64))
    team = Store.open(config_mod.load(home=tmp_path / "team", env={}, database=pg_url), HashEmbedder(64))
    for s in (lite, team):
        _fill(s, 600, seed=1)
        _fill(s, 150, seed=2, scope=GLOBAL)
    yield lite, team
    lite.close()
    team.close()


def test_postgresql_keyword_hits_rank_and_score_as_the_sqlite_index(both: tuple[Store, Store]) -> None:
    lite, team = both
    index = TextIndex.build(lite.conn)
    checked = 0
    for q in _queries(random.Random(3)):
        terms = text.query_terms(q)
        if not terms:
            continue
        for scopes in ([PROJECT, GLOBAL], [GLOBAL]):
            want = index.search(lite.conn, terms, scopes, 25)
            got = indexes.keyword_hits(team, terms, scopes, 25)
            assert [i for i, _ in got] == [i for i, _ in want], q
            assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9, atol=0), q
            checked += bool(want)
    assert checked >= 40


def test_postgresql_vector_hits_are_the_exact_nearest_in_their_scopes(both: tuple[Store, Store]) -> None:
    lite, team = both
    rng = np.random.default_rng(15)
    recall = []
    for _ in range(30):
        q = rng.standard_normal(64).astype(np.float32)
        q /= np.linalg.norm(q)
        for scopes in ([PROJECT, GLOBAL], [GLOBAL]):
            exact = indexes.exact_vector_hits(lite, q, scopes, 10)
            got = indexes.vector_hits(team, q, scopes, 10)
            assert len(got) == 10
            assert {i for i, _ in got} <= set(indexes.matching_ids(lite, " OR ".join(f'"{w}"' for w in WORDS)))
            assert all(
                team.conn.execute("SELECT scope FROM memories WHERE id = ?", (i,)).fetchone()[0] in scopes
                for i, _ in got
            )
            recall.append(len({i for i, _ in exact} & {i for i, _ in got}) / 10)
            near = dict(exact)
            assert all(abs(s - near[i]) < 1e-5 for i, s in got if i in near)
    assert np.mean(recall) >= 0.95


def _assert_same_as_sql(team: Store, index: TextIndex, queries: list[str], scopes: list[str], k: int = 25) -> None:
    """A warm copy of a team database's keyword index ranks and scores as the database's BM25."""
    index.sync(team.conn)
    checked = 0
    for q in queries:
        terms = text.query_terms(q)
        if not terms:
            continue
        marks = ",".join("?" * len(scopes))
        want = pg.keyword_hits(team.conn, terms, f"m.scope IN ({marks})", scopes, k)
        got = index.search(team.conn, terms, scopes, k)
        assert [i for i, _ in got] == [i for i, _ in want], q
        assert np.allclose([s for _, s in got], [s for _, s in want], rtol=1e-9, atol=0), q
        checked += bool(want)
    assert checked >= len(queries) // 2


def test_a_warm_team_store_ranks_from_copies_that_agree_with_the_database(both: tuple[Store, Store]) -> None:
    _, team = both
    queries = _queries(random.Random(3))
    cold = {
        q: [
            (r.memory.id, r.score)
            for r in retrieval.search(team, retrieval.make_query(q, [PROJECT, GLOBAL]), record=False)
        ]
        for q in queries
    }
    indexes.warm(team)
    assert team._text_index is not None and team._vector_index is not None  # type: ignore[attr-defined]
    _assert_same_as_sql(team, team._text_index, queries, [PROJECT, GLOBAL])  # type: ignore[attr-defined]
    _assert_same_as_sql(team, team._text_index, queries, [GLOBAL])  # type: ignore[attr-defined]
    agree = []
    for q in queries:
        got = [
            (r.memory.id, r.score)
            for r in retrieval.search(team, retrieval.make_query(q, [PROJECT, GLOBAL]), record=False)
        ]
        agree.append(len({i for i, _ in got[:10]} & {i for i, _ in cold[q][:10]}) / max(1, len(cold[q][:10])))
    assert np.mean(agree) >= 0.97  # HNSW (cold) against the exact in-memory scan (warm)


def test_a_warm_team_store_follows_adds_updates_archives_and_purges(tmp_path: Path, pg_url: str) -> None:
    team = Store.open(config_mod.load(home=tmp_path / "team", env={}, database=pg_url), HashEmbedder(64))
    ids = _fill(team, 300, seed=4)
    indexes.warm(team)
    index = team._text_index  # type: ignore[attr-defined]
    queries = _queries(random.Random(5), 25)
    rng = random.Random(6)
    other = Store.open(team.config, HashEmbedder(64))  # another process's connection
    ids += [m.id for m in other.add_many([NewMemory(_sentence(rng), scope=PROJECT) for _ in range(80)])]
    for mid in rng.sample(ids, 40):
        other.update(mid, content=_sentence(rng), reason="test")
    other.close()
    _assert_same_as_sql(team, index, queries, [PROJECT])
    for mid in ids[20:35]:
        team.forget(mid, permanent=True)
    _assert_same_as_sql(team, index, queries, [PROJECT])
    assert not set(ids[20:35]) & {
        i for q in queries for i, _ in index.search(team.conn, text.query_terms(q), [PROJECT], 500)
    }
    other = Store.open(team.config, HashEmbedder(64))
    (added,) = other.add_many([NewMemory("pager rotation handbook for the billing team", scope=PROJECT)])
    other.close()
    with team.conn.pinned():  # as the engine serves a request: its pooled connection reads the new vector
        found = indexes.vector_hits(team, HashEmbedder(64).embed([added.content])[0], [PROJECT], 1)
    assert found[0][0] == added.id
    newest = ids[-1]
    team.update(newest, content="nginx certificate renew", reason="test")
    found = indexes.vector_hits(team, HashEmbedder(64).embed(["nginx certificate renew"])[0], [PROJECT], 1)
    assert found[0][0] == newest  # the re-embedded vector, caught up from memory_versions
    team.close()


@pytest.mark.backends
def test_a_vector_written_later_for_a_memory_the_warm_copy_already_saw_is_found(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory stored while the model loaded gets its vector from embed_missing (no version row):
    the warm copy looks such memories up again (found by the team trial: never, until a restart)."""
    monkeypatch.setattr(VectorIndex, "WAIT_SECONDS", 0.0)
    cfg = config_mod.load(home=home)
    warm = Store.open(cfg, HashEmbedder(64))
    _fill(warm, 20, seed=21)
    indexes.warm(warm)
    (late,) = warm.add_many([NewMemory("pager rotation handbook for the billing team", scope=PROJECT)], embed=False)
    assert indexes.vector_hits(warm, HashEmbedder(64).embed([late.content])[0], [PROJECT], 1)[0][0] != late.id
    with Store.open(cfg, HashEmbedder(64)) as worker:  # the engine's harvest or the worker
        assert worker.embed_missing() == 1
    found = indexes.vector_hits(warm, HashEmbedder(64).embed([late.content])[0], [PROJECT], 1)
    assert found[0][0] == late.id
    assert not warm._vector_index.waiting  # type: ignore[attr-defined]
    warm.close()


def test_a_warm_search_on_a_team_database_reads_how_far_the_store_has_gone_once(tmp_path: Path, pg_url: str) -> None:
    team = Store.open(config_mod.load(home=tmp_path / "team", env={}, database=pg_url), HashEmbedder(64))
    _fill(team, 300, seed=8)
    indexes.warm(team)
    query = retrieval.make_query("pager rotation handbook for billing", [PROJECT, GLOBAL])
    retrieval.search(team, query, record=False)
    sent = team.conn.statements
    retrieval.search(team, query, record=False)
    # The marks (both indexes' and the pool size's), the query's entities, the candidates' rows (twice
    # when the query vector comes after the other channels), the bulk-store count and the results:
    # 11 statements before the indexes shared one read of the marks.
    assert team.conn.statements - sent <= 6
    other = Store.open(team.config, HashEmbedder(64))  # a teammate's add, found by the next search
    (added,) = other.add_many([NewMemory("pager rotation handbook for the billing team", scope=PROJECT)])
    other.close()
    results = retrieval.search(team, query, record=False)
    assert results[0].memory.id == added.id
    assert results[0].channels.get("bm25", 0) > 0 and results[0].channels.get("vector", 0) > 0
    team.close()


def test_the_count_of_memories_stored_in_one_sitting_reads_its_own_index(tmp_path: Path) -> None:
    store = Store.open(config_mod.load(home=tmp_path, env={}), HashEmbedder(64))
    plan = " ".join(
        str(r[-1])
        for r in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM (SELECT 1 FROM memories WHERE scope = ? AND occurred_at >= ? "
            "AND occurred_at <= ? AND session_id IS NULL AND parent_id IS NULL LIMIT ?)",
            (PROJECT, 0.0, 1.0, 102),
        )
    )
    assert "memories_loose_time" in plan
    store.close()
