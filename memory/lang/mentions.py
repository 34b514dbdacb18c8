"""Cheap detection of the entities a text names: people, speakers, proper names, code things.

Used when a memory is stored (to link it to its entities) and on every query (to find which
known entities the query names). Regular expressions only: it runs on every write and prompt.
The extraction agent adds richer, typed entities and relations on top.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from memory.lang import glossary, zhnames
from memory.lang.text import CJK_RUN, REDACTED, STOPWORDS, WORD

# A conversation turn's speaker: "Caroline: …", "Mel Chen: …", "Anna：…", "老周：…", "王小明: …". The
# label is checked by `speaker` (a name, not a heading: "Database: …", "原因：…" are none). A string,
# compiled on first use (its class of Chinese characters costs a millisecond to compile; see below).
_SPEAKER = r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}|[\u4e00-\u9fff]{2,4})(?::\s|：\s*)"
_CAPS = re.compile(r"\b([A-Z][a-zA-Z0-9+#'-]*[a-zA-Z0-9+#]|[A-Z])(?:\s+([A-Z][a-zA-Z0-9+#'-]*[a-zA-Z0-9+#]))*\b")
# (one line: "Owner: Sam Rivera" over "Last reviewed: …" is Sam Rivera)
_CAPSEQ = re.compile(r"\b[A-Z][\w+#-]*(?:'[A-Z][\w+#-]*)?(?:[ \t]+[A-Z][\w+#-]*(?:'[A-Z][\w+#-]*)?)*")  # O'Neill
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_PATH = re.compile(
    r"(?<![\w/])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|java|rb|c|h|cpp|toml|json|ya?ml|md|sql|sh|lock|cfg|ini|env))\b"
)
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll im ok okay yes no hey hi hello thanks thank wow oh yeah sure great
cool awesome nice good well so and but or the a an this that these those it its my your our their we you
he she they what when where why how which who whom whose do does did is are was were be been can could
would should will may might must let lol haha btw also just really very maybe anyway congrats sorry
please also then now today yesterday tomorrow monday tuesday wednesday thursday friday saturday sunday
mondays tuesdays wednesdays thursdays fridays saturdays sundays
most many some all few several everyone everybody anyone someone nobody people folks
decision decisions note notes todo fyi update reminder remember summary context why result outcome warning
error fix tip lesson rule question answer
incident gotcha check watch abort tell if prerequisites prerequisite before after step steps verify ensure
confirm restart run open page escalate caution important heads
ask ping contact call email message talk see use make get set add send runbook playbook
january february march april june july august september october november december
select from where join inner outer left right full cross on group order by having limit offset insert into
values update set delete create table drop alter index view as not null is in like ilike between distinct
count sum avg min union case else end returning begin commit rollback explain analyze vacuum
primary key foreign references default asc desc
warn info debug trace fatal crit critical notice panic""".split()
)  # with the labels that start a "Decision: ..." or "Note: ..." line, which has no speaker; SQL's
# keywords (SELECT ... FROM ... WHERE) and log levels (ERROR|WARN), capitalised by convention

# Code-shaped names: kebab-case, snake_case, dotted (billing-service, invoice_worker,
# django.contrib.auth), a token of at least two parts. Not inside a path, an e-mail or a URL: no
# word, slash, @ or hyphen on either side, and no dot before (a trailing sentence period is fine).
_CODE_NAME = re.compile(r"(?<![\w/.@#$-])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?!\.?[\w/@#-])")
# Words that make ordinary hyphenated compounds (well-known, read-only, end-to-end, follow-up,
# one-off, up-to-date, self-hosted): a kebab-case token with one of them is a word, not a name.
# Chosen from the compounds a coding team writes, before measuring (tests/data/entity_eval).
_COMPOUND = frozenset(
    """well read only end to of the and or by in on off out up down over under back front top
follow one two three four five first second third last half full self non pre re co anti multi semi
sub cross long short high low real fine hand auto per opt case so mid zero double single state step
built known ad hoc hot roll sign trade check set log plug add day year month week time date next old
new brand open close free like wide safe ready side term level based related specific aware sensitive
insensitive compatible friendly facing first-class all any no part more most less least very left right
right way ever never far near above below inter intra post un de dis mis dry best through
black white red green blue
""".split()
)
_NAMING_WORDS = frozenset("snake_case kebab-case camel_case camelcase pascal_case screaming_snake_case".split())
# A last part that names a piece of software keeps a compound a name (read-api, data-pipeline).
SOFTWARE_PARTS = frozenset(
    """service svc api apis worker workers gateway db engine web app ui bridge relay pipeline indexer proxy
client server sdk lib cli bot job cron queue topic events bus portal store cache runner scheduler
consumer producer exporter importer dispatcher router daemon agent sync
""".split()
)
_FILE_END = re.compile(
    r"\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|toml|json|ya?ml|md|rst|txt|sql|sh|"
    r"lock|cfg|ini|env|conf|tf|css|scss|html|vue|proto|xml|csv|log|ipynb)$",
    re.I,
)


def code_name(token: str) -> bool:
    """Whether a kebab-case, snake_case or dotted token names a thing rather than being a word.

    Kept: lowercase kebab-case unless a part is a compound-forming word (well-known, read-only;
    a software last part overrides: read-api); snake_case unless in UPPER_SNAKE (an environment
    variable or constant) or made of compound words only (up_to_date); dotted names whose parts
    are all two characters or more (not e.g., i.e., v1.2) and that are not file names.
    """
    low = token.lower()
    if low in _NAMING_WORDS or _FILE_END.search(token):
        return False
    parts = re.split(r"[-_.]", low)
    if "." in token:
        if any(len(p) < 2 or p[0].isdigit() for p in parts) or token.split(".")[0][:1].isupper():
            return False  # e.g. / v1.2 / Node.js: abbreviations, versions and product names
        return parts[0] not in ("self", "this", "cls")
    if "_" in token:
        if token.isupper() or parts[-1] in ("at", "of", "to", "by", "on", "in", "for"):
            return False  # MAX_RETRIES is a constant, deleted_at / reversal_of a column
        return not all(p in _COMPOUND or p.isdigit() for p in parts)
    if token != low or len(parts[0]) < 2:
        return False  # Title-Case-Kebab is a header or a sentence start; e-mail, x-ray are words
    if parts[-1] in SOFTWARE_PARTS:
        return True
    if any(p in _COMPOUND for p in parts):
        return False
    # -ed / -ing / -able last parts make adjectives: server-rendered, long-running, backward-compatible
    return not re.search(r"(?:ed|ing|able|ible)$", parts[-1])


# A Chinese name for a part of the system ("账本服务", "支付网关", "搜索索引服务"): glossary words ending in
# a word for a part. It is the name in code whose words it translates (ledger-api, payment-gateway,
# search-indexer: `same_part`), as a team writing both languages means it. Only whole glossary words:
# "用户画像服务" is no name of user-profile while the glossary does not know 画像.
ZH_PART_ENDS = ("服务", "网关", "引擎", "平台", "系统")
_ZH_PART_END = re.compile("|".join(ZH_PART_ENDS))
_ZH_PART_MAX = 8  # characters before the ending
# what is done to a part, said before its name: no word of the name ("负责通知服务" names 通知服务), unless
# it is all the name has before its ending (通知服务)
_ZH_PART_VERB = re.compile(
    r"(?:负责|使用|调用|依赖|维护|部署|重启|上线|下线|发布|迁移|接入|对接|访问|请求|升级|回滚|修复|关闭|监控|查看|"
    r"重构|测试|压测|扩容|缩容|通知|告诉|提醒)"
)


