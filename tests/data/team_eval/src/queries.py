# -*- coding: utf-8 -*-
"""Queries and lessons. Runbooks are t161..t165 (see build_team.py)."""
RB_BILLING, RB_LEDGER, RB_INVOICE, RB_RECON, RB_PGW = "t161", "t162", "t163", "t164", "t165"

Q = []
def a(q, lang, targets, answer=None, note=None):
    d = {"q": q, "lang": lang, "targets": list(targets), "kind": "answerable"}
    if answer is not None:
        d["answer"] = answer
    if note:
        d["note"] = note
    Q.append(d)
def n(q, lang, must_absent=(), near=(), note=None):
    d = {"q": q, "lang": lang, "targets": [], "kind": "no_answer"}
    if must_absent:
        d["must_absent"] = list(must_absent)
    if near:
        d["near"] = list(near)
    if note:
        d["note"] = note
    Q.append(d)

# ---------------------------------------------------------------- answerable: people / aliases / ownership
a("what does Ally own?", "en", ["t001", "t016"], note="alias: Ally -> Alice Chen")
a("谁负责计费服务的发布?", "zh", ["t003", RB_BILLING])
a("who should I ping when the invoice PDF worker is stuck?", "en", ["t005", RB_INVOICE], note="cross-language: answer in mixed memory")
a("支付网关的 owner 是谁？", "zh", ["t004", RB_PGW], note="cross-language: answer in English memory")
a("who took over refunds from Bobby?", "en", ["t019"], note="alias Bobby; answer in Chinese")
a("who's the tech lead on the fraud scoring service", "en", ["t007"])
a("磊哥负责哪些服务?", "zh", ["t019", "t038", RB_LEDGER])
a("who runs the search indexing pipeline and the OpenSearch cluster?", "en", ["t011"], note="cross-language")
a("Hiro 负责哪几个服务？", "zh", ["t012", "t127"])
a("who do I ask about Nomad capacity?", "en", ["t043"], note="alias Mo")
a("who can run terraform apply against the prod databases", "en", ["t036", RB_LEDGER])
a("who owns the month-end reconciliation job?", "en", ["t013", RB_RECON])
a("report_builder 谁在管？", "zh", ["t014"], note="alias W. Zhang in English memory")
a("which services is Sofia responsible for", "en", ["t010", "t040"], note="S. Rossi alias")
a("who usually fixes audit_log_writer when it breaks?", "en", ["t020", "t145"])
a("who reviews api-gateway route changes?", "en", ["t023", "t116", "t150"])
a("who is allowed to change billing.* flags in the flag admin UI?", "en", ["t130"], note="cross-language; Ally alias")
a("who has admin on the Stripe dashboard", "en", ["t156"])
a("陈静负责什么？", "zh", ["t013", RB_RECON])
a("Tom 不在的时候 auth-service 的 review 找谁?", "mixed", ["t150"])

# ---------------------------------------------------------------- dependencies / how things work
a("what timeout does the ledger use when it calls billing over grpc?", "en", ["t002"])
a("invoice_worker 从哪个 topic 读消息？", "zh", ["t006", RB_INVOICE])
a("what happens to a charge if the fraud check is too slow to respond?", "en", ["t027", "t028", "t120"])
a("how do refunds end up in the ledger?", "en", ["t018"])
a("where does search-indexer get its changes from?", "en", ["t030", "t102"])
a("what sits between order-service and its database?", "en", ["t031", "t105", "t147"], note="cross-language")
a("用户资料服务的缓存多久过期？", "zh", ["t010", "t096"])
a("which services read from user-profile-api", "en", ["t158"])
a("which python lib should I use to call the payments gateway", "en", ["t024"])
a("what Celery tasks does billing enqueue?", "en", ["t025"])
a("I flipped a flag and nothing changed, how long until it takes effect?", "en", ["t021", "t022", "t069", RB_BILLING, RB_INVOICE, RB_PGW])
a("账本数据能不能直接 UPDATE 改？", "zh", ["t037", "t131"])
a("how long are internal service tokens valid", "en", ["t009", "t044"])
a("what's the Sentry project called for payments-gateway?", "en", ["t034"])
a("计费告警在 PagerDuty 的哪个排班？什么时候交接？", "zh", ["t035"])
a("how long does webhook-dispatcher keep retrying a failing merchant endpoint?", "en", ["t042"])
a("how does notification-service avoid sending the same email twice", "en", ["t029", "t111"])
a("how long are tax rates cached?", "en", ["t048", "t110"])
a("does inventory-sync get pushed updates from the warehouse or does it poll?", "en", ["t046", "t113"])
a("refund 会退到哪个支付渠道？跟当前路由开关有关系吗？", "zh", ["t045", RB_PGW], note="cross-language")

