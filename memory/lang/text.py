"""Text for the keyword index: one tokeniser for indexing and querying, in English and Chinese.

Stdlib only: the command hook imports this on every prompt.

The FTS5 table uses `porter unicode61`, which handles English (stemming, case, diacritics) but
treats a run of Chinese characters as one token. So before text reaches FTS5, every CJK run is
rewritten as its overlapping character bigrams (a one-character run stays as it is). A two-
character word (开会) is then exactly one indexed token, a longer word is a phrase of bigrams,
and no dictionary is needed on either side. Where jieba runs (the server), queries are cut into
words first, so each word becomes a phrase instead of bigrams that straddle word boundaries.
Identifiers are split too: `fetchRetry_helper` also indexes fetch, retry and helper.
Queries leave out stopwords in both languages (`is_stopword`, `content_bigrams`); the index keeps
every word, so a stopword list can change without a reindex.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK}]+")
_SPLIT = re.compile(f"([{_CJK}]+)")
WORD = re.compile(r"[^\W_]+", re.UNICODE)


def redacted(kind: str) -> str:
    """What a secret is replaced by (memory.lang.privacy): that one was there, and of what kind."""
    return f"[REDACTED:{kind}]"


REDACTED = re.compile(r"\[REDACTED:[\w.-]*\]")  # what `redacted` writes: it names nothing (no entity, no word)
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

# Query words that cannot tell one memory from another. They are left out of the terms a query is
# ranked and gated on (`query_terms`), never out of the index: a memory keeps every word it has.
# Function words, plus the words that frame a request in a coding session rather than name its
# subject: "which port should we use", "do I need to ...", "please remind me". Words that carry
# the subject in code talk stay, even when common: test, run, port, build, make (`make test`), new,
# first, time, work, change, error.
STOPWORDS = frozenset(
    """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's
her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
it's its itself let's me more most mustn't my myself no nor not of off on once only or other ought
our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such
than that that's the their theirs them themselves then there there's these they they'd they'll
they're they've this those through to too under until up very was wasn't we we'd we'll we're we've
were weren't what what's when when's where where's which while who who's whom why why's will with
won't would wouldn't you you'd you'll you're you've your yours yourself yourselves also just like
get got would may might shall us yes ok okay oh hey hi s t d ll m re ve
whose must
""".split()
)
# The halves of contractions as WORD splits them (don't -> don + t). "won" (won't) stays: a verb.
STOPWORDS |= frozenset(
    "aren couldn didn doesn don hadn hasn haven isn mustn needn shan shouldn wasn weren wouldn".split()
)
# Request framing. "use" is the borderline one: rules are often written "Use X, not Y", so it
# appears in many memories, yet a prompt's "which X should we use" names X, never the rule's verb;
# matching on it put "Use ruff format" above the answer to "which port should the tests use".
# "need" likewise ("what do I need before deploying"). "one" ("which one") is stemmed to "on" by
# the porter tokenizer, so it matched every memory with an "on" in it.
REQUEST_WORDS = frozenset(
    "use uses used using need needs needed want wants wanted please thing things something anything one ones".split()
)
STOPWORDS |= REQUEST_WORDS

# Chinese, without a dictionary. A query's CJK run is cut at its function words (ZH_STOPWORDS,
# longest first) and what remains becomes bigrams, so no term straddles a function word
# (应该用 -> 该用, 服务的 -> 务的, 用哪个 -> 用哪 match every sentence with the same grammar).
# Question words, pronouns, demonstratives, modal verbs and connectives; where jieba runs they are
# its words and are dropped as words.
ZH_STOPWORDS = frozenset(
    """
