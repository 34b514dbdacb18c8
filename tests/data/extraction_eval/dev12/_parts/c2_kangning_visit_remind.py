"""c2 — kangning-booking, session 2 of 3, code-switched (中英混写): 就诊提醒晚 8 小时 + 短信 fallback."""
from _lib import Session

NAME = "c2_kangning_visit_remind"
CWD = "/home/dev/work/kangning-booking"
ROOT = CWD
WX_SECRET = "8f3e6c1a9b2d4f7e0a5c3b8d1e6f9a2c"

RECALL = [
    (33, "fact", "convention", "日志里患者身份证号、手机号一律用 MaskUtil 脱敏，不要直接打印 patient 对象。"),
    (36, "fact", "preference", "his-bridge 负责人是老唐（唐伟），改 HIS 同步逻辑先找他。"),
]


def build():
    s = Session(NAME, CWD, "fix/visit-remind-tz", "2026-05-14T02:10:00Z")
    s.snapshot()
    s.user(Session.reminder(RECALL) + "\nhi, 这个 visit reminder 又 delay 了, 好几个夜诊的 patient 投诉半夜 2 点多收到就诊提醒 😂 "
           "按理说是提前 2 小时推的. can you check notify-service 的 VisitRemindProducer? 配置在 nacos 的 notify-service.yaml, "
           "remind.ahead-minutes=120")
    s.say("先怀疑容器时区：如果 notify-service 的 Pod 没设 TZ，JVM 默认 UTC，`LocalDateTime.now()` 之类的就会差 8 小时。我先看下 Pod 里的时区。")
    s.bash("kubectl -n kn-test exec deploy/notify-service -- sh -c 'date; echo TZ=$TZ; "
           "java -XshowSettings:properties -version 2>&1 | grep user.timezone'", "检查容器和 JVM 时区",
           "Thu May 14 10:12:41 CST 2026\nTZ=Asia/Shanghai\n    user.timezone = Asia/Shanghai")
    s.say("容器和 JVM 都是 Asia/Shanghai，时区配置没问题，这个方向排除。看投递时间是怎么算的。")
    s.read(ROOT + "/notify-service/src/main/java/com/kangning/notify/remind/VisitRemindProducer.java",
           "@Component\n@RequiredArgsConstructor\npublic class VisitRemindProducer {\n    private final Producer producer;\n"
           "    @Value(\"${remind.ahead-minutes}\")\n    private long aheadMinutes;\n\n    public void schedule(Appointment a) {\n"
           "        long deliverAt = a.getVisitTime().minusMinutes(aheadMinutes)\n"
           "                .toEpochSecond(ZoneOffset.UTC) * 1000;\n"
           "        Message msg = new Message(\"TOPIC_VISIT_REMIND\", \"visit\", a.getBizId(), JSONUtil.toBytes(a));\n"
           "        msg.setDeliverTimeMs(deliverAt);\n        producer.send(msg);\n    }\n}")
    s.say("找到了。`visitTime` 是 `LocalDateTime`（北京时间），`toEpochSecond(ZoneOffset.UTC)` 把它当成 UTC 来换算时间戳，"
          "所以 RocketMQ 定时消息的投递时间整整晚了 8 小时：晚上 20:00 的夜诊，本该 18:00 推，实际凌晨 02:00 才推。"
          "改成按 Asia/Shanghai 换算。")
    s.edit(ROOT + "/notify-service/src/main/java/com/kangning/notify/remind/VisitRemindProducer.java",
           "                .toEpochSecond(ZoneOffset.UTC) * 1000;",
           "                .atZone(ZoneId.of(\"Asia/Shanghai\")).toInstant().toEpochMilli();")
    s.write(ROOT + "/notify-service/src/test/java/com/kangning/notify/remind/VisitRemindProducerTest.java",
            "class VisitRemindProducerTest {\n    @Test\n    void deliverTimeIsTwoHoursBeforeVisitInShanghai() {\n"
            "        // visit 2026-05-14 20:00 +08:00 -> deliver 18:00 +08:00 = 10:00Z\n"
            "        assertThat(capture(\"2026-05-14T20:00\")).isEqualTo(Instant.parse(\"2026-05-14T10:00:00Z\").toEpochMilli());\n    }\n}\n")
    s.bash("mvn -q -pl notify-service test -Dtest=VisitRemindProducerTest", "跑提醒的单测",
           "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.user("nice 👍 btw 订阅消息 fail 的时候要 fallback 到短信, user 没订阅或者 quota 用完都会 fail. 短信用阿里云还是腾讯云? 你觉得呢",
           dt_s=150)
    s.say("两家都能做：\n- 阿里云短信（dysmsapi）：Java SDK 成熟，模板变量写法跟我们现在的订阅消息模板差不多\n"
          "- 腾讯云短信：价格略低一点，但签名和模板要重新走审核\n\n"
          "技术上差别不大，主要看哪边已经有账号和审核过的签名，能省掉审核周期。")
    s.user("阿里云吧", dt_s=35)
    s.say("好，用阿里云短信。签名和模板 code 我放到 Nacos 的 `sms.aliyun.sign-name` / `sms.aliyun.template-code`，你那边签名是现成的吗？")
    s.user("是的, 我们 account 本来就在阿里云, 签名「康宁医疗」already approved 了, 腾讯云还得重新走一遍审核, 没必要", dt_s=20)
    s.write(ROOT + "/notify-service/src/main/java/com/kangning/notify/sms/AliyunSmsFallback.java",
            "@Component\n@RequiredArgsConstructor\npublic class AliyunSmsFallback implements RemindFallback {\n"
            "    private final com.aliyun.dysmsapi20170525.Client client;\n    @Value(\"${sms.aliyun.sign-name}\") private String signName;\n"
            "    @Value(\"${sms.aliyun.template-code}\") private String templateCode;\n\n    @Override\n"
            "    public void send(Appointment a) {\n        SendSmsRequest req = new SendSmsRequest()\n"
            "            .setPhoneNumbers(a.getMobile()).setSignName(signName).setTemplateCode(templateCode)\n"
            "            .setTemplateParam(JSONUtil.toJson(Map.of(\"time\", a.getVisitTimeText(), \"dept\", a.getDeptName())));\n"
            "        client.sendSms(req);\n    }\n}\n")
    s.user("对了 local 跑订阅消息需要小程序 secret, 放你 application-local.yml 里: wx.miniapp.appid=wx7a1c3e5f9b2d4086, "
           "wx.miniapp.secret=" + WX_SECRET + " , 别提交上去", dt_s=60)
    s.bash("printf 'wx:\\n  miniapp:\\n    appid: wx7a1c3e5f9b2d4086\\n    secret: " + WX_SECRET + "\\n' >> "
           "notify-service/src/main/resources/application-local.yml && git check-ignore -v "
           "notify-service/src/main/resources/application-local.yml", "写本地配置并确认被 gitignore",
           ".gitignore:14:**/application-local.yml\tnotify-service/src/main/resources/application-local.yml")
    s.say("已写入 application-local.yml，确认被 .gitignore 第 14 行忽略，不会被提交。")
    s.user("还有 from now on 所有 MQ consumer 都要做幂等, 用 bizId 当 key 在 redis 里记 24h, 之前 RocketMQ 重投搞出过重复短信, "
           "被投诉过一次. notify-service 现在是 Vivian (王薇) 在管, 模板要改先找她. 周五团建去千岛湖, you should come haha",
           dt_s=120)
    s.read(ROOT + "/notify-service/src/main/java/com/kangning/notify/remind/VisitRemindConsumer.java",
           "@RocketMQMessageListener(topic = \"TOPIC_VISIT_REMIND\", consumerGroup = \"GID_NOTIFY_REMIND\")\n"
           "public class VisitRemindConsumer implements RocketMQListener<MessageExt> {\n    public void onMessage(MessageExt m) {\n"
           "        Appointment a = JSONUtil.parse(m.getBody(), Appointment.class);\n        remindSender.send(a);\n    }\n}")
    s.edit(ROOT + "/notify-service/src/main/java/com/kangning/notify/remind/VisitRemindConsumer.java",
           "        remindSender.send(a);",
           "        if (!idempotent.firstSeen(\"remind:\" + a.getBizId(), Duration.ofHours(24))) {\n"
           "            log.info(\"dup remind skipped bizId={}\", a.getBizId());\n            return;\n        }\n"
           "        remindSender.send(a);")
    s.say("VisitRemindConsumer 加了幂等：`SET remind:{bizId} NX EX 86400`，重复投递直接跳过。团建我就不去了，玩得开心 🏞️\n\n"
          "小结：\n- 提醒晚 8 小时：`toEpochSecond(ZoneOffset.UTC)` 改为按 Asia/Shanghai 换算\n"
          "- 订阅消息失败 fallback 阿里云短信（AliyunSmsFallback）\n- consumer 按 bizId 幂等")
    s.stop_hook()
    s.title("就诊提醒时区修复 + 短信 fallback")

    gold = {
        "session": NAME, "project": CWD, "order": 2, "language": "mixed",
        "expected": [
            {"id": "m1", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "notify-service 就诊提醒提前量 remind.ahead-minutes=120（提前 2 小时推），配在 Nacos 的 notify-service.yaml。",
             "must": ["remind.ahead-minutes=120"]},
            {"id": "m2", "layer": "experience", "kind": "root_cause", "lang": "zh",
             "text": "就诊提醒晚 8 小时：VisitRemindProducer 用 toEpochSecond(ZoneOffset.UTC) 把北京时间的 LocalDateTime 当 UTC 换算投递时间；"
                     "容器/JVM 时区（Asia/Shanghai）已排除。改为 atZone(Asia/Shanghai) 换算。",
             "must": ["ZoneOffset.UTC"]},
            {"id": "m3", "layer": "decision", "kind": "decision", "lang": "zh",
             "text": "订阅消息发送失败（未订阅或 quota 用完）时 fallback 到阿里云短信，而不是腾讯云短信：账号本来就在阿里云，"
                     "签名「康宁医疗」已审核通过，腾讯云要重新审核。",
             "must": ["阿里云"], "chosen": "阿里云", "over": ["腾讯云"], "why": ["签名"]},
            {"id": "m4", "layer": "fact", "kind": "convention", "lang": "zh",
             "text": "以后所有 MQ consumer 都要幂等：用 bizId 当 key 在 Redis 记 24h（RocketMQ 重投曾导致重复短信）。",
             "must": ["幂等", "bizId"]},
            {"id": "m5", "layer": "fact", "kind": "preference", "lang": "zh",
             "text": "notify-service 现在由 Vivian（王薇）负责，改消息模板先找她。",
             "must": ["Vivian", "王薇"]},
            {"id": "m6", "layer": "fact", "kind": "config", "lang": "zh",
             "text": "就诊提醒用 RocketMQ 定时消息，topic TOPIC_VISIT_REMIND，consumer group GID_NOTIFY_REMIND。",
             "must": ["TOPIC_VISIT_REMIND"]},
        ],
        "acceptable": [
            {"must": ["application-local.yml"], "note": "本地 secret 放 application-local.yml（已 gitignore）"},
            {"must": ["AliyunSmsFallback"], "note": "fallback 实现类名"},
        ],
        "forbidden": ["一律用 MaskUtil 脱敏，不要直接打印 patient 对象", "负责人是老唐", "千岛湖", "10:12:41 CST",
                      "Tests run: 1, Failures: 0"],
        "secrets": [WX_SECRET],
    }
    return s, gold
