"""Backfill: a project's past Claude Code sessions, harvested as the hooks would have harvested them.

Claude Code keeps one JSON-lines transcript per session under `<config>/projects/<folder>/`
(`<config>` is $CLAUDE_CONFIG_DIR or ~/.claude) and deletes it after `cleanupPeriodDays` (30 by
default). The folder name is the working directory with every non-alphanumeric character made
`-`, which is lossy (`/a/b-c` and `/a/b/c` share a folder), so a transcript belongs to a project by
the `cwd` its own lines carry, mapped through memory.scope (subfolders and worktrees of a repository
are that repository's project), never by its folder's name.

`scan` finds the transcripts and says what each one needs, reading only their first lines and the
ledger (the `transcript_cursors` table every harvest advances): nothing new means no model is
loaded at all. `run` harvests the pending ones, oldest session first (a later correction then
supersedes the earlier fact, as it did live), each with the one harvest rule
(memory.extraction.harvest: read from the cursor, extract, ingest, advance the cursor, one
transaction). So a kill at any point loses at most the transcript in progress, which the next run
reads again from the same cursor; a transcript the hooks harvest later, or harvested before, is
continued from where the other stopped, never read twice.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.scope import project_scope

QUIET_SECONDS = 120.0  # a transcript written to more recently may belong to a session still going
MAX_MB = 100  # unread megabytes one harvest takes; more is skipped with a reason (--max-mb)
HEAD_SCAN_BYTES = 4 << 20  # how far into a transcript its working directory is looked for
HEAD_SCAN_LINES = 400
DEFAULT_CLEANUP_DAYS = 30  # Claude Code's cleanupPeriodDays when settings.json names none
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def claude_dir(env: Mapping[str, str]) -> Path:
    """Claude Code's configuration folder: $CLAUDE_CONFIG_DIR, else ~/.claude."""
    given = env.get("CLAUDE_CONFIG_DIR")
    return Path(given).expanduser().absolute() if given else Path("~/.claude").expanduser().absolute()


def folder_name(directory: str) -> str:
    """The transcripts folder name Claude Code derives from a working directory (a hint only)."""
    return _NON_ALNUM.sub("-", directory)


def cleanup_days(config_dir: Path) -> int:
    """`cleanupPeriodDays` from Claude Code's user settings (30 when unset or unreadable)."""
    try:
        value = json.loads((config_dir / "settings.json").read_text(encoding="utf-8")).get("cleanupPeriodDays")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_CLEANUP_DAYS
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_CLEANUP_DAYS


