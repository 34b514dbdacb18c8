"""Through the CLI as a team uses it (a blind trial's findings, trial 17): a person introduced with
labelled names in brackets answers to every one of them, a memory naming them only by a login or
a nickname is theirs whichever was stored first, a passive recall of a long runbook quotes the step
asked about, and a runbook shown in a terminal keeps its commands whole."""

from __future__ import annotations

import pytest
from cli_helpers import add, project, run, run_json  # noqa: F401  (project: autouse fixture)

from memory.lang import mentions
from memory.retrieval import context

ROSTER = [
    "陈晓雨（小雨，英文名 Rain，登录名 xchen）负责 relay-api 和 relay-worker 两个服务。",
    "王磊（大王，登录名 lwang）是 SRE 负责人，管理所有 Kubernetes 集群。",
    "高芳（芳姐，login fgao）is the release manager for every prod release.",
    "Priya Natarajan (login pnatarajan, known as PN) owns eta-predictor.",
    "Zhou Ming (周明, 老周, login mzhou) is the routing tech lead.",
]


@pytest.mark.parametrize(
    ("said", "name", "aliases"),
    [
        (ROSTER[0], "陈晓雨", {"小雨", "Rain", "xchen"}),
        (ROSTER[1], "王磊", {"大王", "lwang"}),
        (ROSTER[2], "高芳", {"芳姐", "fgao"}),
        (ROSTER[3], "Priya Natarajan", {"pnatarajan", "PN", "Priya"}),
        (ROSTER[4], "Zhou Ming", {"周明", "老周", "mzhou"}),
    ],
)
def test_labelled_names_in_brackets_are_aliases(said, name, aliases):
    (found,) = mentions.aliases_in(said)
    assert found[0] == name and set(found[1]) == aliases  # (Zhou is Zhou Ming's surname: no alias)


@pytest.mark.parametrize("order", ["roster first", "roster last"])
def test_a_login_or_nickname_alone_links_the_memory_to_the_person(capsys, order):
    alone = ["On-call rota: mzhou takes relay pages on Tuesdays, xchen on Fridays.", "芳姐每周四晚上做发布演练。"]
    for said in ROSTER + alone if order == "roster first" else alone + ROSTER:
        add(capsys, said)
    for alias, who, memory in [
        ("mzhou", "Zhou Ming", alone[0]),
        ("小雨", "陈晓雨", alone[0]),
        ("fgao", "高芳", alone[1]),
    ]:
        code, out, err = run(capsys, "entity", alias)
        assert code == 0, err
        assert who in out.splitlines()[0] and memory[:40] in out, out


def test_a_passive_recall_of_a_long_runbook_quotes_the_step_asked_about():
    body = "\n\n".join(
        f"## {n}. Step {n}\n\nRun the usual checks for section {n} and tell the channel when they pass."
        for n in range(1, 40)
    )
    runbook = (
        body
        + "\n\n## 40. Scale relay-worker on a growing backlog\n\nScale it: `kubectl scale deploy/relay-worker --replicas=24`.\n"
    )
    for n in range(41, 45):
        runbook += f"\n## {n}. Step {n}\n\nRun the usual checks for section {n} and tell the channel when they pass.\n"
    span = context.focus(runbook, None, "how many replicas for relay-worker when the backlog keeps growing?")
    assert span is not None and "--replicas=24" in runbook[span[0] : span[1]]
    # a full line's worth, cut between words (a cut by count alone had ended one on "config/appl")
    assert context.MAX_ITEM_CHARS - 20 <= span[1] - span[0] <= context.MAX_ITEM_CHARS
    assert not runbook[span[1] - 1 : span[1] + 1].isalnum() and not runbook[span[0] - 1 : span[0] + 1].isalnum()
    assert context.focus("short text", None, "anything") is None  # a short memory is shown whole


