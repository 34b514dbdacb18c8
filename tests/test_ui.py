"""`maple-memory ui` (memory/cli/ui): the page's server over real HTTP, and the page itself in a real
headless Chromium driven by Playwright, against a store this file fills (real hooks, a real
harvest). Screenshots of each view are kept as artefacts: in $MAPLE_UI_SCREENSHOTS when set
(CI keeps that folder), else in the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from memory.app import Memories
from memory.cli.ui import web
from memory.config import Config
from memory.embed import HashEmbedder
from memory.scope import project_scope
from memory.store import Store

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)

# -- a store worth looking at -----------------------------------------------------------------------


def _transcript_line(role: str, text: str, session: str, cwd: str, n: int) -> str:
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return json.dumps(
        {
            "parentUuid": None if n == 0 else f"u{n - 1}",
            "isSidechain": False,
            "type": role,
            "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
            "uuid": f"u{n}",
            "timestamp": stamp,
            "cwd": cwd,
            "sessionId": session,
            "userType": "external",
        }
    )


def _run_hook(event: str, payload: dict[str, Any], home: Path) -> subprocess.CompletedProcess[bytes]:
    """A hook as Claude Code runs it: its JSON on stdin to hooks/run.py, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env.update(MAPLE_HOME=str(home), MAPLE_MODEL="hash-64")
    return subprocess.run(
        [sys.executable, str(ROOT / "hooks" / "run.py"), event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        timeout=120,
    )


class Filled:
    """A project's memories (an edit history, a supersession, a decision that failed), a global
    one in Chinese, another project's, and a session: its brief, a prompt the hook answered, and
    a harvest of its transcript."""

    def __init__(self, store: Store, home: Path, folder: Path):
        self.store, self.folder = store, folder
        self.project = project_scope(str(folder))
        app = self.app = Memories(store, self.project)
        old = app.add("Billing runs on PostgreSQL 15", subject="billing db")["memory"]
        self.new = app.update(old["id"], content="Billing runs on PostgreSQL 16", mode="supersede")["memory"]
        self.old = old
        self.decision = app.decide("Celery for scheduled reminders", "RQ had no cron", alternatives=["RQ"])["memory"]
        app.outcome(self.decision["id"], "failed", "Celery beat double-fired reminders after a restart")
        self.chinese = app.add("用户喜欢深色主题，编辑器用 Vim", scope="global")["memory"]
        Memories(store, "/elsewhere/other-project").add("The other project's secret port is 6000")
        self.session = "sess-ui-1"
        self.prompt = "Which port does the test database listen on?"
        transcript = folder / "session.jsonl"
        # As Claude Code writes it: the prompt, then the hooks run, then the rest of the turn.
        transcript.write_text(_transcript_line("user", self.prompt, self.session, str(folder), 0) + "\n")
        base = {"session_id": self.session, "cwd": str(folder), "transcript_path": str(transcript)}
        brief = _run_hook("session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, home)
        # Stored after the brief (the brief shows a small store whole): new to the session at its prompt.
        self.port = app.add("The test database listens on port 5433", category="setup", tags=["db"])["memory"]
        app.update(self.port["id"], content="The test database listens on port 5433, not 5432")
        surfaced = _run_hook(
            "user-prompt-submit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": self.prompt}, home
        )
        assert brief.returncode == 0 and surfaced.returncode == 0, (brief.stderr, surfaced.stderr)
        assert b"5433" in surfaced.stdout  # the hook put the memory in front of the prompt
        later = [
            ("assistant", "Port 5433. Noted: we always use uv here, never plain pip install."),
            ("user", "Remember: we always use uv here, never plain pip install."),
        ]
        with transcript.open("a", encoding="utf-8") as f:
            for n, (role, text) in enumerate(later, 1):
                f.write(_transcript_line(role, text, self.session, str(folder), n) + "\n")
        self.harvest = app.harvest(str(transcript), scope=self.project)


@pytest.fixture
def filled(config: Config, home: Path, tmp_path: Path) -> Iterator[Filled]:
    folder = tmp_path / "project"
    folder.mkdir()
    with Store.open(config, HashEmbedder(64)) as store:
        yield Filled(store, home, folder)


@pytest.fixture
def served(filled: Filled) -> Iterator[web.Running]:
    doctor = {"ok": True, "checks": [{"name": "fts5", "ok": True, "detail": "FTS5 works", "fix": ""}]}
    running = web.Running(filled.app, doctor=lambda: doctor, label=f"{filled.project} and global").start()
    yield running
    running.stop()


def http(
    running: web.Running, path: str, *, method: str = "GET", body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{running.port}{path}", data=data, method=method)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()


def token(running: web.Running) -> dict[str, str]:
    return {"X-Maple-Token": running.token}


SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}

# -- the server over HTTP ---------------------------------------------------------------------------


def test_a_request_without_the_token_is_refused(served):
    status, body = http(served, "/api/list")
    assert status == 403 and "token" in body["error"]
    assert http(served, "/")[0] == 403
    assert http(served, "/static/app.js")[0] == 403
    assert http(served, "/api/list", headers={"X-Maple-Token": "wrong"})[0] == 403
    assert http(served, f"/?t={served.token}")[0] == 200


def test_a_request_for_another_host_name_is_refused_so_dns_rebinding_reaches_nothing(served):
    status, body = http(served, "/api/list", headers={**token(served), "Host": f"evil.example:{served.port}"})
    assert status == 403 and "127.0.0.1" in body["error"]


def test_a_cross_site_post_is_refused_even_with_the_cookie(served, filled):
    mid = filled.port["id"]
    cookie = {"Cookie": f"{web.COOKIE}={served.token}"}
    assert http(served, f"/api/memory/{mid}/forget", method="POST", body={}, headers=cookie)[0] == 403
    for bad in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}):
        status, body = http(
            served, f"/api/memory/{mid}/forget", method="POST", body={}, headers={**token(served), **bad}
        )
        assert status == 403 and "another site" in body["error"]
    assert filled.app.get([mid])["memories"][0]["deleted_at"] is None  # nothing happened
    origin = {"Origin": f"http://127.0.0.1:{served.port}", **SAME_ORIGIN}
    status, body = http(
        served, f"/api/memory/{mid}/forget", method="POST", body={}, headers={**token(served), **origin}
    )
    assert status == 200 and body["action"] == "archived"


