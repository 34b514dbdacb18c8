"""The `maple-memory` commands that mirror the MCP tools added with the graph and wisdom layers:
update, pin, history, entity, relate, neighbors, path, decide, outcome, lessons, graph, context.

Kept apart from memory/cli.py (which wires them in) so that module stays about the program; these
only call memory.browse / graph_query / wisdom / context and format what they return. Every
command prints a readable table (coloured on a terminal) or, with --json, one JSON document.
`TOOL_COMMANDS` maps every MCP tool to the command a person uses for the same thing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from memory.cli.common import PROG, Context, Progress, _date, _paint, _table, fit
from memory.errors import InvalidInput
from memory.store import GLOBAL, LAYERS, iso

# The MCP tool -> the command that does the same for a person (a test keeps it complete).
TOOL_COMMANDS = {
    "memory_store": "add", "memory_search": "search", "memory_get": "show", "memory_forget": "forget",
    "memory_update": "update", "memory_pin": "pin", "memory_list": "list", "memory_history": "history",
    "memory_stats": "stats", "memory_maintain": "maintain", "memory_surface": "context",
    "memory_context": "context", "entity_get": "entity", "entity_relate": "relate",
    "graph_neighbors": "neighbors", "graph_path": "path", "decision_record": "decide",
    "decision_outcome": "outcome", "lessons_for": "lessons",
}
OUTCOME_COLOURS = {"failed": "1;31", "partial": "33", "worked": "32", None: "2"}


def add_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    p = command("update", "change a memory; the previous version is kept in its history")
    p.add_argument("id", type=int)
    p.add_argument("--content", help="new text ('-' reads stdin)")
    p.add_argument("--layer", choices=LAYERS)
    p.add_argument("--category")
    p.add_argument("--subject")
    p.add_argument("--importance", type=int, help="1-5")
    p.add_argument("--tag", action="append", metavar="TAG", help="replace the tags (repeat for more)")
    p.add_argument("--global", dest="global_scope", action="store_true", help="move it to the global scope")
    p.add_argument("--supersede", action="store_true",
                   help="store the new content as a new memory and keep this one as history")
    p.add_argument("--reason", default="update", help="why it changed (kept with the old version)")

    p = command("pin", "pin a memory (always surfaced first, never decays); --off unpins")
    p.add_argument("id", type=int)
    p.add_argument("--off", action="store_true", help="unpin")

    p = command("history", "how a memory or a subject changed: replacements and earlier versions")
    p.add_argument("id", type=int, nargs="?")
    p.add_argument("--subject", help="every memory about this subject instead of one memory")

    p = command("entity", "an entity with its aliases, relations and memories")
    p.add_argument("name", help="name, alias or id")
    p.add_argument("--limit", type=int, default=20, help="memories to show (default 20)")

    p = command("relate", "add a relation between two entities (or close it with --close)")
    p.add_argument("source")
    p.add_argument("relation", help="relation type, e.g. uses, depends_on")
    p.add_argument("target")
    p.add_argument("--close", action="store_true", help="end the relation (kept as history)")
    p.add_argument("--global", dest="global_scope", action="store_true", help="a relation true in every project")
    p.add_argument("--confidence", type=float, default=1.0, help="0-1 (default 1)")

    p = command("neighbors", "entities within N relations of an entity")
    p.add_argument("name")
    p.add_argument("--hops", type=int, default=1, help="1-6 (default 1)")
    p.add_argument("--type", action="append", metavar="TYPE", help="follow only this relation type (repeat)")
    p.add_argument("--limit", type=int, default=100)

    p = command("path", "the shortest chain of relations between two entities")
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--max-hops", type=int, default=6, help="1-10 (default 6)")
    p.add_argument("--type", action="append", metavar="TYPE", help="follow only this relation type (repeat)")

    p = command("decide", "record a decision: what was chosen, why, the alternatives")
    p.add_argument("chosen", help="what was decided")
    p.add_argument("--why", required=True, help="the reasons")
    p.add_argument("--alternative", action="append", metavar="TEXT", help="an option not chosen (repeat)")
    p.add_argument("--subject")
    p.add_argument("--category", default="decision")
    p.add_argument("--importance", type=int, default=3)
    p.add_argument("--context", help="the situation it was made in")
    p.add_argument("--global", dest="global_scope", action="store_true", help="a decision for every project")

    p = command("outcome", "record how a decision turned out")
    p.add_argument("id", type=int, help="the decision's id")
    p.add_argument("result", choices=("worked", "failed", "partial"))
    p.add_argument("--notes", default="", help="what happened, what to do differently")

    p = command("lessons", "past decisions relevant to a task, failures first")
    p.add_argument("task")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--decided-only", action="store_true", help="leave out decisions with no outcome yet")

    p = command("graph", "the knowledge graph around an entity (or the most connected part)")
    p.add_argument("name", nargs="?", help="entity to centre on (default: the most connected one)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained page that draws it (no network)")
    p.add_argument("--hops", type=int, default=2, help="1-6 (default 2)")
    p.add_argument("--max-nodes", type=int, default=80, help="most entities to draw (default 80)")

    p = command("context", "the memory briefing for a task (memory_context), or with --prompt what a "
                           "prompt would surface (memory_surface, nothing recorded)")
    p.add_argument("query")
    p.add_argument("--budget", type=int, default=800, help="tokens (default 800)")
    p.add_argument("--prompt", action="store_true", help="apply the prompt hook's gating, as on each prompt")


# -- memories ---------------------------------------------------------------------------------------

def _show_memory_line(m: Any) -> None:
    _table([(str(m.id), _date(m.occurred_at), f"{m.layer}/{m.category}", m.content)], ("1;36", "2", "33"))


def cmd_update(ctx: Context) -> int:
    from memory.store import NewMemory, versions

    a = ctx.args
    content = sys.stdin.read() if a.content == "-" else a.content
    changes = {"content": content, "layer": a.layer, "category": a.category, "subject": a.subject,
               "importance": a.importance, "tags": a.tag, "scope": GLOBAL if a.global_scope else None}
    with ctx.open(embedder=content is not None) as store:
        old = store.get(a.id)
        if old.scope not in ctx.scopes:
            raise InvalidInput(f"memory {a.id} belongs to another project; use --project to work there")
        if a.supersede:
            if content is None:
                raise InvalidInput("--supersede needs --content (the new text)")
            fields = {k: getattr(old, k) for k in ("content", "layer", "category", "subject", "scope",
                                                   "importance", "tags", "pinned", "metadata")}
            fields.update({k: v for k, v in changes.items() if v is not None})
            old, new = versions.supersede(store, a.id, NewMemory(**fields), reason=a.reason)
            result = {"action": "superseded", "memory": new.to_dict(), "replaced": old.to_dict()}
            ctx.emit(result, lambda: print(f"memory {new.id} replaces {old.id} (kept as history; "
                                           f"`{PROG} history {new.id}`)"))
            return 0
        m, changed = versions.edit(store, a.id, reason=a.reason, **changes)
    ctx.emit({"action": "edited" if changed else "unchanged", "memory": m.to_dict()},
             lambda: print(f"updated memory {m.id}; the previous version is in `{PROG} history {m.id}`"
                           if changed else f"memory {m.id} already says that; nothing changed"))
    return 0


def cmd_pin(ctx: Context) -> int:
    a = ctx.args
    with ctx.open(embedder=False) as store:
        m = store.get(a.id)
        if m.scope not in ctx.scopes:
            raise InvalidInput(f"memory {a.id} belongs to another project; use --project to work there")
        if m.pinned == a.off:  # only a change writes a version
            m = store.update(a.id, pinned=not a.off, reason="unpin" if a.off else "pin")
    ctx.emit({"id": m.id, "pinned": m.pinned, "memory": m.to_dict()},
             lambda: print(f"{'pinned' if m.pinned else 'unpinned'} memory {m.id}"))
    return 0


def cmd_history(ctx: Context) -> int:
    from memory.store import versions

    a = ctx.args
    with ctx.open(embedder=False) as store:
        entries = versions.history(store, ctx.scopes, memory_id=a.id, subject=a.subject)

    def human() -> None:
        colours = {"current": "32", "superseded": "2", "expired": "2", "archived": "33"}
        for e in entries:
            m = e.memory
            link = f" -> {m.superseded_by}" if m.superseded_by else ""
            print(_paint(f"#{m.id}", "1;36") + " " + _paint(e.status + link, colours[e.status])
                  + f"  {_date(m.occurred_at)}  {fit(m.content, 90)}")
            for v in e.versions:
                print(_paint(f"    {(iso(v.changed_at) or '')[:16]}  {v.reason}: {', '.join(v.changed) or '-'}", "2")
                      + f"  was: {fit(v.content, 70)}")

    ctx.emit({"entries": [e.to_dict() for e in entries]}, human)
    return 0


# -- graph -------------------------------------------------------------------------------------------

def _node(n: dict[str, Any]) -> str:
    return f"{n['name']} ({n['kind']}{', global' if n['scope'] == GLOBAL else ''})"


def cmd_entity(ctx: Context) -> int:
    from memory.retrieval import graph_query

    a = ctx.args
    with ctx.open(embedder=False) as store:
        d = graph_query.entity_detail(store, ctx.scopes, a.name, memory_limit=a.limit)

    def human() -> None:
        e = d["entity"]
        print(_paint(e["name"], "1;36") + f"  {e['kind']} · {'global' if e['scope'] == GLOBAL else 'this project'}"
              f" · {d['memory_count']} memories" + (f" · aliases: {', '.join(d['aliases'])}" if d["aliases"] else ""))
        for r in d["relations"]:
            arrow = f"-[{r['type']}]->" if r["direction"] == "out" else f"<-[{r['type']}]-"
            print(f"  {arrow} {_node(r['other'])}" + ("" if r["open"] else _paint(f"  (closed {r['valid_to'][:10]})", "2")))
        if d["memories"]:
            print()
        _table([(str(m["id"]), (m["occurred_at"] or "")[:10], m["content"]) for m in d["memories"]], ("1;36", "2"))

    ctx.emit(d, human)
    return 0


def cmd_relate(ctx: Context) -> int:
    from memory.retrieval import graph_query

    a = ctx.args
    with ctx.open(embedder=False) as store:
        d = graph_query.relate(store, GLOBAL if a.global_scope else ctx.project, a.source, a.relation, a.target,
                               close=a.close, readable=ctx.scopes, confidence=a.confidence)
    ctx.emit(d, lambda: print(f"{d['action']}: {d['source']['name']} -[{d['relation']['type']}]-> {d['target']['name']}"))
    return 0


def _edges(d: dict[str, Any], names: dict[int, str]) -> list[tuple[str, ...]]:
    return [(names.get(e["src"], str(e["src"])), f"-[{e['type']}]->", names.get(e["dst"], str(e["dst"])))
            for e in d["edges"]]


def cmd_neighbors(ctx: Context) -> int:
    from memory.retrieval import graph_query

    a = ctx.args
    with ctx.open(embedder=False) as store:
        d = graph_query.neighbors(store, ctx.scopes, a.name, hops=a.hops, types=a.type, limit=a.limit)

    def human() -> None:
        if not d["nodes"]:
            print(f"{PROG}: {a.name!r} has no relations" + (f" of type {', '.join(a.type)}" if a.type else ""),
                  file=sys.stderr)
        _table([(str(n["hops"]), _node(n)) for n in d["nodes"]], ("1;36",))
        if d["truncated"]:
            print(f"{PROG}: more within reach; raise --limit", file=sys.stderr)

    ctx.emit(d, human)
    return 0


def cmd_path(ctx: Context) -> int:
    from memory.retrieval import graph_query

    a = ctx.args
    with ctx.open(embedder=False) as store:
        d = graph_query.path(store, ctx.scopes, a.source, a.target, max_hops=a.max_hops, types=a.type)

    def human() -> None:
        if not d["found"]:
            print(f"{PROG}: no path from {a.source!r} to {a.target!r} within {a.max_hops} hops", file=sys.stderr)
            return
        names = {n["id"]: n["name"] for n in d["nodes"]}
        line = names[d["nodes"][0]["id"]]
        at = d["nodes"][0]["id"]
        for e in d["edges"]:
            forward = e["src"] == at
            at = e["dst"] if forward else e["src"]
            line += (f" -[{e['type']}]-> " if forward else f" <-[{e['type']}]- ") + names.get(at, str(at))
        print(line)
        print(_paint(f"{d['hops']} hop(s)", "2"))

    ctx.emit(d, human)
    return 0


def cmd_graph(ctx: Context) -> int:
    import memory.cli.graph_html as graph_html
    from memory.retrieval import graph_query

    a = ctx.args
    if not 1 <= a.max_nodes <= graph_query.MAX_NODES:
        raise InvalidInput(f"--max-nodes must be 1-{graph_query.MAX_NODES}")
    progress = Progress(3, "graph")
    try:
        with ctx.open(embedder=False) as store:
            progress.update(1, "reading")
            sub = graph_query.subgraph(store, ctx.scopes, a.name, hops=a.hops, max_nodes=a.max_nodes)
        names = {n["id"]: n["name"] for n in sub["nodes"]}
        centre = names.get(sub["center"], "")
        if a.html:
            progress.update(2, "drawing")
            target = Path(a.html).expanduser()
            if not target.parent.is_dir():
                raise InvalidInput(f"cannot write {a.html}: its folder does not exist")
            target.write_text(graph_html.render(sub, f"MAPLE knowledge graph: {centre}"), encoding="utf-8")
            progress.update(3, "done")
    finally:
        progress.close()
    result = {"center": sub["center"], "nodes": len(sub["nodes"]), "edges": len(sub["edges"]),
              **({"html": str(Path(a.html).expanduser().resolve())} if a.html else {"graph": sub})}

    def human() -> None:
        if a.html:
            print(f"wrote {a.html}: {len(sub['nodes'])} entities around {centre!r}, {len(sub['edges'])} connections; "
                  "open it in a browser")
            return
        _table(_edges(sub, names), ("1;36", "2"))

    ctx.emit(result, human)
    return 0


# -- wisdom ------------------------------------------------------------------------------------------

def cmd_decide(ctx: Context) -> int:
    from memory.store import decisions

    a = ctx.args
    with ctx.open(embedder=True) as store:
        m = decisions.record_decision(store, a.chosen, a.why, scope=GLOBAL if a.global_scope else ctx.project,
                                   alternatives=a.alternative or [], subject=a.subject, category=a.category,
                                   importance=a.importance, context=a.context)
    def human() -> None:
        print(m.id)
        print(f"{PROG}: when you know how it turned out: `{PROG} outcome {m.id} worked|failed|partial --notes ...`",
              file=sys.stderr)

    ctx.emit({"id": m.id, "memory": m.to_dict()}, human)
    return 0


def cmd_outcome(ctx: Context) -> int:
    from memory.store import decisions

    a = ctx.args
    with ctx.open(embedder=False) as store:
        m, o = decisions.record_outcome(store, a.id, a.result, a.notes, scopes=ctx.scopes)
    ctx.emit({"outcome": o.to_dict(), "decision": m.to_dict()}, lambda: print(
        f"decision {m.id}: " + _paint(o.outcome, OUTCOME_COLOURS[o.outcome])
        + (f" (importance now {m.importance}; it will come first in `{PROG} lessons`)" if o.outcome == "failed" else "")))
    return 0


def cmd_lessons(ctx: Context) -> int:
    from memory.retrieval import lessons as wisdom

    a = ctx.args
    with ctx.open(embedder=True) as store:
        lessons = wisdom.lessons_for(store, a.task, ctx.scopes, limit=a.limit, include_open=not a.decided_only)

    def human() -> None:
        if not lessons:
            print(f"{PROG}: no past decisions match {a.task!r}", file=sys.stderr)
        for les in lessons:
            word = les.outcome or "open"
            print(_paint(f"{les.memory.id:>5}", "1;36") + "  " + _paint(word.ljust(7), OUTCOME_COLOURS[les.outcome])
                  + "  " + fit(les.memory.content, 100))
            if les.outcomes and les.outcomes[-1].notes:
                print(_paint(f"{'':>5}  {'':7}  notes: {fit(les.outcomes[-1].notes, 93)}", "2"))

    ctx.emit({"task": a.task, "lessons": [les.to_dict() for les in lessons]}, human)
    return 0


def cmd_context(ctx: Context) -> int:
    from memory.retrieval import context

    a = ctx.args
    if not 50 <= a.budget <= 2400:
        raise InvalidInput(f"--budget must be 50-2400 tokens, got {a.budget}")
    with ctx.open(embedder=True) as store:
        skipped = context.skip_reason(a.query) if a.prompt else None
        # A preview: nothing is recorded as injected or recalled.
        items = [] if skipped else context.tiered_context(store, a.query, ctx.scopes, a.budget)
    block = context.format_block(items)

    def human() -> None:
        if skipped:
            print(f"{PROG}: a prompt like this surfaces nothing ({skipped})", file=sys.stderr)
        elif not block:
            print(f"{PROG}: no memories are relevant enough to {a.query!r}", file=sys.stderr)
        else:
            print(block)

    ctx.emit({"query": a.query, "skipped": skipped, "block": block,
              "items": [{"id": i.memory.id, "tier": i.tier, "line": i.line} for i in items]}, human)
    return 0


COMMANDS: dict[str, Callable[[Context], int]] = {
    "update": cmd_update, "pin": cmd_pin, "history": cmd_history, "entity": cmd_entity, "relate": cmd_relate,
    "neighbors": cmd_neighbors, "path": cmd_path, "graph": cmd_graph, "decide": cmd_decide,
    "outcome": cmd_outcome, "lessons": cmd_lessons, "context": cmd_context,
}


def run(ctx: Context) -> int:
    return COMMANDS[ctx.args.command](ctx)
