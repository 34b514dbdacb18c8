"""Project E (mixed): cdc-sync，数据同步 CDC pipeline（MySQL → Debezium / Kafka Connect → Kafka → Flink → Doris）。"""

from lib import Session, reminder

CWD = "/home/dev/work/cdc-sync"


def s1():
    s = Session(
        "e1_cdc_binlog_purged", CWD, "2026-11-10T01:20:00Z", branch="fix/orders-connector", lang="mixed", order=1
    )
    s.snapshot()
    s.user(
        "orders 库的 source connector 挂了，status 是 FAILED，下游 Doris 的 ods_orders 两天没更新了。"
        "Kafka Connect 的 REST 地址是 http://connect.cdc.svc:8083 ，帮我看下 error trace"
    )
    s.bash(
        "curl -s http://connect.cdc.svc:8083/connectors/prod-orders-source/status | jq -r '.tasks[0].trace' | head -3",
        "io.debezium.DebeziumException: The connector is trying to read binlog starting at "
        "SourceInfo [currentGtid=null, currentBinlogFilename=mysql-bin.004211, currentBinlogPosition=88213], "
        "but this is no longer available on the server. Reconfigure the connector to use a snapshot when needed.\n"
        "\tat io.debezium.connector.mysql.MySqlConnectorTask.start(MySqlConnectorTask.java:149)",
        desc="查 connector 状态",
    )
    s.bash(
        'mysql -h 10.50.1.8 -u dbz_reader -p"$DBZ_PASS" -e "SHOW VARIABLES LIKE \'binlog_expire_logs_seconds\'; SHOW BINARY LOGS" | head -4',
        "Variable_name\tValue\nbinlog_expire_logs_seconds\t86400\nLog_name\tFile_size\nmysql-bin.004398\t1073742011",
    )
    s.say(
        "root cause 很清楚：MySQL 的 `binlog_expire_logs_seconds` 只有 86400（1 天），connector 上周五 OOM 停了两天没人发现，"
        "它 offset 里记的 mysql-bin.004211 早就被 purge 了，重启后从这个位置读不到，只能报错。\n\n"
        "恢复：把 `snapshot.mode` 临时改成 `when_needed`，offset 失效时会重新做一次全量 snapshot 再接 binlog。"
        "长期看 binlog 保留要拉长到至少 3 天，让 DBA 改。"
    )
    s.user("ok 先 when_needed 恢复。dbz_reader 的密码是 Dbz#sync2026!，在 vault 的 cdc/mysql-orders 里也有")
    s.bash(
        "curl -s -X PUT http://connect.cdc.svc:8083/connectors/prod-orders-source/config -H 'Content-Type: application/json' "
        "-d @connectors/prod-orders-source.json | jq -r .name && curl -s -X POST http://connect.cdc.svc:8083/connectors/prod-orders-source/restart?includeTasks=true -o /dev/null -w '%{http_code}\\n'",
        "prod-orders-source\n202",
        desc="更新 config 并重启",
    )
    s.bash(
        "curl -s http://connect.cdc.svc:8083/connectors/prod-orders-source/status | jq -c '.tasks[0].state'",
        '"RUNNING"',
    )
    s.say("RUNNING 了，snapshot 在跑。另外 connector 挂了两天没人知道，说明缺一个 task state 的告警。")
    s.user(
        "对，这个 lesson 要记住：connector FAILED 是不会自己恢复的，必须有告警。我回头让 DBA 把 binlog 保留改成 3 天。"
        "另外想顺便定一下序列化格式，现在 connector 用的 JsonConverter 带 schema，每条消息巨大"
    )
    s.say(
        "两个选择：\n1. Avro + Schema Registry：消息里只带 schema id，体积一般能小 70% 以上；schema 变更有 compatibility 检查；\n"
        "2. JsonConverter 关掉 `schemas.enable`：体积也小，但下游就拿不到类型信息了，DECIMAL / DATETIME 全靠猜。"
    )
    s.user(
        "下游 Flink 要靠 schema 做类型映射的，关 schema 不行。Avro 吧，Schema Registry 用平台那套 http://schema-registry.cdc.svc:8081 ，"
        "compatibility 设 BACKWARD"
    )
    s.say(
        "好，connector 的 key/value converter 都换成 `io.confluent.connect.avro.AvroConverter`，subject compatibility 设成 BACKWARD。"
    )
    s.edit(
        "/home/dev/work/cdc-sync/connectors/prod-orders-source.json",
        '"value.converter": "org.apache.kafka.connect.json.JsonConverter"',
        '"value.converter": "io.confluent.connect.avro.AvroConverter",\n  "value.converter.schema.registry.url": "http://schema-registry.cdc.svc:8081"',
    )
    s.user("topic 怎么划分你怎么看？现在 Debezium 默认是一个表一个 topic")
    s.say(
        "保持一表一 topic、message key 用主键比较好：同一主键的变更落在同一个 partition，顺序有保证；下游也可以按表订阅。"
        "一个库一个 topic 的话，大表会把小表挤住，而且下游要自己按表拆。"
    )
    s.user(
        "sounds good，就一表一 topic，key 用主键。命名统一 `cdc.<db>.<table>`，connector 命名统一 `<env>-<db>-source`"
    )
    s.bash(
        "make lint-connectors",
        "checking connectors/*.json ...\nprod-orders-source.json: ok\nprod-users-source.json: ok\n2 files, 0 problems",
    )
    s.user(
        "顺便说下，Connect 镜像是 harbor.corp.example.com/cdc/connect:2.5.4，就是 Debezium 2.5，插件版本都按这个来，别自己升"
    )
    s.say("好，connector 插件按 Debezium 2.5（connect:2.5.4 镜像）来。")
    s.user(
        "还有 connector 配置改完之后一律用 `make apply-connector NAME=xxx` 推，不要手工 curl PUT，我刚才那样是救火。"
        "CDC 的 oncall 是李伟。commit message 用英文 conventional commits"
    )
    s.say("明白。")
    s.user("好，今天先这样，累死了")
    s.bash(
        "git add -A && git commit -m 'fix(connector): recover orders source with when_needed snapshot; switch to avro'",
        "[fix/orders-connector 6c2e81d] fix(connector): recover orders source with when_needed snapshot; switch to avro\n 3 files changed, 21 insertions(+), 6 deletions(-)",
    )
    s.stop(ms=2480900)
    s.title("orders connector binlog purged, switch to Avro")

    s.exp(
        "root_cause",
        "zh",
        "prod-orders-source 重启失败（binlog is no longer available on the server）：MySQL binlog_expire_logs_seconds 只有 "
        "86400（1 天），connector 停了两天，offset 里的 binlog 已被 purge；用 snapshot.mode=when_needed 重新全量 snapshot 恢复。",
        ["binlog_expire_logs_seconds", "when_needed"],
    )
    s.exp(
        "lesson",
        "zh",
        "connector FAILED 不会自己恢复，必须对 connector task state 配告警；binlog 保留要拉长到至少 3 天。",
        ["FAILED", "告警"],
    )
    s.fact(
        "config",
        "zh",
        "Kafka Connect REST 地址 http://connect.cdc.svc:8083；Schema Registry 地址 http://schema-registry.cdc.svc:8081。",
        ["connect.cdc.svc:8083", "schema-registry.cdc.svc:8081"],
    )
    s.decision(
        "zh",
        "CDC 消息序列化用 Avro + Schema Registry（compatibility BACKWARD），不用 JsonConverter（无论带不带 schema）：带 schema 的 JSON "
        "每条消息巨大，关掉 schemas.enable 下游 Flink 又拿不到类型做映射。",
        ["Avro"],
        "Avro",
        ["JsonConverter"],
        ["类型"],
    )
    s.decision(
        "zh",
        "topic 保持一表一 topic、message key 用主键：同主键变更落同一 partition 保证顺序，下游可按表订阅；"
        "不用一个库一个 topic，那样大表会挤住小表。",
        ["一表一 topic"],
        "一表一 topic",
        ["一个库一个 topic"],
        ["顺序"],
    )
    s.fact(
        "convention",
        "zh",
        "topic 命名统一 `cdc.<db>.<table>`，connector 命名统一 `<env>-<db>-source`。",
        ["cdc.<db>.<table>", "<env>-<db>-source"],
    )
    s.fact(
        "command",
        "zh",
        "connector 配置改完一律用 `make apply-connector NAME=xxx` 推，不要手工 curl PUT。",
        ["make apply-connector"],
    )
    s.fact("config", "zh", "CDC 的 oncall 是李伟。", ["李伟"])
    s.fact("convention", "en", "Commit messages are in English, conventional commits.", ["conventional commits"])
    s.fact(
        "config",
        "zh",
        "Kafka Connect 镜像 harbor.corp.example.com/cdc/connect:2.5.4（Debezium 2.5），connector 插件版本按它来，不要自己升。",
        ["connect:2.5.4"],
    )
    s.ok(["vault"], "dbz_reader 凭证在 vault cdc/mysql-orders")
    s.ok(["make lint-connectors"], "connector 配置 lint")
    s.forbid("累死了", "6c2e81d", "2 files, 0 problems", "mysql-bin.004398")
    s.secret("Dbz#sync2026!")
    return s


