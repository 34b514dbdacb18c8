"""memory.text: the tokeniser shared by the index and the query, and FTS5 syntax safety."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.lang import text
from memory.retrieval import ranking as retrieval
from memory.store import NewMemory, Store, db


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One store for the module: hypothesis runs many queries against it and never writes."""
    home: Path = tmp_path_factory.mktemp("text") / "home"
    s = Store.open(config_mod.load(home=home, env={}), HashEmbedder(64))
    s.add_many(
        [
            NewMemory("Run pytest with -x to stop at the first failure"),
            NewMemory("The fetchRetry_helper wraps HTTPServer calls"),
            NewMemory("用户喜欢早上开会"),
            NewMemory("NEAR and AND are words here, not operators"),
        ]
    )
    yield s
    s.close()


@pytest.fixture(scope="module")
def fts(tmp_path_factory):
    """A bare FTS5 table configured like memory_fts, for round trips of index_text/query_terms."""
    conn = db.connect(tmp_path_factory.mktemp("fts") / "fts.db", vectors=False)
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2', "
        "content = '', contentless_delete = 1)"
    )
    yield conn
    conn.close()


def search(store: Store, query: str) -> list[retrieval.Result]:
    return retrieval.search(store, retrieval.make_query(query, ["global"]), record=False)


def keyword_hits(store: Store, query: str) -> list[str]:
    return [r.memory.content for r in search(store, query) if "bm25" in r.channels]


# -- FTS5 syntax safety --------------------------------------------------------------------------

HOSTILE = [
    '"',
    '""',
    '"pytest',
    'pytest"',
    "'pytest'",
    "pytest*",
    "*",
    "***",
    "NEAR",
    "NEAR(a b)",
    "NEAR(pytest failure, 2)",
    "-pytest",
    "- -",
    "pytest -x",
    "body:pytest",
    ":",
    "col:",
    "AND OR NOT",
    "pytest AND",
    "OR pytest",
    "NOT",
    "(pytest",
    "pytest)",
    "()",
    "(((",
    "^pytest",
    "^",
    "a + b",
    "{body}: pytest",
    "pytest OR",
    '"unbalanced',
    "!!!",
    "?.,;",
    "¿¡",
    "the of and to",
    "\\",
    "%",
    "_",
    "pytest\x00",
    "\u200b",
    "🙂🙂",
    "'; DROP TABLE memories; --",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_search_never_raises_on_fts_syntax_in_the_query(store, query):
    results = search(store, query)
    assert isinstance(results, list)
    assert store.count() == 4  # and certainly never changes the data


@pytest.mark.parametrize(
    "query", ['"pytest', "pytest*", "-pytest", "body:pytest", "(pytest", "^pytest", "pytest AND", "{body}: pytest"]
)
def test_a_real_word_wrapped_in_fts_syntax_is_still_matched_as_a_word(store, query):
    assert keyword_hits(store, query) == ["Run pytest with -x to stop at the first failure"]


def test_operator_words_are_matched_as_plain_words(store):
    assert keyword_hits(store, "operators NEAR") == ["NEAR and AND are words here, not operators"]
    assert set(keyword_hits(store, "NEAR(pytest failure, 2)")) == {
        "Run pytest with -x to stop at the first failure",
        "NEAR and AND are words here, not operators",
    }


def test_a_query_of_only_stopwords_or_punctuation_has_no_keyword_terms():
    assert text.query_terms("the of and to is it") == []
    assert text.query_terms("?!.,;:()[]{}\"'*^-") == []
    assert text.query_terms("的 了 是") == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200).filter(lambda s: s.replace("\x00", " ").strip()))
def test_search_with_any_unicode_query_returns_a_list(store, query):
    # NUL counts as a space: a query of only NULs and spaces is empty, an InvalidInput.
    assert isinstance(search(store, query), list)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_query_terms_of_any_text_are_always_valid_fts5(fts, query):
    terms = text.query_terms(query, text.jieba_segmenter())
    assert all(t.startswith('"') and t.endswith('"') for t in terms)
    if terms:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (text.match_or(terms),)).fetchall()


