#!/usr/bin/env python3
"""Validate team.json and names.json in this directory and print counts.

Usage: python3 check.py            (exit status 1 on any error)

Surface matching rule used for both files (also documented in README.md):
  * CJK surfaces (Chinese names/aliases) match as plain substrings.
  * ASCII surfaces match as whole tokens: not preceded by [A-Za-z0-9_.@/#-] and
    not followed by [A-Za-z0-9_@/-] or by '.' + [A-Za-z0-9_]. So `ledger-api`
    does not match inside `ledger-api-client`, `infra-live` does not match inside
    the path `infra-live/db`, and `invoice_worker` does not match inside the
    module path `invoice_worker.tools.resend`; a sentence-final period is fine.
  * team.json: person aliases are case-sensitive (names, initials, handles);
    component/library surfaces are case-insensitive (`nomad job status` is Nomad).
"""
import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ERRORS = []


def err(msg):
    ERRORS.append(msg)


def is_cjk(s):
    return any("\u3400" <= ch <= "\u9fff" for ch in s)


def surface_pattern(surface, case_sensitive=True):
    if is_cjk(surface):
        return re.compile(re.escape(surface))
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(r"(?<![A-Za-z0-9_.@/#-])" + re.escape(surface) +
                      r"(?![A-Za-z0-9_@/-]|\.[A-Za-z0-9_])", flags)


def occurs(surface, text, case_sensitive=True):
    return surface_pattern(surface, case_sensitive).search(text) is not None


def entity_table(team):
    """canonical -> (type, [surfaces], case_sensitive)"""
    table = {}
    for p in team["people"]:
        table[p["canonical"]] = ("person", [p["canonical"]] + p["aliases"], True)
    for c in team["components"]:
        table[c["canonical"]] = ("component", [c["canonical"]] + c["aliases"], False)
    for lib in team["libraries"]:
        table[lib["canonical"]] = ("library", [lib["canonical"]] + lib["aliases"], False)
    return table


def detect_entities(text, table):
    found = set()
    for canon, (_, surfaces, cs) in table.items():
        if any(occurs(s, text, cs) for s in surfaces):
            found.add(canon)
    return found