def test_changes_are_posts_only(served, filled):
    status, _ = http(served, f"/api/memory/{filled.port['id']}/forget", headers=token(served))
    assert status == 405


def test_every_answer_carries_a_policy_that_loads_nothing_from_elsewhere(served):
    req = urllib.request.Request(f"http://127.0.0.1:{served.port}/?t={served.token}")
    with urllib.request.urlopen(req, timeout=30) as r:
        headers = r.headers
        page = r.read().decode()
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["Referrer-Policy"] == "no-referrer"
    assert "SameSite=strict" in headers["Set-Cookie"] and "HttpOnly" in headers["Set-Cookie"]
    assert "http" not in page.replace('content="no-referrer"', "").split("<body>")[0].replace("http-equiv", "")


def test_deleting_for_good_needs_the_id_as_confirmation(served, filled):
    mid = filled.port["id"]
    status, body = http(
        served, f"/api/memory/{mid}/delete", method="POST", body={}, headers={**token(served), **SAME_ORIGIN}
    )
    assert status == 400 and f"confirm: {mid}" in body["error"]
    status, body = http(
        served,
        f"/api/memory/{mid}/delete",
        method="POST",
        body={"confirm": mid},
        headers={**token(served), **SAME_ORIGIN},
    )
    assert status == 200 and body["action"] == "purged"
    assert http(served, f"/api/memory/{mid}", headers=token(served))[0] == 404


def test_another_projects_memories_stay_out_of_the_page(served, filled):
    status, found = http(served, "/api/search?q=secret+port+6000", headers=token(served))
    assert status == 200 and all("6000" not in r["content"] for r in found["results"])
    listed = http(served, "/api/list?status=all&limit=100", headers=token(served))[1]
    assert {m["scope"] for m in listed["memories"]} == {filled.project, "global"}
    other = Memories(filled.store, "/elsewhere/other-project").list()["memories"][0]["id"]
    assert http(served, f"/api/memory/{other}", headers=token(served))[0] == 404


def test_all_projects_shows_every_project(filled):
    running = web.Running(Memories(filled.store, filled.project, all_projects=True)).start()
    try:
        listed = http(running, "/api/list?limit=100", headers=token(running))[1]
    finally:
        running.stop()
    assert "/elsewhere/other-project" in {m["scope"] for m in listed["memories"]}


