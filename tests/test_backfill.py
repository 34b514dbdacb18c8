"""`maple-memory backfill`: past Claude Code sessions found by their own cwd, harvested oldest first
with the one harvest rule and its ledger (memory.app.backfill), resumable, bad input skipped with
a reason; `--git` keeps explained commits. Real databases, real files, the test embedder; the
hook and the crash tests run real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import project, run, run_json  # noqa: F401 - project: the autouse fixture
from test_harvest_rule import snapshot

from memory import config as config_mod
from memory.app import Memories, backfill
from memory.extraction import gitlog
from memory.scope import project_scope
from memory.store import Store, db

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"
OLD = time.time() - 3 * 86400  # written three days ago: no session of it can still be running

PORT_OLD = "The staging Postgres database listens on port 5433; connect with psql -p 5433."
PORT_NEW = "Actually the staging Postgres database listens on port 6543 now, not 5433."
RULE = "Always run the integration tests with TZ=UTC before pushing to main."
DEPLOY = "We deploy the web app to Fly.io from the main branch only."


@pytest.fixture
def claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Claude Code configuration folder of this test's own ($CLAUDE_CONFIG_DIR)."""
    path = tmp_path / "claude-config"
    (path / "projects").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(path))
    return path


def line(text: str, cwd: Path | str, session: str, when: str, n: int = 0) -> dict[str, Any]:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"{session}-{n}",
        "sessionId": session,
        "timestamp": when,
        "cwd": str(cwd),
        "origin": {"kind": "human"},
    }


def write(
    claude: Path, folder: str, session: str, lines: list[dict[str, Any] | str], *, mtime: float | None = OLD
) -> Path:
    """A transcript as Claude Code lays it out: <config>/projects/<folder>/<session>.jsonl."""
    path = claude / "projects" / folder / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def session(claude: Path, cwd: Path, sid: str, when: str, *texts: str) -> Path:
    folder = backfill.folder_name(str(cwd))
    return write(claude, folder, sid, [line(t, cwd, sid, when, n) for n, t in enumerate(texts)])


def contents(home: Path) -> list[str]:
    return [r[0] for r in snapshot(home) if not r[5]]  # current memories


def cursors(home: Path) -> dict[str, int]:
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        return dict(conn.execute("SELECT path, offset FROM transcript_cursors"))
    finally:
        conn.close()


