"""A vector for every memory: what is stored without one is reported (doctor), said (search, CLI
and MCP) and fixed (maintain); the hooks' harvest gives vectors at once, with the engine off or on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cli_helpers import project, run, run_json  # noqa: F401  (project: autouse fixture)
from mcp import Client

from memory import config as config_mod
from memory import remote
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


def test_doctor_does_not_fail_memories_a_running_engine_is_embedding(project):
    """A blind trial's doctor said FAIL right after an import, while the engine embedded the turns."""
    from memory.cli.program import _vectors_check

    stored_without_vectors(project, "The staging database listens on port 6543")
    config = config_mod.load()
    waiting = _vectors_check(config, {"model": "ready"})
    assert waiting.ok is None and "1 memories wait for the running engine" in waiting.detail
    assert _vectors_check(config, {"model": "loading"}).ok is None
    assert _vectors_check(config, {}).ok is False  # no engine: nothing embeds them until `maintain`


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
    # A model still loading: the server embeds what is missing once one is there.
    loading = HashEmbedder(64)
    loading.loaded = False  # type: ignore[attr-defined]
    loading.start = lambda: None  # type: ignore[attr-defined]
    loading.wait = lambda: None  # type: ignore[attr-defined]
    async with Client(build_server(config, loading, project=str(project)), mode="legacy") as client:
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


# -- the hooks' harvest: vectors at once, with the engine off or on ------------------------------------

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"


def env_for(home: Path, resident: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_HOOK_RESIDENT_MINUTES=resident)
    return env


def user_line(text: str, cwd: Path, n: int = 1) -> str:
    return json.dumps(
        {
            "type": "user",
            "origin": {"kind": "human"},
            "message": {"role": "user", "content": text},
            "uuid": f"u{n}",
            "sessionId": "s1",
            "timestamp": f"2026-11-30T10:00:0{n}Z",
            "cwd": str(cwd),
        }
    )


def stop_hook(home: Path, transcript: Path, cwd: Path, resident: str) -> None:
    payload = {"hook_event_name": "Stop", "session_id": "s1", "transcript_path": str(transcript), "cwd": str(cwd)}
    done = subprocess.run(
        [sys.executable, str(RUN), "stop"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env_for(home, resident),
        cwd=str(cwd),
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == b""


def counts(home: Path) -> tuple[int, int]:
    """(memories, memories without a vector) as a reader sees them."""
    if not (home / "memory.db").exists():
        return 0, 0
    with Store.open(config_mod.load(home=home), None) as s:
        return s.count(), s.missing_vectors_count()


def test_with_the_engine_off_the_stop_hooks_harvest_stores_every_memory_with_its_vector(tmp_path):
    home, project = tmp_path / "h", tmp_path / "p"
    project.mkdir()
    transcript = project / "s.jsonl"
    transcript.write_text(user_line("Remember: the integration tests always run against port 6544.", project) + "\n")
    stop_hook(home, transcript, project, resident="0")
    settle = subprocess.run(
        [sys.executable, str(RUN), "drain", "--wait"], env=env_for(home, "0"), capture_output=True, timeout=120
    )
    assert settle.returncode == 0
    stored, without = counts(home)
    assert stored >= 1 and without == 0
    assert not remote.running(home, home / "memory.db")  # none was started: the drain had its own model


def test_with_the_engine_on_a_first_stop_hook_starts_the_engine_which_harvests_with_vectors(tmp_path):
    home, project = tmp_path / "h", tmp_path / "p"
    project.mkdir()
    transcript = project / "s.jsonl"
    transcript.write_text(user_line("Remember: the integration tests always run against port 6544.", project) + "\n")
    try:
        stop_hook(home, transcript, project, resident="1")  # no database yet: its drain starts the engine
        assert wait_for(lambda: counts(home)[0] >= 1)
        assert remote.running(home, home / "memory.db")
        assert wait_for(lambda: counts(home)[1] == 0)
    finally:
        remote.stop(home, home / "memory.db")


def wait_for(condition: Any, seconds: float = 90.0) -> bool:
    stop = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > stop:
            return False
        time.sleep(0.1)
    return True
