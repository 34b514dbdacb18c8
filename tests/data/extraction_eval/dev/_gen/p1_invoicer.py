from cc import Session
from common import A, E, gold

CWD = "/home/dev/work/invoicer"
PG_PW = "Vt7q!rB2mmx"
ADYEN_KEY = "AQEyhmfxKo3NbxZGw0m/n3Q5qf3VaY9UCJ14XWZE03G0k2l5ReB5vUmW8gCJQ2ZmSA==-h3tV9cQk5Zx0p2Lw7aR1sYdEfGb4nJmK8oPqUvXz6C0=-Wk7#x2Lm9Q"
DJANGO_SECRET = "django-insecure-8k#2xq_r!m4v0w$e9t6y^u1i3o5p7a-s_d0f2g4h"
HMAC_KEY = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"


# ---------------------------------------------------------------- s1
def s1():
    name = "p1s1_invoicer_setup"
    s = Session(name, CWD, "2026-09-08T08:41:12.000Z", version="2.1.302",
                title="Get invoicer tests running on new laptop, switch to ruff format")
    s.snapshot()
    s.user("hey, fresh laptop. can you get the invoicer test suite running? repo is cloned, nothing installed yet")
    s.think("Look at the layout first: pyproject, compose file, how tests are configured.")
    s.bash("ls -a && sed -n '1,40p' pyproject.toml", """.
..
.env.example
.git
.git-blame-ignore-revs
.github
.gitignore
.pre-commit-config.yaml
.python-version
Makefile
README.md
billing
docker
docker-compose.yml
docs
invoicer
manage.py
pyproject.toml
tests
uv.lock
[project]
name = "invoicer"
version = "0.14.0"
requires-python = ">=3.12"
dependencies = [
    "django>=5.1,<5.2",
    "djangorestframework>=3.15",
    "psycopg[binary]>=3.2",
    "adyen>=12.0",
    "weasyprint>=62",
    "structlog>=24.4",
]

[project.optional-dependencies]
dev = ["pytest>=8.3", "pytest-django>=4.9", "pytest-xdist>=3.6", "factory-boy>=3.3", "pre-commit>=3.8"]

[tool.pytest.ini_options]
DJANGO_SETTINGS_MODULE = "invoicer.settings.test"
addopts = "--reuse-db -p no:cacheprovider"
testpaths = ["tests", "billing"]

[tool.ruff]
line-length = 110
target-version = "py312"
""", desc="List repo and show pyproject")
    s.bash("python -m pytest -q", "/usr/bin/python: No module named pytest", code=1, desc="Run test suite")
    s.user("don't pip install anything globally pls. we use uv for everything: `uv sync --all-extras`, then run stuff through `uv run`")
    s.say("Got it, using uv.")
    s.bash("uv sync --all-extras", """Using CPython 3.12.6 interpreter at: /home/dev/.local/share/uv/python/cpython-3.12.6-linux-x86_64-gnu/bin/python3.12
Creating virtual environment at: .venv
Resolved 87 packages in 1.21s
Prepared 85 packages in 6.48s
Installed 85 packages in 212ms
 + adyen==12.8.0
 + asgiref==3.8.1
 + django==5.1.2
 + djangorestframework==3.15.2
 + factory-boy==3.3.1
 + pre-commit==3.8.0
 + psycopg==3.2.3
 + psycopg-binary==3.2.3
 + pytest==8.3.3
 + pytest-django==4.9.0
 + pytest-xdist==3.6.1
 + structlog==24.4.0
 + weasyprint==62.3
 ...""", desc="Install deps with uv")
    s.bash("uv run pytest -q", """==================================== ERRORS ====================================
_________ ERROR at setup of test_invoice_total_rounds_per_line[EUR] __________
...
psycopg.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused
	Is the server running on that host and accepting TCP/IP connections?

The above exception was the direct cause of the following exception:
...
django.db.utils.OperationalError: connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused
=========================== short test summary info ============================
ERROR tests/billing/test_totals.py::test_invoice_total_rounds_per_line[EUR] - django.db.utils.OperationalError
ERROR tests/billing/test_totals.py::test_invoice_total_rounds_per_line[SEK] - django.db.utils.OperationalError
... 46 more
48 errors in 3.22s""", code=1, desc="Run tests via uv")
    s.read(f"{CWD}/docker-compose.yml", """services:
  db:
    image: postgres:16
    ports:
      - "5434:5432"
    environment:
      POSTGRES_USER: invoicer
      POSTGRES_DB: invoicer
      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}
    volumes:
      - pgdata:/var/lib/postgresql/data
      - ./docker/initdb:/docker-entrypoint-initdb.d:ro
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U invoicer"]
      interval: 2s
      retries: 15
volumes:
  pgdata:
""")
    s.say("The db comes from docker compose and is published on host port 5434, and it needs a `.env` (POSTGRES_PASSWORD, DATABASE_URL). There's no `.env` yet, only `.env.example`. Do you have your old one?")
    s.user(f"""compose reads .env, here's mine from the old laptop:
```
DATABASE_URL=postgres://invoicer:{PG_PW}@localhost:5434/invoicer
POSTGRES_PASSWORD={PG_PW}
ADYEN_API_KEY={ADYEN_KEY}
ADYEN_MERCHANT_ACCOUNT=AcmeBillingEU
DJANGO_SECRET_KEY={DJANGO_SECRET}
```
5434 because I have a system postgres on 5432""")
    s.write(f"{CWD}/.env", f"""DATABASE_URL=postgres://invoicer:{PG_PW}@localhost:5434/invoicer
POSTGRES_PASSWORD={PG_PW}
ADYEN_API_KEY={ADYEN_KEY}
ADYEN_MERCHANT_ACCOUNT=AcmeBillingEU
DJANGO_SECRET_KEY={DJANGO_SECRET}
""")
    s.bash("docker compose up -d db && sleep 3 && uv run pytest -q -x", """[+] Running 1/1
 ✔ Container invoicer-db-1  Started                                         0.4s
E
==================================== ERRORS ====================================
______________ ERROR at setup of test_customer_email_is_case_insensitive ______________
...
  File "/home/dev/work/invoicer/billing/migrations/0001_initial.py", line 14, in <module>
psycopg.errors.UndefinedObject: type "citext" does not exist
LINE 1: ...EATE TABLE "billing_customer" ("id" bigint NOT NULL PRIMARY KEY, "email" citext NOT NULL...
                                                             ^
django.db.utils.ProgrammingError: type "citext" does not exist
=========================== short test summary info ============================
ERROR tests/billing/test_customers.py::test_customer_email_is_case_insensitive - django.db.utils.ProgrammingError
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
1 error in 2.87s""", code=1, desc="Start db and run tests")
    s.bash("docker volume inspect invoicer_pgdata --format '{{.CreatedAt}}'; ls docker/initdb; cat docker/initdb/*.sql",
           """2026-09-04T17:22:10Z
01-extensions.sql
CREATE EXTENSION IF NOT EXISTS citext;
CREATE EXTENSION IF NOT EXISTS pg_trgm;""", desc="Check volume age and init scripts")
    s.say("The `pgdata` volume was created on Sep 4, before this checkout had `docker/initdb`. The postgres image only executes `/docker-entrypoint-initdb.d/*` when the data directory is empty, i.e. on the very first start of a volume, so `01-extensions.sql` never ran and `citext` was never created. Dropping the volume (`docker compose down -v`) and starting again will run it. That deletes whatever is in the local db. OK?")
    s.user("yeah I did a compose up on friday before pulling. nuke it, there's nothing in there")
    s.bash("docker compose down -v && docker compose up -d --wait db && uv run pytest -q", """[+] Running 3/3
 ✔ Container invoicer-db-1   Removed                                        0.3s
 ✔ Volume invoicer_pgdata    Removed                                        0.0s
 ✔ Network invoicer_default  Removed                                        0.2s
[+] Running 3/3
 ✔ Network invoicer_default  Created                                        0.1s
 ✔ Volume "invoicer_pgdata"  Created                                        0.0s
 ✔ Container invoicer-db-1   Healthy                                        3.9s
........................................................................ [ 33%]
........................................................................ [ 67%]
....................................................................ss.s [100%]
212 passed, 3 skipped in 41.87s""", desc="Recreate db volume and rerun tests", gap=(20, 45))
    s.say("All green now: 212 passed, 3 skipped.")
    s.stop_hook()
    s.turn_duration(187000)
    s.user("nice. while you're at it, is pre-commit still on black + flake8 here? I thought we'd moved off that")
    s.read(f"{CWD}/.pre-commit-config.yaml", """repos:
  - repo: https://github.com/psf/black
    rev: 24.8.0
    hooks:
      - id: black
  - repo: https://github.com/PyCQA/flake8
    rev: 7.1.1
    hooks:
      - id: flake8
        args: ["--max-line-length=88"]
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: ruff
        args: ["--fix"]
""")
    s.say("Still all three: black, flake8 (with `--max-line-length=88`) and ruff for lint, while `[tool.ruff]` says line-length 110, so black/flake8 and ruff disagree on line length. I'd drop black and flake8 and use `ruff format` + `ruff check`: one tool, config already lives in pyproject, and ruff format's output matches black on practically everything. The cost is one reformat commit.")
    s.user("yes do it. we talked about it at standup anyway, ruff format it is. black and flake8 keep fighting ruff over line length. one big reformat commit is fine, just add the hash to .git-blame-ignore-revs after so blame stays useful")
    s.edit(f"{CWD}/.pre-commit-config.yaml", """  - repo: https://github.com/psf/black
    rev: 24.8.0
    hooks:
      - id: black
  - repo: https://github.com/PyCQA/flake8
    rev: 7.1.1
    hooks:
      - id: flake8
        args: ["--max-line-length=88"]
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: ruff
        args: ["--fix"]""", """  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: ruff
        args: ["--fix"]
      - id: ruff-format""")
    s.bash("uv run pre-commit run --all-files", """ruff.....................................................................Passed
ruff-format..............................................................Failed
- hook id: ruff-format
- files were modified by this hook

14 files reformatted, 203 files left unchanged""", code=1, desc="Run pre-commit on all files")
    s.bash("git add -A && git commit -qm 'style: switch formatting to ruff format' && git rev-parse HEAD >> .git-blame-ignore-revs && git commit -qam 'chore: ignore ruff reformat in blame' && git log --oneline -2",
           """b7e21c4 chore: ignore ruff reformat in blame
5d0a9f3 style: switch formatting to ruff format""", desc="Commit reformat and record it in blame-ignore")
    s.say("Done: black/flake8 removed, `ruff-format` hook added, reformat commit `5d0a9f3` recorded in `.git-blame-ignore-revs`.")
    s.user("one thing before you touch anything in billing/: all money is integer minor units. `amount_minor` bigint plus a `currency` char(3) next to it. no floats anywhere and no DecimalField in models, Decimal only at the formatting edge (pdf, api serializers)")
    s.say("Understood: integer minor units in `amount_minor` + `currency`, Decimal only when formatting for output.")
    s.user("and keep answers short, I read the diffs myself. thanks")
    s.say("Will do.")
    s.stop_hook()
    g = gold(name, CWD, 1, "en", [
        E("e1", "fact", "command", "en", "Install dependencies with `uv sync --all-extras` and run everything through `uv run`; never pip install globally.", ["uv sync --all-extras"]),
        E("e2", "fact", "command", "en", "Run the test suite with `uv run pytest -q` (the compose db must be up).", ["uv run pytest"]),
        E("e3", "fact", "config", "en", "Local dev Postgres runs from docker compose and is published on host port 5434 (5432 is taken by a system postgres); compose reads POSTGRES_PASSWORD/DATABASE_URL from .env.", ["5434"]),
        E("e4", "experience", "root_cause", "en", "Migrations failed with `type \"citext\" does not exist` because the pgdata volume predated docker/initdb; the postgres image only runs /docker-entrypoint-initdb.d scripts on an empty data dir, so recreate it with `docker compose down -v` and start again.", ["citext", "down -v"]),
        E("e5", "decision", "decision", "en", "Formatting moved from black + flake8 to ruff format + ruff check in pre-commit; black/flake8 kept fighting ruff over line length and ruff's config already lives in pyproject.", ["ruff"], chosen="ruff", over=["black"], why=["line length"]),
        E("e6", "fact", "convention", "en", "After a mass-reformat commit, add its hash to .git-blame-ignore-revs so git blame stays useful.", [".git-blame-ignore-revs"]),
        E("e7", "fact", "convention", "en", "All money is stored as integer minor units (`amount_minor` bigint + `currency` char(3)); no floats and no DecimalField in models, Decimal only at the formatting edge (PDF, API serializers).", ["amount_minor"]),
        E("e8", "fact", "preference", "en", "The user wants short answers; they read the diffs themselves.", ["short"]),
    ], [
        A(["invoicer.settings.test"], "tests use DJANGO_SETTINGS_MODULE invoicer.settings.test"),
        A(["110"], "ruff line-length 110"),
        A(["AcmeBillingEU"], "Adyen merchant account name is not secret"),
        A(["python -m pytest"], "plain python has no pytest; use uv run"),
    ], ["212 passed", "Resolved 87 packages", "14 files reformatted", "fresh laptop", "5d0a9f3"],
        [PG_PW, ADYEN_KEY, DJANGO_SECRET, f"postgres://invoicer:{PG_PW}@localhost:5434/invoicer"])
    return s, g


