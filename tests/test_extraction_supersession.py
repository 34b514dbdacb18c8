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
