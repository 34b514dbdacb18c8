"""`maple-memory install | uninstall | client-config`: wire MAPLE into Claude Code and other clients.

install (scope user, project or local):
  1. registers the MCP server `maple`: through `claude mcp add` when the `claude` CLI is on PATH,
     else by writing the file Claude Code reads for that scope (~/.claude.json top-level
     `mcpServers` for user, `projects[<dir>].mcpServers` for local, `<project>/.mcp.json`);
  2. merges MAPLE's hooks into that scope's settings file (~/.claude/settings.json,
     .claude/settings.json, .claude/settings.local.json): SessionStart brief, UserPromptSubmit
     surface (a command hook, which works on every Claude Code with hooks; `--surface mcp` makes it
     an `mcp_tool` hook on the running server, Claude Code >= 2.1.118), Stop (async), PreCompact
     and SessionEnd harvest. Every hook command exits 0 whatever fails (see `hook_command`);
  3. pre-approves MAPLE's tools in that same settings file (`permissions.allow` gets `mcp__maple`:
     without it `claude -p` denies them), unless told not to.
With $CLAUDE_CONFIG_DIR set, Claude Code reads the user settings and .claude.json inside that folder,
and so do install, uninstall and doctor (see `claude_files`).
Every file it changes is backed up first (`<file>.maple-backup`), other hooks, permissions and
servers are left as they are, and running it twice changes nothing. What it did is recorded in
`<home>/install.json`; uninstall undoes exactly that: a file nobody touched since is restored
byte for byte from its backup, a file edited since loses only what MAPLE added (an `mcpServers`
object that only MAPLE's entry needed included, which `claude mcp remove` leaves behind).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import memory.cli.jsonfile as jsonfile
from memory import remote
from memory.app.commands import RUN_PY, home_env, hook_command, server_command, team_url_left_out
from memory.config import Config
from memory.errors import InvalidInput, MapleError

SERVER = "maple"
PLUGIN_SERVER = "plugin:maple:maple"
SURFACE_TOOL = "memory_surface"
SURFACES = ("auto", "command", "mcp")
MCP_TOOL_HOOKS_SINCE = (2, 1, 118)
SCOPES = ("user", "project", "local")
HOOK_EVENTS = {  # Claude Code event -> hooks/run.py argument
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
# The Claude Code release that introduced each event (hooks themselves came with 1.0.38).
EVENT_SINCE = {
    "Stop": (1, 0, 38),
    "PreCompact": (1, 0, 48),
    "UserPromptSubmit": (1, 0, 54),
    "SessionStart": (1, 0, 62),
    "SessionEnd": (1, 0, 85),
}
CLIENTS = ("claude-desktop", "cursor", "codex", "vscode", "gemini")

# A password never goes into Claude Code's settings: the URL must reach its processes another way.
TEAM_URL_NOTE = (
    "the team database {url} comes from MAPLE_DATABASE_URL with a password, which MAPLE does not copy into "
    'Claude Code\'s settings: put "database" in {config} (MAPLE reads it there), or keep the password in '
    "~/.pgpass and the URL without it in MAPLE_DATABASE_URL"
)


class InstallError(MapleError):
    """A settings file MAPLE will not touch, or a registration that failed (a file that is not JSON
    raises jsonfile.FileError, also a MapleError)."""


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


def tool_permission(server: str = SERVER) -> str:
    """The `permissions.allow` entry that pre-approves every tool of `server`: `mcp__maple`, or
    `mcp__plugin_maple_maple` for the plugin's server (`plugin:maple:maple`)."""
    if server.startswith("plugin:"):
        _, plugin, name = server.split(":", 2)
        return f"mcp__plugin_{plugin}_{name}"
    return f"mcp__{server}"


def describe_hook(event: str, group: dict[str, Any]) -> list[str]:
    """One line per handler of a hook group, for reports: what Claude Code will run."""
    lines = []
    for h in group["hooks"]:
        what = f"mcp_tool {h['server']} {h['tool']}" if h.get("type") == "mcp_tool" else h.get("command", json.dumps(h))
        extras = [f"matcher {group['matcher']}"] if group.get("matcher") else []
        extras += ["async"] if h.get("async") else []
        extras += [f"timeout {h['timeout']} s"] if "timeout" in h else []
        lines.append(f"hook {event}: {what}" + (f" ({', '.join(extras)})" if extras else ""))
    return lines


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
    if len(words) == 4 and words[1] == "-S":  # python -S run.py EVENT (earlier installs had no -S)
        words = [words[0], *words[2:]]
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


