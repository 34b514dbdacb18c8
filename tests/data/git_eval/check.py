#!/usr/bin/env python3
"""Validates the labelled git-history sets and prints their counts.

Usage: python3 check.py [FILE ...]   (default: commits.json maple_history.json)

Checks: schema; 40-hex SHAs unique per repo; ISO-8601 dates with an offset;
keep == (kind != "none"); a kept commit has at least one `must`; an unkept one
has empty `must` and `why`; every `must`/`why` string occurs in the message
(case-insensitive); "This reverts commit X" names a commit of the same repo
(commits.json); maple_history.json matches `git log` of the enclosing repo
when git is available. Exit status 1 on any error.
"""
import collections
import datetime as dt
import json
import os
import re
import subprocess
import sys

KINDS = {"decision", "revert", "migration", "convention", "gotcha",
         "deprecation", "security", "none"}
KEYS = {"sha", "date", "author", "message", "keep", "kind", "must", "why"}
HEX40 = re.compile(r"^[0-9a-f]{40}$")
CJK = re.compile(r"[\u4e00-\u9fff]")
REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
HERE = os.path.dirname(os.path.abspath(__file__))


def lang(msg):
    n = len(CJK.findall(msg))
    if not n:
        return "en"
    latin = len(re.findall(r"[A-Za-z]{2,}", msg))
    return "zh" if n >= 4 * latin else "mixed"


def check_file(path, errors, warnings):
    def err(where, text):
        errors.append(f"{os.path.basename(path)}: {where}: {text}")

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or set(data) != {"repos"} or not isinstance(data["repos"], list):
        err("top", 'expected {"repos": [...]}')
        return []
    names = set()
    for r in data["repos"]:
        if not isinstance(r, dict) or set(r) != {"name", "commits"}:
            err("repo", f"expected keys name, commits: {r if not isinstance(r, dict) else sorted(r)}")
            continue
        name = r["name"]
        if not isinstance(name, str) or not name or name in names:
            err("repo", f"bad or duplicate name {name!r}")
        names.add(name)
        shas = set()
        prev = None
        for i, c in enumerate(r["commits"]):
            where = f"{name}[{i}]"
            if not isinstance(c, dict) or set(c) != KEYS:
                err(where, f"keys must be {sorted(KEYS)}")
                continue
            if not isinstance(c["sha"], str) or not HEX40.match(c["sha"]):
                err(where, f"sha not 40 lowercase hex: {c['sha']!r}")
            elif c["sha"] in shas:
                err(where, "duplicate sha")
            shas.add(c["sha"])
            where = f"{name}[{i}] {str(c['sha'])[:8]}"
            try:
                d = dt.datetime.fromisoformat(c["date"])
                if d.tzinfo is None:
                    err(where, "date has no UTC offset")
                if prev and d > prev:
                    warnings.append(f"{name}: {where} is newer than the commit listed before it")
                prev = d
            except (TypeError, ValueError):
                err(where, f"bad date {c['date']!r}")
            for k in ("author", "message"):
                if not isinstance(c[k], str) or not c[k].strip():
                    err(where, f"empty {k}")
            if isinstance(c["message"], str) and any(l.startswith("        ") for l in c["message"].split("\n")):
                warnings.append(f"{where}: a line starts with 8 spaces (indentation left over?)")
            if not isinstance(c["keep"], bool):
                err(where, "keep must be a boolean")
            if c["kind"] not in KINDS:
                err(where, f"unknown kind {c['kind']!r}")
            if c["keep"] != (c["kind"] != "none"):
                err(where, f"keep={c['keep']} but kind={c['kind']!r}")
            for k in ("must", "why"):
                v = c[k]
                if not isinstance(v, list) or not all(isinstance(s, str) and s.strip() for s in v):
                    err(where, f"{k} must be a list of non-empty strings")
                    continue
                if not c["keep"] and v:
                    err(where, f"{k} must be empty when keep is false")
                low = c["message"].lower() if isinstance(c["message"], str) else ""
                for s in v:
                    if "\n" in s:
                        err(where, f"{k} {s!r} spans lines")
                    if s.lower() not in low:
                        err(where, f"{k} {s!r} not in the message")
            if c["keep"] and not c["must"]:
                err(where, "a kept commit needs at least one must")
        if not path.endswith("maple_history.json"):
            for i, c in enumerate(r["commits"]):
                for ref in REVERTS.findall(c.get("message", "")):
                    if not any(s.startswith(ref) for s in shas):
                        err(f"{name}[{i}]", f"reverts unknown commit {ref}")
    return data["repos"]


def check_git(repos, errors, warnings):
    try:
        top = subprocess.run(["git", "-C", HERE, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, check=True).stdout.strip()
        raw = subprocess.run(["git", "-C", top, "log", "--format=%H%x00%B%x1e"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        warnings.append("git not available: maple_history.json not compared with git log")
        return
    log = {}
    for rec in raw.split("\x1e"):
        rec = rec.strip("\n")
        if rec:
            sha, body = rec.split("\x00", 1)
            log[sha] = body.strip()
    mine = {c["sha"]: c["message"] for r in repos for c in r["commits"]}
    extra = set(mine) - set(log)
    if extra:
        errors.append(f"maple_history.json: {len(extra)} commits not in git log, e.g. {sorted(extra)[0][:8]}")
    new = set(log) - set(mine)
    if new:
        warnings.append(f"maple_history.json: {len(new)} newer commits in git log are not labelled "
                        f"(re-run build_maple.py and label them)")
    for sha in set(mine) & set(log):
        if mine[sha] != log[sha]:
            errors.append(f"maple_history.json: message of {sha[:8]} differs from git log")


def report(path, repos):
    print(f"== {os.path.basename(path)}")
    total = keep = 0
    kinds, langs = collections.Counter(), collections.Counter()
    for r in repos:
        cs = r["commits"]
        k = sum(1 for c in cs if c["keep"])
        total, keep = total + len(cs), keep + k
        kc = collections.Counter(c["kind"] for c in cs if c["keep"])
        print(f"  {r['name']:<16} {len(cs):>4} commits  keep {k:>3} ({k / max(len(cs), 1):.0%})  "
              + " ".join(f"{kk}={v}" for kk, v in sorted(kc.items())))
        kinds.update(c["kind"] for c in cs)
        for c in cs:
            langs[(lang(c["message"]), c["keep"])] += 1
    print(f"  {'TOTAL':<16} {total:>4} commits  keep {keep:>3} ({keep / max(total, 1):.0%})")
    print("  kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    print("  language (keep/all): " + ", ".join(
        f"{l}={langs[(l, True)]}/{langs[(l, True)] + langs[(l, False)]}"
        for l in ("en", "zh", "mixed") if langs[(l, True)] + langs[(l, False)]))


def main():
    files = sys.argv[1:] or [os.path.join(HERE, "commits.json"), os.path.join(HERE, "maple_history.json")]
    errors, warnings = [], []
    for path in files:
        repos = check_file(path, errors, warnings)
        if path.endswith("maple_history.json"):
            check_git(repos, errors, warnings)
        if repos:
            report(path, repos)
    for w in warnings:
        print("warning:", w)
    for e in errors:
        print("ERROR:", e)
    print("FAILED" if errors else "OK", f"({len(errors)} errors, {len(warnings)} warnings)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
