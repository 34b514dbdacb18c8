"""tingche-cloud 停车云平台 (Go：parking-gateway 车场网关、billing-service 计费、monthly-pass 月卡；MySQL 8、RocketMQ、
Redis、腾讯云 COS、企业微信告警). 中文. Sessions s1-s3."""

from lib import Session, maple_block

CWD = "/home/dev/work/tingche-cloud"
P = "s1_tingche_double_settle"


def s1():
    s = Session(
        P, CWD, "2026-03-03T01:30:00.000Z", branch="fix/exit-double-settle", version="2.1.318", lang="zh", order=1
    )
    s.snapshot()
    s.user(
        "早。昨晚南门车场又有车主投诉出场扣了两次钱，工单 TC-5521。帮我看下 parking-gateway 的出场回调 "
        "internal/callback/exit.go。本地依赖用 `make dev-up` 起，docker compose 会把 MySQL、RocketMQ、Redis 都拉起来。"
    )
    s.fact(
        "command", "zh", "本地依赖用 `make dev-up` 起（docker compose 拉起 MySQL、RocketMQ、Redis）。", ["make dev-up"]
    )
    s.forbid("TC-5521")
    s.read(
        "/home/dev/work/tingche-cloud/parking-gateway/internal/callback/exit.go",
        "func (h *Handler) OnExit(c *gin.Context) {\n\tvar ev ExitEvent\n\tif err := c.ShouldBindJSON(&ev); err != nil {\n"
        '\t\tc.JSON(400, gin.H{"code": 1})\n\t\treturn\n\t}\n'
        "\t// 同步结算\n\tif _, err := h.billing.Settle(c, ev.ParkID, ev.Plate, ev.ExitAt); err != nil {\n"
        '\t\tc.JSON(500, gin.H{"code": 2})\n\t\treturn\n\t}\n\tc.JSON(200, gin.H{"code": 0})\n}',
    )
    s.say("exit.go 在回调里同步调 billing-service 的 Settle，成功才回 200。有那两笔扣费前后的日志吗？")
    s.user(
        "日志贴一下：\n```\n2026-03-02T21:17:02+08:00 INFO exit callback plate=沪A·D7K21 park=P031 event=ev_8f21c0a9 "
        "retry=0\n2026-03-02T21:17:05+08:00 INFO exit callback plate=沪A·D7K21 park=P031 event=ev_8f21c0a9 retry=1\n"
        "2026-03-02T21:17:06+08:00 INFO settle ok order=SO20260302211706881 amount=1500\n"
        "2026-03-02T21:17:07+08:00 INFO settle ok order=SO20260302211707102 amount=1500\n```"
    )
    s.forbid("SO20260302211706881")
    s.say(
        "根因是相机回调 3 秒内没收到 200 就会重推（日志里 retry=1 那条），而 exit.go 里是同步调 billing-service 的 "
        "Settle，晚高峰 Settle 要 4 秒多，于是同一个 event 被结算了两次。billing-service 那边也没有按 event 去重。\n\n"
        "去重有几种做法：\n1. Redis SETNX，key 用 event_id，TTL 10 分钟\n"
        "2. 在 settle_orders 表上加 exit_event_id 唯一索引，插入冲突就当已经结算过\n3. 两个都上\n你倾向哪个？"
    )
    s.exp(
        "root_cause",
        "zh",
        "出场重复扣费的根因：相机回调 3 秒内没收到 200 就会重推，而 exit.go 同步调 billing-service "
        "Settle，晚高峰超过 3 秒，同一个 event 被结算两次；billing-service 也没按 event 去重。",
        ["重推"],
    )
    s.user("2 吧。Redis 重启或者主从切换会丢 key，不靠谱。")
    s.decision(
        "zh",
        "结算去重用 settle_orders 上的 exit_event_id 唯一索引（方案 2），不用 Redis SETNX，因为 Redis 重启或"
        "主从切换会丢 key。",
        ["exit_event_id"],
        "唯一索引",
        ["SETNX"],
        ["主从切换"],
    )
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/tingche-cloud/billing-service/db/migrations/20260303_uk_exit_event.sql",
            "content": "-- +goose Up\nALTER TABLE settle_orders ADD UNIQUE KEY uk_exit_event (park_id, plate, exit_event_id);\n",
        },
        "File created successfully at: /home/dev/work/tingche-cloud/billing-service/db/migrations/20260303_uk_exit_event.sql",
    )
    s.bash(
        'cd billing-service && goose -dir db/migrations mysql "$TEST_DSN" up',
        "2026/03/03 09:41:12 goose run: ERROR 20260303_uk_exit_event.sql: failed to run SQL migration: "
        "Error 1071 (42000): Specified key was too long; max key length is 3072 bytes",
        desc="跑迁移",
        err=True,
    )
    s.edit(
        "/home/dev/work/tingche-cloud/billing-service/db/migrations/20260303_uk_exit_event.sql",
        "ADD UNIQUE KEY uk_exit_event (park_id, plate, exit_event_id);",
        "ADD UNIQUE KEY uk_exit_event (exit_event_id);",
    )
    s.bash(
        'cd billing-service && goose -dir db/migrations mysql "$TEST_DSN" up',
        "2026/03/03 09:42:30 OK   20260303_uk_exit_event.sql (38.2ms)\n2026/03/03 09:42:30 goose: successfully migrated "
        "database to version: 20260303",
        desc="重跑迁移",
    )
    s.say(
        "第一次失败是因为我把 plate（varchar(255)）也放进了联合索引，utf8mb4 每个字符按 4 字节算，超过了 InnoDB 单个索引 "
        "3072 字节的上限。exit_event_id 本身就是全局唯一的，只在它上面建唯一索引就过了。"
    )
    s.exp(
        "fix",
        "zh",
        "goose 迁移报 Error 1071（max key length is 3072 bytes）：联合索引里带了 varchar(255) 的 plate，"
        "utf8mb4 下超长；唯一索引只建在 exit_event_id 上即可。",
        ["3072"],
    )
    s.user("好。另外回调那里也别同步结算了吧，太慢了。有什么方案？")
    s.say(
        "两种：\nA. 回调里先把事件写进 exit_events 表、立刻回 200，再发 RocketMQ 消息，billing-service 消费后异步结算；\n"
        "B. 保持同步结算，但把相机那边的回调超时调大，比如 10 秒。\nA 改动大一些，但回调耗时和结算彻底解耦。"
    )
    s.user("行，就这么办，按 A 来。topic 和消费组你想个名字")
    s.say("topic 用 TOPIC_PARK_EXIT，消费组 GID_BILLING_SETTLE，你看行吗？")
    s.user(
        "对，就用 TOPIC_PARK_EXIT，消费组 GID_BILLING_SETTLE。顺便说下为啥不选 B：海康相机的回调超时是固件写死的 3 秒，"
        "我们改不了。以后接第三方回调都这样：先落库、马上回 200，重活全放异步。"
    )
    s.decision(
        "zh",
        "出场回调改为先写 exit_events 表、立刻回 200，再经 RocketMQ 由 billing-service 异步结算（方案 A），"
        "不选把回调超时调大（方案 B），因为海康相机的回调超时是固件写死的 3 秒。",
        ["exit_events"],
        "异步结算",
        ["回调超时调大"],
        ["固件写死"],
    )
    s.fact(
        "config",
        "zh",
        "出场事件 RocketMQ topic 为 TOPIC_PARK_EXIT，billing-service 消费组 GID_BILLING_SETTLE。",
        ["TOPIC_PARK_EXIT"],
    )
    s.exp("lesson", "zh", "接第三方回调一律先落库、马上回 200，重活全放异步。", ["第三方回调"])
    s.edit(
        "/home/dev/work/tingche-cloud/parking-gateway/internal/callback/exit.go",
        "\t// 同步结算\n\tif _, err := h.billing.Settle(c, ev.ParkID, ev.Plate, ev.ExitAt); err != nil {",
        '\tif err := h.events.Insert(c, ev); err != nil {\n\t\tc.JSON(500, gin.H{"code": 2})\n\t\treturn\n\t}\n'
        '\th.mq.SendAsync("TOPIC_PARK_EXIT", ev.ID, ev)\n\tif false {',
    )
    s.say("回调现在只落库 + 发消息就回 200，结算挪到 billing-service 的 consumer 里了。")
    s.user(
        "车牌号入库前统一转大写，去掉空格和中间的「·」，比如 沪A·D7K21 存成 沪AD7K21。还有，数据库访问统一用 gorm，"
        "别再写 database/sql 裸查询了。"
    )
    s.fact(
        "convention", "zh", "车牌号入库前统一转大写，去掉空格和中间的「·」（沪A·D7K21 存成 沪AD7K21）。", ["去掉空格"]
    )
    s.fact("convention", "zh", "数据库访问统一用 gorm，不写 database/sql 裸查询。", ["gorm", "database/sql"])
    s.say("好，NormalizePlate 放在 pkg/plate 里，gateway 和 billing-service 都用它；exit_events 的写入我用 gorm 写。")
    s.user(
        "测试环境的 MySQL 在 10.8.3.21:3306，账号 tingche_rw，密码 Tc#2026pk!，连上去看下 settle_orders 里现在有多少重复的。"
    )
    s.secret("Tc#2026pk!")
    s.fact("config", "zh", "测试环境 MySQL 在 10.8.3.21:3306。", ["10.8.3.21"])
    s.bash(
        'mysql -h 10.8.3.21 -P 3306 -u tingche_rw -p"$MYSQL_PWD" tingche -e "SELECT exit_event_id, COUNT(*) cnt '
        'FROM settle_orders GROUP BY exit_event_id HAVING cnt > 1 LIMIT 3"',
        "+------------------+-----+\n| exit_event_id    | cnt |\n+------------------+-----+\n| ev_8f21c0a9      |   2 |\n"
        "| ev_90d1e2b4      |   2 |\n| ev_a7c3f815      |   3 |\n+------------------+-----+\n3 rows in set (0.41 sec)",
        desc="查重复结算",
    )
    s.say(
        "测试库里已经有重复结算的数据（ev_a7c3f815 甚至结算了 3 次）。上线唯一索引之前必须先把重复行清掉，"
        "否则 ALTER TABLE 会直接报 Duplicate entry 失败，迁移卡住。我写了个清理脚本 scripts/dedup_settle.sql，"
        "保留每个 event 最早的一条。"
    )
    s.exp(
        "gotcha",
        "zh",
        "给 settle_orders 上 exit_event_id 唯一索引之前必须先清掉重复行，否则 ALTER TABLE 报 Duplicate "
        "entry 失败、迁移卡住。",
        ["Duplicate entry"],
    )
    s.forbid("3 rows in set")
    s.user(
        "好。其他几个背景你记一下：网关这块有问题找老周，他是 owner；抓拍图片存 COS，保留 180 天；月卡到期提醒每天早上 "
        "9 点推，cron 是 `0 9 * * *`。"
    )
    s.fact("preference", "zh", "网关（parking-gateway）有问题找老周，他是 owner。", ["老周"])
    s.fact("config", "zh", "抓拍图片存腾讯云 COS，保留 180 天。", ["180", "抓拍"])
    s.fact("config", "zh", "月卡到期提醒每天早上 9 点推送，cron `0 9 * * *`。", ["0 9 * * *"])
    s.say("记下了。")
    s.user(
        "结算失败的时候往企业微信群发条告警，webhook 是 "
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=7d3e9a1c-55b2-4f0e-9c8a-2b6d1f4e8a90 。"
        "今天就这些，下午还得开周会，谢谢"
    )
    s.secret(
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=7d3e9a1c-55b2-4f0e-9c8a-2b6d1f4e8a90",
        "7d3e9a1c-55b2-4f0e-9c8a-2b6d1f4e8a90",
    )
    s.forbid("下午还得开周会")
    s.ok(["企业微信"], "结算失败往企业微信群发告警")
    s.say(
        "告警加在 billing-service 的 settle consumer 里，webhook 地址从环境变量 WECOM_WEBHOOK 读，没有写进代码和配置文件。"
    )
    s.stop(ms=503220)
    s.title("修复出场回调重复结算")
    s.last_prompt("结算失败的时候往企业微信群发条告警")
    return s


