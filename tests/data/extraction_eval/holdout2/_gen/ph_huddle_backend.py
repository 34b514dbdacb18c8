"""Project H (mixed): huddle-backend，兴趣社区 App 的后端（Go 1.23, gin, MySQL on 阿里云 RDS, Redis, Kafka, OSS）。"""

from lib import Session, reminder

CWD = "/home/dev/work/huddle-backend"


def s1():
    s = Session(
        "h1_huddle_feed_hybrid", CWD, "2027-01-12T06:05:00Z", branch="perf/feed-home", version="2.1.318", lang="mixed", order=1
    )
    s.snapshot()
    s.user(
        "今天计划：上午先把 feed 性能搞定，下午再看审核的方案。\n"
        "首页 feed 接口 /v1/feed/home 的 p99 到 2.3s 了，运营一搞活动就炸。local 起服务是 `make dev`，listen 在 :8080，"
        "你先 profile 一下看看"
    )
    s.bash(
        "make dev > /tmp/dev.log 2>&1 & sleep 6; hey -n 200 -c 20 -H 'X-Debug-Uid: 10086' http://localhost:8080/v1/feed/home | grep -E 'Average|99%'",
        "  Average:\t1.4121 secs\n  99% in 2.2871 secs",
        desc="local 压一下 feed/home",
    )
    s.bash(
        "grep -c 'SELECT \\* FROM `users` WHERE `users`.`id` = ' /tmp/dev.log",
        "4000",
    )
    s.say(
        "200 个请求打出了 4000 条 users 单行查询。`feed.Service.Home` 拉出 20 条 post 之后，在 loop 里对每条 post 单独 "
        "`db.First(&author, p.AuthorID)`，典型的 N+1，请求越多 DB 连接池越排队。改成先收集 author_id，"
        "一次 `WHERE id IN ?` 批量查，再把 user 基础信息放 Redis cache。"
    )
    s.edit(
        "/home/dev/work/huddle-backend/internal/feed/service.go",
        "\tfor i, p := range posts {\n\t\ts.db.First(&posts[i].Author, p.AuthorID)\n\t}",
        "\tauthors, err := s.users.BatchGet(ctx, authorIDs(posts)) // WHERE id IN ?\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tattachAuthors(posts, authors)",
    )
    s.bash(
        "hey -n 200 -c 20 -H 'X-Debug-Uid: 10086' http://localhost:8080/v1/feed/home | grep -E '99%'",
        "  99% in 0.3124 secs",
    )
    s.user("nice。but 根本问题是 feed 现在是纯 pull，每次读都要 merge 所有 followee 的 posts。要不要改成 push？")
    s.say(
        "三种思路：\n1. 纯 push（fan-out on write）：发帖时写进每个粉丝的 inbox（Redis ZSET），读的时候直接取，非常快；\n"
        "2. 纯 pull：就是现在这样，读时聚合；\n"
        "3. hybrid：普通用户发帖走 push，粉丝数超过阈值的大 V 不 fan-out，读的时候再把关注的大 V 最新帖子 pull 进来 merge。\n"
        "纯 push 的问题在大 V：发一条要写几十万个 inbox，写放大很严重。"
    )
    s.user("hybrid 吧，纯 push 大 V 那边扛不住，我们有好几个 50w 粉的 KOL。阈值先定 1w 粉丝")
    s.say(
        "好。inbox 我建议用 ZSET `feed:inbox:{uid}`，score 是发帖时间戳，只保留最近 800 条，key TTL 30 天，不活跃用户的 inbox 自然过期，"
        "回来的时候走 pull 重建。"
    )
    s.user("800 条 + 30 天 TTL ok，就这么办")
    s.edit(
        "/home/dev/work/huddle-backend/internal/feed/inbox.go",
        "// TODO: inbox",
        'const (\n\tinboxKey    = "feed:inbox:%d"\n\tinboxMaxLen = 800\n\tinboxTTL    = 30 * 24 * time.Hour\n\tbigVThreshold = 10000\n)',
    )
    s.user("图片上传也顺便定一下，现在是 client 先传给我们的 API，API 再转存 OSS")
    s.say(
        "可以改成 client 直传 OSS：API 只签发 presigned PUT URL（10 分钟有效，限定 content-type 和大小），上传完 client 再调 API 落库。"
        "走 API 中转的好处是服务端能做校验和压缩，但所有图片流量都要过 API 机器。"
    )
    s.user("直传。我们 API 机器出口带宽才 100Mbps，中转一上活动就打满了。压缩交给 OSS 的图片处理")
    s.user(
        "staging 库你也连一下，看看 migration 到哪了：huddle:Hd_st4g1ng!2027@tcp(rm-bp1x8k2q.mysql.rds.aliyuncs.com:3306)/huddle?parseTime=true&loc=Local"
    )
    s.bash(
        'HUDDLE_STG_DSN="$(cat /tmp/stg.dsn)" go run ./cmd/dbcheck',
        "tables: 41\nlatest migration: 20270108_0932_add_post_visibility",
    )
    s.bash(
        "golangci-lint run ./internal/feed/...",
        'level=error msg="Running error: context loading failed: failed to load packages: failed to load with go/packages: '
        'err: exit status 1: stderr: go: go.mod requires go >= 1.23 (running go 1.22.5; GOTOOLCHAIN=local)"',
        err=True,
    )
    s.say("本机的 golangci-lint 是用 go 1.22 编的，go.mod 要求 1.23，包加载不了。要不要我重装一个新版本的 lint？")
    s.user("先不管了，CI 上 lint 是好的，我晚点自己升")
    s.user(
        "几个规矩说一下：ORM 统一用 GORM，handler 里不要拼 raw SQL；错误码统一 5 位数字，前两位是模块号，feed 是 21xxx；"
        "feed 这块 owner 是 Kevin（林凯），架构改动先拉他 review。发帖成功会往 Kafka topic post_created 发一条，推荐那边在消费"
    )
    s.say("收到。")
    s.user("oh and branch naming is feat/HUD-<ticket>-<slug>, squash merge only, no merge commits on main")
    s.say("Got it, I'll use `perf/HUD-...` style for this one too and squash when merging.")
    s.user("行，今天先到这，晚上还要陪娃写作业 🥲")
    s.bash(
        "git add -A && git commit -m 'perf(feed): batch author lookup, hybrid inbox skeleton'",
        "[perf/feed-home 3fa91c2] perf(feed): batch author lookup, hybrid inbox skeleton\n 4 files changed, 97 insertions(+), 11 deletions(-)",
    )
    s.stop(ms=2388100)
    s.title("feed/home N+1 and hybrid fan-out")

    s.exp(
        "root_cause",
        "zh",
        "/v1/feed/home p99 2.3s：feed.Service.Home 在 loop 里对每条 post 单独查 author，N+1（200 个请求 4000 条 users 查询）；"
        "改成收集 author_id 后 WHERE id IN 批量查 + Redis cache。",
        ["N+1", "WHERE id IN"],
    )
    s.decision(
        "zh",
        "feed 从纯 pull 改成 hybrid：普通用户发帖 push（fan-out on write 到粉丝 inbox），大 V 不 fan-out、读时 pull 合并；"
        "不用纯 push，因为有好几个 50w 粉的 KOL，大 V 发一条要写几十万个 inbox。",
        ["hybrid"],
        "hybrid",
        ["纯 push"],
        ["50w"],
    )
    s.fact("config", "zh", "大 V 阈值先定 1w 粉丝：粉丝数超过阈值的用户发帖不做 fan-out。", ["1w 粉丝"])
    s.fact(
        "config",
        "zh",
        "feed inbox 用 Redis ZSET feed:inbox:{uid}，score 是发帖时间戳，只保留最近 800 条，key TTL 30 天，不活跃用户回来时 pull 重建。",
        ["feed:inbox:{uid}", "30 天"],
    )
    s.decision(
        "zh",
        "图片上传改成 client 直传 OSS（API 只签发 presigned PUT URL），不走 API 中转：API 机器出口带宽才 100Mbps，中转一上活动就打满；压缩交给 OSS 图片处理。",
        ["presigned"],
        "直传",
        ["中转"],
        ["100Mbps"],
    )
    s.fact("convention", "zh", "ORM 统一用 GORM，handler 里不要拼 raw SQL。", ["GORM", "raw SQL"])
    s.fact("convention", "zh", "错误码统一 5 位数字，前两位是模块号，feed 是 21xxx。", ["5 位", "21xxx"])
    s.fact("config", "zh", "feed 的 owner 是 Kevin（林凯），架构改动先拉他 review。", ["林凯"])
    s.fact("config", "zh", "发帖成功会往 Kafka topic post_created 发消息，推荐在消费。", ["post_created"])
    s.fact("command", "zh", "local 起服务用 `make dev`，listen 在 :8080。", ["make dev", ":8080"])
    s.fact(
        "convention",
        "en",
        "Branch naming is feat/HUD-<ticket>-<slug>; squash merge only, no merge commits on main.",
        ["feat/HUD-<ticket>-<slug>", "squash"],
    )
    s.ok(["golangci-lint"], "本机 golangci-lint 用 go 1.22 编译，加载不了要求 go 1.23 的模块（未修）")
    s.ok(["rm-bp1x8k2q"], "staging RDS 实例")
    s.forbid("陪娃", "下午再看审核", "3fa91c2", "99% in 0.3124", "tables: 41", "97 insertions(+)")
    s.secret(
        "Hd_st4g1ng!2027",
        "huddle:Hd_st4g1ng!2027@tcp(rm-bp1x8k2q.mysql.rds.aliyuncs.com:3306)/huddle?parseTime=true&loc=Local",
    )
    return s


