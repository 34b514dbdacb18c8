# -*- coding: utf-8 -*-
"""Hand-written team memories. Each tuple:
(key, lang, layer, text, entities, relations, outcome)"""

M = []
def m(key, lang, layer, text, entities, relations=None, outcome=None):
    M.append((key, lang, layer, text, entities, relations or [], outcome))

# ---------------------------------------------------------------- ownership / topology
m("t001", "en", "fact",
  "Alice Chen owns billing-service end to end. Anything that touches proration or the invoice rounding code needs her review before merge, even if someone else already approved.",
  ["Alice Chen", "billing-service"], [["Alice Chen", "owns", "billing-service"]])
m("t002", "en", "fact",
  "ledger-api calls billing-service over gRPC (GetInvoiceTotals). client timeout 800ms, 2 retries w/ jitter via acme.common.retry",
  ["ledger-api", "billing-service", "gRPC", "acme.common.retry"],
  [["ledger-api", "calls", "billing-service"], ["ledger-api", "uses", "acme.common.retry"]])
m("t003", "zh", "fact",
  "陈爱丽负责计费服务的发布审批。周五下午三点以后原则上不批，线上事故的 hotfix 除外。",
  ["Alice Chen", "billing-service"], [["Alice Chen", "approves_releases_of", "billing-service"]])
m("t004", "en", "fact",
  "payments-gateway: primary owner is Bobby, backup is Marcus. Bobby is in Madrid so don't expect answers before 9am CET.",
  ["payments-gateway", "Bob Martinez", "Marcus Okafor"],
  [["Bob Martinez", "owns", "payments-gateway"], ["Marcus Okafor", "backup_owner_of", "payments-gateway"]])
m("t005", "mixed", "fact",
  "invoice_worker 现在是大伟在维护, 有问题直接 DM 他, 别在 #billing-eng 里 @here, 上次被吐槽了 lol",
  ["invoice_worker", "Zhang Wei"], [["Zhang Wei", "maintains", "invoice_worker"]])
m("t006", "en", "fact",
  "invoice_worker consumes billing.invoice.created from Kafka (group invoice-worker-v2), renders the PDF, and hands the email off to notification-service.",
  ["invoice_worker", "billing.invoice.created", "Kafka", "notification-service"],
  [["invoice_worker", "consumes", "billing.invoice.created"], ["invoice_worker", "calls", "notification-service"]])
m("t007", "en", "fact",
  "P. Natarajan (priya.n@corp.example) is tech lead for risk-engine and sits on the payments architecture review.",
  ["Priya Natarajan", "risk-engine"], [["Priya Natarajan", "leads", "risk-engine"]])
m("t008", "zh", "fact",
  "风控引擎的规则改动要走 PR，至少要风控组一个人 approve 才能合。规则文件不在仓库根目录，在 rules/ 下面。",
  ["risk-engine"])
m("t009", "en", "fact",
  "auth-service belongs to Tom Becker's team. it mints the short-lived service tokens (15 min) that every internal gRPC call carries in metadata.",
  ["auth-service", "Tom Becker", "gRPC"], [["Tom Becker", "owns", "auth-service"]])
m("t010", "en", "fact",
  "user-profile-api - owner Sofia. Reads from its own Postgres schema, caches profiles in Redis for 10 min.",
  ["user-profile-api", "Sofia Rossi", "Postgres", "Redis"],
  [["Sofia Rossi", "owns", "user-profile-api"], ["user-profile-api", "uses", "Redis"], ["user-profile-api", "uses", "Postgres"]])
m("t011", "zh", "fact",
  "刘洋是搜索组的，search-indexer 和 OpenSearch 集群都归他管。",
  ["Liu Yang", "search-indexer", "OpenSearch"],
  [["Liu Yang", "owns", "search-indexer"], ["Liu Yang", "owns", "OpenSearch"]])
m("t012", "en", "fact",
  "H. Tanaka owns order-service and inventory-sync. inventory-sync pulls stock levels from the warehouse vendor and writes them into order-service's database.",
  ["Hiroshi Tanaka", "order-service", "inventory-sync"],
  [["Hiroshi Tanaka", "owns", "order-service"], ["Hiroshi Tanaka", "owns", "inventory-sync"], ["inventory-sync", "writes_to", "order-service"]])
m("t013", "zh", "fact",
  "陈静（chen.jing@corp.example）负责对账任务，每个月跑一次上个月的 Stripe 和 Adyen 结算对账。",
  ["Chen Jing", "recon_job", "Stripe", "Adyen"], [["Chen Jing", "owns", "recon_job"]])
m("t014", "en", "fact",
  "W. Zhang owns report_builder. Finance pulls the monthly revenue CSVs it drops into the shared bucket.",
  ["Zhang Wei", "report_builder"], [["Zhang Wei", "owns", "report_builder"]])
m("t015", "mixed", "fact",
  "大伟说 report_builder 的 SQL 是直接查 ledger-api 的只读副本的, 不走 API。所以改 ledger 表结构之前一定要提前跟他说一声。",
  ["Zhang Wei", "report_builder", "ledger-api"], [["report_builder", "reads_from", "ledger-api"]])
