from cc import Session
from common import A, E, gold

CWD = "/home/dev/work/push-gateway"
PKG = "src/main/java/com/acme/push"
P8_LINE = "k7mYbT3pZrWf9hQeVu6aJo4iC+GgCgYIKoZIzj0DAQehRANCAAT0xq1mJ3nQ8Vb2"
P8 = ("-----BEGIN PRIVATE KEY-----\nMIGTAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBHkwdwIBAQQgR2w8vJqN5cX1sLd0\n"
      f"{P8_LINE}\nWc5rTy7LdK9eZfH4uP0sG6aN1jXo3Rb8tMv2QkCe7YhLw5pD9nUa4FsE1iZqGoXr\nK3Hm6TbV\n-----END PRIVATE KEY-----")
SA_KEY_ID = "3b1f0d2c9e8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e"
SA_KEY_FRAG = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC9xQm4Tz1Hq8Lw"
HMS_SECRET = "7d3e9f1a2b4c6d8e0f1a3b5c7d9e1f2a"
REDIS_PW = "R3d!sPr0d#2026"

GRADLE_OK = """> Task :compileJava
> Task :processResources
> Task :classes
> Task :compileTestJava
> Task :test

BUILD SUCCESSFUL in {t}
7 actionable tasks: 5 executed, 2 up-to-date"""


