"""Decisions and what became of them.

A decision is a memory in the `decision` layer whose metadata keeps its parts (what was chosen,
why, the alternatives). Its outcomes are rows of `decision_outcomes` (worked / failed / partial,
with notes), newest last; the latest one is mirrored into the memory so every reader sees it:

  metadata.outcome   {"result", "notes", "at", "count"}
  tags               outcome-worked / outcome-failed / outcome-partial (keyword search finds them)
  importance         a failed decision rises to at least 4: it surfaces as a warning, and
                     maintenance keeps it ("kept as a warning") instead of letting it decay
  metadata.warning   on a failure, one sentence saying not to repeat it unexamined

The mirror is written with `Store.update`, so the decision's earlier state stays in its history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory.errors import InvalidInput, NotFound
from memory.store.memories import Store
from memory.store.records import Memory, NewMemory, iso, scrub

OUTCOMES = ("worked", "failed", "partial")


FAILED_IMPORTANCE = 4


MAX_ALTERNATIVES = 20


MAX_NOTES = 4000


def _clause(text: str) -> str:
    return " ".join(str(text).split()).rstrip(" .;")


def _ended(text: str) -> str:
    """Caller text as a sentence of a template: spaces folded, a full stop added only when it
    does not end one already (a note ending "queues." must not read "queues.. Do not repeat")."""
    t = " ".join(str(text).split()).rstrip(" ;,:；，：")
    return t if t.endswith((".", "!", "?", "。", "！", "？", "…")) else t + "."


def decision_text(chosen: str, why: str, alternatives: Sequence[str] = ()) -> str:
    """`Decision: X. Why: Y. Alternatives considered: A; B.` — self-contained for later readers."""
    text = f"Decision: {_ended(chosen)} Why: {_ended(why)}"
    alts = [_clause(a) for a in alternatives if _clause(a)]
    if alts:
        text += " Alternatives considered: " + "; ".join(alts) + "."
    return text


def record_decision(
    store: Store,
    chosen: str,
    why: str,
    *,
    scope: str,
    alternatives: Sequence[str] = (),
    subject: str | None = None,
    category: str = "decision",
    importance: int = 3,
    tags: Sequence[str] = (),
    context: str | None = None,
) -> Memory:
    """Store a decision as one memory in the decision layer."""
    if not isinstance(chosen, str) or not _clause(chosen):
        raise InvalidInput("say what was chosen (chosen is empty)")
    if not isinstance(why, str) or not _clause(why):
        raise InvalidInput("say why it was chosen (why is empty): the reason is what makes a decision reusable")
    if len(alternatives) > MAX_ALTERNATIVES:
        raise InvalidInput(f"at most {MAX_ALTERNATIVES} alternatives, got {len(alternatives)}")
    # Redacted before `_clause` joins the lines: a rule may need the line a secret ends (the store
    # redacts the joined text again; redaction is idempotent).
    secrets = store.config.redact_patterns
    chosen, why = scrub(chosen, secrets), scrub(why, secrets)
    alternatives = [scrub(a, secrets) if isinstance(a, str) else a for a in alternatives]
    context = scrub(context, secrets) if isinstance(context, str) else context
    parts: dict[str, Any] = {
        "chosen": _clause(chosen),
        "why": _clause(why),
        "alternatives": [_clause(a) for a in alternatives if _clause(a)],
    }
    if context:
        parts["context"] = " ".join(context.split())
    return store.add(
        NewMemory(
            content=decision_text(chosen, why, alternatives),
            layer="decision",
            category=category,
            subject=subject,
            scope=scope,
            importance=importance,
            tags=list(tags),
            metadata={"decision": parts},
        )
    )


@dataclass
class Outcome:
    id: int
    memory_id: int
    outcome: str
    notes: str
    recorded_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory_id": self.memory_id,
            "outcome": self.outcome,
            "notes": self.notes,
            "recorded_at": iso(self.recorded_at),
        }


def outcomes_of(store: Store, memory_ids: Sequence[int]) -> dict[int, list[Outcome]]:
    """Every recorded outcome of these decisions, oldest first."""
    out: dict[int, list[Outcome]] = {i: [] for i in memory_ids}
    ids = list(memory_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for row in store.conn.execute(
            f"SELECT id, memory_id, outcome, notes, recorded_at FROM decision_outcomes "
            f"WHERE memory_id IN ({','.join('?' * len(chunk))}) ORDER BY recorded_at, id",
            chunk,
        ):
            out[row[1]].append(Outcome(*row))
    return out


def _readable_decision(store: Store, memory_id: int, scopes: Sequence[str]) -> Memory:
    m = store.get(memory_id, include_deleted=True)
    if m.scope not in scopes:
        raise NotFound(
            f"no memory {memory_id} in this project or the global scope; lessons for a task "
            "(lessons_for, `maple-memory lessons`) list the decisions and their ids"
        )
    if m.layer != "decision":
        raise InvalidInput(
            f"memory {memory_id} is a {m.layer}, not a decision; record the decision first "
            "(decision_record, `maple-memory decide`), then its outcome"
        )
    if m.deleted_at is not None:
        raise InvalidInput(
            f"decision {memory_id} is archived; restore it (`maple-memory restore {memory_id}`) "
            "before recording its outcome"
        )
    return m


def record_outcome(
    store: Store, memory_id: int, outcome: str, notes: str = "", *, scopes: Sequence[str]
) -> tuple[Memory, Outcome]:
    """Record how a decision turned out; the decision's memory then carries the latest outcome."""
    if outcome not in OUTCOMES:
        raise InvalidInput(f"outcome must be one of {', '.join(OUTCOMES)}, got {outcome!r}")
    given = " ".join((notes or "").split())
    if len(given) > MAX_NOTES:
        raise InvalidInput(f"notes are {len(given)} characters; keep them under {MAX_NOTES}")
    # Redacted before the lines are joined: a rule may need the line a secret ends.
    notes = " ".join(scrub(notes or "", store.config.redact_patterns).split())
    with store.tx.atomic() as conn:
        m = _readable_decision(store, memory_id, scopes)
        now = store.clock()
        oid = conn.execute(
            "INSERT INTO decision_outcomes (memory_id, outcome, notes, recorded_at) VALUES (?, ?, ?, ?)",
            (memory_id, outcome, notes, now),
        ).lastrowid
        count = conn.execute("SELECT count(*) FROM decision_outcomes WHERE memory_id = ?", (memory_id,)).fetchone()[0]
        metadata = dict(m.metadata)
        metadata["outcome"] = {"result": outcome, "notes": notes, "at": iso(now), "count": count}
        changes: dict[str, Any] = {"tags": [t for t in m.tags if not t.startswith("outcome-")] + [f"outcome-{outcome}"]}
        if outcome == "failed":
            metadata["warning"] = (
                "This decision failed"
                + (f": {_ended(notes)}" if notes else ".")
                + " Do not repeat it without addressing why."
            )
            changes["importance"] = max(m.importance, FAILED_IMPORTANCE)
        else:
            metadata.pop("warning", None)  # a later success lifts the warning; the history keeps it
        changes["metadata"] = metadata
        updated = store.update(memory_id, reason=f"outcome {outcome}", **changes)
    return updated, Outcome(oid, memory_id, outcome, notes, now)