m("t016", "en", "fact",
  "tax-calculator is a thin wrapper around the vendor tax API. billing-service calls it synchronously when finalizing every invoice. A. Chen owns it too, mostly because nobody else wanted it.",
  ["tax-calculator", "billing-service", "Alice Chen"],
  [["billing-service", "calls", "tax-calculator"], ["Alice Chen", "owns", "tax-calculator"]])
m("t017", "en", "fact",
  "webhook-dispatcher sends our outbound webhooks to merchants. Signing secret rotation is still manual; marcus.okafor@corp.example has the script on the ops box.",
  ["webhook-dispatcher", "Marcus Okafor"], [["Marcus Okafor", "maintains", "webhook-dispatcher"]])
m("t018", "en", "fact",
  "refund-service calls payments-gateway to actually issue the refund, then posts a reversal entry through ledger-api.",
  ["refund-service", "payments-gateway", "ledger-api"],
  [["refund-service", "calls", "payments-gateway"], ["refund-service", "calls", "ledger-api"]])
m("t019", "zh", "fact",
  "退款服务现在归王磊，去年十月从 Bob 手里交接过来的。",
  ["refund-service", "Wang Lei", "Bob Martinez"], [["Wang Lei", "owns", "refund-service"]])
m("t020", "en", "fact",
  "`audit_log_writer` tails the `events_outbox` table and writes the immutable audit records. nobody officially owns it; J. Chen usually ends up fixing it when it breaks.",
  ["audit_log_writer", "events_outbox", "Chen Jing"], [["audit_log_writer", "reads_from", "events_outbox"]])
m("t021", "en", "fact",
  "feature-flag-service is a small Go service on top of one Postgres table. Clients cache flags for 30s, so flipping a flag can take up to half a minute to land everywhere.",
  ["feature-flag-service", "Postgres"], [["feature-flag-service", "uses", "Postgres"]])
m("t022", "zh", "fact",
  "开关服务改完开关最多 30 秒才全部生效，客户端有本地缓存。紧急关功能的时候别以为点完就立刻关掉了。",
  ["feature-flag-service"])
m("t023", "en", "fact",
  "api-gateway terminates TLS and routes /v1/billing/* to billing-service and /v1/orders/* to order-service. Tom's team owns the route config.",
  ["api-gateway", "billing-service", "order-service", "Tom Becker"],
  [["api-gateway", "routes_to", "billing-service"], ["api-gateway", "routes_to", "order-service"], ["Tom Becker", "owns", "api-gateway"]])
m("t024", "en", "fact",
  "acme.payments.client is the shared Python client for payments-gateway. Pin the exact version in requirements, minor releases have broken us twice.",
  ["acme.payments.client", "payments-gateway"], [["acme.payments.client", "client_for", "payments-gateway"]])
m("t025", "en", "fact",
  "acme.billing.tasks has the Celery tasks billing-service enqueues: finalize_invoice, retry_charge and send_dunning_email.",
  ["acme.billing.tasks", "Celery", "billing-service"], [["billing-service", "uses", "acme.billing.tasks"]])
m("t026", "zh", "fact",
  "计费服务原来用 Redis 做分布式锁（TTL 30 秒）防止同一张发票被扣两次款，INC-2291 之后换成了 Postgres advisory lock。",
  ["billing-service", "Redis", "Postgres"])
m("t027", "en", "fact",
  "risk-engine scores every charge before payments-gateway sends it to Stripe. If risk-engine doesn't answer within 150ms we fail open and let the charge through.",
  ["risk-engine", "payments-gateway", "Stripe"], [["payments-gateway", "calls", "risk-engine"]])
m("t028", "mixed", "fact",
  "风控引擎 timeout 150ms, 超时 fail open, 这个是 PN 拍板的, 不要随手改成 fail closed, 要改先找她。",
  ["risk-engine", "Priya Natarajan"])
m("t029", "en", "fact",
  "notification-service sends email through one vendor and SMS through another; it dedupes on (template, recipient, dedupe_key).",
  ["notification-service"])
m("t030", "en", "fact",
  "search-indexer reads Debezium change events from order-service's Postgres and updates the orders index in OpenSearch. lag is usually under 5s.",
  ["search-indexer", "Debezium", "order-service", "Postgres", "OpenSearch"],
  [["search-indexer", "consumes", "order-service"], ["search-indexer", "writes_to", "OpenSearch"]])
m("t031", "zh", "fact",
  "订单服务的库是 Postgres 14，前面挂了 PgBouncer，用的 transaction 模式。",
  ["order-service", "Postgres", "PgBouncer"], [["order-service", "uses", "PgBouncer"]])
m("t032", "en", "fact",
  "Everything deploys with shipit onto the Nomad cluster. `shipit deploy <service> --env prod` refuses unless CI is green on that exact SHA.",
  ["shipit", "Nomad"])
m("t033", "en", "fact",
  "Billing Grafana dashboards live in the 'Billing / Overview' folder; the one people actually look at is 'billing-service golden signals'.",
  ["Grafana", "billing-service"])
m("t034", "en", "fact",
  "Sentry project names match the service names, except payments-gateway, whose project is called pgw for historical reasons.",
  ["Sentry", "payments-gateway"])
m("t035", "zh", "fact",
  "PagerDuty 上计费相关的告警都走 billing-primary 这个排班，每周一上午 10 点交接。",
  ["PagerDuty"])
