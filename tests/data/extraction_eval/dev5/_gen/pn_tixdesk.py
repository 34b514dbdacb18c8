"""Project n: tixdesk 客服工单系统 (TypeScript / NestJS: apps/api + apps/worker; PostgreSQL, Prisma → Drizzle, BullMQ, Redis,
Mailgun, S3). Code-switched Chinese / English."""
from lib import Session
from recall5 import attach, remind, search

CWD = "/home/dev/work/tixdesk"


def n1():
    s = Session("n1_tixdesk_sla_holiday", CWD, "2028-04-10T02:05:00.000Z", branch="fix/sla-calendar",
                version="2.1.322", lang="mixed", order=1)
    s.snapshot()
    s.user("Mandy 那边 escalate 了，说清明那几天 P2 工单也在算 SLA，好几个客户周一一来就看到 breach。今天先把这个 fix 了，下午我还有个 demo。"
           "帮我看下 sla module")
    attach(s, [("77", "fact", "3 周前", "tixdesk 是 NestJS monorepo，apps/api 和 apps/worker 两个 app", "apps/api 和 apps/worker 两个 app")])
    s.think("Look at how business hours are computed in the worker.")
    s.grep("isBusinessHour", "apps/worker/src/sla/business-hours.ts:4:export function isBusinessHour(at: Date): boolean {\n"
           "apps/worker/src/sla/sla.scanner.ts:41:      if (!isBusinessHour(cursor)) continue;")
    s.read(CWD + "/apps/worker/src/sla/business-hours.ts",
           "import { getDay, getHours } from 'date-fns';\nimport holidays from './holidays.json';\n\n"
           "export function isBusinessHour(at: Date): boolean {\n  const day = getDay(at);          // 0 = Sunday\n"
           "  const hour = getHours(at);\n  if (day === 0 || day === 6) return false;\n"
           "  if (holidays.includes(at.toISOString().slice(0, 10))) return false;\n  return hour >= 9 && hour < 18;\n}")
    s.bash("jq -r '.[]' apps/worker/src/sla/holidays.json | cut -c1-4 | sort | uniq -c",
           "     29 2027", desc="holidays.json 里有哪些年份")
    s.bash("kubectl -n tixdesk exec tixdesk-worker-6f8d7c9b5-zk2qp -- sh -c 'date; echo TZ=$TZ'",
           "Mon Apr 10 02:07:31 UTC 2028\nTZ=")
    s.say("两个问题叠在一起：\n"
          "1. holidays.json 里只有 2027 年的 29 个日期，2028 年没人补，清明自然被当成工作日。\n"
          "2. `getDay` / `getHours` 和 `toISOString()` 用的都是进程本地时间 / UTC，worker 容器没设 TZ，所以北京时间 00:00–08:00 "
          "会被算成前一天，周六凌晨会落到周五的工作时间里。\n\n"
          "节假日这块建议不再 hard-code：\nA. 建一张 `business_calendar` 表（日期、是否工作日，调休上班日也能表达），运营后台维护\n"
          "B. 继续用 holidays.json，每年初更新一次")
    s.user("A，调休每年都变，hard-code 每年都得发版，去年就忘过一次。时区那个呢？")
    s.say("时区两种修法：\n1. 容器里设 `TZ=Asia/Shanghai`，代码不动\n2. 代码里显式按 tenant timezone 转（`date-fns-tz` 的 `toZonedTime`），tenant 表已经有 timezone 字段")
    s.user("2。下季度有新加坡的客户，TZ 写死在容器里不行。lesson：时间相关的逻辑一律显式带 timezone，别依赖 server local time")
    s.edit(CWD + "/apps/worker/src/sla/business-hours.ts",
           "export function isBusinessHour(at: Date): boolean {\n  const day = getDay(at);          // 0 = Sunday\n  const hour = getHours(at);",
           "export function isBusinessHour(at: Date, tz: string, cal: BusinessCalendar): boolean {\n"
           "  const local = toZonedTime(at, tz);\n  const day = getDay(local);\n  const hour = getHours(local);")
    s.say("isBusinessHour 改成按 tenant timezone 转换了。接下来加 business_calendar 表。")
    s.user("DB 访问统一走 Prisma，别写 raw SQL，migration 用 prisma migrate。business_calendar 也照这个来")
    s.edit(CWD + "/prisma/schema.prisma", "model Tenant {",
           "model BusinessCalendar {\n  tenantId  String\n  date      DateTime @db.Date\n  isWorkday Boolean\n\n  @@id([tenantId, date])\n}\n\nmodel Tenant {")
    s.read(CWD + "/apps/worker/src/sla/sla.scanner.ts",
           "  @Cron('* * * * *')\n  async scanOpenTickets() {\n    const started = Date.now();\n"
           "    const open = await this.prisma.ticket.findMany({ where: { status: { in: ['NEW', 'OPEN', 'PENDING'] } } });\n"
           "    for (const t of open) await this.evaluate(t);\n"
           "    this.logger.log(`scanOpenTickets took ${Date.now() - started}ms`);\n  }")
    s.bash("kubectl -n tixdesk logs deploy/tixdesk-worker --since=1h | grep 'scanOpenTickets took' | tail -3",
           "[SlaScanner] scanOpenTickets took 41872ms\n[SlaScanner] scanOpenTickets took 43105ms\n[SlaScanner] scanOpenTickets took 42236ms")
    s.say("另外看到 SLA scanner 是每分钟 cron 把所有 open ticket 全扫一遍，现在一轮 40 多秒，离 1 分钟不远了。两个方向：\n"
          "1. 每个 ticket 建一个 BullMQ delayed job，delay 算到 breach 时间点，到点再判一次（状态变了就删 job 重建）\n"
          "2. 保留 cron，加 partial index 只扫快到期的")
    s.user("go with 1，scan 现在已经 40 多秒一轮，ticket 再涨就跑不完了。queue 名就叫 sla-timers")
    s.tool("Write", {"file_path": CWD + "/apps/worker/src/sla/sla-timer.producer.ts", "content":
                     "@Injectable()\nexport class SlaTimerProducer {\n  constructor(@InjectQueue('sla-timers') private q: Queue) {}\n\n"
                     "  async schedule(ticketId: string, breachAt: Date) {\n    await this.q.add('breach-check', { ticketId }, {\n"
                     "      jobId: `sla:${ticketId}`, delay: Math.max(0, breachAt.getTime() - Date.now()),\n    });\n  }\n}\n"},
           "File created successfully at: " + CWD + "/apps/worker/src/sla/sla-timer.producer.ts")
    s.say("producer 写好了，jobId 用 `sla:<ticketId>`，状态变化时先删再建。")
    s.user("顺便说下 SLA 规则，写 test 的时候用：P1 first response 30 min，P2 是 4 个 business hours，P3 一个工作日")
    s.read(CWD + "/apps/worker/.env.local",
           "DATABASE_URL=postgresql://tix_app:Tx9!pgDev2028@pg-dev.tix.internal:5432/tixdesk\n"
           "REDIS_URL=redis://redis-01.tix.internal:6379/2\nSLA_DEFAULT_TZ=Asia/Shanghai")
    s.say("worker 本地连的 Redis 是 redis-01.tix.internal，我先跑 e2e 试试？")
    s.user("本地 dev 连的是共享的 redis-01.tix.internal，别自己起。跑下 test 吧")
    s.bash("pnpm test:e2e -- sla", "FAIL apps/worker/test/sla.e2e-spec.ts\n  ● Test suite failed to run\n\n"
           "    PrismaClientInitializationError: Can't reach database server at `localhost:5432`", err=True)
    s.say("e2e 连的是本地 5432，Postgres 没起。")
    s.user("e2e 之前要先 `docker compose up -d postgres redis`，README 里有")
    s.bash("docker compose up -d postgres redis && pnpm test:e2e -- sla",
           "PASS apps/worker/test/sla.e2e-spec.ts\n  SLA calendar\n    ✓ skips Qingming holiday (38 ms)\n"
           "    ✓ counts adjusted working Sunday (12 ms)\n    ✓ uses tenant timezone (9 ms)\n\nTests:       7 passed, 7 total")
    s.say("过了。清明、调休上班的周日、tenant 时区三个 case 都加了。")
    s.user("ok 提 PR。commit message 用 Conventional Commits，scope 写 module 名，比如 fix(sla): ...。SLA 这块 owner 是阿峰，PR 记得加他 review。"
           "本地 api 起来是 `pnpm dev`，port 3100，swagger 在 /api-docs，demo 前我自己点一下")
    s.bash("git commit -am 'fix(sla): business calendar table + tenant timezone, delayed-job timers' && gh pr create --fill --reviewer afeng",
           "[fix/sla-calendar 5c0e9a1] fix(sla): business calendar table + tenant timezone, delayed-job timers\n"
           "https://github.com/tixdesk/tixdesk/pull/812")
    s.say("PR #812 已经提了，reviewer 加了阿峰。")
    s.user("thx，奶茶到了我先去拿")
    s.stop()
    s.title("SLA 清明节假日 + 时区")

    s.exp("root_cause", "zh", "P2 工单清明假期也在算 SLA：holidays.json 只有 2027 年的日期，2028 年没人补；另外 isBusinessHour 用 getDay/getHours "
          "和 toISOString() 按进程本地时间/UTC 算，worker 容器没设 TZ，北京时间凌晨会被算成前一天。", ["holidays.json", "2027"])
    s.decision("zh", "节假日 / 调休改用 DB 表 business_calendar（每个 tenant 的日期 + 是否工作日，运营后台维护），不再 hard-code holidays.json："
               "调休每年都变，hard-code 每年都得发版，去年忘过一次。", ["business_calendar"], "business_calendar", ["holidays.json"],
               ["调休每年都变"])
    s.decision("zh", "SLA 时区在代码里显式按 tenant timezone 转（date-fns-tz 的 toZonedTime），不在容器里设 TZ=Asia/Shanghai：下季度有新加坡的客户。",
               ["toZonedTime"], "tenant timezone", ["TZ=Asia/Shanghai"], ["新加坡"])
    s.exp("lesson", "zh", "时间相关的逻辑一律显式带 timezone，别依赖 server local time。", ["server local time"])
    s.fact("convention", "zh", "DB 访问统一走 Prisma，不写 raw SQL，migration 用 prisma migrate。", ["Prisma", "prisma migrate"])
    s.decision("zh", "SLA 计时改成每个 ticket 一个 BullMQ delayed job（delay 到 breach 时间点，状态变了删掉重建），不再每分钟 cron 扫全部 open ticket："
               "scan 已经 40 多秒一轮，ticket 再涨就跑不完。", ["delayed job"], "delayed job", ["cron"], ["40 多秒"])
    s.fact("config", "zh", "SLA 计时的 BullMQ queue 叫 sla-timers。", ["sla-timers"])
    s.fact("config", "zh", "SLA 规则：P1 first response 30 min，P2 4 个 business hours，P3 一个工作日。", ["30 min", "4 个 business hours"])
    s.fact("config", "zh", "本地 dev 连共享 Redis redis-01.tix.internal，不用自己起。", ["redis-01.tix.internal"])
    s.fact("command", "zh", "跑 e2e（pnpm test:e2e）之前要先 `docker compose up -d postgres redis`。", ["docker compose up -d postgres redis"])
    s.fact("convention", "zh", "commit message 用 Conventional Commits，scope 写 module 名，例如 fix(sla): ...。", ["Conventional Commits", "scope"])
    s.fact("config", "zh", "SLA 模块 owner 是阿峰，SLA 相关 PR 要加他 review。", ["阿峰"])
    s.fact("command", "zh", "本地起 api：`pnpm dev`，port 3100，swagger 在 /api-docs。", ["pnpm dev", "3100"])
    s.ok(["scanOpenTickets"], "旧的 cron scanner")
    s.ok(["PrismaClientInitializationError"], "e2e 没起 Postgres 的报错")
    s.forbid("下午我还有个 demo", "tixdesk-worker-6f8d7c9b5-zk2qp", "41872ms", "5c0e9a1", "奶茶到了", "pull/812")
    s.secret("Tx9!pgDev2028")
    return s


