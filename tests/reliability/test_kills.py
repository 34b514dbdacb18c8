"""Kill -9 at random moments during stores, imports, harvests, maintenance and reindexing: the
database always opens, passes integrity_check and holds no partial memory (reliability/kills.py)."""

from __future__ import annotations

import json

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store
from reliability import harness, kills


def _check(result: dict, runs: int, mid_write_share: float) -> None:
    assert result["failed_runs"] == [], json.dumps(result, indent=1)[:6000]
    assert result["survived"] == runs
    # The kills must land mid-write, not after the work, or the test proves nothing. Where they
    # land depends on machine load, so 20 runs ask for a quarter and 200 runs for half.
    assert result["killed_while_writing"] >= int(runs * mid_write_share)
    assert all(result["by_mode"][m] for m in kills.MODES)


@pytest.mark.short
def test_twenty_write_runs_killed_at_random_moments_leave_a_whole_database(tmp_path):
    result = kills.run_kills(tmp_path, 20, seed=7)
    harness.report("kills_short", result)
    _check(result, 20, 0.25)


@pytest.mark.slow
def test_two_hundred_write_runs_killed_at_random_moments_leave_a_whole_database(tmp_path):
    result = kills.run_kills(tmp_path, 200, seed=20261202)
    harness.report("kills", result)
    _check(result, 200, 0.5)


def test_the_invariant_check_notices_every_kind_of_partial_or_orphan_row(home):
    """Each invariant broken by hand: the check must name it (else the kill test proves nothing)."""
    cfg = config_mod.load(home=home, env={})
    with Store.open(cfg, HashEmbedder(64)) as s:
        a = s.add(NewMemory("Alpha memory about Kestrel", entities=[("Kestrel", "thing")]))
        b = s.add(NewMemory("Beta memory about Marlin"))
        c = s.add(NewMemory("Gamma memory about Osprey"))
        assert harness.check_database(s.path, home=home)["problems"] == []
        s.conn.execute("DELETE FROM memory_fts WHERE rowid = ?", (a.id,))  # a memory without its FTS row
        s.conn.execute("DELETE FROM memory_vec WHERE rowid = ?", (b.id,))  # a memory without its vector
        s.conn.execute("PRAGMA foreign_keys=OFF")
        s.conn.execute("DELETE FROM memories WHERE id = ?", (c.id,))  # leaves FTS, vector and version rows
        s.conn.execute("INSERT INTO memory_entities (memory_id, entity_id, role) VALUES (?, 9999, 'mention')", (b.id,))
    problems = " | ".join(harness.check_database(home / "memory.db", home=home)["problems"])
    for words in (
        "memories without an FTS row",
        "memories without a vector",
        "FTS rows without a memory",
        "vector rows without a memory",
        "links without an entity",
    ):
        assert words in problems, problems
