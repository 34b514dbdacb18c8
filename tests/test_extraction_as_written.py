"""Extraction of what a blind trial's sessions showed it missing or getting wrong (trial 16: a mobile
sync backend in English, a feature pipeline in Chinese), each held by sentences written for the test:
a pasted runbook's wrapped lines, corrections said in passing, lessons the assistant draws, what a
rule added to others, and what is no memory at all (log lines, a lead-in, a request's aside)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_extraction_phrasing import now_current, sessions, transcript, turns

from memory.app.memories import Memories
from memory.extraction import heuristic as H
from memory.extraction import rules as R
from memory.store import Store


@pytest.fixture
def app(store: Store) -> Memories:
    return Memories(store, "/home/dev/work/shop")


def said_twice(app: Memories, tmp_path: Path, first: str, second: str) -> list[dict]:
    """`first` said by the user in one session, `second` in a later one; every memory afterwards."""
    return sessions(app, tmp_path, [("user", first)], [("user", second)])


def stored(app: Memories, tmp_path: Path, *said: tuple[str, str]) -> list[str]:
    app.extract(transcript(tmp_path / "t.jsonl", "s1", *said))
    return [m["content"] for m in app.list(limit=100)["memories"]]


# -- a pasted document ---------------------------------------------------------------------------

RUNBOOK = """Read this before you ship, it's the staging runbook:

# relay-api staging runbook

## 1. Checks
1. Confirm the nightly build is green. Never ship a red build, not even
   "just for a quick test": staging serves the partner sandbox.
2. Migrations go first. Schema changes are
   applied before the code that reads them, never in the same deploy.
3. The rollout replaces one pod at a time; with 6 replicas it takes
   about 4 minutes.
