"""The whole reliability and security suite in one command, with a summary table.

    .venv/bin/python tests/benchmarks/bench_reliability.py            # full: 16 x 300 load, 200 kills, 5000 tool calls, ...
    .venv/bin/python tests/benchmarks/bench_reliability.py --short    # the versions .ci/run runs every time
    .venv/bin/python tests/benchmarks/bench_reliability.py --table DIR   # print the table of an earlier run

It runs tests/reliability with pytest (full: every test but the short variants; --short: the
default run's selection), collects the figures each part records (reliability/harness.report)
and every test's outcome, and prints: load held, faults survived, inputs tried, nothing lost or
leaked. Exit status: pytest's. Slow: the full run takes minutes on two cores; run it once, not
in a loop.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PARTS = [  # (module, row name)
    ("test_load", "load"),
    ("test_kills", "kill -9"),
    ("test_faults", "faults"),
    ("test_fuzz_tools", "tool fuzzing"),
    ("test_fuzz_transcripts", "transcript fuzzing"),
    ("test_isolation", "isolation"),
    ("test_secrets", "secrets"),
    ("test_files", "files, paths, network"),
    ("test_framing", "framing"),
]


def load_reports(folder: Path) -> tuple[dict[str, Any], list[dict]]:
    reports = {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}
    outcomes_file = folder / "outcomes.jsonl"
    outcomes = [json.loads(line) for line in outcomes_file.read_text().splitlines()] if outcomes_file.exists() else []
    return reports, outcomes


def pick(reports: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The full run's figures for a part, else the short run's."""
    return reports.get(name) or reports.get(f"{name}_short")


def verdict(outcomes: list[dict], module: str) -> str:
    mine = [o for o in outcomes if f"/{module}.py::" in o["test"]]
    counts: dict[str, int] = {}
    for o in mine:
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    return ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "not run"


def rows(reports: dict[str, Any], outcomes: list[dict]) -> list[tuple[str, str, str]]:
    out = []
    r = pick(reports, "load")
    if r:
        lat = ", ".join(f"{op} {v['p95']:.0f}" for op, v in r["latency_ms"].items())
        out.append(
            (
                "load",
                f"{r['processes']} processes x {r['ops_per_process']} ops ({r['ops_by_kind'].get('mcp', 0)} via "
                f"server sessions, {r['ops_by_kind'].get('lib', 0)} via hook/library processes); "
                f"{r['ops_done']} ops in {r['wall_seconds']} s = {r['throughput_ops_per_s']} ops/s; "
                f"p95 ms: {lat}; {r['writes_checked']} writes checked against the ledgers",
                f"lost {len(r['lost'])}, duplicated {len(r['duplicated'])}, wrong state {len(r['wrong_state'])}, "
                f"unaccounted {len(r['unexpected_memories'])}, errors {len(r['errors'])} (lock errors "
                f"{len(r['lock_errors'])}), integrity {r['database'].get('integrity_check')}, "
                f"invariant problems {len(r['database']['problems'])}",
            )
        )
    r = pick(reports, "kills")
    if r:
        modes = ", ".join(f"{m} {n}" for m, n in r["by_mode"].items())
        out.append(
            (
                "kill -9",
                f"{r['runs']} write runs ({modes}): {r['killed_while_writing']} killed mid-write, "
                f"{r['killed_while_starting']} while starting, {r['finished_before_the_kill']} finished first; "
                f"{r['memories_at_end']} memories at the end",
                f"{r['survived']}/{r['runs']} left a database that opens, passes integrity_check and has no "
                f"partial memory",
            )
        )
    out.append(
        (
            "faults",
            "full disk (filling up; full at start), read-only home, database locked by another process "
            "(sessions before and during; the sleep-time worker), corrupt file (garbage; damaged pages), "
            "missing model, worker killed mid-job, first-use race",
            verdict(outcomes, "test_faults"),
        )
    )
    r = pick(reports, "fuzz_tools")
    if r:
        b = r["by_bucket"]
        out.append(
            (
                "tool fuzzing",
                f"{r['calls']} calls on {len(r['tools'])} tools (sane {b['sane']}, schema-valid "
                f"{b['valid']}, schema-invalid {b['invalid']}); {r['tool_errors']} tool errors, "
                f"{r['coerced']} invalid calls coerced by the SDK's lenient parsing",
                f"{len(r['failures'])} failures (crash, opaque error, SQLite text, refused sane call); "
                f"server alive after: {r['alive_after']}",
            )
        )
    r = pick(reports, "fuzz_transcripts")
    if r:
        mem = [reports[k] for k in sorted(reports) if k.startswith("transcript_memory_")]
        peaks = "; ".join(f"{m['file_mb']} MB file -> {m['peak_mb']} MB peak heap" for m in mem)
        out.append(
            (
                "transcript fuzzing",
                f"{r['batches']} fuzzed batches, {r['lines']} lines ({r['malformed']} "
                f"malformed, {r['unknown_skipped']} unknown types), {r['harvested_files']} "
                f"files harvested; {peaks}",
                f"{len(r['problems'])} miscounted or lost; {verdict(outcomes, 'test_fuzz_transcripts')}",
            )
        )
    r = pick(reports, "isolation")
    if r:
        out.append(
            (
                "isolation",
                f"{r['projects']} projects, {r['memories']} memories, {r['tool_calls']} probing "
                f"tool calls on {len(r.get('tools', []))} tools + hooks + CLI",
                f"{len(r['leaks'])} leaks, {len(r['changed_elsewhere'])} foreign changes",
            )
        )
    r = reports.get("secrets")
    if r:
        debug = reports.get("secrets_debug_log")
        out.append(
            (
                "secrets",
                f"{r['entries']} corpus secrets x (memory_store, memory_update {r['updated']}, "
                f"decision_record {r['decisions']}, queries {r['queries']}, import, add, hook harvest "
                f"{r['harvested']} memories); scanned: {', '.join(r['places_scanned'])}, FTS vocabulary"
                + (", server log at DEBUG" if debug else ""),
                f"{sum(len(v) for v in r['leaks'].values())} leaks, {len(r['fts_terms_from_secrets'])} secret "
                f"terms indexed" + (f", {len(debug['leaks'])} in the DEBUG log" if debug else ""),
            )
        )
    modes = reports.get("file_modes")
    out.append(
        (
            "files, paths, network",
            ("modes: " + ", ".join(f"{k} {v[2:]}" for k, v in modes.items()) + "; " if modes else "")
            + "export/import/restore path refusals; network sockets "
            f"the server listens on: {len(reports.get('listeners', {}).get('server', []))}",
            verdict(outcomes, "test_files"),
        )
    )
    r = reports.get("framing")
    if r:
        out.append(
            (
                "framing",
                f"{r['attacks']} injection attempts on {len(r['shown'])} surfacing paths",
                verdict(outcomes, "test_framing"),
            )
        )
    return out