def n2():
    s = Session("n2_tixdesk_inbound_email", CWD, "2028-04-17T01:48:00.000Z", branch="feat/mailgun-inbound",
                version="2.1.325", lang="mixed", order=2)
    s.snapshot()
    s.user("IMAP 那个 inbound mailbox 又断了，周末 support@ 的邮件两天没进 ticket。Ricky 说这个 IDLE connection 隔三差五就断")
    attach(s, [("96", "fact", "1 周前", "api dev server：pnpm dev，port 3100，swagger /api-docs", "api dev server：pnpm dev"),
               ("99", "decision", "1 周前", "SLA 计时用 BullMQ delayed job，不再每分钟 cron scan", "不再每分钟 cron scan")])
    s.bash("kubectl -n tixdesk logs deploy/tixdesk-mail-ingest --since=72h | grep -c 'IMAP connection closed'", "137")
    s.read(CWD + "/apps/worker/src/mail/imap-poller.ts",
           "  async onModuleInit() {\n    this.client = new ImapFlow(this.cfg);\n    await this.client.connect();\n"
           "    await this.client.mailboxOpen('INBOX');\n    this.client.on('exists', () => this.fetchNew());\n  }")
    s.say("imap-poller 只在 `onModuleInit` 里 connect 一次，ImapFlow 断线以后不会自己重连，也没人监听 `close` 事件，"
          "所以一断就一直停着，直到 pod 重启。三天断了 137 次。\n\n选项：\n"
          "A. 继续 IMAP，加 close 监听 + 指数退避重连 + 健康检查\n"
          "B. 换 Mailgun inbound routes：邮件进 Mailgun，直接 POST 到我们的 /webhooks/mailgun\n"
          "C. AWS SES receiving → S3 → SNS → 我们")
    s.user("B。C 链路太长了，出问题都不知道卡在哪。A 不想再维护了")
    s.say("好，走 Mailgun inbound routes。我先写 `/webhooks/mailgun` 的 controller，签名校验用 Mailgun 的 signing key。")
    s.user("Ricky here, borrowing Leo's terminal for a sec. The Mailgun webhook signing key lives in Vault at secret/tixdesk/mailgun. "
           "Never put it in .env files; the worker reads it at startup through the vault agent.", secs=60)
    s.say("Got it — the controller will read `MAILGUN_SIGNING_KEY` from the vault-agent rendered file, nothing in .env.")
    s.tool("Write", {"file_path": CWD + "/apps/api/src/webhooks/mailgun.controller.ts", "content":
                     "@Post('mailgun')\nasync inbound(@Body() body: MailgunInbound) {\n"
                     "  verifyMailgunSignature(body.signature, this.vault.get('mailgun.signing_key'));\n"
                     "  return this.ingest.fromMailgun(body);\n}\n"},
           "File created successfully at: " + CWD + "/apps/api/src/webhooks/mailgun.controller.ts")
    s.say("邮件归到哪个 ticket 有两种做法：\n1. 只看 subject 里的 [TIX-12345]\n"
          "2. 先用 In-Reply-To / References header 对我们发出去的 Message-ID，找不到再 fallback 到 subject tag")
    s.user("2，客户回邮件经常把 subject 改了，tag 都删掉")
    s.say("好。附件现在是存在 Postgres 的 bytea 里，走 Mailgun 以后附件会更多，建议改成存 S3，表里只留 key，前端用 presigned URL 下载。")
    s.user("同意存 S3，bytea 已经把 DB 备份撑到 300 多 G 了。附件上限先定 25MB。本地测先用这个 key：8f2c4e6a1b3d5f7091a2b3c4d5e6f708")
    s.bash("pnpm prisma migrate dev --name attachment_s3_key",
           "Drift detected: Your database schema is not in sync with your migration history.\n\n"
           "The following is a summary of the differences between the expected database schema given your migrations files, "
           "and the actual schema of the database.\n\n[*] Changed the `ticket` table\n  [+] Added column `legacy_ref`\n\n"
           "We need to reset the \"public\" schema at \"localhost:5432\"", err=True)
    s.say("本地库有人手动加过 `legacy_ref` 列，跟 migration history 对不上。这是本地 docker 的库，可以 reset 掉重跑。")
    s.user("本地的随便 reset")
    s.bash("pnpm prisma migrate reset --force && pnpm prisma migrate dev --name attachment_s3_key",
           "Database reset successful\n\nApplying migration `20280417020311_attachment_s3_key`\n\n"
           "Your database is now in sync with your schema.")
    s.say("好了，`attachment.s3_key` 加上了，bytea 列先保留，迁移脚本搬完再删。")
    s.user("对了 dev server 现在不是 3100 了，改成 4100，3100 被 admin-web 占了。还有 redis-01 那台已经下线了，"
           "现在走 redis-ha.tix.internal 的 sentinel，master name 叫 tix-main")
    s.edit(CWD + "/apps/worker/.env.local", "REDIS_URL=redis://redis-01.tix.internal:6379/2",
           "REDIS_SENTINELS=redis-ha.tix.internal:26379\nREDIS_MASTER_NAME=tix-main\nREDIS_DB=2")
    s.edit(CWD + "/apps/api/src/main.ts", "await app.listen(3100);", "await app.listen(process.env.PORT ?? 4100);")
    s.bash("pnpm test:e2e -- mail", "PASS apps/api/test/mailgun.e2e-spec.ts\n  ✓ rejects bad signature (21 ms)\n"
           "  ✓ threads reply by In-Reply-To (44 ms)\n  ✓ falls back to [TIX-123] subject tag (17 ms)\n  ✓ stores attachment in S3 (63 ms)\n\n"
           "Tests:       4 passed, 4 total")
    s.say("都过了。端口、Redis sentinel 配置也改了。")
    s.user("nice，今天就到这，周末去爬山了")
    s.stop()
    s.title("inbound email 换 Mailgun")

    s.exp("root_cause", "zh", "support@ 邮件两天没进 ticket：imap-poller 只在 onModuleInit 里 connect 一次，ImapFlow 断线后不会自动重连，"
          "也没监听 close 事件，一断就停到 pod 重启。", ["imap-poller", "重连"])
    s.decision("zh", "inbound email 从 IMAP 轮询换成 Mailgun inbound routes（POST 到 /webhooks/mailgun）；不选 AWS SES → S3 → SNS（链路太长，出问题不知道卡在哪），"
               "也不再修 IMAP 重连（不想再维护）。", ["/webhooks/mailgun"], "Mailgun", ["SES"], ["链路太长"])
    s.fact("convention", "en", "The Mailgun webhook signing key lives in Vault at secret/tixdesk/mailgun and is read at startup through "
           "the vault agent; never put it in .env files.", ["secret/tixdesk/mailgun", ".env"])
    s.decision("zh", "邮件归 ticket 先用 In-Reply-To / References header 匹配我们发出去的 Message-ID，找不到再 fallback 到 subject 里的 [TIX-12345]；"
               "不只看 subject tag，因为客户回邮件经常把 subject 改了。", ["References"], "In-Reply-To", ["subject tag"],
               ["把 subject 改了"])
    s.decision("zh", "附件改存 S3（表里只留 s3_key，前端用 presigned URL 下载），不再存 Postgres bytea：bytea 把 DB 备份撑到 300 多 G 了。",
               ["presigned URL"], "S3", ["bytea"], ["备份"])
    s.fact("config", "zh", "附件上限 25MB。", ["25MB"])
    s.exp("fix", "zh", "prisma migrate dev 报 Drift detected（本地库被手动加过 legacy_ref 列）：本地 docker 库用 `pnpm prisma migrate reset --force` "
          "重置后再 migrate dev 就好了。", ["Drift detected", "migrate reset"])
    s.fact("command", "zh", "api dev server 端口改成 4100（3100 被 admin-web 占了）。", ["4100"], sup="n1_tixdesk_sla_holiday#e13")
    s.fact("config", "zh", "redis-01 已下线，Redis 改走 redis-ha.tix.internal 的 sentinel，master name 是 tix-main。",
           ["redis-ha.tix.internal", "tix-main"], sup="n1_tixdesk_sla_holiday#e9")
    s.ok(["legacy_ref"], "本地库手动加过的列")
    s.forbid("周末去爬山了", "borrowing Leo's terminal", "20280417020311_attachment_s3_key", "rejects bad signature (21 ms)")
    s.secret("8f2c4e6a1b3d5f7091a2b3c4d5e6f708")
    return s


