"""Switching embedding models through the CLI: reindex shows progress without a terminal, and its
dry run after an interrupted run counts only what is left."""

from __future__ import annotations

import io
import json
import re
import sqlite3
from pathlib import Path

import pytest
from cli_helpers import add, run, run_json  # noqa: F401  (project: autouse fixture)
from cli_helpers import project as project  # noqa: F401

from memory import embed


def fill(capsys: pytest.CaptureFixture[str], n: int) -> list[int]:
    return [add(capsys, f"note {i} about the deploy checklist") for i in range(n)]


def line_of(out: str, check: str) -> str:
    (line,) = [ln for ln in out.splitlines() if f" {check}: " in ln]
    return line


def reindex_meta(home: Path) -> dict[str, str]:
    conn = sqlite3.connect(home / "memory.db")
    try:
        return dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'reindex%'").fetchall())
    finally:
        conn.close()


# -- 3. progress without a terminal ---------------------------------------------------------------------


def test_reindex_without_a_terminal_prints_progress_lines_and_a_summary_with_counts_and_time(capsys, monkeypatch, home):
    fill(capsys, 10)
    (home / "config.json").write_text(json.dumps({"embedding_batch_size": 4}))  # reindex batches of 4
    monkeypatch.setenv("MAPLE_MODEL", "hash-32")
    code, out, err = run(capsys, "reindex")  # capsys: neither stdout nor stderr is a terminal
    assert code == 0, err
    lines = err.splitlines()
    assert [re.sub(r", [\d.]+s.*", "", ln) for ln in lines] == [
        "re-embedding with hash-32: 0/10 memories (0%)",
        "re-embedding with hash-32: 4/10 memories (40%)",
        "re-embedding with hash-32: 8/10 memories (80%)",
        "re-embedding with hash-32: 10/10 memories (100%)",
    ]
    assert "\r" not in err
    assert re.fullmatch(r"re-embedded 10 memories with hash-32 in \d+\.\ds\n", out)


def test_reindex_on_a_terminal_keeps_its_progress_bar(capsys, monkeypatch, home):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    fill(capsys, 10)
    monkeypatch.setenv("MAPLE_MODEL", "hash-32")
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    code, out, _ = run(capsys, "reindex")
    assert code == 0
    assert "\rre-embedding with hash-32 [" in terminal.getvalue() and "\n" not in terminal.getvalue()


# -- 4. dry run after an interrupted run ----------------------------------------------------------------


def test_dry_run_after_an_interrupted_reindex_counts_what_is_left_as_the_real_run_does(capsys, monkeypatch, home):
    ids = fill(capsys, 10)
    (home / "config.json").write_text(json.dumps({"embedding_batch_size": 4}))  # reindex batches of 4
    monkeypatch.setenv("MAPLE_MODEL", "hash-32")
    calls = []
    real_embed = embed.HashEmbedder.embed

    def killed_at_the_second_batch(self, texts):
        if self.name == "hash-32":
            calls.append(len(texts))
            if len(calls) == 2:
                raise KeyboardInterrupt  # Ctrl-C, or a kill, in the middle of the second batch
        return real_embed(self, texts)

    monkeypatch.setattr(embed.HashEmbedder, "embed", killed_at_the_second_batch)
    assert run(capsys, "reindex")[0] == 130
    monkeypatch.setattr(embed.HashEmbedder, "embed", real_embed)
    assert reindex_meta(home)["reindex_through"] == str(ids[3])
    # A memory changed after the interrupted run began: the real run embeds it again too.
    assert run(capsys, "update", str(ids[1]), "--content", "note 1, changed meanwhile")[0] == 0

    dry = run_json(capsys, "reindex", "--dry-run")
    assert (dry["total"], dry["resumed_from"], dry["remaining"]) == (10, 4, 7)
    out = run(capsys, "reindex", "--dry-run")[1]
    assert out.startswith("would re-embed 7 of 10 memories with hash-32 (now hash-64): ")
    assert "an interrupted reindex did 4" in out
    assert reindex_meta(home)["reindex_through"] == str(ids[3])  # the dry run changed nothing

    real = run_json(capsys, "reindex")
    assert real["resumed_from"] == 4 and real["embedded"] == dry["remaining"] == 7
