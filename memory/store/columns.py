"""The redaction choke point: what happens to each TEXT column before SQLite writes it.

Every connection `memory.store.db.connect` opens to a database file runs its INSERT, REPLACE and
UPDATE statements through `clean_params` (see `db.Connection.execute`): each string bound to a
written column is cleaned by that column's policy, whichever module wrote the statement. So a
field added later, or a maintenance pass that rewrites metadata, cannot forget redaction. The
store's writers also clean what they derive from (a content hash, an embedding, FTS tokens are
made from the cleaned text); the second pass costs nothing for a string the first one produced
(`records.scrub` remembers its outputs).

Policies:
  TEXT   caller text: `records.scrub` (hostile characters normalised, secrets redacted)
  LABEL  a short name (category, relation type, entity name): `records.scrub_label`, which also
         redacts a generated-looking word that no secret-naming word announces
  JSON   a JSON document of caller text: every key and string inside it scrubbed
  LABELS a JSON list of labels (tags, moods), each scrubbed as a label
  KEEP   an identifier, hash, fixed word or number as text (with the reason it holds no caller
         text); only characters SQLite cannot store (lone surrogates) are replaced

A column in no table below is TEXT: an unknown column is treated as caller text.
tests/test_privacy_columns.py fails when a TEXT column of the schema is missing here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from memory.store.records import is_clean, remember_clean, scrub, scrub_label

TEXT, LABEL, JSON, LABELS, KEEP = "text", "label", "json", "labels", "keep"

# (table, column) -> policy, or (KEEP, why). Shadow tables of FTS5 and vec0 are listed apart.
POLICY: dict[tuple[str, str], str | tuple[str, str]] = {
    ("memories", "content"): TEXT,
    ("memories", "layer"): (KEEP, "one of fact/experience/decision (a CHECK constraint)"),
    ("memories", "category"): LABEL,
    ("memories", "subject"): TEXT,
    ("memories", "scope"): (
        KEEP,
        "'global', a project's root path or its git remote (host/path): reads match it exactly",
    ),
    ("memories", "moods"): LABELS,
    ("memories", "tags"): LABELS,
    ("memories", "source"): (KEEP, "one of manual/hook/import/... (a CHECK constraint)"),
    ("memories", "source_ref"): TEXT,
    ("memories", "session_id"): (KEEP, "the host's session id (a UUID); reads match it exactly"),
    ("memories", "content_hash"): (KEEP, "sha256 hex of the cleaned content"),
    ("memories", "metadata"): JSON,
    ("memories", "author"): (KEEP, "a user name (config `user`, the OS's) or a database role: policies match it"),
    ("meta", "key"): (KEEP, "names chosen by the code (embedding_model, llm_tokens:<date>, ...)"),
    ("meta", "value"): TEXT,  # model names, counters, small JSON; scrubbed like text, whatever comes later
    ("entities", "scope"): (KEEP, "as memories.scope"),
    ("entities", "name"): LABEL,
    ("entities", "norm"): LABEL,  # the name folded: scrubbed again in case a writer folded raw text
    ("entities", "kind"): TEXT,
    ("entities", "metadata"): JSON,
    ("entities", "author"): (KEEP, "PostgreSQL only: the role that made a global entity, as memories.author"),
    ("entity_aliases", "alias"): LABEL,
    ("entity_aliases", "norm"): LABEL,
    ("relations", "type"): LABEL,
    ("memory_entities", "role"): TEXT,
    ("access_log", "kind"): (KEEP, "the kind of recall, a word chosen by the code (search, context, ...)"),
    ("access_log", "session_id"): (KEEP, "as memories.session_id"),
    ("access_log", "reader"): (
        KEEP,
        "PostgreSQL only: the role whose assistant was shown the memory (a policy matches it)",
    ),
    ("access_log", "prompt"): TEXT,  # the excerpt of the prompt a delivery answered (already redacted once)
    ("jobs", "kind"): (KEEP, "a job kind chosen by the code (harvest, maintain, ...)"),
    ("jobs", "payload"): (KEEP, "transcript paths and scopes: queued work must find its files again"),
    ("jobs", "dedup_key"): (KEEP, "kind:path, matched exactly"),
    ("jobs", "status"): (KEEP, "one of queued/running/done/... (a CHECK constraint)"),
    ("jobs", "locked_by"): (KEEP, "host:pid of the worker"),
    ("jobs", "last_error"): TEXT,  # an error message may quote the text that caused it
    ("decision_outcomes", "outcome"): (KEEP, "one of worked/failed/partial (a CHECK constraint)"),
    ("decision_outcomes", "notes"): TEXT,
    ("transcript_cursors", "path"): (KEEP, "a transcript's file path, matched exactly"),
    ("transcript_cursors", "session_id"): (KEEP, "as memories.session_id"),
    ("transcript_cursors", "head"): (KEEP, "sha1 hex of the transcript's first line"),
    ("memory_versions", "content"): TEXT,
    ("memory_versions", "fields"): JSON,
    ("memory_versions", "reason"): TEXT,
    ("memory_versions", "editor"): (KEEP, "who made the change, as memories.author (a user name or a database role)"),
    ("injections", "session_id"): (KEEP, "as memories.session_id"),
    ("entity_vectors", "model"): (KEEP, "the embedding model's name from the configuration"),
    ("migrations", "name"): (KEEP, "a migration's name from memory.store.schema"),
    ("memory_fts", "body"): (KEEP, "tokens of memories.content, subject and tags, all cleaned before"),
    ("memory_vec", "rowid"): (KEEP, "a memory's id"),
    ("memory_vec", "embedding"): (KEEP, "a float32 vector (a blob)"),
    ("memory_vec", "coarse"): (KEEP, "the vector's sign bits (a blob)"),
    ("memory_vec", "scope"): (KEEP, "as memories.scope"),
    ("memory_vec_reindex", "scope"): (KEEP, "as memories.scope"),
}

# Tables SQLite, FTS5 and sqlite-vec keep for themselves (sqlite_sequence, the shadow tables of a
# virtual table): written by SQLite from the rows above, never from a parameter of ours.
INTERNAL_PREFIXES = ("sqlite_", "memory_fts_", "memory_vec_")


def policy_of(table: str, column: str) -> str:
    p = POLICY.get((table.split(".")[-1].lower(), column.lower()), TEXT)
    return p if isinstance(p, str) else p[0]


class UnplannedWrite(Exception):
    """A write statement the choke point cannot map to its columns: rewrite it in a plain form
    (INSERT INTO t (cols) VALUES (?, ...) or UPDATE t SET col = ? ... WHERE ...)."""


_WRITE = re.compile(r"\s*(?:INSERT|REPLACE|UPDATE)\b", re.I)
_INSERT = re.compile(
    r'\s*(?:INSERT(?:\s+OR\s+\w+)?|REPLACE)\s+INTO\s+"?([\w.]+)"?\s*(?:\(([^()]*)\))?\s*(VALUES|SELECT)\b(.*)\Z',
    re.I | re.S,
)
_UPDATE = re.compile(r'\s*UPDATE(?:\s+OR\s+\w+)?\s+"?([\w.]+)"?\s+SET\b(.*)\Z', re.I | re.S)
_ASSIGN = re.compile(r'\s*"?(\w+)"?\s*=(.*)\Z', re.S)


def _top_level(sql: str) -> list[tuple[int, str]]:
    """(offset, character) of the characters of `sql` outside quoted strings and names."""
    out = []
    quote = ""
    for i, c in enumerate(sql):
        if quote:
            if c == quote:
                quote = ""
            continue
        if c in "'\"`":
            quote = c
            continue
        out.append((i, c))
    return out


def _split(sql: str) -> list[str]:
    """`sql` cut at its top-level commas (outside parentheses and quotes)."""
    parts, depth, start = [], 0, 0
    for i, c in _top_level(sql):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(sql[start:i])
            start = i + 1
    parts.append(sql[start:])
    return parts


def _marks(sql: str) -> int:
    return sum(c == "?" for _, c in _top_level(sql))


def _keyword_at_top(sql: str, words: Sequence[str]) -> int:
    """Offset of the first of `words` outside parentheses and quotes, or len(sql)."""
    depth = 0
    upper = sql.upper()
    for i, c in _top_level(sql):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            for w in words:
                if upper.startswith(w, i) and not (upper[i + len(w) : i + len(w) + 1].isalnum()):
                    return i
    return len(sql)


@lru_cache(maxsize=1024)
def plan(sql: str) -> tuple[str | None, ...] | None:
    """For a write statement, the policy of each `?` in order (None: a parameter that filters,
    not one that is written); None for a statement that writes nothing we bind."""
    if not _WRITE.match(sql) or "?" not in sql:
        return None
    m = _INSERT.match(sql)
    if m:
        table, cols, kind, rest = m.group(1), m.group(2), m.group(3).upper(), m.group(4)
        if cols is None:
            raise UnplannedWrite(f"name the columns of this INSERT: {sql[:120]!r}")
        columns = [c.strip().strip('"') for c in cols.split(",")]
        out: list[str | None] = []
        if kind == "VALUES":
            end = _keyword_at_top(rest, ("ON CONFLICT", "RETURNING", "WHERE"))
            values, tail = rest[:end], rest[end:]
            depth, start = 0, 0
            for i, c in _top_level(values):
                if c == "(":
                    depth += 1
                    if depth == 1:
                        start = i + 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        exprs = _split(values[start:i])
                        if len(exprs) != len(columns):
                            raise UnplannedWrite(f"columns and values differ in number: {sql[:120]!r}")
                        for col, expr in zip(columns, exprs):
                            out += [policy_of(table, col)] * _marks(expr)
            if _marks(tail):
                raise UnplannedWrite(f"a parameter after VALUES would be written unchecked: {sql[:120]!r}")
        else:  # INSERT ... SELECT expr, ... [FROM ...] [WHERE ...]: only the select list is written
            end = _keyword_at_top(rest, ("FROM", "WHERE", "ON CONFLICT", "RETURNING"))
            exprs = _split(rest[:end])
            if len(exprs) != len(columns):
                raise UnplannedWrite(f"columns and selected values differ in number: {sql[:120]!r}")
            for col, expr in zip(columns, exprs):
                out += [policy_of(table, col)] * _marks(expr)
            out += [None] * _marks(rest[end:])  # filters of the SELECT
        return tuple(out)
    m = _UPDATE.match(sql)
    if m:
        table, rest = m.group(1), m.group(2)
        end = _keyword_at_top(rest, ("WHERE", "RETURNING", "FROM"))
        out = []
        for assignment in _split(rest[:end]):
            a = _ASSIGN.match(assignment)
            if a is None:
                raise UnplannedWrite(f"cannot read the assignment {assignment.strip()[:60]!r} in {sql[:120]!r}")
            out += [policy_of(table, a.group(1))] * _marks(a.group(2))
        return tuple(out) + (None,) * _marks(rest[end:])
    raise UnplannedWrite(f"cannot map this write to its columns: {sql[:120]!r}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(value: str) -> str:
    """`value` with lone surrogates (from JSON \\ud800 escapes or undecodable file names) as U+FFFD,
    which SQLite can store and every reader can print."""
    if value.isascii():
        return value
    return _SURROGATE.sub("\ufffd", value)


def clean_params(sql: str, params: Sequence[Any], secrets: Sequence[str]) -> Sequence[Any]:
    """`params` for `sql` with every string bound to a written column cleaned by its policy."""
    policies = plan(sql)
    if policies is None:
        return _storable_all(params)
    if isinstance(params, dict):
        raise UnplannedWrite(f"use ? parameters in a write statement: {sql[:120]!r}")
    if len(policies) != len(params):
        raise UnplannedWrite(f"{len(params)} values for the {len(policies)} parameters read in {sql[:120]!r}")
    out = list(params)
    for i, (p, v) in enumerate(zip(policies, params)):
        if not isinstance(v, str):
            continue
        if p == TEXT:
            out[i] = scrub(v, secrets)
        elif p == LABEL:
            out[i] = scrub_label(v, secrets)
        elif p in (JSON, LABELS):
            out[i] = scrub_json(v, secrets, scrub_label if p == LABELS else scrub)
        else:
            out[i] = storable(v)
    return out


def _storable_all(params: Any) -> Any:
    if isinstance(params, (list, tuple)) and any(isinstance(v, str) and not v.isascii() for v in params):
        return [storable(v) if isinstance(v, str) else v for v in params]
    return params


_to_json = json.JSONEncoder(ensure_ascii=False).encode


def scrub_json(value: str, secrets: Sequence[str], each: Callable[[str, Sequence[str]], str] = scrub) -> str:
    """A JSON document with every key and string cleaned by `each`; the same text when nothing
    changed. Text that is not JSON is cleaned as one string."""
    kind = "text" if each is scrub else "label"
    if value in ("[]", "{}") or is_clean(value, secrets, kind):
        return value
    try:
        doc = json.loads(value)
    except ValueError:
        return each(value, secrets)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return each(v, secrets)
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {each(k, secrets): walk(x) for k, x in v.items()}
        return v

    cleaned = walk(doc)
    out = value if cleaned == doc else _to_json(cleaned)
    remember_clean(out, secrets, kind)
    return out