def _version(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


# -- install / uninstall ----------------------------------------------------------------------


@dataclass
class Report:
    scope: str
    dry_run: bool
    actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "dry_run": self.dry_run, "actions": self.actions, "notes": self.notes}


def claude_files(user_home: Path, env: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """Claude Code's own folder (user settings.json, projects/) and its .claude.json (MCP servers of
    the user and local scopes). With $CLAUDE_CONFIG_DIR set, Claude Code 2.1.332 keeps both inside
    that folder (`claude mcp add --scope user` writes $CLAUDE_CONFIG_DIR/.claude.json); else
    ~/.claude and ~/.claude.json."""
    given = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR")
    if given:
        folder = Path(given).expanduser().absolute()
        return folder, folder / ".claude.json"
    return user_home / ".claude", user_home / ".claude.json"


@dataclass
class Paths:
    settings: Path
    mcp_file: Path
    mcp_keys: list[str]  # where the server entries live inside mcp_file

    @classmethod
    def of(cls, scope: str, project: Path, user_home: Path) -> Paths:
        folder, registry = claude_files(user_home)
        if scope == "user":
            return cls(folder / "settings.json", registry, ["mcpServers"])
        if scope == "project":
            return cls(project / ".claude" / "settings.json", project / ".mcp.json", ["mcpServers"])
        if scope == "local":
            return cls(project / ".claude" / "settings.local.json", registry, ["projects", str(project), "mcpServers"])
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
    allow: bool = True,
    claude: str | None | bool = True,
    user_home: Path | None = None,
    run: Runner = _run,
) -> Report:
    """Register the server, merge the hooks and pre-approve the tools for `scope` (see the module doc).

    `surface`: "auto" or "command" (a command hook), or "mcp" (an mcp_tool hook, Claude Code >= 2.1.118).
    `allow`: add `mcp__maple` to the settings file's `permissions.allow` (False: leave permissions alone,
    and take back an entry an earlier install added).
    `claude`: the CLI to use (True: look on PATH; None/False: write the files directly).
    """
    project = (project or Path.cwd()).resolve()
    user_home = user_home or Path.home()
    paths = Paths.of(scope, project, user_home)
    if surface not in SURFACES:
        raise InvalidInput(f"surface must be one of {', '.join(SURFACES)}, got {surface!r}")
    cli = shutil.which("claude") if claude is True else (claude or None)
    version = claude_version(cli)
    via_tool = surface == "mcp"
    if via_tool and version is not None and version < MCP_TOOL_HOOKS_SINCE:
        raise InvalidInput(
            f"--surface mcp needs Claude Code {_version(MCP_TOOL_HOOKS_SINCE)} or later (mcp_tool hooks); "
            f"this is {_version(version)}: update Claude Code, or install with --surface command"
        )
    report = Report(scope, dry_run)
    found = (
        f"Claude Code {_version(version)}"
        if version
        else "claude CLI not found"
        if not cli
        else "claude --version unreadable"
    )
    report.notes.append(
        "UserPromptSubmit: "
        + ("mcp_tool hook on the running server's memory_surface" if via_tool else "command hook")
        + f" ({found})"
    )
    if version is not None:
        missing = [e for e, since in EVENT_SINCE.items() if version < since]
        if missing:
            report.notes.append(
                f"Claude Code {_version(version)} has no {', '.join(missing)} hook "
                f"(that needs {_version(max(EVENT_SINCE[e] for e in missing))}): update Claude Code"
            )
    portable = scope == "project"
    if portable and not shutil.which("maple-memory"):
        report.notes.append(
            "maple-memory is not on PATH: project hooks call `maple-memory hook ...`; "
            "install it (e.g. `uv tool install maple-memory`) for everyone using this project"
        )
    if team_url_left_out(config):
        report.notes.append(TEAM_URL_NOTE.format(config=config.home / "config.json", url=config.where))
    if portable and home_env(config):
        report.notes.append(
            "project scope: the shared files name no paths of this machine, so the server and hooks use each "
            f"person's own MAPLE_HOME and MAPLE_DB, not {', '.join(f'{k}={v}' for k, v in home_env(config).items())}; "
            "use --scope local to pin them for you alone"
        )
    manifest = _manifest(config)
    record: dict[str, Any] = manifest.get(scope, {}) if isinstance(manifest.get(scope), dict) else {}
    command, args, env = server_command(config, portable=portable)
    entry: dict[str, Any] = {"type": "stdio", "command": command, "args": args}
    if env:
        entry["env"] = env
    # The server first, then the hooks: `claude mcp get/add` fire SessionEnd hooks of their own.
    record["mcp"] = _register(
        paths, scope, entry, cli, lambda a: run(a, cwd=project), dry_run, report, record.get("mcp")
    )
    record["settings"] = _merge_settings(
        paths.settings,
        hook_groups(config, surface_via_tool=via_tool, portable=portable),
        [tool_permission(SERVER)] if allow else [],
        dry_run,
        report,
        record.get("settings"),
    )
    if not allow:
        report.notes.append(
            f"MAPLE's tools are not pre-approved (--no-allow): Claude Code asks before each one, and `claude -p` "
            f"denies them unless run with --allowedTools {tool_permission(SERVER)}"
        )
    if not dry_run:
        manifest[scope] = record
        _save_manifest(config, manifest)
    report.notes.append(model_note(config))
    history = history_note(config, project, user_home)
    if history:
        report.notes.append(history)
    return report


