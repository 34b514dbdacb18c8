"""maple-memory from project B against project A's ids: every command that takes an id refuses, as
MCP memory_get does, and names --all-projects; with that flag a person reaches it on purpose."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)

from memory.cli.common import OTHER_PROJECT_HINT


@pytest.fixture
def theirs(capsys, tmp_path: Path) -> tuple[Path, int]:
    """Project A (not this test's project) and a decision stored there."""
    a = tmp_path / "project-a"
    a.mkdir()
    mid = run_json(capsys, "--project", str(a), "decide", "Use Postgres for the queue", "--why", "it is there")["id"]
    return a, mid


# Every command that takes a memory id, as it would be run against A's decision.
ID_COMMANDS = [
    ("show", "{id}"),
    ("forget", "{id}"),
    ("forget", "{id}", "--permanent"),
    ("restore", "{id}"),
    ("update", "{id}", "--content", "Use Redis for the queue"),
    ("update", "{id}", "--content", "Use Redis for the queue", "--supersede"),
    ("update", "{id}", "--importance", "5"),
    ("pin", "{id}"),
    ("pin", "{id}", "--off"),
    ("history", "{id}"),
    ("outcome", "{id}", "failed"),
]


@pytest.mark.parametrize("argv", ID_COMMANDS, ids=" ".join)
def test_a_command_that_takes_an_id_refuses_another_projects_memory_and_names_all_projects(capsys, theirs, argv):
    a, mid = theirs
    before = run_json(capsys, "--project", str(a), "show", str(mid))["memories"]
    code, out, err = run(capsys, *(arg.format(id=mid) for arg in argv))
    assert code == 2 and out == ""
    assert f"no memory {mid}" in err and "--all-projects" in err and OTHER_PROJECT_HINT in err
    after = run_json(capsys, "--project", str(a), "show", str(mid))["memories"]
    assert after == before  # nothing was changed by the refused command
    assert "Use Postgres" not in err


def test_json_output_of_a_refused_show_holds_no_memory(capsys, theirs):
    _, mid = theirs
    code, out, err = run(capsys, "--json", "show", str(mid))
    assert code == 2 and '"memories": []' in out and "Use Postgres" not in out
    assert "--all-projects" in err


def test_an_unknown_id_says_the_same_as_another_projects(capsys, theirs):
    _, mid = theirs
    _, _, other = run(capsys, "show", str(mid))
    _, _, unknown = run(capsys, "show", str(mid + 1000))
    assert other.replace(str(mid), "N") == unknown.replace(str(mid + 1000), "N")  # no oracle for ids


def test_with_all_projects_each_id_command_reaches_another_projects_memory(capsys, theirs):
    a, mid = theirs
    shown = run_json(capsys, "show", str(mid), "--all-projects")["memories"]
    assert [m["scope"] for m in shown] == [str(a.resolve())]
    assert run_json(capsys, "pin", str(mid), "--all-projects")["pinned"] is True
    assert run_json(capsys, "update", str(mid), "--importance", "5", "--all-projects")["action"] == "edited"
    assert run_json(capsys, "outcome", str(mid), "partial", "--all-projects")["outcome"]["outcome"] == "partial"
    assert run_json(capsys, "history", str(mid), "--all-projects")["entries"][0]["memory"]["id"] == mid
    assert run_json(capsys, "forget", str(mid), "--all-projects")["state"] == "archived"
    assert run_json(capsys, "restore", str(mid), "--all-projects")["state"] == "current"
    new = run_json(capsys, "update", str(mid), "--content", "Use Redis", "--supersede", "--all-projects")["memory"]
    assert new["scope"] == str(a.resolve())  # stays in its own project, not moved to this one
    assert run_json(capsys, "forget", str(new["id"]), "--permanent", "--all-projects")["state"] == "deleted"


def test_an_unknown_id_with_all_projects_says_so_without_the_hint(capsys):
    code, _, err = run(capsys, "show", "424242", "--all-projects")
    assert code == 2 and "no memory 424242 in any project" in err and "--all-projects" not in err


def test_a_memory_of_this_project_or_global_needs_no_flag(capsys):
    mine, glob = add(capsys, "Tests run with pytest -q"), add(capsys, "I prefer short commits", "--global")
    shown = run_json(capsys, "show", str(mine), str(glob))["memories"]
    assert [m["id"] for m in shown] == [mine, glob]
    assert run_json(capsys, "pin", str(glob))["pinned"] is True
