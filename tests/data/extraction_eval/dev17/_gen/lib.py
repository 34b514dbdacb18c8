"""Tiny stdlib helper to write Claude Code style JSONL transcripts (deterministic)."""

import datetime as dt
import hashlib
import json
import os
import uuid

NS = uuid.UUID("6f1d0c52-8a7e-4b1f-9d0e-3c5a7b9e1f24")
MODEL = "claude-sonnet-5"


def _hex(seed, n):
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def _alnum(seed, n):
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789"
    h = hashlib.sha256(seed.encode()).digest()
    while len(h) < n:
        h += hashlib.sha256(h).digest()
    return "".join(alphabet[b % len(alphabet)] for b in h[:n])


def numbered(text, start=1):
    out = []
    for i, line in enumerate(text.split("\n"), start):
        out.append(f"{i:6d}\t{line}")
    return "\n".join(out)


class Session:
    def __init__(self, name, cwd, branch, start, version):
        self.name = name
        self.cwd = cwd
        self.branch = branch
        self.version = version
        self.t = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.sid = str(uuid.uuid5(NS, name + ":session"))
        self.lines = []
        self.last = None
        self.k = 0
        self.prompt_id = None
        self.msg_id = None
        self.req_id = None

    # ---- helpers
    def _u(self):
        self.k += 1
        return str(uuid.uuid5(NS, f"{self.name}:{self.k}"))

    def _ts(self, dsec):
        self.t += dt.timedelta(seconds=dsec)
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _tail(self):
        return {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
        }

    def _push(self, line):
        self.lines.append(line)
        if "uuid" in line:
            self.last = line["uuid"]
        return line

    # ---- line kinds
    def snapshot(self):
        mid = str(uuid.uuid5(NS, self.name + ":snap"))
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": mid,
                "snapshot": {
                    "messageId": mid,
                    "trackedFileBackups": {},
                    "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                },
                "isSnapshotUpdate": False,
            }
        )

    def user(self, content, dsec=40):
        self.prompt_id = str(uuid.uuid5(NS, f"{self.name}:prompt:{self.k}"))
        u = self._u()
        line = {
            "parentUuid": self.last,
            "isSidechain": False,
            "promptId": self.prompt_id,
            "type": "user",
            "message": {"role": "user", "content": content},
            "permissionMode": "default",
            "promptSource": "user",
            "origin": {"kind": "human"},
            "uuid": u,
            "timestamp": self._ts(dsec),
        }
        line.update(self._tail())
        self.msg_id = None
        return self._push(line)

    def attachment(self, event, content, hook_name=None, dsec=0.05, root=False):
        u = self._u()
        line = {
            "parentUuid": None if root else self.last,
            "isSidechain": False,
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": content,
                "hookName": hook_name or event,
                "hookEvent": event,
            },
            "uuid": u,
            "timestamp": self._ts(dsec),
        }
        line.update(self._tail())
        return self._push(line)

    def _assistant(self, block, stop_reason, dsec, new_msg):
        if new_msg or self.msg_id is None:
            seed = f"{self.name}:msg:{self.k}"
            self.msg_id = "msg_01" + _alnum(seed, 22)
            self.req_id = "req_011C" + _alnum(seed + "r", 20)
        u = self._u()
        line = {
            "parentUuid": self.last,
            "isSidechain": False,
            "type": "assistant",
            "message": {
                "id": self.msg_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 4 + self.k % 7,
                    "cache_creation_input_tokens": 300 + 37 * self.k,
                    "cache_read_input_tokens": 18000 + 911 * self.k,
                    "output_tokens": 40 + len(json.dumps(block, ensure_ascii=False)) // 4,
                    "service_tier": "standard",
                },
            },
            "requestId": self.req_id,
            "uuid": u,
            "timestamp": self._ts(dsec),
        }
        line.update(self._tail())
        return self._push(line)

    def think(self, text, dsec=3):
        sig = "Eq" + _alnum(self.name + text, 60)
        return self._assistant({"type": "thinking", "thinking": text, "signature": sig}, None, dsec, True)

    def say(self, text, dsec=6, cont=False):
        """A text block. It continues the message of a preceding thinking / continued text block;
        cont=True leaves the message open (stop_reason null) so a tool_use can follow in the same message."""
        nm = self.msg_id is None or not self._last_was_open()
        return self._assistant({"type": "text", "text": text}, None if cont else "end_turn", dsec, nm)

    def _last_was_open(self):
        last = self.lines[-1]
        return last.get("type") == "assistant" and last["message"]["stop_reason"] is None

    def tool(self, name, inp, result, tur=None, is_error=False, dsec=3, rdsec=2, result_blocks=None):
        nm = self.msg_id is None or not self._last_was_open()
        tid = "toolu_01" + _alnum(f"{self.name}:tool:{self.k}", 22)
        a = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use", dsec, nm)
        u = self._u()
        block = {
            "tool_use_id": tid,
            "type": "tool_result",
            "content": result_blocks if result_blocks is not None else result,
        }
        if is_error:
            block["is_error"] = True
        line = {
            "parentUuid": self.last,
            "isSidechain": False,
            "promptId": self.prompt_id,
            "type": "user",
            "message": {"role": "user", "content": [block]},
        }
        if tur is not None:
            line["toolUseResult"] = tur
        line.update({"sourceToolAssistantUUID": a["uuid"], "uuid": u, "timestamp": self._ts(rdsec)})
        line.update(self._tail())
        self.msg_id = None
        return self._push(line)

    # convenience wrappers for the built-in tools
    def read(self, path, text, dsec=3):
        body = numbered(text)
        n = text.count("\n") + 1
        return self.tool(
            "Read",
            {"file_path": path},
            body,
            {
                "type": "text",
                "file": {"filePath": path, "content": text, "numLines": n, "startLine": 1, "totalLines": n},
            },
            dsec=dsec,
        )

    def bash(self, cmd, desc, out, err=False, dsec=3, rdsec=6):
        res = ("Exit code 1\n" + out) if err else out
        tur = {"stdout": "" if err else out, "stderr": out if err else "", "interrupted": False, "isImage": False}
        return self.tool("Bash", {"command": cmd, "description": desc}, res, tur, is_error=err, dsec=dsec, rdsec=rdsec)

    def edit(self, path, old, new, dsec=4):
        return self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            f"The file {path} has been updated successfully.",
            {"filePath": path, "oldString": old, "newString": new, "replaceAll": False, "userModified": False},
            dsec=dsec,
        )

    def write(self, path, content, dsec=5):
        return self.tool(
            "Write",
            {"file_path": path, "content": content},
            f"File created successfully at: {path}",
            {"type": "create", "filePath": path, "content": content},
            dsec=dsec,
        )

    def grep(self, pattern, path, out, glob=None, dsec=3):
        inp = {"pattern": pattern, "path": path, "output_mode": "content", "-n": True}
        if glob:
            inp["glob"] = glob
        n = out.count("\n") + 1 if out else 0
        files = sorted({line.split(":", 1)[0] for line in out.split("\n") if line})
        return self.tool(
            "Grep",
            inp,
            out,
            {"mode": "content", "numFiles": len(files), "filenames": files, "content": out, "numLines": n},
            dsec=dsec,
        )

    def maple_search(self, query, results, dsec=3):
        text = json.dumps({"query": query, "results": results}, ensure_ascii=False)
        blocks = [{"type": "text", "text": text}]
        return self.tool(
            "mcp__maple__memory_search", {"query": query, "limit": 5}, None, blocks, dsec=dsec, result_blocks=blocks
        )

    def stop_hook(self, dsec=0.4):
        u = self._u()
        line = {
            "parentUuid": self.last,
            "isSidechain": False,
            "type": "system",
            "subtype": "stop_hook_summary",
            "hookCount": 1,
            "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.py"}],
            "hookErrors": [],
            "preventedContinuation": False,
            "stopReason": "",
            "hasOutput": False,
            "level": "suggestion",
            "uuid": u,
            "timestamp": self._ts(dsec),
        }
        line.update(self._tail())
        return self._push(line)

    def title(self, text):
        self.lines.append({"type": "ai-title", "aiTitle": text, "sessionId": self.sid})

    def dump(self, folder):
        path = os.path.join(folder, self.name + ".jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for line in self.lines:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        return path


def recall_block(items):
    """items: list of (id, layer, kind, text) -> lines in the maple recall format"""
    return "\n".join(f'- #{i} {layer} \u00b7 {kind}: "{text}"' for i, layer, kind, text in items)


def write_gold(folder, gold):
    path = os.path.join(folder, gold["session"] + ".gold.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(gold, f, ensure_ascii=False, indent=2)
        f.write("\n")
    return path
