"""What happened per session, read back for a person (the web page): which memories were put in
front of the model and when, and what a harvest of the session's transcript stored or changed.

The hooks and `memory_surface` log every delivery in `access_log` (memory, time, kind, session,
and for a prompt's delivery a short excerpt of the prompt, redacted by the store in the same
write), harvested memories carry their session, merges and reinforcements log a `reinforce`
access, and the transcript's cursor names the session's transcript file. A delivery recorded
before the excerpt was kept gets its prompt from that transcript instead (matched by time, so
only once harvested, and redacted before it is shown). Only memories in `scopes` are named:
another project's deliveries stay unseen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory.lang import privacy
from memory.store import Store, browse, iso, parse_time

SHOWN_KINDS = ("surface", "brief", "context")  # access kinds that put memories in front of a session
SUMMARY_FIELDS = ("id", "content", "layer", "category", "subject", "scope", "importance", "pinned", "occurred_at")
PROMPT_CHARS = 400  # of a prompt shown beside what it was given
# Claude Code writes the prompt to the transcript, then runs UserPromptSubmit: a delivery answers
# the latest prompt written before it (or, for clock rounding, one written just after).
PROMPT_SLACK_S = 2.0


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def sessions(store: Store, scopes: Sequence[str], *, limit: int = 50) -> list[dict[str, Any]]:
    """The latest sessions that were shown or stored memories in `scopes`, newest first."""
    marks = _marks(scopes)
    rows = store.conn.execute(
        f"""
        SELECT session_id, min(at), max(at), sum(shown), sum(briefed), sum(stored) FROM (
            SELECT a.session_id, a.at, CASE WHEN a.kind = 'brief' THEN 0 ELSE 1 END AS shown,
                CASE WHEN a.kind = 'brief' THEN 1 ELSE 0 END AS briefed, 0 AS stored
            FROM access_log a JOIN memories m ON m.id = a.memory_id
            WHERE a.session_id IS NOT NULL AND a.kind IN ({_marks(SHOWN_KINDS)}) AND m.scope IN ({marks})
            UNION ALL
            SELECT session_id, created_at, 0, 0, 1 FROM memories
            WHERE session_id IS NOT NULL AND parent_id IS NULL AND scope IN ({marks})
        ) GROUP BY session_id ORDER BY max(at) DESC LIMIT ?
        """,
        (*SHOWN_KINDS, *scopes, *scopes, limit),
    ).fetchall()
    return [
        {"session_id": s, "first": iso(a), "last": iso(b), "surfaced": n, "briefed": k, "stored": st}
        for s, a, b, n, k, st in rows
    ]


def _summaries(store: Store, ids: Sequence[int], scopes: Sequence[str]) -> dict[int, dict[str, Any]]:
    found = [m for m in store.get_many(list(ids)) if m.scope in scopes]
    now = store.clock()
    return {
        m.id: {
            **{k: v for k, v in m.to_dict().items() if k in SUMMARY_FIELDS},
            "status": browse.status_of(m, now),
        }
        for m in found
    }


def _prompts(store: Store, session_id: str) -> list[tuple[float, str]]:
    """The session's user prompts with their times, from its transcript (redacted); [] when the
    transcript was never harvested or is gone."""
    from memory.extraction import transcript

    row = store.conn.execute(
        "SELECT path FROM transcript_cursors WHERE session_id = ? ORDER BY updated_at DESC LIMIT 1", (session_id,)
    ).fetchone()
    if row is None:
        return []
    try:
        turns, _ = transcript.load_file(row[0], include_sidechains=False)
    except OSError:
        return []
    out = []
    for t in turns:
        if t.get("role") != "user" or t.get("kind") != "text" or not t.get("timestamp"):
            continue
        try:
            at = parse_time(t["timestamp"])
        except Exception:  # an odd timestamp: that prompt is not matched, the rest still are
            continue
        text = privacy.redact(" ".join(str(t.get("text") or "").split()))
        out.append((at, text[:PROMPT_CHARS] + ("…" if len(text) > PROMPT_CHARS else "")))
    return sorted(out)


def session(store: Store, scopes: Sequence[str], session_id: str) -> dict[str, Any]:
    """One session: each delivery (time, kind, the prompt it answered, its memories) and what the
    harvest of its transcript did (stored, superseded, merged or reinforced)."""
    c = store.conn
    marks = _marks(scopes)
    rows = c.execute(
        f"""
        SELECT a.at, a.kind, a.memory_id, a.prompt FROM access_log a JOIN memories m ON m.id = a.memory_id
        WHERE a.session_id = ? AND a.kind IN ({_marks(SHOWN_KINDS)}) AND m.scope IN ({marks})
        ORDER BY a.at, a.id
        """,
        (session_id, *SHOWN_KINDS, *scopes),
    ).fetchall()
    stored = [
        r[0]
        for r in c.execute(
            f"SELECT id FROM memories WHERE session_id = ? AND parent_id IS NULL AND scope IN ({marks}) ORDER BY id",
            (session_id, *scopes),
        )
    ]
    replaced = (
        c.execute(
            f"SELECT id, superseded_by FROM memories WHERE superseded_by IN ({_marks(stored)}) ORDER BY id", stored
        ).fetchall()
        if stored
        else []
    )
    reinforced = [
        r[0]
        for r in c.execute(
            f"""SELECT DISTINCT a.memory_id FROM access_log a JOIN memories m ON m.id = a.memory_id
            WHERE a.session_id = ? AND a.kind = 'reinforce' AND m.scope IN ({marks}) ORDER BY a.memory_id""",
            (session_id, *scopes),
        )
    ]
    ids = {r[2] for r in rows} | set(stored) | {r[0] for r in replaced} | set(reinforced)
    info = _summaries(store, sorted(ids), scopes) if ids else {}
    # Only deliveries recorded without their prompt (older rows) read the transcript.
    old_rows = any(kind == "surface" and prompt is None for _, kind, _, prompt in rows)
    prompts = _prompts(store, session_id) if old_rows else []
    events: list[dict[str, Any]] = []
    for at, kind, mid, recorded in rows:
        if not events or events[-1]["_at"] != at or events[-1]["kind"] != kind:
            events.append({"_at": at, "at": iso(at), "kind": kind, "prompt": None, "memories": []})
        if recorded and events[-1]["prompt"] is None:
            events[-1]["prompt"] = recorded
        if mid in info:
            events[-1]["memories"].append(info[mid])
    for e in events:
        if e["kind"] == "surface" and e["prompt"] is None and prompts:
            at = e["_at"]
            before = [text for t, text in prompts if t <= at]
            near = [text for t, text in prompts if at < t <= at + PROMPT_SLACK_S]
            e["prompt"] = before[-1] if before else near[0] if near else None
        del e["_at"]
    stored_ids = set(stored)
    return {
        "session_id": session_id,
        "deliveries": events,
        "harvest": {
            "stored": [info[i] for i in stored if i in info],
            "superseded": [{**info[old], "by": new} for old, new in replaced if old in info],
            # a reinforcement of a memory the same session stored is its own repetition, not news
            "reinforced": [info[i] for i in reinforced if i in info and i not in stored_ids],
        },
        "transcript_prompts": len(prompts),
    }


def pulse(store: Store, scopes: Sequence[str]) -> dict[str, Any]:
    """A cheap fingerprint of what a person watching would see change: the newest memory, the
    latest change and the latest delivery in `scopes` (the page polls it and refreshes)."""
    marks = _marks(scopes)
    newest, changed, count = store.conn.execute(
        f"SELECT max(id), max(updated_at), count(*) FROM memories WHERE scope IN ({marks})", scopes
    ).fetchone()
    shown = store.conn.execute("SELECT max(id) FROM access_log").fetchone()[0]
    return {"newest": newest or 0, "changed": iso(changed), "count": count, "shown": shown or 0}


def scopes_present(store: Store, scopes: Sequence[str]) -> list[dict[str, Any]]:
    """The scopes among `scopes` that hold memories (not archived), with how many, most first:
    what a scope filter can offer."""
    rows = store.conn.execute(
        f"SELECT scope, count(*) FROM memories WHERE scope IN ({_marks(scopes)}) AND deleted_at IS NULL "
        "AND parent_id IS NULL GROUP BY scope ORDER BY count(*) DESC, scope",
        list(scopes),
    ).fetchall()
    return [{"scope": s, "memories": n} for s, n in rows]


def entities_of(store: Store, memory_id: int) -> list[dict[str, Any]]:
    """The entities a memory is linked to (what it names), by name."""
    rows = store.conn.execute(
        "SELECT e.id, e.name, e.kind, me.role FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
        "WHERE me.memory_id = ? ORDER BY e.name",
        (memory_id,),
    ).fetchall()
    return [{"id": i, "name": n, "kind": k, "role": r} for i, n, k, r in rows]
