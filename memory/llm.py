"""Optional LLM extraction: a provider protocol, two HTTP providers and the local `claude` CLI, a
budget and a breaker.

Off by default (`llm_provider` = ""). When on, the clean turns of a session (secrets redacted
first: this is the one place text may leave the machine, and only to the endpoint the user
configured) go to the model in one call, which answers with JSON memories. The answer is
validated against a schema and rejected whole when anything is wrong: never half-applied.

Cost control, because background extraction has burned users' quotas elsewhere: a daily token
budget (checked before the call, counted from the provider's usage after it) and a circuit
breaker (after `llm_breaker_failures` failures in a row, no calls for `llm_breaker_cooldown_s`).
Both are kept in the database's meta table, so short-lived hook processes share them.

The `claude-cli` provider uses what a Claude Code user already has: the installed, signed-in
`claude`, run headless (`claude -p`, JSON out, a small model by default) with no tools, no MCP
servers, no hooks, no CLAUDE.md and no saved session, in an empty folder, so that the run can
neither harvest itself nor be harvested; the child also gets CHILD_ENV, which MAPLE's hooks check
(hooks/common.py) in case a hook fires anyway.

Stdlib only (urllib, subprocess): a hook may run this.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
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


# Set for the `claude -p` child of the claude-cli provider: MAPLE's hooks do nothing when they see
# it (hooks/common.py), so the extraction run is never harvested, even where a Claude Code version
# ignores the flags that keep hooks out.
CHILD_ENV = "MAPLE_LLM_CHILD"

# What the Claude Code session that ran MAPLE's hook exports to it (seen with 2.1.332): they
# describe that session (its id, socket, project, entry point), not the child's, so the child
# does not inherit them. Everything else, sign-in and proxy settings among it, passes through.
SESSION_VARS = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_ENV_FILE",
    "CLAUDE_PID",
    "CLAUDE_EFFORT",
    "AI_AGENT",
)
SESSION_PREFIXES = ("CLAUDE_CODE_SESSION_", "CLAUDE_CODE_CHILD_", "CLAUDE_CODE_MESSAGING_")

# Settings for the child, given with --settings on top of the user's own (which keep sign-in
# helpers and proxy settings working). `"hooks": {}` would not do: 2.1.332 merges hooks from
# every source, and the user's (MAPLE's among them) still fired; disableAllHooks stops them.
CHILD_SETTINGS = {"disableAllHooks": True}


class ClaudeCLI:
    """The locally installed, signed-in `claude`, run headless once per call:

        claude -p --output-format json --model M --system-prompt S --tools "" --strict-mcp-config
               --mcp-config '{"mcpServers":{}}' --settings '{"disableAllHooks":true}'
               --disable-slash-commands --no-session-persistence   (the session on standard input)

    in a fresh empty folder. Tokens are what its JSON result's `usage` says (input, output and
    cache tokens). A run past `timeout` is killed with everything it started."""

    DEFAULT_MODEL = "haiku"  # Claude Code's alias for its small model

    def __init__(self, path: str, timeout: float = 60.0, env: dict[str, str] | None = None):
        self.path = path
        self.timeout = timeout
        self.env = env  # the environment to start from (None: this process's)

    def command(self, system: str, model: str) -> list[str]:
        cmd = [self.path, "-p", "--output-format", "json", "--model", model or self.DEFAULT_MODEL]
        if system:
            cmd += ["--system-prompt", system]
        return cmd + [
            "--tools",
            "",
            "--strict-mcp-config",
            "--mcp-config",
            '{"mcpServers":{}}',
            "--settings",
            json.dumps(CHILD_SETTINGS),
            "--disable-slash-commands",
            "--no-session-persistence",
        ]

    def environment(self, max_tokens: int) -> dict[str, str]:
        base = os.environ if self.env is None else self.env
        env = {k: v for k, v in base.items() if k not in SESSION_VARS and not k.startswith(SESSION_PREFIXES)}
        env.update(
            {
                CHILD_ENV: "1",
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
                "CLAUDE_CODE_MAX_RETRIES": "1",  # a failing endpoint fails the call (the breaker counts it)
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",  # the user's CLAUDE.md is not this call's business
                "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
                "CLAUDE_CODE_DISABLE_THINKING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "NO_COLOR": "1",
            }
        )
        return env

    def call(self, messages: list[dict], model: str, max_tokens: int) -> Reply:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        prompt = "\n\n".join(m["content"] for m in messages if m["role"] != "system")
        cmd = self.command(system, model)
        # The session goes on standard input, not the command line (which other users can read).
        with tempfile.TemporaryDirectory(prefix="maple-llm-") as cwd:
            try:
                proc = subprocess.Popen(  # noqa: S603 (the configured claude, no shell)
                    cmd,
                    cwd=cwd,
                    env=self.environment(max_tokens),
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,  # a timeout kills the whole group, and only it
                )
            except OSError as e:
                raise LLMError(f"cannot run {self.path}: {e.strerror}; check llm_claude_path or PATH") from e
            try:
                out, err = proc.communicate(prompt.encode("utf-8"), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                raise LLMError(
                    f"claude -p did not answer in {self.timeout:g} s; raise llm_timeout_s or check that "
                    "`claude -p hello` works"
                ) from None
        return _parse_claude_result(out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), proc.returncode)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.communicate()


def _parse_claude_result(out: str, err: str, code: int) -> Reply:
    """The answer text and its tokens from `claude -p --output-format json`; LLMError otherwise."""
    try:
        result = json.loads(out)
    except ValueError:
        detail = (err or out).strip()[-300:] or "no output"
        raise LLMError(f"claude -p exited {code} without a JSON result: {detail}") from None
    if not isinstance(result, dict):
        raise LLMError("claude -p answered JSON that is not its result object")
    if result.get("is_error") or result.get("subtype") not in (None, "success") or code != 0:
        detail = " ".join(str(result.get("result") or result.get("subtype") or err or "").split())[:300]
        raise LLMError(f"claude -p failed (exit {code}): {detail}; check that `claude -p hello` works (signed in?)")
    text = result.get("result")
    if not isinstance(text, str):
        raise LLMError("the claude -p result has no text 'result'")
    usage = result.get("usage") or {}
    tokens = sum(
        int(usage.get(k) or 0)
        for k in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return Reply(text, tokens)


def find_claude(configured: str = "", env: dict[str, str] | None = None) -> str:
    """The `claude` to run: `configured` (llm_claude_path) when set, else the one on PATH."""
    env = os.environ if env is None else env
    if configured:
        path = os.path.expanduser(configured)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ConfigError(f"llm_claude_path {configured!r} is not an executable file; fix it or leave it empty")
        return path
    found = shutil.which("claude", path=env.get("PATH"))
    if not found:
        raise ConfigError(
            "llm_provider 'claude-cli' needs Claude Code's `claude` command: it is not on PATH; "
            "set llm_claude_path to it, or set llm_provider to ''"
        )
    return found


def provider_from_config(config: Any, env: dict[str, str] | None = None) -> Provider | None:
    """The configured provider, or None when LLM extraction is off."""
    kind = getattr(config, "llm_provider", "")
    if not kind:
        return None
    child_env = env  # the claude-cli child starts from this environment (None: this process's)
    env = os.environ if env is None else env
    key_var = getattr(config, "llm_api_key_env", "")
    key = env.get(key_var) if key_var else None
    timeout = float(getattr(config, "llm_timeout_s", 30.0))
    if kind == "openai":
        if not config.llm_base_url:
            raise ConfigError("llm_provider 'openai' needs llm_base_url (e.g. http://localhost:11434/v1 for Ollama)")
        return OpenAICompatible(config.llm_base_url, key, timeout)
    if kind == "claude-cli":
        return ClaudeCLI(find_claude(getattr(config, "llm_claude_path", ""), env), timeout, child_env)
    if kind == "anthropic":
        if not key:
            raise ConfigError(
                f"llm_provider 'anthropic' needs an API key in the environment variable named by "
                f"llm_api_key_env (now {key_var!r})"
            )
        return AnthropicMessages(config.llm_base_url or "https://api.anthropic.com", key, timeout)
    raise ConfigError(f"llm_provider must be '', 'openai', 'anthropic' or 'claude-cli', got {kind!r}")


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
