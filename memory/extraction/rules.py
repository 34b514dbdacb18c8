"""The sentence-level rules of heuristic extraction, in English and Chinese.

Kept apart from memory.extraction so the patterns can be read (and argued with) in one place.
Stdlib only. A user sentence is a candidate when it states a rule, preference, correction,
decision with a reason, project fact or a request to remember, and is not a question or a task
request. Assistant sentences count only when they explain a failure or state a hard fact.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from memory.lang import entities, privacy, values, zhnames
from memory.lang.text import REDACTED, is_stopword

# -- sentences ---------------------------------------------------------------------------------

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
# A Python traceback pasted without a fence: its header, indented frames and the exception line.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\):[ \t]*\n(?:[ \t]+[^\n]*\n)*[^\n]*")
# An ellipsis ("SELECT ... FOR UPDATE", "tried … then") continues its sentence: never split there.
# (and a name with a dot, written between Chinese words: "所有 topic 统一加 jz. 前缀")
# A Quartz cron, whose "?" is a field, not a question: "0 30 6 * * ?", "0 15 10 ? * MON-FRI".
_QUARTZ = r"(?<!\S)(?:(?:[\d*/,?LW#-]+|[A-Z]{3}(?:-[A-Z]{3})?)\s+){5,6}(?:[\d*/,?LW#-]+|[A-Z]{3}(?:-[A-Z]{3})?)(?!\S)"
_ENDS_IN_QUARTZ = re.compile(_QUARTZ + r"$")
_PROTECT = re.compile(
    r"`[^`\n]+`|https?://\S+|" + _QUARTZ + r"|\b(?:e\.g|i\.e|etc|vs|cf|approx)\.|\.{2,}|…|"
    r"\b(?-i:St|Dr|Mr|Mrs|Ms|Mt|Ft|Ave|Jr|Sr|No)\.(?= [A-Z0-9])|"  # "St. Francis", "Dr. Patel", "No. 5"
    r"(?<=[\u4e00-\u9fff] )[a-z][\w-]{0,11}\.(?= [\u4e00-\u9fff])",
    re.I,
)
# ";" and "；" join clauses that belong together (a rule and its reason): never split there. A mark
# inside brackets or quotes ("用这个 key（别提交！）") ends no sentence: the closing mark belongs to it.
_SPLIT = re.compile(
    r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])(?![）)」』”’】\]])\s*|"
    # what someone asked for, said after a statement: "Dan owns bff-gateway now, and he asked me to …"
    r"(?<=,)\s+(?=and (?:he|she|they) (?:asked|wants|wanted|said|told|needs)\b)|"
    # a second piece of news after ";": "PJ owns OSRM now; and the redis cache moved to …", "…；另外审批流归小李管了"
    r"(?<=[;；])\s*(?=(?:and|also)\s+\S|另外|还有|对了)|"
    # a dash that turns to something else: "alarm-notifier 这次不用动——提醒一句，每月 1 号和 15 号封版"
    r"\s*—{1,2}\s*(?=(?:(?:顺便|再)?(?:提醒|提|说|补充)一句|顺便说下|另外|对了)[，,：:]?)|"
    # items numbered inside one line: "几件事先同步下：1）release 现在归小林管了；2）yaml-rust2 换成 saphyr 了"
    r"(?<=[^\d][；;：:])\s*(?=[(（]?\d{1,2}[)）]\s*\S)"  # (not a clock's "(09:29)")
)
_ENUMERATOR = re.compile(r"^[(（]?\d{1,2}[)）]\s*")
# What is asked after a statement: "billing-service listens on 8081 now, can you update the config?" (a
# statement naming something specific, then a request: two sentences).
_ASKED_AFTER = re.compile(
    r"^(.+?,)\s+((?:can|could|would) (?:you|u) (?!(?:believe|imagine)\b)\w.*)$|"
    # "commit message 按 conventional commits 来，…，比如 `fix(x): ...`，你先 commit"
    r"^(.+[，,])\s*(你(?:先|再|顺手|顺便)?\s*(?:commit|push|merge|deploy|提|改|跑|看|查|把|帮|试)[^，,。]{0,30})$",
    re.I,
)
# A request, then how to do it: "code-service 生成码那块你看下，本地起服务用 `mvn …`，端口 8101。"
_ASKED_BEFORE = re.compile(
    r"^([^，,。]{0,40}?(?:你|帮我|麻烦)\s*(?:先)?(?:看下|看一下|看看|查下|查一下|查查|排查一下|瞅瞅|处理一下)(?:吧|哈)?)[，,]\s*(.+)$"
)
# A commit or PR title to type ("标题 fix(code): …", 'title "feat: …"'), not a statement of the project.
# (not a convention that shows the format: "commit 规范改为 conventional commits：`feat(order): 描述`")
_COMMIT_TITLE = re.compile(
    r"(?:[，,]\s*|\b)(?:标题|title|(?:commit|PR|MR) message)\s*(?:是|is)?\s*[:：]?\s*[\"“'`]?"
    r"(?:feat|fix|chore|refactor|docs|test|perf|build|ci|style|revert)(?:\([\w./-]*\))?!?:\s",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*•>]|\d+[.)])\s+")


def without_code(text: str) -> str:
    """The text with its fenced code blocks and pasted tracebacks left out (what `sentences` reads)."""
    return _TRACEBACK.sub(" ", _FENCE.sub(" ", text))


# A line that goes on with the one before it: indented under a list item or a paragraph (how
# markdown wraps "3. … with 4 replicas it takes\n   about 3 minutes."), not itself an item or a table row.
_GOES_ON = re.compile(r"\n[ \t]{2,}(?![-*•>|#]|\d+[.)]\s)(?=\S)")


def unwrapped(text: str) -> str:
    """The text with its wrapped lines joined to the line they continue."""
    return _GOES_ON.sub(" ", text)


_EMPHASIS = re.compile(r"\*\*([^*\n]{1,80}?)\*\*")


def sentences(text: str) -> list[str]:
    """Sentences of a turn: code blocks dropped, wrapped lines joined, list items and lines kept
    apart, backtick spans, URLs and abbreviations never split."""
    text = _EMPHASIS.sub(r"\1", unwrapped(without_code(text)))  # "**Root cause**: …" reads as "Root cause: …"
    out: list[str] = []
    for line in text.splitlines():
        line = _BULLET.sub("", line).strip()
        if not line:
            continue
        saved: list[str] = []

        def hold(m: re.Match, saved: list[str] = saved) -> str:
            saved.append(m.group(0))
            return f"\ue000{len(saved) - 1}\ue001"

        held = _PROTECT.sub(hold, line)
        for part in _SPLIT.split(held):
            part = re.sub(r"\ue000(\d+)\ue001", lambda m, saved=saved: saved[int(m.group(1))], part).strip()
            part = _ENUMERATOR.sub("", part)
            titled = _COMMIT_TITLE.search(part)
            if titled:  # "提 MR 吧，标题 fix(code): workerId 改用 …": a title to type, not a statement
                part = part[: titled.start()].rstrip(" ，,:：")
                if not part:
                    continue
            asked = _ASKED_AFTER.match(part)
            first = _ASKED_BEFORE.match(part)
            if asked and SPECIFIC.search(asked.group(1) or asked.group(3)):
                # "X listens on 8081 now, can you update the config?"
                out += [asked.group(1) or asked.group(3).rstrip("，,") + "。", asked.group(2) or asked.group(4)]
            elif first and SPECIFIC.search(first.group(2)):
                out += [first.group(1) + "。", first.group(2)]
            elif part:
                out.append(part)
    return out


_FILLER_EN = re.compile(
    r"^(?:ok(?:ay)?|so|also|and|but|btw|by the way|oh|ah|right|yes|yeah|yep|sure|cool|nice|great|thanks|"
    r"thank you|fyi|well|hmm|alright|anyway|hold on|wait(?=\s*[,.!—-])|one more (?:rule|thing)|another thing|heads[- ]up|"
    r"next|ok next|actually|fine|(?:first|second|third|fourth)(?=:))(?=[\s,.:;!—-]|$)[\s,.:;!—-]*",
    re.I,
)
_FILLER_ZH = re.compile(
    r"^(?:好的|好吧|嗯|对了|(?:忘了|忘记|差点忘了)(?:说|讲)?(?:了|一下)?|(?:是的|没错)(?=[\s,，。.!！])|另外|还有(?:一?(?:个|件|条|点)\s*(?:事儿?|事情|rule|规矩|规则|问题|变化)?)?|不错|然后|顺便说一下|顺便说下|"
    r"顺便提一下|(?:顺便|再)?(?:提醒|提|说|补充)一句|说一下|说下|提一下|顺便|哦|其实|那么|(?:(?i:update|sync)|同步)\s*一下(?:\s*(?i:context))?|跟你同步(?:一下)?(?:几个|一些)?(?:变化|情况)?)"
    r"[\s,，。.:：;；!！、]*"
)


# Small talk before the matter at hand: "今天好热，空调又坏了…… 说正事：…", "言归正传，…".
# And an announced list's lead-in: "couple of things so I don't forget: …", "几件事：…".
_TO_BUSINESS = re.compile(
    r"^[^`\n]{0,80}?(?:说正事|言归正传|回到正题|聊正事)(?:吧|哈)?\s*[：:，,。.!！—-]+\s*|"
    r"^(?i:(?:some of )?what you (?:think you )?(?:know|remember|have)(?: about \w+)? (?:is|are) (?:stale|out of date|"
    r"outdated|wrong))\s*[:：—-]+\s*|"  # ("some of what you think you know is stale: the tm_reindex queue is gone")
    r"^(?i:(?:a\s+)?(?:couple|few|two|three)\s+(?:of\s+)?(?:more\s+)?things(?:\s+(?:so|before)\s+I\s+(?:don'?t\s+)?forget)?)"
    r"\s*[:：—-]+\s*"
)


# A laugh closing a rule says nothing of it: "barcodes: keep them as strings ALWAYS, … lost the leading zero on
# like 2000 items lol" (closing anything else, it is chat: "周五团建去千岛湖, you should come haha").
_LAUGH_TAIL = re.compile(r"[\s,，]+(?:lol|lmao|haha+|hehe|哈哈+|😂|🤣|😅)[\s.!。！]*$", re.I)


def strip_fillers(s: str) -> str:
    s = _TO_BUSINESS.sub("", s, count=1)
    if RULE.search(s):
        s = _LAUGH_TAIL.sub("", s)
    prev = None
    while prev != s:
        prev = s
        s = _FILLER_EN.sub("", s, count=1)
        s = _FILLER_ZH.sub("", s, count=1)
        s = _EMOJI_HEAD.sub("", s, count=1)  # "nice 🎉 对了 Tiger 下周…"
    return s.strip()


# Emoji and pictographs before the words (🎉, 👍, ✅; not a bullet or a quote mark).
_EMOJI_HEAD = re.compile(
    r"^[\s\u2600-\u27bf\U0001f300-\U0001faff\ufe0f\u200d]*[\u2600-\u27bf\U0001f300-\U0001faff]+[\s\ufe0f]*"
)


_TAIL = re.compile(
    r"(?:[,，]?\s*(?:fyi|in case you need it|just so you know|供参考|仅供参考))+\s*([.。!！]?)\s*$", re.I
)


def tidy(s: str) -> str:
    """A clean standalone sentence: fillers and chat tails dropped, capitalised, punctuated."""
    s = " ".join(strip_fillers(s).split())
    s = _TAIL.sub(r"\1", s).strip(" ,，;；-—")
    first = re.match(r"[\w'-]+", s)
    if first and re.match(r"[/.]\w", s[first.end() :]):
        first = None  # "ci/Jenkinsfile", "config.yaml": a path is kept as written
    # nor an English word opening a Chinese sentence: "moment 换成 dayjs 了" names a library
    if first and s[0].isascii() and s[0].islower() and _plain_word(first.group(0)) and not entities_cjk_any(s):
        s = s[0].upper() + s[1:]
    # A later sentence's first word is capitalised only when it is a plain word: "ledger-api's",
    # `pgvector` and "main" are names, kept as written.
    s = re.sub(
        r"([.!?]\s+)([a-z][\w'-]*)",
        lambda m: m.group(1) + (m.group(2)[0].upper() + m.group(2)[1:] if _plain_word(m.group(2)) else m.group(2)),
        s,
    )
    if s and (s[-1].isalnum() or s[-1] in "`)'\""):
        s += "。" if any(entities_cjk(ch) for ch in s) else "."
    return s


def _plain_word(w: str) -> bool:
    """An ordinary word that may be capitalised (not `pgvector`, `tsconfig`, `main`, `src_dir`)."""
    low = w.lower()
    return (
        w.isalpha()
        and low not in entities.TECH
        and low not in entities.OTHER_TECH
        and low not in ("main", "master", "develop")
    )


def entities_cjk(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff"


def clip(s: str, n: int) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _long_enough(s: str) -> bool:
    cjk = sum(1 for ch in s if entities_cjk(ch))
    words = len(re.findall(r"[A-Za-z0-9_`/.-]+", s))
    # (two Chinese characters are enough after a service's name and beside a value: "notify-service 跑在 8081";
    # not "迁到 HTTP v1")
    named = cjk >= 2 and words >= 2 and re.match(r"[A-Za-z][\w.]*[-_.][\w.-]+", s.strip())
    # (nor a name given in code after a word: "topic 就叫 settle.batch.created", "bucket 叫 settle-recon-files")
    given = cjk >= 1 and words >= 2 and re.search(r"(?:叫|名为|命名为)\s*`?[A-Za-z]\w{0,60}[-_.][\w.-]{0,80}\w", s)
    return cjk >= 5 or words >= 4 or (cjk >= 3 and words >= 1) or bool(named) or bool(given)


# -- what a sentence is ------------------------------------------------------------------------

# Asking for an opinion is a question however it ends: "…，你怎么看。", "…, what do you think."
_QUESTION_ZH = re.compile(
    r"(?:是谁|谁(?:在)?(?:负责|管)|是多少|几点|什么时候|吗|呢|么|(?<!基本)(?<!几乎)(?<!根本)(?<!从来)(?<!完全)(?<!都)(?<!也)(?<!并)没有|来着|怎样|怎么样|如何|为什么|为啥|怎么办|怎么回事|咋办|咋回事)[\s。.!！]*$|(?:是啥|是什么)来着|(?:你|您)(?:怎么看|觉得(?:怎么样|如何|呢)?)[\s。.!！]*$|"
    r"\bwhat do you (?:think|reckon)\b[\s.!]*$|\bthoughts\b[\s.!]*$|"
    # a guess put up for the other to confirm: "那 TTL 应该不是 the issue 吧", "是不是缓存没清吧"
    r"(?:^|[，,])\s*(?:那|所以)?[^，。,；;]{0,30}?(?:应该|大概|估计|是不是|不会)[^，。,；;]{0,30}?吧[\s。.]*$|"
    r"(?<!不管)(?<!无论)(?<!不论)是[^，。,；;]{1,24}还是[^，。,；;都也]{1,24}?(?:的|呢)?[\s。.]*$|"
    # asking for something, the last clause: "…，能不能缓一缓", "有没有别的办法", "要不要换个方案"
    r"(?:^|[，,；;])\s*(?:那|另外)?(?:能不能|可不可以|能否|有没有|要不要|行不行)[^，。,；;]{0,16}[\s。.!！]*$|"
    # a why or a whether said mid-sentence, the full stop typed for the question mark:
    # "那切片为啥是 30 分钟不是 15 分钟。", "…，是不是就不用扫表了。"
    r"^[^，,。；;：:]{0,12}?(?<!是)(?:为啥|为什么)(?![^。]*(?:因为|[：:]|[，,]\s*(?:是|就是|原因是)))|(?<!不管)(?<!无论)(?<!不论)是不是(?!都)|"
    # an English question typed without its mark: "q while that runs, whats the difference between X and Y again"
    r"^\W*(?:q\b[:.]?\s*)?(?:[^,.;:]{0,40},\s*)?(?:what'?s|whats|how come|remind me (?:what|how|why))\b[^.;:]*?"
    r"(?:\bagain|\bdifference between\b[^.;:]*)[\s.!]*$",
    re.I,
)


# The user asks what the assistant would do: "topic 怎么划分你怎么看？", "你有什么建议", "what would you do here?"
ASKS_OPINION = re.compile(
    r"你(?:怎么看|觉得呢|觉得怎么样|有什么(?:建议|思路|想法)|建议(?:怎么|用什么))|\bwhat (?:do you think|would you (?:do|suggest|use|"
    r"recommend))\b|\bany (?:suggestions|recommendations|ideas)\b|\bwhat do you (?:suggest|recommend)\b|\bthoughts\?|"
    # an either-or put to the assistant: "分桶用按天还是按周？", "should the cache key be per user or per tenant?"
    r"用[^，,。？?]{1,20}还是[^，,。？?]{1,20}[？?]|\bshould (?:we|it|the [\w-]+(?: [\w-]+)?) (?:use|be) [^?]{1,40} or [^?]{1,40}\?",
    re.I,
)


def is_question(s: str) -> bool:
    s = s.strip()
    return (s.endswith(("?", "？")) and not _ENDS_IN_QUARTZ.search(s)) or bool(_QUESTION_ZH.search(s))


_REQUEST = re.compile(
    r"^(?:(?:and |ok |okay )?then,? )?(?:please|pls|plz|can (?:you|u)|could (?:you|u)|would (?:you|u)|will (?:you|u)|can we|could we|let me know|help me|i need|"
    r"i want you|i'd like you|go ahead|try|run|add|fix|make|look|check|find|show|write|update|create|"
    r"implement|refactor|rename|move|delete|remove|port|ship|push|commit|format|bump|start|open|tell me|"
    r"explain|list|give me|set up|install|now)\b(?!\s*[\u4e00-\u9fff])(?![-/.]\w)|^(?:(?:最后|然后|另外|再)\s*)?(?:帮我|请帮|请你|帮忙|你能|能不能|可以帮|看看|看一下|试试|先帮|给我|把|考虑)|"
    r"^(?:先|再)看(?:下|一下)|^(?:new |next |today'?s )?task\s*[:：]|^(?:新)?任务\s*[:：]|"  # ("先看下 gateway 现在的 filter chain 怎么写的")
    r"^你(?:先|再|也|顺手|顺便)?(?:把|帮我|给我|去|看看|看下|看一下|查查|查下|查一下)|^先?提(?:个|一个)?\s*(?:PR|MR)\b|"  # "你把这个写进 MR 描述里": a task put to the assistant
    r"^(?:todo|to-do|fixme)\b|^[^。.!?]{0,12}提醒我|^remind me\b|"  # "TODO: 下周一提醒我跟丽姐做…": a reminder asked for
    r"^(?:先|再)?跑(?:下|一下|个)(?!来|去)|^先\s*[\w\u4e00-\u9fff]{1,12}?\s*掉[，,]",  # "跑下 test 吧", "先 skip 掉，开个 issue"
    re.I,
)
# A request after where it applies: "在 Makefile 里加一个 `lint` 目标", "给 `orders` 表加个索引", "In the
# Makefile, add a `lint` target": the task of the moment, not a fact about the project.
_REQUEST_AFTER_PLACE = re.compile(
    r"^(?:给|在|往|把)?[^，。,.!?？]{1,30}?(?:里|上|中|下|页|表)?\s*(?:顺便|再|也)?(?:加个|加一个|补个|补一个|弄个|写个|写一个|建个|建一个|"
    r"改下|改一下|删一下)|^(?:in|on|for|to|inside|under) [^,]{2,40},\s*(?:please\s+)?(?:add|fix|make|write|update|"
    r"create|remove|delete|rename|move|change|bump|drop|put)\b",
    re.I,
)


# An English sentence whose first word reads as a verb but is the noun of its subject: "Commit messages are
# written in English", "Test files live under tests/", "Deploy keys are rotated monthly" (a request has its
# object right after the verb: "Commit the change", "Test it with -x").
_NOUN_FIRST = re.compile(
    r"^[A-Za-z]+\s+(?!(?:the|a|an|it|this|that|these|those|all|my|our|your|their|some|every|each|me|us|them|him|her|"
    r"any|to|up|out|down|on|in|off|over|back|with|for|and|again|now|first|please)\b)[\w-]+\s+(?:[\w-]+\s+)?(?:is|are|was|"
    r"were|go|goes|run|runs|live|lives|must|should|need|needs|use|uses|have|has|get|gets|land|lands|take|takes|"
    r"stay|stays|start|starts|begin|begins|end|ends|follow|follows|contain|contains|include|includes)\b|"
    # in Chinese, two English words then the Chinese that says something of them: "commit message 用英文写"
    # (not "check config 里的端口", a request)
    r"^[A-Za-z]+\s+(?!(?:the|a|an|it|this|that|my|our|your|all)\b)[A-Za-z][\w-]*\s*"
    r"(?=用|是|要|统一|必须|都|一律|放在|只|不要|不能|禁止|别|按)",
    re.I,
)


def is_request(s: str) -> bool:
    """A task request: an imperative at the start, or after where it applies, or asked after what it
    is about ("the runbook is wrong abt the meta db, can u fix those lines": `sentences` keeps a
    statement naming something specific apart from what is asked after it)."""
    if _REQUEST.match(s) and not _NOUN_FIRST.match(s):
        return True
    asked = _ASKED_AFTER.match(s)
    if asked and asked.group(1):  # (the Chinese "…，你先 commit" is split off by `sentences` where it follows a fact)
        return True
    m = _REQUEST_AFTER_PLACE.search(s)
    # "再加个告警：pending 超过 1 万就告警，发飞书 oncall 群" spells out what it adds, "…时间也改一下，从凌晨 2 点
    # 改到凌晨 3 点半" what it changes to: that stays
    return bool(m) and not re.search(r"[:：]|从.{1,30}?(?:改到|改成|改为|调到|挪到)", s[m.end() :])


WHY_QUESTION = re.compile(
    r"\bcan you (?:look|check|see)\b|\bfigure out\b|\bfind out\b|\bany idea\b|\bwhat happened\b|看下怎么|看看怎么|"
    r"查查|\bwhy\b|\bwhat (?:was|is) (?:that|this|it)\b|\bwhat caused\b|\bhow come\b|\bdig in"
    r"|\binvestigate\b|\blook into\b|\bwhat'?s going on\b|为什么|怎么回事|什么原因|为啥|排查|查一下|"
    r"(?:帮我|帮忙|你)(?:看下|看一下|看看|查下|查查)",
    re.I,
)
# A why-question about the project (its code, its failures), not about general knowledge.
PROJECT_QUESTION = re.compile(
    r"`|/|\b(?:our|this|here|we|the (?:test|build|app|service|deploy)\w*)\b|\b(?:fail\w*|"
    r"broken|error\w*|crash\w*|reject\w*|flaky)\b|我们|这个|本地|报错|失败|跑不过",
    re.I,
)
# A how- or where-question about how this project does something ("how do we cut a release?", "本地怎么起
# worker？", "线上日志在哪看？", "起服务的命令是啥？"): the answer is how it is done here, a fact. Not "how does GC work in Go",
# nor "怎么回事" (a why-question).
HOW_QUESTION = re.compile(
    r"\bhow (?:do|does|did|can|should|would) (?:i|we|you|one|the|our|this)\b|\bwhere (?:do|does|is|are|can|should) "
    r"(?:i|we|the|our|this)\b|\bwhat(?:'s| is) the (?:command|way|url|path)\b|\bhow (?:do|does) [\w-]+(?: [\w-]+)? get\b|"
    r"怎么(?!回事|了|办|样|会|说)|如何|在哪|(?:命令|地址|路径|端口|入口|账号|目录)(?:是|叫)?(?:啥|什么|多少|哪个)",
    re.I,
)
# A question that asks to confirm something specific about the project ("本地起引擎是 `make run` 对吧，gRPC 端口
# 9310？", "staging is on port 6543, right?"): the answer that confirms or corrects it is a fact.
_CONFIRMS = re.compile(
    r"(?:对吧|是吧|对不对|没错吧)(?=[\s，,？?。.]|$)|是不是[\s？?。.]*$|[,，]\s*(?:right|correct|isn'?t it|aren'?t they)[\s?.]*$",
    re.I,
)


def confirms(s: str) -> bool:
    return bool(_CONFIRMS.search(s) and SPECIFIC.search(s))


# The "yes" an answer starts with: the rest is the fact ("对，`make run` 读 configs/local.yaml").
YES_FIRST = re.compile(r"^\W*(?:对的?|是的|没错|yes|yep|right|correct)\s*[，,。.!！:：—-]\s*", re.I)
# What makes an answer about the project: a name in code, a path, a URL, a host or a command.
HOW_ANSWER = re.compile(r"`[^`]+`|\b\w+[/.:_]\w[\w/]")

_REMEMBER = re.compile(
    # (not a recollection: "I remember it changed", "我记得好像改过")
    r"\b(?<!\bI )(?<!\bwe )(?:remember|memori[sz]e|keep in mind|don'?t forget|do not forget|never forget|note that|"
    # (nor a reminder asked for: "周五记得提醒我停双写", "remember to remind me on Friday")
    r"for future reference|for the record)\b(?! to remind)|记住|记一下|记下来|(?<!我)(?<!我们)(?<!还)记得(?!提醒)|"
    r"别忘了(?!提醒)|不要忘了(?!提醒)",
    re.I,
)


# Asked to write something down ("put a note in the runbook that …", "往 runbook 里补一句：…"): what
# follows is the fact, the request around it is not.
_WRITE_DOWN = re.compile(
    r"^(?:(?:also|and|then|please|pls)\s+)*(?:put|add|leave|write)\s+(?:a\s+)?(?:note|line|sentence)\s+"
    r"(?:in|into|to|on)\s+[^,.;]{1,40}?\s+(?:that|saying)\s+|"
    r"^(?:顺便|再|也|另外)?(?:在|往)[^，。：:]{1,20}?(?:里|中|上)(?:写上|写一句|注明|加一句|补一句|记一下)[：:，,\s]*",
    re.I,
)


def asks_to_remember(text: str) -> bool:
    return bool(_REMEMBER.search(text))


_REMEMBER_HEAD = re.compile(
    r"^(?:please\s+)?(?:remember|memori[sz]e|keep in mind|don'?t forget|note|for future "
    r"reference|for the record)(?:\s+that)?[\s:,-]*|^(?:请)?(?:记住|记一下|记下来|记得|别忘了)"
    r"[\s：:，,]*",
    re.I,
)
_REMEMBER_TAIL = re.compile(r"[,，]\s*(?:别忘了|记住了?|don'?t forget|remember that)[\s。.!！]*$", re.I)
_FYI = re.compile(
    r"\bfyi\b|\bin case you need it\b|\bjust so you know\b|\bquick context\b|\bsome context\b|供参考|"
    r"\bfor the (?:PR|MR|commit) (?:description|message)\b|"
    r"(?:sync|同步)\s*一下\s*(?:context|背景)|先(?:跟你)?(?:说|交代)一下背景",
    re.I,
)
_HEADS_UP = re.compile(
    r"^\W*(?:heads[- ]up|fwiw|note|for context|context)\b\s*[:,-]|^\W*(?:注意|提醒一下|说明一下)[:：，,]", re.I
)
_CORRECTION = re.compile(
    r"^(?:no(?=\s*[,.!:;—-])|nope|nah|wrong|not quite|that's (?:wrong|not right|incorrect)|incorrect|actually)"
    r"\b[\s,.!:;—-]*|^(?:不对|不是的|错了|不行|不不)[\s，,。！!：:]*",
    re.I,
)
_CORRECTION_ZH = re.compile(
    r"^不是\s*\S.{0,20}?[，,]\s*(?:我们|应该|是|要|用|而是)|"
    r"(?:也|已经|早就)?不(?:再)?是\s*\S{1,12}?了\s*[，,]\s*(?:换成|改成|改由|变成|现在是|现在由|由)"
)
_HINT = re.compile(r"\b(?:use|using|should|instead|is|are|run|we)\b|应该|用|是|要|改", re.I)
_NOT_RULE = re.compile(
    r"\bI (?:(?:honestly|really|still|just) )?(?:don'?t|do not) (?:know|think|see|understand|care|get|remember)\b", re.I
)
# "统一管的" says who runs something ("ingress 是平台组统一管的"), not how everyone must do it.
RULE = re.compile(
    r"\b(?:always|never(?! again[\s.!]*$)|don'?t|do not|must(?:n'?t| not)?|make sure|be sure to|stop \w+ing|avoid|no more|"
    r"going forward|from now on|stick (?:to|with)|mandatory|that'?s (?:the|our) rule\b|the rule for (?:every|all)|make (?:that|this|it) (?:the|a) rule\b|required|only (?:ever )?(?:go|goes|happen|happens|run|runs|use|uses|deploy|deploys|"
    r"through|from|via)|should(?:n'?t| not)? (?:ever )?(?:use|run|be|touch|commit|push|add|call)|has to|have to|"
    r"(?:every|all|each)\b.{0,40}\b(?:needs?|requires?)|(?:needs?|requires?) at (?:least|most))\b|"
    r"(?:\b(?:use|using|through|via|with|is|are|called)\s+`?[\w./@-]+`?(?:\s+\w+){0,3},\s+not\s+\S)|"
    r"^no (?:\w+ )?(?:releases?|deploys?|deployments?|merges?|pushes?|migrations?) (?:on|after|before|during)\b|"
    r"(?<![我你他她])不(?:发版|上线|部署|发布)(?:[。！!]|$)|"
    r"以后都|以后(?!会|再说|再看|再议|再定|再讨论|再弄|再搞|[^，。,；;]{0,12}?(?:收费|涨价|下线|停服|停用|废弃|不再提供|不再支持))|今后|总是|始终|永远|一律|统一(?!管|负责|维护|运维)|必须|务必|一定要|禁止|不要|不许|不准|只能|只跑|只在|只用|绝对不|千万别|不需要|无需|"
    r"尽量|最好|原则上|请勿|切勿|不允许|只允许|仅允许|只准|不得|至少(?:需要|要|得)|(?:里|中)(?:还|也|都)?(?:要|得|需要)(?:带上?|加上?|写上?|附上?|标上?)|(?:每个|每次|每条|所有|全部|任何)[^，。,；;]{1,20}都(?:要|需要|得)|"
    r"只有[^，。,；;]{1,20}才(?:能|可以)|(?<=[\u4e00-\u9fff])前(?:都)?(?:需要|必须|得)|(?<![你我])(?:要|得|需要)[^，。,；;]{1,24}[，,；;]\s*(?:不然|否则)|"
    r"(?<![区分特类级告识差个])别(?![的人处])|"
    # a convention of how something is written: "commit message 按 Conventional Commits 写", "分支名按 feat/xxx 命名"
    r"(?<![帮请让给])按\s*`?[A-Za-z\u4e00-\u9fff][^，。,；;？?]{0,30}?(?:来)?(?:写|命名|格式|起名)(?![了过])",
    re.I,
)
# "We don't have redis in prod" states a fact (a reason, usually), it orders nothing.
LACKS = re.compile(
    r"\b(?:we|it|they|this|that|there)\s+(?:don'?t|doesn'?t|do not|does not) (?:have|exist|support)\b", re.I
)
ABSOLUTE = re.compile(r"\b(?:never|always|must|only)\b|必须|禁止|绝对|永远|一律|务必", re.I)
# How the user wants to be answered: a preference even said in passing ("…short pls, I'll ask for detail").
_ANSWER_STYLE = re.compile(
    r"\bkeep (?:the |your |my )?(?:answers|replies|responses|it|them) (?:short|brief|concise)\b|"
    r"回答(?:简短|短一点|简洁)|(?:简短|简洁)(?:点|一点)回答|"
    r"\b(?:answer|reply|respond) (?:to me )?in (?:english|chinese)\b|回复(?:我)?用|回答(?:我)?用",
    re.I,
)
PREFERENCE = re.compile(
    _ANSWER_STYLE.pattern + "|"
    r"\bI(?:'d| would)? (?:really )?(?:prefer|like(?! to (?:know|see|understand|check|hear|find|ask|get|look|talk|"
    r"confirm|discuss|figure|try|go over|walk through))|love|hate|dislike)\b|\bI don'?t like\b|"
    r"\bI(?:'d| would) rather\b|\bmy preference\b|我(?:更|比较|很|还是)?(?:喜欢|偏好|倾向|习惯|不喜欢|讨厌)",
    re.I,
)
# "定了" settles something; "定了的话…", "定了吗" do not yet; "确定了", "搞定了" are other words.
_SETTLED_TAIL = r"定了(?!的话|吗|么|没)"
_SETTLED = r"(?<![搞弄确一肯说敲])" + _SETTLED_TAIL
_DECISION = re.compile(
    r"\b(?:decided|decide|chose|choose|chosen|picked|pick|went with|go with|going with|settled on|opted|"
    r"switch(?:ed|ing)? to|moving|moved|migrat(?:ed|ing)|stick with|standardi[sz]e on|we(?:'ll| will) use|"
    # ("took 3m40s instead of the 2 minutes": a comparison of amounts, no option passed over)
    r"let'?s (?:just )?use|(?:instead|rather than)(?! of (?:the |about |maybe )?(?:\d|(?:one|two|three|four|five|ten|a "
    r"few|a couple)\b))|pin|pinned|pins|the reason we|final (?:decision|call)|the decision (?:is|was))\b|最终方案|结论[是:：]|决定(?!是否|要不要|怎么|如何)|选择|选了|选用|采用|改用|"
    + _SETTLED
    + r"|最终用|而不是|"
    r"固定在|锁定",
    re.I,
)
# A tool or practice taken up from now on: "we're adopting sqlc for new queries", "we've adopted Renovate".
_ADOPTS = re.compile(
    r"\bwe(?:'re| are) (?:also |now )?adopting\s+`?[\w.+/-]+|\bwe(?:'ve| have)? (?:also |now )?adopted\s+`?[\w.+/-]+|"
    r"(?:我们)?(?:开始|以后|现在|也)(?:统一)?(?:引入|采用)\s*`?[A-Za-z][\w.+/-]*",
    re.I,
)
# A sentence that opens by saying it is the decision: "So the decision is: …", "最终决定：…", "结论是：…".
_DECLARED = re.compile(
    r"^\W*(?:so,?\s+|and\s+)?(?:the|our) (?:final )?decision (?:is|was)\s*[:：]|^(?:所以|最后)?(?:最终)?(?:决定|结论)(?:是|就是)?\s*[:：]",
    re.I,
)
# A choice told as made ("we went with X", "我们最后选了 X"): with what it passed over named, a decision.
_CHOSE = re.compile(
    r"\b(?:decided|chose|chosen|picked|went with|settled on|opted for|going with|made the call)\b|选了|选择了|选用|最后用|最终用|"
    + _SETTLED_TAIL
    + r"|"
    r"拍(?:了)?板",
    re.I,
)
RATIONALE = re.compile(
    r"\b(?:because|since|so that|due to|given that|which means|the reason (?:we|is|was|being))\b|"
    r"因为|由于|为了|考虑到|原因是",
    re.I,
)
# One thing put in another's place, known by the sentence's shape, since a library's lowercase name
# ("we dropped logrus, everything logs through zap now", "replaced moment with dayjs") is no known name.
_REPLACED = re.compile(
    r"\b(?:replaced?|swapped(?: out)?|swap)\s+`?(?!(?:the|a|an|it|this|that|them)\b)(?P<old1>[\w.+-]+)`?\s+(?:with|for)\s+`?\w|"
    r"\b(?:dropped|ditched|removed|retired|got rid of|stopped using|no longer use)\s+`?(?!(?:the|a|an|it|this|that|them|"
    r"my|our|some|all)\b)(?P<old2>[\w.+-]+)`?(?:\s+(?:last|this) (?:week|month|sprint)|\s+yesterday|\s+recently)?"
    r"\s*[,;—–-]\s*[^.;!?]{0,80}?\b(?:now|instead)\b(?![^.;!?]*\?)|"
    # "moment 换成 dayjs 了", "不用 logrus 了，现在都走 zap"
    r"(?<![\w.+-])`?(?P<old3>[A-Za-z][\w.+-]*)`?\s*(?:已经|也)?(?:换成|替换成|替换为|改成)了?\s*`?[A-Za-z]|"
    r"(?:不再用|不用|弃用|去掉)(?:了)?\s*`?(?P<old4>[A-Za-z][\w.+-]*)`?\s*了?[，,;；]\s*(?:现在)?(?:都|统一|全部|一律)?(?:用|走|改用|换成)\s*`?[A-Za-z]|"
    # "Airflow 我们已经 migrate 到 DolphinScheduler 了": what opens the sentence moved to what follows
    # (products, by their capitals: "gateway 迁到 k8s 上了" moved the gateway, it did not replace it; nor
    # did "Airflow 迁到 K8s 了" replace Airflow: a platform it runs on is no product in its place)
    r"(?:^|[：:，,。；;]\s*)`?(?P<old5>(?-i:[A-Z])[\w.+-]*)`?\s*(?:我们|这边|那边)?\s*(?:已经|也)?\s*(?:全部|整体)?\s*"
    r"(?:migrate|迁移?|切换?|换)\s*(?:到|成)\s*`?(?!(?:K8s|Kubernetes|AWS|GCP|Azure|EKS|GKE|ECS|ACK|Docker)\b)(?-i:[A-Z])|"
    # a rename of a named thing: "asset_record 表也改名成 asset_item 了", "renamed the route_plans table to planned_routes"
    r"(?<![\w.+-])`?(?P<old6>[A-Za-z](?=[\w.+-]*[_.\d-])[\w.+-]*)`?\s*(?:表|库|字段|队列|topic|table)?\s*(?:也|已经)?\s*"
    r"(?:改名成|改名为|改名叫|重命名为|重命名成|更名为)\s*`?[A-Za-z]|"
    r"\brenamed\s+(?:the\s+)?`?(?P<old7>[A-Za-z](?=[\w.+-]*[_.\d-])[\w.+-]*)`?\s+(?:(?:table|topic|queue|column|bucket|field|service|repo)\s+)?to\s+`?[A-Za-z]",
    re.I,
)
_MIGRATION = re.compile(
    r"\b(?:switched|moved|migrated|went|changed|moving|switching|migrating)\b.{0,40}?\bfrom\b.{1,60}?"
    r"\bto\b|\b(?:moved|changed|switched|bumped|migrated)\b.{0,40}?\bto\s+`?[\w.:/-]*\d|"
    # "Sam moved all sending over to Resend": something (not the speaker's team) moved to a product by name
    r"(?<!\bI )\b(?:moved|switched|migrated)\s+(?!over\b|to\b)(?:[\w-]+\s+){1,4}?(?:over\s+)?(?:to|onto)\s+`?(?-i:[A-Z])[\w.+-]*`?(?:\s|[,.;]|$)|从.{1,30}?(?:迁移到|迁到|换到|换成|切换到|切到|改用|升级到)",
    re.I,
)
_FACTS: list[tuple[str, re.Pattern]] = [
    (
        "config",
        re.compile(
            r"\bport\s*(?::|is|was|=)?\s*\d{2,5}\b|\b(?:listens?|serves?|runs?|is|are)(?: now)? on :?\d{2,5}\b|\d{2,5}\s*端口|"
            r"端口\s*(?:是|为|号)?\s*\d{2,5}|(?:跑|运行|监听)在\s*:?\d{2,5}",
            re.I,
        ),
    ),
    (
        "command",
        re.compile(
            r"\b(?:tests?|suite|specs?|builds?|lint(?:ing)?|format(?:ting)?|deploy(?:s|ing|ment)?|"
            r"migrations?|ci|storybook|server|app|docs|release)\b[^`]{0,40}\b(?:run|runs|ran|pass|"
            r"passes|calls?|use|uses|with|via|using)\b[^`]{0,12}`|\bwe \w+(?: \w+)? (?:with|using|via) `|"
            r"(?:用|使用|跑|运行|执行)\s*`[^`]+`|"
            r"`[^`]+`\s*(?:启动|跑|运行|执行)",
            re.I,
        ),
    ),
    (
        "location",
        re.compile(
            r"\b(?:is|are|lives?|located|kept|stored|defined|configured|set|placed)\s+(?:in|at|under|"
            r"inside)\b|放在|位于|存放在|定义在|配置在|配置从|记录在|(?:写|存|建)在|在\s*`[^`]+`\s*(?:里|中|下|上)",
            re.I,
        ),
    ),
    (
        "environment",
        re.compile(
            r"\b(?:staging|prod(?:uction)?|dev|qa|preview|ci)\b[^.]{0,30}?\b(?:is at|is on|runs? on|"
            r"deploys?|deployed|happen|happens)\b|(?:要|只)?在\s*`?[\w.-]+`?\s*上(?:跑|运行|部署|执行)",
            re.I,
        ),
    ),
    (
        "version",
        re.compile(
            r"\b(?:python|node|go|rust|msrv|java|ruby|php|postgres(?:ql)?|ubuntu|debian|typescript)\s*"
            r"v?\d+(?:\.\d+)*\b|\bpins?\s+[\w.-]+\s*[<>=~^]",
            re.I,
        ),
    ),
    (
        "convention",
        re.compile(
            r"\b(?:follows?|named|naming|conventions?|prefix(?:ed)?|suffix|grouped by|is called|"
            r"are called|(?:process|workflow) is)\b|命名|规范|前缀|流程是|名(?:用|是|为|叫)",
            re.I,
        ),
    ),
    (
        "ownership",
        re.compile(
            r"\b(?:owns|maintains|is responsible for|is on call|is the (?:owner|maintainer) of|owner of [^,.;]{2,40} is|"
            r"(?:is|are) (?:now )?(?:the )?(?:release|tech|team|incident|project) (?:captain|lead|manager|commander)|"
            r"is in charge of|(?:is|are) (?:owned|reviewed|approved|maintained|handled) by)\b|负责|"
            r"由(?!于)[^，。,；;]{1,12}(?:审核|审批|维护|处理|确认|管理?)|归[^，。,；;]{1,8}管|"
            r"\bhand(?:ed|s)? (?:over )?[\w./-]+(?: [\w./-]+){0,3}? (?:over )?to [A-Z]|\bhanded (?:over )?to [A-Z]|"
            # (not the speaker passing something on, nor to "him": "懂了，我转给他。")
            r"(?<!我)(?:交给|转给|移交给)了?(?!你|我|他|她|它)[^，。,；;]{1,6}(?:了|[。，,]|$)|接手了?",
            re.I,
        ),
    ),
    ("dependency", re.compile(r"\b(?:depends on|relies on)\b|依赖", re.I)),
    (
        # a routine or a retention: "test data is reset every night", "日志保留三十天", "值班表每周一更新"
        "schedule",
        re.compile(
            r"\b(?:is|are|gets?|runs?|resets?|rotates?|updated|reset|rotated|run|refreshed|cleaned|backed up|kept|retained)\b"
            r"[^.;]{0,40}\b(?:every (?:day|night|week|month|quarter|sprint|hour|monday|tuesday|wednesday|thursday|friday|"
            r"saturday|sunday)|daily|nightly|weekly|monthly|for (?:\w+ )?(?:days|weeks|months|years))\b|"
            r"每(?:天|晚|日|周|月|小时|个月|季度|个?迭代|周[一二三四五六日天])[^，。,]{0,12}(?:重置|轮换|更新|跑|执行|备份|清理|发布|发版|同步|刷新|归档)|"
            r"保留[^，。,]{0,6}(?:天|周|个月|月|年)",
            re.I,
        ),
    ),
    (
        "config",
        re.compile(
            r"(?:改成|改为|设成|设为|设置为|调整为|调成)\s*\S|\b(?:is set|defaults?|changed|bumped) to\s+\S|"
            r"\bis now\s+\d|\bhas\b.{1,30}\b(?:on|enabled|disabled)\b",
            re.I,
        ),
    ),
    (
        "config",
        re.compile(
            r"^(?:the\s+|our\s+)?[\w-]+(?:\s[\w-]+)?\s+(?:use|uses|is built with|are built with|is written "
            r"in|are written in)\s+`?[A-Za-z]",
            re.I,
        ),
    ),
    (
        "config",
        re.compile(
            r"\b(?:we|this (?:repo|project|service)|the (?:repo|project|app|service|team))\s+(?:use|uses|"
            r"are using|standardi[sz]ed on|rely on|target|targets)\b|"
            # "We deploy with Ansible", "Logs are shipped with Fluentd": the tool a part of the work goes through
            r"\bwe (?!\w+ed\b)\w+ (?:with|using|via|through) `?[A-Z][\w.+-]+|\b(?:is|are) (?:shipped|deployed|built|sent|"
            r"managed|scheduled|tracked|collected|bundled|packaged|generated|provisioned) (?:with|by|via|through|using) `?[A-Z]|"
            r"\b(?:goes|go|is sent|are sent|is reported|are reported) to `?[A-Z][\w.+-]+(?:\s*[.。]?$)|(?:我们|项目)(?:都|也|统一|一直)?用|"
            r"的\s*[\w-]+\s*用\s*[A-Za-z]",
            re.I,
        ),
    ),
]


# Talk about the task at hand or about the speaker, not about the project: never a memory, whatever
# trigger word it holds ("I always mix them up.", "don't fix them yet, just tell me.").
# The user closing the session: "ok thanks, that's all for today", "好的懂了，今天就到这": chat, and no agreement.
_SIGN_OFF = (
    r"\bthat'?s (?:all|it) for (?:today|now)\b|\bcall it a day\b|今天(?:就|先)到这|(?:就到这(?:里|儿)?|先这样)吧?$|"
    r"^\W*(?:行|好|ok)[，,]\s*谢了"
)
SIGN_OFF = re.compile(_SIGN_OFF, re.I)
CHAT = re.compile(
    r"\b(?:lol|haha|yet|for now|right now|(?<!as of )(?<!from )(?<!starting )today|tonight|this time|just (?:explain|tell|read|look|show|list)|"
    r"(?:always|keep) mix(?:ing)? (?:them|it|up)|asked me|couldn'?t remember|can'?t remember|"
    r"^\W*sorry (?:for|about) (?:the|all the|this|that)\b|\bteam (?:outing|dinner|lunch)\b|"  # ("sorry for the churn")
    # the speaker's morning, and what they are new to: "so I'm a bit behind", "I've never touched export-service"
    r"\bI'?m (?:a bit |running |way |a little )?(?:behind|late)\b|\bI (?:may|might) (?:vanish|disappear|drop off|be afk)\b|\bfire drill\b|\bI'?ve never (?:touched|worked (?:on|in|with)|used|"
    r"seen|looked at|been in)\b|\bkeeps? asking (?:whether|if|about)\b|\bdon'?t panic\b|"
    r"(?:don'?t|do not) (?:change|fix|touch|write|run|commit|push) (?:anything|them|it|any code|code)\b(?! without\b)|"
    r"no need to|nothing (?:installed|else)|while (?:you'?re|we'?re|i'?m) at it|before you touch|"
    r"i'?ll (?:trigger|do|check|ask|look|handle|take care)|new (?:machine|laptop)|fresh laptop|"
    r"here'?s (?:mine|my|the one)|put this in|sounds good|thanks|thank you|"
    # the speaker about themselves, not a rule: "I never liked this part", "I always get the two confused"
    r"I (?:always|never|usually|often|still) (?:liked?|get|got|forget|forgot|remember|mix|confuse|understood|knew|"
    r"know|thought|enjoy(?:ed)?|hated?|wonder(?:ed)?)|(?:always|never) (?:nice|fun|good|great|easy|annoying) (?:when|to))\b|"
    r"别急着|别慌|团建|等我开完会|开完会再|先写着|先跟我(?:讲|说)|先(?:讲讲|说说)|我自己来|我(?:待会|回头|自己)?来(?:写|弄|搞|处理|改)|我(?:老是|总是|一直)(?:记不住|搞混|看不懂|看不太懂|忘)|"
    r"先别|先不要|先不用|先讨论|今天先|这次|顺手|回头再|待会|等下|稍等|稍后|你看下|你看看|帮我看|哈哈|谢谢|我(?:先)?问(?:下|一下)|"
    # what the speaker means to take up next, not how things are: "我想顺便把决策日志也规范一下", "借这个机会把 DDL
    # 策略也定一下", "我回头让 DBA 把保留改成 3 天"
    r"(?:我|我们)?想顺便|借(?:这个|此)机会|(?:^|[，,]\s*)(?:我|我们)回头(?:让|找|跟|去|再)|"
    # what the speaker just did or leaves for now: "ORDER_TEST_DSN 我自己改好了", "老的模块先不动", "Leaning Argo CD but …"
    r"我(?:自己)?(?:已经)?(?:改|弄|配|修|调)好了\W*$|先不动|暂时不动|^\W*(?:I'?m )?leaning (?:towards? )?\w|"
    # the speaker taking a step of today's task: "PR 我自己推。" (as "I'll push the PR myself")
    r"我自己(?:来)?(?:推|提|合|发|跑|部署|上线|开)(?:吧|就行|就好|好了)?\W*$|"
    # the fix confirmed, the week wished well, a file to tidy away: "works now 👍 周末愉快", "X can be deleted"
    r"^(?:it\s+|that\s+)?works now\b|周末愉快|辛苦了|^(?:that|this|which) explains\b|"
    + _SIGN_OFF
    + r"|\bcan be (?:deleted|removed|dropped)\b|可以删(?:掉|除)?了|"
    # breaks and the evening's plans: "coffee break, then open the PR", "今晚还要上分，先 commit", "随便跑个小压测玩玩"
    r"\bcoffee break\b|\blunch\b|吃饭|今晚|先 ?commit|玩玩|不作数|我按这个|(?:下午|上午|晚点|待会)(?:我)?(?:要|再|去)|去开会|"
    # the message about itself: "I want to write down where we landed", "I'd rather you have the full picture",
    # "I know that's a wall of text", "The more interesting discussion was about …"
    r"\b(?:write (?:it |this |that )?down where|(?:have|get) the (?:full|whole) picture|wall of text|(?:keep|kept) "
    r"re-?explaining|captured somewhere|discussion (?:was|is) about)\b|跟你同步一下|省得(?:以后)?每次都?要|"
    r"就这[两三四五六几]件|^你记一下|"
    r"\bhave a (?:good|nice|great) (?:evening|weekend|day|night)\b|\bno open questions\b|"
    # the team's day, not the project: "standup moved to 10:30 so we have an hour", "下午还得开周会"
    r"(?<![\w-])(?:(?:(?:mon|tues|wednes|thurs|fri)day(?:'s)? )?demo|stand-?up|retro|all-hands|team sync)(?:'s| is)?\s+"
    r"(?:(?:got|was|has been) )?(?:moved|is at|at|starts|pushed|rescheduled|"
    r"(?:is )?(?:today|tomorrow|in \d))\b|(?:开|去开|还有|还得开)(?:站会|周会|例会)|(?:站会|周会|例会)(?:挪|改|推迟|提前)|"
    r"(?:评审|复盘|分享|周)会(?:议)?(?:挪|改|推迟|提前)|会议(?:挪|改|推迟|提前)到|"
    # "standup is async this week", "I have to drop at 11:30 for the pricing sync"
    r"(?<![\w-])(?:stand-?up|retro|sync)\s+is\s+(?:async|cancel+ed|off|remote)\b|"
    r"\bI (?:have|need|got) to (?:drop|leave|hop off|jump off|run)\b[^.;]{0,40}\b(?:at \d|for (?:a|the|my)\b)|"
    r"\bleave (?:the|that|this|it)\b[^.;]{0,30}\buntil\b|"
    r"\b(?:meeting|onboarding|1:1|one-on-one)\b[^.;]{0,40}\b(?:moved|pushed|rescheduled)\s+to\s+"
    r"(?:\d|mon|tue|wed|thu|fri|sat|sun|tomorrow|next)|"
    # the state of the day's work: "CI is red again btw", "the e2e is flaking", "跑完了，12 张票都出了 ✅",
    # "现在的问题是：…", "plan looks right, I'll apply it myself after standup"
    r"\b(?:CI|the build|main|the pipeline|nightly)(?:'s| is| was)? (?:red|broken|flaky|failing) again\b|\bflaking\b|"
    r"^\W*(?:跑完了|搞定了|弄好了|都好了)|✅|不是这个(?:问题|原因)?\W*$|\bthat'?s not it\b|"
    r"^\W*现在的?问题是|^\W*the (?:problem|issue) (?:now|right now|today) is\b|"
    r"\bI'?ll\b[^.;]{0,40}\b(?:myself|after (?:stand-?up|lunch|the (?:meeting|sync|call))|this (?:afternoon|evening)|tonight)\b|"
    # feedback on the work in front of them: "Mostly right, but the header band is white."
    r"^(?:mostly|almost|nearly) (?:right|there|good|fine)\b|"
    # the speaker introducing themselves or getting to know the code: "hi，我是新来的 Sam", "I just joined the team",
    # "我跑下 rank 的 test 熟悉一下", "trying to get my head around …"
    r"我是新来的|新来的同事|\bI(?:'m| am) new (?:here|to)\b|\bI (?:just )?joined\b|熟悉一下|熟悉熟悉|"
    r"\bget (?:my|a) head around\b|\bfind my way around\b|"
    # the session's end, the review of the moment and the day's state: "that's enough for one day", "good catch on
    # the 202 thing, put that in the review", "Never seen it set.", "这里别 unwrap。" (this line, not the project),
    # "not in this PR", "对，VPN 没开。", "Second run took 6 seconds", "OK，先提 PR 给思远 review."
    r"\bthat'?s enough for (?:one day|today|now)\b|\bgood catch\b|\b(?:is|are) already (?:running|up)\b|^\W*never (?:seen|heard of|used)\b|"
    r"^\W*(?:and |so |also )?while (?:you'?re|we'?re) in (?:there|here)\b|"
    r"\bput (?:that|this|it) in (?:the|your|my) (?:review|PR|description)\b|\bnot in this (?:PR|MR)\b|"
    r"不在这个\s*(?:PR|MR)里?|(?:^|[，,]\s*)先提\s*(?:个\s*)?(?:PR|MR)\b|"
    r"^\W*这(?:里|行|段|块)(?:\s*`[^`]*`)?\s*(?:先)?(?:别|不要|不用)|^\W*(?:你)?要是你?在|不用动\W*$|按你说的改|"
    r"\bVPN\b[^，,。]{0,6}(?:没开|没连|断了)|(?:没开|没连上?)\s*VPN|^\W*(?:the )?(?:first|second|third|last) run (?:was|took)\b",
    re.I,
)
# A line of a pasted stack trace or memory dump: "pkg.(*Client).Balance(0x0, …)", "at Foo.bar(Foo.java:12)",
# 'File "x.py", line 3': it quotes the program, it says nothing about the project.
_TRACE = re.compile(
    r"(?i:\(\*?\w+\)\.\w+\(|\b0x[0-9a-f]{6,}\b|^\s*at [\w.$<>]+\([\w.]+:\d+\)|(?:^|\.\s+)File \"[^\"]+\", line \d+)|"
    # a log line or an exception pasted without a code block: "[2026-10-09T08:02:11.415+0000] {dagbag.py:588}
    # ERROR - …", "ModuleNotFoundError: No module named 'cosmos'."
    r"^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|^\s*(?:\S{1,12}\s+){1,2}\[?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}|^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):\s|"
    r"^\s*(?:INFO|ERROR|WARN(?:ING)?|DEBUG|FATAL|CRITICAL)\b[\s:\]-]|^\s*Traceback \(most recent call last\)|"
    # a document's bookkeeping: "最后更新：2026-04-20", "Last updated: 2026-04-20"
    r"(?:^|[:：]\s*)\W*(?:最后更新|更新于|更新时间|(?i:last (?:updated|modified|reviewed)))\s*[:：]?\s*\d{4}|"
    # a test runner's lines: "planner_test.go:140: osrm table request failed: …", "--- FAIL: TestPlan (2.01s)"
    r"^\s*[\w./-]+\.(?:go|py|js|ts|tsx|rs|java|rb|kt|c|cc|cpp|php|cs|swift):\d+(?::\d+)?:\s|"
    r"^\s*(?:---\s*)?(?:FAIL|PASS)\b:?\s+\w+|^\s*panic:\s"
)
# Something specific to the project: code, a path or dotted name, an identifier, a number, a
# setting, an ASCII term inside Chinese. A plain statement without any of these is small talk.
SPECIFIC = re.compile(
    r"`[^`]+`|\b\w+[_/.:]\w|\b[a-z]+[A-Z]\w*|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Z]{2,}\w*|\d{2,}|\w=\w|--\w|\*/\d|"
    # a component named with hyphens ("thumbs-worker", "the order-updated exchange"), not "re-process"
    r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)*-(?:service|svc|api|worker|gateway|sync|queue|exchange|topic|bucket|db|cache|"
    r"proxy|server|bot|cron|ingest|resizer|notifier|scheduler|updated|created|changed|deleted|consumer|producer|"
    r"agent|daemon|engine|bridge|portal|parser|indexer|migrator|exporter|importer|sweeper|runner|builder|loader|"
    r"checker|watcher|poller|router|collector|dispatcher|uploader|renderer|publisher|listener|fetcher|handler|manager|"
    r"controller|monitor|tracker|reporter|processor|detector|sender)\b"
)
_STATEMENT_VERB = re.compile(
    r"\b(?:is|are|was|were|runs?|lives?|uses?|goes|go|has|have|needs?|reads?|lands?|comes?|must|only|"
    r"can'?t|cannot|doesn'?t|don'?t|won'?t|isn'?t|aren'?t|breaks?|fails?|stores?|points?|takes?|keeps?|"
    r"stays?|sits?|expects?|requires?|returns?|sends?|writes?|works?|gets?|means?|belongs?|ships?|"
    r"builds?|calls?|depends?|listens?|serves?|rejects?|accepts?|caches?|times? out|applies|there'?s|"
    r"raised|lowered|increased|decreased|reduced|bumped|switched|migrated|upgraded|downgraded|renamed|retired|"
    r"(?:tighten|loosen|rais|lower|reduc|increas|extend|shorten|bump|cutt)ing|tightened|loosened|extended|shortened|"
    r"starts?|begins?|ends?|follows?|contains?|includes?|moved|changed|dropped|swapped|split|drops|"
    r"expires?|rotated|rotates|changes|happens?|fires?|escalates?|resets?|purges?|"
    r"it'?s|that'?s|they'?re|"
    r"there is|there are|\w+'s (?=in|on|at|under|behind|called|named)\w+)\b|"  # "state's in s3 bucket …"
    r"是|(?<!现)在|用|走|读|从|要|会|没有|不|只|得|由|跑|连|放|存|叫|归|给|发|带|靠|换|改|迁|回收|下线|上线|开|关|传|推|落|挂|接(?!口)|调|写|查|打到|监听|"
    r"最多|最少|至少|上限|挪|过期|失效|自动|切(?:到|换)|注销|按\s*\S[^，,。]{0,40}?来(?![\u4e00-\u9fff])|"
    # when something happens is a statement of it: "release train 每周二 cut branch", "backups run nightly"
    r"每(?:天|日|周[一二三四五六日天]?|月|小时)|\bevery (?:day|night|week|month|hour|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday)\b|\b(?:daily|nightly|weekly|hourly)\b",
    re.I,
)
_NARRATIVE = re.compile(
    r"^(?:i|we)\s+(?:did|was|were|had|just|tried|ran|think|guess|believe|wonder|thought|forgot|saw|"
    r"noticed|want|need|'d|'ll|will|can|could|might|may|am|'m)\b|^(?:i|we)'(?:ll|d|m|ve)\b|^i\s+\w+ed\b|^i\s+(?:have|got)\s+(?!to\b)|"
    r"^(?:我|我们)(?:刚|刚才|觉得|想|猜|试了|看了|昨天|之前|要|先|会)|^(?:以前|过去)(?![的要得需必都统说定写配提])|^我(?:在|正在)(?:准备|弄|搞|写|看|查|改|做|学|想)|"
    r"^我是(?:新来的|新人|刚来的|刚入职)|^i'?m new\b|^i am new\b|"  # who is asking, not the project
    r"^(?:maybe|perhaps|probably|not sure|"
    r"i guess|也许|可能|估计|好像)",
    re.I,
)


# "有问题" reports a problem, unless it says whom to ask when there is one ("有问题先找她").
_HAS_PROBLEM = r"(?<!有)有问题(?!(?:就|可以|直接|请|先)?(?:找|问|联系|@|艾特|ping))"

# A report of what just happened or a request folded into a statement: the task of the day, not a
# standing fact ("fct_orders has dupes since the backfill last night.", "…，帮我换成 Apollo。").
# A report of what is going wrong right now ("X 有问题", "权限没生效，还是报 Access denied", "it still
# doesn't work"): the symptom of today's problem, not a standing fact, whatever rule word it holds.
_SYMPTOM = re.compile(
    r"\b(?:does(?:n'?t| not)|do(?:n'?t| not)|did(?:n'?t| not)) (?:seem to )?work\b|\bnot really \w+ing\b|"
    r"\bstill (?:fails?|failing|broken|red|times? out)\b|\bsomething(?:'s| is) (?:off|wrong)\b|"
    # "The cart screen fails with `TypeError: …`, but only on the iOS simulator": today's failure, not a gotcha
    # ("… fails with OOM if the cache is cold" is one)
    r"\b(?:fails|crashes|errors out) with\b(?![^.]*\b(?:if|when|unless|whenever)\b)|"
    + _HAS_PROBLEM
    + r"|出问题(?!(?:就|可以|直接|请|先)?(?:找|问|联系|@|艾特|ping))|有个怪事|怪事|没生效|不生效|不知道为(?:啥|什么)|(?:还是|一直|又)报",
    re.I,
)
# What is broken right now ("connector 挂了", "pod 起不来了", "CPU 打满了", "p99 从 12ms 飙到 80ms", "the nodes never
# become Ready"), unless it is what would follow ("否则服务起不来", "otherwise it crashes").
_BROKEN_NOW = re.compile(
    r"挂了(?!\s*个?\s*[A-Za-z])|起不来|打满|飙到|飙升|崩了|一直在?\s*(?:restart|重启|报错)|\bbut (?:they|it) (?:never|still|won'?t|don'?t|doesn'?t) (?:become|come|start|get|work)",
    re.I,
)
_WOULD_FOLLOW = re.compile(r"否则|不然|要不然|\botherwise\b|\bor else\b|\bif (?:not|you don'?t)\b", re.I)


def broken_now(s: str) -> bool:
    m = _BROKEN_NOW.search(s)
    return bool(m) and not _WOULD_FOLLOW.search(s[: m.start()])


# An incident as it was reported: "被 OOMKilled 好几次", "涨得飞快", "客服那边炸了", "转过来一个投诉", "failed on
# two of the last three nights": what happened, not how things are (a rule word in it, "always on mac-ci-02", too)
_INCIDENT = (
    r"好几(?:次|回|遍)|飞快|炸了|转过来一个|那边反馈|很不爽|\banother (?:night|day|week|round) of\b|\bby hand at \d|"
    r"\bcomplain(?:ing|ed|s)? (?:that|about)\b|\b(?:support|customers?|users?|partners?) (?:sent us|reported|have reported)\b|老是(?:超时|挂|失败|报错|卡|丢|重复)|第[二三四两]次了|又\s*(?!改|换|调|变|迁|切|加|新)[\w\u4e00-\u9fff]{1,8}?\s*了(?![\w\u4e00-\u9fff])|\bof the last (?:\w+ )?(?:nights|days|runs|builds|deploys)\b|"
    r"\b(?:second|third|fourth|\d+(?:nd|rd|th)) time (?:this|today|in a)\b|"
    # "PrintHaus keeps flagging low-res photos", "their sandbox was crawling last week"
    r"\bkeeps? (?:flagging|bouncing|rejecting|dropping)\b|\b(?:was|were|is|are) crawling\b|误报(?:很多|太多|一堆)|刷屏"
)
INCIDENT = re.compile(_INCIDENT, re.I)
_EPISODE = re.compile(
    r"\b(?:since (?:yesterday|last|the|this|we|i)|last night|(?<!as of )(?<!effective )(?<!starting )yesterday|this morning|on (?:monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|figure out|can you|could you|help me|keeps? (?:logging|"
    r"failing|crashing|flapping|restarting|timing out|dying|erroring)|all getting|didn'?t get)\b|帮我|帮忙|怎么办|最近|昨天|昨晚|前天|今天|今早|刚才|出事|偶现|巨卡|没法用|"
    # going wrong today, as "keeps timing out": "payout-worker 在 staging 一直 timeout"
    r"(?:一直|老是|总是)\s*(?:在\s*)?(?:timeout|time ?out|超时|报错|失败|挂|崩|重启|crash|fail|5\d\d\b)|"
    r"挺香|(?<!，)(?<!, )(?<!,)不想|我真的|我\s*mac|本地生成|^(?:加个|加一个|改下|改一下|弄个|写个|补个)|用过|"
    # hedged or second-hand: "里好像有个现成的", "有业务方说偶尔 400" (what someone reported, not a fact yet)
    r"好像|似乎|貌似|偶尔|听说|有人说|\S{1,4}方说|反馈说|"
    # what to try it on, handed over: "单号用 CJ20261003-0417", "loan L-88121 reproduces it"
    r"(?:单号|订单号?|工单|检测单)\s*(?:就)?用\s*\S|拿[^，。]{0,12}复现|复现用|\b(?:to repro(?:duce)?|repro with|reproduces it)\b|"
    # what was just done, counted: "跑了 5 次都过了", "重启了 3 次"
    r"(?:跑|试|测|重启|重跑|刷新|点)了\s*\d+\s*(?:次|遍)|都(?:通)?过了|" + _INCIDENT,
    re.I,
)


# A change told as news of when it happened, with the state it left: "the metadata db moved last night,
# it's on airflow-meta-v2.internal port 6432 now", "昨晚 DB 迁到了新机器，现在是 10.0.0.5": a standing fact
# (a blind trial lost such a correction to "last night").
_CHANGED_NOW = re.compile(
    r"\b(?:moved|migrated|switched|changed|renamed|replaced|upgraded|cut over)\b(?:[^.!?。！？]|\.(?=\w))*\bnow\b|"
    # or the state alone, with its value: "daily_features runs at 06:30 utc now (…), … since the dagster port"
    r"\b(?:runs?|is|are|listens?|lives?)\b (?:at|on|in)\b[^.!?。！？]{1,30}\bnow\b|"
    r"(?:迁|搬|换|改|切|升级)[^。！？]{0,40}现在|(?:改成|改为|调成|调到)\s*[^，。,]{0,6}\d",
    re.I,
)


def _episode(s: str) -> bool:
    """What just happened or what today's task is (`_EPISODE`), not a change and the state it left."""
    return bool(_EPISODE.search(s)) and not (_CHANGED_NOW.search(s) and values_in(s))


