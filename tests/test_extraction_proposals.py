"""Defects found by a blind trial of the heuristic extractor, each held in general form through a real
Claude Code transcript (the sentences are written for the test, not taken from the labelled sessions):
an option floated and never agreed to is stored as nothing; an assistant's proposal agreed to in a word
is the user's decision with what it chose, over what and why; Chinese statements of team facts and rules
are kept without a Latin word or a number, and Chinese chit-chat is not; a later session that replaces a
tool or a port closes the earlier fact."""

from __future__ import annotations

import itertools

import pytest

from memory.app.memories import Memories
from memory.extraction import heuristic as H
from memory.store import Store
from tests import test_extraction_phrasing as phrasing
from tests.test_extraction_phrasing import PROJECT, current, transcript, turns


@pytest.fixture
def app(store: Store, monkeypatch: pytest.MonkeyPatch) -> Memories:
    # the transcripts' minutes count from 0 in each test, so a later session is never stamped earlier
    monkeypatch.setattr(phrasing, "_ids", itertools.count(1))
    return Memories(store, PROJECT)


def stored(app: Memories, tmp_path, *said: tuple[str, str]) -> list[dict]:
    app.extract(transcript(tmp_path / "s.jsonl", "s1", *said))
    return current(app)


# -- 1. a proposal nobody agreed to is no memory ------------------------------------------------------

FLOATED = [
    # the assistant floats an option with its case; the user says nothing about it, or turns it down
    (
        ("user", "the session lookups are slow under load, any ideas?"),
        ("assistant", "We could use Redis for this, because it keeps sessions in memory and fixes the slow lookups."),
    ),
    (
        ("user", "订单事件现在靠轮询，延迟有点高。"),
        ("assistant", "要不要用 Kafka？因为现在的轮询太慢了，改成消息队列可以解决延迟。"),
        ("user", "先不用，我再想想。"),
    ),
    (
        ("assistant", "可以考虑换成 Kafka，因为它支持回放，积压的问题也能解决。"),
        ("user", "算了，先不动。"),
    ),
    (("assistant", "这样会有风险。建议把事件先写进 Kafka，因为回调要求 3 秒内返回，否则会重试。"),),
    # the user floats one themselves, or asks for an opinion on it
    (("user", "下发这块我们一直是直接写 Redis，有人提过改走 Kafka，你怎么看。"),),
    (("user", "We have always written straight to Redis; someone suggested Kafka, what do you think."),),
    (("user", "we could use Redis for this."),),
    (("user", "Maybe we should switch to Kafka because polling is too slow."),),
    (("user", "要不要用 Kafka，因为现在轮询太慢了"),),
    (("user", "我倾向把限流放到 Redis 里，按 API key 做 token bucket。"),),
]


@pytest.mark.parametrize("said", FLOATED)
def test_an_option_floated_and_never_agreed_to_is_stored_as_nothing(app, tmp_path, said):
    now = stored(app, tmp_path, *said)
    assert not [m["content"] for m in now if "Redis" in m["content"] or "Kafka" in m["content"]]


def test_an_option_turned_down_with_a_reason_is_the_decision_not_to():
    # (a bare "not now" or "我再想想" decides nothing, above; with its reason it is what keeps the option from
    # being offered again as new)
    found = H.extract(
        turns(
            ("user", "the session lookups are slow under load, any ideas?"),
            ("assistant", "I'd suggest adding a Redis cache in front of Postgres, since that fixes the round trips."),
            ("user", "hmm, not now. let's not add another service."),
        ),
        scope="/p/x",
    )
    assert [(c.layer, c.content) for c in found] == [
        ("decision", "Not now: adding a Redis cache in front of Postgres, because let's not add another service.")
    ]


def test_the_diagnosis_before_a_floated_fix_is_kept_without_the_fix(app, tmp_path):
    now = stored(
        app,
        tmp_path,
        ("user", "why are the product pages slow?"),
        (
            "assistant",
            "The pages are slow because every request hits Postgres. We could add a Redis cache to fix that.",
        ),
    )
    assert [m["layer"] for m in now] == ["experience"]
    assert "hits Postgres" in now[0]["content"] and "Redis" not in now[0]["content"]


