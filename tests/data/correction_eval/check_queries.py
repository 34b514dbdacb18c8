"""Check queries.json against cases.json and print its counts.

The questions were written by hand, blind to the search code; this catches the slips a hand-written
file collects (an index off by one, a question aimed at a memory the case says was corrected, a
'cross' label on a same-language pair) before a benchmark reads it. Stdlib only; run from anywhere:
`python tests/data/correction_eval/check_queries.py`. Exits 1 and lists the problems if any.
"""

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CJK = re.compile(r"[\u4e00-\u9fff]")
KINDS = {"corrected", "untouched"}
LANGS = {"en", "zh", "mixed", "cross"}


def problems(cases, queries):
    """Every rule a query breaks, as readable lines; empty when the file is sound."""
    by_id = {c["id"]: c for c in cases}
    found = []
    seen = set()
    for n, q in enumerate(queries):
        where = f"query {n} ({q.get('case')}: {q.get('query')!r})"
        case = by_id.get(q.get("case"))
        if case is None:
            found.append(f"{where}: no such case")
            continue
        text = q.get("query", "").strip()
        if not text:
            found.append(f"{where}: empty query")
        if text.lower() in seen:
            found.append(f"{where}: duplicate query")
        seen.add(text.lower())
        if q.get("kind") not in KINDS or q.get("lang") not in LANGS:
            found.append(f"{where}: kind or lang not one of {sorted(KINDS)} / {sorted(LANGS)}")
        answer = q.get("answer")
        if answer == "new":
            if not case["supersedes"]:
                found.append(f"{where}: answer 'new' but the case corrects nothing")
            if q.get("kind") != "corrected":
                found.append(f"{where}: answer 'new' must be kind 'corrected'")
            target = case["new"]
        elif isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(case["store"]):
            if answer in case["supersedes"]:
                found.append(f"{where}: answer {answer} is a memory the case supersedes")
            if q.get("kind") != "untouched":
                found.append(f"{where}: a store answer must be kind 'untouched'")
            target = case["store"][answer]
        else:
            found.append(f"{where}: answer {answer!r} is neither 'new' nor a store index")
            continue
        differs = bool(CJK.search(text)) != bool(CJK.search(target))
        if differs != (q.get("lang") == "cross"):
            found.append(f"{where}: lang {q.get('lang')!r} but the answer memory is {target!r}")
        if re.search(r"\b(new|old)\b|\bc\d{3}\b", text, re.IGNORECASE):
            found.append(f"{where}: names an id or says 'new'/'old'")
    return found


def main():
    cases = json.loads((HERE / "cases.json").read_text(encoding="utf-8"))
    queries = json.loads((HERE / "queries.json").read_text(encoding="utf-8"))["queries"]
    found = problems(cases, queries)
    for line in found:
        print(line)
    correcting = {c["id"] for c in cases if c["supersedes"]}
    asked = Counter((q["case"], q["kind"]) for q in queries)
    short = sorted(cid for cid in correcting if asked[(cid, "corrected")] < 2)
    if short:
        print("cases that correct something but have fewer than 2 corrected questions:", short)
    print(f"{len(queries)} queries over {len({q['case'] for q in queries})} of {len(cases)} cases")
    print("by kind:", dict(Counter(q["kind"] for q in queries)))
    print("by lang:", dict(Counter(q["lang"] for q in queries)))
    for kind in sorted(KINDS):
        print(f"  {kind} by lang:", dict(Counter(q["lang"] for q in queries if q["kind"] == kind)))
    return 1 if found or short else 0


if __name__ == "__main__":
    sys.exit(main())
