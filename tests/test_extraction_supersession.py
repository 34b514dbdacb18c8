"""Supersession through real Claude Code transcripts, one session after another (the sentences are
written for the test, not taken from the labelled sessions): a later session that changes an
interval or a timeout closes the statement holding the old one, even when it names the old value
as its reason ("30 分钟太久"); an assistant's explanation that states a value a later correction
retires is kept as history; and what is about another subject, or quotes the value only as
evidence, stays current."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from memory.app.memories import Memories
from memory.store import Store
from tests import test_extraction_phrasing as phrasing
from tests.test_extraction_phrasing import PROJECT, current, transcript


@pytest.fixture
def app(store: Store, monkeypatch: pytest.MonkeyPatch) -> Memories:
    monkeypatch.setattr(phrasing, "_ids", itertools.count(1))
    return Memories(store, PROJECT)


def sessions(app: Memories, tmp_path: Path, *said: list[tuple[str, str]]) -> None:
    """Extract each list of (role, text) as its own session, in order."""
    for n, turns in enumerate(said, 1):
        app.extract(transcript(tmp_path / f"{n}.jsonl", f"s{n}", *turns))


def history(app: Memories, word: str) -> list[dict]:
    return [m for m in app.list(limit=100, status="all")["memories"] if word in m["content"] and m["superseded_by"]]


# (earlier session, later session, words only the new statement holds, words only the old one holds):
# the change comes with an agreed proposal, so it shares few of its words with the old statement
INTERVALS = [
    (
        [
            ("user", "过期的上传文件怎么清理？"),
            ("assistant", "可以用延时队列，或者定时任务扫表。"),
            (
                "user",
                "延时队列要单独部署一套 RocketMQ，我们组没人运维，为这个不值当。 定时任务吧，每 30 分钟扫一次就行。",
            ),
        ],
        [
            (
                "assistant",
                "建议清理还是保留定时任务，只是删除改为调用对象存储的生命周期接口：新集群的桶开了版本控制，"
                "直接删对象只会留下删除标记，占用不减；生命周期规则由存储侧异步执行，失败的记一条审计日志，"
                "运维看板上能按桶查。",
            ),
            ("user", "行，就按你说的来。 扫描间隔改成 10 分钟，运营嫌 30 分钟太久。"),
        ],
        "10 分钟",
        "每 30 分钟扫一次",
    ),
    (
        [
            ("user", "how should we catch payments whose webhooks never arrive?"),
            ("assistant", "Options: poll the provider on a schedule, or ask them to replay the webhooks."),
            ("user", "Poll it every 5 minutes then, their replay API is flaky."),
        ],
        [
            (
                "assistant",
                "I'd keep polling, but only for payments still pending, and log each mismatch to the "
                "reconciliation report.",
            ),
            (
                "user",
                "Sounds good, do that. Poll every 60 seconds from now on, 5 minutes of lag was too long for support.",
            ),
        ],
        "60 seconds",
        "every 5 minutes",
    ),
]


@pytest.mark.parametrize(("first", "second", "new", "old"), INTERVALS)
def test_a_changed_interval_supersedes_the_old_one_even_when_it_names_it(app, tmp_path, first, second, new, old):
    sessions(app, tmp_path, first, second)
    now = [m["content"] for m in current(app)]
    assert any(new in m for m in now), now
    assert not any(old in m for m in now), now
    assert history(app, old), "the old statement is kept as history"


# (earlier session, later session, words of the earlier statement that must stay current)
OTHER_DURATIONS = [
    ("The session cache TTL is 10 minutes.", "The HTTP client timeout is now 30 seconds.", "10 minutes"),
    ("上传的临时文件保留 7 天。", "接口重试间隔现在改成 5 秒。", "7 天"),
]


@pytest.mark.parametrize(("first", "second", "old"), OTHER_DURATIONS)
def test_a_changed_duration_of_another_subject_leaves_the_old_one_current(app, tmp_path, first, second, old):
    sessions(app, tmp_path, [("user", first)], [("user", second)])
    now = [m["content"] for m in current(app)]
    assert any(old in m for m in now), now


# (a question, the assistant's explanation stating a value, a later correction retiring it,
#  the retired value, the new value)
EXPLAINED = [
    (
        "the worker can't reach redis locally, why?",
        "Compose publishes Redis on host port 6380 because the system Redis already holds 6379, and the "
        "worker still defaults to 6379, so every connection is refused.",
        "I moved the compose redis to 6390 yesterday, 6380 clashed with the metrics stack.",
        "6380",
        "6390",
    ),
    (
        "本地 MinIO 连不上，怎么回事？",
        "原因是端口：compose 把 MinIO 映射在宿主机 9100 上，应用默认连的是 9000，所以一直连接被拒绝。",
        "MinIO 的端口改成 9200 了，不再用 9100，那个跟监控的 exporter 冲突。",
        "9100",
        "9200",
    ),
]


@pytest.mark.parametrize(("question", "answer", "correction", "old", "new"), EXPLAINED)
def test_an_explanation_stating_a_retired_value_becomes_history(app, tmp_path, question, answer, correction, old, new):
    sessions(app, tmp_path, [("user", question), ("assistant", answer)], [("user", correction)])
    explained = [m for m in app.list(limit=100, status="all")["memories"] if m["layer"] == "experience"]
    assert explained, "the explanation was stored"
    now = [m["content"] for m in current(app)]
    assert any(new in m for m in now), now
    assert not any(old in m and new not in m for m in now), now
    assert history(app, old), "the explanation is kept as history"


def test_an_explanation_quoting_the_retired_value_as_evidence_stays_a_lesson(app, tmp_path):
    """The lesson of a cookie bug does not go out of date because the host its evidence quotes moved."""
    sessions(
        app,
        tmp_path,
        [
            ("user", "login works on the staging site but locally every call after it is 401, why?"),
            (
                "assistant",
                "The root cause is the cookie domain: the backend answers with "
                "`Set-Cookie: SID=...; Domain=api-stage.corp.example.net`, and the browser drops a cookie for "
                "another domain than localhost. Setting `cookieDomainRewrite: 'localhost'` on the dev proxy fixes it.",
            ),
        ],
        [
            (
                "user",
                "The staging backend moved to api-stage2.corp.example.net, the old api-stage.corp.example.net is retired.",
            )
        ],
    )
    lessons = [m["content"] for m in current(app, layer="experience")]
    assert any("cookieDomainRewrite" in m for m in lessons), lessons


# (a how-to learned in an earlier session, the rename said in a later one, the old name, the new name)
RENAMED = [
    (
        [
            ("user", "how do I install the local build of the cli?"),
            ("assistant", "`cargo install --path crates/shipit-cli --locked` puts `shipit` in ~/.cargo/bin."),
        ],
        "btw we renamed the cli crate last week, it's crates/ship-cli now and the binary is just `ship`.",
        "shipit",
        "ship-cli",
    ),
    (
        [
            ("user", "本地怎么打包 ingest 服务？"),
            ("assistant", "用 `make -C svc/ingest dist` 打包，产物在 dist 目录下。"),
        ],
        "ingest 服务上周改名叫 `intake` 了，代码现在在 `svc/intake`。",
        "svc/ingest",
        "svc/intake",
    ),
]


@pytest.mark.parametrize(("first", "rename", "old", "new"), RENAMED)
def test_a_rename_closes_the_how_to_that_names_the_old_name(app, tmp_path, first, rename, old, new):
    sessions(app, tmp_path, first, [("user", rename)])
    now = [m["content"] for m in current(app)]
    assert any(new in m for m in now), now
    assert not any(old in m for m in now), now
    assert history(app, old), "the old how-to is kept as history"


def test_another_services_port_closes_nothing(app, tmp_path):
    # "-service" is every service's name: reports-service's port is not billing-service's
    sessions(
        app,
        tmp_path,
        [("user", "Correction: billing-service moved to port 8082 last week, not 8081.")],
        [("user", "Priya Nair (PN) owns reports-service; it listens on 9090.")],
    )
    held = [m["content"] for m in current(app)]
    assert any("8082" in c for c in held) and any("9090" in c for c in held)


def test_a_new_owner_closes_the_owner_named_with_a_nickname_in_brackets(app, tmp_path):
    sessions(
        app,
        tmp_path,
        [
            ("user", "Priya Nair (PN) owns reports-service; it listens on 9090."),
            ("assistant", "Noted."),
            ("user", "Also, correction: Marco Rossi owns reports-service now, Priya moved to the data team."),
        ],
    )
    assert [m["content"] for m in history(app, "Priya")] == [
        "Priya Nair (PN) owns reports-service; it listens on 9090."
    ]


def test_a_port_said_as_the_services_port_is_that_services(app, tmp_path):
    # "服务端口 7070" in a sentence about notification-service is notification-service's port
    sessions(
        app,
        tmp_path,
        [("user", "notification-service 是小李负责的，服务端口 7070。")],
        [("user", "reports-service 的端口改成 7071 了。")],
        [("user", "notification-service 的端口改成 7072 了。")],
    )
    assert [m["content"] for m in history(app, "7070")] == ["notification-service 是小李负责的，服务端口 7070。"]
    assert any("7071" in m["content"] for m in current(app))


def test_a_pasted_runbooks_lines_that_still_say_what_a_correction_replaced_are_history(app, tmp_path):
    # A runbook written before the port moved and the owner changed, pasted after both corrections:
    # its lines stating 9000 and 小陈 come in as history of those corrections, the rest as current facts
    runbook = (
        "这是老王写的 CH 故障 runbook，帮我过一遍：\n\n"
        "## 连接\n"
        "连接 CH：办公网不能直连，先开跳板机转发：`ssh -N -L 9000:ch-prod-01.data.internal:9000 jump.data.internal`。\n"
        "只读账号 `ingest_ro` 在 1Password「CH readonly」，不要用写账号排查。\n\n"
        "## 扩容\n"
        "Kafka lag 超过 50 万持续 10 分钟会触发 P2 告警，先把 ingest-worker 扩到 8 个 replica，最多 12 个。\n"
        "磁盘使用率超过 80% 告警时先看 `system.parts` 里 detached 目录有没有堆积。\n\n"
        "## 联系人\n"
        "| 模块 | 负责人 | 备份 |\n|---|---|---|\n"
        "| ingest-worker | 小陈（陈思远） | 老王 |\n"
        "| CH 集群 | 老王（王磊） | 阿杰 |\n"
    )
    sessions(
        app,
        tmp_path,
        [
            ("user", "CH 集群是 `ch-prod-01.data.internal`，native 端口 9000，库是 `analytics`。"),
            ("user", "ingest-worker 的 owner 是小陈（陈思远，sychen）。"),
        ],
        [("user", "CH 的 native 端口现在改成 9440 了（老王上周开了 TLS）。")],
        [("user", "ingest-worker 现在归大刘（刘洋，yliu）负责了，小陈调去 data platform 了。")],
        [("user", runbook)],
    )
    now = [m["content"] for m in current(app)]
    assert not [c for c in now if "9000" in c or "小陈（" in c], now
    assert any("9440" in c for c in now) and any("大刘" in c for c in now)
    assert any("50 万" in c for c in now) and any("detached" in c for c in now)  # the rest of the runbook
    stale = {m["content"]: m["superseded_by"] for m in history(app, "ssh -N -L 9000")}
    assert len(stale) == 1 and next(iter(stale.values())) in {m["id"] for m in current(app) if "9440" in m["content"]}


def test_a_pasted_english_runbook_line_with_the_old_port_is_history_and_the_dry_run_says_so(app, tmp_path):
    runbook = (
        "Here's the on-call doc, can you tidy it up?\n\n"
        "## Health checks\n"
        "billing-service's health endpoint is `http://billing-service:8080/healthz`; check it before paging anyone.\n\n"
        "## Escalation\n"
        "Page the payments on-call through PagerDuty if the health check fails twice in five minutes.\n"
    )
    sessions(
        app,
        tmp_path,
        [("user", "billing-service listens on port 8080 in staging.")],
        [("user", "Correction: billing-service moved to port 8081 in staging, not 8080.")],
    )
    moved = next(m["id"] for m in current(app) if "8081" in m["content"])
    said = app.extract(transcript(tmp_path / "3.jsonl", "s3", ("user", runbook)), dry_run=True)
    health = next(c for c in said["candidates"] if "healthz" in c["content"])
    assert health["superseded_by"] == moved
    sessions(app, tmp_path, [("user", runbook)])
    now = [m["content"] for m in current(app)]
    assert not [c for c in now if "healthz" in c] and any("PagerDuty" in c for c in now), now
    assert [m["superseded_by"] for m in history(app, "healthz")] == [moved]


@pytest.mark.parametrize(
    ("first", "second", "new"),
    [
        (
            "The airflow metadata db is postgres on airflow-meta.internal:5432.",
            "btw the metadata db moved last night, its on airflow-meta-v2.internal port 6432 now (pgbouncer in front of it).",
            "airflow-meta-v2.internal",
        ),
        ("订单库在 10.0.3.21:3306 上。", "昨晚订单库迁到了新机器，现在是 10.0.3.50:3306。", "10.0.3.50"),
    ],
)
def test_a_change_told_with_when_it_happened_still_supersedes(app, tmp_path, first, second, new):
    # a blind trial: "last night" made the correction a story of the day, and nothing was stored
    sessions(app, tmp_path, [("user", first)], [("user", second)])
    now = [m["content"] for m in current(app)]
    assert any(new in c for c in now) and first not in now, now


def test_numbered_news_in_one_message_are_each_their_own(app, tmp_path):
    # a blind trial: "1）…归小林管了；2）…换成 saphyr 了" became one decision, its owner change the pick's
    # "reason", and the owner said before stayed current
    sessions(
        app,
        tmp_path,
        [("user", "release 归老王管（王磊，@wlei），crates.io 的 token 在他那。")],
        [
            (
                "user",
                "hi，几件事先同步下：1）release 现在归小林（林晓 @linxiao）管了，老王调去做 infra 了；"
                "2）yaml-rust2 上周被阿杰换成 saphyr 了，saphyr 现在 API 稳定了。",
            )
        ],
    )
    now = current(app)
    owner = [m for m in now if "归小林" in m["content"]]
    assert owner and all("saphyr" not in m["content"] for m in owner), [m["content"] for m in now]
    assert not [m for m in now if "归老王管" in m["content"]], [m["content"] for m in now]


def test_a_pasted_line_naming_a_pick_a_later_switch_replaced_is_history(app, tmp_path):
    readme = (
        "这是现在的 README，帮我看看哪里过时了：\n\n"
        "## 开发\n"
        "YAML 解析用 yaml-rust2（需要 Marker 里的行列号）。\n\n"
        "## 测试\n"
        "测试用 `cargo nextest run`，snapshot 测试用 insta，改了输出之后跑 `cargo insta review`。\n"
    )
    sessions(
        app,
        tmp_path,
        [
            ("user", "YAML 用哪个库解析？"),
            ("assistant", "可选：1. yaml-rust2，有 Marker 行列号；2. serde_yml，争议比较大。我倾向 yaml-rust2。"),
            ("user", "YAML 解析就用 yaml-rust2 吧，我们确实要 line/col。"),
        ],
        [("user", "YAML 解析库换了：yaml-rust2 上周被阿杰换成 saphyr 了，saphyr 现在 API 稳定了。")],
        [("user", readme)],
    )
    now = [m["content"] for m in current(app)]
    assert not [c for c in now if "yaml-rust2（需要" in c], now
    assert any("saphyr" in c for c in now) and any("cargo insta review" in c for c in now), now


@pytest.mark.parametrize(
    ("first", "second", "old", "new"),
    [
        # a held-out blind trial's corrections that closed nothing (or the wrong memory)
        (
            "Plans get written to the route_plans table.",
            "fyi marta renamed the route_plans table to planned_routes in yesterdays migration, so our queries need updating",
            "route_plans table.",
            "planned_routes",
        ),
        (
            "核心表是 asset_record，审批记录在 approval_log。",
            "asset_record 表也改名成 asset_item 了，磊哥上周做的。",
            "核心表是 asset_record",
            "asset_item",
        ),
        (
            "Tomasz Wójcik — everyone calls him Tomek, github twojcik — owns the OSRM integration.",
            "Tomek handed OSRM over to PJ, so she owns the OSRM integration now; and the redis cache moved to "
            "redis-cache-02.internal:6380",
            "Tomasz Wójcik",
            "handed OSRM over to PJ",
        ),
        (
            "Django 4.2 + DRF，DB 是 MySQL 8，在 10.20.3.15:3306。",
            "对了，数据库迁到 10.20.5.21 了，端口还是 3306；另外审批流现在归小李管了，老王调去做数据平台了",
            "10.20.3.15",
            "10.20.5.21",
        ),
    ],
)
def test_a_rename_a_handover_and_two_changes_in_one_message_supersede(app, tmp_path, first, second, old, new):
    sessions(app, tmp_path, [("user", first)], [("user", second)])
    now = [m["content"] for m in current(app)]
    assert any(new in c for c in now) and not any(old in c for c in now), now


def test_a_team_intro_keeps_the_others_when_one_owner_changes(app, tmp_path):
    sessions(
        app,
        tmp_path,
        [
            (
                "user",
                "介绍下团队：王建国（大家叫老王）负责审批流 workflow 模块；李晓（小李）管前端 Vue 那块；陈磊是 DBA。",
            )
        ],
        [("user", "审批流现在归小李管了，老王调去做数据平台了。")],
    )
    now = [m["content"] for m in current(app)]
    assert not any("王建国（大家叫老王）负责审批流" in c for c in now), now
    assert any("李晓（小李）管前端 Vue 那块" in c for c in now), now


def test_a_port_change_leaves_a_pasted_line_about_the_rest_of_the_old_fact_current(app, tmp_path):
    # a held-out blind trial: the closed fact's other values (the database, 15) made runbook lines about the
    # database and the new redis host "history" of a port change
    runbook = (
        "runbook for review:\n\n"
        "## Overview\n"
        "Database: PostgreSQL 15 + PostGIS, database `routing`, main table `planned_routes`.\n\n"
        "## Cache\n"
        "Distance matrices are cached in Redis at redis-cache-02.internal:6380 with a 15 minute TTL.\n\n"
        "## Service\n"
        "A Go 1.22 service, http on :8090 behind the ingress.\n"
    )
    sessions(
        app,
        tmp_path,
        [("user", "go 1.22, http on :8090, postgres 15 + postgis on db-routes-01.internal:5432, db `routing`.")],
        [("user", "the service is on port 8095 now, 8090 clashed with the metrics sidecar")],
        [("user", runbook)],
    )
    now = [m["content"] for m in current(app)]
    assert any("database `routing`" in c for c in now) and any("redis-cache-02" in c for c in now), now
    assert not any("http on :8090 behind" in c for c in now), now


def test_a_pasted_line_with_the_port_a_correction_stored_by_hand_replaced_is_history(app, tmp_path):
    # a memory stored by hand carries no `replaces`: its words say what it replaced ("…, not 5432")
    app.add("orders-db listens on port 5432 in staging.", occurred_at="2026-01-10T09:00:00Z")
    fixed = app.add("Correction: orders-db moved to port 6543 in staging, not 5432.")["memory"]["id"]
    runbook = (
        "Here's our orders-db runbook:\n\n## Connect\npsql -h orders-db.staging.internal -p 5432 -U app orders — the "
        "read-only role is `orders_ro`.\n\n"
        "## Escalation\nPage the orders on-call through PagerDuty if replication lag stays above 30 s.\n"
    )
    sessions(app, tmp_path, [("user", runbook)])
    assert [m["superseded_by"] for m in history(app, "-p 5432")] == [fixed]
    assert any("PagerDuty" in m["content"] for m in current(app))