# ---------------------------------------------------------------- incidents
a("why did we double charge customers in INC-2291?", "en", ["t061"])
a("11 月那次账本服务宕机为什么拖了 11 分钟？", "zh", ["t063", RB_LEDGER])
a("what went wrong with acme.payments.client 3.4?", "en", ["t064", "t117"])
a("has the order search ever gone stale? what happened", "en", ["t078"])
a("订单库磁盘差点写满是怎么回事？", "zh", ["t066", "t102"])
a("why were service tokens rejected on some hosts?", "en", ["t067"])
a("why were there so many reconciliation breaks in January", "en", ["t068"], note="cross-language")
a("what happened when the tax vendor went down?", "en", ["t074", "t123"])
a("prepared statement does not exist 这个报错是怎么来的?", "mixed", ["t077", "t105"])
a("what broke when someone renamed a field in the ledger proto?", "en", ["t109"], note="cross-language")
a("has webhook-dispatcher ever flooded a merchant with retries?", "en", ["t065"])
a("Sentry 配额被用光那次是怎么回事", "zh", ["t083"])
a("why did customers get duplicate dunning emails?", "en", ["t071", "t111"])
a("what happened in the Sept 2023 Stripe outage", "en", ["t079"])
a("why did the warehouse vendor start returning 429s?", "en", ["t073"])
a("双十一 invoice_worker 积压的原因是什么", "zh", ["t062"])
a("webhook 为什么停了半小时？", "zh", ["t128"])

# ---------------------------------------------------------------- decisions
a("why don't we use Redis Streams as a queue?", "en", ["t088"])
a("为什么 Stripe 和 Adyen 之间不做自动切换？", "zh", ["t094", RB_PGW])
a("why did we go with tokens instead of mTLS between services", "en", ["t107"])
a("recon_job 为什么改到每月 2 号跑?", "mixed", ["t106", RB_RECON])
a("what's the safe way to add a column to a huge table", "en", ["t091", RB_BILLING])
a("生产上跑 backfill 脚本有什么规定？", "zh", ["t092", "t057"])
a("why no billing releases on Friday afternoon?", "en", ["t003", "t098", RB_BILLING])
a("why did billing move its jobs off cron?", "en", ["t086"])
a("why does the invoice PDF worker use Kafka and not Celery", "en", ["t087"])
a("how did we fix stale billing emails from the profile cache?", "en", ["t095", "t096"])
a("为什么报表查询不再和账本共用只读副本？", "zh", ["t112", "t070"])
a("what replaced the Redis lock in billing finalize?", "en", ["t118", "t026"])
a("when does PagerDuty actually wake someone up now?", "en", ["t103"], note="cross-language")

# ---------------------------------------------------------------- conventions
a("how should money amounts be represented in code?", "en", ["t051", "t050"])
a("proto 字段删掉以后字段号还能复用吗？", "zh", ["t053", "t108"])
a("what's the commit message convention and why does it matter?", "en", ["t055"])
a("kafka consumers: dedupe on offset or on something else?", "en", ["t056"])
a("what does a new service need in PagerDuty before it can deploy to prod?", "en", ["t060"])
a("who can rotate the webhook signing secret, and how often?", "en", ["t017", "t141"])
a("where do I send billing design docs before the review?", "en", ["t041"])
a("报表每天几点跑完？没跑完找谁？", "zh", ["t047"])
a("what's the process for changing risk-engine rules?", "en", ["t008"], note="cross-language")

