"""b3 — spokeshare, session 3: presence back to a sweeper, queue rename, planner every 10 min, zod."""
from lib import Session, item, gold, recall_block

NAME = "b3_spokeshare_presence_revert"
CWD = "/home/dev/work/spokeshare"
B1 = "b1_spokeshare_dock_flapping"
B2 = "b2_spokeshare_planner_solver"
MQTT = "mqtts://dock-ingest:Hv7-tQm2-Lp9x@mqtt-staging.spokeshare.internal:8883"


def build():
    s = Session(NAME, CWD, "2026-05-26T14:00:00.000Z", "fix/presence-sweeper")
    s.snapshot()
    reminder = ("<system-reminder>\nUserPromptSubmit hook additional context: " + recall_block([
        '- #24 decision · 21 days ago: "Dock presence uses MQTT Last Will (LWT) on docks/<id>/status instead of the Redis last_seen sweeper"',
        '- #31 fact · 13 days ago: "rebalance-planner runs on cron */15 6-21 * * * (every 15 minutes during the day)"',
    ], zh=False) + "\n</system-reminder>\n")
    s.user(reminder + "Firmware 2.4 went out to about 60% of the docks last week and presence is wrong again, the other way round this time: "
           "a 2.4 dock that loses power keeps showing online forever. Hana, our firmware person, says the 2.4 MQTT stack only sets the will "
           "on the first connect after boot, not on reconnects, so the broker has nothing to publish. Also FYI Tommy is on parental leave "
           "until August, ride-billing questions go to Mei (王美琳) for now.", gap=0)
    s.say("That explains it: any 2.4 dock that has reconnected once since boot has no will registered, so when it dies Mosquitto publishes nothing "
          "and LwtListener never hears about it. Let me find everything that depends on LWT.")
    s.bash("grep -rn \"LwtListener\\|docks/+/status\" apps/dock-api/src",
           "apps/dock-api/src/presence/presence.module.ts:6:import { LwtListener } from './lwt.listener';\n"
           "apps/dock-api/src/presence/presence.module.ts:11:  providers: [PresenceService, LwtListener, HeartbeatHandler],\n"
           "apps/dock-api/src/presence/lwt.listener.ts:7:  @MqttSubscribe('docks/+/status')",
           "Find LWT usages")
    s.say("Before I change anything: do you want to keep LWT as a fast path for 2.3 docks and add a sweeper as a fallback, or remove LWT completely?")
    s.user("Remove it completely. Two code paths for presence is how we got here, and I don't want presence to depend on firmware again; "
           "Hana says 2.5 won't fix the will before Q4 either. Back to the heartbeat sweeper, but 3 missed heartbeats (90s) instead of 45s "
           "so one slow heartbeat doesn't flip a dock.")
    s.edit(CWD + "/apps/dock-api/src/presence/presence.module.ts",
           "  providers: [PresenceService, LwtListener, HeartbeatHandler],",
           "  providers: [PresenceService, PresenceSweeper, HeartbeatHandler],")
    s.write(CWD + "/apps/dock-api/src/presence/presence.sweeper.ts",
            "export const OFFLINE_AFTER_MS = 90_000; // 3 missed heartbeats at 30s\n\n@Injectable()\nexport class PresenceSweeper {\n"
            "  constructor(private redis: RedisService, private presence: PresenceService) {}\n\n  @Interval(15_000)\n  async sweep() {\n"
            "    const now = Date.now();\n    for await (const [dockId, seen] of this.redis.scanLastSeen()) {\n"
            "      if (now - seen > OFFLINE_AFTER_MS) await this.presence.set(dockId, 'offline');\n    }\n  }\n}\n")
    s.bash("pnpm --filter dock-api test:e2e -- presence",
           "FAIL test/presence.e2e-spec.ts (8.207 s)\n  ● presence › marks a dock offline after 45s without heartbeat\n\n"
           "    expect(received).toBe(expected) // Object.is equality\n\n    Expected: \"offline\"\n    Received: \"online\"\n\n"
           "      41 |     await clock.advance(46_000);\n      42 |     await sweeper.sweep();\n    > 43 |     expect(await presence.get('D-0412')).toBe('offline');\n"
           "         |                                          ^\n\n      at Object.<anonymous> (test/presence.e2e-spec.ts:43:42)\n\n"
           "Test Suites: 1 failed, 1 total\nTests:       1 failed, 4 passed, 5 total",
           "Run the presence e2e spec", is_error=True, run=22)
    s.say("Only the spec that still asserts the old 45s threshold fails; updating it to advance the clock past 90s.")
    s.edit(CWD + "/apps/dock-api/test/presence.e2e-spec.ts",
           "  it('marks a dock offline after 45s without heartbeat', async () => {\n    await clock.advance(46_000);",
           "  it('marks a dock offline after 90s without heartbeat', async () => {\n    await clock.advance(91_000);")
    s.bash("pnpm --filter dock-api test:e2e -- presence",
           "PASS test/presence.e2e-spec.ts (7.981 s)\n\nTest Suites: 1 passed, 1 total\nTests:       5 passed, 5 total",
           "Re-run", run=21)
    s.user("good. Next: platform renamed our queues last week, the planner queue is fleet.rebalance now. dock-api still publishes to "
           "the old name, so nothing has been planned since Thursday. Can you fix the producer?")
    s.bash("grep -rn \"rebalance-jobs\" apps/dock-api/src",
           "apps/dock-api/src/rebalance/rebalance.constants.ts:1:export const REBALANCE_QUEUE = 'rebalance-jobs';",
           "Find the old queue name")
    s.edit(CWD + "/apps/dock-api/src/rebalance/rebalance.constants.ts",
           "export const REBALANCE_QUEUE = 'rebalance-jobs';", "export const REBALANCE_QUEUE = 'fleet.rebalance';")
    s.bash("make deploy-staging SVC=dock-api", "dock-api image sha256:5f2e91c0 pushed\ndeployment.apps/dock-api rolled out (staging)",
           "Deploy to staging", run=95)
    s.user("Also Jun asked to bump the planner, his message: 「planner 改成每 10 分钟跑一次吧, 早高峰 15 分钟太慢了, 车站空得太快」. "
           "So the repeat pattern should be `*/10 6-21 * * *`.")
    s.edit(CWD + "/apps/dock-api/src/rebalance/rebalance.scheduler.ts",
           "  { pattern: '*/15 6-21 * * *', tz: 'Europe/Berlin' }", "  { pattern: '*/10 6-21 * * *', tz: 'Europe/Berlin' }")
    s.bash("make deploy-staging SVC=dock-api && pnpm --filter dock-api exec ts-node scripts/list-repeatables.ts",
           "dock-api image sha256:a03c7d44 pushed\ndeployment.apps/dock-api rolled out (staging)\n"
           "queue=fleet.rebalance key=rebalance-plan::::*/15 6-21 * * * next=2026-05-26T14:45:00.000Z\n"
           "queue=fleet.rebalance key=rebalance-plan::::*/10 6-21 * * * next=2026-05-26T14:40:00.000Z",
           "Deploy and list repeatable jobs", run=102)
    s.say("Gotcha: BullMQ identifies a repeatable job by name + repeat pattern, so changing the cron in code registers a second repeatable "
          "and the old one keeps firing from Redis. The */15 one from the first staging deploy is still there, so the planner would run on both "
          "schedules. The old one has to be removed explicitly with queue.removeRepeatableByKey(); I'll put that in scripts/migrate-repeatables.ts.")
    s.bash("pnpm --filter dock-api exec ts-node scripts/migrate-repeatables.ts --queue fleet.rebalance --keep '*/10 6-21 * * *'",
           "removed rebalance-plan::::*/15 6-21 * * *\nkept    rebalance-plan::::*/10 6-21 * * *", "Remove the stale repeatable")
    s.user("Last thing: we moved off class-validator last sprint, new DTOs are zod schemas via nestjs-zod, so please convert HeartbeatDto while "
           "you're in there. And the staging broker creds rotated, new URL for the e2e env: " + MQTT)
    s.edit(CWD + "/apps/dock-api/src/presence/heartbeat.dto.ts",
           "export class HeartbeatDto {\n  @IsInt() @Min(0) bikes!: number;\n  @IsNumber() @Min(0) @Max(100) battery!: number;\n}",
           "const HeartbeatSchema = z.object({ bikes: z.number().int().min(0), battery: z.number().min(0).max(100) });\n"
           "export class HeartbeatDto extends createZodDto(HeartbeatSchema) {}")
    s.say("Done: HeartbeatDto is a nestjs-zod DTO now, LwtListener and its DTO are deleted, the sweeper flips docks offline after 90s, "
          "the producer publishes to fleet.rebalance and the planner repeats every 10 minutes. The broker URL went into the e2e env in the "
          "sealed secret, not the repo.")
    s.user("great, thanks. Friday demo is at 4, I'll present.")
    s.title("Revert dock presence to heartbeat sweeper")

    g = gold(NAME, CWD, 3, "en", [
        item("e1", "decision", "decision", "en",
             "Dock presence is back to the heartbeat sweeper with a 90s threshold (3 missed heartbeats); MQTT LWT was removed completely "
             "because presence must not depend on firmware (2.4 breaks the will) and two presence code paths caused trouble.",
             ["90s", "sweeper"], chosen="sweeper", over=["LWT"], why=["depend on firmware"], supersedes=B1 + "#e5"),
        item("e2", "experience", "root_cause", "en",
             "Dock firmware 2.4's MQTT stack sets the will only on the first connect after boot, not on reconnects, so LWT never fires for "
             "docks that reconnected once (they stay online forever); 2.5 won't fix it before Q4.",
             ["first connect after boot"]),
        item("e3", "fact", "preference", "en", "Hana is the dock firmware person to ask about firmware.", ["Hana", "firmware"]),
        item("e4", "fact", "preference", "en", "ride-billing questions go to Mei (王美琳) while Tommy is on parental leave until August.",
             ["Mei", "王美琳"], supersedes=B1 + "#e6"),
        item("e5", "fact", "config", "en", "The planner queue is now fleet.rebalance (platform renamed the queues); dock-api publishes there.",
             ["fleet.rebalance"], supersedes=B2 + "#e2"),
        item("e6", "fact", "config", "en",
             "rebalance-planner now runs every 10 minutes: repeat pattern `*/10 6-21 * * *` (15 minutes was too slow for the morning peak).",
             ["*/10 6-21 * * *"], supersedes=B2 + "#e7"),
        item("e7", "experience", "gotcha", "en",
             "BullMQ identifies a repeatable job by name + repeat pattern: changing the cron registers a second repeatable and the old one keeps "
             "firing from Redis; remove the old one with queue.removeRepeatableByKey() (scripts/migrate-repeatables.ts).",
             ["removeRepeatableByKey"]),
        item("e8", "fact", "convention", "en", "DTOs are zod schemas via nestjs-zod; the team moved off class-validator.", ["nestjs-zod"],
             supersedes=B1 + "#e7"),
    ], [
        {"note": "old repeatables can be listed with scripts/list-repeatables.ts", "must": ["list-repeatables"]},
        {"note": "staging deploy command", "must": ["make deploy-staging SVC=dock-api"]},
        {"note": "presence e2e spec now asserts 90s", "must": ["after 90s without heartbeat"]},
    ], [
        "Dock presence uses MQTT Last Will",
        "runs on cron */15 6-21",
        "Before I change anything",
        "Tests:       1 failed",
        "sha256:a03c7d44",
        "nothing has been planned since Thursday",
        "Friday demo is at 4",
    ], ["Hv7-tQm2-Lp9x"])
    return s, g
