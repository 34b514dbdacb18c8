"""The `maple-memory` commands that mirror the MCP tools added with the graph and wisdom layers:
update, pin, history, entity, relate, neighbors, path, decide, outcome, lessons, graph, context.

Kept apart from memory/cli.py (which wires them in) so that module stays about the program; these
only call memory.browse / graph_query / wisdom / context and format what they return. Every
command prints a readable table (coloured on a terminal) or, with --json, one JSON document.
`TOOL_COMMANDS` maps every MCP tool to the command a person uses for the same thing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.cli.common import PROG, Context, Progress, _paint, _table, all_projects_flag, fit
from memory.errors import InvalidInput
from memory.store import GLOBAL, LAYERS

# The MCP tool -> the command that does the same for a person (a test keeps it complete).
TOOL_COMMANDS = {
    "memory_store": "add",
    "memory_search": "search",
    "memory_get": "show",
    "memory_forget": "forget",
    "memory_restore": "restore",
    "memory_update": "update",
    "memory_pin": "pin",
    "memory_list": "list",
    "memory_history": "history",
    "memory_stats": "stats",
    "memory_maintain": "maintain",
    "memory_surface": "context",
    "memory_context": "context",
    "entity_get": "entity",
    "entity_relate": "relate",
    "graph_neighbors": "neighbors",
    "graph_path": "path",
    "decision_record": "decide",
    "decision_outcome": "outcome",
    "lessons_for": "lessons",
}


def in_cli_words(message: str) -> str:
    """An error the application API words for the assistant (it names MCP tools: "from entity_relate"),
    in a person's words: the command that does the same ("from `maple-memory relate`")."""
    for tool, command in TOOL_COMMANDS.items():
        said = f"`{PROG} {command}`"
        message = message.replace(f"({tool}, {said})", f"({said})")
        message = re.sub(rf"(?<![\w`-]){tool}\b", said, message)
    return message


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
    p.add_argument(
        "--supersede", action="store_true", help="store the new content as a new memory and keep this one as history"
    )
    p.add_argument("--reason", default="update", help="why it changed (kept with the old version)")
    p.add_argument(
        "--forget-old",
        action="store_true",
        help="the old text is deleted for good, not kept as a version (a pasted secret); earlier backups still hold it",
    )
    all_projects_flag(p)

    p = command("pin", "pin a memory (always surfaced first, never decays); --off unpins")
    p.add_argument("id", type=int)
    p.add_argument("--off", action="store_true", help="unpin")
    all_projects_flag(p)

    p = command("history", "how a memory or a subject changed: replacements and earlier versions")
    p.add_argument("id", type=int, nargs="?")
    p.add_argument("--subject", help="every memory about this subject instead of one memory")
    all_projects_flag(p)

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
    all_projects_flag(p)

    p = command("lessons", "past decisions relevant to a task, failures first")
    p.add_argument("task")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--decided-only", action="store_true", help="leave out decisions with no outcome yet")

    p = command("graph", "the knowledge graph around an entity (or the most connected part)")
    p.add_argument("name", nargs="?", help="entity to centre on (default: the most connected one)")
    p.add_argument("--html", metavar="FILE", help="write a self-contained page that draws it (no network)")
    p.add_argument("--hops", type=int, default=2, help="1-6 (default 2)")
    p.add_argument("--max-nodes", type=int, default=80, help="most entities to draw (default 80)")

    p = command(
        "context",
        "the memory briefing for a task (memory_context), or with --prompt what a "
        "prompt would surface (memory_surface, nothing recorded)",
    )
    p.add_argument("query")
    p.add_argument("--budget", type=int, default=800, help="tokens (default 800)")
    p.add_argument("--prompt", action="store_true", help="apply the prompt hook's gating, as on each prompt")


# -- memories ---------------------------------------------------------------------------------------