def is_chat(s: str) -> bool:
    return bool(CHAT.search(s))


# A redacted secret with the name it was assigned to: "AWS_SECRET_ACCESS_KEY=[REDACTED:api-key]".
_REDACTED = re.compile(r"\s*(?:[A-Za-z_][\w.-]*\s*[=:]\s*)?" + REDACTED.pattern)


def _lead_in(s: str) -> bool:
    """A line that only announces what follows ("Steps:"), or that hands over a secret, which leaves
    it one once redacted ("AWS creds 用这个: AKIA… AWS_SECRET_ACCESS_KEY=…", a blind trial; not where
    one lives: "license key 在 .env 里：OCR_LICENSE_KEY=…" names its place and variable)."""
    if s.rstrip().endswith((":", "：")):
        return True
    if ":" not in s and "：" not in s:
        return False  # (no lead-in to be left: the sentence need not be redacted here, the store does it)
    redacted = privacy.redact(s)
    bare = _REDACTED.sub("", redacted)
    return bare != redacted and bare.rstrip(" 。.").endswith((":", "：")) and bool(_HANDS_OVER.search(bare))


_HANDS_OVER = re.compile(r"用这(?:个|些|俩)|这(?:是|几个是)|给你|\bhere(?:'s| is| are)\b|\buse th(?:is|ese)\b", re.I)


