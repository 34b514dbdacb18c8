"""Emotion from text: valence (-1..1), intensity (0..1) and mood tags, from bilingual lexicons.

Used when a memory is stored without explicit emotion, by the extraction agent, and by the
mood channel of retrieval (emotion words in a query match memories' mood tags). Lexicon lookups
only: it runs on every write and query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from memory.lang.text import CJK_RUN, WORD

# mood -> (valence, English stems, Chinese words). Stems match word prefixes ("frustrat" matches
# frustrated, frustrating).
MOODS: dict[str, tuple[float, tuple[str, ...], tuple[str, ...]]] = {
    "joy": (
        0.8,
        (
            "happy",
            "glad",
            "joy",
            "delight",
            "excit",
            "thrill",
            "love",
            "awesome",
            "amazing",
            "great",
            "fantastic",
            "wonderful",
            "yay",
            "fun",
            "enjoy",
        ),
        # Not 喜欢 ("like"): 用户喜欢深色主题, 李波更喜欢 rebase state a taste, not a feeling, as
        # "likes" and "prefers" do in English (neither is a stem here).
        ("开心", "高兴", "快乐", "太好了", "兴奋", "棒", "爱"),
    ),
    "pride": (0.7, ("proud", "accomplish", "achiev", "nailed", "success"), ("自豪", "骄傲", "成功", "成就")),
    "relief": (
        0.6,
        ("relie", "phew", "fixed it", "finally fixed", "finally works", "works now"),
        ("终于", "松了口气", "解决了", "搞定"),
    ),
    "gratitude": (0.6, ("thank", "grateful", "appreciat"), ("谢谢", "感谢", "感激")),
    "calm": (0.3, ("calm", "peace", "relax"), ("平静", "放松", "安心")),
    "curiosity": (0.2, ("curious", "wonder", "interest", "intrigu"), ("好奇", "有趣", "感兴趣")),
    "surprise": (0.0, ("surpris", "unexpect", "wow", "shock"), ("惊讶", "没想到", "意外", "居然")),
    "frustration": (
        -0.7,
        ("frustrat", "annoy", "irritat", "fed up", "ugh", "argh", "again?!", "keeps failing"),
        ("烦", "郁闷", "气死", "崩溃", "又挂了", "恼火"),
    ),
    "anger": (-0.8, ("angry", "furious", "mad at", "hate", "rage", "pissed"), ("生气", "愤怒", "讨厌", "恨")),
    "sadness": (
        -0.7,
        ("sad", "unhappy", "depress", "upset", "disappoint", "miss ", "lonely", "grief", "cry"),
        ("难过", "伤心", "失望", "沮丧", "遗憾", "哭"),
    ),
    "fear": (
        -0.6,
        ("afraid", "scared", "fear", "worr", "anxious", "nervous", "terrif"),
        ("害怕", "担心", "焦虑", "紧张", "恐惧"),
    ),
    "stress": (
        -0.5,
        ("stress", "overwhelm", "swamped", "exhaust", "tired", "burnout", "pressure"),
        ("压力", "累", "疲惫", "忙死", "焦头烂额"),
    ),
    "confusion": (
        -0.3,
        ("confus", "puzzl", "baffl", "no idea why", "weird", "strange"),
        ("困惑", "搞不懂", "奇怪", "莫名其妙"),
    ),
}
# What may follow a stem for the word to count: inflections, not other words that share a prefix.
_SUFFIXES = frozenset(
    """
    s es ed d ing ly ily y ies ied ying ier iest iness ful fully ness ion ions ation ated ating e
    ement ements ment ments ance er ers est able f ve ved ves
    """.split()
) | {""}
INTENSIFIERS = (
    "very",
    "really",
    "so",
    "extremely",
    "super",
    "totally",
    "absolutely",
    "incredibly",
    "非常",
    "特别",
    "太",
    "超级",
    "真的",
    "极其",
)
NEGATORS = ("not", "no", "never", "don't", "didn't", "isn't", "wasn't", "不", "没", "别")
# Stems that are plain words match as word prefixes (stem -> its moods); the others (phrases,
# punctuation) are counted as substrings.
_WORD_STEMS: dict[str, list[str]] = {}
_PHRASE_STEMS: dict[str, list[str]] = {}
for _mood, (_, _stems, _) in MOODS.items():
    _PHRASE_STEMS[_mood] = [s for s in _stems if " " in s or not s.isalpha()]
    for _stem in _stems:
        if " " not in _stem and _stem.isalpha():
            _WORD_STEMS.setdefault(_stem, []).append(_mood)
_STEM_LENGTHS = sorted({len(s) for s in _WORD_STEMS})
assert _STEM_LENGTHS[0] >= 3
_PREFIX3 = frozenset(s[:3] for s in _WORD_STEMS)  # a word starting with none of these is no mood
_PHRASE_MOOD = {p: m for m, ps in _PHRASE_STEMS.items() for p in ps}
_PHRASE_RX = re.compile("|".join(re.escape(p) for p in sorted(_PHRASE_MOOD, key=len, reverse=True)))
_ZH_MOOD = {z: m for m, (_, _, zh) in MOODS.items() for z in zh}
_ZH_RX = re.compile("|".join(re.escape(z) for z in sorted(_ZH_MOOD, key=len, reverse=True)))
# Names are not feelings: 陈爱丽 holds 爱 ("love"), Joy Li holds "joy". A caller passes the names it
# knows (entities, aliases), blanked out before the lexicons run; and a one-character Chinese mood
# word between a common surname and another Han character is taken for a given name (王爱华, 李乐乐).
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_IN_NAME = re.compile(f"(?<=[{_SURNAMES}])[{''.join(z for z in _ZH_MOOD if len(z) == 1)}](?=[\u4e00-\u9fff])")
# Words a stem and an inflection would make but that are not the feeling: "greatly simplifies"
# is a degree, not joy, and a "fund" is money.
_NOT_MOODS = frozenset({"greatly", "greater", "fund"})
# English names are not feelings either: "Joy Wang (@jwang) reviews", "we hired Joy". A capitalised
# word inside a sentence is taken for a name, and so is a run of capitalised words where one starts
# a sentence ("Joy Wang", not "Thanks Alice"); and "happy path" is a kind of test, not a mood.
_NOT_FEELINGS = re.compile(r"\b(?:un)?happy[- ]paths?\b|\bsad[- ]paths?\b|\bhappy[- ]case\b", re.I)
_TITLE_WORD = re.compile(r"\b[A-Z][a-z]+\b")
_TITLE_NEXT = re.compile(r"[ \t]+(?:[A-Z][a-z]+\b|\(?@\w)")
_SENTENCE_END = tuple(".!?:;\n。！？；")
_NOT_NAMES = frozenset({"thanks", "thank"})  # "Thanks Alice" thanks someone
DENSITY_CHARS = 400  # a text longer than this has its emotion words and emphasis counted per this many characters
_EXCLAIM = re.compile(r"[!！]{1,}")
_CAPS_WORD = re.compile(r"\b[A-Z]{4,}\b")


@dataclass
class Emotion:
    valence: float = 0.0
    intensity: float = 0.0
    moods: list[str] = field(default_factory=list)

    @property
    def flashbulb(self) -> bool:
        """Intense enough to resist decay."""
        return self.intensity >= 0.8


def analyze(text: str, names: Iterable[str] = ()) -> Emotion:
    """The emotion `text` expresses; `names` (people, things) are not read for it."""
    for name in sorted({n for n in names if isinstance(n, str) and n.strip()}, key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    if not text.isascii():
        text = _IN_NAME.sub(" ", text)
    text = _without_english_names(_NOT_FEELINGS.sub(" ", text))
    low = text.lower()
    words = WORD.findall(low)
    cjk = "" if text.isascii() else "".join(CJK_RUN.findall(text))
    # One pass over the words, each prefix looked up: this runs on every write, and testing
    # every stem against every word was most of the cost of storing a memory.
    word_hits: dict[str, int] = {}
    for i, w in enumerate(words):
        if w[:3] not in _PREFIX3 or w in _NOT_MOODS:
            continue
        for length in _STEM_LENGTHS:
            if length > len(w):
                break
            if w[length:] not in _SUFFIXES:  # "fun" is not in "function", "cry" not in "crypto"
                continue
            for mood in _WORD_STEMS.get(w[:length], ()):
                if not _negated(words, i):
                    word_hits[mood] = word_hits.get(mood, 0) + 1
    hits = word_hits
    for m in _PHRASE_RX.finditer(low):
        mood = _PHRASE_MOOD[m.group(0)]
        hits[mood] = hits.get(mood, 0) + 1
    if cjk:
        for m in _ZH_RX.finditer(cjk):
            mood = _ZH_MOOD[m.group(0)]
            hits[mood] = hits.get(mood, 0) + 1
    if not hits:
        return Emotion()
    total = sum(hits.values())
    valence = sum(MOODS[m][0] * n for m, n in hits.items()) / total
    boost = sum(low.count(f" {w} ") for w in INTENSIFIERS if w.isascii()) + sum(
        cjk.count(w) for w in INTENSIFIERS if not w.isascii()
    )
    # Feeling is how dense the words are, not how many: a 14,000-character runbook with one "proud",
    # its WARNING lines, acronyms and a few "!" is no flashbulb memory (intensity >= 0.8 exempts
    # from decay). In a longer text, capitals and "!" are layout and acronyms, not shouting.
    per = max(1.0, len(text) / DENSITY_CHARS)
    if per == 1.0:
        boost += len(_EXCLAIM.findall(text)) + len(_CAPS_WORD.findall(text))
    intensity = min(1.0, 0.35 + (0.15 * (total - 1) + 0.12 * boost) / per)
    moods = sorted(hits, key=lambda m: -hits[m])[:3]
    return Emotion(round(max(-1.0, min(1.0, valence)), 3), round(intensity, 3), moods)


def _negated(words: list[str], i: int) -> bool:
    return any(w in NEGATORS for w in words[max(0, i - 2) : i])


def _without_english_names(text: str) -> str:
    """`text` with the capitalised words that could be a mood and read as a name blanked: one
    inside a sentence, or one starting a sentence and followed by another capitalised word or a
    handle ("Joy Wang", "Joy (@jwang)")."""
    cut: list[tuple[int, int]] = []
    for m in _TITLE_WORD.finditer(text):
        word = m.group(0).lower()
        if word[:3] not in _PREFIX3 or word in _NOT_NAMES:
            continue
        before = text[: m.start()].rstrip()
        starts = not before or before.endswith(_SENTENCE_END) or before.endswith(('"', "'", "(", "-", "*", "#"))
        if not starts or _TITLE_NEXT.match(text, m.end()):
            cut.append(m.span())
    for a, b in reversed(cut):
        text = text[:a] + " " + text[b:]
    return text
