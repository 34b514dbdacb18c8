"""Typed entities and relations in a sentence, for the extraction agent.

Regular expressions and a small technology lexicon; stdlib only. `find(text)` returns mentions
with their spans (files and paths, commands, functions and classes, packages and technologies,
services, people, configured known entities); `relations(text, mentions, project)` reads "X uses
Y", "X depends on Y", "X replaced Y" / "moved from Y to X", "X owns Y" (and the Chinese forms)
between mentions. `category_of(name)` names the slot a technology fills ("web framework"), which
is what lets "we moved from Flask to FastAPI" supersede "the API uses Flask".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.lang import mentions, zhnames

# technology -> the slot it fills. A new fact naming another technology of the same slot
# supersedes the old one (see extraction.subject_for).
TECH: dict[str, str] = {}
for _slot, _names in {
    "python package manager": "uv pip poetry pipenv conda pdm hatch",
    "js package manager": "npm pnpm yarn bun",
    "python formatter": "black ruff yapf autopep8",
    "python linter": "flake8 pylint ruff",
    "type checker": "mypy pyright",
    "python test runner": "pytest unittest nose",
    "js test runner": "jest vitest mocha jasmine",
    "web framework": "flask fastapi django starlette express koa nestjs rails sinatra",
    "go http router": "gin chi echo fiber gorilla/mux",
    "database": "postgres postgresql mysql mariadb sqlite mongodb cockroachdb",
    "cache": "redis memcached",
    "task queue": "celery rq dramatiq huey sidekiq",
    "orm": "sqlalchemy tortoise peewee prisma typeorm gorm diesel",
    "css approach": "styled-components emotion tailwind",
    "rust error handling": "anyhow thiserror eyre",
    "container": "docker podman",
    "orchestrator": "kubernetes k8s nomad",
    "infra as code": "terraform pulumi cloudformation",
    "ci": "jenkins circleci travis",
    "frontend framework": "react vue svelte angular solid",
    "bundler": "webpack vite rollup esbuild parcel",
    "experiment tracker": "wandb mlflow",
}.items():
    for _n in _names.split():
        TECH.setdefault(_n, _slot)
# Technologies that fill no single slot but are worth an entity.
OTHER_TECH = set(
    """python node typescript javascript rust go java kotlin swift ruby php nginx kafka rabbitmq
grafana prometheus sentry s3 dynamodb rds aws gcp azure github gitlab storybook pgvector jsonb alembic
uvicorn gunicorn httpx requests psycopg xdist pytest-xdist pytest-asyncio clippy cargo make nbstripout
mailhog smtp openapi graphql grpc tsconfig eslint prettier webpack jupyter numpy pandas torch cuda
css-modules rocketmq pulsar nats sqs sns fcm apns jpush getui twilio elasticsearch opensearch clickhouse
etcd consul nacos minio canal debezium flink spark airflow vault zookeeper dubbo hbase hive doris
starrocks tidb influxdb cassandra""".split()
)
# Technology names that are also everyday words: counted only when capitalised (or in backticks).
_AMBIGUOUS = frozenset(
    "go make swift rust node express echo fiber solid emotion hatch bun just cross canal vault spark flink consul hive".split()
)
_PHRASES = {
    "css modules": "css approach",
    "github actions": "ci",
    "gitlab ci": "ci",
    "docker compose": None,
    "sqlalchemy 2.0": "orm",
    "react query": None,
}
_CLI = set(
    """pytest uv pip python python3 npm pnpm yarn npx cargo go make docker git terraform ruff black