def is_statement(s: str) -> bool:
    """A plainly stated fact, constraint or gotcha about the project with no trigger word: a
    declarative sentence that names something specific ("The tests pass only when TZ=UTC because
    the ORM stores naive datetimes.", "测试环境 MySQL 在 10.12.3.45:3306")."""
    if (
        is_question(s)
        or is_request(s)
        or _NARRATIVE.match(s)
        or is_chat(s)
        or _episode(s)
        or _TRACE.search(s)
        or _lead_in(s)
    ):
        return False
    held = values.fact_values(s)
    if not (
        SPECIFIC.search(s)
        or _COUNTED.search(s)
        or _CONVENTION.search(s)
        or held["quantities"]  # "网关超时是 3 秒", "retries back off for 5 minutes"
        or held["clock"]  # "对账挪到凌晨 1 点半"
        or (entities_cjk_any(s) and re.search(r"[A-Za-z]{2,}|" + _NAMED_ZH, s))
        or any(k.startswith("tech:") for k in slot_values(s))  # "cachebox moves to Cloudflare R2", "短信切到华为云了"
    ):
        return False
    return bool(_STATEMENT_VERB.search(s)) and _long_enough(s)


# A count with what it counts ("capped at 5 attempts", "重试最多 5 次", "3 个副本"): as specific as a name.
_COUNTED = re.compile(
    r"\b\d+\s*(?:attempts?|retries|tries|times|replicas?|pods?|nodes?|workers?|threads?|connections?|requests?|"
    r"rows?|items?|rps|qps|%|percent|[kmgt]i?b)\b|\d+\s*(?:次|个|条|台|副本|倍|%|万|行|人|核|[KMGT]i?B?)|"
    r"[两三四五六七八九十][十百千万]?\s*(?:个人|个副本|个节点|个实例|次|条|台|人|倍|副本)",
    re.I,
)
# A convention, however plainly said: "提交信息用中文写，格式是 模块: 描述", "the naming convention is …".
_CONVENTION = re.compile(
    r"格式(?:是|为|统一)|命名(?:规则|规范|方式)?(?:是|为|用|统一)|用(?:中文|英文)写|\bwritten in (?:english|chinese)\b|"
    r"\bformatted as\b|\bthe format is\b|\bnaming convention\b|"
    # "commit message 按 conventional commits 来", "branch 名按 feature/<ticket> 来"
    r"(?:commit|提交|分支|branch|tag|PR|MR)\s*(?:message|信息|名|标题|title)?\s*(?:都|统一|一律)?按\s*\S[^，,。]{0,40}?来",
    re.I,
)
# What names something specific in a Chinese sentence without a Latin letter: a quoted name (「订单告警」)
# or a product everyone there uses by its Chinese name (飞书, 钉钉, 阿里云).
_NAMED_ZH = r"「[^」]{2,}」|“[^”]{2,}”|飞书|钉钉|企业微信|阿里云|腾讯云|华为云|七牛|又拍云|宝塔|禅道|语雀|石墨"


def is_detail(s: str) -> bool:
    """A verbless sentence naming specifics, which completes the statement before it."""
    s = strip_fillers(s)
    return (
        bool(SPECIFIC.search(s))
        and _long_enough(s)
        and not (is_question(s) or _REQUEST.match(s) or _NARRATIVE.match(s) or is_chat(s) or _episode(s))
        and not (_TRACE.search(s) or _ANNOUNCES_ONLY.match(s))  # a pasted log line, "From the ALB logs:"
    )


def entities_cjk_any(s: str) -> bool:
    return any(entities_cjk(ch) for ch in s)


def split_rationale(s: str) -> tuple[str, str | None]:
    m = RATIONALE.search(s)
    if not m:
        return s.strip(), None
    return s[: m.start()].strip(" ,，"), s[m.end() :].strip(" ,，。.") or None


# A move to something that names what it leaves ("主键改用雪花 ID，别再用自增", "switched to pnpm, no more
# npm"): a decision with its alternative, whatever rule words come with it.
_SWITCH = re.compile(
    r"改用|换成|换用|改走|\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|migrat\w*)\b[^,.;]{0,30}?\bto\b|\breplac\w*\b[^,.;]{0,30}?\bwith\b",
    re.I,
)


# What would follow from something ("but then …", "出了问题 …"): a "has to" or "只能" after it is a
# consequence weighed, not a rule.
_CONSEQUENCE = re.compile(
    r"\bbut then\b|\botherwise\b|\bor else\b|出了问题|出问题|到时候|那样的话|这样的话|不然|否则", re.I
)


# A line that only leads in to what follows it ("联调用这个 token（别提交！）：", "Use this key:"): what it
# points at is on the next lines (a pasted key, a list), so alone it says nothing.
_LEAD_IN = re.compile(r"(?:这个|这些|下面|如下|以下|\b(?:this|these|the following|below)\b)[^:：]*[:：]\s*$", re.I)


# A rule added to a subject's rules ("特征命名规范加一条：…", "one more rule for migrations: …"): said with
# its subject, and never a repeat or a correction of the rules already there.
ADDS_RULE = re.compile(
    r"[\w\u4e00-\u9fff)）`]\s*(?:再|还)?(?:加|补充|新增)一条|\b(?:one more|another|a new|an extra) (?:rule|convention)\b",
    re.I,
)
# A lead that announces what follows ("几个变化：", "再说几个规矩：", "另外规则命名再加一条：", "A few changes:"):
# what comes after it is the statement, and the lead's words are no subject to match others by (a rule
# added to a subject's rules keeps its lead: ADDS_RULE).
_ANNOUNCED = re.compile(
    r"^[^:：`]{0,12}?(?:几个|几件|几条|一些|(?:再)?加一条|补充一条|一条|两条|三条|两件|三件|两个|三个)(?:新的?)?(?:变化|变动|更新|规矩|规定|约定|事情?|事儿|东西|地方|背景|情况)?"
    r"[^:：`]{0,4}(?:[，,]\s*(?:省得|免得|以免|方便|好让)[^:：`]{0,16})?[:：]\s*|^(?:顺便)?补充(?:一下|几句|一点)?(?:背景|情况)?[:：]\s*|"
    r"^(?:also,?\s+)?(?:a few|some|a couple of|two|three)\s+(?:more\s+)?(?:changes|updates|rules|"
    r"things|notes)\b(?:[^:]{0,20}|\s+so (?:that )?you\b[^:]{0,40}):\s*|^(?:(?:a |one )?(?:quick|small|last)\s+)?update\s*[:：]\s*|^更新(?:一下)?[:：]\s*",
    re.I,
)


_WHILE_HERE = re.compile(
    r"^(?:and |so |also )?while (?:you|we)'?re (?:(?:in )?here|(?:in )?there|at it)\s*[-—–,:]+\s*", re.I
)
_WHILE_THERE = re.compile(
    r"(?:^|\s*,?\s*)(?:and |so )?(?:while|since|as) you'?re (?:in|at|on|there|here|touching|editing|changing)\b.*$",
    re.I,
)
_PLAN_LEAD = re.compile(
    r"\bplan for (?:today|the day|this week)\b|\btoday'?s plan\b|今天的?计划|今天(?:要|先)做|"
    r"现在的?问题是|\bthe (?:problem|issue) (?:now|right now|today) is\b",  # (the problem at hand: an incident)
    re.I,
)
_ANNOUNCES_ONLY = re.compile(
    r"^(?:(?:heads[- ]up|fyi|note)\s*[,:]\s*)?"
    r"(?:(?:a few|some|two|three|a couple of) (?:more )?(?:things|notes|rules|changes|updates)"
    r"(?: (?:have )?changed| for the record| to note| to remember)?|"
    r"有?(?:几|两|三)(?:件事|条|个规矩|个变化|处改动)(?:记一下)?)\s*[.:。：]?\s*$|"
    # a short lead-in to what was pasted after it: "From the ALB logs:", "这是 feature-server 的上线手册。"
    r"^[^:：\n]{0,40}\b(?:logs?|output|trace|stack ?trace|errors?|here'?s|this is)\s*[:：]\s*$|"
    r"^(?:这是|下面是|以下是)[^，。：:]{0,30}(?:手册|文档|日志|输出|报错|runbook|README)[。：:.]?\s*$",
    re.I,
)


# A clause about today's work at the end of a sentence that states a fact: "Reservation pulls run every
# 5 minutes from celery beat, leave those alone for now", "补偿完以后对账要盯一下，ReconcileJob 每天凌晨 3 点跑，明早看下结果"
_TODAY = re.compile(
    r"明早|明天|今晚|今天|这次|待会|回头|一会儿?|先放着|(?:盯|看|查|跟|确认)一下|\bfor now\b|\bright now\b|顺手|你看下|你看看|\bleave (?:it|them|those|that) alone\b",
    re.I,
)


def announces_list(s: str) -> bool:
    """Whether `s` opens by announcing what follows: "另外几件事一起说了：…", "A few changes: …"."""
    return bool(_ANNOUNCED.match(s))


def _without_asides(s: str) -> str:
    """`s` less the clauses at its end that ask for something or talk about today, when what is
    left states something on its own."""
    parts = re.split(r"(?<=[,，;；])\s*", s)
    if len(parts) < 2 or is_question(s):
        return s

    def aside(part: str) -> bool:
        p = part.strip(" ,，;；.。!！")
        return bool(p) and bool(is_request(p) or _TODAY.search(p)) and not RULE.search(p)

    keep = list(parts)
    while len(keep) > 1 and aside(keep[-1]):
        keep.pop()  # (at the end only: what opens a sentence sets what the rest is, "我想顺便…，现在是…")
    if len(keep) == len(parts):
        return s
    core = "".join(keep).rstrip(" ,，;；")
    if not _long_enough(core) or not (is_statement(core) or owner_of(core)):
        return s
    return core + ("。" if entities_cjk(core[-1]) else ".")


_LABELLED_COMMAND = re.compile(r"^[^:：`]{2,60}[:：]\s*`[^`]*\S\s+\S[^`]*`")
_ASIDE = re.compile(r"[（(][^）)]*[）)]")
_ASKS_FOR = re.compile(r"^\W*(?:帮我|帮忙|麻烦你?|请你?帮|can you|could you|please)", re.I)
# A problem reported gone: "No more 502s after 10 minutes. 🎉", "no more timeouts since the fix"
_RESOLVED = re.compile(
    r"^\W*no more (?:\d{3}s|errors|timeouts|crashes|failures|alerts|pages|flakes|ooms?|restarts|retries)\b(?!\s*(?:in|on)\s+(?:main|prod))",
    re.I,
)


# A pasted key's armour line, left when its body was redacted: "-----BEGIN OPENSSH PRIVATE KEY-----".
_ARMOR = re.compile(r"^\W*(?:BEGIN|END) [A-Z0-9 ]*(?:KEY|CERTIFICATE|MESSAGE|SIGNATURE|KEY BLOCK)\W*$")
# What is missing now, then the request to add it: "…，现在请求里没带 source，帮我加个 `source: …`" (the task)
_LACKS_THEN_ASKS = re.compile(
    r"(?:现在|目前|还)[^，,。]{0,20}?没(?:带|有|加|传|做|处理)[^，,。]{0,30}[，,]\s*(?:帮我|麻烦|请你?|你(?:先|再)?(?:把|加|改))"
)


def classify_user(raw: str) -> tuple[str, str, str, int] | None:
    """(sentence, category, why, importance) when a user sentence is worth keeping."""
    informed = bool(_HEADS_UP.match(raw))
    s = _without_asides(strip_fillers(raw))
    s = _WHILE_HERE.sub("", s) or s  # "while we're here - we're getting off MinIO anyway."
    lead = re.match(r"^([^:：`]{3,80})(?:(?<!\d):|：)\s*(?=\S)", s)  # (not the colon of "10:30")
    if lead and _PLAN_LEAD.search(lead.group(1)):
        return None  # "Plan for today: get the beta green, then …": the day's plan, no fact
    if _ANNOUNCES_ONLY.match(s):
        return None  # "A few things for the record.": what follows is the memory
    if lead and _WHILE_THERE.search(lead.group(1)):
        # "while you're in render/: guids …" drops its lead; "for transcoder while you're in there:" keeps the name
        named = _WHILE_THERE.sub("", lead.group(1)).strip(" ,")
        s = (named + ": " if len(named) > 4 else "") + s[lead.end() :]
        lead = None
    if lead and (CHAT.search(lead.group(1)) or _FYI.search(lead.group(1))):
        s = strip_fillers(s[lead.end() :])  # "one thing before you touch billing/: all money is …"
        informed = True
    said_lesson = _LESSON_LEAD.match(s)
    lesson = bool(said_lesson and _long_enough(s[said_lesson.end() :]))
    if lesson:  # "lesson for next time: every currency conversion change gets golden cases at the half-cent boundary"
        s = strip_fillers(s[said_lesson.end() :])
    announced = _ANNOUNCED.match(s)
    if announced and _long_enough(s[announced.end() :]) and not ADDS_RULE.search(announced.group()):
        s = s[announced.end() :]  # "几个变化：gRPC 端口…", "A few changes: …": the lead names no subject
    elif announced and not s[announced.end() :].strip():
        return None  # "再同步几件事，省得你以后查错：": the list after it is the memory
    short_owner = len(s) <= 200 and bool(owner_of(s) or oncall_of(s))  # ("Kim owns scheduler-api.")
    if not (_long_enough(s) or short_owner) or _LEAD_IN.search(s):
        return None
    written = _WRITE_DOWN.match(s)
    if written and _long_enough(s[written.end() :]):
        s = strip_fillers(s[written.end() :])
    remember = bool(written) or bool(_REMEMBER.search(s))
    if remember:
        s = _REMEMBER_TAIL.sub("", _REMEMBER_HEAD.sub("", s)).strip()
        if not _long_enough(s):
            return None
    # (who to go to "for now" is still who to go to: "ride-billing questions go to Mei for now")
    chat = is_chat(s) and not _ANSWER_STYLE.search(s) and not short_owner
    if (
        is_question(s)
        or _NOT_RULE.search(s)
        or chat
        or _TRACE.search(s)
        or _LACKS_THEN_ASKS.search(raw)
        or _ARMOR.match(s)
    ):
        return None
    if INCIDENT.search(s) and not remember:
        return None  # (asked to be remembered, it is kept as said)
    if suggests(s) and not remember:
        return None  # an option floated: a decision once agreed to (heuristic._decision), nothing before
    corrected = False
    m = _CORRECTION.match(s)
    if m and _HINT.search(s[m.end() :]) and _long_enough(s[m.end() :]):
        s, corrected = strip_fillers(s[m.end() :]), True
    elif _CORRECTION_ZH.search(s):
        corrected = True
    if (_SYMPTOM.search(s) or broken_now(s)) and not remember:
        return None  # what is going wrong today: the explanation that follows is the memory
    # (a request's aside is no rule: "帮我生成 K8s secret 的 yaml（别提交到 git）"; nor is a result: "no more 502s")
    ruled = _ASIDE.sub(" ", s) if _ASKS_FOR.match(s) else s
    rule = None if LACKS.search(s) or _RESOLVED.match(s) else RULE.search(ruled)
    pref = PREFERENCE.search(s)
    if rule and _CONSEQUENCE.search(s[: rule.start()]):
        rule = None  # "出了问题只能干瞪眼", "but then the manifest has to be in the image": what would follow
    if is_request(s) and not (rule or pref or remember or owner_of(s)):
        return None  # (not "run anything portal-facing past Maggie first: Marguerite Okafor owns syndication-service")
    why: list[str] = []
    if _DECLARED.match(s):  # "So the decision is: …", "结论是：…": said to be the decision
        category, importance = "decision", 4
        why.append("a decision, declared")
    elif _DECISION.search(s) and RATIONALE.search(s) and not (_CHANGED_NOW.search(s) and values_in(s)):
        # (a value that changed, with why: "platform moved the gateway off 8443: it's on 9443 now, because
        # …" is a fact that corrects the old one, not a choice)
        category, importance = "decision", 4
        why.append("decision with a reason")
    elif _SWITCH.search(s) and alternatives(s):
        category, importance = "decision", 4
        why.append("a switch that names what it replaces")
    elif _CHOSE.search(s) and (alternatives(s) or _FROM_OLD.search(s)) and not (rule or corrected):
        category, importance = "decision", 4  # "我们最后选了 ClickHouse，没用 Druid", "picked X over Y"
        why.append("a choice that names what it passed over")
    elif rule and (USES.search(s) or _USES_ZH.search(s)) and _over_another(s) and not corrected:
        category, importance = (
            "decision",
            4,
        )  # "通知以后用飞书机器人发，不发邮件了", "data quality 以后用 GE，不用 dbt tests 了"
        why.append("a rule that takes one thing over another")
    elif _MIGRATION.search(s) or _REPLACED.search(s):
        category, importance = "change", 4
        why.append("a move from one thing to another")
    elif pref:
        category, importance = "preference", 4
        why.append(f"preference ({pref.group(0).strip()})")
    elif _ADOPTS.search(s) and not _episode(s):  # "we're also adopting sqlc for new queries in billing-service"
        category, importance = "rule", 4
        why.append("a tool adopted")
    elif rule:
        category, importance = "rule", 4
        why.append(f"rule ({rule.group(0).strip()})")
    else:
        fact = None if _episode(s) else next(((cat, rx) for cat, rx in _FACTS if rx.search(s)), None)
        if fact is None and not _episode(s) and (oncall_of(s) or owner_of(s)):
            fact = ("ownership", None)  # "值班是阿杰", "报表导出归老张管": who, though nothing else is named
        if fact:
            category, importance = fact[0], 3
            why.append(f"project fact: {fact[0]}")
        elif corrected or remember or lesson:
            category, importance = "note", 3
        elif (_FYI.search(s) or informed) and (len(s.split()) >= 5 or len(s) >= 12):
            category, importance = "note", 3
            why.append("told for information")
        elif replaced_values(s) and (SPECIFIC.search(s) or any(known_tech(v) for v in replaced_values(s))):
            category, importance = "change", 4
            why.append("a value replaced")
        elif is_statement(s):
            category, importance = "statement", 3
            why.append("stated about the project")
        elif _LABELLED_COMMAND.match(s):
            category, importance = "command", 3
            why.append("a step and its command")  # "Deploy: `argocd app sync relay-stg`" (a runbook's step)
        else:
            return None
    if corrected:
        if category in ("rule", "note", "config", "command", "change"):
            category = "correction"
        importance = max(importance, 4)
        why.insert(0, "correction")
    if remember:
        importance = max(importance + 1, 4)
        why.insert(0, "asked to remember")
    if lesson and category not in ("decision", "correction"):
        category, importance = "lesson", max(importance, 4)
        why.insert(0, "a lesson, said to be one")
    return s, category, "; ".join(why), min(5, importance)


# What says the words after it are a lesson: "lesson for next time:", "lessons learned:", "教训：", "takeaway:".
_LESSON_LEAD = re.compile(
    r"^\W*(?:(?:the|a|one|my|our)\s+)?(?:lessons?(?: (?:learned|learnt))?(?: (?:for|to) (?:next time|the future|me|us|everyone|"
    r"remember))?|take-?aways?|note to self|(?:经验)?教训(?:是)?|下次(?:注意|记得))\s*[:：—-]\s*(?=\S)|"
    r"^\W*(?:这次|这回|这个|这也)?(?:算是?|就当)(?:个|一个|是个)?(?:经验)?教训(?:吧|了)?\s*[，,:：—]\s*(?=\S)",  # "这次算是个教训，…"
    re.I,
)


# -- decisions across sentences and turns ------------------------------------------------------