# -- 3. "I suggest X over Y because Z", then "ok" --------------------------------------------------

PROPOSED = "The retries pile up because the cron job reruns everything. I suggest Temporal over cron because it retries single activities."
PROPOSED_ZH = "现在重试会堆积，因为定时任务每次全量重跑。我建议用 Temporal 而不是 cron，因为它能单独重试失败的步骤。"


@pytest.mark.parametrize(
    ("proposal", "answer", "why"),
    [
        (PROPOSED, "ok", "single activities"),
        (PROPOSED, "go ahead", "single activities"),
        (PROPOSED, "Sounds good.", "single activities"),
        (PROPOSED, "go with Temporal", "single activities"),
        (PROPOSED_ZH, "好", "单独重试"),
        (PROPOSED_ZH, "嗯，可以", "单独重试"),
        (PROPOSED_ZH, "就按你说的来", "单独重试"),
    ],
)
def test_a_proposal_agreed_to_in_a_word_is_the_decision_with_its_choice_alternative_and_reason(
    app, tmp_path, proposal, answer, why
):
    now = stored(
        app, tmp_path, ("user", "the nightly retries keep piling up."), ("assistant", proposal), ("user", answer)
    )
    [d] = [m for m in now if m["layer"] == "decision"]
    assert "Temporal" in d["content"] and d["metadata"]["chosen"] == "Temporal"
    assert d["metadata"]["alternatives"] == ["cron"]
    assert why in d["metadata"]["rationale"]
    assert not [m for m in now if m["layer"] == "experience" and "Temporal" in m["content"]]
    assert not d["content"].startswith((" ", "(")), d["content"]


# -- 2. Chinese team facts and rules without a Latin word or a number -----------------------------


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        (
            "Our release process is to verify on staging first, then roll out gradually.",
            "我们的发布流程是先在预发环境验证，再灰度到生产。",
        ),
        ("Code review needs at least two approvals.", "代码评审至少需要两个人同意。"),
        ("Every merge request needs a reviewer from the platform team.", "每个合并请求都需要平台组的人审核。"),
        ("Database changes are reviewed by the DBA team.", "数据库变更由运维组审核。"),
        ("The test environment resets its data every night.", "测试环境每天凌晨会重置数据。"),
        ("Production logs are kept for thirty days.", "生产环境的日志保留三十天。"),
        ("No releases on Friday afternoons.", "周五下午不发版。"),
    ],
)
def test_a_team_fact_or_rule_is_kept_in_either_language_without_a_name_or_number(app, tmp_path, en, zh):
    for n, said in enumerate((en, zh)):
        app.extract(transcript(tmp_path / f"{n}.jsonl", f"s{n}", ("user", said)))
    kept = [m["content"] for m in current(app) if m["layer"] == "fact"]
    assert kept == [en, zh] or sorted(kept) == sorted([en, zh]), kept


@pytest.mark.parametrize(
    "said",
    [
        "好的，谢谢",
        "我看看",
        "这个有点奇怪",
        "嗯，明白了",
        "我觉得可以",
        "今天先到这里",
        "这里的逻辑有点绕。",
        "由于缓存没处理好，页面有点慢。",
    ],
)
def test_chinese_chit_chat_is_still_not_stored(app, tmp_path, said):
    assert stored(app, tmp_path, ("user", said)) == []


# -- 4. a later session replaces a tool or a port ---------------------------------------------------

