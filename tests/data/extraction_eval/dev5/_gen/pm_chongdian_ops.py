"""Project m: chongdian-ops 充电桩运营平台 (Java 17 / Spring Boot 3, OCPP 1.6J, Kafka, Redis, MySQL, OSS). All Chinese."""
from lib import Session
from recall5 import attach, remind, search

CWD = "/home/dev/work/chongdian-ops"


def m1():
    s = Session("m1_chongdian_offline_ttl", CWD, "2028-03-06T01:42:10.000Z", branch="fix/offline-ttl",
                version="2.1.314", lang="zh", order=1)
    s.snapshot()
    s.user("运营群又炸了，说后台一堆桩显示离线，现场看明明在充电。老王让我今天之内搞定，你帮我看下 ocpp-gateway 里在线状态是怎么判的")
    attach(s, [("212", "fact", "12 天前", "chongdian-ops 仓库是 Gradle 多模块：ocpp-gateway、session-svc、ops-admin",
                 "Gradle 多模块："),
                ("215", "fact", "12 天前", "ops-admin 的前端在另一个仓库 chongdian-admin-web", "在另一个仓库 chongdian-admin-web")])
    s.think("先找写在线状态 key 的地方，再看心跳间隔是怎么下发给桩的。")
    s.grep("pile:online",
           "ocpp-gateway/src/main/java/com/chongdian/gateway/handler/HeartbeatHandler.java:38:        "
           "jedis.setex(\"pile:online:\" + cpId, 180, now);\n"
           "ops-admin/src/main/java/com/chongdian/admin/pile/PileStatusQuery.java:52:        "
           "return jedis.exists(\"pile:online:\" + cpId);")
    s.read(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/handler/BootNotificationHandler.java",
           "    public BootNotificationConfirmation handle(String cpId, BootNotificationRequest req) {\n"
           "        pileRegistry.register(cpId, req.getChargePointModel(), req.getFirmwareVersion());\n"
           "        BootNotificationConfirmation conf = new BootNotificationConfirmation();\n"
           "        conf.setStatus(RegistrationStatus.Accepted);\n"
           "        conf.setCurrentTime(ZonedDateTime.now(ZoneOffset.UTC));\n"
           "        conf.setInterval(props.getHeartbeatInterval());   // ocpp.heartbeat-interval\n"
           "        return conf;\n    }")
    s.bash("grep -n 'heartbeat-interval' ocpp-gateway/src/main/resources/application*.yml",
           "ocpp-gateway/src/main/resources/application.yml:14:    heartbeat-interval: 300")
    s.say("找到了。BootNotification 回给桩的 heartbeatInterval 读的是 `ocpp.heartbeat-interval`，现在配的 300 秒；"
          "但 HeartbeatHandler 写 `pile:online:{cpId}` 的时候 TTL 写死了 180 秒。桩 5 分钟才来一次心跳，key 第 3 分钟就过期了，"
          "ops-admin 一查 key 不在就显示离线，等下一次心跳又上线——运营看到的就是一批桩离线两分钟又恢复。"
          "这个 180 是当初心跳 60 秒的时候写死的，后来把间隔调到 300 没人同步改 TTL。\n\n几个改法：\n"
          "1. TTL 不写死，按 heartbeatInterval × 2 + 30 秒算，和 BootNotification 读同一个配置项，继续用 Redis key TTL 判在线\n"
          "2. 去掉 TTL，加个定时任务每分钟扫 MySQL 的 last_heartbeat_at 判离线\n"
          "3. 把心跳间隔调回 60 秒，TTL 不动")
    s.user("1。扫表不考虑，两万多台桩每分钟扫一遍库，DBA 要骂人。调回 60 秒桩的 4G 流量也扛不住，先别动")
    s.edit(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/handler/HeartbeatHandler.java",
           "jedis.setex(\"pile:online:\" + cpId, 180, now);",
           "jedis.setex(\"pile:online:\" + cpId, props.getHeartbeatInterval() * 2 + 30, now);")
    s.bash("./gradlew :ocpp-gateway:test --tests '*HeartbeatHandlerTest'",
           "> Task :ocpp-gateway:test\n\nHeartbeatHandlerTest > ttlFollowsHeartbeatInterval() PASSED\n"
           "HeartbeatHandlerTest > keyRefreshedOnEveryBeat() PASSED\n\nBUILD SUCCESSFUL in 41s\n"
           "7 actionable tasks: 3 executed, 4 up-to-date", desc="跑心跳单测")
    s.say("改好了，TTL 现在跟着 `ocpp.heartbeat-interval` 走，单测过了。")
    s.stop(ms=96000)
    s.user("运营那边回了：心跳间隔定 120 秒，他们要求 5 分钟内能发现离线。另外现在离线告警是丢一个心跳就报，"
           "4G 桩信号一抖就报一大片，值班的快被烦死了，能不能缓一缓")
    s.think("120 秒的话 TTL = 270 秒。告警去抖要保证还在 5 分钟内。")
    s.say("120 秒的话 TTL 是 270 秒。告警去抖两个选项：\n"
          "A. 连续丢 2 个心跳周期才报离线，最坏 4 分半左右发现，还在 5 分钟内\n"
          "B. key 过期后延迟 10 分钟再确认一次，误报最少，但发现离线会超过 5 分钟的要求\n我倾向 A。")
    s.user("A")
    s.edit(CWD + "/ocpp-gateway/src/main/resources/application.yml",
           "    heartbeat-interval: 300",
           "    heartbeat-interval: 120\n    offline-confirm-beats: 2")
    s.say("改了：`heartbeat-interval: 120`，新增 `offline-confirm-beats: 2`，OfflineDetector 连续丢 2 个周期才发离线事件。")
    s.user("告警现在是发短信给值班手机，每条都要钱，还得走采购审批续费。有没有别的办法")
    s.say("几个选项：\n1. 钉钉群机器人：免费，webhook 直接推，能 @ 值班\n2. 继续短信，但只给整站离线发\n3. 接 PagerDuty，要按人头买席位")
    s.user("钉钉群机器人就行。webhook：https://oapi.dingtalk.com/robot/send?access_token=9c1f0e7a4b2d48e6a3f5c7d9e1b3a5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9 "
           "加签 secret 是 SEC4f1a9d2e7c3b8a6f0e5d4c3b2a1f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1")
    s.say("webhook 和加签 secret 我不写进 application.yml，走环境变量 DINGTALK_WEBHOOK / DINGTALK_SECRET，生产在 K8s 里挂 Secret。"
          "AlertNotifier 已经改成钉钉机器人，离线事件 @ 值班。")
    s.user("对，以后密钥一律走 K8s Secret，不许进仓库。我本地验一下，本地起 gateway 是 "
           "`./gradlew :ocpp-gateway:bootRun --args='--spring.profiles.active=local'`，端口 9301，桩模拟器连 ws://localhost:9301/ocpp/桩编号")
    s.bash("python3 tools/ocpp_sim.py --url ws://localhost:9301/ocpp/CD-TEST-0001 --heartbeat 120 --drop-after 1",
           "[sim] BootNotification -> Accepted, interval=120\n[sim] Heartbeat ok\n[sim] dropping connection\n"
           "[gateway] pile CD-TEST-0001 missed beat 1/2\n[gateway] pile CD-TEST-0001 missed beat 2/2 -> OFFLINE event",
           desc="用模拟器验证离线判定")
    s.say("验证过了：丢 2 个心跳以后才发 OFFLINE 事件。ops-admin 那边是直接 `jedis.exists`，TTL 变了它自动跟着走，不用改。")
    s.user("嗯。顺便说一句，项目里 Redis 客户端统一用 Jedis，别混 Lettuce 进来，之前有人加过被老王打回来了。"
           "状态变更是发 Kafka 的 pile_status_changed，session-svc 和 ops-admin 都在消费，测试环境 Kafka 是 kafka-test.cd.local:9092，你看下离线事件有没有发出去")
    s.bash("kcat -b kafka-test.cd.local:9092 -t pile_status_changed -C -o -1 -e",
           "{\"cpId\":\"CD-TEST-0001\",\"status\":\"OFFLINE\",\"ts\":\"2028-03-06T02:31:07Z\",\"reason\":\"MISSED_BEATS\"}")
    s.say("发出去了，reason 是 MISSED_BEATS。")
    s.user("排查问题的时候桩上报的原始报文可以去 OSS 的 cd-ocpp-raw 翻，保留 90 天。行，commit 吧，"
           "提交信息用「模块: 描述」的格式，描述写中文，比如 `gateway: 在线 TTL 跟随心跳间隔`。这周 oncall 是小陈，合上去以后跟她说一声")
    s.bash("git add -A && git commit -m 'gateway: 在线 TTL 跟随心跳间隔，离线连续丢 2 个心跳才告警'",
           "[fix/offline-ttl 3f9c2ab] gateway: 在线 TTL 跟随心跳间隔，离线连续丢 2 个心跳才告警\n 4 files changed, 37 insertions(+), 9 deletions(-)")
    s.say("提交了。合并后我在群里 @ 小陈说一下。")
    s.user("好嘞，我先去吃饭了")
    s.stop()
    s.title("桩离线误报：TTL 跟随心跳间隔")

    s.exp("root_cause", "zh", "桩被误报离线：BootNotification 下发的心跳间隔 ocpp.heartbeat-interval 是 300 秒，"
          "但 HeartbeatHandler 写 pile:online:{cpId} 的 TTL 写死 180 秒（心跳还是 60 秒时写的，调间隔时没同步改），"
          "key 在两次心跳之间过期，ops-admin 判成离线。", ["180", "heartbeat-interval"])
    s.decision("zh", "桩在线状态继续用 Redis key TTL 判断，TTL 不再写死，按 heartbeatInterval × 2 + 30 秒算、和 BootNotification "
               "读同一个配置项；不用定时任务每分钟扫 MySQL last_heartbeat_at（两万多台桩每分钟扫一遍库压力太大）。",
               ["heartbeatInterval"], "Redis key TTL", ["扫 MySQL"], ["两万多台桩"])
    s.decision("zh", "心跳间隔 heartbeat-interval 定为 120 秒（原来 300 秒），运营要求 5 分钟内能发现离线。",
               ["heartbeat-interval"], "120 秒", ["300 秒"], ["5 分钟内"])
    s.decision("zh", "离线告警去抖：连续丢 2 个心跳周期才报离线（offline-confirm-beats: 2）；不用 key 过期后延迟 10 分钟再确认，"
               "那样发现离线会超过 5 分钟的要求。起因是 4G 桩信号一抖就误报一大片。",
               ["offline-confirm-beats"], "连续丢 2 个心跳", ["延迟 10 分钟"], ["超过 5 分钟"])
    s.decision("zh", "离线告警改发钉钉群机器人（能 @ 值班），不再发短信给值班手机：短信每条都要钱，还得走采购审批；PagerDuty 要买席位也没选。",
               ["钉钉群机器人"], "钉钉群机器人", ["短信"], ["每条都要钱"])
    s.fact("convention", "zh", "密钥一律走 K8s Secret（如钉钉 webhook 用环境变量 DINGTALK_WEBHOOK / DINGTALK_SECRET），不许进仓库。",
           ["K8s Secret"])
    s.fact("command", "zh", "本地起 gateway：`./gradlew :ocpp-gateway:bootRun --args='--spring.profiles.active=local'`，端口 9301，"
           "桩模拟器连 ws://localhost:9301/ocpp/桩编号。", [":ocpp-gateway:bootRun", "9301"])
    s.fact("convention", "zh", "项目里 Redis 客户端统一用 Jedis，不要混用 Lettuce。", ["Jedis"])
    s.fact("config", "zh", "桩状态变更发 Kafka topic pile_status_changed，session-svc 和 ops-admin 都在消费。", ["pile_status_changed"])
    s.fact("config", "zh", "测试环境 Kafka 地址是 kafka-test.cd.local:9092。", ["kafka-test.cd.local"])
    s.fact("config", "zh", "桩上报的原始报文存在 OSS 的 cd-ocpp-raw，保留 90 天，排查问题去那里翻。", ["cd-ocpp-raw", "90 天"])
    s.fact("convention", "zh", "提交信息用「模块: 描述」格式，描述写中文，例如 `gateway: 在线 TTL 跟随心跳间隔`。", ["模块: 描述"])
    s.fact("config", "zh", "线上 oncall 是小陈。", ["小陈"])
    s.ok(["MISSED_BEATS"], "离线事件 reason")
    s.ok(["tools/ocpp_sim.py"], "桩模拟器脚本")
    s.forbid("老王让我今天之内搞定", "BUILD SUCCESSFUL in 41s", "3f9c2ab", "我先去吃饭了", "missed beat 2/2")
    s.secret("9c1f0e7a4b2d48e6a3f5c7d9e1b3a5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9",
             "SEC4f1a9d2e7c3b8a6f0e5d4c3b2a1f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1")
    return s


