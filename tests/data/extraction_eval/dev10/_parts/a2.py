"""a2 — lenglian-tms, session 2: 温度明细归档到 TDengine；topic 改名；Leaf 主键."""
from lib import Session, item, gold, recall_block

NAME = "a2_lenglian_tdengine_archive"
CWD = "/home/dev/work/lenglian-tms"


def build():
    s = Session(NAME, CWD, "2026-04-15T02:05:00.000Z", "feat/temp-archive")
    s.snapshot()
    s.hook(recall_block([
        '- #3 fact · 8 天前: "温度原始数据的 Kafka topic 是 temp_raw，alarm-center 消费它判断超温"',
        '- #7 fact · 8 天前: "数据库时间字段一律存 UTC，字段名统一 xxx_at"',
        '- #9 fact · 8 天前: "alarm-center 由大刘（刘建国）负责"',
    ], zh=True), event="SessionStart", gap=0)
    s.user("今天搞温度明细归档。先说个变化：Kafka 那边上周统一了命名规范，temp_raw 已经改名叫 tms.temp.reading 了，"
           "以后新建 topic 都按 tms.<域>.<事件> 这个格式起名。", gap=5)
    s.bash("grep -rn 'temp_raw' --include=*.yml --include=*.java temp-ingest alarm-center",
           "temp-ingest/src/main/resources/application.yml:22:    topic: temp_raw\n"
           "alarm-center/src/main/resources/application.yml:19:      topics: temp_raw\n"
           "alarm-center/src/test/java/com/lenglian/alarm/AlarmFlowIT.java:31:    @EmbeddedKafka(topics = \"temp_raw\")",
           "找旧 topic 名")
    s.tool("Bash", {"command": "sed -i 's/temp_raw/tms.temp.reading/' temp-ingest/src/main/resources/application.yml "
                    "alarm-center/src/main/resources/application.yml alarm-center/src/test/java/com/lenglian/alarm/AlarmFlowIT.java",
                    "description": "三处替换成新 topic"}, "")
    s.say("生产端 temp-ingest、消费端 alarm-center 和集成测试都改成 tms.temp.reading 了。归档这块，temp_reading 表现在多大？")
    s.user("temp_reading 每天大概 4000 万行，MySQL 已经 3.2T 了，查一个运单的全程温度曲线要十几秒。")
    s.say("几个方案：\nA. MySQL 按天 RANGE 分区，过期分区直接 DROP PARTITION——改动最小，但单库容量问题没解决，曲线查询还是扫大表；\n"
          "B. 迁到 TDengine：按设备建超级表、每台记录仪一张子表，时序压缩比高，按运单时间范围查曲线很快；\n"
          "C. ClickHouse：分析能力强，但我们的查询主要是按设备 + 时间范围点查，而且要单独运维一套集群。\n我倾向 B。")
    s.user("B 吧。")
    s.say("好，我先建库和超级表。TDengine 的连接信息方便给一下吗？")
    s.user("补充下为啥不选 C：运维组已经有一套现成的 TDengine 集群在跑（车辆 GPS 轨迹在用），ClickHouse 团队里没人运维过。"
           "A 其实也考虑过，但 3T 的单库迟早要拆。连接用 jdbc:TAOS-RS://td-prod-01:6041/?user=tms_writer&password=Td9f3kLm2xQe ，"
           "库名就叫 tms-temp 吧。另外明细要保留 5 年，GSP 要求冷链温度记录至少保存 5 年，KEEP 别设短了。")
    s.write(CWD + "/archive-job/src/main/resources/schema/tdengine.sql",
            "CREATE DATABASE IF NOT EXISTS tms-temp KEEP 1825 DURATION 10 PRECISION 'ms';\n"
            "CREATE STABLE IF NOT EXISTS tms-temp.temp_reading (sampled_at TIMESTAMP, temp FLOAT, humidity FLOAT)\n"
            "  TAGS (device_id NCHAR(32), waybill_no NCHAR(32));\n")
    s.bash("./mvnw -q -pl archive-job -am spring-boot:run -Dspring-boot.run.arguments=--init-schema",
           "2026-04-15 10:31:07.552 ERROR 48213 --- [           main] o.s.boot.SpringApplication               : Application run failed\n\n"
           "java.lang.IllegalStateException: Failed to execute ApplicationRunner\n"
           "\tat org.springframework.boot.SpringApplication.callRunner(SpringApplication.java:774)\n"
           "\tat org.springframework.boot.SpringApplication.callRunners(SpringApplication.java:755)\n"
           "\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:319)\n"
           "\tat com.lenglian.archive.ArchiveJobApplication.main(ArchiveJobApplication.java:12)\n"
           "Caused by: java.sql.SQLException: TDengine ERROR (0x2600): sql: CREATE DATABASE IF NOT EXISTS tms-temp KEEP 1825 DURATION 10 PRECISION 'ms', desc: syntax error near \"-temp keep 1825 duration 10 precision 'ms'\"\n"
           "\tat com.taosdata.jdbc.TSDBError.createSQLException(TSDBError.java:78)\n"
           "\tat com.taosdata.jdbc.rs.RestfulStatement.execute(RestfulStatement.java:116)\n"
           "\tat com.lenglian.archive.schema.SchemaInitializer.run(SchemaInitializer.java:42)\n"
           "\tat org.springframework.boot.SpringApplication.callRunner(SpringApplication.java:771)\n\t... 3 common frames omitted",
           "初始化 TDengine 库表", is_error=True, run=26)
    s.say("TDengine 的库名、表名不能带中划线（标识符只允许字母、数字和下划线），tms-temp 会被当成表达式 tms 减 temp 解析，所以报 syntax error。库名改成 tms_temp。")
    s.edit(CWD + "/archive-job/src/main/resources/schema/tdengine.sql", "tms-temp", "tms_temp")
    s.bash("./mvnw -q -pl archive-job -am spring-boot:run -Dspring-boot.run.arguments=--init-schema",
           "2026-04-15 10:33:40.118  INFO 48877 --- [main] c.l.archive.schema.SchemaInitializer : database tms_temp ready (KEEP 1825)\n"
           "2026-04-15 10:33:40.201  INFO 48877 --- [main] c.l.archive.schema.SchemaInitializer : stable tms_temp.temp_reading ready\n"
           "2026-04-15 10:33:40.236  INFO 48877 --- [main] c.l.archive.ArchiveJobApplication    : Started ArchiveJobApplication in 4.8 seconds",
           "重跑初始化", run=24)
    s.say("建好了：库 tms_temp，KEEP 1825 天（5 年），超级表 temp_reading，每台记录仪一张子表 d_<deviceId>。"
          "迁移任务按天从 MySQL 读出来批量写 TDengine。要不要我顺便把 MySQL 里超过 30 天的数据迁完就删？")
    s.user("删的事先别动，等迁移跑完核对一遍数据再说。归档必须 6 月 30 日前上线，药监 7 月有飞检。")
    s.say("明白，只迁不删。迁移进度我记在新表 archive_task 里，一天一行。")
    s.user("对了，以后新建的表主键一律用 Leaf 的雪花 ID，不要再用自增主键了，后面要分库，自增 ID 到时候合并会冲突。")
    s.edit(CWD + "/archive-job/src/main/resources/db/V12__archive_task.sql",
           "  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,",
           "  id BIGINT UNSIGNED NOT NULL COMMENT 'Leaf snowflake id',")
    s.say("archive_task 的主键改成由 leaf-svc 发号（/api/snowflake/get/tms_archive），建表语句里去掉了 AUTO_INCREMENT。")
    s.user("可以，今天先到这，我去开会了。")
    s.say("好。今天的改动：topic 改名、tms_temp 库和超级表、archive_task 表，都在 feat/temp-archive 分支上，还没提交。")
    s.title("温度明细归档到 TDengine")

    g = gold(NAME, CWD, 2, "zh", [
        item("e1", "fact", "config", "zh", "温度原始数据的 Kafka topic 已改名为 tms.temp.reading。", ["tms.temp.reading"],
             supersedes="a1_lenglian_alarm_dedup#e2"),
        item("e2", "fact", "convention", "zh", "Kafka topic 命名规范：tms.<域>.<事件>。", ["tms.<域>.<事件>"]),
        item("e3", "decision", "decision", "zh",
             "温度明细归档到 TDengine（超级表 temp_reading，每台记录仪一张子表），不选 ClickHouse（团队没人运维过）"
             "也不选 MySQL 按天分区（3T 单库迟早要拆）；运维组已有现成的 TDengine 集群（车辆 GPS 在用）。",
             ["TDengine"], chosen="TDengine", over=["ClickHouse", "分区"], why=["现成的 TDengine 集群", "没人运维过"]),
        item("e4", "experience", "fix", "zh",
             "TDengine 库名/表名不能带中划线（只允许字母、数字、下划线），tms-temp 会报 syntax error，库名用 tms_temp。",
             ["中划线", "tms_temp"]),
        item("e5", "fact", "constraint", "zh", "冷链温度明细至少保存 5 年（GSP 要求），TDengine 库设 KEEP 1825。",
             ["5 年", "KEEP 1825"]),
        item("e6", "fact", "constraint", "zh", "温度明细归档必须 6 月 30 日前上线（药监 7 月飞检）。", ["6 月 30 日"]),
        item("e7", "decision", "decision", "zh", "新建表主键一律用 Leaf 雪花 ID，不用自增主键：后续要分库，自增 ID 合并会冲突。",
             ["Leaf"], chosen="Leaf", over=["自增"], why=["分库"]),
    ], [
        {"note": "TDengine 集群 td-prod-01:6041（REST），不含密码", "must": ["td-prod-01"]},
        {"note": "主键由 leaf-svc 发号", "must": ["leaf-svc"]},
        {"note": "子表命名 d_<deviceId>", "must": ["d_<deviceId>"]},
    ], [
        "topic 是 temp_raw",
        "字段名统一 xxx_at",
        "由大刘（刘建国）负责",
        "3.2T",
        "4000 万行",
        "Application run failed",
        "Started ArchiveJobApplication",
        "删的事先别动",
        "我去开会了",
    ], ["Td9f3kLm2xQe"])
    return s, g
