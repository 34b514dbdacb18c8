"""Project B (zh): dw-perm，数仓权限申请与下发服务（Go + gin + gorm，StarRocks，飞书审批）。"""
from lib import Session, reminder

CWD = "/home/dev/work/dw-perm"


def s1():
    s = Session("b1_dwperm_grant_quote", CWD, "2026-10-09T02:30:00Z", branch="fix/grant-sql", lang="zh", order=1)
    s.snapshot()
    s.user("审批通过了但是 StarRocks 里权限没生效，用户那边 select 还是报 Access denied。日志里 grant worker 有报错。"
           "本地配置我贴一下，configs/dev.yaml 里 mysql 那段：\n\nmysql:\n  dsn: dwperm:Zx7kP29qaW@tcp(10.20.8.15:3306)/dw_perm?parseTime=true\n"
           "starrocks:\n  fe: 127.0.0.1:9030\n  user: root")
    s.bash("kubectl -n dw-perm logs deploy/dw-perm-api --since=2h | grep -i grant | tail -5",
           "2026-10-09T01:12:44.081+0800\tERROR\tgrant/worker.go:74\tapply grant failed\t{\"ticket\": \"DP-20261009-0031\", "
           "\"err\": \"Error 1064 (HY000): Getting syntax error at line 1, column 22. Detail message: Unexpected input '\\\"ods\\\"', "
           "the most similar input is {<EOF>, ';'}.\"}\n"
           "2026-10-09T01:12:44.082+0800\tWARN\tgrant/worker.go:81\tticket moved to FAILED\t{\"ticket\": \"DP-20261009-0031\"}",
           desc="查 grant worker 日志")
    s.read("/home/dev/work/dw-perm/internal/grant/sql.go",
           "func buildGrant(p Privilege) string {\n\treturn fmt.Sprintf(\"GRANT %s ON TABLE %q.%q TO USER '%s'@'%%'\",\n"
           "\t\tp.Action, p.DB, p.Table, p.User)\n}")
    s.say("`%q` 生成的是 Go 的双引号字符串：`ON TABLE \"ods\".\"orders\"`。StarRocks 里双引号是字符串字面量，不是标识符，"
          "ON 后面跟一个字符串，解析器在第 22 列就不认了。标识符要用反引号。")
    s.edit("/home/dev/work/dw-perm/internal/grant/sql.go", "ON TABLE %q.%q TO USER", "ON TABLE `%s`.`%s` TO USER")
    s.bash("make test",
           "go test -race -count=1 ./...\n--- FAIL: TestExpireScan (0.41s)\n    expire_test.go:38: ticket DP-T-7 should not be expired yet, "
           "expire_at=2026-10-09 10:30:00 +0000 UTC now=2026-10-09 10:31:02 +0800 CST\nFAIL\nFAIL\tdw-perm/internal/expire\t0.611s\n"
           "ok  \tdw-perm/internal/grant\t1.204s\nFAIL", desc="跑单测", err=True)
    s.think("expire_at 被解析成 UTC，但库里存的是北京时间。DSN 只有 parseTime=true，没有 loc，go-sql-driver 默认 loc=UTC。")
    s.say("这个是另一个问题：DSN 只有 `parseTime=true`，没带 `loc`，驱动默认按 UTC 解析 DATETIME；库里写进去的是北京时间，"
          "读出来就差了 8 小时，过期判断会提前 8 小时回收。DSN 加 `loc=Asia%2FShanghai`。")
    s.edit("/home/dev/work/dw-perm/configs/dev.yaml", "?parseTime=true", "?parseTime=true&loc=Asia%2FShanghai")
    s.bash("make test", "go test -race -count=1 ./...\nok  \tdw-perm/internal/expire\t0.598s\nok  \tdw-perm/internal/grant\t1.187s\n"
           "ok  \tdw-perm/internal/ticket\t0.903s", desc="重跑单测")
    s.user("好。make test 之前是不是要先 `docker compose up -d starrocks` 对吧？我老忘")
    s.say("对，单测里 grant 包会连本地 StarRocks FE 的 9030（root 空密码），没起的话 grant 的测试会直接 dial 超时。")
    s.user("顺便问下，下发这块我们一直是直接执行 GRANT，有人提过改走 Ranger，你怎么看")
    s.say("Ranger 好处是策略集中、自带审计；但它的 StarRocks 插件要 3.3 以上才支持。我先看下集群版本。")
    s.bash("mysql -h127.0.0.1 -P9030 -uroot -e 'select current_version()'",
           "+-------------------+\n| current_version() |\n+-------------------+\n| 3.1.14-2bd4b5a    |\n+-------------------+")
    s.user("线上也是 3.1。那先直接 GRANT 吧，等集群升级了再说 Ranger")
    s.say("好，下发逻辑保持直接执行 GRANT，不动。")
    s.user("另外过期回收你有什么建议？现在是啥都没有，靠人工")
    s.say("两种：\n1. 定时任务每 N 分钟扫 `expire_at < now()` 的工单，执行 REVOKE；\n2. 审批通过时往延时队列投一条消息，到期消费。\n"
          "延时队列精度高，但要引入 RocketMQ 之类的组件。")
    s.user("延时队列我们这边没人运维 RocketMQ，不值当。定时任务，10 分钟扫一次就行")
    s.say("好，那就加一个 `expire` job，每 10 分钟扫一次，REVOKE 成功后工单置为 EXPIRED。")
    s.edit("/home/dev/work/dw-perm/cmd/worker/main.go", "c := cron.New()",
           "c := cron.New()\n\tc.AddFunc(\"@every 10m\", expire.Scan(db, sr))")
    s.user("提交吧。提交信息用中文，格式 `[包名] 描述`，比如 `[grant] 修复表名引号`。还有你回答用中文，代码注释写英文")
    s.bash("git add -A && git commit -m '[grant] 修复表名引号; [expire] 每10分钟回收过期权限'",
           "[fix/grant-sql 5d0a7e2] [grant] 修复表名引号; [expire] 每10分钟回收过期权限\n 5 files changed, 64 insertions(+), 3 deletions(-)")
    s.user("好的谢谢，终于搞定了，我先去吃饭")
    s.stop(ms=1880230)
    s.title("修复 StarRocks GRANT 引号与过期回收")

    s.exp("root_cause", "zh", "GRANT 下发失败（Error 1064）：buildGrant 用 %q 生成双引号的库表名，StarRocks 里双引号是字符串字面量"
          "不是标识符；库表名要用反引号。", ["反引号", "1064"])
    s.exp("gotcha", "zh", "MySQL DSN 只有 parseTime=true 时 go-sql-driver 按 UTC 解析 DATETIME，库里存的是北京时间，过期判断会差 8 小时；"
          "DSN 必须带 loc=Asia%2FShanghai。", ["loc=Asia%2FShanghai"])
    s.fact("command", "zh", "跑单测用 `make test`（go test -race），之前要先 `docker compose up -d starrocks`，测试连本地 StarRocks FE 9030。",
           ["make test", "docker compose up -d starrocks"])
    s.decision("zh", "权限下发先直接在 StarRocks 执行 GRANT，不走 Ranger：Ranger 的 StarRocks 插件要 3.3 以上，线上集群是 3.1；"
               "等集群升级再考虑。", ["GRANT"], "GRANT", ["Ranger"], ["3.1"])
    s.decision("zh", "过期权限回收用定时任务每 10 分钟扫 expire_at 并 REVOKE，不用延时队列：延时队列要引 RocketMQ，团队没人运维。",
               ["10 分钟"], "定时任务", ["延时队列"], ["运维"])
    s.fact("convention", "zh", "提交信息用中文，格式 `[包名] 描述`，例如 `[grant] 修复表名引号`。", ["[grant]"])
    s.fact("preference", "zh", "用户要求回答用中文，代码注释写英文。", ["注释"])
    s.fact("config", "zh", "服务部署在 k8s namespace dw-perm，deployment 名为 dw-perm-api。", ["dw-perm-api"])
    s.ok(["9030"], "本地 StarRocks FE 查询端口 9030，root 空密码")
    s.ok(["EXPIRED"], "回收成功后工单置 EXPIRED")
    s.forbid("终于搞定了", "先去吃饭", "我老忘", "5d0a7e2", "ok  \tdw-perm/internal/grant")
    s.secret("Zx7kP29qaW", "dwperm:Zx7kP29qaW@tcp(10.20.8.15:3306)/dw_perm")
    return s


