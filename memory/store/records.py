"""What a memory is: the record read back (`Memory`), what a caller may set (`NewMemory`), and the
checks and conversions every write path shares (times, hashes, bounded strings, metadata).
Pure data: no SQLite, no model."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from memory.errors import InvalidInput
from memory.scope import GLOBAL

LAYERS = ("fact", "experience", "decision")
SOURCES = ("manual", "hook", "import", "consolidation", "extraction")
MAX_TAGS, MAX_TAG_CHARS = 32, 64
MAX_METADATA_BYTES, MAX_METADATA_DEPTH = 64_000, 8
SQLITE_MIN_INT, SQLITE_MAX_INT = -(2**63), 2**63 - 1
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_to_json = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(x, ensure_ascii=False), one encoder for all


def _from_json(s: str) -> Any:
    """json.loads, without parsing the empty list and object most memories store."""
    return [] if s == "[]" else {} if s == "{}" else json.loads(s)


MEMORY_COLUMNS = (
    "id, content, layer, category, subject, scope, importance, confidence, valence, intensity, "
    "moods, tags, pinned, source, source_ref, session_id, occurred_at, created_at, updated_at, "
    "last_activated_at, activation_count, valid_from, valid_to, superseded_by, parent_id, "
    "chunk_index, content_hash, deleted_at, metadata, author"
)


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_time(value: Any, name: str = "time") -> float | None:
    """An ISO 8601 date or datetime (or epoch seconds) as epoch seconds; naive times are UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be an ISO 8601 string like 2025-03-14 or 2025-03-14T09:30:00Z")
    s = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise InvalidInput(f"{name} {value!r} is not ISO 8601; use e.g. 2025-03-14 or 2025-03-14T09:30:00Z") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


# What a restatement changes without changing what it says: spaces before a mark ("1.22 ."), and
# the closing full stop or exclamation ("…with Go 1.22." / "go services are built with go 1.22").
_SPACE_BEFORE_MARK = re.compile(r"\s+(?=[,.;:!?，。；：！？、])")
_CLOSING_STOP = re.compile(r"[\s.。!！;；…]+$")


def content_hash(content: str) -> str:
    """Hash of the content as a reader compares two statements: whitespace folded, case and
    full-width forms ignored (NFKC), and the spaces before punctuation and the closing full stop
    left out. Trivial variants are one memory (schema migration 014 recomputed older rows')."""
    norm = unicodedata.normalize("NFKC", " ".join(content.split())).casefold()
    norm = _CLOSING_STOP.sub("", _SPACE_BEFORE_MARK.sub("", norm))
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


@dataclass
class Memory:
    id: int
    content: str
    layer: str
    category: str
    subject: str | None
    scope: str
    importance: int
    confidence: float
    valence: float
    intensity: float
    moods: list[str]
    tags: list[str]
    pinned: bool
    source: str
    source_ref: str | None
    session_id: str | None
    occurred_at: float | None
    created_at: float
    updated_at: float
    last_activated_at: float | None
    activation_count: int
    valid_from: float | None
    valid_to: float | None
    superseded_by: int | None
    parent_id: int | None
    chunk_index: int | None
    content_hash: str
    deleted_at: float | None
    metadata: dict
    author: str | None = None  # who wrote it (schema migration 009); None: written before authors were kept

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Memory:
        m = cls(*row)
        m.moods = _from_json(m.moods) if isinstance(m.moods, str) else m.moods
        m.tags = _from_json(m.tags) if isinstance(m.tags, str) else m.tags
        m.metadata = _from_json(m.metadata) if isinstance(m.metadata, str) else m.metadata
        m.pinned = bool(m.pinned)
        return m

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in (
            "occurred_at",
            "created_at",
            "updated_at",
            "last_activated_at",
            "valid_from",
            "valid_to",
            "deleted_at",
        ):
            d[key] = iso(d[key])
        return d


@dataclass
class NewMemory:
    """What a caller may set when storing a memory; everything else is derived."""

    content: str
    layer: str = "fact"
    category: str = "general"
    subject: str | None = None
    scope: str = GLOBAL
    importance: int = 3
    confidence: float = 1.0
    valence: float = 0.0
    intensity: float = 0.0
    moods: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    source: str = "manual"
    source_ref: str | None = None
    session_id: str | None = None
    occurred_at: Any = None
    valid_from: Any = None
    valid_to: Any = None
    parent_id: int | None = None
    chunk_index: int | None = None
    metadata: dict = field(default_factory=dict)
    # (name, kind) or (name, kind, role) to link; None detects them from the content.
    entities: list[tuple[str, ...]] | None = None


