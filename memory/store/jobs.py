"""The job queue and the sleep-time worker that drains it.

Jobs live in the `jobs` table, so every process on the database shares one queue: hooks enqueue
harvests (`enqueue` works on a bare connection, no model, no vectors), and whichever MCP server is
idle runs them. A job moves queued -> running -> done; a failure sends it back to queued with an
exponential backoff and, after `job_max_attempts`, parks it with its last error.

Crash safety rests on three rules:
- Claiming is one UPDATE inside BEGIN IMMEDIATE, so two workers (threads or processes, each with
  its own connection) can never both move the same row to running. On PostgreSQL the UPDATE's
  subquery takes the row FOR UPDATE SKIP LOCKED: workers on many machines claim side by side.
- A running job carries `locked_by` (host:pid:random) and `locked_at`; a worker that dies leaves
  the row running, and once `locked_at` is older than the lease any worker reclaims it (counting
  the attempt, so a job that kills its worker every time is parked too).
- Finishing checks `locked_by`: a worker that lost its lease cannot mark someone else's run done.
  Long handlers renew their lease (`JobContext.heartbeat`).

A queued job's `dedup_key` collapses repeated requests (a Stop hook firing every turn enqueues one
harvest per transcript); the key is cleared when the job is claimed, so a request that arrives
while it runs queues a fresh job instead of being lost.

The worker (`Worker`) is a thread inside the MCP server with its own Store connection. It runs only
after the server has been idle for `worker_idle_seconds`, works in small batches, and gives way as
soon as a request arrives: a handler that sees `should_yield()` raises `Yielded`, and the job goes
back to the queue without counting an attempt.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import memory.store.db as db
from memory.errors import InvalidInput, MapleError, StoreUnavailable
from memory.store.memories import Store
from memory.store.records import iso

log = logging.getLogger("maple.jobs")

# A harvest's payload is {path, scope}; "harvest_transcript" is the name older hooks queued it under.
KINDS = ("harvest", "harvest_transcript", "maintain", "embed_missing")
HARVESTS = ("harvest", "harvest_transcript")
MAX_BACKOFF = 6 * 3600.0  # a failing job is retried at least every six hours until parked


class Yielded(Exception):
    """Raised by a handler that stops early because a tool call arrived; the job is re-queued."""


class LeaseLost(MapleError):
    """Another worker reclaimed this job (our lease expired); stop without touching it further."""


@dataclass
class Job:
    id: int
    kind: str
    payload: dict
    attempts: int
    run_after: float
    last_error: str | None = None
    status: str = "running"
    locked_by: str | None = None


def new_worker_id() -> str:
    """host:pid:random — unique per worker, readable in the jobs table when debugging."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


# -- the queue ---------------------------------------------------------------------------------


def enqueue(
    target: Store | db.Connection,
    kind: str,
    payload: dict | None = None,
    *,
    dedup_key: str | None = None,
    delay: float = 0.0,
    now: float | None = None,
) -> int:
    """Queue a job and return its id; a queued job with the same `dedup_key` is updated instead.

    `target` is a Store or a bare connection (hooks: no model, no vectors loaded). One statement,
    so it is atomic without an explicit transaction.
    """
    if kind not in KINDS:
        raise InvalidInput(f"job kind must be one of {', '.join(KINDS)}, got {kind!r}")
    try:
        body = json.dumps(payload or {}, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"job payload must be JSON: {e}") from None
    if isinstance(target, Store):
        conn, now = target.conn, target.clock() if now is None else now
    else:
        conn, now = target, time.time() if now is None else now
    try:
        row = conn.execute(
            "INSERT INTO jobs (kind, payload, dedup_key, status, attempts, run_after, created_at, updated_at) "
            "VALUES (?, ?, ?, 'queued', 0, ?, ?, ?) ON CONFLICT(dedup_key) DO UPDATE SET "
            "payload = excluded.payload, run_after = min(jobs.run_after, excluded.run_after), "
            "updated_at = excluded.updated_at RETURNING id",
            (kind, body, dedup_key, now + delay, now, now),
        ).fetchone()
    except db.DatabaseError as e:  # locked too long, disk full: a StoreUnavailable the worker retries
        raise StoreUnavailable(db.describe(e, getattr(target, "path", "the database"))) from e
    return row[0]


