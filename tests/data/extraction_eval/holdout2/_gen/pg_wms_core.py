"""Project G (zh): wms-core，仓储作业系统后端（Java 17 + Spring Boot 3，MyBatis-Plus，MySQL 8，RocketMQ，XXL-JOB，Nacos）。"""

from lib import Session, reminder

CWD = "/home/dev/work/wms-core"


def s1():
    s = Session(
        "g1_wms_stock_oversell",
        CWD,
        "2027-01-11T02:10:00Z",
        branch="fix/stock-oversell",
        version="2.1.318",
        lang="zh",
        order=1,
    )
    s.snapshot()
    s.user(
        "昨天华东二仓（WH_HD02）超卖了，同一个 SKU 被两张出库单同时占用，available 直接变成 -3。"
        "是 stock-service 的占用接口 /api/stock/occupy，线上 pod stock-service-7c9d8f6b5-q2xkp 的日志里没报错。帮我看下"
    )
    s.grep(
        "stockMapper.decrease",
        "stock-service/src/main/java/com/acme/wms/stock/service/StockOccupyService.java:52:        stockMapper.decrease(skuId, whId, qty);",
        path="stock-service",
    )
    s.read(
        "/home/dev/work/wms-core/stock-service/src/main/java/com/acme/wms/stock/service/StockOccupyService.java",
        "    @Transactional\n    public void occupy(String skuId, String whId, BigDecimal qty) {\n"
        "        WmsStock stock = stockMapper.selectOne(skuId, whId);\n"
        "        if (stock.getAvailable().compareTo(qty) < 0) {\n"
        "            throw new BizException(ErrorCode.STOCK_NOT_ENOUGH);\n        }\n"
        "        stockMapper.decrease(skuId, whId, qty);\n    }",
    )
    s.say(
        "问题出在先查后改：`selectOne` 是普通的快照读，两个并发请求都读到 available=5，都通过了 `>= 4` 的判断，"
        "然后各自执行 `available = available - 4`，最后就是 -3。`decrease` 这条 UPDATE 本身是原子的，但判断和扣减不在同一个原子操作里，"
        "加了 @Transactional、在 RR 隔离级别下也挡不住。\n\n三种改法：\n"
        "1. 条件更新：`UPDATE wms_stock SET available = available - #{qty} WHERE sku_id = #{skuId} AND wh_id = #{whId} AND available >= #{qty}`，根据影响行数判断成功与否；\n"
        "2. Redisson 分布式锁，按 sku + 仓加锁；\n"
        "3. `SELECT ... FOR UPDATE` 悲观锁。\n"
        "热点 SKU 上第 3 种会排队排得很厉害，第 2 种要多依赖一个 Redis。"
    )
    s.user("第一个吧。锁的话还得处理锁超时、Redis 主从切换丢锁，太折腾了")
    s.edit(
        "/home/dev/work/wms-core/stock-service/src/main/resources/mapper/WmsStockMapper.xml",
        "        SET available = available - #{qty}\n        WHERE sku_id = #{skuId} AND wh_id = #{whId}",
        "        SET available = available - #{qty}\n        WHERE sku_id = #{skuId} AND wh_id = #{whId} AND available &gt;= #{qty}",
    )
    s.bash(
        "./mvnw -q -pl stock-service test -Dtest=StockOccupyConcurrencyTest",
        "[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 3.214 s <<< FAILURE!\n"
        "[ERROR] occupyConcurrently  Time elapsed: 3.1 s  <<< ERROR!\n"
        "com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure\n\n"
        "The last packet sent successfully to the server was 0 milliseconds ago.",
        desc="跑并发测试",
        err=True,
    )
    s.say("本地 MySQL 没起，测试连不上 localhost:3306。我先把本地依赖拉起来再跑。")
    s.bash(
        "docker compose -f deploy/local/compose.yml up -d mysql redis && ./mvnw -q -pl stock-service test -Dtest=StockOccupyConcurrencyTest",
        "[+] Running 2/2\n ✔ Container wms-local-mysql-1  Started\n ✔ Container wms-local-redis-1  Started\n"
        "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0",
    )
    s.say("200 个线程抢 50 件库存，最终 available=0，成功 50 次，没有再出现负数。")
    s.user(
        "好。以后库存扣减一律走条件更新，影响行数为 0 就当库存不足，直接返回 STOCK_NOT_ENOUGH，不要重试。"
        "另外跑测试之前要先起 deploy/local/compose.yml 这个也记一下，新人老踩"
    )
    s.say("好的，扣减失败统一返回 STOCK_NOT_ENOUGH；测试前先 `docker compose -f deploy/local/compose.yml up -d mysql redis`。")
    s.user("下一个：库存变了之后要通知出库和报表。现在是扣完库存直接 rocketMQTemplate.send，事务回滚了消息照样发出去了")
    s.say(
        "对，这是典型的双写不一致。两个方案：\n"
        "- RocketMQ 事务消息：先发半消息，本地事务提交后再 commit，需要实现 `checkLocalTransaction` 回查；\n"
        "- 本地消息表：扣库存和写 `wms_outbox` 在同一个本地事务里，再由后台的 OutboxRelay 扫表投递，投递成功标记已发送。\n"
        "事务消息少一张表，但回查逻辑写不好会丢消息，而且整个方案绑死在 RocketMQ 上。"
    )
    s.user("本地消息表吧，事务消息的回查我们在 TMS 那边踩过坑，而且明年可能要换 MQ。topic 就叫 WMS_STOCK_CHANGED")
    s.edit(
        "/home/dev/work/wms-core/stock-service/src/main/java/com/acme/wms/stock/service/StockOccupyService.java",
        "        rocketMQTemplate.send(StockTopics.CHANGED, msg);",
        "        outboxMapper.insert(Outbox.of(StockTopics.CHANGED, bizNo, msg));",
    )
    s.user(
        "补充点背景：库存这块是老王（王海涛）负责，表结构要动先找他。测试环境的库在 10.20.3.15:3306，库名 wms_stock，"
        "账号 wms_app，密码是 Wms@2027stock。DB 变更脚本用 Flyway，放 stock-service/src/main/resources/db/migration，"
        "文件名 V<日期>__<说明>.sql"
    )
    s.say("记下了。wms_outbox 的建表脚本我按这个规则加一个 `V20270111__create_wms_outbox.sql`。")
    s.user("嗯。还有数量字段统一 DECIMAL(18,3)，我们有称重商品，别用 int")
    s.bash(
        "./mvnw -q -pl stock-service spring-boot:run -Dspring-boot.run.profiles=local > /tmp/stock.log 2>&1 & sleep 25; curl -s localhost:8081/actuator/health",
        '{"status":"UP"}',
        desc="本地起 stock-service",
    )
    s.say("本地 `spring-boot:run -Dspring-boot.run.profiles=local` 起来了，端口 8081，health 正常。")
    s.user("ok 提交吧。今天食堂的红烧肉绝了，吃撑了")
    s.bash(
        "git add -A && git commit -m 'fix(stock): 条件更新防超卖; feat(stock): 本地消息表 wms_outbox'",
        "[fix/stock-oversell 4e1a9c7] fix(stock): 条件更新防超卖; feat(stock): 本地消息表 wms_outbox\n 6 files changed, 118 insertions(+), 9 deletions(-)",
    )
    s.stop(ms=2611400)
    s.title("库存超卖：条件更新 + 本地消息表")

    s.exp(
        "root_cause",
        "zh",
        "WH_HD02 超卖（available 变成 -3）：occupy 先查后改，并发请求都读到旧的 available 并通过判断，再各自扣减；"
        "@Transactional 在 RR 隔离级别下也挡不住。",
        ["先查后改"],
    )
    s.decision(
        "zh",
        "库存扣减用条件更新（UPDATE ... AND available >= qty，看影响行数），不用 Redisson 分布式锁或 SELECT FOR UPDATE："
        "分布式锁要处理锁超时和 Redis 主从切换丢锁。",
        ["条件更新"],
        "条件更新",
        ["Redisson"],
        ["主从切换"],
    )
    s.fact(
        "convention",
        "zh",
        "库存扣减一律走条件更新，影响行数为 0 视为库存不足，直接返回 STOCK_NOT_ENOUGH，不重试。",
        ["STOCK_NOT_ENOUGH"],
    )
    s.exp(
        "fix",
        "zh",
        "stock-service 测试报 Communications link failure 是本地 MySQL 没起；跑测试前先 "
        "`docker compose -f deploy/local/compose.yml up -d mysql redis`。",
        ["deploy/local/compose.yml"],
    )
    s.decision(
        "zh",
        "库存变更通知下游用本地消息表（扣库存和写 wms_outbox 同一事务，OutboxRelay 扫表投递），不用 RocketMQ 事务消息："
        "事务消息的回查在 TMS 踩过坑，而且明年可能换 MQ。",
        ["本地消息表"],
        "本地消息表",
        ["事务消息"],
        ["回查"],
    )
    s.fact("config", "zh", "库存变更消息的 topic 是 WMS_STOCK_CHANGED。", ["WMS_STOCK_CHANGED"])
    s.fact("config", "zh", "库存这块老王（王海涛）负责，表结构要动先找他。", ["老王"])
    s.fact(
        "config",
        "zh",
        "测试环境库 10.20.3.15:3306，库名 wms_stock，账号 wms_app。",
        ["10.20.3.15"],
    )
    s.fact(
        "convention",
        "zh",
        "DB 变更脚本用 Flyway，放 stock-service/src/main/resources/db/migration，文件名 V<日期>__<说明>.sql。",
        ["Flyway"],
    )
    s.fact("convention", "zh", "数量字段统一 DECIMAL(18,3)（有称重商品），不用 int。", ["DECIMAL(18,3)"])
    s.fact(
        "command",
        "zh",
        "本地起 stock-service：`./mvnw -pl stock-service spring-boot:run -Dspring-boot.run.profiles=local`，端口 8081。",
        ["spring-boot:run", "8081"],
    )
    s.ok(["wms_outbox"], "本地消息表的表名")
    s.ok(["OutboxRelay"], "扫表投递的后台任务")
    s.forbid(
        "红烧肉",
        "4e1a9c7",
        "stock-service-7c9d8f6b5-q2xkp",
        "Tests run: 1, Failures: 0, Errors: 0",
        "118 insertions(+)",
    )
    s.secret("Wms@2027stock")
    return s


