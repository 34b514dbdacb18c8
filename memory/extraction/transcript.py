"""Claude Code transcripts (and plain conversations) as clean turns for extraction.

Stdlib only: the Stop/PreCompact hook imports this, and numpy, jieba or the MCP SDK would blow
its start-up budget. The database connection is passed in (a `Store` or a bare connection).

A transcript is append-only JSONL written asynchronously by Claude Code, so `read_new` reads
from where it stopped last time (the `transcript_cursors` table), leaves a partial last line
for the next call, skips and counts lines it cannot parse, and starts over when the file was
truncated or replaced (re-reading is harmless: ingestion deduplicates).

A turn is a dict: role ("user", "assistant" or "tool"), text, uuid, timestamp, session_id, cwd,
and kind:
  "text"        a human prompt or the assistant's prose
  "tool_call"   a compact record of a tool use: `tool`, `input` (command or path), `tool_use_id`,
                and for a memory tool `stored`, the text it stored (`stored_by_tool`)
  "tool_result" a successful result, reduced to its first line (`tool`, `input`, `text`)
  "tool_error"  a failed tool call: `tool`, `input`, `error` (the most telling error line)
Whole tool outputs are never kept: they are not memories, and they are where noise and secrets
live. The failed calls are kept so extraction can pair "X failed with E" with the fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memory.lang.text import CONTEXT_TAG

HEAD_BYTES = 4096  # the first line (or this much of it) identifies a transcript file
MAX_LINE_BYTES = 8_000_000  # longer transcript lines are skipped unread (pasted images, log dumps)
MAX_TEXT_CHARS = 20_000  # a single turn longer than this is cut: pasted logs are not memories
MAX_INPUT_CHARS = 200
MAX_ERROR_CHARS = 240

Turn = dict[str, Any]

# Blocks whose whole content is dropped from a user or assistant text.
_DROP_BLOCKS = (
    CONTEXT_TAG,
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-memory-input",
)
_BLOCK_RE = re.compile(
    r"<(" + "|".join(re.escape(t) for t in _DROP_BLOCKS) + r")(?:\s[^>]*)?>.*?(?:</\1\s*>|\Z)", re.S | re.I
)
_INTERRUPT_RE = re.compile(r"\[Request interrupted by user[^\]]*\]")
_NOT_HUMAN_RE = re.compile(r"<task-notification>|<bash-notification>", re.I)
_ERROR_LINE_RE = re.compile(
    r"(Traceback \(most recent call last\)|^\s*[\w.]*(?:Error|Exception)\b[:(]|^\s*error(?:\[\w+\])?:|^E\s{2,}|"
    r"\bFAILED\b|\bfatal:|command not found|No such file or directory|npm ERR!|Permission denied|"
    r"^\s*ERROR\b|panicked at|Segmentation fault|^--- FAIL:|^\s*panic: )",  # (the last two: Go's tests)
    re.M,
)
_EXIT_CODE_RE = re.compile(r"^\s*Exit code:?\s*(\d+)\s*$", re.M)
_SHELL_TOOLS = {"bash", "shell", "powershell", "run", "terminal", "execute", "exec"}


# -- reading transcripts incrementally --------------------------------------------------------


def read_new(
    conn_or_store: Any, path: str | os.PathLike, *, include_sidechains: bool = False, commit: bool = True
) -> tuple[list[Turn], dict[str, Any]]:
    """The turns appended to the transcript at `path` since the last call, and read statistics.

    With `commit=False` the cursor is not advanced; call `save_cursor(conn, stats["cursor"])`
    once the turns are safely stored (a crash in between then only means reading them again).
    A missing file yields no turns (stats["missing"] is True), never an error.
    """
    conn, tx = _conn(conn_or_store)
    path = os.fspath(path)
    stats: dict[str, Any] = _new_stats()
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            head = _head(f)
            row = conn.execute("SELECT offset, inode, head FROM transcript_cursors WHERE path = ?", (path,)).fetchone()
            start = 0
            if row is not None:
                offset, inode, old_head = row
                if offset > st.st_size:
                    stats["restarted"] = "truncated"
                elif inode is not None and inode != st.st_ino:
                    stats["restarted"] = "replaced"
                elif old_head is not None and head is not None and old_head != head:
                    stats["restarted"] = "rewritten"
                else:
                    start = offset
            f.seek(start)
            progress = {"consumed": 0}
            # Line by line: memory holds one line at a time, not the whole unread transcript.
            turns = parse_lines(_complete_lines(f, progress, stats), stats, include_sidechains=include_sidechains)
            consumed = progress["consumed"]
    except FileNotFoundError:
        stats["missing"] = True
        return [], stats
    stats["start"] = start
    stats["bytes_read"] = consumed
    session = next((t["session_id"] for t in turns if t.get("session_id")), None)
    stats["cursor"] = {
        "path": path,
        "session_id": session,
        "offset": start + consumed,
        "inode": st.st_ino,
        "head": head,
    }
    if commit:
        save_cursor(conn_or_store, stats["cursor"])
    return turns, stats


CONTEXT_TURNS = 6  # what a harvest reads its new lines against: the last exchanges before them
CONTEXT_BYTES = 256 * 1024  # how far back it looks for them (a long tool output may hide them: then none)


def read_before(path: str | os.PathLike, offset: int, *, include_sidechains: bool = False) -> list[Turn]:
    """The last text turns before byte `offset` of a transcript (at most CONTEXT_TURNS, within
    CONTEXT_BYTES): what the lines after the cursor answer. In a live session each Stop harvests
    one exchange, so the options the assistant laid out are behind the cursor when the user's
    "第二种" arrives; extraction reads them again as context and stores nothing from them."""
    if offset <= 0:
        return []
    start = max(0, offset - CONTEXT_BYTES)
    try:
        with open(path, "rb") as f:
            f.seek(start)
            chunk = f.read(offset - start)
    except OSError:
        return []
    lines = chunk.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line was cut by the window
    turns = parse_lines(lines, include_sidechains=include_sidechains)
    return [t for t in turns if t.get("kind") == "text"][-CONTEXT_TURNS:]


def save_cursor(conn_or_store: Any, cursor: dict[str, Any]) -> None:
    """Record how far a transcript has been read (the `cursor` that `read_new` returned)."""
    conn, tx = _conn(conn_or_store)
    sql = (
        "INSERT INTO transcript_cursors (path, session_id, offset, inode, head, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
        "session_id = COALESCE(excluded.session_id, transcript_cursors.session_id), "
        "offset = excluded.offset, inode = excluded.inode, head = excluded.head, "
        "updated_at = excluded.updated_at"
    )
    args = (
        cursor["path"],
        cursor.get("session_id"),
        cursor["offset"],
        cursor.get("inode"),
        cursor.get("head"),
        time.time(),
    )
    if tx is not None:
        with tx.atomic() as c:
            c.execute(sql, args)
    else:
        conn.execute(sql, args)  # one statement: atomic on its own in autocommit mode


def _conn(conn_or_store: Any) -> tuple[Any, Any]:
    if hasattr(conn_or_store, "conn") and hasattr(conn_or_store, "tx"):
        return conn_or_store.conn, conn_or_store.tx
    return conn_or_store, None


def _head(f: Any) -> str | None:
    """A hash of the file's first line: a new file at the same path (same inode reused, or a
    rewrite in place) has another first line. None while even the first line is incomplete."""
    first = f.readline(HEAD_BYTES)
    if not first.endswith(b"\n") and len(first) < HEAD_BYTES:
        return None
    return hashlib.sha1(first).hexdigest()


def _complete_lines(f: Any, progress: dict[str, int], stats: dict[str, Any]) -> Iterator[bytes]:
    """The lines from the file's position on, one at a time, counting the bytes they cover in
    `progress["consumed"]`. A last line without its newline is kept back unless it is already a
    whole JSON value (Claude Code writes the newline with the line, so a partial line is one
    that is still being written). A line longer than MAX_LINE_BYTES (a pasted image or log, never
    a memory) is skipped without being held in memory, and counted."""
    while True:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            size = len(line)
            while True:
                chunk = f.readline(1 << 20)
                if not chunk:
                    return  # still being written: read it again next time
                size += len(chunk)
                if chunk.endswith(b"\n"):
                    break
            progress["consumed"] += size
            stats["lines"] += 1
            _skip(stats, "oversized")
            continue
        if line.endswith(b"\n"):
            progress["consumed"] += len(line)
            yield line[:-1]
            continue
        if line.strip():
            try:
                json.loads(line)
            except (ValueError, RecursionError):
                return
            progress["consumed"] += len(line)
            yield line
        return


def _new_stats() -> dict[str, Any]:
    return {
        "lines": 0,
        "malformed": 0,
        "turns": 0,
        "skipped": {},
        "restarted": None,
        "missing": False,
        "tool_errors": 0,
    }


def _skip(stats: dict[str, Any], reason: str) -> None:
    stats["skipped"][reason] = stats["skipped"].get(reason, 0) + 1


# -- parsing lines ------------------------------------------------------------------------------


def parse_lines(
    lines: Iterable[bytes | str], stats: dict[str, Any] | None = None, *, include_sidechains: bool = False
) -> list[Turn]:
    """Clean turns from raw JSONL lines (see the module docstring); `stats` is updated."""
    stats = _new_stats() if stats is None else stats
    tools: dict[str, tuple[str, str]] = {}  # tool_use_id -> (tool name, input summary)
    turns: list[Turn] = []
    for raw in lines:
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="replace")
        if not raw.strip():
            continue
        stats["lines"] += 1
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
            stats["malformed"] += 1
            continue
        if not isinstance(obj, dict):
            stats["malformed"] += 1
            continue
        try:
            _parse_line(obj, turns, tools, stats, include_sidechains)
        except (TypeError, AttributeError, KeyError, ValueError):
            stats["malformed"] += 1  # a known type with an unexpected shape
    stats["turns"] += len(turns)
    return turns


def _parse_line(obj: dict, turns: list[Turn], tools: dict, stats: dict, include_sidechains: bool) -> None:
    kind = obj.get("type")
    if kind not in ("user", "assistant"):
        _skip(stats, f"type:{kind}" if isinstance(kind, str) and len(kind) < 40 else "type:other")
        return
    if obj.get("isMeta"):
        return _skip(stats, "meta")
    if obj.get("isCompactSummary"):
        return _skip(stats, "compact_summary")
    if obj.get("isSidechain") and not include_sidechains:
        return _skip(stats, "sidechain")
    if obj.get("isApiErrorMessage"):
        return _skip(stats, "api_error")
    message = obj.get("message")
    if not isinstance(message, dict):
        stats["malformed"] += 1
        return
    base = {
        "uuid": obj.get("uuid"),
        "timestamp": obj.get("timestamp"),
        "session_id": obj.get("sessionId"),
        "cwd": obj.get("cwd"),
    }
    if obj.get("isSidechain"):
        base["sidechain"] = True
    content = message.get("content")
    if kind == "user":
        origin = obj.get("origin")
        if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
            return _skip(stats, "not_human")
        _user(content, base, turns, tools, stats, obj.get("toolUseResult"))
    else:
        if message.get("model") == "<synthetic>":
            return _skip(stats, "synthetic")
        _assistant(content, base, turns, tools, stats)


def _user(content: Any, base: dict, turns: list, tools: dict, stats: dict, tool_result: Any) -> None:
    if isinstance(content, str):
        blocks: list = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        stats["malformed"] += 1
        return
    for block in blocks:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            raw = block.get("text") or ""
            if _NOT_HUMAN_RE.search(raw):
                _skip(stats, "not_human")
                continue
            text = clean_text(raw)
            if text:
                turns.append({**base, "role": "user", "kind": "text", "text": text})
            else:
                _skip(stats, "noise")
        elif btype == "tool_result":
            turns.append(_tool_result(block, base, tools, stats, tool_result))
        # images and documents carry no words to remember


def _assistant(content: Any, base: dict, turns: list, tools: dict, stats: dict) -> None:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        stats["malformed"] += 1
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text":
            text = clean_text(block.get("text") or "")
            if text:
                turns.append({**base, "role": "assistant", "kind": "text", "text": text})
        elif btype == "tool_use":
            name = str(block.get("name") or "tool")
            summary = summarize_input(name, block.get("input"))
            tid = block.get("id")
            if isinstance(tid, str):
                tools[tid] = (name, summary)
            turn: Turn = {
                **base,
                "role": "assistant",
                "kind": "tool_call",
                "tool": name,
                "input": summary,
                "tool_use_id": tid,
                "text": "",
            }
            stored = stored_by_tool(name, block.get("input"))
            if stored:
                turn["stored"] = stored
            turns.append(turn)
        # thinking and redacted_thinking are the model's scratch work, not statements


def stored_by_tool(tool: str, value: Any) -> str:
    """What a memory tool call stored (MAPLE's or any server's `memory_store`, `decision_record`),
    so the harvest does not store the user's words for it a second time; "" for other tools."""
    if not isinstance(value, dict):
        return ""
    if tool.endswith("memory_store") and isinstance(value.get("content"), str):
        return value["content"]
    if tool.endswith("decision_record") and isinstance(value.get("chosen"), str):
        return " ".join(v for v in (value["chosen"], value.get("why")) if isinstance(v, str))
    return ""


