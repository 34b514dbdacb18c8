"""server.launch: `initialize` answered before the SDK loads, exactly as the SDK would answer it,
with the SDK's own answer dropped and everything else passed through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server import info, launch

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the early answer is POSIX only")


def init_line(version: str, rid: Any = 1) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        }
    )


def exchange(home: Path, lines: list[str], answers: int, code: str | None = None) -> list[dict[str, Any]]:
    """Send `lines` to a server process, read `answers` responses, then close its stdin and
    return every message it wrote. (Closing stdin at once would race the answers: the SDK drops
    requests still in flight when its input ends.)"""
    env = {"MAPLE_HOME": str(home), "MAPLE_MODEL": "hash-64", "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]}
    cmd = [sys.executable, "-m", "server"] if code is None else [sys.executable, "-c", code]
    out: list[dict[str, Any]] = []
    with subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home.parent
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(line + "\n" for line in lines).encode())
        proc.stdin.flush()
        try:
            while sum("id" in m for m in out) < answers:
                line = proc.stdout.readline()
                assert line, f"the server stopped after {out}"
                out.append(json.loads(line))
        finally:
            proc.stdin.close()
            rest = proc.stdout.read().decode()
            assert proc.wait(timeout=60) == 0
    return out + [json.loads(line) for line in rest.splitlines()]


SDK_ONLY = "from memory import config; from server import app; app.run_stdio(config.load())"


def test_the_handshake_versions_are_the_sdks():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    assert info.HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("version", info.HANDSHAKE_VERSIONS)
def test_the_early_answer_is_exactly_what_the_sdk_answers(version, home):
    sdk = exchange(home, [init_line(version, "a-1")], 1, SDK_ONLY)  # the SDK's own transport, no early answer
    ours = launch.early_answer(init_line(version, "a-1").encode())
    assert ours is not None and ours[0] == "a-1"
    assert [json.loads(ours[1])] == sdk


def test_the_sdks_second_answer_is_dropped_and_every_other_message_passes(home):
    out = exchange(
        home,
        [
            init_line("2025-11-25"),
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":3,"method":"ping"}',
        ],
        3,
    )
    assert sorted(m.get("id") for m in out) == [1, 2, 3]  # one answer each: the SDK's copy of 1 is gone
    assert out[0]["result"]["protocolVersion"] == "2025-11-25"
    assert len(out[1]["result"]["tools"]) >= 19


def test_an_unknown_version_and_a_bad_first_line_are_left_to_the_sdk(home):
    out = exchange(home, [init_line("2099-01-01")], 1)
    assert [(m["id"], m["result"]["protocolVersion"]) for m in out] == [(1, "2025-11-25")]
    out = exchange(home, ["this is not json", init_line("2025-06-18", 5)], 1)
    assert [m.get("id") for m in out if "result" in m] == [5]


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","method":"initialize"}',
        b'{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}',
        b"[1, 2]",
        b"\xff\xfe",
    ],
)
def test_only_a_well_formed_initialize_gets_an_early_answer(line):
    assert launch.early_answer(line) is None


def test_the_launcher_imports_no_sdk_and_no_model():
    code = (
        "import sys, server.launch; print(sorted(m for m in ('mcp', 'anyio', 'pydantic', 'torch', 'numpy') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_the_wire_writes_whole_lines_and_drops_only_the_answered_request(tmp_path):
    path = tmp_path / "wire"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        wire = launch.Wire(fd, drop=7)
        wire.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"id":7}}\n')
        wire.write('{"jsonrpc":"2.0","id":7,"res')
        wire.write('ult":{}}\n{"jsonrpc":"2.0","id":8,"result":{}}\n')
        wire.write('{"jsonrpc":"2.0","id":7,"result":{"again":true}}\n')
    finally:
        os.close(fd)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"id": 7}},
        {"jsonrpc": "2.0", "id": 8, "result": {}},
        {"jsonrpc": "2.0", "id": 7, "result": {"again": True}},
    ]
