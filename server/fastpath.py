"""Answering the requests a client sends to connect, before the MCP SDK has loaded.

Importing the SDK costs about 0.6 s of CPU (seconds on a busy machine). Claude Code 2.1.332 opens
with `server/discover` (2026-07-28), then `subscriptions/listen`, whose acknowledgement it waits
for, `server/discover` again and the four lists; a handshake-era client sends `initialize` and the
same lists. None of these answers depends on anything but the protocol revision, so
server/answers.py holds the SDK's own answers, recorded from the real server, and `Early` sends
them from a thread while the main thread imports the SDK.

Everything `Early` reads is handed to the SDK afterwards, in order, so the SDK's state (the era its
first request decides, the handshake, the open listen stream) is what it always is; `Wire` then
drops the SDK's own copy of each answer already sent. A request not recognised exactly (tools/call,
a cursor, a `_meta` key or a capability shape not listed here) waits for the SDK; a malformed line
is answered here at once, as server.jsonrpc answers it once the SDK serves, and not handed over.
The one thing sent early for a request that stays the SDK's is the listen acknowledgement: the
listen stream itself, and its eventual answer, are the SDK's.

Stdlib only; the thread imports nothing, since it runs while the main thread imports the SDK.
"""

from __future__ import annotations

import json
import logging
import os
import select
import threading
import time
from importlib.util import find_spec
from typing import Any

from server import answers, jsonrpc

log = logging.getLogger("maple.server")

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
LISTS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
IMPLEMENTATION_TEXT = ("name", "version", "title", "description", "websiteUrl")
MAX_LINE = 1 << 20  # a connect request is small; a longer line is a tool call, left unparsed
_ABSENT = object()


def snapshot_is_current() -> bool:
    """True when the installed mcp and mcp-types are the versions server/answers.py was recorded
    from (their dist-info folders sit beside the packages); another version may answer
    differently, so then everything waits for the SDK. Imports neither package."""
    for package, version in answers.SDK_VERSIONS.items():
        spec = find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            return False
        site = os.path.dirname(next(iter(spec.submodule_search_locations)))
        if not os.path.isdir(os.path.join(site, f"{package}-{version}.dist-info")):
            return False
    return True


def _key(rid: Any) -> tuple[bool, Any] | None:
    """A request id as a dict key (1 and "1" differ), or None when the SDK's RequestId (int or
    str) would not take it."""
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None
    return (isinstance(rid, str), rid)


def _text_fields(value: Any, required: tuple[str, ...]) -> bool:
    """An Implementation (clientInfo) this module vouches the SDK accepts: text fields only."""
    return (
        isinstance(value, dict)
        and all(k in value for k in required)
        and all(k in IMPLEMENTATION_TEXT and isinstance(v, str) for k, v in value.items())
    )


def _capabilities(value: Any, path: str = "") -> bool:
    """Client capabilities as objects all the way down (the one flag, roots.listChanged, may be a
    boolean): every field the SDK types there is an object, so it accepts each such tree."""
    if not isinstance(value, dict):
        return False
    for k, v in value.items():
        if not isinstance(k, str):
            return False
        if path + k == "roots.listChanged" and isinstance(v, bool):
            continue
        if not _capabilities(v, f"{path}{k}."):
            return False
    return True


def _modern_envelope(params: Any) -> bool:
    """What the SDK reads as a 2026-07-28 request: params._meta holds the protocol version key."""
    return isinstance(params, dict) and isinstance(params.get("_meta"), dict) and PROTOCOL_VERSION in params["_meta"]


def _envelope_version(params: Any, other: tuple[str, ...] = ()) -> str | None:
    """The revision of a modern request whose params hold `_meta` (a complete, well-formed
    envelope) and `other` keys only; None for anything else."""
    if not isinstance(params, dict) or set(params) != {"_meta", *other}:
        return None
    meta = params["_meta"]
    if not isinstance(meta, dict) or not set(meta) <= {PROTOCOL_VERSION, CLIENT_INFO, CLIENT_CAPABILITIES}:
        return None
    version = meta.get(PROTOCOL_VERSION)
    if version not in answers.MODERN_VERSIONS or not _capabilities(meta.get(CLIENT_CAPABILITIES)):
        return None
    if CLIENT_INFO in meta and not _text_fields(meta[CLIENT_INFO], ("name", "version")):
        return None
    return version


