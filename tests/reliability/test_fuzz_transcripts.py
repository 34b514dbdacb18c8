"""Transcript fuzzing: truncated, binary, deeply nested, oversized, unknown and incomplete lines.

Every bad line is skipped and counted (memory.transcript's stats), never fatal: the good lines
around it are still harvested, by the library and through the Stop hook. Memory stays bounded by
the longest line read, not by the size of the transcript.
"""

from __future__ import annotations

import json
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from memory import config as config_mod
from memory.extraction import harvest, transcript
from memory.store import Store
from reliability import fuzz, harness

BAD = ("truncated", "binary", "missing_field", "not_object", "deep")


def good_line(text: str, n: int) -> bytes:
    return harness.transcript_line("user", text, session="fuzz", cwd="/work/fuzz", n=n).encode()


@st.composite
def lines(draw: Any, huge: bool = False) -> tuple[bytes, str]:
    kind = draw(st.sampled_from(["turn", "turn", *BAD, "unknown_type", "blank"] + (["huge"] if huge else [])))
    n = draw(st.integers(0, 10**6))
    if kind == "turn":
        return good_line(draw(fuzz.hostile_text(200)), n), kind
    if kind == "huge":
        return good_line("x" * draw(st.integers(500_000, 3_000_000)), n), "turn"
    if kind == "truncated":
        whole = good_line(draw(fuzz.hostile_text(60)), n)
        return whole[: draw(st.integers(1, len(whole) - 2))], kind
    if kind == "binary":
        junk = draw(st.binary(max_size=400)).replace(b"\n", b"")
        return b"\xff" + junk, kind
    if kind == "missing_field":
        return json.dumps(
            draw(
                st.sampled_from(
                    [
                        {"type": "user"},
                        {"type": "assistant"},
                        {"type": "user", "message": 5},
                        {"type": "assistant", "message": {"content": 5}},
                        {"type": "user", "message": {"content": None}},
                        {"type": "user", "message": "just a string"},
                    ]
                )
            )
        ).encode(), kind
    if kind == "not_object":
        return draw(st.sampled_from([b"[1, 2, 3]", b"42", b'"a string"', b"null", b"true"])), kind
    if kind == "deep":
        depth = draw(st.integers(5_000, 200_000))
        return draw(
            st.sampled_from(
                [
                    b"[" * depth + b"]" * depth,
                    b'{"type": "user", "message": {"content": ' + b"[" * depth + b"]" * depth + b"}}",
                ]
            )
        ), kind
    if kind == "unknown_type":
        name = draw(
            st.one_of(
                st.text(min_size=1, max_size=60).filter(lambda t: t not in ("user", "assistant")),
                st.sampled_from(["summary", "system", "progress", "file-history-snapshot"]),
            )
        )
        return json.dumps({"type": name, "uuid": "x", "whatever": [1, {"a": None}]}).encode(), kind
    return draw(st.sampled_from([b"", b"   ", b"\t"])), "blank"


def expected(batch: list[tuple[bytes, str]]) -> dict[str, int]:
    counts = {k: sum(kind == k for _, kind in batch) for k in (*BAD, "unknown_type", "turn", "blank")}
    return {
        "lines": len(batch) - counts["blank"],
        "malformed": sum(counts[k] for k in BAD),
        "unknown": counts["unknown_type"],
        "turns_at_most": counts["turn"],
    }


def run_transcript_fuzz(tmp_path: Path, examples: int, seed: int, huge: bool = False) -> dict[str, Any]:
    """`examples` fuzzed batches through parse_lines, every fifth also as a file through harvest."""
    tally = {"batches": 0, "lines": 0, "malformed": 0, "unknown_skipped": 0, "harvested_files": 0, "problems": []}
    cfg = config_mod.load(home=tmp_path / "home", env={})
    store = Store.open(cfg, None, vectors=False)
    counter = iter(range(10**9))

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.lists(lines(huge), min_size=1, max_size=25))
    def one(batch: list[tuple[bytes, str]]) -> None:
        want = expected(batch)
        stats = transcript._new_stats()
        turns = transcript.parse_lines([b for b, _ in batch], stats)
        got = {
            "lines": stats["lines"],
            "malformed": stats["malformed"],
            "unknown": sum(v for k, v in stats["skipped"].items() if k.startswith("type:")),
        }
        tally["batches"] += 1
        tally["lines"] += stats["lines"]
        tally["malformed"] += stats["malformed"]
        tally["unknown_skipped"] += got["unknown"]
        if {k: got[k] for k in got} != {k: want[k] for k in got} or len(turns) > want["turns_at_most"]:
            tally["problems"].append({"want": want, "got": got, "turns": len(turns), "kinds": [k for _, k in batch]})
        n = next(counter)
        if n % 5 == 0:  # the same lines as a real file, through the whole harvest path
            path = tmp_path / f"t{n}.jsonl"
            fact_token, fact = harness.harvest_fact(random.Random(n))
            path.write_bytes(b"\n".join([b for b, _ in batch] + [good_line(fact, -1)]) + b"\n")
            with store.tx.atomic():
                result = harvest.harvest(store, str(path), scope="/work/fuzz")
            again = transcript.read_new(store, str(path))[0]
            rows = store.conn.execute(
                "SELECT count(*) FROM memories WHERE content LIKE ?", (f"%{fact_token}%",)
            ).fetchone()[0]
            tally["harvested_files"] += 1
            if rows != 1 or again or result["read"]["bytes_read"] != path.stat().st_size:
                tally["problems"].append(
                    {
                        "file": str(path),
                        "fact_rows": rows,
                        "read_again": len(again),
                        "bytes_read": result["read"]["bytes_read"],
                        "size": path.stat().st_size,
                    }
                )

    try:
        one()
    finally:
        store.close()
    return tally


