"""A document pasted into a session (a runbook, a design doc) is kept whole, as one memory the store
cuts into parts, not read line by line; what the user says around it is read as usual; the values
in it a correction retired are noted, and shown wherever it is quoted. Through `Memories.extract`
on transcripts in Claude Code's line shape, and through the CLI and the prompt hook's text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_extraction_sessions import PROJECT, current, transcript

from memory import config as config_mod
from memory.app.memories import Memories
from memory.extraction import rules
from memory.retrieval import context
from memory.store import Store

RUNBOOK = """# Orders DB failover runbook

Owner: Dana Kim (payments platform). Last reviewed 2026-10-01.

## Before you start
- Announce in #orders-oncall.
- Check replication lag on the Grafana board "orders-db / replication".
- Make sure nobody is running a migration.

## Steps
1. Freeze writes: `kubectl -n orders scale deploy/orders-api --replicas=0`.
2. Confirm the replica caught up: `psql -h orders-db-replica.prod.internal -p 5433 -c "select 1"`.
3. Promote the replica: `patronictl -c /etc/patroni.yml failover orders --candidate orders-db-2`.
4. Point pgbouncer at the new primary: edit `pgbouncer.ini`, then `systemctl reload pgbouncer`.
5. Scale the API back: `kubectl -n orders scale deploy/orders-api --replicas=6`.
6. Watch the error rate for 15 minutes before you call it done.

## Services
| service | host | port | owner |
|---|---|---|---|
| orders-api | orders-api.prod.internal | 8080 | Dana |
| pgbouncer | pgb-1.prod.internal | 6432 | Wei |

## Rollback
If the new primary misbehaves, fail back with `patronictl failover orders --candidate orders-db-1`
and page the DBA on-call through PagerDuty.
"""

FABU = """## 发布手册（订单服务）

负责人：老周（周建国）。每周二、周四晚上 8 点以后发布。

### 一、准备
1. 在 #release 频道里说一声，确认没有人在跑数据迁移。
2. 检查 Grafana 上「订单服务 / 错误率」面板，错误率要低于 0.5%。
3. 确认 Jenkins 上 order-service 的主干构建是绿的。

### 二、灰度
1. 先发 canary：`helm upgrade order-service ./chart -f values-canary.yaml`。
2. canary 跑 15 分钟，盯住 P99 延迟，不能超过 300ms。
3. 没问题再全量：`helm upgrade order-service ./chart -f values-prod.yaml`。

### 三、回滚
1. `helm rollback order-service` 回到上一个版本。
2. 在 #release 里说明原因，并且在事故表里登记。
3. 如果数据库迁移已经跑了，先找 DBA 小林确认能不能回滚迁移。

