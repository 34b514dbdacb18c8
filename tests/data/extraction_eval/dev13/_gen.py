#!/usr/bin/env python3
"""Generator for the trial32 extraction-eval split (stdlib only, deterministic).

    python3 _gen.py          # rewrites every NAME.jsonl / NAME.gold.json in this folder + SHA256SUMS

Hand-written content lives in _parts/ (one module per project); this file is the transcript builder:
Claude Code line envelopes (uuid/parentUuid chain, sessionId, cwd, version, gitBranch, promptId, ...),
one content block per assistant line, tool_use -> tool_result pairs with toolUseResult shapes modelled
on the fixtures, MAPLE recall blocks (hook attachments, <system-reminder>, memory_search results).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import glob
import json
import os
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
NS = uuid.UUID("6f1d3c2e-9a41-4b7e-8c55-32a0e1f7d9b4")
VERSION = "2.1.334"
MODEL = "claude-sonnet-5"


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def numbered(text: str, start: int = 1) -> str:
    """Render file text the way the Read tool does (6-wide line number, tab)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(f"{i:>6}\t{l}" for i, l in enumerate(lines, start))


def recall_block(items, header="Relevant memories from earlier sessions (MAPLE):"):
    """items: list of (id, layer, kind, text) -> <maple-memory> block in the recall-line format."""
    body = "\n".join(f'- #{i} {layer} \u00b7 {kind}: "{t}"' for i, layer, kind, t in items)
    return f"<maple-memory>\n{header}\n{body}\n</maple-memory>"


