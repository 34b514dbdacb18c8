"""Project identity: which project a working directory belongs to.

The scope of a directory is the top level of its git repository, with a linked worktree mapped
to its main repository (so every worktree of a repo shares one memory); outside git it is the
directory itself. A `.git` *file* is a claim anyone can write (a downloaded archive can carry
one naming another repository), so it counts only when the repository it names confirms it: a
worktree made by `git worktree add` is recorded in `<main>/.git/worktrees/<name>/gitdir`, which
points back at the worktree's `.git` file. Anything else (a forged file, a submodule, a stale
worktree) makes the folder its own project. Files are read directly instead of running `git`: hooks call this on every
prompt, and a subprocess costs more than the whole lookup.

On a team database (PostgreSQL) a path names a project on one machine only, so there the scope is
the repository's `team_key`: the normalised URL of its `origin` remote (`git@github.com:acme/x.git`,
`https://github.com/acme/x` and `ssh://git@github.com/acme/x.git` are all `github.com/acme/x`;
credentials, ports and `.git` are dropped), read from the main repository's `.git/config`; a
repository without an origin keeps its path. A local SQLite store keeps the path (its memories
were written under it, and a path is what one machine needs): `team_key` is applied by the
application API (memory.app.memories) and the extraction agent when the store is PostgreSQL.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

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


def team_key(project: str) -> str:
    """The scope every teammate's machine computes for the project whose scope on this machine is
    `project` (a path from `project_scope`): its origin remote's normalised URL, else `project`
    itself (no repository, no origin, an unreadable config). Idempotent: a key maps to itself."""
    if not project.startswith("/"):
        return project  # "global", or already a key
    url = _origin_url(Path(project) / ".git" / "config")
    key = normalise_remote(url) if url else ""
    return key or project


def _origin_url(config: Path) -> str:
    """`remote "origin"`'s url in a git config file (the first one; git uses the first for fetch)."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            head = re.match(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]', line)
            section = f"{head.group(1).lower()} {head.group(2) or ''}".strip() if head else ""
            continue
        if section == "remote origin":
            key, _, value = line.partition("=")
            if key.strip().lower() == "url" and value.strip():
                return value.strip().strip('"')
    return ""


_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@github.com:acme/billing.git


def normalise_remote(url: str) -> str:
    """A remote URL as `host/path`: scheme, user, password and port dropped (one repository is
    reached over ssh by one teammate and https by another), the host lower-cased, `.git` and
    slashes trimmed. "" for a local path (`/srv/git/x.git`, `file://`): no host to share, so
    the project keeps its own path."""
    url = url.strip()
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file" or not parts.hostname:
            return ""
        host, path = parts.hostname.lower(), parts.path
    else:
        m = _SCP.match(url)
        if not m or url.startswith(("/", ".", "~")):
            return ""  # a local path: only this machine (or a shared mount) knows it
        host, path = m.group(1).lower(), m.group(2)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    path = path.strip("/")
    return f"{host}/{path}" if path else ""


def resolve(scope: str | None, project: str) -> str:
    """A tool's `scope` argument ("project", "global" or None) as a stored scope string."""
    if scope in (None, "", "project"):
        return project
    if scope == GLOBAL:
        return GLOBAL
    from memory.errors import InvalidInput

    raise InvalidInput(f"scope must be 'project' or 'global', got {scope!r}")
