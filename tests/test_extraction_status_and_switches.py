"""What blind trial 26 showed (six sessions of two new projects, scored before any change: precision .62,
supersession 5 of 9, one access key id stored), each held by sentences written for the test. Changes that now
supersede: a provider switched to, said in Chinese ("短信已经切到华为云了"); "老的 X 没人写了，以后都用 Y"; an owner said
"X 现在归 Y 了" or "X is Priya Nair's now"; a port said "端口改了，现在是 9443". A correction that closes one part of
a fact keeps the rest only when the rest still reads on its own. Decisions keep why the other options were not
taken ("A 不行，…", "option 3 is too slow") and a reason said "… and I don't want …"; what answered the assistant's
question is no reason for a later pick. Not stored: the state of the day's work ("CI is red again", "跑完了 ✅",
"现在的问题是：…", "I'll apply it myself after standup"), a hypothesis to be checked ("My first guess is …",
"先列两个猜测："), a lead-in that only announces a list, the assistant's "已推送 …" and "还需要给 … 加 …". An access
key's id handed over with its secret is redacted. Then blind trial 27 (six more sessions, scored before any change:
.71 / .78 / .83 / .56): a hypothesis said after a clause, an incident as the reason for a pick, "don't touch it
without asking X" read as the day's work, a fix that ends a cause, "ok I need to run" and "行，谢了" as agreements,
the options turned down before the pick, facts said around the day's work, what the user asks not to keep, and a
move off one service joined to where it goes. Then blind trial 28 (dev9; .61 / .72 / decisions .50 / supersession
6 of 9): a pick by number with "do", options lettered inside one paragraph, a reason said after the assistant only
took note of the pick, an instruction after a pick, a task brief before the options, an agreement to rotate a pasted
credential, a vendor's price change, a rule that says "do it this way", a name with a dot in Chinese text and a colon
inside an option's code. Then blind trial 29 (dev10; .77 / .88 / decisions .56 / supersession .50, the same on the
code before and after the trial-28 fixes): an answer to an either/or question, a course reversed in a later session,
who to go to "for now", an owner said after a pick, a background brief, a switch to a product named in Chinese, the
day's task before a pick, what a later reason says of another option, and a demo's time. Then blind trial 30 (dev11;
.70 / .75 / decisions .70 / supersession 9 of 12): a port said before the word 端口 and a cron's every-N-minutes, a plan
overturned after small talk, who to go to "以后" and "that's X's service", a topic or queue renamed without its old
name, a kept rest that names its subject, an announced lead-in and "St." in a name, how to run it said after asking
for a look, "这次算是个教训", options put as bullets after "Either:", a reason given later for an option not picked
or for a pick by its letter, a flag that fixes it in Chinese, a guess put up to confirm, a title to type, and what the
assistant cannot do."""

from __future__ import annotations

import pytest
from test_extraction_changes_and_noise import later
from test_extraction_handed_lists import candidates, current
from test_extraction_phrasing import PROJECT, transcript

from memory.app.memories import Memories
from memory.extraction import rules as R
from memory.extraction.heuristic import extract
from memory.lang.privacy import redact
from memory.store import Store


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, PROJECT)


# -- changes that supersede ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "first, then, old, new",
    [
        (
            "验证码短信现在走腾讯云短信，签名「拾光课堂」，模板在腾讯云控制台维护。",
            "从这周一开始验证码短信已经切到华为云了，腾讯云那边的短信包用完就不续了。",
            "腾讯云短信",
            "华为云",
        ),
        (
            "课程购买成功的事件发 Kafka topic `course_bought`，结算服务和通知服务都订阅。",
            "老的 course_bought 上周起就没人写了，下个月删，以后都用 `edu.course.bought.v2`。",
            "`course_bought`",
            "edu.course.bought.v2",
        ),
        (
            "退课走原路退回，调 lesson-api 的 `/internal/refund`。lesson-api 是赵琳负责的，接口改动先找她 review。",
            "lesson-api 现在归孙浩了，赵琳去做直播了，有问题找孙浩。",
            "赵琳负责",
            "孙浩",
        ),
        (
            "invoice-mailer is Tom Becker's baby, don't merge anything there without him.",
            "and invoice-mailer is Priya Nair's now, Tom moved to the data team.",
            "Tom Becker",
            "Priya Nair",
        ),
    ],
)
def test_a_switch_said_the_way_people_say_it_closes_the_old_fact(app, tmp_path, first, then, old, new):
    now = later(app, tmp_path, [("user", first)], then)
    assert not any(old in x for x in now), now
    assert any(new in x for x in now), now


def test_a_port_said_changed_then_given_leaves_the_rest_of_the_fact_without_the_old_port(app, tmp_path):
    now = later(
        app,
        tmp_path,
        [("user", "quiz-service 本地用 `make run-quiz` 起，端口 7010。")],
        "quiz-service 端口改了，现在是 7443，原来那个跟本地的代理冲突，你 run config 记得改。",
    )
    assert not any("7010" in x for x in now), now
    assert any("7443" in x for x in now), now
    assert R.slot_values("The port changed, it's now 7443.")["port"] == {"7443"}


