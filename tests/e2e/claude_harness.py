"""Driving the real Claude Code CLI against the scripted API (fake_api.py), in a throwaway world.

`ClaudeCode` owns one test's world: a HOME with `.claude/`, a MAPLE home, a project that is a
git repository, the fake API and a bin folder whose `claude` is the CLI under test. Everything it
runs (`claude -p`, `maple-memory`) gets the same environment, so `maple-memory install` writes
into the throwaway HOME and the server and hooks Claude Code starts use the throwaway MAPLE home.

Claude Code is found through $MAPLE_CLAUDE, else .ci/node/node_modules/.bin/claude (`.ci/run`
installs the pinned version there). The tests pin their expectations to CLAUDE_CODE_VERSION.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from fake_api import FakeAnthropic, Logged

ROOT = Path(__file__).resolve().parents[2]
CLAUDE_CODE_VERSION = "2.1.332"  # keep in step with .ci/run
INSTALL = f"npm install --prefix .ci/node @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
RUN_PY = ROOT / "hooks" / "run.py"
TEST_MODEL = "hash-64"  # the deterministic, model-free embedder the other tests use (no torch)
RUN_TIMEOUT = 300.0  # seconds for one `claude -p` run; a run takes 1-5 s on two idle cores
T = TypeVar("T")


def claude_path() -> str | None:
    given = os.environ.get("MAPLE_CLAUDE")
    if given:
        return given
    local = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "claude"
    return str(local) if local.exists() else None


@functools.cache
def skip_reason() -> str | None:
    """Why the Claude Code tests cannot run here, or None."""
    path = claude_path()
    if path is None:
        return (
            f"Claude Code is not installed: run `{INSTALL}` (.ci/run does) or set MAPLE_CLAUDE to a `claude` executable"
        )
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return f"{path} is not an executable file (MAPLE_CLAUDE or .ci/node); reinstall with `{INSTALL}`"
    if shutil.which("git") is None:
        return "git is not installed; the Claude Code tests need a project that is a git repository"
    try:
        done = subprocess.run(
            [path, "--version"],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "DISABLE_AUTOUPDATER": "1"},
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"`{path} --version` failed ({e}); reinstall with `{INSTALL}`"
    if done.returncode != 0 or "Claude Code" not in done.stdout:
        return f"`{path} --version` failed: {(done.stderr or done.stdout).strip()[:300]}; reinstall with `{INSTALL}`"
    return None


def claude_version() -> str | None:
    """The version the tests will drive (None when they skip)."""
    path = claude_path()
    if path is None or skip_reason() is not None:
        return None
    out = subprocess.run([path, "--version"], check=False, capture_output=True, text=True, timeout=120).stdout
    m = re.search(r"\d+\.\d+\.\d+", out)
    return m.group(0) if m else None


class Run(NamedTuple):
    """One `claude -p` run: its JSON result, the requests the API got meanwhile, its debug log."""

    result: dict[str, Any]
    requests: list[Logged]
    debug: str

    @property
    def main(self) -> list[Logged]:
        """The conversation's own requests (not side requests, not count_tokens or model lists)."""
        return [r for r in self.requests if r.kind == "main"]


def hook_contexts(requests: Sequence[Logged], event: str) -> list[str]:
    """The additionalContext texts of `event` hooks as the model received them.

    Claude Code 2.1.332 puts them into a system-role message of `messages`, one paragraph each,
    starting "<Event> hook additional context: "; MAPLE's blocks end with </maple-memory>."""
    marker = f"{event} hook additional context: "
    found: list[str] = []
    for request in requests:
        for text in request.texts():
            start = text.find(marker)
            while start >= 0:
                body = text[start + len(marker) :]
                end = body.find("</maple-memory>")
                end = end + len("</maple-memory>") if end >= 0 else body.find("\n\n")
                found.append(body if end < 0 else body[:end])
                start = text.find(marker, start + len(marker))
    return found


