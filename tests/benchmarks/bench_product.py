"""Retrieval quality through the product: `maple-memory import`, then the MCP tool `memory_search`.

bench_locomo.py calls the library; a user meets MAPLE through the CLI and the MCP server. For
every store this script makes a fresh MAPLE home and project folder, writes the memories as
JSONL (each with {"bench_key": ...} in its metadata), loads them with
`python -m memory.cli --project DIR import FILE`, starts ONE stdio MCP server
(`python -m server`, MAPLE_HOME and CLAUDE_PROJECT_DIR set, the default model unless --model)
driven by the mcp Client in legacy mode (Claude Code's handshake), polls `memory_stats` until the
model and the in-memory search indexes are ready and every memory has its vector, then calls `memory_search` (limit 20) for every
query and maps each hit back to gold through its metadata. A memory the import folded into an
identical one stands for every turn it folded. Each store's line also reports, read straight
from its SQLite file, how many stored texts differ from the imported ones and how many
memory-entity links the import made (the entity channel has nothing to work with without them).

Sets (--sets, comma-separated; default all):
  locomo     ../shared/bench/locomo-dev.json as its README defines the task: a store per
             conversation, one memory per turn, time = session date, session_id per session;
             R@5/10/20, hit@k, MRR per category, overall 1-4, category 5 apart. Then the same
             stores through the library (bench_locomo.run: add_many + search, same model), side by
             side with the product path (--no-library skips it).
             --variant no-session imports without session_id (what the context channels are worth).
             --detect-entities writes each line's entities as `add` would detect them
             (memory.lang.mentions.detect), for a checkout whose import does not detect them yet.
  bilingual  tests/data/bilingual_eval/bilingual.json: hit@1, hit@5, MRR per direction.
  noanswer   tests/data/paraphrase_eval/no_answer.json and tests/data/team_eval/team.json (a store
             each): answerable hit@1/hit@5/MRR; for no-answer queries the share whose top score is
             at or above a threshold, over a range of thresholds, and the top score distribution.
  runbooks   the long runbooks of team.json and their queries with an "answer": runbook recall@5
             and whether the content memory_search returns holds the answer text.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_product.py [--sets locomo,bilingual,...]
        [--variant default,no-session] [--limit-queries N] [--model NAME] [--shuffle SEED] [--json OUT]

memory_search records each search as a recall (there is no way to turn that off through the
tool), and a recall raises a memory's recency prior, so a store's figures depend a little on the
order of its queries: --shuffle SEED asks them in another order to show by how much.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
# ../shared/bench next to the checkout (a worktree sits one level deeper)
LOCOMO = next(
    (
        p / "shared" / "bench" / "locomo-dev.json"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared" / "bench" / "locomo-dev.json").exists()
    ),
    Path("/work/shared/bench/locomo-dev.json"),
)
BILINGUAL = ROOT / "tests" / "data" / "bilingual_eval" / "bilingual.json"
NO_ANSWER = ROOT / "tests" / "data" / "paraphrase_eval" / "no_answer.json"
TEAM = ROOT / "tests" / "data" / "team_eval" / "team.json"
SETS = ("locomo", "bilingual", "noanswer", "runbooks")
LIMIT = 20
READY_TIMEOUT = 600.0  # seconds to wait for the model and indexes on a loaded 2-core machine
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0, 1.03, 1.05)  # scores fuse normalised channels: top ~1


def norm(text: str) -> str:
    """Whitespace folded, case ignored: the rule by which MAPLE folds identical memories."""
    return " ".join(text.split()).casefold()


# -- one store through the product ---------------------------------------------------------------


@dataclass
class StoreSpec:
    name: str
    memories: list[dict]  # import lines; metadata.bench_key set on each
    queries: list[str]


@dataclass
class StoreRun:
    name: str
    imported: dict
    altered: int  # memories whose stored text differs from the imported line (redaction)
    entity_links: int
    ready_s: float
    import_s: float
    latencies_ms: list[float]
    hits: list[list[dict]]  # per query: [{keys, score, content, truncated, id}]
    stats: dict = field(default_factory=dict)


def child_env(home: Path, project: Path, model: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAPLE_") and k != "CLAUDE_PROJECT_DIR"}
    env.update(
        {
            "MAPLE_HOME": str(home),
            "CLAUDE_PROJECT_DIR": str(project),
            "PYTHONPATH": str(ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
    )
    if model:
        env["MAPLE_MODEL"] = model
    return env


def import_file(lines: list[dict], home: Path, project: Path, env: dict[str, str]) -> tuple[dict, float]:
    path = home.parent / "memories.jsonl"
    path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in lines), encoding="utf-8")
    t0 = time.perf_counter()
    r = subprocess.run(
        [PY, "-m", "memory.cli", "--json", "--project", str(project), "import", str(path)],
        check=False,
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"import failed ({r.returncode}): {r.stderr[-2000:]}")
    report = json.loads(r.stdout)
    if report["rejected"]:
        raise SystemExit(f"import rejected lines: {report['errors'][:5]}")
    return report, seconds


def inspect_db(db: Path, lines: list[dict]) -> tuple[int, int]:
    """Read straight from SQLite: memories whose stored content is not the imported text (the
    store trims surrounding whitespace, which is not counted), and memory-entity links (entity
    detection on import feeds the entity channel)."""
    want = {m["metadata"]["bench_key"]: m["content"].strip() for m in lines}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT content, json_extract(metadata, '$.bench_key') FROM memories").fetchall()
        links = conn.execute("SELECT count(*) FROM memory_entities").fetchone()[0]
    finally:
        conn.close()
    return sum(1 for content, key in rows if key in want and content != want[key]), links


async def serve_and_search(
    spec: StoreSpec, home: Path, project: Path, env: dict[str, str], key_groups: dict[str, list[str]]
) -> tuple[float, list[float], list[list[dict]], dict]:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=PY, args=["-m", "server"], env=env, cwd=str(project))
    errpath = home.parent / "server-stderr.txt"
    with errpath.open("w") as errlog:
        try:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                t0 = time.perf_counter()
                while True:
                    stats = (await client.call_tool("memory_stats", {})).structured_content
                    if stats is None:  # the engine did not answer in time (a loaded machine): ask again
                        stats = {"model": "loading", "search_indexes": "not answered"}
                    # Ready = model loaded, indexes built, and every imported memory embedded (the
                    # engine embeds an import in the background: a fast model is ready long before).
                    if (
                        stats["model"] == "ready"
                        and stats["search_indexes"] == "ready"
                        and not stats.get("without_vectors")
                    ):
                        break
                    if stats["model"] == "unavailable" or stats["search_indexes"] == "failed":
                        raise SystemExit(
                            f"{spec.name}: server not usable: model {stats['model']}, indexes {stats['search_indexes']}"
                        )
                    if time.perf_counter() - t0 > READY_TIMEOUT:
                        raise SystemExit(f"{spec.name}: model/indexes not ready after {READY_TIMEOUT:.0f}s")
                    await asyncio.sleep(0.5)
                ready_s = time.perf_counter() - t0
                latencies, hits = [], []
                for q in spec.queries:
                    t1 = time.perf_counter()
                    r = await client.call_tool("memory_search", {"query": q, "limit": LIMIT})
                    latencies.append((time.perf_counter() - t1) * 1000)
                    if r.is_error:
                        raise SystemExit(f"{spec.name}: memory_search failed for {q!r}: {r.content}")
                    out = []
                    for h in r.structured_content["results"]:
                        key = (h.get("metadata") or {}).get("bench_key")
                        out.append(
                            {
                                "id": h["id"],
                                "keys": key_groups.get(key, [key]),
                                "score": h["score"],
                                "content": h["content"],
                                "truncated": h["truncated"],
                            }
                        )
                    hits.append(out)
                final = (await client.call_tool("memory_stats", {})).structured_content
        except BaseException:
            errlog.flush()
            tail = errpath.read_text(errors="replace")[-3000:]
            print(f"--- server stderr ({spec.name}) ---\n{tail}", file=sys.stderr)
            raise
    return ready_s, latencies, hits, final


def run_store(spec: StoreSpec, model: str | None) -> StoreRun:
    """Import the store's memories and ask its queries, all through the product's interfaces."""
    groups: dict[str, list[str]] = {}
    for m in spec.memories:
        groups.setdefault(norm(m["content"]), []).append(m["metadata"]["bench_key"])
    key_groups = {m["metadata"]["bench_key"]: groups[norm(m["content"])] for m in spec.memories}
    with tempfile.TemporaryDirectory(prefix="maple-product-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        project.mkdir()
        env = child_env(home, project, model)
        report, import_s = import_file(spec.memories, home, project, env)
        expected = len(groups)
        if report["imported"] != expected:
            print(
                f"  {spec.name}: imported {report['imported']} memories, expected {expected} after folding "
                "identical texts",
                file=sys.stderr,
            )
        altered, links = inspect_db(home / "memory.db", spec.memories)
        ready_s, latencies, hits, stats = asyncio.run(serve_and_search(spec, home, project, env, key_groups))
    keep = ("memories", "embedding_model", "without_vectors", "last_maintenance", "model", "search_indexes")
    return StoreRun(
        spec.name, report, altered, links, ready_s, import_s, latencies, hits, {k: stats.get(k) for k in keep}
    )


def store_summary(run: StoreRun) -> dict:
    lat = sorted(run.latencies_ms)
    return {
        "store": run.name,
        "import": run.imported,
        "altered_by_store": run.altered,
        "entity_links": run.entity_links,
        "import_s": round(run.import_s, 1),
        "ready_s": round(run.ready_s, 1),
        "search_ms_median": round(statistics.median(lat), 1) if lat else None,
        "search_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
        "stats": run.stats,
    }


def ordered(queries: list, seed: int | None) -> list:
    if seed is None:
        return list(queries)
    out = list(queries)
    random.Random(seed).shuffle(out)
    return out


def mean(rows: list[dict], key: str) -> float:
    return sum(r[key] for r in rows) / len(rows) if rows else 0.0


def rank_of(hits: list[dict], targets: set[str]) -> int | None:
    for i, h in enumerate(hits, 1):
        if targets & set(h["keys"]):
            return i
    return None


def hit_scores(hits: list[dict], targets: set[str]) -> dict:
    r = rank_of(hits, targets)
    return {
        "rank": r,
        "hit@1": float(r == 1),
        "hit@5": float(r is not None and r <= 5),
        "MRR": 1 / r if r else 0.0,
        "top_score": hits[0]["score"] if hits else 0.0,
    }


# -- locomo ----------------------------------------------------------------------------------------


def locomo_time(s: str) -> str:
    dt = datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    return dt.isoformat().replace("+00:00", "Z")


def locomo_turns(sample: dict) -> list[tuple[str, str, str, str]]:
    """(dia_id, session key, occurred_at, text) for every turn, in order."""
    conv, out, n = sample["conversation"], [], 1
    while f"session_{n}" in conv:
        when = locomo_time(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}" + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
            out.append((t["dia_id"], f"session_{n}", when, text))
        n += 1
    return out


def locomo_evidence(evidence: list, valid: set[str]) -> list[str]:
    """The README's known defects: "D8:6; D9:17" is two ids, "D:11:26" is D11:26, "D30:05" is
    D30:5; ids of turns that do not exist are dropped."""
    out = []
    for e in evidence:
        for part in re.split(r"[;,\s]+", str(e)):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m and f"D{int(m[1])}:{int(m[2])}" in valid:
                out.append(f"D{int(m[1])}:{int(m[2])}")
    return list(dict.fromkeys(out))


def detected_entities(text: str) -> list[list[str]]:
    """The entities `Store.add_many` detects for a memory given none, as an import line's list
    ([name, kind, role]); an import that leaves a missing list empty gets them this way."""
    from memory.lang import mentions

    return [list(e) for e in mentions.detect(text) if 0 < len(" ".join(e[0].split())) <= 200]


def run_locomo(args, variant: str) -> dict:
    data = json.loads(Path(args.locomo).read_text())
    rows: dict[int, list[dict]] = {}
    stores, dropped = [], 0
    for sample in data:
        turns = locomo_turns(sample)
        valid = {t[0] for t in turns}
        lines = []
        for dia, sess, when, text in turns:
            line = {"content": text, "occurred_at": when, "source_ref": dia, "metadata": {"bench_key": dia}}
            if variant != "no-session":
                line["session_id"] = f"{sample['sample_id']}/{sess}"
            if args.detect_entities:
                line["entities"] = detected_entities(text)
            lines.append(line)
        qas = []
        for qa in sample["qa"]:
            ev = locomo_evidence(qa.get("evidence", []), valid)
            if ev:
                qas.append((qa, ev))
            else:
                dropped += 1
        qas = ordered(qas, args.shuffle)[: args.limit_queries] if args.limit_queries else ordered(qas, args.shuffle)
        run = run_store(
            StoreSpec(f"locomo {sample['sample_id']}", lines, [str(qa["question"]) for qa, _ in qas]), args.model
        )
        stores.append(store_summary(run))
        for (qa, ev), hits in zip(qas, run.hits):
            ranked = [set(h["keys"]) for h in hits]
            gold = set(ev)
            row = {
                "sample": sample["sample_id"],
                "question": qa["question"],
                "category": qa["category"],
                "evidence": ev,
                "top": [h["keys"] for h in hits[:10]],
            }
            for k in (5, 10, 20):
                top = set().union(*ranked[:k]) if ranked else set()
                row[f"R@{k}"] = len(gold & top) / len(gold)
                row[f"hit@{k}"] = float(bool(gold & top))
            r = rank_of(hits, gold)
            row["MRR"] = 1 / r if r else 0.0
            rows.setdefault(qa["category"], []).append(row)
        print(f"  {run.name}: {len(lines)} turns, {len(qas)} queries, ready in {run.ready_s:.0f}s", file=sys.stderr)
    keys = ("R@5", "R@10", "R@20", "hit@5", "hit@10", "hit@20", "MRR")
    table = {
        CATEGORIES.get(c, str(c)): {"n": len(rs), **{k: mean(rs, k) for k in keys}} for c, rs in sorted(rows.items())
    }
    overall = [r for c, rs in rows.items() if c in (1, 2, 3, 4) for r in rs]
    table["overall 1-4"] = {"n": len(overall), **{k: mean(overall, k) for k in keys}}
    return {
        "variant": variant,
        "table": table,
        "queries_without_valid_evidence": dropped,
        "stores": stores,
        "rows": [r for rs in rows.values() for r in rs],
    }


def print_locomo(res: dict) -> None:
    cols = ("R@5", "R@10", "R@20", "hit@10", "MRR")
    print(
        f"\nlocomo (variant {res['variant']}): memory_search limit {LIMIT}, turn level "
        f"({res['queries_without_valid_evidence']} questions without valid evidence skipped)"
    )
    print(f"{'category':<13}{'n':>5} " + " ".join(f"{c:>7}" for c in cols))
    order = ["multi-hop", "temporal", "open-domain", "single-hop", "overall 1-4", "adversarial"]
    for name in order:
        if name in res["table"]:
            row = res["table"][name]
            label = "adversarial 5" if name == "adversarial" else name
            print(f"{label:<13}{row['n']:>5} " + " ".join(f"{row[c]:>7.3f}" for c in cols))
    print_stores(res["stores"])


def print_stores(stores: list[dict]) -> None:
    for s in stores:
        imp = s["import"]
        print(
            f"  {s['store']}: imported {imp['imported']} (folded {imp['duplicates']}), import {s['import_s']}s, "
            f"ready {s['ready_s']}s, search median {s['search_ms_median']} ms / p95 {s['search_ms_p95']} ms, "
            f"{s['entity_links']} entity links"
            + (f", {s['altered_by_store']} stored texts differ from the import" if s["altered_by_store"] else "")
            + (f", maintenance ran {s['stats']['last_maintenance']}" if s["stats"].get("last_maintenance") else "")
        )


def run_library_locomo(args) -> dict:
    """The same LoCoMo stores through the library, as bench_locomo.py runs them (Store.add_many,
    retrieval.search in process), with the same model: what the product path should equal."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    import bench_locomo

    from memory import config as config_mod
    from memory.embed import from_config

    data = json.loads(Path(args.locomo).read_text())
    model = args.model or config_mod.Config().embedding_model
    embedder = from_config(config_mod.Config(embedding_model=model))
    rep = bench_locomo.run(data, embedder, {})
    return {"categories": rep["categories"], "overall": rep["overall"]}