# One of the options laid out, picked by its place: "选第一个", "方案二吧", "option 2", "the second one".
ORDINAL_PICK = (
    r"^(?:那|那就|就|行，?就?|好，?就?|肯定|当然|还是)?\s*第[一二三四1-4](?:种|个|条|项|套)(?:吧|方案|方法|做法|方向)?\s*(?:[。.!！，,]|$)|还是继续|"
    r"^(?:the )?(?:first|second|third|last) one\b(?!\s*[:：])|"
    r"选第[一二三四1-4]个|按\s*(?:方案\s*)?[A-Da-d一二三四1-4]\s*(?:来|走|做|办)|(?:^|[，,\s])第[一二三四1-4]个(?:吧|方案|就行|好了)|(?:用|选|走|就)方案\s*[一二三四1-4A-Da-d](?![\w])|"
    r"方案\s*[一二三四1-4A-Da-d]\s*(?:吧|就行|好了)|"
    r"\boption\s*(?:#?[1-4a-d]|one|two|three)\b|\bthe (?:first|second|third|last|latter|former) (?:one|option|approach)\b|"
    r"\b(?:go with|take|pick|do) (?:the )?(?:first|second|third|last|latter|former|#\d)\b"
)
# Turning an option down before it is offered: "I'd rather not adopt cargo-dist", "let's not add Redis just for
# this", "不想为这个引入 Kafka", "先不上 K8s": a decision to keep what there is, over the option named.
REJECT = (
    r"\b(?:I'?d rather not|let'?s not|we (?:won'?t|will not|don'?t want to|shouldn'?t)|no need to)\s+(?:use|adopt|add|"
    r"introduce|pull in|bring in|run|go with|switch to|move to)\s+(?:a |an |the )?`?(?=[A-Za-z])|"
    r"(?:不想|不打算|暂时不|先不)(?:为这个|为了这个)?(?:引入|上|用|加|换成?|迁到)\s*`?(?=[A-Za-z\u4e00-\u9fff])"
)
REJECTS = re.compile(REJECT, re.I)
# An order that settles a value over another: "Start Android at 5%, not 1%." (not "It's a config bug, not a
# code bug", nor "Put the key in Vault, not in the yml", a rule of where things live)
_OVER_VALUE = r"^(?:start|use|keep|set|run|make|pick|take)\b[^,;?]{2,60},\s*not\s+[^,;?]{1,30}[.!]?$"
# A switch said by the team, up to what it moves: "we're switching SMS", "we moved the cache" (then "to <a name>").
_SWITCH_VERB = r"\bwe(?:'re| are| have|'ve)? (?:switch(?:ing|ed)|migrat(?:ing|ed)|mov(?:ing|ed)) (?:(?:the|our|all) )?"
_SWITCHED = r"[a-z][\w.+-]*(?: [a-z][\w.+-]*){0,2}"
_SWITCHES = _SWITCH_VERB + "(?:" + _SWITCHED + ")"
# An option said to have been passed over: "… we passed over", "… we didn't pick".
_PASSED_OVER = r"we\s+(?:passed over|skipped|rejected|turned down|did ?n[o']t (?:pick|take|choose))\b"
# The user settles something: "merge it is", "let's go with zustand", "定了：…", "就用 antd 的 virtual 吧".
CHOICE = re.compile(
    r"\b(?:let'?s (?:just )?(?:go with|use|do|stick with|keep|stay with)|go(?:ing)? with|we'?ll (?:go with|use)|"
    r"let'?s (?:move|split|pull|put|make)\b(?!\s+(?:on|ahead|forward|along|sure)\b)|"
    r"(?<![\w.+-])(?!(?:here|there|if|when|what|as|so|now|how)\b)[\w.+-]+(?: [\w.+-]+)? it is(?=\s*(?:[.!,;:]|$))|settled on|(?:we )?decided|switch(?:ing)? to|stick(?:ing)? with|"
    r"make it \d+|stay(?:ing)? (?:on|with)|^drop (?:it|that|this)|^(?:pick|take) (?:it|that|option \d)|"
    r"we(?:'re| are) (?:dropping|ditching|retiring|moving off|moving away from)|we(?:'ll| will) keep|"
    # "So we're switching SMS to MessageBird.": what moves, then to what (a name)
    + _SWITCHES
    + r" (?:to|onto|over to) (?=`?(?-i:[A-Z0-9]))|"
    # "we're replacing Textract with Document AI": the team's switch, to a name
    r"we(?:'re| are|'ve| have|'ll| will)? replac(?:e|ing|ed) [^,.;]{1,40}? with (?=`?(?-i:[A-Z0-9]))|"
    r"(?:we'?re|we are|let'?s) (?:doing|do) it)\b|现在可以(?:搞|上|做|开始)了|可以(?:开)?搞了|"
    # an order that settles a value over another: "Start Android at 5%, not 1%."
    r"(?:" + _OVER_VALUE + r")|"
    # an order that settles what was just discussed: "cap our side then", "bump MSRV to 1.80 then, …"
    r"^[a-z]+\b(?:[^,.?;]|\.(?=\d)){2,60}\bthen\b(?=\s*[,.!;]|\s*$)|"
    r"就这么(?:定|办|做)|"
    + _SETTLED
    + r"|那就|就用|改用|决定(?!是否|要不要|怎么|如何)|用\s*[^\s，。,]{1,30}(?:\s[A-Za-z][^\s，。,]{0,20}){0,3}\s*的?吧|不考虑|不搞|暂时留在|还是(?:用|保留|走|留着)|"
    r"^(?:那|那就|就|先|还是)\s*[^，。,？?]{2,30}吧|[^，。,？?]{2,30}就(?:行|好|够了)(?:[。.!！]|$)|"
    r"^(?:就|用)\s*[A-Za-z0-9`]|^(?:直接|那就)\s*(?:换成?|上|用)\s*`?[A-Za-z0-9]|"
    + r"(?:"
    + ORDINAL_PICK
    + r")|(?:"
    + REJECT
    + r")",
    re.I,
)
# A bare agreement: a decision when it answers a proposal.
AGREE = re.compile(
    r"^\W*(?:yes|yep|yeah|ok(?:ay)?|sure|agreed|agree|sounds good|let'?s do (?:that|it)|do it|go ahead|"
    r"makes sense|fine|works for me|sounds (?:right|great|fine|reasonable|like a plan)|go for it|that works|"
    r"(?:that|this)(?:'s| is) (?:fine|good|the plan)|lgtm|ship it|yes,? please|perfect|fair enough|let'?s do this|"
    r"do that|please do|good idea|great idea|nice idea|好的?|行|可以|同意|没问题|就这么办|就这么定|按你说的|就按你说的|对)\b",
    re.I,
)
AGREE_ZH = re.compile(
    r"^(?:好的?|行|可以|同意|赞同|赞成|支持|没问题|没意见|就这么办|就这么定|就这么搞|就这样|按你说的|就按你说的|按这个来|照这个来|"
    r"照你说的|听你的|好主意|对)(?:来|办|做|改)?(?:[，,。.！!\s]|吧|$)|"
    r"^(?:赞成|同意|支持)用"  # "赞成用 miette。": agreeing to use what was proposed
)
# The assistant pushing back on what the user proposed: "I'd hold off on that.", "不太建议。", "Not yet: …".
PUSHES_BACK = re.compile(
    r"^\W*(?:honestly,?\s*|hmm,?\s*)?(?:I'?d (?:hold off|advise against|avoid|not|rather not|push back|be careful|"
    r"keep|stay|stick)|I (?:wouldn'?t|would not|don'?t think (?:we|that|it|this)|disagree|advise against|'?m not (?:sure|"
    r"convinced) (?:that|it|we)|don'?t recommend)|not yet\b|probably not\b|no,|not worth it|"
    r"(?:我)?(?:不太|并不|不)(?:建议|推荐|赞成|同意)|先别|没必要|我(?:倾向于|建议)(?:先)?(?:不|别|保留|维持)|(?:建议|还是)(?:先)?(?:保留|维持|别)|"
    # "我的看法是现在换不划算：…", "I don't think it's worth it"
    r"(?:我的看法是|我觉得|个人觉得)[，,\s]*(?:现在|目前|暂时)?(?:换|改|迁|上)?(?:不划算|不值得|没必要|不太值)|I don'?t think it'?s worth)",
    re.I,
)
# The user letting their proposal go after a push back: "ok fair, let's keep it then.", "好吧，那就先不换。"
CONCEDES = re.compile(
    r"^\W*(?:(?:oh|哦|噢|行|好)[，,\s]*)?(?:ok(?:ay)?|fair(?: enough| point)?|good point|makes sense|right|true|agreed|sure|fine|"
    r"never ?mind|forget (?:it|that|the)|let'?s (?:keep|leave|drop|skip|stay)|drop it|keep it|好吧|行吧|好的?|那算了|算了|有道理|"
    r"也是|说得对|那就先不|先不|那就不|那就(?:保留|维持|还是)|那还是|那?不换了|那?不改了|这样(?:啊|呀)?[，,\s]*(?:那)?(?:算了|先不|就不))",
    re.I,
)
# What a concession opens with before saying what stays: "ok 有道理，那算了，", "哦这样，那算了，", "fair, ".
CONCESSION_LEAD = re.compile(
    r"^(?:\W*(?:oh|哦|噢|ok(?:ay)?|fair(?: enough)?|good point|makes sense|好吧|行吧|行|有道理|这样(?:啊|呀)?|那算了|算了|也是|那?不换了|那?不改了)[，,.!！。\s]*)+",
    re.I,
)


def pushes_back(s: str) -> bool:
    return bool(PUSHES_BACK.search(strip_fillers(s) or s))


# "I'd store the files in S3 …": what the speaker would do is what they propose (not "I'd say", "I'd need to check").
_WOULD = (
    # ("I'd", or "Id" typed without the apostrophe; never the word "id": "add the widget id to the Matchfile")
    r"(?:\bI['’]d|\b(?-i:Id))\s+(?!(?:say|guess|think|imagine|expect|assume|need|have|be|love|like|hate|check|look|rather not|"
    r"probably|also|first|still|not|"
    # an edit offered on the work at hand ("I'd update step 4") is a task, not a choice
    r"update|fix|edit|reword|rephrase|tweak|patch|document|note|mention|clarify)\b)[a-z]+\b"
)
_SUGGEST = (
    r"\bwe (?:could|might)\b|\b(?:maybe|perhaps) (?:we|you) (?:should|could|can)\b|\bhow about\b|\bwhat about (?:using|switching|"
    r"moving|adding)\b|\bwhat if we\b|\bone (?:option|idea|way) (?:is|would be|could be)\b|\bwhy (?:not|don'?t we) (?:use|switch|move|"
    r"add|try)\b|\bcould (?:also )?(?:use|switch|move|add|try)\b|"
    r"(?<!判断)(?<!决定)(?<!看)(?<!确定)(?<!知道)(?<!问)要不要|可以考虑|考虑一下|不妨|或许可以|也许可以|是不是可以|要不(?:我们|咱们)?(?:直接|就)?(?:用|换|改|试|上|把|去掉|删|关|调|加)|我(?:比较|更)?倾向|\bI(?:'d| would)? lean (?:towards?|to)\b"
)
# The assistant proposes: "I'd suggest X instead of Y because Z", "我建议 X".
PROPOSAL = re.compile(
    r"^(?:options|ways out|two options|choices|alternatives)\b|^option\s*(?:[A-Da-d1-4]|one|two)\s*[:：.)]|方案\s*[一二三AB1-3]\s*[:：]|[几两三](?:个|种|条)(?:方向|选项|选择|办法|方案|思路|做法|走法|改法|修法|解法|路子|路线|方式)|候选|替代方案|"
    r"\b(?:two|three|a few|several|couple of) (?:options|ways|approaches|choices)\b|\bwe could either\b|\beither\b.{3,60}\bor\b|要么[^。？?]{2,80}?要么|"
    r"\bI(?:'?d| would) (?:suggest|recommend|go with|do|use|drop|pick|keep|switch|move|call|add|rather(?! not))\b|"
    + _WOULD
    + "|"
    r"\bI (?:suggest|recommend|propose|lean)\b|\bI'?d lean\b|\bmy (?:suggestion|recommendation)\b|^use \d|"
    r"^(?:let'?s(?: just)?|we (?:could|should|can)) (?:use|switch to|move to|go with|try)\b|^how about\b|"
    r"建议|推荐|我倾向|倾向于|^(?:方案|办法)[:：]|分(?:两|三|几)种|" + _SUGGEST,
    re.I,
)
# An option put forward without taking it: "we could use Redis for this", "maybe we should switch to Kafka",
# "要不要用 Kafka", "可以考虑换成 X". Until someone agrees it is neither a decision nor what happened.
SUGGESTS = re.compile(_SUGGEST, re.I)
# One option put forward, by anyone: the floated ones and "I'd suggest X", "我建议 X" (not a list of options, nor
# "either … or", which an explanation says too).
PROPOSES = re.compile(
    r"\bI(?:'?d| would) (?:suggest|recommend|go with|use|pick|drop|keep|switch|move|add|rather|lean)\b|\bI (?:suggest|recommend|propose|lean)\b|"
    r"\b(?:we|you) (?:can|could) either\b|"
    + _WOULD
    + r"|\bmy (?:suggestion|recommendation)\b|(?<!官方)(?<!文档)建议|我倾向|倾向于|"
    + _SUGGEST,
    re.I,
)


def suggests(s: str) -> bool:
    """An option floated, not taken (see SUGGESTS)."""
    return bool(SUGGESTS.search(s))


_ALTERNATIVE = re.compile(
    r"(?:" + REJECT + r")([A-Za-z][\w.+/-]*|[\u4e00-\u9fff]{2,8}?(?=[，。,.\s]|$))|"
    r"\b(?:instead of|rather than|over|not|no more|drop(?:ping)?|off|beats)\s+(?:(?:adding|using|introducing|running|"
    r"keeping|bringing in|pulling in|going with|switching to|moving to)\s+(?:a |an |the )?)?`?([A-Za-z][\w.+/-]*)|"
    r"\b(?:switch\w*|mov\w*|migrat\w*)\b[^,.;]{0,30}?\bfrom\s+`?([A-Za-z][\w.+/-]*)`?\s+to\b|"
    r"\breplac(?:e|ing|ed)\s+`?((?-i:[A-Z])[\w.+/-]*)`?\s+with\b|"  # "replacing Textract with …"
    r"(?:不用|不加|不引入|不迁|不搞|而不是|别再用|不再用|别装|别自己包|不要用|不复用|没用|没选|没有用|不(?:再)?发|不(?:再)?走)\s*(?:继续|再)?(?:用|使用|走)?\s*"
    r"`?([A-Za-z\u4e00-\u9fff][\w.+/-]{0,20})|"
    r"(?<![\w.+/-])`?([A-Za-z][\w.+/-]*(?: [A-Z][\w.+/-]*)?)`?\s*(?:不考虑|不要|不上)(?=[，,。.；;]|$)|"  # ("ES 不要，没人运维", "Open Match 不上。")
    # a named thing swapped out: "把 Kafka 换成 Pulsar", "yaml-rust2 上周被阿杰换成 saphyr 了"
    r"(?<![\w.+/-])`?([A-Za-z][\w.+/-]*)`?\s*(?:(?:上周|昨天|已经|之前|刚)\s*)?(?:被[^\s，。,]{1,6}?)?\s*(?:换成|替换成|替换为|换到|切到)",
    re.I,
)


# Once options are on the table, an order or a conclusion that takes one: "take their usage, drop tiktoken",
# "So we integrate the vendors directly", "keep psycopg2" (heuristic._decision reads it only after a proposal).
TAKES = re.compile(
    r"^(?:so,?\s+|then,?\s+)?we(?:'ll| will)?\s+(?!(?:need|have|should|can|could|might|must|did|were|was|are|had|think|"
    r"know|want|get|just|also|still|don'?t|do not)\b)[a-z]+\b|^(?:take|use|keep|pick|drop|ditch|adopt)\s+(?:the\s+|their\s+|"
    r"our\s+|its\s+)?`?[\w.+/-]{3,}",
    re.I,
)
# A choice that stands on its own, without a proposal or a reason in sight ("go with manifest").
STRONG_CHOICE = re.compile(
    r"\b(?:let'?s (?:just )?go with|go with|(?:we'?re|we are|i'?m) going with|we'?ll go with|[\w.+-]+ it is|"
    r"settled on|we decided|decided to)\b|"
    + _SETTLED
    + r"|就用|先用\S{2,40}?吧|决定(?!是否|要不要|怎么|如何)|拍板|还是继续|"
    r"^(?:drop|pick|take) (?:it|that|this|option \d)\b|" + _OVER_VALUE,
    re.I,
)
# A verbless pick: "pnpm then.", "Vite over webpack.", "httpx, not requests." (the named option must be
# something specific or an option just talked about: heuristic._decision checks).
SHORT_PICK = re.compile(
    r"^`?([A-Za-z][\w.+/-]*(?:\s+[A-Za-z][\w.+/-]*){0,2})`?\s*(?:,\s*)?(?:then|over(?!\s+to\b)|instead of|rather than|not)\b"
    r"(?:\s+`?[A-Za-z][\w.+/-]*`?(?:\s+[\w.+/-]+){0,2})?(?:\s+then)?\s*[.!。！]?$",
    re.I,
)
# A reason said as what the team lacks or does not want: "We don't want another stateful service to
# operate.", "我们不想再多维护一个集群" (after a choice it explains it; it orders nothing).
WANT_REASON = re.compile(
    r"(?:^|[,;]\s*|\b(?:and|but|so)\s+)(?:we|i|they|it|the team|ops)\s+(?:don'?t|do not|doesn'?t|does not)\s+(?:want|need|like|have|support|scale)\b|"
    r"(?:^|[，,；;]\s*)(?:我们|大家|团队|运维)?(?:不想|不需要|不希望|没必要|没人|不会)",
    re.I,
)
# What makes a sentence a reason against an option it names: "Redux 的模板代码太多了", "Jest was too slow with ESM".
AGAINST = re.compile(
    r"\btoo\s+\w+|\boverkill\b|\bheavy(?:weight)?\b|\bbloated\b|\bpainful\b|\bclunky\b|\bboilerplate\b|"
    r"\b(?:slow|slower|flaky|worse|fragile)\b|太[\u4e00-\u9fff]|麻烦|不好用|不稳定|模板代码|维护成本|坑多|太重|很重|偏重|"
    r"不如|性能差|更差|很慢|太慢",
    re.I,
)
# A statement of what a part of the project uses: "前端状态管理用 Zustand", "We use Vitest for the unit tests".
USES = re.compile(
    r"(?:^|[\u4e00-\u9fff\s])(?:用|使用|采用|选)\s*`?([A-Za-z][\w.+/-]*)|\b(?:we(?:'ll| will)? use|uses|we(?:'re| are) "
    r"(?:also |now )?(?:using|adopting|moving to)|we(?:'ve| have)? (?:also )?adopted)\s+`?([A-Za-z][\w.+/-]*)",
    re.I,
)


_USES_ZH = re.compile(r"(?<![不别没])用\s*[\u4e00-\u9fff]{2}")


def _over_another(s: str) -> bool:
    """Whether `s` names something passed over that is not what it uses: "不要用 ingest 的写账号做排查查询"
    names ingest only as what not to use (a rule), "通知以后用飞书机器人发，不发邮件了" takes one over another."""
    over = {a.casefold() for a in alternatives(s)}
    return bool(over) and (chosen_of(s) or "").casefold() not in over


def is_choice(s: str) -> bool:
    return bool(CHOICE.search(s)) and not is_question(s)


def agrees(s: str) -> bool:
    return any(AGREE.match(x) or AGREE_ZH.match(x.strip()) for x in (s, strip_fillers(s)))  # "嗯，可以"


def spoken_against(text: str) -> list[str]:
    """The names a statement speaks against, clause by clause ("Glicko-2 算起来太麻烦，…，我们决定回到 Elo" ->
    Glicko-2): what a decision that says so passes over."""
    out = []
    for clause in re.split(r"[，,；;。.!?！？]\s*", text):
        if AGAINST.search(clause):
            out += [n for n in re.findall(r"(?<![\w.-])[A-Za-z][\w.+-]{1,30}", clause) if not is_stopword(n.casefold())]
    return list(dict.fromkeys(out))


def alternatives(text: str, chosen: str | None = None) -> list[str]:
    """What was passed over, as named in a decision ("instead of celery", "不用 Redis")."""
    out = []
    for m in _ALTERNATIVE.finditer(text):
        name = re.sub(r"(?<=[\u4e00-\u9fff])了$", "", next((g for g in m.groups() if g), "").strip("`.,，。"))
        low = name.lower()
        if m.group(1) and not (known_tech(name) or re.search(r"[A-Z0-9._/-]|[\u4e00-\u9fff]", name)):
            continue  # "let's not run the migrations": turned down is something named, not a step
        if len(name) < 2 or low in (
            "the",
            "a",
            "an",
            "that",
            "this",
            "it",
            "just",
            "only",
            "sure",
            "yet",
            "on",
            "in",
            "at",
            "to",
            "by",
        ):
            continue
        if chosen and low == chosen.lower():
            continue
        out.append(name)
    return list(dict.fromkeys(out))[:4]


_CHOSEN = re.compile(
    r"\b(?:go(?:ing)? with|let'?s (?:just )?use|we'?ll use|decided to (?:use|go with)|switch(?:ing)? to|stick(?:ing)? with|"
    r"stay(?:ing)? (?:on|with))"
    r"\s+(?:the\s+|a\s+|an\s+)?`?([\w.+/-]+)|(?:^|[.;,:]\s+)(?:take|use|keep|pick|adopt)\s+(?:the\s+)?`?([\w.+/-]{3,})|"
    r"([\w.+/-]+)`?\s+it is\s*(?:[.!,;]|$)|(?:就用|改用|换成|改成|切到|迁到|直接换|直接上|(?<![不别停弃没])(?<!不再)(?<!别再)用|定了[:：]?)\s*`?([A-Za-z][\w.+/-]*)|"
    r"(?:那就|就|还是|^先|^上)\s*`?([A-Za-z][\w.+/-]*)`?\s*吧|"
    # a product named in Chinese, switched to: "领导拍板改用腾讯云短信，…"
    r"(?:改用|换成|切到|迁到)\s*([\u4e00-\u9fff]{2,8}?)(?=[，。,.；;（(\s]|$)|"
    + _SWITCHES
    + r" (?:to|onto|over to) `?((?-i:[A-Z0-9])[\w.+/-]*)|"
    # an option taken up again: "let's do the CronJob we passed over after all"
    r"\bthe\s+`?([\w.+/-]+)`?\s+" + _PASSED_OVER + r"|"
    # "we're replacing Textract with Document AI": the name it is replaced with (two words at most)
    r"\breplac(?:e|ing|ed) [^,.;]{1,40}? with `?((?-i:[A-Z0-9])[\w.+/-]*(?: (?-i:[A-Z])[\w.+/-]*)?)",
    re.I,
)


# What a switch moves, and to what: "we're moving transactional email to Postmark", "we switched the cache over to
# Valkey" (what: "transactional email", to: Postmark).
MOVED = re.compile(
    _SWITCH_VERB + "(?P<what>" + _SWITCHED + r") (?:to|onto|over to) `?(?P<to>(?-i:[A-Z0-9])[\w.+/-]*)",
    re.I,
)
# An option said to be one passed over before: "let's do the CronJob we passed over after all", "按当时没选的 2 来".
# (or went back to: "b) go back to JPEG everywhere", "改回 JPEG")
TAKEN_UP = re.compile(
    r"\b" + _PASSED_OVER + r"|(?:当时|之前|上次)没选的|\bgo(?:ing)? back to\b|\bback to\b|改回|换回|回到", re.I
)


def chosen_of(text: str) -> str | None:
    m = _CHOSEN.search(text)
    name = next((g for g in m.groups() if g), "").strip(".,;:") if m else ""
    return name or None


_PROPOSED = re.compile(
    r"\b(?:suggest|recommend|propose|lean(?:ing)? (?:towards?|to)|I'?d (?:use|pick|go with|choose))\s+(?:using\s+|we use\s+|the\s+|"
    r"(?:switching|moving|migrating)\s+(?:[\w\s]{0,30}?\bfrom\s+`?[\w.+/-]+`?\s+)?to\s+)?`?([\w.+/-]+)`?"
    r"|(?<!不)建议(?:用|采用|使用)?\s*`?([A-Za-z0-9][\w.+/-]*)`?",
    re.I,
)
VAGUE_CHOICES = {"that", "this", "it", "them", "those", "these", "one", "这个", "那个", "它"} | {
    "first",
    "second",
    "third",
    "fourth",
    "last",
    "former",
    "latter",  # "go with the first": a place, no name
}


def proposed_of(text: str) -> str | None:
    """The option a proposal puts forward ("I'd suggest procrastinate instead of celery")."""
    name = chosen_of(text)
    if name and name.casefold() not in VAGUE_CHOICES:
        return name
    m = _PROPOSED.search(text)
    name = next((g for g in m.groups() if g), "").strip(".,;:") if m else ""
    return name if name and name.casefold() not in VAGUE_CHOICES else None


_CONTINUES = re.compile(
    r"^(?:it|that|this|which|otherwise|so|we had|last (?:time|month|week|year|quarter)|use |"
    r"instead|否则|不然|因为|这样|之前|上次)\b|^(?:否则|不然|因为|这样|之前|上次)",
    re.I,
)


def continues(s: str) -> bool:
    """A sentence that elaborates the one before (a reason, a consequence, a how)."""
    s = strip_fillers(s)
    if is_question(s) or (_REQUEST.match(s) and not s.lower().startswith("use ")) or len(s) < 8:
        return False
    return bool(RATIONALE.search(s) or _CONTINUES.match(s))


def starts_with_pronoun(s: str) -> bool:
    """A sentence that needs the one before to be understood: it starts with a pronoun, or is a
    short order about "it" ("Don't upgrade it.")."""
    if re.match(r"^(?:it|this|that|they|these|those)\b|^(?:它|这个|那个)", s, re.I):
        return True
    return len(s.split()) <= 5 and bool(
        re.search(r"\b(?:it|that|this|them)[\s.!。！]*$|(?:它|这个|那个)[\s。！!]*$", s, re.I)
    )


# -- assistant sentences -----------------------------------------------------------------------

