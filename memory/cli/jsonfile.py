"""JSON files that Claude Code and people also write, read and rewritten with care: the same
indentation, numbers spelled as they were, the same final newline (or none), written atomically,
so a file MAPLE puts back is the file that was there."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from memory.errors import MapleError


class FileError(MapleError):
    """A file MAPLE will not rewrite: not JSON, or not a JSON object."""


def sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


class Number(float):
    """A JSON number with a fraction or exponent, kept as the file spelled it: Claude Code
    (JavaScript) writes 1e-7 where Python would write 1e-07, and a rewrite must not respell it."""

    text: str

    def __new__(cls, text: str) -> Number:
        number = super().__new__(cls, text)
        number.text = text
        return number


def load(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"), parse_float=Number)
    except (UnicodeDecodeError, ValueError) as e:
        raise FileError(f"{path} is not valid JSON ({e}); fix it (or move it away), then run install again") from e
    if not isinstance(data, dict):
        raise FileError(f"{path} holds JSON {type(data).__name__}, not an object; fix it, then run install again")
    return data


def encode(value: Any, indent: str, level: int) -> str:
    """JSON in the layout of JSON.stringify(value, null, indent), which is also json.dumps's."""
    inner = indent * (level + 1)
    if isinstance(value, dict) and value:
        items = (
            f"{inner}{json.dumps(k, ensure_ascii=False)}: {encode(v, indent, level + 1)}" for k, v in value.items()
        )
        return "{\n" + ",\n".join(items) + "\n" + indent * level + "}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + encode(v, indent, level + 1) for v in value) + "\n" + indent * level + "]"
    if isinstance(value, Number):
        return value.text
    return json.dumps(value, ensure_ascii=False)


def dump(data: dict[str, Any], like: bytes | None) -> bytes:
    """JSON written the way the file was: its indentation, its numbers, and its final newline."""
    indent = "  "
    if like:
        m = re.search(rb"\n([ \t]+)\S", like)
        if m:
            indent = m.group(1).decode()
            indent = "\t" if indent.startswith("\t") else indent
    text = encode(data, indent, 0)
    if like is None or like.endswith(b"\n"):
        text += "\n"
    return text.encode("utf-8")


def write(path: Path, data: bytes, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".maple-tmp")
    mode = 0o600 if private else 0o644
    if path.exists():
        mode = path.stat().st_mode & 0o777
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # atomic: Claude Code may read it at any moment


def node(data: dict[str, Any], keys: list[str]) -> Any:
    """The value at `keys` inside `data`, or None."""
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def drop_empty(data: dict[str, Any], keys: list[str], created: list[str]) -> bool:
    """Delete, innermost first, the objects along `keys` that MAPLE created and that are empty now."""
    chain: list[tuple[dict[str, Any], str]] = []
    node: Any = data
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            break
        chain.append((node, key))
        node = node[key]
    changed = False
    for parent, key in reversed(chain):
        if key not in created or parent[key] not in ({}, []):
            break
        del parent[key]
        changed = True
    return changed