def zh_part_names(text: str) -> list[str]:
    """The Chinese names for parts of the system in `text`, the longest reading of each."""
    out = []
    for run in CJK_RUN.findall(text):
        for m in _ZH_PART_END.finditer(run):
            for start in range(max(0, m.start() - _ZH_PART_MAX), m.start()):
                verb = _ZH_PART_VERB.match(run, start)
                if verb and verb.end() < m.start():
                    continue
                if glossary.english_of(run[start : m.end()]) is not None:
                    out.append(run[start : m.end()])
                    break
    return list(dict.fromkeys(out))


def same_part(chinese: str, code: str) -> bool:
    """Whether a Chinese name for a part (`zh_part_names`) and a name in code name one thing: every
    word of the code name but its software ending (-api, -svc, -service) is a translation of a word of
    the Chinese one, and the other way round (服务 stands for any ending). Word forms count as one
    (index / indexer, export / exporter)."""
    words = glossary.english_of(chinese)
    if not words:
        return False
    if "service" in words[-1]:
        words = words[:-1]
    parts = [p for p in re.split(r"[-_.]", code.casefold()) if p]
    core = [p for p in parts if p not in SOFTWARE_PARTS]

    def alike(english: frozenset[str], part: str) -> bool:
        return any(
            e == part or (min(len(e), len(part)) >= 4 and (part.startswith(e) or e.startswith(part))) for e in english
        )

    return (
        bool(words and core)
        and all(any(alike(w, p) for w in words) for p in core)
        and all(any(alike(w, p) for p in parts) for w in words)
    )


# A part's Chinese name written with its name in code: "计价引擎（pricing-engine）", "payout-service（结算服务）",
# "电子围栏就是 geo-fence 服务". Said so, it is an alias, glossary or not. (A time word before it is no part
# of it, "本周遥测采集（telemetry-ingest）", nor what a particle ends, "由王磊负责的计价引擎（…）"; a name opening on
# one keeps it, "在线支付服务".)
_CODE = r"`?(?P<code>[a-z][a-z0-9]*(?:-[a-z0-9]+)+)`?"
_HAN = r"(?P<han>[\u4e00-\u9fff]{2,10})"
_PART_PAIRS = (
    re.compile(_HAN + r"[ \t]*[（(][ \t]*" + _CODE + r"[ \t]*[)）]"),
    re.compile(r"(?<![\w-])" + _CODE + r"[ \t]*[（(][ \t]*" + _HAN + r"[ \t]*[)）]"),
    re.compile(_HAN + r"[ \t]*(?:就是|也就是|即)[ \t]*" + _CODE),
)
_HAN_LEAD = re.compile(
    r"^(?:.+[的是在由和跟与把将给对从向于了])|^(?:本周|这周|上周|下周|今天|昨天|明天|目前|现在|最近|之前|以前)+"
)


def part_pairs(text: str) -> list[tuple[str, str]]:
    """(name in code, Chinese name) for each part `text` names both ways (_PART_PAIRS); not a person's
    name in brackets ("payout-service（陈思雨）" says who, not what)."""
    out = []
    for rx in _PART_PAIRS:
        for m in rx.finditer(text):
            han = _HAN_LEAD.sub("", m.group("han"))
            if len(han) >= 2 and code_name(m.group("code")) and not zhnames.plausible(han):
                out.append((m.group("code"), han))
    return list(dict.fromkeys(out))


def zh_names_for(code: str, most: int = 64) -> list[str]:
    """The Chinese names a part called `code` may go by (`same_part` holds for each): its words put
    into Chinese by the glossary, in order, ending in 服务 or the part's own word (网关): ledger-api ->
    账本服务, 台账服务, …; search-indexer -> 搜索索引服务, 搜索服务, …. [] when a word has no Chinese."""
    parts = [p for p in re.split(r"[-_.]", code.casefold()) if p]
    options: list[list[str]] = []
    for n, p in enumerate(parts):
        zh = set(glossary.counterparts(p)) | set(glossary.counterparts(re.sub(r"(?:er|or)$", "", p)))
        if p in SOFTWARE_PARTS:
            ending = n == len(parts) - 1
            options.append(sorted(zh - {"服务"}) + [""] if ending else sorted(zh) + [""])
        elif zh:
            options.append(sorted(zh))
        else:
            return []
    names = []
    for combo in itertools.product(*options):
        stem = "".join(combo)
        for name in (stem if stem.endswith(ZH_PART_ENDS) else None, stem + "服务"):
            if name and len(names) < most and same_part(name, code):
                names.append(name)
    return list(dict.fromkeys(names))


def detect(text: str) -> list[tuple[str, str, str]]:
    """(name, kind, role) for each entity `text` names; role is 'speaker' or 'mention'."""
    found: dict[str, tuple[str, str, str]] = {}
    body = REDACTED.sub(lambda m: " " * len(m.group(0)), text)  # "[REDACTED:github-token]" is no name
    m = _speaker_label(body)
    if m:
        found[m.group(1).casefold()] = (m.group(1), "person", "speaker")
        body = body[m.end() :]
    for m in _CAPSEQ.finditer(body):
        if "_" in m.group(0) and m.group(0).isupper():
            continue  # MAX_POLL_RECORDS: a constant or an environment variable, not a name
        words = m.group(0).split()
        if words[-1].isupper() and re.match(r"[ \t]*=(?!=)", body[m.end() :]):
            words = words[:-1]  # SERVICE=ledger-sync, "set TIMEOUT = 30": a variable being set
        if len(words) == 1 and _sentence_start(body, m.start()) and not _proper_looking(words[0]):
            words = words[1:]  # "Sounds great": capitalised because it starts a sentence
        words = [w for w in words if w.lower() not in _NOT_NAMES]
        if not words:
            continue
        name = " ".join(words)
        if len(name) < 2 or name.casefold() in found:
            continue
        found[name.casefold()] = (name, "name", "mention")
    for name, _, _ in zhnames.find(_BACKTICK.sub(lambda m: " " * len(m.group(0)), body)):
        found.setdefault(name.casefold(), (name, "person", "mention"))  # 陈爱丽负责, 跟孙悦确认, 老王
    for code in _BACKTICK.findall(body):
        code = code.strip()
        if code and code.casefold() not in found:
            found[code.casefold()] = (code, "code", "mention")
    for path in _PATH.findall(body):
        if path.casefold() not in found:
            found[path.casefold()] = (path, "file", "mention")
    for m in _CODE_NAME.finditer(body):
        name = m.group(0)
        if name.casefold() not in found and code_name(name):
            found[name.casefold()] = (name, "code", "mention")
    return list(found.values())


_INNER_CAP = re.compile(r"^.[^A-Z]*[A-Z]|[0-9+#]")


