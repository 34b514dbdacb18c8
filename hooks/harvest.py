"""Stop, PreCompact and SessionEnd: turn what is new in the session's transcript into memories.

The transcript is read from where the last harvest stopped (`transcript_cursors`), extracted by
the heuristic extraction agent and ingested (dedup, supersession) by `memory.ingest.harvest`, all
inside one write transaction: two harvests of one transcript (an async Stop still running when
SessionEnd fires) queue on the lock, and the second finds nothing new. A crash before the commit
leaves the cursor where it was, so lines are read again, never lost.

Each event has a budget. A backlog too large to handle inside it, a database locked for longer
than the event can wait, or a watchdog expiry hands the transcript to a detached process
(`run.py drain`) that records a `harvest_transcript` job and works through the queue; the job
survives that process, so the server's worker or the next drain can finish it.
Nothing is printed: output on Stop would keep the conversation going.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from hooks import common

JOB_KIND = "harvest_transcript"
# event -> (how long to wait for the write lock in ms, most new transcript bytes done in-process)
POLICY = {
    "Stop": (5_000, 4_000_000),  # async: runs in the background
    "PreCompact": (2_000, 1_000_000),  # compaction waits for it
    "SessionEnd": (600, 256_000),  # every SessionEnd hook shares 1.5 s
}
WATCHDOG = {"Stop": 50.0, "PreCompact": 25.0, "SessionEnd": 1.2}
JOB_MAX_ATTEMPTS = 5
JOB_LEASE_SECONDS = 600.0
DRAIN_SECONDS = 600.0


def transcript_of(data: dict[str, Any]) -> str:
    """The transcript path from the hook input; ValueError when there is none worth reading."""
    raw = data.get("transcript_path")
    if not isinstance(raw, str) or not raw.strip():
        raise common.HookSkipped("no transcript_path in the hook input")
    path = Path(raw).expanduser()
    if path.suffix != ".jsonl":
        raise ValueError(f"transcript_path {raw!r} is not a .jsonl file")
    return str(path.absolute())


def run(data: dict[str, Any], event: str) -> None:
    """Harvest the hook's transcript, in this process when it fits the event's budget."""
    from memory import context

    path = transcript_of(data)
    scope = common.hook_scope(data)
    busy_ms, inline_limit = POLICY[event]
    common.watchdog(WATCHDOG[event], event, on_fire=lambda: spawn_drain(path, scope))
    try:
        store = common.open_store(busy_timeout_ms=busy_ms, create=True)
    except Exception as e:
        if _is_lock(e):
            spawn_drain(path, scope)
            raise common.HookSkipped(f"database locked; handed {path} to a background harvest") from e
        raise
    try:
        backlog = pending_bytes(store, path)
        if backlog > inline_limit:
            spawn_drain(path, scope)
            raise common.HookSkipped(f"{backlog} new bytes in {path}: handed to a background harvest")
        try:
            harvest_now(store, path, scope)
        except Exception as e:
            if not _is_lock(e):
                raise
            spawn_drain(path, scope)
            raise common.HookSkipped(f"database locked; handed {path} to a background harvest") from e
        if event == "SessionEnd":
            context.prune_injections(store)
    finally:
        store.close()


def harvest_now(store: Any, path: str, scope: str) -> dict[str, Any]:
    """Read, extract and ingest what is new in `path`, in one transaction (see the module doc)."""
    from memory import ingest

    with store.tx.atomic():
        return ingest.harvest(store, path, scope=scope)


def pending_bytes(store: Any, path: str) -> int:
    """How much of the transcript has not been harvested yet (0 when it does not exist)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    row = store.conn.execute("SELECT offset, inode FROM transcript_cursors WHERE path = ?", (path,)).fetchone()
    if row and row[1] == st.st_ino and row[0] <= st.st_size:
        return st.st_size - row[0]
    return st.st_size


def _is_lock(e: BaseException) -> bool:
    """Whether `e` (or what caused it) is SQLite saying another process holds the lock."""
    from memory import db

    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, db.OperationalError) and any(w in str(seen).lower() for w in ("locked", "busy")):
            return True
        if "stayed locked" in str(seen):  # StoreUnavailable's sentence for the same (memory.db.describe)
            return True
        seen = seen.__cause__
    return False


# -- the background path -----------------------------------------------------------------------

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


def enqueue(store: Any, path: str, scope: str) -> None:
    """Record a harvest job for `path` (one per transcript size, so a grown file is queued again)."""
    import json

    try:
        size = os.stat(path).st_size
    except OSError:
        size = 0
    now = time.time()
    with store.tx.atomic() as conn:
        conn.execute("INSERT OR IGNORE INTO jobs (kind, payload, dedup_key, status, run_after, created_at, "
                     "updated_at) VALUES (?, ?, ?, 'queued', ?, ?, ?)",
                     (JOB_KIND, json.dumps({"path": path, "scope": scope}), f"{JOB_KIND}:{path}@{size}",
                      now, now, now))


def run_job(store: Any, payload: dict[str, Any]) -> dict[str, Any]:
    """Do one `harvest_transcript` job (also callable by the server's worker)."""
    return harvest_now(store, str(payload["path"]), str(payload["scope"]))


def drain(store: Any, *, seconds: float = DRAIN_SECONDS, worker: str | None = None) -> int:
    """Work through ready harvest jobs for up to `seconds`; return how many succeeded."""
    import json

    worker = worker or f"drain-{os.getpid()}"
    done = 0
    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at:
        now = time.time()
        with store.tx.atomic() as conn:
            row = conn.execute(
                "UPDATE jobs SET status = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1, "
                "updated_at = ? WHERE id = (SELECT id FROM jobs WHERE kind = ? AND ((status = 'queued' AND "
                "run_after <= ?) OR (status = 'running' AND locked_at < ?)) ORDER BY id LIMIT 1) "
                "RETURNING id, payload, attempts",
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
                             "updated_at = ? WHERE id = ?",
                             (status, f"{type(e).__name__}: {e}"[:1000], time.time() + 30 * attempts,
                              time.time(), job_id))
            common.log_line("drain", f"job {job_id} failed ({status}): {type(e).__name__}: {e}")
            continue
        with store.tx.atomic() as conn:
            conn.execute("UPDATE jobs SET status = 'done', locked_by = NULL, last_error = NULL, updated_at = ? "
                         "WHERE id = ?", (time.time(), job_id))
        done += 1
    return done


def drain_main(argv: list[str]) -> None:
    """`run.py drain [--path P --scope S]`: queue P (if given), then drain the queue."""
    import argparse

    p = argparse.ArgumentParser(prog="run.py drain")
    p.add_argument("--path")
    p.add_argument("--scope")
    args = p.parse_args(argv)
    from memory import config as config_mod
    from memory.store import Store

    store = Store.open(config_mod.load(), None, vectors=False)  # the configured (long) busy timeout
    try:
        if args.path and args.scope:
            enqueue(store, args.path, args.scope)
        drain(store)
    finally:
        store.close()
