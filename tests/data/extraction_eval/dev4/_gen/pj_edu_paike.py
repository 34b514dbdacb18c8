"""Project J (zh): edu-paike，在线教育排课系统（Java 21 / Spring Boot 3，MySQL 8，Redis，RocketMQ，XXL-JOB → PowerJob）。"""

from lib import Session, reminder

CWD = "/home/dev/work/edu-paike"


def s1():
    s = Session(
        "j1_paike_double_booking", CWD, "2027-01-11T02:05:00Z", branch="fix/double-booking", version="2.1.318",
        lang="zh", order=1,
    )
    s.snapshot()
    s.user(
        "早上教务转过来一个投诉：老师 10382 周三晚上 19:00 那节 1v1 被两个学员同时约上了，两个家长都带孩子进了直播间才发现。"
        "约课入口是 paike-api 的 BookingService.book，你帮我查一下。测试库连接在 application-local.yml 里：\n\n"
        "spring:\n  datasource:\n    url: jdbc:mysql://10.60.1.15:3306/paike?useSSL=false&user=paike_rw&password=Pk_2027!mysql\n"
    )
    s.bash(
        "kubectl -n paike get pods -l app=paike-api",
        "NAME                         READY   STATUS    RESTARTS   AGE\n"
        "paike-api-6c8d9f7b4-xk2lp    1/1     Running   0          6d\n"
        "paike-api-6c8d9f7b4-r7w5m    1/1     Running   0          6d",
        desc="看线上 pod",
    )
    s.bash(
        'mysql -h 10.60.1.15 -u paike_rw -p"$PAIKE_DB_PASS" paike -e "SELECT id, student_id, start_at, created_at '
        "FROM lesson_booking WHERE teacher_id=10382 AND start_at='2027-01-06 19:00:00'\"",
        "id\tstudent_id\tstart_at\tcreated_at\n882301\t55120\t2027-01-06 19:00:00\t2027-01-05 20:41:07.212\n"
        "882302\t60877\t2027-01-06 19:00:00\t2027-01-05 20:41:07.249",
        desc="查重复的约课记录",
    )
    s.read(
        "/home/dev/work/edu-paike/paike-api/src/main/java/com/edu/paike/booking/BookingService.java",
        "    @Transactional\n    public Booking book(BookRequest req) {\n"
        "        if (bookingMapper.countOverlap(req.getTeacherId(), req.getStartAt(), req.getEndAt()) > 0) {\n"
        "            throw new BizException(ErrorCode.SLOT_TAKEN);\n        }\n"
        "        return bookingMapper.insert(Booking.from(req));\n    }",
    )
    s.say(
        "两条记录的 created_at 只差 37ms。`book` 是先 `countOverlap` 查有没有冲突、再插入，典型的先查后插：MySQL 默认 RR 隔离级别下，"
        "普通 SELECT 是快照读，不加任何锁，两个请求都在对方提交之前查到 0 条冲突，于是各自插入成功。@Transactional 挡不住这种并发。\n\n"
        "几种改法：\n1. 占用表 + 唯一索引：课程按 30 分钟切片，约课时在 `teacher_slot_occupancy` 里给每个切片插一行，"
        "`(teacher_id, slice_start)` 建唯一索引，撞了直接 DuplicateKeyException，由数据库兜底；\n"
        "2. Redis 分布式锁，按 teacher_id 加锁；\n3. `SELECT ... FOR UPDATE` 锁老师那一行。\n\n"
        "我倾向第一种。后两种都要求每条写入路径都记得加锁，后台手工排课、批量导入哪个漏了就又重了。"
    )
    s.user("行，就第一种。隔壁组之前用 Redis 锁出过锁过期了业务还在写的事，不想再踩。我们的课本来就是 30 分钟的整数倍，切片没问题")
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V14__teacher_slot_occupancy.sql",
            "content": "CREATE TABLE teacher_slot_occupancy (\n  id BIGINT PRIMARY KEY AUTO_INCREMENT,\n  teacher_id BIGINT NOT NULL,\n"
            "  slice_start DATETIME NOT NULL,\n  booking_id BIGINT NOT NULL,\n  UNIQUE KEY uk_teacher_slice (teacher_id, slice_start)\n);",
        },
        "File created successfully at: /home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V14__teacher_slot_occupancy.sql",
    )
    s.edit(
        "/home/dev/work/edu-paike/paike-api/src/main/java/com/edu/paike/booking/BookingService.java",
        "        return bookingMapper.insert(Booking.from(req));",
        "        Booking b = bookingMapper.insert(Booking.from(req));\n"
        "        try {\n            occupancyMapper.insertSlices(b.getTeacherId(), Slices.of(b), b.getId());\n"
        "        } catch (DuplicateKeyException e) {\n            throw new BizException(ErrorCode.SLOT_TAKEN);\n        }\n        return b;",
    )
    s.bash(
        "./mvnw -q -pl paike-api test -Dtest=BookingConcurrencyTest",
        "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 4.118 s - in com.edu.paike.booking.BookingConcurrencyTest",
        desc="并发约课单测",
    )
    s.user("集成测试怎么跑来着？好久没跑了")
    s.say("`./mvnw verify -Pit`，会用 Testcontainers 起 MySQL 8.0 和 Redis，本机 Docker 要开着。")
    s.user(
        "ok。顺便把时间的事也定一下：现在 start_at 存的是北京时间，北美那批学员的课表全靠前端减 13 个小时，夏令时一来就乱套"
    )
    s.say(
        "两种做法：\n1. 库里所有时间一律存 UTC，服务端按学员 / 老师的时区转换，接口返回带偏移的时间；\n"
        "2. 继续存北京时间，每条记录多存一列时区。\n第一种历史数据要迁移一次，但之后只有一套规则；第二种每个查询都得记得带时区列，迟早有人忘。"
    )
    s.user("听你的，存 UTC。历史数据你写个迁移脚本一起转掉")
    s.user("再加一条规矩：接口返回的时间一律 ISO-8601 带时区偏移，比如 2027-01-06T19:00:00+08:00，前端不许自己拼时区")
    s.say("好，存储统一 UTC，历史数据迁移放在 V15，接口序列化统一输出带偏移的 ISO-8601。")
    s.user("约课成功之后要在开课前 30 分钟提醒学员和老师。这个定时任务用什么跑？项目里现在没有调度")
    s.say(
        "几个选择：\n- Spring `@Scheduled`：最简单，但多实例部署每个实例都会跑，得再加 ShedLock 之类的锁；\n"
        "- Quartz 集群模式：功能全，要建它那十几张 QRTZ_ 表；\n- 公司现成的 XXL-JOB 调度中心：有控制台、失败告警、分片广播，接入只要起个执行器。"
    )
    s.user(
        "不上 Quartz 了，太重，还得建一堆 QRTZ_ 表。@Scheduled 多实例也麻烦。用 XXL-JOB，调度中心在 "
        "http://xxl-job.infra.svc:8080/xxl-job-admin ，执行器名叫 paike-job-executor"
    )
    s.say("好，提醒任务接 XXL-JOB，执行器 `paike-job-executor`。")
    s.user(
        "还有几个事记一下：约课成功的事件发 RocketMQ，topic 叫 paike_lesson_booked，tag 区分 1v1 和小班，课消和财务都订阅它。"
        "本地起服务是 `./mvnw spring-boot:run -Dspring-boot.run.profiles=local`，端口 8086。线上 oncall 是阿杰（陈杰）。"
        "排课规则的需求都找小满，她是教务这边的产品 owner"
    )
    s.say("好，这几条我都记住了。")
    s.user("下午还有周会，先提交吧")
    s.bash(
        "git add -A && git commit -m 'fix(booking): 老师时段占用表 + 唯一索引防重复约课'",
        "[fix/double-booking 9e41c7a] fix(booking): 老师时段占用表 + 唯一索引防重复约课\n 6 files changed, 142 insertions(+), 9 deletions(-)",
    )
    s.stop(ms=2384100)
    s.title("修复老师时段重复约课")

    s.exp(
        "root_cause",
        "zh",
        "同一老师同一时段被两个学员约上：BookingService.book 先 countOverlap 查冲突再插入（先查后插），RR 隔离级别下普通 SELECT "
        "是快照读不加锁，两个相隔 37ms 的请求都查到无冲突，各自插入成功。",
        ["countOverlap", "快照读"],
    )
    s.decision(
        "zh",
        "防重复约课用老师时段占用表 teacher_slot_occupancy（课程按 30 分钟切片）+ (teacher_id, slice_start) 唯一索引，由数据库兜底；"
        "不用 Redis 分布式锁或 SELECT ... FOR UPDATE：隔壁组出过锁过期还在写的事，且每条写入路径都得记得加锁。",
        ["teacher_slot_occupancy"],
        "唯一索引",
        ["Redis 分布式锁"],
        ["锁过期"],
    )
    s.decision(
        "zh",
        "排课时间库里一律存 UTC，服务端按学员 / 老师时区转换，不再存北京时间 + 时区列：北美学员靠前端减 13 小时，夏令时一来就乱；"
        "历史数据写迁移脚本一起转。",
        ["UTC"],
        "UTC",
        ["北京时间"],
        ["夏令时"],
    )
    s.decision(
        "zh",
        "开课提醒等定时任务用公司的 XXL-JOB 调度中心（http://xxl-job.infra.svc:8080/xxl-job-admin，执行器 paike-job-executor），"
        "不用 Quartz（太重，要建一堆 QRTZ_ 表），也不用 @Scheduled（多实例会重复跑）。",
        ["XXL-JOB", "paike-job-executor"],
        "XXL-JOB",
        ["Quartz"],
        ["QRTZ_"],
    )
    s.fact(
        "convention",
        "zh",
        "接口返回的时间一律是带时区偏移的 ISO-8601（如 2027-01-06T19:00:00+08:00），前端不许自己拼时区。",
        ["ISO-8601", "偏移"],
    )
    s.fact(
        "command",
        "zh",
        "集成测试 `./mvnw verify -Pit`，用 Testcontainers 起 MySQL 8.0 和 Redis，本机 Docker 要开着。",
        ["verify -Pit"],
    )
    s.fact(
        "command",
        "zh",
        "本地起服务 `./mvnw spring-boot:run -Dspring-boot.run.profiles=local`，端口 8086。",
        ["spring-boot:run", "8086"],
    )
    s.fact(
        "config",
        "zh",
        "约课成功事件发 RocketMQ topic paike_lesson_booked（tag 区分 1v1 和小班），课消和财务订阅。",
        ["paike_lesson_booked"],
    )
    s.fact("config", "zh", "线上 oncall 是阿杰（陈杰）。", ["阿杰"])
    s.fact("config", "zh", "排课规则需求找小满，她是教务的产品 owner。", ["小满"])
    s.ok(["BookingConcurrencyTest"], "并发约课单测")
    s.ok(["DuplicateKeyException"], "撞唯一索引转成 SLOT_TAKEN")
    s.forbid("下午还有周会", "9e41c7a", "paike-api-6c8d9f7b4-xk2lp", "Time elapsed: 4.118 s")
    s.secret("Pk_2027!mysql", "password=Pk_2027!mysql")
    return s