# What a document's heading says, not who speaks: "Database: PostgreSQL 15 …", "OSRM: …" (a pasted runbook's
# sections are read as "Heading: line", the shape of a dialogue's turn).
_HEADING_WORDS = frozenset(
    """overview database connect connection backups backup escalation rollback deploy deploys deployment access
alerts alerting troubleshooting setup usage contacts contact service services config configuration install
installation testing tests release releases monitoring symptom cause fix steps prerequisites requirements faq
summary background architecture ports storage cache logging logs security notes owner owners on-call oncall""".split()
)


# Whose turns of a chat between a user and an assistant answer a question: one in the first person
# ("how many plants did I put in", "我上次说的端口是多少") asks what its asker said or did, and the asker
# is the user; one about what the assistant said ("the trail you recommended", "你上次推荐的") asks for
# the assistant's turn. "we" is a team; "can you remind me", "do you think" only address the assistant.
_FIRST_PERSON = re.compile(r"(?<![\w/-])[Ii](?:'m|'ve|'d|'ll)?(?![\w/-])|(?i:\b(?:my|me|mine|myself)\b)|我(?!们)")
_ASSISTANT_SAID = re.compile(
    r"(?i:\byou(?: \w+)? (?:said|told|recommended|suggested|mentioned|provided|gave|listed|created|wrote|shared|"
    r"described|explained|proposed|came up with)\b|\bdid you (?:say|tell|recommend|suggest|mention|give|list|write|"
    r"share|propose)\b)|[你您](?:之前|上次|刚才|刚刚)?(?:说|推荐|建议|提到|给|写|列)"
)


# What frames a question rather than asking it: a sentence or clause about "our previous conversation" (the
# chat as a whole), and a request to the assistant ("can you remind me", "I was wondering"). "I'm going back to our
# previous conversation about embroidery. Can you remind me of that online store…" asks nothing of what its asker said.
_FRAMING_CLAUSE = re.compile(
    r"(?i)\bour (?:\w+ )?(?:conversation|chat|discussion)s?\b|\bwe (?:discussed|talked|chatted|spoke)\b|"
    r"我们(?:之前|上次)?的?(?:对话|聊天)"
)
_REQUEST = re.compile(
    r"(?i)\b(?:remind|tell|give|show|help|let) me\b|\bI(?:'m| am| was) wondering\b|"
    r"\bI (?:wanted|want|would like|'d like) to (?:confirm|ask|check)\b|(?:提醒|告诉)我"
)


def asked_of(question: str) -> str | None:
    """Whose turns answer `question`: "assistant" when it asks what the assistant said, "user" when
    it speaks of its asker in the first person singular (I, my, 我; not we) beyond its framing, else None."""
    if _ASSISTANT_SAID.search(question):
        return "assistant"
    clauses = re.split(r"(?<=[.?!,;。？！，；])\s*|\s+and\s+(?=I\b)", question)
    asked = _REQUEST.sub(" ", " ".join(c for c in clauses if not _FRAMING_CLAUSE.search(c)))
    return "user" if _FIRST_PERSON.search(asked) else None


def speaker(text: str) -> str | None:
    """Who says `text`, when it is a conversation's turn ("Caroline: …", "老周：…"): the name, or None."""
    m = _speaker_label(text)
    return m.group(1) if m else None


def _speaker_label(text: str) -> re.Match[str] | None:
    """The speaker's label that opens `text` ("Caroline: "), when it is a name (`_speaker_like`)."""
    m = re.match(_SPEAKER, text)
    return m if m and _speaker_like(m.group(1)) else None


def _speaker_like(name: str) -> bool:
    """A speaker's name is written as a name ("Caroline", "Mel Chen"), not an acronym or a section's
    word; in Chinese a full name (王小明, 欧阳娜娜), a name with a title (王总, 李老师) or what a team calls
    someone by the surname (老周, 小王; not 小米, 小于, which are words)."""
    if CJK_RUN.fullmatch(name):
        return zhnames.plausible(name) or zhnames.titled(name) is not None or zhnames.by_surname(name)
    if name.lower() in _NOT_NAMES:
        return False
    words = name.split()
    return all(re.fullmatch(r"[A-Z][a-z][\w'.-]*", w) for w in words) and name.casefold() not in _HEADING_WORDS


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip(" \t\"'(“‘")
    return not before or before[-1] in ".!?:;\n…。！？"


def _proper_looking(word: str) -> bool:
    """Capitalised for a reason other than starting a sentence: LGBTQ, FastAPI, GitHub, K8s."""
    core = word.strip("'-")
    return (len(core) >= 2 and core.isupper()) or bool(_INNER_CAP.search(core[1:] if core else ""))


def query_keys(query: str) -> list[str]:
    """Normalised strings that may name an entity in `query`: words, word pairs and triples,
    code spans and paths, lowercase or not (people type `pytest` and `Caroline` alike)."""
    words = [w for w in WORD.findall(query) if w.lower() not in STOPWORDS]
    keys = {w.casefold() for w in words if len(w) > 1}
    raw = WORD.findall(query)
    for n in (2, 3):
        for i in range(len(raw) - n + 1):
            keys.add(" ".join(raw[i : i + n]).casefold())
    for code in _BACKTICK.findall(query):
        keys.add(" ".join(code.split()).casefold())
    for path in _PATH.findall(query):
        keys.add(path.casefold())
    for name, _, _ in detect(query):
        keys.add(" ".join(name.split()).casefold())
    # Aliases as written: "A. Chen", alice.chen@corp, 陈爱丽 inside a Chinese run.
    keys.update(k for k in name_keys(query) if k not in STOPWORDS)
    return [k for k in keys if k]


# What a question asks of a relation: "who owns ledger-api?", "账本服务谁负责？", "what does
# billing-service depend on?", "what did we replace RabbitMQ with?". The types are the ones the
# writers use (`entities.relations`, the owner rule `extraction.rules.owner_of`); retrieval's
# relation channel reads the memories that state such a relation of an entity the question names.
# Each kind lists the type the writers use first, then the names a person relating by hand
# (`entity_relate`) is likely to give it.
_WH = r"\b(?:what|which|who|whom)\b[^?.!。？！]{0,40}"  # (a question's word, then what it asks)
_ASKED = (
    (
        ("owns", "owned_by", "owner_of", "maintains", "maintained_by", "responsible_for"),
        r"\b(?:own|owns|owned|owner|owners|ownership|maintain|maintains|maintained|maintainer|maintainers|"
        r"responsible|in charge|point of contact|looks? after)\b|\bwho(?:m)?\b[^.?!]{0,24}\b(?:ask|ping|contact|"
        r"talk to|go to|reach)\b|负责|谁管|归谁|谁在管|管哪|在管|维护|找谁|对接人|owner",
    ),
    (
        ("depends_on", "calls", "requires"),
        r"\b(?:depend|depends|dependency|dependencies|rely|relies|call into)\b|" + _WH + r"\bcalls?\b|依赖|调用|调哪",
    ),
    (
        # (only asked: "how do I use X" asks no use of anything)
        ("uses", "built_with", "built_on", "runs_on"),
        _WH + r"\b(?:use|uses|used|using|built (?:on|with)|runs? on|backed by|behind)\b|\b(?:what|which)\s+(?:\w+\s+)?"
        r"(?:database|db|datastore|queue|broker|cache|search engine|engine|framework|language|library|storage)s?\b|"
        r"用的(?:是)?(?:什么|哪)|用什么|用了什么|用哪|(?:哪个|什么|哪种|哪些)(?:数据库|库|队列|消息队列|缓存|引擎|搜索引擎|框架|语言|存储)|"
        r"基于什么|跑在(?:什么|哪)",
    ),
    (
        ("replaced", "replaces", "replaced_by", "migrated_to"),
        r"\b(?:replace|replaced|replaces|replacing|replacement|instead of|switch|switched|migrate|migrated|"
        r"migration|moved? (?:from|to|off)|used to)\b|" + _WH + r"\buse\b[^?.!]{0,30}\b(?:before|previously)\b|"
        r"换成|换了|替换|替代|取代|迁到|迁移|(?:之前|以前|原来)(?:用|走)",
    ),
)
_ASKED_RX = [(kinds, re.compile(rx, re.I)) for kinds, rx in _ASKED]


