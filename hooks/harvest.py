"""Stop, PreCompact and SessionEnd: queue the session's transcript for harvesting, then return.

The hook does the one thing that must not be lost, fast: it records a `harvest_transcript` job
({path, scope}) in the jobs table, one INSERT on a bare connection (no store, no extraction
imports). Repeated requests for a transcript collapse into the queued job. The work is done
elsewhere: by the MCP server's idle worker (warm, with the model), or by a detached
`run.py drain` process the hook starts when none is running (it outlives the session, so
SessionEnd's 1.5 s and `claude -p`'s teardown do not cut it short).

Draining reads the transcript from where the last harvest stopped (`transcript_cursors`),
extracts (memory.extraction) and ingests (memory.ingest: dedup, supersession), all inside one
write transaction: two harvests of one transcript queue on the lock and the second finds nothing
new; a crash before the commit leaves the cursor where it was, so lines are read again, never
lost. Nothing is printed: output on Stop would keep the conversation going.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hooks import common

JOB_KIND = "harvest_transcript"
BUSY_TIMEOUT_MS = {"Stop": 2_000, "PreCompact": 1_000, "SessionEnd": 400}  # SessionEnd hooks share 1.5 s
WATCHDOG = {"Stop": 20.0, "PreCompact": 10.0, "SessionEnd": 1.2}
LOCK_NAME = "harvest.lock"
JOB_MAX_ATTEMPTS = 5
JOB_LEASE_SECONDS = 900.0
DRAIN_SECONDS = 600.0
PRUNE_DAYS = 30.0


def transcript_of(data: dict[str, Any]) -> str:
    """The transcript path from the hook input (HookSkipped when there is none)."""
    raw = data.get("transcript_path")
    if not isinstance(raw, str) or not raw.strip():
        raise common.HookSkipped("no transcript_path in the hook input")
    path = Path(raw).expanduser()
    if path.suffix != ".jsonl":
        raise ValueError(f"transcript_path {raw!r} is not a .jsonl file")
    return str(path.absolute())


def run(data: dict[str, Any], event: str) -> None:
    """Queue the hook's transcript and make sure something will drain the queue."""
    path = transcript_of(data)
    scope = common.hook_scope(data)
    common.watchdog(WATCHDOG[event], event, on_fire=lambda: spawn_drain(path, scope))
    try:
        enqueue_fast(path, scope, BUSY_TIMEOUT_MS[event])
    except Exception as e:
        if not _is_lock(e):
            raise
        spawn_drain(path, scope)  # it waits for the lock as long as it takes, then queues the path
        raise common.HookSkipped(f"database locked; {path} handed to a background harvest") from e
    if not drain_running():
        spawn_drain(None, None)


def enqueue_fast(path: str, scope: str, busy_timeout_ms: int) -> None:
    """Queue `path` with one statement on a bare connection (the store is created if missing)."""
    from memory import config as config_mod
    from memory import db

    config = config_mod.load(busy_timeout_ms=busy_timeout_ms)
    if not config.db_path.exists():  # first use: create it with its schema, once
        common.open_store(busy_timeout_ms=busy_timeout_ms, create=True).close()
    conn = db.connect(config.db_path, busy_timeout_ms=busy_timeout_ms, vectors=False)
    try:
        enqueue(conn, path, scope)
    finally:
        conn.close()


def enqueue(conn: Any, path: str, scope: str) -> None:
    """Record a harvest job for `path`; a queued one for the same path absorbs it (the key is
    cleared when a job is claimed, so a request during a run queues a fresh job)."""
    now = time.time()
    conn.execute("INSERT INTO jobs (kind, payload, dedup_key, status, attempts, run_after, created_at, updated_at) "
                 "VALUES (?, ?, ?, 'queued', 0, ?, ?, ?) ON CONFLICT(dedup_key) DO UPDATE SET "
                 "payload = excluded.payload, run_after = min(jobs.run_after, excluded.run_after), "
                 "updated_at = excluded.updated_at",
                 (JOB_KIND, json.dumps({"path": path, "scope": scope}, sort_keys=True), f"{JOB_KIND}:{path}",
                  now, now, now))


def _is_lock(e: BaseException) -> bool:
    """Whether `e` (or what caused it) is SQLite saying another process holds the lock."""
    seen: BaseException | None = e
    while seen is not None:
        text = str(seen).lower()
        if "database is locked" in text or "database is busy" in text or "stayed locked" in text:
            return True
        seen = seen.__cause__
    return False


# -- the background drain ----------------------------------------------------------------------

def _lock_path() -> Path:
    return common.home() / LOCK_NAME