class Session:
    def __init__(self, name, project, branch, start, order, language, title):
        self.name = name
        self.project = project
        self.cwd = f"/home/dev/work/{project}"
        self.branch = branch
        self.t = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.order = order
        self.language = language
        self.title = title
        self.session_id = str(uuid.uuid5(NS, name + ":session"))
        self.lines: list[dict] = []
        self.n = 0
        self.last_uuid = None
        self.prompt_id = None
        self.msg_id = None
        self.req_id = None
        self.tool_n = 0
        self.cache_read = 18000 + int(_hex(name, 4), 16) % 6000
        self.gold = {"expected": [], "acceptable": [], "forbidden": [], "secrets": []}

    # ---- helpers -------------------------------------------------------------------------------
    def _uuid(self, kind="line"):
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}:{kind}:{self.n}"))

    def _ts(self, secs):
        self.t += dt.timedelta(seconds=secs)
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _env(self, typ, secs, **extra):
        u = self._uuid()
        line = {"parentUuid": self.last_uuid, "isSidechain": False}
        line.update(extra)
        line["type"] = typ
        line.update({"uuid": u, "timestamp": self._ts(secs), "userType": "external", "entrypoint": "cli",
                     "cwd": self.cwd, "sessionId": self.session_id, "version": VERSION,
                     "gitBranch": self.branch})
        # keep the key order close to real lines: message/attachment first
        self.last_uuid = u
        self.lines.append(line)
        return line

    def _reorder(self, line, first_keys):
        items = list(line.items())
        head = [(k, v) for k, v in items if k in ("parentUuid", "isSidechain", "promptId", "type")]
        mid = [(k, line[k]) for k in first_keys if k in line]
        rest = [(k, v) for k, v in items if k not in dict(head) and k not in first_keys]
        line.clear()
        line.update(head + mid + rest)

    # ---- line kinds ----------------------------------------------------------------------------
    def snapshot(self):
        mid = str(uuid.uuid5(NS, f"{self.name}:snapshot"))
        self.lines.append({"type": "file-history-snapshot", "messageId": mid,
                           "snapshot": {"messageId": mid, "trackedFileBackups": {},
                                        "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z")},
                           "isSnapshotUpdate": False})

    def user(self, content, secs=40):
        """A human prompt. content: str, or list of text strings (-> text blocks)."""
        self.prompt_id = str(uuid.uuid5(NS, f"{self.name}:prompt:{self.n}"))
        self.msg_id = None
        if isinstance(content, list):
            content = [{"type": "text", "text": c} for c in content]
        line = self._env("user", secs, promptId=self.prompt_id, message={"role": "user", "content": content},
                         permissionMode="default", promptSource="user", origin={"kind": "human"})
        self._reorder(line, ["message", "permissionMode", "promptSource", "origin"])
        return line

    def hook_context(self, event, block, secs=0.05):
        line = self._env("attachment", secs, attachment={"type": "hook_additional_context", "content": [block],
                                                         "hookName": event, "hookEvent": event})
        self._reorder(line, ["attachment"])
        return line

    def _new_msg(self):
        self.msg_id = "msg_01" + _hex(f"{self.name}:msg:{self.n}", 22)
        self.req_id = "req_011C" + _hex(f"{self.name}:req:{self.n}", 20)

    def _assistant(self, block, stop, secs, out_tokens):
        if self.msg_id is None:
            self._new_msg()
        self.cache_read += 900 + (self.n * 37) % 700
        usage = {"input_tokens": 4 + self.n % 5, "cache_creation_input_tokens": 300 + (self.n * 53) % 1500,
                 "cache_read_input_tokens": self.cache_read,
                 "cache_creation": {"ephemeral_5m_input_tokens": 300 + (self.n * 53) % 1500,
                                    "ephemeral_1h_input_tokens": 0},
                 "output_tokens": out_tokens, "service_tier": "standard"}
        msg = {"id": self.msg_id, "type": "message", "role": "assistant", "model": MODEL, "content": [block],
               "stop_reason": stop, "stop_sequence": None, "usage": usage}
        line = self._env("assistant", secs, message=msg, requestId=self.req_id)
        self._reorder(line, ["message", "requestId"])
        return line

    def think(self, text, secs=3):
        sig = "Eq" + _hex(f"{self.name}:sig:{self.n}", 40) + "...redacted"
        return self._assistant({"type": "thinking", "thinking": text, "signature": sig}, None, secs,
                               20 + len(text) // 4)

    def say(self, text, secs=6, final=True):
        line = self._assistant({"type": "text", "text": text}, "end_turn" if final else None, secs,
                               30 + len(text) // 4)
        if final:
            self.msg_id = None
        return line

    def tool(self, name, inp, result, tur=None, is_error=False, secs=3, run_secs=2):
        """assistant tool_use line + user tool_result line. result: str or list of content blocks."""
        self.tool_n += 1
        tid = "toolu_01" + _hex(f"{self.name}:tool:{self.tool_n}", 22)
        a = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use", secs, 90)
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        extra = {"promptId": self.prompt_id, "message": {"role": "user", "content": [block]}}
        if tur is not None:
            extra["toolUseResult"] = tur
        extra["sourceToolAssistantUUID"] = a["uuid"]
        line = self._env("user", run_secs, **extra)
        self._reorder(line, ["message", "toolUseResult", "sourceToolAssistantUUID"])
        self.msg_id = None
        return line

    # convenience wrappers for the usual tools ---------------------------------------------------
    def bash(self, command, output, description, is_error=False, secs=3, run_secs=4):
        if is_error:
            tur = {"stdout": "", "stderr": output, "interrupted": False, "isImage": False}
        else:
            tur = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        return self.tool("Bash", {"command": command, "description": description}, output, tur, is_error,
                         secs, run_secs)

    def read(self, path, text, secs=3):
        n = len(text.rstrip("\n").split("\n"))
        tur = {"type": "text", "file": {"filePath": path, "content": text, "numLines": n, "startLine": 1,
                                        "totalLines": n}}
        return self.tool("Read", {"file_path": path}, numbered(text), tur, secs=secs, run_secs=1)

    def edit(self, path, old, new, secs=4):
        tur = {"filePath": path, "oldString": old, "newString": new, "originalFile": None,
               "structuredPatch": [], "replaceAll": False, "userModified": False}
        return self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                         f"The file {path} has been updated successfully.", tur, secs=secs, run_secs=1)

    def write(self, path, content, secs=8):
        tur = {"type": "create", "filePath": path, "content": content, "structuredPatch": []}
        return self.tool("Write", {"file_path": path, "content": content},
                         f"File created successfully at: {path}", tur, secs=secs, run_secs=1)

    def grep(self, pattern, path, output, mode="content", secs=3):
        inp = {"pattern": pattern, "path": path, "output_mode": mode}
        if mode == "content":
            inp["-n"] = True
        lines = output.split("\n")
        files = sorted({l.split(":", 1)[0] for l in lines if ":" in l}) if mode == "content" else lines
        tur = {"mode": mode, "numFiles": len(files), "filenames": files if mode != "content" else [],
               "content": output if mode == "content" else "", "numLines": len(lines)}
        return self.tool("Grep", inp, output, tur, secs=secs, run_secs=1)

    def glob(self, pattern, path, files, secs=3):
        tur = {"filenames": files, "durationMs": 41, "numFiles": len(files), "truncated": False}
        return self.tool("Glob", {"pattern": pattern, "path": path}, "\n".join(files), tur, secs=secs,
                         run_secs=1)

    def memory_search(self, query, results, secs=3):
        text = json.dumps({"query": query, "project": self.cwd, "results": results}, ensure_ascii=False,
                          indent=2)
        blocks = [{"type": "text", "text": text}]
        return self.tool("mcp__maple__memory_search", {"query": query, "project": self.cwd, "limit": 5},
                         blocks, blocks, secs=secs, run_secs=1)

    def stop_summary(self, secs=0.3):
        line = self._env("system", secs, subtype="stop_hook_summary", hookCount=1,
                         hookInfos=[{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}], hookErrors=[],
                         preventedContinuation=False, stopReason="", hasOutput=False, level="suggestion")
        self._reorder(line, ["subtype"])
        return line

    def finish(self):
        self.lines.append({"type": "ai-title", "aiTitle": self.title, "sessionId": self.session_id})

    # ---- gold ----------------------------------------------------------------------------------
    def expect(self, id, layer, kind, lang, text, must, supersedes=None, chosen=None, over=None, why=None):
        e = {"id": id, "layer": layer, "kind": kind, "lang": lang, "text": text, "must": must}
        if layer == "decision":
            e.update({"chosen": chosen, "over": over or [], "why": why or []})
        if supersedes:
            e["supersedes"] = supersedes
        self.gold["expected"].append(e)

    def acceptable(self, must, note):
        self.gold["acceptable"].append({"must": must, "note": note})

    def forbid(self, *strings):
        self.gold["forbidden"].extend(strings)

    def secret(self, *strings):
        self.gold["secrets"].extend(strings)

    def write_files(self, outdir):
        with open(os.path.join(outdir, self.name + ".jsonl"), "w", encoding="utf-8") as f:
            for l in self.lines:
                f.write(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n")
        gold = {"session": self.name, "project": self.cwd, "order": self.order, "language": self.language}
        gold.update(self.gold)
        with open(os.path.join(outdir, self.name + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")


def main():
    sys.path.insert(0, os.path.join(HERE, "_parts"))
    import pa_tessera
    import pb_chejian
    sessions = pa_tessera.build(Session) + pb_chejian.build(Session)
    for p in glob.glob(os.path.join(HERE, "*.jsonl")) + glob.glob(os.path.join(HERE, "*.gold.json")):
        os.remove(p)
    for s in sessions:
        s.write_files(HERE)
        print(f"{s.name}: {len(s.lines)} lines, {len(s.gold['expected'])} expected")
    names = sorted(glob.glob(os.path.join(HERE, "*.jsonl")) + glob.glob(os.path.join(HERE, "*.gold.json")))
    with open(os.path.join(HERE, "SHA256SUMS"), "w") as f:
        for p in names:
            f.write(f"{hashlib.sha256(open(p, 'rb').read()).hexdigest()}  {os.path.basename(p)}\n")


if __name__ == "__main__":
    main()
