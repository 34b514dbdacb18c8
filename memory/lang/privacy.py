"""Secret redaction, applied to every text before it is written anywhere.

`redact(text)` returns the text with secrets replaced by `[REDACTED:<kind>]` and `<private>…
</private>` spans removed whole. The store runs it on every field before the database, the FTS
index and the embedder see the text, so exports and recalled memories carry no secrets either;
`RedactingFilter` does the same for log records.

Three layers, from most to least certain:
1. Known shapes: private key blocks, provider tokens with fixed prefixes (AWS, GitHub, GitLab,
   Slack, Stripe, Google, OpenAI, Anthropic, ...), JWTs, passwords inside URLs.
2. Context: a value given to a name that says secret (`DB_PASSWORD=...`, `"api_key": "..."`,
   `token: ...`, `--password ...`, `Authorization: Bearer ...`, "my password is ...", 密码是...).
   Placeholders (`<your key>`, `${API_KEY}`, `$TOKEN`, `xxxx`) and code (`token = get_token()`,
   `f(api_key=api_key)`) stay readable: they are not secrets, and hiding them makes memories
   about configuration useless.
3. Shape alone: a long string that looks generated (letters mixed with digits, few word-like
   runs), but not hex (commit ids, hashes), UUIDs, lockfile integrity hashes or public keys.

Speed matters (extraction runs this on whole transcripts; ~10 MB/s on code, see
tests/benchmarks/bench_privacy.py). Each context pattern starts with a literal, so the regex
engine skips to candidates with a fast substring search, and a rule whose literal (its needle)
is not in the text at all is not run; case-insensitive rules match against one lower-cased copy
instead of using IGNORECASE (which disables that search); word boundaries are checked in Python
on the few candidates. Prefixed tokens and random-looking strings come
from one scan of long tokens. Every rule reports spans of the same text; overlapping spans are
merged (no piece of a secret survives) and the text is rebuilt once.
"""

from __future__ import annotations

import base64
import fnmatch
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.lang.text import redacted