# ---------------------------------------------------------------- s1
def s1():
    name = "p5s1_push_gateway_apns_token"
    s = Session(name, CWD, "2026-09-16T01:12:09.000Z", version="2.1.305", branch="fix/apns-expired-token",
                title="APNs ExpiredProviderToken, move to pushy")
    s.snapshot()
    s.user("iOS 推送从昨晚开始全部失败，APNs 返回 403 ExpiredProviderToken。我们用的是 token-based auth (.p8)。帮我看看 ApnsTokenProvider")
    s.grep("class ApnsTokenProvider", f"{PKG}/apns/ApnsTokenProvider.java:18:public class ApnsTokenProvider {{")
    s.read(f"{CWD}/{PKG}/apns/ApnsTokenProvider.java", """@Component
@RequiredArgsConstructor
public class ApnsTokenProvider {
    private final ApnsProperties props;
    private String token;

    @PostConstruct
    void init() throws Exception {
        PrivateKey key = Pem.loadEcPrivateKey(props.getSigningKeyPath());
        this.token = Jwts.builder()
                .header().keyId(props.getKeyId()).and()
                .issuer(props.getTeamId())
                .issuedAt(new Date())
                .signWith(key, Jwts.SIG.ES256)
                .compact();
    }

    public String bearer() {
        return "bearer " + token;
    }
}
""", start=16, total=37)
    s.bash("kubectl -n push get pods -l app=push-gateway", """NAME                            READY   STATUS    RESTARTS   AGE
push-gateway-7c9d8f6b5d-2xkqp   1/1     Running   0          26h
push-gateway-7c9d8f6b5d-9wz4m   1/1     Running   0          26h
push-gateway-7c9d8f6b5d-xk2lp   1/1     Running   0          26h""", desc="Pod ages")
    s.say("JWT 只在 `@PostConstruct` 里签了一次，之后一直复用。APNs 对 provider token 有两条规则：\n- token 的 `iat` 超过 1 小时就会被拒（403 `ExpiredProviderToken`）；\n- 刷新也不能太勤，20 分钟内换 token 会被拒（429 `TooManyProviderTokenUpdates`）。\n\n所以正确做法是每 20–60 分钟之间刷新一次。现在 pod 已经跑了 26h，token 早就过期了。之前没暴露，应该是 pod 很少连续跑超过 1 小时？")
    s.user("对，这周 release freeze，平时每天发好几次版，pod 活不过一小时。所以一直没暴露")
    s.say("那有两个修法：\n1. 在现有的 provider 里加定时刷新（比如每 50 分钟重签）；\n2. 换成 pushy（`com.eatthepath:pushy`），它自己管 token 刷新、HTTP/2 连接池和流控，我们自己的 OkHttp client 可以整个删掉。")
    s.user("我们自己写的 OkHttp HTTP/2 client 问题一堆，连接数也不好控。用 pushy 吧，it handles the token refresh itself right?")
    s.say("对，`ApnsClient` 用 `ApnsSigningKey` 构建时会自动按规则刷新 token，连接数用 `setConcurrentConnections` 控制。")
    s.edit(f"{CWD}/build.gradle.kts", """    implementation("com.squareup.okhttp3:okhttp:4.12.0")""", """    implementation("com.eatthepath:pushy:0.15.4")""", at_line=31)
    s.write(f"{CWD}/{PKG}/apns/ApnsClientConfig.java", """package com.acme.push.apns;

import com.eatthepath.pushy.apns.ApnsClient;
import com.eatthepath.pushy.apns.ApnsClientBuilder;
import com.eatthepath.pushy.apns.auth.ApnsSigningKey;
import java.io.File;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration
public class ApnsClientConfig {

    // pushy refreshes the provider token on its own (APNs: older than 60 min is rejected, < 20 min is throttled)
    @Bean(destroyMethod = "close")
    ApnsClient apnsClient(ApnsProperties props) throws Exception {
        return new ApnsClientBuilder()
                .setApnsServer(props.getHost())
                .setSigningKey(ApnsSigningKey.loadFromPkcs8File(
                        new File(props.getSigningKeyPath()), props.getTeamId(), props.getKeyId()))
                .setConcurrentConnections(props.getConnections())
                .build();
    }
}
""")
    s.user(f"""本地测试用这个 key（别提交！）：
{P8}
teamId 9QX4B2LK7M，keyId 6T2P8WQ3NZ""")
    s.write("/home/dev/.config/push-gateway/apns-dev.p8", P8 + "\n")
    s.say("key 放在了仓库外的 `~/.config/push-gateway/apns-dev.p8`。配置里 `apns.signing-key-path` 读环境变量 `APNS_KEY_PATH`，teamId/keyId 放 yml。")
    s.user("debug 包要走 sandbox：api.sandbox.push.apple.com，生产包走 api.push.apple.com。按 profile 区分，local 和 staging 走 sandbox，prod 走生产")
    s.edit(f"{CWD}/src/main/resources/application.yml", """apns:
  team-id: ${APNS_TEAM_ID}""", """apns:
  host: api.push.apple.com          # overridden to sandbox in local/staging
  team-id: 9QX4B2LK7M
  key-id: 6T2P8WQ3NZ
  signing-key-path: ${APNS_KEY_PATH}
  connections: 4""", at_line=12)
    s.edit(f"{CWD}/src/main/resources/application-staging.yml", "spring:\n", "apns:\n  host: api.sandbox.push.apple.com\nspring:\n", at_line=1)
    s.edit(f"{CWD}/src/main/resources/application-local.yml", "spring:\n", "apns:\n  host: api.sandbox.push.apple.com\nspring:\n", at_line=1)
    s.bash("./gradlew test", """> Task :compileJava
> Task :processResources
> Task :classes
> Task :compileTestJava
> Task :test FAILED

ApnsClientConfigTest > createsClient() FAILED
    java.nio.file.NoSuchFileException at ApnsClientConfigTest.java:21

12 tests completed, 1 failed

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':test'.
> There were failing tests. See the report at: file:///home/dev/work/push-gateway/build/reports/tests/test/index.html

* Try:
> Run with --scan to get full insights.

BUILD FAILED in 41s
7 actionable tasks: 5 executed, 2 up-to-date""", code=1, desc="Run tests", gap=(35, 50))
    s.say("测试里写死了 `/etc/push-gateway/apns.p8`。我生成一个仅供测试用的 EC key 放到 `src/test/resources/apns-test.p8`，测试从 classpath 读。")
    s.bash("openssl ecparam -name prime256v1 -genkey -noout | openssl pkcs8 -topk8 -nocrypt -out src/test/resources/apns-test.p8 && sed -i 's#/etc/push-gateway/apns.p8#src/test/resources/apns-test.p8#' src/test/java/com/acme/push/apns/ApnsClientConfigTest.java && ./gradlew test",
           GRADLE_OK.format(t="48s"), desc="Generate test key and rerun", gap=(40, 55))
    s.tool("Bash", {"command": "APNS_KEY_PATH=$HOME/.config/push-gateway/apns-dev.p8 ./gradlew bootRun --args='--spring.profiles.active=local'", "description": "Run locally", "run_in_background": True},
           "Command running in background with ID: bash_2",
           tur={"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": "bash_2"})
    s.bash("sleep 20; curl -s localhost:8080/internal/push/test -H 'content-type: application/json' -d '{\"platform\":\"ios\",\"deviceToken\":\"5d0c1a7e9f2b4c6d8e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d\",\"title\":\"ping\"}'",
           "{\"status\":\"SENT\",\"apnsId\":\"8F1C2B7A-3D4E-4F5A-9B6C-7D8E9FA0B1C2\",\"host\":\"api.sandbox.push.apple.com\"}", desc="Send a test push", gap=(20, 25))
    s.user("好了！顺便记一下 Redis key 规范：统一 `pg:` 前缀，比如 `pg:token:{deviceId}`、`pg:rate:{appId}`，别再出现没前缀的 key 了")
    s.say("记住了：Redis key 一律 `pg:` 前缀。")
    s.user("thanks，先这样")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 1, "mixed", [
        E("e1", "experience", "root_cause", "zh", "iOS 推送 403 ExpiredProviderToken：ApnsTokenProvider 只在 @PostConstruct 里签一次 JWT，APNs provider token 超过 1 小时即失效；平时每天多次发版 pod 活不过 1 小时所以没暴露，release freeze 时才出问题。", ["ExpiredProviderToken"]),
        E("e2", "fact", "gotcha", "zh", "APNs provider token 要在 20–60 分钟之间刷新：超过 60 分钟 403 ExpiredProviderToken，20 分钟内重复换 token 会 429 TooManyProviderTokenUpdates。", ["TooManyProviderTokenUpdates"]),
        E("e3", "decision", "decision", "zh", "APNs 发送改用 pushy（com.eatthepath:pushy 0.15.4），删掉自写的 OkHttp HTTP/2 client：pushy 自己管 token 刷新和 HTTP/2 连接池，自写的连接数不好控。", ["pushy"], chosen="pushy", over=["OkHttp"], why=["连接"]),
        E("e4", "fact", "config", "en", "APNs host per profile: local and staging use api.sandbox.push.apple.com, prod uses api.push.apple.com.", ["api.sandbox.push.apple.com"]),
        E("e5", "fact", "config", "en", "APNs teamId 9QX4B2LK7M, keyId 6T2P8WQ3NZ; the .p8 signing key path comes from env APNS_KEY_PATH and the key is never committed.", ["APNS_KEY_PATH"]),
        E("e6", "fact", "command", "en", "Run tests with `./gradlew test`.", ["./gradlew test"]),
        E("e7", "fact", "command", "en", "Run locally with `APNS_KEY_PATH=... ./gradlew bootRun --args='--spring.profiles.active=local'`.", ["spring.profiles.active=local"]),
        E("e8", "fact", "convention", "zh", "Redis key 统一 `pg:` 前缀，例如 `pg:token:{deviceId}`、`pg:rate:{appId}`。", ["pg:token"]),
    ], [
        A(["apns-test.p8"], "tests use a generated EC key from src/test/resources"),
        A(["/internal/push/test"], "local test push endpoint"),
    ], ["BUILD SUCCESSFUL in 48s", "26h", "8F1C2B7A", "thanks，先这样"], [P8, P8_LINE])
    return s, g