_NARRATION = re.compile(
    r"^(?:found it|found the (?:bug|problem|issue|cause)|found\b|reproduced|yes|yep|right|correct|"
    r"I can'?t (?:fix|do|test|run|reach|check) (?:that|this|it) from here|"
    r"I can'?t (?:set|create|schedule|send|keep|remember)\b[^.]{0,40}, but I'?ll\b|我(?:没法|不能|无法)(?:设置?|定)(?:提醒|闹钟)|"
    r"找到了|复现了|对|是的|let me|let's|i'll|i will|i'm going to|i am going to|i've|i have|now i|now let|next,? i|first,? i|"
    r"running|done\b|sure|got it|understood|noted|makes sense|thanks|thank you|agreed|will do|good|great|"
    r"you're welcome|ok|okay|here's|here is|all set|perfect|pushed|formatted|it builds|"
    r"looking (?:at|into)|checking|reading|digging into|taking a look|investigating|我看看|看一下|先看看|"
    # what it is doing now: "Updating the config for both pushgate and pushgate-dlq."
    r"(?:updating|adding|changing|removing|fixing|writing|moving|renaming|switching|wiring|ripping out|"
    r"replacing|bumping|deleting|creating|applying)\s+(?:the|a|an|both|all|our|your|it|them|that|this)\b"
    r"(?!.*\b(?:to|fix|fixe[sd]|solved?|solves|works?|worked|because|so that|was|is)\b)|"  # ("Switching it to X": a fix)
    r"好的|明白|了解|收到|已经|已把|已将|我先|我会|我用|我来|我已|没问题|"
    # what it just did, said without a subject: "Switched the export to a cursor", "改好了，TTL 现在…"
    r"switched|changed|moved|updated|added|removed|rewrote|renamed|replaced|created|deleted|bumped|refactored|"
    r"implemented|migrated|committed|merged|wrote|改好了|改了|加了|删了|提交了|已提交|合上了|已推送|已合并|已部署|已发布|"
    # what is left to do: "还需要给 seat 表加一个 `lock_token` 列，我来加 Flyway migration。"
    r"还(?:需要|要|得)(?:给|把|在|再))",
    re.I,
)
_CAUSE = re.compile(
    # (", so it outgrows 170Mi and gets OOMKilled": a consequence told as one, with what failed)
    r",\s+so (?:it|they|the [\w-]+|that) (?:\w+ ){0,4}(?:gets?|got|is|was|were|are|can'?t|won'?t|never)\b|"
    r"\b(?:because|caused by|due to|root cause|turned out|came from|comes from|stems from|"
    r"is caused by|the (?:issue|problem|bug|culprit|"
    r"reason) (?:was|is))\b|因为|原因是|由于|问题出在|导致",
    re.I,
)
_FAIL = re.compile(
    r"\b(?:fail(?:ed|ing|ure|s)?|errors?|broke|broken|crash(?:ed|es)?|flaky|mismatch(?:ed)?|exception|"
    r"timeout|timed out|couldn't|could not|can't|cannot|refused|denied|missing|wrong|bug|leak|hangs?|"
    r"stale|slow(?:down|er)?|regression|oom\w*|over budget|reject(?:ed|s)?|mismatch|flap(?:s|ped|ping)?|drift(?:s|ed|ing)?|"
    r"stuck)\b|失败|报错|错误|异常|爆了|不够|挂了(?!\s*个?\s*[A-Za-z])|超时|崩|跑不过|"
    r"不一致|缺少|少了|缺了|漏了|拒|变慢|太慢",
    re.I,
)
_FIX = re.compile(
    r"\b(?:fix(?:ed|es)?|switch(?:ed)?|chang(?:ed|ing)|replac(?:ed|ing)|add(?:ed|ing)|regenerat(?:ed|ing)|"
    r"collect|resolv(?:ed|es)|works? now|clears? it|pinn(?:ed|ing)|upgrad(?:ed|ing)|downgrad(?:ed|ing)|"
    r"install(?:ed|ing)|running it with|instead|enabl(?:e|ed|ing)|disabl(?:e|ed|ing)|brought \w+ down|"
    r"makes? (?:all )?(?:\d+ )?(?:the )?(?:tests? )?pass|moving|(?:works?|passes|verify|verifies|succeeds?|runs?) "
    r"again)\b|改成|改为|加上|补上|换成|之后|解决|修复|就好了|就行了?(?=[：:。，,]|$)|(?:加|带上)\s*`|通过了|"
    r"跑起来了|开启|关闭|\brun `[^`]+` (?:before|after|first)\b|先(?:跑|执行)\s*`",
    re.I,
)
_FIX_LEAD = re.compile(
    r"\b(?:fixed it|fixes (?:it|the)|fixed the|solved|resolved|works now|clears? it|adding|running it|"
    r"switching|changing|replacing|regenerat\w*|pinning|upgrading|installing|moving|enabling|"
    r"disabling|removing|setting)\b|改成|加上|之后|就好了|"
    r"解决|修复",
    re.I,
)
_GOTCHA = re.compile(
    r"\b(?:gotcha|heads[- ]up|watch out|be careful|caveat|pitfall|beware|silently|otherwise|must be|has to be|"
    r"any other|keeps retrying|only works|only when|only if|note (?:for later|that)|for later|worth knowing|"
    r"is relative to)\b|\bnote:|注意|坑|静默|会跳过|否则|不然|必须是|要求|相对于|以后记得|"
    # what a request made that way gets back: "a bare curl gets a 401", "裸 curl 会 401"
    r"\b(?:curl|wget|call(?:ing|s)?|requests?|hitting)\b[^.;]{0,60}?\b(?:(?:will|would|you'?ll) "
    r"(?:get|return|fail with)|gets|returns) an? [45]\d\d\b|"
    r"(?:curl|wget|调用?|请求|访问)[^。；;]{0,20}?会(?:返回|报)?\s*[45]\d\d\b",
    re.I,
)
_OTHERWISE = re.compile(
    r"否则|不然的话|\botherwise\b|\bor else\b|\bunless (?:you|we|it'?s|the) (?:pass|set|add|use|call|enable|turn)", re.I
)
_NAMED_IN_CODE = re.compile(r"\b[A-Z][A-Z_]{2,}\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b|\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b")
_A_FACTS: list[tuple[str, re.Pattern]] = [
    ("config", re.compile(r"\b(?:serves?|listens?|runs?) on (?:port )?:?\d{2,5}\b|\bon port \d{2,5}\b", re.I)),
    (
        "command",
        re.compile(
            r"\b(?:tests?|suite|specs?)\b[^`]{0,30}\b(?:pass(?:es)?|run|runs)\b[^`]{0,20}\b(?:with|via|"
            r"using)\s+`",
            re.I,
        ),
    ),
    (
        "convention",
        re.compile(
            r"\b(?:are|is) (?:grouped|organi[sz]ed|kept|stored|located) (?:by|under|in)\b|\blives? "
            r"(?:under|in) `",
            re.I,
        ),
    ),
    ("config", re.compile(r"\b(?:this|the) (?:repo|project|codebase) (?:pins|requires|targets)\b", re.I)),
]


# The user reports something broken: the assistant's next explanation is what went wrong and why.
_PROBLEM = re.compile(
    r"\b(?:is|are|was|got|keeps?|started) (?:broken|failing|down|timing out|rejected|getting rejected|logging)\b|"
    r"\b(?:broke|fails|failed|crash(?:es|ed)?|timeouts?|dupes|duplicates?|dead-letter(?:ed|ing)?)\b|\bshowing stale\b|"
    r"\b(?:doesn'?t|does not|isn'?t|is not|stopped) work(?:ing)?\b|"
    + _HAS_PROBLEM
    + r"|不对劲|不工作|没反应|没生效|出事|报错|失败|挂了(?!\s*个?\s*[A-Za-z])|卡顿|很卡|巨卡|变方块|"
    r"不生效|丢了|掉到|超时|(?:一直|又|在)(?:告警|报警)|(?:告警|报警)了|方块|乱码|又断了|断开了|(?:两天|一直|都)没进|收不到|401|403|500|502|504|起不来|打满|一直在?\s*restart|"
    r"\bnever (?:become|becomes|became|get|gets|come|comes) (?:ready|up|healthy)\b|\bstays? pending\b|\bstuck\b|"
    r"\bkeeps? (?:flapping|restarting|crashing)\b",
    re.I,
)


def reports_problem(text: str) -> bool:
    """Whether the text says something is wrong now; not a case a rule is for ("if a drop is broken nobody's
    around till Monday", "万一超时就重试")."""
    return any(not _SUPPOSED.search(text[max(0, m.start() - 40) : m.start()]) for m in _PROBLEM.finditer(text))


_SUPPOSED = re.compile(
    r"\b(?:if|when|whenever|in case|unless)\b[^.,;!?，。；]*$|(?:如果|万一|要是|假如)[^，。；！？]*$", re.I
)


# A progress report ("biz/service 都过了", "All 64 pass", "went from ~45s to under 2s"): how the work
# went today, not why anything failed.
# A test that held the old behaviour, updated with the change: "That spec was asserting the bug (…)", "Only the
# spec that still asserts the old 45s threshold fails": the change's own work, nothing learnt of the project.
_HELD_OLD = (
    r"\b(?:spec|test|case|assertion)s? (?:that )?(?:was |were |is |still )*(?:assert|expect|check)(?:s|ed|ing)? "
    r"(?:the )?(?:bug|old|previous|former)\b|用例(?:里)?(?:还在|还是)?(?:断言|按)旧的"
)
TEST_HELD_OLD = re.compile(_HELD_OLD, re.I)
_STATUS = re.compile(
    r"\b(?:all|both|\d+)\s+(?:\w+\s+)?(?:tests?\s+)?(?:pass(?:ed)?|green)\b|\bwent from\b.{1,30}\bto\b|"
    r"都过了|都通过了|全部通过|全绿|都绿了|"
    # what failed, counted: "One failure in `test_eta…`.", "2 tests failed."
    r"^(?:one|two|three|\d+|a few|some)\s+(?:test\s+)?failures?\s+in\b|^(?:one|two|three|\d+)\s+tests?\s+failed\b|"
    # a credential pasted in the chat, and the advice to rotate it: about this session, not the project
    r"\bnow in (?:this|the) (?:session'?s )?(?:transcript|conversation|chat)\b|"
    r"\b(?:since|now that|as) (?:it|they|the \w+)(?:'s|'re| is| are| has| have)? been (?:pasted|posted|shared) "
    r"(?:here|in (?:this|the) (?:chat|conversation|transcript|session))\b|"
    r"(?:已经?)?出现在(?:对话|聊天)记录里|(?:已经?)?(?:贴|发)在(?:了)?(?:这里|聊天里|对话里)|^\W*my miss\b|"
    + _HELD_OLD
    + r"",
    re.I,
)


def is_status(s: str) -> bool:
    return bool(_STATUS.search(s))


def is_narration(s: str) -> bool:
    return bool(_NARRATION.match(s.strip(" *_")))


_ROOT_CAUSE = re.compile(
    r"^\W*(?:root cause|the cause|cause)\s*(?:found|找到了)?\s*[:：]|根因|根本原因|原因[:：]|问题出在|元凶|罪魁祸首|"
    # "…, and it isn't the real problem: the Dockerfile moved to distroless…", "真正的原因是…"
    # ("the real issue is that nothing decides which Xcode…" opens options to weigh: the proposal's, not a cause)
    r"\b(?:is|was)(?:n'?t| not) the real (?:problem|issue|cause)\s*[:：—-]|真正的原因(?:是|在于)",
    re.I,
)


# "根因找到了：", "Found the root cause:", "原因有两个：": the cause itself is in the lines that follow.
_CAUSE_LEAD = re.compile(r"(?:root cause|the cause|causes?|根因|根本原因|原因)[^:：。.]{0,12}[:：]\s*$", re.I)
SHORT_CAUSE = 40  # a cause sentence this short names the cause; its explanation follows


def names_cause(s: str) -> bool:
    """Whether a sentence says it gives the cause ("Root cause: …", "根因是…", "问题出在…"): what follows explains it."""
    return bool(_ROOT_CAUSE.search(s))


# "找到了。", "Found it.": the explanation of what broke follows
_FOUND = re.compile(
    r"^\W*(?:(?:ok|好)[,，]?\s*)?(?:找到(?:了|原因了|问题了)|问题找到了|原因找到了|found it|found the (?:problem|issue|bug|cause))\W*$",
    re.I,
)


def only_announces(s: str) -> bool:
    """ "找到了。", "Found it.": a lead that says an explanation follows and nothing more."""
    return bool(_FOUND.match(s))


def announces_cause(s: str) -> bool:
    """A heading over the cause ("Root cause:", "找到了。"); not "原因还没找到：" nor "Not sure about the cause yet:"."""
    if only_announces(s):
        return True
    lead = _CAUSE_LEAD.search(s)
    return bool(lead) and not re.search(r"没|不|未|\b(?:not|no|unclear|unknown)\b", s, re.I)


def is_experience(s: str, after_error: bool = False) -> bool:
    if is_question(s):
        return False
    if _ROOT_CAUSE.search(s):
        return True
    if _CAUSE.search(s) and (_FAIL.search(s) or _FIX.search(s)):
        return True
    return after_error and bool(_FAIL.search(s)) and bool(_FIX.search(s))


_ERROR_WORD = re.compile(
    r"error|exception|fail|fatal|not found|no such|denied|refused|panic|timed? ?out|traceback|cannot|can't|"
    r"unable|invalid|missing|does not exist|undefined|conflict|ERR!|错误|失败|异常|超时",
    re.I,
)


def is_error_line(error: str, command: str) -> bool:
    """Whether a failed call's error line says what went wrong (not an npm banner, a progress line
    or the command echoed back)."""
    e = error.strip()
    return bool(e) and not e.startswith(">") and e not in command and bool(_ERROR_WORD.search(e))


def _command_words(cmd: str) -> set[str]:
    return {w for w in re.findall(r"[\w.:/-]+", cmd.lower()) if not w.startswith("-") and len(w) > 1}


def same_command(a: str, b: str) -> bool:
    """Two shell commands that do the same job (`python -m pytest -q` / `uv run pytest -q`)."""
    wa, wb = _command_words(a), _command_words(b)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.34


_LOOKS = re.compile(
    r"^\s*(?:cd \S+\s*&&\s*)?(?:ls|cat|head|tail|less|grep|rg|find|sed -n|awk|wc|echo|pwd|which|type|env|"
    r"git (?:log|status|diff|show|blame|branch)|docker (?:ps|logs|inspect|volume inspect)|kubectl (?:get|describe|"
    r"logs)|curl -s?I|tree|stat|du|df|printenv)\b"
)


def only_looks(cmd: str) -> bool:
    """A shell command that only reads (ls, cat, git log): it cannot have fixed anything."""
    return bool(_LOOKS.match(cmd))


def has_fix(s: str) -> bool:
    return bool(_FIX.search(s))


def is_fix_sentence(s: str) -> bool:
    return bool(_FIX_LEAD.search(s))


def has_content(text: str) -> bool:
    return any(len(s) >= 30 and not is_narration(s) for s in sentences(text))


# The assistant marking what follows as a trap to remember: "A gotcha on the webhook side while I'm here: …",
# "One thing to be aware of: …", "有一点要先说清楚：…".
GOTCHA_LEAD = re.compile(
    r"^[^:：.]{0,40}?\b(?:gotcha|caveat|pitfall|heads[- ]up|thing to (?:be aware of|know|watch out for|keep in mind)|"
    r"worth knowing)\b[^:：.]{0,48}[:：]|^[^:：。]{0,12}?(?:有一点要?(?:先)?说清楚|要注意的是|需要注意|有个坑)[^:：。]{0,10}[:：]",
    re.I,
)
# What a gotcha's next sentence draws from it: "So billing-hooks only marks …", "所以查询侧不能再直接 count()".
CONSEQUENCE = re.compile(r"^(?:so|this means|that means|which means)\b|^(?:所以|因此|也就是说)", re.I)


def classify_assistant_fact(s: str) -> tuple[str, str] | None:
    if is_question(s):
        return None
    lead = GOTCHA_LEAD.match(s)
    if lead and len(s[lead.end() :].strip()) >= 30 and not is_narration(s[lead.end() :].strip()):
        return "gotcha", "assistant: gotcha (said to be one)"
    if not re.search(r"`|\d|/", s):
        # a consequence spelled out with what fails by name: "…之前必须先把重复行清掉，否则 ALTER TABLE 会直接报
        # Duplicate entry 失败"; general advice naming nothing in code is not kept
        if _OTHERWISE.search(s) and _NAMED_IN_CODE.search(s):
            return "gotcha", "assistant: gotcha"
        return None
    if _GOTCHA.search(s):
        return "gotcha", "assistant: gotcha"
    for category, rx in _A_FACTS:
        if rx.search(s):
            return category, f"assistant: project fact ({category})"
    return None


# -- subject and attribute (for supersession) --------------------------------------------------

