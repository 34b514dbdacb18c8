"""Optional LLM extraction against a fake provider on localhost (never the internet)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from memory import llm
from memory.errors import ConfigError
from memory.extraction import harvest, ingest
from memory.extraction import llm as extraction_llm

TURNS = [
    {
        "role": "user",
        "kind": "text",
        "text": "Always use uv. The deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789.",
        "session_id": "s1",
    },
    {"role": "assistant", "kind": "text", "text": "Noted.", "session_id": "s1"},
    {"role": "tool", "kind": "tool_error", "tool": "Bash", "input": "pip install x", "error": "pip: not allowed"},
]
GOOD = {
    "memories": [
        {
            "content": "Always use uv, never pip.",
            "layer": "fact",
            "category": "rule",
            "importance": 4,
            "subject": "python package manager",
            "attribute": "choice",
            "value": "uv",
            "entities": [{"name": "uv", "kind": "technology"}],
        },
        {
            "content": "We chose FastAPI because it is async.",
            "layer": "decision",
            "category": "decision",
            "importance": 4,
            "rationale": "it is async",
        },
    ]
}


class FakeServer:
    """Answers /chat/completions and /v1/messages with queued replies; records every request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.replies: list[tuple[int, object]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append(
                    {"path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}}
                )
                status, payload = server.replies.pop(0) if server.replies else (500, {"error": "no reply queued"})
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def openai(self, content: object, tokens: int = 120, status: int = 200) -> None:
        text = content if isinstance(content, str) else json.dumps(content)
        self.replies.append(
            (
                status,
                {
                    "choices": [{"message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": tokens - 20, "completion_tokens": 20, "total_tokens": tokens},
                },
            )
        )

    def anthropic(self, content: object, tokens: int = 150) -> None:
        text = content if isinstance(content, str) else json.dumps(content)
        self.replies.append(
            (
                200,
                {
                    "content": [{"type": "text", "text": text}],
                    "usage": {"input_tokens": tokens - 30, "output_tokens": 30},
                },
            )
        )

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.close()


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def __call__(self) -> float:
        return self.now


def guard(store=None, **kw) -> llm.Guard:
    return llm.Guard(store.conn if store else None, daily_tokens=kw.pop("daily_tokens", 100_000), **kw)


def test_openai_compatible_provider_extracts_validated_memories(server, store):
    server.openai(GOOD, tokens=321)
    provider = llm.OpenAICompatible(server.url + "/v1", api_key="local-key")
    g = guard(store)
    cands = extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="qwen2.5")
    assert [(c.layer, c.content) for c in cands] == [
        ("fact", "Always use uv, never pip."),
        ("decision", "We chose FastAPI because it is async."),
    ]
    assert cands[0].why == "llm" and (cands[0].subject, cands[0].attribute, cands[0].value) == (
        "python package manager",
        "choice",
        "uv",
    )
    assert cands[1].metadata["rationale"] == "it is async"
    [req] = server.requests
    assert req["path"] == "/v1/chat/completions" and req["body"]["model"] == "qwen2.5"
    assert req["headers"]["authorization"] == "Bearer local-key"
    assert g.used_today() == 321
    report = ingest.ingest(store, cands)
    assert len(report.stored) == 2


def test_anthropic_provider_sends_system_separately_with_version_header(server):
    server.anthropic(GOOD)
    provider = llm.AnthropicMessages(server.url, api_key="sk-test")
    cands = extraction_llm.llm_extract(TURNS, provider, guard(), scope="/p", model="claude-haiku")
    assert len(cands) == 2
    [req] = server.requests
    assert req["path"] == "/v1/messages"
    assert req["headers"]["x-api-key"] == "sk-test" and req["headers"]["anthropic-version"] == "2023-06-01"
    assert "long-term memories" in req["body"]["system"]
    assert [m["role"] for m in req["body"]["messages"]] == ["user"]


def test_secrets_are_redacted_before_the_transcript_leaves_the_machine(server):
    server.openai(GOOD)
    extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), guard(), scope="/p", model="m")
    sent = json.dumps(server.requests[0]["body"])
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in sent and "REDACTED" in sent
    assert "TOOL FAILED: Bash `pip install x`" in sent


@pytest.mark.parametrize(
    "answer",
    [
        "Sure! Here are the memories: uv",
        {"memories": "uv"},
        {"memories": [{"content": "ok", "layer": "opinion"}]},
        {"memories": [GOOD["memories"][0], {"content": "", "layer": "fact"}]},
        {"memories": [{"content": "x", "layer": "fact", "importance": 9}]},
        {"memories": [{"content": "x", "layer": "fact", "entities": ["uv"]}]},
    ],
)
def test_malformed_answers_are_rejected_whole_and_count_as_failures(server, store, answer):
    server.openai(answer)
    g = guard(store)
    with pytest.raises(llm.InvalidOutput):
        extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), g, scope="/p", model="m")
    assert store.count() == 0
    assert json.loads(store.conn.execute("SELECT value FROM meta WHERE key = 'llm_breaker'").fetchone()[0]) == {
        "failures": 1
    }