# ---------------------------------------------------------------- s2
R_P5S2 = [(41, "decision", "9 days ago", "APNs 发送改用 pushy，删掉自写的 OkHttp HTTP/2 client。"),
          (44, "fact", "9 days ago", "Redis key 统一 pg: 前缀，例如 pg:token:{deviceId}。"),
          (43, "fact", "9 days ago", "Run tests with ./gradlew test.")]


def s2():
    name = "p5s2_push_gateway_fcm_v1"
    s = Session(name, CWD, "2026-09-25T02:03:44.000Z", version="2.1.309", branch="feat/fcm-http-v1",
                title="FCM legacy API 下线，迁移到 HTTP v1")
    s.snapshot()
    s.user("Google 发邮件说 FCM legacy HTTP API 已经停了，我们 Android 推送这两天成功率掉到 0。迁到 HTTP v1")
    s.recall_attachment(R_P5S2)
    s.grep("fcm.googleapis.com", f"{PKG}/fcm/FcmSender.java:22:    private static final String URL = \"https://fcm.googleapis.com/fcm/send\";", path="src")
    s.read(f"{CWD}/{PKG}/fcm/FcmSender.java", """    private static final String URL = "https://fcm.googleapis.com/fcm/send";

    public SendResult send(List<String> tokens, PushMessage msg) {
        Map<String, Object> body = Map.of(
                "registration_ids", tokens,
                "notification", Map.of("title", msg.title(), "body", msg.body()),
                "data", msg.data());
        return http.post(URL, body, Map.of("Authorization", "key=" + props.getServerKey()));
    }
""", start=22, total=58)
    s.say("现在用的是 legacy 接口：`/fcm/send` + server key，一次 `registration_ids` 最多 1000 个。HTTP v1 的区别：\n- 认证改为 OAuth2 access token（service account，scope `https://www.googleapis.com/auth/firebase.messaging`）；\n- 地址 `https://fcm.googleapis.com/v1/projects/{projectId}/messages:send`；\n- 一次只能发一个 token，没有批量。\n\n拿 token 有两条路：引入 firebase-admin SDK，或者只用 google-auth-library 取 token、自己调 REST。")
    s.bash("./gradlew dependencies --configuration runtimeClasspath | grep -E 'grpc|armeria' | sort -u | head -5", """+--- com.linecorp.armeria:armeria:1.30.1
|    +--- io.grpc:grpc-core:1.65.1
|    +--- io.grpc:grpc-netty-shaded:1.65.1
|    +--- io.grpc:grpc-protobuf:1.65.1""", desc="Check grpc versions on classpath", gap=(8, 15))
    s.user("firebase-admin 太重了，还会拖一套 grpc 进来，和 armeria 的 grpc 版本打架。就 REST + google-auth-library，自己拿 token")
    s.edit(f"{CWD}/build.gradle.kts", """    implementation("com.eatthepath:pushy:0.15.4")""", """    implementation("com.eatthepath:pushy:0.15.4")
    implementation("com.google.auth:google-auth-library-oauth2-http:1.24.1")""", at_line=31)
    s.write(f"{CWD}/{PKG}/fcm/FcmV1Sender.java", """package com.acme.push.fcm;

@Component
@RequiredArgsConstructor
public class FcmV1Sender {
    private static final String SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
    private final FcmProperties props;
    private final HttpClient http;
    private GoogleCredentials credentials;

    @PostConstruct
    void init() throws IOException {
        try (var in = Files.newInputStream(Path.of(props.getServiceAccountPath()))) {
            credentials = GoogleCredentials.fromStream(in).createScoped(SCOPE);
        }
    }

    public SendResult send(String token, PushMessage msg) throws IOException {
        credentials.refreshIfExpired();
        var body = Map.of("message", Map.of(
                "token", token,
                "notification", Map.of("title", msg.title(), "body", msg.body()),
                "data", msg.data()));
        return http.post("https://fcm.googleapis.com/v1/projects/" + props.getProjectId() + "/messages:send", body,
                Map.of("Authorization", "Bearer " + credentials.getAccessToken().getTokenValue()));
    }
}
""")
    s.user("service account 在 vault 里，路径 secret/push-gateway/fcm-sa。本地我放在 ~/.config/push-gateway/fcm-sa.json 了，你看下格式对不对")
    s.bash("head -c 260 ~/.config/push-gateway/fcm-sa.json", f"""{{
  "type": "service_account",
  "project_id": "acme-push-dev",
  "private_key_id": "{SA_KEY_ID}",
  "private_key": "-----BEGIN PRIVATE KEY-----\\n{SA_KEY_FRAG}""", desc="Peek at the service account file")
    s.say("格式没问题，project_id 是 `acme-push-dev`。配置里 `fcm.service-account-path` 读环境变量 `FCM_SA_PATH`。起个本地服务实际发一条试试。")
    s.bash("FCM_SA_PATH=$HOME/.config/push-gateway/fcm-sa.json ./gradlew bootRun --args='--spring.profiles.active=local'", """> Task :bootRun

  .   ____          _            __ _ _
 /\\\\ / ___'_ __ _ _(_)_ __  __ _ \\ \\ \\ \\
( ( )\\___ | '_ | '_| | '_ \\/ _` | \\ \\ \\ \\
 \\\\/  ___)| |_)| | | | | || (_| |  ) ) ) )
  '  |____| .__|_| |_|_| |_\\__, | / / / /
 =========|_|==============|___/=/_/_/_/

 :: Spring Boot ::                (v3.3.4)

2026-09-25T10:14:03.221+08:00  INFO 51234 --- [push-gateway] [           main] c.acme.push.PushGatewayApplication       : The following 1 profile is active: "local"
2026-09-25T10:14:04.877+08:00 ERROR 51234 --- [push-gateway] [           main] o.s.b.d.LoggingFailureAnalysisReporter   :

***************************
APPLICATION FAILED TO START
***************************

Description:

Binding to target com.acme.push.apns.ApnsProperties failed:

    Property: apns.signing-key-path
    Value: "null"
    Reason: must not be null

Action:

Update your application's configuration

> Task :bootRun FAILED""", code=1, desc="Run locally", gap=(15, 25))
    s.user("local profile 上周删了，合并进 dev 了。现在本地一律 `--spring.profiles.active=dev`，APNS_KEY_PATH 和 FCM_SA_PATH 都要 export")
    s.tool("Bash", {"command": "export APNS_KEY_PATH=$HOME/.config/push-gateway/apns-dev.p8 FCM_SA_PATH=$HOME/.config/push-gateway/fcm-sa.json && ./gradlew bootRun --args='--spring.profiles.active=dev'", "description": "Run locally with dev profile", "run_in_background": True},
           "Command running in background with ID: bash_1",
           tur={"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": "bash_1"})
    s.bash("sleep 20; curl -s localhost:8080/internal/push/test -H 'content-type: application/json' -d '{\"platform\":\"android\",\"deviceToken\":\"fQ3k:APA91bH7x\",\"title\":\"ping\",\"data\":{\"orderId\":\"A1\",\"badge\":3}}'",
           """{"status":"FAILED","upstream":{"error":{"code":400,"message":"Invalid value at 'message.data[1].value' (TYPE_STRING), 3","status":"INVALID_ARGUMENT"}}}""", desc="Send an android test push", gap=(20, 25))
    s.say("HTTP v1 的 `data` 是 `map<string, string>`，所有 value 都必须是字符串；legacy 接口对数字是宽容的。这里 `badge: 3` 是个 int，被拒了。在 sender 里统一转成字符串。")
    s.edit(f"{CWD}/{PKG}/fcm/FcmV1Sender.java", """                "data", msg.data()));""", """                // v1: data is map<string,string>; non-string values -> 400 INVALID_ARGUMENT
                "data", msg.data().entrySet().stream()
                        .collect(Collectors.toMap(Map.Entry::getKey, e -> String.valueOf(e.getValue())))));""", at_line=23)
    s.bash("sleep 25; curl -s localhost:8080/internal/push/test -H 'content-type: application/json' -d '{\"platform\":\"android\",\"deviceToken\":\"fQ3k:APA91bH7x\",\"title\":\"ping\",\"data\":{\"orderId\":\"A1\",\"badge\":3}}'",
           """{"status":"SENT","fcmName":"projects/acme-push-dev/messages/0:1758766512345678%31bd1c9631bd1c96"}""", desc="Retry after devtools restart", gap=(25, 30))
    s.user("批量怎么办？之前一次最多 1000 个 token")
    s.say("v1 没有批量接口（legacy 的 `registration_ids` 和 batch endpoint 都废弃了），只能每个 token 一个请求，靠并发把吞吐拉起来。HTTP/2 下同一个连接可以多路复用，关键是控制并发上限别把 FCM 配额打爆。")
    s.user("并发先定 200，放配置 fcm.max-concurrency")
    s.edit(f"{CWD}/src/main/resources/application.yml", "fcm:\n", "fcm:\n  max-concurrency: 200\n  service-account-path: ${FCM_SA_PATH}\n", at_line=20)
    s.bash("./gradlew test", GRADLE_OK.format(t="52s"), desc="Run tests", gap=(45, 60))
    s.stop_hook()
    g = gold(name, CWD, 2, "zh", [
        E("e1", "experience", "root_cause", "zh", "Android 推送成功率掉到 0：FCM legacy HTTP API（/fcm/send + server key）已停用，需要迁到 HTTP v1（OAuth2 service account，/v1/projects/{projectId}/messages:send）。", ["legacy"]),
        E("e2", "decision", "decision", "zh", "FCM v1 用 REST + google-auth-library 自己取 access token，不引入 firebase-admin SDK：太重，且会带进一套 grpc，和 armeria 的 grpc 版本冲突。", ["google-auth-library"], chosen="google-auth-library", over=["firebase-admin"], why=["grpc"]),
        E("e3", "fact", "gotcha", "zh", "FCM v1 的 data 是 map<string,string>，所有 value 必须是字符串，否则 400 INVALID_ARGUMENT（legacy 接口对数字宽容）。", ["INVALID_ARGUMENT"]),
        E("e4", "fact", "config", "zh", "FCM v1 没有批量发送，只能每个 token 单独请求靠并发；并发上限配置 fcm.max-concurrency=200。", ["fcm.max-concurrency"]),
        E("e5", "fact", "config", "zh", "FCM service account 存在 Vault 的 secret/push-gateway/fcm-sa；本地放 ~/.config/push-gateway/fcm-sa.json，通过环境变量 FCM_SA_PATH 指定。", ["FCM_SA_PATH"]),
        E("e6", "fact", "command", "zh", "本地启动用 `./gradlew bootRun --args='--spring.profiles.active=dev'`（local profile 已合并进 dev），需先 export APNS_KEY_PATH 和 FCM_SA_PATH。", ["spring.profiles.active=dev"], supersedes="p5s1_push_gateway_apns_token#e7"),
    ], [
        A(["acme-push-dev"], "dev firebase project id"),
        A(["firebase.messaging"], "oauth scope"),
        A(["armeria"], "armeria brings grpc 1.65"),
    ], ["BUILD SUCCESSFUL in 52s", "0:1758766512345678", "fQ3k:APA91bH7x", R_P5S2[0][3], R_P5S2[1][3], R_P5S2[2][3]], [SA_KEY_ID, SA_KEY_FRAG])
    return s, g