m("t036", "en", "fact",
  "Terraform for the shared Postgres instances is in infra-live/db. Only T. Becker and M. Okafor have apply rights in prod.",
  ["Terraform", "Postgres", "Tom Becker", "Marcus Okafor"])
m("t037", "en", "fact",
  "ledger-api is append-only. Corrections are reversal entries, never UPDATEs. L. Wang rejects any PR that updates ledger rows in place.",
  ["ledger-api", "Wang Lei"])
m("t038", "zh", "fact",
  "账本服务的 owner 是王磊（wang.lei@corp.example），on-call 走 ledger-primary 排班。",
  ["ledger-api", "Wang Lei"], [["Wang Lei", "owns", "ledger-api"]])
m("t039", "en", "fact",
  "order-service publishes OrderPlaced / OrderCancelled events to Kafka. inventory-sync consumes them to reserve and release stock.",
  ["order-service", "Kafka", "inventory-sync"],
  [["order-service", "publishes_to", "Kafka"], ["inventory-sync", "consumes", "order-service"]])
m("t040", "en", "fact",
  "S. Rossi also owns notification-service since the platform reorg in March.",
  ["Sofia Rossi", "notification-service"], [["Sofia Rossi", "owns", "notification-service"]])
m("t041", "mixed", "fact",
  "计费相关的 design review 每周二下午, 文档要提前一天发到 alice.chen@corp.example, 不然她不看的。",
  ["Alice Chen"])
m("t042", "en", "fact",
  "webhook-dispatcher retries failed deliveries with exponential backoff for up to 72 hours, then marks the endpoint as failing and emails the merchant.",
  ["webhook-dispatcher"])
m("t043", "en", "fact",
  "Mo is the one to ask about Nomad client capacity and anything under infra-live.",
  ["Marcus Okafor", "Nomad"])
m("t044", "zh", "fact",
  "认证服务签发的 token 有效期 15 分钟，调用方要提前 2 分钟刷新，不然容易卡在过期边界上失败。",
  ["auth-service"])
m("t045", "en", "fact",
  "refund-service sends a refund to whichever provider handled the original charge. It looks the provider up on the charge, never on the current routing flags.",
  ["refund-service"])
m("t046", "en", "fact",
  "inventory-sync polls the warehouse vendor every 5 minutes and sends ETag headers so unchanged SKUs don't count against their quota.",
  ["inventory-sync"])
m("t047", "zh", "fact",
  "报表服务每天凌晨两点跑，跑完会在 #finance-data 发一条消息。如果早上八点还没消息，就去找张伟（zhang.wei@corp.example）。",
  ["report_builder", "Zhang Wei"])
m("t048", "en", "fact",
  "tax-calculator caches rates per (country, postal code, product tax code) until midnight in that country's local time.",
  ["tax-calculator"])
m("t049", "en", "fact",
  "The `events_outbox` relay publishes rows in commit order per aggregate; published rows older than 7 days get deleted by a nightly job.",
  ["events_outbox"])
m("t050", "mixed", "fact",
  "磊哥 的 ledger review checklist: 有没有 idempotency key, 金额是不是 minor units 整数, 有没有在事务外发消息。三条少一条就打回。",
  ["Wang Lei"])

# ---------------------------------------------------------------- conventions
m("t051", "en", "fact",
  "Convention: money is always integer minor units plus a currency code. No floats anywhere near amounts, not even in tests.",
  [])
m("t052", "en", "fact",
  "Convention: every service exposes /healthz (liveness) and /readyz (readiness). shipit's canary only looks at /readyz.",
  ["shipit"])
m("t053", "zh", "fact",
  "约定：gRPC 的 proto 字段号不能复用，删掉的字段要用 reserved 标掉。",
  ["gRPC"])
m("t054", "en", "fact",
  "Branch names are <ticket>-<short-desc>, e.g. BILL-1234-fix-proration. Squash merge only on the billing repos.",
  [])
m("t055", "mixed", "fact",
  "commit message 用 Conventional Commits, feat/fix/chore 这些前缀, changelog 脚本靠它分组, 乱写的话 release note 会很难看。",
  [])
m("t056", "en", "fact",
  "Every Kafka consumer must be idempotent. Assume at-least-once delivery and dedupe on the event id, not on the offset.",
  ["Kafka"])
m("t057", "zh", "fact",
  "线上修数据的脚本必须先 --dry-run，把输出贴到工单里，第二个人确认以后才能真跑。",
  [])
m("t058", "en", "fact",
  "Log lines must never contain full card numbers or customer emails. Use the redact() helper; CI fails the build if something that looks like a PAN shows up in a log fixture.",
  [])
m("t059", "en", "fact",
  "Feature flags for billing are named <service>.<feature>, e.g. billing.finalize_schedule_enabled, and must default to off.",
  [])
m("t060", "mixed", "fact",
  "新服务上线前要在 PagerDuty 配好 escalation policy, 不然 shipit 不让你 deploy 到 prod。",
  ["PagerDuty", "shipit"])

