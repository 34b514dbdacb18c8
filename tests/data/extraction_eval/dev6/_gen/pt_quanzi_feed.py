"""quanzi-feed 圈子社区 feed 服务 (Python 3.12 / Django 5 + DRF：feed-api；Celery rank-worker；push-gateway；
Postgres、Redis feed-cache、阿里云 ACK). Code-switched (中文句子 + English terms). Sessions t1-t3."""

from lib import Session, maple_block, reminder

CWD = "/home/dev/work/quanzi-feed"
P = "t1_quanzi_feed_n_plus_one"


def t1():
    s = Session(
        P, CWD, "2026-03-04T03:00:00.000Z", branch="perf/feed-n-plus-one", version="2.1.318", lang="mixed", order=1
    )
    s.snapshot()
    s.user(
        "feed 的 p99 latency 从昨天开始飙到 1.8s 了，Grafana 上看主要是 /api/v2/feed 这个 endpoint。帮我看下 "
        "feed/views.py，standup 上老板点名了 😅"
    )
    s.forbid("老板点名")
    s.read(
        "/home/dev/work/quanzi-feed/feed/views.py",
        "class TimelineView(ListAPIView):\n    serializer_class = PostSerializer\n    pagination_class = FeedCursorPagination\n\n"
        "    def get_queryset(self):\n        return Post.objects.filter(circle__members=self.request.user).order_by('-created_at')\n\n"
        "class PostSerializer(serializers.ModelSerializer):\n    is_following = serializers.SerializerMethodField()\n"
        "    liked = serializers.SerializerMethodField()\n\n    def get_is_following(self, post):\n"
        "        return post.author.followers.filter(id=self.context['request'].user.id).exists()\n\n"
        "    def get_liked(self, post):\n        return post.likes.filter(user=self.context['request'].user).exists()",
    )
    s.bash(
        "pytest tests/feed/test_timeline.py -k query_count -q",
        "F                                                                        [100%]\n"
        "E       AssertionError: 41 queries executed, 3 expected\n1 failed in 2.31s",
        desc="跑 query count 测试",
        err=True,
    )
    s.forbid("41 queries executed")
    s.say(
        "找到了。PostSerializer 里每个 post 都单独查一次 `author.followers` 判断 is_following，再单独查一次 like 状态，"
        "典型的 N+1：一页 20 条就是 1 + 20×2 = 41 次 query。三个修法：\n"
        "1. 用 prefetch_related + Prefetch，把当前用户的 follow / like 状态一次查出来，serializer 里只读内存\n"
        "2. follow 关系放 Redis bitmap，serializer 里查 Redis\n3. 整页结果 cache 60 秒\n我倾向 1。"
    )
    s.exp(
        "root_cause",
        "zh",
        "/api/v2/feed 慢是 N+1：PostSerializer 对每个 post 单独查 author.followers（is_following）和 "
        "like 状态，一页 20 条就是 41 次 query。",
        ["N+1"],
    )
    s.user("1 吧。3 不行，feed 是个性化的，cache 整页命中率会很低。2 以后再说。")
    s.decision(
        "zh",
        "feed N+1 用 prefetch_related + Prefetch 一次查出 follow/like 状态（方案 1），不做整页 cache（feed "
        "是个性化的，命中率低），Redis bitmap 以后再说。",
        ["prefetch_related"],
        "prefetch_related",
        ["整页"],
        ["个性化"],
    )
    s.edit(
        "/home/dev/work/quanzi-feed/feed/views.py",
        "        return Post.objects.filter(circle__members=self.request.user).order_by('-created_at')",
        "        user = self.request.user\n        return (Post.objects.filter(circle__members=user).order_by('-created_at')\n"
        "                .prefetch_related(Prefetch('author__followers', queryset=User.objects.filter(id=user.id), "
        "to_attr='me_follow'),\n                                  Prefetch('likes', queryset=Like.objects.filter(user=user), "
        "to_attr='my_likes')))",
    )
    s.bash(
        "pytest tests/feed/test_timeline.py -q",
        "....                                                                     [100%]\n4 passed in 1.97s",
        desc="跑 timeline 测试",
    )
    s.say(
        "过了，query 数降到 3。注意一个坑：Django 5 里 prefetch_related 之后再调 .iterator()，必须传 chunk_size，"
        "不然直接抛错；4.x 更糟，是静默地不做 prefetch。export 任务里用了 .iterator()，我改成了 .iterator(chunk_size=200)。"
    )
    s.exp(
        "gotcha",
        "zh",
        "Django 5 里 prefetch_related 之后调 .iterator() 必须传 chunk_size，否则报错（4.x 是静默不做 prefetch）。",
        ["chunk_size"],
    )
    s.user("nice 👍 顺便 migrate 一下本地库，我刚 rebase 了 main")
    s.bash(
        "python manage.py migrate",
        "Operations to perform:\n  Apply all migrations: admin, auth, feed, social\nRunning migrations:\n"
        "  Applying feed.0012_follow_index...Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.12/site-packages/django/db/backends/utils.py", line 105, in _execute\n'
        "    return self.cursor.execute(sql, params)\n"
        'django.db.utils.ProgrammingError: relation "social_follow" does not exist',
        desc="跑 migration",
        err=True,
    )
    s.read(
        "/home/dev/work/quanzi-feed/feed/migrations/0012_follow_index.py",
        "class Migration(migrations.Migration):\n    dependencies = [\n        ('feed', '0011_post_circle'),\n    ]\n"
        "    operations = [\n        migrations.RunSQL('CREATE INDEX CONCURRENTLY ... ON social_follow (followee_id, follower_id)'),\n    ]",
    )
    s.edit(
        "/home/dev/work/quanzi-feed/feed/migrations/0012_follow_index.py",
        "        ('feed', '0011_post_circle'),",
        "        ('feed', '0011_post_circle'),\n        ('social', '0007_follow'),",
    )
    s.bash(
        "python manage.py migrate",
        "Running migrations:\n  Applying social.0007_follow... OK\n  Applying feed.0012_follow_index... OK",
        desc="重跑 migration",
    )
    s.say(
        "feed/0012 在 social_follow 上建 index，但 dependencies 里没声明 ('social', '0007_follow')，所以 migrate 的顺序"
        "不保证 social 先跑，本地库上就炸了。加上依赖之后正常。"
    )
    s.exp(
        "fix",
        "zh",
        'migrate 报 relation "social_follow" does not exist：feed/0012_follow_index 没声明依赖 '
        "('social', '0007_follow')，加上 dependency 即可。",
        ["0007_follow"],
    )
    s.user(
        "记一下几个规矩：PR title 必须带 Jira key 前缀，比如 `FEED-482 fix feed N+1`；feed 的 cursor pagination "
        "默认 page size 20，max_page_size=50，别让 client 随便传。"
    )
    s.fact("convention", "zh", "PR title 必须带 Jira key 前缀（如 `FEED-482 fix feed N+1`）。", ["Jira key"])
    s.fact("config", "zh", "feed cursor pagination 默认 page size 20，max_page_size=50。", ["max_page_size", "50"])
    s.say("FeedCursorPagination 里现在 max_page_size 是 None，我改成 50 了。")
    s.user(
        "rank-worker 是 Celery，高优先级的 task 走 rank_high 这个 queue；celery beat 每 10 分钟 recompute 一次 hot score。"
        "rank-worker 有问题找 Leo，他是 owner。"
    )
    s.fact("config", "zh", "rank-worker（Celery）高优先级 task 走 rank_high queue。", ["rank_high"])
    s.fact("config", "zh", "celery beat 每 10 分钟 recompute 一次 hot score。", ["10 分钟", "hot score"])
    s.fact("preference", "zh", "rank-worker 的 owner 是 Leo，有问题找他。", ["Leo"])
    s.say("了解。")
    s.user("hot score 存哪比较好？我们要在圈子首页按 hot score 排序。")
    s.say(
        "几个选择：\nA. Redis ZSET，每个圈子一个 key，点赞/评论时 ZINCRBY 增量更新\n"
        "B. Postgres materialized view，定时 REFRESH CONCURRENTLY\nC. 放 OpenSearch 里用 function_score 排序"
    )
    s.user("A，首页要近实时，点赞之后几秒内就要体现出来。OpenSearch 太重了，我们也没人运维。")
    s.decision(
        "zh",
        "hot score 存 Redis ZSET（每个圈子一个 key，ZINCRBY 增量更新），不用 Postgres materialized view 或 "
        "OpenSearch，因为首页要近实时（点赞后几秒内体现），OpenSearch 太重没人运维。",
        ["ZSET", "近实时"],
        "ZSET",
        ["OpenSearch"],
        ["近实时"],
    )
    s.say("好，那我在 rank/tasks.py 里点赞、评论的时候 ZINCRBY，beat 的全量重算负责把 decay 补上。")
    s.user(
        "推送统一走 JPush，别直接调小米/华为这些厂商通道。JPush 的 master secret 是 9f8e7d6c5b4a39281706f5e4，已经配在 "
        "env 里了。ok 今天先这样，thx"
    )
    s.secret("9f8e7d6c5b4a39281706f5e4")
    s.fact("convention", "zh", "推送统一走 JPush，不直接调小米/华为等厂商通道。", ["JPush", "厂商通道"])
    s.forbid("今天先这样")
    s.say("收到。我把 N+1 的修复和 migration 依赖一起提了 PR：`FEED-482 fix feed N+1`。")
    s.stop(ms=455600)
    s.title("修 feed timeline 的 N+1")
    s.last_prompt("推送统一走 JPush")
    return s