def s2():
    s = Session(
        "j2_paike_reminder_dup", CWD, "2027-01-25T11:30:00Z", branch="fix/reminder-dup", version="2.1.318",
        lang="zh", order=2,
    )
    s.snapshot()
    s.recall(
        [
            (412, "decision", "2 weeks ago", "防重复约课：老师时段占用表 + (teacher_id, slice_start) 唯一索引，不用 Redis 锁。"),
            (415, "decision", "2 weeks ago", "开课提醒等定时任务跑在 XXL-JOB，执行器 paike-job-executor。"),
            (419, "fact", "2 weeks ago", "线上 oncall 是阿杰（陈杰）。"),
        ]
    )
    s.user(
        "昨晚 19:30 那批开课提醒，好多学员收到了两三条一模一样的短信，家长群里都在吐槽。提醒是 XXL-JOB 上的 lessonReminderJob，每分钟跑一次"
    )
    s.bash(
        "for p in $(kubectl -n paike get pods -l app=paike-job -o name); do kubectl -n paike logs $p --since=16h | grep -m1 'LessonReminderJob'; done",
        "2027-01-24 19:00:00.012 INFO  LessonReminderJob - shard 0/3 scanned 1284 lessons, sent 1284 [paike-job-5d7f8c9b6-4kq7n]\n"
        "2027-01-24 19:00:00.015 INFO  LessonReminderJob - shard 1/3 scanned 1284 lessons, sent 1284 [paike-job-5d7f8c9b6-m8w2x]\n"
        "2027-01-24 19:00:00.019 INFO  LessonReminderJob - shard 2/3 scanned 1284 lessons, sent 1284 [paike-job-5d7f8c9b6-z9r4t]",
        desc="看三个执行器的日志",
    )
    s.read(
        "/home/dev/work/edu-paike/paike-job/src/main/java/com/edu/paike/job/LessonReminderJob.java",
        '    @XxlJob("lessonReminderJob")\n    public void run() {\n        LocalDateTime now = LocalDateTime.now(ZoneOffset.UTC);\n'
        "        List<Lesson> lessons = lessonMapper.findStartingBetween(now.plusMinutes(30), now.plusMinutes(31));\n"
        "        lessons.forEach(notifier::remind);\n    }",
    )
    s.say(
        "三个执行器各扫了 1284 节课，也就是同一批课被扫了三遍。根因是调度中心里这个任务的路由策略配的是“分片广播”，每次触发三个执行器都会收到，"
        "但代码里完全没用 `XxlJobHelper.getShardIndex()`，每个分片都查全量。有的学员收到两条是因为当时一个 pod 在滚动发布。\n\n"
        "两种修法：\n1. 路由策略改成“第一个”，单机执行；\n2. 保留分片广播，查询加 `MOD(lesson_id, shardTotal) = shardIndex`，每个执行器只扫自己那份。\n"
        "不管选哪种，发送这一层都建议加幂等：建 `reminder_send_log` 表，`(lesson_id, receiver_id, channel)` 唯一键，插入成功才真正发送。"
    )
    s.user("第二种。开学季一分钟要发好几万条，单机扫不过来。幂等表也加上")
    s.edit(
        "/home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V14__teacher_slot_occupancy.sql",
        "  UNIQUE KEY uk_teacher_slice (teacher_id, slice_start)\n);",
        "  UNIQUE KEY uk_teacher_slice (teacher_id, slice_start)\n);\n\nCREATE TABLE reminder_send_log (\n  lesson_id BIGINT NOT NULL,\n"
        "  receiver_id BIGINT NOT NULL,\n  channel VARCHAR(16) NOT NULL,\n  sent_at DATETIME NOT NULL,\n"
        "  UNIQUE KEY uk_send (lesson_id, receiver_id, channel)\n);",
    )
    s.edit(
        "/home/dev/work/edu-paike/paike-job/src/main/java/com/edu/paike/job/LessonReminderJob.java",
        "lessonMapper.findStartingBetween(now.plusMinutes(30), now.plusMinutes(31));",
        "lessonMapper.findStartingBetween(now.plusMinutes(30), now.plusMinutes(31),\n"
        "                XxlJobHelper.getShardIndex(), XxlJobHelper.getShardTotal());",
    )
    s.bash(
        "./mvnw verify -Pit -q 2>&1 | grep -m3 -E 'ERROR|Flyway'",
        "[ERROR] org.flywaydb.core.api.exception.FlywayValidateException: Validate failed: Migrations have failed validation\n"
        "[ERROR] Migration checksum mismatch for migration version 14\n[ERROR] -> Applied to database : 1938551207",
        desc="跑集成测试",
        err=True,
    )
    s.say(
        "是我的问题：我把 reminder_send_log 直接加进了 V14，V14 已经在测试环境执行过，库里 flyway_schema_history 记的是旧 checksum，"
        "校验就失败了。V14 改回原样，新表单独放 V16__reminder_send_log.sql（V15 是上次的 UTC 迁移）。"
    )
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V16__reminder_send_log.sql",
            "content": "CREATE TABLE reminder_send_log (\n  lesson_id BIGINT NOT NULL,\n  receiver_id BIGINT NOT NULL,\n"
            "  channel VARCHAR(16) NOT NULL,\n  sent_at DATETIME NOT NULL,\n  UNIQUE KEY uk_send (lesson_id, receiver_id, channel)\n);",
        },
        "File created successfully at: /home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V16__reminder_send_log.sql",
    )
    s.bash(
        "git checkout -- paike-api/src/main/resources/db/migration/V14__teacher_slot_occupancy.sql && ./mvnw verify -Pit -q 2>&1 | tail -2",
        "[INFO] Tests run: 61, Failures: 0, Errors: 0, Skipped: 1\n[INFO] BUILD SUCCESS",
    )
    s.user("Flyway 这块以后立个规矩：发布过的脚本一个字都不许改，要改就新建版本。")
    s.say("好，以后迁移只追加新版本。")
    s.user(
        "另外有个想法：RocketMQ 5 不是支持任意时长的定时消息吗？约课的时候直接投一条开课前 30 分钟的定时消息，是不是就不用扫表了"
    )
    s.say(
        "能做，但有个麻烦：学员改课、取消的时候，已经投出去的定时消息撤不回来，消费端还得再查一次课程状态才能决定发不发。"
        "扫表逻辑最简单，量的问题分片已经能撑住。"
    )
    s.user("那还是继续扫表。定时消息撤不回来，消费端还要兜一遍，等于没省事")
    s.user("短信成本老板嫌高了，一个月四万多。提醒能不能先走小程序订阅消息？")
    s.say(
        "可以，但一次性订阅消息要学员每次授权，一次授权只能发一条，授权率大概只有一半，所以不建议全部走订阅消息。"
        "建议：有剩余授权就先发订阅消息，没授权或者发送失败再降级发短信。"
    )
    s.user(
        "ok 就这么办，订阅消息优先，短信兜底，能省不少成本。短信 AK 给你：LTAI5tPk9Rm2Xw7Qn4Zs / HqV8mN3kX2pL7tR9wY4zB6cF1gJ5dS0a ，"
        "放到 k8s secret paike-sms 里，别进仓库"
    )
    s.say("好，代码从 `SMS_ACCESS_KEY_ID` / `SMS_ACCESS_KEY_SECRET` 读，值只放 secret `paike-sms`。")
    s.user("取消规则产品一直没定：开课前多久以内取消要扣课时？小满倾向 24 小时，运营想要 12 小时。你怎么看")
    s.say(
        "24 小时：老师空出来的时段还有一天时间被别的学员约走，或者教务补排；12 小时对学员更友好，但空档基本补不上，老师课酬也得另算。"
    )
    s.user("按 24 小时")
    s.say("好，取消时限做成配置 `booking.cancel-penalty-hours: 24`，后面改不用发版。")
    s.user("主要是老师那边：空出来的时段得有时间让别人约走，12 小时太紧了。回头小满问起来你就这么跟她说")
    s.user(
        "还有两件事：oncall 换人了，这周起是 Kevin（林凯），阿杰转岗去做直播课了。"
        "另外前端展示课表的时区一律以学员档案里的 timezone 字段为准，不看浏览器和手机系统时区。这个跟接口返回带偏移那条不冲突，是两码事"
    )
    s.say("收到，两条都记下了。")
    s.user("好，我去吃饭了")
    s.bash(
        "git add -A && git commit -m 'fix(job): 提醒任务按分片扫描 + 发送幂等; feat: 订阅消息优先短信兜底'",
        "[fix/reminder-dup 3d07b5e] fix(job): 提醒任务按分片扫描 + 发送幂等; feat: 订阅消息优先短信兜底\n 9 files changed, 211 insertions(+), 18 deletions(-)",
    )
    s.stop(ms=2960400)
    s.title("开课提醒重复发送")

    s.exp(
        "root_cause",
        "zh",
        "开课提醒重复发送：lessonReminderJob 在调度中心配的是“分片广播”，三个执行器都会被触发，但代码没用 XxlJobHelper.getShardIndex() "
        "过滤，每个分片都扫全量课程，同一批课发了三遍。",
        ["分片广播", "getShardIndex"],
    )
    s.decision(
        "zh",
        "提醒任务保留分片广播，查询按 MOD(lesson_id, shardTotal) = shardIndex 只扫自己那份，不改成单机执行：开学季一分钟几万条，单机扫不过来。",
        ["MOD(lesson_id"],
        "分片广播",
        ["单机"],
        ["扫不过来"],
    )
    s.exp(
        "fix",
        "zh",
        "提醒发送加幂等：reminder_send_log 表 (lesson_id, receiver_id, channel) 唯一键，插入成功才真正发送。",
        ["reminder_send_log"],
    )
    s.exp(
        "lesson",
        "zh",
        "发布过的 Flyway 脚本一个字都不许改，要改就新建版本：改了已执行的 V14 导致 checksum mismatch，校验失败。",
        ["Flyway", "新建版本"],
    )
    s.decision(
        "zh",
        "开课提醒继续扫表，不用 RocketMQ 5 定时消息：改课、取消时定时消息撤不回来，消费端还得再查一遍状态，等于没省事。",
        ["扫表"],
        "扫表",
        ["定时消息"],
        ["撤不回"],
    )
    s.decision(
        "zh",
        "开课提醒渠道：小程序订阅消息优先，没授权或发送失败再降级短信（短信一个月四万多，省成本）；不全部走订阅消息，因为一次授权只能发一条、授权率只有一半左右。",
        ["订阅消息"],
        "订阅消息优先",
        ["全部走订阅消息"],
        ["成本"],
    )
    s.fact(
        "config",
        "zh",
        "短信 AccessKey 放 k8s secret paike-sms，代码从 SMS_ACCESS_KEY_ID / SMS_ACCESS_KEY_SECRET 读，不进仓库。",
        ["paike-sms"],
    )
    s.decision(
        "zh",
        "取消规则：开课前 24 小时以内取消扣课时，不用运营提的 12 小时：空出来的时段要有时间让别的学员约走，12 小时太紧。",
        ["24 小时"],
        "24 小时",
        ["12 小时"],
        ["约走"],
    )
    s.fact("config", "zh", "线上 oncall 换成 Kevin（林凯），阿杰转岗做直播课了。", ["Kevin"], sup="j1_paike_double_booking#e9")
    s.fact(
        "convention",
        "zh",
        "前端展示课表时区一律以学员档案里的 timezone 字段为准，不看浏览器和手机系统时区（与接口时间带偏移是两条规矩）。",
        ["学员档案", "timezone"],
    )
    s.ok(["lessonReminderJob"], "提醒任务名")
    s.forbid(
        "我去吃饭了",
        "3d07b5e",
        "paike-job-5d7f8c9b6-m8w2x",
        "scanned 1284 lessons",
        "Applied to database : 1938551207",
        "不用 Redis 锁。",
        "定时任务跑在 XXL-JOB",
        "线上 oncall 是阿杰（陈杰）。",
    )
    s.secret("HqV8mN3kX2pL7tR9wY4zB6cF1gJ5dS0a", "LTAI5tPk9Rm2Xw7Qn4Zs")
    return s


