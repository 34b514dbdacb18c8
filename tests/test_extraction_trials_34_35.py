"""What blind trial 34 showed (dev15: a photo-book print pipeline in Rails and an elevator-IoT platform in Rust, scored
blind .66 / .87 / decisions .50 / supersession 9 of 12), each held by sentences written for the test.

Not stored any more: a request after "最后 / 然后" or "你先看看", "先提 PR", a complaint ("keeps flagging", "was
crawling"), the session's end ("that's enough for one day"), review talk ("good catch …, put that in the review",
"这里别 unwrap"), "I honestly don't know …", the state a request is about to change ("现在…没带 X，帮我加个 X"), the
assistant's report of its work ("加好了：…") or of a test that held the old behaviour, and an answer laid out as
options. Kept: a rule after "——提醒一句，", a convention said "按 X 来" before a request, a consequence that points
back ("so anything older than that …"). Decisions keep a reason the assistant guessed and the user confirmed ("yep
that's why."), the problem said right before a proposal, the option an either/or question named in full, and a pick
by letter from a lettered list under a numbered one; an agreement to do it in another PR decides nothing. A change
the assistant found and asked about is confirmed though its question is not its last sentence, and what it found is
what it said before asking.

Blind trial 35 (dev16: a meter-reading platform in PHP and a flight-school maintenance tracker in .NET, scored blind
.63 / .84 / .44 / 6 of 14, the same on the code before and after the trial-34 fixes) added: a pasted key's armour lines,
review talk about a line ("这行 `…` 别写死"), the day's state ("VPN 没开", "Second run took 4 seconds"), "不用动",
"按你说的改", "not in this PR" and an alarm storm are not stored; "为啥不只用 X：" is a later reason for the pick; a
component named for what it does (`db-migrator`) is specific; a port changed without its kind ("现在是 8883") leaves
the rest of the fact; "q_x 那个已经删了" and the value the assistant says it had noted ("我这边记的是保留 30 天", "What I
had noted was …") are retired; "90 对的" answers "以哪个为准？"; a bare cron step ("*/5") is a schedule; "swapped X out for Y" retires X."""

from __future__ import annotations

import pytest
from test_extraction_handed_lists import candidates, contents, current
from test_extraction_phrasing import PROJECT, transcript

from memory.app.memories import Memories
from memory.extraction import heuristic
from memory.extraction import rules as R
from memory.store import Store


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, PROJECT)


@pytest.mark.parametrize(
    "said",
    [
        "你先看看现在 scheduler 的重试是怎么配的。",
        "OK，先提 PR 给阿明 review.",
        "also while you're in there, the CDN keeps flagging oversized banners.",
        "Their staging was crawling yesterday, Priya said 5 seconds a request.",
        "that's enough for one day.",
        "Never seen it used.",
        "good catch on the retry thing, put that in the review.",
        "这里别 panic。",
        "I honestly don't know how an order gets from checkout to the warehouse.",
        "现在回调里没带 trace_id，帮我加个 `trace_id` 字段。",
    ],
)
def test_requests_complaints_and_review_talk_are_not_stored(said):
    assert contents(("user", said)) == []


def test_a_request_after_a_statement_is_no_decision_and_the_statement_stays():
    found = candidates(
        (
            "user",
            "还有客服问为啥 40 条，其实是 40 个不同的站点：sms-relay 有去重，RELAY_DEDUP_SECS=120，同一站点两分钟内只发一次。"
            "最后帮我在群里同步一下，写短点就行",
        )
    )
    assert not any(c.layer == "decision" for c in found), [c.content for c in found]
    assert any("RELAY_DEDUP_SECS=120" in c.content and c.layer == "fact" for c in found), [c.content for c in found]


def test_a_rule_after_a_dash_and_a_lead_in_is_kept_without_what_came_before():
    said = contents(("user", "payments-api 这次不用改——提醒一句，每周三晚上是对账窗口，那天 payments-api 禁止发布。"))
    assert any("禁止发布" in x for x in said), said
    assert not any("这次不用改" in x or "提醒一句" in x for x in said), said


def test_a_convention_said_before_a_request_to_commit_is_kept():
    said = contents(
        ("user", "branch 名按 `feat/<ticket>` 来，commit message 按 gitmoji 来，比如 `:bug: fix retry`，你先 commit")
    )
    assert any("gitmoji" in x for x in said), said
    assert not any("你先 commit" in x for x in said), said