PRIVATE = re.compile(r"<private\b[^>]*>.*?(?:</private\s*>|\Z)", re.S | re.I)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lower(text: str) -> str:
    """Lower-cased text with the same length, so offsets found in it are offsets in `text`."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)  # İ lowers to two chars


def _wordchar(c: str) -> bool:
    return c.isalnum() or c == "_"


# -- how a value looks --------------------------------------------------------------------------

# Values that stand for a secret without being one: template syntax, fill-me-in words, types,
# and the words of error messages ("invalid token: expired").
_PLACEHOLDER = re.compile(r"""(?ix)^(?:
    <[^<>]*> | \$\{[^}]*\}? | \$\{\{.*\}\}? | \$\(.*\)? | \$[A-Za-z_]\w* | %[A-Za-z_]\w*% | \{\{.*\}\}?
  | %\(\w+\)s | \[[A-Za-z_]+\] | \{[A-Za-z_]\w*\} | \w*\*{3,}\w* | [x•]{3,} | \.{3,} | … | [-_]+ | _+\w*_+
  | (?:your|insert|enter|replace|put|paste|add)[-_ ]?\w* | \w*[-_]here | change[-_]?me | replace[-_]?me
  | todo | tbd | fixme | redacted | \[redacted[^\]]*\]? | hidden | masked | secret | password | token
  | null | none | nil | undefined | true | false | yes | no | on | off | empty | required | optional
  | str | string | bytes | int | integer | bool | boolean | number | any | object | text | secretstr
  | expired | invalid | missing | revoked | rejected | denied | unauthorized | forbidden | incorrect | wrong
  | mismatch | malformed | unknown | unset | present | absent | valid | ok | not | see | below | above
)$""")
_ATTRIBUTE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")  # settings.API_KEY, os.environ
_IDENTIFIER = re.compile(r"^[A-Za-z_]+$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFERENCE = re.compile(r"^[A-Za-z_{(][\w.{}()]*$")
_CAMEL_HUMP = re.compile(r"[a-z][A-Z]")
_EXAMPLE = re.compile(
    r"(?i)^[a-z_\-]*(?:secret|token|pass(?:word|wd)?|api[-_]?key|example|dummy|sample|fake)[a-z_\-]*$"
)


def _placeholder(value: str) -> bool:
    if _PLACEHOLDER.match(value) or value.startswith("[REDACTED"):
        return True
    # An example value that names what it stands for: "my-secret", "test_token", "mytoken".
    return _EXAMPLE.match(value) is not None


def _code_like(value: str, after: str, literal: bool = False) -> bool:
    """The value is an expression in source code, not a literal: keep it readable.

    `literal`: the value stands where only a literal can (`PGPASSWORD=x psql`, `--password=x`),
    so a bare word is not a variable however it is spelt."""
    if after[:1] in ("(", "[", ".") or any(c in value for c in "()[]{}"):
        return True
    if _ATTRIBUTE.match(value) or value[:1] in "$!&*@" and _REFERENCE.match(value[1:]):
        return True  # settings.API_KEY, $password, !vault, &anchor, *alias
    if literal or _generated(value):
        return False
    if _IDENTIFIER.match(value):  # a variable: new_password, accessToken
        return "_" in value or bool(_CAMEL_HUMP.search(value))
    if _NAME.match(value) and ("_" in value or _CAMEL_HUMP.search(value)):  # PKCS7PrivateKeyTypes, user_2fa
        return _word_share(value) >= 0.5
    return False


def _generated(value: str) -> bool:
    """Digits scattered among mixed-case letters (o2det4eEvtrZ...): no one names a variable so."""
    mixed_case = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return len(_DIGIT_RUN.findall(value)) >= 2 and mixed_case or _random_letters(value)


def _random_letters(value: str) -> bool:
    """A generated value of letters only (QwXvbTrpLmZk...): its runs of letters do not read as words.

    Only a secret's name tells it from a word, so the callers look at it after such a name; the
    word test keeps names (AccessTokenProvider) and words (required, correcthorse) readable."""
    if len(value) < 12 or not value.isascii() or not value.isalpha():
        return False
    if value.islower() or value.isupper():
        return _word_share(value) < 0.34
    # Mixed case: a name's capitals start its words (XMLHttpRequest: 3 switches in 13 pairs); a
    # generated value changes case every other letter or so.
    switches = sum(a.isupper() != b.isupper() for a, b in zip(value, value[1:]))
    return switches >= 0.3 * (len(value) - 1)


_DIGIT_RUN = re.compile(r"(?<=[A-Za-z])\d+(?=[A-Za-z])")


def _strong(value: str) -> bool:
    """Looks like a secret even where prose could follow the keyword: letters with digits or symbols."""
    if len(value) < 6:
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(c in "!@#$%^&*+=/~?|<>" for c in value)
    mixed = bool(_CAMEL_HUMP.search(value[1:])) and not _IDENTIFIER.match(value)
    return has_alpha and (has_digit or has_symbol or mixed) or len(value) >= 24 or _random_letters(value)


def _prose(value: str) -> bool:
    """A quoted value that is a sentence (a validation message), not a passphrase."""
    return value.count(" ") >= 2 and len(re.findall(r"\b[a-z]{2,}\b", value)) >= 2


# -- rules: a regex that starts with a literal, and a check ------------------------------------

Check = Callable[[str, re.Match[str]], bool]  # (the secret, the match) -> redact it?


@dataclass(frozen=True)
class Rule:
    kind: str
    needle: str  # a literal piece of every match: text without it is not scanned (the tests prove each)
    regex: re.Pattern[str]
    lower: bool = False  # match against the lower-cased text (a case-insensitive rule)
    boundary: bool = False  # the match must not start inside a word
    grow_left: str = ""  # characters the secret also covers to the left of the match
    check: Check | None = None
    group: int | str | None = None  # the secret's group (default: 1 if the regex has groups, else 0)


def _r(kind: str, needle: str, pattern: str, **kw: object) -> Rule:
    return Rule(kind, needle, re.compile(pattern, re.S), **kw)  # type: ignore[arg-type]


def _has_digit_and_letter(value: str, m: re.Match[str]) -> bool:
    """An `sk-` key body has digits and letters, or letters no one would write (see
    _random_letters); `sk-learn-compatible-thing` has neither."""
    body = value.removeprefix("proj-").removeprefix("svcacct-").removeprefix("admin-")
    if any(c.isdigit() for c in value) and sum(c.isalpha() for c in value) > 3 or _random_letters(body):
        return True
    return len(body) >= 32 and body.isalpha() and not (body.islower() or body.isupper())  # no name is that long


def _wrapped_github(value: str, m: re.Match[str]) -> bool:
    """The two pieces make one token body of 36 characters (or more: a fine-grained one)."""
    body = "".join(value[4:].split())
    return len(body) >= 36 and any(c.isdigit() for c in body)


def _bot_id(value: str, m: re.Match[str]) -> bool:
    return value.index(":") >= 6


def _discord_token(value: str, m: re.Match[str]) -> bool:
    """Three generated parts, not three words joined by dots: digits among both cases, or few words."""
    body = value.replace(".", "")
    mixed = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return mixed and any(c.isdigit() for c in body) or _word_share(body) < 0.5


def _credential(value: str, m: re.Match[str]) -> bool:
    bare = value.strip("\"'`")  # -p"$MYSQL_ROOT_PASSWORD" is a reference, quoted
    return len(value) >= 3 and not _placeholder(bare) and not value.isdigit()


def _strong_value(value: str, m: re.Match[str]) -> bool:
    return _credential(value, m) and _strong(value)


def _header_value(value: str, m: re.Match[str]) -> bool:
    """An Authorization header's credential, not the code that reads one: `process.env.API_TOKEN` and
    `settings.TOKEN` name where the secret is (dotted names of words, no digit among them)."""
    named = _ATTRIBUTE.match(value) and not any(c.isdigit() for c in value)
    return _strong_value(value, m) and not (named and not any(map(_random_letters, value.split("."))))


def _url_token(value: str, m: re.Match[str]) -> bool:
    """A user-info that is key material (hex, or letters mixed with digits in one run), not a login
    such as deploy-bot-readonly-user."""
    return bool(re.fullmatch(r"[0-9a-fA-F]{20,}|(?=[^-_]*\d)(?=[^-_]*[A-Za-z])[A-Za-z0-9]{20,}", value))


def _flag_value(value: str, m: re.Match[str]) -> bool:
    if not _credential(value, m) or value.startswith("-"):
        return False
    if _code_like(value, m.string[m.end(1) : m.end(1) + 1], literal=True):
        return False
    return m.string[m.start(1) - 1] == "=" or _strong(value)


def _line_before(m: re.Match[str]) -> str:
    return m.string[m.string.rfind("\n", 0, m.start()) + 1 : m.start()]


def _pgpass_line(value: str, m: re.Match[str]) -> bool:
    """host:port:database:user:password, the host first on its line."""
    return re.fullmatch(r"[ \t]*[^\s:#]+", _line_before(m)) is not None and _strong_value(value, m)


def _redis_auth(value: str, m: re.Match[str]) -> bool:
    """AUTH [user] password, typed at a redis prompt (127.0.0.1:6379>) or alone on its line."""
    before = _line_before(m)
    return (before.strip() == "" or before.rstrip().endswith(">")) and _strong_value(value, m)


def _sql_password(value: str, m: re.Match[str]) -> bool:
    """ALTER USER x WITH [ENCRYPTED] PASSWORD 'value'."""
    before = m.string[max(0, m.start() - 20) : m.start()].lower()
    return re.search(r"\bwith[ \t]+(?:encrypted[ \t]+)?$", before) is not None and _credential(value, m)


def _login_pair(value: str, m: re.Match[str]) -> bool:
    value = value.rstrip(".,;:!?)\"'`”」』")
    return _credential(value, m) and _strong(value) and not _code_like(value, "") and "://" not in m.group()


def _registry_login(value: str, m: re.Match[str]) -> bool:
    before = m.string[max(0, m.start() - 24) : m.start()]
    return bool(re.search(r"(?:docker|podman|helm|registry|nerdctl|buildah|az)\s+$", before)) and _credential(value, m)


# Tokens with a known prefix: (kind, prefixes, the pattern after the prefix); the secret is
# prefix + body. They are found by the long-token scan (one regex pass for all of them), so
# each prefix costs a startswith on the few long tokens instead of a pass over the text.
_PREFIXED: list[tuple[str, tuple[str, ...], str]] = [
    ("aws-access-key", ("AKIA", "ASIA", "ABIA", "ACCA"), r"[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9]{30,255}(?![A-Za-z0-9])"),
    ("github-token", ("github_pat_",), r"[A-Za-z0-9_]{30,255}"),
    (
        "gitlab-token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "glsoat-", "glffct-"),
        r"[A-Za-z0-9_\-]{20,}",
    ),
    (
        "slack-token",
        ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"),
        r"(?:[A-Za-z0-9]+-)*[A-Za-z0-9]{6,}",
    ),
    ("stripe-key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "pk_live_", "pk_test_"), r"[A-Za-z0-9]{16,}"),
    ("stripe-key", ("whsec_",), r"[A-Za-z0-9+/=]{20,}"),
    ("google-api-key", ("AIza",), r"[0-9A-Za-z_\-]{35}"),
    ("google-oauth", ("GOCSPX-",), r"[A-Za-z0-9_\-]{20,}"),
    ("google-oauth", ("1//0",), r"[0-9A-Za-z_\-]{30,}"),
    ("anthropic-key", ("sk-ant-",), r"[A-Za-z0-9_\-]{20,}"),
    ("npm-token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
    ("pypi-token", ("pypi-AgE",), r"[A-Za-z0-9_\-]{40,}"),
    ("huggingface-token", ("hf_",), r"[A-Za-z]{30,40}(?![A-Za-z0-9])"),
    ("twilio-key", ("SK",), r"[0-9a-fA-F]{32}(?![A-Za-z0-9])"),
    ("mailgun-key", ("key-",), r"[0-9a-f]{32}(?![A-Za-z0-9])"),
    ("digitalocean-token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}"),
    ("shopify-token", ("shpat_", "shpss_", "shpca_", "shppa_"), r"[a-fA-F0-9]{32}"),
    ("databricks-token", ("dapi",), r"[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"),
    ("age-secret-key", ("AGE-SECRET-KEY-1",), r"[0-9A-Z]{50,}"),
    ("dingtalk-secret", ("SEC",), r"[0-9a-f]{64}(?![A-Za-z0-9])"),  # a DingTalk robot's signing secret
    ("aliyun-access-key", ("LTAI",), r"[A-Za-z0-9]{12,28}(?![A-Za-z0-9])"),
    ("notion-token", ("secret_",), r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    # LaunchDarkly's SDK, mobile and API keys: a prefix and a UUID
    (
        "launchdarkly-key",
        ("sdk-", "mob-", "api-"),
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![A-Za-z0-9])",
    ),
    (
        "api-token",
        (
            "lin_api_",
            "ntn_",
            "figd_",
            "PMAK-",
            "ATATT3",
            "glsa_",
            "glc_",
            "sntrys_",
            "pscale_tkn_",
            "pscale_pw_",
            "pscale_oauth_",
            "sbp_",
            "NRAK-",
            "rnd_",
            "fo1_",
        ),
        r"[A-Za-z0-9_\-]{20,}",
    ),
]

_TOKEN_RULES: list[tuple[str, str, re.Pattern[str], Check | None]] = sorted(
    [
        (prefix, kind, re.compile(re.escape(prefix) + body), None)
        for kind, prefixes, body in _PREFIXED
        for prefix in prefixes
    ]
    # OpenAI-style keys: any `sk-` and a long body with digits (sk-ant- is longer, so it is tried first).
    + [
        (
            "sk-",
            "openai-key",
            re.compile(r"sk-((?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,})"),
            _has_digit_and_letter,
        )
    ],
    key=lambda r: -len(r[0]),
)
_TOKEN_PREFIXES = tuple(r[0] for r in _TOKEN_RULES)

_PEM_LINE = r"(?:[A-Za-z0-9+/=]{16,}|(?:Proc-Type|DEK-Info|Comment|Version):[^\n\\]*)"
_KNOWN: list[Rule] = [
    # A private key block's body, up to its END line (the BEGIN and END lines stay: they say what
    # was there); if the END is missing, the base64 lines that follow.
    _r(
        "private-key",
        "-----BEGIN ",
        r"-----BEGIN (?P<type>(?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----(?:\\n|\s)*"
        r"(?P<body>[A-Za-z0-9+/=\s\\:,.\-]{1,16000}?(?=(?:\\n|\s)*-----END (?P=type)PRIVATE KEY(?: BLOCK)?-----)"
        rf"|{_PEM_LINE}(?:(?:\\n|\s)+{_PEM_LINE})*)",
        group="body",
    ),
    # Known prefixes whose tokens hold a dot, which the long-token scan splits on.
    _r("google-oauth", "ya29.", r"ya29\.[0-9A-Za-z_\-]{20,}", boundary=True),
    _r("sendgrid-key", "SG.", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}", boundary=True),
    _r("vault-token", "hv", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", boundary=True),
    _r("api-token", "dp.", r"dp\.(?:st|pt|sa)\.[A-Za-z0-9_\-]{20,}", boundary=True),
    _r("jwt", "eyJ", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", boundary=True),
    _r(
        "slack-webhook", "hooks.slack.com/", r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_\-]{16,})"
    ),
    # Discord bot tokens: the user id in base64 (M, N or O first), a 6-character timestamp, an HMAC.
    # The dots split it for the long-token scan, and it may hold no digit at all.
    _r(
        "discord-token",
        ".",
        r"(?<![\w\-.])[MNO][A-Za-z0-9_\-]{22,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}(?![\w\-])",
        check=_discord_token,
    ),
    _r("discord-webhook", ".com/api/webhooks/", r"\.com/api/webhooks/(\d+/[A-Za-z0-9_\-]{30,})"),
    # Feishu / Lark custom bots: the hook URL's last segment is the whole credential.
    _r("feishu-webhook", "/bot/v2/hook/", r"/open-apis/bot/v2/hook/([A-Za-z0-9_\-]{16,})"),
    _r("dingtalk-webhook", "/robot/send?", r"/robot/send\?(?:[^\s#\"'<>]*&)?access_token=([A-Za-z0-9_\-]{16,})"),
    _r("wecom-webhook", "/webhook/send?", r"/webhook/send\?(?:[^\s#\"'<>]*&)?key=([A-Za-z0-9_\-]{16,})"),
    _r("telegram-token", ":AA", r":AA[A-Za-z0-9_\-]{33}", grow_left="0123456789", check=_bot_id),
    # Tencent Cloud SecretId (an AWS-style key id: scanners treat it as part of the credential)
    _r("tencent-secret-id", "AKID", r"AKID[A-Za-z0-9]{28,36}(?![A-Za-z0-9])", boundary=True),
    # An AK/SK pair's secret half, as Chinese cloud consoles name it: "SK：...", "SK=..."
    _r("secret", "SK", r"SK[ \t]*[:：=][ \t]*[\"']?([A-Za-z0-9/+]{20,}={0,2})", boundary=True, check=_strong_value),
    # A Twilio auth token given with its account SID: Client("AC...", "..."), AC...:token
    _r("twilio-token", "AC", r"AC[0-9a-f]{32}[\"']?[ \t]*[,:][ \t]*[\"']?([0-9a-f]{32})(?![0-9A-Za-z])", boundary=True),
    # A forge token the terminal wrapped: its prefix and the start of its body at the end of one
    # line, the rest on the next (ghp_ bodies are 36 characters).
    _r(
        "github-token",
        "gh",
        r"gh[pousr]_[A-Za-z0-9]{6,35}[ \t]*\r?\n[ \t]*[A-Za-z0-9]{1,30}(?![A-Za-z0-9])",
        boundary=True,
        check=_wrapped_github,
    ),
]

_CONTEXT: list[Rule] = [
    # scheme://user:password@host, including redis://:password@host; a password may hold "@" unescaped
    # (redis://:Rk3@pZ8!wq@host:6379): it runs to the last "@" before the host
    _r(
        "url-password",
        "://",
        r"://[^\s:/@\"'<>]*:([^\s/\"'<>]+)@(?=[^\s@/\"'<>]*(?:[:/?#\s\"'<>,;]|$))",
        check=_credential,
    ),
    # a key alone in a URL's user-info: a Sentry DSN, https://<32 hex>@o123.ingest.sentry.io/45
    _r("url-token", "://", r"://([A-Za-z0-9_\-]{16,})@", check=_url_token),
    _r(
        "bearer-token",
        "authorization",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"'`]?"
        r"(?:(?:bearer|token|basic|bot|apikey|sso-key|key)\s+)?([a-z0-9_\-.~+/]{8,}=*)",
        lower=True,
        check=_header_value,
    ),
    _r("bearer-token", "bearer", r"bearer\s+([a-z0-9_\-.~+/]{12,}=*)", lower=True, boundary=True, check=_header_value),
    _r(
        "url-signature",
        "=",
        r"[?&][a-z_\-]*?(?:sig|signature|credential|key)=([^&\s#\"'<>]{8,})",
        lower=True,
        check=_strong_value,
    ),
    # Go's MySQL driver: user:password@tcp(host:3306)/db (also unix(...), udp(...)).
    _r("password", "@", r":(?!//)([^\s\"'<>]+?)@(?:tcp|udp|unix)[46]?\(", check=_credential),
    # Oracle thin JDBC: jdbc:oracle:thin:user/password@//host:1521/SVC
    _r("password", "thin:", r"thin:[^\s/@:\"']+/([^\s@\"']+)@", check=_credential),
    # redis-cli -a PASSWORD, redis-server --requirepass PASSWORD, AUTH PASSWORD at a redis prompt
    _r("password", "redis-cli", r"redis-cli\b[^\n|;&]*?\s(?:-a|--pass)[ \t]+[\"']?([^\s\"']+)", check=_credential),
    # -a PASSWORD cut from its redis-cli (a line wrapped, a window of a command) still has company
    _r(
        "password",
        "-a",
        r"-a[ \t]+[\"']?([^\s\"'\-][^\s\"']*)(?=[^\n]*--no-auth-warning)",
        boundary=True,
        check=_credential,
    ),
    _r(
        "password",
        "--no-auth-warning",
        r"--no-auth-warning[^\n]*?\s-a[ \t]+[\"']?([^\s\"'\-][^\s\"']*)",
        check=_credential,
    ),
    *(
        _r("password", word, rf"{word}[ \t=]+[\"']?([^\s\"']+)", lower=True, check=_credential)
        for word in ("requirepass", "masterauth")
    ),
    _r("password", "AUTH", r"AUTH[ \t]+(?:[^\s\"']+[ \t]+)?([^\s\"']+)[ \t]*(?=\r?\n|$)", check=_redis_auth),
    # SQL: CREATE USER .. IDENTIFIED BY 'x', ALTER USER .. WITH PASSWORD 'x'
    _r(
        "password",
        "identified",
        r"identified(?:[ \t]+with[ \t]+\w+)?[ \t]+by[ \t]+(?:password[ \t]+)?'([^'\n]{3,})'",
        lower=True,
        check=_credential,
    ),
    _r("password", "password", r"password[ \t]+'([^'\n]{3,})'", lower=True, check=_sql_password),
    # echo "x" | docker login --password-stdin: the echoed value is the password
    *(
        _r(
            "password",
            "--password-stdin",
            rf"{word}[ \t]+(?:-n[ \t]+|'%s'[ \t]+)?[\"']?([^\s\"'|$][^\s\"'|]*)[\"']?[ \t]*\|[^\n]*?--password-stdin",
            boundary=True,
            check=_credential,
        )
        for word in ("echo", "printf")
    ),
    # A login pair after a word that says so: "creds are admin:X", "login: ops / X", 测试账号 test01/X
    *(
        _r(
            "password",
            needle,
            rf"{needle}[a-z]{{0,12}}(?:[ \t]+(?:are|is))?(?:[ \t]*[:=：][ \t]*|[ \t]+)[^\s:/?&=]{{2,40}}"
            r"[ \t]*[:/][ \t]*([^\s/][^\s]{5,})",
            lower=True,
            boundary=needle.isascii(),  # 测试账号: no word boundary in Chinese
            check=_login_pair,
        )
        for needle in ("cred", "login", "账号", "帐号", "账户")
    ),
    # .pgpass lines: host:port:database:user:password (the host is checked, the match starts at a literal)
    _r("password", ":", r":(?:\d{2,5}|\*):[^\s:]+:[^\s:]+:([^\s]+)[ \t]*(?=\r?\n|$)", check=_pgpass_line),
    # curl -u user:password, mysql -pPASSWORD, sshpass -p, docker login -p, .netrc, --password x
    _r("password", "-u", r"-u[ \t=]+[\"']?[^\s:\"'$]+:([^\s\"'@]+)", boundary=True, check=_credential),
    _r(
        "password",
        "-u",
        r"-u[ \t=]+[^\s:\"'$]+:(?P<q>[\"'])(?P<v>[^\"'\n]+)(?P=q)",
        boundary=True,
        check=_credential,
        group="v",
    ),
    _r("password", "--user", r"--user[ \t=]+[\"']?[^\s:\"'$]+:([^\s\"'@]+)", check=_credential),
    _r(
        "password", "mysql", r"mysql(?:dump|admin|sh)?\b[^\n|;&]*?\s-p([^\s\-][^\s]*)", boundary=True, check=_credential
    ),
    _r("password", "sshpass", r"sshpass\s+-p\s*[\"']?([^\s\"']+)", check=_credential),
    _r("password", "login", r"login\b[^\n|;&]*?\s-p\s+[\"']?([^\s\-\"'][^\s\"']*)", check=_registry_login),
    _r("password", "login", r"login\s+\S+\s+password\s+(\S+)", lower=True, check=_credential),
    # an HTML form's password field with its value filled in
    _r(
        "password",
        "password",
        r"type=[\"']?password[\"']?[^<>]*?\bvalue=[\"']([^\"'<>]{3,})[\"']",
        lower=True,
        check=_credential,
    ),
    # "the secret is below", then the value alone on a later line
    _r(
        "secret",
        "below",
        r"(?:password|passphrase|secret|token|key)[^\n]{0,24}\bbelow[ \t]*[:.]?[ \t]*\r?\n(?:[ \t]*\r?\n){0,2}"
        r"[ \t]*([^\s]{8,})[ \t]*(?=\r?\n|$)",
        lower=True,
        check=_strong_value,
    ),
    # a key sent in parts: "part 1: X ... part 2: Y", 前半段 X 后半段 Y
    _r(
        "secret", "part", r"\bpart[ \t]*(?:[1-4]|one|two)[ \t]*[:：][ \t]*([^\s]{12,})", lower=True, check=_strong_value
    ),
    _r("secret", "半段", r"半段[ \t]*[:：]?[ \t]*([\x21-\x7e]{12,})", check=_strong_value),
    # session cookies: sessionid=, PHPSESSID=, _app_session=, connect.sid=s%3A...
    _r("session-cookie", "sess", r"sess(?:ion)?(?:_?id)?=([^;\s\"'&]{16,})", lower=True, check=_strong_value),
    _r("session-cookie", ".sid=", r"\.sid=([^;\s\"'&]{16,})", lower=True, check=_strong_value),
    _r(
        "secret",
        "--",
        r"--(?:password|passwd|pass|pwd|token|api[-_]?key|access[-_]?key(?:[-_]secret)?|key[-_]secret|secret(?:[-_]key)?"
        r"|client[-_]secret|auth[-_]token|access[-_]token)(?:=|[ \t]+)[\"']?([^\s\"']{3,})",
        lower=True,
        check=_flag_value,
    ),
]


Span = tuple[int, int, str, int]  # start, end, kind, priority (lower wins the label when spans overlap)


def _rule_spans(rule: Rule, text: str, low: str, priority: int) -> list[Span]:
    subject = low if rule.lower else text
    spans = []
    group = rule.group if rule.group is not None else (1 if rule.regex.groups else 0)
    for m in rule.regex.finditer(subject):
        if rule.boundary and m.start() > 0 and _wordchar(text[m.start() - 1]):
            continue
        start, end = m.span(group)
        if start == end:
            continue
        while rule.grow_left and start > 0 and text[start - 1] in rule.grow_left:
            start -= 1
        value = text[start:end]
        if value.startswith("[REDACTED") or (rule.check is not None and not rule.check(value, m)):
            continue
        spans.append((start, end, rule.kind, priority))
    return spans


# -- keywords: `name = value` and "the password is value" --------------------------------------

# Every occurrence of a secret word, found in the lower-cased text; each is then checked in Python.
_KEYWORD = re.compile(
    r"password|passphrase|passwd|pass|pwd|pw|secret|token|credentials|credential|key|auth|sas"
    r"|密码|口令|令牌|密钥|秘钥|私钥"
)
_SHORT_WORDS = frozenset(("pass", "pwd", "pw", "auth", "sas"))  # need a word boundary on the left
_KEY_PREFIX = re.compile(
    r"(?:api|access|secret|private|signing|encryption|master|account|client|auth|app|license"
    r"|service|storage|subscription|admin|hmac|webhook|session|jwt|csrf|cookie|cipher|shared|encrypt)[_.\- ]?$"
)
# What may follow the word for the name to still be a secret's: DB_PASSWORD_PROD, TOKEN2.
# max_tokens, tokenizer, password_reset_url, secretKeyRef and token_type are other things.
_ASSIGN_TAIL = re.compile(
    r"(?:[_.\-]?(?:key|base|value|b64|base64|prod|dev|staging|test|live|\d+))*(?![a-z0-9])"
    r"(?P<kq>(?:[\"']\]?)?)[ \t]*(?P<op>:=|=>|=|:|：|,)[ \t]*"
    r"(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|`(?P<bq>[^`\n]*)`|[“「『](?P<cq>[^”」』\n]*)[”」』]|(?P<bare>[^\s\"'`,;&<>()\[\]{}\u0080-\uffff]+))"
)
_KEY_ID = re.compile(r"[_.\-]?id(?![a-z])")
_ID_OF_A_KEY = re.compile(r"(?=[^\d]*\d)(?=[\W\d_]*[A-Za-z])[A-Za-z0-9]{16,}")
_PHRASE_TAIL = re.compile(
    r"[ \t]+(?:(?P<op>is(?:[ \t]+now|[ \t]+set[ \t]+to)?|was|has[ \t]+been[ \t]+set[ \t]+to|set[ \t]+to"
    r"|changed[ \t]+to|to|=|:|-|->)[ \t]+)?"
    r"(?P<q>[\"'`“「『]?)(?P<value>[\x21-\x7e]{4,})"
)
_ZH_PHRASE_TAIL = re.compile(
    r"[ \t]*(?:(?P<op>(?:是|为|设置为|设为|改成|改为|换成)[ \t]*[：:]?|：|:|=)[ \t]*)?"
    r"(?P<q>[\"'`“「『]?)(?P<value>(?:(?![\"'`])[\x21-\x7e]){3,})"
)
_HTML_END = re.compile(r"&(?:quot|apos|lt|gt|amp|#\d+);|[\"<>]")  # where an unquoted value surely ends
_ZH_OPS_FOR_ENGLISH = frozenset(("是", "为", "设置为", "设为", "改成", "改为", "换成"))
_PHRASE_WORDS = frozenset(
    (
        "password",
        "passphrase",
        "passwd",
        "pass",
        "pwd",
        "pw",
        "token",
        "secret",
        "credentials",
        "credential",
        "key",
        "密码",
        "口令",
        "令牌",
        "密钥",
        "秘钥",
        "私钥",
    )
)
_NO_OP_WORDS = frozenset(("password", "passphrase", "passwd", "密码", "口令"))
_MATERIAL_WORDS = frozenset(("secret", "token", "key", "令牌", "密钥", "秘钥", "私钥"))  # then 32 hex or random
_SETTER = re.compile(r"(?:define|setenv|putenv|setdefault|set_secret|setSecret)\s*\(\s*[\"']?[\w.\-]*$")
_EOL_TAIL = re.compile(r"[ \t]*[,;]?[ \t]*(?:(?:#|//).*)?(?:\r?\n|\Z)")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _kind_of(word: str) -> str:
    if word.startswith(("pass", "pwd")) or word in ("密码", "口令"):
        return "password"
    if word in ("token", "令牌"):
        return "token"
    if word in ("key", "密钥", "秘钥", "私钥"):
        return "api-key"
    return "secret"


def _keyword_spans(text: str, low: str) -> list[Span]:
    spans: list[Span] = []
    for m in _KEYWORD.finditer(low):
        word, start, end = m.group(), m.start(), m.end()
        prev = text[start - 1] if start else " "
        if word == "key":
            prefix = _KEY_PREFIX.search(low, max(0, start - 14), start)
            if prefix is None:
                # SERVICE_BUS_KEY = "...": an environment variable's key is a secret when its value looks like one
                span = _upper_key(text, low, start, end) or _bare_key(text, low, start, end)
                if span is not None:
                    spans.append((*span, 1))
                continue  # a bare "key" is a dict key, a sort key, a primary key
            start = prefix.start()
        elif word in _SHORT_WORDS and prev.isalnum() and not (prev.islower() and text[start].isupper()):
            continue  # bypass, compass, oauth, canvas; but dbPass is a name
        span = _assignment(text, low, word, start, end) or _next_line(text, low, word, end)
        if span is None and word in _PHRASE_WORDS:
            named = word == "key"  # reached here with a prefix: "signing key", "Encrypt Key"
            span = _phrase(text, low, word, start, end, named) or _phrase_for(text, low, word, start, end)
        if span is not None:
            spans.append((*span, 1))
    return spans


def _upper_key(text: str, low: str, start: int, end: int) -> tuple[int, int, str] | None:
    if start < 2 or text[start - 1] != "_" or not text[start - 2].isupper() or not text[start:end].isupper():
        return None
    span = _assignment(text, low, "key", start, end)
    return span if span is not None and _strong(text[span[0] : span[1]]) else None


# A 128-bit key or longer written as hex: what an HMAC, AES or signing key looks like when pasted.
_KEY_MATERIAL = re.compile(r"(?:0x)?[0-9a-fA-F]{32,}")
# A value right after a colon: "这个 key：8f2c…", "key: 8f2c…"
_KEY_COLON = re.compile(r"[ \t]*[:：][ \t]*([\x21-\x7e]{20,}?)(?=[\s。，,;；)）]|[.!?](?:\s|$)|$)")


def _bare_key(text: str, low: str, start: int, end: int) -> tuple[int, int, str] | None:
    """ "Staging key is 4478…", "key: 9f2c…", "key 是 …": a bare "key" is a dict key, a sort key or
    a primary key far more often than a secret, so its value counts only when it is key material
    (32 or more hex digits) or a generated string, never a word or a name."""
    span = _phrase(text, low, "key", start, end)
    if span is None and not low[max(0, start - 8) : start].rstrip(" _-").endswith("public"):
        # "这个 key：8f2c…", "key: 8f2c…": a colon right after the word (a public key is no secret)
        m = _KEY_COLON.match(text, end)
        span = (m.start(1), m.end(1), "api-key") if m else None
    if span is None:
        return None
    value = text[span[0] : span[1]].strip("`'\"").rstrip(".,;:，。；")
    # (a UUID said to be a key is one: Heroku's API keys, and many vendors' SDK keys, are UUIDs)
    return span if _KEY_MATERIAL.fullmatch(value) or _looks_random(value) or _KEY_UUID.fullmatch(value) else None


_KEY_UUID = re.compile(
    r"(?:[a-z]{2,5}[-_])?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def _assignment(text: str, low: str, word: str, start: int, end: int) -> tuple[int, int, str] | None:
    """The value of `name <op> value` when it is a literal that could be a secret."""
    # (an access key's id only: a service account's private_key_id names which key, beside the key itself)
    kid = _KEY_ID.match(low, end) if word == "key" and "access" in low[start:end] else None
    if kid:
        end = kid.end()  # R2_ACCESS_KEY_ID=2f9d…, private_key_id: a key's id is handed over with the key
    m = _ASSIGN_TAIL.match(low, end)
    if m is None:
        return None
    name_start = start
    while name_start > 0 and (text[name_start - 1].isalnum() or text[name_start - 1] in "_.-"):
        name_start -= 1
    name = text[name_start : m.start("kq")]
    if text[name_start - 1 : name_start] in ("$", "{") or name.lower() == "pwd":
        return None  # $PASSWORD: and ${TOKEN}: are references; PWD is the working directory
    if "public" in name.lower():
        return None  # publicKeyToken, public_key: public by definition
    if text[max(0, name_start - 3) : name_start] == "://":
        return None  # https://x-access-token:SECRET@host: the url-password rule takes the secret
    op, quoted_key = m.group("op"), m.group("kq") != ""
    if op == "," and not (quoted_key and _SETTER.search(text, max(0, name_start - 24), name_start)):
        return None  # ("password", "email") is a tuple of names; define('DB_PASSWORD', '...') is not
    for group in ("dq", "sq", "bq", "cq"):
        if m.group(group) is not None:
            vstart, vend = m.span(group)
            value = text[vstart:vend]
            spaced = _spaced_secret(value, 0) == len(value)
            if not value.strip() or _placeholder(value.strip()) or _prose(value) and not spaced:
                return None
            if value.startswith("-----BEGIN"):
                return None  # (a key block has its own rule, which keeps the BEGIN/END lines)
            if word == "auth" and not _strong(value):
                return None  # "serverAuth", "basic", "oauth2": auth names a scheme more often than a secret
            break
    else:
        vstart, vend = m.span("bare")
        spaced = _spaced_secret(text, vstart)
        if spaced is not None:  # passphrase: ember indigo goblet cobalt 61
            return vstart, spaced, _kind_of(word)
        value = text[vstart:vend].rstrip(".:")  # a sentence's full stop is not part of the value
        vend = vstart + len(value)
        # What follows the value is judged after that full stop: "password=X." ends a sentence, it
        # is not an attribute access (X.y) and it can still end the line.
        after = m.end("bare")
        # In the shell (`NAME=value cmd`, `export NAME=value`) a bare word is a literal.
        shell = op == "=" and name.isupper() and text[m.start("op") - 1 : m.start("op")] != " "
        if (
            _placeholder(value)
            or _code_like(value, text[after : after + 1], literal=shell)
            or value.lower() in (word, name.lower())
        ):
            return None  # auth=auth, token=token: a variable passed on
        if value.isdigit() and len(value) < 6:
            return None  # token=772, password_length: 12
        spaced = text[m.start("op") - 1 : m.start("op")].isspace() or quoted_key
        env_style = (op == "=" and not spaced) or name.isupper() or _CJK.search(word) is not None
        if not env_style:  # `password: ...` and `token = ...` may be prose, code or YAML: be surer
            if op != ":" and _IDENTIFIER.match(value) and not _random_letters(value):
                return None  # `username, password = auth`: a variable in code
            at_eol = _EOL_TAIL.match(text, after) is not None
            if not ((at_eol and len(value) >= 4 and not value.isdigit()) or _strong(value)):
                return None
        vend = _past_separators(text, vend)
    if len(value) < 3 or kid and not _ID_OF_A_KEY.fullmatch(value.strip()):
        return None  # (KMS_KEY_ID=alias/prod-key names a key; 2f9d7c41a8e3b650c1d4 is one's id)
    return vstart, vend, _kind_of(word)


_BARE_MORE = re.compile(r"[^\s\"'`,;&<>()\[\]{}\u0080-\uffff]+")
_NEXT_PARAM = re.compile(r"[ \t]*[A-Za-z_][\w.\- ]{0,40}=|(?:amp|quot|lt|gt|apos|#\d+);")


def _past_separators(text: str, vend: int) -> int:
    """Where a bare value really ends: `Tr0ub4dor&3xyz` and `pa;ss` go on past the & or ;, which
    end a value only when the next name=value (a query string, a connection string) follows."""
    while vend < len(text) and text[vend] in "&;":
        more = _BARE_MORE.match(text, vend + 1)
        if more is None or _NEXT_PARAM.match(text, vend + 1):
            break
        vend = more.end()
    return vend


# `password:` / `password =` with the value alone on the next line: YAML, INI continuations, chat.
_NEXT_LINE = re.compile(
    r"(?:[_.\-]?(?:key|value|prod|dev|\d+))*[\"']?[ \t]*(?:[:=]|：)?[ \t]*(?:[|>][-+]?)?[ \t]*\r?\n"
    r"[ \t]*(?P<value>\S+)[ \t]*(?=\r?\n|\Z)"
)


def _next_line(text: str, low: str, word: str, end: int) -> tuple[int, int, str] | None:
    m = _NEXT_LINE.match(low, end)
    if m is None:
        return None
    vstart, vend = m.span("value")
    value = text[vstart:vend]
    if value[0] in "-#[{(`'\"|>/~.*&!" or value.endswith(":") or _placeholder(value) or _code_like(value, ""):
        return None  # a list item, a comment, a nested key, a path, a reference
    if len(value) < 6 or not (_strong(value) or _complex(value)):
        return None
    return vstart, vend, _kind_of(word)


_PHRASE_FOR = re.compile(
    r"[ \t]+(?:for|of|on)[ \t]+[^\n:=：.!?]{1,40}?(?:[ \t]+(?:is|was)|[ \t]*[:=：])[ \t]+"
    r"(?P<q>[\"'`“]?)(?P<value>[\x21-\x7e]{4,})"
)
# Values that are secrets whatever words surround them: a Google app password (four groups of four
# letters) and a diceware passphrase (four or more words, then a number).
_SPACED_SECRET = re.compile(r"[a-z]{4}(?: [a-z]{4}){3}(?![\w])|(?:[a-z]{3,9}[ \-]){3,7}[a-z]{3,9}[ \-]\d{1,4}(?![\w])")
_STOPWORDS = frozenset(
    "the and not you for are was is in on of to it be we our your this that with from set by at as or no "
    "now then when will can has have had its all any new old one two per via into stored kept here there".split()
)


def _spaced_secret(text: str, vstart: int) -> int | None:
    """The end of a spaced passphrase starting at `vstart`, if one does."""
    m = _SPACED_SECRET.match(text, vstart)
    if m is None or any(w in _STOPWORDS for w in re.split(r"[ \-]", m.group())):
        return None
    return m.end()


def _phrase_for(text: str, low: str, word: str, start: int, end: int) -> tuple[int, int, str] | None:
    """ "the password for the admin panel is X", "Password for the staging box: X"."""
    if start and _wordchar(text[start - 1]):
        return None
    m = _PHRASE_FOR.match(low, end)
    if m is None:
        return None
    vstart = m.start("value")
    spaced = _spaced_secret(text, vstart)
    if spaced is not None:
        return vstart, spaced, _kind_of(word)
    value = _HTML_END.split(text[vstart : m.end("value")], 1)[0].rstrip(".,;:!?)\"'`”」』")
    if not value or _placeholder(value) or not _strong(value) or _code_like(value.strip("`'\""), ""):
        return None
    return vstart, vstart + len(value), _kind_of(word)


_ENV_PREFIX = re.compile(r"(?<![\w])[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*$")  # MATCH_, DB_ADMIN_ before PASSWORD


def _phrase(text: str, low: str, word: str, start: int, end: int, named: bool = False) -> tuple[int, int, str] | None:
    """ "my password is X", "the token was X", 密码是X, 令牌：X, token 是 X. `named`: the word is a
    secret's full name ("Encrypt Key", "signing key"), so a value may follow it with no operator."""
    zh = _CJK.search(word) is not None
    m = _ZH_PHRASE_TAIL.match(low, end)
    if m is not None and (zh or (m.group("op") or "").rstrip(" \t：:") in _ZH_OPS_FOR_ENGLISH):
        trusted = True
    else:
        m = None if zh else _PHRASE_TAIL.match(low, end)
        if m is None or (start and _wordchar(text[start - 1]) and not _ENV_PREFIX.search(text, 0, start)):
            return None  # inside a word, unless the end of a variable's name: "MATCH_PASSWORD is X"
        trusted = m.group("q") != ""
    vstart = m.start("value")
    spaced = _spaced_secret(text, vstart) if m.group("op") is not None else None
    if spaced is not None:  # "the wifi password is ember indigo goblet cobalt 61"
        return vstart, spaced, _kind_of(word)
    value = _HTML_END.split(text[vstart : m.end("value")], 1)[0].rstrip(".,;:!?)\"'`”」』")
    if not value or _placeholder(value):
        return None
    op = m.group("op")
    if op is None and m.group("q") and _strong(value) and not _code_like(value.strip("`'\""), ""):
        pass  # user `qa` pass `A-esjd#xC8`: a quoted value right after the word
    elif op is None and word in _MATERIAL_WORDS and (_KEY_MATERIAL.fullmatch(value) or _looks_random(value)):
        pass  # "app secret 7d3e9f1a…", "api key 4478…": a secret's name, then key material
    elif op is None:  # "password Qx7#mL2vP9", 密码123456: a password word, then a value no word could be
        if (word not in _NO_OP_WORDS and not named) or not value[0].isalnum() or _code_like(value, ""):
            return None
        if not (_complex(value) or zh and value.isdigit() and len(value) >= 6):
            return None
    elif op == "to":  # "set the password to X", but "pass to `run()`", "token to use"
        if word == "pass" or not _strong(value) or _code_like(value.strip("`'\""), ""):
            return None
    elif not trusted and (not _strong(value) or _code_like(value, "")):
        return None
    return vstart, vstart + len(value), _kind_of(word)


