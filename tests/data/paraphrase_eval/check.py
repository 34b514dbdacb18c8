#!/usr/bin/env python3
"""Validate pairs.json and no_answer.json in this directory and print counts.

Exit status 0 when every check passes, 1 otherwise. stdlib only.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CJK = re.compile(r"[\u3400-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
KIND_RE = re.compile(r"^[a-z][a-z0-9+-]{1,23}$")

errors = []


def err(msg):
    errors.append(msg)


def has_cjk(s):
    return bool(CJK.search(s))


def norm(s):
    return re.sub(r"\s+", " ", s.strip().casefold())


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


def tokens(s):
    """ASCII words (>=3 chars) plus CJK bigrams, for vocabulary-overlap checks."""
    s = s.casefold()
    out = set()
    for w in re.findall(r"[a-z0-9][a-z0-9_.\-]{2,}", s):
        w = w.strip(".-")
        for suf in ("es", "s"):  # crude plural folding: hotfixes/hotfix, branches/branch
            if len(w) > 4 and w.endswith(suf):
                w = w[: -len(suf)]
                break
        out.add(w)
    for run in re.findall(r"[\u3400-\u9fff]+", s):
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


def longest_common_substring(a, b):
    a, b = norm(a), norm(b)
    best = 0
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


# --------------------------------------------------------------------------- pairs
def check_pairs():
    d = load("pairs.json")
    if not isinstance(d, dict) or set(d) != {"pairs"} or not isinstance(d["pairs"], list):
        err("pairs.json: top level must be {'pairs': [...]}")
        return
    pairs = d["pairs"]
    keys = {"a", "b", "same", "lang", "kind", "fold"}
    seen = {}
    groups = collections.defaultdict(lambda: collections.Counter())
    by_kind = collections.Counter()
    by_lang = collections.Counter()
    for i, p in enumerate(pairs):
        where = f"pairs[{i}]"
        if not isinstance(p, dict) or set(p) != keys:
            err(f"{where}: keys must be exactly {sorted(keys)}")
            continue
        a, b, same, lang, kind, fold = (p[k] for k in ("a", "b", "same", "lang", "kind", "fold"))
        if not (isinstance(a, str) and isinstance(b, str) and a.strip() and b.strip()):
            err(f"{where}: a/b must be non-empty strings")
            continue
        if norm(a) == norm(b):
            err(f"{where}: a and b are identical")
        if not isinstance(same, bool):
            err(f"{where}: same must be a bool")
        if lang not in ("en", "zh", "cross", "mixed"):
            err(f"{where}: bad lang {lang!r}")
        if not (isinstance(kind, str) and KIND_RE.match(kind)):
            err(f"{where}: bad kind {kind!r}")
        if not (isinstance(fold, int) and not isinstance(fold, bool) and 0 <= fold <= 4):
            err(f"{where}: fold must be an int 0-4")
            continue
        # script checks per language label
        ca, cb = has_cjk(a), has_cjk(b)
        if lang == "en" and (ca or cb):
            err(f"{where}: lang=en but contains CJK")
        if lang == "zh" and not (ca and cb):
            err(f"{where}: lang=zh but a side has no CJK")
        if lang == "cross" and ca == cb:
            err(f"{where}: lang=cross needs exactly one CJK side")
        if lang == "mixed" and not any(has_cjk(s) and LATIN_WORD.search(s) for s in (a, b)):
            err(f"{where}: lang=mixed needs a side mixing CJK and Latin words")
        key = frozenset((norm(a), norm(b)))
        if key in seen:
            err(f"{where}: duplicate of pairs[{seen[key]}]")
        seen[key] = i
        groups[(same, lang)][fold] += 1
        by_kind[(same, kind)] += 1
        by_lang[(same, lang)] += 1

    n_true = sum(1 for p in pairs if p.get("same") is True)
    n_false = sum(1 for p in pairs if p.get("same") is False)
    if len(pairs) < 320:
        err(f"pairs: need >= 320, have {len(pairs)}")
    if n_true < 150:
        err(f"pairs: need >= 150 same=true, have {n_true}")
    if n_false < 170:
        err(f"pairs: need >= 170 same=false, have {n_false}")
    for same in (True, False):
        for lang in ("en", "zh", "cross"):
            if by_lang[(same, lang)] == 0:
                err(f"pairs: no items for same={same} lang={lang}")
    for g, c in sorted(groups.items(), key=str):
        vals = [c[f] for f in range(5)]
        if max(vals) - min(vals) > 1:
            err(f"pairs: folds uneven in group {g}: {vals}")

    print(f"pairs.json: {len(pairs)} pairs ({n_true} same=true, {n_false} same=false)")
    print("  per (same, lang): folds 0-4")
    for g in sorted(groups, key=lambda x: (not x[0], x[1])):
        c = groups[g]
        print(f"    same={str(g[0]):5} {g[1]:5} n={sum(c.values()):3}  folds={[c[f] for f in range(5)]}")
    for same in (True, False):
        ks = sorted(((k, n) for (s, k), n in by_kind.items() if s == same), key=lambda x: -x[1])
        print(f"  kinds same={same}: " + ", ".join(f"{k}={n}" for k, n in ks))
    fold_tot = collections.Counter(p["fold"] for p in pairs if isinstance(p, dict) and "fold" in p)
    print("  total per fold: " + ", ".join(f"{f}={fold_tot[f]}" for f in range(5)))


# --------------------------------------------------------------------------- no_answer
def check_no_answer():
    d = load("no_answer.json")
    if not isinstance(d, dict) or set(d) != {"memories", "queries"}:
        err("no_answer.json: top level must be {'memories': [...], 'queries': [...]}")
        return
    mems, queries = d["memories"], d["queries"]
    mem_lang = {}
    mem_text = {}
    texts = set()
    for i, m in enumerate(mems):
        where = f"memories[{i}]"
        if not isinstance(m, dict) or set(m) != {"key", "text", "lang"}:
            err(f"{where}: keys must be exactly key/text/lang")
            continue
        k, t, lang = m["key"], m["text"], m["lang"]
        if not (isinstance(k, str) and re.fullmatch(r"n\d{3}", k)):
            err(f"{where}: bad key {k!r}")
        if k in mem_lang:
            err(f"{where}: duplicate key {k}")
        if not (isinstance(t, str) and t.strip()):
            err(f"{where}: empty text")
            continue
        if norm(t) in texts:
            err(f"{where}: duplicate text")
        texts.add(norm(t))
        if lang not in ("en", "zh", "mixed"):
            err(f"{where}: bad lang {lang!r}")
        if lang == "en" and has_cjk(t):
            err(f"{where}: lang=en but has CJK")
        if lang in ("zh", "mixed") and not has_cjk(t):
            err(f"{where}: lang={lang} but no CJK")
        if lang == "mixed" and not LATIN_WORD.search(t):
            err(f"{where}: lang=mixed but no Latin words")
        mem_lang[k] = lang
        mem_text[k] = t
    ml = collections.Counter(mem_lang.values())
    n = len(mem_lang)
    if n < 120:
        err(f"memories: need >= 120, have {n}")
    if n:
        share = {l: ml[l] / n for l in ("en", "zh", "mixed")}
        if not (0.5 <= share["en"] <= 0.7 and 0.2 <= share["zh"] <= 0.4 and 0.05 <= share["mixed"] <= 0.15):
            err(f"memories: language mix off target (~60/30/10): {dict(ml)}")

    qseen = set()
    ans, una = [], []
    for i, q in enumerate(queries):
        where = f"queries[{i}]"
        if not isinstance(q, dict) or not {"q", "lang", "targets"} <= set(q) or not set(q) <= {"q", "lang", "targets", "kind"}:
            err(f"{where}: keys must be q/lang/targets (+ optional kind)")
            continue
        text, lang, targets = q["q"], q["lang"], q["targets"]
        if not (isinstance(text, str) and text.strip()):
            err(f"{where}: empty q")
            continue
        if norm(text) in qseen:
            err(f"{where}: duplicate query")
        qseen.add(norm(text))
        if lang not in ("en", "zh", "mixed"):
            err(f"{where}: bad lang {lang!r}")
        if lang == "en" and has_cjk(text):
            err(f"{where}: lang=en but has CJK")
        if lang in ("zh", "mixed") and not has_cjk(text):
            err(f"{where}: lang={lang} but no CJK")
        if not isinstance(targets, list) or len(set(targets)) != len(targets):
            err(f"{where}: targets must be a list of distinct keys")
            continue
        for t in targets:
            if t not in mem_lang:
                err(f"{where}: unknown target {t!r}")
        kind = q.get("kind")
        if targets:
            if kind is not None and kind not in ("same-lang", "cross-lang", "mixed-lang"):
                err(f"{where}: bad kind for answerable query {kind!r}")
            ans.append(q)
            # a paraphrased query should not copy long spans of its target
            for t in targets:
                if t in mem_text and longest_common_substring(text, mem_text[t]) >= 24:
                    err(f"{where}: copies >=24 chars verbatim from {t}")
        else:
            if kind is not None and kind not in ("near", "far"):
                err(f"{where}: bad kind for no-answer query {kind!r}")
            una.append(q)
            if kind == "near":
                vocab = tokens(text)
                if not any(vocab & tokens(mt) for mt in mem_text.values()):
                    err(f"{where}: kind=near but shares no vocabulary with any memory")

    if len(ans) < 100:
        err(f"queries: need >= 100 answerable, have {len(ans)}")
    if len(una) < 100:
        err(f"queries: need >= 100 with targets [], have {len(una)}")
    near = sum(1 for q in una if q.get("kind") == "near")
    if una and near * 3 < len(una):
        err(f"queries: need >= 1/3 near-miss no-answer queries, have {near}/{len(una)}")
    cross = sum(1 for q in ans if q.get("kind") == "cross-lang")
    if cross < 20:
        err(f"queries: want >= 20 cross-language answerable queries, have {cross}")
    covered = {t for q in ans for t in q["targets"]}

    print(f"no_answer.json: {n} memories " + ", ".join(f"{l}={ml[l]}" for l in ("en", "zh", "mixed")))
    print(f"  memories used as a target: {len(covered)}/{n}")
    ak = collections.Counter((q["lang"], q.get("kind")) for q in ans)
    uk = collections.Counter((q["lang"], q.get("kind")) for q in una)
    print(f"  answerable queries: {len(ans)}  (multi-target: {sum(1 for q in ans if len(q['targets']) > 1)})")
    for (l, k), c in sorted(ak.items(), key=str):
        print(f"    {l:5} {k:10} {c}")
    print(f"  no-answer queries: {len(una)}  (near={near}, far={len(una) - near})")
    for (l, k), c in sorted(uk.items(), key=str):
        print(f"    {l:5} {k:10} {c}")


if __name__ == "__main__":
    check_pairs()
    check_no_answer()
    if errors:
        print(f"\nFAILED: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        sys.exit(1)
    print("\nOK")