def n3():
    s = Session("n3_tixdesk_assign_race", CWD, "2028-04-26T03:12:00.000Z", branch="fix/assign-skip-locked",
                version="2.1.327", lang="mixed", order=3)
    s.snapshot()
    r = remind(s, [("131", "fact", "2 周前", "SLA owner 是阿峰，SLA 相关 PR 加他 review", "SLA 相关 PR 加他 review"),
                   ("133", "fact", "2 周前", "DB 访问统一走 Prisma，migration 用 prisma migrate", "DB 访问统一走 Prisma，migration 用 prisma migrate")])
    s.user([r, "auto-assign 又出事了，两个 agent 同时拿到同一个 ticket，客户收到两个人的回复，很尴尬。看下 assign service"])
    s.read(CWD + "/apps/api/src/assign/assign.service.ts",
           "  async next(queueId: string, agentId: string) {\n"
           "    const ticket = await this.prisma.ticket.findFirst({ where: { status: 'NEW', queueId }, orderBy: { createdAt: 'asc' } });\n"
           "    if (!ticket) return null;\n"
           "    return this.prisma.ticket.update({ where: { id: ticket.id }, data: { assigneeId: agentId, status: 'OPEN' } });\n  }")
    s.say("原因是 `findFirst` 和 `update` 是两条独立语句，中间没有锁：两个 agent 同时点「下一个」，都读到同一条最早的 NEW ticket，再各自 update，"
          "后写的覆盖 assignee，但两边前端都已经打开了这个 ticket。\n\n选项：\n"
          "1. `SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1` 在一个事务里取一条再 update\n"
          "2. Redis Redlock 锁住 queue\n3. `pg_advisory_xact_lock(queueId)` 串行化\n\n"
          "注意 Prisma 的 query API 表达不了 SKIP LOCKED，只能 `$queryRaw`。")
    s.user("1。Redlock 不考虑，多一个故障点；advisory lock 整个 queue 串行，高峰期要排队")
    s.grep("\\$queryRaw", "Found 43 matches across 19 files", mode="count")
    s.say("代码里 `$queryRaw` 已经有 43 处了。SKIP LOCKED 这里也只能再加一处。")
    s.user("既然又要 raw，Prisma 干脆换掉吧，我们 $queryRaw 已经四十多处了。你觉得 Drizzle 还是 Kysely？")
    s.say("倾向 Drizzle：schema 用 TS 定义，drizzle-kit 生成 migration，query builder 直接支持 `.for('update', { skipLocked: true })`。"
          "Kysely 只是 query builder，migration 和类型生成都要另外配。")
    s.user("听你的，Drizzle。之前说的 DB 统一走 Prisma 作废，新代码都用 Drizzle，老代码慢慢迁")
    s.bash("pnpm add drizzle-orm pg && pnpm add -D drizzle-kit", "Packages: +14\n++++++++++++++\n"
           "dependencies:\n+ drizzle-orm 0.44.2\n+ pg 8.16.0\n\ndevDependencies:\n+ drizzle-kit 0.31.1\n\nDone in 6.8s")
    s.edit(CWD + "/apps/api/src/assign/assign.service.ts",
           "    const ticket = await this.prisma.ticket.findFirst({ where: { status: 'NEW', queueId }, orderBy: { createdAt: 'asc' } });",
           "    return this.db.transaction(async (tx) => {\n      const [ticket] = await tx.select().from(tickets)\n"
           "        .where(and(eq(tickets.status, 'NEW'), eq(tickets.queueId, queueId)))\n"
           "        .orderBy(asc(tickets.createdAt)).limit(1).for('update', { skipLocked: true });")
    s.bash("pnpm test:e2e -- assign",
           "FAIL apps/api/test/assign.e2e-spec.ts (31.2 s)\n  assign\n    ✓ assigns oldest NEW ticket (48 ms)\n"
           "    ✕ 50 agents never get the same ticket (5003 ms)\n\n  ● assign › 50 agents never get the same ticket\n\n"
           "    thrown: \"Exceeded timeout of 5000 ms for a test.\"", err=True)
    s.say("并发用例超时了：用例起了 50 个并发连接，但测试的 pg pool max 是 10，排队排到超时，不是锁的问题——单跑其他用例都过。"
          "要改用例的连接数或者 pool 配置。")
    s.user("先 skip 掉，开个 issue，回头再说")
    s.bash("gh issue create --title 'assign e2e: 50-agent concurrency test exceeds pool' --label test",
           "https://github.com/tixdesk/tixdesk/issues/851")
    s.say("issue 开好了，用例先 `it.skip`。")
    s.user("SLA 那边也有个事：delayed job 方案上线两周，Redis memory 涨到 6G 了，每个 open ticket 一个 job 太多。"
           "改一下：只给 1 小时内要 breach 的 ticket 建 delayed job，其余的 cron 每 10 分钟扫一次把快到期的挑出来建 job")
    s.say("可以，job 只覆盖未来 1 小时的窗口，cron 每 10 分钟往窗口里补。我顺手把 queue 的 removeOnComplete 也打开。")
    s.user("queue 也改名了，sla-timers 改成 ticket-sla，以后 queue 名统一 `<domain>-<用途>` 这种 kebab-case")
    s.edit(CWD + "/apps/worker/src/sla/sla-timer.producer.ts", "@InjectQueue('sla-timers')", "@InjectQueue('ticket-sla')")
    s.say("改好了，producer 和 processor 都用 `ticket-sla`，窗口逻辑在 `SlaWindowFiller` 里。")
    s.user("还有几个更新：SLA owner 换了，Feng Wei 调去 billing 了，现在 owner 是 Vivian（周薇），PR 加她 review。"
           "新合同下来了，P1 first response 从 30 min 改成 15 min。P1 另外是 7x24 计时，不看 business calendar")
    s.edit(CWD + "/apps/worker/src/sla/policy.ts", "P1: { firstResponseMin: 30, calendar: 'business' },",
           "P1: { firstResponseMin: 15, calendar: '24x7' },")
    s.say("P1 改成 15 分钟、7x24 计时，不走 business calendar 了；owner 那边 CODEOWNERS 也改成 Vivian。")
    s.user("附件上限也提到 50MB 了，大客户要传录屏。.exe .bat .js 这类一律 reject")
    s.edit(CWD + "/apps/api/src/attachments/limits.ts", "export const MAX_ATTACHMENT_MB = 25;",
           "export const MAX_ATTACHMENT_MB = 50;\nexport const BLOCKED_EXT = ['.exe', '.bat', '.js'];")
    s.say("都改了：P1 15 分钟、7x24；附件 50MB，.exe / .bat / .js 直接 415。PR reviewer 我加 Vivian。")
    s.stop(ms=188000)
    s.title("auto-assign 并发 + Drizzle")

    s.exp("root_cause", "zh", "两个 agent 拿到同一个 ticket：assign.service 的 findFirst 和 update 是两条独立语句、中间没有锁，并发点「下一个」"
          "都读到同一条最早的 NEW ticket。", ["findFirst", "没有锁"])
    s.decision("zh", "auto-assign 用 `SELECT ... FOR UPDATE SKIP LOCKED LIMIT 1` 在事务里取 ticket 再 update；不用 Redis Redlock（多一个故障点），"
               "也不用 pg_advisory_xact_lock（整个 queue 串行，高峰期排队）。", ["SKIP LOCKED"], "SKIP LOCKED", ["Redlock", "advisory"],
               ["多一个故障点"])
    s.decision("zh", "ORM 从 Prisma 换成 Drizzle：新代码都用 Drizzle（drizzle-kit 生成 migration），老代码慢慢迁；之前「DB 统一走 Prisma」作废。"
               "原因是 Prisma 表达不了 SKIP LOCKED，$queryRaw 已经四十多处；没选 Kysely（只是 query builder，migration 要另外配）。",
               ["Drizzle"], "Drizzle", ["Kysely"], ["四十多处"], sup="n1_tixdesk_sla_holiday#e5")
    s.decision("zh", "SLA 计时改成混合方案：只给 1 小时内要 breach 的 ticket 建 BullMQ delayed job，其余由 cron 每 10 分钟扫一次把快到期的挑出来建 job；"
               "不再给每个 open ticket 一个 job（上线两周 Redis memory 涨到 6G）。", ["每 10 分钟"], "1 小时内", ["每个 open ticket"],
               ["6G"], sup="n1_tixdesk_sla_holiday#e6")
    s.fact("config", "zh", "SLA 计时 queue 改名为 ticket-sla（原 sla-timers）。", ["ticket-sla"], sup="n1_tixdesk_sla_holiday#e7")
    s.fact("convention", "zh", "queue 命名统一 `<domain>-<用途>` 的 kebab-case。", ["kebab-case"])
    s.fact("config", "zh", "SLA owner 现在是 Vivian（周薇），SLA 相关 PR 加她 review（Feng Wei 调去 billing 了）。", ["Vivian"],
           sup="n1_tixdesk_sla_holiday#e12")
    s.fact("config", "zh", "新合同：P1 first response SLA 改为 15 min（原 30 min）。", ["15 min"], sup="n1_tixdesk_sla_holiday#e8")
    s.fact("convention", "zh", "P1 SLA 是 7x24 计时，不看 business calendar。", ["7x24"])
    s.fact("config", "zh", "附件上限提到 50MB（大客户要传录屏）。", ["50MB"], sup="n2_tixdesk_inbound_email#e6")
    s.fact("convention", "zh", "附件 .exe / .bat / .js 这类一律 reject。", [".exe"])
    s.ok(["50 agents never get the same ticket"], "并发 e2e 用例因 pool 太小超时，已 skip 并开 issue（未解决）")
    s.forbid("issues/851", "Found 43 matches across 19 files", "drizzle-orm 0.44.2", "Exceeded timeout of 5000 ms")
    return s


