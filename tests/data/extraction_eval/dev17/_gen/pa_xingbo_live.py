"""Project A: xingbo-live 星播直播 (Java 17 / Spring Boot 3: gift-service, wallet-service, rank-service, settle-service)."""

from lib import Session, recall_block, write_gold

CWD = "/home/dev/work/xingbo-live"
ROOT = CWD


# ---------------------------------------------------------------- a1
def a1(out):
    name = "a1_xingbo_live_gift_combo"
    s = Session(name, CWD, "fix/gift-combo-double-charge", "2026-04-07T01:38:00.000Z", "2.1.322")
    s.snapshot()
    s.user(
        "早。礼物连击重复扣币，客服今天已经收到 7 单投诉了，基本都是弱网下连击「星河」礼物的。"
        "gift-service 本地用 `./mvnw spring-boot:run -pl gift-service -Dspring-boot.run.profiles=dev` 起，端口 8081。"
        "先看下 GiftSendService.java"
    )
    s.think("先读 GiftSendService，看扣币和幂等是怎么做的，再看客户端重试会不会复用同一个幂等 key。")
    s.read(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/service/GiftSendService.java",
        """package com.xingbo.gift.service;

import java.time.Duration;
import lombok.RequiredArgsConstructor;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
@RequiredArgsConstructor
public class GiftSendService {
    private final WalletClient walletClient;
    private final GiftCatalog giftCatalog;
    private final GiftOrderMapper giftOrderMapper;
    private final KafkaTemplate<String, GiftSentEvent> kafka;
    private final StringRedisTemplate redis;

    @Transactional
    public SendResult send(SendGiftReq req) {
        String idemKey = "gift:idem:" + req.getRequestId();
        if (Boolean.FALSE.equals(redis.opsForValue().setIfAbsent(idemKey, "1", Duration.ofMinutes(10)))) {
            throw new BizException(ErrorCode.GIFT_DUPLICATED);
        }
        long cost = giftCatalog.price(req.getGiftId()) * req.getCount();
        walletClient.deduct(req.getUid(), cost, req.getRequestId());
        GiftOrder order = GiftOrder.of(req, cost);
        giftOrderMapper.insert(order);
        kafka.send(Topics.GIFT_SENT, String.valueOf(req.getRoomId()), GiftSentEvent.from(order));
        return SendResult.ok(order.getId());
    }
}""",
    )
    s.say(
        "现在的幂等是 `gift:idem:{requestId}` 这一个 key，wallet-service 的 deduct 也是按 requestId 幂等。"
        "所以只要客户端重试时 requestId 变了，两层幂等都会失效。有当时的请求日志吗？想确认一下重试请求的 requestId 是不是同一个。"
    )
    s.user(
        "nginx 的，拿 uid 过滤了一下：\n```\n"
        '10.30.8.77 - - [07/Apr/2026:09:41:12 +0800] "POST /api/gift/send HTTP/1.1" 200 87 "-" "XingboAndroid/5.12.0 okhttp/4.12.0" rid=7f3e91c0 combo=cb_88120 seq=14 rt=3.012\n'
        '10.30.8.77 - - [07/Apr/2026:09:41:15 +0800] "POST /api/gift/send HTTP/1.1" 200 87 "-" "XingboAndroid/5.12.0 okhttp/4.12.0" rid=a21b77d4 combo=cb_88120 seq=14 rt=0.041\n'
        '10.30.8.77 - - [07/Apr/2026:09:41:15 +0800] "POST /api/gift/send HTTP/1.1" 200 87 "-" "XingboAndroid/5.12.0 okhttp/4.12.0" rid=c9d04e12 combo=cb_88120 seq=15 rt=0.038\n```',
        dsec=95,
    )
    s.think(
        "combo=cb_88120 seq=14 出现两次，rid 不同，第一次 rt=3.012，正好超过 OkHttp 的 3 秒超时。客户端重试拦截器重新生成了 X-Request-Id。"
    )
    s.say(
        "找到了。同一个 `combo=cb_88120 seq=14` 发了两次，rid 分别是 7f3e91c0 和 a21b77d4；第一次 rt=3.012，刚好超过 Android 端 OkHttp 的 3 秒超时。\n\n"
        "根因：Android 端 OkHttp 超时重试时重新生成了 X-Request-Id，而服务端（gift-service 的 Redis 幂等和 wallet-service 的 deduct）都是按 requestId 幂等的，"
        "所以同一下连击被当成两次请求，扣了两次星钻。\n\n"
        "去重应该落在业务唯一键 (uid, comboId, comboSeq) 上，几个方案：\n"
        "1. Redis SETNX `gift:combo:{uid}:{comboId}:{seq}`，TTL 10 分钟，命中就不再扣币\n"
        "2. gift_order 加唯一索引 (uid, combo_id, combo_seq)，先插订单、冲突即视为重复\n"
        "3. 让客户端重试复用 requestId，服务端不动\n\n"
        "2 最稳，但要动大表；1 改动最小。你倾向哪个？",
        dsec=9,
    )
    s.user(
        "1 吧。唯一索引的话蔓蔓（周蔓，DBA）说 gift_order 已经 3 亿多行了，就算 180 天以上的每月 1 号都归档到 OSS 的 xingbo-archive 桶，"
        "热表还是 3 亿多，加索引得走 gh-ost 跑一晚上，这周排不上。客户端那边也会修，但他们发版周期两周，不能指望 3。",
        dsec=120,
    )
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/service/GiftSendService.java",
        '        String idemKey = "gift:idem:" + req.getRequestId();\n'
        '        if (Boolean.FALSE.equals(redis.opsForValue().setIfAbsent(idemKey, "1", Duration.ofMinutes(10)))) {',
        '        String comboKey = String.format("gift:combo:%d:%s:%d", req.getUid(), req.getComboId(), req.getComboSeq());\n'
        '        if (Boolean.FALSE.equals(redis.opsForValue().setIfAbsent(comboKey, "1", Duration.ofMinutes(10)))) {',
    )
    s.bash(
        "./mvnw -q -pl gift-service test -Dtest=GiftSendServiceTest",
        "Run GiftSendService tests",
        "[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 31.2 s <<< FAILURE! - in com.xingbo.gift.service.GiftSendServiceTest\n"
        "[ERROR] com.xingbo.gift.service.GiftSendServiceTest  Time elapsed: 31.2 s  <<< ERROR!\n"
        "java.lang.IllegalStateException: Failed to load ApplicationContext\n"
        "Caused by: com.alibaba.nacos.api.exception.NacosException: Client not connected, current status:STARTING\n"
        "\tat com.alibaba.nacos.client.config.impl.ClientWorker$ConfigRpcTransportClient.queryConfig(ClientWorker.java:1015)\n"
        "\t... 42 more\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project gift-service",
        err=True,
        rdsec=38,
    )
    s.think("单测启动时走了 bootstrap.yml 里的 dev Nacos，本地连不上。看看 test resources 里有没有专门的 profile。")
    s.grep(
        "nacos",
        f"{ROOT}/gift-service/src",
        "gift-service/src/main/resources/bootstrap.yml:4:    nacos:\n"
        "gift-service/src/main/resources/bootstrap.yml:6:        server-addr: 10.12.1.8:8848\n"
        "gift-service/src/test/resources/application-ut.yml:3:    nacos:\n"
        "gift-service/src/test/resources/application-ut.yml:5:        enabled: false",
        glob="*.yml",
    )
    s.bash(
        "./mvnw -q -pl gift-service test -Dtest=GiftSendServiceTest -Dspring.profiles.active=ut",
        "Re-run tests with the ut profile (no Nacos)",
        "[INFO] Tests run: 14, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 4.87 s - in com.xingbo.gift.service.GiftSendServiceTest",
        rdsec=21,
    )
    s.say(
        "过了。注意一个坑：gift-service 的单测必须带 `-Dspring.profiles.active=ut`，否则会按 bootstrap.yml 去连 dev 的 Nacos（10.12.1.8:8848），"
        "本地直接报 `NacosException: Client not connected`；ut profile 里把 nacos config 关掉了。\n\n"
        "还有一个问题：命中重复时现在是抛 `GIFT_DUPLICATED`。要不要改？\n"
        "a) 返回 200 + 第一次的原订单号（幂等成功）\n"
        "b) 保持报错，返回 409 / GIFT_DUPLICATED",
        dsec=5,
    )
    s.user(
        "a，客户端拿到错误码会弹「赠送失败」，用户以为没送出去又会再点一次，更乱。\n"
        "另外 redis key 的规范你按这个来：`{服务}:{用途}:{id}`，全小写冒号分隔，而且必须带 TTL，不允许永久 key —— 上次 rank 的永久 key 把 redis 撑爆过一次",
        dsec=80,
    )
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/service/GiftSendService.java",
        "            throw new BizException(ErrorCode.GIFT_DUPLICATED);",
        "            // 重复的连击：按幂等成功处理，返回第一次的订单号\n"
        "            return SendResult.ok(giftOrderMapper.findIdByCombo(req.getUid(), req.getComboId(), req.getComboSeq()));",
    )
    s.say("改好了：重复请求返回 200 和原订单号，`gift:combo:*` key 都带 10 分钟 TTL。", dsec=4)
    s.user(
        "顺便把告警接一下：扣币失败、或者 combo 去重命中率突然飙高的时候，往飞书「直播资金告警」群发消息。webhook 是 "
        "https://open.feishu.cn/open-apis/bot/v2/hook/3f1c9a7e-5b2d-4e8a-9c61-7d0b2e4f8a13 ，你先写到 application-dev.yml 里我测一下。\n"
        "dev 的配置现在长这样：\n```yaml\nspring:\n  datasource:\n    url: jdbc:mysql://10.12.3.40:3306/xingbo_gift?useSSL=false&serverTimezone=Asia/Shanghai\n"
        "    username: gift_rw\n    password: Gw7pQ2zLx9mR\n  kafka:\n    bootstrap-servers: 10.12.5.11:9092\n  data:\n    redis:\n      host: 10.12.6.21\n      database: 3\n"
        "aliyun:\n  oss:\n    endpoint: oss-cn-hangzhou.aliyuncs.com\n    access-key-id: LTAI5tHq8ZkP3vWnYb2Xr7Jd\n    access-key-secret: 9sKfT2mXqLw4RzVb8NcJh6YpEuA3Dg\n```\n"
        "测试环境 redis 密码是 xb_redis_2024!Qa，别写进代码里。",
        dsec=150,
    )
    s.say(
        "飞书 webhook 这个 URL 里带的就是机器人 token，拿到就能往群里发消息，我不建议写进仓库里的 application-dev.yml"
        "（同理，这份 yml 里的数据库密码和 OSS AccessKey Secret 其实也不该进 git，回头最好挪出去）。两个方案：\n"
        "1. 环境变量 `FEISHU_ALERT_WEBHOOK`，本地和 k8s 里从 Secret 注入\n"
        "2. 放 Nacos 配置 `alert.feishu.webhook`\n要哪个？",
        dsec=7,
    )
    s.user("环境变量吧，Nacos 那边 dev 和 prod 是同一个 namespace，权限没隔开，谁都能看", dsec=45)
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/alert/AlertProperties.java",
        "    private String feishuWebhook;",
        "    /** 从环境变量 FEISHU_ALERT_WEBHOOK 注入，不要写进任何 yml */\n"
        '    @Value("${FEISHU_ALERT_WEBHOOK:}")\n    private String feishuWebhook;',
    )
    s.say(
        "好了，`AlertProperties` 从 `FEISHU_ALERT_WEBHOOK` 读，没配就只打日志不发飞书。本地跑的时候 `export FEISHU_ALERT_WEBHOOK=...` 再起服务就行。",
        dsec=4,
    )
    s.user(
        "ok。还有，GiftSentEvent 里加个 comboSeq 字段，rank-service 做连击榜要用。topic 还是 gift.sent.v1，消息 key 是 roomId，"
        "rank-service 用 rank-service-cg 这个 group 消费，settle-service 也订阅了。加字段之前要先跟胖虎（王浩）说一声，"
        "settle-service 是他的，他那边是按字段反序列化的",
        dsec=70,
    )
    s.think("加字段要向后兼容；看下 settle-service 怎么消费这个事件，以及日结 job 在哪。")
    s.read(
        f"{ROOT}/settle-service/src/main/java/com/xingbo/settle/job/AnchorDailySettleJob.java",
        """package com.xingbo.settle.job;

/**
 * 主播日结：把前一天 anchor_income_detail 的明细按主播聚合，写入 anchor_income_daily。
 * XXL-JOB 调度，cron: 0 30 2 * * ?
 */
@Component
@RequiredArgsConstructor
public class AnchorDailySettleJob {
    private final IncomeDetailMapper detailMapper;
    private final IncomeDailyMapper dailyMapper;

    @XxlJob("anchorDailySettleJob")
    public void execute() {
        LocalDate bizDate = LocalDate.now(ZoneId.of("Asia/Shanghai")).minusDays(1);
        dailyMapper.upsertAll(detailMapper.sumByAnchor(bizDate));
    }
}""",
    )
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/event/GiftSentEvent.java",
        "    private long cost;\n}",
        "    private long cost;\n    /** 连击序号，rank-service 连击榜用；老消费者忽略未知字段即可 */\n    private Integer comboSeq;\n}",
    )
    s.say(
        "加好了，`comboSeq` 用 `Integer` 且放在末尾，老消费者只要开了 `FAIL_ON_UNKNOWN_PROPERTIES=false` 就不受影响。"
        "我看了下 settle-service：它消费 gift.sent.v1 写 anchor_income_detail，主播日结是 XXL-JOB 的 anchorDailySettleJob，cron `0 30 2 * * ?`，"
        "把前一天明细聚合进 anchor_income_daily。建议在群里跟王浩确认下他那边的 ObjectMapper 配置再合。",
        dsec=8,
    )
    s.user(
        "行。最后一条规范记一下：星钻一律 long 整数，1 星钻 = 0.1 元，gift-service 里不许出现小数和人民币，换算只在 settle-service 做。\n"
        "好了我先去吃饭，今天中午螺蛳粉走起",
        dsec=60,
    )
    s.say(
        "记下了。PR 描述我写了三点：combo 去重 key、重复请求返回原订单号、飞书告警走 FEISHU_ALERT_WEBHOOK。吃饭愉快 🍜",
        dsec=5,
    )
    s.stop_hook()
    s.title("修复礼物连击重复扣币")
    s.dump(out)

    write_gold(
        out,
        {
            "session": name,
            "project": CWD,
            "order": 1,
            "language": "zh",
            "expected": [
                {
                    "id": "e1",
                    "layer": "fact",
                    "kind": "command",
                    "lang": "zh",
                    "text": "gift-service 本地用 `./mvnw spring-boot:run -pl gift-service -Dspring-boot.run.profiles=dev` 启动，端口 8081。",
                    "must": ["8081", "spring-boot:run"],
                },
                {
                    "id": "e2",
                    "layer": "experience",
                    "kind": "root_cause",
                    "lang": "zh",
                    "text": "礼物连击重复扣币的根因：Android 端 OkHttp 超时（3 秒）重试时重新生成 X-Request-Id，而 gift-service 的 Redis 幂等和 wallet-service 的 deduct 都按 requestId 幂等，同一下连击被扣两次。",
                    "must": ["X-Request-Id", "重新生成"],
                },
                {
                    "id": "e3",
                    "layer": "decision",
                    "kind": "decision",
                    "lang": "zh",
                    "text": "连击去重用 Redis SETNX，key 为 gift:combo:{uid}:{comboId}:{seq}，TTL 10 分钟；不在 gift_order 上加唯一索引（表已 3 亿多行，要 gh-ost 跑一晚），也不靠客户端复用 requestId（发版周期两周）。",
                    "must": ["SETNX", "10 分钟"],
                    "chosen": "SETNX",
                    "over": ["唯一索引"],
                    "why": ["3 亿"],
                },
                {
                    "id": "e4",
                    "layer": "experience",
                    "kind": "fix",
                    "lang": "zh",
                    "text": "gift-service 单测必须加 -Dspring.profiles.active=ut，否则会按 bootstrap.yml 去连 dev Nacos（10.12.1.8:8848），报 NacosException: Client not connected。",
                    "must": ["profiles.active=ut"],
                },
                {
                    "id": "e5",
                    "layer": "decision",
                    "kind": "decision",
                    "lang": "zh",
                    "text": "连击去重命中时返回 200 + 第一次的原订单号（幂等成功），而不是 409 / GIFT_DUPLICATED 报错，因为客户端看到错误会弹「赠送失败」，用户会再点一次。",
                    "must": ["原订单号"],
                    "chosen": "原订单号",
                    "over": ["409"],
                    "why": ["再点一次"],
                },
                {
                    "id": "e6",
                    "layer": "fact",
                    "kind": "convention",
                    "lang": "zh",
                    "text": "Redis key 规范：`{服务}:{用途}:{id}`，全小写、冒号分隔，必须带 TTL，不允许永久 key（rank 的永久 key 曾把 Redis 撑爆）。",
                    "must": ["必须带 TTL"],
                },
                {
                    "id": "e7",
                    "layer": "decision",
                    "kind": "decision",
                    "lang": "zh",
                    "text": "飞书「直播资金告警」群的 webhook 通过环境变量 FEISHU_ALERT_WEBHOOK 注入（k8s Secret），不放 Nacos 配置，因为 Nacos 的 dev 和 prod 是同一个 namespace、权限没隔开；也不写进 yml。",
                    "must": ["FEISHU_ALERT_WEBHOOK"],
                    "chosen": "环境变量",
                    "over": ["Nacos"],
                    "why": ["namespace"],
                },
                {
                    "id": "e8",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "礼物事件发到 Kafka topic gift.sent.v1，消息 key 是 roomId；rank-service 用消费组 rank-service-cg 消费，settle-service 也订阅。",
                    "must": ["gift.sent.v1", "rank-service-cg"],
                },
                {
                    "id": "e9",
                    "layer": "fact",
                    "kind": "preference",
                    "lang": "zh",
                    "text": "settle-service（主播结算）归王浩（胖虎）负责，他按字段反序列化 GiftSentEvent，加字段前要先跟他说。",
                    "must": ["王浩", "settle-service"],
                },
                {
                    "id": "e10",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "主播日结是 settle-service 的 XXL-JOB 任务 anchorDailySettleJob，cron `0 30 2 * * ?`，把前一天 anchor_income_detail 聚合写入 anchor_income_daily。",
                    "must": ["0 30 2 * * ?", "anchor_income_daily"],
                },
                {
                    "id": "e11",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "gift_order 超过 180 天的数据每月 1 号归档到 OSS 的 xingbo-archive 桶，热表仍有 3 亿多行。",
                    "must": ["180 天", "xingbo-archive"],
                },
                {
                    "id": "e12",
                    "layer": "fact",
                    "kind": "convention",
                    "lang": "zh",
                    "text": "星钻一律用 long 整数，1 星钻 = 0.1 元；gift-service 里不出现小数和人民币，换算只在 settle-service 做。",
                    "must": ["long", "0.1 元"],
                },
            ],
            "acceptable": [
                {
                    "must": ["FAIL_ON_UNKNOWN_PROPERTIES"],
                    "note": "GiftSentEvent 新字段放末尾、老消费者需关闭 FAIL_ON_UNKNOWN_PROPERTIES",
                },
                {"must": ["gh-ost"], "note": "大表加索引要走 gh-ost（蔓蔓 / DBA）"},
                {"must": ["10.12.1.8:8848"], "note": "dev Nacos 地址"},
            ],
            "forbidden": ["7 单投诉", "cb_88120", "rt=3.012", "Tests run: 14", "螺蛳粉"],
            "secrets": [
                "Gw7pQ2zLx9mR",
                "9sKfT2mXqLw4RzVb8NcJh6YpEuA3Dg",
                "3f1c9a7e-5b2d-4e8a-9c61-7d0b2e4f8a13",
                "https://open.feishu.cn/open-apis/bot/v2/hook/3f1c9a7e-5b2d-4e8a-9c61-7d0b2e4f8a13",
                "xb_redis_2024!Qa",
            ],
        },
    )