# ---------------------------------------------------------------- s3
R_P5S3 = [
    {"id": 44, "layer": "fact", "content": "Redis key 统一 pg: 前缀，例如 pg:token:{deviceId}、pg:rate:{appId}。"},
    {"id": 52, "layer": "fact", "content": "FCM v1 的 data value 必须是字符串，否则 400 INVALID_ARGUMENT。"},
    {"id": 19, "layer": "fact", "content": "Android device registrations are stored in MySQL table device_registration."},
]


def s3():
    name = "p5s3_push_gateway_vendor_channels"
    s = Session(name, CWD, "2026-10-07T06:40:12.000Z", version="2.1.314", branch="feat/vendor-channels",
                title="国内厂商推送通道方案与 HMS 接入")
    s.snapshot()
    s.user("Product wants 国内 Android 厂商通道 (Huawei, Xiaomi, OPPO, vivo), FCM basically doesn't reach mainland devices. 先聊方案：要不要直接接个推 (Getui) / 极光 (JPush) 这种聚合平台？")
    s.maple_search("push-gateway android channel routing redis key", R_P5S3)
    s.say("两种路子：\n- **聚合平台（个推/极光）**：一个 SDK + 一个服务端 API 覆盖所有厂商，接入最快。代价：device token 和推送内容都经过第三方；按量收费；需要签数据处理协议。\n- **直接对接厂商**：Huawei Push Kit、小米 MiPush、OPPO、vivo 各一套 API 和鉴权，工作量大概 4 倍，但数据只在我们和厂商之间。\n\n纯技术上聚合更省事，主要看合规能不能接受。")
    s.user("Legal already said no to routing payloads through a third-party aggregator — 数据合规过不了。So we integrate the vendors directly. 先做 Huawei 和 Xiaomi，OPPO/vivo 下个季度")
    s.say("OK，直接对接厂商，先 Huawei 和 Xiaomi。路由规则你们定了吗？")
    s.user("routing 按设备注册时上报的 manufacturer 字段走：HUAWEI/HONOR → hms，Xiaomi/Redmi → mipush，其他 fallback 到 FCM")
    s.read(f"{CWD}/{PKG}/device/DeviceRegistration.java", """public record DeviceRegistration(
        String deviceId,
        String appId,
        Platform platform,
        String pushToken,
        String manufacturer,   // android.os.Build.MANUFACTURER as sent by the SDK, e.g. "HUAWEI", "Xiaomi", "HONOR"
        Instant registeredAt) {
}
""", start=5, total=13)
    s.say("`manufacturer` 是客户端原样上报的 `Build.MANUFACTURER`，大小写不统一（\"Xiaomi\"、\"HUAWEI\"、\"HONOR\"），路由前要先转大写。\n\n另外提醒一下 HONOR：2020 年从华为拆出去之后，较新的荣耀机型（Magic UI 6 以后）不再预装 HMS Core，走的是荣耀自己的推送服务，按 HMS 发会有一部分失败。")
    s.user("HONOR 先归 hms，失败率高了再单独接荣耀")
    s.write(f"{CWD}/{PKG}/channel/ChannelRouter.java", """package com.acme.push.channel;

@Component
public class ChannelRouter {

    /** Route by the manufacturer reported at registration. HONOR goes to HMS for now (newer HONOR models lack HMS). */
    public Channel route(DeviceRegistration reg) {
        if (reg.platform() != Platform.ANDROID) {
            return Channel.APNS;
        }
        String m = reg.manufacturer() == null ? "" : reg.manufacturer().trim().toUpperCase(Locale.ROOT);
        return switch (m) {
            case "HUAWEI", "HONOR" -> Channel.HMS;
            case "XIAOMI", "REDMI" -> Channel.MIPUSH;
            default -> Channel.FCM;
        };
    }
}
""")
    s.user(f"HMS credentials: app id 108234567, app secret {HMS_SECRET}. put it in Vault under secret/push-gateway/hms, not in yml")
    s.write(f"{CWD}/{PKG}/hms/HmsSender.java", """package com.acme.push.hms;

@Component
@RequiredArgsConstructor
public class HmsSender {
    private static final String TOKEN_URL = "https://oauth-login.cloud.huawei.com/oauth2/v3/token";
    private final VaultTemplate vault;
    private final HmsProperties props;

    private String appSecret() {
        return (String) vault.read("secret/push-gateway/hms").getData().get("app_secret");
    }

    public SendResult send(String token, PushMessage msg) {
        String access = tokens.get(props.getAppId(), appSecret());
        return http.post("https://push-api.cloud.huawei.com/v1/" + props.getAppId() + "/messages:send",
                HmsMessage.of(token, msg), Map.of("Authorization", "Bearer " + access));
    }
}
""")
    s.bash("./gradlew compileJava", f"""> Task :compileJava FAILED
{CWD}/{PKG}/hms/HmsSender.java:8: error: cannot find symbol
    private final VaultTemplate vault;
                  ^
  symbol:   class VaultTemplate
  location: class HmsSender
1 error

FAILURE: Build failed with an exception.

BUILD FAILED in 6s""", code=1, desc="Compile")
    s.grep("vault|Vault", "deploy/helm/values.yaml:41:  vault.hashicorp.com/agent-inject: \"true\"\ndeploy/helm/values.yaml:44:  vault.hashicorp.com/agent-inject-template-env: |", path="deploy")
    s.user("我们不在代码里直接读 Vault。是 vault-agent sidecar 把 secret 渲染成环境变量注入的，读 HMS_APP_SECRET 就行，别引 spring-vault")
    s.edit(f"{CWD}/{PKG}/hms/HmsSender.java", """    private final VaultTemplate vault;
    private final HmsProperties props;

    private String appSecret() {
        return (String) vault.read("secret/push-gateway/hms").getData().get("app_secret");
    }""", """    private final HmsProperties props;   // app-secret bound from env HMS_APP_SECRET (rendered by vault-agent)

    private String appSecret() {
        return props.getAppSecret();
    }""", at_line=7)
    s.edit(f"{CWD}/deploy/helm/values.yaml", "  vault.hashicorp.com/agent-inject-template-env: |\n", "  vault.hashicorp.com/agent-inject-template-env: |\n    {{- with secret \"secret/push-gateway/hms\" -}}\n    export HMS_APP_SECRET=\"{{ .Data.data.app_secret }}\"\n    {{- end }}\n", at_line=44)
    s.user("还有 Redis 上周切成 Cluster 了，多 key 操作会报 CROSSSLOT。key 规范改成带 hash tag 的 `pg:{deviceId}:token` 这种，同一设备的 key 落在同一个 slot")
    s.grep("\"pg:token:|\"pg:rate:|\"pg:seen:", f"""{PKG}/device/TokenStore.java:19:    private static final String KEY = "pg:token:%s";
{PKG}/dedup/SeenStore.java:14:    private static final String KEY = "pg:seen:%s";
{PKG}/ratelimit/AppRateLimiter.java:22:    private static final String KEY = "pg:rate:%s";""", path="src/main")
    s.edit(f"{CWD}/{PKG}/device/TokenStore.java", '    private static final String KEY = "pg:token:%s";', '    private static final String KEY = "pg:{%s}:token";  // hash tag: per-device keys share a slot', at_line=19)
    s.edit(f"{CWD}/{PKG}/dedup/SeenStore.java", '    private static final String KEY = "pg:seen:%s";', '    private static final String KEY = "pg:{%s}:seen";', at_line=14)
    s.edit(f"{CWD}/{PKG}/ratelimit/AppRateLimiter.java", '    private static final String KEY = "pg:rate:%s";', '    private static final String KEY = "pg:{%s}:rate";', at_line=22)
    s.bash("./gradlew test", """> Task :compileJava
> Task :compileTestJava
> Task :test FAILED

TokenStoreTest > keyFormat() FAILED
    org.opentest4j.AssertionFailedError at TokenStoreTest.java:17

31 tests completed, 1 failed

BUILD FAILED in 44s""", code=1, desc="Run tests", gap=(40, 50))
    s.edit(f"{CWD}/src/test/java/com/acme/push/device/TokenStoreTest.java", '        assertThat(TokenStore.key("d1")).isEqualTo("pg:token:d1");', '        assertThat(TokenStore.key("d1")).isEqualTo("pg:{d1}:token");', at_line=17)
    s.bash("./gradlew test", GRADLE_OK.format(t="46s"), desc="Rerun tests", gap=(40, 50))
    s.user("Xiaomi 明天再做。today's enough, thx")
    s.say("好，HMS 通道和路由已完成，MiPush 明天接。")
    s.stop_hook()
    g = gold(name, CWD, 3, "mixed", [
        E("e1", "decision", "decision", "en", "Mainland Android push integrates vendor channels directly (Huawei and Xiaomi first, OPPO/vivo next quarter) instead of a third-party aggregator like Getui/JPush, because Legal rejected routing payloads through an aggregator (data compliance).", ["Huawei"], chosen="Huawei", over=["aggregator"], why=["legal"]),
        E("e2", "fact", "convention", "zh", "厂商通道按设备注册上报的 manufacturer（先转大写）路由：HUAWEI/HONOR → hms，XIAOMI/REDMI → mipush，其他走 FCM（ChannelRouter）。", ["manufacturer"]),
        E("e3", "experience", "workaround", "zh", "较新的 HONOR 机型没有 HMS Core（用荣耀自己的推送），目前 HONOR 仍归 hms，失败率高了再单独接荣耀推送。", ["HONOR"]),
        E("e4", "fact", "convention", "zh", "代码里不直接读 Vault：vault-agent sidecar 把 secret 渲染成环境变量注入（如 HMS_APP_SECRET），不要引 spring-vault。", ["vault-agent"]),
        E("e5", "fact", "config", "en", "HMS app id 108234567; the app secret lives in Vault at secret/push-gateway/hms and reaches the service as env HMS_APP_SECRET.", ["secret/push-gateway/hms"]),
        E("e6", "fact", "convention", "zh", "Redis 已切成 Cluster，key 改用 hash tag 形式 `pg:{deviceId}:token`（同一设备的 key 落同一个 slot，避免 CROSSSLOT）。", ["pg:{"], supersedes="p5s1_push_gateway_apns_token#e8"),
    ], [
        A(["oauth-login.cloud.huawei.com"], "HMS endpoints"),
        A(["Build.MANUFACTURER"], "manufacturer is raw Build.MANUFACTURER, mixed case"),
    ], ["thx", "today's enough", R_P5S3[0]["content"], R_P5S3[1]["content"], R_P5S3[2]["content"], "device_registration", "BUILD SUCCESSFUL in 46s"], [HMS_SECRET])
    return s, g