什么 怎么 怎样 怎么样 怎么办 如何 为什么 为啥 干嘛 哪个 哪些 哪里 哪儿 多少 多久 多长 多大 几个
是不是 有没有 能不能 可不可以 会不会 要不要 对不对 好不好 行不行
我们 你们 他们 她们 它们 咱们 大家 这个 那个 这些 那些 这里 那里 这样 那样 这边 那边 这么 那么
一下 一个 时候 什么时候 的时候 可以 应该 需要 能够 还是 或者 但是 因为 所以 如果 的话 就是 已经
""".split()
)
# Characters that are function words on their own. A bigram made only of them is dropped
# (在和, 也都), a bigram with one of them and a content character is kept (在线, 会话, 用户).
# 用 is the Chinese "use" (应该用哪个 -> 用 alone is dropped; 用户, 使用, 调用 stay).
ZH_STOP = frozenset(
    "的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 在 和 与 也 都 就 还 又 这 那 有 么 什 怎 哪 个 一 不 没 很 会 要 用 把 被".split()
)
# Characters that (nearly) never belong to a content word: particles, the plural 们, the pieces
# of question words and demonstratives, and 是 (its compounds are connectives too: 但是, 还是,
# 是否). A bigram holding one is dropped whatever its other half: 务的, 址是, 事们. The cost is a
# rare content word (目的, 的确), which a dictionary would keep.
ZH_PARTICLES = frozenset("的 了 吗 呢 吧 啊 呀 嘛 哦 呗 啦 么 哪 们 这 那 什 怎 谁 是".split())
_ZH_STOP_RE = re.compile("|".join(sorted(ZH_STOPWORDS, key=len, reverse=True)))


def is_stopword(word: str) -> bool:
    """Whether a query word (any case; a Chinese word as jieba cuts it) is left out of ranking."""
    low = word.lower()
    if CJK_RUN.fullmatch(word):
        return word in ZH_STOPWORDS or any(ch in ZH_PARTICLES for ch in word) or all(ch in ZH_STOP for ch in word)
    return low in STOPWORDS or len(low) < 2 and not low.isdigit()


def content_bigrams(run: str) -> list[str]:
    """A CJK run's bigrams for a query, without a dictionary: cut at the function words, then
    the bigrams of what is left that hold no particle and are not two function characters. A
    one-character run is kept as it is (the index keeps it so); a character left alone by a cut
    is dropped (the index has it only inside bigrams)."""
    if len(run) == 1:
        return [] if run in ZH_STOP or run in ZH_PARTICLES else [run]
    out = []
    for piece in _ZH_STOP_RE.split(run):
        for bg in bigrams(piece) if len(piece) > 1 else ():
            if not any(ch in ZH_PARTICLES for ch in bg) and not all(ch in ZH_STOP for ch in bg):
                out.append(bg)
    return out


# The tag that wraps every block of memories MAPLE injects into a conversation. Whatever sits
# inside it was recalled, not said, and must never be extracted again (the recall -> re-extract
# loop that filled other memory tools with junk).
CONTEXT_TAG = "maple-memory"


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


_LATIN = re.compile(r"[A-Za-z]+")


def cjk_share(text: str) -> float:
    """How Chinese (Japanese, Korean) a text is, 0 to 1: CJK characters against Latin letters,
    a CJK character counting as two letters (about what a word of each carries). (Search reads it
    for every candidate: an ASCII text is answered without a scan.)"""
    if text.isascii():
        return 0.0
    cjk = 2 * sum(map(len, CJK_RUN.findall(text)))
    latin = sum(map(len, _LATIN.findall(text)))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _identifier_parts(word: str) -> list[str]:
    if word.isascii() and (word.isalpha() and (word.islower() or word.istitle()) or word.isdigit()):
        return []  # retry, Retry, 42: one part, nothing to split (most words; skips the regex)
    parts = _CAMEL.findall(word)
    return parts if len(parts) > 1 else []


def index_text(text: str) -> str:
    """The body FTS5 indexes for `text`: words as they are, identifiers split, CJK as bigrams."""
    out: list[str] = []
    for piece in [text] if text.isascii() else _SPLIT.split(text):  # ASCII text has no CJK run to split off
        if not piece:
            continue
        if CJK_RUN.fullmatch(piece):
            out.extend(bigrams(piece))
            continue
        for word in WORD.findall(piece):
            out.append(word)
            out.extend(_identifier_parts(word))
    return " ".join(out)


Segmenter = Callable[[str], Iterable[str]]


def query_terms(text: str, segment: Segmenter | None = None, *, keep_stopwords: bool = False) -> list[str]:
    """The distinct terms of a query, as FTS5 string literals (each a word or a CJK phrase).

    Every term is double-quoted, so no user text can act as FTS5 syntax: quotes, `*`, `NEAR`,
    `-`, `:`, `AND`/`OR`/`NOT` and parentheses are all matched as plain text or dropped. ASCII words
    are lowercased; other words keep their case for FTS5 to fold, since Python's lower() and
    unicode61's Unicode 6.1 tables disagree on letters cased later (Cherokee).
    """
    terms: list[str] = []
    seen: set[str] = set()

    def add(tokens: list[str]) -> None:
        phrase = " ".join(tokens)
        if phrase and phrase.lower() not in seen:
            seen.add(phrase.lower())
            terms.append('"' + phrase.replace('"', '""') + '"')

    for piece in _SPLIT.split(text):
        if not piece:
            continue
        if CJK_RUN.fullmatch(piece):
            words = list(segment(piece)) if segment else None
            if words:
                for w in words:
                    w = w.strip()
                    if w and CJK_RUN.fullmatch(w) and (keep_stopwords or not is_stopword(w)):
                        add(bigrams(w))
            else:
                for bg in bigrams(piece) if keep_stopwords else content_bigrams(piece):
                    add([bg])
            continue
        for word in WORD.findall(piece):
            if keep_stopwords or not is_stopword(word):
                add([word.lower() if word.isascii() else word])
    return terms


# The short forms engineers write for the long ones, and back: a question about "production" finds
# the note that says "prod". Only pairs that mean one thing in a team's notes.
SHORT_FORMS = dict(
    pair
    for short, long in (
        ("prod", "production"),
        ("db", "database"),
        ("env", "environment"),
        ("repo", "repository"),
        ("config", "configuration"),
        ("k8s", "kubernetes"),
        ("infra", "infrastructure"),
        ("deps", "dependencies"),
    )
    for pair in ((short, long), (long, short))
)


# Staging by the names engineers also give it: as words, "pre-production" is pre + production, and
# "the pre-production port" found production's port first (a blind trial).
PRE_PRODUCTION = re.compile(r"\bpre-?prod(?:uction)?\b", re.I)


def staging_named(query: str) -> str:
    """`query` with staging's other names ("pre-production", "preprod") said as staging, for the keyword channel."""
    return PRE_PRODUCTION.sub("staging", query)


