"""The claude-cli LLM provider (memory.llm.ClaudeCLI) through the real Claude Code CLI (pinned
2.1.332), offline, against the scripted Messages API on 127.0.0.1.

MAPLE runs `claude -p` itself here, as a user's machine would: `maple-memory extract` or the
hooks' harvest start it, it calls the fake API, and its JSON result comes back to MAPLE. Every
test checks what the API RECEIVED (the request the headless run made) and what MAPLE stored.

How Claude Code 2.1.332 behaved in these runs (what memory.llm.ClaudeCLI relies on):
- The headless run makes one POST /v1/messages?beta=true, with no tools (so fake_api counts it as
  a side request; the tests below answer it themselves), the model `--model` named (the alias
  `haiku` becomes claude-haiku-5-5), max_tokens from CLAUDE_CODE_MAX_OUTPUT_TOKENS, the system
  prompt MAPLE gave after Claude Code's one-line preamble, and the session as the user message,
  followed by a system-role message about the environment (the empty folder it runs in).
- `--settings '{"hooks": {}}'` does not keep the user's hooks out (hooks merge across sources);
  `--settings '{"disableAllHooks": true}'`, `--setting-sources ""` and `--safe-mode` each do.
  `--strict-mcp-config` keeps the user's and the project's MCP servers out, and
  `--no-session-persistence` writes no transcript.
- The JSON result carries `result` (the answer text), `is_error`, `subtype` and `usage`
  (input, output and cache tokens): the budget counts those.
- A run takes about 1-2 s on two cores.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from claude_harness import RUN_PY, ClaudeCode, hook_contexts, poll, skip_reason
from fake_api import Logged, Text, _estimate_tokens

from memory.extraction.llm import SYSTEM

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
OWN_SECRET = "ACME-0123456789ABCDEF"  # a format only the user's redact_patterns know
OWN_PATTERN = r"ACME-[0-9A-F]{16}"
SESSION_TEXT = [
    ("user", f"Always use uv, never pip. The deploy token is {SECRET}, the signing key {OWN_SECRET}."),
    ("assistant", "Understood: uv for everything."),
    ("user", "The nightly export job reads from the replica at replica.internal:5432."),
]
LLM_MEMORY = "The nightly export job reads from the read replica, not the primary."
GOOD = {
    "memories": [
        {
            "content": LLM_MEMORY,
            "layer": "fact",
            "category": "config",
            "importance": 3,
            "subject": "nightly export job",
            "attribute": "source",
            "value": "read replica",
        }
    ]
}
SMALL_MODEL = "claude-haiku-4-5-20251001"
LLM_TIMEOUT = 120.0  # seconds the drain waits for the headless run; 1-2 s on idle cores
HARVEST_TIMEOUT = 180.0


class Extractions:
    """Answers the headless runs' requests (those whose system prompt is MAPLE's extraction
    prompt) from a queue of texts, and keeps them; every other request goes on as before."""

    def __init__(self, cc: ClaudeCode):
        self.api = cc.api
        self.answers: list[str] = []
        self.bodies: list[dict[str, Any]] = []
        answer = cc.api.answer

        def answer_extraction(body: dict[str, Any]) -> tuple[str, Text]:
            probe = Logged(0, "POST", "/v1/messages", body, "llm")
            if SYSTEM[:60] not in probe.system_text():
                return answer(body)
            self.bodies.append(body)
            return "llm", Text(self.answers.pop(0) if self.answers else '{"memories": []}')

        cc.api.answer = answer_extraction  # type: ignore[method-assign]

    def queue(self, *answers: Any) -> None:
        self.answers += [a if isinstance(a, str) else json.dumps(a) for a in answers]

    def requests(self) -> list[Logged]:
        return [r for r in self.api.requests if r.kind == "llm"]


@pytest.fixture
def extractions(claude_code: ClaudeCode) -> Iterator[Extractions]:
    yield Extractions(claude_code)


def configure(cc: ClaudeCode, **settings: Any) -> None:
    """MAPLE's config.json in the world's MAPLE home: the claude-cli provider plus `settings`."""
    cc.maple_home.mkdir(parents=True, exist_ok=True)
    values = {"llm_provider": "claude-cli", "llm_timeout_s": LLM_TIMEOUT, **settings}
    (cc.maple_home / "config.json").write_text(json.dumps(values))


def transcript(cc: ClaudeCode, name: str, turns: list[tuple[str, str]] = SESSION_TEXT) -> Path:
    """A Claude Code transcript (the real JSONL shape) of `turns`, in the world's project."""
    lines = []
    for n, (role, text) in enumerate(turns):
        line: dict[str, Any] = {
            "type": role,
            "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
            "uuid": f"{name}-{n}",
            "parentUuid": f"{name}-{n - 1}" if n else None,
            "sessionId": f"session-{name}",
            "timestamp": f"2026-11-0{n + 1}T10:00:00Z",
            "cwd": str(cc.project),
            "isSidechain": False,
        }
        if role == "user":
            line["origin"] = {"kind": "human"}
        lines.append(json.dumps(line))
    path = cc.base / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def extract(cc: ClaudeCode, path: Path, *flags: str) -> dict[str, Any]:
    return json.loads(cc.maple("--json", "extract", str(path), *flags).stdout)


