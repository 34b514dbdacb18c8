# a2 — chaobiao, session 2 (mixed, 中英混写): tariff-engine 阶梯电价
META = {
    "id": "a2",
    "project": "chaobiao",
    "topic": "tiered_tariff",
    "order": 2,
    "language": "mixed",
    "branch": "feature/CB-231-tiered-tariff",
    "start": "2026-10-20T06:08:00.000Z",
    "title": "CB-231 tariff-engine 阶梯电价",
}

RECALL = (
    "<maple-memory>\n"
    "Memories for /home/dev/work/chaobiao (3):\n"
    '- #3 fact · config: "EMQX 地址 emqx.cb.internal:1883，明文 MQTT，没开 TLS"\n'
    '- #9 fact · config: "raw_readings 按月分区，保留 400 天"\n'
    '- #12 fact · convention: "export-worker 用 maatwebsite/excel 的 FromQuery 导出月报"\n'
    "</maple-memory>"
)

SPEC = """# CB-231 阶梯电价（居民）

## 背景
部分园区/小区的物业合同要求按居民阶梯电价结算，目前 tariff-engine 只支持单一电价。

## 规则
| 档位 | 年累计用电量 (kWh) | 单价 (元/kWh) |
|---|---|---|
| 第一档 | 0 – 2760 | 0.4883 |
| 第二档 | 2761 – 4800 | 0.5383 |
| 第三档 | > 4800 | 0.7883 |

- 按自然年累计，1 月 1 日清零。
- 月度账单按当月用电量落在的档位分段计价，一段用电跨档时拆开计算。
- 金额保留 2 位小数，四舍五入。
- 商业用电不走阶梯，沿用单一电价。

## 待定
- 读数跨计费周期时如何切分？
- 价格配置放哪里？

## 验收
- 财务给的 12 个样例户（见附件 CB-231-samples.xlsx）结果一致。
"""

TIER_CALC = r"""<?php

namespace App\Tariff;

final class TierCalculator
{
    public function __construct(private string $flatPrice) {}

    /** @return string 金额（元，2 位） */
    public function charge(string $kwh): string
    {
        return bcmul($kwh, $this->flatPrice, 2);
    }
}
"""

PEST_FAIL = r"""   FAIL  Tests\Tariff\TierCalculatorTest
  ✓ it charges the first tier only                                      0.01s
  ⨯ it splits a month that crosses tier 1 and tier 2                    0.01s
  ✓ it resets the yearly accumulation on january 1st                    0.01s
  ⨯ it uses the last reading before midnight at period boundary         0.02s

  ────────────────────────────────────────────────────────────────────────────
   FAILED  Tests\Tariff\TierCalculatorTest > it splits a month that crosses tier 1 and tier 2
  Failed asserting that two strings are identical.
  -'820.03'
  +'820.02'

  at tests/Tariff/TierCalculatorTest.php:58

  ────────────────────────────────────────────────────────────────────────────
   FAILED  Tests\Tariff\TierCalculatorTest > it uses the last reading before midnight at period boundary
  Failed asserting that two strings are identical.
  -'61.47'
  +'61.46'

  Tests:    2 failed, 25 passed (60 assertions)
  Duration: 0.93s"""

PEST_OK = r"""   PASS  Tests\Tariff\TierCalculatorTest
  ✓ it charges the first tier only                                      0.01s
  ✓ it splits a month that crosses tier 1 and tier 2                    0.01s
  ✓ it resets the yearly accumulation on january 1st                    0.01s
  ✓ it uses the last reading before midnight at period boundary         0.01s

   PASS  Tests\Tariff\SamplesFromFinanceTest
  ✓ it matches sample household #1 … #12                                 0.08s

  Tests:    27 passed (64 assertions)
  Duration: 0.88s"""

