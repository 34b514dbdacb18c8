"""Optional LLM extraction: a provider protocol, two HTTP providers, a budget and a breaker.

Off by default (`llm_provider` = ""). When on, the clean turns of a session (secrets redacted
first: this is the one place text may leave the machine, and only to the endpoint the user
configured) go to the model in one call, which answers with JSON memories. The answer is
validated against a schema and rejected whole when anything is wrong: never half-applied.

Cost control, because background extraction has burned users' quotas elsewhere: a daily token
budget (checked before the call, counted from the provider's usage after it) and a circuit
breaker (after `llm_breaker_failures` failures in a row, no calls for `llm_breaker_cooldown_s`).
Both are kept in the database's meta table, so short-lived hook processes share them.

Stdlib only (urllib): a hook may run this.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, Sequence

from memory.errors import ConfigError, MapleError
from memory.extraction.heuristic import Candidate, _finish
from memory.lang import privacy
from memory.lang.text import estimate_tokens

LAYERS = ("fact", "experience", "decision")
MAX_MEMORIES = 50
MAX_PROMPT_CHARS = 60_000  # the newest turns that fit; older ones were offered in earlier calls


class LLMError(MapleError):
    """The LLM could not be used: budget spent, breaker open, endpoint failing, or bad output."""


class BudgetExceeded(LLMError):
    """Today's token budget would be exceeded."""


class BreakerOpen(LLMError):
    """Too many failures in a row; calls are paused."""


class InvalidOutput(LLMError):
    """The model's answer does not match the schema; nothing of it was applied."""


@dataclass
class Reply:
    text: str
    tokens: int  # prompt + completion, as the provider counted them


class Provider(Protocol):
    def call(self, messages: list[dict], model: str, max_tokens: int) -> Reply:
        """Send chat messages ({role, content}; an optional first "system" one) and return the reply."""


def _post(url: str, body: dict, headers: dict[str, str], timeout: float) -> dict:
    data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (configured endpoint)
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        detail = e.read()[:300].decode("utf-8", errors="replace")
        raise LLMError(f"{url} answered HTTP {e.code}: {detail}") from e
    except (urllib.error.URLError, TimeoutError, OSError) as e:
        raise LLMError(f"cannot reach {url}: {getattr(e, 'reason', e)}; check llm_base_url") from e
    except ValueError as e:
        raise LLMError(f"{url} did not answer JSON") from e


