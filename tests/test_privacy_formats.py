"""Secret formats found missing by tests/benchmarks/bench_secrets.py, one test each, every one next
to the look-alikes that must stay as they are; and the store's one write path (records.scrub)
holding for every field a caller can fill, the user's `redact_patterns` included.

`python tests/benchmarks/bench_secrets.py --redact-only` gives the figures on the whole corpus.
"""

from __future__ import annotations

import json

import pytest

from memory import config as config_mod
from memory.embed import HashEmbedder
from memory.lang.privacy import redact
from memory.retrieval import graph_query
from memory.store import NewMemory, Store, graph
from memory.store import decisions as decisions_mod

# (text, the secret that must go): made-up values with a real secret's shape.
SECRETS = {
    "twilio pair in a constructor": (
        'client = Client("AC478f948624d560bf482870460d44f1a7", "5eae7863bf8b969c25c334e4d86528ea")',
        "5eae7863bf8b969c25c334e4d86528ea",
    ),
    "github token wrapped by the terminal": (
        "token (terminal wrapped it, sorry):\nghp_R8f2kLq9Zx7mN3\nvB5cT1yW4hJ6gD0sAe2Pq4",
        "vB5cT1yW4hJ6gD0sAe2Pq4",
    ),
    "a secret on a line below its announcement": (
        "the secret is below\n\n    R7hvV2xHppNisH#4ZOMBVZ\n",
        "R7hvV2xHppNisH#4ZOMBVZ",
    ),
    "a key sent in two parts": (
        "sending the key in two parts. part 1: ArrlehCUVxx6Ueotkw5Swk34\n...\npart 2: hED0EsS0L4RvPqFG8kMCTbQF",
        "ArrlehCUVxx6Ueotkw5Swk34",
    ),
    "a key sent in two halves, in Chinese": (
        "key 分两段发：前半段 cHENNNBLao1fcVLrMaFYsXXF\n后半段 7hrdhrjsAMRWWBMPbUX8rm0c",
        "7hrdhrjsAMRWWBMPbUX8rm0c",
    ),
    "an express session cookie": (
        "Set-Cookie: connect.sid=s%3Atjq9gddmpnfqqfq5lqat3oxp0hoahvg2.-UY8Qm3aSyAlCw4pdrIQGKkFlnUOLImDvWy1PP7m-4x; Path=/",
        "tjq9gddmpnfqqfq5lqat3oxp0hoahvg2",
    ),
    "an aliyun secret flag": (
        "aliyun configure set --access-key-id LTAI5tGPGEa1yiwxYsQLk5cH --access-key-secret PxIeDjFmxV92zuqwcRxejZh1L94ZPR",
        "PxIeDjFmxV92zuqwcRxejZh1L94ZPR",
    ),
    "an AK/SK pair in Chinese": (
        "阿里云 OSS 的 AK：LTAI5tnArKcNXiLsXU7Mj5SG\nSK：YPgRuol3R4Jysirs4MybK7nGM8qtTY",
        "YPgRuol3R4Jysirs4MybK7nGM8qtTY",
    ),
    "a tencent secret id": (
        "TENCENTCLOUD_SECRET_ID=AKIDwjPFijLVhLsGUmpRtHKawFxdrZIxgWFU",
        "wjPFijLVhLsGUmpRtHKawFxdrZIxgWFU",
    ),
    "an html password field": ('<input type="password" name="pw" value="ROnl89Sm995ytbxA">', "ROnl89Sm995ytbxA"),
    "a password in curly quotes": ("Password: \u201c9mhWp708DwGw5H\u201d", "9mhWp708DwGw5H"),
    "a token split by a zero-width space": (
        "use this one: ghp_R8f2kLq9Zx7m\u200bN3vB5cT1yW4hJ6gD0sAe2Pq4",
        "N3vB5cT1yW4hJ6gD0sAe2Pq4",
    ),
    "go mysql dsn": (
        "gorm 连不上 etl_user:zp#Y-W^ny-Mv!-3N@tcp(db.dev.local:3306)/core?parseTime=True",
        "zp#Y-W^ny-Mv!-3N",
    ),
    "go mysql dsn over a socket": ('dsn := "root:Qm7vX2kLp9@unix(/var/run/mysqld.sock)/app"', "Qm7vX2kLp9"),
    "amqp url": ("BROKER_URL=amqp://guest:s3cr3tPa55w0rd@rabbit:5672/", "s3cr3tPa55w0rd"),
    "ftp url": ("mirror from ftp://bob:hX9kL2mQ7p@files.example.com/pub", "hX9kL2mQ7p"),
    "smtp url": ("EMAIL_URL=smtp://mailer:Zx9#kLm2pQ@smtp.example.com:587", "Zx9#kLm2pQ"),
    "ldap url": ("bind with ldaps://cn=admin:Lq8zR3vN5t@ldap.corp:636", "Lq8zR3vN5t"),
    "redis-cli -a": ("redis-cli -h cache -p 6379 -a Zx9kLm2pQ7rT ping", "Zx9kLm2pQ7rT"),
    "redis-cli -a quoted": ('redis-cli -a "Zx9kLm2pQ7rT" -h cache', "Zx9kLm2pQ7rT"),
    "redis AUTH at the prompt": ("127.0.0.1:6379> AUTH 7muI6PyPt2iXhhBkg\nOK", "7muI6PyPt2iXhhBkg"),
    "redis requirepass": ("command: redis-server --requirepass U2L42aqyiP9ME2OFQra", "U2L42aqyiP9ME2OFQra"),
    "feishu webhook": (
        "curl -X POST https://open.feishu.cn/open-apis/bot/v2/hook/6cf34202-07ce-4dbc-a257-6112e7e4904b",
        "6cf34202-07ce-4dbc-a257-6112e7e4904b",
    ),
    "lark webhook": (
        "alerts -> https://open.larksuite.com/open-apis/bot/v2/hook/9840f6ca-f9e4-49ab-bcc9-76d6854fa8d9",
        "9840f6ca-f9e4-49ab-bcc9-76d6854fa8d9",
    ),
    "dingtalk webhook": (
        "钉钉：https://oapi.dingtalk.com/robot/send?access_token=9e30c63e77a7ee280d6c2617b9979fe47440a21a573655793d4a768409f14d9a",
        "9e30c63e77a7ee280d6c2617b9979fe47440a21a573655793d4a768409f14d9a",
    ),
    "dingtalk signing secret": (
        "（加签 SECecb8e30bddc606e063f16ebe1f7d731372fbe3c1858d8b83e32062cef5ac52e2）",
        "ecb8e30bddc606e063f16ebe1f7d731372fbe3c1858d8b83e32062cef5ac52e2",
    ),
    "slack webhook": (
        "hook https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghij0123456789ABCD",
        "abcdefghij0123456789ABCD",
    ),
    "discord webhook": (
        "https://discord.com/api/webhooks/112233445566778899/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefgh",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefgh",
    ),
    "wecom webhook": (
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=8e2f1c4a-3b5d-4e6f-9a7b-1c2d3e4f5a6b",
        "8e2f1c4a-3b5d-4e6f-9a7b-1c2d3e4f5a6b",
    ),
    "hex hmac key in an assignment": (
        'hmac_key = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
        "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    "hex session secret in yaml": (
        "session_secret: 4bf92f3577b34da6a3ce929d0e0e4736",
        "4bf92f3577b34da6a3ce929d0e0e4736",
    ),
    "an environment variable's key": (
        '$env:SERVICE_BUS_KEY = "89HkIxiwmKt9iuq5ZvHvTvbexkUncr3klkkSvjsO"',
        "89HkIxiwmKt9iuq5ZvHvTvbexkUncr3klkkSvjsO",
    ),
    "a random value that reads like words": (
        "export AWS_SECRET_ACCESS_KEY=o2det4eEvtrZeEQqMuxgMdqb8O1tkehtF9nyhcOa",
        "o2det4eEvtrZeEQqMuxgMdqb8O1tkehtF9nyhcOa",
    ),
    "a shell literal that reads like a name": (
        "PGPASSWORD=bRJuetmohs_jMfarzlB_0O psql -h db",
        "bRJuetmohs_jMfarzlB_0O",
    ),
    "a password with an ampersand": ("DB_PASSWORD=Tr0ub4dor&3xyz", "Tr0ub4dor&3xyz"),
    "a password with a semicolon": ("password=Tr0ub;4dor3xyz next", "Tr0ub;4dor3xyz"),
    "yaml value on the next line": (
        "database:\n  password:\n    JdTSbcqaoH_WN6n_o3O\n  pool: 10",
        "JdTSbcqaoH_WN6n_o3O",
    ),
    "ini continuation line": ("[client]\npassword =\n    ViGkuceOC%PB8k4JiL6GQ\n", "ViGkuceOC%PB8k4JiL6GQ"),
    "pgpass": ("~/.pgpass:\n*:*:*:postgres:M6ktUJEyYMwN1nmN1Y3", "M6ktUJEyYMwN1nmN1Y3"),
    "sql identified by": ("CREATE USER 'ci'@'%' IDENTIFIED BY 'cVd4OYNTIYun_Dka7A';", "cVd4OYNTIYun_Dka7A"),
    "sql with password": ("ALTER USER app WITH PASSWORD 'Hq3#vLm9Xz2p';", "Hq3#vLm9Xz2p"),
    "echo into docker login": (
        'echo "FGb__Y_UV-VNI_Xi1BMu" | docker login ghcr.io -u ci --password-stdin',
        "FGb__Y_UV-VNI_Xi1BMu",
    ),
    "curl -u with a quoted password": (
        "curl -u admin:'d#3IkzB!%Wk3FL#LTA' https://es.internal:9200",
        "d#3IkzB!%Wk3FL#LTA",
    ),
    "oracle thin jdbc": ("jdbc:oracle:thin:app/q-EqceaXx7D-*26@//db.dev.local:1521/ORCLPDB1", "q-EqceaXx7D-*26"),
    "az login -p": (
        "az login --service-principal -u x -p '1IS3Q~tYKi7lZ~13DlMoMCR7Jf5ul8.9OIUGKLv0'",
        "1IS3Q~tYKi7lZ~13Dl",
    ),
    "pw in a sentence": ("btw the grafana admin pw is D-9HoVWUQzuoJZ - change it", "D-9HoVWUQzuoJZ"),
    "words between the label and the value": (
        "Password for the staging box: x#KU0xrzFjwwqpU!Io.",
        "x#KU0xrzFjwwqpU!Io",
    ),
    "the password for ... is": ("the password for the admin panel is RC%WRfw*KaOgvY4CdW520", "RC%WRfw*KaOgvY4CdW520"),
    "a login pair": ("creds are admin:QTvlFIFlSKe4R4w for now", "QTvlFIFlSKe4R4w"),
    "a login pair with a slash": ("login: ops-admin / q#M9aVr#8CG-#ZmRX", "q#M9aVr#8CG-#ZmRX"),
    "a quoted value after pass": ("user `qa_tester` pass `A-esjdJxC8A4LUS_L#`", "A-esjdJxC8A4LUS_L#"),
    "a chinese account pair": ("测试账号 test01/C!9oiLVe_S#1TO3m", "C!9oiLVe_S#1TO3m"),
    "口令为：": ("加密 zip 的口令为：c509#f8dor#DuRIU0", "c509#f8dor#DuRIU0"),
    "a google app password": (
        "EMAIL_HOST_PASSWORD = 'oxdv crhf ogsl yibe'  # gmail app password",
        "oxdv crhf ogsl yibe",
    ),
    "an app password after words": (
        "gmail app password for the alerts account: tqsl bqbc nkql rhjq",
        "tqsl bqbc nkql rhjq",
    ),
    "a diceware passphrase": (
        "key passphrase: ember indigo goblet cobalt kettle 61",
        "ember indigo goblet cobalt kettle",
    ),
    "an aliyun access key id": ("ALIBABA_CLOUD_ACCESS_KEY_ID=LTAI5tRuaKmIjt0Uxiocgzaj", "LTAI5tRuaKmIjt0Uxiocgzaj"),
    # Generated values of letters only: the secret's name is all that tells them from a word.
    "an aws secret key of letters only": (
        "aws_secret_access_key = VYSxgitQDXtiJOkwhFroiTDMVYSxgitQDXtiJOkw",
        "VYSxgitQDXtiJOkwhFroiTDMVYSxgitQDXtiJOkw",
    ),
    "a yaml password of letters only on the next line": (
        "ledger-api:\n  db_password:\n    bfOABSyzlMPSDgPOPUIFmyFo\n",
        "bfOABSyzlMPSDgPOPUIFmyFo",
    ),
    "an ini password of letters only on the next line": (
        "[billing]\npassword =\n  XAvmcrvaKZJmheIItNyUdXrz\n",
        "XAvmcrvaKZJmheIItNyUdXrz",
    ),
    "a password of letters only in a sentence": (
        "the password for the admin panel is XaVmcRvAkZjmHe",
        "XaVmcRvAkZjmHe",
    ),
    "a password of lower-case letters only": ("the password is qzvkxwrtplmnbg", "qzvkxwrtplmnbg"),
    "an openai project key of letters only": (
        "OPENAI_KEY sk-proj-CsaMMHXCNqPXUEPFIXJqzYZZCsaMMHXCNqPXUEPFIXJqzYZZ",
        "CsaMMHXCNqPXUEPFIXJqzYZZ",
    ),
    "a discord bot token whose parts repeat": (
        "MTAyvvc74odwDHBfZdoS81X9.Gyvvc7.yvvc74odwDHBfZdoS81X9ORoyvvc74odwDHBfZ",
        "odwDHBfZdoS81X9ORo",
    ),
    "a discord bot token of letters only": (
        "MTAbfOABSyzlMPSDgPOPUIFm.GbfOAB.bfOABSyzlMPSDgPOPUIFmyFobfOABSyzlMPSDg",
        "bfOABSyzlMPSDgPOPUIFmyFobfOABSyzlMPSDg",
    ),
}

