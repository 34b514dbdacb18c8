"""`maple-memory import` is idempotent and resumable: kill -9 at random points of a 20,000-line
export, run it again, and the store is the one a single clean run gives, field for field (state,
archive flags, pins, entity links, chunks, supersession, versions, vectors)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import Store

ROOT = Path(__file__).resolve().parent.parent
# The case is a 20,000-line export (MAPLE_TEST_IMPORT_LINES=20000: 2-6 minutes on two
# busy cores); the default run uses 5,000 lines, still many batches of 256, so kills land mid-file.
LINES = int(os.environ.get("MAPLE_TEST_IMPORT_LINES", "5000"))
KILLS = 3  # kill points per test run, at random moments of a run
NAMES = [("Alice", "person"), ("Bob", "person"), ("SQLite", "tool"), ("Postgres", "tool"), ("parser.py", "file")]
WORDS = "deploy cache queue index shard retry vector token build release branch lock schema".split()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def generate(path: Path, n: int = LINES, seed: int = 17) -> dict[str, int]:
    """A synthetic export of `n` lines in MAPLE's export format; returns what it holds."""
    rng = random.Random(seed)
    scopes = ["/work/project-a", "/work/project-b", "global"]
    counts = {"archived": 0, "superseded": 0, "pinned": 0, "chunks": 0, "repeats": 0}
    lines: list[str] = []
    i = 0
    base = 1_700_000_000.0
    while i < n:
        i += 1
        t = base + i * 37.25
        scope = scopes[i % 3]
        rec: dict[str, Any] = {
            "id": i,
            "content": f"Memory {i}: {' '.join(rng.sample(WORDS, 4))} noted by {NAMES[i % 5][0]}",
            "layer": ("fact", "experience", "decision")[i % 3],
            "category": rng.choice(["build", "ops", "preference"]),
            "subject": rng.choice([None, "queue", "release"]),
            "scope": scope,
            "importance": rng.randint(1, 5),
            "tags": rng.sample(WORDS, rng.randint(0, 2)),
            "pinned": rng.random() < 0.05,
            "source": "import",
            "occurred_at": iso(t - 3600),
            "created_at": iso(t),
            "updated_at": iso(t + 60),
            "valid_from": iso(t - 3600),
            "last_activated_at": iso(t + 120) if rng.random() < 0.3 else None,
            "activation_count": rng.randint(0, 9),
            "metadata": {"n": i} if rng.random() < 0.2 else {},
            "entities": [list(NAMES[i % 5])] if rng.random() < 0.7 else [],
        }
        if rng.random() < 0.15:
            rec["deleted_at"] = iso(t + 300)
            counts["archived"] += 1
        if rng.random() < 0.05 and i + 40 <= n:
            rec["superseded_by"] = i + rng.randint(1, 40)  # a later line: set once that one is stored
            rec["valid_to"] = iso(t + 200)
            counts["superseded"] += 1
        if i > 100 and rng.random() < 0.01:  # the same text again in the same scope: one memory
            again = json.loads(lines[-99])
            rec["content"], rec["scope"] = again["content"], again["scope"]
            counts["repeats"] += 1
        counts["pinned"] += rec["pinned"]
        lines.append(json.dumps(rec))
        if i % 250 == 0 and i + 2 <= n:  # a long memory's chunks follow it
            for k in range(2):
                i += 1
                chunk = dict(rec, id=i, content=f"{rec['content']} (part {k})", parent_id=rec["id"], chunk_index=k)
                chunk.pop("superseded_by", None)
                chunk["entities"] = []
                if k and rng.random() < 0.5:  # a live chunk of an archived memory: each line keeps its own state
                    chunk.pop("deleted_at", None)
                lines.append(json.dumps(chunk))
                counts["chunks"] += 1
    path.write_text("\n".join(lines[:n]) + "\n")
    return counts


