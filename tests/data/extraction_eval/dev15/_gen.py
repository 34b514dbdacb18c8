#!/usr/bin/env python3
"""Build the dev15 extraction-eval split (blind trial 34) (stdlib only, deterministic).

    python3 _gen.py        # writes <id>_<project>_<topic>.jsonl + .gold.json next to this file

Each session lives in _parts/<id>.py and defines META (name, project, order, language, branch,
start, version, title), build(s) (the conversation, written against the Session helpers below) and
GOLD (expected / acceptable / forbidden / secrets).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import os
import random
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
PARTS = os.path.join(HERE, "_parts")
NS = uuid.UUID("6f1d3c2a-8e4b-4b7a-9c11-0d3e5f7a9b21")
MODEL = "claude-sonnet-5"


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


class Session:
    def __init__(self, meta: dict):
        self.meta = meta
        self.name = meta["name"]
        self.cwd = "/home/dev/work/" + meta["project"]
        self.sid = str(uuid.uuid5(NS, "session/" + self.name))
        self.branch = meta["branch"]
        self.version = meta["version"]
        self.t = dt.datetime.fromisoformat(meta["start"].replace("Z", "+00:00"))
        self.rng = random.Random(self.name)
        self.lines: list[dict] = []
        self.n = 0
        self.last_uuid = None
        self.prompt_id = None
        self.cache_read = 18000 + self.rng.randint(0, 6000)

    # ---- helpers -------------------------------------------------------------------------
    def _uuid(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}/{self.n}"))

    def _tick(self, lo: float, hi: float) -> str:
        self.t += dt.timedelta(seconds=round(self.rng.uniform(lo, hi), 3))
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _env(self, ts: str) -> dict:
        return {
            "uuid": self._uuid(),
            "timestamp": ts,
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": self.branch,
        }

    def _push(self, line: dict) -> dict:
        self.lines.append(line)
        if line.get("uuid"):
            self.last_uuid = line["uuid"]
        return line

    # ---- line builders -------------------------------------------------------------------
    def snapshot(self):
        mid = str(uuid.uuid5(NS, f"{self.name}/snapshot"))
        ts = self.t.strftime("%Y-%m-%dT%H:%M:%S.000Z")
        self.lines.append(
            {
                "type": "file-history-snapshot",
                "messageId": mid,
                "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": ts},
                "isSnapshotUpdate": False,
            }
        )

    def attachment(self, content: str, hook: str):
        ts = self._tick(0.02, 0.4) if self.last_uuid else self._tick(0.5, 2)
        env = self._env(ts)
        line = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "type": "attachment",
            "attachment": {
                "type": "hook_additional_context",
                "content": [content],
                "hookName": hook,
                "hookEvent": hook,
            },
        }
        line.update(env)
        return self._push(line)

    def user(self, text, gap=(40, 150)):
        self.prompt_id = str(uuid.uuid5(NS, f"{self.name}/prompt/{self.n}"))
        ts = self._tick(*gap)
        line = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "promptId": self.prompt_id,
            "type": "user",
            "message": {"role": "user", "content": text},
            "permissionMode": "default",
            "promptSource": "user",
            "origin": {"kind": "human"},
        }
        line.update(self._env(ts))
        return self._push(line)

    def _assistant(self, block: dict, stop: str | None, out_tokens: int, msg_id=None, gap=(2, 6)):
        ts = self._tick(*gap)
        seed = f"{self.name}/{self.n}/msg"
        msg_id = msg_id or "msg_01" + _hex(seed, 22)
        self.cache_read += self.rng.randint(200, 1400)
        line = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "type": "assistant",
            "message": {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [block],
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": self.rng.randint(3, 9),
                    "cache_creation_input_tokens": self.rng.randint(300, 2600),
                    "cache_read_input_tokens": self.cache_read,
                    "output_tokens": out_tokens,
                    "service_tier": "standard",
                },
            },
            "requestId": "req_011C" + _hex(msg_id, 20),
        }
        line.update(self._env(ts))
        return self._push(line)

    def think(self, text: str) -> str:
        """A thinking line; returns the message id so the next block can share it."""
        msg_id = "msg_01" + _hex(f"{self.name}/{self.n}/think", 22)
        self._assistant(
            {"type": "thinking", "thinking": text, "signature": "Eq" + _hex(text, 40) + "...redacted"},
            None,
            max(8, len(text) // 4),
            msg_id=msg_id,
            gap=(3, 9),
        )
        return msg_id

    def say(self, text: str, msg_id=None):
        gap = (0.3, 1.5) if msg_id else (4, 18)
        return self._assistant(
            {"type": "text", "text": text}, "end_turn", max(12, len(text) // 3), msg_id=msg_id, gap=gap
        )

    def tool(self, name: str, inp: dict, result, tur=None, is_error=False, msg_id=None, run=(0.3, 3)):
        """tool_use line + tool_result line. `result` is the tool_result content (str or blocks);
        `tur` the toolUseResult (derived from the tool when omitted)."""
        tid = "toolu_01" + _hex(f"{self.name}/{self.n}/tool", 22)
        a = self._assistant(
            {"type": "tool_use", "id": tid, "name": name, "input": inp},
            "tool_use",
            self.rng.randint(60, 260),
            msg_id=msg_id,
            gap=(0.3, 1.2) if msg_id else (2, 6),
        )
        ts = self._tick(*run)
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        if tur is None:
            tur = self._default_tur(name, inp, result, is_error)
        line = {
            "parentUuid": a["uuid"],
            "isSidechain": False,
            "promptId": self.prompt_id,
            "type": "user",
            "message": {"role": "user", "content": [block]},
            "toolUseResult": tur,
            "sourceToolAssistantUUID": a["uuid"],
        }
        line.update(self._env(ts))
        return self._push(line)

    @staticmethod
    def _default_tur(name, inp, result, is_error):
        text = (
            result if isinstance(result, str) else "\n".join(b.get("text", "") for b in result if isinstance(b, dict))
        )
        if name == "Read":
            body = "\n".join(ln.split("\t", 1)[1] if "\t" in ln else ln for ln in text.split("\n"))
            n = text.count("\n") + 1
            return {
                "type": "text",
                "file": {"filePath": inp["file_path"], "content": body, "numLines": n, "startLine": 1, "totalLines": n},
            }
        if name == "Bash":
            if is_error:
                return {"stdout": "", "stderr": text, "interrupted": False, "isImage": False}
            return {"stdout": text, "stderr": "", "interrupted": False, "isImage": False}
        if name == "Edit":
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
            files = sorted({ln.split(":", 1)[0] for ln in text.split("\n") if ":" in ln})
            return {
                "mode": "content",
                "numFiles": len(files),
                "filenames": files,
                "content": text,
                "numLines": text.count("\n") + 1,
            }
        return [{"type": "text", "text": text}]

    def read(self, path: str, body: str, msg_id=None):
        rows = body.rstrip("\n").split("\n")
        text = "\n".join(f"{i:6d}\t{r}" for i, r in enumerate(rows, 1))
        return self.tool("Read", {"file_path": path}, text, msg_id=msg_id, run=(0.1, 0.6))

    def bash(self, command: str, out: str, desc: str, is_error=False, run=(0.5, 4), msg_id=None):
        return self.tool(
            "Bash", {"command": command, "description": desc}, out, is_error=is_error, run=run, msg_id=msg_id
        )

    def edit(self, path: str, old: str, new: str, msg_id=None):
        return self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            f"The file {path} has been updated successfully.",
            msg_id=msg_id,
            run=(0.1, 0.5),
        )

    def stop_hook(self):
        ts = self._tick(0.1, 0.5)
        line = {
            "parentUuid": self.last_uuid,
            "isSidechain": False,
            "type": "system",
            "subtype": "stop_hook_summary",
            "hookCount": 1,
            "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}],
            "hookErrors": [],
            "preventedContinuation": False,
            "stopReason": "",
            "hasOutput": False,
            "level": "suggestion",
        }
        line.update(self._env(ts))
        return self._push(line)

    def title(self, text: str):
        self.lines.append({"type": "ai-title", "aiTitle": text, "sessionId": self.sid})


def load_part(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    for fn in sorted(os.listdir(PARTS)):
        if not (fn.endswith(".py") and fn[:2] in ("a1", "a2", "a3", "b1", "b2", "b3")):
            continue
        mod = load_part(os.path.join(PARTS, fn))
        meta = mod.META
        s = Session(meta)
        s.snapshot()
        mod.build(s)
        s.title(meta["title"])
        with open(os.path.join(HERE, meta["name"] + ".jsonl"), "w", encoding="utf-8") as f:
            for line in s.lines:
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
        gold = {"session": meta["name"], "project": s.cwd, "order": meta["order"], "language": meta["language"]}
        gold.update(mod.GOLD)
        for k in ("expected", "acceptable", "forbidden", "secrets"):
            gold.setdefault(k, [])
        with open(os.path.join(HERE, meta["name"] + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")
        print(f"{meta['name']}: {len(s.lines)} lines, {len(gold['expected'])} expected")


if __name__ == "__main__":
    main()