def test_a_consequence_that_points_back_joins_its_fact():
    said = contents(
        (
            "user",
            "exports sit in s3://acme-exports and the janitor job deletes them 14 days after creation. so anything "
            "older than that has to be regenerated from the ledger. thanks, gotta run",
        )
    )
    assert len(said) == 1 and "14 days" in said[0] and "regenerated" in said[0], said


def test_the_rest_of_a_corrected_fact_drops_the_clauses_that_hung_on_the_changed_one():
    old = "Exports sit in s3://acme-exports and the janitor deletes them 14 days after creation, runs hourly at :05."
    assert R.untouched(old, "the janitor keeps exports 30 days now", ["14 days"]) == "Exports sit in s3://acme-exports."


def test_asking_for_options_after_a_complaint_gets_no_explanation_stored():
    found = candidates(
        ("user", "uploads over 20 MB are failing at the CDN. what are our options for them?"),
        (
            "assistant",
            "`Upload#chunked?` already exists in media-api (bytes per part) - it just isn't used anywhere. Options:\n\n"
            "1. Reject over 20 MB\n"
            "2. Chunk uploads through `Upload#chunked?`\n3. Presign direct-to-bucket uploads",
        ),
    )
    assert not any(c.layer == "experience" for c in found), [c.content for c in found]


def test_a_rule_with_a_broken_case_in_it_reports_no_problem():
    found = candidates(
        (
            "user",
            "nothing deploys to ledger-api on a Sunday, the bank batch runs Sunday night and if an export is broken "
            "nobody's around till Monday.",
        ),
        ("assistant", "All 9 exports regenerated into tmp/out - every one balances. Nothing was pushed to ledger-api."),
    )
    assert not any(c.layer == "experience" for c in found), [c.content for c in found]


def test_a_test_that_held_the_old_behaviour_and_a_report_of_the_work_are_no_experience():
    turns = [
        {"kind": "text", "role": "user", "text": "the session timeout should be 45s now, 30s is too short on mobile."},
        {"kind": "tool_error", "role": "tool", "tool": "Bash", "input": "pytest -q", "error": "1 failed, 111 passed"},
        {
            "kind": "text",
            "role": "assistant",
            "text": "That test was asserting the old timeout (30s); it now expects 45s. 112/112 green.",
        },
        {"kind": "text", "role": "user", "text": "好。现在回调里超时还会重复扣款。"},
        {
            "kind": "text",
            "role": "assistant",
            "text": "加好了：`PayClient` 多了幂等键（老调用方不受影响）。顺手把 client 改成了单例。",
        },
    ]
    found = heuristic.extract(turns, scope="/p/x")
    assert not any(c.layer == "experience" for c in found), [c.content for c in found]


def test_a_reason_the_assistant_guessed_and_the_user_confirmed_joins_the_pick():
    found = candidates(
        ("assistant", "Two ways to retry the exports:\n- a queue per export\n- a nightly cron\n\nQueue or cron?"),
        ("user", "queue"),
        ("assistant", "Done. Side question for the PR: was queue over cron about partial failures?"),
        ("user", "yep that's why. a cron run that dies loses the whole batch, a queue retries one message.\n\nthanks"),
    )
    decisions = [c for c in found if c.layer == "decision"]
    assert len(decisions) == 1 and "retries one message" in decisions[0].content, [c.content for c in found]


def test_the_problem_said_before_a_proposal_is_why_it_was_agreed_to():
    found = candidates(
        (
            "assistant",
            "We send flexbox HTML email, which renders fine in Gmail, but Outlook's Word engine breaks the layout. "
            "I'd propose switching the receipt templates to MJML tables. OK?",
        ),
        ("user", "ok, MJML."),
    )
    decision = next(c for c in found if c.layer == "decision")
    assert "Outlook" in decision.content and decision.metadata.get("chosen") == "MJML", decision


def test_doing_it_in_another_pr_decides_nothing():
    found = candidates(
        ("assistant", "已发群。另外提一句：debug 日志把 token 明文打出来了，建议打码，我可以另开个 PR。"),
        ("user", "好，另开吧"),
    )
    assert not any(c.layer == "decision" for c in found), [c.content for c in found]


