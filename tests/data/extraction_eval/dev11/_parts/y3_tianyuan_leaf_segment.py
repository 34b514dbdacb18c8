"""tianyuan-trace s3（中文）：workerId 方案推翻改用 Leaf 号段，外加一批变更（负责人、topic、测试库、cron、缓存上限）。"""

META = {
    "name": "y3_tianyuan_leaf_segment",
    "cwd": "/home/dev/work/tianyuan-trace",
    "order": 3,
    "language": "zh",
    "start": "2026-05-20T03:00:00.000Z",
    "branch": "refactor/leaf-segment",
    "version": "2.1.322",
}

DING_TOKEN = "7c1e4b9a0d2f58e3b6a4c0d9e8f71a25b3c6d0e4f9a8b7c2d1e0f3a4b5c6d7e8"
DING_URL = "https://oapi.dingtalk.com/robot/send?access_token=" + DING_TOKEN

LEAF_CLIENT = """package com.tianyuan.code.id;

import lombok.RequiredArgsConstructor;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/** 通过 leaf-server 的 HTTP 接口取号（号段模式）。 */
@Component
@RequiredArgsConstructor
public class LeafIdClient {

    private final RestClient leafRestClient; // base-url: ${trace.leaf.base-url}

    @Value("${trace.leaf.biz-tag:trace-code}")
    private String bizTag;

    public long nextId() {
        String body = leafRestClient.get().uri("/api/segment/get/{tag}", bizTag).retrieve().body(String.class);
        try {
            return Long.parseLong(body.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("leaf-server 取号失败: " + body, e);
        }
    }
}"""


