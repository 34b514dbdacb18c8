"""What two wordings of one fact must agree on: the values a reader would check.

Shared by maintenance (two memories merge only when their values agree: `consolidation.same_fact`)
and retrieval (a later memory that restates an earlier one with another value is ranked above it:
`ranking._newer_first`)."""

from __future__ import annotations

import difflib
import re

from memory.lang import glossary, text

# -- what two wordings of one fact must agree on -----------------------------------------------
# A paraphrase rewords a fact; a look-alike changes one value of it, or swaps two. Vectors cannot
# tell them apart ("port 8080" and "port 8081" are at cosine ~0.99, "RabbitMQ over Kafka" and
# "Kafka over RabbitMQ" at 0.998), so two memories merge only when the values a reader would check
# agree (numbers in digits or words, English or Chinese; a number with its unit as one quantity;
# clock times; weekdays; environments; frequencies; negation; identifiers) and the texts are not
# one edit apart: the same words in another order, or a word or two changed, is a different fact
# more often than a rewording.

_EN_NUMBERS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    )
} | {
    "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30",
    "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "twice": "2",
}  # fmt: skip
_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUMBER = re.compile(r"[零一二两三四五六七八九十百千万]+")
_DIGITS = re.compile(r"\d+(?:[,.]\d+)*")
_ZH_CLOCK = re.compile(
    r"(凌晨|早上|早晨|上午|中午|下午|傍晚|晚上)?\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*点(?![多钟数])\s*(半|一刻|(\d{1,2})\s*分)?"
)
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d\d))?\s*(am|pm)\b|\b(\d{1,2}):(\d\d)\b", re.I)
_DAYS = {
    "mon": "1", "monday": "1", "mondays": "1", "周一": "1", "星期一": "1",
    "tue": "2", "tuesday": "2", "tuesdays": "2", "周二": "2", "星期二": "2",
    "wed": "3", "wednesday": "3", "wednesdays": "3", "周三": "3", "星期三": "3",
    "thu": "4", "thursday": "4", "thursdays": "4", "周四": "4", "星期四": "4",
    "fri": "5", "friday": "5", "fridays": "5", "周五": "5", "星期五": "5",
    "sat": "6", "saturday": "6", "saturdays": "6", "周六": "6", "星期六": "6",
    "sun": "7", "sunday": "7", "sundays": "7", "周日": "7", "星期日": "7", "周末": "67",
}  # fmt: skip
_ENVS = {
    "prod": "prod", "production": "prod", "生产": "prod", "正式环境": "prod", "线上": "prod",
    "staging": "stg", "stg": "stg", "预发": "stg", "预发布": "stg",
    "perf": "perf", "性能测试环境": "perf",
    "local": "local", "locally": "local", "本地": "local",
}  # fmt: skip
_NEGATION_EN = re.compile(
    r"\b(?:not|never|no|don't|dont|doesn't|isn't|aren't|can't|cannot|mustn't|shouldn't|won't|forbidden|"
    r"without|nothing)\b|n't\b",
    re.I,
)
_NEGATION_ZH = re.compile(r"不|别|没|禁止")
# Words with 不 or 没 that negate nothing in the fact ("看 30 分钟没问题再全量", "不然版本对不上": otherwise)
# ("P1 级别告警": 别 inside a word is no "don't")
_NOT_NEGATION_ZH = re.compile(
    r"没问题|没事|要不然|不然|不过|不少|不断|不仅|差不多|对不上|级别|区别|分别|特别|类别|识别|差别|个别|性别|别名|别人|别的|告别"
)
# A quantity is a number with its unit (in seconds, so "14 天" is "两周" and "30 minutes" is "half an
# hour"); a frequency word without a number ("weekly", "每天") only conflicts with another one, since
# a rewording often leaves the obvious frequency out.
_UNITS = {
    "year": 31_536_000, "years": 31_536_000, "年": 31_536_000,
    "month": 2_592_000, "months": 2_592_000, "个月": 2_592_000, "月": 2_592_000,
    "week": 604_800, "weeks": 604_800, "周": 604_800, "星期": 604_800,
    "day": 86_400, "days": 86_400, "天": 86_400, "日": 86_400, "工作日": 86_400, "自然日": 86_400,
    "hour": 3_600, "hours": 3_600, "hr": 3_600, "hrs": 3_600, "h": 3_600, "小时": 3_600,
    "minute": 60, "minutes": 60, "min": 60, "mins": 60, "分钟": 60,
    "second": 1, "seconds": 1, "sec": 1, "secs": 1, "s": 1, "秒": 1,
    "millisecond": 0.001, "milliseconds": 0.001, "ms": 0.001, "毫秒": 0.001,
}  # fmt: skip
UNIT_WORDS = frozenset((*_UNITS, "times", "次"))  # words that say what a number counts, not what a fact is about
_EN_QUANTITY = re.compile(
    r"\b(\d+(?:[,.]\d+)*|[a-z]+(?=[\s-]))[\s-]*(?:(?:business|working|calendar|whole|full)\s+)?"
    r"(years?|months?|weeks?|days?|hours?|hrs?|h|minutes?|mins?|min|seconds?|secs?|s|milliseconds?|ms)\b"
)
_ZH_QUANTITY = re.compile(
    r"(\d+(?:\.\d+)?|[零一二两三四五六七八九十百千万]+)\s*个?\s*"
    r"(工作日|自然日|毫秒|分钟|小时|(?:星期|周)(?![一二三四五六日天末](?!次))|个月|年|天|秒)"  # 一个周五: a day, 两周一次: weeks
)
_EN_EVERY = re.compile(r"\b(?:(?:once|twice) )?(?:every|an?|per|each) (second|minute|hour|day|week|month|year)\b")
# a rate's time unit: "100 rps", "1000 次/分钟" (how often, like "per minute")
_PER = (
    (re.compile(r"\b[rq]ps\b|/\s*(?:s|sec|second)\b|/\s*秒"), "s"),
    (re.compile(r"\brpm\b|/\s*(?:min|minute)\b|/\s*分钟?"), "min"),
)
# a week or a day said from today: this week's on-call is not next week's
_RELATIVE = {
    "this week": "w0", "next week": "w1", "last week": "w-1", "本周": "w0", "这周": "w0", "这个星期": "w0",
    "下周": "w1", "下个星期": "w1", "上周": "w-1", "上个星期": "w-1",
    "today": "d0", "tomorrow": "d1", "yesterday": "d-1", "今天": "d0", "明天": "d1", "昨天": "d-1",
}  # fmt: skip
_HALF = {"half an hour": "1800", "half a day": "43200", "半小时": "1800", "半个小时": "1800", "半天": "43200"}
_FREQUENCY = {
    "secondly": "s", "minutely": "min", "每秒": "s", "每秒钟": "s", "每分钟": "min",
    "hourly": "h", "daily": "d", "dayly": "d", "nightly": "d", "weekly": "w", "monthly": "mo", "quarterly": "q",
    "yearly": "y", "annually": "y", "每小时": "h", "每天": "d", "每晚": "d", "每日": "d", "每周": "w",
    "每月": "mo", "每季度": "q", "每年": "y",
}  # fmt: skip
# Words that say "not" without a negation ("we dropped black", "httpx instead of requests", "只"):
# a rewording may carry the negation in one of them, so negation present on one side only is no
# conflict when the other side has one of these.
_IMPLICIT_NOT = re.compile(
    r"\b(?:instead|rather|dropped|drop|removed|gone|only|just|immutable|avoid|replaced|stopped|"
    r"no longer|forbid\w*|prohibit\w*|disallow\w*|ban(?:ned)?)\b|只|仅|而非|取代|代替|替代|改用|不再|禁止|单(?:实例|个|台|机|节点|副本|线程|进程|一)",  # 单实例 (one only), not 订单
    re.I,
)
# Names with another common spelling; everything else must match as written (up to a plural s).
_ALIASES = {
    "db": "database", "dbs": "database", "database": "database", "数据库": "database", "库": "database",
    "postgresql": "postgres", "pg": "postgres", "k8s": "kubernetes", "js": "javascript",
    "ts": "typescript", "py": "python", "repo": "repository", "env": "environment",
}  # fmt: skip
_ZONES = {
    "utc": "utc", "gmt": "utc", "cet": "cet", "cest": "cet", "北京时间": "cst8", "beijing time": "cst8",
    "china standard time": "cst8", "pst": "pt", "pdt": "pt", "pacific time": "pt",
}  # fmt: skip
# Places a team deploys to or sits in, by their Chinese names: a place is a value (部署在北京和上海 /
# 深圳和上海 are two facts; 部署在北京 / deployed in Beijing one). English text names them in
# capitals, which the identifiers already read.
_PLACES = {
    "北京": "beijing", "上海": "shanghai", "深圳": "shenzhen", "广州": "guangzhou", "杭州": "hangzhou",
    "成都": "chengdu", "南京": "nanjing", "武汉": "wuhan", "西安": "xian", "苏州": "suzhou", "天津": "tianjin",
    "重庆": "chongqing", "青岛": "qingdao", "厦门": "xiamen", "长沙": "changsha", "贵阳": "guiyang",
    "张家口": "zhangjiakou", "乌兰察布": "ulanqab", "香港": "hong kong", "台北": "taipei",
    "新加坡": "singapore", "东京": "tokyo", "首尔": "seoul", "孟买": "mumbai", "悉尼": "sydney",
    "法兰克福": "frankfurt", "伦敦": "london", "巴黎": "paris", "阿姆斯特丹": "amsterdam", "都柏林": "dublin",
    "爱尔兰": "ireland", "弗吉尼亚": "virginia", "俄勒冈": "oregon", "加州": "california", "硅谷": "silicon valley",
    "华北": "north china", "华东": "east china", "华南": "south china", "西南": "southwest china",
}  # fmt: skip
# (with "every" and "each", which say how often, and the word for an environment, which the
# environment's name already says: 预发环境 / 预发)
_VALUE_WORDS = frozenset(
    (*_DAYS, *_ENVS, *_FREQUENCY, *_UNITS, *_EN_NUMBERS, *_RELATIVE, "every", "each", "environment", "环境")
)
_CJK_VALUE_WORDS = sorted((w for w in _VALUE_WORDS if text.has_cjk(w)), key=len, reverse=True)  # longest first
_CJK_KEYS = sorted([k for k in (*_DAYS, *_ENVS) if text.has_cjk(k)], key=len, reverse=True)  # longest first
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+|[A-Za-z]+\d[A-Za-z0-9]*")
# a URL path (GET /healthz, /v1/refunds): which endpoint is a value, as a name is
_PATH = re.compile(r"(?<![\w./:])/([A-Za-z][\w-]*(?:/[\w{}:-]+)*)")
_NAME = re.compile(r"\b[A-Z]{2,}[a-z]?\b|(?<=[\w,)] )[A-Z][a-z]+\w*")
_DAYS_TITLE = frozenset(w.title() for w in _DAYS if w.isascii())
_TOKEN = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


