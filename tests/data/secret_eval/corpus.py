"""Adversarial corpus of secrets (must never reach disk) and look-alikes (must survive).

Usage
-----
    import random
    from corpus import secret_cases, benign_cases
    for case in secret_cases(random.Random(1234)): ...
    python3 corpus.py [seed]     # one sample per format, counts, self-check

Everything random comes from the ``rng`` that is passed in, so a seed reproduces
a corpus exactly and every call with a fresh seed gives fresh values.  Importing
the module has no side effects (it only defines functions and constant tables).

Case shapes
-----------
secret case : {"format", "lang": "en"|"zh", "text", "cores": [str, ...]}
benign case : {"format", "lang": "en"|"zh", "text", "keep":  [str, ...]}
Invariants (checked by ``check()``; ``python3 corpus.py`` runs it):
  * every core and every keep string occurs verbatim in its text;
  * every core is >= 8 characters and generated from rng (no fixed vendor
    prefix inside a core unless it is glued to >= 8 random characters);
  * no core of any secret case occurs in any benign case of the same call.

What a "core" is
----------------
The random part of a credential, WITHOUT its well-known prefix: for
``ghp_XXXX`` the core is ``XXXX``; for a URL password it is the password.  A
core of 24+ characters is also listed as its two halves, so a redactor that
masks only part of a token (or stops at a ``/``, ``+``, ``%`` or ``.`` in the
middle) is still caught by a substring scan.  Passwords built with
URL-encoded characters (``p%40ss``) list each encoded-free run as a separate
core, so a redactor stopping at ``%40`` is caught too.  PEM keys list every
body line that carries random bytes (lines are scanned separately so a
store that rewraps whitespace still has to keep each line intact to leak).

Secret groups (secret_cases)
----------------------------
cloud     : AWS key id + secret (env, ~/.aws/credentials, STS JSON with session
            token), GCP service-account JSON (private_key with \\n escapes),
            Google API key, Azure client secret / storage connection string /
            SAS URL, Heroku, DigitalOcean, Aliyun AccessKey, Tencent SecretKey.
forges    : GitHub classic (with the real CRC32/base62 checksum), fine-grained,
            app/user/refresh/oauth tokens, token inside ``git remote -v``,
            GitLab PAT and runner token, npm (checksum) and PyPI (macaroon
            shaped) tokens incl. .npmrc/.pypirc.
chat/ops  : Slack bot/user/app tokens and webhook, Discord bot token and
            webhook, Feishu/Lark webhook + app secret, DingTalk webhook (+SEC
            signing secret), WeCom webhook, Telegram bot token, Datadog, Twilio
            SID + auth token, SendGrid, Mailgun, Vault, Shopify, Stripe
            sk_live/rk_live/whsec, OpenAI (proj/svcacct/legacy), Anthropic,
            Hugging Face, WeChat AppSecret.
crypto    : JWT (HS256/RS256), PEM RSA (PKCS#1), EC, OpenSSH (real binary
            layout), PKCS#8, Django SECRET_KEY, Rails secret_key_base.
urls/dsn  : postgresql, mysql, mongodb+srv, redis/rediss (empty user), amqp(s),
            https basic auth, URL-encoded passwords, api_key in a query string,
            Go MySQL DSN ``user:pass@tcp(host:3306)/db``, JDBC (mysql,
            sqlserver ``;password=``, oracle thin ``user/pass@``), ADO.NET.
config    : .env dump, docker-compose env, YAML value on the next line /
            block scalar / deeply nested, INI continuation line, JSON config,
            .netrc, .pgpass, kubeconfig token, k8s Secret (base64 data),
            docker config.json ``auth`` (base64 user:pass), tfvars.
commands  : mysql -uroot -pXXX, curl -u, sshpass -p, PGPASSWORD=... psql,
            docker login -p / echo | --password-stdin, redis-cli -a, SQL
            ``CREATE USER .. IDENTIFIED BY`` / ``ALTER USER .. PASSWORD``,
            ``printenv`` output, ``echo <basic blob> | base64 -d``.
headers   : Authorization Bearer / Basic / ``token``, X-Api-Key, Cookie and
            Set-Cookie session ids (incl. ``connect.sid=s%3A...``).
assign    : ``API_TOKEN = "..."`` (python), JS const, ``export FOO_KEY=``,
            Dockerfile ENV, PowerShell ``$env:``.
prose     : English ("the password for the admin panel is ...", "my token is",
            login pairs, diceware passphrase, Gmail app password with spaces),
            Chinese (密码是 / 密码：full-width colon / 口令为 / 秘钥: /
            账号+密码 / token 贴一下), no spaces and full-width punctuation
            right next to the value.
split     : a token hard-wrapped by the terminal across two lines (each part is
            a core), a key sent as two halves in two messages, ``password:``
            with the value on the next line of prose.

Benign groups (benign_cases) — must survive untouched
-----------------------------------------------------
hashes/ids: git SHAs (7 & 40 hex, ``git log``, diff ``index a..b``, ranges),
            UUIDs (request ids, file names), Cargo.lock / pip ``--hash`` /
            go.sum / yarn.lock checksums, Docker digests and container ids,
            npm integrity (sha512-), SRI (sha384-), ETag, md5 lists, Mongo
            ObjectIds, ULIDs, W3C traceparent, k8s pod names, hashed asset
            names, Nix store paths, Alembic revision ids, ``export
            GIT_SHA=<40 hex>`` (hex in an assignment that is NOT a secret).
network   : host:port, IPv6/MAC, URLs without credentials, a postgres URL
            with a user but NO password, ``user@host`` ssh targets, git ssh
            remotes.
code/text : placeholders, variable names, env reads, version strings,
            timestamps, long identifiers, LLM "token" talk, assignments whose
            value is not secret (``API_KEY_HEADER = "X-Api-Key"``), regexes
            that describe token formats, docs naming token prefixes, CLI
            commands that PROMPT for a password (``mysql -u root -p``), paths
            to key files, base64 of ordinary text, SSH public keys, X.509
            certificates, a public OAuth client id, "key ending in 4f2a".
zh        : 密码在 1Password 里 / 密码：见 Vault 条目 (full-width colon, no value)
            / token 过期了 / 口令策略.

Borderline decisions
--------------------
* Placeholders MUST survive: ``<your-password>``, ``${DB_PASSWORD}``,
  ``$DB_PASSWORD``, ``{{ secrets.NPM_TOKEN }}``, ``{{ .Values.db.password }}``,
  ``your_api_key_here``, ``********``.  They carry meaning (which variable
  feeds the value) and contain no secret.
* ``changeme``, ``hunter2``, ``password123``, ``admin/admin``: in NEITHER set.
  They are not random (a scan for them proves nothing) and redacting them is
  acceptable because people really do use them as live passwords.
* Identifiers next to secrets are NOT cores: Twilio Account SID (AC...),
  Slack team/bot ids, Discord bot-id segment, Feishu App ID (cli_...), WeChat
  AppID (wx...), GCP client_email / client_id / private_key_id, JWT header and
  payload (only the signature makes it usable), Azure tenant/client ids.
  The AWS access key id IS a core (every scanner treats it as sensitive).
* The same shape can be secret or benign; context decides: a UUID is a
  secret as a Heroku API key or inside a Feishu/Lark/WeCom hook URL, but
  benign as a request id; 40 hex is a Datadog app key after DD_APP_KEY= but
  benign as a commit SHA or after ``export GIT_SHA=``; 32 hex is a Twilio /
  WeChat secret vs an md5 / trace id.
* Public-by-design material is benign: SSH public keys, X.509 certificates,
  Google OAuth client ids (``*.apps.googleusercontent.com``).
  Stripe publishable keys (pk_live_) and AWS's documentation key
  ``AKIAIOSFODNN7EXAMPLE`` are in NEITHER set.
* Password hashes (bcrypt ``$2b$...``, argon2) are in neither set.
* A masked secret (``ending in 4f2a``) is benign; its 4 visible chars are
  not a secret.
* Base64 of ``user:pass`` (Basic auth, docker ``auth``, k8s Secret data) is a
  secret; base64 of an ordinary sentence is benign.
"""
from __future__ import annotations

import base64
import json
import random
import string
import sys
import urllib.parse
import zlib

__all__ = ["secret_cases", "benign_cases", "check"]

# --------------------------------------------------------------------------
# alphabets and primitive generators
# --------------------------------------------------------------------------
_DIG = string.digits
_UP = string.ascii_uppercase
_LO = string.ascii_lowercase
_ALNUM = _UP + _LO + _DIG
_B62 = _DIG + _UP + _LO            # GitHub's checksum alphabet order
_HEX = "0123456789abcdef"
_HEXU = "0123456789ABCDEF"
_B64 = _UP + _LO + _DIG + "+/"
_B64URL = _UP + _LO + _DIG + "-_"
_B32 = _UP + "234567"
_LOWNUM = _LO + _DIG


def _r(rng: random.Random, n: int, alpha: str = _ALNUM) -> str:
    """n random chars; re-drawn until it mixes >= 2 character classes when
    the alphabet allows it, so a core is never e.g. 'aaaaaaaa'-like."""
    while True:
        s = "".join(rng.choice(alpha) for _ in range(n))
        if n < 6 or len(set(s)) >= min(n, 5):
            return s


def _bytes(rng: random.Random, n: int) -> bytes:
    return bytes(rng.getrandbits(8) for _ in range(n))


def _b64(data: bytes, url: bool = False, pad: bool = True) -> str:
    s = (base64.urlsafe_b64encode(data) if url else base64.b64encode(data)).decode()
    return s if pad else s.rstrip("=")


