"""A backup of a team database keeps who wrote each memory (the database's record), not the
name of whoever ran the backup."""

from __future__ import annotations

import json

from memory import config as config_mod
from memory.cli.program import main
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, db

PROJECT = "github.com/acme/billing"


def test_a_team_backup_keeps_each_memorys_author(tmp_path, home, pg_url, pg_role, capsys):
    Store.open(config_mod.load(home=tmp_path / "owner", env={}, database=pg_url), HashEmbedder(64)).close()
    alice, bob = pg_role("alice"), pg_role("bob")
    for role, text in [(alice, "staging listens on port 6543"), (bob, "we chose procrastinate over Celery")]:
        with Store.open(config_mod.load(home=tmp_path / role.name, env={}, database=role.url), HashEmbedder(64)) as s:
            s.add(NewMemory(content=text, scope=PROJECT))
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"database": alice.url, "embedding_model": "hash-64", "user": "x"}))
    assert main(["backup", "--json"]) == 0
    copy = json.loads(capsys.readouterr().out)["file"]
    conn = db.connect(copy, vectors=False, readonly=True)
    try:
        rows = dict(conn.execute("SELECT content, author FROM memories WHERE parent_id IS NULL"))
    finally:
        conn.close()
    assert rows == {"staging listens on port 6543": alice.name, "we chose procrastinate over Celery": bob.name}
