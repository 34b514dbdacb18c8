"""JSON-RPC hygiene in front of the SDK: a malformed request that carries a readable id gets its
error answer at once, and nothing malformed reaches the SDK.

Why MAPLE does it: the SDK's stdio transport (mcp 2.3) hands a line it cannot validate to the
session as an exception, which logs it and answers nothing; and a request whose id is a float, an
object or a boolean validates as a *notification* (unknown keys are ignored) and is dropped. The
client then waits for its timeout. `Guard` sits between the process's stdin and the SDK's reader:
each line is checked here, answered here when it is a malformed request, and handed on otherwise.

What is answered (JSON-RPC 2.0, MCP's framing of one message per line):
- -32700 parse error: invalid UTF-8, invalid JSON, nesting deeper than the SDK's parser takes,
  anything the SDK's own validation rejects while reading;
- -32600 invalid request: "jsonrpc" other than "2.0", an id that is not a string or an integer,
  a missing or non-string "method", each member of a batch (MCP has no batches since 2025-06-18),
  an empty batch `[]` (once, id null);
- -32602 invalid params: "params" present but not an object (a list is by-position params, which
  MCP does not use).
The answer carries the request's id as written when it is a string or a number (a float too, so a
client can match it), else null, as the spec says for an id that cannot be used.
What is ignored, as the spec says: notifications (no id) that are malformed, and lines where no
id can be read at all (garbage, a bare JSON value, an empty line). They are logged, never answered.
Responses from the client (result or error, no method) go to the SDK as they are. A lone
surrogate escape ("\\ud800", valid JSON that the SDK's parser rejects) is handed on as U+FFFD.

Stdlib only; `validate` is the SDK's own message parser, passed in.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from typing import Any, BinaryIO

log = logging.getLogger("maple.server")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
_NO_ID = object()  # no id could be read: nothing to answer
# A JSON string or a bracket: enough to find the top-level "id" of a line that does not parse,
# without recursion (a deeply nested line is one of the cases) and at regex speed.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)
_COLON = re.compile(r"\s*:\s*")


def check(raw: bytes, validate: Callable[[str], Any] | None = None) -> tuple[str | None, list[bytes]]:
    """One line from the client: (the text to hand to the SDK or None, the answers to send now)."""
    if not raw.strip():
        return None, []
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, _answer(_scan_id(raw.decode("utf-8", errors="replace")), PARSE_ERROR, "invalid UTF-8")
    try:
        msg = json.loads(text)
    except (ValueError, RecursionError):
        return None, _answer(_scan_id(text), PARSE_ERROR, "invalid JSON")
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(msg):
        # JSON allows "\ud800" alone; the SDK's parser does not, and would drop the request
        # unanswered. The character cannot be written anywhere anyway: it becomes U+FFFD.
        msg = _without_lone_surrogates(msg)
        text = json.dumps(msg, ensure_ascii=False)
    if msg == []:
        return None, _answer(None, INVALID_REQUEST, "an empty batch is not a request; send one message per line")
    if isinstance(msg, list):
        found = [m["id"] for m in msg if isinstance(m, dict) and "id" in m]
        out = [
            a
            for rid in found
            for a in _answer(rid, INVALID_REQUEST, "batches are not supported; send one message per line")
        ]
        if not out:
            log.warning("ignored a batch with no request id in it")
        return None, out
    if not isinstance(msg, dict):
        log.warning("ignored a line that is not a JSON-RPC message")
        return None, []
    if "method" not in msg and ("result" in msg or "error" in msg):
        return text, []  # a response to one of our requests: the SDK's to match (or log)
    rid = msg.get("id", _NO_ID)
    problem = _problem(msg)
    if problem is not None:
        code, message = problem
        if rid is _NO_ID:
            log.warning("ignored a malformed notification: %s", message)
        return None, _answer(rid, code, message)
    if validate is not None:
        try:
            validate(text)
        except Exception as e:  # noqa: BLE001 - whatever the SDK's parser rejects, it would drop
            code = PARSE_ERROR if _unparsable(e) else INVALID_REQUEST
            if rid is _NO_ID:
                log.warning("ignored a notification the SDK cannot read")
            return None, _answer(rid, code, "invalid JSON" if code == PARSE_ERROR else "invalid request")
    return text, []


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads has joined every pair already


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _LONE_SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    return value


def _unparsable(e: Exception) -> bool:
    """Whether the SDK's parser failed on the JSON itself (depth, escapes), not on its shape."""
    errors = getattr(e, "errors", None)
    try:
        return any(err.get("type") == "json_invalid" for err in errors()) if callable(errors) else False
    except Exception:  # noqa: BLE001 - an error that cannot describe itself: call it a bad request
        return False


def _problem(msg: dict[str, Any]) -> tuple[int, str] | None:
    """What makes `msg` an invalid request (or notification), if anything."""
    if msg.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'jsonrpc must be "2.0"'
    if "id" in msg and not _usable_id(msg["id"]):
        return INVALID_REQUEST, "id must be a string or an integer"
    if not isinstance(msg.get("method"), str):
        return INVALID_REQUEST, "a request needs a method (a string)"
    if msg.get("params") is not None and not isinstance(msg["params"], dict):
        return INVALID_PARAMS, "params must be an object"
    return None


def _usable_id(rid: Any) -> bool:
    return isinstance(rid, (int, str)) and not isinstance(rid, bool)


def _answer(rid: Any, code: int, message: str) -> list[bytes]:
    if rid is _NO_ID:
        return []
    echo = rid if _echoable(rid) else None
    body = {"jsonrpc": "2.0", "id": echo, "error": {"code": code, "message": message}}
    return [json.dumps(body, separators=(",", ":")).encode("utf-8") + b"\n"]


def _echoable(rid: Any) -> bool:
    """An id the answer can carry back: a string or a finite number (a float included)."""
    if isinstance(rid, bool):
        return False
    return isinstance(rid, (int, str)) or (isinstance(rid, float) and math.isfinite(rid))


def _scan_id(text: str) -> Any:
    """The top-level "id" of a line that does not parse, or _NO_ID."""
    depth = 0
    for m in _TOKEN.finditer(text):
        token = m.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif depth == 1 and token == '"id"' and (colon := _COLON.match(text, m.end())):
            try:
                value, _ = json.JSONDecoder().raw_decode(text, colon.end())
            except (ValueError, RecursionError):
                return None  # an id is there but unreadable: answered with id null
            return value
    return _NO_ID


class Guard:
    """The SDK's stdin: lines read from `source` (bytes), checked by `check`; the malformed
    requests answered through `send` (whole lines), the rest handed on as text."""

    def __init__(self, source: BinaryIO, send: Callable[[bytes], None], validate: Callable[[str], Any] | None = None):
        self.source, self.send, self.validate = source, send, validate

    def readline(self) -> str:
        while True:
            raw = self.source.readline()
            if not raw:
                return ""  # end of input
            text, answers = check(raw, self.validate)
            for answer in answers:
                self.send(answer)
            if text is not None:
                return text if text.endswith("\n") else text + "\n"

    def close(self) -> None:
        pass  # the descriptor is the launcher's (server.launch), not the SDK's to close

    def __iter__(self) -> Guard:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line