def print_table(folder: Path, header: str) -> int:
    reports, outcomes = load_reports(folder)
    print(header)
    table = rows(reports, outcomes)
    width = max(len(name) for name, _, _ in table) if table else 10
    for name, tried, result in table:
        print(f"\n{name.ljust(width)}  tried:  {tried}")
        print(f"{''.ljust(width)}  result: {result}")
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    print("\ntests: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    for module, name in PARTS:
        print(f"  {name.ljust(width)}  {verdict(outcomes, module)}")
    for o in outcomes:
        if o["outcome"] in ("failed", "xfailed", "xpassed") or (o["outcome"] == "skipped" and o["reason"]):
            print(f"  {o['outcome'].upper()} {o['test']}: {o['reason'][-300:]}")
    return 0 if not counts.get("failed") else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--short", action="store_true", help="the quick versions (what the default pytest run does)")
    p.add_argument("--table", metavar="DIR", help="only print the table of an earlier run's report folder")
    p.add_argument("--keep", metavar="DIR", help="write the reports to DIR (default: a temporary folder)")
    a = p.parse_args()
    if a.table:
        return print_table(Path(a.table), f"MAPLE reliability (from {a.table})")
    folder = Path(a.keep or tempfile.mkdtemp(prefix="maple-reliability-"))
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json*"):
        old.unlink()
    marker = "not slow" if a.short else "not short"
    load_before = os.getloadavg()
    started = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "tests/reliability",
        "-m",
        marker,
        "-o",
        "addopts=-q",
        "-p",
        "no:cacheprovider",
    ]
    env = {**os.environ, "MAPLE_RELIABILITY_REPORT": str(folder)}
    code = subprocess.run(cmd, cwd=ROOT, env=env).returncode
    seconds = time.perf_counter() - started
    header = (
        f"\nMAPLE reliability ({'short' if a.short else 'full'}): {' '.join(cmd[1:])}\n"
        f"load average at start {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f} on "
        f"{os.cpu_count()} CPUs, took {seconds / 60:.1f} min, reports in {folder}"
    )
    table_code = print_table(folder, header)
    return code or table_code


if __name__ == "__main__":
    sys.exit(main())