def s2():
    s = Session(
        "h2_huddle_moderation", CWD, "2027-01-19T07:30:00Z", branch="feat/moderation", version="2.1.320", lang="mixed", order=2
    )
    s.snapshot()
    s.recall(
        [
            (601, "decision", "7 days ago", "feed 用 hybrid：普通用户 push，大 V pull。"),
            (608, "fact", "7 days ago", "feed 的 owner 是 Kevin（林凯）。"),
        ]
    )
    s.user("法务那边下了死命令，UGC 发布前必须过内容审核，下周就要上。方案你先给两个")
    s.say(
        "1. 阿里云内容安全：文本、图片都有同步和异步接口，按量计费，服务本身有合规资质；\n"
        "2. 自建：开源模型 + 自己标注数据微调，长期成本低，但要标注数据和算法人力，起步慢。"
    )
    s.user("Aliyun 的。自建我们一条标注数据都没有，而且监管要求审核服务有资质，自建过不了备案")
    s.say(
        "接入方式也得定：同步审核会让发帖接口多 1~3 秒（图片审核慢）；异步的话发帖先落库、状态 pending、只有作者自己可见，"
        "审核回调之后改成 published 或 rejected。"
    )
    s.user("async。发帖必须秒回，pending 期间只对作者可见没问题。rejected 的给作者发站内信")
    s.edit(
        "/home/dev/work/huddle-backend/internal/moderation/callback.go",
        "// TODO: moderation callback",
        "func (h *Handler) Callback(c *gin.Context) {\n\tev, err := h.verify(c)\n\t...\n\th.posts.SetStatus(ctx, ev.DataID, statusFrom(ev.Suggestion))\n}",
    )
    s.bash(
        "go test ./internal/moderation/...",
        "--- FAIL: TestCallbackSignature (0.00s)\npanic: config: env HUDDLE_CONFIG not set [recovered]\n"
        "\tpanic: config: env HUDDLE_CONFIG not set\nFAIL\thuddle/internal/moderation\t0.019s",
        err=True,
    )
    s.say(
        "单测在 init 里就要读配置，靠 HUDDLE_CONFIG 指定文件，直接 go test 拿不到。Makefile 里的 `make test` 会带上 "
        "`HUDDLE_CONFIG=configs/test.yaml`，用它跑。"
    )
    s.bash(
        "make test PKG=./internal/moderation/...",
        "HUDDLE_CONFIG=configs/test.yaml go test -count=1 ./internal/moderation/...\nok  \thuddle/internal/moderation\t0.412s",
    )
    s.user(
        "对，以后都用 make test，别直接 go test。阿里云的 AK 给你：LTAI5tHuddleMod9x2K / q8Vw3NmZp1Rt6YbLc0XeHs7KdJ4Ua2，"
        "先放本地 .env，线上走 KMS"
    )
    s.say("已放进本地 `.env`（在 .gitignore 里）；线上从 KMS 的 `huddle/green-ak` 读，代码里只认环境变量。")
    s.user(
        "顺便几个变更：local 端口改了，`make dev` 现在默认 :9080，8080 给 admin-web 的 dev proxy 用了。"
        "Kafka topic 平台组统一改名，post_created 改成 huddle.post.published.v1，推荐那边已经切过去了。"
        "另外新加一条规矩：所有 topic 的消息体都要带 event_id，下游拿它去重"
    )
    s.edit(
        "/home/dev/work/huddle-backend/internal/event/topics.go",
        'TopicPostCreated = "post_created"',
        'TopicPostPublished = "huddle.post.published.v1"',
    )
    s.edit("/home/dev/work/huddle-backend/configs/local.yaml", "http:\n  addr: :8080", "http:\n  addr: :9080")
    s.bash("make dev > /tmp/dev.log 2>&1 & sleep 6; curl -s localhost:9080/healthz", '{"ok":true}')
    s.say("topic 常量已改名，发帖事件的 envelope 加了 `event_id`（UUIDv7）；local 在 :9080 起来了。")
    s.user("今天年会抽奖我又是阳光普照 😂 收工")
    s.stop(ms=2051700)
    s.title("UGC moderation via Aliyun, async callback")

    s.decision(
        "zh",
        "UGC 审核用阿里云内容安全，不自建模型：没有标注数据，而且监管要求审核服务有资质，自建过不了备案。",
        ["阿里云内容安全"],
        "阿里云内容安全",
        ["自建"],
        ["资质"],
    )
    s.decision(
        "zh",
        "审核走 async：发帖先落库为 pending（只有作者可见），审核回调后改成 published / rejected，rejected 给作者发站内信；"
        "不用同步审核，因为发帖必须秒回（同步会多 1~3 秒）。",
        ["pending"],
        "async",
        ["同步审核"],
        ["秒回"],
    )
    s.exp(
        "fix",
        "zh",
        "直接 go test 会 panic: env HUDDLE_CONFIG not set；单测统一用 `make test`（带 HUDDLE_CONFIG=configs/test.yaml），不要直接 go test。",
        ["HUDDLE_CONFIG", "make test"],
    )
    s.fact(
        "config",
        "zh",
        "阿里云内容安全的 AK 本地放 .env（已 gitignore），线上从 KMS 的 huddle/green-ak 读。",
        ["huddle/green-ak"],
    )
    s.fact(
        "command",
        "zh",
        "`make dev` 现在默认 listen :9080（8080 给 admin-web 的 dev proxy 用）。",
        [":9080"],
        sup="h1_huddle_feed_hybrid#e10",
    )
    s.fact(
        "config",
        "zh",
        "发帖事件 topic 改名：post_created → huddle.post.published.v1（平台组统一命名），推荐已切换。",
        ["huddle.post.published.v1"],
        sup="h1_huddle_feed_hybrid#e9",
    )
    s.fact("convention", "zh", "所有 Kafka topic 的消息体都要带 event_id，下游用它去重。", ["event_id"])
    s.ok(["站内信"], "rejected 通知作者")
    s.forbid(
        "阳光普照",
        "0.412s",
        "普通用户 push，大 V pull。",
        "owner 是 Kevin（林凯）。",
    )
    s.secret("LTAI5tHuddleMod9x2K", "q8Vw3NmZp1Rt6YbLc0XeHs7KdJ4Ua2")
    return s