def _complex(value: str) -> bool:
    """At least eight characters from three of: lower case, upper case, digits, symbols."""
    kinds = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    return len(value) >= 8 and kinds >= 3


# -- shape alone --------------------------------------------------------------------------------

_CANDIDATE = re.compile(r"(?<![A-Za-z0-9_\-+/])[A-Za-z0-9_\-+/]{20,}={0,2}")
_DIGIT = re.compile(r"\d")
_SEPARATORS = re.compile(r"[-_/+=]+")
_HEXISH = re.compile(r"^(?:0x)?[0-9a-fA-F]+(?:[-_][0-9a-fA-F]+)*$")
_LETTER_RUN = re.compile(r"[A-Z]?[a-z]{3,}")
_VOWELS = frozenset("aeiouyAEIOUY")
_CONSONANT_CLUSTER = re.compile(r"[b-df-hj-np-tv-xz]{4}", re.I)
# Hashes and public material that look random but are meant to be read: lockfile integrity,
# go.sum, docker digests, SSH and age public keys, data URIs, API object ids in transcripts.
_SAFE_PREFIXES = (
    "sha1-",
    "sha256-",
    "sha384-",
    "sha512-",
    "md5-",
    "AAAAB3NzaC1",
    "AAAAC3NzaC1",
    "AAAAE2VjZHNh",
    "age1",
    "msg_",
    "toolu_",
    "srvtoolu_",
    "req_",
    "chatcmpl-",
    "call_",
    "run_",
    "asst_",
    "thread_",
    "file-",
)
_SAFE_BEFORE = (
    "h1:",
    "sha1:",
    "sha256:",
    "sha384:",
    "sha512:",
    "md5:",
    "base64,",
    "ssh-rsa",
    "ssh-ed25519",
    "ssh-dss",
    "nistp256",
    "nistp384",
    "nistp521",
    "sha256=",
    "sha512=",
    "integrity=",
    "integrity",
)