def s3():
    s = Session(
        "j3_paike_onboarding_questions", CWD, "2027-02-03T07:10:00Z", branch="main", version="2.1.321", lang="zh", order=3
    )
    s.snapshot()
    s.user("新来的实习生小鹿问我约课冲突检测到底是怎么做的，我自己也有点忘了。你带我过一遍代码，只讲不改")
    s.maple_search(
        "约课 冲突检测 占用表",
        [
            (431, "decision", "防重复约课用占用表 teacher_slot_occupancy + 唯一索引 uk_teacher_slice。"),
            (437, "experience", "发布过的 Flyway 脚本禁止修改，改了会 checksum mismatch。"),
        ],
    )
    s.grep(
        "occupancyMapper",
        "paike-api/src/main/java/com/edu/paike/booking/BookingService.java:41:            occupancyMapper.insertSlices(b.getTeacherId(), Slices.of(b), b.getId());\n"
        "paike-api/src/main/java/com/edu/paike/booking/BookingService.java:77:        occupancyMapper.deleteByBooking(bookingId);\n"
        "paike-api/src/main/java/com/edu/paike/admin/AdminScheduleService.java:58:        occupancyMapper.insertSlices(teacherId, slices, bookingId);",
        path="paike-api/src",
    )
    s.say(
        "核心在占用表：一节课按 30 分钟切成若干片，`book` 在同一个事务里先插约课记录，再给每个切片往 `teacher_slot_occupancy` 插一行。"
        "`(teacher_id, slice_start)` 有唯一索引，同一个老师同一个切片只能有一行，第二个人插的时候拿到 DuplicateKeyException，"
        "转成 SLOT_TAKEN 返回给前端，整个事务回滚。"
    )
    s.user("取消的时候呢？占用的行会删掉吗")
    s.read(
        "/home/dev/work/edu-paike/paike-api/src/main/java/com/edu/paike/booking/BookingService.java",
        "    @Transactional\n    public void cancel(long bookingId) {\n        bookingMapper.markCancelled(bookingId);\n"
        "        occupancyMapper.deleteByBooking(bookingId);\n    }",
    )
    s.say("会，`cancel` 在同一个事务里把约课标成取消，并按 booking_id 删掉对应的切片行，所以取消之后这个时段马上就能被别人约。")
    s.user("后台教务手工排课也会走这套吗？")
    s.say("会，`AdminScheduleService` 第 58 行同样往占用表插切片，所以手工排课和学员自己约课是互斥的。")
    s.user("那切片为啥是 30 分钟不是 15 分钟")
    s.say("因为现在所有课型都是 30 分钟的整数倍，切 30 分钟行数最少；哪天出了 45 分钟的课，就得把切片改小。")
    s.user("ok 懂了，回头让她自己把这两个类读一遍 😂")
    s.interrupt()
    s.user("顺便跑一下单测，看看现在是不是全绿")
    s.bash(
        "./mvnw -q test 2>&1 | tail -2",
        "[INFO] Tests run: 214, Failures: 0, Errors: 0, Skipped: 2\n[INFO] BUILD SUCCESS",
        desc="跑全部单测",
    )
    s.say("全绿，214 个用例，2 个 skipped。")
    s.user("谢啦")
    s.stop(ms=615200)
    s.title("约课冲突检测代码讲解")
    s.ok(["AdminScheduleService"], "后台手工排课同样写占用表（对现有代码的说明）")
    s.ok(["deleteByBooking"], "取消时按 booking_id 删切片行（对现有代码的说明）")
    s.forbid(
        "😂",
        "只讲不改",
        "Tests run: 214",
        "占用表 teacher_slot_occupancy + 唯一索引 uk_teacher_slice。",
        "发布过的 Flyway 脚本禁止修改，改了会 checksum mismatch。",
    )
    return s


