"""What the CLI tests share: a project of their own per test, and `maple-memory` run in-process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory import cli


@pytest.fixture(autouse=True)
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test: the model-free embedder, a project folder of its own, no colour preference set."""
    monkeypatch.setenv("MAPLE_MODEL", "hash-64")
    path = tmp_path / "project"
    path.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(path))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def add(capsys: pytest.CaptureFixture[str], content: str, *flags: str) -> int:
    return run_json(capsys, "add", content, *flags)["id"]