def _uuid(rng: random.Random) -> str:
    h = _r(rng, 32, _HEX)
    h = h[:12] + "4" + h[13:16] + rng.choice("89ab") + h[17:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _b62(n: int) -> str:
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = _B62[d] + out
    return out or "0"


def _crc_token(rng: random.Random, prefix: str) -> tuple[str, str]:
    """GitHub / npm style: prefix + 30 random base62 + 6 char base62 CRC32."""
    body = _r(rng, 30, _B62)
    body += _b62(zlib.crc32(body.encode()) & 0xFFFFFFFF).rjust(6, "0")
    return prefix + body, body


def _pw(rng: random.Random, n: int | None = None, sym: str = "") -> str:
    """A password that looks typed-by-a-human-with-a-manager: letters, digits
    and (optionally) a few symbols from ``sym``; never starts with a symbol."""
    n = n or rng.randint(14, 22)
    while True:
        chars = [rng.choice(_ALNUM)]
        for _ in range(n - 1):
            chars.append(rng.choice(sym) if sym and rng.random() < 0.12 else rng.choice(_ALNUM))
        s = "".join(chars)
        if any(c.isdigit() for c in s) and any(c.isupper() for c in s) and any(c.islower() for c in s):
            return s


def _pick(rng: random.Random, seq):
    return seq[rng.randrange(len(seq))]


_HOSTS = ["db-prod-01.internal", "10.12.3.41", "pg.staging.acme.io", "mysql-primary.svc.cluster.local",
          "rds-main.c9xkq2lm3n.us-east-1.rds.amazonaws.com", "172.16.0.23", "orders-db.int.example.net",
          "localhost", "db.dev.local", "10.0.7.5"]
_USERS = ["app", "root", "admin", "svc_orders", "deploy", "readonly", "backend", "etl_user", "postgres", "ci"]
_DBS = ["orders", "app_prod", "billing", "analytics", "users", "inventory", "core", "reporting"]
_PROJ = ["payments-api", "web-frontend", "data-pipeline", "infra", "mobile-bff", "notif-svc", "crawler"]
_WORDS = ("anchor apple arctic banner basil beacon bishop blossom cactus canyon cargo cedar cobalt comet coral "
          "cotton crater dagger delta denim desert dragon ember falcon fennel fiber glacier goblet granite "
          "harbor hazel helium hollow indigo island jasper jungle kettle kiwi lantern lemon lilac lunar magnet "
          "mango maple marble meadow mercury mocha nectar nickel oasis olive onyx orbit otter paddle pepper "
          "pickle pilot planet plasma pocket quartz quiver radish raven ribbon rocket saddle salmon shadow "
          "silent silver sketch spiral sprout stable summit sunset tangle thistle thunder timber tulip tundra "
          "velvet violet walnut wander willow wizard zephyr zigzag").split()


def _halves(core: str) -> list[str]:
    if len(core) >= 24:
        m = len(core) // 2
        return [core, core[:m], core[m:]]
    return [core]


def _b64_line_cores(lines: list[str], fixed_chars: int) -> list[str]:
    """Lines of a base64 body; drop the leading part that encodes fixed
    header bytes; keep each line (or its random tail) of >= 12 chars."""
    out, pos = [], 0
    for ln in lines:
        start = max(0, fixed_chars - pos)
        tail = ln[start:]
        if len(tail) >= 12:
            out.append(tail)
        pos += len(ln)
    return out


def _wrap_lines(s: str, width: int) -> list[str]:
    return [s[i:i + width] for i in range(0, len(s), width)]


# --------------------------------------------------------------------------
# chat framings
# --------------------------------------------------------------------------
_EN_FRAMES = [
    "{x}",
    "{x}",
    "here's what I have, why isn't it connecting?\n\n{x}",
    "ok pasted below\n```\n{x}\n```",
    "{x}\n\nthis is the staging one, fine to use for now",
    "can you wire this into the deploy script:\n{x}",
    "fyi\n{x}\nlmk if it doesnt work",
    "getting 401s with this, any idea?\n```\n{x}\n```",
]
_ZH_FRAMES = [
    "帮我看下这个配置哪里不对：\n{x}",
    "部署脚本报错了，配置如下\n```\n{x}\n```",
    "{x}\n这个是测试环境的，先用着",
    "这是线上的，别提交到 git 里：\n{x}",
    "接一下这个，{x}",
    "{x}\n跑一下看看能不能连上",
]


def _frame(rng: random.Random, body: str, zh_p: float = 0.25, block: bool = False) -> tuple[str, str]:
    """Wrap a body in a chat sentence. block=True: only multi-line-safe frames."""
    zh = rng.random() < zh_p
    frames = _ZH_FRAMES if zh else _EN_FRAMES
    if block:
        frames = [f for f in frames if "\n" in f]
    return _pick(rng, frames).format(x=body), ("zh" if zh else "en")


# --------------------------------------------------------------------------
# registries
# --------------------------------------------------------------------------
_SECRET_GENS: list = []
_BENIGN_GENS: list = []


def _secret(name: str):
    def deco(fn):
        _SECRET_GENS.append((name, fn))
        return fn
    return deco


def _benign(name: str):
    def deco(fn):
        _BENIGN_GENS.append((name, fn))
        return fn
    return deco


def _has_cjk(s: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef" for c in s)


# ==========================================================================
# SECRET GENERATORS — each returns (text, cores) or (text, cores, lang)
# ==========================================================================

# ---- cloud ---------------------------------------------------------------
def _aws_pair(rng):
    kid_tail = _r(rng, 16, _B32)
    secret = _r(rng, 40, _B64)
    return "AKIA" + kid_tail, kid_tail, secret


@_secret("aws_keypair_env")
def _(rng):
    kid, kt, sec = _aws_pair(rng)
    region = _pick(rng, ["us-east-1", "eu-west-1", "ap-northeast-1", "cn-north-1"])
    body = f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={sec}\nexport AWS_DEFAULT_REGION={region}"
    text, lang = _frame(rng, body, block=True)
    return text, [kt, sec], lang


@_secret("aws_credentials_file")
def _(rng):
    kid, kt, sec = _aws_pair(rng)
    prof = _pick(rng, ["default", "prod", "ci-deployer", "data-eng"])
    text = (f"$ cat ~/.aws/credentials\n[{prof}]\naws_access_key_id = {kid}\n"
            f"aws_secret_access_key = {sec}\n")
    return text, [kt, sec]


@_secret("aws_sts_json")
def _(rng):
    kt = _r(rng, 16, _B32)
    sec = _r(rng, 40, _B64)
    tok_rand = _b64(_bytes(rng, 240))
    tok = "IQoJb3JpZ2luX2VjE" + tok_rand
    d = {"Credentials": {"AccessKeyId": "ASIA" + kt, "SecretAccessKey": sec, "SessionToken": tok,
                         "Expiration": "2025-03-1%dT1%d:2%d:00+00:00" % (rng.randint(0, 9), rng.randint(0, 9), rng.randint(0, 9))}}
    text = "$ aws sts get-session-token --serial-number arn:aws:iam::4821%08d:mfa/me --token-code 123456\n" % rng.randint(0, 10**8 - 1)
    text += json.dumps(d, indent=4)
    return text, [kt, sec] + _halves(tok_rand)


@_secret("gcp_service_account_json")
def _(rng):
    fixed = bytes.fromhex("308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100")
    der = fixed + _bytes(rng, 1217 - len(fixed))
    lines = _wrap_lines(_b64(der), 64)
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"
    proj = _pick(rng, ["acme-prod-3921", "data-lake-staging", "my-side-project-41223"])
    sa = {"type": "service_account", "project_id": proj, "private_key_id": _r(rng, 40, _HEX),
          "private_key": pem, "client_email": f"deployer@{proj}.iam.gserviceaccount.com",
          "client_id": str(rng.randint(10**20, 10**21 - 1)),
          "auth_uri": "https://accounts.google.com/o/oauth2/auth",
          "token_uri": "https://oauth2.googleapis.com/token"}
    body = json.dumps(sa, indent=2)
    text = _pick(rng, ["this is the SA key file, put it in the github secret pls\n",
                       "GOOGLE_APPLICATION_CREDENTIALS 指向的文件内容：\n", ""]) + body
    return text, _b64_line_cores(lines, len(fixed) * 4 // 3)


@_secret("google_api_key")
def _(rng):
    k = _r(rng, 35, _B64URL)
    text = _pick(rng, [
        f'<script src="https://maps.googleapis.com/maps/api/js?key=AIza{k}&callback=initMap"></script>',
        f"GOOGLE_MAPS_API_KEY=AIza{k}",
        f"gemini 的 key 是 AIza{k} 额度还剩挺多",
        f"const firebaseConfig = {{ apiKey: \"AIza{k}\", authDomain: \"shop-{_r(rng, 5, _LOWNUM)}.firebaseapp.com\" }};",
    ])
    return text, _halves(k)


@_secret("azure_client_secret")
def _(rng):
    sec = _r(rng, 3, _ALNUM) + rng.choice(_DIG) + "Q~" + _r(rng, 34, _ALNUM + "_.-~")
    tenant, client = _uuid(rng), _uuid(rng)
    text = _pick(rng, [
        f"AZURE_TENANT_ID={tenant}\nAZURE_CLIENT_ID={client}\nAZURE_CLIENT_SECRET={sec}",
        f"az login --service-principal -u {client} -p '{sec}' --tenant {tenant}",
        f'"ClientSecret": "{sec}",',
    ])
    return text, _halves(sec)


@_secret("azure_storage_conn")
def _(rng):
    key = _b64(_bytes(rng, 64))
    acct = "st" + _r(rng, 10, _LOWNUM)
    text = (f"AZURE_STORAGE_CONNECTION_STRING=\"DefaultEndpointsProtocol=https;AccountName={acct};"
            f"AccountKey={key};EndpointSuffix=core.windows.net\"")
    return text, _halves(key.rstrip("="))


@_secret("azure_sas_url")
def _(rng):
    sig_raw = _b64(_bytes(rng, 32))
    sig = urllib.parse.quote(sig_raw, safe="")
    acct = "st" + _r(rng, 9, _LOWNUM)
    url = (f"https://{acct}.blob.core.windows.net/backups/db-2024-11-0{rng.randint(1, 9)}.bak?"
           f"sv=2022-11-02&ss=b&srt=co&sp=rl&se=2025-01-01T00:00:00Z&st=2024-11-01T00:00:00Z&spr=https&sig={sig}")
    text = _pick(rng, [f"download link (valid till jan): {url}", f"备份文件的 SAS 链接 {url}", f"azcopy copy \"{url}\" ./restore/"])
    # cores: the encoded signature split at %XX escapes
    parts = [p for p in _split_pct(sig) if len(p) >= 8]
    if not parts:
        parts = [sig]
    return text, parts + [sig]


def _split_pct(s: str) -> list[str]:
    out, cur, i = [], "", 0
    while i < len(s):
        if s[i] == "%":
            out.append(cur)
            cur = ""
            i += 3
        else:
            cur += s[i]
            i += 1
    out.append(cur)
    return out


@_secret("heroku_api_key")
def _(rng):
    k = _uuid(rng)
    text = _pick(rng, [
        f"export HEROKU_API_KEY={k}\nheroku container:push web -a {_pick(rng, _PROJ)}",
        f"$ heroku authorizations:create -d ci\nCreating OAuth Authorization... done\nClient:      <none>\nID:          {_uuid(rng)}\nDescription: ci\nScope:       global\nToken:       {k}\nUpdated at:  Tue Mar 04 2025 10:21:07 GMT+0800",
    ])
    return text, [k]


@_secret("digitalocean_token")
def _(rng):
    t = _r(rng, 64, _HEX)
    text = _pick(rng, [f"doctl auth init -t dop_v1_{t}", f'do_token = "dop_v1_{t}"'])
    return text, _halves(t)


@_secret("aliyun_accesskey")
def _(rng):
    kid = _r(rng, 18, _ALNUM)
    sec = _r(rng, 30, _ALNUM)
    text = _pick(rng, [
        f"阿里云 OSS 的 AK：LTAI5t{kid}\nSK：{sec}\n只开了 oss 读写权限",
        f"ALIBABA_CLOUD_ACCESS_KEY_ID=LTAI5t{kid}\nALIBABA_CLOUD_ACCESS_KEY_SECRET={sec}",
        f"aliyun configure set --access-key-id LTAI5t{kid} --access-key-secret {sec} --region cn-hangzhou",
    ])
    return text, [kid] + _halves(sec)


@_secret("tencent_cloud_secret")
def _(rng):
    sid = _r(rng, 32, _ALNUM)
    skey = _r(rng, 32, _ALNUM)
    text = _pick(rng, [
        f"腾讯云 COS：SecretId=AKID{sid} SecretKey={skey}",
        f"TENCENTCLOUD_SECRET_ID=AKID{sid}\nTENCENTCLOUD_SECRET_KEY={skey}",
    ])
    return text, _halves(sid) + _halves(skey)


# ---- forges & package registries ------------------------------------------
@_secret("github_classic_pat")
def _(rng):
    tok, core = _crc_token(rng, "ghp_")
    text = _pick(rng, [
        f"my token is {tok} (repo + workflow scope)",
        f"GH_TOKEN={tok} gh pr list --repo acme/{_pick(rng, _PROJ)}",
        f"curl -H \"Authorization: token {tok}\" https://api.github.com/user/repos?per_page=100",
        f"用这个 token 拉私有仓库：{tok}，过期时间 90 天",
    ])
    return text, _halves(core)


@_secret("github_fine_grained_pat")
def _(rng):
    a, b = _r(rng, 22, _ALNUM), _r(rng, 59, _ALNUM)
    tok = f"github_pat_11{a[2:]}_{b}"
    # first segment after github_pat_ is 22 chars; keep its random tail
    text, lang = _frame(rng, f"GITHUB_TOKEN={tok}")
    return text, [a[2:]] + _halves(b), lang


@_secret("github_app_token")
def _(rng):
    pre = _pick(rng, ["ghs_", "ghu_", "ghr_"])
    tok, core = _crc_token(rng, pre)
    if pre == "ghr_":
        tok = tok + _r(rng, 40, _ALNUM)
        core = tok[4:]
    text = _pick(rng, [
        f"installation token from the app: {tok}",
        f"::debug::token={tok}",
        f'{{"token": "{tok}", "expires_at": "2025-02-11T09:3{rng.randint(0, 9)}:00Z"}}',
    ])
    return text, _halves(core)


@_secret("github_oauth_token")
def _(rng):
    tok, core = _crc_token(rng, "gho_")
    text = (f"$ cat ~/.config/gh/hosts.yml\ngithub.com:\n    user: {_pick(rng, ['lchen', 'mkowalski', 'dev-bot'])}\n"
            f"    oauth_token: {tok}\n    git_protocol: https\n")
    return text, _halves(core)


@_secret("git_remote_token")
def _(rng):
    tok, core = _crc_token(rng, _pick(rng, ["ghs_", "ghp_"]))
    repo = f"acme/{_pick(rng, _PROJ)}"
    text = (f"$ git remote -v\norigin\thttps://x-access-token:{tok}@github.com/{repo}.git (fetch)\n"
            f"origin\thttps://x-access-token:{tok}@github.com/{repo}.git (push)")
    return text, _halves(core)


@_secret("gitlab_pat")
def _(rng):
    t = _r(rng, 20, _ALNUM + "_-")
    text = _pick(rng, [
        f"git clone https://oauth2:glpat-{t}@gitlab.example.com/platform/{_pick(rng, _PROJ)}.git",
        f"GITLAB_TOKEN=glpat-{t}",
        f"gitlab 的 PAT：glpat-{t} 只有 read_api",
    ])
    return text, [t]


@_secret("gitlab_runner_token")
def _(rng):
    t = _r(rng, 20, _ALNUM + "_-")
    text = (f"sudo gitlab-runner register --non-interactive --url https://gitlab.com/ "
            f"--token glrt-{t} --executor docker --docker-image alpine:3.19")
    return text, [t]


@_secret("npm_token")
def _(rng):
    tok, core = _crc_token(rng, "npm_")
    text = _pick(rng, [
        f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={tok}\n@acme:registry=https://npm.pkg.github.com",
        f"NPM_TOKEN={tok} npm publish --access public",
        f"npm 发布用的 automation token：{tok}",
    ])
    return text, _halves(core)


@_secret("pypi_token")
def _(rng):
    raw = (b"\x02\x01\x08pypi.org\x02\x24" + _uuid(rng).encode() + b"\x00\x02\x06\x01\x04\x00\x02" +
           _bytes(rng, 40) + b"\x00\x00\x06\x20" + _bytes(rng, 32))
    b = _b64(raw, url=True, pad=False)
    tok = "pypi-" + b
    core = b[24:]
    text = _pick(rng, [
        f"$ cat ~/.pypirc\n[pypi]\n  username = __token__\n  password = {tok}\n",
        f"TWINE_USERNAME=__token__ TWINE_PASSWORD={tok} twine upload dist/*",
        f"uv publish --token {tok}",
    ])
    return text, _halves(core)


# ---- chat / ops SaaS -------------------------------------------------------
@_secret("slack_bot_token")
def _(rng):
    s = _r(rng, 24, _ALNUM)
    tok = f"xoxb-{rng.randint(10**10, 10**12)}-{rng.randint(10**12, 10**13)}-{s}"
    text, lang = _frame(rng, _pick(rng, [f"SLACK_BOT_TOKEN={tok}", f"slack_token: \"{tok}\"", f"bot token {tok}"]))
    return text, [s], lang


@_secret("slack_user_token")
def _(rng):
    s = _r(rng, 32, _HEX)
    tok = f"xoxp-{rng.randint(10**10, 10**12)}-{rng.randint(10**10, 10**12)}-{rng.randint(10**12, 10**13)}-{s}"
    text = f"curl -s -H 'Authorization: Bearer {tok}' 'https://slack.com/api/conversations.history?channel=C0{_r(rng, 8, _UP + _DIG)}'"
    return text, _halves(s)


@_secret("slack_app_token")
def _(rng):
    s = _r(rng, 64, _HEX)
    tok = f"xapp-1-A0{_r(rng, 9, _UP + _DIG)}-{rng.randint(10**12, 10**13)}-{s}"
    return f"SLACK_APP_TOKEN={tok}  # socket mode", _halves(s)


@_secret("slack_webhook")
def _(rng):
    s = _r(rng, 24, _ALNUM)
    url = f"https://hooks.slack.com/services/T0{_r(rng, 8, _UP + _DIG)}/B0{_r(rng, 9, _UP + _DIG)}/{s}"
    text = _pick(rng, [
        f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {url}",
        f"alert webhook for #oncall: {url}",
        f"告警发到这个 slack webhook：{url}",
    ])
    return text, [s]


@_secret("discord_bot_token")
def _(rng):
    bot_id = str(rng.randint(10**17, 10**19 - 1))
    p1 = _b64(bot_id.encode(), pad=False)
    p2 = _r(rng, 6, _B64URL)
    p3 = _r(rng, 38, _B64URL)
    tok = f"{p1}.{p2}.{p3}"
    text = _pick(rng, [f"client.run('{tok}')", f"DISCORD_TOKEN={tok}", f"the bot token is {tok} dont leak it lol"])
    return text, [f"{p2}.{p3}"] + _halves(p3)


@_secret("discord_webhook")
def _(rng):
    t = _r(rng, 68, _B64URL)
    url = f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{t}"
    text, lang = _frame(rng, url)
    return text, _halves(t), lang


@_secret("feishu_webhook")
def _(rng):
    u = _uuid(rng)
    url = f"https://open.feishu.cn/open-apis/bot/v2/hook/{u}"
    text = _pick(rng, [
        f"飞书群机器人 webhook：{url}",
        f"curl -X POST -H \"Content-Type: application/json\" -d '{{\"msg_type\":\"text\",\"content\":{{\"text\":\"构建失败\"}}}}' {url}",
        f"FEISHU_WEBHOOK={url}",
    ])
    return text, [u]


@_secret("lark_webhook")
def _(rng):
    u = _uuid(rng)
    url = f"https://open.larksuite.com/open-apis/bot/v2/hook/{u}"
    return f"lark alert bot for the SG team -> {url}", [u], "en"


@_secret("feishu_app_secret")
def _(rng):
    app_id = "cli_" + _r(rng, 16, _HEX)
    sec = _r(rng, 32, _ALNUM)
    text = _pick(rng, [
        f"飞书应用凭证\nApp ID: {app_id}\nApp Secret: {sec}",
        f"FEISHU_APP_ID={app_id}\nFEISHU_APP_SECRET={sec}",
    ])
    return text, _halves(sec)


@_secret("dingtalk_webhook")
def _(rng):
    tok = _r(rng, 64, _HEX)
    sign = "SEC" + _r(rng, 64, _HEX)
    url = f"https://oapi.dingtalk.com/robot/send?access_token={tok}"
    text = _pick(rng, [
        f"钉钉机器人地址 {url}\n加签密钥：{sign}",
        f"DINGTALK_WEBHOOK={url}\nDINGTALK_SECRET={sign}",
        f"钉钉群告警用这个：{url}（加签 {sign}）",
    ])
    return text, _halves(tok) + _halves(sign[3:])


@_secret("wecom_webhook")
def _(rng):
    u = _uuid(rng)
    url = f"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={u}"
    text = _pick(rng, [f"企业微信群机器人：{url}", f"WECOM_BOT_URL={url}"])
    return text, [u]


@_secret("telegram_bot_token")
def _(rng):
    t = "AA" + _r(rng, 33, _B64URL)
    tok = f"{rng.randint(10**8, 10**10)}:{t}"
    text = _pick(rng, [f"TELEGRAM_BOT_TOKEN={tok}", f"botfather gave me {tok}",
                       f"curl https://api.telegram.org/bot{tok}/getUpdates"])
    return text, _halves(t)


@_secret("datadog_keys")
def _(rng):
    api, app = _r(rng, 32, _HEX), _r(rng, 40, _HEX)
    text = _pick(rng, [
        f"DD_API_KEY={api}\nDD_APP_KEY={app}\nDD_SITE=datadoghq.eu",
        f"datadog:\n  apiKey: {api}\n  appKey: {app}",
    ])
    return text, _halves(api) + _halves(app)


@_secret("twilio_pair")
def _(rng):
    sid = "AC" + _r(rng, 32, _HEX)
    tok = _r(rng, 32, _HEX)
    text = _pick(rng, [
        f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={tok}",
        f"client = Client(\"{sid}\", \"{tok}\")",
        f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{tok} --data-urlencode 'Body=hi'",
    ])
    return text, _halves(tok)


@_secret("sendgrid_key")
def _(rng):
    a, b = _r(rng, 22, _B64URL), _r(rng, 43, _B64URL)
    text, lang = _frame(rng, f"SENDGRID_API_KEY=SG.{a}.{b}")
    return text, [a] + _halves(b), lang


@_secret("mailgun_key")
def _(rng):
    k = _r(rng, 32, _HEX)
    return f"curl -s --user 'api:key-{k}' https://api.mailgun.net/v3/mg.example.com/messages -F to=ops@example.com", _halves(k)


@_secret("vault_token")
def _(rng):
    t = _r(rng, 24, _ALNUM)
    text = _pick(rng, [f"export VAULT_TOKEN=hvs.{t}\nvault kv get secret/payments/stripe",
                       f"root token: hvs.{t}  (dev server, don't panic)"])
    return text, _halves(t)


@_secret("shopify_token")
def _(rng):
    t = _r(rng, 32, _HEX)
    return f"X-Shopify-Access-Token: shpat_{t}", _halves(t)


@_secret("stripe_secret_key")
def _(rng):
    body = "51" + _r(rng, 97, _ALNUM)
    text = _pick(rng, [
        f"STRIPE_SECRET_KEY=sk_live_{body}",
        f"stripe.api_key = \"sk_live_{body}\"",
        f"live key: sk_live_{body}",
        f"stripe 正式环境的 key：sk_live_{body}",
    ])
    return text, _halves(body[2:])


@_secret("stripe_restricted_key")
def _(rng):
    body = "51" + _r(rng, 97, _ALNUM)
    return f"restricted key (read-only charges) rk_live_{body}", _halves(body[2:])


@_secret("stripe_webhook_secret")
def _(rng):
    w = _r(rng, 32, _ALNUM)
    text = _pick(rng, [f"STRIPE_WEBHOOK_SECRET=whsec_{w}",
                       f"> Ready! Your webhook signing secret is whsec_{w} (^C to quit)"])
    return text, _halves(w)


@_secret("openai_key")
def _(rng):
    kind = _pick(rng, ["proj", "svcacct", "legacy"])
    if kind == "legacy":
        a, b = _r(rng, 20, _ALNUM), _r(rng, 20, _ALNUM)
        key = f"sk-{a}T3BlbkFJ{b}"
    else:
        a, b = _r(rng, 74, _B64URL), _r(rng, 74, _B64URL)
        key = f"sk-{kind}-{a}T3BlbkFJ{b}"
    text, lang = _frame(rng, _pick(rng, [f"OPENAI_API_KEY={key}", f"client = OpenAI(api_key=\"{key}\")", f"openai key {key}"]))
    return text, _halves(a) + _halves(b), lang


@_secret("anthropic_key")
def _(rng):
    k = _r(rng, 93, _B64URL)
    key = f"sk-ant-api03-{k}AA"
    text, lang = _frame(rng, _pick(rng, [f"ANTHROPIC_API_KEY={key}", f"export ANTHROPIC_API_KEY=\"{key}\""]))
    return text, _halves(k), lang


@_secret("huggingface_token")
def _(rng):
    t = _r(rng, 34, _UP + _LO)
    text = _pick(rng, [f"huggingface-cli login --token hf_{t}", f"HF_TOKEN=hf_{t}", f"hf 的 read token hf_{t}"])
    return text, _halves(t)


@_secret("wechat_appsecret")
def _(rng):
    appid = "wx" + _r(rng, 16, _HEX)
    sec = _r(rng, 32, _HEX)
    text = _pick(rng, [
        f"小程序 AppID：{appid}\nAppSecret：{sec}",
        f"GET https://api.weixin.qq.com/cgi-bin/token?grant_type=client_credential&appid={appid}&secret={sec}",
    ])
    return text, _halves(sec)


# ---- crypto material -------------------------------------------------------
@_secret("jwt")
def _(rng):
    alg = _pick(rng, ["HS256", "RS256"])
    hdr = {"alg": alg, "typ": "JWT"}
    if alg == "RS256":
        hdr["kid"] = _r(rng, 16, _ALNUM)
    iat = rng.randint(1_700_000_000, 1_760_000_000)
    pl = {"sub": str(rng.randint(10**5, 10**7)), "email": f"{_pick(rng, ['wei', 'sam', 'priya', 'j.ortiz'])}@example.com",
          "role": _pick(rng, ["admin", "user", "service"]), "iat": iat, "exp": iat + 3600, "jti": _r(rng, 16, _ALNUM)}
    sig = _b64(_bytes(rng, 32 if alg == "HS256" else 256), url=True, pad=False)
    tok = ".".join([_b64(json.dumps(hdr, separators=(",", ":")).encode(), url=True, pad=False),
                    _b64(json.dumps(pl, separators=(",", ":")).encode(), url=True, pad=False), sig])
    text = _pick(rng, [
        f"Authorization: Bearer {tok}",
        f"the access token from /login is {tok}, decodes fine on jwt.io but api says expired??",
        f"localStorage.setItem('auth_token', '{tok}')",
        f"登录接口返回的 token：{tok}",
    ])
    return text, _halves(sig)


def _pem(rng, label: str, fixed_hex: str, total: int, width: int = 64, extra_head: str = ""):
    fixed = bytes.fromhex(fixed_hex)
    der = fixed + _bytes(rng, total - len(fixed))
    lines = _wrap_lines(_b64(der), width)
    text = f"-----BEGIN {label}-----\n{extra_head}" + "\n".join(lines) + f"\n-----END {label}-----"
    return text, _b64_line_cores(lines, len(fixed) * 4 // 3)


@_secret("pem_rsa")
def _(rng):
    pem, cores = _pem(rng, "RSA PRIVATE KEY", "308204a40201000282010100", 1192)
    text = _pick(rng, ["here's the deploy key (id_rsa) from the old box:\n", "$ cat deploy/id_rsa\n", ""]) + pem
    return text, cores


@_secret("pem_ec")
def _(rng):
    fixed = bytes.fromhex("30770201010420")
    mid = bytes.fromhex("a00a06082a8648ce3d030107a144034200 04".replace(" ", ""))
    der = fixed + _bytes(rng, 32) + mid + _bytes(rng, 64)
    lines = _wrap_lines(_b64(der), 64)
    pem = "-----BEGIN EC PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END EC PRIVATE KEY-----"
    text = _pick(rng, ["apple push key? no this is the ES256 signing key:\n", "jwt 签名用的 EC 私钥\n", ""]) + pem
    return text, _b64_line_cores(lines, len(fixed) * 4 // 3)


@_secret("pem_openssh")
def _(rng):
    def sstr(b: bytes) -> bytes:
        return len(b).to_bytes(4, "big") + b
    pub = _bytes(rng, 32)
    priv = _bytes(rng, 32)
    pubblob = sstr(b"ssh-ed25519") + sstr(pub)
    chk = _bytes(rng, 4)
    comment = _pick(rng, [b"deploy@ci", b"ops@bastion", b"lena@mbp"])
    sec = chk + chk + sstr(b"ssh-ed25519") + sstr(pub) + sstr(priv + pub) + sstr(comment)
    pad = 1
    while len(sec) % 8:
        sec += bytes([pad])
        pad += 1
    header = b"openssh-key-v1\x00" + sstr(b"none") + sstr(b"none") + sstr(b"") + (1).to_bytes(4, "big")
    blob = header + sstr(pubblob) + sstr(sec)
    lines = _wrap_lines(_b64(blob), 70)
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"
    text = _pick(rng, ["$ cat ~/.ssh/id_ed25519\n", "bastion key, paste into ~/.ssh/bastion and chmod 600:\n", ""]) + pem
    fixed_bytes = len(header) + 4 + len(sstr(b"ssh-ed25519")) + 4
    return text, _b64_line_cores(lines, fixed_bytes * 4 // 3)


@_secret("pem_pkcs8")
def _(rng):
    pem, cores = _pem(rng, "PRIVATE KEY", "308204bd020100300d06092a864886f70d0101010500048204a7308204a30201000282010100", 1217)
    text = _pick(rng, ["nginx 的 ssl_certificate_key 文件内容：\n", "    ", ""]) + pem
    return text, cores


@_secret("django_secret_key")
def _(rng):
    k = _r(rng, 50, _LO + _DIG + "!@#%^&*(-_=+)")
    pre = _pick(rng, ["django-insecure-", ""])
    text = _pick(rng, [f"SECRET_KEY = '{pre}{k}'", f"DJANGO_SECRET_KEY=\"{pre}{k}\""])
    return text, _halves(k)


@_secret("rails_secret_key_base")
def _(rng):
    k = _r(rng, 128, _HEX)
    text = _pick(rng, [f"$ EDITOR=cat bin/rails credentials:edit\nsecret_key_base: {k}\n",
                       f"SECRET_KEY_BASE={k} RAILS_ENV=production bin/rails assets:precompile"])
    return text, _halves(k)


# ---- connection URLs / DSNs ------------------------------------------------
_URLSAFE_SYM = "-_.~"


@_secret("url_postgres")
def _(rng):
    pw = _pw(rng, sym=_URLSAFE_SYM)
    url = f"{_pick(rng, ['postgresql', 'postgres', 'postgresql+psycopg'])}://{_pick(rng, _USERS)}:{pw}@{_pick(rng, _HOSTS)}:5432/{_pick(rng, _DBS)}"
    body = _pick(rng, [f"DATABASE_URL={url}", f"psql \"{url}?sslmode=require\"", url])
    text, lang = _frame(rng, body)
    return text, _halves(pw), lang


@_secret("url_mysql")
def _(rng):
    pw = _pw(rng, sym=_URLSAFE_SYM)
    url = f"mysql://{_pick(rng, _USERS)}:{pw}@{_pick(rng, _HOSTS)}:3306/{_pick(rng, _DBS)}"
    text = _pick(rng, [f"SQLALCHEMY_DATABASE_URI = \"{url.replace('mysql://', 'mysql+pymysql://')}\"",
                       f"mysql url in prisma: {url}", f"数据库连接串 {url}"])
    return text, _halves(pw)


@_secret("url_mongodb_srv")
def _(rng):
    pw = _pw(rng, sym="")
    url = (f"mongodb+srv://{_pick(rng, _USERS)}:{pw}@cluster0.{_r(rng, 5, _LOWNUM)}.mongodb.net/"
           f"{_pick(rng, _DBS)}?retryWrites=true&w=majority&appName=Cluster0")
    text, lang = _frame(rng, _pick(rng, [f"MONGO_URI={url}", f"mongoose.connect('{url}')"]))
    return text, _halves(pw), lang


@_secret("url_redis")
def _(rng):
    pw = _pw(rng, rng.randint(20, 32), sym="")
    url = _pick(rng, [f"redis://:{pw}@{_pick(rng, _HOSTS)}:6379/0",
                      f"rediss://default:{pw}@{_r(rng, 8, _LO)}-{_r(rng, 5, _LOWNUM)}.upstash.io:6379"])
    text = _pick(rng, [f"REDIS_URL={url}", f"CELERY_BROKER_URL = \"{url}\"", f"redis 连接：{url}"])
    return text, _halves(pw)


@_secret("url_amqp")
def _(rng):
    pw = _pw(rng, sym="-_")
    user = _pick(rng, _USERS)
    url = _pick(rng, [f"amqp://{user}:{pw}@rabbitmq.internal:5672/%2F",
                      f"amqps://{user}:{pw}@{_r(rng, 6, _LO)}.rmq.cloudamqp.com/{user}"])
    return f"BROKER_URL={url}", _halves(pw)


@_secret("url_https_basic")
def _(rng):
    pw = _pw(rng, sym="-_.")
    user = _pick(rng, ["deploy", "jenkins", "admin", "ci-bot"])
    url = _pick(rng, [f"https://{user}:{pw}@nexus.corp.example.com/repository/pypi-internal/simple",
                      f"https://{user}:{pw}@grafana.ops.example.io/api/dashboards/home",
                      f"http://{user}:{pw}@192.168.1.{rng.randint(2, 250)}:8080/job/release/build"])
    text = _pick(rng, [f"pip install --index-url {url} acme-utils", f"jenkins trigger url {url}", url])
    return text, _halves(pw)


@_secret("url_encoded_password")
def _(rng):
    parts = [_r(rng, rng.randint(8, 11), _ALNUM) for _ in range(3)]
    seps = [_pick(rng, ["@", "#", "/", ":", "?", "%"]) for _ in range(2)]
    raw = parts[0] + seps[0] + parts[1] + seps[1] + parts[2]
    enc = urllib.parse.quote(raw, safe="")
    scheme = _pick(rng, ["postgresql", "mysql", "mongodb", "redis", "amqp"])
    url = f"{scheme}://{_pick(rng, _USERS)}:{enc}@{_pick(rng, _HOSTS)}/{_pick(rng, _DBS)}"
    text = _pick(rng, [f"password has an @ in it so I url-encoded it: {url}",
                       f"DB_URL={url}", f"密码里有特殊字符，已经 urlencode 过了：{url}"])
    return text, parts + [enc]


@_secret("url_query_api_key")
def _(rng):
    k = _r(rng, 32, _ALNUM)
    param = _pick(rng, ["api_key", "apikey", "access_token", "key", "token"])
    text = (f"DEBUG urllib3.connectionpool: https://api.{_pick(rng, ['weatherapi', 'geocode', 'partner-feed'])}.com:443 "
            f"\"GET /v1/search?q=berlin&{param}={k}&limit=10 HTTP/1.1\" 200 4812")
    return text, _halves(k)


@_secret("go_mysql_dsn")
def _(rng):
    pw = _pw(rng, sym="!#%^*-_")
    dsn = f"{_pick(rng, _USERS)}:{pw}@tcp({_pick(rng, _HOSTS)}:3306)/{_pick(rng, _DBS)}?charset=utf8mb4&parseTime=True&loc=Local"
    text = _pick(rng, [f"db, err := sql.Open(\"mysql\", \"{dsn}\")", f"MYSQL_DSN={dsn}", f"gorm 连不上 {dsn}"])
    return text, _halves(pw)


@_secret("jdbc_url")
def _(rng):
    pw = _pw(rng, sym="!#*-_")
    h = _pick(rng, _HOSTS)
    text = _pick(rng, [
        f"spring.datasource.url=jdbc:mysql://{h}:3306/{_pick(rng, _DBS)}?user=app&password={pw}&useSSL=false",
        f"jdbc:sqlserver://{h}:1433;databaseName={_pick(rng, _DBS)};user=sa;password={pw};encrypt=true;trustServerCertificate=true",
        f"jdbc:oracle:thin:{_pick(rng, ['scott', 'app', 'hr'])}/{pw}@//{h}:1521/ORCLPDB1",
        f"jdbc:postgresql://{h}:5432/{_pick(rng, _DBS)}?user=etl&password={pw}&ssl=true",
    ])
    return text, _halves(pw)


@_secret("adonet_conn")
def _(rng):
    pw = _pw(rng, sym="!#*-_")
    d = {"ConnectionStrings": {"Default": f"Server=tcp:{_r(rng, 8, _LO)}.database.windows.net,1433;Initial Catalog={_pick(rng, _DBS)};"
                                          f"User ID=sqladmin;Password={pw};Encrypt=True;Connection Timeout=30;"}}
    return "appsettings.Production.json:\n" + json.dumps(d, indent=2), _halves(pw)


# ---- config files ----------------------------------------------------------
@_secret("dotenv_dump")
def _(rng):
    db_pw = _pw(rng, sym="-_")
    sess = _r(rng, 48, _HEX)
    sk = _r(rng, 24, _ALNUM)
    jwt_sec = _b64(_bytes(rng, 33))
    body = "\n".join([
        "NODE_ENV=production", f"PORT={_pick(rng, ['3000', '8080', '5000'])}",
        f"DATABASE_URL=postgres://app:{db_pw}@{_pick(rng, _HOSTS)}:5432/{_pick(rng, _DBS)}",
        f"SESSION_SECRET={sess}", f"STRIPE_SECRET_KEY=sk_live_{sk}", f"JWT_SECRET='{jwt_sec}'",
        "LOG_LEVEL=info", "# TODO move to vault",
    ])
    text = _pick(rng, ["$ cat .env\n", "contents of .env.production:\n", "线上 .env 如下\n"]) + body
    return text, _halves(db_pw) + _halves(sess) + _halves(sk) + _halves(jwt_sec)


@_secret("compose_env")
def _(rng):
    pw = _pw(rng, sym="-_")
    rpw = _pw(rng, sym="")
    text = ("services:\n  db:\n    image: postgres:16\n    environment:\n"
            f"      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD={pw}\n"
            "  redis:\n    image: redis:7\n"
            f"    command: redis-server --requirepass {rpw}\n")
    return text, _halves(pw) + _halves(rpw)


@_secret("yaml_next_line")
def _(rng):
    pw = _pw(rng, sym="!%^*-_")
    style = _pick(rng, ["plain", "literal", "folded"])
    ind = _pick(rng, ["  ", "    "])
    if style == "plain":
        val = f"password:\n{ind}{ind}{pw}"
    elif style == "literal":
        val = f"password: |\n{ind}{ind}{pw}"
    else:
        val = f"password: >-\n{ind}{ind}{pw}"
    body = f"database:\n{ind}host: {_pick(rng, _HOSTS)}\n{ind}user: {_pick(rng, _USERS)}\n{ind}{val}\n{ind}pool: 10"
    text, lang = _frame(rng, body, block=True)
    return text, _halves(pw), lang


@_secret("yaml_nested")
def _(rng):
    tok = _r(rng, 40, _ALNUM)
    pw = _pw(rng, sym="-_")
    body = ("# values-prod.yaml\nglobal:\n  env: prod\nbackend:\n  secrets:\n    smtp:\n      user: noreply@example.com\n"
            f"      pass: {pw}\n    upstream:\n      apiToken:\n        {tok}\n")
    return body, _halves(pw) + _halves(tok)


@_secret("ini_continuation")
def _(rng):
    pw = _pw(rng, sym="!#%-_")
    text = _pick(rng, [
        f"$ cat ~/.my.cnf\n[client]\nuser = root\nhost = {_pick(rng, _HOSTS)}\npassword =\n    {pw}\n",
        f"[smtp]\nserver = smtp.office365.com\nport = 587\nlogin = alerts@example.com\npassword =\n\t{pw}\n",
        f"# config.ini\n[database]\nuser={_pick(rng, _USERS)}\npassword={pw}\n",
    ])
    return text, _halves(pw)


@_secret("json_config")
def _(rng):
    pw = _pw(rng, sym="!#%^*-_")
    cs = _r(rng, 40, _ALNUM)
    d = {"db": {"host": _pick(rng, _HOSTS), "port": 5432, "user": _pick(rng, _USERS), "password": pw},
         "oauth": {"client_id": f"{rng.randint(10**11, 10**12)}", "client_secret": cs}, "debug": False}
    text, lang = _frame(rng, json.dumps(d, indent=2), block=True)
    return text, _halves(pw) + _halves(cs), lang


@_secret("netrc")
def _(rng):
    tok, core = _crc_token(rng, "ghp_")
    pw = _pw(rng, sym="!#-_")
    text = (f"$ cat ~/.netrc\nmachine api.github.com\n  login {_pick(rng, ['lchen', 'octo-bot'])}\n  password {tok}\n"
            f"machine ftp.partner.example.com login upload password {pw}\n")
    return text, _halves(core) + _halves(pw)


@_secret("pgpass")
def _(rng):
    pw = _pw(rng, sym="!#%-_")
    text = f"~/.pgpass:\n{_pick(rng, _HOSTS)}:5432:{_pick(rng, _DBS)}:{_pick(rng, _USERS)}:{pw}\n*:*:*:postgres:{_pw(rng, sym='')}"
    # second password is also a secret
    second = text.rsplit(":", 1)[1]
    return text, _halves(pw) + _halves(second)


@_secret("kubeconfig_token")
def _(rng):
    ns = _pick(rng, ["ci", "deploy", "kube-system"])
    pl = {"iss": "kubernetes/serviceaccount", "kubernetes.io/serviceaccount/namespace": ns,
          "kubernetes.io/serviceaccount/secret.name": f"ci-deployer-token-{_r(rng, 5, _LOWNUM)}",
          "kubernetes.io/serviceaccount/service-account.name": "ci-deployer",
          "kubernetes.io/serviceaccount/service-account.uid": _uuid(rng),
          "sub": f"system:serviceaccount:{ns}:ci-deployer"}
    hdr = {"alg": "RS256", "kid": _r(rng, 43, _B64URL)}
    sig = _b64(_bytes(rng, 256), url=True, pad=False)
    tok = ".".join([_b64(json.dumps(hdr, separators=(",", ":")).encode(), url=True, pad=False),
                    _b64(json.dumps(pl, separators=(",", ":")).encode(), url=True, pad=False), sig])
    text = ("apiVersion: v1\nkind: Config\nusers:\n- name: ci-deployer\n  user:\n"
            f"    token: {tok}\ncontexts:\n- context: {{cluster: prod, user: ci-deployer}}\n  name: prod\n")
    # only the signature makes the JWT usable; header/payload are mostly fixed JSON
    return text, _halves(sig)


@_secret("k8s_secret_base64")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    key = _r(rng, 32, _ALNUM)
    b_pw, b_key = _b64(pw.encode()), _b64(key.encode())
    text = ("$ kubectl get secret app-secrets -o yaml\napiVersion: v1\ndata:\n"
            f"  DB_PASSWORD: {b_pw}\n  API_KEY: {b_key}\n  DB_USER: {_b64(b'app')}\nkind: Secret\ntype: Opaque\n")
    return text, _halves(b_pw.rstrip("=")) + _halves(b_key.rstrip("="))


@_secret("docker_config_auth")
def _(rng):
    user = _pick(rng, ["acmebot", "ci", "lchen"])
    pw = _pw(rng, 24, sym="")
    blob = _b64(f"{user}:{pw}".encode())
    reg = _pick(rng, ["https://index.docker.io/v1/", "registry.gitlab.com", "harbor.corp.example.cn"])
    text = "$ cat ~/.docker/config.json\n" + json.dumps({"auths": {reg: {"auth": blob}}}, indent=4)
    return text, _halves(blob.rstrip("="))


@_secret("terraform_tfvars")
def _(rng):
    pw = _pw(rng, sym="!#%-_")
    cs = _r(rng, 3, _ALNUM) + "8Q~" + _r(rng, 34, _ALNUM + "_.-")
    text = f"# terraform.tfvars\nregion = \"eu-central-1\"\ndb_master_password = \"{pw}\"\narm_client_secret  = \"{cs}\"\n"
    return text, _halves(pw) + _halves(cs)


# ---- commands --------------------------------------------------------------
@_secret("mysql_cli")
def _(rng):
    pw = _pw(rng, sym="#%^-_")
    text = _pick(rng, [
        f"mysql -h {_pick(rng, _HOSTS)} -uroot -p'{pw}' -e 'show databases;'",
        f"mysql -u {_pick(rng, _USERS)} -p{pw.replace('#', 'x').replace('^', 'y')} {_pick(rng, _DBS)} < dump.sql",
        f"mysqldump --user=root --password='{pw}' --single-transaction {_pick(rng, _DBS)} > backup.sql",
    ])
    actual = pw if pw in text else pw.replace('#', 'x').replace('^', 'y')
    return text, _halves(actual)


@_secret("curl_basic")
def _(rng):
    pw = _pw(rng, sym="!#%-_")
    text = _pick(rng, [
        f"curl -u admin:'{pw}' https://es.internal:9200/_cat/indices?v",
        f"curl -sS --user \"ci-bot:{pw}\" -X POST https://jenkins.example.com/job/deploy/build",
        f"curl -u elastic:{pw.replace('!', 'Z').replace('#', 'q')} http://localhost:9200",
    ])
    actual = pw if pw in text else pw.replace('!', 'Z').replace('#', 'q')
    return text, _halves(actual)


@_secret("sshpass")
def _(rng):
    pw = _pw(rng, sym="#%-_")
    text = _pick(rng, [
        f"sshpass -p '{pw}' ssh -o StrictHostKeyChecking=no root@{_pick(rng, _HOSTS)} 'systemctl restart app'",
        f"sshpass -p {pw} scp build.tar.gz deploy@{_pick(rng, _HOSTS)}:/opt/app/",
    ])
    return text, _halves(pw)


@_secret("pgpassword_env")
def _(rng):
    pw = _pw(rng, sym="-_")
    text = f"PGPASSWORD={pw} psql -h {_pick(rng, _HOSTS)} -U {_pick(rng, _USERS)} -d {_pick(rng, _DBS)} -c 'select count(*) from orders'"
    text, lang = _frame(rng, text)
    return text, _halves(pw), lang


@_secret("docker_login")
def _(rng):
    pw = _pw(rng, sym="-_")
    reg = _pick(rng, ["registry.example.com", "ghcr.io", "harbor.corp.example.cn", "123456789012.dkr.ecr.us-east-1.amazonaws.com"])
    text = _pick(rng, [
        f"docker login -u ci -p {pw} {reg}",
        f"echo \"{pw}\" | docker login {reg} -u ci --password-stdin",
        f"docker login --username=ci --password={pw} {reg}\nWARNING! Using --password via the CLI is insecure. Use --password-stdin.",
    ])
    return text, _halves(pw)


@_secret("redis_cli_auth")
def _(rng):
    pw = _pw(rng, sym="")
    text = _pick(rng, [f"redis-cli -h {_pick(rng, _HOSTS)} -p 6379 -a {pw} --no-auth-warning info keyspace",
                       f"127.0.0.1:6379> AUTH {pw}\nOK"])
    return text, _halves(pw)


@_secret("sql_password")
def _(rng):
    pw = _pw(rng, sym="!#%-_")
    u = _pick(rng, _USERS)
    text = _pick(rng, [
        f"CREATE USER '{u}'@'%' IDENTIFIED BY '{pw}';\nGRANT SELECT ON {_pick(rng, _DBS)}.* TO '{u}'@'%';",
        f"ALTER USER {u} WITH PASSWORD '{pw}';",
        f"ALTER LOGIN sa WITH PASSWORD = '{pw}';",
    ])
    return text, _halves(pw)


@_secret("printenv_output")
def _(rng):
    gh, core = _crc_token(rng, "ghp_")
    sec = _r(rng, 40, _B64)
    text = ("$ printenv | grep -iE 'token|key|secret'\n"
            f"GITHUB_TOKEN={gh}\nAWS_SECRET_ACCESS_KEY={sec}\nSSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.1234\n")
    return text, _halves(core) + _halves(sec)


@_secret("base64_basic_blob")
def _(rng):
    pw = _pw(rng, 20, sym="!#-_")
    blob = _b64(f"{_pick(rng, ['admin', 'svc-report', 'grafana'])}:{pw}".encode())
    text = _pick(rng, [f"echo {blob} | base64 -d   # this is the creds for the report api",
                       f"the basic auth value is {blob}"])
    return text, _halves(blob.rstrip("="))


# ---- headers ---------------------------------------------------------------
@_secret("auth_bearer_header")
def _(rng):
    t = _r(rng, rng.randint(36, 64), _ALNUM + "-_.")
    text = _pick(rng, [
        f"curl https://api.partner.example.com/v2/orders -H 'Authorization: Bearer {t}'",
        f"> GET /v1/me HTTP/2\n> Host: api.example.com\n> authorization: Bearer {t}\n> user-agent: curl/8.5.0",
        f"headers = {{\"Authorization\": f\"Bearer {t}\"}}",
    ])
    return text, _halves(t)


@_secret("auth_basic_header")
def _(rng):
    pw = _pw(rng, 20, sym="!#-_")
    blob = _b64(f"{_pick(rng, _USERS)}:{pw}".encode())
    text, lang = _frame(rng, f"Authorization: Basic {blob}")
    return text, _halves(blob.rstrip("=")), lang


@_secret("api_key_header")
def _(rng):
    k = _r(rng, 40, _ALNUM)
    h = _pick(rng, ["X-Api-Key", "x-api-key", "Ocp-Apim-Subscription-Key", "X-Auth-Token"])
    text = f"curl -H \"{h}: {k}\" https://gateway.example.com/inventory/items?limit=5"
    return text, _halves(k)


@_secret("cookie_session")
def _(rng):
    sid = _r(rng, 32, _LOWNUM)
    csrf = _r(rng, 64, _ALNUM)
    v = _pick(rng, ["django", "express", "rails"])
    if v == "django":
        text = f"curl 'https://admin.example.com/api/users/' -H 'cookie: csrftoken={csrf}; sessionid={sid}'"
        cores = [sid] + _halves(csrf)
    elif v == "express":
        sig = _r(rng, 43, _B64URL)
        text = f"Set-Cookie: connect.sid=s%3A{sid}.{sig}; Path=/; HttpOnly"
        cores = [sid] + _halves(sig)
    else:
        sess = _r(rng, 120, _B64URL)
        text = f"Cookie: _myapp_session={sess}--{_r(rng, 40, _HEX)}; remember_user_token={csrf}"
        cores = _halves(sess) + _halves(csrf)
    return text, cores


# ---- assignments -----------------------------------------------------------
@_secret("assign_python")
def _(rng):
    t = _r(rng, rng.randint(32, 48), _ALNUM)
    name = _pick(rng, ["API_TOKEN", "PARTNER_API_KEY", "SECRET", "WEBHOOK_SIGNING_SECRET", "auth_token"])
    text = f"# settings_local.py\n{name} = \"{t}\"\nTIMEOUT = 30"
    return text, _halves(t)


@_secret("assign_js")
def _(rng):
    t = _r(rng, 40, _ALNUM + "_-")
    text = f"const apiKey = '{t}'; // TODO: move to env before merging"
    return text, _halves(t)


@_secret("export_shell")
def _(rng):
    t = _r(rng, rng.randint(32, 44), _ALNUM)
    name = _pick(rng, ["FOO_KEY", "ALGOLIA_ADMIN_KEY", "SENTRY_AUTH_TOKEN", "MAPBOX_SECRET_TOKEN", "INTERNAL_API_SECRET"])
    text, lang = _frame(rng, f"export {name}={t}")
    return text, _halves(t), lang


@_secret("dockerfile_env")
def _(rng):
    t = _r(rng, 36, _ALNUM)
    return f"FROM python:3.12-slim\nENV APP_ENV=prod\nENV API_SECRET={t}\nCOPY . /app", _halves(t)


@_secret("powershell_env")
def _(rng):
    t = _r(rng, 40, _ALNUM)
    text = _pick(rng, [f"$env:SERVICE_BUS_KEY = \"{t}\"", f"set SERVICE_BUS_KEY={t}", f"set -gx SERVICE_BUS_KEY {t}"])
    return text, _halves(t)


# ---- prose -----------------------------------------------------------------
@_secret("prose_en_password")
def _(rng):
    pw = _pw(rng, sym="!#%*-_")
    text = _pick(rng, [
        f"the password for the admin panel is {pw}",
        f"btw the grafana admin pw is {pw} - change it after you log in",
        f"Password for the staging box: {pw}.",
        f"we set the root password to \"{pw}\" on the new replica",
    ])
    return text, _halves(pw)


@_secret("prose_en_token")
def _(rng):
    t = _r(rng, rng.randint(32, 48), _ALNUM)
    text = _pick(rng, [f"my token is {t}", f"here's the api key: {t} (don't commit it)",
                       f"use {t} as the bearer for the partner sandbox", f"token → {t}"])
    return text, _halves(t)


@_secret("prose_en_login_pair")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"login: ops-admin / {pw}", f"creds are admin:{pw} for now",
                       f"user `qa_tester` pass `{pw}`"])
    return text, _halves(pw)


@_secret("passphrase_words")
def _(rng):
    words = [_pick(rng, _WORDS) for _ in range(5)]
    sep = _pick(rng, ["-", " ", "."])
    phrase = sep.join(words) + sep + str(rng.randint(10, 99))
    text = _pick(rng, [f"the office wifi password is {phrase}", f"key passphrase: {phrase}",
                       f"ssh 私钥的口令是 {phrase}"])
    return text, [phrase]


@_secret("gmail_app_password")
def _(rng):
    groups = [_r(rng, 4, _LO) for _ in range(4)]
    ap = " ".join(groups)
    text = _pick(rng, [f"EMAIL_HOST_PASSWORD = '{ap}'  # gmail app password",
                       f"gmail app password for the alerts account: {ap}"])
    return text, [ap, " ".join(groups[:2]), " ".join(groups[2:])]


@_secret("zh_mima_shi")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"跳板机 root 密码是{pw}，用完记得改", f"测试库的密码是 {pw} 别外传",
                       f"后台管理员密码是「{pw}」", f"服务器密码是{pw}。"])
    return text, _halves(pw), "zh"


@_secret("zh_fullwidth_colon")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"VPN 账号：zhangwei\n密码：{pw}", f"数据库密码：{pw}", f"Jenkins 管理员 密码：{pw}（临时的）"])
    return text, _halves(pw), "zh"