def t2():
    s = Session(
        "t2_quanzi_rank_onboarding",
        CWD,
        "2026-03-11T07:20:00.000Z",
        branch="main",
        version="2.1.321",
        lang="mixed",
        order=2,
    )
    recalled = [
        (8, "fact", "7 天前", "rank-worker（Celery）高优先级 task 走 rank_high queue"),
        (12, "decision", "7 天前", "hot score 存 Redis ZSET，每个圈子一个 key，ZINCRBY 增量更新"),
    ]
    s.snapshot()
    s._env(
        "attachment",
        0.05,
        attachment={
            "type": "hook_additional_context",
            "content": [maple_block(recalled)],
            "hookName": "SessionStart",
            "hookEvent": "SessionStart",
        },
    )
    s.forbid("高优先级 task 走 rank_high queue", "每个圈子一个 key，ZINCRBY 增量更新")
    s.user("hi，我是新来的 Sam，这周开始接 rank 相关的活。想先搞懂 hot score 是怎么算的，decay 是怎么做的？")
    s.forbid("我是新来的 Sam")
    s.read(
        "/home/dev/work/quanzi-feed/rank/score.py",
        "HALF_LIFE_HOURS = 6\n\ndef hot_score(likes: int, comments: int, age_hours: float) -> float:\n"
        "    raw = likes + 2 * comments\n    return raw * 0.5 ** (age_hours / HALF_LIFE_HOURS)",
    )
    s.say(
        "hot score = (likes + 2 × comments) × 0.5^(age / 6h)，也就是半衰期 6 小时的指数 decay：一个帖子 6 小时后分数减半，"
        "12 小时后剩四分之一。评论权重是点赞的两倍。"
    )
    s.ok(["HALF_LIFE_HOURS"], "对现有 hot score 公式的解释（新人提问）")
    s.user("那它存在哪？是实时更新的吗？")
    s.maple_search(
        "hot score 存储",
        [
            (12, "decision", "hot score 存 Redis ZSET，每个圈子一个 key，ZINCRBY 增量更新"),
        ],
    )
    s.say(
        "存在 Redis 里，每个圈子一个 sorted set；点赞和评论时增量更新，另外 celery beat 定时全量重算一遍，把 decay 补上。"
        "代码在 rank/tasks.py 的 recompute_circle。"
    )
    s.user("ok。我跑下 rank 的 test 熟悉一下。Leo 跟我说跑 test 一定要加 --reuse-db，不然每次重建 test DB 要两分钟。")
    s.fact("command", "zh", "跑 pytest 要加 --reuse-db，否则每次重建 test DB 要两分钟。", ["--reuse-db"])
    s.bash(
        "pytest tests/rank --reuse-db -q",
        "......F...                                                               [100%]\n"
        "FAILED tests/rank/test_decay.py::test_half_life - assert 0.49999999999999994 == 0.5\n1 failed, 9 passed in 3.12s",
        desc="跑 rank 测试",
        err=True,
    )
    s.say(
        "test_half_life 挂了，是浮点比较的问题：0.5 ** 1 算出来没问题，但 age 是从 datetime 差值算的，有微小误差。"
        "用 pytest.approx 比较就行，要我改吗？"
    )
    s.ok(["test_half_life"], "rank 的 decay 测试浮点比较失败，未修复（等 owner 看）")
    s.user("先不改，我问下 Leo 这个 test 是不是本来就 flaky。中午吃啥，楼下那家麻辣烫又涨价了 😂")
    s.forbid("麻辣烫")
    s.say("哈哈，那换家吧。test 先不动，等 Leo 回复。")
    s.stop(ms=88400)
    s.title("新人了解 hot score")
    s.last_prompt("先不改，我问下 Leo")
    return s