def s2():
    s = Session("b2_dwperm_feishu_callback", CWD, "2026-10-15T06:05:00Z", branch="feat/feishu-approval", lang="zh", order=2)
    s.snapshot()
    s.user("开始接飞书审批。审批流就用飞书审批，不自己写状态机了，法务那边要求审批记录必须留在飞书里。"
           "回调地址配的是 https://dac-test.corp.example.com/api/v1/feishu/approval/callback")
    s.recall([(61, "fact", "6 days ago", "跑单测用 `make test`，之前要先 `docker compose up -d starrocks`。"),
              (63, "decision", "6 days ago", "权限下发先直接在 StarRocks 执行 GRANT，不走 Ranger。"),
              (66, "fact", "6 days ago", "提交信息用中文，格式 `[包名] 描述`。")])
    s.say("好。先看下现有的 handler 骨架。")
    s.grep("feishu", "internal/feishu/handler.go:21:func (h *Handler) ApprovalCallback(c *gin.Context) {\n"
           "internal/feishu/verify.go:12:func Verify(ts, nonce, sig string, body []byte) bool {", path="internal")
    s.user("app 的凭证在这：App ID cli_a7f3c21e9b80d00c，App Secret 是 Q2hvc2VuQXBwU2VjcmV0X2RhY18yMDI2，Encrypt Key dacEncKey2026xyz。"
           "你先别写进代码，放 k8s secret")
    s.say("明白，代码里只从环境变量 `FEISHU_APP_SECRET` / `FEISHU_ENCRYPT_KEY` 读，值走 k8s secret `feishu-app`。")
    s.bash("curl -s -XPOST localhost:8080/api/v1/feishu/approval/callback -d @testdata/approval_event.json -H 'X-Lark-Signature: 9a1c...' -w '\\n%{http_code}'",
           "{\"code\":40101,\"msg\":\"signature mismatch\"}\n401", desc="本地回放一条审批事件")
    s.read("/home/dev/work/dw-perm/internal/feishu/verify.go",
           "func Verify(ts, nonce, sig string, body []byte) bool {\n\tplain, _ := decrypt(body)\n"
           "\th := sha256.Sum256([]byte(ts + nonce + encryptKey + string(plain)))\n\treturn hex.EncodeToString(h[:]) == sig\n}")
    s.say("原因是签名算在了解密之后的明文上。飞书签的是 `timestamp + nonce + encrypt_key + 原始请求体`，原始请求体是那段还没解密的 "
          "`{\"encrypt\":\"...\"}`。先验签、再解密，验签要用 `c.GetRawData()` 拿到的原始字节，不能用 bind 之后再序列化的。")
    s.edit("/home/dev/work/dw-perm/internal/feishu/verify.go",
           "\tplain, _ := decrypt(body)\n\th := sha256.Sum256([]byte(ts + nonce + encryptKey + string(plain)))",
           "\th := sha256.Sum256([]byte(ts + nonce + encryptKey + string(body)))")
    s.bash("curl -s -XPOST localhost:8080/api/v1/feishu/approval/callback -d @testdata/approval_event.json -H 'X-Lark-Signature: 9a1c...' -w '\\n%{http_code}'",
           "{\"code\":0}\n200")
    s.user("可以了。不过我担心一个事：回调里直接同步执行 GRANT 会不会超时？StarRocks 慢的时候一条 GRANT 要好几秒")
    s.say("会有风险。飞书要求 3 秒内返回，否则按失败重试，重试又会再执行一遍 GRANT。建议回调里只做验签 + 解密 + 把事件写进 "
          "`grant_outbox` 表（event_id 唯一键去重），立刻返回 200；worker 从 outbox 异步取出来下发。")
    s.user("行，就按你说的来，outbox 表")
    s.edit("/home/dev/work/dw-perm/internal/feishu/handler.go", "\tif err := grant.Apply(ctx, ev); err != nil {",
           "\tif err := outbox.Insert(ctx, h.db, ev.EventID, ev); err != nil && !outbox.IsDuplicate(err) {")
    s.bash("make test", "go test -race -count=1 ./...\nok  \tdw-perm/internal/feishu\t0.713s\nok  \tdw-perm/internal/grant\t1.302s\n"
           "ok  \tdw-perm/internal/outbox\t0.455s")
    s.user("对了，服务上周改名了，对外叫 DAC（data-access-center），k8s 里 namespace 换成 data-gov，deployment 叫 dac-api。"
           "dw-perm-api 那个已经删了")
    s.bash("kubectl -n data-gov get deploy dac-api", "NAME      READY   UP-TO-DATE   AVAILABLE   AGE\ndac-api   3/3     3            3           6d")
    s.user("还有一条规矩：合 main 必须 squash，PR 标题也用 `[包名] 描述` 那个格式，CI 会检查标题")
    s.say("记下了：squash merge，PR 标题和提交信息一样走 `[包名] 描述`。")
    s.user("今天就到这，辛苦")
    s.stop(ms=2420110)
    s.title("接入飞书审批回调")

    s.decision("zh", "审批流使用飞书审批，不自建审批状态机：法务要求审批记录留在飞书。", ["飞书审批"], "飞书审批", ["状态机"], ["法务"])
    s.fact("config", "zh", "飞书审批回调地址（测试环境）是 https://dac-test.corp.example.com/api/v1/feishu/approval/callback。",
           ["/api/v1/feishu/approval/callback"])
    s.fact("constraint", "zh", "飞书 App Secret / Encrypt Key 不写进代码，放 k8s secret feishu-app，代码从 FEISHU_APP_SECRET、"
           "FEISHU_ENCRYPT_KEY 环境变量读。", ["feishu-app"])
    s.exp("root_cause", "zh", "飞书回调验签失败（signature mismatch）：签名算在了解密后的明文上；飞书签的是 timestamp + nonce + "
          "encrypt_key + 原始请求体（加密的 {\"encrypt\":...}），要先用 c.GetRawData() 的原始字节验签，再解密。",
          ["GetRawData", "原始请求体"])
    s.decision("zh", "飞书回调只做验签、解密并写入 grant_outbox 表（event_id 唯一键去重）后立即返回 200，由 worker 异步下发，"
               "不在回调里同步执行 GRANT：飞书要求 3 秒内返回，否则重试会重复下发。", ["grant_outbox"], "outbox",
               ["同步"], ["3 秒"])
    s.fact("config", "zh", "服务已改名 DAC（data-access-center），k8s namespace 为 data-gov，deployment 为 dac-api；"
           "旧的 dw-perm-api 已删除。", ["dac-api", "data-gov"], sup="b1_dwperm_grant_quote#e8")
    s.fact("convention", "zh", "合并到 main 必须 squash，PR 标题同样用 `[包名] 描述` 格式，CI 会检查。", ["squash"])
    s.ok(["signature mismatch"], "错误信息本身")
    s.forbid("辛苦", "之前要先 `docker compose up -d starrocks`", "不走 Ranger。", "提交信息用中文，格式",
             "ok  \tdw-perm/internal/outbox")
    s.secret("Q2hvc2VuQXBwU2VjcmV0X2RhY18yMDI2", "dacEncKey2026xyz")
    return s