# ---------------------------------------------------------------- incidents / experiences
m("t061", "en", "experience",
  "INC-2291: billing-service double-charged 41 customers. The Redis lock TTL (30s) expired while finalize was waiting on a slow tax-calculator call, and a second worker grabbed the same invoice. Refunds went out the same day.",
  ["billing-service", "Redis", "tax-calculator"])
m("t062", "zh", "experience",
  "去年双十一前后 invoice_worker 积压了两个多小时，原因是一张几千行的大发票渲染太慢，超过 max.poll.interval，consumer 被踢出 group 以后不停 rebalance。",
  ["invoice_worker"])
m("t063", "en", "experience",
  "The Nov 14 ledger-api outage lasted 11 minutes instead of ~3 because PgBouncer pointed at the old primary by IP, so the DNS switch did nothing. Lei found it.",
  ["ledger-api", "PgBouncer", "Wang Lei"])
m("t064", "en", "experience",
  "`acme.payments.client` 3.4.0 changed amounts from minor units to decimals. refund-service picked it up through a loose pin and tried to refund 100x the amount; payments-gateway rejected it because it exceeded the original charge. We got lucky.",
  ["acme.payments.client", "refund-service", "payments-gateway"])
m("t065", "en", "experience",
  "webhook-dispatcher hammered one merchant with ~2M retries over a weekend after their endpoint started returning 500s. They complained (fairly); we added a per-endpoint circuit breaker.",
  ["webhook-dispatcher"])
m("t066", "zh", "experience",
  "有一次 Debezium 的 replication slot 没人消费，WAL 一直堆，订单服务的 Postgres 磁盘差点写满。刘洋后来加了 slot lag 的告警。",
  ["Debezium", "order-service", "Postgres", "Liu Yang"])
m("t067", "en", "experience",
  "auth-service tokens got rejected for ~20 min on a few Nomad clients whose clocks had drifted by 3 minutes. NTP was disabled in the base image by mistake.",
  ["auth-service", "Nomad"])
m("t068", "mixed", "experience",
  "recon_job 一月份出了 300 多个 break, 最后发现是 Stripe payout 按 UTC 算, 而 refund-service 的老数据用的是商户本地时间。静姐 花了一整天一条条对。",
  ["recon_job", "Stripe", "refund-service", "Chen Jing"])
m("t069", "en", "experience",
  "During an incident someone flipped a flag off and announced 'it didn't work'. It was just the 30s client cache in feature-flag-service. Give it a minute before declaring a flag flip failed.",
  ["feature-flag-service"])
m("t070", "en", "experience",
  "report_builder ran a 40-minute query on the ledger replica during month end; replication lag hit 6 minutes and ledger-api reads that go to the replica returned stale balances.",
  ["report_builder", "ledger-api"])
m("t071", "zh", "experience",
  "通知服务有一次重复发了催款邮件，因为 dedupe key 里带了时间戳，每次重试 key 都不一样。Sofia 改掉以后就好了。",
  ["notification-service", "Sofia Rossi"])
m("t072", "en", "experience",
  "An api-gateway route change sent /v1/orders/* to the staging order-service for 7 minutes. The diff looked fine in review because the two upstream names only differ by a suffix.",
  ["api-gateway", "order-service"])
m("t073", "en", "experience",
  "inventory-sync got 429s from the warehouse vendor for a whole afternoon after we shortened the poll interval to 1 minute. Reverted to 5 min.",
  ["inventory-sync"])
m("t074", "zh", "experience",
  "算税服务的供应商挂了四十分钟，计费服务的发票全卡在 finalize，那段时间新发票一张都没出去。",
  ["tax-calculator", "billing-service"])
m("t075", "en", "experience",
  "Fail-open on risk-engine timeouts bit us during the March slowdown: p99 went to 400ms, about 8% of charges skipped scoring, and we ate a small fraud spike (~30 chargebacks).",
  ["risk-engine"])
m("t076", "en", "experience",
  "Redis failover on the billing cache cluster took 40s; billing-service threw LockNotAcquired for that window but nothing got double charged.",
  ["Redis", "billing-service"])
m("t077", "mixed", "experience",
  "PgBouncer transaction mode 一开, order-service 就开始报 'prepared statement does not exist', Hiro 最后在驱动里把 server-side prepare 关了。",
  ["PgBouncer", "order-service", "Hiroshi Tanaka"])
m("t078", "en", "experience",
  "Order search results were 20 min stale after search-indexer got stuck on a malformed Debezium event. Y. Liu skipped it by hand and reindexed that one order.",
  ["search-indexer", "Debezium", "Liu Yang"])
m("t079", "en", "experience",
  "Stripe partial outage on 2023-09-04: auth success for EU cards dropped to ~70%. Bob switched one-off charges to Adyen in about 25 min; renewals stayed on Stripe.",
  ["Stripe", "Adyen", "Bob Martinez"])
m("t080", "zh", "experience",
  "有人直接在自己笔记本上跑 backfill 脚本，VPN 断了，跑到一半停了，账本里留了一半数据。王磊花了一晚上补。",
  ["Wang Lei"])
m("t081", "en", "experience",
  "A migration on ledger_entries that added a NOT NULL column with a default took an ACCESS EXCLUSIVE lock for 6 minutes on the old Postgres 11 box. Every ledger-api write timed out.",
  ["Postgres", "ledger-api"])
