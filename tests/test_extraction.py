"""The heuristic extraction agent: candidates from turns, and how they enter the store."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.extraction import harvest, ingest, transcript
from memory.extraction.heuristic import Candidate, extract
from memory.retrieval import ranking as retrieval
from memory.store import Store, chunks

pytestmark = pytest.mark.backends  # each test on SQLite and on PostgreSQL (tests/conftest.py)

SESSIONS = Path(__file__).resolve().parent / "data" / "sessions"
SCOPE = "/home/dev/projects/demo"


_uuids = itertools.count()


def turns_of(*pairs: tuple[str, str]) -> list[dict]:
    """Clean turns of session s1, each message with a uuid of its own, as in a transcript."""
    return [
        {"role": role, "kind": "text", "text": t, "uuid": f"u{next(_uuids)}", "timestamp": None, "session_id": "s1"}
        | {"cwd": SCOPE}
        for role, t in pairs
    ]


def one(text: str, role: str = "user") -> list[Candidate]:
    return extract(turns_of((role, text)), scope=SCOPE)


# -- the labelled set --------------------------------------------------------------------------


def load_sessions(folder: Path = SESSIONS) -> list[tuple[str, list[dict], dict]]:
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        turns, _ = transcript.load_file(path)
        labels = json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))
        out.append((path.stem, turns, labels))
    return out


def matches(content: str, layer: str, expected: dict) -> bool:
    layers = expected["layer"] if isinstance(expected["layer"], list) else [expected["layer"]]
    return layer in layers and all(p.casefold() in content.casefold() for p in expected["must"])


def score(found: dict[str, list[tuple[str, str]]], labels: dict[str, dict]) -> tuple[float, float, int, int]:
    """(precision, recall, candidates, expected) over all sessions: a candidate is a true
    positive if it matches an expected item; recall counts expected items matched at least once."""
    tp = n = hit = total = 0
    for name, items in found.items():
        expected = labels[name]["expected"]
        n += len(items)
        tp += sum(any(matches(c, layer, e) for e in expected) for c, layer in items)
        total += len(expected)
        hit += sum(any(matches(c, layer, e) for c, layer in items) for e in expected)
    return tp / max(1, n), hit / max(1, total), n, total


def test_labelled_set_has_fifteen_sessions_in_english_and_chinese_in_the_real_format():
    sessions = load_sessions()
    assert len(sessions) >= 15
    languages = {labels["language"] for _, _, labels in sessions}
    assert {"en", "zh", "mixed"} <= languages
    raw = "".join(p.read_text(encoding="utf-8") for p in SESSIONS.glob("*.jsonl"))
    for shape in (
        '"type":"attachment"',
        '"isMeta":true',
        '"isCompactSummary":true',
        '"isSidechain":true',
        '"kind":"task-notification"',
        '"type":"tool_use"',
        '"type":"tool_result"',
        '"type":"thinking"',
        f"<{transcript.CONTEXT_TAG}>",
        '"is_error":true',
        "<system-reminder>",
        "<command-name>",
    ):
        assert shape in raw, shape


def test_heuristic_extraction_meets_precision_and_recall_on_the_labelled_set():
    found, labels = {}, {}
    for name, turns, lab in load_sessions():
        found[name] = [(c.content, c.layer) for c in extract(turns, scope=SCOPE)]
        labels[name] = lab
    precision, recall, n, total = score(found, labels)
    print(f"\nlabelled set: {n} candidates, {total} expected; precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.80
    assert recall >= 0.70


@pytest.mark.parametrize("folder", ["holdout", "holdout2"])
def test_held_out_sessions_meet_the_bar_too(folder):
    # Measured before any tuning on them: holdout P .944 R .680, holdout2 P .917 R .571 (see the
    # commit history); the rules were broadened afterwards, so these now guard against regressions.
    found, labels = {}, {}
    for name, turns, lab in load_sessions(SESSIONS / folder):
        found[name] = [(c.content, c.layer) for c in extract(turns, scope=SCOPE)]
        labels[name] = lab
    precision, recall, n, total = score(found, labels)
    print(f"\n{folder}: {n} candidates, {total} expected; precision {precision:.3f}, recall {recall:.3f}")
    assert len(found) >= 6 and precision >= 0.80 and recall >= 0.70


def test_stored_memories_meet_the_bar_after_ingesting_every_session(tmp_path):
    cfg = config_mod.load(home=tmp_path, env={})
    found, labels = {}, {}
    with Store.open(cfg, HashEmbedder(256)) as store:
        for name, turns, lab in load_sessions():
            scope = f"/projects/{name}"
            ingest.ingest(store, extract(turns, scope=scope))
            found[name] = [
                (m.content, m.layer)
                for m in store.list(scopes=[scope], limit=500)
                if m.superseded_by is None and m.parent_id is None
            ]
            labels[name] = lab
    precision, recall, n, total = score(found, labels)
    print(f"\nstored: {n} memories, {total} expected; precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.80 and recall >= 0.70


def test_no_memory_comes_from_injected_blocks_tool_output_or_other_noise(tmp_path):
    cfg = config_mod.load(home=tmp_path, env={})
    with Store.open(cfg, HashEmbedder(256)) as store:
        for name, turns, labels in load_sessions():
            cands = extract(turns, scope=SCOPE + name)
            ingest.ingest(store, cands)
            for c in cands:
                leaked = [p for p in labels["forbidden"] if p.casefold() in c.content.casefold()]
                assert not leaked, (name, c.content)
        stored = " ".join(m.content for m in store.list(limit=1000)).casefold()
    for _, _, labels in load_sessions():
        assert not [p for p in labels["forbidden"] if p.casefold() in stored]
    assert transcript.CONTEXT_TAG not in stored


# -- what becomes a candidate ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, category",
    [
        ("Always use uv, never pip install.", "rule"),
        ("Don't mock the database in tests.", "rule"),
        ("I prefer f-strings over .format() calls.", "preference"),
        ("以后都用 pnpm，不要再用 npm 了。", "rule"),
        ("我喜欢函数式组件，不要写 class 组件。", "preference"),
        ("总是先写测试再写实现代码。", "rule"),
    ],
)
def test_preferences_and_rules_in_english_and_chinese_become_facts(text, category):
    [c] = one(text)
    assert (c.layer, c.category) == ("fact", category)
    assert c.importance >= 4 and c.why


def test_correction_drops_the_no_and_keeps_the_instruction():
    [c] = one("No, use `httpx` instead of requests here.")
    assert c.category == "correction" and c.content == "Use `httpx` instead of requests here."
    [c] = one("不对，应该用 `make migrate`，不要直接跑 alembic。")
    assert c.category == "correction" and c.content.startswith("应该用 `make migrate`")


def test_decision_with_a_reason_keeps_the_rationale():
    [c] = one("We chose Postgres over MySQL because we need JSONB.")
    assert c.layer == "decision"
    assert c.metadata["rationale"] == "we need JSONB"
    [c] = one("决定用 Redis 做缓存，因为有多个实例。")
    assert c.layer == "decision" and c.metadata["rationale"] == "有多个实例"


def test_project_facts_carry_subject_and_attribute_for_supersession():
    [c] = one("The API listens on port 8080.")
    assert (c.category, c.subject, c.attribute, c.value) == ("config", "api", "port", "8080")
    [c] = one("Tests run with `pytest -n auto` here.")
    assert (c.subject, c.attribute, c.value) == ("tests", "command", "pytest -n auto")
    [c] = one("We moved from Flask to FastAPI last month.")
    assert (c.subject, c.attribute, c.value) == ("web framework", "choice", "fastapi")
    assert ("FastAPI", "replaced", "Flask") in c.relations


def test_explicit_request_to_remember_is_kept_without_the_request():
    [c] = one("Remember that staging deploys need a VPN.")
    assert c.content == "Staging deploys need a VPN." and c.importance >= 4
    [c] = one("记住：发布前要先打 tag。")
    assert c.content == "发布前要先打 tag。" and "remember" in c.why


@pytest.mark.parametrize(
    "text",
    [
        "Can you fix the failing test in tests/test_api.py?",
        "Please add a retry to the fetch helper.",
        "what does functools.lru_cache do with unhashable arguments?",
        "帮我看看这个函数为什么这么慢。",
        "这个 loss 曲线看着正常吗？",
        "I don't know why this fails on CI.",
        "ok thanks",
        # a dev5 session: who is asking, and the task of the moment in Chinese
        "我是新来的小周，老王让我先熟悉下 gateway。",
        "跑下 test 吧。",
        "先 skip 掉，开个 issue.",
        # what happened last night is the day's problem; a fragment with no subject is no fact
        "昨晚 19:30 那批开课提醒，好多学员收到了两三条一模一样的短信，家长群里都在吐槽。",
        "迁到 HTTP v1。",
        # how an endpoint is doing now: 接口 is no verb 接, 现在 no 在 ("is at")
        "这个接口超过 3 秒了。",
        "order-api 这个接口现在超过 3 秒了。",
        # a lead that announces news and holds none
        "heads up, a few things changed.",
    ],
)
def test_questions_requests_and_chatter_are_not_memories(text):
    assert one(text) == []


def test_assistant_narration_is_not_a_memory_but_its_diagnosis_is():
    cands = extract(
        turns_of(
            ("user", "the build is broken"),
            ("assistant", "Let me look at the build script. I'll run it now."),
            ("assistant", "The build failed because the lockfile was stale; regenerating it with `uv lock` fixed it."),
        ),
        scope=SCOPE,
    )
    assert [(c.layer, c.role) for c in cands] == [("experience", "assistant")]
    assert "`uv lock`" in cands[0].content


def test_failed_tool_call_fixed_by_a_call_after_which_it_passed_is_an_experience():
    t = turns_of(("user", "run the migrations"))
    t += [
        {
            "role": "tool",
            "kind": "tool_error",
            "tool": "Bash",
            "input": "alembic upgrade head",
            "error": 'FATAL: database "shop" does not exist',
            "uuid": "e1",
            "session_id": "s1",
            "timestamp": None,
        },
        {"role": "assistant", "kind": "tool_call", "tool": "Bash", "input": "make db", "text": ""},
        {"role": "tool", "kind": "tool_result", "tool": "Bash", "input": "make db", "text": "createdb shop"},
        {"role": "tool", "kind": "tool_result", "tool": "Bash", "input": "alembic upgrade head", "text": "ok"},
    ]
    [c] = extract(t, scope=SCOPE)
    assert c.layer == "experience"
    assert c.content == (
        '`alembic upgrade head` failed with `FATAL: database "shop" does not exist`; fixed by `make db`.'
    )
    assert c.metadata["failed_tool_calls"][0]["tool"] == "Bash"


def test_failed_tool_call_is_not_paired_when_the_user_already_said_what_to_do():
    t = [{"role": "tool", "kind": "tool_error", "tool": "Bash", "input": "black .", "error": "black: not found"}]
    t += turns_of(("user", "No, we use ruff here, not black."))
    t += [{"role": "tool", "kind": "tool_result", "tool": "Bash", "input": "ruff format .", "text": "ok"}]
    assert [c.category for c in extract(t, scope=SCOPE)] == ["correction"]


def test_an_angry_incident_is_a_flashbulb_memory():
    [c] = one("NEVER run terraform apply against prod from a laptop - checkout was down for an hour!!!")
    assert c.flashbulb and c.intensity >= 0.8 and c.valence < 0 and c.importance == 5
    [calm] = one("Always run the linter before pushing.")
    assert not calm.flashbulb


def test_entities_are_typed_and_known_entities_are_recognised():
    cands = extract(
        turns_of(
            (
                "user",
                "Alice owns the billing service; it depends on `src/billing/client.py` "
                "and always runs `make billing-test`.",
            )
        ),
        scope=SCOPE,
        known={"Project Falcon": ["falcon"]},
    )
    ents = dict(cands[0].entities)
    assert ents["Alice"] == "person" and ents["billing service"] == "service"
    assert ents["src/billing/client.py"] == "file" and ents["make billing-test"] == "command"
    assert ("Alice", "owns", "billing service") in cands[0].relations
    [c] = extract(
        turns_of(("user", "Always deploy falcon from the release branch.")),
        scope=SCOPE,
        known={"Project Falcon": ["falcon"]},
    )
    assert ("Project Falcon", "known") in c.entities


def test_plain_text_and_message_lists_go_through_the_same_rules():
    cands = extract(transcript.from_text("We always squash-merge PRs.\n\nThe weather is nice."), scope=SCOPE)
    assert [c.content for c in cands] == ["We always squash-merge PRs."]
    cands = extract(transcript.from_messages([{"role": "user", "content": "Never commit .env files."}]), scope=SCOPE)
    assert [c.category for c in cands] == ["rule"]


# -- ingesting ---------------------------------------------------------------------------------


def cand(content: str, **kw) -> Candidate:
    c = Candidate(content, scope=SCOPE, session_id=kw.pop("session_id", "s1"), **kw)
    return c


def test_reading_the_same_transcript_twice_stores_nothing_twice(store):
    path = SESSIONS / "en01_invoicer_uv_postgres.jsonl"
    first = harvest.harvest(store, str(path))
    n = store.count()
    assert len(first["stored"]) >= 4
    assert harvest.harvest(store, str(path))["items"] == []  # the cursor: nothing new to read
    store.conn.execute("DELETE FROM transcript_cursors")
    again = harvest.harvest(store, str(path))  # read from the start: dedup catches every line
    assert again["stored"] == [] and store.count() == n


def test_a_malformed_line_is_skipped_counted_and_never_fatal(store, tmp_path):
    good = (SESSIONS / "en04_scheduler_flaky.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "t.jsonl"
    path.write_text(good[0] + '{"type": "user", "message": {"role"\n' + "".join(good[1:]), encoding="utf-8")
    result = harvest.harvest(store, str(path))
    assert result["read"]["malformed"] == 1 and len(result["stored"]) >= 3


def test_near_duplicate_merges_into_the_existing_memory_keeping_the_richer_text(store):
    ingest.ingest(store, [cand("Deploys go through the deploy-prod pipeline.", source_ref="a", session_id="s1")])
    report = ingest.ingest(
        store, [cand("Deploys go through the deploy-prod pipeline in GitHub Actions.", source_ref="b", session_id="s2")]
    )
    assert report.stored == [] and len(report.merged) == 1
    [m] = store.list(scopes=[SCOPE])
    assert m.content == "Deploys go through the deploy-prod pipeline in GitHub Actions."
    assert [p["session_id"] for p in m.metadata["provenance"]] == ["s1", "s2"]


def test_changed_fact_supersedes_the_old_one_and_search_returns_the_current_value(store):
    [old] = extract(turns_of(("user", "Tests run with `pytest` in this repo.")), scope=SCOPE)
    [new] = extract(turns_of(("user", "Tests now run with `pytest -n auto`.")), scope=SCOPE)
    first = ingest.ingest(store, [old]).stored[0]
    report = ingest.ingest(store, [new])
    [(closed, current)] = report.superseded
    assert closed == first
    was = store.get(first)
    assert was.superseded_by == current and was.valid_to is not None
    hits = retrieval.search(store, retrieval.make_query("how do tests run", [SCOPE]), record=False)
    assert [r.memory.id for r in hits] == [current]
    history = retrieval.search(
        store, retrieval.make_query("how do tests run", [SCOPE], include_history=True), record=False
    )
    assert {r.memory.id for r in history} == {first, current}


def test_repeating_a_known_fact_reinforces_it_instead_of_storing(store):
    [c] = extract(turns_of(("user", "The API listens on port 8080.")), scope=SCOPE)
    mid = ingest.ingest(store, [c]).stored[0]
    [again] = extract(turns_of(("user", "the API listens on port 8080 btw")), scope=SCOPE)
    report = ingest.ingest(store, [again])
    assert report.stored == [] and report.reinforced == [mid]
    assert store.get(mid).activation_count == 1


def test_unsurprising_candidate_reinforces_its_nearest_memory(config, tmp_path):
    cfg = config_mod.load(
        home=tmp_path / "h", env={}, extraction_surprise_threshold=0.9, extraction_dedup_threshold=1.0
    )
    with Store.open(cfg, HashEmbedder(64)) as s:
        mid = ingest.ingest(s, [cand("Redis runs in the cache container on the dev box.")]).stored[0]
        report = ingest.ingest(s, [cand("Redis runs in the cache container.")])
        assert report.stored == [] and report.reinforced == [mid]
        assert report.items[0]["action"] == "reinforce" and report.items[0]["surprise"] < 0.9


def test_without_an_embedder_keyword_overlap_still_deduplicates(tmp_path):
    cfg = config_mod.load(home=tmp_path, env={})
    with Store.open(cfg, None) as s:
        ingest.ingest(s, [cand("Prod deploys happen only from the release branch.")])
        report = ingest.ingest(s, [cand("prod deploys happen only from the release branch!")])
        assert report.stored == [] and s.count() == 1


def test_long_content_is_stored_as_a_parent_with_chunks_by_the_stores_one_rule(store):
    long = " ".join(f"Step {i}: run `make step{i}` and check the output for warnings." for i in range(60))
    report = ingest.ingest(store, [cand(long, category="note")])
    [parent] = report.stored
    children = store.conn.execute(
        "SELECT chunk_index FROM memories WHERE parent_id = ? ORDER BY chunk_index", (parent,)
    ).fetchall()
    assert report.chunks == len(children) >= 3 and children[0][0] == 0
    assert store.get(parent).content == long
    spans = store.conn.execute(
        "SELECT chunk_start, chunk_end FROM memories WHERE parent_id = ? ORDER BY chunk_index", (parent,)
    ).fetchall()
    assert [tuple(x) for x in spans] == chunks.spans(long)  # the rule memory_store, add and import use


def test_decision_is_stored_with_its_rationale_and_relations_reach_the_graph(store):
    cands = extract(
        turns_of(("user", "We're moving the orders service from Flask to FastAPI because we need async endpoints.")),
        scope=SCOPE,
    )
    [mid] = ingest.ingest(store, cands).stored
    m = store.get(mid)
    assert m.layer == "decision" and m.metadata["rationale"] == "we need async endpoints"
    rel = store.conn.execute(
        "SELECT s.name, r.type, d.name FROM relations r JOIN entities s ON s.id = r.src "
        "JOIN entities d ON d.id = r.dst WHERE r.memory_id = ?",
        (mid,),
    ).fetchall()
    assert ("FastAPI", "replaced", "Flask") in rel


def test_dry_run_writes_nothing_and_says_why(store):
    cands = extract(turns_of(("user", "Always use uv, never pip.")), scope=SCOPE)
    report = ingest.ingest(store, cands, dry_run=True)
    assert report.items[0]["action"] == "store" and store.count() == 0


def test_extracting_a_file_as_a_dry_run_says_what_each_candidate_would_become_and_writes_nothing(store):
    d = harvest.extract_file(store, str(SESSIONS / "zh01_console_pnpm.jsonl"), fallback=SCOPE, dry_run=True)
    pnpm = [c for c in d["candidates"] if "以后都用 pnpm" in c["content"]]
    assert pnpm and pnpm[0]["action"] == "store" and pnpm[0]["why"].startswith("rule") and d["dry_run"]
    assert store.count() == 0


def test_extracting_a_file_stores_its_memories_in_the_scope_asked(store):
    d = harvest.extract_file(store, str(SESSIONS / "en06_tidy_rust.jsonl"), scope="global", fallback=SCOPE)
    assert d["scope"] == "global" and len(d["summary"]["stored"]) == len(d["candidates"]) >= 3
    assert store.count(["global"]) == len(d["candidates"])


def test_an_odd_timestamp_or_a_bad_candidate_never_costs_the_rest(store):
    odd = cand("The queue worker runs on port 5555.", occurred_at="2026-13-45T99:00Z")
    bad = cand("x", layer="nonsense")
    good = cand("Releases are tagged from the main branch only.")
    report = ingest.ingest(store, [odd, bad, good])
    assert [i["action"] for i in report.items] == ["store", "rejected", "store"]
    assert "layer" in report.items[1]["error"] and store.count() == 2


def test_entity_names_resolve_by_exact_name_containment_and_embedding_similarity(store):
    ingest.ingest(
        store,
        [
            cand("We use PostgreSQL for orders.", entities=[("PostgreSQL", "technology")]),
            cand("The billing service owns invoices.", entities=[("billing service", "service")]),
        ],
    )
    report = ingest.ingest(
        store,
        [
            cand("Backups of postgres run nightly.", entities=[("postgres", "technology")]),
            cand("Billing Service deploys on Tuesdays.", entities=[("Billing Service", "service")]),
            cand("The billing service api has rate limits.", entities=[("billing service api", "service")]),
        ],
    )
    assert len(report.stored) == 3
    names = [r[0] for r in store.conn.execute("SELECT name FROM entities ORDER BY id")]
    assert names == ["PostgreSQL", "billing service"]
    # The names as written resolve to them from now on: they are stored as aliases.
    aliases = {r[0] for r in store.conn.execute("SELECT alias FROM entity_aliases")}
    assert {"postgres", "billing service api"} <= aliases


def test_everyday_words_are_not_technologies_unless_capitalised():
    [c] = one("Prod changes only go through the deploy pipeline, make sure of it.")
    assert not [n for n, k in c.entities if k == "technology"]
    [c] = one("We use Go 1.22 for the workers.")
    assert ("Go", "technology") in c.entities and (c.subject, c.attribute, c.value) == ("go", "version", "1.22")


def test_candidates_are_redacted_before_anyone_sees_them():
    [c] = one("Remember that the staging deploy token is ghp_abcdefghijklmnopqrstuvwxyz0123456789.")
    assert "ghp_" not in c.content and "REDACTED" in c.content


def test_extraction_imports_nothing_heavy_so_a_hook_can_run_it():
    import os
    import subprocess
    import sys

    code = (
        "import sys, memory.extraction; heavy = {'numpy', 'jieba', 'mcp', 'pydantic', 'torch', 'sqlite_vec'};"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "PYTHONPATH": "."},
    )
    assert out.stdout.strip() == "[]"


def failed(command: str, error: str) -> list[dict]:
    return [
        {"role": "assistant", "kind": "tool_call", "tool": "Bash", "input": command, "text": ""},
        {"role": "tool", "kind": "tool_error", "tool": "Bash", "input": command, "error": error, "session_id": "s1"},
    ]


@pytest.mark.parametrize(
    "explanation",
    [
        "`clock()` is read once per request and the test reuses one request object, so the expiry never moves. "
        "Reading `time.monotonic()` at each check instead.",
        "缓存的 key 里没带租户 id，两个租户读到了同一份配置。key 改成 `cfg:{tenant}:{name}`。",
    ],
)
def test_the_assistants_first_words_after_a_failure_are_an_experience_without_trigger_words(explanation):
    t = turns_of(("user", "add an expiry to the session cache"))
    t += failed("make test", "FAILED tests/test_cache.py::test_expiry - AssertionError: session still valid")
    t += [{"role": "assistant", "kind": "tool_call", "tool": "Read", "input": "cache.py", "text": ""}]
    t += [{"role": "tool", "kind": "tool_result", "tool": "Read", "input": "cache.py", "text": "def get(): ..."}]
    t += turns_of(("assistant", explanation))
    [c] = [c for c in extract(t, scope=SCOPE) if c.layer == "experience"]
    assert explanation.split("。")[0].split(". ")[0] in c.content
    assert c.metadata["failed_tool_calls"][0]["input"] == "make test"  # the failure it explains, as provenance


def test_a_progress_report_after_a_failure_is_not_an_experience():
    t = turns_of(("user", "run the tests"))
    t += failed("make test", "FAILED tests/test_api.py::test_list - KeyError: 'items'")
    t += turns_of(("assistant", "All 64 tests pass now on the second run, in 3.1 seconds."))
    assert [c for c in extract(t, scope=SCOPE) if c.layer == "experience" and c.role == "assistant"] == []


def test_a_chinese_question_ending_in_lai_zhe_is_not_stored():
    assert one("部署到预发的命令是啥来着，我每次都要翻 wiki") == []


@pytest.mark.parametrize("said", ["and keep your answers short please, I'll ask for detail", "以后回答简短一点"])
def test_asking_for_short_answers_is_a_preference_in_either_language(said):
    [c] = one(said)
    assert c.category == "preference"


def test_an_assistants_note_for_later_is_kept_as_a_gotcha():
    cands = one(
        "Note for later: the fixtures path in `pytest.ini` is relative to the rootdir, hence `../shared/fixtures`.",
        role="assistant",
    )
    assert [c.category for c in cands] == ["gotcha"]


@pytest.mark.parametrize(
    "said",
    [
        "调试用这个 token：eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZWFtLTQyIn0.c2lnbmF0dXJlLWhlcmU。",
        "Staging key is sk_live_51Hq8wZ2eZvKYlo2C0aBcDeFgHiJ — don't commit that, use a throwaway one.",
    ],
)
def test_a_sentence_that_only_hands_over_a_credential_is_not_kept(said):
    assert [c.content for c in one(said) if c.layer == "fact"] == []


def test_a_sentence_with_a_secret_that_says_where_it_lives_is_kept_redacted():
    found = one("测试库的连接串从环境变量 ORDER_TEST_DSN 读，现在是 root:Pa55w0rd@tcp(10.12.3.45:3306)/order。")
    assert found and "ORDER_TEST_DSN" in found[0].content and "Pa55w0rd" not in found[0].content


@pytest.mark.parametrize(
    "said",
    [
        "审批通过了但是权限没生效，用户那边 select 还是报 Access denied。",
        "Gateway 的 streaming 有问题，client 要等整段生成完才一次性收到。",
        "有个怪事：client 断开以后，上游的 stream 还在跑。",
        "The retry queue still fails on staging and the deploy step doesn't work either.",
    ],
)
def test_a_report_of_what_is_going_wrong_today_is_not_a_fact(said):
    assert one(said) == []


def test_picking_one_of_the_offered_options_by_name_is_a_decision_with_that_option():
    found = extract(
        turns_of(
            ("assistant", "两个改法：1. 响应里加 header `X-Accel-Buffering: no` 2. ingress 上加 proxy-buffering 注解"),
            ("user", "注解要提工单，而且会影响别的 path。用 header 吧"),
        ),
        scope=SCOPE,
    )
    [d] = [c for c in found if c.layer == "decision"]
    assert "X-Accel-Buffering" in d.content and d.metadata["chosen"] == "header"


def test_naming_an_option_with_ba_is_a_decision_only_when_the_assistant_offered_it():
    offered = "可以用 Redis 做按 key 的 token bucket，或者在 ingress 层限。"
    found = extract(turns_of(("assistant", offered), ("user", "Redis 吧，infra 有现成的。")), scope=SCOPE)
    assert [c.metadata["chosen"] for c in found if c.layer == "decision"] == ["Redis"]
    alone = extract(
        turns_of(("assistant", "好的，我看一下日志。"), ("user", "Redis 吧，infra 有现成的。")), scope=SCOPE
    )
    assert [c for c in alone if c.layer == "decision"] == []


def test_the_explanation_of_a_failed_call_leads_with_the_error_it_explains():
    error = "error: failed to run custom build command for `openssl-sys v0.9.103`"
    explanation = "OpenSSL comes in through reqwest's default features; the musl image has nothing to link it against."
    turns = failed("cross build --target aarch64-unknown-linux-musl", error) + turns_of(("assistant", explanation))
    [c] = [c for c in extract(turns, scope=SCOPE) if c.layer == "experience"]
    assert c.content.startswith(error) and c.content.endswith(explanation)


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ("npm run build", "npm ERR! code 1"),  # an exit code names no cause
        ("cat .config/nextest.toml", "cat: .config/nextest.toml: No such file or directory"),  # a look around
        ("cargo test", "thread 'lease_ttl' panicked at crates/core/tests/lock.rs:40:5:"),  # the message follows
        # a test's own assertion: its values are the test's (blind trial 36 and dev6, dev8, dev12)
        ("pytest -q tests/test_feed.py", "E   AssertionError: 27 queries executed, 4 expected"),
        ("./gradlew test", "org.opentest4j.AssertionFailedError: quota for T-881 ==> expected: <5> but was: <6>"),
        ("mvn test", "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 3.2 s <<< FAILURE!"),
    ],
)
def test_an_error_line_that_names_no_cause_does_not_lead_the_explanation(command, error):
    explanation = "OpenSSL comes in through reqwest's default features; the musl image has nothing to link it against."
    turns = failed(command, error) + turns_of(("assistant", explanation))
    [c] = [c for c in extract(turns, scope=SCOPE) if c.layer == "experience"]
    assert c.content == explanation


def test_a_choice_that_names_nothing_is_completed_by_the_plan_the_assistant_answers_with():
    found = extract(
        turns_of(
            ("assistant", "Raising the limit isn't in our hands, the service block comes from a shared template."),
            ("user", "right, they won't change it for us. cap our side then."),
            ("assistant", "Then I'll add a `ci` profile with `test-threads = 4`. That stays well under the limit."),
        ),
        scope=SCOPE,
    )
    [d] = [c for c in found if c.layer == "decision"]
    assert "test-threads = 4" in d.content and "cap our side" in d.content.lower()


def test_settling_the_users_own_proposal_after_the_assistant_agreed_keeps_the_proposal():
    found = extract(
        turns_of(
            ("user", "平台组的网关自带限流了。我倾向于下线自己的 Redis limiter，limits 全部配到网关里，你觉得呢"),
            ("assistant", "同意。按 team 的 quota 可以用 header descriptor 限。"),
            ("user", "那就这么办。"),
        ),
        scope=SCOPE,
    )
    [d] = [c for c in found if c.layer == "decision"]
    assert "下线自己的 Redis limiter" in d.content


# -- a live session: one harvest per exchange ---------------------------------------------------


def _line(role: str, text: str, n: int) -> str:
    message = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    if role == "assistant":
        message.update(id=f"msg_{n}", type="message", model="claude-sonnet-5")
    entry = {"type": role, "message": message, "uuid": f"live-{n}", "timestamp": f"2026-11-02T09:{n:02d}:00.000Z"}
    entry.update(cwd=SCOPE, sessionId="live", isSidechain=False, userType="external")
    return json.dumps(entry, ensure_ascii=False) + "\n"


def harvest_live(store, path: Path, said: list[tuple[str, str]]) -> None:
    """Write a session one message at a time and harvest after each answer, as its Stops do."""
    for n, (role, text) in enumerate(said):
        with path.open("a", encoding="utf-8") as f:
            f.write(_line(role, text, n))
        if role == "assistant":
            harvest.harvest(store, str(path), llm=False)


LIVE = [
    ("user", "订单导出太慢了，一次要两分钟，怎么办？"),
    ("assistant", "两种改法：\n1. 加一个覆盖索引 (merchant_id, created_at)\n2. 改成异步导出：先生成文件，再发下载链接"),
    ("user", "第二种。商户一次导几十万行，索引救不了。"),
    ("assistant", "好，我把导出改成异步任务。"),
]


def test_a_pick_harvested_after_the_options_were_harvested_is_still_the_decision_on_them(store, tmp_path):
    # In a live session each Stop harvests one exchange: the options are behind the cursor when
    # "第二种" arrives. Harvested exchange by exchange, the store holds what one reading holds.
    whole = tmp_path / "whole.jsonl"
    whole.write_text("".join(_line(r, t, n) for n, (r, t) in enumerate(LIVE)), encoding="utf-8")
    [expected] = extract(transcript.parse_lines(whole.read_text(encoding="utf-8").splitlines()), scope=SCOPE)
    harvest_live(store, tmp_path / "live.jsonl", LIVE)
    [d] = [m for m in store.list(scopes=[SCOPE]) if m.layer == "decision"]
    assert "异步导出" in d.metadata["proposal"] and "覆盖索引" not in d.metadata["proposal"]
    assert d.content == expected.content and "索引救不了" in d.content


def test_the_context_before_the_cursor_is_read_not_stored(tmp_path):
    said = [("user", "We always squash-merge PRs."), *LIVE[1:]]
    lines = [_line(r, t, n) for n, (r, t) in enumerate(said)]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    before = transcript.read_before(path, len("".join(lines[:2]).encode()))
    assert [t["text"] for t in before] == [said[0][1], said[1][1]]
    after = transcript.parse_lines(lines[2:])
    [d] = extract(after, scope=SCOPE, context=before)  # the rule said before the cursor is not returned again
    assert d.layer == "decision" and "异步导出" in d.metadata["proposal"]
    assert [c.category for c in extract(transcript.parse_lines(lines[:2]), scope=SCOPE)] == ["rule"]
    assert transcript.read_before(path, 0) == [] and transcript.read_before(tmp_path / "missing.jsonl", 99) == []


def test_a_statement_harvested_before_the_choice_it_explains_is_closed_by_the_decision(store, tmp_path):
    said = [
        ("user", "现在 limiter 是进程内的 dict，线上有 6 个 replica。"),
        ("assistant", "建议把限流计数挪到 Redis 里，6 个 replica 共享一个计数。"),
        ("user", "Redis 吧，infra 有现成的集群。"),
        ("assistant", "好，我来改。"),
    ]
    harvest_live(store, tmp_path / "live.jsonl", said)
    stored = store.list(scopes=[SCOPE])
    [d] = [m for m in stored if m.superseded_by is None]  # one current memory, as one reading leaves
    assert d.layer == "decision" and d.content.startswith(said[0][1])
    [statement] = [m for m in stored if m.id != d.id]
    assert statement.content == said[0][1] and statement.superseded_by == d.id


@pytest.mark.parametrize(
    "reason",
    [
        "补充一下为什么选第一种：自建长连接要常驻进程，安卓后台会被杀，而且我们没人维护网关。",
        "For the record, the reason: 自建长连接要常驻进程，安卓后台会被杀。",
    ],
)
def test_a_reason_said_an_exchange_after_the_pick_joins_the_decision_an_earlier_stop_stored(store, tmp_path, reason):
    said = [
        ("user", "通知推送要不要换个方案？现在轮询太费电。"),
        ("assistant", "两个选择：\n1. 接入厂商推送通道（FCM / 华为 / 小米）\n2. 自建长连接网关"),
        ("user", "第一种。"),
        ("assistant", "好，我先接 FCM。"),
        ("user", reason),
        ("assistant", "明白，记下了。"),
    ]
    harvest_live(store, tmp_path / "live.jsonl", said)
    [d] = store.list(scopes=[SCOPE])  # one memory, as one reading of the whole session leaves
    assert d.layer == "decision" and "厂商推送通道" in d.metadata["proposal"]
    assert "安卓后台会被杀" in d.content and "安卓后台会被杀" in d.metadata["rationale"]
    assert d.metadata["provenance"][-1]["replaced_content"].startswith(
        "通知推送要不要换个方案？ 第一种。 (agreed"
    )  # the words before


def test_how_long_a_run_takes_is_no_request_to_run_it():
    assert [c.content for c in one("跑下来大概 3 分钟。")] == ["跑下来大概 3 分钟。"]


# from a blind trial: facts said plainly that were not kept
@pytest.mark.parametrize(
    "text",
    [
        "Session tickets expire after 24 hours.",
        "Ticket expiry changes from 24 hours to 12 hours, security asked for it.",
        "On-call rotated to Tom this week.",
        "对账 CronJob 的时间也改一下，从凌晨 2 点改到凌晨 3 点半，避开结算高峰。",
        "invoice 的 draft 状态超过 48 小时自动 void。",
        "notify-service 跑在 8081。",
    ],
)
def test_a_plainly_said_fact_or_change_is_kept(text):
    assert [c.layer for c in one(text)] == ["fact"]


def test_what_the_assistant_says_back_or_the_options_it_lists_are_no_experience():
    """ "有问题先找她" names whom to ask, not a problem; "告警怎么发比较好？" asks for options: neither
    makes the next answer an explanation (a blind trial stored the echo "记住了：…" and the options as
    experiences, and the echo then closed the user's own fact)."""
    cands = extract(
        turns_of(
            ("user", "recon-service 的 owner 是老王（王建国），这周 on-call 是小李（李娜），有问题先找她。"),
            ("assistant", "记住了：recon-service owner 是王建国（老王），本周 on-call 是李娜（小李）。"),
            ("user", "对账出现差异的时候，告警怎么发比较好？现在是没有告警的。"),
            (
                "assistant",
                "有三个方案：\n1. 企业微信机器人：接入最快，但夜里容易被忽略；\n2. 邮件：有留档，但时效性差；\n"
                "3. PagerDuty：能电话叫醒 on-call，但要采购。\n我倾向 1。",
            ),
        ),
        scope=SCOPE,
    )
    assert [c.layer for c in cands] == ["fact"], [c.content for c in cands]


def test_a_lead_that_only_says_context_follows_is_not_kept():
    [c] = one("先 sync 一下 context：billing-service 部署在 k8s 的 billing namespace，对外 HTTP port 8080。")
    assert c.content.startswith("billing-service 部署在 k8s"), c.content


def test_a_count_of_what_failed_and_where_the_assistant_looks_next_explain_nothing():
    # a blind trial: kept as the failure's explanation
    t = turns_of(("user", "can you run the tests"))
    t += [
        {
            "role": "tool",
            "kind": "tool_error",
            "tool": "Bash",
            "input": "cd route-planner && pytest -q",
            "error": "E       AssertionError: assert datetime(2026, 4, 2, 6, 10) == datetime(2026, 4, 2, 0, 40)",
        },
        {
            "role": "assistant",
            "kind": "text",
            "text": "One failure in `test_eta_crosses_midnight_ist`. Looking at the ETA code.",
        },
    ]
    assert [c for c in extract(t, scope=SCOPE) if c.layer == "experience"] == []
