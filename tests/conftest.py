"""Shared fixtures: every test gets its own MAPLE home; real databases, a deterministic embedder.

Backends: a test module marked `pytestmark = pytest.mark.backends` runs each of its tests twice,
on SQLite and on PostgreSQL (tests/conftest_pg.py's server, a fresh database per test). The
PostgreSQL run selects the team database the way a user does: `database` in the home's
config.json (both homes the tests use) and MAPLE_DATABASE_URL. Tests about the SQLite file itself
(permissions, bytes on disk, WAL) carry `@pytest.mark.sqlite_only`.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_pg import pg_role, pg_server, pg_url  # noqa: F401 - the PostgreSQL fixtures, for every test

from memory import config as config_mod
from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import Store

BACKENDS = ("sqlite", "postgresql")


@pytest.fixture(scope="session", autouse=True)
def _no_engine_left(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """When the run ends, stop the engines its tests started (a hook, a CLI call or a server starts
    one per MAPLE home): each would idle on for hook_resident_minutes, some 110 MB apiece. Two test
    files alone (test_launch, test_extraction_documents) had left five running."""
    yield
    base = b"MAPLE_HOME=" + str(tmp_path_factory.getbasetemp()).encode() + b"/"  # (not pytest-12 for pytest-1)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if b"run.py\0engine" in (proc / "cmdline").read_bytes() and any(
                e.startswith(base) for e in (proc / "environ").read_bytes().split(b"\0")
            ):
                os.kill(int(proc.name), signal.SIGTERM)
        except OSError:
            continue  # gone meanwhile, or not ours to read


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "backends: run the module's tests on SQLite and on PostgreSQL")
    config.addinivalue_line("markers", "sqlite_only: a test about the SQLite file itself, in a `backends` module")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames or not metafunc.definition.get_closest_marker("backends"):
        return
    only = metafunc.definition.get_closest_marker("sqlite_only")
    metafunc.parametrize("backend", ["sqlite"] if only else list(BACKENDS), indirect=True)


@pytest.fixture(autouse=True)
def backend(request: pytest.FixtureRequest, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The store backend this test runs on: "sqlite" unless its module runs on both."""
    name = getattr(request, "param", "sqlite")
    if name == "postgresql":
        url = request.getfixturevalue("pg_url")
        for folder in (home, tmp_path / "home"):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # as MAPLE makes a home (doctor checks it)
            (folder / "config.json").write_text(json.dumps({"database": url}), encoding="utf-8")
        monkeypatch.setenv("MAPLE_DATABASE_URL", url)
    return name


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MAPLE_HOME in a temporary folder (autouse: no test may touch ~/.maple), other overrides cleared."""
    path = tmp_path / "maple-home"
    monkeypatch.setenv("MAPLE_HOME", str(path))
    for var in ("MAPLE_DB", "MAPLE_DATABASE_URL", "MAPLE_MODEL", "MAPLE_LOG_LEVEL", "MAPLE_USER", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(var, raising=False)
    # Prompt hooks run in subprocesses would each leave a keyword resident behind; the tests of
    # residents turn them back on.
    monkeypatch.setenv("MAPLE_HOOK_RESIDENT_MINUTES", "0")
    return path


@pytest.fixture
def config(home: Path) -> Config:
    return config_mod.load(home=home)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(64)


@pytest.fixture
def store(config: Config, embedder: HashEmbedder) -> Iterator[Store]:
    s = Store.open(config, embedder)
    yield s
    s.close()
