"""Conformance with an independent client: the MCP Inspector's command-line mode (npm package
@modelcontextprotocol/inspector, a TypeScript SDK client) drives `python -m server` over stdio.

It lists the tools with --strict (schema portability problems fail the run), calls every tool with
the example from the README's tools table, reads the resources, and checks that a bad call comes
back as a tool error. `.ci/run` installs the pinned Inspector into .ci/node; elsewhere set
MAPLE_INSPECTOR to an `mcp-inspector` executable, or the test is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from readme_tables import tool_examples

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.retrieval import graph_query
from memory.store import NewMemory, Store, decisions

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR_VERSION = "2.12.0"  # keep in step with .ci/run
INSTALL = f"npm install --prefix .ci/node @modelcontextprotocol/inspector@{INSPECTOR_VERSION}"


def inspector() -> str | None:
    given = os.environ.get("MAPLE_INSPECTOR")
    if given:
        return given
    local = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "mcp-inspector"
    return str(local) if local.exists() else None


def skip_reason() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed; the MCP Inspector conformance run needs Node.js 20+ and npm"
    if inspector() is None:
        return f"the MCP Inspector is not installed: run `{INSTALL}` (.ci/run does) or set MAPLE_INSPECTOR"
    return None


pytestmark = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


def seed(home: Path, project: Path) -> None:
    """The memories, entities and decision the README's examples refer to (ids 1-7)."""
    scope = str(project.resolve())
    with Store.open(config_mod.load(home=home), HashEmbedder(64)) as s:
        s.add(NewMemory("Tests run with `pytest` -q; the db fixture needs Docker", scope=scope, category="command"))
        s.add(NewMemory("The `billing` service writes invoices to the `ledger`", scope=scope))
        s.add(NewMemory("A wrong note: the staging port is 9999", scope=scope))
        s.add(NewMemory("The API runs on Flask", scope=scope, subject="api framework"))
        s.add(NewMemory("Always answer in British English", scope="global", category="preference"))
        decisions.record_decision(s, "Use Redis for the job queue", "fast and simple", scope=scope, importance=3)
        graph_query.relate(s, scope, "billing", "uses", "ledger", readable=[scope, "global"])
        graph_query.relate(s, scope, "ledger", "stores_in", "postgres", readable=[scope, "global"])
        forgotten = s.add(NewMemory("Deploys go out on Fridays after the standup", scope=scope))
        s.forget(forgotten.id)


class Run:
    def __init__(self, home: Path, project: Path, scratch: Path):
        self.home, self.project = home, project
        # The Inspector keeps a catalog and a client config under $HOME: give it a scratch one.
        self.env = {
            **os.environ,
            "HOME": str(scratch),
            "MCP_CATALOG_PATH": str(scratch / "catalog.json"),
            "MCP_CLIENT_CONFIG_PATH": str(scratch / "client.json"),
        }

    def __call__(self, *args: str) -> tuple[int, Any]:
        cmd = [
            inspector(),
            "--cli",
            "--format",
            "json",
            "-q",
            "-e",
            f"MAPLE_HOME={self.home}",
            "-e",
            "MAPLE_MODEL=hash-64",
            "-e",
            f"PYTHONPATH={ROOT}",
            "-e",
            f"CLAUDE_PROJECT_DIR={self.project}",
            *args,
            sys.executable,
            "-m",
            "server",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=self.project, env=self.env)
        assert done.stdout.strip(), f"no output from {' '.join(args)}: {done.stderr[-2000:]}"
        return done.returncode, json.loads(done.stdout.splitlines()[0])


@pytest.fixture
def run(tmp_path: Path, home: Path) -> Run:
    project = tmp_path / "project"
    project.mkdir()
    scratch = tmp_path / "inspector-home"
    scratch.mkdir()
    seed(home, project)
    return Run(home, project, scratch)


def test_the_inspector_lists_every_tool_and_calls_each_with_its_readme_example(run, config):
    examples = tool_examples()
    code, listed = run("--method", "tools/list", "--strict")  # --strict: exit 6 on schema portability errors
    assert code == 0, listed
    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(tools) == set(examples)
    for t in tools.values():
        assert t["annotations"]["openWorldHint"] is False and t["description"]

    def call(name: str) -> tuple[str, int, Any]:
        code, out = run("--method", "tools/call", "--tool-name", name, "--tool-args-json", json.dumps(examples[name]))
        return name, code, out

    # The examples touch different seeded memories, so they can run side by side (as several
    # clients would); maintenance runs alone at the end.
    names = [n for n in examples if n != "memory_maintain"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(call, names))
    results.append(call("memory_maintain"))
    summary = []
    for name, code, out in results:
        result = out.get("result", {})
        summary.append(f"{name:<18} exit {code}  isError {result.get('isError')}")
        assert code == 0 and result.get("isError") is False, (name, out)
        if tools[name].get("outputSchema"):
            assert isinstance(result.get("structuredContent"), dict), name
        else:  # the hook tools answer in plain text
            assert result["content"][0]["type"] == "text", name
    print("\n".join(summary))

    got = {name: out["result"] for name, _, out in results}
    # memory_store's example (also about running tests) may land first while the search runs
    assert 1 in [r["id"] for r in got["memory_search"]["structuredContent"]["results"][:2]]
    assert [m["id"] for m in got["memory_get"]["structuredContent"]["memories"]] == [1, 2]
    assert got["memory_forget"]["structuredContent"]["action"] == "archived"
    assert got["memory_restore"]["structuredContent"]["was"] == "archived"
    assert got["memory_update"]["structuredContent"]["action"] == "superseded"
    assert got["memory_pin"]["structuredContent"]["pinned"] is True
    assert got["graph_path"]["structuredContent"]["found"] is True
    assert got["decision_outcome"]["structuredContent"]["decision"]["importance"] == 4
    assert got["lessons_for"]["structuredContent"]["lessons"][0]["outcome"] in ("failed", None)
    assert got["memory_maintain"]["structuredContent"]["dry_run"] is True
    with Store.open(config, HashEmbedder(64)) as s:
        assert s.get(3, include_deleted=True).deleted_at is not None
        assert s.get(4, include_deleted=True).superseded_by is not None
        assert s.get(5).pinned
        assert s.conn.execute("SELECT outcome FROM decision_outcomes WHERE memory_id = 6").fetchall() == [("failed",)]
        assert s.integrity()["ok"]


def test_the_inspector_reads_the_resources_and_sees_tool_errors(run):
    calls = [
        ("--method", "resources/list"),
        ("--method", "resources/templates/list"),
        ("--method", "resources/read", "--uri", "memory://1"),
        ("--method", "resources/read", "--uri", "memory://stats"),
        ("--method", "tools/call", "--tool-name", "memory_get", "--tool-args-json", '{"ids": []}'),
    ]
    with ThreadPoolExecutor(max_workers=3) as pool:
        (c1, listed), (c2, templates), (c3, one), (c4, stats), (c5, bad) = pool.map(lambda a: run(*a), calls)
    assert (c1, c2, c3, c4) == (0, 0, 0, 0)
    assert [r["uri"] for r in listed["result"]["resources"]] == ["memory://stats"]
    assert [t["uriTemplate"] for t in templates["result"]["resourceTemplates"]] == ["memory://{id}"]
    assert json.loads(one["result"]["contents"][0]["text"])["id"] == 1
    assert json.loads(stats["result"]["contents"][0]["text"])["memories"] == 6
    assert c5 != 0 and bad["result"]["isError"] is True  # a tool error, shown to the model, not a crash
    assert "at least 1 item" in bad["result"]["content"][0]["text"]