def print_side_by_side(product: dict, library: dict) -> None:
    cols = ("R@10", "hit@10", "MRR")
    print("\nlocomo, product path (import + MCP memory_search) vs library path (add_many + search)")
    print(f"{'category':<13}{'n':>5} " + " ".join(f"{'prod ' + c:>11} {'lib ' + c:>10}" for c in cols))
    lib = {**library["categories"], "overall 1-4": library["overall"]}
    for name in ("multi-hop", "temporal", "open-domain", "single-hop", "overall 1-4", "adversarial"):
        if name in product["table"] and name in lib:
            p, q = product["table"][name], lib[name]
            print(f"{name:<13}{p['n']:>5} " + " ".join(f"{p[c]:>11.3f} {q[c]:>10.3f}" for c in cols))


# -- bilingual ------------------------------------------------------------------------------------


def run_bilingual(args) -> dict:
    data = json.loads(BILINGUAL.read_text(encoding="utf-8"))
    lines = [{"content": m["text"], "metadata": {"bench_key": m["key"]}} for m in data["memories"]]
    queries = ordered(data["queries"], args.shuffle)[: args.limit_queries or None]
    run = run_store(StoreSpec("bilingual", lines, [q["q"] for q in queries]), args.model)
    rows = [
        {
            "q": q["q"],
            "direction": q["direction"],
            "target": q["target"],
            **hit_scores(hits, {q["target"]}),
            "top": [h["keys"] for h in hits[:5]],
        }
        for q, hits in zip(queries, run.hits)
    ]
    table = {}
    for d in ("en->en", "zh->zh", "en->zh", "zh->en", "mixed"):
        sub = [r for r in rows if r["direction"] == d]
        if sub:
            table[d] = {"n": len(sub), **{k: mean(sub, k) for k in ("hit@1", "hit@5", "MRR")}}
    table["all"] = {"n": len(rows), **{k: mean(rows, k) for k in ("hit@1", "hit@5", "MRR")}}
    return {"table": table, "stores": [store_summary(run)], "rows": rows}


