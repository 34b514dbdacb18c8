"""Lessons for a task: the past decisions relevant to it and how they turned out, failures first
(decisions and their outcomes are recorded by memory.store.decisions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.errors import InvalidInput, StoreUnavailable
from memory.retrieval import ranking as retrieval
from memory.store import Memory, Store, indexes
from memory.store.decisions import Outcome, outcomes_of

OUTCOME_ORDER = {"failed": 0, "partial": 1, "worked": 2, None: 3}  # lessons: failures first
# The relevance cut: a decision is a lesson for the task only if its search score is at least
# MIN_SCORE and at least TOP_SHARE of the best decision's score. Below that the search matched a
# stray word ("how to name git branches" scored every decision above 0, the unrelated ones ~0.0x).
# Chosen on tests/data/team_eval's 24 labelled tasks with the shipped model (bench_lessons.py):
# relevant decisions found .800 -> .756, decisions returned 10 -> 5.0 a task, labelled-irrelevant
# ones returned 10 -> 3 (a higher share, 0.5, gave .733 / 4.1 / 2).
# Since search multiplies its scores by the query's confidence (ranking.confidence), they are
# lower for every query and the cut moved: 0.45 kept .356 of the relevant decisions (0.8 a task).
# Re-chosen the same way: 0.15 gives .733 / 4.3 a task / 3 (0.10: .756 / 4.9 / 4; 0.20: .711 /
# 3.5 / 3; no cut .778 / 7.5 / 6). MIN_COSINE from 0.30 to 0.40 changes nothing there.
MIN_SCORE = 0.15
TOP_SHARE = 0.4
# The fused score ranks the vector channel from the pool's weakest to its strongest hit, so the
# best of unrelated decisions still gets the channel's whole weight ("what color should the logo
# be" found a failed mkdocs decision at 0.56). A decision that only the vector channel found must
# also be near the task in absolute terms: cosine >= MIN_COSINE (all-MiniLM-L6-v2: paraphrases of a
# task ~0.4-0.8, unrelated decisions ~0.0-0.25).
MIN_COSINE = 0.35


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


def _near_enough(store: Store, task: str, results: list[retrieval.Result]) -> list[retrieval.Result]:
    """The results a word of the task matched (keywords, entities), or whose meaning is near it."""
    vector_only = [r for r in results if not any(r.channels.get(ch) for ch in ("bm25", "entity", "graph"))]
    if not vector_only or store.embedder is None:
        return results
    try:
        qvec = store.embedder.embed_query(task)
    except StoreUnavailable:
        return results  # keyword-only meanwhile: nothing was found by the vector channel alone
    near = indexes.cosines(store, qvec, [r.memory.id for r in vector_only])
    far = {r.memory.id for r in vector_only if near.get(r.memory.id, 0.0) < MIN_COSINE}
    return [r for r in results if r.memory.id not in far]


def lessons_for(
    store: Store,
    task: str,
    scopes: Sequence[str],
    *,
    limit: int = 10,
    include_open: bool = True,
    min_score: float | None = None,
) -> list[Lesson]:
    """The past decisions relevant to `task`, failures first, then partial successes, then
    what worked, then decisions with no outcome yet (unless `include_open` is false).

    Relevance picks which decisions (the `limit` best that pass the cut: MIN_SCORE and TOP_SHARE
    of the best, or `min_score` alone when given, 0 for no cut); the outcome orders them, so a
    weakly related failure does not push out a closely related success. No relevant decision: [].
    """
    if not isinstance(limit, int) or not 1 <= limit <= retrieval.MAX_LIMIT:
        raise InvalidInput(f"limit must be 1-{retrieval.MAX_LIMIT}, got {limit!r}")
    pool = min(retrieval.MAX_LIMIT, limit * 3 if not include_open else limit)
    q = retrieval.make_query(task, scopes, limit=pool, layer="decision")
    results = retrieval.search(store, q)
    outcomes = outcomes_of(store, [r.memory.id for r in results])
    if min_score is None:
        results = _near_enough(store, task, results)
    lessons = [Lesson(r.memory, r.score, outcomes[r.memory.id]) for r in results]
    if lessons:
        floor = min_score if min_score is not None else max(MIN_SCORE, TOP_SHARE * max(x.score for x in lessons))
        lessons = [les for les in lessons if les.score >= floor and les.score > 0]
    if not include_open:
        lessons = [les for les in lessons if les.outcomes]
    lessons = lessons[:limit]
    lessons.sort(key=lambda les: (OUTCOME_ORDER[les.outcome], -les.score))
    return lessons
