"""Leak matrix: every secret format of tests/data/secret_eval/corpus.py through every way into MAPLE.

    .venv/bin/python tests/benchmarks/bench_secrets.py [--seed N] [--json OUT] [--entries PAT,...]
                                                       [--formats PAT,...] [--keep]
    .venv/bin/python tests/benchmarks/bench_secrets.py --redact-only [--seeds N]

MAPLE promises that nothing secret is ever written to disk, by any path, reads included. This
script measures that promise from the outside. Each entry point (one argument of one MCP tool,
CLI command or hook) gets a fresh MAPLE home; every secret case goes through it in a call of its
own (so each case's text sits in its own memory, relation or query). Afterwards `backup` and
`export` run, and every file in the home (database, -wal, -shm, backups, the export, hooks.log,
spools, run folder, anything) is byte-scanned for each case's cores: as UTF-8 in any letter case,
URL-encoded and JSON-escaped. MCP homes are also scanned while the server still runs (the WAL
before its checkpoint). A core also counts as leaked when the FTS5 vocabulary (contentless: only
tokens are stored, prefix-compressed, so a byte scan can miss them) holds a token of 8 or more
characters taken from it. Cores are random per run, so a hit is attributed to its case even with
all cases in one home.

Fields with a length limit (subject 200, category/tag/relation 64, reason 200, ...) receive the
whole text when it fits, else the line holding the case's first core, else a window of that line
centred on the core: a bare 64-character slice of a PEM body cannot be recognised by anyone, so
those cells say more about the field than about the redactor.

Also: benign look-alikes through memory_store and `add` (which `keep` strings did not survive:
false positives), server and CLI stderr scanned apart (not MAPLE's files, but Claude Code keeps
MCP server stderr in its own logs), and how much each entry point stored (a clean cell where
nothing was stored proves little). The default seed is random and printed; the test embedder
(MAPLE_MODEL=hash-64) is used throughout. About 25 minutes on two busy cores for the full matrix.

`--redact-only` measures redact() alone, in seconds: every format of seeds 0..N-1, recall by format
(a case counts when none of its cores survives) and, on the benign look-alikes, the cases whose
keep strings were changed (false positives). The per-format lines name the formats still missed.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "data" / "secret_eval"))

from corpus import benign_cases, secret_cases

PY = sys.executable
RUN_HOOK = ROOT / "hooks" / "run.py"
MIN_TERM = 8  # an FTS token this long taken from a core counts as a leak of that core
SEED_NOTES = [
    "The staging database password lives in Vault under secret/db; never paste it in chat",
    "Deploy tokens rotate every 90 days; the CI role supplies AWS credentials",
    "The admin panel login is kept in 1Password under prod-admin",
    "Webhooks for Slack and Feishu alerts are configured in the ops repo",
    "The API key header is X-Api-Key and keys are issued per service",
    "密码在 1Password 里，token 过期了就重新登录",
    "Postgres, MySQL and Redis connection strings come from the environment, not config files",
    "SSH keys for the bastion are in ~/.ssh and rotate yearly",
]


# -- what one run holds ------------------------------------------------------------------------


@dataclass
class Case:
    index: int
    format: str
    text: str
    cores: list[str]


@dataclass
class Place:
    """One entry point's MAPLE home and the files around it (transcripts and stderr live outside)."""

    root: Path
    home: Path = field(init=False)
    project: Path = field(init=False)
    work: Path = field(init=False)
    stderr: list[bytes] = field(default_factory=list)
    rejected: dict[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.home, self.project, self.work = self.root / "home", self.root / "project", self.root / "work"
        for p in (self.project, self.work):
            p.mkdir(parents=True, exist_ok=True)

    def env(self, **extra: str) -> dict[str, str]:
        """A MAPLE subprocess's environment: this checkout first, the test embedder, one thread."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("MAPLE_") and k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")
        }
        env.update(
            MAPLE_HOME=str(self.home),
            MAPLE_MODEL="hash-64",
            CLAUDE_PROJECT_DIR=str(self.project),
            PYTHONPATH=str(ROOT),
            PYTHONDONTWRITEBYTECODE="1",
            MAPLE_HOOK_RESIDENT_MINUTES="0",
            OMP_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            OPENBLAS_NUM_THREADS="1",
            TOKENIZERS_PARALLELISM="false",
        )
        env.update(extra)
        return env


def fit(text: str, cores: list[str], limit: int) -> str:
    """The text if it fits a field of `limit` characters; else the line holding the first core;
    else a window of that line centred on the core, so some of its label ("password=", "://user:")
    and what follows it ("@host") come along."""
    if len(text) <= limit:
        return text
    core = cores[0]
    line = next((ln.strip() for ln in text.splitlines() if core in ln), text)
    if len(line) <= limit:
        return line
    i = line.find(core)
    if len(core) >= limit:
        return line[i : i + limit]
    start = max(0, min(i - (limit - len(core)) // 2, len(line) - limit))
    return line[start : start + limit].strip()


# -- entry points ------------------------------------------------------------------------------


@dataclass
class Entry:
    name: str
    kind: str  # "mcp", "cli" or "hook"
    run: Callable[..., Any]
    note: str = ""


def cli(
    place: Place, *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [PY, "-m", "memory.cli", *args],
        check=False,
        input=stdin,
        capture_output=True,
        text=True,
        env=env or place.env(),
        cwd=str(place.project),
        timeout=timeout,
    )
    place.stderr.append(r.stderr.encode("utf-8", "replace"))
    return r


def cli_json(place: Place, *args: str) -> Any:
    r = cli(place, "--json", *args)
    if r.returncode != 0:
        raise RuntimeError(f"maple-memory {args[0]} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout)


def hook(
    place: Place, event: str, payload: Any, *extra: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[bytes]:
    """One hook process as Claude Code starts it: `python hooks/run.py EVENT`, JSON on stdin."""
    data = b"" if payload is None else json.dumps(payload).encode()
    r = subprocess.run(
        [PY, str(RUN_HOOK), event, *extra],
        check=False,
        input=data,
        capture_output=True,
        env=env or place.env(),
        cwd=str(place.project),
        timeout=timeout,
    )
    place.stderr.append(r.stderr)
    return r


def seed_notes(place: Place, extra: list[dict] | None = None) -> None:
    """Ordinary memories (no secrets) so searches, surfacing and updates have something to act on."""
    lines = [{"content": t} for t in SEED_NOTES] + (extra or [])
    path = place.work / "seeds.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    out = cli_json(place, "import", str(path))
    if out["imported"] + out["duplicates"] != len(lines):
        raise RuntimeError(f"seed import: {out}")


def per_case_seeds(cases: list[Case], layer: str = "fact") -> list[dict]:
    return [
        {
            "content": f"Service {c.index} note: the nightly job for shard {c.index} starts at "
            f"{c.index % 24:02d}:15 and takes about {5 + c.index % 40} minutes",
            "layer": layer,
        }
        for c in cases
    ]


def seed_ids(place: Place, cases: list[Case]) -> dict[int, int]:
    """Memory id of each case's own seed (content -> id through `list`)."""
    rows = cli_json(place, "list", "--limit", "200")["memories"]
    by_text = {r["content"]: r["id"] for r in rows}
    wanted = per_case_seeds(cases)
    return {c.index: by_text[w["content"]] for c, w in zip(cases, wanted)}


# ---- CLI ----


def cli_each(argv: Callable[[Case], list[str]], *, setup: str | None = None) -> Callable[[Place, list[Case]], None]:
    """An entry point that runs one `maple-memory` command per case."""

    def run(place: Place, cases: list[Case]) -> None:
        ids: dict[int, int] = {}
        if setup == "notes":
            seed_notes(place)
        elif setup in ("memories", "decisions"):
            seed_notes(place, per_case_seeds(cases, "decision" if setup == "decisions" else "fact"))
            ids = seed_ids(place, cases)
        for c in cases:
            args = [a.replace("{ID}", str(ids.get(c.index, 0))) for a in argv(c)]
            r = cli(place, *args)
            if r.returncode != 0:
                place.rejected[c.index] = (r.stderr.strip().splitlines() or ["?"])[-1][:200]

    return run


def cli_import(which: str) -> Callable[[Place, list[Case]], None]:
    def run(place: Place, cases: list[Case]) -> None:
        lines = []
        for c in cases:
            if which == "content":
                lines.append({"content": c.text})
            else:
                lines.append(
                    {
                        "content": f"Imported note {c.index} about the deploy settings",
                        "metadata": {"note": c.text, c.text: "key"},
                    }
                )
        path = place.work / "import.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        out = cli_json(place, "import", str(path))
        for e in out.get("errors", []):
            place.rejected[len(place.rejected)] = str(e)[:200]

    return run


def transcript(cases: list[Case], where: str, cwd: Path, session: str) -> str:
    """A Claude Code session in the real line shape (see /work/shared/fixtures/claude-code), one
    exchange per case, with the case's text in one place only: the user's prompt, the assistant's
    text, a Bash command the assistant ran, a successful tool result or the output of a failed
    call. Each is phrased the way extraction keeps it (a request to remember; a gotcha; a failed
    call followed by a different one that works), so the harvest really stores those turns."""
    lines: list[dict] = []
    parent: str | None = None
    t0 = 1_790_000_000.0

    def base(kind: str, n: int) -> dict:
        nonlocal parent
        u = str(uuid.UUID(int=random.Random(f"{session}{n}{kind}").getrandbits(128)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t0 + n))
        d = {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "uuid": u,
            "timestamp": stamp,
            "userType": "external",
            "entrypoint": "cli",
            "cwd": str(cwd),
            "sessionId": session,
            "version": "2.1.240",
            "gitBranch": "main",
        }
        parent = u
        return d

    def user(n: int, text: str) -> None:
        lines.append(
            {
                **base("user", n),
                "promptId": str(uuid.UUID(int=n)),
                "permissionMode": "default",
                "promptSource": "user",
                "message": {"role": "user", "content": text},
            }
        )

    def assistant(n: int, blocks: list[dict], stop: str) -> None:
        lines.append(
            {
                **base("assistant", n),
                "requestId": f"req_{n:024d}",
                "message": {
                    "id": f"msg_{n:024d}",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-5",
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 3, "output_tokens": 40, "service_tier": "standard"},
                },
            }
        )

    def bash(n: int, tool_id: str, command: str, output: str, error: bool) -> None:
        assistant(
            n,
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Bash",
                    "input": {"command": command, "description": "Try the connection"},
                }
            ],
            "tool_use",
        )
        lines.append(
            {
                **base("user", n + 1),
                "message": {
                    "role": "user",
                    "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": error}],
                },
                "toolUseResult": {
                    "stdout": "" if error else output,
                    "stderr": output if error else "",
                    "interrupted": False,
                    "isImage": False,
                },
            }
        )

    n = 0
    for c in cases:
        n += 10
        tid = f"toolu_{c.index:020d}"
        if where == "user":
            user(n, f"Remember this for later, it's the setup for service {c.index}: {c.text}")
            assistant(n + 1, [{"type": "text", "text": f"Noted: service {c.index} setup saved for later."}], "end_turn")
            continue
        if where == "assistant":
            user(n, f"What does the config for service {c.index} look like? We always keep it in deploy/")
            assistant(
                n + 1,
                [
                    {
                        "type": "text",
                        "text": f"Watch out: service {c.index} only connects with this exact config: {c.text}",
                    }
                ],
                "end_turn",
            )
            continue
        user(n, f"Check why service {c.index} fails to connect; we always run it from deploy/")
        if where == "tool_use":  # the secret is in the failed command, a different command then works
            bash(n + 1, tid + "1", " ".join(c.text.split())[:4000], "Error: connection refused\nExit code 1", True)
            bash(n + 3, tid + "2", f"./deploy/connect.sh --env-file deploy/.env service-{c.index}", "connected", False)
        elif where == "tool_result":  # the secret is what a successful command printed
            bash(n + 1, tid + "1", f"cat deploy/service-{c.index}.env", c.text, False)
        else:  # tool_error: the secret is in a failed call's error output, a different command then works
            bash(
                n + 1,
                tid + "1",
                f"./deploy/connect.sh service-{c.index}",
                f"Error: authentication failed for {c.text}\nExit code 1",
                True,
            )
            bash(n + 3, tid + "2", f"./deploy/connect.sh --env-file deploy/.env service-{c.index}", "connected", False)
        assistant(
            n + 5,
            [{"type": "text", "text": f"Service {c.index} connects now; its credentials come from deploy/.env."}],
            "end_turn",
        )
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)


