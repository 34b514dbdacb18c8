"""What every `maple-memory` command shares: the command context and the terminal output helpers."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from memory import embed, remote
from memory.app import Memories, client
from memory.config import Config
from memory.store import GLOBAL, Store, iso, stored_model

PROG = "maple-memory"
# What a command that takes ids says when the id is not this project's or global (as memory_get
# refuses it over MCP); the flag it names is added by `all_projects_flag`.
OTHER_PROJECT_HINT = "a memory of another project needs --all-projects (or --project DIR)"


def all_projects_flag(p: argparse.ArgumentParser) -> None:
    """`--all-projects` on a command that takes memory ids: reach a memory of any project."""
    p.add_argument(
        "--all-projects",
        action="store_true",
        help="also reach memories of other projects (by default only this project's and global ones)",
    )


@dataclass
class Context:
    args: argparse.Namespace
    config: Config
    project: str

    @property
    def scopes(self) -> list[str]:
        return list(dict.fromkeys([self.project, GLOBAL]))

    def open(self, *, embedder: bool, vectors_later: bool = False) -> Store:
        """The store; with the configured embedder only for commands that embed text, so that
        reading a database built with another model still works. `vectors_later`: where an engine
        is enabled, leave loading the model to it (it embeds what is missing; client.embed_later)."""
        if embedder and vectors_later and client.engine_enabled(self.config):
            return Store.open(self.config, client.local_embedder(self.config))
        return Store.open(self.config, embed.from_config(self.config, stored_model(self.config)) if embedder else None)

    def command(self, words: str) -> str:
        """`maple-memory <words>` as this command's user types it (with the --home they gave)."""
        home = getattr(self.args, "home", None)
        return f"{PROG}{f' --home {shlex.quote(home)}' if home else ''} {words}"

    def model_problem(self, model: str | None = None) -> tuple[str, str] | None:
        """(what is wrong, what to do) when the model --model (`model`) or else the configuration
        names cannot load on this machine, naming where the name was set; None when it can be tried."""
        name = model or self.config.embedding_model
        problem = embed.model_problem(name)
        if problem is None:
            return None
        if model:
            where = "--model"
        elif os.environ.get("MAPLE_MODEL"):
            where = "MAPLE_MODEL"
        elif name != embed.AUTO:
            where = f"embedding_model in {self.config.home / 'config.json'}"
        else:
            where = "embedding_model"
        return f"{where} is {name!r}: {problem[0]}", problem[1]

    @property
    def project_dir(self) -> str:
        """The folder this command works for (its project is `project`)."""
        return self.args.project or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()

    @contextmanager
    def app(
        self,
        *,
        embedder: bool = False,
        all_projects: bool = False,
        local: bool = False,
        alone: bool = False,
        vectors_later: bool = False,
    ) -> Iterator[Any]:
        """The application API on this command's project: the warm engine's when one answers
        (memory.app.client), else this process's; closed when the command is done. `local`: always
        in this process (commands that stream files). `alone`: in this process, with the engine
        stopped first (commands that replace the database or its vectors; the next request that
        wants an engine starts a fresh one). `vectors_later`: see `open`."""
        if alone:
            remote.stop(self.config.home, self.config.db_path)
        if local or all_projects or alone:
            store = self.open(embedder=embedder, vectors_later=vectors_later)
            try:
                yield Memories(store, self.project, all_projects=all_projects)
            finally:
                store.close()
            if vectors_later and store.embedder is None and client.engine_enabled(self.config):
                client.embed_later(self.config)
            return
        connection = client.connect(self.config, self.project_dir, embedder=embedder)
        try:
            yield connection
        finally:
            connection.close()

    def emit(self, obj: Any, human: Callable[[], None]) -> None:
        if self.args.json:
            print(json.dumps(obj, ensure_ascii=False, indent=2))
        else:
            human()


# -- small output helpers --------------------------------------------------------------------------


def _colour_on() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _paint(text: str, code: str) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if _colour_on() else text


def _cells(ch: str) -> int:
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def fit(text: str, width: int) -> str:
    """`text` on one line, cut to `width` terminal cells (CJK counts double) with an ellipsis."""
    text = " ".join(text.split())
    if sum(map(_cells, text)) <= width:
        return text
    out, used = [], 0
    for ch in text:
        if used + _cells(ch) > width - 1:
            break
        out.append(ch)
        used += _cells(ch)
    return "".join(out) + "…"


def _date(ts: float | None) -> str:
    return (iso(ts) or "")[:10]