def _tool_result(block: dict, base: dict, tools: dict, stats: dict, structured: Any) -> Turn:
    tid = block.get("tool_use_id")
    name, summary = tools.get(tid, ("tool", "")) if isinstance(tid, str) else ("tool", "")
    body = _result_text(block.get("content"))
    failed = block.get("is_error") is True
    if not failed and name.lower() in _SHELL_TOOLS:
        failed = _looks_failed(body, structured)
    turn: Turn = {**base, "role": "tool", "tool": name, "input": summary, "tool_use_id": tid}
    if failed:
        stats["tool_errors"] += 1
        turn.update(kind="tool_error", error=first_error_line(body), text="")
    else:
        first = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        turn.update(kind="tool_result", text=first[:MAX_ERROR_CHARS])
    return turn


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content[:MAX_TEXT_CHARS]
    if isinstance(content, list):
        parts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))[:MAX_TEXT_CHARS]
    return ""


def _looks_failed(body: str, structured: Any) -> bool:
    """A shell result that failed without is_error: a non-zero exit or an error in its first lines."""
    if isinstance(structured, dict):
        code = structured.get("exitCode", structured.get("returncode"))
        if isinstance(code, int) and not isinstance(code, bool):
            return code != 0
        if structured.get("interrupted") is True:
            return False
    m = _EXIT_CODE_RE.search(body[:200])
    if m:
        return m.group(1) != "0"
    head = "\n".join(body.splitlines()[:20])
    return bool(_ERROR_LINE_RE.search(head))