def model_note(config: Config) -> str:
    """Which embedding model MAPLE uses and why, and the command that switches a database built by
    another one (install never re-embeds: that can take minutes)."""
    from memory import embed
    from memory.store import stored_model

    choice = embed.choice_for(config, stored_model(config))
    home = "" if config.home == Path("~/.maple").expanduser() else f" --home {shlex.quote(str(config.home))}"
    problem = embed.model_problem(config.embedding_model)
    if problem:  # no reindex can switch to it: say so, not "reindex"
        return (
            f"embedding model {choice.wanted!r} cannot load: {problem[0]}; {problem[1]} "
            f"(`maple-memory{home} doctor` checks it)"
        )
    note = f"embedding model {choice.wanted} ({embed.why_chosen(choice, config.embedding_model)})"
    if not choice.switch_pending:
        return note
    return (
        f"{note}; the database's vectors are from {choice.stored[0] if choice.stored else 'another model'}, so "
        f"search uses that model until you run `maple-memory{home} reindex` (re-embeds every memory, resumable; "
        "keyword search keeps working meanwhile)"
    )


def history_note(config: Config, project: Path, user_home: Path) -> str | None:
    """What install says of the project's past sessions: how many Claude Code still keeps that
    MAPLE has not read, and the command that reads them. Install never starts a long backfill."""
    from memory.app import backfill
    from memory.scope import project_scope

    try:
        left = backfill.unharvested(config, claude_files(user_home)[0], project_scope(project))
    except Exception:  # noqa: BLE001 - a count for a note must never fail the install
        return None
    if not left["count"]:
        return None
    home = "" if config.home == Path("~/.maple").expanduser() else f" --home {shlex.quote(str(config.home))}"
    days = max(0, int(left["days_left"]))
    return (
        f"found {left['count']} past Claude Code session(s) of this project that MAPLE has not read; Claude Code "
        f"deletes the oldest in {days} day(s) (cleanupPeriodDays {left['cleanup_days']}). "
        f"`maple-memory{home} backfill` in {project} puts them into memory (add --dry-run to see what it would read)"
    )


def maple_env(entry: Any) -> dict[str, str]:
    """The MAPLE_HOME and MAPLE_DB a server entry or a hook command sets (a home that is the
    default ~/.maple counts as none)."""
    if isinstance(entry, str):  # a hook command: its VAR=value prefix
        try:
            words = shlex.split(entry)
        except ValueError:
            return {}
        env = {}
        for w in words:
            if not re.match(r"^[A-Za-z_]\w*=", w):
                break
            k, v = w.split("=", 1)
            env[k] = v
    else:
        env = entry.get("env") if isinstance(entry, dict) else None
        env = env if isinstance(env, dict) else {}
    out = {k: str(env[k]) for k in ("MAPLE_HOME", "MAPLE_DB", "MAPLE_DATABASE_URL") if env.get(k)}
    if out.get("MAPLE_HOME") and Path(out["MAPLE_HOME"]).expanduser() == Path("~/.maple").expanduser():
        del out["MAPLE_HOME"]
    return out


def describe_env(env: dict[str, str]) -> str:
    if not env:
        return "the default home (~/.maple, or MAPLE_HOME from Claude Code's environment)"
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))


