"""Chinese personal names: a common surname and one or two given-name characters, where the
sentence means a person.

No dictionary and no segmenter: this runs on every write and every prompt (jieba's posseg costs
seconds to load and tags 张量 a name). A surname followed by one or two characters is a name only in
a person's place in the sentence:
- before what people do: 陈爱丽负责…, 李博决定…, 王芳说…, 张伟建议…, 赵磊是订单服务的负责人;
- after words that take a person: 跟孙悦确认, 问周杰吧, 找吴敏, 让郑浩把…, @黄晓明, 由杨帆和徐静负责;
- with a title: 老王, 小李, 王总, 张工, 刘洋老师 (the name is 刘洋), 李老师;
- beside a Latin name in brackets: Alice Chen（陈爱丽）, 陈爱丽 (Alice).
Words that only begin with a surname character (高性能, 周末, 张量, 方案, 于是, 安全, 任务...) are
listed (`_WORDS`); a given name holds no grammar character (的, 了, 是, 在...). Measured on
tests/data/zh_names.json, written before this rule (tests/test_zh_names.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from memory.lang.text import CJK_RUN

# Common single surnames (the most frequent few hundred, less those that are mostly a grammar word
# or half of common words and rare as a surname: 和 时 明 全 商 师 查 单 解 连 路 车 管 党 司 …).
SURNAMES = frozenset(
    """王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈
姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫阎段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤常
温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕季裴霍涂成
苗谷盛曲翁冉骆蓝辛靳柴蒙鲍华喻祁蒲房滕屈饶牟艾尤阳穆卓古吉缪简芦麦褚娄窦戚岑景宫费卜冷晏席卫米柏宗瞿桂佟应
臧闵苟邬卞姬仇栾隋刁沙荣巫寇桑郎甄仲虞敖巩佘苑迟邝洪"""
)
COMPOUND_SURNAMES = frozenset(
    """欧阳 司马 诸葛 上官 东方 皇甫 令狐 慕容 司徒 尉迟 公孙 宇文 长孙 夏侯 轩辕 端木 独孤 南宫 西门 呼延 申屠
