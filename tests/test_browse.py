"""memory.browse: paged listings, the history of memories, and statistics that stay in their scopes."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInput, NotFound
from memory.store import NewMemory, Store, browse, decisions, versions

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL (tests/conftest.py)

P, OTHER = "/work/p", "/work/other"
SCOPES = [P, "global"]


def add(store: Store, content: str, **kw) -> int:
    kw.setdefault("scope", P)
    return store.add(NewMemory(content, **kw)).id


def test_pages_cover_every_memory_once_in_order_whatever_the_sort(store):
    for i in range(23):
        add(store, f"note number {i}", importance=1 + i % 5, occurred_at=f"2025-01-{1 + i % 9:02d}T00:00:00Z")
    for sort in browse.SORTS:
        seen, cursor = [], None
        while True:
            page = browse.list_memories(store, SCOPES, sort=sort, limit=5, cursor=cursor)
            assert page.total == 23
            seen += page.memories
            cursor = page.next_cursor
            if cursor is None:
                break
        assert len({m.id for m in seen}) == 23, sort
        key, direction = browse.SORTS[sort]
        values = {
            "newest": lambda m: m.occurred_at,
            "oldest": lambda m: m.occurred_at,
            "updated": lambda m: m.updated_at,
            "importance": lambda m: m.importance,
            "recently_used": lambda m: m.last_activated_at or 0,
            "id": lambda m: m.id,
        }[sort]
        ordered = [(values(m), m.id) for m in seen]
        assert ordered == sorted(ordered, reverse=direction == "DESC"), sort


def test_a_memory_stored_while_paging_does_not_shift_the_pages_already_read(store):
    ids = [add(store, f"item {i}", occurred_at=f"2025-02-{i + 1:02d}") for i in range(6)]
    first = browse.list_memories(store, SCOPES, sort="oldest", limit=3)
    add(store, "an early item added meanwhile", occurred_at="2025-01-01")
    second = browse.list_memories(store, SCOPES, sort="oldest", limit=3, cursor=first.next_cursor)
    assert [m.id for m in first.memories + second.memories] == ids


def test_filters_narrow_the_listing(store):
    a = add(store, "pinned rule about commits", category="rule", pinned=True, tags=["Git"], subject="commits")
    add(store, "an experience with the build", layer="experience", category="build")
    g = add(store, "a global preference", scope="global", category="preference")
    add(store, "someone else's project", scope=OTHER)
    ids = lambda **kw: [m.id for m in browse.list_memories(store, SCOPES, **kw).memories]  # noqa: E731
    assert ids(pinned=True) == [a]
    assert ids(tag="git") == [a]
    assert ids(subject="COMMITS") == [a]
    assert ids(category="preference") == [g]
    assert ids(layer="experience") != [] and all(
        m.layer == "experience" for m in browse.list_memories(store, SCOPES, layer="experience").memories
    )
    assert browse.list_memories(store, SCOPES).total == 3  # never the other project's


def test_status_separates_current_history_and_archived(store):
    old = add(store, "We use MySQL")
    gone = add(store, "A wrong note")
    keep = add(store, "We use Redis for caching")
    _, new = versions.supersede(store, old, NewMemory("We use Postgres", scope=P))
    store.forget(gone)
    ids = lambda status: {m.id for m in browse.list_memories(store, SCOPES, status=status).memories}  # noqa: E731
    assert ids("current") == {keep, new.id}
    assert ids("history") == {old}
    assert ids("archived") == {gone}
    assert ids("all") == {old, gone, keep, new.id}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sort": "random"}, "sort must be one of"),
        ({"status": "gone"}, "status must be one of"),
        ({"limit": 0}, "limit must be 1-1000"),
        ({"cursor": "not-a-cursor"}, "pass next_cursor unchanged"),
    ],
)
def test_bad_listing_arguments_say_what_is_allowed(store, kwargs, message):
    with pytest.raises(InvalidInput, match=message):
        browse.list_memories(store, SCOPES, **kwargs)


def test_a_cursor_from_another_sort_is_refused_with_the_fix(store):
    for i in range(3):
        add(store, f"entry {i}")
    cursor = browse.list_memories(store, SCOPES, sort="importance", limit=1).next_cursor
    with pytest.raises(InvalidInput, match="sorted by 'importance', not 'newest'"):
        browse.list_memories(store, SCOPES, sort="newest", cursor=cursor)


def test_history_follows_the_supersession_chain_both_ways_with_each_version(store):
    first = add(store, "The API runs on Flask", subject="api framework")
    store.update(first, importance=4, reason="more important than thought")
    _, second = versions.supersede(store, first, NewMemory("The API runs on FastAPI", scope=P, subject="api framework"))
    _, third = versions.supersede(
        store,
        second.id,
        NewMemory("The API runs on Litestar", scope=P, subject="api framework"),
        reason="migrated again",
    )
    for start in (first, second.id, third.id):
        entries = versions.history(store, SCOPES, memory_id=start)
        assert [e.memory.id for e in entries] == [first, second.id, third.id]
    assert [e.status for e in entries] == ["superseded", "superseded", "current"]
    assert entries[1].supersedes == [first] and entries[2].supersedes == [second.id]
    v = entries[0].versions
    assert [x.reason for x in v] == ["more important than thought", "superseded"]
    assert v[0].changed == ["importance"]
    assert v[1].changed == ["superseded_by", "valid_to"]
    assert entries[2].versions == []
    by_subject = versions.history(store, SCOPES, subject="API Framework")
    assert [e.memory.id for e in by_subject] == [first, second.id, third.id]


def test_history_of_a_memory_a_correction_split_shows_what_it_left_standing(store):
    # a blind trial: `history` of the closed memory showed the correction, not the part kept current
    old = add(store, "route-planner runs on port 7100 and Kat owns it.")
    _, new = versions.supersede(store, old, NewMemory("route-planner moved to 7200.", scope=P))
    kept = store.add(NewMemory("Kat owns route-planner.", scope=P, metadata={"kept_from": old})).id
    unrelated = add(store, "Kat reviews every release.")
    for start in (old, new.id, kept):
        assert [e.memory.id for e in versions.history(store, SCOPES, memory_id=start)] == [old, new.id, kept]
    assert [e.memory.id for e in versions.history(store, SCOPES, memory_id=unrelated)] == [unrelated]


def test_history_of_another_projects_memory_is_not_found(store):
    theirs = add(store, "private to the other project", scope=OTHER)
    with pytest.raises(NotFound, match="in this project or the global scope"):
        versions.history(store, SCOPES, memory_id=theirs)
    with pytest.raises(NotFound, match="no memory has the subject"):
        versions.history(store, SCOPES, subject="nothing")
    with pytest.raises(InvalidInput, match="either a memory id or a subject: the history of what"):
        versions.history(store, SCOPES)  # (it said "not both" when neither was given)
    with pytest.raises(InvalidInput, match="not both"):
        versions.history(store, SCOPES, memory_id=theirs, subject="nothing")


def test_an_edit_that_changes_nothing_writes_no_version(store):
    mid = add(store, "Lint with ruff", tags=["lint"], importance=3)
    _, changed = versions.edit(store, mid, importance=3, tags=["LINT"], content="Lint  with ruff")
    assert changed is False
    assert store.conn.execute("SELECT count(*) FROM memory_versions").fetchone()[0] == 0
    m, changed = versions.edit(store, mid, importance=5)
    assert changed and m.importance == 5
    with pytest.raises(InvalidInput, match="nothing to change"):
        versions.edit(store, mid)


def test_editing_the_content_relinks_its_entities(store):
    mid = add(store, "The worker talks to `RabbitMQ` over AMQP")
    versions.edit(store, mid, content="The worker talks to `Kafka` now")
    names = {
        r[0]
        for r in store.conn.execute(
            "SELECT e.name FROM memory_entities l JOIN entities e ON e.id = l.entity_id WHERE l.memory_id = ?", (mid,)
        )
    }
    assert "Kafka" in names and "RabbitMQ" not in names


def test_superseding_with_the_same_text_is_refused_and_changes_nothing(store):
    mid = add(store, "Deploys happen on Fridays")
    with pytest.raises(InvalidInput, match="same text"):
        versions.supersede(store, mid, NewMemory("deploys happen on fridays", scope=P))
    assert store.get(mid).superseded_by is None


def test_stats_count_only_the_given_scopes(store):
    add(store, "a project fact", category="setup")
    add(store, "a global preference", scope="global", category="preference", pinned=True)
    add(store, "another project's secret plan", scope=OTHER)
    d = decisions.record_decision(store, "Use uv", "fast", scope=P)
    decisions.record_outcome(store, d.id, "worked", scopes=SCOPES)
    decisions.record_decision(store, "Use tox", "habit", scope=P)
    stats = browse.scoped_stats(store, SCOPES)
    assert stats["memories"] == 4
    assert stats["by_scope"] == {P: 3, "global": 1}
    assert OTHER not in str(stats)
    assert stats["pinned"] == 1
    assert stats["decisions"] == {"total": 2, "open": 1, "worked": 1, "failed": 0, "partial": 0}
    assert stats["by_layer"] == {"fact": 2, "decision": 2}
    assert stats["embedding_model"] == "hash-64"
    assert stats["versions"] == 1  # the outcome was mirrored into the decision
    assert stats["database_bytes"] > 0


def test_history_shows_the_newest_versions_only_so_an_answer_stays_small(store):
    mid = add(store, "A memory edited very often", importance=1)
    for i in range(versions.MAX_VERSIONS + 5):
        store.update(mid, importance=1 + (i + 1) % 5, reason=f"edit {i}")
    kept = versions.history(store, SCOPES, memory_id=mid)[0].versions
    assert len(kept) == versions.MAX_VERSIONS
    assert kept[-1].reason == f"edit {versions.MAX_VERSIONS + 4}"