_SUBJECTS = [
    ("tests", r"\btests?\b|test suite|\bsuite\b|测试|单测|\bpytest\b|vitest|\bjest\b|go test|cargo test"),
    ("lint", r"\blint|clippy|ruff check|eslint"),
    ("format", r"\bformat|ruff format|prettier"),
    ("build", r"\bbuild|构建|编译"),
    ("deploy", r"\bdeploy|部署|发布"),
    ("migrations", r"\bmigrat|迁移|alembic"),
    ("ci", r"\bci\b"),
    ("database", r"\bdatabase|\bdb\b|数据库"),
    ("storybook", r"storybook"),
    ("dev server", r"dev server|开发服务器"),
]
_SERVICE_MOVED_PORT = re.compile(
    r"(?<![\w.-])[A-Za-z][\w.]*-[\w.-]+\s+(?:moved|switched|changed)\s+(?:over\s+)?to\s+(?:port\s+)?:?"
    r"(?!19\d\d\b|20\d\d\b)\d{4,5}\b",
    re.I,
)
_PORT_SUBJECT = re.compile(
    r"(?:the\s+)?([A-Za-z][\w\s-]{1,30}?)\s+(?:listens|serves|runs|is|are|moved|switched|changed)\b.{0,25}?(\d{2,5})|"
    r"([\u4e00-\u9fffA-Za-z]{2,12}?)(?:跑在|运行在|监听在?|在)\s*:?(\d{2,5})|"
    r"((?<![\w.-])[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z0-9_.\s-]{1,30}?)\s*的?\s*端口\s*号?\s*(?:现在)?\s*(?:是|为|改成|改为|换成|调成|"
    r"调整为)?\s*:?(\d{2,5})|"
    # the number before 端口, after a name that may hold a hyphen: "temp-ingest 跑在 8085 端口", "…现在是 9085 端口了"
    r"((?<![\w.-])[A-Za-z][\w.-]{1,40}|[\u4e00-\u9fff]{2,12}?)\s*(?:现在|目前|也)?\s*(?:跑在|运行在|监听在?|在|是|用|"
    r"改成|改为|改到|换成|换到|挪到|迁到)了?\s*:?(\d{2,5})\s*(?:号)?端口|"
    # the port said changed, then what it is: "report-service 的 port 改了哈，现在是 8093"
    r"((?<![\w.-])[A-Za-z][\w.-]{1,40})\s*的\s*(?:port|端口)\s*(?:也)?(?:改了|变了|换了)[^，,。]{0,3}[，,]\s*(?:现在|目前)?"
    r"(?:是|为|改成|改到)\s*:?(\d{2,5})(?!\d)",
    re.I,
)
# A port said with no name before it, after a clause that named the service: "…，端口改成 6432 了", "…, port is now 6432".
_BARE_PORT = re.compile(
    r"(?:^|[，,；;]\s*)(?:服务)?端口\s*号?\s*(?:现在|也)?\s*(?:(?:是|为|改成|改为|换成|调成|调整为|变成)了?)?\s*:?(\d{2,5})(?!\d)|"
    r"(?:^|[,;]\s*)(?:the\s+|its\s+)?port\s+(?:is\s+now|is|changed\s+to|moved\s+to|is\s+changing\s+to)\s+:?(\d{2,5})\b|"
    r"(?:^|[,;]\s*)(?:it'?s|it is)\s+(?:now\s+)?(?:on|at)\s+port\s+:?(\d{2,5})\b|"  # "…, its on port 8080 now"
    r"(?:^|[,;]\s*)it\s+(?:comes up|starts(?: up)?|runs|listens|binds)\s+(?:on|at|to)\s+(?:port\s+)?:?(\d{2,5})\b",
    re.I,
)
_VALUE_ZH = re.compile(
    r"^([^，,。]{2,20}?)(?=现在|目前|是|为|统一|改成|改为|设成|设为|调整为|调成).{0,30}?"
    r"(?:改成|改为|调整为|设成|设为|调成)\s*([^\s，。,]+(?:\s*[^\s，。,\d]+)?)"
)
_VALUE_EN = re.compile(
    r"\b(?:set|change|changed|bump|bumped)\s+(?:the\s+)?([\w\s-]{2,30}?)\s+to\s+(\S+)|^(?:the\s+)?"
    r"([\w\s-]{2,30}?)\s+is now\s+(\S+)",
    re.I,
)
# Who owns what: "billing-service is owned by Alice Chen", "Carol owns the deploy pipeline now", "the owner
# of ledger-service is Mei", "账务服务的负责人是阿强", "账务服务现在归王美管". The thing and the person, so that the
# owner said later in another session closes the owner said before (subject_for: attribute "owner").
_THING = r"(?:the |our )?(?P<thing>(?<![\w./-])[\w./-]+(?: (?!now\b|too\b|also\b)[\w./-]+){0,3}?)"
_WHO_EN = r"(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?|[\u4e00-\u9fff]{2,4})"
# or a name written in lowercase, as team chat does ("jo owns networking now"), never a word that is no one
_WHO_LOWER = (
    r"(?P<who>(?!(?:it|this|that|which|who|what|nobody|no one|everyone|everybody|someone|somebody|one|each|"
    r"he|she|they|we|you|i|team|the|a|an|our|my|your|their)\b)[a-z][a-z'-]{1,20}(?: [a-z][a-z'-]{1,20}(?= \())?)"
)
# (a name in code starts where no name character stands before it, and a second word needs its space: each
# start tried once, so a 5 MB pasted line costs linear time, not cubic)
_THING_ZH = (
    r"(?P<thing>(?<![A-Za-z0-9_./-])[A-Za-z][A-Za-z0-9_.-]*\s?(?![的是在由归]|现在|目前)[\u4e00-\u9fff]{1,6}?"
    r"(?=\s*(?:现在|目前)?\s*(?:归|由))|"  # "Flink 作业"
    r"(?<![A-Za-z0-9_./-])[A-Za-z0-9_./-]+(?:\s[A-Za-z0-9_./-]+)?|[\u4e00-\u9fffA-Za-z0-9_-]{2,12}?)"
)
_WHO_ZH = r"(?P<who>[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)?|[\u4e00-\u9fff]{2,3}?)"
_OWNER = [
    re.compile(
        _THING
        + r" (?:is|are) (?:now )?(?:owned|maintained) by (?:now )?(?:"
        + _WHO_EN
        + "|"
        + _WHO_LOWER.replace("<who>", "<whom>")
        + ")"
    ),
    re.compile(
        r"(?:^|[,;:] )(?i:(?:so|and|then|now|btw|fyi|also|ok|heads up|from now on)[,:]? )*(?:"
        + _WHO_EN
        + "|"
        + _WHO_LOWER.replace("<who>", "<whom>")
        + ")"
        + r"(?: \([^)]{1,30}\)| [—–-]{1,2} [^—–\n]{1,60}? [—–-]{1,2})? (?:now )?(?:owns|maintains|is (?:now )?the (?:owner|maintainer) of|is (?:now )?the (?:point of contact|go-to person|contact person) for|"
        r"is (?:now )?(?:responsible for|in charge of)|looks after|leads|heads) "
        + _THING
        # ("owns syndication-service and the portal credentials": what else they own follows)
        + r"(?=\s*(?:now\b|[,.;:!]|$|and (?:the|its|our) ))"
    ),
    re.compile(r"\b(?:the )?owner of " + _THING + r" is (?:now )?" + _WHO_EN),
    # who to ask: "ping Dmitri for anything in reminder-worker", "ask Kim about anything in scheduler-api"
    re.compile(
        r"\b(?i:ping|ask|talk to|go to|reach out to)\s+(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s+(?:for|about|with)\s+"
        r"(?:anything|questions|issues|problems)\s+(?:in|on|about|with|related to|touching)\s+(?:the\s+)?(?P<thing>[\w./-]+)"
    ),
    # "ride-billing questions go to Mei (王美琳) for now", "reviews for fnol-api go to Marcus"
    re.compile(
        r"(?:^|[,;:] |\b(?i:and|so|now)\s+)(?P<thing>(?<![\w./-])[a-z][\w./-]*-[\w./-]+)\s+"
        r"(?i:questions|issues|reviews|PRs|pages|requests)\s+(?i:go(?:es)?|now go)\s+to\s+" + _WHO_EN
    ),
    # "if anything about courier-dispatch comes up, that's Marisol Ortega's service (Mari)"
    re.compile(
        r"\b(?i:anything|questions?|issues?|stuff|something)\s+(?i:about|with|in|on|for|touching)\s+(?:the\s+)?"
        r"(?P<thing>(?<![\w./-])[a-z][\w./]*-[\w./-]+)[^.;!?]{0,30}?,\s*(?i:that'?s|it'?s|that is|it is)\s+"
        r"(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?)'s\s+(?i:service|baby|thing|area|repo|code|project|call)\b"
    ),
    # "Tomek handed OSRM over to PJ": who has it now
    re.compile(r"\bhanded " + _THING + r" over to " + _WHO_EN),
    # "Tom Becker takes over ownership of telemetry-ingest from Marco Rossi": the one taking it over
    re.compile(
        r"(?<![\w-])" + _WHO_EN + r" (?:takes|took|is taking|will take|has taken) over (?:the )?(?:ownership of )?"
        r"(?P<thing>(?<![\w./-])[a-z][\w.]*[-_.][\w./-]+)"
    ),
    # "notify-svc moved from Li Na to Omar last week", "ownership of X passed from A to B": the second
    # (a service's name, between two people: "billing-service moved from Postgres to MySQL" is no owner)
    re.compile(
        r"(?:^|[,;:] )(?i:ownership of )?(?P<thing>(?<![\w./-])[a-z][\w./]*[-_.][\w./-]+)"
        r"(?:'s ownership| ownership)? (?:has )?(?:moved|passed|went|was handed over|was transferred|got handed over) "
        r"from (?:[A-Z][\w'-]*(?: [A-Z][\w'-]*)?|[\u4e00-\u9fff]{2,4}) to " + _WHO_EN
    ),
    # "…, so pdf-worker belongs to Jonah now (Jonah Feld)"
    re.compile(
        r"(?:^|[,;:] )(?i:(?:so|and|then|now)\s+)?(?!(?i:this|that|it|which)\b)"
        + _THING
        + r" (?:now )?belongs to (?:now )?"
        + _WHO_EN
        + r"(?=\s*(?:now\b|[(（,.;:!]|$))"
    ),
    re.compile(r"(?P<thing>(?<![\w./-])[\w./-]+)'s owner is (?:now )?" + _WHO_EN),
    # "networking modules are dmitri's (@dvolkov)": whose they are, said as people say it in chat
    re.compile(
        r"(?:^|[,;:] )(?:(?:and|so|also|btw|now),? )?" + _THING + r" (?:is|are) (?:now |all )?"
        r"(?P<who>(?!(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|yesterday|everyone|everybody|nobody|someone|somebody|anyone|one|it|that|this|what|who|there|here|let)'s)"
        r"[A-Za-z][\w-]*(?: (?-i:[A-Z])[\w-]*)?)'s(?=\s*(?:[(（,.;:!—–-]|now\b|baby\b|$))",
        re.I,
    ),
    re.compile(
        _THING_ZH
        + r"\s*(?:[（(](?P<alt>[A-Za-z][\w.-]+)[)）])?\s*(?:的|这块|这边)?\s*(?:owner|负责人|维护人|维护者)\s*(?:现在|目前)?\s*(?:是|换成了?|改成了?|变成了?|为|换了?)\s*"
        + _WHO_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    # "settlement-svc 跑在 8081 端口，负责人是王建国": whose the service named first is (the thing left empty)
    re.compile(
        r"(?:^|[，,；;：:]\s*)(?P<thing>)(?:owner|负责人|维护人)\s*(?:现在|目前)?\s*(?:是|为)\s*"
        + _WHO_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    # "反作弊是老陈负责，排行榜是小周": whose the next thing is, said as "X 是 <a person>" (checked in owner_of)
    re.compile(
        r"(?:^|[，,；;]\s*)(?P<thing>(?![他她我你它这那]|负责人|维护人|值班|owner\b|on-?call\b)[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z0-9_-]{1,11}?)(?:\s*的\s*[\u4e00-\u9fff]{1,4})?\s*是\s*"
        r"(?P<person>[老小阿][\u4e00-\u9fff]|[\u4e00-\u9fff]{2,3}|[A-Z][a-z]+)(?=\s*(?:[，。,.；;]|$))"
    ),
    # who to go to with it: "网关这块有问题找老周", "以后网关的事找阿杰（刘杰）" (a person, checked in owner_of)
    re.compile(
        r"(?:^|[，,；;：:]\s*)(?:另外|还有|对了|然后)?\s*(?:以后|今后|现在|之后)?\s*(?P<thing>(?![他她我你它这那])[\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z0-9_.-]{1,15}?)\s*"
        r"(?:(?:这块|这边|那边|那块)?\s*(?:的事(?:情|儿)?|的问题|(?:有|出了?)(?:什么)?问题)|(?:这块|这边|那边|那块)\s*(?:以后|今后|现在|之后)?)"
        r"\s*(?:都|就|先|直接|可以)?\s*找\s*"
        r"(?P<person>[老小阿][\u4e00-\u9fff]|[\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?=\s*(?:[（(，。,.;；]|$))"
    ),
    # a service's person from now on: "code-service 以后找小宋（宋雨桐）"
    re.compile(
        r"(?:^|[，,；;：:]\s*)(?:另外|还有|对了|然后)?\s*(?P<thing>(?<![\w./-])[A-Za-z][\w.]*(?:-[\w.]+)+)\s*"
        r"(?:以后|今后|往后|现在)\s*(?:都|就|先|直接|可以)?\s*找\s*"
        r"(?P<person>[老小阿][\u4e00-\u9fff]|[\u4e00-\u9fff]{2,3}?|[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?=\s*(?:[（(，。,.;；]|$))"
    ),
    # "SLA owner 换了，Feng Wei 调去 billing 了，现在 owner 是 Vivian"
    re.compile(
        _THING_ZH
        + r"\s*(?:的|这块)?\s*(?:owner|负责人)\s*换(?:人)?了[^。；;]{0,40}?(?:现在|目前)\s*(?:owner|负责人)?\s*是\s*"
        + _WHO_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    re.compile(
        _THING_ZH
        + r"\s*(?:[（(](?P<alt>[A-Za-z][\w.-]+)[)）])?\s*(?:现在|目前|以后|今后|往后|之后)?\s*(?:归|(?<!路)由(?!于))\s*"
        + _WHO_ZH
        + r"\s*(?:[（(][^)）]{1,40}[)）])?\s*(?:管|负责|维护)",
        re.I,
    ),
    # "order-api 归陈静。", "pay-callback 现在归陈思雨了，", "settle-service 是王磊负责的"
    re.compile(
        _THING_ZH
        + r"\s*(?:现在|目前|以后|今后|往后|之后)?\s*归(?!档)\s*"
        + _WHO_ZH
        + r"(?=\s*(?:[（(][^)）]{1,40}[)）])?\s*了?\s*(?:[，。,.;；]|$))",  # ("归阿玲（林玲），…": her name in full after it)
        re.I,
    ),
    re.compile(
        _THING_ZH
        + r"`?\s*(?:[（(][^)）]{1,40}[)）])?(?:\s*(?:这个|那个)(?:服务|项目|模块|系统|仓库))?\s*(?:现在|目前)?\s*是\s*"  # ("面试排期那块（interview-service）是王建国在管")
        + _WHO_ZH
        + r"\s*(?:[（(][^)）]{1,40}[)）])?\s*(?:负责|在管|维护|在维护|在负责|在\s?maintain|管)(?:的|着)?(?=\s*[，。,.;；!！]|$)",
        re.I,
    ),
    # "老张负责报表服务的导出", "周涛（Tom Zhou）负责支付网关"
    re.compile(
        r"(?:^|[，,。；;：:]\s*)(?!我|你|他|她|大家|谁|都|也)"
        + _WHO_ZH
        + r"\s*(?:[（(][^)）]{1,40}[)）])?\s*(?:现在|目前)?\s*(?:负责|在管|维护|管(?=[\u4e00-\u9fffA-Za-z]))\s*"
        + _THING_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    # a role: "Bao is release captain now", "Dana is the tech lead"
    re.compile(
        r"(?:^|[,;:] (?:so |and |then |now )?)"
        + _WHO_EN
        + r"(?: \([^)]{1,30}\))? (?:is|are) (?:now )?(?:the |our )?(?P<thing>(?:release|tech|team|incident|project) "
        r"(?:captain|lead|manager|commander))\b"
    ),
    # "Kat is Katherine Liu, our tech lead": the role said after the full name
    re.compile(
        r"\bis (?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?), (?:our|the) (?P<thing>(?:release|tech|team|incident|project) "
        r"(?:captain|lead|manager|commander))\b"
    ),
    # a handover: "Kevin handed points-api over to May", "告警路由也从阿凯那边交给小美了", "小美接手了告警路由"
    re.compile(r"\bhand(?:ed|s|ing)? (?:over )?" + _THING + r" (?:over )?to " + _WHO_EN),
    re.compile(_THING + r" (?:was|has been|got|is being) handed (?:over )?to " + _WHO_EN),
    re.compile(
        _THING_ZH
        + r"\s*(?:也|现在|已经)*\s*(?:从\s*\S{1,8}?\s*(?:那边|那里|手里|手上)?)?\s*(?:交给|转给|移交给)了?\s*(?!你|我)"
        + _WHO_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    re.compile(
        r"(?:^|[，,。；;\s])" + _WHO_ZH + r"\s*(?:已经)?接手了?\s*" + _THING_ZH + r"(?=[\s，。,.;；(（了]|$)", re.I
    ),
]


# Who is on call: "线上 oncall 是阿杰（陈杰）", "oncall 换人了，这周起是 Kevin", "支付的值班是老王", "Priya is on call
# for search this week". The thing is what they are on call for, "oncall" when the sentence names none.
_ONCALL = [
    re.compile(
        r"(?:(?P<thing>(?<![A-Za-z0-9_-])[A-Za-z0-9_-]+|[\u4e00-\u9fff]{2,6}?)\s*(?:的|线上的?)?\s*)?(?:oncall|on-call|值班(?:的人|人|的)?)\s*"
        r"(?:也)?(?:换人了?|换了)?[，,]?\s*(?:现在|目前|这周起|本周起|从这周起|下周起|这个季度)?\s*(?:是|换成了?|改成了?|为)\s*"
        + _WHO_ZH
        + r"(?=[\s，。,.;；(（了]|$)",
        re.I,
    ),
    # "Daniel rotated off partner on-call this week, it's Marco Rossi now", "on-call for search is Priya now"
    re.compile(
        r"(?:\b(?!(?:the|off|of|for|on|is|an?|and|but|so|also|plus|who|our|your|their|his|her)\b)(?P<thing>[a-z][\w./-]*) )?(?i:on)[- ]?call\b"
        r"(?: for (?:the )?(?P<also>[\w./-]+(?: [\w./-]+)?))?"
        r"[^.;]{0,30}?\b(?:it'?s|is|goes to|passes to|moves to|switch(?:es|ed)? to|rotated to|rotates to)(?: now)? "
        r"(?!(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b)"
        r"(?P<who>[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)(?=\s*(?:now\b|this\b|too\b|until\b|till\b|through\b|[,.;:!]|$))"
    ),
    re.compile(
        _WHO_EN
        + r" is (?:now )?(?:the )?on[- ]?call(?: engineer)?(?: for (?:the )?(?P<thing>[\w./-]+(?: [\w./-]+){0,2}?))?"
        r"(?=\s*(?:now\b|this\b|too\b|until\b|till\b|through\b|[,.;:!]|$))"
    ),
]


def oncall_of(content: str) -> tuple[str, str] | None:
    """(what they are on call for, or "oncall"; the person) when `content` says who is on call."""
    for rx in _ONCALL:
        m = rx.search(content)
        if m:
            thing = (m.group("thing") or m.groupdict().get("also") or "").strip().casefold()
            when = ("", "线上", "现在", "目前", "这周", "本周", "下周", "从这周", "这个月", "本月")
            thing = "oncall" if thing.removesuffix("起") in when else thing
            return thing, m.group("who").strip()
    return None


# The toolchain a command runs, by its program: two commands of different ones run different parts of
# a repository (a monorepo's Python service and its Rust gateway), so neither replaces the other.
_TOOLCHAINS = {
    "python": ("pytest", "python", "python3", "uv", "tox", "nox", "poetry", "ruff", "mypy", "flake8", "black"),
    "rust": ("cargo", "rustc", "clippy"),
    "go": ("go", "golangci-lint", "gofmt"),
    "node": ("npm", "pnpm", "yarn", "npx", "bun", "node", "jest", "vitest", "eslint", "tsc"),
    "jvm": ("mvn", "./mvnw", "mvnw", "gradle", "./gradlew", "gradlew", "sbt"),
    "ruby": ("bundle", "rake", "rspec", "rubocop"),
}


def toolchain(command: str | None) -> str | None:
    program = (command or "").strip().strip("`").split(" ", 1)[0]
    return next((k for k, programs in _TOOLCHAINS.items() if program in programs), None)


def other_toolchains(a: str | None, b: str | None) -> bool:
    """Whether two commands run programs of two different toolchains (`make` and the like: of none)."""
    ta, tb = toolchain(a), toolchain(b)
    return ta is not None and tb is not None and ta != tb


# What a sentence's words before "owns" / "归" may be without naming what is owned.
_NOT_OWNED = frozenset(("it", "this", "that", "which", "它", "这个", "现在", "目前", "以后", "今后", "之后"))


# A pronoun is no owner: "自己维护分配状态机太累了" says who would maintain it, not whose it is.
_NO_ONE_ZH = frozenset("自己 我们 咱们 大家 我 你 他 她 他们 她们 你们 别人 没人 谁".split())


# A person said to have left what they owned: "老王上周调去数据平台组了", "Maggie moved to the digitization project".
_LEFT = re.compile(
    r"(?P<who>[\u4e00-\u9fff]{2,3}?|(?-i:[A-Z])[a-z]+(?: (?-i:[A-Z])[a-z]+)?)\s*(?:上周|上个?月|这周|昨天|已经|最近|下个月|现在|目前)?\s*"
    r"(?:调去|调到|调走|转岗|转到|转去|离职|去了|\bmoved (?:to|over to)\b|\bleft (?:for|the)\b|\bhas left\b|\bis leaving\b)",
    re.I,
)


def left_by(content: str) -> str | None:
    """Who a statement says has left what they did (casefolded): "老王上周调去数据平台组了" -> "老王"."""
    m = _LEFT.search(content)
    # (a particle before the name is no part of it: "对了磊哥现在转到 payout 了")
    return re.sub(r"^[了对的是和跟说就也都]+(?=[\u4e00-\u9fff]{2})", "", m.group("who")).casefold() if m else None


def owner_of(content: str) -> tuple[str, str] | None:
    """(the thing owned, lowercased; the person) when `content` says who owns something."""
    for rx in _OWNER:
        m = rx.search(content)
        person = m.groupdict().get("person") if m else None
        full = re.match(r"\s*[（(]([\u4e00-\u9fff]{2,4})[)）]", content[m.end() :]) if person else None
        if (
            full
            and zhnames.plausible(full.group(1))
            and not (zhnames.plausible(person) or re.fullmatch(r"[老小阿][\u4e00-\u9fff]", person))
        ):
            person = full.group(1)  # "找思雨（陈思雨）": her name in full after the one she goes by
        if person and not (
            re.fullmatch(r"[老小阿][\u4e00-\u9fff]", person)
            or zhnames.plausible(person)
            or (person.isascii() and not known_tech(person))
        ):
            continue  # "数据库是 MySQL", "环境是测试": no one
        if m:
            named = m.groupdict().get("alt") or m.group("thing")  # "账务服务（ledger-service）": the name in code
            thing = re.sub(r"^(?:the|our)\s+", "", named.strip().rstrip("./").casefold())
            thing = re.sub(r"\s+(?:as of|since|starting|effective)\b.*$", "", thing)  # "… as of yesterday": when
            thing = re.sub(
                r"(?<=[\u4e00-\u9fff])(?:这块|这边|这部分|那块|那边|这摊|那摊)$", "", thing
            )  # "报表导出这块归老张管"
            thing = re.sub(r"\s*(?:以后|今后|往后|之后|现在|目前)$", "", thing)  # "temp-monitor 以后归阿玲"
            # "ledger-sync 每天凌晨 2 点跑…这个服务的 owner 是老周", "…，负责人是王建国": the service named first
            if not thing or thing in _THIS_SERVICE:
                named = _SERVICE_NAME.search(content, 0, m.start())
                thing = named.group().casefold() if named else thing
            who = m.groupdict().get("who") or m.groupdict().get("whom") or person or ""
            who = person if full and person == full.group(1) else who
            if who.isascii() and known_tech(who.strip()):
                continue  # "… moved from Postgres to MySQL": a technology owns nothing
            if thing and thing not in _NOT_OWNED and who.strip() not in _NO_ONE_ZH:
                return thing, who.strip()
    return None


def said_of(content: str, subject: str, value: str) -> bool:
    """Whether `content` states `value` of `subject`: the value follows the name within its clause
    ("recon-db 的端口是 5433", "recon-db listens on 5433")."""
    near = rf"{re.escape(subject)}[^。；;\n，,]{{0,24}}?(?<![\w.]){re.escape(value)}(?![\w]|\.\w)"
    return bool(subject) and re.search(near, content, re.I) is not None


_THIS_SERVICE = frozenset(("这个服务", "该服务", "这个项目", "this service", "the service", "this project"))
_SERVICE_NAME = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w./-])")


_VERSION = re.compile(
    r"\b(python|node|go|rust|msrv|java|ruby|php|postgres(?:ql)?|typescript)\s*v?(\d+(?:\.\d+)*)|"
    # more that projects pin, with a dotted version only ("Kafka 3 brokers" is no version)
    r"\b(mysql|mariadb|redis|kafka|elasticsearch|mongodb|nginx|kubernetes|k8s|django|rails|spring boot|react|vue|angular|"
    r"gradle|kotlin|ubuntu|debian|alpine|clickhouse|starrocks|dotnet|deno|bun|pnpm|yarn|npm)\s*v?(\d+\.\d+(?:\.\d+)*)",
    re.I,
)
_CHOICE_BEFORE = re.compile(
    r"(?:\b(?:use|uses|using|go with|going with|went with|picked|chose|choose|stick with|"
    r"standardi[sz]e on|prefer|switch(?:ed|ing)? to|mov(?:ed|ing) to|migrat\w* to)|用|改用|采用|"
    r"选用|选了|换成|迁移到)\s*(?:the\s+|plain\s+)?$",
    re.I,
)
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|\bnever|\bno longer|\bstop(?:ped)? using|\bmov(?:e|ed|ing) off|\bdrop(?:ped|ping)?|instead of|rather than|"
    r"\bover|\bfrom|不要|而不是|别|不用|不是|不再|停用|弃用|从)\W{0,3}"
    r"(?:\w+\W{1,3}){0,2}$",
    re.I,
)


# -- corrections: what a new statement replaces ------------------------------------------------

_CHANGED = re.compile(
    r"\b(?:now|actually|any ?more|no longer|changed|moved|migrated|switched|is gone|was removed|removed|"
    r"(?:moving|migrating|switching|getting|got) (?:off|away from)|"
    r"retired|renamed|replaced?|replacement|dropped|swapped|split|scratch|died|changes)\b|不对|写错|应该是|现在|改成|改为|改名|重命名|更名|"
    r"换到|换成|迁到|迁移到|切到|migrate\s*到|已从|从.{1,20}迁|不再|下线|回收|停用|废弃|作废|已换|更正|纠正|回滚|撤销|推翻|"
    r"(?:去掉|删掉|拿掉)了|(?:已经|那个)\s*删了|改了(?=[，,。；\s]|$)|"
    r"没人(?:写|用|读)了|(?:以后|今后)都用|注销|"
    r"\brevert(?:ing)?\b|\broll(?:ing)? back\b|"
    r",\s*not\s+(?=`|\d)",  # "the lock table is `tf-state-locks`, not `tf-locks`", "it's 7 years, not 400 days"
    re.I,
)
_VALUE = r"`([^`]{2,60})`|([\w.:/<>@+-]*[\d_.:/<>@][\w.:/<>@+-]*|[A-Z][\w.+-]{2,}|[a-z][\w.+-]{3,})"
_OLD_BEFORE = re.compile(
    r"(?:\b(?:not|no longer|instead of|old|from|off|replac(?:es|ed|ing))\b|老的|原来的?|之前的?|旧的?|不再用|不再带|不用|弃用|别再用|"
    r"不再|而不是|不是|从)\s*(?:the\s+)?(?:(?:[a-z]{2,12}\s+|[\u4e00-\u9fff]{1,4}\s*)(?=[\w.:/<>@+-]*\d))?(?:"
    + _VALUE
    + ")",
    re.I,
)
_OLD_AFTER = re.compile(
    r"(?:"
    + _VALUE
    + r")\s*(?:\)|）)?\s*(?:(?:那个|这个|的那个)\s*(?:已经|也)?\s*(?=不用了|弃用了|不通了|下线了|停掉了|废弃了|作废了?))?(?:(?:cli\s+)?is gone|was removed|(?:is|was) (?:being )?retired|(?:got|was|has been|is being) renamed|"
    r"(?:已经)?改名了|被重命名了|"
    r"(?:cli )?is no longer used|is dead|died|clashed|conflicted|(?:was|is) taken|(?:was|has been|got) (?:shut down|turned off|dropped|"
    r"decommissioned|sunset|replaced)|is deprecated|(?:已经|已)?(?:下线|回收|停用|废弃)|去掉了|冲突|不用了|也?别(?:再)?用了|"
    r"不再用了|弃用了|不对了?|写错了|有误|作废了?|no longer exists|(?:does not|doesn'?t) exist any ?more|已经不存在了?|"
    r"(?:已经|也)?(?:不通了|关掉了|关闭了|停掉了|不能用了))",
    re.I,
)
# Before "from X" in its clause, a verb of reading or receiving: X is where data comes from ("consumes
# dispatch.jobs from Kafka now"), not what was left ("moved from RabbitMQ").
_READS_FROM = re.compile(
    r"\b(?:reads?|reading|consumes?|consuming|pulls?|pulling|fetch(?:es)?|fetching|loads?|loading|imports?|"
    r"downloads?|streams?|receives?|subscribes?|ingests?|syncs?|copies|gets?|comes?)\b"
    r"(?:(?!\b(?:moved|migrated|switched|changed|replaced|away)\b)[^.;!?。；，,]|\.(?=\w)){0,40}$",
    re.I,
)
# After "从 X": X is when something starts ("从 4 月 20 号开始", "从下周一起"), not an old value.
_STARTS_FROM = re.compile(r"[^，。,.；;改调换到变]{0,10}?(?:开始|起(?![来床]))")
# What a document or a memory still says, said to be out of date: "the runbook still says the replica is on port
# 5433 but we moved it", "手册里还写的是 8443，但是已经换了" (a value with a digit or in backticks).
_CODE_VALUE = r"(?<![\w.-])(?:`([^`]{2,60})`|([\w.:/<>@+-]{0,40}\d[\w.:/<>@+-]{0,40}))(?![\w.-])"
_NAMED_VALUE = (
    r"(?<![\w.-])(?:`([^`]{2,60})`(?![\w-])|([A-Za-z][\w.:/-]*[_.:/-][\w.:/-]*\w|[\w.:/-]*\d[\w.:/-]*)(?![\w-]|\.\w))"
)
NAMED_VALUE = re.compile(_NAMED_VALUE)  # a value a statement names: in backticks, a name in code shape, a number
_NOTED = (
    r"(?:我|memory\s*里|记忆里)(?:这边|手上的?)?(?:记的|记录里|记录的|的记录|笔记里)[^。；，,\n]{0,24}?是\s*(?:[\u4e00-\u9fff]{1,12}\s*)?"
    + _NAMED_VALUE
    + r"|"
    r"\b(?:my notes (?:say|have)|what I (?:had )?noted (?:was|is)|I had noted|I have a note)\b[^.;\n]{0,40}?"
    + _NAMED_VALUE
)
_STILL_SAYS = re.compile(
    r"\bstill (?:says|lists|shows|has|points (?:at|to))\b[^.;\n]{0,60}?" + _CODE_VALUE + r"[^.;\n]{0,30}?\bbut\b|"
    r"(?:还|仍然?|依然)(?:写的?是|写着)[^。；，,\n]{0,30}?"
    + _CODE_VALUE
    + r"[^。；\n]{0,10}?[，,]\s*(?:但|其实|可是)|"
    # what the assistant had noted, said beside what it found: "…监听的是 alarm-events，我这边记的队列名是 q_alarm"
    + _NOTED,
    re.I,
)
NOTED = re.compile(_NOTED, re.I)
# Retiring something named after the verb: "下线网关自己的 Redis 限流", "Retire the old Heroku app", "drop Sentinel".
_RETIRED = re.compile(
    r"(?:下线|停用|废弃|去掉|删掉|拿掉)[\u4e00-\u9fff]{0,6}?\s*`?([A-Za-z][\w.+/-]+)|"
    # "the tm_reindex queue is gone" (a name in code shape: not "the problem is gone")
    r"`?([A-Za-z][\w+/]*[_.-][\w.+/-]+|(?-i:[A-Z][a-z]+[A-Z])\w*)`?\s+(?:(?:queue|topic|table|job|bucket|index|service|cluster)\s+)?"
    r"(?:is|was) gone\b|"
    # the name first: "Feign 也去掉了", "`moment` 已经删掉了"
    r"(?:^|(?<=[，,。；;\s]))`?([A-Za-z][\w.+/-]+)`?\s*(?:那个|这个)?\s*(?:也|已经|都)*\s*(?:去掉|删掉|删|拿掉|弃用)了|"
    r"\bswap(?:ped|s)?\s+`?([A-Za-z][\w.+/-]+)`?\s+out\b|"  # "Dima swapped Prawn out for HexaPDF"
    r"\b(?:retired?|decommission(?:ed)?|drop(?:ped)?|remov(?:e|ed)|get rid of|got rid of|rip(?:ped)? out)\s+(?:the\s+|our\s+|"
    r"old\s+|legacy\s+)*`?([A-Za-z][\w.+/-]+)|"
    # "we're not on Postmark anymore", "no longer on Heroku"
    r"\b(?:not|no longer) (?:on|using)\s+`?((?-i:[A-Z])[\w.+/-]+)`?(?:\s+any ?more\b|(?<=\w)(?=\s*[,;.]))",
    re.I,
)
_NOT_VALUES = {"the", "that", "this", "there", "here", "used", "yet", "just", "only", "sure", "anymore"}
# What a correction names as the new thing ("dropped RabbitMQ for Kafka", "replaced X with Y", "换成 Kafka"):
# never also an old value, wherever else it appears ("... now consumes dispatch.jobs from Kafka").
_NEW_NAMED = re.compile(
    r"\b(?:for|to|with|onto|into)\s+(?:the\s+)?`?([A-Za-z][\w.+-]+)|(?:换成|改成|改为|迁到|换到|切到|改用)\s*`?([A-Za-z][\w.+/-]+)",
    re.I,
)


# Who or what is no longer so, named in Chinese: "规则上线审核也不是张磊了，换成王芳" (a name, so no digits or capitals
# say it is a value).
_NO_LONGER_ZH = re.compile(
    r"不(?:再)?是\s*([\u4e00-\u9fff]{2,4}?)了\s*[，,]\s*(?:换成|改成|改由|变成|现在是|现在由|由)"
)


# The unit after a number (" 小时", " days"): "24" alone is no old value, "24 小时" is.
UNIT_AFTER = re.compile(
    r"\s*(?:个月|小时|分钟|毫秒|工作日|万元|[天周年月日点秒次个元])|\s*(?:years?|months?|weeks?|days?|hours?|minutes?|mins?|seconds?|"
    r"secs?|ms|attempts?|retries|times|replicas)\b",
    re.I,
)


def with_unit(value: str, text: str, at: int = 0) -> str:
    """A number with the unit `text` says it in, from `at` on ("90" in "记的是 90 分钟" -> "90 分钟"): many facts
    hold the bare number."""
    at = text.find(value, at)
    unit = UNIT_AFTER.match(text, at + len(value)) if at >= 0 and value[-1:].isdigit() else None
    return text[at : unit.end()] if unit else value


def quantity(value: str) -> bool:
    """An old value that is a number with its unit ("24 小时", "90 days"): many facts hold one."""
    m = re.fullmatch(r"(\d+)(.+)", value)
    return bool(m and UNIT_AFTER.fullmatch(m.group(2)))


# Who was named before and is no longer so: "之前说的 on-call 阿杰作废", "之前说的值班小李不对了".
_CANCELLED_ZH = re.compile(
    r"之前(?:说|讲|写)的\s*(?:[A-Za-z][\w-]*\s*)?(?:on-?call|oncall|值班|owner|负责人)?\s*的?\s*([\u4e00-\u9fff]{2,3}?)\s*"
    r"(?:作废|不对了?|写错了)|"
    # a decision taken back: "之前选 Zustand 那个决定我们回滚吧", "revert the Zustand decision"
    r"(?:之前|原来|上次)?选(?:了|的)?\s*`?([A-Za-z][\w.+-]*)`?\s*(?:那个|的)?(?:决定|方案)\s*(?:我们)?(?:先)?(?:回滚|作废|撤销|推翻|不要了)|"
    r"\b(?:revert(?:ing)?|roll(?:ing)? back|undo(?:ing)?)\s+(?:the|our|that)\s+`?([A-Za-z][\w.+-]*)`?\s+(?:decision|choice|pick)",
    re.I,
)


# What a change moves to: "从 Oracle 迁到 MySQL", "we moved search to Elasticsearch", "replaced by Kafka".
_MOVED_TO = re.compile(
    r"(?:迁移?到了?|换成了?|改成了?|切换?到了?|改用|升级到了?|"
    r"\b(?:moved|migrated|switched|changed|upgraded)\b[^.;。；\n]{0,40}?\bto\b|\breplaced by\b|\bnow (?:on|uses?|runs? on)\b)"
    r"\s*(?:(?:port|version|the|a|an|new|our)\s+)*`?(?P<v>[A-Za-z][\w.+#/-]*(?:\s\d[\w.]*)?|\d[\w.:]*|[\u4e00-\u9fff]{2,6})",
    re.I,
)


def moved_to(content: str) -> list[str]:
    """The new values a change names ("从 Oracle 迁到 MySQL": MySQL; "upgraded to Go 1.22": Go 1.22;
    "moved to port 6543": 6543): a statement already holding one agrees with the change, and is not
    what it corrects."""
    return [re.sub(r"[了的]+$", "", m.group("v")).rstrip(".-/") for m in _MOVED_TO.finditer(content)]


def replaced_values(content: str) -> list[str]:
    """The old values a correction names ("port 6543 now, not 5433", "老的 10.12.3.45 回收",
    "`airflow dags backfill` is no longer used"): a current memory holding one is out of date."""
    arrowed = arrow_change(content)
    if not _CHANGED.search(_DOTTED_NAME.sub(" ", content)) and arrowed is None:  # (catalog.product-changes …)
        return []
    out = list(arrowed or [])
    shaped = {next(g for g in m.groups() if g).casefold() for m in _REPLACED.finditer(content)}
    for rx in (_OLD_BEFORE, _OLD_AFTER, _RETIRED, _STILL_SAYS):
        for m in rx.finditer(content):
            quoted = bool(m.group(1))
            v = next((g for g in m.groups() if g), "").strip(" .,;:，。；")
            if rx is _OLD_BEFORE and v.isdigit():  # "从 24 小时改成 12 小时", "(原来 90 天)": the number with its unit
                v = with_unit(v, content, m.end() - len(v))
            if rx is _OLD_BEFORE and m.group().startswith("从") and _STARTS_FROM.match(content, m.end()):
                continue  # "双写从 4 月 20 号开始": when it starts, no value replaced
            if rx is _OLD_BEFORE and m.group()[:4].lower() == "from" and _READS_FROM.search(content, 0, m.start()):
                continue  # "analytics reads from Kafka now": where the data comes from, nothing replaced
            if len(v) < 3 or v.lower() in _NOT_VALUES:
                continue
            if rx is _OLD_BEFORE and not quoted and v.isalpha() and v.islower() and re.match(r"(?i)old\b", m.group()):
                continue  # "pods that were on the old node": a thing of the day, no retired Node
            if quoted or re.search(r"[\d_.:/<>@-]", v) or v[0].isupper() or known_tech(v) or v.casefold() in shaped:
                out.append(v)
    out += [m.group(1) for m in _NO_LONGER_ZH.finditer(content)]  # "审核也不是张磊了，换成王芳"
    out += [next(g for g in m.groups() if g) for m in _CANCELLED_ZH.finditer(content)]  # "之前说的 on-call 阿杰作废"
    # "moment 换成 dayjs 了": a name the sentence's shape gives; a known technology said so in Chinese
    # ("order-service 的 Redis 换成 Codis") is left to the slot rules, which read whose it is
    for m in _REPLACED.finditer(content):
        v = next(g for g in m.groups() if g)
        if (
            m.group("old1")
            or m.group("old2")
            or m.group("old5")
            or m.group("old6")
            or m.group("old7")
            or not known_tech(v)
        ):
            out.append(v)
    new = {(m.group(1) or m.group(2)).casefold() for m in _NEW_NAMED.finditer(content) if _RETIRED.search(content)}
    # (a kind of value is what changed, not the old value: "出场事件的 topic 已经改成 park_exit_event")
    return [v for v in dict.fromkeys(out) if v.casefold() not in new and v.casefold() not in _VALUE_KINDS][:4]


_DOTTED_NAME = re.compile(r"[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)+")

_VALUE_KINDS = frozenset(
    "topic topics queue queues port host hostname cron schedule version endpoint url address bucket namespace "
    "timeout ttl retention 端口 地址 主题 队列 版本".split()
)


def known_tech(name: str) -> bool:
    """A technology MAPLE knows by name (nginx, redis, 飞书), whatever its case."""
    n = name.casefold().strip("` ")
    return bool(entities.category_of(n) or n in entities.OTHER_TECH or n in SLOT_OF)


_SAYS_CHANGED = re.compile(
    r"^.{1,24}?(?:改了|变了|换了|改成|改为|调成|调到|调整为|\bchanged\b|\bhas changed\b|\bis now\b|\bare now\b)",
    re.I,
)


_UNCHANGED = values.UNCHANGED  # said to be as it was ("…，没变", "nothing changed there")


def says_unchanged(content: str) -> bool:
    """A statement that says its subject has not changed, and nothing else that has ("We scaled
    payments-api to 6 replicas; the autoscaling max is unchanged" is a change)."""
    # ("晚上 8 点以后" is a time of day, not "from now on")
    rest = re.sub(r"\d+\s*点(?:半)?(?:以后|之后)", " ", _UNCHANGED.sub(" ", content))
    return bool(_UNCHANGED.search(content)) and not marks_change(rest)


def says_changed(content: str) -> bool:
    """A statement that its subject changed ("commit 规范改了", "The deploy process changed")."""
    return bool(_SAYS_CHANGED.search(content))


# A statement that something is different from now on: what lets a later fact close an earlier one.
_MARKS_CHANGE = re.compile(
    # ("the quote has moved on to a newer version": moved on, no change of the project)
    r"\b(?:now|no longer|any ?more|changed|moved(?!\s+on\b)|migrated|switched|renamed|replaced|retired|removed|bumped|"
    r"upgraded|downgraded|scaled|"
    r"(?:raised|lowered|increased|decreased|reduced|cut|extended|shortened) to|"
    r"(?:drops?|dropped|falls?|fell|goes|went|rises?|rose|grows?|grew)\s+(?:from\s+\S+\s+)?to\s+\d+|is split|was split|got split|"
    r"from now on|going forward|these days|actually|correction|scratch|typo)\b|"
    r"\bwe(?:'re| are) (?:moving|switching|migrating)\b|"
    r"\b(?:raised|lowered|increased|decreased|reduced|bumped|cut)\b[^.;!?]{1,40}?\bto\s+\d|更正|纠正|(?:写|记|说|搞|填|配)错了?|(?<!对)不对(?!称|齐|应)|应该是|[,，;]\s*not\s+`?[\w.]*\d|(?:这周|本周|今天|下周|下个月|从现在)起|"
    r"重命名|改名|更名|现在|改成|改为|改到|调到|挪到|移到|提前到|推迟到|延后到|调成|调整为|提到|降到|(?:延长|缩短|拉长|增加|减少|提高|降低|放宽|收紧|扩)到|改用|改了|换了|换成|换到|迁到|切成|切到|升级到|降级到|改发|改走|改由|不再|下线|以后|今后|已经?从|其实是|不是\s*[\w.]*\d|"
    # a span kept, said as news: "抓拍图只留 90 天了", "日志保留 7 天了"
    r"只(?:留|保留|保存|存)|(?:留|保留|保存|存)\s*\d+\s*(?:天|小时|分钟|周|个月|年)了",
    re.I,
)
# Words that say how a statement is put, not what it is about: they never make two statements one topic.
_TOPIC_STOP = frozenset(
    """the and for with from that this these those there their they them then than was were are is be been
    being have has had not now no any more only also just our your you use used using uses run runs runs
    new old from into onto over under off out per via all each every when what which who how why its it's
    should must always never don't does did can could will would shall may might rule going forward
    changed moved renamed replaced removed retired switched migrated bumped raised lowered increased
    decreased reduced extended shortened longer anymore today week
    yesterday tomorrow since because so but or if else after before like e.g eg agreed proposal plan
    http https www com svc org net""".split()
)
_TOPIC_STOP_ZH = frozenset(
    "现在 改成 改为 改用 改了 换了 换成 换到 迁到 切成 切到 升级 不再 下线 以后 今后 已经 之前 原来 我们 你们 这个 那个 "
    "一下 的话 就是 还是 但是 因为 所以 如果 需要 可以 不要 统一 一律 必须 "
    # how an agreement is put ("行，按你说的来", "就这么定了", "听你的"): two decisions share it, not a subject
    "按你 你说 说的 的来 就这 这么 么定 定了 这么办 么办 听你 你的 没问 问题 那就 就用 就按".split()
)


def marks_change(content: str) -> bool:
    """Whether a statement says its subject is different now ("is on 5433 now", "改成 X", "from now on")."""
    return bool(_MARKS_CHANGE.search(content)) or arrow_change(content) is not None


# A change noted with an arrow, as engineers note one: "port 8080 -> 8081", "Redis TTL → 600s", "MySQL => PostgreSQL".
# One arrow only: "gateway -> order-api -> ledger" is a path, and "Debezium -> Kafka" a flow (two kinds of thing).
_ARROW = re.compile(r"\s*(?:->|→|=>|⇒|⟶)\s*")
_BEFORE_ARROW = re.compile(r"(?:`([^`]{1,60})`|([\w.:/@+-]+)|([\u4e00-\u9fff]{1,6}))$")
_AFTER_ARROW = re.compile(r"`([^`]{1,60})`|[\w.:/@+-]+")
_ARROW_KINDS = _VALUE_KINDS | frozenset(
    "timeouts limit size replicas retries interval 超时 过期时间 保留 间隔 副本 上限".split()
)


def _alike(old: str, new: str) -> bool:
    """Two values of one thing: the same shape but for their digits (300s / 600s, db-03.internal / db-07.internal;
    not 2pm / 12:30am), a bare number given its unit (300 / 600s), or one name's start (tf-locks / tf-state-locks)."""
    shape = [re.sub(r"\d+", "0", v.casefold()) for v in (old, new)]
    return shape[0] == shape[1] or "0" in shape or len(os.path.commonprefix(shape)) >= 3


def arrow_change(content: str) -> list[str] | None:
    """The old values a change noted with an arrow names ([] when it names only what changed: "port -> 8081"),
    or None when an arrow (if any) marks no change."""
    arrows = _ARROW.findall(re.sub(r"`[^`]*`", "``", content))
    if len(arrows) != 1:
        return None
    m = _ARROW.search(content)
    left, right = _BEFORE_ARROW.search(content, 0, m.start()), _AFTER_ARROW.match(content, m.end())
    if not left or not right:
        return None
    old, new = next(g for g in left.groups() if g), right.group(1) or right.group()
    digit = re.compile(r"\d")
    if ((left.group(1) and right.group(1)) or (digit.search(old) and digit.search(new))) and _alike(old, new):
        return [old]  # `orders.v1` -> `orders.v2`, 300s → 600s (not a route: `severity=~"page"` → `ops-slack`)
    if known_tech(old) and entities.category_of(old) and entities.category_of(old) == entities.category_of(new):
        return [old]  # MySQL -> PostgreSQL
    if re.sub(r"^.*的", "", old).casefold() in _ARROW_KINDS and (digit.search(new) or right.group(1)):
        return []  # port -> 8081
    return None


def topic_terms(content: str) -> set[str]:
    """What a statement is about, as words: ASCII words and names of three or more characters and
    the two-character runs of Chinese, less the words that only say how it is put. Two statements
    that share several are about one subject, whatever their wording or language mix."""
    low = content.casefold()
    # names are cut at their punctuation: gateway/providers/<vendor>.py and gateway/backends/ share
    # "gateway", chat-default and qwen2.5-72b share "chat" with "chat default"
    words = {w for w in re.findall(r"[a-z][a-z0-9]{2,}", low) if w not in _TOPIC_STOP}
    han = set()
    for run in re.findall(r"[\u4e00-\u9fff]{2,}", content):
        han |= {run[i : i + 2] for i in range(len(run) - 1)}
    return words | {b for b in han if b not in _TOPIC_STOP_ZH}


# (never ending on the sentence's full stop or a colon: "built with Go 1.22." holds 1.22)
_LITERAL = re.compile(r"[\w.\-/:<>{}@]*\d[\w.\-/:<>{}@]*(?<![.:-])|\b\w+[_./:]\w[\w./:\-<>{}]*(?<![.:-])")


# A name in Title case after a sentence's first word ("owned by Carol Zhang", "is on FastAPI now").
_NAMED = re.compile(r"(?<![.!?。！？]\s)(?<!^)\b[A-Z][a-z][A-Za-z0-9]*\b")


def named_terms(content: str) -> set[str]:
    """The topic terms (`topic_terms`) that are names: a person ("Carol Zhang", 张卡罗) or a product.
    Often the value a statement gives, not what it is about: "auth-gateway's owner is now Carol
    Zhang" is not about "ledger-service is owned by Carol Zhang"."""
    words = {w.casefold() for w in _NAMED.findall(content.strip())}
    people = [m.name for m in entities.find(content, None) if m.kind == "person"]
    return topic_terms(" ".join([*words, *people])) if words or people else set()


# What a change names as the thing now in place: "push-gateway replaced it".
_TAKES_OVER = re.compile(
    r"`?([A-Za-z][\w.+-]*)`?\s+(?:replaced|replaces|took over|takes over|supersedes)\s+(?:it|them|that|this)\b", re.I
)


def replacement_terms(content: str) -> set[str]:
    """The topic words of what a change names as the new thing ("The legacy notifier was
    decommissioned; push-gateway replaced it"): what it is about is what went, not what came."""
    names = [m.group(1) for m in _TAKES_OVER.finditer(content)]
    return topic_terms(" ".join(names)) if names else set()


def values_in(content: str) -> set[str]:
    """The literal values a statement holds (code spans, numbers, names with dots or slashes)."""
    spans = {v.casefold().strip() for v in re.findall(r"`([^`]{2,80})`", content)}
    return spans | {v.casefold() for v in _LITERAL.findall(content)}


def covers(stored: str, statement: str) -> bool:
    """Whether `stored` says what `statement` says, however worded: every value the statement
    holds (a port, a path, a version) is in it, or at least half of its topic words are."""
    values = values_in(statement)
    if values:
        return values <= values_in(stored)
    mine = topic_terms(statement)
    return len(mine) >= 2 and len(mine & topic_terms(stored)) >= 0.5 * len(mine)


def frame(content: str) -> str:
    """What a statement says with its values taken out: "billing-service listens on 8081 in
    staging." and "… on 8080 in staging" have one frame, so the later one restates the earlier
    with another value, a correction even when no word says so."""
    masked = _LITERAL.sub("#", re.sub(r"`[^`]{2,80}`", "#", content.casefold()))
    return " ".join(w for w in re.findall(r"[^\W_]+|#", masked) if w not in _WHEN_WORDS)


# Words that say when, not what: "listens on 8081 now" restates "listens on 8080".
_WHEN_WORDS = frozenset("now currently still actually 现在 目前 如今".split())


# A value that numbers things in a series ("step 4", "convention number 3", "sprint 13", "第 2 步"):
# statements alike but for it are items of a list, not one fact restated.
_ORDINAL = re.compile(r"\b(?:number|no|step|item|phase|part|sprint|round|chapter|section|stage|rule|tip)\s#|第\s?#")


def numbers_a_series(frame_: str) -> bool:
    """Whether a statement's frame (`frame`) numbers an item of a series."""
    return bool(_ORDINAL.search(frame_))


# Chinese words that say when or how often, values of a schedule and not what it is about: 每周一 in
# "线上值班每周轮换一次，每周一早上 9 点交接" does not make it one subject with "从下周起生产发布改成每周一和周三".
_ZH_WHEN = re.compile(
    r"周[一二三四五六日天末]|星期.|礼拜.|每[周天日月年]|[上下本这]周|[上下本这]个?月|[一两二三四五六七八九十几]次"
)


# Two characters that say how a statement is put, not what it is about ("这个 lesson 要记住", "oncall 也换了")
_LIGHT_BIGRAMS = _TOPIC_STOP_ZH | frozenset("也换 也改 要记 记住 都是 对了 说下 一个 这次 那套".split())


def subject_words(subject: str | None) -> set[str]:
    """The words of a subject that tell one thing from another ("staging port" ~ "staging database")."""
    if not subject:
        return set()
    generic = {"the", "our", "a", "port", "is", "on", "at", "local", "value", "db", "database", "server", "the db"}
    generic |= {"service", "svc", "api", "app", "worker", "gateway"}  # reports-service is not billing-service
    han = [h for h in re.findall(r"[\u4e00-\u9fff]{2}", _ZH_WHEN.sub(" ", subject)) if h not in _LIGHT_BIGRAMS]
    words = set(re.findall(r"[a-z0-9]+", subject.lower())) | set(han)
    return {w for w in words if w not in generic and not w.isdigit()}


def subject_for(
    content: str, category: str, mentions: list, replaced: str | None = None
) -> tuple[str | None, str | None, str | None]:
    """(subject, attribute, value): two facts with the same subject and attribute and different
    values are the same fact changed, so the newer one supersedes the older."""
    commands = [m for m in mentions if m.kind == "command"]
    if (
        category in ("command", "correction", "rule", "note")
        and commands
        and re.search(r"\b(?:run|runs|with|via|using|calls?|use|pass)\b|用|跑|运行|执行|启动", content, re.I)
    ):
        cmd = commands[0]
        prefix = content[: cmd.start]
        for where in (prefix, cmd.name):
            for subject, rx in _SUBJECTS:
                if re.search(rx, where, re.I):
                    return subject, "command", cmd.name
    owned = owner_of(content) if category != "command" else None
    if owned and owned[0].replace("-", "") in ("oncall", "值班"):
        return "oncall", "oncall", owned[1]  # "Priya handed on-call to Kevin": who is on call now
    if owned:
        return owned[0], "owner", owned[1]
    on_call = oncall_of(content) if category != "command" else None
    if on_call:
        return on_call[0], "oncall", on_call[1]
    m = _PORT_SUBJECT.search(content) if re.search(r"port|端口|listens|serves|\d{4}", content, re.I) else None
    if m and category == "change" and not _SERVICE_MOVED_PORT.search(content):
        m = None  # a change is a port's only as "route-planner moved to 7200" (not "moved to 2027")
    bare = _BARE_PORT.search(content) if m is None and category in ("config", "change") else None
    if bare:  # "recon-db 上周迁到新集群了，…，端口改成 6432 了": the port of the service the sentence opened with
        named = _SERVICE_NAME.search(content, 0, bare.start())
        subject = named.group().casefold() if named else mentions[0].name.lower() if mentions else None
        if subject:
            return subject, "port", next(g for g in bare.groups() if g)
    if m and (category in ("config", "change") or m.group(9)):  # ("port 改了，现在是 8093，别再往 8083 打": a rule too)
        subject = strip_fillers(
            (m.group(1) or m.group(3) or m.group(5) or m.group(7) or m.group(9) or "").strip()
        ).lower()
        subject = re.sub(r"^(?:the|our|also the|and the)\s+", "", subject)
        subject = re.sub(r"(?<=\w)\s*的\s*(?:服务)?$", "", subject)  # "billing-service 的服务端口"
        subject = re.sub(r"^(?:之前|原来|刚才)(?:说|给|写|配)的\s*", "", subject)  # "之前说的测试库端口 5433 不对"
        if subject in ("it", "this", "that", "", "服务", "服务的", "本地", "这个服务", "它") and mentions:
            subject = mentions[0].name.lower()  # "notification-service 是小李负责的，…，服务端口 7070"
        port = m.group(2) or m.group(4) or m.group(6) or m.group(8) or m.group(10)
        old = replaced_values(content)
        if port in old:  # "从端口 6543 改成 6544": the first number named is the one replaced
            port = next((p for p in re.findall(r"(?<![\d.])\d{2,5}(?![\d.])", content) if p not in old), port)
        return subject or None, "port", port
    if category == "config":
        v = _VALUE_ZH.search(content) or _VALUE_EN.search(content)
        if v:
            groups = [g for g in v.groups() if g]
            if len(groups) >= 2:
                subject = re.sub(
                    r"^[\u4e00-\u9fffA-Za-z]{1,4}?(?:说|讲|提到)[，,:：]?\s*", "", strip_fillers(groups[0])
                )
                subject = re.sub(r"(?:要|得|需要|应该|也|都|就)$", "", subject)  # "老周说支付网关的超时要改成 5 秒"
                return subject.lower().strip() or None, "value", groups[1].strip("`")
    techs = [m for m in mentions if m.kind in ("technology", "code", "known") and entities.category_of(m.name)]
    if techs and category in ("rule", "preference", "correction", "decision", "change"):
        if replaced:
            chosen = next((m for m in techs if m.name == replaced), None)
        else:  # the technology that is the object of a choice ("use X", "go with X", "用 X")
            chosen = next(
                (
                    m
                    for m in techs
                    if _CHOICE_BEFORE.search(content[: m.start]) and not _NEGATED_BEFORE.search(content[: m.start])
                ),
                None,
            )
        if chosen is not None:
            return entities.category_of(chosen.name), "choice", chosen.name.lower()
    v = _VERSION.search(content)
    if v and category in ("version", "config", "rule", "note", "statement", "change", "correction", "environment"):
        name, number = (v.group(1), v.group(2)) if v.group(1) else (v.group(3), v.group(4))
        return name.lower(), "version", number
    named = [m for m in mentions if m.kind not in ("url",)]
    return (named[0].name.lower() if named else None), None, None


# -- incidents: the emotion a general lexicon misses --------------------------------------------

_INCIDENT: dict[str, tuple[float, str]] = {
    "awful": (-1, "frustration"),
    "terrible": (-1, "frustration"),
    "horrible": (-1, "frustration"),
    "nightmare": (-1, "frustration"),
    "disaster": (-1, "fear"),
    "outage": (-0.9, "fear"),
    "was down": (-0.9, "fear"),
    "went down": (-0.9, "fear"),
    "took down": (-0.9, "fear"),
    "data loss": (-1, "fear"),
    "wiped": (-0.9, "fear"),
    "corrupted": (-0.8, "fear"),
    "incident": (-0.6, "fear"),
    "never again": (-0.6, "anger"),
    "for hours": (-0.6, "frustration"),
    "wasted": (-0.7, "frustration"),
    "宕机": (-0.9, "fear"),
    "事故": (-0.8, "fear"),
    "挂了": (-0.8, "fear"),
    "丢数据": (-1, "fear"),
    "坑死": (-0.9, "frustration"),
    "白费": (-0.7, "frustration"),
    "太慢": (-0.5, "frustration"),
}
_SHOUT = re.compile(r"\b(?:NO|NEVER|ALWAYS|DON'T|NOT|STOP|MUST)\b")


def incident_score(text: str) -> tuple[float, float, list[str]]:
    """(valence, intensity, moods) from incident words, exclamation and shouting."""
    low = text.lower()
    hits = [v for k, v in _INCIDENT.items() if (k in text if not k.isascii() else re.search(r"\b" + k + r"\b", low))]
    bangs = min(3, len(re.findall(r"[!！]", text)))
    shouts = min(2, len(_SHOUT.findall(text)))
    if not hits:
        return 0.0, 0.0, []
    valence = max(-1.0, sum(v for v, _ in hits) / len(hits) - (0.2 if shouts or bangs >= 2 else 0))
    intensity = min(1.0, 0.3 * sum(abs(v) for v, _ in hits) + 0.15 * bangs + 0.2 * shouts)
    moods = list(dict.fromkeys(m for _, m in hits))
    if shouts and "anger" not in moods:
        moods.append("anger")
    return round(valence, 3), round(intensity, 3), moods[:3]


# -- the slot a changed value fills (supersession when the words differ) ----------------------

# Slots beside entities.TECH's, for what projects move between: where they deploy, store, chat, queue.
_MORE_SLOTS = {
    "hosting": "heroku fly.io fly render vercel netlify railway cloudflare",
    "object storage": "s3 gcs oss cos minio r2",
    "chat": "slack 飞书 钉钉 企业微信 feishu dingtalk lark discord teams",
    "message queue": "kafka rabbitmq rocketmq pulsar nats sqs",
    "search engine": "elasticsearch opensearch meilisearch typesense solr",
    "config center": "apollo nacos consul etcd",
    "code hosting": "github gitlab gitea bitbucket gerrit",
    "error tracking": "sentry rollbar bugsnag honeybadger",
    "log shipping": "elk loki fluentd fluent-bit filebeat logstash splunk graylog",
    "scheduler": "crontab cron airflow dagster prefect xxl-job powerjob quartz elastic-job",
    "deploy tooling": "helm kustomize argocd spinnaker",
    "logging library": "logrus zap zerolog slog loguru structlog winston pino log4j logback log4j2",
    "proxy": "nginx envoy traefik caddy haproxy kong apisix",
    "olap store": "clickhouse doris starrocks druid",
    "tracing": "jaeger zipkin skywalking",
    "http client": "httpx aiohttp axios",
    "cloud": "aws gcp azure aliyun 阿里云 腾讯云 华为云 火山引擎",
    "sms": "twilio messagebird vonage plivo sinch",
}
SLOT_OF: dict[str, str] = {n: slot for slot, names in _MORE_SLOTS.items() for n in names.split()}
_CJK_SLOT_NAMES = [n for n in SLOT_OF if not n.isascii()]
_SAME_SLOT = {"go http router": "web framework"}  # a framework in another language fills the same slot

# "the gateway is on 8443", "moved it off 8443": a number a service sits on (not a year, an amount or a date)
_ON_PORT = r"\b(?:on|off)\s+(?!(?:19|20)\d\d\b)\d{4,5}\b(?![-./]\d)(?!\s*(?:ms|s|rps|qps|%|mb|gb|kb|users|rows)\b)"
_PORT = re.compile(
    r"(?:\bport\s*(?:is\s*|to\s*|=\s*|of\s*)?|端口\s*(?:号)?\s*(?:是|为|改成|改为|换成|调成)?\s*|\blisten(?:s|ing)? on\s*(?:port\s*)?|"
    r"监听(?:在)?\s*|(?<![\d.]):|\b(?:moved|changed|switched|bumped) to\s*(?:port\s*)?|(?:改成|改为|换成|调成|迁到)\s*|"
    r"现在(?:是|用|为)\s*|\b(?:it's|is) now\s*(?:on\s*)?)(\d{2,5})\b(?!\.\d)|"
    r"(?<![\d.])(\d{4,5})\s*端口|(?<![\d.])(\d{4,5})(?=\s*(?:了|now\b|instead\b))|(?=" + _ON_PORT + r")\w+\s+(\d{4,5})",
    re.I,
)
_HOST = re.compile(
    r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])|(?<![\w.-])([a-z][\w-]*(?:\.[a-z0-9][\w-]*)*\.(?:internal|local|"
    r"com|net|io|org|cn|dev|cloud|lan|svc))\b|(?<![\w.-])([a-z][a-z]+-\d{1,3})(?![\w-])",
    re.I,
)


_RENAMED = re.compile(r"\brenam\w*|\bis (?:now )?called\b|改名|重命名|更名|换名|改叫|现在叫", re.I)


def renames(content: str) -> bool:
    """A statement that something has a new name ("TRANSFORM_WH got renamed to DBT_PROD_WH", "改名叫")."""
    return bool(_RENAMED.search(content))


# A span of time: an interval, a timeout, a TTL ("every 5 minutes", "30s", "10 分钟", "2 小时").
_DURATION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:(ms|milliseconds?|毫秒)|(s|secs?|seconds?|秒钟?)|(mins?|minutes?|分钟)|"
    r"(h|hrs?|hours?|小时|个小时)|(days?|天))(?![A-Za-z])",
    re.I,
)
_SECONDS = (0.001, 1, 60, 3600, 86400)


def durations(content: str) -> list[str]:
    """The spans of time a statement holds, in the order said, each as seconds ("5 分钟" and
    "5 minutes" are both "300s"), so the same interval in other words is one value."""
    out = []
    for m in _DURATION.finditer(content):
        unit = next(i for i, g in enumerate(m.groups()[1:]) if g)
        out.append(f"{float(m.group(1)) * _SECONDS[unit]:g}s")
    return list(dict.fromkeys(out))


_FROM_OLD = re.compile(
    r"(?:\bfrom\s+|从\s*)[^，,。.;；]{1,20}?(?=\s*(?:\bto\b|改成|改为|调成|调整为|变成|到))|"
    r"(?:(?<!而)不是|\bnot\s+)[^，,。.;；]{1,20}?(?=\s*[，,;；]\s*(?:而?是|but\b|it'?s\b))|"  # "不是 10 分钟，是 5 分钟"
    r"(?:之前(?:说|定|写|配)的|原来的?|以前的?|旧的)\s*[^，,。.;；]{1,20}?(?=\s*(?:改成|改为|调成|调到|换成|变成|挪到))",  # "之前说的 90 天改成 30 天"
    re.I,
)
# What a speaker takes back: "scratch what I said last week about Expedia being 25 req/s" (the value, not the name)
_SCRATCHED = re.compile(
    r"\b(?:scratch|forget|ignore|disregard)\b[^.;!?]{0,60}?\b(?:being|was|is|of|at)\s+([^,.;!?]{1,24}?)(?=\s*[,.;!?]|$)",
    re.I,
)


def without_old(content: str) -> str:
    """A change less the old values it names ("from 30 to 14 days", "不是 10 分钟", "scratch … being 25 req/s"):
    what it says now."""
    content = _FROM_OLD.sub(" ", content)
    for m in reversed(list(_SCRATCHED.finditer(content))):
        content = content[: m.start(1)] + " " + content[m.end(1) :]
    return content


def leading_value(content: str, kind: str) -> str | None:
    """The first value of a slot a statement says. A change says its new value first and may name
    the old one after, as its reason ("poll every 60 seconds now, 5 minutes was too slow"); the value
    after "from" / "从" is the old one ("从 30 天改成 14 天", "from 5 to 10 minutes")."""
    content = without_old(content)
    if kind == "duration":
        return next(iter(durations(content)), None)
    if kind == "port":
        m = _PORT.search(content)
        return next((g for g in m.groups() if g), None) if m else None
    return None


# A name in code shape, said bare: park_exit_event, TOPIC_PARK_EXIT, order-events.
_CODE_NAME = r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+"
# A new name given after a change verb: "topic 已经改成 park_exit_event", "the queue was changed to rank_high".
_NEW_NAME = re.compile(
    rf"(?:改成|改为|改叫|变成|换成|\b(?:renamed|changed) to|\bnow called)\s*`?({_CODE_NAME})(?![\w.-])", re.I
)


# Where messages go, by the word for what they are: "topic 是 `trace.code.generated`", "the rebalance-jobs queue",
# "队列 order.paid". A rename that names only the new one ("topic 已经改名了，现在叫 `x`", "the planner queue is
# fleet.rebalance now") retires the name an earlier statement gave a channel of that kind.
_CHANNEL_KINDS = {
    "topic": "topic", "queue": "queue", "队列": "queue", "exchange": "exchange", "stream": "stream", "bucket": "bucket"
}  # fmt: skip
_CHANNEL_KIND = r"(topic|queue|队列|exchange|stream|bucket)s?"
_CHANNEL_NAME = r"`?([A-Za-z][\w.:-]*\w)`?"
_CHANNEL_AFTER = re.compile(
    rf"(?<![\w-]){_CHANNEL_KIND}\s*(?:是|为|叫|名是|名字是|named|called|is(?: now)?|=|:|：)?\s*{_CHANNEL_NAME}", re.I
)
_CHANNEL_BEFORE = re.compile(rf"(?<![\w.:-]){_CHANNEL_NAME}\s*(?:的)?\s*{_CHANNEL_KIND}(?![\w-])", re.I)
_CALLED_NOW = re.compile(
    rf"(?:现在叫|改叫|叫做|now called|renamed to|is now|go(?:es)? out on|publish(?:es)? (?:on|to))\s*{_CHANNEL_NAME}",
    re.I,
)
# A rename said by the old name's end: "the old exchange name is gone", "bucket 上个月按运维的命名规范改了，老的那个已经只读".
_OLD_NAME_GONE = re.compile(
    r"\bthe old (?:\w+ )?name is gone\b|\bthe old (?:topic|queue|exchange|stream|bucket) is gone\b|命名规范改了|"
    r"老的(?:那个)?(?:已经)?(?:只读|下线|不用)了?",
    re.I,
)


def channels_in(content: str) -> set[tuple[str, str]]:
    """(kind, name) of each topic or queue a statement names: ("topic", "trace.code.generated")."""
    found = {(m.group(1), m.group(2), m.group(0)) for m in _CHANNEL_AFTER.finditer(content)}
    found |= {(m.group(2), m.group(1), m.group(0)) for m in _CHANNEL_BEFORE.finditer(content)}
    return {
        (_CHANNEL_KINDS[kind.casefold()], name)
        for kind, name, said in found
        if ("`" in said or re.search(r"[._:-]", name)) and not known_tech(name)  # a name, not "the planner queue"
    }


def renamed_channel(content: str) -> tuple[str, str, set[str]] | None:
    """(kind, new name, the old names it gives) when a statement says a topic or queue was renamed:
    "topic 已经改名了，现在叫 `x`" gives no old name, "the order.paid topic was renamed to orders.paid.v2" one."""
    if not (renames(content) or _OLD_NAME_GONE.search(content)) or replaced_values(content):
        return None
    kind = re.search(_CHANNEL_KIND, content, re.I)
    if kind is None:
        return None
    k = _CHANNEL_KINDS[kind.group(1).casefold()]
    named = {n for kk, n in channels_in(content) if kk == k}
    called = _CALLED_NOW.search(content)
    new = (
        called.group(1)
        if called and not known_tech(called.group(1))
        else (next(iter(named)) if len(named) == 1 else None)
    )
    return (k, new, {n for n in named if n.casefold() != new.casefold()}) if new else None


def names_in(content: str, bare: bool = False) -> set[str]:
    """The names a statement holds in code (`order-events`), for a rename; with `bare`, also those written
    without backticks (TOPIC_PARK_EXIT), as the statement a rename may close holds them."""
    names = re.findall(r"`([^`]{2,80})`", content)
    if bare:
        names += re.findall(rf"(?<![\w./@-]){_CODE_NAME}(?![\w./@-])", re.sub(r"`[^`]*`", " ", content))
    return {v.casefold() for v in names}


def quantities(content: str) -> frozenset[str]:
    """The numbers with a unit a statement holds, each as one quantity ("half an hour" = "30 min")."""
    return values.fact_values(content)["quantities"]


def value_kinds(content: str) -> set[str]:
    """The kinds of value a statement holds, technologies and packages left out (port, host, duration, days, clock):
    a change of a value changes only a statement holding a value of that kind."""
    return {k for k in slot_values(content) if not k.startswith(("tech:", "package:"))}


# A package named by its path (Go modules, GitHub repos, npm scopes): two paths ending in one name are
# alternatives for one slot ("gorilla/websocket" -> "coder/websocket").
_PACKAGE_PATH = re.compile(r"(?<![\w./@-])@?(?:[a-z][\w.-]*/){1,2}([a-z][\w-]{2,})(?![\w/-]|\.\w)")

# A cron expression (five or six fields; one at least a "*", checked where it is read): "0 4 1 * *".
_CRON = re.compile(r"(?<![\w*/-])(?:[\d*][\d*/,-]*\s+){4,5}[\d*?][\d*/,?-]*(?![\w*/-])")


def slot_values(content: str) -> dict[str, set[str]]:
    """The values a statement holds, by the kind of slot they fill: ports, hosts, durations, weekdays,
    clock times, and technologies by
    what they are ("web framework", "chat"). Two statements holding different values of one slot, on
    one subject, say the same thing changed."""
    out: dict[str, set[str]] = {}
    if re.search(
        r"\bport|端口|listen|监听|:\d{2,5}\b|(?:\bto|改成|改为|迁到|换成)\s*:?\d{4,5}\b(?!\.\d)|" + _ON_PORT,
        content,
        re.I,
    ):
        out["port"] = {next(g for g in m if g) for m in _PORT.findall(content)}
    if _RENAMED.search(content):
        out["name"] = names_in(content)
    elif given := {v.casefold() for v in _NEW_NAME.findall(content)}:
        out["name"] = given
    low = content.casefold()
    hosts = {next(g for g in m if g).casefold() for m in _HOST.findall(content)}
    # the registry of an image (harbor.corp.example.com/cdc/connect:2.5.4) is no address of a service
    hosts = {h for h in hosts if f"//{h}" in low or f"{h}/" not in low}
    if hosts:
        out["host"] = hosts
    spans = durations(content)
    if spans:
        out["duration"] = set(spans)
    held = values.fact_values(content)  # a weekday, a clock time: "the handoff moved to Tuesday"
    for kind in ("days", "clock"):
        if held[kind]:
            out[kind] = set(held[kind])
    # "20 rps" / "改成 50 rps": a rate limit's value
    rates = {m.group(1) or m.group(2) for m in _RATE.finditer(content)}
    if rates:
        out["rate"] = rates
    for key, given in settings(content).items():  # "remind.ahead-minutes=120" / "remind.ahead-minutes 改成 1440"
        out["setting:" + key] = given
    for cron in _CRON.finditer(content):  # "0 4 1 * *" says when, as a clock time does
        if "*" in cron.group():
            out.setdefault("clock", set()).add(cron.group().strip())
            step = re.match(r"\s*`?\*/(\d{1,2})\s", cron.group())
            if step:  # "*/15 6-21 * * *" runs every 15 minutes, as "每 15 分钟跑一次" says
                out.setdefault("duration", set()).add(f"{int(step.group(1)) * 60}s")
    for step in re.finditer(r"(?<![\w*/])\*/(\d{1,2})(?![\w*/])(?!\s+[\d*])", content):  # "bumped … to */5"
        out.setdefault("duration", set()).add(f"{int(step.group(1)) * 60}s")
    low = content.casefold()
    for m in _PACKAGE_PATH.finditer(low):  # gorilla/websocket and coder/websocket: one package slot
        out.setdefault("package:" + m.group(1), set()).add(m.group())
    for w in set(re.findall(r"[a-z][\w.+/-]*[\w+]|[\u4e00-\u9fff]{2,4}", low)):
        slot = SLOT_OF.get(w) or entities.TECH.get(w)
        if slot is None and any(entities_cjk(ch) for ch in w):
            slot = next((SLOT_OF[k] for k in SLOT_OF if not k.isascii() and k in w), None)
            w = next((k for k in SLOT_OF if not k.isascii() and k in w), w)
        if slot:
            out.setdefault("tech:" + _SAME_SLOT.get(slot, slot), set()).add(w)
    for w in _CJK_SLOT_NAMES:  # (a Chinese name wherever it stands: "切到腾讯云了" is cut into no word)
        if w in content:
            out.setdefault("tech:" + _SAME_SLOT.get(SLOT_OF[w], SLOT_OF[w]), set()).add(w)
    return {k: v for k, v in out.items() if v}


# -- what a correction leaves standing ---------------------------------------------------------

# Where a statement's parts end: sentences, and the clauses inside one ("，", "；", ", and", ", but");
# English clauses are cut further where each holds a value of its own (`_clauses`).
# (an ASCII "?", "!" or ";" ends a part only before a space: "?ref=v3.4.0" is a URL's query)
_PART_END = re.compile(
    r"(?<=[。；！？，])(?![^（(]*[)）])\s*|(?<=[;!?])\s+|(?<=\.)\s+(?=\S)|(?<=,)\s+(?=(?:and|but)\b)"
)
# Inside an English part, a bare "and" / "but" joins two clauses when each holds a value of its own
# and they are of different kinds ("runs on port 8081 and Dave Kowalski owns it"), not one value's
# list ("on Tuesdays and Thursdays").
_AND = re.compile(r"\s+(?:and|but)\s+(?=\S)", re.I)
_EXAMPLE = re.compile(r"^(?:比如|例如|譬如|像是?|e\.g\.|for example|for instance|such as|like)\b", re.I)
_LEADING_AND = re.compile(r"^(?:and|but|also|plus|另外|还有|并且|而且)\s*[,，]?\s*", re.I)


def joined(parts: Sequence[str]) -> str:
    """Parts of a text (clauses, sentences) put back together: with a space after English punctuation,
    none after Chinese."""
    out = ""
    for p in (p.strip() for p in parts):
        if out.endswith(",") and p[:1].isupper():
            out = out[:-1] + "."  # "…(account acme-prod.us-east-1)," before "Dbt is pinned …": a sentence ends
        out += p if not out or out.endswith(("，", "。", "；", "！", "？")) else " " + p
    return out


_LEADING_IT = re.compile(r"^(?:(?P<of>它的|its\b)|(?P<is>it'?s\b)|它|it\b)\s*", re.I)
# The name a pasted table's row opens with, before the cells after it ("Orchestration：Where Airflow；Notes …").
_ROW_NAME = re.compile(r"^([^：:；;\n]{2,40})：(?=[^；\n]*；)")
_OPENING_ZH = re.compile(r"^([^，,。:：]{2,20}?)\s*(?:用的|用|是|的)")
# What an English statement is about, when it opens with it: "gate runs on …", "Quick context: gate is …".
# A configuration key given a value: "remind.ahead-minutes=120", "`MAX_RENEWALS: 3`", "remind.ahead-minutes 已经改成
# 1440", "pool.max-size is now 40". The key has a dot or an underscore (a property, not a word or a service), is no
# host ("mysql-test.kn.internal:3306") and no file ("notify-service.yaml"); the value is one token, with a digit, a
# switch's word (true, off) or in backticks.
_SETTING = re.compile(
    r"(?<![\w.@/-])`?(?P<key>[A-Za-z][\w-]*(?:[._][A-Za-z0-9][\w-]*)+)`?\s*"
    r"(?:=|:\s|：|(?:也|已经|现在|都)*\s*(?:改成|改为|调成|调到|调整为|设成|设为|设置为|换成|是|从\s*\S+\s*(?:改|调)到)|"
    r"\s(?:is now|is|was changed to|changed to|set to|goes? to|went to|from \S+ to|to|now))"
    r"\s*`?(?P<value>[\w.+/:-]*\w)`?"
)
# A rate: "20 rps", "500 qps", "100 req/s", "每秒 200 次".
_RATE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:rps|qps|tps|req/s|requests? (?:per|a) second)\b|每秒\s*(\d+)\s*(?:次|个请求)", re.I
)
_SETTING_VALUE = re.compile(r"\d|^(?:true|false|on|off|yes|no|enabled?|disabled?|none|null)$", re.I)  # (not "a")
_NOT_A_KEY = re.compile(
    r"\.(?:com|net|org|io|cn|dev|internal|local|lan|corp|ya?ml|json|toml|properties|ts|js|py|go|java|kt|xml|sql|md|conf|env)$",
    re.I,
)