def installed(config: Config, project: Path, user_home: Path | None = None) -> list[dict[str, Any]]:
    """Where MAPLE is installed in Claude Code for `project` (user, project and local scope), and
    whether each installation's hooks and server keep their memories where `config` does:
    [{scope, hooks, server, problem}], `problem` None when they agree."""
    user_home = user_home or Path.home()
    out = []
    for scope in SCOPES:
        paths = Paths.of(scope, project.resolve(), user_home)
        try:
            settings = jsonfile.load(paths.settings, jsonfile.read(paths.settings))
            registry = jsonfile.load(paths.mcp_file, jsonfile.read(paths.mcp_file))
        except MapleError:
            continue  # not JSON: not something MAPLE installed into
        groups = settings.get("hooks") if isinstance(settings.get("hooks"), dict) else {}
        commands = [
            h["command"]
            for lst in groups.values()
            if isinstance(lst, list)
            for g in lst
            if isinstance(g, dict) and isinstance(g.get("hooks"), list)
            for h in g["hooks"]
            if is_ours(h) and isinstance(h.get("command"), str)
        ]
        server = jsonfile.node(registry, [*paths.mcp_keys, SERVER])
        if not commands and server is None:
            continue
        hook_envs = {json.dumps(maple_env(c), sort_keys=True) for c in commands}
        server_env = maple_env(server) if server is not None else None
        want = {} if scope == "project" else maple_env({"env": home_env(config)})
        problem = None
        if len(hook_envs) > 1:
            problem = f"MAPLE's hooks in {paths.settings} name different homes"
        elif commands and server_env is not None and json.loads(hook_envs.pop()) != server_env:
            problem = (
                f"the hooks in {paths.settings} use {describe_env(maple_env(commands[0]))} but the server in "
                f"{paths.mcp_file} uses {describe_env(server_env)}: they keep different memories"
            )
        elif (maple_env(commands[0]) if commands else server_env) != want:
            found = maple_env(commands[0]) if commands else server_env
            problem = f"installed for {describe_env(found or {})}, but this configuration is {describe_env(want)}"
        out.append({"scope": scope, "hooks": len(commands), "server": server is not None, "problem": problem})
    return out


def _same_server(a: Any, b: dict[str, Any]) -> bool:
    """Whether a registered entry starts what `b` starts (Claude Code writes `"env": {}` for none)."""
    if not isinstance(a, dict):
        return False
    return (a.get("command"), a.get("args"), a.get("env") or {}) == (b["command"], b["args"], b.get("env") or {})


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
    """Register the server; the record says how, and what uninstall needs to undo it exactly."""
    if cli and not (previous and previous.get("method") == "file"):  # an earlier file install stays one
        return _register_cli(paths, scope, entry, cli, run, dry_run, report, previous)
    return _register_file(paths, entry, dry_run, report, previous)