# Text that looks like the formats above and holds no secret: kept exactly.
BENIGN = [
    "fixed in 3f9a2c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 and cherry-picked 3f9a2c1",
    "request 6cf34202-07ce-4dbc-a257-6112e7e4904b failed with 502",
    "postgres listens on 5432, redis on 6379, the app on :8080",
    "bumped to v2.31.0-rc.1 and 1.0.0+build.20240611",
    'Cargo.lock: checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "sha256sum says 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  dist/app.tar.gz",
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
    'dsn := "root@tcp(127.0.0.1:3306)/app?parseTime=true"',
    "the DSN format is user:password@tcp(host:port)/dbname",
    'dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, pass, host, db)',
    "AUTH is handled by the gateway, not the app",
    "login: alice",
    "creds are in Vault under ops/creds",
    "https://example.com/login?next=/home&token=&x=1",
    "search?q=password&page=2&lang=en",
    "12:30:45:120:ERROR: worker crashed",
    "localhost:5432:*:postgres:${PGPASSWORD}",
    "password:\n  - must be 12 chars\n  - rotated yearly",
    "password =\n    getpass.getpass()",
    "the password for the admin panel is in 1Password",
    "password for the wifi is on the fridge",
    "the passphrase is not what you think",
    "the password is required",
    "the password is incorrectly hashed by the legacy importer",
    "token = AccessTokenProviderFactory",
    "api_key = XMLHttpRequestHandler",
    "password:\n    changeme",
    "see Mozilla.Firefox.Developer.Edition for the build",
    "password is stored in the keychain and rotated every 90 days",
    'echo "$DOCKER_PASSWORD" | docker login -u ci --password-stdin',
    "CREATE USER 'app'@'%' IDENTIFIED BY '${APP_PASSWORD}';",
    'redis-cli -a "$REDIS_PASSWORD" ping',
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" -e "select 1"',
    "jdbc:oracle:thin:@//db.dev.local:1521/ORCLPDB1",
    "测试账号 test01 已经删掉了",
    "SEC-1234 is the ticket for the signing rotation",
    "hmac_key = os.environ['HMAC_KEY']",
    "cookie_secret = settings.COOKIE_SECRET",
    "SORT_KEY=name",
    "see https://open.feishu.cn/open-apis/bot/v2/hook/<your-hook-id> in the docs",
    "echo ZGVwbG95IGZpbmlzaGVkIHdpdGhvdXQgZXJyb3Jz | base64 -d   # prints: deploy finished without errors",
    "GOOGLE_CLIENT_ID=546326589569-0jepos1s0ddzzrbzgahbscby99j5gfd0.apps.googleusercontent.com",
    "-----BEGIN CERTIFICATE-----\nMIIDDTCCAfWgAwIBAgI/EUS7YHtkqS5J87VK3e+aQwE20Ns5O3cBFtVlUuQRfwK2\n-----END CERTIFICATE-----",
]