@_secret("zh_kouling")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"堡垒机口令为{pw}", f"那台交换机的 enable 口令为 {pw}", f"加密 zip 的口令为：{pw}"])
    return text, _halves(pw), "zh"


@_secret("zh_miyao")
def _(rng):
    k = _r(rng, 32, _ALNUM)
    text = _pick(rng, [f"秘钥: {k}", f"短信服务秘钥:{k}", f"支付回调的签名密钥是 {k}，在商户后台配置的", f"密钥={k}"])
    return text, _halves(k), "zh"


@_secret("zh_account_pair")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"账号 admin 密码 {pw}", f"用户名：ops，密码：{pw}，登录地址 http://10.1.2.3:8080",
                       f"测试账号 test01/{pw}"])
    return text, _halves(pw), "zh"


@_secret("zh_token_paste")
def _(rng):
    t = _r(rng, 40, _ALNUM)
    text = _pick(rng, [f"测试环境的 token 我贴一下 {t}", f"token发你了：{t}", f"这个是 api key {t} 别传群里"])
    return text, _halves(t), "zh"


# ---- split across lines / messages -----------------------------------------
@_secret("split_wrapped_token")
def _(rng):
    tok, core = _crc_token(rng, "ghp_")
    cut = rng.randint(14, 22)
    a, b = tok[:cut], tok[cut:]
    text = f"token (terminal wrapped it, sorry):\n{a}\n{b}"
    return text, [a[4:], b] if len(a) - 4 >= 8 else [b]