# Who points at the thing named, for the relations that have a direction: "which services call
# user-profile?", "what depends on ledger-api?", "risk-engine 被哪些服务调用？" ask for the source of a call
# to it; "what does billing-service call?", "ledger-api 会调用哪些服务？" for where its own calls go.
_ASKED_INTO = re.compile(
    r"\b(?:which|what|who)\b[^?.!]{0,30}\b(?:calls?|depends? on|relies on|rely on|uses?)\s+(?:the\s+)?[`\w\u4e00-\u9fff]|"
    r"被[^，。？?]{0,10}(?:调用|依赖|使用)|(?:哪些|什么|哪个|谁)(?:服务|系统|模块)?(?:会|在)?(?:调用|依赖|使用|用)",
    re.I,
)
DIRECTED = frozenset(("depends_on", "calls", "requires", "uses", "built_with", "built_on", "runs_on"))


def asked_into(query: str) -> bool:
    """Whether `query` asks what points at the thing it names (`_ASKED_INTO`) rather than where it points."""
    return bool(_ASKED_INTO.search(query))


# A question after a value of a thing, not the thing it uses: "what port does ledger-sync use?",
# "ledger-sync 用哪个端口？" (the relation channel had put "ledger-sync uses httpx" first; blind trial 45).
_ASKS_VALUE = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+)?(?:port|host|hostname|ip|address|url|endpoint|domain|version|timeout|ttl|"
    r"path|directory|folder|bucket|namespace|region|schedule|cron|time|day|limit|size|name)s?\b|"
    r"(?:什么|哪个|哪一个|哪些|多少|几)\s*(?:端口|地址|版本|主机|域名|路径|目录|时间|超时|过期时间|命名空间|区域|名字|名称)",
    re.I,
)


def asked_relations(query: str) -> list[str]:
    """The relation types `query` asks about (see _ASKED); [] for one that asks about none. A question
    after a value ("what port does X use?") asks of no use."""
    value = _ASKS_VALUE.search(query)
    return [t for kinds, rx in _ASKED_RX if rx.search(query) and not (value and "uses" in kinds) for t in kinds]


MAX_NAME = 200  # characters: a detector's "name" longer than any name is dropped, never an error


def entities_for(text: str, known: dict[str, list[str]]) -> list[tuple]:
    """The entities every write path links a memory to: what `detect` finds plus the configured
    known entities (by name or alias). One rule, so that the same text stored through any entry
    point (tool, CLI, import, extraction, consolidation) gets the same links.

    A person the text names together with their other names (`aliases_in`: Alice Chen（陈爱丽）,
    everyone calls him Lao Wang) is one entry (name, "person", role, aliases, nicknames), in place of
    the names found apart (role: "speaker" when one of the names speaks the text, else "mention")."""
    found: list[tuple] = detect(text) + list(known_in(text, known))
    for name, aliases, nicknames, kind in aliases_in(text):
        names = {norm_name(n) for n in (name, *aliases, *nicknames)}
        # the strongest role of any of the names: "Nana: … I'm Li Na, everyone calls me Nana" is said by Li Na
        role = "speaker" if any(e[2] == "speaker" and norm_name(e[0]) in names for e in found) else "mention"
        found = [e for e in found if norm_name(e[0]) not in names]
        found.append((name, kind, role, tuple(aliases), tuple(nicknames)))
    return [e for e in found if 0 < len(" ".join(e[0].split())) <= MAX_NAME]


# A person's names written together: Alice Chen（陈爱丽）, 陈爱丽 (Alice), Alice Chen (A. Chen, 爱丽),
# 陈爱丽（Alice Chen，@achen）. The first is the name; what the brackets hold are aliases.
_LATIN_WORD = r"[A-Z](?:[a-z]*'[A-Z])?[a-z]+"  # Alice, O'Neill
_LATIN_PERSON = rf"(?:[A-Z]\.[ \t]?)?{_LATIN_WORD}(?:[ \t]+{_LATIN_WORD}){{0,2}}"
# Strings, compiled on first use (and cached by `re`): a class of Chinese characters costs a
# millisecond or more to compile, and the prompt hook imports this module for every prompt and
# needs none of these (only the write path reads a person's names in brackets).
_LATIN_HEAD = rf"(?<![\w.@/-])({_LATIN_PERSON})[ \t]*[（(]([^()（）\n]{{1,80}})[)）]"
_HAN_HEAD = r"([\u4e00-\u9fff]{2,4})[ \t]*[（(]([^()（）\n]{1,80})[)）]"
_ITEM_SPLIT = r"\s*[,，、/;；]\s*|\s+(?:or|aka|a\.k\.a\.)\s+|\s*(?:或|又名|也叫)\s*"
_INITIALS = r"[A-Z]\.(?:[ \t]?[A-Z]\.)*[ \t]?[A-Z][a-z]+|[A-Z][a-z]+[ \t][A-Z]\."  # A. Chen, Alice C.
_HANDLE_OR_MAIL = r"@[A-Za-z][\w.-]{1,38}|[\w.+-]+@[\w-]+(?:\.[\w-]+)*"
_LATIN_ITEM = rf"{_LATIN_PERSON}|{_INITIALS}|{_HANDLE_OR_MAIL}"
_LOGIN_CUE = r"(?i:(?:github|gitlab|slack|ldap|sso)?[ \t]*(?:login|handle|username|user|id)|github|账号|用户名)[ \t]*[:：]?[ \t]*"
_HAN_ITEM = r"[\u4e00-\u9fff]{1,4}"
# What says which name an item in the brackets is: 陈晓雨（小雨，英文名 Rain，登录名 xchen）, Priya (known as PN)
_LABEL = (
    r"^(?:(?:英文名字?|英文|中文名|花名|昵称|外号|小名|大家叫(?:她|他)?|登录名|登录|账号|用户名|"
    r"(?i:known as|aka|a\.k\.a\.|nickname|nicknamed|nick|called|goes by|go by|went by))\s*[:：是为]?\s*)(?=\S)"
)
# A name written in quotes, and where it is used after it: "Howie", goes by "PS" in Slack
_QUOTED = r"^[\"“'‘「『]([^\"”'’」』]{1,30})[\"”'’」』](?:\s+(?:in|on)\s+\w+)?$"