def live_sessions(config_dir: Path) -> dict[str, int]:
    """Sessions running now: Claude Code keeps `<config>/sessions/<pid>.json` ({pid, sessionId,
    ...}) while a session runs and removes it when it ends. session id -> pid, for live pids."""
    out: dict[str, int] = {}
    try:
        entries = list((config_dir / "sessions").glob("*.json"))
    except OSError:
        return out
    for f in entries:
        try:
            d = json.loads(f.read_text(encoding="utf-8"))
            pid, sid = int(d["pid"]), str(d["sessionId"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(pid):
            out[sid] = pid
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process: alive
    return True


@dataclass
class Transcript:
    """One transcript found, and what a backfill does with it."""

    path: str
    folder: str
    size: int
    mtime: float
    session_id: str | None = None
    cwd: str | None = None
    scope: str | None = None
    started: float | None = None  # the first timestamp in it (else its mtime)
    offset: int = 0  # how far the ledger says it has been harvested
    status: str = "pending"  # pending (new or grown), done, skipped
    reason: str = ""

    @property
    def unread(self) -> int:
        return max(0, self.size - self.offset)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    """What `scan` found: the transcripts of the chosen project(s), in the order to harvest them."""

    transcripts: list[Transcript] = field(default_factory=list)
    other_projects: int = 0  # transcripts seen that belong to other projects
    before_since: int = 0  # left out by `since`
    root: str = ""

    @property
    def pending(self) -> list[Transcript]:
        return [t for t in self.transcripts if t.status == "pending"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "transcripts": [t.to_dict() for t in self.transcripts],
            "other_projects": self.other_projects,
            "before_since": self.before_since,
        }


def _timestamp(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def read_head(path: Path) -> tuple[str | None, str | None, float | None]:
    """(cwd, session id, first timestamp) from a transcript's first lines, reading at most
    HEAD_SCAN_BYTES and never holding one long line (a pasted image) in memory. OSError when it
    cannot be read."""
    cwd = sid = None
    started: float | None = None
    budget, lines = HEAD_SCAN_BYTES, 0
    with open(path, "rb") as f:
        while budget > 0 and lines < HEAD_SCAN_LINES and not (cwd and started is not None and sid):
            line = f.readline(min(budget, 1 << 20) + 1)
            if not line:
                break
            budget -= len(line)
            lines += 1
            if not line.endswith(b"\n"):  # a long line: skip the rest of it unread
                while budget > 0:
                    chunk = f.readline(1 << 20)
                    budget -= len(chunk)
                    if not chunk or chunk.endswith(b"\n"):
                        break
                continue
            if b'"cwd"' not in line and b'"timestamp"' not in line and b'"sessionId"' not in line:
                continue
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(obj, dict):
                continue
            if cwd is None and isinstance(obj.get("cwd"), str) and obj["cwd"]:
                cwd = obj["cwd"]
            if sid is None and isinstance(obj.get("sessionId"), str):
                sid = obj["sessionId"]
            if started is None:
                started = _timestamp(obj.get("timestamp"))
    return cwd, sid, started


def _only_a_partial_line(path: str, offset: int, size: int) -> bool:
    """Whether what follows `offset` is one unfinished line (a session killed mid-write): the
    harvest rule keeps such a line back, so it is not new work."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            left = size - offset
            tail = b""
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                if b"\n" in chunk:
                    return False
                left -= len(chunk)
                if len(tail) < (1 << 20):
                    tail += chunk
    except OSError:
        return False
    try:
        json.loads(tail)
    except (ValueError, RecursionError):
        return True
    return False  # a whole JSON value without its newline: the harvest reads it


def _belongs(cwd: str, scope: str, project: str) -> bool:
    if scope == project:
        return True
    # A folder of the project that no longer exists (a removed worktree or subfolder) maps to itself.
    return cwd.rstrip(os.sep).startswith(project.rstrip(os.sep) + os.sep)


def scan(
    conn: Any,
    config_dir: Path,
    *,
    project: str | None,
    since: float | None = None,
    quiet_seconds: float = QUIET_SECONDS,
    max_bytes: int = MAX_MB << 20,
    now: float | None = None,
) -> Plan:
    """The transcripts of `project` (a scope string; None: every project, each in its own scope),
    oldest session first, each marked pending, done (the ledger has all of it) or skipped with a
    reason. `conn` is a database connection (the ledger) or None (nothing harvested yet)."""
    now = time.time() if now is None else now
    root = config_dir / "projects"
    plan = Plan(root=str(root))
    try:
        folders = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return plan  # no Claude Code history here at all
    live = live_sessions(config_dir)
    scopes: dict[str, str] = {}
    ours = folder_name(project) if project else None
    for folder in folders:
        try:
            files = sorted(folder.glob("*.jsonl"))  # subagents/ and tool-results/ are the session's own
        except OSError:
            continue
        for f in files:
            t = _look(f, folder.name, conn, live, now, quiet_seconds, max_bytes, scopes)
            if t is None:
                continue
            if project is not None:
                if t.scope is None:  # unreadable, or no cwd: ours only if it sits in our folder
                    if folder.name != ours:
                        plan.other_projects += 1
                        continue
                    t.scope = project
                elif not _belongs(t.cwd or "", t.scope, project):
                    plan.other_projects += 1
                    if folder.name == ours:  # a folder-name collision: say why it is left out
                        t.status, t.reason = "skipped", f"another project's session (cwd {t.cwd})"
                        t.scope = None
                        plan.transcripts.append(t)
                    continue
                else:
                    t.scope = project
            if since is not None and t.mtime < since:
                plan.before_since += 1
                continue
            plan.transcripts.append(t)
    plan.transcripts.sort(key=lambda t: (t.started if t.started is not None else t.mtime, t.path))
    return plan


def _look(
    f: Path,
    folder: str,
    conn: Any,
    live: dict[str, int],
    now: float,
    quiet_seconds: float,
    max_bytes: int,
    scopes: dict[str, str],
) -> Transcript | None:
    path = str(f.absolute())
    try:
        st = os.stat(path)
    except OSError as e:
        if not os.path.islink(path):
            return None  # deleted while we looked
        t = Transcript(path=path, folder=folder, size=0, mtime=0.0, session_id=f.stem)
        t.status, t.reason = "skipped", f"a link to {os.readlink(path)}, which cannot be read ({e.strerror or e})"
        return t
    t = Transcript(path=path, folder=folder, size=st.st_size, mtime=st.st_mtime, session_id=f.stem)
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the read, a device never end
        t.status, t.reason = "skipped", "not a regular file"
        return t
    if st.st_size == 0:
        t.status, t.reason = "skipped", "empty"
        return t
    try:
        cwd, sid, started = read_head(f)
    except OSError as e:
        t.status, t.reason = "skipped", f"unreadable ({e.strerror or e}); check its permissions"
        return t
    t.cwd, t.started = cwd, started
    t.session_id = sid or t.session_id
    if cwd is None:
        t.status, t.reason = "skipped", "no working directory in its first lines: not a Claude Code session"
        return t
    if cwd not in scopes:
        scopes[cwd] = project_scope(cwd)
    t.scope = scopes[cwd]
    row = None
    if conn is not None:
        row = conn.execute("SELECT offset, inode FROM transcript_cursors WHERE path = ?", (path,)).fetchone()
    if row is not None:
        offset, inode = row
        if offset <= st.st_size and (inode is None or inode == st.st_ino):
            t.offset = offset  # else truncated or replaced: the harvest starts it over
    if t.offset >= t.size or (t.offset and _only_a_partial_line(path, t.offset, t.size)):
        t.status = "done"
        return t
    if not t.offset and _only_a_partial_line(path, 0, t.size):
        t.status, t.reason = "skipped", "holds no complete line yet"
        return t
    if t.session_id in live:
        t.status, t.reason = "skipped", f"its session is still running (pid {live[t.session_id]}); the hooks harvest it"
    elif now - st.st_mtime < quiet_seconds:
        t.status = "skipped"
        t.reason = f"written {now - st.st_mtime:.0f} s ago: may still be in use; run backfill again later"
    elif t.unread > max_bytes:
        t.status = "skipped"
        t.reason = f"{t.unread / 1e6:.0f} MB unread, over the {max_bytes >> 20} MB limit (--max-mb raises it)"
    return t


# -- harvesting ---------------------------------------------------------------------------------


@dataclass
class Summary:
    """What a backfill did (or, dry, would do): the counts `--json` prints."""

    found: int = 0
    harvested: int = 0
    already_done: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)  # {path, reason}
    failed: list[dict[str, str]] = field(default_factory=list)  # {path, error}: left for the next run
    left: int = 0  # pending, not reached (--limit or Ctrl-C)
    stored: int = 0
    merged: int = 0
    reinforced: int = 0
    superseded: int = 0
    redacted: int = 0
    malformed_lines: int = 0
    bytes_read: int = 0
    other_projects: int = 0
    before_since: int = 0
    stopped: bool = False
    dry_run: bool = False
    seconds: float = 0.0
    by_scope: dict[str, int] = field(default_factory=dict)  # memories stored per project

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 2)
        return d


Harvest = Callable[[str, str], dict[str, Any]]  # (path, scope) -> memory.extraction.harvest.harvest's answer


class Stopped(Exception):
    """Raised by a harvest asked to stop before it read anything (Ctrl-C while the engine starts):
    the run ends there, that transcript left for the next run."""


def run(
    plan: Plan,
    harvest: Harvest,
    *,
    limit: int | None = None,
    dry_run: bool = False,
    progress: Callable[[int, int, Transcript | None], None] | None = None,
    stop: Callable[[], bool] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Summary:
    """Harvest the plan's pending transcripts in order (at most `limit`), calling `progress(bytes
    done, bytes total, transcript)` before each and once at the end, and stopping between two
    transcripts once `stop()` says so. A transcript whose harvest fails is reported and left for
    the next run (its transaction rolled back: nothing of it is stored)."""
    started = clock()
    s = Summary(found=len(plan.transcripts), other_projects=plan.other_projects, before_since=plan.before_since)
    s.dry_run = dry_run
    s.already_done = sum(t.status == "done" for t in plan.transcripts)
    s.skipped = [{"path": t.path, "reason": t.reason} for t in plan.transcripts if t.status == "skipped"]
    todo = plan.pending[:limit] if limit is not None else plan.pending
    s.left = len(plan.pending) - len(todo)
    total = sum(t.unread for t in todo)
    done = 0
    for i, t in enumerate(todo):
        if stop is not None and stop():
            s.stopped = True
            s.left += len(todo) - i
            break
        if progress is not None:
            progress(done, total, t)
        try:
            result = harvest(t.path, t.scope or "")
        except Stopped:
            s.stopped = True
            s.left += len(todo) - i
            break
        except Exception as e:  # noqa: BLE001 - one bad transcript never stops the rest; it is retried next run
            s.failed.append({"path": t.path, "error": f"{type(e).__name__}: {e}"})
            done += t.unread
            continue
        done += t.unread
        _count(s, t, result)
    if progress is not None:
        progress(done, total, None)
    s.seconds = clock() - started
    return s


def _count(s: Summary, t: Transcript, result: dict[str, Any]) -> None:
    """Add one harvest's answer; counted from what became of each candidate, which a dry run
    reports too (a supersession stores the new memory: it counts as stored and as superseded)."""
    s.harvested += 1
    items = [i for i in result.get("items") or [] if isinstance(i, dict)]
    actions = [i.get("action") for i in items]
    stored = sum(a in ("store", "supersede") for a in actions)
    s.stored += stored
    s.merged += actions.count("merge")
    s.reinforced += sum(a in ("repeat", "reinforce") for a in actions)
    s.superseded += len(result.get("superseded") or [])
    s.redacted += sum(str(i.get("content", "")).count("[REDACTED:") for i in items if i.get("action") != "rejected")
    read = result.get("read") or {}
    s.malformed_lines += int(read.get("malformed") or 0)
    s.bytes_read += int(read.get("bytes_read") or 0)
    if stored and t.scope:
        s.by_scope[t.scope] = s.by_scope.get(t.scope, 0) + stored


class _Rehearsed(Exception):
    """Ends a rehearsal: its transaction rolls back."""


@contextmanager
def rolled_back(store: Any) -> Iterator[None]:
    """One transaction around a dry run, rolled back at its end: the harvests inside it write as a
    real run would (a later session supersedes what an earlier one stored, a transcript's second
    statement sees its first), so the counts predict the real run, and nothing stays. It holds the
    write lock while it lasts: a hook's harvest meanwhile waits, or is retried by the next one."""
    try:
        with store.tx.atomic():
            yield
            raise _Rehearsed
    except _Rehearsed:
        pass


def rehearse(store: Any, path: str, scope: str) -> dict[str, Any]:
    """A transcript's real harvest (the one rule, its cursor advanced), for a dry run inside
    `rolled_back`; the configured LLM is not asked (a dry run spends no tokens)."""
    from memory.extraction import harvest

    return harvest.harvest(store, path, scope=scope or None, llm=False)


# -- what install and doctor say -----------------------------------------------------------------


URGENT_DAYS = 7  # doctor warns when the oldest unread transcript has fewer days left than this


def unharvested(config: Any, config_dir: Path, project: str) -> dict[str, Any]:
    """The project's transcripts that a backfill would read now (not another project's, not
    empty or without a working directory, not over the size limit, not a running session's):
    {count, total, cleanup_days, days_left (of the one Claude Code deletes first; None when
    there is none), transcripts: [{path, days_left}] oldest first}. Reads the ledger without
    creating or changing the database."""
    from memory.store import db

    conn = None
    if Path(config.db_path).exists():
        try:
            conn = db.connect(config.db_path, vectors=False, readonly=True)
        except db.DatabaseError:
            conn = None
    try:
        plan = scan(conn, config_dir, project=project, quiet_seconds=0)
    except db.DatabaseError:  # a database too old or damaged to hold the ledger: count everything
        plan = scan(None, config_dir, project=project, quiet_seconds=0)
    finally:
        if conn is not None:
            conn.close()
    left = sorted((t for t in plan.pending), key=lambda t: t.mtime)  # Claude Code deletes by age
    days = cleanup_days(config_dir)
    now = time.time()
    # tenths of a day, rounded down: "4 day(s) left" never says more than the oldest has
    listed = [{"path": t.path, "days_left": math.floor((days - (now - t.mtime) / 86400) * 10) / 10} for t in left]
    return {
        "count": len(left),
        "total": sum(t.status != "skipped" or t.scope is not None for t in plan.transcripts),
        "cleanup_days": days,
        "days_left": None if not left else days - (now - left[0].mtime) / 86400,
        "transcripts": listed,
    }