def print_bilingual(res: dict) -> None:
    print(f"\nbilingual: {BILINGUAL.relative_to(ROOT)}, one store, memory_search limit {LIMIT}")
    print(f"{'direction':<10}{'n':>5} {'hit@1':>7} {'hit@5':>7} {'MRR':>7}")
    for name, row in res["table"].items():
        print(f"{name:<10}{row['n']:>5} {row['hit@1']:>7.3f} {row['hit@5']:>7.3f} {row['MRR']:>7.3f}")
    print_stores(res["stores"])


# -- team.json and no_answer.json: confident hits and no-answer ----------------------------------

_TEAM_RUN: dict[tuple, Any] = {}


def team_store(args) -> tuple[dict, list[dict], StoreRun]:
    """team.json as one store, asked the queries of both the noanswer and the runbooks sets, once."""
    key = (args.limit_queries, args.shuffle)
    if key not in _TEAM_RUN:
        data = json.loads(TEAM.read_text(encoding="utf-8"))
        lines = [
            {"content": m["text"], "layer": m["layer"], "metadata": {"bench_key": m["key"]}} for m in data["memories"]
        ]
        plain = [q for q in data["queries"] if not q.get("answer")]
        books = [q for q in data["queries"] if q.get("answer")]
        n = args.limit_queries or None
        queries = ordered(plain, args.shuffle)[:n] + ordered(books, args.shuffle)[:n]
        _TEAM_RUN[key] = (data, queries, run_store(StoreSpec("team", lines, [q["q"] for q in queries]), args.model))
    return _TEAM_RUN[key]


