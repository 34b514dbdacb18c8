"""On a team database, errors and doctor give a team's advice (the role's rights, the server, the
admin), never a SQLite file's (permissions, MAPLE_HOME, reindex, maintain), and never the password."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import psycopg

from memory import config as config_mod
from memory.cli.program import main
from memory.embed import HashEmbedder
from memory.store import Store


def team(tmp_path, home, pg_url, pg_role, base: str):
    """The owner sets the database up; `base`'s role is then this test's user (config.json)."""
    Store.open(config_mod.load(home=tmp_path / "owner", env={}, database=pg_url), HashEmbedder(64)).close()
    role = pg_role(base)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"database": role.url, "embedding_model": "hash-64"}))
    return role


def password_of(url: str) -> str:
    return url.split("@")[0].rsplit(":", 1)[1]


def doctor(capsys) -> dict:
    main(["doctor", "--json"])
    return {c["name"]: c for c in json.loads(capsys.readouterr().out)["checks"]}


def test_a_read_only_role_is_told_it_may_only_read_without_file_advice(tmp_path, home, pg_url, pg_role, capsys):
    carol = team(tmp_path, home, pg_url, pg_role, "carol")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"ALTER ROLE {carol.name} SET default_transaction_read_only = on")
    assert main(["add", "staging's database listens on port 6543"]) == 1
    err = capsys.readouterr().err
    assert "may only read" in err and "MAPLE_HOME" not in err and password_of(carol.url) not in err
    checks = doctor(capsys)
    database = checks["database"]
    assert not database["ok"] and "may only read" in database["detail"] and carol.name in database["detail"]
    assert "may read and write" not in json.dumps(checks)


def test_a_role_that_may_write_is_told_so_by_doctor(tmp_path, home, pg_url, pg_role, capsys):
    dave = team(tmp_path, home, pg_url, pg_role, "dave")
    database = doctor(capsys)["database"]
    assert database["ok"] and f"role {dave.name} may read and write" in database["detail"]


def test_doctor_on_a_refused_connect_gives_the_team_fix_and_no_file_fixes(tmp_path, home, pg_url, pg_role, capsys):
    erin = team(tmp_path, home, pg_url, pg_role, "erin")
    dbname = urlsplit(pg_url).path.lstrip("/")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"REVOKE CONNECT ON DATABASE {dbname} FROM PUBLIC, {erin.name}")
    checks = doctor(capsys)
    text = json.dumps(checks)
    assert not checks["database"]["ok"] and "CONNECT" in checks["database"]["fix"]
    assert "maintain" not in text and "reindex" not in text and "MAPLE_HOME" not in text
    assert password_of(erin.url) not in text
    assert checks["entity links"]["ok"] is None and "fix that first" in checks["entity links"]["detail"]