def _chars(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.characters(min_codepoint=lo, max_codepoint=hi, categories=["L", "N", "P", "Zs"])


# Latin, Greek, Cyrillic, kana, CJK and Hangul: scripts whose case folding Python and SQLite's
# unicode61 (Unicode 6.1 tables) agree on. Letters cased only in later Unicode versions are the
# reason Cherokee has its own test below.
REALISTIC_TEXT = st.text(
    st.one_of(
        _chars(0x20, 0x24F),
        _chars(0x380, 0x4FF),
        _chars(0x3041, 0x3096),
        _chars(0x30A1, 0x30FA),
        _chars(0x4E00, 0x9FFF),
        _chars(0xAC00, 0xD7A3),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(REALISTIC_TEXT)
def test_any_text_is_found_by_its_own_query_terms(fts, body):
    # The index and the query tokenise the same way, so a text always matches itself.
    terms = text.query_terms(body)
    if not terms:
        return
    with fts:
        fts.execute("DELETE FROM t")
        fts.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (text.index_text(body),))
        assert fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (text.match_or(terms),)).fetchall() == [(1,)]


# -- index_text ----------------------------------------------------------------------------------


def test_index_text_rewrites_a_chinese_run_as_overlapping_bigrams():
    assert text.index_text("我喜欢开会") == "我喜 喜欢 欢开 开会"


def test_index_text_keeps_a_single_chinese_character_as_it_is():
    assert text.index_text("猫") == "猫"


def test_index_text_separates_chinese_from_english_inside_one_word():
    assert text.index_text("用pytest跑测试") == "用 pytest 跑测 测试"


def test_index_text_splits_identifiers_and_keeps_the_whole_word():
    assert text.index_text("fetchRetry_helper") == "fetchRetry fetch Retry helper"
    assert text.index_text("HTTPServer") == "HTTPServer HTTP Server"
    assert text.index_text("parseJSON2") == "parseJSON2 parse JSON 2"
    assert text.index_text("plain words") == "plain words"


@settings(max_examples=500)
@given(st.one_of(st.text(), st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True)))
def test_the_shortcut_for_plain_words_splits_every_word_as_the_identifier_regex_does(word):
    parts = text._CAMEL.findall(word)
    assert text._identifier_parts(word) == (parts if len(parts) > 1 else [])


def test_a_part_of_an_identifier_finds_the_memory(store):
    assert keyword_hits(store, "retry") == ["The fetchRetry_helper wraps HTTPServer calls"]
    assert keyword_hits(store, "server") == ["The fetchRetry_helper wraps HTTPServer calls"]


def test_index_text_drops_punctuation_and_symbols():
    assert text.index_text("a.b, c!? (d) — e") == "a b c d e"


# -- query_terms ---------------------------------------------------------------------------------


def test_query_terms_lowercases_dedupes_and_quotes():
    assert text.query_terms("Pytest pytest PYTEST fixtures") == ['"pytest"', '"fixtures"']


def test_query_terms_turn_a_chinese_run_into_bigrams_without_a_segmenter():
    assert text.query_terms("开会时间") == ['"开会"', '"会时"', '"时间"']


def test_query_terms_turn_each_segmented_chinese_word_into_a_phrase():
    assert text.query_terms("数据库备份", lambda run: ["数据库", "备份"]) == ['"数据 据库"', '"备份"']


def test_query_terms_drop_chinese_question_words_when_segmented():
    assert text.query_terms("什么时候开会", lambda run: ["什么时候", "开会"]) == ['"开会"']


def test_query_terms_leave_out_the_words_that_frame_a_request():
    prompt = "Which port should the integration tests use for the dev database? Please tell me what I need"
    assert text.query_terms(prompt) == ['"port"', '"integration"', '"tests"', '"dev"', '"database"', '"tell"']
    assert text.query_terms("I don't know why it doesn't build") == ['"know"', '"build"']  # don + t, doesn + t


def test_query_terms_keep_the_words_that_name_the_subject_in_code_talk():
    words = "test run port build make new first time work change error deploy install fix"
    assert text.query_terms(words) == [f'"{w}"' for w in words.split()]


def test_chinese_bigrams_never_straddle_a_function_word():
    # 应该 and 哪个 are cut out; 用 is left alone between them and dropped (the index has it only in bigrams).
    assert text.query_terms("集成测试应该用哪个端口") == ['"集成"', '"成测"', '"测试"', '"端口"']


def test_a_chinese_bigram_holding_a_particle_is_dropped_and_content_words_with_function_characters_stay():
    assert text.query_terms("计费服务的端口是多少") == ['"计费"', '"费服"', '"服务"', '"端口"']
    terms = text.query_terms("在线用户会话")
    assert {'"在线"', '"用户"', '"会话"'} <= set(terms)


def test_a_chinese_prompt_of_only_function_words_has_no_terms():
    assert text.query_terms("是不是应该这样？怎么办呢") == []
    assert text.query_terms("是不是应该这样？怎么办呢", lambda run: ["是不是", "应该", "这样", "怎么办", "呢"]) == []


def test_segmented_words_holding_a_particle_are_dropped_as_function_words():
    words = ["计费", "服务", "的", "监控", "是从", "哪个", "端口", "抓", "的"]
    assert text.query_terms("计费服务的监控是从哪个端口抓的", lambda run: words) == [
        '"计费"',
        '"服务"',
        '"监控"',
        '"端口"',
        '"抓"',
    ]


def test_stopwords_are_left_out_of_queries_never_out_of_the_index():
    assert (
        text.index_text("Use the dev database, 应该用哪个端口") == "Use the dev database 应该 该用 用哪 哪个 个端 端口"
    )


@pytest.mark.xfail(
    strict=True,
    reason="known gap: a one-character Chinese query cannot match a longer "
    "run, indexed only as bigrams; unigrams in the same column lengthen every document "
    "and cost zh->zh hit@1 (.86 < .9); a separate FTS column would fix it",
)
def test_a_one_character_chinese_word_finds_a_memory_that_contains_it(fts):
    with fts:
        fts.execute("DELETE FROM t")
        fts.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (text.index_text("我的猫叫咪咪"),))
    terms = text.query_terms("猫")
    assert fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (text.match_or(terms),)).fetchall() == [(1,)]


