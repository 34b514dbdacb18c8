#!/usr/bin/env python3
"""Validate the held-out extraction set in this directory (stdlib only).

Checks every NAME.jsonl / NAME.gold.json pair:
  * each JSONL line parses; envelope fields, uuid/parentUuid chain, one content block per
    assistant line, tool_result ids match earlier tool_use ids, timestamps non-decreasing, 20-70 lines
  * gold schema (layers, kinds, langs, decision fields), project == cwd, order 1..n in time order
  * every must / chosen / over / why substring occurs (case-insensitive) in the transcript text
    OUTSIDE recall blocks (<maple-memory> attachments, <system-reminder>, mcp__maple__memory_search
    results) and outside compact summaries, so a memory could really contain it
  * supersedes points at an existing id of an EARLIER session of the same project
  * every secret occurs in the transcript and in no gold text; every forbidden substring occurs in
    the transcript and in no expected/acceptable text
Prints counts by layer, kind, language. Exit 1 on any error.
"""
import collections
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAYERS = {"fact", "experience", "decision"}
KINDS = {"convention", "command", "config", "preference", "constraint", "gotcha", "root_cause", "lesson",
         "workaround", "fix", "decision"}
LAYER_KINDS = {"fact": {"convention", "command", "config", "preference", "constraint", "gotcha"},
               "experience": {"root_cause", "lesson", "workaround", "fix", "gotcha"},
               "decision": {"decision"}}
ENVELOPE = ("parentUuid", "isSidechain", "uuid", "timestamp", "userType", "entrypoint", "cwd", "sessionId",
            "version", "gitBranch")
RECALL_TOOL = "mcp__maple__memory_search"
REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)

errors = []


def err(where, msg):
    errors.append(f"{where}: {msg}")


def strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def content_texts(content):
    """Text a human/assistant/tool produced in a message content (string or blocks)."""
    if isinstance(content, str):
        yield content
        return
    for b in content or []:
        t = b.get("type")
        if t == "text":
            yield b.get("text", "")
        elif t == "thinking":
            yield b.get("thinking", "")
        elif t == "tool_use":
            yield from strings(b.get("input", {}))
        elif t == "tool_result":
            yield from strings(b.get("content", ""))


def check_transcript(name, lines, gold):
    where = name + ".jsonl"
    if not 20 <= len(lines) <= 70:
        err(where, f"{len(lines)} lines, want 20-70")
    uuids, tool_uses, tool_names = set(), {}, {}
    session_ids, last_ts = set(), None
    clean, recall_forms = [], collections.Counter()
    for i, ln in enumerate(lines, 1):
        t = ln.get("type")
        if t in ("user", "assistant", "system", "attachment"):
            for k in ENVELOPE:
                if k not in ln:
                    err(where, f"line {i} ({t}) lacks {k}")
            if ln.get("uuid") in uuids:
                err(where, f"line {i} duplicate uuid")
            uuids.add(ln.get("uuid"))
            p = ln.get("parentUuid")
            if p is not None and p not in uuids:
                err(where, f"line {i} parentUuid {p} not an earlier uuid")
            if p is None and i > 2 and "logicalParentUuid" not in ln:
                err(where, f"line {i} root without logicalParentUuid")
            if ln.get("cwd") != gold["project"]:
                err(where, f"line {i} cwd {ln.get('cwd')} != gold project")
            if not str(ln.get("version", "")).startswith("2.1.3"):
                err(where, f"line {i} version {ln.get('version')}")
            if ln.get("userType") != "external" or ln.get("entrypoint") != "cli":
                err(where, f"line {i} userType/entrypoint")
            session_ids.add(ln.get("sessionId"))
            ts = ln.get("timestamp", "")
            if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ts):
                err(where, f"line {i} bad timestamp {ts}")
            if last_ts and ts < last_ts:
                err(where, f"line {i} timestamp goes backwards")
            last_ts = ts
        if t == "assistant":
            c = ln["message"]["content"]
            if len(c) != 1:
                err(where, f"line {i} assistant line with {len(c)} content blocks")
            for b in c:
                if b.get("type") == "tool_use":
                    tool_uses[b["id"]] = b["name"]
            clean.extend(content_texts(c))
        elif t == "user":
            msg = ln["message"]["content"]
            is_tool_result = isinstance(msg, list) and any(b.get("type") == "tool_result" for b in msg)
            if is_tool_result:
                for b in msg:
                    if b.get("type") == "tool_result":
                        tid = b.get("tool_use_id")
                        if tid not in tool_uses:
                            err(where, f"line {i} tool_result for unknown tool_use {tid}")
                        elif tool_uses[tid] == RECALL_TOOL:
                            recall_forms["mcp_memory_search"] += 1
                            rc = b.get("content")
                            payload = rc if isinstance(rc, str) else "".join(
                                x.get("text", "") for x in rc if x.get("type") == "text")
                            try:
                                res = json.loads(payload)["results"]
                                assert all("id" in r and "content" in r for r in res)
                            except Exception as e:  # noqa: BLE001
                                err(where, f"line {i} memory_search result not JSON results list: {e}")
                            continue
                        clean.extend(content_texts([b]))
                continue
            if ln.get("isMeta") or ln.get("isCompactSummary"):
                continue
            for txt in content_texts(msg):
                if "<system-reminder>" in txt:
                    if "<maple-memory>" in txt:
                        recall_forms["system_reminder"] += 1
                    txt = REMINDER_RE.sub("", txt)
                clean.append(txt)
        elif t == "attachment":
            a = ln.get("attachment", {})
            if a.get("type") == "hook_additional_context":
                if any("<maple-memory>" in x for x in strings(a.get("content"))):
                    recall_forms["attachment"] += 1
        elif t in ("file-history-snapshot", "ai-title", "summary", "last-prompt"):
            pass
    if len(session_ids) != 1:
        err(where, f"sessionId values: {session_ids}")
    return "\n".join(clean), recall_forms


