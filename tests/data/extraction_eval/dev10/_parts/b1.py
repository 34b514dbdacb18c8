"""b1 — spokeshare bike-share backend, session 1: docks flapping offline at night."""
from lib import Session, item, gold

NAME = "b1_spokeshare_dock_flapping"
CWD = "/home/dev/work/spokeshare"
HOOK = "https://hooks.slack.com/services/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"


def build():
    s = Session(NAME, CWD, "2026-05-05T15:10:00.000Z", "fix/dock-offline-flap")
    s.snapshot()
    s.user("Ops is complaining that docks flap offline/online on the dashboard every few minutes, mostly at night. "
           "Quick context since this is a fresh session: dock-api is the NestJS service on port 3100, docks talk MQTT over TLS "
           "to our Mosquitto broker at mqtt.spokeshare.internal:8883 and dock-api subscribes to docks/+/heartbeat (every 30s per dock). "
           "A sweeper marks a dock offline when its last_seen in Redis is older than 45s.", gap=0)
    s.say("Nightly flapping in batches smells like clock skew on the docks: if a dock's RTC drifts, the timestamps it reports "
          "could land outside the 45s window. Let me look at the heartbeat path first.")
    s.read(CWD + "/apps/dock-api/src/presence/heartbeat.handler.ts",
           "@Injectable()\nexport class HeartbeatHandler {\n  constructor(private prisma: PrismaService, private redis: RedisService) {}\n\n"
           "  @MqttSubscribe('docks/+/heartbeat')\n  async onHeartbeat(topic: string, payload: HeartbeatDto) {\n"
           "    const dockId = topic.split('/')[1];\n    await this.prisma.dockStatus.upsert({\n      where: { dockId },\n"
           "      update: { bikes: payload.bikes, battery: payload.battery },\n      create: { dockId, bikes: payload.bikes, battery: payload.battery },\n"
           "    });\n    await this.redis.set(`dock:last_seen:${dockId}`, Date.now());\n  }\n}")
    s.say("That rules out clock skew: last_seen is stamped with the server's Date.now(), the dock's own clock never enters into it. "
          "What stands out is the order: the handler awaits the Prisma upsert of dock_status and only then writes last_seen. "
          "If the DB is slow, last_seen goes stale. Let me check the night window in the logs.")
    s.bash("kubectl -n fleet logs deploy/dock-api --since=10h | grep -E 'P2024|settle-rides|marked offline' | head -n 9",
           "[Nest] 1  - 05/05/2026, 1:12:04 AM   LOG [SettleRidesProcessor] settle-rides: started batch 2026-05-04 (18,412 rides)\n"
           "[Nest] 1  - 05/05/2026, 1:12:51 AM ERROR [HeartbeatHandler] PrismaClientKnownRequestError: Timed out fetching a new connection from the connection pool. (code P2024, connection_limit: 5, pool_timeout: 10)\n"
           "[Nest] 1  - 05/05/2026, 1:12:51 AM ERROR [HeartbeatHandler] PrismaClientKnownRequestError: Timed out fetching a new connection from the connection pool. (code P2024, connection_limit: 5, pool_timeout: 10)\n"
           "[Nest] 1  - 05/05/2026, 1:13:05 AM  WARN [PresenceSweeper] dock D-0412 marked offline (last_seen 47s ago)\n"
           "[Nest] 1  - 05/05/2026, 1:13:05 AM  WARN [PresenceSweeper] dock D-0388 marked offline (last_seen 46s ago)\n"
           "[Nest] 1  - 05/05/2026, 1:13:20 AM  WARN [PresenceSweeper] dock D-0107 marked offline (last_seen 52s ago)\n"
           "[Nest] 1  - 05/05/2026, 1:14:02 AM ERROR [HeartbeatHandler] PrismaClientKnownRequestError: Timed out fetching a new connection from the connection pool. (code P2024, connection_limit: 5, pool_timeout: 10)\n"
           "[Nest] 1  - 05/05/2026, 1:19:47 AM   LOG [SettleRidesProcessor] settle-rides: batch 2026-05-04 done in 463s\n"
           "[Nest] 1  - 05/05/2026, 1:20:10 AM  WARN [PresenceSweeper] dock D-0412 marked offline (last_seen 49s ago)",
           "Look at pool errors and offline flips overnight")
    s.say("Found it. Root cause: the nightly settle-rides BullMQ worker runs inside the dock-api process and shares its Prisma pool "
          "(connection_limit=5). While it settles, heartbeat upserts wait for a connection and time out with P2024, so the handler never "
          "reaches the Redis write, last_seen goes stale past 45s and the sweeper flips docks offline until the next heartbeat gets through.")
    s.say("Proposed changes:\n1. Now: write last_seen to Redis first, before and independent of the dock_status upsert, so a slow DB can't make a dock look offline.\n"
          "2. Raise the Prisma connection_limit from 5 to 20 for dock-api.\n"
          "3. Longer term: move presence to MQTT Last Will (LWT) so the broker tells us when a dock drops.")
    s.user("Don't touch connection_limit, RDS is already close to max_connections with everything else on it. And settle-rides shouldn't "
           "live in dock-api at all, it belongs in ride-billing; Tommy (唐明) owns ride-billing, I'll ask him to take it over. "
           "LWT sounds interesting, how would that work with our firmware?")
    s.say("Each dock sets a will when it connects: topic docks/<id>/status, payload offline, retained. If the TCP session dies without a clean "
          "DISCONNECT, Mosquitto publishes the will once 1.5x the keepalive has passed; on reconnect the dock publishes online (retained). "
          "dock-api subscribes to docks/+/status and flips presence right away. Presence then no longer depends on dock-api's DB path or on a "
          "sweeper loop. The 2.3 provisioning template already has will_topic, so it's mostly config on our side.")
    s.user("ok, go with LWT. keep the heartbeat for telemetry only.")
    s.edit(CWD + "/apps/dock-api/src/presence/heartbeat.handler.ts",
           "    await this.prisma.dockStatus.upsert({",
           "    await this.redis.set(`dock:last_seen:${dockId}`, Date.now());\n    await this.prisma.dockStatus.upsert({")
    s.write(CWD + "/apps/dock-api/src/presence/lwt.listener.ts",
            "@Injectable()\nexport class LwtListener {\n  constructor(private presence: PresenceService) {}\n\n"
            "  @MqttSubscribe('docks/+/status')\n  async onStatus(topic: string, raw: Buffer) {\n    const dockId = topic.split('/')[1];\n"
            "    const state = raw.toString();\n    if (state !== 'online' && state !== 'offline') return;\n"
            "    await this.presence.set(dockId, state);\n  }\n}\n")
    s.say("LwtListener is in place and the heartbeat handler now writes last_seen to Redis first. I checked the status payload with a small inline if.")
    s.user("Please use a class-validator DTO for that instead. That's our convention for every MQTT and HTTP payload, no hand-rolled checks.")
    s.edit(CWD + "/apps/dock-api/src/presence/lwt.listener.ts",
           "    const state = raw.toString();\n    if (state !== 'online' && state !== 'offline') return;\n    await this.presence.set(dockId, state);",
           "    const dto = await validateOrReject(plainToInstance(PresenceStatusDto, { state: raw.toString() }));\n"
           "    await this.presence.set(dockId, dto.state);")
    s.bash("docker compose up -d mosquitto redis postgres && pnpm --filter dock-api test:e2e",
           " Container spokeshare-mosquitto-1  Started\n Container spokeshare-redis-1  Started\n Container spokeshare-postgres-1  Started\n\n"
           "> dock-api@0.19.0 test:e2e /home/dev/work/spokeshare/apps/dock-api\n> jest --config test/jest-e2e.json\n\n"
           "PASS test/presence.e2e-spec.ts (7.412 s)\nPASS test/heartbeat.e2e-spec.ts\n\nTest Suites: 6 passed, 6 total\nTests:       23 passed, 23 total\nTime:        19.87 s",
           "Start deps and run the e2e suite", run=31)
    s.say("e2e passes. Note the suite needs the compose services up first (docker compose up -d mosquitto redis postgres); "
          "without them it hangs on the MQTT connect instead of failing.")
    s.user("nice. Offline alerts should go to #fleet-alerts, here's the webhook: " + HOOK +
           " — put it in a sealed secret, not in .env.example. Also standup tomorrow is moved to 9:45, don't forget.")
    s.bash("kubectl -n fleet create secret generic dock-api-slack --from-literal=SLACK_WEBHOOK_URL='" + HOOK + "' "
           "--dry-run=client -o yaml | kubeseal --format yaml > deploy/dock-api/slack-sealed.yaml && wc -l deploy/dock-api/slack-sealed.yaml",
           "17 deploy/dock-api/slack-sealed.yaml", "Seal the Slack webhook")
    s.say("Sealed secret is in deploy/dock-api/slack-sealed.yaml (dock-api-slack), mounted as SLACK_WEBHOOK_URL; the offline alert posts to "
          "#fleet-alerts from there. Nothing went into .env.example.")
    s.user("thanks!")
    s.title("Fix dock presence flapping at night")

    g = gold(NAME, CWD, 1, "en", [
        item("e1", "fact", "config", "en", "dock-api is the NestJS service and listens on port 3100.", ["dock-api", "3100"]),
        item("e2", "fact", "config", "en",
             "Docks talk MQTT over TLS to the Mosquitto broker at mqtt.spokeshare.internal:8883 and send heartbeats on docks/+/heartbeat every 30s.",
             ["mqtt.spokeshare.internal:8883"]),
        item("e3", "experience", "root_cause", "en",
             "Night-time dock flapping: the nightly settle-rides worker ran inside dock-api and exhausted its Prisma pool (connection_limit=5); "
             "heartbeat upserts timed out with P2024 before the handler wrote last_seen, so last_seen went stale past 45s and the sweeper marked docks offline.",
             ["settle-rides", "P2024"]),
        item("e4", "experience", "fix", "en",
             "The heartbeat handler must write last_seen to Redis first, independent of the dock_status DB upsert, so a slow DB can't make docks look offline.",
             ["last_seen to Redis first"]),
        item("e5", "decision", "decision", "en",
             "Dock presence uses MQTT Last Will (LWT) on docks/<id>/status instead of the Redis last_seen sweeper, so presence no longer depends on "
             "dock-api's DB path; heartbeats are kept for telemetry only.",
             ["LWT", "telemetry only"], chosen="Last Will", over=["sweeper"], why=["DB path"]),
        item("e6", "fact", "preference", "en", "ride-billing is owned by Tommy (唐明).", ["Tommy", "唐明"]),
        item("e7", "fact", "convention", "en", "Every MQTT and HTTP payload is validated with a class-validator DTO; no hand-rolled checks.",
             ["class-validator", "hand-rolled"]),
        item("e8", "fact", "command", "en",
             "dock-api e2e tests need the compose services first: `docker compose up -d mosquitto redis postgres`, then `pnpm --filter dock-api test:e2e` "
             "(without them it hangs on the MQTT connect).",
             ["docker compose up -d mosquitto redis postgres", "pnpm --filter dock-api test:e2e"]),
        item("e9", "fact", "config", "en",
             "Dock offline alerts post to Slack #fleet-alerts; the webhook lives in the sealed secret dock-api-slack (SLACK_WEBHOOK_URL), never in .env.example.",
             ["#fleet-alerts", "SLACK_WEBHOOK_URL"]),
    ], [
        {"note": "RDS is close to max_connections; don't raise pool limits", "must": ["max_connections"]},
        {"note": "settle-rides belongs in ride-billing, not dock-api", "must": ["belongs in ride-billing"]},
        {"note": "Mosquitto publishes the will after 1.5x keepalive", "must": ["1.5x the keepalive"]},
    ], [
        "smells like clock skew",
        "Raise the Prisma connection_limit from 5 to 20",
        "Timed out fetching a new connection",
        "Tests:       23 passed",
        "standup tomorrow is moved to 9:45",
        "thanks!",
    ], [HOOK])
    return s, g
