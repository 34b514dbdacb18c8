"""Starting the server on stdio: `initialize` is answered before the MCP SDK has even loaded, and
the server logs to <home>/server.log.

Importing the SDK costs about 0.6 s of CPU (measured: mcp 2.3.0 imports its client, HTTP
transports and two revisions of the protocol types), so a client's handshake would otherwise wait
that long, more on a busy machine. This module is stdlib only: it reads the client's first
message, and when it is an `initialize` for a handshake revision the SDK speaks, answers it at
once with exactly what the SDK would answer (`server.info`; a test compares the two). Then it
loads the SDK and replays that first message to it, so the SDK's session state is what it always
is, and drops the SDK's own (second) answer to it. Anything else (the stateless 2026 revision,
which has no handshake, or a malformed first line) is simply handed over.

As in the SDK's own stdio transport, file descriptors 0 and 1 are pointed at /dev/null and stderr
while serving: a stray print or a child process cannot corrupt the protocol.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from memory import config as config_mod
from memory.config import Config
from memory.errors import ConfigError
from server import info

log = logging.getLogger("maple.server")
_NOTHING = object()
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
                _write_all(fd, data)
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


def early_answer(line: bytes) -> tuple[Any, bytes] | None:
    """(request id, the response line) when `line` is an initialize this module may answer."""
    try:
        msg = json.loads(line)
        version = msg["params"]["protocolVersion"]
        rid = msg["id"]
    except (ValueError, KeyError, TypeError):
        return None
    if msg.get("jsonrpc") != "2.0" or msg.get("method") != "initialize" or version not in info.HANDSHAKE_VERSIONS:
        return None
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        return None
    response = {"jsonrpc": "2.0", "id": rid, "result": info.initialize_result(version)}
    return rid, (json.dumps(response, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class Replay(io.RawIOBase):
    """A readable stream: `prefix` first, then whatever arrives on `fd`."""

    def __init__(self, prefix: bytes, fd: int):
        self.prefix, self.fd = prefix, fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.prefix:
            n = min(len(buffer), len(self.prefix))
            buffer[:n] = self.prefix[:n]
            self.prefix = self.prefix[n:]
            return n
        data = os.read(self.fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


class Wire:
    """The protocol's output: whole lines to `fd`, except the SDK's answer to a request that was
    already answered here (the one with id `drop`)."""

    def __init__(self, fd: int, drop: Any = _NOTHING):
        self.fd, self.drop, self.pending = fd, drop, ""

    def write(self, text: str) -> int:
        self.pending += text
        while "\n" in self.pending:
            line, self.pending = self.pending.split("\n", 1)
            if self.drop is not _NOTHING and self._answers_drop(line):
                self.drop = _NOTHING
                continue
            _write_all(self.fd, (line + "\n").encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        pass  # every line is written through as it completes

    def _answers_drop(self, line: str) -> bool:
        try:
            msg = json.loads(line)
        except ValueError:
            return False
        return isinstance(msg, dict) and msg.get("id") == self.drop and ("result" in msg or "error" in msg)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _private_copy(fd: int) -> int:
    """A close-on-exec duplicate of `fd` above the standard descriptors."""
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


def read_first_line(fd: int, parent: int) -> bytes:
    """Bytes from `fd` up to and including the first newline (or to end of input). Exits if the
    client process goes away without ever writing, as the running server does."""
    data = b""
    while b"\n" not in data:
        ready, _, _ = select.select([fd], [], [], 2.0)
        if not ready:
            if os.getppid() != parent:
                os._exit(0)
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
    return data


def serve(config: Config, embedder: Any = None) -> None:
    """Run the server on stdio until the client closes the connection."""
    setup_logging(config)
    if os.name == "nt":  # no select() on pipes: the SDK's own transport, handshake after its import
        from server import app

        app.run_stdio(config, embedder)
        return
    parent = os.getppid()
    wire_in, wire_out = _private_copy(0), _private_copy(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # stray prints now reach stderr, never the protocol
    first = read_first_line(wire_in, parent)
    answered = early_answer(first.split(b"\n", 1)[0])
    if answered is not None:
        _write_all(wire_out, answered[1])
    from server import app  # the SDK loads here, while the client reads our answer

    stdin = io.TextIOWrapper(io.BufferedReader(Replay(first, wire_in)), encoding="utf-8", errors="replace")
    stdout = Wire(wire_out, answered[0] if answered is not None else _NOTHING)
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