澹台 闻人 太史 百里 钟离 万俟 第五 公冶 濮阳 淳于 单于 赫连""".split()
)
# Surnames as they are written in Latin letters (pinyin, and the common Cantonese and older
# spellings): what lets "Alice Chen (爱丽)" say that 陈爱丽 is Alice Chen.
_ROMAN = {
    "王": "wang wong",
    "李": "li lee",
    "张": "zhang chang cheung",
    "刘": "liu lau",
    "陈": "chen chan",
    "杨": "yang yeung",
    "黄": "huang wong",
    "赵": "zhao chiu",
    "吴": "wu ng",
    "周": "zhou chou chow",
    "徐": "xu hsu tsui",
    "孙": "sun",
    "马": "ma",
    "朱": "zhu chu",
    "胡": "hu wu",
    "郭": "guo kwok",
    "何": "he ho",
    "高": "gao ko",
    "林": "lin lam",
    "罗": "luo law",
    "郑": "zheng cheng",
    "梁": "liang leung",
    "谢": "xie tse",
    "宋": "song sung",
    "唐": "tang tong",
    "许": "xu hsu hui",
    "韩": "han",
    "冯": "feng fung",
    "邓": "deng tang",
    "曹": "cao tso",
    "彭": "peng pang",
    "曾": "zeng tsang",
    "肖": "xiao",
    "田": "tian",
    "董": "dong tung",
    "袁": "yuan",
    "潘": "pan poon",
    "于": "yu",
    "蒋": "jiang chiang",
    "蔡": "cai tsai choi",
    "余": "yu yue",
    "杜": "du",
    "叶": "ye yip",
    "程": "cheng ching",
    "苏": "su so",
    "魏": "wei",
    "吕": "lv lu lui",
    "丁": "ding",
    "任": "ren yam",
    "沈": "shen shum",
    "姚": "yao",
    "卢": "lu lo",
    "姜": "jiang",
    "崔": "cui choi",
    "钟": "zhong chung",
    "谭": "tan tam",
    "陆": "lu luk",
    "汪": "wang",
    "范": "fan",
    "金": "jin kim",
    "石": "shi",
    "廖": "liao liu",
    "贾": "jia",
    "夏": "xia",
    "韦": "wei",
    "方": "fang fong",
    "白": "bai",
    "邹": "zou",
    "孟": "meng",
    "熊": "xiong",
    "秦": "qin",
    "邱": "qiu yau",
    "江": "jiang kong",
    "尹": "yin wan",
    "薛": "xue",
    "段": "duan",
    "雷": "lei",
    "侯": "hou",
    "龙": "long lung",
    "史": "shi",
    "陶": "tao",
    "黎": "li lai",
    "贺": "he",
    "顾": "gu koo",
    "毛": "mao",
    "郝": "hao",
    "龚": "gong kung",
    "邵": "shao",
    "万": "wan",
    "钱": "qian chin",
    "严": "yan yim",
    "武": "wu",
    "戴": "dai tai",
    "莫": "mo mok",
    "孔": "kong hung",
    "向": "xiang",
    "汤": "tang tong",
    "常": "chang",
    "温": "wen wan",
    "康": "kang hong",
    "施": "shi sze",
    "文": "wen man",
    "葛": "ge",
    "安": "an",
    "齐": "qi",
    "易": "yi",
    "乔": "qiao",
    "颜": "yan",
    "庄": "zhuang chong",
    "章": "zhang",
    "鲁": "lu",
    "岳": "yue",
    "关": "guan kwan",
    "焦": "jiao",
    "俞": "yu",
    "柳": "liu",
    "包": "bao",
    "宁": "ning",
    "舒": "shu",
    "柯": "ke",
    "梅": "mei mui",
    "童": "tong",
    "凌": "ling",
    "成": "cheng",
    "盛": "sheng",
    "蓝": "lan",
    "华": "hua wah",
    "艾": "ai",
    "欧阳": "ouyang auyeung",
    "司马": "sima",
    "诸葛": "zhuge",
    "上官": "shangguan",
}
ROMANISED: dict[str, tuple[str, ...]] = {}  # "chen" -> ("陈",)
for _s, _latin in _ROMAN.items():
    for _r in _latin.split():
        ROMANISED[_r] = (*ROMANISED.get(_r, ()), _s)

# Words that begin with a surname character (and a few with 老/小 before one): never a name.
_WORDS = frozenset(
    """王道 王国 王者 王牌 王子 李子 张量 张贴 张开 张力 刘海 陈旧 陈述 陈列 陈设 杨树 杨柳 黄金 黄色 黄页 黄牌
