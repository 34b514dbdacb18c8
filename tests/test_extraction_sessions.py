"""Extraction through `Memories.extract` and `Memories.harvest` on transcripts in Claude Code's
line shape: decisions across sentences and turns, merges that lose nothing, corrections that
supersede, reasons kept, chat never stored."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from memory.app.memories import Memories
from memory.store import Store

PROJECT = "/home/dev/work/shop"
_ids = itertools.count(1)


def transcript(path: Path, session: str, *turns: tuple[str, str]) -> str:
    """A Claude Code transcript: one JSON line per user prompt or assistant text."""
    lines = []
    for role, text in turns:
        n = next(_ids)
        content = text if role == "user" else [{"type": "text", "text": text}]
        message = {"role": role, "content": content}
        if role == "assistant":
            message.update(id=f"msg_{n}", type="message", model="claude-sonnet-5")
        lines.append(
            {
                "type": role,
                "message": message,
                "uuid": f"{session}-{n}",
                "timestamp": f"2026-09-01T10:{n % 60:02d}:00.000Z",
                "cwd": PROJECT,
                "sessionId": session,
                "isSidechain": False,
                "userType": "external",
            }
        )
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, PROJECT)


def current(app: Memories, layer: str | None = None) -> list[dict]:
    return app.list(layer=layer, limit=100)["memories"]


def stored(report: dict) -> list[dict]:
    return [c for c in report["candidates"] if c.get("action") in ("store", "merge", "supersede")]


# -- decisions -----------------------------------------------------------------------------------


def test_an_agreement_to_the_assistants_proposal_is_a_decision_with_its_alternatives(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("user", "we need a job queue for the invoice PDFs, which one?"),
        ("assistant", "I'd suggest procrastinate instead of celery, because we have no redis in prod."),
        ("user", "Agreed, let's go with that."),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "procrastinate" in d["content"] and "celery" in d["content"]
    agreement = json.loads(Path(path).read_text(encoding="utf-8").splitlines()[2])
    assert d["source_ref"] == agreement["uuid"]  # the user's turn
    assert "celery" in d["metadata"]["alternatives"]
    assert app.lessons("celery")["lessons"], "lessons_for finds the decision"


@pytest.mark.parametrize("answer", ["就这么办", "好，就用这个", "let's do that"])
def test_a_short_agreement_in_either_language_makes_the_proposal_a_decision(app, tmp_path, answer):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("assistant", "我建议用 Canal 订阅 binlog 同步到 ES，而不是在业务代码里双写，因为双写会丢数据。"),
        ("user", answer),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "Canal" in d["content"] and "双写" in d["content"]


def test_a_choice_and_its_reason_in_the_next_sentence_are_one_decision(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("assistant", "Options: celery with redis, or procrastinate on postgres."),
        ("user", "ok let's go with procrastinate. we don't have redis in prod"),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "procrastinate" in d["content"] and "redis in prod" in d["content"]


def test_a_chinese_choice_with_the_alternative_it_rules_out_is_a_decision(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("user", "定了：用 Canal 订阅 binlog，不用双写。运维那边已经有一套 Canal 集群。"),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "Canal" in d["content"] and "运维" in d["content"]
    assert "双写" in d["metadata"]["alternatives"]


def test_a_decision_is_never_merged_into_an_experience_it_absorbs_it(app, tmp_path):
    first = transcript(
        tmp_path / "1.jsonl",
        "s1",
        ("user", "why do the PDF jobs never run in prod?"),
        ("assistant", "They fail because celery needs redis and we have no redis in prod."),
    )
    app.extract(first)
    [exp] = current(app, "experience")
    second = transcript(
        tmp_path / "2.jsonl",
        "s2",
        ("assistant", "I'd suggest procrastinate instead of celery, because we have no redis in prod."),
        ("user", "Let's go with procrastinate instead of celery, because we have no redis in prod."),
    )
    app.extract(second)
    decisions = current(app, "decision")
    assert len(decisions) == 1 and "procrastinate" in decisions[0]["content"]
    if decisions[0]["id"] == exp["id"]:  # absorbed: the experience's text is kept in its history
        history = json.dumps(decisions[0]["metadata"]["provenance"])
        assert "celery needs redis" in history
    else:
        assert any(m["id"] == exp["id"] for m in current(app, "experience"))


def test_a_fact_repeating_a_decision_leaves_the_decision_and_its_reason(app, tmp_path):
    first = transcript(
        tmp_path / "1.jsonl",
        "s1",
        ("user", "Let's go with procrastinate instead of celery, because we have no redis in prod."),
    )
    app.extract(first)
    [d] = current(app, "decision")
    again = transcript(tmp_path / "2.jsonl", "s2", ("user", "We use procrastinate instead of celery."))
    app.extract(again)
    kept = app.get([d["id"]])["memories"][0]
    assert kept["layer"] == "decision" and "no redis in prod" in kept["content"]


# -- supersession ----------------------------------------------------------------------------------


def test_a_correction_in_a_later_session_supersedes_the_old_port_and_search_returns_the_new(app, tmp_path):
    app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", "The staging database listens on port 5433.")))
    [old] = current(app)
    app.extract(transcript(tmp_path / "2.jsonl", "s2", ("user", "Actually the staging port is 6543 now, not 5433.")))
    [new] = current(app)
    assert "6543" in new["content"]
    assert app.get([old["id"]])["memories"][0]["superseded_by"] == new["id"]  # kept as history
    top = app.search("staging database port")["results"][0]
    assert "6543" in top["content"]


def test_a_chinese_port_change_supersedes_the_old_port(app, tmp_path):
    app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", "staging 的数据库端口是 5433。")))
    app.extract(transcript(tmp_path / "2.jsonl", "s2", ("user", "staging 的数据库端口改成 6543 了。")))
    [new] = current(app)
    assert "6543" in new["content"]


def test_a_replaced_server_address_supersedes_the_facts_holding_the_old_one(app, tmp_path):
    app.extract(
        transcript(tmp_path / "1.jsonl", "s1", ("user", "测试环境 MySQL 在 10.12.3.45:3306，库名 order_test。"))
    )
    app.extract(
        transcript(tmp_path / "2.jsonl", "s2", ("user", "测试环境 MySQL 已换到 10.12.8.20，老的 10.12.3.45 回收。"))
    )
    [new] = current(app)
    assert "10.12.8.20" in new["content"]


def test_a_distinct_rule_about_the_same_subject_is_stored_not_dropped_as_a_repeat(app, tmp_path):
    app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", "We moved from Flask to FastAPI last quarter.")))
    app.extract(
        transcript(tmp_path / "2.jsonl", "s2", ("user", "From now on new endpoints always use FastAPI's APIRouter."))
    )
    contents = " | ".join(m["content"] for m in current(app))
    assert "APIRouter" in contents and "Flask" in contents


# -- what a memory keeps, and what is never one ------------------------------------------------------


def test_the_clause_with_the_reason_and_its_semicolon_are_kept(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "Important: we must always run the tests with TZ=UTC; the ORM stores naive datetimes."),
            ("user", "Always restart the auth proxy after rotating keys; that service caches them."),
        )
    )
    contents = [m["content"] for m in current(app)]
    assert any("TZ=UTC; the ORM stores naive datetimes" in c for c in contents)
    assert any("rotating keys; that service caches them" in c for c in contents)


def test_a_plainly_stated_gotcha_without_a_trigger_word_is_stored(app, tmp_path):
    report = app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "The tests pass only when TZ=UTC because the ORM stores naive datetimes."),
        )
    )
    [c] = stored(report)
    assert "naive datetimes" in c["content"]


@pytest.mark.parametrize(
    "chat",
    [
        "I always mix them up.",
        "don't fix them yet, just tell me.",
        "The new guy asked me and I couldn't remember the whole reasoning.",
        "No, no need to run anything, just read the code.",
        "先别写代码，今天先讨论方案。",
    ],
)
def test_conversation_filler_is_never_stored(app, tmp_path, chat):
    report = app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", chat)))
    assert stored(report) == []


def test_an_assistant_root_cause_without_a_because_is_kept_as_an_experience(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "the Stripe webhook fails signature checks in prod, can you look"),
            (
                "assistant",
                "Found it. Stripe signs the exact raw request body, and the handler verifies the re-serialised "
                "JSON instead. Pass `request.get_data()` to `construct_event`.",
            ),
        )
    )
    [e] = current(app, "experience")
    assert "raw request body" in e["content"]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("提交信息用中文写，格式是 `模块: 描述`。", "模块: 描述"),
        ("测试环境的 Apollo 地址是 http://apollo-meta.test.corp:8080。", "apollo-meta.test.corp"),
        ("用 `make api` 重新生成 proto 代码。", "make api"),
    ],
)
def test_chinese_imperatives_and_facts_are_stored_whole(app, tmp_path, text, needle):
    report = app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", text)))
    assert any(needle in c["content"] for c in stored(report))


def test_harvest_and_extract_store_the_same_decision(store, tmp_path):
    turns = (
        ("assistant", "I'd suggest procrastinate instead of celery, because we have no redis in prod."),
        ("user", "Agreed, let's go with that."),
    )
    a = Memories(store, PROJECT)
    a.extract(transcript(tmp_path / "x.jsonl", "s1", *turns))
    via_extract = [(m["layer"], m["content"]) for m in current(a)]
    for m in current(a):
        a.forget(m["id"], permanent=True)
    a.harvest(transcript(tmp_path / "y.jsonl", "s2", *turns))
    assert [(m["layer"], m["content"]) for m in current(a)] == via_extract


def test_a_changed_convention_in_a_later_session_supersedes_the_old_one(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "commit 信息按我们的规矩：中文，前面带 Jira 号，比如 `ORD-231 下单接口支持幂等`。"),
        )
    )
    app.extract(
        transcript(
            tmp_path / "2.jsonl",
            "s2",
            ("user", "commit 规范改了，现在统一 conventional commits：`feat(order): 描述`，Jira 号放在 footer 里。"),
        )
    )
    [new] = current(app)
    assert "conventional commits" in new["content"]


def test_a_retired_service_named_in_a_later_session_supersedes_the_facts_about_it(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl", "s1", ("user", "业务配置都放 Nacos（dataId order-center.yaml），别写死在代码里。")
        )
    )
    app.extract(
        transcript(
            tmp_path / "2.jsonl", "s2", ("user", "Nacos 已经下线了，配置全部迁到 Apollo（appId order-center）。")
        )
    )
    [new] = current(app)
    assert "Apollo" in new["content"]


def test_an_assistant_gotcha_is_kept_as_a_fact(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "update the order status in the repo"),
            ("assistant", "这里特意用了 map：GORM 的 `Updates(struct)` 会跳过零值字段，`StatusPending` 是 0。"),
        )
    )
    [f] = current(app, "fact")
    assert "Updates(struct)" in f["content"]


def test_naming_the_proposed_option_is_a_decision_and_the_fix_completes_a_root_cause(app, tmp_path):
    app.extract(
        transcript(
            tmp_path / "1.jsonl",
            "s1",
            ("user", "fct_orders has dupes since the backfill, figure out why"),
            (
                "assistant",
                "Root cause: `fct_orders` is incremental without a `unique_key`, so every run appends. "
                "Fix: `unique_key='order_id'`, so re-selected rows update in place.",
            ),
            ("assistant", "Two options: a middleware, or an `@adyen_signed` decorator. I'd use the decorator."),
            ("user", "decorator. explicit beats magic"),
        )
    )
    [e] = current(app, "experience")
    assert "unique_key='order_id'" in e["content"]
    [d] = current(app, "decision")
    assert "decorator" in d["content"].lower() and "explicit beats magic" in d["content"].lower()


# -- long documents: nothing lost ------------------------------------------------------------------

RUNBOOK = "\n".join(
    f"Step {i}: set STEP={i}, drain the canary on port {8000 + i}, then check the ledger-api dashboard for drift."
    for i in range(1, 40)
)


def test_a_pasted_runbook_the_user_asks_to_remember_is_kept_whole_and_every_step_is_found(app, tmp_path):
    path = transcript(
        tmp_path / "s.jsonl",
        "doc",
        ("user", "Here is our ledger-api incident runbook, please remember it for later incidents:\n" + RUNBOOK),
        ("assistant", "Got it."),
    )
    app.extract(path)
    (doc,) = current(app)
    assert doc["category"] == "document" and "STEP=37" in app.get([doc["id"]])["memories"][0]["content"]
    found = app.search("canary port 8037", record=False)["results"]
    assert "port 8037" in found[0]["content"]


def test_sentences_of_one_text_that_differ_only_in_their_numbers_are_all_kept(app, tmp_path):
    source = tmp_path / "runbook.txt"
    source.write_text(RUNBOOK, encoding="utf-8")
    report = app.extract(str(source))
    assert [c.get("action") for c in report["candidates"]] == ["store"] * 39
    contents = " ".join(m["content"] for m in current(app))
    assert all(f"port {8000 + i}" in contents for i in range(1, 40))


def test_a_chinese_correction_that_names_the_old_value_supersedes_it(app, tmp_path):
    app.extract(transcript(tmp_path / "a.jsonl", "zh1", ("user", "预发环境的数据库端口是 5433。")))
    app.extract(
        transcript(tmp_path / "b.jsonl", "zh2", ("user", "更正一下：预发环境的端口现在是 6543，不是 5433 了。"))
    )
    (now,) = [m for m in current(app) if "6543" in m["content"]]
    assert not [m for m in current(app) if "5433" in m["content"] and "6543" not in m["content"]]
    assert "6543" in app.search("预发 端口", record=False)["results"][0]["content"]
    assert now["layer"] == "fact"


@pytest.mark.parametrize(
    ("old", "correction"),
    [
        ("Staging's database listens on port 6543.", "Correction: staging's database moved from port 6543 to 6544."),
        ("预发数据库端口是 6543。", "预发数据库从端口 6543 改成 6544 了。"),
    ],
)
def test_a_move_from_a_named_old_value_supersedes_a_memory_stored_by_hand(app, tmp_path, old, correction):
    stored = app.add(old)["memory"]["id"]  # `maple-memory add` / memory_store: no session of its own
    (tmp_path / "note.txt").write_text(f"user: {correction}\n", encoding="utf-8")  # nor has plain text
    app.extract(str(tmp_path / "note.txt"))
    (now,) = current(app)
    assert "6544" in now["content"]
    assert app.get([stored])["memories"][0]["superseded_by"] == now["id"]


def test_an_agreement_records_what_the_proposal_chose_and_why(app, tmp_path):
    path = transcript(
        tmp_path / "agree.jsonl",
        "agree",
        ("user", "Which task queue should we use for the webhooks?"),
        ("assistant", "I'd suggest procrastinate instead of celery, because we have no redis in prod."),
        ("user", "Agreed, let's go with that."),
    )
    app.extract(path)
    (decision,) = current(app, layer="decision")
    meta = app.get([decision["id"]])["memories"][0]["metadata"]
    assert meta["chosen"] == "procrastinate" and meta["alternatives"] == ["celery"]
    assert "no redis in prod" in meta["rationale"]


def test_sounds_good_to_the_assistants_lets_use_is_a_decision(app, tmp_path):
    path = transcript(
        tmp_path / "ruff.jsonl",
        "ruff",
        ("user", "flake8 is slow on this repo."),
        ("assistant", "Let's use ruff instead of flake8 for linting; it is 10x faster."),
        ("user", "sounds good"),
    )
    app.extract(path)
    (decision,) = current(app, layer="decision")
    assert "ruff" in decision["content"]
    assert app.get([decision["id"]])["memories"][0]["metadata"]["chosen"] == "ruff"


# -- a change that names no old value: the same subject, by its words ------------------------------


def two_sessions(app: Memories, tmp_path: Path, first: str, second: str) -> None:
    app.extract(transcript(tmp_path / "1.jsonl", "s1", ("user", first)))
    app.extract(transcript(tmp_path / "2.jsonl", "s2", ("user", second)))


def test_a_later_change_to_the_same_subject_closes_the_old_fact_without_naming_its_value(app, tmp_path):
    two_sessions(
        app,
        tmp_path,
        "The integration test fixtures are kept in tests/fixtures/seed.sql and loaded by the conftest.",
        "The integration test fixtures are now built by factory_boy factories in tests/factories.py.",
    )
    [new] = current(app)
    assert "factory_boy" in new["content"]
    old = [m for m in app.list(limit=100, status="all")["memories"] if "seed.sql" in m["content"]]
    assert old and old[0]["superseded_by"] == new["id"]  # kept as history, closed by the new fact


def test_a_chinese_change_to_the_same_subject_closes_the_old_fact(app, tmp_path):
    two_sessions(
        app,
        tmp_path,
        "灰度发布的开关放在 `feature_flags` 表里，按 tenant_id 控制。",
        "灰度发布的开关现在改成走 Unleash 了，还是按 tenant_id 配置策略。",
    )
    [new] = current(app)
    assert "Unleash" in new["content"]


def test_a_new_rule_that_shares_a_word_with_an_old_fact_leaves_it_current(app, tmp_path):
    two_sessions(
        app,
        tmp_path,
        "We deploy the billing API with `make deploy-api` from the release branch.",
        "From now on every pull request needs a changelog entry in CHANGELOG.md.",
    )
    assert len(current(app)) == 2


# -- choices with the reason said first, and settling phrases --------------------------------------


def test_a_choice_whose_reason_comes_first_keeps_the_reason_in_one_decision(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("assistant", "We could keep one shared price cache or give each worker its own."),
        ("user", "the shared cache keeps serving stale prices across workers. give each worker its own cache then."),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "stale prices" in d["content"] and "its own cache" in d["content"]
    assert "stale prices" in d["metadata"]["rationale"]
    assert len(current(app)) == 1  # the reason is not stored again as a fact of its own


def test_a_chinese_choice_settled_with_jiu_xing_after_its_reason_is_a_decision(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl",
        "s1",
        ("user", "消息队列我们这边没人维护 Kafka，不值当。每晚跑一次批处理就行"),
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "批处理" in d["content"] and "Kafka" in d["content"]
    assert len(current(app)) == 1


def test_dropping_a_library_is_a_decision_with_what_was_dropped(app, tmp_path):
    path = transcript(
        tmp_path / "a.jsonl", "s1", ("user", "we're dropping moment.js. every new screen formats dates with date-fns.")
    )
    app.extract(path)
    [d] = current(app, "decision")
    assert "moment.js" in d["metadata"]["alternatives"]


@pytest.mark.parametrize(
    ("said", "dropped"),
    [
        ("日志改用 zap，别再用 logrus 了。", "logrus"),
        ("We switched the job queue to SQS, no more RabbitMQ.", "RabbitMQ"),
    ],
)
def test_a_switch_that_names_what_it_replaces_is_a_decision_over_it(app, tmp_path, said, dropped):
    app.extract(transcript(tmp_path / "a.jsonl", "s1", ("user", said)))
    [d] = current(app, "decision")
    assert dropped in d["content"]


def test_a_bare_jiu_choice_after_its_reason_is_a_decision(app, tmp_path):
    said = "grpc-gateway 太重了，还要多维护一套 proto 生成。就 net/http 加 chi，自己写路由。"
    app.extract(transcript(tmp_path / "a.jsonl", "s1", ("user", said)))
    [d] = current(app, "decision")
    assert "grpc-gateway" in d["content"] and "chi" in d["content"]


def test_a_renamed_folder_closes_the_rule_that_names_the_old_one(app, tmp_path):
    two_sessions(
        app,
        tmp_path,
        "以后新的支付渠道都放 billing/channels/<name>.py，实现 Channel protocol，别写在 views 里。",
        "channels 目录上周重命名成 billing/gateways/ 了，Channel protocol 也改名叫 Gateway。",
    )
    [new] = current(app)
    assert "billing/gateways/" in new["content"]
