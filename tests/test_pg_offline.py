"""The hooks on a team database (a real PostgreSQL), and when it is away: a prompt goes on without
memories within the recall budget, and what a session harvests meanwhile stays in the local spool
until the database is back, then is written, never lost. "Away" is a URL whose server refuses
(nothing listens), or one that accepts and never answers (a hung server or a dropped network),
then the live URL again, as a user's config.json would have it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"
SESSION = ROOT / "tests" / "data" / "sessions" / "en01_invoicer_uv_postgres.jsonl"
REFUSED = "postgresql://maple:hunter2@127.0.0.1:1/maple"  # nothing listens on port 1


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A URL to a TCP port that accepts connections and never says a word (a hung server)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"postgresql://maple@127.0.0.1:{sock.getsockname()[1]}/maple"
    sock.close()


def use(home: Path, url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64", "database": url}), encoding="utf-8")


def hook(event: str, payload: Any, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH", "MAPLE_DATABASE_URL")}
    return subprocess.run(
        [sys.executable, str(RUN), event, *args],
        input=b"" if payload is None else json.dumps(payload).encode(),
        capture_output=True,
        env={**base, "MAPLE_HOME": str(home), "MAPLE_MODEL": "hash-64", **env},
        cwd=str(home.parent),
        timeout=120,
    )


def log(home: Path) -> str:
    path = home / "hooks.log"
    return path.read_text() if path.exists() else ""


def team_memories(url: str, tmp_path: Path) -> list[str]:
    with Store.open(config_mod.load(home=tmp_path / "reader", env={}, database=url), None) as s:
        return [r[0] for r in s.conn.execute("SELECT content FROM memories WHERE deleted_at IS NULL")]


def wait_for(check: Any, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


def stop_payload(project: Path, transcript: Path) -> dict[str, Any]:
    return {"session_id": "s1", "cwd": str(project), "transcript_path": str(transcript), "hook_event_name": "Stop"}


def harvested(contents: list[str]) -> bool:
    return any("5433" in c and "not 5432" in c for c in contents)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_text(SESSION.read_text(), encoding="utf-8")
    return path


def test_on_a_reachable_team_database_the_hooks_recall_and_harvest_into_it(
    home: Path, tmp_path: Path, pg_url: str, transcript: Path
) -> None:
    use(home, pg_url)
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add(NewMemory("The staging database listens on port 6543", scope=str(tmp_path)))
    prompt = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"}
    r = hook("user-prompt-submit", {**prompt, "prompt": "which port does the staging database listen on?"}, home)
    assert r.returncode == 0 and b"port 6543" in r.stdout, log(home)
    assert hook("stop", stop_payload(tmp_path, transcript), home).stdout == b""
    assert hook("drain", None, home, "--wait").returncode == 0
    assert harvested(team_memories(pg_url, tmp_path)), log(home)
    assert not list(home.glob("harvest-spool.jsonl*"))


@pytest.mark.parametrize("away", ["refused", "silent"])
def test_a_prompt_while_the_team_database_is_away_goes_on_without_memories_and_says_why_in_the_log(
    home: Path, tmp_path: Path, away: str, silent_server: str
) -> None:
    use(home, REFUSED if away == "refused" else silent_server)
    payload = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"}
    r = hook("user-prompt-submit", {**payload, "prompt": "which port does the staging database listen on?"}, home)
    assert r.returncode == 0 and r.stdout == b""
    said = log(home)
    if away == "refused":
        assert "cannot reach database" in said and "hunter2" not in said
    else:
        assert "recall took over 0.3s" in said  # the budget cut the wait short, not the connect timeout
    start = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
    r = hook("session-start", start, home)
    assert r.returncode == 0
    assert b"hookSpecificOutput" not in r.stdout  # no brief; at most a warning for the user


def test_a_harvest_while_the_team_database_is_away_stays_spooled_and_the_next_session_writes_it(
    home: Path, tmp_path: Path, pg_url: str, transcript: Path
) -> None:
    use(home, REFUSED)
    offline = {"MAPLE_OFFLINE_WAIT_SECONDS": "0"}  # the drain gives up at once, as after a long outage
    assert hook("stop", stop_payload(tmp_path, transcript), home, **offline).returncode == 0
    assert wait_for(lambda: "gave up waiting for the team database" in log(home)), log(home)
    assert hook("drain", None, home, "--wait", **offline).returncode == 0  # the background drain is done
    spooled = [json.loads(line) for f in home.glob("harvest-spool.jsonl*") for line in f.read_text().splitlines()]
    assert {(s["path"], s["scope"]) for s in spooled} == {(str(transcript), str(tmp_path))}
    use(home, pg_url)  # the database is back
    start = {"session_id": "s2", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
    assert hook("session-start", start, home).returncode == 0
    assert hook("drain", None, home, "--wait").returncode == 0  # waits for the drain SessionStart started
    assert harvested(team_memories(pg_url, tmp_path)), log(home)
    assert not list(home.glob("harvest-spool.jsonl*"))
    # Harvested once: a later harvest of the same transcript finds nothing new (its cursor moved).
    before = len(team_memories(pg_url, tmp_path))
    assert hook("stop", stop_payload(tmp_path, transcript), home).returncode == 0
    assert hook("drain", None, home, "--wait").returncode == 0
    assert len(team_memories(pg_url, tmp_path)) == before


def test_a_drain_that_finds_the_team_database_away_writes_the_harvest_as_soon_as_it_is_back(
    home: Path, tmp_path: Path, pg_url: str, transcript: Path
) -> None:
    use(home, REFUSED)
    assert hook("stop", stop_payload(tmp_path, transcript), home).returncode == 0
    assert wait_for(lambda: "team database unreachable, harvest requests kept in the spool" in log(home)), log(home)
    assert list(home.glob("harvest-spool.jsonl*"))
    use(home, pg_url)  # back (the waiting drain reads the configuration again before each try)
    assert wait_for(lambda: harvested(team_memories(pg_url, tmp_path))), log(home)
    assert wait_for(lambda: not list(home.glob("harvest-spool.jsonl*")))
    assert hook("drain", None, home, "--wait").returncode == 0  # nothing left running


def test_an_engine_is_named_by_the_team_database_and_role_whatever_the_folder_and_never_by_the_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory import remote
    from memory.app import client

    url = "postgresql://alice:hunter2@db.example:5432/maple"
    ids = set()
    for folder in (tmp_path, ROOT):
        monkeypatch.chdir(folder)
        ids.add(remote.engine_id(config_mod.load(home=tmp_path, env={}, database=url).db_path))
    assert len(ids) == 1  # a URL is not a path relative to the caller's folder
    assert remote.engine_id(Path(url.replace("hunter2", "s3cret"))) in ids
    assert remote.engine_id(Path(url.replace("alice", "bob"))) not in ids  # each role sees other rows
    assert remote.team_database(Path(url)) == "postgresql://alice@db.example:5432/maple?[]"
    team = config_mod.load(home=tmp_path, env={"MAPLE_HOOK_RESIDENT_MINUTES": "30"}, database=url)
    assert client.engine_enabled(team)


@pytest.fixture(scope="module")
def own_server() -> Iterator[Any]:
    """A private PostgreSQL of this module's own, to stop and start again (the session's is shared)."""
    import pg_support

    try:
        server = pg_support.start()
    except pg_support.PgUnavailable as exc:
        pytest.skip(str(exc))
    yield server
    server.stop()


def test_while_postgresql_is_stopped_prompts_fail_open_and_a_harvest_is_written_once_it_restarts(
    home: Path, tmp_path: Path, own_server: Any, transcript: Path
) -> None:
    url = own_server.create_database()
    use(home, url)
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add(NewMemory("The staging database listens on port 6543", scope=str(tmp_path)))
    own_server.pause()
    try:
        prompt = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit"}
        r = hook("user-prompt-submit", {**prompt, "prompt": "which port does the staging database listen on?"}, home)
        assert r.returncode == 0 and r.stdout == b""
        assert "cannot reach database" in log(home)
        wait = {"MAPLE_OFFLINE_WAIT_SECONDS": "120"}
        assert hook("stop", stop_payload(tmp_path, transcript), home, **wait).returncode == 0
        assert wait_for(lambda: "harvest requests kept in the spool" in log(home)), log(home)
    finally:
        own_server.resume()
    assert wait_for(lambda: harvested(team_memories(url, tmp_path)), 120), log(home)
    assert wait_for(lambda: not list(home.glob("harvest-spool.jsonl*")))
    assert hook("drain", None, home, "--wait").returncode == 0  # the waiting drain is done
    assert "The staging database listens on port 6543" in team_memories(url, tmp_path)  # nothing lost either


def test_the_engine_serves_a_team_database_to_the_prompt_hook_which_never_imports_the_driver_and_fails_open_while_it_is_down(
    tmp_path: Path, own_server: Any
) -> None:
    from memory import remote

    home = tmp_path / "h"  # a short path: a Unix socket's must stay under ~100 bytes
    url = own_server.create_database()
    use(home, url)
    config = config_mod.load(home=home)
    with Store.open(config, HashEmbedder(64)) as s:
        s.add(NewMemory("The staging database listens on port 6543", scope=str(tmp_path)))
    env = {**os.environ, "MAPLE_HOME": str(home), "MAPLE_MODEL": "hash-64", "MAPLE_HOOK_RESIDENT_MINUTES": "1"}
    env.pop("PYTHONPATH", None)
    assert remote.start(home, config.db_path, env=env)
    try:
        assert remote.wait_until_up(home, config.db_path, 60)
        prompt = {
            "session_id": "s1",
            "cwd": str(tmp_path),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "which port does the staging database listen on?",
        }
        resident = {"MAPLE_HOOK_RESIDENT_MINUTES": "1"}
        sessions = iter(range(1000))

        def served() -> bool:  # a new session each time: a memory is shown once per session
            r = hook("user-prompt-submit", {**prompt, "session_id": f"s{next(sessions)}"}, home, **resident)
            return b"port 6543" in r.stdout

        assert wait_for(served, 60), log(home)  # the first answers may miss the budget while the engine warms up
        for attempt in range(5):  # on a loaded machine an answer can still miss the budget now and then
            traced = subprocess.run(
                [sys.executable, "-X", "importtime", str(RUN), "user-prompt-submit"],
                input=json.dumps({**prompt, "session_id": f"traced{attempt}"}).encode(),
                capture_output=True,
                env={**env, "CLAUDE_PROJECT_DIR": ""},
                cwd=str(home.parent),
                timeout=120,
            )
            assert b"psycopg" not in traced.stderr and b"memory.store" not in traced.stderr
            if b"port 6543" in traced.stdout:
                break
        assert b"port 6543" in traced.stdout, log(home)
        # A teammate's write after the engine warmed: its search (a pooled connection, the in-memory
        # copies catching up, vectors read from the database) finds it by meaning and by words.
        with Store.open(config, HashEmbedder(64)) as s:
            s.add(NewMemory("The nightly invoice export runs at 02:30 UTC", scope=str(tmp_path)))
        for _ in range(3):  # pooled connections are handed out in turn: each must read vectors
            found = remote.call(
                home, config.db_path, "search", ["nightly invoice export"], {"record": False}, project=str(tmp_path)
            )
            assert found["results"][0]["content"] == "The nightly invoice export runs at 02:30 UTC", found
            assert "vector" in found["results"][0]["channels"], found
        own_server.pause()
        try:
            r = hook("user-prompt-submit", {**prompt, "session_id": "down"}, home, **resident)
            assert r.returncode == 0 and r.stdout == b""
            assert "cannot be reached" in log(home) and "no memories for this prompt" in log(home)
            assert remote.call(home, config.db_path, "ping", project="", timeout=2.0)["unavailable"]
        finally:
            own_server.resume()
        assert wait_for(served, 60), log(home)  # the same engine reconnected
    finally:
        remote.stop(home, config.db_path)