def _register_cli(
    paths: Paths,
    scope: str,
    entry: dict[str, Any],
    cli: str,
    run: Runner,
    dry_run: bool,
    report: Report,
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    raw = jsonfile.read(paths.mcp_file)
    current = jsonfile.node(jsonfile.load(paths.mcp_file, raw), [*paths.mcp_keys, SERVER])
    ours = previous if previous and previous.get("method") == "cli" and previous.get("added") else None
    # Read the file first: `claude mcp get` starts the server to check it, and fires SessionEnd hooks.
    if current is not None or run([cli, "mcp", "get", SERVER]).returncode == 0:
        if ours is None and current is not None and maple_env(current) != maple_env(entry):
            raise InstallError(
                f"the MCP server '{SERVER}' is already registered in {paths.mcp_file} with "
                f"{describe_env(maple_env(current))}, but this install's hooks would use "
                f"{describe_env(maple_env(entry))}: the server and the hooks would keep different "
                f"memories. Remove that registration (`{Path(cli).name} mcp remove {SERVER} --scope {scope}`) "
                "and run install again, or install with the home it names (`maple-memory --home DIR install`)"
            )
        if ours is None or current is None or _same_server(current, entry):
            report.actions.append(
                f"MCP server '{SERVER}' is already registered (`claude mcp get {SERVER}`); left as is"
            )
            return ours or {"method": "cli", "added": False}
        # MAPLE's own registration, from a venv or checkout that has moved since: replace it.
        remove = [cli, "mcp", "remove", SERVER, "--scope", scope]
        report.actions.append("run " + shlex.join(remove))
        if not dry_run:
            run(remove)
    args = [cli, "mcp", "add", "--scope", scope, SERVER]  # the name before --env, which takes many pairs
    for k, v in entry.get("env", {}).items():
        args += ["--env", f"{k}={v}"]
    args += ["--", entry["command"], *entry["args"]]
    report.actions.append("run " + shlex.join(args))
    # A replacement keeps the first install's record: its backup is the file as it was before MAPLE.
    record: dict[str, Any] = dict(ours) if ours else {"method": "cli", "added": True, "scope": scope}
    if dry_run:
        return record
    done = run(args)
    if done.returncode != 0:
        raise InstallError(
            f"`claude mcp add` failed: {(done.stderr or done.stdout).strip()}; register by hand with: {shlex.join(args)}"
        )
    after = jsonfile.read(paths.mcp_file)
    if after is None or jsonfile.node(jsonfile.load(paths.mcp_file, after), [*paths.mcp_keys, SERVER]) is None:
        return record  # the CLI wrote elsewhere (CLAUDE_CONFIG_DIR): uninstall leaves it to the CLI
    if ours:
        _rewritten(record, raw, after)
        return record
    # The CLI wrote where we looked: remember enough to give the file back exactly as it was.
    data = jsonfile.load(paths.mcp_file, raw)
    record.update(
        file=str(paths.mcp_file),
        created=raw is None,
        created_keys=[k for i, k in enumerate(paths.mcp_keys) if jsonfile.node(data, paths.mcp_keys[: i + 1]) is None],
        backup=_backup(paths.mcp_file, raw, report),
        after=jsonfile.sha(after),
    )
    return record


def _rewritten(record: dict[str, Any], before: bytes | None, after: bytes) -> None:
    """Note that MAPLE rewrote a file it installed into before. If someone else changed it since
    MAPLE's last write, the backup no longer holds their change: uninstall must edit, not restore."""
    if record.get("after") and jsonfile.sha(before) != record["after"]:
        record["restorable"] = False
    record["after"] = jsonfile.sha(after)


def _register_file(
    paths: Paths, entry: dict[str, Any], dry_run: bool, report: Report, previous: dict[str, Any] | None
) -> dict[str, Any]:
    raw = jsonfile.read(paths.mcp_file)
    data = jsonfile.load(paths.mcp_file, raw)
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
    new = jsonfile.dump(data, raw)
    if not dry_run and not record.get("backup"):
        record["backup"] = _backup(paths.mcp_file, raw, report)
    started = shlex.join([entry["command"], *entry["args"]])
    report.actions.append(
        f"register MCP server '{SERVER}' in {paths.mcp_file}: "
        + " ".join([*(f"{k}={shlex.quote(v)}" for k, v in entry.get("env", {}).items()), started])
        + (" (replacing the existing entry)" if record.get("had") is not None else "")
    )
    if not dry_run:
        jsonfile.write(paths.mcp_file, new, private=paths.mcp_file.name == ".claude.json")
        _rewritten(record, raw, new)
    return record


def _merge_settings(
    path: Path,
    groups: dict[str, dict[str, Any]],
    allow: list[str],
    dry_run: bool,
    report: Report,
    previous: dict[str, Any] | None,
) -> dict[str, Any]:
    """Merge MAPLE's hooks and `permissions.allow` entries into one settings file."""
    raw = jsonfile.read(path)
    data = jsonfile.load(path, raw)
    # The first install's record is kept: its backup is the file as it was before MAPLE.
    record = dict(previous) if previous else {"file": str(path), "created": raw is None, "backup": None}
    actions = _merge_hooks(path, data, groups) + _merge_allow(path, data, allow, record, report)
    if not actions:
        report.actions.append(f"hooks{' and permissions' if allow else ''} already in {path}")
        return record
    if not dry_run and not record.get("backup") and not record.get("created"):
        record["backup"] = _backup(path, raw, report)
    report.actions.extend(actions)
    if not dry_run:
        new = jsonfile.dump(data, raw)
        jsonfile.write(path, new, private=False)
        _rewritten(record, raw, new)
    return record


def _merge_hooks(path: Path, data: dict[str, Any], groups: dict[str, dict[str, Any]]) -> list[str]:
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f"{path}: 'hooks' is not an object; fix it, then run install again")
    changed = []
    for event, group in groups.items():
        lst = hooks.get(event, [])
        if not isinstance(lst, list):
            raise InstallError(f"{path}: hooks.{event} is not a list; fix it, then run install again")
        if group in lst:
            continue
        # An earlier MAPLE install (another path, or command <-> mcp_tool): replace ours only.
        for g in lst:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                g["hooks"] = [h for h in g["hooks"] if not is_ours(h)]
        hooks[event] = [g for g in lst if not (isinstance(g, dict) and g.get("hooks") == [])] + [group]
        changed.append(event)
    if not changed:
        return []
    data["hooks"] = hooks
    return [f"add hooks {', '.join(changed)} to {path}"] + [
        line for event in changed for line in describe_hook(event, groups[event])
    ]


