"""The maintenance agent: one pass that keeps the store lean and true.

`run_maintenance(store, dry_run=False, now=None)` runs these steps in order and returns a Report
listing every change and why (with `dry_run` nothing is written; later steps see what earlier ones
would have done, so the report is what a real pass would do):

  vectors      memories stored without a vector (a harvest or a command that had no model at hand)
               are embedded, so search can use them (with no model configured or loadable, a note
               says so and nothing changes)
  restored     memories a person brought back from the archive: the decay clock restarts, and a
               merge or fold they undid is not redone
  expire       optional time-to-live per category (`maintenance_category_ttl_days`): valid_to is
               set, so the memory stops surfacing but stays as history
  decay        by activation, not creation: a memory not recalled (last_activated_at, else when
               it occurred, else when it was stored) for its importance's grace period (7 days for
               importance 1-2, 14 for 3, 30 for 4-5) loses confidence with its layer's half-life
               (facts slowly, experiences faster; decisions only once an outcome other than
               'failed' is recorded). Days count only while the memory's scope is in use (a memory
               of it recalled or stored that day; any scope for global): a memory is stale when it
               was not recalled while its project was being worked on, not because the calendar
               moved. Exempt: pinned, protected categories, flashbulb memories (intensity >= 0.8 or
               metadata.flashbulb). Recall restores the confidence.
  dedup        near-duplicates merge (memory.consolidation)
  entities     duplicate entities merge in passes: case/punctuation, alias, embedding
  consolidate  clusters of related episodes gain a summary (extractive; written by the LLM provider
               when one is configured); old low-importance episodes fold into it
  infer        vague references resolved to entities (memory.review)
  review       recent memories re-linked and re-filed with what is now known (memory.review)
  forget       below the confidence floor and not recalled on `maintenance_forget_after_days` days
               in use: archived (restorable with `maple-memory restore ID`)
  cap          optional `maintenance_max_memories`: the lowest-value memories are archived first
  purge        archived longer than `maintenance_archive_retention_days`: deleted for good;
               entities nothing refers to any more are removed
  graph        entities whose memories often answer searches together gain a `co_retrieved` relation (memory.review)
  storage      old access-log rows and finished jobs pruned, indexes left mostly holes by deletions
               rebuilt, incremental vacuum, size report (memory.storage)

A pinned memory is never changed by any step. Confidence decay is computed from the confidence
before decay began (kept in metadata.decay), so the result does not depend on how often
maintenance runs. Passes on one database are serialised by a lease in `meta`.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from memory.errors import ConfigError, StoreUnavailable
from memory.maintenance.base import (
    Pass,
    Report,
    dumps,
    latest_outcomes,
    load_rows,
    save_activity,
)
from memory.maintenance.lifecycle import cap, decay, expire, forget, purge, restored
from memory.store import Store, iso

log = logging.getLogger("maple.maintenance")

LOCK_LEASE = 1800.0  # a maintenance pass that has not finished after 30 minutes is presumed dead
WORKER_VACUUM_MB = 64  # the server converts an old file to incremental auto-vacuum only below this size


# -- the pass ----------------------------------------------------------------------------------


def run_maintenance(
    store: Store,
    dry_run: bool = False,
    now: float | None = None,
    *,
    scopes: Sequence[str] | None = None,
    checkpoint: Callable[[], None] | None = None,
    vacuum_limit_mb: float | None = None,
    llm: Any = "config",
) -> Report:
    """Run every maintenance step once; return what changed (or would change) and why.

    `scopes` limits the memory steps to those scopes (the MCP tool passes the project and global);
    storage steps always cover the whole file. `checkpoint` is called between batches (the worker
    uses it to give way to tool calls). `vacuum_limit_mb`: the one-time VACUUM that switches an
    old database to incremental auto-vacuum runs only below this size (None: always). `llm`: a
    provider for written summaries (default: the configured one, usually none: extractive).
    """
    import time as _time

    from memory.maintenance import (  # numpy lives there: only when a pass runs
        consolidation,
        review,
        storage,
    )

    started = _time.perf_counter()
    now = store.clock() if now is None else now
    report = Report(dry_run, now)
    report.size_before = storage.size_report(store)
    with _lease(store, now, dry_run):
        embed_missing(store, report, dry_run, checkpoint or (lambda: None))
        p = Pass(store, now, dry_run, report, load_rows(store, scopes), checkpoint or (lambda: None), scopes)
        p.outcomes = latest_outcomes(store)
        if llm == "config":
            from memory import llm as llm_mod

            try:
                llm = llm_mod.provider_from_config(store.config)
            except ConfigError as e:  # a half-configured provider must not stop the pass
                report.notes.append(f"consolidate: no LLM summaries ({e})")
                llm = None
        p.llm = llm
        steps: list[Callable[[Pass], None]] = [
            restored,
            expire,
            decay,
            consolidation.dedup,
            consolidation.merge_entities,
            consolidation.consolidate,
            review.relink,
            review.infer,
            review.review,
            forget,
            cap,
            purge,
            review.co_retrieved,
        ]
        for step in steps:
            step(p)
            p.checkpoint()
        save_activity(p)  # before the access log it was read from is pruned
        storage.storage(p, vacuum_limit_mb)
        if not dry_run:
            with store.tx.atomic() as conn:
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('last_maintenance', ?), "
                    "('last_maintenance_at', ?), ('last_maintenance_counts', ?)",
                    (iso(now), repr(now), dumps(report.counts())),
                )
    report.size_after = storage.size_report(store)
    report.seconds = _time.perf_counter() - started
    return report


def embed_missing(store: Store, report: Report, dry_run: bool, checkpoint: Callable[[], None]) -> None:
    """The `vectors` step: give every memory without a vector its vector (first, so the steps
    after it compare by meaning)."""
    ids = store.without_vectors([r[0] for r in store.conn.execute("SELECT id FROM memories ORDER BY id")])
    if not ids:
        return
    if store.embedder is None:
        report.notes.append(
            f"vectors: {len(ids)} memories have no vector and no embedding model is loaded; "
            "search finds them by keywords only"
        )
        return
    if not dry_run:
        try:
            store.embed_missing(batch=64, progress=lambda done, total: checkpoint())
        except StoreUnavailable as e:
            report.notes.append(f"vectors: {len(ids)} memories still have no vector ({e})")
            return
    for mid in ids:
        report.add("vectors", "embed", "stored without a vector", memory_id=mid)


@contextmanager
def _lease(store: Store, now: float, dry_run: bool) -> Iterator[None]:
    """One pass at a time per database: a second one (another process) stops with a clear error."""
    if dry_run:
        yield
        return
    me = f"{os.getpid()}:{id(store)}"
    with store.tx.atomic() as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'maintenance_lock'").fetchone()
        if row:
            holder = json.loads(row[0])
            if holder["by"] != me and now - holder["at"] < LOCK_LEASE:
                raise StoreUnavailable(
                    f"another maintenance pass is running (since {iso(holder['at'])}); "
                    "wait for it to finish, or try again in 30 minutes"
                )
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('maintenance_lock', ?)", (dumps({"by": me, "at": now}),)
        )
    try:
        yield
    finally:
        with store.tx.atomic() as conn:
            conn.execute("DELETE FROM meta WHERE key = 'maintenance_lock'")


# -- restored, expire, decay -------------------------------------------------------------------


# -- forget, cap, purge ------------------------------------------------------------------------


def size_report(store: Store, detail: bool = False) -> dict[str, Any]:
    from memory.maintenance import storage

    return storage.size_report(store, detail)
