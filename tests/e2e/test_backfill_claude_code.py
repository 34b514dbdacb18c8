"""`maple-memory backfill` on transcripts the real Claude Code (pinned 2.1.332) wrote, offline.

Observed (2.1.332): a `claude -p` run writes `~/.claude/projects/<cwd with every non-alphanumeric
character as '-'>/<session id>.jsonl`; its first lines (`queue-operation`) carry no `cwd`, the
prompt's line does; while the run lasts `~/.claude/sessions/<pid>.json` holds {pid, sessionId, cwd,
...} and is removed when it ends. Sessions run before `install` are MAPLE's to backfill; after
`install`, the SessionEnd harvest of a resumed session continues from backfill's cursor.
"""

from __future__ import annotations

import json
import re

import pytest
from claude_harness import ClaudeCode, poll, skip_reason

pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")

FACT_PROMPT = "we run the tests with `uv run pytest -n auto`; the staging database listens on port 6543"
LATER_PROMPT = "from now on we deploy with `fly deploy --strategy rolling` only"


def backfill(cc: ClaudeCode, *flags: str) -> dict:
    # --idle-seconds 0: the run has ended (Claude Code removed its sessions/<pid>.json), just now.
    return json.loads(cc.maple("--json", "backfill", "--idle-seconds", "0", *flags).stdout)


def test_backfill_harvests_a_session_claude_code_wrote_before_install_and_the_hooks_then_continue_it(
    claude_code: ClaudeCode,
) -> None:
    claude_code.api.script(["Noted."])
    run = claude_code.run_claude(FACT_PROMPT)  # before install: no hook of MAPLE's runs
    sid = run.result["session_id"]
    [transcript] = (claude_code.user_home / ".claude" / "projects").glob(f"*/{sid}.jsonl")
    assert transcript.parent.name == re.sub(r"[^A-Za-z0-9]", "-", str(claude_code.project))
    assert not claude_code.memories()

    install = json.loads(claude_code.maple("--json", "install").stdout)
    assert any("found 1 past Claude Code session(s) of this project" in n for n in install["notes"])
    d = backfill(claude_code)
    assert (d["found"], d["harvested"], d["skipped"]) == (1, 1, [])
    facts = [m for m in claude_code.memories() if "6543" in m["content"]]
    assert len(facts) == 1 and facts[0]["session_id"] == sid
    assert backfill(claude_code)["already_done"] == 1  # nothing new: nothing read again

    # The same session resumed after install: its SessionEnd harvest reads only the new lines.
    claude_code.api.script(["OK."])
    claude_code.run_claude(LATER_PROMPT, resume=sid)
    poll(
        lambda: [m for m in claude_code.memories() if "fly deploy" in m["content"]],
        timeout=120.0,
        what="the resumed session's harvest",
    )
    assert len([m for m in claude_code.memories() if "6543" in m["content"]]) == 1