def _table(
    rows: list[tuple[str, ...]], paints: Sequence[str], details: Mapping[int, str] | None = None, lines: int = 1
) -> None:
    """Left columns padded to their widest cell; the last column (content) fills the terminal, on up
    to `lines` lines (wrapped, then cut with an ellipsis). `details[n]`: text printed in full under
    row n, wrapped to the content column."""
    if not rows:
        return
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    indent = sum(widths) + 2 * len(widths)
    room = max(20, shutil.get_terminal_size((100, 24)).columns - indent)
    for n, r in enumerate(rows):
        cells = [_paint(c.rjust(w) if i == 0 else c.ljust(w), paints[i]) for i, (c, w) in enumerate(zip(r, widths))]
        wrapped = _fill(" ".join(r[-1].split()), room) if lines > 1 else []
        if len(wrapped) > lines:
            wrapped = [*wrapped[: lines - 1], fit(" ".join(wrapped[lines - 1 :]), room)]
        first, *more = wrapped or [fit(r[-1], room)]
        print("  ".join([*cells, first]))
        for line in more:
            print(" " * indent + line)
        if details and details.get(n):
            _wrapped(details[n], indent, room)


# What a line may break before or after: a Chinese character on its own, a word, a name or inline code whole.
_UNIT = re.compile(
    r"\S*`[^`\n]+`[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]*|"  # inline code whole, spaces and all
    r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+|\s+"
)


def _fill(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` terminal cells (a Chinese character takes two), broken at
    spaces or between Chinese characters, never inside a word, a path or a command."""
    lines, line, used = [], "", 0
    for unit in _UNIT.findall(text):
        size = sum(map(_cells, unit))
        if unit.isspace():
            if line:
                line, used = line + " ", used + 1
            continue
        if used + size > width and line.strip():
            lines.append(line.rstrip())
            line, used = "", 0
        line, used = line + unit, used + size
    if line.strip():
        lines.append(line.rstrip())
    return lines


_HEADING_LINE = re.compile(r"\s*#{1,6}\s")
_BLOCK_START = re.compile(r"\s*(?:#{1,6}\s|[-*+•>|]\s|\d{1,3}[.)、]\s)")  # a heading, an item, a quote, a row


def _wrapped(text: str, indent: int, room: int) -> None:
    """`text` under a row: prose as paragraphs (a writer's own line breaks joined) wrapped to the
    content column at spaces only, so a command, a path or a URL is never cut in two; code blocks
    and indented lines and headings as they are, to copy; a list item starts a paragraph."""
    pad, code, para = " " * indent, False, []

    def flush() -> None:
        if para:
            joined = re.sub(r"(?<=[\u3000-\u9fff\uff00-\uffef]) (?=[\u3000-\u9fff\uff00-\uffef])", "", " ".join(para))
            for line in _fill(joined, room):
                print(pad + line)
            para.clear()

    for line in text.splitlines():
        fence = line.lstrip().startswith("```")
        if fence or code or line.startswith(("    ", "\t")) or not line.strip() or _HEADING_LINE.match(line):
            flush()
            print(pad + line if line.strip() else "")
            code = code != fence
            continue
        if _BLOCK_START.match(line):
            flush()
        para.append(line.strip())
    flush()


class Progress:
    """A one-line progress bar on stderr, drawn when stderr is a terminal. Elsewhere (a pipe, a
    log, a script) silent, or with `lines` a plain line each tenth of the work or LINE_SECONDS,
    whichever comes first, and at the end."""

    LINE_SECONDS = 10.0

    def __init__(self, total: int | None, label: str, stream: IO[str] | None = None, *, lines: bool = False):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.lines = lines and not self.enabled
        self.total, self.label, self.last = total, label, ""
        self.started = time.monotonic()
        self.line_at: tuple[int, float] | None = None  # (done, when) of the last plain line

    def update(self, done: int, note: str = "") -> None:
        if self.lines:
            self._line(done, note)
        if not self.enabled:
            return
        if self.total:
            frac = min(done / self.total, 1.0)
            filled = int(frac * 30)
            line = f"{self.label} [{'#' * filled}{'-' * (30 - filled)}] {frac:4.0%} {note}"
        else:
            line = f"{self.label} {note}"
        if line != self.last:
            self.stream.write("\r" + line.ljust(len(self.last)))
            self.stream.flush()
            self.last = line

    def _line(self, done: int, note: str) -> None:
        now = time.monotonic()
        if self.line_at is not None:
            last_done, last_when = self.line_at
            finished = bool(self.total) and done >= (self.total or 0)
            step = max(1, (self.total or 0) // 10)
            if done == last_done or not (finished or done - last_done >= step or now - last_when >= self.LINE_SECONDS):
                return
        self.line_at = (done, now)
        share = f" ({min(done / self.total, 1.0):.0%})" if self.total else ""
        self.stream.write(f"{self.label}: {note or done}{share}, {now - self.started:.0f}s\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.last:
            self.stream.write("\r" + " " * len(self.last) + "\r")
            self.stream.flush()
