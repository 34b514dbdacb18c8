"""Malformed JSON-RPC gets its error at once (server/jsonrpc.py): the rules as a pure function, then
every case as raw bytes over a real stdio pipe to `python -m server`, which stays usable after."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from server import jsonrpc
from server.app import validate_message

ROOT = Path(__file__).resolve().parent.parent
DEEP = 5000  # deeper than Python's json module recurses
SDK_DEEP = 300  # parses here, but deeper than the SDK's parser takes

# (raw line, the answers it must get as (id, code)); an empty list: ignored, as the spec says.
CASES: list[tuple[str, bytes, list[tuple[Any, int]]]] = [
    (
        "a batch",
        b'[{"jsonrpc":"2.0","id":101,"method":"ping"},{"jsonrpc":"2.0","id":102,"method":"tools/list"}]',
        [(101, -32600), (102, -32600)],
    ),
    ("a missing method", b'{"jsonrpc":"2.0","id":103}', [(103, -32600)]),
    ('"jsonrpc": "1.0"', b'{"jsonrpc":"1.0","id":104,"method":"ping"}', [(104, -32600)]),
    ("no jsonrpc member", b'{"id":105,"method":"ping"}', [(105, -32600)]),
    ("a float id", b'{"jsonrpc":"2.0","id":106.5,"method":"ping"}', [(106.5, -32600)]),
    ("an object id", b'{"jsonrpc":"2.0","id":{"n":107},"method":"ping"}', [(None, -32600)]),
    ("a boolean id", b'{"jsonrpc":"2.0","id":true,"method":"ping"}', [(None, -32600)]),
    ("a null id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', [(None, -32600)]),
    ("params as a list", b'{"jsonrpc":"2.0","id":108,"method":"tools/list","params":[1,2]}', [(108, -32602)]),
    ("params as a string", b'{"jsonrpc":"2.0","id":"p109","method":"ping","params":"x"}', [("p109", -32602)]),
    ("a method that is a number", b'{"jsonrpc":"2.0","id":110,"method":7}', [(110, -32600)]),
    (
        "invalid UTF-8",
        b'{"jsonrpc":"2.0","id":111,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"\xff\xfe"}}}',
        [(111, -32700)],
    ),
    (
        "nesting deeper than json recurses",
        b'{"jsonrpc":"2.0","id":112,"method":"tools/call","params":{"a":' + b"[" * DEEP + b"]" * DEEP + b"}}",
        [(112, -32700)],
    ),
    (
        "nesting deeper than the SDK's parser, the id last",
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"a":' + b"[" * SDK_DEEP + b"]" * SDK_DEEP + b'},"id":113}',
        [(113, -32700)],
    ),
    ("truncated JSON", b'{"jsonrpc":"2.0","id":114,"method":"ping"', [(114, -32700)]),
    ("a malformed notification", b'{"jsonrpc":"2.0","method":"notifications/x","params":[1]}', []),
    ("a notification with jsonrpc 1.0", b'{"jsonrpc":"1.0","method":"notifications/initialized"}', []),
    ("a garbage line", b"hello, is anyone there?", []),
    ("a bare number", b"42", []),
    ("an empty batch", b"[]", [(None, -32600)]),  # the spec's one answer to []
    ("a blank line", b"   ", []),
    ("garbage with invalid UTF-8", b"\xff\xfe\x00garbage", []),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_malformed_line_is_answered_with_its_id_or_ignored(raw, expected):
    text, answers = jsonrpc.check(raw + b"\n", validate_message)
    assert text is None  # nothing malformed reaches the SDK
    got = [json.loads(a) for a in answers]
    assert [(a["id"], a["error"]["code"]) for a in got] == expected
    assert all(a["jsonrpc"] == "2.0" and a["error"]["message"] for a in got)
    assert all(a.endswith(b"\n") and a.count(b"\n") == 1 for a in answers)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"q":"\xc3\xa9\xe5\xaf\x86"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":3,"result":{}}',
        b'{"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"no"}}',
    ],
)
def test_well_formed_messages_go_to_the_sdk_untouched(raw):
    text, answers = jsonrpc.check(raw + b"\n", validate_message)
    assert answers == [] and text == (raw + b"\n").decode()


def test_a_lone_surrogate_escape_reaches_the_sdk_as_a_replacement_character():
    # JSON allows "\ud800" alone; the SDK's parser rejects it, so the guard hands on U+FFFD.
    raw = b'{"jsonrpc":"2.0","id":115,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"a\\ud800b\\ud83d\\ude00"}}}'
    text, answers = jsonrpc.check(raw + b"\n", validate_message)
    assert answers == [] and text is not None
    validate_message(text)
    assert json.loads(text)["params"]["arguments"]["query"] == "a\ufffdb\U0001f600"  # a real pair is kept


def send_and_collect(proc: subprocess.Popen, lines: list[bytes], until_id: Any, seconds: float = 60) -> list[dict]:
    """Write raw `lines`, read messages until the answer to `until_id` (a deadline, never a hang)."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(line + b"\n" for line in lines))
    proc.stdin.flush()
    out, buf, stop = [], b"", time.monotonic() + seconds
    fd = proc.stdout.fileno()
    while not any(m.get("id") == until_id and "result" in m for m in out):
        left = stop - time.monotonic()
        assert left > 0, f"no answer to {until_id!r} after {seconds}s; got {out}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"the server stopped; got {out}"
            buf += chunk
            *done, buf = buf.split(b"\n")
            out += [json.loads(line) for line in done if line.strip()]
    return out


