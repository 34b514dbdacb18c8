"""Project isolation on every path: many projects share one database, each with memories,
preferences, decisions, entities and relations (stored through the tools, the CLI and the Stop
hook's harvest), plus global memories. From each project, every tool the server lists is called
with probing arguments (the shared words, every entity name, every memory id of every project,
every scope), the hooks surface and brief, the CLI searches and lists: no other project's memory,
entity, relation or path ever shows, and no other project's memory is changed (forget, update,
pin, outcomes, relations and maintenance included). Global memories show everywhere."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import db
from reliability import harness
from server.app import build_server

WORDS = "orchid deploy Kestrel note"
READ_FIRST = (
    "memory_search",
    "memory_get",
    "memory_list",
    "memory_history",
    "memory_stats",
    "memory_surface",
    "memory_context",
    "entity_get",
    "graph_neighbors",
    "graph_path",
    "lessons_for",
)


def letter(i: int) -> str:
    """0 -> AA, 12 -> BC: entity names without digits, all of one length (QuasarB would be a part of QuasarBA)."""
    return "".join(chr(65 + int(d)) for d in f"{i:02d}")


def marker(i: int) -> str:
    return f"isomark{letter(i)}x"


def server(home: Path, scope: str) -> Client:
    cfg = config_mod.load(home=home, env={}, worker_enabled=False)
    return Client(build_server(cfg, HashEmbedder(64), project=scope), mode="legacy")


async def populate(home: Path, dirs: list[Path]) -> dict[str, Any]:
    """Memories of every kind in every project, through the paths people and assistants use."""
    for i, d in enumerate(dirs):
        scope = str(d.resolve())
        async with server(home, scope) as c:
            tools = {t.name for t in (await c.list_tools()).tools}
            calls = [
                (
                    "memory_store",
                    {
                        "content": f"Orchid deploy note {marker(i)}: Kestrel uses Quasar{letter(i)} in this project",
                        "importance": 5,
                        "pinned": i % 2 == 0,
                    },
                ),
                (
                    "memory_store",
                    {"content": f"I prefer orchid themed dashboards {marker(i)}", "category": "preference"},
                ),
                ("memory_store", {"content": f"Global orchid note for everyone gmark{letter(i)}x", "scope": "global"}),
            ]
            if "decision_record" in tools:
                calls.append(
                    (
                        "decision_record",
                        {
                            "chosen": f"Use Quasar{letter(i)} for orchid deploys {marker(i)}",
                            "why": f"Kestrel needs it {marker(i)}",
                            "subject": "orchid deploys",
                        },
                    )
                )
            if "entity_relate" in tools:
                calls.append(
                    ("entity_relate", {"source": "Kestrel", "relation": "depends_on", "target": f"Quasar{letter(i)}"})
                )
            for tool, args in calls:
                r = await c.call_tool(tool, args)
                assert not r.is_error, harness.tool_text(r)
        subprocess.run(
            [
                harness.PY,
                "-m",
                "memory.cli",
                "--project",
                str(d),
                "add",
                f"Added from the CLI: orchid deploy Kestrel {marker(i)}",
            ],
            env=harness.env_for(home),
            check=True,
            capture_output=True,
            timeout=120,
        )
        transcript = d / "session.jsonl"
        transcript.write_text(
            harness.transcript_line(
                "user",
                f"Please remember that orchid deploys for Kestrel run from {marker(i)}.toml",
                session=f"s{i}",
                cwd=str(d),
                n=0,
            )
            + "\n"
        )
        r = harness.run_hook(
            "stop",
            {"hook_event_name": "Stop", "session_id": f"s{i}", "cwd": str(d), "transcript_path": str(transcript)},
            home,
            cwd=d,
        )
        assert r.returncode == 0
    harness.settle_harvests(home)
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        rows = conn.execute("SELECT id, scope, content FROM memories").fetchall()
    finally:
        conn.close()
    return {"ids": [r[0] for r in rows], "rows": rows}


def forbidden(i: int, dirs: list[Path]) -> list[str]:
    """What project i must never see: the others' markers, entity names and folders."""
    out = []
    for j, d in enumerate(dirs):
        if j != i:
            out += [marker(j), f"Quasar{letter(j)}", f"{d.name}/", str(d.resolve())]
    return out


