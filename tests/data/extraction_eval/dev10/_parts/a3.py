"""a3 — lenglian-tms, session 3: 换腾讯云短信；owner 交接；TTL、端口变更."""
from lib import Session, item, gold, recall_block

NAME = "a3_lenglian_sms_switch"
CWD = "/home/dev/work/lenglian-tms"
A1 = "a1_lenglian_alarm_dedup"


def build():
    s = Session(NAME, CWD, "2026-04-28T06:40:00.000Z", "feat/tencent-sms")
    s.snapshot()
    s.user("有几件事先同步一下：刘建国调去做 WMS 了，alarm-center 以后归小鱼管，有事直接找余晓。", gap=0)
    s.hook(recall_block([
        '- #9 fact · 21 天前: "alarm-center 由大刘（刘建国）负责"',
        '- #5 fact · 21 天前: "告警去重 key 的 TTL 是 10 分钟"',
    ], zh=True), event="UserPromptSubmit")
    s.say("收到，以后 alarm-center 的 review 和告警问题找小鱼。")
    s.user("今天主要是换短信通道。阿里云短信那边模板审核卡了两周还没过，领导拍板改用腾讯云短信，签名“冷链通”已经申请下来了。")
    s.mcp_search("告警 短信 通道", [
        {"id": 11, "layer": "decision", "content": "告警短信走阿里云短信，不接企业微信：司机手机上基本没装企业微信", "score": 0.84}])
    s.bash("grep -rn 'dysmsapi\\|SmsSender' --include=*.java alarm-center/src/main",
           "alarm-center/src/main/java/com/lenglian/alarm/sms/SmsSender.java:3:public interface SmsSender {\n"
           "alarm-center/src/main/java/com/lenglian/alarm/sms/AliyunSmsSender.java:5:import com.aliyun.dysmsapi20170525.Client;\n"
           "alarm-center/src/main/java/com/lenglian/alarm/sms/AliyunSmsSender.java:14:public class AliyunSmsSender implements SmsSender {",
           "找现有短信实现")
    s.say("现在是 AliyunSmsSender 直接调 dysmsapi。我加一个 TencentSmsSender 实现同一个 SmsSender 接口，用 tencentcloud-sdk-java-sms，"
          "通过 sms.provider=tencent 切换。测试用的 SecretId/SecretKey 能给一下吗？")
    s.user("先用这个测：SecretId AKIDq7Ln2RkW9xTbM4vPz8sYc3JfH6uE1aQd ，SecretKey pX4mN8vR2tK6wZ9bL3cF7hJ1qS5dG0yA 。"
           "正式环境的密钥走 Nacos 配置 sms.tencent.*，别写死在代码里，也别进 git。")
    s.write(CWD + "/alarm-center/src/main/java/com/lenglian/alarm/sms/TencentSmsSender.java",
            "package com.lenglian.alarm.sms;\n\n@Component\n@ConditionalOnProperty(name = \"sms.provider\", havingValue = \"tencent\")\n"
            "public class TencentSmsSender implements SmsSender {\n    private final SmsClient client;\n    private final TencentSmsProperties props; // sms.tencent.*\n\n"
            "    @Override\n    public void send(String phone, String templateId, String... params) {\n"
            "        SendSmsRequest req = new SendSmsRequest();\n        req.setSmsSdkAppId(props.getSdkAppId());\n"
            "        req.setSignName(props.getSignName());\n        req.setTemplateId(templateId);\n"
            "        req.setPhoneNumberSet(new String[]{phone});\n        req.setTemplateParamSet(params);\n"
            "        client.SendSms(req);\n    }\n}\n")
    s.bash("SMS_TENCENT_SECRET_ID=AKIDq7Ln2RkW9xTbM4vPz8sYc3JfH6uE1aQd SMS_TENCENT_SECRET_KEY=pX4mN8vR2tK6wZ9bL3cF7hJ1qS5dG0yA "
           "./mvnw -q -pl alarm-center -am verify -Dit.test=TencentSmsSenderIT",
           "[ERROR] TencentSmsSenderIT.sendsAlarmToDriver:38 » TencentCloudSDK [TencentCloudSDKException]"
           "message:InvalidParameterValue.IncorrectPhoneNumber 手机号格式错误 requestId:5c1e2a7d-93f4-4c0a-b7f2-0d6e1a88c4b3\n"
           "[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0\n[INFO] BUILD FAILURE",
           "跑腾讯云短信集成测试", is_error=True, run=37)
    s.say("注意一个坑：腾讯云短信的 PhoneNumberSet 要求 E.164 格式，国内号码必须带 +86 前缀；阿里云那边直接传 11 位手机号就行，"
          "所以原样传过去就报 InvalidParameterValue.IncorrectPhoneNumber。我在 TencentSmsSender 里统一补 +86。")
    s.edit(CWD + "/alarm-center/src/main/java/com/lenglian/alarm/sms/TencentSmsSender.java",
           "req.setPhoneNumberSet(new String[]{phone});",
           "req.setPhoneNumberSet(new String[]{phone.startsWith(\"+\") ? phone : \"+86\" + phone});")
    s.bash("SMS_TENCENT_SECRET_ID=AKIDq7Ln2RkW9xTbM4vPz8sYc3JfH6uE1aQd SMS_TENCENT_SECRET_KEY=pX4mN8vR2tK6wZ9bL3cF7hJ1qS5dG0yA "
           "./mvnw -q -pl alarm-center -am verify -Dit.test=TencentSmsSenderIT",
           "[INFO] Tests run: 1, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 2.41 s - in com.lenglian.alarm.sms.TencentSmsSenderIT\n[INFO] BUILD SUCCESS",
           "重跑", run=35)
    s.say("测试短信已发到你手机了，签名显示“冷链通”。")
    s.user("收到了。还有两个配置改一下：去重 TTL 改成 30 分钟，上周有台车进隧道断网 20 多分钟，补传回来又刷了一轮。"
           "另外 temp-ingest 现在是 9085 端口了，原来那个端口让给 node-exporter 了，部署文件里的 probe 也要跟着改。")
    s.edit(CWD + "/alarm-center/src/main/resources/application.yml", "    ttl-seconds: 600", "    ttl-seconds: 1800")
    s.bash("sed -i 's/8085/9085/g' deploy/temp-ingest/deployment.yaml temp-ingest/src/main/resources/application.yml && "
           "git diff deploy/temp-ingest/deployment.yaml",
           "diff --git a/deploy/temp-ingest/deployment.yaml b/deploy/temp-ingest/deployment.yaml\n"
           "index 3b1e0c2..a94f7d1 100644\n--- a/deploy/temp-ingest/deployment.yaml\n+++ b/deploy/temp-ingest/deployment.yaml\n"
           "@@ -31,15 +31,15 @@ spec:\n           ports:\n-            - containerPort: 8085\n+            - containerPort: 9085\n"
           "           readinessProbe:\n             httpGet:\n               path: /actuator/health/readiness\n-              port: 8085\n+              port: 9085\n"
           "           livenessProbe:\n             httpGet:\n               path: /actuator/health/liveness\n-              port: 8085\n+              port: 9085",
           "改 temp-ingest 端口并看 diff")
    s.say("都改了：alarm.dedup.ttl-seconds=1800；temp-ingest 的 server.port、containerPort、readinessProbe、livenessProbe 都是 9085。")
    s.user("行。oncall 交接以后固定每周一上午 10 点，在飞书群里过一遍上周的告警。今天就这样，辛苦。")
    s.say("好的，交接时间记下了。今天的改动都在 feat/tencent-sms 分支，PR 等小鱼 review。")
    s.title("告警短信切换到腾讯云")

    g = gold(NAME, CWD, 3, "zh", [
        item("e1", "fact", "preference", "zh", "alarm-center 现在由小鱼（余晓）负责，刘建国调去做 WMS 了。", ["小鱼", "余晓"],
             supersedes=A1 + "#e10"),
        item("e2", "decision", "decision", "zh",
             "告警短信改用腾讯云短信（签名“冷链通”），不再用阿里云短信：阿里云模板审核卡了两周没过。",
             ["腾讯云短信"], chosen="腾讯云短信", over=["阿里云短信"], why=["模板审核"], supersedes=A1 + "#e9"),
        item("e3", "fact", "convention", "zh", "正式环境短信密钥走 Nacos 配置 sms.tencent.*，不写死在代码里、不进 git。",
             ["Nacos", "sms.tencent"]),
        item("e4", "experience", "gotcha", "zh",
             "腾讯云短信 PhoneNumberSet 要 E.164 格式，国内号码必须带 +86，直接传 11 位会报 InvalidParameterValue.IncorrectPhoneNumber。",
             ["+86", "IncorrectPhoneNumber"]),
        item("e5", "fact", "config", "zh", "告警去重 TTL 改为 30 分钟（隧道断网补传可长达 20 多分钟）。", ["30 分钟"],
             supersedes=A1 + "#e5"),
        item("e6", "fact", "config", "zh", "temp-ingest 的端口现在是 9085（部署文件的 probe 同步改了）。", ["temp-ingest", "9085"],
             supersedes=A1 + "#e1"),
        item("e7", "fact", "convention", "zh", "oncall 交接固定每周一上午 10 点，在飞书群里过一遍上周告警。", ["每周一", "10 点"]),
    ], [
        {"note": "短信实现通过 sms.provider=tencent 切换（TencentSmsSender 实现 SmsSender 接口）", "must": ["sms.provider"]},
    ], [
        "由大刘（刘建国）负责",
        "TTL 是 10 分钟",
        "告警短信走阿里云短信",
        "TencentCloudSDKException",
        "@@ -31,15 +31,15 @@",
        "测试短信已发到你手机了",
        "今天就这样",
    ], ["AKIDq7Ln2RkW9xTbM4vPz8sYc3JfH6uE1aQd", "pX4mN8vR2tK6wZ9bL3cF7hJ1qS5dG0yA"])
    return s, g