# (earlier session, later session, a word of the new fact, a word only the old fact holds)
REPLACED = [
    ("We use Jenkins for CI.", "We moved from Jenkins to GitHub Actions.", "GitHub Actions", "use Jenkins"),
    ("CI runs on Jenkins.", "Jenkins is gone, we use GitHub Actions now.", "GitHub Actions", "runs on Jenkins"),
    ("We deploy with Ansible.", "Ansible is gone, we deploy with Terraform now.", "Terraform", "with Ansible."),
    ("We use Sentry for error tracking.", "We replaced Sentry with Rollbar.", "Rollbar", "for error tracking"),
    ("Logs are shipped with Fluentd.", "We switched log shipping from Fluentd to Vector.", "Vector", "shipped with"),
    ("消息队列用 RabbitMQ。", "消息队列现在改用 Kafka 了。", "Kafka", "用 RabbitMQ"),
    ("接口文档用 Swagger 生成。", "接口文档现在改用 Apifox 了，Swagger 不用了。", "Apifox", "Swagger 生成"),
    ("打包用 webpack。", "打包已经从 webpack 换成 Vite 了。", "Vite", "用 webpack"),
    ("The API listens on port 8080.", "The API port is 9090 now.", "9090", "8080"),
    ("The API listens on port 8080.", "API moved to port 9090.", "9090", "8080"),
    ("本地服务跑在 8000 端口。", "本地端口改成 8001 了。", "8001", "8000"),
    ("Our CI is Jenkins.", "We're on GitHub Actions now, Jenkins was shut down.", "GitHub Actions", "CI is Jenkins"),
    ("Error tracking goes to Sentry.", "Sentry was replaced by Rollbar last sprint.", "Rollbar", "goes to Sentry"),
    ("代码托管在 GitLab 上。", "代码已经迁到 GitHub 了，GitLab 不用了。", "GitHub", "托管在 GitLab"),
    ("包管理用 yarn。", "不用 yarn 了，现在统一用 pnpm。", "pnpm", "包管理用 yarn"),
    ("定时任务用 crontab 跑。", "crontab 已经废弃了，定时任务现在都走 Airflow。", "Airflow", "用 crontab"),
    ("Redis runs on port 6379 in dev.", "Dev Redis is on 6380 now.", "6380", "6379"),
    ("The metrics endpoint is on port 9100.", "Metrics moved to 9464.", "9464", "9100"),
    ("订单服务端口是 8080。", "订单服务现在用 8081 端口了。", "8081", "8080"),
    ("We use MySQL 5.7 in production.", "Production is on MySQL 8.0 now.", "8.0", "5.7"),
    (
        "Frontend is built with webpack.",
        "We dropped webpack, the frontend builds with Vite now.",
        "Vite",
        "with webpack",
    ),
    (
        "Secrets live in Vault.",
        "We moved secrets from Vault to AWS Secrets Manager.",
        "Secrets Manager",
        "live in Vault",
    ),
    ("日志用 ELK 收集。", "日志收集现在改用 Loki 了。", "Loki", "ELK"),
]


@pytest.mark.parametrize(("first", "second", "new", "old"), REPLACED)
def test_a_replaced_tool_or_port_in_a_later_session_closes_the_old_fact(app, tmp_path, first, second, new, old):
    app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", first)))
    assert any(old in m["content"] for m in current(app)), "the old fact was stored"
    app.extract(transcript(tmp_path / "2.jsonl", "s2", ("user", second)))
    now = [m["content"] for m in current(app)]
    assert any(new in m for m in now), now
    assert not any(old in m for m in now), now


# -- options laid out, then one taken without an agreement word ------------------------------------


@pytest.mark.parametrize(
    ("options", "answer", "chosen", "over", "why"),
    [
        (
            "Options: keep Jest and speed it up with SWC, or move the unit tests to Vitest.",
            "Jest has been a pain with ESM for months. take Vitest, drop Jest.",
            "Vitest",
            "Jest",
            "pain with ESM",
        ),
        (
            "两种路子：\n- 自建 MinIO：数据在自己机房，运维成本高。\n- 直接用阿里云 OSS：省事，按量付费。",
            "Security won't allow customer files outside our own racks. So we run MinIO ourselves. 先上单节点。",
            "MinIO",
            None,
            "Security",
        ),
    ],
)
def test_an_option_taken_by_an_order_or_a_so_we_is_a_decision(app, tmp_path, options, answer, chosen, over, why):
    now = stored(app, tmp_path, ("assistant", options), ("user", answer))
    [d] = [m for m in now if m["layer"] == "decision"]
    assert chosen in d["content"] and why in d["content"]
    assert over is None or d["metadata"]["alternatives"] == [over]