def _merge_allow(
    path: Path, data: dict[str, Any], allow: list[str], record: dict[str, Any], report: Report
) -> list[str]:
    """Add the `allow` entries the file lacks, and take back those an earlier install added that
    `allow` no longer names (install --no-allow). The record lists exactly what MAPLE added."""
    added: list[str] = list(record.get("allowed") or [])
    actions = []
    dropped = [e for e in added if e not in allow]
    if dropped:
        before = json.dumps(data.get("permissions"))
        _remove_allowed(data, {**record, "allowed": dropped})
        if json.dumps(data.get("permissions")) != before:
            actions.append(
                f"remove {', '.join(dropped)} (an earlier install added it) from permissions.allow in {path}"
            )
        added = [e for e in added if e in allow]
    perms = data.get("permissions")
    if perms is not None and not isinstance(perms, dict):
        raise InstallError(f"{path}: 'permissions' is not an object; fix it, then run install again")
    lst = (perms or {}).get("allow")
    if lst is not None and not isinstance(lst, list):
        raise InstallError(f"{path}: permissions.allow is not a list; fix it, then run install again")
    for entry in allow:
        if entry in added and lst is not None and entry in lst:
            continue
        if lst is not None and entry in lst:
            report.notes.append(f"{entry} was already in permissions.allow of {path}; uninstall leaves it there")
            continue
        if perms is None:
            perms = data["permissions"] = {}
            record["allowed_created"] = ["permissions", "allow"]
        if lst is None:
            lst = perms["allow"] = []
            record.setdefault("allowed_created", ["allow"])
        lst.append(entry)
        if entry not in added:
            added.append(entry)
        actions.append(f"add {entry} to permissions.allow in {path}")
        report.notes.append(
            f"{entry} in permissions.allow pre-approves MAPLE's tools (`claude -p` denies tools not allowed); "
            "install --no-allow leaves permissions alone"
        )
        if entry in (perms.get("deny") or []):
            report.notes.append(f"{entry} is also in permissions.deny of {path}, which wins: MAPLE's tools stay denied")
    record["allowed"] = added
    if not added:
        record.pop("allowed_created", None)
    return actions


def _backup(path: Path, raw: bytes | None, report: Report) -> str | None:
    if raw is None:
        return None
    backup = path.with_name(path.name + ".maple-backup")
    jsonfile.write(backup, raw, private=True)
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
    # The hooks first: `claude mcp remove` fires the SessionEnd hooks still in place.
    settings = record.get("settings") or {}
    _undo_file(paths.settings, settings, dry_run, report, lambda data: _remove_settings(data, settings))
    mcp = record.get("mcp") or {}
    if mcp.get("method") == "cli":
        _unregister_cli(paths, scope, mcp, cli, lambda a: run(a, cwd=project), dry_run, report)
    else:
        _undo_file(paths.mcp_file, mcp, dry_run, report, lambda data: _remove_server(data, mcp, paths))
    if not dry_run:
        manifest.pop(scope, None)
        _save_manifest(config, manifest)
        if remote.stop(config.home, config.db_path) is not None:
            report.actions.append("stopped MAPLE's background engine (the database stays)")
    return report