def m2():
    s = Session("m2_chongdian_newbie_tour", CWD, "2028-03-09T06:20:00.000Z", version="2.1.315", lang="zh", order=2)
    attach(s, [("301", "decision", "3 天前", "桩在线状态用 Redis key TTL 判，TTL = heartbeatInterval × 2 + 30 秒",
                "TTL = heartbeatInterval × 2 + 30 秒"),
               ("305", "fact", "3 天前", "本地起 ocpp-gateway：./gradlew :ocpp-gateway:bootRun，端口 9301",
                "本地起 ocpp-gateway：")], event="SessionStart")
    s.snapshot()
    s.user("我是新来的小周，老王让我先熟悉下 gateway。OCPP 消息进来以后是怎么分到各个 handler 的？")
    s.think("先看 websocket 入口和分发器。")
    s.grep("class OcppDispatcher",
           "ocpp-gateway/src/main/java/com/chongdian/gateway/ws/OcppDispatcher.java:21:public class OcppDispatcher {")
    s.read(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/ws/OcppDispatcher.java",
           "    public void onText(String cpId, String frame) {\n"
           "        JsonNode arr = mapper.readTree(frame);\n"
           "        int type = arr.get(0).asInt();\n"
           "        switch (type) {\n"
           "            case 2 -> handleCall(cpId, arr.get(1).asText(), arr.get(2).asText(), arr.get(3));\n"
           "            case 3 -> pending.complete(arr.get(1).asText(), arr.get(2));\n"
           "            case 4 -> pending.fail(arr.get(1).asText(), arr.get(2).asText(), arr.get(3).asText());\n"
           "            default -> log.warn(\"unknown frame type {} from {}\", type, cpId);\n        }\n    }")
    s.say("入口是 `OcppWebSocketHandler`，每条文本帧交给 `OcppDispatcher.onText`。OCPP-J 的帧是 JSON 数组，第一个元素是消息类型：\n"
          "- 2 = CALL（桩发起的请求，比如 BootNotification、Heartbeat、StartTransaction），按 action 名在 `handlerRegistry` 里找对应的 handler\n"
          "- 3 = CALLRESULT、4 = CALLERROR：都是平台下发请求的回包，按 uniqueId 交给 `PendingCallRegistry`\n"
          "handler 都实现 `OcppHandler<Req, Conf>`，启动时 Spring 扫描注册。")
    s.user("那 RemoteStartTransaction 这种平台主动下发的呢？超时了怎么办")
    s.read(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/ws/PendingCallRegistry.java",
           "    public CompletableFuture<JsonNode> register(String uniqueId) {\n"
           "        CompletableFuture<JsonNode> f = new CompletableFuture<>();\n"
           "        calls.put(uniqueId, f);\n"
           "        return f.orTimeout(30, TimeUnit.SECONDS)\n"
           "                .whenComplete((r, e) -> calls.remove(uniqueId));\n    }")
    s.say("下发走 `CommandService.send`：生成 uniqueId，先在 `PendingCallRegistry` 里登记一个 CompletableFuture，再把 CALL 帧写到这个桩的 "
          "websocket。桩回 CALLRESULT / CALLERROR 时按 uniqueId 完成 future。30 秒没回就超时，ops-admin 上显示「桩未响应」。")
    s.user("超时的多吗？之前有人查过没")
    search(s, "RemoteStartTransaction 超时", [
        ("288", "experience", "RemoteStart 超时大多是桩 4G 信号差，不是平台 bug，先看桩的信号强度上报", "先看桩的信号强度上报")])
    s.say("记忆里有一条之前的排查结论，说这类超时多半是桩侧网络问题。具体比例我这边没有数据，要看的话可以查 ops-admin 的下发记录表。")
    s.user("CALLRESULT 和 CALLERROR 在日志里怎么区分？")
    s.grep("pending.fail", "ocpp-gateway/src/main/java/com/chongdian/gateway/ws/PendingCallRegistry.java:47:"
           "        log.info(\"call {} failed: {} {}\", uniqueId, code, desc);")
    s.say("CALLERROR 会打一条 `call <uniqueId> failed: <errorCode> <描述>` 的 info 日志，CALLRESULT 不打日志，只有下发方自己记结果。")
    s.user("好的明白了，谢谢。话说楼下那家麻辣烫还行吗，老王说一般")
    s.say("这个我真不知道 😄 代码上还有想看的随时问。")
    s.stop()
    s.title("新人熟悉 OCPP 消息分发")
    s.forbid("楼下那家麻辣烫", "CALLRESULT 和 CALLERROR 在日志里怎么区分", "orTimeout(30, TimeUnit.SECONDS)")
    return s