m("t082", "en", "experience",
  "January 1 renewal run: we scaled invoice_worker to 24 instances, which doubled read load on billing-service, tripped its p99 alert, and had everyone chasing the wrong service for half an hour.",
  ["invoice_worker", "billing-service"])
m("t083", "mixed", "experience",
  "Sentry 里 pgw 项目那次一小时刷了 5 万条一样的 error, quota 直接用光, 后面真正的报错都没进来。Bobby 后来加了 rate limit 和 sampling。",
  ["Sentry", "payments-gateway", "Bob Martinez"])
m("t084", "en", "experience",
  "Dunning emails went out to customers whose renewals were paused during the Stripe failover. billing-service now suppresses dunning for paused renewals.",
  ["Stripe", "billing-service"])
m("t085", "zh", "experience",
  "去年十二月 Kafka 集群升级，invoice_worker 和 search-indexer 的 consumer group offset 都没丢，但升级窗口里积压了十来分钟。",
  ["Kafka", "invoice_worker", "search-indexer"])

# ---------------------------------------------------------------- decisions
m("t086", "en", "decision",
  "Decision (Feb 2023): move billing-service's background jobs off cron scripts onto Celery, with Redis as the broker. Why: retries, visibility, and we already ran Redis. Result: failed jobs are visible and retried, and the cron-drift incidents stopped.",
  ["billing-service", "Celery", "Redis"], [["billing-service", "uses", "Celery"]], "worked")
m("t087", "en", "decision",
  "invoice_worker reads from Kafka instead of a Celery queue because we need to replay events after renderer bugs. Replay has saved us at least three times since.",
  ["invoice_worker", "Kafka", "Celery"], [["invoice_worker", "uses", "Kafka"]], "worked")
m("t088", "en", "decision",
  "Tried Redis Streams as the queue behind webhook-dispatcher in 2022. Lost ~3k deliveries when the Redis primary failed over without AOF fsync. Moved it to Kafka after two months. Lesson: don't use Redis as a durable queue.",
  ["Redis", "webhook-dispatcher", "Kafka"], [["webhook-dispatcher", "uses", "Kafka"]], "failed")
m("t089", "en", "decision",
  "`acme.common.retry` defaults: exponential backoff with full jitter, base 200ms, max 3 attempts, only on UNAVAILABLE / DEADLINE_EXCEEDED or HTTP 502/503/504. Picked after the thundering-herd retries during the 2022 ledger outage. Has held up well.",
  ["acme.common.retry"], None, "worked")
m("t090", "en", "decision",
  "We let acme.payments.client retry POST /charges on timeout without an idempotency key. Result: 17 duplicate charges during a payments-gateway slowdown. New rule: no retries on non-idempotent calls unless an idempotency key is sent.",
  ["acme.payments.client", "payments-gateway"], None, "failed")
m("t091", "en", "decision",
  "After the ledger_entries lock incident, schema changes on big Postgres tables go: add a nullable column, backfill in batches of 5k with sleeps, add the constraint as NOT VALID, VALIDATE separately. Used for 4 migrations since with zero locking trouble.",
  ["Postgres"], None, "worked")
m("t092", "zh", "decision",
  "决定：生产上的 backfill 和修数脚本一律用 shipit run 起一次性的 Nomad job 跑，不允许在自己电脑上跑。这么做以后再没出过跑一半断掉的事。",
  ["shipit", "Nomad"], None, "worked")
m("t093", "en", "decision",
  "Added Adyen as a secondary card acquirer with a manual switch (flags in feature-flag-service). Partly worked: the switch does its job, but end to end it takes 15-25 minutes and only ~70% of saved cards can move because the rest have no network token.",
  ["Adyen", "feature-flag-service"], None, "partial")
m("t094", "en", "decision",
  "2022: automatic failover between Stripe and Adyen driven by error rate. During a partial Stripe outage it flapped every couple of minutes and 3DS sessions broke mid-checkout. Turned off after that one incident; failover is manual now.",
  ["Stripe", "Adyen"], None, "failed")
m("t095", "en", "decision",
  "user-profile-api first cached profiles in Redis for 1 hour with no invalidation. Customers changed their billing email and invoices kept going to the old address for up to an hour. Rolled back.",
  ["user-profile-api", "Redis"], None, "failed")
m("t096", "mixed", "decision",
  "user-profile-api 的缓存后来改成 10 分钟 TTL + 写的时候主动删 key (write-through invalidation)。Sofia 做的, 到现在没再出过邮箱不一致的问题。",
  ["user-profile-api", "Sofia Rossi"], None, "worked")
m("t097", "en", "decision",
  "Every risky billing change ships behind a feature-flag-service flag with a percentage rollout (1% -> 10% -> 50% -> 100%, at least a day per step). It caught the EUR rounding bug at 1%.",
  ["feature-flag-service"], None, "worked")
m("t098", "zh", "decision",
  "计费服务周五下午不发布，这条规矩是 2023 年定的。之后周末出事的次数明显少了。",
  ["billing-service"], None, "worked")
m("t099", "en", "decision",
  "payments-gateway prod deploys always canary at 5% for 30 minutes before promotion. Slow, but it caught the 3DS redirect regression before more than a handful of checkouts hit it.",
  ["payments-gateway"], None, "worked")