黄昏 黄油 周末 周报 周期 周会 周边 周到 周围 周转 周年 周全 周密 周一 周二 周三 周四 周五 周六 周日 周天 徐徐 孙子
马上 马虎 马达 马路 马力 马甲 朱红 胡说 胡乱 胡同 胡子 何时 何必 何况 何处 何种 何在 何等 何以 何为 高性 高并 高可 高活
高级 高效 高度 高速 高峰 高层 高手 高兴 高温 高优 高危 高频 高端 高清 高低 高于 高考 高中 高新 高价 高亮 高斯 高阶
林立 林业 罗列 罗盘 郑重 梁柱 谢谢 谢绝 宋体 唐突 许多 许可 许久 许诺 韩文 彭湃 曾经 曾是 曾用 肖像 田野 田地 董事
于是 于此 于今 于事 余额 余下 余量 余数 余地 余弦 杜绝 叶子 叶片 叶节 程序 程度 程式 苏醒 丁点 任务 任何 任意 任性
任职 任期 任命 钟头 钟表 钟点 陆续 陆地 汪洋 范围 范例 范式 范畴 范本 金额 金钱 金融 金属 金色 金牌 金丝 石头 石油
夏天 夏季 夏令 付款 付费 付出 付钱 付清 方案 方法 方式 方向 方面 方便 方才 方块 方框 方言 方针 方程 方差 白名 白天
白色 白板 白费 白屏 白盒 白话 白皮 白白 熊猫 江湖 江山 江河 段落 段位 段错 雷达 雷同 雷区 龙头 龙卷 史诗 史上 史料
陶瓷 黎明 贺卡 贺电 顾客 顾问 顾虑 顾及 顾名 顾全 毛病 毛利 毛坯 毛刺 毛重 万一 万能 万分 万事 万物 万个 万条 万行
万次 万元 万级 万万 钱包 钱款 严重 严格 严谨 严禁 严密 严肃 武器 武断 莫名 莫非 莫过 向量 向导 向上 向下 向前 向后
向外 向内 向来 向着 向左 向右 常用 常见 常量 常规 常数 常驻 常态 常识 常年 常常 温度 温和 温习 温馨 康复 施工 施加
施行 施展 文件 文档 文本 文字 文章 文案 文化 文明 文法 文艺 安全 安装 安排 安静 安心 安卓 安稳 安置 安检 齐全 齐心
易用 易读 易错 易于 易懂 乔迁 庞大 庞杂 颜色 颜值 庄重 章节 章程 鲁棒 鲁莽 申请 申报 申明 欧元 欧洲 欧美 耿直 关闭
关键 关系 关于 关注 关联 关掉 关心 关机 关口 焦点 焦虑 左边 左侧 左右 左移 左连 祝贺 祝福 包含 包括 包装 包管 包名
包体 宁可 宁愿 尚未 尚且 尚可 符号 符合 舒服 舒适 纪律 纪要 纪念 童工 童年 童话 凌晨 毕竟 毕业 季度 季节 涂改 涂层
成本 成功 成员 成为 成熟 成果 成立 成绩 成型 成品 成对 成批 成千 苗头 谷歌 盛行 曲线 曲折 蓝色 蓝牙 蓝绿 蓝图 辛苦
华为 华丽 房间 房子 艾特 尤其 尤为 阳光 卓越 古老 古怪 吉利 吉祥 简单 简洁 简化 简介 简历 简称 简直 麦克 费用 费时
费力 费劲 冷启 冷备 冷数 冷却 冷门 冷静 卫生 卫星 宗旨 应用 应该 应当 应对 应答 应急 应付 应聘 应有 边界 刁难 沙箱
沙盒 沙发 白帽 蒙版 蓝屏 孔径 曲面 荣幸 荣誉 甄别 仲裁 巩固 迟到 迟早 迟缓 迟迟 洪水 景点 宫格 柏林 米饭 卜卦 席位 晏起 东方财 上官网 百里挑
小时 小于 小米 小程 小白 小丁 小康 小吃 小费 小说 小写 小组 小结 小节 小区 小数 小幅 小型 小心 小额 小将 老化 老旧
老大 老是 老实 老家 老乡 老手 老虎 老鼠 老黄 老牛 老马 老子 老娘""".split()
)
# Characters that are grammar, not a given name: a name holds none of these.
_NOT_GIVEN = frozenset(
    "的地得了着过是在有和与跟也都就不没无这那哪个们我你他她它说要会能把被让给对从为而或但所如因里上下中内外"
    "一二三几多少些每各该此其之于以等再还又才已很太更最只并将到做用看想吗呢吧啊呀嘛啦么什怎谁请找问去来"
    "写提改删跑查批搞拿管"
)
# Before the name: words that take a person after them (跟孙悦确认, 问周杰, 让郑浩, 由杨帆负责).
_BEFORE = (
    "分配给|指派给|转交给|交给|转给|告诉|通知|联系|感谢|谢谢|抄送|提醒|恭喜|欢迎|一下|以及|"
    "同事|经理|组长|主管|总监|负责人|运维|产品|前端|后端|开发|测试|实习生|新人|客户|"
    "和|跟|与|同|及|问|找|让|叫|请|给|由|被|向|把|是|、|@|＠"
)
_BEFORE_CUES = tuple(_BEFORE.split("|"))


def _cued(before: str) -> bool:
    """Whether `before` ends with a word that takes a person after it."""
    tail = before.rstrip()[-8:]
    if tail.endswith(_BEFORE_CUES):
        return True
    low = tail.lower()  # cc 宋佳, ping 王芳, ask 李博: whole words
    return any(low.endswith(w) and not low[: -len(w)][-1:].isalpha() for w in ("cc", "ping", "ask"))


# After the name: what a person does (陈爱丽负责, 王芳说, 赵磊是订单服务的负责人), an adverb allowed
# between. Literal words tested with str.startswith: one regular expression of them all took tens of
# milliseconds to compile, on every import by the prompt hook.
_ADVERBS = tuple(
    "刚刚 已经 之前 昨天 今天 明天 上周 一直 打算 准备 正在 没有 亲自 也 又 还 都 就 刚 再 先 会 要 想 在 不 没".split()
)
_VERBS = tuple(
    """负责 决定 建议 提到 提出 提议 认为 觉得 同意 反对 批准 审批 确认 发现 指出 表示 提醒 要求 希望 在管 主导 牵头