_SAFE_AFTER = (".apps.googleusercontent.com",)  # a Google OAuth client id is public by design
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


def _readable_base64(token: str) -> bool:
    """Base64 of ordinary text ("deploy finished without errors"): shown to be decoded, not a secret.
    Base64 of `user:password` (Basic auth, docker `auth`) is still one."""
    if len(token) % 4 or not _BASE64.match(token):
        return False
    try:
        decoded = base64.b64decode(token, validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return False
    if not decoded.isprintable():
        return False
    if _prose_json(decoded):
        return True
    if re.search(r"^[^\s:]+:\S+$", decoded):
        return False
    letters = sum(c.isalpha() or c == " " for c in decoded)
    return decoded.count(" ") >= 2 and letters >= 0.8 * len(decoded)


def _prose_json(decoded: str) -> bool:
    """A small JSON object of words and flags ({"feature":"dark-mode","enabled":true})."""
    if not (decoded.startswith("{") and decoded.endswith("}")) or _KEYWORD.search(decoded.lower()):
        return False
    values = re.findall(r":\s*\"([^\"]*)\"", decoded)
    return all(_word_share(v) >= 0.6 or len(v) < 8 for v in values)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _word_share(s: str) -> float:
    """The share of `s` made of word-like letter runs (handle, Callback, Small)."""
    return sum(len(w) for w in _LETTER_RUN.findall(s) if _pronounceable(w)) / max(1, len(s))


def _pronounceable(word: str) -> bool:
    """A letter run that reads like a word (handle, Small), not like random letters (vzmgc)."""
    return any(c in _VOWELS for c in word) and not _CONSONANT_CLUSTER.search(word)


def _random(token: str) -> bool:
    """A run of letters and digits that was generated, not written."""
    # Hex and decimal parts (commit ids, build numbers, dates) are not evidence: drop them.
    parts = [p for p in _SEPARATORS.split(token) if p and not (len(p) >= 6 and _HEXISH.match(p)) and not p.isdigit()]
    s = "-".join(parts)
    n = len(s)
    digits = sum(c.isdigit() for c in s)
    upper = sum(c.isupper() for c in s)
    lower = sum(c.islower() for c in s)
    if n < 20 or digits == 0 or upper + lower == 0:
        return False
    classes = (digits > 0) + (upper > 0) + (lower > 0)
    if classes < 3 and (n < 32 or digits < 4 or any(c in s for c in "-_/+")):
        return False  # two-letter-class strings with separators are names: manylinux_2_17_x86_64
    words = sum(len(w) for p in parts for w in _LETTER_RUN.findall(p) if _pronounceable(w))
    if words > (0.25 if n < 32 else 0.4) * n:  # identifiers, slugs, paths: mostly words
        return False
    return _entropy(s) >= (3.6 if n < 32 else 3.9) and _mixing(s) >= (0.75 if n < 32 else 0.65)


def _mixing(s: str) -> float:
    """How often adjacent characters change class (digit, upper, lower), relative to chance.

    About 1 for generated strings, whatever their alphabet; well below 1 for names, whose
    digits and capitals come in runs (Mean_Acc1298_Mem40, kCFStringEncodingUTF8).
    """
    parts = [p for p in _SEPARATORS.split(s) if len(p) > 1]
    counts = Counter("d" if c.isdigit() else "u" if c.isupper() else "l" for p in parts for c in p)
    n = sum(counts.values())
    pairs = n - len(parts)
    expected = 1 - sum((k / n) ** 2 for k in counts.values()) if n else 0
    if pairs <= 0 or expected <= 0:
        return 0.0
    switches = sum((a.isdigit(), a.isupper()) != (b.isdigit(), b.isupper()) for p in parts for a, b in zip(p, p[1:]))
    return switches / pairs / expected


def _looks_random(token: str) -> bool:
    core = token.rstrip("=")
    if len(core) < 20 or _HEXISH.match(core):
        return False
    if "/" in core:
        parts = [p for p in core.split("/") if p]
        pathy = core.startswith(("/", "./", "~")) or any(len(p) >= 3 and p.isalpha() and p.islower() for p in parts)
        return not pathy and _random(core)
    return _random(core)


def _token_spans(text: str) -> list[Span]:
    """Spans of known-prefix tokens and of random-looking strings, from one scan of long tokens."""
    spans: list[Span] = []
    for m in _CANDIDATE.finditer(text):
        token, start = m.group(), m.start()
        if token.startswith(_TOKEN_PREFIXES):
            for prefix, kind, rx, check in _TOKEN_RULES:
                if token.startswith(prefix):
                    known = rx.match(token)
                    if known and (check is None or check(known.group(known.re.groups and 1), known)):
                        spans.append((start, start + known.end(), kind, 0))
                        break
            else:
                spans += _random_spans(text, token, start)
            continue
        if _DIGIT.search(token) is not None:  # most long tokens are words joined by - _ /
            spans += _random_spans(text, token, start)
    return spans


def _random_spans(text: str, token: str, start: int) -> list[Span]:
    before = text[max(0, start - 20) : start].rstrip(" \"'")
    if token.startswith(_SAFE_PREFIXES) or before.endswith(_SAFE_BEFORE):
        return []
    if text.startswith(_SAFE_AFTER, start + len(token)) or _readable_base64(token):
        return []
    if _looks_random(token):
        return [(start, start + len(token), "high-entropy", 2)]
    spans: list[Span] = []
    if "/" in token:  # a path or URL: only a random segment of it is a secret
        offset = start
        for part in token.split("/"):
            if len(part) >= 24 and not _HEXISH.match(part) and _random(part):
                spans.append((offset, offset + len(part), "high-entropy", 2))
            offset += len(part) + 1
    return spans


# -- the entry points ---------------------------------------------------------------------------


def _merge(spans: list[Span], text: str) -> str:
    """`text` with every span replaced; overlapping spans become one (no part of a secret survives),
    labelled by the most certain rule among them."""
    spans.sort()
    out: list[str] = []
    last_end = 0
    i = 0
    while i < len(spans):
        start, end, kind, priority = spans[i]
        i += 1
        while i < len(spans) and spans[i][0] < end:
            end = max(end, spans[i][1])
            if spans[i][3] < priority:
                kind, priority = spans[i][2], spans[i][3]
            i += 1
        out += [text[last_end:start], redacted(kind)]
        last_end = end
    out.append(text[last_end:])
    return "".join(out)


# Characters that show nothing but change what a text is: zero-width spaces, the word joiner and
# invisible operators, a BOM, soft hyphens, and the bidi overrides and isolates of "Trojan Source".
# Inside a token they hide it from every rule (ghp_\u200bAbc... is still a usable token once copied).
_INVISIBLE = re.compile("[\u00ad\u180e\u200b\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069]")
# ZWJ and ZWNJ carry meaning between emoji (family sequences) and in Arabic, Persian and Indic
# scripts; next to a character of a script that never joins (Latin, Greek, Cyrillic, Han, kana,
# Hangul, full-width forms) they carry none and can only hide a name (陈\u200d爱丽), so there
# they are dropped.
_NO_JOIN = "\x00-\u02ff\u0370-\u052f\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_JOINER_UNNEEDED = re.compile(f"(?<=[{_NO_JOIN}])[\u200c\u200d]+|[\u200c\u200d]+(?=[{_NO_JOIN}])")


def strip_invisible(text: str) -> str:
    """`text` without the invisible characters that could split a secret (see _INVISIBLE)."""
    if text.isascii():
        return text
    if _INVISIBLE.search(text):
        text = _INVISIBLE.sub("", text)
    if "\u200c" in text or "\u200d" in text:  # the look-behind pattern cannot skip ahead: only when needed
        text = _JOINER_UNNEEDED.sub("", text)
    return text


_LABEL_TOKEN = re.compile(r"[^\s,;|=:]{8,}")  # NAME=value: each side judged alone


def redact_label(text: str, extra_patterns: Sequence[str] | None = None) -> str:
    """`redact` for a short label (a category, tag, relation type, entity name), which names
    something and never holds a generated string: a word of 8 or more characters with both
    cases, digits scattered among its letters or a symbol, and no word-like run is redacted too
    (the bare value of a password cut from its line: "DxMUcF9BJhTdtWY!cR")."""
    text = redact(text, extra_patterns)
    spans: list[Span] = []
    for m in _LABEL_TOKEN.finditer(text):
        token = m.group().strip("\"'`()[]{}<>")
        if token.startswith("[REDACTED") or token.startswith(("sha1", "sha256", "sha384", "sha512", "md5")):
            continue
        if any(c in m.group() for c in "[]{}()") or _readable_base64(token + "=" * (-len(token) % 4)):
            continue  # a regex that describes a token (ghp_[A-Za-z0-9]{36}), base64 of a sentence
        prefixed = token.startswith(_TOKEN_PREFIXES) and len(token) >= 12 and any(c.isdigit() for c in token)
        joined = "-" in token and any(len(p) >= 32 for p in token.split("-"))  # 7-680..-f77bc2...: Slack's shape
        if prefixed or _HEXISH.match(token) and (len(token) >= 56 or joined):
            # A forge token cut short, a 256-bit hex key cut from its line (DigitalOcean, Rails
            # secret_key_base): as a label, never a name. A bare sha256 checksum goes too; a commit
            # id (40) or one prefixed "sha256:" stays.
            spans.append((m.start(), m.end(), "secret", 2))
            continue
        # Shorter hex stays (a commit id names a thing), and so do references: ${SMTP_PASSWORD:?must be set}
        if _HEXISH.match(token) or not _complex(token) or token[:1] in "$%{<" or _placeholder(token):
            continue
        upper, lower = sum(c.isupper() for c in token), sum(c.islower() for c in token)
        mixed = upper >= 2 and lower >= 2  # ISO-8601, v2.3.1-rc1, i18n: one case only, names
        scattered = len(_DIGIT_RUN.findall(token)) >= 2 or any(c in "!@#$%^&*+=~?<>" for c in token)
        if mixed and scattered and _word_share(token) < 0.3:  # Win32API, PostgreSQL15: digits in one place
            spans.append((m.start(), m.end(), "secret", 2))
    return _merge(spans, text) if spans else text


def redact(text: str, extra_patterns: Sequence[str] | None = None) -> str:
    """`text` with secrets replaced by `[REDACTED:kind]` and <private> spans dropped.

    `extra_patterns` are regular expressions (the `redact_patterns` setting): group 1, when the
    pattern has one, is the secret; otherwise the whole match is. Idempotent: redacting twice
    gives the same text.
    """
    if not text:
        return text
    text = strip_invisible(text)
    low = _lower(text)
    if "<private" in low:
        text = PRIVATE.sub("", text)
        low = _lower(text)
    spans: list[Span] = []
    for rule in _KNOWN:
        if rule.needle in (low if rule.lower else text):
            spans += _rule_spans(rule, text, low, 0)
    for rule in _CONTEXT:
        if rule.needle in (low if rule.lower else text):
            spans += _rule_spans(rule, text, low, 1)
    spans += _keyword_spans(text, low)
    for pattern in extra_patterns or ():
        spans += _rule_spans(Rule("custom", "", re.compile(pattern)), text, low, 1)
    spans += _public_blocks(_token_spans(text), text)
    return _merge(_continued(spans, text), text) if spans else text


# A backslash right after a value, then a line break: the shell joins the next line's first word
# to the value (API_TOKEN=ghp_abc\<newline>def is one token), so that word is the secret's too.
_CONTINUATION = re.compile(r"\\\r?\n[ \t]*(?P<more>[^\s\\\"'`]+)")


def _continued(spans: list[Span], text: str) -> list[Span]:
    """`spans` with the continuation lines of each secret that a backslash cut."""
    more: list[Span] = []
    for _start, end, kind, priority in spans:
        while end < len(text) and (text[end] == "\\" or text[end - 1] == "\\"):
            m = _CONTINUATION.match(text, end if text[end] == "\\" else end - 1)
            if m is None or text[end - 1].isspace():
                break
            more.append((m.start("more"), m.end("more"), kind, priority))
            end = m.end("more")
    return spans + more


_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (CERTIFICATE|PUBLIC KEY|CERTIFICATE REQUEST|X509 CRL|PGP PUBLIC KEY BLOCK)-----.*?-----END \1-----",
    re.S,
)


