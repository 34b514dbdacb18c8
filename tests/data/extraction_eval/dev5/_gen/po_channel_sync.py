"""Project o: channel-sync, a hotel channel manager (Python 3.12, FastAPI API + Celery workers on RabbitMQ, Redis, Postgres,
S3; partners Expedia, Booking.com, Airbnb). English."""
from lib import Session
from recall5 import attach, remind, search

CWD = "/home/dev/work/channel-sync"


def o1():
    s = Session("o1_channelsync_expedia_429", CWD, "2028-05-15T08:03:00.000Z", branch="fix/expedia-shared-limiter",
                version="2.1.331", lang="en", order=1)
    s.snapshot()
    s.user("Morning. Expedia pushes have been failing with 429s since last night, roughly 30% of ARI updates for the Lisbon group are "
           "sitting in retries. Can you dig in? I have a partner call at 11 and I'd like to know what's going on before that.")
    attach(s, [("510", "fact", "2 weeks ago", "channel-sync is a FastAPI API plus Celery workers; partners are Expedia, Booking.com and Airbnb",
                "FastAPI API plus Celery workers")])
    s.think("Check how the Expedia client throttles and how many workers run.")
    s.grep("class RateLimiter", "channel_sync/partners/ratelimit.py:9:class RateLimiter:")
    s.read(CWD + "/channel_sync/partners/ratelimit.py",
           "class RateLimiter:\n    \"\"\"Token bucket, one per partner.\"\"\"\n\n    def __init__(self, rate: float):\n"
           "        self.rate, self.tokens, self.last = rate, rate, time.monotonic()\n        self.lock = threading.Lock()\n\n"
           "EXPEDIA = RateLimiter(rate=settings.EXPEDIA_RPS)")
    s.bash("kubectl -n channel-sync get deploy ari-worker -o jsonpath='{.spec.replicas}'; echo; "
           "kubectl -n channel-sync rollout history deploy/ari-worker | tail -2",
           "8\n14        scale 3 -> 8 (hpa)\n15        <none>")
    s.say("Root cause: the token bucket lives inside each worker process. `EXPEDIA = RateLimiter(...)` is a module-level object, so each of "
          "the 8 ari-worker replicas believes it owns the whole per-account budget; together they can send 8x the limit. "
          "Last night's HPA scale-up from 3 to 8 replicas is what tipped it over.\n\nOptions:\n"
          "1. Shared token bucket in Redis (a Lua script, one bucket per partner account)\n"
          "2. Divide the limit by replica count in config\n"
          "3. Pin Expedia pushes to a single worker replica")
    s.user("1. Dividing by replica count breaks the moment HPA scales, and a single replica can't keep up on Monday mornings. "
           "For reference, Expedia's limit is 25 requests per second per partner account, across all endpoints. "
           "The limiter Redis is redis-cache.cs.internal:6379, db 3.")
    s.tool("Write", {"file_path": CWD + "/channel_sync/partners/redis_bucket.lua", "content":
                     "local tokens = tonumber(redis.call('HGET', KEYS[1], 't') or ARGV[1])\n"
                     "-- refill by elapsed time, take one token if available\n"},
           "File created successfully at: " + CWD + "/channel_sync/partners/redis_bucket.lua")
    s.edit(CWD + "/channel_sync/partners/ratelimit.py", "EXPEDIA = RateLimiter(rate=settings.EXPEDIA_RPS)",
           "EXPEDIA = RedisTokenBucket(redis_limiter, key=\"rl:expedia:{account}\", rate=settings.EXPEDIA_RPS)")
    s.say("Done. One more thing I noticed: we push one request per inventory change. In the morning rush a single hotel changes the "
          "same room type 20 times a minute. Options:\nA. Coalesce changes per (hotel, room type, date range) in a 5-second window "
          "and push only the latest state\nB. Keep the per-change push")
    s.user("Coalesce. Every call counts against the bucket, and Expedia only cares about the final state anyway.")
    s.read(CWD + "/channel_sync/tasks/ari.py",
           "@app.task(bind=True, autoretry_for=(httpx.HTTPStatusError, requests.HTTPError), max_retries=None, retry_backoff=True)\n"
           "def push_ari(self, partner: str, hotel_id: str, payload: dict):\n    ...")
    s.say("`max_retries=None` means failed pushes retry forever. Options: exponential backoff with jitter, capped at 5 minutes, and "
          "dead-letter after 6 attempts; or keep retrying forever as today.")
    s.user("Backoff with a cap and a DLQ, 6 attempts is fine. Retrying forever is how we ended up with 40k poison messages in March. "
           "All ARI pushes go through the ari_push queue, so hang the DLQ off that.")
    s.edit(CWD + "/channel_sync/tasks/ari.py", "max_retries=None, retry_backoff=True)",
           "max_retries=6, retry_backoff=True, retry_backoff_max=300, retry_jitter=True)")
    s.say("Retries now cap at 5 minutes with jitter and dead-letter after 6 attempts.")
    s.user("Side note: we use requests with one shared Session per partner. Don't create sessions per call, the TLS handshakes "
           "were half our latency last year.")
    s.read(CWD + "/.env", "CELERY_BROKER_URL=amqp://cs_worker:Rb7%40mq-2028@rabbitmq.cs.internal:5672/cs\n"
           "EXPEDIA_API_KEY=exp_live_4c91d2\nEXPEDIA_API_SECRET=exs_9F3kQ7wL2mZx8Rt5Vb1Nc6Hd\nEXPEDIA_RPS=25")
    s.bash("make test", "pytest -q tests/partners tests/tasks\n..............                                           [100%]\n"
           "14 passed in 3.21s")
    s.say("All green. The Redis bucket, 5-second coalescing and the 6-attempt DLQ are in.")
    s.user("How do I run it locally to eyeball the Flower dashboard?")
    s.say("`make dev` brings up the docker compose stack; the API is on http://localhost:8040 and Flower on http://localhost:5555.")
    s.user("Right, 8040, I always forget. Commit it. Commit messages start with the Jira key, like CS-1482: shared Expedia rate limiter. "
           "And remember everything we send to partners uses the hotel's local date, never UTC dates, so keep that in the coalescer.")
    s.bash("git commit -am 'CS-1482: shared Expedia rate limiter, ARI coalescing, bounded retries'",
           "[fix/expedia-shared-limiter a4d91be] CS-1482: shared Expedia rate limiter, ARI coalescing, bounded retries\n 6 files changed")
    s.say("Committed.")
    s.user("DK is on call for partner integrations this week, ping him in #cs-oncall if the limiter misbehaves after deploy. "
           "If you need raw request/response bodies they're in s3://cs-partner-raw, kept for 30 days. Reservation pulls run every "
           "5 minutes from celery beat, leave those alone for now.")
    s.say("Noted. I'll watch the 429 rate after deploy and ping DK in #cs-oncall if anything looks off.")
    s.user("Thanks, off to the partner call.")
    s.stop()
    s.title("Expedia 429s: shared rate limiter")

    s.exp("root_cause", "en", "Expedia 429s: the token bucket was a module-level object inside each worker process, so each of the 8 "
          "ari-worker replicas used the whole per-account budget; the HPA scale-up from 3 to 8 replicas pushed the total over the limit.",
          ["inside each worker process", "8 ari-worker replicas"])
    s.decision("en", "Expedia rate limiting uses a shared token bucket in Redis (Lua script, one bucket per partner account) instead of "
               "dividing the limit by replica count (breaks the moment HPA scales) or pinning pushes to one replica.",
               ["Redis"], "shared token bucket in Redis", ["by replica count"], ["HPA scales"])
    s.fact("config", "en", "Expedia's rate limit is 25 requests per second per partner account, across all endpoints.",
           ["25 requests per second"])
    s.fact("config", "en", "The rate-limiter Redis is redis-cache.cs.internal:6379, db 3.", ["redis-cache.cs.internal"])
    s.decision("en", "ARI changes are coalesced per (hotel, room type, date range) in a 5-second window and only the latest state is pushed, "
               "instead of a per-change push: every call counts against the bucket and Expedia only cares about the final state.",
               ["5-second window"], "Coalesce", ["per-change push"], ["every call counts"])
    s.decision("en", "ARI push retries: exponential backoff with jitter capped at 5 minutes, dead-letter (DLQ) after 6 attempts; no more retrying "
               "forever, which produced 40k poison messages in March.", ["6 attempts"], "DLQ", ["retrying forever"], ["poison messages"])
    s.fact("config", "en", "All ARI pushes go through the ari_push queue.", ["ari_push"])
    s.fact("convention", "en", "Partner HTTP calls use requests with one shared Session per partner; never create a session per call.",
           ["shared Session"])
    s.fact("command", "en", "`make dev` brings up the docker compose stack: API on http://localhost:8040, Flower on http://localhost:5555.",
           ["make dev", "8040"])
    s.fact("convention", "en", "Commit messages start with the Jira key, e.g. `CS-1482: shared Expedia rate limiter`.", ["Jira key"])
    s.fact("convention", "en", "Everything sent to partners uses the hotel's local date, never UTC dates.", ["hotel's local date"])
    s.fact("config", "en", "DK is on call for partner integrations (#cs-oncall).", ["DK"])
    s.fact("config", "en", "Raw partner request/response bodies are kept in s3://cs-partner-raw for 30 days.", ["cs-partner-raw", "30 days"])
    s.fact("config", "en", "Reservation pulls run every 5 minutes from celery beat.", ["every 5 minutes"])
    s.forbid("partner call at 11", "a4d91be", "14 passed in 3.21s", "scale 3 -> 8 (hpa)", "off to the partner call",
             "How do I run it locally")
    s.secret("Rb7%40mq-2028", "exs_9F3kQ7wL2mZx8Rt5Vb1Nc6Hd")
    return s


