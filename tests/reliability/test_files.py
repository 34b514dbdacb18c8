"""Files and the network: the home is 0700 and every file MAPLE writes (database, WAL, backups,
exports, logs, locks) 0600 whatever the umask; exports, imports and restores refuse paths that
would destroy MAPLE's own files or never end; no process MAPLE runs listens on the network."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from pathlib import Path

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store
from reliability import harness


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [harness.PY, "-m", "memory.cli", *args],
        env=harness.env_for(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=lambda: os.umask(0o022),
    )


async def test_every_file_maple_writes_is_private_whatever_the_umask(tmp_path, home):
    old = os.umask(0o022)  # the usual umask: files 0644 and folders 0755 unless MAPLE says otherwise
    try:
        project = tmp_path / "project"
        project.mkdir()
        async with harness.stdio_client(home, project) as client:
            r = await client.call_tool("memory_store", {"content": "Private files stay private"})
            assert not r.is_error
        assert cli(home, "add", "Added from the CLI").returncode == 0
        transcript = tmp_path / "t.jsonl"
        transcript.write_text(
            harness.transcript_line("user", "Please remember that builds use make", session="s", cwd=str(project), n=0)
            + "\n"
        )
        harness.run_hook(
            "stop",
            {"hook_event_name": "Stop", "session_id": "s", "cwd": str(project), "transcript_path": str(transcript)},
            home,
            cwd=project,
        )
        harness.run_hook(
            "user-prompt-submit",
            {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "   "},
            home,
            raw=b"not json",
        )  # writes hooks.log
        harness.settle_harvests(home)
        assert cli(home, "backup").returncode == 0
        export = tmp_path / "out" / "export.jsonl"
        export.parent.mkdir()
        assert cli(home, "export", str(export)).returncode == 0
    finally:
        os.umask(old)
    files = {
        "home": home,
        "database": home / "memory.db",
        "WAL": home / "memory.db-wal",
        "shared memory": home / "memory.db-shm",
        "backups folder": home / "backups",
        "hooks log": home / "hooks.log",
        "harvest lock": home / "harvest.lock",
        "export": export,
        **{f"backup {p.name}": p for p in (home / "backups").glob("*.db")},
    }
    modes = {name: oct(mode(p)) for name, p in files.items() if p.exists()}
    harness.report("file_modes", modes)
    assert {"home", "database", "backups folder", "hooks log", "export"} <= set(modes)
    assert any(name.startswith("backup ") for name in modes)
    for name, p in files.items():
        if p.exists():
            assert mode(p) == (0o700 if p.is_dir() else 0o600), f"{name} {p} is {oct(mode(p))}"


def test_a_home_and_database_made_too_open_are_closed_again_on_the_next_open(tmp_path):
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    os.chmod(home, 0o755)
    (home / "memory.db").touch()
    os.chmod(home / "memory.db", 0o644)
    with Store.open(config_mod.load(home=home, env={}), HashEmbedder(64)) as s:
        s.add(NewMemory("permissions get fixed"))
    assert mode(home) == 0o700
    assert mode(home / "memory.db") == 0o600


# -- paths ---------------------------------------------------------------------------------------


@pytest.fixture
def filled(home: Path) -> Path:
    assert cli(home, "add", "A memory worth keeping safe").returncode == 0
    assert cli(home, "backup").returncode == 0
    return home


def test_an_export_never_replaces_the_database_its_wal_a_backup_or_the_settings(filled, tmp_path):
    home = filled
    (home / "config.json").write_text("{}")
    backup = next((home / "backups").glob("memory-*.db"))
    link = tmp_path / "innocent-looking.jsonl"
    link.symlink_to(home / "memory.db")
    before = {p: p.read_bytes() for p in (home / "memory.db", backup, home / "config.json")}
    for target in (
        home / "memory.db",
        home / "memory.db-wal",
        backup,
        home / "backups" / "new.jsonl",
        home / "config.json",
        link,
    ):
        r = cli(home, "export", str(target))
        assert r.returncode == 2, (target, r.stdout, r.stderr)
        assert "MAPLE's own files" in r.stderr
    assert {p: p.read_bytes() for p in before} == before
    r = cli(home, "--json", "search", "memory worth keeping")
    assert r.returncode == 0 and json.loads(r.stdout)["results"], r.stderr


def test_an_export_to_a_folder_or_a_missing_folder_says_so_instead_of_failing_with_a_traceback(filled, tmp_path):
    for target, words in ((tmp_path, "is a folder"), (tmp_path / "no" / "such" / "dir.jsonl", "cannot write")):
        r = cli(filled, "export", str(target))
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not list(tmp_path.glob(".maple-export-*"))  # no temporary file left behind


def test_an_import_refuses_a_fifo_a_device_and_a_folder_instead_of_waiting_or_filling_memory(filled, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for source in (fifo, Path("/dev/zero"), tmp_path):
        r = cli(filled, "import", str(source), timeout=60)
        assert r.returncode == 2 and "not a regular file" in r.stderr, (source, r.stderr)


def test_an_import_line_nested_too_deep_is_rejected_with_its_number(filled, tmp_path):
    lines = tmp_path / "deep.jsonl"
    lines.write_bytes(b'{"content": "kept"}\n' + b"[" * 200_000 + b"]" * 200_000 + b"\n")
    r = cli(filled, "--json", "import", str(lines))
    assert r.returncode == 1, r.stderr  # a line was rejected
    report = json.loads(r.stdout)
    assert report["imported"] == 1 and report["errors"][0]["line"] == 2


def test_a_restore_refuses_a_file_that_is_not_a_maple_backup_and_changes_nothing(filled, tmp_path):
    before = (filled / "memory.db").read_bytes()
    for source in (Path("/etc/hostname"), tmp_path / "missing.db"):
        r = cli(filled, "backup", "--restore", str(source))
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert (filled / "memory.db").read_bytes() == before


def test_backup_rotation_deletes_only_its_own_backups_and_never_follows_a_link(filled, tmp_path):
    outside = tmp_path / "precious.db"
    outside.write_text("not MAPLE's")
    folder = filled / "backups"
    (folder / "memory-20000101T000000Z.db").symlink_to(outside)  # looks like the oldest backup
    (folder / "my-notes.txt").write_text("mine")
    (home_config := filled / "config.json").write_text(json.dumps({"backup_keep": 1}))
    for _ in range(3):
        assert cli(filled, "backup").returncode == 0
    assert outside.read_text() == "not MAPLE's"
    assert (folder / "my-notes.txt").read_text() == "mine"
    assert len(list(folder.glob("memory-*.db"))) == 1
    assert home_config.exists()


# -- the network -----------------------------------------------------------------------------------


def _rpc(proc: subprocess.Popen, message: dict) -> dict | None:
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()
    if "id" not in message:
        return None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed its output"
        reply = json.loads(line)
        if reply.get("id") == message["id"]:
            return reply


def test_the_server_and_its_worker_listen_on_no_network_socket(tmp_path, home):
    project = tmp_path / "project"
    project.mkdir()
    env = {**harness.env_for(home, project), "MAPLE_LOG_LEVEL": "ERROR"}
    (home / "config.json").parent.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"worker_idle_seconds": 0.0}))  # the worker runs at once
    proc = subprocess.Popen(
        [harness.PY, "-m", "server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=project,
    )
    try:
        init = _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            },
        )
        assert init["result"]["serverInfo"]["name"] == "maple"
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        stored = _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "memory_store", "arguments": {"content": "Listening on nothing"}},
            },
        )
        assert not stored["result"].get("isError"), stored
        found = harness.listening_sockets(proc.pid)
    finally:
        proc.stdin.close()
        proc.wait(30)
        proc.stdout.close()
    # No listener at all: the one socket MAPLE listens on is the warm engine's (tests/test_engine.py).
    harness.report("listeners", {"server": found})
    assert found == []


def test_the_listener_check_sees_a_listening_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert any(f.startswith("tcp ") for f in harness.listening_sockets(os.getpid()))
    finally:
        s.close()
