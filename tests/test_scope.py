"""memory.scope: which project a directory belongs to (git top, worktrees share the main repo)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memory.errors import InvalidInput
from memory.scope import project_scope, resolve
from memory.store import GLOBAL

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull},
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    top = tmp_path / "repo"
    (top / "src" / "pkg").mkdir(parents=True)
    git(top, "init", "-q")
    git(top, "commit", "-q", "--allow-empty", "-m", "first")
    return top.resolve()


def test_a_subdirectory_of_a_git_repo_maps_to_the_repo_top(repo):
    assert project_scope(repo / "src" / "pkg") == str(repo)
    assert project_scope(repo) == str(repo)


def test_a_linked_worktree_maps_to_the_main_repository(repo, tmp_path):
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    assert (wt / ".git").is_file()  # a linked worktree has a .git file, not a folder
    (wt / "src").mkdir(exist_ok=True)
    assert project_scope(wt) == str(repo)
    assert project_scope(wt / "src") == str(repo)


def test_a_worktree_whose_gitdir_is_relative_maps_to_the_main_repository(repo, tmp_path):
    wt = tmp_path / "wt-rel"
    git(repo, "worktree", "add", "-q", str(wt))
    gitdir = Path((wt / ".git").read_text().split(":", 1)[1].strip())
    (wt / ".git").write_text(f"gitdir: {os.path.relpath(gitdir, wt)}\n")
    assert project_scope(wt) == str(repo)


def test_a_nested_repo_is_its_own_project(repo):
    inner = repo / "vendor" / "lib"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    assert project_scope(inner) == str(inner)


def test_a_directory_outside_git_maps_to_itself(tmp_path):
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    assert project_scope(plain) == str(plain.resolve())


def test_a_symlinked_path_maps_to_the_real_repo(repo, tmp_path):
    link = tmp_path / "link"
    link.symlink_to(repo / "src")
    assert project_scope(link) == str(repo)


def test_claude_project_dir_is_used_when_no_cwd_is_given(repo, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo / "src"))
    assert project_scope() == str(repo)
    assert project_scope(elsewhere) == str(elsewhere.resolve())  # an explicit cwd wins


def test_the_process_cwd_is_used_when_claude_project_dir_is_unset(repo, monkeypatch):
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(repo / "src" / "pkg")
    assert project_scope() == str(repo)


def test_resolve_maps_tool_scope_arguments():
    assert resolve(None, "/p") == resolve("project", "/p") == resolve("", "/p") == "/p"
    assert resolve("global", "/p") == GLOBAL
    with pytest.raises(InvalidInput, match="'project' or 'global'"):
        resolve("team", "/p")