跟进 接手 维护 修复 修好 回复 答应 安排 补充 强调 解释 承认 担心 怀疑 推荐 总结 汇报 报告 申请 值班 评审 主持 处理
排查 调查 整理 编写 开发 设计 实现 测试 部署 上线 发布 合并 提交 重构 优化 修改 更新 升级 迁移 配置 搭建 对接 沟通
协调 讨论 知道 了解 熟悉 请假 休假 出差 离职 入职 加入 说""".split()
)
_NOT_VERBS = ("说明", "说法", "负责人")  # 文件说明, 任务负责人: nouns
_LATIN_VERB = (
    r"(?i:reviews?|reviewed|owns?|owned|leads?|led|says?|said|approved?|approves|wrote|writes|fixed|fixes|"
    r"merged|merges|asked|asks|suggested|suggests|thinks|mentioned|is on call|is the owner|is responsible|"
    r"handles|handled|maintains|will)\b"
)
# Patterns with Chinese characters in a character class cost a millisecond or more each to compile
# (a bitmap of the whole plane): kept as strings, compiled (and cached by `re`) on first use, only
# when the text can need them. The prompt hook imports this module for every prompt.
_IS_ROLE = r"是[^。！？!?\n]{0,24}?的(?:负责人|owner|Owner|组长|经理|主管|leader|lead|同事|作者|维护者|架构师)"
# A time word after a name makes it the subject too: 黄磊昨天把连接池调大了, 小陈今天请假.
_TIMES = tuple("昨天 今天 明天 前天 刚才 刚刚 上周 下周 本周 这周 早上 上午 中午 下午 晚上 最近 之前 后来 已经".split())
_TITLE_AFTER = ("老师", "经理", "总监", "博士", "师傅", "总", "工")
_TITLE_ENDS = frozenset(t[-1] for t in _TITLE_AFTER)
_CODE_BEFORE = frozenset("_`")  # user_张伟, `张伟: an identifier or a code span (owner是何静 is a name)


def _verb(after: str) -> bool:
    """Whether `after` starts with what a person does (a verb, 是…的负责人)."""
    if after.startswith(_VERBS):
        return not after.startswith(_NOT_VERBS)
    if after[:1] == "是":
        return bool(re.match(_IS_ROLE, after))
    return after[:1].isascii() and after[:1].isalpha() and bool(re.match(_LATIN_VERB, after))


def _does(after: str) -> bool:
    """Whether `after` (what follows a name) says the name is someone doing something: a verb,
    perhaps after an adverb (王芳已经批准, 陈爱丽 负责), or a time word (黄磊昨天把…)."""
    after = after.lstrip()
    if _verb(after) or after.startswith(_TIMES):
        return True
    for adverb in _ADVERBS:
        if after.startswith(adverb) and _verb(after[len(adverb) :].lstrip()):
            return True
    return False


def _ends(after: str) -> bool:
    """Whether a name may end where `after` starts: at the end of the text or of a run of Chinese
    characters, at a grammar character, or before a verb, a time word, 一起 / 一下 or a title."""
    if not after or not ("\u4e00" <= after[0] <= "\u9fff"):
        return not after[:1].isdigit() and after[:1] != "_"
    return after[0] in _NOT_GIVEN or after.startswith(_STOPS) or _verb(after)


_STOPS = ("一起", "一下", *_TIMES, *_TITLE_AFTER)
_MEASURE, _COUNTING = frozenset("张段包万"), frozenset("一二两三四五六七八九十百千几每这那哪整某多半")
_CUE_CHARS = frozenset("和跟与同及问找让叫请给由被向把是")  # 向张伟汇报: 向 is a surname too, here the cue
# Beside a Latin name in brackets: Alice Chen（陈爱丽）, 陈爱丽 (Alice), 陈爱丽（Alice Chen, A. Chen）.
_LATIN_NAME = r"(?:[A-Z](?:[a-z]+|\.)(?:[ \t]*[A-Z](?:[a-z]+|\.)){0,2}|@[A-Za-z][\w-]{1,38})"
_AFTER_LATIN = rf"(?<![\w.])(?:{_LATIN_NAME})[ \t]*[（(][^()（）\n]{{0,40}}$"
_INSIDE_END = r"\s*[)）,，、/;；]"
_BEFORE_LATIN = (
    rf"[ \t]*[（(]\s*(?:(?:英文名字?|英文|花名|昵称|外号|账号|登录名)\s*[:：是]?\s*)?{_LATIN_NAME}\s*[)）,，、/;；]"
)
_CALLED_AFTER = r"叫(?:他|她)|外号|花名|人称|英文名|账号|登录名"
_BEFORE_NICK = r"[ \t]*[（(]\s*([\u4e00-\u9fff]{2})\s*[)）,，、/;；]"  # 林浩（浩哥，haolin）


@lru_cache(maxsize=4096)
def split(name: str) -> tuple[str, str] | None:
    """(surname, given name) of a 2-4 character name, or None when it starts with no surname."""
    if name[:2] in COMPOUND_SURNAMES and 1 <= len(name) - 2 <= 2:
        return name[:2], name[2:]
    if name[:1] in SURNAMES and 1 <= len(name) - 1 <= 2:
        return name[:1], name[1:]
    return None


@lru_cache(maxsize=4096)
def nickname_of(nick: str, full: str) -> bool:
    """Whether `nick` is what people call the person named `full`: 老 / 小 / 大 + the surname (老周),
    阿 / 小 + a character of the given name (阿杰, 小雨), a character of the given name + 哥 / 姐 (浩哥, 婉姐),
    or the given name doubled (雨雨)."""
    parts = split(full)
    if parts is None or len(nick) != 2:
        return False
    surname, given = parts
    return (
        (nick[0] in "老小大" and nick[1] == surname)
        or (nick[0] in "阿小" and nick[1] in given)
        or (nick[0] == nick[1] and nick[0] in given)
        or (nick[1] in "哥姐" and nick[0] in given)
    )


def plausible(name: str) -> bool:
    """A surname and a given name of one or two characters, none of them grammar, not a word."""
    parts = split(name)
    if parts is None or not _NOT_GIVEN.isdisjoint(parts[1]):
        return False
    return name[:2] not in _WORDS and name[:3] not in _WORDS


def by_surname(name: str) -> bool:
    """老周, 小王: what a team calls someone by the surname (老 always: 老黄, 老马; 小 unless the two
    characters are a word: 小米, 小于, 小程)."""
    return len(name) == 2 and name[1] in SURNAMES and (name[0] == "老" or (name[0] == "小" and name not in _WORDS))


def titled(name: str) -> str | None:
    """刘洋老师 -> 刘洋, 李老师 -> 李老师, 王总 -> 王总: the name a title stands with, or None."""
    if name[-1] not in _TITLE_ENDS:
        return None
    for t in _TITLE_AFTER:
        if name.endswith(t) and len(name) > len(t):
            person = name[: -len(t)]
            if len(person) == 1 and person in SURNAMES and name not in _WORDS and name[:2] not in _WORDS:
                return name  # 王总, 张工, 李老师: as the team calls them
            if len(person) >= 2 and plausible(person):
                return person
    return None


_WINDOW = 120  # characters either side of a name that its context is read from
_STARTS = SURNAMES | {c[0] for c in COMPOUND_SURNAMES} | {"老", "小"}


def find(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, start, end) of each Chinese personal name `text` writes in a person's place."""
    taken_to = 0  # names are found left to right: one may not overlap the last
    for m in CJK_RUN.finditer(text):
        run, base = m.group(0), m.start()
        if base > 0 and text[base - 1] in _CODE_BEFORE:
            continue
        for i in range(len(run) - 1):
            if run[i] not in _STARTS or run[i : i + 2] in _WORDS:
                continue  # most characters start no name; 高性能, 周末, 方案 start a word
            found = _at(text, run, base, i)
            if found and found[1] >= taken_to:
                taken_to = found[2]
                yield found