def build(s, recall_block):
    s.snapshot()
    s.user(
        "今天好热，办公室空调又坏了…… 说正事：上次定的 workerId 用 StatefulSet 序号那个方案要推翻了。上周扩到 4 个副本，"
        "StatefulSet 一个一个滚，发布从 3 分钟拖到 15 分钟；而且以后副本多了序号超过 31 还得另想办法。胖虎说 leaf-server "
        "他来维护，没问题，那就上 Leaf 号段模式。code-service 怎么接你先看看。", gap=0)
    s.attach("UserPromptSubmit", "<maple-memory>\nRelevant project memories:\n" + recall_block([
        (54, "decision", "decision", "code-service 的雪花 workerId 改用 StatefulSet pod 序号；没选 Leaf，因为要多维护一个 leaf-server。"),
        (58, "fact", "config", "码生成后发 Kafka topic trace.code.generated，scan-service 消费它做缓存预热。"),
        (60, "fact", "config", "测试库 10.12.4.30:3306，库名 trace_test。"),
    ]) + "\n</maple-memory>")
    s.grep("SnowflakeIdWorker|idWorker", "code-service/src/main/java",
           "code-service/src/main/java/com/tianyuan/code/config/SnowflakeConfig.java:18:    public SnowflakeIdWorker snowflakeIdWorker() throws UnknownHostException {\n"
           "code-service/src/main/java/com/tianyuan/code/service/TraceCodeGenerator.java:14:    private final SnowflakeIdWorker idWorker;\n"
           "code-service/src/main/java/com/tianyuan/code/service/TraceCodeGenerator.java:22:        long id = idWorker.nextId();")
    s.say(
        "用到雪花 ID 的只有 `TraceCodeGenerator` 一处，替换面很小。接 Leaf 有两种方式：\n\n"
        "A. 调 leaf-server 的 HTTP 接口 `GET /api/segment/get/{bizTag}`，code-service 里只加一个 client。号段缓存在 "
        "leaf-server 内存里，每次多一跳内网调用，延迟很低。\n"
        "B. 把 leaf-core 直接嵌进 code-service，每个实例自己连 Leaf 的库（`leaf_alloc` 表）取号段，少一跳，但 code-service "
        "要有 Leaf 库的读写权限，leaf-server 也就只剩别的业务在用。\n\n"
        "选哪个？")
    s.user("A，就这么办。Leaf 那个库的权限不想再多开给业务服务。", gap=45)
    s.write("code-service/src/main/java/com/tianyuan/code/id/LeafIdClient.java", LEAF_CLIENT)
    s.edit("code-service/src/main/java/com/tianyuan/code/service/TraceCodeGenerator.java",
           "    private final SnowflakeIdWorker idWorker;",
           "    private final LeafIdClient idClient;")
    s.bash("curl -s http://leaf-server.trace-test.svc:8080/api/segment/get/trace-code",
           "在测试环境试取一个号",
           "{\"timestamp\":\"2026-05-20T03:01:09.644+00:00\",\"status\":500,\"error\":\"Internal Server Error\","
           "\"message\":\"Key:trace-code 's id is -2 (EXCEPTION_ID_KEY_NOT_EXISTS)\",\"path\":\"/api/segment/get/trace-code\"}",
           run=1)
    s.say(
        "leaf-server 通了，但返回 -2（`EXCEPTION_ID_KEY_NOT_EXISTS`）：号段模式下每个 biz_tag 要先在 Leaf 库的 `leaf_alloc` "
        "表里有一行，不会自动创建。需要 insert 一行 `trace-code`，step 我建议 2000（按现在每秒几十个码的量，一个号段够用"
        "一阵）。Leaf 的库在哪台？")
    s.user(
        "在测试库上，库名 leaf。对了测试库迁了，现在统一走 mysql-test.tianyuan.internal，老的 IP 下周下线。账号 leaf_rw，"
        "密码在你环境变量 LEAF_DB_PWD 里。", gap=80)
    s.bash(
        "mysql -h mysql-test.tianyuan.internal -u leaf_rw -p\"$LEAF_DB_PWD\" leaf -e \"INSERT INTO leaf_alloc(biz_tag, max_id, "
        "step, description) VALUES ('trace-code', 1000000, 2000, '溯源码')\" && "
        "curl -s http://leaf-server.trace-test.svc:8080/api/segment/get/trace-code",
        "插入 biz_tag 后再取号",
        "mysql: [Warning] Using a password on the command line interface can be insecure.\n1000001", run=3)
    s.bash("mvn -pl code-service -am test", "跑 code-service 单测",
           "[INFO] Tests run: 44, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS", run=63)
    s.say(
        "取号正常，code-service 44 个测试全过。`SnowflakeConfig` "
        "和 StatefulSet 改动先留着，等 Leaf 上线稳定后再删、改回 Deployment。\n\n"
        "有个坑提前说一下：号段模式下 leaf-server 重启，内存里没发完的号段就作废了，ID 会跳一段（最多一个 step，2000）。"
        "ID 只保证递增且唯一，不保证连续，对账、统计发码数量不能拿 ID 相减来算。")
    s.user([
        "<system-reminder>\n<maple-memory>\n" + recall_block([
            (57, "fact", "preference", "code-service 由老贺（贺文斌）负责，改 workerId 需要他 review。"),
            (59, "fact", "config", "expiredCodeCleanJob 每天凌晨 2:30 跑（0 30 2 * * ?）。"),
            (66, "fact", "config", "scan-service Caffeine：maximumSize 10000，expireAfterWrite 60s。"),
        ]) + "\n</maple-memory>\n</system-reminder>",
        "好。几个变更同步一下：\n"
        "1. 贺文斌转岗去数据中台了，code-service 以后找小宋（宋雨桐），这个 MR 也让她 review。\n"
        "2. topic 已经改名了，现在叫 `tianyuan.code.issued`，scan-service 上周已经切过去了。\n"
        "3. 过期码清理挪到凌晨 4 点了，2 点半跟 DBA 的全量备份撞车，XXL-JOB 上 cron 已经是 `0 0 4 * * ?`。",
    ], gap=150)
    s.grep("trace\\.code\\.generated|code-issued", "code-service/src",
           "code-service/src/main/resources/application.yml:31:      code-issued: ${TRACE_TOPIC_CODE_ISSUED:tianyuan.code.issued}\n"
           "code-service/src/test/resources/application-test.yml:12:      code-issued: trace.code.generated")
    s.edit("code-service/src/test/resources/application-test.yml",
           "      code-issued: trace.code.generated",
           "      code-issued: tianyuan.code.issued")
    s.say(
        "主配置里默认值已经是 `tianyuan.code.issued`（Nacos 上也是），只有测试配置还写着旧 topic，已改。MR 的 reviewer 我"
        "换成小宋。")
    s.user(
        "对了，`tianyuan.code.issued` 的消费者都必须按 code 做幂等，Kafka 会重投。还有 scan-service 本地缓存 maximumSize 调到 50000，"
        "上周压测 1 万太小，命中率掉得厉害。", gap=100)
    s.edit("scan-service/src/main/java/com/tianyuan/scan/cache/TwoLevelCacheConfig.java",
           "Caffeine.newBuilder().maximumSize(10_000)",
           "Caffeine.newBuilder().maximumSize(50_000)")
    s.grep("tianyuan.code.issued|ON DUPLICATE KEY", "scan-service/src/main",
           "scan-service/src/main/java/com/tianyuan/scan/mq/CodeIssuedListener.java:21:    @KafkaListener(topics = \"${trace.kafka.topic.code-issued}\", groupId = \"scan-service\")\n"
           "scan-service/src/main/resources/mapper/ScanCodeMapper.xml:17:        ON DUPLICATE KEY UPDATE batch_id = VALUES(batch_id), updated_at = NOW()")
    s.bash("mvn -pl scan-service -am test", "跑 scan-service 单测",
           "[INFO] Tests run: 18, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS", run=50)
    s.say(
        "Caffeine maximumSize 改成 50000 了，scan-service 测试通过。幂等这块我看了 scan-service 的 `CodeIssuedListener`，现在是 "
        "`INSERT ... ON DUPLICATE KEY UPDATE` 按 code 写，已经是幂等的。")
    s.user(
        f"XXL-JOB 的报警也接到钉钉群「溯源-告警」吧，机器人 webhook：{DING_URL}\n"
        "配置里用环境变量 DINGTALK_ALARM_TOKEN 读，别写死。然后提 MR。", gap=120)
    s.edit("code-service/src/main/resources/application.yml",
           "trace:\n  leaf:",
           "alarm:\n  dingtalk:\n    token: ${DINGTALK_ALARM_TOKEN:}\n\ntrace:\n  leaf:")
    s.bash(
        "git add -A && git commit -qm 'refactor(code): 溯源码改用 Leaf 号段取号' && git push -u origin refactor/leaf-segment && "
        "glab mr create --fill --reviewer songyutong --target-branch main",
        "提交并创建 MR",
        "[refactor/leaf-segment c5d80e1] refactor(code): 溯源码改用 Leaf 号段取号\n"
        " 7 files changed, 96 insertions(+), 11 deletions(-)\n\n"
        "!252 refactor(code): 溯源码改用 Leaf 号段取号 (refactor/leaf-segment)\n"
        " https://git.tianyuan.internal/tianyuan/trace-platform/-/merge_requests/252", run=8)
    s.say(
        "MR：https://git.tianyuan.internal/tianyuan/trace-platform/-/merge_requests/252，reviewer 小宋。钉钉 token 只从 "
        "`DINGTALK_ALARM_TOKEN` 读，webhook 没进仓库；需要胖虎把它加到 trace-prod 的 Secret 里。")
    s.title("code-service 改用 Leaf 号段取号")

    return {
        "expected": [
            {"id": "e1", "layer": "decision", "kind": "decision", "lang": "zh",
             "text": "推翻之前的 StatefulSet 方案，code-service 改用 Leaf 号段模式发号（leaf-server 由胖虎维护）：扩到 4 个副本后 "
                     "StatefulSet 逐个滚动，发布从 3 分钟拖到 15 分钟，副本多了序号超过 31 也不好办。",
             "must": ["号段"],
             "chosen": "Leaf", "over": ["StatefulSet"], "why": ["15 分钟"],
             "supersedes": "y1_tianyuan_dup_trace_code#e4"},
            {"id": "e2", "layer": "decision", "kind": "decision", "lang": "zh",
             "text": "code-service 通过 leaf-server 的 HTTP 接口 /api/segment/get/{bizTag} 取号（方案 A），不把 leaf-core 嵌进服务："
                     "不想把 Leaf 库的权限开给业务服务。",
             "must": ["leaf-server"],
             "chosen": "HTTP", "over": ["leaf-core"], "why": ["权限"]},
            {"id": "e3", "layer": "experience", "kind": "fix", "lang": "zh",
             "text": "leaf-server 取号返回 -2（EXCEPTION_ID_KEY_NOT_EXISTS）：号段模式的 biz_tag 要先在 leaf_alloc 表里 insert 一行"
                     "（trace-code，step 2000），不会自动创建。",
             "must": ["leaf_alloc"]},
            {"id": "e4", "layer": "experience", "kind": "gotcha", "lang": "zh",
             "text": "Leaf 号段模式下 leaf-server 重启会作废没发完的号段，ID 会跳（最多一个 step）；ID 只保证递增唯一、不保证连续，"
                     "对账和统计发码量不能用 ID 相减。",
             "must": ["号段", "连续"]},
            {"id": "e5", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "测试库迁到了 mysql-test.tianyuan.internal（老 IP 下线）；Leaf 的库也在上面，库名 leaf，账号 leaf_rw。",
             "must": ["mysql-test.tianyuan.internal"],
             "supersedes": "y1_tianyuan_dup_trace_code#e10"},
            {"id": "e6", "layer": "fact", "kind": "preference", "lang": "zh",
             "text": "code-service 现在由小宋（宋雨桐）负责、做 review；贺文斌已转岗去数据中台。",
             "must": ["宋雨桐"],
             "supersedes": "y1_tianyuan_dup_trace_code#e8"},
            {"id": "e7", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "发码的 Kafka topic 改名为 tianyuan.code.issued（scan-service 已切换）。",
             "must": ["tianyuan.code.issued"],
             "supersedes": "y1_tianyuan_dup_trace_code#e7"},
            {"id": "e8", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "过期码清理任务改到每天凌晨 4 点（XXL-JOB cron `0 0 4 * * ?`），避开 DBA 的全量备份。",
             "must": ["0 0 4"],
             "supersedes": "y1_tianyuan_dup_trace_code#e9"},
            {"id": "e9", "layer": "fact", "kind": "constraint", "lang": "zh",
             "text": "tianyuan.code.issued 的消费者都必须按 code 做幂等，因为 Kafka 会重投。",
             "must": ["幂等", "tianyuan.code.issued"]},
            {"id": "e10", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "scan-service 的 Caffeine 本地缓存 maximumSize 调到 50000（压测时 1 万太小）。",
             "must": ["50000"],
             "supersedes": "y2_tianyuan_scan_cache#e6"},
            {"id": "e11", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "XXL-JOB 报警发到钉钉群「溯源-告警」，机器人 token 从环境变量 DINGTALK_ALARM_TOKEN 读取，不写进代码。",
             "must": ["DINGTALK_ALARM_TOKEN"]},
        ],
        "acceptable": [
            {"must": ["leaf-server.trace-test.svc"], "note": "测试环境 leaf-server 地址"},
            {"must": ["CodeIssuedListener"], "note": "scan-service 的消费者已按 code upsert"},
            {"must": ["TRACE_TOPIC_CODE_ISSUED"], "note": "topic 名可用环境变量覆盖"},
        ],
        "forbidden": [
            "空调又坏了",
            "没选 Leaf，因为要多维护一个 leaf-server",
            "scan-service 消费它做缓存预热",
            "库名 trace_test",
            "需要他 review",
            "每天凌晨 2:30 跑",
            "maximumSize 10000，expireAfterWrite 60s",
            "Tests run: 44",
            "c5d80e1",
            "merge_requests/252",
        ],
        "secrets": [DING_URL, DING_TOKEN],
    }