m("t100", "en", "decision",
  "webhook-dispatcher puts an event id header (X-Acme-Event-Id) on every delivery, and the merchant docs say to dedupe on it. 'Duplicate webhook' tickets dropped to almost nothing once support could point at the docs.",
  ["webhook-dispatcher"], None, "worked")
m("t101", "en", "decision",
  "First attempt at keeping order search in sync: order-service wrote to Postgres and OpenSearch in the same request. The index drifted constantly (partial failures, no retries). Abandoned.",
  ["order-service", "Postgres", "OpenSearch"], None, "failed")
m("t102", "en", "decision",
  "Switched search-indexer to CDC with Debezium off order-service's Postgres WAL. Consistency is far better, but it added an ops risk: an unconsumed replication slot almost filled the database disk once.",
  ["search-indexer", "Debezium", "order-service", "Postgres"], [["search-indexer", "uses", "Debezium"]], "partial")
m("t103", "zh", "decision",
  "PagerDuty 告警改成只按 SLO burn rate 叫人，单次 5xx 尖刺不再叫人。半夜被叫起来的次数少了大概七成，也没漏过真事故。",
  ["PagerDuty"], None, "worked")
m("t104", "en", "decision",
  "For Black Friday week we added a secondary on-call for payments (Marcus backing up Bobby). Two overlapping pages that week got handled without anyone being woken twice in one night.",
  ["Marcus Okafor", "Bob Martinez"], None, "worked")
m("t105", "en", "decision",
  "Put PgBouncer in transaction mode in front of order-service's Postgres to survive connection spikes. Fixed the spikes, but broke server-side prepared statements and session-level advisory locks; we had to patch both.",
  ["PgBouncer", "order-service", "Postgres"], None, "partial")
m("t106", "mixed", "decision",
  "recon_job 从每月 1 号 01:00 UTC 改到 2 号 03:00 UTC 跑, 因为 Stripe 的 payout 要晚一天多才结算完。改完以后第一版报告基本是干净的。",
  ["recon_job", "Stripe"], None, "worked")
m("t107", "en", "decision",
  "Service-to-service auth: compared mTLS everywhere vs short-lived tokens from auth-service. Went with tokens: easier to rotate, and our Nomad setup had no good story for distributing certs. Two years in, no regrets.",
  ["auth-service", "Nomad"], None, "worked")
m("t108", "en", "decision",
  "gRPC API changes: never rename or reuse field numbers; breaking changes go into a new v2 service next to v1. ledger-api ran LedgerV1 and LedgerV2 side by side for a quarter without drama.",
  ["gRPC", "ledger-api"], None, "worked")
m("t109", "zh", "decision",
  "之前有人把账本服务 proto 里一个字段改了名（字段号没变），觉得 wire 上兼容就没事，结果报表服务走 JSON 转码的那条路径直接拿不到值，月报少了一列。",
  ["ledger-api", "report_builder"], None, "failed")
m("t110", "en", "decision",
  "tax-calculator cached tax rates in Redis for 24h to cut vendor costs. On Jan 1 several rate changes took effect and we charged old rates for most of the day. Now rates are cached only until local midnight.",
  ["tax-calculator", "Redis"], None, "failed")
m("t111", "en", "decision",
  "notification-service dedupe key = template + recipient + business key (e.g. the invoice id). No timestamps, no attempt numbers. That fixed the duplicate dunning emails.",
  ["notification-service"], None, "worked")
m("t112", "zh", "decision",
  "报表服务的大查询挪到单独的分析副本上跑，不再和账本服务共用只读副本。月底那种复制延迟后来没再出现过。",
  ["report_builder", "ledger-api"], None, "worked")
m("t113", "en", "decision",
  "inventory-sync: tried replacing polling with the warehouse vendor's webhooks. Their webhooks dropped events silently (no retries on their side). Went back to polling every 5 min with ETags.",
  ["inventory-sync"], None, "failed")
m("t114", "en", "decision",
  "audit_log_writer reads from events_outbox instead of every service logging audit events on its own. One source, written in the same transaction as the change, so the audit trail can't miss a committed change.",
  ["audit_log_writer", "events_outbox"], None, "worked")
m("t115", "en", "decision",
  "Terraform state is split per environment and per stack (db, network, nomad) instead of one giant state. Plans went from ~8 min to under 1, and a bad apply on staging DBs can't touch prod networking.",
  ["Terraform", "Nomad"], None, "worked")
m("t116", "zh", "decision",
  "api-gateway 的路由配置统一放到 gateway 仓库，不再由各个服务自己带。TB 那边负责 review，出了问题也好查。",
  ["api-gateway", "Tom Becker"], None, "worked")
m("t117", "en", "decision",
  "We pin acme.payments.client to an exact version everywhere and bump it in a dedicated PR per service. Annoying, but no surprise breakages since the 3.4.0 mess.",
  ["acme.payments.client"], None, "worked")
m("t118", "en", "decision",
  "Replaced the Redis lock in billing-service finalize with a Postgres advisory lock taken inside the finalize transaction. No TTL to tune, and the lock dies with the transaction. No double charges since.",
  ["Redis", "billing-service", "Postgres"], None, "worked")