def meta(cc: ClaudeCode, prefix: str) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{cc.maple_home / 'memory.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT key, value FROM meta WHERE key LIKE ?", (prefix + "%",)).fetchall()
    finally:
        conn.close()
    return dict(rows)


def _usage(body: dict[str, Any]) -> int:
    """The tokens the fake API reported for a request with this body (its usage: input + output)."""
    return _estimate_tokens(body.get("messages")) + 5


def user_message(request: Logged) -> str:
    return "\n".join(
        m["content"] if isinstance(m["content"], str) else "\n".join(b.get("text", "") for b in m["content"])
        for m in request.messages()
        if m.get("role") == "user"
    )


# -- extract -----------------------------------------------------------------------------------


def test_extract_sends_the_redacted_session_to_the_configured_small_model_and_stores_its_memories(
    claude_code: ClaudeCode, extractions: Extractions
) -> None:
    configure(claude_code, llm_model=SMALL_MODEL, redact_patterns=[OWN_PATTERN])
    extractions.queue(GOOD)
    out = extract(claude_code, transcript(claude_code, "one"))
    (request,) = extractions.requests()
    body = request.body
    assert body["model"] == SMALL_MODEL
    assert body["max_tokens"] == 1024  # llm_max_tokens, through CLAUDE_CODE_MAX_OUTPUT_TOKENS
    assert not body.get("tools")  # --tools "": the run can do nothing but answer
    assert SYSTEM in request.system_text()
    sent = user_message(request)
    assert "Always use uv, never pip." in sent and "replica.internal:5432" in sent
    assert SECRET not in json.dumps(body) and OWN_SECRET not in json.dumps(body) and "REDACTED" in sent
    assert "<maple-memory>" not in json.dumps(body)  # no SessionStart brief: MAPLE's hooks stayed out
    # The memory the model proposed is stored next to the heuristic ones, marked as the LLM's.
    by_llm = [c for c in out["candidates"] if c.get("why") == "llm"]
    assert [(c["content"], c["action"]) for c in by_llm] == [(LLM_MEMORY, "store")]
    assert LLM_MEMORY in [m["content"] for m in claude_code.memories()]
    assert any(c.get("why") != "llm" for c in out["candidates"])  # the heuristic rules ran too
    # The budget counted what the JSON result's usage said the run used.
    (used,) = meta(claude_code, "llm_tokens:").values()
    assert int(used) == _usage(body)


def test_the_default_model_is_claude_codes_small_one_found_through_llm_claude_path(
    claude_code: ClaudeCode, extractions: Extractions
) -> None:
    configure(claude_code, llm_claude_path=str(claude_code.bin / "claude"))
    extractions.queue(GOOD)
    extract(claude_code, transcript(claude_code, "one"))
    (request,) = extractions.requests()
    assert "haiku" in request.body["model"]  # the alias `haiku`, as Claude Code resolves it


def test_extract_no_llm_runs_no_claude(claude_code: ClaudeCode, extractions: Extractions) -> None:
    configure(claude_code)
    out = extract(claude_code, transcript(claude_code, "one"), "--no-llm")
    assert extractions.requests() == []
    assert out["candidates"] and all(c.get("why") != "llm" for c in out["candidates"])


def test_a_malformed_answer_is_rejected_whole_and_the_heuristic_memories_still_stored(
    claude_code: ClaudeCode, extractions: Extractions
) -> None:
    configure(claude_code)
    bad = {"memories": [GOOD["memories"][0], {"content": "Remember this forever.", "layer": "opinion"}]}
    extractions.queue(bad)
    out = extract(claude_code, transcript(claude_code, "one"))
    assert len(extractions.requests()) == 1
    contents = [m["content"] for m in claude_code.memories()]
    assert LLM_MEMORY not in contents and "Remember this forever." not in contents
    assert out["candidates"] and all(c.get("why") != "llm" for c in out["candidates"])
    assert json.loads(meta(claude_code, "llm_breaker")["llm_breaker"]) == {"failures": 1}
    assert meta(claude_code, "llm_tokens:") == {}  # a rejected answer is a failure, not usage


def test_the_daily_budget_counted_from_the_first_run_stops_the_next_call(
    claude_code: ClaudeCode, extractions: Extractions
) -> None:
    configure(claude_code, llm_max_tokens=64)
    extractions.queue(GOOD, GOOD)
    extract(claude_code, transcript(claude_code, "one"))
    (used,) = (int(v) for v in meta(claude_code, "llm_tokens:").values())
    assert used == _usage(extractions.requests()[0].body)
    # Room for less than one more call: the next one is not made, the heuristic rules still run.
    configure(claude_code, llm_max_tokens=64, llm_daily_token_budget=used + 64)
    out = extract(claude_code, transcript(claude_code, "two", [("user", "Always run ruff before committing.")]))
    assert len(extractions.requests()) == 1
    assert [c["content"] for c in out["candidates"]] and all(c.get("why") != "llm" for c in out["candidates"])


# -- the hooks' harvest, and the guard -----------------------------------------------------------


def jobs(cc: ClaudeCode) -> list[dict[str, Any]]:
    conn = sqlite3.connect(f"file:{cc.maple_home / 'memory.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT payload, status FROM jobs WHERE kind = 'harvest'").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()
    return [{**json.loads(p), "status": s} for p, s in rows]


def test_the_hooks_harvest_asks_claude_and_maples_hooks_never_fire_inside_that_run(
    claude_code: ClaudeCode, extractions: Extractions
) -> None:
    # The whole loop a user gets: a session ends, MAPLE's SessionEnd hook hands the transcript to
    # the drain, the drain's harvest runs `claude -p`, and that run, with MAPLE installed in the
    # same ~/.claude/settings.json, fires none of MAPLE's hooks: no brief in its request, no
    # harvest of its own, nothing spooled for it.
    claude_code.maple("install")
    configure(claude_code)
    # Global: a SessionStart brief would show it in any folder, the headless run's empty one too.
    claude_code.add("Integration tests need Docker running", "--global")
    extractions.queue(GOOD)
    claude_code.api.script(["Noted."])
    run = claude_code.run_claude("The nightly export job reads from the replica at replica.internal:5432.")
    (brief,) = hook_contexts(run.main, "SessionStart")  # MAPLE's hooks do fire in the user's session
    assert "Docker" in brief
    poll(
        lambda: LLM_MEMORY in [m["content"] for m in claude_code.memories()],
        timeout=HARVEST_TIMEOUT,
        what="the memory the headless claude proposed",
    )
    (request,) = extractions.requests()
    assert "replica.internal:5432" in user_message(request)
    assert "hook additional context" not in request.all_text() and "<maple-memory>" not in request.all_text()
    # Give a wrongly fired hook time to show up, then: one harvest job, of the user's session only.
    _drain(claude_code)
    harvests = jobs(claude_code)
    assert {Path(j["path"]).stem for j in harvests} == {run.result["session_id"]}
    assert len(extractions.requests()) == 1
    log = (claude_code.maple_home / "hooks.log").read_text() if (claude_code.maple_home / "hooks.log").exists() else ""
    # disableAllHooks kept them out: the guard had nothing to do, and no hook saw the run's folder.
    assert "LLM extraction run" not in log and "maple-llm-" not in log


def _drain(cc: ClaudeCode) -> None:
    """Wait for every queued harvest (the engine's or a drain's) to finish."""
    subprocess.run(
        [sys.executable, str(RUN_PY), "drain", "--wait"],
        check=False,
        input=b"",
        env=cc.env,
        cwd=cc.project,
        capture_output=True,
        timeout=300,
    )


def test_maples_hooks_do_nothing_in_a_claude_run_that_carries_the_guard(
    claude_code: ClaudeCode, run_claude: Callable[..., Any]
) -> None:
    # The guard alone, for a Claude Code that would fire hooks despite the flags: a run with
    # MAPLE_LLM_CHILD set (as MAPLE sets it for its headless run) gets no brief, spools nothing,
    # and every hook says in hooks.log why it did nothing.
    claude_code.maple("install")
    claude_code.add("Integration tests need Docker running")
    claude_code.env["MAPLE_LLM_CHILD"] = "1"
    claude_code.api.script(["Noted."])
    run = run_claude("The staging database listens on port 6543.")
    assert hook_contexts(run.main, "SessionStart") == []
    assert "<maple-memory>" not in run.main[0].all_text()
    spool = claude_code.maple_home / "harvest-spool.jsonl"
    assert not spool.exists() or spool.read_text() == ""
    _drain(claude_code)
    assert jobs(claude_code) == []
    assert not [m for m in claude_code.memories() if "6543" in m["content"]]
    log = (claude_code.maple_home / "hooks.log").read_text()
    assert "SessionStart inside MAPLE's own LLM extraction run" in log
    assert "SessionEnd inside MAPLE's own LLM extraction run" in log
