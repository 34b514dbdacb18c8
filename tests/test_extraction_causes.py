"""Causes and gotchas the assistant explains, in either language, held through real Claude Code
transcripts (the sentences are written for the test, not taken from the labelled sessions): a cause
announced in a heading ("根因找到了：", "Found the root cause:") keeps the list that says it; a cause named
in a short sentence keeps the explanation and fix after it; what a request gets back ("裸 curl 会 401")
is a gotcha; and chat, questions and a heading with no cause behind it are stored as nothing."""

from __future__ import annotations

import itertools

import pytest

from memory.app.memories import Memories
from memory.store import Store
from tests import test_extraction_phrasing as phrasing
from tests.test_extraction_phrasing import PROJECT, current, transcript


@pytest.fixture
def app(store: Store, monkeypatch: pytest.MonkeyPatch) -> Memories:
    monkeypatch.setattr(phrasing, "_ids", itertools.count(1))
    return Memories(store, PROJECT)


def stored(app: Memories, tmp_path, *said: tuple[str, str]) -> list[dict]:
    app.extract(transcript(tmp_path / "s.jsonl", "s1", *said))
    return current(app)


# (the user's report, the assistant's explanation, words the experience must keep)
CAUSES = [
    # a heading that announces the cause, the cause in the list under it
    (
        "搜索接口从昨晚开始很慢，P95 到了 3 秒，帮忙看下",
        "根因找到了：\n- `search_logs` 表的 `created_at` 索引在上周的迁移里被删了，每次查询都全表扫描。\n"
        "- 这张表已经有 1200 万行，扫一遍要两秒多。",
        ["created_at", "1200"],
    ),
    (
        "search has been slow since last night, P95 is at 3 seconds",
        "Found the root cause:\n- the `created_at` index on `search_logs` was dropped by last week's migration, "
        "so every query scans the whole table.\n- the table has 12 million rows now.",
        ["created_at", "12 million"],
    ),
    (
        "导出任务这两天老是失败，看下怎么回事",
        "原因有两个：\n1. `EXPORT_BUCKET` 在预发被改成了只读的桶，写文件直接 403。\n2. 重试没有退避，三次重试在一秒内打完。",
        ["EXPORT_BUCKET", "退避"],
    ),
    # a cause named in a short sentence, its explanation and fix in the next ones
    (
        "有两个租户看到了对方的价格，怎么回事",
        "原因是缓存键里漏了租户 id。两个租户查同一个 sku 时，后写的覆盖先写的，`cache.get` 就拿到了别人的价格。"
        "改成用 `tenant:{id}:sku:{sku}` 做键就好了。",
        ["cache.get", "tenant:{id}"],
    ),
    (
        "two tenants saw each other's prices, what happened?",
        "The root cause is a missing tenant id. When two tenants look up the same sku the later write wins, "
        "so `cache.get` returns the other tenant's price. Switching the key to `tenant:{id}:sku:{sku}` fixed it.",
        ["cache.get", "tenant:{id}"],
    ),
]


@pytest.mark.parametrize(("report", "answer", "words"), CAUSES)
def test_a_cause_announced_or_named_briefly_keeps_its_explanation(app, tmp_path, report, answer, words):
    memories = stored(app, tmp_path, ("user", report), ("assistant", answer))
    experiences = [m["content"] for m in memories if m["layer"] == "experience"]
    assert any(all(w in e for w in words) for e in experiences), experiences


@pytest.mark.parametrize(
    ("said", "word"),
    [
        (
            "预发的网关开了 IP 白名单，从办公网直接调 `/v1/orders` 会 403，要走跳板机。",
            "403",
        ),
        (
            "The staging gateway has an IP allowlist: calling `/v1/orders` from the office network will get a 403, "
            "so go through the bastion.",
            "403",
        ),
    ],
)
def test_what_a_request_gets_back_is_a_gotcha(app, tmp_path, said, word):
    memories = stored(app, tmp_path, ("user", "查一下订单接口"), ("assistant", said))
    assert any(m["layer"] == "fact" and word in m["content"] for m in memories), memories