@_secret("split_two_messages")
def _(rng):
    k = _r(rng, 48, _ALNUM)
    a, b = k[:24], k[24:]
    text = _pick(rng, [f"sending the key in two parts. part 1: {a}\n...\npart 2: {b}",
                       f"key 分两段发：前半段 {a}\n后半段 {b}"])
    return text, [a, b]


@_secret("split_key_next_line")
def _(rng):
    pw = _pw(rng, sym="!#-_")
    text = _pick(rng, [f"admin password:\n{pw}\n(rotate monday)", f"the secret is below\n\n    {pw}\n",
                       f"密码\n{pw}"])
    return text, _halves(pw)


# ---- hostile characters and other framings (added with the store's choke point) ----
@_secret("zero_width_split_token")
def _(rng):
    """A token with an invisible character inside: a copy-paste still yields the token."""
    tok, core = _crc_token(rng, "ghp_")
    cut = rng.randint(10, 28)
    zw = _pick(rng, ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e"])
    text = _pick(rng, [f"use this one for CI: {tok[:cut]}{zw}{tok[cut:]}",
                       f"GITHUB_TOKEN={tok[:cut]}{zw}{tok[cut:]}",
                       f"新的 token：{tok[:cut]}{zw}{tok[cut:]}"])
    a, b = tok[4:cut], tok[cut:]
    return text, [c for c in (a, b) if len(c) >= 8]


@_secret("html_password_field")
def _(rng):
    pw = _pw(rng, sym="!#%_")
    text = _pick(rng, [f'<input type="password" name="pw" value="{pw}">',
                       f"the saved form has <input id='db-pass' type='password' value='{pw}' /> in it"])
    return text, _halves(pw)


@_secret("curly_quoted_password")
def _(rng):
    pw = _pw(rng, sym="#-_")
    text = _pick(rng, [f"Password: \u201c{pw}\u201d", f"密码：「{pw}」", f"token: \u201c{pw}\u201d (expires friday)"])
    return text, _halves(pw)


@_secret("base64_env_line")
def _(rng):
    pw = _pw(rng)
    blob = _b64(f"DB_PASSWORD={pw}".encode())
    return f"echo {blob} | base64 -d >> .env", _halves(blob)


# ==========================================================================
# BENIGN GENERATORS — each returns (text, keep) or (text, keep, lang)
# ==========================================================================
_AUTHORS = ["Li Wei <liwei@example.com>", "Sam Ortiz <sam@example.org>", "Priya N <priya@corp.example>"]


@_benign("git_sha_short")
def _(rng):
    s = _r(rng, 7, _HEX)
    text = _pick(rng, [f"fixed in {s}, can you cherry-pick it to release/2.4?", f"regression came in with {s} (the retry refactor)",
                       f"这个 bug 是 {s} 引入的"])
    return text, [s]


@_benign("git_sha_full_log")
def _(rng):
    s = _r(rng, 40, _HEX)
    text = (f"commit {s}\nAuthor: {_pick(rng, _AUTHORS)}\nDate:   Tue Mar 4 10:2{rng.randint(0, 9)}:11 2025 +0800\n\n"
            f"    fix(auth): refresh token before expiry\n")
    return text, [s]


@_benign("git_diff_index")
def _(rng):
    a, b = _r(rng, 9, _HEX), _r(rng, 9, _HEX)
    text = f"diff --git a/src/auth/token.py b/src/auth/token.py\nindex {a}..{b} 100644\n--- a/src/auth/token.py\n+++ b/src/auth/token.py"
    return text, [a, b, "src/auth/token.py"]


@_benign("git_range")
def _(rng):
    a, b = _r(rng, 12, _HEX), _r(rng, 12, _HEX)
    return f"git log --oneline {a}..{b} -- migrations/", [f"{a}..{b}"]


@_benign("uuid_request_id")
def _(rng):
    u = _uuid(rng)
    text = _pick(rng, [f"X-Request-Id: {u}", f"ERROR request_id={u} upstream timed out after 30s",
                       f"sentry event {u.replace('-', '')} has the full stack"])
    keep = [u] if u in text else [u.replace("-", "")]
    return text, keep


@_benign("uuid_file_name")
def _(rng):
    u = _uuid(rng)
    return f"uploads/{u}.png returned 404 from the CDN but the object is in S3", [f"uploads/{u}.png"]


@_benign("cargo_lock_checksum")
def _(rng):
    h = _r(rng, 64, _HEX)
    text = f"[[package]]\nname = \"serde_json\"\nversion = \"1.0.1{rng.randint(10, 40)}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{h}\""
    return text, [h]


@_benign("pip_hash")
def _(rng):
    h1, h2 = _r(rng, 64, _HEX), _r(rng, 64, _HEX)
    text = f"requests==2.32.3 \\\n    --hash=sha256:{h1} \\\n    --hash=sha256:{h2}"
    return text, [h1, h2]


@_benign("go_sum")
def _(rng):
    h = _b64(_bytes(rng, 32))
    text = f"github.com/spf13/cobra v1.8.{rng.randint(0, 3)} h1:{h}"
    return text, [h]


@_benign("yarn_lock_sha1")
def _(rng):
    s = _r(rng, 40, _HEX)
    text = f"lodash@^4.17.21:\n  version \"4.17.21\"\n  resolved \"https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{s}\""
    return text, [s]


@_benign("docker_digest")
def _(rng):
    h = _r(rng, 64, _HEX)
    text = _pick(rng, [f"image: ghcr.io/acme/api@sha256:{h}", f"FROM python:3.12-slim@sha256:{h}",
                       f"Digest: sha256:{h}\nStatus: Downloaded newer image for nginx:1.27"])
    return text, [h]


@_benign("docker_ps_ids")
def _(rng):
    a, b = _r(rng, 12, _HEX), _r(rng, 12, _HEX)
    text = (f"CONTAINER ID   IMAGE         COMMAND                  STATUS\n{a}   postgres:16   \"docker-entrypoint.s…\"   Up 3 hours\n"
            f"{b}   redis:7       \"redis-server\"           Up 3 hours")
    return text, [a, b]


@_benign("npm_integrity")
def _(rng):
    h = _b64(_bytes(rng, 64))
    text = f"\"node_modules/react\": {{\n  \"version\": \"18.3.1\",\n  \"resolved\": \"https://registry.npmjs.org/react/-/react-18.3.1.tgz\",\n  \"integrity\": \"sha512-{h}\"\n}}"
    return text, [h]


@_benign("sri_hash")
def _(rng):
    h = _b64(_bytes(rng, 48))
    return f'<script src="https://cdn.jsdelivr.net/npm/htmx.org@2.0.3" integrity="sha384-{h}" crossorigin="anonymous"></script>', [h]


@_benign("etag_header")
def _(rng):
    e = _r(rng, 40, _HEX)
    return f"HTTP/1.1 304 Not Modified\nETag: \"{e}\"\nCache-Control: max-age=60", [e]


@_benign("md5_checksums")
def _(rng):
    a, b = _r(rng, 32, _HEX), _r(rng, 32, _HEX)
    return f"$ md5sum dist/*\n{a}  dist/app-1.4.2.tar.gz\n{b}  dist/app-1.4.2-py3-none-any.whl", [a, b]


@_benign("mongo_objectid")
def _(rng):
    o = _r(rng, 24, _HEX)
    return f"db.orders.find({{_id: ObjectId(\"{o}\")}})  // this one has the duplicated line items", [o]


@_benign("ulid")
def _(rng):
    u = "01J" + _r(rng, 23, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    return f"job {u} failed at step 3 (resize), retrying", [u]


@_benign("trace_ids")
def _(rng):
    t, s = _r(rng, 32, _HEX), _r(rng, 16, _HEX)
    return f"traceparent: 00-{t}-{s}-01\nlook up trace {t} in tempo", [t, s]


@_benign("k8s_pod_names")
def _(rng):
    rs = _r(rng, 9, "bcdfghjklmnpqrstvwxz2456789")
    p = _r(rng, 5, "bcdfghjklmnpqrstvwxz2456789")
    name = f"orders-api-{rs}-{p}"
    return f"$ kubectl logs {name} -n prod --previous\nError: OOMKilled", [name]


@_benign("hashed_assets")
def _(rng):
    a, b = _r(rng, 8, _HEX), _r(rng, 20, _HEX)
    return f"dist/assets/index-{a}.js   412.8 kB │ gzip: 131.2 kB\nstatic/js/main.{b}.chunk.js", [f"index-{a}.js", f"main.{b}.chunk.js"]


@_benign("nix_store_path")
def _(rng):
    h = _r(rng, 32, "0123456789abcdfghijklmnpqrsvwxyz")
    return f"/nix/store/{h}-python3-3.11.9/bin/python3: No module named pip", [f"/nix/store/{h}-python3-3.11.9"]


@_benign("alembic_revision")
def _(rng):
    r1, r2 = _r(rng, 12, _HEX), _r(rng, 12, _HEX)
    text = f"\"\"\"add api_keys table\n\nRevision ID: {r1}\nRevises: {r2}\n\"\"\"\nrevision = '{r1}'\ndown_revision = '{r2}'"
    return text, [f"revision = '{r1}'", f"down_revision = '{r2}'"]


@_benign("env_git_sha_export")
def _(rng):
    s = _r(rng, 40, _HEX)
    text = f"export GIT_SHA={s}\nexport BUILD_NUMBER={rng.randint(100, 9999)}\ndocker build --build-arg GIT_SHA=$GIT_SHA ."
    return text, [f"GIT_SHA={s}"]


@_benign("host_port")
def _(rng):
    p = rng.choice([5432, 6379, 3306, 9200, 27017, 8443])
    h = _pick(rng, ["db.staging.internal", "10.0.3.17", "cache-01.prod.example.net"])
    text = _pick(rng, [f"the service listens on {h}:{p}, firewall only allows the bastion", f"连不上 {h}:{p}，是不是安全组没开"])
    return text, [f"{h}:{p}"]


@_benign("ipv6_mac")
def _(rng):
    v6 = "2001:db8:" + ":".join(_r(rng, 4, _HEX) for _ in range(3)) + "::1"
    mac = ":".join(_r(rng, 2, _HEX) for _ in range(6))
    return f"eth0 inet6 {v6}/64 ether {mac}", [v6, mac]


@_benign("url_no_creds")
def _(rng):
    n = rng.randint(100, 9999)
    u = _pick(rng, [f"https://github.com/acme/{_pick(rng, _PROJ)}/pull/{n}",
                    f"https://grafana.example.com/d/{_r(rng, 9, _ALNUM)}/api-latency?orgId=1&from=now-6h",
                    f"https://docs.example.com/auth/reset-password?step=2",
                    f"https://oauth2.googleapis.com/token"])
    return f"see {u}", [u]


@_benign("db_url_no_password")
def _(rng):
    u = f"postgresql://{_pick(rng, _USERS)}@{_pick(rng, _HOSTS)}:5432/{_pick(rng, _DBS)}"
    return f"DATABASE_URL={u}  # password comes from ~/.pgpass", [u]


@_benign("ssh_target")
def _(rng):
    t = f"{_pick(rng, ['deploy', 'ubuntu', 'ec2-user', 'root'])}@{_pick(rng, ['10.0.4.17', 'bastion.example.com', 'build-03.internal'])}"
    return _pick(rng, [f"ssh -i ~/.ssh/id_ed25519 -p 2222 {t}", f"先 ssh {t} 再跳到内网"]), [t]


@_benign("git_ssh_remote")
def _(rng):
    r = f"git@github.com:acme/{_pick(rng, _PROJ)}.git"
    return f"git remote set-url origin {r}", [r]


@_benign("placeholder_angle")
def _(rng):
    v = _pick(rng, ["<your-password>", "<YOUR_API_KEY>", "<token>", "your_api_key_here"])
    text = _pick(rng, [f"README says: set password={v} in config.ini before the first run",
                       f"the docs example is `API_KEY={v} ./run.sh`, replace it with yours",
                       f"文档里写的是 password={v}，自己换成真实的"])
    return text, [v]


@_benign("placeholder_env_ref")
def _(rng):
    text = _pick(rng, ["DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
                       "mysql -u root -p\"$MYSQL_ROOT_PASSWORD\" -e 'select 1'",
                       "PGPASSWORD=$DB_PASS psql -h db -U app",
                       "password: ${SMTP_PASSWORD:?must be set}"])
    keep = [k for k in ["${DB_PASSWORD}", "$MYSQL_ROOT_PASSWORD", "$DB_PASS", "${SMTP_PASSWORD:?must be set}"] if k in text]
    return text, keep


@_benign("placeholder_template")
def _(rng):
    text = _pick(rng, ["env:\n  NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
                       "password: {{ .Values.db.password | quote }}",
                       "db_password = \"{{ vault_db_password }}\""])
    keep = [k for k in ["${{ secrets.NPM_TOKEN }}", "{{ .Values.db.password | quote }}", "{{ vault_db_password }}"] if k in text]
    return text, keep


@_benign("placeholder_masked")
def _(rng):
    text = _pick(rng, ["password: \"********\"  # set in CI", "API_KEY=xxxxxxxxxxxxxxxx", "token: REDACTED"])
    keep = [k for k in ["********", "xxxxxxxxxxxxxxxx", "REDACTED"] if k in text]
    return text, keep


@_benign("var_name_only")
def _(rng):
    text = _pick(rng, ["make sure SECRET_KEY and STRIPE_WEBHOOK_SECRET are set in the prod env, otherwise boot fails",
                       "we renamed AWS_SECRET_ACCESS_KEY to DEPLOY_AWS_SECRET in the workflow",
                       "SECRET_KEY 没配的话 django 起不来"])
    keep = [k for k in ["SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "AWS_SECRET_ACCESS_KEY", "DEPLOY_AWS_SECRET"] if k in text]
    return text, keep


@_benign("env_read_code")
def _(rng):
    text = _pick(rng, ['stripe.api_key = os.environ["STRIPE_SECRET_KEY"]',
                       "const token = process.env.GITHUB_TOKEN ?? '';",
                       'dsn := os.Getenv("DATABASE_URL")',
                       "password = settings.get('db.password') or getpass.getpass()"])
    keep = [k for k in ['os.environ["STRIPE_SECRET_KEY"]', "process.env.GITHUB_TOKEN", 'os.Getenv("DATABASE_URL")',
                        "getpass.getpass()"] if k in text]
    return text, keep


@_benign("version_strings")
def _(rng):
    v = f"{rng.randint(1, 4)}.{rng.randint(0, 40)}.{rng.randint(0, 20)}"
    text = f"bumped fastapi to {v}, node v20.11.1, psycopg 3.2.1, 1.0.0-rc.2+build.{rng.randint(100, 999)}"
    return text, [v, "v20.11.1", "1.0.0-rc.2+build."]


@_benign("timestamps")
def _(rng):
    ms = rng.randint(1_700_000_000_000, 1_760_000_000_000)
    iso = f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T0{rng.randint(0, 9)}:1{rng.randint(0, 9)}:00.{rng.randint(100, 999)}Z"
    return f"created_at={iso} updated_ms={ms}", [iso, str(ms)]


@_benign("snake_case_ids")
def _(rng):
    f = _pick(rng, ["compute_secret_rotation_schedule_for_tenant", "validate_password_reset_token_expiry",
                    "load_api_key_permissions_from_cache", "test_token_refresh_handles_clock_skew_gracefully"])
    return f"the failing test calls {f}() twice", [f]


@_benign("pascal_ids")
def _(rng):
    c = _pick(rng, ["PasswordResetTokenGenerator", "ApiKeyAuthenticationMiddleware", "SecretsManagerCredentialProvider",
                    "OAuth2ClientCredentialsGrant"])
    return f"subclass {c} and override check_token", [c]


@_benign("llm_token_talk")
def _(rng):
    n = _pick(rng, ["4096", "8192", "200000"])
    text = _pick(rng, [f"set max_tokens={n} and the tokenizer counts ~1.3 tokens per word",
                       f"prompt is 12k tokens, context window {n}",
                       f"token 数超了，max_tokens 改成 {n}"])
    return text, ["max_tokens" if "max_tokens" in text else "tokens", n]


@_benign("non_secret_assignments")
def _(rng):
    text = _pick(rng, ['API_KEY_HEADER = "X-Api-Key"', 'TOKEN_URL = "https://oauth2.googleapis.com/token"',
                       'SECRET_KEY_ENV_VAR = "DJANGO_SECRET_KEY"', 'password_field = "password_hash"',
                       'AUTH_TOKEN_TTL_SECONDS = 3600'])
    return text, [text]


@_benign("aws_non_secret_env")
def _(rng):
    text = "export AWS_REGION=us-east-1\nexport AWS_PROFILE=staging\nexport AWS_SDK_LOAD_CONFIG=1"
    return text, ["AWS_REGION=us-east-1", "AWS_PROFILE=staging"]


@_benign("aws_arn_ids")
def _(rng):
    acct = str(rng.randint(10**11, 10**12 - 1))
    inst = "i-0" + _r(rng, 16, _HEX)
    sg = "sg-0" + _r(rng, 16, _HEX)
    text = f"role arn:aws:iam::{acct}:role/github-deployer can't describe {inst} in {sg}"
    return text, [f"arn:aws:iam::{acct}:role/github-deployer", inst, sg]


@_benign("regex_token_patterns")
def _(rng):
    text = _pick(rng, ['GH_RE = re.compile(r"ghp_[A-Za-z0-9]{36}")',
                       "rule: (?i)aws_secret_access_key\\s*=\\s*[A-Za-z0-9/+=]{40}",
                       "const slackRe = /xox[baprs]-[0-9A-Za-z-]{10,48}/;"])
    keep = [k for k in ["ghp_[A-Za-z0-9]{36}", "[A-Za-z0-9/+=]{40}", "xox[baprs]-[0-9A-Za-z-]{10,48}"] if k in text]
    return text, keep


@_benign("token_prefix_docs")
def _(rng):
    text = _pick(rng, ["GitHub classic tokens start with ghp_ and AWS key ids with AKIA, so the pre-commit hook greps for those",
                       "stripe test keys are sk_test_..., live ones sk_live_..., never paste live ones here",
                       "Slack bot tokens look like xoxb-… and user tokens xoxp-…"])
    keep = [k for k in ["ghp_", "AKIA", "sk_test_", "sk_live_", "xoxb-", "xoxp-"] if k in text]
    return text, keep


@_benign("cli_password_prompt")
def _(rng):
    text = _pick(rng, ["mysql -u root -p -h 127.0.0.1", "psql -h db -U app -W",
                       "cat ~/.ghcr_token | docker login ghcr.io -u ci --password-stdin",
                       "curl -u admin https://es.internal:9200  (it prompts for the password)"])
    return text, [text.split("  (")[0]]


@_benign("secret_file_paths")
def _(rng):
    text = _pick(rng, ["ssl_certificate_key /etc/nginx/ssl/api.example.com.key;",
                       "chmod 600 ~/.ssh/id_ed25519 ~/.aws/credentials",
                       "cp .env.example .env and fill in the blanks"])
    return text, [text]


@_benign("base64_text")
def _(rng):
    s = _pick(rng, ["hello world", "deploy finished without errors", "the quick brown fox jumps over the lazy dog",
                    "{\"feature\":\"dark-mode\",\"enabled\":true}"])
    b = _b64(s.encode())
    return f"echo {b} | base64 -d   # prints: {s}", [b]


@_benign("ssh_public_key")
def _(rng):
    blob = _b64(b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + _bytes(rng, 32))
    line = f"ssh-ed25519 {blob} ci@build-runner"
    return f"add this to authorized_keys on the bastion:\n{line}", [blob]


@_benign("x509_certificate")
def _(rng):
    der = bytes.fromhex("3082030d308201f5a00302010202") + _bytes(rng, 500)
    lines = _wrap_lines(_b64(der), 64)
    text = "-----BEGIN CERTIFICATE-----\n" + "\n".join(lines) + "\n-----END CERTIFICATE-----"
    return "CA bundle for the internal registry (public cert):\n" + text, ["-----BEGIN CERTIFICATE-----", lines[3], lines[-2]]


@_benign("oauth_client_id_public")
def _(rng):
    cid = f"{rng.randint(10**11, 10**12 - 1)}-{_r(rng, 32, _LOWNUM)}.apps.googleusercontent.com"
    return f"GOOGLE_CLIENT_ID={cid}", [cid]


@_benign("revoked_key_last4")
def _(rng):
    l4 = _r(rng, 4, _HEX)
    return f"revoked the old stripe key (the one ending in {l4}), new one is in Vault under secret/payments", [f"ending in {l4}", "secret/payments"]


@_benign("hex_colors")
def _(rng):
    a, b = _r(rng, 6, _HEX), _r(rng, 6, _HEX)
    return f".btn-primary {{ background: #{a}; border-color: #{b}; }}", [f"#{a}", f"#{b}"]


@_benign("stack_addresses")
def _(rng):
    a = "0x7f" + _r(rng, 10, _HEX)
    return f"Segmentation fault at {a} in libssl.so.3 (SSL_read+0x4c)", [a, "SSL_read+0x4c"]


@_benign("ticket_ids")
def _(rng):
    j = f"PAY-{rng.randint(100, 9999)}"
    c = f"CVE-202{rng.randint(3, 5)}-{rng.randint(10000, 49999)}"
    return f"{j}: bump openssl for {c}", [j, c]


@_benign("password_policy_en")
def _(rng):
    text = _pick(rng, ["password must be at least 12 chars and not one of the last 5 passwords",
                       "the password reset email expires after 30 minutes"])
    return text, [text]


@_benign("zh_password_location")
def _(rng):
    text = _pick(rng, ["密码在 1Password 里，搜 prod-db", "密码我私聊发你，别贴群里", "忘记密码的流程要改成短信验证"])
    return text, [text], "zh"


@_benign("zh_fullwidth_nonsecret")
def _(rng):
    text = _pick(rng, ["密码：见 Vault 里的 secret/data/mysql-prod", "口令：找运维申请", "秘钥：在 KMS 里托管，代码里不要写死"])
    return text, [text.split("：", 1)[1]], "zh"


@_benign("zh_token_no_value")
def _(rng):
    text = _pick(rng, ["token 过期了，重新登录一下就好", "秘钥轮换周期改成 90 天", "口令策略：至少 12 位，含大小写和数字"])
    return text, [text], "zh"


@_benign("zh_commit_ref")
def _(rng):
    a, b = _r(rng, 7, _HEX), _r(rng, 40, _HEX)
    return f"先回滚到 {a} 吧，{b} 之后的提交都有问题", [a, b], "zh"


@_benign("zh_uuid_order")
def _(rng):
    u = _uuid(rng)
    return f"订单 {u} 的支付回调一直 502，日志里 trace 也对不上", [u], "zh"


@_benign("zh_env_ref")
def _(rng):
    text = _pick(rng, ["密码从环境变量 DB_PASSWORD 读，compose 里写 ${DB_PASSWORD} 就行，别写死",
                       "token 用 ${{ secrets.DEPLOY_TOKEN }} 注入，本地调试自己 export 一下"])
    keep = [k for k in ["${DB_PASSWORD}", "DB_PASSWORD", "${{ secrets.DEPLOY_TOKEN }}"] if k in text]
    return text, keep, "zh"


@_benign("zh_sha256_verify")
def _(rng):
    h = _r(rng, 64, _HEX)
    return f"安装包下载完校验一下 sha256：{h}", [h], "zh"


@_benign("zh_redis_no_auth")
def _(rng):
    u = f"redis://{_pick(rng, ['redis', 'cache-01', '10.0.2.8'])}:6379/{rng.randint(0, 15)}"
    return f"内网 Redis 不用密码，连接串就是 {u}", [u], "zh"


@_benign("emoji_zwj_and_persian_zwnj")
def _(rng):
    text = _pick(rng, ["the family emoji 👨\u200d👩\u200d👧 broke the layout again",
                       "Persian label می\u200cخواهم renders wrong without the ZWNJ"])
    keep = [k for k in ["👨\u200d👩\u200d👧", "می\u200cخواهم"] if k in text]
    return text, keep


# ==========================================================================
# public API
# ==========================================================================
def _norm(out) -> tuple:
    if len(out) == 3:
        return out
    text, items = out
    return text, items, ("zh" if _has_cjk(text) else "en")


def _dedupe(items):
    seen, res = set(), []
    for c in items:
        if c not in seen:
            seen.add(c)
            res.append(c)
    return res


def secret_cases(rng: random.Random) -> list[dict]:
    """Each: {"format": "short-name", "lang": "en"|"zh", "text": "what a user or tool output would contain",
              "cores": ["the random parts that must never be stored", ...]}"""
    cases = []
    for name, fn in _SECRET_GENS:
        text, cores, lang = _norm(fn(rng))
        if _has_cjk(text):
            lang = "zh"
        cases.append({"format": name, "lang": lang, "text": text, "cores": _dedupe(cores)})
    return cases


def benign_cases(rng: random.Random) -> list[dict]:
    """Each: {"format": ..., "lang": "en"|"zh", "text": ..., "keep": ["substrings that must survive redaction"]}"""
    cases = []
    for name, fn in _BENIGN_GENS:
        text, keep, lang = _norm(fn(rng))
        if _has_cjk(text):
            lang = "zh"
        cases.append({"format": name, "lang": lang, "text": text, "keep": _dedupe(keep)})
    return cases


def check(secrets: list[dict], benign: list[dict]) -> list[str]:
    """Return a list of problems (empty == corpus is self-consistent)."""
    probs = []
    for c in secrets:
        if not c["cores"]:
            probs.append(f"{c['format']}: no cores")
        for core in c["cores"]:
            if len(core) < 8:
                probs.append(f"{c['format']}: core too short {core!r}")
            if core not in c["text"]:
                probs.append(f"{c['format']}: core not in text {core!r}")
    for b in benign:
        if not b["keep"]:
            probs.append(f"{b['format']}: no keep")
        for k in b["keep"]:
            if k not in b["text"]:
                probs.append(f"{b['format']}: keep not in text {k!r}")
    all_benign = "\n".join(b["text"] for b in benign)
    for c in secrets:
        for core in c["cores"]:
            if core in all_benign:
                probs.append(f"{c['format']}: core appears in a benign text {core!r}")
    for lst in (secrets, benign):
        names = [c["format"] for c in lst]
        if len(names) != len(set(names)):
            probs.append("duplicate format names")
    if len({c["format"] for c in secrets}) < 60:
        probs.append("fewer than 60 secret formats")
    if len({b["format"] for b in benign}) < 40:
        probs.append("fewer than 40 benign formats")
    return probs


def main(argv: list[str]) -> int:
    seed = int(argv[1]) if len(argv) > 1 else 20240611
    rng = random.Random(seed)
    secrets, benign = secret_cases(rng), benign_cases(rng)

    def show(s: str, limit: int = 420) -> str:
        return s if len(s) <= limit else s[:limit] + f"... [+{len(s) - limit} chars]"

    print(f"# seed {seed}\n\n## SECRET CASES")
    for c in secrets:
        print(f"\n--- [{c['format']}] lang={c['lang']} cores={len(c['cores'])}\n{show(c['text'])}")
    print("\n## BENIGN CASES")
    for b in benign:
        print(f"\n--- [{b['format']}] lang={b['lang']} keep={b['keep']!r}"[:300] + f"\n{show(b['text'])}")
    by_lang = lambda lst: {l: sum(1 for c in lst if c["lang"] == l) for l in ("en", "zh")}
    print(f"\n## COUNTS\nsecret formats: {len(secrets)} {by_lang(secrets)}  cores: {sum(len(c['cores']) for c in secrets)}")
    print(f"benign formats: {len(benign)} {by_lang(benign)}  keeps: {sum(len(b['keep']) for b in benign)}")
    # a few more seeds for the self-check
    probs = check(secrets, benign)
    for s in range(seed + 1, seed + 200):
        r = random.Random(s)
        probs += check(secret_cases(r), benign_cases(r))
    print("self-check:", "OK (200 seeds)" if not probs else f"{len(probs)} problems")
    for p in probs[:30]:
        print("  ", p)
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