def bf(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    return run_json(capsys, "backfill", "--idle-seconds", "0", *flags)


# -- finding and ordering -----------------------------------------------------------------------


def test_backfill_harvests_oldest_session_first_so_the_later_correction_supersedes(capsys, claude, project, home):
    # Named so that the newer session sorts first by name: the order comes from the sessions' own times.
    session(claude, project, "aaa-newer", "2026-11-05T10:00:00Z", PORT_NEW)
    session(claude, project, "zzz-older", "2026-11-01T10:00:00Z", PORT_OLD)
    d = bf(capsys)
    assert (d["found"], d["harvested"], d["stored"], d["superseded"]) == (2, 2, 2, 1)
    assert contents(home) == ["The staging Postgres database listens on port 6543 now, not 5433."]


@pytest.mark.parametrize(
    "old, new",
    [
        (PORT_OLD, PORT_NEW),
        (
            "The ledger-api dev server runs on port 8000.",
            "Correction: the ledger-api dev server port changed from 8000 to 8080.",
        ),
    ],
)
def test_an_older_fact_read_after_its_correction_is_stored_as_history_and_the_correction_stays_current(
    capsys, claude, project, home, tmp_path, monkeypatch, old, new
):
    # This week's session first (the hooks harvested it), then backfill reads an older one.
    session(claude, project, "s-new", "2026-11-10T10:00:00Z", new)
    bf(capsys)
    session(claude, project, "s-old", "2026-11-03T10:00:00Z", old)
    d = bf(capsys)
    assert (d["harvested"], d["stored"], d["superseded"]) == (1, 1, 1)
    late = snapshot(home)
    [current] = contents(home)
    assert new.casefold().endswith(current.casefold())  # the correction, its opening filler word dropped
    assert (old, True, current) in {(r[0], r[5], r[6]) for r in late}  # kept as history, closed by the newer one
    # Read in order, the same current memory and the same history.
    other = tmp_path / "home-in-order"
    monkeypatch.setenv("MAPLE_HOME", str(other))
    bf(capsys)
    assert snapshot(other) == late


def test_since_then_a_plain_backfill_keeps_the_newer_correction_current(capsys, claude, project, home):
    session(claude, project, "s-old", "2026-11-01T10:00:00Z", PORT_OLD)
    newer = session(claude, project, "s-new", "2026-11-05T10:00:00Z", PORT_NEW)
    os.utime(newer, (OLD + 86400, OLD + 86400))
    bf(capsys, "--since", time.strftime("%Y-%m-%d", time.gmtime(OLD + 3600)))
    bf(capsys)
    assert contents(home) == ["The staging Postgres database listens on port 6543 now, not 5433."]


def test_a_subfolder_and_a_worktree_of_the_project_count_and_a_folder_name_collision_does_not(
    capsys, claude, project, tmp_path, home
):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    worktree = tmp_path / "wt-feature"
    subprocess.run([*git, "worktree", "add", "-q", str(worktree)], check=True)
    (project / "sub").mkdir()
    session(claude, project / "sub", "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    session(claude, worktree, "s2", "2026-11-02T10:00:00Z", RULE)
    other = tmp_path / "other"
    other.mkdir()
    # Another project's session filed under this project's folder name (the naming is lossy).
    write(claude, backfill.folder_name(str(project)), "s3", [line(DEPLOY, other, "s3", "2026-11-03T10:00:00Z")])
    session(claude, other, "s4", "2026-11-04T10:00:00Z", DEPLOY)
    d = bf(capsys)
    assert d["harvested"] == 2 and d["other_projects"] == 2
    assert [s["reason"] for s in d["skipped"]] == [f"another project's session (cwd {other})"]
    assert sorted(contents(home)) == sorted([PORT_OLD, RULE])
    assert {r[0] for r in snapshot(home)} == {PORT_OLD, RULE}


def test_all_projects_puts_each_sessions_memories_in_its_own_projects_scope(capsys, claude, project, tmp_path, home):
    other = tmp_path / "other"
    other.mkdir()
    session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    session(claude, other, "s2", "2026-11-02T10:00:00Z", DEPLOY)
    d = bf(capsys, "--all-projects")
    assert d["harvested"] == 2
    assert d["by_scope"] == {project_scope(project): 1, project_scope(other): 1}
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:
        scopes = dict(conn.execute("SELECT content, scope FROM memories"))
    finally:
        conn.close()
    assert scopes == {PORT_OLD: project_scope(project), DEPLOY: project_scope(other)}


def test_since_and_limit_choose_which_sessions_are_harvested_and_say_how_to_continue(capsys, claude, project, home):
    for n, text in enumerate([PORT_OLD, RULE, DEPLOY]):
        p = session(claude, project, f"s{n}", f"2026-11-0{n + 1}T10:00:00Z", text)
        os.utime(p, (OLD + n * 86400 - 2 * 86400, OLD + n * 86400 - 2 * 86400))
    # the day of the middle session: its midnight falls between the first session and it, at any hour
    since = time.strftime("%Y-%m-%d", time.gmtime(OLD - 86400))
    d = bf(capsys, "--since", since, "--limit", "1")
    assert (d["found"], d["before_since"], d["harvested"], d["left"]) == (2, 1, 1, 1)
    assert d["continue_with"] == f"maple-memory backfill --since {since}"
    assert contents(home) == [RULE]


# -- the ledger: nothing twice, nothing new means no work --------------------------------------


def test_a_second_run_finds_nothing_new_and_loads_no_model(capsys, claude, project, monkeypatch):
    session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    assert bf(capsys)["harvested"] == 1

    def no_model(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a run with nothing new asked for the model")

    monkeypatch.setattr("memory.app.client.connect", no_model)
    monkeypatch.setattr("memory.embed.from_config", no_model)
    d = bf(capsys)
    assert (d["found"], d["harvested"], d["already_done"], d["stored"]) == (1, 0, 1, 0)


def test_a_transcript_that_grew_is_continued_where_the_last_harvest_stopped(capsys, claude, project, home):
    path = session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    bf(capsys)
    first = cursors(home)[str(path)]
    with path.open("a") as f:
        f.write(json.dumps(line(RULE, project, "s1", "2026-11-01T11:00:00Z", 1)) + "\n")
    os.utime(path, (OLD, OLD))
    d = bf(capsys)
    assert (d["harvested"], d["stored"], d["bytes_read"]) == (1, 1, path.stat().st_size - first)
    assert sorted(contents(home)) == sorted([PORT_OLD, RULE])


def test_a_backfill_then_the_live_session_end_harvest_of_the_same_session_stores_nothing_twice(
    capsys, claude, project, home
):
    path = session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD, RULE)
    bf(capsys)
    before = snapshot(home)
    with path.open("a") as f:  # the session goes on, then ends: its hook hands the transcript over
        f.write(json.dumps(line(DEPLOY, project, "s1", "2026-11-01T12:00:00Z", 5)) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAPLE_HOME": str(home), "MAPLE_HOOK_RESIDENT_MINUTES": "0"}
    payload = {"hook_event_name": "SessionEnd", "session_id": "s1", "transcript_path": str(path), "cwd": str(project)}
    for args, stdin in (([str(RUN), "session-end"], json.dumps(payload)), ([str(RUN), "drain", "--wait"], "")):
        done = subprocess.run([sys.executable, *args], input=stdin.encode(), env=env, cwd=project, timeout=300)
        assert done.returncode == 0
    after = snapshot(home)
    assert before and set(before) <= set(after)
    assert [r[0] for r in set(after) - set(before)] == [DEPLOY]  # only the line written after the backfill
    d = bf(capsys)  # and backfill after the hook finds the whole session harvested
    assert (d["harvested"], d["already_done"]) == (0, 1)


def test_a_dry_run_says_what_it_would_store_and_writes_nothing(capsys, claude, project, home):
    session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    bf(capsys)  # creates the database
    session(claude, project, "s2", "2026-11-02T10:00:00Z", RULE)
    before, ledger = snapshot(home), cursors(home)
    d = bf(capsys, "--dry-run")
    assert (d["dry_run"], d["harvested"], d["stored"]) == (True, 1, 1)
    assert [t["status"] for t in d["transcripts"]] == ["done", "pending"]
    assert (snapshot(home), cursors(home)) == (before, ledger)


def test_stop_asked_between_transcripts_ends_the_run_after_the_current_one(config, claude, project, embedder):
    for n, text in enumerate([PORT_OLD, RULE, DEPLOY]):
        session(claude, project, f"s{n}", f"2026-11-0{n + 1}T10:00:00Z", text)
    seen: list[Any] = []
    with Store.open(config, embedder) as store:
        d = Memories(store, project_scope(project)).backfill(
            str(claude), quiet_seconds=0, progress=lambda done, total, t: seen.append(t), stop=lambda: len(seen) >= 2
        )
    assert (d["harvested"], d["left"], d["stopped"]) == (2, 1, True)


# -- bad input ------------------------------------------------------------------------------------


def test_bad_transcripts_are_skipped_with_a_reason_and_the_good_lines_of_a_damaged_one_are_kept(
    capsys, claude, project, home
):
    folder = backfill.folder_name(str(project))
    good = line(PORT_OLD, project, "dmg", "2026-11-01T10:00:00Z")
    # Corrupt lines in the middle and a last line cut off by a crash: the rest is harvested.
    write(claude, folder, "dmg", [good, "{not json", '{"type": "user", "message": 3}', line(RULE, project, "dmg", "x")])
    with (claude / "projects" / folder / "dmg.jsonl").open("a") as f:
        f.write('{"type": "user", "message": {"role": "user", "content": "half a li')
    os.utime(claude / "projects" / folder / "dmg.jsonl", (OLD, OLD))
    # 200 MB, sparse: a first line, then a hole (nothing of it is held in memory, or read).
    big = write(claude, folder, "big", [line(DEPLOY, project, "big", "2026-11-02T10:00:00Z")])
    with big.open("r+b") as f:
        f.truncate(200 << 20)
    os.utime(big, (OLD, OLD))
    (claude / "projects" / folder / "dir.jsonl").mkdir()  # not a file at all
    write(claude, folder, "empty", ['{"type": "summary", "summary": "no cwd here"}'])
    write(claude, folder, "fresh", [line(DEPLOY, project, "fresh", "2026-11-03T10:00:00Z")], mtime=None)
    live = write(claude, folder, "live", [line(DEPLOY, project, "live", "2026-11-04T10:00:00Z")])
    (claude / "sessions").mkdir()
    (claude / "sessions" / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "sessionId": "live"}))
    d = run_json(capsys, "backfill")  # the default idle time: "fresh" was written a moment ago
    reasons = {Path(s["path"]).stem: s["reason"] for s in d["skipped"]}
    assert set(reasons) == {"big", "dir", "empty", "fresh", "live"}
    assert reasons["big"].startswith("210 MB unread, over the 100 MB limit")
    assert reasons["dir"] == "not a regular file"
    assert "no working directory" in reasons["empty"]
    assert "may still be in use" in reasons["fresh"]
    assert reasons["live"] == f"its session is still running (pid {os.getpid()}); the hooks harvest it"
    assert (d["harvested"], d["malformed_lines"]) == (1, 2)
    assert sorted(contents(home)) == sorted([PORT_OLD, RULE])
    assert live.exists()


def test_an_unreadable_transcript_is_skipped_with_a_reason(capsys, claude, project):
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    path = session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    path.chmod(0)
    try:
        d = bf(capsys)
    finally:
        path.chmod(0o600)
    assert d["skipped"][0]["reason"].startswith("unreadable")


def test_ctrl_c_while_the_engine_starts_ends_the_run_at_once_and_leaves_the_engine_start_alone(
    capsys, tmp_path, claude, project, home
):
    import fcntl

    from memory import remote

    session(claude, project, "s0", "2026-11-01T10:00:00Z", PORT_OLD)
    bf(capsys, "--limit", "1")  # the database exists: a harvest now goes to the engine
    session(claude, project, "s1", "2026-11-02T10:00:00Z", RULE)
    before = snapshot(home)
    config = config_mod.load(home=home)
    lock = remote.lock_path(home, config.db_path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("w") as held:  # an engine that is starting (loading its model) holds the lock
        fcntl.flock(held, fcntl.LOCK_EX)
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "MAPLE_HOME": str(home),
            "MAPLE_HOOK_RESIDENT_MINUTES": "5",
            "CLAUDE_CONFIG_DIR": str(claude),
        }
        cmd = [sys.executable, "-m", "memory.cli", "backfill", "--idle-seconds", "0"]
        p = subprocess.Popen(cmd, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert "starting MAPLE's engine" in p.stderr.readline()
            p.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends the foreground group
            out, err = p.communicate(timeout=30)  # the engine wait is 90 s: this is well short of it
        finally:
            if p.poll() is None:
                p.kill()
        assert remote.running(home, config.db_path)  # the engine start (the lock's holder) is untouched
    assert p.returncode == 130, err
    assert "stopped: 1 transcripts left; `maple-memory backfill` continues" in out
    assert snapshot(home) == before


def test_a_broken_link_and_an_empty_file_are_counted_and_skipped_with_a_reason(capsys, claude, project):
    folder = claude / "projects" / backfill.folder_name(str(project))
    folder.mkdir(parents=True)
    (folder / "gone.jsonl").symlink_to("/nonexistent/gone.jsonl")
    (folder / "nothing.jsonl").touch()
    os.utime(folder / "nothing.jsonl", (OLD, OLD))
    d = bf(capsys)
    reasons = {Path(s["path"]).stem: s["reason"] for s in d["skipped"]}
    assert d["found"] == 2
    assert reasons["gone"].startswith("a link to /nonexistent/gone.jsonl, which cannot be read")
    assert reasons["nothing"] == "empty"


def test_backfill_rejects_a_negative_idle_time_or_size_limit_and_names_an_empty_folder_once(capsys, claude, project):
    for flags in (["--idle-seconds", "-1"], ["--max-mb=-5"], ["--max-mb", "0"]):
        code, out, err = run(capsys, "backfill", *flags)
        assert code == 2 and "must be" in err
    code, out, err = run(capsys, "backfill")
    first = out.splitlines()[0]
    assert first == f"no Claude Code transcripts under {claude / 'projects'}"


def test_a_dry_run_predicts_the_real_run_a_later_session_superseding_an_earlier_one(capsys, claude, project, home):
    session(claude, project, "s0", "2026-10-31T10:00:00Z", DEPLOY)
    bf(capsys)
    # Both pending: only a dry run that stores s1's memories sees s2 supersede one of them.
    session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD, RULE)
    session(claude, project, "s2", "2026-11-02T10:00:00Z", PORT_NEW, RULE)
    before, ledger = snapshot(home), cursors(home)
    keys = ("harvested", "stored", "merged", "reinforced", "superseded", "redacted")
    dry = bf(capsys, "--dry-run")
    assert (snapshot(home), cursors(home)) == (before, ledger)  # rolled back: nothing stays
    real = bf(capsys)
    assert {k: dry[k] for k in keys} == {k: real[k] for k in keys}
    assert real["superseded"] == 1


def test_git_dry_run_lists_the_commits_it_would_keep(capsys, claude, project, home):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit(project, "fix typo", "2026-01-01T10:00:00+00:00")
    sha = _commit(project, DECISION, "2026-02-03T04:05:06+01:00")
    code, out, err = run(capsys, "backfill", "--git", "--dry-run")
    assert code == 0
    assert f"would keep  {sha[:10]}  Use gp3 for all new EBS volumes: gp3 is about 20% cheaper" in out
    assert "fix typo" not in out


def said(text: str, cwd: Path, session: str, when: str, n: int) -> dict[str, Any]:
    """An assistant line as Claude Code writes it."""
    return {
        "type": "assistant",
        "message": {"role": "assistant", "type": "message", "content": [{"type": "text", "text": text}]},
        "uuid": f"{session}-{n}",
        "sessionId": session,
        "timestamp": when,
        "cwd": str(cwd),
    }


def test_a_proposal_with_an_ellipsis_keeps_its_reason_and_a_pasted_runbook_its_lines_as_written(
    capsys, claude, project, home
):
    proposal = (
        "I suggest Postgres with SELECT ... FOR UPDATE SKIP LOCKED for the invoice job queue instead of Redis "
        "streams: we already run Postgres and jobs stay transactional with the invoice rows."
    )
    steps = "\n".join(
        f"Step {i}: check the ledger-api dashboard panel {i}, confirm the error rate stays under 0.{i % 9 + 1}% "
        "for ten minutes, then page the on-call if it does not."
        for i in range(1, 16)
    )
    runbook = f"Release runbook for billing-service, keep this:\n{steps}"
    when = "2026-11-01T10:00:00Z"
    lines = [
        line("What do you suggest for the invoice job queue?", project, "s1", when, 0),
        said(proposal, project, "s1", when, 1),
        line("Agreed, let's do that.", project, "s1", when, 2),
        line("FYI staging listens on port 5432. ledger-api's HTTP layer is built on Flask.", project, "s1", when, 3),
        line(runbook, project, "s1", when, 4),
    ]
    write(claude, backfill.folder_name(str(project)), "s1", lines)
    bf(capsys)
    rows = snapshot(home)
    assert any(proposal in r[0] and r[1] == "decision" for r in rows)  # not cut at the "..."
    # two facts on two subjects, two memories: a later correction of one closes it alone
    assert {"Staging listens on port 5432.", "ledger-api's HTTP layer is built on Flask."} <= {r[0] for r in rows}
    [doc] = [r for r in rows if r[2] == "document" and not r[3]]
    assert doc[0] == runbook  # the header line and the line breaks, verbatim
    parts = [r[0] for r in rows if r[2] == "document" and r[3]]
    assert len(parts) > 1 and all(p in runbook for p in parts)  # each chunk a piece of the text as written


# -- crash safety --------------------------------------------------------------------------------


def _backfill_process(home: Path, claude: Path, project: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "MAPLE_HOME": str(home),
        "MAPLE_MODEL": "hash-64",
        "MAPLE_HOOK_RESIDENT_MINUTES": "0",
        "CLAUDE_CONFIG_DIR": str(claude),
    }
    cmd = [sys.executable, "-m", "memory.cli", "--json", "backfill", "--idle-seconds", "0"]
    return subprocess.Popen(cmd, env=env, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_kill_9_at_any_point_then_a_rerun_stores_exactly_what_one_clean_run_stores(tmp_path, claude, project):
    from test_harvest_rule import LABELLED, SESSIONS

    for n, name in enumerate(LABELLED * 3):  # long labelled sessions: a kill often lands mid-harvest
        lines = [json.loads(x) for x in (SESSIONS / f"{name}.jsonl").read_text().splitlines()]
        for obj in lines:
            if "cwd" in obj:
                obj["cwd"] = str(project)
            if "timestamp" in obj:
                obj["timestamp"] = f"2026-10-{n + 1:02d}T10:00:00Z"
        write(claude, backfill.folder_name(str(project)), f"{name}-{n}", lines)
    clean_home = tmp_path / "clean"
    p = _backfill_process(clean_home, claude, project)
    p.communicate(timeout=600)
    assert p.returncode == 0
    clean = snapshot(clean_home)
    assert clean
    for kill_after in (0, 2, 5, 8):
        home = tmp_path / f"killed-{kill_after}"
        p = _backfill_process(home, claude, project)
        deadline = time.monotonic() + 300
        while kill_after and p.poll() is None and time.monotonic() < deadline:
            if (home / "memory.db").exists():
                try:
                    if len(cursors(home)) >= kill_after:
                        break
                except db.DatabaseError:
                    pass
            time.sleep(0.02)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        again = _backfill_process(home, claude, project)
        out, err = again.communicate(timeout=600)
        assert again.returncode == 0, err.decode()
        assert snapshot(home) == clean, kill_after
        assert json.loads(out)["harvested"] + len(cursors(home)) >= len(LABELLED * 3)


# -- git ------------------------------------------------------------------------------------------

DECISION = """Use gp3 for all new EBS volumes

gp3 is about 20% cheaper than gp2 for the same baseline and IOPS don't
depend on volume size. Existing gp2 volumes get converted when someone
touches the stack anyway, no big bang."""


def _commit(repo: Path, message: str, date: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True, env=env)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_git_keeps_an_explained_decision_with_its_commit_and_date_and_leaves_the_noise(capsys, claude, project):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit(project, "fix typo", "2026-01-01T10:00:00+00:00")
    sha = _commit(project, DECISION, "2026-02-03T04:05:06+01:00")
    _commit(project, "Merge branch 'main' into feature", "2026-02-04T10:00:00+00:00")
    d = bf(capsys, "--git")
    assert (d["git"]["commits"], d["git"]["kept"], d["git"]["stored"]) == (3, 1, 1)
    [m] = run_json(capsys, "list")["memories"]
    assert m["content"].startswith("Use gp3 for all new EBS volumes: gp3 is about 20% cheaper")
    assert (m["source_ref"], m["occurred_at"]) == (f"git:{sha}", "2026-02-03T03:05:06Z")
    assert bf(capsys, "--git")["git"]["commits"] == 0  # the next run reads only newer commits


MIGRATE = """Migrate ledger-api from Flask to FastAPI

Flask's sync workers could not keep up with the webhook fan-out; FastAPI with uvicorn gives us
async handlers and pydantic validation. Decided with Bobby in the design review."""
SWITCH = """Switch invoice queue from Redis streams to Postgres SKIP LOCKED

We already run Postgres and the jobs must commit atomically with the invoice rows. Redis streams
lost jobs on failover twice in September (INC-2291, INC-2310)."""
CONVENTION = """docs: convention for migrations

From now on every schema migration goes through `make migrate`; never run alembic upgrade by hand,
because it skips the advisory lock and two deploys raced."""


@pytest.mark.parametrize("by", ["sha", "quoted subject"])
def test_git_a_revert_supersedes_the_commit_it_reverts_and_commit_memories_carry_no_mood(
    capsys, claude, project, home, by
):
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    _commit(project, SWITCH, "2026-10-03T10:00:00+00:00")
    sha = _commit(project, MIGRATE, "2026-10-05T10:00:00+00:00")
    _commit(project, CONVENTION, "2026-10-06T10:00:00+00:00")
    reverts = f"This reverts commit {sha}.\n\n" if by == "sha" else ""
    why = "The pydantic v2 upgrade broke the invoice serializer in prod; reverting until its tests cover decimals."
    _commit(
        project, f'Revert "Migrate ledger-api from Flask to FastAPI"\n\n{reverts}{why}', "2026-10-07T10:00:00+00:00"
    )
    d = bf(capsys, "--git")
    assert (d["git"]["kept"], d["git"]["stored"]) == (4, 4)
    rows = {r[0].split(":")[0]: r for r in snapshot(home)}
    assert rows["Migrate ledger-api from Flask to FastAPI"][5:] == (
        True,
        rows['Revert "Migrate ledger-api from Flask to FastAPI"'][0],
    )
    # "Switch X to Y" is a decision (its "must" is a reason, not a rule); a convention is a rule.
    assert rows["Switch invoice queue from Redis streams to Postgres SKIP LOCKED"][1:3] == ("decision", "decision")
    assert rows["docs"][1:3] == ("fact", "rule")
    conn = db.connect(home / "memory.db", vectors=False, readonly=True)
    try:  # a commit message is no one's feeling ("Decided with Bobby" read as joy), superseded or not
        assert set(conn.execute("SELECT moods, valence, intensity FROM memories")) == {("[]", 0.0, 0.0)}
    finally:
        conn.close()


@pytest.mark.parametrize(
    "message",
    [
        "Bump next from 14.0.3 to 14.0.4 (#50)",
        "More memory for prometheus\n\nOOMKilled again",
        "Merge pull request #212 from harbor/fix-sg\n\nsg cleanup",
        "chore(release): 2.1.0 [skip ci]\n\n### Features\n\n* **metering:** ingest usage events from kafka",
    ],
)
def test_git_leaves_out_commits_that_say_nothing_worth_remembering(message):
    assert gitlog.judge(gitlog.Commit("0" * 40, "2026-01-01T00:00:00+00:00", "a <a@b>", message)) is None


def test_git_outside_a_repository_says_what_it_needs(capsys, claude, project):
    code, out, err = run(capsys, "backfill", "--git")
    assert code == 2 and "not in a git repository" in err


def test_install_and_doctor_helpers_count_what_is_left_and_the_days_before_claude_code_deletes_it(
    claude, project, config
):
    path = session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    (claude / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 10}))
    left = backfill.unharvested(config, claude, project_scope(project))
    assert (left["count"], left["cleanup_days"]) == (1, 10)
    assert left["days_left"] == pytest.approx(10 - (time.time() - path.stat().st_mtime) / 86400, abs=0.01)
    with Store.open(config_mod.load(home=config.home), None) as store:
        Memories(store, project_scope(project)).backfill(str(claude), quiet_seconds=0)
    assert backfill.unharvested(config, claude, project_scope(project))["count"] == 0


