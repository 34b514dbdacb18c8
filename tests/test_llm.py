"""Optional LLM extraction against a fake provider on localhost (never the internet)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
        self.during: Callable[[], None] | None = None  # runs while a request is being answered
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                server.requests.append(
                    {"path": self.path, "body": body, "headers": {k.lower(): v for k, v in self.headers.items()}}
                )
                if server.during is not None:
                    server.during()
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
    on = dataclasses.replace(cfg, llm_provider="openai", llm_base_url=server.url, llm_api_key_env="", llm_model="m")
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


# -- the claude-cli provider (the real CLI is driven in tests/e2e/test_claude_cli_provider.py) ----

ROOT = Path(__file__).resolve().parent.parent
CLAUDE_RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": json.dumps(GOOD),
    "session_id": "9c9ecf36-54f6-4070-a970-55b3ea92a91d",
    "usage": {
        "input_tokens": 297,
        "cache_creation_input_tokens": 40,
        "cache_read_input_tokens": 1000,
        "output_tokens": 55,
    },
}


def executable(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_claude_cli_is_found_on_path_or_at_the_configured_path_and_says_what_to_do_when_missing(tmp_path):
    on_path = executable(tmp_path / "bin", "claude", "exit 0\n")
    config = SimpleNamespace(llm_provider="claude-cli", llm_claude_path="", llm_timeout_s=45.0, llm_api_key_env="")
    provider = llm.provider_from_config(config, env={"PATH": str(on_path.parent)})
    assert isinstance(provider, llm.ClaudeCLI) and provider.path == str(on_path) and provider.timeout == 45.0
    elsewhere = executable(tmp_path / "opt", "claude-2.1", "exit 0\n")
    config.llm_claude_path = str(elsewhere)
    assert llm.provider_from_config(config, env={"PATH": ""}).path == str(elsewhere)
    config.llm_claude_path = ""
    with pytest.raises(ConfigError, match="not on PATH; set llm_claude_path"):
        llm.provider_from_config(config, env={"PATH": str(tmp_path / "empty")})
    config.llm_claude_path = str(tmp_path / "nowhere" / "claude")
    with pytest.raises(ConfigError, match="is not an executable file"):
        llm.provider_from_config(config, env={"PATH": ""})


def test_claude_cli_is_a_provider_the_configuration_accepts(home):
    from memory import config as config_mod

    assert config_mod.load(home=home, env={}, llm_provider="claude-cli").llm_provider == "claude-cli"
    with pytest.raises(ConfigError, match="'claude-cli'"):
        config_mod.load(home=home, env={}, llm_provider="claude")


def test_the_headless_run_keeps_tools_mcp_servers_hooks_and_its_transcript_out():
    cmd = llm.ClaudeCLI("/usr/bin/claude").command("SYSTEM PROMPT", "")
    assert cmd[:4] == ["/usr/bin/claude", "-p", "--output-format", "json"]
    flags = dict(zip(cmd, cmd[1:]))
    assert flags["--model"] == "haiku"  # Claude Code's small model unless llm_model names one
    assert flags["--system-prompt"] == "SYSTEM PROMPT"
    assert flags["--tools"] == ""
    assert json.loads(flags["--mcp-config"]) == {"mcpServers": {}} and "--strict-mcp-config" in cmd
    assert json.loads(flags["--settings"]) == {"disableAllHooks": True}
    assert "--no-session-persistence" in cmd and "--disable-slash-commands" in cmd
    assert llm.ClaudeCLI("claude").command("", "claude-haiku-4-5")[5] == "claude-haiku-4-5"


def test_the_headless_run_carries_the_guard_and_none_of_the_calling_sessions_variables():
    from hooks import common

    parent = {
        "HOME": "/home/dev",
        "PATH": "/usr/bin",
        "ANTHROPIC_BASE_URL": "https://proxy.example.invalid",
        "CLAUDE_CONFIG_DIR": "/home/dev/.claude-work",
        "CLAUDECODE": "1",
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_CODE_SESSION_ID": "e50d120a",
        "CLAUDE_CODE_MESSAGING_TOKEN": "b7124171eed6a312",
        "CLAUDE_CODE_CHILD_SESSION": "1",
        "CLAUDE_PROJECT_DIR": "/home/dev/code/app",
        "CLAUDE_ENV_FILE": "/home/dev/.claude/session-env/x.sh",
        "CLAUDE_PID": "28839",
    }
    env = llm.ClaudeCLI("claude", env=parent).environment(max_tokens=700)
    assert common.LLM_CHILD_ENV == llm.CHILD_ENV and env[llm.CHILD_ENV] == "1"
    assert {k: env[k] for k in ("HOME", "PATH", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR")} == {
        k: parent[k] for k in ("HOME", "PATH", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR")
    }
    assert not {k for k in env if k.startswith(("CLAUDECODE", "CLAUDE_CODE_SESSION", "CLAUDE_CODE_MESSAGING"))}
    assert not {"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_CHILD_SESSION", "CLAUDE_PROJECT_DIR", "CLAUDE_PID"} & set(env)
    assert env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "700" and env["CLAUDE_CODE_DISABLE_CLAUDE_MDS"] == "1"


def test_the_json_result_gives_the_answer_and_counts_input_output_and_cache_tokens():
    reply = llm._parse_claude_result(json.dumps(CLAUDE_RESULT), "", 0)
    assert json.loads(reply.text) == GOOD and reply.tokens == 297 + 40 + 1000 + 55


@pytest.mark.parametrize(
    ("out", "code", "says"),
    [
        (
            {**CLAUDE_RESULT, "is_error": True, "result": "Invalid API key · Please run /login"},
            1,
            "Invalid API key · Please run /login; check that `claude -p hello` works",
        ),
        ({**CLAUDE_RESULT, "subtype": "error_max_turns", "result": None}, 0, "error_max_turns"),
        ("Error: unknown option '--strict-mcp-config'", 1, "without a JSON result"),
        ({**CLAUDE_RESULT, "result": {"memories": []}}, 0, "no text 'result'"),
    ],
)
def test_a_failed_headless_run_is_an_llm_error_that_says_what_to_check(out, code, says):
    text = out if isinstance(out, str) else json.dumps(out)
    with pytest.raises(llm.LLMError, match=says.replace("(", r"\(").replace("?", r"\?")):
        llm._parse_claude_result(text, "", code)


def test_the_session_goes_on_standard_input_and_the_run_starts_in_an_empty_folder(tmp_path):
    # A stand-in `claude` that records what it was given: the session must not be on the command
    # line (other users can read that), and the run must not start in the user's project.
    seen = tmp_path / "seen"
    fake = executable(
        tmp_path / "bin",
        "claude",
        f'cat > "{seen}.stdin"; pwd > "{seen}.cwd"; ls -A > "{seen}.ls"; printf "%s" "$*" > "{seen}.args"\n'
        f"echo '{json.dumps(CLAUDE_RESULT)}'\n",
    )
    provider = llm.ClaudeCLI(str(fake), timeout=60, env={"PATH": os.environ["PATH"]})
    g = guard()
    cands = extraction_llm.llm_extract(TURNS, provider, g, scope="/p", model="")
    assert [c.content for c in cands] == ["Always use uv, never pip.", "We chose FastAPI because it is async."]
    assert g.used_today() == 297 + 40 + 1000 + 55
    stdin = Path(f"{seen}.stdin").read_text()
    assert "Always use uv" in stdin and "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in stdin
    assert "Always use uv" not in Path(f"{seen}.args").read_text()
    assert "maple-llm-" in Path(f"{seen}.cwd").read_text() and Path(f"{seen}.ls").read_text() == ""
    assert not Path(Path(f"{seen}.cwd").read_text().strip()).exists()  # removed afterwards


def test_a_headless_run_past_the_timeout_is_killed_with_what_it_started_and_counts_as_a_failure(tmp_path, store):
    pidfile = tmp_path / "grandchild.pid"
    fake = executable(
        tmp_path / "bin", "claude", f'sleep 60 >/dev/null 2>&1 </dev/null & echo $! > "{pidfile}"; wait\n'
    )
    g = guard(store)
    with pytest.raises(llm.LLMError, match="did not answer in 0.5 s; raise llm_timeout_s"):
        extraction_llm.llm_extract(TURNS, llm.ClaudeCLI(str(fake), timeout=0.5), g, scope="/p", model="")
    status = Path(f"/proc/{int(pidfile.read_text())}/status")

    def dead() -> bool:  # gone, or dead and not yet reaped
        try:
            return "State:\tZ" in status.read_text()
        except FileNotFoundError:
            return True

    # The kill is sent before the error is raised; a loaded machine may take a moment to tear the
    # process down (CI once saw it still running at the first look). A sleep 60 left alive never is.
    deadline = time.monotonic() + 5
    while not dead() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert dead()
    assert json.loads(g._get("llm_breaker")) == {"failures": 1}


# -- the guard in MAPLE's hooks ------------------------------------------------------------------


def test_maples_hooks_do_nothing_inside_its_own_headless_run(tmp_path, home, store):
    transcript = tmp_path / "child.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": "Always use uv."}}) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_LLM_CHILD="1")
    payload = {"session_id": "child", "transcript_path": str(transcript), "cwd": str(tmp_path), "prompt": "hi"}
    for event in ("session-start", "user-prompt-submit", "stop", "session-end"):
        done = subprocess.run(
            [sys.executable, str(ROOT / "hooks" / "run.py"), event],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            cwd=str(tmp_path),
            timeout=120,
        )
        assert done.returncode == 0 and done.stdout == b"", done.stderr
    assert not (home / "harvest-spool.jsonl").exists()
    log = (home / "hooks.log").read_text()
    for name in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert f"{name} skipped: {name} inside MAPLE's own LLM extraction run (MAPLE_LLM_CHILD)" in log


# -- where the LLM is asked ----------------------------------------------------------------------


def llm_store(tmp_path: Path, url: str, **settings):
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import Store

    cfg = config_mod.load(
        home=tmp_path / "h", env={}, llm_provider="openai", llm_base_url=url, llm_model="m", **settings
    )
    return Store.open(cfg, HashEmbedder(64))


def test_the_harvest_asks_the_llm_before_it_takes_the_write_lock(server, tmp_path):
    # claude -p takes seconds: a harvest that held the write lock meanwhile would make a new
    # session's brief or a memory_store call wait and fail.
    session = ROOT / "tests" / "data" / "sessions" / "en06_tidy_rust.jsonl"
    writable: list[bool] = []
    with llm_store(tmp_path, server.url) as store:
        db_path = store.config.db_path

        def try_to_write() -> None:
            # From another process: SQLite's file locks do not separate two connections of one process.
            probe = "import sqlite3, sys; sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None).execute('BEGIN IMMEDIATE')"
            done = subprocess.run([sys.executable, "-c", probe, str(db_path)], capture_output=True, timeout=60)
            writable.append(done.returncode == 0)

        server.during = try_to_write
        server.openai({"memories": [{"content": "Release builds strip debug symbols.", "layer": "fact"}]})
        result = harvest.harvest(store, str(session))
    assert writable == [True]
    assert any(i["content"] == "Release builds strip debug symbols." for i in result["items"])


def test_the_users_redact_patterns_apply_before_the_session_leaves_the_machine(server, tmp_path):
    session = tmp_path / "s.jsonl"
    line = {"type": "user", "message": {"role": "user", "content": "Always sign releases with ACME-0123456789ABCDEF."}}
    session.write_text(json.dumps(line) + "\n")
    with llm_store(tmp_path, server.url, redact_patterns=[r"ACME-[0-9A-F]{16}"]) as store:
        server.openai({"memories": []})
        harvest.harvest(store, str(session))
    [req] = server.requests
    assert "ACME-0123456789ABCDEF" not in json.dumps(req["body"]) and "Always sign releases with" in json.dumps(
        req["body"]
    )


def test_extract_no_llm_leaves_the_configured_llm_out(server, tmp_path):
    session = ROOT / "tests" / "data" / "sessions" / "en06_tidy_rust.jsonl"
    with llm_store(tmp_path, server.url) as store:
        out = harvest.extract_file(store, str(session), fallback="/p", llm=False)
        assert server.requests == [] and out["candidates"]
        server.openai({"memories": [{"content": "Release builds strip debug symbols.", "layer": "fact"}]})
        out = harvest.extract_file(store, str(session), fallback="/p")
        assert len(server.requests) == 1 and "Release builds strip debug symbols." in [
            c["content"] for c in out["candidates"]
        ]


def test_the_extract_command_takes_no_llm(server, tmp_path):
    home = tmp_path / "cli-home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"llm_provider": "openai", "llm_base_url": server.url}))
    session = ROOT / "tests" / "data" / "sessions" / "en06_tidy_rust.jsonl"
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_HOOK_RESIDENT_MINUTES="0", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "memory.cli", "--json", "extract", "--no-llm", str(session)],
        capture_output=True,
        env=env,
        cwd=str(tmp_path),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert server.requests == [] and json.loads(done.stdout)["candidates"]
