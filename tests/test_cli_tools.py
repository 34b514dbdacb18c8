"""The commands that mirror the MCP tools (memory.cli_tools), run in-process on a real home, and
the graph page opened in headless Chromium."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)

from memory import cli
from memory import config as config_mod
from memory.cli import graph_html
from memory.cli import program as cli_main
from memory.cli import tools as cli_tools
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_every_mcp_tool_has_a_cli_command(config):
    import anyio
    from mcp import Client

    from server.app import build_server

    async def names() -> set[str]:
        async with Client(build_server(config, HashEmbedder(64), project="/p"), mode="legacy") as c:
            return {t.name for t in (await c.list_tools()).tools}

    tools = anyio.run(names)
    commands = set(cli_main.build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert tools == set(cli_tools.TOOL_COMMANDS)
    assert set(cli_tools.TOOL_COMMANDS.values()) <= commands


def test_errors_name_the_command_a_person_runs_not_the_mcp_tool(capsys):
    fact = add(capsys, "The ledger-sync runs nightly at 02:00.")
    for argv, command, tool in (
        (("entity", "no-such-thing"), "`maple-memory relate`", "entity_relate"),
        (("outcome", str(fact), "worked"), "`maple-memory decide`", "decision_record"),
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2 and command in err and tool not in err, err


def test_update_edits_in_place_and_history_shows_the_old_version(capsys, monkeypatch):
    monkeypatch.setenv("MAPLE_USER", "dana")  # who edits: shown beside each version
    mid = add(capsys, "Releases are cut on Mondays", "--subject", "releases")
    edited = run_json(capsys, "update", str(mid), "--importance", "5", "--tag", "release", "--reason", "key rule")
    unchanged = run_json(capsys, "update", str(mid), "--importance", "5")
    code, out, _ = run(capsys, "history", str(mid))
    assert edited["action"] == "edited" and edited["memory"]["importance"] == 5
    assert unchanged["action"] == "unchanged"
    assert code == 0 and f"#{mid} current" in out and "key rule · dana · changed: importance, tags" in out


def test_update_supersede_keeps_the_old_memory_as_history(capsys):
    mid = add(capsys, "Releases are cut on Mondays", "--subject", "releases")
    code, out, _ = run(capsys, "update", str(mid), "--content", "Releases are cut on Thursdays", "--supersede")
    new_id = int(re.search(r"memory (\d+) replaces", out).group(1))
    hist = run_json(capsys, "history", "--subject", "releases")
    search = run_json(capsys, "search", "when are releases cut")
    assert code == 0 and new_id != mid
    assert [(e["memory"]["id"], e["status"]) for e in hist["entries"]] == [(mid, "superseded"), (new_id, "current")]
    assert [r["id"] for r in search["results"]] == [new_id]
    code, _, err = run(capsys, "update", str(mid), "--supersede")
    assert code == 2 and "--supersede needs --content" in err


def _db_and_wal_bytes(home: Path) -> bytes:
    db = config_mod.load(home=home).db_path
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())


def test_update_forget_old_leaves_the_old_text_in_neither_the_database_nor_its_wal(capsys, home):
    # Text no redaction rule knows for a secret: only the edit can take it out.
    leaked = "the vault combination is 31-17-42 bluefin marmalade"
    mid = add(capsys, leaked)
    kept = add(capsys, "the vault combination is 12-04-77 heron quince")
    run_json(capsys, "update", str(kept), "--content", "the vault combination is in the safe")
    assert b"heron quince" in _db_and_wal_bytes(home)  # a plain edit keeps the old text as a version

    d = run_json(capsys, "update", str(mid), "--content", "the vault combination is kept offline", "--forget-old")
    assert d["action"] == "edited"
    assert b"bluefin marmalade" not in _db_and_wal_bytes(home)
    assert run_json(capsys, "history", str(mid))["entries"][0]["versions"] == []
    code, _, err = run(capsys, "update", str(mid), "--content", "x y z", "--supersede", "--forget-old")
    assert code == 2 and "--forget-old" in err


def test_pin_and_unpin(capsys):
    mid = add(capsys, "Always run the formatter before committing")
    assert run_json(capsys, "pin", str(mid))["pinned"] is True
    assert run_json(capsys, "pin", str(mid), "--off")["pinned"] is False
    code, _, err = run(capsys, "pin", "4242")
    assert code == 2 and "no memory 4242" in err


def test_the_graph_commands_relate_walk_and_describe(capsys):
    add(capsys, "The `api` talks to `postgres` through `sqlalchemy`")
    assert run(capsys, "relate", "api", "uses", "sqlalchemy")[1] == "added: api -[uses]-> sqlalchemy\n"
    run(capsys, "relate", "sqlalchemy", "depends on", "psycopg")
    run(capsys, "relate", "psycopg", "links", "libpq", "--global")
    code, out, _ = run(capsys, "entity", "api")
    assert code == 0 and out.startswith("api  ") and "-[uses]-> sqlalchemy" in out and "talks to" in out
    code, out, _ = run(capsys, "neighbors", "api", "--hops", "2")
    assert [line.split(None, 1) for line in out.splitlines()] == [
        ["1", "postgres (code)"],  # (what the memory states: "talks to" is a dependency)
        ["1", "sqlalchemy (code)"],
        ["2", "psycopg (thing)"],
        ["2", "psycopg (thing, global)"],
    ]
    code, out, _ = run(capsys, "path", "api", "libpq")
    assert out.splitlines()[0] == (
        "api -[uses]-> sqlalchemy -[depends_on]-> psycopg -[same_entity]-> psycopg -[links]-> libpq"
    )
    code, _, err = run(capsys, "path", "api", "libpq", "--max-hops", "2")
    assert code == 0 and "no path from 'api' to 'libpq' within 2 hops" in err
    assert run(capsys, "relate", "api", "uses", "sqlalchemy", "--close")[1].startswith("closed:")
    code, _, err = run(capsys, "neighbors", "nobody")
    assert code == 2 and "no entity called 'nobody'" in err


def test_decide_outcome_and_lessons_put_the_failure_first(capsys):
    code, out, err = run(
        capsys, "decide", "Use Redis for the job queue", "--why", "fast", "--alternative", "Postgres SKIP LOCKED"
    )
    bad = int(out)
    assert f"outcome {bad} worked|failed|partial" in err
    good = run_json(capsys, "decide", "Use Postgres for the job queue", "--why", "already running")["id"]
    run(capsys, "outcome", str(good), "worked")
    code, out, _ = run(capsys, "outcome", str(bad), "failed", "--notes", "lost jobs on restart")
    assert "importance now 4" in out
    code, out, _ = run(capsys, "lessons", "job queue choice")
    lines = out.splitlines()
    assert lines[0].split()[:2] == [str(bad), "failed"] and "notes: lost jobs on restart" in lines[1]
    assert lines[2].split()[:2] == [str(good), "worked"]
    fact = add(capsys, "The worker is written in Go")
    code, _, err = run(capsys, "outcome", str(fact), "worked")
    assert code == 2 and "not a decision" in err


def test_lessons_are_coloured_on_a_terminal(capsys, monkeypatch):
    d = run_json(capsys, "decide", "Use Make for builds", "--why", "everyone has it")["id"]
    run(capsys, "outcome", str(d), "failed")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert cli.main(["lessons", "builds with make"]) == 0
    assert "\x1b[1;31mfailed" in terminal.getvalue()


def test_context_previews_a_briefing_and_a_prompts_surface_without_recording(capsys, home):
    mid = add(capsys, "The staging database is called falcon", "--importance", "4")
    code, out, _ = run(capsys, "context", "which staging database do we use")
    assert code == 0 and f"#{mid}" in out and out.startswith("<maple-memory>")
    code, out, err = run(capsys, "context", "ok", "--prompt")
    assert out == "" and "surfaces nothing (acknowledgement)" in err
    code, out, err = run(capsys, "context", "how do we rotate the kafka tls certificates")
    assert code == 0 and out == "" and "maple-memory search` lists weaker matches" in err
    said = run_json(capsys, "context", "how do we rotate the kafka tls certificates", "--prompt")
    assert said["block"] == "" and "lists weaker matches" in said["note"]  # --json says why, as the terminal does
    assert said["model"] == "ready"
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        assert s.conn.execute("SELECT count(*) FROM injections").fetchone()[0] == 0
        assert s.get(mid).activation_count == 0


def fill_graph(home: Path, project: Path) -> None:
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        scope = str(project.resolve())
        s.add(NewMemory("The `billing` service calls `stripe` for invoices", scope=scope))
        s.add(NewMemory("`stripe` webhooks land in `billing` <script>alert('x')</script> & __DATA__", scope=scope))
        s.add(NewMemory("`ledger` keeps every `billing` entry", scope=scope))
        s.add(NewMemory("`ledger` is backed up nightly", scope=scope, importance=5))


def test_graph_prints_connections_or_writes_a_self_contained_page(capsys, home, project, tmp_path):
    fill_graph(home, project)
    code, out, _ = run(capsys, "graph")
    # names only mentioned together are no relation and have no direction (blind trial 41 read them as facts)
    assert code == 0 and "~ together" in out and "billing" in out and "-[mentioned_with]->" not in out
    page = tmp_path / "graph.html"
    result = run_json(capsys, "graph", "ledger", "--html", str(page))
    assert result["nodes"] == 3 and Path(result["html"]) == page.resolve()
    html = page.read_text()
    assert "<script src" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert "</script><script>alert" not in html  # memory text cannot end the data block
    assert "default-src 'none'" in html
    code, _, err = run(capsys, "graph", "--html", str(tmp_path / "missing" / "g.html"))
    assert code == 2 and "folder does not exist" in err


def test_an_empty_graph_says_how_it_fills(capsys):
    code, _, err = run(capsys, "graph")
    assert code == 2 and "knowledge graph is empty" in err


def test_a_memory_cannot_break_out_of_the_pages_data_block():
    sub = {
        "center": 1,
        "truncated": False,
        "edges": [],
        "nodes": [
            {
                "id": 1,
                "name": "</script><b>x",
                "kind": "thing",
                "scope": "global",
                "memories": 1,
                "memories_shown": [{"id": 1, "content": "__TITLE__ <!-- \u2028", "layer": "fact", "outcome": None}],
            }
        ],
    }
    page = graph_html.render(sub, "t <i>")
    data = page.split('<script type="application/json" id="graph-data">')[1].split("</script>")[0]
    assert json.loads(data)["nodes"][0]["name"] == "</script><b>x"
    assert json.loads(data)["nodes"][0]["memories_shown"][0]["content"] == "__TITLE__ <!-- \u2028"
    assert "<title>t &lt;i&gt;</title>" in page


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


@pytest.mark.skipif(chromium() is None, reason="no chromium on PATH (apt-get install -y chromium; .ci/run does)")
def test_the_graph_page_renders_its_nodes_and_memories_in_headless_chromium(capsys, home, project, tmp_path):
    fill_graph(home, project)
    page = tmp_path / "graph.html"
    run_json(capsys, "graph", "billing", "--html", str(page))
    profile = tempfile.mkdtemp(prefix="maple-chromium-")
    try:
        done = subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": profile},
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    nodes = re.findall(r'<g class="node[^"]*" data-id="(\d+)" data-name="([^"]*)"', dom)
    assert {name for _, name in nodes} == {"billing", "stripe", "ledger"}
    assert 'data-rendered="3"' in dom
    assert len(re.findall(r'<line class="edge', dom)) >= 2
    assert "The `billing` service calls `stripe` for invoices" in dom  # the hover tooltip and panel
    assert "<script>alert('x')</script>" not in dom.split("graph-data")[0]


@pytest.mark.parametrize("argv", [["export", "{tmp}/all.jsonl"], ["backup"], ["maintain", "--dry-run"]])
def test_long_commands_draw_a_progress_bar_on_a_terminal_only(capsys, monkeypatch, home, project, tmp_path, argv):
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add_many([NewMemory(f"bulk memory number {i}", scope=str(project.resolve())) for i in range(600)])
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    captured = sys.stderr
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(argv) == 0
    drawn = terminal.getvalue()
    assert "\r" in drawn and any(w in drawn for w in ("exporting", "backing up", "maintaining"))
    monkeypatch.setattr(sys, "stderr", captured)  # (not monkeypatch.undo(): that would unset MAPLE_HOME)
    capsys.readouterr()
    code, _, err = run(capsys, *argv)
    assert code == 0 and "\r" not in err  # not a terminal: no bar