def test_a_part_of_a_long_memory_is_quoted_with_ellipses_where_it_cuts_a_sentence():
    text = "Intro line.\n" + "The app reads its port from config/application.yaml and then " * 12 + "ends here."
    assert context._with_ellipses(text, (12, 300)).startswith("The app reads")  # a line's start
    assert context._with_ellipses(text, (12, 300)).endswith("…")  # inside a sentence
    assert context._with_ellipses(text, (16, 300)).startswith("…app reads")
    assert context._with_ellipses(text, (12, len(text))).endswith("ends here.")  # the end: nothing more


def test_a_runbook_in_the_terminal_keeps_commands_whole(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "70")
    command = "curl -X POST http://connect.internal:8083/connectors/relay-cdc/restart?includeTasks=true"
    filler = "".join(
        f"## {n}. Step {n}\n\nRun the usual checks for section {n} and tell the channel when they pass.\n\n"
        for n in range(1, 60)
    )
    add(  # a runbook long enough to be searched by its parts
        capsys,
        filler
        + "## Restart the relay-cdc connector after a failover\n\nThe logical slot is gone with the old primary, so\n"
        f"recreate it first and then restart the connector:\n\n```\n{command}\n```\n\n" + filler,
    )
    code, out, _ = run(capsys, "search", "restart the relay-cdc connector", "--limit", "1")
    assert code == 0
    lines = [line.strip() for line in out.splitlines()]
    assert command in lines, out  # on one line, as written, to copy
    # the writer's own line break ("…the old primary, so" / "recreate it…") is gone: the paragraph is rewrapped
    assert not any(line.endswith("with the old primary, so") for line in lines), out
    assert "with the old primary, so recreate it first" in " ".join(lines)
    assert "" in lines  # a blank line still ends a paragraph


def test_a_search_by_a_login_finds_what_says_only_the_login(capsys):
    for said in ROSTER:
        add(capsys, said)
    rota = add(capsys, "On-call rota: mzhou takes relay pages on Tuesdays, xchen on Fridays.")
    add(capsys, "The relay-api dashboard lives in Grafana under Relay / Overview.")
    found = run_json(capsys, "search", "xchen", "--limit", "5")["results"]
    (hit,) = [r for r in found if r["id"] == rota]
    assert hit["channels"].get("bm25"), hit  # its own word for her, not only the link to her


def test_chinese_prose_wraps_to_the_column_and_paragraphs_stay_apart():
    from memory.cli import common

    text = (
        "补录使用脚本 tools/replay_gps.py，从冷存储桶读取原始上报数据，重新写入轨迹库，确认数量合理之后再正式执行。" * 3
    )
    lines = common._fill(text, 40)
    assert all(sum(map(common._cells, line)) <= 40 for line in lines), lines
    assert any("tools/replay_gps.py" in line for line in lines)  # a path is never cut in two
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


def test_inline_code_is_never_cut_and_a_part_inside_a_code_block_stays_code():
    from memory.cli import common, program

    lines = common._fill("then restart it with `sudo systemctl restart pgbouncer` on that node", 30)
    assert any("`sudo systemctl restart pgbouncer`" in line for line in lines), lines
    content = "Run:\n\n```\nkubectl -n dispatch scale deploy/dispatch-api --replicas=12\npatronictl reinit pg-dispatch-cluster pg-dispatch-prod\n```\n\nThen check the lag."
    start = content.index("patronictl")
    text = program._part_text({"content": content, "part": {"start": start, "end": len(content)}})
    assert text.startswith("```\npatronictl")  # the part opens inside the block: printed as code


def test_a_login_in_brackets_or_before_a_comma_is_a_name_key():
    # Trial 17: "Owner: database admin (hli)." was not linked to Li Hao: one word in brackets kept
    # its opening bracket as a key ("(hli").
    keys = mentions.name_keys("Owner: database admin (hli), on-call backup: xchen.")
    assert {"hli", "xchen", "owner", "on-call"} <= set(keys)