def _handshake_version(params: Any) -> str | None:
    """The revision an `initialize` asks for, when it is one the SDK speaks and the params are
    exactly what it needs."""
    if not isinstance(params, dict) or set(params) != {"protocolVersion", "capabilities", "clientInfo"}:
        return None
    version = params["protocolVersion"]
    if version not in answers.HANDSHAKE_VERSIONS or not _capabilities(params["capabilities"]):
        return None
    return version if _text_fields(params["clientInfo"], ("name", "version")) else None


def response_line(rid: Any, result: str) -> bytes:
    """A JSON-RPC response with `result` (JSON text), framed byte for byte as the SDK frames it."""
    rid_text = json.dumps(rid, ensure_ascii=False)
    return ('{"jsonrpc":"2.0","id":' + rid_text + ',"result":' + result + "}\n").encode("utf-8")


def ack_line(rid: Any) -> bytes:
    """The SDK's acknowledgement of a `subscriptions/listen` request for answers.LISTEN_NOTIFICATIONS."""
    meta = '{"' + SUBSCRIPTION_ID + '":' + json.dumps(rid, ensure_ascii=False) + "}"
    params = '{"_meta":' + meta + ',"notifications":' + answers.LISTEN_ACK + "}"
    return ('{"jsonrpc":"2.0","method":"' + ACKNOWLEDGED + '","params":' + params + "}\n").encode("utf-8")


class Responder:
    """Reads the client's lines in order and says which may be answered now, tracking the protocol
    state the SDK will reach on the same lines: the era (decided by the first request, as in the
    SDK's dual-era loop) and, for the handshake era, the revision `initialize` settled on.

    After a line it does not understand it answers nothing more: what follows is the SDK's alone.
    """

    def __init__(self) -> None:
        self.era: str | None = None  # "handshake" or "modern", from the first request
        self.version: str | None = None  # the handshake revision answered here
        self.live = True
        # What was answered here, for Wire: request key -> (method, the line sent); subscription
        # key -> the acknowledgement sent.
        self.answered: dict[tuple[bool, Any], tuple[str, bytes]] = {}
        self.acknowledged: dict[tuple[bool, Any], bytes] = {}

    def respond(self, line: bytes) -> bytes | None:
        """The line to send for `line` (one message, without its newline), or None."""
        if not self.live:
            return None
        msg = self._message(line)
        if msg is None:
            self.live = False
            return None
        method, params = msg["method"], msg.get("params", _ABSENT)
        if "id" not in msg:
            return None  # a notification: it never decides the era, and needs no answer
        key = _key(msg["id"])
        if key is None:  # not a request the SDK reads (nor one that decides its era): stop here
            self.live = False
            return None
        first = self.era is None
        if first:
            self.era = "modern" if method != "initialize" and _modern_envelope(params) else "handshake"
        if key in self.answered or key in self.acknowledged:
            return None
        out = self._answer(method, params, msg["id"], first)
        if out is not None:
            if method == "subscriptions/listen":
                self.acknowledged[key] = out
            else:
                self.answered[key] = (method, out)
        return out

    def _message(self, line: bytes) -> dict[str, Any] | None:
        """A JSON-RPC request or notification this module can reason about, else None."""
        if len(line) > MAX_LINE:
            return None
        try:
            msg = json.loads(line)
        except ValueError:  # UnicodeDecodeError included
            return None
        ok = (
            isinstance(msg, dict)
            and msg.get("jsonrpc") == "2.0"
            and isinstance(msg.get("method"), str)
            and set(msg) <= {"jsonrpc", "id", "method", "params"}
            and isinstance(msg.get("params", {}), (dict, type(None)))
        )
        return msg if ok else None

    def _answer(self, method: str, params: Any, rid: Any, first: bool) -> bytes | None:
        if self.era == "handshake":
            if method == "initialize" and first:
                self.version = _handshake_version(params)
                if self.version is not None:
                    return response_line(rid, answers.RESULTS[self.version]["initialize"])
            elif method in LISTS and self.version is not None and params in (_ABSENT, {}):
                return response_line(rid, answers.RESULTS[self.version][method])
            return None
        if method == "server/discover" or method in LISTS:
            version = _envelope_version(params)
            return None if version is None else response_line(rid, answers.RESULTS[version][method])
        if method == "subscriptions/listen":
            version = _envelope_version(params, ("notifications",))
            if version is not None and params["notifications"] == answers.LISTEN_NOTIFICATIONS:
                return ack_line(rid)
        return None


