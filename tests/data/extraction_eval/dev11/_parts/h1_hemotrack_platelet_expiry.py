"""hemotrack r1: platelet units expire a day early at the Tulsa depot (inventory-service)."""

META = {
    "name": "h1_hemotrack_platelet_expiry",
    "cwd": "/home/dev/work/hemotrack",
    "order": 1,
    "language": "en",
    "start": "2026-04-07T14:05:00.000Z",
    "branch": "fix/platelet-expiry-tz",
    "version": "2.1.318",
}

DSN = "postgresql://hemo_ro:Pl8let-Rdr!2026@pg-stg-replica.hemotrack.internal:5432/hemotrack"

SCHEDULER = """import { Injectable, OnModuleInit } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';

export const EXPIRY_QUEUE = 'expiry-scan';

@Injectable()
export class ExpiryScheduler implements OnModuleInit {
  constructor(@InjectQueue(EXPIRY_QUEUE) private readonly queue: Queue) {}

  async onModuleInit() {
    await this.queue.add(
      'sweep',
      {},
      { repeat: { pattern: '30 5 * * *' }, jobId: 'expiry-sweep-daily' },
    );
  }
}"""

COMPUTE = """import { addDays, endOfDay } from 'date-fns';
import { Component } from '@prisma/client';
import { SHELF_LIFE_DAYS } from './shelf-life';

// collectedOn is blood_unit.collected_on (a DATE column)
export function computeExpiry(collectedOn: Date, component: Component): Date {
  return endOfDay(addDays(collectedOn, SHELF_LIFE_DAYS[component]));
}"""

COMPUTE_NEW = """import { addDays } from 'date-fns';
import { fromZonedTime } from 'date-fns-tz';
import { Component } from '@prisma/client';
import { SHELF_LIFE_DAYS } from './shelf-life';

// collectedOn is blood_unit.collected_on (a DATE column). Prisma gives us 00:00 UTC of that
// calendar day, so read the day in UTC and never let the process TZ touch it.
export function computeExpiry(collectedOn: Date, component: Component, timezone: string): Date {
  const day = collectedOn.toISOString().slice(0, 10);
  const lastDay = addDays(new Date(`${day}T00:00:00Z`), SHELF_LIFE_DAYS[component])
    .toISOString()
    .slice(0, 10);
  return fromZonedTime(`${lastDay}T23:59:59.999`, timezone);
}"""

BACKFILL = """/**
 * One-off: recompute expires_at for units stored with the pre-fix (day-early) expiry.
 * Dry run by default; pass --apply to write.
 *   pnpm tsx scripts/oneoff/2026-04-recompute-expiry.ts [--apply]
 */
import { PrismaClient } from '@prisma/client';
import { computeExpiry } from '../../apps/inventory-service/src/expiry/compute-expiry';

const prisma = new PrismaClient();
const apply = process.argv.includes('--apply');

async function main() {
  const units = await prisma.bloodUnit.findMany({
    where: { status: { in: ['AVAILABLE', 'QUARANTINE', 'EXPIRED'] }, collectedOn: { gte: new Date('2026-03-01') } },
    include: { site: true, donor: true },
  });
  let changed = 0;
  for (const unit of units) {
    const fixed = computeExpiry(unit.collectedOn, unit.component, unit.site.timezone);
    if (fixed.getTime() === unit.expiresAt.getTime()) continue;
    changed++;
    console.log(unit.din, unit.donor.lastName, unit.expiresAt.toISOString(), '->', fixed.toISOString());
    if (apply) {
      await prisma.bloodUnit.update({ where: { din: unit.din }, data: { expiresAt: fixed } });
    }
  }
  console.log(`${changed} of ${units.length} units ${apply ? 'updated' : 'would change (dry run)'}`);
}

main().finally(() => prisma.$disconnect());"""


