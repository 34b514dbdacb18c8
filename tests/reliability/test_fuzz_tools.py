"""Every MCP tool fuzzed with hostile arguments through the real SDK client (reliability/fuzz.py):
the server never dies, bad calls get tool errors that say what was wrong, weird but sane calls
succeed, and no SQLite error text (unescaped query syntax) ever reaches a response."""

from __future__ import annotations

import json

import pytest
from mcp import Client

from memory.embed import HashEmbedder
from reliability import fuzz, harness
from server.app import build_server


def _check(result: dict, calls: int) -> None:
    assert result["failures"] == [], json.dumps(result["failures"][:10], indent=1)
    assert result["calls"] == calls
    assert result["alive_after"]
    assert result["database"] == []
    assert all(result["by_bucket"][b] > calls // 10 for b in ("sane", "valid", "invalid"))
    assert set(result["by_tool"]) == set(result["tools"])  # every tool was called


@pytest.mark.short
def test_three_hundred_hostile_tool_calls_find_no_crash_no_opaque_error_and_no_sqlite_text(tmp_path):
    result = fuzz.run_tool_fuzz(tmp_path, 300, seed=1)
    harness.report("fuzz_tools_short", result)
    _check(result, 300)


@pytest.mark.slow
def test_five_thousand_hostile_tool_calls_find_no_crash_no_opaque_error_and_no_sqlite_text(tmp_path):
    result = fuzz.run_tool_fuzz(tmp_path, 5000, seed=20261203)
    harness.report("fuzz_tools", result)
    _check(result, 5000)


# What the fuzzer found, kept as plain regression tests (each failed before its fix).
FOUND = [
    ("memory_get", {"ids": [2**64]}),  # OverflowError: Python int too large to convert to SQLite INTEGER
    ("memory_forget", {"id": -(2**64)}),
    ("memory_update", {"id": 10**30, "content": "port 8080 on staging"}),
    ("memory_pin", {"id": 2**63}),
    ("memory_history", {"id": 10**30}),
    ("decision_outcome", {"id": 2**64, "outcome": "worked"}),
    ("entity_relate", {"source": "a", "relation": "uses", "target": "b", "memory_id": 2**64}),
]


@pytest.mark.parametrize(("tool", "args"), FOUND, ids=[t for t, _ in FOUND])
async def test_ids_beyond_what_sqlite_can_store_are_simply_not_found(config, tool, args):
    async with Client(build_server(config, HashEmbedder(64), project="/work/p"), mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        if tool not in names:
            pytest.skip(f"the server has no {tool} tool yet")
        result = await client.call_tool(tool, args)
    text = harness.tool_text(result)
    if result.is_error:
        assert "no memory" in text, text
    else:
        assert result.structured_content["memories"] == []  # memory_get: the id is missing


def test_the_judge_flags_opaque_errors_sqlite_text_and_refused_sane_calls():
    """The fuzzer's verdicts, checked on made-up results (the fuzz tests would pass vacuously
    if the judge never objected)."""
    from mcp.types import CallToolResult, TextContent

    def result(text: str, error: bool) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)

    assert fuzz.judge("valid", result("Error executing tool memory_get", True)).startswith("opaque")
    assert "SQLite" in fuzz.judge("valid", result('Error executing tool x: fts5: syntax error near "*"', True))
    assert "SQLite" in fuzz.judge("sane", result('{"results": "sqlite3.OperationalError"}', False))
    assert "internal" in fuzz.judge(
        "invalid", result("Error executing tool x: 'NoneType' object has no attribute 'id'", True)
    )
    assert fuzz.judge("sane", result("Error executing tool memory_search: query is empty", True)) is not None
    assert fuzz.judge("valid", result("Error executing tool memory_search: query is empty", True)) is None
    assert (
        fuzz.judge(
            "invalid",
            result(
                "Error executing tool memory_get: 1 validation error for memory_getArguments"
                "\nids\n  Input should be a valid list",
                True,
            ),
        )
        is None
    )


@pytest.mark.xfail(
    strict=True,
    reason=(
        "mcp 2.3.0 FuncMetadata.pre_parse_json json-decodes a string argument whenever the parameter's "
        "annotation is not exactly `str`, so every `str | None` parameter in server/tools.py (subject, "
        "memory_update's content, filters, ...) turns '{\"port\": 5432}' into a dict (refused: 'Input should be a "
        "valid string') and 'null' into None (silently dropped)"
    ),
)
async def test_tool_text_that_looks_like_json_is_kept_as_text(config):
    async with Client(build_server(config, HashEmbedder(64), project="/work/p"), mode="legacy") as client:
        stored = await client.call_tool("memory_store", {"content": "The staging database settings", "subject": "null"})
        assert not stored.is_error
        as_json = await client.call_tool(
            "memory_store", {"content": "The staging database port", "subject": '{"port": 5432}'}
        )
    assert stored.structured_content["subject"] == "null"
    assert not as_json.is_error, harness.tool_text(as_json)