def _unregister_cli(
    paths: Paths, scope: str, rec: dict[str, Any], cli: str | None, run: Runner, dry_run: bool, report: Report
) -> None:
    if not rec.get("added"):
        report.actions.append(f"MCP server '{SERVER}' was registered before MAPLE's install; left as is")
        return
    path = Path(rec["file"]) if rec.get("file") else None
    if path is not None and _restore(path, rec, dry_run, report):
        return
    if cli:
        args = [cli, "mcp", "remove", SERVER, "--scope", rec.get("scope", scope)]
        report.actions.append("run " + shlex.join(args))
        if not dry_run:
            run(args)
    elif path is None:
        report.notes.append(
            f"the claude CLI is not on PATH: run `claude mcp remove {SERVER} --scope {rec.get('scope', scope)}`"
        )
        return
    if path is None or dry_run:
        return
    # `claude mcp remove` leaves `"mcpServers": {}` behind; drop it when MAPLE's add created it.
    # Without the CLI, the same edit removes the entry itself.
    raw = jsonfile.read(path)
    data = jsonfile.load(path, raw)
    removed = _remove_server(data, {"created_keys": rec.get("created_keys") or []}, paths)
    tidied = jsonfile.drop_empty(data, paths.mcp_keys, rec.get("created_keys") or [])
    if raw is not None and rec.get("created") and data == {}:
        report.actions.append(f"remove {path} (MAPLE's registration created it)")
        path.unlink()
    elif removed or tidied:
        report.actions.append(f"remove what MAPLE's registration left in {path}")
        jsonfile.write(path, jsonfile.dump(data, raw), private=path.name == ".claude.json")
    _drop_backup(rec, dry_run)


def _restore(path: Path, rec: dict[str, Any], dry_run: bool, report: Report) -> bool:
    """Put back, byte for byte, a file nobody but MAPLE touched since install; False if it cannot."""
    raw = jsonfile.read(path)
    if raw is None or not rec.get("after") or jsonfile.sha(raw) != rec["after"] or rec.get("restorable") is False:
        return False
    if rec.get("created"):
        report.actions.append(f"remove {path} (MAPLE created it)")
        if not dry_run:
            path.unlink()
        return True
    backup = Path(rec["backup"]) if rec.get("backup") else None
    if backup is None or not backup.exists():
        return False
    report.actions.append(f"restore {path} from {backup}")
    if not dry_run:
        jsonfile.write(path, backup.read_bytes(), private=path.name == ".claude.json")
        backup.unlink()
    return True


def _undo_file(
    path: Path, rec: dict[str, Any], dry_run: bool, report: Report, surgery: Callable[[dict[str, Any]], bool]
) -> None:
    raw = jsonfile.read(path)
    if raw is None or _restore(path, rec, dry_run, report):
        return
    data = jsonfile.load(path, raw)
    if surgery(data):
        if rec.get("created") and data == {}:
            report.actions.append(f"remove {path} (MAPLE created it; nothing else is in it)")
            if not dry_run:
                path.unlink()
        else:
            report.actions.append(f"remove MAPLE's entries from {path}")
            if not dry_run:
                jsonfile.write(path, jsonfile.dump(data, raw), private=path.name == ".claude.json")
    _drop_backup(rec, dry_run)


def _drop_backup(rec: dict[str, Any], dry_run: bool) -> None:
    """The backup is install's too, and of no use once MAPLE's entries are gone: it goes with them."""
    if rec.get("backup") and not dry_run:
        Path(rec["backup"]).unlink(missing_ok=True)


def _remove_server(data: dict[str, Any], rec: dict[str, Any], paths: Paths) -> bool:
    node = jsonfile.node(data, paths.mcp_keys)
    if not isinstance(node, dict) or SERVER not in node:
        return False
    if rec.get("had") is not None:
        node[SERVER] = rec["had"]  # what was there before MAPLE's install
    else:
        del node[SERVER]
    jsonfile.drop_empty(data, paths.mcp_keys, rec.get("created_keys") or [])  # containers only MAPLE's entry needed
    return True


def _remove_settings(data: dict[str, Any], rec: dict[str, Any]) -> bool:
    hooks_changed = _remove_hooks(data)
    return _remove_allowed(data, rec) or hooks_changed


def _remove_allowed(data: dict[str, Any], rec: dict[str, Any]) -> bool:
    """Take out of permissions.allow the entries MAPLE added (never one the user had), then the
    `allow` list and `permissions` object if MAPLE created them and they are empty now."""
    perms = data.get("permissions")
    lst = perms.get("allow") if isinstance(perms, dict) else None
    if not isinstance(lst, list):
        return False
    changed = False
    for entry in rec.get("allowed") or []:
        if entry in lst:
            lst.remove(entry)
            changed = True
    if changed:
        jsonfile.drop_empty(data, ["permissions", "allow"], rec.get("allowed_created") or [])
    return changed


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
    jsonfile.write(config.home / "install.json", (json.dumps(manifest, indent=2) + "\n").encode(), private=True)


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