def _unlabelled(items: list[str], logins: bool = False) -> list[str]:
    """The items of a bracket without their labels ("登录名 xchen" -> "xchen"); a login's cue kept
    unless `logins` (where the item's shape says it is a login)."""
    out = []
    for item in items:
        cue = re.match(_LOGIN_CUE, item)
        if cue and logins and re.fullmatch(r"[a-z][a-z0-9_.-]{2,20}", item[cue.end() :]):
            out.append(item[cue.end() :])
        else:
            item = item if cue else re.sub(_LABEL, "", item)
            quoted = re.match(_QUOTED, item)
            out.append(quoted.group(1) if quoted else item)
    return out


def _quoted_in(items: list[str]) -> set[str]:
    """The items written in quotes ("Howie"): a nickname, said to be one."""
    return {q.group(1) for i in items if (q := re.match(_QUOTED, re.sub(_LABEL, "", i)))}


_LOGIN = rf"[a-z][a-z0-9_.-]{{2,20}}|{_LATIN_ITEM}"  # jzhou, xlin, @jzhou, Tom: what else a named person is called


def aliases_in(text: str) -> list[tuple[str, list[str], list[str], str]]:
    """(name, aliases, nicknames, kind) of each person `text` names together with their other
    names in brackets, or with the nicknames it says they have (`_nicknames`: everyone calls him
    Lao Wang). The kind is "person", or "name" for a name only "aka" / "known as" follows
    (Apache Kafka, also known as Kafka: an alias, but nothing says a person).

    A Latin name counts with a Chinese name (陈爱丽), a Chinese nickname when the name is a full
    one (Alice Chen (爱丽): 爱丽 and, with the surname Chen, 陈爱丽), initials (A. Chen), a handle
    or an e-mail; a Chinese name (by `zhnames`) with Latin names, initials, handles or e-mails.
    A full English name written with a Chinese one also gives its given name (Alice).
    Anything else in the brackets ("tech lead", "DBA") is no alias, and brackets holding no name
    of a person ("Postgres (PG)") make no pair."""
    bracketed = "(" in text or "（" in text
    if not bracketed and not re.search(_NICK_CUE, text):
        return []
    body = REDACTED.sub(lambda m: " " * len(m.group(0)), text)
    found_zh = list(zhnames.find(body))
    zh = {s: n for n, s, _ in found_zh}
    out: list[tuple[str, list[str]]] = []
    heads: list[tuple[str, int]] = []  # (name, start) of each pair's head, for `_nicknames`
    for m in re.finditer(_LATIN_HEAD, body):
        words = m.group(1).split()
        while words and words[0].casefold() in _NOT_NAMES:
            words = words[1:]  # "Thanks Alice (陈爱丽)": the name after a sentence's first word
        if not words:
            continue
        head = " ".join(words)
        aliases: list[str] = []
        said = [i.strip() for i in re.split(_ITEM_SPLIT, m.group(2)) if i.strip()]
        items = _unlabelled(said)
        # a Chinese name, initials, a handle or an e-mail say the head is a person; so does a full name in
        # pinyin (Liu Yang), or a nickname in quotes after a full name (Marcus Olsen ("Moe"))
        quoted = _quoted_in(said)
        labelled = {
            re.sub(_LABEL, "", i) for i in said if re.match(_LABEL, i)
        }  # "goes by Will": a name, whatever the word
        personal = len(words) >= 2 and (words[0].casefold() in zhnames.ROMANISED or bool(quoted))
        for item in items:
            login = re.match(_LOGIN_CUE, item)
            if login and re.fullmatch(r"[a-z][a-z0-9_.-]{2,20}", item[login.end() :]):
                aliases.append(item[login.end() :])  # (Maggie, login moneill): their login
                personal = True
            elif (
                re.fullmatch(r"[A-Z]{2,3}", item)
                and len(words) >= 2
                and (item in quoted or len(items) == 1 or _is_initials(item, words))
            ):
                aliases.append(item)  # Priya Iyer (PJ, …): initials said as a name, when the rest says a person
            elif re.fullmatch(_HAN_ITEM, item):
                if zhnames.plausible(item) or (len(words) >= 2 and len(item) >= 2):
                    aliases.append(item)
                    personal = True
                    if len(words) >= 2:
                        aliases += zhnames.with_surname(item, head)
            elif re.fullmatch(_INITIALS, item) or re.fullmatch(_HANDLE_OR_MAIL, item) or _login_from(item, words):
                aliases.append(item)
                personal = True
            elif re.fullmatch(_LATIN_PERSON, item) and (item.casefold() not in _NOT_NAMES or item in labelled):
                aliases.append(item)  # Ally, A. Chen's nickname: kept when the rest says "a person"
        if personal:
            if not _surname_first(head, aliases) and not (  # (Wang Fang: Wang is the surname, no given name)
                words[0].casefold() in zhnames.ROMANISED and not any(CJK_RUN.fullmatch(a) for a in aliases)
            ):  # (a person by their login too: Priya for Priya Natarajan)
                aliases += _given_name(head)
            out.append((head, list(dict.fromkeys(aliases))))
            heads.append((head, m.start(1) + len(m.group(1)) - len(head)))
    for m in re.finditer(_HAN_HEAD, body):
        run_start = m.start(1)
        head = next((n for s, n in zh.items() if s >= run_start and s + len(n) == m.end(1)), None)
        pair = _han_pair(m.group(1), m.group(2))
        if pair is not None:  # 小李（李娜）, 周涛（老周）: a full name and its nickname (and logins: jzhou)
            full, nick, outer = pair
            logins = [
                i for i in _unlabelled(re.split(_ITEM_SPLIT, m.group(2).strip()), True) if re.fullmatch(_LOGIN, i)
            ]
            out.append((full, [nick, *logins]))
            heads.append((full, m.end(1) - len(outer)))
            continue
        if head is None:
            continue  # 计费服务 (billing-service): no person's name
        aliases = [  # 周建国（jzhou）: a person's name and their login
            item
            for item in _unlabelled([i.strip() for i in re.split(_ITEM_SPLIT, m.group(2))], True)
            if re.fullmatch(_LOGIN, item) and item.casefold() not in _NOT_NAMES
        ]
        if aliases:
            aliases += [g for a in aliases for g in _given_name(a)]
            out.append((head, list(dict.fromkeys(aliases))))
            heads.append((head, m.start(1)))
    people = sorted([(n, s, s + len(n)) for n, s in heads] + found_zh + list(_latin_people(body)), key=lambda p: p[1])
    named = [(head, aliases, [], "person") for head, aliases in out]
    for person, nicks, personal in _nicknames(body, people):
        if not nicks:
            continue  # "we call him when the build breaks": no name follows
        entry = next((e for e in named if norm_name(person) in {norm_name(n) for n in (e[0], *e[1], *e[2])}), None)
        if entry is None:
            entry = (person, [], [], "person" if personal else "name")
            named.append(entry)
        nicks += [t for nick in nicks for t in _romanised_title(nick, [entry[0], *entry[1]])]
        taken = {norm_name(n) for n in (entry[0], *entry[1])}
        entry[2][:] = list(dict.fromkeys(n for n in (*entry[2], *nicks) if norm_name(n) not in taken))
    return named