def cli_extract(where: str) -> Callable[[Place, list[Case]], None]:
    def run(place: Place, cases: list[Case]) -> None:
        path = place.work / f"session-{where}.jsonl"
        path.write_text(transcript(cases, where, place.project, str(uuid.uuid4())), encoding="utf-8")
        r = cli(place, "--json", "extract", str(path))
        if r.returncode != 0:
            place.rejected[-1] = r.stderr.strip()[-200:]

    return run


# ---- hooks ----


def hook_prompt(resident: bool) -> Callable[[Place, list[Case]], None]:
    def run(place: Place, cases: list[Case]) -> None:
        seed_notes(place)
        env = place.env(MAPLE_HOOK_RESIDENT_MINUTES="1") if resident else place.env()
        tpath = place.work / "live-session.jsonl"
        tpath.write_text("", encoding="utf-8")
        try:
            for c in cases:
                payload = {
                    "session_id": f"sess-{c.index}",
                    "transcript_path": str(tpath),
                    "cwd": str(place.project),
                    "permission_mode": "default",
                    "hook_event_name": "UserPromptSubmit",
                    "prompt": c.text,
                }
                r = hook(place, "user-prompt-submit", payload, env=env)
                if r.returncode != 0:
                    place.rejected[c.index] = f"exit {r.returncode}"
                if resident and c.index == cases[0].index:
                    _wait_for_socket(place.home, 10.0)
        finally:
            stop_residents(place)

    return run


