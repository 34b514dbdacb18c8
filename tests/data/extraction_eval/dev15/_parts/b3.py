import json

META = {
    "name": "b3_tiyun_telemetry_v2",
    "project": "tiyun",
    "order": 3,
    "language": "zh",
    "branch": "feat/telemetry-v2",
    "start": "2026-11-19T01:40:00Z",
    "version": "2.1.337",
    "title": "fault-detector 切换到 telemetry v2 topic",
}

R = "/home/dev/work/tiyun"

SEARCH = json.dumps(
    {
        "query": "fault-detector kafka topic consumer 负责人",
        "results": [
            {
                "id": 41,
                "layer": "fact",
                "kind": "config",
                "score": 0.82,
                "content": "数据链路：lift-ingest 从 EMQX 订阅 lift/+/telemetry，转到 Kafka topic lift.telemetry.raw，fault-detector 消费这个 topic。",
            },
            {
                "id": 44,
                "layer": "fact",
                "kind": "preference",
                "score": 0.61,
                "content": "fault-detector 由老韩（韩建国）负责，PR 找他 review。",
            },
            {
                "id": 47,
                "layer": "fact",
                "kind": "convention",
                "score": 0.44,
                "content": "maint-scheduler 用 actix-web 4，state 一律通过 web::Data<AppState> 注入。",
            },
        ],
    },
    ensure_ascii=False,
    indent=2,
)

CONFIG_RS = """use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct KafkaConfig {
    pub brokers: String,
    #[serde(default = "default_topic")]
    pub topic: String,
    #[serde(default = "default_group")]
    pub group_id: String,
}

fn default_topic() -> String {
    "lift.telemetry.raw".into()
}

fn default_group() -> String {
    "fault-detector".into()
}
"""

PANIC = """   Compiling fault-detector v0.9.4 (/home/dev/work/tiyun/fault-detector)
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.41s
     Running `target/debug/fault-detector`
2026-11-19T09:58:03.221+08:00  INFO fault_detector: starting v0.9.4 env=dev
2026-11-19T09:58:03.402+08:00 ERROR rdkafka::client: librdkafka: Global error: UnknownTopicOrPartition (Broker: Unknown topic or partition)
2026-11-19T09:58:03.403+08:00 ERROR fault_detector::consumer: subscription failed topic=tiyun.telemetry.v2 group=fault-detector.dev
Error: KafkaError (Subscription error: Broker: Unknown topic or partition)

Stack backtrace:
   0: anyhow::error::<impl anyhow::Error>::msg
   1: fault_detector::consumer::Consumer::start::{{closure}}
             at ./fault-detector/src/consumer.rs:58:21
   2: fault_detector::main::{{closure}}
             at ./fault-detector/src/main.rs:37:5
   3: tokio::runtime::park::CachedParkThread::block_on
   4: fault_detector::main
   5: core::ops::function::FnOnce::call_once"""