def n4():
    s = Session("n4_tixdesk_owner_questions", CWD, "2028-05-03T07:40:00.000Z", version="2.1.330", lang="mixed", order=4)
    attach(s, [("160", "fact", "1 周前", "SLA owner 是 Vivian（周薇）", "SLA owner 是 Vivian（周薇）"),
               ("162", "decision", "1 周前", "SLA 计时：1 小时窗口内建 delayed job，cron 每 10 分钟补窗口", "cron 每 10 分钟补窗口")],
           event="SessionStart")
    s.snapshot()
    s.user("hi，我是 Vivian。想先搞清楚 SLA breach 了以后通知是怎么发出去的？")
    s.grep("class SlaBreachNotifier", "apps/worker/src/sla/sla-breach.notifier.ts:12:export class SlaBreachNotifier {")
    s.read(CWD + "/apps/worker/src/sla/sla-breach.notifier.ts",
           "  async onBreach(ticket: Ticket, policy: SlaPolicy) {\n    await this.inbox.notify(ticket.assigneeId, 'sla_breached', { ticketId: ticket.id });\n"
           "    if (policy.priority === 'P1') await this.wecom.send(this.cfg.p1Room, renderP1(ticket));\n"
           "    await this.audit.log('sla.breach', ticket.id);\n  }")
    s.say("breach 的时候 `SlaBreachNotifier.onBreach` 做三件事：\n1. 给 assignee 发站内信（`sla_breached`）\n"
          "2. P1 额外发到企业微信群（`p1Room`）\n3. 写一条 audit log `sla.breach`\n触发点是 ticket-sla queue 里的 `breach-check` job。")
    s.user("那 dashboard 上那个 breach rate 是从哪算的？")
    search(s, "SLA breach rate dashboard", [
        ("171", "fact", "SLA dashboard 数据来自 audit_log 表的 sla.breach 事件，Metabase 每小时刷新", "Metabase 每小时刷新")])
    s.grep("sla.breach", "apps/api/src/reports/sla-report.service.ts:27:      .where(eq(auditLog.event, 'sla.breach'))")
    s.say("api 的 `SlaReportService` 按天聚合 `audit_log` 里的 `sla.breach` 事件，除以当天新建的 ticket 数，dashboard 调 `/reports/sla` 拿数据。")
    s.user("P1 和 P2 是分开算的吗？")
    s.say("是的，`groupBy(priority)`，前端按 priority 分开画。")
    s.user("ok 懂了。五一你们有出去玩吗，我去了趟千岛湖，人巨多")
    s.say("我没有假期 😄 千岛湖五一人多是真的。SLA 这块还有想看的随时叫我。")
    s.stop()
    s.title("SLA 新 owner 熟悉代码")
    s.forbid("我去了趟千岛湖", "P1 和 P2 是分开算的吗", "breach 了以后通知是怎么发出去的", "dashboard 上那个 breach rate 是从哪算的")
    return s


SESSIONS = [n1, n2, n3, n4]
