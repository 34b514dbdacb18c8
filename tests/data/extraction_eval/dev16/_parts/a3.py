# a3 — chaobiao, session 3 (zh): 离线告警风暴 + 一批更正
META = {
    "id": "a3",
    "project": "chaobiao",
    "topic": "offline_storm",
    "order": 3,
    "language": "zh",
    "branch": "fix/offline-alarm-storm",
    "start": "2026-11-03T02:21:00.000Z",
    "title": "meter-gateway 离线告警风暴",
}

RECALL = (
    "<system-reminder>\n<maple-memory>\n"
    '- #7 fact · preference: "meter-gateway 由老钱（钱国栋）负责，改协议解析前先跟他打招呼"\n'
    '- #2 fact · config: "alarm-worker 跑在 Horizon 上，消费 q_alarm 队列"\n'
    '- #14 fact · config: "离线判定阈值 OFFLINE_AFTER_MINUTES=90"\n'
    '- #10 fact · config: "export-worker 月报 cron 是 0 2 1 * *（每月 1 号凌晨 2 点）"\n'
    "</maple-memory>\n</system-reminder>\n"
)

PRESENCE = r"""<?php

declare(strict_types=1);

namespace App\Presence;

use Hyperf\Redis\Redis;

class PresenceTracker
{
    private int $offlineAfter;

    public function __construct(private Redis $redis)
    {
        $this->offlineAfter = (int) \Hyperf\Support\env('OFFLINE_AFTER_MINUTES', 180);
    }

    public function seen(string $meterId): void
    {
        $this->redis->setex("meter:last_seen:{$meterId}", $this->offlineAfter, (string) time());
    }

    public function isOnline(string $meterId): bool
    {
        return (bool) $this->redis->exists("meter:last_seen:{$meterId}");
    }
}
"""

GITLOG = """e5b20c7 (王凯, 9 days ago) [gateway] refactor: presence 从 Swoole Table 挪到 Redis，多 worker 共享
7a0c3d1 (王凯, 3 weeks ago) [gateway] chore: OFFLINE_AFTER_MINUTES 默认值改 180
b91e4f2 (钱国栋, 7 weeks ago) [gateway] feat: 华立 NB 表心跳帧解析
4c2d8a0 (钱国栋, 3 months ago) [gateway] feat: presence tracker"""

STACK = """[2026-11-03 01:12:44] production.ERROR: read error on connection to r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379 {"exception":"[object] (RedisException(code: 0): read error on connection to r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379 at /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Redis/Connections/Connection.php:116)
[stacktrace]
#0 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Redis/Connections/Connection.php(116): Redis->blpop(Array, 5)
#1 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Redis/Connections/PhpRedisConnection.php(531): Illuminate\\Redis\\Connections\\Connection->command('blpop', Array)
#2 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Queue/RedisQueue.php(283): Illuminate\\Redis\\Connections\\PhpRedisConnection->blpop('queues:alarm-ev...', 5)
#3 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Queue/RedisQueue.php(226): Illuminate\\Queue\\RedisQueue->retrieveNextJob('queues:alarm-ev...')
#4 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Queue/Worker.php(350): Illuminate\\Queue\\RedisQueue->pop('alarm-events')
#5 /var/www/alarm-worker/vendor/laravel/framework/src/Illuminate/Queue/Worker.php(172): Illuminate\\Queue\\Worker->getNextJob(Object(Illuminate\\Queue\\RedisQueue), 'alarm-events')
#6 /var/www/alarm-worker/vendor/laravel/horizon/src/Console/WorkCommand.php(51): Illuminate\\Queue\\Worker->daemon('redis', 'alarm-events', Object(Illuminate\\Queue\\WorkerOptions))
#7 [internal function]: Laravel\\Horizon\\Console\\WorkCommand->handle()
#8 {main}
"}
[2026-11-03 01:12:51] production.ERROR: read error on connection to r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379 ... (同上，省略)
[2026-11-03 01:12:58] production.ERROR: read error on connection to r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379 ... (同上，省略)"""

HORIZON = r"""<?php

return [
    'use' => 'default',
    'prefix' => env('HORIZON_PREFIX', 'chaobiao_horizon:'),

    'defaults' => [
        'supervisor-readings' => [
            'connection' => 'redis',
            'queue' => ['readings'],
            'balance' => 'auto',
            'maxProcesses' => 8,
            'tries' => 3,
            'timeout' => 60,
        ],
        'supervisor-alarm' => [
            'connection' => 'redis',
            'queue' => ['alarm-events'],
            'balance' => 'simple',
            'maxProcesses' => 4,
            'tries' => 3,
            'timeout' => 60,
            'block_for' => 5,
        ],
    ],
];
"""