# ---------------------------------------------------------------- s2
R_DEPLOY = "invoicer deploys to staging via the deploy-staging GitHub workflow on every merge to main."
R_TESTS = "Run the test suite with `uv run pytest -q` (the compose db must be up)."
R_PORT = "Local dev Postgres runs from docker compose on host port 5434."
R_SHORT = "User wants short answers, reads diffs themselves."


def s2():
    name = "p1s2_invoicer_adyen_hmac"
    s = Session(name, CWD, "2026-09-15T13:05:40.000Z", version="2.1.305", branch="fix/adyen-hmac",
                title="Fix Adyen webhook HMAC verification on staging")
    s.snapshot()
    s.user("adyen webhooks on staging are all getting rejected with 401 since yesterday's deploy. logs say hmac mismatch. can you look")
    s.recall_attachment([(1, "fact", "12 days ago", R_DEPLOY), (3, "fact", "7 days ago", R_TESTS),
                         (4, "fact", "7 days ago", R_PORT), (8, "fact", "7 days ago", R_SHORT)])
    s.think("HMAC mismatch right after a deploy: check what changed in the verification code, and how the key is loaded.")
    s.grep("hmac", """billing/webhooks/adyen.py:1:import base64, hashlib, hmac, json
billing/webhooks/adyen.py:27:    key = settings.ADYEN_HMAC_KEY.encode()
billing/webhooks/adyen.py:28:    expected = base64.b64encode(hmac.new(key, _payload(item).encode(), hashlib.sha256).digest()).decode()
billing/webhooks/adyen.py:29:    return hmac.compare_digest(expected, item["additionalData"]["hmacSignature"])
billing/webhooks/tests/test_adyen.py:9:    settings.ADYEN_HMAC_KEY = "secret"
billing/webhooks/tests/test_adyen.py:12:    item["additionalData"] = {"hmacSignature": adyen._sign(item)}""", path="billing")
    s.bash("git log --oneline -4 -- billing/webhooks/adyen.py && git show a41c9e2 -- billing/webhooks/adyen.py | sed -n '1,30p'",
           """a41c9e2 refactor: read adyen settings via django settings instead of os.environ (#412)
7f3d2b0 feat: handle REFUND notifications (#398)
c19e0aa fix: compare signatures in constant time (#377)
1b2a6d9 feat: adyen standard notifications webhook (#341)
commit a41c9e2e0c8a6f1d3b9e7a2c5d4f6e8b0a1c3d5e
Author: Tomasz K <tomasz@acme-billing.eu>
Date:   Sun Sep 14 18:02:51 2026 +0200

    refactor: read adyen settings via django settings instead of os.environ (#412)

diff --git a/billing/webhooks/adyen.py b/billing/webhooks/adyen.py
@@ -1,6 +1,7 @@
-import base64, binascii, hashlib, hmac, json, os
+import base64, hashlib, hmac, json
+from django.conf import settings
@@ -24,7 +25,7 @@ def _payload(item):
 def verify(item):
-    key = binascii.unhexlify(os.environ["ADYEN_HMAC_KEY"])
+    key = settings.ADYEN_HMAC_KEY.encode()
     expected = base64.b64encode(hmac.new(key, _payload(item).encode(), hashlib.sha256).digest()).decode()""",
           desc="History of the adyen webhook module")
    s.say("Found it. Before #412 the key went through `binascii.unhexlify`; the refactor replaced that with `.encode()`. Adyen gives you the HMAC key as a hex string, and the signing key is the decoded bytes, not the 64 ASCII characters. Every signature since the deploy has been computed with the wrong key.")
    s.user("ugh. and the refactor passed CI?")
    s.read(f"{CWD}/billing/webhooks/tests/test_adyen.py", """from billing.webhooks import adyen


def test_verify_accepts_valid_signature(settings, notification_item):
    settings.ADYEN_HMAC_KEY = "secret"
    item = dict(notification_item)
    item["additionalData"] = {"hmacSignature": adyen._sign(item)}
    assert adyen.verify(item)
""", start=5, total=12)
    s.say("The test signs the item with the module's own `_sign()` and checks it with the same module, with a non-hex dummy key. Whatever the key handling does, both sides agree, so it can never fail. I'll fix the decoding and make the test use a fixed hex key with a precomputed signature that was calculated independently.")
    s.user(f"here's a real notification from the staging logs if you want to check against it. staging key is {HMAC_KEY} — don't commit that obviously, generate a throwaway key for the test")
    s.edit(f"{CWD}/billing/webhooks/adyen.py", "    key = settings.ADYEN_HMAC_KEY.encode()",
           "    # Adyen hands out the HMAC key hex-encoded; sign with the raw bytes.\n    key = bytes.fromhex(settings.ADYEN_HMAC_KEY)", at_line=27)
    s.edit(f"{CWD}/billing/webhooks/tests/test_adyen.py", """    settings.ADYEN_HMAC_KEY = "secret"
    item = dict(notification_item)
    item["additionalData"] = {"hmacSignature": adyen._sign(item)}
    assert adyen.verify(item)""", """    # throwaway key; signature precomputed with openssl, not with our own code
    settings.ADYEN_HMAC_KEY = "9F3B1C7A2D5E8F60A4B2C9D1E3F5A7B9C0D2E4F6A8B0C1D3E5F7A9B1C3D5E7F9"
    item = dict(notification_item)
    item["additionalData"] = {"hmacSignature": "u3kQ0n5Yb6m2J0xZ8fH1rW4tV7pS9cL2aE6dG0iK3oM="}
    assert adyen.verify(item)


def test_verify_rejects_signature_made_with_ascii_key(settings, notification_item):
    settings.ADYEN_HMAC_KEY = "9F3B1C7A2D5E8F60A4B2C9D1E3F5A7B9C0D2E4F6A8B0C1D3E5F7A9B1C3D5E7F9"
    item = dict(notification_item)
    item["additionalData"] = {"hmacSignature": "Q2x9n8VqP7mT1bR3yW5uE0oI6aS4dF8gH2jK7lZ1cX0="}
    assert not adyen.verify(item)""", at_line=8)
    s.bash("uv run pytest billing/webhooks -q", """E
==================================== ERRORS ====================================
___________ ERROR at setup of test_verify_accepts_valid_signature ____________
...
django.db.utils.OperationalError: connection failed: connection to server at "127.0.0.1", port 5434 failed: Connection refused
	Is the server running on that host and accepting TCP/IP connections?
=========================== short test summary info ============================
ERROR billing/webhooks/tests/test_adyen.py::test_verify_accepts_valid_signature
ERROR billing/webhooks/tests/test_adyen.py::test_verify_rejects_signature_made_with_ascii_key
... 7 more
9 errors in 1.97s""", code=1, desc="Run webhook tests")
    s.bash("docker compose ps --format '{{.Name}}  {{.Status}}  {{.Ports}}'",
           "invoicer-db-1  Up 2 days (healthy)  0.0.0.0:5433->5432/tcp", desc="Check db container")
    s.say("The db container is up but published on 5433, while DATABASE_URL points at 5434.")
    s.user("oh right, sorry. I moved the compose db to 5433 on monday, 5434 clashed with the grafana postgres. compose file is already updated, just fix .env")
    s.bash("sed -i 's#@localhost:5434/#@localhost:5433/#' .env && grep -c 5433 .env && uv run pytest billing/webhooks -q",
           """1
.........                                                                [100%]
9 passed in 1.42s""", desc="Point .env at 5433 and rerun")
    s.user("where should the check live long-term? right now every view calls verify() by hand and the refund view forgot to")
    s.say("Two options:\n- a middleware that matches `/webhooks/adyen/*` and verifies before the view runs\n- an `@adyen_signed` decorator on each webhook view\n\nI'd use the decorator. Middleware has to parse the JSON body of every request under that prefix and hides the check from anyone reading the view; the decorator sits right on the view. Middleware only pays off with many endpoints.")
    s.user("decorator. explicit beats magic, and we'll have like 3 of these ever")
    s.write(f"{CWD}/billing/webhooks/decorators.py", """import functools
import json

from django.http import HttpResponse

from . import adyen


def adyen_signed(view):
    \"\"\"Reject Adyen notifications whose items don't carry a valid HMAC signature.\"\"\"

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        body = json.loads(request.body)
        for wrapped in body.get("notificationItems", []):
            if not adyen.verify(wrapped["NotificationRequestItem"]):
                return HttpResponse(status=401)
        return view(request, *args, **kwargs)

    return wrapper
""")
    s.edit(f"{CWD}/billing/webhooks/views.py", """@csrf_exempt
def refund_notification(request):""", """@csrf_exempt
@adyen_signed
def refund_notification(request):""", at_line=41)
    s.edit(f"{CWD}/billing/webhooks/views.py", """@csrf_exempt
def standard_notification(request):
    body = json.loads(request.body)
    for wrapped in body["notificationItems"]:
        if not adyen.verify(wrapped["NotificationRequestItem"]):
            return HttpResponse(status=401)""", """@csrf_exempt
@adyen_signed
def standard_notification(request):
    body = json.loads(request.body)""", at_line=18)
    s.say("Both views now use `@adyen_signed`. They still answer `[accepted]` on success; left that as is since Adyen treats any other body as a failed delivery and keeps retrying.")
    s.bash("uv run pytest -q", """........................................................................ [ 32%]
........................................................................ [ 65%]
.........................................................................ss.s [100%]
221 passed, 3 skipped in 43.10s""", desc="Full test run", gap=(30, 50))
    s.user("cool. also put a note in the adyen runbook that staging and prod have different hmac keys, people keep pasting the prod one into staging")
    s.edit(f"{CWD}/docs/runbook/adyen.md", "## Webhooks\n", "## Webhooks\n\n> Staging and prod use **different** HMAC keys (Customer Area → Webhooks → each endpoint).\n> Never copy the prod key into staging settings. The key is hex; we decode it with `bytes.fromhex`.\n", at_line=12)
    s.say("Runbook updated.")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 2, "en", [
        E("e1", "experience", "root_cause", "en", "Adyen webhook HMAC mismatches on staging came from refactor #412, which replaced binascii.unhexlify with .encode(); the Adyen HMAC key is hex and must be decoded (`bytes.fromhex(settings.ADYEN_HMAC_KEY)`) before signing.", ["hmac", "hex"]),
        E("e2", "experience", "lesson", "en", "The old Adyen signature test signed with the module's own helper and a dummy key, so it could never fail; signature tests now use a throwaway hex key and a precomputed signature.", ["precomputed"]),
        E("e3", "fact", "config", "en", "The local compose Postgres is on host port 5433 now (5434 clashed with the grafana postgres); DATABASE_URL in .env must use 5433.", ["5433"], supersedes="p1s1_invoicer_setup#e3"),
        E("e4", "decision", "decision", "en", "Adyen webhook signature checks live in an `@adyen_signed` view decorator (billing/webhooks/decorators.py) rather than middleware: explicit at the view, and there will only be about three webhook endpoints.", ["decorator"], chosen="decorator", over=["middleware"], why=["explicit"]),
        E("e5", "fact", "gotcha", "en", "Adyen notification endpoints must reply with the body `[accepted]`; any other response counts as a failed delivery and Adyen keeps retrying.", ["[accepted]"]),
        E("e6", "fact", "constraint", "en", "Staging and prod have different Adyen HMAC keys (documented in docs/runbook/adyen.md); never copy the prod key into staging.", ["hmac", "staging"]),
    ], [
        A(["ADYEN_HMAC_KEY"], "key read from settings.ADYEN_HMAC_KEY"),
        A(["refund"], "refund view was missing the verify call"),
    ], [R_DEPLOY, R_TESTS, R_PORT, R_SHORT, "deploy-staging", "9 passed", "221 passed", "ugh"], [HMAC_KEY])
    return s, g


