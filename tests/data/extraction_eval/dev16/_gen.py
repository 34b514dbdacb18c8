#!/usr/bin/env python3
"""Build the dev16 extraction-eval sessions (blind trial 35) from the part files in _parts/ (stdlib only, deterministic).

    python3 _gen.py && python3 validate.py

Each part file (_parts/<id>.py) defines
  META  = {id, project, topic, order, language, branch, start}   # start: ISO-8601 Z of the first line
  STEPS = [...]   # see the step kinds below
  GOLD  = {expected, acceptable, forbidden, secrets}
and this script writes <id>_<project>_<topic>.jsonl and .gold.json next to itself.

Step kinds
  ("u", text)                      human prompt (string content)
  ("u", [blocks])                  human prompt with a list of text blocks
  ("a", text)                      assistant text block (end_turn)
  ("think", text)                  assistant thinking block
  ("tool", name, input, result, opts)
                                   assistant tool_use line + user tool_result line;
                                   opts: error (bool), exit (int), tur (toolUseResult override)
  ("att", hook_event, text)        hook_additional_context attachment (SessionStart / UserPromptSubmit)
  ("stop",)                        stop_hook_summary system line
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "_parts")
NS = uuid.UUID("3b0f6a54-2c1e-4d7a-9f35-8e21c0d4a935")
VERSION = "2.1.336"
MODEL = "claude-sonnet-5"


def h(*parts) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)


def hexid(n: int, *parts) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:n]


def uid(*parts) -> str:
    return str(uuid.uuid5(NS, "|".join(map(str, parts))))


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def numbered(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(f"{i:>6}\t{ln}" for i, ln in enumerate(lines, 1))


def tool_result_payload(name, inp, result, opts):
    """Returns (tool_result content, toolUseResult)."""
    err = opts.get("error", False)
    if name.startswith("mcp__"):
        blocks = [{"type": "text", "text": result}]
        return blocks, opts.get("tur", blocks)
    if name == "Read":
        n = len(result.rstrip("\n").split("\n"))
        tur = {
            "type": "text",
            "file": {"filePath": inp["file_path"], "content": result, "numLines": n, "startLine": 1, "totalLines": n},
        }
        return numbered(result), opts.get("tur", tur)
    if name == "Bash":
        if err:
            content = f"Exit code {opts.get('exit', 1)}\n{result}"
            tur = {"stdout": "", "stderr": content, "interrupted": False, "isImage": False}
            return content, opts.get("tur", tur)
        tur = {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}
        return result, opts.get("tur", tur)
    if name == "Edit":
        tur = {
            "filePath": inp["file_path"],
            "oldString": inp["old_string"],
            "newString": inp["new_string"],
            "replaceAll": False,
            "userModified": False,
        }
        return f"The file {inp['file_path']} has been updated successfully.", opts.get("tur", tur)
    if name == "Write":
        tur = {"type": "create", "filePath": inp["file_path"], "content": inp["content"], "structuredPatch": []}
        return f"File created successfully at: {inp['file_path']}", opts.get("tur", tur)
    if name == "Grep":
        lines = result.split("\n") if result else []
        tur = {
            "mode": inp.get("output_mode", "content"),
            "numFiles": len({ln.split(":", 1)[0] for ln in lines}),
            "filenames": [],
            "content": result,
            "numLines": len(lines),
        }
        return result, opts.get("tur", tur)
    if name == "Glob":
        files = result.split("\n") if result else []
        tur = {"filenames": files, "durationMs": 12 + h(result) % 40, "numFiles": len(files), "truncated": False}
        return result, opts.get("tur", tur)
    return result, opts.get("tur", {"content": result})


class Builder:
    def __init__(self, meta):
        self.meta = meta
        self.sid = meta["id"]
        self.session_id = uid("session", self.sid)
        self.cwd = f"/home/dev/work/{meta['project']}"
        self.t = dt.datetime.fromisoformat(meta["start"].replace("Z", "+00:00"))
        self.lines = []
        self.parent = None
        self.prompt_id = None
        self.n = 0

    # -- helpers -------------------------------------------------------------------------------
    def tick(self, seconds: float):
        self.t += dt.timedelta(milliseconds=int(seconds * 1000))

    def env(self, typ, extra_first=None):
        self.n += 1
        u = uid(self.sid, "line", self.n)
        d = {"parentUuid": self.parent, "isSidechain": False}
        if extra_first:
            d.update(extra_first)
        d["type"] = typ
        return u, d

    def finish(self, u, d):
        d.update(
            {
                "uuid": u,
                "timestamp": iso(self.t),
                "userType": "external",
                "entrypoint": "cli",
                "cwd": self.cwd,
                "sessionId": self.session_id,
                "version": VERSION,
                "gitBranch": self.meta["branch"],
            }
        )
        self.lines.append(d)
        self.parent = u
        return u

    def usage(self, k, out):
        return {
            "input_tokens": 3 + h(self.sid, k, "in") % 6,
            "cache_creation_input_tokens": 200 + h(self.sid, k, "cc") % 2400,
            "cache_read_input_tokens": 14000 + h(self.sid, k, "cr") % 30000,
            "output_tokens": out,
            "service_tier": "standard",
        }

    # -- step kinds ----------------------------------------------------------------------------
    def snapshot(self):
        mid = uid(self.sid, "snapshot")
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": mid,
                "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": iso(self.t)},
                "isSnapshotUpdate": False,
            }
        )

    def user(self, content):
        text = content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)
        self.tick(25 + min(len(text) // 6, 200) + h(self.sid, self.n, "u") % 20)
        self.prompt_id = uid(self.sid, "prompt", self.n)
        u, d = self.env("user", {"promptId": self.prompt_id})
        d["message"] = {"role": "user", "content": content}
        d.update({"permissionMode": "default", "promptSource": "user", "origin": {"kind": "human"}})
        return self.finish(u, d)

    def attachment(self, event, text):
        self.tick(0.05 if self.lines and event == "UserPromptSubmit" else 0.3)
        u, d = self.env("attachment")
        d["attachment"] = {"type": "hook_additional_context", "content": [text], "hookName": event, "hookEvent": event}
        return self.finish(u, d)

    def assistant(self, block, stop_reason, key, out_tokens):
        u, d = self.env("assistant")
        msg_id = "msg_01" + hexid(22, self.sid, "msg", key)
        d["message"] = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": self.usage(key, out_tokens),
        }
        d["requestId"] = "req_011C" + hexid(20, self.sid, "req", key)
        return self.finish(u, d)

    def text(self, text):
        self.tick(4 + min(len(text) // 30, 60) + h(self.sid, self.n, "a") % 5)
        return self.assistant({"type": "text", "text": text}, "end_turn", self.n, 20 + len(text) // 3)

    def think(self, text):
        self.tick(2 + h(self.sid, self.n, "th") % 4)
        sig = "Eq" + hexid(40, self.sid, "sig", self.n)
        return self.assistant({"type": "thinking", "thinking": text, "signature": sig}, None, self.n, 12)

    def tool(self, name, inp, result, opts):
        self.tick(3 + h(self.sid, self.n, "tu") % 6)
        tid = "toolu_01" + hexid(22, self.sid, "tool", self.n)
        au = self.assistant(
            {"type": "tool_use", "id": tid, "name": name, "input": inp},
            "tool_use",
            self.n,
            60 + len(json.dumps(inp, ensure_ascii=False)) // 4,
        )
        slow = name == "Bash" and any(w in inp.get("command", "") for w in ("test", "pest", "make", "dotnet"))
        self.tick((9 + h(self.sid, self.n, "tr") % 30) if slow else (0.4 + h(self.sid, self.n, "tr") % 3))
        content, tur = tool_result_payload(name, inp, result, opts)
        block = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if opts.get("error"):
            block["is_error"] = True
        u, d = self.env("user", {"promptId": self.prompt_id})
        d["message"] = {"role": "user", "content": [block]}
        d["toolUseResult"] = tur
        d["sourceToolAssistantUUID"] = au
        return self.finish(u, d)

    def stop(self):
        self.tick(0.3)
        u, d = self.env("system")
        d.update(
            {
                "subtype": "stop_hook_summary",
                "hookCount": 1,
                "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}],
                "hookErrors": [],
                "preventedContinuation": False,
                "stopReason": "",
                "hasOutput": False,
                "level": "suggestion",
            }
        )
        return self.finish(u, d)

    def build(self, steps):
        self.snapshot()
        for s in steps:
            kind = s[0]
            if kind == "u":
                self.user(s[1])
            elif kind == "a":
                self.text(s[1])
            elif kind == "think":
                self.think(s[1])
            elif kind == "tool":
                self.tool(s[1], s[2], s[3], s[4] if len(s) > 4 else {})
            elif kind == "att":
                self.attachment(s[1], s[2])
            elif kind == "stop":
                self.stop()
            else:
                raise ValueError(kind)
        self.lines.append({"type": "ai-title", "aiTitle": self.meta["title"], "sessionId": self.session_id})
        return self.lines


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    names = sorted(f for f in os.listdir(PARTS) if f.endswith(".py") and not f.startswith("_"))
    for f in names:
        mod = load(os.path.join(PARTS, f))
        meta = mod.META
        name = f"{meta['id']}_{meta['project'].replace('-', '_')}_{meta['topic']}"
        lines = Builder(meta).build(mod.STEPS)
        with open(os.path.join(HERE, name + ".jsonl"), "w", encoding="utf-8") as out:
            for ln in lines:
                out.write(json.dumps(ln, ensure_ascii=False, separators=(",", ":")) + "\n")
        gold = {
            "session": name,
            "project": f"/home/dev/work/{meta['project']}",
            "order": meta["order"],
            "language": meta["language"],
        }
        gold.update({k: mod.GOLD.get(k, []) for k in ("expected", "acceptable", "forbidden", "secrets")})
        with open(os.path.join(HERE, name + ".gold.json"), "w", encoding="utf-8") as out:
            json.dump(gold, out, ensure_ascii=False, indent=2)
            out.write("\n")
        print(f"{name}: {len(lines)} lines, {len(gold['expected'])} expected")


if __name__ == "__main__":
    main()