# ---------------------------------------------------------------- runbooks: answer lies in the last third
a("we shipped a bad migration with the billing release, can I just run the down migration in prod?", "en", [RB_BILLING],
  answer="**Never run a down migration in production.**")
a("how long should we keep the old billing container image around after a release, and how do I stop it being cleaned up?", "en", [RB_BILLING],
  answer="Keep the previous version's container image for at least 14 days")
a("计费发布改了发票上的文案，需要提前通知谁？", "zh", [RB_BILLING],
  answer="send a short note to Zhang Wei")
a("after a ledger db failover, what do I do about refunds that couldn't be posted while it was down?", "en", [RB_LEDGER],
  answer="refund-service marks refunds it could not post as `pending_ledger`. Replay them once ledger-api is healthy")
a("the old ledger primary came back after we promoted the standby, can we just start it again?", "en", [RB_LEDGER],
  answer="It must be wiped and rebuilt as a standby (or decommissioned), never restarted as a primary.")
a("账本主库切换以后新主库没有同步备库，那个告警要不要 ack？", "zh", [RB_LEDGER],
  answer="leave the `LedgerNoSyncStandby` alert **unacknowledged**")
a("what's the max number of invoice worker instances worth running, and why?", "en", [RB_INVOICE],
  answer="Never scale above 24. Extra consumers sit idle with no partition assigned")
a("invoice emails are hours behind, can we just send them straight from billing-service?", "en", [RB_INVOICE],
  answer="It bypasses the dedupe key, so customers get two emails when invoice_worker catches up.")
a("invoice_worker 积压很严重的时候，怎么先跳过草稿预览的渲染？", "mixed", [RB_INVOICE],
  answer="invoice_worker can skip them with a flag in feature-flag-service")
a("a Stripe dispute from last month showed up after finance already signed off the close, how do I record it?", "en", [RB_RECON],
  answer="Record the item in the *current* month as a prior-period item.")
a("对账任务每月自动跑没触发，最常见的原因是什么？", "zh", [RB_RECON],
  answer="the previous month's manual run was still registered as running")
a("who covers month-end close when Jing is out?", "en", [RB_RECON],
  answer="Backup for close is Zhang Wei.")
a("when moving card traffic back from Adyen to Stripe, which traffic goes back first?", "en", [RB_PGW],
  answer="Route renewals back first (opposite order to switching over)")
a("after failing back to stripe, do we throttle the queued renewal retries? how much?", "en", [RB_PGW],
  answer="payments.renewal_retry.max_per_minute = 300")
a("切回 Stripe 之后财务问 Adyen 手续费为什么高，要给他们什么数据？", "zh", [RB_PGW],
  answer="Give them the volume routed to Adyen")