def _short(value: Any, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    value = _CONTROL.sub("", value).strip()
    if not value:
        raise InvalidInput(f"{name} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {limit}")
    return value


def _string_list(values: Any, name: str, limit: int = MAX_TAG_CHARS) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{name} must be a list of strings")
    out = list(dict.fromkeys(_short(v, name[:-1], limit).lower() for v in values if v.strip()))
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} {name}, got {len(out)}")
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")
_CLEAN: dict[tuple[str, tuple[str, ...], str], None] = {}  # recent outputs of scrub, per kind and patterns
_CLEAN_CHARS = 0
_CLEAN_LIMIT = 4_000_000  # characters remembered before the memo starts again


def normalise(value: str) -> str:
    """Text without what a store must not keep as given: NUL and other control characters
    (tab, newline and carriage return stay), invisible characters that can split a secret, and
    lone surrogates (U+FFFD instead: SQLite cannot store them and no reader could print them)."""
    from memory.lang.privacy import strip_invisible

    if value.isascii():
        return _CONTROL.sub("", value)
    if _SURROGATE.search(value):
        value = _SURROGATE.sub("\ufffd", value)
    return _CONTROL.sub("", strip_invisible(value))


def is_clean(value: str, secrets: Sequence[str] = (), kind: str = "text") -> bool:
    """Whether `value` is a recent output of `scrub` (kind "text") or `scrub_label` ("label") with
    these patterns: cleaning it again would give it back unchanged (redaction is idempotent)."""
    return (kind, tuple(secrets), value) in _CLEAN


def remember_clean(value: str, secrets: Sequence[str] = (), kind: str = "text") -> None:
    global _CLEAN_CHARS
    if _CLEAN_CHARS + len(value) > _CLEAN_LIMIT:
        _CLEAN.clear()
        _CLEAN_CHARS = 0
    _CLEAN[(kind, tuple(secrets), value)] = None
    _CLEAN_CHARS += len(value)


def scrub(value: str, secrets: Sequence[str] = ()) -> str:
    """The text as the store writes it: hostile characters normalised (`normalise`), then secrets
    redacted (the `redact_patterns` setting as well as the built-in rules).

    Every piece of caller text that reaches a table goes through here: the writers call it on
    what they derive from (content hash, embedding, keyword index), and the database connection
    calls it again on every TEXT column it writes (memory.store.columns), so a field added later
    is covered without anyone remembering to.
    """
    if ("text", tuple(secrets), value) in _CLEAN:
        return value
    from memory.lang import privacy  # here: compiling its patterns costs a read-only hook ~14 ms

    out = privacy.redact(normalise(value), secrets)  # redaction adds no character normalise drops
    remember_clean(out, secrets)
    return out


def scrub_label(value: str, secrets: Sequence[str] = ()) -> str:
    """`scrub` for a short label (category, tag, relation type, entity name): a generated-looking
    word is redacted even with no secret-naming word around it (privacy.redact_label)."""
    if ("label", tuple(secrets), value) in _CLEAN:
        return value
    from memory.lang import privacy

    out = privacy.redact_label(normalise(value), secrets)
    remember_clean(out, secrets, "label")
    return out


def check_metadata(metadata: Any, secrets: Sequence[str] = ()) -> dict:
    """Metadata must be a JSON object of bounded size and depth; secrets in keys and strings are redacted."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be a JSON object")

    def walk(v: Any, depth: int) -> Any:
        if depth > MAX_METADATA_DEPTH and isinstance(v, (dict, list)):  # levels of nesting, not leaves
            raise InvalidInput(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels")
        if isinstance(v, dict):
            return {scrub(str(k), secrets): walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, depth + 1) for x in v]
        if isinstance(v, str):
            return scrub(v, secrets)
        if v is None or isinstance(v, (bool, int, float)):
            if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")):
                raise InvalidInput("metadata numbers must be finite")
            return v
        raise InvalidInput(f"metadata values must be JSON (got {type(v).__name__})")

    clean = walk(metadata, 1)
    if len(_to_json(clean)) > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is larger than {MAX_METADATA_BYTES} bytes of JSON")
    return clean