STEPS = [
    ("att", "SessionStart", RECALL),
    (
        "u",
        "今天搞 CB-231，tariff-engine 要支持阶梯电价。需求 doc 在 docs/tariff/CB-231.md，你先 read 一下。btw branch 我已经拉好了，naming 还是老规矩 feature/CB-xxx-short-desc，从 develop 拉，MR 合回 develop。",
    ),
    ("tool", "Read", {"file_path": "/home/dev/work/chaobiao/docs/tariff/CB-231.md"}, SPEC),
    ("tool", "Read", {"file_path": "/home/dev/work/chaobiao/tariff-engine/app/Tariff/TierCalculator.php"}, TIER_CALC),
    (
        "a",
        "doc 看完了，现在的 TierCalculator 只有单一电价。有两个点 doc 里标了待定，先跟你确认：\n\n一段读数跨了计费周期（比如 9/28 之后下一条读数是 10/3 才来），这段电量怎么切到两个月？\na) 按天数线性拆分\nb) 按周期边界 0 点附近的实际读数切：\n   b1) 取 0 点前最后一条读数\n   b2) 取 0 点后第一条读数\nc) 整段算到结束的那个月\n\n另外阶梯价本身放哪：MySQL 里建一张 tariff_tiers 表，还是写在 config/tariff.php？",
    ),
    ("u", "b1。价格放表。"),
    (
        "a",
        "好。确认一下理由，免得后面有人改回去：a 实现最简单，为什么不用？另外价格放 tariff_tiers 表，我猜是因为各小区价格不一样、要让物业在后台自己改？",
    ),
    (
        "u",
        "对，就是这个，每个小区的物业合同价都不一样，有的还是商业电价。a 不行是因为物业对账是拿表上显示的读数拍照核对的，线性拆出来的数跟照片对不上，每个月都要扯皮。",
    ),
    (
        "tool",
        "Write",
        {
            "file_path": "/home/dev/work/chaobiao/tariff-engine/database/migrations/2026_10_20_000001_create_tariff_tiers_table.php",
            "content": "<?php\n\nuse Illuminate\\Database\\Migrations\\Migration;\nuse Illuminate\\Database\\Schema\\Blueprint;\nuse Illuminate\\Support\\Facades\\Schema;\n\nreturn new class extends Migration {\n    public function up(): void\n    {\n        Schema::create('tariff_tiers', function (Blueprint $t) {\n            $t->id();\n            $t->unsignedBigInteger('community_id')->index();\n            $t->string('kind', 16); // resident | commercial\n            $t->unsignedTinyInteger('tier');\n            $t->decimal('from_kwh', 12, 3);\n            $t->decimal('to_kwh', 12, 3)->nullable();\n            $t->decimal('price', 8, 4);\n            $t->date('effective_from');\n            $t->timestamps();\n            $t->unique(['community_id', 'kind', 'tier', 'effective_from']);\n        });\n    }\n};\n",
        },
        "",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/tariff-engine/app/Tariff/TierCalculator.php",
            "old_string": "    public function charge(string $kwh): string\n    {\n        return bcmul($kwh, $this->flatPrice, 2);\n    }",
            "new_string": "    public function charge(string $yearToDateKwh, string $kwh, TierTable $tiers): string\n    {\n        $total = '0';\n        foreach ($tiers->slices($yearToDateKwh, $kwh) as [$sliceKwh, $price]) {\n            $total = bcadd($total, bcmul($sliceKwh, $price, 2), 2);\n        }\n        return $total;\n    }",
        },
        "",
    ),
    (
        "tool",
        "Bash",
        {"command": "cd tariff-engine && ./vendor/bin/pest tests/Tariff", "description": "Run tariff tests"},
        PEST_FAIL,
        {"error": True, "exit": 1},
    ),
    (
        "a",
        "两个用例都差 1 分：`bcmul('1523.37', '0.5383', 2)` 得到 820.02，期望 820.03。bcmath 不做四舍五入，超出 scale 的位直接截断。我加一个 `Money::roundHalfUp()`：每段先用 scale 6 算，汇总后再按 2 位四舍五入。",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/tariff-engine/app/Tariff/TierCalculator.php",
            "old_string": "            $total = bcadd($total, bcmul($sliceKwh, $price, 2), 2);\n        }\n        return $total;",
            "new_string": "            $total = bcadd($total, bcmul($sliceKwh, $price, 6), 6);\n        }\n        return Money::roundHalfUp($total, 2);",
        },
        "",
    ),
    (
        "tool",
        "Bash",
        {"command": "cd tariff-engine && ./vendor/bin/pest tests/Tariff", "description": "Rerun tariff tests"},
        PEST_OK,
    ),
    (
        "u",
        "nice. 另外 meter-gateway 那边的 integration test 要连 EMQX，btw EMQX 上周切 TLS 了，现在是 8883，CA 证书在 /etc/chaobiao/certs/emqx-ca.pem。local 的 .env 我贴给你：\n```\nMQTT_HOST=emqx.cb.internal\nMQTT_PORT=8883\nMQTT_USERNAME=cb-gateway\nMQTT_PASSWORD=hT4!vQz9pLm2#wX\nMQTT_CA_FILE=/etc/chaobiao/certs/emqx-ca.pem\n```\n还有个 vendor 的坑，parse 的时候注意：华立的表 energy 字段是 0.01 kWh 为单位的整数，威胜的直接是 kWh 的小数字符串，按 vendor 分开处理，别统一除 100。我们 fixture 造数据的时候也一样。",
    ),
    (
        "tool",
        "Grep",
        {
            "pattern": "energy",
            "path": "/home/dev/work/chaobiao/meter-gateway/app/Parser",
            "output_mode": "content",
            "-n": True,
        },
        "meter-gateway/app/Parser/HolleyParser.php:41:        $kwh = bcdiv((string) $frame['energy'], '100', 2);\nmeter-gateway/app/Parser/WasionParser.php:37:        $kwh = bcadd($frame['energy'], '0', 3);",
    ),
    (
        "a",
        "确认了：HolleyParser 里已经除以 100，WasionParser 直接用原值，两边现在都是对的。tariff 的 fixture 我按同样的规则造。",
    ),
    ("a", "还有一件事：按年累计阶梯要往回查最多 12 个月的读数，我顺手确认下 raw_readings 的保留期够不够。"),
    (
        "tool",
        "Read",
        {"file_path": "/home/dev/work/chaobiao/reading-api/config/retention.php"},
        "<?php\n\nreturn [\n    // raw_readings 按月分区，超过保留期的分区由 readings:prune-partitions 删除\n    'raw_readings_days' => (int) env('RAW_READINGS_RETENTION_DAYS', 730),\n    'alarm_events_days' => (int) env('ALARM_EVENTS_RETENTION_DAYS', 180),\n];\n",
    ),
    (
        "a",
        "config/retention.php 里 raw_readings_days 默认是 730，但我这边记的是保留 400 天，对不上。现在以哪个为准？按年累计只需要 365 天，两个值都够用，只是想确认一下。",
    ),
    (
        "u",
        "730 对的，审计那边要求留两年，400 天是老规矩了。prune 的脚本也是读这个 config，不用动。\n\n对了 export 那边我们已经不用 maatwebsite/excel 了，月报一大内存就爆，换成 openspout 了，流式写 xlsx。你要是在老代码里碰到以前的 export class 直接删掉就行。",
    ),
    (
        "tool",
        "Bash",
        {
            "command": 'git add tariff-engine && git commit -m "[tariff] feat: 阶梯电价 tariff_tiers，跨周期按 0 点前最后一条读数切分"',
            "description": "Commit tiered tariff",
        },
        "[feature/CB-231-tiered-tariff 2d7f0b4] [tariff] feat: 阶梯电价 tariff_tiers，跨周期按 0 点前最后一条读数切分\n 6 files changed, 241 insertions(+), 9 deletions(-)",
    ),
    (
        "u",
        "今天中午食堂又是土豆炖土豆 😂\n\n问个事，.env.example 里 OSS 那个 key 是不是误提交了真实值？我看到 OSS_ACCESS_KEY_SECRET=Lt9kR2vX8mQ4nB7cZ1yW5eH3jD6fA0 这一串，感觉像真的。顺便问下 hyperf 的 MySQL 连接池默认多大来着？",
    ),
    (
        "tool",
        "Bash",
        {
            "command": "git log --oneline -S 'OSS_ACCESS_KEY_SECRET=Lt9' -- export-worker/.env.example",
            "description": "Find the commit that added the OSS secret",
        },
        "a1f93e2 [export] chore: 补 OSS 配置项",
    ),
    (
        "a",
        "是真实值，3 周前 a1f93e2 提交进来的。光删文件不够，git 历史里还在，建议先去阿里云控制台把这对 AccessKey 轮换掉，再把 .env.example 改成占位符。\n\nHyperf 的连接池：databases.php 里 pool.max_connections 默认 10，min_connections 1，每个 worker 进程各一个池。",
    ),
    ("u", "ok 我去找阿凯轮换。今天就到这。"),
    ("a", "好，.env.example 的占位符我先不动，等轮换完你说一声。"),
    ("stop",),
]

