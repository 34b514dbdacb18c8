"""Several server processes on one database, as with one Claude Code session per terminal: four
stdio servers at once doing mixed work (store, search, update, pin, relate, record outcomes,
forget), with every write accounted for afterwards."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from memory.embed import HashEmbedder
from memory.store import Store

ROOT = Path(__file__).resolve().parent.parent
SERVERS, MEMORIES = 4, 24


def server(home: Path, project: Path) -> Client:
    env = {
        "MAPLE_HOME": str(home),
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "MAPLE_MODEL": "hash-64",
        "PYTHONPATH": str(ROOT),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "server"], env=env, cwd=str(project))
    return Client(stdio_client(params), mode="legacy")


async def test_four_servers_doing_mixed_work_on_one_database_lose_nothing(tmp_path, home, config):
    project = tmp_path / "proj"
    project.mkdir()
    failures: list[Any] = []
    written: dict[int, list[int]] = {}

    async def ok(c: Client, tool: str, **args: Any) -> dict[str, Any]:
        result = await c.call_tool(tool, args)
        if result.is_error:
            failures.append((tool, args, result.content[0].text))
            return {}
        return result.structured_content

    async def work(n: int, c: Client) -> None:
        ids = written.setdefault(n, [])
        for i in range(MEMORIES):
            m = await ok(c, "memory_store", content=f"Server {n} note {i}: the {i}th fact about module m{n}_{i}")
            ids.append(m["id"])
            if i % 3 == 0:
                await ok(c, "memory_search", query=f"fact about module m{n}_{i}")
            if i % 4 == 1:
                await ok(c, "memory_update", id=ids[i - 1], importance=5, reason=f"server {n}")
            if i % 6 == 2:
                await ok(
                    c, "memory_update", id=ids[i - 1], content=f"Server {n} note {i - 1}, rewritten", reason="rewrite"
                )
            if i % 8 == 6:  # never one that is updated below
                await ok(c, "memory_forget", id=ids[i])
            if i % 5 == 4:
                await ok(c, "entity_relate", source=f"service{n}", relation="uses", target=f"lib{i}")
        d = await ok(c, "decision_record", chosen=f"Server {n} picks option {n}", why="it was free")
        await ok(c, "decision_outcome", id=d["id"], outcome="worked", notes=f"from server {n}")
        await ok(c, "memory_pin", id=ids[0])
        stats = await ok(c, "memory_stats")
        assert stats["memories"] >= MEMORIES - MEMORIES // 8

    async with (
        server(home, project) as s0,
        server(home, project) as s1,
        server(home, project) as s2,
        server(home, project) as s3,
    ):
        async with anyio.create_task_group() as tg:
            for n, c in enumerate((s0, s1, s2, s3)):
                tg.start_soon(work, n, c)

    assert failures == []
    scope = str(project.resolve())
    all_ids = [i for ids in written.values() for i in ids]
    assert len(set(all_ids)) == SERVERS * MEMORIES  # no write lost or folded into another
    with Store.open(config, HashEmbedder(64)) as s:
        check = s.integrity()
        memories = {m.id: m for m in s.list(scopes=[scope], include_deleted=True, limit=1000)}
        versions = s.conn.execute("SELECT reason, count(*) FROM memory_versions GROUP BY reason").fetchall()
        relations = s.conn.execute("SELECT count(*) FROM relations WHERE type = 'uses'").fetchone()[0]
        outcomes = s.conn.execute("SELECT count(*) FROM decision_outcomes").fetchone()[0]
    assert check["ok"], check
    assert len(memories) == SERVERS * (MEMORIES + 1)  # + one decision each
    forgotten = [i for ids in written.values() for k, i in enumerate(ids) if k % 8 == 6]
    assert sorted(i for i, m in memories.items() if m.deleted_at is not None) == sorted(forgotten)
    for n, ids in written.items():
        assert memories[ids[0]].pinned
        for k, i in enumerate(ids):
            if k % 4 == 0 and k + 1 < MEMORIES:
                assert memories[i].importance == 5
            if k % 6 == 1:
                assert memories[i].content == f"Server {n} note {k}, rewritten"
    counts = dict(versions)
    assert counts["rewrite"] == SERVERS * len(range(2, MEMORIES, 6))
    assert counts["outcome worked"] == SERVERS and outcomes == SERVERS
    assert relations == SERVERS * len(range(4, MEMORIES, 5))
    assert check["vector_rows"] == check["memories"]