def _han_pair(before: str, inside: str) -> tuple[str, str, str] | None:
    """(full name, nickname, the one outside the brackets) when a Chinese full name and a nickname of that person stand one in
    brackets after the other: 小李（李娜）, 李娜（小李）, 周涛（老周）, 陈杰（阿杰）, 林浩（浩哥）. The nickname
    must fit the name (`zhnames.nickname_of`), so 计费（小王） is no pair."""
    items = _unlabelled([i.strip() for i in re.split(_ITEM_SPLIT, inside) if i.strip()], True)
    han = [i for i in items if re.fullmatch(_HAN_ITEM, i)]
    if len(han) != 1 or not all(i in han or re.fullmatch(_LOGIN, i) for i in items):
        return None  # (one Chinese name; the rest, if any, their logins: 老周（周建国，jzhou）)
    items = han
    for size in (3, 2):  # the name that ends where the brackets open
        outer = before[-size:]
        for full, nick in ((outer, items[0]), (items[0], outer)):
            if zhnames.plausible(full) and zhnames.nickname_of(nick, full):
                return full, nick, outer
    return None


def norm_name(name: str) -> str:
    return " ".join(name.split()).casefold()


# How a text says what else a person is called. After a cue for "the person this sentence is
# about" (everyone calls him X, 大家叫她X) or right after the person's name (Alice Chen, aka AC;
# 王博，外号老王; Alice Chen (AC for short)). A name must come before: "we call the API" and
# "the service is known as flaky" name nobody, and nothing is carried from one memory to another.
_CALLED = (
    r"(?i:\b(?:everyone|everybody|people|folks|we|the team|colleagues|most of us|all of us)"
    r"\s+(?:\w+\s+)?calls?\s+(?:him|her|me)\s+)"
    r"|(?:大家|我们|同事们?|别人|团队里?|组里)(?:都|一般|通常|平时)?(?:叫|称呼|管)(?:他|她|我)(?:叫|为|作)?"
)
_NAMED = (
    r"(?i:\b(?:aka|a\.k\.a\.?|(?:also\s+|better\s+|commonly\s+|widely\s+)?known\s+as|goes\s+by|nicknamed)\s+)"
    r"|(?:外号|绰号|昵称|人称|简称)(?:是|叫|为)?"
)
# A person's other name stated outright: "老周…他大名叫周涛，英文名 Tom", "Dee — her full name is Dana Li"
_REAL_NAME = (
    r"(?:(?:他|她)的?)?(?:大名|本名|全名|真名|中文名|英文名字?)(?:叫|是)?"
    r"|(?i:\b(?:his|her) (?:real|full|legal|english|chinese) name is\b)"
)
_FOR_SHORT = r"[(（,，][ \t]*([A-Z][A-Za-z]*(?:[ \t][A-Z][A-Za-z]*)?|[\u4e00-\u9fff]{2,4})[ \t]+for short\b"
# A short name said to be a full one: "Kat is Katherine Liu, our tech lead" (the short name starts as the
# full name's first does); the names that are hers too: "if you see kliu or Kat in commits it's the same person".
_SHORT_IS_FULL = r"(?<![\w.@/-])([A-Z][a-z]{1,11}) (?:is|=) ([A-Z][a-z]+(?: [A-Z][a-z]+){1,2})\b"
_SAME_PERSON = (
    r"(?i:\bif you see\s+([\w.@-]+)(?:\s*(?:,|or)\s*([\w.@-]+))?(?:\s*(?:,|or)\s*([\w.@-]+))?\b.{0,40}?"
    r"\b(?:it'?s|that'?s|they'?re) (?:all )?the same person)"
)
# A person's login said outright: "周建国's LDAP / GitHub login is jzhou", "老周的账号是 jzhou", "Dana's handle is dli".
_LOGIN_IS = (
    r"(?<![\w.@/-])(?P<who>[\u4e00-\u9fff]{2,4}|[A-Z][a-z]+(?:[ \t][A-Z][a-z]+)?)(?:'s|’s|的)[ \t]*"
    r"(?:(?i:ldap|github|gitlab|slack|sso|git|login|username|user|handle|账号|用户名|登录名)[ \t]*(?:/|和|、|or|and)?[ \t]*)+"
    r"(?:(?i:login|name|handle|id)[ \t]*)?(?:is|是|为)[ \t]*[`'\"]?@?(?P<login>[A-Za-z][\w-]{1,30}(?:\.[\w-]+)*)"
)
_NOT_LOGINS = frozenset(("via", "through", "with", "the", "a", "an", "sso", "ldap", "oauth", "google", "okta", "by"))
_NICK_CUE = rf"{_CALLED}|{_NAMED}|{_REAL_NAME}|for short\b|{_SHORT_IS_FULL}|the same person|{_LOGIN_IS}"
_LATIN_NICK = r"[A-Z][A-Za-z'-]*(?:[ \t]+[A-Z][A-Za-z'-]*){0,2}"
_NICK_OR = r"[ \t]*(?:,?[ \t]*or[ \t]+|或者|或是|或|、|/)[ \t]*"
_QUOTES = "\"'“”‘’「」『』"
_GAP = r"[ \t]*[,，(（]?[ \t]*(?:(?:is|was)[ \t]+)?"  # between a name and what follows it: "Alice Chen, aka"
_SENTENCE_END = ".!?。！？\n"


def _latin_people(body: str) -> Iterable[tuple[str, int, int]]:
    """(name, start, end) of each capitalised name in `body` that could be a person's (Alice
    Chen, Bob): none of its words a sentence word or a software word (the Billing API)."""
    for m in re.finditer(rf"(?<![\w.@/-]){_LATIN_PERSON}", body):
        words = m.group(0).split()
        while words and words[0].casefold() in _NOT_NAMES:
            words = words[1:]
        if words and not any(w.casefold() in SOFTWARE_PARTS or w.casefold() in _NOT_NAMES for w in words):
            name = " ".join(words)
            yield name, m.end() - len(name), m.end()