def s3():
    s = Session("b3_dwperm_code_tour", CWD, "2026-10-21T03:10:00Z", branch="main", lang="zh", order=3)
    s.snapshot()
    s.user("下周我要给新来的实习生讲 grant 这块，你帮我捋一下代码结构，先别改任何东西")
    s.maple_search("grant 模块 结构 下发流程", [
        (72, "decision", "飞书回调只写 grant_outbox 表后立即返回 200，由 worker 异步下发。"),
        (75, "fact", "服务已改名 DAC（data-access-center），k8s namespace 为 data-gov。"),
    ])
    s.bash("tree -L 2 internal | head -30",
           "internal\n├── expire\n│   ├── scan.go\n│   └── expire_test.go\n├── feishu\n│   ├── handler.go\n│   └── verify.go\n"
           "├── grant\n│   ├── sql.go\n│   ├── worker.go\n│   └── sql_test.go\n├── outbox\n│   └── outbox.go\n└── ticket\n    └── model.go\n\n6 directories, 10 files")
    s.read("/home/dev/work/dw-perm/internal/grant/worker.go",
           "func (w *Worker) Run(ctx context.Context) {\n\tfor {\n\t\tevs, _ := outbox.Claim(ctx, w.db, 20)\n\t\tfor _, ev := range evs {\n"
           "\t\t\tif err := w.apply(ctx, ev); err != nil {\n\t\t\t\toutbox.Fail(ctx, w.db, ev.ID, err)\n\t\t\t\tcontinue\n\t\t\t}\n"
           "\t\t\toutbox.Done(ctx, w.db, ev.ID)\n\t\t}\n\t\ttime.Sleep(2 * time.Second)\n\t}\n}")
    s.say("主流程三段：\n1. `feishu/handler.go` 收回调 → 验签 → 写 outbox\n2. `grant/worker.go` 每 2 秒 Claim 20 条，拼 SQL 执行，成功 Done 失败 Fail\n"
          "3. `expire/scan.go` 定时扫过期工单 REVOKE\n工单模型在 `ticket/model.go`。")
    s.user("Claim 是怎么防止两个 worker 抢同一条的？")
    s.grep("SKIP LOCKED", "internal/outbox/outbox.go:34:\t\tWhere(\"status = ?\", StatusPending).Clauses(clause.Locking{Strength: \"UPDATE\", Options: \"SKIP LOCKED\"}).")
    s.say("`SELECT ... FOR UPDATE SKIP LOCKED`，一个 worker 锁住的行另一个直接跳过。")
    s.user("嗯，Fail 之后会重试吗")
    s.read("/home/dev/work/dw-perm/internal/outbox/outbox.go",
           "func Fail(ctx context.Context, db *gorm.DB, id int64, err error) {\n\tdb.Model(&Event{}).Where(\"id = ?\", id).Updates(map[string]any{\n"
           "\t\t\"status\": gorm.Expr(\"IF(retries >= 5, 'DEAD', 'PENDING')\"),\n\t\t\"retries\": gorm.Expr(\"retries + 1\"),\n\t\t\"last_err\": err.Error(),\n\t})\n}")
    s.say("会，失败后回到 PENDING，重试超过 5 次标成 DEAD，不再处理。")
    s.user("好，差不多够讲了。我自己也顺便复习了下哈哈")
    s.interrupt()
    s.user("对了 DEAD 的有告警吗？没有的话也先别加，我就问问")
    s.grep("DEAD", "internal/outbox/outbox.go:41:\t\t\"status\": gorm.Expr(\"IF(retries >= 5, 'DEAD', 'PENDING')\"),")
    s.say("目前没有，只在表里置 DEAD，没有任何告警或指标。")
    s.user("ok 知道了")
    s.stop(ms=640100)
    s.title("梳理 grant 模块代码结构")
    s.ok(["SKIP LOCKED"], "对现有代码的解释，可存可不存")
    s.ok(["DEAD"], "重试 5 次后标 DEAD，目前无告警")
    s.forbid("实习生", "先别改任何东西", "复习了下哈哈", "只写 grant_outbox 表后立即返回", "k8s namespace 为 data-gov")
    return s