"""


def test_a_pasted_runbooks_wrapped_lines_are_one_sentence(app, tmp_path):
    now = stored(app, tmp_path, ("user", RUNBOOK))
    assert any('not even "just for a quick test": staging serves the partner sandbox' in m for m in now), now
    assert any("Schema changes are applied before the code that reads them" in m for m in now), now
    assert any("with 6 replicas it takes about 4 minutes" in m for m in now), now
    assert not any(m.rstrip(".").endswith(("not even", "it takes")) for m in now), now


def test_a_wrapped_line_is_joined_but_a_nested_item_is_not():
    assert R.sentences("1. First step, which goes\n   on here.\n   - a nested item") == [
        "First step, which goes on here.",
        "a nested item",
    ]


def test_pasted_log_lines_and_their_lead_in_are_no_memories(app, tmp_path):
    now = stored(
        app,
        tmp_path,
        (
            "user",
            "uploads time out every few minutes. from the LB logs:\n\n"
            'h2 2026-10-02T11:02:09.552Z app/relay-lb/8c1f 10.1.2.3:5511 10.2.0.4:8443 0.000 30.001 -1 504 - 0 0 "PUT /v1/upload"\n'
            'h2 2026-10-02T11:02:41.007Z app/relay-lb/8c1f 10.1.2.9:6121 10.2.0.5:8443 0.000 30.000 -1 504 - 0 0 "PUT /v1/upload"',
        ),
    )
    assert not any("2026-10-02T11" in m or "LB logs" in m for m in now), now


# -- corrections said in passing -----------------------------------------------------------------


def test_a_port_moved_off_with_its_reason_corrects_the_old_port(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "The relay gateway in staging is on 7443 on relay-stg-01.",
        "Infra moved the relay gateway in staging off 7443: it's on 7543 now, because the sidecar took 7443.",
    )
    assert now_current(every, "7543")
    assert not now_current(every, "is on 7443"), [m["content"] for m in every]
    new = now_current(every, "7543")[0]
    assert new["layer"] == "fact"  # a value that changed, with why: no choice


def test_an_owner_change_said_with_so_closes_the_old_owner(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "relay-api is Dana's (Dana Whitfield), she owns it and reviews go to her.",
        "Dana moved to payments, so Omar Haddad (ohaddad) owns relay-api now, send reviews to him.",
    )
    assert now_current(every, "Omar Haddad")
    assert not now_current(every, "Dana's"), [m["content"] for m in every]


def test_a_tool_dropped_after_a_lead_in_closes_what_used_it(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "We keep migrations in db/migrations and flyway applies them with `make db-up`.",
        "Quick context first: we dropped flyway. Migrations now go through dbmate, `dbmate up` in CI.",
    )
    assert not now_current(every, "flyway applies"), [m["content"] for m in every]


def test_make_sure_names_no_make(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        RUNBOOK.replace("Confirm the nightly build", "Make sure the nightly build"),
        "`make check` is gone, we switched from Make to just. It's `just check` now.",
    )
    assert now_current(every, "Make sure the nightly build is green"), [m["content"] for m in every]


def test_a_service_moved_onto_kubernetes_is_not_replaced(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "环境：离线任务在 Dagster 上，地址 `dagster.data.internal:3000`，job 叫 `daily_feats`。"
        "Dagster 是老许（许诺）负责的，有问题找他。",
        "Dagster 迁到 K8s 了，`dagster.data.internal:3000` 那个老地址已经下线，现在统一用 `https://dagster-k8s.data.internal`。",
    )
    assert now_current(every, "老许"), [m["content"] for m in every]  # nothing said he stopped owning it
    assert not any("dagster.data.internal:3000" in m["content"] for m in now_current(every, "daily_feats"))


def test_an_owner_handed_over_by_the_things_other_name(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "实时那边的 Spark 作业 `rt-join` 是小周（周凯）在管。",
        "Spark 作业现在归阿杰（王杰）管，小周去做模型了。",
    )
    assert not now_current(every, "小周（周凯）在管"), [m["content"] for m in every]


def test_a_rule_added_to_a_subjects_rules_replaces_none_of_them(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "指标命名规范：统一 `{对象}_{窗口}_{聚合}`，比如 `shop_7d_gmv_sum`，别自己发明。",
        "好。指标命名规范加一条：所有指标名要带版本后缀 `_v{n}`，口径改了必须升版本。",
    )
    assert now_current(every, "统一 `{对象}_{窗口}_{聚合}`"), [m["content"] for m in every]
    assert now_current(every, "指标命名规范加一条")


# -- lessons the assistant draws -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "lesson", "cause"),
    [
        (
            "9,870 of the 9,902 goroutines sit in `Stream.Serve`. The loop never selects on the request's "
            "`ctx.Done()`, so a closed connection leaves its goroutine behind. Fix: add the `ctx.Done()` case "
            "and unsubscribe on return. Takeaway: every long-lived handler has to watch the request context.",
            "Takeaway: every long-lived handler",
            "never selects on the request's",
        ),
        (
            "p99 的元凶是大 key：`cart_items` 把整个购物车放在一个 hash 里，每次都 `HGETALL`。Redis 是单线程的，"
            "一个慢请求后面全部排队。改法：按天分桶，只取需要的 field。教训就是别把长列表塞进一个 key。",
            "教训就是别把长列表塞进一个 key",
            "Redis 是单线程的",
        ),
    ],
)
def test_a_lesson_is_kept_with_what_it_was_drawn_from(text, lesson, cause):
    found = [c for c in H.extract(turns(("user", "why is it leaking?"), ("assistant", text)), scope="/p/x")]
    kept = [c for c in found if c.layer == "experience" and lesson in c.content]
    assert kept and cause in kept[0].content, [c.content for c in found]
    assert "。 " not in kept[0].content  # Chinese sentences run on without a space


# -- what is no memory ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "帮我生成 K8s secret 的 yaml（别提交到 git）。",
        "No more 504s after the timeout change.",
        "From the gateway logs:",
        "这是 relay-api 的上线手册。",
    ],
)
def test_no_memory_from(said):
    assert R.classify_user(said) is None


@pytest.mark.parametrize(
    "said", ["If it is already red, find out why first.", "Here it is: API_TOKEN=[REDACTED:api-key]."]
)
def test_it_is_picks_nothing(said):
    assert not R.is_choice(said)


@pytest.mark.parametrize("said", ["merge it is.", "ok, postgres it is", "Redis it is, since we run it anyway"])
def test_x_it_is_picks_x(said):
    assert R.is_choice(said)


def test_no_more_as_a_rule_is_still_a_rule():
    assert R.classify_user("No more force pushes to main.") is not None


# -- decisions put as a view, or as an either-or answered ----------------------------------------


SEQUENCE = (
    ("assistant", "Do you want the sequence stored as a string or packed into an integer?"),
    (
        "user",
        "For the record, the reason we're not doing CRDTs is payload size. "
        "I think we should pack the sequence into a bigint column, not a string.",
    ),
    ("assistant", "Agreed — a packed bigint sorts with a plain ORDER BY and takes 8 bytes instead of ~30."),
)
JOIN = (
    ("user", "我觉得样本拼接以后统一用 point-in-time join，不然换个表还会再踩一遍穿越。"),
    ("assistant", "同意，point-in-time join 是根治的办法：每条样本按 event_time 取当时最新的一版特征。"),
)
BUCKETS = (
    ("user", "有道理，就这么改。缓存用按天分桶还是按周分桶？"),
    ("assistant", "按天：模型只用最近 7 天的数据，按天最多取 7 个 key；按周的话一个桶还是太大。"),
    ("user", "ok 按天。"),
)


@pytest.mark.parametrize(
    ("said", "decided"),
    [(SEQUENCE, "pack the sequence into a bigint column"), (JOIN, "统一用 point-in-time join"), (BUCKETS, "按天")],
)
def test_a_plan_put_as_a_view_or_an_either_or_answered_is_a_decision(said, decided):
    found = H.extract(turns(*said), scope="/p/x")
    assert any(decided in c.content for c in found if c.layer == "decision"), [(c.layer, c.content) for c in found]


def test_a_runbook_steps_aside_keeps_its_rule():
    said = "Run the smoke test: `task smoke` (if you don't have Task installed, `go run ./cmd/smoke`)."
    assert R.classify_user(said) is not None


@pytest.mark.parametrize(
    "said",
    ["Deploy: `argocd app sync relay-stg`", "Wait for the rollout: `kubectl rollout status deploy/relay -n stg`."],
)
def test_a_runbook_steps_labelled_command_is_a_fact(said):
    kept = R.classify_user(said)
    assert kept is not None and kept[0].startswith(said.split(":")[0]), kept


def test_wait_is_a_filler_only_before_a_comma():
    assert R.strip_fillers("wait, the port is 5433") == "the port is 5433"
    assert R.strip_fillers("Wait for the rollout: x").startswith("Wait for")


@pytest.mark.parametrize(
    ("text", "lesson"),
    [
        (
            "Found it. `merge` picks the winner by the device's `updated_at`, and phones drift by minutes. "
            "That is the lost-edits bug. The general point: ordering across devices can't rely on device clocks.",
            "The general point: ordering across devices",
        ),
        (
            "The 504s line up with 30 seconds of silence. The LB's idle timeout is 30 s and we ping every 45 s, "
            "so the LB drops the stream first. The fix is a ping every 10 s. Worth remembering for any stream "
            "behind the LB: the ping interval has to be shorter than the idle timeout.",
            "the ping interval has to be shorter",
        ),
    ],
)
def test_a_lesson_after_a_cause_joins_that_experience(text, lesson):
    found = H.extract(turns(("user", "why does it happen?"), ("assistant", text)), scope="/p/x")
    (kept,) = [c for c in found if c.layer == "experience"]
    assert lesson in kept.content and text.split(". ")[1][:20] in kept.content, kept.content


@pytest.mark.parametrize(
    "said",
    [
        (
            ("user", "why did the last deploy of relay-api fail? read this runbook first: …"),
            ("assistant", "Read it. For this deploy: sync, then watch the dashboard."),
        ),
        (
            ("user", "这是上线手册，为什么上次 canary 起不来？"),
            ("assistant", "看完了。第四部分仍然适用，第六部分已经过时了。"),
        ),
        (("user", "那你顺手把手册里那段改了吧，文件在 docs/runbook.md。"),),
    ],
)
def test_no_memory_from_an_acknowledgement_or_a_task_put_to_the_assistant(said):
    assert [c.content for c in H.extract(turns(*said), scope="/p/x")] == []


def test_what_the_assistant_read_off_the_code_is_kept_once_the_user_confirms_it():
    said = (
        (
            "assistant",
            "Migrations here live in `db/migrations/`, named `YYYYMMDDHHMM_name.sql`, applied with `dbmate` — I'll follow that.",
        ),
        ("user", "yep, that's the convention, and dbmate runs against the local db with `make db-up`."),
    )
    found = H.extract(turns(*said), scope="/p/x")
    contents = [c.content for c in found]
    assert any(c.startswith("Migrations here live in `db/migrations/`") and "follow" not in c for c in contents), (
        contents
    )
    assert not any(c.lower().startswith(("yep", "that's")) for c in contents), contents
    assert sum("db/migrations" in c for c in contents) == 1, contents  # once, as the user confirmed it


def test_the_old_node_of_a_runbook_step_retires_no_node():
    assert (
        R.replaced_values(
            "Wait for the replacement to be `Ready` (`kubectl get nodes -w`), and for all pods that were on the old "
            "node to be `Running` again before moving on."
        )
        == []
    )


def test_a_change_word_inside_a_name_marks_no_change():
    # "catalog.product-changes" is a topic's name: reading from it replaced no Kafka (blind paraphrase
    # set five: `add` of the consumer's fact superseded the producer's)
    assert R.replaced_values("search-indexer reads product updates from the Kafka topic catalog.product-changes.") == []
    assert "RabbitMQ" in R.replaced_values("search-indexer consumes from Kafka now, not RabbitMQ.")


@pytest.mark.parametrize(
    "said",
    [
        "reporting-service reads from Kafka now.",
        "fleet-api consumes dispatch.jobs from Kafka now, not RabbitMQ.",
    ],
)
def test_reading_from_a_thing_now_replaces_no_thing(app, said):
    # where data comes from is no old value: "reads from Kafka now" had closed every current memory about
    # Kafka ("analytics-pipeline streams click events into Kafka")
    assert "Kafka" not in R.replaced_values(said)
    kept = app.add("analytics-pipeline streams click events into Kafka.")["memory"]["id"]
    assert app.add(said)["supersedes"] == []
    assert app.get([kept])["memories"][0]["status"] == "current"


@pytest.mark.parametrize(
    ("old", "noted", "replaced"),
    [
        ("ledger-sync 的 Redis cache TTL 是 300 秒。", "ledger-sync Redis TTL -> 600s", []),  # blind trial 45
        ("ledger-sync 的 Redis cache TTL 是 300 秒。", "ledger-sync Redis TTL: 300s → 600s", ["300s"]),
        ("billing-api listens on port 8080.", "billing-api port 8080 -> 8081", ["8080"]),
        ("billing-api stores invoices in MySQL 8.", "billing-api: MySQL => PostgreSQL", ["MySQL"]),
    ],
)
def test_a_change_noted_with_an_arrow_supersedes(app, old, noted, replaced):
    assert R.replaced_values(noted) == replaced
    closed = app.add(old)["memory"]["id"]
    assert [m["id"] for m in app.add(noted)["supersedes"]] == [closed]


@pytest.mark.parametrize(
    "path",
    [
        "billing-api request path: nginx -> billing-api -> ledger-api on port 9000",  # a path, not a change
        "CDC: MySQL -> Kafka via Debezium, port 9000 for the connector",  # a flow between two kinds of thing
        "billing-api -> k8s next sprint, port 9000 stays",
        'billing-api alerts: a route for `severity=~"page"` → `ops-firehose-slack`, port 9000',  # a route
        "billing-api on-call shift 2pm -> 12:30am on port 9000 days",  # a span, not a change
    ],
)
def test_an_arrow_that_notes_a_path_or_a_flow_changes_nothing(app, path):
    assert R.arrow_change(path) is None and not R.marks_change(path)
    app.add("billing-api listens on port 8080 and stores invoices in MySQL 8.")
    assert app.add(path)["supersedes"] == []


def test_what_was_left_is_still_the_old_value():
    assert R.replaced_values("We moved from RabbitMQ to Kafka.") == ["RabbitMQ"]
    assert R.replaced_values("the consumer gets moved from redis to kafka now") == ["redis"]
    assert R.replaced_values("The worker reads from Kafka now instead of RabbitMQ.") == ["RabbitMQ"]


def test_a_terse_statement_with_a_contraction_is_kept():
    kept = R.classify_user("state's in s3 bucket `acme-tfstate-prod`, lock table `tf-locks`, eu-west-1.")
    assert kept is not None and "acme-tfstate-prod" in kept[0]


@pytest.mark.parametrize(
    ("first", "second", "old"),
    [
        (
            "Real plans go through atlantis on the PR (`atlantis plan` / `atlantis apply` comments).",
            "heads up, we ditched atlantis last week. applies go through the `tf-apply` workflow now",
            "Real plans go through atlantis",
        ),
        (
            "state store 用 Zustand 吧，cart 的 store 很小，没必要上 Redux。",
            "之前选 Zustand 那个决定我们回滚吧，统一改用 Redux Toolkit，checkout 要 devtools。",
            "state store 用 Zustand",
        ),
        (
            "state's in s3 bucket `acme-tfstate-prod`, lock table `tf-locks`, eu-west-1.",
            "actually the lock table is `tf-state-locks`, not `tf-locks`. i misremembered it",
            "lock table `tf-locks`",
        ),
    ],
)
def test_a_terse_correction_or_a_decision_taken_back_closes_the_old_memory(app, tmp_path, first, second, old):
    every = said_twice(app, tmp_path, first, second)
    assert not now_current(every, old), [(m["content"], m.get("superseded_by")) for m in every]
    assert any(old in m["content"] and m.get("superseded_by") for m in every)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "root cause 找到了：session cookie 设置的是 `SameSite=Strict`，跨站跳回来浏览器不带 cookie，所以 BFF 认为没登录。"
            "改成 `SameSite=Lax` 就行。",
            "改成 `SameSite=Lax`",
        ),
        (
            "coredns still has the default 170Mi memory limit, but prod is at ~1,200 Services now and coredns keeps "
            "every record in its cache, so it outgrows 170Mi and gets OOMKilled. Raising the limit to 300Mi.",
            "gets OOMKilled",
        ),
    ],
)
def test_a_cause_told_without_a_trigger_word_is_an_experience(text, kept):
    found = H.extract(turns(("user", "coredns pods restart again"), ("assistant", text)), scope="/p/x")
    exp = [c.content for c in found if c.layer == "experience"]
    assert any(kept in c for c in exp), exp
    assert not any("。 " in c for c in exp)


def test_a_convention_of_how_something_is_written_is_a_rule():
    kept = R.classify_user("另外 commit message 按 Conventional Commits 写，scope 写包名，比如 `feat(web-bff): ...`。")
    assert kept is not None and kept[1] == "rule"
    assert R.classify_user("我按你说的写了") is None


def test_a_correction_of_one_named_value_keeps_the_others_said_with_it(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "state's in s3 bucket `acme-tfstate-prod`, lock table `tf-locks`, eu-west-1.",
        "actually the lock table is `tf-state-locks`, not `tf-locks`. i misremembered it",
    )
    assert now_current(every, "acme-tfstate-prod"), [(m["content"], m.get("superseded_by")) for m in every]
    assert not now_current(every, "lock table `tf-locks`, eu-west-1")


# -- trial 18's leftovers: whose something is, a change turned down and then taken ---------------


def test_an_owner_said_as_a_possessive_is_closed_by_the_new_owner_with_what_was_said_of_him(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "fyi: networking modules are dmitri's (@dvolkov), ping him on anything under modules/vpc.",
        "jo owns networking now (@jberg), dmitri moved to the data platform team. update CODEOWNERS for modules/vpc",
    )
    assert now_current(every, "Jo owns networking now"), [(m["content"], m.get("superseded_by")) for m in every]
    # "ping him" is about dmitri: it goes with him, not kept as a fact of its own
    assert not now_current(every, "dmitri's") and not now_current(every, "ping him")
    assert R.owner_of("Billing jobs are Wei's (wzhang).") == ("billing jobs", "Wei")
    assert R.owner_of("The root cause is today's deploy.") is None


@pytest.mark.parametrize(
    ("said", "owned"),
    [
        ("btw jo owns networking now (@jberg)", ("networking", "jo")),
        ("heads up: priya owns the feature store now", ("feature store", "priya")),
        ("the feature store is owned by priya now", ("feature store", "priya")),
        ("ok so from now on sam is responsible for billing-service", ("billing-service", "sam")),
        ("it owns the lock", None),
        ("nobody owns this", None),
        ("who owns networking?", None),
    ],
)
def test_an_owner_written_in_lowercase_as_team_chat_does_is_an_owner(said, owned):
    assert R.owner_of(said) == owned


SPOT_ASKED = [
    ("user", "runner pods run on the ci nodepool."),
    (
        "assistant",
        "While we're in the runners: should we move the tf-runner pool onto Karpenter spot nodes? They're idle "
        "most of the day and spot would be ~60% cheaper.",
    ),
    ("user", "nah, not now. spot interruption mid-apply = stale locks + half-applied state, we just saw that"),
    ("assistant", "Understood, leaving the runners on the ci nodepool."),
]
SPOT_TAKEN = [
    (
        "user",
        "so finops wants the runner bill down. changed my mind on spot — put tf-runner on spot nodes. the "
        "concurrency group + a lock timeout means an interruption just retries now",
    ),
    ("assistant", "OK. I'll add a Karpenter NodePool `ci-spot` and point the tf-runner scale set at it."),
]
K8S_ASKED = [
    ("user", "settle-job 现在用 crontab 跑在 batch-01 上。"),
    ("assistant", "顺便问一下：要不要把 settle-job 迁到 K8s 的 CronJob 上？这样就不用维护 batch-01 了。"),
    ("user", "先不，K8s 上的 CronJob 我们还没有告警，挂了没人知道。"),
    ("assistant", "好的，那先保持 crontab。"),
]
K8S_TAKEN = [("user", "迁 K8s 的事我改主意了，下周就迁，告警已经补上了。"), ("assistant", "好的。")]


@pytest.mark.parametrize(
    ("asked", "taken", "declined", "reversed_"),
    [
        (
            SPOT_ASKED,
            SPOT_TAKEN,
            "Not now: move the tf-runner pool onto Karpenter spot nodes, because spot",
            "put tf-runner on spot",
        ),
        (K8S_ASKED, K8S_TAKEN, "暂不把 settle-job 迁到 K8s 的 CronJob 上：K8s 上的 CronJob 我们还没有告警", "下周就迁"),
    ],
)
def test_a_change_turned_down_with_a_reason_is_a_decision_a_later_change_of_mind_replaces(
    app, tmp_path, asked, taken, declined, reversed_
):
    every = sessions(app, tmp_path, asked, taken)
    now = now_current(every, reversed_)
    assert [m["layer"] for m in now] == ["decision"], [m["content"] for m in every]
    assert not now_current(every, declined)
    closed = [m for m in every if declined in m["content"]]
    assert [(m["layer"], m.get("superseded_by")) for m in closed] == [("decision", now[0]["id"])]


def test_a_bare_no_to_a_question_decides_nothing(app, tmp_path):
    every = sessions(
        app, tmp_path, [("assistant", "Should we add a retry budget to the webhook client?"), ("user", "no")]
    )
    assert every == []


def test_a_correction_of_one_thing_keeps_the_other_things_said_beside_it_as_they_were_said(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "For reference: registry mirror is registry-mirror.ops.acme.dev:5000, grafana is "
        "https://grafana.ops.acme.dev, and node groups for every cluster come from modules/eks-nodegroup.",
        "registry mirror is on 5443 now btw, TLS only.",
    )
    assert [m["content"] for m in every if not m.get("superseded_by") and "grafana" in m["content"]] == [
        "Grafana is https://grafana.ops.acme.dev, and node groups for every cluster come from modules/eks-nodegroup."
    ]


# -- trial 19: corrections said as a team says them ----------------------------------------------


@pytest.mark.parametrize(
    ("first", "second", "old", "new"),
    [
        (  # a value taken back as it was said, then a port changed without "port is"
            "mlflow registry is at mlflow.ml.internal:5001 — scratch that, its 5000. 5001 was the old staging one",
            "mlflow moved behind the new ingress, its on port 8080 now.",
            "mlflow registry is at mlflow.ml.internal:5000.",
            "its on port 8080 now",
        ),
        (  # a schedule's new time, with its reason after "since"
            "Orchestration is airflow, teh daily_features dag runs 04:00 utc (`0 4 * * *`).",
            "daily_features runs at 06:30 utc now (`30 6 * * *`), upstream export lands later since the dagster port",
            "runs 04:00 utc",
            "runs at 06:30 utc now",
        ),
        (  # the old port retired as "8081 那个": the port goes, who owns it stays until that changes too
            "先交代下背景：settlement-svc 跑在 8081 端口，负责人是王建国，我们都叫他老王，有事先找他。",
            "哦对，端口改了，现在是 9091，8081 那个已经不用了，之前跟网关的端口冲突。",
            "跑在 8081 端口",
            "现在是 9091",
        ),
    ],
)
def test_a_correction_as_a_team_says_it_closes_what_it_corrects(app, tmp_path, first, second, old, new):
    every = said_twice(app, tmp_path, first, second)
    assert now_current(every, new), [(m["content"], m.get("superseded_by")) for m in every]
    assert not now_current(every, old), [(m["content"], m.get("superseded_by")) for m in every]


def test_a_value_taken_back_as_it_is_said_is_stored_as_meant():
    assert H._self_corrected("registry at mlflow.ml.internal:5001 — scratch that, its 5000. ok") == (
        "registry at mlflow.ml.internal:5000. ok"
    )
    assert H._self_corrected("端口是 8081，不对，是 8082。") == "端口是 8082。"
    assert H._self_corrected("we run 3 replicas, sorry for the delay") == "we run 3 replicas, sorry for the delay"


def test_whose_a_service_is_said_after_its_port_stays_until_the_owner_changes(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [("user", "先交代下背景：settlement-svc 跑在 8081 端口，负责人是王建国，我们都叫他老王，有事先找他。")],
        [
            ("user", "哦对，端口改了，现在是 9091，8081 那个已经不用了，之前跟网关的端口冲突。"),
            ("assistant", "好的"),
            ("user", "另外 settlement-svc 现在归小林管了，老王调去风控那边了。"),
        ],
    )
    assert not now_current(every, "王建国"), [(m["content"], m.get("superseded_by")) for m in every]
    assert [m["subject"] for m in now_current(every, "归小林管")] == ["settlement-svc"]
    assert R.owner_of("settlement-svc 跑在 8081 端口，负责人是王建国。") == ("settlement-svc", "王建国")


def test_an_option_turned_down_then_taken_then_taken_back_leaves_the_last_word_current(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [
            ("user", "ok so training costs are insane this month, any ideas"),
            (
                "assistant",
                "Biggest lever is the purchase model. I'd suggest moving training to spot with checkpoint+resume.",
            ),
            ("user", "nah, not now. we have the quarterly eval runs next 2 weeks, cant risk preemptions"),
        ],
        [
            ("user", "ok fine lets do spot for the training jobs. eval runs are done"),
            ("assistant", "Great. Plan: a gpu-a100-spot node pool, checkpoint every 30 min to s3."),
            ("user", "reason is the cost report came in and finance is yelling, spot saves like 65% on p4d"),
        ],
        [
            (
                "user",
                "changed my mind on spot instances. preemptions killed the 3 day run twice. back to on-demand for "
                "training, spot only for the hparam sweeps",
            )
        ],
    )
    current = [m["content"] for m in every if not m.get("superseded_by")]
    assert current == [
        "Changed my mind on spot instances. Preemptions killed the 3 day run twice. Back to on-demand for "
        "training, spot only for the hparam sweeps."
    ], current
    taken = next(m for m in every if "lets do spot" in m["content"].casefold())
    assert "finance is yelling" in taken["content"]  # its reason, said in the user's next message


KAFKA_PICKED = [
    ("user", "下游通知这块，用 Kafka 还是 RabbitMQ？老的对账通知走的是 RabbitMQ"),
    (
        "assistant",
        "两个选项：\n- **Kafka**：可按 offset 回放；\n- **RabbitMQ**：现有链路在用，消费后即删除。\n\n我建议新链路用 Kafka。",
    ),
    ("user", "行，按你说的来，用 Kafka。RabbitMQ 以后别再用了，新的都走 Kafka。topic 就叫 settle.batch.created。"),
]
OSS_PICKED = [
    ("user", "对账文件放哪比较好？现在都堆在 NFS 上，快满了"),
    (
        "assistant",
        "三个选项：\n1. **阿里云 OSS**：按量付费；\n2. **自建 MinIO**：要自己运维；\n3. **继续用 NFS 扩容**。\n\n我推荐 OSS。",
    ),
    ("user", "行，按你说的来，用 OSS。"),
    ("assistant", "好，对账文件迁到 OSS。"),
    ("user", "原因的话，我们本来就在阿里云上，走内网不出公网流量，MinIO 还得自己运维，没人力。"),
]


def test_two_decisions_agreed_to_in_the_same_words_are_two_decisions(app, tmp_path):
    every = sessions(app, tmp_path, KAFKA_PICKED, OSS_PICKED)
    assert now_current(every, "用 Kafka"), [(m["content"], m.get("superseded_by")) for m in every]
    oss = now_current(every, "用 OSS")
    assert [m["layer"] for m in oss] == ["decision"] and "没人力" in oss[0]["content"]  # its reason, said after
    assert now_current(every, "topic 就叫 settle.batch.created")  # a name given in code is a fact


@pytest.mark.parametrize(
    ("said", "old"),
    [
        (  # the cron said again, unchanged, then changed: the old cron closes, the runbook line beside it stays
            [
                [
                    ("user", "对账任务的 cron 是 `30 2 * * *`，每天凌晨两点半跑，别动它。"),
                    ("user", "适用范围：每日 23:00（北京时间）日切、凌晨对账、银行文件拉取、差错处理。"),
                ],
                [("user", "王哥那边说对账 cron 还是凌晨两点半，没变")],
                [
                    (
                        "user",
                        "对账 cron 挪到凌晨 3:15 了（`15 3 * * *`），两点半跟银行文件到达时间撞了，经常取不到文件。",
                    )
                ],
            ],
            "`30 2 * * *`",
        ),
        (  # taken back in English inside Chinese
            [
                [("user", "feature flag 先用 Firebase Remote Config 吧, 反正已经接了 Firebase, 不想再多一个 vendor.")],
                [("user", "Remote Config 那个决定 revert 掉吧, 我们改用 LaunchDarkly 做 feature flag.")],
            ],
            "先用 Firebase Remote Config",
        ),
        (  # a decision taken back by what it was about
            [
                [
                    ("user", "对账差异怎么处理比较好？运营天天在手工处理小额差异"),
                    ("assistant", "建议小额差异自动冲正，大额走人工审核。"),
                    ("user", "小于 1 块钱的自动冲正，大于的走人工审核。就这么定了。"),
                ],
                [("user", "还有，自动冲正那个决定撤回吧，上周自动冲错了两笔，全部改回人工审核。")],
            ],
            "小于 1 块钱的自动冲正",
        ),
    ],
)
def test_what_a_later_session_changes_is_closed_and_nothing_beside_it(app, tmp_path, said, old):
    every = sessions(app, tmp_path, *said)
    closed = [m["content"] for m in every if m.get("superseded_by")]
    assert len(closed) == 1 and old in closed[0], [(m["content"], m.get("superseded_by")) for m in every]
    assert not any("还是凌晨两点半" in m["content"] for m in every)  # said again: a repeat, not a memory


@pytest.mark.parametrize(
    ("first", "second", "stored"),
    [
        (
            "Feature store is feast, online store is redis at feast-redis.ml.internal:6379.",
            "Feast online store is still redis on 6379 btw, nothing changed there.",
            1,  # said again: a repeat
        ),
        (
            "银行文件一般在凌晨 2:00~3:00 之间陆续到达，个别银行会晚到 4 点以后。",
            "周二周四晚上 8 点以后的发布窗口照旧。",
            2,
        ),
    ],
)
def test_something_said_to_be_unchanged_closes_nothing(app, tmp_path, first, second, stored):
    every = said_twice(app, tmp_path, first, second)
    assert len(every) == stored and not [m for m in every if m.get("superseded_by")], [
        (m["content"], m.get("superseded_by")) for m in every
    ]


def test_a_port_change_closes_every_address_of_the_subject_on_the_old_port(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [("user", "mlflow registry is at mlflow.ml.internal:5000.")],
        [("user", "Where things are: MLflow tracking + registry: mlflow.ml.internal:5000, backend is RDS postgres.")],
        [("user", "mlflow moved behind the new ingress, its on port 8080 now.")],
    )
    assert not now_current(every, ":5000"), [(m["content"], m.get("superseded_by")) for m in every]
    assert now_current(every, "Backend is RDS postgres")  # said beside it, still true


def test_moving_off_a_tool_retires_it(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "Orchestration is airflow, the daily_features dag runs 04:00 utc.",
        "and we're moving off airflow. new pipelines go in dagster, daily_features gets ported first",
    )
    assert not now_current(every, "Orchestration is airflow"), [(m["content"], m.get("superseded_by")) for m in every]


def test_an_option_ruled_out_by_name_is_the_reason_of_the_pick_that_follows(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [
            ("user", "幂等这块你有什么方案？现在渠道重复回调会导致重复入账"),
            (
                "assistant",
                "有三种常见做法：\n\n1. **Redis SETNX 分布式锁**：实现快，但锁和账务不在一个事务里。\n"
                "2. **数据库唯一索引**：重复插入直接报唯一冲突，和账务在同一个事务里。\n"
                "3. **独立幂等表**：最灵活，但多一张表、多一次写。\n\n我倾向 2 或 3。",
            ),
            ("user", "Redis 那个不考虑，上次 Redis 主从切换丢过锁。3 会不会太重了？"),
            ("assistant", "对你们现在的量来说 3 确实偏重。2 已经够用，而且和入账在同一个事务里，最稳。"),
            ("user", "那就用唯一索引吧，就这么定了。"),
        ],
    )
    decided = [m["content"] for m in every if m["layer"] == "decision"]
    assert len(decided) == 1 and "唯一索引" in decided[0] and "主从切换丢过锁" in decided[0], decided


def test_sympathy_for_a_problem_outside_the_project_is_no_experience():
    found = H.extract(
        turns(
            ("user", "lol the coffee machine on 3 is broken again"),
            ("assistant", "Rough. Hope someone fixes it before the afternoon slump."),
        ),
        scope="/p/x",
    )
    assert found == []
    kept = H.extract(
        turns(
            ("user", "why does the nightly export keep failing?"),
            (
                "assistant",
                "The export job reads from the replica, which lags up to an hour at night, so the rows are not there yet.",
            ),
        ),
        scope="/p/x",
    )
    assert [c.layer for c in kept] == ["experience"]


def test_a_change_closes_the_runbook_rows_holding_the_same_stale_value_and_nothing_else(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [
            ("user", "对账任务的 cron 是 `30 2 * * *`，每天凌晨两点半跑，别动它。"),
            ("user", "对账任务：地址 cron `30 2 * * *`；说明 在 settle-job-01 上由 crond 触发。"),
            ("user", "备份任务的 cron 也是 `30 2 * * *`。"),
        ],
        [("user", "对账 cron 挪到凌晨 3:15 了（`15 3 * * *`），两点半跟银行文件到达时间撞了，经常取不到文件。")],
    )
    assert [m["content"] for m in now_current(every, "`30 2 * * *`")] == ["备份任务的 cron 也是 `30 2 * * *`。"]
    # the row's other cell stays, with the row's name
    assert now_current(every, "对账任务：说明 在 settle-job-01 上由 crond 触发")


def test_a_name_said_to_be_renamed_is_retired_wherever_it_is_held(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [
            ("user", "Clickstream comes in on kafka topic events.raw.v1."),
            ("user", "Runbook: if a feature suddenly has a lot of nulls, check the topic lag first (`events.raw.v1`)."),
        ],
        [("user", "events.raw.v1 got renamed, its clickstream.raw.v2 now.")],
    )
    assert [m["content"] for m in now_current(every, "events.raw.v1")] == [
        "events.raw.v1 got renamed, its clickstream.raw.v2 now."
    ]


def test_a_correction_that_names_nothing_is_about_what_it_closes(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "先交代下背景：settlement-svc 跑在 8081 端口。",
        "哦对，端口改了，现在是 9091，8081 那个已经不用了。",
    )
    [new] = now_current(every, "现在是 9091")
    assert new["subject"] == "settlement-svc"
    found = app.search("settlement-svc 端口")["results"]
    assert found and found[0]["id"] == new["id"]


@pytest.mark.parametrize(
    "said", ["你把这个写进 MR 描述里。", "你去看下日志", "你们组的 owner 是谁", "对账任务的端口是多少"]
)
def test_a_task_put_to_the_assistant_or_a_question_without_its_mark_is_no_memory(said):
    assert R.classify_user(said) is None


def test_a_lesson_drawn_after_the_fix_worked_joins_the_cause_it_was_learnt_from():
    found = H.extract(
        turns(
            ("user", "the 2-node run hangs at the first all-reduce"),
            (
                "assistant",
                "Root cause: NCCL_SOCKET_IFNAME is not set and the pods run with hostNetwork, so NCCL picked "
                "`docker0` as its bootstrap interface on every node.",
            ),
            ("user", "ok fix it"),
            ("assistant", "Set NCCL_SOCKET_IFNAME=eth0 in the chart."),
            ("user", "k rerun"),
            (
                "assistant",
                "Multi-node run is up on EFA and stepping. Lesson: on hostNetwork GPU pods always pin "
                "NCCL_SOCKET_IFNAME and request EFA.",
            ),
        ),
        scope="/p/x",
    )
    [exp] = [c.content for c in found if c.layer == "experience"]
    assert exp.startswith("Root cause: NCCL_SOCKET_IFNAME") and exp.endswith(
        "always pin NCCL_SOCKET_IFNAME and request EFA."
    )
    assert "stepping" not in exp


# -- trial 21: a mobile team writing code-switched Chinese, a data warehouse team writing English -------


@pytest.mark.parametrize(
    ("asked", "taken", "declined", "decided"),
    [
        (
            [
                (
                    "assistant",
                    "一个比较大的建议: DTO 经常不一致. 可以考虑用 Kotlin Multiplatform (KMP) 把 networking 层共享出来.",
                ),
                ("user", "KMP 先不搞. team 里没人熟 KMP, 而且 Q2 大版本前上这个风险太大. 等 Q2 release 之后再说."),
            ],
            [("user", "KMP 那个想法, 现在可以搞了. Q2 release 已经出去了. 先从 networking 模块开始, 用 Ktor client.")],
            "暂不用 Kotlin Multiplatform (KMP) 把 networking 层共享出来：team 里没人熟 KMP",
            "KMP 那个想法, 现在可以搞了",
        ),
        (
            [
                (
                    "assistant",
                    "A lot of our Airflow code is glue around dbt. Worth considering a move from Airflow to Dagster.",
                ),
                ("user", "not now. we have 140 DAGs and nobody has time before Q3 close. revisit after."),
            ],
            [("user", "and Dagster — we're doing it. Q3 close is done, and the Airflow upgrade was painful enough.")],
            "Not now: a move from Airflow to Dagster, because we have 140 DAGs",
            "Dagster — we're doing it",
        ),
    ],
)
def test_an_option_suggested_put_off_and_later_taken_is_two_decisions_the_later_current(
    app, tmp_path, asked, taken, declined, decided
):
    every = sessions(app, tmp_path, asked, taken)
    now = now_current(every, decided)
    assert [m["layer"] for m in now] == ["decision"], [(m["content"], m.get("superseded_by")) for m in every]
    closed = [m for m in every if declined in m["content"]]
    assert [(m["layer"], m.get("superseded_by")) for m in closed] == [("decision", now[0]["id"])]
    assert not any("agreed to the proposal" in m["content"] for m in every)  # put off is agreed to by no one


@pytest.mark.parametrize(
    ("said", "layer"),
    [
        ("feature flag 先用 Firebase Remote Config 吧, 反正已经接了 Firebase, 不想再多一个 vendor.", "decision"),
        ("we're going with SCD2 snapshots for dim_customer.", "decision"),
        ("release train 每周二 cut branch.", "fact"),
        ("TODO: 下周一提醒我跟丽姐做一下 iOS release 交接的 knowledge transfer", None),
        ("remind me friday to write the Dagster migration update for the eng all-hands", None),
    ],
)
def test_a_decision_a_schedule_or_a_reminder_said_in_one_line(app, tmp_path, said, layer):
    now = stored(app, tmp_path, ("user", said), ("assistant", "OK."))
    kept = [m for m in app.list(limit=10)["memories"]]
    assert [m["layer"] for m in kept] == ([layer] if layer else []), now


def test_a_cause_and_lesson_in_bold_labels_are_one_experience():
    found = H.extract(
        turns(
            ("user", "列表接口 OOM 了，帮我看看"),
            (
                "assistant",
                "**Root cause**: 上周重构把 `limit` 的默认值去掉了，客户端不传 limit 时一次查全表。\n\n"
                "**教训**: server 端必须自己强制 page size 上限，不能相信客户端传的 limit。",
            ),
        ),
        scope="/p/x",
    )
    assert [c.content for c in found if c.layer == "experience"] == [
        "Root cause: 上周重构把 `limit` 的默认值去掉了，客户端不传 limit 时一次查全表。"
        "教训: server 端必须自己强制 page size 上限，不能相信客户端传的 limit。"
    ]


def test_a_rename_closes_the_name_not_the_lesson_nor_what_was_said_beside_it(app, tmp_path):
    every = sessions(
        app,
        tmp_path,
        [
            (
                "user",
                "Context: we run dbt on Snowflake (account acme-prod.us-east-1), prod runs use the TRANSFORM_WH "
                "warehouse. dbt is pinned to 1.7.x.",
            ),
            ("user", "why is the looker dashboard so slow at 9am?"),
            (
                "assistant",
                "Root cause: Looker PDT rebuilds run on TRANSFORM_WH at 9am, with the dbt prod run, so they queue "
                "behind it. Lesson: BI and transformation must never share a warehouse.",
            ),
        ],
        [("user", "ok a few updates. TRANSFORM_WH got renamed to DBT_PROD_WH (infra did a naming cleanup).")],
    )
    assert now_current(every, "Lesson: BI and transformation must never share a warehouse")
    assert now_current(every, "account acme-prod.us-east-1). Dbt is pinned to 1.7.x.")
    assert not now_current(every, "prod runs use the TRANSFORM_WH")


def test_a_changed_value_closes_the_fact_that_holds_the_same_number_for_something_else(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "Android minSdk 是 24, 用到 API 26 以上的东西必须加 SDK_INT check.",
        "还有 Android minSdk 现在是 26 了, 上周 product 批了, 可以把那些 SDK_INT < 26 的 check 清一清.",
    )
    assert not now_current(every, "minSdk 是 24"), [(m["content"], m.get("superseded_by")) for m in every]


def test_an_ok_that_defers_the_choice_decides_nothing_and_i_would_suggest_is_a_proposal(app, tmp_path):
    deferred = H.extract(
        turns(
            ("assistant", "Review 意见: §8 Q2 建议 cursor 里加 v:1, 成本很低."),
            ("user", "好的, 这几个点我会跟通哥对一下."),
            ("assistant", "I would suggest moving the job to the batch pool."),
            ("user", "ok, let me check with Dana first"),
        ),
        scope="/p/x",
    )
    assert [c for c in deferred if c.layer == "decision"] == []
    agreed = H.extract(
        turns(
            (
                "assistant",
                "I would suggest moving the export job to the batch pool, because it has idle cores at night.",
            ),
            ("user", "ok do it"),
        ),
        scope="/p/x",
    )
    assert [c.layer for c in agreed] == ["decision"] and "batch pool" in agreed[0].content


# -- trial 22: a game backend team writing Chinese, a security team writing English ------------------


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        (
            [
                (
                    "assistant",
                    "Two options:\n1. External Secrets Operator (ESO), syncs from Vault.\n2. Vault Agent sidecar injector.",
                ),
                ("user", "Option 1."),
            ],
            [
                (
                    "user",
                    "Priya here. Scratch ESO. we're moving to the Vault Agent sidecar injector, because ESO copies secrets into etcd.",
                )
            ],
            "Option 1.",
            "Scratch ESO",
        ),
        (
            [
                ("assistant", "两个选项：\n1. Elo：简单，策划好理解。\n2. Glicko-2：有 RD，新玩家收敛快。\n我倾向 2。"),
                ("user", "用2吧。"),
            ],
            [("user", "Glicko-2 算起来太麻烦，策划看不懂 RD，我们决定回到 Elo，K 值取 32。")],
            "用2吧",
            "回到 Elo",
        ),
    ],
)
def test_a_decision_scratched_or_complained_of_later_is_closed(app, tmp_path, first, later, old, new):
    every = sessions(app, tmp_path, first, later)
    [now] = now_current(every, new)
    assert [m.get("superseded_by") for m in every if old in m["content"]] == [now["id"]], [
        (m["content"], m.get("superseded_by")) for m in every
    ]


@pytest.mark.parametrize(
    ("first", "second", "old", "kept"),
    [
        (
            "Facts you should keep: DB credentials rotate every 30 days. Audit logs go to the S3 bucket acme-audit-logs, retention 400 days.",
            "compliance came back on audit retention: it's 7 years, not 400 days.",
            "retention 400 days",
            "DB credentials rotate every 30 days",
        ),
        (
            "Facts you should keep: DB credentials rotate every 30 days.",
            "We're tightening DB credential rotation to every 7 days, effective now.",
            "rotate every 30 days",
            None,
        ),
    ],
)
def test_a_value_corrected_in_passing_closes_the_right_fact(app, tmp_path, first, second, old, kept):
    every = said_twice(app, tmp_path, first, second)
    assert not now_current(every, old), [(m["content"], m.get("superseded_by")) for m in every]
    assert kept is None or now_current(every, kept)


def test_a_users_plan_to_use_something_agreed_to_is_a_decision():
    found = H.extract(
        turns(
            ("user", "排行榜我想直接用 Redis sorted set，每个赛季一个 key，赛季结束落一份到 MySQL。"),
            ("assistant", "同意，sorted set 做排行榜是标准做法。就这么定。"),
        ),
        scope="/p/x",
    )
    assert [c.layer for c in found] == ["decision"] and "Redis sorted set" in found[0].content


def test_a_change_of_one_owner_among_several_in_one_chinese_sentence_keeps_the_others(app, tmp_path):
    every = said_twice(
        app,
        tmp_path,
        "团队分工：反作弊是老陈负责，排行榜是小周，matchmaking 的运维是 Kevin。",
        "小周调去反作弊组了，排行榜现在归 Kevin 管。",
    )
    assert now_current(every, "反作弊是老陈负责") and now_current(every, "matchmaking 的运维是 Kevin")
    assert not now_current(every, "排行榜是小周"), [(m["content"], m.get("superseded_by")) for m in every]
    assert R.owner_of("数据库是 MySQL。") is None and R.owner_of("他的名字是小王") is None


def test_ruling_one_option_out_while_choosing_another_is_still_a_decision():
    found = H.extract(
        turns(("assistant", "两个选项：1. Kafka 2. RabbitMQ"), ("user", "不考虑 Kafka 了，就用 RabbitMQ，运维熟。")),
        scope="/p/x",
    )
    assert [c.layer for c in found] == ["decision"]