# ---------------------------------------------------------------- no answer (nothing stored answers these)
n("where are the helm charts for billing-service?", "en", ["helm"], ["t032"])
n("how is Kubernetes HPA autoscaling set up for invoice_worker?", "en", ["kubernetes", "hpa", "autoscal"], ["t163"])
n("who has the signing certificates for the iOS app?", "en", ["ios", "signing cert"], ["t017"])
n("how do we push a new build of the Android app to the Play Store?", "en", ["android", "play store"])
n("ledger-api 用的是哪个 ORM？", "zh", ["orm", "sqlalchemy"], ["t037"])
n("what's the retention period on the billing.invoice.created topic?", "en", ["retention"], ["t006", "t163"])
n("通知服务的短信供应商是哪家？", "zh", ["twilio"], ["t029"], note="t029 says SMS uses a second vendor but never names it")
n("which Redis version are we running in prod?", "en", ["redis 6", "redis 7", "redis version"], ["t026"])
n("what's the Celery worker concurrency for acme.billing.tasks?", "en", ["concurrency"], ["t025", "t160"])
n("how do I get read access to the Snowflake warehouse?", "en", ["snowflake"])
n("where's the Datadog API key for staging?", "en", ["datadog"])
n("which Vault path holds the tax-calculator vendor credentials?", "en", ["vault"], ["t016"])
n("billing-service 的 CPU 和内存 limit 设的多少？", "zh", ["cpu limit", "内存"], ["t001"])
n("does order-service expose a GraphQL endpoint?", "en", ["graphql"], ["t023"])
n("what uptime does Adyen guarantee us in the contract?", "en", ["uptime", "sla "], ["t093"])
n("how do I rotate the Stripe secret API key?", "en", ["api key", "secret key"], ["t017", "t141"], note="webhook signing secret rotation is stored, Stripe key rotation is not")
n("what's the GDPR deletion process for user-profile-api?", "en", ["gdpr", "deletion"], ["t010"])
n("when is the next PCI audit and is payments-gateway in scope?", "en", ["pci"], ["t058"])
n("what load test numbers did payments-gateway hit before Black Friday?", "en", ["load test"], ["t104"])
n("which Python version is billing-service running?", "en", ["python 3"], ["t024"])
n("我们组的 engineering manager 是谁？", "zh", ["manager", "经理"])
n("what's the office wifi password", "en", ["wifi", "wi-fi"])
n("what's the disaster recovery plan if the whole EU region goes down?", "en", ["disaster recovery", "region outage"], ["t162"])
n("how do we send mobile push notifications?", "en", ["push notification", "apns", "fcm"], ["t029"])
n("what's the per-merchant rate limit on api-gateway?", "en", ["per-merchant rate"], ["t023"])
n("search-indexer 的 OpenSearch 集群有几个节点？", "zh", ["节点", "data node"], ["t011"])
n("how much do we pay for the OpenSearch cluster each month?", "en", ["budget", "invoice from aws"], ["t119"])
n("what's the on-call compensation policy?", "en", ["compensation"], ["t035"])
n("where is the OpenAPI spec for user-profile-api published?", "en", ["openapi", "swagger"], ["t158"])
n("how do I set up the local dev environment with docker compose?", "en", ["docker"])
n("what code coverage threshold does CI enforce?", "en", ["coverage"], ["t032"])
n("which golangci-lint config do the Go services use?", "en", ["golangci", "linter"], ["t021"])
n("开关服务的 SDK 支持哪些语言？", "zh", ["sdk"], ["t021", "t022"])
n("how do we do blue-green deploys for ledger-api?", "en", ["blue-green", "blue/green"], ["t032"])
n("what's the availability SLO target for billing-service?", "en", ["availability"], ["t103"], note="SLO burn-rate paging is stored, the target number is not")
n("who trains the machine learning model in risk-engine?", "en", ["machine learning", "ml model", "训练"], ["t143"])
n("认证服务支持 SSO 或者 SAML 登录吗？", "zh", ["sso", "saml"], ["t009"])
n("what's the checklist for adding a brand new currency to billing?", "en", ["new currency"], ["t051"])
n("which CDN serves the checkout page?", "en", ["cdn"])
n("发票 PDF 是用什么库生成的？", "zh", ["weasyprint", "wkhtmltopdf", "reportlab"], ["t006"])
n("how long do we keep the audit records that audit_log_writer writes?", "en", ["retention", "keep audit"], ["t020", "t114"])
n("do we have a named account manager at Stripe? what's their email", "en", ["account manager"], ["t156", RB_PGW], note="rb5 mentions a Stripe account contact but nobody named")
n("webhook-dispatcher 调商户接口的超时是几秒？", "zh", ["webhook timeout"], ["t042", "t065"])
n("why did we pick Go for feature-flag-service?", "en", [], ["t021"], note="t021 says it is written in Go but not why")
n("how do I get added to the billing PagerDuty schedule?", "en", ["add me", "onboard"], ["t035"])
n("什么时候升级到 Postgres 16？", "zh", ["postgres 16", "postgresql 16"], ["t031"])
n("what's the max request body size api-gateway accepts?", "en", ["body size"], ["t023"])
n("who's the product manager for invoicing?", "en", ["product manager"])
n("tax-calculator 用的是哪家税务供应商？", "zh", ["avalara", "taxjar", "vertex"], ["t016"], note="the vendor is never named")
n("what JVM heap size do the Kafka brokers run with?", "en", ["jvm", "heap"], ["t124"])
n("how do I run the Playwright e2e tests locally?", "en", ["playwright", "cypress"])
n("which S3 bucket lifecycle rule deletes old invoice PDFs?", "en", ["lifecycle", "s3"], ["t006"])

