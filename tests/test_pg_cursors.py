"""On a team database each role's harvest ledger (transcript_cursors: transcript paths, session
ids) is its own: a teammate neither reads it nor collides with it on the same path."""

from __future__ import annotations

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.extraction import transcript
from memory.store import Store

PATH = "/home/dev/.claude/projects/-work-billing/5f1c.jsonl"  # the same path on two machines


def cursor(offset: int, session: str) -> dict:
    return {"path": PATH, "session_id": session, "offset": offset, "inode": 7, "head": "ab12"}


def test_a_teammate_cannot_read_or_overwrite_another_roles_transcript_cursors(tmp_path, pg_url, pg_role):
    Store.open(config_mod.load(home=tmp_path / "owner", env={}, database=pg_url), HashEmbedder(64)).close()
    alice, bob = pg_role("alice"), pg_role("bob")
    a = Store.open(config_mod.load(home=tmp_path / "a", env={}, database=alice.url), HashEmbedder(64))
    b = Store.open(config_mod.load(home=tmp_path / "b", env={}, database=bob.url), HashEmbedder(64))
    try:
        transcript.save_cursor(a, cursor(100, "alice-session"))
        assert b.conn.execute("SELECT count(*) FROM transcript_cursors").fetchone()[0] == 0
        transcript.save_cursor(b, cursor(40, "bob-session"))
        transcript.save_cursor(b, cursor(60, "bob-session"))  # the update path: bob's own row
        rows = a.conn.execute("SELECT offset, session_id, author FROM transcript_cursors").fetchall()
        assert [tuple(r) for r in rows] == [(100, "alice-session", alice.name)]
        rows = b.conn.execute("SELECT offset, session_id, author FROM transcript_cursors").fetchall()
        assert [tuple(r) for r in rows] == [(60, "bob-session", bob.name)]
    finally:
        a.close()
        b.close()
