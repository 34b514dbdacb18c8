"""A vector for every memory: what is stored without one is reported (doctor), said (search, CLI
and MCP) and fixed (maintain); the hooks' harvest gives vectors at once, with the engine off or on."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import project, run, run_json  # noqa: F401  (project: autouse fixture)
from mcp import Client

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store
from server.app import build_server


def stored_without_vectors(project: Path, *texts: str) -> list[int]:
    """Memories written as a process without a model writes them (a hook, a cold command)."""
    with Store.open(config_mod.load(), None) as s:
        return [s.add(NewMemory(t, scope=str(project))).id for t in texts]


def test_doctor_reports_memories_without_vectors_with_the_fix(capsys, project):
    stored_without_vectors(project, "The staging database listens on port 6543")
    code, out, _ = run(capsys, "doctor", "--no-model")
    assert code == 1
    assert "FAIL  vectors: 1 memories have no vector: search finds them by keywords only" in out
    assert "fix: `maple-memory maintain` embeds them" in out


def test_a_search_over_memories_without_vectors_says_vectors_were_not_used(capsys, project):
    first, _ = stored_without_vectors(project, "The staging database listens on port 6543", "We deploy on Fridays")
    code, out, err = run(capsys, "search", "staging database port")
    assert code == 0 and "port 6543" in out
    assert f"vectors were not used for 1 of these results (#{first})" in err
    assert "`maple-memory maintain` embeds them" in err
    assert run_json(capsys, "search", "staging database port")["without_vectors"] == [first]


async def test_the_mcp_search_tool_says_which_results_have_no_vector(project):
    first, second = stored_without_vectors(
        project, "The staging database listens on port 6543", "Staging deploys on Fridays"
    )
    config = config_mod.load()
    async with Client(build_server(config, HashEmbedder(64), project=str(project)), mode="legacy") as client:
        found = await client.call_tool("memory_search", {"query": "staging"})
    assert not found.is_error
    assert sorted(found.structured_content["without_vectors"]) == [first, second]


def test_maintain_embeds_what_is_missing_and_then_doctor_and_search_are_content(capsys, project):
    ids = stored_without_vectors(project, "The staging database listens on port 6543", "We deploy on Fridays")
    report = run_json(capsys, "maintain")
    assert report["counts"]["vectors"] == 2
    assert sorted(c["memory_id"] for c in report["changes"] if c["step"] == "vectors") == ids
    assert run_json(capsys, "stats")["without_vectors"] == 0
    code, out, _ = run(capsys, "doctor", "--no-model")
    assert code == 0 and "ok    vectors: every memory has its vector (hash-64)" in out
    _, _, err = run(capsys, "search", "staging database port")
    assert "vectors were not used" not in err
    assert json.dumps(run_json(capsys, "maintain")["counts"]).find("vectors") == -1  # nothing left to do