def build(s):
    s.user(
        "思远接手 fault-detector 了（老韩调去做海外项目了），今天跟他一起把 fault-detector 的 consumer 切到新 topic。"
        "你先看看现在 consumer 是怎么配的",
        gap=(1, 3),
    )
    s.tool(
        "mcp__maple__memory_search",
        {"query": "fault-detector kafka topic consumer 负责人", "project": R, "limit": 5},
        [{"type": "text", "text": SEARCH}],
        tur=[{"type": "text", "text": SEARCH}],
        run=(0.2, 0.8),
    )
    s.read(f"{R}/fault-detector/src/config.rs", CONFIG_RS)
    s.say(
        "现在 consumer 默认订阅 `lift.telemetry.raw`，group_id 就叫 `fault-detector`，没有区分环境（staging 和 prod "
        "连的是不同集群，所以一直没出事）。新 topic 叫什么？"
    )
    s.user(
        "topic 已经改名成 `tiyun.telemetry.v2` 了，小彭上周在 lift-ingest 里做了双写，旧 topic 月底下线。consumer group 名也按新"
        "规矩，格式是 `<服务名>.<env>`，比如 fault-detector.prod、fault-detector.stg",
        gap=(50, 120),
    )
    s.tool(
        "Grep",
        {"pattern": "FutureRecord", "path": f"{R}/lift-ingest/src", "output_mode": "content", "-n": True, "-A": 2},
        "lift-ingest/src/sink.rs:71:            let rec = FutureRecord::to(&self.topic_v2)\n"
        "lift-ingest/src/sink.rs-72-                .key(&frame.building_id)\n"
        "lift-ingest/src/sink.rs-73-                .payload(&bytes);",
    )
    s.say(
        "lift-ingest 双写的时候，v2 的 message key 用的是 `building_id`。fault-detector 的规则依赖同一台梯的帧按顺序到"
        "（`stopped_for` 是按连续帧累计的），building_id 做 key 单梯当然也有序，但大楼盘（陆家嘴那几栋一栋 40 多台梯）"
        "会把一个 partition 打热，consumer 那边 lag 也会集中在一个分区上。\n\n建议 v2 的 key 改成 `lift_id`：单梯依然有序，"
        "分布均匀得多。趁现在还没有下游依赖 v2，改起来成本最低。思远那边 OK 的话我一起改 lift-ingest。"
    )
    s.user("行，思远说没问题", gap=(60, 150))
    s.edit(
        f"{R}/lift-ingest/src/sink.rs",
        "                .key(&frame.building_id)\n",
        "                .key(&frame.lift_id) // 单梯有序；building_id 会让大楼盘把分区打热\n",
    )
    s.edit(
        f"{R}/fault-detector/src/config.rs",
        'fn default_topic() -> String {\n    "lift.telemetry.raw".into()\n}\n\nfn default_group() -> String {\n'
        '    "fault-detector".into()\n}\n',
        'fn default_topic() -> String {\n    "tiyun.telemetry.v2".into()\n}\n\nfn default_group() -> String {\n'
        '    format!("fault-detector.{}", crate::env::current())\n}\n',
    )
    s.bash("cargo run -p fault-detector", PANIC, "本地起 fault-detector 验证订阅", is_error=True, run=(10, 16))
    s.bash(
        "grep -n -A3 'kafka-topics' Makefile && grep -n 'auto.create' deploy/local/docker-compose.yml",
        "41:kafka-topics: ## create local topics from deploy/kafka/topics.yaml\n"
        "42:\t@scripts/kafka_topics.sh deploy/kafka/topics.yaml\n"
        "43:\n"
        'deploy/local/docker-compose.yml:27:      KAFKA_AUTO_CREATE_TOPICS_ENABLE: "false"',
        "找本地建 topic 的方式",
    )
    s.bash(
        "make kafka-topics",
        "exists  lift.telemetry.raw (partitions=12, rf=1)\ncreated tiyun.telemetry.v2 (partitions=12, rf=1)\n"
        "exists  tiyun.alarm.events (partitions=6, rf=1)",
        "建本地 topic",
    )
    s.bash(
        "timeout 20 cargo run -q -p fault-detector 2>&1 | head -3",
        "2026-11-19T10:01:47.018+08:00  INFO fault_detector: starting v0.9.4 env=dev\n"
        "2026-11-19T10:01:47.266+08:00  INFO fault_detector::consumer: subscribed topic=tiyun.telemetry.v2 "
        "group=fault-detector.dev partitions=12\n"
        "2026-11-19T10:01:49.511+08:00  INFO fault_detector::consumer: first batch lag=0 frames=318",
        "重新起 fault-detector",
        run=(20, 21),
    )
    s.say(
        "起来了。刚才那个 `Unknown topic or partition` 是本地 docker 的 kafka 关了 auto-create"
        "（`KAFKA_AUTO_CREATE_TOPICS_ENABLE=false`），新 topic 得先 `make kafka-topics`（读 deploy/kafka/topics.yaml）"
        "建出来。现在订阅的是 tiyun.telemetry.v2，group 是 fault-detector.dev。"
    )
    s.user(
        "好。还有个事，maint-scheduler 那边要加个接口，给 fault-detector 查某台梯当前有没有未关闭的急修单，"
        "避免同一台梯重复建单",
        gap=(80, 200),
    )
    s.read(
        f"{R}/maint-scheduler/src/main.rs",
        "use axum::{routing::{get, post}, Router};\n\n#[tokio::main]\nasync fn main() -> anyhow::Result<()> {\n"
        "    let state = AppState::from_env().await?;\n    let app = Router::new()\n"
        '        .route("/api/v1/tickets", post(tickets::create))\n'
        '        .route("/healthz", get(|| async { "ok" }))\n        .with_state(state);\n'
        '    let addr = std::env::var("LISTEN_ADDR").unwrap_or_else(|_| "127.0.0.1:8090".into());\n'
        "    axum::serve(tokio::net::TcpListener::bind(&addr).await?, app).await?;\n    Ok(())\n}\n",
    )
    s.say(
        "maint-scheduler 这边已经是 axum 了（`Router` + `with_state`）。我手上的记录还写着 actix-web，是已经迁移了吗？"
        "新 handler 我按 axum 的 `State<AppState>` extractor 写。"
    )
    s.user(
        "对，上个月迁到 axum 了，state 统一走 `State<AppState>`。\n\n另外维保计划现在改成每月 1 号和 16 号凌晨两点生成了，"
        "`0 2 1,16 * *`，README 里那句还是旧的，顺手改一下",
        gap=(40, 110),
    )
    s.edit(
        f"{R}/maint-scheduler/src/api/tickets.rs",
        "pub async fn create(\n",
        "/// GET /api/v1/lifts/:lift_id/open-tickets —— 未关闭的急修单，给 fault-detector 去重用\n"
        "pub async fn open_for_lift(\n    State(state): State<AppState>,\n    Path(lift_id): Path<String>,\n"
        ") -> Result<Json<Vec<Ticket>>, ApiError> {\n    Ok(Json(state.repo.open_tickets(&lift_id).await?))\n}\n\n"
        "pub async fn create(\n",
    )
    s.edit(
        f"{R}/maint-scheduler/README.md",
        "- 维保计划：每月 1 号 02:00 生成下月计划（`0 2 1 * *`）\n",
        "- 维保计划：每月 1 号和 16 号 02:00 生成（`0 2 1,16 * *`）\n",
    )
    s.bash(
        "cargo test -p maint-scheduler 2>&1 | tail -2",
        "test api::tickets::tests::open_for_lift_excludes_closed ... ok\n\n"
        "test result: ok. 19 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.64s",
        "跑 maint-scheduler 测试",
        run=(14, 20),
    )
    s.say(
        "新接口 `GET /api/v1/lifts/:lift_id/open-tickets` 加好了，19 个测试全过；README 的 cron 改成了 `0 2 1,16 * *`。"
        "fault-detector 那边建单前先查这个接口，我可以接着改。"
    )
    s.user(
        "OK，先提 PR 给思远 review，fault-detector 那边明天再说。我下午要去张江那个项目现场看梯，先撤了", gap=(50, 120)
    )
    s.stop_hook()


