"""Chinese person names as entities: the labelled set tests/data/zh_names.json (written before the
rule), scored on the names in Chinese characters that the store's detector calls a person.

    PYTHONPATH=$PWD .venv/bin/python tests/test_zh_names.py      # prints precision, recall, misses
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cli_helpers import add, project, run, run_json  # noqa: E402, F401 - project: the CLI's own project per test
from test_entities import call, client, configure, links  # noqa: E402

from memory.lang import mentions  # noqa: E402
from memory.lang.text import CJK_RUN  # noqa: E402
from memory.store import Store  # noqa: E402

DATA = ROOT / "tests" / "data" / "zh_names.json"

pytestmark = pytest.mark.backends  # the store tests run on SQLite and on a team database


def people(text: str) -> set[str]:
    return {n for n, kind, _ in mentions.detect(text) if kind == "person" and CJK_RUN.search(n)}


def score(part: str = "sentences") -> tuple[float, float, list[str]]:
    """(precision, recall, one line per sentence the rule gets wrong) on one part of the set:
    `sentences` (written before the rule) or `later` (written after its first version)."""
    tp = fp = fn = 0
    wrong = []
    for s in json.loads(DATA.read_text("utf-8"))[part]:
        want, got = set(s["names"]), people(s["text"])
        tp, fp, fn = tp + len(want & got), fp + len(got - want), fn + len(want - got)
        if want != got:
            wrong.append(f"{s['text']}  missed {sorted(want - got)} false {sorted(got - want)}")
    return (tp / (tp + fp) if tp + fp else 1.0), (tp / (tp + fn) if tp + fn else 1.0), wrong


def test_the_labelled_set_has_both_halves() -> None:
    sentences = json.loads(DATA.read_text("utf-8"))["sentences"]
    with_names = [s for s in sentences if s["names"]]
    assert len(sentences) >= 60 and len(with_names) >= 30 and len(sentences) - len(with_names) >= 30


def test_chinese_person_names_are_found_and_words_that_start_with_a_surname_are_not() -> None:
    for part in ("sentences", "later"):
        precision, recall, wrong = score(part)
        assert precision >= 0.97 and recall >= 0.9, (part, "\n".join(wrong))


# -- through the real store: the MCP tools and the CLI ------------------------------------------

TRIAL = [  # what the blind user trial stored, Chinese first
    "陈爱丽负责计费服务的发布。",
    "李博决定用 Redis 做缓存。",
    "Alice Chen (A. Chen, 爱丽) is the tech lead of billing-service.",
]


async def test_a_question_naming_a_chen_reaches_what_chen_aili_decided(home, project):
    config = configure(home)
    async with client(config, project) as c:
        ids = [(await call(c, "memory_store", content=t))["id"] for t in TRIAL]
        for question in ("A. Chen 负责什么？", "What is Alice responsible for?"):
            hits = (await call(c, "memory_search", query=question))["results"]
            first = next(h for h in hits if h["id"] == ids[0])
            assert "entity" in first["channels"], question
        for name in ("A. Chen", "陈爱丽", "爱丽", "Alice Chen", "Alice"):
            e = await call(c, "entity_get", name=name)
            assert e["entity"]["name"] == "陈爱丽" and e["entity"]["kind"] == "person", name
            assert {m["id"] for m in e["memories"]} == {ids[0], ids[2]}, name
        li = await call(c, "entity_get", name="李博")
        assert li["entity"]["kind"] == "person" and [m["id"] for m in li["memories"]] == [ids[1]]
        hit = (await call(c, "memory_search", query="李博决定了什么"))["results"][0]
        assert hit["id"] == ids[1] and "entity" in hit["channels"]
        # The graph channel sees the person under every name.
        await call(c, "entity_relate", source="陈爱丽", relation="owns", target="billing-service")
        near = await call(c, "graph_neighbors", entity="A. Chen")
        assert "billing-service" in {n["name"] for n in near["nodes"]}


async def test_an_english_and_a_chinese_entity_written_together_later_become_one(home, project):
    config = configure(home)
    async with client(config, project) as c:
        english = (await call(c, "memory_store", content="Alice Chen owns the billing-service."))["id"]
        chinese = (await call(c, "memory_store", content="陈爱丽说周五之后不发版。"))["id"]
        assert (await call(c, "entity_get", name="陈爱丽"))["entity"]["name"] == "陈爱丽"  # two people, so far
        both = (await call(c, "memory_store", content="Alice Chen（陈爱丽）is our tech lead."))["id"]
        e = await call(c, "entity_get", name="陈爱丽")
        assert e["entity"]["name"] == "Alice Chen" and e["entity"]["kind"] == "person"
        assert {m["id"] for m in e["memories"]} == {english, chinese, both}
        hit = next(h for h in (await call(c, "memory_search", query="陈爱丽负责什么"))["results"] if h["id"] == english)
        assert "entity" in hit["channels"]
        hit = next(
            h
            for h in (await call(c, "memory_search", query="When does Alice Chen ship?"))["results"]
            if h["id"] == chinese
        )
        assert "entity" in hit["channels"]
        # The other way round: the Chinese name first, the English one in brackets.
        first = (await call(c, "memory_store", content="李博 (Bob Li) reviews every billing migration."))["id"]
        later = (await call(c, "memory_store", content="Bob Li merged the refund fix."))["id"]
        e = await call(c, "entity_get", name="Bob Li")
        assert e["entity"]["name"] == "李博" and {m["id"] for m in e["memories"]} == {first, later}
    s = Store.open(config, None, vectors=False)
    try:
        names = {r[0] for r in s.conn.execute("SELECT name FROM entities WHERE kind IN ('person', 'name')")}
    finally:
        s.close()
    assert {"Alice Chen", "李博"} <= names and not names & {"陈爱丽", "Bob Li"}


def test_one_import_that_names_a_person_both_ways_links_every_line_to_one_entity(capsys, home, tmp_path):
    config = configure(home)
    lines = tmp_path / "team.jsonl"
    lines.write_text("".join(json.dumps({"content": t}, ensure_ascii=False) + "\n" for t in TRIAL), encoding="utf-8")
    assert run_json(capsys, "import", str(lines))["imported"] == 3
    assert links(config, 1) == {"陈爱丽"}  # the entity the third line's names all resolve to
    assert links(config, 3) == {"陈爱丽", "billing-service"}
    assert links(config, 2) == {"李博", "Redis"}


def test_words_redaction_markers_and_identifiers_make_no_chinese_person(capsys, home):
    config = configure(home)
    texts = [
        "高性能是这个服务最重要的要求，周末值班的人负责盯告警。",
        "方案决定了以后，任务负责人要在周报里写进度。",
        "[REDACTED:api-key]负责签名，不要提交到仓库。",
        "把 `张伟负责` 这个测试用例删掉，user_王芳说 是旧的字段名。",
        "每张分表要迁移的行数都打印出来，改成条件更新。",
    ]
    ids = [add(capsys, t) for t in texts]
    s = Store.open(config, None, vectors=False)
    try:
        people = s.conn.execute("SELECT name FROM entities WHERE kind = 'person'").fetchall()
        code = {r[0] for r in s.conn.execute("SELECT name FROM entities WHERE kind = 'code'")}
    finally:
        s.close()
    assert people == [] and "张伟负责" in code  # a code span stays code
    assert len(set(ids)) == len(texts)


def test_an_edit_that_forgets_the_old_text_keeps_a_person_named_by_an_alias(capsys, home):
    config = configure(home)
    both = add(capsys, "Alice Chen（陈爱丽）is our tech lead.")
    said = add(capsys, "陈爱丽说周五之后不发版。")
    run(capsys, "forget", str(both), "--permanent")  # 陈爱丽's memory alone links the entity Alice Chen
    run_json(capsys, "update", str(said), "--content", "陈爱丽说周四之后不发版。", "--forget-old")
    assert links(config, said) == {"Alice Chen"}  # the entity, its aliases with it, is not dropped and remade
    s = Store.open(config, None, vectors=False)
    try:
        aliases = {r[0] for r in s.conn.execute("SELECT alias FROM entity_aliases")}
    finally:
        s.close()
    assert "陈爱丽" in aliases


if __name__ == "__main__":
    for part in ("sentences", "later"):
        p, r, wrong = score(part)
        print("\n".join(wrong))
        print(f"zh_names {part}: precision {p:.3f} recall {r:.3f}")