def poll(check: Callable[[], T], *, timeout: float, what: str, interval: float = 0.2) -> T:
    """check() until it returns something truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class ClaudeCode:
    """One test's throwaway world and the commands that act in it."""

    def __init__(self, base: Path, maple_home: Path, claude: str):
        self.base = base
        self.user_home = base / "user-home"
        (self.user_home / ".claude").mkdir(parents=True)
        self.maple_home = maple_home
        self.project = base / "project"
        self.project.mkdir()
        git = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main"]
        subprocess.run([*git, "init", "-q"], cwd=self.project, check=True, timeout=60)
        (self.project / "README.md").write_text("# demo project\n")
        subprocess.run([*git, "add", "README.md"], cwd=self.project, check=True, timeout=60)
        subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=self.project, check=True, timeout=60)
        # `maple-memory install` looks for `claude` on PATH (and reads its version to choose the
        # prompt hook's type), as it would on a user's machine.
        self.bin = base / "bin"
        self.bin.mkdir()
        (self.bin / "claude").symlink_to(Path(claude).resolve())
        self.api = FakeAnthropic(base / "api.jsonl").start()
        self.runs = 0
        self.env = self._environment()

    def _environment(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE", "MAPLE_", "MCP_", "OTEL_")) and k != "PYTHONPATH"
        }
        env.update(
            {
                "HOME": str(self.user_home),
                "PATH": os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), env.get("PATH", "")]),
                "ANTHROPIC_BASE_URL": self.api.url,
                "ANTHROPIC_API_KEY": "dummy",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "MAPLE_HOME": str(self.maple_home),
                "MAPLE_MODEL": TEST_MODEL,
                # The warm engine runs as it does for a user (the default idle time); close() stops it.
                "NO_COLOR": "1",
                # The CLI, the server and the hooks import MAPLE from the checkout these tests are in.
                "PYTHONPATH": str(ROOT),
            }
        )
        return env

    def close_engine(self) -> None:
        """Stop the engine of this world's MAPLE home (as the environment names it)."""
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from memory import config, remote; c = config.load(); remote.stop(c.home, c.db_path)",
            ],
            check=False,
            env=self.env,
            cwd=self.project,
            capture_output=True,
            timeout=60,
        )

    def close(self) -> None:
        """Stop this world's engine, let background harvests finish (they write into this world),
        then stop the API."""
        try:
            self.close_engine()
            subprocess.run(
                [sys.executable, str(RUN_PY), "drain", "--wait"],
                check=False,
                input=b"",
                env=self.env,
                cwd=self.project,
                capture_output=True,
                timeout=120,
            )
        finally:
            self.api.stop()

    # -- Claude Code --------------------------------------------------------------------------

    def run_claude(
        self,
        prompt: str,
        *,
        resume: str | None = None,
        continue_: bool = False,
        allowed_tools: Sequence[str] | None = None,
        extra_args: Sequence[str] = (),
        timeout: float = RUN_TIMEOUT,
    ) -> Run:
        """`claude -p PROMPT --output-format json` in the project; what came back and what the API saw."""
        self.runs += 1
        debug_file = self.base / f"claude-debug-{self.runs}.txt"
        cmd = [str(self.bin / "claude"), "-p", prompt, "--output-format", "json", "--debug-file", str(debug_file)]
        if resume:
            cmd += ["--resume", resume]
        if continue_:
            cmd.append("--continue")
        if allowed_tools:
            cmd += ["--allowedTools", ",".join(allowed_tools)]
        cmd += list(extra_args)
        mark = self.api.mark()
        # A session of its own: on a timeout the whole group (Claude Code, its MCP server, its
        # hooks) is killed, and nothing else.
        proc = subprocess.Popen(
            cmd,
            cwd=self.project,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(
                f"claude -p did not finish in {timeout:.0f} s\nstderr: {err[-2000:]}\n"
                f"debug log tail:\n{_tail(debug_file)}"
            ) from None
        debug = debug_file.read_text(errors="replace") if debug_file.exists() else ""
        try:
            result = json.loads(out)
        except ValueError:
            raise AssertionError(
                f"claude -p exited {proc.returncode} without a JSON result\nstdout: {out[-2000:]}\n"
                f"stderr: {err[-2000:]}\ndebug log tail:\n{_tail(debug_file)}"
            ) from None
        return Run(result, self.api.since(mark), debug)

    # -- MAPLE's CLI --------------------------------------------------------------------------

    def maple(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`maple-memory ARGS` in the project, with this world's HOME and MAPLE home."""
        script = Path(sys.executable).parent / "maple-memory"
        cmd = (
            [str(script)]
            if script.exists()
            else [sys.executable, "-c", "import sys; from memory.cli import main; sys.exit(main())"]
        )
        done = subprocess.run(
            [*cmd, *args], check=False, cwd=self.project, env=self.env, capture_output=True, text=True, timeout=300
        )
        if check:
            assert done.returncode == 0, (
                f"maple-memory {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}"
            )
        return done

    def add(self, content: str, *flags: str) -> int:
        return int(json.loads(self.maple("--json", "add", content, *flags).stdout)["id"])

    def memories(self) -> list[dict[str, Any]]:
        """Every current memory of the project and global ones (`maple-memory --json list`)."""
        out: list[dict[str, Any]] = []
        after: Any = None
        while True:
            page = json.loads(self.maple("--json", "list", *(["--after", str(after)] if after else [])).stdout)
            out += page["memories"]
            after = page.get("next_after")
            if not after:
                return out

    def settings(self) -> Path:
        return self.user_home / ".claude" / "settings.json"


def _tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return "(no debug log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def hook_errors(debug: str) -> list[str]:
    """Debug-log lines that report a failing or blocking hook (the shapes 2.1.332 writes:
    `Hook <Event> (...) error: status code N`, `... blocked by hook`, JSON validation failures)."""
    pattern = re.compile(
        r"Hook \S+ \(\S+\) error|blocked by hook|Hook JSON output validation failed|"
        r"hook_(non_)?blocking_error",
        re.IGNORECASE,
    )
    return [line for line in debug.splitlines() if pattern.search(line)]
