"""Secret redaction, applied to every text before it is written anywhere.

`redact(text)` returns the text with secrets replaced by `[REDACTED:<kind>]` and `<private>…
</private>` spans removed whole. It runs before the database, the FTS index, the embedder, logs
and exports see the text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.S | re.I)

# (kind, pattern). Group 1, when present, is the secret; otherwise the whole match is.
_PATTERNS: list[tuple[str, str]] = [
    ("private-key", r"-----BEGIN (?:[A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9 ]+ )?PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("aws-access-key", r"\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b"),
    ("aws-secret", r"(?i)aws_?secret_?(?:access_?)?key\W{0,5}([A-Za-z0-9/+=]{40})\b"),
    ("github-token", r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b"),
    ("github-token", r"\b(github_pat_[A-Za-z0-9_]{22,255})\b"),
    ("gitlab-token", r"\b(glpat-[A-Za-z0-9_\-]{20,})\b"),
    ("slack-token", r"\b(xox[abposr]-[A-Za-z0-9-]{10,})\b"),
    ("slack-webhook", r"(https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+)"),
    ("stripe-key", r"\b((?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,})\b"),
    ("google-api-key", r"\b(AIza[0-9A-Za-z_\-]{35})\b"),
    ("anthropic-key", r"\b(sk-ant-[A-Za-z0-9_\-]{20,})"),
    ("openai-key", r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})"),
    ("npm-token", r"\b(npm_[A-Za-z0-9]{36})\b"),
    ("pypi-token", r"\b(pypi-[A-Za-z0-9_\-]{50,})"),
    ("jwt", r"\b(eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"),
    ("bearer-token", r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9_\-.=+/]{16,})"),
    ("basic-auth", r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/=]{8,})"),
    ("url-password", r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]+:([^\s@/]{1,256})@"),
    ("assignment", r"(?i)\b[A-Z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|pwd|credential|auth[_\-]?key|private[_\-]?key|access[_\-]?key)[A-Z0-9_\-]*\s*[:=]\s*[\"']?([^\s\"',;]{4,})"),
    ("password-phrase", r"(?i)\b(?:password|passwd|密码|口令)\s*(?:is|是|为|:|：)\s*[\"']?([^\s\"',;，。]{4,})"),
]
_COMPILED = [(kind, re.compile(p, re.S)) for kind, p in _PATTERNS]
_CANDIDATE = re.compile(r"[A-Za-z0-9_\-+/=.]{32,}")
_HEX = re.compile(r"^[0-9a-f]+$", re.I)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)


def _entropy(s: str) -> float:
    counts = Counter(s)
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A long token that is probably a secret, not a hash, id, path or word."""
    t = token.strip("=.-_/")
    if len(t) < 32 or _UUID.match(t) or _HEX.match(t):  # hashes, commit ids, UUIDs stay readable
        return False
    if "/" in t and not t.endswith("="):  # paths and URLs
        return False
    if t.startswith(("sha256-", "sha512-", "sha1-")):  # lockfile integrity hashes
        return False
    classes = sum(bool(re.search(p, t)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    return classes >= 3 and _entropy(t) >= 4.2


def redact(text: str, extra_patterns: list[str] | None = None) -> str:
    """`text` with secrets replaced by `[REDACTED:kind]` and <private> spans dropped."""
    if not text:
        return text
    text = PRIVATE.sub("", text)
    compiled = _COMPILED + [("custom", re.compile(p)) for p in (extra_patterns or [])]
    for kind, rx in compiled:
        text = rx.sub(lambda m, k=kind: _replace(m, k), text)
    return _CANDIDATE.sub(lambda m: "[REDACTED:high-entropy]" if _looks_random(m.group(0)) else m.group(0), text)


def _replace(m: re.Match, kind: str) -> str:
    if m.re.groups >= 1 and m.group(1) is not None:
        whole, secret = m.group(0), m.group(1)
        if secret.startswith("[REDACTED"):
            return whole
        start = m.start(1) - m.start(0)
        return whole[:start] + f"[REDACTED:{kind}]" + whole[start + len(secret):]
    return f"[REDACTED:{kind}]"