def _wait_for_socket(home: Path, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not list((home / "run").glob("*.sock")):
        time.sleep(0.1)


def stop_residents(place: Place) -> list[int]:
    """End the keyword residents our prompt hooks started (by pid, after checking it is ours)."""
    stopped = []
    for sock in (place.home / "run").glob("*.sock") if (place.home / "run").exists() else []:
        try:
            pid = int(sock.name.split(".")[0])
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (ValueError, OSError):
            continue
        if b"resident" in cmd and str(place.project).encode() in cmd:
            os.kill(pid, signal.SIGTERM)
            stopped.append(pid)
    for pid in stopped:
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)
    return stopped


def hook_harvest(where: str, event: str = "Stop") -> Callable[[Place, list[Case]], None]:
    def run(place: Place, cases: list[Case]) -> None:
        session = str(uuid.uuid4())
        path = place.work / f"{session}.jsonl"
        path.write_text(transcript(cases, where, place.project, session), encoding="utf-8")
        payload = {
            "session_id": session,
            "transcript_path": str(path),
            "cwd": str(place.project),
            "permission_mode": "default",
            "hook_event_name": event,
            "stop_hook_active": False,
        }
        name = {"Stop": "stop", "SessionEnd": "session-end", "PreCompact": "pre-compact"}[event]
        r = hook(place, name, payload)
        if r.returncode != 0 or r.stdout:
            place.rejected[-1] = f"{name}: exit {r.returncode}, stdout {r.stdout[:100]!r}"
        r = hook(place, "drain", None, "--wait")
        if r.returncode != 0:
            place.rejected[-2] = f"drain: exit {r.returncode}"

    return run


# ---- MCP ----

McpCall = Callable[[Case, dict[int, int]], tuple[str, dict[str, Any]]]