@pytest.mark.parametrize("answer", ["we need to check the numbers first.", "we were counting with tiktoken before."])
def test_talk_after_options_that_takes_none_is_no_decision(app, tmp_path, answer):
    options = "Options: load each vendor's tokenizer locally, or record the usage object the upstream returns."
    assert not [m for m in stored(app, tmp_path, ("assistant", options), ("user", answer)) if m["layer"] == "decision"]


# -- more ways a proposal and its agreement are said ------------------------------------------------


@pytest.mark.parametrize(
    ("said", "chosen", "over", "why"),
    [
        (
            (
                (
                    "assistant",
                    "I recommend switching the job queue from RQ to Dramatiq because RQ has no retry backoff.",
                ),
                ("user", "Sounds reasonable, let's do it."),
            ),
            "Dramatiq",
            "RQ",
            "retry backoff",
        ),
        (
            (
                ("assistant", "我建议日志采集换成 Vector，而不是继续用 Filebeat，因为 Vector 资源占用更低。"),
                ("user", "行"),
            ),
            "Vector",
            "Filebeat",
            "资源占用",
        ),
        (
            (
                ("assistant", "Should we use Postgres or MySQL for the billing service?"),
                ("user", "postgres, the team knows it better"),
            ),
            "postgres",
            None,
            "team knows it",
        ),
        (
            (
                ("assistant", "Option A: keep Celery. Option B: move the long workflows to Temporal."),
                ("user", "B"),
            ),
            "B",
            None,
            None,
        ),
        ((("user", "我们最后选了 ClickHouse，没用 Druid，运维简单很多。"),), "ClickHouse", "Druid", None),
        (
            (
                (
                    "assistant",
                    "I'd store the uploads in S3 rather than on the local disk, since the pods are ephemeral.",
                ),
                ("user", "makes sense"),
            ),
            "S3",
            None,
            "ephemeral",
        ),
        (
            (
                (
                    "assistant",
                    "两个方案：A 是在网关层做缓存，B 是在服务内用 Caffeine 做本地缓存。我推荐 B，因为命中率更高。",
                ),
                ("user", "按 B 来"),
            ),
            "Caffeine",
            None,
            "命中率",
        ),
        (
            (("user", "最终方案：消息用 RocketMQ 事务消息，不用本地消息表，因为运维已经有 RocketMQ 集群。"),),
            "RocketMQ",
            "本地消息表",
            "运维",
        ),
        (
            (
                (
                    "user",
                    "Let's stick with Postgres full-text search rather than adding Elasticsearch; the catalog is small.",
                ),
            ),
            "Postgres",
            "Elasticsearch",
            None,
        ),
    ],
)
def test_a_proposal_or_choice_in_other_words_keeps_what_was_chosen_over_what(app, tmp_path, said, chosen, over, why):
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert chosen in d["content"]
    assert over is None or d["metadata"]["alternatives"] == [over]
    assert why is None or why in d["metadata"]["rationale"]
    if chosen == "B":
        assert "Temporal" in d["content"], "a pick by letter keeps the option it names"


def test_a_question_with_options_answered_by_an_order_is_no_decision(app, tmp_path):
    said = (("assistant", "Do you want me to fix the test or leave it for now?"), ("user", "fix it"))
    assert not [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]


@pytest.mark.parametrize(
    ("said", "value"),
    [
        ("bump the node version to 20.11 then, nobody runs 18 anymore", "20.11"),
        ("move the base image to python 3.12.4 then, the CVE fix is only in there", "3.12.4"),
    ],
)
def test_an_order_that_settles_a_version_then_is_a_decision(app, tmp_path, said, value):
    [d] = [m for m in stored(app, tmp_path, ("user", said)) if m["layer"] == "decision"]
    assert value in d["content"]


def test_the_users_own_leaning_agreed_to_and_settled_is_a_decision(app, tmp_path):
    said = (
        ("user", "我倾向把限流放到 Redis 里，按 API key 做 token bucket，因为线上有 6 个副本。"),
        ("assistant", "同意，Redis 的 token bucket 能让 6 个副本共享额度。"),
        ("user", "好，就这么办"),
    )
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert "Redis" in d["content"] and "token bucket" in d["content"]