def claim(store: Store, worker: str, *, kinds: Sequence[str] | None = None, now: float | None = None) -> Job | None:
    """Atomically take the next runnable job for `worker` (of `kinds`, default any), first
    reclaiming expired leases."""
    cfg = store.config
    now = store.clock() if now is None else now
    expired = now - cfg.job_lease_seconds
    only = f" AND kind IN ({','.join('?' * len(kinds))})" if kinds else ""
    with store.tx.atomic(serial=False) as conn:  # row locks, not the write lock (PostgreSQL)
        conn.execute(
            "UPDATE jobs SET status = 'parked', locked_by = NULL, locked_at = NULL, updated_at = ?, "
            "last_error = 'worker stopped responding (lease expired) on the last allowed attempt'"
            " || coalesce('; before that: ' || last_error, '') "
            "WHERE status = 'running' AND locked_at < ? AND attempts >= ?",
            (now, expired, cfg.job_max_attempts),
        )
        conn.execute(
            "UPDATE jobs SET status = 'queued', locked_by = NULL, locked_at = NULL, run_after = ?, updated_at = ?, "
            "last_error = 'worker stopped responding (lease expired); retrying' "
            "WHERE status = 'running' AND locked_at < ?",
            (now, now, expired),
        )
        # SQLite: one writer at a time, so the subquery's row cannot be taken meanwhile. PostgreSQL:
        # many machines' workers claim at once; each skips rows another is claiming.
        lock = " FOR UPDATE SKIP LOCKED" if store.backend == "postgresql" else ""
        row = conn.execute(
            "UPDATE jobs SET status = 'running', locked_by = ?, locked_at = ?, attempts = attempts + 1, "
            "dedup_key = NULL, updated_at = ? WHERE id = (SELECT id FROM jobs WHERE status = 'queued' "
            f"AND run_after <= ?{only} ORDER BY run_after, id LIMIT 1{lock}) "
            "RETURNING id, kind, payload, attempts, run_after, last_error",
            (worker, now, now, now, *(kinds or ())),
        ).fetchone()
    if row is None:
        return None
    return Job(row[0], row[1], json.loads(row[2]), row[3], row[4], row[5], "running", worker)


def heartbeat(store: Store, job: Job, *, now: float | None = None) -> None:
    """Renew the lease on a running job; raises LeaseLost if another worker has taken it."""
    now = store.clock() if now is None else now
    with store.tx.atomic() as conn:
        n = conn.execute(
            "UPDATE jobs SET locked_at = ?, updated_at = ? WHERE id = ? AND locked_by = ? AND status = 'running'",
            (now, now, job.id, job.locked_by),
        ).rowcount
    if n != 1:
        raise LeaseLost(f"job {job.id} was reclaimed by another worker")


def finish(store: Store, job: Job, *, now: float | None = None) -> bool:
    """Mark the job done; False if this worker no longer holds it (it lost its lease)."""
    now = store.clock() if now is None else now
    with store.tx.atomic() as conn:
        n = conn.execute(
            "UPDATE jobs SET status = 'done', locked_by = NULL, locked_at = NULL, last_error = NULL, "
            "updated_at = ? WHERE id = ? AND locked_by = ? AND status = 'running'",
            (now, job.id, job.locked_by),
        ).rowcount
    if n != 1:
        log.warning(
            "job %d finished after its lease was taken over; its result stands, the rerun is a no-op "
            "for idempotent jobs",
            job.id,
        )
    return n == 1


def fail(store: Store, job: Job, error: str, *, now: float | None = None) -> str:
    """Record a failed attempt: back to the queue after a backoff, or parked after the last attempt.

    Returns the new status ('queued' or 'parked'), or 'lost' if the lease had been taken over.
    """
    cfg = store.config
    now = store.clock() if now is None else now
    error = error[:2000]
    if job.attempts >= cfg.job_max_attempts:
        status, run_after = "parked", now
    else:
        status = "queued"
        run_after = now + min(MAX_BACKOFF, cfg.job_backoff_seconds * 2 ** (job.attempts - 1))
    with store.tx.atomic() as conn:
        n = conn.execute(
            "UPDATE jobs SET status = ?, run_after = ?, last_error = ?, locked_by = NULL, "
            "locked_at = NULL, updated_at = ? WHERE id = ? AND locked_by = ? AND status = 'running'",
            (status, run_after, error, now, job.id, job.locked_by),
        ).rowcount
    if status == "parked" and n == 1:
        log.warning("job %d (%s) parked after %d attempts: %s", job.id, job.kind, job.attempts, error)
    return status if n == 1 else "lost"


