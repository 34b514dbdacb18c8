"""Project K (mixed): arena-server，手游对战后端（Go：gate-svc 长连接网关、match-svc 匹配、room-svc 战斗房间；Redis、NATS、Agones）。"""

from lib import Session, reminder

CWD = "/home/dev/work/arena-server"


def s1():
    s = Session(
        "k1_arena_match_requeue", CWD, "2027-01-12T06:40:00Z", branch="fix/stale-ticket", version="2.1.318",
        lang="mixed", order=1,
    )
    s.snapshot()
    s.user(
        "match-svc 这两天 queue time 很怪，p99 飙到 2 分多钟。Grafana 上 room_dissolved_total 也涨得飞快，reason 全是 join timeout。"
        "帮我看下 what's going on"
    )
    s.bash(
        "kubectl -n arena logs deploy/room-svc --since=2h | grep -m2 dissolved",
        "2027-01-12T13:02:11Z WARN room r-7c1e9a dissolved: player 10233871 not joined within 30s\n"
        "2027-01-12T13:05:40Z WARN room r-7c2f10 dissolved: player 10488102 not joined within 30s",
        desc="看 room 解散日志",
    )
    s.bash(
        "kubectl -n arena logs deploy/gate-svc --since=2h | grep 'player=10233871' | head -3 && redis-cli -h 10.70.0.31 HGETALL mm:ticket:t-5498",
        "13:01:38 INFO session s-9a1 closed player=10233871 reason=net_lost\n"
        "13:01:40 INFO session s-9f4 opened player=10233871 resume=true\n"
        "13:01:40 INFO enqueue player=10233871 ticket=t-5521 mode=ranked\n"
        "player\n10233871\nsession\ns-9a1\nmmr\n1502",
        desc="对照 gate 日志和 Redis 里的 ticket",
    )
    s.say(
        "找到了。玩家断线重连之后，gate-svc 用新 session（s-9f4）又 enqueue 了一次，生成新 ticket t-5521；但旧 ticket t-5498 还挂在 "
        "`mm:queue:asia` 里，绑的是已经关掉的 s-9a1。matcher 把旧 ticket 也撮合进了房间，room-svc 等 s-9a1 进房永远等不到，30s 后整房解散，"
        "其他 9 个人被踢回队列重排，queue time 就这么被拉长了。\n\n"
        "修法：ticket 改成以 player_id 为 key，一个玩家只允许一个活跃 ticket，enqueue 时覆盖旧的；gate 关 session 时顺手发 cancel。"
    )
    s.edit(
        "/home/dev/work/arena-server/match/queue.go",
        '\tkey := "mm:ticket:" + t.ID',
        '\tkey := "mm:ticket:p:" + strconv.FormatInt(t.PlayerID, 10) // one live ticket per player',
    )
    s.bash(
        "go test ./match/... -run Queue -count=1",
        "ok  \tarena/match\t0.412s",
    )
    s.user(
        "nice. 另外 Coco 一直吐槽，半夜高分段匹配要等好几分钟。现在是按段位 bucket 匹配的，钻石以上半夜就那么几十个人。你有什么 idea"
    )
    s.say(
        "三个方向：\n1. 保持段位 bucket，只调 bucket 边界：治标；\n"
        "2. 改成 MMR window 随等待时间扩大：初始 ±50，每等 10s 扩 50，上限 ±300，人少的时候自然会放宽；\n"
        "3. 直接上 Open Match：功能全，但要多运维一套 Redis + 好几个 component，对我们这个体量偏重。\n我建议 2。"
    )
    s.user("那就 2，扩 window 那个。Open Match 不上，就我们俩后端，维护不动。上限先 ±300。匹配参数以后 Coco 说了算，她是这块的 owner")
    s.edit(
        "/home/dev/work/arena-server/match/config/mm.yaml",
        "bucket_by: tier",
        "window:\n  initial: 50\n  step: 50\n  step_interval: 10s\n  max: 300",
    )
    s.user("还有，match 结果现在是 match-svc 直接 gRPC 调 room-svc 分房，room-svc 一发版 match 那边就一片 Unavailable。中间要不要加个 MQ？")
    s.say(
        "加一层消息可以把两边解耦。候选是 Kafka 和 NATS：\n- Kafka：持久化、可 replay，但运维重，延迟也高一些；\n"
        "- NATS（需要的话开 JetStream）：轻、延迟低，支持 request-reply，room-svc 重启期间消息可以由 JetStream 暂存。\n"
        "我们这个场景不需要回放历史匹配结果，NATS 更合适。"
    )
    s.user(
        "Kafka 太重了，我们不需要 replay，也不想再养一套集群。NATS 吧，subject 用 match.result.<region>。"
        "NATS 在 nats://match:Nt9xArena77@nats.arena.svc:4222 ，写到 .env.local 里，别提交"
    )
    s.say("好，match-svc 往 `match.result.<region>` publish，room-svc 订阅；连接串只放 `.env.local`（已在 .gitignore）。")
    s.user("最后一个：room-svc 的分配现在是自己在 Redis 里记哪个 pod 有空位，经常记错，明明有空 pod 却开不出房间")
    s.say(
        "两条路：继续修自研的分配逻辑，或者上 Agones：GameServer 有 Ready / Allocated 状态，Fleet 管副本数，Allocation API 原子地挑一个 Ready 的，"
        "缩容也不会杀已经 Allocated 的对局。自研这套本质上是在重写 Agones 的状态机。"
    )
    s.user("ok Agones then。自己维护分配状态机太累了，还老出错")
    s.user(
        "几个规矩记一下：gate 层 WebSocket 统一用 gorilla/websocket，别再引第二个 ws 库。本地 `make dev` 起 redis 和 nats，"
        "`make run SVC=match` 跑单个服务。Also: any PR touching match/ needs Fei's approval (大飞 is the only one who really gets the matcher), and commit messages stay in English."
    )
    s.say("Got it, noted.")
    s.user("今晚还要上分 😎，先 commit")
    s.bash(
        "git add -A && git commit -m 'fix(match): one live ticket per player, cancel on session close'",
        "[fix/stale-ticket 4fa19d2] fix(match): one live ticket per player, cancel on session close\n 5 files changed, 88 insertions(+), 21 deletions(-)",
    )
    s.stop(ms=2512300)
    s.title("断线重连残留 ticket 导致房间解散")

    s.exp(
        "root_cause",
        "zh",
        "match queue time 飙高、room join timeout 解散：玩家断线重连后 gate-svc 用新 session 又 enqueue 一次，旧 ticket 还挂在 "
        "mm:queue:asia 里绑着已关闭的 session，被撮合进房后 room-svc 等 30s 等不到人就解散，其余玩家重排。"
        "修复：ticket 以 player_id 为 key，一个玩家只有一个活跃 ticket，gate 关 session 时发 cancel。",
        ["旧 ticket", "player_id"],
    )
    s.decision(
        "zh",
        "匹配改成 MMR window 随等待时间扩大（初始 ±50，每 10s 扩 50，上限 ±300），不再按段位 bucket，也不上 Open Match："
        "半夜高分段按 bucket 要等好几分钟；Open Match 只有两个后端维护不动。",
        ["MMR"],
        "window",
        ["段位 bucket", "Open Match"],
        ["维护不动"],
    )
    s.fact("config", "zh", "匹配参数的 owner 是策划 Coco，参数她说了算。", ["Coco"])
    s.decision(
        "zh",
        "match 结果改为 match-svc 发 NATS subject match.result.<region>，room-svc 订阅，不再直接 gRPC 调用，也不用 Kafka："
        "Kafka 太重，不需要 replay；直连时 room-svc 一发版 match 就 Unavailable。",
        ["NATS"],
        "NATS",
        ["Kafka"],
        ["replay"],
    )
    s.fact("config", "zh", "NATS 地址 nats.arena.svc:4222，连接串（含账号密码）只写 .env.local，不提交。", ["nats.arena.svc:4222"])
    s.decision(
        "zh",
        "room-svc 分配改用 Agones（GameServer Ready/Allocated、Fleet、Allocation API），不再继续修自研的 Redis 分配：自己维护分配状态机太累还老出错。",
        ["Agones"],
        "Agones",
        ["自研"],
        ["状态机"],
    )
    s.fact("convention", "zh", "gate 层 WebSocket 统一用 gorilla/websocket，不引第二个 ws 库。", ["gorilla/websocket"])
    s.fact("command", "zh", "本地 `make dev` 起 redis 和 nats，`make run SVC=match` 跑单个服务。", ["make dev", "SVC=match"])
    s.fact("convention", "en", "Any PR touching match/ needs Fei's approval.", ["Fei"])
    s.fact("convention", "en", "Commit messages stay in English.", ["English"])
    s.ok(["mm:queue:asia"], "匹配队列 Redis key")
    s.forbid("上分", "4fa19d2", "10233871", "r-7c1e9a", "ok  \tarena/match")
    s.secret("Nt9xArena77", "nats://match:Nt9xArena77@nats.arena.svc:4222")
    return s


