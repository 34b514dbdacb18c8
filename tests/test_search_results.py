"""What a search returns, through MCP and the CLI: only memories some channel supports (never
filler), scores on an absolute scale for a calibrated embedder, and an empty result that says so."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)
from mcp import Client

from memory import embed
from memory.config import Config
from memory.retrieval import ranking
from server.app import build_server

PROJECT = "/work/project-a"
STAGING = "The staging database host is pg-staging-01."
REVIEW = "Code review needs two approvals."
LINT = "We lint with ruff."
HELM = "how do we deploy the helm chart to kubernetes"


class TopicEmbedder:
    """One axis per topic; a text points along the topics whose words it holds, plus a small
    component of its own (so unrelated texts sit near cosine 0, as with a real model)."""

    name = "topic-test"
    dim = 8
    TOPICS = (("database", "postgres", "pg-"), ("review", "approval"), ("lint", "ruff"), ("deploy", "helm"))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        low = text.lower()
        v = [float(sum(low.count(w) for w in words)) for words in self.TOPICS]
        v += [0.0] * (self.dim - len(v))
        v[len(self.TOPICS) + sum(map(ord, low)) % (self.dim - len(self.TOPICS))] += 0.2  # its own bit
        n = math.sqrt(sum(x * x for x in v))
        return [x / n for x in v]


@pytest.fixture
def calibrated(monkeypatch: pytest.MonkeyPatch) -> TopicEmbedder:
    monkeypatch.setitem(embed.COSINE_RANGES, TopicEmbedder.name, (0.3, 0.8))
    return TopicEmbedder()


async def search(config: Config, embedder: Any, memories: Sequence[str], query: str) -> dict[str, Any]:
    async with Client(build_server(config, embedder, project=PROJECT), mode="legacy") as c:
        for content in memories:
            stored = await c.call_tool("memory_store", {"content": content})
            assert not stored.is_error, stored.content
        found = await c.call_tool("memory_search", {"query": query, "limit": 10})
        assert not found.is_error, found.content
        return found.structured_content


async def test_a_query_about_something_never_stored_gets_no_result_and_says_so(config, calibrated):
    found = await search(config, calibrated, [STAGING, REVIEW, LINT], HELM)
    assert found["results"] == []
    assert "No memory matches this query" in found["note"] and PROJECT in found["note"]


async def test_a_search_never_pads_its_list_with_results_no_channel_supports(config, calibrated):
    found = await search(config, calibrated, [STAGING, REVIEW, LINT], "which postgres database do we use")
    assert [r["content"] for r in found["results"]] == [STAGING]
    assert all(r["channels"] and r["score"] > 0 for r in found["results"]) and found["note"] == ""


async def test_scores_are_absolute_so_a_weak_best_match_does_not_look_confident(config, calibrated):
    strong = await search(config, calibrated, [STAGING, REVIEW], "postgres database")
    mostly_else = STAGING + " The postgres database is backed up nightly. Deploys go out with helm."
    weak = await search(config, calibrated, [mostly_else], "roll out our helm chart to kubernetes with argo")
    # each store's closest memory: one that says the same thing, one that only half matches
    assert strong["results"][0]["score"] > 0.5
    assert 0 < weak["results"][0]["score"] < 0.6 * strong["results"][0]["score"]
    total = weak["results"][0]
    assert sum(total["channels"].values()) == pytest.approx(total["score"], abs=1e-5)


async def test_an_embedder_with_no_known_scale_keeps_the_scores_as_ranked(config):
    found = await search(config, TopicEmbedder(), [STAGING, REVIEW], "postgres database")
    assert found["results"][0]["channels"]["vector"] == pytest.approx(0.5)


def test_the_rule_counts_priors_as_no_support_nor_a_vector_below_the_models_scale():
    assert not ranking.supported({"prior": 0.3, "weighting": -0.01})
    assert ranking.supported({"prior": 0.3, "context": 0.01})
    assert ranking.supported({"bm25": 0.2})
    assert not ranking.supported({"vector": 0.3, "prior": 0.1}, 0.25, (0.3, 0.75))
    assert ranking.supported({"vector": 0.3, "bm25": 0.1}, 0.25, (0.3, 0.75))
    assert ranking.supported({"vector": 0.3}, 0.25, None)


def test_the_keyword_confidence_is_the_share_of_the_query_the_best_hit_holds():
    assert ranking.keyword_coverage("where is the terraform state stored", "Money is stored as cents") == 1 / 3
    assert ranking.keyword_coverage("which port does billing use", "billing-service runs on port 8080") == 1.0
    assert ranking.keyword_coverage("计费服务的端口", "计费服务在预发环境用 8080 端口。") == 1.0


def test_the_cli_search_says_when_nothing_matches(capsys):
    add(capsys, "We lint with ruff.")
    found = run_json(capsys, "search", "kubernetes helm chart")
    assert found["results"] == [] and "No memory matches this query" in found["note"]
    assert run_json(capsys, "search", "ruff")["note"] == ""
    code, out, err = run(capsys, "search", "kubernetes helm chart")
    assert code == 0 and "no memories match" in err