DB_REDIS = r"""    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'default' => [
            'url' => env('REDIS_URL'),
            'read_timeout' => 2,
            'persistent' => true,
        ],
    ],"""

TEST_OK = r"""php artisan test --testsuite=Alarm

   PASS  Tests\Alarm\LeakDetectorTest
  ✓ it uses received_at for every reading                               0.02s
  ✓ it spreads batched uploads by seq                                   0.02s
  ✓ it ignores readings with no consumption                             0.01s

   PASS  Tests\Alarm\OfflineAlarmTest
  ✓ it dispatches offline alarms to alarm-events                        0.03s

   PASS  Tests\Alarm\ReverseFlowTest
  ✓ it alarms on every reverse-flow reading                             0.02s

  Tests:    46 passed (127 assertions)
  Duration: 4.46s"""

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMtYWRtaW4iLCJ0ZW5hbnQiOiJjaGFvYmlhbyIsInJvbGUiOiJhZG1pbiIsImV4cCI6MTc5NDAwMDAwMH0."
    "Xq3v9Lk2mR7pT0sW4yB8nD1fH6jC5gA3eZ0uK9iQ2oE"
)

STEPS = [
    (
        "u",
        RECALL
        + "昨晚 1 点多离线告警炸了，三个小区的表 90% 都报离线，钉钉群响了一晚上。阿凯早上看了说 EMQX 那边连接数正常。我猜是上周 EMQX 升级到 5.8 以后 session expiry 变短了？你帮忙查一下，先看 meter-gateway 的 app/Presence/PresenceTracker.php。",
    ),
    ("tool", "Read", {"file_path": "/home/dev/work/chaobiao/meter-gateway/app/Presence/PresenceTracker.php"}, PRESENCE),
    (
        "tool",
        "Bash",
        {
            "command": "git log --format='%h (%an, %ar) %s' -4 -- meter-gateway/app/Presence meter-gateway/.env.example",
            "description": "Recent changes to presence tracking",
        },
        GITLOG,
    ),
    (
        "a",
        "不是 EMQX 的问题。9 天前的 e5b20c7 把在线状态从 Swoole Table 挪到了 Redis，写的是 `setex(key, $this->offlineAfter, ...)`——setex 第二个参数是秒，而 offlineAfter 读的是 OFFLINE_AFTER_MINUTES，单位是分钟，没换算。所以 last_seen 的 key 180 秒就过期了，NB 表几个小时才报一次，自然全被判离线；昨晚 1 点是这版上线后第一次全量巡检。\n\n另外我注意到代码里 OFFLINE_AFTER_MINUTES 的默认值是 180，我这边记的是 90。线上现在配的是多少？",
    ),
    (
        "u",
        "180，上个月改的，NB 表一天就报四五次，90 太激进了。你直接乘 60 就行。\n\n以后这种带单位的配置，变量名一律带单位后缀（_MINUTES / _SECONDS），读的地方当场换算成秒，别把分钟数传来传去。",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/meter-gateway/app/Presence/PresenceTracker.php",
            "old_string": "    private int $offlineAfter;\n\n    public function __construct(private Redis $redis)\n    {\n        $this->offlineAfter = (int) \\Hyperf\\Support\\env('OFFLINE_AFTER_MINUTES', 180);\n    }",
            "new_string": "    private int $offlineAfterSeconds;\n\n    public function __construct(private Redis $redis)\n    {\n        $this->offlineAfterSeconds = (int) \\Hyperf\\Support\\env('OFFLINE_AFTER_MINUTES', 180) * 60;\n    }",
        },
        "",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/meter-gateway/app/Presence/PresenceTracker.php",
            "old_string": '$this->redis->setex("meter:last_seen:{$meterId}", $this->offlineAfter, (string) time());',
            "new_string": '$this->redis->setex("meter:last_seen:{$meterId}", $this->offlineAfterSeconds, (string) time());',
        },
        "",
    ),
    (
        "tool",
        "Bash",
        {"command": "cd meter-gateway && composer test -- --filter=Presence", "description": "Run presence tests"},
        "> co-phpunit --prepend test/bootstrap.php --colors=always '--filter=Presence'\nPHPUnit 10.5.36 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.3.12 with Swoole 5.1.4\n\n..............                                                    14 / 14 (100%)\n\nTime: 00:00.412, Memory: 24.00 MB\n\nOK (14 tests, 39 assertions)",
    ),
    (
        "u",
        "好。alarm-worker 那边今早还有一堆这个报错，贴给你：\n```\n"
        + STACK
        + "\n```\n连接串是 REDIS_URL=redis://:Rk3@pZ8!wq6Ls1@r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379/2",
    ),
    ("tool", "Read", {"file_path": "/home/dev/work/chaobiao/alarm-worker/config/horizon.php"}, HORIZON),
    (
        "tool",
        "Grep",
        {
            "pattern": "read_timeout",
            "path": "/home/dev/work/chaobiao/alarm-worker/config/database.php",
            "output_mode": "content",
            "-C": 4,
        },
        DB_REDIS,
    ),
    (
        "a",
        "两个发现：\n\n1. 这个 read error 是空转时的假报错：config/database.php 里 redis 的 read_timeout 是 2 秒，而 supervisor-alarm 的 block_for 是 5 秒。队列空的时候 BLPOP 会阻塞 5 秒，phpredis 2 秒就判读超时，抛 read error，Horizon 再重连。把 read_timeout 调到比 block_for 大（比如 10）就不会再刷。\n\n2. horizon.php 里 supervisor-alarm 监听的是 alarm-events，我这边记的队列名是 q_alarm。是已经改名了吗？",
    ),
    (
        "u",
        "对，改了，上周跟 alarm_events 表统一命名。q_alarm 那个已经删了，别再往里 dispatch。read_timeout 按你说的改 10。",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/alarm-worker/config/database.php",
            "old_string": "            'read_timeout' => 2,",
            "new_string": "            'read_timeout' => 10, // 必须大于 horizon 的 block_for",
        },
        "",
    ),
    (
        "tool",
        "Grep",
        {"pattern": "q_alarm", "path": "/home/dev/work/chaobiao", "output_mode": "content", "-n": True},
        "alarm-worker/app/Jobs/DispatchOfflineAlarm.php:29:        $this->onQueue('q_alarm');\nreading-api/app/Listeners/ForwardAlarm.php:18:        dispatch(new AlarmJob($event))->onQueue('q_alarm');",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/alarm-worker/app/Jobs/DispatchOfflineAlarm.php",
            "old_string": "        $this->onQueue('q_alarm');",
            "new_string": "        $this->onQueue('alarm-events');",
        },
        "",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/reading-api/app/Listeners/ForwardAlarm.php",
            "old_string": "->onQueue('q_alarm');",
            "new_string": "->onQueue('alarm-events');",
        },
        "",
    ),
    ("a", "还有两处 dispatch 到旧队列的地方（DispatchOfflineAlarm 和 reading-api 的 ForwardAlarm），都改过来了。"),
    (
        "u",
        "👍 对了 meter-gateway 现在归阿凯管了，老钱上个月调去做硬件选型了，gateway 的 MR 以后 assign 给阿凯。\n\n还有，之前定的“reported_at 偏差超过 10 分钟才换 received_at”那个规则也改掉吧，直接全用 received_at：新固件补传的时候每个点都带了 seq，gateway 按 seq 把时间摊开就行，不用再猜表的时钟。",
    ),
    (
        "tool",
        "Edit",
        {
            "file_path": "/home/dev/work/chaobiao/alarm-worker/app/Alarm/ClockSkew.php",
            "old_string": "        $skew = abs($r->reported_at->diffInMinutes($r->received_at, false));\n        return $skew > self::MAX_SKEW_MINUTES ? $r->received_at : $r->reported_at;",
            "new_string": "        // 全用 received_at；批量补传由 meter-gateway 按 seq 摊开时间\n        return $r->received_at;",
        },
        "",
    ),
    (
        "a",
        "改了。有个相关的问题：全用 received_at 以后，月底最后几个小时补传的点会按收到时间落到下个月。月报 export 还是每月 1 号凌晨 2 点跑吗？如果是，1 号凌晨还没补传完的点会漏进下个月的报表。",
    ),
    (
        "u",
        "不是了，现在是 `0 6 2 * *`，2 号早上 6 点跑，就是因为这个。不用动。\n\n帮我用这个 token 调一下 reading-api，看离线数降下来没：\n`curl -s -H 'Authorization: Bearer "
        + JWT
        + "' http://reading-api.cb.internal/api/v1/meters/offline-count`",
    ),
    (
        "tool",
        "Bash",
        {
            "command": "curl -s -H 'Authorization: Bearer "
            + JWT
            + "' http://reading-api.cb.internal/api/v1/meters/offline-count",
            "description": "Check offline meter count",
        },
        '{"offline":37,"total":12480,"as_of":"2026-11-03T10:52:10+08:00"}',
    ),
    ("tool", "Bash", {"command": "make test-alarm", "description": "Run alarm-worker tests"}, TEST_OK),
    (
        "tool",
        "Bash",
        {
            "command": 'git add -A && git commit -m "[gateway] fix: presence TTL 按秒换算；[alarm] fix: 队列改 alarm-events，读数时间全用 received_at"',
            "description": "Commit fixes",
        },
        "[fix/offline-alarm-storm 61be0a9] [gateway] fix: presence TTL 按秒换算；[alarm] fix: 队列改 alarm-events，读数时间全用 received_at\n 7 files changed, 34 insertions(+), 19 deletions(-)",
    ),
    ("a", "离线数现在是 37/12480，正常水平。测试 46 个都过了，提交在 61be0a9。"),
    ("u", "好，谢谢。MR 我来提，assign 阿凯。对了双十一买的键盘到了，手感绝了 😆 下班！"),
    ("a", "👍"),
    ("stop",),
]

