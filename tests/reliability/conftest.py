"""The reliability suite's pytest wiring: the `short` marker and the outcome record.

Each sized part has two tests: a short one (marked `short`, in the default run and `.ci/run`)
and the full one (marked `slow`). `tests/benchmarks/bench_reliability.py` runs everything but
the short ones and prints the summary table from what the tests record (harness.report) and
from the outcome of every test (recorded here when MAPLE_RELIABILITY_REPORT is set).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "short: the quick version of a sized part (the full one is marked slow)")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    folder = os.environ.get("MAPLE_RELIABILITY_REPORT")
    if not folder or "reliability" not in report.nodeid:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        reason = ""
        if report.skipped and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2])
        elif report.failed:
            reason = str(report.longrepr)[-1500:]
        outcome = report.outcome
        if hasattr(report, "wasxfail"):  # a known bug documented by a strict xfail, not a skip
            outcome, reason = ("xfailed", str(report.wasxfail)) if report.skipped else ("xpassed", "")
        line = {"test": report.nodeid, "outcome": outcome, "seconds": round(report.duration, 2), "reason": reason}
        Path(folder).mkdir(parents=True, exist_ok=True)
        with (Path(folder) / "outcomes.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
