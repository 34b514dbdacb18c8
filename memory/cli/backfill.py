"""`maple-memory backfill`: a project's past Claude Code sessions (and, with --git, its commit
messages) into memory, in one command after `install`.

Finding what to read costs no model: the transcripts' first lines and the ledger say what is
new (memory.app.backfill). Only when something is, the harvest runs through the warm engine
(started and waited for) or, without one, this process's own model: the same rule, comparing by
meaning, as the hooks' harvest.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from memory.cli.common import PROG, Context, Progress, _paint, fit
from memory.errors import InvalidInput

ENGINE_WAIT = 90.0  # seconds to wait for a cold engine to come up before harvesting here instead


def add_command(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    p = command(
        "backfill",
        "harvest this project's past Claude Code sessions into memory (resumable; --git: its commit messages too)",
    )
    p.add_argument("--dry-run", action="store_true", help="list what would be read and stored; write nothing")
    p.add_argument("--since", metavar="DATE", help="only sessions active at or after this ISO date, e.g. 2026-11-01")
    p.add_argument(
        "--all-projects",
        action="store_true",
        help="every project's sessions, each into its own project's memory (default: this project's)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="harvest at most N transcripts this run")
    p.add_argument(
        "--max-mb",
        type=int,
        default=None,
        metavar="MB",
        help="skip a transcript with more than this many unread megabytes (default 100)",
    )
    p.add_argument(
        "--idle-seconds",
        type=float,
        default=None,
        metavar="S",
        help="skip transcripts written to in the last S seconds: their session may still run (default 120)",
    )
    p.add_argument(
        "--git",
        action="store_true",
        help="also keep decisions, reverts, migrations and conventions from the project's commit messages",
    )


class _Interrupt:
    """First Ctrl-C: stop after the transcript in progress. Second: stop now (its transaction
    rolls back, so nothing of it is stored)."""

    def __init__(self) -> None:
        self.asked = False
        self.previous: Any = None

    def __enter__(self) -> _Interrupt:
        try:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread (tests drive main() from threads): no handler
            self.previous = None
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True
        print(f"\n{PROG}: stopping after this transcript (Ctrl-C again to stop at once)", file=sys.stderr)

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def _warm_engine(config: Any, stop: Callable[[], bool]) -> None:
    """Start the engine (it loads the model once for every transcript) and wait for it, at most
    ENGINE_WAIT seconds, in short steps, so that a Ctrl-C while it starts ends the run at once.
    The engine runs in a session of its own: the Ctrl-C never reaches it, and it finishes
    starting for the next run and the hooks. Without an engine the harvest runs here."""
    from memory import remote
    from memory.app import client

    if not client.engine_enabled(config) or not (config.database_url or config.db_path.exists()):
        return
    if remote.wait_until_up(config.home, config.db_path, 0.0):
        return
    if not (remote.start(config.home, config.db_path) or remote.running(config.home, config.db_path)):
        return
    print(f"{PROG}: starting MAPLE's engine (it loads the model once for every transcript)...", file=sys.stderr)
    deadline = time.monotonic() + ENGINE_WAIT
    while not stop() and time.monotonic() < deadline:
        if remote.wait_until_up(config.home, config.db_path, 0.5):
            return


def _eta(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def cmd_backfill(ctx: Context) -> int:
    from memory.app import backfill, client

    a = ctx.args
    if a.limit is not None and a.limit < 1:
        raise InvalidInput("--limit must be 1 or more")
    if a.max_mb is not None and a.max_mb < 1:
        raise InvalidInput("--max-mb must be 1 or more")
    if a.idle_seconds is not None and a.idle_seconds < 0:
        raise InvalidInput("--idle-seconds must be 0 or more (0: read even a transcript written a moment ago)")
    config_dir = backfill.claude_dir(os.environ)
    progress = Progress(1, "backfill") if not a.json else None
    started = time.monotonic()
    count = [0]

    def show(done: int, total: int, t: Any) -> None:
        if progress is None or not progress.enabled:
            return
        progress.total = max(total, 1)
        elapsed = time.monotonic() - started
        eta = f", ETA {_eta(elapsed / done * (total - done))}" if done and total > done else ""
        note = f"{count[0]} transcripts done{eta}" + (f"  {fit(os.path.basename(t.path), 24)}" if t else "")
        if t is not None:
            count[0] += 1
        progress.update(done, note)

    engine: list[Any] = []

    def harvest(path: str, scope: str) -> dict[str, Any]:
        if not engine:  # the first transcript with something new: only now a model is needed
            _warm_engine(ctx.config, lambda: interrupt.asked)
            if interrupt.asked:
                raise backfill.Stopped  # nothing of this transcript was read: it is left for the next run
            engine.append(client.connect(ctx.config, ctx.project_dir, model=True))
        return engine[0].harvest(path, scope=scope)

    rehearsal = contextlib.ExitStack()
    stores: list[Any] = []

    def rehearse(path: str, scope: str) -> dict[str, Any]:
        # A dry run harvests for real, with the model a real run compares by, in one transaction
        # that is rolled back at the end (memory.app.backfill.rolled_back): its counts are the
        # real run's. Opened at the first pending transcript: nothing pending loads no model.
        if not stores:
            stores.append(rehearsal.enter_context(contextlib.closing(ctx.open(embedder=True))))
            rehearsal.enter_context(backfill.rolled_back(stores[0]))
        return backfill.rehearse(stores[0], path, scope)

    with _Interrupt() as interrupt:
        try:
            with rehearsal, ctx.app(local=True, all_projects=a.all_projects) as app:
                d = app.backfill(
                    str(config_dir),
                    since=a.since,
                    limit=a.limit,
                    dry_run=a.dry_run,
                    quiet_seconds=a.idle_seconds,
                    max_mb=a.max_mb,
                    harvest=rehearse if a.dry_run else harvest,
                    progress=show,
                    stop=lambda: interrupt.asked,
                )
        finally:
            if progress is not None:
                progress.close()
            for c in engine:
                c.close()
    if a.git:
        with ctx.app(embedder=not a.dry_run, local=True) as app:
            d["git"] = app.backfill_git(ctx.project_dir, since=a.since, dry_run=a.dry_run)
    d["seconds"] = round(time.monotonic() - started, 2)
    d["continue_with"] = _again(a) if d["stopped"] or d["left"] or d["failed"] else None
    out = d if a.dry_run else {k: v for k, v in d.items() if k != "transcripts"}
    ctx.emit(out, lambda: _human(d, a, str(config_dir)))
    return 130 if d["stopped"] else 0


def _again(a: argparse.Namespace) -> str:
    """The command that continues this run where it stopped."""
    words = [PROG, "backfill"]
    if a.all_projects:
        words.append("--all-projects")
    if a.since:
        words += ["--since", a.since]
    if a.max_mb:
        words += ["--max-mb", str(a.max_mb)]
    return " ".join(words)


def _human(d: dict[str, Any], a: argparse.Namespace, config_dir: str) -> None:
    if not d["found"] and not d["other_projects"]:
        hint = (
            ""
            if os.environ.get("CLAUDE_CONFIG_DIR")
            else " (if Claude Code runs with CLAUDE_CONFIG_DIR, set it here too)"
        )
        print(f"no Claude Code transcripts under {d['root']}{hint}")
    dry = a.dry_run
    if dry:
        for t in d["transcripts"]:
            if t["status"] == "pending":
                print(f"would read  {t['unread'] if 'unread' in t else t['size'] - t['offset']:>10} bytes  {t['path']}")
    for s in d["skipped"][:20]:
        print(f"{_paint('skipped', '33')}  {s['path']}: {s['reason']}", file=sys.stderr)
    if len(d["skipped"]) > 20:
        print(f"... and {len(d['skipped']) - 20} more skipped (--json lists them)", file=sys.stderr)
    for f in d["failed"]:
        print(f"{_paint('failed', '1;31')}   {f['path']}: {f['error']} (the next run tries it again)", file=sys.stderr)
    verb = "would be " if dry else ""
    rows = [
        ("transcripts found", d["found"]),
        (f"{verb}harvested" if dry else "harvested", d["harvested"]),
        ("already harvested", d["already_done"]),
        ("skipped", len(d["skipped"])),
        ("failed", len(d["failed"])),
        ("left for the next run", d["left"]),
        (f"memories {verb}stored", d["stored"]),
        (f"{verb}merged into known ones", d["merged"] + d["reinforced"]),
        (f"{verb}superseded", d["superseded"]),
        ("secrets redacted", d["redacted"]),
        ("corrupt lines skipped", d["malformed_lines"]),
    ]
    if d.get("other_projects") and not a.all_projects:
        rows.append(("other projects' transcripts", d["other_projects"]))
    if d.get("before_since"):
        rows.append(("before --since", d["before_since"]))
    g = d.get("git")
    if g and dry:
        for i in g["items"]:
            if i.get("action") not in (None, "rejected"):
                sha = str(i.get("source_ref", "")).removeprefix("git:")[:10]
                print(f"would keep  {sha}  {fit(i['content'], 100)}  ({i['action']})")
        rows.append((f"commits read ({g['repo']})", g["commits"]))
        rows.append((f"memories {verb}kept from commits", g["kept"]))
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")
    if len(d.get("by_scope") or {}) > 1:
        for scope, n in sorted(d["by_scope"].items()):
            print(f"    {n:>5}  {scope}")
    print(f"  {'seconds'.ljust(width)}  {d['seconds']:.1f}")
    if dry:
        print("(dry run: nothing written)")
    if d["stopped"]:
        print(f"stopped: {d['left']} transcripts left; `{d['continue_with']}` continues where this run stopped")
    elif d["left"] or d["failed"]:
        print(f"`{d['continue_with']}` continues with the {d['left'] + len(d['failed'])} transcripts left")