# ---------------------------------------------------------------- a2
def a2(out):
    name = "a2_xingbo_live_onboarding"
    s = Session(name, CWD, "main", "2026-04-20T02:05:00.000Z", "2.1.326")
    s.snapshot()
    s.attachment(
        "SessionStart",
        [
            "<maple-memory>\n"
            + recall_block(
                [
                    (3, "fact", "command", "gift-service 本地 ./mvnw spring-boot:run -pl gift-service 启动，端口 8081"),
                    (
                        8,
                        "fact",
                        "config",
                        "礼物事件 topic gift.sent.v1，key=roomId，rank-service 用 rank-service-cg 消费",
                    ),
                    (9, "fact", "preference", "settle-service 归王浩（胖虎）负责，改 GiftSentEvent 前先找他"),
                    (10, "fact", "config", "主播日结 XXL-JOB cron 0 30 2 * * ?，写 anchor_income_daily"),
                ]
            )
            + "\n</maple-memory>"
        ],
        hook_name="SessionStart:startup",
        root=True,
    )
    s.user(
        "hi，我是新来的实习生林小北，叫我小北就行，mentor 是远哥（陈思远）。今天第一天 onboarding，想先搞懂 gift 这条链路 end-to-end 是怎么走的，"
        "能帮我 walk through 一下吗？从 App 点送礼到主播拿到钱",
        dsec=30,
    )
    s.think("先从代码里找 gift 事件的生产和消费方，再串起来讲。")
    s.grep(
        r"kafka\.send\(|@KafkaListener",
        ROOT,
        "gift-service/src/main/java/com/xingbo/gift/service/GiftSendService.java:33:        kafka.send(Topics.GIFT_SENT, String.valueOf(req.getRoomId()), GiftSentEvent.from(order));\n"
        'rank-service/src/main/java/com/xingbo/rank/consumer/GiftSentConsumer.java:22:    @KafkaListener(topics = Topics.GIFT_SENT, groupId = "rank-service-cg")\n'
        'settle-service/src/main/java/com/xingbo/settle/consumer/IncomeDetailConsumer.java:19:    @KafkaListener(topics = Topics.GIFT_SENT, groupId = "settle-service-cg")',
        glob="*.java",
    )
    s.read(
        f"{ROOT}/common/src/main/java/com/xingbo/common/Topics.java",
        """package com.xingbo.common;

public final class Topics {
    /** 礼物已送出（gift-service 产生） */
    public static final String GIFT_SENT = "live_gift_sent";
    /** 旧 topic，双写到 4 月底 */
    @Deprecated
    public static final String GIFT_SENT_LEGACY = "gift.sent.v1";

    private Topics() {}
}""",
    )
    s.say(
        "整条链路大概是这样：\n\n"
        "1. **App → gift-service**：`POST /api/gift/send`，`GiftSendService.send()` 先按 (uid, comboId, comboSeq) 在 Redis 去重，"
        "再调 wallet-service 扣星钻，然后落 `gift_order`。\n"
        "2. **gift-service → Kafka**：发 `GiftSentEvent`，key 是 roomId。\n"
        "3. **rank-service**（group `rank-service-cg`）消费后更新直播间榜单、小时榜。\n"
        "4. **settle-service**（group `settle-service-cg`）消费后写 `anchor_income_detail` 明细，每天日结 job 聚合成主播收入，再打款。\n\n"
        "有一点对不上：我这边的 memory 里记的 topic 是 `gift.sent.v1`，但 `Topics.java` 里 `GIFT_SENT` 已经是 `live_gift_sent`，"
        "`gift.sent.v1` 被标成了 Deprecated 的 legacy topic。是最近改名了吗？",
        dsec=12,
    )
    s.user(
        "对，远哥说上周 rename 的，old topic gift.sent.v1 会一直双写到月底 then 下线，新的 consumer 都直接订 live_gift_sent。"
        "btw 他还让我跟你说一声，日结 job 已经挪到凌晨 4 点了，cron 是 `0 0 4 * * ?`，因为银行的对账文件 3 点半才 ready，之前 2 点半跑经常对不上账",
        dsec=75,
    )
    s.say(
        "收到，两条都更新了：\n- 礼物事件 topic 现在是 `live_gift_sent`，`gift.sent.v1` 只是双写到月底的旧 topic，新消费者别再订它。\n"
        "- 主播日结 cron 改成 `0 0 4 * * ?`（凌晨 4 点），等银行对账文件 3 点半到了再跑。",
        dsec=5,
    )
    s.user("ok 明白。那 rank 榜单是 real-time 的吗？我看 App 上小时榜好像有 delay，大概几秒", dsec=90)
    s.read(
        f"{ROOT}/rank-service/src/main/java/com/xingbo/rank/consumer/GiftSentConsumer.java",
        """@Component
@RequiredArgsConstructor
public class GiftSentConsumer {
    private final RankBuffer buffer;

    @KafkaListener(topics = Topics.GIFT_SENT, groupId = "rank-service-cg", batch = "true")
    public void onBatch(List<GiftSentEvent> events) {
        events.forEach(buffer::add);   // 内存里按 roomId 聚合
    }

    @Scheduled(fixedDelay = 5000)
    public void flush() {
        buffer.drain().forEach((key, score) -> redis.opsForZSet().incrementScore(key, score.member(), score.delta()));
    }
}""",
    )
    s.say(
        "不是严格 real-time。rank-service 是 batch 消费，先在内存里按 roomId 攒着，每 5 秒 `flush()` 一次批量 `ZINCRBY` 到 Redis 的 ZSET，"
        "所以 App 上看到的小时榜有 0–5 秒的延迟，这是有意为之（减少 Redis 写放大），不是 bug。",
        dsec=6,
    )
    s.user("got it. 结算那边的分成比例是怎么算的？我看 PRD 里写的是主播 50%、公会 20%", dsec=70)
    s.maple_search(
        "settle-service 分成比例 主播 公会",
        [
            {
                "id": "m_10",
                "layer": "fact",
                "kind": "config",
                "score": 0.61,
                "content": "主播日结 XXL-JOB cron 0 30 2 * * ?，写 anchor_income_daily",
            },
            {
                "id": "m_12",
                "layer": "fact",
                "kind": "convention",
                "score": 0.58,
                "content": "星钻一律 long 整数，1 星钻 = 0.1 元，只在 settle-service 换算人民币",
            },
        ],
    )
    s.grep(
        "share-ratio",
        f"{ROOT}/settle-service/src/main/resources",
        "settle-service/src/main/resources/application.yml:31:  anchor-share-ratio: 0.45\n"
        "settle-service/src/main/resources/application.yml:32:  guild-share-ratio: 0.20",
    )
    s.say(
        "memory 里没有分成比例的记录。配置里是 `anchor-share-ratio: 0.45`、`guild-share-ratio: 0.20`，和 PRD 的 50% 不一致，"
        "可能 PRD 是旧版本。这个以 settle-service 的 application.yml 为准，具体为什么是 45% 建议问一下结算那边的 owner，别自己改。",
        dsec=7,
    )
    s.user(
        "👌 最后一个 question，本地怎么跑 gift-service 的 unit test？我跑 `./mvnw -pl gift-service test -Dspring.profiles.active=ut` 直接编译挂了",
        dsec=80,
    )
    s.bash(
        "java -version 2>&1 | head -1 && ./mvnw -q -pl gift-service test -Dspring.profiles.active=ut 2>&1 | tail -4",
        "Check JDK and reproduce the failure",
        'openjdk version "21.0.2" 2024-01-16\n'
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project common: Fatal error compiling: "
        "java.lang.NoSuchFieldError: Class com.sun.tools.javac.tree.JCTree$JCImport does not have member field 'com.sun.tools.javac.tree.JCTree qualid' -> [Help 1]",
        err=True,
        rdsec=25,
    )
    s.say(
        "这是 JDK 版本问题：你本机是 JDK 21，而项目里的 lombok 还是 1.18.24，它在 JDK 21 上会报这个 `JCImport ... qualid` 的 NoSuchFieldError。"
        "仓库根目录有 `.sdkmanrc`（java=17.0.10-tem），项目要用 JDK 17。先 `sdk env` 切过去再跑：",
        dsec=5,
        cont=True,
    )
    s.bash(
        "sdk env && ./mvnw -q -pl gift-service test -Dspring.profiles.active=ut 2>&1 | tail -2",
        "Switch to JDK 17 via sdkman and re-run",
        "Using java version 17.0.10-tem in this shell.\n[INFO] Tests run: 52, Failures: 0, Errors: 0, Skipped: 0",
        rdsec=44,
    )
    s.say("过了。以后进这个仓库先 `sdk env`（或者装个 sdkman 的 auto_env），就会自动用 JDK 17。", dsec=3)
    s.user("works now 🙏 谢谢！今天先到这，明天 standup 我还得 present 一下 onboarding 进度 haha", dsec=50)
    s.say("加油，有问题随时问 👋", dsec=3)
    s.stop_hook()
    s.title("新人了解礼物链路")
    s.dump(out)

    write_gold(
        out,
        {
            "session": name,
            "project": CWD,
            "order": 2,
            "language": "mixed",
            "expected": [
                {
                    "id": "e1",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "礼物事件 topic 已改名为 live_gift_sent（Topics.GIFT_SENT）；旧 topic gift.sent.v1 只双写到月底后下线，新消费者直接订 live_gift_sent。",
                    "must": ["live_gift_sent"],
                    "supersedes": "a1_xingbo_live_gift_combo#e8",
                },
                {
                    "id": "e2",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "主播日结 job 挪到凌晨 4 点，cron `0 0 4 * * ?`，因为银行对账文件 3 点半才 ready（之前 2 点半跑经常对不上账）。",
                    "must": ["0 0 4 * * ?"],
                    "supersedes": "a1_xingbo_live_gift_combo#e10",
                },
                {
                    "id": "e3",
                    "layer": "experience",
                    "kind": "fix",
                    "lang": "zh",
                    "text": "项目要用 JDK 17（.sdkmanrc: java=17.0.10-tem）；在 JDK 21 上 lombok 1.18.24 编译报 NoSuchFieldError JCImport qualid，先 `sdk env` 切到 17 再跑。",
                    "must": ["JDK 17", "sdk env"],
                },
            ],
            "acceptable": [
                {
                    "must": ["anchor-share-ratio"],
                    "note": "分成比例以 settle-service application.yml 为准（0.45 / 0.20），PRD 的 50% 是旧的",
                },
                {"must": ["5 秒"], "note": "rank-service 每 5 秒 flush 到 Redis ZSET，小时榜有几秒延迟是设计如此"},
                {"must": ["settle-service-cg"], "note": "settle-service 的消费组"},
            ],
            "forbidden": [
                "端口 8081",
                "key=roomId，rank-service",
                "归王浩（胖虎）负责",
                "写 anchor_income_daily",
                "只在 settle-service 换算人民币",
                "present 一下 onboarding 进度",
                "Tests run: 52",
                "小时榜好像有 delay",
            ],
            "secrets": [],
        },
    )


