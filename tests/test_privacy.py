"""memory.privacy: secrets never reach the database, the index, exports or logs; ordinary code stays readable.

Two corpora drive most tests. tests/data/secrets_corpus.jsonl holds secrets in context (shell
history, .env files, stack traces, chat, JSON and YAML config, curl, docker, Chinese sentences),
each entry naming the exact secret substring; every value is a made-up string with a real
key's shape. tests/data/benign_corpus.jsonl holds code text that looks secret-ish but is not
(commit ids, lockfile hashes, UUIDs, long identifiers, placeholders, prose about passwords).
tests/benchmarks/bench_privacy.py reports recall, false-positive rate and speed on them.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import config as config_mod
from memory.app import transfer
from memory.embed import HashEmbedder
from memory.errors import ConfigError, InvalidInput
from memory.lang import privacy
from memory.lang.privacy import RedactingFilter, is_excluded, redact
from memory.retrieval import ranking as retrieval
from memory.store import NewMemory, Store

DATA = Path(__file__).resolve().parent / "data"


def load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


SECRETS = load("secrets_corpus.jsonl")
BENIGN = load("benign_corpus.jsonl")
WORD = re.compile(r"[A-Za-z]{3,}|[\u4e00-\u9fff]+")


def context_words(entry: dict) -> set[str]:
    """The words of an entry outside its secret: what a reader of the memory still needs."""
    return set(WORD.findall(entry["text"].replace(entry["secret"], " ")))


def distinctive_parts(secret: str) -> list[str]:
    """Runs of letters and digits long enough that only the secret could contain them."""
    return [p for p in re.findall(r"[A-Za-z0-9]{8,}", secret)]


# -- the corpora themselves -------------------------------------------------------------------------


def test_the_secrets_corpus_has_at_least_sixty_distinct_secrets_each_inside_its_text():
    assert len(SECRETS) >= 60
    assert len({e["secret"] for e in SECRETS}) == len(SECRETS)
    for e in SECRETS:
        assert e["secret"] in e["text"], e["note"]
        assert context_words(e), f"{e['note']}: no context to keep"
    assert sum(bool(re.search(r"[\u4e00-\u9fff]", e["text"])) for e in SECRETS) >= 5  # Chinese contexts


def test_the_benign_corpus_has_at_least_sixty_entries():
    assert len(BENIGN) >= 60
    assert len({e["text"] for e in BENIGN}) == len(BENIGN)


# -- recall -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("entry", SECRETS, ids=[e["note"] for e in SECRETS])
def test_every_corpus_secret_is_removed_and_its_context_survives(entry):
    out = redact(entry["text"])
    assert entry["secret"] not in out
    for part in distinctive_parts(entry["secret"]):
        assert part not in out, f"a piece of the secret survived: {part}"
    lost = sorted(w for w in context_words(entry) if w not in out)
    assert not lost, f"context words removed: {lost}\n{out}"
    assert "[REDACTED:" in out


@pytest.mark.parametrize("entry", SECRETS, ids=[e["note"] for e in SECRETS])
def test_redacting_twice_changes_nothing_more(entry):
    once = redact(entry["text"])
    assert redact(once) == once


@pytest.mark.parametrize(
    "text, label",
    [
        ("export GITHUB_TOKEN=ghp_" + "Zq3" * 12, "[REDACTED:github-token]"),
        ("aws_access_key_id = AKIA" + "Q7XK" * 4, "[REDACTED:aws-access-key]"),
        ("key: sk-ant-api03-" + "Xy9_" * 10, "[REDACTED:anthropic-key]"),
        ("DB_PASSWORD=Tr0ub4dor-and-3", "[REDACTED:password]"),
        ("curl -H 'Authorization: Bearer " + "aB3dE6gH9jK2mN5p" * 2 + "'", "[REDACTED:bearer-token]"),
        ("postgres://app:s3cr3t-pw@db:5432/app", "[REDACTED:url-password]"),
        # a key alone in the user-info (a blind trial stored a Sentry DSN's key)
        ("DSN: https://3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c@o123456.ingest.sentry.io/4505112", "[REDACTED:url-token]"),
    ],
)
def test_a_redaction_says_what_kind_of_secret_was_there(text, label):
    assert label in redact(text)


def test_a_private_key_block_keeps_its_begin_and_end_lines_but_loses_its_body():
    body = "\n".join(["MIIEowIBAAKCAQEA7v2Xq9" + "Lk4Pz8Rt1Wm6Yb3Nc5Qd0" * 2] * 4)
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    out = redact(text)
    assert "MIIEowIBAAKCAQEA" not in out
    assert out.startswith("-----BEGIN RSA PRIVATE KEY-----") and out.endswith("-----END RSA PRIVATE KEY-----")


def test_a_private_key_block_cut_off_before_its_end_line_is_still_removed():
    text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" * 2 + "\n(output truncated)"
    out = redact(text)
    assert "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU" not in out
    assert "(output truncated)" in out


# -- false positives ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["git clone ssh://git@github.com/acme/lgx.git", "https://deploy-bot-readonly-user@gitlab.example.com/x.git"]
)
def test_a_login_in_a_urls_user_info_is_no_secret(text):
    assert redact(text) == text


@pytest.mark.parametrize("entry", BENIGN, ids=[e["note"] for e in BENIGN])
def test_ordinary_code_text_is_left_exactly_as_it_was(entry):
    assert redact(entry["text"]) == entry["text"]


@pytest.mark.parametrize(
    "placeholder, real",
    [
        ("API_KEY=<your key here>", "API_KEY=Xk29vLq81mWz"),
        ("OPENAI_API_KEY=${OPENAI_API_KEY}", "OPENAI_API_KEY=Xk29vLq81mWz"),
        ("export GITHUB_TOKEN=$GH_TOKEN", "export GITHUB_TOKEN=Xk29vLq81mWz"),
        ('"password": "********"', '"password": "Xk29vLq81mWz"'),
        ("db_password = xxxxxxxx", "db_password = Xk29vLq81mWz"),
        ("client = OpenAI(api_key=api_key)", "client = OpenAI(api_key='Xk29vLq81mWz')"),
        ("token = get_token()", "token = 'Xk29vLq81mWz'"),
        ("password: str", "password: Xk29vLq81mWz"),
        # the code that reads a header's secret (a blind trial's pasted client had lost its whole header)
        ("headers: { Authorization: process.env.UNLEASH_API_TOKEN }", "headers: { Authorization: Xk29vLq81mWz }"),
        ("Authorization: Bearer import.meta.env.VITE_API_TOKEN", "Authorization: Bearer Xk29vLq81mWz.k3Rt9"),
    ],
)
def test_placeholders_and_code_stay_readable_while_the_same_line_with_a_value_is_redacted(placeholder, real):
    # Placeholders are not secrets, and a memory "set OPENAI_API_KEY=${OPENAI_API_KEY}" is useful.
    assert redact(placeholder) == placeholder
    assert "Xk29vLq81mWz" not in redact(real)


def test_the_words_password_and_token_in_prose_are_not_redacted():
    for prose in (
        "reset the password field validation",
        "the tokenizer splits each token",
        "Password: at least 12 characters",
        "error: invalid token: expired",
        "密码字段的校验",
        "令牌桶限流",
    ):
        assert redact(prose) == prose


# -- <private> spans ----------------------------------------------------------------------------------


def test_private_spans_are_dropped_whole_across_lines_and_case():
    text = "keep this <private>my salary is 9000\nand my address</private> and this <PRIVATE>x</Private>."
    out = redact(text)
    assert out == "keep this  and this ."


def test_an_unclosed_private_span_drops_the_rest_of_the_text():
    assert redact("notes: <private reason='personal'>everything after here") == "notes: "


# -- extra patterns -----------------------------------------------------------------------------------


def test_extra_patterns_redact_the_first_group_or_else_the_whole_match():
    text = "ticket ACME-7F3K9Q2M1Z8X4C6V5B0N and internal_code=zebra-42 here"
    out = redact(text, ["ACME-[0-9A-Z]{20}", r"internal_code=(\S+)"])
    assert out == "ticket [REDACTED:custom] and internal_code=[REDACTED:custom] here"
    assert redact(text) == text  # without the patterns these are not secrets


def test_an_extra_pattern_overlapping_a_built_in_rule_leaves_no_piece_of_either():
    secret = "ghp_" + "Ab1" * 12
    out = redact(f"id {secret}-suffix99", [r"ghp_\w+-suffix\d+"])
    assert "Ab1" not in out and "suffix99" not in out


# -- robustness -----------------------------------------------------------------------------------------

fragments = st.sampled_from(
    [e["text"] for e in SECRETS[:20] + BENIGN[:20]]
    + [
        "password=",
        "token: ",
        "Bearer ",
        "://u:",
        "@",
        "\n",
        "-----BEGIN PRIVATE KEY-----",
        "<private>",
        "密码是",
        "sk-",
        "ghp_",
        "=",
        '"',
        "'",
        " ",
        "İ",
        "ǅ",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(fragments, st.text(max_size=40)), max_size=8).map("".join))
def test_redact_never_fails_and_is_idempotent_on_any_text(text):
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


# -- each rule's needle: a rule is skipped on text without it, which must change no result ----------


def _literal_runs(rx: re.Pattern[str]) -> list[str]:
    """Runs of consecutive top-level literal characters of `rx`: each is a piece of every match."""
    try:
        from re import _parser  # Python 3.11+
    except ImportError:  # pragma: no cover
        import sre_parse as _parser  # type: ignore[no-redef]
    runs, run = [], ""
    for op, arg in _parser.parse(rx.pattern, rx.flags):
        if op is _parser.LITERAL:
            run += chr(arg)
        else:
            runs.append(run)
            run = ""
    return [*runs, run]


@pytest.mark.parametrize("rule", privacy._KNOWN + privacy._CONTEXT, ids=lambda r: f"{r.kind}:{r.needle}")
def test_each_rules_needle_is_a_literal_piece_of_every_match(rule):
    # A top-level literal run is matched character for character by every match (case-sensitively:
    # no IGNORECASE), so text without the needle cannot match and skipping the rule there is exact.
    assert rule.needle and not rule.regex.flags & re.IGNORECASE
    assert any(rule.needle in run for run in _literal_runs(rule.regex)), _literal_runs(rule.regex)


def fixture_texts() -> list[str]:
    """Every string in the corpora and in the JSON fixtures of tests/data (sessions, bilingual set)."""

    def strings(v) -> list[str]:
        if isinstance(v, str):
            return [v]
        if isinstance(v, dict):
            return [s for x in v.values() for s in strings(x)]
        if isinstance(v, list):
            return [s for x in v for s in strings(x)]
        return []

    out = []
    for path in sorted(DATA.rglob("*.json*")):
        lines = path.read_text(encoding="utf-8").splitlines() if path.suffix == ".jsonl" else [path.read_text()]
        for line in lines:
            if line.strip():
                out += strings(json.loads(line))
    return out


def without_needles(monkeypatch) -> None:
    """Run every rule on every text, as before needles existed."""
    monkeypatch.setattr(privacy, "_KNOWN", [replace(r, needle="") for r in privacy._KNOWN])
    monkeypatch.setattr(privacy, "_CONTEXT", [replace(r, needle="") for r in privacy._CONTEXT])


def test_needles_change_nothing_on_the_corpora_and_fixtures(monkeypatch):
    texts = fixture_texts()
    assert len(texts) > 1000
    fast = [redact(t) for t in texts]
    without_needles(monkeypatch)
    assert [redact(t) for t in texts] == fast
    assert sum(a != b for a, b in zip(fast, texts)) >= len(SECRETS)  # the check saw redactions


needle_fragments = st.sampled_from(
    [r.needle for r in privacy._KNOWN + privacy._CONTEXT]
    + [r.needle.upper() for r in privacy._CONTEXT]
    + [
        "RSA PRIVATE KEY-----\n",
        "-----END RSA PRIVATE KEY-----",
        "MIIEvQIBADANBgkqhkiG9w0BAQ",
        "eyJhbGciOiJIUzI1NiJ9.",
        "ya29.a0AfH6SMBx3k9Lq2Wz8Rt5Yp7",
        "hvs.CAESIJ7k2Lq9Wz3Xr5Tp8Yb1Nm4",
        "dp.st.",
        ":AAH7k2Lq9Wz3Xr5Tp8Yb1Nm4Qs6",
        "services/T0B1C2D3E/B4F5G6H7I/",
        "webhooks/123456789012345678/",
        "https://user:",
        "@db.example.com",
        ": Bearer ",
        "?X-Amz-Signature=",
        "&sig=",
        " -u ",
        "admin:",
        " -p",
        "docker login ",
        " password ",
        "--password=",
        "--token ",
        "Zx8Kq2Lm9Pw4Rt7Y",
        "1234567890",
        " ",
        "\n",
        '"',
        "'",
        "İ",
        "ǅ",
        "密码是",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(needle_fragments, st.text(max_size=12)), max_size=10).map("".join))
def test_a_rule_finds_nothing_in_text_without_its_needle(text):
    low = privacy._lower(text)
    for rule in privacy._KNOWN + privacy._CONTEXT:
        if rule.needle not in (low if rule.lower else text):
            assert privacy._rule_spans(rule, text, low, 0) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(needle_fragments, st.text(max_size=12)), max_size=10).map("".join))
def test_needles_change_no_redaction_of_any_text(text):
    fast = redact(text)
    with pytest.MonkeyPatch.context() as monkeypatch:
        without_needles(monkeypatch)
        assert redact(text) == fast


def test_text_whose_lower_case_changes_length_is_still_redacted():
    # 'İ'.lower() is two characters; offsets found in the lower-cased text must still line up.
    text = "İstanbul İİİ Authorization: Bearer " + "Zx8Kq2Lm9Pw4Rt7Y" * 2 + " İ"
    out = redact(text)
    assert "Zx8Kq2Lm9Pw4Rt7Y" not in out and out.startswith("İstanbul İİİ Authorization: Bearer [REDACTED")


# -- logs ----------------------------------------------------------------------------------------------


def test_log_records_pass_through_the_redacting_filter_without_their_secrets(caplog):
    secret = "ghp_" + "Lq7Wz2" * 6
    log = logging.getLogger("maple.test_privacy")
    handler_filter = RedactingFilter()
    log.addFilter(handler_filter)
    try:
        with caplog.at_level(logging.WARNING, logger="maple.test_privacy"):
            log.warning("push failed with token %s", secret)
            try:
                raise RuntimeError(f"auth failed for {secret}")
            except RuntimeError:
                log.exception("giving up")
    finally:
        log.removeFilter(handler_filter)
    assert secret not in caplog.text
    assert "push failed with token [REDACTED:github-token]" in caplog.text
    assert "auth failed for [REDACTED:github-token]" in caplog.text


# -- configuration ---------------------------------------------------------------------------------------


def test_redact_patterns_and_excluded_projects_default_to_empty_lists(home):
    c = config_mod.load(home=home, env={})
    assert c.redact_patterns == [] and c.excluded_projects == []


@pytest.mark.parametrize(
    "key, value, words",
    [
        ("redact_patterns", "ACME-.*", "must be a list"),
        ("redact_patterns", ["ACME-(["], "not a valid regular expression"),
        ("redact_patterns", [""], "not a non-empty string"),
        ("redact_patterns", ["x*"], "matches the empty string"),
        ("excluded_projects", "~/work", "must be a list"),
        ("excluded_projects", [3], "list of path globs"),
    ],
)
def test_bad_privacy_settings_are_rejected_with_the_key_named(home, key, value, words):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({key: value}))
    with pytest.raises(ConfigError) as err:
        config_mod.load(home=home, env={})
    assert key in str(err.value) and words in str(err.value)


def test_excluded_project_globs_match_the_project_and_nothing_else(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    globs = ["~/clients/*", "/srv/secret-repo"]
    assert is_excluded(str(tmp_path / "clients" / "acme"), globs)
    assert is_excluded("/srv/secret-repo", globs)
    assert is_excluded("/srv/secret-repo/sub", globs)
    assert not is_excluded("/srv/secret-repository", globs)
    assert not is_excluded(str(tmp_path / "work" / "maple"), globs)
    assert not is_excluded("global", globs)


# -- through the store: the database file, the WAL, the index, search and export --------------------


def test_the_store_refuses_memories_for_an_excluded_project(tmp_path):
    c = config_mod.load(home=tmp_path / "home", env={}, excluded_projects=[str(tmp_path / "clients") + "/*"])
    with Store.open(c, HashEmbedder(64)) as s:
        with pytest.raises(InvalidInput) as err:
            s.add(NewMemory("the client's staging box is flaky", scope=str(tmp_path / "clients" / "acme")))
        assert "excluded_projects" in str(err.value) and "clients/acme" in str(err.value)
        assert s.add(NewMemory("ours is fine", scope=str(tmp_path / "work" / "maple"))).id
        assert s.count() == 1


def test_the_store_applies_the_configured_redact_patterns_to_every_field(tmp_path):
    c = config_mod.load(home=tmp_path / "home", env={}, redact_patterns=[r"ACME-[0-9A-Z]{12}"])
    with Store.open(c, HashEmbedder(64)) as s:
        m = s.add(
            NewMemory(
                "badge ACME-7F3K9Q2M1Z8X opens the lab",
                subject="badge ACME-7F3K9Q2M1Z8X",
                tags=["ACME-7F3K9Q2M1Z8X"],
                source_ref="ticket ACME-7F3K9Q2M1Z8X",
                metadata={"note": "ACME-7F3K9Q2M1Z8X"},
            )
        )
    assert "7F3K9Q2M1Z8X" not in json.dumps(m.to_dict())
    assert m.content == "badge [REDACTED:custom] opens the lab"


@pytest.fixture(scope="module")
def stored_corpus(tmp_path_factory):
    """Every secrets-corpus text stored through the store, some secrets also in subject, tags and metadata."""
    home = tmp_path_factory.mktemp("privacy") / "home"
    s = Store.open(config_mod.load(home=home, env={}), HashEmbedder(64))
    items = [
        NewMemory(
            e["text"],
            subject=e["note"],
            tags=["privacy"],
            metadata={"raw": e["text"]},
            source_ref=e["text"] if i % 3 == 0 else None,
        )
        for i, e in enumerate(SECRETS)
    ]
    memories = s.add_many(items[:30]) + [s.add(it) for it in items[30:]]  # one batch, then one by one
    assert len({m.id for m in memories}) == len(SECRETS)
    yield s, home, memories
    s.close()


def raw_files(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in home.iterdir() if p.name.startswith("memory.db")}


def test_no_secret_is_in_the_database_file_or_its_wal(stored_corpus):
    s, home, _ = stored_corpus
    files = raw_files(home)
    assert "memory.db-wal" in files and len(files["memory.db-wal"]) > 0  # the WAL holds the writes
    blob = b"".join(files.values())
    assert b"staging API" in blob  # the check can see stored text at all
    for e in SECRETS:
        for needle in [e["secret"], *distinctive_parts(e["secret"])]:
            assert needle.encode("utf-8") not in blob, f"{e['note']}: {needle[:20]}... reached the file"


def test_no_secret_is_a_term_of_the_full_text_index(stored_corpus):
    s, _, _ = stored_corpus
    s.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.privacy_vocab USING fts5vocab(main, memory_fts, row)")
    terms = {t for (t,) in s.conn.execute("SELECT term FROM temp.privacy_vocab")}
    assert {"docker", "heroku", "mysql"} <= terms  # the index holds the context
    secrets = [e["secret"].lower() for e in SECRETS]
    leaked = [t for t in terms if len(t) >= 8 and any(t in sec for sec in secrets)]
    assert not leaked


def test_searching_for_a_piece_of_a_secret_finds_no_memory_by_keyword(stored_corpus):
    s, _, _ = stored_corpus
    for e in SECRETS:
        for part in distinctive_parts(e["secret"])[:2]:
            results = retrieval.search(s, retrieval.make_query(part, ["global"]), record=False)
            for r in results:
                assert "bm25" not in r.channels, f"{e['note']}: keyword hit for {part}"
                assert part not in json.dumps(r.to_dict(), ensure_ascii=False)


def test_searching_for_the_context_still_finds_the_redacted_memory(stored_corpus):
    s, _, _ = stored_corpus
    results = retrieval.search(s, retrieval.make_query("staging API token", ["global"]), record=False)
    assert any("hit the staging API" in r.memory.content for r in results)


def test_no_secret_is_in_an_export(stored_corpus, tmp_path):
    s, _, memories = stored_corpus
    dumped = json.dumps([m.to_dict() for m in s.list(limit=1000)], ensure_ascii=False)
    path = tmp_path / "export.jsonl"
    transfer.write_export(s, path)
    exported = path.read_text(encoding="utf-8")
    assert len(exported.splitlines()) == len(SECRETS)
    for e in SECRETS:
        for needle in [e["secret"], *distinctive_parts(e["secret"])]:
            assert needle not in dumped and needle not in exported, e["note"]


def test_no_secret_survives_in_the_database_after_it_is_closed(tmp_path):
    home = tmp_path / "home"
    with Store.open(config_mod.load(home=home, env={}), HashEmbedder(64)) as s:
        s.add_many([NewMemory(e["text"]) for e in SECRETS[:20]])
    blob = b"".join(raw_files(home).values())
    assert b"DATABASE_HOST" in blob
    for e in SECRETS[:20]:
        assert e["secret"].encode("utf-8") not in blob