def first_error_line(body: str) -> str:
    """The line that best says what went wrong: the exception line of a traceback, else the
    first line that looks like an error, else the first non-empty line."""
    # Claude Code opens a failed command's output with "Error: "; what follows is the output's own first
    # line ("Error: ok  github.com/acme/…  1.7s", a passing package before the failing one), no error yet.
    body = re.sub(r"^\s*Error: (?=\S)", "", body, count=1)
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not _EXIT_CODE_RE.fullmatch(ln)]
    if not lines:
        return ""
    exc = [ln for ln in lines if re.match(r"^[\w.]*(?:Error|Exception|Exit)\w*:", ln)]
    if exc:
        return exc[-1][:MAX_ERROR_CHARS]
    for ln in lines:
        if _ERROR_LINE_RE.search(ln) and not ln.startswith("Traceback"):
            return ln[:MAX_ERROR_CHARS]
    return lines[0][:MAX_ERROR_CHARS]


def summarize_input(tool: str, value: Any) -> str:
    """A short, human-readable summary of a tool's input: the command, the path or the pattern."""
    if not isinstance(value, dict):
        return str(value)[:MAX_INPUT_CHARS] if value is not None else ""
    for key in (
        "command",
        "cmd",
        "file_path",
        "path",
        "notebook_path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
    ):
        v = value.get(key)
        if isinstance(v, str) and v.strip():
            first = v.strip().splitlines()[0]
            return first[:MAX_INPUT_CHARS]
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)[:MAX_INPUT_CHARS]
    except (TypeError, ValueError):
        return ""