def test_cherokee_text_is_found_by_its_own_words(fts):
    with fts:
        fts.execute("DELETE FROM t")
        fts.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (text.index_text("ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ"),))
    terms = text.query_terms("ᏣᎳᎩ")
    assert fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (text.match_or(terms),)).fetchall() == [(1,)]


# -- estimate_tokens and has_cjk -----------------------------------------------------------------


@pytest.mark.parametrize(
    "sample, tokens",
    [
        ("", 0),
        ("abcd", 1),
        ("abcde", 2),
        ("a" * 400, 100),
        ("开会", 2),
        ("用pytest跑测试", 2 + 4),
    ],
)
def test_estimate_tokens_counts_four_latin_characters_or_one_cjk_character_per_token(sample, tokens):
    assert text.estimate_tokens(sample) == tokens


def test_has_cjk_detects_chinese_japanese_and_korean():
    assert text.has_cjk("hello 世界") and text.has_cjk("カタカナ") and text.has_cjk("한국어")
    assert not text.has_cjk("hello world") and not text.has_cjk("")


def test_cjk_share_says_how_chinese_a_text_is_a_han_character_counting_as_two_letters():
    from memory.lang.text import cjk_share

    assert cjk_share("数据库备份") == 1.0
    assert cjk_share("The backups are kept in S3") == 0.0
    assert cjk_share("") == 0.0 and cjk_share("8080 :: 42") == 0.0
    assert cjk_share("pg 备份") == 4 / 6  # two Han characters (4) against two letters


def test_a_query_also_searches_the_other_languages_words_for_its_glossary_words():
    zh = text.translated_terms("谁负责账单服务的值班？", text.query_terms("谁负责账单服务的值班？"))
    assert {'"billing"', '"on call"', '"service"'} <= set(zh)
    en = text.translated_terms("Who is on-call for the billing database?", [])
    assert {'"值班"', '"账单"', '"数据 据库"'} <= set(en)  # a Chinese word as its bigram phrase
    assert '"计费"' not in en  # one translation a word: synonyms would count it again
    # One Chinese character is no glossary word (类 in 分类), and words without one add nothing.
    assert text.translated_terms("分类", []) == [] and text.translated_terms("pnpm npm", ['"pnpm"']) == ['"pnpm"']


ROOT = Path(__file__).resolve().parents[1]


def test_the_glossary_is_read_only_when_a_search_needs_it():
    code = "import sys, memory.lang.text; print('memory.lang.glossary' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "False"


def test_a_question_put_into_the_other_language_keeps_its_other_words_and_names():
    from memory.lang import glossary

    # Each glossary word in place, in the other language; the rest as written.
    assert glossary.translate("风控打分超时的话，订单会被拦截吗？") == " risk 打分 timeout 的话， order 会被拦截吗？"
    assert glossary.translate("where is the rate limit configured?") == "where is the 限流 configured?"
    assert "ledger" in glossary.translate("账本服务的负责人是谁？")  # the everyday word (a blind trial's miss)
    # A name with a hyphen or a dot is one word, kept unless the glossary holds it whole.
    said = glossary.translate("Who is on call for billing-service this week?")
    assert said.startswith("Who is 值班 for billing-service ") and "call" not in said
    # Nothing to translate: the question itself.
    assert glossary.translate("pnpm or npm?") == "pnpm or npm?" and glossary.translate("") == ""


def test_counterparts_give_every_translation_of_a_word_either_way() -> None:
    from memory.lang import glossary

    assert {"order", "orders"} <= glossary.counterparts("订单号")  # the glossary words inside it
    assert {"支付", "付款"} <= glossary.counterparts("Payments")  # lowercased, singular
    assert glossary.counterparts("9090") == frozenset()


def test_a_query_searches_the_other_form_of_a_word_engineers_shorten():
    # "prod" in a question finds the note saying "production", and back (a blind trial's miss).
    from memory.lang import text as text_mod

    asked = text_mod.translated_terms("which port in prod?", text_mod.query_terms("which port in prod?"))
    assert '"production"' in asked
    back = text_mod.translated_terms("the production database", text_mod.query_terms("the production database"))
    assert '"prod"' in back and '"db"' in back
    assert '"production"' not in text_mod.translated_terms("the product page", text_mod.query_terms("the product page"))


def test_the_glossary_knows_the_vendors_and_words_a_team_writes_in_either_language():
    # a blind trial (20): "the Alipay reconciliation job", "Tencent Cloud", "the change freeze before big sales"
    # found nothing of the Chinese memories that said them (支付宝…对账, 腾讯云, 大促…封网)
    from memory.lang import glossary

    said = glossary.translate("When does the Alipay reconciliation job run? Is Tencent Cloud the backup?")
    assert "支付宝" in said and "对账" in said and "腾讯云" in said
    assert "change freeze" in glossary.translate("大促前两周开始封网") and "big sale" in glossary.translate("大促")