A1 = "a1_chaobiao_leak_alarm"
GOLD = {
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "分支命名 feature/CB-xxx-short-desc（带 CB 工单号），从 develop 拉，MR 合回 develop。",
            "must": ["feature/CB-", "develop"],
        },
        {
            "id": "e2",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "读数跨计费周期时按周期边界切分，取 0 点前最后一条读数（选项 b1），而不是按天数线性拆分，因为物业对账是拿表上显示的读数拍照核对的，线性拆分的数对不上。",
            "must": ["0 点前最后一条"],
            "chosen": "0 点前最后一条",
            "over": ["线性拆分"],
            "why": ["拍照核对"],
        },
        {
            "id": "e3",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "阶梯电价放在 MySQL 的 tariff_tiers 表（按小区），不写在 config/tariff.php：每个小区的物业合同价不同，要让物业在后台自己改。",
            "must": ["tariff_tiers"],
            "chosen": "tariff_tiers",
            "over": ["config/tariff.php"],
            "why": ["后台"],
        },
        {
            "id": "e4",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "EMQX 已切 TLS，端口 8883，CA 证书在 /etc/chaobiao/certs/emqx-ca.pem（MQTT_CA_FILE）。",
            "must": ["8883"],
            "supersedes": A1 + "#e1",
        },
        {
            "id": "e5",
            "layer": "experience",
            "kind": "gotcha",
            "lang": "zh",
            "text": "电表厂商差异：华立的表 energy 字段是 0.01 kWh 为单位的整数（要除以 100），威胜的直接是 kWh 小数字符串；解析和造 fixture 都要按 vendor 分开处理。",
            "must": ["0.01 kWh"],
        },
        {
            "id": "e6",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "raw_readings 保留 730 天（两年，审计要求），config/retention.php 的 raw_readings_days / RAW_READINGS_RETENTION_DAYS，prune 脚本读这个配置。",
            "must": ["730"],
            "supersedes": A1 + "#e9",
        },
        {
            "id": "e7",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "export-worker 月报已改用 openspout 流式写 xlsx（不再用 maatwebsite/excel，内存扛不住）；老的 export class 直接删。",
            "must": ["openspout"],
            "supersedes": A1 + "#e12",
        },
    ],
    "acceptable": [
        {
            "must": ["截断"],
            "note": "bcmath 不四舍五入、直接截断；tariff-engine 用 Money::roundHalfUp（通用 PHP 行为，记下也可以）",
        },
        {"must": ["roundHalfUp"], "note": "金额每段 scale 6 计算、汇总后按 2 位四舍五入"},
        {"must": ["第二档"], "note": "阶梯档位本身（在需求文档和 tariff_tiers 表里）"},
        {"must": ["合同价"], "note": "e3 的理由补充"},
    ],
    "forbidden": [
        "emqx.cb.internal:1883",
        "保留 400 天",
        "maatwebsite/excel 的 FromQuery",
        "土豆炖土豆",
        "max_connections",
        "a1f93e2",
        "2d7f0b4",
        "25 passed",
        "27 passed",
        "820.02",
    ],
    "secrets": [
        "hT4!vQz9pLm2#wX",
        "Lt9kR2vX8mQ4nB7cZ1yW5eH3jD6fA0",
    ],
}