def mcp_each(call: McpCall, *, setup: str | None = None) -> Callable[..., Awaitable[None]]:
    """An entry point that makes one tool call per case in one server session."""

    async def run(client: Any, place: Place, cases: list[Case]) -> None:
        ids: dict[int, int] = {}
        if setup is not None:
            for note in SEED_NOTES:
                await client.call_tool("memory_store", {"content": note})
        if setup in ("memories", "decisions"):
            for c, s in zip(cases, per_case_seeds(cases)):
                if setup == "memories":
                    r = await client.call_tool("memory_store", {"content": s["content"]})
                else:
                    r = await client.call_tool(
                        "decision_record", {"chosen": f"Run shard {c.index} nightly", "why": s["content"]}
                    )
                if r.is_error:
                    raise RuntimeError(f"setup failed: {_text(r)}")
                ids[c.index] = r.structured_content["id"]
        for c in cases:
            tool, args = call(c, ids)
            try:
                r = await client.call_tool(tool, args)
                if r.is_error:
                    place.rejected[c.index] = _text(r)[:200]
            except Exception as e:  # noqa: BLE001 - a protocol-level refusal is a rejection too
                place.rejected[c.index] = f"{type(e).__name__}: {e}"[:200]

    return run


def _text(result: Any) -> str:
    parts = [getattr(x, "text", "") or "" for x in (result.content or [])]
    return " ".join(parts)


