"""Extraction benchmark: speed on a 5,000-line transcript, and quality on the labelled sessions.

    .venv/bin/python tests/benchmarks/bench_extraction.py [--lines 5000] [--repeat 3]

Not a pytest test (timings do not belong in unit tests). The transcript is built from the
labelled sessions in tests/data/sessions, repeated with fresh uuids and session ids and with the
numbers in every text shifted per round, so no two rounds say exactly the same thing. Embedding
is excluded: the store is opened without an embedder, so ingest deduplicates by keyword overlap
(the path a hook takes when the model is not loaded).

Reported:
  read + extract   transcript.read_new (JSON parsing, filtering, cursor) and extraction.extract
  + ingest         the same plus ingest.ingest into a fresh store (dedup, supersession, FTS writes)
  quality          precision and recall of the candidates against the labels, per set
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory import config as config_mod  # noqa: E402
from memory.extraction import (
    ingest,  # noqa: E402
    transcript,  # noqa: E402
)
from memory.extraction.heuristic import extract  # noqa: E402
from memory.store.memories import Store  # noqa: E402

SESSIONS = Path(__file__).resolve().parents[1] / "data" / "sessions"


def shifted(value, r: int):
    """`value` with every number in its strings moved by r and every uuid made new."""
    if isinstance(value, dict):
        return {k: (v if k == "timestamp" else shifted(v, r)) for k, v in value.items()}
    if isinstance(value, list):
        return [shifted(v, r) for v in value]
    if isinstance(value, str):
        if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", value):
            return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{value}-{r}"))
        return re.sub(r"\d+", lambda m: str(int(m.group(0)) + r), value) if r else value
    return value


def build_transcript(path: Path, lines: int) -> int:
    base = [
        json.loads(ln)
        for f in sorted(SESSIONS.glob("*.jsonl"))
        for ln in f.read_text(encoding="utf-8").splitlines()
        if ln.strip()
    ]
    written = 0
    with path.open("w", encoding="utf-8") as out:
        r = 0
        while written < lines:
            for obj in base:
                if written >= lines:
                    break
                obj = shifted(obj, r)
                out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
                written += 1
            r += 1
    return written


def quality(folder: Path) -> tuple[float, float, int, int]:
    tp = n = hit = total = 0
    for path in sorted(folder.glob("*.jsonl")):
        turns, _ = transcript.load_file(path)
        labels = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
        cands = extract(turns, scope="/bench")

        def ok(c, e):
            layers = e["layer"] if isinstance(e["layer"], list) else [e["layer"]]
            return c.layer in layers and all(p.casefold() in c.content.casefold() for p in e["must"])

        n += len(cands)
        tp += sum(any(ok(c, e) for e in labels["expected"]) for c in cands)
        total += len(labels["expected"])
        hit += sum(any(ok(c, e) for c in cands) for e in labels["expected"])
    return tp / max(1, n), hit / max(1, total), n, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of read + extract; the best is reported")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="maple-bench-extract-"))
    try:
        path = tmp / "transcript.jsonl"
        n = build_transcript(path, args.lines)
        size = path.stat().st_size
        cfg = config_mod.load(home=tmp / "home", env={})
        best = float("inf")
        turns: list = []
        cands: list = []
        for i in range(args.repeat):
            with Store.open(cfg, None, path=tmp / f"read{i}.db") as store:
                t0 = time.perf_counter()
                turns, stats = transcript.read_new(store, path)
                cands = extract(turns, scope="/bench/project")
                best = min(best, time.perf_counter() - t0)
        with Store.open(cfg, None, path=tmp / "ingest.db") as store:
            t0 = time.perf_counter()
            turns, stats = transcript.read_new(store, path)
            cands = extract(turns, scope="/bench/project")
            report = ingest.ingest(store, cands)
            full = time.perf_counter() - t0
            stored = store.count()
        print(f"transcript: {n} lines, {size / 1e6:.1f} MB, {len(turns)} turns, {len(cands)} candidates")
        print(f"read + extract:          {best:.3f} s  = {n / best:,.0f} lines/s (best of {args.repeat})")
        print(
            f"read + extract + ingest: {full:.3f} s  = {n / full:,.0f} lines/s "
            f"(no embedder; {report.summary()}; {stored} memories in the store)"
        )
        for name, folder in (
            ("labelled", SESSIONS),
            ("held-out 1", SESSIONS / "holdout"),
            ("held-out 2", SESSIONS / "holdout2"),
        ):
            if any(folder.glob("*.jsonl")):
                p, r, c, e = quality(folder)
                print(
                    f"quality ({name}, {len(list(folder.glob('*.jsonl')))} sessions): "
                    f"precision {p:.3f}, recall {r:.3f} ({c} candidates, {e} expected)"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