def start_server(tmp_path: Path) -> subprocess.Popen:
    env = {
        "MAPLE_HOME": str(tmp_path / "h"),
        "MAPLE_MODEL": "hash-64",
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ["PATH"],
        "CLAUDE_PROJECT_DIR": str(tmp_path),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
    )


def request(rid: Any, method: str, params: dict | None = None) -> bytes:
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})}
    return json.dumps(msg).encode()


INITIALIZE = request(
    0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def test_over_a_real_stdio_pipe_every_malformed_request_is_answered_and_the_server_stays_usable(tmp_path):
    proc = start_server(tmp_path)
    try:
        send_and_collect(proc, [INITIALIZE, INITIALIZED], until_id=0)
        # A tools/call only the SDK answers: the malformed lines below meet the SDK-served path.
        send_and_collect(proc, [request(1, "tools/call", {"name": "memory_stats", "arguments": {}})], until_id=1)
        got = send_and_collect(proc, [c[1] for c in CASES] + [request(2, "ping")], until_id=2)
        errors = sorted(((m["id"], m["error"]["code"]) for m in got if "error" in m), key=repr)
        assert errors == sorted((a for c in CASES for a in c[2]), key=repr)  # each answered once, no more
        stored = request(
            3, "tools/call", {"name": "memory_store", "arguments": {"content": "The pipe survived malformed input"}}
        )
        found = request(4, "tools/call", {"name": "memory_search", "arguments": {"query": "pipe survived"}})
        # One after the other: the SDK runs requests concurrently, so a search sent with the store
        # can run before the store has finished.
        send_and_collect(proc, [stored], until_id=3)
        after = send_and_collect(proc, [found], until_id=4)
        hits = next(m for m in after if m.get("id") == 4)["result"]["structuredContent"]["results"]
        assert [h["content"] for h in hits] == ["The pipe survived malformed input"]
        assert proc.poll() is None
    finally:
        proc.stdin.close()
        code = proc.wait(timeout=60)
        proc.stdout.close()
    assert code == 0


RELAY = """
import json, os, subprocess, sys, threading
lines = json.loads(os.environ["MALFORMED"])
server = subprocess.Popen([sys.executable, "-m", "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for line in lines:
    server.stdin.write(line.encode("latin-1") + b"\\n")
server.stdin.write(b'{"jsonrpc":"2.0","id":"relay","method":"ping"}\\n')
server.stdin.flush()
errors = 0
while True:  # the answers to the malformed lines, up to the ping's
    msg = json.loads(server.stdout.readline())
    if msg.get("id") == "relay":
        break
    errors += "error" in msg
sys.stderr.write(f"errors {errors}\\n")
sys.stderr.flush()

def pump(src, dst):
    while chunk := os.read(src.fileno(), 65536):
        dst.write(chunk)
        dst.flush()
    dst.close()

threading.Thread(target=pump, args=(server.stdout, sys.stdout.buffer), daemon=True).start()
pump(sys.stdin.buffer, server.stdin)
sys.exit(server.wait())
"""


async def test_after_malformed_lines_before_the_handshake_the_sdk_client_works_normally(tmp_path):
    """Malformed lines first (sent while the server is still starting), then the SDK's own client
    through a relay on the same server process: handshake, a store and a search."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    relay = tmp_path / "relay.py"
    relay.write_text(RELAY)
    env = {
        "MAPLE_HOME": str(tmp_path / "h"),
        "MAPLE_MODEL": "hash-64",
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ["PATH"],
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "MALFORMED": json.dumps([c[1].decode("latin-1") for c in CASES]),
    }
    log = (tmp_path / "relay.log").open("w")
    params = StdioServerParameters(command=sys.executable, args=[str(relay)], env=env, cwd=str(tmp_path))
    try:
        async with Client(stdio_client(params, errlog=log), mode="legacy") as client:
            stored = await client.call_tool("memory_store", {"content": "The relay carried the handshake"})
            assert not stored.is_error
            found = await client.call_tool("memory_search", {"query": "relay handshake"})
            assert [r["content"] for r in found.structured_content["results"]] == ["The relay carried the handshake"]
    finally:
        log.close()
    expected = sum(len(c[2]) for c in CASES)
    assert f"errors {expected}" in (tmp_path / "relay.log").read_text()