@pytest.mark.parametrize("answer", ["不用，crontab 够了", "no, the crontab is fine."])
def test_a_proposal_turned_down_leaves_nothing(app, tmp_path, answer):
    said = (("assistant", "建议把定时任务迁到 XXL-JOB，因为现在的 crontab 没有失败告警。"), ("user", answer))
    assert stored(app, tmp_path, *said) == []


def test_a_correction_after_a_proposal_is_still_kept(app, tmp_path):
    said = (
        ("assistant", "I'd call the API with requests here."),
        ("user", "No, use `httpx` instead of requests here."),
    )
    assert [m["content"] for m in stored(app, tmp_path, *said)] == ["Use `httpx` instead of requests here."]


# -- a blind trial's decisions (2026-12-05, trial 12) ---------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kept", "over"),
    [
        (
            (
                (
                    "user",
                    "Question: should we switch the BFF from REST to GraphQL? Tommy keeps saying the screens overfetch.",
                ),
                (
                    "assistant",
                    "I'd be careful here. The BFF already shapes responses per screen, so a `fields` param fixes it.",
                ),
                ("user", "ok fair, let's keep REST for now and just add the `fields` param for the cart."),
            ),
            "REST",
            "GraphQL",
        ),
        (
            (
                (
                    "user",
                    "另外想讨论个事：要不要把 Kafka 换成 Pulsar？data platform 那边有人在推，说 Pulsar 的多租户更好。",
                ),
                ("assistant", "我的看法是现在换不划算：我们只有一个消费方，团队也没人运维过 Pulsar。"),
                ("user", "哦这样，那算了，Kafka 先不动。"),
            ),
            "Kafka",
            "Pulsar",
        ),
    ],
)
def test_a_switch_asked_about_and_let_go_after_a_push_back_keeps_the_old_way(app, tmp_path, said, kept, over):
    memories = stored(app, tmp_path, *said)
    [d] = [m for m in memories if m["layer"] == "decision"]
    assert d["metadata"]["chosen"] == kept and d["metadata"]["alternatives"] == [over]
    assert not [m for m in memories if "有人在推" in m["content"]]  # the case for the switch went with it


def test_a_plan_put_for_an_opinion_after_a_lead_and_agreed_is_a_decision(app, tmp_path):
    said = (
        ("user", "那说到冷存储：我想把超过 90 天的数据通过 TTL 移到 OSS 上（配一个 s3 disk），你觉得可以吗？"),
        ("assistant", "可以，这个方案挺合适：events_local 本来就按月分区，加一句 TTL 就行。"),
        ("user", "行，就这么办，我周五找老王配 disk。"),
    )
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert "OSS" in d["content"] and "90 天" in d["content"]


def test_the_users_own_proposal_agreed_to_is_what_a_later_yes_settles_not_the_details_the_reply_adds(app, tmp_path):
    said = (
        ("user", "What if we cache catalog responses in Redis in the BFF with a 5-minute TTL?"),
        ("assistant", "Good idea. I'd key entries as `catalog:v1:<categoryId>:<page>`."),
        ("user", "yep, do it, skip stock."),
    )
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert "Redis" in d["content"] and "5-minute TTL" in d["content"]


def test_options_listed_and_one_picked_with_lets_just_is_a_decision(app, tmp_path):
    said = (
        (
            "user",
            "Options I see are fastlane match, doing it by hand in the Apple portal, or EAS credentials. "
            "Let's just use fastlane match, we already have fastlane for the build lanes.",
        ),
    )
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert "fastlane match" in d["content"]


def test_declining_a_shortcut_is_not_the_proposal_a_yes_agrees_to(app, tmp_path):
    said = (
        ("user", "the cart test is red, can you look?"),
        (
            "assistant",
            "Fix: carry money as integer cents end to end. I'd rather not paper over it with `toFixed(2)` in the test.",
        ),
        ("user", "agreed, do cents."),
    )
    assert not [m for m in stored(app, tmp_path, *said) if "toFixed" in m["content"] and m["layer"] == "decision"]


def test_a_rule_naming_only_what_not_to_use_is_a_rule_not_a_choice(app, tmp_path):
    [m] = stored(app, tmp_path, ("user", "不要用 ingest 的写账号做排查查询。"))
    assert m["layer"] == "fact"