def _nicknames(body: str, people: list[tuple[str, int, int]]) -> Iterable[tuple[str, list[str]]]:
    """(person, nicknames) for each nickname `body` states for a person it names (`people`:
    (name, start, end), in order)."""
    for m in re.finditer(_CALLED, body):
        if re.search(r"(?i)\bme\s*$|我\w?$", m.group(0)):  # "everyone calls me Nana": who says it
            subject = _introduced(body, m.start(), people) or speaker(body)
        else:
            subject = _subject(body, m.start(), people, previous=True)
        if subject is not None:
            yield subject, _nicks_at(body, m.end(), subject), True
    for m in re.finditer(_NAMED, body):
        person = _named_before(body, m.start(), people, single=bool(re.match(r"(?i)goes|nick", m.group(0))))
        if person is None and m.group(0)[:2] in ("外号", "绰号", "昵称", "人称"):
            person = _subject(body, m.start(), people, previous=False)  # 何静负责测试，人称静姐
        if person:
            personal = bool(CJK_RUN.fullmatch(person) or re.match(r"(?i)goes|nick|[^\x00-\x7f]", m.group(0)))
            yield person, _nicks_at(body, m.end(), person), personal
    for m in re.finditer(_REAL_NAME, body):
        subject = _subject(body, m.start(), people, previous=True)
        other = re.match(
            r"[ \t]*([A-Z][A-Za-z'-]*(?:[ \t]+[A-Z][A-Za-z'-]*)?|[\u4e00-\u9fff]{2,4}?)(?=[\s，,。.;；、）)]|$)",
            body[m.end() :],
        )
        if subject and other and (other.group(1).isascii() or zhnames.plausible(other.group(1))):
            yield subject, [other.group(1)], True
    for m in re.finditer(_SHORT_IS_FULL, body):
        short, full = m.groups()
        if short[:3].casefold() == full[:3].casefold() and short.casefold() not in _NOT_NAMES:
            others = re.search(_SAME_PERSON, body[m.end() :])
            more = [n for n in (others.groups() if others else ()) if n and n.casefold() != short.casefold()]
            yield full, [short, *more], True
    for m in re.finditer(_LOGIN_IS, body):  # "周建国's LDAP / GitHub login is jzhou", "老周的账号是 jzhou"
        who, login = m.group("who"), m.group("login")
        if login.casefold() in _NOT_LOGINS or who.casefold() in SOFTWARE_PARTS or who.casefold() in _NOT_NAMES:
            continue  # "Grafana's login is via SSO"
        if (
            who.isascii()
            and " " not in who
            and not re.search(r"(?i)ldap|github|gitlab|slack|handle|username", m.group(0))
        ):
            continue  # "Grafana's login is admin": one word and a login are a system's as often as a person's
        if who.isascii() or zhnames.plausible(who) or (len(who) == 2 and who[0] in "老小大阿"):
            yield who, [login], True
    for m in re.finditer(_FOR_SHORT, body):
        person = _named_before(body, m.start(), people, single=False)
        nick = _han_nick(m.group(1), person) if person and CJK_RUN.fullmatch(m.group(1)) else m.group(1)
        if person and nick:
            yield person, [nick], bool(CJK_RUN.fullmatch(person))


def _subject(body: str, pos: int, people: list[tuple[str, int, int]], previous: bool) -> str | None:
    """The person named last before `pos` in its sentence ("Quick context: … and Dave Kowalski
    (everyone calls him DK)" is about Dave); with `previous`, failing that the first of the
    sentence before ("Alice Chen owns billing. Everyone calls her AC."), or of the one before that
    when it opens with a pronoun. Never the turn's speaker ("Tom: … call him Wei")."""
    start = max(body.rfind(c, 0, pos) for c in _SENTENCE_END) + 1
    label = _speaker_label(body)
    said_by = label.start(1) if label else -1  # "Tom: … call him Wei": Tom speaks, is not "him"
    # (not a name in brackets: "林晓梅（Mei Lin）…，我们都叫她晓梅" is about 林晓梅, whose other name it is)
    subject = next(
        (
            p[0]
            for p in reversed(people)
            if start <= p[1] < pos and body[p[1] - 1 : p[1]] not in ("(", "（") and p[1] != said_by
        ),
        None,
    )
    end = start
    while subject is None and previous and end > 0:
        # The sentence before, or, when it opens with a pronoun ("He's taking over ledger-api from Raj."),
        # the one before that: its first person is who the pronoun and "him" both mean.
        before = max(body.rfind(c, 0, end - 1) for c in _SENTENCE_END) + 1
        if not _PRONOUN_FIRST.match(body[before:end]):
            subject = next((p[0] for p in people if before <= p[1] < end and p[1] != said_by), None)
            break
        end = before
    return subject


def _introduced(body: str, pos: int, people: list[tuple[str, int, int]]) -> str | None:
    """The person the writer says they are, before `pos` in its sentence ("I'm Li Na (李娜), …", 我是李娜)."""
    start = max(body.rfind(c, 0, pos) for c in _SENTENCE_END) + 1
    for name, at, _ in reversed(people):
        if start <= at < pos and re.search(
            r"(?i)(?:\bI'm|\bI am|\bthis is|\bmy name is|我是|我叫)\s*$", body[start:at]
        ):
            return name
    return None


_PRONOUN_FIRST = re.compile(r"\s*(?:(?:he|she|they|him|her)(?:'s|'ll|'d)?\b|[他她])", re.I)


def _named_before(body: str, pos: int, people: list[tuple[str, int, int]], single: bool) -> str | None:
    """The person named right before `pos` (a Latin name of two words or more unless `single`),
    or a Chinese name ending there (王博，外号老王)."""
    for name, _, end in reversed(people):
        if end <= pos and re.fullmatch(_GAP, body[end:pos]):
            if CJK_RUN.fullmatch(name) or single or len(name.split()) >= 2:
                return name
    run = re.search(r"([\u4e00-\u9fff]{2,4})" + _GAP + "$", body[max(0, pos - 12) : pos])
    if run:
        for n in (3, 2, 4):
            if len(run.group(1)) >= n and zhnames.plausible(run.group(1)[-n:]):
                return run.group(1)[-n:]
    return None


def _nicks_at(body: str, pos: int, person: str) -> list[str]:
    """The nicknames written at `pos`: one, or several joined by "or" / 或者 / 、."""
    nicks: list[str] = []
    while True:
        while body[pos : pos + 1] in (" ", "\t") or (body[pos : pos + 1] and body[pos] in _QUOTES):
            pos += 1
        latin = re.match(_LATIN_NICK, body[pos:])
        han = CJK_RUN.match(body, pos)
        if latin:
            if norm_name(latin.group(0)) not in _NOT_NAMES:
                nicks.append(latin.group(0))
            pos += latin.end()
        elif han:
            pieces = re.split(r"或者|或是|或|、", han.group(0))
            nicks += [n for n in (_han_nick(p, person) for p in pieces) if n]
            pos = han.end()
            if not pieces[-1]:
                continue  # 爱丽或者 AC: the run ends with "or", the next name follows
            if len(pieces[-1]) > 4:
                break  # 老王负责支付: the sentence goes on
        else:
            break
        while body[pos : pos + 1] and body[pos] in _QUOTES:
            pos += 1
        sep = re.match(_NICK_OR, body[pos:])
        if not sep:
            break
        pos += sep.end()
    return [n for n in nicks if norm_name(n) != norm_name(person)]


def _han_nick(piece: str, person: str) -> str | None:
    """The Chinese nickname `piece` starts with, when it has a nickname's shape: 老王 / 小李 / 阿杰,
    磊哥 / 丽姐, 王总 / 张工, the person's own given name (爱丽 for 陈爱丽), or it doubled (娜娜 for 李娜).
    Anything else after 叫他 is what he was asked to do (叫他去开会), not a name."""
    if len(piece) >= 2 and piece[0] in "老小" and piece[1] in zhnames.SURNAMES:
        return piece[:2]
    if len(piece) >= 2 and piece[0] == "阿":
        return piece[:2]
    for n in (3, 2):
        if len(piece) >= n and piece[n - 1] in "哥姐" and piece[: n - 1] not in ("大",):
            return piece[:n]
    parts = zhnames.split(person) if CJK_RUN.fullmatch(person) else None
    if parts and len(parts[1]) == 2 and piece.startswith(parts[1]):
        return parts[1]
    if parts and len(piece) >= 2 and piece[0] == piece[1] and piece[0] in parts[1]:
        return piece[:2]  # 娜娜 for 李娜: the given name doubled
    titled = next((zhnames.titled(piece[:n]) for n in (4, 3, 2) if len(piece) >= n and zhnames.titled(piece[:n])), None)
    return titled


