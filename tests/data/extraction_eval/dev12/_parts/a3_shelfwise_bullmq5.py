"""a3 — shelfwise, session 3 of 3, English: BullMQ 5 upgrade plus corrections from a1/a2."""
from _lib import Session

NAME = "a3_shelfwise_bullmq5"
CWD = "/home/dev/work/shelfwise"

R1 = "The hold-expiry sweep runs in holds-worker on BullMQ queue `holds:sweep` every 15 minutes."
R2 = "Overdue notices run as the Kubernetes CronJob overdue-notices (06:30 America/Chicago, concurrencyPolicy Forbid)."


def build():
    s = Session(NAME, CWD, "chore/bullmq-5", "2026-04-15T15:20:00Z")
    s.snapshot()
    s.user("ok bullmq 5 upgrade day. bump bullmq to ^5.7 in holds-worker and circulation-api and get tests green. fyi circ "
           "is on 4010 now, the api-gateway grabbed 3004 in docker-compose so dont go curling 3004 and wondering why you "
           "get the gateway 404 page")
    s.maple_search("holds-worker BullMQ queues schedules", [
        {"id": 41, "layer": "fact", "kind": "config", "content": R1, "score": 0.82},
        {"id": 52, "layer": "decision", "kind": "decision", "content": R2, "score": 0.61},
    ])
    s.bash("pnpm --filter holds-worker --filter circulation-api up bullmq@^5.7.8", "Upgrade bullmq",
           "Progress: resolved 1184, reused 1160, downloaded 3, added 3, done\n\n"
           "apps/holds-worker:\n- bullmq 4.17.0\n+ bullmq 5.7.8\n\napps/circulation-api:\n- bullmq 4.17.0\n+ bullmq 5.7.8")
    s.bash("pnpm --filter holds-worker test", "Run holds-worker tests",
           "FAIL src/sweep/sweep.scheduler.spec.ts\n  \u25cf scheduleSweep \u203a registers the repeatable job\n\n"
           "    Error: Queue name cannot contain :\n\n      at new QueueBase (node_modules/bullmq/dist/cjs/classes/queue-base.js:48:19)\n"
           "      at Object.<anonymous> (src/sweep/sweep.scheduler.ts:4:27)\n\nTests: 2 failed, 9 passed, 11 total",
           is_error=True)
    s.say("BullMQ 5 refuses queue names containing `:` (it uses `:` as its own Redis key separator), and our sweep queue "
          "is `holds:sweep`. The straightforward fix is renaming it to `holds-sweep` in the scheduler and the processor. "
          "Note that the old repeatable job stays registered in Redis under the old name until someone removes it.")
    s.user("yep holds-sweep. and put removing the old repeatable from staging + prod redis in the release notes", dt_s=50)
    s.edit("/home/dev/work/shelfwise/apps/holds-worker/src/sweep/sweep.scheduler.ts",
           "new Queue('holds:sweep', { connection })", "new Queue('holds-sweep', { connection })")
    s.edit("/home/dev/work/shelfwise/apps/holds-worker/src/sweep/sweep.processor.ts",
           "new Worker('holds:sweep', async () => {", "new Worker('holds-sweep', async () => {")
    s.bash("pnpm --filter holds-worker --filter circulation-api test", "Run tests after rename",
           "apps/holds-worker test: Tests: 11 passed, 11 total\napps/circulation-api test: Tests: 63 passed, 63 total")
    s.bash("curl -s localhost:4010/health", "Check circulation-api on its new port",
           '{"status":"ok","info":{"db":{"status":"up"},"redis":{"status":"up"}}}')
    s.say("Both packages green (11 + 63) and circulation-api answers on 4010. Release note added under "
          "`docs/releases/2026-04.md`: delete the `holds:sweep` repeatable in staging and prod Redis.")
    s.user("couple of updates from the mgmt meeting while I remember. pickup shelves are overflowing so the holds pickup "
           "window is 5 days now, not a week. and Maggie moved to the digitization project, Dev Patel has catalog-sync "
           "from today so MARC mapping questions go to him", dt_s=140)
    s.read("/home/dev/work/shelfwise/apps/circulation-api/src/config/holds.config.ts",
           "export const holdsConfig = {\n  pickupDays: Number(process.env.HOLD_PICKUP_DAYS ?? 7),\n"
           "  maxActiveHolds: 15,\n};")
    s.edit("/home/dev/work/shelfwise/apps/circulation-api/src/config/holds.config.ts",
           "process.env.HOLD_PICKUP_DAYS ?? 7", "process.env.HOLD_PICKUP_DAYS ?? 5")
    s.say("Default HOLD_PICKUP_DAYS is now 5 (env still overrides it). Holds that are already on the shelf keep the "
          "`pickupBy` they got; the sweep will apply the shorter window to holds that turn ready from now on.")
    s.user("and bad news on the cronjob from last week: ops says no more CronJobs on the shared cluster, were at the "
           "namespace quota. so back inside overdue-notifier, but with the redis lock you suggested so only one pod "
           "actually sends. sorry for the churn", dt_s=90)
    s.say("No problem. Plan: restore the in-process node-cron schedule, and at the start of each run take "
          "`SET overdue:run-lock <run_id> NX PX 600000`; the pod that doesn't get the lock logs and exits the run. "
          "Then remove the CronJob manifest.")
    s.edit("/home/dev/work/shelfwise/apps/overdue-notifier/src/main.ts",
           "  await app.init();\n",
           "  await app.init();\n  cron.schedule('30 6 * * *', () => runWithLock(redis, runOverdue), "
           "{ timezone: 'America/Chicago' });\n")
    s.write("/home/dev/work/shelfwise/apps/overdue-notifier/src/run-lock.ts",
            "import type Redis from 'ioredis';\nimport { randomUUID } from 'node:crypto';\n\n"
            "const LOCK_KEY = 'overdue:run-lock';\nconst LOCK_TTL_MS = 10 * 60 * 1000;\n\n"
            "export async function runWithLock(redis: Redis, fn: (runId: string) => Promise<void>) {\n"
            "  const runId = 'od-' + randomUUID().slice(0, 8);\n"
            "  const ok = await redis.set(LOCK_KEY, runId, 'PX', LOCK_TTL_MS, 'NX');\n"
            "  if (ok !== 'OK') { console.info('overdue run skipped, lock held'); return; }\n  await fn(runId);\n}\n")
    s.bash("git rm -q k8s/overdue-notifier/cronjob.yaml && pnpm --filter overdue-notifier test",
           "Drop the CronJob manifest and run notifier tests",
           "PASS src/run-lock.spec.ts\nPASS src/overdue.spec.ts\n\nTests: 17 passed, 17 total")
    s.user("\U0001f44d thanks. off to the board meeting, wish me luck", dt_s=70)
    s.say("Good luck! Everything is on chore/bullmq-5: bullmq 5.7.8, `holds-sweep` queue, pickup window 5 days, "
          "overdue run back in overdue-notifier behind the Redis lock.")
    s.stop_hook()
    s.title("BullMQ 5 upgrade, hold window and overdue lock")

    gold = {
        "session": NAME, "project": CWD, "order": 3, "language": "en",
        "expected": [
            {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
             "text": "circulation-api now listens on port 4010 locally; the api-gateway took 3004 in docker-compose.",
             "must": ["4010"], "supersedes": "a1_shelfwise_renewal_count#e1"},
            {"id": "e2", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The hold-expiry sweep queue in holds-worker was renamed from holds:sweep to `holds-sweep`.",
             "must": ["holds-sweep"], "supersedes": "a1_shelfwise_renewal_count#e10"},
            {"id": "e3", "layer": "experience", "kind": "fix", "lang": "en",
             "text": "After upgrading to BullMQ 5, tests failed with 'Queue name cannot contain :'; BullMQ 5 rejects ':' in "
                     "queue names, so queues must use '-' (the old repeatable job must be deleted from Redis on deploy).",
             "must": ["cannot contain"]},
            {"id": "e4", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "The hold pickup window is 5 days (HOLD_PICKUP_DAYS default), because pickup shelves are overflowing.",
             "must": ["5 days"], "supersedes": "a1_shelfwise_renewal_count#e8"},
            {"id": "e5", "layer": "fact", "kind": "preference", "lang": "en",
             "text": "Dev Patel owns catalog-sync now (Maggie moved to the digitization project); MARC mapping questions go to him.",
             "must": ["Dev Patel"], "supersedes": "a1_shelfwise_renewal_count#e11"},
            {"id": "e6", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "The overdue run is back inside overdue-notifier (node-cron) guarded by a Redis lock "
                     "(SET overdue:run-lock NX PX, 10 min), over a Kubernetes CronJob, because ops allows no more "
                     "CronJobs on the shared cluster (namespace quota).",
             "must": ["Redis lock"], "chosen": "Redis lock", "over": ["CronJob"], "why": ["quota"],
             "supersedes": "a2_shelfwise_overdue_duplicates#e4"},
        ],
        "acceptable": [
            {"must": ["5.7.8"], "note": "bullmq version"},
            {"must": ["overdue:run-lock"], "note": "lock key detail"},
            {"must": ["release notes"], "note": "one-off deploy step"},
        ],
        "forbidden": [R1, "Overdue notices run as the Kubernetes CronJob", "board meeting", "63 passed",
                      "gateway 404 page"],
        "secrets": [],
    }
    return s, gold