def _at(text: str, run: str, base: int, i: int) -> tuple[str, int, int] | None:
    """The name that starts at `run[i]` (`run` starting at `text[base]`), if one does."""
    if i >= len(run) - 1:
        return None
    before = text[max(0, base + i - _WINDOW) : base + i]  # windows: a 4 MB prompt stays linear
    cue = _cued(before)
    if run[i] in "老小" and run[i + 1] in SURNAMES and run[i : i + 2] not in _WORDS:
        # 老王 / 小李: a title before a surname, standing alone.
        if (i == 0 or run[i - 1] not in "老小大") and _ends(text[base + i + 2 : base + i + 2 + _WINDOW]):
            return run[i : i + 2], base + i, base + i + 2
        return None
    for n in (4, 3, 2):  # the longest name that fits, then shorter
        cand = run[i : i + n]
        if len(cand) < n:
            continue
        if cand[0] in _MEASURE and i > 0 and run[i - 1] in _COUNTING:
            return None  # 每张分表, 一段日志: a measure word, not a surname
        if cand[0] in _CUE_CHARS and not cue and plausible(cand[1:]):
            return None  # 向张伟汇报: the name starts after 向
        person = titled(cand)
        if person is None and not plausible(cand):
            continue
        start, end = base + i, base + i + n
        after = text[end : end + _WINDOW]
        full = person is None and len(split(cand)[1]) == 2  # 陈爱丽, 欧阳娜娜: surname and two characters
        placed = (
            (_does(after) and (i == 0 or cue or _mid_run_ok(run, i, n)))
            or ((cue or (person and i == 0)) and _ends(after))
            or (full and (i == 0 or cue) and after.startswith("的"))
            or (_in_brackets(before) and re.search(_AFTER_LATIN, before) and re.match(_INSIDE_END, after))
            or (after.lstrip(" \t")[:1] in ("(", "（") and re.match(_BEFORE_LATIN, after))
            or ((m := re.match(_BEFORE_NICK, after)) is not None and nickname_of(m.group(1), cand))
            # "郑国强，大家叫他老郑，账号 gqzheng": a full name opening a text that goes on to say what they are called
            or (full and base + i == 0 and after[:1] in "，," and re.search(_CALLED_AFTER, after[:40]) is not None)
            or (i == 0 and after[:1] in ("和", "与", "跟", "、") and _at(text, run, base, i + n + 1) is not None)
        )
        if placed:
            return person or cand, start, end
    return None


