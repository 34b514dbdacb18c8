"""memory.wisdom: decisions, their outcomes, and lessons for a task with failures first."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInput, NotFound
from memory.maintenance import agent as maintenance
from memory.retrieval import lessons as wisdom
from memory.store import NewMemory, Store, decisions, versions

P, OTHER = "/work/p", "/work/other"
SCOPES = [P, "global"]


def test_a_decision_is_one_self_contained_memory_with_its_parts_in_metadata(store):
    m = decisions.record_decision(
        store,
        "Use Postgres for the job queue.",
        "we already run it; SKIP LOCKED is enough",
        scope=P,
        alternatives=["Redis streams", " RabbitMQ. "],
        subject="job queue",
        context="two-person team",
    )
    assert m.layer == "decision"
    assert m.content == (
        "Decision: Use Postgres for the job queue. Why: we already run it; SKIP LOCKED is enough. "
        "Alternatives considered: Redis streams; RabbitMQ."
    )
    assert m.metadata["decision"] == {
        "chosen": "Use Postgres for the job queue",
        "why": "we already run it; SKIP LOCKED is enough",
        "alternatives": ["Redis streams", "RabbitMQ"],
        "context": "two-person team",
    }
    assert (
        decisions.record_decision(
            store,
            "Use Postgres for the job queue",
            "we already run it; SKIP LOCKED is enough",
            scope=P,
            alternatives=["Redis streams", "RabbitMQ"],
        ).id
        == m.id
    )


@pytest.mark.parametrize(("chosen", "why", "message"), [("", "x", "chosen is empty"), ("x", "  ", "why is empty")])
def test_a_decision_needs_what_and_why(store, chosen, why, message):
    with pytest.raises(InvalidInput, match=message):
        decisions.record_decision(store, chosen, why, scope=P)


def test_a_failed_outcome_raises_importance_adds_a_warning_and_keeps_the_old_state(store):
    d = decisions.record_decision(store, "Cache sessions in memory", "simplest", scope=P, importance=2)
    m, o = decisions.record_outcome(store, d.id, "failed", "lost every session on deploy", scopes=SCOPES)
    assert o.outcome == "failed" and o.notes == "lost every session on deploy"
    assert m.importance == 4
    assert "outcome-failed" in m.tags
    assert m.metadata["outcome"]["result"] == "failed" and m.metadata["outcome"]["count"] == 1
    assert "lost every session on deploy" in m.metadata["warning"]
    kept = versions.history(store, SCOPES, memory_id=d.id)[0].versions
    assert [v.reason for v in kept] == ["outcome failed"]
    # a later success lifts the warning, keeps both outcomes, and the importance a failure earned
    m, _ = decisions.record_outcome(store, d.id, "worked", "after moving sessions to Redis", scopes=SCOPES)
    assert "warning" not in m.metadata
    assert m.tags == ["outcome-worked"]
    assert [o.outcome for o in decisions.outcomes_of(store, [d.id])[d.id]] == ["failed", "worked"]


def test_maintenance_keeps_a_failed_decision_from_decaying(config, embedder):
    now = [1_750_000_000.0]
    with Store.open(config, embedder, clock=lambda: now[0]) as store:
        d = decisions.record_decision(store, "Skip the migration tests", "they are slow", scope=P)
        decisions.record_outcome(store, d.id, "failed", "a migration broke production", scopes=SCOPES)
        control = decisions.record_decision(store, "Run the linters in CI", "catch style early", scope=P)
        decisions.record_outcome(store, control.id, "worked", scopes=SCOPES)
        for day in range(1, 200):  # the project stays in use (decay counts days in use), neither is recalled
            now[0] += 86400
            store.add(NewMemory(f"day {day} of work on the project", scope=P))
        report = maintenance.run_maintenance(store, dry_run=True, now=now[0])
    touched = {c.memory_id for c in report.changes if c.step in ("decay", "forget")}
    assert control.id in touched  # a settled decision does decay when nobody recalls it
    assert d.id not in touched


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("fact", "is a fact, not a decision"),
        ("other", "in this project or the global scope"),
        ("archived", "is archived"),
    ],
)
def test_an_outcome_needs_a_readable_live_decision(store, setup, message):
    if setup == "fact":
        mid = store.add(NewMemory("Tests use pytest", scope=P)).id
    elif setup == "other":
        mid = decisions.record_decision(store, "Use Go", "speed", scope=OTHER).id
    else:
        mid = decisions.record_decision(store, "Use Java", "team", scope=P).id
        store.forget(mid)
    with pytest.raises((InvalidInput, NotFound), match=message):
        decisions.record_outcome(store, mid, "worked", scopes=SCOPES)
    assert store.conn.execute("SELECT count(*) FROM decision_outcomes").fetchone()[0] == 0


def test_an_unknown_outcome_is_refused(store):
    d = decisions.record_decision(store, "Use Make", "everyone has it", scope=P)
    with pytest.raises(InvalidInput, match="worked, failed, partial"):
        decisions.record_outcome(store, d.id, "great", scopes=SCOPES)


def test_outcome_notes_are_redacted(store):
    d = decisions.record_decision(store, "Call the billing API directly", "fewer moving parts", scope=P)
    _, o = decisions.record_outcome(store, d.id, "failed", "leaked key sk-ant-api03-" + "a1B2" * 20, scopes=SCOPES)
    assert "a1B2a1B2" not in o.notes


def test_lessons_put_failures_first_among_the_relevant_decisions(store):
    worked = decisions.record_decision(
        store, "Use SQLite for the queue of background jobs", "no server to run", scope=P
    )
    failed = decisions.record_decision(store, "Use Redis for the queue of background jobs", "fast", scope=P)
    partial = decisions.record_decision(store, "Use cron for background jobs", "simple", scope="global")
    open_ = decisions.record_decision(store, "Use Celery for the background jobs queue", "popular", scope=P)
    unrelated = decisions.record_decision(store, "Name branches after tickets", "traceable", scope=P)
    decisions.record_decision(store, "Use Kafka for the queue of background jobs", "scale", scope=OTHER)
    decisions.record_outcome(store, worked.id, "worked", scopes=SCOPES)
    decisions.record_outcome(store, failed.id, "failed", "lost jobs on restart", scopes=SCOPES)
    decisions.record_outcome(store, partial.id, "partial", "no retries", scopes=SCOPES)
    lessons = wisdom.lessons_for(store, "which queue for background jobs", SCOPES, limit=4)
    assert [les.memory.id for les in lessons] == [failed.id, partial.id, worked.id, open_.id]
    assert lessons[0].outcomes[0].notes == "lost jobs on restart"
    decided = wisdom.lessons_for(store, "which queue for background jobs", SCOPES, include_open=False)
    assert open_.id not in [les.memory.id for les in decided]
    assert unrelated.id not in [les.memory.id for les in decided]


def test_lessons_ignore_facts_and_experiences(store):
    store.add(NewMemory("The queue of background jobs is slow", scope=P))
    assert wisdom.lessons_for(store, "queue of background jobs", SCOPES) == []


def test_a_failed_decision_is_labelled_as_a_warning_where_it_is_surfaced(store):
    from memory.retrieval import context

    d = decisions.record_decision(store, "Use Redis for the job queue", "fast", scope=P)
    assert "FAILED" not in context.render(d)
    m, _ = decisions.record_outcome(store, d.id, "failed", "lost jobs on restart", scopes=SCOPES)
    assert context.render(m).startswith(f"- #{d.id} FAILED decision, do not repeat · this project · ")
    items = context.tiered_context(store, "which job queue should we use, Redis?", SCOPES, 800)
    assert [i.line for i in items if i.memory.id == d.id][0].startswith(f"- #{d.id} FAILED decision")
