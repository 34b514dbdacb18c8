#!/usr/bin/env python3
"""Validate the extraction-eval dev2 split (stdlib only).

    python3 validate.py            # checks every NAME.jsonl / NAME.gold.json next to this file
    python3 validate.py -q         # only errors + summary

Checks
- every transcript line is JSON; envelope fields (uuid/parentUuid chain, sessionId, cwd, version 2.1.3xx,
  userType, entrypoint, gitBranch, ISO-8601 Z timestamps, non-decreasing); one content block per assistant
  line; tool_result ids refer to earlier tool_use ids; 20-70 lines per session
- gold schema; session/project/order/language consistent with the transcript
- every must / chosen / over / why substring occurs (case-insensitively) in the transcript text OUTSIDE
  MAPLE recall blocks, and also in the item's own ideal `text`
- every supersedes points at an existing id of an EARLIER session of the same project
- every secret occurs verbatim in the transcript and in no expected/acceptable text or token
- every forbidden string occurs in the transcript and in no expected text of that session
- every recalled memory (attachment, <system-reminder>, mcp__maple__memory_search result) is covered by a
  forbidden string of that session
Prints counts by layer, kind, language, session language.
"""
from __future__ import annotations

import collections
import datetime as dt
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {"fact", "experience", "decision"}
KINDS = {"convention", "command", "config", "preference", "constraint", "gotcha", "root_cause", "lesson",
         "workaround", "fix", "decision"}
LANGS = {"en", "zh"}
SESSION_LANGS = {"en", "zh", "mixed"}
MAPLE_RE = re.compile(r"<maple-memory>.*?</maple-memory>", re.S)
RECALL_ITEM_RE = re.compile(r'^- #\d+ \w+ \u00b7 [^:]+: "(.*)"$', re.M)
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")

errors: list[str] = []


def err(msg):
    errors.append(msg)


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def load_transcript(path):
    lines = []
    with open(path, encoding="utf-8") as f:
        for i, raw in enumerate(f, 1):
            raw = raw.rstrip("\n")
            if not raw:
                continue
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError as e:
                err(f"{os.path.basename(path)}:{i}: invalid JSON: {e}")
    return lines