def s2():
    s = Session("e2_cdc_doris_versions", CWD, "2026-11-17T08:00:00Z", branch="feat/flink-doris", lang="mixed", order=2)
    s.snapshot()
    s.recall(
        [
            (301, "fact", "7 days ago", "Kafka Connect REST 地址 http://connect.cdc.svc:8083。"),
            (305, "decision", "7 days ago", "topic 保持一表一 topic、message key 用主键。"),
            (307, "fact", "7 days ago", "connector 配置改完一律用 `make apply-connector` 推。"),
        ]
    )
    s.user(
        "Flink 写 Doris 的 job 一直在 restart，Stream Load 报错。Flink UI 在 http://flink.cdc.svc:8081 ，job 叫 ods-orders-sink"
    )
    s.bash(
        "kubectl -n cdc logs deploy/ods-orders-sink-taskmanager --since=30m | grep -m2 -i 'stream load'",
        "2026-11-17 15:41:02,118 ERROR org.apache.doris.flink.sink.writer.DorisStreamLoad - stream load error: "
        "[DATA_QUALITY_ERROR]too many filtered rows\n"
        "2026-11-17 15:44:37,902 ERROR org.apache.doris.flink.sink.writer.DorisStreamLoad - stream load error: "
        "[E-235]tablet 10423 has too many versions, max_version=2000, please reduce load frequency",
        desc="看 sink 日志",
    )
    s.read(
        "/home/dev/work/cdc-sync/flink/ods-orders-sink/conf.yaml",
        "execution.checkpointing.interval: 10s\nsink.enable-2pc: true\nsink.label-prefix: ods_orders",
    )
    s.say(
        "主要是 E-235。doris sink 开了 2PC，每次 checkpoint 提交一次 Stream Load，一次提交就是 tablet 上的一个 version；"
        "checkpoint 10s 一次、再加上 bucket 多，compaction 跟不上，version 数超过 2000 就拒绝写入。"
        "`too many filtered rows` 是另一回事，先看 E-235。\n\n方案：checkpoint 间隔拉到 60s，或者保持 10s 但调大 Doris 的 `max_tablet_version_num`。"
        "后者只是把问题往后推，compaction 压力还在。"
    )
    s.user("延迟我们 SLA 是 5 分钟，60s 完全 ok。用 60s，不去动 Doris 参数，Doris 是 DBA 组管的")
    s.edit(
        "/home/dev/work/cdc-sync/flink/ods-orders-sink/conf.yaml",
        "execution.checkpointing.interval: 10s",
        "execution.checkpointing.interval: 60s",
    )
    s.bash(
        "curl -s 'http://doris-fe.cdc.svc:8030/api/_load_error_log?file=__shard_3/error_log_insert_stmt_7a1c' | head -2",
        "Reason: column(pay_time) value is incorrect. src line [...]; 0000-00-00 00:00:00\n"
        "Reason: column(pay_time) value is incorrect. src line [...]; 0000-00-00 00:00:00",
    )
    s.say(
        "filtered rows 的原因是 MySQL 里 pay_time 存了 `0000-00-00 00:00:00` 这种零值日期，Doris DATETIME 不接受。"
        'Debezium 这边可以在 connector 上配 `"datetime.zero.handling"`……不对，Debezium MySQL connector 的做法是把零日期转成 null，'
        "需要 Doris 列允许 NULL。我看了下 ods_orders.pay_time 是 NOT NULL，改成 NULL 就行。"
    )
    s.user(
        "ok 改 NULL。另外一个问题：上周 job 从 savepoint 恢复的时候，ods_orders 出现了同一个 order_id 的旧数据覆盖新数据，"
        "你看下现在的表模型"
    )
    s.bash(
        "mysql -h doris-fe.cdc.svc -P9030 -uroot -e 'SHOW CREATE TABLE ods.ods_orders\\G' | grep -E 'KEY|sequence'",
        "UNIQUE KEY(`order_id`)",
    )
    s.say(
        "是 Unique Key 模型，但没有配 sequence 列。没有 sequence 列时 Unique Key 按导入顺序取最后一条，从 savepoint 回放时，旧的变更会晚于新的变更再写一次，"
        "于是旧值覆盖新值。建议加 `function_column.sequence_col` = binlog 里的 `source.ts_ms`（或者 binlog position），"
        "Doris 按 sequence 取最大的那条，回放乱序也不怕。另一种是改 Duplicate Key 保留全部版本、下游查询时去重，查询成本高很多。"
    )
    s.user("行，用 sequence 列，列名就叫 _binlog_ts。Duplicate 的话报表那边要全部改 SQL，不现实")
    s.edit(
        "/home/dev/work/cdc-sync/doris/ddl/ods_orders.sql",
        "UNIQUE KEY(`order_id`)",
        'UNIQUE KEY(`order_id`)\n-- ...\nPROPERTIES ("function_column.sequence_col" = "_binlog_ts")',
    )
    s.user(
        "补充几个事：Kafka Connect 集群迁了，新地址是 http://connect-v2.cdc.svc:8083 ，老的下周下线。"
        "oncall 也换了，这个季度是陈静，李伟去做湖仓了。topic 那块加一条规矩：以后新建 topic 都统一 12 个 partition、replication factor 3，"
        "这跟命名规则是两码事"
    )
    s.say(
        "收到：Connect 地址、oncall 已更新；新 topic 一律 12 partitions、RF=3，我加到 `make create-topic` 的默认参数里了。"
    )
    s.edit("/home/dev/work/cdc-sync/Makefile", "PARTITIONS ?= 6\nRF ?= 2", "PARTITIONS ?= 12\nRF ?= 3")
    s.user("👌 thx，今天到这")
    s.stop(ms=2760110)
    s.title("Doris too many versions and Unique Key sequence column")

    s.exp(
        "root_cause",
        "zh",
        "Flink → Doris sink 报 E-235 too many versions：sink 开了 2PC，每次 checkpoint 提交一次 Stream Load 产生一个 tablet version，"
        "checkpoint 10s 太频繁，compaction 跟不上，超过 max_version=2000 就拒绝写入。",
        ["E-235", "checkpoint"],
    )
    s.decision(
        "zh",
        "Flink sink 的 checkpoint 间隔从 10s 拉到 60s，不调大 Doris 的 max_tablet_version_num：延迟 SLA 是 5 分钟，60s 够用；"
        "调 Doris 参数只是把问题往后推，而且 Doris 归 DBA 组管。",
        ["60s"],
        "60s",
        ["max_tablet_version_num"],
        ["DBA"],
    )
    s.exp(
        "root_cause",
        "zh",
        "Stream Load too many filtered rows：MySQL pay_time 里有 0000-00-00 00:00:00 零值日期，Debezium 转成 null，"
        "而 Doris ods_orders.pay_time 是 NOT NULL；列改为允许 NULL。",
        ["0000-00-00", "NULL"],
    )
    s.decision(
        "zh",
        "Doris ods 表用 Unique Key + sequence 列（function_column.sequence_col = _binlog_ts，取 binlog 时间），不改 Duplicate Key 下游去重："
        "savepoint 回放时旧变更会覆盖新值，sequence 列按最大值取；Duplicate Key 要让报表全部改 SQL。",
        ["_binlog_ts", "sequence_col"],
        "sequence",
        ["Duplicate Key"],
        ["回放"],
    )
    s.fact(
        "config",
        "zh",
        "Kafka Connect 集群迁移，新 REST 地址 http://connect-v2.cdc.svc:8083，老集群下周下线。",
        ["connect-v2.cdc.svc:8083"],
        sup="e1_cdc_binlog_purged#e3",
    )
    s.fact("config", "zh", "CDC oncall 本季度换成陈静（李伟去做湖仓）。", ["陈静"], sup="e1_cdc_binlog_purged#e8")
    s.fact(
        "convention",
        "zh",
        "新建 topic 统一 12 个 partition、replication factor 3（make create-topic 默认值），和 topic 命名规则是两条规矩。",
        ["12 个 partition", "replication factor 3"],
    )
    s.fact(
        "config",
        "zh",
        "Flink UI 在 http://flink.cdc.svc:8081，orders 的 sink job 叫 ods-orders-sink。",
        ["ods-orders-sink"],
    )
    s.ok(["sink.enable-2pc"], "doris sink 开了 2PC")
    s.ok(["doris-fe.cdc.svc"], "Doris FE 地址")
    s.forbid(
        "thx，今天到这",
        "message key 用主键。",
        "REST 地址 http://connect.cdc.svc:8083。",
        "一律用 `make apply-connector` 推。",
        "error_log_insert_stmt_7a1c",
    )
    return s


