"""memory.cli.install and its commands: Claude Code settings merged and restored exactly (hooks
and permissions), the server registered through files or the `claude` CLI (a stand-in that
behaves as Claude Code 2.1.332 does), hook commands that cannot block a prompt, one home and one
database for the server and the hooks, other clients' formats, and the plugin layout."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from memory import cli
from memory import config as config_mod
from memory.app.commands import RUN_PY, home_env, hook_command
from memory.cli import install, jsonfile
from memory.config import Config
from memory.errors import InvalidInput

ROOT = Path(__file__).resolve().parent.parent

OTHER_SETTINGS = {
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "model": "opus",
    "permissions": {"allow": ["Bash(git status)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "python3 ~/bin/lint-prompt.py", "timeout": 3}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "async": True}]}],
    },
}
OTHER_CLAUDE_JSON = {
    "numStartups": 12,
    "mcpServers": {"github": {"type": "http", "url": "https://api.example/mcp"}},
    "projects": {"/somewhere/else": {"allowedTools": []}},
}


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    return path


def write_json(path: Path, data: dict) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = (json.dumps(data, indent=2) + "\n").encode()
    path.write_bytes(raw)
    return raw


def hooks_of(path: Path) -> dict:
    return json.loads(path.read_text())["hooks"]


def ours(groups: list) -> list:
    return [h for g in groups for h in g["hooks"] if install.is_ours(h)]


# -- user scope, no claude CLI --------------------------------------------------------------------


def test_install_then_uninstall_leaves_settings_with_other_hooks_byte_identical(config: Config, user_home, project):
    settings = write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    claude_json = write_json(user_home / ".claude.json", OTHER_CLAUDE_JSON)
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    hooks = hooks_of(user_home / ".claude" / "settings.json")
    assert set(hooks) == {"UserPromptSubmit", "PreToolUse", "Stop", "SessionStart", "PreCompact", "SessionEnd"}
    assert hooks["UserPromptSubmit"][0] == OTHER_SETTINGS["hooks"]["UserPromptSubmit"][0]  # theirs first, untouched
    assert hooks["Stop"][0] == OTHER_SETTINGS["hooks"]["Stop"][0]
    servers = json.loads((user_home / ".claude.json").read_text())["mcpServers"]
    assert servers["github"] == OTHER_CLAUDE_JSON["mcpServers"]["github"] and "maple" in servers
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    assert (user_home / ".claude" / "settings.json").read_bytes() == settings
    assert (user_home / ".claude.json").read_bytes() == claude_json


def test_uninstall_after_someone_else_edited_the_files_removes_only_maples_entries(config: Config, user_home, project):
    write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    write_json(user_home / ".claude.json", OTHER_CLAUDE_JSON)
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    # Claude Code rewrites ~/.claude.json all the time; the user adds a hook of their own.
    claude_json = json.loads((user_home / ".claude.json").read_text())
    claude_json["numStartups"] = 13
    write_json(user_home / ".claude.json", claude_json)
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    settings["hooks"]["SessionEnd"].append({"hooks": [{"type": "command", "command": "echo bye"}]})
    write_json(user_home / ".claude" / "settings.json", settings)
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    assert not list(user_home.rglob("*.maple-backup"))  # the backups were install's too
    expected = json.loads(json.dumps(OTHER_SETTINGS))
    expected["hooks"]["SessionEnd"] = [{"hooks": [{"type": "command", "command": "echo bye"}]}]
    assert json.loads((user_home / ".claude" / "settings.json").read_text()) == expected
    assert json.loads((user_home / ".claude.json").read_text()) == {**OTHER_CLAUDE_JSON, "numStartups": 13}


def test_installing_twice_changes_nothing_the_second_time(config: Config, user_home, project):
    write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    first = (user_home / ".claude" / "settings.json").read_bytes(), (user_home / ".claude.json").read_bytes()
    report = install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert ((user_home / ".claude" / "settings.json").read_bytes(), (user_home / ".claude.json").read_bytes()) == first
    assert all("already" in a for a in report.actions)
    assert len(ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])) == 1


def test_install_keeps_a_backup_of_every_file_it_changes(config: Config, user_home, project):
    settings = write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert (user_home / ".claude" / "settings.json.maple-backup").read_bytes() == settings
    assert not (user_home / ".claude.json.maple-backup").exists()  # it did not exist: nothing to back up
    assert stat.S_IMODE((user_home / ".claude.json").stat().st_mode) == 0o600


def test_a_files_created_by_install_are_removed_by_uninstall(config: Config, user_home, project):
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert (user_home / ".claude" / "settings.json").exists() and (user_home / ".claude.json").exists()
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    assert not (user_home / ".claude" / "settings.json").exists() and not (user_home / ".claude.json").exists()


def test_dry_run_changes_nothing_and_says_what_it_would_do(config: Config, user_home, project):
    settings = write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    report = install.install(config, "user", project=project, dry_run=True, claude=None, user_home=user_home)
    assert (user_home / ".claude" / "settings.json").read_bytes() == settings
    assert not (user_home / ".claude.json").exists() and not (config.home / "install.json").exists()
    assert any("add hooks" in a for a in report.actions) and any("register MCP server" in a for a in report.actions)


def test_a_settings_file_that_is_not_json_is_left_alone_with_a_clear_error(config: Config, user_home, project):
    path = user_home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ this is not json")
    with pytest.raises(jsonfile.FileError, match="not valid JSON"):
        install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert path.read_text() == "{ this is not json"


def test_the_installed_hooks_use_seconds_and_the_right_shapes(config: Config, user_home, project):
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    hooks = hooks_of(user_home / ".claude" / "settings.json")
    for _event, groups in hooks.items():
        for h in ours(groups):
            assert h.get("timeout", 1) <= 60  # seconds: 5000 would mean 83 minutes
    stop = ours(hooks["Stop"])[0]
    assert stop["async"] is True and stop["command"].endswith("run.py stop || true")
    assert ours(hooks["UserPromptSubmit"])[0]["type"] == "command"
    assert "timeout" not in ours(hooks["SessionEnd"])[0]  # would stretch the shared 1.5 s


def test_the_installed_command_hook_runs(config: Config, user_home, project, tmp_path):
    import subprocess

    install.install(config, "user", project=project, claude=None, user_home=user_home)
    command = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])[0]["command"]
    result = subprocess.run(
        command,
        shell=True,
        input=b'{"prompt": "which port", "cwd": "/tmp"}',
        capture_output=True,
        env={"PATH": os.environ["PATH"], "MAPLE_HOME": str(config.home)},
    )
    assert result.returncode == 0 and result.stdout == b""
    assert "no database" in (config.home / "hooks.log").read_text()


# -- project and local scopes ---------------------------------------------------------------------


def test_project_scope_writes_the_shared_mcp_json_and_project_settings(config: Config, user_home, project):
    write_json(project / ".mcp.json", {"mcpServers": {"db": {"command": "db-mcp"}}})
    install.install(config, "project", project=project, claude=None, user_home=user_home)
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(servers) == {"db", "maple"}
    commands = [h.get("command") for g in hooks_of(project / ".claude" / "settings.json").values() for h in ours(g)]
    assert all(c is None or c.startswith("maple-memory hook ") for c in commands)  # no machine paths in git
    assert not (user_home / ".claude.json").exists()


def test_local_scope_registers_under_the_project_in_claude_json_and_uses_settings_local(
    config: Config, user_home, project
):
    claude_json = write_json(user_home / ".claude.json", OTHER_CLAUDE_JSON)
    install.install(config, "local", project=project, claude=None, user_home=user_home)
    data = json.loads((user_home / ".claude.json").read_text())
    assert "maple" in data["projects"][str(project)]["mcpServers"] and "maple" not in data["mcpServers"]
    assert (project / ".claude" / "settings.local.json").exists()
    install.uninstall(config, "local", project=project, claude=None, user_home=user_home)
    assert (user_home / ".claude.json").read_bytes() == claude_json
    assert not (project / ".claude" / "settings.local.json").exists()


# -- through the claude CLI -----------------------------------------------------------------------


def fake_claude(tmp_path: Path, version: str, user_home: Path) -> Path:
    """An executable standing in for the `claude` CLI (a program we cannot run in unit tests),
    behaving as Claude Code 2.1.332 was seen to: `mcp add` writes the entry into ~/.claude.json
    (user: top-level mcpServers; local: projects[<cwd>], created with Claude Code's defaults) or
    <cwd>/.mcp.json (project), as JSON.stringify(data, null, 2) with no final newline; `mcp remove`
    deletes the entry and leaves `"mcpServers": {}` behind; `mcp get` exits 1 when there is none.
    Every call's arguments and working directory are recorded."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"""#!{sys.executable}
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
with open(os.path.join(here, "cwds.txt"), "a") as f:
    f.write(os.getcwd() + "\\n")
# With CLAUDE_CONFIG_DIR set, the real CLI keeps .claude.json in that folder.
USER = os.path.join(os.environ["CLAUDE_CONFIG_DIR"], ".claude.json") if os.environ.get("CLAUDE_CONFIG_DIR") \
    else {str(user_home / ".claude.json")!r}
PROJECT = os.path.join(os.getcwd(), ".mcp.json")
LOCAL_DEFAULTS = {{"allowedTools": [], "mcpContextUris": [], "mcpServers": {{}}, "enabledMcpjsonServers": [],
                  "disabledMcpjsonServers": [], "hasTrustDialogAccepted": False}}

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {{}}

def save(path, data):
    with open(path, "w") as f:
        f.write(json.dumps(data, indent=2, ensure_ascii=False))  # JSON.stringify: no final newline

def servers(scope, data, create):
    if scope == "local":
        project = data.setdefault("projects", {{}}).setdefault(os.getcwd(), dict(LOCAL_DEFAULTS)) if create else \\
            data.get("projects", {{}}).get(os.getcwd(), {{}})
        return project.setdefault("mcpServers", {{}}) if create else project.get("mcpServers", {{}})
    return data.setdefault("mcpServers", {{}}) if create else data.get("mcpServers", {{}})

def where(scope):
    return PROJECT if scope == "project" else USER

args = sys.argv[1:]
if args == ["--version"]:
    print("{version} (Claude Code)")
elif args[:2] == ["mcp", "get"]:
    found = any(args[2] in servers(s, load(where(s)), False) for s in ("local", "project", "user"))
    if not found:
        print(f'No MCP server named "{{args[2]}}".', file=sys.stderr)
    sys.exit(0 if found else 1)
elif args[:2] == ["mcp", "add"]:
    scope, name = args[args.index("--scope") + 1], args[4]
    env = dict(args[i + 1].split("=", 1) for i, a in enumerate(args[: args.index("--")]) if a == "--env")
    command, *rest = args[args.index("--") + 1 :]
    data = load(where(scope))
    servers(scope, data, True)[name] = {{"type": "stdio", "command": command, "args": rest, "env": env}}
    save(where(scope), data)
elif args[:2] == ["mcp", "remove"]:
    scope = args[args.index("--scope") + 1]
    data = load(where(scope))
    if servers(scope, data, False).pop(args[2], None) is None:
        sys.exit(1)
    save(where(scope), data)
""")
    script.chmod(0o755)
    return script


def calls(script: Path) -> list[list[str]]:
    return [json.loads(line) for line in (script.parent / "calls.jsonl").read_text().splitlines()]


def claude_code_json(path: Path, data: dict) -> bytes:
    """Write `data` the way Claude Code writes ~/.claude.json (JSON.stringify(data, null, 2))."""
    raw = json.dumps(data, indent=2).encode()
    path.write_bytes(raw)
    return raw


@pytest.mark.parametrize("version", ["1.0.90", "2.1.100", "2.1.332"])
def test_auto_surface_installs_the_command_hook_whatever_the_claude_code_version(
    config: Config, user_home, project, tmp_path, version
):
    claude = fake_claude(tmp_path, version, user_home)
    report = install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    (surface,) = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    assert surface["type"] == "command" and surface["command"].endswith("run.py user-prompt-submit || true")
    assert f"UserPromptSubmit: command hook (Claude Code {version})" in report.notes


def test_with_a_claude_cli_the_server_is_added_through_it_and_removed_through_it(
    config: Config, user_home, project, tmp_path
):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    add = [c for c in calls(claude) if c[:2] == ["mcp", "add"]]
    assert len(add) == 1 and add[0][:5] == ["mcp", "add", "--scope", "user", "maple"] and "--" in add[0]
    assert "maple" in json.loads((user_home / ".claude.json").read_text())["mcpServers"]
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert len([c for c in calls(claude) if c[:2] == ["mcp", "add"]]) == 1  # already registered
    # The second install found the entry in the file: no `claude mcp get`, which fires SessionEnd hooks.
    assert len([c for c in calls(claude) if c[:2] == ["mcp", "get"]]) == 1
    claude_code_json(user_home / ".claude.json", {**json.loads((user_home / ".claude.json").read_text()), "n": 1})
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert calls(claude)[-1] == ["mcp", "remove", "maple", "--scope", "user"]
    assert json.loads((user_home / ".claude.json").read_text()) == {"n": 1}


def test_surface_mcp_installs_an_mcp_tool_hook_on_the_running_server(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home, surface="mcp")
    (surface,) = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    assert surface == {
        "type": "mcp_tool",
        "server": "maple",
        "tool": "memory_surface",
        "timeout": 5,
        "input": {"prompt": "${prompt}", "cwd": "${cwd}", "session_id": "${session_id}"},
    }


def test_surface_mcp_is_refused_for_a_claude_code_without_mcp_tool_hooks(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.100", user_home)
    with pytest.raises(InvalidInput, match=r"2\.1\.118 or later.*--surface command"):
        install.install(config, "user", project=project, claude=str(claude), user_home=user_home, surface="mcp")
    assert not (user_home / ".claude" / "settings.json").exists() and not (user_home / ".claude.json").exists()


def test_a_claude_code_older_than_some_hook_events_gets_a_note_to_update(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "1.0.60", user_home)
    report = install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert any("has no SessionStart, SessionEnd hook" in n and "update Claude Code" in n for n in report.notes)


def test_local_scope_through_the_cli_runs_it_in_the_project_and_undoes_it_exactly(
    config: Config, user_home, project, tmp_path
):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    before = claude_code_json(user_home / ".claude.json", {"numStartups": 4, "projects": {}})
    install.install(config, "local", project=project, claude=str(claude), user_home=user_home)
    add = [c for c in calls(claude) if c[:2] == ["mcp", "add"]]
    assert add[0][:5] == ["mcp", "add", "--scope", "local", "maple"]
    assert (claude.parent / "cwds.txt").read_text().splitlines()[-1] == str(project)
    assert "maple" in json.loads((user_home / ".claude.json").read_text())["projects"][str(project)]["mcpServers"]
    assert (project / ".claude" / "settings.local.json").exists()
    install.uninstall(config, "local", project=project, claude=str(claude), user_home=user_home)
    assert (user_home / ".claude.json").read_bytes() == before


def test_uninstall_restores_claude_json_byte_for_byte_after_installing_through_the_cli(
    config: Config, user_home, project, tmp_path
):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    before = claude_code_json(user_home / ".claude.json", {"numStartups": 12, "projects": {}, "userID": "abc"})
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert b'"maple"' in (user_home / ".claude.json").read_bytes()
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert (user_home / ".claude.json").read_bytes() == before
    assert not (user_home / ".claude.json.maple-backup").exists()


def test_uninstall_after_claude_code_rewrote_claude_json_leaves_no_empty_mcp_servers_behind(
    config: Config, user_home, project, tmp_path
):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    claude_code_json(user_home / ".claude.json", {"numStartups": 12, "userID": "abc"})
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    # A session since: Claude Code rewrote the file (numStartups), so there is no restoring a backup.
    data = json.loads((user_home / ".claude.json").read_text())
    claude_code_json(user_home / ".claude.json", {**data, "numStartups": 13})
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert ["mcp", "remove", "maple", "--scope", "user"] in calls(claude)
    # Byte for byte what Claude Code would have written had MAPLE never been installed.
    expected = '{\n  "numStartups": 13,\n  "userID": "abc"\n}'
    assert (user_home / ".claude.json").read_text() == expected


def test_uninstall_keeps_an_mcp_servers_object_that_holds_other_servers(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    claude_code_json(user_home / ".claude.json", {"numStartups": 1})
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    data = json.loads((user_home / ".claude.json").read_text())
    data["mcpServers"]["github"] = {"type": "http", "url": "https://api.example/mcp"}
    claude_code_json(user_home / ".claude.json", data)
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert json.loads((user_home / ".claude.json").read_text()) == {
        "numStartups": 1,
        "mcpServers": {"github": {"type": "http", "url": "https://api.example/mcp"}},
    }


def test_project_scope_through_the_cli_removes_the_mcp_json_it_created(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    install.install(config, "project", project=project, claude=str(claude), user_home=user_home)
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["maple"]["command"] == "maple-memory"
    (project / ".mcp.json").write_text((project / ".mcp.json").read_text() + " ")  # touched since
    install.uninstall(config, "project", project=project, claude=str(claude), user_home=user_home)
    assert not (project / ".mcp.json").exists()


def test_a_server_registered_before_install_is_left_in_place_by_uninstall(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    env = home_env(config)  # the same home and database as the hooks install writes
    theirs = {"type": "stdio", "command": "/opt/maple/bin/maple-memory", "args": ["serve"], "env": env}
    before = claude_code_json(user_home / ".claude.json", {"mcpServers": {"maple": theirs}})
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert not [c for c in calls(claude) if c[:2] in (["mcp", "add"], ["mcp", "remove"])]
    assert (user_home / ".claude.json").read_bytes() == before


def test_reinstalling_from_a_moved_venv_replaces_maples_own_registration(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    before = claude_code_json(user_home / ".claude.json", {"numStartups": 1})
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    data = json.loads((user_home / ".claude.json").read_text())
    data["mcpServers"]["maple"]["command"] = "/gone/venv/bin/maple-memory"
    claude_code_json(user_home / ".claude.json", data)
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert [c[:3] for c in calls(claude) if c[:2] in (["mcp", "add"], ["mcp", "remove"])] == [
        ["mcp", "add", "--scope"],
        ["mcp", "remove", "maple"],
        ["mcp", "add", "--scope"],
    ]
    assert (
        json.loads((user_home / ".claude.json").read_text())["mcpServers"]["maple"]["command"]
        != "/gone/venv/bin/maple-memory"
    )
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert json.loads((user_home / ".claude.json").read_bytes()) == json.loads(before)


def test_switching_the_surface_path_replaces_the_hook_instead_of_adding_a_second(config: Config, user_home, project):
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="command")
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="mcp")
    surface = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    assert [h["type"] for h in surface] == ["mcp_tool"]


# -- rewriting JSON files ---------------------------------------------------------------------------


def test_rewriting_a_file_keeps_its_numbers_strings_and_layout_as_they_were():
    raw = '{\n    "cost": 1e-7,\n    "big": 1e+21,\n    "half": 0.50,\n    "n": -3,\n    "s": "é\\u0001\\"",\n    "e": [],\n    "o": {}\n}\n'
    path = Path("settings.json")
    assert jsonfile.dump(jsonfile.load(path, raw.encode()), raw.encode()).decode() == raw


# -- hook commands never block a prompt -------------------------------------------------------------


def run_hook(command: str, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    """Run a hook command the way Claude Code does: `sh -c`, the hook JSON on stdin."""
    return subprocess.run(
        ["sh", "-c", command],
        input=b'{"hook_event_name": "UserPromptSubmit", "prompt": "which port", "cwd": "/tmp"}',
        capture_output=True,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
    )


def test_an_installed_hook_whose_script_moved_away_exits_0_with_nothing_on_stdout(
    config: Config, user_home, project, tmp_path
):
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    (installed,) = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    # The checkout moved after install: the path in settings.json names no file any more.
    moved = installed["command"].replace(shlex.quote(str(RUN_PY)), shlex.quote(str(tmp_path / "moved" / "run.py")))
    assert moved != installed["command"]
    unguarded = run_hook(moved.removesuffix(" || true"), tmp_path)
    assert unguarded.returncode == 2 and b"can't open file" in unguarded.stderr  # would block the prompt
    result = run_hook(moved, tmp_path)
    assert result.returncode == 0 and result.stdout == b""


def test_a_hook_command_exits_0_when_its_interpreter_is_gone_or_it_crashes_early(config: Config, tmp_path):
    gone = hook_command(config, "user-prompt-submit", python=str(tmp_path / "old-venv" / "bin" / "python"))
    assert (run_hook(gone, tmp_path).returncode, run_hook(gone, tmp_path).stdout) == (0, b"")
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.exit(2)  # anything that fails before MAPLE's fail-open code\n")
    crashing = hook_command(config, "user-prompt-submit", script=crash)
    assert (run_hook(crashing, tmp_path).returncode, run_hook(crashing, tmp_path).stdout) == (0, b"")
    portable = hook_command(config, "user-prompt-submit", portable=True)
    sh = shutil.which("sh")
    result = subprocess.run([sh, "-c", portable], input=b"{}", capture_output=True, env={"PATH": str(tmp_path)})
    assert result.returncode == 0 and result.stdout == b""  # maple-memory not on PATH


def test_hooks_from_an_install_before_the_exit_0_guard_are_replaced_not_duplicated(config: Config, user_home, project):
    old = hook_command(config, "user-prompt-submit").removesuffix(" || true")
    write_json(
        user_home / ".claude" / "settings.json",
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": old, "timeout": 5}]}]}},
    )
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    (surface,) = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    assert surface["command"] == old + " || true"


# -- permissions ------------------------------------------------------------------------------------


def test_install_pre_approves_maples_tools_in_the_settings_file_it_writes_hooks_to(config: Config, user_home, project):
    write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    report = install.install(config, "user", project=project, claude=None, user_home=user_home)
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["Bash(git status)", "mcp__maple"]
    assert any(
        a == f"add mcp__maple to permissions.allow in {user_home / '.claude' / 'settings.json'}" for a in report.actions
    )
    assert any("pre-approves MAPLE's tools" in n for n in report.notes)
    install.install(config, "local", project=project, claude=None, user_home=user_home)
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["permissions"] == {"allow": ["mcp__maple"]}


def test_install_no_allow_leaves_permissions_alone(config: Config, user_home, project):
    write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    install.install(config, "user", project=project, claude=None, user_home=user_home, allow=False)
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == OTHER_SETTINGS["permissions"] and "SessionStart" in settings["hooks"]


def test_install_no_allow_after_an_install_takes_back_only_its_own_entry(config: Config, user_home, project):
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert json.loads((user_home / ".claude" / "settings.json").read_text())["permissions"] == {"allow": ["mcp__maple"]}
    install.install(config, "user", project=project, claude=None, user_home=user_home, allow=False)
    assert "permissions" not in json.loads((user_home / ".claude" / "settings.json").read_text())


def test_uninstall_removes_the_allow_entry_install_added_and_keeps_the_users_own(config: Config, user_home, project):
    write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    install.install(config, "user", project=project, claude=None, user_home=user_home)
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    settings["permissions"]["allow"].append("Read")  # edited since: uninstall must edit, not restore
    write_json(user_home / ".claude" / "settings.json", settings)
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    after = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert after["permissions"] == {"allow": ["Bash(git status)", "Read"]}


def test_an_allow_entry_the_user_had_before_install_survives_uninstall(config: Config, user_home, project):
    mine = {**OTHER_SETTINGS, "permissions": {"allow": ["mcp__maple"], "deny": []}}
    write_json(user_home / ".claude" / "settings.json", mine)
    report = install.install(config, "user", project=project, claude=None, user_home=user_home)
    assert any("already in permissions.allow" in n for n in report.notes)
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["allow"] == ["mcp__maple"]
    settings["model"] = "sonnet"  # edited since
    write_json(user_home / ".claude" / "settings.json", settings)
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    assert json.loads((user_home / ".claude" / "settings.json").read_text()) == {**mine, "model": "sonnet"}


def test_the_plugins_tools_have_their_own_permission_name():
    assert install.tool_permission() == "mcp__maple"
    assert install.tool_permission(install.PLUGIN_SERVER) == "mcp__plugin_maple_maple"


def test_a_reinstall_after_the_user_edited_settings_keeps_their_edit_through_uninstall(
    config: Config, user_home, project
):
    before = write_json(user_home / ".claude" / "settings.json", OTHER_SETTINGS)
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="command")
    settings = json.loads((user_home / ".claude" / "settings.json").read_text())
    settings["hooks"]["Notification"] = [{"hooks": [{"type": "command", "command": "notify-send hi"}]}]
    write_json(user_home / ".claude" / "settings.json", settings)
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="mcp")  # rewrites it
    install.uninstall(config, "user", project=project, claude=None, user_home=user_home)
    after = json.loads((user_home / ".claude" / "settings.json").read_text())
    assert after["hooks"]["Notification"] == settings["hooks"]["Notification"]
    del after["hooks"]["Notification"]
    assert after == json.loads(before)


# -- one home and one database for the server and every hook ---------------------------------------


def env_prefix(command: str) -> dict[str, str]:
    words = shlex.split(command)
    return dict(w.split("=", 1) for w in words[: next(i for i, w in enumerate(words) if "=" not in w)])


def test_the_server_and_every_hook_get_the_same_home_and_database(user_home, project, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    custom = config_mod.load(home=tmp_path / "my maple", database="data/memories.db")  # relative: made absolute
    expected = {"MAPLE_HOME": str(tmp_path / "my maple"), "MAPLE_DB": str(tmp_path / "data" / "memories.db")}
    install.install(custom, "user", project=project, claude=None, user_home=user_home)
    server = json.loads((user_home / ".claude.json").read_text())["mcpServers"]["maple"]
    assert {k: v for k, v in server["env"].items() if k.startswith("MAPLE_")} == expected
    commands = [h["command"] for g in hooks_of(user_home / ".claude" / "settings.json").values() for h in ours(g)]
    assert len(commands) == 5 and all(env_prefix(c) == expected for c in commands)
    # Through the claude CLI: the --env pairs of `claude mcp add` carry the same values.
    install.uninstall(custom, "user", project=project, claude=None, user_home=user_home)
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    install.install(custom, "local", project=project, claude=str(claude), user_home=user_home)
    (add,) = [c for c in calls(claude) if c[:2] == ["mcp", "add"]]
    pairs = dict(add[i + 1].split("=", 1) for i, a in enumerate(add) if a == "--env")
    assert {k: v for k, v in pairs.items() if k.startswith("MAPLE_")} == expected


def test_project_scope_names_no_home_database_or_path_of_this_machine(user_home, project, tmp_path):
    custom = config_mod.load(home=tmp_path / "my maple", database=str(tmp_path / "m.db"))
    report = install.install(custom, "project", project=project, claude=None, user_home=user_home)
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["maple"] == {
        "type": "stdio",
        "command": "maple-memory",
        "args": ["serve"],
    }
    shared = (project / ".claude" / "settings.json").read_text() + (project / ".mcp.json").read_text()
    assert str(tmp_path) not in shared
    assert any("each person's own MAPLE_HOME and MAPLE_DB" in n for n in report.notes)


# -- the commands -------------------------------------------------------------------------------


def test_the_install_command_prints_what_it_did(user_home, project, monkeypatch, capsys, home):
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert cli.main(["--project", str(project), "install", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would: add hooks" in out and not (user_home / ".claude").exists()
    # Every hook command it would write, the server it would start, and the permission.
    for event, group in install.hook_groups(Config(home=home), surface_via_tool=False).items():
        assert f"would: hook {event}: {group['hooks'][0]['command']}" in out
    assert f"would: register MCP server 'maple' in {user_home / '.claude.json'}: MAPLE_HOME=" in out
    assert f"would: add mcp__maple to permissions.allow in {user_home / '.claude' / 'settings.json'}" in out
    assert cli.main(["--project", str(project), "install"]) == 0
    assert (user_home / ".claude" / "settings.json").exists()
    capsys.readouterr()
    assert cli.main(["--project", str(project), "--json", "uninstall"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["scope"] == "user" and any("remove" in a for a in report["actions"])
    assert not (user_home / ".claude" / "settings.json").exists()


@pytest.mark.parametrize("client", install.CLIENTS)
def test_client_config_prints_each_clients_own_format(client, capsys, home):
    assert cli.main(["client-config", client]) == 0
    captured = capsys.readouterr()
    if client == "codex":
        data = tomllib.loads(captured.out)
        entry = data["mcp_servers"]["maple"]
        assert entry["startup_timeout_sec"] == 30
    else:
        data = json.loads(captured.out)
        entry = data["servers" if client == "vscode" else "mcpServers"]["maple"]
    assert entry["command"] and isinstance(entry["args"], list)
    assert "put this in" in captured.err


# -- the plugin ---------------------------------------------------------------------------------


def test_the_plugin_layout_is_valid_and_matches_what_install_writes():
    manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "maple"
    mcp = json.loads((ROOT / ".mcp.json").read_text())
    assert mcp["mcpServers"]["maple"] == {"command": "maple-memory", "args": ["serve"]}
    hooks = json.loads((ROOT / "hooks" / "hooks.json").read_text())
    expected = install.hook_groups(Config(), surface_via_tool=True, portable=True, server=install.PLUGIN_SERVER)
    assert hooks["hooks"] == {event: [group] for event, group in expected.items()}
    assert hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["server"] == "plugin:maple:maple"


def test_the_cli_routes_hook_events_to_the_hook_runner_and_always_exits_0(monkeypatch, home):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"not json")))
    assert cli.main(["hook", "user-prompt-submit"]) == 0
    assert "JSONDecodeError" in (home / "hooks.log").read_text()


# -- hooks and server on one home -----------------------------------------------------------------


def test_install_refuses_when_a_registered_server_names_another_home_than_its_hooks_would(
    config: Config, user_home, project, tmp_path, monkeypatch, capsys
):
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    theirs = {"type": "stdio", "command": "/opt/maple/bin/maple-memory", "args": ["serve"], "env": {}}
    before = claude_code_json(user_home / ".claude.json", {"mcpServers": {"maple": theirs}})
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", f"{claude.parent}:/usr/bin:/bin")
    assert cli.main(["--project", str(project), "install"]) == 1
    err = capsys.readouterr().err
    assert "already registered" in err and "with the default home" in err
    assert f"but this install's hooks would use MAPLE_HOME={config.home}" in err
    assert "claude mcp remove maple --scope user" in err
    assert (user_home / ".claude.json").read_bytes() == before and not (user_home / ".claude").exists()


def doctor_install_check(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    capsys.readouterr()
    cli.main([*flags, "--json", "doctor", "--no-model"])
    report = json.loads(capsys.readouterr().out)
    return {c["name"]: c for c in report["checks"]}["claude code install"]


def test_doctor_checks_that_the_installed_hooks_and_server_use_the_running_home(
    user_home, project, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    ours, other = tmp_path / "ours", tmp_path / "other"
    where = ["--project", str(project)]
    assert doctor_install_check(capsys, "--home", str(ours), *where)["ok"] is None  # not installed yet
    assert cli.main(["--home", str(ours), *where, "install"]) == 0
    check = doctor_install_check(capsys, "--home", str(ours), *where)
    assert check["ok"] is True and "user scope: 5 hooks and the server use this home" in check["detail"]
    check = doctor_install_check(capsys, "--home", str(other), *where)
    assert check["ok"] is False
    assert (
        f"user scope: installed for MAPLE_HOME={ours}, but this configuration is MAPLE_HOME={other}"
        in (check["detail"])
    )
    assert f"maple-memory --home {other} install --scope user" in check["fix"]
    # Hooks edited to another home than the server's: they no longer share their memories.
    settings = user_home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(f"MAPLE_HOME={ours}", f"MAPLE_HOME={other}"))
    check = doctor_install_check(capsys, "--home", str(ours), *where)
    assert check["ok"] is False and "they keep different memories" in check["detail"]


@pytest.mark.parametrize("via", ["files", "claude cli"])
def test_with_claude_config_dir_set_install_doctor_and_uninstall_use_the_files_claude_code_reads_there(
    user_home, project, tmp_path, monkeypatch, capsys, via
):
    # Claude Code 2.1.332 with CLAUDE_CONFIG_DIR reads settings.json and .claude.json in that folder
    # (`claude mcp add --scope user` was seen writing $CLAUDE_CONFIG_DIR/.claude.json), not in ~.
    config_dir = tmp_path / "claude-config"
    config_dir.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    before = claude_code_json(config_dir / ".claude.json", {"numStartups": 3, "projects": {}})
    claude = fake_claude(tmp_path, "2.1.332", user_home)
    monkeypatch.setenv("PATH", f"{claude.parent}:/usr/bin:/bin" if via == "claude cli" else "/usr/bin:/bin")
    where = ["--project", str(project)]
    assert cli.main([*where, "install"]) == 0
    assert ours(hooks_of(config_dir / "settings.json")["SessionEnd"])
    assert "maple" in json.loads((config_dir / ".claude.json").read_text())["mcpServers"]
    assert not (user_home / ".claude").exists() and not (user_home / ".claude.json").exists()
    check = doctor_install_check(capsys, *where)
    assert check["ok"] is True and "user scope: 5 hooks and the server" in check["detail"]
    capsys.readouterr()
    assert cli.main([*where, "uninstall"]) == 0
    assert (config_dir / ".claude.json").read_bytes() == before
    assert not (config_dir / "settings.json").exists()


def test_install_says_which_embedding_model_is_used_and_to_reindex_a_database_built_by_another(
    config: Config, user_home, project
):
    from dataclasses import replace

    from memory import embed
    from memory.store import NewMemory, Store

    report = install.install(config, "user", project=project, claude=None, user_home=user_home)
    wanted = embed.preferred_model(config.embedding_model)
    assert f"embedding model {wanted} ({embed.why_preferred(config.embedding_model)})" in report.notes
    with Store.open(config, embed.HashEmbedder(64)) as store:  # a database the old default built
        store.add(NewMemory("embedded by the old default"))
    switched = replace(config, embedding_model="hash-32")
    report = install.install(switched, "user", project=project, claude=None, user_home=user_home)
    (note,) = [n for n in report.notes if n.startswith("embedding model hash-32")]
    assert "the database's vectors are from hash-64" in note and "reindex` (re-embeds every memory" in note
