#!/usr/bin/env python3
"""Build ../team.json from catalog.py, memories.py, queries.py and runbooks/*.md.
Runbook entity lists are derived with the same surface rule check.py uses
(catalog surfaces found in the text); all other memories are hand-labelled."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import catalog
import check
import memories
import queries

RUNBOOKS = [
    ("t161", "rb1_billing_release.md"),
    ("t162", "rb2_ledger_failover.md"),
    ("t163", "rb3_invoice_lag.md"),
    ("t164", "rb4_month_end_recon.md"),
    ("t165", "rb5_provider_failover.md"),
]


def main():
    team = {
        "meta": {
            "description": "Fictional payments/billing team memory corpus for MAPLE evaluation: entity, alias, "
                           "no-answer and decision-lesson labels. See README.md.",
            "entity_rule": "entities = canonical names of every catalog entity mentioned in the text by its canonical "
                           "name or any alias (token-boundary match, see check.py).",
        },
        "people": catalog.PEOPLE,
        "components": catalog.COMPONENTS,
        "libraries": catalog.LIBRARIES,
        "memories": [],
        "queries": queries.Q,
        "lessons": queries.LESSONS,
    }
    for key, lang, layer, text, ents, rels, outcome in memories.M:
        d = {"key": key, "text": text, "lang": lang, "layer": layer, "entities": ents}
        if rels:
            d["relations"] = rels
        if outcome:
            d["outcome"] = outcome
        team["memories"].append(d)
    table = check.entity_table(team)
    for key, fn in RUNBOOKS:
        text = open(os.path.join(HERE, "runbooks", fn), encoding="utf-8").read()
        def first_pos(e):
            _, surfaces, cs = table[e]
            hits = [check.surface_pattern(s, cs).search(text) for s in surfaces]
            return min(h.start() for h in hits if h)
        ents = sorted(check.detect_entities(text, table), key=first_pos)
        team["memories"].append({"key": key, "text": text, "lang": "en", "layer": "fact",
                                 "entities": ents, "runbook": True, "title": text.splitlines()[0].lstrip("# ")})
    with open(os.path.join(os.path.dirname(HERE), "team.json"), "w", encoding="utf-8") as f:
        json.dump(team, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote team.json:", len(team["memories"]), "memories,", len(team["queries"]), "queries")


if __name__ == "__main__":
    main()