def test_what_a_correction_leaves_is_dropped_when_it_only_points_back_at_what_changed():
    old = "课程购买成功的事件发 Kafka topic `course_bought`，settle-worker 和通知服务都订阅它。"
    assert R.untouched(old, "老的 course_bought 没人写了，以后都用 `edu.course.bought.v2`。", ["course_bought"]) is None


@pytest.mark.parametrize(
    "said, owner",
    [
        ("lesson-api 现在归孙浩了，赵琳去做直播了。", ("lesson-api", "孙浩")),
        ("and invoice-mailer is Priya Nair's now, Tom moved to the data team.", ("invoice-mailer", "Priya Nair")),
        ("invoice-mailer is Tom Becker's baby, ask him first.", ("invoice-mailer", "Tom Becker")),
    ],
)
def test_owners_said_in_chat_are_read(said, owner):
    assert R.owner_of(said) == owner


def test_a_weekday_is_nobody():
    assert R.owner_of("the release is Friday's") is None


# -- decisions --------------------------------------------------------------------------------


def test_why_the_other_options_were_not_taken_joins_the_pick():
    (d,) = [
        c
        for c in candidates(
            ("user", "重复扣课时的问题怎么修？"),
            (
                "assistant",
                "三种做法：\nA. 扣课时前加分布式锁\nB. 扣课时改成条件更新，余额不足就失败\nC. 每晚跑对账脚本补回来\n我倾向 B。",
            ),
            ("user", "B。A 不行，合同规定锁课最多 10 分钟，超时必须释放。C 也解决不了，家长当天就会投诉。"),
        )
        if c.layer == "decision"
    ]
    assert "超时必须释放" in d.content and "家长当天就会投诉" in d.content, d.content


