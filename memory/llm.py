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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from memory.errors import ConfigError, MapleError


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
    req = urllib.request.Request(url, data=data, method="POST", headers={"content-type": "application/json", **headers})
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
        out = _post(
            self.url,
            {
                "model": model,
                "messages": messages,
                "max_tokens": max_tokens,
                "temperature": 0,
                "response_format": {"type": "json_object"},
            },
            headers,
            self.timeout,
        )
        try:
            text = out["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as e:
            raise LLMError("the chat completion has no choices[0].message.content") from e
        usage = out.get("usage") or {}
        tokens = usage.get("total_tokens") or (usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return Reply(text or "", int(tokens or 0))


class AnthropicMessages:
    """POST {base_url}/v1/messages: the Anthropic Messages API."""

    def __init__(
        self,
        base_url: str = "https://api.anthropic.com",
        api_key: str | None = None,
        timeout: float = 30.0,
        version: str = "2023-06-01",
    ):
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
            raise ConfigError(
                f"llm_provider 'anthropic' needs an API key in the environment variable named by "
                f"llm_api_key_env (now {key_var!r})"
            )
        return AnthropicMessages(config.llm_base_url or "https://api.anthropic.com", key, timeout)
    raise ConfigError(f"llm_provider must be '', 'openai' or 'anthropic', got {kind!r}")


# -- budget and breaker, shared by every process through the meta table --------------------------


class Guard:
    """Daily token budget plus circuit breaker. `conn` may be None (state kept in memory)."""

    def __init__(
        self,
        conn: Any,
        *,
        daily_tokens: int,
        failures: int = 3,
        cooldown_s: float = 300.0,
        clock: Callable[[], float] = time.time,
    ):
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
            raise BreakerOpen(
                f"LLM extraction paused after {state.get('failures')} failures in a row; "
                f"it retries in {wait} s (heuristic extraction goes on)"
            )
        if self.used_today() + estimate > self.daily_tokens:
            raise BudgetExceeded(
                f"today's LLM token budget ({self.daily_tokens}) would be exceeded "
                f"({self.used_today()} used, about {estimate} needed); raise "
                "llm_daily_token_budget or wait for tomorrow (UTC)"
            )

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
