"""MCP tools for learning from experience: decision_record, decision_outcome, lessons_for.

Thin wrappers over the application API (memory.app): a decision is a memory in the decision layer; an outcome is
a row of decision_outcomes mirrored into the decision (a failure raises its importance and adds
a warning), and lessons_for puts failures first.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field, StrictInt

from memory.retrieval import ranking as retrieval
from memory.store import decisions
from server.state import AppState, ModelState
from server.tools import MemoryOut, _calls

Result = Literal["worked", "failed", "partial"]


def decision_record(
    chosen: Annotated[
        str,
        Field(min_length=1, max_length=2000, description=("What was decided, e.g. 'Use Postgres for the job queue'")),
    ],
    why: Annotated[
        str,
        Field(
            min_length=1,
            max_length=4000,
            description=("The reasons, so a later session can judge whether they still hold"),
        ),
    ],
    ctx: Context[AppState],
    alternatives: Annotated[
        list[str] | None,
        Field(
            max_length=decisions.MAX_ALTERNATIVES,
            description=("Options considered and not chosen (with a word on why, if known)"),
        ),
    ] = None,
    subject: Annotated[str | None, Field(max_length=200, description="What it is about, e.g. 'job queue'")] = None,
    category: Annotated[
        str, Field(min_length=1, max_length=64, description="Grouping, e.g. architecture, tooling")
    ] = "decision",
    importance: Annotated[StrictInt, Field(ge=1, le=5, description="1 = minor, 5 = shapes the whole project")] = 3,
    tags: Annotated[list[str] | None, Field(description="Keywords to find it by")] = None,
    scope: Annotated[
        Literal["project", "global"],
        Field(description=("project, or global for a personal rule that holds everywhere")),
    ] = "project",
    context: Annotated[
        str | None,
        Field(max_length=2000, description=("The situation it was made in (constraints, deadline), kept in metadata")),
    ] = None,
) -> MemoryOut:
    """Record a decision: what was chosen, why, and the alternatives. Record its outcome later
    with decision_outcome; lessons_for brings it back when a similar task comes up."""
    with _calls(ctx) as app:
        return MemoryOut.of(
            app.decide(
                chosen,
                why,
                alternatives=alternatives,
                subject=subject,
                category=category,
                importance=importance,
                tags=tags,
                scope=scope,
                context=context,
            )["memory"]
        )


class OutcomeRow(BaseModel):
    id: int
    memory_id: int
    outcome: Result
    notes: str
    recorded_at: str | None


class OutcomeOut(BaseModel):
    outcome: OutcomeRow
    decision: MemoryOut = Field(description="The decision as it is now (importance, tags and metadata.outcome updated)")
    outcomes: int = Field(description="Outcomes recorded for this decision so far")


def decision_outcome(
    id: Annotated[StrictInt, Field(description="The decision's memory id (from decision_record or lessons_for)")],
    outcome: Annotated[Result, Field(description=("worked, failed, or partial (worked with caveats)"))],
    ctx: Context[AppState],
    notes: Annotated[
        str,
        Field(
            max_length=decisions.MAX_NOTES,
            description=("What happened and what to do differently: this is what a later session learns from"),
        ),
    ] = "",
) -> OutcomeOut:
    """Record how a decision turned out. A failed decision is raised in importance and carries a
    warning, so it comes up first when a similar choice is made again."""
    with _calls(ctx) as app:
        d = app.outcome(id, outcome, notes)
    return OutcomeOut(outcome=OutcomeRow(**d["outcome"]), decision=MemoryOut.of(d["decision"]), outcomes=d["outcomes"])


class LessonOut(BaseModel):
    id: int
    content: str
    outcome: Result | None = Field(description="Latest outcome; null = not known yet")
    warning: str | None = Field(description="Set on failed decisions: read before repeating them")
    outcomes: list[OutcomeRow] = Field(description="Every recorded outcome, oldest first")
    score: float = Field(description="Relevance to the task")
    subject: str | None
    scope: str
    importance: int
    occurred_at: str | None


class LessonsOut(BaseModel):
    lessons: list[LessonOut] = Field(description="Failures first, then partial, worked, and open decisions")
    model: ModelState = Field(description="While 'loading', relevance comes from keywords only")


def lessons_for(
    task: Annotated[
        str,
        Field(
            min_length=1,
            max_length=4000,
            description=("The task or choice at hand, in words, e.g. 'pick a queue for background jobs'"),
        ),
    ],
    ctx: Context[AppState],
    limit: Annotated[StrictInt, Field(ge=1, le=retrieval.MAX_LIMIT, description="How many decisions at most")] = 10,
    include_open: Annotated[bool, Field(description="Also decisions whose outcome is not known yet")] = True,
) -> LessonsOut:
    """Past decisions relevant to a task and how they turned out, failures first: check before
    making a similar choice."""
    with _calls(ctx) as app:
        d = app.lessons(task, limit=limit, include_open=include_open)
    lessons = []
    for les in d["lessons"]:
        m = les["memory"]
        lessons.append(
            LessonOut(
                id=m["id"],
                content=m["content"],
                outcome=les["outcome"],
                warning=m["metadata"].get("warning"),
                outcomes=[OutcomeRow(**o) for o in les["outcomes"]],
                score=round(les["score"], 6),
                subject=m["subject"],
                scope=m["scope"],
                importance=m["importance"],
                occurred_at=m["occurred_at"],
            )
        )
    return LessonsOut(lessons=lessons, model=d["model"])


def register(server: MCPServer[AppState]) -> None:
    def hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
        return ToolAnnotations(
            read_only_hint=read_only, destructive_hint=destructive, idempotent_hint=idempotent, open_world_hint=False
        )

    # Recording the same decision twice returns the first (exact duplicates fold): idempotent.
    server.add_tool(decision_record, title="Record a decision", annotations=hints(False, False, True))
    # Each call adds an outcome row: not idempotent; nothing is overwritten: not destructive.
    server.add_tool(decision_outcome, title="Record a decision's outcome", annotations=hints(False, False, False))
    # Like memory_search it notes what was recalled (decay bookkeeping), nothing a user asked to change.
    server.add_tool(lessons_for, title="Lessons for a task", annotations=hints(True, False, True))