def test_doctor_lists_the_unharvested_sessions_and_install_names_the_command(capsys, claude, project, tmp_path):
    session(claude, project, "s1", "2026-11-01T10:00:00Z", PORT_OLD)
    checks = {c["name"]: c for c in json.loads(run(capsys, "--json", "doctor", "--no-model")[1])["checks"]}
    assert checks["past sessions"]["detail"].startswith("1 of 1 Claude Code transcripts of this project not harvested")
    assert "`maple-memory backfill` reads them" in checks["past sessions"]["detail"]
    d = run_json(capsys, "install", "--dry-run", "--no-claude-cli")
    [note] = [n for n in d["notes"] if "past Claude Code session" in n]
    assert f" backfill` in {project} puts them into memory" in note and "deletes the oldest in 26 day(s)" in note
    bf(capsys)
    checks = {c["name"]: c for c in json.loads(run(capsys, "--json", "doctor", "--no-model")[1])["checks"]}
    assert checks["past sessions"]["detail"] == "all 1 Claude Code transcripts of this project harvested"


def test_doctor_counts_and_lists_only_what_backfill_would_read_and_warns_a_week_before_claude_code_deletes_it(
    capsys, claude, project, tmp_path
):
    folder = backfill.folder_name(str(project))
    (claude / "settings.json").write_text(json.dumps({"cleanupPeriodDays": 10}))
    other = tmp_path / "other"
    other.mkdir()
    # Never read by backfill: another project's (in our folder), no cwd, over the size limit, running.
    write(claude, folder, "theirs", [line(DEPLOY, other, "theirs", "2026-11-01T10:00:00Z")])
    write(claude, folder, "empty", ['{"type": "summary", "summary": "no cwd here"}'])
    big = write(claude, folder, "big", [line(DEPLOY, project, "big", "2026-11-02T10:00:00Z")])
    with big.open("r+b") as f:
        f.truncate(200 << 20)
    os.utime(big, (OLD, OLD))
    write(claude, folder, "live", [line(DEPLOY, project, "live", "2026-11-03T10:00:00Z")])
    (claude / "sessions").mkdir()
    (claude / "sessions" / f"{os.getpid()}.json").write_text(json.dumps({"pid": os.getpid(), "sessionId": "live"}))
    ours = session(claude, project, "ours", "2026-11-04T10:00:00Z", PORT_OLD)

    def past_sessions() -> dict[str, Any]:
        checks = json.loads(run(capsys, "--json", "doctor", "--no-model")[1])["checks"]
        return {c["name"]: c for c in checks}["past sessions"]

    two_days_ago = time.time() - 2 * 86400 - 60
    os.utime(ours, (two_days_ago, two_days_ago))
    check = past_sessions()  # 8 days left: listed, no warning yet
    assert check["detail"].startswith("1 of ")
    assert [t["path"] for t in check["data"]["transcripts"]] == [str(ours)]
    assert check["data"]["transcripts"][0]["days_left"] == pytest.approx(8, abs=0.15) and "warn" not in check
    d = run_json(capsys, "install", "--dry-run", "--no-claude-cli")
    assert any(n.startswith("found 1 past Claude Code session(s)") for n in d["notes"])
    os.utime(ours, (two_days_ago - 3 * 86400, two_days_ago - 3 * 86400))  # 5 days left
    check = past_sessions()
    assert check["warn"] is True and check["ok"] is None and "deletes the oldest in 4 day(s)" in check["fix"]
    out = run(capsys, "doctor", "--no-model")[1]
    assert f"{ours} (4 day(s) left)" in out and "warn  past sessions: 1 of " in out.replace("\x1b[33m", "")
