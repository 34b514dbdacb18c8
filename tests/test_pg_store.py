"""The PostgreSQL backend (memory/store/pg.py) where it differs from SQLite: how it is selected,
its schema versions, its SQL translation, and writers on many connections.

The shared behaviour is tested on both backends by the `backends` modules (test_store.py, ...).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.errors import StoreUnavailable
from memory.store import NewMemory, Store, jobs, pg, schema


def open_team(tmp_path: Path, url: str, name: str = "home") -> Store:
    return Store.open(config_mod.load(home=tmp_path / name, env={}, database=url), HashEmbedder(64))


def test_maple_database_url_selects_the_team_database_and_nothing_else_changes_without_it(tmp_path: Path) -> None:
    url = "postgresql://maple@db.example:5432/team"
    team = config_mod.load(home=tmp_path, env={"MAPLE_DATABASE_URL": url, "MAPLE_DB": str(tmp_path / "x.db")})
    assert team.database_url == url
    local = config_mod.load(home=tmp_path, env={})
    assert local.database_url == "" and local.db_path == tmp_path / "memory.db"


def test_the_team_database_records_the_same_numbered_migrations_as_sqlite(tmp_path: Path, pg_url: str) -> None:
    with open_team(tmp_path, pg_url) as team, Store.open(config_mod.load(home=tmp_path / "lite", env={})) as lite:
        sql = "SELECT id, name FROM migrations ORDER BY id"
        assert team.conn.execute(sql).fetchall() == lite.conn.execute(sql).fetchall()
        assert len(team.conn.execute(sql).fetchall()) == len(schema.MIGRATIONS)
    with open_team(tmp_path, pg_url) as again:  # a second open applies nothing twice
        assert again.conn.execute("SELECT count(*) FROM migrations").fetchone()[0] == len(schema.MIGRATIONS)


OPEN_WHEN_TOLD = """
import os, sys, time
from pathlib import Path
from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import Store
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.005)
with Store.open(config_mod.load(home=Path(sys.argv[3]), env={}, database=sys.argv[1]), HashEmbedder(64)):
    pass