def analyse(name, lines):
    """Returns (full_text, extractable_text, recalled_memories, info) and checks structure."""
    tag = name
    full, extractable, recalled = [], [], []
    recall_forms = set()
    uuids, tool_uses = {}, {}
    session_ids, cwds = set(), set()
    last_ts = None
    for n, l in enumerate(lines, 1):
        full.extend(strings(l))
        typ = l.get("type")
        if typ in ("user", "assistant", "system", "attachment"):
            for k in ("uuid", "parentUuid", "sessionId", "timestamp", "cwd", "version", "gitBranch",
                      "userType", "entrypoint", "isSidechain"):
                if k not in l:
                    err(f"{tag}:{n}: {typ} line lacks {k}")
            u = l.get("uuid")
            if u in uuids:
                err(f"{tag}:{n}: duplicate uuid {u}")
            p = l.get("parentUuid")
            if p is not None and p not in uuids:
                err(f"{tag}:{n}: parentUuid {p} not an earlier uuid")
            if p is None and n > 1 and typ != "attachment" and not (typ == "system" and l.get("subtype") == "compact_boundary") \
                    and any(x.get("uuid") for x in lines[:n - 1]):
                err(f"{tag}:{n}: unexpected root line (parentUuid null)")
            if "logicalParentUuid" in l and l["logicalParentUuid"] not in uuids:
                err(f"{tag}:{n}: logicalParentUuid not found")
            uuids[u] = l
            session_ids.add(l.get("sessionId"))
            cwds.add(l.get("cwd"))
            if not re.fullmatch(r"2\.1\.3\d\d", str(l.get("version"))):
                err(f"{tag}:{n}: version {l.get('version')} is not 2.1.3xx")
            if l.get("userType") != "external" or l.get("entrypoint") != "cli":
                err(f"{tag}:{n}: userType/entrypoint")
            ts = l.get("timestamp", "")
            if not TS_RE.match(ts):
                err(f"{tag}:{n}: bad timestamp {ts!r}")
            else:
                t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
                if last_ts and t < last_ts:
                    err(f"{tag}:{n}: timestamp goes backwards")
                last_ts = t
        elif typ in ("ai-title", "last-prompt", "summary", "custom-title"):
            if typ != "summary":
                session_ids.add(l.get("sessionId"))
        elif typ != "file-history-snapshot":
            err(f"{tag}:{n}: unknown line type {typ}")

        # extractable text + recall bookkeeping
        if typ == "attachment":
            att = l.get("attachment", {})
            if att.get("type") == "hook_additional_context":
                recall_forms.add("attachment")
                for s in strings(att.get("content")):
                    recalled.extend(RECALL_ITEM_RE.findall(s))
                continue
            extractable.extend(strings(att))
            continue
        if typ == "assistant":
            content = l["message"].get("content", [])
            if not isinstance(content, list) or len(content) != 1:
                err(f"{tag}:{n}: assistant line must carry exactly one content block")
            for b in content:
                if b.get("type") == "tool_use":
                    if b["id"] in tool_uses:
                        err(f"{tag}:{n}: duplicate tool_use id")
                    tool_uses[b["id"]] = (b["name"], l["uuid"])
            if not l.get("requestId"):
                err(f"{tag}:{n}: assistant line without requestId")
            extractable.extend(strings(l["message"].get("content")))
            continue
        if typ == "user":
            content = l["message"].get("content")
            skip_tur = False
            if isinstance(content, list):
                for b in content:
                    if b.get("type") == "tool_result":
                        tu = tool_uses.get(b.get("tool_use_id"))
                        if not tu:
                            err(f"{tag}:{n}: tool_result for unknown tool_use {b.get('tool_use_id')}")
                            continue
                        if l.get("sourceToolAssistantUUID") != tu[1]:
                            err(f"{tag}:{n}: sourceToolAssistantUUID mismatch")
                        if tu[0].startswith("mcp__maple__"):
                            recall_forms.add("mcp")
                            skip_tur = True
                            blocks = b.get("content")
                            if isinstance(blocks, str):
                                blocks = [{"type": "text", "text": blocks}]
                            for s in (x.get("text", "") for x in blocks if isinstance(x, dict)):
                                try:
                                    recalled.extend(r["content"] for r in json.loads(s)["results"])
                                except (ValueError, KeyError, TypeError):
                                    err(f"{tag}:{n}: maple search result is not JSON with results[]")
                            continue
                        extractable.extend(strings(b.get("content")))
                    else:
                        extractable.extend(strings(b))
            else:
                extractable.extend(strings(content))
            if not skip_tur and "toolUseResult" in l:
                extractable.extend(strings(l["toolUseResult"]))
            continue
        if typ == "system":
            extractable.extend(s for k, s in l.items() if k == "content" and isinstance(s, str))

    # strip <maple-memory> blocks that sit inside user text (system-reminder form)
    ext = []
    for s in extractable:
        if "<maple-memory>" in s:
            recall_forms.add("system-reminder")
            for blk in MAPLE_RE.findall(s):
                recalled.extend(RECALL_ITEM_RE.findall(blk))
            s = MAPLE_RE.sub(" ", s)
        ext.append(s)
    if len(session_ids) != 1:
        err(f"{tag}: {len(session_ids)} sessionIds")
    if len(cwds) != 1:
        err(f"{tag}: {len(cwds)} cwds")
    info = {"cwd": next(iter(cwds)) if cwds else None, "first_ts": None, "recall_forms": recall_forms,
            "n_lines": len(lines)}
    for l in lines:
        if l.get("timestamp") and l.get("type") in ("user", "assistant", "system", "attachment"):
            info["first_ts"] = l["timestamp"]
            break
    if not 20 <= len(lines) <= 70:
        err(f"{tag}: {len(lines)} lines (want 20-70)")
    return "\n".join(full), "\n".join(ext), recalled, info