def m3():
    s = Session("m3_chongdian_double_settle", CWD, "2028-03-13T01:05:30.000Z", branch="fix/settle-dedup",
                version="2.1.318", lang="zh", order=3)
    s.snapshot()
    r = remind(s, [("318", "fact", "1 周前", "线上 oncall 是小陈，有问题先 @ 她", "有问题先 @ 她"),
                   ("320", "decision", "1 周前", "离线告警发钉钉群机器人，不发短信", "离线告警发钉钉群机器人，不发短信")])
    s.user([r, "昨晚有用户投诉一次充电被扣了两次钱，客服拉了个单子，一晚上 300 多单。session-svc 结算那块帮我查下"])
    s.think("先找 StopTransaction 的消费方。")
    s.grep("StopTransaction", "session-svc/src/main/java/com/chongdian/session/settle/SettleConsumer.java:33:"
           "    @KafkaListener(topics = \"ocpp_transaction\", groupId = \"session-settle\")")
    s.read(CWD + "/session-svc/src/main/java/com/chongdian/session/settle/SettleConsumer.java",
           "    public void onStop(StopTransactionEvent ev) {\n"
           "        ChargeOrder order = orderRepo.findByTxId(ev.getTransactionId());\n"
           "        double fee = tariff.calc(order.getStationId(), ev.getMeterStart(), ev.getMeterStop());\n"
           "        walletService.deduct(order.getUserId(), fee);\n"
           "        orderRepo.markSettled(order.getId(), fee);\n    }")
    s.bash("kubectl -n chongdian logs session-svc-5b7c9d8f6-w2mfn --since=12h | grep 'txId=88123407'",
           "2028-03-12 02:13:41.207 INFO  SettleConsumer - settle txId=88123407 fee=23.6\n"
           "2028-03-12 02:15:02.884 INFO  SettleConsumer - settle txId=88123407 fee=23.6", desc="看重复结算日志")
    s.say("根因是：桩断网重连以后，会把没收到 CALLRESULT 的 StopTransaction 重发（OCPP 1.6 要求 transaction 类消息保证送达），"
          "gateway 原样转发到 Kafka，SettleConsumer 拿到就扣钱，没做幂等，同一个 transactionId 扣了两次。"
          "日志里 txId=88123407 就是 02:13 和 02:15 各结算了一次。\n\n方案：\n"
          "1. 消费端加幂等表 settle_dedup（transaction_id 唯一键），插幂等记录和扣款放同一个本地事务\n"
          "2. 开 Kafka exactly-once 事务\n"
          "3. gateway 侧用 Redis 记最近处理过的 messageId 去重\n\n"
          "2 只保证 Kafka 内部读-处理-写的 exactly-once，扣款写的是 MySQL，管不到；3 gateway 重启或者扩容就丢了。")
    s.user("1，就这个吧")
    s.tool("Write", {"file_path": CWD + "/session-svc/src/main/resources/db/migration/V12__settle_dedup.sql",
                     "content": "CREATE TABLE settle_dedup (\n  transaction_id BIGINT PRIMARY KEY,\n  settled_at DATETIME(3) NOT NULL\n);\n"},
           "File created successfully at: " + CWD + "/session-svc/src/main/resources/db/migration/V12__settle_dedup.sql")
    s.bash("./gradlew :session-svc:test",
           "> Task :session-svc:test FAILED\n\nSettleConsumerIT > initializationError FAILED\n"
           "    org.flywaydb.core.api.FlywayException: Found more than one migration with version 12\n"
           "    Offenders:\n    -> db/migration/V12__settle_dedup.sql (SQL)\n    -> db/migration/V12__tariff_night_rate.sql (SQL)\n\n"
           "BUILD FAILED in 1m 3s", err=True)
    s.say("迁移版本号撞了：昨天合进来的 V12__tariff_night_rate.sql 已经占了 12，我把新脚本改成 V13。")
    s.bash("git mv session-svc/src/main/resources/db/migration/V12__settle_dedup.sql "
           "session-svc/src/main/resources/db/migration/V13__settle_dedup.sql && ./gradlew :session-svc:test",
           "SettleConsumerIT > duplicateStopSettlesOnce() PASSED\nSettleConsumerIT > differentTxSettledSeparately() PASSED\n\n"
           "BUILD SUCCESSFUL in 58s")
    s.say("测试过了，同一个 transactionId 重复来只结算一次。")
    s.user("EOS 那个 push 组之前踩过，写库根本管不到，所以别再提了。另外我看 fee 是 double？")
    s.say("对，`tariff.calc` 返回 double，电价 × 度数会出现 0.30000000000000004 这种尾巴。可以改 long 存分，或者用 BigDecimal 存元。")
    s.user("long 存分。BigDecimal 序列化给前端老出问题，上次 App 上金额显示成科学计数法了。以后金额统一 long 存分")
    s.edit(CWD + "/session-svc/src/main/java/com/chongdian/session/settle/SettleConsumer.java",
           "double fee = tariff.calc(order.getStationId(), ev.getMeterStart(), ev.getMeterStop());",
           "long feeFen = tariff.calcFen(order.getStationId(), ev.getMeterStart(), ev.getMeterStop());")
    s.say("改成 `calcFen` 返回 long（分），`deduct` / `markSettled` 也都改成分，tariff 里用整数运算。")
    s.user("对了几个事更新下。之前说的 gateway 端口 9301 不对了，现在是 9310，9301 让给 actuator 了。"
           "还有桩状态那个 topic 改名了，pile_status_changed 现在改成 ocpp.pile.status 了，老的月底下线")
    s.grep("pile_status_changed", "ocpp-gateway/src/main/java/com/chongdian/gateway/event/Topics.java:8:"
           "    public static final String PILE_STATUS = \"pile_status_changed\";\n"
           "ops-admin/src/main/resources/application.yml:31:      topic: pile_status_changed")
    s.edit(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/event/Topics.java",
           "PILE_STATUS = \"pile_status_changed\";", "PILE_STATUS = \"ocpp.pile.status\";")
    s.say("gateway 常量和 ops-admin 的配置都改成 ocpp.pile.status 了。")
    s.user("新 topic 的消息 key 统一用 chargePointId，同一个桩的状态消息要保证有序")
    s.say("好，`send(PILE_STATUS, cpId, event)`，key 用 chargePointId。")
    s.user("Jedis 不用了，换成 Lettuce，跟 Spring Boot 默认走，老王上周拍板的，新代码别再写 jedis 了。"
           "oncall 也换人了，陈思雨调去做 App 了，现在 oncall 是周子豪，有事找他")
    s.say("收到，新代码用 Lettuce（`spring-boot-starter-data-redis` 默认客户端）。")
    s.user("告警那个钉钉群机器人也别用了，公司统一迁企业微信了，换成企微群机器人。webhook 是 "
           "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=7d3b9f21-4c8e-4a6d-b2f0-91e5c3a7d864 。"
           "另外整站离线（一个站的桩全掉了）才 @所有人，单桩离线只发群不 @")
    s.edit(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/alert/AlertNotifier.java",
           "private final DingTalkClient client;", "private final WeComRobotClient client;")
    s.say("AlertNotifier 换成企微群机器人，webhook key 走环境变量 WECOM_WEBHOOK_KEY；整站离线 @所有人，单桩离线只发群消息。")
    s.user("行。补偿完以后对账要盯一下，ReconcileJob 每天凌晨 3 点跑，明早看下结果")
    s.say("好，明早我看 ReconcileJob 的结果。")
    s.stop(ms=143000)
    s.title("StopTransaction 重发导致重复扣款")

    s.exp("root_cause", "zh", "用户一次充电被扣两次钱：桩断网重连后会重发没收到 CALLRESULT 的 StopTransaction（OCPP 1.6 要求 transaction "
          "类消息保证送达），gateway 原样转发到 Kafka，SettleConsumer 没做幂等，同一个 transactionId 结算了两次。",
          ["StopTransaction", "幂等"])
    s.decision("zh", "结算防重复扣款：消费端加幂等表 settle_dedup（transaction_id 唯一键），插幂等记录和扣款在同一个本地事务；"
               "不开 Kafka exactly-once 事务（只管 Kafka 内部，管不到扣款写 MySQL），也不在 gateway 用 Redis 按 messageId 去重（重启或扩容就丢）。",
               ["settle_dedup"], "幂等表", ["exactly-once"], ["管不到"])
    s.exp("fix", "zh", "Flyway 报 Found more than one migration with version 12：新迁移和刚合入的 V12__tariff_night_rate.sql 版本号冲突，"
          "把新脚本改名为 V13__settle_dedup.sql 后测试通过。", ["more than one migration with version", "V13"])
    s.decision("zh", "金额统一用 long 存分（tariff.calcFen），不用 BigDecimal 存元，也不再用 double：BigDecimal 序列化给前端出过问题，"
               "App 上金额显示成科学计数法。", ["long 存分"], "long 存分", ["BigDecimal"], ["科学计数法"])
    s.fact("command", "zh", "本地起的 ocpp-gateway 端口改为 9310（9301 让给 actuator 了），桩模拟器改连 ws://localhost:9310/ocpp/桩编号。", ["9310"], sup="m1_chongdian_offline_ttl#e7")
    s.fact("config", "zh", "桩状态 topic 改名为 ocpp.pile.status（原 pile_status_changed，月底下线）。", ["ocpp.pile.status"],
           sup="m1_chongdian_offline_ttl#e9")
    s.fact("convention", "zh", "ocpp.pile.status 的消息 key 统一用 chargePointId，保证同一个桩的状态消息有序。", ["chargePointId"])
    s.fact("convention", "zh", "Redis 客户端改用 Lettuce（Spring Boot 默认），新代码不再用 Jedis。", ["Lettuce"],
           sup="m1_chongdian_offline_ttl#e8")
    s.fact("config", "zh", "线上 oncall 现在是周子豪（陈思雨调去做 App 了）。", ["周子豪"], sup="m1_chongdian_offline_ttl#e13")
    s.decision("zh", "告警通道从钉钉群机器人换成企业微信群机器人（企微群机器人，webhook key 走环境变量 WECOM_WEBHOOK_KEY），因为公司统一迁企业微信了。",
               ["企微群机器人"], "企业微信", ["钉钉"], ["统一迁企业微信"], sup="m1_chongdian_offline_ttl#e5")
    s.fact("convention", "zh", "告警规则：整站离线（一个站的桩全掉）才 @所有人，单桩离线只发群不 @。", ["整站离线", "@所有人"])
    s.fact("config", "zh", "结算对账任务是 session-svc 的 ReconcileJob，每天凌晨 3 点跑。", ["ReconcileJob", "3 点"])
    s.ok(["txId=88123407"], "重复结算样例")
    s.forbid("session-svc-5b7c9d8f6-w2mfn", "02:15:02.884", "明早看下结果", "0.30000000000000004", "BUILD FAILED in 1m 3s")
    s.secret("7d3b9f21-4c8e-4a6d-b2f0-91e5c3a7d864")
    return s


