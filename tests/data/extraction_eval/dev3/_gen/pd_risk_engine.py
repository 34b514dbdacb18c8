"""Project D (zh): risk-engine，支付风控规则引擎（Go + gRPC，MySQL 存规则，Redis 名单，expr 表达式，Kafka 决策日志）。"""

from lib import Session, reminder

CWD = "/home/dev/work/risk-engine"


def s1():
    s = Session("d1_risk_rule_reload", CWD, "2026-11-09T02:10:00Z", branch="fix/rule-reload", lang="zh", order=1)
    s.snapshot()
    s.user(
        "运营说下午改的规则 RC_PAY_0031 有两个 pod 一直没生效，另外几个 pod 是好的。规则是存在 MySQL 的 risk_rule 表里，"
        "引擎每 30 秒增量拉一次。你帮我看看。本地 configs/local.yaml 里的库配置：\n\n"
        "mysql:\n  dsn: risk_rw:Fk82mPq1Lz@tcp(10.40.2.11:3306)/risk_rules?parseTime=true\n"
    )
    s.bash(
        "kubectl -n risk get pods -l app=risk-engine -o wide | head -5",
        "NAME                           READY   STATUS    RESTARTS   AGE\n"
        "risk-engine-7d9c6b8f5d-2xkqp   1/1     Running   0          3d\n"
        "risk-engine-7d9c6b8f5d-8hjwn   1/1     Running   0          3d\n"
        "risk-engine-7d9c6b8f5d-k4m2z   1/1     Running   0          3d",
        desc="看 pod 状态",
    )
    s.read(
        "/home/dev/work/risk-engine/internal/rule/loader.go",
        "func (l *Loader) pull(ctx context.Context) error {\n"
        "\trows, err := l.db.QueryContext(ctx, `SELECT id, expr, version, updated_at FROM risk_rule WHERE updated_at > ?`, l.lastLoad)\n"
        "\t...\n\tl.lastLoad = time.Now().Truncate(time.Second)\n\treturn nil\n}",
    )
    s.think(
        "updated_at 是 DATETIME，秒级。lastLoad 截到秒，同一秒内拉完之后再写入的规则 updated_at == lastLoad，用 > 就永远拉不到。"
    )
    s.say(
        "问题在增量条件 `updated_at > lastLoad`。`updated_at` 是 DATETIME，只精确到秒；pod 在某一秒拉完后把 lastLoad 记成这一秒，"
        "如果运营在同一秒稍后又保存了规则，这条规则的 updated_at 等于 lastLoad，`>` 永远不成立，这个 pod 就一直漏掉它。"
        "哪些 pod 中招取决于它们拉取的时刻，所以只有部分 pod 不生效。\n\n"
        "改法：表里已经有 `version` 列（每次保存 +1 的全局自增序号），增量改成 `WHERE version > lastVersion`，不再按时间比较。"
    )
    s.edit(
        "/home/dev/work/risk-engine/internal/rule/loader.go",
        "WHERE updated_at > ?`, l.lastLoad)",
        "WHERE version > ? ORDER BY version`, l.lastVersion)",
    )
    s.bash(
        "make ut",
        "go test -count=1 ./internal/...\nok  \trisk-engine/internal/rule\t0.532s\n"
        "ok  \trisk-engine/internal/decision\t0.811s\nok  \trisk-engine/internal/list\t0.240s",
        desc="跑单测",
    )
    s.user("好。集成测试怎么跑来着")
    s.say("`make it`，跑之前要先 `make env-up` 把本地 mysql 和 redis 起起来，不然 loader 的集成测试会连不上库。")
    s.bash(
        "make env-up && make it",
        "docker compose -f deploy/local/compose.yaml up -d mysql redis\n ✔ Container local-mysql-1  Started\n"
        " ✔ Container local-redis-1  Started\ngo test -count=1 -tags=integration ./test/...\nok  \trisk-engine/test\t4.117s",
    )
    s.user("本地起引擎是 `make run` 对吧，gRPC 端口 9310？")
    s.say("对，`make run` 读 configs/local.yaml，gRPC 监听 `:9310`。")
    s.user(
        "接下来一个大的：现在规则条件是我们自己写的一个小 DSL 解析器，bug 多，运营也老写错。想换成现成的表达式引擎，你有什么建议"
    )
    s.say(
        "两个常见方案：\n1. `expr-lang/expr`：Go 原生，表达式编译时就做类型检查，编译后执行很快（我们单条规则预算是微秒级），"
        "天然沙箱，不能做 IO；\n2. `gopher-lua`：表达力强，但运营要写 Lua 脚本，门槛高，而且要自己限制死循环和内存。"
    )
    s.user("运营写不来 Lua 的。行，用 expr 吧，编译期能检查类型这个很关键，保存规则的时候就能报错")
    s.say("好，规则表达式统一换成 expr-lang/expr，规则保存时先 `expr.Compile` 做类型检查，编译失败直接拒绝保存。")
    s.edit(
        "/home/dev/work/risk-engine/internal/rule/compile.go",
        "\tast, err := dsl.Parse(r.Expr)",
        "\tprog, err := expr.Compile(r.Expr, expr.Env(Features{}), expr.AsBool())",
    )
    s.user("还有名单（黑名单/白名单）命中那块，现在每次决策都查一次 MySQL，大促峰值 8000 QPS 的时候 MySQL CPU 打满了")
    s.say(
        "可以把名单放进 Redis Set，决策时 `SISMEMBER`，运营后台增删名单同时写 MySQL 和 Redis；或者每个 pod 内存里放一份布隆过滤器定时刷新。"
        "布隆过滤器删除不了元素，解封要等下次全量刷新，不够实时。"
    )
    s.user("解封必须实时，不然客诉。就 Redis Set。redis 在 10.40.3.20:6379，密码是 Rk!list2026q")
    s.say(
        "好，名单查询改成 Redis Set，地址和密码放 k8s secret `risk-redis`，代码里从 `RISK_REDIS_ADDR` / `RISK_REDIS_PASSWORD` 读。"
    )
    s.edit(
        "/home/dev/work/risk-engine/internal/list/store.go",
        "\terr := s.db.QueryRowContext(ctx, listSQL, kind, val).Scan(&hit)",
        "\thit, err := s.rdb.SIsMember(ctx, listKey(kind), val).Result()",
    )
    s.user(
        "再说几个规矩：规则 ID 统一用 `RC_业务线_四位序号`，比如 RC_PAY_0031；禁止在规则表达式里调外部 HTTP 服务，"
        "要什么特征找特征平台加。规则上线审核是张磊负责。回答用中文，简短点就行"
    )
    s.say("记下了。")
    s.user("今天好困，先提交吧")
    s.bash(
        "git add -A && git commit -m 'fix(rule): 增量加载改按 version; feat: expr 表达式 + Redis 名单'",
        "[fix/rule-reload 3be91c0] fix(rule): 增量加载改按 version; feat: expr 表达式 + Redis 名单\n 11 files changed, 318 insertions(+), 207 deletions(-)",
    )
    s.stop(ms=2210450)
    s.title("修复规则增量加载并切换 expr 表达式")

    s.exp(
        "root_cause",
        "zh",
        "部分 pod 规则不生效：增量加载用 `updated_at > lastLoad`，updated_at 是 DATETIME 只精确到秒，同一秒内后保存的规则"
        "永远满足不了 >，被漏掉；改为按 version 列（每次保存自增）增量拉取。",
        ["updated_at", "version"],
    )
    s.fact(
        "command",
        "zh",
        "单测 `make ut`；集成测试 `make it`，之前要先 `make env-up` 起本地 mysql 和 redis。",
        ["make it", "make env-up"],
    )
    s.decision(
        "zh",
        "规则条件从自研 DSL 换成 expr-lang/expr，不用 gopher-lua：运营写不来 Lua；expr 编译期做类型检查，保存规则时就能报错。",
        ["expr"],
        "expr",
        ["Lua"],
        ["类型检查"],
    )
    s.decision(
        "zh",
        "黑白名单命中改成查 Redis Set（SISMEMBER），不用每个 pod 的布隆过滤器：布隆过滤器删不了元素，解封必须实时；"
        "原来每次查 MySQL 在 8000 QPS 峰值时 CPU 打满。",
        ["Redis Set"],
        "Redis",
        ["布隆过滤器"],
        ["实时"],
    )
    s.fact(
        "constraint",
        "zh",
        "名单 Redis 的地址和密码放 k8s secret risk-redis，代码从 RISK_REDIS_ADDR / RISK_REDIS_PASSWORD 读。",
        ["risk-redis", "RISK_REDIS_PASSWORD"],
    )
    s.fact("convention", "zh", "规则 ID 统一用 `RC_业务线_四位序号` 格式，例如 RC_PAY_0031。", ["RC_业务线_四位序号"])
    s.fact("constraint", "zh", "禁止在规则表达式里调外部 HTTP 服务，需要的特征找特征平台加。", ["外部 HTTP"])
    s.fact("config", "zh", "规则上线审核由张磊负责。", ["张磊"])
    s.fact("preference", "zh", "用户要求回答用中文，简短一些。", ["简短"])
    s.fact("command", "zh", "本地起引擎用 `make run`（读 configs/local.yaml），gRPC 端口 9310。", ["make run", "9310"])
    s.ok(["risk_rule"], "规则存在 MySQL 的 risk_rule 表")
    s.ok(["expr.Compile"], "保存时 expr.Compile 校验")
    s.forbid("今天好困", "3be91c0", "ok  \trisk-engine/internal/rule", "risk-engine-7d9c6b8f5d-2xkqp")
    s.secret("Fk82mPq1Lz", "risk_rw:Fk82mPq1Lz@tcp(10.40.2.11:3306)/risk_rules", "Rk!list2026q")
    return s