@pytest.mark.short
def test_three_hundred_fuzzed_transcripts_skip_and_count_every_bad_line_and_keep_the_good_ones(tmp_path):
    tally = run_transcript_fuzz(tmp_path, 300, seed=3)
    harness.report("fuzz_transcripts_short", tally)
    assert tally["problems"] == [], tally["problems"][:5]
    assert tally["malformed"] > 100 and tally["unknown_skipped"] > 20 and tally["harvested_files"] == 60


@pytest.mark.slow
def test_three_thousand_fuzzed_transcripts_with_megabyte_lines_skip_and_count_every_bad_line(tmp_path):
    tally = run_transcript_fuzz(tmp_path, 3000, seed=20261204, huge=True)
    harness.report("fuzz_transcripts", tally)
    assert tally["problems"] == [], tally["problems"][:5]


def _peak_of_reading(store: Store, path: Path) -> tuple[dict, int]:
    tracemalloc.start()
    try:
        with store.tx.atomic():
            result = harvest.harvest(store, str(path), scope="/work/fuzz")
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _big_transcript(path: Path, lines: int, line_bytes: int, rng: random.Random) -> list[str]:
    tokens = []
    with path.open("wb") as f:
        for n in range(lines):
            f.write(good_line("y" * line_bytes, n) + b"\n")
            token, fact = harness.harvest_fact(rng)
            tokens.append(token)
            f.write(good_line(fact, n) + b"\n")
    return tokens


def test_ten_megabyte_lines_are_skipped_and_counted_and_the_facts_around_them_harvested(tmp_path):
    store = Store.open(config_mod.load(home=tmp_path / "home", env={}), None, vectors=False)
    path = tmp_path / "big.jsonl"
    rng = random.Random(9)
    token, fact = harness.harvest_fact(rng)
    with path.open("wb") as f:
        f.write(good_line("z" * 10_000_000, 0) + b"\n")  # a 10 MB prompt (a pasted file)
        f.write(b"\xff" + rng.randbytes(10_000_000).replace(b"\n", b" ") + b"\n")  # 10 MB of binary junk
        f.write(good_line(fact, 1) + b"\n")
        f.write(b"[" * 5_000_000 + b"]" * 5_000_000 + b"\n")  # 10 MB of nesting
    result, peak = _peak_of_reading(store, path)
    rows = store.conn.execute("SELECT count(*) FROM memories WHERE content LIKE ?", (f"%{token}%",)).fetchone()[0]
    store.close()
    harness.report(
        "transcript_memory_10mb",
        {"file_mb": round(path.stat().st_size / 1e6, 1), "peak_mb": round(peak / 1e6, 1), "read": result["read"]},
    )
    assert rows == 1
    assert result["read"]["skipped"].get("oversized") == 3
    assert result["read"]["bytes_read"] == path.stat().st_size
    assert peak < 4 * transcript.MAX_LINE_BYTES, f"peak {peak / 1e6:.1f} MB"  # a constant, whatever the file size


@pytest.mark.parametrize("lines", [pytest.param(6, marks=pytest.mark.short), pytest.param(60, marks=pytest.mark.slow)])
def test_memory_while_harvesting_is_bounded_by_the_longest_line_not_the_transcript(tmp_path, lines):
    store = Store.open(config_mod.load(home=tmp_path / "home", env={}), None, vectors=False)
    path = tmp_path / "long.jsonl"
    tokens = _big_transcript(path, lines, 5_000_000, random.Random(lines))
    result, peak = _peak_of_reading(store, path)
    stored = [r[0] for r in store.conn.execute("SELECT content FROM memories")]
    store.close()
    size = path.stat().st_size
    harness.report(
        f"transcript_memory_{lines}",
        {"file_mb": round(size / 1e6, 1), "peak_mb": round(peak / 1e6, 1), "longest_line_mb": 5.0},
    )
    assert all(sum(t in c for c in stored) == 1 for t in tokens)
    assert peak < 4 * 5_000_000 + 8_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB transcript"


def test_a_fuzzed_transcript_through_the_stop_hook_is_harvested_and_its_job_finishes(tmp_path, home):
    rng = random.Random(21)
    project = tmp_path / "project"
    project.mkdir()
    token, fact = harness.harvest_fact(rng)
    path = tmp_path / "session.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                b'{"type": "user", "message": {"content": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
                b"\xff\xfe binary \x00 junk",
                b'{"type": "user", "message": {"role": "user", "content": "trun',
                b'{"type": "mystery-event", "data": 1}',
                b'{"type": "assistant"}',
                b"[1, 2]",
                harness.transcript_line("user", fact, session="s", cwd=str(project), n=1).encode(),
            ]
        )
        + b"\n"
    )
    r = harness.run_hook(
        "stop",
        {
            "hook_event_name": "Stop",
            "session_id": "s",
            "cwd": str(project),
            "transcript_path": str(path),
            "stop_hook_active": False,
        },
        home,
        cwd=project,
    )
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    harness.settle_harvests(home)
    with Store.open(config_mod.load(home=home, env={}), None, vectors=False) as s:
        rows = s.conn.execute("SELECT count(*) FROM memories WHERE content LIKE ?", (f"%{token}%",)).fetchone()[0]
        jobs = s.conn.execute("SELECT status, last_error FROM jobs").fetchall()
    assert rows == 1
    assert all(status == "done" for status, _ in jobs), jobs