# ---------------------------------------------------------------- s3
R_MONEY = "All money is stored as integer minor units (amount_minor + currency); no floats, no DecimalField."
R_TESTS2 = "Run the test suite with `uv run pytest -q` (compose db must be up)."
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq81vB3kTn"


def s3():
    name = "p1s3_invoicer_pdf_cjk"
    s = Session(name, CWD, "2026-09-24T02:17:03.000Z", version="2.1.309", branch="fix/pdf-cjk-font",
                title="发票 PDF 中文方块问题 + 后台任务方案")
    s.snapshot()
    s.user_with_reminder("发票 PDF 里中文客户名全是方块 □□□，我 mac 本地生成是好的，staging 上就不行。帮忙看下",
                         [(3, "fact", "16 days ago", R_TESTS2), (9, "fact", "16 days ago", R_MONEY)])
    s.think("Boxes only on the server: the container is missing a font with CJK glyphs; locally macOS has PingFang. Check the Dockerfile and the template CSS.")
    s.read(f"{CWD}/Dockerfile", """FROM python:3.12-slim AS runtime
RUN apt-get update && apt-get install -y --no-install-recommends \\
        libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 fontconfig \\
    && rm -rf /var/lib/apt/lists/*
COPY --from=ghcr.io/astral-sh/uv:0.4.20 /uv /bin/uv
WORKDIR /app
COPY pyproject.toml uv.lock ./
RUN uv sync --frozen --no-dev
COPY . .
CMD ["uv", "run", "gunicorn", "invoicer.wsgi", "-b", "0.0.0.0:8000", "-w", "4"]
""")
    s.grep("font-family", "billing/templates/invoices/base.css:3:  font-family: \"Helvetica Neue\", Arial, sans-serif;", path="billing/templates")
    s.bash("docker run --rm invoicer:staging fc-list :lang=zh", """Unable to find image 'invoicer:staging' locally
docker: Error response from daemon: pull access denied for invoicer, repository does not exist or may require 'docker login': denied: requested access to the resource is denied.
See 'docker run --help'.""", code=125, desc="List CJK fonts inside the staging image")
    s.bash("docker images --format '{{.Repository}}:{{.Tag}}' | grep invoicer", """registry.internal/invoicer:staging-2026.09.23
registry.internal/invoicer:staging-2026.09.19
invoicer-db:latest""", desc="Find local invoicer images")
    s.bash("docker run --rm registry.internal/invoicer:staging-2026.09.23 sh -c 'fc-list :lang=zh | wc -l; fc-match \"Helvetica Neue\"'",
           "0\nDejaVuSans.ttf: \"DejaVu Sans\" \"Book\"", desc="Check fonts in staging image")
    s.say("镜像里一个中文字体都没有（`fc-list :lang=zh` 是 0），Helvetica Neue 最后落到 DejaVu Sans，而 DejaVu 没有中文字形，WeasyPrint 就画成方块。mac 本地有 PingFang 兜底，所以看着正常。\n\n最简单是 apt 装 `fonts-noto-cjk`，再在 CSS 里加 `\"Noto Sans CJK SC\"`。")
    s.user("fonts-noto-cjk 会不会太大？镜像本来就 400M 了")
    s.bash("docker run --rm python:3.12-slim sh -c 'apt-get update -qq && apt-cache show fonts-noto-cjk | grep -m1 Installed-Size'",
           "Installed-Size: 91404", desc="Check fonts-noto-cjk size", gap=(6, 14))
    s.say("装上大约 +90MB（Installed-Size 91404 KB），因为它带了所有 CJK 语言和全部字重。替代方案：只把 Noto Sans SC 的 Regular 和 Bold 两个 otf 拷进镜像，大概 16MB，再 `fc-cache -f`。")
    s.user("那就只拷 NotoSansSC Regular + Bold，放 repo 的 docker/fonts/ 下面，别装整个包")
    s.edit(f"{CWD}/Dockerfile", "COPY --from=ghcr.io/astral-sh/uv:0.4.20 /uv /bin/uv",
           "COPY docker/fonts/ /usr/share/fonts/truetype/noto-sc/\nRUN fc-cache -f\nCOPY --from=ghcr.io/astral-sh/uv:0.4.20 /uv /bin/uv", at_line=5)
    s.edit(f"{CWD}/billing/templates/invoices/base.css", '  font-family: "Helvetica Neue", Arial, sans-serif;',
           '  font-family: "Helvetica Neue", Arial, "Noto Sans SC", sans-serif;', at_line=3)
    s.user("对了测试现在统一用 `make test` 跑，Makefile 里会先 `docker compose up -d --wait db` 再 `uv run pytest -n auto`。别再直接 uv run pytest 了，xdist 并行要给每个 worker 建带后缀的测试库，直接跑会撞库")
    s.bash("make test", """docker compose up -d --wait db
[+] Running 1/1
 ✔ Container invoicer-db-1  Healthy                                          0.6s
uv run pytest -n auto
============================= test session starts ==============================
platform linux -- Python 3.12.6, pytest-8.3.3, pluggy-1.5.0
django: version: 5.1.2, settings: invoicer.settings.test (from ini)
created: 8/8 workers
8 workers [236 items]
........................................................................ [ 30%]
........................................................................ [ 61%]
.....................................................F.................. [ 91%]
.................ss.                                                     [100%]
=================================== FAILURES ===================================
________________________ test_invoice_pdf_matches_snapshot ________________________
[gw3] linux -- Python 3.12.6 /home/dev/work/invoicer/.venv/bin/python
E   AssertionError: PDF snapshot differs: page 1, 2.31% of pixels changed (threshold 0.5%)
E   see tests/pdf/__snapshots__/invoice_de.png.diff.png
=========================== short test summary info ============================
FAILED tests/pdf/test_render.py::test_invoice_pdf_matches_snapshot - AssertionError: PDF snapshot differs: page 1, 2.31% of pixels changed
1 failed, 233 passed, 2 skipped in 19.84s
make: *** [Makefile:14: test] Error 1""", code=2, desc="Run tests via make", gap=(20, 40))
    s.grep("snapshot", "Makefile:17:snapshots: ## regenerate PDF snapshots after an intended rendering change\nMakefile:18:\tuv run pytest tests/pdf --snapshot-update", path="Makefile")
    s.say("这个失败是预期的：加了字体以后页面渲染变了。Makefile 里有 `make snapshots` 专门重新生成 PDF 快照。")
    s.bash("make snapshots && make test", """uv run pytest tests/pdf --snapshot-update
....                                                                     [100%]
4 passed, 3 snapshots updated in 6.02s
docker compose up -d --wait db
uv run pytest -n auto
8 workers [236 items]
........................................................................ [ 30%]
........................................................................ [ 61%]
........................................................................ [ 91%]
.................ss.                                                     [100%]
234 passed, 2 skipped in 18.97s""", desc="Regenerate snapshots and rerun", gap=(25, 40))
    s.user("另外 PDF 生成现在是在 request 里同步做的，大发票 8 秒多，经常 504。要不要挪到后台任务？")
    s.say("可以。几个选择：\n- Celery：功能最全，但对这点量太重，还要 beat、flower 一堆东西\n- dramatiq：API 简单，重试/超时内置，broker 用 Redis，你们已经有 Redis\n\n我倾向 dramatiq + 现有 Redis。")
    s.user("现在那个 Redis 是 rate limit 专用的，maxmemory-policy 是 allkeys-lru，队列消息会被淘汰的吧")
    s.say("对，allkeys-lru 下内存一满 broker 的 key 也可能被驱逐，任务就静默丢了。那就别复用它：单独起一个 `redis-queue` 实例，`maxmemory-policy noeviction`，满了宁可报错也不丢任务。")
    s.user("定了：dramatiq + 单独的 redis-queue（noeviction）。Celery 不考虑。先别写代码，下个 sprint 做，今天先把字体修了上线")
    s.say("好，今天只提交字体修复。")
    s.bash("git add -A && git commit -m 'fix(pdf): bundle Noto Sans SC so CJK customer names render'", """ruff.....................................................................Passed
ruff-format..............................................................Passed
[fix/pdf-cjk-font 8c41d0e] fix(pdf): bundle Noto Sans SC so CJK customer names render
 6 files changed, 9 insertions(+), 2 deletions(-)
 create mode 100644 docker/fonts/NotoSansSC-Bold.otf
 create mode 100644 docker/fonts/NotoSansSC-Regular.otf""", desc="Commit font fix")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 3, "mixed", [
        E("e1", "experience", "root_cause", "zh", "staging 上发票 PDF 中文变方块：python:3.12-slim 镜像里没有任何 CJK 字体（fc-list :lang=zh 为 0），Helvetica Neue 回退到 DejaVu Sans，没有中文字形；mac 本地有 PingFang 所以正常。", ["PDF", "CJK"]),
        E("e2", "decision", "decision", "zh", "只把 NotoSansSC Regular + Bold 两个字体文件放进 docker/fonts/ 拷进镜像（再 fc-cache -f），不装 fonts-noto-cjk 包，因为那个包装上约 +90MB。", ["NotoSansSC"], chosen="NotoSansSC", over=["fonts-noto-cjk"], why=["90"]),
        E("e3", "fact", "command", "zh", "跑测试统一用 `make test`（先 docker compose up -d --wait db，再 uv run pytest -n auto）；不要直接 uv run pytest，xdist 每个 worker 需要带后缀的测试库。", ["make test"], supersedes="p1s1_invoicer_setup#e2"),
        E("e4", "fact", "command", "en", "After an intended PDF rendering change, regenerate the PDF snapshots with `make snapshots` (uv run pytest tests/pdf --snapshot-update).", ["make snapshots"]),
        E("e5", "decision", "decision", "zh", "PDF 生成要挪到后台任务，用 dramatiq，不用 Celery（对这个量太重）；下个 sprint 做。", ["dramatiq"], chosen="dramatiq", over=["celery"], why=["太重"]),
        E("e6", "decision", "decision", "zh", "dramatiq 的 broker 用单独的 redis-queue 实例（maxmemory-policy noeviction），不复用 rate limit 的 Redis，因为后者是 allkeys-lru，会驱逐队列消息。", ["redis-queue"], chosen="redis-queue", over=["rate limit"], why=["allkeys-lru"]),
        E("e7", "fact", "config", "zh", "现有 Redis 只用于 rate limit，配置 maxmemory-policy allkeys-lru。", ["allkeys-lru"]),
    ], [
        A(["fc-list"], "check fonts inside the image with fc-list :lang=zh"),
        A(["registry.internal/invoicer"], "staging image naming"),
        A(["504"], "large invoices took 8+ s synchronously"),
    ], [R_MONEY, R_TESTS2, "233 passed", "234 passed", "3 snapshots updated", "8c41d0e", "先别写代码"], [])
    return s, g


