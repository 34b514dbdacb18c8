"""Writes the labelled session transcripts in this folder (run it after editing a session).

Each session is a realistic Claude Code conversation written for MAPLE, expanded here into the
real JSONL envelope (uuid/parentUuid chains, one content block per assistant line, tool_use and
tool_result lines, our injected context attachment, caveats, compact summaries, task
notifications, sidechains). Beside each `<name>.jsonl` goes `<name>.expected.json`:

    expected   the memories a careful engineer would keep: every phrase in `must` has to appear
               (case-insensitive) in one memory's content, and the memory must be of `layer`
    forbidden  phrases from what must never become a memory: injected context, tool output,
               thinking, compact summaries, sidechains, task notifications, and a few lines of
               the assistant's narration ("Let me look at the layout"); no memory may contain them

The labels were written with the sessions, before the extraction heuristics existed.

    python tests/data/sessions/build_sessions.py
"""

from __future__ import annotations

import json
import uuid as uuidlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
TAG = "maple-memory"  # memory.transcript.CONTEXT_TAG; kept literal so the data stands alone
VERSION = "2.1.240"


from session_dsl import *  # noqa: F401,F403  (U, A, T, CTX, TOOL, ...)


class Writer:
    def __init__(self, index: int, session: dict):
        self.n = 0
        self.index = index
        self.sid = str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"maple-session-{index}"))
        self.cwd = session["cwd"]
        self.branch = session.get("branch", "main")
        self.t = datetime(2026, 9, 1, 9, 0, tzinfo=timezone.utc) + timedelta(days=index)
        self.parent = None
        self.lines: list[dict] = []
        self.prompt_id = None
        self.msg = 0

    def uid(self) -> str:
        self.n += 1
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"maple-line-{self.index}-{self.n}"))

    def env(self, kind: str, **extra) -> dict:
        self.t += timedelta(seconds=3)
        u = self.uid()
        obj = {"parentUuid": self.parent, "isSidechain": False, "type": kind, **extra, "uuid": u,
               "timestamp": self.t.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
               "userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.sid,
               "version": VERSION, "gitBranch": self.branch}
        self.parent = u
        self.lines.append(obj)
        return obj

    def assistant(self, block: dict, stop=None) -> dict:
        return self.env("assistant", message={
            "id": f"msg_01{self.index:04d}{self.msg:018d}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-5", "content": [block], "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 812, "cache_read_input_tokens": 15020,
                      "output_tokens": 57, "service_tier": "standard"}},
            requestId=f"req_011C{self.index:04d}{self.msg:016d}")

    def write(self, turns: list) -> None:
        self.lines.append({"type": "file-history-snapshot", "messageId": "pending", "snapshot": {
            "messageId": "pending", "trackedFileBackups": {}, "timestamp": "2026-09-01T09:00:00.000Z"},
            "isSnapshotUpdate": False})
        for turn in turns:
            getattr(self, "do_" + turn[0])(*turn[1:])
        self.lines.append({"type": "ai-title", "aiTitle": "Session", "sessionId": self.sid})

    def do_user(self, text, kw):
        self.prompt_id = self.uid()
        self.msg += 1
        extra = {"promptId": self.prompt_id}
        if kw.get("origin", True):
            extra["origin"] = {"kind": "human"}
        self.env("user", **extra, message={"role": "user", "content": text}, permissionMode="default",
                 promptSource="user")

    def do_context(self, text):
        self.env("attachment", attachment={
            "type": "hook_additional_context", "content": [f"<{TAG}>\n{text}\n</{TAG}>"],
            "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit"})

    def do_thinking(self, text):
        self.assistant({"type": "thinking", "thinking": text, "signature": "EqQBCkgIBxAB...redacted"})

    def do_assistant(self, text):
        self.assistant({"type": "text", "text": text}, stop="end_turn")

    def do_tool(self, name, inp, out, error, code):
        tid = f"toolu_01{self.index:04d}{self.n:018d}"
        a = self.assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, stop="tool_use")
        block = {"tool_use_id": tid, "type": "tool_result", "content": out}
        if error:
            block["is_error"] = True
        if name == "Bash":
            result = {"stdout": out if not error else "", "stderr": out if error else "",
                      "interrupted": False, "isImage": False}
            if code is not None:
                result["exitCode"] = code
        else:
            result = {"type": "text", "file": {"filePath": inp.get("file_path", ""), "numLines": out.count("\n") + 1}}
        self.env("user", promptId=self.prompt_id, message={"role": "user", "content": [block]},
                 toolUseResult=result, sourceToolAssistantUUID=a["uuid"])
        self.msg += 1  # the model answers a tool result in a new API message

    def do_command(self, name, stdout):
        self.env("user", message={"role": "user", "content":
                 f"<command-name>{name}</command-name>\n            <command-message>{name.lstrip('/')}"
                 f"</command-message>\n            <command-args></command-args>"})
        if stdout:
            self.env("user", message={"role": "user", "content":
                     f"<local-command-stdout>{stdout}</local-command-stdout>"})

    def do_caveat(self):
        self.env("user", isMeta=True, message={"role": "user", "content":
                 "<local-command-caveat>Caveat: The messages below were generated by the user while running "
                 "local commands. DO NOT respond to these messages or otherwise consider them in your response "
                 "unless the user explicitly asks you to.</local-command-caveat>"})

    def do_compact(self, summary):
        last = self.parent
        self.parent = None
        self.env("system", subtype="compact_boundary", content="Conversation compacted", isMeta=False,
                 level="info", logicalParentUuid=last,
                 compactMetadata={"trigger": "auto", "preTokens": 161204, "postTokens": 3920, "durationMs": 21840})
        self.env("user", isCompactSummary=True, isVisibleInTranscriptOnly=True, message={
            "role": "user", "content": "This session is being continued from a previous conversation that ran "
            "out of context. The conversation is summarized below:\n" + summary})

    def do_task(self, text):
        self.env("user", origin={"kind": "task-notification"}, message={"role": "user", "content":
                 f"<task-notification>\n<task-id>b7c1</task-id>\n<status>completed</status>\n"
                 f"<summary>{text}</summary>\n</task-notification>"})

    def do_side(self, prompt, answer):
        keep = self.parent
        self.parent = None
        agent = f"a{self.index:03d}side"
        self.env("user", isSidechain=True, agentId=agent, message={"role": "user", "content": prompt})
        self.lines[-1]["isSidechain"] = True
        a = self.assistant({"type": "text", "text": answer}, stop="end_turn")
        a["isSidechain"] = True
        a["agentId"] = agent
        self.parent = keep

    def do_interrupt(self):
        self.env("user", message={"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user for tool use]"}]})