A1 = "a1_chaobiao_leak_alarm"
GOLD = {
    "expected": [
        {
            "id": "e1",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "zh",
            "text": "离线告警风暴：在线状态从 Swoole Table 挪到 Redis 后，PresenceTracker 用 setex 写 last_seen，setex 的 TTL 单位是秒，却直接传了 OFFLINE_AFTER_MINUTES 的分钟数，key 几分钟就过期，NB 表全被判离线；改为乘 60。",
            "must": ["setex"],
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "离线判定阈值 OFFLINE_AFTER_MINUTES 线上是 180（NB 表一天只报四五次）。",
            "must": ["180"],
            "supersedes": A1 + "#e14",
        },
        {
            "id": "e3",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "带单位的配置变量名一律带单位后缀（_MINUTES / _SECONDS），在读取处当场换算成秒，不要把分钟数到处传。",
            "must": ["单位后缀"],
        },
        {
            "id": "e4",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "zh",
            "text": "alarm-worker 的 Redis read error 是空转假报错：config/database.php 的 redis read_timeout（2 秒）小于 Horizon supervisor-alarm 的 block_for（5 秒），BLPOP 阻塞时 phpredis 判超时；read_timeout 要大于 block_for，改成 10。",
            "must": ["read_timeout", "block_for"],
        },
        {
            "id": "e5",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "alarm-worker 的队列已改名为 alarm-events（与 alarm_events 表统一），旧队列已删除，不要再往旧队列 dispatch。",
            "must": ["alarm-events"],
            "supersedes": A1 + "#e2",
        },
        {
            "id": "e6",
            "layer": "fact",
            "kind": "preference",
            "lang": "zh",
            "text": "meter-gateway 现在归阿凯（王凯）负责，gateway 的 MR assign 给阿凯。",
            "must": ["阿凯"],
            "supersedes": A1 + "#e7",
        },
        {
            "id": "e7",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "读数时间改为全用 received_at，推翻之前“偏差超过 10 分钟才换 received_at”的规则：新固件补传时每个点带 seq，meter-gateway 按 seq 摊开时间，不再猜表的时钟。",
            "must": ["全用 received_at"],
            "chosen": "全用 received_at",
            "over": ["偏差超过 10 分钟"],
            "why": ["seq"],
            "supersedes": A1 + "#e4",
        },
        {
            "id": "e8",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "export-worker 月报 cron 现在是 `0 6 2 * *`（每月 2 号早上 6 点），给 1 号凌晨还没补传完的 NB 表留时间。",
            "must": ["0 6 2 * *"],
            "supersedes": A1 + "#e10",
        },
    ],
    "acceptable": [
        {"must": ["reading-api.cb.internal"], "note": "reading-api 内网地址 / offline-count 接口"},
        {"must": ["王凯"], "note": "王凯 = 阿凯（e6 的全名）"},
        {"must": ["composer test"], "note": "meter-gateway 测试命令（co-phpunit）"},
    ],
    "forbidden": [
        "由老钱（钱国栋）负责",
        "消费 q_alarm 队列",
        "OFFLINE_AFTER_MINUTES=90",
        "cron 是 0 2 1 * *",
        "钉钉群响了一晚上",
        "session expiry 变短了",
        "12480",
        "46 passed",
        "61be0a9",
        "键盘到了",
        "OK (14 tests",
    ],
    "secrets": [
        "Rk3@pZ8!wq6Ls1",
        "redis://:Rk3@pZ8!wq6Ls1@r-bp1c7f3a9e2d4b5a6.redis.rds.aliyuncs.com:6379/2",
        JWT,
    ],
}