class Early:
    """A thread that reads the client and sends what `responder` can answer, until `stop()`.

    Every byte read is kept for the SDK. Exits the process if the client goes away without
    closing our input, as the running server does.
    """

    def __init__(self, fd_in: int, fd_out: int, parent: int, responder: Responder, started: float | None = None):
        self.fd_in, self.fd_out, self.parent, self.responder = fd_in, fd_out, parent, responder
        self.read = bytearray()
        self.started = time.monotonic() if started is None else started
        self._scanned = 0  # self.read[:_scanned] holds whole lines already handled
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="maple-early-answers", daemon=True)

    def start(self) -> Early:
        self._thread.start()
        return self

    def stop(self) -> bytes:
        """End the thread; everything it read, for the SDK to read first."""
        self._stopping = True
        os.write(self._wake_w, b"!")
        self._thread.join()
        os.close(self._wake_r)
        os.close(self._wake_w)
        sent = len(self.responder.answered) + len(self.responder.acknowledged)
        log.info(
            "answered %d requests before the SDK took over, %.2f s after start",
            sent,
            time.monotonic() - self.started,
        )
        return bytes(self.read)

    def _run(self) -> None:
        try:
            while not self._stopping:
                ready, _, _ = select.select([self.fd_in, self._wake_r], [], [], 2.0)
                if not ready:
                    if os.getppid() != self.parent:
                        os._exit(0)
                    continue
                if self.fd_in in ready:
                    chunk = os.read(self.fd_in, 65536)
                    if not chunk:
                        return  # end of input: the SDK reads it too, after what is kept here
                    self.read += chunk
                    self._answer_whole_lines()
        except Exception:  # noqa: BLE001 - answering early is an optimisation; the SDK still answers
            self.responder.live = False
            log.exception("answering before the SDK loaded failed; the SDK answers instead")

    def _answer_whole_lines(self) -> None:
        while (end := self.read.find(b"\n", self._scanned)) >= 0:
            start = self._scanned
            line = bytes(self.read[start:end])
            self._scanned = end + 1
            text, errors = jsonrpc.check(line)
            if text is None:
                # Malformed (answered now) or garbage: what server.jsonrpc does once the SDK reads,
                # done at once. The line is not handed over, so the SDK never sees it (as with the
                # guard) and it is answered once.
                for answer in errors:
                    write_all(self.fd_out, answer)
                del self.read[start : end + 1]
                self._scanned = start
                continue
            out = self.responder.respond(line)
            if out is not None:
                write_all(self.fd_out, out)


class Wire:
    """The protocol's output once the SDK serves: whole lines to `fd`, except the SDK's own answer
    to a request `responder` answered already (and its acknowledgement of a listen acknowledged
    already). An SDK answer that differs from the one sent is logged: the snapshot is stale."""

    def __init__(self, fd: int, responder: Responder | None = None):
        self.fd, self.responder, self.pending = fd, responder, ""
        # The SDK's writer and server.jsonrpc's answers (from the reading thread) share the pipe:
        # one line at a time, or a long line could be torn by another.
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if not self._sent_already(line):
                self.send((line + "\n").encode("utf-8"))
        return len(text)

    def send(self, line: bytes) -> None:
        """One whole line onto the wire."""
        with self._lock:
            write_all(self.fd, line)

    def flush(self) -> None:
        pass  # every line is written through as it completes

    def _sent_already(self, line: str) -> bool:
        r = self.responder
        if r is None or not (r.answered or r.acknowledged):
            return False
        try:
            msg = json.loads(line)
        except ValueError:
            return False
        if not isinstance(msg, dict):
            return False
        if "id" in msg and ("result" in msg or "error" in msg) and (key := _key(msg["id"])) in r.answered:
            method, sent = r.answered.pop(key)
            self._compare(method, sent, msg)
            return True
        params = msg.get("params")
        if msg.get("method") == ACKNOWLEDGED and isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            key = _key(params["_meta"].get(SUBSCRIPTION_ID))
            if key in r.acknowledged:
                self._compare("subscriptions/listen", r.acknowledged.pop(key), msg)
                return True
        return False

    @staticmethod
    def _compare(method: str, sent: bytes, sdk: dict[str, Any]) -> None:
        if json.loads(sent) != sdk:
            log.warning(
                "the %s answer sent before the SDK loaded differs from the SDK's own; regenerate "
                "server/answers.py with `python -m server.snapshot`",
                method,
            )


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