def s2():
    s = Session(
        "s2_tingche_billing_questions",
        CWD,
        "2026-03-10T06:00:00.000Z",
        branch="main",
        version="2.1.321",
        lang="zh",
        order=2,
    )
    recalled = [
        (5, "decision", "7 天前", "出场回调先写 exit_events 表、立刻回 200，结算走 RocketMQ 异步"),
        (14, "fact", "7 天前", "抓拍图片存 COS，保留 180 天"),
    ]
    s.snapshot()
    s.user(
        [
            "<system-reminder>\n" + maple_block(recalled) + "\n</system-reminder>",
            "你好，我是产品小林。想问下 billing-service 的计费规则：免费时长是怎么算的？是从入场开始算还是从缴费开始算？",
        ]
    )
    s.forbid("结算走 RocketMQ 异步", "保留 180 天", "免费时长是怎么算的")
    s.grep(
        "FreeMinutes",
        'billing-service/internal/rules/rule.go:18:\tFreeMinutes int `json:"free_minutes"`\n'
        "billing-service/internal/rules/calc.go:44:\tif dur <= time.Duration(r.FreeMinutes)*time.Minute {",
        path="/home/dev/work/tingche-cloud/billing-service",
    )
    s.read(
        "/home/dev/work/tingche-cloud/billing-service/internal/rules/calc.go",
        "func (r Rule) Fee(entry, exit time.Time) int64 {\n\tdur := exit.Sub(entry)\n"
        "\tif dur <= time.Duration(r.FreeMinutes)*time.Minute {\n\t\treturn 0\n\t}\n"
        "\tunits := int64(math.Ceil(dur.Hours()))\n\tfee := units * r.HourlyCents\n"
        "\tif r.DailyCapCents > 0 && fee > r.DailyCapCents {\n\t\tfee = r.DailyCapCents\n\t}\n\treturn fee\n}",
    )
    s.say(
        "免费时长按入场时间到出场时间的总时长算：停车总时长不超过 free_minutes（多数车场配的是 15 分钟）就不收费；"
        "一旦超过，是从入场开始整段计费，不是扣掉免费的 15 分钟再算。超出部分按小时向上取整，乘以每小时单价，"
        "再跟每日封顶比较取小。"
    )
    s.ok(["free_minutes"], "对现有计费代码的解释（回答产品的问题）")
    s.user("哦原来超过就整段算。那跨天的封顶呢？比如晚上 8 点进第二天早上 10 点出")
    s.say("按现在的代码，封顶是对整段费用只封一次顶，不是按自然日分别封顶。我跑下测试看看有没有覆盖这个场景。")
    s.bash(
        "cd billing-service && go test ./internal/rules/...",
        "--- FAIL: TestCapAcrossMidnight (0.00s)\n    calc_test.go:88: got 6000, want 10000\nFAIL\n"
        "FAIL\tgithub.com/tingche/billing-service/internal/rules\t0.009s\nFAIL",
        desc="跑计费规则测试",
        err=True,
    )
    s.say(
        "果然有个测试 TestCapAcrossMidnight 是挂的：期望按两个自然日各封顶一次（10000 分），代码只封了一次顶（6000 分）。"
        "看提交记录这个测试是上个月加的，代码一直没跟上。要修的话得先跟你确认业务上到底哪个对。"
    )
    s.ok(["TestCapAcrossMidnight"], "跨天封顶测试失败，未修复，待产品确认口径")
    s.user("这个我得问下运营那边，先别改。对了你们周五团建去不去？听说是去爬山")
    s.forbid("周五团建", "爬山")
    s.say("我去不了团建哈。跨天封顶这个等你们确认口径再改，测试先不动。")
    s.user("好的，那今天先问到这，谢谢！")
    s.forbid("今天先问到这")
    s.say("不客气，有计费相关的问题随时找我。")
    s.stop(ms=72010)
    s.title("产品咨询计费规则")
    s.last_prompt("好的，那今天先问到这，谢谢！")
    return s


