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


def server_command(config: Config) -> tuple[str, list[str], dict[str, str]]:
    """(command, args, env) that starts this installation's MCP server on stdio."""
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
    env = {}
    if config.home != Path("~/.maple").expanduser():
        env["MAPLE_HOME"] = str(config.home)
    if config.database:
        env["MAPLE_DB"] = str(config.db_path)
    return env


def hook_command(config: Config, event_arg: str, *, portable: bool = False) -> str:
    """The shell command of one command hook. `portable` (a project's shared settings): the
    `maple-memory` on each teammate's PATH instead of this machine's interpreter path."""
    if portable:
        return f"maple-memory hook {event_arg}"
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in home_env(config).items())
    return (env + " " if env else "") + shlex.join([sys.executable, str(RUN_PY), event_arg])