def s2():
    s = Session(
        "g2_wms_wave_xxljob", CWD, "2027-01-18T06:40:00Z", branch="feat/wave-xxljob", version="2.1.320", lang="zh", order=2
    )
    s.snapshot()
    s.recall(
        [
            (501, "decision", "7 days ago", "库存扣减用条件更新（available >= qty），不用 Redisson 分布式锁。"),
            (506, "fact", "7 days ago", "库存变更消息的 topic 是 WMS_STOCK_CHANGED。"),
        ],
        event="SessionStart",
    )
    s.user(
        "波次生成出问题了。wave-service 上周扩到 3 个实例，同一批订单被生成了 3 个波次，拣货员拿着三张一模一样的拣货单 😅。"
        "现在的写法是 @Scheduled(cron = \"0 0/5 * * * ?\")"
    )
    s.read(
        "/home/dev/work/wms-core/wave-service/src/main/java/com/acme/wms/wave/job/WaveGenerateJob.java",
        '    @Scheduled(cron = "0 0/5 * * * ?")\n    public void generate() {\n'
        "        List<OutboundOrder> orders = orderMapper.selectPendingForWave(LIMIT);\n"
        "        waveService.createWaves(orders);\n    }",
    )
    s.say(
        "@Scheduled 是进程内调度，每个实例各跑各的：扩成 3 个实例，就是每 5 分钟同时跑 3 遍。"
        "`selectPendingForWave` 只是普通查询，三个实例在同一时刻读到同一批待波次订单，各自建了一个波次。单实例的时候看不出来。\n\n"
        "可选方案：\n1. ShedLock：加一张 shedlock 表，用数据库锁保证同一时刻只有一个实例执行，改动最小；\n"
        "2. 接公司的 XXL-JOB 调度中心：由 admin 统一触发，有执行日志、失败告警，也能手动触发；\n"
        "3. 自己用 Redis SETNX 包一层。"
    )
    s.user(
        "ShedLock 不考虑，XXL-JOB 我们仓配这边早就在用了，能看执行日志、能手动补跑，运维也熟。就它吧。"
        "admin 在 http://xxl-job.wms.internal:8080/xxl-job-admin ，执行器 appname 用 wms-wave-executor"
    )
    s.edit(
        "/home/dev/work/wms-core/wave-service/pom.xml",
        "    <!-- scheduler -->",
        "    <!-- scheduler -->\n    <dependency>\n      <groupId>com.xuxueli</groupId>\n      <artifactId>xxl-job-core</artifactId>\n      <version>2.4.2</version>\n    </dependency>",
    )
    s.bash(
        "./mvnw -q -pl wave-service compile",
        "[ERROR] Failed to execute goal on project wave-service: Could not resolve dependencies for project "
        "com.acme.wms:wave-service:jar:1.8.0-SNAPSHOT: Could not find artifact com.xuxueli:xxl-job-core:jar:2.4.2 "
        "in acme-nexus (http://nexus.acme.internal/repository/maven-public/)",
        err=True,
    )
    s.bash(
        "curl -s 'http://nexus.acme.internal/service/rest/v1/search?group=com.xuxueli&name=xxl-job-core' | jq -r '.items[].version'",
        "2.3.1\n2.4.1",
        desc="查私服里有哪些版本",
    )
    s.say("私服 acme-nexus 里只有 2.3.1 和 2.4.1，没有 2.4.2。调度中心 admin 部署的也是 2.4.1，执行器跟它对齐更稳，我改成 2.4.1。")
    s.edit("/home/dev/work/wms-core/wave-service/pom.xml", "<version>2.4.2</version>", "<version>2.4.1</version>")
    s.bash("./mvnw -q -pl wave-service compile && echo BUILD OK", "BUILD OK")
    s.user("嗯，xxl-job-core 就固定 2.4.1，跟 admin 对齐，别自己升")
    s.say(
        "路由策略也要选一下。执行器 3 个实例，比较合适的两种：\n"
        "1. 故障转移（FAILOVER）：每次只挑一台健康的机器执行，逻辑跟现在一样；\n"
        "2. 分片广播（SHARDING_BROADCAST）：3 台都执行，每台按 `shardIndex` 只处理一部分仓库（`wh_id` 取模 `shardTotal`）。"
    )
    s.user("第二个。华东那几个仓大促的时候单量太大，一台跑不完一轮。按仓分片")
    s.edit(
        "/home/dev/work/wms-core/wave-service/src/main/java/com/acme/wms/wave/job/WaveGenerateJob.java",
        '    @Scheduled(cron = "0 0/5 * * * ?")\n    public void generate() {',
        '    @XxlJob("waveGenerate")\n    public void generate() {\n'
        "        int idx = XxlJobHelper.getShardIndex(), total = XxlJobHelper.getShardTotal();",
    )
    s.user(
        "cron 定成每 3 分钟一次：0 0/3 * * * ?，业务嫌 5 分钟太慢。执行器的 accessToken 是 wms-xxl-7Hq2pLx9，配到 Nacos 里，别进 git"
    )
    s.say("好，accessToken 放 Nacos 的 `wave-service-prod.yaml` 里的 `xxl.job.accessToken`，代码只读配置，仓库里不落明文。")
    s.user(
        "另外两件事：stock-service 本地端口改成 8091 了，8081 跟 outbound-service 冲突，大家本地一起起的时候老打架。"
        "还有 WMS_STOCK_CHANGED 的消费者 group 统一叫 GID_<服务名>，比如 GID_wave_service，别再各起各的名字"
    )
    s.edit(
        "/home/dev/work/wms-core/stock-service/src/main/resources/application-local.yml",
        "server:\n  port: 8081",
        "server:\n  port: 8091",
    )
    s.say("端口改好了。consumer group 我顺手把 wave-service 里的 `wave-stock-consumer` 改成了 `GID_wave_service`。")
    s.user("周五了，下午团建去打羽毛球 🏸，先这样")
    s.bash(
        "git add -A && git commit -m 'feat(wave): 波次生成迁到 XXL-JOB 分片广播'",
        "[feat/wave-xxljob b81f02d] feat(wave): 波次生成迁到 XXL-JOB 分片广播\n 5 files changed, 64 insertions(+), 12 deletions(-)",
    )
    s.stop(ms=2204300)
    s.title("波次重复生成：迁到 XXL-JOB")

    s.exp(
        "root_cause",
        "zh",
        "wave-service 扩到 3 个实例后同一批订单生成 3 个波次：@Scheduled 是进程内调度，每个实例各跑一遍，"
        "selectPendingForWave 没有互斥，三个实例读到同一批订单。",
        ["@Scheduled"],
    )
    s.decision(
        "zh",
        "波次生成改由 XXL-JOB 调度中心触发，不用 ShedLock（也不自己包 Redis SETNX）：XXL-JOB 仓配已经在用，能看执行日志、能手动补跑，运维熟。",
        ["XXL-JOB"],
        "XXL-JOB",
        ["ShedLock"],
        ["执行日志"],
    )
    s.fact(
        "config",
        "zh",
        "XXL-JOB admin 在 http://xxl-job.wms.internal:8080/xxl-job-admin，波次执行器 appname 是 wms-wave-executor。",
        ["xxl-job.wms.internal", "wms-wave-executor"],
    )
    s.fact(
        "constraint",
        "zh",
        "xxl-job-core 固定 2.4.1，跟调度中心 admin 对齐，不要自己升（私服 acme-nexus 里也没有 2.4.2）。",
        ["xxl-job-core", "2.4.1"],
    )
    s.decision(
        "zh",
        "波次任务路由策略用分片广播（SHARDING_BROADCAST，按仓 wh_id 分片），不用故障转移：华东几个仓大促单量大，一台跑不完一轮。",
        ["按仓"],
        "分片广播",
        ["故障转移"],
        ["一台跑不完"],
    )
    s.fact("config", "zh", "波次生成 cron 每 3 分钟一次：0 0/3 * * * ?。", ["0 0/3 * * * ?"])
    s.fact(
        "config",
        "zh",
        "XXL-JOB 执行器 accessToken 配在 Nacos wave-service-prod.yaml 的 xxl.job.accessToken，不进 git。",
        ["xxl.job.accessToken"],
    )
    s.fact(
        "config",
        "zh",
        "stock-service 本地端口改成 8091（8081 跟 outbound-service 冲突）。",
        ["8091"],
        sup="g1_wms_stock_oversell#e11",
    )
    s.fact(
        "convention",
        "zh",
        "WMS_STOCK_CHANGED 的消费者 group 统一叫 GID_<服务名>，例如 GID_wave_service。",
        ["GID_<服务名>"],
    )
    s.ok(["acme-nexus"], "私服名字")
    s.forbid(
        "羽毛球",
        "b81f02d",
        "64 insertions(+)",
        "不用 Redisson 分布式锁。",
        "消息的 topic 是 WMS_STOCK_CHANGED。",
    )
    s.secret("wms-xxl-7Hq2pLx9")
    return s