def s3():
    s = Session(
        "s3_tingche_monthly_pass",
        CWD,
        "2026-03-19T02:10:00.000Z",
        branch="feat/monthly-pass-remind",
        version="2.1.326",
        lang="zh",
        order=3,
    )
    recalled = [
        (11, "fact", "16 天前", "网关（parking-gateway）有问题找老周，他是 owner"),
        (6, "fact", "16 天前", "出场事件 RocketMQ topic 为 TOPIC_PARK_EXIT，消费组 GID_BILLING_SETTLE"),
    ]
    s.snapshot()
    s.user(
        "今天做月卡到期提醒的改版。先同步几个变化：网关 oncall 换人了，周立伟调去数据中台，以后网关的事找阿杰（刘杰）。"
    )
    s._env(
        "attachment",
        0.05,
        attachment={
            "type": "hook_additional_context",
            "content": [maple_block(recalled)],
            "hookName": "UserPromptSubmit",
            "hookEvent": "UserPromptSubmit",
        },
    )
    s.forbid("他是 owner", "消费组 GID_BILLING_SETTLE")
    s.fact("preference", "zh", "网关 oncall 换成阿杰（刘杰）了，周立伟调去数据中台。", ["阿杰"], sup=P + "#e12")
    s.say("好，网关相关的问题以后找阿杰。")
    s.user(
        "还有，RocketMQ 那边统一了命名，出场事件的 topic 已经改成 park_exit_event 了，消费组也跟着改成 billing_settle。"
    )
    s.fact(
        "config",
        "zh",
        "出场事件 RocketMQ topic 已经改成 park_exit_event，消费组改成 billing_settle。",
        ["park_exit_event"],
        sup=P + "#e6",
    )
    s.bash(
        "grep -rn 'TOPIC_PARK_EXIT\\|GID_BILLING_SETTLE' --include=*.go --include=*.yaml .",
        './parking-gateway/internal/callback/exit.go:31:\th.mq.SendAsync("TOPIC_PARK_EXIT", ev.ID, ev)\n'
        "./billing-service/configs/mq.yaml:4:  topic: TOPIC_PARK_EXIT\n./billing-service/configs/mq.yaml:5:  group: GID_BILLING_SETTLE",
        desc="找旧的 topic 名",
    )
    s.edit(
        "/home/dev/work/tingche-cloud/billing-service/configs/mq.yaml",
        "  topic: TOPIC_PARK_EXIT\n  group: GID_BILLING_SETTLE",
        "  topic: park_exit_event\n  group: billing_settle",
    )
    s.say("两处都改了：gateway 的发送端和 billing-service 的 mq.yaml。")
    s.user("之前说的测试库地址不对了，测试环境 MySQL 已经迁到 tdsql-test.tc.internal:3306。")
    s.fact(
        "config",
        "zh",
        "测试环境 MySQL 已迁到 tdsql-test.tc.internal:3306。",
        ["tdsql-test.tc.internal"],
        sup=P + "#e10",
    )
    s.maple_search(
        "月卡 到期提醒 cron",
        [
            (15, "fact", "月卡到期提醒每天早上 9 点推送，cron 0 9 * * *"),
        ],
    )
    s.forbid("月卡到期提醒每天早上 9 点推送")
    s.say("好，.env.test 里的 DB_HOST 我一起改了。月卡提醒现在的推送时间要不要一起动？")
    s.user("要，改成前一天晚上 8 点推，cron 改成 `0 20 * * *`，早上推太晚了，很多人那时候已经开车出门了。")
    s.fact("config", "zh", "月卡到期提醒改为前一天晚上 8 点推送，cron `0 20 * * *`。", ["0 20 * * *"], sup=P + "#e14")
    s.edit(
        "/home/dev/work/tingche-cloud/monthly-pass/configs/cron.yaml",
        'remind_expiring: "0 9 * * *"',
        'remind_expiring: "0 20 * * *"',
    )
    s.say("cron 改好了。提醒渠道这次要不要一起定一下？有三个选择：\n1. 微信服务号模板消息\n2. 短信\n3. App push")
    s.user("1。短信一条 4 分钱，而且签名审核要一周；App 装的人太少。")
    s.decision(
        "zh",
        "月卡到期提醒走微信服务号模板消息，不用短信（每条 4 分钱、签名审核要一周）也不用 App push（装的人太少）。",
        ["服务号"],
        "服务号模板消息",
        ["短信"],
        ["签名审核"],
    )
    s.say("好，走服务号模板消息，先用测试号的模板 ID 联调。")
    s.user("另外，不再用 gorm 了，换成 sqlx，新代码都手写 SQL，老代码慢慢迁。月卡这块你直接用 sqlx 写。")
    s.fact("convention", "zh", "不再用 gorm，换成 sqlx：新代码都手写 SQL，老代码逐步迁移。", ["sqlx"], sup=P + "#e9")
    s.bash(
        "cd monthly-pass && go test ./internal/remind/...",
        "--- FAIL: TestListExpiring (0.02s)\n    repo_test.go:37: sql: converting argument $1 type: unsupported type "
        "[]int64, a slice of int64\nFAIL\nFAIL\tgithub.com/tingche/monthly-pass/internal/remind\t0.031s\nFAIL",
        desc="跑月卡提醒测试",
        err=True,
    )
    s.edit(
        "/home/dev/work/tingche-cloud/monthly-pass/internal/remind/repo.go",
        '\treturn r.db.SelectContext(ctx, &out, "SELECT * FROM passes WHERE park_id IN (?)", parkIDs)',
        '\tq, args, err := sqlx.In("SELECT * FROM passes WHERE park_id IN (?)", parkIDs)\n\tif err != nil {\n'
        "\t\treturn err\n\t}\n\treturn r.db.SelectContext(ctx, &out, r.db.Rebind(q), args...)",
    )
    s.bash(
        "cd monthly-pass && go test ./internal/remind/...",
        "ok  \tgithub.com/tingche/monthly-pass/internal/remind\t0.028s",
        desc="重跑",
    )
    s.say(
        "sqlx 不会自动展开 IN 里的 slice，直接传 []int64 就报 unsupported type。要先用 sqlx.In 展开占位符，再 db.Rebind 成"
        "驱动的占位符格式。现在测试过了。"
    )
    s.exp(
        "fix", "zh", "sqlx 的 IN 查询直接传 []int64 报 unsupported type；要先 sqlx.In 展开再 db.Rebind。", ["sqlx.In"]
    )
    s.user("抓拍图只留 90 天了，法务说没必要留那么久，COS 的 lifecycle 规则已经改好了。")
    s.fact("config", "zh", "抓拍图只留 90 天（法务要求），COS lifecycle 已改。", ["90 天", "抓拍"], sup=P + "#e13")
    s.say("好。")
    s.user("park_exit_event 的消费者里不要 panic，也别吞错误，处理失败就返回 ConsumeRetryLater 让 MQ 重投。")
    s.fact(
        "constraint",
        "zh",
        "park_exit_event 的消费者不能 panic、不能吞错误，处理失败返回 ConsumeRetryLater 让 MQ 重投。",
        ["ConsumeRetryLater"],
    )
    s.say("billing-service 的 consumer 里有一处 recover 之后直接返回 ConsumeSuccess 的，我改成 ConsumeRetryLater 了。")
    s.user("还有车牌校验注意下，新能源车牌是 8 位的，正则别写死 7 位。好了今天就这样，谢谢")
    s.fact("constraint", "zh", "车牌校验要兼容新能源车牌 8 位，正则不能写死 7 位。", ["新能源", "8 位"])
    s.forbid("今天就这样")
    s.edit(
        "/home/dev/work/tingche-cloud/pkg/plate/plate.go",
        "var plateRe = regexp.MustCompile(`^[\\p{Han}][A-Z][A-Z0-9]{5}$`)",
        "var plateRe = regexp.MustCompile(`^[\\p{Han}][A-Z][A-Z0-9]{5,6}$`)",
    )
    s.say("正则改成兼容 7 位和 8 位了，加了两个新能源车牌的测试用例。")
    s.stop(ms=534770)
    s.title("月卡到期提醒改版")
    s.last_prompt("还有车牌校验注意下")
    return s


SESSIONS = [s1, s2, s3]
