"""The maintenance merge rule (memory/maintenance/consolidation.py): two wordings of one fact
merge, look-alikes that change a value never do, and the merged wording stays in the history."""

from __future__ import annotations

import pytest

from memory.config import Config
from memory.embed import HashEmbedder
from memory.maintenance import consolidation
from memory.maintenance.agent import run_maintenance
from memory.store import NewMemory, Store, versions

HIGH = 0.99  # cosine: vectors alone would merge every pair below


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("billing-service listens on port 8080 in staging.", "billing-service listens on port 8081 in staging."),
        ("Production deploys are allowed on Tuesdays.", "Production deploys are allowed on Thursdays."),
        ("We chose RabbitMQ over Kafka.", "We chose Kafka over RabbitMQ."),
        ("The release branch is cut every Wednesday.", "The release branch is cut every other Wednesday."),
        ("Refunds under 10,000 need manual review.", "Refunds over 10,000 need manual review."),
        ("Use ruff for formatting.", "Don't use ruff for formatting."),
        ("billing-service runs on 8080 in production.", "billing-service runs on 8080 in staging."),
        ("Access tokens expire after 15 minutes.", "Access tokens expire after 15 days."),
        ("计费服务在预发环境用 8081 端口。", "计费服务在预发环境用 8080 端口。"),
        ("生产环境只在周四发布。", "生产环境只在周二发布。"),
        ("值班同学每天 10 点前看 Datadog 告警。", "值班同学每天 10 点前看 Sentry。"),
        ("Invoice PDFs are retained for 7 years.", "发票 PDF 保留 7 个月。"),
    ],
)
def test_look_alikes_that_change_a_value_never_merge(a: str, b: str) -> None:
    assert not consolidation.same_fact(a, b, HIGH, 0.95)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Access tokens expire after 15 minutes.", "An access token is valid for 15 min."),
        ("访问令牌十五分钟后过期。", "访问令牌的有效期是 15 分钟。"),
        ("The on-call handover happens Monday at 10:00.", "On-call hands over Mondays, 10am."),
        ("计费服务的负责人是 Priya。", "Priya owns billing-service."),
        ("Use ruff for linting and formatting; black is not used.", "We lint and format with ruff, not black."),
    ],
)
def test_rewordings_with_the_same_values_merge_when_their_vectors_are_close(a: str, b: str) -> None:
    assert consolidation.same_fact(a, b, HIGH, 0.95)
    assert not consolidation.same_fact(a, b, 0.90, 0.95)


def test_numbers_are_read_in_digits_words_and_chinese() -> None:
    assert consolidation.fact_values("超过一万元的退款")["numbers"] == {"10000"}
    assert consolidation.fact_values("最多导出 10 万行")["numbers"] == {"100000"}
    assert consolidation.fact_values("retried three times, then 2,000 ms")["numbers"] == {"3", "2000"}


def test_a_merge_keeps_the_merged_wording_in_the_history(config: Config) -> None:
    with Store.open(config, HashEmbedder(64)) as store:
        a, b = store.add_many(
            [
                NewMemory("Deploys need a green CI run on the main branch", scope="global"),
                NewMemory("Deploys need a green CI run on the main branch.", scope="global"),
            ]
        )
        run_maintenance(store)
        loser = a if store.get(a.id, include_deleted=True).superseded_by else b
        winner = b if loser is a else a
        assert store.get(loser.id, include_deleted=True).superseded_by == winner.id
        chain = versions.history(store, ["global"], memory_id=winner.id)  # what memory_history shows
        merged = next(e for e in chain if e.memory.id == loser.id)
        assert merged.memory.content == loser.content and winner.id in [e.memory.id for e in chain]
