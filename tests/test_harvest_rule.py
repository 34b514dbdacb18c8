"""One harvest rule: `maple-memory extract`, the Stop hook (with the engine off and on) and a
backfill of queued harvest jobs turn the same transcripts into the same store: the same
contents, layers and categories, the same supersessions (memory.extraction.harvest.harvest_turns).
Real processes, real SQLite, the test embedder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory import remote
from memory.store import Store, db, jobs

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"
SESSIONS = ROOT / "tests" / "data" / "sessions"
# A fact, then its correction in a later session; a rule, then the same rule reworded (a merge
# only a comparison by meaning makes); decisions, experiences and a Chinese supersession from the
# labelled sessions.
STAGING = [
    "The staging Postgres database listens on port 5433; connect with psql -p 5433.",
    "Actually the staging Postgres database listens on port 6543 now, not 5433.",
    "Always run the integration tests with TZ=UTC before pushing to main.",
    "Always run the integration tests with TZ=UTC before you push to main.",
]
LABELLED = ["en01_invoicer_uv_postgres", "en04_scheduler_flaky", "zh07_pipeline_supersede"]


def env_for(home: Path, resident: str = "0") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_HOOK_RESIDENT_MINUTES=resident)
    return env


def transcripts(folder: Path, project: Path) -> list[Path]:
    """The sessions in the order they happened, every one moved into `project`."""
    out = []
    for name in LABELLED:
        lines = []
        for raw in (SESSIONS / f"{name}.jsonl").read_text().splitlines():
            obj = json.loads(raw)
            if "cwd" in obj:
                obj["cwd"] = str(project)
            lines.append(json.dumps(obj, ensure_ascii=False))
        out.append(folder / f"{name}.jsonl")
        out[-1].write_text("\n".join(lines) + "\n")
    for n, text in enumerate(STAGING):
        line = {
            "type": "user",
            "origin": {"kind": "human"},
            "message": {"role": "user", "content": text},
            "uuid": f"staging-{n}",
            "sessionId": f"staging-{n}",
            "timestamp": f"2026-12-{n + 1:02d}T10:00:00Z",
            "cwd": str(project),
        }
        out.append(folder / f"staging-{n}.jsonl")
        out[-1].write_text(json.dumps(line) + "\n")
    return out


def snapshot(home: Path) -> list[tuple[Any, ...]]:
    """Every memory, current or not, as what it says and what became of it (ids left out)."""
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        rows = conn.execute(
            "SELECT m.content, m.layer, m.category, m.parent_id IS NOT NULL, m.deleted_at IS NOT NULL, "
            "m.valid_to IS NOT NULL, n.content FROM memories m LEFT JOIN memories n ON n.id = m.superseded_by"
        ).fetchall()
    finally:
        conn.close()
    return sorted(tuple(r) for r in rows)


def run(args: list[str], home: Path, resident: str = "0", stdin: bytes = b"", cwd: Path | None = None) -> None:
    done = subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        env={**env_for(home, resident), "PYTHONPATH": str(ROOT)},
        cwd=str(cwd or home.parent),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()


def stop(home: Path, transcript: Path, project: Path, resident: str = "0") -> None:
    payload = {"hook_event_name": "Stop", "session_id": "s", "transcript_path": str(transcript), "cwd": str(project)}
    run([str(RUN), "stop"], home, resident, json.dumps(payload).encode(), cwd=project)


def by_extract(home: Path, files: list[Path], project: Path) -> None:
    for f in files:
        run(["-m", "memory.cli", "extract", str(f)], home, cwd=project)


def by_hooks(home: Path, files: list[Path], project: Path) -> None:
    for f in files:
        stop(home, f, project)
        run([str(RUN), "drain", "--wait"], home)  # one session harvested before the next begins


def by_backfill(home: Path, files: list[Path], project: Path) -> None:
    """Harvest jobs queued in the database (as a backfill of old transcripts queues them), run by
    the worker's handlers."""
    for f in files:
        with Store.open(config_mod.load(home=home), None) as s:
            jobs.enqueue(s, "harvest", {"path": str(f), "scope": str(project)}, dedup_key=f"harvest:{f}")
        run([str(RUN), "drain", "--wait"], home)


def harvested(home: Path, n: int) -> bool:
    if not (home / "memory.db").exists():
        return False
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        done, waiting = conn.execute(
            "SELECT sum(status = 'done'), sum(status != 'done') FROM jobs WHERE kind = 'harvest'"
        ).fetchone()
    except db.DatabaseError:  # created a moment ago, its tables not yet
        return False
    finally:
        conn.close()
    return (done or 0) >= n and not waiting and not (home / "harvest-spool.jsonl").exists()


def by_engine(home: Path, files: list[Path], project: Path) -> None:
    """The Stop hook with the engine on: the engine harvests, with its model."""
    try:
        for n, f in enumerate(files, 1):
            stop(home, f, project, resident="1")
            deadline = time.monotonic() + 120
            while not harvested(home, n):
                assert time.monotonic() < deadline, "the engine did not harvest the session"
                time.sleep(0.1)
    finally:
        remote.stop(home, home / "memory.db")


@pytest.fixture
def sessions(tmp_path: Path) -> tuple[Path, list[Path]]:
    project = tmp_path / "p"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    folder = tmp_path / "t"
    folder.mkdir()
    return project, transcripts(folder, project)


def test_extract_the_hooks_a_backfill_and_the_engine_store_the_same_transcripts_identically(tmp_path, sessions):
    project, files = sessions
    stores = {}
    for name, path in (("extract", by_extract), ("hooks", by_hooks), ("backfill", by_backfill), ("engine", by_engine)):
        home = tmp_path / name[:2]
        path(home, files, project)
        stores[name] = snapshot(home)
    assert stores["extract"], "nothing was harvested"
    superseded = [r for r in stores["extract"] if r[6] is not None]
    assert any("6543" in r[6] and "5433" in r[0] for r in superseded)  # the correction replaced the old port
    assert sum("TZ=UTC before" in r[0] for r in stores["extract"]) == 1  # the reworded rule merged
    for name in ("hooks", "backfill", "engine"):
        assert stores[name] == stores["extract"], name


# -- the configured LLM: extract uses it as the hooks' harvest does ----------------------------------

LLM_MEMORY = "Release builds strip debug symbols to keep the binary small."


def llm_home(home: Path, url: str) -> None:
    home.mkdir(parents=True, mode=0o700)
    settings = {"llm_provider": "openai", "llm_base_url": url, "llm_api_key_env": "", "llm_model": "m"}
    (home / "config.json").write_text(json.dumps(settings))


def test_extract_and_the_stop_hook_both_use_the_configured_llm(tmp_path, sessions):
    from test_llm import FakeServer

    project, files = sessions
    server = FakeServer()
    try:
        answer = {"memories": [{"content": LLM_MEMORY, "layer": "fact", "category": "config", "importance": 3}]}
        for name, harvest in (("extract", by_extract), ("hooks", by_hooks)):
            home = tmp_path / f"llm-{name}"
            llm_home(home, server.url)
            calls = len(server.requests)
            server.openai(answer)
            harvest(home, files[:1], project)
            assert len(server.requests) == calls + 1, name  # one call for the one session
            assert LLM_MEMORY in [r[0] for r in snapshot(home)], name
        home = tmp_path / "llm-dry"
        llm_home(home, server.url)
        calls = len(server.requests)
        run(["-m", "memory.cli", "extract", "--dry-run", str(files[0])], home, cwd=project)
        assert len(server.requests) == calls  # a dry run spends no tokens
    finally:
        server.close()
