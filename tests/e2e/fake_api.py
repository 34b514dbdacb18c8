"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI offline.

Stdlib only. Every request is logged (in memory and as JSONL); answers come from a script:

    api.script([
        ToolUse("mcp__maple__memory_search", {"query": "staging port"}, then="It is 6543."),
        "plain text",                                       # a Text step
        lambda req: "ok" if has_tool_result(req) else None, # a function of the request
    ])

Only *main* requests (the conversation itself) consume the script. Claude Code also sends side
requests (a title or a quick check on a small model, few max_tokens, no tools); those get a short
text and leave the script alone. When the script runs out, main requests get `default` text.

A ToolUse step answers two requests: the `tool_use` first, then its `then` text once a request
carries the matching tool_result. A step that is a function receives each request body while it is
at the head of the script and returns a ToolUse (it stays, and sees the tool_result next), a Text or
str (the turn ends and the step is used up), or None (not for this request: dropped, the next step
answers). So `lambda req: "done" if has_tool_result(req) else ToolUse(...)` is one whole turn.

Observed with Claude Code 2.1.332 in `-p` mode with CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1:
only POST /v1/messages?beta=true, streaming, with tools; no count_tokens, no GET /v1/models, no side
requests. The other endpoints are answered anyway (minimally), and anything unknown gets a 404
that is logged, so a new probe shows up in the JSONL log.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

MODEL_IDS = ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001")


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolUse:
    """Ask Claude Code to call `name` with `input`; answer `then` once the tool_result is back."""

    name: str
    input: dict[str, Any]
    then: str = "Done."
    id: str = ""


Reply = Text | ToolUse
Step = str | Text | ToolUse | Callable[[dict[str, Any]], Reply | str | None]


@dataclass
class Logged:
    """One request as the fake API saw it."""

    seq: int
    method: str
    path: str
    body: Any
    kind: str  # "main", "side" or "other" (not /v1/messages)
    reply: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "method": self.method,
            "path": self.path,
            "kind": self.kind,
            "headers": self.headers,
            "body": self.body,
            "reply": self.reply,
        }

    # -- what the model received, flattened -------------------------------------------------

    def system_text(self) -> str:
        system = self.body.get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return ""

    def messages(self) -> list[dict[str, Any]]:
        msgs = self.body.get("messages") if isinstance(self.body, dict) else None
        return msgs if isinstance(msgs, list) else []

    def texts(self) -> list[str]:
        """Every text the request carries: system blocks, message texts, tool_result contents."""
        out = [self.system_text()]
        for m in self.messages():
            out.extend(_block_texts(m.get("content")))
        return out

    def all_text(self) -> str:
        return "\n".join(self.texts())

    def tool_names(self) -> list[str]:
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        return [t.get("name", "") for t in tools or [] if isinstance(t, dict)]

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool_result blocks of every user message, with their text flattened into `text`."""
        out = []
        for m in self.messages():
            if m.get("role") != "user" or not isinstance(m.get("content"), list):
                continue
            for b in m["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    out.append({**b, "text": "\n".join(_block_texts(b.get("content")))})
        return out

    def last_user_tool_results(self) -> list[dict[str, Any]]:
        """tool_result blocks of the last user message only (the answer to our last tool_use)."""
        users = [m for m in self.messages() if m.get("role") == "user"]
        if not users or not isinstance(users[-1].get("content"), list):
            return []
        return [
            {**b, "text": "\n".join(_block_texts(b.get("content")))}
            for b in users[-1]["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]


def _block_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, str):
                out.append(b)
            elif isinstance(b, dict):
                if isinstance(b.get("text"), str):
                    out.append(b["text"])
                if b.get("type") == "tool_result":
                    out.extend(_block_texts(b.get("content")))
                if b.get("type") == "tool_use":
                    out.append(json.dumps(b.get("input", {})))
    return out


def has_tool_result(body: dict[str, Any]) -> bool:
    """Whether the request's last user message carries a tool_result (a step function helper)."""
    return bool(Logged(0, "POST", "/v1/messages", body, "main").last_user_tool_results())


SIDE_MAX_TOKENS = 512  # quota probes ask for 1 token, titles for a few dozen; the conversation for 32k+


def is_main(body: Any) -> bool:
    """The conversation itself, not a side request: Claude Code sends its tools with every turn of
    the conversation and a large max_tokens; side requests (titles, quota checks on a small model)
    carry no tools or ask for a few tokens."""
    if not isinstance(body, dict) or not body.get("tools"):
        return False
    try:
        return int(body.get("max_tokens") or 0) > SIDE_MAX_TOKENS
    except (TypeError, ValueError):
        return True


