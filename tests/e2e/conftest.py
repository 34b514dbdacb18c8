"""Fixtures for the end-to-end tests through the real Claude Code CLI (see claude_harness.py).

Each test gets a throwaway world: HOME with `.claude/`, the MAPLE home the root conftest gives
every test (`home`, exported as MAPLE_HOME), a project that is a git repository with one commit,
and the scripted Messages API. `claude_code.run_claude(...)` runs the CLI in it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from claude_harness import ClaudeCode, Run, claude_path, skip_reason
from fake_api import FakeAnthropic


@pytest.fixture
def claude_code(tmp_path: Path, home: Path) -> Iterator[ClaudeCode]:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    path = claude_path()
    assert path is not None
    world = ClaudeCode(tmp_path / "world", home, path)
    try:
        yield world
    finally:
        world.close()


@pytest.fixture
def fake_api(claude_code: ClaudeCode) -> FakeAnthropic:
    return claude_code.api


@pytest.fixture
def run_claude(claude_code: ClaudeCode) -> Callable[..., Run]:
    """run_claude(prompt, *, resume=None, continue_=False, allowed_tools=None, timeout=...) -> Run,
    a (result, requests, debug) tuple: the JSON result, the requests the API logged, the debug log."""
    return claude_code.run_claude
