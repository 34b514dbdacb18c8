"""a1 — lenglian-tms 冷链温控平台, session 1: 重复超温告警（补传读数绕过去重）."""
from lib import Session, item, gold

NAME = "a1_lenglian_alarm_dedup"
CWD = "/home/dev/work/lenglian-tms"


def build():
    s = Session(NAME, CWD, "2026-04-07T01:20:00.000Z", "fix/alarm-dup")
    s.snapshot()
    s.user("alarm-center 这两天一直在刷重复的超温告警，同一台记录仪一分钟能给司机发七八条短信，客户已经投诉了，帮我查一下。"
           "背景：温度记录仪走 MQTT 上报到 EMQX，temp-ingest 订阅后写 Kafka 的 temp_raw，alarm-center 消费 temp_raw 判断超温。"
           "temp-ingest 跑在 8085 端口。", gap=0)
    s.say("先说下我的初步怀疑：同一批消息被重复消费，最常见的是 alarm-center 的 Kafka 消费者 rebalance 导致 offset 没提交就重新拉取。"
          "我先看一下消费者配置和最近的日志。")
    s.bash("grep -n 'group-id\\|enable-auto-commit\\|max-poll' alarm-center/src/main/resources/application.yml",
           "14:      group-id: alarm-center\n15:      enable-auto-commit: false\n17:      max-poll-records: 200",
           "看 Kafka 消费者配置")
    s.bash("kubectl -n tms logs deploy/alarm-center --since=2h | grep -E 'Revoking|rebalance|ALARM_SENT' | tail -n 8",
           "2026-04-07 08:52:10.981 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=9.6 sampled_at=2026-04-07T00:31:00Z received_at=2026-04-07T00:52:10.412Z\n"
           "2026-04-07 08:52:10.987 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=9.8 sampled_at=2026-04-07T00:32:00Z received_at=2026-04-07T00:52:10.419Z\n"
           "2026-04-07 08:52:10.993 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=10.1 sampled_at=2026-04-07T00:33:00Z received_at=2026-04-07T00:52:10.425Z\n"
           "2026-04-07 08:52:11.002 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=10.2 sampled_at=2026-04-07T00:34:00Z received_at=2026-04-07T00:52:10.431Z\n"
           "2026-04-07 08:52:11.010 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=10.0 sampled_at=2026-04-07T00:35:00Z received_at=2026-04-07T00:52:10.437Z\n"
           "2026-04-07 08:52:11.017 INFO  [alarm-center,7f3a1c] c.l.a.service.AlarmService : ALARM_SENT device=LL-20931 waybill=WB240407118 temp=9.7 sampled_at=2026-04-07T00:36:00Z received_at=2026-04-07T00:52:10.442Z",
           "看最近两小时的 rebalance 和告警日志")
    s.say("过去 2 小时没有任何 Revoking/rebalance 记录，rebalance 这个方向可以排除。注意 LL-20931 这几条：sampled_at 是 00:31–00:36 连续的，"
          "received_at 却全挤在 00:52:10 那一秒——这是记录仪断网重连后把本地缓存的读数一次性补传上来了。我看下去重逻辑。")
    s.read(CWD + "/alarm-center/src/main/java/com/lenglian/alarm/service/AlarmDeduper.java",
           "package com.lenglian.alarm.service;\n\n@Component\n@RequiredArgsConstructor\npublic class AlarmDeduper {\n"
           "    private final StringRedisTemplate redis;\n\n    public boolean firstTime(TempReading r) {\n"
           "        String key = \"alarm:dedup:\" + r.getDeviceId() + \":\" + r.getReceivedAt().toEpochMilli();\n"
           "        return Boolean.TRUE.equals(redis.opsForValue().setIfAbsent(key, \"1\", Duration.ofMinutes(10)));\n    }\n}")
    s.say("找到了。根因：AlarmDeduper 的去重 key 里用的是 received_at（服务端收到的毫秒时间）。记录仪断网重连后补传缓存读数时，"
          "每条补传读数的 received_at 都不一样，key 全不同，去重形同虚设，超温区间里的每条读数各发一次短信。"
          "去重应该按超温事件来：用设备采集时间 sampled_at 算出的事件起点做 key。")
    s.say("修法有两种：\n1. Redis SET NX EX，key = deviceId + 超温事件起始的 sampled_at；\n"
          "2. 在 alarm_record 表上加 (device_id, sampled_at) 唯一索引，插入冲突就不发。\n"
          "我倾向 1：alarm_record 是按月分表的（alarm_record_202604 这种），唯一索引跨不了分表；而且每条读数都要插一次库，写放大太厉害。")
    s.user("行，按 1 来。TTL 就先 10 分钟。")
    s.edit(CWD + "/alarm-center/src/main/java/com/lenglian/alarm/service/AlarmDeduper.java",
           "String key = \"alarm:dedup:\" + r.getDeviceId() + \":\" + r.getReceivedAt().toEpochMilli();",
           "String key = \"alarm:dedup:\" + r.getDeviceId() + \":\" + episodeStart(r.getSampledAt()).getEpochSecond();")
    s.bash("./mvnw -q -pl alarm-center test -Dtest=AlarmDeduperTest",
           "[ERROR] Failed to execute goal on project alarm-center: Could not resolve dependencies for project "
           "com.lenglian:alarm-center:jar:1.4.0-SNAPSHOT: Could not find artifact com.lenglian:tms-common:jar:1.4.0-SNAPSHOT -> [Help 1]",
           "跑去重单测", is_error=True, run=21)
    s.say("单模块跑测试要带 -am（also-make），把它依赖的 tms-common 一起编译；本地仓库里没有 tms-common 的 SNAPSHOT 包，所以光 -pl 会找不到。")
    s.bash("./mvnw -q -pl alarm-center -am test -Dtest=AlarmDeduperTest -Dsurefire.failIfNoSpecifiedTests=false",
           "[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 1.92 s - in com.lenglian.alarm.service.AlarmDeduperTest\n[INFO] BUILD SUCCESS",
           "带 -am 重跑", run=48)
    s.user("好。顺便记一下几个规矩：冷藏品的阈值是 2-8℃，超出范围要持续 5 分钟才算超温，这是 GSP 的要求，别改成一超就报；"
           "数据库里时间字段一律存 UTC，字段名统一 xxx_at，前端展示的时候再转 Asia/Shanghai。")
    s.say("记下了。AlarmDeduper 里的事件起点也是按 UTC 的 sampled_at 算的，和这个约定一致。")
    s.user("短信通道就用阿里云短信，别接企业微信了，司机手机上基本都没装企业微信。alarm-center 是大刘（刘建国）负责的，上线前让他 review 一下。")
    s.say("好，PR 里我 @ 大刘。另外我想在预发库上核对一下这台设备的告警条数，application-staging.yml 里的数据库连接是占位符，能给我一个吗？")
    s.user("jdbc:mysql://10.20.3.14:3306/tms_alarm?useSSL=false&user=tms_rw&password=Lk8vQ2zR7pwX 用这个，别提交到仓库里。")
    s.bash("MYSQL_PWD='Lk8vQ2zR7pwX' mysql -h 10.20.3.14 -u tms_rw tms_alarm -e \"SELECT device_id, COUNT(*) AS n FROM alarm_record_202604 "
           "WHERE created_at >= '2026-04-07 00:00:00' GROUP BY device_id ORDER BY n DESC LIMIT 3\"",
           "device_id\tn\nLL-20931\t46\nLL-18807\t3\nLL-20114\t2", "预发库核对告警条数")
    s.say("LL-20931 今天 0 点以来 46 条告警，就是补传的那台。用修复后的 AlarmDeduper 重放这台的补传数据，只发出 1 条。连接串没有写进任何文件。")
    s.user("ok 谢谢，中午吃啥，楼下那家黄焖鸡又涨价了😂")
    s.say("哈哈，那只能换一家了。PR 已经开好：fix/alarm-dup → main，等大刘 review。")
    s.title("修复补传读数导致的重复超温告警")

    g = gold(NAME, CWD, 1, "zh", [
        item("e1", "fact", "config", "zh", "temp-ingest 服务跑在 8085 端口，订阅 EMQX 上的记录仪 MQTT 上报后写入 Kafka。",
             ["temp-ingest", "8085"]),
        item("e2", "fact", "config", "zh", "温度原始数据的 Kafka topic 是 temp_raw，alarm-center 消费它判断超温。",
             ["temp_raw", "alarm-center"]),
        item("e3", "experience", "root_cause", "zh",
             "重复超温告警的根因：记录仪断网重连后会补传本地缓存的读数，alarm-center 的去重 key 用的是 received_at（服务端收到时间），"
             "每条补传读数 key 都不同，于是每条都发短信；应按设备采集时间 sampled_at 算出的超温事件起点去重。",
             ["补传", "sampled_at"]),
        item("e4", "decision", "decision", "zh",
             "告警去重用 Redis SET NX EX（key = deviceId + 超温事件起始 sampled_at），不用 alarm_record 表上的唯一索引："
             "alarm_record 按月分表，唯一索引跨不了分表，而且每条读数写库写放大。",
             ["SET NX"], chosen="Redis", over=["唯一索引"], why=["按月分表"]),
        item("e5", "fact", "config", "zh", "告警去重 key 的 TTL 是 10 分钟。", ["10 分钟", "TTL"]),
        item("e6", "experience", "fix", "zh",
             "Maven 单模块跑测试要加 -am（./mvnw -pl alarm-center -am test），否则依赖的 tms-common SNAPSHOT 解析不到。",
             ["-am", "tms-common"]),
        item("e7", "fact", "constraint", "zh", "冷藏品温度阈值 2-8℃，超出范围持续 5 分钟才算超温（GSP 要求），不能一超就报。",
             ["2-8℃", "持续 5 分钟"]),
        item("e8", "fact", "convention", "zh", "数据库时间字段一律存 UTC，字段名统一 xxx_at，前端展示时再转 Asia/Shanghai。",
             ["UTC", "Asia/Shanghai"]),
        item("e9", "decision", "decision", "zh", "告警短信走阿里云短信，不接企业微信：司机手机上基本没装企业微信。",
             ["阿里云短信", "企业微信"], chosen="阿里云短信", over=["企业微信"], why=["没装企业微信"]),
        item("e10", "fact", "preference", "zh", "alarm-center 由大刘（刘建国）负责。", ["大刘", "刘建国"]),
    ], [
        {"note": "预发 MySQL 10.20.3.14:3306 库 tms_alarm（不含密码）", "must": ["10.20.3.14"]},
        {"note": "告警表按月分表 alarm_record_YYYYMM", "must": ["alarm_record_202604"]},
    ], [
        "消费者 rebalance 导致",
        "ALARM_SENT device=LL-20931",
        "Tests run: 4",
        "上线前让他 review",
        "黄焖鸡",
        "46 条告警",
    ], ["Lk8vQ2zR7pwX"])
    return s, g
