"""What the job queue's jobs do: the handlers every worker runs (the server's sleep-time worker,
the hooks' background drain, `maple-memory maintain`), one per kind, each calling one agent.
The queue itself (claiming, leases, retries) is memory.store.jobs."""

from __future__ import annotations

from typing import Any

from memory.errors import InvalidInput
from memory.extraction import harvest
from memory.scope import project_scope
from memory.store import Store
from memory.store.jobs import Handler, JobContext

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

    report = agent.run_maintenance(
        store, dry_run=bool(payload.get("dry_run")), checkpoint=ctx.checkpoint, vacuum_limit_mb=agent.WORKER_VACUUM_MB
    )
    return report.counts()


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
