"""A team on one PostgreSQL database: what teammates share (project memories, under the
repository's remote) and what they do not (global memories, kept personal by row-level security
in the database, tested as two real roles through the application API and through plain SQL)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pg_support import PgRole

from memory import config as config_mod
from memory.app.memories import Memories
from memory.embed import HashEmbedder
from memory.errors import NotFound
from memory.store import Store

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ALICE_SECRET = "Alice sees her therapist Dr Quinnfeather every Tuesday evening"
ALICE_PROJECT = "The staging database of billing listens on port 6543"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    )


def admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def rows_as(role: PgRole, sql: str) -> list[tuple]:
    """What `role` reads with plain SQL, as a teammate with psql would."""
    import psycopg

    with psycopg.connect(role.url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@dataclass
class Machine:
    """One teammate's computer: a MAPLE home of its own whose config names their role's URL."""

    role: PgRole
    store: Store

    def app(self, project: str) -> Memories:
        return Memories(self.store, project)


@pytest.fixture
def team(pg_url: str, pg_role: Callable[[str], PgRole], tmp_path: Path) -> Iterator[Callable[[str], Machine]]:
    """`team("alice")` is Alice's machine. The schema's owner is a role of its own that may create
    in the schema (the README's admin steps); it opens the database first, as the README says."""
    owner = pg_role("owner")
    admin(pg_url, f"GRANT CREATE ON SCHEMA public TO {owner.name}")
    opened: list[Store] = []

    def machine(name: str, role: PgRole | None = None, **settings: object) -> Machine:
        role = role or pg_role(name)
        home = tmp_path / f"home-{name}"
        home.mkdir()
        (home / "config.json").write_text(json.dumps({"database": role.url, **settings}), encoding="utf-8")
        store = Store.open(config_mod.load(home=home), HashEmbedder(64))
        opened.append(store)
        return Machine(role, store)

    machine("owner", owner)
    yield machine
    for s in opened:
        s.close()


PROJECT = "/srv/billing"  # not a repository here: its scope is the path on every backend


def test_a_global_memory_is_seen_only_by_its_author_through_every_reading_path(team):
    alice, bob = team("alice"), team("bob")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global", subject="Dr Quinnfeather")["memory"]
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    alice.app(PROJECT).update(mine["id"], content=ALICE_SECRET + " at six")  # a version row too

    a, b = alice.app(PROJECT), bob.app(PROJECT)
    assert [r["id"] for r in a.search("Quinnfeather therapist")["results"]] == [mine["id"]]
    assert b.search("Quinnfeather therapist")["results"] == []
    assert [r["id"] for r in b.search("staging database port")["results"]] == [shared["id"]]
    assert b.get([mine["id"]])["missing"] == [mine["id"]]
    assert [m["id"] for m in b.list(limit=100)["memories"]] == [shared["id"]]
    assert [m["id"] for m in Memories(bob.store, PROJECT, all_projects=True).list(limit=100)["memories"]] == [
        shared["id"]
    ]
    assert "Quinnfeather" not in json.dumps(list(b.export_records()))
    name = next(n["name"] for n in a.graph()["nodes"] if "Quinnfeather" in n["name"])
    assert a.entity(name)["memories"]
    with pytest.raises(NotFound):
        b.graph(name)
    with pytest.raises(NotFound):
        b.entity(name)


def test_plain_sql_as_another_role_reads_no_row_of_a_personal_memory(team):
    alice, bob = team("alice"), team("bob")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global", subject="Dr Quinnfeather")["memory"]
    alice.app(PROJECT).update(mine["id"], content=ALICE_SECRET + " at six")
    alice.app(PROJECT).shown("session-1", [mine["id"]], prompt="when is my therapy")
    mid = mine["id"]
    checks = {
        "memories": f"SELECT count(*) FROM memories WHERE id = {mid} OR scope = 'global'",
        "memory_fts": f"SELECT count(*) FROM memory_fts WHERE rowid = {mid}",
        "memory_vec": f"SELECT count(*) FROM memory_vec WHERE rowid = {mid} OR scope = 'global'",
        "memory_versions": f"SELECT count(*) FROM memory_versions WHERE memory_id = {mid}",
        "memory_entities": f"SELECT count(*) FROM memory_entities WHERE memory_id = {mid}",
        "access_log": f"SELECT count(*) FROM access_log WHERE memory_id = {mid}",
        "injections": f"SELECT count(*) FROM injections WHERE memory_id = {mid}",
        "entities": "SELECT count(*) FROM entities WHERE scope = 'global'",
        "entity_aliases": "SELECT count(*) FROM entity_aliases a JOIN entities e ON e.id = a.entity_id",
    }
    seen_by_alice = {t: rows_as(alice.role, sql)[0][0] for t, sql in checks.items()}
    seen_by_bob = {t: rows_as(bob.role, sql)[0][0] for t, sql in checks.items()}
    assert all(seen_by_alice[t] > 0 for t in ("memories", "memory_fts", "memory_vec", "memory_versions", "entities"))
    assert seen_by_bob == dict.fromkeys(checks, 0)


def test_the_author_is_the_database_role_whatever_the_client_claims(team):
    alice = team("alice", user="mallory")  # a configured name cannot impersonate on a team database
    got = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    assert got["author"] == alice.role.name
    assert alice.app(PROJECT).get([got["id"]])["memories"][0]["author"] == alice.role.name
    assert [r["author"] for r in alice.app(PROJECT).export_records()] == [alice.role.name]


def test_a_role_cannot_write_as_another_nor_take_over_a_memory(team):
    import psycopg

    alice, bob = team("alice"), team("bob")
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    with psycopg.connect(bob.role.url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO memories (content, scope, content_hash, created_at, updated_at, author) "
            f"VALUES ('planted text for alice', 'global', 'x', 0, 0, '{alice.role.name}')"
        )
        conn.execute(f"UPDATE memories SET author = '{bob.role.name}' WHERE id = {shared['id']}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute(f"UPDATE memories SET scope = 'global' WHERE id = {shared['id']}")
        for sql in ("ALTER TABLE memories DISABLE ROW LEVEL SECURITY", "DROP POLICY maple_team ON memories"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql)
    assert rows_as(bob.role, "SELECT author FROM memories WHERE content = 'planted text for alice'") == [
        (bob.role.name,)
    ]
    assert alice.app(PROJECT).get([shared["id"]])["memories"][0]["author"] == alice.role.name
    assert "planted" not in json.dumps(alice.app(PROJECT).list(limit=100))


def test_each_version_names_the_role_that_changed_it_whatever_the_client_claims(team):
    alice, bob = team("alice"), team("bob", user="alice")  # bob's config claims to be alice
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    alice.app(PROJECT).update(shared["id"], content=ALICE_PROJECT + " (pgbouncer in front)")
    bob.app(PROJECT).update(shared["id"], content="The staging database of billing listens on port 6544")
    (entry,) = bob.app(PROJECT).history(shared["id"])["entries"]
    assert [(v["content"], v["editor"]) for v in entry["versions"]] == [
        (ALICE_PROJECT, alice.role.name),
        (ALICE_PROJECT + " (pgbouncer in front)", bob.role.name),
    ]
    assert entry["memory"]["author"] == alice.role.name  # an edit keeps who wrote it
    import psycopg

    with psycopg.connect(bob.role.url, autocommit=True) as conn:  # nor can plain SQL forge it
        conn.execute(f"UPDATE memory_versions SET editor = '{alice.role.name}' WHERE memory_id = {shared['id']}")
    assert {r[0] for r in rows_as(bob.role, "SELECT editor FROM memory_versions")} == {bob.role.name}


def test_archiving_and_restoring_a_shared_memory_name_the_role_that_did_it(team):
    alice, bob = team("alice"), team("bob", user="alice")  # bob's config claims to be alice
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    assert bob.app(PROJECT).forget(shared["id"])["action"] == "archived"
    alice.app(PROJECT).restore(shared["id"])
    (entry,) = alice.app(PROJECT).history(shared["id"])["entries"]
    assert [(v["reason"], v["editor"]) for v in entry["versions"]] == [
        ("archived", bob.role.name),
        ("restored", alice.role.name),
    ]
    assert entry["status"] == "current"


def test_what_a_teammate_was_shown_and_the_prompt_it_answered_stay_theirs(team):
    alice, bob = team("alice"), team("bob")
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    alice.app(PROJECT).shown("alice-session", [shared["id"]], prompt="is the billing outage my fault again")
    bob.app(PROJECT).shown("bob-session", [shared["id"]], prompt="which port is staging on")
    assert rows_as(alice.role, "SELECT prompt FROM access_log") == [("is the billing outage my fault again",)]
    assert rows_as(bob.role, "SELECT prompt FROM access_log") == [("which port is staging on",)]
    forged = f"INSERT INTO access_log (memory_id, at, kind, reader) VALUES ({shared['id']}, 0, 'surface', 'alice')"
    assert rows_as(bob.role, forged + " RETURNING reader") == [(bob.role.name,)]  # the database says who
    # The session page reads the same table: bob's lists his session only.
    sessions = [s["session_id"] for s in bob.app(PROJECT).sessions()["sessions"]]
    assert sessions == ["bob-session"]
    shown = bob.app(PROJECT).session("bob-session")
    assert "which port is staging on" in json.dumps(shown)
    assert "my fault" not in json.dumps(shown) + json.dumps(bob.app(PROJECT).session("alice-session"))


def test_a_warm_engine_copy_holds_what_its_role_may_read_and_follows_teammates(team):
    from memory.store import indexes

    alice, bob = team("alice"), team("bob")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global", subject="Dr Quinnfeather")["memory"]
    indexes.warm(bob.store)  # bob's engine: built from what bob's role reads
    assert bob.app(PROJECT).search("Quinnfeather therapist")["results"] == []
    assert not indexes.keyword_hits(bob.store, ['"quinnfeather"'], ["global", PROJECT], 10)
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]  # written after bob's engine warmed
    later = alice.app(PROJECT).add("Alice also sees Dr Quinnfeather on Fridays", scope="global")["memory"]
    assert [r["id"] for r in bob.app(PROJECT).search("staging database port")["results"]] == [shared["id"]]
    assert bob.app(PROJECT).search("Quinnfeather")["results"] == []
    assert {mine["id"], later["id"]}.isdisjoint(
        i for i, _ in indexes.keyword_hits(bob.store, ['"quinnfeather"'], ["global", PROJECT], 10)
    )


def test_two_users_keep_global_memories_naming_the_same_entity(team):
    alice, bob = team("alice"), team("bob")
    a = alice.app(PROJECT).add("Dr Quinnfeather prescribed Alice a new inhaler", scope="global")["memory"]
    b = bob.app(PROJECT).add("Dr Quinnfeather moved Bob's check-up to May", scope="global")["memory"]
    assert a["id"] != b["id"]
    name = next(n["name"] for n in alice.app(PROJECT).graph()["nodes"] if "Quinnfeather" in n["name"])
    alice_entity = alice.app(PROJECT).entity(name)
    bob_entity = bob.app(PROJECT).entity(name)
    assert alice_entity["entity"]["id"] != bob_entity["entity"]["id"]
    assert "inhaler" not in json.dumps(bob_entity) and "check-up" not in json.dumps(alice_entity)


@needs_git
def test_clones_at_different_paths_share_project_memories_by_their_remote(team, tmp_path):
    alice, bob = team("alice"), team("bob")
    clones = []
    for name, url in (
        ("alice-clone", "git@github.com:acme/billing.git"),
        ("bob-clone", "https://bob:ghp_token123@github.com/acme/billing"),
    ):
        top = tmp_path / name
        top.mkdir()
        git(top, "init", "-q")
        git(top, "remote", "add", "origin", url)
        clones.append(str(top.resolve()))
    stored = alice.app(clones[0]).add(ALICE_PROJECT)["memory"]
    assert stored["scope"] == "github.com/acme/billing"  # no path, no credentials
    assert [r["id"] for r in bob.app(clones[1]).search("staging database port")["results"]] == [stored["id"]]


@needs_git
def test_a_local_sqlite_store_keeps_path_scopes_so_no_memory_vanishes(config, tmp_path):
    top = tmp_path / "repo"
    top.mkdir()
    git(top, "init", "-q")
    project = str(top.resolve())
    with Store.open(config, HashEmbedder(64)) as store:
        before = Memories(store, project).add(ALICE_PROJECT)["memory"]
    git(top, "remote", "add", "origin", "git@github.com:acme/billing.git")  # a remote arrives later
    with Store.open(config, HashEmbedder(64)) as store:
        app = Memories(store, project)
        assert before["scope"] == project and app.project == project
        assert [r["id"] for r in app.search("staging database port")["results"]] == [before["id"]]
        assert app.get([before["id"]])["memories"][0]["author"] == config.author


def test_four_machines_writing_and_searching_at_once_lose_nothing_and_leak_nothing(pg_url, pg_role, team, tmp_path):
    import threading

    import team_load

    machines = []
    for i in range(4):
        role = pg_role(f"m{i}")
        machines.append((i, role.name, role.url, tmp_path / f"machine{i}"))
    results: list = [None] * 4

    def run(i: int, role: str, url: str, home: Path) -> None:
        results[i] = team_load.run_machine(i, role, url, home, writes=50)

    threads = [threading.Thread(target=run, args=m) for m in machines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    verdict = team_load.check(pg_url, machines, results)
    assert (verdict.lost, verdict.leaks, verdict.unseen_shared, verdict.errors) == (0, 0, 0, 0)
    assert verdict.stored == 4 * 50
    assert all(r.own_found > 0 for r in results)  # the searches that found no leak do find personal memories


def test_a_teammate_opening_a_database_the_owner_has_not_migrated_is_told_to_ask_the_owner(pg_role, tmp_path):
    from memory.errors import StoreUnavailable

    home = tmp_path / "home-carol"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"database": pg_role("carol").url}), encoding="utf-8")
    with pytest.raises(StoreUnavailable, match="001_initial.*admin to open it once with this MAPLE as that role"):
        Store.open(config_mod.load(home=home), HashEmbedder(64))