def test_an_either_or_question_after_the_options_picks_the_option_it_names_in_full():
    found = candidates(
        (
            "assistant",
            "根因：上游超时以后 gateway 一直在重试。\n\n修法两条路：\n- 在 gateway 里加 circuit breaker，连续失败 5 次熔断 30 秒\n"
            "- 把 timeout 调大到 10 秒\n\nbreaker 还是 timeout？",
        ),
        ("user", "breaker。"),
    )
    decision = next(c for c in found if c.layer == "decision")
    assert "circuit breaker" in decision.content, decision.content
    assert "timeout" in (decision.metadata.get("alternatives") or []), decision.metadata


def test_a_letter_picks_from_the_lettered_list_under_a_numbered_one():
    found = candidates(
        (
            "assistant",
            "Gaps I'd raise:\n\n1. **Retries.** No policy is given.\n2. **Ordering.** Events may overtake each other.\n"
            "3. **Auth** blocks the client:\n   - a) mTLS: a cert renewed by hand every year\n"
            "   - b) signed JWTs: keys we rotate ourselves\n   - c) a shared API key in a header\n\nWhich one?",
        ),
        ("user", "b. I'm not renewing another cert by hand."),
    )
    decision = next(c for c in found if c.layer == "decision")
    assert "signed JWTs" in decision.content and "Ordering" not in decision.content, decision.content


@pytest.mark.parametrize(
    "asked, meant, found_value",
    [
        (
            "search-api 实际 listen 在 9301，默认配置里还是 9300。是端口改了吗？要不要把默认地址改成 9301？",
            "对，9300 给 sidecar 占了，search-api 改到 9301 了。",
            "9301",
        ),
        (
            "report-service 这边已经是 Ktor 了（`embeddedServer`）。我手上的记录还写着 Spring Boot，是已经迁移了吗？"
            "新接口我按 Ktor 的 routing 写。",
            "对，上个月迁到 Ktor 了，路由统一写在 `Routing.kt`。",
            "已经是 Ktor",
        ),
    ],
)
def test_a_change_asked_about_before_the_last_sentence_is_confirmed_with_what_was_found(asked, meant, found_value):
    found = candidates(("assistant", asked), ("user", meant))
    changes = [c for c in found if c.category == "change"]
    assert len(changes) == 1 and found_value in changes[0].content, [c.content for c in found]
    assert not any(c.role == "assistant" for c in found), [c.content for c in found]


def test_a_port_asked_about_closes_the_old_one_though_it_was_said_with_other_news(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            (
                "user",
                "好。另外下单以后会调 stock-service 扣库存，现在请求里没带 trace_id，帮我加个 `trace_id`。"
                "本地起 stock-service 是 `cargo run -p stock-service`，监听 7070。",
            ),
        )
    )
    app.extract(
        transcript(
            tmp_path / "2.jsonl",
            "s2",
            (
                "assistant",
                "integration test 默认连 `127.0.0.1:7070`，connection refused；本地 stock-service 实际 listen 在 7071。"
                "是端口改了吗？要不要把 test 的默认地址改成 7071？",
            ),
            ("user", "对，7070 给 node-exporter 占了，stock-service 改到 7071 了。"),
        )
    )
    now = current(app)
    assert not any("监听 7070" in x for x in now), now
    assert any("7071" in x for x in now), now
    assert not any("trace_id" in x for x in now), now


def test_after_in_chinese_is_no_rule():
    found = candidates(("user", "下单以后会调 stock-service 扣库存，超时是 3 秒。"))
    assert found and all(c.category != "rule" for c in found), [(c.category, c.content) for c in found]


# -- blind trial 35 (dev16) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "the deploy key, in case the mirror complains:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
        "对，VPN 没开。",
        "这行 `retry = 3` 别写死，放到 config 里。",
        "你要是在老代码里看到 legacy exporter 直接删掉就行。",
        "cleanup 的脚本也读这个 config，不用动。",
        "timeout 按你说的改 30。",
        "Second run took 4 seconds, so yeah.",
        "she also wants the poller on the new cluster eventually but not in this PR.",
        "这两天告警误报很多，一晚上把值班群刷屏了。",
        "report-builder is already running locally.",
    ],
)
def test_armour_lines_review_talk_and_the_days_state_are_not_stored(said):
    assert contents(("user", said)) == []


