"""A long-lived process on a team database outlives a PostgreSQL restart: while the server is
down every call says the team database is unreachable and what to do (never "the connection is
closed", never "database file"), and the first call after it is back works, on the same store or
MCP session, with nothing restarted."""

from __future__ import annotations

import pytest
from mcp import Client

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.errors import StoreUnavailable
from memory.store import NewMemory, Store
from server.app import build_server

PROJECT = "/work/project-a"


def open_as(tmp_path, url: str, name: str) -> Store:
    return Store.open(config_mod.load(home=tmp_path / name, env={}, database=url), HashEmbedder(64))


def test_a_store_reconnects_on_the_first_call_after_postgresql_restarts(tmp_path, pg_server, pg_url, pg_role):
    open_as(tmp_path, pg_url, "owner").close()
    alice = pg_role("alice")
    with open_as(tmp_path, alice.url, "alice") as store:
        store.add(NewMemory(content="staging's database listens on port 6543", scope=PROJECT))
        pg_server.pause()
        try:
            for _ in range(2):  # the call that meets the dropped connection, and one that must reconnect
                with pytest.raises(StoreUnavailable) as e:
                    store.count([PROJECT])
                message = str(e.value)
                assert "is unreachable" in message and "reconnects" in message
                assert "connection is closed" not in message and alice.url.split("@")[0] not in message
            with pytest.raises(StoreUnavailable, match="is unreachable"):
                store.add(NewMemory(content="written while the database is down", scope=PROJECT))
        finally:
            pg_server.resume()
        assert store.count([PROJECT]) == 1
        store.add(NewMemory(content="the worker queue is procrastinate", scope=PROJECT))
        assert store.count([PROJECT]) == 2


async def test_an_mcp_session_works_again_after_postgresql_restarts(tmp_path, pg_server, pg_url, pg_role):
    open_as(tmp_path, pg_url, "owner").close()
    bob = pg_role("bob")
    config = config_mod.load(home=tmp_path / "bob", env={}, database=bob.url, worker_enabled=False)
    async with Client(build_server(config, HashEmbedder(64), project=PROJECT), mode="legacy") as client:
        stored = await client.call_tool("memory_store", {"content": "deploys go out on Tuesdays"})
        assert not stored.is_error, stored.content
        pg_server.pause()
        try:
            for tool, args in [("memory_search", {"query": "deploys"}), ("memory_store", {"content": "lost?"})]:
                result = await client.call_tool(tool, args)
                text = result.content[0].text
                assert result.is_error and "is unreachable" in text, text
                assert "database file" not in text and "connection is closed" not in text
        finally:
            pg_server.resume()
        found = await client.call_tool("memory_search", {"query": "deploys Tuesdays"})
        assert not found.is_error, found.content
        assert [r["content"] for r in found.structured_content["results"]] == ["deploys go out on Tuesdays"]
