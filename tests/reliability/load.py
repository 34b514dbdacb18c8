"""Load: many processes on one database at once, each keeping a ledger; then ledgers vs the database.

    run_load(workdir, processes=16, ops=300)   the orchestrator (tests and bench_reliability.py)
    python -m reliability.load worker ...      one worker process (started by the orchestrator)

Two kinds of worker, as in real use:
  mcp   an assistant session: an SDK client over stdio to its own `python -m server` process,
        storing, forgetting and searching through the tools, surfacing through memory_surface,
        and harvesting through the Stop hook process Claude Code would run for that session.
  lib   hook-style and CLI-style processes: the library directly (Store, retrieval), a fresh
        store every few operations as short-lived processes have, surfacing through the
        UserPromptSubmit hook process and harvesting through the Stop hook process.
Updates go through `memory_update` when the server has it, else through `Store.update`.

Every operation and its outcome go into the worker's ledger (JSON): the memories it stored with
a marker word each, the marker's fate (updated to a new marker, archived, purged), the facts it
put in its transcript for harvesting, latencies, and every error a caller saw. The check then
demands, for every ledger: each live or archived marker in exactly one memory of the right
project in the right state, each replaced or purged marker in none (table and FTS index alike),
each harvested fact exactly once, no memory nobody wrote, zero errors, and a database that
passes the cross-table invariants (harness.check_database).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make `reliability` and `memory` importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parents[1])]

from reliability import harness  # noqa: E402

OPS = {"store": 34, "update": 14, "forget": 10, "search": 22, "surface": 8, "harvest": 12}
NAMES = ["Kestrel", "Juniper", "Halyard", "Marlin", "Osprey", "Tamarack"]  # shared entities: contended upserts
REOPEN_EVERY = 10  # lib workers open a fresh store this often, like short-lived CLI and hook processes


# -- the worker ----------------------------------------------------------------------------------


class Ledger:
    def __init__(self, path: Path, name: str, kind: str, project: str, transcript: Path):
        self.path = path
        self.data: dict[str, Any] = {
            "worker": name,
            "kind": kind,
            "project": project,
            "transcript": str(transcript),
            "ops": [],
            "memories": {},
            "replaced": [],
            "harvest": [],
            "errors": [],
            "search_misses": 0,
            "notes": [],
        }

    def op(self, op: str, ms: float, ok: bool, error: str | None = None, **extra: Any) -> None:
        self.data["ops"].append({"op": op, "ms": round(ms, 3), "ok": ok, **extra})
        if not ok:
            self.data["errors"].append({"op": op, "error": (error or "")[:500]})

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data, ensure_ascii=False))
        os.replace(tmp, self.path)


def _live(ledger: Ledger) -> list[str]:
    return [t for t, m in ledger.data["memories"].items() if m["state"] == "live"]


def _content(rng: random.Random, name: str, i: int, token: str) -> str:
    return (
        f"Load note {name}-{i}: the {rng.choice(NAMES)} module keeps {token} "
        f"next to {harness.word(rng, 3)} and {harness.word(rng, 3)}"
    )


def _append_turn(transcript: Path, text: str, session: str, cwd: str, n: int) -> None:
    with transcript.open("a", encoding="utf-8") as f:
        f.write(harness.transcript_line("user", text, session=session, cwd=cwd, n=n) + "\n")
        f.write(
            harness.transcript_line("assistant", "Noted, I will keep that in mind.", session=session, cwd=cwd, n=n)
            + "\n"
        )


def _run_hook(event: str, payload: dict, home: Path, project: Path) -> tuple[bool, str]:
    env = harness.env_for(home)
    r = harness.run_hook(event, payload, home, env=env, cwd=project, timeout=600)
    if r.returncode != 0:
        return False, f"exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"
    out = r.stdout.decode(errors="replace")
    if event == "stop" and out:
        return False, f"the Stop hook printed {out[:200]!r}"
    if out:
        doc = json.loads(out)  # exactly one hook document
        if list(doc) != ["hookSpecificOutput"]:
            return False, f"unexpected hook output {out[:200]!r}"
    return True, ""


def _pick_op(rng: random.Random, ledger: Ledger) -> str:
    op = rng.choices(list(OPS), weights=list(OPS.values()))[0]
    if op in ("update", "forget", "search") and not _live(ledger):
        return "store"
    return op


def lib_worker(a: argparse.Namespace, ledger: Ledger, rng: random.Random) -> None:
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.retrieval import ranking as retrieval
    from memory.store import NewMemory, Store

    project, home = Path(a.project), Path(a.home)
    scope = ledger.data["project"]
    cfg = config_mod.load(home=home)
    store: Store | None = None
    session = f"{ledger.data['worker']}-session"
    transcript = Path(ledger.data["transcript"])
    _wait_for_go(a)
    for i in range(a.ops):
        if store is None or i % REOPEN_EVERY == 0:
            if store is not None:
                store.close()
            t0 = time.perf_counter()
            try:
                store = Store.open(cfg, HashEmbedder(64))
            except Exception as e:  # noqa: BLE001 - every failure a caller sees goes in the ledger
                ledger.op("open", (time.perf_counter() - t0) * 1000, False, f"{type(e).__name__}: {e}")
                store = None
                continue
            ledger.op("open", (time.perf_counter() - t0) * 1000, True)
        op = _pick_op(rng, ledger)
        t0 = time.perf_counter()
        extra: dict[str, Any] = {}
        try:
            if op == "store":
                token = harness.word(rng, 5)
                m = store.add(
                    NewMemory(
                        _content(rng, ledger.data["worker"], i, token), scope=scope, category="load", tags=["load"]
                    )
                )
                ledger.data["memories"][token] = {"id": m.id, "state": "live"}
            elif op == "update":
                old = rng.choice(_live(ledger))
                entry = ledger.data["memories"][old]
                token = harness.word(rng, 5)
                store.update(entry["id"], content=_content(rng, ledger.data["worker"], i, token))
                del ledger.data["memories"][old]
                ledger.data["memories"][token] = entry
                ledger.data["replaced"].append(old)
            elif op == "forget":
                token = rng.choice(_live(ledger))
                entry = ledger.data["memories"][token]
                permanent = rng.random() < 0.3
                store.forget(entry["id"], permanent=permanent)
                entry["state"] = "purged" if permanent else "archived"
            elif op == "search":
                token = rng.choice(_live(ledger))
                q = retrieval.make_query(f"which module keeps {token}", [scope, "global"], limit=5)
                found = [r.memory.id for r in retrieval.search(store, q, session_id=session)]
                if ledger.data["memories"][token]["id"] not in found:
                    ledger.data["search_misses"] += 1
                extra["hits"] = len(found)
            elif op == "surface":
                ok, err = _run_hook(
                    "user-prompt-submit",
                    {
                        "hook_event_name": "UserPromptSubmit",
                        "session_id": session,
                        "cwd": str(project),
                        "transcript_path": str(transcript),
                        "prompt": f"where does the {rng.choice(NAMES)} module keep its files?",
                    },
                    home,
                    project,
                )
                if not ok:
                    raise RuntimeError(err)
            elif op == "harvest":
                token, fact = harness.harvest_fact(rng)
                _append_turn(transcript, fact, session, str(project), i)
                ledger.data["harvest"].append(token)
                ok, err = _run_hook(
                    "stop",
                    {
                        "hook_event_name": "Stop",
                        "session_id": session,
                        "cwd": str(project),
                        "transcript_path": str(transcript),
                        "stop_hook_active": False,
                    },
                    home,
                    project,
                )
                if not ok:
                    raise RuntimeError(err)
        except Exception as e:  # noqa: BLE001
            ledger.op(op, (time.perf_counter() - t0) * 1000, False, f"{type(e).__name__}: {e}")
            continue
        finally:
            if i % 20 == 0:
                ledger.save()
        ledger.op(op, (time.perf_counter() - t0) * 1000, True, **extra)
    if store is not None:
        store.close()


async def mcp_worker(a: argparse.Namespace, ledger: Ledger, rng: random.Random) -> None:
    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from memory.store import Store

    project, home = Path(a.project), Path(a.home)
    session = f"{ledger.data['worker']}-session"
    transcript = Path(ledger.data["transcript"])
    errlog = open(Path(a.ledger).with_suffix(".stderr"), "w")
    try:
        async with harness.stdio_client(home, project, errlog) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            if "memory_update" not in tools:
                ledger.data["notes"].append("no memory_update tool: updates go through Store.update")
            _wait_for_go(a)
            for i in range(a.ops):
                op = _pick_op(rng, ledger)
                t0 = time.perf_counter()
                extra: dict[str, Any] = {}
                try:
                    if op == "store":
                        token = harness.word(rng, 5)
                        r = await client.call_tool(
                            "memory_store",
                            {
                                "content": _content(rng, ledger.data["worker"], i, token),
                                "category": "load",
                                "tags": ["load"],
                            },
                        )
                        _raise_if_error(r)
                        ledger.data["memories"][token] = {"id": r.structured_content["id"], "state": "live"}
                    elif op == "update":
                        old = rng.choice(_live(ledger))
                        entry = ledger.data["memories"][old]
                        token = harness.word(rng, 5)
                        content = _content(rng, ledger.data["worker"], i, token)
                        if "memory_update" in tools:
                            _raise_if_error(
                                await client.call_tool("memory_update", {"id": entry["id"], "content": content})
                            )
                        else:
                            extra["via"] = "Store.update"
                            with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
                                s.update(entry["id"], content=content)
                        del ledger.data["memories"][old]
                        ledger.data["memories"][token] = entry
                        ledger.data["replaced"].append(old)
                    elif op == "forget":
                        token = rng.choice(_live(ledger))
                        entry = ledger.data["memories"][token]
                        permanent = rng.random() < 0.3
                        _raise_if_error(
                            await client.call_tool("memory_forget", {"id": entry["id"], "permanent": permanent})
                        )
                        entry["state"] = "purged" if permanent else "archived"
                    elif op == "search":
                        token = rng.choice(_live(ledger))
                        r = await client.call_tool(
                            "memory_search", {"query": f"which module keeps {token}", "limit": 5}
                        )
                        _raise_if_error(r)
                        found = [h["id"] for h in r.structured_content["results"]]
                        if ledger.data["memories"][token]["id"] not in found:
                            ledger.data["search_misses"] += 1
                        extra["hits"] = len(found)
                    elif op == "surface":
                        r = await client.call_tool(
                            "memory_surface",
                            {
                                "prompt": f"where does the {rng.choice(NAMES)} module keep its files?",
                                "session_id": session,
                            },
                        )
                        _raise_if_error(r)
                    elif op == "harvest":
                        token, fact = harness.harvest_fact(rng)
                        _append_turn(transcript, fact, session, str(project), i)
                        ledger.data["harvest"].append(token)
                        ok, err = _run_hook(
                            "stop",
                            {
                                "hook_event_name": "Stop",
                                "session_id": session,
                                "cwd": str(project),
                                "transcript_path": str(transcript),
                                "stop_hook_active": False,
                            },
                            home,
                            project,
                        )
                        if not ok:
                            raise RuntimeError(err)
                except Exception as e:  # noqa: BLE001
                    ledger.op(op, (time.perf_counter() - t0) * 1000, False, f"{type(e).__name__}: {e}")
                    continue
                finally:
                    if i % 20 == 0:
                        ledger.save()
                ledger.op(op, (time.perf_counter() - t0) * 1000, True, **extra)
            # Read back through the server: every memory of this ledger in the state it should be.
            ids = [m["id"] for m in ledger.data["memories"].values() if m["state"] != "purged"]
            for start in range(0, len(ids), 100):
                r = await client.call_tool("memory_get", {"ids": ids[start : start + 100]})
                _raise_if_error(r)
                got = {m["id"]: m for m in r.structured_content["memories"]}
                for token, m in ledger.data["memories"].items():
                    if m["id"] in got and (
                        token not in got[m["id"]]["content"] or got[m["id"]]["archived"] != (m["state"] == "archived")
                    ):
                        ledger.data["errors"].append(
                            {
                                "op": "readback",
                                "error": f"memory {m['id']} reads back as {got[m['id']]['content'][:80]!r}",
                            }
                        )
                missing = set(r.structured_content["missing"])
                if missing:
                    ledger.data["errors"].append({"op": "readback", "error": f"memory_get misses {sorted(missing)}"})
    finally:
        errlog.close()


def _raise_if_error(result: Any) -> None:
    if result.is_error:
        raise RuntimeError(harness.tool_text(result))


def _wait_for_go(a: argparse.Namespace) -> None:
    """Say ready, then start together with the others (the orchestrator creates `go`)."""
    Path(a.ledger).with_suffix(".ready").write_text("ready")
    go = Path(a.go)
    deadline = time.monotonic() + 600
    while not go.exists():
        if time.monotonic() > deadline:
            raise SystemExit("no go signal within 600 s")
        time.sleep(0.01)


def worker_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="reliability.load worker")
    p.add_argument("--kind", choices=["mcp", "lib"], required=True)
    for name in ("name", "home", "project", "ledger", "transcript", "go"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--ops", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    a = p.parse_args(argv)
    from memory.scope import project_scope

    rng = random.Random(a.seed)
    ledger = Ledger(Path(a.ledger), a.name, a.kind, project_scope(a.project), Path(a.transcript))
    try:
        if a.kind == "lib":
            lib_worker(a, ledger, rng)
        else:
            import anyio

            anyio.run(mcp_worker, a, ledger, rng)
    except BaseException as e:  # noqa: BLE001 - the ledger says how the worker ended
        import traceback

        ledger.data["errors"].append({"op": "worker", "error": "".join(traceback.format_exception(e))[-3000:]})
        raise
    finally:
        ledger.data["finished"] = True
        ledger.save()
    return 0


# -- the orchestrator -----------------------------------------------------------------------------


def run_load(
    workdir: Path, processes: int, ops: int, *, projects: int = 3, seed: int = 20261201, timeout: float = 3600
) -> dict[str, Any]:
    """Start `processes` workers (half mcp, half lib) on one fresh home; check; return the report."""
    home = workdir / "home"
    go = workdir / "go"
    dirs = [workdir / f"project-{p}" for p in range(projects)]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    (workdir / "transcripts").mkdir(exist_ok=True)
    procs: list[tuple[subprocess.Popen, Path]] = []
    for w in range(processes):
        kind = "mcp" if w % 2 == 0 else "lib"
        name = f"{kind}{w}"
        ledger = workdir / f"ledger-{name}.json"
        args = [
            harness.PY,
            "-m",
            "reliability.load",
            "worker",
            "--kind",
            kind,
            "--name",
            name,
            "--home",
            str(home),
            "--project",
            str(dirs[w % projects]),
            "--ledger",
            str(ledger),
            "--transcript",
            str(workdir / "transcripts" / f"{name}.jsonl"),
            "--go",
            str(go),
            "--ops",
            str(ops),
            "--seed",
            str(seed + w),
        ]
        with ledger.with_suffix(".log").open("w") as log:  # the child keeps its own copy of the descriptor
            procs.append(
                (
                    subprocess.Popen(
                        args,
                        env=harness.env_for(home),
                        cwd=str(dirs[w % projects]),
                        stdout=subprocess.DEVNULL,
                        stderr=log,
                    ),
                    ledger,
                )
            )
    deadline = time.monotonic() + 300
    while not all(ledger.with_suffix(".ready").exists() or p.poll() is not None for p, ledger in procs):
        if time.monotonic() > deadline:
            break
        time.sleep(0.02)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    go.write_text("go")
    codes = []
    for p, _ in procs:
        try:
            codes.append(p.wait(timeout=max(1.0, timeout - (time.perf_counter() - t0))))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
    wall = time.perf_counter() - t0
    harness.settle_harvests(home)
    ledgers = [
        json.loads(ledger.read_text())
        if ledger.exists()
        else {
            "worker": ledger.name,
            "errors": [{"op": "worker", "error": "no ledger written"}],
            "ops": [],
            "memories": {},
            "replaced": [],
            "harvest": [],
        }
        for _, ledger in procs
    ]
    for code, (_, ledger), data in zip(codes, procs, ledgers):
        if code != 0:
            log = ledger.with_suffix(".log").read_text(errors="replace")[-600:]
            data.setdefault("errors", []).append({"op": "worker", "error": f"exit {code}: {log}"})
    result = verify(home, ledgers)
    result.update(summarise(ledgers, wall, processes, ops))
    result["loadavg_at_start"] = round(load_before, 2)
    result["hooks_log"] = _hooks_log(home)
    return result


def verify(home: Path, ledgers: list[dict]) -> dict[str, Any]:
    """Compare every ledger with the database; count lost, duplicated and unexpected writes."""
    from memory.lang import text
    from memory.store import db

    health = harness.check_database(home / "memory.db", home=home, fill_vectors=True)
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    lost: list[str] = []
    duplicated: list[str] = []
    wrong: list[str] = []
    accounted: set[int] = set()
    try:
        rows = conn.execute("SELECT id, scope, content, deleted_at FROM memories").fetchall()

        def holding(token: str) -> list[tuple]:
            return [r for r in rows if token in r[2]]

        def fts(token: str) -> set[int]:
            return {
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ?", (text.match_or(text.query_terms(token)),)
                )
            }

        for L in ledgers:
            scope = L.get("project")
            for token, m in L.get("memories", {}).items():
                found = holding(token)
                if m["state"] == "purged":
                    if found or fts(token):
                        wrong.append(f"{L['worker']}: purged memory {m['id']} ({token}) is still there")
                    continue
                if not found:
                    lost.append(f"{L['worker']}: memory {m['id']} ({token}, {m['state']})")
                    continue
                if len(found) > 1:
                    duplicated.append(f"{L['worker']}: {token} in memories {[r[0] for r in found]}")
                r = found[0]
                accounted.update(x[0] for x in found)
                if r[0] != m["id"] or r[1] != scope or (r[3] is not None) != (m["state"] == "archived"):
                    wrong.append(
                        f"{L['worker']}: {token} expected id {m['id']} {m['state']} in {scope}, got "
                        f"id {r[0]} deleted_at={r[3]} in {r[1]}"
                    )
                if fts(token) != {m["id"]}:
                    wrong.append(f"{L['worker']}: FTS finds {token} in {sorted(fts(token))}, expected [{m['id']}]")
            for token in L.get("replaced", []):
                if holding(token) or fts(token):
                    wrong.append(f"{L['worker']}: replaced text {token} is still stored or indexed")
            for token in L.get("harvest", []):
                found = [r for r in holding(token) if r[3] is None]
                accounted.update(r[0] for r in holding(token))
                if not found:
                    lost.append(f"{L['worker']}: harvested fact {token}")
                elif len(found) > 1:
                    duplicated.append(f"{L['worker']}: harvested fact {token} in {[r[0] for r in found]}")
                elif found[0][1] != scope:
                    wrong.append(f"{L['worker']}: harvested fact {token} landed in {found[0][1]}, not {scope}")
        unexpected = [r[0] for r in rows if r[0] not in accounted]
    finally:
        conn.close()
    errors = [f"{L.get('worker')}: {e['op']}: {e['error']}" for L in ledgers for e in L.get("errors", [])]
    lock_errors = [e for e in errors if "locked" in e.lower() or "busy" in e.lower()]
    return {
        "database": {k: v for k, v in health.items() if k != "integrity"},
        "lost": lost,
        "duplicated": duplicated,
        "wrong_state": wrong,
        "unexpected_memories": unexpected,
        "errors": errors,
        "lock_errors": lock_errors,
        "search_misses": sum(L.get("search_misses", 0) for L in ledgers),
        "unfinished_workers": [L.get("worker") for L in ledgers if not L.get("finished")],
        "writes_checked": sum(
            len(L.get("memories", {})) + len(L.get("replaced", [])) + len(L.get("harvest", [])) for L in ledgers
        ),
    }


def summarise(ledgers: list[dict], wall: float, processes: int, ops: int) -> dict[str, Any]:
    by_op: dict[str, list[float]] = {}
    by_kind: dict[str, int] = {}
    for L in ledgers:
        for o in L.get("ops", []):
            if o["op"] == "open":
                continue
            by_op.setdefault(f"{o['op']}", []).append(o["ms"])
            by_kind[L.get("kind", "?")] = by_kind.get(L.get("kind", "?"), 0) + 1
    total = sum(len(v) for v in by_op.values())
    return {
        "processes": processes,
        "ops_per_process": ops,
        "ops_done": total,
        "ops_by_kind": by_kind,
        "wall_seconds": round(wall, 2),
        "throughput_ops_per_s": round(total / wall, 1) if wall else 0.0,
        "latency_ms": {
            op: {
                "n": len(v),
                "p50": round(harness.percentile(v, 50), 1),
                "p95": round(harness.percentile(v, 95), 1),
                "max": round(max(v), 1),
            }
            for op, v in sorted(by_op.items())
        },
        "notes": sorted({n for L in ledgers for n in L.get("notes", [])}),
    }


def _hooks_log(home: Path) -> dict[str, int]:
    path = home / "hooks.log"
    counts: dict[str, int] = {}
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            key = "locked (handed to a background harvest)" if "locked" in line else line.split(" ", 2)[-1][:60]
            counts[key] = counts.get(key, 0) + 1
    return counts


def failures(result: dict[str, Any]) -> list[str]:
    """Everything in a load report that means something was lost, broken or shown an error."""
    out = [f"database: {p}" for p in result["database"]["problems"]]
    for key in ("lost", "duplicated", "wrong_state", "errors", "unfinished_workers"):
        out += [f"{key}: {x}" for x in result[key]]
    if result["unexpected_memories"]:
        out.append(f"memories no ledger wrote: {result['unexpected_memories'][:20]}")
    if result["search_misses"]:
        out.append(f"{result['search_misses']} searches for a worker's own live marker missed it")
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        sys.exit(worker_main(sys.argv[2:]))
    sys.exit("usage: python -m reliability.load worker ... (tests and bench_reliability.py run the whole load)")
