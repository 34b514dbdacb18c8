"""Cheap detection of the entities a text names: people, speakers, proper names, code things.

Used when a memory is stored (to link it to its entities) and on every query (to find which
known entities the query names). Regular expressions only: it runs on every write and prompt.
The extraction agent adds richer, typed entities and relations on top.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memory.lang.text import STOPWORDS, WORD

SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
_CAPS = re.compile(r"\b([A-Z][a-zA-Z0-9+#'-]*[a-zA-Z0-9+#]|[A-Z])(?:\s+([A-Z][a-zA-Z0-9+#'-]*[a-zA-Z0-9+#]))*\b")
_CAPSEQ = re.compile(r"\b[A-Z][\w+#-]*(?:\s+[A-Z][\w+#-]*)*")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_PATH = re.compile(
    r"(?<![\w/])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|c|h|cpp|toml|json|ya?ml|md|sql|sh|lock|cfg|ini|env))\b"
)
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll im ok okay yes no hey hi hello thanks thank wow oh yeah sure great
cool awesome nice good well so and but or the a an this that these those it its my your our their we you
he she they what when where why how which who whom whose do does did is are was were be been can could
would should will may might must let lol haha btw also just really very maybe anyway congrats sorry
please also then now today yesterday tomorrow monday tuesday wednesday thursday friday saturday sunday
january february march april june july august september october november december""".split()
)


def detect(text: str) -> list[tuple[str, str, str]]:
    """(name, kind, role) for each entity `text` names; role is 'speaker' or 'mention'."""
    found: dict[str, tuple[str, str, str]] = {}
    body = text
    m = SPEAKER.match(text)
    if m and m.group(1).lower() not in _NOT_NAMES:
        found[m.group(1).casefold()] = (m.group(1), "person", "speaker")
        body = text[m.end() :]
    for m in _CAPSEQ.finditer(body):
        words = m.group(0).split()
        if len(words) == 1 and _sentence_start(body, m.start()) and not _proper_looking(words[0]):
            words = words[1:]  # "Sounds great": capitalised because it starts a sentence
        words = [w for w in words if w.lower() not in _NOT_NAMES]
        if not words:
            continue
        name = " ".join(words)
        if len(name) < 2 or name.casefold() in found:
            continue
        found[name.casefold()] = (name, "name", "mention")
    for code in _BACKTICK.findall(body):
        code = code.strip()
        if code and code.casefold() not in found:
            found[code.casefold()] = (code, "code", "mention")
    for path in _PATH.findall(body):
        if path.casefold() not in found:
            found[path.casefold()] = (path, "file", "mention")
    return list(found.values())


_INNER_CAP = re.compile(r"^.[^A-Z]*[A-Z]|[0-9+#]")


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip(" \t\"'(“‘")
    return not before or before[-1] in ".!?:;\n…。！？"


def _proper_looking(word: str) -> bool:
    """Capitalised for a reason other than starting a sentence: LGBTQ, FastAPI, GitHub, K8s."""
    core = word.strip("'-")
    return (len(core) >= 2 and core.isupper()) or bool(_INNER_CAP.search(core[1:] if core else ""))


def query_keys(query: str) -> list[str]:
    """Normalised strings that may name an entity in `query`: words, word pairs and triples,
    code spans and paths, lowercase or not (people type `pytest` and `Caroline` alike)."""
    words = [w for w in WORD.findall(query) if w.lower() not in STOPWORDS]
    keys = {w.casefold() for w in words if len(w) > 1}
    raw = WORD.findall(query)
    for n in (2, 3):
        for i in range(len(raw) - n + 1):
            keys.add(" ".join(raw[i : i + n]).casefold())
    for code in _BACKTICK.findall(query):
        keys.add(" ".join(code.split()).casefold())
    for path in _PATH.findall(query):
        keys.add(path.casefold())
    for name, _, _ in detect(query):
        keys.add(" ".join(name.split()).casefold())
    return [k for k in keys if k]


def known_in(text: str, known: dict[str, list[str]]) -> Iterable[tuple[str, str, str]]:
    """Configured known entities (name -> aliases) that `text` names."""
    low = text.casefold()
    for name, aliases in known.items():
        for alias in (name, *aliases):
            a = alias.casefold()
            if a and re.search(r"(?<!\w)" + re.escape(a) + r"(?!\w)", low):
                yield (name, "known", "mention")
                break
