"""The maintenance agent: one pass that keeps the store lean and true.

`run_maintenance(store, dry_run=False, now=None)` runs these steps in order and returns a Report
listing every change and why (with `dry_run` nothing is written; later steps see what earlier ones
would have done, so the report is what a real pass would do):

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
  graph        entities often recalled together gain a `co_retrieved` relation (memory.review)
  storage      old access-log rows and finished jobs pruned, indexes left mostly holes by deletions
               rebuilt, incremental vacuum, size report (memory.storage)

A pinned memory is never changed by any step. Confidence decay is computed from the confidence
before decay began (kept in metadata.decay), so the result does not depend on how often
maintenance runs. Passes on one database are serialised by a lease in `meta`.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Sequence

from memory.errors import ConfigError, StoreUnavailable
from memory.store import Store, iso

log = logging.getLogger("maple.maintenance")

DAY = 86400.0
FLASHBULB_INTENSITY = 0.8
WRITE_BATCH = 2000  # rows per write transaction: a tool call waits at most one batch
LOCK_LEASE = 1800.0  # a maintenance pass that has not finished after 30 minutes is presumed dead
WORKER_VACUUM_MB = 64  # the server converts an old file to incremental auto-vacuum only below this size


@dataclass
class Change:
    step: str
    action: str
    why: str
    memory_id: int | None = None
    entity_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Report:
    dry_run: bool
    now: float
    changes: list[Change] = field(default_factory=list)
    size_before: dict[str, Any] = field(default_factory=dict)
    size_after: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def add(self, step: str, action: str, why: str, memory_id: int | None = None,
            entity_id: int | None = None) -> None:
        self.changes.append(Change(step, action, why, memory_id, entity_id))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for c in self.changes:
            out[c.step] = out.get(c.step, 0) + 1
        return out

    def for_memory(self, memory_id: int) -> list[Change]:
        return [c for c in self.changes if c.memory_id == memory_id]

    def to_dict(self, limit: int | None = None) -> dict[str, Any]:
        changes = self.changes if limit is None else self.changes[:limit]
        return {"dry_run": self.dry_run, "at": iso(self.now), "seconds": round(self.seconds, 3),
                "counts": self.counts(), "total_changes": len(self.changes),
                "changes": [c.to_dict() for c in changes], "size_before": self.size_before,
                "size_after": self.size_after, "notes": self.notes}


class Row:
    """A current memory as the passes see it (loaded once; changes are written back in batches)."""

    __slots__ = ("id", "scope", "layer", "category", "importance", "confidence", "pinned", "intensity", "meta",
                 "last_activated_at", "occurred_at", "created_at", "valid_to", "session_id", "content", "tags",
                 "activation_count", "source", "subject", "updated_at", "live")

    COLUMNS = ("id, scope, layer, category, importance, confidence, pinned, intensity, metadata, last_activated_at, "
               "occurred_at, created_at, valid_to, session_id, content, tags, activation_count, source, subject, "
               "updated_at")

    def __init__(self, r: Sequence[Any]):
        (self.id, self.scope, self.layer, self.category, self.importance, self.confidence, pinned, self.intensity,
         meta, self.last_activated_at, self.occurred_at, self.created_at, self.valid_to, self.session_id,
         self.content, tags, self.activation_count, self.source, self.subject, self.updated_at) = r
        self.pinned = bool(pinned)
        self.meta = json.loads(meta) if meta and meta != "{}" else {}
        self.tags = json.loads(tags) if tags and tags != "[]" else []
        self.live = True  # False once a step archives or supersedes it in this pass

    @property
    def ref(self) -> float:
        """When the memory was last recalled, else when it happened, else when it was stored."""
        return self.last_activated_at or self.occurred_at or self.created_at

    @property
    def flashbulb(self) -> bool:
        return self.intensity >= FLASHBULB_INTENSITY or bool(self.meta.get("flashbulb"))


@dataclass
class Pass:
    """Everything a step needs: the store, the time, the rows and where to write the report."""

    store: Store
    now: float
    dry_run: bool
    report: Report
    rows: dict[int, Row]
    checkpoint: Callable[[], None]
    scopes: Sequence[str] | None = None
    outcomes: dict[int, str] = field(default_factory=dict)  # decision id -> latest outcome
    parents: set[int] | None = None  # memories that have chunks, loaded when first needed
    activity: dict[str, list[int]] | None = None  # scope -> days in use (activity_days)
    llm: Any = None  # the configured LLM provider (memory.llm), for written summaries; None: extractive

    @property
    def cfg(self) -> Any:
        return self.store.config

    def current(self) -> list[Row]:
        return [r for r in self.rows.values() if r.live and (r.valid_to is None or r.valid_to > self.now)]

    def idle_days(self, scope: str, since: float) -> int:
        """Days after `since` (up to now) on which `scope` was in use: time only counts while the
        project is worked on, so a project left alone for months does not fade."""
        if self.activity is None:
            self.activity = activity_days(self.store, self.now)
        days = self.activity.get(scope) or []
        return len(days) - bisect.bisect_right(days, int(since // DAY))

    def protected(self, r: Row) -> str | None:
        """Why `r` is exempt from decay and forgetting, or None."""
        if r.pinned:
            return "pinned"
        if r.category in self.cfg.maintenance_protected_categories:
            return f"protected category {r.category!r}"
        if r.flashbulb:
            return "flashbulb memory"
        if r.layer == "decision":
            outcome = self.outcomes.get(r.id)
            if outcome is None:
                return "decision without a recorded outcome"
            if outcome == "failed":
                return "decision whose outcome failed (kept as a warning)"
        return None

    def write_many(self, sql: str, args: list[tuple]) -> None:
        """Run one statement for many rows, in short transactions, unless this is a dry run."""
        if self.dry_run or not args:
            return
        for start in range(0, len(args), WRITE_BATCH):
            with self.store.tx.atomic() as conn:
                conn.executemany(sql, args[start:start + WRITE_BATCH])
            self.checkpoint()

    def scope_sql(self, column: str = "scope") -> tuple[str, list[str]]:
        if self.scopes is None:
            return "", []
        return f" AND {column} IN ({','.join('?' * len(self.scopes))})", list(self.scopes)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# -- the pass ----------------------------------------------------------------------------------

def run_maintenance(store: Store, dry_run: bool = False, now: float | None = None, *,
                    scopes: Sequence[str] | None = None, checkpoint: Callable[[], None] | None = None,
                    vacuum_limit_mb: float | None = None, llm: Any = "config") -> Report:
    """Run every maintenance step once; return what changed (or would change) and why.

    `scopes` limits the memory steps to those scopes (the MCP tool passes the project and global);
    storage steps always cover the whole file. `checkpoint` is called between batches (the worker
    uses it to give way to tool calls). `vacuum_limit_mb`: the one-time VACUUM that switches an
    old database to incremental auto-vacuum runs only below this size (None: always). `llm`: a
    provider for written summaries (default: the configured one, usually none: extractive).
    """
    import time as _time

    from memory.maintenance import (
        consolidation,  # numpy lives there: only when a pass runs
        review,  # numpy lives there: only when a pass runs
        storage,  # numpy lives there: only when a pass runs
    )

    started = _time.perf_counter()
    now = store.clock() if now is None else now
    report = Report(dry_run, now)
    report.size_before = storage.size_report(store)
    with _lease(store, now, dry_run):
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
            restored, expire, decay, consolidation.dedup, consolidation.merge_entities,
            consolidation.consolidate, review.infer, review.review, forget, cap, purge, review.co_retrieved,
        ]
        for step in steps:
            step(p)
            p.checkpoint()
        save_activity(p)  # before the access log it was read from is pruned
        storage.storage(p, vacuum_limit_mb)
        if not dry_run:
            with store.tx.atomic() as conn:
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('last_maintenance', ?), "
                             "('last_maintenance_at', ?), ('last_maintenance_counts', ?)",
                             (iso(now), repr(now), dumps(report.counts())))
    report.size_after = storage.size_report(store)
    report.seconds = _time.perf_counter() - started
    return report


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
                raise StoreUnavailable(f"another maintenance pass is running (since {iso(holder['at'])}); "
                                       "wait for it to finish, or try again in 30 minutes")
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('maintenance_lock', ?)",
                     (dumps({"by": me, "at": now}),))
    try:
        yield
    finally:
        with store.tx.atomic() as conn:
            conn.execute("DELETE FROM meta WHERE key = 'maintenance_lock'")


def load_rows(store: Store, scopes: Sequence[str] | None) -> dict[int, Row]:
    """Live, non-superseded, top-level memories (chunks follow their parent)."""
    where, args = "", []
    if scopes is not None:
        where, args = f" AND scope IN ({','.join('?' * len(scopes))})", list(scopes)
    sql = (f"SELECT {Row.COLUMNS} FROM memories WHERE deleted_at IS NULL AND superseded_by IS NULL "
           f"AND parent_id IS NULL{where}")
    return {r[0]: Row(r) for r in store.conn.execute(sql, args)}


def latest_outcomes(store: Store) -> dict[int, str]:
    out: dict[int, str] = {}
    for mid, outcome in store.conn.execute("SELECT memory_id, outcome FROM decision_outcomes "
                                           "ORDER BY recorded_at, id"):
        out[mid] = outcome
    return out


def archive_many(p: Pass, items: list[tuple[Row, str, str, int | None]]) -> None:
    """Archive (row, step, why, superseded_by) items: deleted_at set, chunks too, reason kept in metadata."""
    args_mem, args_children = [], []
    if items and p.parents is None:
        p.parents = {r[0] for r in p.store.conn.execute(
            "SELECT DISTINCT parent_id FROM memories WHERE parent_id IS NOT NULL")}
    for r, step, why, target in items:
        r.live = False
        p.report.add(step, "archived" + (f" into #{target}" if target else ""), why, r.id)
        meta = dict(r.meta)
        meta["archived_by_maintenance"] = {"step": step, "why": why, "at": iso(p.now),
                                           **({"into": target} if target else {})}
        args_mem.append((p.now, p.now, target, dumps(meta), r.id))
        if r.id in p.parents:  # its chunks go with it
            args_children.append((p.now, p.now, r.id))
    p.write_many("UPDATE memories SET deleted_at = ?, updated_at = ?, superseded_by = coalesce(?, superseded_by), "
                 "metadata = ? WHERE id = ?", args_mem)
    p.write_many("UPDATE memories SET deleted_at = ?, updated_at = ? WHERE parent_id = ? AND deleted_at IS NULL",
                 args_children)


# -- restored, expire, decay -------------------------------------------------------------------

def restored(p: Pass) -> None:
    """A memory maintenance archived that is live again was restored by a person: respect that."""
    where, args = p.scope_sql()
    rows = p.store.conn.execute(
        f"SELECT {Row.COLUMNS}, superseded_by FROM memories WHERE deleted_at IS NULL AND parent_id IS NULL "
        f"AND json_extract(metadata, '$.archived_by_maintenance') IS NOT NULL{where}", args).fetchall()
    updates = []
    for raw in rows:
        r = Row(raw[:-1])
        if r.pinned:
            continue
        mark = r.meta.pop("archived_by_maintenance")
        into = mark.get("into")
        if into is not None:  # a merge or fold the person undid: never redo it
            r.meta["keep_separate"] = sorted(set(r.meta.get("keep_separate", [])) | {into})
        base = (r.meta.pop("decay", None) or {}).get("base", r.confidence)
        activated = max(r.last_activated_at or 0.0, r.updated_at)  # the restore counts as a recall
        p.report.add("restored", f"confidence {r.confidence:.3f} -> {base:.3f}" + (f", no longer part of #{into}"
                     if into else ""), f"restored by a person after {mark.get('step')} ({mark.get('why')}); "
                     "the decay clock restarts", r.id)
        r.confidence, r.last_activated_at = base, activated
        updates.append((base, activated, dumps(r.meta), r.id))
        p.rows[r.id] = r
    p.write_many("UPDATE memories SET confidence = ?, last_activated_at = ?, superseded_by = NULL, metadata = ? "
                 "WHERE id = ?", updates)


def expire(p: Pass) -> None:
    ttl = p.cfg.maintenance_category_ttl_days
    if not ttl:
        return
    updates = []
    for r in p.current():
        days = ttl.get(r.category)
        if days is None or r.pinned:
            continue
        end = (r.occurred_at or r.created_at) + days * DAY
        if end <= p.now:
            r.valid_to = end
            p.report.add("expire", f"valid_to set to {iso(end)}", f"category {r.category!r} lives {days:g} days "
                         "(maintenance_category_ttl_days); it stays as history", r.id)
            updates.append((end, r.id))
    p.write_many("UPDATE memories SET valid_to = ? WHERE id = ?", updates)


DECAY_STEPS = 20  # confidence moves in steps of 1/20 of a half-life (about 3.4%)


def decayed_confidence(base: float, stale_days: float, half_life_days: float) -> float:
    """Confidence after `stale_days` beyond the grace period: halves every `half_life_days`.

    It moves in steps (1/DECAY_STEPS of a half-life), so a memory is rewritten about twenty
    times per half-life instead of on every pass, and tiny differences in staleness do not
    reorder search results; at each whole half-life the value is exact.
    """
    if stale_days <= 0:
        return base
    steps = math.floor(stale_days / half_life_days * DECAY_STEPS + 1e-9)
    return base * 0.5 ** (steps / DECAY_STEPS)


def decayed(cfg: Any, layer: str, importance: int, idle_days: float, base: float) -> tuple[float, float, float]:
    """(confidence, days stale beyond the grace period, half-life) after `idle_days` days in use
    without a recall."""
    grace = float(cfg.maintenance_grace_days.get(str(importance), 14))
    stale = idle_days - grace
    half = float(cfg.maintenance_half_life_days.get(layer, 365))
    return round(decayed_confidence(base, stale, half), 4), stale, half


ACTIVITY_KEEP_DAYS = 3 * 366  # days in use remembered per scope (older ones no longer matter)


def activity_days(store: Store, now: float) -> dict[str, list[int]]:
    """Per scope, the days (epoch day numbers, up to `now`) on which it was in use: a memory of it
    was recalled or stored. The global scope is in use whenever any scope is.

    The access log is pruned, so each pass also keeps what it learned in meta('activity_days').
    """
    per: dict[str, set[int]] = {}
    row = store.conn.execute("SELECT value FROM meta WHERE key = 'activity_days'").fetchone()
    for scope, days in (json.loads(row[0]) if row else {}).items():
        per[scope] = set(days)
    for scope, day in store.conn.execute(
            "SELECT DISTINCT m.scope, CAST(a.at / 86400 AS INTEGER) FROM access_log a "
            "JOIN memories m ON m.id = a.memory_id WHERE a.at <= ? "
            "UNION SELECT DISTINCT scope, CAST(created_at / 86400 AS INTEGER) FROM memories WHERE created_at <= ?",
            (now, now)):
        per.setdefault(scope, set()).add(day)
    today = int(now // DAY)
    per["global"] = set().union(*per.values()) if per else set()
    return {scope: sorted(d for d in days if today - ACTIVITY_KEEP_DAYS < d <= today) for scope, days in per.items()}


def save_activity(p: Pass) -> None:
    if p.dry_run:
        return
    if p.activity is None:
        p.activity = activity_days(p.store, p.now)
    with p.store.tx.atomic() as conn:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('activity_days', ?)",
                     (json.dumps(p.activity, separators=(",", ":")),))


def base_confidence(r: Row) -> float:
    """The confidence before decay began (what a recall would restore)."""
    state = r.meta.get("decay")
    if state and state.get("value") is not None and abs(r.confidence - state["value"]) <= 1e-6:
        return float(state["base"])
    return r.confidence


def set_decayed(p: Pass, r: Row, base: float) -> None:
    """Give `r` the confidence `base` decayed to now (for rows a step rewrites: merge winners)."""
    if p.protected(r):
        r.confidence = base
        r.meta.pop("decay", None)
        return
    target, stale, _ = decayed(p.cfg, r.layer, r.importance, p.idle_days(r.scope, r.ref), base)
    r.confidence = target
    if stale > 0 and target != base:
        r.meta["decay"] = {"base": base, "value": target, "ref": r.ref}
    else:
        r.meta.pop("decay", None)


def decay(p: Pass) -> None:
    cfg = p.cfg
    updates = []
    for r in p.current():
        state = r.meta.get("decay")
        exempt = p.protected(r)
        if state is not None and state.get("value") is not None and abs(r.confidence - state["value"]) > 1e-6:
            # Someone set the confidence since (a person, or extraction reinforcing it): that is
            # the new base, and decay counts from when it was set.
            state = {"base": r.confidence, "value": r.confidence, "ref": r.ref, "from": r.updated_at}
            r.meta["decay"] = state
            updates.append((r.confidence, dumps(r.meta), r.id))
        if state is not None and (exempt or abs(state.get("ref", 0) - r.ref) > 1e-6):
            why = f"{exempt}: exempt from decay" if exempt else f"recalled on {iso(r.ref)[:10]}"
            p.report.add("decay", f"confidence {r.confidence:.3f} -> {state['base']:.3f} (restored)", why, r.id)
            r.confidence = state["base"]
            r.meta.pop("decay")
            updates.append((r.confidence, dumps(r.meta), r.id))
            state = None
        if exempt:
            continue
        base = state["base"] if state else r.confidence
        ref = max(r.ref, state.get("from", 0.0)) if state else r.ref
        idle = p.idle_days(r.scope, ref)
        target, stale, half = decayed(cfg, r.layer, r.importance, idle, base)
        if stale <= 0 or abs(target - r.confidence) < 0.001:
            continue
        p.report.add("decay", f"confidence {r.confidence:.3f} -> {target:.3f}",
                     f"not recalled on {idle} days its project was in use (grace {idle - stale:g} days for "
                     f"importance {r.importance}; {r.layer} half-life {half:g} days)", r.id)
        r.confidence = target
        r.meta["decay"] = {"base": base, "value": target, "ref": r.ref,
                           **({"from": state["from"]} if state and "from" in state else {})}
        updates.append((target, dumps(r.meta), r.id))
    p.write_many("UPDATE memories SET confidence = ?, metadata = ? WHERE id = ?", updates)


# -- forget, cap, purge ------------------------------------------------------------------------

def forget(p: Pass) -> None:
    floor = p.cfg.maintenance_confidence_floor
    stale_after = p.cfg.maintenance_forget_after_days
    items = []
    for r in p.current():
        if r.confidence >= floor or p.protected(r):
            continue
        idle = p.idle_days(r.scope, r.ref)
        if idle < stale_after:
            continue
        items.append((r, "forget", f"confidence {r.confidence:.3f} is below the floor {floor:g} and it was not "
                      f"recalled on {idle} days its project was in use", None))
    archive_many(p, items)


def value_of(p: Pass, r: Row) -> float:
    """What keeping a memory is worth, for the storage cap: importance x confidence x recency."""
    recency = math.exp(-max(0.0, p.now - r.ref) / (90 * DAY))
    return (r.importance / 5) * r.confidence * (0.5 + 0.5 * recency)


def cap(p: Pass) -> None:
    limit = p.cfg.maintenance_max_memories
    if not limit:
        return
    current = p.current()
    excess = len(current) - limit
    if excess <= 0:
        return
    candidates = sorted((r for r in current if not p.protected(r)), key=lambda r: (value_of(p, r), r.id))
    items = [(r, "cap", f"the store holds {len(current)} memories, over maintenance_max_memories={limit}; "
              f"this one is among the least valuable (value {value_of(p, r):.3f})", None)
             for r in candidates[:excess]]
    if len(candidates) < excess:
        p.report.notes.append(f"cap: {excess - len(candidates)} memories over the limit are all protected; kept")
    archive_many(p, items)


def purge(p: Pass) -> None:
    """Delete for good what has been archived longer than the retention period; drop orphan entities."""
    cutoff = p.now - p.cfg.maintenance_archive_retention_days * DAY
    where, args = p.scope_sql()
    rows = p.store.conn.execute(
        f"SELECT id, deleted_at FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? AND pinned = 0 "
        f"AND parent_id IS NULL{where}", (cutoff, *args)).fetchall()
    for mid, at in rows:
        p.report.add("purge", "deleted permanently", f"archived on {iso(at)[:10]}, longer than the retention "
                     f"period of {p.cfg.maintenance_archive_retention_days:g} days", mid)
    if not p.dry_run and rows:
        ids = [r[0] for r in rows]
        vec = p.store.has_vectors
        for start in range(0, len(ids), WRITE_BATCH):
            chunk = ids[start:start + WRITE_BATCH]
            marks = ",".join("?" * len(chunk))
            with p.store.tx.atomic() as conn:
                every = chunk + [r[0] for r in conn.execute(
                    f"SELECT id FROM memories WHERE parent_id IN ({marks})", chunk)]
                for s in range(0, len(every), 500):
                    part = every[s:s + 500]
                    pm = ",".join("?" * len(part))
                    conn.execute(f"DELETE FROM memory_fts WHERE rowid IN ({pm})", part)
                    if vec:
                        conn.execute(f"DELETE FROM memory_vec WHERE rowid IN ({pm})", part)
                conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
            p.checkpoint()
    if not p.dry_run:  # the purge log (memory.textindex reads it) only has to outlive a warm server's next search
        with p.store.tx.atomic() as conn:
            conn.execute("DELETE FROM purges WHERE at < ?", (p.now - 7 * DAY,))
    orphans = p.store.conn.execute(
        "SELECT id, name FROM entities e WHERE NOT EXISTS (SELECT 1 FROM memory_entities l WHERE l.entity_id = e.id) "
        "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.src = e.id OR r.dst = e.id)"
        + p.scope_sql("e.scope")[0], p.scope_sql()[1]).fetchall()
    for eid, name in orphans:
        p.report.add("purge", f"entity {name!r} removed", "no memory or relation refers to it any more",
                     entity_id=eid)
    p.write_many("DELETE FROM entities WHERE id = ?", [(eid,) for eid, _ in orphans])


def size_report(store: Store, detail: bool = False) -> dict[str, Any]:
    from memory.maintenance import storage

    return storage.size_report(store, detail)