def test_the_sentence_after_a_pick_that_speaks_against_an_option_offered_is_its_reason(app, tmp_path):
    said = (
        (
            "assistant",
            "Three realistic options:\n\n1. **Redux Toolkit (+ RTK Query)**: very structured, the most boilerplate.\n"
            "2. **Zustand + React Query**: tiny API, caching for free.\n3. **Context + useReducer**: no dependency.",
        ),
        ("user", "let me check with Tommy first, brb"),
        (
            "user",
            "ok talked to Tommy. We'll go with Zustand + React Query. RTK is too much boilerplate for the three of us and we don't need time-travel debugging.",
        ),
    )
    memories = stored(app, tmp_path, *said)
    [d] = [m for m in memories if m["layer"] == "decision"]
    assert "boilerplate" in d["metadata"]["rationale"] and len(memories) == 1


def test_an_edit_offered_and_asked_for_is_a_task_not_a_decision(app, tmp_path):
    # a blind trial: "I'd update step 4." -> "Update it in docs/release-runbook.md." was stored as a decision
    now = stored(
        app,
        tmp_path,
        ("user", "step 4 of the release runbook still says to download the provisioning profile by hand"),
        ("assistant", "That step is out of date now that signing goes through fastlane match. I'd update step 4."),
        ("user", "Update it in docs/release-runbook.md."),
    )
    assert not [m["content"] for m in now if m["layer"] == "decision"], [m["content"] for m in now]


def test_a_switch_talked_out_of_later_closes_no_earlier_decision(app, tmp_path):
    # a blind trial: the push back's "not now" marked a change, and the kept-as-is decision closed the
    # earlier pick of how dbt runs in Airflow
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "how should we run dbt from airflow? bash operator, dbt cloud, or cosmos?"),
            (
                "assistant",
                "For a team already running its own Airflow on k8s I'd lean towards cosmos: one task per model, "
                "with per-model retries.",
            ),
            ("user", "Lets go with cosmos. Dbt cloud is overkill for us and costs money."),
        )
    )
    app.extract(
        transcript(
            tmp_path / "2.jsonl",
            "s2",
            ("user", "Q: should we switch to dagster? the dbt integration looks nicer"),
            (
                "assistant",
                "I wouldn't, at least not now: cosmos already gives us what Dagster's dbt integration is praised "
                "for, and a move means rewriting the 14 existing DAGs on k8s.",
            ),
            ("user", "ok fair, sticking with airflow. not worth the migration"),
        )
    )
    decisions = [m["content"] for m in current(app, "decision")]
    assert any("Lets go with cosmos" in d for d in decisions), decisions


@pytest.mark.parametrize(
    ("said", "layer", "holds"),
    [
        # a blind trial's three: an agreement stored as the assistant's experience, a switch let go stored as a
        # fact with no object, a greeting with a task in it stored as a decision
        (
            [
                ("user", "报错输出太丑了，有什么好办法？"),
                (
                    "assistant",
                    "两个方向：1. miette：Diagnostic + SourceSpan，带源码片段；2. 自己拼 ansi 颜色。我建议 miette。",
                ),
                ("user", "赞成用 miette。 CI 里记得关颜色。"),
            ],
            "decision",
            "miette",
        ),
        (
            [
                ("user", "要不要把扫描换成 tokio 异步？"),
                ("assistant", "我不太建议：lgx 的瓶颈在解析，是 CPU 密集型，tokio 帮不上忙，用 rayon 并行就够了。"),
                ("user", "行 那不换了，上 rayon。"),
            ],
            "decision",
            "上 rayon",
        ),
        (
            [
                (
                    "user",
                    "hi，新项目 lgx，一个 Rust 写的 CLI，用来 lint 前端的 i18n locale 文件。 先帮我看下 repo 结构吧。",
                )
            ],
            "fact",
            "Rust 写的 CLI",
        ),
    ],
)
def test_agreeing_letting_a_switch_go_and_asking_for_help_in_chinese(app, tmp_path, said, layer, holds):
    now = stored(app, tmp_path, *said)
    assert [m["layer"] for m in now if holds in m["content"]] == [layer], [(m["layer"], m["content"]) for m in now]


