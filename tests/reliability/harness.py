"""What the reliability parts share: subprocess environments, hook and server runners, the
cross-table invariant check, disposable filesystems, text generators and the results folder.

Everything here drives MAPLE the way users do (separate processes, real files, the real SDK
client, the real hook scripts); nothing is mocked.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DATA = TESTS / "data"
RUN_HOOK = ROOT / "hooks" / "run.py"
PY = sys.executable

# Text that means SQLite's own error reached the caller: query syntax was not escaped, or a
# database error was not turned into a message for people.
SQLITE_LEAKS = re.compile(
    r"OperationalError|DatabaseError|IntegrityError|ProgrammingError|fts5: syntax error|syntax error near|"
    r"unrecognized token|no such column|no such table|malformed MATCH|unterminated string|"
    r"sqlite3?\.|sqlean\.",
    re.I,
)
# What mcp 2.3.0 says when a tool raised something other than a ToolError: nothing useful.
OPAQUE_TOOL_ERROR = re.compile(r"^Error executing tool [\w-]+\s*$")


# -- processes ---------------------------------------------------------------------------------


def env_for(home: Path, project: Path | str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a MAPLE subprocess: this checkout on the path, the hash embedder."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH", "MAPLE_DB", "MAPLE_MODEL", "MAPLE_LOG_LEVEL")
    }
    env.update(
        {
            "MAPLE_HOME": str(home),
            "PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS}",
            "MAPLE_MODEL": "hash-64",
            "PYTHONDONTWRITEBYTECODE": "1",
            "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        }
    )  # each hook on its own
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def run_hook(
    event: str,
    payload: Any,
    home: Path,
    *,
    raw: bytes | None = None,
    extra_args: Sequence[str] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    """One hook process exactly as Claude Code starts it: `python hooks/run.py EVENT`, JSON on stdin."""
    e = env or env_for(home)
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(
        [PY, str(RUN_HOOK), event, *extra_args],
        input=data,
        capture_output=True,
        env=e,
        cwd=str(cwd or home.parent),
        timeout=timeout,
    )


def settle_harvests(home: Path, env: dict[str, str] | None = None) -> None:
    """Wait for background harvests, then drain what is still queued (`run.py drain --wait`)."""
    r = run_hook("drain", None, home, raw=b"", extra_args=("--wait",), env=env)
    assert r.returncode == 0 and r.stdout == b"", r.stderr


def stdio_client(
    home: Path,
    project: Path,
    errlog: Any = None,
    *,
    model: str | None = "hash-64",
    extra_env: dict[str, str] | None = None,
) -> Any:
    """An SDK client that starts `python -m server` for `project` (mode legacy: the handshake)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client as transport

    env = {
        "MAPLE_HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "CLAUDE_PROJECT_DIR": str(project),
        "PYTHONDONTWRITEBYTECODE": "1",
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",  # the server keeps its own store and worker: what these tests check
    }
    if model:
        env["MAPLE_MODEL"] = model
    env.update(extra_env or {})
    params = StdioServerParameters(command=PY, args=["-m", "server"], env=env, cwd=str(project))
    t = transport(params, errlog=errlog) if errlog is not None else transport(params)
    return Client(t, mode="legacy")


def tool_text(result: Any) -> str:
    """Everything a tool result says, as one string (text content and structured content)."""
    parts = [getattr(c, "text", "") or "" for c in (result.content or [])]
    if result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


# -- the invariants every database must satisfy -----------------------------------------------