def _try_lock() -> Any:
    """An exclusive lock on <home>/harvest.lock, or None if a drain holds it (always a dummy
    lock where flock does not exist: job claiming alone keeps drains apart there)."""
    try:
        import fcntl
    except ImportError:
        return True
    common.home().mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _wait_lock() -> Any:
    try:
        import fcntl
    except ImportError:
        return True
    common.home().mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _unlock(fd: Any) -> None:
    if isinstance(fd, int):
        os.close(fd)  # closing the descriptor releases the flock


def drain_running() -> bool:
    fd = _try_lock()
    if fd is None:
        return True
    _unlock(fd)
    return False


def spawn_drain(path: str | None, scope: str | None) -> None:
    """Start `run.py drain` detached from Claude Code (it outlives the session and its hooks)."""
    import subprocess

    args = [sys.executable, str(Path(__file__).with_name("run.py")), "drain"]
    if path and scope:
        args += ["--path", path, "--scope", scope]
    kwargs: dict[str, Any] = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL,
                              "stderr": subprocess.DEVNULL, "close_fds": True}
    if os.name == "nt":
        kwargs["creationflags"] = 0x00000008 | 0x00000200  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    subprocess.Popen(args, **kwargs)


def harvest_now(store: Any, path: str, scope: str) -> dict[str, Any]:
    """Read, extract and ingest what is new in `path`, in one transaction (see the module doc)."""
    from memory import ingest

    with store.tx.atomic():
        return ingest.harvest(store, path, scope=scope)


def run_job(store: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Do one `harvest_transcript` job (the server's worker may call this too)."""
    return harvest_now(store, str(payload["path"]), str(payload["scope"]))


def drain(store: Any, *, seconds: float = DRAIN_SECONDS, worker: str | None = None) -> int:
    """Work through ready harvest jobs for up to `seconds`; return how many succeeded."""
    worker = worker or f"drain:{os.getpid()}"
    done = 0
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        now = time.time()
        with store.tx.atomic() as conn:
            row = conn.execute(
                "UPDATE jobs SET status = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1, "
                "dedup_key = NULL, updated_at = ? WHERE id = (SELECT id FROM jobs WHERE kind = ? AND "
                "((status = 'queued' AND run_after <= ?) OR (status = 'running' AND locked_at < ?)) "
                "ORDER BY id LIMIT 1) RETURNING id, payload, attempts",
                (worker, now, now, JOB_KIND, now, now - JOB_LEASE_SECONDS)).fetchone()
        if row is None:
            return done
        job_id, payload, attempts = row
        try:
            run_job(store, json.loads(payload))
        except Exception as e:  # noqa: BLE001 - recorded on the job, retried with backoff, then parked
            status = "parked" if attempts >= JOB_MAX_ATTEMPTS else "queued"
            with store.tx.atomic() as conn:
                conn.execute("UPDATE jobs SET status = ?, last_error = ?, run_after = ?, locked_by = NULL, "
                             "locked_at = NULL, updated_at = ? WHERE id = ? AND locked_by = ?",
                             (status, f"{type(e).__name__}: {e}"[:1000], time.time() + 30 * 2 ** (attempts - 1),
                              time.time(), job_id, worker))
            common.log_line("drain", f"job {job_id} failed ({status}): {type(e).__name__}: {e}")
            continue
        with store.tx.atomic() as conn:
            conn.execute("UPDATE jobs SET status = 'done', locked_by = NULL, locked_at = NULL, last_error = NULL, "
                         "updated_at = ? WHERE id = ? AND locked_by = ?", (time.time(), job_id, worker))
        done += 1
    return done


def _ready(store: Any) -> bool:
    return store.conn.execute("SELECT 1 FROM jobs WHERE kind = ? AND status = 'queued' AND run_after <= ? LIMIT 1",
                              (JOB_KIND, time.time())).fetchone() is not None


def drain_main(argv: list[str]) -> None:
    """`run.py drain [--path P --scope S] [--wait]`: queue P (if given), then drain the queue.

    One drain at a time per home (an flock on <home>/harvest.lock); `--wait` waits for a running
    one to finish instead of leaving the queue to it (scripts and tests use it to settle).
    """
    import argparse

    p = argparse.ArgumentParser(prog="run.py drain")
    p.add_argument("--path")
    p.add_argument("--scope")
    p.add_argument("--wait", action="store_true")
    args = p.parse_args(argv)
    from memory import config as config_mod
    from memory import context
    from memory.store import Store

    store = Store.open(config_mod.load(), None, vectors=False)  # the configured (long) busy timeout
    try:
        if args.path and args.scope:
            with store.tx.atomic() as conn:
                enqueue(conn, args.path, args.scope)
        while True:
            fd = _wait_lock() if args.wait else _try_lock()
            if fd is None:
                return  # a running drain takes the job: it checks the queue again before leaving
            try:
                drain(store)
                context.prune_injections(store, PRUNE_DAYS)
            finally:
                _unlock(fd)
            if not _ready(store):  # a job queued while we were letting go of the lock
                return
    finally:
        store.close()