def build(s, recall_block):
    s.snapshot()
    s.user(
        "hey, sorry, back-to-back drive planning calls all morning. Blood bank ops says platelet units at the Tulsa depot "
        "(TUL2) show up as EXPIRED on the dashboard a day before they actually expire. a tech had to override three units "
        "yesterday. Platelets are good for 5 days from collection, through 23:59 local on day 5. Can you dig in? "
        "inventory-service is the one that computes it, run it with `pnpm nx serve inventory-service`, it comes up on 3200.",
        gap=0)
    s.think("Off by one day, only at one site? Could be the sweep schedule or the expiry computation. Find where expiry "
            "is computed and scheduled first.")
    s.grep("expiresAt|expiry", "apps/inventory-service/src",
           "apps/inventory-service/src/expiry/expiry.scheduler.ts\n"
           "apps/inventory-service/src/expiry/expiry.processor.ts\n"
           "apps/inventory-service/src/expiry/compute-expiry.ts\n"
           "apps/inventory-service/src/units/unit.service.ts",
           mode="files_with_matches")
    s.read("apps/inventory-service/src/expiry/expiry.scheduler.ts", SCHEDULER)
    s.say(
        "My first suspect is the sweep schedule. The repeatable job on the `expiry-scan` queue uses `30 5 * * *` with no "
        "`tz`, so BullMQ evaluates it in UTC. If the processor compares against the run's calendar date instead of "
        "`expires_at`, it could flip units a day early. Before touching the cron I want to see what the sweep actually did "
        "to one of the overridden units.")
    s.bash(
        "psql \"$DATABASE_URL\" -c \"select din, component, site_code, collected_on, expires_at, status from blood_unit "
        "where site_code = 'TUL2' and status = 'EXPIRED' order by status_changed_at desc limit 5\"",
        "Look at recently expired TUL2 units",
        "psql: error: connection to server on socket \"/var/run/postgresql/.s.PGSQL.5432\" failed: No such file or directory\n"
        "\tIs the server running locally and accepting connections on that socket?", code=2)
    s.say(
        "`DATABASE_URL` isn't set in this shell, so psql fell back to a local socket. Can you give me a read-only "
        "connection string for staging (or run the query yourself)?")
    s.user(f"here, staging replica, read only: {DSN}\ndon't commit it anywhere pls", gap=95)
    s.bash(
        f"psql \"{DSN}\" -c \"select din, component, site_code, collected_on, expires_at, status, status_changed_at from "
        "blood_unit where din in ('W042426004117','W042426004122')\" -c \"select started_at, units_expired from "
        "expiry_sweep_run order by started_at desc limit 3\"",
        "Inspect two overridden units and recent sweep runs",
        "      din      | component | site_code | collected_on |         expires_at         | status  |     status_changed_at\n"
        "---------------+-----------+-----------+--------------+----------------------------+---------+----------------------------\n"
        " W042426004117 | PLT       | TUL2      | 2026-04-01   | 2026-04-06 04:59:59.999+00 | EXPIRED | 2026-04-06 05:30:04.211+00\n"
        " W042426004122 | PLT       | TUL2      | 2026-04-01   | 2026-04-06 04:59:59.999+00 | EXPIRED | 2026-04-06 05:30:04.213+00\n"
        "(2 rows)\n\n"
        "         started_at         | units_expired\n"
        "----------------------------+---------------\n"
        " 2026-04-07 05:30:02.118+00 |            19\n"
        " 2026-04-06 05:30:01.904+00 |            23\n"
        " 2026-04-05 05:30:02.377+00 |            17\n"
        "(3 rows)")
    s.say(
        "That rules the schedule out. The sweep ran on time every day (05:30Z) and it only acts on `expires_at`. Both "
        "units were collected 2026-04-01 and stored with `expires_at = 2026-04-06 04:59:59.999Z`, which is 23:59:59 on "
        "**Apr 5** Central. Collection + 5 days should be Apr 6 23:59:59 Central (`2026-04-07 04:59:59.999Z`). The stored "
        "value is already a day short and the sweep just acted on it, so the bug is where `expires_at` gets computed.")
    s.read("apps/inventory-service/src/expiry/compute-expiry.ts", COMPUTE)
    s.grep("TZ", "deploy/helm/inventory-service",
           "deploy/helm/inventory-service/values.yaml:41:    TZ: America/Chicago", glob="values*.yaml")
    s.say(
        "Root cause: Prisma returns `@db.Date` columns as a JS `Date` at **00:00 UTC** of that day. The pods run with "
        "`TZ=America/Chicago` (helm `values.yaml:41`), so locally that instant is 19:00 on the *previous* calendar day. "
        "`addDays` + `endOfDay` then work in local time and land on 23:59:59 of collection day + 4 instead of + 5. It "
        "affects every component; platelets just show it because a 5-day shelf life leaves no slack.\n\n"
        "Ways to fix it, all of which stop depending on the pod's TZ:\n"
        "1. compute it in Postgres as a generated column: `(collected_on + shelf_life + 1)::timestamp AT TIME ZONE "
        "site_tz - interval '1 ms'`\n"
        "2. keep it in TypeScript but make the zone explicit with date-fns-tz (`fromZonedTime`), zone taken from the site\n"
        "3. move the expiry code to Luxon (`DateTime.fromISO(day, { zone })`)\n\n"
        "Which one?")
    s.user(
        "2. we already use date-fns all over the monorepo, I don't want a second date library just for this. and take the "
        "zone from `site.timezone`, not from the TZ env var. Albuquerque comes on next quarter and that's Mountain time",
        gap=140)
    s.edit("apps/inventory-service/src/expiry/compute-expiry.ts", COMPUTE, COMPUTE_NEW)
    s.edit("apps/inventory-service/src/units/unit.service.ts",
           "    const expiresAt = computeExpiry(dto.collectedOn, dto.component);",
           "    const site = await this.sites.getByCode(dto.siteCode);\n"
           "    const expiresAt = computeExpiry(dto.collectedOn, dto.component, site.timezone);")
    s.bash("pnpm nx test inventory-service --testPathPattern=expiry", "Run expiry tests",
           "> nx run inventory-service:test --testPathPattern=expiry\n\n"
           " FAIL  apps/inventory-service/src/expiry/compute-expiry.spec.ts\n"
           "  \u25cf Test suite failed to run\n\n"
           "    Cannot find module 'date-fns-tz' from 'apps/inventory-service/src/expiry/compute-expiry.ts'\n\n"
           "Test Suites: 1 failed, 1 total\nTests:       0 total", code=1, run=19)
    s.say(
        "date-fns-tz is only declared in `apps/reports/package.json`. Our pnpm workspace doesn't hoist, so "
        "inventory-service can't resolve a package it doesn't declare itself. Adding it to the app's own manifest.")
    s.bash("pnpm add date-fns-tz@^3.2.0 --filter @hemo/inventory-service", "Declare date-fns-tz in inventory-service",
           "Progress: resolved 1412, reused 1398, downloaded 0, added 0, done\n\n"
           "apps/inventory-service:\n+ date-fns-tz 3.2.0\n\nDone in 3.8s", run=6)
    s.bash("pnpm nx test inventory-service --testPathPattern=expiry", "Re-run expiry tests",
           "> nx run inventory-service:test --testPathPattern=expiry\n\n"
           " PASS  apps/inventory-service/src/expiry/compute-expiry.spec.ts\n"
           " PASS  apps/inventory-service/src/expiry/expiry.processor.spec.ts\n\n"
           "Test Suites: 2 passed, 2 total\nTests:       14 passed, 14 total\nTime:        4.102 s", run=17)
    s.say(
        "Fixed: `computeExpiry` now takes the site's timezone and reads `collected_on` as a UTC calendar day, so a unit "
        "collected Apr 1 at TUL2 expires 2026-04-06 23:59:59.999 Central. The lesson for next time: the pnpm workspace is "
        "strict, so any dependency has to be added to the app itself with `pnpm add <pkg> --filter @hemo/inventory-service`, "
        "even if another package in the repo already has it.\n\n"
        "Units already in the table still carry the short expiry. Want a one-off backfill that recomputes `expires_at`?")
    s.user(
        "yes, backfill as a script under scripts/oneoff, dry-run by default. and from now on anything that touches expiry "
        "math needs a test case on a DST switch day, Mar 8 and Nov 1 this year. got burned by that at my last job",
        gap=110)
    s.write("scripts/oneoff/2026-04-recompute-expiry.ts", BACKFILL)
    s.edit("apps/inventory-service/src/expiry/compute-expiry.spec.ts",
           "  it.each([\n    ['2026-04-01', 'PLT', 'America/Chicago', '2026-04-07T04:59:59.999Z'],",
           "  it.each([\n    ['2026-04-01', 'PLT', 'America/Chicago', '2026-04-07T04:59:59.999Z'],\n"
           "    // DST starts 2026-03-08 (CST -> CDT)\n"
           "    ['2026-03-03', 'PLT', 'America/Chicago', '2026-03-09T04:59:59.999Z'],\n"
           "    ['2026-03-08', 'RBC', 'America/Chicago', '2026-04-20T04:59:59.999Z'],\n"
           "    // DST ends 2026-11-01 (CDT -> CST)\n"
           "    ['2026-10-27', 'PLT', 'America/Chicago', '2026-11-02T05:59:59.999Z'],")
    s.bash("pnpm nx test inventory-service --testPathPattern=expiry", "Run expiry tests with DST cases",
           "> nx run inventory-service:test --testPathPattern=expiry\n\n"
           " PASS  apps/inventory-service/src/expiry/compute-expiry.spec.ts\n"
           " PASS  apps/inventory-service/src/expiry/expiry.processor.spec.ts\n\n"
           "Test Suites: 2 passed, 2 total\nTests:       17 passed, 17 total\nTime:        4.388 s", run=17)
    s.say(
        "Backfill script is at `scripts/oneoff/2026-04-recompute-expiry.ts` (dry run unless `--apply`), and the spec now "
        "has cases that cross the Mar 8 and Nov 1 switches. All 17 expiry tests pass.")
    s.user(
        "nice. couple of things so I don't forget: the sweep should keep running at 05:30 but Central time, so put "
        "tz: 'America/Chicago' on the repeatable job. EXPIRY_WARN_HOURS stays 48, that's what the dashboard uses for the "
        "amber badge. And if anything about courier-dispatch comes up, that's Marisol Ortega's service (Mari), ping her "
        "before touching it.", gap=150)
    s.edit("apps/inventory-service/src/expiry/expiry.scheduler.ts",
           "      { repeat: { pattern: '30 5 * * *' }, jobId: 'expiry-sweep-daily' },",
           "      { repeat: { pattern: '30 5 * * *', tz: 'America/Chicago' }, jobId: 'expiry-sweep-daily' },")
    s.say(
        "Done: the `expiry-scan` repeatable job now fires at 05:30 America/Chicago. Left `EXPIRY_WARN_HOURS` at 48 and "
        "didn't touch courier-dispatch.")
    s.user(
        "wait, I see you print unit.donor.lastName in the backfill. kill that. we never log donor names or DOB in any "
        "hemotrack service, the DIN on its own is fine. then commit and open the PR, title "
        "\"fix(inventory): compute unit expiry in site timezone\"", gap=80)
    s.edit("scripts/oneoff/2026-04-recompute-expiry.ts",
           "    console.log(unit.din, unit.donor.lastName, unit.expiresAt.toISOString(), '->', fixed.toISOString());",
           "    console.log(unit.din, unit.expiresAt.toISOString(), '->', fixed.toISOString());")
    s.bash(
        "git add -A && git commit -qm 'fix(inventory): compute unit expiry in site timezone' && git push -u origin "
        "fix/platelet-expiry-tz && gh pr create --fill --title 'fix(inventory): compute unit expiry in site timezone'",
        "Commit, push and open PR",
        "[fix/platelet-expiry-tz 8c1d4e7] fix(inventory): compute unit expiry in site timezone\n"
        " 6 files changed, 97 insertions(+), 9 deletions(-)\n"
        " create mode 100644 scripts/oneoff/2026-04-recompute-expiry.ts\n"
        "branch 'fix/platelet-expiry-tz' set up to track 'origin/fix/platelet-expiry-tz'.\n"
        "https://github.com/hemotrack/hemotrack/pull/412", run=9)
    s.say(
        "Removed the donor name from the backfill output (it prints DIN and the old/new expiry only) and opened "
        "https://github.com/hemotrack/hemotrack/pull/412. The backfill hasn't been run; after merge it's "
        "`pnpm tsx scripts/oneoff/2026-04-recompute-expiry.ts` for the dry run, then `--apply`.")
    s.title("Fix platelet expiry computed a day early")

    return {
        "expected": [
            {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
             "text": "inventory-service runs locally with `pnpm nx serve inventory-service` and listens on port 3200.",
             "must": ["3200"]},
            {"id": "e2", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "Platelets are good for 5 days from collection: a unit expires at 23:59 local time on collection day + 5.",
             "must": ["23:59"]},
            {"id": "e3", "layer": "experience", "kind": "root_cause", "lang": "en",
             "text": "Units expired a day early because Prisma returns the @db.Date collected_on as a Date at 00:00 UTC while "
                     "the pods run with TZ=America/Chicago, so addDays + endOfDay in local time landed on collection day + 4. "
                     "The expiry sweep schedule (first suspect) was ruled out: it ran on time and only acts on expires_at.",
             "must": ["00:00 UTC"]},
            {"id": "e4", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Unit expiry is computed in TypeScript with date-fns-tz (fromZonedTime) in the site's zone (option 2), "
                     "over a Postgres generated column or Luxon, because the monorepo already uses date-fns and we don't "
                     "want a second date library.",
             "must": ["date-fns-tz", "fromZonedTime"],
             "chosen": "date-fns-tz", "over": ["Luxon"], "why": ["second date library"]},
            {"id": "e5", "layer": "fact", "kind": "convention", "lang": "en",
             "text": "Timezone for expiry math comes from `site.timezone`, never from the pod's TZ env var (sites will span "
                     "time zones once Albuquerque, Mountain time, comes on).",
             "must": ["site.timezone"]},
            {"id": "e6", "layer": "experience", "kind": "fix", "lang": "en",
             "text": "Jest failed with \"Cannot find module 'date-fns-tz'\": the pnpm workspace doesn't hoist, so an app must "
                     "declare every dependency itself: `pnpm add <pkg> --filter @hemo/inventory-service`.",
             "must": ["--filter @hemo/inventory-service"]},
            {"id": "e7", "layer": "fact", "kind": "convention", "lang": "en",
             "text": "Rule: any change touching expiry math needs a test case on a DST switch day (2026: Mar 8 and Nov 1).",
             "must": ["DST switch day"]},
            {"id": "e8", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The expiry sweep is a BullMQ repeatable job on the `expiry-scan` queue, registered in "
                     "expiry.scheduler.ts.",
             "must": ["expiry-scan", "expiry.scheduler.ts"]},
            {"id": "e9", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The expiry sweep runs daily at 05:30 Central: repeat pattern `30 5 * * *` with tz 'America/Chicago'.",
             "must": ["30 5 * * *"]},
            {"id": "e10", "layer": "fact", "kind": "config", "lang": "en",
             "text": "EXPIRY_WARN_HOURS=48 drives the dashboard's amber expiry badge.",
             "must": ["EXPIRY_WARN_HOURS", "48"]},
            {"id": "e11", "layer": "fact", "kind": "preference", "lang": "en",
             "text": "courier-dispatch is owned by Marisol Ortega (Mari); ping her before touching it.",
             "must": ["Marisol Ortega"]},
            {"id": "e12", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "Never log donor names or DOB in any hemotrack service; logging the DIN on its own is fine.",
             "must": ["DOB"]},
        ],
        "acceptable": [
            {"must": ["scripts/oneoff"], "note": "one-off scripts live in scripts/oneoff and dry-run unless --apply"},
            {"must": ["pg-stg-replica.hemotrack.internal"], "note": "staging read replica host (the DSN itself is a secret)"},
            {"must": ["TUL2"], "note": "Tulsa depot site code"},
        ],
        "forbidden": [
            "drive planning calls",
            "W042426004117",
            "17 passed",
            "8c1d4e7",
            "pull/412",
            "got burned by that at my last job",
        ],
        "secrets": ["Pl8let-Rdr!2026", DSN],
    }