def s3():
    s = Session(
        "h3_huddle_redis_keys_questions", CWD, "2027-01-23T03:00:00Z", branch="main", version="2.1.321", lang="mixed", order=3
    )
    s.snapshot()
    s.user("在写 onboarding 文档，帮我列一下现在 Redis 里有哪些 key pattern，各自 TTL 多少。just 看看，don't touch anything")
    s.maple_search(
        "redis key pattern ttl inbox",
        [
            (604, "fact", "feed inbox 用 Redis ZSET feed:inbox:{uid}，只保留最近 800 条，key TTL 30 天。"),
            (612, "fact", "`make dev` 现在默认 listen :9080。"),
        ],
    )
    s.grep(
        "rediskey\\.",
        'internal/rediskey/keys.go:8:\tFeedInbox   = "feed:inbox:%d"\n'
        'internal/rediskey/keys.go:9:\tUserProfile = "user:profile:%d" // ttl 10m\n'
        'internal/rediskey/keys.go:10:\tPostRate    = "rl:post:%d"      // ttl 60s',
        path="internal/rediskey",
    )
    s.say(
        "一共三类：\n- `feed:inbox:{uid}`：ZSET，个人 feed inbox；\n- `user:profile:{uid}`：用户基础信息缓存，TTL 10 分钟；\n"
        "- `rl:post:{uid}`：发帖限流计数，TTL 60 秒。"
    )
    s.user("user:profile 的 10 分钟是怎么定的？改了昵称别人多久能看到")
    s.read(
        "/home/dev/work/huddle-backend/internal/user/cache.go",
        "// 改资料时主动 DEL，TTL 只是兜底，防止漏删导致脏数据常驻\nfunc (c *Cache) Invalidate(ctx context.Context, uid int64) error {\n"
        "\treturn c.rdb.Del(ctx, fmt.Sprintf(rediskey.UserProfile, uid)).Err()\n}",
    )
    s.say("改资料时会主动 DEL，所以基本是实时的；10 分钟 TTL 只是兜底，防止漏删的时候脏数据一直留着。")
    s.user("ok make sense。那 rl:post 是限流吧，阈值多少")
    s.grep("PostRate", "internal/post/ratelimit.go:14:\tlimit := 5 // posts per minute per user")
    s.say("对，每个用户每分钟最多 5 帖，超了返回 429。")
    s.user("哈哈 这个写文档刚好能用上")
    s.interrupt()
    s.user("行 我写文档去了 thx")
    s.stop(ms=365900)
    s.title("Redis key patterns for onboarding doc")
    s.ok(["user:profile"], "用户信息缓存 TTL 10 分钟，改资料主动 DEL；对现有代码的说明")
    s.ok(["rl:post"], "发帖限流每人每分钟 5 帖")
    s.forbid("don't touch anything", "哈哈 这个写文档", "只保留最近 800 条，key TTL 30 天。", "默认 listen :9080。")
    return s


