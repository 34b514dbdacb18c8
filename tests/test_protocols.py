"""The stdio server through the Python SDK client at each protocol revision it must speak:
2025-06-18 and 2025-11-25 (initialize handshake, what Claude Code does over stdio) and the
stateless 2026-07-28 revision (server/discover, no handshake), each over a real subprocess."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from memory.embed import HashEmbedder
from server.app import INSTRUCTIONS, build_server

ROOT = Path(__file__).resolve().parent.parent
HANDSHAKE = ["2025-06-18", "2025-11-25"]
STATELESS = ["2026-07-28"]


def params(home: Path, project: Path) -> StdioServerParameters:
    env = {
        "MAPLE_HOME": str(home),
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "MAPLE_MODEL": "hash-64",
        "PYTHONPATH": str(ROOT),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "server"], env=env, cwd=str(project))


@asynccontextmanager
async def connect(version: str, home: Path, project: Path) -> AsyncIterator[tuple[Any, str | None]]:
    """A session at `version`: (session-like object, the instructions the server sent)."""
    if version in HANDSHAKE:
        # The high-level Client always asks for the newest handshake revision; an older client is
        # reproduced with the session and an initialize request naming the older version.
        async with stdio_client(params(home, project)) as (read, write), ClientSession(read, write) as session:
            init = await session.send_request(
                types.InitializeRequest(
                    params=types.InitializeRequestParams(
                        protocol_version=version,
                        capabilities=types.ClientCapabilities(),
                        client_info=types.Implementation(name="maple-protocol-test", version="1"),
                    )
                ),
                types.InitializeResult,
            )
            assert init.protocol_version == version
            assert init.server_info.name == "maple" and init.server_info.version
            session.adopt(init)
            await session.send_notification(types.InitializedNotification())
            yield session, init.instructions
    else:
        async with Client(stdio_client(params(home, project)), mode="auto") as client:
            yield client, None


async def ok(session: Any, tool: str, **args: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


@pytest.mark.parametrize("version", HANDSHAKE + STATELESS)
async def test_the_stdio_server_works_at_each_protocol_revision(version, tmp_path, home):
    project = tmp_path / "proj"
    project.mkdir()
    async with connect(version, home, project) as (s, instructions):
        assert s.protocol_version == version
        if instructions is not None:
            assert instructions == INSTRUCTIONS
        names = {t.name for t in (await s.list_tools()).tools}
        stored = await ok(s, "memory_store", content=f"Negotiated protocol {version} works for storing")
        found = await ok(s, "memory_search", query="negotiated protocol storing")
        updated = await ok(s, "memory_update", id=stored["id"], importance=5)
        listed = await ok(s, "memory_list")
        decision = await ok(s, "decision_record", chosen="Speak every protocol revision", why="clients differ")
        lessons = await ok(s, "lessons_for", task="protocol revision")
        resource = json.loads((await s.read_resource(f"memory://{stored['id']}")).contents[0].text)
        stats = json.loads((await s.read_resource("memory://stats")).contents[0].text)
        bad = await s.call_tool("memory_get", {"ids": []})
    assert {"memory_store", "memory_search", "graph_path", "lessons_for", "memory_maintain"} <= names
    assert [r["id"] for r in found["results"]] == [stored["id"]]
    assert updated["memory"]["importance"] == 5
    assert [m["id"] for m in listed["memories"]] == [stored["id"]]
    assert [x["id"] for x in lessons["lessons"]] == [decision["id"]]
    assert resource["content"] == stored["content"]
    assert stats["memories"] == 2
    assert bad.is_error and "at least 1 item" in bad.content[0].text


async def test_every_revision_lists_the_same_tools(tmp_path, home, config):
    project = tmp_path / "proj"
    project.mkdir()
    seen = {}
    for version in HANDSHAKE + STATELESS:
        async with connect(version, home, project) as (s, _):
            tools = (await s.list_tools()).tools
            seen[version] = {t.name: (t.input_schema, t.annotations) for t in tools}
    async with Client(build_server(config, HashEmbedder(64), project=str(project)), mode="auto") as c:
        assert c.protocol_version == "2026-07-28"  # in-process, the modern path
        seen["in-process"] = {t.name: (t.input_schema, t.annotations) for t in (await c.list_tools()).tools}
    first = seen["2025-06-18"]
    assert len(first) >= 19
    assert all(other == first for other in seen.values())