def test_why_not_only_the_other_option_said_later_joins_the_pick():
    found = candidates(
        (
            "assistant",
            "三种取法：\n1. 只用 received_at\n2. 丢掉 2020 年前的读数\n3. 两个结合：偏差超过 10 分钟时用 received_at，否则用 reported_at\n\n选哪个？",
        ),
        ("user", "3 吧。"),
        ("assistant", "改好了，测试都过了。"),
        ("user", "好。刚才忘了说为啥不只用 received_at：水表是攒着批量补传的，只用 received_at 几个点会挤在同一秒。"),
    )
    decisions = [c for c in found if c.layer == "decision"]
    assert len(decisions) == 1 and "批量补传" in decisions[0].content, [c.content for c in found]


def test_a_component_named_for_what_it_does_is_specific():
    said = contents(("user", "- never run the migrations by hand. migrations ship through the db-migrator job in CI"))
    assert any("db-migrator" in x for x in said), said


def test_a_port_changed_without_its_kind_leaves_the_rest_of_the_fact():
    old = "背景：sync-worker 跑在 Horizon 上，消费 q_sync 这个队列；EMQX 在 emqx.internal:1883，明文 MQTT，没开 TLS。"
    kept = R.untouched(old, "btw EMQX 上周切 TLS 了，现在是 8883。")
    assert kept == "背景：sync-worker 跑在 Horizon 上，消费 q_sync 这个队列。"


def test_a_queue_said_deleted_and_the_name_the_assistant_had_noted_are_retired():
    assert R.replaced_values("q_cleanup 那个已经删了，别再往里 dispatch。") == ["q_cleanup"]
    found = candidates(
        ("assistant", "horizon.php 里 worker 监听的是 sync-events，我这边记的队列名是 q_sync。是改名了吗？"),
        ("user", "对，改了，上周统一命名。"),
    )
    (change,) = [c for c in found if c.category == "change"]
    assert change.metadata.get("replaces") == ["q_sync"] and "sync-events" in change.content, change


def test_the_value_found_said_right_when_asked_which_holds_retires_the_noted_one():
    found = candidates(
        ("assistant", "config 里 keep_days 默认是 90，但我这边记的是保留 30 天，对不上。现在以哪个为准？"),
        ("user", "90 对的，合规要求三个月。"),
    )
    (change,) = [c for c in found if c.category == "change"]
    # (the number with the unit it was noted in: a bare "30" would retire any fact holding the number)
    assert "合规要求三个月" in change.content and change.metadata.get("replaces") == ["30 天"], change


def test_what_the_assistant_had_noted_is_not_what_it_found():
    found = candidates(
        (
            "assistant",
            "Program.cs publishes with routing key `fleet.status.changed`, and the sync binds `sync.status` to it. "
            "What I had noted was `fleet.down` consumed from `sched.down`. Was that renamed?",
        ),
        ("user", "yes. renamed when we added the up events, one key for both now."),
    )
    (change,) = [c for c in found if c.category == "change"]
    # (both names it had noted are retired)
    assert change.content.startswith("Program.cs publishes")
    assert change.metadata.get("replaces") == ["fleet.down", "sched.down"], change.metadata


def test_a_bare_cron_step_is_a_schedule_and_stays_apart_from_the_owner_said_before_it():
    assert R.slot_values("Jules bumped the pull to */5 last week")["duration"] == {"300s"}
    said = contents(
        ("user", "re sync-job: Priya owns it now. Priya bumped the sync-job pull to */5 so tach is fresher.")
    )
    assert len(said) == 2 and "*/5" in said[1] and "Priya owns" in said[0], said


def test_a_library_swapped_out_is_retired():
    said = "Ignore the Moment stuff in report-worker, Ana swapped Moment out for Luxon in May."
    assert R.replaced_values(said) == ["Moment"]


def test_who_to_ask_said_of_an_owner_stays_with_the_owner():
    said = contents(
        ("user", "For review send it to Mira, she owns claims-api. She's Mira K on Slack if the search fails.")
    )
    assert len(said) == 1 and "Mira K on Slack" in said[0], said
