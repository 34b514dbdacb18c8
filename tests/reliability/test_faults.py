"""Faults from the environment: a full disk, a read-only home, a database locked by another
process, a corrupt database file, a missing embedding model, a worker dying mid-job.

Each must give a clear error (one that names the problem and what to do) or a clean degradation
(keyword search without the model), never a crash loop (the server keeps answering and recovers
once the fault is gone, without a restart), and the hooks stay fail-open: exit 0, nothing on
stdout. The small filesystems are tmpfs mounts made for the test (root only; skipped otherwise).
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memory import config as config_mod
from memory.app.worker import HANDLERS
from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, jobs
from reliability import harness
from server.app import build_server

PROJECT = "/work/fault-project"
CANNOT_MOUNT = harness.can_mount()
needs_mount = pytest.mark.skipif(CANNOT_MOUNT is not None, reason=CANNOT_MOUNT or "")
RECALL = "Which port does the fault-test database listen on?"


def seed(home: Path, n: int = 5, **settings: Any) -> Config:
    cfg = config_mod.load(home=home, env={}, **settings)
    with Store.open(cfg, HashEmbedder(64)) as s:
        s.add_many(
            [
                NewMemory(f"The fault-test database listens on port 54{n}{i} in project {i}", scope=PROJECT)
                for i in range(n)
            ]
        )
    return cfg


def server(cfg: Any) -> Client:
    return Client(build_server(cfg, HashEmbedder(64), project=PROJECT), mode="legacy")


def clear(text: str, *words: str) -> None:
    """A tool or CLI error a person can act on: specific, no SQLite internals, names the problem."""
    assert not harness.OPAQUE_TOOL_ERROR.match(text.strip()), f"opaque error: {text!r}"
    assert not harness.SQLITE_LEAKS.search(text), f"raw SQLite error: {text!r}"
    assert any(w in text.lower() for w in words), f"{text!r} does not say {words}"


def hooks_fail_open(home: Path, cwd: Path, transcript: Path | None = None) -> list[str]:
    """Run every hook event against `home`: each must exit 0 and print nothing (or one valid
    hook document). Returns what they printed, for the caller to look at."""
    transcript = transcript or cwd / "t.jsonl"
    if not transcript.exists():
        transcript.write_text(
            harness.transcript_line(
                "user",
                "Please remember that the fault service config lives in fault.toml",
                session="s",
                cwd=str(cwd),
                n=0,
            )
            + "\n"
        )
    printed = []
    for event, payload in [
        ("session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        ("user-prompt-submit", {"hook_event_name": "UserPromptSubmit", "prompt": RECALL}),
        ("stop", {"hook_event_name": "Stop", "stop_hook_active": False}),
        ("pre-compact", {"hook_event_name": "PreCompact", "trigger": "auto"}),
        ("session-end", {"hook_event_name": "SessionEnd", "reason": "other"}),
    ]:
        payload.update({"session_id": "fault-session", "cwd": str(cwd), "transcript_path": str(transcript)})
        r = harness.run_hook(event, payload, home, cwd=cwd, timeout=60)
        assert r.returncode == 0, (event, r.stderr)
        assert r.stderr == b"", (event, r.stderr)
        out = r.stdout.decode()
        if out:
            assert event in ("session-start", "user-prompt-submit"), (event, out)
            doc = json.loads(out)
            # SessionStart tells the user why memory is off (systemMessage: shown, not sent to the model)
            assert list(doc) == ["hookSpecificOutput"] or (event == "session-start" and list(doc) == ["systemMessage"])
        printed.append(out)
    return printed


def cli(home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [harness.PY, "-m", "memory.cli", *args],
        env=env or harness.env_for(home),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# -- a full disk --------------------------------------------------------------------------------


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the filesystem holding `folder` to `leave` free bytes with one filler file."""
    filler = folder / "filler"
    with filler.open("wb") as f:
        try:
            while os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize > leave + 65536:
                f.write(b"\0" * 65536)
                f.flush()
            f.write(b"\0" * max(0, os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize - leave))
            f.flush()
        except OSError:
            pass  # full already
    return filler