def answerable_noanswer(name: str, queries: list[dict], run: StoreRun) -> dict:
    rows = []
    for q, hits in zip(queries, run.hits):
        kind = q["kind"] if q["targets"] else ("no_answer" if q["kind"] == "no_answer" else f"no_answer/{q['kind']}")
        rows.append(
            {
                "q": q["q"],
                "kind": q["kind"],
                "answerable": bool(q["targets"]),
                "group": kind,
                **hit_scores(hits, set(q["targets"])),
                "top": [h["keys"] for h in hits[:5]],
                "top_scores": [h["score"] for h in hits[:5]],
            }
        )
    ans = [r for r in rows if r["answerable"]]
    noans = [r for r in rows if not r["answerable"]]
    table = {}
    for kind in dict.fromkeys(r["kind"] for r in ans):
        sub = [r for r in ans if r["kind"] == kind]
        table[kind] = {"n": len(sub), **{k: mean(sub, k) for k in ("hit@1", "hit@5", "MRR")}}
    table["answerable"] = {"n": len(ans), **{k: mean(ans, k) for k in ("hit@1", "hit@5", "MRR")}}

    def dist(rs: list[dict]) -> dict:
        s = sorted(r["top_score"] for r in rs)
        return {
            "n": len(s),
            "median": statistics.median(s) if s else None,
            "p10": s[int(0.1 * (len(s) - 1))] if s else None,
            "p90": s[int(0.9 * (len(s) - 1))] if s else None,
            "max": s[-1] if s else None,
        }

    groups = {
        "answerable": ans,
        "answerable, top hit right": [r for r in ans if r["hit@1"]],
        "answerable, top hit wrong": [r for r in ans if not r["hit@1"]],
        "no-answer": noans,
    }
    for kind in dict.fromkeys(r["kind"] for r in noans):
        groups[f"no-answer ({kind})"] = [r for r in noans if r["kind"] == kind]

    def share(rs: list[dict], t: float, right: bool = False) -> float:
        return sum(r["top_score"] >= t and (not right or r["hit@1"]) for r in rs) / len(rs) if rs else 0.0

    thresholds = [
        {
            "threshold": t,
            "no_answer_above": share(noans, t),
            "answerable_above": share(ans, t),
            "answerable_right_above": share(ans, t, right=True),
        }
        for t in THRESHOLDS
    ]
    return {
        "name": name,
        "table": table,
        "top_score": {g: dist(rs) for g, rs in groups.items()},
        "thresholds": thresholds,
        "stores": [store_summary(run)],
        "rows": rows,
    }


