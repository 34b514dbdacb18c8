"""Project identity: which project a working directory belongs to.

The scope of a directory is the top level of its git repository, with a linked worktree mapped
to its main repository (so every worktree of a repo shares one memory); outside git it is the
directory itself. A `.git` *file* is a claim anyone can write (a downloaded archive can carry
one naming another repository), so it counts only when the repository it names confirms it: a
worktree made by `git worktree add` is recorded in `<main>/.git/worktrees/<name>/gitdir`, which
points back at the worktree's `.git` file. Anything else (a forged file, a submodule, a stale
worktree) makes the folder its own project. Files are read directly instead of running `git`: hooks call this on every
prompt, and a subprocess costs more than the whole lookup.
"""

from __future__ import annotations

import os
from pathlib import Path

GLOBAL = "global"  # the scope of user-wide memories, seen from every project


def project_scope(cwd: str | os.PathLike | None = None) -> str:
    """The stable scope string for `cwd` (default: $CLAUDE_PROJECT_DIR, else the process cwd)."""
    if cwd is None:
        cwd = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    start = Path(cwd).expanduser()
    try:
        start = start.resolve()
    except OSError:
        start = start.absolute()
    for d in (start, *start.parents):
        git = d / ".git"
        if git.is_dir():
            return str(d)
        if git.is_file():
            main = _main_repo_of_worktree(git)
            return str(main or d)
    return str(start)


def _main_repo_of_worktree(gitfile: Path) -> Path | None:
    """For a `.git` file (`gitdir: <repo>/.git/worktrees/<name>`), the main repository's top;
    None unless that repository records this very file as one of its worktrees."""
    try:
        line = gitfile.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    gitdir = Path(line[len("gitdir:") :].strip())
    if not gitdir.is_absolute():
        gitdir = (gitfile.parent / gitdir).resolve()
    common = gitdir / "commondir"
    try:
        common_dir = Path(common.read_text(encoding="utf-8").strip())
    except OSError:
        return None  # a submodule's gitdir, not a worktree: the checkout is its own project
    if not common_dir.is_absolute():
        common_dir = (gitdir / common_dir).resolve()
    if not _points_back(gitdir, gitfile):
        return None  # forged (or a worktree git no longer knows): not the named repository's
    return common_dir.parent if common_dir.name == ".git" else common_dir


def _points_back(gitdir: Path, gitfile: Path) -> bool:
    """Whether the worktree record `gitdir` (in the main repository, which a file in this working
    tree cannot write) names `gitfile` as its checkout's `.git`."""
    try:
        back = Path((gitdir / "gitdir").read_text(encoding="utf-8", errors="replace").strip())
    except OSError:
        return False
    if not back.is_absolute():  # worktree.useRelativePaths (git 2.48+) stores it relative
        back = gitdir / back
    try:
        return back.resolve() == gitfile.resolve()
    except OSError:
        return False


def resolve(scope: str | None, project: str) -> str:
    """A tool's `scope` argument ("project", "global" or None) as a stored scope string."""
    if scope in (None, "", "project"):
        return project
    if scope == GLOBAL:
        return GLOBAL
    from memory.errors import InvalidInput

    raise InvalidInput(f"scope must be 'project' or 'global', got {scope!r}")