def settings(content: str) -> dict[str, set[str]]:
    """The configuration keys a statement gives values, by key (casefolded): {"remind.ahead-minutes": {"120"}}."""
    out: dict[str, set[str]] = {}
    for m in _SETTING.finditer(content):
        key, value = m.group("key"), m.group("value")
        if not _NOT_A_KEY.search(key) and (m.group(0).endswith("`") or _SETTING_VALUE.search(value)):
            out.setdefault(key.casefold(), set()).add(value.casefold())
    return out


_OPENING_SUBJECT = re.compile(
    r"^(?:[^:：]{1,30}[:：]\s*)?(?:the\s+)?([A-Za-z][\w.-]*)\s+(?:runs|is|lives|listens|sits|uses|has|serves)\b", re.I
)


def value_slots(content: str) -> set[str]:
    """The kinds of value a statement holds that a later change may correct one at a time: its
    slots (`slot_values`), and who owns it or is on call."""
    kinds = set(slot_values(content))
    if owner_of(content):
        kinds.add("owner")
    if oncall_of(content):
        kinds.add("oncall")
    return kinds


def _changed_kinds(part: str, change: str, kinds: set[str]) -> set[str]:
    """The kinds of value a part holds that the change states otherwise: "the cron is in nightly.yml"
    is not changed by "move the cron to 18:00 UTC", which names the same cron and changes a time."""
    mine, theirs = slot_values(part), slot_values(change)
    out = set()
    for k in _part_slots(part) & kinds:
        if k in ("owner", "oncall"):
            read = owner_of if k == "owner" else oncall_of
            a, b = read(_it_named(part)), read(change)
            if not (a and b and a[1].casefold() == b[1].casefold()):
                out.add(k)
        elif mine.get(k) != theirs.get(k):
            out.add(k)
    return out