@pytest.mark.parametrize(
    "said",
    [
        (("user", "好的，谢谢"), ("assistant", "好的。")),
        (("user", "我看看"),),
        (("user", "这个有点奇怪"), ("assistant", "我先看下日志：")),
        (("user", "我有个问题想问下"), ("assistant", "你说。")),
        (("user", "你觉得呢？"),),
        (("user", "为什么会这样？"), ("assistant", "原因还没找到：\n- 日志里没有报错。\n- 我再加点打点看看。")),
        (("user", "why does this happen?"), ("assistant", "Not sure about the cause yet:\n- nothing in the logs.")),
        (("user", "接口刚才 500 了一次"), ("assistant", "你要不要先重试一下？")),
        # what a service would answer, not how a request is made: no gotcha
        (("user", "prompt 太长会怎样"), ("assistant", "所以 prompt 很长时我们放行了，上游还是会 400。")),
        (("user", "这个接口到底为啥"),),
        (("user", "那现在怎么办"),),
    ],
)
def test_chat_questions_and_a_heading_with_no_cause_are_not_stored(app, tmp_path, said):
    assert stored(app, tmp_path, *said) == []


@pytest.mark.parametrize(
    ("report", "answer"),
    [
        (
            "登录页有问题，SSO 跳回来以后还是未登录状态",
            "session cookie 设的是 `SameSite=Strict`，从 SSO 域名跳回来时浏览器不会带上它，后端就当成没登录。"
            "把它设成 `Lax` 就行。",
        ),
        (
            "the login page doesn't work after the SSO redirect, it still shows me logged out",
            "The session cookie is set with `SameSite=Strict`, so the browser drops it on the redirect back from "
            "the SSO domain and the backend sees no session. Setting it to `Lax` is enough.",
        ),
    ],
)
def test_the_explanation_after_a_report_that_something_does_not_work_is_an_experience(app, tmp_path, report, answer):
    memories = stored(app, tmp_path, ("user", report), ("assistant", answer))
    assert [m["layer"] for m in memories if "SameSite=Strict" in m["content"]] == ["experience"], memories


# (a report of what went wrong, the assistant's explanation and then its options, the explanation's
# first and last words, a word of the options): from a blind split (dev5)
EXPLAINED_THEN_OPTIONS = [
    (
        "Front desk at two Porto properties is seeing duplicate Booking.com reservations in the PMS feed. Same "
        "guest, same dates, two rows. Can you take a look at the importer?",
        "The importer dedups on a SHA-256 of the whole payload. Booking.com re-sends a reservation whenever "
        "anything on it changes, and even an untouched re-send carries a fresh `last_modified`, so the hash "
        "differs and we insert a second row.\n\nOptions:\n1. Upsert keyed on (partner, partner_reservation_id)\n"
        "2. Keep hashing, but strip volatile fields before hashing",
        ("SHA-256", "second row"),
        "Upsert",
    ),
    (
        "Expedia had a maintenance window last night and we dead-lettered a pile of ARI messages.",
        "The retry budget is shorter than their window: with backoff capped at 5 minutes, 6 attempts add up to "
        "about 17 minutes, so anything that failed early in a 70-minute outage went straight to the DLQ.\n\n"
        "Options:\n1. Raise to 10 attempts with a 15-minute cap\n2. Go back to infinite retries",
        ("retry budget", "DLQ"),
        "infinite",
    ),
    (
        "IMAP 那个 inbound mailbox 又断了，周末 support@ 的邮件两天没进 ticket。",
        "imap-poller 只在 `onModuleInit` 里 connect 一次，ImapFlow 断线以后不会自己重连，所以一断就一直停着，直到 pod 重启。"
        "\n\n选项：\nA. 继续 IMAP，加重连\nB. 换 Mailgun inbound routes",
        ("imap-poller", "pod 重启"),
        "Mailgun",
    ),
]


@pytest.mark.parametrize(("report", "answer", "words", "option"), EXPLAINED_THEN_OPTIONS)
def test_the_explanation_before_the_options_is_an_experience_without_them(app, tmp_path, report, answer, words, option):
    memories = stored(app, tmp_path, ("user", report), ("assistant", answer))
    lessons = [m["content"] for m in memories if m["layer"] == "experience"]
    assert len(lessons) == 1 and all(w in lessons[0] for w in words), memories
    assert option not in lessons[0]