@needs_mount
async def test_a_disk_that_fills_up_under_the_server_gives_a_clear_error_and_it_recovers_without_a_restart(tmp_path):
    mnt = tmp_path / "disk"
    with harness.tmpfs(mnt, "6m"):
        home = mnt / "home"
        cfg = seed(home)
        filler = fill(mnt, leave=200_000)
        rng = random.Random(3)
        async with server(cfg) as client:
            error = None
            for i in range(400):
                body = " ".join(harness.word(rng, 4) for _ in range(1500))  # ~13 KB of fresh words
                r = await client.call_tool("memory_store", {"content": f"Filler memory {i}: {body}"})
                if r.is_error:
                    error = harness.tool_text(r)
                    break
            assert error is not None, "the disk never filled up"
            clear(error, "full", "space")
            # Reading still works while the disk is full.
            found = await client.call_tool("memory_search", {"query": "fault-test database port"})
            assert not found.is_error, harness.tool_text(found)
            assert found.structured_content["results"]
            got = await client.call_tool("memory_get", {"ids": [1]})
            assert not got.is_error
            # Space comes back: the same server stores again, no restart.
            filler.unlink()
            again = await client.call_tool("memory_store", {"content": "Stored after the disk had room again"})
            assert not again.is_error, harness.tool_text(again)
            # The long memories' parts get their vectors in the background, the ones the full disk
            # stopped included, once there is room again.
            for _ in range(240):
                stats = await client.call_tool("memory_stats", {})
                if stats.structured_content["without_vectors"] == 0:
                    break
                await anyio.sleep(0.5)
        assert harness.check_database(home / "memory.db", home=home)["problems"] == []


@needs_mount
async def test_a_disk_already_full_at_start_gives_clear_errors_and_the_hooks_fail_open(tmp_path):
    mnt = tmp_path / "disk"
    project = tmp_path / "project"
    project.mkdir()
    with harness.tmpfs(mnt, "6m"):
        home = mnt / "home"
        cfg = seed(home)
        for p in home.glob("memory.db-*"):  # a clean shutdown: the next open must create -wal and -shm
            p.unlink()
        fill(mnt)
        async with server(cfg) as client:
            for tool, args in [("memory_store", {"content": "anything at all"}), ("memory_search", {"query": "port"})]:
                r = await client.call_tool(tool, args)
                if r.is_error:
                    clear(harness.tool_text(r), "full", "space")
        r = cli(home, "add", "a memory that cannot be written")
        assert r.returncode == 1
        clear(r.stderr, "full", "space")
        hooks_fail_open(home, project)


# -- a read-only home ---------------------------------------------------------------------------


@needs_mount
async def test_a_read_only_home_gives_clear_errors_and_the_hooks_fail_open(tmp_path):
    mnt = tmp_path / "ro"
    project = tmp_path / "project"
    project.mkdir()
    with harness.tmpfs(mnt, "8m"):
        home = mnt / "home"
        cfg = seed(home)
        harness.remount(mnt, "ro")
        async with server(cfg) as client:
            for tool, args in [
                ("memory_store", {"content": "anything at all"}),
                ("memory_search", {"query": "port"}),
                ("memory_get", {"ids": [1]}),
                ("memory_forget", {"id": 1}),
            ]:
                r = await client.call_tool(tool, args)
                if r.is_error:  # a read may also degrade to working read-only; a failure must be clear
                    clear(harness.tool_text(r), "read-only", "not writable", "permission")
                else:
                    assert tool in ("memory_search", "memory_get"), f"{tool} wrote to a read-only home"
            assert (await client.call_tool("memory_surface", {"prompt": RECALL})).is_error is False
        for args in (("add", "cannot be stored"), ("search", "port")):
            r = cli(home, *args)
            if r.returncode:
                assert r.returncode == 1
                clear(r.stderr, "read-only", "not writable", "permission")
        hooks_fail_open(home, project)
        harness.remount(mnt, "rw")
        assert harness.check_database(home / "memory.db", home=home)["problems"] == []


# -- a database locked by another process -------------------------------------------------------