def test_a_teammate_is_told_when_the_owner_has_not_made_the_vector_table(pg_url, pg_role, tmp_path):
    from memory.errors import StoreUnavailable

    owner = pg_role("owner")
    admin(pg_url, f"GRANT CREATE ON SCHEMA public TO {owner.name}")
    homes = {}
    for name, role in (("owner", owner), ("dave", pg_role("dave"))):
        homes[name] = tmp_path / f"home-{name}"
        homes[name].mkdir()
        (homes[name] / "config.json").write_text(json.dumps({"database": role.url}), encoding="utf-8")
    Store.open(config_mod.load(home=homes["owner"]), None).close()  # no model: tables, no vector table
    with Store.open(config_mod.load(home=homes["dave"]), HashEmbedder(64)) as store:
        with pytest.raises(StoreUnavailable, match="no vector table yet.*open it once as that role"):
            Memories(store, PROJECT).add(ALICE_PROJECT)


# -- switching the team's embedding model -----------------------------------------------------------


def vector_column(role: PgRole) -> str:
    return rows_as(
        role,
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memory_vec'::regclass AND attname = 'embedding'",
    )[0][0]


def team_state(role: PgRole) -> dict:
    """What a reindex changes in the database, read as `role`."""
    return {
        "column": vector_column(role),
        "reindex_table": rows_as(role, "SELECT to_regclass('memory_vec_reindex') IS NOT NULL")[0][0],
        "meta": dict(rows_as(role, "SELECT key, value FROM meta WHERE key LIKE 'reindex%' OR key LIKE 'embedding%'")),
    }


