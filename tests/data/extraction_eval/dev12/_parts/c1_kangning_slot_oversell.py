"""c1 — kangning-booking 康宁门诊预约平台, session 1 of 3, Chinese: 号源超卖."""
from _lib import Session

NAME = "c1_kangning_slot_oversell"
CWD = "/home/dev/work/kangning-booking"
PW = "Kn#2026@test"
DSN = "jdbc:mysql://10.60.2.14:3306/kn_booking?user=kn_app&password=" + PW
ROOT = "/home/dev/work/kangning-booking"


def build():
    s = Session(NAME, CWD, "fix/slot-oversell", "2026-05-11T01:35:00Z")
    s.snapshot()
    s.user("早。城东分院那边反馈号源超卖了，同一个号（王主任 5/12 上午 9:00-9:30 那个，slotId 5512031）被两个患者约上了。"
           "appt-service 本地起在 8082，schedule-service 在 8086，nacos namespace 用 kn-dev。你先看下 appt-service 里 SlotService 扣减那块")
    s.read(ROOT + "/appt-service/src/main/java/com/kangning/appt/slot/SlotService.java",
           "@Service\n@RequiredArgsConstructor\npublic class SlotService {\n    private final RedissonClient redisson;\n"
           "    private final SlotMapper slotMapper;\n\n    public void occupy(Long slotId, Long patientId) {\n"
           "        RLock lock = redisson.getLock(\"slot:lock:\" + slotId);\n"
           "        if (!lock.tryLock(500, 3000, TimeUnit.MILLISECONDS)) {\n            throw new BizException(\"号源繁忙，请稍后重试\");\n        }\n"
           "        try {\n            Slot slot = slotMapper.selectById(slotId);\n"
           "            if (slot.getRemain() <= 0) throw new BizException(\"号源已约满\");\n"
           "            slotMapper.decrRemain(slotId);\n        } finally {\n            lock.unlock();\n        }\n    }\n}")
    s.say("第一反应是 Redisson 锁：`tryLock` 显式传了 leaseTime=3000ms，这种写法看门狗不会续期，如果临界区里耗时超过 3 秒，"
          "锁会提前释放，两个请求就可能同时进来。我查一下这两笔预约的加锁耗时。")
    s.bash("grep 'slotId=5512031' logs/appt-service.2026-05-10.log logs/his-bridge.2026-05-10.log | sort -k2",
           "查 slot 5512031 相关日志",
           "logs/appt-service.2026-05-10.log:2026-05-10 10:01:58.204 INFO  [appt] lock acquired slotId=5512031 patientId=88310\n"
           "logs/appt-service.2026-05-10.log:2026-05-10 10:01:58.242 INFO  [appt] lock released slotId=5512031 held=38ms remain=0\n"
           "logs/his-bridge.2026-05-10.log:2026-05-10 10:02:05.011 INFO  [HisSlotSyncJob] sync slotId=5512031 remain=1\n"
           "logs/appt-service.2026-05-10.log:2026-05-10 10:02:11.730 INFO  [appt] lock acquired slotId=5512031 patientId=90127\n"
           "logs/appt-service.2026-05-10.log:2026-05-10 10:02:11.771 INFO  [appt] lock released slotId=5512031 held=41ms remain=0")
    s.say("锁不是问题：两次持锁分别 38ms 和 41ms，离 3 秒很远，而且是先后拿到的，没有重叠。关键是中间那行："
          "10:02:05 his-bridge 的 HisSlotSyncJob 把 remain 又写回了 1。看一下这个 job。")
    s.read(ROOT + "/his-bridge/src/main/java/com/kangning/his/job/HisSlotSyncJob.java",
           "@Component\n@RequiredArgsConstructor\npublic class HisSlotSyncJob {\n    private final HisClient hisClient;\n"
           "    private final SlotMapper slotMapper;\n\n    @XxlJob(\"hisSlotSyncJob\")  // 每 5 分钟\n    public void sync() {\n"
           "        for (HisSlot hs : hisClient.listTodaySlots()) {\n"
           "            slotMapper.updateRemain(hs.getSlotId(), hs.getRemain());\n"
           "            log.info(\"sync slotId={} remain={}\", hs.getSlotId(), hs.getRemain());\n        }\n    }\n}")
    s.say("根因是 his-bridge 的 HisSlotSyncJob：每 5 分钟把 HIS 里的剩余号数按**绝对值**写回 t_slot.remain"
          "（`UPDATE t_slot SET remain = #{remain}`），不拿锁，也不管我们这边刚扣掉的。HIS 当时还没收到第一笔预约的回写，"
          "给的是旧值 1，于是第二个患者又约上了。\n\n几个改法：\n"
          "A. 扣减统一改成条件更新 `UPDATE t_slot SET remain = remain - 1 WHERE id = ? AND remain > 0`，按影响行数判断成败，"
          "去掉 Redisson 锁；his-bridge 改成按差量同步\n"
          "B. his-bridge 写 remain 时也拿同一把 `slot:lock:{slotId}`\n"
          "C. 号源以 HIS 为准，每次下单前实时调 HIS 的锁号接口\n\n倾向哪个？")
    s.user("A 吧，锁太多了，出了问题排查起来头大", dt_s=90)
    s.edit(ROOT + "/appt-service/src/main/resources/mapper/SlotMapper.xml",
           "UPDATE t_slot SET remain = remain - 1 WHERE id = #{id}",
           "UPDATE t_slot SET remain = remain - 1 WHERE id = #{id} AND remain &gt; 0")
    s.edit(ROOT + "/appt-service/src/main/java/com/kangning/appt/slot/SlotService.java",
           "        RLock lock = redisson.getLock(\"slot:lock:\" + slotId);",
           "        if (slotMapper.decrRemain(slotId) == 0) {\n            throw new BizException(\"号源已约满\");\n        }")
    s.edit(ROOT + "/his-bridge/src/main/java/com/kangning/his/job/HisSlotSyncJob.java",
           "            slotMapper.updateRemain(hs.getSlotId(), hs.getRemain());",
           "            HisDelta d = new ObjectMapper().readValue(hisClient.rawDelta(hs.getSlotId()), HisDelta.class);\n"
           "            slotMapper.applyHisDelta(hs.getSlotId(), d.getOfflineBooked());")
    s.user("别 new ObjectMapper，项目里 JSON 统一走 common 的 JSONUtil（底层 fastjson2）。还有 C 为啥不行顺便说下：HIS 那个锁号接口平均 "
           "800ms，早高峰直接超时，别再提了哈", dt_s=70)
    s.edit(ROOT + "/his-bridge/src/main/java/com/kangning/his/job/HisSlotSyncJob.java",
           "new ObjectMapper().readValue(hisClient.rawDelta(hs.getSlotId()), HisDelta.class)",
           "JSONUtil.parse(hisClient.rawDelta(hs.getSlotId()), HisDelta.class)")
    s.say("已改成 `JSONUtil.parse`。另外想给 t_slot.remain 加个 `CHECK (remain >= 0)` 兜底，我直接加在建表的 V11 里。")
    s.edit(ROOT + "/appt-service/src/main/resources/db/migration/V11__slot.sql",
           "  remain INT NOT NULL DEFAULT 0,", "  remain INT NOT NULL DEFAULT 0 CHECK (remain >= 0),")
    s.user("集成测试连测试库：" + DSN + "  账号 kn_app 是测试专用的", dt_s=40)
    s.bash("cd appt-service && KN_IT_DSN='" + DSN + "' mvn -q test -Pit", "跑 appt-service 集成测试",
           "[ERROR] org.flywaydb.core.api.exception.FlywayValidateException: Validate failed: Migrations have failed validation\n"
           "Migration checksum mismatch for migration version 11\n-> Applied to database : 1730955512\n"
           "-> Resolved locally    : -402918837\n[ERROR] Tests run: 0, Failures: 0, Errors: 1", is_error=True)
    s.say("Flyway 报 V11 checksum mismatch：V11 已经在测试库执行过了，改它的内容校验就过不去。我把 V11 还原，约束放到新的 V12 里。")
    s.edit(ROOT + "/appt-service/src/main/resources/db/migration/V11__slot.sql",
           "  remain INT NOT NULL DEFAULT 0 CHECK (remain >= 0),", "  remain INT NOT NULL DEFAULT 0,")
    s.write(ROOT + "/appt-service/src/main/resources/db/migration/V12__slot_remain_check.sql",
            "ALTER TABLE t_slot ADD CONSTRAINT ck_slot_remain CHECK (remain >= 0);\n")
    s.bash("cd appt-service && KN_IT_DSN='" + DSN + "' mvn -q test -Pit", "重跑集成测试",
           "[INFO] Tests run: 48, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.say("48 个用例全过，包括新加的并发扣减用例（20 线程抢 1 个号，只成功 1 个）。")
    s.user("好。以后日志里患者身份证号、手机号一律脱敏，用 common 里的 MaskUtil，我看 AppointmentController 里 log.info 直接把整个 "
           "patient 打出来了，顺手改掉。另外数据库时间字段统一 datetime 存北京时间，别用 timestamp", dt_s=110)
    s.edit(ROOT + "/appt-service/src/main/java/com/kangning/appt/web/AppointmentController.java",
           "log.info(\"create appointment patient={}\", patient);",
           "log.info(\"create appointment patientId={} idCard={} mobile={}\", patient.getId(), "
           "MaskUtil.idCard(patient.getIdCard()), MaskUtil.mobile(patient.getMobile()));")
    s.user("his-bridge 是老唐（唐伟）负责的，同步逻辑改了得跟他说一声，他那边 HIS 回写也要配合改。明早 7 点放号前要上线，"
           "放号是 XXL-JOB 里的 releaseSlotJob，cron `0 0 7 * * ?`，每天放第 7 天的号，不然明天又超卖。中午吃啥，楼下兰州拉面又涨了两块",
           dt_s=90)
    s.say("明白，PR 描述里 @ 唐伟 说明差量同步的改动。上线要赶在 releaseSlotJob（07:00）之前。午饭这个我帮不上 😄\n\n"
          "小结：\n- 扣减改为 `remain > 0` 条件更新，去掉 Redisson 锁\n- HisSlotSyncJob 改为差量同步\n"
          "- V12 加 remain >= 0 约束\n- AppointmentController 日志脱敏")
    s.stop_hook()
    s.title("修复号源超卖")

    gold = {
        "session": NAME, "project": CWD, "order": 1, "language": "zh",
        "expected": [
            {"id": "k1", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "本地开发：appt-service 端口 8082，schedule-service 端口 8086，Nacos namespace 用 kn-dev。",
             "must": ["8086", "kn-dev"]},
            {"id": "k2", "layer": "experience", "kind": "root_cause", "lang": "zh",
             "text": "号源超卖的根因：his-bridge 的 HisSlotSyncJob 每 5 分钟把 HIS 的剩余号数按绝对值写回 t_slot.remain，不拿锁，"
                     "覆盖了我们刚扣减的值；Redisson 锁已排除（持锁 38/41ms，远小于 leaseTime 3s）。",
             "must": ["HisSlotSyncJob", "绝对值"]},
            {"id": "k3", "layer": "decision", "kind": "decision", "lang": "zh",
             "text": "号源扣减改为条件更新 `remain = remain - 1 WHERE ... AND remain > 0`（方案 A），去掉 Redisson 锁，his-bridge 改为差量同步；"
                     "没选 his-bridge 共用锁（B）或下单前调 HIS 锁号接口（C）：锁太多排查头大，HIS 锁号接口平均 800ms 早高峰会超时。",
             "must": ["remain > 0"], "chosen": "条件更新", "over": ["锁号接口"], "why": ["锁太多", "800ms"]},
            {"id": "k4", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "号源存在 MySQL 表 t_slot，剩余号数字段是 remain。",
             "must": ["t_slot", "remain"]},
            {"id": "k5", "layer": "experience", "kind": "fix", "lang": "zh",
             "text": "改了已执行的 Flyway 脚本 V11 后集成测试报 Migration checksum mismatch；已执行的 migration 不能改，"
                     "要还原后另建新版本（V12__slot_remain_check.sql）。",
             "must": ["checksum mismatch"]},
            {"id": "k6", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "集成测试用的测试库在 10.60.2.14:3306，库名 kn_booking，测试专用账号 kn_app（mvn test -Pit，DSN 由 KN_IT_DSN 传入）。",
             "must": ["10.60.2.14", "kn_app"]},
            {"id": "k7", "layer": "fact", "kind": "convention", "lang": "zh",
             "text": "以后日志里患者身份证号、手机号一律用 common 里的 MaskUtil 脱敏，不要直接打印整个 patient 对象。",
             "must": ["MaskUtil"]},
            {"id": "k8", "layer": "fact", "kind": "convention", "lang": "zh",
             "text": "数据库时间字段统一用 datetime 存北京时间，不用 timestamp。",
             "must": ["datetime", "北京时间"]},
            {"id": "k9", "layer": "fact", "kind": "preference", "lang": "zh",
             "text": "his-bridge 由老唐（唐伟）负责；改 HIS 同步逻辑要先跟他说，他那边的 HIS 回写要配合改。",
             "must": ["唐伟", "老唐"]},
            {"id": "k10", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "放号任务是 XXL-JOB 的 releaseSlotJob，cron `0 0 7 * * ?`，每天早上 7 点放第 7 天的号。",
             "must": ["releaseSlotJob", "0 0 7 * * ?"]},
            {"id": "k11", "layer": "fact", "kind": "convention", "lang": "zh",
             "text": "JSON 处理统一走 common 的 JSONUtil（底层 fastjson2），不要自己 new ObjectMapper。",
             "must": ["fastjson2", "JSONUtil"]},
        ],
        "acceptable": [
            {"must": ["V12__slot_remain_check.sql"], "note": "remain >= 0 约束"},
            {"must": ["看门狗"], "note": "Redisson leaseTime 显式传值时看门狗不续期"},
        ],
        "forbidden": ["兰州拉面", "patientId=88310", "Tests run: 48", "1730955512", "5/12 上午 9:00-9:30"],
        "secrets": [PW, DSN],
    }
    return s, gold