def s3():
    s = Session(
        "g3_wms_outbound_status_questions", CWD, "2027-01-22T08:15:00Z", branch="main", version="2.1.320", lang="zh", order=3
    )
    s.snapshot()
    s.user("新来的实习生问出库单状态机，我想先自己捋清楚再给他讲。出库单从创建到发运都有哪些状态？只是问问，不用改代码")
    s.maple_search(
        "出库单 状态机 outbound status",
        [
            (512, "decision", "波次任务路由用分片广播，按仓分片。"),
            (513, "fact", "stock-service 本地端口 8091。"),
        ],
    )
    s.grep(
        "enum OutboundStatus",
        "outbound-service/src/main/java/com/acme/wms/outbound/domain/OutboundStatus.java:3:public enum OutboundStatus {",
        path="outbound-service",
    )
    s.read(
        "/home/dev/work/wms-core/outbound-service/src/main/java/com/acme/wms/outbound/domain/OutboundStatus.java",
        "public enum OutboundStatus {\n    CREATED, ALLOCATED, WAVED, PICKING, PICKED, PACKED, SHIPPED, CANCELLED\n}",
    )
    s.say(
        "正常流转：CREATED（建单）→ ALLOCATED（占用库存成功）→ WAVED（进了波次）→ PICKING（开始拣货）→ PICKED → PACKED（复核打包）→ SHIPPED（出库交接）。"
        "CANCELLED 是旁路状态。"
    )
    s.user("CANCELLED 能从哪些状态进？")
    s.grep(
        "CANCELLED",
        "outbound-service/src/main/java/com/acme/wms/outbound/domain/OutboundStateMachine.java:41:"
        "        .permit(CANCELLED, EnumSet.of(CREATED, ALLOCATED, WAVED))",
    )
    s.say(
        "只有 CREATED / ALLOCATED / WAVED 可以直接取消。一旦进入 PICKING 就不能取消了，只能走拦截（intercept）流程。"
        "从 ALLOCATED 或 WAVED 取消时会释放占用的库存。"
    )
    s.user("拦截流程是干嘛的 哈哈 越问越多")
    s.interrupt()
    s.user("算了拦截下次再说。最后一个：SHIPPED 之后还能改吗")
    s.grep(
        "SHIPPED",
        "outbound-service/src/main/java/com/acme/wms/outbound/domain/OutboundStateMachine.java:47:        .terminal(SHIPPED, CANCELLED)",
    )
    s.say("不能，SHIPPED 和 CANCELLED 都是终态，状态机里标成了 terminal。")
    s.user("ok 谢了")
    s.stop(ms=402880)
    s.title("出库单状态机答疑")
    s.ok(["PICKING"], "进入 PICKING 后不能取消，只能走拦截；对现有代码的说明")
    s.ok(["terminal"], "SHIPPED / CANCELLED 是终态")
    s.forbid("越问越多", "不用改代码", "按仓分片。", "本地端口 8091。")
    return s