def s3():
    s = Session("e3_cdc_schema_change_tour", CWD, "2026-11-21T02:30:00Z", branch="main", lang="mixed", order=3)
    s.snapshot()
    s.user("我在准备给 BI 组讲 CDC 链路，帮我捋一下 upstream 加字段的时候整条链路是怎么走的。just explain，别改东西")
    s.maple_search(
        "schema change add column pipeline doris",
        [
            (311, "decision", "Doris ods 表用 Unique Key + sequence 列 _binlog_ts。"),
            (314, "fact", "Kafka Connect 新 REST 地址 http://connect-v2.cdc.svc:8083。"),
        ],
    )
    s.grep(
        "schema.history",
        'connectors/prod-orders-source.json:14:  "schema.history.internal.kafka.topic": "schemahistory.prod-orders",',
        path="connectors",
    )
    s.say(
        "上游 `ALTER TABLE ADD COLUMN` 会先进 binlog，Debezium 解析 DDL 后写进 schema history topic `schemahistory.prod-orders`，"
        "之后的行变更用新 schema 编码成 Avro，Schema Registry 里注册一个新版本（BACKWARD 兼容，加可空字段能过）。"
    )
    s.user("那 Flink 那边呢，会自动识别新字段吗")
    s.read(
        "/home/dev/work/cdc-sync/flink/ods-orders-sink/Job.java",
        "    DorisSink.<RowData>builder()\n        .setDorisExecutionOptions(execOpts)\n        .setSerializer(new RowDataSerializer(fieldNames, fieldTypes))",
    )
    s.say(
        "不会。`RowDataSerializer` 的字段列表是 job 启动时固定的，新字段会被忽略，要改字段映射、Doris 表加列后重启 job。"
    )
    s.user("明白。那 schema history topic 丢了会怎么样")
    s.say("connector 重启时要靠它重建每张表在各个 binlog 位置的 schema，丢了会启动失败，只能重新 snapshot。")
    s.user("哦这样，讲的时候我画个图好了 hhh")
    s.interrupt()
    s.user("对了 Schema Registry 里 orders 的 value schema 现在几个版本了？看一眼就行")
    s.bash("curl -s http://schema-registry.cdc.svc:8081/subjects/cdc.orders.orders-value/versions", "[1,2,3]")
    s.say("3 个版本。")
    s.user("ok thanks")
    s.stop(ms=480220)
    s.title("Walkthrough: schema change across the CDC pipeline")
    s.ok(["schemahistory.prod-orders"], "schema history topic 名，对现有配置的说明")
    s.ok(["RowDataSerializer"], "Flink 字段列表启动时固定，新字段需改映射并重启")
    s.forbid(
        "hhh",
        "别改东西",
        "Unique Key + sequence 列 _binlog_ts。",
        "新 REST 地址 http://connect-v2.cdc.svc:8083。",
        "[1,2,3]",
    )
    return s