def s2():
    s = Session(
        "k2_arena_loadtest_chat", CWD, "2027-01-20T08:15:00Z", branch="main", version="2.1.320", lang="mixed", order=2
    )
    s.snapshot()
    s.recall(
        [
            (511, "decision", "8 days ago", "match 结果走 NATS subject，不用 Kafka。"),
            (514, "fact", "8 days ago", "匹配参数 owner 是 Coco。"),
            (516, "decision", "8 days ago", "room-svc 分配改用 Agones。"),
        ],
        event="SessionStart",
    )
    s.user("下午随便跑个小压测玩玩，数据不作数，下周 Tony 那边才正式压。bot 脚本怎么起来着")
    s.read(
        "/home/dev/work/arena-server/loadtest/README.md",
        "# loadtest\n\n    go run ./loadtest/bot -n 2000 -mode ranked -region asia\n\nFlags: -n bots, -mode ranked|casual, -region asia|sa",
    )
    s.say("README 里写的是 `go run ./loadtest/bot -n 2000 -mode ranked -region asia`，我按这个跑。")
    s.bash(
        "go run ./loadtest/bot -n 2000 -mode ranked -region asia 2>&1 | tail -1",
        "bots=2000 matched=1987 avg_queue=8.4s p99_queue=31.2s rooms=198 errors=0",
        desc="跑 2000 个 bot",
    )
    s.user("p99 31s 还行吧？")
    s.say(
        "对 2000 个 bot 来说正常：bot 的 MMR 是按正态分布随机的，大部分在窗口扩到 ±150 之前就成房了，只有两头的少数要等窗口继续放宽。"
        "真实分布两头更稀，正式压的时候看 p99 更有意义。"
    )
    s.user("room-svc 的 tick rate 是多少来着")
    s.grep("TickRate", "room/sim.go:12:const TickRate = 20 // Hz", path="room")
    s.say("20Hz，也就是每 50ms 一帧。")
    s.user("Agones 的 fleet 现在几个 replica？")
    s.bash(
        "kubectl -n arena get fleet room-fleet",
        "NAME         SCHEDULING   DESIRED   CURRENT   ALLOCATED   READY   AGE\nroom-fleet   Packed       40        40        3           37      6d",
    )
    s.say("40 个 GameServer，当前 3 个 Allocated，37 个 Ready。")
    s.user("ok 没啥问题。btw 你觉得 Packed 和 Distributed 哪个好？just curious")
    s.say(
        "Packed 会尽量把 GameServer 挤在少数节点上，缩容时空节点能被回收，省钱；Distributed 均匀铺开，单节点挂了影响面小。"
        "云上按节点计费的话一般用 Packed。"
    )
    s.user("了解，周五了摸鱼去 🐟")
    s.stop(ms=402100)
    s.title("小压测和 room 配置闲聊")
    s.ok(["TickRate"], "room-svc tick rate 20Hz（对现有代码的说明）")
    s.ok(["Packed"], "Agones fleet scheduling Packed vs Distributed 的解释")
    s.forbid(
        "摸鱼",
        "p99_queue=31.2s",
        "数据不作数",
        "match 结果走 NATS subject，不用 Kafka。",
        "匹配参数 owner 是 Coco。",
        "room-svc 分配改用 Agones。",
    )
    return s