# Words that link a fact's parts rather than state one: prepositions and light verbs ("runs on",
# "goes through", "sits in front of"; 为, 以, 按, 由, 往, 跑, 放, 走). A rewording changes them freely.
# So do the Chinese for what English drops as stopwords (must, use, please, already, and, all: 必须,
# 使用, 请, 已, 并且, 一律) and a reminder's "remember to" / 记得.
_LIGHT = frozenset(
    "via per across within through rather instead now run runs go goes going gets got make makes happen happens "
    "sit sits live lives handle handles keep keeps put puts take takes reach reaches done remember "
    "为 以 按 由 里 往 在 把 被 给 让 用 跑 放 上 下 出 做 提 过 看 走 加 交 来 去 都 也 就 会 要 能 将 向 从 对 于 及 与 和 或 中 内 时 "
    "必须 应 应当 使用 请 已 并且 而且 才能 记得 一律 统一".split()
)


def _zh_number(run: str) -> str | None:
    """十五 -> 15, 一万 -> 10000, 十万 -> 100000, 两 -> 2 (None: not a number)."""
    total, section, digit = 0, 0, 0
    for ch in run:
        if ch in _ZH_DIGITS:
            digit = _ZH_DIGITS[ch]
        elif ch in "十百千":
            section += (digit or 1) * {"十": 10, "百": 100, "千": 1000}[ch]
            digit = 0
        elif ch == "万":
            total += (section + digit) * 10_000
            section, digit = 0, 0
    value = total + section + digit
    return str(value) if value or "零" in run else None