def s4():
    s = Session(
        "j4_paike_dst_powerjob", CWD, "2027-03-15T01:20:00Z", branch="fix/dst-timezone", version="2.1.326",
        lang="zh", order=4,
    )
    s.snapshot()
    s.user(
        reminder(
            [
                (452, "decision", "2 months ago", "排课时间库里一律存 UTC，接口返回带偏移的 ISO-8601。"),
                (458, "decision", "7 weeks ago", "开课前 24 小时内取消扣课时，不用 12 小时。"),
                (463, "fact", "7 weeks ago", "短信 AK 放 k8s secret paike-sms。"),
            ]
        )
        + "\n周一一早北美学员集体反馈课表时间错了一个小时，美国昨天刚切夏令时。UTC 那套不是早就上线了吗？",
        blocks=True,
    )
    s.bash(
        'mysql -h 10.60.1.15 -u paike_rw -p"$PAIKE_DB_PASS" paike -e "SELECT timezone, COUNT(*) FROM student_profile '
        "WHERE region='NA' GROUP BY timezone\"",
        "timezone\tCOUNT(*)\n-05:00\t1873\n-08:00\t942\n-06:00\t311\n-07:00\t87",
        desc="看北美学员的时区字段",
    )
    s.read(
        "/home/dev/work/edu-paike/paike-api/src/main/java/com/edu/paike/time/TimeConverter.java",
        "    public OffsetDateTime toStudentTime(Instant utc, StudentProfile p) {\n"
        "        return utc.atOffset(ZoneOffset.of(p.getTimezone()));\n    }",
    )
    s.say(
        "UTC 存储本身没问题，错在换算用的时区：`student_profile.timezone` 存的是注册时算出来的固定偏移，比如纽约的学员存的是 `-05:00`。"
        "昨天起纽约是夏令时 -04:00，固定偏移不会跟着变，所以展示出来整整差一小时。\n\n"
        "两种改法：\n1. timezone 改存 IANA 时区 ID（America/New_York），换算用 `ZoneId`，夏令时交给 JDK 的 tzdata；\n"
        "2. 保留偏移量，每年切换夏令时的时候跑个任务批量改偏移。"
    )
    s.user("肯定第一种。第二种每年两次人肉改，哪次忘了又是一波投诉。历史数据按注册时填的城市映射成 zone id")
    s.edit(
        "/home/dev/work/edu-paike/paike-api/src/main/java/com/edu/paike/time/TimeConverter.java",
        "        return utc.atOffset(ZoneOffset.of(p.getTimezone()));",
        "        return utc.atZone(ZoneId.of(p.getTimezone())).toOffsetDateTime();",
    )
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V19__student_timezone_iana.sql",
            "content": "UPDATE student_profile sp JOIN city_zone cz ON sp.signup_city = cz.city\n   SET sp.timezone = cz.zone_id\n WHERE sp.timezone LIKE '+%' OR sp.timezone LIKE '-%';",
        },
        "File created successfully at: /home/dev/work/edu-paike/paike-api/src/main/resources/db/migration/V19__student_timezone_iana.sql",
    )
    s.bash(
        "./mvnw -q -pl paike-api test -Dtest='TimeConverterTest'",
        "[INFO] Tests run: 9, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.214 s - in com.edu.paike.time.TimeConverterTest",
    )
    s.user("这个教训记下来：时区一律存 IANA ID，偏移量只在展示那一刻算，绝对别存")
    s.say("嗯，这条记下来了。")
    s.user(
        "另外一件大事：公司的 XXL-JOB 调度中心 4 月底下线，统一迁 PowerJob。server 是 http://powerjob.infra.svc:7700 ，"
        "app 叫 paike-job，app 密码是 Pj#paike0315"
    )
    s.say(
        "迁移有两种走法：\n1. 直接切：PowerJob 上线的同时停掉 XXL-JOB 上的任务；\n"
        "2. 双跑一周：PowerJob 版本先只把“应发名单”写日志、不真发，每天和 XXL-JOB 的实际发送记录对一遍，一致了再切。"
    )
    s.user("双跑。提醒漏发是要被家长骂上热搜的，宁可慢一周")
    s.tool(
        "Write",
        {
            "file_path": "/home/dev/work/edu-paike/paike-job/src/main/java/com/edu/paike/job/LessonReminderProcessor.java",
            "content": "@Component\npublic class LessonReminderProcessor implements MapProcessor {\n    // dry-run: 只记录应发名单，不真发\n}",
        },
        "File created successfully at: /home/dev/work/edu-paike/paike-job/src/main/java/com/edu/paike/job/LessonReminderProcessor.java",
    )
    s.bash(
        "./mvnw verify -Pit -q 2>&1 | grep -m2 -E 'ERROR'",
        "[ERROR] PowerJobWorkerIT.registersWithServer:34 » Connect Connection refused: powerjob.infra.svc/10.80.3.7:7700\n"
        "[ERROR] Tests run: 62, Failures: 0, Errors: 1, Skipped: 1",
        desc="跑集成测试",
        err=True,
    )
    s.say(
        "`PowerJobWorkerIT` 要连真的 PowerJob server，本机访问不到 infra 网段。要么起个本地 server 容器，但公司镜像仓库里没有 powerjob-server 的镜像。"
    )
    s.user("先 @Disabled 掉，别折腾了，我回头找平台组要个本地能跑的 server 镜像")
    s.edit(
        "/home/dev/work/edu-paike/paike-job/src/test/java/com/edu/paike/job/PowerJobWorkerIT.java",
        "class PowerJobWorkerIT {",
        '@Disabled("等平台组提供本地 powerjob-server 镜像")\nclass PowerJobWorkerIT {',
    )
    s.user(
        "还有几个变化一起记：本地端口从 8086 改成 8090 了，8086 跟教研系统本地联调冲突。"
        "RocketMQ topic 按中间件组的新规范改名成 TOPIC_PAIKE_LESSON_BOOKED，老的 paike_lesson_booked 月底删；"
        "另外新加一条：consumer group 统一叫 GID_paike_<用途>。"
        "取消规则也改了，上个月投诉太多，小满拍板从 24 小时改成开课前 12 小时以内取消才扣课时"
    )
    s.grep(
        "paike_lesson_booked|8086",
        "paike-api/src/main/resources/application.yml:4:  port: 8086\n"
        "paike-api/src/main/resources/application.yml:31:    booked-topic: paike_lesson_booked",
        path="paike-api/src/main/resources",
    )
    s.edit(
        "/home/dev/work/edu-paike/paike-api/src/main/resources/application.yml",
        "  port: 8086",
        "  port: 8090",
    )
    s.edit(
        "/home/dev/work/edu-paike/paike-api/src/main/resources/application.yml",
        "    booked-topic: paike_lesson_booked",
        "    booked-topic: TOPIC_PAIKE_LESSON_BOOKED",
    )
    s.say("端口、topic 都改了；取消时限的配置 `booking.cancel-penalty-hours` 改成 12。")
    s.user("行，剩下的明天再弄")
    s.bash(
        "git add -A && git commit -m 'fix(time): 时区改存 IANA zone id; feat(job): PowerJob 双跑'",
        "[fix/dst-timezone c58a2f0] fix(time): 时区改存 IANA zone id; feat(job): PowerJob 双跑\n 12 files changed, 260 insertions(+), 41 deletions(-)",
    )
    s.stop(ms=3120500)
    s.title("夏令时课表错一小时与 PowerJob 迁移")

    s.exp(
        "root_cause",
        "zh",
        "美国切夏令时后北美学员课表错一小时：student_profile.timezone 存的是注册时算出的固定偏移（如 -05:00），"
        "纽约夏令时变成 -04:00 而固定偏移不会跟着变；UTC 存储本身没问题。",
        ["-05:00", "夏令时"],
    )
    s.decision(
        "zh",
        "学员 timezone 改存 IANA 时区 ID（如 America/New_York），换算用 ZoneId，夏令时交给 JDK tzdata；不保留偏移量每年批量改："
        "每年两次人肉改，忘一次就是一波投诉。历史数据按注册城市映射成 zone id。",
        ["IANA"],
        "IANA",
        ["保留偏移量"],
        ["人肉"],
    )
    s.exp("lesson", "zh", "时区一律存 IANA ID，偏移量只在展示那一刻算，不要存偏移。", ["IANA", "展示那一刻"])
    s.fact(
        "config",
        "zh",
        "XXL-JOB 调度中心 4 月底下线，定时任务统一迁 PowerJob：server http://powerjob.infra.svc:7700，app 名 paike-job。",
        ["PowerJob", "powerjob.infra.svc:7700"],
        sup="j1_paike_double_booking#e4",
    )
    s.decision(
        "zh",
        "迁 PowerJob 采用双跑一周：PowerJob 版本只记录应发名单不真发，每天和 XXL-JOB 实际发送记录对比，一致后再切；不直接切：提醒漏发会被家长骂上热搜。",
        ["双跑"],
        "双跑",
        ["直接切"],
        ["漏发"],
    )
    s.fact("config", "zh", "本地服务端口从 8086 改为 8090（8086 与教研系统本地联调冲突）。", ["8090"], sup="j1_paike_double_booking#e7")
    s.fact(
        "config",
        "zh",
        "约课事件 RocketMQ topic 按中间件组新规范改名为 TOPIC_PAIKE_LESSON_BOOKED，老的 paike_lesson_booked 月底删除。",
        ["TOPIC_PAIKE_LESSON_BOOKED"],
        sup="j1_paike_double_booking#e8",
    )
    s.fact("convention", "zh", "RocketMQ consumer group 统一命名为 GID_paike_<用途>。", ["GID_paike_"])
    s.decision(
        "zh",
        "取消规则改为开课前 12 小时以内取消才扣课时（原为 24 小时），上个月投诉太多，小满拍板。",
        ["12 小时"],
        "12 小时",
        ["24 小时"],
        ["投诉"],
        sup="j2_paike_reminder_dup#e8",
    )
    s.ok(["PowerJobWorkerIT"], "PowerJobWorkerIT 本地连不上 infra 的 PowerJob，暂时 @Disabled，等平台组给本地镜像（未解决）")
    s.ok(["cancel-penalty-hours"], "取消时限配置项")
    s.forbid(
        "剩下的明天再弄",
        "c58a2f0",
        "-05:00\t1873",
        "Time elapsed: 0.214 s",
        "库里一律存 UTC，接口返回带偏移的 ISO-8601。",
        "开课前 24 小时内取消扣课时，不用 12 小时。",
        "短信 AK 放 k8s secret paike-sms。",
    )
    s.secret("Pj#paike0315")
    return s


SESSIONS = [s1, s2, s3, s4]