def _store(c: Case, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "memory_store", {"content": f"Service {c.index} deployment note", **fields}


def _decision(c: Case, **fields: Any) -> tuple[str, dict[str, Any]]:
    base = {
        "chosen": f"Use the managed config store for service {c.index}",
        "why": "fewer hand-edited files and one audit trail",
    }
    return "decision_record", {**base, **fields}


def _entries() -> list[Entry]:
    def F(limit: int) -> Callable[[Case], str]:
        return lambda c: fit(c.text, c.cores, limit)

    f64, f200 = F(64), F(200)
    e: list[Entry] = []

    def mcp(name: str, call: McpCall, setup: str | None = None, note: str = "") -> None:
        e.append(Entry(f"mcp {name}", "mcp", mcp_each(call, setup=setup), note))

    mcp("memory_store.content", lambda c, _: ("memory_store", {"content": c.text}))
    mcp("memory_store.category", lambda c, _: _store(c, category=f64(c)), note="fit 64")
    mcp("memory_store.subject", lambda c, _: _store(c, subject=f200(c)), note="fit 200")
    mcp("memory_store.tags", lambda c, _: _store(c, tags=[f64(c)]), note="fit 64")
    mcp("memory_store.metadata_key", lambda c, _: _store(c, metadata={c.text: "see above"}))
    mcp("memory_store.metadata_value", lambda c, _: _store(c, metadata={"config": c.text, "nested": [{"v": c.text}]}))
    mcp(
        "memory_update.content_edit",
        lambda c, ids: ("memory_update", {"id": ids[c.index], "content": c.text}),
        "memories",
    )
    mcp(
        "memory_update.content_supersede",
        lambda c, ids: ("memory_update", {"id": ids[c.index], "content": c.text, "mode": "supersede"}),
        "memories",
    )
    mcp(
        "memory_update.reason",
        lambda c, ids: (
            "memory_update",
            {"id": ids[c.index], "content": f"Service {c.index} moved to the new runner", "reason": f200(c)},
        ),
        "memories",
        "fit 200",
    )
    mcp(
        "entity_relate.source",
        lambda c, _: ("entity_relate", {"source": f200(c), "relation": "uses", "target": "billing-db"}),
        note="fit 200",
    )
    mcp(
        "entity_relate.relation",
        lambda c, _: ("entity_relate", {"source": f"service-{c.index}", "relation": f64(c), "target": "billing-db"}),
        note="fit 64",
    )
    mcp(
        "entity_relate.target",
        lambda c, _: ("entity_relate", {"source": f"service-{c.index}", "relation": "uses", "target": f200(c)}),
        note="fit 200",
    )
    mcp("decision_record.chosen", lambda c, _: _decision(c, chosen=F(2000)(c)))
    mcp("decision_record.why", lambda c, _: _decision(c, why=F(4000)(c)))
    mcp("decision_record.alternatives", lambda c, _: _decision(c, alternatives=["a hosted vault", F(2000)(c)]))
    mcp("decision_record.subject", lambda c, _: _decision(c, subject=f200(c)), note="fit 200")
    mcp("decision_record.category", lambda c, _: _decision(c, category=f64(c)), note="fit 64")
    mcp("decision_record.tags", lambda c, _: _decision(c, tags=[f64(c)]), note="fit 64")
    mcp("decision_record.context", lambda c, _: _decision(c, context=F(2000)(c)))
    mcp(
        "decision_outcome.notes",
        lambda c, ids: ("decision_outcome", {"id": ids[c.index], "outcome": "failed", "notes": F(4000)(c)}),
        "decisions",
    )
    mcp("memory_search.query", lambda c, _: ("memory_search", {"query": c.text}), "notes")
    mcp("memory_context.query", lambda c, _: ("memory_context", {"query": c.text}), "notes")
    mcp(
        "memory_surface.prompt",
        lambda c, _: ("memory_surface", {"prompt": c.text, "session_id": f"sess-{c.index}"}),
        "notes",
    )
    mcp("lessons_for.task", lambda c, _: ("lessons_for", {"task": F(4000)(c)}), "notes")

    def add(name: str, argv: Callable[[Case], list[str]], setup: str | None = None, note: str = "") -> None:
        e.append(Entry(f"cli {name}", "cli", cli_each(argv, setup=setup), note))

    add("add TEXT", lambda c: ["add", "--", c.text])
    add(
        "add --subject",
        lambda c: ["add", f"--subject={f200(c)}", "--", f"Service {c.index} deployment note"],
        note="fit 200",
    )
    add(
        "add --category",
        lambda c: ["add", f"--category={f64(c)}", "--", f"Service {c.index} deployment note"],
        note="fit 64",
    )
    add("add --tag", lambda c: ["add", f"--tag={f64(c)}", "--", f"Service {c.index} deployment note"], note="fit 64")
    add("update --content", lambda c: ["update", f"--content={c.text}", "{ID}"], "memories")
    add("update --content --supersede", lambda c: ["update", "--supersede", f"--content={c.text}", "{ID}"], "memories")
    add(
        "update --reason",
        lambda c: ["update", f"--content=Service {c.index} moved to the new runner", f"--reason={f200(c)}", "{ID}"],
        "memories",
        "fit 200",
    )
    e.append(Entry("cli import content", "cli", cli_import("content")))
    e.append(Entry("cli import metadata", "cli", cli_import("metadata"), "value and key"))
    for where in ("user", "assistant", "tool_use", "tool_result", "tool_error"):
        e.append(Entry(f"cli extract {where}", "cli", cli_extract(where)))
    benign_decision = ["decide", "--why=fewer hand-edited files and one audit trail"]
    add("decide CHOSEN", lambda c: [*benign_decision, "--", c.text[:2000]])
    add("decide --why", lambda c: ["decide", f"--why={c.text}", "--", f"Use the config store for service {c.index}"])
    add(
        "decide --alternative",
        lambda c: [
            *benign_decision,
            f"--alternative={F(2000)(c)}",
            "--",
            f"Use the config store for service {c.index}",
        ],
    )
    add(
        "decide --context",
        lambda c: [*benign_decision, f"--context={F(2000)(c)}", "--", f"Use the config store for service {c.index}"],
    )
    add(
        "decide --subject",
        lambda c: [*benign_decision, f"--subject={f200(c)}", "--", f"Use the config store for service {c.index}"],
        note="fit 200",
    )
    add(
        "decide --category",
        lambda c: [*benign_decision, f"--category={f64(c)}", "--", f"Use the config store for service {c.index}"],
        note="fit 64",
    )
    add("outcome --notes", lambda c: ["outcome", f"--notes={F(4000)(c)}", "--", "{ID}", "failed"], "decisions")
    add("relate SRC", lambda c: ["relate", "--", f200(c), "uses", "billing-db"], note="fit 200")
    add("relate TYPE", lambda c: ["relate", "--", f"service-{c.index}", f64(c), "billing-db"], note="fit 64")
    add("relate DST", lambda c: ["relate", "--", f"service-{c.index}", "uses", f200(c)], note="fit 200")
    add("search QUERY", lambda c: ["search", "--", c.text], "notes")
    add("context QUERY", lambda c: ["context", "--", c.text], "notes")
    add("context --prompt", lambda c: ["context", "--prompt", "--", c.text], "notes")

    e.append(Entry("hook prompt", "hook", hook_prompt(False), "no resident"))
    e.append(Entry("hook prompt+resident", "hook", hook_prompt(True), "keyword resident answers"))
    for where in ("user", "assistant", "tool_use", "tool_result", "tool_error"):
        e.append(Entry(f"hook stop {where}", "hook", hook_harvest(where)))
    e.append(Entry("hook session-end user", "hook", hook_harvest("user", "SessionEnd")))
    return e


ENTRIES = _entries()


# -- scanning ----------------------------------------------------------------------------------


def needles(core: str) -> list[bytes]:
    """The forms a core may take on disk: UTF-8 (any case), URL-encoded, JSON-escaped."""
    forms = {
        core,
        urllib.parse.quote(core, safe=""),
        urllib.parse.quote_plus(core),
        json.dumps(core)[1:-1],
        json.dumps(core).replace("/", "\\/")[1:-1],
    }
    return sorted({f.lower().encode("utf-8") for f in forms})


def files_of(home: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    if not home.exists():
        return out
    for p in sorted(home.rglob("*")):
        try:
            if p.is_file() and not p.is_symlink():
                out[str(p.relative_to(home))] = p.read_bytes()
        except OSError:
            continue
    return out


def scan_blobs(blobs: dict[str, bytes], cases: list[Case]) -> dict[int, dict[str, set[str]]]:
    """{case index: {core: {where}}} for every core found in any blob."""
    hits: dict[int, dict[str, set[str]]] = {}
    lowered = {k: v.lower() for k, v in blobs.items()}
    for c in cases:
        for core in c.cores:
            ns = needles(core)
            for name, blob in lowered.items():
                if any(n in blob for n in ns):
                    hits.setdefault(c.index, {}).setdefault(core, set()).add(name)
    return hits


def fts_terms(db: Path) -> set[str]:
    """Every token in the FTS5 index (contentless: tokens are all it keeps)."""
    if not db.exists():
        return set()
    import sqlean  # MAPLE's own driver: FTS5 with contentless_delete needs SQLite >= 3.43

    conn = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, memory_fts, row)")
        return {t for (t,) in conn.execute("SELECT term FROM temp.v")}
    except sqlean.Error:
        return set()
    finally:
        conn.close()


def scan_terms(terms: set[str], cases: list[Case]) -> dict[int, dict[str, set[str]]]:
    hits: dict[int, dict[str, set[str]]] = {}
    long_terms = [t for t in terms if len(t) >= MIN_TERM]
    for c in cases:
        for core in c.cores:
            low = core.lower()
            for t in long_terms:
                if t in low:
                    hits.setdefault(c.index, {}).setdefault(core, set()).add(f"fts:{t}")
    return hits


def merge(a: dict[int, dict[str, set[str]]], b: dict[int, dict[str, set[str]]]) -> None:
    for i, cores in b.items():
        for core, where in cores.items():
            a.setdefault(i, {}).setdefault(core, set()).update(where)


def stored_counts(db: Path) -> dict[str, int]:
    if not db.exists():
        return {}
    import sqlean

    conn = sqlean.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("memories", "entities", "relations", "memory_versions", "decision_outcomes")
        }
    finally:
        conn.close()


