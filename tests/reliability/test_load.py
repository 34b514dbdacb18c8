"""Load: processes at once on one database (MCP server sessions and hook/library processes mixed),
each keeping a ledger; nothing lost, nothing duplicated, no error reaching a caller, and a
database whose tables agree afterwards (see reliability/load.py)."""

from __future__ import annotations

import json

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store
from reliability import harness, load


def _check(result: dict) -> None:
    assert load.failures(result) == [], json.dumps(result, indent=1, default=str)[:6000]
    assert result["lock_errors"] == []
    assert result["database"]["integrity_check"] == "ok"
    assert result["ops_done"] == result["processes"] * result["ops_per_process"]
    assert result["writes_checked"] > 0


@pytest.mark.short
def test_four_processes_mixing_server_sessions_and_hook_processes_lose_and_duplicate_nothing(tmp_path):
    result = load.run_load(tmp_path, processes=4, ops=30)
    harness.report("load_short", result)
    _check(result)
    assert set(result["ops_by_kind"]) == {"mcp", "lib"}
    assert {"store", "search"} <= set(result["latency_ms"])


@pytest.mark.slow
def test_sixteen_processes_of_three_hundred_operations_lose_and_duplicate_nothing(tmp_path):
    result = load.run_load(tmp_path, processes=16, ops=300, timeout=5400)
    harness.report("load", result)
    _check(result)
    assert set(result["latency_ms"]) == set(load.OPS)


def test_the_ledger_check_notices_lost_duplicated_stale_and_unaccounted_writes(tmp_path):
    """The check above could pass vacuously; here each kind of damage is made by hand."""
    home = tmp_path / "home"
    with Store.open(config_mod.load(home=home, env={}), HashEmbedder(64)) as s:
        kept = s.add(NewMemory("Load note: the Kestrel module keeps bavodekima here", scope="/p"))
        twice = s.add(NewMemory("Load note: the Marlin module keeps zufalopine here", scope="/p"))
        s.add(NewMemory("Load note: a second copy holds zufalopine as well", scope="/p"))
        stale = s.add(NewMemory("Load note: the Osprey module keeps tekorimasu here", scope="/p"))
        s.add(NewMemory("Load note: nobody wrote this one", scope="/p"))
    ledger = {
        "worker": "w",
        "project": "/p",
        "finished": True,
        "errors": [],
        "memories": {
            "bavodekima": {"id": kept.id, "state": "archived"},  # wrong state: it is live
            "zufalopine": {"id": twice.id, "state": "live"},  # duplicated
            "gonesimaru": {"id": 99, "state": "live"},  # lost
        },
        "replaced": ["tekorimasu"],
        "harvest": ["lufadenoki"],
    }
    result = load.verify(home, [ledger])
    assert len(result["lost"]) == 2  # the memory and the harvested fact
    assert len(result["duplicated"]) == 1
    assert any("bavodekima" in w for w in result["wrong_state"])
    assert any("tekorimasu" in w for w in result["wrong_state"])  # replaced text still stored
    assert stale.id in result["unexpected_memories"]
    assert load.failures(result)