GOLD = {
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "preference",
            "lang": "zh",
            "text": "fault-detector 现在由思远负责（接手老韩），PR 找思远 review。",
            "must": ["思远", "fault-detector"],
            "supersedes": "b1_tiyun_trapped_false_alarm#e9",
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "遥测 Kafka topic 已改名为 tiyun.telemetry.v2（lift-ingest 双写中，旧 topic 月底下线），fault-detector "
            "消费新 topic。",
            "must": ["tiyun.telemetry.v2"],
            "supersedes": "b1_tiyun_trapped_false_alarm#e1",
        },
        {
            "id": "e3",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "Kafka consumer group 命名规则 `<服务名>.<env>`，例如 fault-detector.prod、fault-detector.stg。",
            "must": ["fault-detector.prod"],
        },
        {
            "id": "e4",
            "layer": "decision",
            "kind": "decision",
            "lang": "zh",
            "text": "tiyun.telemetry.v2 的 message key 用 lift_id 而不是 building_id：单梯依然有序，而 building_id 会让"
            "大楼盘把一个 partition 打热。",
            "must": ["lift_id"],
            "chosen": "lift_id",
            "over": ["building_id"],
            "why": ["打热"],
        },
        {
            "id": "e5",
            "layer": "experience",
            "kind": "fix",
            "lang": "zh",
            "text": "本地 docker 的 kafka 关了 auto-create（KAFKA_AUTO_CREATE_TOPICS_ENABLE=false），新 topic 要先 "
            "`make kafka-topics`（读 deploy/kafka/topics.yaml）建出来，否则 consumer 报 Unknown topic or partition。",
            "must": ["make kafka-topics"],
        },
        {
            "id": "e6",
            "layer": "fact",
            "kind": "convention",
            "lang": "zh",
            "text": "maint-scheduler 上个月已从 actix 迁到 axum，state 统一用 State<AppState> extractor。",
            "must": ["axum", "State<AppState>"],
            "supersedes": "b1_tiyun_trapped_false_alarm#e8",
        },
        {
            "id": "e7",
            "layer": "fact",
            "kind": "config",
            "lang": "zh",
            "text": "maint-scheduler 维保计划改为每月 1 号和 16 号凌晨两点生成：cron `0 2 1,16 * *`。",
            "must": ["0 2 1,16 * *"],
            "supersedes": "b1_tiyun_trapped_false_alarm#e6",
        },
    ],
    "acceptable": [
        {"must": ["open-tickets"], "note": "GET /api/v1/lifts/:lift_id/open-tickets for dedup of 急修单"},
        {"must": ["月底下线"], "note": "old topic retired at month end"},
        {"must": ["LISTEN_ADDR"], "note": "maint-scheduler listen address env var, default 127.0.0.1:8090"},
    ],
    "forbidden": [
        "转到 Kafka topic lift.telemetry.raw，fault-detector 消费这个 topic",
        "由老韩（韩建国）负责",
        "state 一律通过 web::Data<AppState> 注入",
        "张江",
        "first batch lag=0 frames=318",
        "19 passed",
        "Stack backtrace",
    ],
    "secrets": [],
}