def test_a_teammate_running_reindex_is_told_to_ask_the_owner_and_nothing_changes(team, capsys, tmp_path):
    from memory import cli

    alice = team("alice")
    alice.app(PROJECT).add(ALICE_PROJECT)
    before = team_state(alice.role)
    for args in (["reindex", "--model", "hash-32"], ["reindex", "--model", "hash-32", "--dry-run"]):
        code = cli.main(["--home", str(tmp_path / "home-alice"), *args])
        out, err = capsys.readouterr()
        assert code != 0 and out == "" and "Traceback" not in err
        assert "only the role that owns MAPLE's tables may do" in err
        assert "ask the team database's admin to run the reindex as that role" in err
    assert (
        team_state(alice.role)
        == before
        == {
            "column": "vector(64)",
            "reindex_table": False,
            "meta": {"embedding_model": "hash-64", "embedding_dim": "64"},
        }
    )
    # doctor names the owner too, and does not call the pending switch a broken database
    (tmp_path / "home-alice" / "config.json").write_text(
        json.dumps({"database": alice.role.url, "embedding_model": "hash-32"}), encoding="utf-8"
    )
    cli.main(["--home", str(tmp_path / "home-alice"), "--json", "doctor", "--no-model"])
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert checks["database"]["ok"] is True
    assert checks["model switch"]["ok"] is False and "hash-32" in checks["model switch"]["detail"]
    assert checks["model switch"]["fix"].startswith(
        "ask the team database's admin to run `maple-memory reindex --model hash-32` as the role that owns"
    )