def test_a_reason_said_with_and_i_dont_want_joins_the_pick_and_is_no_rule():
    found = candidates(
        ("user", "how do we keep broken thumbnails from shipping again?"),
        (
            "assistant",
            "Options:\n1. Call the imgcheck.io API from CI.\n2. An in-repo check over the fixtures.\nI'd go with 2.",
        ),
        ("user", "2. imgcheck.io throttles us and I don't want CI depending on their uptime."),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "throttles" in d.content, d.content
    assert not any(c.layer == "fact" and "throttles" in c.content for c in found), [c.content for c in found]


def test_what_answered_the_assistants_question_is_no_reason_for_a_later_pick():
    found = candidates(
        ("user", "帮我看看为什么签到码老是过期"),
        ("assistant", "先确认一下：签名密钥最近在配置中心里改过吗？"),
        ("user", "配置中心的历史看了，上次改是 8 月，不是这个。"),
        ("assistant", "那是教室平板的时钟慢了。两种改法：\n1. 平板同步 NTP\n2. 验签容忍前后各一个窗口\n"),
        ("user", "2。教室网络我们管不了。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "8 月" not in d.content, d.content
    assert not any("不是这个" in c.content for c in found), [c.content for c in found]


# -- not stored -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "CI is red again btw but that's the lint job flaking, not you.",
        "Standup got moved to 11 so I have some time.",
        "Plan looks fine, I'll apply it myself after standup, don't apply from your side.",
        "跑完了，30 个订单都补上了，通知也发了 ✅",
        "现在的问题是：周末有 8 个家长付了钱没收到课程短信，App 里也看不到课。",
        "昨晚那场直播，老师那边反馈有一批学生进不去，只能手动拉群，很不爽。",
        "再同步几件事，省得你以后踩坑：",
        "PAY_TEST_DSN 我自己改好了。",
        "老的 jquery 插件先不动。",
        "先 skip 掉，别折腾了，我回头找运维要个本地能跑的镜像。",
        "Leaning Pulumi but someone on the platform team keeps pushing CDK.",
        "A few more updates so you don't trip over the old setup:",
    ],
)
def test_the_state_of_the_days_work_is_not_stored(said):
    assert [c.content for c in candidates(("user", said))] == []


def test_a_rule_said_after_the_work_done_is_kept():
    assert [c.content for c in candidates(("user", "部署脚本我改好了，以后都用 make deploy。"))], "the rule was lost"


def test_a_list_announced_with_its_purpose_keeps_its_items_without_the_lead_in():
    stored = [
        c.content
        for c in candidates(
            (
                "user",
                "a few more updates so you don't trip over old stuff: the queue is `media.render` now, not `render-jobs`.",
            )
        )
    ]
    assert stored and not any("trip over" in x for x in stored), stored


@pytest.mark.parametrize(
    "asked, guess",
    [
        (
            "why are the uploads failing since friday? can you look into it",
            "My first guess is the CDN config: if the origin still points at the old bucket, every request 404s. Checking.",
        ),
        (
            "课时为什么会被扣两次？帮我看看",
            "先列两个猜测：\n1. Redis 主从切换时锁丢了，第二个请求又扣了一次\n2. 回调晚于锁过期，扣课时的 UPDATE 不校验状态",
        ),
        (
            "签到码老是提示过期，帮我看看是不是验签逻辑有问题",
            "先排除一个可能：如果签名密钥最近轮换过，验签会全部失败。不过那样报的应该是签名错误。",
        ),
    ],
)
def test_a_hypothesis_to_check_is_no_answer(asked, guess):
    found = candidates(("user", asked), ("assistant", guess))
    assert not any(c.layer == "experience" for c in found), [c.content for c in found]


@pytest.mark.parametrize(
    "said",
    [
        "还需要给 lesson 表加一个 `version` 列，我来加 migration。文件命名有什么规范吗？",
        "已推送 `fix/double-charge`（9a1b2c3）：扣课时改为按 version 条件更新，重复请求会直接返回。",
    ],
)
def test_the_assistants_report_of_what_it_pushed_or_will_add_after_a_failed_call_is_not_stored(said):
    failed = {
        "kind": "tool_error",
        "role": "tool",
        "tool": "Bash",
        "input": "git push",
        "text": "error: failed to push",
    }
    turns = [
        {"kind": "text", "role": "user", "text": "好，改吧"},
        failed,
        {"kind": "text", "role": "assistant", "text": said},
    ]
    assert [c.content for c in extract(turns, scope="/p/x")] == []


def test_a_cause_keeps_no_heading_of_the_options_after_it():
    (e,) = [
        c
        for c in candidates(
            ("user", "为什么课时会被扣两次？"),
            ("assistant", "根因：重试时没有校验请求是否已处理过。修复方案：\n1. 加幂等键\n2. 改成条件更新"),
        )
        if c.layer == "experience"
    ]
    assert e.content.endswith("已处理过。"), e.content


# -- redaction --------------------------------------------------------------------------------


def test_an_access_keys_id_handed_over_with_its_secret_is_redacted_and_a_key_alias_is_not():
    out = redact("dev bucket keys: B2_ACCESS_KEY_ID=7ac1e09f3d5b24c8e6f1 B2_SECRET_ACCESS_KEY=Zq8mW2kP4xL9vN7tR3yB6cH1")
    assert "7ac1e09f3d5b24c8e6f1" not in out and "Zq8mW2kP4xL9vN7tR3yB6cH1" not in out, out
    assert redact("export KMS_KEY_ID=alias/billing-prod") == "export KMS_KEY_ID=alias/billing-prod"


# -- a rule with its reason -------------------------------------------------------------------


def test_a_rule_keeps_the_reason_and_the_consequence_said_after_it_without_the_lead_in():
    stored = [
        c.content
        for c in candidates(
            (
                "user",
                "and while you're in billing/: invoice numbers are never reused once issued. accounting dedupes on the "
                "invoice number, reuse one and the ledger double-counts. so don't 'tidy up' the numbering code",
            )
        )
    ]
    assert len(stored) == 1, stored
    assert stored[0].startswith("Invoice numbers are never reused"), stored
    assert "double-counts" in stored[0] and "So don't" in stored[0], stored


def test_a_sentence_on_another_subject_after_a_rule_stays_apart():
    stored = [
        c.content
        for c in candidates(
            ("user", "invoice numbers are never reused once issued. the staging database listens on port 6543.")
        )
    ]
    assert len(stored) == 2, stored


# -- blind trial 27 (scored before any change: .71 / .78 / .83 / .56), each with new sentences ----------


def test_a_hypothesis_said_after_a_clause_ends_the_answer():
    found = candidates(
        ("user", "why are the thumbnails missing since monday? can you dig in"),
        (
            "assistant",
            "The resizer only runs for images over 50 KB. Before I chase that, my first suspect is the queue: if the "
            "worker crashes before acking, the message sits there forever.",
        ),
    )
    assert not any("suspect" in c.content for c in found), [c.content for c in found]


def test_what_went_wrong_last_night_is_no_reason_for_the_pick_that_fixes_it():
    found = candidates(
        ("user", "the render farm had another night of jobs stuck in `queued` - Omar restarted them by hand at 5am."),
        (
            "assistant",
            "Two ways:\n1. Reclaim on timeout alone.\n2. Stable worker ids from the machine id.\nI'd go with 2.",
        ),
        ("user", "Go with 2. Reclaiming on timeout alone would run jobs twice on every network blip."),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "another night" not in d.content and "network blip" in d.content, d.content


@pytest.mark.parametrize(
    "said, kept",
    [
        (
            "PREVIEW_TTL=45s lives in deploy/values/renderer.yaml and don't touch it without asking Ana Ruiz - she owns the renderer.",
            "Ana Ruiz",
        ),
        ("再改两个东西：预览链接有效期改成 20 分钟了，PREVIEW_TTL=20m，我昨天已经改了 Apollo 上的值。", "20 分钟"),
        ("另外 render 那边以后找子涵（林子涵），老周转岗去做数据了，这次 render 的改动让她 review。", "林子涵"),
        (
            "one thing for the PR description: the preview TTL is still 45 seconds, say that this PR doesn't change it.",
            "45 seconds",
        ),
        ("这个教训记下来：时间一律存 UTC，时区只在展示那一刻换算，绝对别存本地时间。", "一律存 UTC"),
    ],
)
def test_a_fact_said_around_the_days_work_is_kept(said, kept):
    stored = [c.content for c in candidates(("user", said))]
    assert any(kept in x for x in stored), stored
    assert not any("PR description" in x or "这次" in x for x in stored), stored


def test_the_fix_a_cause_ends_with_is_kept_with_it():
    (e,) = [
        c
        for c in candidates(
            ("user", 'why does `go test` fail with relation "render_leases" does not exist?'),
            (
                "assistant",
                "The tests run against `render_test` and don't migrate it themselves, and render_leases comes from "
                "migration 0021. After pulling new migrations, run `make migrate-test` before `go test`.",
            ),
        )
        if c.layer == "experience"
    ]
    assert "make migrate-test" in e.content, e.content


@pytest.mark.parametrize(
    "turns",
    [
        (
            ("assistant", "It's worth moving the distance call out of the transaction. Want me to?"),
            ("user", "ok I need to run - planning review at 3pm. leave the routing part until Omar is back."),
        ),
        (
            ("assistant", "这两个值都已经出现在对话记录里了，建议都轮换一下。"),
            ("user", "行，谢了。周五记得提醒我停双写——算了我自己写日历里 😂"),
        ),
    ],
)
def test_leaving_for_the_day_or_thanks_is_no_decision(turns):
    found = candidates(*turns)
    assert not any(c.layer == "decision" for c in found), [c.content for c in found]
    assert not any("until Omar" in c.content for c in found), [c.content for c in found]


def test_the_other_options_turned_down_before_and_after_the_pick_are_its_reasons():
    (d,) = [
        c
        for c in candidates(
            ("user", "render 队列要迁到新 topic，怎么迁？"),
            (
                "assistant",
                "三种：\nA. producer 双写新旧两个 topic 一段时间\nB. 直接切：一次发布全部切到新 topic\n"
                "C. 用 MirrorMaker 2 镜像老 topic\n\n我建议 C，代码改动最少。",
            ),
            (
                "user",
                "C 不要，MirrorMaker 还得有人运维。按 A 来，双写一周。直接切也不行，还有老版本的客户端在读老 topic。",
            ),
        )
        if c.layer == "decision"
    ]
    assert "双写新旧" in d.metadata["proposal"], d.metadata
    assert "还得有人运维" in d.content and "老版本的客户端" in d.content, d.content


@pytest.mark.parametrize(
    "said",
    [
        "for the record, the test db: `jdbc:postgresql://pg-render-test.internal:5432/render?user=rd&password=Rd#2026x!` - actually don't write that anywhere.",
        "Quick flag: that token is now in this session's transcript, so rotate it once you're done.",
    ],
)
def test_what_the_user_asks_not_to_keep_and_advice_about_a_pasted_credential_are_not_stored(said):
    role = "assistant" if said.startswith("Quick flag") else "user"
    found = (
        candidates(("user", "why is the render queue stuck?"), (role, said))
        if role == "assistant"
        else candidates((role, said))
    )
    assert [c.content for c in found] == [], [c.content for c in found]


def test_where_a_service_is_moving_joins_the_move_off_the_old_one():
    stored = [
        c.content
        for c in candidates(
            (
                "user",
                "while we're here - we're getting off MinIO anyway. all of thumbcache moves to Cloudflare R2 by end of month.",
            )
        )
    ]
    assert len(stored) == 1 and "MinIO" in stored[0] and "R2" in stored[0], stored
    assert not stored[0].lower().startswith("while"), stored


# -- blind trial 28 (scored before any change: .61 / .72 / decisions .50 / supersession 6 of 9) ------------


def test_a_pick_by_number_with_do_takes_the_item_and_passes_over_the_others():
    (d,) = [
        c
        for c in candidates(
            (
                "assistant",
                "For the search backend:\n1. Meilisearch: typo tolerance out of the box, one binary.\n"
                "2. OpenSearch: we already run it for logs.\n3. Postgres full-text: no new service.\n\nI'd go with 1.",
            ),
            ("user", "yep do 1"),
        )
        if c.layer == "decision"
    ]
    assert d.metadata["chosen"] == "Meilisearch", d.metadata
    assert d.metadata["alternatives"] == ["OpenSearch", "Postgres full-text"], d.metadata


def test_options_lettered_inside_one_paragraph_are_a_list_a_bare_letter_picks_from():
    (d,) = [
        c
        for c in candidates(
            (
                "assistant",
                "For the retry signal: A) the cron re-scans failed rows every minute; B) the worker re-enqueues "
                "with a delay on failure. A is simpler, B reacts faster.",
            ),
            ("user", "B. The re-scan would hammer the payments table at month end."),
        )
        if c.layer == "decision"
    ]
    assert "re-enqueues" in d.metadata["chosen"] and "hammer the payments table" in d.content, d.metadata
    assert d.metadata["alternatives"] == ["the cron re-scans failed rows every minute"], d.metadata


def test_a_reason_added_after_the_assistant_only_took_note_of_the_pick_joins_it():
    found = candidates(
        ("assistant", "Two ways:\n1. Keep sessions in Redis.\n2. Signed cookies, no server state.\n\nI'd go with 2."),
        ("user", "2"),
        ("assistant", "Signed cookies it is. I'll start with the middleware."),
        ("user", "fwiw Redis would also need a new failover runbook, and security signed off on cookies already."),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "failover runbook" in d.content, [c.content for c in found]
    assert not any("failover runbook" in c.content for c in found if c.layer != "decision")


def test_a_separate_instruction_after_the_pick_is_no_reason_for_it():
    found = candidates(
        ("assistant", "Options:\nA. Put a lock around the export.\nB. Make the export job idempotent.\n\nI'd do B."),
        ("user", "B."),
        ("assistant", "Going with B. I'll start with the job key."),
        (
            "user",
            "That said, do add the lock too. Two exports at once are just wrong, make that the rule for every job.",
        ),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "lock too" not in d.content and "rule for every job" not in d.content, d.content
    assert any(c.category == "rule" and "every job" in c.content for c in found), [c.content for c in found]


def test_a_pick_with_its_own_reason_does_not_take_the_task_brief_before_the_options():
    found = candidates(
        (
            "user",
            "今天做优惠券核销。需求：每张券只能核销一次，核销记录要保留两年，这个是审计要求。另外同步一下：券码长度已经调成 12 位了。",
        ),
        (
            "assistant",
            "防重有两个方案：\nA. Redis SETNX 加锁\nB. 核销表加唯一索引\n\n也可以上分布式事务框架，但太重。",
        ),
        ("user", "Seata 不要，没人运维。B 吧，唯一索引最简单，不依赖 Redis。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "唯一索引" in d.metadata["chosen"] and "没人运维" in d.content, d.metadata
    assert "Seata" in d.metadata["alternatives"], d.metadata  # (turned down before the pick, by name)
    assert "需求" not in d.content and "审计" not in d.content, d.content
    assert any(c.content.startswith("券码长度已经调成 12 位") for c in found), [c.content for c in found]


def test_an_agreement_to_rotate_a_pasted_credential_is_no_decision():
    found = candidates(
        ("user", "OSS 的 bucket 叫 coupon-export。AK 给你：LTAI5tRw8sKq2ZpV7mXn4Yb9 / 9fK3mLq7Np2Rs8Tv4Wx6Yz1aB5cD0eG"),
        ("assistant", "AK 我放 Nacos 加密配置，不进仓库。这对 AK 已经出现在聊天记录里了，建议去 RAM 控制台轮换一下。"),
        ("user", "行，回头我轮换。"),
    )
    assert not any(c.layer == "decision" for c in found), [c.content for c in found]
    assert not any("LTAI" in c.content for c in found)
    assert R.is_status("And since it's been pasted here, revoke it in GitHub afterwards.")


def test_a_vendors_future_price_is_news_not_a_rule_and_is_the_reason_for_the_switch():
    assert R.classify_user("阿里云短信通知我们验证码短信以后要涨价，一条 6 分。")[1] != "rule"
    found = candidates(
        ("user", "阿里云短信通知我们验证码短信以后要涨价，一条 6 分。我们决定换腾讯云短信：公司已有企业折扣。")
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "涨价" in d.content, d.content


def test_a_rule_that_says_do_it_this_way_names_the_way_just_shown():
    found = candidates(
        ("assistant", "扣库存改成了 `stockMapper.deduct(skuId, qty, version)`，version 不匹配就重试三次。"),
        ("user", "对，以后扣库存一律这么写，不许直接 update stock。"),
    )
    (rule,) = [c for c in found if c.category == "rule"]
    assert "stockMapper.deduct" in rule.content, rule.content


def test_a_name_with_a_dot_between_chinese_words_ends_no_sentence():
    assert R.sentences("所有 queue 统一加 cp. 前缀，平台组要求的。I fixed it. 然后看日志") == [
        "所有 queue 统一加 cp. 前缀，平台组要求的。",
        "I fixed it.",
        "然后看日志",
    ]


def test_the_name_of_an_option_keeps_a_colon_inside_code():
    (d,) = [
        c
        for c in candidates(
            (
                "assistant",
                "Three ways:\nA. Add an idempotency key.\nB. Set `retries: 0` on the route in the gateway.\n"
                "C. Dedupe on a hash of the payload.\n\nI'd do A.",
            ),
            ("user", "A. B alone just hides it."),
        )
        if c.layer == "decision"
    ]
    assert d.metadata["alternatives"][0].startswith("Set `retries: 0`"), d.metadata


def test_replacing_one_named_thing_with_another_is_a_decision_over_it():
    (d,) = [
        c
        for c in candidates(
            (
                "user",
                "Main thing today: we're replacing Mailgun with Postmark for receipts. "
                "Half of last week's receipts landed in spam.",
            )
        )
        if c.layer == "decision"
    ]
    assert d.metadata["chosen"] == "Postmark" and d.metadata["alternatives"] == ["Mailgun"], d.metadata
    assert "landed in spam" in d.content, d.content
    assert not R.is_choice("The script is replacing tabs with spaces.")  # (what code does is no team's switch)


def test_where_a_pasted_key_will_live_is_kept_when_named_by_a_config_key():
    found = candidates(
        (
            "user",
            "导出要传 COS，腾讯云密钥给你：AKIDq8Wm3Zt7Lp2Rx9Vn4Kc6Yb1Hs5Ju0Fg / Qz8Wx3Lm7Np2Rs9Tv4Kc6Yb1Hs5Ju0FgDe",
        ),
        ("assistant", "密钥我不写进仓库，放 Nacos 加密配置 `cp.cos.secret-id` / `cp.cos.secret-key`，启动时读。"),
    )
    assert [c.content for c in found] == [
        "密钥我不写进仓库，放 Nacos 加密配置 `cp.cos.secret-id` / `cp.cos.secret-key`，启动时读。"
    ], [c.content for c in found]


@pytest.mark.parametrize(
    "said", ["周三记得提醒我关掉灰度开关——算了我自己定个闹钟", "remember to remind me to rotate the key on Friday"]
)
def test_a_reminder_asked_for_is_no_memory_to_keep(said):
    assert R.classify_user(said) is None
    assert R.classify_user("记得 staging 的端口是 6543。") is not None  # (a fact asked to be remembered still is)


# -- blind trial 29 (scored before any change, on 8b0ee47 and on this round's trial-28 fixes alike: .77 / .88 /
# decisions .56 / supersession .50) --------------------------------------------------------------------------


def test_an_answer_to_an_either_or_question_picks_that_course_and_passes_over_the_other():
    found = candidates(
        (
            "assistant",
            "Before I touch the importer: do you want to keep the CSV path as a fallback for old tenants, "
            "or drop the CSV path entirely?",
        ),
        ("user", "Drop it entirely. Two import paths is how we got the duplicate rows in the first place."),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert d.metadata["chosen"] == "drop the CSV path entirely", d.metadata
    assert "CSV" in d.metadata["alternatives"] and "duplicate rows" in d.content, d.metadata


def test_a_course_reversed_in_a_later_session_closes_the_earlier_decision(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            (
                "assistant",
                "Options:\n1. Keep polling the carrier API every minute.\n2. Subscribe to the carrier Webhooks.\n\n"
                "I'd go with 2.",
            ),
            ("user", "go with Webhooks for shipment status, polling burns our rate limit."),
        )
    )
    app.extract(
        transcript(
            tmp_path / "2.jsonl",
            "s2",
            ("user", "The carrier's Webhooks drop events under load, we lost 40 status updates last night."),
            ("assistant", "Do you want to keep Webhooks with polling as a fallback, or remove Webhooks completely?"),
            ("user", "Remove them completely. Two paths for one status is how we lost track."),
        )
    )
    now = current(app)
    assert not any(x.startswith("go with Webhooks") for x in now), now
    assert any("Remove them completely" in x for x in now), now


def test_who_to_go_to_for_now_is_an_owner_and_no_reason_for_a_pick():
    assert (
        R.classify_user("FYI Ana is out until May, billing-api questions go to Leo (梁栋) for now.")[1] == "ownership"
    )
    found = candidates(
        ("user", "短信通道就用腾讯云，别接钉钉了，司机都不装钉钉。route-svc 是阿强负责的，上线前让他看一眼。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "阿强" not in d.content, d.content
    assert any(c.category == "ownership" and "阿强" in c.content for c in found), [c.content for c in found]
    assert R.owner_of("自己维护分配状态机太累了，还老出错。") is None  # (a pronoun is no owner)


def test_a_background_brief_is_no_reason_for_the_pick_after_the_options():
    found = candidates(
        (
            "user",
            "订单导出这两天一直超时，运营在群里催。背景：导出走 export-svc，数据在 MySQL 的 order_snapshot 表，一次导三个月。",
        ),
        ("assistant", "两个方案：\n1. 改成异步任务，导完发下载链接\n2. 加只读从库专门给导出用\n\n我倾向 1。"),
        ("user", "行，按 1 来。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "背景" not in d.content and "order_snapshot" not in d.content, d.content


def test_a_switch_to_a_product_named_in_chinese_is_a_decision_and_the_days_task_no_reason():
    (d,) = [
        c
        for c in candidates(
            ("user", "今天主要是换地图服务。高德那边配额一直批不下来，老板拍板改用百度地图，key 已经申请好了。")
        )
        if c.layer == "decision"
    ]
    assert d.metadata["chosen"] == "百度地图" and not d.content.startswith("今天"), (d.content, d.metadata)


def test_what_the_next_sentence_says_of_another_option_joins_a_reason_said_later():
    found = candidates(
        ("assistant", "三个方案：\nA. 按月分区\nB. 迁到 Doris\nC. 上 ClickHouse\n\n我倾向 B。"),
        ("user", "B 吧。"),
        ("assistant", "好，我先建表。"),
        ("user", "补充下为啥不选 C：ClickHouse 没人运维过。A 其实也考虑过，但单表迟早要拆。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "没人运维过" in d.content and "迟早要拆" in d.content, [c.content for c in found]
    assert len(found) == 1, [c.content for c in found]


def test_a_demo_at_four_is_the_days_logistics():
    assert R.classify_user("Friday demo is at 4, I'll present.") is None
    assert R.classify_user("The demo environment is at demo.acme.io.") is not None


def test_a_port_said_before_the_word_port_after_a_hyphenated_name_is_changed_by_a_later_one(app, tmp_path):
    assert R.subject_for("geo-fence 跑在 7301 端口。", "config", [], None) == ("geo-fence", "port", "7301")
    now = later(
        app,
        tmp_path,
        [("user", "geo-fence 跑在 7301 端口。")],
        "geo-fence 现在是 7401 端口了，7301 给 jaeger-agent 用了。",
    )
    assert not any("7301 端口。" in x for x in now), now
    assert any("7401" in x for x in now), now


def test_a_cron_that_runs_every_n_minutes_is_changed_with_the_interval():
    old = "sync-job 的 schedule 是 cron `*/20 8-18 * * 1-5`，工作日每 20 分钟跑一次，周末不跑。"
    assert R.slot_values(old)["duration"] == {"1200s"}
    # the interval changed: the cron that says it goes with it, and what is left says no old interval
    rest = R.untouched(old, "sync-job 改成每 5 分钟跑一次，20 分钟太慢了。", [])
    assert rest is None or "*/20" not in rest, rest


def test_a_plan_overturned_after_small_talk_is_one_decision_with_its_reason():
    found = candidates(
        (
            "user",
            "周一好困，咖啡机又坏了…… 说正事：之前定的 session 存 Redis 那个方案要推翻了。"
            "Redis 内存一直告警，一个月多花两千。那就改回 Postgres 存 session。",
        )
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "咖啡机" not in d.content and "多花两千" in d.content and "Postgres" in d.content, d.content
    assert d.metadata.get("reverses"), d.metadata
    assert len(found) == 1, [c.content for c in found]


def test_a_services_person_from_now_on_is_its_owner():
    assert R.owner_of("老周调走了，refund-api 以后找小钱（钱文静）。") == ("refund-api", "小钱")
    assert R.owner_of("以后找小钱吧") is None
    assert R.owner_of("If anything about label-printer comes up, that's Priya Raman's service, ask her first.") == (
        "label-printer",
        "Priya Raman",
    )


@pytest.mark.parametrize(
    "first, then, old, new",
    [
        (
            "下单成功后发 Kafka，topic 是 `shop.order.created`，积分服务消费它。",
            "topic 已经改名了，现在叫 `mall.order.placed`，积分服务也切过去了。",
            "shop.order.created",
            "mall.order.placed",
        ),
        (
            "The pdf worker reads the invoice-jobs queue in BullMQ and renders on 4 threads.",
            "Infra renamed all queues on Monday, the pdf worker's queue is billing.invoices now.",
            "invoice-jobs",
            "billing.invoices",
        ),
    ],
)
def test_a_rename_that_gives_only_the_new_name_retires_the_old_one(app, tmp_path, first, then, old, new):
    now = later(app, tmp_path, [("user", first)], then)
    assert not any(old in x for x in now), now
    assert any(new in x for x in now), now


def test_what_a_correction_leaves_keeps_its_it_when_it_names_its_subject():
    rest = R.untouched(
        "label-printer is the one that renders it, start it with `make printer`, it listens on 6100.",
        "label-printer listens on 6200 now.",
        ["6100"],
    )
    assert rest is not None and "renders it" in rest and "6100" not in rest, rest


def test_an_announced_lead_in_and_an_abbreviated_name_end_no_sentence():
    assert (
        R.strip_fillers("couple of things so I don't forget: the export runs at 02:00.") == "the export runs at 02:00."
    )
    assert R.sentences("Orders for St. Mary's go out at 9. Dr. Okafor signs them.") == [
        "Orders for St. Mary's go out at 9.",
        "Dr. Okafor signs them.",
    ]


def test_how_to_run_it_said_after_asking_for_a_look_is_kept():
    found = candidates(("user", "notify-svc 重试那块你看下，本地起服务用 `make run-notify`，端口 7300。"))
    assert any("7300" in c.content and "你看下" not in c.content for c in found), [c.content for c in found]


def test_a_lesson_said_as_this_was_a_lesson_is_kept():
    found = candidates(("user", "好，合了。这次算是个教训，定时任务一律写幂等，重跑不能多扣钱。"))
    assert any(c.layer == "experience" and "幂等" in c.content for c in found), [(c.layer, c.content) for c in found]


def test_bulleted_options_put_as_either_are_picked_by_a_name_with_a_slash():
    found = candidates(
        (
            "assistant",
            "Two ways to key the cart cache. Either:\n- `user_id`: simple, but guests get no cart; or\n"
            "- `session/device`: covers guests too, a bit more churn.",
        ),
        ("user", "session/device. half our checkouts are guests"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert d.metadata["chosen"] == "session/device" and "guests" in d.content, (d.content, d.metadata)
    assert any("user_id" in a for a in d.metadata.get("alternatives", [])), d.metadata


@pytest.mark.parametrize(
    "lay_out, pick, later_reason, kept",
    [
        (
            "Options:\na) a nightly batch export\nb) stream rows as they land\nc) let finance pull from the replica",
            "b.",
            "fwiw the reason I didn't pick the nightly batch: finance needs same-day numbers.",
            "same-day",
        ),
        (
            "两种做法：\n1. 定时全量同步\n2. 走 binlog 增量同步",
            "2 吧。",
            "对了，不选全量同步的原因：表太大，全量一次要跑四个小时。",
            "四个小时",
        ),
    ],
)
def test_a_reason_given_later_for_an_option_not_picked_joins_the_pick(lay_out, pick, later_reason, kept):
    found = candidates(
        ("assistant", lay_out), ("user", pick), ("assistant", "Done, tests pass."), ("user", later_reason)
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert kept in d.content, [c.content for c in found]
    assert len(found) == 1, [c.content for c in found]


def test_a_flag_that_fixes_it_said_in_chinese_joins_the_cause():
    found = candidates(
        (
            "assistant",
            "第二次失败是因为 shared-proto 的 2.1.0-SNAPSHOT 没有 install 到本地仓库，私服上也没有；只构建 `-pl order-api` "
            "不会带上它。加 `-am` 把依赖模块一起构建就行：`mvn -pl order-api -am verify`。全部通过。",
        )
    )
    assert any(c.layer == "experience" and "-am verify" in c.content for c in found), [c.content for c in found]


def test_a_pick_explained_later_by_its_letter_joins_that_pick():
    found = candidates(
        ("assistant", "几个选择：\na) 先不动，观察一周\nb) 加一层本地缓存\nc) 上读写分离\n\n你倾向哪个？"),
        ("user", "b 吧。"),
        ("assistant", "好了，测试都过。"),
        ("user", "btw 我选 b 主要是因为那台 Redis 是几个服务共用的，一挂全挂。"),
    )
    (d,) = [c for c in found if c.layer == "decision"]
    assert "共用" in d.content, [c.content for c in found]
    assert len(found) == 1, [c.content for c in found]


@pytest.mark.parametrize(
    "said",
    [
        "那 retry 次数应该不是问题吧",
        "then push it and open the PR.",
        "行，提 MR 吧，标题 fix(order): 退款回调改成幂等",
        'ok, commit it, title "feat(cart): keep guest carts for 7 days"',
    ],
)
def test_a_guess_to_confirm_a_task_and_a_title_to_type_are_not_stored(said):
    assert not candidates(("user", said)), [c.content for c in candidates(("user", said))]


def test_what_the_assistant_cannot_do_and_will_do_instead_is_no_experience():
    found = candidates(
        ("user", "also random q: why does the nightly export need the advisory lock for this to work?"),
        (
            "assistant",
            "I can't set reminders, but I'll put it in the PR description.\n\nOn the lock: without it two exporters "
            "started in the same minute both read the same cursor, so every row went out twice.",
        ),
    )
    assert found and not any("reminders" in c.content for c in found), [c.content for c in found]
    assert any("cursor" in c.content for c in found), [c.content for c in found]


def test_what_a_correction_leaves_is_dropped_when_it_consumes_what_was_renamed():
    old = "下单后发 Kafka，topic 是 `shop.order.created`，points-service 消费它做加分。"
    rest = R.untouched(old, "topic 已经改名了，现在叫 `mall.order.placed`。", ["shop.order.created"])
    assert rest is None or "消费它" not in rest, rest
    old = "Orders go to Kafka on topic `shop.orders`, and ledger-service consumes it for invoices."
    rest = R.untouched(old, "The topic is shop.orders.v2 now.", ["shop.orders"])
    assert rest is None or "consumes it" not in rest, rest


def test_a_convention_that_shows_the_commit_format_is_no_title_to_type():
    said = "提交信息统一 conventional commits：`feat(cart): 描述`，工单号放 footer。"
    assert R.sentences(said) == [said]
    assert any("feat(cart)" in c.content for c in candidates(("user", said)))
