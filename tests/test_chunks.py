"""Long memories: one chunking rule at every entry point (memory.store.chunks), chunks kept in step
with their parent through every change, and searches that find any part of a long memory and
show it, through the MCP tools and the CLI."""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_helpers import call

from memory import config as config_mod
from memory.config import Config
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, chunks
from server.app import build_server

PROJECT = "/work/project-a"
WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber birch cedar dahlia elm fern "
    "ginkgo hazel iris juniper laurel maple nettle olive"
).split()
# A runbook of 3,900 characters whose last step is the only one about credit notes.
RUNBOOK = "Runbook: the nightly billing jobs.\n" + "\n".join(
    f"Step {i}: check the {w} worker, read its {w} dashboard and restart the {w} pod if its queue is stuck."
    for i, w in enumerate(WORDS, 1)
)
TAIL = "\nLast step: flush the cache namespace credit-notes-orphans to repair credit notes without a parent."
LONG = RUNBOOK + TAIL
TAIL_QUERY = "which cache namespace do I flush to repair credit notes without a parent"


def client(config: Config, project: str = PROJECT) -> Client:
    return Client(build_server(config, HashEmbedder(64), project=project), mode="legacy")


async def error(c: Client, tool: str, **args: Any) -> str:
    result = await c.call_tool(tool, args)
    assert result.is_error, result.structured_content
    return result.content[0].text


def chunk_rows(config: Config, parent: int) -> list[tuple]:
    """(id, content, chunk_start, chunk_end, scope, deleted_at) of the parent's chunks, in order."""
    with Store.open(config, HashEmbedder(64)) as s:
        return s.conn.execute(
            "SELECT id, content, chunk_start, chunk_end, scope, deleted_at FROM memories WHERE parent_id = ? "
            "ORDER BY chunk_index",
            (parent,),
        ).fetchall()


async def embedded_in_background(c: Client) -> None:
    """Wait until the server's background embedding has given every memory and chunk a vector."""
    for _ in range(500):
        if (await call(c, "memory_stats"))["without_vectors"] == 0:
            return
        await anyio.sleep(0.02)
    raise AssertionError("the background embedding never finished")


def index_rows(config: Config, ids: list[int]) -> tuple[int, int]:
    """How many of these ids have a keyword row and a vector."""
    marks = ",".join("?" * len(ids))
    with Store.open(config, HashEmbedder(64)) as s:
        fts = s.conn.execute(f"SELECT count(*) FROM memory_fts WHERE rowid IN ({marks})", ids).fetchone()[0]
        vec = s.conn.execute(f"SELECT count(*) FROM memory_vec WHERE rowid IN ({marks})", ids).fetchone()[0]
    return fts, vec


# -- the rule ------------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(codec="utf-8"), max_size=5000), st.integers(min_value=50, max_value=1200))
def test_chunk_spans_are_ordered_trimmed_slices_that_leave_out_only_space(content: str, target: int) -> None:
    spans = chunks.spans(content, target)
    end = 0
    for a, b in spans:
        assert end <= a < b <= len(content)
        part = content[a:b]
        assert part == part.strip() and part
        assert not content[end:a].strip()  # nothing but space between two chunks
        end = b
    assert not content[end:].strip()


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("ab 。:：#-1.\n\n"), max_size=3000), st.integers(min_value=50, max_value=1200))
def test_the_part_shown_holds_its_chunk_and_stays_within_the_cap(content: str, most: int) -> None:
    for a, b in chunks.spans(content, 100):
        s, e = chunks.shown(content, a, b, most)
        assert s <= a < b <= e <= len(content)
        assert content[s:e] == content[s:e].strip()
        assert chunks.weight(content[s:e]) <= max(most, chunks.weight(content[a:b]))


def test_a_chinese_chunk_holds_fewer_characters_than_an_english_one() -> None:
    en = " ".join(["The ledger job posts refunds nightly."] * 200)
    zh = "账本任务每天夜里过账退款。" * 300
    longest = lambda text: max(b - a for a, b in chunks.spans(text))  # noqa: E731
    assert longest(en) <= chunks.TARGET and longest(zh) <= chunks.TARGET // chunks.CJK_WEIGHT + 20
    assert chunks.position(9_799, 11_200, 13_038) == "chars 9,800-11,200 of 13,038"


