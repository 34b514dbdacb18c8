"""Lessons for a task: the past decisions relevant to it and how they turned out, failures first
(decisions and their outcomes are recorded by memory.store.decisions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.errors import InvalidInput
from memory.retrieval import ranking as retrieval
from memory.store import Memory, Store
from memory.store.decisions import Outcome, outcomes_of

OUTCOME_ORDER = {"failed": 0, "partial": 1, "worked": 2, None: 3}  # lessons: failures first


@dataclass
class Lesson:
    memory: Memory
    score: float
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def outcome(self) -> str | None:
        return self.outcomes[-1].outcome if self.outcomes else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "score": round(self.score, 6),
            "outcome": self.outcome,
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def lessons_for(
    store: Store, task: str, scopes: Sequence[str], *, limit: int = 10, include_open: bool = True
) -> list[Lesson]:
    """The past decisions most relevant to `task`, failures first, then partial successes, then
    what worked, then decisions with no outcome yet (unless `include_open` is false).

    Relevance picks which decisions (the `limit` best), the outcome orders them: a weakly related
    failure does not push out a closely related success.
    """
    if not isinstance(limit, int) or not 1 <= limit <= retrieval.MAX_LIMIT:
        raise InvalidInput(f"limit must be 1-{retrieval.MAX_LIMIT}, got {limit!r}")
    pool = min(retrieval.MAX_LIMIT, limit * 3 if not include_open else limit)
    q = retrieval.make_query(task, scopes, limit=pool, layer="decision")
    results = retrieval.search(store, q)
    outcomes = outcomes_of(store, [r.memory.id for r in results])
    lessons = [Lesson(r.memory, r.score, outcomes[r.memory.id]) for r in results]
    if not include_open:
        lessons = [les for les in lessons if les.outcomes]
    lessons = lessons[:limit]
    lessons.sort(key=lambda les: (OUTCOME_ORDER[les.outcome], -les.score))
    return lessons
