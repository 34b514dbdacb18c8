"""Stop, PreCompact and SessionEnd: hand the session's transcript over for harvesting, then return.

The hook does the one thing that must not be lost, fast, and without touching the database (a
harvest in progress holds its write lock): it appends {path, scope} to `<home>/harvest-spool.jsonl`
(one small O_APPEND write) and starts a detached `run.py drain` unless one is running (an flock on
`<home>/harvest.lock`). The drain outlives the session, so SessionEnd's 1.5 s and `claude -p`'s
teardown do not cut it short.

The drain moves spooled requests into the job queue (memory.store.jobs) as `harvest` jobs ({path,
scope}; requests for one transcript collapse into the queued job), then runs them with the same
handlers and queue rules as the server's worker (memory.app.worker): the one harvest rule,
memory.extraction.harvest. Harvested memories have no vectors yet; the drain queues an
`embed_missing` job for a process with the model. Nothing is printed: output on Stop would keep
the conversation going.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hooks import common

SPOOL_NAME = "harvest-spool.jsonl"
LOCK_NAME = "harvest.lock"
WATCHDOG = {"Stop": 10.0, "PreCompact": 10.0, "SessionEnd": 1.2}
DRAIN_SECONDS = 600.0
PRUNE_DAYS = 30.0
MAX_SPOOL_LINE = 4_000


def transcript_of(event: common.Event) -> str:
    """The transcript path from the hook input (HookSkipped when there is none)."""
    raw = event.transcript_path
    if raw is None:
        raise common.HookSkipped("no transcript_path in the hook input")
    path = Path(raw).expanduser()
    if path.suffix != ".jsonl":
        raise ValueError(f"transcript_path {raw!r} is not a .jsonl file")
    return str(path.absolute())


def run(event: common.Event) -> None:
    """Spool the hook's transcript and make sure a drain will take it."""
    path = transcript_of(event)
    scope = event.scope
    common.watchdog(WATCHDOG[event.name], event.name)
    spool(path, scope)
    if not drain_running():
        spawn_drain()


def spool(path: str, scope: str) -> None:
    """Append one request to the spool (created 0600 in the home)."""
    line = json.dumps({"path": path, "scope": scope, "at": time.time()}, ensure_ascii=False) + "\n"
    data = line.encode("utf-8")
    if len(data) > MAX_SPOOL_LINE:  # keep every append far below PIPE_BUF-sized atomic writes
        raise ValueError("transcript path too long to queue")
    folder = common.home()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / SPOOL_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


# -- one drain at a time -----------------------------------------------------------------------


def _lock(blocking: bool) -> Any:
    """The exclusive lock on <home>/harvest.lock, or None if another drain holds it. Where flock
    does not exist every caller gets it: job claiming alone keeps drains apart there."""
    try:
        import fcntl
    except ImportError:
        return True
    common.home().mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(common.home() / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _unlock(fd: Any) -> None:
    if isinstance(fd, int):
        os.close(fd)  # closing the descriptor releases the flock


def drain_running() -> bool:
    fd = _lock(blocking=False)
    if fd is None:
        return True
    _unlock(fd)
    return False


def spawn_drain() -> None:
    """Start `run.py drain` detached from Claude Code (it outlives the session and its hooks)."""
    import subprocess

    kwargs: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "close_fds": True,
    }
    if os.name == "nt":
        kwargs["creationflags"] = 0x00000008 | 0x00000200  # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    subprocess.Popen([sys.executable, str(Path(__file__).with_name("run.py")), "drain"], **kwargs)


# -- the jobs ----------------------------------------------------------------------------------


def absorb_spool(store: Any) -> int:
    """Move spooled requests into the job queue; return how many lines were read.

    The spool is renamed first, so hooks appending meanwhile start a new one; the renamed file
    is deleted only after its jobs are committed (one left by a drain that died is taken too:
    only one drain runs at a time). A queued harvest of the same transcript absorbs a new
    request (its dedup key is cleared when a job is claimed, so a request during a run queues a
    fresh job)."""
    from memory.store import jobs

    spool_path = common.home() / SPOOL_NAME
    try:
        spool_path.rename(spool_path.with_name(f"{SPOOL_NAME}.{os.getpid()}"))
    except FileNotFoundError:
        pass
    files = sorted(spool_path.parent.glob(f"{SPOOL_NAME}.*"))
    requests = []
    for f in files:
        for raw in f.read_bytes().splitlines():
            try:
                item = json.loads(raw)
                requests.append((str(item["path"]), str(item["scope"])))
            except (ValueError, KeyError, TypeError):
                common.log_line("drain", f"skipped a malformed spool line: {raw[:200]!r}")
    if requests:
        with store.tx.atomic():
            for path, scope in dict.fromkeys(requests):
                jobs.enqueue(store, "harvest", {"path": path, "scope": scope}, dedup_key=f"harvest:{path}")
    for f in files:
        f.unlink()
    return len(requests)


def drain(store: Any, *, seconds: float = DRAIN_SECONDS, worker: str | None = None) -> int:
    """Work through ready harvest jobs for up to `seconds` (the queue's own rules: leases,
    attempts and backoff from the configuration); return how many succeeded."""
    from memory.app.worker import HANDLERS
    from memory.store import jobs

    done = jobs.drain(store, HANDLERS, worker or f"drain:{os.getpid()}", kinds=jobs.HARVESTS, seconds=seconds)
    for o in done:
        if o.error:
            common.log_line("drain", f"job {o.job.id} failed ({o.status}): {o.error}")
    return sum(o.status == "done" for o in done)


def _pending(store: Any) -> bool:
    spool_path = common.home() / SPOOL_NAME
    if spool_path.exists() and spool_path.stat().st_size:
        return True
    return (
        store.conn.execute(
            "SELECT 1 FROM jobs WHERE kind IN ('harvest', 'harvest_transcript') "
            "AND status = 'queued' AND run_after <= ? LIMIT 1",
            (time.time(),),
        ).fetchone()
        is not None
    )


def drain_main(argv: list[str]) -> None:
    """`run.py drain [--wait]`: absorb the spool, then harvest every queued transcript.

    One drain at a time per home; without `--wait` a drain that finds another running leaves
    the work to it (which looks at the spool again before it exits), with `--wait` it waits for
    that one, then drains what is left (scripts and tests use it to settle).
    """
    import argparse

    p = argparse.ArgumentParser(prog="run.py drain")
    p.add_argument("--wait", action="store_true")
    args = p.parse_args(argv)
    if hasattr(os, "nice") and not args.wait:
        os.nice(10)  # background work: the session's own hooks and tools go first on a busy machine
    from memory import config as config_mod
    from memory.retrieval import context
    from memory.store import Store

    while True:
        fd = _lock(blocking=args.wait)
        if fd is None:
            return
        store = Store.open(config_mod.load(), None, vectors=False)  # the configured (long) busy timeout
        try:
            try:
                absorb_spool(store)
                if drain(store):
                    _queue_embedding(store)
                context.prune_injections(store, PRUNE_DAYS)
            finally:
                _unlock(fd)
            # A request spooled while we held the lock saw a drain running and started none.
            if not _pending(store):
                return
        finally:
            store.close()
        args.wait = False


def _queue_embedding(store: Any) -> None:
    """Ask a process with the model to give the new memories vectors (the drain has none)."""
    from memory.store import jobs

    if store.has_vectors:
        jobs.enqueue(store, "embed_missing", dedup_key="embed_missing")
