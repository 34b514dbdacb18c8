"""a1 — shelfwise (public-library lending), session 1 of 3, English."""
from _lib import Session

NAME = "a1_shelfwise_renewal_count"
CWD = "/home/dev/work/shelfwise"


def build():
    s = Session(NAME, CWD, "fix/renewal-count", "2026-04-06T14:05:00Z")
    s.snapshot()
    s.user("hey. wifi at the Eastgate branch is awful today so if I drop off thats why. front desk says patrons get "
           "\"Maximum renewals reached\" on their FIRST renewal in circulation-api. I can repro locally, `pnpm dev:circ` "
           "brings it up on port 3004. loan L-88121 (barcode 31234000456789) reproduces it")
    s.bash("curl -s -X POST localhost:3004/loans/L-88121/renew -H 'x-staff-id: 17'", "Reproduce the renewal error",
           '{"statusCode":409,"error":"Conflict","message":"Maximum renewals reached (3/3)"}')
    s.say("Reproduced. My first suspicion is the limit itself: if `MAX_RENEWALS` is set to 1 in your local env the "
          "check would trip on the first renewal. Checking the config.")
    s.bash("grep -rn RENEW .env.local apps/circulation-api/src/config/", "Look for the renewal limit setting",
           ".env.local:12:MAX_RENEWALS=3\n"
           "apps/circulation-api/src/config/loans.config.ts:8:  maxRenewals: Number(process.env.MAX_RENEWALS ?? 3),")
    s.say("Not the config: MAX_RENEWALS=3, and the error says 3/3 for a loan that has never been renewed, so the "
          "count is what's wrong, not the limit. Looking at how renewals are counted.")
    s.read("/home/dev/work/shelfwise/apps/circulation-api/src/loans/renewals.service.ts",
           "import { Injectable, ConflictException } from '@nestjs/common';\n"
           "import { PrismaService } from '../prisma/prisma.service';\n"
           "import { loansConfig } from '../config/loans.config';\n\n"
           "@Injectable()\nexport class RenewalsService {\n  constructor(private readonly prisma: PrismaService) {}\n\n"
           "  async countRenewals(loan: { id: string; itemId: string }) {\n"
           "    return this.prisma.renewal.count({ where: { itemId: loan.itemId } });\n  }\n\n"
           "  async renew(loanId: string, staffId: number) {\n"
           "    const loan = await this.prisma.loan.findUniqueOrThrow({ where: { id: loanId } });\n"
           "    const used = await this.countRenewals(loan);\n"
           "    if (used >= loansConfig.maxRenewals) {\n"
           "      throw new ConflictException(`Maximum renewals reached (${used}/${loansConfig.maxRenewals})`);\n    }\n"
           "    // ...\n  }\n}")
    s.bash("psql \"$DATABASE_URL\" -c \"select loan_id, count(*) from renewals where item_id = "
           "(select item_id from loans where id='L-88121') group by 1\"", "Count renewal rows for that copy",
           " loan_id | count\n---------+-------\n L-80877 |     2\n L-84410 |     3\n(2 rows)")
    s.say("Root cause: `countRenewals` counts rows in `renewals` by `itemId` instead of by loan. A popular copy "
          "carries the renewal rows of every previous borrower (here L-80877 and L-84410, 5 rows in total), so the next "
          "patron is over the limit before renewing once.\n\nTwo ways to fix it:\n"
          "(a) keep counting rows, but filter by `loanId`\n"
          "(b) add a `renewalCount` int column on `loans`, bump it in the same transaction as the renewal insert, and "
          "check that\n\nWhich one?")
    s.user("b. reports team has been asking for that column anyway", dt_s=75)
    s.edit("/home/dev/work/shelfwise/prisma/schema.prisma", "  dueAt        DateTime\n",
           "  dueAt        DateTime\n  renewalCount Int      @default(0) @map(\"renewal_count\")\n")
    s.bash("pnpm prisma migrate dev --name loan_renewal_count", "Create and apply the migration",
           "Environment variables loaded from .env.local\nPrisma schema loaded from prisma/schema.prisma\n"
           "Applying migration `20260406141512_loan_renewal_count`\n\nYour database is now in sync with your schema.\n\n"
           "\u2714 Generated Prisma Client (v5.14.0) to ./node_modules/@prisma/client in 212ms")
    s.edit("/home/dev/work/shelfwise/apps/circulation-api/src/loans/renewals.service.ts",
           "    const used = await this.countRenewals(loan);\n    if (used >= loansConfig.maxRenewals) {",
           "    const used = loan.renewalCount;\n    if (used >= loansConfig.maxRenewals) {")
    s.bash("pnpm --filter circulation-api test renewals", "Run renewal tests",
           "FAIL src/loans/renewals.service.spec.ts\n  \u25cf RenewalsService \u203a renew \u203a increments renewalCount\n\n"
           "    PrismaClientKnownRequestError: \n    Invalid `prisma.loan.update()` invocation:\n\n"
           "    The column `loans.renewal_count` does not exist in the current database.\n\n"
           "Tests: 3 failed, 11 passed, 14 total", is_error=True)
    s.say("The specs run against the separate test database (`shelfwise_test` on localhost:5433), and `migrate dev` "
          "only touched the dev database. Resetting the test DB and re-running.")
    s.bash("pnpm db:test:reset && pnpm --filter circulation-api test renewals", "Reset test DB, rerun tests",
           "Database reset successful\n\nPASS src/loans/renewals.service.spec.ts\n\nTests: 14 passed, 14 total\n"
           "Time: 3.481 s")
    s.say("All 14 pass. Note for next time: after any Prisma migration, run `pnpm db:test:reset` before the specs, "
          "otherwise they hit the old schema on 5433. Existing loans still have renewal_count = 0, so they need a "
          "backfill from the renewals table — want me to write it?")
    s.user("yeah backfill with a one-off SQL, put it in prisma/sql/backfill_renewal_count.sql. and from now on raw SQL "
           "lives only in prisma/sql/, dont sprinkle $queryRaw around the services. also barcodes: keep them as "
           "strings ALWAYS, theyre 14 digits and a few branches' start with 0, someone parsed them to numbers last year "
           "and we lost the leading zero on like 2000 items lol", dt_s=120)
    s.write("/home/dev/work/shelfwise/prisma/sql/backfill_renewal_count.sql",
            "-- one-off: fill loans.renewal_count from the renewals table (2026-04-06)\n"
            "UPDATE loans l\n   SET renewal_count = r.cnt\n  FROM (SELECT loan_id, count(*) AS cnt FROM renewals GROUP BY loan_id) r\n"
            " WHERE r.loan_id = l.id\n   AND l.returned_at IS NULL;\n")
    s.say("Written to prisma/sql/backfill_renewal_count.sql (only open loans). Barcodes stay `string` in the DTOs and "
          "the Prisma model (`String @db.VarChar(14)`).")
    s.user("btw while youre in there. hold pickup window: a hold sits on the shelf 7 days then should roll to the next "
           "patron in the queue. right now nothing expires them, circ staff do it by hand every morning. options?",
           dt_s=200)
    s.say("A few ways to expire holds after the 7-day pickup window:\n\n"
          "1. a BullMQ delayed job per hold, scheduled for the pickup deadline when the hold turns ready\n"
          "2. one repeatable sweep job (say every 15 minutes) in holds-worker that expires all holds whose "
          "`pickupBy` is in the past and promotes the next patron\n"
          "3. pg_cron inside Postgres calling a SQL function\n\n"
          "1 is the most precise, 2 is the simplest and catches up by itself after downtime, 3 keeps it all in the "
          "DB but needs pg_cron enabled in the RDS parameter group.")
    s.user("2 i think", dt_s=55)
    s.write("/home/dev/work/shelfwise/apps/holds-worker/src/sweep/sweep.scheduler.ts",
            "import { Queue } from 'bullmq';\nimport { connection } from '../redis';\n\n"
            "export const sweepQueue = new Queue('holds:sweep', { connection });\n\n"
            "export async function scheduleSweep() {\n"
            "  await sweepQueue.add('expire-ready-holds', {}, {\n"
            "    repeat: { pattern: '*/15 * * * *' },\n    removeOnComplete: 100,\n  });\n}\n")
    s.user("and the reason fwiw: delayed jobs vanish whenever somebody runs FLUSHALL on the staging redis, which "
           "happens more than id like to admit. a sweep just catches up on the next run", dt_s=30)
    s.say("Makes sense, a sweep has no per-hold state to lose. Scheduled: queue `holds:sweep` in holds-worker, "
          "repeat pattern `*/15 * * * *`. I'll add the processor next.")
    s.write("/home/dev/work/shelfwise/apps/holds-worker/src/sweep/sweep.processor.ts",
            "import { Worker } from 'bullmq';\nimport { connection } from '../redis';\nimport { expireReadyHolds } from "
            "'../holds/expire';\n\nexport const sweepWorker = new Worker('holds:sweep', async () => {\n"
            "  const n = await expireReadyHolds(new Date());\n  return { expired: n };\n}, { connection });\n")
    s.user("cool. one more thing, Maggie (Margaret Okafor) owns catalog-sync — dont touch the MARC import mapping "
           "without pinging her first. ok thats it, going to grab lunch before the storytime crowd shows up",
           dt_s=90)
    s.say("Got it. Summary of today:\n- renewals now use `loans.renewalCount` (migration `loan_renewal_count`, "
          "backfill in prisma/sql/)\n- holds expire via the 15-minute sweep in holds-worker\n- tests green (14/14)")
    s.stop_hook()
    s.title("Fix renewal count and add hold expiry sweep")

    gold = {
        "session": NAME, "project": CWD, "order": 1, "language": "en",
        "expected": [
            {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
             "text": "circulation-api runs locally with `pnpm dev:circ` and listens on port 3004.",
             "must": ["3004", "dev:circ"]},
            {"id": "e2", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The renewal limit per loan is MAX_RENEWALS=3 (read in apps/circulation-api/src/config/loans.config.ts).",
             "must": ["MAX_RENEWALS=3"]},
            {"id": "e3", "layer": "experience", "kind": "root_cause", "lang": "en",
             "text": "Patrons hit 'Maximum renewals reached' on their first renewal because RenewalsService.countRenewals "
                     "counted renewal rows by itemId instead of by loan, so earlier borrowers' renewals of the same copy counted.",
             "must": ["itemId"]},
            {"id": "e4", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Renewals are tracked in a renewalCount column on loans, incremented in the same transaction as the "
                     "renewal (option b), over counting renewal rows filtered by loanId (option a); the reports team wants the column anyway.",
             "must": ["renewalCount"], "chosen": "renewalCount", "over": ["loanId"], "why": ["reports team"]},
            {"id": "e5", "layer": "experience", "kind": "fix", "lang": "en",
             "text": "Specs failed with 'column loans.renewal_count does not exist' after `prisma migrate dev`: the tests use "
                     "the separate shelfwise_test DB on localhost:5433; run `pnpm db:test:reset` after a migration.",
             "must": ["db:test:reset"]},
            {"id": "e6", "layer": "fact", "kind": "convention", "lang": "en",
             "text": "Raw SQL lives only in prisma/sql/; no $queryRaw scattered around the services.",
             "must": ["prisma/sql"]},
            {"id": "e7", "layer": "fact", "kind": "convention", "lang": "en",
             "text": "Barcodes are 14-digit strings and must always stay strings (some start with 0; parsing them to "
                     "numbers once lost the leading zero on ~2000 items).",
             "must": ["barcode", "leading zero"]},
            {"id": "e8", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "A ready hold sits on the pickup shelf for 7 days, then rolls to the next patron in the queue.",
             "must": ["7 days"]},
            {"id": "e9", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Holds past the pickup window are expired by a repeatable sweep job in holds-worker (option 2), over a "
                     "BullMQ delayed job per hold or pg_cron, because delayed jobs vanish whenever someone runs FLUSHALL on staging redis.",
             "must": ["sweep"], "chosen": "sweep", "over": ["delayed job"], "why": ["FLUSHALL"]},
            {"id": "e10", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The hold-expiry sweep runs in holds-worker on BullMQ queue `holds:sweep` with repeat pattern `*/15 * * * *`.",
             "must": ["holds:sweep", "*/15 * * * *"]},
            {"id": "e11", "layer": "fact", "kind": "preference", "lang": "en",
             "text": "Margaret Okafor (Maggie) owns catalog-sync; ping her before touching the MARC import mapping.",
             "must": ["Margaret Okafor"]},
        ],
        "acceptable": [
            {"must": ["backfill_renewal_count.sql"], "note": "one-off backfill script location"},
        ],
        "forbidden": ["wifi at the Eastgate branch", "storytime crowd", "L-84410", "14 passed, 14 total",
                      "20260406141512"],
        "secrets": [],
    }
    return s, gold