def release(store: Store, job: Job, *, now: float | None = None) -> None:
    """Give a job back untouched (the worker yielded to a tool call): the attempt does not count."""
    now = store.clock() if now is None else now
    with store.tx.atomic() as conn:
        conn.execute(
            "UPDATE jobs SET status = 'queued', attempts = max(0, attempts - 1), locked_by = NULL, "
            "locked_at = NULL, run_after = ?, updated_at = ? WHERE id = ? AND locked_by = ? "
            "AND status = 'running'",
            (now, now, job.id, job.locked_by),
        )


def retry_parked(store: Store, ids: list[int] | None = None) -> int:
    """Put parked jobs (all, or these ids) back in the queue with a fresh set of attempts."""
    now = store.clock()
    where, args = "status = 'parked'", []
    if ids:
        where += f" AND id IN ({','.join('?' * len(ids))})"
        args = list(ids)
    with store.tx.atomic() as conn:
        return conn.execute(
            f"UPDATE jobs SET status = 'queued', attempts = 0, run_after = ?, updated_at = ? WHERE {where}",
            (now, now, *args),
        ).rowcount


def summary(store: Store) -> dict[str, Any]:
    """Counts by status, and the parked jobs with their errors (what a person needs to act)."""
    counts = dict(store.conn.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())
    parked = [
        {"id": r[0], "kind": r[1], "attempts": r[2], "error": r[3], "at": iso(r[4])}
        for r in store.conn.execute(
            "SELECT id, kind, attempts, last_error, updated_at FROM jobs "
            "WHERE status = 'parked' ORDER BY id DESC LIMIT 20"
        )
    ]
    return {"counts": counts, "parked": parked}


# -- running jobs ------------------------------------------------------------------------------


@dataclass
class JobContext:
    """What a handler may ask of the worker running it."""

    store: Store
    job: Job
    should_yield: Callable[[], bool] = lambda: False

    def checkpoint(self) -> None:
        """Call between batches: gives way to a tool call, and keeps the lease alive."""
        if self.should_yield():
            raise Yielded()
        heartbeat(self.store, self.job)


Handler = Callable[[Store, dict, JobContext], Any]


@dataclass
class Outcome:
    job: Job
    status: str  # done, queued (will retry), parked, yielded, lost
    result: Any = None
    error: str | None = None


def run_one(
    store: Store,
    worker: str,
    handlers: Mapping[str, Handler],
    *,
    kinds: Sequence[str] | None = None,
    should_yield: Callable[[], bool] = lambda: False,
) -> Outcome | None:
    """Claim and run one job (of `kinds`, default any); None when nothing is runnable now."""
    job = claim(store, worker, kinds=kinds)
    if job is None:
        return None
    handler = handlers.get(job.kind)
    ctx = JobContext(store, job, should_yield)
    try:
        if handler is None:
            raise InvalidInput(f"no handler for job kind {job.kind!r} in this version of MAPLE")
        result = handler(store, job.payload, ctx)
    except Yielded:
        release(store, job)
        return Outcome(job, "yielded")
    except LeaseLost as e:
        return Outcome(job, "lost", error=str(e))
    except Exception as e:  # a failing job must not kill the worker; its error is kept on the row
        if store.conn.in_transaction:  # a handler failed mid-write outside atomic(): leave nothing open
            store.conn.execute("ROLLBACK")
        error = f"{type(e).__name__}: {e}"
        log.info("job %d (%s) failed: %s", job.id, job.kind, error)
        return Outcome(job, fail(store, job, error), error=error)
    return Outcome(job, "done" if finish(store, job) else "lost", result)