def s3():
    s = Session(
        "k3_arena_room_oom_kcp", CWD, "2027-02-08T03:30:00Z", branch="fix/room-oom", version="2.1.322",
        lang="mixed", order=3,
    )
    s.snapshot()
    s.user(
        [
            reminder(
                [
                    (517, "decision", "4 weeks ago", "MMR window 初始 ±50，每 10s 扩 50，上限 ±300。"),
                    (522, "fact", "4 weeks ago", "gate 层 WebSocket 统一用 gorilla/websocket。"),
                ]
            ),
            "春节活动第一天 room-svc 被 OOMKilled 好几次，玩家打到一半房间没了，客服那边炸了。帮我查",
        ]
    )
    s.bash(
        "kubectl -n arena describe pod room-svc-gs-8kq2p | grep -A3 'Last State'",
        "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137",
        desc="看 OOM 的 pod",
    )
    s.bash(
        "kubectl -n arena port-forward room-svc-gs-x2m9d 6060 >/dev/null & sleep 1; go tool pprof -top -inuse_space http://localhost:6060/debug/pprof/heap | head -4",
        "Showing nodes accounting for 1.62GB, 97.1% of 1.67GB total\n      flat  flat%   sum%        cum   cum%\n"
        "    1.41GB 84.4% 84.4%     1.41GB 84.4%  arena/room.(*Room).appendFrame",
        desc="抓 heap profile",
    )
    s.read(
        "/home/dev/work/arena-server/room/room.go",
        "func (r *Room) loop() {\n\tt := time.NewTicker(time.Second / TickRate)\n\tgo func() {\n\t\tfor range t.C {\n"
        "\t\t\tr.step()\n\t\t}\n\t}()\n\t<-r.done\n}",
    )
    s.say(
        "OOM 是这么来的：每个房间的 `loop` 起了一个 ticker 和一个 goroutine。对局结束 `close(r.done)` 之后 loop 返回了，"
        "可 ticker 没 Stop，那个 goroutine 还在 `for range t.C` 里一直跑，闭包引用着 r，整局的 frameHistory（一局 30~40MB）永远回收不了。"
        "平时房间周转慢看不出来，春节活动几个小时就把 2GB limit 吃满。\n\n"
        "改法：`defer t.Stop()`，goroutine 里 select `r.done` 退出，对局结束时把 frameHistory 置 nil。"
    )
    s.edit(
        "/home/dev/work/arena-server/room/room.go",
        "\tt := time.NewTicker(time.Second / TickRate)\n\tgo func() {\n\t\tfor range t.C {\n\t\t\tr.step()\n\t\t}\n\t}()",
        "\tt := time.NewTicker(time.Second / TickRate)\n\tdefer t.Stop()\n\tgo func() {\n\t\tfor {\n\t\t\tselect {\n"
        "\t\t\tcase <-t.C:\n\t\t\t\tr.step()\n\t\t\tcase <-r.done:\n\t\t\t\tr.frameHistory = nil\n\t\t\t\treturn\n\t\t\t}\n\t\t}\n\t}()",
    )
    s.bash(
        "go test ./room/... -run TestRoomLeak -count=1 -v | tail -2",
        "    room_test.go:77: goroutines before=12 after=12\nok  \tarena/room\t1.208s",
    )
    s.user("以后 review 重点盯这个：time.NewTicker 用完必须 Stop，起 goroutine 一定要有退出条件")
    s.say("好，我加到 review checklist 里。")
    s.user("另外战斗帧现在还走 gate 的 WebSocket，4G 下 RTT p99 抖到 400ms，Coco 说手感很差。要不要换 UDP？")
    s.say(
        "根本问题是 TCP 的队头阻塞：丢一个包后面的帧全被堵住，调缓冲救不回来。可选：\n"
        "1. KCP（kcp-go）：UDP 上的 ARQ，重传激进，可以开 FEC，游戏里用得很多；\n"
        "2. QUIC（quic-go）：标准协议，但握手和拥塞控制偏保守；\n3. 保持 WebSocket，关 Nagle、调发送缓冲：改善有限。"
    )
    s.user(
        "行，KCP。QUIC 我们去年测过，部分运营商对 UDP 443 有 QoS，表现反而更差。WebSocket 保留给大厅和聊天，战斗包走 KCP"
    )
    s.user(
        "对了 matching 这块 owner 换了：Coco 调去新项目了，matchmaking params are owned by Leo (周磊) from now on. "
        "Leo 看了两周数据，说 ±300 的上限太宽，高分局胜率偏差太大，改成 ±200"
    )
    s.edit("/home/dev/work/arena-server/match/config/mm.yaml", "  max: 300", "  max: 200")
    s.user("最后，对局回放现在存 MySQL 的 blob 字段，一局 2-3MB，replay 表已经 800G 了，备份一次要一晚上")
    s.say(
        "回放这种大对象建议放对象存储：OSS 存文件，MySQL 只存索引（match_id、路径、大小），生命周期规则可以自动过期。"
        "另一个选择是 MongoDB GridFS，但那等于再引一个数据库。"
    )
    s.user(
        "放 OSS。bucket 用 arena-replay，路径 replay/<season>/<match_id>.bin，生命周期 30 天自动删。MongoDB 我们没人会运维，不考虑"
    )
    s.user("Grafana 帮我加个 room OOM 的 panel，service account token: glsa_Q2hK8mPz4Rt7Vx1Nw9Lb5Cy3Fd6Gj0Sa_7e21c9ab")
    s.bash(
        'curl -s -X POST https://grafana.arena.internal/api/dashboards/db -H "Authorization: Bearer $GRAFANA_TOKEN" '
        "-H 'Content-Type: application/json' -d @ops/dashboards/room.json",
        '{"id":88,"slug":"arena-room","status":"success","uid":"arena-room","version":4}',
        desc="更新 dashboard",
    )
    s.say("加好了，token 我用环境变量传的，没落盘。")
    s.user("ok 今天就这些，新年快乐 🧧")
    s.stop(ms=2802700)
    s.title("room-svc OOM、KCP 与回放存储")

    s.exp(
        "root_cause",
        "zh",
        "room-svc OOMKilled：房间 loop 里 time.NewTicker 没 Stop，tick goroutine 在对局结束后仍 for range t.C，闭包引用 Room，"
        "整局 frameHistory（30~40MB）无法回收；修复：defer t.Stop()，goroutine select r.done 退出并清空 frameHistory。",
        ["NewTicker", "frameHistory"],
    )
    s.exp("lesson", "zh", "time.NewTicker 用完必须 Stop，起 goroutine 一定要有退出条件，review 重点看。", ["Stop", "退出条件"])
    s.decision(
        "zh",
        "战斗帧同步改走 KCP（UDP），WebSocket 只保留给大厅和聊天；不用 QUIC：部分运营商对 UDP 443 有 QoS，去年测过表现更差。"
        "原因是 4G 下 WebSocket（TCP 队头阻塞）RTT p99 抖到 400ms。",
        ["KCP"],
        "KCP",
        ["QUIC"],
        ["QoS"],
    )
    s.fact("config", "zh", "匹配参数 owner 换成 Leo（周磊），Coco 调去新项目。", ["Leo"], sup="k1_arena_match_requeue#e3")
    s.decision(
        "zh",
        "MMR window 上限从 ±300 收紧到 ±200：Leo 看了两周数据，高分局胜率偏差太大。",
        ["±200"],
        "±200",
        ["±300"],
        ["胜率"],
        sup="k1_arena_match_requeue#e2",
    )
    s.decision(
        "zh",
        "对局回放改存 OSS bucket arena-replay，MySQL 只存索引，不再存 MySQL blob，也不用 MongoDB GridFS：replay 表已 800G，"
        "MongoDB 没人会运维。",
        ["arena-replay"],
        "OSS",
        ["blob", "GridFS"],
        ["运维"],
    )
    s.fact("convention", "zh", "回放文件路径 replay/<season>/<match_id>.bin。", ["replay/<season>/<match_id>.bin"])
    s.fact("config", "zh", "回放在 OSS 上保留 30 天，生命周期规则自动删除。", ["30 天"])
    s.ok(["队头阻塞"], "TCP 队头阻塞的解释")
    s.forbid(
        "新年快乐",
        "room-svc-gs-8kq2p",
        "Exit Code:    137",
        "1.41GB 84.4%",
        '"uid":"arena-room"',
        "初始 ±50，每 10s 扩 50，上限 ±300。",
        "gate 层 WebSocket 统一用 gorilla/websocket。",
    )
    s.secret("glsa_Q2hK8mPz4Rt7Vx1Nw9Lb5Cy3Fd6Gj0Sa_7e21c9ab")
    return s


