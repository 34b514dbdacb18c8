"""What every maintenance step shares: the pass (`Pass`: store, time, rows, report), the rows it
works on, the report of changes, archiving, and the confidence-decay arithmetic."""

from __future__ import annotations

import bisect
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memory.store import Store, iso

DAY = 86400.0
FLASHBULB_INTENSITY = 0.8
WRITE_BATCH = 2000  # rows per write transaction: a tool call waits at most one batch


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

    def add(self, step: str, action: str, why: str, memory_id: int | None = None, entity_id: int | None = None) -> None:
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
        return {
            "dry_run": self.dry_run,
            "at": iso(self.now),
            "seconds": round(self.seconds, 3),
            "counts": self.counts(),
            "total_changes": len(self.changes),
            "changes": [c.to_dict() for c in changes],
            "size_before": self.size_before,
            "size_after": self.size_after,
            "notes": self.notes,
        }


class Row:
    """A current memory as the passes see it (loaded once; changes are written back in batches)."""

    __slots__ = (
        "id",
        "scope",
        "layer",
        "category",
        "importance",
        "confidence",
        "pinned",
        "intensity",
        "meta",
        "last_activated_at",
        "occurred_at",
        "created_at",
        "valid_to",
        "session_id",
        "content",
        "tags",
        "activation_count",
        "source",
        "subject",
        "updated_at",
        "live",
    )

    COLUMNS = (
        "id, scope, layer, category, importance, confidence, pinned, intensity, metadata, last_activated_at, "
        "occurred_at, created_at, valid_to, session_id, content, tags, activation_count, source, subject, "
        "updated_at"
    )

    def __init__(self, r: Sequence[Any]):
        (
            self.id,
            self.scope,
            self.layer,
            self.category,
            self.importance,
            self.confidence,
            pinned,
            self.intensity,
            meta,
            self.last_activated_at,
            self.occurred_at,
            self.created_at,
            self.valid_to,
            self.session_id,
            self.content,
            tags,
            self.activation_count,
            self.source,
            self.subject,
            self.updated_at,
        ) = r
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
                conn.executemany(sql, args[start : start + WRITE_BATCH])
            self.checkpoint()

    def scope_sql(self, column: str = "scope") -> tuple[str, list[str]]:
        if self.scopes is None:
            return "", []
        return f" AND {column} IN ({','.join('?' * len(self.scopes))})", list(self.scopes)


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def load_rows(store: Store, scopes: Sequence[str] | None) -> dict[int, Row]:
    """Live, non-superseded, top-level memories (chunks follow their parent)."""
    where, args = "", []
    if scopes is not None:
        where, args = f" AND scope IN ({','.join('?' * len(scopes))})", list(scopes)
    sql = (
        f"SELECT {Row.COLUMNS} FROM memories WHERE deleted_at IS NULL AND superseded_by IS NULL "
        f"AND parent_id IS NULL{where}"
    )
    return {r[0]: Row(r) for r in store.conn.execute(sql, args)}


def latest_outcomes(store: Store) -> dict[int, str]:
    out: dict[int, str] = {}
    for mid, outcome in store.conn.execute("SELECT memory_id, outcome FROM decision_outcomes ORDER BY recorded_at, id"):
        out[mid] = outcome
    return out


def archive_many(p: Pass, items: list[tuple[Row, str, str, int | None]]) -> None:
    """Archive (row, step, why, superseded_by) items: deleted_at set, chunks too, reason kept in metadata."""
    args_mem, args_children = [], []
    if items and p.parents is None:
        p.parents = {
            r[0] for r in p.store.conn.execute("SELECT DISTINCT parent_id FROM memories WHERE parent_id IS NOT NULL")
        }
    for r, step, why, target in items:
        r.live = False
        p.report.add(step, "archived" + (f" into #{target}" if target else ""), why, r.id)
        meta = dict(r.meta)
        meta["archived_by_maintenance"] = {
            "step": step,
            "why": why,
            "at": iso(p.now),
            **({"into": target} if target else {}),
        }
        args_mem.append((p.now, p.now, target, dumps(meta), r.id))
        if r.id in p.parents:  # its chunks go with it
            args_children.append((p.now, p.now, r.id))
    p.write_many(
        "UPDATE memories SET deleted_at = ?, updated_at = ?, superseded_by = coalesce(?, superseded_by), "
        "metadata = ? WHERE id = ?",
        args_mem,
    )
    p.write_many(
        "UPDATE memories SET deleted_at = ?, updated_at = ? WHERE parent_id = ? AND deleted_at IS NULL", args_children
    )


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
        (now, now),
    ):
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
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('activity_days', ?)",
            (json.dumps(p.activity, separators=(",", ":")),),
        )


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
