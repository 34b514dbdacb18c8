"""How MAPLE's processes are started: the one command line for the MCP server and for each hook,
used by `install`, by `client-config` and in the server's own start-up message."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from memory.config import Config, url_has_password

ROOT = Path(__file__).resolve().parents[2]  # holds the memory, server and hooks packages
RUN_PY = ROOT / "hooks" / "run.py"
PORTABLE_SERVER = ("maple-memory", ["serve"])  # what a shared file (.mcp.json, the plugin) names


def server_command(config: Config, *, portable: bool = False) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that starts this installation's MCP server on stdio.

    `portable` (a project's shared files): the `maple-memory` on each teammate's PATH, and no
    home or database of this machine's, exactly like `hook_command(..., portable=True)`."""
    if portable:
        command, args = PORTABLE_SERVER
        return command, list(args), {}
    script = Path(sys.executable).parent / ("maple-memory.exe" if os.name == "nt" else "maple-memory")
    env: dict[str, str] = {}
    if script.exists():
        command, args = str(script), ["serve"]
    else:  # a checkout, not installed: run the package from it
        # -P (3.11+): the client's working directory must not come first on sys.path, where a
        # project's own `server` package would shadow ours.
        command = sys.executable
        args = (["-P"] if sys.version_info >= (3, 11) else []) + ["-m", "server"]
        env["PYTHONPATH"] = str(ROOT)
    env.update(home_env(config))
    return command, args, env


def home_env(config: Config) -> dict[str, str]:
    """MAPLE_HOME and MAPLE_DB for a process Claude Code starts. The server registration and every
    hook command get these same values, as absolute paths: Claude Code starts both in the session's
    project directory, where a relative path would name another database in every project.

    A team database's URL is never a path, and settings files are no place for a password: one
    in the home's config.json needs no variable (MAPLE_HOME finds it); one from the environment is
    passed on as MAPLE_DATABASE_URL only when it carries no password (`team_url_left_out` says
    when it was left out)."""
    env = {}
    home = Path(os.path.abspath(config.home))
    if home != Path(os.path.abspath(Path("~/.maple").expanduser())):
        env["MAPLE_HOME"] = str(home)
    if config.database_url:
        if not database_in_file(config) and not url_has_password(config.database_url):
            env["MAPLE_DATABASE_URL"] = config.database_url
    elif config.database:
        env["MAPLE_DB"] = os.path.abspath(config.db_path)
    return env


def team_url_left_out(config: Config) -> bool:
    """Whether the team database URL came from the environment with a password, so Claude Code's
    processes will not see it unless it goes into config.json (or the password into ~/.pgpass)."""
    return bool(config.database_url) and not database_in_file(config) and url_has_password(config.database_url)


def database_in_file(config: Config) -> bool:
    """Whether `database` is what the home's config.json says (not an environment override)."""
    try:
        raw = json.loads((Path(config.home) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(raw, dict) and raw.get("database") == config.database


def hook_command(
    config: Config,
    event_arg: str,
    *,
    portable: bool = False,
    python: str | None = None,
    script: Path = RUN_PY,
) -> str:
    """The shell command (Claude Code runs it with `sh -c`) of one command hook.

    `portable` (a project's shared settings): the `maple-memory` on each teammate's PATH instead of
    this machine's interpreter and checkout. `python` and `script` default to this interpreter and
    this checkout's hooks/run.py.
    """
    if portable:
        line = f"maple-memory hook {event_arg}"
    else:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in home_env(config).items())
        # -S: no site machinery on the hot path (hooks.common.packages loads it when needed).
        line = (env + " " if env else "") + shlex.join([python or sys.executable, "-S", str(script), event_arg])
    # MAPLE's hook code exits 0 whatever happens, but only once it runs. Before that, python exits
    # 2 when the script is gone (a venv or checkout moved after install), and so does a command-line
    # usage error; exit 2 on UserPromptSubmit makes Claude Code block the user's prompt. `|| true` turns that,
    # a missing interpreter (127) and any early crash into exit 0; stdout stays empty.
    return line + " || true"
