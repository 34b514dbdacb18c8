#!/usr/bin/env python3
"""Build the dev11 extraction-eval sessions (stdlib only, deterministic).

    python3 _gen.py        # writes NAME.jsonl + NAME.gold.json next to this file

Each module in _parts/ defines META (name, project cwd, order, language, start time, git branch)
and build(s), which drives a Session (below) and returns the gold labels
(expected / acceptable / forbidden / secrets).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import importlib
import json
import os
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = [
    "h1_hemotrack_platelet_expiry",
    "h2_hemotrack_courier_eta_batching",
    "h3_hemotrack_luxon_followups",
    "y1_tianyuan_dup_trace_code",
    "y2_tianyuan_scan_cache",
    "y3_tianyuan_leaf_segment",
]
NS = uuid.UUID("6f1c2a0e-3b7d-4e59-9a41-5d0c7e2b8f13")


def uid(*parts) -> str:
    return str(uuid.uuid5(NS, "/".join(str(p) for p in parts)))


def hexid(n: int, *parts) -> str:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()[:n]


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def numbered(text: str) -> str:
    return "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(text.split("\n"), 1))


class Session:
    MODEL = "claude-sonnet-5"

    def __init__(self, meta: dict):
        self.name = meta["name"]
        self.cwd = meta["cwd"]
        self.branch = meta["branch"]
        self.version = meta["version"]
        self.sid = uid(self.name, "session")
        self.t = dt.datetime.fromisoformat(meta["start"].replace("Z", "+00:00"))
        self.lines: list[dict] = []
        self.last = None          # uuid of the last envelope line
        self.n = 0
        self.prompt = None        # current promptId
        self.msg = None           # (message id, request id) of the running assistant message
        self.tools = {}           # tool_use id -> assistant uuid
        self.next_user_uuid = None

    # ---- plumbing -------------------------------------------------------------------------
    def _uuid(self, kind):
        self.n += 1
        return uid(self.name, kind, self.n)

    def _tick(self, gap):
        self.t += dt.timedelta(seconds=gap)
        return iso(self.t)

    def _env(self, line: dict, u: str, gap: float) -> dict:
        line.update({
            "uuid": u,
            "timestamp": self._tick(gap),
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
        })
        self.lines.append(line)
        self.last = u
        return line

    def _usage(self, k):
        h = int(hexid(8, self.name, "usage", k), 16)
        return {
            "input_tokens": 3 + h % 7,
            "cache_creation_input_tokens": 200 + h % 1900,
            "cache_read_input_tokens": 18000 + h % 26000,
            "output_tokens": 40 + h % 700,
            "service_tier": "standard",
        }

    # ---- line kinds -------------------------------------------------------------------------
    def snapshot(self):
        self.next_user_uuid = self._uuid("user")
        self.lines.append({
            "type": "file-history-snapshot",
            "messageId": self.next_user_uuid,
            "snapshot": {"messageId": self.next_user_uuid, "trackedFileBackups": {}, "timestamp": iso(self.t)},
            "isSnapshotUpdate": False,
        })

    def attach(self, event: str, text: str, gap=0.05):
        u = self._uuid("attachment")
        line = {"parentUuid": self.last, "isSidechain": False, "type": "attachment",
                "attachment": {"type": "hook_additional_context", "content": [text],
                               "hookName": event, "hookEvent": event}}
        self._env(line, u, gap)

    def user(self, content, gap=60):
        """A human prompt: a string, or a list of text blocks."""
        u = self.next_user_uuid or self._uuid("user")
        self.next_user_uuid = None
        self.prompt = uid(self.name, "prompt", self.n)
        if isinstance(content, list):
            content = [{"type": "text", "text": c} for c in content]
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
                "message": {"role": "user", "content": content},
                "permissionMode": "default", "promptSource": "user", "origin": {"kind": "human"}}
        self.msg = None
        self._env(line, u, gap)

    def _assistant(self, block, gap):
        if self.msg is None:
            self.msg = ("msg_01" + hexid(22, self.name, "msg", self.n), "req_011C" + hexid(20, self.name, "req", self.n))
        u = self._uuid("assistant")
        line = {"parentUuid": self.last, "isSidechain": False, "type": "assistant",
                "message": {"id": self.msg[0], "type": "message", "role": "assistant", "model": self.MODEL,
                            "content": [block], "stop_reason": None, "stop_sequence": None,
                            "usage": self._usage(self.n)},
                "requestId": self.msg[1]}
        return self._env(line, u, gap)

    def think(self, text, gap=3):
        self._assistant({"type": "thinking", "thinking": text, "signature": "Eq" + hexid(40, self.name, "sig", self.n)}, gap)

    def say(self, text, gap=6):
        self._assistant({"type": "text", "text": text}, gap)

    def tool(self, name, inp, result, tur, is_error=False, gap=3, run=2):
        tid = "toolu_01" + hexid(22, self.name, "tool", self.n)
        a = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, gap)
        self.tools[tid] = a["uuid"]
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        u = self._uuid("user")
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
                "message": {"role": "user", "content": [block]}, "toolUseResult": tur,
                "sourceToolAssistantUUID": a["uuid"]}
        self.msg = None
        self._env(line, u, run)

    # ---- tool helpers -------------------------------------------------------------------------
    def _abs(self, path):
        return path if path.startswith("/") else f"{self.cwd}/{path}"

    def read(self, path, text, **kw):
        p = self._abs(path)
        n = text.count("\n") + 1
        self.tool("Read", {"file_path": p}, numbered(text),
                  {"type": "text", "file": {"filePath": p, "content": text, "numLines": n, "startLine": 1, "totalLines": n}}, **kw)

    def bash(self, cmd, desc, out, code=0, run=4, **kw):
        if code:
            content = f"Exit code {code}\n{out}"
            self.tool("Bash", {"command": cmd, "description": desc}, content,
                      {"stdout": "", "stderr": content, "interrupted": False, "isImage": False},
                      is_error=True, run=run, **kw)
        else:
            self.tool("Bash", {"command": cmd, "description": desc}, out,
                      {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}, run=run, **kw)

    def edit(self, path, old, new, **kw):
        p = self._abs(path)
        self.tool("Edit", {"file_path": p, "old_string": old, "new_string": new},
                  f"The file {p} has been updated successfully.",
                  {"filePath": p, "oldString": old, "newString": new, "replaceAll": False, "userModified": False}, **kw)

    def write(self, path, text, **kw):
        p = self._abs(path)
        self.tool("Write", {"file_path": p, "content": text}, f"File created successfully at: {p}",
                  {"type": "create", "filePath": p, "content": text, "structuredPatch": []}, **kw)

    def grep(self, pattern, path, out, mode="content", glob=None, **kw):
        inp = {"pattern": pattern, "path": self._abs(path), "output_mode": mode}
        if glob:
            inp["glob"] = glob
        if mode == "content":
            inp["-n"] = True
        rows = [r for r in out.split("\n") if r]
        files = sorted({r.split(":", 1)[0] for r in rows}) if mode == "content" else rows
        content = out if mode == "content" else f"Found {len(rows)} file{'s' if len(rows) != 1 else ''}\n" + out
        self.tool("Grep", inp, content,
                  {"mode": mode, "numFiles": len(files), "filenames": files if mode != "content" else [],
                   "content": out if mode == "content" else "", "numLines": len(rows)}, **kw)

    def memory_search(self, query, results, **kw):
        text = json.dumps({"query": query, "results": results}, ensure_ascii=False)
        blocks = [{"type": "text", "text": text}]
        self.tool("mcp__maple__memory_search", {"query": query, "limit": 5}, blocks, blocks, **kw)

    def title(self, t):
        self.lines.append({"type": "ai-title", "aiTitle": t, "sessionId": self.sid})

    # ---- output -------------------------------------------------------------------------
    def finish(self):
        # stop_reason: only the last block of an API message carries one
        for i, l in enumerate(self.lines):
            if l.get("type") != "assistant":
                continue
            nxt = next((x for x in self.lines[i + 1:] if x.get("type") in ("user", "assistant", "attachment")), None)
            same = nxt is not None and nxt.get("type") == "assistant" and nxt["message"]["id"] == l["message"]["id"]
            blk = l["message"]["content"][0]["type"]
            l["message"]["stop_reason"] = None if same or blk == "thinking" else ("tool_use" if blk == "tool_use" else "end_turn")
        return self.lines


def recall_block(items):
    """items: (id, layer, kind, text) -> the lines MAPLE injects."""
    return "\n".join(f'- #{i} {layer} \u00b7 {kind}: "{text}"' for i, layer, kind, text in items)


def main():
    sys.dont_write_bytecode = True  # keep _parts/ free of __pycache__
    sys.path.insert(0, os.path.join(HERE, "_parts"))
    for mod_name in PARTS:
        mod = importlib.import_module(mod_name)
        meta = dict(mod.META)
        assert meta["name"] == mod_name, mod_name
        s = Session(meta)
        labels = mod.build(s, recall_block)
        lines = s.finish()
        with open(os.path.join(HERE, mod_name + ".jsonl"), "w", encoding="utf-8") as f:
            for l in lines:
                f.write(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n")
        gold = {"session": mod_name, "project": meta["cwd"], "order": meta["order"], "language": meta["language"]}
        gold.update({k: labels.get(k, []) for k in ("expected", "acceptable", "forbidden", "secrets")})
        with open(os.path.join(HERE, mod_name + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")
        print(f"wrote {mod_name}: {len(lines)} lines, {len(gold['expected'])} expected")


if __name__ == "__main__":
    main()