### 四、联系人
| 角色 | 人 | 电话分机 |
|---|---|---|
| 发布负责人 | 老周 | 8021 |
| DBA | 小林 | 8034 |
"""


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, PROJECT)


def test_a_pasted_runbook_is_one_memory_and_the_words_around_it_are_read_as_usual(app, tmp_path):
    # Blind trials: two pasted documents made 127 memories, 15 of them useful ("Make sure nobody is
    # running a migration.", "Watch the error rate for 15 minutes"); the runbook itself was nowhere.
    app.extract(
        transcript(
            tmp_path / "s.jsonl",
            "paste",
            (
                "user",
                "Here's our orders-db failover runbook, we're doing the drill today. Walk me through step 4?\n\n"
                + RUNBOOK,
            ),
            ("assistant", "Step 4 points pgbouncer at the new primary: edit pgbouncer.ini and reload it."),
            (
                "user",
                "ok. we decided to run pgbouncer in transaction mode because session mode ran out of connections.",
            ),
        )
    )
    memories = current(app)
    [doc] = [m for m in memories if m["category"] == "document"]
    whole = app.get([doc["id"]])["memories"][0]["content"]
    assert whole == RUNBOOK.strip()  # the request before it is the user's, not the runbook's
    assert doc["subject"] == "Orders DB failover runbook"
    others = [m for m in memories if m["id"] != doc["id"]]
    assert not [m for m in others if "nobody is running a migration" in m["content"] or "15 minutes" in m["content"]]
    assert [m["layer"] for m in others] == ["decision"], others  # the decision after it still counts
    assert "transaction mode" in others[0]["content"]
    found = app.search("how do we fail back if the new primary misbehaves", record=False)["results"]
    assert found and found[0]["id"] == doc["id"]


def test_a_chinese_runbook_pasted_with_a_request_is_one_memory(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "s.jsonl",
            "zh",
            ("user", "这是我们的发布手册，帮我看看第三步有没有问题：\n\n" + FABU),
            ("assistant", "第三步的回滚顺序没问题，先 helm rollback 再登记。"),
        )
    )
    memories = current(app)
    [doc] = [m for m in memories if m["category"] == "document"]
    assert doc["subject"] == "发布手册（订单服务）"
    assert not [m for m in memories if "canary" in m["content"] and m["id"] != doc["id"]]  # no line of it alone
    assert app.get([doc["id"]])["memories"][0]["content"] == FABU.strip()


def test_a_long_message_with_a_list_in_it_is_still_read_statement_by_statement(app, tmp_path):
    # Long and with a list, but said, not pasted: the user's own reasoning, three things decided.
    said = (
        "Ok so I thought about the queue question over the weekend and here is where I landed. "
        + "We tried Redis streams for the notifier last year and the consumer groups kept losing acks "
        "whenever a pod was evicted, which is a big part of why I don't trust it for billing. "
        * 3
        + "\n\n- We'll use Postgres SKIP LOCKED for the billing jobs because we already run Postgres.\n"
        "- The notifier stays on Redis streams for now.\n"
        "- Job payloads are stored as JSONB, never as pickled blobs.\n\n"
        "That's it, let me know if anything looks off."
    )
    app.extract(transcript(tmp_path / "s.jsonl", "long", ("user", said), ("assistant", "Makes sense.")))
    memories = current(app)
    assert not [m for m in memories if m["category"] == "document"], memories
    assert any("SKIP LOCKED" in m["content"] for m in memories), memories
    assert any("JSONB" in m["content"] for m in memories), memories


def _cli(home: Path, project: Path, *argv: str) -> str:
    env = {"MAPLE_HOME": str(home), "MAPLE_MODEL": "hash-64", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "memory.cli", "--project", str(project), *argv],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("correction_first", [False, True])
def test_a_runbooks_value_a_correction_retired_is_noted_where_the_runbook_is_quoted(tmp_path, correction_first):
    # A runbook kept whole is never closed by a one-line correction (it holds far more than the value
    # that changed), but the port it still states is marked, in the prompt hook's text and in search.
    home, project = tmp_path / "home", tmp_path / "proj"
    project.mkdir()
    sessions = [
        [("user", "the orders-db replica listens on port 5433 in prod."), ("assistant", "Noted.")],
        [("user", "Here's the failover runbook:\n\n" + RUNBOOK), ("assistant", "Looks complete.")],
        [("user", "heads up: the orders-db replica moved to port 5434 last week, not 5433."), ("assistant", "Ok.")],
    ]
    if correction_first:
        sessions[1], sessions[2] = sessions[2], sessions[1]
    for n, turns in enumerate(sessions):
        path = transcript(tmp_path / f"s{n}.jsonl", f"s{n}", *turns)
        text = Path(path).read_text(encoding="utf-8").replace(PROJECT, str(project))
        Path(path).write_text(text, encoding="utf-8")
        _cli(home, project, "extract", path)
    rows = [json.loads(line) for line in _cli(home, project, "export", "-").splitlines()]
    [doc] = [r for r in rows if r["category"] == "document"]
    [fix] = [r for r in rows if "5434" in r["content"]]
    assert doc["superseded_by"] is None and doc["valid_to"] is None
    assert doc["metadata"]["outdated"] == {"5433": fix["id"]}
    assert f"[outdated: 5433 (see #{fix['id']})]" in _cli(home, project, "search", "check the replica caught up")
    with Store.open(config_mod.load(home=home, env={}), None) as store:
        line = context.render(store.get(doc["id"]))
    assert f"outdated: 5433 (see #{fix['id']})" in line and "-p 5433" in line


# -- what a blind trial of pasted documents showed beside them ------------------------------------


def test_a_long_message_asked_to_be_noted_is_read_as_what_it_decides_not_kept_as_a_document(app, tmp_path):
    # "就这三件，你记一下。" closed a 1,500-character message of three decisions in prose: it was kept whole
    # as a "document", and no decision was found in it. Prose is read statement by statement.
    prose = (
        "先跟你同步一下最近组里定下来的几件事。\n\n"
        "第一件是关于模型上线的灰度。三月份 v55 模型上线的时候，灰度 30 分钟里所有指标都正常，结果到了晚高峰 21 点，"
        "整体 CTR 掉了 2.7%，白天灰度的那部分流量里这类用户很少，根本看不出来。所以上周五我们一起定了：以后凡是涉及 "
        "model-server 新模型版本的发布，一律先走 5% 灰度，至少观察 24 小时，而且必须覆盖一个完整的晚高峰，才能全量。\n\n"
        "第二件是 ctr-realtime。这个作业之前一直是用 Flink SQL 写的，但是它的状态 TTL 只能全局设置，现在 state 已经涨到 "
        "400GB 左右了，RocksDB 的 checkpoint 经常超时失败。李娜评估了两周，最后决定放弃 Flink SQL，用 DataStream API 重写。"
        "我们也讨论过要不要干脆换成 Spark Structured Streaming，但是组里没人有线上经验，所以还是留在 Flink 上，只是不用 SQL 了。\n\n"
        "第三件事比较小：特征回填任务以后一律放在凌晨 2 点到 6 点之间跑，因为白天 Hive 的 root.feed.adhoc 队列资源非常紧张。\n\n"
        "就这三件，你记一下。"
    )
    app.extract(transcript(tmp_path / "s.jsonl", "zh-prose", ("user", prose), ("assistant", "好的，记下了。")))
    memories = current(app)
    assert not [m for m in memories if m["category"] == "document"], memories
    said = " ".join(m["content"] for m in memories)
    assert "5% 灰度" in said and "DataStream API" in said and "凌晨 2 点到 6 点" in said
    assert "跟你同步" not in said and "就这三件" not in said  # the message's talk about itself
    # and two statements of one message never close each other ("…还是留在 Flink 上，只是不用 SQL 了" restates
    # the choice of DataStream API; it had closed it)
    assert app.list(limit=100, status="history")["memories"] == []


def test_a_recollection_is_no_request_to_remember(app, tmp_path):
    # "我记得好像改过" ("I recall it changed") after a pasted onboarding doc made the whole message, the question
    # included, a document the user had "asked to remember"
    doc = FABU + "\n\n上面这个是我们组的发布手册。发布审批现在还是找老周吗？我记得好像改过"
    app.extract(transcript(tmp_path / "s.jsonl", "recall", ("user", doc), ("assistant", "我这边没法确认。")))
    [document] = [m for m in current(app) if m["category"] == "document"]
    whole = app.get([document["id"]])["memories"][0]["content"]
    assert whole == FABU.strip() and "我记得" not in whole
    assert document["metadata"]["why"] == "pasted document"


def test_a_choice_of_its_own_after_an_unrelated_suggestion_is_not_an_agreement_to_it(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "s.jsonl",
            "own",
            ("user", "新人文档里的 VPN 流程现在还对吗？"),
            ("assistant", "我这边没法确认，建议直接问维护人周婷，或者在飞书审批里搜一下 IT-VPN-申请 看现在的流程。"),
            (
                "user",
                "另外上周五我们定了：以后凡是涉及 model-server 新模型版本的发布，一律先走 5% 灰度，至少观察 24 小时，"
                "因为 v55 白天灰度看不出问题。",
            ),
        )
    )
    [d] = current(app, "decision")
    assert "5% 灰度" in d["content"] and "VPN" not in d["content"] and "proposal" not in d["metadata"], d


def _session(app: Memories, tmp_path: Path, name: str, text: str) -> None:
    app.extract(transcript(tmp_path / f"{name}.jsonl", name, ("user", text), ("assistant", "好的。")))


def test_a_changed_threshold_does_not_close_a_decision_that_holds_other_numbers(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "adr.jsonl",
            "adr",
            ("user", "feature-store 的存储选型，ADR-007 三个方案你总结一下"),
            (
                "assistant",
                "ADR-007 的三个方案：A 扩容 Redis Cluster（约 ¥132,000/月）、B 阿里云 Tair（约 ¥86,000/月），"
                "C 自建 Pika（约 ¥41,000/月，但 p999 到 28ms）。",
            ),
            (
                "user",
                "我们最后选方案 B（Tair），因为运维那边已经有 Tair 的 on-call 经验，而且每月比扩容 Redis 省 4.6 万左右。"
                "双写从 4 月 20 号开始。",
            ),
        )
    )
    _session(app, tmp_path, "alert", "feature-store 内存告警阈值已经从 85% 调到 92% 了，Tair 切完之后再 review。")
    assert len(current(app)) == 2 and app.list(limit=100, status="history")["memories"] == []  # both current


def test_a_change_that_names_its_old_value_closes_only_what_holds_it(app, tmp_path):
    # "手册里写的 Harbor 地址 harbor.internal… 已经废弃了" found no memory holding that address (it was in a
    # pasted handbook, kept whole) and closed the decision sharing the words 手册 and 上周五
    handbook = FABU.replace(
        "### 四、联系人", "### 四、镜像\n- Harbor 地址：harbor.internal.feedco.cn，负责人周婷。\n\n### 五、联系人"
    )
    _session(app, tmp_path, "handbook", "这是我们的发布手册：\n\n" + handbook)
    _session(
        app,
        tmp_path,
        "rollout",
        "三月份 v55 模型上线的时候，灰度 30 分钟里所有指标都正常，结果到了晚高峰 21 点，整体 CTR 掉了 2.7%，白天灰度的那部分"
        "流量里这类用户很少，根本看不出来。所以上周五我和 Vivian、老王一起定了：以后凡是涉及 model-server 新模型版本的发布，"
        "一律先走 5% 灰度，至少观察 24 小时；rank-gateway 的纯代码发布还是按手册走 10% 观察 30 分钟，这个不变。",
    )
    _session(
        app,
        tmp_path,
        "harbor",
        "更正一下：手册里写的 Harbor 地址 harbor.internal.feedco.cn 已经废弃了，上周五迁到了 registry.feedco.cn。",
    )
    memories = current(app)
    assert len(memories) == 3 and app.list(limit=100, status="history")["memories"] == []
    [doc] = [m for m in memories if m["category"] == "document"]
    [fix] = [m for m in memories if "registry.feedco.cn" in m["content"]]
    assert doc["metadata"]["outdated"] == {"harbor.internal.feedco.cn": fix["id"]}


def test_a_change_from_one_value_to_another_closes_no_statement_holding_a_third(app, tmp_path):
    # "checkpoint 间隔从 1min 调到 3min" closed the ctr-realtime statement whose only span of time was the key
    # expiry ("一小时没有新事件就清掉"): the change says what the value was, and that statement holds another
    _session(
        app,
        tmp_path,
        "rewrite",
        "ctr-realtime 用 Flink 的 DataStream API 重写，KeyedProcessFunction 自己管理状态，长尾的 key 一小时没有新事件就清掉。",
    )
    _session(
        app, tmp_path, "interval", "我们 Flink 的 checkpoint 间隔刚刚从 1min 调到 3min 了，临时措施，等重写完再调回来。"
    )
    assert len(current(app)) == 2 and app.list(limit=100, status="history")["memories"] == []


def test_a_correction_that_closes_nothing_still_marks_the_runbook_value_it_names(app, tmp_path):
    # Trial 23: "The runbook still says the replica is on port 5433 but we moved it to 6432" after a pasted
    # runbook: no fact held 5433 to close, and the runbook kept saying it unmarked
    app.extract(
        transcript(tmp_path / "a.jsonl", "paste", ("user", "Here's the runbook:\n\n" + RUNBOOK), ("assistant", "Ok."))
    )
    app.extract(
        transcript(
            tmp_path / "b.jsonl",
            "fix",
            ("user", "The runbook still says the replica is on port 5433 but we moved it to 6434 last week."),
            ("assistant", "Noted."),
        )
    )
    [doc] = [m for m in current(app) if m["category"] == "document"]
    [fix] = [m for m in current(app) if "6434" in m["content"]]
    assert doc["metadata"]["outdated"] == {"5433": fix["id"]}


DESIGN = (
    "# Design: Idempotency keys for the billing-service charge API\n\n"
    "**Author:** Marcus Oduya (Mack)  \n**Status:** In review\n\n"
    "## 1. Context\n\n`POST /v2/charges` is not idempotent today; a retry after a PSP timeout can charge twice.\n\n"
    "## 2. Options\n\n"
    "### Option A — Redis (`idem-redis`)\n\nKeys in Redis with a 24 h TTL. Fast, but eviction can drop keys.\n\n"
    "### Option B — Postgres table in pg-billing\n\nA table `idempotency_keys (merchant_id, key, fingerprint)`, "
    "written in the charge's own transaction.\n\n"
    "### Option C — Rely on the PSP\n\nPass our key to the PSP and trust its deduplication.\n\n"
    "## 3. Review comments\n\n"
    + "".join(
        f"**Reviewer {n}:** I read section {n} again and I think the fingerprint should leave out the metadata "
        f"field, because merchants put request ids in there and those change on every retry of the same charge.\n\n"
        for n in range(1, 8)
    )
    + "**Mack (author, reply):** Agreed on the fingerprint. If we go with B, I'd set the window to 7 days.\n\n---"
)


def test_a_decision_after_a_pasted_design_doc_is_read_and_its_option_is_named_from_the_doc(app, tmp_path):
    # Trial 23: a design doc with reviewer replies at its end, then "We'll go with option B … because …": the
    # replies made the words around the doc too long to be the user's, so the whole message was read line by
    # line; and "option B" named nothing a reader could look up
    message = (
        "Here's Mack's idempotency design doc:\n\n"
        + DESIGN
        + "\n\nWe'll go with option B from this doc because Redis TTL eviction bit us last quarter and merchants "
        "want the 7-day window. Can you sketch the migration?"
    )
    app.extract(transcript(tmp_path / "s.jsonl", "design", ("user", message), ("assistant", "Sure, here it is.")))
    [doc] = [m for m in current(app) if m["category"] == "document"]
    assert app.get([doc["id"]])["memories"][0]["content"] == DESIGN
    [d] = current(app, "decision")
    assert "Option B — Postgres table in pg-billing" in d["content"], d
    assert "design doc:" not in d["content"] and "Redis TTL eviction" in d["content"]


def test_when_something_starts_is_no_value_it_replaces():
    # "双写从 4 月 20 号开始" gave a decision `replaces: ["4 月"]`, and a pasted weekly note was then marked
    # "[outdated: 4 月]"; "从 24 小时改成 12 小时" still names 24 小时 as replaced
    assert (
        rules.replaced_values("我们最后选方案 B（Tair）。双写从 4 月 20 号开始。帮我把 ADR 状态改成 Accepted。") == []
    )
    assert rules.replaced_values("从下周一起发布改到周二。") == []
    assert rules.replaced_values("日志保留从 24 小时改成 12 小时了。") == ["24 小时"]


def test_a_problem_reported_with_a_request_for_help_is_no_pick_of_the_item_it_names(app, tmp_path):
    # Trial 23: "canary 起不来，帮我看下：" named "canary" from item 3 of the assistant's suggestions and was
    # stored as a decision agreeing to it
    app.extract(
        transcript(
            tmp_path / "s.jsonl",
            "help",
            ("user", "帮我看看第三步"),
            (
                "assistant",
                "第三步没什么大问题。几点建议：\n\n1. CTR 那一项依赖 ABTest 报表，有 5 分钟延迟。\n"
                "2. rollout status 只能说明 Pod 起来了，最好再看一眼 Grafana。\n"
                "3. 如果这次带了模型变更，先确认 schema_version 和线上的 feature_schema_version = 42 一致，否则 canary 会起不来。",
            ),
            ("user", "canary 起不来，帮我看下：\n\n```\nError: schema mismatch 43 != 42\n```"),
            ("assistant", "schema_version 是 43，线上是 42，需要先发 rank-gateway。"),
        )
    )
    assert current(app, "decision") == []


def test_a_long_account_keeps_its_declared_decision_and_drops_the_talk_about_itself(app, tmp_path):
    # Trial 23's English "wall of text": "instead of the 2 minutes we promise" made a report a decision,
    # "The decision is: …" was stored as a rule, and "I'd rather you have the full picture" as a preference
    said = (
        "OK, before we touch the failover stuff again I want to write down where we landed, because I keep "
        "re-explaining it and I'd rather you have the full picture too. The short version is that Monday's "
        "switchover worked, but it took 3m40s of write freeze instead of the 2 minutes we promise, and the reason "
        "was boring: an old pg_basebackup was still holding a WAL sender. That part is fixed.\n\n"
        "The more interesting discussion was about what we do with the old primary afterwards. In November "
        "pg_rewind left us with a replica that was silently missing rows. So the decision is: after any failover "
        "the old primary is always rebuilt from a fresh pg_basebackup, never with pg_rewind.\n\n"
        "I know that's a wall of text, but I'd rather have it captured somewhere."
    )
    app.extract(transcript(tmp_path / "s.jsonl", "wall", ("user", said), ("assistant", "Captured.")))
    [d] = current(app, "decision")
    assert "never with pg_rewind" in d["content"], d
    kept = " ".join(m["content"] for m in current(app))
    assert "full picture" not in kept and "wall of text" not in kept and "discussion was about" not in kept


def test_a_new_owner_as_of_a_day_and_a_tool_adopted_are_kept(app, tmp_path):
    # Trial 23: both were lost ("as of yesterday" read as something that happened yesterday)
    app.extract(
        transcript(
            tmp_path / "s.jsonl",
            "owner",
            (
                "user",
                "Also Mack moved over to the risk team early, so Sam Okafor owns billing-service as of yesterday.",
            ),
            ("assistant", "Noted."),
            (
                "user",
                "we're also adopting sqlc for new queries in billing-service. can you generate the idempotency queries?",
            ),
            ("assistant", "Sure."),
        )
    )
    memories = current(app)
    [owner] = [m for m in memories if "Sam Okafor" in m["content"]]
    assert owner["subject"] == "billing-service"
    assert any("adopting sqlc" in m["content"] for m in memories), memories


def test_a_runbook_keeps_its_code_blocks_when_one_held_a_secret(app, tmp_path):
    # The re-score of trial 23: a runbook whose DSN (with its password) sat in a code block lost every code
    # block and was flattened to one line; the secret is redacted and the steps stay
    runbook = RUNBOOK.replace(
        "## Services",
        "## Connect\n```\npsql postgresql://app:Tr0ub4dor-77x@orders-db.prod.internal:5432/orders\n```\n\n## Services",
    )
    app.extract(
        transcript(tmp_path / "s.jsonl", "secret", ("user", "Here's the runbook:\n\n" + runbook), ("assistant", "Ok."))
    )
    [doc] = [m for m in current(app) if m["category"] == "document"]
    whole = app.get([doc["id"]])["memories"][0]["content"]
    assert "Tr0ub4dor" not in whole and "[REDACTED:" in whole
    assert (
        "`patronictl -c /etc/patroni.yml failover orders --candidate orders-db-2`" in whole and "\n## Steps\n" in whole
    )


def test_a_document_asked_to_be_remembered_is_named_by_its_title_not_the_request(app, tmp_path):
    message = "please remember this, it's the final postmortem for last week's double charge:\n\n" + RUNBOOK.replace(
        "# Orders DB failover runbook", "Postmortem: INC-2291 — invoice-worker double-charged 312 customers"
    )
    app.extract(transcript(tmp_path / "s.jsonl", "pm", ("user", message), ("assistant", "Saved.")))
    [doc] = [m for m in current(app) if m["category"] == "document"]
    assert doc["subject"] == "Postmortem: INC-2291 — invoice-worker double-charged 312 customers"
