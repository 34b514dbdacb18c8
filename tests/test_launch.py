"""server.launch and server.fastpath: the requests a client sends to connect are answered before
the SDK loads, byte for byte as the SDK answers them; the SDK reads everything afterwards and its
own copies of those answers are dropped; everything else waits for the SDK. And where the server
logs."""

from __future__ import annotations

import io
import json
import logging
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

import pytest

from memory.config import Config
from server import answers, fastpath, launch, snapshot

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the early answers are POSIX only")
VERSIONS = (*answers.HANDSHAKE_VERSIONS, *answers.MODERN_VERSIONS)
HANDSHAKE, MODERN = answers.HANDSHAKE_VERSIONS[-1], answers.MODERN_VERSIONS[-1]
REGENERATE = "server/answers.py is out of date: run `python -m server.snapshot`"


def env_for(home: Path) -> dict[str, str]:
    return {"MAPLE_HOME": str(home), "MAPLE_MODEL": "hash-64", "PYTHONPATH": str(ROOT), "PATH": os.environ["PATH"]}


def exchange(home: Path, lines: list[str], answers: int) -> list[dict[str, Any]]:
    """Send `lines` to `python -m server`, read `answers` responses, then close its stdin and
    return every message it wrote. (Closing stdin at once would race the answers: the SDK drops
    requests still in flight when its input ends.)"""
    out: list[dict[str, Any]] = []
    with subprocess.Popen(
        [sys.executable, "-m", "server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env_for(home),
        cwd=home.parent,
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


def meta(version: str = MODERN, **more: Any) -> dict[str, Any]:
    return {
        fastpath.PROTOCOL_VERSION: version,
        fastpath.CLIENT_INFO: snapshot.CLAUDE_CODE,
        fastpath.CLIENT_CAPABILITIES: snapshot.CLAUDE_CODE_CAPABILITIES,
        **more,
    }


def request(method: str, rid: Any = 1, params: Any = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def initialize(version: str = HANDSHAKE, rid: Any = 0, **params: Any) -> dict[str, Any]:
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    return request("initialize", rid, {**init, **params})


def connect_sequence(version: str, client: str) -> list[dict[str, Any]]:
    """Claude Code's connect requests, or those of a client that says as little as it may."""
    if client == "claude-code":
        return snapshot.connect_requests(version)
    if version in answers.HANDSHAKE_VERSIONS:
        lists = [request(m, i, {}) for i, m in enumerate(fastpath.LISTS, 1)]
        return [initialize(version), {"jsonrpc": "2.0", "method": "notifications/initialized"}, *lists]
    bare = {"_meta": {fastpath.PROTOCOL_VERSION: version, fastpath.CLIENT_CAPABILITIES: {}}}
    return [request(m, i, bare) for i, m in enumerate(("server/discover", *fastpath.LISTS))]


def early(requests: list[dict[str, Any]], responder: fastpath.Responder | None = None) -> dict[Any, str]:
    """What the fast path sends for `requests`, keyed like snapshot.ask_sdk's answers."""
    responder = responder or fastpath.Responder()
    out = {}
    for msg in requests:
        sent = responder.respond(json.dumps(msg).encode())
        if sent is not None:
            assert sent.endswith(b"\n") and sent.count(b"\n") == 1
            text = sent.decode().removesuffix("\n")
            out[snapshot.key_of(text)] = text
    return out


CASES = [*((v, "claude-code") for v in VERSIONS), (HANDSHAKE, "minimal"), (MODERN, "minimal")]


@pytest.fixture(scope="module")
def sdk_answers(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[Any, str]]:
    """The SDK's own answers: the real server on mcp's stdio transport, one connection per case."""
    home = tmp_path_factory.mktemp("sdk") / "maple-home"
    return dict(zip(CASES, snapshot.ask_sdk([connect_sequence(*case) for case in CASES], home), strict=True))


def test_the_recorded_answers_are_for_the_installed_sdk_and_every_revision_it_speaks():
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

    assert answers.HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS), REGENERATE
    assert answers.MODERN_VERSIONS == tuple(MODERN_PROTOCOL_VERSIONS), REGENERATE
    installed = {"mcp": installed_version("mcp"), "mcp_types": installed_version("mcp-types")}
    assert answers.SDK_VERSIONS == installed, REGENERATE
    assert set(answers.RESULTS) == set(VERSIONS)
    assert fastpath.snapshot_is_current()


@pytest.mark.parametrize(("version", "client"), CASES)
def test_every_early_answer_is_byte_for_byte_what_the_sdk_writes(sdk_answers, version, client):
    requests = connect_sequence(version, client)
    ours = early(requests)
    assert set(ours) == set(snapshot.expected(requests))  # every request of the sequence
    assert ours == sdk_answers[(version, client)], REGENERATE


class Lines:
    """Lines from a pipe, each within a time limit: a missing answer fails the test, not hangs it."""

    def __init__(self, fd: int):
        self.fd, self.buf = fd, b""

    def _more(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        assert ready, f"nothing from the server in {timeout} s (so far: {self.buf[-300:]!r})"
        return os.read(self.fd, 1 << 16)

    def next(self, timeout: float) -> str:
        while b"\n" not in self.buf:
            chunk = self._more(timeout)
            assert chunk, f"the server stopped (so far: {self.buf[-300:]!r})"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def rest(self, timeout: float) -> list[str]:
        while chunk := self._more(timeout):
            self.buf += chunk
        return self.buf.decode().splitlines()


# The launcher with the SDK held back: `from server import app` blocks until the test says go.
HELD = """
import os, sys

class HoldTheSdk:
    def find_spec(self, name, path=None, target=None):
        if name == "server.app":
            os.read(int(sys.argv[1]), 1)
            sys.meta_path.remove(self)
        return None

sys.meta_path.insert(0, HoldTheSdk())
from server.launch import main
main([])
"""


def test_claude_code_connects_before_the_sdk_has_loaded_and_gets_each_answer_once(home):
    go_read, go = os.pipe()
    connect = snapshot.connect_requests(MODERN)
    store = request(
        "tools/call", 99, {"_meta": meta(), "name": "memory_store", "arguments": {"content": "Connected early"}}
    )
    with subprocess.Popen(
        [sys.executable, "-c", HELD, str(go_read)],
        pass_fds=(go_read,),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env_for(home),
        cwd=home.parent,
    ) as proc:
        os.close(go_read)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write("".join(json.dumps(m) + "\n" for m in connect).encode())
        proc.stdin.flush()
        lines = Lines(proc.stdout.fileno())
        held = [json.loads(lines.next(timeout=60)) for _ in snapshot.expected(connect)]
        os.write(go, b"!")  # the SDK may load now
        os.close(go)
        proc.stdin.write((json.dumps(store) + "\n").encode())
        proc.stdin.flush()
        after = []
        while not after or after[-1].get("id") != 99:
            after.append(json.loads(lines.next(timeout=120)))
        proc.stdin.close()
        rest = [json.loads(line) for line in lines.rest(timeout=60)]
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
    assert [snapshot.key_of(json.dumps(m)) for m in held] == snapshot.expected(connect)  # in order
    assert held[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "maple"
    assert any(t["name"] == "memory_store" for t in held[3]["result"]["tools"])
    assert after[-1]["result"]["structuredContent"]["content"] == "Connected early"
    # Nothing twice: the SDK's answers to the replayed requests were dropped. The listen stream is
    # the SDK's; it ends when the input does.
    told = [snapshot.key_of(json.dumps(m)) for m in held + after + rest]
    assert sorted(map(str, told)) == sorted(
        map(str, [*snapshot.expected(connect), ("response", 99), ("response", "listen:0")])
    )
    assert stderr == ""
    assert "answered 7 requests before the SDK took over" in (home / launch.LOG_NAME).read_text()


def test_a_handshake_client_gets_one_answer_per_request_and_the_rest_from_the_sdk(home):
    search = request("tools/call", 6, {"name": "memory_search", "arguments": {"query": "anything"}})
    lines = [json.dumps(m) for m in [*snapshot.connect_requests(HANDSHAKE), request("ping", 5), search]]
    out = exchange(home, lines, 7)
    by_id = {m["id"]: m for m in out}
    assert sorted(m["id"] for m in out) == [0, 1, 2, 3, 4, 5, 6]  # one each: the SDK's copies are gone
    assert by_id[0]["result"]["protocolVersion"] == HANDSHAKE
    assert by_id[5]["result"] == {} and by_id[6]["result"]["structuredContent"]["results"] == []


def test_an_unknown_version_and_a_bad_first_line_are_left_to_the_sdk(home):
    out = exchange(home, [json.dumps(initialize("2099-01-01", 1))], 1)
    assert [(m["id"], m["result"]["protocolVersion"]) for m in out] == [(1, "2025-11-25")]
    out = exchange(home, ["this is not json", json.dumps(initialize("2025-06-18", 5))], 1)
    assert [m.get("id") for m in out if "result" in m] == [5]


def test_the_launcher_imports_no_sdk_and_no_model():
    code = (
        "import sys, server.launch; print(sorted(m for m in ('mcp', 'mcp_types', 'anyio', 'pydantic', 'torch', "
        "'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# -- what is answered early, and what waits for the SDK ------------------------------------------


def modern_connection() -> fastpath.Responder:
    responder = fastpath.Responder()
    assert early([request("server/discover", "probe", {"_meta": meta()})], responder)
    return responder


NOT_ANSWERED_ON_A_MODERN_CONNECTION = {
    "a tool call": request("tools/call", 2, {"_meta": meta(), "name": "memory_search", "arguments": {}}),
    "a second page": request("tools/list", 2, {"_meta": meta(), "cursor": "abc"}),
    "a revision the SDK does not speak": request("tools/list", 2, {"_meta": meta("2099-01-01")}),
    "a handshake revision in the envelope": request("tools/list", 2, {"_meta": meta(HANDSHAKE)}),
    "an unknown _meta key": request("tools/list", 2, {"_meta": meta(progressToken=1)}),
    "no capabilities": request("tools/list", 2, {"_meta": {fastpath.PROTOCOL_VERSION: MODERN}}),
    "a capability that is no object": request(
        "tools/list", 2, {"_meta": meta(**{fastpath.CLIENT_CAPABILITIES: {"elicitation": {"form": True}}})}
    ),
    "client info with icons": request(
        "tools/list", 2, {"_meta": meta(**{fastpath.CLIENT_INFO: {"name": "t", "version": "1", "icons": []}})}
    ),
    "client info without a version": request("tools/list", 2, {"_meta": meta(**{fastpath.CLIENT_INFO: {"name": "t"}})}),
    "no envelope": request("tools/list", 2),
    "initialize": initialize(rid=2),
    "a listen for other notifications": request(
        "subscriptions/listen", 2, {"_meta": meta(), "notifications": {"toolsListChanged": True}}
    ),
    "an id still in flight": request("tools/list", "probe", {"_meta": meta()}),
    "an unknown method": request("memory/everything", 2, {"_meta": meta()}),
}


@pytest.mark.parametrize("what", NOT_ANSWERED_ON_A_MODERN_CONNECTION)
def test_a_request_not_recognised_exactly_waits_for_the_sdk(what):
    responder = modern_connection()
    assert early([NOT_ANSWERED_ON_A_MODERN_CONNECTION[what]], responder) == {}
    assert early([request("tools/list", 3, {"_meta": meta()})], responder)  # and the next one is answered


def test_on_a_handshake_connection_the_lists_are_answered_only_after_an_initialize_answered_here():
    before = fastpath.Responder()
    assert early([request("tools/list", 1), initialize(rid=2), request("tools/list", 3)], before) == {}
    unknown = fastpath.Responder()
    assert early([initialize("2099-01-01"), request("tools/list", 1)], unknown) == {}
    odd = fastpath.Responder()
    assert (
        early([initialize(rid=0, capabilities={"roots": {"listChanged": "yes"}}), request("tools/list", 1)], odd) == {}
    )
    ok = fastpath.Responder()
    sent = early([initialize(), request("tools/list", 1, {"_meta": meta()}), request("tools/list", 2, {})], ok)
    assert sorted(sent) == [("response", 0), ("response", 2)]  # an enveloped request is the SDK's to refuse
    assert early([initialize(rid=9)], ok) == {}  # a second initialize too


@pytest.mark.parametrize(
    "line",
    [
        b"this is not json",
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
        b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[1]}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/list","extra":1}',
        b'{"jsonrpc":"1.0","id":2,"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":2,"result":{}}',
    ],
)
def test_a_line_it_cannot_read_as_the_sdk_does_ends_the_early_answers(line):
    responder = modern_connection()
    assert responder.respond(line) is None and not responder.live
    assert early([request("tools/list", 3, {"_meta": meta()})], responder) == {}


def test_notifications_before_the_first_request_do_not_decide_the_era():
    responder = fastpath.Responder()
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert early([note, request("server/discover", 1, {"_meta": meta()})], responder)
    assert responder.era == "modern"


def test_the_wire_drops_the_sdks_copies_once_and_passes_everything_else(tmp_path):
    responder = fastpath.Responder()
    early(snapshot.connect_requests(MODERN), responder)
    discover = answers.RESULTS[MODERN]["server/discover"]
    ack = fastpath.ack_line("listen:0").decode()
    path = tmp_path / "wire"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        wire = fastpath.Wire(fd, responder)
        wire.write('{"jsonrpc":"2.0","id":0,"res')
        wire.write('ult":' + discover + "}\n" + ack)
        wire.write('{"jsonrpc":"2.0","id":"probe-2","result":{}}\n')
        wire.write('{"jsonrpc":"2.0","id":0,"result":{"again":true}}\n' + ack)
    finally:
        os.close(fd)
    assert [json.loads(x) for x in path.read_text().splitlines()] == [
        {"jsonrpc": "2.0", "id": "probe-2", "result": {}},
        {"jsonrpc": "2.0", "id": 0, "result": {"again": True}},
        json.loads(ack),
    ]


def test_an_sdk_answer_that_differs_from_the_early_one_is_reported(tmp_path, caplog):
    responder = fastpath.Responder()
    early([initialize(rid=1)], responder)
    fd = os.open(tmp_path / "wire", os.O_WRONLY | os.O_CREAT)
    try:
        fastpath.Wire(fd, responder).write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"other"}}\n')
    finally:
        os.close(fd)
    assert (tmp_path / "wire").read_text() == ""
    assert "python -m server.snapshot" in caplog.text


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
