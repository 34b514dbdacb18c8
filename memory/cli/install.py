"""`maple-memory install | uninstall | client-config`: wire MAPLE into Claude Code and other clients.

install (scope user, project or local):
  1. registers the MCP server `maple`: through `claude mcp add` when the `claude` CLI is on PATH,
     else by writing the file Claude Code reads for that scope (~/.claude.json top-level
     `mcpServers` for user, `projects[<dir>].mcpServers` for local, `<project>/.mcp.json`);
  2. merges MAPLE's hooks into that scope's settings file (~/.claude/settings.json,
     .claude/settings.json, .claude/settings.local.json): SessionStart brief, UserPromptSubmit
     surface (an `mcp_tool` hook on the running server when Claude Code >= 2.1.118 is detected,
     else a command hook), Stop (async), PreCompact and SessionEnd harvest.
Every file it changes is backed up first (`<file>.maple-backup`), other hooks and servers are
left as they are, and running it twice changes nothing. What it did is recorded in
`<home>/install.json`; uninstall undoes exactly that: a file nobody touched since is restored
byte for byte from its backup, a file edited since loses only MAPLE's entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.app.commands import RUN_PY, hook_command, server_command
from memory.config import Config
from memory.errors import InvalidInput, MapleError

SERVER = "maple"
PLUGIN_SERVER = "plugin:maple:maple"
SURFACE_TOOL = "memory_surface"
MCP_TOOL_HOOKS_SINCE = (2, 1, 118)
SCOPES = ("user", "project", "local")
HOOK_EVENTS = {  # Claude Code event -> hooks/run.py argument
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
CLIENTS = ("claude-desktop", "cursor", "codex", "vscode", "gemini")


class InstallError(MapleError):
    """A settings file MAPLE will not touch, or a registration that failed."""


# -- what gets installed ----------------------------------------------------------------------


def hook_groups(
    config: Config, *, surface_via_tool: bool, portable: bool = False, server: str = SERVER
) -> dict[str, dict[str, Any]]:
    """MAPLE's hook groups, one per event, in Claude Code's settings shape (timeouts in seconds)."""

    def cmd(event: str, **extra: Any) -> dict[str, Any]:
        return {"type": "command", "command": hook_command(config, HOOK_EVENTS[event], portable=portable), **extra}

    if surface_via_tool:
        surface: dict[str, Any] = {
            "type": "mcp_tool",
            "server": server,
            "tool": SURFACE_TOOL,
            "input": {"prompt": "${prompt}", "cwd": "${cwd}", "session_id": "${session_id}"},
            "timeout": 5,
        }
    else:
        surface = cmd("UserPromptSubmit", timeout=5)
    return {
        "SessionStart": {"matcher": "startup|resume|clear|compact", "hooks": [cmd("SessionStart", timeout=5)]},
        "UserPromptSubmit": {"hooks": [surface]},
        "Stop": {"hooks": [cmd("Stop", **{"async": True, "timeout": 60})]},
        "PreCompact": {"matcher": "manual|auto", "hooks": [cmd("PreCompact", timeout=30)]},
        # No timeout: every SessionEnd hook shares Claude Code's 1.5 s, and a larger timeout here
        # would stretch that budget for all of them. The hook hands big backlogs to a background process.
        "SessionEnd": {"hooks": [cmd("SessionEnd")]},
    }


def is_ours(handler: Any) -> bool:
    """Whether a hook handler is one MAPLE installs (this or an earlier install, any path)."""
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "mcp_tool":
        return handler.get("tool") == SURFACE_TOOL and handler.get("server") in (SERVER, PLUGIN_SERVER)
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):  # VAR=value prefixes
        words.pop(0)
    if words[-2:] == ["||", "true"]:  # the exit-0 guard (earlier installs had none)
        words = words[:-2]
    if len(words) == 3 and words[:2] == ["maple-memory", "hook"]:
        return words[2] in HOOK_EVENTS.values()
    if len(words) == 3 and words[2] in HOOK_EVENTS.values() and re.search(r"hooks[/\\]run\.py$", words[1]):
        script = Path(words[1])
        maple = script.parent.parent / "memory"  # a MAPLE checkout, this layout or the one before
        return (
            script == RUN_PY
            or (maple / "store").is_dir()
            or (maple / "context.py").exists()
            or "maple" in words[1].lower()
        )
    return False


# -- Claude Code detection --------------------------------------------------------------------


def claude_version(claude: str | None) -> tuple[int, ...] | None:
    """`claude --version` as a tuple, or None when it cannot be run or read."""
    if not claude:
        return None
    try:
        out = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", out or "")
    return tuple(int(x) for x in m.groups()) if m else None


# -- JSON files, carefully --------------------------------------------------------------------


def _sha(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest() if data is not None else None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _load(path: Path, raw: bytes | None) -> dict[str, Any]:
    if raw is None or not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise InstallError(f"{path} is not valid JSON ({e}); fix it (or move it away), then run install again") from e
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds JSON {type(data).__name__}, not an object; fix it, then run install again")
    return data


def _dump(data: dict[str, Any], like: bytes | None) -> bytes:
    """JSON written the way the file was: its indentation, and its final newline."""
    indent: int | str = 2
    if like:
        m = re.search(rb"\n([ \t]+)\S", like)
        if m:
            ws = m.group(1).decode()
            indent = "\t" if ws.startswith("\t") else len(ws)
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    if like is None or like.endswith(b"\n"):
        text += "\n"
    return text.encode("utf-8")


def _write(path: Path, data: bytes, private: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".maple-tmp")
    mode = 0o600 if private else 0o644
    if path.exists():
        mode = path.stat().st_mode & 0o777
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # atomic: Claude Code may read it at any moment


# -- install / uninstall ----------------------------------------------------------------------


@dataclass
class Report:
    scope: str
    dry_run: bool
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "dry_run": self.dry_run, "actions": self.actions, "notes": self.notes}


@dataclass
class Paths:
    settings: Path
    mcp_file: Path
    mcp_keys: list[str]  # where the server entry lives inside mcp_file

    @classmethod
    def of(cls, scope: str, project: Path, user_home: Path) -> Paths:
        if scope == "user":
            return cls(user_home / ".claude" / "settings.json", user_home / ".claude.json", ["mcpServers"])
        if scope == "project":
            return cls(project / ".claude" / "settings.json", project / ".mcp.json", ["mcpServers"])
        if scope == "local":
            return cls(
                project / ".claude" / "settings.local.json",
                user_home / ".claude.json",
                ["projects", str(project), "mcpServers"],
            )
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


def _run(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # `claude mcp` reads the project (local and project scopes) from its working directory.
    return subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=cwd)


def install(
    config: Config,
    scope: str = "user",
    *,
    project: Path | None = None,
    dry_run: bool = False,
    surface: str = "auto",
    claude: str | None | bool = True,
    user_home: Path | None = None,
    run: Runner = _run,
) -> Report:
    """Register the server and merge the hooks for `scope` (see the module doc).

    `surface`: "auto" (mcp_tool when Claude Code >= 2.1.118 is found), "mcp" or "command".
    `claude`: the CLI to use (True: look on PATH; None/False: write the files directly).
    """
    project = (project or Path.cwd()).resolve()
    user_home = user_home or Path.home()
    paths = Paths.of(scope, project, user_home)
    cli = shutil.which("claude") if claude is True else (claude or None)
    version = claude_version(cli)
    if surface not in ("auto", "mcp", "command"):
        raise InvalidInput(f"surface must be auto, mcp or command, got {surface!r}")
    via_tool = surface == "mcp" or (surface == "auto" and version is not None and version >= MCP_TOOL_HOOKS_SINCE)
    report = Report(scope, dry_run)
    report.notes.append(
        f"UserPromptSubmit: {'mcp_tool hook on the running server' if via_tool else 'command hook'}"
        + (f" (Claude Code {'.'.join(map(str, version))})" if version else " (claude CLI not found)" if not cli else "")
    )
    portable = scope == "project"
    if portable and not shutil.which("maple-memory"):
        report.notes.append(
            "maple-memory is not on PATH: project hooks call `maple-memory hook ...`; "
            "install it (e.g. `uv tool install maple-memory`) for everyone using this project"
        )
    manifest = _manifest(config)
    record: dict[str, Any] = manifest.get(scope, {}) if isinstance(manifest.get(scope), dict) else {}
    command, args, env = server_command(config)
    entry: dict[str, Any] = {"type": "stdio", "command": command, "args": args}
    if env:
        entry["env"] = env
    record["mcp"] = _register(
        paths, scope, entry, cli, lambda a: run(a, cwd=project), dry_run, report, record.get("mcp")
    )
    record["settings"] = _merge_hooks(
        paths.settings,
        hook_groups(config, surface_via_tool=via_tool, portable=portable),
        dry_run,
        report,
        record.get("settings"),
    )
    if not dry_run:
        manifest[scope] = record
        _save_manifest(config, manifest)
    return report


def _register(
    paths: Paths,
    scope: str,
    entry: dict[str, Any],
    cli: str | None,
    run: Runner,
    dry_run: bool,
    report: Report,
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    if cli:
        exists = run([cli, "mcp", "get", SERVER]).returncode == 0
        if exists:
            report.actions.append(
                f"MCP server '{SERVER}' is already registered (`claude mcp get {SERVER}`); left as is"
            )
            return previous if previous and previous.get("method") == "cli" else {"method": "cli", "added": False}
        args = [cli, "mcp", "add", "--scope", scope, SERVER]  # the name before --env, which takes many pairs
        for k, v in entry.get("env", {}).items():
            args += ["--env", f"{k}={v}"]
        args += ["--", entry["command"], *entry["args"]]
        report.actions.append("run " + shlex.join(args))
        if not dry_run:
            done = run(args)
            if done.returncode != 0:
                raise InstallError(
                    f"`claude mcp add` failed: {(done.stderr or done.stdout).strip()}; "
                    f"register by hand with: {shlex.join(args)}"
                )
        return {"method": "cli", "added": True, "scope": scope}
    raw = _read(paths.mcp_file)
    data = _load(paths.mcp_file, raw)
    node = data
    created_keys = []
    for key in paths.mcp_keys:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
            created_keys.append(key)
        if not isinstance(child, dict):
            raise InstallError(f"{paths.mcp_file}: '{key}' is not an object; fix it, then run install again")
        node = child
    if previous and previous.get("method") == "file":
        record = dict(previous)  # keep what was there before the first install
    else:
        record = {
            "method": "file",
            "file": str(paths.mcp_file),
            "had": node.get(SERVER),
            "created": raw is None,
            "created_keys": created_keys,
            "backup": None,
        }
    if node.get(SERVER) == entry:
        report.actions.append(f"MCP server '{SERVER}' already in {paths.mcp_file}")
        return record
    node[SERVER] = entry
    new = _dump(data, raw)
    if not dry_run and not record.get("backup"):
        record["backup"] = _backup(paths.mcp_file, raw, report)
    report.actions.append(
        f"register MCP server '{SERVER}' in {paths.mcp_file}"
        + (" (replacing the existing entry)" if record.get("had") is not None else "")
    )
    if not dry_run:
        _write(paths.mcp_file, new, private=paths.mcp_file.name == ".claude.json")
        record["after"] = _sha(new)
    return record


def _merge_hooks(
    path: Path, groups: dict[str, dict[str, Any]], dry_run: bool, report: Report, previous: dict[str, Any] | None
) -> dict[str, Any]:
    raw = _read(path)
    data = _load(path, raw)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; fix it, then run install again")
    changed = []
    for event, group in groups.items():
        lst = hooks.setdefault(event, [])
        if not isinstance(lst, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it, then run install again")
        if group in lst:
            continue
        # An earlier MAPLE install (another path, or command <-> mcp_tool): replace ours only.
        for g in lst:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                g["hooks"] = [h for h in g["hooks"] if not is_ours(h)]
        lst[:] = [g for g in lst if not (isinstance(g, dict) and g.get("hooks") == [])]
        lst.append(group)
        changed.append(event)
    # The first install's record is kept: its backup is the file as it was before MAPLE.
    record = dict(previous) if previous else {"file": str(path), "created": raw is None, "backup": None}
    if not changed:
        report.actions.append(f"hooks already in {path}")
        return record
    new = _dump(data, raw)
    if not dry_run and not record.get("backup") and not record.get("created"):
        record["backup"] = _backup(path, raw, report)
    report.actions.append(f"add hooks {', '.join(changed)} to {path}")
    if not dry_run:
        _write(path, new, private=False)
        record["after"] = _sha(new)
    return record


def _backup(path: Path, raw: bytes | None, report: Report) -> str | None:
    if raw is None:
        return None
    backup = path.with_name(path.name + ".maple-backup")
    _write(backup, raw, private=True)
    report.actions.append(f"backed up {path} to {backup}")
    return str(backup)


def uninstall(
    config: Config,
    scope: str = "user",
    *,
    project: Path | None = None,
    dry_run: bool = False,
    claude: str | None | bool = True,
    user_home: Path | None = None,
    run: Runner = _run,
) -> Report:
    """Undo `install` for `scope`: what it added goes, everything else stays (see the module doc)."""
    project = (project or Path.cwd()).resolve()
    user_home = user_home or Path.home()
    paths = Paths.of(scope, project, user_home)
    cli = shutil.which("claude") if claude is True else (claude or None)
    manifest = _manifest(config)
    record = manifest.get(scope) if isinstance(manifest.get(scope), dict) else {}
    report = Report(scope, dry_run)
    if not record:
        report.notes.append(f"no record of an install at scope {scope}; removing MAPLE entries found")
    mcp = record.get("mcp") or {}
    if mcp.get("method") == "cli":
        if mcp.get("added") and cli:
            args = [cli, "mcp", "remove", SERVER, "--scope", mcp.get("scope", scope)]
            report.actions.append("run " + shlex.join(args))
            if not dry_run:
                run(args, cwd=project)
        else:
            report.actions.append(f"MCP server '{SERVER}' was registered before MAPLE's install; left as is")
    else:
        _undo_file(paths.mcp_file, mcp, dry_run, report, lambda data: _remove_server(data, mcp, paths))
    _undo_file(paths.settings, record.get("settings") or {}, dry_run, report, _remove_hooks)
    if not dry_run:
        manifest.pop(scope, None)
        _save_manifest(config, manifest)
    return report


def _undo_file(
    path: Path, rec: dict[str, Any], dry_run: bool, report: Report, surgery: Callable[[dict[str, Any]], bool]
) -> None:
    raw = _read(path)
    if raw is None:
        return
    if rec.get("after") and _sha(raw) == rec["after"]:  # untouched since install: put it back exactly
        backup = Path(rec["backup"]) if rec.get("backup") else None
        if rec.get("created"):
            report.actions.append(f"remove {path} (MAPLE created it)")
            if not dry_run:
                path.unlink()
            return
        if backup is not None and backup.exists():
            report.actions.append(f"restore {path} from {backup}")
            if not dry_run:
                _write(path, backup.read_bytes(), private=path.name == ".claude.json")
                backup.unlink()
            return
    data = _load(path, raw)
    if not surgery(data):
        return
    report.actions.append(f"remove MAPLE's entries from {path}")
    if not dry_run:
        _write(path, _dump(data, raw), private=path.name == ".claude.json")


def _remove_server(data: dict[str, Any], rec: dict[str, Any], paths: Paths) -> bool:
    chain: list[tuple[dict[str, Any], str]] = []
    node: Any = data
    for key in paths.mcp_keys:
        if not isinstance(node, dict) or not isinstance(node.get(key), dict):
            return False
        chain.append((node, key))
        node = node[key]
    if SERVER not in node:
        return False
    if rec.get("had") is not None:
        node[SERVER] = rec["had"]  # what was there before MAPLE's install
    else:
        del node[SERVER]
    created = set(rec.get("created_keys") or [])
    for parent, key in reversed(chain):  # containers that only MAPLE's entry needed
        if key in created and parent[key] == {}:
            del parent[key]
    return True


def _remove_hooks(data: dict[str, Any]) -> bool:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    changed = False
    for event in list(hooks):
        lst = hooks[event]
        if not isinstance(lst, list):
            continue
        for g in lst:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(is_ours(h) for h in g["hooks"]):
                g["hooks"] = [h for h in g["hooks"] if not is_ours(h)]
                changed = True
        kept = [g for g in lst if not (isinstance(g, dict) and g.get("hooks") == [])]
        if len(kept) != len(lst):
            hooks[event] = kept
        if hooks[event] == []:
            del hooks[event]
    if changed and hooks == {}:
        del data["hooks"]
    return changed


def _manifest(config: Config) -> dict[str, Any]:
    path = config.home / "install.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise InstallError(f"{path} is unreadable ({e}); move it away to start over") from e
    return data if isinstance(data, dict) else {}


def _save_manifest(config: Config, manifest: dict[str, Any]) -> None:
    config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
    _write(config.home / "install.json", (json.dumps(manifest, indent=2) + "\n").encode(), private=True)


# -- other clients ----------------------------------------------------------------------------


def client_config(config: Config, client: str) -> tuple[str, str]:
    """(text to paste, where it goes) registering MAPLE with another MCP client."""
    command, args, env = server_command(config)
    base: dict[str, Any] = {"command": command, "args": args}
    if env:
        base["env"] = env
    if client == "claude-desktop":
        where = (
            "macOS: ~/Library/Application Support/Claude/claude_desktop_config.json; "
            "Windows: %APPDATA%\\Claude\\claude_desktop_config.json (merge into mcpServers)"
        )
        return json.dumps({"mcpServers": {SERVER: base}}, indent=2), where
    if client == "cursor":
        return (
            json.dumps({"mcpServers": {SERVER: {"type": "stdio", **base}}}, indent=2),
            "~/.cursor/mcp.json (all projects) or .cursor/mcp.json (one project); merge into mcpServers",
        )
    if client == "vscode":
        return (
            json.dumps({"servers": {SERVER: {"type": "stdio", **base}}}, indent=2),
            ".vscode/mcp.json or your user profile's mcp.json (the key is 'servers'); merge into servers",
        )
    if client == "gemini":
        return (
            json.dumps({"mcpServers": {SERVER: {**base, "timeout": 30000, "trust": False}}}, indent=2),
            "~/.gemini/settings.json or .gemini/settings.json; merge into mcpServers",
        )
    if client == "codex":
        lines = [
            f"[mcp_servers.{SERVER}]",
            f"command = {_toml(command)}",
            f"args = [{', '.join(_toml(a) for a in args)}]",
            "startup_timeout_sec = 30",
            "tool_timeout_sec = 60",
            "enabled = true",
        ]
        if env:
            lines += ["", f"[mcp_servers.{SERVER}.env]", *(f"{k} = {_toml(v)}" for k, v in env.items())]
        add = [
            "codex",
            "mcp",
            "add",
            SERVER,
            *(x for k, v in env.items() for x in ("--env", f"{k}={v}")),
            "--",
            command,
            *args,
        ]
        return "\n".join(lines), f"~/.codex/config.toml (or: {shlex.join(add)})"
    raise InvalidInput(f"unknown client {client!r}; choose one of {', '.join(CLIENTS)}")


def _toml(s: str) -> str:
    return json.dumps(s)  # a JSON string is a valid TOML basic string
