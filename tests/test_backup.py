"""Safety nets: online backups and restoring them, a lossless export/import proven by a digest,
and reindexing to another embedding model while keyword search keeps working."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from memory import cli, embed
from memory import config as config_mod
from memory.app import Memories, transfer
from memory.embed import HashEmbedder, to_blob
from memory.errors import EmbeddingMismatch, InvalidInput
from memory.retrieval import ranking as retrieval
from memory.store import NewMemory, Store, backup, stored_model

T0 = 1_750_000_000.0


class Clock:
    def __init__(self, t: float = T0):
        self.t = t

    def __call__(self) -> float:
        self.t += 1.0  # every read a second later: backups get distinct names, times differ
        return self.t


def open_store(home: Path, dim: int = 64, **settings: Any) -> Store:
    return Store.open(config_mod.load(home=home, env={}, **settings), HashEmbedder(dim), clock=Clock())


def fill(store: Store, n: int = 20, scope: str = "global") -> list[int]:
    return [
        m.id
        for m in store.add_many(
            [NewMemory(content=f"Memory {i}: the deploy checklist step {i}", scope=scope) for i in range(n)]
        )
    ]


def has_table(store: Store, name: str) -> bool:
    if store.backend == "postgresql":
        return store.conn.execute("SELECT to_regclass(?) IS NOT NULL", (name,)).fetchone()[0]
    return store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- backup ------------------------------------------------------------------------------------


def test_a_backup_is_a_private_consistent_copy_even_while_another_process_writes(home):
    store = open_store(home)
    fill(store, 50)
    writer = open_store(home)
    stop = threading.Event()
    written = []

    def keep_writing() -> None:
        i = 0
        while not stop.is_set():
            writer.add(NewMemory(content=f"written during the backup {i}"))
            written.append(i)
            i += 1

    t = threading.Thread(target=keep_writing)
    t.start()
    try:
        results = [backup.backup(store) for _ in range(3)]
    finally:
        stop.set()
        t.join(60)
    writer.close()
    assert written  # the writer really ran meanwhile
    for r in results:
        assert stat.S_IMODE(r.path.stat().st_mode) == 0o600
        assert r.path.parent == home / "backups"
        copy = Store.open(config_mod.load(home=home, env={}), None, path=r.path)
        assert copy.integrity()["ok"]
        assert copy.count() >= 50
        copy.close()
    store.close()


def test_only_the_newest_backups_are_kept(home):
    store = open_store(home, backup_keep=2)
    fill(store, 3)
    made = [backup.backup(store).path for _ in range(4)]
    assert backup.list_backups(store.config) == [made[3], made[2]]
    assert not made[0].exists() and not made[1].exists()
    store.close()


def test_restore_brings_a_backup_back_and_keeps_the_content_it_replaced(home):
    store = open_store(home)
    kept = fill(store, 5)
    snapshot = backup.backup(store).path
    later = store.add(NewMemory(content="stored after the backup")).id
    store.forget(kept[0], permanent=True)
    dry = backup.restore_backup(store, snapshot, dry_run=True)
    assert dry["dry_run"] and store.count() == 5
    report = backup.restore_backup(store, snapshot)
    assert store.count() == 5 and [m.id for m in store.list()] == kept
    assert store.integrity()["ok"]
    found = retrieval.search(store, retrieval.make_query("deploy checklist step 3", ["global"]), record=False)
    assert found[0].memory.id == kept[3]
    undo = Path(report["previous_content"])
    with Store.open(store.config, None, path=undo) as before:
        assert before.get(later).content == "stored after the backup"
    store.close()


def test_restore_refuses_a_damaged_or_foreign_file(home, tmp_path):
    store = open_store(home)
    fill(store, 3)
    bad = tmp_path / "memory-bad.db"
    good = backup.backup(store).path
    data = bytearray(good.read_bytes())
    data[4096 * 2 : 4096 * 2 + 512] = b"\xff" * 512  # scribble over a page
    bad.write_bytes(bytes(data))
    with pytest.raises(InvalidInput, match="not a usable MAPLE backup|cannot be opened"):
        backup.restore_backup(store, bad)
    other = tmp_path / "other.db"
    import sqlean

    c = sqlean.connect(other)
    c.execute("CREATE TABLE t (x)")
    c.close()
    with pytest.raises(InvalidInput, match="missing tables"):
        backup.restore_backup(store, other)
    assert store.count() == 3
    store.close()


def test_backup_commands_write_list_and_restore(capsys, home):
    with open_store(home) as store:
        fill(store, 4)
    code, out, _ = run(capsys, "backup")
    assert code == 0 and "backup written to" in out
    code, out, _ = run(capsys, "--json", "backup", "--list")
    files = json.loads(out)["backups"]
    assert len(files) == 1
    with open_store(home) as store:
        store.add(NewMemory(content="one more"))
    code, out, _ = run(capsys, "--json", "backup", "--restore", files[0]["file"], "--dry-run")
    assert code == 0 and json.loads(out)["dry_run"] is True
    code, out, _ = run(capsys, "backup", "--restore", files[0]["file"])
    assert code == 0 and "restored" in out
    with open_store(home) as store:
        assert store.count() == 4
    code, _, err = run(capsys, "backup", "--restore", str(home / "nope.db"))
    assert code == 2 and "no backup file" in err


# -- export digest -----------------------------------------------------------------------------


def rich_store(home: Path) -> None:
    with open_store(home) as s:
        parent = s.add(
            NewMemory(
                "A long design document, chunked",
                layer="decision",
                category="design",
                subject="architecture",
                scope="/work/p",
                importance=5,
                confidence=0.8,
                valence=0.5,
                intensity=0.7,
                moods=["proud"],
                tags=["design"],
                pinned=True,
                source_ref="docs/design.md",
                session_id="s1",
                occurred_at="2025-03-14T09:30:00.250Z",
                valid_from="2025-03-01",
                valid_to="2026-01-01",
                metadata={"pr": 12},
                entities=[("SQLite", "tool"), ("Alice", "person", "speaker")],
            )
        )
        s.add(NewMemory("Chunk one", scope="/work/p", parent_id=parent.id, chunk_index=0))
        old = s.add(NewMemory("We use MySQL", scope="/work/p", layer="decision"))
        new = s.add(NewMemory("We use PostgreSQL now", scope="/work/p", layer="decision"))
        s.update(old.id, superseded_by=new.id)
        s.record_activation([new.id, parent.id])
        s.record_activation([new.id])
        gone = s.add(NewMemory("An archived memory", scope="global"))
        s.forget(gone.id)
        s.add(NewMemory("Caroline: 我们周五发布", scope="global"))


def test_export_import_export_gives_the_same_digest(capsys, home, tmp_path):
    rich_store(home)
    first = tmp_path / "first.jsonl"
    code, out, _ = run(capsys, "--json", "export", "--all-projects", str(first), "--digest")
    digest = json.loads(out)["sha256"]
    fresh = tmp_path / "fresh-home"
    code, out, _ = run(capsys, "--json", "--home", str(fresh), "import", str(first))
    assert json.loads(out)["imported"] == 6
    second = tmp_path / "second.jsonl"
    code, out, _ = run(capsys, "--json", "--home", str(fresh), "export", "--all-projects", str(second), "--digest")
    assert json.loads(out)["sha256"] == digest
    a = [json.loads(line) for line in first.read_text().splitlines()]
    b = [json.loads(line) for line in second.read_text().splitlines()]
    for x, y in zip(a, b):  # every field but the ids themselves
        assert {k: v for k, v in x.items() if k not in ("id", "parent_id", "superseded_by")} == {
            k: v for k, v in y.items() if k not in ("id", "parent_id", "superseded_by")
        }
    assert a[0]["entities"] == [["SQLite", "tool"], ["Alice", "person", "speaker"]]
    assert a[3]["activation_count"] == 2
    # each line says what the memory is now, as `show` would: one reading an export needs no joins
    status = {r["content"]: r["status"] for r in a}
    assert status["We use MySQL"] == "superseded" and status["We use PostgreSQL now"] == "current"
    assert status["An archived memory"] == "archived"
    assert {r["content"]: r["status"] for r in b} == status


def test_the_digest_changes_when_any_field_changes(home):
    rich_store(home)
    with open_store(home) as s:
        before = backup.export_digest(transfer.export_records(s))[0]
        s.update(3, importance=4)
        after_field = backup.export_digest(transfer.export_records(s))[0]
        s.record_activation([1])
        after_recall = backup.export_digest(transfer.export_records(s))[0]
    assert len({before, after_field, after_recall}) == 3


def test_export_to_stdout_prints_the_digest_on_stderr(capsys, home):
    with open_store(home) as s:
        fill(s, 2)
        expected = backup.export_digest(transfer.export_records(s))[0]
    code, out, err = run(capsys, "export", "--digest")
    assert len(out.splitlines()) == 2 and err.splitlines() == ["exported 2 memories", f"sha256 {expected}"]


# -- reindex -----------------------------------------------------------------------------------


@pytest.mark.backends  # and on a team database (PostgreSQL)
def test_reindex_moves_every_memory_to_the_new_model_and_keyword_search_works_meanwhile(home):
    with open_store(home, dim=64) as store:
        ids = fill(store, 300)
        store.forget(ids[0])
    store = Store.open(config_mod.load(home=home, env={}), None)
    seen_midway = []

    def midway(done: int, total: int) -> None:
        q = retrieval.make_query("deploy checklist step 250", ["global"])
        seen_midway.append([r.memory.id for r in retrieval.search(store, q, record=False)][:1])

    report = backup.reindex(store, HashEmbedder(32, name="hash-32b"), batch=100, progress=midway)
    assert report.swapped and report.embedded == 300
    assert seen_midway == [[ids[250]]] * 4  # keyword search answered at the start and at every step
    assert (store.vector_model, store.vector_dim) == ("hash-32b", 32)
    assert store.conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == 300
    assert store.missing_vectors_count() == 0
    store.close()
    with pytest.raises(EmbeddingMismatch):
        Store.open(config_mod.load(home=home, env={}), HashEmbedder(64))
    moved = Store.open(config_mod.load(home=home, env={}), HashEmbedder(32, name="hash-32b"))
    q = retrieval.make_query("deploy checklist step 7", ["global"])
    hit = retrieval.search(moved, q, record=False)[0]
    assert hit.memory.id == ids[7] and hit.channels.get("vector", 0) > 0
    assert moved.integrity()["ok"]
    moved.close()


@pytest.mark.backends  # and on a team database (PostgreSQL)
def test_an_interrupted_reindex_resumes_where_it_stopped(home):
    with open_store(home) as store:
        fill(store, 250)
    store = Store.open(config_mod.load(home=home, env={}), None)
    target = HashEmbedder(32, name="hash-32b")

    class Interrupted(Exception):
        pass

    def stop_after_two(done: int, total: int) -> None:
        if done >= 200:
            raise Interrupted

    with pytest.raises(Interrupted):
        backup.reindex(store, target, batch=100, progress=stop_after_two)
    assert store.vector_model == "hash-64"  # not swapped: vector search still uses the old model
    assert store.conn.execute("SELECT value FROM meta WHERE key = 'reindex_through'").fetchone()[0] == "200"
    store.add(NewMemory(content="added while the reindex was paused"))
    report = backup.reindex(store, target, batch=100)
    assert report.resumed_from == 200 and report.embedded == 51 and report.swapped
    assert store.conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == 251
    assert not has_table(store, "memory_vec_reindex")
    store.close()


def test_reindex_command_dry_run_then_real_run(capsys, home):
    with open_store(home) as store:
        fill(store, 10)
    code, out, _ = run(capsys, "--json", "reindex", "--model", "hash-16", "--dry-run")
    assert code == 0 and json.loads(out)["total"] == 10 and json.loads(out)["dry_run"]
    code, out, err = run(capsys, "reindex", "--model", "hash-16")
    assert code == 0 and "re-embedded 10 memories with hash-16" in out and "embedding_model" in err
    code, out, _ = run(capsys, "reindex", "--model", "hash-16")
    assert "nothing to do" in out
    with Store.open(config_mod.load(home=home, env={}, embedding_model="hash-16"), HashEmbedder(16)) as store:
        assert store.vector_dim == 16 and store.missing_vectors_count() == 0


# -- a new model, or a new revision of one: reindex is the switch -----------------------------------


class Revised(HashEmbedder):
    """hash-<dim> whose vectors changed: what a new revision of a real model looks like to a store."""

    def __init__(self, dim: int = 64, revision: str = "r2"):
        super().__init__(dim)
        self.revision = revision


@pytest.mark.backends  # on a team database the owner's first open makes the vector table: with the revision
def test_a_store_records_its_models_revision_and_refuses_vectors_of_another(home):
    cfg = config_mod.load(home=home, env={})
    with Store.open(cfg, Revised(64)) as store:
        fill(store, 3)
        assert (store.vector_model, store.vector_revision) == ("hash-64", "r2")
    assert stored_model(cfg) == ("hash-64", "r2")
    with pytest.raises(EmbeddingMismatch, match=r"revision r2.*maple-memory reindex"):
        Store.open(cfg, HashEmbedder(64))  # same name and dimension, other vectors
    with Store.open(cfg, Revised(64)) as store:
        hit = retrieval.search(store, retrieval.make_query("checklist step 2", ["global"]), record=False)[0]
        assert hit.channels.get("vector", 0) > 0


def test_a_store_built_by_the_old_default_keeps_searching_with_it_until_reindex_switches(capsys, home):
    with open_store(home, dim=64) as store:  # the old default's store
        ids = fill(store, 30)
    (home / "config.json").write_text(json.dumps({"embedding_model": "hash-32"}))  # the new default
    cfg = config_mod.load(home=home, env={})
    embedder = embed.from_config(cfg, stored_model(cfg))
    assert embedder.name == "hash-64"  # the database's own model, not a mix
    with Store.open(cfg, embedder) as store:
        hit = retrieval.search(store, retrieval.make_query("checklist step 7", ["global"]), record=False)[0]
        assert hit.memory.id == ids[7] and hit.channels.get("vector", 0) > 0
        store.add(NewMemory(content="stored before the switch", scope="global"))
        assert store.missing_vectors_count() == 0
    code, out, _ = run(capsys, "--json", "reindex")
    assert code == 0 and json.loads(out)["model"] == "hash-32" and json.loads(out)["embedded"] == 31
    assert stored_model(cfg) == ("hash-32", "")
    with Store.open(cfg, embed.from_config(cfg, stored_model(cfg))) as store:
        assert store.vector_dim == 32 and store.missing_vectors_count() == 0
        hit = retrieval.search(store, retrieval.make_query("checklist step 7", ["global"]), record=False)[0]
        assert hit.memory.id == ids[7] and hit.channels.get("vector", 0) > 0


def test_reindex_to_a_new_revision_re_embeds_every_memory_and_chunk_and_drops_cached_name_vectors(home):
    cfg = config_mod.load(home=home, env={}, extraction_chunk_chars=200)
    with Store.open(cfg, HashEmbedder(64)) as store:
        fill(store, 5)
        long = store.add(NewMemory(content=" ".join(f"Paragraph {i} about the billing ledger." for i in range(60))))
        chunks = [r[0] for r in store.conn.execute("SELECT id FROM memories WHERE parent_id = ?", (long.id,))]
        entity = store.conn.execute("SELECT id FROM entities LIMIT 1").fetchone()
        if entity:
            store.conn.execute(
                "INSERT INTO entity_vectors (entity_id, model, vector) VALUES (?, 'hash-64', x'00')", (entity[0],)
            )
    assert len(chunks) >= 3
    memories = Memories(Store.open(cfg, None), "global")
    try:
        assert memories.reindex(HashEmbedder(64))["unchanged"]  # same model and revision: nothing to do
        report = memories.reindex(Revised(64))
    finally:
        memories.store.close()
    assert report["swapped"] and report["embedded"] == 6 + len(chunks)
    assert (report["previous_revision"], report["revision"]) == ("", "r2")
    with Store.open(cfg, Revised(64)) as store:
        assert store.missing_vectors_count() == 0
        rows = dict(store.conn.execute("SELECT rowid, embedding FROM memory_vec").fetchall())
        assert set(chunks) <= set(rows)
        assert rows[chunks[0]] == to_blob(Revised(64).embed([store.get(chunks[0]).content])[0])
        assert store.conn.execute("SELECT count(*) FROM entity_vectors").fetchone()[0] == 0


@pytest.mark.backends  # and on a team database (PostgreSQL)
def test_an_interrupted_reindex_for_another_revision_starts_afresh(home):
    with open_store(home) as store:
        fill(store, 250)
    store = Store.open(config_mod.load(home=home, env={}), None)

    class Interrupted(Exception):
        pass

    def stop(done: int, total: int) -> None:
        if done >= 100:
            raise Interrupted

    with pytest.raises(Interrupted):
        backup.reindex(store, Revised(32, "r2"), batch=100, progress=stop)
    assert backup.reindex(store, Revised(32, "r2"), batch=100, progress=None).resumed_from == 100
    with pytest.raises(Interrupted):
        backup.reindex(store, Revised(64, "r3"), batch=100, progress=stop)
    report = backup.reindex(store, Revised(64, "r4"), batch=100)
    assert report.resumed_from == 0 and report.embedded == 250
    assert (store.vector_model, store.vector_revision) == ("hash-64", "r4")
    store.close()


@pytest.mark.backends  # and on a team database (PostgreSQL)
def test_a_process_still_holding_the_old_model_writes_no_vectors_after_a_reindex(home):
    cfg = config_mod.load(home=home, env={})
    stale = Store.open(cfg, HashEmbedder(64))
    fill(stale, 10)
    with Store.open(cfg, None) as switcher:
        backup.reindex(switcher, HashEmbedder(32, name="hash-32b"))
    late = stale.add(NewMemory(content="written by a server that still has the old model", scope="global"))
    assert stale.get(late.id).content.startswith("written by")  # the memory itself is kept
    with pytest.raises(EmbeddingMismatch, match="reindexed since this process opened"):
        stale.embed_missing()
    stale.close()
    with Store.open(cfg, HashEmbedder(32, name="hash-32b")) as store:
        assert store.missing_vectors_count() == 1  # not a hash-64 vector in a hash-32b index
        assert store.embed_missing() == 1 and store.integrity()["ok"]