def cmd_update(ctx: Context) -> int:
    a = ctx.args
    content = sys.stdin.read() if a.content == "-" else a.content
    if a.supersede and content is None:
        raise InvalidInput("--supersede needs --content (the new text)")
    if a.supersede and a.forget_old:
        raise InvalidInput("--forget-old edits in place and keeps no history; drop --supersede")
    with ctx.app(embedder=content is not None, all_projects=a.all_projects) as app:
        d = app.update(
            a.id,
            content=content,
            layer=a.layer,
            category=a.category,
            subject=a.subject,
            importance=a.importance,
            tags=a.tag,
            scope="global" if a.global_scope else None,
            mode="supersede" if a.supersede else "edit",
            reason=a.reason,
            forget_old=a.forget_old,
        )
    m = d["memory"]
    if d["action"] == "superseded":
        old = d["replaced"]
        ctx.emit(
            {"action": "superseded", "memory": m, "replaced": old},
            lambda: print(f"memory {m['id']} replaces {old['id']} (kept as history; `{PROG} history {m['id']}`)"),
        )
        return 0
    if d["action"] != "edited":
        said = f"memory {m['id']} already says that; nothing changed"
    elif a.forget_old:  # its earlier versions were deleted for good: no history to point at
        said = f"updated memory {m['id']}; the previous text and its earlier versions are gone for good"
    else:
        said = f"updated memory {m['id']}; the previous version is in `{PROG} history {m['id']}`"
    ctx.emit({"action": d["action"], "memory": m}, lambda: print(said))
    return 0