def run_noanswer(args) -> list[dict]:
    data = json.loads(NO_ANSWER.read_text(encoding="utf-8"))
    lines = [{"content": m["text"], "metadata": {"bench_key": m["key"]}} for m in data["memories"]]
    queries = ordered(data["queries"], args.shuffle)[: args.limit_queries or None]
    run = run_store(StoreSpec("no_answer", lines, [q["q"] for q in queries]), args.model)
    out = [answerable_noanswer("paraphrase_eval/no_answer.json", queries, run)]
    _, tq, trun = team_store(args)
    keep = [i for i, q in enumerate(tq) if not q.get("answer")]
    sub = StoreRun(
        trun.name,
        trun.imported,
        trun.altered,
        trun.entity_links,
        trun.ready_s,
        trun.import_s,
        [trun.latencies_ms[i] for i in keep],
        [trun.hits[i] for i in keep],
        trun.stats,
    )
    out.append(answerable_noanswer("team_eval/team.json", [tq[i] for i in keep], sub))
    return out


def print_noanswer(res: dict) -> None:
    print(f"\nnoanswer: {res['name']}, one store, memory_search limit {LIMIT}")
    print(f"{'answerable':<22}{'n':>5} {'hit@1':>7} {'hit@5':>7} {'MRR':>7}")
    for name, row in res["table"].items():
        print(f"{name:<22}{row['n']:>5} {row['hit@1']:>7.3f} {row['hit@5']:>7.3f} {row['MRR']:>7.3f}")
    print(f"{'top score':<28}{'n':>5} {'p10':>7} {'median':>7} {'p90':>7} {'max':>7}")
    for name, d in res["top_score"].items():
        if d["n"]:
            print(f"{name:<28}{d['n']:>5} {d['p10']:>7.3f} {d['median']:>7.3f} {d['p90']:>7.3f} {d['max']:>7.3f}")
    print(f"{'top score >= t':<16}{'no-answer':>10} {'answerable':>11} {'and right':>10}")
    for t in res["thresholds"]:
        print(
            f"{t['threshold']:<16}{t['no_answer_above']:>10.3f} {t['answerable_above']:>11.3f} "
            f"{t['answerable_right_above']:>10.3f}"
        )
    print_stores(res["stores"])