def canonical(home: Path) -> dict[str, Any]:
    """Everything an import writes, with ids replaced by what the rows are (ids differ between runs)."""
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        c = s.conn
        cols = [r[1] for r in c.execute("PRAGMA table_info(memories)")]
        rows = [dict(zip(cols, r)) for r in c.execute("SELECT * FROM memories ORDER BY id")]
        # What a row is, whatever its id: scope, text, archived time, and its parent's text for a chunk.
        own = {r["id"]: (r["scope"], r["content_hash"], r["deleted_at"]) for r in rows}
        key = {r["id"]: (*own[r["id"]], own.get(r["parent_id"])) for r in rows}
        assert len(set(key.values())) == len(key)  # the keys tell every row apart
        memories = sorted(
            (
                tuple((k, key.get(v) if k in ("parent_id", "superseded_by") else v) for k, v in r.items() if k != "id")
                for r in rows
            ),
            key=repr,
        )
        links = sorted(
            (
                (key[m], name, kind, scope, role)
                for m, name, kind, scope, role in c.execute(
                    "SELECT l.memory_id, e.name, e.kind, e.scope, l.role FROM memory_entities l "
                    "JOIN entities e ON e.id = l.entity_id"
                )
            ),
            key=repr,
        )
        versions = sorted(
            (
                (key[m], reason, content)
                for m, reason, content in c.execute("SELECT memory_id, reason, content FROM memory_versions")
            ),
            key=repr,
        )
        vectors = sorted((key[r[0]] for r in c.execute("SELECT rowid FROM memory_vec")), key=repr)
        fts = c.execute("SELECT count(*) FROM memory_fts").fetchone()[0]
        assert s.integrity()["ok"]
    return {"memories": memories, "links": links, "versions": versions, "vectors": vectors, "fts": fts}


def importer(home: Path, src: Path, project: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CLAUDE_PROJECT_DIR")}
    env.update(
        MAPLE_HOME=str(home),
        MAPLE_MODEL="hash-64",
        MAPLE_HOOK_RESIDENT_MINUTES="0",
        PYTHONPATH=str(ROOT),
        CLAUDE_PROJECT_DIR=str(project),
    )
    return subprocess.Popen(
        [sys.executable, "-m", "memory.cli", "--json", "import", str(src)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def run_to_end(home: Path, src: Path, project: Path) -> dict[str, Any]:
    proc = importer(home, src, project)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)


def memory_count(home: Path) -> int:
    db = home / "memory.db"
    if not db.exists():
        return 0
    with Store.open(config_mod.load(home=home), None) as s:
        return s.conn.execute("SELECT count(*) FROM memories").fetchone()[0]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any], float]:
    """The generated export, and the store one clean run makes of it (with how long it took)."""
    tmp = tmp_path_factory.mktemp("import-resume")
    src, project = tmp / "export.jsonl", tmp / "project"
    project.mkdir()
    counts = generate(src)
    assert all(counts[k] > 0 for k in counts), counts
    start = time.monotonic()
    report = run_to_end(tmp / "clean", src, project)
    took = time.monotonic() - start
    assert report["rejected"] == 0 and report["imported"] + report["duplicates"] == LINES
    return src, project, canonical(tmp / "clean"), took


def test_a_clean_import_keeps_archive_flags_supersession_pins_and_chunks(export):
    _, _, clean, _ = export
    fields = [dict(m) for m in clean["memories"]]
    assert sum(f["deleted_at"] is not None for f in fields) > LINES // 10
    assert sum(f["superseded_by"] is not None for f in fields) > LINES // 40
    assert sum(f["pinned"] for f in fields) > LINES // 40
    assert sum(f["parent_id"] is not None for f in fields) > LINES // 200
    assert clean["versions"] == []  # restoring a link is not an edit
    assert len(clean["vectors"]) == len(fields) == clean["fts"]


def test_an_import_killed_at_random_points_then_run_again_gives_the_clean_store(export, tmp_path):
    src, project, clean, took = export
    rng = random.Random()
    survived, partial = 0, 0
    for n in range(KILLS):
        home = tmp_path / f"killed-{n}"
        proc = importer(home, src, project)
        time.sleep(rng.uniform(0.15, 0.9) * took)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        left = memory_count(home)
        partial += 0 < left < len(clean["memories"])
        if rng.random() < 0.5:  # sometimes killed twice before the run that finishes
            proc = importer(home, src, project)
            time.sleep(rng.uniform(0.05, 0.5) * took)
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
        run_to_end(home, src, project)
        assert canonical(home) == clean, f"kill {n} after {left} memories"
        survived += 1
        if n == 0:  # and once converged, running it yet again changes nothing
            assert run_to_end(home, src, project)["imported"] == 0
            assert canonical(home) == clean
    assert survived == KILLS
    print(f"kills survived: {survived}, of which part-way through the memories: {partial}")
