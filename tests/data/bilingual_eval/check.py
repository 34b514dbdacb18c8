#!/usr/bin/env python3
"""Validate bilingual.json (stdlib only). Exit code 0 = pass, 1 = fail.

Checks: schema, unique keys/texts, targets exist, direction consistent with
query/memory language, script of each text matches its lang, minimum counts
per memory language and per direction, folds 0-4 balanced per direction,
NO shared ASCII token ([A-Za-z0-9]+, case-insensitive) between a
cross-language query and its target, and limited word overlap for
same-language queries (paraphrase, not copy).
Usage: python3 check.py [path/to/bilingual.json]
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "bilingual.json")

MIN_MEM = {"zh": 90, "en": 80, "mixed": 30}
MIN_MEM_TOTAL = 200
MIN_Q = {"zh->en": 60, "en->zh": 60, "zh->zh": 45, "en->en": 45, "mixed": 30}
MIN_Q_TOTAL = 240
DIRECTIONS = set(MIN_Q)
LANGS = {"zh", "en", "mixed"}
# same-language overlap limits ("share at most a couple of content words")
MAX_EN_SHARED_CONTENT = 2      # en->en: shared non-stopword English words
MAX_ZH_SHARED_BIGRAMS = 4      # zh->zh: shared CJK character bigrams

ASCII_TOK = re.compile(r"[A-Za-z0-9]+")
CJK = re.compile(r"[\u4e00-\u9fff]")
EN_STOP = set("""
a an the and or but if of to in on at by for from with without into onto over under
is are was were be been being am do does did done have has had i me my we our us you your
it its this that these those there here what which who whom whose when where why how
can could should would will shall may might must not no yes so than then too very just
any all some each every about as up down out off again still also only ever s t d ll re ve m
get got go goes going make made use used using need needs one two
""".split())

errors = []


def err(msg):
    errors.append(msg)


def ascii_tokens(s):
    return {t.lower() for t in ASCII_TOK.findall(s)}


def en_content(s):
    out = set()
    for t in ascii_tokens(s):
        if t in EN_STOP or t.isdigit() or len(t) < 2:
            continue
        # crude stemming so "sessions"/"session" count as the same word
        for suf in ("ing", "es", "ed", "s"):
            if len(t) > len(suf) + 3 and t.endswith(suf):
                t = t[: -len(suf)]
                break
        out.add(t)
    return out


def cjk_bigrams(s):
    out = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", s):
        for i in range(len(run) - 1):
            out.add(run[i:i + 2])
    return out


def main():
    try:
        with open(PATH, encoding="utf-8") as f:
            data = json.load(f)
    except Exception as e:  # noqa: BLE001
        print("FAIL: cannot load %s: %s" % (PATH, e))
        return 1

    if not isinstance(data, dict) or set(data) != {"about", "memories", "queries"}:
        err("top level must be an object with exactly about/memories/queries, got %r"
            % (sorted(data) if isinstance(data, dict) else type(data)))
        return report(None, None)
    if not isinstance(data["about"], str) or not data["about"].strip():
        err("about must be a non-empty string")
    mems, qs = data["memories"], data["queries"]
    if not isinstance(mems, list) or not isinstance(qs, list):
        err("memories and queries must be lists")
        return report(None, None)

    # ---------------------------------------------------------------- memories
    by_key = {}
    seen_text = set()
    for i, m in enumerate(mems):
        where = "memories[%d]" % i
        if not isinstance(m, dict) or set(m) != {"key", "lang", "text"}:
            err("%s: must have exactly key/lang/text: %r" % (where, m))
            continue
        k, lang, text = m["key"], m["lang"], m["text"]
        if not isinstance(k, str) or not re.fullmatch(r"m\d{3,}", k):
            err("%s: bad key %r" % (where, k))
        if k in by_key:
            err("%s: duplicate key %r" % (where, k))
        if lang not in LANGS:
            err("%s: bad lang %r" % (where, lang))
        if not isinstance(text, str) or not text.strip():
            err("%s: empty text" % where)
            continue
        if text in seen_text:
            err("%s: duplicate text" % where)
        seen_text.add(text)
        has_cjk = bool(CJK.search(text))
        has_latin = bool(re.search(r"[A-Za-z]", text))
        if lang == "en" and has_cjk:
            err("%s (%s): lang en but contains Chinese" % (where, k))
        if lang == "zh" and not has_cjk:
            err("%s (%s): lang zh but no Chinese" % (where, k))
        if lang == "mixed" and not (has_cjk and has_latin):
            err("%s (%s): lang mixed needs both Chinese and Latin text" % (where, k))
        by_key[k] = m

    # ---------------------------------------------------------------- queries
    seen_q = set()
    for i, q in enumerate(qs):
        where = "queries[%d]" % i
        if not isinstance(q, dict) or set(q) != {"q", "lang", "target", "direction", "fold"}:
            err("%s: must have exactly q/lang/target/direction/fold: %r" % (where, q))
            continue
        text, lang, tgt, d, fold = q["q"], q["lang"], q["target"], q["direction"], q["fold"]
        if not isinstance(text, str) or not text.strip():
            err("%s: empty q" % where)
            continue
        if text in seen_q:
            err("%s: duplicate query text %r" % (where, text))
        seen_q.add(text)
        if lang not in LANGS:
            err("%s: bad lang %r" % (where, lang))
        if d not in DIRECTIONS:
            err("%s: bad direction %r" % (where, d))
        if not isinstance(fold, int) or isinstance(fold, bool) or not 0 <= fold <= 4:
            err("%s: fold must be int 0-4, got %r" % (where, fold))
        if not isinstance(tgt, str) or tgt not in by_key:
            err("%s: target %r does not exist" % (where, tgt))
            continue
        m = by_key[tgt]
        has_cjk = bool(CJK.search(text))
        has_latin = bool(re.search(r"[A-Za-z]", text))
        if lang == "en" and has_cjk:
            err("%s: lang en but contains Chinese: %r" % (where, text))
        if lang == "zh" and not has_cjk:
            err("%s: lang zh but no Chinese: %r" % (where, text))
        if lang == "mixed" and not (has_cjk and has_latin):
            err("%s: lang mixed needs Chinese and Latin: %r" % (where, text))
        # direction must agree with languages
        if d == "mixed":
            if lang != "mixed":
                err("%s: direction mixed but query lang %r" % (where, lang))
        else:
            ql, ml = d.split("->")
            if lang != ql:
                err("%s: direction %s but query lang %s" % (where, d, lang))
            if m["lang"] != ml:
                err("%s: direction %s but target %s is %s" % (where, d, tgt, m["lang"]))
        # never a verbatim copy
        if text.strip().lower() in m["text"].lower():
            err("%s: query is a substring of its target" % where)
        # cross-language: no shared ASCII token
        if d in ("zh->en", "en->zh"):
            shared = ascii_tokens(text) & ascii_tokens(m["text"])
            if shared:
                err("%s: %s query shares ASCII tokens %s with %s: %r"
                    % (where, d, sorted(shared), tgt, text))
        elif d == "en->en":
            shared = en_content(text) & en_content(m["text"])
            if len(shared) > MAX_EN_SHARED_CONTENT:
                err("%s: en->en shares %d content words %s with %s: %r"
                    % (where, len(shared), sorted(shared), tgt, text))
        elif d == "zh->zh":
            shared = cjk_bigrams(text) & cjk_bigrams(m["text"])
            if len(shared) > MAX_ZH_SHARED_BIGRAMS:
                err("%s: zh->zh shares %d CJK bigrams %s with %s: %r"
                    % (where, len(shared), sorted(shared), tgt, text))
    return report(mems, qs, by_key)


def report(mems, qs, by_key=None):
    if mems is not None and qs is not None:
        mlang = collections.Counter(m.get("lang") for m in mems if isinstance(m, dict))
        print("memories: %d  %s" % (len(mems), dict(sorted(mlang.items()))))
        if len(mems) < MIN_MEM_TOTAL:
            err("need >= %d memories, have %d" % (MIN_MEM_TOTAL, len(mems)))
        for l, n in MIN_MEM.items():
            if mlang[l] < n:
                err("need >= %d %s memories, have %d" % (n, l, mlang[l]))

        qd = [q for q in qs if isinstance(q, dict)]
        dcount = collections.Counter(q.get("direction") for q in qd)
        fcount = collections.defaultdict(collections.Counter)
        for q in qd:
            fcount[q.get("direction")][q.get("fold")] += 1
        print("queries: %d" % len(qs))
        print("  %-8s %5s   %s" % ("direction", "n", "per fold 0..4"))
        for d in sorted(MIN_Q):
            per = [fcount[d][f] for f in range(5)]
            print("  %-8s %5d   %s" % (d, dcount[d], per))
            if dcount[d] < MIN_Q[d]:
                err("need >= %d %s queries, have %d" % (MIN_Q[d], d, dcount[d]))
            if per and max(per) - min(per) > 1:
                err("direction %s folds unbalanced: %s" % (d, per))
        tot_f = collections.Counter(q.get("fold") for q in qd)
        print("  %-8s %5d   %s" % ("all", len(qd), [tot_f[f] for f in range(5)]))
        if len(qs) < MIN_Q_TOTAL:
            err("need >= %d queries, have %d" % (MIN_Q_TOTAL, len(qs)))
        qlang = collections.Counter(q.get("lang") for q in qd)
        print("query langs: %s" % dict(sorted(qlang.items())))
        if by_key:
            used = collections.Counter(q.get("target") for q in qd)
            untargeted = [k for k in by_key if k not in used]
            print("memories targeted: %d (max queries on one memory: %d), distractor-only: %d"
                  % (len(used), max(used.values()) if used else 0, len(untargeted)))
    if errors:
        print("\nFAIL: %d problem(s)" % len(errors))
        for e in errors[:200]:
            print("  - " + e)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