def translated_terms(text: str, terms: list[str]) -> list[str]:
    """`query_terms`' terms followed by the other language's words for the query's glossary words
    (memory.lang.glossary: 值班 -> "on call", billing -> 账单 as its bigram phrase) and the other
    form of a word engineers shorten (`SHORT_FORMS`: prod -> production), as FTS5 string literals,
    so a question finds a memory written in the other language, or the other form, by its words too."""
    from memory.lang import glossary  # parsed on first use: most prompts never get here

    runs = CJK_RUN.findall(text)
    english = [w for w in WORD.findall(text) if w.isascii()]
    if not runs and not english:
        return terms
    to_english, to_chinese = glossary.translations(runs, english)
    other_form = [SHORT_FORMS[w.lower()] for w in english if w.lower() in SHORT_FORMS]
    out = list(terms)
    seen = {t.lower() for t in terms}
    for phrase in [*other_form, *to_english, *(" ".join(bigrams(w)) for w in to_chinese)]:
        literal = '"' + phrase.replace('"', '""') + '"'
        if literal.lower() not in seen:
            seen.add(literal.lower())
            out.append(literal)
    return out


def match_or(terms: list[str]) -> str:
    return " OR ".join(terms)


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: about 4 characters per token for Latin text, 1 per CJK character."""
    cjk = sum(len(m) for m in CJK_RUN.findall(text))
    return (len(text) - cjk + 3) // 4 + cjk


_jieba_cut: Segmenter | None = None


def jieba_segmenter() -> Segmenter | None:
    """jieba's word segmenter, loaded on first use (~0.5 s); None when jieba is not installed.

    Only long-lived processes call this; the command hook never does.
    """
    global _jieba_cut
    if _jieba_cut is None:
        try:
            import logging

            import jieba

            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            _jieba_cut = jieba.lcut
        except Exception:  # jieba missing or its dictionary unreadable: bigrams still work
            return None
    return _jieba_cut


# -- a document's stale values, said where it is quoted (the prompt hook's lines, `search`) ----------
def stale_note(metadata: dict, shown: str) -> str:
    """What to say beside a quoted document's text that still states a value a correction retired
    (`metadata["outdated"]`: value -> the correction's id, noted by extraction), for the values the
    quoted text holds: "outdated: 5433 (see #12)", or ""."""
    outdated = metadata.get("outdated") if isinstance(metadata, dict) else None
    if not isinstance(outdated, dict):
        return ""
    said = shown.casefold()
    stale = [
        f"{v} (see #{i})"
        for v, i in outdated.items()
        if isinstance(v, str) and re.search(r"(?<![\w-])" + re.escape(v.casefold()) + r"(?![\w-])", said)
    ]
    return f"outdated: {', '.join(stale)}" if stale else ""
