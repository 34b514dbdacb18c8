"""What the tuning splits and blind trial 25 still showed after the handed-list round, each held by sentences
written for the test. Changes: a topic or group given a new name in code shape ("已经改成 order_paid_event") closes
the statement of the old name, also when the second rename is said "也跟着改成"; a change from one value to
another closes the decision that chose the old value over the new one, even where their words differ; "we're not
on Mailgun anymore, Priya moved all invoice mail over to Postmark" closes the old provider; "invoice-worker
belongs to Omar now" is a new owner; a span of time changed closes the fact holding a span, not the one opening on
the service's name. Noise: a run of part of the suite (`just test lock`) is not how the project runs its tests; a
Chinese why or whether typed with a full stop is a question; an incident as reported, the day's logistics,
feedback on the work at hand and what is said of a credential handed over are not stored. Decisions and gotchas:
the word "id" is no "I'd"; why the options not taken were not taken joins the pick; a gotcha the assistant says is
one is kept with what follows from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_extraction_handed_lists import candidates, current
from test_extraction_phrasing import PROJECT, transcript

from memory.app.memories import Memories
from memory.extraction import rules as R
from memory.extraction.heuristic import extract
from memory.store import Store


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, PROJECT)


def later(app: Memories, tmp_path: Path, first: list[tuple[str, str]], then: str) -> list[str]:
    """The current memories after a session saying `first`, then a later one in which the user says `then`."""
    app.extract(transcript(tmp_path / "1.jsonl", "s1", *first))
    app.extract(transcript(tmp_path / "2.jsonl", "s2", ("user", then)))
    return current(app)


def test_a_new_name_in_code_shape_closes_the_statement_of_the_old_one(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [("user", "支付成功的事件发 Kafka，topic 为 ORDER_PAID，履约服务的消费组是 CG_FULFIL_ORDER。")],
        "中间件组统一了命名，支付成功事件的 topic 已经改成 order_paid_event 了，消费组也跟着改成 fulfil_order。",
    )
    assert not any("ORDER_PAID" in x for x in now), now
    assert any("order_paid_event" in x for x in now), now


def test_a_name_said_in_passing_is_no_rename():
    assert "name" not in R.slot_values("The worker reads the queue order_paid_event and writes to the ledger.")
    assert R.slot_values("the topic was changed to order_paid_event")["name"] == {"order_paid_event"}


def test_changing_from_the_chosen_value_to_the_one_passed_over_closes_the_decision(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [
            ("user", "退货规则一直没定：签收后多久以内能退？财务倾向 7 天，客服想要 14 天。你怎么看"),
            ("assistant", "7 天：对账周期短，坏账少；14 天对顾客更友好，但财务要多压一周账。"),
            ("user", "按 7 天"),
            ("user", "主要是月结：财务要提前关账，14 天太晚了。"),
        ],
        "退款也改了，差评太多，老板拍板从 7 天改成签收后 14 天内都能退。",
    )
    assert not any("按 7 天" in x for x in now), now
    assert any("14 天内都能退" in x for x in now), now


@pytest.mark.parametrize("command", ["just test lock", "pnpm test:e2e -- sla", "make test billing"])
def test_a_run_of_part_of_the_suite_is_not_how_the_project_runs_its_tests(command):
    t = [{"role": "tool", "kind": "tool_result", "tool": "Bash", "input": command, "text": "ok, 3 passed"}]
    assert [c.content for c in extract(t, scope="/p/x")] == []


@pytest.mark.parametrize("command", ["just test", "make test SVC=match", "pnpm test:e2e"])
def test_the_whole_suite_run_by_a_recipe_is_kept(command):
    t = [{"role": "tool", "kind": "tool_result", "tool": "Bash", "input": command, "text": "ok, 30 passed"}]
    assert [c.content for c in extract(t, scope="/p/x")] == [f"Run the tests with `{command}`."]


@pytest.mark.parametrize(
    "said",
    [
        "那重试间隔为啥是 30 秒不是 10 秒。",
        "下单的时候直接发一条延迟消息，是不是就不用轮询了。",
        "为什么要双写一周呢",
    ],
)
def test_a_chinese_why_or_whether_typed_with_a_full_stop_is_a_question(said):
    assert R.is_question(said)
    assert candidates(("user", said)) == []


@pytest.mark.parametrize(
    "said",
    [
        "这就是为什么我们用 Kafka。",
        "为什么用 Kafka：因为运维已经有一套 binlog 订阅。",
        "Kafka 为什么慢我查过了，是分区太少。",
        "不管是不是生产，改配置都要走审批。",
    ],
)
def test_an_answered_why_or_a_whether_in_a_rule_is_no_question(said):
    assert not R.is_question(said)


@pytest.mark.parametrize(
    "said",
    [
        "早上客服转过来一个投诉：用户 8812 同一笔订单被扣了两次款。",
        "大促第一天 cart-svc 被 OOMKilled 好几次，购物车直接清空了，运营那边炸了。",
        "Grafana 上 checkout_errors_total 涨得飞快，全是 gateway timeout。",
        "The e2e suite failed on two of the last three nights, and always on runner-07.",
    ],
)
def test_an_incident_as_it_was_reported_is_not_a_fact(said):
    assert candidates(("user", said)) == []


@pytest.mark.parametrize(
    "said",
    [
        "cart-svc 的内存 limit 是 2Gi，超了就 OOMKilled。",
        "Always run the e2e suite on runner-07, it has the GPU.",
        "记一下：大促第一天 cart-svc 被 OOMKilled 好几次，根因是购物车缓存没设上限。",
    ],
)
def test_a_standing_fact_or_a_remembered_incident_is_kept(said):
    assert len(candidates(("user", said))) == 1


@pytest.mark.parametrize(
    "said", ["2 以后再说。", "导出功能以后再说，先把对账修了。", "Cost us a weekend once, never again."]
)
def test_later_and_never_again_said_as_an_aside_are_no_rules(said):
    assert candidates(("user", said)) == []


@pytest.mark.parametrize("said", ["以后发版都走 release 分支。", "We will never again deploy on a Friday."])
def test_the_same_words_giving_an_order_are_rules(said):
    assert [c.category for c in candidates(("user", said))] == ["rule"]


def test_the_word_id_is_not_i_would_and_a_fix_agreed_to_stays_with_its_cause():
    # "add the widget id to the Matchfile" had read as "I'd …", a proposal: "Do it." became a decision and took
    # the fix away from the root cause it belongs to
    assert not R.PROPOSES.search("Fix: add the widget id to the Matchfile and run match once with write access.")
    assert R.PROPOSES.search("I'd go with Redis.") and R.PROPOSES.search("Id go with Redis.")
    said = [
        ("user", "Beta build failed at signing, can you look?"),
        (
            "assistant",
            "Root cause: the widget extension has its own bundle id, but the Matchfile only lists com.acme.app, and "
            "CI runs match readonly. Fix: add the widget id to the Matchfile and run match once with write access.",
        ),
        ("user", "Do it."),
    ]
    found = candidates(*said)
    assert [(c.layer, "Matchfile and run match once" in c.content) for c in found] == [("experience", True)]


def test_passing_something_on_to_him_names_no_owner():
    assert R.classify_user("懂了，我转给他。") is None
    assert R.classify_user("报表导出交给老张了。")[1] == "ownership"


# -- from blind trial 25 (sentences written for the test) ----------------------------------------


def test_not_on_a_product_any_more_and_someone_moving_it_to_another_closes_the_old_fact(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [("user", "Invoices are sent through Mailgun, templates in mail/.")],
        "Heads up: we're not on Mailgun anymore, Priya moved all invoice mail over to Postmark on Monday.",
    )
    assert not any("through Mailgun" in x for x in now), now
    assert any("Postmark" in x for x in now), now


@pytest.mark.parametrize(
    ("said", "moves"),
    [
        ("Priya moved all invoice mail over to Postmark on Monday.", True),
        ("We moved the nightly export to GitHub Actions.", True),
        ("Dana moved to the platform team last week.", False),
        ("I moved the helper to Utils.py.", False),
    ],
)
def test_a_thing_moved_to_a_product_is_a_change_a_person_moving_teams_is_not(said, moves):
    hit = R.classify_user(said)
    assert (hit is not None and hit[1] == "change") is moves, hit


def test_a_service_that_belongs_to_someone_now_has_a_new_owner(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [("user", "invoice-worker is Dana's, Dana Whitfield.")],
        "Dana Whitfield moved to the platform team, so invoice-worker belongs to Omar now (Omar Haddad).",
    )
    assert not any("Dana's" in x for x in now), now
    assert any("Omar" in x for x in now), now
    assert R.owner_of("This column belongs to Orders.") is None


def test_a_span_changed_closes_the_fact_holding_a_span_not_the_one_opening_on_the_name(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [
            (
                "user",
                "report-api 的基本情况：本地 `uv run uvicorn app.main:app --port 8730`。查询结果缓存在 Redis db 5，TTL 15 分钟。",
            )
        ],
        "还有，report-api 的缓存改成 5 分钟，财务嫌报表太旧。",
    )
    assert any("--port 8730" in x for x in now), now
    assert not any("15 分钟" in x for x in now), now


def test_a_rule_whose_reason_says_something_moved_on_changes_nothing(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [("user", "When the invoice PDF is ready, the worker mails it to the customer.")],
        "Every job on invoice-pdf uses the invoice id as its jobId; the worker skips it if the invoice has moved on to a newer revision.",
    )
    assert any("mails it to the customer" in x for x in now)


@pytest.mark.parametrize(
    "said",
    [
        "I have to drop at 3:30 for the roadmap sync, so let's wrap the billing part first.",
        "Omar is off this week so standup is async.",
        "Acme Dental says their invoice never arrived, second time this week.",
        "财务又说对账单没收到，这是第二次了。",
        "Mostly right, but the footer is grey. It should be black like the web page.",
    ],
)
def test_the_days_logistics_an_incident_reported_and_feedback_on_the_work_are_not_stored(said):
    assert candidates(("user", said)) == []


def test_the_assistant_saying_what_it_cannot_do_from_here_is_no_experience():
    said = [
        ("user", "run the payments e2e"),
        ("assistant", "I can't run that from here, it needs a fresh `stripe login` from someone with account access."),
    ]
    assert candidates(*said) == []


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "Merged. A gotcha on the payments side while I'm here: invoice.paid fires before a bank transfer has "
            "cleared, and amount_paid is still 0. So the ledger only books it when the charge reaches succeeded.",
            "the ledger only books it",
        ),
        (
            "Done. One thing to be aware of: the mail provider retries any webhook without a 2xx for a whole day, "
            "so one event can arrive many times.",
            "retries any webhook",
        ),
        (
            "写好了。有一点要先说清楚：ReplacingMergeTree 只在后台 merge 时才合并重复行，时间没法保证。"
            "所以查询不能直接 count()，要加 FINAL。",
            "要加 FINAL",
        ),
        (
            "That one isn't our CSS, it's a Chromium default: page.pdf() drops background colours unless you pass "
            "printBackground: true. Added it.",
            "printBackground",
        ),
    ],
)
def test_a_gotcha_the_assistant_says_is_one_is_kept_with_what_follows_from_it(said, kept):
    found = candidates(("user", "ok, go on"), ("assistant", said))
    assert [c.category for c in found] == ["gotcha"] and kept in found[0].content, found


def test_a_heads_up_about_the_assistants_next_step_is_no_gotcha():
    said = "Heads up: I'll be rewriting the billing tests next, then the fixtures after that."
    found = candidates(("user", "ok, go on"), ("assistant", said))
    assert found == []


def test_why_the_options_not_taken_were_not_taken_joins_the_pick():
    said = [
        ("user", "对账结果放哪？"),
        (
            "assistant",
            "可以放三个地方：\n\n1. 直接写 MySQL 的 recon_result 表；\n2. 写 ClickHouse 的 dws_recon 表；\n"
            "3. 写 S3 上的 parquet，用 Athena 查。\n\n你倾向哪个？",
        ),
        ("user", "2 吧。"),
        (
            "user",
            "1 和 3 我都不想要，说下原因：一天两亿行，MySQL 的单表扛不住，而且财务要按天汇总。"
            "3 的话 Athena 按扫描量收费，财务每天点几十次报表，钱顶不住。",
        ),
    ]
    found = candidates(*said)
    assert [c.layer for c in found] == ["decision"], found
    assert "扛不住" in found[0].content and "Athena 按扫描量收费" in found[0].content, found[0].content


def test_what_is_said_of_a_credential_handed_over_goes_with_it():
    said = "For realistic data, staging is postgres://app:Vr8mKq2pLz4x@db.staging.acme.internal:5432/acme . It's the app user, so be gentle with it."
    assert candidates(("user", said)) == []
    kept = "Staging Postgres is db.staging.acme.internal:5432. It is wiped every Sunday night."
    assert [c.content for c in candidates(("user", kept))] == [kept]


def test_the_reason_an_option_was_a_non_starter_joins_the_pick_that_passed_it_over():
    said = [
        ("user", "Which PDF library?"),
        (
            "assistant",
            "Options:\n\n1. Puppeteer: render the HTML page we already have.\n2. DocRaptor: hosted, per-document "
            "pricing.\n3. pdfkit: draw everything by hand.",
        ),
        ("user", "1."),
        ("assistant", "OK, Puppeteer."),
        (
            "user",
            "btw the reason DocRaptor was a non-starter: at ~60k invoices a month their pricing beats our AWS bill.",
        ),
    ]
    found = candidates(*said)
    assert [c.layer for c in found] == ["decision"] and "AWS bill" in found[0].content, found


@pytest.mark.parametrize(
    ("said", "kept"), [("They don't really have room types.", False), ("这个 chunk warning 一直有，不用管。", True)]
)
def test_a_sentence_about_they_with_nothing_said_before_it_is_not_kept_but_this_x_is(said, kept):
    assert bool(candidates(("user", said))) is kept
