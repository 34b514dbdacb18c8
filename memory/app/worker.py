"""What the job queue's jobs do: the handlers every worker runs (the server's sleep-time worker,
the hooks' background drain, `maple-memory maintain`), one per kind, each calling one agent.
The queue itself (claiming, leases, retries) is memory.store.jobs."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from memory.errors import InvalidInput
from memory.extraction import harvest
from memory.remote import SPOOL_NAME
from memory.scope import project_scope
from memory.store import Store, jobs
from memory.store.jobs import Handler, JobContext

log = logging.getLogger("maple.worker")

EMBED_BATCH = 64  # memories embedded per step of an embed_missing job: one step is a short pause


def _harvest(store: Store, payload: dict, ctx: JobContext) -> Any:
    path = payload.get("path") or payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise InvalidInput("harvest job needs a transcript_path")
    cwd, scope = payload.get("cwd"), payload.get("scope")
    # The scope comes from the job (the session's cwd), never from this server's own project.
    if not isinstance(scope, str) or not scope:
        scope = project_scope(cwd) if isinstance(cwd, str) and cwd else None
    result = harvest.harvest(store, path, scope=scope)
    return {k: result.get(k) for k in ("stored", "merged", "reinforced", "superseded")}


def _maintain(store: Store, payload: dict, ctx: JobContext) -> Any:
    from memory.maintenance import agent  # numpy comes with it: only when a pass runs

    # Long memories stored by an older release get their chunks (memory.store.chunks) here too.
    chunked = store.ensure_chunks(dry_run=bool(payload.get("dry_run")))
    report = agent.run_maintenance(
        store, dry_run=bool(payload.get("dry_run")), checkpoint=ctx.checkpoint, vacuum_limit_mb=agent.WORKER_VACUUM_MB
    )
    return {**report.counts(), **({"chunk": chunked} if chunked else {})}


def _embed_missing(store: Store, payload: dict, ctx: JobContext) -> Any:
    if store.embedder is None:
        return {"embedded": 0}
    done = 0

    def step(n: int, total: int) -> None:
        ctx.checkpoint()  # between batches: a tool call waits at most one batch

    done = store.embed_missing(batch=EMBED_BATCH, progress=step)
    return {"embedded": done}


HANDLERS: dict[str, Handler] = {
    "harvest": _harvest,
    "harvest_transcript": _harvest,
    "maintain": _maintain,
    "embed_missing": _embed_missing,
}


def _take_spool(store: Store) -> tuple[list[Path], list[tuple[str, str]]]:
    """The spool's files (the live one renamed first, so hooks appending meanwhile start a new one;
    any left by a drain that died) and the (transcript, scope) requests they hold. The caller
    deletes the files once their requests are safe."""
    spool_path = store.config.home / SPOOL_NAME
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
                log.warning("skipped a malformed harvest request: %r", raw[:200])
    return files, requests


def absorb_spool(store: Store) -> int:
    """Move spooled requests into the job queue; return how many lines were read.

    The spool is renamed first, so hooks appending meanwhile start a new one; the renamed file
    is deleted only after its jobs are committed (one left by a drain that died is taken too:
    only one drain runs at a time). A queued harvest of the same transcript absorbs a new
    request (its dedup key is cleared when a job is claimed, so a request during a run queues a
    fresh job)."""
    files, requests = _take_spool(store)
    if requests:
        with store.tx.atomic():
            for path, scope in dict.fromkeys(requests):
                jobs.enqueue(store, "harvest", {"path": path, "scope": scope}, dedup_key=f"harvest:{path}")
    for f in files:
        f.unlink()
    return len(requests)


def harvest_spool(store: Store) -> int:
    """Harvest the spooled requests here, for a team database; return how many transcripts.

    Not through the job queue: on PostgreSQL it is shared by every machine, and another
    machine's worker could claim a job for a transcript that exists only on this one. The spool
    stays the queue instead: it is renamed first (hooks appending meanwhile start a new one) and
    its files are deleted only once every request in them is harvested, so a database that goes
    away half-way loses nothing; the next drain harvests them again from each transcript's
    cursor, which commits with what it stored (no line is read twice)."""
    files, requests = _take_spool(store)
    for path, scope in dict.fromkeys(requests):
        harvest.harvest(store, path, scope=scope)  # a database error leaves the spool for the next drain
    for f in files:
        f.unlink()
    return len(dict.fromkeys(requests))


def drain_harvests(store: Store, *, seconds: float = 600.0, worker: str | None = None) -> int:
    """Work through ready harvest jobs for up to `seconds` (the queue's own rules: leases,
    attempts and backoff from the configuration); return how many succeeded."""
    done = jobs.drain(store, HANDLERS, worker or f"drain:{os.getpid()}", kinds=jobs.HARVESTS, seconds=seconds)
    for o in done:
        if o.error:
            log.warning("harvest job %d failed (%s): %s", o.job.id, o.status, o.error)
    return sum(o.status == "done" for o in done)
