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
    pieces = _pieces(content)
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


def _pieces(content: str) -> list[tuple[int, int]]:
    """(start, end) of the sentences and lines of `content`, in order."""
    pieces: list[tuple[int, int]] = []
    start = 0
    for m in _BREAK.finditer(content):
        if m.start() > start:
            pieces.append((start, m.start()))
        start = m.end()
    if start < len(content):
        pieces.append((start, len(content)))
    return pieces


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


# -- the part a search shows ---------------------------------------------------------------------

SHOWN = 2 * TARGET  # the most weight of a part shown for a chunk that matched (the chunk itself may be more)
_LEAD_IN = re.compile(r"(?:^#{1,6}\s.*|[:：]\s*)$")  # a heading, or a line that announces what follows
_HEADING = re.compile(r"#{1,6}\s")
_HEADING_LINE = re.compile(r"^#{1,6}\s", re.M)
_LINE_END = re.compile(r"[ \t]*(?:\n|$)")
_NEW_BLOCK = re.compile(r"#{1,6}\s|(?:[-*+•]|\d{1,3}[.)、])\s*\S")  # a heading or a list item starts one


def shown(content: str, start: int, end: int, most: int = SHOWN) -> tuple[int, int]:
    """What a search shows of `content` for its chunk (start, end): the chunk widened to whole
    blocks, so the step asked about is shown with its answer, not cut after its heading.

    Back to the start of the line the chunk starts in. Forward: when the part holds a heading,
    to the end of the section it ends in (the next heading); else to the end of the paragraph or
    list item it ends in, and past a lead-in (a line ending in ":") through the block that
    follows it (the command, the list, the value). A blank line ends a paragraph; a heading or
    a list item starts a new block. The widening stops at a line or sentence end before the
    part weighs more than `most` (the chunk itself is kept whole). Exact offsets into
    `content`, without surrounding space."""
    line = content.rfind("\n", 0, start) + 1
    if content[line:start].strip() and weight(content[line:end]) <= most:
        start = line
    section = bool(_HEADING_LINE.search(content, start, end))  # the step began in the part: show it to its end
    follow = _leads_in(content, end)
    whole_paragraph = False  # after a lead-in: its list or code as a whole, not one item
    for s, e in _pieces(content):
        if s < end:
            continue
        gap = content[end:s]
        head = False
        if "\n" in gap:
            blank, head = gap.count("\n") > 1, bool(_HEADING.match(content, s))
            if follow:
                whole_paragraph = True
            elif head:
                break
            elif not section and (blank or (not whole_paragraph and _NEW_BLOCK.match(content, s))):
                break
        if weight(content[start:e]) > most:
            break
        end = e
        follow = _leads_in(content, end)
        section = section or head
    return _trim(content, start, end)


def _leads_in(content: str, end: int) -> bool:
    """Whether the text up to `end` finishes a line that is a heading or announces what follows."""
    if not _LINE_END.match(content, end):
        return False  # mid-line
    return bool(_LEAD_IN.search(content[content.rfind("\n", 0, end) + 1 : end].strip()))