def cmd_pin(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(all_projects=a.all_projects) as app:
        m = app.pin(a.id, not a.off)["memory"]
    ctx.emit(
        {"id": m["id"], "pinned": m["pinned"], "memory": m},
        lambda: print(f"{'pinned' if m['pinned'] else 'unpinned'} memory {m['id']}"),
    )
    return 0


# How `history` names the fields a version changed, for people (--json keeps the field names).
FIELD_WORDS = {"superseded_by": "successor", "valid_to": "end", "valid_from": "start", "deleted_at": "archived"}


def cmd_history(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(all_projects=a.all_projects) as app:
        entries = app.history(a.id, a.subject)["entries"]

    def human() -> None:
        colours = {"current": "32", "superseded": "2", "expired": "2", "archived": "33"}
        for e in entries:
            m = e["memory"]
            link = f" -> {m['superseded_by']}" if m["superseded_by"] else ""
            kept = (m.get("metadata") or {}).get("kept_from")
            link += f" (what {kept} said that the change left standing)" if kept else ""
            # when it was said, and until when it held (not when MAPLE read it: the lines below)
            held = f" until {m['valid_to'][:10]}" if m.get("valid_to") else ""
            print(
                _paint(f"#{m['id']}", "1;36")
                + " "
                + _paint(e["status"] + link, colours[e["status"]])
                + f"  {(m['occurred_at'] or '')[:10]}{held}  {fit(m['content'], 90)}"
            )
            for v in e["versions"]:
                # when, why, who (the editor, not what replaced it), what changed; the text only if it did
                changed = ", ".join(FIELD_WORDS.get(f, f.replace("_", " ")) for f in v["changed"]) or "nothing"
                print(
                    _paint(
                        f"    recorded {(v['changed_at'] or '').replace('T', ' ')[:16]}  {v['reason']}"
                        + (f" · {v['editor']}" if v.get("editor") else "")
                        + f" · changed: {changed}",
                        "2",
                    )
                    + (f"; text was: {fit(v['content'], 70)}" if "content" in v["changed"] else "")
                )

    ctx.emit({"entries": entries}, human)
    return 0


# -- graph -------------------------------------------------------------------------------------------


def _node(n: dict[str, Any]) -> str:
    return f"{n['name']} ({n['kind']}{', global' if n['scope'] == GLOBAL else ''})"


def cmd_entity(ctx: Context) -> int:
    a = ctx.args
    with ctx.app() as app:
        d = app.entity(a.name, memory_limit=a.limit)

    def human() -> None:
        e = d["entity"]
        print(
            _paint(e["name"], "1;36") + f"  {e['kind']} · {'global' if e['scope'] == GLOBAL else 'this project'}"
            f" · {d['memory_count']} memories" + (f" · aliases: {', '.join(d['aliases'])}" if d["aliases"] else "")
        )
        for r in d["relations"]:
            arrow = f"-[{r['type']}]->" if r["direction"] == "out" else f"<-[{r['type']}]-"
            print(
                f"  {arrow} {_node(r['other'])}"
                + ("" if r["open"] else _paint(f"  (closed {r['valid_to'][:10]})", "2"))
            )
        if d["memories"]:
            print()
        _table([(str(m["id"]), (m["occurred_at"] or "")[:10], m["content"]) for m in d["memories"]], ("1;36", "2"))

    ctx.emit(d, human)
    return 0


def cmd_relate(ctx: Context) -> int:
    a = ctx.args
    with ctx.app() as app:
        d = app.relate(
            a.source,
            a.relation,
            a.target,
            scope="global" if a.global_scope else "project",
            close=a.close,
            confidence=a.confidence,
        )
    if d["action"] == "aliased":
        ctx.emit(d, lambda: print(f"aliased: {d['alias']} is another name of {d['target']['name']}"))
    else:
        ctx.emit(
            d, lambda: print(f"{d['action']}: {d['source']['name']} -[{d['relation']['type']}]-> {d['target']['name']}")
        )
    return 0


def _edges(d: dict[str, Any], names: dict[int, str]) -> list[tuple[str, ...]]:
    """The relations first, each with its direction; then the names only mentioned together, which
    state nothing and have none ("~ together 3x ~": three memories name both)."""
    stated = [e for e in d["edges"] if e["type"] != "mentioned_with"]
    together = sorted((e for e in d["edges"] if e["type"] == "mentioned_with"), key=lambda e: -e.get("count", 1))
    return [
        (names.get(e["src"], str(e["src"])), f"-[{e['type']}]->", names.get(e["dst"], str(e["dst"]))) for e in stated
    ] + [
        (names.get(e["src"], str(e["src"])), f"~ together {e.get('count', 1)}x ~", names.get(e["dst"], str(e["dst"])))
        for e in together
    ]


def cmd_neighbors(ctx: Context) -> int:
    a = ctx.args
    with ctx.app() as app:
        d = app.neighbors(a.name, hops=a.hops, types=a.type, limit=a.limit)

    def human() -> None:
        if not d["nodes"]:
            print(
                f"{PROG}: {a.name!r} has no relations" + (f" of type {', '.join(a.type)}" if a.type else ""),
                file=sys.stderr,
            )
        _table([(str(n["hops"]), _node(n)) for n in d["nodes"]], ("1;36",))
        if d["truncated"]:
            print(f"{PROG}: more within reach; raise --limit", file=sys.stderr)

    ctx.emit(d, human)
    return 0


def cmd_path(ctx: Context) -> int:
    a = ctx.args
    with ctx.app() as app:
        d = app.path(a.source, a.target, max_hops=a.max_hops, types=a.type)

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

    a = ctx.args
    progress = Progress(3, "graph")
    try:
        with ctx.app() as app:
            progress.update(1, "reading")
            sub = app.graph(a.name, hops=a.hops, max_nodes=a.max_nodes)
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
    result = {
        "center": sub["center"],
        "nodes": len(sub["nodes"]),
        "edges": len(sub["edges"]),
        **({"html": str(Path(a.html).expanduser().resolve())} if a.html else {"graph": sub}),
    }

    def human() -> None:
        if a.html:
            print(
                f"wrote {a.html}: {len(sub['nodes'])} entities around {centre!r}, {len(sub['edges'])} connections; "
                "open it in a browser"
            )
            return
        _table(_edges(sub, names), ("1;36", "2"))

    ctx.emit(result, human)
    return 0


# -- wisdom ------------------------------------------------------------------------------------------


def cmd_decide(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(embedder=True) as app:
        m = app.decide(
            a.chosen,
            a.why,
            alternatives=a.alternative,
            subject=a.subject,
            category=a.category,
            importance=a.importance,
            scope="global" if a.global_scope else "project",
            context=a.context,
        )["memory"]

    def human() -> None:
        print(m["id"])
        print(
            f"{PROG}: when you know how it turned out: `{PROG} outcome {m['id']} worked|failed|partial --notes ...`",
            file=sys.stderr,
        )

    ctx.emit({"id": m["id"], "memory": m}, human)
    return 0


def cmd_outcome(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(all_projects=a.all_projects) as app:
        d = app.outcome(a.id, a.result, a.notes)
    m, o = d["decision"], d["outcome"]
    ctx.emit(
        {"outcome": o, "decision": m},
        lambda: print(
            f"decision {m['id']}: "
            + _paint(o["outcome"], OUTCOME_COLOURS[o["outcome"]])
            + (
                f" (importance now {m['importance']}; it will come first in `{PROG} lessons`)"
                if o["outcome"] == "failed"
                else ""
            )
        ),
    )
    return 0


def cmd_lessons(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(embedder=True) as app:
        lessons = app.lessons(a.task, limit=a.limit, include_open=not a.decided_only)["lessons"]

    def human() -> None:
        if not lessons:
            print(f"{PROG}: no past decisions match {a.task!r}", file=sys.stderr)
        for les in lessons:
            m, word = les["memory"], les["outcome"] or "open"
            print(
                _paint(f"{m['id']:>5}", "1;36")
                + "  "
                + _paint(word.ljust(7), OUTCOME_COLOURS[les["outcome"]])
                + "  "
                + fit(m["content"], 100)
            )
            if les["outcomes"] and les["outcomes"][-1]["notes"]:
                print(_paint(f"{'':>5}  {'':7}  notes: {fit(les['outcomes'][-1]['notes'], 93)}", "2"))

    ctx.emit({"task": a.task, "lessons": lessons}, human)
    return 0


def cmd_context(ctx: Context) -> int:
    a = ctx.args
    with ctx.app(embedder=True) as app:
        # A preview: nothing is recorded as injected or recalled.
        d = app.context(a.query, budget=a.budget, record=False, as_prompt=a.prompt)
    if not d["skipped"] and not d["block"] and not d.get("note"):  # the same words in --json as on the terminal
        d["note"] = f"no memory is close enough to this query to brief on; `{PROG} search` lists weaker matches, if any"

    def human() -> None:
        if d.get("model") not in (None, "ready"):
            print(
                f"{PROG}: picked without vectors, by words alone (the embedding model is {d['model']}; MAPLE's "
                "engine loads it in the background: ask again in a few seconds)",
                file=sys.stderr,
            )
        if d["skipped"]:
            print(f"{PROG}: a prompt like this surfaces nothing ({d['skipped']})", file=sys.stderr)
        else:
            if d["block"]:
                print(d["block"])
            if d.get("note"):
                print(f"{PROG}: {d['note']}", file=sys.stderr)

    ctx.emit(d, human)
    return 0


COMMANDS: dict[str, Callable[[Context], int]] = {
    "update": cmd_update,
    "pin": cmd_pin,
    "history": cmd_history,
    "entity": cmd_entity,
    "relate": cmd_relate,
    "neighbors": cmd_neighbors,
    "path": cmd_path,
    "graph": cmd_graph,
    "decide": cmd_decide,
    "outcome": cmd_outcome,
    "lessons": cmd_lessons,
    "context": cmd_context,
}


def run(ctx: Context) -> int:
    return COMMANDS[ctx.args.command](ctx)
