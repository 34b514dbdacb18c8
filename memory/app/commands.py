"""How MAPLE's processes are started: the one command line for the MCP server and for each hook,
used by `install`, by `client-config` and in the server's own start-up message."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from memory.config import Config

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
    project directory, where a relative path would name another database in every project."""
    env = {}
    home = Path(os.path.abspath(config.home))
    if home != Path(os.path.abspath(Path("~/.maple").expanduser())):
        env["MAPLE_HOME"] = str(home)
    if config.database:
        env["MAPLE_DB"] = os.path.abspath(config.db_path)
    return env


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