@pytest.mark.parametrize("text, secret", SECRETS.values(), ids=list(SECRETS))
def test_the_secret_of_each_format_is_redacted_whole(text, secret):
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out
    assert redact(out) == out


@pytest.mark.parametrize("text", BENIGN)
def test_a_look_alike_without_a_secret_is_kept_exactly(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    "text, rest",
    [
        ("API_TOKEN=ghp_R8f2kLq9Zx7m\\\nN3vB5cT1yW4hJ6gD0sAe2Pq4vzQ", "N3vB5cT1yW4hJ6gD0sAe2Pq4vzQ"),
        ("DB_PASSWORD=Xk29fjQpLm\\\n  zzQaQpLm\\\n  thirdpart", "thirdpart"),
    ],
)
def test_a_secret_continued_on_the_next_line_by_a_backslash_is_redacted_on_both(text, rest):
    out = redact(text)
    assert rest not in out and "zzQaQpLm" not in out and "R8f2kLq9Zx7m" not in out


def test_a_backslash_after_a_space_ends_the_value_and_the_next_line_stays():
    assert redact("DB_PASSWORD=Xk29fjQpLm \\\n  psql -h db") == "DB_PASSWORD=[REDACTED:password] \\\n  psql -h db"


def test_a_password_redacted_whole_leaves_no_tail_after_an_ampersand():
    assert redact("DB_PASSWORD=Tr0ub4dor&3xyz rest") == "DB_PASSWORD=[REDACTED:password] rest"


