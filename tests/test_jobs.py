"""The job queue and the sleep-time worker: atomic claims across connections and processes,
crash recovery, backoff, parking, yielding to tool calls, and the job kinds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory.app.worker import HANDLERS
from memory.embed import HashEmbedder
from memory.errors import InvalidInput
from memory.store import NewMemory, Store, jobs

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_750_000_000.0
SESSION = ROOT / "tests" / "data" / "sessions" / "en01_invoicer_uv_postgres.jsonl"


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


def open_store(home: Path, clock: Any = None, **settings: Any) -> Store:
    cfg = config_mod.load(home=home, env={}, **settings)
    return Store.open(cfg, HashEmbedder(64), clock=clock or Clock())


@pytest.fixture
def db(home: Path, clock: Clock) -> Store:
    s = open_store(home, clock)
    yield s
    s.close()


def status(store: Store, job_id: int) -> dict[str, Any]:
    cols = ("status", "attempts", "run_after", "last_error", "locked_by", "dedup_key")
    row = store.conn.execute(f"SELECT {', '.join(cols)} FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return dict(zip(cols, row))


def ok(store: Store, payload: dict, ctx: jobs.JobContext) -> Any:
    return "ok"


def boom(store: Store, payload: dict, ctx: jobs.JobContext) -> Any:
    raise RuntimeError("the transcript vanished")


# -- the queue ---------------------------------------------------------------------------------


def test_a_queued_job_with_the_same_key_is_not_queued_twice(db):
    a = jobs.enqueue(db, "harvest", {"transcript_path": "/t/1.jsonl", "n": 1}, dedup_key="harvest:/t/1.jsonl")
    b = jobs.enqueue(db, "harvest", {"transcript_path": "/t/1.jsonl", "n": 2}, dedup_key="harvest:/t/1.jsonl")
    assert a == b
    assert json.loads(db.conn.execute("SELECT payload FROM jobs WHERE id = ?", (a,)).fetchone()[0])["n"] == 2
    assert db.conn.execute("SELECT count(*) FROM jobs").fetchone()[0] == 1


def test_a_request_arriving_while_its_job_runs_queues_a_fresh_job(db):
    first = jobs.enqueue(db, "harvest", {"transcript_path": "/t/1.jsonl"}, dedup_key="k")
    job = jobs.claim(db, "w1")
    assert job.id == first and status(db, first)["dedup_key"] is None
    second = jobs.enqueue(db, "harvest", {"transcript_path": "/t/1.jsonl"}, dedup_key="k")
    assert second != first and status(db, second)["status"] == "queued"


@pytest.mark.sqlite_only
def test_enqueue_works_on_a_bare_connection_as_hooks_use_it(db, home):
    from memory.store import db as dbmod

    conn = dbmod.connect(db.path, vectors=False)
    jid = jobs.enqueue(conn, "harvest", {"transcript_path": "/t/x.jsonl"}, dedup_key="x")
    conn.close()
    assert status(db, jid)["status"] == "queued"


def test_unknown_kinds_and_non_json_payloads_are_refused(db):
    with pytest.raises(InvalidInput, match="job kind must be one of"):
        jobs.enqueue(db, "mine_bitcoin")
    with pytest.raises(InvalidInput, match="payload must be JSON"):
        jobs.enqueue(db, "maintain", {"when": object()})


def test_a_job_waits_until_its_run_after(db, clock):
    jid = jobs.enqueue(db, "maintain", delay=60)
    assert jobs.claim(db, "w") is None
    clock.t += 61
    assert jobs.claim(db, "w").id == jid


# -- failures, backoff, parking ----------------------------------------------------------------


def test_a_failing_job_is_retried_with_exponential_backoff_then_parked_with_its_error(home, clock):
    store = open_store(home, clock, job_max_attempts=4, job_backoff_seconds=30)
    jid = jobs.enqueue(store, "harvest", {"transcript_path": "/gone"})
    delays = []
    for attempt in range(1, 5):
        out = jobs.run_one(store, "w", handlers={"harvest": boom})
        assert out.job.id == jid and out.job.attempts == attempt
        s = status(store, jid)
        if attempt < 4:
            assert s["status"] == "queued" and out.status == "queued"
            delays.append(s["run_after"] - clock.t)
            assert jobs.claim(store, "early") is None  # not before its backoff
            clock.t = s["run_after"]
    assert delays == [30, 60, 120]
    s = status(store, jid)
    assert s["status"] == "parked" and s["last_error"] == "RuntimeError: the transcript vanished"
    assert jobs.summary(store)["parked"][0]["error"] == "RuntimeError: the transcript vanished"
    clock.t += 10**6
    assert jobs.run_one(store, "w", handlers={"harvest": boom}) is None  # parked stays parked
    assert jobs.retry_parked(store) == 1 and status(store, jid)["attempts"] == 0
    store.close()


def test_a_job_whose_worker_died_is_reclaimed_after_the_lease_and_completes_once(home, clock):
    store = open_store(home, clock, job_lease_seconds=600)
    jid = jobs.enqueue(store, "maintain")
    dead = jobs.claim(store, "worker-that-dies")
    assert dead.id == jid
    clock.t += 599
    assert jobs.claim(store, "w2") is None  # still leased to the first worker
    clock.t += 2
    runs = []
    out = jobs.run_one(store, "w2", handlers={"maintain": lambda s, p, c: runs.append(c.job.id)})
    assert out.status == "done" and out.job.attempts == 2 and runs == [jid]
    assert jobs.finish(store, dead) is False  # the first worker, back from the dead, cannot finish it
    assert status(store, jid)["status"] == "done"
    clock.t += 10**6
    assert jobs.run_one(store, "w3", handlers={"maintain": lambda s, p, c: runs.append(c.job.id)}) is None
    assert runs == [jid]
    store.close()


def test_a_job_that_kills_its_worker_every_time_is_parked(home, clock):
    store = open_store(home, clock, job_lease_seconds=10, job_max_attempts=2)
    jid = jobs.enqueue(store, "maintain")
    jobs.claim(store, "a")
    clock.t += 11
    jobs.claim(store, "b")  # reclaimed: attempt 2 of 2
    clock.t += 11
    assert jobs.claim(store, "c") is None
    s = status(store, jid)
    assert s["status"] == "parked" and "lease expired" in s["last_error"]
    store.close()


CRASHER = """
import os, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from memory import config as config_mod
from memory.store import jobs
from memory.store import Store
store = Store.open(config_mod.load(home=Path({home!r}), env={{}}), None)
def die(store, payload, ctx):
    os._exit(3)  # the process dies mid-job: no finally, no rollback of the claim