def clean_text(text: str) -> str:
    """A user or assistant text without injected context, command echoes, system reminders and
    interruption markers; empty when nothing of the speaker's own words is left."""
    if not isinstance(text, str):
        return ""
    text = _BLOCK_RE.sub("", text)
    text = _INTERRUPT_RE.sub("", text)
    text = text.strip()
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS]
    return text


# -- other inputs -------------------------------------------------------------------------------

_ROLE_PREFIX = re.compile(r"^\s*(user|human|me|assistant|claude|ai|用户|助手)\s*[:：]\s*", re.I)


def from_text(text: str, *, session_id: str | None = None, cwd: str | None = None) -> list[Turn]:
    """Turns from plain text. Lines starting "User:" / "Assistant:" split it into speakers;
    otherwise the whole text is the user's own words, one paragraph per turn."""
    text = clean_text(text)
    base = {"uuid": None, "timestamp": None, "session_id": session_id, "cwd": cwd, "kind": "text"}
    turns: list[Turn] = []
    if any(_ROLE_PREFIX.match(ln) for ln in text.splitlines()):
        role, buf = "user", []
        for ln in text.splitlines():
            m = _ROLE_PREFIX.match(ln)
            if m:
                if "".join(buf).strip():
                    turns.append({**base, "role": role, "text": "\n".join(buf).strip()})
                who = m.group(1).lower()
                role = "assistant" if who in ("assistant", "claude", "ai", "助手") else "user"
                buf = [ln[m.end() :]]
            else:
                buf.append(ln)
        if "".join(buf).strip():
            turns.append({**base, "role": role, "text": "\n".join(buf).strip()})
        return turns
    for para in re.split(r"\n\s*\n", text):
        if para.strip():
            turns.append({**base, "role": "user", "text": para.strip()})
    return turns