@pytest.mark.parametrize(
    "text, kept",
    [
        (  # a blind trial's pasted connection string: the part after the first "@" had been kept
            "REDIS_URL=redis://:Tq7@mW4!zx9Lp@r-bp9f.redis.rds.aliyuncs.com:6379/2",
            "REDIS_URL=redis://:[REDACTED:url-password]@r-bp9f.redis.rds.aliyuncs.com:6379/2",
        ),
        (
            "连 postgres://app:s3cr@t#2@db.internal:5432/ledger 看下",
            "连 postgres://app:[REDACTED:url-password]@db.internal:5432/ledger 看下",
        ),
        (  # (an address after the URL keeps its own "@")
            "DSN postgres://app:pw1234@db/x, ask bob@example.com",
            "DSN postgres://app:[REDACTED:url-password]@db/x, ask bob@example.com",
        ),
    ],
)
def test_a_url_password_holding_an_at_sign_is_redacted_up_to_the_host(text, kept):
    assert redact(text) == kept


def test_a_query_string_still_ends_the_value_at_the_next_parameter():
    assert redact("https://x.example/cb?password=Zq8#mLp2v&user=bob") == (
        "https://x.example/cb?password=[REDACTED:password]&user=bob"
    )


# -- the store's one write path ------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    c = config_mod.load(home=tmp_path / "home", env={}, redact_patterns=[r"ACME-[0-9A-Z]{12}"])
    with Store.open(c, HashEmbedder(64)) as s:
        yield s