# ----------------------------------------------------------------------------- team.json
def check_team(path):
    team = json.load(open(path, encoding="utf-8"))
    for k in ("people", "components", "libraries", "memories", "queries", "lessons"):
        if k not in team:
            err(f"team.json: missing top-level key {k}")
            return
    people, comps, libs = team["people"], team["components"], team["libraries"]
    if not 8 <= len(people) <= 12:
        err(f"people: {len(people)} (want 8-12)")
    for p in people:
        if not 2 <= len(p["aliases"]) <= 5:
            err(f"person {p['canonical']}: {len(p['aliases'])} aliases (want 2-5)")
    if not 15 <= len(comps) <= 25:
        err(f"components: {len(comps)} (want 15-25)")
    table = entity_table(team)
    # a surface may belong to one entity only
    owner = {}
    for canon, (_, surfaces, _) in table.items():
        for s in surfaces:
            key = s.lower()
            if key in owner and owner[key] != canon:
                err(f"surface {s!r} belongs to both {owner[key]} and {canon}")
            owner[key] = canon
    # one surface must not be matched inside another entity's surface
    for canon, (_, surfaces, cs) in table.items():
        for other, (_, osurf, _) in table.items():
            if other == canon:
                continue
            for s in surfaces:
                for o in osurf:
                    if occurs(s, o, cs):
                        err(f"surface {s!r} ({canon}) matches inside {o!r} ({other})")

    mems = team["memories"]
    keys = [m["key"] for m in mems]
    if len(set(keys)) != len(keys):
        err("duplicate memory keys")
    bykey = {m["key"]: m for m in mems}
    used_surfaces = Counter()
    for m in mems:
        k = m["key"]
        if not re.fullmatch(r"t\d{3}", k):
            err(f"{k}: bad key")
        if m["lang"] not in ("en", "zh", "mixed"):
            err(f"{k}: bad lang")
        if m["layer"] not in ("fact", "experience", "decision"):
            err(f"{k}: bad layer")
        if "outcome" in m:
            if m["layer"] != "decision":
                err(f"{k}: outcome on non-decision")
            if m["outcome"] not in ("worked", "failed", "partial"):
                err(f"{k}: bad outcome")
        text = m["text"]
        has_cjk = is_cjk(text)
        if m["lang"] == "en" and has_cjk:
            err(f"{k}: lang en but contains CJK")
        if m["lang"] in ("zh", "mixed") and not has_cjk:
            err(f"{k}: lang {m['lang']} but no CJK")
        ents = m["entities"]
        if len(set(ents)) != len(ents):
            err(f"{k}: duplicate entities")
        for e in ents:
            if e not in table:
                err(f"{k}: unknown entity {e!r}")
                continue
            _, surfaces, cs = table[e]
            hits = [s for s in surfaces if occurs(s, text, cs)]
            if not hits:
                err(f"{k}: entity {e!r} not found in text via any surface")
            for s in hits:
                used_surfaces[s] += 1
        detected = detect_entities(text, table)
        missing = detected - set(ents)
        if missing:
            err(f"{k}: text mentions {sorted(missing)} but entities omit them")
        for r in m.get("relations", []):
            if len(r) != 3 or r[0] not in ents or r[2] not in ents:
                err(f"{k}: relation {r} must be [subject, predicate, object] over listed entities")
    # runbooks
    runbooks = [m for m in mems if m.get("runbook")]
    if not 4 <= len(runbooks) <= 6:
        err(f"runbooks: {len(runbooks)} (want 4-6)")
    for m in runbooks:
        n = len(m["text"])
        if not 9000 <= n <= 14000:
            err(f"runbook {m['key']}: {n} chars (want 9000-14000)")
        if m["layer"] != "fact":
            err(f"runbook {m['key']}: layer must be fact")

    queries = team["queries"]
    rb_q = Counter()
    for i, q in enumerate(queries):
        tag = f"query[{i}] {q['q'][:40]!r}"
        if q["lang"] not in ("en", "zh", "mixed"):
            err(f"{tag}: bad lang")
        if q["kind"] == "answerable":
            if not q["targets"]:
                err(f"{tag}: answerable without targets")
            for t in q["targets"]:
                if t not in bykey:
                    err(f"{tag}: unknown target {t}")
            if "answer" in q:
                if len(q["targets"]) != 1 or not bykey.get(q["targets"][0], {}).get("runbook"):
                    err(f"{tag}: answer given but target is not a single runbook")
                    continue
                rb = bykey[q["targets"][0]]["text"]
                pos = rb.find(q["answer"])
                if pos < 0:
                    err(f"{tag}: answer not a substring of the runbook")
                elif pos < len(rb) * 2 / 3:
                    err(f"{tag}: answer at {pos / len(rb):.2f} of runbook, not in last third")
                else:
                    rb_q[q["targets"][0]] += 1
        elif q["kind"] == "no_answer":
            if q["targets"]:
                err(f"{tag}: no_answer with targets")
            for term in q.get("must_absent", []):
                pat = re.compile(re.escape(term) if is_cjk(term) else
                                 r"(?<![A-Za-z0-9])" + re.escape(term) + r"(?![A-Za-z0-9])", re.IGNORECASE)
                for m in mems:
                    if pat.search(m["text"]):
                        err(f"{tag}: must_absent term {term!r} occurs in {m['key']}")
            for t in q.get("near", []):
                if t not in bykey:
                    err(f"{tag}: unknown near key {t}")
        else:
            err(f"{tag}: bad kind")
    for m in runbooks:
        if rb_q[m["key"]] < 3:
            err(f"runbook {m['key']}: only {rb_q[m['key']]} last-third queries")
    seen_q = Counter(q["q"] for q in queries)
    for q, c in seen_q.items():
        if c > 1:
            err(f"duplicate query {q!r}")

    lessons = team["lessons"]
    if len(lessons) < 12:
        err(f"lessons: {len(lessons)} (want 12+)")
    for l in lessons:
        rel, irr = l["relevant"], l["irrelevant"]
        if not rel or not irr:
            err(f"lesson {l['task']!r}: empty relevant/irrelevant")
        if set(rel) & set(irr):
            err(f"lesson {l['task']!r}: overlap")
        for k in rel + irr:
            if k not in bykey:
                err(f"lesson {l['task']!r}: unknown key {k}")
            elif bykey[k]["layer"] != "decision":
                err(f"lesson {l['task']!r}: {k} is not a decision")

    # ---- counts
    ans = [q for q in queries if q["kind"] == "answerable"]
    noa = [q for q in queries if q["kind"] == "no_answer"]
    if len(mems) < 150:
        err(f"memories: {len(mems)} (want 150+)")
    if len(queries) < 120 or len(ans) < 70 or len(noa) < 50:
        err(f"queries: {len(queries)} total, {len(ans)} answerable, {len(noa)} no_answer")
    lang = Counter(m["lang"] for m in mems)
    print("team.json")
    print(f"  people {len(people)}, components {len(comps)}, libraries {len(libs)}")
    print(f"  memories {len(mems)}: lang {dict(lang)} "
          f"({', '.join(f'{k} {v / len(mems):.0%}' for k, v in lang.items())})")
    print(f"    layer {dict(Counter(m['layer'] for m in mems))}, "
          f"outcome {dict(Counter(m.get('outcome') for m in mems if m['layer'] == 'decision'))}")
    print(f"    runbooks {len(runbooks)}: " + ", ".join(f"{m['key']}={len(m['text'])}c" for m in runbooks))
    print(f"    with relations {sum(1 for m in mems if m.get('relations'))}, "
          f"entity mentions {sum(len(m['entities']) for m in mems)}")
    print(f"  queries {len(queries)}: answerable {len(ans)} {dict(Counter(q['lang'] for q in ans))} "
          f"(runbook-answer {sum(1 for q in ans if 'answer' in q)}), "
          f"no_answer {len(noa)} {dict(Counter(q['lang'] for q in noa))} (with near {sum(1 for q in noa if q.get('near'))})")
    print(f"  lessons {len(lessons)}")
    unused = [s for canon, (_, surfaces, _) in table.items() for s in surfaces if used_surfaces[s] == 0]
    print(f"  surfaces never used in a memory: {unused}")