jobs.run_one(store, "crasher", handlers={{"maintain": die}})
"""


def test_a_worker_process_killed_mid_job_leaves_it_for_another_worker(home, clock, tmp_path):
    store = open_store(home, clock)
    jid = jobs.enqueue(store, "maintain", now=0.0)  # runnable for the real clock of the other process
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER.format(root=str(ROOT), home=str(home)))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=120)
    assert proc.returncode == 3, proc.stderr.decode()
    s = status(store, jid)
    assert s["status"] == "running" and s["locked_by"] == "crasher"
    clock.t = store.conn.execute("SELECT locked_at FROM jobs WHERE id = ?", (jid,)).fetchone()[0] + 901
    runs = []
    out = jobs.run_one(store, "survivor", handlers={"maintain": lambda s, p, c: runs.append(1)})
    assert out.status == "done" and out.job.attempts == 2 and runs == [1]
    store.close()


# -- several workers ---------------------------------------------------------------------------


def test_threads_with_their_own_connections_never_run_the_same_job_twice(home):
    setup = open_store(home)
    ids = [jobs.enqueue(setup, "maintain", {"n": i}) for i in range(120)]
    ran: list[int] = []
    lock = threading.Lock()

    def record(store: Store, payload: dict, ctx: jobs.JobContext) -> None:
        with lock:
            ran.append(ctx.job.id)

    def work() -> None:
        s = open_store(home)  # each worker its own connection
        try:
            jobs.drain(s, handlers={"maintain": record})
        finally:
            s.close()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(ran) == ids
    assert setup.conn.execute("SELECT count(*) FROM jobs WHERE status = 'done'").fetchone()[0] == 120
    setup.close()


DRAINER = """
import os, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from memory import config as config_mod
from memory.store import jobs
from memory.store import Store
store = Store.open(config_mod.load(home=Path({home!r}), env={{}}), None)
out = os.open({log!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
def record(store, payload, ctx):
    os.write(out, f"{{ctx.job.id}} {{os.getpid()}}\\n".encode())
jobs.drain(store, handlers={{"maintain": record}})
"""


def test_several_processes_on_one_database_never_run_the_same_job_twice(home, tmp_path):
    setup = open_store(home)
    ids = [jobs.enqueue(setup, "maintain", {"n": i}, now=0.0) for i in range(150)]
    log = tmp_path / "ran.log"
    script = tmp_path / "drainer.py"
    script.write_text(DRAINER.format(root=str(ROOT), home=str(home), log=str(log)))
    procs = [subprocess.Popen([sys.executable, str(script)], stderr=subprocess.PIPE) for _ in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    ran = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert sorted(ran) == ids  # every job once, none twice
    assert len({line.split()[1] for line in log.read_text().splitlines()}) >= 1
    setup.close()


# -- yielding to tool calls --------------------------------------------------------------------


def test_a_job_gives_way_to_a_tool_call_without_losing_an_attempt(db):
    activity = jobs.Activity()
    jid = jobs.enqueue(db, "embed_missing")
    steps = []

    def long_job(store: Store, payload: dict, ctx: jobs.JobContext) -> None:
        steps.append(1)
        activity.begin()  # a tool call arrives while the job works
        ctx.checkpoint()
        steps.append(2)

    out = jobs.drain(db, handlers={"embed_missing": long_job}, should_yield=lambda: activity.busy)
    assert [o.status for o in out] == ["yielded"] and steps == [1]
    s = status(db, jid)
    assert s["status"] == "queued" and s["attempts"] == 0
    activity.end()
    out = jobs.drain(db, handlers={"embed_missing": ok}, should_yield=lambda: activity.busy)
    assert [o.status for o in out] == ["done"]


def test_idleness_counts_from_the_end_of_the_last_request():
    t = [100.0]
    activity = jobs.Activity(clock=lambda: t[0])
    activity.begin()
    t[0] += 50
    assert activity.busy and activity.idle_for() == 0.0
    activity.end()
    t[0] += 20
    assert not activity.busy and activity.idle_for() == 20.0
    stop = threading.Event()
    assert activity.wait_idle(20, stop) is True
    stop.set()
    assert activity.wait_idle(10**6, stop) is False  # shutting down: never waits


def test_the_worker_thread_drains_the_queue_once_the_server_is_idle(home):
    setup = open_store(home)
    ids = [jobs.enqueue(setup, "maintain", {"n": i}, now=0.0) for i in range(3)]
    activity = jobs.Activity()
    ran = []
    worker = jobs.Worker(
        open_store=lambda: open_store(home, clock=None),
        activity=activity,
        idle_seconds=0,
        poll_seconds=0.05,
        handlers={"maintain": lambda s, p, c: ran.append(c.job.id)},
    )
    worker.start()
    assert worker.drained.wait(30)
    worker.stop()
    assert sorted(ran)[:3] == ids and not worker.thread.is_alive()
    scheduled = setup.conn.execute("SELECT kind, payload FROM jobs WHERE id NOT IN (?, ?, ?)", ids).fetchall()
    assert scheduled == [("maintain", "{}")] and len(ran) == 4  # the worker also queued the due pass
    setup.close()


def test_the_worker_schedules_a_maintenance_pass_when_one_is_due(db, clock):
    first = jobs.schedule(db)
    again = jobs.schedule(db)
    assert first == again and len(first) == 1
    assert status(db, first[0])["status"] == "queued"
    with db.tx.atomic() as conn:
        conn.execute("DELETE FROM jobs")
        conn.execute("INSERT INTO meta (key, value) VALUES ('last_maintenance_at', ?)", (repr(clock.t),))
    assert jobs.schedule(db) == []
    clock.t += 25 * 3600
    assert len(jobs.schedule(db)) == 1


# -- the job kinds -----------------------------------------------------------------------------


def test_a_harvest_job_stores_what_the_transcript_teaches_and_is_idempotent(db, tmp_path):
    project = tmp_path / "invoicer"
    project.mkdir()
    jobs.enqueue(db, "harvest", {"transcript_path": str(SESSION), "cwd": str(project)})
    out = jobs.drain(db, HANDLERS)
    assert [o.status for o in out] == ["done"], out[0].error
    stored = db.count([str(project.resolve())])
    assert stored > 0 and out[0].result["stored"]
    jobs.enqueue(db, "harvest_transcript", {"path": str(SESSION), "scope": str(project.resolve())})
    out = jobs.drain(db, HANDLERS)
    assert [o.status for o in out] == ["done"] and db.count([str(project.resolve())]) == stored


def test_an_embed_missing_job_gives_vectors_to_memories_stored_without_one(home):
    bare = Store.open(config_mod.load(home=home, env={}), None)
    bare.add_many([NewMemory(content=f"note {i} about the release train") for i in range(100)])
    bare.close()
    store = open_store(home)
    assert store.missing_vectors_count() == 100
    jobs.enqueue(store, "embed_missing")
    out = jobs.drain(store, HANDLERS)
    assert out[0].status == "done" and out[0].result == {"embedded": 100}
    assert store.missing_vectors_count() == 0
    store.close()


def test_a_maintain_job_runs_a_maintenance_pass(db):
    db.add(NewMemory(content="a note"))
    jobs.enqueue(db, "maintain")
    out = jobs.drain(db, HANDLERS)
    assert out[0].status == "done", out[0].error
    assert db.conn.execute("SELECT value FROM meta WHERE key = 'last_maintenance'").fetchone() is not None


def test_a_worker_id_names_host_and_process():
    wid = jobs.new_worker_id()
    assert f":{os.getpid()}:" in wid


@pytest.mark.sqlite_only
def test_an_idle_worker_checkpoints_the_wal_a_deferring_server_left(tmp_path: Path) -> None:
    home = tmp_path / "home"
    server = open_store(home, clock=None)
    server.defer_checkpoints()
    assert server.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 10_000
    server.add_many([NewMemory(f"memory number {i} about deploys") for i in range(300)])
    statements: list[str] = []

    def worker_store() -> Store:
        s = open_store(home, clock=None)
        s.conn.set_trace_callback(statements.append)
        return s

    worker = jobs.Worker(
        open_store=worker_store,
        activity=jobs.Activity(),
        idle_seconds=0,
        poll_seconds=0.05,
        handlers={"maintain": lambda s, p, c: None},
    )
    worker.start()
    assert worker.drained.wait(30)
    worker.stop()
    assert "PRAGMA wal_checkpoint(PASSIVE)" in statements
    server.close()
