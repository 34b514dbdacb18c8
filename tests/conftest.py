"""Shared fixtures: every test gets its own MAPLE home; real databases, a deterministic embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest_pg import pg_role, pg_server, pg_url  # noqa: F401 - the PostgreSQL fixtures, for every test

from memory import config as config_mod
from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import Store


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """MAPLE_HOME in a temporary folder (autouse: no test may touch ~/.maple), other overrides cleared."""
    path = tmp_path / "maple-home"
    monkeypatch.setenv("MAPLE_HOME", str(path))
    for var in ("MAPLE_DB", "MAPLE_MODEL", "MAPLE_LOG_LEVEL", "CLAUDE_PROJECT_DIR"):
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
