#!/usr/bin/env python3
"""Generator for the trial33 extraction-eval split (stdlib only, deterministic).

    python3 _gen.py && python3 validate.py

Session content and gold labels are hand-written in _parts/roofline.py (project A, English) and
_parts/hirebox.py (project B, Chinese / code-switched). This file only holds the transcript-line
builder and the writer. SHA256SUMS is written last.
"""
from __future__ import annotations

import datetime as dt
import glob
import hashlib
import importlib.util
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
NS = uuid.UUID("0b5c7d2e-9a41-4f63-8e17-2c6d9f3a1b84")


def _iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def numbered(src: str) -> str:
    """Read-tool rendering: right-aligned line numbers and a tab."""
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(src.split("\n"), 1))


class Session:
    def __init__(self, name, project, start, branch, version="2.1.334", model="claude-sonnet-5"):
        self.name = name
        self.project = project
        self.cwd = f"/home/dev/work/{project}"
        self.t = dt.datetime.strptime(start, "%Y-%m-%dT%H:%M:%S")
        self.branch = branch
        self.version = version
        self.model = model
        self.k = 0
        self.sid = self._uuid("session")
        self.lines = []
        self.last = None
        self.prompt = None
        self.msg = None
        self.req = None
        self.cache_read = 18000
        snap = self._uuid("snapshot")
        self.lines.append({"type": "file-history-snapshot", "messageId": snap,
                           "snapshot": {"messageId": snap, "trackedFileBackups": {}, "timestamp": _iso(self.t)},
                           "isSnapshotUpdate": False})

    # ---- ids / envelope -------------------------------------------------------------------
    def _uuid(self, tag=None):
        self.k += 1
        return str(uuid.uuid5(NS, f"{self.name}/{tag or self.k}"))

    def _tail(self, u, secs):
        self.t += dt.timedelta(seconds=secs)
        return {"uuid": u, "timestamp": _iso(self.t), "userType": "external", "entrypoint": "cli",
                "cwd": self.cwd, "sessionId": self.sid, "version": self.version, "gitBranch": self.branch}

    # ---- line kinds -----------------------------------------------------------------------
    def user(self, text, secs=45):
        self.prompt = self._uuid()
        u = self._uuid()
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
                "message": {"role": "user", "content": text}, "permissionMode": "default",
                "promptSource": "user", "origin": {"kind": "human"}}
        line.update(self._tail(u, secs))
        self.lines.append(line)
        self.last = u
        return u

    def attach(self, content, hook_name, hook_event, secs=0.05):
        u = self._uuid()
        line = {"parentUuid": self.last, "isSidechain": False, "type": "attachment",
                "attachment": {"type": "hook_additional_context", "content": [content],
                               "hookName": hook_name, "hookEvent": hook_event}}
        line.update(self._tail(u, secs))
        self.lines.append(line)
        self.last = u

    def _asst(self, block, stop, new_msg, secs, out_tokens):
        if new_msg or self.msg is None:
            seed = f"{self.name}/msg/{self.k}"
            self.msg = "msg_01" + _hex(seed, 22)
            self.req = "req_011C" + _hex(seed + "/req", 16)
        u = self._uuid()
        self.cache_read += 640 + (self.k * 37) % 900
        line = {"parentUuid": self.last, "isSidechain": False, "type": "assistant",
                "message": {"id": self.msg, "type": "message", "role": "assistant", "model": self.model,
                            "content": [block], "stop_reason": stop, "stop_sequence": None,
                            "usage": {"input_tokens": 4 + self.k % 7,
                                      "cache_creation_input_tokens": 300 + (self.k * 53) % 1700,
                                      "cache_read_input_tokens": self.cache_read,
                                      "output_tokens": out_tokens, "service_tier": "standard"}},
                "requestId": self.req}
        line.update(self._tail(u, secs))
        self.lines.append(line)
        self.last = u
        return u

    def say(self, text, final=True, secs=7):
        """Assistant text block. final=False: the same API message continues with a tool_use."""
        self._asst({"type": "text", "text": text}, "end_turn" if final else None, True, secs,
                   max(20, len(text) // 3))

    def tool(self, name, inp, content, tur, error=False, secs=3, rsecs=2, same_msg=False):
        tid = "toolu_01" + _hex(f"{self.name}/tool/{self.k}", 22)
        a = self._asst({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use",
                       not same_msg, secs, 60 + len(json.dumps(inp, ensure_ascii=False)) // 4)
        block = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if error:
            block["is_error"] = True
        u = self._uuid()
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
                "message": {"role": "user", "content": [block]}, "toolUseResult": tur,
                "sourceToolAssistantUUID": a}
        line.update(self._tail(u, rsecs))
        self.lines.append(line)
        self.last = u

    # ---- tool helpers ---------------------------------------------------------------------
    def path(self, rel):
        return f"{self.cwd}/{rel}"

    def read(self, rel, src, **kw):
        p = self.path(rel)
        n = src.count("\n") + 1
        self.tool("Read", {"file_path": p}, numbered(src),
                  {"type": "text", "file": {"filePath": p, "content": src, "numLines": n, "startLine": 1,
                                            "totalLines": n}}, **kw)

    def bash(self, cmd, desc, out, code=0, stderr_only=False, **kw):
        if code:
            text = f"Exit code {code}\n{out}"
            self.tool("Bash", {"command": cmd, "description": desc}, text,
                      {"stdout": "", "stderr": text, "interrupted": False, "isImage": False}, error=True, **kw)
        else:
            self.tool("Bash", {"command": cmd, "description": desc}, out,
                      {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}, **kw)

    def edit(self, rel, old, new, **kw):
        p = self.path(rel)
        self.tool("Edit", {"file_path": p, "old_string": old, "new_string": new},
                  f"The file {p} has been updated successfully.",
                  {"filePath": p, "oldString": old, "newString": new, "replaceAll": False, "userModified": False},
                  **kw)

    def write(self, rel, content, **kw):
        p = self.path(rel)
        self.tool("Write", {"file_path": p, "content": content}, f"File created successfully at: {p}",
                  {"type": "create", "filePath": p, "content": content, "structuredPatch": []}, **kw)

    def grep(self, pattern, out, path=None, glob_=None, **kw):
        inp = {"pattern": pattern, "path": self.path(path) if path else self.cwd, "output_mode": "content", "-n": True}
        if glob_:
            inp["glob"] = glob_
        files = sorted({l.split(":", 1)[0] for l in out.split("\n") if l.strip()})
        self.tool("Grep", inp, out, {"mode": "content", "numFiles": len(files), "filenames": [],
                                     "content": out, "numLines": out.count("\n") + 1}, **kw)

    def mcp_search(self, query, results, **kw):
        text = json.dumps({"results": results}, ensure_ascii=False)
        blocks = [{"type": "text", "text": text}]
        self.tool("mcp__maple__memory_search", {"query": query, "limit": len(results)}, blocks, blocks, **kw)

    def stop_hook(self, secs=0.4):
        u = self._uuid()
        line = {"parentUuid": self.last, "isSidechain": False, "type": "system", "subtype": "stop_hook_summary",
                "hookCount": 1, "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}],
                "hookErrors": [], "preventedContinuation": False, "stopReason": "", "hasOutput": False,
                "level": "suggestion"}
        line.update(self._tail(u, secs))
        self.lines.append(line)
        self.last = u

    def title(self, text):
        self.lines.append({"type": "ai-title", "aiTitle": text, "sessionId": self.sid})


def maple_block(items):
    """items: (id, layer, kind, content). The recall wrapper MAPLE hooks inject."""
    body = "\n".join(f'- #{i} {layer} \u00b7 {kind}: "{c}"' for i, layer, kind, c in items)
    return f"<maple-memory>\nStored project memories (MAPLE), most relevant first:\n{body}\n</maple-memory>"


def _load(mod):
    spec = importlib.util.spec_from_file_location(mod, os.path.join(HERE, "_parts", mod + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main():
    for old in glob.glob(os.path.join(HERE, "*.jsonl")) + glob.glob(os.path.join(HERE, "*.gold.json")):
        os.remove(old)
    written = []
    for mod in ("roofline", "hirebox"):
        m = _load(mod)
        for order, (build, gold) in enumerate(m.SESSIONS, 1):
            s = build(Session, maple_block)
            g = {"session": s.name, "project": s.cwd, "order": order, "language": gold["language"],
                 "expected": gold["expected"], "acceptable": gold.get("acceptable", []),
                 "forbidden": gold["forbidden"], "secrets": gold["secrets"]}
            with open(os.path.join(HERE, s.name + ".jsonl"), "w", encoding="utf-8") as f:
                for line in s.lines:
                    f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            with open(os.path.join(HERE, s.name + ".gold.json"), "w", encoding="utf-8") as f:
                json.dump(g, f, ensure_ascii=False, indent=2)
                f.write("\n")
            written += [s.name + ".jsonl", s.name + ".gold.json"]
    # SHA256SUMS last
    with open(os.path.join(HERE, "SHA256SUMS"), "w", encoding="utf-8") as f:
        for name in sorted(written):
            with open(os.path.join(HERE, name), "rb") as fh:
                f.write(f"{hashlib.sha256(fh.read()).hexdigest()}  {name}\n")
    print(f"wrote {len(written)} files + SHA256SUMS")


if __name__ == "__main__":
    main()
