"""memory.scope: which project a directory belongs to (git top, worktrees share the main repo)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memory.errors import InvalidInput
from memory.scope import normalise_remote, project_scope, resolve, team_key
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


# -- a .git file is a claim: it counts only when the repository it names confirms it ---------------


def test_a_git_file_naming_another_repos_git_folder_does_not_join_that_repo(repo, tmp_path):
    forged = tmp_path / "downloaded"
    forged.mkdir()
    (forged / ".git").write_text(f"gitdir: {repo / '.git'}\n")
    assert project_scope(forged) == str(forged.resolve())


def test_a_git_file_copied_from_a_real_worktree_does_not_join_its_repo(repo, tmp_path):
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / ".git").write_text((wt / ".git").read_text())  # the same claim, in another folder
    (copy / "src").mkdir()
    assert project_scope(copy) == str(copy.resolve())
    assert project_scope(copy / "src") == str(copy.resolve())
    assert project_scope(wt) == str(repo)  # the real worktree still shares the repo's memories


def test_a_git_file_with_a_forged_worktree_record_of_its_own_does_not_join_the_repo(repo, tmp_path):
    # The record must sit inside the named repository; one shipped next to the folder proves nothing.
    forged = tmp_path / "archive"
    admin = forged / "fake-admin"
    admin.mkdir(parents=True)
    (admin / "commondir").write_text(str(repo / ".git"))
    (admin / "gitdir").write_text(str(tmp_path / "elsewhere" / ".git"))
    (forged / ".git").write_text(f"gitdir: {admin}\n")
    assert project_scope(forged) == str(forged.resolve())


def test_a_removed_worktree_folder_is_its_own_project_once_git_prunes_it(repo, tmp_path):
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    claim = (wt / ".git").read_text()
    git(repo, "worktree", "remove", "--force", str(wt))
    wt.mkdir()
    (wt / ".git").write_text(claim)  # an old copy unpacked where the worktree used to be
    assert project_scope(wt) == str(wt.resolve())


def test_a_submodule_checkout_is_its_own_project(repo, tmp_path):
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    git(lib, "commit", "-q", "--allow-empty", "-m", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    sub = repo / "vendor" / "lib"
    assert (sub / ".git").is_file()  # a submodule's .git is a file too
    assert project_scope(sub) == str(sub)


# -- the team key: the project's name on every teammate's machine ----------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/billing.git",
        "https://github.com/acme/billing",
        "ssh://git@github.com/acme/billing.git",
        "https://ci-bot:ghp_s3cretToken@GitHub.com:443/acme/billing.git/",
        "ssh://git@github.com:22/acme/billing",
    ],
)
def test_every_spelling_of_one_remote_gives_one_team_key_without_credentials(repo, url):
    git(repo, "remote", "add", "origin", url)
    assert team_key(project_scope(repo)) == "github.com/acme/billing"


def test_a_repository_without_an_origin_keeps_its_path_as_team_key(repo):
    assert team_key(str(repo)) == str(repo)
    git(repo, "remote", "add", "upstream", "git@github.com:acme/billing.git")  # only origin names it
    assert team_key(str(repo)) == str(repo)


def test_a_remote_on_this_machines_disk_keeps_the_path(repo):
    git(repo, "remote", "add", "origin", "/srv/git/billing.git")
    assert team_key(str(repo)) == str(repo)


def test_a_linked_worktree_has_its_main_repositorys_team_key(repo, tmp_path):
    git(repo, "remote", "add", "origin", "git@gitlab.example.com:team/sub/billing.git")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt))
    assert team_key(project_scope(wt)) == "gitlab.example.com/team/sub/billing"


def test_a_team_key_and_global_map_to_themselves(tmp_path):
    assert team_key("github.com/acme/billing") == "github.com/acme/billing"
    assert team_key(GLOBAL) == GLOBAL
    assert team_key(str(tmp_path)) == str(tmp_path)  # a folder outside git


def test_normalise_remote_reads_scp_and_url_forms_alike():
    assert normalise_remote("git@bitbucket.org:Acme/Billing.git") == "bitbucket.org/Acme/Billing"
    assert normalise_remote("git://github.com/acme/billing") == "github.com/acme/billing"
    assert normalise_remote("file:///srv/git/billing.git") == ""