def test_bad_input_is_answered_with_what_to_do(served):
    status, body = http(served, "/api/list?limit=many", headers=token(served))
    assert status == 400 and "whole number" in body["error"]
    status, body = http(served, "/api/search?q=", headers=token(served))
    assert status == 400 and "say what to look for" in body["error"]


# -- the page in a real browser ---------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium; .ci/run does)"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)"
    )
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("MAPLE_UI_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser: Any, served: web.Running) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    # A refused load is a request the page's policy blocked (an answer of 400 to a wrong
    # confirmation is the server doing its job, logged by the browser as an error too).
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" and "Refused" in m.text else None)
    p.goto(served.url)
    yield p
    context.close()
    assert errors == []  # no script error and no request the page's policy blocked


def ready(page: Any, view: str) -> None:
    page.wait_for_selector(f'main[data-view="{view}"][data-ready="1"]')


@needs_chromium
def test_the_first_page_lists_this_projects_and_global_memories(page, filled, shots):
    ready(page, "browse")
    rows = page.locator("#memories > li[data-id]")
    ids = {int(i) for i in rows.evaluate_all("els => els.map(e => e.dataset.id)")}
    assert {filled.port["id"], filled.chinese["id"], filled.decision["id"], filled.new["id"]} <= ids
    assert filled.old["id"] not in ids  # superseded: history, not current
    assert "6000" not in page.inner_text("#memories")
    page.screenshot(path=str(shots / "browse.png"), full_page=True)
    page.select_option("select[name=status]", "history")
    ready(page, "browse")
    page.wait_for_selector(f'#memories > li[data-id="{filled.old["id"]}"]')
    page.select_option("select[name=layer]", "decision")
    ready(page, "browse")
    assert page.locator("#memories > li[data-id]").count() == 0  # no superseded decision


@needs_chromium
def test_search_finds_and_explains_in_both_languages(page, filled, shots):
    page.goto(page.url.split("#")[0] + "#/search?q=" + "test database port")
    ready(page, "search")
    first = page.locator("#results > li").first
    assert first.get_attribute("data-id") == str(filled.port["id"])
    assert "Ranked by" in first.inner_text() and "排序依据" in first.inner_text()
    assert first.locator('[data-channel="bm25"]').count() == 1
    page.screenshot(path=str(shots / "search.png"), full_page=True)
    page.fill("input[name=q]", "深色主题")
    page.click("#search button[type=submit]")
    page.wait_for_function("location.hash.includes('q=')")
    ready(page, "search")
    assert page.locator("#results > li").first.get_attribute("data-id") == str(filled.chinese["id"])


@needs_chromium
def test_a_memorys_page_shows_its_versions_chain_decision_and_source(page, filled, shots):
    page.goto(page.url.split("#")[0] + f"#/memory/{filled.new['id']}")
    ready(page, "memory")
    history = page.inner_text("#history")
    assert f"#{filled.old['id']}" in history and "superseded" in history and "PostgreSQL 15" in history
    page.goto(page.url.split("#")[0] + f"#/memory/{filled.decision['id']}")
    ready(page, "memory")
    decision = page.inner_text("#decision")
    assert "Celery for scheduled reminders" in decision and "failed" in decision and "double-fired" in decision
    assert "Lesson" in decision
    page.screenshot(path=str(shots / "memory.png"), full_page=True)


@needs_chromium
def test_an_edit_in_the_page_is_kept_as_a_version(page, filled):
    mid = filled.port["id"]
    page.goto(page.url.split("#")[0] + f"#/memory/{mid}")
    ready(page, "memory")
    page.click("#edit")
    page.fill("#edit-content", "The test database listens on port 5433 (docker compose maps it)")
    page.click("#save")
    page.wait_for_selector("#content:has-text('docker compose')")
    ready(page, "memory")
    assert "5433, not 5432" in page.inner_text("#history")  # the earlier wording, as a version
    versions = filled.app.history(mid)["entries"][0]["versions"]
    assert [v["reason"] for v in versions][-1] == "edited in the web page"


@needs_chromium
def test_forget_and_restore_from_the_page(page, filled):
    mid = filled.port["id"]
    page.goto(page.url.split("#")[0] + f"#/memory/{mid}")
    ready(page, "memory")
    page.click("#forget")
    page.wait_for_selector("#restore")
    assert filled.app.get([mid])["memories"][0]["deleted_at"] is not None
    page.click("#restore")
    page.wait_for_selector("#forget")
    assert filled.app.get([mid])["memories"][0]["deleted_at"] is None


@needs_chromium
def test_delete_for_good_asks_for_the_id_first(page, filled):
    mid = filled.chinese["id"]
    page.goto(page.url.split("#")[0] + f"#/memory/{mid}")
    ready(page, "memory")
    page.click("#delete")
    page.fill("#confirm-id", "1" + str(mid))  # a wrong id deletes nothing
    page.click("#confirm-delete-go")
    page.wait_for_selector("#toast.on")
    assert filled.app.get([mid])["missing"] == []
    page.fill("#confirm-id", str(mid))
    page.click("#confirm-delete-go")
    ready(page, "browse")
    assert filled.app.get([mid])["missing"] == [mid]


@needs_chromium
def test_the_session_page_shows_the_hooks_injection_with_its_prompt_and_the_harvest(page, filled, shots):
    page.goto(page.url.split("#")[0] + "#/sessions")
    ready(page, "sessions")
    page.click(f'#sessions li[data-session="{filled.session}"] a')
    ready(page, "session")
    surface = page.locator('.delivery[data-kind="surface"]').first
    text = surface.inner_text()
    assert filled.prompt in text and "5433" in text
    assert page.locator('.delivery[data-kind="brief"]').count() == 1
    harvest = page.inner_text("#harvest")
    assert "uv" in harvest and f"{len(filled.harvest['stored'])} stored" in harvest
    page.screenshot(path=str(shots / "session.png"), full_page=True)


@needs_chromium
def test_the_graph_renders_nodes_and_clicks_through_to_memories(page, filled, shots):
    page.goto(page.url.split("#")[0] + "#/graph")
    ready(page, "graph")
    page.wait_for_selector("#graph[data-rendered]")
    assert int(page.get_attribute("#graph", "data-rendered")) >= 1
    page.locator("#graph .node").first.click()
    page.wait_for_selector("#graph-panel a[href^='#/memory/']")
    page.screenshot(path=str(shots / "graph.png"), full_page=True)
    page.click("#graph-panel a[href^='#/memory/']")
    ready(page, "memory")


@needs_chromium
def test_health_shows_counts_and_the_doctors_checks(page, filled, shots):
    page.goto(page.url.split("#")[0] + "#/health")
    ready(page, "health")
    assert "memories" in page.inner_text("#counts").lower()
    page.click("#run-doctor")
    page.wait_for_selector("#doctor td.ok")
    page.screenshot(path=str(shots / "health.png"), full_page=True)


@needs_chromium
def test_new_memories_appear_while_the_page_is_open(page, filled):
    ready(page, "browse")
    added = filled.app.add("A memory stored while the page watches")["memory"]
    page.wait_for_selector(f'#memories > li[data-id="{added["id"]}"]', timeout=15_000)


@needs_chromium
def test_the_page_is_usable_at_phone_width(browser, served, shots):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        p = context.new_page()
        p.goto(served.url + "#/search?q=database")
        ready(p, "search")
        width = p.evaluate("document.documentElement.scrollWidth")
        assert width <= 390  # nothing runs off the side
        p.screenshot(path=str(shots / "search-390.png"), full_page=True)
    finally:
        context.close()


def test_the_ui_command_serves_until_stopped_and_prints_its_address(home, tmp_path):
    env = {**os.environ, "MAPLE_MODEL": "hash-64", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory.cli", "ui", "--no-browser", "--project", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?t=" in url
        with urllib.request.urlopen(url.replace("/?t=", "/api/pulse?t="), timeout=30) as r:
            assert json.loads(r.read())["count"] == 0
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()


# -- found by a blind trial (issue 19) ----------------------------------------------------------------


@pytest.fixture
def everywhere(filled: Filled) -> Iterator[web.Running]:
    """The page of `maple-memory ui --all-projects`."""
    running = web.Running(Memories(filled.store, filled.project, all_projects=True), label="every project").start()
    yield running
    running.stop()


def test_one_other_project_is_listed_only_with_all_projects(served, everywhere):
    other = "/api/list?scope=%2Felsewhere%2Fother-project"
    status, body = http(served, other, headers=token(served))
    assert status == 400 and "--all-projects" in body["error"]
    listed = http(everywhere, other, headers=token(everywhere))[1]["memories"]
    assert [m["scope"] for m in listed] == ["/elsewhere/other-project"]
    present = http(everywhere, "/api/scopes", headers=token(everywhere))[1]
    assert {s["scope"] for s in present["scopes"]} >= {"/elsewhere/other-project", "global"}
    assert {s["scope"] for s in http(served, "/api/scopes", headers=token(served))[1]["scopes"]} <= {
        served_project(served),
        "global",
    }


def served_project(running: web.Running) -> str:
    return http(running, "/api/scopes", headers=token(running))[1]["project"]


@needs_chromium
def test_all_projects_names_each_memorys_project_and_filters_by_one(browser, everywhere, filled, shots):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        p = context.new_page()
        p.goto(everywhere.url)
        ready(p, "browse")
        other = Memories(filled.store, "/elsewhere/other-project").list()["memories"][0]["id"]
        row = p.locator(f'#memories > li[data-id="{other}"]')
        assert "project other-project" in row.inner_text() and "this project" not in row.inner_text()
        p.wait_for_selector('select[name=scope] option[value="/elsewhere/other-project"]', state="attached")
        p.select_option("select[name=scope]", "/elsewhere/other-project")
        p.wait_for_function("location.hash.includes('scope=')")
        ready(p, "browse")
        assert p.locator("#memories > li[data-id]").evaluate_all("els => els.map(e => e.dataset.id)") == [str(other)]
        p.goto(everywhere.url.split("#")[0] + f"#/memory/{other}")
        ready(p, "memory")
        assert "/elsewhere/other-project" in p.inner_text("main") and "this project" not in p.inner_text("main")
        p.screenshot(path=str(shots / "all-projects.png"), full_page=True)
    finally:
        context.close()


def _crowd(filled: Filled) -> None:
    """Thirty entities, some with long names, each memory naming three of them: a graph whose
    labels would pile up if all were drawn."""
    from memory.store import NewMemory

    names = [f"service-{n}" for n in range(20)] + [
        f"kubectl -n ledger rollout status deploy/ledger-api-{n}" for n in range(10)
    ]
    filled.store.add_many(
        [
            NewMemory(
                f"Note {n}: {a}, {b} and {c} are deployed together",
                scope=filled.project,
                entities=[(a, "tool"), (b, "tool"), (c, "tool")],
            )
            for n, (a, b, c) in enumerate(
                (names[i % 30], names[(i * 7 + 1) % 30], names[(i * 11 + 2) % 30]) for i in range(60)
            )
        ]
    )


LABEL_BOXES = """() => [...document.querySelectorAll('#graph .node text, #graph .edge-label')]
    .filter(t => getComputedStyle(t).display !== 'none')
    .map(t => { const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })"""


NAMED = """() => [...document.querySelectorAll('#graph .node')]
    .filter(g => getComputedStyle(g.querySelector('text')).display !== 'none').map(g => g.dataset.name)"""


def _overlapping(boxes: list[list[float]]) -> list[tuple[int, int]]:
    slack = 0.5  # a label's box touching the next one's is not an overlap
    return [
        (i, j)
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[i + 1 :], i + 1)
        if a[0] < b[2] - slack and b[0] < a[2] - slack and a[1] < b[3] - slack and b[1] < a[3] - slack
    ]


@needs_chromium
@pytest.mark.parametrize("width", [1280, 390])
def test_graph_labels_never_overlap_and_zooming_in_names_more(browser, served, filled, shots, width):
    _crowd(filled)
    context = browser.new_context(viewport={"width": width, "height": 900})
    try:
        p = context.new_page()
        p.goto(served.url + "#/graph")
        ready(p, "graph")
        p.wait_for_selector("#graph[data-rendered]")
        before = p.evaluate(LABEL_BOXES)
        named = set(p.evaluate(NAMED))
        assert len(named) >= 3 and _overlapping(before) == []
        assert len(named) < p.locator("#graph .node").count()  # a crowd: not every name fits
        p.screenshot(path=str(shots / f"graph-labels-{width}.png"), full_page=True)
        for _ in range(3):
            p.click("button[title='zoom in']")
        p.wait_for_timeout(200)  # labels are placed on the next animation frame
        assert _overlapping(p.evaluate(LABEL_BOXES)) == []
        assert set(p.evaluate(NAMED)) - named  # closer up, names that did not fit appear
        p.screenshot(path=str(shots / f"graph-labels-{width}-zoomed.png"), full_page=True)
    finally:
        context.close()


@needs_chromium
def test_an_unknown_entity_keeps_the_graph_form_and_says_why_beside_it(page, filled, shots):
    page.goto(page.url.split("#")[0] + "#/graph?entity=no-such-entity")
    ready(page, "graph")
    assert page.is_visible("#graph-error") and "no-such-entity" in page.inner_text("#graph-error")
    assert page.input_value("#graph-form input[name=entity]") == "no-such-entity"
    page.fill("#graph-form input[name=entity]", "")
    page.click("#graph-form button[type=submit]")
    page.wait_for_selector("#graph[data-rendered]")
    assert page.is_hidden("#graph-error")
    page.screenshot(path=str(shots / "graph-unknown.png"), full_page=True)


def holder(routes: list[Any]) -> Any:
    return lambda route: routes.append(route)


@needs_chromium
def test_a_view_still_loading_when_the_user_moves_on_does_not_mark_the_next_one_ready(browser, served, filled):
    held: dict[str, list[Any]] = {"list": [], "graph": []}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        p = context.new_page()
        for name in held:
            p.route(f"**/api/{name}*", holder(held[name]))
        p.goto(served.url)  # the first page's list waits
        p.wait_for_function("() => document.querySelector('main').dataset.view === 'browse'")
        p.goto(served.url.split("#")[0] + "#/graph?entity=no-such-entity")  # and so does the graph
        p.wait_for_function("() => document.querySelector('main').dataset.view === 'graph'")
        # The page asks before Python hears of it: each held request reaches its handler a moment
        # later (CI once read `held` between the two).
        for _ in range(100):
            if held["list"] and held["graph"]:
                break
            p.wait_for_timeout(50)
        assert held["list"] and held["graph"], "the requests were not held"
        for route in held["list"]:
            route.continue_()  # the list answers for a page the user has left
        p.wait_for_timeout(300)
        assert p.get_attribute("main", "data-ready") is None  # the graph has not answered yet
        for route in held["graph"]:
            route.continue_()
        ready(p, "graph")
        assert p.is_visible("#graph-error") and p.locator("main #memories").count() == 0
    finally:
        context.close()


def test_every_ranking_channel_is_named_in_english_and_chinese():
    import re

    from memory.retrieval import ranking

    script = (web.STATIC / "app.js").read_text(encoding="utf-8")
    block = script[script.index("var CHANNELS = {") : script.index("};", script.index("var CHANNELS = {"))]
    named = dict(re.findall(r'(\w+): "([^"]+)"', block))
    channels = set(Config().search_weights) | set(ranking.FUSED) | {"weighting", "prior"}
    assert channels <= set(named), channels - set(named)
    for key, name in named.items():
        english, _, chinese = name.partition(" · ")
        assert english and re.search(r"[\u4e00-\u9fff]", chinese) and not re.search(r"[A-Za-z]", chinese), key


@needs_chromium
def test_small_dead_ends_say_what_is_wrong(page, filled):
    base = page.url.split("#")[0]
    page.goto(base + "#/browse?since=2999-01-01")
    # (browse to browse: the page before was ready too, so wait for this one's list; CI under load read
    # the list while the hash change was re-rendering it)
    page.wait_for_selector("#memories > li.empty")
    ready(page, "browse")
    assert page.is_hidden("#more") and "No memories match" in page.inner_text("#memories")
    page.goto(base + "#/session/not-a-session")
    ready(page, "session")
    assert "There is no session “not-a-session”" in page.inner_text("#no-session")
    page.goto(base + "#/memory/abc")
    ready(page, "memory")
    text = page.inner_text("main")
    assert "whole number" in text and "NaN" not in text
    mid = filled.port["id"]
    page.goto(base + f"#/memory/{mid}")
    ready(page, "memory")
    page.click("#edit")
    page.fill("#edit-content", "   ")
    page.click("#save")
    page.wait_for_selector("#toast.on")
    assert "cannot be empty" in page.inner_text("#toast")
    assert filled.app.get([mid])["memories"][0]["content"] == filled.port["content"].replace("5433", "5433, not 5432")


@needs_chromium
def test_the_scope_label_shows_at_phone_width(browser, served, filled):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        p = context.new_page()
        p.goto(served.url)
        ready(p, "browse")
        assert p.is_visible("#scope-label") and "global" in p.inner_text("#scope-label")
        assert p.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()