def snapshot(home: Path, excluding: list[str]) -> dict[str, Any]:
    """Every memory, outcome and relation outside these scopes, as it stands."""
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    marks = ",".join("?" * len(excluding))
    try:
        return {
            "memories": conn.execute(
                f"SELECT id, scope, content, layer, category, subject, importance, confidence, pinned, tags, "
                f"metadata, deleted_at, superseded_by, valid_to FROM memories WHERE scope NOT IN ({marks}) "
                f"ORDER BY id",
                excluding,
            ).fetchall(),
            "outcomes": conn.execute(
                f"SELECT o.* FROM decision_outcomes o JOIN memories m ON m.id = o.memory_id "
                f"WHERE m.scope NOT IN ({marks}) ORDER BY o.id",
                excluding,
            ).fetchall(),
            "relations": conn.execute(
                f"SELECT r.id, r.type, r.valid_to, r.src, r.dst FROM relations r JOIN entities e ON e.id = r.src "
                f"WHERE e.scope NOT IN ({marks}) ORDER BY r.id",
                excluding,
            ).fetchall(),
        }
    finally:
        conn.close()


def probes(tool: Any, ids: list[int], dirs: list[Path], i: int) -> Iterator[dict[str, Any]]:
    """Arguments for `tool` that go looking for other projects' data, one varied field at a time.
    Tools that write get no project's names (they may write to the global scope, which every
    project sees: the probe would plant the names there itself)."""
    props = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", []))
    reads = tool.annotations is not None and tool.annotations.read_only_hint
    names = ["Kestrel", *[f"Quasar{letter(j)}" for j in range(len(dirs)) if reads]]
    pools: dict[str, list[Any]] = {}
    for name, schema in props.items():
        kinds = {b.get("type") for b in schema.get("anyOf", [schema])}
        enum = next((b["enum"] for b in schema.get("anyOf", [schema]) if "enum" in b), None)
        if enum:
            pools[name] = list(enum)
        elif "integer" in kinds and ("id" in name or name == "memory_id"):
            pools[name] = list(ids)
        elif "array" in kinds and name == "ids":
            pools[name] = [ids[k : k + 100] for k in range(0, len(ids), 100)]
        elif "string" in kinds:
            if name in ("name", "entity", "source", "target"):
                pools[name] = names
            elif name == "relation":
                pools[name] = ["depends_on"]
            elif name == "cwd":
                pools[name] = [str(d) for d in dirs]  # informational only: must not switch projects
            elif name == "session_id":
                pools[name] = ["isolation-session"]
            elif name in ("subject",):
                pools[name] = ["orchid deploys"]
            elif name in required or name in ("query", "prompt", "task", "content", "chosen", "why"):
                pools[name] = [f"{WORDS} " + " ".join(names)]
    base = {k: v[0] for k, v in pools.items() if k in required}
    if tool.name == "memory_history":
        base = {}  # one of id or subject, not both
    yield dict(base)
    for name, values in pools.items():
        for v in values:
            args = dict(base)
            if tool.name == "memory_history":
                args = {name: v}
            args[name] = v
            yield args


def without_echo(text: str, args: dict[str, Any]) -> str:
    """The response without the caller's own arguments quoted back ("no entity called 'QuasarB'"
    repeats what was asked, it reveals nothing)."""
    for value in args.values():
        if isinstance(value, str) and value:
            text = text.replace(value, "").replace(json.dumps(value)[1:-1], "")
    return text


async def probe_project(home: Path, i: int, dirs: list[Path], ids: list[int]) -> dict[str, Any]:
    scope = str(dirs[i].resolve())
    bad = forbidden(i, dirs)
    before = snapshot(home, [scope, "global"])
    seen_own = False
    calls, leaks = 0, []
    async with server(home, scope) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        order = [t for t in READ_FIRST if t in tools] + sorted(t for t in tools if t not in READ_FIRST)
        for name in order:
            for args in probes(tools[name], ids, dirs, i):
                r = await c.call_tool(name, args)
                calls += 1
                text = without_echo(harness.tool_text(r), args)
                seen_own = seen_own or marker(i) in text
                found = [b for b in bad if b in text]
                if found:
                    leaks.append(
                        {
                            "project": i,
                            "tool": name,
                            "args": json.dumps(args)[:300],
                            "found": found,
                            "response": text[:500],
                        }
                    )
    after = snapshot(home, [scope, "global"])
    changed = [k for k in before if before[k] != after[k]]
    return {"calls": calls, "leaks": leaks, "changed_elsewhere": changed, "seen_own": seen_own, "tools": sorted(tools)}


