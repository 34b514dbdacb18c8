"""server.launch: `initialize` answered before the SDK loads, exactly as the SDK would answer it,
with the SDK's own answer dropped and everything else passed through."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory.config import Config
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


# -- logging ------------------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def logging_restored() -> Iterator[None]:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("maple").level
    yield
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    logging.getLogger("maple").setLevel(saved[2])


def log_the_start(config: Config, stderr: io.StringIO) -> str:
    launch.setup_logging(config, stderr)
    logging.getLogger(launch.STARTUP_LOGGER).info("database %s", config.db_path)
    logging.getLogger("maple.server").info("answered 3 requests")
    logging.getLogger("mcp.server").info("a library's own info line")
    logging.getLogger("maple.store").warning("the database is read-only")
    return (config.home / launch.LOG_NAME).read_text()


def test_info_lines_go_to_the_log_file_and_stderr_gets_only_warnings(config, logging_restored):
    stderr = io.StringIO()
    log = log_the_start(config, stderr)
    assert "INFO maple.server.startup: database" in log and "answered 3 requests" in log
    assert "read-only" in log and "a library's own" not in log  # libraries log at the configured level
    assert stderr.getvalue() == "maple WARNING maple.store: the database is read-only\n"
    assert (config.home / launch.LOG_NAME).stat().st_mode & 0o777 == 0o600


def test_a_terminal_also_gets_the_start_up_lines(config, logging_restored):
    stderr = Terminal()
    log_the_start(config, stderr)
    assert stderr.getvalue() == (
        f"maple: database {config.db_path}\nmaple WARNING maple.store: the database is read-only\n"
    )


def test_the_log_file_keeps_its_newer_half_when_it_outgrows_its_limit(tmp_path):
    path = tmp_path / "server.log"
    handler = launch.BoundedLog(path, limit=1000)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for i in range(100):
        handler.emit(logging.LogRecord("maple", logging.INFO, __file__, 1, "line %03d", (i,), None))
    lines = path.read_text().splitlines()
    assert path.stat().st_size <= 1000
    assert lines[-1] == "line 099" and lines == [f"line {i:03d}" for i in range(100 - len(lines), 100)]