def _public_blocks(spans: list[Span], text: str) -> list[Span]:
    """`spans` without the random-looking lines of certificates and public keys (public by design)."""
    if "-----BEGIN " not in text or not spans:
        return spans
    blocks = [m.span() for m in _PUBLIC_BLOCK.finditer(text)]
    return [s for s in spans if s[3] < 2 or not any(a <= s[0] and s[1] <= b for a, b in blocks)]


def check_patterns(patterns: Sequence[object]) -> list[str]:
    """Problems with user-supplied redaction patterns (empty when all are usable regexes)."""
    problems = []
    for p in patterns:
        if not isinstance(p, str) or not p:
            problems.append(f"{p!r} is not a non-empty string")
            continue
        try:
            rx = re.compile(p)
        except re.error as e:
            problems.append(f"{p!r} is not a valid regular expression ({e})")
            continue
        if rx.match(""):
            problems.append(f"{p!r} matches the empty string")
    return problems


def is_excluded(scope: str, patterns: Sequence[str]) -> bool:
    """Whether a project scope (its root path) matches one of the `excluded_projects` globs."""
    for p in patterns:
        glob = os.path.expanduser(p).rstrip("/") or "/"
        if fnmatch.fnmatchcase(scope, glob) or fnmatch.fnmatchcase(scope, glob + "/*"):
            return True
    return False


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message, so secrets never reach log files."""

    def __init__(self, extra_patterns: Sequence[str] | None = None):
        super().__init__()
        self.extra_patterns = list(extra_patterns or [])

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler to report
            return True
        record.msg, record.args = redact(message, self.extra_patterns), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info), self.extra_patterns)
        return True