def m4():
    s = Session("m4_chongdian_oss_cost", CWD, "2028-03-21T02:30:00.000Z", branch="chore/oss-lifecycle",
                version="2.1.320", lang="zh", order=4)
    s.snapshot()
    r = remind(s, [("402", "fact", "2 周前", "桩上报原始报文存 OSS cd-ocpp-raw，保留 90 天", "存 OSS cd-ocpp-raw，保留 90 天"),
                   ("417", "fact", "2 周前", "测试环境 Kafka：kafka-test.cd.local:9092", "测试环境 Kafka：kafka-test")])
    s.user(r + "\n\nOSS 账单这个月翻倍了，财务来问。看下 cd-ocpp-raw 这个桶为啥这么大。AK 用这个："
           "LTAI5tKq8Wm3xYp9Rv2Nz7Ce / Sk7eQw2Rt9Yp4Ux6Iz1Oa3Sd5Fg8Hj")
    s.think("先看桶的总量和按消息类型的分布。")
    s.bash("ossutil du oss://cd-ocpp-raw/ --block-size GB",
           "storage class   object count            sum size(GB)\nStandard        1893422071              41873.112\n"
           "total object sum size: 41873.112", desc="桶容量")
    s.bash("ossutil ls oss://cd-ocpp-raw/2028/03/20/ -s | awk -F/ '{print $7}' | cut -d_ -f1 | sort | uniq -c | sort -rn | head -4",
           "54210377 MeterValues\n 4120566 Heartbeat\n 2207710 StatusNotification\n  418022 StopTransaction")
    s.bash("ossutil ls oss://cd-ocpp-raw/2028/02/20/ -s | grep -c MeterValues", "9180442")
    s.say("MeterValues 占了 87%。2 月 20 号一天是 918 万条，3 月 20 号是 5421 万条，差不多 6 倍：3 月初推的那批 v2.3 固件把 MeterValues "
          "上报间隔从 60 秒改成了 10 秒，原始报文又是全量落 OSS，量就上去了。\n\n选项：\n"
          "1. 加生命周期规则：7 天后转低频存储（IA），到期删除\n"
          "2. MeterValues 原始报文只落每分钟第一条，其余只进聚合表\n"
          "3. 原始报文不落 OSS，改写 ClickHouse，按需查询")
    s.user("ClickHouse 不考虑，太重了，没人运维。1 和 2 都做。保留期之前说的 90 天改成 30 天吧，超过 30 天回去翻报文的基本没有")
    s.say("好，那 IA 转换放 7 天，过期删除放 30 天。我先写生命周期规则。", end=False)
    s.interrupt()
    s.user("等下，结算相关的 StartTransaction / StopTransaction 报文单独放 settle/ 前缀，保留 3 年，审计要查，别被 30 天的规则删了")
    s.tool("Write", {"file_path": CWD + "/deploy/oss/lifecycle.xml", "content":
                     "<LifecycleConfiguration>\n  <Rule><ID>raw-ia-7d-expire-30d</ID><Prefix>raw/</Prefix><Status>Enabled</Status>\n"
                     "    <Transition><Days>7</Days><StorageClass>IA</StorageClass></Transition>\n"
                     "    <Expiration><Days>30</Days></Expiration></Rule>\n"
                     "  <Rule><ID>settle-3y</ID><Prefix>settle/</Prefix><Status>Enabled</Status>\n"
                     "    <Expiration><Days>1095</Days></Expiration></Rule>\n</LifecycleConfiguration>\n"},
           "File created successfully at: " + CWD + "/deploy/oss/lifecycle.xml")
    s.bash("ossutil lifecycle --method put oss://cd-ocpp-raw deploy/oss/lifecycle.xml",
           "Error: oss: service returned error: StatusCode=403, ErrorCode=AccessDenied, ErrorMessage=\"You have no right to access "
           "this object because of bucket acl.\", RequestId=65F8A1C2E4B7D90012AB34CD", err=True)
    s.say("这个 AK 是 RAM 子账号，没有 PutBucketLifecycle 权限，规则写好了但没法下发。")
    s.user("权限得找运维开，今天搞不定，先放着，lifecycle.xml 提 PR 就行。MeterValues 那个按你说的只留每分钟第一条")
    s.edit(CWD + "/ocpp-gateway/src/main/java/com/chongdian/gateway/raw/RawFrameArchiver.java",
           "archiver.put(cpId, action, frame);",
           "if (!\"MeterValues\".equals(action) || sampler.firstInMinute(cpId)) {\n"
           "            archiver.put(cpId, action, frame);\n        }")
    s.say("RawFrameArchiver 改了：MeterValues 每个桩每分钟只落第一条，其他消息照旧。")
    s.user("以后固件升级要先看下上报频率有没有变，这次就是没人看。另外 ReconcileJob 时间改了，挪到凌晨 1 点半，"
           "3 点那会儿跟 DBA 的全量备份撞了，锁等待一堆")
    search(s, "ReconcileJob 对账 时间", [
        ("433", "fact", "结算对账 ReconcileJob 每天凌晨 3 点跑，看结果找 session-svc 日志", "看结果找 session-svc 日志")])
    s.edit(CWD + "/session-svc/src/main/resources/application.yml",
           "    reconcile-cron: \"0 0 3 * * ?\"", "    reconcile-cron: \"0 30 1 * * ?\"")
    s.say("cron 改成 `0 30 1 * * ?` 了。对账挪时间以后，失败了要不要处理方式也定一下：\n"
          "a. 失败自动重跑一次\nb. 只发企微告警，人工处理")
    s.user("b。自动重跑容易重复补单，上个月就补重过一次")
    s.say("好，ReconcileJob 失败只发企微告警，不自动重跑，已经改了 `ReconcileFailureHandler`。")
    s.user("对了，之前给你的测试环境 Kafka 地址 kafka-test.cd.local 写错了，应该是 kafka-test.cd.internal:9092，.local 那个解析不到")
    s.bash("kcat -b kafka-test.cd.internal:9092 -L | head -3",
           "Metadata for all topics (from broker 1: kafka-test.cd.internal:9092/1):\n 3 brokers:\n  broker 1 at kafka-test.cd.internal:9092")
    s.say("通了，kafka-test.cd.internal 三个 broker 都在。")
    s.bash("git add -A && git commit -m 'ops: 原始报文生命周期 30 天 + MeterValues 按分钟采样，对账挪到 1:30'",
           "[chore/oss-lifecycle b71e0d4] ops: 原始报文生命周期 30 天 + MeterValues 按分钟采样，对账挪到 1:30\n 4 files changed, 52 insertions(+), 3 deletions(-)")
    s.stop()
    s.title("OSS 原始报文成本")

    s.exp("root_cause", "zh", "OSS 账单翻倍：3 月初那批 v2.3 固件把 MeterValues 上报间隔从 60 秒改成 10 秒，原始报文又全量落 cd-ocpp-raw，"
          "MeterValues 占了 87%。", ["MeterValues", "10 秒"])
    s.exp("lesson", "zh", "固件升级前要先看上报频率有没有变（这次 MeterValues 频率变了没人看，OSS 成本翻倍）。", ["固件升级", "上报频率"])
    s.fact("config", "zh", "桩原始报文（OSS cd-ocpp-raw）保留期改为 30 天（原来 90 天），7 天后转低频存储。", ["30 天"],
           sup="m1_chongdian_offline_ttl#e11")
    s.fact("convention", "zh", "结算相关的 StartTransaction / StopTransaction 原始报文单独放 settle/ 前缀，保留 3 年（审计要查），不受 30 天规则影响。",
           ["settle/", "3 年"])
    s.decision("zh", "原始报文成本：OSS 生命周期规则（7 天转低频 IA、到期删除），不改存 ClickHouse（太重，没人运维）。",
               ["低频"], "生命周期", ["ClickHouse"], ["没人运维"])
    s.decision("zh", "MeterValues 原始报文只落每分钟第一条（每个桩，RawFrameArchiver 采样），其余只进聚合表，不再全量落 OSS：MeterValues 占了 87%。",
               ["RawFrameArchiver"], "每分钟第一条", ["全量落"], ["87%"])
    s.fact("config", "zh", "ReconcileJob 对账改为每天凌晨 1 点半跑（cron `0 30 1 * * ?`），原来 3 点会跟 DBA 的全量备份撞，锁等待一堆。",
           ["0 30 1 * * ?", "全量备份"], sup="m3_chongdian_double_settle#e12")
    s.decision("zh", "ReconcileJob 对账失败只发企微告警、人工处理，不自动重跑：自动重跑容易重复补单，上个月补重过一次。",
               ["ReconcileJob"], "人工处理", ["自动重跑"], ["重复补单"])
    s.fact("config", "zh", "测试环境 Kafka 地址是 kafka-test.cd.internal:9092（.local 那个是写错的，解析不到）。", ["kafka-test.cd.internal"],
           sup="m1_chongdian_offline_ttl#e10")
    s.ok(["PutBucketLifecycle"], "生命周期规则因 RAM 子账号没权限未下发，待运维开权限（未解决）")
    s.ok(["lifecycle.xml"], "生命周期规则文件")
    s.forbid("41873.112", "54210377", "b71e0d4", "RequestId=65F8A1C2E4B7D90012AB34CD", "今天搞不定")
    s.secret("LTAI5tKq8Wm3xYp9Rv2Nz7Ce", "Sk7eQw2Rt9Yp4Ux6Iz1Oa3Sd5Fg8Hj")
    return s


SESSIONS = [m1, m2, m3, m4]