def drain(
    store: Store,
    handlers: Mapping[str, Handler],
    worker: str | None = None,
    *,
    kinds: Sequence[str] | None = None,
    should_yield: Callable[[], bool] = lambda: False,
    max_jobs: int | None = None,
    seconds: float | None = None,
) -> list[Outcome]:
    """Run runnable jobs (of `kinds`, default any) until none is left, a tool call needs the
    process, `max_jobs` ran or `seconds` passed."""
    worker = worker or new_worker_id()
    out: list[Outcome] = []
    stop_at = None if seconds is None else time.monotonic() + seconds
    while max_jobs is None or len(out) < max_jobs:
        if should_yield() or (stop_at is not None and time.monotonic() >= stop_at):
            break
        o = run_one(store, worker, handlers, kinds=kinds, should_yield=should_yield)
        if o is None:
            break
        out.append(o)
        if o.status == "yielded":
            break
    return out


def schedule(store: Store) -> list[int]:
    """Queue the periodic work that is due: a maintenance pass, vectors for memories without one."""
    ids = []
    row = store.conn.execute("SELECT value FROM meta WHERE key = 'last_maintenance_at'").fetchone()
    last = float(row[0]) if row else None
    if last is None or store.clock() - last >= store.config.maintenance_interval_hours * 3600:
        ids.append(enqueue(store, "maintain", dedup_key="maintain"))
    if store.embedder is not None and store.missing_vectors_count():
        ids.append(enqueue(store, "embed_missing", dedup_key="embed_missing"))
    return ids


# -- the sleep-time worker ---------------------------------------------------------------------


class Activity:
    """Requests in flight in the server and when the last one ended (monotonic clock).

    The server calls `begin()`/`end()` around every request; the worker waits on it.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.cond = threading.Condition()
        self.in_flight = 0
        self.last = clock()

    def begin(self) -> None:
        with self.cond:
            self.in_flight += 1
            self.cond.notify_all()

    def end(self) -> None:
        with self.cond:
            self.in_flight = max(0, self.in_flight - 1)
            self.last = self.clock()
            self.cond.notify_all()

    @property
    def busy(self) -> bool:
        return self.in_flight > 0

    def idle_for(self) -> float:
        with self.cond:
            return 0.0 if self.in_flight else self.clock() - self.last

    def wait_idle(self, seconds: float, stop: threading.Event, poll: float = 5.0) -> bool:
        """Block until no request has been in flight for `seconds`; False if `stop` was set."""
        with self.cond:
            while not stop.is_set():
                idle = 0.0 if self.in_flight else self.clock() - self.last
                if idle >= seconds:
                    return True
                self.cond.wait(timeout=min(poll, max(0.01, seconds - idle)))
        return False


@dataclass
class Worker:
    """The sleep-time worker thread: drains the queue while the server is idle.

    `open_store` makes the worker's own Store (its own connection), called on the worker thread.
    `poll_seconds` is how long an idle worker waits before looking at the queue again.
    """

    open_store: Callable[[], Store]
    activity: Activity
    handlers: Mapping[str, Handler]
    idle_seconds: float = 30.0
    poll_seconds: float = 60.0
    worker_id: str = field(default_factory=new_worker_id)
    stop_event: threading.Event = field(default_factory=threading.Event)
    drained: threading.Event = field(default_factory=threading.Event)  # set each time the queue runs dry
    outcomes: list[Outcome] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="maple-worker", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        with self.activity.cond:
            self.activity.cond.notify_all()
        if self.thread is not None:
            self.thread.join(timeout)

    def _run(self) -> None:
        try:
            store = self.open_store()
        except MapleError as e:
            log.warning("sleep-time worker not started: %s", e)
            return
        try:
            while self.activity.wait_idle(self.idle_seconds, self.stop_event):
                try:
                    schedule(store)
                    done = drain(
                        store,
                        self.handlers,
                        self.worker_id,
                        should_yield=lambda: self.activity.busy or self.stop_event.is_set(),
                    )
                except (MapleError, db.DatabaseError) as e:  # the database is locked or gone: try again later
                    log.warning("sleep-time worker: %s", e)
                    done = []
                self.outcomes.extend(done)
                del self.outcomes[:-100]  # keep the latest only: a long-running server must not grow
                if any(o.status == "yielded" for o in done):
                    continue  # a request arrived: wait for the next idle period
                try:  # the server defers checkpoints to now (Store.defer_checkpoints); never blocks a writer
                    store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # a no-op on PostgreSQL
                except db.DatabaseError as e:
                    log.warning("sleep-time worker: WAL checkpoint: %s", e)
                self.drained.set()
                self.stop_event.wait(self.poll_seconds)
        finally:
            store.close()