def test_the_owners_reindex_switches_the_team_and_each_teammate_re_embeds_their_own_global_memories(
    team, capsys, tmp_path
):
    from memory import cli, embed
    from memory.retrieval import ranking
    from memory.store import indexes as indexes_mod
    from memory.store import stored_model

    alice, bob = team("alice"), team("bob")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global")["memory"]
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    bobs = bob.app(PROJECT).add("Bob rotates the billing API keys on the first Monday", scope="global")["memory"]
    for _ in range(6):  # psycopg prepares a statement run this often: the swap must not break prepared ones
        assert alice.app(PROJECT).search("therapist Quinnfeather")["results"][0]["id"] == mine["id"]
        assert indexes_mod.load_vectors(alice.store, [shared["id"]])[0] == [shared["id"]]

    code = cli.main(["--home", str(tmp_path / "home-owner"), "--json", "reindex", "--model", "hash-32"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    # The owner sees the project memory and none of the teammates' global ones.
    assert (report["model"], report["previous_model"], report["embedded"], report["swapped"]) == (
        "hash-32",
        "hash-64",
        1,
        True,
    )
    assert team_state(alice.role) == {
        "column": "vector(32)",
        "reindex_table": False,
        "meta": {"embedding_model": "hash-32", "embedding_dim": "32"},
    }
    indexes = {r[0] for r in rows_as(alice.role, "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_vec'")}
    assert indexes == {"memory_vec_pkey", "memory_vec_hnsw", "memory_vec_scope"}
    assert rows_as(alice.role, "SELECT rowid FROM memory_vec") == [(shared["id"],)]  # the grant is back

    # A teammate's process opened before the swap: keyword search still answers, without vectors,
    # and statements psycopg prepared before it (run 6 times above) still run.
    assert indexes_mod.load_vectors(alice.store, [shared["id"]])[0] == []
    found = alice.app(PROJECT).search("therapist Quinnfeather")["results"]
    assert found[0]["id"] == mine["id"] and "vector" not in found[0]["channels"]
    assert alice.app(PROJECT).search("staging database port")["results"][0]["id"] == shared["id"]
    assert alice.store.missing_vectors_count() == 1 and alice.store.reindexed_since()

    # Each teammate's MAPLE, opened afresh, takes the database's model and embeds what it lacks.
    for name, own in (("alice", mine), ("bob", bobs)):
        cfg = config_mod.load(home=tmp_path / f"home-{name}")
        with Store.open(cfg, embed.from_config(cfg, stored_model(cfg))) as fresh:
            assert (fresh.embedder.name, fresh.vector_dim) == ("hash-32", 32)
            assert fresh.missing_vectors_count() == 1
            assert fresh.embed_missing() == 1 and fresh.missing_vectors_count() == 0
            hit = ranking.search(fresh, ranking.make_query(own["content"][:40], ["global", PROJECT]), record=False)[0]
            assert hit.memory.id == own["id"] and hit.channels.get("vector", 0) > 0
    # The row policy is back: a personal memory's vector is its author's alone.
    assert rows_as(alice.role, f"SELECT count(*) FROM memory_vec WHERE rowid = {mine['id']}") == [(1,)]
    assert rows_as(bob.role, f"SELECT count(*) FROM memory_vec WHERE rowid = {mine['id']}") == [(0,)]
    assert rows_as(alice.role, "SELECT count(*) FROM memory_vec") == [(2,)]


def test_an_owner_who_sees_no_memory_still_switches_the_model_and_teammates_fill_the_new_table(team, tmp_path):
    from memory import embed
    from memory.store import backup, stored_model

    alice = team("alice")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global")["memory"]
    with Store.open(config_mod.load(home=tmp_path / "home-owner"), None) as owner:
        report = backup.reindex(owner, HashEmbedder(32))
    assert (report.total, report.embedded, report.swapped) == (0, 0, True)
    assert team_state(alice.role)["column"] == "vector(32)"  # a table for the teammates' vectors
    cfg = config_mod.load(home=tmp_path / "home-alice")
    with Store.open(cfg, embed.from_config(cfg, stored_model(cfg))) as fresh:
        assert fresh.embed_missing() == 1
    assert rows_as(alice.role, "SELECT rowid FROM memory_vec") == [(mine["id"],)]


def test_after_the_owners_model_switch_a_teammate_on_auto_follows_it_and_only_a_named_model_is_a_mismatch(
    team, capsys, tmp_path
):
    from memory import cli, embed
    from memory.store import stored_model

    alice = team("alice")
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global")["memory"]
    alice.app(PROJECT).add(ALICE_PROJECT)
    assert cli.main(["--home", str(tmp_path / "home-owner"), "--json", "reindex", "--model", "hash-32"]) == 0
    capsys.readouterr()

    def doctor(**settings: object) -> dict:
        (tmp_path / "home-alice" / "config.json").write_text(
            json.dumps({"database": alice.role.url, **settings}), encoding="utf-8"
        )
        cli.main(["--home", str(tmp_path / "home-alice"), "--json", "doctor"])
        return {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}

    checks = doctor()  # embedding_model: "auto", the default
    assert checks["model switch"]["ok"] is True, checks["model switch"]
    assert checks["model switch"]["detail"].startswith("this database's vectors are from hash-32; ")
    assert "the model its owner chose" in checks["model switch"]["detail"]
    assert checks["database"]["ok"] is True
    assert checks["embedding model"]["ok"] is True and "hash-32 works offline" in checks["embedding model"]["detail"]
    # Alice's MAPLE embeds her personal memory with the team's model, as before.
    cfg = config_mod.load(home=tmp_path / "home-alice")
    with Store.open(cfg, embed.from_config(cfg, stored_model(cfg))) as fresh:
        assert fresh.embedder.name == "hash-32" and fresh.embed_missing() == 1
    assert rows_as(alice.role, f"SELECT count(*) FROM memory_vec WHERE rowid = {mine['id']}") == [(1,)]

    checks = doctor(embedding_model="hash-64")  # a model named: a switch to ask the owner for
    assert checks["model switch"]["ok"] is False
    assert "hash-64" in checks["model switch"]["detail"] and "hash-32" in checks["model switch"]["detail"]
    assert checks["model switch"]["fix"].startswith(
        "ask the team database's admin to run `maple-memory reindex --model hash-64`"
    )


def test_each_role_queues_sees_and_claims_only_its_own_jobs(team):
    """A job names where its files are (a transcript's path, a project folder) and runs there: a
    teammate's engine never takes it (before, the owner's engine harvested Alice's transcript and
    stored the memories under its own name), nor does a teammate's repeat collapse into it."""
    from memory.store import jobs

    alice, bob = team("alice"), team("bob")
    payload = {"path": "/home/alice/.claude/projects/billing/s-alice.jsonl", "scope": PROJECT}
    mine = jobs.enqueue(alice.store, "harvest", payload, dedup_key="harvest:s-alice")
    assert jobs.claim(bob.store, "bob-worker", kinds=["harvest"]) is None
    assert "s-alice" not in json.dumps(rows_as(bob.role, "SELECT payload, dedup_key FROM jobs"))
    theirs = jobs.enqueue(bob.store, "harvest", {"path": "/home/bob/s.jsonl"}, dedup_key="harvest:s-alice")
    assert theirs != mine  # the same key queues Bob's own job, not an update of Alice's
    again = jobs.enqueue(alice.store, "harvest", payload, dedup_key="harvest:s-alice")
    assert again == mine  # a repeat within Alice's jobs still collapses
    job = jobs.claim(alice.store, "alice-worker", kinds=["harvest"])
    assert job is not None and job.id == mine
    assert {a for (a,) in rows_as(alice.role, "SELECT author FROM jobs")} == {alice.role.name}


def test_a_memory_deleted_for_good_says_who_deleted_it_and_a_personal_one_stays_private(team):
    alice, bob = team("alice"), team("bob")
    shared = alice.app(PROJECT).add(ALICE_PROJECT)["memory"]
    bob.app(PROJECT).forget(shared["id"], permanent=True)
    with pytest.raises(
        NotFound, match=rf"no memory {shared['id']} \(it was deleted for good on .* by {bob.role.name}\)"
    ):
        alice.store.get(shared["id"])
    mine = alice.app(PROJECT).add(ALICE_SECRET, scope="global")["memory"]
    alice.app(PROJECT).forget(mine["id"], permanent=True)
    with pytest.raises(NotFound, match=f"by {alice.role.name}"):
        alice.store.get(mine["id"])
    with pytest.raises(NotFound) as seen:
        bob.store.get(mine["id"])
    assert "deleted" not in str(seen.value) and alice.role.name not in str(seen.value)
