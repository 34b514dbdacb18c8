"""memory.install and its commands: Claude Code settings merged and restored exactly, the server
registered through files or the `claude` CLI, other clients' formats, and the plugin layout."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
import tomllib

from memory import cli
from memory.cli import install
from memory.config import Config

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
    with pytest.raises(install.InstallError, match="not valid JSON"):
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
    assert ours(hooks["UserPromptSubmit"])[0]["type"] == "command"  # no claude CLI: no version to trust
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


def fake_claude(tmp_path: Path, version: str) -> Path:
    """An executable standing in for the `claude` CLI: prints a version, records its arguments,
    and knows whether `maple` was added (a test double for a program we cannot run here)."""
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"""#!{sys.executable}
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "calls.jsonl"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
with open(os.path.join(here, "cwds.txt"), "a") as f:
    f.write(os.getcwd() + "\\n")
state = os.path.join(here, "added")
if sys.argv[1:] == ["--version"]:
    print("{version} (Claude Code)")
elif sys.argv[1:3] == ["mcp", "get"]:
    sys.exit(0 if os.path.exists(state) else 1)
elif sys.argv[1:3] == ["mcp", "add"]:
    open(state, "w").close()
elif sys.argv[1:3] == ["mcp", "remove"]:
    os.remove(state)
""")
    script.chmod(0o755)
    return script


def calls(script: Path) -> list[list[str]]:
    return [json.loads(line) for line in (script.parent / "calls.jsonl").read_text().splitlines()]


def test_with_a_recent_claude_cli_the_server_is_added_through_it_and_prompts_use_an_mcp_tool_hook(
    config: Config, user_home, project, tmp_path
):
    claude = fake_claude(tmp_path, "2.1.240")
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    add = [c for c in calls(claude) if c[:2] == ["mcp", "add"]]
    assert len(add) == 1 and add[0][:5] == ["mcp", "add", "--scope", "user", "maple"] and "--" in add[0]
    assert not (user_home / ".claude.json").exists()  # the CLI owns that file
    surface = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])[0]
    assert surface == {
        "type": "mcp_tool",
        "server": "maple",
        "tool": "memory_surface",
        "timeout": 5,
        "input": {"prompt": "${prompt}", "cwd": "${cwd}", "session_id": "${session_id}"},
    }
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert len([c for c in calls(claude) if c[:2] == ["mcp", "add"]]) == 1  # already registered
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert calls(claude)[-1] == ["mcp", "remove", "maple", "--scope", "user"]


def test_local_scope_through_the_cli_runs_it_in_the_project(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.240")
    install.install(config, "local", project=project, claude=str(claude), user_home=user_home)
    add = [c for c in calls(claude) if c[:2] == ["mcp", "add"]]
    assert add[0][:5] == ["mcp", "add", "--scope", "local", "maple"]
    assert (claude.parent / "cwds.txt").read_text().splitlines()[-1] == str(project)
    assert (project / ".claude" / "settings.local.json").exists()


def test_an_older_claude_cli_gets_the_command_hook(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.100")
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])[0]["type"] == "command"


def test_switching_the_surface_path_replaces_the_hook_instead_of_adding_a_second(config: Config, user_home, project):
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="command")
    install.install(config, "user", project=project, claude=None, user_home=user_home, surface="mcp")
    surface = ours(hooks_of(user_home / ".claude" / "settings.json")["UserPromptSubmit"])
    assert [h["type"] for h in surface] == ["mcp_tool"]


def test_a_server_registered_before_install_is_left_in_place_by_uninstall(config: Config, user_home, project, tmp_path):
    claude = fake_claude(tmp_path, "2.1.240")
    (claude.parent / "added").touch()
    install.install(config, "user", project=project, claude=str(claude), user_home=user_home)
    install.uninstall(config, "user", project=project, claude=str(claude), user_home=user_home)
    assert not [c for c in calls(claude) if c[:2] in (["mcp", "add"], ["mcp", "remove"])]


# -- the commands -------------------------------------------------------------------------------


def test_the_install_command_prints_what_it_did(user_home, project, monkeypatch, capsys, home):
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert cli.main(["--project", str(project), "install", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would: add hooks" in out and not (user_home / ".claude").exists()
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