class OpenAICompatible:
    """POST {base_url}/chat/completions: OpenAI and compatible local servers (Ollama, vLLM, llama.cpp)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 30.0):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key = api_key
        self.timeout = timeout

    def call(self, messages: list[dict], model: str, max_tokens: int) -> Reply:
        headers = {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        out = _post(self.url, {"model": model, "messages": messages, "max_tokens": max_tokens,
                               "temperature": 0, "response_format": {"type": "json_object"}},
                    headers, self.timeout)
        try:
            text = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as e:
            raise LLMError("the chat completion has no choices[0].message.content") from e
        usage = out.get("usage") or {}
        tokens = usage.get("total_tokens") or (usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return Reply(text or "", int(tokens or 0))


class AnthropicMessages:
    """POST {base_url}/v1/messages: the Anthropic Messages API."""

    def __init__(self, base_url: str = "https://api.anthropic.com", api_key: str | None = None,
                 timeout: float = 30.0, version: str = "2023-06-01"):
        self.url = base_url.rstrip("/") + "/v1/messages"
        self.api_key = api_key
        self.timeout = timeout
        self.version = version

    def call(self, messages: list[dict], model: str, max_tokens: int) -> Reply:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        rest = [m for m in messages if m["role"] != "system"]
        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": rest, "temperature": 0}
        if system:
            body["system"] = system
        headers = {"anthropic-version": self.version}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        out = _post(self.url, body, headers, self.timeout)
        try:
            text = "".join(b.get("text", "") for b in out["content"] if b.get("type") == "text")
        except (KeyError, TypeError, AttributeError) as e:
            raise LLMError("the Messages API answer has no text content") from e
        usage = out.get("usage") or {}
        return Reply(text, int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)))


def provider_from_config(config: Any, env: dict[str, str] | None = None) -> Provider | None:
    """The configured provider, or None when LLM extraction is off."""
    kind = getattr(config, "llm_provider", "")
    if not kind:
        return None
    env = os.environ if env is None else env
    key_var = getattr(config, "llm_api_key_env", "")
    key = env.get(key_var) if key_var else None
    timeout = float(getattr(config, "llm_timeout_s", 30.0))
    if kind == "openai":
        if not config.llm_base_url:
            raise ConfigError("llm_provider 'openai' needs llm_base_url (e.g. http://localhost:11434/v1 for Ollama)")
        return OpenAICompatible(config.llm_base_url, key, timeout)
    if kind == "anthropic":
        if not key:
            raise ConfigError(f"llm_provider 'anthropic' needs an API key in the environment variable named by "
                              f"llm_api_key_env (now {key_var!r})")
        return AnthropicMessages(config.llm_base_url or "https://api.anthropic.com", key, timeout)
    raise ConfigError(f"llm_provider must be '', 'openai' or 'anthropic', got {kind!r}")


# -- budget and breaker, shared by every process through the meta table --------------------------

class Guard:
    """Daily token budget plus circuit breaker. `conn` may be None (state kept in memory)."""

    def __init__(self, conn: Any, *, daily_tokens: int, failures: int = 3, cooldown_s: float = 300.0,
                 clock: Callable[[], float] = time.time):
        self.conn = conn
        self.daily_tokens = daily_tokens
        self.failures = failures
        self.cooldown_s = cooldown_s
        self.clock = clock
        self._mem: dict[str, str] = {}

    def _get(self, key: str) -> str | None:
        if self.conn is None:
            return self._mem.get(key)
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set(self, key: str, value: str) -> None:
        if self.conn is None:
            self._mem[key] = value
        else:
            self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def _day_key(self) -> str:
        return "llm_tokens:" + datetime.fromtimestamp(self.clock(), timezone.utc).strftime("%Y-%m-%d")

    def used_today(self) -> int:
        return int(self._get(self._day_key()) or 0)

    def check(self, estimate: int) -> None:
        state = json.loads(self._get("llm_breaker") or "{}")
        opened = state.get("opened_at")
        if opened is not None and self.clock() - opened < self.cooldown_s:
            wait = int(self.cooldown_s - (self.clock() - opened))
            raise BreakerOpen(f"LLM extraction paused after {state.get('failures')} failures in a row; "
                              f"it retries in {wait} s (heuristic extraction goes on)")
        if self.used_today() + estimate > self.daily_tokens:
            raise BudgetExceeded(f"today's LLM token budget ({self.daily_tokens}) would be exceeded "
                                 f"({self.used_today()} used, about {estimate} needed); raise "
                                 "llm_daily_token_budget or wait for tomorrow (UTC)")

    def record(self, tokens: int) -> None:
        self._set(self._day_key(), str(self.used_today() + max(0, tokens)))
        self._set("llm_breaker", "{}")

    def failed(self) -> None:
        state = json.loads(self._get("llm_breaker") or "{}")
        n = int(state.get("failures", 0)) + 1
        state = {"failures": n}
        if n >= self.failures:
            state["opened_at"] = self.clock()
        self._set("llm_breaker", json.dumps(state))


# -- the extraction call -----------------------------------------------------------------------

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


def _transcript_text(turns: Sequence[dict]) -> str:
    lines = []
    for t in turns:
        kind = t.get("kind")
        if kind == "text" and t.get("role") in ("user", "assistant"):
            lines.append(f"{t['role'].upper()}: {t.get('text', '')}")
        elif kind == "tool_error":
            lines.append(f"TOOL FAILED: {t.get('tool')} `{t.get('input')}`: {t.get('error')}")
    text = privacy.redact("\n".join(lines))
    return text[-MAX_PROMPT_CHARS:]


def validate(raw: str) -> list[dict]:
    """The memories of a model answer, or InvalidOutput naming the first problem."""
    s = raw.strip()
    if s.startswith("```"):  # a fenced answer is still an answer
        s = s.strip("`")
        s = s[s.find("{"):] if "{" in s else s
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
                for e in ents):
            raise InvalidOutput(f"{where}.entities must be a list of {{name, kind}} objects")
    return items


def llm_extract(turns: Sequence[dict], provider: Provider, guard: Guard, *, scope: str, model: str,
                max_tokens: int = 1024, session_id: str | None = None) -> list[Candidate]:
    """Memory candidates from the model, or LLMError (budget, breaker, endpoint, bad output)."""
    body = _transcript_text(turns)
    if not body.strip():
        return []
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": "The session:\n\n" + body}]
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
        c = Candidate(" ".join(m["content"].split()), layer=m["layer"], category=m.get("category") or "note",
                      importance=m.get("importance", 3), confidence=0.7, why="llm", scope=scope,
                      session_id=session, role="llm")
        if m.get("rationale"):
            c.metadata["rationale"] = m["rationale"]
        _finish(c, None, None)
        c.entities = list(dict.fromkeys([*c.entities, *((e["name"], e.get("kind", "thing")) for e in m.get("entities", []))]))
        c.subject = m.get("subject") or c.subject
        if m.get("attribute") and m.get("value"):
            c.attribute, c.value = m["attribute"], m["value"]
        c.why = "llm"
        c.metadata["why"] = "llm"
        c.metadata["extractor"] = "llm"
        out.append(c)
    return out