def _romanised_title(nick: str, names: list[str]) -> list[str]:
    """老王 for "Lao Wang" (小李 for "Xiao Li"): the Chinese a romanised title-and-surname is
    written as, with the surname of the person's Chinese name (王博) when there is one."""
    m = re.fullmatch(r"(Lao|Xiao)[ \t]+([A-Z][a-z]+)", nick)
    if not m or m.group(2).casefold() not in zhnames.ROMANISED:
        return []
    chars = zhnames.ROMANISED[m.group(2).casefold()]
    theirs = [c for c in chars if any(CJK_RUN.fullmatch(n) and n.startswith(c) for n in names)]
    if len(theirs) != 1 and len(chars) != 1:
        return []
    return [("老" if m.group(1) == "Lao" else "小") + (theirs or chars)[0]]


def _surname_first(latin: str, aliases: list[str]) -> bool:
    """Zhou Ming (周明): a Chinese name in pinyin, surname first, so "Zhou" is no given name."""
    first = latin.split()[0].casefold()
    return any(a[0] in zhnames.ROMANISED.get(first, ()) for a in aliases if CJK_RUN.fullmatch(a))


def _login_from(item: str, words: list[str]) -> bool:
    """Whether `item` is a login made of a full name's letters, as companies make them: ohaddad,
    omarh, omar.haddad, omar_haddad, haddado for Omar Haddad (a person, then, and their login)."""
    if len(words) != 2 or not re.fullmatch(r"[a-z][a-z0-9._-]{2,30}", item):
        return False
    if any(glossary.counterparts(w) or w.casefold() in SOFTWARE_PARTS for w in words):
        return False  # "Postgres Cluster (pcluster)": a thing's words, no person's name
    first, last = (w.casefold() for w in words)
    made = {first[0] + last, first + last[0], first + last, f"{first}.{last}", f"{first}_{last}", last + first[0]}
    return item in made


def _is_initials(item: str, words: list[str]) -> bool:
    """PJ for Priya Iyer, WZ for Wei Zhang: capitals that begin with the name's (DBA for Liu Yang does not)."""
    return item[0] == words[0][0]


def _given_name(latin: str) -> list[str]:
    """Alice for Alice Chen: what a teammate calls a person a memory introduces by an English and a
    Chinese name together ("Alice Chen（陈爱丽）"), unless it is a word a query uses anyway."""
    words = latin.split()
    if len(words) != 2 or not re.fullmatch(r"[A-Z][a-z]{2,}", words[0]):
        return []
    first = words[0].casefold()
    return [] if first in STOPWORDS or first in _NOT_NAMES else [words[0]]


# Words that are names too (Will, May, Mark): a text names the person only where it writes one capitalised.
WORDS_AS_NAMES = STOPWORDS | frozenset(
    "mark bill max rose grace june april august chase frank pat rich sunny summer hope joy faith art jack ray "
    "sky rain river stone dawn eve penny lily ivy amber ruby holly daisy rocky dusty buddy".split()
)


def names_alias(alias: str, content: str) -> bool:
    """Whether `content` names `alias` as a whole name (`alias_spans`); a name that is also a word
    ("Will") only where it is written capitalised."""
    a = " ".join(alias.split())
    if a.casefold() in WORDS_AS_NAMES and " " not in a:
        return re.search(r"(?<![\w-])" + re.escape(a[:1].upper() + a[1:]) + r"(?![\w-])", content) is not None
    return any(alias_spans(a, content.casefold()))


def alias_spans(alias: str, folded: str) -> Iterable[tuple[int, int]]:
    """Where `alias` (any case) occurs in `folded` (casefolded text) as a whole name.

    Latin names and handles (alice.chen@corp) must not touch a letter or digit on either side. A
    Chinese name is matched inside its run of characters, as the keyword index sees it: the index
    cuts a run into overlapping bigrams, so 陈爱丽 is found in 陈爱丽负责计费服务 exactly when its
    bigrams (陈爱, 爱丽) are consecutive bigrams of the run, that is when it is a substring.
    """
    a = " ".join(alias.split()).casefold()
    if not a:
        return ()
    if CJK_RUN.fullmatch(a):
        if len(a) < 2:
            return ()  # one character is part of too many words
        return ((m.start(), m.end()) for m in re.finditer(re.escape(a), folded))
    # nor be a part of a hyphenated name: "cn-beijing" names no Beijing, "billing-service" no billing
    return ((m.start(), m.end()) for m in re.finditer(r"(?<![\w-])" + re.escape(a) + r"(?!\w|-\w)", folded))


_EDGE = "\"'`()[]{}<>,;:!?.。，；：！？、“”‘’（）"


def name_keys(text: str, longest: int = 4) -> list[str]:
    """Every string in `text` an entity's normalised name or alias could be: runs of one to
    `longest` whitespace-separated tokens, casefolded, outer punctuation stripped ("A. Chen",
    "billing-service", "alice.chen@corp"), and the substrings of each run of Chinese characters
    (陈爱丽 in 陈爱丽负责计费服务; see `alias_spans`). Latin keys have three characters or more."""
    said = text.split()
    tokens = [t.casefold() for t in said]
    keys: set[str] = set()
    for i in range(len(tokens)):
        for n in range(1, longest + 1):
            if i + n > len(tokens):
                break
            words = tokens[i : i + n]
            words[0] = words[0].lstrip(_EDGE)
            words[-1] = words[-1].rstrip(_EDGE)  # (after: one word is both, "(hli)," -> "hli")
            key = " ".join(words)
            if n == 1 and key in WORDS_AS_NAMES and said[i].strip(_EDGE).islower():
                continue  # "the gateway will answer 503" names no Will
            keys.add(key)
            if n == 1 and key.endswith("'s"):
                keys.add(key[:-2])
    for run in CJK_RUN.findall(text):
        for i in range(len(run)):
            keys.update(run[i : i + n] for n in range(2, min(8, len(run) - i) + 1))
    return sorted(k for k in keys if len(k) >= 3 or (len(k) == 2 and CJK_RUN.fullmatch(k)))


def known_in(text: str, known: dict[str, list[str]]) -> Iterable[tuple[str, str, str]]:
    """Configured known entities (name -> aliases) that `text` names."""
    low = text.casefold()
    for name, aliases in known.items():
        if any(next(iter(alias_spans(alias, low)), None) for alias in (name, *aliases)):
            yield (name, "known", "mention")


def canonical(name: str, known: dict[str, list[str]]) -> tuple[str, list[str]]:
    """The configured name `name` is an alias of (with its aliases), or `name` itself."""
    n = " ".join(name.split()).casefold()
    for canon, aliases in known.items():
        if n in {" ".join(a.split()).casefold() for a in (canon, *aliases)}:
            return canon, list(aliases)
    return name, []