class Locker:
    """Another process holding `BEGIN EXCLUSIVE` on the database until released."""

    def __init__(self, path: Path):
        code = (
            "import sys, sqlean; c = sqlean.connect(sys.argv[1], isolation_level=None); "
            "c.execute('BEGIN EXCLUSIVE'); print('held', flush=True); sys.stdin.read(); c.execute('ROLLBACK')"
        )
        self.proc = subprocess.Popen([harness.PY, "-c", code, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout.readline().strip() == b"held"

    def release(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(30)
            self.proc.stdout.close()


async def test_a_locked_database_gives_a_clear_error_for_writes_reads_keep_working_and_writes_resume(home, tmp_path):
    cfg = seed(home, busy_timeout_ms=300)
    (home / "config.json").write_text(json.dumps({"busy_timeout_ms": 300}))
    project = tmp_path / "project"
    project.mkdir()
    async with server(cfg) as before:  # a session that was running when the lock was taken
        locker = Locker(cfg.db_path)
        try:
            async with server(cfg) as during:  # and one that starts while it is held
                for client in (before, during):
                    r = await client.call_tool("memory_store", {"content": "Written while the database is locked"})
                    assert r.is_error
                    clear(harness.tool_text(r), "locked")
                    found = await client.call_tool("memory_search", {"query": "fault-test database port"})
                    assert not found.is_error, harness.tool_text(found)
                    assert found.structured_content["results"]
                    assert not (await client.call_tool("memory_surface", {"prompt": RECALL})).is_error
                r = cli(home, "search", "fault-test database port")
                assert r.returncode == 0, r.stderr
                r = cli(home, "add", "cannot be stored while locked")
                assert r.returncode == 1
                clear(r.stderr, "locked")
                hooks_fail_open(home, project)
                locker.release()
                # The Stop hook above started a background harvest, a writer of its own that embeds
                # what it stores: let it finish (this test's 300 ms busy timeout is shorter than a
                # harvest on a busy machine), then writes must go through again.
                harness.settle_harvests(home)
                r = await during.call_tool("memory_store", {"content": "Written once the lock is gone"})
                assert not r.is_error, harness.tool_text(r)
        finally:
            locker.release()
        r = await before.call_tool("memory_store", {"content": "Written by the older session afterwards"})
        assert not r.is_error, harness.tool_text(r)
    harness.settle_harvests(home)  # the Stop hook handed its transcript to a background harvest
    with Store.open(cfg, HashEmbedder(64)) as s:
        assert sum("fault.toml" in m.content for m in s.list(scopes=[str(project.resolve())], limit=100)) == 1
    assert harness.check_database(cfg.db_path, home=home, fill_vectors=True)["problems"] == []


def test_the_sleep_time_worker_outlives_a_locked_database_and_drains_the_queue_afterwards(home, caplog):
    cfg = seed(home, busy_timeout_ms=200, job_backoff_seconds=0.0)
    with Store.open(cfg, HashEmbedder(64)) as s:
        job = jobs.enqueue(s, "maintain", {"dry_run": True})
    caplog.set_level(logging.WARNING, logger="maple.jobs")
    activity = jobs.Activity()
    worker = jobs.Worker(
        open_store=lambda: Store.open(cfg, HashEmbedder(64)),
        activity=activity,
        handlers=HANDLERS,
        idle_seconds=0.0,
        poll_seconds=0.05,
    )
    locker = Locker(cfg.db_path)
    try:
        worker.start()
        deadline = time.monotonic() + 30
        while not any("locked" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.02)  # waiting for the worker thread to meet the lock, not for time to pass
        assert any("locked" in r.getMessage() for r in caplog.records), "the worker never met the lock"
        assert worker.thread.is_alive(), "the worker thread died on a locked database"
        locker.release()
        with Store.open(cfg, None) as s:
            deadline = time.monotonic() + 30
            while s.conn.execute("SELECT status FROM jobs WHERE id = ?", (job,)).fetchone()[0] != "done":
                assert time.monotonic() < deadline, "the worker never ran the job after the lock was released"
                assert worker.thread.is_alive(), "the worker thread died"
                time.sleep(0.02)  # polling the worker thread's progress, not waiting for time to pass
    finally:
        locker.release()
        worker.stop()


# -- a corrupt database -------------------------------------------------------------------------


def damage(path: Path, rng: random.Random, share: float) -> None:
    """Overwrite part of some pages past the first (the header stays readable)."""
    data = bytearray(path.read_bytes())
    pages = len(data) // 4096
    for page in rng.sample(range(2, pages), max(1, int(pages * share))):
        start = page * 4096 + rng.randrange(0, 3000)
        data[start : start + 900] = rng.randbytes(900)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["garbage", "damaged pages"])
async def test_a_corrupt_database_gives_clear_errors_without_a_crash_loop_and_the_hooks_fail_open(home, tmp_path, how):
    cfg = config_mod.load(home=home, env={})
    rng = random.Random(11)
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(cfg, HashEmbedder(64)) as s:
        s.add_many(
            [
                NewMemory(
                    f"Fault-test memory {i}: {harness.word(rng, 4)} " * 20,
                    scope=str(project.resolve()),
                    entities=[("Kestrel", "thing")],
                )
                for i in range(400)
            ]
        )
        s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if how == "garbage":
        cfg.db_path.write_bytes(b"this is not a database " * 500)
    else:
        damage(cfg.db_path, rng, 0.3)  # the file still opens; some reads meet damaged pages
    errlog = tmp_path / "stderr.txt"
    with errlog.open("w") as err:
        async with harness.stdio_client(home, project, err) as client:
            for _ in range(2):  # still answering after every failure: no crash, no restart loop
                for tool, args in [
                    ("memory_store", {"content": "a new memory"}),
                    ("memory_search", {"query": "fault-test memory"}),
                    ("memory_get", {"ids": [1, 2]}),
                    ("memory_forget", {"id": 3}),
                    ("memory_context", {"query": "fault-test memory"}),
                ]:
                    r = await client.call_tool(tool, args)
                    if r.is_error:  # a damaged row may also read as missing: "no memory 3" is clear too
                        clear(harness.tool_text(r), "corrupt", "malformed", "not a database", "no memory")
                surfaced = await client.call_tool("memory_surface", {"prompt": RECALL})
                assert not surfaced.is_error
    for args in (("search", "fault-test memory"), ("add", "a new memory"), ("stats",)):
        r = cli(home, *args)
        if r.returncode:
            assert r.returncode == 1, r.stderr
            clear(r.stderr, "corrupt", "malformed", "not a database")
            assert "backup --restore" in r.stderr, r.stderr  # the command that actually restores a backup
    r = cli(home, "doctor", "--no-model")
    assert r.returncode == 1 and "FAIL" in r.stdout
    hooks_fail_open(home, project)


# -- a missing model ----------------------------------------------------------------------------


async def test_a_missing_model_degrades_to_keyword_search_and_stores_without_vectors(home, tmp_path):
    """Loads torch once to fail (a few seconds): the real model path, not a stand-in."""
    project = tmp_path / "project"
    project.mkdir()
    errlog = tmp_path / "stderr.txt"
    missing = str(tmp_path / "no-such-model")
    with errlog.open("w") as err:
        async with harness.stdio_client(home, project, err, model=missing) as client:
            stored = await client.call_tool("memory_store", {"content": "The deploy script lives in ops/ship.sh"})
            assert not stored.is_error, harness.tool_text(stored)
            for _ in range(600):  # no call waits for the model: until the load has failed it is 'loading'
                state = (await client.call_tool("memory_stats", {})).structured_content["model"]
                if state != "loading":
                    break
                await anyio.sleep(0.1)
            for _ in range(2):  # the model stays unavailable; it is not reloaded on every call
                found = await client.call_tool("memory_search", {"query": "where is the deploy script"})
                assert not found.is_error, harness.tool_text(found)
                assert found.structured_content["model"] == "unavailable"
                assert [h["id"] for h in found.structured_content["results"]] == [stored.structured_content["id"]]
                assert "bm25" in found.structured_content["results"][0]["channels"]
    log = errlog.read_text()
    assert missing in log and "could not be loaded" in log or "failed to load" in log, log[-2000:]
    assert log.count("failed to load") <= 1, "the model was loaded again and again"
    with Store.open(config_mod.load(home=home, env={}), None) as s:
        assert s.missing_vectors_count() == 1  # embed_missing fills it once a model is there
    hooks_fail_open(home, project)


@pytest.mark.slow
def test_the_cli_with_a_missing_model_stores_and_finds_by_keyword(home, tmp_path):
    env = harness.env_for(home, MAPLE_MODEL=str(tmp_path / "no-such-model"))
    r = cli(home, "add", "The release checklist is in docs/release.md", env=env)
    assert r.returncode == 0, r.stderr
    r = cli(home, "--json", "search", "release checklist", env=env)
    assert r.returncode == 0, r.stderr
    assert "docs/release.md" in json.loads(r.stdout)["results"][0]["content"]


# -- a worker dying mid-job ---------------------------------------------------------------------

WORKER = """
import sys
sys.path[:0] = [{root!r}]
from memory import config as config_mod
from memory.app.worker import HANDLERS
from memory.store import jobs
from memory.embed import HashEmbedder
from memory.store import Store
store = Store.open(config_mod.load(home={home!r}, env={{}}), HashEmbedder(64))
print("ready", flush=True)
jobs.run_one(store, "doomed-worker", HANDLERS)
print("done", flush=True)
"""


def test_a_worker_killed_mid_job_again_and_again_leaves_the_job_to_be_retried_and_done_once(home, tmp_path):
    home.mkdir(parents=True)
    (home / "config.json").write_text(json.dumps({"job_max_attempts": 20}))
    cfg = config_mod.load(home=home, env={})
    rng = random.Random(5)
    transcript = tmp_path / "t.jsonl"
    tokens = []
    with transcript.open("w") as f:
        for n in range(300):
            token, fact = harness.harvest_fact(rng)
            tokens.append(token)
            f.write(harness.transcript_line("user", fact, session="s", cwd=str(tmp_path), n=n) + "\n")
    with Store.open(cfg, HashEmbedder(64)) as s:
        job = jobs.enqueue(s, "harvest", {"transcript_path": str(transcript), "scope": PROJECT})
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(root=str(harness.ROOT), home=str(home)))
    kills = 0
    for _ in range(6):
        proc = subprocess.Popen([harness.PY, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.05, 0.6))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.communicate()
        with Store.open(cfg, None) as s:
            status, locked = s.conn.execute("SELECT status, locked_at FROM jobs WHERE id = ?", (job,)).fetchone()
            if status == "running":  # a dead worker's lease: expire it, as time passing would
                s.conn.execute("UPDATE jobs SET locked_at = locked_at - 1000 WHERE id = ?", (job,))
            elif status == "done":
                break
        assert harness.check_database(cfg.db_path, home=home)["problems"] == []
    assert kills >= 1, "no worker was killed mid-job"
    with Store.open(cfg, HashEmbedder(64)) as s:
        while s.conn.execute("SELECT status FROM jobs WHERE id = ?", (job,)).fetchone()[0] != "done":
            out = jobs.run_one(s, "survivor", HANDLERS)
            assert out is not None and out.status in ("done", "lost"), out
        status, attempts = s.conn.execute("SELECT status, attempts FROM jobs WHERE id = ?", (job,)).fetchone()
        rows = [m.content for m in s.list(scopes=[PROJECT], limit=1000)]
    assert status == "done"
    assert attempts >= 1
    # The oracle: the same job run once without interruption, on a fresh database. Ingestion may
    # merge two facts that the test embedder finds near-identical; it must merge the same ones.
    reference_home = tmp_path / "reference"
    with Store.open(config_mod.load(home=reference_home, env={}), HashEmbedder(64)) as ref:
        jobs.enqueue(ref, "harvest", {"transcript_path": str(transcript), "scope": PROJECT})
        assert jobs.run_one(ref, "reference", HANDLERS).status == "done"
        expected = [m.content for m in ref.list(scopes=[PROJECT], limit=1000)]
    assert len(expected) >= 0.95 * len(tokens)
    for token in tokens:
        want = sum(token in c for c in expected)
        assert sum(token in c for c in rows) == want, (
            f"{token}: harvested {sum(token in c for c in rows)} times after the kills, {want} without them"
        )
    assert harness.check_database(cfg.db_path, home=home)["problems"] == []


def test_processes_racing_to_create_a_fresh_home_all_succeed(home):
    """First use from several processes at once: whoever creates the database, nobody fails."""
    project = home.parent / "project"
    project.mkdir(parents=True)
    results: list[Any] = []

    def one(i: int) -> None:
        results.append(cli(home, "add", f"first-use memory number {i} from a racing process"))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.returncode for r in results] == [0] * 6, [r.stderr for r in results]
    assert harness.check_database(home / "memory.db", home=home)["problems"] == []
    with Store.open(config_mod.load(home=home, env={}), None) as s:
        assert s.count() == 6
