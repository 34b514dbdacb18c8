"""The scripted Messages API on its own (no Claude Code needed): streaming shape, the script, the log."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_api import FakeAnthropic, Text, ToolUse, has_tool_result

TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


@pytest.fixture
def api(tmp_path: Path) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(tmp_path / "api.jsonl") as server:
        yield server


def post(api: FakeAnthropic, path: str, body: Any) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        api.url + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json", "anthropic-version": "2023-06-01"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def conversation(*turns: Any, stream: bool = False) -> dict[str, Any]:
    return {
        "model": "claude-opus-5-5",
        "max_tokens": 1000,
        "stream": stream,
        "tools": TOOLS,
        "messages": [{"role": "user", "content": "hi"}, *turns],
    }


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().strip().split("\n\n"):
        name, data = chunk.split("\n")
        out.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def test_streamed_text_follows_the_real_event_sequence(api: FakeAnthropic) -> None:
    api.script(["Hello."])
    status, ctype, raw = post(api, "/v1/messages?beta=true", conversation(stream=True))
    assert status == 200 and ctype == "text/event-stream"
    evs = events(raw)
    assert [n for n, _ in evs] == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert all(d["type"] == n for n, d in evs)
    assert evs[3][1]["delta"] == {"type": "text_delta", "text": "Hello."}
    assert evs[5][1]["delta"]["stop_reason"] == "end_turn"


def test_a_tool_use_step_streams_its_input_and_answers_its_tool_result_with_the_final_text(api: FakeAnthropic) -> None:
    api.script([ToolUse("mcp__maple__memory_search", {"query": "port"}, then="It is 6543."), "next turn"])
    _, _, raw = post(api, "/v1/messages", conversation(stream=True))
    evs = events(raw)
    start = evs[2][1]["content_block"]
    assert start["type"] == "tool_use" and start["name"] == "mcp__maple__memory_search" and start["input"] == {}
    assert json.loads(evs[3][1]["delta"]["partial_json"]) == {"query": "port"}
    assert evs[5][1]["delta"]["stop_reason"] == "tool_use"
    back = conversation(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": start["id"], "name": start["name"], "input": {"query": "port"}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": start["id"], "content": [{"type": "text", "text": "6543"}]}
            ],
        },
    )
    _, _, raw = post(api, "/v1/messages", back)
    assert json.loads(raw)["content"] == [{"type": "text", "text": "It is 6543."}]
    _, _, raw = post(api, "/v1/messages", conversation())
    assert json.loads(raw)["content"][0]["text"] == "next turn"
    assert api.requests[1].tool_results()[0]["text"] == "6543"


def test_a_function_step_answers_a_whole_turn(api: FakeAnthropic) -> None:
    api.script([lambda req: Text("done") if has_tool_result(req) else ToolUse("Bash", {"command": "ls"}), "after"])
    first = json.loads(post(api, "/v1/messages", conversation())[2])
    use = first["content"][0]
    assert use["type"] == "tool_use" and use["input"] == {"command": "ls"}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"], "content": "a b"}]}
    second = json.loads(post(api, "/v1/messages", conversation({"role": "assistant", "content": [use]}, result))[2])
    assert second["content"][0]["text"] == "done"
    assert json.loads(post(api, "/v1/messages", conversation())[2])["content"][0]["text"] == "after"


def test_side_requests_get_short_text_and_leave_the_script_alone(api: FakeAnthropic) -> None:
    api.script(["scripted"])
    side = {
        "model": "claude-haiku-4-5",
        "max_tokens": 32,
        "system": "Write a title",
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert json.loads(post(api, "/v1/messages", side)[2])["content"][0]["text"] == api.side_text
    quota = {**conversation(), "model": "claude-haiku-4-5", "max_tokens": 1}
    assert json.loads(post(api, "/v1/messages", quota)[2])["content"][0]["text"] == api.side_text
    assert json.loads(post(api, "/v1/messages", conversation())[2])["content"][0]["text"] == "scripted"
    assert json.loads(post(api, "/v1/messages", conversation())[2])["content"][0]["text"] == api.default
    assert [r.kind for r in api.requests] == ["side", "side", "main", "main"]


def test_every_request_is_logged_in_memory_and_as_jsonl(api: FakeAnthropic) -> None:
    assert post(api, "/v1/messages/count_tokens", {"messages": []})[0] == 200
    assert post(api, "/v1/unknown", {"x": 1})[0] == 404
    with urllib.request.urlopen(api.url + "/v1/models", timeout=30) as r:
        assert json.loads(r.read())["data"]
    logged = [json.loads(line) for line in api.log_path.read_text().splitlines()]  # type: ignore[union-attr]
    assert [(e["method"], e["path"], e["kind"]) for e in logged] == [
        ("POST", "/v1/messages/count_tokens", "other"),
        ("POST", "/v1/unknown", "other"),
        ("GET", "/v1/models", "other"),
    ]
    assert logged[1]["body"] == {"x": 1} and logged[1]["reply"] == {"status": 404}
    assert [r.path for r in api.requests] == [e["path"] for e in logged]
