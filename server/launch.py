"""Starting the server on stdio: the requests a client sends to connect are answered before the
MCP SDK has even loaded (server.fastpath), and the server logs to <home>/server.log.

Importing the SDK costs about 0.6 s of CPU (measured: mcp 2.3.0 imports its client, HTTP
transports and two revisions of the protocol types), more on a busy machine; Claude Code 2.1.332
gives `server/discover` about 2 s before it tries `initialize`, and may start the session without
the server's tools and instructions. This module is stdlib only: a thread answers from the recorded answers while the
main thread imports the SDK, then the SDK reads everything that thread read, in order, and its own
copies of answers already sent are dropped.

As in the SDK's own stdio transport, file descriptors 0 and 1 are pointed at /dev/null and stderr
while serving: a stray print or a child process cannot corrupt the protocol.
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from memory import config as config_mod
from memory.config import Config
from memory.errors import ConfigError
from server import fastpath

log = logging.getLogger("maple.server")
LOG_NAME = "server.log"
MAX_LOG_BYTES = 512_000
# The lines a user starting `maple-memory serve` by hand needs (database, model, how to register);
# app.py logs them here.
STARTUP_LOGGER = "maple.server.startup"


class BoundedLog(logging.Handler):
    """Appends records to a private file (created 0600) that never grows past `limit` bytes:
    past it, the newer half is kept, as in hooks.log. Opened per record, so servers in several
    sessions can share it."""

    def __init__(self, path: Path, limit: int = MAX_LOG_BYTES):
        super().__init__()
        self.path, self.limit = path, limit

    def emit(self, record: logging.LogRecord) -> None:
        try:
            data = (self.format(record) + "\n").encode("utf-8", errors="replace")
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                fastpath.write_all(fd, data)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size > self.limit:  # a log that grows forever is its own failure
                kept = self.path.read_bytes()[-self.limit // 2 :]
                self.path.write_bytes(kept[kept.find(b"\n") + 1 :])
        except Exception:  # noqa: BLE001 - the logging module's own convention: report, never raise
            self.handleError(record)


def setup_logging(config: Config, stderr: TextIO | None = None) -> None:
    """INFO and above to <home>/server.log; WARNING and above to stderr, which Claude Code shows
    as errors ("[ERROR] Server stderr: ..."); the start-up lines to stderr too when it is a
    terminal (a user running `maple-memory serve` by hand)."""
    stderr = stderr if stderr is not None else sys.stderr
    level = logging.getLevelName(config.log_level.upper())
    root = logging.getLogger()
    # Handlers set before the SDK's MCPServer() makes its own basicConfig (a rich handler) a no-op.
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    root.setLevel(level)
    file = BoundedLog(config.home / LOG_NAME)
    file.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root.addHandler(file)
    console = logging.StreamHandler(stderr)
    console.setFormatter(logging.Formatter("maple %(levelname)s %(name)s: %(message)s"))
    console.setLevel(max(logging.WARNING, level))
    root.addHandler(console)
    if stderr.isatty():
        startup = logging.StreamHandler(stderr)
        startup.setFormatter(logging.Formatter("maple: %(message)s"))
        startup.addFilter(lambda r: r.name == STARTUP_LOGGER and r.levelno < console.level)
        root.addHandler(startup)
    # MAPLE's own INFO lines (the start-up lines, what was answered early) reach the file even at
    # the default WARNING level; other libraries log at the level configured.
    logging.getLogger("maple").setLevel(min(logging.INFO, level))


class Replay(io.RawIOBase):
    """A readable stream: what `handover()` returns first (called at the first read, when the SDK
    starts reading), then whatever arrives on `fd`."""

    def __init__(self, fd: int, handover: Callable[[], bytes] | None = None):
        self.fd, self.handover, self.prefix = fd, handover, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.handover is not None:
            self.prefix, self.handover = self.handover(), None
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        data = os.read(self.fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _private_copy(fd: int) -> int:
    """A close-on-exec duplicate of `fd` above the standard descriptors."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def serve(config: Config, embedder: Any = None) -> None:
    """Run the server on stdio until the client closes the connection."""
    started = time.monotonic()
    setup_logging(config)
    if os.name == "nt":  # no select() on pipes: the SDK's own transport, answers after its import
        from server import app

        app.run_stdio(config, embedder)
        return
    parent = os.getppid()
    wire_in, wire_out = _private_copy(0), _private_copy(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # stray prints now reach stderr, never the protocol
    early = None
    if fastpath.snapshot_is_current():
        early = fastpath.Early(wire_in, wire_out, parent, fastpath.Responder(), started).start()
    else:
        log.info("server/answers.py was recorded with another mcp: every answer waits for the SDK")
    from server import app  # the SDK loads here, while the thread answers the client
    from server.jsonrpc import Guard

    stdout = fastpath.Wire(wire_out, early.responder if early else None)
    # Malformed requests are answered here (the SDK would drop them unanswered; server.jsonrpc).
    stdin = Guard(io.BufferedReader(Replay(wire_in, early.stop if early else None)), stdout.send, app.validate_message)
    app.run_on(config, embedder, stdin, stdout, parent)


def main(argv: Sequence[str] | None = None) -> None:
    """`python -m server [--home DIR] [--db FILE] [--model NAME] [--log-level LEVEL]`."""
    p = argparse.ArgumentParser(prog="python -m server", description="MAPLE memory MCP server on stdio")
    p.add_argument("--home", help="MAPLE home folder (default $MAPLE_HOME or ~/.maple)")
    p.add_argument("--db", help="database file (default <home>/memory.db)")
    p.add_argument("--model", help="embedding model; hash-<dim> is a model-free test embedder")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    args = p.parse_args(argv)
    overrides = {
        k: v for k, v in (("database", args.db), ("embedding_model", args.model), ("log_level", args.log_level)) if v
    }
    try:
        config = config_mod.load(home=Path(args.home) if args.home else None, **overrides)
    except ConfigError as e:
        print(f"maple: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    serve(config)