def o2():
    s = Session("o2_channelsync_booking_dupes", CWD, "2028-05-22T09:15:00.000Z", branch="fix/booking-reservation-upsert",
                version="2.1.333", lang="en", order=2)
    s.snapshot()
    s.user("Front desk at two Porto properties is seeing duplicate Booking.com reservations in the PMS feed. Same guest, same dates, "
           "two rows. Can you take a look at the importer?")
    s.think("Look at how imported reservations are deduplicated; check earlier notes on the pull job first.")
    search(s, "Booking.com reservation import", [
        ("544", "fact", "Reservation pulls run every 5 minutes from celery beat, one task per partner account",
         "one task per partner account")])
    s.read(CWD + "/channel_sync/reservations/importer.py",
           "def import_reservation(partner: str, raw: dict) -> None:\n"
           "    digest = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()\n"
           "    if Reservation.exists(payload_hash=digest):\n        return\n    Reservation.create(partner=partner, payload_hash=digest, **map_fields(raw))")
    s.bash("psql \"$DATABASE_URL\" -c \"select partner_reservation_id, payload_hash, last_modified from reservation "
           "where partner_reservation_id = '4412687301'\"",
           " partner_reservation_id |   payload_hash   |     last_modified\n------------------------+------------------+--------------------\n"
           " 4412687301             | 9be0c1...        | 2028-05-21 17:02:11\n 4412687301             | 51f7aa...        | 2028-05-21 17:07:40\n(2 rows)")
    s.say("The importer dedups on a SHA-256 of the whole payload. Booking.com re-sends a reservation whenever anything on it changes, and "
          "even an untouched re-send carries a fresh `last_modified`, so the hash differs and we insert a second row.\n\nOptions:\n"
          "1. Upsert keyed on (partner, partner_reservation_id), with a unique constraint\n"
          "2. Keep hashing, but strip volatile fields before hashing")
    s.user("Option 1. Stripping fields is whack-a-mole, they add a new volatile field every quarter.")
    s.say("Related: modifications can arrive out of order because several workers pull in parallel. Either (a) apply a modification "
          "only if its last_modified is newer than the stored one, dropping older ones, or (b) apply in arrival order.")
    s.user("(a), and log the dropped ones. Celery gives us no ordering across workers.")
    s.tool("Write", {"file_path": CWD + "/migrations/versions/7c2e_reservation_unique.py", "content":
                     "def upgrade():\n    op.create_unique_constraint('uq_reservation_partner_ref', 'reservation',\n"
                     "                                ['partner', 'partner_reservation_id'])\n"},
           "File created successfully at: " + CWD + "/migrations/versions/7c2e_reservation_unique.py")
    s.bash("alembic upgrade head",
           "FAILED: Multiple head revisions are present for given argument 'head'; please specify a specific target revision, "
           "'<branchname>@head' to narrow to a specific head, or 'heads' for all heads", err=True)
    s.say("Two heads: my migration and `b41f_rate_plan_currency`, which landed on main yesterday, both branch from the same parent. "
          "I'll add a merge revision.")
    s.bash("alembic merge heads -m 'merge reservation uniq + rate plan currency' && alembic upgrade head",
           "Generating migrations/versions/d09a_merge_reservation_uniq_rate_plan_currency.py ...  done\n"
           "INFO  [alembic.runtime.migration] Running upgrade 7c2e, b41f -> d09a, merge reservation uniq + rate plan currency")
    s.say("Migrated. Existing duplicates get collapsed by `scripts/dedupe_reservations.py` (keeps the newest last_modified) before the "
          "constraint is created in prod.")
    s.user("Good. Booking also pitched their reservation push notifications to me last week, should we switch?")
    s.say("Push would cut latency, but it needs them to call an endpoint of ours from their side, and their docs require a static "
          "egress IP allowlist for the callback mTLS setup. Pull keeps working as is.")
    s.user("We stay on pull. Their push needs a static egress IP allowlist and we don't have one on this cluster.")
    s.say("OK, staying on pull.")
    s.user("Oh, and scratch what I said last week about Expedia being 25 req/s. They moved us to the new contract tier, it's 15 req/s "
           "per account now. Also we swapped requests for httpx last sprint (one async client per partner), so don't add requests anywhere.",
           secs=90)
    s.edit(CWD + "/.env", "EXPEDIA_RPS=25", "EXPEDIA_RPS=15")
    s.say("EXPEDIA_RPS is 15 now. The importer already uses the shared httpx client, so nothing else to change there.")
    s.user("The queue got renamed too: ari_push is split per partner now, ari.push.expedia, ari.push.booking and ari.push.airbnb. "
           "New queues must be quorum queues, classic mirrored ones go away with RabbitMQ 4. And the limiter isn't on redis-cache any "
           "more. Actually it's redis-rl.cs.internal now, the cache instance was evicting our bucket keys under memory pressure.")
    s.edit(CWD + "/channel_sync/celery_config.py", "\"channel_sync.tasks.ari.push_ari\": {\"queue\": \"ari_push\"},",
           "\"channel_sync.tasks.ari.push_ari\": {\"queue\": route_by_partner},  # ari.push.<partner>")
    s.say("Routing now goes to ari.push.<partner>, declared with `x-queue-type: quorum`, and the limiter points at redis-rl.cs.internal.")
    s.user("One more rule while you're in the importer: never log full guest payloads, mask email and phone before anything hits the logs.")
    s.edit(CWD + "/channel_sync/reservations/importer.py", "log.info(\"imported %s\", raw)",
           "log.info(\"imported %s\", mask_pii(raw))")
    s.bash("make test", "46 passed, 1 skipped in 7.90s")
    s.say("Done, tests pass.")
    s.stop()
    s.title("Booking.com duplicate reservations")

    s.exp("root_cause", "en", "Duplicate Booking.com reservations: the importer deduplicated on a SHA-256 of the whole payload, but Booking "
          "re-sends reservations with a fresh last_modified, so the hash differs and a second row is inserted.",
          ["SHA-256", "last_modified"])
    s.decision("en", "Reservation import upserts keyed on (partner, partner_reservation_id) with a unique constraint, instead of stripping "
               "volatile fields before hashing, which is whack-a-mole (they add a new volatile field every quarter).",
               ["partner_reservation_id"], "Upsert", ["volatile fields"], ["whack-a-mole"])
    s.decision("en", "Out-of-order reservation modifications: apply only if last_modified is newer than the stored one, drop (and log) older "
               "ones, rather than applying in arrival order, because Celery gives no ordering across workers.",
               ["newer than the stored one"], "newer than the stored one", ["arrival order"], ["no ordering across workers"])
    s.exp("fix", "en", "`alembic upgrade head` failed with \"Multiple head revisions are present\" (a new migration and one merged on main "
          "branched from the same parent); fixed with `alembic merge heads` then upgrade.", ["Multiple head revisions", "alembic merge heads"])
    s.decision("en", "Booking.com reservations stay on pull instead of Booking's push notifications: push needs a static egress IP allowlist "
               "and this cluster has none.", ["Booking"], "pull", ["push notifications"], ["static egress IP"])
    s.fact("config", "en", "Expedia's rate limit is now 15 req/s per account (new contract tier).", ["15 req/s"], sup="o1_channelsync_expedia_429#e3")
    s.fact("convention", "en", "Partner HTTP calls use httpx (one async client per partner); requests was dropped, don't add it anywhere.",
           ["httpx"], sup="o1_channelsync_expedia_429#e8")
    s.fact("config", "en", "ARI push queues are split per partner: ari.push.expedia, ari.push.booking, ari.push.airbnb (was ari_push).",
           ["ari.push.expedia"], sup="o1_channelsync_expedia_429#e7")
    s.fact("convention", "en", "New RabbitMQ queues must be quorum queues; classic mirrored queues go away with RabbitMQ 4.", ["quorum"])
    s.fact("config", "en", "The rate limiter's Redis is redis-rl.cs.internal (redis-cache was evicting the bucket keys under memory pressure).",
           ["redis-rl.cs.internal"], sup="o1_channelsync_expedia_429#e4")
    s.fact("convention", "en", "Never log full guest payloads; mask email and phone before anything hits the logs.", ["mask email and phone"])
    s.ok(["scripts/dedupe_reservations.py"], "one-off cleanup of existing duplicates")
    s.forbid("4412687301", "d09a_merge_reservation_uniq_rate_plan_currency", "46 passed, 1 skipped", "should we switch?")
    return s