def s2():
    s = Session("d2_risk_shadow_mode", CWD, "2026-11-16T06:30:00Z", branch="feat/shadow", lang="zh", order=2)
    s.snapshot()
    s.recall(
        [
            (201, "decision", "7 days ago", "规则条件从自研 DSL 换成 expr-lang/expr，不用 gopher-lua。"),
            (204, "fact", "7 days ago", "规则 ID 统一用 `RC_业务线_四位序号` 格式。"),
        ],
        event="SessionStart",
    )
    s.user("上周 RC_PAY_0040 上线直接误拦了一批正常用户，被业务骂惨了。想搞个上线前的验证机制，你有什么思路")
    s.say(
        "两个方向：\n1. 按流量比例灰度：新规则先对 5% 流量真实生效，再逐步放量；\n"
        "2. shadow 模式：新规则对全量流量执行、只记录命中结果，不影响决策，跑几天后对比命中率和误拦样本再转正式。\n"
        "灰度虽然比例小，误拦的还是真实用户；shadow 完全不影响用户，代价是要多算一遍。"
    )
    s.user("shadow 吧，一个真实用户都不想误拦了。跑多久合适？")
    s.say("至少覆盖一个完整的周末流量，建议 3 天起。")
    s.user("ok 就这么定了：新规则一律先 shadow 跑满 3 天，看过命中报告才能转正式")
    s.edit(
        "/home/dev/work/risk-engine/internal/decision/engine.go",
        "\tfor _, r := range e.rules.Active() {",
        "\tfor _, r := range e.rules.Shadow() {\n\t\te.shadowHit(ctx, r, r.Eval(env))\n\t}\n\tfor _, r := range e.rules.Active() {",
    )
    s.bash(
        "make ut",
        "go test -count=1 ./internal/...\n--- FAIL: TestHotReloadRecompile (0.02s)\n"
        "    engine_test.go:88: rule RC_PAY_0031 still evaluates old expression after reload (want hit=false, got hit=true)\n"
        "FAIL\trisk-engine/internal/decision\t0.644s",
        desc="跑单测",
        err=True,
    )
    s.read(
        "/home/dev/work/risk-engine/internal/rule/compile.go",
        "var progCache sync.Map // rule id -> *vm.Program\n\nfunc Program(r Rule) (*vm.Program, error) {\n"
        "\tif p, ok := progCache.Load(r.ID); ok {\n\t\treturn p.(*vm.Program), nil\n\t}\n\t...",
    )
    s.say(
        "编译缓存的 key 只有规则 ID，没带 version。规则热更新后 ID 不变，`progCache.Load` 直接命中旧的编译结果，新表达式永远不会被编译。"
        "缓存 key 改成 `id@version`，旧版本的条目在 reload 时顺手删掉。"
    )
    s.edit(
        "/home/dev/work/risk-engine/internal/rule/compile.go",
        "\tif p, ok := progCache.Load(r.ID); ok {",
        '\tkey := fmt.Sprintf("%s@%d", r.ID, r.Version)\n\tif p, ok := progCache.Load(key); ok {',
    )
    s.bash(
        "make ut",
        "go test -count=1 ./internal/...\nok  \trisk-engine/internal/decision\t0.702s\nok  \trisk-engine/internal/rule\t0.511s",
    )
    s.user("shadow 的命中结果存哪？我想顺便把正式决策日志也一起规范一下，现在是直接写 ES，大促时 ES bulk 一直 429")
    s.say(
        "建议引擎只往 Kafka 投决策日志（shadow 和正式用同一条消息，带 `mode` 字段），ES 和数仓都从 Kafka 消费。"
        "引擎这边异步发送，ES 慢了也不会拖住决策 RT，大促时 Kafka 能削峰。"
    )
    s.user("行，决策日志走 Kafka。topic 就叫 risk.decision.log，按 user_id 做 key")
    s.edit(
        "/home/dev/work/risk-engine/internal/decision/log.go",
        '\t_, err := l.es.Index("risk-decision", doc)',
        '\tl.producer.Send("risk.decision.log", ev.UserID, ev)',
    )
    s.user(
        "几个变化：gRPC 端口从 9310 改成 9410 了，9310 跟新上的 sidecar 冲突。规则上线审核也不是张磊了，换成王芳，张磊调去反欺诈了"
    )
    s.bash(
        "grep -rn 9310 configs deploy | head",
        "configs/local.yaml:3:  grpc_addr: :9310\ndeploy/k8s/service.yaml:12:      port: 9310",
    )
    s.edit("/home/dev/work/risk-engine/deploy/k8s/service.yaml", "      port: 9310", "      port: 9410")
    s.user(
        "另外规则命名再加一条：规则的 name 字段必须写清楚拦截场景，禁止用 test、tmp 开头，这个和 ID 格式是两回事。"
        "告警发企业微信群，webhook 是 https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=7f3e2a91-5c4d-4b8e-a0f6-19d2c8e7b345 ，放 secret 里"
    )
    s.say("好：name 字段的新规则单独加了保存时校验；企业微信 webhook 只放 k8s secret `risk-alert-wecom`，不进仓库。")
    s.user("辛苦了，下班")
    s.stop(ms=2650300)
    s.title("规则 shadow 模式与决策日志改走 Kafka")

    s.decision(
        "zh",
        "新规则上线一律先走 shadow 模式（全量执行、只记录命中、不影响决策）跑满 3 天，看过命中报告才能转正式，不用按比例灰度："
        "灰度误拦的仍是真实用户。",
        ["shadow", "3 天"],
        "shadow",
        ["灰度"],
        ["真实用户"],
    )
    s.exp(
        "root_cause",
        "zh",
        "规则热更新后仍按旧表达式执行：expr 编译缓存 progCache 的 key 只有规则 ID 没有 version，ID 不变就命中旧编译结果；"
        "缓存 key 改为 id@version。",
        ["progCache", "id@version"],
    )
    s.decision(
        "zh",
        "决策日志（shadow 和正式同一条消息，带 mode 字段）由引擎异步投 Kafka topic risk.decision.log（key=user_id），"
        "ES 和数仓从 Kafka 消费，不再直接写 ES：大促时 ES bulk 一直 429，Kafka 能削峰且不拖决策 RT。",
        ["risk.decision.log"],
        "Kafka",
        ["直接写 ES"],
        ["429"],
    )
    s.fact(
        "config",
        "zh",
        "引擎 gRPC 端口从 9310 改为 9410（9310 与新 sidecar 冲突）。",
        ["9410"],
        sup="d1_risk_rule_reload#e10",
    )
    s.fact("config", "zh", "规则上线审核改由王芳负责（张磊调去反欺诈）。", ["王芳"], sup="d1_risk_rule_reload#e8")
    s.fact(
        "convention",
        "zh",
        "规则 name 字段必须写清楚拦截场景，禁止用 test、tmp 开头（与规则 ID 格式是两条不同的规矩）。",
        ["name 字段", "tmp"],
    )
    s.fact(
        "config",
        "zh",
        "告警发企业微信群，webhook 只放在 k8s secret risk-alert-wecom 里，不进仓库。",
        ["risk-alert-wecom"],
    )
    s.ok(["RC_PAY_0040"], "误拦事件背景")
    s.forbid("辛苦了，下班", "不用 gopher-lua。", "`RC_业务线_四位序号` 格式。", "ok  \trisk-engine/internal/decision")
    s.secret("7f3e2a91-5c4d-4b8e-a0f6-19d2c8e7b345")
    return s


