"""Chunks of long memories: the one rule every entry point shares (memory_store, `add`, import,
extraction, reindex and maintenance).

A memory longer than the `extraction_chunk_chars` setting is kept whole (the parent: what
memory_get and `show` return) and gets children, each an exact slice of the parent's text with
its own keyword row and vector, so a search can hit any part of it: an embedder reads only the
start of a text (MiniLM: 256 word pieces, about 1,000 English characters). Children hold the
parent's fields, kept in step by the store, and never appear in results on their own: a hit on a
child ranks its parent (memory.retrieval.ranking).

Pure text: no SQLite, no model.
"""

from __future__ import annotations

import re

TARGET = 800  # weight of one chunk: about 160-200 English word pieces, inside MiniLM's 256
CJK_WEIGHT = 3  # a Han or kana character is one word piece or more; three Latin characters make one
_BREAK = re.compile(r"\n\s*|(?<=[.!?;。！？；])\s+|(?<=[。！？；])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def is_long(content: str, limit: int) -> bool:
    """Whether `content` is stored as a parent with chunks (`limit`: extraction_chunk_chars)."""
    return len(content) > limit


def weight(text: str) -> int:
    """How much of an embedder's window `text` fills, in Latin-character units."""
    return len(text) + (CJK_WEIGHT - 1) * len(_CJK.findall(text))


def spans(content: str, target: int = TARGET) -> list[tuple[int, int]]:
    """(start, end) character offsets of the chunks of `content`: consecutive, cut at line or
    sentence ends into parts of about `target` weight, without leading or trailing space; one
    sentence heavier than 1.5 `target` is cut inside."""
    pieces: list[tuple[int, int]] = []  # sentences and lines, as offsets
    start = 0
    for m in _BREAK.finditer(content):
        if m.start() > start:
            pieces.append((start, m.start()))
        start = m.end()
    if start < len(content):
        pieces.append((start, len(content)))
    out: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in pieces:
        while weight(content[s:e]) > target * 1.5:  # one huge sentence: cut it at about `target`
            cut = s + _chars_for(content[s:e], target)
            if cur is not None:
                out.append(cur)
                cur = None
            out.append((s, cut))
            s = cut
        if cur is not None and weight(content[cur[0] : e]) > target:
            out.append(cur)
            cur = None
        cur = (cur[0], e) if cur is not None else (s, e)
    if cur is not None:
        out.append(cur)
    return [_trim(content, s, e) for s, e in out if content[s:e].strip()]


def _chars_for(text: str, target: int) -> int:
    """How many leading characters of `text` weigh about `target`."""
    total = 0
    for i, ch in enumerate(text):
        total += CJK_WEIGHT if _CJK.match(ch) else 1
        if total >= target:
            return i + 1
    return len(text)


def _trim(content: str, s: int, e: int) -> tuple[int, int]:
    while s < e and content[s].isspace():
        s += 1
    while e > s and content[e - 1].isspace():
        e -= 1
    return s, e


def position(start: int, end: int, total: int) -> str:
    """Where a chunk sits in its parent, as a person reads it: "chars 9,801-11,200 of 13,038"."""
    return f"chars {start + 1:,}-{end:,} of {total:,}"