mypy alembic kubectl gh node deno bun poetry tox nox just bash sh curl psql redis-cli helm ansible
uvicorn gunicorn flask django-admin manage.py jest vitest eslint prettier rustc rustup""".split()
)
_EXT = (
    r"py|pyi|js|mjs|cjs|ts|tsx|jsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|toml|json|ya?ml|md|"
    r"rst|txt|sql|sh|bash|lock|cfg|ini|env|conf|tf|tfvars|css|scss|html|vue|svelte|ipynb|proto|xml|csv"
)
_BACKTICK = re.compile(r"`([^`\n]{1,120})`")
_PATH = re.compile(
    r"(?<![\w/.:@-])((?:~|\.{1,2})?/?(?:[\w.@<>{}-]+/)+[\w.@<>{}-]*|[\w-]+(?:\.[\w-]+)*\.(?:" + _EXT + r"))(?![\w/])"
)
_URL = re.compile(r"https?://([\w.-]+)(?::\d+)?[^\s`'\")]*")
_SERVICE = re.compile(r"\b(?:the\s+)?([a-z][\w-]{1,30})[ -](service|svc|api|worker|pipeline)\b", re.I)
_KEBAB = re.compile(r"(?<![\w./@#$-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/@#-]|\.\w)")
_ZH_SERVICE = re.compile(r"([A-Za-z][\w-]{1,30})\s*(服务)")
_PERSON_BEFORE = re.compile(  # "Alice Chen owns": the whole name, as the store's detector sees it
    r"\b((?:[A-Z][a-z]+\s+)?[A-Z][a-z]{2,15})\s+(?:owns|maintains|runs|leads|is responsible for|is on call|"
    r"reviews|负责)"
)
_PERSON_AFTER = re.compile(
    r"\b(?:ask|ping|talk to|check with|cc|assign(?:ed)? to|owned by|maintained by)\s+"
    r"([A-Z][a-z]{2,15})\b"
)
_HANDLE = re.compile(r"(?<![\w@])@([A-Za-z][\w-]{1,38})\b")
_ZH_PERSON = re.compile(r"([A-Z][a-z]{2,15})\s*(?:负责|在管|是.{0,6}负责人)")
_WORD = re.compile(r"[A-Za-z][\w+#.-]*[\w+#]|[A-Za-z]")
_NOT_PEOPLE = frozenset(
    "the this that then these those there also please when what where which while note "
    "tests test main prod staging ci make use never always don dont".split()
)


@dataclass(frozen=True)
class Mention:
    name: str
    kind: str  # file, command, function, class, technology, service, person, url, known, code
    start: int
    end: int


def _code_kind(code: str) -> str:
    head = code.split()[0] if code.split() else code
    if re.fullmatch(r"[\w.]+\(\)", code):
        return "function"
    if "/" in code and " " not in code and not code.startswith("-"):
        return "file"
    if re.fullmatch(r"[\w-]+(?:\.[\w-]+)*\.(?:" + _EXT + ")", code):
        return "file"
    if head.lower() in _CLI or (" " in code and re.match(r"^[\w.-]+\s", code)):
        return "command"
    if re.fullmatch(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+(?:\.\w+)?", code):
        return "class"
    if re.fullmatch(r"[a-z_][\w]*\.[a-z_][\w.]*", code):
        return "function"
    if code.lower() in TECH or code.lower() in OTHER_TECH:
        return "technology"
    return "code"


def find(text: str, known: dict[str, list[str]] | None = None) -> list[Mention]:
    """Every entity `text` names, in order of appearance, the longest mention winning overlaps."""
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def add(name: str, kind: str, start: int, end: int) -> None:
        name = name.strip().strip(".,;:")
        if not name or len(name) > 120 or any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        out.append(Mention(name, kind, start, end))

    for m in _BACKTICK.finditer(text):
        add(m.group(1), _code_kind(m.group(1).strip()), m.start(), m.end())
    for m in _URL.finditer(text):
        add(m.group(0).rstrip(".,;"), "url", m.start(), m.end())
    if known:
        low = text.casefold()
        for name, aliases in known.items():
            for alias in (name, *aliases):
                for start, end in mentions.alias_spans(alias, low):
                    add(name, "known", start, end)
    for rx in (_SERVICE, _ZH_SERVICE):
        for m in rx.finditer(text):
            base = m.group(1).lower()
            if base in _NOT_PEOPLE or base in ("a", "an", "our", "new", "this", "that", "each", "every"):
                continue
            if text[m.end(1) : m.end(1) + 1] == "-":  # billing-service: the name as written, as the store links it
                add(text[m.start(1) : m.end()].lower(), "service", m.start(1), m.end())
                continue
            suffix = "service" if m.group(2) in ("服务", "svc") else m.group(2).lower()
            add(f"{base} {suffix}", "service", m.start(1), m.end())
    # A lowercase name in code is a part of the system too (fx-rates, user-profile, report-exporter),
    # as the store's detector reads it (`mentions.code_name`): a service when its last part says so.
    for m in _KEBAB.finditer(text):
        if mentions.code_name(m.group(0)):
            kind = "service" if m.group(0).rsplit("-", 1)[-1] in mentions.SOFTWARE_PARTS else "code"
            add(m.group(0), kind, m.start(), m.end())
    for rx in (_PERSON_BEFORE, _PERSON_AFTER, _ZH_PERSON):
        for m in rx.finditer(text):
            if m.group(1).lower() not in _NOT_PEOPLE and m.group(1).lower() not in TECH:
                add(m.group(1), "person", m.start(1), m.end(1))
    for m in _HANDLE.finditer(text):
        add("@" + m.group(1), "person", m.start(), m.end())
    for name, start, end in zhnames.find(mentions.REDACTED.sub(lambda m: " " * len(m.group(0)), text)):
        add(name, "person", start, end)  # 陈爱丽负责, 跟孙悦确认, 老王 (the store's rule: mentions.detect)
    low = text.lower()
    for phrase in _PHRASES:
        for m in re.finditer(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", low):
            add(text[m.start() : m.end()], "technology", m.start(), m.end())
    for m in _PATH.finditer(text):
        p = m.group(1)
        if "/" in p and not (
            p.startswith(("/", "./", "~/", "../"))
            or p.endswith("/")
            or re.search(r"\.(?:" + _EXT + r")$", p)
            or p.count("/") >= 2
        ):
            continue  # "feat/fix/chore", "and/or": words with slashes, not paths
        add(p, "file", m.start(1), m.end(1))
    for m in _WORD.finditer(text):
        w = m.group(0).lower()
        if w in _AMBIGUOUS and not m.group(0)[0].isupper():
            continue  # "only go through", "make sure": words first, technologies when capitalised
        if w in TECH or w in OTHER_TECH:
            add(m.group(0), "technology", m.start(), m.end())
    out.sort(key=lambda x: x.start)
    return out


# -- relations ---------------------------------------------------------------------------------

_WE = r"(?:we|our (?:team|project|repo|codebase|service|app)|this (?:repo|project|codebase|service|app)|the (?:repo|project|codebase|app)|我们|咱们|项目|这个项目)"
_REL_EN = [
    (
        "depends_on",
        re.compile(r"\b(?:(?:depends|depend|relies|rely) on|calls|call into|talks to)\b|依赖(?:于)?|调用", re.I),
        False,
    ),
    ("replaced", re.compile(r"\b(?:replaced|replaces|supersedes|superseded)\b", re.I), False),
    ("owns", re.compile(r"\b(?:owns|own|maintains|is responsible for)\b|负责", re.I), False),
    (
        "uses",
        # (用 in 调用, 费用, 作用, 应用, 引用, 信用, 有用 is no use)
        re.compile(
            r"\b(?:uses|use|using|is built with|are built with|runs on|run on|is backed by|queries|reads from|"
            r"writes (?:to|into))\b|使用|采用|(?<![调费作应引信有])用",
            re.I,
        ),
        False,
    ),
]
_MOVED = re.compile(
    r"(?:\b(?:moved|moving|switched|switching|migrated|migrating|went|going|changed|changing)"
    r"\b.{0,40}?\bfrom\b(?P<old>.{1,60}?)\bto\b(?P<new>.{1,60})|从(?P<zold>.{1,30}?)"
    r"(?:迁移到|迁到|换到|换成|切换到|切到|改成|改用|升级到)(?P<znew>.{1,30}))",
    re.I | re.S,
)
_INSTEAD = re.compile(r"用(?P<znew>.{1,30}?)(?:替换|替代|取代)(?:了)?(?P<zold>.{1,30})")


_BREAK = re.compile(r"[.;。；,，!?！？]")
_NEGATION = re.compile(r"\b(?:not|never|don't|no longer|instead of|rather than)\b|不要|不|别|没", re.I)


def _nearest(mentions: list[Mention], pos: int, before: bool) -> Mention | None:
    cands = [m for m in mentions if (m.end <= pos if before else m.start >= pos) and m.kind not in ("url",)]
    if not cands:
        return None
    return max(cands, key=lambda m: m.end) if before else min(cands, key=lambda m: m.start)


_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[！？。]|\n")


def _asked(text: str, pos: int) -> bool:
    """Whether the sentence holding `pos` is a question: "Should we use Kafka or Redis Streams?"
    states no use of Kafka (a blind trial's store related the project to it)."""
    end = _SENTENCE_END.search(text, pos)
    return end is not None and end.group(0) in ("?", "？")


def relations(text: str, mentions: list[Mention], project: str | None = None) -> list[tuple[str, str, str]]:
    """(source, type, target) triples the sentence states between its mentions; a question states none."""
    found: list[tuple[str, str, str]] = []
    for m in _MOVED.finditer(text):
        if _asked(text, m.start()):
            continue
        old_span = (m.start("old"), m.end("old")) if m.group("old") else (m.start("zold"), m.end("zold"))
        new_span = (m.start("new"), m.end("new")) if m.group("new") else (m.start("znew"), m.end("znew"))
        old = [x for x in mentions if old_span[0] <= x.start < old_span[1]]
        new = [x for x in mentions if new_span[0] <= x.start < new_span[1]]
        if old and new:
            found.append((new[0].name, "replaced", old[0].name))
    for m in _INSTEAD.finditer(text):
        if _asked(text, m.start()):
            continue
        old = [x for x in mentions if m.start("zold") <= x.start < m.end("zold")]
        new = [x for x in mentions if m.start("znew") <= x.start < m.end("znew")]
        if old and new:
            found.append((new[0].name, "replaced", old[0].name))
    for rel, rx, _ in _REL_EN:
        for m in rx.finditer(text):
            if _asked(text, m.start()):
                continue
            dst = _nearest(mentions, m.end(), before=False)
            if dst is None or dst.start - m.end() > 20 or _BREAK.search(text[m.end() : dst.start]):
                continue
            if dst.kind == "command" or _NEGATION.search(text[max(0, m.start() - 8) : m.start()]):
                continue  # "不要再用 npm": not a use; commands are run, not used
            if dst.kind == "file" and dst.name.startswith("/"):
                continue  # "调用 /fares/{trip_id}": an endpoint, not a part
            src = _nearest(mentions, m.start(), before=True)
            head = text[max(0, m.start() - 40) : m.start()]
            if src is None or m.start() - src.end > 25 or _BREAK.search(text[src.end : m.start()]):
                if project and re.search(_WE + r"\W{0,3}(?:\w+\W{1,3}){0,2}$", head, re.I):
                    src_name = project
                else:
                    continue
            else:
                src_name = src.name
            if src_name.casefold() != dst.name.casefold():
                found.append((src_name, rel, dst.name))
    # (said the other way round: "fleet-registry is called by unlock-gateway on every unlock")
    for m in re.finditer(r"\b(?:is|are) (?P<how>owned|called|used|depended on|consumed) by\b", text, re.I):
        if _asked(text, m.start()):
            continue
        src, dst = _nearest(mentions, m.start(), True), _nearest(mentions, m.end(), False)
        if src and dst and dst.start - m.end() <= 20 and m.start() - src.end <= 25:
            kind = {"owned": "owns", "used": "uses"}.get(m.group("how").lower(), "depends_on")
            found.append((dst.name, kind, src.name))
    return list(dict.fromkeys(found))


def category_of(name: str) -> str | None:
    """The slot a technology fills ("database", "web framework"), if it is one we know."""
    n = name.lower().strip("` ")
    return TECH.get(n) or _PHRASES.get(n) or TECH.get(n.split()[0] if n.split() else n)