# -- entry points --------------------------------------------------------------------------------------


async def test_memory_store_chunks_a_long_memory_and_search_shows_the_part_that_matched(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        await call(c, "memory_store", content="Credit notes are issued by the billing team on request.")
        found = await call(c, "memory_search", query=TAIL_QUERY)
        whole = await call(c, "memory_get", ids=[m["id"]])
        await embedded_in_background(c)  # the chunks' vectors (Store.vectors_later)
    parts = chunk_rows(config, m["id"])
    assert len(parts) >= 4 and all(LONG[a:b] == text for _, text, a, b, _, _ in parts)
    assert index_rows(config, [p[0] for p in parts]) == (len(parts), len(parts))
    ids = [h["id"] for h in found["results"]]
    assert ids.count(m["id"]) == 1 and not set(ids) & {p[0] for p in parts}  # the parent, once; never a chunk
    hit = next(h for h in found["results"] if h["id"] == m["id"])
    assert "credit-notes-orphans" in hit["content"] and LONG.endswith(hit["content"])
    start = len(LONG) - len(hit["content"])
    assert (
        hit["part"]
        == f"chars {start + 1:,}-{len(LONG):,} of {len(LONG):,}; memory_get([{m['id']}]) returns the whole text"
    )
    assert whole["memories"][0]["content"] == LONG


def test_cli_add_chunks_a_long_memory_and_search_shows_where_the_part_is(capsys, home):
    mid = add(capsys, LONG)
    found = run_json(capsys, "search", TAIL_QUERY)
    code, out, _ = run(capsys, "search", TAIL_QUERY)
    parts = chunk_rows(config_mod.load(home=home), mid)
    assert len(parts) >= 4
    hit = next(r for r in found["results"] if r["id"] == mid)
    assert hit["part"]["end"] == len(LONG) and hit["part"]["of"] == len(LONG)
    assert code == 0 and f"of {len(LONG):,}; `maple-memory show {mid}` for all]" in out


def test_cli_json_search_of_a_long_memory_carries_the_part_as_memory_search_does(capsys, tmp_path):
    mid = add(capsys, LONG)
    other = add(capsys, "Credit notes are issued by the billing team on request.")
    found = run_json(capsys, "search", TAIL_QUERY)["results"]
    hit = next(r for r in found if r["id"] == mid)
    start, end = hit["part"]["start"], hit["part"]["end"]
    assert hit["content"] == LONG[start:end] and len(hit["content"]) < len(LONG)  # the part, not the whole
    assert "credit-notes-orphans" in hit["content"] and hit["truncated"] is True
    assert hit["part"]["of"] == len(LONG) and hit["part"]["where"].startswith(f"chars {start + 1:,}-")
    assert hit["part"]["whole"] == f"maple-memory show {mid}"
    short = next(r for r in found if r["id"] == other)
    assert short["truncated"] is False and "part" not in short
    assert run_json(capsys, "show", str(mid))["memories"][0]["content"] == LONG
    out = tmp_path / "all.jsonl"
    run(capsys, "export", str(out))
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [m["content"] for m in exported if m.get("id") == mid] == [LONG]  # export keeps the whole


def test_import_chunks_long_lines_and_export_leaves_the_chunks_out(capsys, home, tmp_path):
    old_export = tmp_path / "old.jsonl"  # an export of a release that wrote its chunks as lines
    old_export.write_text(
        json.dumps({"id": 5, "content": LONG})
        + "\n"
        + json.dumps({"id": 6, "content": "Step 1: check the alpha worker", "parent_id": 5, "chunk_index": 0})
        + "\n",
        encoding="utf-8",
    )
    report = run_json(capsys, "import", str(old_export))
    out = tmp_path / "export.jsonl"
    run_json(capsys, "export", str(out))
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert (report["imported"], report["duplicates"], report["rejected"]) == (1, 1, 0)
    assert [x["content"] for x in lines] == [LONG]  # the chunks are cut again on import, not exported
    parent = lines[0]["id"]
    assert len(chunk_rows(config_mod.load(home=home), parent)) >= 4
    assert run_json(capsys, "search", TAIL_QUERY)["results"][0]["id"] == parent


# -- keeping chunks in step --------------------------------------------------------------------------


async def test_editing_a_long_memory_cuts_its_chunks_again(config):
    new_tail = "\nLast step: page the payments on-call if the ledger export is late."
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        before = chunk_rows(config, m["id"])
        await call(c, "memory_update", id=m["id"], content=RUNBOOK + new_tail)
        old = await call(c, "memory_search", query=TAIL_QUERY)
        new = await call(c, "memory_search", query="who to page when the ledger export is late")
        await embedded_in_background(c)
    after = chunk_rows(config, m["id"])
    assert index_rows(config, [p[0] for p in after]) == (len(after), len(after))
    assert not {p[0] for p in before} & {p[0] for p in after}  # new rows: in-memory indexes see them
    assert index_rows(config, [p[0] for p in before]) == (0, 0)
    assert after[-1][1].endswith("ledger export is late.")
    assert all("credit-notes" not in h["content"] for h in old["results"])
    assert "ledger export is late" in new["results"][0]["content"]


async def test_forget_restore_and_delete_take_the_chunks_along(config, capsys):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        parts = [p[0] for p in chunk_rows(config, m["id"])]
        await call(c, "memory_forget", id=m["id"])
        archived = chunk_rows(config, m["id"])
        hidden = await call(c, "memory_search", query=TAIL_QUERY)
        with Store.open(config, HashEmbedder(64)) as s:
            s.restore(m["id"])
        restored = chunk_rows(config, m["id"])
        back = await call(c, "memory_search", query=TAIL_QUERY)
        await call(c, "memory_forget", id=m["id"], permanent=True)
    assert all(p[5] is not None for p in archived) and all(p[5] is None for p in restored)
    assert m["id"] not in [h["id"] for h in hidden["results"]]
    assert back["results"][0]["id"] == m["id"]
    assert chunk_rows(config, m["id"]) == [] and index_rows(config, parts) == (0, 0)


async def test_a_superseded_long_memory_is_found_neither_by_itself_nor_by_its_chunks(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        d = await call(c, "memory_update", id=m["id"], mode="supersede", content="The billing jobs moved to Airflow.")
        found = await call(c, "memory_search", query=TAIL_QUERY)
        old = await call(c, "memory_get", ids=[m["id"]])
    assert m["id"] not in [h["id"] for h in found["results"]]
    assert old["memories"][0]["status"] == "superseded"
    assert old["memories"][0]["superseded_by"] == d["memory"]["id"]


async def test_moving_a_long_memory_to_global_moves_its_chunks(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        await call(c, "memory_update", id=m["id"], scope="global")
    async with client(config, project="/work/project-b") as other:
        found = await call(other, "memory_search", query=TAIL_QUERY)
    assert {p[4] for p in chunk_rows(config, m["id"])} == {"global"}
    assert found["results"][0]["id"] == m["id"] and "credit-notes-orphans" in found["results"][0]["content"]


def _stored_before_chunking(home: Path, project: Path) -> int:  # noqa: F811
    """A long memory as an older release stored it: one row, no chunks."""
    cfg = config_mod.load(home=home)
    with Store.open(replace(cfg, extraction_chunk_chars=10**6), HashEmbedder(64)) as s:
        return s.add(NewMemory(LONG, scope=str(project.resolve()))).id


def test_maintain_chunks_long_memories_stored_before_chunking(capsys, home, project):  # noqa: F811
    mid = _stored_before_chunking(home, project)
    report = run_json(capsys, "maintain")
    again = run_json(capsys, "maintain")
    parts = chunk_rows(config_mod.load(home=home), mid)
    assert report["counts"]["chunk"] == 1 and "chunk" not in again["counts"]
    assert len(parts) >= 4 and index_rows(config_mod.load(home=home), [p[0] for p in parts]) == (len(parts),) * 2
    assert run_json(capsys, "search", TAIL_QUERY)["results"][0]["part"]["end"] == len(LONG)


def test_reindex_chunks_long_memories_stored_before_chunking(capsys, home, project):  # noqa: F811
    mid = _stored_before_chunking(home, project)
    report = run_json(capsys, "reindex")
    parts = chunk_rows(config_mod.load(home=home), mid)
    assert report["chunked"] == 1 and len(parts) >= 4
    assert index_rows(config_mod.load(home=home), [p[0] for p in parts]) == (len(parts),) * 2


# -- a chunk's id is not a memory of its own ---------------------------------------------------------


async def test_a_chunk_id_reads_its_parent_and_is_never_changed_on_its_own(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        part = chunk_rows(config, m["id"])[1]
        got = await call(c, "memory_get", ids=[part[0], m["id"]])
        history = await call(c, "memory_history", id=part[0])
        refused = [
            await error(c, "memory_update", id=part[0], content="chunk edited directly"),
            await error(c, "memory_forget", id=part[0]),
            await error(c, "memory_pin", id=part[0]),
            await error(c, "decision_outcome", id=part[0], outcome="worked"),
        ]
    said = f"#{part[0]} is part of memory #{m['id']}"
    assert [x["id"] for x in got["memories"]] == [m["id"]] and got["memories"][0]["content"] == LONG
    assert got["missing"] == [] and got["parts"][0].startswith(said)
    assert [e["memory"]["id"] for e in history["entries"]] == [m["id"]]
    assert all(said in text and f"use {m['id']}" in text for text in refused), refused
    assert chunk_rows(config, m["id"])[1] == part  # untouched: still the exact slice, not archived


def test_cli_show_of_a_chunk_id_shows_its_parent_and_changes_are_refused(capsys, home):
    mid = add(capsys, LONG)
    part = chunk_rows(config_mod.load(home=home), mid)[2][0]
    code, out, err = run(capsys, "show", str(part))
    shown = run_json(capsys, "show", str(part))
    refused = [
        run(capsys, *argv)
        for argv in (("forget", str(part)), ("pin", str(part)), ("update", str(part), "--content", "x y z"))
    ]
    assert code == 0 and f"memory {mid}" in out and f"#{part} is part of memory #{mid}" in err
    assert [m["id"] for m in shown["memories"]] == [mid]
    assert all(code != 0 and f"#{part} is part of memory #{mid}" in err for code, _, err in refused), refused
    assert run_json(capsys, "show", str(mid))["memories"][0]["pinned"] is False


# -- showing the part that matched ---------------------------------------------------------------------


async def test_memory_context_shows_the_matched_part_in_full_when_the_budget_allows(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        text = (await c.call_tool("memory_context", {"query": TAIL_QUERY, "budget": 2400})).content[0].text
    last = chunk_rows(config, m["id"])[-1]
    line = next(x for x in text.splitlines() if x.startswith(f"- #{m['id']} "))
    assert line.endswith(json.dumps(" ".join(last[1].split()), ensure_ascii=False))  # the whole chunk, uncut
    assert "credit-notes-orphans to repair credit notes without a parent." in line


class TitleNearEverything(HashEmbedder):
    """A stand-in for a multilingual model on a Chinese question about an English runbook: the
    question's meaning is nearest the runbook's title (its summary), not the step that answers it."""

    def _one(self, text: str) -> list[float]:
        if text.startswith("Runbook:") or text.startswith("怎么"):
            return [1.0] + [0.0] * (self.dim - 1)
        return super()._one(text)


async def test_a_chinese_question_about_an_english_runbook_shows_the_step_with_its_words_not_the_title(config):
    question = "怎么修复没有 parent 的记录？"  # shares one word with the runbook, in its last step
    server = build_server(config, TitleNearEverything(64, name="title-near"), project=PROJECT)
    async with Client(server, mode="legacy") as c:
        m = await call(c, "memory_store", content=LONG)
        # a stronger keyword hit elsewhere, so the title (nearest in meaning) outranks the last step
        await call(c, "memory_store", content="Every invoice row needs a parent account; a parent is never optional.")
        found = await call(c, "memory_search", query=question)
    hit = next(h for h in found["results"] if h["id"] == m["id"])
    assert "credit-notes-orphans" in hit["content"] and not hit["content"].startswith("Runbook:")
    assert hit["part"].startswith(f"chars {len(LONG) - len(hit['content']) + 1:,}-")


# A runbook whose subject is in every part: its introduction holds more of a question's words than
# the step that answers it, but only the subject's words, which tell no part from another.
FAILOVER = (
    "Ledger database failover runbook. Read it whole before you start a ledger database failover.\n"
    + "\n".join(
        f"Step {i}: during the ledger database failover, check the {w} replica of the ledger database, "
        f"compare its {w} lag with the primary and note it in the {w} failover log before going on."
        for i, w in enumerate(WORDS[:24], 1)
    )
    + "\n\nAfterwards\n"
    + " ".join(
        f"Tell the {t} team on its channel that the switch is over and link the {t} ticket to the incident."
        for t in ("payments", "platform", "audit", "security", "support", "finance", "legal", "sales", "growth")
    )
    + " Within two days the incident lead must review the postmortem with the DBA team."
)


async def test_the_part_shown_is_the_one_the_rarer_words_of_the_question_point_to(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=FAILOVER)
        found = await call(
            c, "memory_search", query="After a ledger database failover, who must review the postmortem?"
        )
    assert len(chunk_rows(config, m["id"])) >= 3
    hit = next(h for h in found["results"] if h["id"] == m["id"])
    assert "review the postmortem" in hit["content"] and not hit["content"].startswith("Ledger database failover")


def test_cli_search_prints_the_matched_part_of_a_long_memory_wrapped_not_cut(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    mid = add(capsys, LONG)
    code, out, _ = run(capsys, "search", TAIL_QUERY)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"{mid}  ") and "[chars " in lines[0]
    assert max(len(x) for x in lines) <= 60
    assert "credit-notes-orphans to repair credit notes without a parent." in " ".join(x.strip() for x in lines)


# -- counts and answers that treat a long memory as one ----------------------------------------------


def test_doctor_and_stats_count_a_long_memory_once(capsys, home):
    add(capsys, LONG)
    n = len(chunk_rows(config_mod.load(home=home), 1))
    checks = {c["name"]: c for c in run_json(capsys, "doctor")["checks"]}
    stats = run_json(capsys, "stats")
    assert f"1 memory (and {n} chunks of the long ones), integrity ok" in checks["database"]["detail"]
    assert stats["memories"] == 1 and stats["without_vectors"] == 0


class HeldEmbedder(HashEmbedder):
    """Ready at once, but embeds documents only once `release` is set: the server's background
    embedding of what waits for vectors is held until the test has read the count (else it races)."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.release = threading.Event()

    def embed(self, texts):  # noqa: ANN001, ANN201
        self.release.wait(30)
        return super().embed(texts)


async def test_memory_stats_counts_memories_waiting_for_vectors_and_says_so(config):
    with Store.open(config, None) as s:  # stored while no model was at hand: no vectors
        s.add(NewMemory(LONG, scope=PROJECT))
    held = HeldEmbedder(64)
    try:
        async with Client(build_server(config, held, project=PROJECT), mode="legacy") as c:
            stats = await call(c, "memory_stats")
            held.release.set()
    finally:
        held.release.set()
    assert stats["without_vectors"] == 1 and stats["model"] == "ready"
    assert stats["vectors"].startswith("the model is ready; 1 memory waits for their vectors")


async def test_memory_store_echoes_a_preview_of_a_long_memory(config):
    async with client(config) as c:
        m = await call(c, "memory_store", content=LONG)
        whole = await call(c, "memory_get", ids=[m["id"]])
    assert len(m["content"]) < 500 and m["content"].startswith(LONG[:200])
    assert m["content"].endswith(f"[{len(LONG):,} characters stored; memory_get([{m['id']}]) returns them all]")
    assert whole["memories"][0]["content"] == LONG


class CountingEmbedder(HashEmbedder):
    """The test embedder, counting the texts it is asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += len(texts)
        return super().embed(texts)


async def test_storing_a_long_memory_again_embeds_nothing_and_answers_with_the_stored_one(config):
    embedder = CountingEmbedder()
    async with Client(build_server(config, embedder, project=PROJECT), mode="legacy") as c:
        first = await call(c, "memory_store", content=LONG)
        await embedded_in_background(c)
        embedded = embedder.texts
        again = await call(c, "memory_store", content=LONG)
        await embedded_in_background(c)
    assert embedded > 2  # the memory and its chunks
    assert again["id"] == first["id"] and embedder.texts == embedded


class HeldParts(HashEmbedder):
    """Embeds a whole memory at once, and anything else (a long memory's chunks) only once
    `release` is set: the in-between state of a long memory stored through the server, observed
    without timing."""

    def __init__(self) -> None:
        super().__init__(64)
        self.release = threading.Event()

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if LONG not in texts:
            self.release.wait(10)
        return super().embed(texts)


async def test_memory_store_of_a_long_memory_returns_before_its_chunks_are_embedded_and_they_follow(config):
    held = HeldParts()
    try:
        async with Client(build_server(config, held, project=PROJECT), mode="legacy") as c:
            m = await call(c, "memory_store", content=LONG)
            parts = [p[0] for p in chunk_rows(config, m["id"])]
            stored = index_rows(config, [m["id"]]), index_rows(config, parts)
            # Meanwhile: found by a word of its last step only, which only a chunk's keyword row holds
            # near the end (the parent's vector reads its start); the search says what is not embedded.
            meanwhile = await call(c, "memory_search", query="orphans namespace")
            held.release.set()
            await embedded_in_background(c)
            after = await call(c, "memory_search", query="orphans namespace")
    finally:
        held.release.set()
    assert stored == ((1, 1), (len(parts), 0))  # the memory with its vector, the chunks' keyword rows only
    assert [r["id"] for r in meanwhile["results"]] == [m["id"]]
    assert "credit-notes-orphans" in meanwhile["results"][0]["content"]
    assert meanwhile["without_vectors"] == [m["id"]]  # its parts wait for their vectors
    assert index_rows(config, parts) == (len(parts), len(parts))
    assert [r["id"] for r in after["results"]] == [m["id"]] and after["without_vectors"] == []


def test_where_nothing_embeds_later_a_long_memory_is_stored_with_every_vector(capsys, config, embedder):
    # The library's Store, and `maple-memory add` with the engine off (conftest): one-shot writers
    # that no background process follows, so the chunks are embedded before the write returns.
    with Store.open(config, embedder) as s:
        direct = s.add(NewMemory(LONG, scope=PROJECT)).id
    by_cli = add(capsys, LONG + " Added from the command line.")
    for mid in (direct, by_cli):
        parts = [p[0] for p in chunk_rows(config, mid)]
        assert len(parts) >= 4 and index_rows(config, [mid, *parts]) == (len(parts) + 1, len(parts) + 1)


def test_a_warm_vector_copy_ranks_by_chunk_vectors_as_soon_as_they_are_filled_in(config, embedder):
    # The in-memory copy (memory.store.vecindex) looks again at rows it saw without a vector every
    # WAIT_SECONDS; a search right after the background embedding must not wait for that turn.
    from memory.store import indexes

    with Store.open(config, embedder) as s:
        s.vectors_later = lambda after: None  # as the server sets it; filled by embed_missing below
        mid = s.add(NewMemory(LONG, scope=PROJECT)).id
        parts = {p[0] for p in chunk_rows(config, mid)}
        before = set(indexes.vector_index(s).row_of)
        assert s.embed_missing() == len(parts)
        after = set(indexes.vector_index(s).row_of)  # the very next search, well within WAIT_SECONDS
        hits = indexes.vector_hits(s, embedder.embed_query(TAIL.strip()), [PROJECT], 3)
    assert mid in before and not parts & before
    assert parts <= after
    assert hits[0][0] in parts  # the last chunk, nearest to its own text


def test_the_wake_up_after_a_long_store_points_past_older_memories_waiting_for_vectors(config, embedder):
    # At 50k memories each look for rows without a vector costs 0.7 s: the background starts
    # where the write left rows without one, and older ones wait for the worker's pass.
    with Store.open(config, None) as s:
        old = s.add(NewMemory("Stored by a process without a model: staging listens on 6543", scope=PROJECT)).id
    with Store.open(config, embedder) as s:
        asked: list[int] = []
        s.vectors_later = asked.append
        mid = s.add(NewMemory(LONG, scope=PROJECT)).id
        parts = [p[0] for p in chunk_rows(config, mid)]
        assert asked == [mid]  # the memory has its vector: look above it
        assert s.embed_missing(after=asked[0]) == len(parts)
        assert s.without_vectors([old, mid, *parts]) == [old]


class EditsWhileEmbedding(HashEmbedder):
    """Runs `edit` (once) while it embeds: an edit that lands between the read and the write of a
    background embedding."""

    def __init__(self, edit: Any) -> None:
        super().__init__(64)
        self.edit = edit

    def embed(self, texts):  # type: ignore[no-untyped-def]
        edit, self.edit = self.edit, None
        if edit is not None:
            edit()
        return super().embed(texts)


def test_chunks_cut_away_while_they_were_embedded_leave_no_vector_behind(config, embedder):
    new_tail = "\nLast step: page the payments on-call if the ledger export is late."
    with Store.open(config, embedder) as s:
        s.vectors_later = lambda after: None
        mid = s.add(NewMemory(LONG, scope=PROJECT)).id
        before = [p[0] for p in chunk_rows(config, mid)]
        with Store.open(config, EditsWhileEmbedding(lambda: s.update(mid, content=RUNBOOK + new_tail))) as filler:
            filler.embed_missing(batch=4)
            check = filler.integrity()
        after = [p[0] for p in chunk_rows(config, mid)]
    assert not set(before) & set(after) and index_rows(config, before) == (0, 0)
    assert check["orphan_vectors"] == 0 and check["ok"]
    assert index_rows(config, after) == (len(after), len(after))


# -- the part shown holds the step it starts, not only its heading --------------------------------


def _runbook_en() -> str:
    """A runbook whose step on the signing key has its heading at a chunk's end (its answer, the
    command, is in the next chunk)."""
    secs = ["# billing: the nightly jobs runbook\n\nOwner: the billing team. Read this before any change to the jobs."]
    secs += [
        f"## {i}. The {w} worker\n\nCheck the {w} dashboard first. Restart the {w} pod when its queue is stuck for "
        f"more than ten minutes. Page the {w} owner when a restart does not help."
        for i, w in enumerate(WORDS[:8], 1)
    ]
    secs.append("## 9. Notes\n\n" + "Keep the change log current. " * 24)
    secs.append(
        "## 10. Rotating the ledger signing key\n\nUse vaultctl rekey --mount billing-hsm --grace 72h from the "
        "bastion host. The old one keeps verifying for three days."
    )
    secs.append("## 11. Contacts\n\nThe billing on-call, then the team lead.")
    return "\n\n".join(secs)


def _runbook_zh() -> str:
    """The same in Chinese: sentences end with 。 and no space."""
    names = "订单 库存 支付 物流 评论 优惠 会员 搜索 推荐 广告 消息 账号 风控 报表 发票 退款".split()
    secs = ["# 计费服务运维手册\n\n负责团队：计费组。任何变更之前请先读完本手册。"]
    secs += [
        f"## {i}. {w}任务\n\n先看{w}任务的监控面板，确认最近一小时的错误率和延迟都正常。队列卡住超过十分钟就重启{w}"
        f"任务的容器。重启无效时呼叫{w}负责人，并在值班频道里说明情况。"
        for i, w in enumerate(names, 1)
    ]
    secs.append("## 17. 备注\n\n" + "变更记录要及时更新。" * 22)
    secs.append(
        "## 18. 轮换账本签名密钥\n\n在跳板机上执行 vaultctl rekey --mount billing-hsm --grace 72h。旧的那把在三天内仍可用于校验。"
    )
    secs.append("## 19. 联系人\n\n计费组值班，然后是技术负责人。")
    return "\n\n".join(secs)


@pytest.mark.parametrize(
    ("book", "heading", "query"),
    [
        (_runbook_en(), "## 10. Rotating the ledger signing key", "rotating the ledger signing key"),
        (_runbook_zh(), "## 18. 轮换账本签名密钥", "怎么轮换账本签名密钥"),
    ],
    ids=["english", "chinese"],
)
async def test_a_step_whose_heading_ends_a_chunk_is_shown_with_the_lines_that_answer_it(config, book, heading, query):
    answer = "vaultctl rekey --mount billing-hsm --grace 72h"
    head_end = book.index(heading) + len(heading)
    assert any(b == head_end for _, b in chunks.spans(book))  # the heading ends a chunk: the answer is in the next
    async with client(config) as c:
        m = await call(c, "memory_store", content=book)
        found = await call(c, "memory_search", query=query)
    hit = next(h for h in found["results"] if h["id"] == m["id"])
    assert heading in hit["content"] and answer in hit["content"]
    assert len(hit["content"]) < len(book) // 2  # a part, not the whole
    start = book.index(hit["content"])
    assert book[start : start + len(hit["content"])] == hit["content"]
    assert hit["part"] == (
        f"chars {start + 1:,}-{start + len(hit['content']):,} of {len(book):,}; "
        f"memory_get([{m['id']}]) returns the whole text"
    )
    assert not hit["content"].endswith(heading)  # the step is shown to its end, not just its heading
    assert hit["content"].endswith(("three days.", "仍可用于校验。"))


def test_the_part_shown_widens_to_whole_blocks_within_its_cap() -> None:
    text = (
        "Intro line one. Intro line two.\n\n## Step\n\nRun:\n- first\n- second\n\nMore on the step.\n\n"
        "## Next\n\nUnrelated paragraph.\n- an item"
    )
    shown = lambda a, b, **kw: text[slice(*chunks.shown(text, text.index(a), text.index(b) + len(b), **kw))]  # noqa: E731
    # a heading in the part: to the end of its section, and back to the start of the line
    assert shown("Intro line two.", "## Step") == text[: text.index("\n\n## Next")]
    assert shown("Intro line one.", "Intro line one.") == "Intro line one. Intro line two."  # the paragraph's end
    assert shown("Intro line two.", "Intro line two.") == "Intro line one. Intro line two."  # nothing announced
    assert shown("- first", "- first") == "- first"  # a list item ends at the next item
    assert shown("Run:", "Run:") == "Run:\n- first\n- second"  # a lead-in: the list that follows, whole
    assert shown("Unrelated", "Unrelated paragraph.") == "Unrelated paragraph."
    assert shown("Intro line one.", "## Step", most=40) == "Intro line one. Intro line two.\n\n## Step"  # the cap
    zh = "说明一。说明二。\n\n## 步骤\n\n执行：\n- 第一\n- 第二\n\n## 下一步\n\n无关。"
    a, b = zh.index("说明二。"), zh.index("执行：") + 3
    assert zh[slice(*chunks.shown(zh, a, b))] == "说明一。说明二。\n\n## 步骤\n\n执行：\n- 第一\n- 第二"
    a = zh.index("执行：")
    assert zh[slice(*chunks.shown(zh, a, a + 3))] == "执行：\n- 第一\n- 第二"


def test_a_runbook_and_its_chunks_get_no_mood_a_short_memory_still_does(capsys, home, config):
    # a blind trial: two runbooks came back tagged "stress" and "pride" and fed the mood channel
    steps = "\n".join(
        f"{n}. If the warm-up panics, don't panic: we were proud of how calm the last drill was; step {n} re-runs it."
        for n in range(1, 40)
    )
    mid = add(capsys, "Cache warm-up runbook\n" + steps)
    shown = run_json(capsys, "show", str(mid))["memories"][0]
    assert shown["moods"] == [] and chunk_rows(config, mid)
    with sqlite3.connect(config.db_path) as db:
        assert db.execute("SELECT count(*) FROM memories WHERE parent_id = ? AND moods != '[]'", (mid,)).fetchone() == (
            0,
        )
    short = add(capsys, "I'm so proud of how calm the last failover drill was!")
    assert run_json(capsys, "show", str(short))["memories"][0]["moods"]
