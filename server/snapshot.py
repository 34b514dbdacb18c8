"""Recording the SDK's own answers for server/answers.py: `python -m server.snapshot`.

For each protocol revision the installed mcp speaks, this connects to the real server
(server.app.build_server) through the SDK's own stdio transport (in process: mcp's stdio_server on
in-memory lines, nothing of server.launch), sends what a client sends to connect (Claude Code 2.1.332's requests, observed on the wire) and keeps each answer's
JSON text exactly as the SDK wrote it. Run it after changing a tool, a resource, the
instructions, the server's name or version, or the mcp version; tests/test_launch.py compares the
fast path's answers with the SDK's and fails until you do.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import AsyncIterator
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

import anyio

from memory.config import Config
from server.fastpath import CLIENT_CAPABILITIES, CLIENT_INFO, LISTS, PROTOCOL_VERSION, SUBSCRIPTION_ID

TARGET = Path(__file__).resolve().parent / "answers.py"
# What Claude Code 2.1.332 says about itself in every request.
CLAUDE_CODE = {
    "name": "claude-code",
    "title": "Claude Code",
    "version": "2.1.332",
    "description": "Anthropic's agentic coding tool",
    "websiteUrl": "https://claude.com/claude-code",
}
CLAUDE_CODE_CAPABILITIES = {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
LISTEN_NOTIFICATIONS = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}

Key = tuple[str, Any]  # ("response", request id) or ("ack", listen request id)


def protocol_versions() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The handshake-era and the 2026-era revisions of the installed mcp."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    return tuple(HANDSHAKE_PROTOCOL_VERSIONS), tuple(MODERN_PROTOCOL_VERSIONS)


def connect_requests(version: str) -> list[dict[str, Any]]:
    """The messages a client sends to connect at `version`, in Claude Code's order and shapes."""
    if version in protocol_versions()[0]:
        init = {"protocolVersion": version, "capabilities": CLAUDE_CODE_CAPABILITIES, "clientInfo": CLAUDE_CODE}
        return [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *({"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(LISTS, 1)),
        ]
    meta = {PROTOCOL_VERSION: version, CLIENT_INFO: CLAUDE_CODE, CLIENT_CAPABILITIES: CLAUDE_CODE_CAPABILITIES}
    return [
        {"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": {"_meta": meta}},
        {
            "jsonrpc": "2.0",
            "id": "listen:0",
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": LISTEN_NOTIFICATIONS},
        },
        {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}},
        *({"jsonrpc": "2.0", "id": i, "method": m, "params": {"_meta": meta}} for i, m in enumerate(LISTS, 1)),
    ]


def expected(requests: list[dict[str, Any]]) -> list[Key]:
    """The messages that answer `requests`: a response each, an acknowledgement for a listen."""
    return [("ack" if r["method"] == "subscriptions/listen" else "response", r["id"]) for r in requests if "id" in r]


def key_of(line: str) -> Key | None:
    msg = json.loads(line)
    if "id" in msg and ("result" in msg or "error" in msg):
        return ("response", msg["id"])
    if msg.get("method") == "notifications/subscriptions/acknowledged":
        return ("ack", msg["params"]["_meta"][SUBSCRIPTION_ID])
    return None


def ask_sdk(sequences: list[list[dict[str, Any]]], home: Path, timeout: float = 120) -> list[dict[Key, str]]:
    """Each sequence's answers from the real server on the SDK's own stdio transport, one
    connection per sequence: answer key -> the line the SDK wrote, without its newline."""
    from memory import config as config_mod

    config = config_mod.load(home=home, env={}, embedding_model="hash-64")
    return [anyio.run(_ask, config, requests, timeout) for requests in sequences]


async def _ask(config: Config, requests: list[dict[str, Any]], timeout: float) -> dict[Key, str]:
    from mcp.server.stdio import stdio_server

    from memory.embed import HashEmbedder
    from server.app import build_server

    wanted = set(expected(requests))
    got: dict[Key, str] = {}
    answered = anyio.Event()

    async def client_lines() -> AsyncIterator[str]:
        for r in requests:
            yield json.dumps(r) + "\n"
        await answered.wait()  # the input ends once every answer is in, as a client hangs up

    class Output:
        async def write(self, text: str) -> None:
            line = text.removesuffix("\n")
            key = key_of(line)
            if key in wanted:
                got[key] = line
                if set(got) == wanted:
                    answered.set()

        async def flush(self) -> None:
            pass

    # The test embedder: the answers never depend on it, and no model (or warm engine) starts.
    low = build_server(config, HashEmbedder(64))._lowlevel_server  # what MCPServer.run_stdio_async runs
    with anyio.fail_after(timeout):
        async with stdio_server(stdin=client_lines(), stdout=Output()) as (read, write):  # type: ignore[arg-type]
            await low.run(read, write, low.create_initialization_options())
    return got


def record(home: Path) -> dict[str, Any]:
    """Everything server/answers.py holds, from the installed SDK and the real server."""
    handshake, modern = protocol_versions()
    versions = [*handshake, *modern]
    asked = ask_sdk([connect_requests(v) for v in versions], home)
    results: dict[str, dict[str, str]] = {}
    listen_ack = None
    for version, lines in zip(versions, asked, strict=True):
        results[version] = {}
        for request in connect_requests(version):
            if "id" not in request:
                continue
            rid = json.dumps(request["id"], ensure_ascii=False)
            if request["method"] == "subscriptions/listen":
                line = lines[("ack", request["id"])]
                listen_ack = _between(
                    line,
                    '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"'
                    + SUBSCRIPTION_ID
                    + f'":{rid}}},"notifications":',
                    "}}",
                )
            else:
                line = lines[("response", request["id"])]
                result = _between(line, '{"jsonrpc":"2.0","id":' + rid + ',"result":', "}")
                if results[version].setdefault(request["method"], result) != result:
                    raise RuntimeError(f"two different {request['method']} answers at {version}")
    return {
        "sdk": {"mcp": installed_version("mcp"), "mcp_types": installed_version("mcp-types")},
        "handshake": handshake,
        "modern": modern,
        "results": results,
        "listen_ack": listen_ack,
    }


def _between(line: str, prefix: str, suffix: str) -> str:
    """The JSON text of `line` between `prefix` and `suffix`: the SDK's own bytes, not a re-encoding."""
    if not (line.startswith(prefix) and line.endswith(suffix)):
        raise RuntimeError(f"the SDK framed an answer differently than server.fastpath does: {line[:300]}")
    return line[len(prefix) : len(line) - len(suffix)]


def render(recorded: dict[str, Any]) -> str:
    """The text of server/answers.py."""
    out = [
        '"""The MCP SDK\'s own answers to the requests a client sends to connect, recorded from the real',
        "server by `python -m server.snapshot` (generated: do not edit, regenerate). server/fastpath.py",
        'sends them before the SDK has loaded; tests/test_launch.py checks them against the SDK."""',
        "",
        "# ruff: noqa: E501",
        "",
        "# The dist-info versions of the packages that wrote them.",
        f"SDK_VERSIONS = {_literal(recorded['sdk'])}",
        f"HANDSHAKE_VERSIONS = {_literal(recorded['handshake'])}",
        f"MODERN_VERSIONS = {_literal(recorded['modern'])}",
        "# The acknowledgement's `notifications` for a subscriptions/listen asking for exactly these.",
        f"LISTEN_NOTIFICATIONS = {_literal(LISTEN_NOTIFICATIONS)}",
        f"LISTEN_ACK = {_literal(recorded['listen_ack'])}",
        "# protocol revision -> method -> the result's JSON text, as the SDK wrote it.",
        "RESULTS = {",
    ]
    for version, methods in recorded["results"].items():
        out.append(f"    {_literal(version)}: {{")
        out += [f"        {_literal(method)}: {_literal(text)}," for method, text in methods.items()]
        out.append("    },")
    out.append("}")
    return "\n".join(out) + "\n"


def _literal(value: Any) -> str:
    """Python source for `value`, as `ruff format` would leave it (plain strings double-quoted;
    JSON texts, full of double quotes, single-quoted by repr)."""
    if isinstance(value, str):
        plain = value.isprintable() and not set(value) & {'"', "'", "\\"}
        return f'"{value}"' if plain else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(map(_literal, value)) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)  # before the SDK's own, which would print every start-up line
    with tempfile.TemporaryDirectory(prefix="maple-snapshot-") as tmp:
        text = render(record(Path(tmp) / "home"))
    changed = not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text
    TARGET.write_text(text, encoding="utf-8")
    print(f"{TARGET}: {'updated' if changed else 'unchanged'}")


if __name__ == "__main__":
    main()
