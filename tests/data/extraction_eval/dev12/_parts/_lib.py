"""Tiny stdlib helpers that turn a scripted conversation into Claude Code JSONL lines."""
import datetime as _dt
import json
import uuid

NS = uuid.UUID("6f1d0c1e-31a0-4c55-9d55-0a7b3e9f4c21")
VERSION = "2.1.318"
MODEL = "claude-sonnet-5"


def _hex(seed, n):
    return uuid.uuid5(NS, seed).hex[:n]


class Session:
    def __init__(self, name, cwd, branch, start):
        self.name, self.cwd, self.branch = name, cwd, branch
        self.t = _dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.sid = str(uuid.uuid5(NS, name + ":session"))
        self.n = 0
        self.lines = []
        self.last = None
        self.prompt = None

    # ---- internals
    def _id(self, kind):
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}:{kind}:{self.n}"))

    def _ts(self, dt_s):
        self.t += _dt.timedelta(seconds=dt_s)
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _env(self, typ, dt_s, **extra):
        u = self._id(typ)
        line = {"parentUuid": self.last, "isSidechain": False}
        line.update(extra)
        line.update({"type": typ if "type" not in extra else extra["type"], "uuid": u, "timestamp": self._ts(dt_s),
                     "userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.sid,
                     "version": VERSION, "gitBranch": self.branch})
        self.lines.append(line)
        self.last = u
        return line

    # ---- public
    def snapshot(self):
        mid = str(uuid.uuid5(NS, self.name + ":snap"))
        self.lines.append({"type": "file-history-snapshot", "messageId": mid,
                           "snapshot": {"messageId": mid, "trackedFileBackups": {},
                                        "timestamp": self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z")},
                           "isSnapshotUpdate": False})

    def user(self, text, dt_s=40, blocks=False):
        self.prompt = str(uuid.uuid5(NS, f"{self.name}:prompt:{self.n}"))
        content = [{"type": "text", "text": t} for t in text] if blocks else text
        return self._env("user", dt_s, promptId=self.prompt, type="user",
                         message={"role": "user", "content": content},
                         permissionMode="default", promptSource="user", origin={"kind": "human"})

    def _asst(self, block, stop, dt_s):
        seed = f"{self.name}:msg:{self.n}"
        return self._env("assistant", dt_s, type="assistant",
                         message={"id": "msg_01" + _hex(seed, 22), "type": "message", "role": "assistant",
                                  "model": MODEL, "content": [block], "stop_reason": stop, "stop_sequence": None,
                                  "usage": {"input_tokens": 4, "cache_creation_input_tokens": 640 + 7 * self.n,
                                            "cache_read_input_tokens": 21000 + 310 * self.n,
                                            "output_tokens": 90 + 3 * self.n, "service_tier": "standard"}},
                         requestId="req_011C" + _hex(seed + "r", 20))

    def say(self, text, dt_s=6):
        return self._asst({"type": "text", "text": text}, "end_turn", dt_s)

    def tool(self, name, inp, result, tur=None, is_error=False, dt_s=3, rdt=2):
        tid = "toolu_01" + _hex(f"{self.name}:tool:{self.n}", 22)
        a = self._asst({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use", dt_s)
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        if tur is None:
            tur = self._default_tur(name, inp, result, is_error)
        self._env("user", rdt, promptId=self.prompt, type="user", message={"role": "user", "content": [block]},
                  toolUseResult=tur, sourceToolAssistantUUID=a["uuid"])

    def _default_tur(self, name, inp, result, is_error):
        if name == "Bash":
            return ({"stdout": "", "stderr": result, "interrupted": False, "isImage": False} if is_error
                    else {"stdout": result, "stderr": "", "interrupted": False, "isImage": False})
        if name == "Edit":
            return {"filePath": inp["file_path"], "oldString": inp["old_string"], "newString": inp["new_string"],
                    "replaceAll": False, "userModified": False}
        if name == "Write":
            return {"type": "create", "filePath": inp["file_path"], "content": inp["content"]}
        if name == "Read":
            return {"type": "text", "file": {"filePath": inp["file_path"], "numLines": result.count("\n") + 1}}
        if name == "Grep":
            return {"mode": "content", "numFiles": 1, "content": result}
        return result

    def read(self, path, body, **kw):
        numbered = "\n".join(f"{i:6d}\t{ln}" for i, ln in enumerate(body.split("\n"), 1))
        self.tool("Read", {"file_path": path}, numbered, **kw)

    def bash(self, cmd, desc, out, is_error=False, **kw):
        if is_error:
            out = "Exit code 1\n" + out
        self.tool("Bash", {"command": cmd, "description": desc}, out, is_error=is_error, **kw)

    def edit(self, path, old, new, **kw):
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                  f"The file {path} has been updated successfully.", **kw)

    def write(self, path, content, **kw):
        self.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}", **kw)

    def maple_search(self, query, results):
        payload = json.dumps({"query": query, "results": results}, ensure_ascii=False)
        tid = "toolu_01" + _hex(f"{self.name}:tool:{self.n}", 22)
        a = self._asst({"type": "tool_use", "id": tid, "name": "mcp__maple__memory_search",
                        "input": {"query": query, "limit": 5}}, "tool_use", 3)
        self._env("user", 1, promptId=self.prompt, type="user",
                  message={"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                        "content": [{"type": "text", "text": payload}]}]},
                  toolUseResult=[{"type": "text", "text": payload}], sourceToolAssistantUUID=a["uuid"])

    def recall_attachment(self, event, items, dt_s=0.05):
        body = "<maple-memory>\nRelevant memories for this project:\n" + "\n".join(
            f'- #{i} {layer} \u00b7 {kind}: "{text}"' for i, layer, kind, text in items) + "\n</maple-memory>"
        return self._env("attachment", dt_s, type="attachment",
                         attachment={"type": "hook_additional_context", "content": [body],
                                     "hookName": event, "hookEvent": event})

    @staticmethod
    def reminder(items):
        return ("<system-reminder>\n<maple-memory>\n" + "\n".join(
            f'- #{i} {layer} \u00b7 {kind}: "{text}"' for i, layer, kind, text in items) +
            "\n</maple-memory>\n</system-reminder>")

    def stop_hook(self):
        self._env("system", 0.3, type="system", subtype="stop_hook_summary", hookCount=1,
                  hookInfos=[{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/stop.py"}], hookErrors=[],
                  preventedContinuation=False, stopReason="", hasOutput=False, level="suggestion")

    def title(self, text):
        self.lines.append({"type": "ai-title", "aiTitle": text, "sessionId": self.sid})

    def dump(self):
        return "".join(json.dumps(l, ensure_ascii=False) + "\n" for l in self.lines)