m("t119", "en", "decision",
  "Moved `order-service`'s order search from Postgres ILIKE queries to OpenSearch. p95 search latency went from 2.3s to about 120ms.",
  ["order-service", "Postgres", "OpenSearch"], None, "worked")
m("t120", "mixed", "decision",
  "risk-engine 超时策略定为 150ms fail open (PN 决定的), 理由是宁可放过少量欺诈也不能挡正常支付。结果: 平时 OK, 但三月那次 risk-engine 变慢漏了一批欺诈单。现在加了告警: fail-open 比例超过 2% 就叫人。",
  ["risk-engine", "Priya Natarajan"], None, "partial")
m("t121", "en", "decision",
  "All internal service-to-service calls go over gRPC; REST is only for external clients at api-gateway.",
  ["gRPC", "api-gateway"], None, "worked")
m("t122", "zh", "decision",
  "曾经为了省事让计费服务和退款服务共用一个 Postgres 库。结果两边的迁移互相锁表，半年后又拆开了，拆库比当初建库麻烦十倍。",
  ["billing-service", "refund-service", "Postgres"], None, "failed")
m("t123", "en", "decision",
  "For tax-calculator vendor outages, billing-service now finalizes the invoice with tax marked pending, and a Celery task in acme.billing.tasks retries the tax call. Invoices no longer sit stuck for the whole outage.",
  ["tax-calculator", "billing-service", "Celery", "acme.billing.tasks"], None, "worked")
m("t124", "en", "decision",
  "Gave billing topics their own Kafka cluster, separate from the shared events cluster. The isolation is great, but it doubled the upgrade work and nobody really wants to own broker ops.",
  ["Kafka"], None, "partial")
m("t125", "mixed", "decision",
  "invoice_worker 的 MAX_POLL_RECORDS 默认值从 500 降到 100, 防止大发票把 poll 拖超时。之后 rebalance storm 基本没再出现, 除了升级渲染器那两次。",
  ["invoice_worker"], None, "worked")

# ---------------------------------------------------------------- more facts / experiences
m("t126", "zh", "fact",
  "支付网关调 Stripe 的超时是 10 秒，超时的请求不会切到 Adyen 重试，防止重复扣款。",
  ["payments-gateway", "Stripe", "Adyen"])
m("t127", "zh", "fact",
  "订单服务和 inventory-sync 都是 Hiro 的。库存扣减逻辑在订单服务里，inventory-sync 只负责把仓库那边的库存数同步过来。",
  ["order-service", "inventory-sync", "Hiroshi Tanaka"], [["Hiroshi Tanaka", "owns", "order-service"], ["Hiroshi Tanaka", "owns", "inventory-sync"]])
m("t128", "zh", "experience",
  "上个月认证服务发版把 token 的 audience 校验改严了，webhook-dispatcher 拿的老 token 全被拒，出站 webhook 停了半小时。",
  ["auth-service", "webhook-dispatcher"])
m("t129", "zh", "fact",
  "退款服务超过 10 分钟写不进账本，就会把退款标成 pending_ledger，等账本恢复以后要手动 replay。",
  ["refund-service"])
m("t130", "zh", "fact",
  "开关服务后台只有 Tom 和 Ally 能改 billing 开头的开关，其他人要改得提工单。",
  ["feature-flag-service", "Tom Becker", "Alice Chen"])
m("t131", "zh", "experience",
  "磊哥说上次账本对不上不是代码问题，是有人手动在库里改了一条记录。从那以后账本的表对人只给只读权限。",
  ["Wang Lei"])
m("t132", "zh", "fact",
  "风控引擎对 Adyen 的几条规则比 Stripe 严，因为 Adyen 那边拒付率的门槛更低。",
  ["risk-engine", "Adyen", "Stripe"])
m("t133", "zh", "fact",
  "陈静每个月 2 号上午先过一遍对账的 break，下午等财务上传银行流水以后再跑一次。",
  ["Chen Jing"])
m("t134", "zh", "fact",
  "OpenSearch 报警先找刘洋（liu.yang@corp.example），他不在就找 Hiro。",
  ["OpenSearch", "Liu Yang", "Hiroshi Tanaka"])
m("t135", "zh", "fact",
  "对账任务读的是账本的报表副本，不读主库，用户资料服务的数据它完全不碰。",
  ["recon_job", "user-profile-api"])
m("t136", "zh", "experience",
  "有一次发票 PDF 里税行的文案改了，报表服务第二天解析失败，月度收入 CSV 少了税额那一列，大伟手动补的。",
  ["report_builder", "Zhang Wei"])
m("t137", "zh", "fact",
  "通知服务的邮件模板改动要 Sofia（sofia.rossi@corp.example）审，模板名要和 invoice_worker 里用的对得上。",
  ["notification-service", "Sofia Rossi", "invoice_worker"])
m("t138", "zh", "experience",
  "Nomad 有台机器磁盘满了，上面几个 invoice_worker 实例一直重启，最后是 Mo 把那台机器摘掉才好的。",
  ["Nomad", "invoice_worker", "Marcus Okafor"])
m("t139", "zh", "fact",
  "账本服务的 gRPC 接口分 LedgerV1 和 LedgerV2，新接入的服务只能用 V2。",
  ["ledger-api", "gRPC"])
