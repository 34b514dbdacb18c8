"""hemotrack r3: date-fns-tz -> Luxon, plus a batch of updates (port, queue rename, owner, place_id, warn hours)."""

META = {
    "name": "h3_hemotrack_luxon_followups",
    "cwd": "/home/dev/work/hemotrack",
    "order": 3,
    "language": "en",
    "start": "2026-04-16T15:10:00.000Z",
    "branch": "chore/luxon-expiry",
    "version": "2.1.320",
}

WEBHOOK = "https://hooks.slack.com/services/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"

COMPUTE_DFNS = """import { addDays } from 'date-fns';
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

COMPUTE_LUXON_1 = """import { DateTime } from 'luxon';
import { Component } from '@prisma/client';
import { SHELF_LIFE_DAYS } from './shelf-life';

// collectedOn is blood_unit.collected_on (a DATE column)
export function computeExpiry(collectedOn: Date, component: Component, timezone: string): Date {
  return DateTime.fromJSDate(collectedOn, { zone: timezone })
    .plus({ days: SHELF_LIFE_DAYS[component] })
    .endOf('day')
    .toJSDate();
}"""

OLD_BODY = """  return DateTime.fromJSDate(collectedOn, { zone: timezone })
    .plus({ days: SHELF_LIFE_DAYS[component] })"""

NEW_BODY = """  // Prisma hands us 00:00 UTC of the calendar day: take the day in UTC first, then move to the site zone
  const day = DateTime.fromJSDate(collectedOn, { zone: 'utc' }).toISODate()!;
  return DateTime.fromISO(day, { zone: timezone })
    .plus({ days: SHELF_LIFE_DAYS[component] })"""


def build(s, recall_block):
    reminder = ("<system-reminder>\n<maple-memory>\nRelevant project memories:\n" + recall_block([
        (44, "decision", "decision", "Unit expiry is computed with date-fns-tz fromZonedTime in the site zone; no second date library."),
        (41, "fact", "config", "The expiry sweep is a BullMQ repeatable job on queue expiry-scan (expiry.scheduler.ts)."),
        (31, "fact", "config", "inventory-service runs locally via `pnpm nx serve inventory-service` and listens on 3200 locally."),
        (45, "fact", "config", "EXPIRY_WARN_HOURS=48 (amber badge on the dashboard)."),
    ]) + "\n</maple-memory>\n</system-reminder>\n")
    s.snapshot()
    s.user(
        reminder +
        "morning! the Albuquerque folks sent a box of green chile to the office, it's dangerous. ok so: Nate hit a bug "
        "while onboarding ABQ. for the repeated 1am hour on the Nov 1 fallback, date-fns-tz picks a different offset than "
        "what the reports service prints (reports is on Luxon), so the same unit's status change showed two different "
        "times on two screens. I think we should get date-fns-tz out of inventory-service. Luxon, or is the Temporal polyfill worth it "
        "by now?", gap=0)
    s.say(
        "Quick comparison for this code:\n\n"
        "1. **Luxon**: reports already uses it, so both screens would format through the same library and the same tz "
        "database; mature API (`DateTime.fromISO(day, { zone })`, `endOf('day')`), explicit handling of ambiguous times.\n"
        "2. **@js-temporal/polyfill**: the API that will eventually be native, very precise about ambiguous/skipped times, "
        "but it's still a polyfill (~60 kB), nothing else in the monorepo uses it, and we'd likely rewrite again when "
        "Node ships it.\n\n"
        "I'd lean Luxon for consistency with reports, but either works.")
    s.user("luxon. same lib as reports, one less thing to argue about", gap=55)
    s.grep("date-fns-tz", ".",
           "apps/inventory-service/package.json:22:    \"date-fns-tz\": \"^3.2.0\",\n"
           "apps/inventory-service/src/expiry/compute-expiry.ts:2:import { fromZonedTime } from 'date-fns-tz';\n"
           "apps/reports/package.json:19:    \"date-fns-tz\": \"^3.2.0\",",
           glob="!**/node_modules/**")
    s.read("apps/inventory-service/src/expiry/compute-expiry.ts", COMPUTE_DFNS)
    s.edit("apps/inventory-service/src/expiry/compute-expiry.ts", COMPUTE_DFNS, COMPUTE_LUXON_1)
    s.bash("pnpm remove date-fns-tz --filter @hemo/inventory-service && pnpm add luxon@^3.5.0 @types/luxon "
           "--filter @hemo/inventory-service", "Swap date-fns-tz for luxon in inventory-service",
           "apps/inventory-service:\n- date-fns-tz 3.2.0\n\nDone in 2.9s\n"
           "apps/inventory-service:\n+ luxon 3.5.0\n+ @types/luxon 3.4.2\n\nDone in 3.4s", run=8)
    s.bash("pnpm nx test inventory-service --testPathPattern=expiry", "Run expiry tests",
           " FAIL  apps/inventory-service/src/expiry/compute-expiry.spec.ts\n"
           "  \u25cf computeExpiry \u203a 2026-04-01 PLT America/Chicago\n\n"
           "    expect(received).toEqual(expected)\n\n"
           "    Expected: 2026-04-07T04:59:59.999Z\n"
           "    Received: 2026-04-06T04:59:59.999Z\n\n"
           "Tests:       4 failed, 13 passed, 17 total", code=1, run=17)
    s.say(
        "Same day-early bug again, in a new library. `DateTime.fromJSDate(collectedOn, { zone: timezone })` takes the "
        "instant Prisma gives us for the DATE column (00:00 UTC) and shows it in Central, which is 19:00 the day before, "
        "so everything shifts back a day. The calendar day has to be read in UTC first "
        "(`DateTime.fromJSDate(d, { zone: 'utc' }).toISODate()`), then `fromISO(day, { zone: site.timezone })`.")
    s.edit("apps/inventory-service/src/expiry/compute-expiry.ts", OLD_BODY, NEW_BODY)
    s.bash("pnpm nx test inventory-service --testPathPattern=expiry", "Re-run expiry tests",
           " PASS  apps/inventory-service/src/expiry/compute-expiry.spec.ts\n"
           " PASS  apps/inventory-service/src/expiry/expiry.processor.spec.ts\n\n"
           "Test Suites: 2 passed, 2 total\nTests:       17 passed, 17 total", run=16)
    s.say(
        "All 17 expiry tests pass on Luxon, including the Mar 8 / Nov 1 DST cases. date-fns-tz is gone from "
        "inventory-service (reports still declares it in its own package.json; I left that alone).")
    s.user(
        "\U0001f44d couple of updates while I remember. inventory-service is on 3210 now, the metrics sidecar took the old "
        "one. and the sweep doesn't live in inventory-service anymore: Dev split it out into apps/expiry-worker last week "
        "and the queue is called inventory.expiry-sweep now. check the scheduler still has the Central tz after his move",
        gap=120)
    s.grep("inventory.expiry-sweep", "apps",
           "apps/expiry-worker/src/sweep.scheduler.ts:6:export const SWEEP_QUEUE = 'inventory.expiry-sweep';\n"
           "apps/expiry-worker/src/sweep.scheduler.ts:14:      { repeat: { pattern: '30 5 * * *', tz: 'America/Chicago' }, jobId: 'expiry-sweep-daily' },\n"
           "apps/expiry-worker/src/sweep.processor.ts:9:@Processor(SWEEP_QUEUE)")
    s.say(
        "It's intact: `apps/expiry-worker/src/sweep.scheduler.ts` registers the repeatable job on "
        "`inventory.expiry-sweep` with `30 5 * * *` and `tz: 'America/Chicago'`. The processor imports `computeExpiry` "
        "from inventory-service, so it picks up the Luxon version with no change.")
    s.user(
        "good. courier stuff too: Dev Patel owns courier-dispatch now, Mari moved over to the donor app team. and her "
        "parting gift was convincing me on place_id. our lat/lng for Muskogee is the main entrance, so Directions routes "
        "drivers to the front of the campus instead of the lab dock around the back, 6-7 min lost on every run. we "
        "backfilled place ids for BAP and OWC last week so every site has one now. switch the destination to "
        "place_id:<googlePlaceId> and drop the lat/lng path", gap=140)
    s.memory_search("courier-dispatch owner destination", [
        {"id": 36, "layer": "fact", "kind": "preference", "score": 0.81,
         "content": "courier-dispatch belongs to Marisol Ortega (Mari); ping her before changing it."},
        {"id": 52, "layer": "decision", "kind": "decision", "score": 0.77,
         "content": "Directions destination uses lat/lng rather than place_id (not every site has a place id)."},
        {"id": 55, "layer": "fact", "kind": "constraint", "score": 0.52,
         "content": "STAT orders are never batched; always their own run straight away."},
    ])
    s.edit(".github/CODEOWNERS",
           "/apps/courier-dispatch/  @mortega",
           "/apps/courier-dispatch/  @dpatel")
    s.edit("apps/courier-dispatch/src/orders/order.mapper.ts",
           "    // never the display name: two sites are called \"Saint Francis Hospital\"\n"
           "    deliverTo: `${site.lat},${site.lng}`,",
           "    // never the display name (two sites are called \"Saint Francis Hospital\") and not lat/lng\n"
           "    // (that's the main entrance, the lab dock is elsewhere): the Google place id\n"
           "    deliverTo: `place_id:${site.googlePlaceId}`,")
    s.bash("pnpm nx test courier-dispatch --testPathPattern=eta", "Run ETA tests (lockdown)",
           " FAIL  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           "  \u25cf EtaService \u203a returns the Directions duration for a site\n\n"
           "    NetConnectNotAllowedError: Nock: Disallowed net connect for \"maps.googleapis.com:443/maps/api/directions/json"
           "?origin=...&destination=place_id%3AChIJ6b9Yx1m1tIcRfK2n0rQx3Zc&departure_time=now\"\n\n"
           "Tests:       2 failed, 5 passed, 7 total", code=1, run=14)
    s.say(
        "Expected: the recorded fixtures match on the old `lat,lng` destination, and lockdown refuses the new request. "
        "The fixtures need re-recording once with a key (`NOCK_BACK_MODE=record`). Is `GOOGLE_MAPS_KEY` available in this "
        "shell?")
    s.user("yeah it's exported, go", gap=30)
    s.bash("rm apps/courier-dispatch/test/fixtures/directions/eta.json && NOCK_BACK_MODE=record pnpm nx test "
           "courier-dispatch --testPathPattern=eta && pnpm nx test courier-dispatch",
           "Re-record Directions fixtures, then full suite in lockdown",
           " PASS  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           "nock-back: wrote 3 recordings to apps/courier-dispatch/test/fixtures/directions/eta.json\n\n"
           "Test Suites: 4 passed, 4 total\nTests:       30 passed, 30 total", run=35)
    s.say(
        "Re-recorded against the place_id destination; all 30 courier-dispatch tests pass in lockdown. CODEOWNERS now "
        "lists @dpatel for apps/courier-dispatch.")
    s.user(
        "nice. two more. EXPIRY_WARN_HOURS goes to 72, the director wants three days' heads-up on platelets now. and when "
        "the backfill runs with --apply it should post a summary to #bb-ops, webhook is " + WEBHOOK, gap=100)
    s.edit("deploy/helm/inventory-service/values.yaml",
           "    EXPIRY_WARN_HOURS: \"48\"",
           "    EXPIRY_WARN_HOURS: \"72\"")
    s.edit("scripts/oneoff/2026-04-recompute-expiry.ts",
           "  console.log(`${changed} of ${units.length} units ${apply ? 'updated' : 'would change (dry run)'}`);",
           "  const summary = `${changed} of ${units.length} units ${apply ? 'updated' : 'would change (dry run)'}`;\n"
           "  console.log(summary);\n"
           "  if (apply && process.env.SLACK_BBOPS_WEBHOOK) {\n"
           "    await fetch(process.env.SLACK_BBOPS_WEBHOOK, { method: 'POST', body: JSON.stringify({ text: `expiry backfill: ${summary}` }) });\n"
           "  }")
    s.say(
        "`EXPIRY_WARN_HOURS` is 72 in the inventory-service helm values. The backfill posts its summary to #bb-ops when run "
        "with `--apply`, reading the URL from `SLACK_BBOPS_WEBHOOK`; I didn't put the webhook itself in the repo. It needs "
        "to go into the `hemo-prod` sealed secret before anyone runs the script.")
    s.user(
        "right. and from now on luxon only for anything zone-aware in server code: always DateTime.fromISO(..., { zone: "
        "site.timezone }), never DateTime.local(). also whatever consumes inventory.expiry-sweep has to be idempotent on "
        "the DIN, that job retries. ok ship it, one PR is fine", gap=90)
    s.grep("DateTime\\.local\\(|upsertExpired", "apps",
           "apps/expiry-worker/src/sweep.processor.ts:23:      await this.units.upsertExpired(unit.din, job.data.runId);\n"
           "apps/inventory-service/src/units/unit.repository.ts:88:  async upsertExpired(din: string, runId: string) {",
           glob="!**/*.spec.ts")
    s.bash(
        "git add -A && git commit -qm 'chore: luxon for expiry, place_id destinations, warn at 72h' && git push -u origin "
        "chore/luxon-expiry && gh pr create --fill",
        "Commit, push, open PR",
        "[chore/luxon-expiry 0d4a7f2] chore: luxon for expiry, place_id destinations, warn at 72h\n"
        " 11 files changed, 84 insertions(+), 41 deletions(-)\n"
        "https://github.com/hemotrack/hemotrack/pull/431", run=10)
    s.say(
        "https://github.com/hemotrack/hemotrack/pull/431 is up, with CODEOWNERS pointing courier-dispatch at @dpatel. I "
        "found no `DateTime.local()` in server code, and the sweep processor in expiry-worker already writes through "
        "`upsertExpired(din, ...)`, so a retried sweep job doesn't double-expire a unit.")
    s.title("Move expiry to Luxon; courier and config updates")

    return {
        "expected": [
            {"id": "e1", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Zone-aware expiry code in inventory-service moved from date-fns-tz to Luxon, over the Temporal "
                     "polyfill, because reports already uses Luxon (date-fns-tz resolved the repeated 1am hour at the Nov 1 "
                     "fallback differently from reports, so screens disagreed).",
             "must": ["Luxon"],
             "chosen": "Luxon", "over": ["Temporal"], "why": ["reports"],
             "supersedes": "h1_hemotrack_platelet_expiry#e4"},
            {"id": "e2", "layer": "experience", "kind": "gotcha", "lang": "en",
             "text": "With Luxon, DateTime.fromJSDate(collectedOn, { zone: site tz }) shifts a Prisma DATE (00:00 UTC) to the "
                     "previous day; read the calendar day in UTC first (fromJSDate(d, { zone: 'utc' }).toISODate()) and then "
                     "fromISO(day, { zone }).",
             "must": ["fromJSDate"]},
            {"id": "e3", "layer": "fact", "kind": "config", "lang": "en",
             "text": "inventory-service listens on port 3210 now (the metrics sidecar took its previous port).",
             "must": ["3210"],
             "supersedes": "h1_hemotrack_platelet_expiry#e1"},
            {"id": "e4", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The expiry sweep now lives in apps/expiry-worker and its BullMQ queue is inventory.expiry-sweep "
                     "(still 05:30 America/Chicago).",
             "must": ["inventory.expiry-sweep"],
             "supersedes": "h1_hemotrack_platelet_expiry#e8"},
            {"id": "e5", "layer": "fact", "kind": "preference", "lang": "en",
             "text": "Dev Patel (@dpatel) owns courier-dispatch now; Mari moved to the donor app team.",
             "must": ["Dev Patel"],
             "supersedes": "h1_hemotrack_platelet_expiry#e11"},
            {"id": "e6", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Directions destination is now place_id:<googlePlaceId> and the lat/lng path is dropped: our "
                     "coordinates are hospital main entrances, so drivers were routed away from the lab dock, and every "
                     "site has a place id since BAP and OWC were backfilled.",
             "must": ["place_id"],
             "chosen": "place_id", "over": ["lat/lng"], "why": ["lab dock"],
             "supersedes": "h2_hemotrack_courier_eta_batching#e2"},
            {"id": "e7", "layer": "fact", "kind": "config", "lang": "en",
             "text": "EXPIRY_WARN_HOURS is 72: the director wants three days' warning on platelets.",
             "must": ["EXPIRY_WARN_HOURS", "72"],
             "supersedes": "h1_hemotrack_platelet_expiry#e10"},
            {"id": "e8", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The expiry backfill posts its --apply summary to #bb-ops via the SLACK_BBOPS_WEBHOOK env var (kept in "
                     "the hemo-prod sealed secret, never in the repo).",
             "must": ["SLACK_BBOPS_WEBHOOK"]},
            {"id": "e9", "layer": "fact", "kind": "convention", "lang": "en",
             "text": "Luxon only for zone-aware server code: DateTime.fromISO(..., { zone: site.timezone }), never "
                     "DateTime.local().",
             "must": ["DateTime.local()"]},
            {"id": "e10", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "Consumers of the inventory.expiry-sweep queue must be idempotent on the DIN because the job retries.",
             "must": ["idempotent", "inventory.expiry-sweep"]},
        ],
        "acceptable": [
            {"must": ["NOCK_BACK_MODE=record"], "note": "changing the Directions request means re-recording fixtures"},
            {"must": ["apps/expiry-worker"], "note": "expiry-worker imports computeExpiry from inventory-service"},
            {"must": ["@types/luxon"], "note": "dependency swap in inventory-service"},
        ],
        "forbidden": [
            "no second date library",
            "repeatable job on queue expiry-scan",
            "listens on 3200 locally",
            "amber badge on the dashboard",
            "ping her before changing it",
            "rather than place_id",
            "always their own run straight away",
            "green chile",
            "0d4a7f2",
            "pull/431",
        ],
        "secrets": [WEBHOOK],
    }