# ---------------------------------------------------------------- s4
R_P5S4 = [(57, "fact", "13 days ago", "Redis 已切成 Cluster，key 用 hash tag 形式 pg:{deviceId}:token。"),
          (58, "fact", "13 days ago", "代码里不直接读 Vault，vault-agent sidecar 把 secret 渲染成环境变量。"),
          (12, "fact", "34 days ago", "Push delivery SLO: P99 under 30s from enqueue to provider ack.")]


def s4():
    name = "p5s4_push_gateway_pending_incident"
    s = Session(name, CWD, "2026-10-20T00:47:05.000Z", version="2.1.322", branch="fix/stream-pending-reclaim",
                title="推送延迟告警排查：Redis Stream pending 未认领")
    s.recall_attachment(R_P5S4, event="SessionStart")
    s.user("半夜告警：推送延迟 P99 到了 14 分钟，现在已经恢复了但不知道为啥。看看 consumer")
    s.read(f"{CWD}/{PKG}/stream/PushStreamConsumer.java", """    @Scheduled(fixedDelay = 100)
    public void poll() {
        var records = redis.opsForStream().read(
                Consumer.from(GROUP, podName),                       // consumer name = pod name
                StreamReadOptions.empty().count(100).block(Duration.ofSeconds(2)),
                StreamOffset.create(STREAM, ReadOffset.lastConsumed()));
        for (var r : records) {
            try {
                dispatcher.dispatch(toMessage(r));
                redis.opsForStream().acknowledge(STREAM, GROUP, r.getId());
            } catch (Exception e) {
                log.warn("dispatch failed id={}", r.getId(), e);      // no ack, no retry
            }
        }
    }
""", start=31, total=60)
    s.user(f"prod redis 可以直接连，redis-push.prod.internal，密码是 {REDIS_PW}")
    s.bash(f"redis-cli -h redis-push.prod.internal -a '{REDIS_PW}' --no-auth-warning XPENDING 'pg:{{stream}}:push' push-workers", "(error) MOVED 5049 10.20.3.14:6379", code=1, desc="Pending summary")
    s.bash(f"redis-cli -c -h redis-push.prod.internal -a '{REDIS_PW}' --no-auth-warning XPENDING 'pg:{{stream}}:push' push-workers", """1) (integer) 48213
2) "1760896805123-0"
3) "1760921711456-3"
4) 1) 1) "push-gateway-7c9d8f6b5d-xk2lp"
      2) "48213\"""", desc="Pending summary (cluster mode)")
    s.bash("kubectl -n push get pods -l app=push-gateway; kubectl -n push get events --field-selector reason=OOMKilling --sort-by=.lastTimestamp | tail -3", """NAME                            READY   STATUS    RESTARTS   AGE
push-gateway-6f4b9c8d7e-4hq2n   1/1     Running   0          3h12m
push-gateway-6f4b9c8d7e-mz8rt   1/1     Running   0          3h12m
push-gateway-6f4b9c8d7e-t7wjc   1/1     Running   0          3h11m
LAST SEEN   TYPE      REASON       OBJECT                              MESSAGE
3h15m       Warning   OOMKilling   pod/push-gateway-7c9d8f6b5d-xk2lp   Memory cgroup out of memory: Killed process 1 (java)""", desc="Pods and OOM events")
    s.say("根因找到了：\n- `push-gateway-7c9d8f6b5d-xk2lp` 三个多小时前被 OOMKill，它名下还有 **48213 条 pending** 消息（已读未 ack）。\n- consumer 名用的是 pod 名，新 pod 名字不同，用 `ReadOffset.lastConsumed()`（即 `>`）只读新消息，**永远不会再去读别人的 pending**。\n- 代码里也没有 XAUTOCLAIM / XCLAIM，所以这批消息就一直挂着，延迟指标按最老未完成消息算，P99 被拉到 14 分钟；“恢复”只是新消息正常了，那 4.8 万条其实还没发。\n\n另外 dispatch 失败时既不 ack 也不重试，同样会留在 pending 里。")
    s.user("先把 pending 处理补上")
    s.edit(f"{CWD}/{PKG}/stream/PushStreamConsumer.java", """            } catch (Exception e) {
                log.warn("dispatch failed id={}", r.getId(), e);      // no ack, no retry
            }
        }
    }""", """            } catch (Exception e) {
                log.warn("dispatch failed id={}", r.getId(), e);      // stays pending; reclaimer retries it
            }
        }
    }

    /** Take over entries idle > 60s from any consumer (e.g. a killed pod). After 5 deliveries -> dead letter. */
    @Scheduled(fixedDelay = 30_000)
    public void reclaim() {
        var claimed = streams.xautoclaim(STREAM, GROUP, podName, Duration.ofMillis(60_000), "0-0", 500);
        for (var r : claimed) {
            if (deliveryCount(r) > 5) {
                deadLetter.publish(r);
                redis.opsForStream().acknowledge(STREAM, GROUP, r.getId());
                continue;
            }
            dispatchAndAck(r);
        }
    }""", at_line=42)
    s.bash("./gradlew test", """> Task :compileJava
> Task :compileTestJava
> Task :test

PushStreamConsumerIT > initializationError FAILED
    java.lang.IllegalStateException at DockerClientProviderStrategy.java:277
        Could not find a valid Docker environment. Please see logs and check configuration

> Task :test FAILED
38 tests completed, 6 failed

BUILD FAILED in 1m 12s""", code=1, desc="Run tests", gap=(60, 80))
    s.user("`./gradlew test` 现在带集成测试了（Testcontainers，要 docker），你这环境没 docker。单元测试用 `./gradlew unitTest`，集成测试让 CI 跑")
    s.bash("./gradlew unitTest", """> Task :compileJava UP-TO-DATE
> Task :compileTestJava UP-TO-DATE
> Task :unitTest

BUILD SUCCESSFUL in 29s
5 actionable tasks: 1 executed, 4 up-to-date""", desc="Unit tests only", gap=(25, 35))
    s.user("要不要干脆换 Kafka？运维一直在推")
    s.say("我觉得这次不是 Streams 的锅：峰值大概 3k msg/s，Redis Streams 完全撑得住；出问题是因为我们没处理 pending，换 Kafka 也会有类似的“消费者挂了谁来接手”的问题，只是 Kafka 的 rebalance 帮你做了。迁移成本（新集群、运维、客户端改造）现在不划算。")
    s.user("那就先留在 Redis Streams，把 pending 兜底补上。等峰值过 2 万/s 再评估 Kafka")
    s.say("好，先不动 MQ 选型。")
    s.user("再加个告警：pending 数量超过 1 万就告警，发到钉钉…不对我们现在用飞书，发飞书 oncall 群。指标名 push_stream_pending")
    s.edit(f"{CWD}/{PKG}/stream/StreamMetrics.java", "    }\n}\n", """    }

    @Scheduled(fixedDelay = 15_000)
    void pending() {
        pendingGauge.set(streams.xpendingSummary(STREAM, GROUP).getTotalPendingMessages());   // push_stream_pending
    }
}
""", at_line=28)
    s.edit(f"{CWD}/deploy/alerts/push-gateway.rules.yml", "  rules:\n", """  rules:
    - alert: PushStreamPendingHigh
      expr: max(push_stream_pending) > 10000
      for: 5m
      labels: {severity: page, route: feishu-oncall}
""", at_line=2)
    s.write(f"{CWD}/docs/postmortem/2026-10-20-push-delay.md", """# 2026-10-20 推送延迟 P99 14min

- 触发：pod push-gateway-7c9d8f6b5d-xk2lp OOMKilled，名下 48213 条 pending 无人认领。
- 原因：consumer 只读新消息（`>`），没有 XAUTOCLAIM；dispatch 失败也不 ack 不重试。
- 修复：每 30s XAUTOCLAIM（min-idle 60s），投递超过 5 次进死信；新增 push_stream_pending 告警（>1 万）。
- Lesson：Redis Streams 消费组必须有 pending 兜底认领，否则消费者一消失，它的 pending 就永远卡住。
""")
    s.bash("git add -A && git commit -m 'fix(consumer): reclaim idle pending entries via XAUTOCLAIM'", """[fix/stream-pending-reclaim 0d93b57] fix(consumer): reclaim idle pending entries via XAUTOCLAIM
 4 files changed, 61 insertions(+), 3 deletions(-)
 create mode 100644 docs/postmortem/2026-10-20-push-delay.md""", desc="Commit")
    s.stop_hook()
    s.turn_duration()
    g = gold(name, CWD, 4, "zh", [
        E("e1", "experience", "root_cause", "zh", "推送延迟 P99 14 分钟：被 OOMKill 的 pod 名下 48213 条 Redis Stream pending 消息无人认领；consumer 名是 pod 名，新 pod 只读新消息（>），代码里没有 XAUTOCLAIM。", ["pending", "OOM"]),
        E("e2", "experience", "fix", "zh", "PushStreamConsumer 增加 reclaimer：每 30s XAUTOCLAIM 认领空闲超过 60000ms 的 pending，投递超过 5 次进死信。", ["XAUTOCLAIM", "60"]),
        E("e3", "experience", "lesson", "zh", "Redis Streams 消费组必须有 pending 兜底认领，否则消费者一消失，它名下的 pending 消息就永远卡住。", ["pending"]),
        E("e4", "fact", "gotcha", "zh", "prod Redis 是 Cluster，redis-cli 要加 -c，否则返回 MOVED 错误。", ["MOVED"]),
        E("e5", "fact", "command", "zh", "`./gradlew test` 现在包含 Testcontainers 集成测试（需要 Docker）；本地只跑单测用 `./gradlew unitTest`，集成测试交给 CI。", ["unitTest"], supersedes="p5s1_push_gateway_apns_token#e6"),
        E("e6", "decision", "decision", "zh", "暂时留在 Redis Streams，不迁 Kafka：峰值约 3k msg/s 足够，问题出在没处理 pending；峰值超过 2 万/s 再评估 Kafka。", ["Redis Streams"], chosen="Redis Streams", over=["Kafka"], why=["3k"]),
        E("e7", "fact", "config", "zh", "告警指标 push_stream_pending：pending 超过 1 万持续 5 分钟告警，发飞书 oncall 群。", ["push_stream_pending"]),
        E("e8", "fact", "config", "zh", "prod Redis 地址 redis-push.prod.internal，推送 stream 为 pg:{stream}:push，消费组 push-workers。", ["redis-push.prod.internal"]),
    ], [
        A(["docs/postmortem"], "postmortem location"),
        A(["飞书"], "oncall notifications go to Feishu, not DingTalk"),
    ], ["BUILD SUCCESSFUL in 29s", "1760896805123-0", "0d93b57", R_P5S4[0][3], R_P5S4[1][3], R_P5S4[2][3], "P99 under 30s"], [REDIS_PW])
    return s, g


SESSIONS = [s1, s2, s3, s4]
