"""Time expressions in queries, English and Chinese, as [start, end) windows in epoch seconds.

`find_window(query, now)` returns the window the query talks about, or None: "yesterday", "last
week", "last 3 months", "in 2024", "March 2025", "on 3 June, 2023", "2025-03-14", "上个月", "去年",
"三天前", "2024年3月". Relative expressions count back from `now`; calendar units are UTC.
Stdlib only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

MONTHS = {
    m: i
    for i, m in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
MONTHS["sept"] = 9
_MON = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_NUM_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "couple": 2,
    "few": 3,
}
_ZH_NUM = {
    "一": 1,
    "两": 2,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
    "几": 3,
    "半": 0.5,
}


@dataclass(frozen=True)
class Window:
    start: float
    end: float
    phrase: str  # the words that set it, so callers can show why


def _utc(y: int, m: int = 1, d: int = 1) -> datetime:
    return datetime(y, m, d, tzinfo=timezone.utc)


def _month_window(y: int, m: int) -> tuple[datetime, datetime]:
    start = _utc(y, m)
    end = _utc(y + 1, 1) if m == 12 else _utc(y, m + 1)
    return start, end


def _num(s: str) -> float:
    s = s.strip().lower()
    if s.isdigit():
        return int(s)
    if s in _NUM_WORDS:
        return _NUM_WORDS[s]
    if s and all(ch in _ZH_NUM for ch in s):
        if s == "十":
            return 10
        if s.startswith("十"):
            return 10 + _ZH_NUM.get(s[1:], 0)
        if len(s) == 2 and s[1] == "十":
            return _ZH_NUM[s[0]] * 10
        return _ZH_NUM[s[0]]
    return 1


def _unit_days(unit: str) -> float:
    unit = unit.lower().rstrip("s")
    return {
        "day": 1,
        "天": 1,
        "日": 1,
        "week": 7,
        "周": 7,
        "星期": 7,
        "礼拜": 7,
        "month": 30.44,
        "个月": 30.44,
        "月": 30.44,
        "year": 365.25,
        "年": 365.25,
        "hour": 1 / 24,
        "小时": 1 / 24,
    }.get(unit, 1)


_PATTERNS: list[tuple[re.Pattern, str]] = [
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), "iso"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+{_MON},?\s+(\d{{4}})\b", re.I), "d_mon_y"),
    (re.compile(rf"\b{_MON}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I), "mon_d_y"),
    (re.compile(rf"\b{_MON},?\s+(\d{{4}})\b", re.I), "mon_y"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "zh_ymd"),
    (re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月"), "zh_ym"),
    (re.compile(r"(\d{4})\s*年"), "zh_y"),
    (re.compile(r"\b(?:since|after)\s+(\d{4})\b", re.I), "since_year"),
    (re.compile(r"\b(?:in|during|from|of)\s+(\d{4})\b", re.I), "year"),
    (
        re.compile(
            r"\b(?:the\s+)?(?:last|past|previous)\s+(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|couple(?:\s+of)?|few)?\s*(days?|weeks?|months?|years?|hours?)\b",
            re.I,
        ),
        "last_n",
    ),
    (
        re.compile(
            r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple(?:\s+of)?|few)\s+(days?|weeks?|months?|years?)\s+ago\b",
            re.I,
        ),
        "ago",
    ),
    (re.compile(r"\b(today|yesterday|tonight|this morning)\b", re.I), "day_word"),
    (re.compile(r"\b(this|last)\s+(week|month|year)\b", re.I), "this_last"),
    (re.compile(r"(今天|昨天|前天|今早|今晚)"), "zh_day"),
    (re.compile(r"(这|本|上)(个)?(周|星期|礼拜|月)(?!期|刊)|(今|去|前)年"), "zh_this_last"),
    (re.compile(r"(?:最近|过去|近)\s*([一二两三四五六七八九十\d]+)\s*(天|周|星期|个月|年)"), "zh_last_n"),
    (re.compile(r"([一二两三四五六七八九十几半\d]+)\s*(天|周|星期|个月|年)(?:以)?前"), "zh_ago"),
]


def find_window(query: str, now: float) -> Window | None:
    """The time window `query` refers to, or None when it names no time."""
    today = datetime.fromtimestamp(now, timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    for rx, kind in _PATTERNS:
        m = rx.search(query)
        if not m:
            continue
        try:
            win = _window(kind, m, today, now)
        except (ValueError, KeyError, OverflowError):
            continue  # "31 February", a year 0: not a time we can use
        if win:
            start, end = win
            return Window(
                start.timestamp() if isinstance(start, datetime) else start,
                end.timestamp() if isinstance(end, datetime) else end,
                m.group(0),
            )
    return None


def _window(kind: str, m: re.Match, today: datetime, now: float):
    g = m.groups()
    if kind == "iso":
        d = _utc(int(g[0]), int(g[1]), int(g[2]))
        return d, d + timedelta(days=1)
    if kind == "d_mon_y":
        d = _utc(
            int(g[2]), MONTHS[g[1].lower()[:4] if g[1].lower().startswith("sept") else g[1].lower()[:3]], int(g[0])
        )
        return d, d + timedelta(days=1)
    if kind == "mon_d_y":
        d = _utc(int(g[2]), MONTHS[g[0].lower()[:3]], int(g[1]))
        return d, d + timedelta(days=1)
    if kind == "mon_y":
        return _month_window(int(g[1]), MONTHS[g[0].lower()[:3]])
    if kind == "zh_ymd":
        d = _utc(int(g[0]), int(g[1]), int(g[2]))
        return d, d + timedelta(days=1)
    if kind == "zh_ym":
        return _month_window(int(g[0]), int(g[1]))
    if kind == "since_year":
        y = int(g[0])
        return (_utc(y), now + 1) if 1900 <= y <= 2200 else None
    if kind in ("zh_y", "year"):
        y = int(g[0])
        if not 1900 <= y <= 2200:
            return None
        return _utc(y), _utc(y + 1)
    if kind == "last_n":
        n = _num(g[0].split()[0]) if g[0] else 1
        return now - n * _unit_days(g[1]) * 86400, now + 1
    if kind == "ago":
        n = _num(g[0].split()[0])
        center = now - n * _unit_days(g[1]) * 86400
        half = max(1.0, 0.5 * _unit_days(g[1])) * 86400
        return center - half, center + half
    if kind == "day_word":
        w = g[0].lower()
        d = today - timedelta(days=1) if w == "yesterday" else today
        return d, d + timedelta(days=1)
    if kind == "this_last":
        return _calendar(g[1].lower(), g[0].lower() == "last", today)
    if kind == "zh_day":
        back = {"今天": 0, "今早": 0, "今晚": 0, "昨天": 1, "前天": 2}[g[0]]
        d = today - timedelta(days=back)
        return d, d + timedelta(days=1)
    if kind == "zh_this_last":
        if g[3]:  # 今年 / 去年 / 前年
            back = {"今": 0, "去": 1, "前": 2}[g[3]]
            return _utc(today.year - back), _utc(today.year - back + 1)
        unit = "month" if g[2] == "月" else "week"
        return _calendar(unit, g[0] == "上", today)
    if kind == "zh_last_n":
        return now - _num(g[0]) * _unit_days(g[1]) * 86400, now + 1
    if kind == "zh_ago":
        center = now - _num(g[0]) * _unit_days(g[1]) * 86400
        half = max(1.0, 0.5 * _unit_days(g[1])) * 86400
        return center - half, center + half
    return None


def _calendar(unit: str, previous: bool, today: datetime):
    if unit == "week":
        start = today - timedelta(days=today.weekday())
        if previous:
            start -= timedelta(days=7)
        return start, start + timedelta(days=7)
    if unit == "month":
        y, mth = today.year, today.month
        if previous:
            y, mth = (y - 1, 12) if mth == 1 else (y, mth - 1)
        return _month_window(y, mth)
    y = today.year - (1 if previous else 0)
    return _utc(y), _utc(y + 1)