def from_messages(messages: list[Any], *, session_id: str | None = None, cwd: str | None = None) -> list[Turn]:
    """Turns from a list of {role, content} messages (content a string or Messages API blocks)."""
    if not isinstance(messages, list):
        raise ValueError("messages must be a list of {role, content} objects")
    lines = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role in ("human",):
            role = "user"
        if role not in ("user", "assistant"):
            continue
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "sessionId": session_id,
                    "cwd": cwd,
                    "message": {"role": role, "content": m.get("content")},
                }
            )
        )
    return parse_lines(lines)


def load_file(path: str | os.PathLike, *, include_sidechains: bool = False) -> tuple[list[Turn], dict[str, Any]]:
    """Every turn of a file, whatever its form: Claude Code JSONL, a JSON list of messages, or
    plain text. Reads the whole file and touches no cursor (the `extract` command)."""
    p = Path(path)
    raw = p.read_bytes().decode("utf-8", errors="replace")
    stripped = raw.lstrip()
    stats = _new_stats()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, list):
            turns = from_messages(data)
            stats["turns"] = len(turns)
            stats["format"] = "messages"
            return turns, stats
    if stripped.startswith("{"):  # JSONL, even when its first line is the malformed one
        turns = parse_lines(raw.splitlines(), stats, include_sidechains=include_sidechains)
        stats["format"] = "jsonl"
        return turns, stats
    turns = from_text(raw)
    stats["turns"] = len(turns)
    stats["format"] = "text"
    return turns, stats