def t3():
    s = Session(
        "t3_quanzi_hotscore_migration",
        CWD,
        "2026-03-20T05:45:00.000Z",
        branch="feat/hotscore-mv",
        version="2.1.326",
        lang="mixed",
        order=3,
    )
    recalled = [
        (12, "decision", "16 天前", "hot score 存 Redis ZSET，每个圈子一个 key，ZINCRBY 增量更新"),
        (10, "fact", "16 天前", "rank-worker 的 owner 是 Leo，有问题找他"),
    ]
    s.snapshot()
    s.user(
        reminder(recalled) + "\nRedis feed-cache 那台内存告警了，已经 85%，主要是 hot score 的 ZSET。帮我想想怎么办。"
    )
    s.forbid("ZINCRBY 增量更新", "有问题找他")
    s.bash(
        "redis-cli -h feed-cache --bigkeys | tail -4",
        "Biggest zset found 'hot:circle:10293' has 1843210 members\n"
        "18223 zsets with 7391022014 members (99.12% of keys, avg size 405.58)\n"
        "used_memory_human:13.61G",
        desc="看 big keys",
    )
    s.forbid("1843210 members", "used_memory_human")
    s.say(
        "基本都是 hot:circle:* 的 ZSET，大圈子一个 key 就 180 万 member，因为从来没截断过。几个方向：\n"
        "a. 每个圈子的 ZSET 只留 top 500，ZREMRANGEBYRANK 定期截断\n"
        "b. hot score 挪到 Postgres，用 materialized view + REFRESH CONCURRENTLY\n"
        "c. 给 feed-cache 扩容到 32G"
    )
    s.user("b 吧。扩容是治标，截断的话长尾圈子的排序就不对了。产品那边也说了，几分钟的延迟可以接受。")
    s.decision(
        "zh",
        "hot score 从 Redis ZSET 挪到 Postgres materialized view + REFRESH CONCURRENTLY（方案 b），不扩容 "
        "feed-cache（治标）也不截断到 top 500（长尾圈子排序会不对）；产品接受几分钟延迟。",
        ["materialized view"],
        "materialized view",
        ["扩容", "截断"],
        ["长尾圈子"],
        sup=P + "#e10",
    )
    s.say("好，我先写 MV 的 SQL。在哪个库上试？")
    s.user("用 staging 库试，连这个：postgresql://feed_rw:Qz8!mPx3wL@pg-feed-stg.internal:5432/feed")
    s.secret("Qz8!mPx3wL", "postgresql://feed_rw:Qz8!mPx3wL@pg-feed-stg.internal:5432/feed")
    s.bash(
        'psql "$STG_DSN" -f rank/sql/circle_hot_score.sql && psql "$STG_DSN" -c \'REFRESH MATERIALIZED VIEW '
        "CONCURRENTLY circle_hot_score'",
        'SELECT 2210934\nERROR:  cannot refresh materialized view "public.circle_hot_score" concurrently\n'
        "HINT:  Create a unique index with no WHERE clause on one or more columns of the materialized view.",
        desc="建 MV 并试 refresh",
        err=True,
    )
    s.edit(
        "/home/dev/work/quanzi-feed/rank/sql/circle_hot_score.sql",
        "CREATE INDEX circle_hot_score_rank ON circle_hot_score (circle_id, score DESC);",
        "CREATE INDEX circle_hot_score_rank ON circle_hot_score (circle_id, score DESC);\n"
        "CREATE UNIQUE INDEX circle_hot_score_pk ON circle_hot_score (circle_id, post_id);",
    )
    s.bash(
        'psql "$STG_DSN" -f rank/sql/circle_hot_score.sql && psql "$STG_DSN" -c \'REFRESH MATERIALIZED VIEW '
        "CONCURRENTLY circle_hot_score'",
        "SELECT 2210934\nCREATE INDEX\nCREATE INDEX\nREFRESH MATERIALIZED VIEW",
        desc="重试",
    )
    s.say(
        "REFRESH MATERIALIZED VIEW CONCURRENTLY 要求 MV 上至少有一个不带 WHERE 的 unique index，否则直接报错。"
        "我在 (circle_id, post_id) 上加了 unique index，现在 refresh 能并发跑，不锁读。"
    )
    s.exp(
        "fix",
        "zh",
        "REFRESH MATERIALIZED VIEW CONCURRENTLY 报错：MV 上必须有不带 WHERE 的 unique index；在 "
        "circle_hot_score (circle_id, post_id) 上加 unique index 解决。",
        ["CONCURRENTLY", "unique index"],
    )
    s.forbid("SELECT 2210934")
    s.user("refresh 频率的话，hot score 现在每 3 分钟算一次就行，beat schedule 改一下。")
    s.fact(
        "config",
        "zh",
        "hot score 现在每 3 分钟算一次（celery beat schedule）。",
        ["3 分钟", "hot score"],
        sup=P + "#e8",
    )
    s.edit(
        "/home/dev/work/quanzi-feed/rank/celery_beat.py",
        "'schedule': crontab(minute='*/10'),",
        "'schedule': crontab(minute='*/3'),",
    )
    s.say("beat 改成 */3 了。")
    s.user("另外高优先级的 queue 已经改成 rank-priority 了，跟 infra 那边的 naming 对齐。")
    s.fact("config", "zh", "rank-worker 高优先级 queue 已改名为 rank-priority。", ["rank-priority"], sup=P + "#e7")
    s.bash(
        'grep -rn "rank_high" --include=*.py .',
        "./rank/celery_app.py:14:    'rank.tasks.bump_score': {'queue': 'rank_high'},\n"
        "./deploy/worker.yaml:22:        - -Q rank_high,rank-batch",
        desc="找旧 queue 名",
    )
    s.edit("/home/dev/work/quanzi-feed/rank/celery_app.py", "{'queue': 'rank_high'}", "{'queue': 'rank-priority'}")
    s.say("celery_app.py 的 route 改了，deploy/worker.yaml 里的 -Q 参数也一起改成 rank-priority。")
    s.user("rank-priority 只放 1 秒以内能跑完的 task，长任务一律丢 rank-batch。")
    s.fact(
        "constraint", "zh", "rank-priority queue 只放 1 秒以内能跑完的 task，长任务一律走 rank-batch。", ["rank-batch"]
    )
    s.say(
        "refresh MV 那个 task 要十几秒，我放到 rank-batch 了；bump_score 留在 rank-priority。deploy/worker.yaml 也改了。"
    )
    s.user("rank 这块以后找孙萌，刘一鸣转岗去做 infra 了。")
    s.fact("preference", "zh", "rank 这块以后找孙萌（刘一鸣转岗去做 infra 了）。", ["孙萌"], sup=P + "#e9")
    s.say("好。")
    s.user("max_page_size 现在是 30，iOS 那边一页最多就渲染 30 条，多了浪费流量。")
    s.fact(
        "config",
        "zh",
        "feed cursor pagination 的 max_page_size 现在是 30（iOS 一页最多渲染 30 条）。",
        ["max_page_size", "30"],
        sup=P + "#e6",
    )
    s.edit("/home/dev/work/quanzi-feed/feed/pagination.py", "    max_page_size = 50", "    max_page_size = 30")
    s.say("改好了。")
    s.user("还有 cursor 一律用 opaque 的 base64 string，不要把 post id 直接暴露给 client。")
    s.fact(
        "constraint",
        "zh",
        "feed 的 cursor 一律用 opaque 的 base64 string，不把 post id 直接暴露给 client。",
        ["opaque"],
    )
    s.say(
        "现在的 cursor 是 DRF CursorPagination 默认的 base64 编码 position，里面其实是 created_at；不含 post id，符合要求。"
    )
    s.user(
        "最后一个：不再用 JPush 了，换成个推（Getui），SDK 已经换好了，你把 push-gateway 里 JPush 的 client 删掉。"
        "个推的到达回执要不要接？"
    )
    s.fact("convention", "zh", "推送不再用 JPush，换成个推（Getui）。", ["个推"], sup=P + "#e11")
    s.bash(
        "grep -rln 'jpush' push-gateway/",
        "push-gateway/clients/jpush.py\npush-gateway/settings.py",
        desc="找 JPush 残留",
    )
    s.say(
        "删掉了 clients/jpush.py 和 settings 里的 JPUSH_* 配置。回执两种接法：\n"
        "A. 接个推的 callback 回执，写进 push_receipts 表\nB. 每小时拉一次报表接口"
    )
    s.user("A，运营要看实时到达率，一小时太慢了。")
    s.decision(
        "zh",
        "个推到达回执接 callback 写进 push_receipts 表（A），不每小时拉一次报表，因为运营要看实时到达率。",
        ["push_receipts"],
        "callback",
        ["拉一次报表"],
        ["实时到达率"],
    )
    s.say("好，回执 endpoint 我加在 push-gateway 的 /callbacks/getui，验签用 env 里的 GETUI_MASTER_SECRET。")
    s.stop(ms=688100)
    s.title("hot score 迁到 materialized view")
    s.last_prompt("A，运营要看实时到达率")
    return s


SESSIONS = [t1, t2, t3]