def check_database(
    path: Path, *, home: Path | None = None, expect_vectors: bool = True, fill_vectors: bool = False
) -> dict[str, Any]:
    """Open the database as MAPLE does and check it against every cross-table invariant.

    Returns counts and a `problems` list (empty when everything holds): integrity_check ok; every
    memory has its FTS row and (if `expect_vectors`) its vector row; no FTS, vector, link,
    version, outcome, injection or access-log row without its memory; no link to a missing
    entity; no dangling parent or superseded_by. `fill_vectors` first embeds memories stored
    without a vector (hook harvests store none; the server's worker fills them later).
    """
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.errors import MapleError
    from memory.store import Store

    out: dict[str, Any] = {"opens": False, "problems": []}
    problems: list[str] = out["problems"]
    cfg = config_mod.load(home=home or path.parent, env={}, database=str(path))
    try:
        store = Store.open(cfg, None, path=path)
    except MapleError as e:
        problems.append(f"does not open: {e}")
        return out
    out["opens"] = True
    try:
        c = store.conn
        out["integrity_check"] = c.execute("PRAGMA integrity_check").fetchone()[0]
        if out["integrity_check"] != "ok":
            problems.append(f"integrity_check: {out['integrity_check']}")
        fk = c.execute("PRAGMA foreign_key_check").fetchall()
        if fk:
            problems.append(f"foreign_key_check: {fk[:5]}")
        if fill_vectors and store.vector_model:
            dim = store.vector_dim or 64
            store.embedder = (
                HashEmbedder(dim, name=store.vector_model) if store.vector_model.startswith("hash-") else None
            )
            if store.embedder is not None:
                out["vectors_filled"] = store.embed_missing()
        ids = {r[0] for r in c.execute("SELECT id FROM memories")}
        fts = {r[0] for r in c.execute("SELECT rowid FROM memory_fts")}
        out["memories"] = len(ids)
        out["live"] = c.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL").fetchone()[0]
        _compare(problems, "memories without an FTS row", ids - fts)
        _compare(problems, "FTS rows without a memory", fts - ids)
        if store.has_vectors:
            vec = {r[0] for r in c.execute("SELECT rowid FROM memory_vec")}
            out["vector_rows"] = len(vec)
            _compare(problems, "vector rows without a memory", vec - ids)
            if expect_vectors:
                _compare(problems, "memories without a vector", ids - vec)
        elif expect_vectors and ids:
            problems.append(f"{len(ids)} memories but no vector table")
        orphan_sql = {
            "links without a memory": "SELECT count(*) FROM memory_entities l WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.id = l.memory_id)",
            "links without an entity": "SELECT count(*) FROM memory_entities l WHERE NOT EXISTS "
            "(SELECT 1 FROM entities e WHERE e.id = l.entity_id)",
            "relations without an entity": "SELECT count(*) FROM relations r WHERE NOT EXISTS "
            "(SELECT 1 FROM entities e WHERE e.id = r.src) OR NOT EXISTS "
            "(SELECT 1 FROM entities e WHERE e.id = r.dst)",
            "versions without a memory": "SELECT count(*) FROM memory_versions v WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.id = v.memory_id)",
            "access log rows without a memory": "SELECT count(*) FROM access_log a WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.id = a.memory_id)",
            "injections without a memory": "SELECT count(*) FROM injections i WHERE NOT EXISTS "
            "(SELECT 1 FROM memories m WHERE m.id = i.memory_id)",
            "dangling parent_id": "SELECT count(*) FROM memories c WHERE c.parent_id IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM memories p WHERE p.id = c.parent_id)",
            "dangling superseded_by": "SELECT count(*) FROM memories c WHERE c.superseded_by IS NOT NULL AND "
            "NOT EXISTS (SELECT 1 FROM memories p WHERE p.id = c.superseded_by)",
        }
        for what, sql in orphan_sql.items():
            n = c.execute(sql).fetchone()[0]
            if n:
                problems.append(f"{n} {what}")
        out["integrity"] = store.integrity()
        if not out["integrity"]["ok"]:
            problems.append(f"Store.integrity(): {out['integrity']}")
    finally:
        store.close()
    return out


def _compare(problems: list[str], what: str, ids: set[int]) -> None:
    if ids:
        problems.append(f"{len(ids)} {what}: {sorted(ids)[:10]}")


# -- disposable filesystems ---------------------------------------------------------------------