SECRET = "ACME-7F3K9Q2M1Z8X"  # the configured pattern's secret
BUILT_IN = "ghp_R8f2kLq9Zx7mN3vB5cT1yW4hJ6gD0sAe2Pq4"  # a built-in rule's secret


def _file_bytes(s: Store) -> bytes:
    s.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return b"".join(p.read_bytes() for p in s.path.parent.glob(s.path.name + "*"))


@pytest.mark.parametrize("secret", [SECRET, BUILT_IN])
def test_every_field_a_caller_fills_is_redacted_before_the_database_sees_it(store, secret):
    m = store.add(
        NewMemory(
            f"badge {secret} opens the lab",
            category=f"cat {secret}",
            subject=f"badge {secret}",
            tags=[f"tag {secret}"],
            source_ref=f"ticket {secret}",
            metadata={f"key {secret}": f"value {secret}", "nested": [{"v": f"deep {secret}"}]},
            entities=[(f"door {secret}", "thing")],
        )
    )
    store.update(m.id, content="the lab badge was replaced", reason=f"rotated {secret}")
    with store.tx.atomic() as conn:
        graph.relate(conn, m.scope, f"svc {secret}", "uses", f"db {secret}", store.clock())
        graph.upsert_entity(conn, m.scope, "vault", "tool", store.clock(), aliases=[f"alias {secret}"])
    d = decisions_mod.record_decision(
        store,
        f"use {secret}",
        f"because {secret}",
        scope=m.scope,
        alternatives=[f"not {secret}"],
        context=f"ctx {secret}",
    )
    decisions_mod.record_outcome(store, d.id, "failed", f"broke on {secret}", scopes=[m.scope])
    raw = _file_bytes(store)
    core = secret.split("-", 1)[1] if secret is SECRET else secret[4:]
    assert core.encode() not in raw and core.lower().encode() not in raw.lower()
    assert b"[REDACTED:" in raw
    again = store.get(m.id)
    assert "[REDACTED:" in again.category and list(again.metadata)[0].startswith("key [REDACTED:")


