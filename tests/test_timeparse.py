"""memory.timeparse: the time window a query names, in English and Chinese, from a fixed `now`.

Calendar expressions ("yesterday", "March 2025", "上个月") must give their exact UTC window;
relative ones ("last 3 months", "三天前") are checked by what they must and must not contain, so
the tests hold however the parser rounds. Ordinary text with numbers must give no window.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memory.lang.timeparse import Window, find_window

NOW = datetime(2025, 6, 18, 15, 0, tzinfo=timezone.utc)  # a Wednesday afternoon
DAY = 86400.0


def utc(y: int, m: int, d: int = 1) -> float:
    return datetime(y, m, d, tzinfo=timezone.utc).timestamp()


def window(query: str, now: datetime = NOW) -> Window:
    w = find_window(query, now.timestamp())
    assert w is not None, f"no window found in {query!r}"
    assert w.start < w.end
    return w


def days_ago(n: float) -> float:
    return NOW.timestamp() - n * DAY


def contains(w: Window, t: float) -> bool:
    return w.start <= t < w.end


# -- calendar expressions: exact windows ----------------------------------------------------------


@pytest.mark.parametrize(
    "query, start, end",
    [
        ("what did we break yesterday?", utc(2025, 6, 17), utc(2025, 6, 18)),
        ("today's deploy", utc(2025, 6, 18), utc(2025, 6, 19)),
        ("what did we decide in 2024", utc(2024, 1, 1), utc(2025, 1, 1)),
        ("the outage in March 2025", utc(2025, 3, 1), utc(2025, 4, 1)),
        ("released on 3 June 2023", utc(2023, 6, 3), utc(2023, 6, 4)),
        ("released on June 3, 2023", utc(2023, 6, 3), utc(2023, 6, 4)),
        ("the migration on 2025-03-14", utc(2025, 3, 14), utc(2025, 3, 15)),
        ("上个月的发布", utc(2025, 5, 1), utc(2025, 6, 1)),
        ("去年我们用什么数据库", utc(2024, 1, 1), utc(2025, 1, 1)),
        ("今年的目标", utc(2025, 1, 1), utc(2026, 1, 1)),
        ("2024年3月的事故", utc(2024, 3, 1), utc(2024, 4, 1)),
        ("2024年3月5日上线", utc(2024, 3, 5), utc(2024, 3, 6)),
    ],
)
def test_calendar_expressions_give_their_exact_utc_window(query: str, start: float, end: float) -> None:
    w = window(query)
    assert (w.start, w.end) == (start, end)


def test_the_window_carries_the_words_that_set_it() -> None:
    assert window("what broke in March 2025 on staging").phrase == "March 2025"
    assert window("上个月的发布").phrase == "上个月"


def test_chinese_last_month_in_january_is_december_of_the_year_before() -> None:
    w = window("上个月", datetime(2025, 1, 10, 9, 0, tzinfo=timezone.utc))
    assert (w.start, w.end) == (utc(2024, 12, 1), utc(2025, 1, 1))


def test_yesterday_on_the_first_of_a_month_is_the_last_day_of_the_month_before() -> None:
    w = window("yesterday", datetime(2025, 3, 1, 0, 30, tzinfo=timezone.utc))
    assert (w.start, w.end) == (utc(2025, 2, 28), utc(2025, 3, 1))


# -- relative expressions: what they must and must not cover ------------------------------------


def test_last_week_covers_the_days_just_past_and_nothing_a_month_old_or_in_the_future() -> None:
    w = window("what did I change last week")
    assert contains(w, days_ago(5))
    assert not contains(w, days_ago(20))
    assert not contains(w, NOW.timestamp() + DAY)


def test_last_three_months_reaches_back_about_ninety_days_and_up_to_now() -> None:
    w = window("bugs from the last 3 months")
    assert days_ago(93) <= w.start <= days_ago(89)
    assert contains(w, days_ago(1)) and contains(w, NOW.timestamp() - 60)
    assert not contains(w, days_ago(100))


def test_two_weeks_ago_is_centred_on_fourteen_days_back() -> None:
    w = window("the bug we fixed two weeks ago")
    assert contains(w, days_ago(14))
    assert not contains(w, days_ago(1)) and not contains(w, days_ago(30))


def test_three_days_ago_in_chinese_is_around_that_day_only() -> None:
    w = window("三天前修的bug")
    assert contains(w, days_ago(3))
    assert not contains(w, NOW.timestamp()) and not contains(w, days_ago(7))


def test_the_last_two_weeks_in_chinese_runs_from_fourteen_days_back_to_now() -> None:
    w = window("最近两周的提交")
    assert days_ago(14.5) <= w.start <= days_ago(13.5)
    assert contains(w, days_ago(1)) and contains(w, days_ago(13))
    assert not contains(w, days_ago(20))


def test_english_and_chinese_say_the_same_relative_span_alike() -> None:
    en, zh = window("in the last 3 months"), window("最近三个月")
    assert abs(en.start - zh.start) < DAY and abs(en.end - zh.end) < DAY


# -- ordinary text: no window ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "the 2 tests failed",
        "port 8080 is already in use",
        "bump the version to 2.0.1",
        "retry 3 times with a 5 second backoff",
        "python 3.12 is required",
        "RFC 2616 says so",
        "the request took 2024ms",
        "端口8080被占用了",
        "两个测试失败了",
        "把超时改成30秒",
    ],
)
def test_ordinary_text_with_numbers_names_no_time(text: str) -> None:
    assert find_window(text, NOW.timestamp()) is None


# -- known gaps: strict, so they fail loudly once fixed and can be promoted -------------------------


def test_the_chinese_word_for_cycle_is_not_read_as_this_week() -> None:
    assert find_window("这个周期性任务每小时运行一次", NOW.timestamp()) is None
    assert find_window("这个月刊的封面", NOW.timestamp()) is None  # a monthly magazine
    assert window("本周报告写完了吗") is not None and window("上个月的周报") is not None


def test_since_a_year_runs_from_that_year_up_to_now() -> None:
    w = window("what changed since 2023")
    assert w.start == utc(2023, 1, 1) and contains(w, days_ago(1))
    assert window("in 2023").end == utc(2024, 1, 1)  # "in" still means that year alone


def test_a_window_is_a_plain_pair_of_epoch_seconds() -> None:
    w = window("上个月")
    assert isinstance(w.start, float) and isinstance(w.end, float)
    assert timedelta(seconds=w.end - w.start) == timedelta(days=31)