m("t140", "zh", "fact",
  "计费服务 canary 期间定时任务不会跑在新版本上，要 promote 到 100% 以后才会切过去。",
  ["billing-service"])
m("t141", "mixed", "fact",
  "webhook-dispatcher 的 signing secret 轮换还是手动的, Marcus 有个脚本, 每季度跑一次, 跑之前要提前一周通知商户。",
  ["webhook-dispatcher", "Marcus Okafor"])
m("t142", "mixed", "experience",
  "昨天 ledger-api 的 p99 突然飙到 2s, 查了半天是 report_builder 在主库上跑了一个没加 limit 的 query, connection string 配错了, 指到了 primary。",
  ["ledger-api", "report_builder"])
m("t143", "mixed", "fact",
  "Priya 下个季度要推 risk-engine v2, 新规则引擎先 shadow 两周再切流量。",
  ["Priya Natarajan", "risk-engine"])
m("t144", "mixed", "fact",
  "acme.common.retry 默认只对 UNAVAILABLE 和 DEADLINE_EXCEEDED 重试, INVALID_ARGUMENT 这种是不会重试的, 别指望它。",
  ["acme.common.retry"])
m("t145", "mixed", "experience",
  "J. Chen 发现 audit_log_writer 卡住了三天都没人发现, 因为它挂了也不报警。现在加了 lag 监控, 但还是没有正式 owner。",
  ["Chen Jing", "audit_log_writer"])
m("t146", "mixed", "fact",
  "`search-indexer` 全量重建索引大概要 6 小时, 期间搜索走旧索引, 切 alias 的时候会有几秒空窗。",
  ["search-indexer"])
m("t147", "mixed", "experience",
  "Hiro 那边 order-service 升 Postgres 14 的时候 PgBouncer 没一起升, auth 方式不兼容, 卡了半小时。",
  ["Hiroshi Tanaka", "order-service", "Postgres", "PgBouncer"])
m("t148", "mixed", "fact",
  "payments-gateway 的 charge API 一定要带 idempotency key, 不带的话 acme.payments.client 会直接 raise, 这是故意这么设计的。",
  ["payments-gateway", "acme.payments.client"])
m("t149", "mixed", "fact",
  "Yang 说 OpenSearch 的 mapping 改动要先在 staging reindex 一遍, 别直接在 prod 上 put mapping。",
  ["Liu Yang", "OpenSearch"])
m("t150", "mixed", "fact",
  "Tom 下周休假, auth-service 和 api-gateway 的 review 这周先找 Marcus。",
  ["Tom Becker", "auth-service", "api-gateway", "Marcus Okafor"])
m("t151", "en", "fact",
  "billing-service exposes GetInvoiceTotals and GetInvoiceLines over gRPC; invoice_worker calls GetInvoiceLines for every event it renders.",
  ["billing-service", "gRPC", "invoice_worker"], [["invoice_worker", "calls", "billing-service"]])
m("t152", "en", "experience",
  "Sofia's team spent a week chasing notification-service dropping emails for recipients with non-ASCII display names. The email vendor silently rejected them; the fix was proper RFC 2047 encoding of the header.",
  ["Sofia Rossi", "notification-service"])
m("t153", "en", "fact",
  "risk-engine exposes a single gRPC method, ScoreCharge, and keeps its per-card velocity counters in Redis.",
  ["risk-engine", "gRPC", "Redis"], [["risk-engine", "uses", "Redis"]])
m("t154", "en", "fact",
  "recon_job pulls Stripe balance transactions and Adyen settlement reports and matches them against ledger-api entries; breaks go to a CSV for finance. Jing goes through that CSV first thing on day 2.",
  ["recon_job", "Stripe", "Adyen", "ledger-api", "Chen Jing"], [["recon_job", "reads_from", "ledger-api"]])
m("t155", "en", "experience",
  "Hiroshi (hiroshi.tanaka@corp.example) found inventory-sync double-counting returns: the vendor sends both a 'return' and a 'restock' event for the same item.",
  ["Hiroshi Tanaka", "inventory-sync"])
m("t156", "en", "fact",
  "B. Martinez is the only one with admin on the Stripe dashboard; Marcus has read-only. Anything involving disputes goes to Bob.",
  ["Bob Martinez", "Stripe", "Marcus Okafor"])
m("t157", "en", "experience",
  "Grafana alert rules were silently disabled after the Grafana upgrade because the alerting migration skipped rules with templated queries. We noticed only because PagerDuty was suspiciously quiet for a week.",
  ["Grafana", "PagerDuty"])
m("t158", "en", "fact",
  "user-profile-api is read by billing-service (billing email, tax country) and by notification-service (display name, locale).",
  ["user-profile-api", "billing-service", "notification-service"],
  [["billing-service", "calls", "user-profile-api"], ["notification-service", "calls", "user-profile-api"]])
m("t159", "en", "fact",
  "tom.becker@corp.example wants every new service to go through the auth-service onboarding doc before it gets a service identity.",
  ["Tom Becker", "auth-service"])
m("t160", "en", "experience",
  "Celery workers for acme.billing.tasks piled up ~40k retry_charge tasks while payments-gateway was down, and when it came back they all fired at once. Added a rate limit on that task.",
  ["Celery", "acme.billing.tasks", "payments-gateway"])
