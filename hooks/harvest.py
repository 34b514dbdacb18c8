"""Stop, PreCompact and SessionEnd: hand the session's transcript over for harvesting, then return.

The hook does the one thing that must not be lost, fast, and without touching the database (a
harvest in progress holds its write lock): it appends {path, scope} to `<home>/harvest-spool.jsonl`
(one small O_APPEND write) and starts a detached `run.py drain` unless one is running (an flock on
`<home>/harvest.lock`). The drain outlives the session, so SessionEnd's 1.5 s and `claude -p`'s
teardown do not cut it short.

Whoever harvests moves spooled requests into the job queue (memory.store.jobs) as `harvest` jobs
({path, scope}; requests for one transcript collapse into the queued job) and runs them with the
handlers every worker runs (memory.app.worker): the one harvest rule, memory.extraction.harvest.
That is the warm engine (memory.remote) when there is one: the hook pokes it, or starts it (a
drain started because no database existed yet hands the work to the engine it then starts), and
its model gives every harvested memory its vector at once. Without an engine (none allowed, or no
Unix sockets) a detached `run.py drain` does the same with a model of its own, loaded off the
session's hot path; either way the harvest compares by meaning, like `maple-memory extract`.
Nothing is printed: output on Stop would keep the conversation going.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hooks import common
from memory.remote import SPOOL_NAME

LOCK_NAME = "harvest.lock"
WATCHDOG = {"Stop": 10.0, "PreCompact": 10.0, "SessionEnd": 1.2}
DRAIN_SECONDS = 600.0
PRUNE_DAYS = 30.0
MAX_SPOOL_LINE = 4_000
# How long a drain waits for an unreachable team database (MAPLE_OFFLINE_WAIT_SECONDS overrides it):
# the spool holds the requests meanwhile, and the next session's hooks start a drain again.
OFFLINE_SECONDS = 900.0
OFFLINE_ENV = "MAPLE_OFFLINE_WAIT_SECONDS"


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
    """Spool the hook's transcript and make sure it will be harvested: by the warm engine when
    there is one (it embeds what it stores), else by a background drain of its own."""
    path = transcript_of(event)
    if not os.path.isfile(path):  # `claude mcp list|get|add` end a "session" that wrote no transcript
        raise common.HookSkipped(f"no transcript at {path}")
    scope = event.scope
    common.watchdog(WATCHDOG[event.name], event.name)
    spool(path, scope)
    if common.engine_takes("drain"):
        return
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


def _pending(store: Any) -> bool:
    spool_path = common.home() / SPOOL_NAME
    if spool_path.exists() and spool_path.stat().st_size:
        return True
    if store.backend == "postgresql":  # the spool is the queue there (memory.app.worker.harvest_spool)
        return False
    return (
        store.conn.execute(
            "SELECT 1 FROM jobs WHERE kind IN ('harvest', 'harvest_transcript') "
            "AND status = 'queued' AND run_after <= ? LIMIT 1",
            (time.time(),),
        ).fetchone()
        is not None
    )


def _with_model(store: Any, config: Any) -> Any:
    """The store again, with the configured embedding model: a harvest compares by meaning and
    stores vectors, exactly as the engine's and `maple-memory extract` do. Without a usable
    model (not installed, another model's vectors in the database) the store as it was."""
    from memory import embed
    from memory.errors import MapleError
    from memory.store import Store, stored_model

    try:
        embedder = embed.from_config(config, stored_model(config))
        wait = getattr(embedder, "wait", None)
        if wait is not None:
            wait()
        with_model = Store.open(config, embedder)
    except MapleError as e:
        common.log_line("drain", f"harvesting without vectors: {e}")
        return store
    store.close()
    return with_model


def _vectors_or_later(store: Any) -> None:
    """Embed what is still without a vector now, or queue it for whoever has a model."""
    from memory.store import jobs

    if not store.missing_vectors_count():
        return
    if store.embedder is not None:
        try:
            store.embed_missing(batch=64)
            return
        except Exception as e:  # noqa: BLE001 - the queued job below retries it
            common.log_line("drain", f"embedding failed: {type(e).__name__}: {e}")
    if store.has_vectors:  # (a store that never had one gets them when a model first opens it)
        jobs.enqueue(store, "embed_missing", dedup_key="embed_missing")
    common.start_engine()


def _open_when_reachable(store_class: Any, config_mod: Any) -> tuple[Any, Any] | None:
    """(configuration, store), waiting for a team database that cannot be reached: the spool
    keeps every request meanwhile (nothing is lost), and the drain retries with growing pauses
    for up to OFFLINE_SECONDS, reading the configuration again each time (a corrected URL counts).
    None when it gave up: the requests stay spooled and the next SessionStart or harvest hook
    starts a drain for them. A local SQLite file that cannot be opened raises at once, as before."""
    from memory.errors import StoreUnavailable

    wait = float(os.environ.get(OFFLINE_ENV) or OFFLINE_SECONDS)
    deadline, pause, told = time.monotonic() + wait, 1.0, False
    while True:
        config = config_mod.load()
        try:
            return config, store_class.open(config, None)  # the configured (long) busy timeout
        except StoreUnavailable as e:
            if not config.database_url:
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                common.log_line(
                    "drain",
                    f"gave up waiting for the team database ({e}); the harvest requests stay in "
                    f"{common.home() / SPOOL_NAME} for the next session's hooks",
                )
                return None
            if not told:
                common.log_line("drain", f"team database unreachable, harvest requests kept in the spool: {e}")
                told = True
            time.sleep(min(pause, left))
            pause = min(pause * 2, 30.0)


def resume_spooled() -> None:
    """Start a drain for requests a drain left spooled (it gave up waiting for the team database,
    or died), unless one runs. For SessionStart: the database may be back by the next session.
    A look at the home folder when there is nothing to do; never raises."""
    try:
        folder = common.home()
        if not folder.is_dir():
            return
        if any(p.stat().st_size for p in folder.glob(f"{SPOOL_NAME}*")) and not drain_running():
            spawn_drain()
    except Exception as e:  # noqa: BLE001 - a later hook tries again
        common.log_line("drain", f"not resumed: {type(e).__name__}: {e}")


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
    from memory.app.worker import absorb_spool, drain_harvests, harvest_spool
    from memory.retrieval import context
    from memory.store import Store

    while True:
        fd = _lock(blocking=args.wait)
        if fd is None:
            return
        opened = _open_when_reachable(Store, config_mod)
        if opened is None:
            _unlock(fd)
            return
        config, store = opened
        try:
            try:
                if config.database_url:  # the team database: harvested here, straight from the spool
                    store = _with_model(store, config)
                    harvest_spool(store)
                else:
                    absorb_spool(store)
                    # The engine's model gives what it harvests its vector at once; `--wait` (scripts,
                    # tests) wants the work done when it returns, so it does it here.
                    if not args.wait and common.engine_takes("drain"):
                        return  # the engine looks at the spool and the queue itself
                    store = _with_model(store, config)
                    drain_harvests(store)
                _vectors_or_later(store)
                context.prune_injections(store, PRUNE_DAYS)
            finally:
                _unlock(fd)
            # A request spooled while we held the lock saw a drain running and started none.
            if not _pending(store):
                return
        finally:
            store.close()
        args.wait = False