def can_mount() -> str | None:
    """None if this process may mount a tmpfs, else why not (for a skip reason)."""
    if sys.platform != "linux":
        return "small test filesystems are made with Linux tmpfs mounts"
    if os.geteuid() != 0:
        return "mounting a small tmpfs needs root (run as root to test a full disk and a read-only home)"
    return None


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` for the duration (unmounted even on failure)."""
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(where)], check=True, capture_output=True
    )
    try:
        yield where
    finally:
        for _ in range(20):  # a dying subprocess may still hold a file open for a moment
            if subprocess.run(["umount", str(where)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True, capture_output=True)


# -- sockets ------------------------------------------------------------------------------------


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    return inodes


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*/children"):
            todo += [int(c) for c in task.read_text().split()]
    return out


def listening_sockets(pid: int) -> list[str]:
    """Sockets of `pid` and its children that accept connections: TCP in LISTEN, bound UDP, and
    listening unix sockets (with their owner's uid, to tell a same-user local socket apart)."""
    inodes: set[str] = set()
    for p in process_tree(pid):
        inodes |= _socket_inodes(p)
    found = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        path = Path(f"/proc/net/{proto}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            parts = line.split()
            if parts[9] in inodes and (proto.startswith("udp") or parts[3] == "0A"):
                found.append(f"{proto} {parts[1]} (uid {parts[7]})")
    unix = Path("/proc/net/unix")
    if unix.exists():
        for line in unix.read_text().splitlines()[1:]:
            parts = line.split()
            if parts[6] in inodes and int(parts[3], 16) & 0x10000:  # __SO_ACCEPTCON: listening
                found.append(f"unix {parts[7] if len(parts) > 7 else '(unnamed)'}")
    return found


# -- text -------------------------------------------------------------------------------------

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def word(rng: random.Random, syllables: int = 4) -> str:
    """A pronounceable made-up word: unique enough to be a marker, never mistaken for a secret."""
    return "".join(rng.choice(_SYLLABLES) for _ in range(syllables))


def load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def secrets_corpus() -> list[dict]:
    return load_jsonl(DATA / "secrets_corpus.jsonl")


def secret_needles(entry: dict) -> list[str]:
    """The secret and every run of 8+ letters or digits in it: only the secret could hold them."""
    return [entry["secret"], *re.findall(r"[A-Za-z0-9]{8,}", entry["secret"])]


def find_secrets(blob: bytes | str, corpus: Sequence[dict]) -> list[str]:
    """The notes of corpus entries whose secret (or a distinctive piece of it) is in `blob`."""
    data = blob if isinstance(blob, bytes) else blob.encode("utf-8", errors="replace")
    return [e["note"] for e in corpus if any(n.encode("utf-8") in data for n in secret_needles(e))]


def harvest_fact(rng: random.Random) -> tuple[str, str]:
    """(marker, a user sentence the extractor keeps as one memory holding the marker). Mostly
    made-up words, so no two facts are near-duplicates that ingestion would merge."""
    token = word(rng, 5)
    return token, (
        f"Please remember that {word(rng, 4)} {word(rng, 3)} {word(rng, 3)} lives in {token}.toml "
        f"next to {word(rng, 3)} {word(rng, 3)}"
    )


def transcript_line(role: str, text: str, *, session: str, cwd: str, n: int) -> str:
    """One Claude Code transcript line (a human prompt or an assistant reply)."""
    if role == "user":
        obj = {
            "type": "user",
            "origin": {"kind": "human"},
            "promptSource": "user",
            "message": {"role": "user", "content": text},
        }
    else:
        obj = {
            "type": "assistant",
            "message": {"role": "assistant", "model": "claude-test", "content": [{"type": "text", "text": text}]},
        }
    obj.update(
        {
            "uuid": f"{session}-{role}-{n}",
            "sessionId": session,
            "cwd": cwd,
            "timestamp": "2026-09-02T09:00:00.000Z",
            "isSidechain": False,
        }
    )
    return json.dumps(obj, ensure_ascii=False)


# -- results ------------------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1)))))
    return ordered[k]


def report(part: str, data: dict[str, Any]) -> None:
    """Keep a part's figures for the summary table (bench_reliability.py sets the folder)."""
    folder = os.environ.get("MAPLE_RELIABILITY_REPORT")
    if not folder:
        return
    path = Path(folder) / f"{part}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))