def s4():
    s = Session(
        "e4_cdc_schema_history_retention",
        CWD,
        "2026-12-02T03:15:00Z",
        branch="fix/schema-history",
        lang="mixed",
        order=4,
    )
    s.snapshot()
    s.user(
        [
            reminder(
                [
                    (311, "decision", "2 weeks ago", "Doris ods 表用 Unique Key + sequence 列 _binlog_ts。"),
                    (309, "decision", "2 weeks ago", "Flink sink 的 checkpoint 间隔从 10s 拉到 60s。"),
                    (302, "decision", "3 weeks ago", "CDC 消息序列化用 Avro + Schema Registry。"),
                ]
            )
            + "\nusers 库的 connector 起不来了，报 schema history 相关的错。DBA 说周末只是 restart 了一下 Kafka Connect"
        ]
    )
    s.bash(
        "curl -s http://connect-v2.cdc.svc:8083/connectors/prod-users-source/status | jq -r '.tasks[0].trace' | head -2",
        "io.debezium.DebeziumException: The db history topic is missing. You may attempt to recover it by reconfiguring "
        "the connector to recovery mode (snapshot.mode=recovery)\n\tat io.debezium.relational.HistorizedRelationalDatabaseSchema.recover(...)",
    )
    s.bash(
        "kafka-configs.sh --bootstrap-server kafka.cdc.svc:9092 --describe --topic schemahistory.prod-users | grep -o 'retention.ms=[0-9-]*'",
        "retention.ms=604800000",
    )
    s.say(
        "schema history topic 是用集群默认配置自动建的，`retention.ms=604800000`（7 天）。users 表很久没 DDL，history 里的记录超过 7 天被删光了，"
        "connector 平时不读它所以看不出来，一 restart 需要从 history 重建 schema 就失败了。\n\n"
        "修复：用 `snapshot.mode=recovery` 重建 history；同时把所有 `schemahistory.*` topic 改成 `retention.ms=-1`，并且以后建 connector 时显式设置。"
    )
    s.bash(
        "for t in $(kafka-topics.sh --bootstrap-server kafka.cdc.svc:9092 --list | grep ^schemahistory); do kafka-configs.sh --bootstrap-server kafka.cdc.svc:9092 --alter --topic $t --add-config retention.ms=-1; done",
        "Completed updating config for topic schemahistory.prod-orders.\nCompleted updating config for topic schemahistory.prod-users.",
    )
    s.user("这个坑要记下来：schema history topic 必须 retention.ms=-1，永不过期。以后 make apply-connector 里加个检查")
    s.edit(
        "/home/dev/work/cdc-sync/scripts/apply_connector.py",
        "def apply(name):",
        "def apply(name):\n    assert_history_retention_infinite(name)",
    )
    s.user("借这个机会把 DDL 同步策略也定一下。现在上游 DDL 下游全靠人肉，你觉得要不要全自动 schema evolution？")
    s.say(
        "可以分级：\n- ADD COLUMN（可空）：自动同步到 Doris（flink-doris-connector 的 schema change 支持 `ALTER ADD`）；\n"
        "- DROP / MODIFY COLUMN / RENAME：不自动，发告警转人工工单。\n全自动最大的风险是上游误删列，下游跟着删就把历史数据丢了。"
    )
    s.user("ok 就这么定了，只自动同步 ADD COLUMN，其他 DDL 一律走工单")
    s.edit(
        "/home/dev/work/cdc-sync/flink/ods-orders-sink/conf.yaml",
        "sink.enable-2pc: true",
        "sink.enable-2pc: true\nsink.enable-schema-change: add_column_only",
    )
    s.user(
        "还有两个变化：checkpoint 我们又改成 120s 了，60s 在双十二 Doris compaction 还是跟不上，SLA 那边同意放宽到 10 分钟。"
        "另外 Debezium 从 2.5 升到 2.7 了，镜像是 harbor.corp.example.com/cdc/connect:2.7.3，以后 connector 插件都按这个版本验"
    )
    s.edit(
        "/home/dev/work/cdc-sync/flink/ods-orders-sink/conf.yaml",
        "execution.checkpointing.interval: 60s",
        "execution.checkpointing.interval: 120s",
    )
    s.user(
        "Harbor 的 robot 账号 token 我贴一下，CI 要用：robot$cdc-ci / hbr_tk_5rX8qLm2Wz9vTn4K ，你配到 CI 的 secret 里"
    )
    s.say("已配到 CI secret `HARBOR_ROBOT_TOKEN`，仓库里不落明文。")
    s.bash(
        "make apply-connector NAME=prod-users-source",
        "checking schemahistory.prod-users retention.ms=-1 ... ok\nPUT prod-users-source ... 200\nrestart ... 202",
    )
    s.user("好了，收工 🍻")
    s.stop(ms=2310560)
    s.title("Schema history topic retention and DDL sync policy")

    s.exp(
        "root_cause",
        "zh",
        "prod-users-source 报 db history topic is missing：schema history topic 按集群默认 retention.ms=604800000（7 天）自动创建，"
        "表长期无 DDL，history 被删光，restart 时无法重建 schema；用 snapshot.mode=recovery 恢复。",
        ["604800000", "recovery"],
    )
    s.fact(
        "constraint",
        "zh",
        "schema history topic（schemahistory.*）必须设置 retention.ms=-1 永不过期，make apply-connector 会检查。",
        ["retention.ms=-1"],
    )
    s.decision(
        "zh",
        "DDL 同步分级：只自动同步 ADD COLUMN 到 Doris，DROP / MODIFY / RENAME 等其他 DDL 一律走人工工单，不做全自动 schema evolution："
        "上游误删列时下游跟着删会丢历史数据。",
        ["ADD COLUMN"],
        "ADD COLUMN",
        ["全自动"],
        ["误删列"],
    )
    s.decision(
        "zh",
        "Flink sink checkpoint 间隔再改为 120s（60s 在双十二 Doris compaction 仍跟不上），延迟 SLA 放宽到 10 分钟。",
        ["120s"],
        "120s",
        ["60s"],
        ["compaction"],
        sup="e2_cdc_doris_versions#e2",
    )
    s.fact(
        "config",
        "zh",
        "Debezium 从 2.5 升到 2.7，Connect 镜像 harbor.corp.example.com/cdc/connect:2.7.3，connector 插件按这个版本验证。",
        ["2.7.3"],
        sup="e1_cdc_binlog_purged#e10",
    )
    s.fact(
        "config", "zh", "Harbor robot token 配在 CI secret HARBOR_ROBOT_TOKEN，仓库里不落明文。", ["HARBOR_ROBOT_TOKEN"]
    )
    s.ok(["sink.enable-schema-change"], "schema change 配置项")
    s.ok(["kafka.cdc.svc:9092"], "Kafka bootstrap 地址")
    s.forbid(
        "收工",
        "Unique Key + sequence 列 _binlog_ts。",
        "间隔从 10s 拉到 60s。",
        "Avro + Schema Registry。",
        "Completed updating config for topic",
    )
    s.secret("hbr_tk_5rX8qLm2Wz9vTn4K")
    return s


SESSIONS = [s1, s2, s3, s4]