def finish(place: Place) -> None:
    """What a person would do next with a home: a backup and an export (kept inside the home)."""
    if not (place.home / "memory.db").exists():
        return
    cli(place, "backup")
    (place.home / "exports").mkdir(exist_ok=True)
    cli(place, "export", str(place.home / "exports" / "export.jsonl"))


# -- running -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    entry: str
    hits: dict[int, dict[str, set[str]]]
    stderr_hits: dict[int, dict[str, set[str]]]
    rejected: dict[int, str]
    stored: dict[str, int]
    files: list[str]
    seconds: float


async def run_mcp(entry: Entry, place: Place, cases: list[Case]) -> dict[int, dict[str, set[str]]]:
    """The tool calls in one server session; the home is scanned once before the server exits."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = place.env()
    params = StdioServerParameters(command=PY, args=["-m", "server"], env=env, cwd=str(place.project))
    live: dict[int, dict[str, set[str]]] = {}
    errlog = (place.work / "server-stderr.txt").open("w")
    try:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await entry.run(client, place, cases)
            live = scan_blobs({f"(live) {k}": v for k, v in files_of(place.home).items()}, cases)
    finally:
        errlog.close()
    place.stderr.append((place.work / "server-stderr.txt").read_bytes())
    return live


def run_entry(entry: Entry, cases: list[Case], root: Path) -> Outcome:
    place = Place(root)
    t0 = time.monotonic()
    hits: dict[int, dict[str, set[str]]] = {}
    if entry.kind == "mcp":
        merge(hits, asyncio.run(run_mcp(entry, place, cases)))
    else:
        entry.run(place, cases)
    finish(place)
    blobs = files_of(place.home)
    merge(hits, scan_blobs(blobs, cases))
    merge(hits, scan_terms(fts_terms(place.home / "memory.db"), cases))
    stderr_hits = scan_blobs({"stderr": b"\n".join(place.stderr)}, cases)
    return Outcome(
        entry.name,
        hits,
        stderr_hits,
        dict(place.rejected),
        stored_counts(place.home / "memory.db"),
        sorted(blobs),
        time.monotonic() - t0,
    )


def benign_check(bcases: list[dict], root: Path) -> list[dict]:
    """Benign look-alikes through memory_store and `add`: the keep strings missing afterwards."""
    out: list[dict] = []
    # CLI add
    place = Place(root / "benign-cli")
    stored: dict[int, str] = {}
    for i, b in enumerate(bcases):
        r = cli(place, "--json", "add", "--", b["text"])
        if r.returncode == 0:
            stored[i] = json.loads(r.stdout)["memory"]["content"]
        else:
            stored[i] = f"(rejected: {r.stderr.strip()[-120:]})"
    out += _missing("cli add", bcases, stored)

    # MCP memory_store
    place = Place(root / "benign-mcp")

    async def via_mcp() -> dict[int, str]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        res: dict[int, str] = {}
        params = StdioServerParameters(command=PY, args=["-m", "server"], env=place.env(), cwd=str(place.project))
        with (place.work / "server-stderr.txt").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                for i, b in enumerate(bcases):
                    r = await client.call_tool("memory_store", {"content": b["text"]})
                    res[i] = f"(rejected: {_text(r)[:120]})" if r.is_error else r.structured_content["content"]
        return res

    out += _missing("mcp memory_store", bcases, asyncio.run(via_mcp()))
    return out


def _missing(entry: str, bcases: list[dict], stored: dict[int, str]) -> list[dict]:
    out = []
    for i, b in enumerate(bcases):
        lost = [k for k in b["keep"] if k not in stored.get(i, "")]
        if lost:
            out.append({"entry": entry, "format": b["format"], "lost": lost, "stored": stored.get(i, "")[:300]})
    return out


def select(items: list[str], patterns: str | None) -> list[str]:
    if not patterns:
        return items
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    return [x for x in items if any(fnmatch.fnmatch(x, p if any(ch in p for ch in "*?[") else f"*{p}*") for p in pats)]


def load_cases(seed: int, formats: str | None = None) -> tuple[list[Case], list[dict]]:
    rng = random.Random(seed)
    raw, benign = secret_cases(rng), benign_cases(rng)
    keep = set(select([c["format"] for c in raw], formats))
    cases = [Case(i, c["format"], c["text"], c["cores"]) for i, c in enumerate(raw) if c["format"] in keep]
    return cases, benign


def leftover_processes(root: Path) -> list[int]:
    """Pids of processes still running whose command line names our temporary folder."""
    found = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if str(root).encode() in (p / "cmdline").read_bytes():
                found.append(int(p.name))
        except OSError:
            continue
    return found


def run_matrix(
    cases: list[Case], entries: list[Entry], root: Path, log: Callable[[str], None] = print
) -> list[Outcome]:
    outcomes = []
    for n, entry in enumerate(entries, 1):
        slug = "".join(ch if ch.isalnum() else "-" for ch in entry.name)
        o = run_entry(entry, cases, root / f"{n:02d}-{slug}")
        log(
            f"  [{n}/{len(entries)}] {entry.name}: {len(o.hits)} cases leaked, {len(o.rejected)} rejected, "
            f"stored {o.stored.get('memories', 0)} memories, {o.seconds:.0f} s"
        )
        outcomes.append(o)
    for pid in leftover_processes(root):  # detached drains or residents MAPLE left behind: ours
        os.kill(pid, signal.SIGTERM)
        log(f"  note: ended leftover process {pid}")
    return outcomes


# -- reporting ---------------------------------------------------------------------------------


def report(seed: int, cases: list[Case], entries: list[Entry], outcomes: list[Outcome], fps: list[dict] | None) -> None:
    print(
        f"\n# seed {seed}: {len(cases)} secret formats, {sum(len(c.cores) for c in cases)} cores, "
        f"{len(entries)} entry points"
    )
    print("\n## entry points (column number, name, note)")
    for n, e in enumerate(entries, 1):
        print(f"  {n:2d} {e.name}{'  (' + e.note + ')' if e.note else ''}")
    w = max(len(c.format) for c in cases)
    cols = len(outcomes)
    print("\n## matrix: cores leaked per format (rows) and entry point (columns); '.' = none, '+' = 10 or more")
    print(" " * (w + 1) + "".join(f"{(n // 10) or ' ':>2}" for n in range(1, cols + 1)))
    print(" " * (w + 1) + "".join(f"{n % 10:>2}" for n in range(1, cols + 1)) + "   entries")
    for c in cases:
        cells = []
        for o in outcomes:
            k = len(o.hits.get(c.index, {}))
            cells.append("." if k == 0 else ("+" if k >= 10 else str(k)))
        leaky = sum(1 for o in outcomes if o.hits.get(c.index))
        print(f"{c.format:<{w}} " + "".join(f"{x:>2}" for x in cells) + f"   {leaky:>3}")
    print("\n## per entry point: cases leaked / cores leaked / rejected calls / memories stored / where")
    for n, (e, o) in enumerate(zip(entries, outcomes), 1):
        cores = sum(len(v) for v in o.hits.values())
        places = sorted(
            {p.split(":")[0] if p.startswith("fts:") else p for v in o.hits.values() for ws in v.values() for p in ws}
        )
        print(
            f"  {n:2d} {e.name:<34} {len(o.hits):>3}/{len(cases)} {cores:>4} {len(o.rejected):>4} "
            f"{o.stored.get('memories', 0):>5}  {', '.join(places)[:90]}"
        )
    total_cells = sum(len(o.hits) for o in outcomes)
    print(f"  total: {total_cells} of {len(cases) * len(outcomes)} format x entry cells leak")
    print(f"\n## per format: entry points leaking (of {len(outcomes)}), cores leaked anywhere")
    rows = []
    for c in cases:
        leaky = [n for n, o in enumerate(outcomes, 1) if o.hits.get(c.index)]
        anywhere = set().union(*(o.hits.get(c.index, {}).keys() for o in outcomes)) if outcomes else set()
        rows.append((len(leaky), c.format, len(anywhere), len(c.cores)))
    for k, fmt, got, tot in sorted(rows, key=lambda r: (-r[0], r[1])):
        if k:
            print(f"  {fmt:<{w}} {k:>3}  cores {got}/{tot}")
    print(f"  formats that leak nowhere: {sum(1 for r in rows if r[0] == 0)} of {len(rows)}")
    content = next((o for o in outcomes if o.entry in ("mcp memory_store.content", "cli add TEXT")), None)
    if content is not None:
        missed = [c.format for c in cases if c.index in content.hits]
        print(f"\n## formats redact() misses in a memory's text ({content.entry}): {len(missed)} of {len(cases)}")
        print("  " + ", ".join(missed))
    rej = [(e.name, o.rejected) for e, o in zip(entries, outcomes) if o.rejected]
    if rej:
        print("\n## rejected calls (nothing meant to be stored; first reason shown)")
        for name, r in rej:
            first = next(iter(r.values()))
            print(f"  {name}: {len(r)}  e.g. {first[:140]!r}")
    err = [(e.name, o.stderr_hits) for e, o in zip(entries, outcomes) if o.stderr_hits]
    print("\n## stderr of the server / CLI / hooks (not MAPLE's files): cases whose cores appear")
    for name, h in err:
        print(f"  {name}: {len(h)}  ({', '.join(sorted(c.format for c in cases if c.index in h))[:150]})")
    if not err:
        print("  none")
    if fps is not None:
        print(f"\n## benign look-alikes whose keep strings did not survive ({len(fps)})")
        for f in fps:
            print(f"  {f['entry']:<17} {f['format']:<26} lost {f['lost']!r}"[:160])
            print(f"      stored: {f['stored'][:140]!r}")


def to_json(
    seed: int, cases: list[Case], entries: list[Entry], outcomes: list[Outcome], fps: list[dict] | None
) -> dict:
    return {
        "seed": seed,
        "cases": [{"index": c.index, "format": c.format, "cores": c.cores} for c in cases],
        "entries": [{"name": e.name, "kind": e.kind, "note": e.note} for e in entries],
        "outcomes": [
            {
                "entry": o.entry,
                "seconds": round(o.seconds, 1),
                "stored": o.stored,
                "files": o.files,
                "rejected": {str(k): v for k, v in o.rejected.items()},
                "hits": {
                    c.format: {core: sorted(w) for core, w in o.hits[c.index].items()}
                    for c in cases
                    if c.index in o.hits
                },
                "stderr_hits": {c.format: sorted(o.stderr_hits[c.index]) for c in cases if c.index in o.stderr_hits},
            }
            for o in outcomes
        ],
        "false_positives": fps,
    }


def redact_only(seeds: int) -> None:
    """Recall by format and false positives of the store's cleaning (records.scrub: hostile
    characters normalised, then redact()) alone, over seeds 0..seeds-1."""
    from memory.store.records import scrub as redact

    total: dict[str, int] = {}
    missed: dict[str, int] = {}
    btotal: dict[str, int] = {}
    changed: dict[str, int] = {}
    for seed in range(seeds):
        rng = random.Random(seed)
        for c in secret_cases(rng):
            total[c["format"]] = total.get(c["format"], 0) + 1
            out = redact(c["text"])
            if any(core in out for core in c["cores"]):
                missed[c["format"]] = missed.get(c["format"], 0) + 1
        for b in benign_cases(rng):
            btotal[b["format"]] = btotal.get(b["format"], 0) + 1
            out = redact(b["text"])
            if any(k not in out for k in b["keep"]):
                changed[b["format"]] = changed.get(b["format"], 0) + 1
    cases, leaks = sum(total.values()), sum(missed.values())
    print(f"# records.scrub() alone (what every TEXT column gets), seeds 0..{seeds - 1}")
    print(
        f"secret cases redacted whole: {cases - leaks}/{cases} ({1 - leaks / cases:.3f}); "
        f"formats missed at least once: {len(missed)} of {len(total)}"
    )
    for fmt in sorted(missed, key=lambda f: (-missed[f], f)):
        print(f"  missed {fmt:<28} {missed[fmt]:>4}/{total[fmt]}")
    bcases, fps = sum(btotal.values()), sum(changed.values())
    print(
        f"benign cases changed (false positives): {fps}/{bcases} ({fps / bcases:.3f}); "
        f"formats: {len(changed)} of {len(btotal)}"
    )
    for fmt in sorted(changed, key=lambda f: (-changed[f], f)):
        print(f"  changed {fmt:<27} {changed[fmt]:>4}/{btotal[fmt]}")
    # Labels (category, tag, relation type, entity name) are cleaned harder: the keep strings of
    # the benign cases (commit ids, UUIDs, versions, hashes, names) given as labels must survive.
    from memory.store.records import scrub_label

    labels = [k for seed in range(seeds) for b in benign_cases(random.Random(seed)) for k in b["keep"] if len(k) <= 64]
    lost = sorted({k for k in labels if scrub_label(k) != k})
    blobs = sum(1 for k in labels if scrub_label(k) != k and re.fullmatch(r"[A-Za-z0-9+/]{40,}={0,2}", k))
    print(
        f"benign strings changed as labels (false positives): {sum(scrub_label(k) != k for k in labels)}/{len(labels)}"
        f", of which bare base64 blobs (certificate lines, public-key bodies) given as a label: {blobs}"
    )
    lost = [k for k in lost if not re.fullmatch(r"[A-Za-z0-9+/]{40,}={0,2}", k)]
    for k in lost[:20]:
        print(f"  changed label {k!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, help="corpus seed (default: random, printed)")
    ap.add_argument("--json", type=Path, metavar="OUT", help="also write every hit, with where it was found")
    ap.add_argument("--entries", help="only entry points matching these substrings or globs (comma-separated)")
    ap.add_argument("--formats", help="only secret formats matching these substrings or globs")
    ap.add_argument("--list", action="store_true", help="list the entry points and formats, run nothing")
    ap.add_argument("--no-benign", action="store_true", help="skip the false-positive check")
    ap.add_argument("--keep", action="store_true", help="keep the temporary homes (path printed)")
    ap.add_argument(
        "--redact-only", action="store_true", help="measure the store's scrub() alone (recall by format, benign)"
    )
    ap.add_argument("--seeds", type=int, default=200, help="with --redact-only: seeds 0..N-1 (default 200)")
    args = ap.parse_args(argv)
    if args.redact_only:
        redact_only(args.seeds)
        return 0
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    cases, benign = load_cases(seed, args.formats)
    names = select([e.name for e in ENTRIES], args.entries)
    entries = [e for e in ENTRIES if e.name in names]
    if args.list:
        print("\n".join(e.name for e in entries))
        print("\n".join(c.format for c in cases))
        return 0
    root = Path(tempfile.mkdtemp(prefix="maple-secrets-"))
    print(f"seed {seed}; {len(cases)} formats x {len(entries)} entry points; homes under {root}", flush=True)
    t0 = time.monotonic()
    try:
        outcomes = run_matrix(cases, entries, root, log=lambda s: print(s, flush=True))
        fps = None if args.no_benign else benign_check(benign, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    report(seed, cases, entries, outcomes, fps)
    print(f"\n{time.monotonic() - t0:.0f} s in all")
    if args.json:
        args.json.write_text(json.dumps(to_json(seed, cases, entries, outcomes, fps), indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