@pytest.mark.parametrize(
    ("said", "chosen"),
    [
        # a held-out trial: a pick by letter or number turns after the list, or said as someone else's, named nothing
        (
            [
                ("user", "the routing layer is raw net/http and getting messy. what are the options"),
                (
                    "assistant",
                    "Three realistic options:\n\n(a) **chi** — small and idiomatic, stdlib-compatible middleware.\n"
                    "(b) **gin** — fast, but handlers take its own context.\n(c) **stdlib ServeMux** — no dependency.",
                ),
                ("user", "hmm lemme think abt it, Tomek might have opinions."),
                ("assistant", "Sure."),
                ("user", "btw Tomasz Wójcik, everyone calls him Tomek, owns the OSRM integration."),
                ("assistant", "Got it, Tomek owns the OSRM integration."),
                ("user", "heres the staging url if u need it: https://routes.staging.internal"),
                ("assistant", "Thanks."),
                (
                    "user",
                    "ugh the coffee machine is broken again. anyway. talked to tomek, go with (a), gin is overkill",
                ),
            ],
            "chi",
        ),
        (
            [
                ("user", "SSO 怎么接？"),
                (
                    "assistant",
                    "两个方案：\nA. django-auth-ldap 直连 AD：要存 bind 密码。\nB. 接公司的 Keycloak（OIDC）：标准协议，自带 MFA。",
                ),
                ("user", "我问下老王。"),
                ("assistant", "好的。"),
                ("user", "老王说选 B 吧，A 要存 AD 的 bind 密码，安全那边肯定不批。"),
            ],
            "接公司的 Keycloak",
        ),
    ],
)
def test_a_pick_by_letter_turns_after_the_list_is_the_decision_on_that_item(app, tmp_path, said, chosen):
    [d] = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert d["metadata"]["chosen"].startswith(chosen), d


@pytest.mark.parametrize(
    ("said", "holds"),
    [
        # a held-out trial: a plan the user floated, agreed to by the assistant, stored nothing or a rule
        (
            [
                (
                    "user",
                    "what if we cache the distance matrices in redis, like 15 min TTL? same depots get planned a lot",
                ),
                ("assistant", "Good idea, that works well here: a depot's matrix barely changes within 15 minutes."),
            ],
            "15 min TTL",
        ),
        (
            [
                ("user", "资产编号暴露给前端别用自增 id 了吧，我想用 ULID，前端也好排序。"),
                (
                    "assistant",
                    "同意，这个思路好：自增 id 会泄露数据量，还能被遍历。我加一个 `public_id` 字段（ULID）。",
                ),
            ],
            "ULID",
        ),
    ],
)
def test_a_plan_the_user_floats_and_the_assistant_agrees_to_is_a_decision(app, tmp_path, said, holds):
    now = stored(app, tmp_path, *said)
    assert [m["layer"] for m in now if holds in m["content"]] == ["decision"], [(m["layer"], m["content"]) for m in now]


def test_a_letter_after_new_inline_options_picks_from_them_not_the_older_list(app, tmp_path):
    said = (
        ("user", "Expedia keeps failing during their maintenance windows. options?"),
        (
            "assistant",
            "Two ways:\n1. Pause the Expedia queue automatically when their status API reports maintenance.\n"
            "2. Keep retrying with backoff.",
        ),
        ("user", "1, pause it. what about the messages already dead-lettered?"),
        (
            "assistant",
            "Do you want to (a) republish them as-is, or (b) rebuild the current state from the DB and push that?",
        ),
        ("user", "(b). Replaying as-is would push stale rates over newer ones."),
    )
    decisions = [m for m in stored(app, tmp_path, *said) if m["layer"] == "decision"]
    assert any(
        "rebuild" in (m["metadata"].get("chosen") or m["content"]) and "(b)" in m["content"] for m in decisions
    ), [m["content"] for m in decisions]
    assert not any("(b)" in m["content"] and "Pause the Expedia queue" in m["content"] for m in decisions)