class FakeAnthropic:
    """The server. Use as a context manager, or start() / stop()."""

    def __init__(self, log_path: Path | None = None, *, default: str = "OK.", side_text: str = "Notes"):
        self.log_path = log_path
        self.default = default
        self.side_text = side_text
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._log: list[Logged] = []
        self._steps: list[Step] = []
        self._pending: dict[str, ToolUse] = {}  # tool_use id -> its step, until the result is back
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        handler = type("Handler", (_Handler,), {"api": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- the script ------------------------------------------------------------------------------

    def script(self, steps: list[Step]) -> None:
        """Replace the script (and forget unanswered tool_uses)."""
        with self._lock:
            self._steps = list(steps)
            self._pending.clear()

    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) + len(self._pending)

    # -- the log ---------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Logged]:
        with self._lock:
            return list(self._log)

    def mark(self) -> int:
        with self._lock:
            return len(self._log)

    def since(self, mark: int) -> list[Logged]:
        with self._lock:
            return self._log[mark:]

    def wait_for(self, predicate: Callable[[list[Logged]], bool], timeout: float) -> bool:
        """Block until predicate(log) holds (checked on every new request) or timeout."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(list(self._log)):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def _record(self, entry: Logged) -> None:
        with self._changed:
            self._log.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
            self._changed.notify_all()

    # -- answering -------------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[str, Reply]:
        """(kind, reply) for one POST /v1/messages."""
        if not is_main(body):
            return "side", Text(self.side_text)
        with self._lock:
            return "main", self._next_main(body)

    def _next_main(self, body: dict[str, Any]) -> Reply:
        probe = Logged(0, "POST", "/v1/messages", body, "main")
        for result in probe.last_user_tool_results():
            step = self._pending.pop(result.get("tool_use_id", ""), None)
            if step is not None:
                return Text(step.then)
        while self._steps:
            step = self._steps[0]
            if isinstance(step, (str, Text)):
                self._steps.pop(0)
                return Text(step) if isinstance(step, str) else step
            if isinstance(step, ToolUse):
                self._steps.pop(0)
                use = step if step.id else ToolUse(step.name, step.input, step.then, self._tool_id())
                self._pending[use.id] = use
                return use
            got = step(body)
            if got is None:  # not this request's step: drop it, try the next
                self._steps.pop(0)
                continue
            if isinstance(got, ToolUse):  # the function stays at the head and sees the tool_result
                return got if got.id else ToolUse(got.name, got.input, got.then, self._tool_id())
            self._steps.pop(0)  # a text ends the turn, and the step
            return Text(got) if isinstance(got, str) else got
        return Text(self.default)

    def _tool_id(self) -> str:
        return f"toolu_fake{next(self._ids):04d}"

    def next_message_id(self) -> str:
        return f"msg_fake{next(self._ids):06d}"


class _Handler(BaseHTTPRequestHandler):
    api: FakeAnthropic
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK expects; every reply has a Content-Length

    def log_message(self, format: str, *args: Any) -> None:  # the JSONL log is enough
        pass

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _headers(self) -> dict[str, str]:
        keep = ("anthropic-beta", "anthropic-version", "user-agent", "x-app", "content-type")
        return {k.lower(): v for k, v in self.headers.items() if k.lower() in keep}

    def _send(self, status: int, payload: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_fake{int(time.monotonic() * 1000)}")
        if content_type == "text/event-stream":
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def _log(self, body: Any, kind: str, reply: Any) -> None:
        api = self.api
        with api._lock:
            seq = len(api._log)
        api._record(Logged(seq, self.command, self.path, body, kind, reply, self._headers()))

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path.rstrip("/") == "/v1/models":
            data = [
                {"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"} for m in MODEL_IDS
            ]
            reply: Any = {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
            self._log(None, "other", reply)
            self._json(200, reply)
        elif path.startswith("/v1/models/"):
            mid = path.rsplit("/", 1)[1]
            reply = {"type": "model", "id": mid, "display_name": mid, "created_at": "2025-01-01T00:00:00Z"}
            self._log(None, "other", reply)
            self._json(200, reply)
        else:
            self._not_found(None)

    def do_HEAD(self) -> None:
        self._log(None, "other", 200)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._body()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/messages/count_tokens":
            reply = {"input_tokens": _estimate_tokens(body)}
            self._log(body, "other", reply)
            self._json(200, reply)
            return
        if path != "/v1/messages" or not isinstance(body, dict):
            self._not_found(body)
            return
        kind, step = self.api.answer(body)
        message = _message(self.api.next_message_id(), body, step)
        self._log(body, kind, {"content": message["content"], "stop_reason": message["stop_reason"]})
        if body.get("stream"):
            self._send(200, _sse(message), "text/event-stream")
        else:
            self._json(200, message)

    def _not_found(self, body: Any) -> None:
        reply = {"type": "error", "error": {"type": "not_found_error", "message": f"fake API: no {self.path}"}}
        self._log(body, "other", {"status": 404})
        self._json(404, reply)


def _estimate_tokens(body: Any) -> int:
    return max(1, len(json.dumps(body)) // 4) if body is not None else 1


def _message(mid: str, body: dict[str, Any], step: Reply) -> dict[str, Any]:
    if isinstance(step, ToolUse):
        content: list[dict[str, Any]] = [{"type": "tool_use", "id": step.id, "name": step.name, "input": step.input}]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": step.text}]
        stop = "end_turn"
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or MODEL_IDS[0],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": _estimate_tokens(body.get("messages")),
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "service_tier": "standard",
        },
    }


def _sse(message: dict[str, Any]) -> bytes:
    """The event sequence the real API streams for one message."""

    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = {**message, "content": [], "stop_reason": None, "usage": {**message["usage"], "output_tokens": 1}}
    parts = [event("message_start", {"type": "message_start", "message": start}), event("ping", {"type": "ping"})]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            parts.append(
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                )
            )
            parts.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}},
                )
            )
        else:
            parts.append(
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}},
                )
            )
            parts.append(
                event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    },
                )
            )
        parts.append(event("content_block_stop", {"type": "content_block_stop", "index": i}))
    parts.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    parts.append(event("message_stop", {"type": "message_stop"}))
    return "".join(parts).encode()