def test_entity_relate_redacts_the_names_it_creates(store):
    d = graph_query.relate(store, "global", f"svc {BUILT_IN}", "uses", f"db {SECRET}", readable=["global"])
    assert "[REDACTED:" in d["source"]["name"] and "[REDACTED:" in d["target"]["name"]
    assert BUILT_IN[4:].encode() not in _file_bytes(store)


def test_a_category_at_its_limit_still_stores_when_its_secret_becomes_a_longer_label(store):
    category = "password=" + "Zq8#mLp2vR" * 5 + "abcde"
    assert len(category) == 64
    assert store.add(NewMemory("a note", category=category)).category.startswith("password=[REDACTED:")


def test_a_relation_type_at_its_limit_still_stores_when_redacted(store):
    with store.tx.atomic() as conn:
        rid = graph.relate(conn, "global", "a", "password=" + "Zq8#mLp2vR" * 5 + "abcde", "b", store.clock())
        (t,) = conn.execute("SELECT type FROM relations WHERE id = ?", (rid,)).fetchone()
    assert t.startswith("password=[redacted:")


def test_an_export_of_a_redacted_store_is_valid_json_without_the_secret(store):
    store.add(NewMemory("note", metadata={f"k {BUILT_IN}": 1}))
    rows = [json.dumps(m.to_dict()) for m in store.list()]
    assert all(BUILT_IN[4:] not in r for r in rows)


def test_an_entity_name_pasted_with_its_lines_is_redacted_before_they_are_joined(store):
    with store.tx.atomic() as conn:
        eid = graph.upsert_entity(conn, "global", "~/.pgpass:\n*:*:*:postgres:M6ktUJEyYMwN1nmN1Y3", "file", 0.0)
    assert "M6ktUJEyYMwN1nmN1Y3" not in graph.entity_dict(store.conn, eid)["name"]