def o3():
    s = Session("o3_channelsync_mapping_tour", CWD, "2028-05-29T13:30:00.000Z", version="2.1.334", lang="en", order=3)
    attach(s, [("561", "decision", "1 week ago", "Booking.com reservations stay on pull, not push notifications (no static egress IP)",
                "stay on pull, not push notifications"),
               ("566", "fact", "1 week ago", "ARI push queues are ari.push.expedia / ari.push.booking / ari.push.airbnb",
                "ARI push queues are ari.push.expedia /")], event="SessionStart")
    s.snapshot()
    s.user("I'm picking up the Airbnb listing work next sprint. Can you walk me through how room types get mapped to partner products?")
    s.grep("class RoomMapping", "channel_sync/mapping/models.py:14:class RoomMapping(Base):")
    s.read(CWD + "/channel_sync/mapping/models.py",
           "class RoomMapping(Base):\n    hotel_id: Mapped[str]\n    room_type_id: Mapped[str]\n    partner: Mapped[Partner]\n"
           "    partner_room_id: Mapped[str]\n    rate_plan_ids: Mapped[list[str]] = mapped_column(ARRAY(String))\n"
           "    occupancy_override: Mapped[int | None]")
    s.say("Each `RoomMapping` row links one internal room type to one partner product for one hotel. Rate plans hang off it as a list of "
          "partner rate plan ids. When ARI changes for a room type, `ari.fanout` looks up all mappings for that room type and enqueues one "
          "push per partner. `occupancy_override` exists because some partners sell a double room as single-occupancy too.")
    s.user("And Airbnb? They don't really have room types.")
    s.read(CWD + "/channel_sync/partners/airbnb/mapper.py",
           "def to_listing(mapping: RoomMapping, ari: Ari) -> dict:\n    # Airbnb: one listing per physical unit group, no rate plans\n"
           "    return {\"listing_id\": mapping.partner_room_id, \"availability\": ari.units, \"nightly_price\": ari.bar_rate}")
    s.say("Right: for Airbnb a mapping points at a listing, rate plans are ignored and only the best available rate (`bar_rate`) is sent "
          "as the nightly price.")
    s.user("Has anyone written down the gotchas with Airbnb pricing?")
    search(s, "Airbnb pricing gotchas", [
        ("548", "experience", "Airbnb rejects nightly prices below the listing's smart-pricing minimum with a 400 and no detail",
         "below the listing's smart-pricing minimum")])
    s.say("There's one earlier note in memory about price floors on Airbnb; I haven't verified it against the code, so treat it as a lead.")
    s.user("Cool. Where are the mapping admin endpoints?")
    s.grep("@router.(get|put)\\(\"/mappings", "channel_sync/api/mappings.py:22:@router.get(\"/mappings/{hotel_id}\")\n"
           "channel_sync/api/mappings.py:41:@router.put(\"/mappings/{hotel_id}/{room_type_id}\")")
    s.say("`channel_sync/api/mappings.py`: GET lists a hotel's mappings, PUT upserts one. Both require the `mapping:write` scope for PUT.")
    s.user("Thanks! Also, anyone going to the Lisbon offsite on the 12th? I still need to book a flight.")
    s.say("Can't help with flights, I'm afraid. Good luck with the Airbnb work.")
    s.stop()
    s.title("Room-type mapping tour")
    s.forbid("Lisbon offsite on the 12th", "picking up the Airbnb listing work next sprint", "Where are the mapping admin endpoints?", "Has anyone written down the gotchas")
    return s