def s3():
    s = Session("d3_risk_eval_order_questions", CWD, "2026-11-20T03:00:00Z", branch="main", lang="zh", order=3)
    s.snapshot()
    s.user("问几个问题，不用改代码：一次决策里多条规则是按什么顺序执行的？命中一条拒绝之后还会继续算吗")
    s.maple_search(
        "规则 执行顺序 短路",
        [
            (211, "decision", "新规则上线一律先走 shadow 模式跑满 3 天。"),
            (213, "decision", "决策日志由引擎异步投 Kafka topic risk.decision.log。"),
        ],
    )
    s.read(
        "/home/dev/work/risk-engine/internal/decision/engine.go",
        "\tsort.SliceStable(rules, func(i, j int) bool { return rules[i].Priority > rules[j].Priority })\n"
        "\tfor _, r := range rules {\n\t\tif hit := r.Eval(env); hit && r.Action == ActionReject {\n"
        "\t\t\treturn Reject(r.ID)\n\t\t}\n\t}",
    )
    s.say(
        "按 `priority` 从高到低执行，同优先级保持加载顺序（SliceStable）。遇到第一条命中且动作为 REJECT 的规则就直接返回，后面的不再算。"
        "REVIEW 类的命中会记下来但不会短路。"
    )
    s.user("那 shadow 规则也会被短路掉吗")
    s.grep("Shadow()", "internal/decision/engine.go:41:\tfor _, r := range e.rules.Shadow() {", path="internal")
    s.say("不会，shadow 规则在正式规则之前单独跑完一轮，只记命中，不参与短路。")
    s.user("特征是每条规则自己取还是统一取的")
    s.grep(
        "FetchFeatures",
        "internal/decision/engine.go:29:\tenv, err := e.feat.FetchFeatures(ctx, req.UserID, e.rules.NeededFeatures())",
    )
    s.say("统一取：决策开始时把所有规则声明需要的特征一次性批量拉回来，组成 env，规则只读 env。")
    s.user("哦哦明白了，我之前一直以为是每条规则各取各的哈哈")
    s.interrupt()
    s.user("最后一个，特征拉取超时现在是多少？只是问问")
    s.grep(
        "FeatureTimeout",
        'internal/config/config.go:17:\tFeatureTimeout time.Duration `yaml:"feature_timeout" default:"30ms"`',
    )
    s.say("默认 30ms，配置项 `feature_timeout`。")
    s.user("ok 了解")
    s.stop(ms=520330)
    s.title("规则执行顺序与特征拉取答疑")
    s.ok(["priority"], "规则按 priority 从高到低执行，REJECT 短路；对现有代码的解释")
    s.ok(["feature_timeout"], "特征拉取超时默认 30ms")
    s.forbid("哈哈", "不用改代码", "先走 shadow 模式跑满 3 天", "异步投 Kafka topic risk.decision.log。")
    return s


