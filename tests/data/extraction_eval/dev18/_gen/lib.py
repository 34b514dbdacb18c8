"""Tiny deterministic builder for Claude Code-shaped JSONL transcripts (stdlib only)."""

import datetime as dt
import hashlib
import json
import uuid

NS = uuid.UUID("3d6f0b7c-58a1-4e0f-9a52-1c7e4b2d9f60")


def _h(s, n):
    return hashlib.sha256(s.encode()).hexdigest()[:n]


def numbered(text, start=1):
    return "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(text.split("\n"), start))


class Session:
    def __init__(self, name, project, start, branch, version, model="claude-sonnet-5"):
        self.name = name
        self.cwd = f"/home/dev/work/{project}"
        self.t = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.branch = branch
        self.version = version
        self.model = model
        self.sid = str(uuid.uuid5(NS, name + ":session"))
        self.lines = []
        self.n = 0
        self.last = None
        self.msg = None
        self.req = None
        self.prompt_id = None
        self.k = 0
        self.tool_ids = {}
        first = self._uuid()
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": first,
                "snapshot": {"messageId": first, "trackedFileBackups": {}, "timestamp": self._iso()},
                "isSnapshotUpdate": False,
            }
        )
        self._pending_root = first

    # -- helpers
    def _uuid(self):
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}:{self.n}"))

    def _iso(self):
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _adv(self, secs):
        self.t += dt.timedelta(seconds=secs)

    def _env(self, typ, adv, uid=None):
        self._adv(adv)
        uid = uid or self._uuid()
        d = {"parentUuid": self.last, "isSidechain": False, "type": typ}
        return d, uid

    def _finish(self, d, uid):
        d.update(
            {
                "uuid": uid,
                "timestamp": self._iso(),
                "userType": "external",
                "entrypoint": "cli",
                "cwd": self.cwd,
                "sessionId": self.sid,
                "version": self.version,
                "gitBranch": self.branch,
            }
        )
        self.lines.append(d)
        self.last = uid
        return uid

    def _usage(self, out):
        self.k += 1
        return {
            "input_tokens": 3 + self.k % 5,
            "cache_creation_input_tokens": 400 + (self.k * 137) % 2100,
            "cache_read_input_tokens": 18000 + self.k * 911,
            "output_tokens": out,
            "service_tier": "standard",
        }

    # -- user side
    def user(self, content, adv=40):
        """A human prompt (string, or list of text blocks)."""
        self.prompt_id = str(uuid.uuid5(NS, f"{self.name}:prompt:{self.n}"))
        d, uid = self._env("user", adv)
        d["promptId"] = self.prompt_id
        if isinstance(content, list):
            content = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
        d["message"] = {"role": "user", "content": content}
        d["permissionMode"] = "default"
        d["promptSource"] = "user"
        d["origin"] = {"kind": "human"}
        self.msg = None
        return self._finish(d, uid)

    def hook_context(self, event, text, adv=0.05):
        d, uid = self._env("attachment", adv)
        hook_name = "SessionStart:startup" if event == "SessionStart" else event
        d["attachment"] = {
            "type": "hook_additional_context",
            "content": [text],
            "hookName": hook_name,
            "hookEvent": event,
        }
        return self._finish(d, uid)

    # -- assistant side
    def _assistant(self, block, adv, stop, out):
        if self.msg is None:
            self.msg = "msg_01" + _h(f"{self.name}:msg:{self.n}", 22)
            self.req = "req_011C" + _h(f"{self.name}:req:{self.n}", 20)
        d, uid = self._env("assistant", adv)
        d["message"] = {
            "id": self.msg,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(out),
        }
        d["requestId"] = self.req
        return self._finish(d, uid)

    def think(self, text, adv=3):
        sig = "Eq" + _h(self.name + text, 40) + "...redacted"
        return self._assistant({"type": "thinking", "thinking": text, "signature": sig}, adv, None, 30)

    def say(self, text, adv=6):
        return self._assistant({"type": "text", "text": text}, adv, "end_turn", max(20, len(text) // 4))

    def tool(self, name, inp, result, tur=None, is_error=False, adv=3, radv=2):
        tid = "toolu_01" + _h(f"{self.name}:tool:{self.n}", 22)
        a = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, adv, "tool_use", 90)
        d, uid = self._env("user", radv)
        d["promptId"] = self.prompt_id
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        d["message"] = {"role": "user", "content": [block]}
        if tur is None:
            tur = self._default_tur(name, inp, result, is_error)
        d["toolUseResult"] = tur
        d["sourceToolAssistantUUID"] = a
        self.msg = None
        return self._finish(d, uid)

    def _default_tur(self, name, inp, result, is_error):
        if name == "Bash":
            if is_error:
                return {"stdout": "", "stderr": result, "interrupted": False, "isImage": False}
            return {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}
        if name in ("Edit",):
            return {
                "filePath": inp["file_path"],
                "oldString": inp["old_string"],
                "newString": inp["new_string"],
                "replaceAll": False,
                "userModified": False,
            }
        if name == "Write":
            return {"type": "create", "filePath": inp["file_path"], "content": inp["content"]}
        if name == "Grep":
            lines = [line for line in result.split("\n") if line]
            return {
                "mode": "content",
                "numFiles": len({line.split(":")[0] for line in lines}),
                "filenames": [],
                "content": result,
                "numLines": len(lines),
            }
        if isinstance(result, list):
            return result
        return {"type": "text", "content": result}

    # convenience wrappers
    def read(self, path, text, start=1, adv=3):
        body = numbered(text, start)
        n = len(text.split("\n"))
        tur = {
            "type": "text",
            "file": {"filePath": path, "content": text, "numLines": n, "startLine": start, "totalLines": start + n - 1},
        }
        return self.tool("Read", {"file_path": path}, body, tur=tur, adv=adv)

    def bash(self, cmd, desc, out, is_error=False, adv=3, radv=4):
        return self.tool("Bash", {"command": cmd, "description": desc}, out, is_error=is_error, adv=adv, radv=radv)

    def edit(self, path, old, new, adv=4):
        return self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            f"The file {path} has been updated successfully.",
            adv=adv,
        )

    def write(self, path, content, adv=5):
        return self.tool(
            "Write", {"file_path": path, "content": content}, f"File created successfully at: {path}", adv=adv
        )

    def grep(self, pattern, path, out, adv=3):
        return self.tool("Grep", {"pattern": pattern, "path": path, "output_mode": "content", "-n": True}, out, adv=adv)

    def memory_search(self, query, results, adv=3):
        payload = json.dumps({"query": query, "project": self.cwd, "results": results}, ensure_ascii=False)
        content = [{"type": "text", "text": payload}]
        return self.tool("mcp__maple__memory_search", {"query": query, "limit": 5}, content, tur=content, adv=adv)

    def stop_hook(self):
        d, uid = self._env("system", 0.3)
        d.update(
            {
                "subtype": "stop_hook_summary",
                "hookCount": 1,
                "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.py"}],
                "hookErrors": [],
                "preventedContinuation": False,
                "stopReason": "",
                "hasOutput": False,
                "level": "suggestion",
            }
        )
        return self._finish(d, uid)

    def title(self, t):
        self.lines.append({"type": "ai-title", "aiTitle": t, "sessionId": self.sid})

    def dump(self, path):
        with open(path, "w", encoding="utf-8") as f:
            for line in self.lines:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def maple_block(items):
    """items: (id, layer, kind, text) -> <maple-memory> block in the recall line format."""
    rows = "\n".join(f'- #{i} {layer} \u00b7 {kind}: "{text}"' for i, layer, kind, text in items)
    return f"<maple-memory>\n{rows}\n</maple-memory>"


def write_gold(path, gold):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(gold, f, ensure_ascii=False, indent=2)
        f.write("\n")
