"""LLM extraction: a configured provider (memory.llm) reads the session and proposes memories as
JSON; `validate` keeps only well-formed ones, and they become the same Candidates the heuristic
path makes."""

from __future__ import annotations

import json
from collections.abc import Sequence

from memory.extraction.heuristic import Candidate, finish
from memory.lang import privacy
from memory.lang.text import estimate_tokens
from memory.llm import Guard, InvalidOutput, LLMError, Provider

LAYERS = ("fact", "experience", "decision")


MAX_MEMORIES = 50


MAX_PROMPT_CHARS = 60_000  # the newest turns that fit; older ones were offered in earlier calls


SYSTEM = """You extract long-term memories from a coding session between a user and an AI assistant.
Keep only what a careful engineer would want remembered in later sessions: the user's rules and
preferences, corrections, decisions with their reasons, project facts (commands, paths, versions,
ports, environments, conventions, owners), and experiences (what broke and what fixed it).
Skip requests, questions, chit-chat, the assistant's narration and anything only true right now.
Answer with one JSON object and nothing else:
{"memories": [{"content": "<one clean standalone sentence>", "layer": "fact|experience|decision",
  "category": "<preference|rule|correction|decision|command|config|convention|environment|experience|note>",
  "importance": 1-5, "subject": "<what it is about, optional>", "attribute": "<which property, optional>",
  "value": "<the value, optional>", "rationale": "<for decisions, optional>",
  "entities": [{"name": "...", "kind": "file|command|technology|service|person|function|class"}]}]}
Return {"memories": []} when nothing is worth keeping."""


def _transcript_text(turns: Sequence[dict], redact_patterns: Sequence[str] = ()) -> str:
    lines = []
    for t in turns:
        kind = t.get("kind")
        if kind == "text" and t.get("role") in ("user", "assistant"):
            lines.append(f"{t['role'].upper()}: {t.get('text', '')}")
        elif kind == "tool_error":
            lines.append(f"TOOL FAILED: {t.get('tool')} `{t.get('input')}`: {t.get('error')}")
    # The one place session text leaves the machine: the built-in rules and the user's own.
    text = privacy.redact("\n".join(lines), list(redact_patterns))
    return text[-MAX_PROMPT_CHARS:]


def validate(raw: str) -> list[dict]:
    """The memories of a model answer, or InvalidOutput naming the first problem."""
    s = raw.strip()
    if s.startswith("```"):  # a fenced answer is still an answer
        s = s.strip("`")
        s = s[s.find("{") :] if "{" in s else s
    try:
        data = json.loads(s)
    except ValueError as e:
        raise InvalidOutput(f"the model did not answer JSON ({e})") from e
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise InvalidOutput("the answer must be an object with a 'memories' list")
    items = data["memories"]
    if len(items) > MAX_MEMORIES:
        raise InvalidOutput(f"{len(items)} memories in one answer; at most {MAX_MEMORIES}")
    for i, m in enumerate(items):
        where = f"memories[{i}]"
        if not isinstance(m, dict):
            raise InvalidOutput(f"{where} is not an object")
        if not isinstance(m.get("content"), str) or not m["content"].strip() or len(m["content"]) > 2000:
            raise InvalidOutput(f"{where}.content must be a non-empty string of at most 2000 characters")
        if m.get("layer") not in LAYERS:
            raise InvalidOutput(f"{where}.layer must be one of {LAYERS}")
        imp = m.get("importance", 3)
        if not isinstance(imp, int) or isinstance(imp, bool) or not 1 <= imp <= 5:
            raise InvalidOutput(f"{where}.importance must be an integer 1-5")
        for key in ("category", "subject", "attribute", "value", "rationale"):
            if m.get(key) is not None and not isinstance(m[key], str):
                raise InvalidOutput(f"{where}.{key} must be a string")
        ents = m.get("entities", [])
        if not isinstance(ents, list) or not all(
            isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("kind", "thing"), str)
            for e in ents
        ):
            raise InvalidOutput(f"{where}.entities must be a list of {{name, kind}} objects")
    return items


def llm_extract(
    turns: Sequence[dict],
    provider: Provider,
    guard: Guard,
    *,
    scope: str,
    model: str,
    max_tokens: int = 1024,
    session_id: str | None = None,
    redact_patterns: Sequence[str] = (),
) -> list[Candidate]:
    """Memory candidates from the model, or LLMError (budget, breaker, endpoint, bad output).
    The session is redacted first, with `redact_patterns` (the setting) as well as the built-in rules."""
    body = _transcript_text(turns, redact_patterns)
    if not body.strip():
        return []
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "The session:\n\n" + body}]
    guard.check(estimate_tokens(SYSTEM + body) + max_tokens)
    try:
        reply = provider.call(messages, model, max_tokens)
        items = validate(reply.text)
    except LLMError:
        guard.failed()
        raise
    guard.record(reply.tokens or estimate_tokens(SYSTEM + body + reply.text))
    session = session_id or next((t.get("session_id") for t in turns if t.get("session_id")), None)
    out = []
    for m in items:
        c = Candidate(
            " ".join(m["content"].split()),
            layer=m["layer"],
            category=m.get("category") or "note",
            importance=m.get("importance", 3),
            confidence=0.7,
            why="llm",
            scope=scope,
            session_id=session,
            role="llm",
        )
        if m.get("rationale"):
            c.metadata["rationale"] = m["rationale"]
        finish(c, None, None)
        c.entities = list(
            dict.fromkeys([*c.entities, *((e["name"], e.get("kind", "thing")) for e in m.get("entities", []))])
        )
        c.subject = m.get("subject") or c.subject
        if m.get("attribute") and m.get("value"):
            c.attribute, c.value = m["attribute"], m["value"]
        c.why = "llm"
        c.metadata["why"] = "llm"
        c.metadata["extractor"] = "llm"
        out.append(c)
    return out