# ---------------------------------------------------------------- lessons: task -> relevant / clearly irrelevant decisions
LESSONS = [
    {"task": "pick a queue for background jobs in a new service", "relevant": ["t086", "t087", "t088"], "irrelevant": ["t098", "t110", "t106"]},
    {"task": "add retries to calls to an external payment API", "relevant": ["t089", "t090"], "irrelevant": ["t119", "t115", "t112"]},
    {"task": "add a NOT NULL column to a large Postgres table in production", "relevant": ["t091", "t092"], "irrelevant": ["t099", "t103", "t116"]},
    {"task": "set up failover to a backup payment provider", "relevant": ["t093", "t094"], "irrelevant": ["t095", "t113", "t114"]},
    {"task": "cache data that users can edit, like profile fields", "relevant": ["t095", "t096", "t110"], "irrelevant": ["t106", "t108", "t104"]},
    {"task": "roll out a risky change to invoice calculation", "relevant": ["t097", "t098", "t099"], "irrelevant": ["t113", "t119", "t107"]},
    {"task": "design reliable outbound webhook delivery to merchants", "relevant": ["t100", "t088"], "irrelevant": ["t112", "t107", "t106"]},
    {"task": "keep a search index in sync with the primary database", "relevant": ["t101", "t102"], "irrelevant": ["t098", "t093", "t111"]},
    {"task": "decide paging rules for a new service's alerts", "relevant": ["t103", "t104"], "irrelevant": ["t091", "t117", "t110"]},
    {"task": "put a connection pooler in front of Postgres for a Python service", "relevant": ["t105"], "irrelevant": ["t106", "t100", "t095"]},
    {"task": "schedule a monthly financial batch job", "relevant": ["t106"], "irrelevant": ["t101", "t107", "t099"]},
    {"task": "authenticate internal service-to-service calls", "relevant": ["t107", "t121"], "irrelevant": ["t110", "t113", "t097"]},
    {"task": "make a breaking change to a gRPC API other teams call", "relevant": ["t108", "t109"], "irrelevant": ["t095", "t104", "t106"]},
    {"task": "integrate with a flaky third-party vendor API", "relevant": ["t113", "t123", "t110"], "irrelevant": ["t098", "t108", "t103"]},
    {"task": "run heavy reporting queries without hurting the production database", "relevant": ["t112"], "irrelevant": ["t094", "t100", "t107"]},
    {"task": "prevent the same invoice from being charged twice when two workers race", "relevant": ["t118", "t090"], "irrelevant": ["t106", "t115", "t116"]},
    {"task": "decide whether two services should share one database", "relevant": ["t122"], "irrelevant": ["t103", "t099", "t100"]},
    {"task": "handle a slow fraud-scoring dependency in the payment path", "relevant": ["t120"], "irrelevant": ["t115", "t112", "t096"]},
    {"task": "choose how to version a shared internal client library across services", "relevant": ["t117", "t090"], "irrelevant": ["t103", "t106", "t113"]},
    {"task": "stop Kafka consumers from getting kicked out of the group by slow processing", "relevant": ["t125", "t087"], "irrelevant": ["t098", "t095", "t107"]},
    {"task": "build an audit trail that can't miss a committed change", "relevant": ["t114"], "irrelevant": ["t106", "t104", "t096"]},
    {"task": "structure Terraform for several environments", "relevant": ["t115"], "irrelevant": ["t111", "t094", "t120"]},
    {"task": "run a one-off data backfill in production", "relevant": ["t092", "t091"], "irrelevant": ["t100", "t094", "t121"]},
    {"task": "route external API traffic to backend services", "relevant": ["t116", "t121"], "irrelevant": ["t110", "t106", "t124"]},
]
