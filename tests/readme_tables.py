"""The README's MCP-tools and CLI tables, parsed for the documentation and conformance tests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"
_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$")


def _table(heading: str) -> list[tuple[str, list[str]]]:
    """(first cell's code, other cells) for each row of the first table under `heading`."""
    text = README.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        m = _ROW.match(line)
        if m:
            # cells are split on unescaped pipes (`\|` is a pipe inside a cell)
            rows.append((m.group(1), [c.strip() for c in re.split(r"(?<!\\)\|", m.group(2))]))
    return rows


def tool_examples() -> dict[str, dict[str, Any]]:
    """Tool name -> its example arguments, in table order."""
    out: dict[str, dict[str, Any]] = {}
    for name, cells in _table("MCP tools"):
        example = cells[-1].strip()
        assert example.startswith("`") and example.endswith("`"), f"{name}: the example must be `{{...}}`"
        out[name] = json.loads(example.strip("`"))
    return out


def cli_commands() -> list[str]:
    """The command word of each row of the CLI table."""
    return [code.split()[0] for code, _ in _table("CLI")]
