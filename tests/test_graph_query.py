"""memory.graph_query: entities in full, neighbourhoods, shortest paths and relation upkeep."""

from __future__ import annotations

import pytest

from memory.errors import InvalidInput, NotFound
from memory.retrieval import graph_query as gq
from memory.store import NewMemory, Store

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL (tests/conftest.py)

P, OTHER = "/work/p", "/work/other"
SCOPES = [P, "global"]


def relate(store: Store, src: str, rel: str, dst: str, scope: str = P) -> dict:
    return gq.relate(store, scope, src, rel, dst, readable=SCOPES)


def chain(store: Store) -> None:
    """api -uses-> orm -depends_on-> driver -talks_to-> postgres (global) ; api -owned_by-> alice."""
    relate(store, "api", "uses", "orm")
    relate(store, "orm", "depends on", "driver")
    relate(store, "driver", "talks_to", "postgres")
    relate(store, "postgres", "runs_on", "linux", scope="global")
    relate(store, "api", "owned_by", "alice")


def names(nodes: list[dict]) -> list[str]:
    return [n["name"] for n in nodes]


def test_neighbors_go_out_hop_by_hop_in_both_directions(store):
    chain(store)
    one = gq.neighbors(store, SCOPES, "orm", hops=1)
    assert names(one["center"]) == ["orm"]
    assert sorted(names(one["nodes"])) == ["api", "driver"]
    two = gq.neighbors(store, SCOPES, "orm", hops=2)
    assert sorted((n["name"], n["scope"], n["hops"]) for n in two["nodes"]) == [
        ("alice", P, 2),
        ("api", P, 1),
        ("driver", P, 1),
        ("postgres", P, 2),
        ("postgres", "global", 2),
    ]
    assert {e["type"] for e in two["edges"]} == {"uses", "depends_on", "owned_by", "talks_to", gq.TWIN}


def test_a_project_entity_reaches_its_global_namesake_for_free(store):
    chain(store)
    near = gq.neighbors(store, SCOPES, "driver", hops=2)
    reached = {(n["name"], n["scope"]): n["hops"] for n in near["nodes"]}
    assert reached[("postgres", P)] == 1 and reached[("postgres", "global")] == 1
    assert reached[("linux", "global")] == 2
    assert any(e["type"] == gq.TWIN for e in near["edges"])


def test_relation_types_filter_the_walk(store):
    chain(store)
    only = gq.neighbors(store, SCOPES, "api", hops=3, types=["uses", "Depends On"])
    assert names(only["nodes"]) == ["orm", "driver"]


def test_the_shortest_path_is_found_across_scopes(store):
    chain(store)
    relate(store, "api", "long_way_to", "x1")
    relate(store, "x1", "to", "x2")
    relate(store, "x2", "to", "linux", scope=P)
    p = gq.path(store, SCOPES, "alice", "linux")
    # linux is a project entity and a global one: the nearer (via x1, x2) wins over the chain
    assert p["found"] and p["hops"] == 4
    assert names(p["nodes"]) == ["alice", "api", "x1", "x2", "linux"]
    direct = gq.path(store, SCOPES, "orm", "linux", types=["depends_on", "talks_to", "runs_on"])
    assert direct["hops"] == 3
    assert [e["type"] for e in direct["edges"]] == ["depends_on", "talks_to", gq.TWIN, "runs_on"]
    assert names(direct["nodes"]) == ["orm", "driver", "postgres", "postgres", "linux"]


def test_no_path_within_the_hop_limit_says_so(store):
    chain(store)
    assert gq.path(store, SCOPES, "alice", "linux", max_hops=2) == {
        "found": False,
        "hops": None,
        "nodes": [],
        "edges": [],
    }
    relate(store, "island", "near", "islet")
    assert gq.path(store, SCOPES, "api", "island")["found"] is False


def test_another_projects_graph_is_invisible(store):
    relate(store, "api", "uses", "orm")
    gq.relate(store, OTHER, "orm", "secretly_uses", "vault", readable=[OTHER, "global"])
    assert names(gq.neighbors(store, SCOPES, "orm", hops=3)["nodes"]) == ["api"]
    with pytest.raises(NotFound, match="no entity called 'vault'"):
        gq.neighbors(store, SCOPES, "vault")
    other_id = store.conn.execute("SELECT id FROM entities WHERE name = 'vault'").fetchone()[0]
    with pytest.raises(NotFound, match=f"no entity {other_id}"):
        gq.entity_detail(store, SCOPES, other_id)