def s4():
    s = Session(
        "k4_arena_gate_ws_panic", CWD, "2027-02-22T02:50:00Z", branch="feat/coder-websocket", version="2.1.325",
        lang="mixed", order=4,
    )
    s.snapshot()
    s.user(
        "gate-svc 昨晚 panic 重启了 6 次，每次掉一大片玩家。log 贴一下：\n\n"
        "panic: concurrent write to websocket connection\n\ngoroutine 88213 [running]:\n"
        "github.com/gorilla/websocket.(*messageWriter).flushFrame(0xc0031a2f00, 0x1, {0x0, 0x0, 0x0})\n\tgate/conn.go:141 +0x3e5"
    )
    s.maple_search(
        "gate websocket panic concurrent write",
        [
            (522, "fact", "gate 层 WebSocket 统一用 gorilla/websocket，不引第二个 ws 库。"),
            (531, "decision", "战斗帧同步走 KCP，WebSocket 只保留给大厅和聊天。"),
        ],
    )
    s.grep(
        "WriteMessage",
        "gate/conn.go:141:\tc.ws.WriteMessage(websocket.BinaryMessage, b)\n"
        "gate/heartbeat.go:37:\tc.ws.WriteMessage(websocket.PingMessage, nil)",
        path="gate",
    )
    s.say(
        "原因是 gorilla 的 Conn 只支持一个并发 writer（文档原话：one concurrent reader and one concurrent writer）。我们的推送 goroutine（conn.go:141）"
        "和心跳 goroutine（heartbeat.go:37）各自直接 WriteMessage，撞到一起就 panic。春节后大厅推送量上来了，碰撞概率跟着变高。\n\n"
        "三种改法：\n1. 每个 conn 加一把 write mutex，改动最小；\n2. 单 writer goroutine + send channel；\n"
        "3. 换 coder/websocket：Write 本身并发安全，原生支持 context，Ping 会等 pong。"
    )
    s.user(
        "直接换 coder/websocket。mutex 只是止血，我们那套 gorilla 的 ping/pong handler 写得一团糟，趁这次一起重写。以后 gate 就用 coder/websocket"
    )
    s.edit(
        "/home/dev/work/arena-server/gate/conn.go",
        '\t"github.com/gorilla/websocket"',
        '\t"github.com/coder/websocket"',
    )
    s.bash(
        "go build ./gate/...",
        "# arena/gate\ngate/conn.go:58:14: undefined: websocket.Upgrader\ngate/conn.go:141:9: c.ws.WriteMessage undefined (type *websocket.Conn has no field or method WriteMessage)",
        err=True,
    )
    s.say("coder/websocket 没有 Upgrader，握手用 `websocket.Accept(w, r, opts)`；写消息改成 `c.ws.Write(ctx, websocket.MessageBinary, b)`。")
    s.edit(
        "/home/dev/work/arena-server/gate/conn.go",
        "\tws, err := upgrader.Upgrade(w, r, nil)",
        '\tws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{"*.arena.game"}})',
    )
    s.bash(
        "go build ./gate/... && go test ./gate/... -count=1",
        "ok  \tarena/gate\t2.031s",
    )
    s.user("心跳你顺便定一下。现在是客户端每 5s 发一次 ping，服务端被动回")
    s.say(
        "建议反过来由服务端发：coder/websocket 的 `Ping(ctx)` 会阻塞到收到 pong，15s 一次、连续 3 次失败就断开。"
        "客户端发 ping 的话，想调间隔得等客户端发版，线上还挂着一堆老版本；服务端发，改配置就行。"
    )
    s.user("sounds right, do it. 服务端发，15s 一次，3 次没 pong 就断")
    s.edit(
        "/home/dev/work/arena-server/gate/heartbeat.go",
        "\tc.ws.WriteMessage(websocket.PingMessage, nil)",
        "\tctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)\n\tdefer cancel()\n\tif err := c.ws.Ping(ctx); err != nil {\n\t\tc.missed++\n\t}",
    )
    s.user("上线怎么搞？gate 一重启玩家就全断线")
    s.say("要么全量滚动发布（每次一个 pod，连接会被迁走重连），要么先只切一个 region 灰度，观察 panic 和断线率再全量。")
    s.user("先切 sg-1 一个 region 跑两天，没问题再全量。全量滚动我不敢，换库这种改动出了问题就是全服掉线")
    s.user(
        "几个配置变化：NATS 迁到 JetStream 集群了，新地址 nats-js.arena.svc:4222，老的 nats.arena.svc 月底关。"
        "回放保留从 30 天改成 14 天，OSS 账单太吓人。另外加一条：回放只存排位赛，娱乐模式不存。"
        "panic 告警发飞书群，机器人 webhook 是 https://open.feishu.cn/open-apis/bot/v2/hook/3c9e1f7a-2b4d-4e8a-9f06-5d1c7b2e8a44 ，放 secret arena-alert-feishu"
    )
    s.bash(
        "ossutil lifecycle --method put oss://arena-replay ops/oss/lifecycle-14d.xml",
        "\n0.231342(s) elapsed",
        desc="更新回放 bucket 生命周期",
    )
    s.say("都处理了：`.env.local` 模板里 NATS 改成新地址，生命周期改 14 天，回放上传前判断 mode == ranked，webhook 只放 secret `arena-alert-feishu`。")
    s.user("👍 撤了")
    s.bash(
        "git add -A && git commit -m 'feat(gate): switch to coder/websocket, server-side heartbeat'",
        "[feat/coder-websocket b7e02c4] feat(gate): switch to coder/websocket, server-side heartbeat\n 7 files changed, 164 insertions(+), 119 deletions(-)",
    )
    s.stop(ms=2706900)
    s.title("gate-svc concurrent write panic，换 coder/websocket")

    s.exp(
        "root_cause",
        "zh",
        "gate-svc panic: concurrent write to websocket connection：gorilla/websocket 的 Conn 只允许一个并发 writer，"
        "推送 goroutine 和心跳 goroutine 各自直接 WriteMessage，撞到一起就 panic。",
        ["concurrent write", "心跳"],
    )
    s.decision(
        "zh",
        "gate 层 WebSocket 从 gorilla/websocket 换成 coder/websocket（Write 并发安全、原生 context），不只是加 write mutex 止血："
        "gorilla 那套 ping/pong handler 写得一团糟，趁机重写。以后 gate 就用 coder/websocket。",
        ["coder/websocket"],
        "coder/websocket",
        ["mutex"],
        ["ping/pong"],
        sup="k1_arena_match_requeue#e7",
    )
    s.decision(
        "zh",
        "心跳改由服务端发：15s 一次 Ping，连续 3 次没 pong 就断开；不再由客户端每 5s 发 ping：客户端调间隔要等发版，线上老版本多。",
        ["15s"],
        "服务端",
        ["客户端"],
        ["发版"],
    )
    s.decision(
        "zh",
        "换库上线先只切 sg-1 一个 region 跑两天，没问题再全量，不直接全量滚动：换库出问题就是全服掉线。",
        ["sg-1"],
        "sg-1",
        ["全量滚动"],
        ["全服掉线"],
    )
    s.fact(
        "config",
        "zh",
        "NATS 迁到 JetStream 集群，新地址 nats-js.arena.svc:4222，老的 nats.arena.svc 月底关。",
        ["nats-js.arena.svc:4222"],
        sup="k1_arena_match_requeue#e5",
    )
    s.fact("config", "zh", "回放保留从 30 天改为 14 天（OSS 账单太高）。", ["14 天"], sup="k3_arena_room_oom_kcp#e8")
    s.fact("convention", "zh", "回放只存排位赛，娱乐模式不存。", ["排位赛"])
    s.fact("config", "zh", "panic 告警发飞书群机器人，webhook 放 secret arena-alert-feishu。", ["arena-alert-feishu"])
    s.ok(["websocket.Accept"], "coder/websocket 没有 Upgrader，握手用 websocket.Accept")
    s.forbid(
        "撤了",
        "b7e02c4",
        "goroutine 88213",
        "0.231342(s) elapsed",
        "不引第二个 ws 库。",
        "战斗帧同步走 KCP，WebSocket 只保留给大厅和聊天。",
    )
    s.secret(
        "https://open.feishu.cn/open-apis/bot/v2/hook/3c9e1f7a-2b4d-4e8a-9f06-5d1c7b2e8a44",
        "3c9e1f7a-2b4d-4e8a-9f06-5d1c7b2e8a44",
    )
    return s


SESSIONS = [s1, s2, s3, s4]