def main(quiet=False):
    golds = sorted(glob.glob(os.path.join(HERE, "*.gold.json")))
    if not golds:
        print("no gold files found")
        return 1
    sessions = {}
    for gp in golds:
        name = os.path.basename(gp)[: -len(".gold.json")]
        try:
            g = json.load(open(gp, encoding="utf-8"))
        except json.JSONDecodeError as e:
            err(f"{name}: gold is not JSON: {e}")
            continue
        tp = os.path.join(HERE, name + ".jsonl")
        if not os.path.exists(tp):
            err(f"{name}: transcript missing")
            continue
        lines = load_transcript(tp)
        full, ext, recalled, info = analyse(name, lines)
        sessions[name] = (g, full, ext, recalled, info)
    for tp in glob.glob(os.path.join(HERE, "*.jsonl")):
        if os.path.basename(tp)[:-6] not in sessions:
            err(f"{os.path.basename(tp)}: transcript without gold")

    ids_by_session = {}
    for name, (g, full, ext, recalled, info) in sessions.items():
        for k in ("session", "project", "order", "language", "expected", "acceptable", "forbidden", "secrets"):
            if k not in g:
                err(f"{name}: gold lacks {k}")
        if g.get("session") != name:
            err(f"{name}: gold.session = {g.get('session')}")
        if g.get("project") != info["cwd"]:
            err(f"{name}: project {g.get('project')} != cwd {info['cwd']}")
        if g.get("language") not in SESSION_LANGS:
            err(f"{name}: language {g.get('language')}")
        ids_by_session[name] = {e.get("id") for e in g.get("expected", [])}

    # project ordering
    by_project = collections.defaultdict(list)
    for name, (g, *_rest) in sessions.items():
        by_project[g["project"]].append((g["order"], sessions[name][4]["first_ts"], name))
    for proj, items in by_project.items():
        items.sort()
        orders = [o for o, _, _ in items]
        if orders != list(range(1, len(items) + 1)):
            err(f"{proj}: orders {orders} are not 1..n")
        tss = [t for _, t, _ in items]
        if tss != sorted(tss):
            err(f"{proj}: session order does not follow timestamps")
    order_of = {name: (g["project"], g["order"]) for name, (g, *_r) in sessions.items()}

    low = str.lower
    counts = collections.Counter()
    by_layer, by_kind, by_lang, by_slang = (collections.Counter() for _ in range(4))
    decisions_per_session, corrections_per_project = collections.Counter(), collections.Counter()
    for name, (g, full, ext, recalled, info) in sessions.items():
        full_l, ext_l = low(full), low(ext)
        by_slang[g["language"]] += 1
        seen = set()
        texts = []
        for e in g.get("expected", []):
            tag = f"{name}#{e.get('id')}"
            if e.get("id") in seen:
                err(f"{tag}: duplicate id")
            seen.add(e.get("id"))
            for k in ("id", "layer", "kind", "lang", "text", "must"):
                if k not in e:
                    err(f"{tag}: lacks {k}")
            if e.get("layer") not in LAYERS:
                err(f"{tag}: layer {e.get('layer')}")
            if e.get("kind") not in KINDS:
                err(f"{tag}: kind {e.get('kind')}")
            if e.get("lang") not in LANGS:
                err(f"{tag}: lang {e.get('lang')}")
            if (e.get("layer") == "decision") != (e.get("kind") == "decision"):
                err(f"{tag}: layer/kind decision mismatch")
            must = e.get("must", [])
            if not (isinstance(must, list) and 1 <= len(must) <= 3):
                err(f"{tag}: must needs 1-3 items")
            toks = [("must", t) for t in must]
            if e.get("layer") == "decision":
                for k in ("chosen", "over", "why"):
                    if k not in e:
                        err(f"{tag}: decision lacks {k}")
                toks.append(("chosen", e.get("chosen", "")))
                toks += [("over", t) for t in e.get("over", [])]
                toks += [("why", t) for t in e.get("why", [])]
                decisions_per_session[name] += 1
            else:
                for k in ("chosen", "over", "why"):
                    if k in e:
                        err(f"{tag}: non-decision has {k}")
            for kind, t in toks:
                if not t:
                    err(f"{tag}: empty {kind} token")
                    continue
                if low(t) not in ext_l:
                    where = " (only inside a recall block)" if low(t) in full_l else ""
                    err(f"{tag}: {kind} {t!r} not in transcript{where}")
                if low(t) not in low(e.get("text", "")):
                    err(f"{tag}: {kind} {t!r} not in the item's own text")
            sup = e.get("supersedes")
            if sup:
                sname, _, sid = sup.partition("#")
                if sname not in sessions:
                    err(f"{tag}: supersedes unknown session {sname}")
                elif sid not in ids_by_session[sname]:
                    err(f"{tag}: supersedes unknown id {sup}")
                elif order_of[sname][0] != g["project"] or order_of[sname][1] >= g["order"]:
                    err(f"{tag}: supersedes must point to an earlier session of the same project")
                else:
                    corrections_per_project[g["project"]] += 1
            by_layer[e.get("layer")] += 1
            by_kind[e.get("kind")] += 1
            by_lang[e.get("lang")] += 1
            texts.append(e.get("text", ""))
            texts.extend(t for _, t in toks)
        acc_texts = []
        for a in g.get("acceptable", []):
            if not a.get("must"):
                err(f"{name}: acceptable item without must")
            for t in a.get("must", []):
                if low(t) not in ext_l:
                    err(f"{name}: acceptable token {t!r} not in transcript")
                acc_texts.append(t)
            acc_texts.append(a.get("note", ""))
        for s in g.get("secrets", []):
            if s not in full:
                err(f"{name}: secret {s[:12]}... not in transcript")
            for t in texts + acc_texts:
                if s and s in t:
                    err(f"{name}: secret {s[:12]}... appears in gold text")
        for f in g.get("forbidden", []):
            if low(f) not in full_l:
                err(f"{name}: forbidden {f!r} does not occur in the transcript")
            for t in texts:
                if low(f) in low(t):
                    err(f"{name}: forbidden {f!r} occurs in expected text {t[:50]!r}")
        for r in recalled:
            if not any(low(f) in low(r) for f in g.get("forbidden", [])):
                err(f"{name}: recalled memory not covered by forbidden: {r[:60]!r}")
        counts["sessions"] += 1
        counts["expected"] += len(g.get("expected", []))
        counts["acceptable"] += len(g.get("acceptable", []))
        counts["forbidden"] += len(g.get("forbidden", []))
        counts["secrets"] += len(g.get("secrets", []))
        counts["recalled"] += len(recalled)
        if not quiet:
            forms = ",".join(sorted(info["recall_forms"])) or "-"
            print(f"{name:42s} {g['language']:5s} lines={info['n_lines']:2d} expected={len(g['expected']):2d} "
                  f"decisions={decisions_per_session[name]} secrets={len(g['secrets'])} recall={forms}")

    nonempty = [n for n, (g, *_r) in sessions.items() if g["expected"]]
    print()
    print("totals:", dict(counts))
    print("sessions by language:", dict(by_slang))
    print("expected by layer:", dict(by_layer))
    print("expected by kind:", dict(sorted(by_kind.items())))
    print("expected by memory lang:", dict(by_lang))
    print(f"avg expected per non-empty session: {counts['expected'] / max(1, len(nonempty)):.2f} "
          f"({len(sessions) - len(nonempty)} deliberately empty)")
    print(f"sessions with >=1 decision: {sum(1 for n in sessions if decisions_per_session[n])}/{len(sessions)}")
    print("corrections (supersedes) per project:", {os.path.basename(k): v for k, v in corrections_per_project.items()})
    if errors:
        print(f"\n{len(errors)} ERROR(S):")
        for e in errors:
            print("  -", e)
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main(quiet="-q" in sys.argv))