# ---------------------------------------------------------------- a3
def a3(out):
    name = "a3_xingbo_live_failover_dedup"
    s = Session(name, CWD, "feat/gift-uk-index", "2026-05-12T02:20:00.000Z", "2.1.330")
    s.snapshot()
    s.user(
        "又出重复扣币了。昨晚 23:10 左右 redis 主从切换，切完之后 10 分钟里有 31 笔连击被扣了两次。日志：\n```\n"
        "2026-05-11 23:10:42.118  WARN 1 --- [ioEventLoop-4-2] i.l.core.protocol.ConnectionWatchdog     : Reconnecting, last destination was 10.12.6.21:6379\n"
        "2026-05-11 23:10:44.902  INFO 1 --- [ioEventLoop-4-1] i.l.c.m.SentinelTopologyRefresh          : Sentinel switched master xingbo-gift to 10.12.6.22:6379\n"
        "2026-05-11 23:11:03.551  WARN 1 --- [nio-8091-exec-7] c.x.gift.service.GiftSendService         : combo dedup miss uid=100238817 combo=cb_90412 seq=3 (order exists: 88412097331)\n```"
    )
    s.attachment(
        "UserPromptSubmit",
        [
            "<maple-memory>\n"
            + recall_block(
                [
                    (
                        14,
                        "decision",
                        "decision",
                        "连击去重用 Redis SETNX，TTL 10 分钟，不加唯一索引（gift_order 3 亿行）",
                    ),
                    (3, "fact", "command", "gift-service 本地 ./mvnw spring-boot:run -pl gift-service 启动，端口 8081"),
                    (11, "fact", "config", "gift_order 超过 180 天的数据每月归档到 OSS xingbo-archive"),
                ]
            )
            + "\n</maple-memory>"
        ],
    )
    s.think(
        "Sentinel 切换：Redis 主从是异步复制，旧 master 上刚写入、还没同步到从库的 gift:combo:* key 在切换后丢失，重试请求在新 master 上 SETNX 成功，于是又扣一次。只靠 Redis 去重挡不住 failover。"
    )
    s.say(
        "根因：Redis Sentinel 主从是异步复制，切换那一刻旧 master 上还没同步到从库的 `gift:combo:*` key 丢了；客户端重试打到新 master，SETNX 成功，于是又扣了一次星钻。"
        "也就是说只靠 Redis 做去重，主从切换时必然有窗口。\n\n方案：\n"
        "1. 用 gift_order 唯一索引 `uk_uid_combo_seq(uid, combo_id, combo_seq)` 兜底：先插 PENDING 订单，插入冲突就当重复返回原订单号，插成功再扣币、改 PAID；Redis SETNX 留着当第一层\n"
        "2. 保留 Redis 方案，写 dedup key 后执行 `WAIT 1 100` 等从库确认\n"
        "3. 让 wallet-service 也按 (uid, comboId, seq) 幂等\n\n"
        "不过上次记的是 gift_order 3 亿多行、加索引要 gh-ost 跑一晚，现在还是这个情况吗？",
        dsec=10,
    )
    s.user(
        "1。蔓蔓上周已经用 gh-ost 把 uk_uid_combo_seq 加到线上了，只是代码还没用上。WAIT 不靠谱，主从切换照样可能丢，"
        "而且每次送礼多一个 RTT。SETNX 留着当第一层挡一下可以，但以 DB 唯一索引为准",
        dsec=85,
    )
    s.read(
        f"{ROOT}/gift-service/src/main/resources/application.yml",
        """server:
  port: 8091
spring:
  application:
    name: gift-service
mybatis-plus:
  configuration:
    map-underscore-to-camel-case: true
gift:
  combo-dedup-ttl: 10m""",
    )
    s.say(
        "改代码之前说一下：application.yml 里 `server.port` 是 8091，但 memory 里记的 gift-service 端口是 8081，日志里线程名也是 `nio-8091`。现在以哪个为准？",
        dsec=5,
    )
    s.user("8091", dsec=20)
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/service/GiftSendService.java",
        "        long cost = giftCatalog.price(req.getGiftId()) * req.getCount();\n"
        "        walletClient.deduct(req.getUid(), cost, req.getRequestId());\n"
        "        GiftOrder order = GiftOrder.of(req, cost);\n"
        "        giftOrderMapper.insert(order);",
        "        long cost = giftCatalog.price(req.getGiftId()) * req.getCount();\n"
        "        GiftOrder order = GiftOrder.pending(req, cost);\n"
        "        try {\n"
        "            giftOrderMapper.insert(order);          // uk_uid_combo_seq 兜底\n"
        "        } catch (DuplicateKeyException e) {\n"
        "            return SendResult.ok(giftOrderMapper.findIdByCombo(req.getUid(), req.getComboId(), req.getComboSeq()));\n"
        "        }\n"
        '        walletClient.deduct(req.getUid(), cost, "combo:" + order.getId());\n'
        "        giftOrderMapper.markPaid(order.getId());",
    )
    s.bash(
        "./mvnw -q -pl gift-service test -Dspring.profiles.active=ut -Dtest=GiftSendServiceTest",
        "Run GiftSendService tests",
        "[ERROR] Tests run: 15, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 5.12 s <<< FAILURE!\n"
        "[ERROR] GiftSendServiceTest.comboRetryAfterRedisFailover:131 \n"
        "Wanted 1 time:\n-> at com.xingbo.gift.client.WalletClient.deduct(WalletClient.java:0)\nBut was 2 times:",
        err=True,
        rdsec=30,
    )
    s.think(
        "测试里模拟了 Redis 丢 key，仍然扣了两次，说明 DuplicateKeyException 没抛——单测用的是 H2 + schema-ut.sql，线上用 gh-ost 加的索引不会出现在测试 schema 里。"
    )
    s.grep(
        "CREATE TABLE gift_order",
        f"{ROOT}/gift-service/src/test/resources",
        "gift-service/src/test/resources/schema-ut.sql:12:CREATE TABLE gift_order (",
    )
    s.edit(
        f"{ROOT}/gift-service/src/test/resources/schema-ut.sql",
        "  PRIMARY KEY (id)\n);",
        "  PRIMARY KEY (id),\n  UNIQUE KEY uk_uid_combo_seq (uid, combo_id, combo_seq)\n);",
    )
    s.bash(
        "./mvnw -q -pl gift-service test -Dspring.profiles.active=ut -Dtest=GiftSendServiceTest",
        "Re-run tests",
        "[INFO] Tests run: 15, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 4.96 s",
        rdsec=28,
    )
    s.say(
        "过了。刚才失败是因为单测跑在 H2 上，表结构来自 `src/test/resources/schema-ut.sql`，线上用 gh-ost 加的 `uk_uid_combo_seq` 不会自动同步到这里，"
        "所以 DuplicateKeyException 根本不会抛。以后线上 DDL 变更要手动补进 schema-ut.sql。",
        dsec=6,
    )
    s.user(
        "<system-reminder>\n<maple-memory>\n"
        + recall_block(
            [
                (9, "fact", "preference", "settle-service 归王浩（胖虎）负责，改 GiftSentEvent 前先找他"),
                (16, "fact", "config", "主播日结 cron 0 0 4 * * ?，等银行对账文件"),
            ]
        )
        + "\n</maple-memory>\n</system-reminder>\n"
        "现在订单有 PENDING 了，GiftSentEvent 要不要加个 orderStatus 字段？结算那边要怎么处理",
        dsec=60,
    )
    s.say(
        "两种做法：\n"
        "a) GiftSentEvent 加 `orderStatus`，PENDING / PAID 都发，settle-service 自己过滤、处理状态流转\n"
        "b) 只在订单变成 PAID 之后才发事件：`markPaid` 同事务写 `gift_outbox` 表，由 outbox relay 投递到 Kafka，事件结构不变\n\n"
        "b 对下游零改动，但多一张 outbox 表和一个 relay。",
        dsec=8,
    )
    s.user(
        "b。结算那块以后找小鹿（鹿佳怡），胖虎转岗去电商了，小鹿说她那边不想处理状态机，事件里只要是扣过钱的就行",
        dsec=70,
    )
    s.edit(
        f"{ROOT}/gift-service/src/main/java/com/xingbo/gift/mapper/GiftOrderMapper.java",
        '    int markPaid(@Param("id") long id);',
        '    int markPaid(@Param("id") long id);\n\n    /** 与 markPaid 同事务写入，由 OutboxRelay 投递到 live_gift_sent */\n    int insertOutbox(GiftOutbox outbox);',
    )
    s.say(
        "好，按 b 做了：只有 PAID 的订单才会进 `gift_outbox`，由 OutboxRelay 发到 `live_gift_sent`，事件结构不变，settle-service 不用改。",
        dsec=5,
    )
    s.user(
        "小鹿让我顺便把 settle-service 本地跑起来验证一下，这是她发我的 .env：\n```\nSPRING_PROFILES_ACTIVE=dev\nSERVER_PORT=8083\n"
        "KAFKA_BOOTSTRAP=10.12.5.11:9092\nKAFKA_SASL_USERNAME=settle\nKAFKA_SASL_PASSWORD=kS9vT2mLq8Xw\nWECHATPAY_MCH_ID=1650123456\n"
        "WECHATPAY_APIV3_KEY=Zx8Kq2Lm9Np4Rs7Tv1Wy3Ab6Cd0Ef5Gh\nARCHIVE_BUCKET=xingbo-archive\nARCHIVE_AFTER_DAYS=90\n```",
        dsec=110,
    )
    s.say(
        "先提醒一句：这份 .env 里有 Kafka SASL 密码和微信支付 APIv3 key，别提交，`.gitignore` 里已经有 `.env`。\n\n"
        "另外 `ARCHIVE_AFTER_DAYS=90`，而我记的是 gift_order 超过 180 天才归档。归档阈值现在还是 180 天吗，还是 dev 单独配成了 90？",
        dsec=6,
    )
    s.user("不是，90 天了，蔓蔓嫌 RDS 磁盘贵，上个月改的，prod 也是 90", dsec=40)
    s.bash(
        "set -a && . ./.env && set +a && ./mvnw -q -pl settle-service spring-boot:run 2>&1 | grep -m1 'Started'",
        "Start settle-service locally with the provided env",
        "2026-05-12 10:58:41.207  INFO 48213 --- [           main] c.x.settle.SettleApplication             : Started SettleApplication in 9.84 seconds (process running for 10.3)",
        rdsec=15,
    )
    s.say("settle-service 本地起来了（8083）。我这边改动都在 feat/gift-uk-index 分支上，可以提 PR 了。", dsec=4)
    s.user("好，今天先这样，晚上部门聚餐吃烤肉，辛苦了", dsec=45)
    s.say("辛苦，吃好 🍖", dsec=3)
    s.stop_hook()
    s.title("Redis 主从切换后重复扣币：改用唯一索引")
    s.dump(out)

    write_gold(
        out,
        {
            "session": name,
            "project": CWD,
            "order": 3,
            "language": "zh",
            "expected": [
                {
                    "id": "e1",
                    "layer": "experience",
                    "kind": "root_cause",
                    "lang": "zh",
                    "text": "5/11 Redis Sentinel 主从切换后又出现重复扣币：主从是异步复制，旧 master 上未同步的 gift:combo:* key 丢失，重试在新 master 上 SETNX 成功又扣一次；只靠 Redis 去重挡不住 failover。",
                    "must": ["异步复制"],
                },
                {
                    "id": "e2",
                    "layer": "decision",
                    "kind": "decision",
                    "lang": "zh",
                    "text": "连击去重改为以 gift_order 唯一索引 uk_uid_combo_seq(uid, combo_id, combo_seq) 为准：先插 PENDING 订单、冲突即返回原订单号，成功后再扣币改 PAID；Redis SETNX 只作第一层。不用 Redis WAIT，因为主从切换照样可能丢 key，还多一个 RTT。",
                    "must": ["uk_uid_combo_seq"],
                    "chosen": "uk_uid_combo_seq",
                    "over": ["WAIT"],
                    "why": ["主从切换"],
                    "supersedes": "a1_xingbo_live_gift_combo#e3",
                },
                {
                    "id": "e3",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "gift-service 端口现在是 8091（application.yml server.port）。",
                    "must": ["8091"],
                    "supersedes": "a1_xingbo_live_gift_combo#e1",
                },
                {
                    "id": "e4",
                    "layer": "experience",
                    "kind": "gotcha",
                    "lang": "zh",
                    "text": "gift-service 单测跑在 H2 上，表结构来自 src/test/resources/schema-ut.sql；线上 gh-ost 加的索引不会自动同步，线上 DDL 变更要手动补进 schema-ut.sql，否则唯一索引相关测试会失败。",
                    "must": ["schema-ut.sql"],
                },
                {
                    "id": "e5",
                    "layer": "decision",
                    "kind": "decision",
                    "lang": "zh",
                    "text": "订单变 PAID 后才发礼物事件：markPaid 同事务写 gift_outbox，由 OutboxRelay 投递到 live_gift_sent，事件结构不变；不在 GiftSentEvent 里加 orderStatus 字段，因为结算那边不想处理状态机。",
                    "must": ["gift_outbox"],
                    "chosen": "gift_outbox",
                    "over": ["orderStatus"],
                    "why": ["状态机"],
                },
                {
                    "id": "e6",
                    "layer": "fact",
                    "kind": "preference",
                    "lang": "zh",
                    "text": "settle-service（结算）现在归鹿佳怡（小鹿）负责，胖虎已转岗去电商；结算相关改动找小鹿。",
                    "must": ["鹿佳怡"],
                    "supersedes": "a1_xingbo_live_gift_combo#e9",
                },
                {
                    "id": "e7",
                    "layer": "fact",
                    "kind": "config",
                    "lang": "zh",
                    "text": "gift_order 归档阈值改为 90 天（ARCHIVE_AFTER_DAYS=90，dev 和 prod 一致），因为 RDS 磁盘贵。",
                    "must": ["90 天"],
                    "supersedes": "a1_xingbo_live_gift_combo#e11",
                },
            ],
            "acceptable": [
                {"must": ["8083"], "note": "settle-service 本地端口 8083"},
                {"must": ["OutboxRelay"], "note": "outbox relay 组件名"},
                {"must": ["SERVER_PORT=8083"], "note": "settle-service .env 里的非敏感配置"},
            ],
            "forbidden": [
                "31 笔",
                "cb_90412",
                "不加唯一索引（gift_order 3 亿行）",
                "gift-service 本地 ./mvnw spring-boot:run -pl gift-service 启动",
                "每月归档到 OSS xingbo-archive",
                "归王浩（胖虎）负责",
                "主播日结 cron 0 0 4",
                "聚餐吃烤肉",
                "Tests run: 15",
            ],
            "secrets": ["kS9vT2mLq8Xw", "Zx8Kq2Lm9Np4Rs7Tv1Wy3Ab6Cd0Ef5Gh"],
        },
    )


def build(out):
    a1(out)
    a2(out)
    a3(out)