def o4():
    s = Session("o4_channelsync_dlq_maintenance", CWD, "2028-06-05T07:55:00.000Z", branch="fix/retry-budget",
                version="2.1.336", lang="en", order=4)
    s.snapshot()
    r = remind(s, [("588", "decision", "3 weeks ago", "ARI push retries: exponential backoff with jitter, cap 5 min, DLQ after 6 attempts",
                    "cap 5 min, DLQ after 6 attempts"),
                   ("590", "fact", "3 weeks ago", "DK is on call for partner integrations", "DK is on call for partner integrations")])
    s.user(r + "\nExpedia had a maintenance window last night, 01:00 to 02:10 UTC, and we dead-lettered a pile of ARI messages. "
           "Hotels are showing stale availability on Expedia this morning.")
    s.bash("rabbitmqadmin list queues name messages | grep dlq",
           "| ari.push.expedia.dlq | 18342 |\n| ari.push.booking.dlq | 3     |\n| ari.push.airbnb.dlq  | 0     |")
    s.say("18k messages in the Expedia DLQ. The retry budget is shorter than their window: with backoff capped at 5 minutes, 6 attempts add "
          "up to about 17 minutes (30s, 1m, 2m, 4m, 5m, 5m), so anything that failed in the first ~53 minutes of a 70-minute outage went "
          "straight to the DLQ.\n\nOptions:\n1. Raise to 10 attempts with a 15-minute cap (about 1.5 hours of budget)\n"
          "2. Pause the Expedia queue automatically when their status API reports maintenance\n3. Go back to infinite retries")
    s.user("Go with the first. The status API is unreliable, it said 'operational' the whole time last night. And no, not infinite. "
           "Lesson for me: size retry budgets against the partner's longest maintenance window, not against typical blips.")
    s.edit(CWD + "/channel_sync/tasks/ari.py", "max_retries=6, retry_backoff=True, retry_backoff_max=300, retry_jitter=True)",
           "max_retries=10, retry_backoff=True, retry_backoff_max=900, retry_jitter=True)")
    s.say("Updated. For the 18k in the DLQ: (a) republish them as-is, or (b) don't replay the messages; rebuild the current ARI state from "
          "the DB for the affected hotels and push that.")
    s.user("(b). Replaying as-is would push stale rates over newer ones.")
    s.bash("make replay-dlq PARTNER=expedia MODE=rebuild ENV=staging",
           "Traceback (most recent call last):\n  ...\nssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify "
           "failed: self-signed certificate in certificate chain (_ssl.c:1000)\nmake: *** [replay-dlq] Error 1", err=True)
    s.say("Staging's RabbitMQ management API uses the internal CA, which isn't in the tools image, so the replay can't even list the DLQ there.")
    s.user("That's infra's cert, I'll raise it with them. Run it against prod directly, it worked there last month.")
    s.bash("make replay-dlq PARTNER=expedia MODE=rebuild ENV=prod",
           "collected 18342 dead-lettered messages for 212 hotels\nrebuilt ARI for 212 hotels, pushed 1964 requests\npurged ari.push.expedia.dlq")
    s.say("Done: ARI rebuilt and pushed for 212 hotels, DLQ purged. `make replay-dlq PARTNER=<partner> MODE=rebuild` is the command for next time.")
    s.user("Should we alert on the DLQ? Nobody noticed until the front desks called.")
    s.say("Two ways: alert on any message landing in a DLQ, or alert when a DLQ holds more than 100 messages for 5 minutes.")
    s.user("The threshold one. Single DLQ messages happen daily from bad mappings and people would mute the channel. "
           "Post to this webhook: https://hooks.slack.com/services/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")
    s.edit(CWD + "/deploy/alerts/rabbitmq.yaml", "rules: []",
           "rules:\n  - alert: DLQBacklog\n    expr: rabbitmq_queue_messages{queue=~\".*\\\\.dlq\"} > 100\n    for: 5m")
    s.say("Alert rule added: DLQBacklog fires above 100 messages for 5 minutes; the webhook goes in the alertmanager secret, not the repo.")
    s.user("Few more updates while we're here. Daniel Kowalski rotated off partner on-call this week, it's Marco Rossi now, same "
           "#cs-oncall channel. Reservation pulls run every 2 minutes now, not 5, revenue wanted faster PMS visibility. "
           "And legal came back on cs-partner-raw: those payloads contain guest PII, so retention drops from 30 to 14 days.")
    s.edit(CWD + "/channel_sync/celery_config.py", "\"schedule\": crontab(minute=\"*/5\"),", "\"schedule\": crontab(minute=\"*/2\"),")
    s.say("Beat schedule is */2 now. I'll leave the S3 lifecycle change to you since it's in the infra repo.")
    s.user("Yes. Also, with pulls every 2 minutes: reservation pulls get their own bucket, separate from ARI pushes, so a push storm can't "
           "starve pulls.")
    s.edit(CWD + "/channel_sync/partners/ratelimit.py", "key=\"rl:expedia:{account}\"", "key=\"rl:expedia:{account}:{kind}\"")
    s.say("Split: `rl:expedia:{account}:push` and `rl:expedia:{account}:pull`.")
    s.stop(ms=211000)
    s.title("Expedia maintenance dead-lettered ARI")

    s.exp("root_cause", "en", "Expedia's 70-minute maintenance dead-lettered ~18k ARI messages: with backoff capped at 5 minutes, 6 attempts only "
          "cover about 17 minutes, shorter than the partner's maintenance window.", ["17 minutes", "maintenance window"])
    s.decision("en", "ARI push retries raised to 10 attempts with a 15-minute cap (about 1.5 hours of budget) instead of pausing the queue "
               "via Expedia's status API (unreliable, said 'operational' during the outage) or going back to infinite retries.",
               ["15-minute cap"], "10 attempts", ["status API"], ["unreliable"], sup="o1_channelsync_expedia_429#e6")
    s.exp("lesson", "en", "Size retry budgets against the partner's longest maintenance window, not against typical blips.",
          ["longest maintenance window"])
    s.decision("en", "Recover dead-lettered ARI to rebuild the current ARI state from the DB for affected hotels and pushing that, "
               "not by the option to republish them as-is, which would push stale rates over newer ones.",
               ["rebuild"], "rebuild the current ARI state", ["republish them as-is"], ["stale rates"])
    s.fact("command", "en", "Replay a partner's DLQ by rebuilding ARI: `make replay-dlq PARTNER=<partner> MODE=rebuild`.", ["make replay-dlq"])
    s.decision("en", "DLQ alert (DLQBacklog) fires when a DLQ holds more than 100 messages for 5 minutes, not on any message landing in a DLQ: single DLQ messages "
               "happen daily from bad mappings and people would mute the channel.", ["DLQBacklog"], "more than 100 messages",
               ["any message"], ["mute the channel"])
    s.fact("config", "en", "Partner-integration on-call is now Marco Rossi (#cs-oncall); Daniel Kowalski rotated off.", ["Marco Rossi"],
           sup="o1_channelsync_expedia_429#e12")
    s.fact("config", "en", "Reservation pulls run every 2 minutes (was 5) so the PMS sees bookings faster.", ["every 2 minutes"],
           sup="o1_channelsync_expedia_429#e14")
    s.fact("config", "en", "Raw partner payloads in cs-partner-raw are kept 14 days (was 30) because they contain guest PII.",
           ["14 days"], sup="o1_channelsync_expedia_429#e13")
    s.fact("convention", "en", "Reservation pulls get their own bucket for rate limiting, separate from ARI pushes, so a push storm can't starve pulls.",
           ["own bucket"])
    s.ok(["CERTIFICATE_VERIFY_FAILED"], "staging replay blocked by the internal CA; left to infra (unfixed)")
    s.forbid("18342", "212 hotels", "pushed 1964 requests", "Should we alert on the DLQ?")
    s.secret("https://hooks.slack.com/services/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", "q8ZrX2vLw5PkT9sYh3JmC6dF")
    return s


SESSIONS = [o1, o2, o3, o4]