def _quantity(number: str, unit: str) -> str | None:
    """ "14", "天" -> "1209600" (seconds); None when `number` is not a number."""
    if number.replace(",", "").replace(".", "", 1).isdigit():
        value = float(number.replace(",", ""))
    elif number in _EN_NUMBERS or number in ("a", "an"):
        value = float(_EN_NUMBERS.get(number, 1))
    else:
        zh = _zh_number(number) if _ZH_NUMBER.fullmatch(number) else None
        if zh is None:
            return None
        value = float(zh)
    return f"{value * _UNITS[unit.rstrip('s') if unit not in _UNITS else unit]:g}"


def fact_values(content: str, _cache: dict[str, dict[str, frozenset[str]]] = {}) -> dict[str, frozenset[str]]:  # noqa: B006
    """The values of a text that a merge must keep: numbers, quantities, clock times, weekdays,
    environments, frequencies, negation, identifiers. Two wordings of one fact have the same; 8080
    and 8081 do not."""
    found = _cache.get(content)
    if found is not None:
        return found
    s = content.replace("，", ",").replace("：", ":")
    clocks = set()
    for m in _CLOCK.finditer(s):
        if m.group(3):
            hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
            clocks.add(f"{hour}:{m.group(2) or '00'}")
        else:
            clocks.add(f"{int(m.group(4))}:{m.group(5)}")
    rest = _CLOCK.sub(" ", s)

    def zh_clock(m: re.Match) -> str:  # "凌晨 3 点", "下午两点半", "1 点 30 分"
        when, hour, minute = m.group(1), m.group(2), m.group(3) or ""
        if not hour.isdigit() and not when:
            return m.group(0)  # "一点" is "a little", "两点" two points: a clock only after 凌晨 / 下午 …
        h = int(hour) if hour.isdigit() else int(_zh_number(hour) or 0)
        if when in ("下午", "傍晚", "晚上") and h < 12 or when == "中午" and h < 3:
            h += 12
        minutes = {"半": "30", "一刻": "15"}.get(minute) or (m.group(4) or "00").zfill(2)
        clocks.add(f"{h}:{minutes}")
        return " "

    rest = _ZH_CLOCK.sub(zh_clock, rest)
    idents = {m.lower() for m in _IDENT.findall(rest)} | {m.lower() for m in _PATH.findall(rest)}
    if text.has_cjk(rest):  # in Chinese text, every Latin word is a name (Datadog, Sentry, main)...
        idents |= {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", rest) if not _ordinary_english(w)}
    else:  # in English, words in capitals (JWT, SSM) and capitalised ones inside a sentence
        idents |= {w.lower() for w in _NAME.findall(rest) if w not in _DAYS_TITLE}
    # ...except the values read below (staging, two, weekly, Monday, 10min)
    idents = {i for i in idents if not (i in _EN_NUMBERS or i in _ENVS or i in _DAYS or i in _FREQUENCY or i in _UNITS)}
    plain = _IDENT.sub(" ", rest).lower()
    quantities, frequency = set(), set()
    relative = {v for k, v in _RELATIVE.items() if k in plain}
    for pattern, unit in _PER:
        if pattern.search(plain):
            frequency.add(unit)
            plain = pattern.sub(" ", plain)
    for phrase, seconds in _HALF.items():
        if phrase in plain:
            quantities.add(seconds)
            plain = plain.replace(phrase, " ")
    for m in list(_EN_EVERY.finditer(plain)):  # "once an hour", "every day": how often, not how long
        frequency.add(_FREQUENCY[f"{m.group(1)}ly"])
        plain = plain.replace(m.group(0), " ", 1)
    for pattern in (_EN_QUANTITY, _ZH_QUANTITY):
        for m in list(pattern.finditer(plain)):
            q = _quantity(m.group(1), m.group(2))
            if q is not None:
                quantities.add(q)
                plain = plain.replace(m.group(0), " ", 1)
    numbers = {n.replace(",", "") for n in _DIGITS.findall(plain)}
    for n in re.findall(r"(\d+)\s*万", plain):  # 10 万 = 100000
        numbers.discard(n)
        numbers.add(str(int(n) * 10_000))
    words = re.findall(r"[a-z']+", plain)
    # "one" and a lone 一 are mostly not a count ("write a new one", 一旦, 统一, 一律, 一遍)
    numbers |= {_EN_NUMBERS[w] for w in words if w in _EN_NUMBERS and w != "one"}
    days = {_DAYS[w] for w in words if w in _DAYS}
    envs = {_ENVS[w] for w in words if w in _ENVS}
    frequency |= {_FREQUENCY[w] for w in words if w in _FREQUENCY}
    cjk = " ".join(text.CJK_RUN.findall(plain))
    for key in _CJK_KEYS:
        if key in cjk:
            (days if key in _DAYS else envs).add(_DAYS.get(key) or _ENVS[key])
            cjk = cjk.replace(key, " ")
    frequency |= {f for k, f in _FREQUENCY.items() if text.has_cjk(k) and k in cjk}
    for run in _ZH_NUMBER.findall(cjk):
        n = _zh_number(run) if run != "一" else None
        if n is not None:
            numbers.add(n)
    places = {en for zh, en in _PLACES.items() if zh in cjk.replace("北京时间", " ")}
    negated = bool(_NEGATION_EN.search(plain) or _NEGATION_ZH.search(_NOT_NEGATION_ZH.sub(" ", cjk)))
    zones = {_ZONES[w] for w in words if w in _ZONES} | {
        _ZONES[k] for k in _ZONES if (text.has_cjk(k) or " " in k) and k in plain
    }
    found = _cache[content] = {
        "numbers": frozenset(str(int(n)) if n.isdigit() else n for n in numbers),
        "quantities": frozenset(quantities),
        "clock": frozenset(clocks),
        "days": frozenset(d for v in days for d in v),
        "envs": frozenset(envs),
        "frequency": frozenset(frequency),
        "relative": frozenset(relative),
        "negated": frozenset({"yes"} if negated else ()),
        "zones": frozenset(zones),
        "idents": frozenset(idents | places),
    }
    return found


def _ordinary_english(word: str) -> bool:
    """A Latin word inside Chinese text that is English said in passing, not a name: written in
    lowercase and a stopword, a light word or a word the glossary translates ("port", "review",
    "up"). The word check compares it, by its counterpart (端口) or its meaning."""
    return word.islower() and (text.is_stopword(word) or word in _LIGHT or bool(glossary.counterparts(word)))


def _name_forms(word: str) -> set[str]:
    """A name as written, without a plural s, and under its common alias (DB = database)."""
    forms = {word, _ALIASES.get(word, word)}
    if len(word) > 3 and word.endswith("s"):
        forms |= {word[:-1], _ALIASES.get(word[:-1], word[:-1])}
    return forms


def _idents_in(idents: frozenset[str], other: str, source: str = "") -> bool:
    """Whether every identifier of one text (`source`) is in the other (each part of it:
    "RS256-signed" holds RS256 and a form of "signs"; "DB" is in "database", "JWTs" in "JWT"), or,
    for a plain word, its counterpart in the other language (`glossary.counterparts`): Chinese text
    says port or 端口 alike. An abbreviation and the words it abbreviates are one name, either way
    round: DLQ / dead letter queue, European Central Bank / ECB."""
    low = other.lower()
    words = re.findall(r"[a-z]+", low)
    stems = {_stem_word(w) for w in words}
    low += " " + " ".join(_ALIASES[w] for w in set(re.findall(r"[a-z0-9]+|数据库|库", low)) if w in _ALIASES)
    spelled = abbreviations(re.findall(r"[a-z]+", source.lower()), low)  # ECB: european central bank
    low += " " + " ".join(w for run in spelled.values() for w in run)

    def found(part: str) -> bool:
        forms = _name_forms(part)
        if part.isalpha():  # and what the glossary says for it, in the other language and in this one
            forms |= {c for f in forms for c in glossary.counterparts(f)}  # (TTL: 过期, expire, expiry)
            forms |= {s for c in list(forms) if not c.isascii() for s in glossary.counterparts(c)}
            if (len(part) > 3 and _stem_word(part) in stems) or abbreviations(words, part):  # signs / signed; DLQ
                return True
        return any(f in low for f in forms)

    def place(name: str) -> bool:  # a place, by its name in either language
        return name in low or any(zh in low for zh, en in _PLACES.items() if en == name)

    return all(
        place(i) if i in _PLACE_NAMES else all(found(part) for part in re.split(r"[-_.]", i) if part) for i in idents
    )


_PLACE_NAMES = frozenset(_PLACES.values())


def abbreviations(words: list[str], other: str) -> dict[str, list[str]]:
    """The words of `other` (lowercase) of two to five letters that abbreviate a run of `words`
    by their initials, each with the run: {"dlq": ["dead", "letter", "queue"]}."""
    short = set(re.findall(r"\b[a-z]{2,5}\b", other))
    out: dict[str, list[str]] = {}
    for n in range(2, 6):
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if "".join(w[0] for w in run) in short:
                out["".join(w[0] for w in run)] = run
    return out


# Stopwords that carry a fact's meaning in a look-alike ("every other Wednesday", "over 10,000").
_KEPT = frozenset(
    "over under before after other only every first last more less most least above below up down".split()
)


def _words(content: str) -> list[str]:
    """The content words of a text, lightly stemmed (CJK by character), in order."""
    out = []
    spelled = _ZH_NUMBER.sub(lambda m: f" {_zh_number(m.group()) or m.group()} ", content.lower())
    for t in _TOKEN.findall(spelled):
        t = _EN_NUMBERS.get(t, t)
        if t in _NOT_WORDS:
            t = "not"  # "Never deploy on Fridays" / "No deploys on Friday": one negation either way
        elif text.is_stopword(t) and t not in _KEPT:
            continue
        out.append(_stem_word(t))
    return out


# The words of an English negation as _TOKEN cuts them ("don't" is don + t)
_NOT_WORDS = frozenset("not never no cannot don doesn didn isn aren wasn weren mustn shouldn".split())


def _stem_word(t: str) -> str:
    """running -> run, deploys -> deploy, writing/write -> writ: enough to line two wordings up."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(t) > len(suffix) + 2 and t.endswith(suffix):
            t = t[: -len(suffix)]
            if suffix in ("ing", "ed") and len(t) > 3 and t[-1] == t[-2] and t[-1] not in "aeiouls":
                t = t[:-1]
            break
    return t.removesuffix("e") if len(t) > 3 else t


_ORDER_WORDS = frozenset(
    _stem_word(w) for w in (*_KEPT, "than", "then", "until", "先", "再", "前", "后")
)  # their order is the fact: "deploy before migrating" / "migrate before deploying"


def _one_edit_apart(a: str, b: str) -> bool:
    """The same words in another order, or at most two words changed, added or left out (CJK by
    character): the shape of a look-alike ("every Wednesday" / "every other Wednesday", "under" /
    "over 10,000", "RabbitMQ over Kafka" / "Kafka over RabbitMQ"), rarely of a rewording."""
    ta, tb = _words(a), _words(b)
    if ta == tb:
        return False  # only stopwords, punctuation or case differ: the same text
    if sorted(ta) == sorted(tb):  # reordered: a swap when the order carries meaning
        names = {_stem_word(w) for i in fact_values(a)["idents"] for w in re.split(r"[-_.]", i)}
        return any(t in _ORDER_WORDS or t.isdigit() for t in ta) or len(names & set(ta)) >= 2 or _exchanged(ta, tb)
    changed = 0.0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op != "equal":  # a Chinese word is about two characters
            changed += max(_size(ta[i1:i2]), _size(tb[j1:j2]))
    # A Chinese look-alike changes a character or two (上午/下午, 乐观/悲观, 邮件/短信); a rewording more.
    return 0 < changed <= (1 if text.has_cjk(a) else 2)


def _exchanged(ta: list[str], tb: list[str]) -> bool:
    """Whether `tb` is `ta` with two of its words put in each other's place, the rest as it was:
    "reads from the orders queue, writes to the ledger queue" and the other way round (从订单队列读取，
    写入账务队列). A rewording that moves a phrase moves it as a whole, which leaves one gap, not two."""
    ops = [op for op in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 2 or any(op[0] != "replace" for op in ops):
        return False
    (_, i1, i2, j1, j2), (_, k1, k2, l1, l2) = ops
    return ta[i1:i2] == tb[l1:l2] and ta[k1:k2] == tb[j1:j2]


def _size(tokens: list[str]) -> float:
    return sum(0.5 if text.has_cjk(t) else 1.0 for t in tokens)


# Two texts are in different languages when their shares of Chinese (`text.cjk_share`) differ by this
# much: an English sentence with a Chinese name in brackets ("Chen Jing (陈静) leads the Android team.")
# is English. (The one bar: extraction's supersession reads it too.)
ACROSS = 0.5


def values_agree(a: str, b: str) -> bool:
    """Whether two texts hold the same values (`fact_values`). Identifiers: those of one text
    must all be in the other (either way round: a rewording may add a detail, "AWS Fargate" /
    "Fargate", but not swap one name for another); across languages, those of the Chinese side in
    the English one (计费服务 says billing-service). A frequency or a negation on one side only is no
    conflict when the other side leaves it implicit ("nightly" / "at 02:30"; "we dropped black" /
    "black is not used")."""
    va, vb = fact_values(a), fact_values(b)
    for key in ("numbers", "quantities", "clock", "days", "envs", "zones"):
        if va[key] != vb[key]:
            return False
    for key in ("frequency", "relative"):  # said on one side only: left implicit on the other
        if va[key] and vb[key] and va[key] != vb[key]:
            return False
    if va["negated"] != vb["negated"] and not _IMPLICIT_NOT.search(b if va["negated"] else a):
        return False
    share_a, share_b = text.cjk_share(a), text.cjk_share(b)
    if abs(share_a - share_b) >= ACROSS:  # the Chinese side's Latin words survive translation
        return _idents_in(va["idents"], b, a) if share_a > share_b else _idents_in(vb["idents"], a, b)
    return _idents_in(va["idents"], b, a) and _idents_in(vb["idents"], a, b)


# The values a restatement may change: a number, a quantity, a clock time, a weekday, a name.
_CHANGEABLE = ("numbers", "quantities", "clock", "days", "idents")


def restates(later: str, earlier: str) -> bool:
    """Whether `later` could say what `earlier` says with another value: the same environment, the
    same subject when both name one (identifiers: "notify-svc" is not "ledger-sync"), and a value of
    one kind that both hold and that `later` brings new ("port 9443" / "port 9543"; "Elasticsearch
    7.17" / "Elasticsearch 8.11"); not a value only one of them holds ("Elasticsearch 7.17" / "managed
    in LaunchDarkly"), nor one `later` only leaves out (a reply naming billing-service is no new value
    for the steps that named billing-service and Helm)."""
    if UNCHANGED.search(later):
        return False  # "Redis 还是用 redis-lb 那个集群，没变": said to be as it was, whatever it leaves out
    a, b = fact_values(earlier), fact_values(later)
    if a["envs"] != b["envs"] or (a["idents"] and b["idents"] and not (a["idents"] & b["idents"])):
        return False
    return any(a[k] and b[k] - a[k] for k in _CHANGEABLE)


# Said to be as it was: "对账 cron 还是凌晨两点半，没变", "still redis on 6379 btw, nothing changed there".
UNCHANGED = re.compile(
    r"没变|没有变|不变|照旧|依旧|\bnothing(?:'s| has)? changed\b|\bunchanged\b|\bhas(?:n'?t| not) changed\b|"
    r"\bstays? the same\b|\bsame as before\b|\bas before\b",
    re.I,
)


# Words that say a value changed or where it goes, not which slot it fills ("moved to 8081").
_NOT_ANCHORS = frozenset(
    "to now from at on in is was are be by of for up down than about only every each moved changed raised lowered "
    "set run runs uses use has have keeps kept takes listens 每 个 的 是 到 为 成 在 改 约 第".split()
)
_SLOT_TOKEN = re.compile(r"[a-z]+|\d+(?:[.,]\d+)*|[\u3400-\u9fff]")


def number_anchors(content: str) -> dict[str, frozenset[str]]:
    """Each number of a text (outside identifiers and clock times) with the words right beside it,
    which say what it counts or versions: "Go 1.21" -> {"1.21": {"go"}}, "4 replicas, up to 12" ->
    {"4": {"replicas"}, "12": set()}. A word that only says how it changed ("moved to") is none."""
    tokens = _SLOT_TOKEN.findall(_IDENT.sub(" ", _CLOCK.sub(" ", content)).lower())
    out: dict[str, set[str]] = {}
    for i, t in enumerate(tokens):
        if not t[0].isdigit():
            continue
        beside = {tokens[j] for j in (i - 1, i + 1) if 0 <= j < len(tokens) and not tokens[j][0].isdigit()}
        out.setdefault(t.replace(",", ""), set()).update(
            w for w in beside if w not in _NOT_ANCHORS and not text.is_stopword(w) and (len(w) > 1 or text.has_cjk(w))
        )
    return {n: frozenset(ws) for n, ws in out.items()}


def number_shape(number: str) -> str:
    """What a number looks like it is: "version" (1.22, 3.10.4), "port" (1024-65535, four or five
    digits: 8080, 5432), else "count" (4, 200, 16). Two numbers of one fact have one shape."""
    if "." in number:
        return "version"
    if number.isdigit() and len(number) in (4, 5) and 1024 <= int(number) <= 65535:
        return "port"
    return "count"