def test_closing_a_relation_keeps_it_as_history_and_ends_the_walk(store):
    relate(store, "api", "uses", "orm")
    closed = gq.relate(store, P, "api", "uses", "orm", close=True, readable=SCOPES)
    assert closed["action"] == "closed" and closed["relation"]["valid_to"] is not None
    assert gq.neighbors(store, SCOPES, "api")["nodes"] == []
    detail = gq.entity_detail(store, SCOPES, "api")
    assert [(r["type"], r["open"]) for r in detail["relations"]] == [("uses", False)]
    assert gq.entity_detail(store, SCOPES, "api", include_closed=False)["relations"] == []
    with pytest.raises(NotFound, match="no open relation api -\\[uses\\]-> orm"):
        gq.relate(store, P, "api", "uses", "orm", close=True, readable=SCOPES)


def test_adding_an_open_relation_twice_keeps_one(store):
    first = relate(store, "api", "uses", "orm")
    again = relate(store, "API", "USES", "Orm")
    assert again["relation"]["id"] == first["relation"]["id"]


def test_entity_detail_has_aliases_relations_and_linked_memories(store):
    m1 = store.add(NewMemory("We talk to `Postgres` through psycopg", scope=P, importance=2)).id
    m2 = store.add(NewMemory("`Postgres` backups run nightly", scope="global", importance=5)).id
    store.add(NewMemory("`Postgres` is their database", scope=OTHER))
    with store.tx.atomic() as conn:
        conn.execute(
            "INSERT INTO entity_aliases (entity_id, alias, norm) SELECT id, 'pg', 'pg' FROM entities "
            "WHERE name = 'Postgres' AND scope = ?",
            (P,),
        )
    relate(store, "api", "stores_in", "Postgres")
    d = gq.entity_detail(store, SCOPES, "pg")
    assert d["entity"]["name"] == "Postgres" and d["entity"]["scope"] == P
    assert [n["scope"] for n in d["same_entity"]] == ["global"]
    assert d["aliases"] == ["pg"]
    assert [(r["type"], r["direction"], r["other"]["name"]) for r in d["relations"]] == [("stores_in", "in", "api")]
    assert [m["id"] for m in d["memories"]] == [m2, m1]
    assert d["memory_count"] == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: gq.neighbors(s, SCOPES, "api", hops=0), "hops must be 1-6"),
        (lambda s: gq.path(s, SCOPES, "api", "orm", max_hops=11), "max_hops must be 1-10"),
        (lambda s: gq.relate(s, P, "api", " ", "orm", readable=SCOPES), "relation type must be 1-64"),
        (lambda s: gq.relate(s, P, "api", "uses", "orm", readable=SCOPES, confidence=2), "confidence must be in"),
        (lambda s: gq.neighbors(s, SCOPES, "  "), "give an entity name"),
    ],
)
def test_bad_graph_arguments_say_what_is_allowed(store, call, message):
    relate(store, "api", "uses", "orm")
    with pytest.raises(InvalidInput, match=message):
        call(store)


def test_a_subgraph_centres_on_the_most_connected_entity_and_carries_memories(store):
    chain(store)
    store.add(NewMemory("The `orm` hides slow queries; `alice` reviews every `driver` change", scope=P))
    sub = gq.subgraph(store, SCOPES)
    by_id = {n["id"]: n for n in sub["nodes"]}
    assert by_id[sub["center"]]["name"] == "orm"  # two relations and a memory
    by_name = {n["name"]: n for n in sub["nodes"] if n["scope"] == P}
    assert by_name["orm"]["memories_shown"][0]["content"].startswith("The `orm` hides")
    co = {
        frozenset((by_id[e["src"]]["name"], by_id[e["dst"]]["name"]))
        for e in sub["edges"]
        if e["type"] == "mentioned_with"
    }
    # named together in one memory and not related otherwise (orm-driver already is a relation)
    assert co == {frozenset(("alice", "driver")), frozenset(("alice", "orm"))}


def test_an_empty_graph_has_no_centre_and_says_how_it_fills(store):
    with pytest.raises(NotFound, match="knowledge graph is empty"):
        gq.subgraph(store, SCOPES)