def s4():
    s = Session(
        "g4_wms_stock_reconcile", CWD, "2027-02-01T01:50:00Z", branch="fix/stock-reconcile", version="2.1.325", lang="zh", order=4
    )
    s.snapshot()
    s.user(
        [
            reminder(
                [
                    (507, "fact", "3 weeks ago", "库存这块老王（王海涛）负责，表结构要动先找他。"),
                    (505, "decision", "3 weeks ago", "库存变更通知下游用本地消息表 wms_outbox，不用 RocketMQ 事务消息。"),
                    (511, "fact", "2 weeks ago", "波次生成 cron 每 3 分钟一次。"),
                ]
            ),
            "月底对账，报表那边 1 月的出库量比 stock-service 流水多了 1,274 件，差异全在 1 月 27 号。帮我查下\n\n"
            "对账脚本输出：\n  date        stock_flow   rpt_outbound   diff\n  2027-01-26  88,120       88,120         0\n"
            "  2027-01-27  91,433       92,707         +1,274",
        ]
    )
    s.bash(
        "mysql -h 10.20.3.15 -u wms_app -p\"$WMS_DB_PASS\" rpt -e \"SELECT biz_no, COUNT(*) c FROM rpt_stock_flow "
        "WHERE biz_date='2027-01-27' GROUP BY biz_no HAVING c > 1 LIMIT 3\"",
        "biz_no\tc\nOUT2027012700418823\t2\nOUT2027012700418907\t2\nOUT2027012700419011\t2",
        desc="查报表侧重复",
    )
    s.bash(
        "kubectl -n wms logs deploy/stock-service --since=120h | grep -m2 'OutboxRelay'",
        "2027-01-27 14:02:11.408 WARN  [outbox-relay-1] c.a.w.s.outbox.OutboxRelay - send timeout after 3000ms, will retry id=8812093\n"
        "2027-01-27 14:02:16.522 INFO  [outbox-relay-1] c.a.w.s.outbox.OutboxRelay - sent id=8812093 msgId=0A14030F00002A9F",
    )
    s.say(
        "根因：1 月 27 号 14 点 RocketMQ broker 抖了一下，OutboxRelay 发送超时（3000ms），但消息其实已经写进 broker 了；"
        "relay 按失败处理、没标记已发送，下一轮又投了一次。本地消息表本来就是至少一次投递，真正的问题是报表消费端没有幂等，"
        "同一个 biz_no 记了两次。\n\n消费端幂等有两种做法：\n"
        "1. 去重表：`rpt_consume_log(biz_no)` 加唯一索引，和写报表放在同一个本地事务里，插入冲突就跳过；\n"
        "2. Redis `SETNX biz_no` + 7 天 TTL。\n"
        "Redis 快，但 TTL 过期后的重投、以及 Redis 写成功而 DB 事务回滚的情况都会出错。"
    )
    s.user("去重表。要跟业务写在同一个事务里才靠得住，SETNX 那个不考虑")
    s.edit(
        "/home/dev/work/wms-core/report-service/src/main/java/com/acme/wms/report/consumer/StockFlowConsumer.java",
        "    @Transactional\n    public void onMessage(StockChangedEvent e) {\n        flowMapper.insert(RptStockFlow.from(e));",
        "    @Transactional\n    public void onMessage(StockChangedEvent e) {\n"
        "        if (consumeLogMapper.insertIgnore(e.getBizNo()) == 0) {\n            return; // 重复消息\n        }\n"
        "        flowMapper.insert(RptStockFlow.from(e));",
    )
    s.user(
        "这个教训记一下：本地消息表只保证至少一次，所有库存消息的消费者都必须按 biz_no 做幂等，不能假设只来一次"
    )
    s.say("记下了。另外 1 月 27 号多出来的 1,274 件我写了个修数 SQL，按 biz_no 删掉重复的那条，你看一下再执行。")
    s.compact(
        "- 1/27 对账差异：broker 抖动导致 OutboxRelay 重投，报表消费端不幂等\n"
        "- 消费端改成去重表 rpt_consume_log（唯一索引 biz_no，同一事务）\n- 修数 SQL 待确认\n- 下一步：对账机制"
    )
    s.user("修数 SQL 我看过了没问题，我自己去执行。接下来对账要常态化，你觉得怎么搞")
    s.say(
        "两种：\n- T+1 对账：每天凌晨比对前一天的 stock_flow 和报表出库量，有差异发群告警；\n"
        "- 实时比对：消费时同步校验两边的累计值。\n实时比对要在消费链路上多查一次库，而且两边本来就有秒级延迟，会误报。"
    )
    s.user("T+1 就够了，实时比对太重，报表本来也是 T+1 看的。每天 02:30 跑，挂在 XXL-JOB 上，有差异发钉钉群，机器人 webhook 是 https://oapi.dingtalk.com/robot/send?access_token=5c1e9a7f3b2d4e8a9c6f0b1d2e3a4c5f6b7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f")
    s.say("好，对账 job `stockReconcileDaily`，cron `0 30 2 * * ?`，webhook 放 Nacos 的 `report-service-prod.yaml`。")
    s.user(
        "几件事同步一下：1）老王调去 TMS 项目了，库存服务现在周姐（周敏）接手，表结构的事找她。"
        "2）Flyway 去掉了，DBA 要求表结构变更统一走 Yearning 工单，仓库里的 migration 目录下周删。"
        "3）MQ 组统一了 topic 命名，WMS_STOCK_CHANGED 改成 TOPIC_WMS_STOCK_EVENT，旧 topic 双写到月底"
    )
    s.edit(
        "/home/dev/work/wms-core/common/src/main/java/com/acme/wms/common/mq/StockTopics.java",
        '    public static final String CHANGED = "WMS_STOCK_CHANGED";',
        '    public static final String CHANGED = "TOPIC_WMS_STOCK_EVENT";\n'
        '    @Deprecated // 双写到 2 月底\n    public static final String CHANGED_LEGACY = "WMS_STOCK_CHANGED";',
    )
    s.user("还有波次 cron 改成每分钟一次了，3 分钟大促扛不住，业务要拣货单尽快出来。你直接调 admin 的接口改一下")
    s.bash(
        "curl -s -X POST http://xxl-job.wms.internal:8080/xxl-job-admin/jobinfo/update -d 'id=37&scheduleConf=0 0/1 * * * ?'",
        '{"code":500,"msg":"登录失效，请重新登录","content":null}',
        err=True,
    )
    s.say("admin 接口要登录态，我这边没有 XXL-JOB 的账号，改不了。需要你在页面上把 waveGenerate 的 cron 改成 `0 0/1 * * * ?`。")
    s.user("行我自己去页面改。另外库存扣减接口再加一条规矩：调用方必须传 request_id，重复的 request_id 直接返回上次的结果")
    s.say("好，occupy 接口加了 request_id 必填校验，幂等结果缓存在 `wms_occupy_request` 表里。")
    s.bash(
        "git add -A && git commit -m 'fix(report): 库存消息消费幂等; feat: T+1 库存对账'",
        "[fix/stock-reconcile 2d7c5e0] fix(report): 库存消息消费幂等; feat: T+1 库存对账\n 9 files changed, 201 insertions(+), 14 deletions(-)",
    )
    s.user("辛苦，今天就到这")
    s.stop(ms=3012500)
    s.title("1 月 27 日库存对账差异：消费端幂等")

    s.exp(
        "root_cause",
        "zh",
        "1 月 27 号报表出库量比库存流水多 1,274 件：RocketMQ broker 抖动，OutboxRelay 发送超时但消息已写入 broker，"
        "没标记已发送又重投一次；报表消费端没有幂等，同一个 biz_no 记了两次。",
        ["OutboxRelay", "biz_no"],
    )
    s.decision(
        "zh",
        "报表消费端幂等用去重表（rpt_consume_log，biz_no 唯一索引，和写报表同一个事务），不用 Redis SETNX + TTL："
        "要跟业务写在同一个事务里才靠得住。",
        ["rpt_consume_log"],
        "去重表",
        ["SETNX"],
        ["同一个事务"],
    )
    s.exp(
        "lesson",
        "zh",
        "本地消息表只保证至少一次投递，所有库存消息的消费者都必须按 biz_no 做幂等。",
        ["至少一次", "幂等"],
    )
    s.decision(
        "zh",
        "库存对账做 T+1（每天比对前一天 stock_flow 和报表），不做实时比对：实时比对太重，报表本来也是 T+1 看的。",
        ["T+1"],
        "T+1",
        ["实时比对"],
        ["太重"],
    )
    s.fact(
        "config",
        "zh",
        "库存对账 job stockReconcileDaily 每天 02:30 在 XXL-JOB 上跑，有差异发钉钉群（webhook 在 Nacos report-service-prod.yaml）。",
        ["02:30", "stockReconcileDaily"],
    )
    s.fact("config", "zh", "库存服务现在由周姐（周敏）接手，表结构的事找她（老王调去 TMS）。", ["周敏"], sup="g1_wms_stock_oversell#e7")
    s.fact(
        "convention",
        "zh",
        "Flyway 去掉了，表结构变更统一走 DBA 的 Yearning 工单。",
        ["Yearning"],
        sup="g1_wms_stock_oversell#e9",
    )
    s.fact(
        "config",
        "zh",
        "库存变更 topic 改名为 TOPIC_WMS_STOCK_EVENT（MQ 组统一命名），旧 topic 双写到月底。",
        ["TOPIC_WMS_STOCK_EVENT"],
        sup="g1_wms_stock_oversell#e6",
    )
    s.fact(
        "config",
        "zh",
        "波次生成 cron 改成每分钟一次（0 0/1 * * * ?），3 分钟大促扛不住。",
        ["每分钟"],
        sup="g2_wms_wave_xxljob#e6",
    )
    s.fact(
        "constraint",
        "zh",
        "库存扣减接口调用方必须传 request_id，重复的 request_id 直接返回上次的结果。",
        ["request_id"],
    )
    s.ok(["wms_occupy_request"], "request_id 幂等结果表")
    s.ok(["登录态"], "XXL-JOB admin 接口需要登录，助手没有账号")
    s.forbid(
        "2d7c5e0",
        "201 insertions(+)",
        '"content":null',
        "OUT2027012700418823",
        "表结构要动先找他。",
        "不用 RocketMQ 事务消息。",
        "cron 每 3 分钟一次。",
    )
    s.secret(
        "https://oapi.dingtalk.com/robot/send?access_token=5c1e9a7f3b2d4e8a9c6f0b1d2e3a4c5f6b7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f",
        "5c1e9a7f3b2d4e8a9c6f0b1d2e3a4c5f6b7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f",
    )
    return s


SESSIONS = [s1, s2, s3, s4]