def test_a_fenced_json_answer_is_accepted(server):
    server.openai("```json\n" + json.dumps(GOOD) + "\n```")
    assert len(extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), guard(), scope="/p", model="m")) == 2


def test_daily_budget_stops_calls_before_they_are_made(server, store):
    clock = Clock()
    g = guard(store, daily_tokens=2_000, clock=clock)
    server.openai(GOOD, tokens=1_500)
    extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), g, scope="/p", model="m", max_tokens=256)
    with pytest.raises(llm.BudgetExceeded, match="llm_daily_token_budget"):
        extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), g, scope="/p", model="m", max_tokens=256)
    assert len(server.requests) == 1
    clock.now += 86_400  # a new UTC day, a new budget
    server.openai(GOOD, tokens=100)
    assert extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), g, scope="/p", model="m", max_tokens=256)


def test_budget_is_shared_through_the_database(server, store):
    server.openai(GOOD, tokens=700)
    extraction_llm.llm_extract(TURNS, llm.OpenAICompatible(server.url), guard(store), scope="/p", model="m")
    assert guard(store).used_today() == 700  # another process's guard sees it


def test_circuit_breaker_opens_after_repeated_failures_and_retries_after_cooldown(server, store):
    clock = Clock()
    g = guard(store, failures=3, cooldown_s=300, clock=clock)
    provider = llm.OpenAICompatible(server.url)
    for _ in range(3):
        server.replies.append((500, {"error": "overloaded"}))
        with pytest.raises(llm.LLMError, match="HTTP 500"):
            extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="m")
    with pytest.raises(llm.BreakerOpen, match="retries in 300 s"):
        extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="m")
    assert len(server.requests) == 3
    clock.now += 301
    server.openai(GOOD)
    assert len(extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="m")) == 2
    assert g._get("llm_breaker") == "{}"


def test_unreachable_endpoint_is_an_llm_error_not_a_crash():
    provider = llm.OpenAICompatible("http://127.0.0.1:9", timeout=2)
    g = guard()
    with pytest.raises(llm.LLMError, match="cannot reach"):
        extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="m")


def test_provider_is_off_by_default_and_checked_when_configured():
    off = SimpleNamespace(llm_provider="")
    assert llm.provider_from_config(off) is None
    ollama = SimpleNamespace(llm_provider="openai", llm_base_url="http://localhost:11434/v1", llm_api_key_env="")
    assert isinstance(llm.provider_from_config(ollama, env={}), llm.OpenAICompatible)
    with pytest.raises(ConfigError, match="API key"):
        llm.provider_from_config(
            SimpleNamespace(llm_provider="anthropic", llm_base_url="", llm_api_key_env="MY_KEY"), env={}
        )
    with pytest.raises(ConfigError, match="llm_base_url"):
        llm.provider_from_config(SimpleNamespace(llm_provider="openai", llm_base_url="", llm_api_key_env=""), env={})


def test_nothing_to_send_makes_no_call(server):
    turns = [{"role": "tool", "kind": "tool_result", "tool": "Bash", "input": "ls", "text": "a b"}]
    assert extraction_llm.llm_extract(turns, llm.OpenAICompatible(server.url), guard(), scope="/p", model="m") == []
    assert server.requests == []


def test_harvest_adds_llm_memories_when_configured_and_goes_on_without_them_when_failing(server, tmp_path):
    from pathlib import Path

    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import Store

    session = Path(__file__).resolve().parent / "data" / "sessions" / "en06_tidy_rust.jsonl"
    cfg = config_mod.load(home=tmp_path, env={})
    on = SimpleNamespace(
        **{
            **{f: getattr(cfg, f) for f in cfg.__dataclass_fields__},
            "llm_provider": "openai",
            "llm_base_url": server.url,
            "llm_api_key_env": "",
            "llm_model": "m",
        }
    )
    with Store.open(cfg, HashEmbedder(64)) as store:
        store.config = on
        server.openai(
            {
                "memories": [
                    {
                        "content": "Release builds strip debug symbols to keep the binary small.",
                        "layer": "fact",
                        "category": "config",
                        "importance": 3,
                    }
                ]
            }
        )
        result = harvest.harvest(store, str(session))
        assert any(i["content"].startswith("Release builds strip") for i in result["items"])
        assert len(result["stored"]) >= 4
        store.conn.execute("DELETE FROM transcript_cursors")
        server.replies.append((500, {"error": "down"}))
        again = harvest.harvest(store, str(session))  # the LLM fails: heuristics still run, nothing breaks
        assert again["stored"] == [] and len(server.requests) == 2