def s4():
    s = Session("b4_dwperm_ranger_migration", CWD, "2026-11-03T01:45:00Z", branch="feat/ranger", lang="zh", order=4)
    s.snapshot()
    s.user([reminder([(63, "decision", "3 weeks ago", "权限下发先直接在 StarRocks 执行 GRANT，不走 Ranger。"),
                      (64, "decision", "3 weeks ago", "过期权限回收用定时任务每 10 分钟扫 expire_at 并 REVOKE。")]) +
            "\n集群上周末升到 3.3.5 了。安全部那边要求所有数仓权限必须能在 Ranger 里审计，所以下发要改成走 Ranger，不再直接 GRANT。"
            "ranger admin 在 http://ranger.data-gov.svc:6080，账号 dac_svc，密码是 Rg2026dacSvc!"])
    s.say("好。改动点：`grant/worker.go` 的 apply 从执行 SQL 改成调 Ranger REST `POST /service/public/v2/api/policy`。"
          "账号密码我只从 `RANGER_USER` / `RANGER_PASSWORD` 环境变量读。")
    s.user("本地起依赖现在用 `make dev-up`，会起 StarRocks 和 ranger-admin 两个，原来那个 docker compose up -d starrocks 不够了")
    s.bash("make dev-up",
           "docker compose -f deploy/dev/compose.yaml up -d starrocks ranger-admin ranger-db\n"
           "[+] Running 4/4\n ✔ Network dev_default        Created\n ✔ Container dev-ranger-db-1     Started\n"
           " ✔ Container dev-starrocks-1    Started\n ✔ Container dev-ranger-admin-1 Started", desc="起本地依赖")
    s.edit("/home/dev/work/dw-perm/internal/grant/worker.go", "\t_, err := w.sr.ExecContext(ctx, buildGrant(p))",
           "\terr := w.ranger.CreatePolicy(ctx, policyFor(p))")
    s.bash("go test ./internal/grant/ -run TestRangerApply -v",
           "=== RUN   TestRangerApply\n    worker_test.go:52: ranger: 400 Bad Request: {\"statusCode\":1,\"msgDesc\":\"Another policy already exists "
           "for matching resource: policy-name=[dac-ods-orders], service=[starrocks_prod]\",\"messageList\":[{\"name\":\"INVALID_INPUT_DATA\"}]}\n"
           "--- FAIL: TestRangerApply (0.88s)\nFAIL\tdw-perm/internal/grant\t1.021s", desc="跑 Ranger 下发测试", err=True)
    s.say("Ranger 里同一组 resource（库+表）只能有一个 policy。第二个用户申请同一张表时再 POST 一个新 policy 就撞了。"
          "要按 resource 查已有 policy（`GET /service/public/v2/api/service/starrocks_prod/policy?resource:database=..&resource:table=..`），"
          "有就往 policyItems 里追加用户然后 PUT，没有再 POST。")
    s.edit("/home/dev/work/dw-perm/internal/grant/worker.go", "\terr := w.ranger.CreatePolicy(ctx, policyFor(p))",
           "\terr := w.ranger.UpsertPolicyItem(ctx, p.DB, p.Table, itemFor(p))")
    s.bash("go test ./internal/grant/ -run TestRangerApply -v", "=== RUN   TestRangerApply\n--- PASS: TestRangerApply (1.21s)\nPASS\nok  \tdw-perm/internal/grant\t1.344s")
    s.compact("- 集群升级到 StarRocks 3.3.5，权限下发从直接 GRANT 改为调用 Ranger REST\n- 本地依赖 make dev-up\n"
              "- 同一 resource 只能一个 policy，改成 upsert policyItems\n- 下一步：过期回收怎么处理")
    s.user("过期回收那个定时任务还要吗？既然走 Ranger 了")
    s.say("可以不要了。Ranger 的 policyItem 不支持单独设有效期，但 policy 有 `validitySchedules`；不过我们是一表一 policy，多个用户"
          "过期时间不同，放在 policy 级别不合适。\n\n替代方案：\n- 保留定时任务，回收改为从 policyItems 里删人\n"
          "- 每个（用户, 表）单独建一个 policy，用 validitySchedules，Ranger 到期自动失效")
    s.user("一人一表一个 policy 的话 Ranger 里策略数会爆，几万条，UI 都打不开。还是保留定时任务，只是 REVOKE 换成删 policyItem。"
           "扫描间隔改成 5 分钟，审计那边嫌 10 分钟太长")
    s.say("好，`expire` job 改成每 5 分钟扫一次，到期从 policyItems 删除该用户再 PUT。")
    s.edit("/home/dev/work/dw-perm/cmd/worker/main.go", "c.AddFunc(\"@every 10m\", expire.Scan(db, sr))",
           "c.AddFunc(\"@every 5m\", expire.Scan(db, rg))")
    s.user("ranger 的 service 名字线上是 starrocks_prod，测试环境是 starrocks_test，别写死")
    s.edit("/home/dev/work/dw-perm/configs/dev.yaml", "starrocks:\n  fe: 127.0.0.1:9030", "ranger:\n  url: http://localhost:6080\n  service: starrocks_test")
    s.bash("make test", "go test -race -count=1 ./...\nok  \tdw-perm/internal/expire\t0.702s\nok  \tdw-perm/internal/feishu\t0.690s\n"
           "ok  \tdw-perm/internal/grant\t1.412s\nok  \tdw-perm/internal/outbox\t0.470s")
    s.user("今天周五，不想加班了哈哈，提交吧")
    s.bash("git add -A && git commit -m '[grant] 权限下发改走 Ranger; [expire] 5分钟扫描并删除 policyItem'",
           "[feat/ranger c81f2d9] [grant] 权限下发改走 Ranger; [expire] 5分钟扫描并删除 policyItem\n 9 files changed, 212 insertions(+), 48 deletions(-)")
    s.stop(ms=2980330)
    s.title("权限下发迁移到 Ranger")

    s.decision("zh", "StarRocks 升级到 3.3.5 后，权限下发改为调用 Ranger REST，不再直接执行 GRANT：安全部要求所有数仓权限能在 Ranger 里审计。",
               ["Ranger"], "Ranger", ["GRANT"], ["审计"], sup="b1_dwperm_grant_quote#e4")
    s.fact("constraint", "zh", "Ranger 服务账号 dac_svc，密码只从 RANGER_USER / RANGER_PASSWORD 环境变量读；ranger admin 地址 "
           "http://ranger.data-gov.svc:6080。", ["RANGER_PASSWORD"])
    s.fact("command", "zh", "本地依赖改用 `make dev-up` 启动（StarRocks + ranger-admin + ranger-db），只起 starrocks 已经不够。",
           ["make dev-up"], sup="b1_dwperm_grant_quote#e3")
    s.exp("root_cause", "zh", "Ranger 创建 policy 报 400（Another policy already exists for matching resource）：同一库表 resource 只能有一个 "
          "policy；改为先按 resource 查已有 policy，往 policyItems 追加用户后 PUT，没有再 POST。", ["policyItems", "resource"])
    s.decision("zh", "过期回收保留定时任务（到期从 policyItems 删用户），不用一人一表一个 policy + validitySchedules：那样策略数会到几万条，Ranger UI 打不开。",
               ["policyItems"], "定时任务", ["validitySchedules"], ["几万"])
    s.fact("config", "zh", "过期回收扫描间隔从 10 分钟改为 5 分钟（审计要求）。", ["5 分钟"], sup="b1_dwperm_grant_quote#e5")
    s.fact("config", "zh", "Ranger service 名线上是 starrocks_prod，测试环境是 starrocks_test，配置里读，不能写死。",
           ["starrocks_prod", "starrocks_test"])
    s.ok(["3.3.5"], "集群版本")
    s.ok(["validitySchedules"], "policy 级有效期")
    s.forbid("不想加班", "不走 Ranger。", "每 10 分钟扫 expire_at 并 REVOKE", "c81f2d9", "--- PASS: TestRangerApply")
    s.secret("Rg2026dacSvc!")
    return s


SESSIONS = [s1, s2, s3, s4]