# -- runbooks ---------------------------------------------------------------------------------------


def run_runbooks(args) -> dict:
    data, queries, run = team_store(args)
    books = {m["key"]: m for m in data["memories"] if m.get("runbook")}
    rows = []
    for q, hits in zip(queries, run.hits):
        if not q.get("answer"):
            continue
        target = set(q["targets"]) & set(books)
        answer = norm(q["answer"])
        at = norm(books[next(iter(target))]["text"]).find(answer) if target else -1
        r = rank_of(hits, target)
        returned = [h for h in hits[:5]]
        rows.append(
            {
                "q": q["q"],
                "target": sorted(target),
                "rank": r,
                "recall@5": float(r is not None and r <= 5),
                "answer_in_returned": float(any(answer in norm(h["content"]) for h in returned)),
                "answer_in_runbook_hit": float(
                    any(answer in norm(h["content"]) for h in returned if target & set(h["keys"]))
                ),
                "runbook_hit_truncated": any(h["truncated"] for h in returned if target & set(h["keys"])),
                "answer_offset": at,
            }
        )
    n = len(rows)
    summary = {
        "n": n,
        "recall@5": mean(rows, "recall@5"),
        "answer_in_returned@5": mean(rows, "answer_in_returned"),
        "answer_beyond_2000_chars": sum(r["answer_offset"] >= 2000 for r in rows),
        "answer_not_in_runbook_text": sum(r["answer_offset"] < 0 for r in rows),
    }
    return {"summary": summary, "runbook_chars": {k: len(m["text"]) for k, m in books.items()}, "rows": rows}