# ----------------------------------------------------------------------------- names.json
REQUIRED_NEGATIVES = [
    "well-known", "read-only", "follow-up", "re-run", "e-mail", "state-of-the-art", "two-phase commit",
    "non-blocking", "built-in", "opt-in", "end-to-end", "long-running", "on-call", "per-user",
    "so-called", "up_to_date", "e.g.", "i.e.",
]
FILE_EXT = re.compile(r"\.(ya?ml|json|py|md|sh|ini|toml|txt|csv|sql|go|proto|lock|cfg|conf|html|pdf|log|env|js|ts)$")


def check_names(path):
    data = json.load(open(path, encoding="utf-8"))
    sents = data["sentences"]
    if len(sents) < 200:
        err(f"names.json: {len(sents)} sentences (want 200+)")
    all_names = set()
    for i, s in enumerate(sents):
        text, names = s["text"], s["names"]
        if len(set(names)) != len(names):
            err(f"names[{i}]: duplicate names")
        for nm in names:
            if not occurs(nm, text):
                err(f"names[{i}]: {nm!r} not found as a token in {text!r}")
            if " " in nm or "/" in nm or "@" in nm or "://" in nm:
                err(f"names[{i}]: {nm!r} looks like a path/url/email/phrase")
            if FILE_EXT.search(nm):
                err(f"names[{i}]: {nm!r} is a file name (policy: not a name)")
            if re.fullmatch(r"v?\d+(\.\d+)+", nm):
                err(f"names[{i}]: {nm!r} is a version")
            if not re.search(r"[-_.]", nm):
                err(f"names[{i}]: {nm!r} is not code-shaped (no - _ .)")
            if nm.lower() in REQUIRED_NEGATIVES:
                err(f"names[{i}]: {nm!r} is on the not-a-name list")
        all_names.update(names)
    # consistency: a labelled name is labelled wherever it occurs as a token
    for i, s in enumerate(sents):
        for nm in all_names:
            if nm not in s["names"] and occurs(nm, s["text"]):
                err(f"names[{i}]: {nm!r} occurs but is not labelled here: {s['text']!r}")
    # required negatives present somewhere
    joined = "\n".join(s["text"] for s in sents)
    for neg in REQUIRED_NEGATIVES:
        if neg.lower() not in joined.lower():
            err(f"names.json: no sentence contains the non-name {neg!r}")
    kinds = Counter(s.get("source") for s in sents)
    langs = Counter(s.get("lang") for s in sents)
    n_names = sum(len(s["names"]) for s in sents)
    shapes = Counter()
    for nm in (n for s in sents for n in s["names"]):
        shapes["dotted" if "." in nm else "snake" if "_" in nm else "kebab"] += 1
    bt = sum(1 for s in sents for n in s["names"] if f"`{n}`" in s["text"])
    print("names.json")
    print(f"  sentences {len(sents)}: source {dict(kinds)}, lang {dict(langs)}")
    print(f"  name mentions {n_names} ({len(all_names)} distinct), shapes {dict(shapes)}, backticked {bt}")
    print(f"  sentences with no names {sum(1 for s in sents if not s['names'])}")


def main():
    check_team(os.path.join(HERE, "team.json"))
    check_names(os.path.join(HERE, "names.json"))
    if ERRORS:
        print(f"\n{len(ERRORS)} ERROR(S):")
        for e in ERRORS:
            print("  -", e)
        sys.exit(1)
    print("\nOK")


if __name__ == "__main__":
    main()
