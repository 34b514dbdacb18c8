"""`maple-memory migrate --to postgresql://…`: copy the local SQLite store into a team database.

Only formats what memory.app.transfer.migrate does (the import rule, so a second run adds nothing
and a killed run is finished by running it again) and says clearly what is wrong with the URL,
the server, the driver or the schema before anything is copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

from memory import embed
from memory.cli.common import PROG, Context, Progress
from memory.errors import InvalidInput, NotFound
from memory.store import Store, pg


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    p = command(
        "migrate",
        "copy the local SQLite store into a team PostgreSQL database (idempotent, resumable, deduplicated)",
    )
    p.add_argument("--to", required=True, metavar="URL", help="the team database, postgresql://user:pass@host/db")
    p.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="the SQLite store to copy (default: <home>/memory.db, or `database` when it is a file)",
    )


def check_url(url: str) -> str:
    """The URL if it names a PostgreSQL database; InvalidInput saying what is wrong if not."""
    if not pg.is_url(url):
        raise InvalidInput(
            f"--to takes a postgresql:// URL (postgresql://user:password@host:5432/maple), not {pg.safe_url(url)!r}"
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as e:
        raise InvalidInput(f"--to {pg.safe_url(url)} is not a valid URL ({e})") from e
    if not parts.path.strip("/") and "dbname=" not in parts.query:
        raise InvalidInput(
            f"--to {pg.safe_url(url)} names no database; add it after the host: postgresql://user@host:5432/maple"
        )
    return url


def source_path(ctx: Context) -> Path:
    if ctx.args.source:
        path = Path(ctx.args.source).expanduser()
    elif ctx.config.database_url:  # the configured database is the team one already: the home's file
        path = ctx.config.home / "memory.db"
    else:
        path = ctx.config.db_path
    if not path.is_file():
        raise NotFound(f"no local store at {path}; give the SQLite file to copy with --from FILE")
    return path


def _vectors(model: str | None, dim: int | None, revision: str) -> str:
    return f"{dim}-dim vectors from {model!r}" + (f" (revision {revision})" if revision else "")


def cmd_migrate(ctx: Context) -> int:
    from memory.app import transfer

    url = check_url(ctx.args.to)
    path = source_path(ctx)
    source = Store.open(ctx.config, None, path=path, create=False)
    try:
        target_config = dataclasses.replace(ctx.config, database=url)
        target = Store.open(target_config, None)  # StoreUnavailable: unreachable, no driver, newer schema
        try:
            if source.vector_model:
                held = (target.vector_model, target.vector_dim, target.vector_revision)
                mine = (source.vector_model, source.vector_dim, source.vector_revision)
                if target.vector_model and held != mine:
                    raise InvalidInput(
                        f"the team database holds {_vectors(*held)}, this store {_vectors(*mine)}; re-embed "
                        f"this store first (`{PROG} reindex --model {target.vector_model}`), then migrate"
                    )
                model_config = dataclasses.replace(ctx.config, embedding_model=source.vector_model)
                target.embedder = transfer.CopiedVectors(source, lambda: embed.from_config(model_config))
            progress = Progress(None, "migrating")

            def step(done: int, total: int) -> None:
                progress.total = total
                progress.update(done, f"{done}/{total}")

            try:
                report = transfer.migrate(source, target, progress=step).to_dict()
            finally:
                progress.close()
        finally:
            target.close()
    finally:
        source.close()
    report["target"] = pg.safe_url(url)

    def human() -> None:
        for r in report["errors"][:20]:
            print(f"{PROG}: memory {r['line']} of the export: {r['error']}", file=sys.stderr)
        for h in report["history"][:20]:
            print(f"{PROG}: memory {h['id']} not copied: {h['note']}; what is current there stands", file=sys.stderr)
        history = report["left_as_history"]
        print(
            f"migrated {path} to {report['target']}: {report['copied']} copied, {report['already_there']} already "
            f"there, "
            + (f"{history} left out as history (corrected or archived on the team database since), " if history else "")
            + f"{report['rejected']} rejected; {report['versions']} earlier versions, {report['outcomes']} "
            f"decision outcomes; vectors {report['vectors_copied']} copied, {report['vectors_computed']} computed "
            f"({report['seconds']:.1f}s)"
        )
        for folder, key in sorted(report["projects"].items()):
            print(f"{PROG}: project {folder} is {key} in the team database (its origin remote)", file=sys.stderr)
        for folder in report["folders_gone"]:
            print(
                f"{PROG}: {folder} no longer exists here, so its memories keep the path as their project "
                "(no remote to read); teammates will not see them as any repository's",
                file=sys.stderr,
            )
        if ctx.config.database_url != url:
            print(
                f'{PROG}: to use it from now on, set "database" in {ctx.config.home / "config.json"} to the URL '
                "(or MAPLE_DATABASE_URL); the local store stays as it is",
                file=sys.stderr,
            )

    ctx.emit(report, human)
    return 1 if report["rejected"] else 0