def main():
    golds, texts, alltexts, forms = {}, {}, {}, {}
    for gpath in sorted(glob.glob(os.path.join(HERE, "*.gold.json"))):
        name = os.path.basename(gpath)[:-len(".gold.json")]
        try:
            gold = json.load(open(gpath, encoding="utf-8"))
        except Exception as e:  # noqa: BLE001
            err(name, f"gold does not parse: {e}")
            continue
        jpath = os.path.join(HERE, name + ".jsonl")
        if not os.path.exists(jpath):
            err(name, "missing .jsonl")
            continue
        lines = []
        for n, raw in enumerate(open(jpath, encoding="utf-8"), 1):
            try:
                lines.append(json.loads(raw))
            except Exception as e:  # noqa: BLE001
                err(name, f"jsonl line {n} does not parse: {e}")
        if gold.get("session") != name:
            err(name, "gold.session != file name")
        golds[name] = gold
        texts[name], forms[name] = check_transcript(name, lines, gold)
        alltexts[name] = "\n".join(strings(lines))
    for j in glob.glob(os.path.join(HERE, "*.jsonl")):
        if os.path.basename(j)[:-6] not in golds:
            err(os.path.basename(j), "no gold file")

    # projects / order
    by_project = collections.defaultdict(list)
    for name, g in golds.items():
        by_project[g["project"]].append(g)
    for proj, gs in by_project.items():
        orders = sorted(g["order"] for g in gs)
        if orders != list(range(1, len(gs) + 1)):
            err(proj, f"orders {orders}")
        first_ts = {}
        for g in gs:
            recs = (json.loads(l) for l in open(os.path.join(HERE, g["session"] + ".jsonl"), encoding="utf-8"))
            first_ts[g["order"]] = next(r["timestamp"] for r in recs if "timestamp" in r)
        ts_sorted = [first_ts[o] for o in sorted(first_ts)]
        if ts_sorted != sorted(ts_sorted):
            err(proj, "session order does not follow time")

    c_layer, c_kind, c_lang, c_sess_lang = (collections.Counter() for _ in range(4))
    decisions, supersedes = 0, collections.Counter()
    for name, g in sorted(golds.items()):
        for k in ("session", "project", "order", "language", "expected", "acceptable", "forbidden", "secrets"):
            if k not in g:
                err(name, f"gold lacks {k}")
        if g.get("language") not in ("en", "zh", "mixed"):
            err(name, f"language {g.get('language')}")
        c_sess_lang[g["language"]] += 1
        clean = texts[name].lower()
        alltext = alltexts[name].lower()
        ids = set()
        gold_strings = []
        for e in g["expected"]:
            w = f"{name}#{e.get('id')}"
            if e["id"] in ids:
                err(w, "duplicate id")
            ids.add(e["id"])
            if e["layer"] not in LAYERS or e["kind"] not in KINDS:
                err(w, f"layer/kind {e['layer']}/{e['kind']}")
            elif e["kind"] not in LAYER_KINDS[e["layer"]]:
                err(w, f"kind {e['kind']} unusual for layer {e['layer']}")
            if e.get("lang") not in ("en", "zh"):
                err(w, f"lang {e.get('lang')}")
            if not 1 <= len(e["must"]) <= 3:
                err(w, f"{len(e['must'])} must items")
            subs = list(e["must"])
            if e["layer"] == "decision":
                decisions += 1
                if not (e.get("chosen") and e.get("over") and e.get("why")):
                    err(w, "decision lacks chosen/over/why")
                subs += [e.get("chosen", "")] + e.get("over", []) + e.get("why", [])
            elif any(k in e for k in ("chosen", "over", "why")):
                err(w, "chosen/over/why on a non-decision")
            for sub in subs:
                if sub.lower() not in clean:
                    err(w, f"substring {sub!r} not in transcript text (outside recall blocks)")
            if "supersedes" in e:
                supersedes[g["project"]] += 1
                tgt, _, tid = e["supersedes"].partition("#")
                tg = golds.get(tgt)
                if tg is None:
                    err(w, f"supersedes unknown session {tgt}")
                elif tg["project"] != g["project"] or tg["order"] >= g["order"]:
                    err(w, f"supersedes {tgt} which is not an earlier session of the same project")
                elif tid not in {x["id"] for x in tg["expected"]}:
                    err(w, f"supersedes unknown id {e['supersedes']}")
            c_layer[e["layer"]] += 1
            c_kind[e["kind"]] += 1
            c_lang[e["lang"]] += 1
            gold_strings += [e["text"]] + subs
        for a in g["acceptable"]:
            for sub in a["must"]:
                if sub.lower() not in clean:
                    err(name, f"acceptable substring {sub!r} not in transcript text")
            gold_strings += a["must"] + [a.get("note", "")]
        for f in g["forbidden"]:
            if f.lower() not in alltext:
                err(name, f"forbidden {f!r} never occurs in the transcript")
            for s in gold_strings:
                if f.lower() in s.lower():
                    err(name, f"forbidden {f!r} occurs in gold text {s[:60]!r}")
        for sec in g["secrets"]:
            if sec not in alltexts[name]:
                err(name, f"secret {sec[:12]}... not in transcript")
            for s in gold_strings:
                if sec in s:
                    err(name, f"secret value appears in gold text {s[:60]!r}")

    # split-level requirements
    nonempty = [g for g in golds.values() if g["expected"]]
    n_exp = sum(len(g["expected"]) for g in golds.values())
    if nonempty and n_exp / len(nonempty) < 6:
        err("split", f"average expected per non-empty session {n_exp / len(nonempty):.1f} < 6")
    if decisions < len(golds) / 2:
        err("split", f"{decisions} decisions < sessions/2")
    for proj, gs in by_project.items():
        if len(gs) >= 3 and supersedes[proj] < 2:
            err(proj, f"only {supersedes[proj]} corrections")
    total_forms = collections.Counter()
    for f in forms.values():
        total_forms.update(f)
    for form in ("attachment", "system_reminder", "mcp_memory_search"):
        if not total_forms[form]:
            err("split", f"no recall block of form {form}")

    print(f"sessions: {len(golds)}  by language: {dict(c_sess_lang)}  projects: {len(by_project)}")
    for proj, gs in sorted(by_project.items()):
        print(f"  {proj}: {len(gs)} sessions, {sum(len(g['expected']) for g in gs)} expected, "
              f"{supersedes[proj]} corrections")
    print(f"expected: {n_exp} (non-empty sessions: {len(nonempty)}, avg {n_exp / max(1, len(nonempty)):.1f}); "
          f"empty sessions: {len(golds) - len(nonempty)}")
    print(f"by layer: {dict(sorted(c_layer.items()))}")
    print(f"by kind:  {dict(sorted(c_kind.items()))}")
    print(f"by memory lang: {dict(sorted(c_lang.items()))}")
    print(f"decisions: {decisions}; acceptable: {sum(len(g['acceptable']) for g in golds.values())}; "
          f"forbidden: {sum(len(g['forbidden']) for g in golds.values())}; "
          f"secrets: {sum(len(g['secrets']) for g in golds.values())}")
    print(f"recall blocks: {dict(total_forms)}")
    if errors:
        print(f"\n{len(errors)} ERROR(S):")
        for e in errors:
            print("  " + e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
