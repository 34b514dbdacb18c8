"""The lifecycle steps of a maintenance pass: restored, expire, decay, forget, cap and purge
(the order and the why of each are in memory.maintenance.agent)."""

from __future__ import annotations

import math

from memory.maintenance.base import (
    DAY,
    WRITE_BATCH,
    Pass,
    Row,
    archive_many,
    decayed,
    dumps,
)
from memory.store import iso


def restored(p: Pass) -> None:
    """A memory maintenance archived that is live again was restored by a person: respect that."""
    where, args = p.scope_sql()
    rows = p.store.conn.execute(
        f"SELECT {Row.COLUMNS}, superseded_by FROM memories WHERE deleted_at IS NULL AND parent_id IS NULL "
        f"AND json_extract(metadata, '$.archived_by_maintenance') IS NOT NULL{where}",
        args,
    ).fetchall()
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
        changed = [f"confidence {r.confidence:.3f} -> {base:.3f}"] if round(r.confidence, 3) != round(base, 3) else []
        changed += [f"no longer part of #{into}"] if into else []
        p.report.add(
            "restored",
            ", ".join(changed) or "current again",
            f"restored by a person after {mark.get('step')} ({mark.get('why')}); the decay clock restarts",
            r.id,
        )
        r.confidence, r.last_activated_at = base, activated
        updates.append((base, activated, dumps(r.meta), r.id))
        p.rows[r.id] = r
    p.write_many(
        "UPDATE memories SET confidence = ?, last_activated_at = ?, superseded_by = NULL, metadata = ? WHERE id = ?",
        updates,
    )


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
            p.report.add(
                "expire",
                f"valid_to set to {iso(end)}",
                f"category {r.category!r} lives {days:g} days (maintenance_category_ttl_days); it stays as history",
                r.id,
            )
            updates.append((end, r.id))
    p.write_many("UPDATE memories SET valid_to = ? WHERE id = ?", updates)


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
        p.report.add(
            "decay",
            f"confidence {r.confidence:.3f} -> {target:.3f}",
            f"not recalled on {idle} days its project was in use (grace {idle - stale:g} days for "
            f"importance {r.importance}; {r.layer} half-life {half:g} days)",
            r.id,
        )
        r.confidence = target
        r.meta["decay"] = {
            "base": base,
            "value": target,
            "ref": r.ref,
            **({"from": state["from"]} if state and "from" in state else {}),
        }
        updates.append((target, dumps(r.meta), r.id))
    p.write_many("UPDATE memories SET confidence = ?, metadata = ? WHERE id = ?", updates)


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
        items.append(
            (
                r,
                "forget",
                f"confidence {r.confidence:.3f} is below the floor {floor:g} and it was not "
                f"recalled on {idle} days its project was in use",
                None,
            )
        )
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
    items = [
        (
            r,
            "cap",
            f"the store holds {len(current)} memories, over maintenance_max_memories={limit}; "
            f"this one is among the least valuable (value {value_of(p, r):.3f})",
            None,
        )
        for r in candidates[:excess]
    ]
    if len(candidates) < excess:
        p.report.notes.append(f"cap: {excess - len(candidates)} memories over the limit are all protected; kept")
    archive_many(p, items)


def purge(p: Pass) -> None:
    """Delete for good what has been archived longer than the retention period; drop orphan entities."""
    cutoff = p.now - p.cfg.maintenance_archive_retention_days * DAY
    where, args = p.scope_sql()
    rows = p.store.conn.execute(
        f"SELECT id, deleted_at FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? AND pinned = 0 "
        f"AND parent_id IS NULL{where}",
        (cutoff, *args),
    ).fetchall()
    for mid, at in rows:
        p.report.add(
            "purge",
            "deleted permanently",
            f"archived on {iso(at)[:10]}, longer than the retention "
            f"period of {p.cfg.maintenance_archive_retention_days:g} days",
            mid,
        )
    if not p.dry_run and rows:
        ids = [r[0] for r in rows]
        for start in range(0, len(ids), WRITE_BATCH):
            p.store.purge(ids[start : start + WRITE_BATCH])
            p.checkpoint()
    if not p.dry_run:  # the purge log (memory.textindex reads it) only has to outlive a warm server's next search
        with p.store.tx.atomic() as conn:
            conn.execute("DELETE FROM purges WHERE at < ?", (p.now - 7 * DAY,))
    orphans = p.store.conn.execute(
        "SELECT id, name FROM entities e WHERE NOT EXISTS (SELECT 1 FROM memory_entities l WHERE l.entity_id = e.id) "
        "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.src = e.id OR r.dst = e.id)" + p.scope_sql("e.scope")[0],
        p.scope_sql()[1],
    ).fetchall()
    for eid, name in orphans:
        p.report.add("purge", f"entity {name!r} removed", "no memory or relation refers to it any more", entity_id=eid)
    p.write_many("DELETE FROM entities WHERE id = ?", [(eid,) for eid, _ in orphans])