"""


def test_four_processes_opening_an_empty_team_database_at_once_make_its_schema_once_and_all_open_it(
    tmp_path: Path, pg_url: str
) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(root)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_WHEN_TOLD, pg_url, str(go), str(tmp_path / f"home{n}")],
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    import time

    time.sleep(2.0)  # every process has imported MAPLE and waits at the gate
    go.touch()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    with open_team(tmp_path, pg_url) as team:
        ids = [r[0] for r in team.conn.execute("SELECT id FROM migrations ORDER BY id")]
        assert ids == list(range(1, len(schema.MIGRATIONS) + 1))


def test_a_team_database_with_a_newer_schema_is_refused_with_a_message_that_says_to_upgrade(
    tmp_path: Path, pg_url: str
) -> None:
    with open_team(tmp_path, pg_url) as team:
        team.conn.execute(
            "INSERT INTO migrations (id, name, applied_at) VALUES (?, '999_from_the_future', 0)",
            (len(schema.MIGRATIONS) + 1,),
        )
    with pytest.raises(StoreUnavailable, match=r"newer than this MAPLE knows .*upgrade MAPLE"):
        open_team(tmp_path, pg_url)


def test_an_unreachable_team_database_is_store_unavailable_naming_the_setting(tmp_path: Path) -> None:
    url = f"postgresql://nobody:secret@/nodb?host={tmp_path}"
    with pytest.raises(StoreUnavailable, match="MAPLE_DATABASE_URL") as caught:
        open_team(tmp_path, url)
    assert "secret" not in str(caught.value)  # the password stays out of messages


@pytest.mark.parametrize(
    "sqlite, postgresql",
    [
        ("SELECT id FROM memories WHERE id = ?", "SELECT id FROM memories WHERE id = %s"),
        ("SELECT '?', '%' FROM t WHERE a LIKE ?", "SELECT '?', '%%' FROM t WHERE a LIKE %s"),
        (
            "INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, role) VALUES (?, ?, ?)",
            "INSERT INTO memory_entities (memory_id, entity_id, role) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
        ),
        (
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        ),
        ("UPDATE jobs SET attempts = max(0, attempts - 1)", "UPDATE jobs SET attempts = GREATEST(0, attempts - 1)"),
        ("SELECT max(id) FROM memories", "SELECT max(id) FROM memories"),
        (
            "SELECT 1 FROM memories WHERE parent_id IS ?",
            "SELECT 1 FROM memories WHERE parent_id IS NOT DISTINCT FROM %s",
        ),
        ("SELECT json_extract(metadata, '$.value') FROM m", "SELECT ((metadata)::json ->> 'value') FROM m"),
        (
            "SELECT offset FROM transcript_cursors LIMIT 1 OFFSET 2",
            'SELECT "offset" FROM transcript_cursors LIMIT 1 OFFSET 2',
        ),
    ],
)
def test_sqlite_statements_are_translated_word_for_word(sqlite: str, postgresql: str) -> None:
    assert pg.translate(sqlite)[0] == postgresql


def test_an_insert_into_a_table_with_ids_returns_the_new_id_as_lastrowid() -> None:
    assert pg.translate("INSERT INTO jobs (kind) VALUES (?)") == (
        "INSERT INTO jobs (kind) VALUES (%s) RETURNING id",
        True,
    )


def test_writers_on_many_connections_store_a_fact_once_and_lose_no_write(tmp_path: Path, pg_url: str) -> None:
    stores = [open_team(tmp_path, pg_url, f"machine{i}") for i in range(4)]
    errors: list[BaseException] = []

    def write(s: Store, n: int) -> None:
        try:
            for i in range(25):
                s.add(NewMemory(f"machine {n} learned fact number {i}"))
                s.add(NewMemory("staging's database is on port 6543"))  # every machine learns this one
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert stores[0].count() == 4 * 25 + 1
    assert stores[0].integrity()["ok"]
    for s in stores:
        s.close()


def test_workers_on_many_connections_claim_each_job_once(tmp_path: Path, pg_url: str) -> None:
    stores = [open_team(tmp_path, pg_url, f"machine{i}") for i in range(4)]
    for i in range(60):
        jobs.enqueue(stores[0], "maintain", {"n": i})
    taken: list[list[int]] = [[] for _ in stores]

    def work(n: int) -> None:
        while (job := jobs.claim(stores[n], f"w{n}")) is not None:
            taken[n].append(job.payload["n"])
            jobs.finish(stores[n], job)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = sorted(x for got in taken for x in got)
    assert every == list(range(60))
    for s in stores:
        s.close()


# -- what BM25 reads, kept by the database ----------------------------------------------------------


def _totals_are_exact(team: Store) -> bool:
    kept = team.conn.execute("SELECT rows, length FROM memory_fts_totals").fetchone()
    counted = team.conn.execute("SELECT count(*), coalesce(sum(length), 0) FROM memory_fts").fetchone()
    return tuple(kept) == tuple(counted)


def test_keyword_totals_and_token_counts_follow_adds_edits_and_purges(tmp_path: Path, pg_url: str) -> None:
    with open_team(tmp_path, pg_url) as team:
        ids = [
            m.id for m in team.add_many([NewMemory(f"deploy {i} runs deploy checks on host {i}") for i in range(20)])
        ]
        team.add(NewMemory("a single note about grafana"))
        team.update(ids[0], content="grafana grafana grafana dashboards")
        team.purge(ids[1:4])
        assert _totals_are_exact(team)
        tfs = team.conn.execute("SELECT tfs FROM memory_fts WHERE rowid = ?", (ids[0],)).fetchone()[0]
        assert tfs == {"grafana": 3, "dashboard": 1}  # FTS5's porter stems, each token's count
        assert [i for i, _ in pg.keyword_hits(team.conn, ['"grafana"'], "TRUE", (), 10)][0] == ids[0]


def test_a_team_database_made_before_the_keyword_totals_gets_them_on_open(tmp_path: Path, pg_url: str) -> None:
    with open_team(tmp_path, pg_url) as team:
        team.add_many([NewMemory(f"the {w} service restarts nightly") for w in ("billing", "search", "billing api")])
        # As the first PostgreSQL release left it: no tfs column, no totals, no record of either.
        team.conn.execute("DROP FUNCTION maple_fts_totals() CASCADE")
        team.conn.execute("DROP TABLE memory_fts_totals")
        team.conn.execute("ALTER TABLE memory_fts DROP COLUMN tfs")
        team.conn.execute("DELETE FROM meta WHERE key = 'pg_schema'")
    with open_team(tmp_path, pg_url, "later") as team:
        assert team.conn.execute("SELECT value FROM meta WHERE key = 'pg_schema'").fetchone()[0] == str(
            len(pg.PG_STEPS)
        )
        assert _totals_are_exact(team)
        team.add(NewMemory("billing moved to the new cluster"))
        assert _totals_are_exact(team)
        assert len(pg.keyword_hits(team.conn, ['"billing"'], "TRUE", (), 10)) == 3


def test_a_search_on_postgresql_takes_a_handful_of_round_trips(tmp_path: Path, pg_url: str) -> None:
    from memory.retrieval import ranking

    with open_team(tmp_path, pg_url) as team:
        team.add_many([NewMemory(f"note {i}: the staging database listens on port 6543") for i in range(40)])
        q = ranking.make_query("which port does the staging database use", ["global"])
        ranking.search(team, q, record=False)  # session settings are made once, on the first search
        before = team.conn.statements
        assert ranking.search(team, q, record=False)
        # count, keywords, rows, vectors, cosines, neighbours, results, chunks: not one per candidate
        assert team.conn.statements - before <= 12


def test_the_mood_channel_finds_memories_on_postgresql(tmp_path: Path, pg_url: str) -> None:
    from memory.retrieval import ranking

    with open_team(tmp_path, pg_url) as team:
        joyful = team.add(NewMemory("The release went out without a single rollback", moods=["joy"], intensity=0.7))
        team.add(NewMemory("The CI runner dropped the cache again", moods=["frustration"], intensity=0.8))
        found = ranking.search(team, ranking.make_query("when was I really happy at work", ["global"]), record=False)
        assert found[0].memory.id == joyful.id and found[0].channels["mood"] > 0


def test_a_teammate_keeps_the_keyword_totals_but_leaves_pending_schema_steps_to_the_owner(
    tmp_path: Path, pg_url: str, pg_role
) -> None:
    with open_team(tmp_path, pg_url, "owner") as owner:  # the superuser here: it made the tables
        bob = pg_role("bob")
        with open_team(tmp_path, bob.url, "bob") as team:
            team.add(NewMemory("bob's note: the billing queue drains at midnight"))
        assert _totals_are_exact(owner)
        owner.conn.execute("UPDATE meta SET value = '0' WHERE key = 'pg_schema'")
    with pytest.raises(StoreUnavailable, match="only the role that owns"):
        open_team(tmp_path, bob.url, "bob-again")


def test_a_long_memory_edited_on_postgresql_is_cut_again_and_found_by_its_new_words(
    tmp_path: Path, pg_url: str
) -> None:
    para = "The deploy pipeline builds the image, pushes it to the registry and rolls the canary first. "
    with open_team(tmp_path, pg_url) as team:
        long = team.add(NewMemory(para * 30))
        edited = team.update(long.id, content=para * 20 + "Afterwards the quokka dashboard shows the rollout. " * 10)
        assert edited.content.endswith("rollout.")
        assert _totals_are_exact(team)
        assert pg.keyword_hits(team.conn, ['"quokka"'], "TRUE", (), 10)


def test_a_search_on_postgresql_shows_the_part_of_a_long_memory_its_rarer_words_point_to(
    tmp_path: Path, pg_url: str
) -> None:
    # The same rule as on SQLite (ranking._show_parts): which of the question's words each chunk holds,
    # read in one statement; a word every part holds tells no part from another.
    from memory.retrieval import ranking

    steps = "\n".join(
        f"Step {i}: during the ledger database failover, check the replica {i} lag and note it in the failover log."
        for i in range(1, 30)
    )
    tail = " ".join(f"Tell the {t} team that the switch is over and link its ticket." for t in "abcdefghijk")
    text = f"Ledger database failover runbook.\n{steps}\n\nAfterwards\n{tail} The incident lead must review the postmortem."
    with open_team(tmp_path, pg_url) as team:
        long = team.add(NewMemory(text))
        (hit,) = ranking.search(
            team,
            ranking.make_query("after a ledger database failover, who reviews the postmortem?", [long.scope]),
            record=False,
        )[:1]
    assert hit.memory.id == long.id and hit.part is not None
    assert "review the postmortem" in text[hit.part[0] : hit.part[1]]


def test_a_pinned_thread_has_a_connection_of_its_own_so_a_request_does_not_wait_behind_another(
    tmp_path: Path, pg_url: str
) -> None:
    """The engine pins each request: a search runs while another request holds a transaction open."""
    with open_team(tmp_path, pg_url) as team:
        team.add(NewMemory(content="The staging database of billing listens on port 6543", scope="/srv/billing"))
        holding, release, searched = threading.Event(), threading.Event(), threading.Event()
        seen: dict[str, object] = {}

        def slow_request() -> None:
            with team.conn.pinned(), team.tx.atomic():
                seen["slow"] = team.conn.raw
                holding.set()
                release.wait(30)

        def quick_request() -> None:
            with team.conn.pinned():
                seen["quick"] = team.conn.raw
                seen["found"] = [m.content for m in team.get_many([1])]
                searched.set()

        slow = threading.Thread(target=slow_request)
        slow.start()
        assert holding.wait(30)
        quick = threading.Thread(target=quick_request)
        quick.start()
        done_while_held = searched.wait(30)  # without pinning it waits for the other's lock
        release.set()
        slow.join(30)
        quick.join(30)
        assert done_while_held
        assert seen["found"] == ["The staging database of billing listens on port 6543"]
        assert seen["slow"] is not seen["quick"] and team.conn.raw not in (seen["slow"], seen["quick"])
        assert not team.tx.depth  # each thread's transaction depth is its connection's


def test_a_pinned_block_uses_the_shared_connection_when_the_pool_has_none_to_give(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg, "POOL_SIZE", 1)
    with open_team(tmp_path, pg_url) as team:
        shared = team.conn.raw
        outer_started, finish = threading.Event(), threading.Event()

        def hold_the_only_one() -> None:
            with team.conn.pinned():
                assert team.conn.raw is not shared
                outer_started.set()
                finish.wait(30)

        t = threading.Thread(target=hold_the_only_one)
        t.start()
        assert outer_started.wait(30)
        with team.conn.pinned():
            assert team.conn.raw is shared  # waited POOL_WAIT_S, then went on as before
            assert team.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
        finish.set()
        t.join(30)