def s4():
    s = Session("d4_risk_timeout_degrade", CWD, "2026-12-01T07:40:00Z", branch="fix/p99", lang="zh", order=4)
    s.snapshot()
    s.user(
        [
            reminder(
                [
                    (211, "decision", "2 weeks ago", "新规则上线一律先走 shadow 模式跑满 3 天。"),
                    (213, "decision", "2 weeks ago", "决策日志由引擎异步投 Kafka topic risk.decision.log。"),
                    (203, "fact", "3 weeks ago", "单测 `make ut`；集成测试 `make it`，之前要先 `make env-up`。"),
                ]
            ),
            "昨晚大促决策 p99 从 12ms 飙到 80ms，支付那边调用超时。帮我查一下。特征平台的调试 token 是 "
            "ftk_live_9QeR4vW2mX7zL1pN8sK3 ，别写进代码",
        ]
    )
    s.bash(
        "go test -run XXX -bench BenchmarkEval -benchmem ./internal/decision/ -cpuprofile cpu.out && go tool pprof -top -nodecount=4 cpu.out",
        "BenchmarkEval-16    	   21034	     56812 ns/op	   41208 B/op	     512 allocs/op\n"
        "Showing top 4 nodes\n      flat  flat%\n     3.41s 38.20%  regexp/syntax.(*parser).parse\n"
        "     1.92s 21.51%  regexp.compile\n     0.61s  6.83%  runtime.mallocgc\n     0.40s  4.48%  github.com/expr-lang/expr/vm.(*VM).Run",
        desc="压测 + pprof",
    )
    s.say(
        "60% 的 CPU 花在 `regexp` 编译上。几条新规则用了 expr 的 `matches` 运算符，右边的正则是运行时从特征里拼出来的字符串，"
        "expr 只有在正则是常量时才会在编译期预编译，动态正则每次执行都要 `regexp.Compile` 一遍。"
        "改法：把这些正则挪到规则配置的 `patterns` 字段，加载规则时预编译好，表达式里用自定义函数 `match(name, value)` 引用。"
    )
    s.edit(
        "/home/dev/work/risk-engine/internal/rule/compile.go",
        "\topts := []expr.Option{expr.Env(Features{}), expr.AsBool()}",
        '\topts := []expr.Option{expr.Env(Features{}), expr.AsBool(), expr.Function("match", r.precompiled.Match)}',
    )
    s.bash(
        "go test -run XXX -bench BenchmarkEval -benchmem ./internal/decision/",
        "BenchmarkEval-16    	  402118	      2961 ns/op	    1920 B/op	      31 allocs/op",
    )
    s.say("单次决策从 56.8µs 降到 3µs。")
    s.user(
        "好。以后规则里禁止用 matches 拼动态正则，正则统一写到 patterns 里。"
        "还有超时的时候怎么办？现在是特征拉取超时就整个决策报错，支付那边当成拒绝处理了"
    )
    s.say(
        "可以分两种降级：\n- fail-open：超时默认放行，记一条 degrade 日志事后回扫；\n- fail-close：超时默认拒绝。\n"
        "全部 fail-close 会在大促时把支付成功率打下来；全部 fail-open 大额交易风险太大。可以按金额分层。"
    )
    s.user("行，用分层：5 万以下超时放行，5 万及以上超时拒绝")
    s.say("好，金额阈值做成配置 `degrade.reject_amount_cents: 5000000`。")
    s.edit(
        "/home/dev/work/risk-engine/configs/local.yaml",
        "feature_timeout: 30ms",
        "feature_timeout: 30ms\ndegrade:\n  reject_amount_cents: 5000000",
    )
    s.compact(
        "- 大促 p99 升高：动态正则每次 regexp.Compile，已改为 patterns 预编译\n- 超时降级按金额分层，5 万以下放行\n- 下一步：shadow 周期和日志 topic"
    )
    s.user(
        "两个变更同步一下：风控委员会要求 shadow 期从 3 天延长到 7 天，要覆盖一个完整的账单日。"
        "决策日志 topic 数据组那边统一改名了，risk.decision.log 改成 risk.decision.v2，消息体加了 trace_id"
    )
    s.edit(
        "/home/dev/work/risk-engine/internal/decision/log.go",
        '\tl.producer.Send("risk.decision.log", ev.UserID, ev)',
        '\tl.producer.Send("risk.decision.v2", ev.UserID, ev)',
    )
    s.user(
        "还有本地环境现在不用 make env-up 了，集成测试改成 testcontainers 自己起 mysql/redis，直接 `make it` 就行，要本机有 docker"
    )
    s.bash(
        "make it",
        "go test -count=1 -tags=integration ./test/...\n2026/12/01 15:52:11 🐳 Creating container for image mysql:8.0\n"
        "2026/12/01 15:52:14 ✅ Container started: 3f1c0aa2b7e9\nok  \trisk-engine/test\t21.388s",
    )
    s.user("可以，提交，今天就这样吧")
    s.bash(
        "git add -A && git commit -m 'perf(rule): 正则预编译; feat(decision): 超时按金额分层降级'",
        "[fix/p99 a09d4e7] perf(rule): 正则预编译; feat(decision): 超时按金额分层降级\n 8 files changed, 143 insertions(+), 37 deletions(-)",
    )
    s.stop(ms=2890120)
    s.title("大促 p99 排查与超时降级")

    s.exp(
        "root_cause",
        "zh",
        "大促决策 p99 飙升：规则用 expr 的 matches 配合运行时拼出来的动态正则，expr 只对常量正则预编译，动态正则每次执行都 "
        "regexp.Compile，占 60% CPU；改为 patterns 字段加载时预编译，表达式里用 match() 引用。",
        ["regexp", "patterns"],
    )
    s.fact(
        "constraint",
        "zh",
        "规则里禁止用 matches 拼动态正则，正则统一写到规则的 patterns 字段里预编译。",
        ["matches", "patterns"],
    )
    s.decision(
        "zh",
        "特征拉取超时按金额分层降级：5 万以下超时放行（fail-open），5 万及以上超时拒绝（fail-close），不统一 fail-close 或 fail-open："
        "全部拒绝会拉低大促支付成功率，全部放行大额风险太大。",
        ["5 万"],
        "分层",
        ["fail-close"],
        ["支付成功率"],
    )
    s.decision(
        "zh",
        "新规则 shadow 期从 3 天延长到 7 天，要覆盖一个完整的账单日（风控委员会要求）。",
        ["7 天"],
        "7 天",
        ["3 天"],
        ["账单日"],
        sup="d2_risk_shadow_mode#e1",
    )
    s.fact(
        "config",
        "zh",
        "决策日志 Kafka topic 改名为 risk.decision.v2（原 risk.decision.log），消息体新增 trace_id。",
        ["risk.decision.v2"],
        sup="d2_risk_shadow_mode#e3",
    )
    s.fact(
        "command",
        "zh",
        "集成测试改用 testcontainers 自动起 mysql/redis，直接 `make it` 即可（本机要有 docker），不再需要 make env-up。",
        ["testcontainers"],
        sup="d1_risk_rule_reload#e2",
    )
    s.ok(["reject_amount_cents"], "降级金额阈值配置项")
    s.ok(["BenchmarkEval"], "压测命令")
    s.forbid(
        "今天就这样吧",
        "a09d4e7",
        "56812 ns/op",
        "先走 shadow 模式跑满 3 天。",
        "异步投 Kafka topic risk.decision.log。",
        "之前要先 `make env-up`。",
    )
    s.secret("ftk_live_9QeR4vW2mX7zL1pN8sK3")
    return s


SESSIONS = [s1, s2, s3, s4]