def s4():
    s = Session(
        "h4_huddle_read_after_write", CWD, "2027-02-03T02:20:00Z", branch="fix/read-own-post", version="2.1.325", lang="mixed", order=4
    )
    s.snapshot()
    s.user(
        [
            reminder(
                [
                    (609, "fact", "3 weeks ago", "ORM 统一用 GORM，handler 里不要拼 raw SQL。"),
                    (605, "decision", "3 weeks ago", "图片上传 client 直传 OSS，API 只签 presigned URL。"),
                ]
            )
            + "\n用户反馈发完帖立刻刷新 timeline 看不到自己刚发的，过几秒又有了。复现率挺高，客服那边贴过来的日志：\n"
            "2027-02-02T21:14:07.118+0800 INFO post created post_id=88120341 uid=5520193\n"
            "2027-02-02T21:14:07.602+0800 INFO feed home uid=5520193 items=20 newest_post_id=88119870"
        ]
    )
    s.bash(
        "grep -n -A4 '^db:' configs/prod.yaml",
        "3:db:\n4:  primary: rm-bp1x8k2q.mysql.rds.aliyuncs.com:3306\n5:  replicas:\n6:    - rr-bp1y7c3n.mysql.rds.aliyuncs.com:3306\n7:  resolver: read_from_replica",
    )
    s.bash(
        "aliyun rds DescribeDBInstancePerformance --DBInstanceId rr-bp1y7c3n --Key MySQL_ReplicationDelay --StartTime 2027-02-02T13:00Z --EndTime 2027-02-02T14:00Z | jq -r '.PerformanceKeys.PerformanceKey[0].Values.PerformanceValue[-3:][].Value'",
        "0.6\n0.9\n1.1",
    )
    s.say(
        "root cause 是读写分离：dbresolver 把 timeline 的查询路由到只读实例 rr-bp1y7c3n，发帖的 INSERT 在主库，"
        "只读实例的复制延迟平时在 0.6~1.1 秒，作者发完 0.5 秒就刷新，读到的还是旧数据。\n\n两个方案：\n"
        "1. 写后读主：用户发帖后 5 秒内，他自己的读请求强制走主库（Redis 记一个 `rw:sticky:{uid}` 5 秒标记，resolver 看到就切主库）；\n"
        "2. 客户端乐观插入：发帖成功后 App 直接把帖子插到本地 timeline 顶部，服务端不动。"
    )
    s.user("第一个。第二个要等 App 发版，iOS 审核又要一周，而且 web 端也得再改一遍")
    s.edit(
        "/home/dev/work/huddle-backend/internal/db/resolver.go",
        "func (r *Resolver) Reader(ctx context.Context) *gorm.DB {\n\treturn r.replica",
        "func (r *Resolver) Reader(ctx context.Context) *gorm.DB {\n\tif r.sticky(ctx, UIDFrom(ctx)) {\n\t\treturn r.primary\n\t}\n\treturn r.replica",
    )
    s.user("这个是个 lesson：以后写完马上要读的场景（发帖、改资料、下单）都要考虑复制延迟，默认走主库")
    s.say("记下了。")
    s.user(
        "另外一个大事：GORM 我们已经全部 dropped 了，everything goes through sqlc now。SQL 写在 db/queries/*.sql，"
        "改完跑 `make sqlc` 生成代码。你刚才那个改法要换成 sqlc 的写法"
    )
    s.say(
        "明白。sqlc 下读写分离用两个 `*store.Queries`：`q.Primary` 和 `q.Replica`，sticky 标记存在时返回 Primary。"
    )
    s.edit(
        "/home/dev/work/huddle-backend/internal/db/resolver.go",
        "func (r *Resolver) Reader(ctx context.Context) *gorm.DB {\n\tif r.sticky(ctx, UIDFrom(ctx)) {\n\t\treturn r.primary\n\t}\n\treturn r.replica",
        "func (r *Resolver) Reader(ctx context.Context) *store.Queries {\n\tif r.sticky(ctx, UIDFrom(ctx)) {\n\t\treturn r.q.Primary\n\t}\n\treturn r.q.Replica",
    )
    s.bash(
        "make sqlc && make test PKG=./internal/feed/...",
        "sqlc generate -f db/sqlc.yaml\nHUDDLE_CONFIG=configs/test.yaml go test -count=1 ./internal/feed/...\nok  \thuddle/internal/feed\t1.204s",
    )
    s.user(
        "then 几个更新：feed 的 owner 换了，Kevin 去做直播了，以后 feed 找 May（陈美）。Redis 内存告警了，inbox 的 TTL 得砍一下"
    )
    s.say(
        "两个选择：\n- inbox TTL 从 30 天砍到 7 天，800 条上限不变，7 天没来的用户回来时走 pull 重建 inbox；\n"
        "- 不动 TTL，把 Redis 从 16G 升到 32G，月费多 2400 左右。"
    )
    s.user("不升配，TTL 改 7 天。7 天没登录的用户本来就少，回来 pull 重建一下 inbox 就行")
    s.edit("/home/dev/work/huddle-backend/internal/feed/inbox.go", "inboxTTL    = 30 * 24 * time.Hour", "inboxTTL    = 7 * 24 * time.Hour")
    s.user("错误码再加一条规矩：message 必须中英文都给，App 按 locale 选")
    s.say("好，`apperr.New` 改成必须传 `zh` 和 `en` 两个 message，缺一个编译期就报错。")
    s.bash(
        "git add -A && git commit -m 'fix(feed): read-your-writes via primary stickiness; inbox ttl 7d'",
        "[fix/read-own-post c40d9e6] fix(feed): read-your-writes via primary stickiness; inbox ttl 7d\n 7 files changed, 88 insertions(+), 23 deletions(-)",
    )
    s.user("ok 今天就到这 🍵")
    s.stop(ms=2470200)
    s.title("Own post missing after publish: replica lag")

    s.exp(
        "root_cause",
        "zh",
        "发帖后立刻刷新看不到自己的帖子：读写分离，timeline 查询走只读实例，复制延迟 0.6~1.1 秒，INSERT 在主库还没同步过来。",
        ["复制延迟", "只读实例"],
    )
    s.decision(
        "zh",
        "用写后读主：发帖后 5 秒内该用户的读请求强制走主库（Redis 标记 rw:sticky:{uid}），不用客户端乐观插入："
        "那要等 App 发版、iOS 审核又要一周，web 端也得再改。",
        ["rw:sticky:{uid}"],
        "写后读主",
        ["乐观插入"],
        ["iOS 审核"],
    )
    s.exp(
        "lesson",
        "zh",
        "写完马上要读的场景（发帖、改资料、下单）都要考虑复制延迟，默认走主库。",
        ["默认走主库"],
    )
    s.fact(
        "convention",
        "zh",
        "GORM 已经全部 dropped，统一用 sqlc：SQL 写在 db/queries/*.sql，改完跑 `make sqlc` 生成代码。",
        ["sqlc", "db/queries"],
        sup="h1_huddle_feed_hybrid#e6",
    )
    s.fact("config", "zh", "feed 的 owner 换成 May（陈美），Kevin 去做直播了。", ["陈美"], sup="h1_huddle_feed_hybrid#e8")
    s.decision(
        "zh",
        "Redis 内存告警：feed inbox TTL 从 30 天砍到 7 天（800 条上限不变），不把 Redis 从 16G 升到 32G：7 天没登录的用户本来就少，回来时 pull 重建 inbox。",
        ["TTL", "7 天"],
        "7 天",
        ["32G"],
        ["pull 重建"],
        sup="h1_huddle_feed_hybrid#e4",
    )
    s.fact("convention", "zh", "错误码的 message 必须中英文都给，App 按 locale 选。", ["locale"])
    s.ok(["rr-bp1y7c3n"], "只读实例 id")
    s.ok(["store.Queries"], "sqlc 下主从两个 Queries")
    s.forbid(
        "c40d9e6",
        "88 insertions(+)",
        "post_id=88120341",
        "handler 里不要拼 raw SQL。",
        "API 只签 presigned URL。",
    )
    return s


SESSIONS = [s1, s2, s3, s4]
