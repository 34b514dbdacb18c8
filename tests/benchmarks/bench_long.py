"""Long memories through the product: can memory_search find a runbook by a question about its
last third, and does the result show the part that answers it?

Ten runbooks of 5,800-13,700 characters: the five English ones of tests/data/team_eval
(t161-t165, with the team store's questions that have an `answer`) and five written for this
benchmark in tests/data/long_eval (two Chinese, three English; its queries.json). Every question's
answer lies in the last third of its runbook. The store also holds the other 160 memories of the
team store, so a runbook competes with short memories about the same services.

For each checkout (--checkout, default this one; pass /work/main for "before"): a fresh MAPLE
home, the short memories loaded with `python -m memory.cli import`, ONE stdio MCP server
(`python -m server`, the real default model unless --model), the runbooks stored with the MCP tool
memory_store, then memory_search (limit 10) for every question, after memory_stats reports the
model and the search indexes ready. Printed per checkout: hit@1, recall@5 and @10 and MRR of the runbook, and
the share of questions whose answer text is in what memory_search returned for that runbook
within the top 5 (the content the model reads), with median search latency.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_long.py [--checkout DIR ...] [--model NAME]
        [--json OUT] [--no-engine]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
TEAM = ROOT / "tests" / "data" / "team_eval" / "team.json"
LONG = ROOT / "tests" / "data" / "long_eval"
LIMIT = 10
READY_TIMEOUT = 600.0


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def load() -> tuple[list[dict], list[dict], list[dict]]:
    """(short memories as import lines, runbooks {key, title, text}, questions {q, lang, key, answer})."""
    team = json.loads(TEAM.read_text(encoding="utf-8"))
    short = [
        {"content": m["text"], "layer": m["layer"], "metadata": {"bench_key": m["key"]}}
        for m in team["memories"]
        if not m.get("runbook")
    ]
    books = [{"key": m["key"], "title": m["title"], "text": m["text"]} for m in team["memories"] if m.get("runbook")]
    keys = {b["key"] for b in books}
    questions = [
        {"q": q["q"], "lang": q["lang"], "key": next(iter(set(q["targets"]) & keys)), "answer": q["answer"]}
        for q in team["queries"]
        if q.get("answer") and set(q["targets"]) & keys
    ]
    for path in sorted(LONG.glob("rb*.md")):
        text = path.read_text(encoding="utf-8")
        books.append({"key": path.stem, "title": text.splitlines()[0].lstrip("# "), "text": text})
    for q in json.loads((LONG / "queries.json").read_text(encoding="utf-8"))["queries"]:
        questions.append({"q": q["q"], "lang": q["lang"], "key": Path(q["runbook"]).stem, "answer": q["answer"]})
    for q in questions:  # the premise of the benchmark: every answer is in the last third
        text = next(b["text"] for b in books if b["key"] == q["key"])
        at = norm(text).find(norm(q["answer"]))
        assert at >= 0 and at >= len(norm(text)) * 0.6, (q["q"], at)
    return short, books, questions


def child_env(home: Path, project: Path, checkout: Path, model: str | None, engine: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAPLE_") and k != "CLAUDE_PROJECT_DIR"}
    env.update(
        {
            "MAPLE_HOME": str(home),
            "CLAUDE_PROJECT_DIR": str(project),
            "PYTHONPATH": str(checkout),
            "PYTHONDONTWRITEBYTECODE": "1",
            "OMP_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    if model:
        env["MAPLE_MODEL"] = model
    if not engine:  # the server loads the model itself (an engine's answer can time out on a busy machine)
        env["MAPLE_HOOK_RESIDENT_MINUTES"] = "0"
    return env


async def session(env: dict[str, str], project: Path, books: list[dict], questions: list[dict], err: Path) -> dict:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=PY, args=["-m", "server"], env=env, cwd=str(project))
    with err.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            ids: dict[int, str] = {}
            t0 = time.perf_counter()
            for b in books:
                r = await client.call_tool(
                    "memory_store", {"content": b["text"], "category": "runbook", "subject": b["title"][:200]}
                )
                if r.is_error:
                    raise SystemExit(f"memory_store failed for {b['key']}: {r.content}")
                ids[r.structured_content["id"]] = b["key"]
            store_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            while True:
                stats = (await client.call_tool("memory_stats", {})).structured_content or {}
                if stats.get("model") == "ready" and stats.get("search_indexes") == "ready":
                    break
                if time.perf_counter() - t0 > READY_TIMEOUT:
                    raise SystemExit(f"not ready after {READY_TIMEOUT:.0f}s: {stats}")
                await asyncio.sleep(0.5)
            rows, latencies = [], []
            for q in questions:
                t1 = time.perf_counter()
                r = await client.call_tool("memory_search", {"query": q["q"], "limit": LIMIT})
                latencies.append((time.perf_counter() - t1) * 1000)
                if r.is_error:
                    raise SystemExit(f"memory_search failed for {q['q']!r}: {r.content}")
                hits = r.structured_content["results"]
                rank = next((i for i, h in enumerate(hits, 1) if ids.get(h["id"]) == q["key"]), None)
                shown = next((h for h in hits[:5] if ids.get(h["id"]) == q["key"]), None)
                rows.append(
                    {
                        "q": q["q"],
                        "lang": q["lang"],
                        "runbook": q["key"],
                        "rank": rank,
                        "answer_shown": bool(shown and norm(q["answer"]) in norm(shown["content"])),
                        "part": shown.get("part") if shown else None,
                    }
                )
    return {"rows": rows, "latencies_ms": latencies, "store_s": store_s, "memories": stats.get("memories")}


def run_checkout(checkout: Path, model: str | None, engine: bool = True) -> dict:
    short, books, questions = load()
    with tempfile.TemporaryDirectory(prefix="maple-long-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = child_env(home, project, checkout, model, engine)
        lines = Path(tmp) / "short.jsonl"
        lines.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in short), encoding="utf-8")
        r = subprocess.run(
            [PY, "-m", "memory.cli", "--json", "--project", str(project), "import", str(lines)],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            timeout=3600,
            check=False,
        )
        if r.returncode != 0:
            raise SystemExit(f"import failed: {r.stderr[-2000:]}")
        err = Path(tmp) / "server-stderr.txt"
        try:
            out = asyncio.run(session(env, project, books, questions, err))
        except BaseException:
            print(f"--- server stderr ({checkout}) ---\n{err.read_text(errors='replace')[-4000:]}", file=sys.stderr)
            raise
    rows = out["rows"]
    n = len(rows)
    out["summary"] = {
        "questions": n,
        "hit@1": sum(1 for x in rows if x["rank"] == 1) / n,
        "recall@5": sum(1 for x in rows if x["rank"] and x["rank"] <= 5) / n,
        "recall@10": sum(1 for x in rows if x["rank"]) / n,
        "mrr@10": sum(1 / x["rank"] for x in rows if x["rank"]) / n,
        "answer_shown@5": sum(x["answer_shown"] for x in rows) / n,
        "median_search_ms": statistics.median(out["latencies_ms"]),
        "runbooks": len(books),
        "runbook_chars": [min(len(b["text"]) for b in books), max(len(b["text"]) for b in books)],
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkout", action="append", type=Path, help="MAPLE checkout to run (repeatable)")
    ap.add_argument("--model", help="embedding model (default: the checkout's default)")
    ap.add_argument("--json", type=Path, help="write every row here")
    ap.add_argument("--no-engine", action="store_true", help="no warm engine: each server loads the model itself")
    args = ap.parse_args()
    results = {}
    for checkout in args.checkout or [ROOT]:
        res = run_checkout(checkout.resolve(), args.model, not args.no_engine)
        results[str(checkout)] = res
        s = res["summary"]
        print(f"\n{checkout}: {s['runbooks']} runbooks of {s['runbook_chars'][0]:,}-{s['runbook_chars'][1]:,} chars")
        print(f"{'question':<62} {'lang':>4} {'rank':>4} {'shown':>5}")
        for x in res["rows"]:
            print(f"{x['q'][:60]:<62} {x['lang']:>4} {x['rank'] or '-'!s:>4} {'yes' if x['answer_shown'] else 'no':>5}")
        print(
            f"hit@1 {s['hit@1']:.3f}  recall@5 {s['recall@5']:.3f}  recall@10 {s['recall@10']:.3f}  "
            f"MRR@10 {s['mrr@10']:.3f}  answer shown in the top-5 hit "
            f"{s['answer_shown@5']:.3f}  ({s['questions']} questions; median memory_search {s['median_search_ms']:.0f} ms)"
        )
    if args.json:
        args.json.write_text(json.dumps(results, ensure_ascii=False, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