def build(index: int, name: str, session: dict, folder: Path = HERE) -> None:
    w = Writer(index, session)
    w.write(session["turns"])
    # a stop hook ran after the last turn
    w.env("system", subtype="stop_hook_summary", hookCount=1,
          hookInfos=[{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}], hookErrors=[],
          preventedContinuation=False, stopReason="", hasOutput=False, level="suggestion")
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False, separators=(",", ":")) + "\n" for x in w.lines), encoding="utf-8")
    labels = {"session": name, "language": session["lang"],
              "expected": [{"layer": layer, "must": must} for layer, must in session["expected"]],
              "forbidden": session.get("forbidden", [])}
    (folder / f"{name}.expected.json").write_text(
        json.dumps(labels, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


from sessions_en import SESSIONS as EN  # noqa: E402  (kept apart: long data)
from sessions_holdout import SESSIONS as HOLDOUT  # noqa: E402
from sessions_holdout2 import SESSIONS as HOLDOUT2  # noqa: E402
from sessions_zh import SESSIONS as ZH  # noqa: E402

if __name__ == "__main__":
    for i, (name, s) in enumerate([*EN, *ZH], 1):
        build(i, name, s)
    for i, (name, s) in enumerate(HOLDOUT, 101):
        build(i, name, s, HERE / "holdout")
    for i, (name, s) in enumerate(HOLDOUT2, 201):
        build(i, name, s, HERE / "holdout2")
    print(f"wrote {len(EN) + len(ZH)} sessions to {HERE}, {len(HOLDOUT)} to holdout/, {len(HOLDOUT2)} to holdout2/")