def _part_slots(part: str) -> set[str]:
    """`value_slots` of one part, where "it" stands for what the statement is about ("Dave owns it")."""
    return value_slots(_it_named(part))


def _it_named(part: str) -> str:
    """A part with its "it" as a thing its readers can name ("Dave owns it" -> "Dave owns the service")."""
    return re.sub(r"\bit\b(?!')", "the service", part)


# A part that names what it is about: a service or package name opening it ("order-api 归陈静",
# "order-api 是 Spring Boot"), or "X 的是…" / "X 那边是…" ("billing 的是 3s": billing's is 3s).
_OWN_NAME = re.compile(
    r"^(?:and\s+|另外|还有)?(?!(?:on-call|e-mail|read-only|follow-up|re-run|pre-prod|non-prod|opt-in|opt-out|sign-off|"
    r"hand-off|roll-out|set-up|log-in|sign-in|check-in|up-to-date)\b)[A-Za-z][\w.]*(?:[-/][\w.]+)+(?=\s|的|是|归|用|跑|在)",
    re.I,
)
_ELLIPTIC_OWNER = re.compile(r"^(?:而|但)?([\w.-]+?)\s*(?:的|那边|这边)(?:也|则|还|就)?是")
_OWNER_ATTRIBUTE = re.compile(r"^[\w.-]+\s*的\s*([^，,。是]{1,20}?)\s*是")
# An identifier inside a part: `code`, a dotted or hyphenated name ("notify.dlq", "invoice-consumer").
_IDENTIFIER = re.compile(
    r"`[^`]+`|(?<![\w.-])[A-Za-z][\w]*(?:[.-][A-Za-z0-9_]+)+|(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
)
# A version something is held at: "dbt is pinned to 1.7.x", "locked at v2.3".
_HELD_AT = re.compile(
    r"\b(?:pinned|locked|held|upgraded|bumped|downgraded)\s+(?:to|at)\s+v?\d+\.(?:\d+|x)(?:\.(?:\d+|x))?", re.I
)


# A part that says who owns or answers for it: "负责人是王建国", "owner is Dana", "on-call 是阿杰".
_WHOSE = re.compile(r"^\s*(?:the\s+)?(?:owner|负责人|维护人|on-?call|值班)\s*(?:现在|目前)?\s*(?:是|为|is)\s*\S", re.I)


def _says_own(part: str) -> bool:
    """Whether a part of a statement says something of its own, not only more about the part before it
    ("有问题先找她", "英文名 Leo"): a value a correction may change (`value_slots`), a name it opens
    with, or an identifier with a verb ("fail 超过 5 次就丢进 notify.dlq", "消费组叫 invoice-consumer")."""
    if _part_slots(part) or _OWN_NAME.match(part) or _WHOSE.match(part) or _HELD_AT.search(part):
        return True
    return bool(_IDENTIFIER.search(part)) and bool(_STATEMENT_VERB.search(_IDENTIFIER.sub(" ", part)))


# What an English clause says something of, before its verb: "grafana is https://…", "and node groups for every
# cluster come from modules/eks-nodegroup".
_STATED = re.compile(
    r"^(?:[^:]{1,30}:\s+)?(?:and\s+|but\s+)?(?:the\s+|our\s+)?(?P<s>(?!(?:it|this|that|they|he|she|we|you|there)\b)"
    r"[A-Za-z][\w.-]*(?:\s+(?!(?:is|are)\b)[A-Za-z][\w.-]*){0,4}?)\s+(?:is|are|comes?|lives?|runs?|sits?)\b",
    re.I,
)


def _stated_subject(part: str) -> str:
    """The words an English clause says something of, lowercased ("" when it opens otherwise)."""
    m = _STATED.match(part.strip())
    return m.group("s").casefold() if m else ""


def _own_subject(part: str, change: str) -> bool:
    """Whether a part names a subject of its own that the change does not name ("billing 的是 3s"
    against a change of fleet's timeout)."""
    owned = owner_of(_it_named(part))
    if owned and owned[0] not in change.casefold() and owned[1].casefold() not in change.casefold():
        return True  # "Tommy leads the mobile side" beside a change of bff-gateway's owner
    stated = set(re.findall(r"[a-z]{3,}", _stated_subject(part))) - {"for", "every", "all", "each", "the"}
    if stated and not stated & set(re.findall(r"[a-z]{3,}", change.casefold())):
        return True  # "node groups for every cluster come from …" beside a change of the registry's port
    m = _OWN_NAME.match(part) or _ELLIPTIC_OWNER.match(part)
    if not m:
        return False
    name = (m.group(1) if m.re is _ELLIPTIC_OWNER else m.group()).strip().casefold()
    name = re.sub(r"^(?:and\s+|另外|还有)", "", name)
    return bool(name) and name not in change.casefold()


def _clauses(part: str) -> list[str]:
    """A part cut where each side is a clause with a value of a kind of its own (above): at an English
    comma ("runs on gate-01, port 7000"), then at a bare "and" / "but"."""
    return [c for piece in _cut(part, _COMMA, 2) for c in _cut(piece, _AND, 3)]


_COMMA = re.compile(
    r"(?<=[A-Za-z0-9`)\]\u4e00-\u9fff],)\s+(?=[A-Za-z`\u4e00-\u9fff])"
)  # (an English comma in Chinese too)
_CODE_SPAN = re.compile(r"`[^`\s]+`")


def _cut(part: str, at: re.Pattern[str], words: int) -> list[str]:
    bits = at.split(part)
    # a last bit too short to be a clause ("…, lock table `tf-locks`, eu-west-1.") goes with the one before
    while len(bits) > 2 and len(bits[-1].split()) < words:
        tail = bits.pop()
        bits[-1] = f"{bits[-1]} {tail}"
    if len(bits) < 2 or any(len(b.split()) < words for b in bits):
        return [part]
    kinds = [_part_slots(b) for b in bits]
    # (a clause with no value of its own may still say something of its own: "pages go to #fleet-oncall")
    # (or names a thing in code of its own: "lock table `tf-locks`")
    if not all(k or _says_own(b) or _CODE_SPAN.search(b) for k, b in zip(kinds, bits, strict=True)):
        return [part]
    if not any(kinds) and not all(_IDENTIFIER.search(b) for b in bits):
        return [part]  # (clauses that each name a thing in code are each a fact: "… (account acme-prod…), prod
        # runs use the TRANSFORM_WH warehouse")
    # (two values of one kind are one clause, "runs on gate-01, port 7000", but for two owners of two
    # things: "Priya owns bff-gateway, Tommy leads the mobile side")
    # or two things each said to be something: "registry mirror is registry-mirror…:5000, grafana is https://…")
    owners = [(owner_of(_it_named(b)) or ("",))[0] for b in bits]
    said = [_stated_subject(b) for b in bits]
    if any(
        (k & o) - ({"owner"} if owners[n] != owners[m] else set())
        for n, k in enumerate(kinds)
        for m, o in enumerate(kinds[n + 1 :], n + 1)
        if not (said[n] and said[m] and said[n] != said[m])
    ):
        return [part]
    return bits


# A part that says what something is, a fact of its own with no value in it: "Pushgate is our mobile push
# gateway.", "recon-job 是我们的对账任务".
_DEFINES = re.compile(
    r"^\s*[A-Za-z][\w.-]*(?: [\w.-]+)? (?:is|are) (?:our|the|a|an) [\w\s/-]{3,60}[.!]?$|"
    r"^\s*[A-Za-z][\w.-]*\s*是(?:我们的?|一个|一套)[^，,。；;]{2,30}。?$",
    re.I,
)


# A part about the person just named, who goes with them: "…are dmitri's (@dvolkov), ping him on anything
# under modules/vpc" (其他 is "other", no one).
_ABOUT_THEM = re.compile(r"\b(?:him|her)\b|(?<!其)[他她]", re.I)


_LOOK_INTO = re.compile(r"^[\u4e00-\u9fff]{0,6}?(?:看下|看一下|看看|查下|查一下|查查|跑下|跑一下|试下|试一下)")


_DEPENDS = re.compile(
    r"^\W*(?:(?:and|but|then)\s+)?(?:runs?|is|are|was|were|deletes?|keeps?|uses?|goes|happens?|fires?|starts?|sends?)\b|"
    r"^\W*so\b.*\b(?:that|this|then|those)\b",
    re.I,
)


def untouched(old: str, change: str, retired: Sequence[str] = (), subject: str | None = None) -> str | None:
    """What a memory a correction closes said besides what the correction changes, when it held more
    than one value: "recon-service 的 owner 是老王，这周 on-call 是小李，有问题先找她" changed in its owner
    leaves "这周 on-call 是小李，有问题先找她". The parts are its sentences and clauses, each with the parts
    after it that hold no value of their own ("有问题先找她"); a part is changed when it holds a value the
    correction retires, else when it holds a value of a kind the correction states (of several such, the
    ones sharing most subject words with it, or none). None when nothing with a value of its own is left."""

    def holds(part: str) -> bool:  # (an example, "比如 `ORD-231 …`", belongs to what it illustrates)
        if _EXAMPLE.match(part) or _ABOUT_THEM.search(part):
            return False
        return _says_own(part) or any(v.casefold() in part.casefold() for v in retired)

    groups: list[list[str]] = []
    for part in (c for p in _PART_END.split(old.strip()) if p.strip() for c in _clauses(p.strip())):
        if groups and not holds(part):
            groups[-1].append(part)
        else:
            groups.append([part])
    if len(groups) < 2:
        return None
    texts = [joined(g) for g in groups]
    low = [t.casefold() for t in texts]
    changed = {i for i, t in enumerate(low) if any(v.casefold() in t for v in retired)}
    bare = set(re.findall(r"(?<![\w.:])\d{4,5}(?![\w.])", change)) - set(re.findall(r"\d+", old))
    if not changed and bare and not value_slots(change):
        # "EMQX 上周切 TLS 了，现在是 8883" names no kind: a number a port's size is the port that changed
        changed = {i for i, t in enumerate(texts) if "port" in value_slots(t)}
    if not changed:
        kinds = value_slots(change)
        # (a change holding no value, "X is deprecated", is about the parts that share its words)
        same_kind = [i for i, t in enumerate(texts) if _changed_kinds(t, change, kinds) or not kinds]
        stems = subject_stems(change)
        best = max((len(stems & subject_stems(texts[i])) for i in same_kind), default=0)
        # (one naming nothing the change names restates the same value another way: "…凌晨 4 点跑，cron 是 0 4 1 * *")
        changed = {
            i
            for i in same_kind
            if len(stems & subject_stems(texts[i])) == best
            or (kinds and not stems & subject_stems(texts[i]) and not _own_subject(texts[i], change))
        }
        # and a value of a changed kind said again in a part of no subject of its own is the same value
        # ("cron 是 `30 2 * * *`，每天凌晨两点半跑" with the cron changed: the half past two goes too)
        if changed:
            changed |= {
                i
                for i in same_kind
                if kinds
                and _changed_kinds(texts[i], change, kinds) - {"owner", "oncall"}
                and not _own_subject(texts[i], change)
            }
    # a part with no subject of its own goes with the changed part before it: "asset-sweeper deletes them 30 days
    # after the book ships, runs nightly at 03:00 UTC. so anything older than that we can't re-render"
    for i in range(1, len(texts)):
        if i - 1 in changed and _DEPENDS.match(texts[i]):
            changed.add(i)
    # (a task the statement went on to ask for is no fact to keep: "…:3306，连上去看下 settle_orders 里有多少重复的")
    kept = [
        t
        for i, t in enumerate(texts)
        if i not in changed and not ((is_request(t) or _LOOK_INTO.match(t)) and not _part_slots(t))
    ]
    if not changed or not any(_says_own(t) or _DEFINES.match(t) for t in kept):
        return None
    attribute = next((m.group(1) for i in sorted(changed) if (m := _OWNER_ATTRIBUTE.match(texts[i]))), None)
    if attribute:  # "billing 的是 3s" after "fleet 的 webhook timeout 是 5s" -> "billing 的 webhook timeout 是 3s"
        kept = [re.sub(r"^([\w.-]+?)\s*的是", lambda m: f"{m.group(1)} 的 {attribute} 是", t, count=1) for t in kept]
    rest = _LEADING_AND.sub("", joined(kept)).strip(" ,，;；")
    if re.search(r"(?:它们?|(?:订阅|消费|调用|依赖|使用|监听|读|写|用)了?)\W*$", rest) or (
        retired
        and re.search(
            r"(?:订阅|消费|监听|读|写)了?它们?|\b(?:consumes?|subscribes? to|listens? to|reads?) (?:it|them)\b", rest
        )
    ):
        return None  # "…，ticket-issuer 和短信服务都订阅(它)" with the topic changed: what it took is gone
    row = _ROW_NAME.match(old)
    if row and 0 in changed and not rest.casefold().startswith(row.group(1).casefold()):
        # a pasted table's row ("MLflow tracking + registry：Where …:5000；Notes backend is RDS postgres") keeps its
        # name with the cells left
        rest = f"{row.group(1).strip()}：{rest}"
        return tidy(rest if rest.endswith(("。", ".", "!", "！")) else rest + "。")
    zh = bool(re.search(r"[\u4e00-\u9fff]", rest))  # (an em dash is no Chinese)
    # What the statement is about: the first service it names that the change does not retire (a memory's
    # own subject may be an attribute, "oncall"), else that subject, else the word it opens with.
    gone = {v.casefold() for v in retired}
    # (never a retired name, nor part of one: "registry-mirror.ops.acme.dev" of the retired ":5000" address)
    named = [
        n
        for n in (n.rstrip(".") for n in re.findall(r"(?<![\w.#-])[A-Za-z][\w.]*(?:-[\w.]+)+", old))
        if not any(n.casefold() in g for g in gone)
    ]
    opening = _OPENING_SUBJECT.match(old)
    if opening and any(opening.group(1).casefold() in g for g in gone):
        opening = None  # "Goose runs against …" with goose retired: no subject to lead the rest
    out_of_date = " ".join(low[i] for i in changed)
    if subject and (subject.casefold() in gone or (subject.casefold() in out_of_date and values_in(subject))):
        # "task queue 用的 celery" with celery retired: the task queue; never the changed address itself
        head = _OPENING_ZH.match(old)
        subject = head.group(1).strip() if head else None
    subject = named[0] if named else subject or (opening.group(1) if opening else None)
    # (a subject is a name: "@tcp", read off a redacted DSN, is none)
    if (
        subject
        and len(subject) > 2
        and re.match(r"[A-Za-z\u4e00-\u9fff]", subject)
        and subject.casefold() not in ("it", "its")
    ):
        it = _LEADING_IT.match(rest)
        if it:  # "它的应用日志也是保留 90 天" -> "settle-service 的应用日志…", "it's built on" -> "gate is built on"
            said = "of" if it.group("of") else "is" if it.group("is") else ""
            glue = {"of": " 的"}.get(said, " ") if zh else {"of": "'s ", "is": " is "}.get(said, " ")
            rest = subject + glue + rest[it.end() :]
        elif (
            not zh
            and subject.casefold() not in re.sub(r"`[^`]*`", "", rest).casefold()
            and re.search(r"\bit\b(?!')", rest)
        ):
            # "Dave Kowalski owns it" -> "… owns billing-service" (not when the rest names it: its "it" is another thing)
            rest = re.sub(r"\bit\b(?!')", subject, rest, count=1)
        elif (
            subject.casefold() not in rest.casefold()
            and not _OWN_NAME.match(rest)
            and not _DEFINES.match(kept[0])
            and not _own_subject(kept[0], subject)  # "CH 集群归老王管" says whose the cluster is
        ):
            # "on-call 是阿杰" -> "billing-service：on-call 是阿杰"
            rest = f"{subject}：{rest}" if zh else f"{subject}: {rest}"
    if not zh and re.match(r"[a-z]+\s", rest):  # "grafana is https://…": a sentence of its own now
        rest = rest[0].upper() + rest[1:]
    return tidy(rest if rest.endswith(("。", ".", "!", "！")) else rest + ("。" if zh else "."))


# Chinese words of a subject, in English, so a code-switched correction finds its subject ("网关" ~ "gateway").
_GLOSSARY = {
    "网关": "gateway",
    "数据": "database",
    "缓存": "cache",
    "测试": "test",
    "用户": "user",
    "订单": "order",
    "告警": "alert",
    "报警": "alert",
    "日志": "log",
    "消息": "message",
    "队列": "queue",
    "部署": "deploy",
    "前端": "frontend",
    "后端": "backend",
    "后台": "backend",
    "接口": "api",
    "域名": "domain",
    "仓库": "repo",
    "分支": "branch",
    "支付": "payment",
    "推送": "push",
    "搜索": "search",
    "认证": "auth",
    "鉴权": "auth",
    "权限": "permission",
    "文档": "docs",
    "监控": "monitor",
    "存储": "storage",
    "镜像": "image",
    "导出": "export",
    "定时": "cron",
    "任务": "job",
    "框架": "framework",
    "限流": "limiter",
    "预发": "staging",
    "线上": "prod",
    "生产": "prod",
    "本地": "local",
    "开发": "dev",
    "登录": "login",
    "发布": "release",
    "构建": "build",
}
_GENERIC_SUBJECT = frozenset(
    """servi serve port app apps api the this that now there here value thing stuff setup uses
    using runs which behind since still every their other about into proxi point
    milli secon minut hours days utc gmt cet cest pst pdt est edt""".split()  # (a time zone says when)
)
# Stems that say where, not what (`subject_stems`): "the staging Grafana" is not what "the staging
# database" changed, though "runs on 3000 locally" is what "local dev uses 5173 now" changed.
ENVIRONMENT_STEMS = frozenset(
    "stagi stage stg produ prod dev devel local 预发 灰度 生产 线上 测试 开发 本地 环境".split()
)


_FUNCTION_ZH = re.compile(
    r"[的了在是已经那这个都还也就把被和与或不没用改换成到从现吧呢吗啊发套迁]|环境|服务|项目|配置|地址|端口|默认|监听|分钟|秒钟|小时"
)


def subject_stems(content: str, drop: set[str] = frozenset()) -> set[str]:
    """What a statement is about, as stems (words cut to five letters) with Chinese subjects put in
    English: less the words that only say how it is put, the generic ones and the values in `drop`."""
    low = content.casefold()
    for v in sorted(drop, key=len, reverse=True):
        low = low.replace(v, " ")
    words = {_stem5(w) for w in re.findall(r"[a-z][a-z0-9]{2,}", low) if w not in _TOPIC_STOP}
    short = re.findall(r"(?<![\w./-])[a-z]{2}(?![\w./-])", low)  # "CI 迁到 GitLab CI 了"
    words |= {w for w in short if w in _SHORT_SUBJECTS}
    for zh, en in _GLOSSARY.items():
        if zh in content:
            words.add(en[:5])
    words = {_SAME_STEM.get(w, w) for w in words}
    han = set()
    for run in re.findall(r"[\u4e00-\u9fff]{2,}", _ZH_WHEN.sub(" ", content)):
        han |= {run[i : i + 2] for i in range(len(run) - 1)}
    han = {b for b in han if b not in _TOPIC_STOP_ZH and b not in _GLOSSARY and not _FUNCTION_ZH.search(b)}
    return (words | han) - _GENERIC_SUBJECT - {""}


def _stem5(word: str) -> str:
    """A word cut to five letters, a plural's s dropped first (logs / log, queues / queue)."""
    return (word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)[:5]


# Two-letter words that name what a statement is about.
_SHORT_SUBJECTS = frozenset("ci cd db mq ui ux lb os pr".split())

# Stems of one subject: a release is a deploy ("No production deploys on Fridays" / "周五禁止生产发布");
# a weekday is the value of a schedule, not what it is about.
_SAME_STEM = {
    "produ": "prod",  # production (cut to five letters) is prod, as 生产 and 线上 say it
    "relea": "deplo",
    "ships": "deplo",
    "rollo": "deplo",
    "db": "datab",  # "DB 是 MySQL 8，在 10.20.3.15" is what "数据库迁到 10.20.5.21" changed
    **dict.fromkeys("monda tuesd wedne thurs frida satur sunda".split(), ""),
}


_ENVIRONMENTS = {
    "staging": r"\bstag(?:e|ing)\b|\bstg\b|预发|灰度",
    "prod": r"\bprod(?:uction)?\b|生产|线上|正式环境",
    "test": r"\btest(?:ing)? (?:env|environment|server|cluster|db|database)\b|\bqa\b|测试环境|测试库|测试服|测试集群",
    "dev": r"\bdev (?:env|environment|server|cluster|db)\b|开发环境|本地环境",
}


def environments(content: str) -> set[str]:
    """The environments a statement is about (staging, prod, test, dev), in either language."""
    return {name for name, rx in _ENVIRONMENTS.items() if re.search(rx, content, re.I)}


def other_environment(a: str, b: str) -> bool:
    """Whether two statements are about different environments ("staging Redis" / "prod Redis"): then
    one never changes the other, however many words they share."""
    ea, eb = environments(a), environments(b)
    return bool(ea and eb and not (ea & eb))