def print_runbooks(res: dict) -> None:
    s = res["summary"]
    print(
        f"\nrunbooks: {len(res['runbook_chars'])} runbooks of "
        f"{min(res['runbook_chars'].values())}-{max(res['runbook_chars'].values())} characters in the team store, "
        f"{s['n']} queries with an answer"
    )
    print(f"{'query':<60} {'rank':>5} {'answer@':>8} {'in hit':>7}")
    for r in res["rows"]:
        print(
            f"{r['q'][:58]:<60} {r['rank'] or '-'!s:>5} {r['answer_offset']:>8} "
            f"{'yes' if r['answer_in_returned'] else 'no':>7}"
        )
    print(
        f"runbook recall@5 {s['recall@5']:.3f}; answer text in the returned content (top 5) "
        f"{s['answer_in_returned@5']:.3f}; "
        f"answers beyond the first 2,000 characters {s['answer_beyond_2000_chars']}/{s['n']}"
    )


# -- main -------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)} (default all)")
    ap.add_argument("--variant", default="default", help="locomo import variants, comma-separated: default, no-session")
    ap.add_argument("--limit-queries", type=int, metavar="N", help="ask only the first N queries of each store")
    ap.add_argument("--model", help="embedding model for import and server (MAPLE_MODEL); default: the configured one")
    ap.add_argument("--shuffle", type=int, metavar="SEED", help="ask each store's queries in a shuffled order")
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help=f"LoCoMo file (default {LOCOMO})")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write every figure (and per-query rows) here")
    ap.add_argument(
        "--no-library", action="store_true", help="skip the library path (bench_locomo's add_many + search) on locomo"
    )
    ap.add_argument(
        "--detect-entities",
        action="store_true",
        help="locomo: give each import line the entities `add` would detect (for an import that does not)",
    )
    args = ap.parse_args()
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    variants = [v.strip() for v in args.variant.split(",") if v.strip()]
    if set(sets) - set(SETS):
        ap.error(f"unknown set(s) {sorted(set(sets) - set(SETS))}; sets: {', '.join(SETS)}")
    if set(variants) - {"default", "no-session"}:
        ap.error("--variant takes default and/or no-session")

    out: dict[str, Any] = {
        "model": args.model or "(configured default)",
        "limit": LIMIT,
        "limit_queries": args.limit_queries,
        "shuffle": args.shuffle,
    }
    t0 = time.perf_counter()
    if "locomo" in sets:
        out["locomo"] = {}
        for v in variants:
            res = run_locomo(args, v)
            out["locomo"][v] = res
            print_locomo(res)
            if v == "default" and not args.no_library:
                lib = run_library_locomo(args)
                out["locomo"]["library"] = lib
                print_side_by_side(res, lib)
    if "bilingual" in sets:
        out["bilingual"] = run_bilingual(args)
        print_bilingual(out["bilingual"])
    if "noanswer" in sets:
        out["noanswer"] = run_noanswer(args)
        for res in out["noanswer"]:
            print_noanswer(res)
    if "runbooks" in sets:
        out["runbooks"] = run_runbooks(args)
        print_runbooks(out["runbooks"])
    print(f"\ntotal {time.perf_counter() - t0:.0f}s")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