_GRAMMAR_BEFORE = frozenset("的了着过是在和与跟也都就把被让给对从而或但所以因此还又才里后时前")


def _in_brackets(before: str) -> bool:
    tail = before[-42:]
    return "(" in tail or "（" in tail


def _mid_run_ok(run: str, i: int, n: int) -> bool:
    """A name inside a run of characters: after a time word or a grammar character (昨天高远说,
    所以王芳说), not inside a word (支付网关最近: 付网 is no name), and no longer name one before."""
    if not (run[i - 1 : i] in _GRAMMAR_BEFORE or run[max(0, i - 2) : i] in _TIMES):
        return False
    return not (split(run[i - 1 : i + n]) and plausible(run[i - 1 : i + n]))


def with_surname(given: str, latin: str) -> list[str]:
    """陈爱丽 for 爱丽 and "Alice Chen": the full names a Chinese given name makes with the surname
    of a Latin name. None when the surname is unclear (Wang Lei, Liu Yang: both words could be
    one), or when `given` is a full name already or a nickname (磊哥, 大伟, 小李)."""
    if not 1 <= len(given) <= 2 or not all("\u4e00" <= c <= "\u9fff" for c in given) or split(given):
        return []
    if given[0] in "大小老阿" or given[-1] in "哥姐总工":
        return []
    words = latin.casefold().split()
    surnames = [w for w in (words[0], words[-1]) if w in ROMANISED] if len(words) >= 2 else []
    if len(surnames) != 1:
        return []
    return [s + given for s in ROMANISED[surnames[0]]]