def probe_hooks_and_cli(home: Path, i: int, dirs: list[Path]) -> dict[str, Any]:
    d = dirs[i]
    bad = forbidden(i, dirs)
    out: dict[str, str] = {}
    for event, payload in (
        ("session-start", {"hook_event_name": "SessionStart", "source": "startup"}),
        (
            "user-prompt-submit",
            {"hook_event_name": "UserPromptSubmit", "prompt": f"How do orchid deploys work for Kestrel? {WORDS}"},
        ),
    ):
        payload.update(session_id=f"iso-hooks-{i}", cwd=str(d))
        r = harness.run_hook(event, payload, home, cwd=d)
        assert r.returncode == 0, r.stderr
        out[event] = r.stdout.decode()
    for args in (["search", WORDS], ["list", "--limit", "1000"], ["search", "Quasar"]):
        r = subprocess.run(
            [harness.PY, "-m", "memory.cli", "--project", str(d), *args],
            env=harness.env_for(home),
            capture_output=True,
            text=True,
            timeout=120,
        )
        out[" ".join(args)] = r.stdout + r.stderr
    leaks = [
        {"project": i, "path": k, "found": [b for b in bad if b in v]}
        for k, v in out.items()
        if any(b in v for b in bad)
    ]
    own = marker(i) in out["user-prompt-submit"] + out["session-start"]
    return {
        "leaks": leaks,
        "hooks_saw_own_or_global": own or "gmark" in out["session-start"],
        "cli_saw_own": marker(i) in out[f"search {WORDS}"],
    }


async def run_isolation(tmp_path: Path, home: Path, projects: int) -> dict[str, Any]:
    dirs = [tmp_path / f"proj-{i:02d}" for i in range(projects)]  # one length: proj-1 is a part of proj-10
    for d in dirs:
        d.mkdir()
    data = await populate(home, dirs)
    result: dict[str, Any] = {
        "projects": projects,
        "memories": len(data["ids"]),
        "tool_calls": 0,
        "leaks": [],
        "changed_elsewhere": [],
        "blind": [],
    }
    for i in range(projects):
        h = probe_hooks_and_cli(home, i, dirs)  # first: the tool probes forget and purge this project's memories
        r = await probe_project(home, i, dirs, data["ids"])
        result["tool_calls"] += r["calls"]
        result["tools"] = r["tools"]
        result["leaks"] += r["leaks"] + h["leaks"]
        if r["changed_elsewhere"]:
            result["changed_elsewhere"].append({"project": i, "tables": r["changed_elsewhere"]})
        if not (r["seen_own"] and h["hooks_saw_own_or_global"] and h["cli_saw_own"]):
            result["blind"].append(
                {"project": i, "tools": r["seen_own"], "hooks": h["hooks_saw_own_or_global"], "cli": h["cli_saw_own"]}
            )
    return result


def _check(result: dict[str, Any]) -> None:
    assert result["leaks"] == [], json.dumps(result["leaks"][:5], indent=1)
    assert result["changed_elsewhere"] == []
    assert result["blind"] == []  # each project does find its own memories: the probes can see


@pytest.mark.short
async def test_four_projects_see_only_their_own_and_global_memories_on_every_path(tmp_path, home):
    result = await run_isolation(tmp_path, home, 4)
    harness.report("isolation_short", result)
    _check(result)


@pytest.mark.slow
async def test_twelve_projects_see_only_their_own_and_global_memories_on_every_path(tmp_path, home):
    result = await run_isolation(tmp_path, home, 12)
    harness.report("isolation", result)
    _check(result)


async def test_the_isolation_check_notices_a_leak(tmp_path, home):
    """Project 1's marker stored in project 0: the probe from project 0 must report it."""
    dirs = [tmp_path / "proj-0", tmp_path / "proj-1"]
    for d in dirs:
        d.mkdir()
    async with server(home, str(dirs[0].resolve())) as c:
        await c.call_tool("memory_store", {"content": f"Orchid deploy note {marker(1)} in the wrong place"})
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    ids = [r[0] for r in conn.execute("SELECT id FROM memories")]
    conn.close()
    r = await probe_project(home, 0, dirs, ids)
    assert r["leaks"] and any(marker(1) in leak["found"] for leak in r["leaks"])