# ---------------------------------------------------------------- s4 (questions only)
def s4():
    name = "p1s4_invoicer_proration_questions"
    s = Session(name, CWD, "2026-10-06T15:30:00.000Z", version="2.1.318", branch="main",
                title="How proration works for upgrades and downgrades")
    s.local_command("model", "opus", "Set model to claude-opus-5")
    s.model = "claude-opus-5"
    s.user("how does proration work when someone upgrades mid-cycle? finance asked me and I couldn't remember the whole reasoning. don't change anything, just explain")
    s.maple_search("proration upgrade mid-cycle invoice", [
        {"id": 9, "layer": "fact", "content": R_MONEY},
        {"id": 17, "layer": "decision", "content": "Signature checks for Adyen webhooks use the @adyen_signed decorator, not middleware."},
        {"id": 5, "layer": "fact", "content": "Proration was added in v0.9 by Marta; see ADR-007."},
    ])
    s.grep("def prorate", "billing/proration.py:22:def prorate_upgrade(sub, new_plan, at):\nbilling/proration.py:61:def prorate_downgrade(sub, new_plan, at):", path="billing")
    s.read(f"{CWD}/billing/proration.py", """def prorate_upgrade(sub, new_plan, at):
    \"\"\"Charge the difference for the rest of the period, right away.\"\"\"
    period = sub.current_period
    days_total = (period.end - period.start).days
    days_left = (period.end.date() - at.date()).days + 1  # the change day counts as used by the new plan
    diff = new_plan.amount_minor - sub.plan.amount_minor
    amount = -(-diff * days_left // days_total)  # ceil division, integer cents
    return Charge(amount_minor=amount, currency=sub.currency, description=f"Upgrade to {new_plan.name}")
""", start=22, total=95)
    s.say("Upgrade mid-cycle:\n- It's day-based, not second-based. `days_left` includes the day of the change.\n- The charge is `(new - old) × days_left / days_total`, rounded **up** to the cent with integer math.\n- It's charged immediately as a separate `Charge`, not added to the next invoice.")
    s.user("and a downgrade?")
    s.rejected("Bash", {"command": "uv run pytest billing/tests/test_proration.py -q", "description": "Run proration tests"})
    s.user("no no, no need to run anything, just read the code")
    s.read(f"{CWD}/billing/proration.py", """def prorate_downgrade(sub, new_plan, at):
    \"\"\"No refund; credit the unused difference on the next invoice.\"\"\"
    period = sub.current_period
    days_total = (period.end - period.start).days
    days_left = (period.end.date() - at.date()).days
    diff = sub.plan.amount_minor - new_plan.amount_minor
    credit = diff * days_left // days_total  # floor: we never over-credit
    return CreditNote(amount_minor=credit, currency=sub.currency, apply_on="next_invoice")
""", start=61, total=95)
    s.say("Downgrade:\n- No money goes back to the card. A `CreditNote` is created and applied to the **next** invoice.\n- Same day-based formula, but the change day is not counted and the amount is rounded **down**, so customers are never over-credited.\n\nSo the asymmetry is deliberate: round up when charging, round down when crediting.")
    s.user("ok makes sense. I always mix up credit notes and refunds lol. thanks!")
    s.say("No problem.")
    s.stop_hook()
    g = gold(name, CWD, 4, "en", [], [
        A(["day"], "proration is day-based; upgrades charged immediately rounded up, downgrades credited on next invoice rounded down (derivable from billing/proration.py)"),
        A(["CreditNote"], "downgrades produce a CreditNote, no refund"),
    ], ["always mix up", "finance asked", "couldn't remember", "just read the code", R_MONEY,
        "Proration was added in v0.9 by Marta", "ADR-007", "adyen_signed decorator, not middleware"], [])
    return s, g


SESSIONS = [s1, s2, s3, s4]
