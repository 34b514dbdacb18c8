"""Project A: curbwise (municipal waste collection; Rust workspace)."""

from lib import Session, maple_block

P = "curbwise"
ROOT = "/home/dev/work/curbwise"

# ---------------------------------------------------------------------------------------------- a1
A1 = "a1_curbwise_lift_dedupe"

CONSUMER_RS = """use crate::config::LIFTS_TOPIC;
use crate::model::LiftEvent;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rumqttc::Publish;
use sqlx::PgPool;

pub async fn handle_message(pool: &PgPool, producer: &FutureProducer, msg: &Publish) -> anyhow::Result<()> {
    let ev: LiftEvent = serde_json::from_slice(&msg.payload)?;
    log::debug!("lift payload: {:?}", ev);

    sqlx::query!(
        "INSERT INTO lifts (reader_id, truck_id, tag_id, lift_seq, lifted_at, lat, lon)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        ev.reader_id, ev.truck_id, ev.tag_id, ev.lift_seq, ev.lifted_at, ev.lat, ev.lon
    )
    .execute(pool)
    .await?;

    let body = serde_json::to_vec(&ev)?;
    producer
        .send(FutureRecord::to(LIFTS_TOPIC).key(&ev.truck_id).payload(&body), std::time::Duration::from_secs(5))
        .await
        .map_err(|(e, _)| e)?;
    // ack happens in main loop after this returns Ok
    Ok(())
}"""

ENV_PASTE = """DATABASE_URL=postgres://lift_rw:Gr4vel-Truck77@pg-staging.curbwise.internal:5432/curbwise
MQTT_HOST=mqtt.curbwise.internal
MQTT_PORT=8883
MQTT_USERNAME=lift-ingest
MQTT_PASSWORD=emqx-Rd7#qL9w
MQTT_CLIENT_ID=lift-ingest-dev-ines
REDPANDA_BROKERS=rp-0.curbwise.internal:9092,rp-1.curbwise.internal:9092
REDPANDA_SASL_USER=lift-ingest
REDPANDA_SASL_PASSWORD=rpSASL-4kT9vWq2Lm
RUST_LOG=lift_ingest=debug"""

CITY_EXPORT_RS = """    let day = args.date.unwrap_or_else(|| (chrono::Local::now() - chrono::Duration::days(1)).date_naive());
    for district in districts(&pool).await? {
        let rows = sqlx::query_as!(ExportRow,
            "SELECT l.tag_id, l.truck_id, l.lifted_at, b.address
               FROM lifts l JOIN bins b ON b.tag_id = l.tag_id
              WHERE b.district_code = $1 AND l.lifted_at::date = $2
              ORDER BY l.lifted_at",
            district.code, day)
            .fetch_all(&pool).await?;
        let file = format!("{}_{}.csv", district.code, day.format("%Y%m%d"));
        sftp.upload(&file, to_csv(&rows)?).await?;
    }"""


def build_a1():
    s = Session(A1, P, "2026-04-14T08:41:10Z", "fix/lift-dupes", "2.1.322")
    s.user(
        "route completion on the ops board shows >100% for a bunch of routes since monday, R-0417 is at 118.3. "
        "pretty sure lift-ingest is double counting lifts. it subscribes to `trucks/+/lifts` on emqx "
        "(mqtt.curbwise.internal:8883, QoS 1) and pushes onto redpanda. can you dig? code's in lift-ingest/"
    )
    s.think(
        "Completion >100% means more lift rows than scheduled bins. With MQTT QoS 1 the broker delivers at least "
        "once, so redelivery after a reconnect is the first suspect. Look at the consumer insert path."
    )
    s.read(f"{ROOT}/lift-ingest/src/consumer.rs", CONSUMER_RS)
    s.grep(
        "LIFTS_TOPIC|bin\\.lifts",
        ROOT,
        'lift-ingest/src/config.rs:4:pub const LIFTS_TOPIC: &str = "bin.lifts.v1";\n'
        "deploy/redpanda/topics.yaml:3:- name: bin.lifts.v1\n"
        "deploy/redpanda/topics.yaml:4:  partitions: 12\n"
        'missed-pickup-service/src/reconcile.rs:11:const TOPIC: &str = "bin.lifts.v1";',
    )
    s.say(
        "The consumer inserts every MQTT message unconditionally and then produces it to `bin.lifts.v1` "
        "(12 partitions, keyed by truck_id). Nothing dedupes. I'd like to confirm against the DB — is there a "
        "staging DATABASE_URL I can use? `psql` has nothing configured here."
    )
    s.user(
        "here's my lift-ingest/.env, it points at staging which has the same dupes as prod:\n```\n"
        + ENV_PASTE
        + "\n```\nlogging is env_logger btw, RUST_LOG=lift_ingest=debug dumps the raw payloads if you need them",
        adv=95,
    )
    s.bash(
        'set -a; source lift-ingest/.env; set +a; psql "$DATABASE_URL" -c "select reader_id, lift_seq, '
        "count(*), min(lifted_at), max(created_at) - min(created_at) as spread from lifts where lifted_at > now() "
        "- interval '3 days' group by 1,2 having count(*) > 1 order by 3 desc limit 5\"",
        "Find duplicate lifts in staging",
        " reader_id | lift_seq | count |          min           |     spread\n"
        "-----------+----------+-------+------------------------+-----------------\n"
        " RDR-1142  |    88213 |     3 | 2026-04-13 07:12:44+00 | 00:04:51.20\n"
        " RDR-1142  |    88214 |     3 | 2026-04-13 07:12:58+00 | 00:04:37.91\n"
        " RDR-0977  |   310455 |     2 | 2026-04-13 09:40:03+00 | 00:01:12.08\n"
        " RDR-2210  |    14020 |     2 | 2026-04-13 06:55:31+00 | 00:00:48.77\n"
        " RDR-0365  |          |     2 | 2026-04-12 10:02:17+00 | 00:02:03.44\n"
        "(5 rows)",
        adv=4,
        radv=3,
    )
    s.say(
        "Root cause: EMQX delivers with QoS 1 (at least once). When a truck's LTE modem drops, the session is "
        "persistent, so on reconnect EMQX redelivers every message that wasn't PUBACKed yet. Our consumer acks "
        "only after the insert + produce, and the insert has no uniqueness, so each redelivery becomes another "
        "row with the same `lift_seq` (see the minutes-long `spread` on RDR-1142, which matches a reconnect).\n\n"
        "Options:\n"
        "1. unique index on `(reader_id, lift_seq)` and `INSERT ... ON CONFLICT DO NOTHING`; only produce to "
        "Redpanda when a row was actually inserted\n"
        "2. Redis SETNX on `lift:{reader_id}:{lift_seq}` with a 24h TTL before inserting\n"
        "3. leave ingest alone and dedupe in route-service when computing completion\n\n"
        "I'd go with 1. Note the last row: RDR-0365 has no lift_seq at all."
    )
    s.user(
        "1. redis gets flushed on the sentinel failover every few weeks, I don't want dedupe depending on it, and "
        "lift_seq survives reconnects (it's a counter in the reader's flash). the empty ones are the ~40 readers on "
        "the 1xx trucks that are still on fw 1.8, they don't send lift_seq at all",
        adv=70,
    )
    s.say(
        "For the fw 1.8 readers, two ways:\n"
        "a) fall back to a key on `(reader_id, tag_id, lifted_at truncated to the second)` when lift_seq is null\n"
        "b) drop lifts without lift_seq and log them\n\n"
        "b) would lose real pickups for ~40 trucks, so a) seems safer until they're upgraded."
    )
    s.user(
        "a. Dima says the 1xx trucks get fw 2.x by june anyway. Dmitri Volkov owns lift-ingest and the reader "
        "firmware contract btw, ping him before you touch the MQTT payload format",
        adv=55,
    )
    s.edit(
        f"{ROOT}/lift-ingest/src/consumer.rs",
        '    sqlx::query!(\n        "INSERT INTO lifts (reader_id, truck_id, tag_id, lift_seq, lifted_at, lat, lon)\n'
        '         VALUES ($1, $2, $3, $4, $5, $6, $7)",\n        ev.reader_id, ev.truck_id, ev.tag_id, ev.lift_seq, '
        "ev.lifted_at, ev.lat, ev.lon\n    )\n    .execute(pool)\n    .await?;",
        '    let dedupe_key = match ev.lift_seq {\n        Some(seq) => format!("{}:{}", ev.reader_id, seq),\n'
        '        // fw 1.8 readers: no lift_seq\n        None => format!("{}:{}:{}", ev.reader_id, ev.tag_id, '
        "ev.lifted_at.timestamp()),\n    };\n    let inserted = sqlx::query!(\n"
        '        "INSERT INTO lifts (reader_id, truck_id, tag_id, lift_seq, lifted_at, lat, lon, dedupe_key)\n'
        '         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)\n         ON CONFLICT (dedupe_key) DO NOTHING",\n'
        "        ev.reader_id, ev.truck_id, ev.tag_id, ev.lift_seq, ev.lifted_at, ev.lat, ev.lon, dedupe_key\n"
        "    )\n    .execute(pool)\n    .await?\n    .rows_affected();\n    if inserted == 0 {\n"
        "        return Ok(()); // redelivery, already stored and produced\n    }",
    )
    s.say(
        "The unique index can't be built while the existing duplicates are in the table. How do you want those "
        "cleaned up — a one-off `DELETE` via psql on each env, or as migrations (0031 deletes dupes keeping the "
        "lowest id, 0032 builds the index)?"
    )
    s.user(
        "migrations. staging has the same dupes and I want both envs to get the identical cleanup, no hand-run sql "
        "on prod. not manual psql",
        adv=48,
    )
    s.write(
        f"{ROOT}/lift-ingest/migrations/0031_dedupe_lifts.sql",
        "ALTER TABLE lifts ADD COLUMN IF NOT EXISTS dedupe_key text;\n"
        "UPDATE lifts SET dedupe_key = CASE WHEN lift_seq IS NOT NULL THEN reader_id || ':' || lift_seq\n"
        "  ELSE reader_id || ':' || tag_id || ':' || extract(epoch from date_trunc('second', lifted_at))::bigint END;\n"
        "DELETE FROM lifts a USING lifts b WHERE a.dedupe_key = b.dedupe_key AND a.id > b.id;\n",
    )
    s.write(
        f"{ROOT}/lift-ingest/migrations/0032_lifts_dedupe_idx.sql",
        "CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS lifts_dedupe_key_uq ON lifts (dedupe_key);\n",
    )
    s.bash(
        "cd lift-ingest && sqlx migrate run",
        "Apply migrations to staging",
        "Applied 31/migrate dedupe lifts (8.412s)\nerror: while executing migration 32: error returned from "
        "database: CREATE INDEX CONCURRENTLY cannot run inside a transaction block",
        is_error=True,
        radv=14,
    )
    s.think(
        "sqlx wraps every migration in a transaction unless the file starts with the `-- no-transaction` "
        "directive. Add it to 0032 only."
    )
    s.edit(
        f"{ROOT}/lift-ingest/migrations/0032_lifts_dedupe_idx.sql",
        "CREATE UNIQUE INDEX CONCURRENTLY",
        "-- no-transaction\nCREATE UNIQUE INDEX CONCURRENTLY",
    )
    s.bash(
        "cd lift-ingest && sqlx migrate run && cargo build -p lift-ingest",
        "Re-run migration and build",
        "Applied 32/migrate lifts dedupe idx (41.930s)\n   Compiling lift-ingest v0.9.3 (/home/dev/work/curbwise/"
        "lift-ingest)\nerror: `SQLX_OFFLINE=true` but there is no cached data for this query, run `cargo sqlx "
        "prepare` to update the query cache or unset `SQLX_OFFLINE`\n  --> lift-ingest/src/consumer.rs:17:20\n"
        "error: could not compile `lift-ingest` (lib) due to 1 previous error",
        is_error=True,
        radv=58,
    )
    s.bash(
        "cargo sqlx prepare --workspace && cargo build -p lift-ingest && cargo test -p lift-ingest",
        "Refresh sqlx offline cache, build and test",
        "query data written to .sqlx in the workspace root; please check this into version control\n"
        "   Compiling lift-ingest v0.9.3 (/home/dev/work/curbwise/lift-ingest)\n    Finished `dev` profile "
        "[unoptimized + debuginfo] target(s) in 38.17s\nrunning 23 tests\n.......................\n"
        "test result: ok. 23 passed; 0 failed; 0 ignored",
        radv=71,
    )
    s.say(
        "Migrations 0031/0032 are applied on staging and lift-ingest builds and passes tests.\n\n"
        "Two things to know:\n"
        "- sqlx runs each migration in a transaction, so anything with `CREATE INDEX CONCURRENTLY` needs "
        "`-- no-transaction` as the first line of the file.\n"
        "- `.cargo/config.toml` sets `SQLX_OFFLINE=true` (same as CI), so after changing any `query!` you have to "
        "run `cargo sqlx prepare --workspace` and commit the `.sqlx/` directory, otherwise the build fails."
    )
    s.user(
        "nice. route-service is on 8085 locally (`cargo run -p route-service`) and it recomputes completion from "
        "the lifts table. can you trigger a recompute for yesterday on staging? "
        "`curl -X POST localhost:8085/admin/recompute?date=2026-04-13`, I have it port-forwarded",
        adv=120,
    )
    s.bash(
        "curl -s -X POST 'localhost:8085/admin/recompute?date=2026-04-13'",
        "Recompute completion for 2026-04-13",
        '{"routes_recomputed":214,"max_completion_pct":100.0,"took_ms":5821}',
        radv=7,
    )
    s.say("Recomputed 214 routes for 2026-04-13; max completion is back to 100.0%.")
    s.user(
        "one more worry. city-export runs from cron `30 2 * * *` and uploads yesterday's lifts to the council SFTP "
        "as CSV, one file per district. does it read lifts directly? if so the dupes went to the council too 😬",
        adv=64,
    )
    s.read(f"{ROOT}/city-export/src/main.rs", CITY_EXPORT_RS, start=41)
    s.say(
        "Yes — it selects straight from `lifts`, so every CSV since the duplicates started contains them. It has a "
        '`--date` flag, so re-sending is one run per day once you\'re ready.\n\nSeparately: it picks "yesterday" '
        "with `chrono::Local::now()`, which depends on the pod's TZ. Is that intended?"
    )
    s.user(
        "no. convention is everything in the db is timestamptz in UTC, local time only ever in the driver-gateway "
        "UI. fix that. the resend can wait until Mags talks to the council on thursday",
        adv=50,
    )
    s.edit(
        f"{ROOT}/city-export/src/main.rs",
        "(chrono::Local::now() - chrono::Duration::days(1)).date_naive()",
        "(chrono::Utc::now() - chrono::Duration::days(1)).date_naive()",
    )
    s.say("Switched city-export to `chrono::Utc`. Nothing re-sent to the council yet.")
    s.user("cool thx, going to grab lunch", adv=30)
    s.say("Enjoy.", adv=2)
    s.stop_hook()
    s.title("Dedupe redelivered bin lifts in lift-ingest")
    return s


GOLD_A1 = {
    "session": A1,
    "project": ROOT,
    "order": 1,
    "language": "en",
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "lift-ingest subscribes to MQTT topic `trucks/+/lifts` on EMQX at mqtt.curbwise.internal:8883 with QoS 1.",
            "must": ["trucks/+/lifts"],
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "lift-ingest produces every stored lift to the Redpanda topic `bin.lifts.v1` (12 partitions, keyed by truck_id); missed-pickup-service reads it too.",
            "must": ["bin.lifts.v1", "12 partitions"],
        },
        {
            "id": "e3",
            "layer": "experience",
            "kind": "root_cause",
            "lang": "en",
            "text": "Route completion >100% came from duplicate lift rows: EMQX QoS 1 redelivers un-PUBACKed messages after a truck's LTE reconnect, and lift-ingest inserted every message with no uniqueness.",
            "must": ["QoS 1", "reconnect"],
        },
        {
            "id": "e4",
            "layer": "decision",
            "kind": "decision",
            "lang": "en",
            "text": "Lift dedupe uses a Postgres unique key on (reader_id, lift_seq) with INSERT ... ON CONFLICT DO NOTHING (produce only when a row was inserted), over a Redis SETNX key, because Redis is flushed on sentinel failover and lift_seq survives reconnects (counter in the reader's flash).",
            "must": ["ON CONFLICT DO NOTHING"],
            "chosen": "ON CONFLICT DO NOTHING",
            "over": ["Redis SETNX"],
            "why": ["survives reconnects"],
        },
        {
            "id": "e5",
            "layer": "decision",
            "kind": "decision",
            "lang": "en",
            "text": "For old fw 1.8 readers that send no lift_seq, dedupe falls back to (reader_id, tag_id, lifted_at truncated to the second) rather than the option to drop lifts without lift_seq, since that would lose real pickups for ~40 trucks until they get fw 2.x.",
            "must": ["fw 1.8", "truncated to the second"],
            "chosen": "truncated to the second",
            "over": ["drop lifts without lift_seq"],
            "why": ["lose real pickups"],
        },
        {
            "id": "e6",
            "layer": "decision",
            "kind": "decision",
            "lang": "en",
            "text": "Existing duplicate lifts are cleaned up by migrations (0031 deletes dupes keeping the lowest id, 0032 builds the unique index), not manual psql, so staging and prod get the identical cleanup.",
            "must": ["0031"],
            "chosen": "migrations",
            "over": ["manual psql"],
            "why": ["identical cleanup"],
        },
        {
            "id": "e7",
            "layer": "experience",
            "kind": "fix",
            "lang": "en",
            "text": "`sqlx migrate run` failed with 'CREATE INDEX CONCURRENTLY cannot run inside a transaction block' because sqlx wraps each migration in a transaction; put `-- no-transaction` as the first line of that migration file.",
            "must": ["-- no-transaction"],
        },
        {
            "id": "e8",
            "layer": "experience",
            "kind": "fix",
            "lang": "en",
            "text": "Build fails with 'SQLX_OFFLINE=true but there is no cached data for this query' after changing a query!: run `cargo sqlx prepare --workspace` and commit the .sqlx/ directory.",
            "must": ["cargo sqlx prepare"],
        },
        {
            "id": "e9",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "route-service runs locally on port 8085 via `cargo run -p route-service` and recomputes route completion from the lifts table.",
            "must": ["8085", "cargo run -p route-service"],
        },
        {
            "id": "e10",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "city-export runs from cron `30 2 * * *` and uploads the previous day's lifts to the council SFTP as CSV, one file per district.",
            "must": ["30 2 * * *", "one file per district"],
        },
        {
            "id": "e11",
            "layer": "fact",
            "kind": "preference",
            "lang": "en",
            "text": "Dmitri Volkov (Dima) owns lift-ingest and the reader firmware contract; ping him before changing the MQTT payload format.",
            "must": ["Dmitri Volkov", "MQTT payload"],
        },
        {
            "id": "e12",
            "layer": "fact",
            "kind": "convention",
            "lang": "en",
            "text": "Everything in the DB is timestamptz in UTC; local time only in the driver-gateway UI (no chrono::Local in services).",
            "must": ["timestamptz"],
        },
        {
            "id": "e13",
            "layer": "fact",
            "kind": "convention",
            "lang": "en",
            "text": "lift-ingest logs through env_logger; RUST_LOG=lift_ingest=debug dumps the raw lift payloads.",
            "must": ["env_logger", "RUST_LOG=lift_ingest=debug"],
        },
    ],
    "acceptable": [
        {"must": ["/admin/recompute"], "note": "route-service recompute endpoint (POST /admin/recompute?date=)"},
        {
            "must": ["--date"],
            "note": "city-export can re-send a day with --date; council CSVs since the dupes started contain duplicates",
        },
        {"must": ["SQLX_OFFLINE"], "note": "CI builds with SQLX_OFFLINE=true"},
    ],
    "forbidden": [
        "R-0417 is at 118.3",
        "going to grab lunch",
        "routes_recomputed",
        "23 passed",
        "RDR-1142",
        "Mags talks to the council on thursday",
    ],
    "secrets": [
        "Gr4vel-Truck77",
        "postgres://lift_rw:Gr4vel-Truck77@pg-staging.curbwise.internal:5432/curbwise",
        "emqx-Rd7#qL9w",
        "rpSASL-4kT9vWq2Lm",
    ],
}

# ---------------------------------------------------------------------------------------------- a2
A2 = "a2_curbwise_onboarding_questions"

A2_RECALL = maple_block(
    [
        (3, "fact", "config", "route-service listens on port 8085 locally; start it with cargo run -p route-service"),
        (
            6,
            "fact",
            "preference",
            "Dmitri Volkov owns lift-ingest and the reader firmware contract; ping him before changing the MQTT payload",
        ),
        (
            8,
            "experience",
            "fix",
            "After changing any sqlx query run cargo sqlx prepare --workspace and commit .sqlx; CI builds with SQLX_OFFLINE=true",
        ),
        (
            11,
            "fact",
            "convention",
            "All DB timestamps are timestamptz in UTC; local time only in the driver-gateway UI",
        ),
    ]
)

JUSTFILE = """set dotenv-load

dev-up:
    docker compose -f deploy/dev/compose.yaml up -d postgis redpanda emqx osrm

dev-down:
    docker compose -f deploy/dev/compose.yaml down

# graph files for the local OSRM container (~20 min, needs ~6 GB RAM)
osrm-data:
    ./scripts/osrm-prepare.sh ireland-latest

test-db:
    ./scripts/create-test-db.sh curbwise_test

lint:
    cargo clippy --workspace --all-targets -- -D warnings
    cargo deny check"""

ROUTE_TOML = """[http]
host = "0.0.0.0"
port = 8090

[osrm]
url = "http://localhost:5000"
profile = "truck"

[planner]
max_stops_per_route = 900
depot = "DEPOT-NORTH\""""


def build_a2():
    s = Session(A2, P, "2026-05-06T13:02:00Z", "main", "2.1.326")
    s.hook_context("SessionStart", A2_RECALL)
    s.user(
        "hi! I'm Callum, started monday on the routing side. Ines said to use you to get oriented. what are all "
        "the services in this repo?",
        adv=20,
    )
    s.bash(
        "ls && sed -n '/members/,/]/p' Cargo.toml",
        "List repo and workspace members",
        "Cargo.toml\nCargo.lock\ncity-export\ndeploy\ndocs\ndriver-gateway\njustfile\nlift-ingest\n"
        "missed-pickup-service\nroute-service\nscripts\n"
        'members = [\n    "lift-ingest",\n    "route-service",\n    "missed-pickup-service",\n'
        '    "city-export",\n    "shared/cw-model",\n]',
    )
    s.say(
        "It's a Rust workspace plus one TypeScript app:\n\n"
        "- **lift-ingest** — reads bin-lift events from the trucks' RFID readers over MQTT and stores them\n"
        "- **route-service** — plans daily routes (uses OSRM) and computes route completion\n"
        "- **missed-pickup-service** — handles resident complaints coming from the council's 311 system\n"
        "- **city-export** — nightly CSV export to the council\n"
        "- **shared/cw-model** — shared types\n"
        "- **driver-gateway** — the Node/TypeScript backend for the driver tablets (not in the Cargo workspace)"
    )
    s.user("whats the difference between a route and a district? the ops board uses both", adv=75)
    s.grep(
        "pub struct (District|Route)\\b",
        f"{ROOT}/shared/cw-model/src",
        "shared/cw-model/src/lib.rs:18:pub struct District {\nshared/cw-model/src/lib.rs:19:    pub code: String, "
        '// e.g. "NE-04"\nshared/cw-model/src/lib.rs:20:    pub collection_weekday: Weekday,\n'
        "shared/cw-model/src/lib.rs:31:pub struct Route {\nshared/cw-model/src/lib.rs:32:    pub id: String, "
        '// e.g. "R-0417"\nshared/cw-model/src/lib.rs:33:    pub district_code: String,\n'
        "shared/cw-model/src/lib.rs:34:    pub truck_id: String,",
    )
    s.say(
        "A **district** is a council area with a fixed collection weekday (code like `NE-04`). A **route** is one "
        "truck's plan for one day inside a district (`R-0417`), so a district has several routes on its collection "
        "day. Completion on the ops board is per route."
    )
    s.user("ok makes sense. how do i run everything locally", adv=60)
    s.read(f"{ROOT}/justfile", JUSTFILE)
    s.read(f"{ROOT}/route-service/config/default.toml", ROUTE_TOML)
    s.say(
        "`just dev-up` starts PostGIS, Redpanda, EMQX and OSRM from `deploy/dev/compose.yaml`; then run a service "
        "with `cargo run -p <name>`.\n\nOne mismatch: my notes say route-service listens on 8085, but "
        "`route-service/config/default.toml` has `port = 8090`. Do you know whether it moved?"
    )
    s.user("no idea lol, let me ask", adv=25)
    s.say("Sure, no rush.", adv=2)
    s.user(
        "Ines says yeah it moved to 8090 a couple weeks ago, the driver-gateway metrics sidecar grabbed 8085", adv=180
    )
    s.say("Thanks — route-service is on 8090 then.", adv=3)
    s.user(
        "just dev-up fails for me:\n```\n[+] Running 4/4\n ✔ Container dev-postgis-1   Started\n ✔ Container "
        "dev-redpanda-1  Started\n ✔ Container dev-emqx-1      Started\n ✔ Container dev-osrm-1      Started\n"
        'osrm-1  | [info] starting up engines, v5.27.1\nosrm-1  | [error] Input file "/data/ireland-latest.osrm.'
        'hsgr" not found!\nosrm-1 exited with code 1\n```',
        adv=140,
    )
    s.think(
        "The OSRM container mounts preprocessed graph files; the justfile has an osrm-data recipe for exactly "
        "this. Check the compose volume to be sure."
    )
    s.grep(
        "osrm",
        f"{ROOT}/deploy/dev/compose.yaml",
        "deploy/dev/compose.yaml:41:  osrm:\ndeploy/dev/compose.yaml:42:    image: ghcr.io/project-osrm/osrm-"
        "backend:v5.27.1\ndeploy/dev/compose.yaml:43:    platform: linux/amd64\ndeploy/dev/compose.yaml:44:    "
        "command: osrm-routed --algorithm mld /data/ireland-latest.osrm\ndeploy/dev/compose.yaml:46:      - "
        "../../osrm-data:/data   # run `just osrm-data` first",
    )
    s.say(
        "The OSRM container needs preprocessed graph files in `osrm-data/`, which aren't in git. Run `just "
        "osrm-data` once (downloads the extract and runs extract/partition/customize, about 20 minutes), then "
        "`just dev-up` again."
    )
    s.user(
        "running it now. also where are the dashboards? Ines gave me the shared grafana login, ops / "
        "Bl4ckbin-Sunday, should i put that in my .env or somewhere?",
        adv=90,
    )
    s.grep(
        "grafana",
        f"{ROOT}/docs",
        "docs/oncall.md:12:Dashboards: https://grafana.curbwise.internal/d/lift-lag (Lift ingest lag), "
        "https://grafana.curbwise.internal/d/route-completion\ndocs/oncall.md:14:Use your own account via Google "
        "SSO. The shared `ops` login is break-glass only; never store it in a repo or .env.",
    )
    s.say(
        "Please don't put it in `.env` or anywhere in the repo — `docs/oncall.md` says the shared `ops` login is "
        "break-glass only; use your own account via Google SSO. Dashboards:\n- Lift ingest lag: "
        "https://grafana.curbwise.internal/d/lift-lag\n- Route completion: "
        "https://grafana.curbwise.internal/d/route-completion"
    )
    s.user("osrm-data done, dev-up works now 🎉 one more dumb q, what does lift_seq mean", adv=200)
    s.say(
        "It's a per-reader counter the RFID reader firmware increments on every lift and keeps in flash, so the "
        "same lift resent after a reconnect carries the same number — lift-ingest uses it to ignore redeliveries.",
        adv=5,
    )
    s.user("got it. thanks, that's enough for today", adv=40)
    s.say("Welcome aboard, Callum.", adv=2)
    s.stop_hook()
    s.title("Onboarding: curbwise services and local setup")
    return s


GOLD_A2 = {
    "session": A2,
    "project": ROOT,
    "order": 2,
    "language": "en",
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "route-service now listens on port 8090 (route-service/config/default.toml); it moved because the driver-gateway metrics sidecar took its old port.",
            "must": ["8090"],
            "supersedes": f"{A1}#e9",
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "command",
            "lang": "en",
            "text": "`just dev-up` starts the local PostGIS, Redpanda, EMQX and OSRM containers (deploy/dev/compose.yaml).",
            "must": ["just dev-up"],
        },
        {
            "id": "e3",
            "layer": "experience",
            "kind": "gotcha",
            "lang": "en",
            "text": "Local OSRM exits with 'Input file ... ireland-latest.osrm.hsgr not found' until the graph files are built once with `just osrm-data` (~20 min).",
            "must": ["just osrm-data"],
        },
    ],
    "acceptable": [
        {"must": ["grafana.curbwise.internal/d/lift-lag"], "note": "dashboards"},
        {
            "must": ["break-glass"],
            "note": "shared Grafana ops login is break-glass only; personal accounts via Google SSO",
        },
        {"must": ["collection weekday"], "note": "district vs route explanation"},
        {"must": ["per-reader counter"], "note": "what lift_seq is (already implied by a1)"},
    ],
    "forbidden": [
        "started monday on the routing side",
        "whats the difference between a route and a district",
        "that's enough for today",
        "let me ask",
        "route-service listens on port 8085 locally",
        "ping him before changing the MQTT payload",
        "CI builds with SQLX_OFFLINE=true",
        "local time only in the driver-gateway UI",
    ],
    "secrets": ["Bl4ckbin-Sunday"],
}

# ---------------------------------------------------------------------------------------------- a3
A3 = "a3_curbwise_missed_pickup_runbook"

RUNBOOK = """# Runbook: Missed-pickup reconciliation & council escalation (missed-pickup-service)

Owners: Ines Okafor (eng), Marguerite "Mags" Lindqvist (ops / council liaison). Last reviewed 2026-05-28.

## 1. What this covers

Residents report missed bins through the council's 311 portal. The council forwards every report to us and
expects an answer per report within **48 hours** (contract schedule C, clause 7). missed-pickup-service
matches each report against our lift data and either confirms we collected the bin, or books a return visit.
This runbook is what the ops desk follows every morning and what on-call follows when the pipeline stalls.

## 2. Moving parts

| piece | where | notes |
|---|---|---|
| missed-pickup-service | k8s ns `cw-prod`, port 8094 | Rust/axum; `GET /healthz`, `GET /metrics` |
| 311 webhook | `POST /v1/council/reports` on missed-pickup-service | council signs with HMAC header `X-C311-Signature` |
| lift events | Redpanda topic `collection.lift-events` | consumer group `cw.missed-pickup.reconcile` |
| reconciliation tick | cron `*/10 * * * *` inside the service | processes reports older than the 30-minute grace |
| return visits | route-service `POST /v1/return-visits` | lands on the next route for that district |
| council replies | 311 API `PUT /reports/{id}/resolution` | rate limit 5 req/s per API key |
| ops CLI | `mpctl` (cargo install --path tools/mpctl) | talks to the service admin API |
| escalations | Slack `#cw-escalations` | via incoming webhook, see section 8 |

## 3. Daily flow

1. 07:30 — Mags (or whoever is on the ops desk) runs `mpctl status --since 24h`. Anything in state
   `UNMATCHED` older than 24h gets a look by hand.
2. The reconciliation tick takes every report older than the 30-minute grace period (trucks in the LTE
   dead zones along the river upload lifts late; without the grace we'd book return visits for bins we
   already emptied) and looks for a lift of that bin's RFID tag on the report's collection day.
3. Lift found -> state `COLLECTED`, resolution "collected at HH:MM" sent to the council.
4. No lift, and the route for that district is finished -> state `RETURN_BOOKED`, return visit requested
   from route-service, resolution "return visit booked for <date>" sent.
5. No lift, route still running -> stays `PENDING`, re-checked on the next tick.
6. Council resolutions go out in batches of 50; on HTTP 429 the sender backs off (1s, 2s, 4s, max 60s).

## 4. GPS proximity check (in progress)

When a lift exists for the tag we also compare the truck GPS fix at lift time with the bin's registered
location. Today the service **auto-rejects** the complaint if the lift exists but the truck was more than
50 m away from the bin ("lift recorded, collection confirmed"). That was fine in the pilot district but
it is wrong near the river where old truck GPS drifts.

Open question for eng (Ines): keep auto-reject, send the report to a supervisor, or book a return visit
automatically. Whatever we pick, reports affected by this check must be visible in `mpctl status` with
their own state so the ops desk can find them.

## 5. mpctl cheat sheet

```
mpctl status --since 24h               # counts by state, oldest UNMATCHED first
mpctl show C311-2026-118842            # one report: lifts found, GPS distance, resolution sent
mpctl reconcile --date 2026-05-27      # re-run matching for one collection day (idempotent)
mpctl resend --report C311-2026-118842 # re-send the council resolution for one report
mpctl escalate C311-2026-118842 --reason "resident disputes lift"   # posts to #cw-escalations
mpctl pause-sender / resume-sender     # stop/start outgoing council resolutions
```

`mpctl` needs `MPCTL_ADMIN_URL` (default `http://missed-pickup-service.cw-prod:8094/admin`) and your own
admin token from `mpctl login`.

## 6. Escalating to the council

- Disputes (resident insists the bin was not emptied although we have a lift and GPS within 50 m):
  `mpctl escalate`, then Mags phones the council waste desk the same day.
- If the council API has been failing for more than 2 hours, pause the sender (`mpctl pause-sender`) so
  we don't burn the rate limit on retries, and email wasteops@portellery.gov with the backlog count.
- Never reply to the resident directly. All resident contact goes through the council.

## 7. Known failure modes

**Lifts arrive late.** Trucks in dead zones buffer lifts and upload on reconnect, sometimes hours later.
If a report was marked `RETURN_BOOKED` and the lift shows up afterwards, run
`mpctl reconcile --date <day>`: it cancels the return visit if it hasn't been driven yet.

**Duplicate lifts.** Fixed in lift-ingest in April (dedupe on the reader's lift_seq). If completion is
above 100% again, page lift-ingest's owner before touching anything here.

**Council API 401.** The API key rotates every 90 days. The new key goes into Vault at
`secret/curbwise/council311`; the service reloads it within 5 minutes, no restart needed.

**city-export overlap.** city-export runs at 04:15 and locks the lifts partitions for the previous day
for about 3 minutes. Reconciliation ticks during that window are slow but harmless.

**Consumer lag.** Dashboard "Missed pickups" on grafana.curbwise.internal. If lag on
`cw.missed-pickup.reconcile` is above 10k messages for more than 15 minutes, check whether the service is
crash-looping (`kubectl -n cw-prod get pods -l app=missed-pickup-service`) before scaling it.

**Return visit booked twice.** Happens when a resident files two reports for the same bin (the portal
does not dedupe). `mpctl show` lists both; cancel the second visit in route-service with
`mpctl cancel-return --report <id>` and resolve the second report as "duplicate of <first id>".

**Bin not in our register.** The 311 report carries a tag id or address we don't know (new estates,
bins swapped by the council without telling us). State becomes `UNMATCHED`. Ops adds the bin through the
admin UI of route-service and re-runs `mpctl reconcile --date <day>`; do not resolve it as collected.

## 8. Config & secrets

Everything comes from Vault through the vault agent sidecar. For local testing people have been using:

```
export MPCTL_ADMIN_URL=http://localhost:8094/admin
export COUNCIL311_BASE_URL=https://api.311.portellery.gov/v2
export COUNCIL311_API_KEY=c311_live_7fQ2mX9pLw4kZr8TbV1n
export ESCALATION_WEBHOOK=https://hooks.slack.com/services/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
```

(Yes, those should not be in here. Ticket CW-1187 moves them out.)

## 9. After an incident

Write it up in docs/incidents/ within two working days: timeline, number of reports affected, whether
any council deadlines were missed, and what changes to this runbook.

## 10. Hours and contacts

- Ops desk: Mon-Sat 07:00-16:00 (Mags, backup: whoever is on the early shift).
- Eng on-call: PagerDuty schedule "curbwise-primary"; missed-pickup pages only if the 48h deadline is at
  risk for more than 20 reports.
- Council waste desk: phone number in the ops wiki, weekdays only. Outside those hours, escalate in Slack
  and call them first thing the next working day."""

RECONCILE_RS = """use crate::gps::distance_m;
use crate::model::{Report, ReportState};

const TOPIC: &str = "bin.lifts.v1";
const GROUP: &str = "cw.missed-pickup.reconcile";
const GPS_MAX_DISTANCE_M: f64 = 50.0;

pub async fn decide(report: &Report, lift: Option<&Lift>, bin: &Bin) -> ReportState {
    match lift {
        Some(l) if distance_m(l.lat, l.lon, bin.lat, bin.lon) <= GPS_MAX_DISTANCE_M => ReportState::Collected,
        Some(_) => ReportState::Rejected, // lift recorded, truck far away -> auto-reject
        None if report.route_finished => ReportState::ReturnBooked,
        None => ReportState::Pending,
    }
}"""

A3_INLINE = maple_block(
    [
        (4, "fact", "config", "lift-ingest publishes bin-lift events to bin.lifts.v1, 12 partitions keyed by truck_id"),
        (
            6,
            "fact",
            "preference",
            "Dmitri Volkov owns lift-ingest; talk to him before changing the MQTT payload format",
        ),
    ]
)

A3_MCP = [
    {
        "id": 10,
        "layer": "fact",
        "kind": "config",
        "content": "city-export is scheduled with cron 30 2 * * * and uploads yesterday's lifts as CSV, one file per district",
        "score": 0.81,
        "created_at": "2026-04-14T09:31:02Z",
    },
    {
        "id": 5,
        "layer": "decision",
        "kind": "decision",
        "content": "Readers without lift_seq (fw 1.8) dedupe on (reader_id, tag_id, lifted_at truncated to the second)",
        "score": 0.66,
        "created_at": "2026-04-14T08:57:40Z",
    },
    {
        "id": 13,
        "layer": "fact",
        "kind": "convention",
        "content": "lift-ingest logs via env_logger; RUST_LOG=lift_ingest=debug prints raw payloads",
        "score": 0.52,
        "created_at": "2026-04-14T08:44:12Z",
    },
]

SFTP_KEY = """-----BEGIN OPENSSH PRIVATE KEY-----
b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW
QyNTUxOQAAACBq8Yk2vQ7Lm3Xw9Rz4Tn6Pj1Hc5Ud8Ks0Fa2Ge7Bi4AAAAJgV1x0dFdcdHQ
AAAAtzc2gtZWQyNTUxOQAAACBq8Yk2vQ7Lm3Xw9Rz4Tn6Pj1Hc5Ud8Ks0Fa2Ge7Bi4AAA
EDx4Zq7Lw2Nc9Rv1Tk5Pm8Hj3Gf6Sd0Ab4Ce7Bi2Ge7Bi4AAAAJgV1x0dFdcdHQcity-ex
port@curbwise
-----END OPENSSH PRIVATE KEY-----"""

LIFT_MAIN_RS = """fn init_logging() {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_current_span(false)
        .init();
}"""


def build_a3():
    s = Session(A3, P, "2026-06-03T07:55:30Z", "feat/mp-gps-review", "2.1.334")
    s.user(
        "<system-reminder>\n" + A3_INLINE + "\n</system-reminder>\n"
        "ok, we're finally doing the missed-pickup GPS thing. below is the runbook Mags and I wrote, it's what ops "
        "follows today. read it, then let's change missed-pickup-service so section 4 gets resolved.\n\n" + RUNBOOK
    )
    s.think(
        "Long runbook. Section 4 is the open question (auto-reject vs supervisor vs return visit). Before "
        "changing code, check what the service does today and what I already know about lifts and city-export."
    )
    s.memory_search("missed-pickup-service lifts topic city-export schedule", A3_MCP)
    s.read(f"{ROOT}/missed-pickup-service/src/reconcile.rs", RECONCILE_RS)
    s.say(
        "Two mismatches before we touch section 4:\n\n"
        "1. The runbook says lift events come from `collection.lift-events`, but `reconcile.rs` still subscribes "
        "to `bin.lifts.v1` (and that's also what my notes from April say).\n"
        "2. The runbook says city-export runs at 04:15; my notes say its cron is `30 2 * * *`. Which one is "
        "current?"
    )
    s.user(
        "topic got renamed to collection.lift-events last sprint, the old name is only a mirror until june 15, "
        "switch it. and yes city-export is 4:15 now, the council's SFTP has a maintenance window 02:00-03:30 so "
        "the 2:30 run kept failing. check deploy/cron too, pretty sure nobody updated the yaml",
        adv=85,
    )
    s.grep(
        "schedule:",
        f"{ROOT}/deploy/cron",
        'deploy/cron/city-export.yaml:7:  schedule: "30 2 * * *"\ndeploy/cron/city-export.yaml:8:  timeZone: '
        '"Europe/Dublin"',
    )
    s.edit(f"{ROOT}/deploy/cron/city-export.yaml", '  schedule: "30 2 * * *"', '  schedule: "15 4 * * *"')
    s.edit(
        f"{ROOT}/missed-pickup-service/src/reconcile.rs",
        'const TOPIC: &str = "bin.lifts.v1";',
        'const TOPIC: &str = "collection.lift-events";',
    )
    s.say(
        "Updated the CronJob to `15 4 * * *` and the consumer topic to `collection.lift-events`.\n\n"
        "For section 4 — lift exists but the truck was >50 m from the bin — options:\n"
        "1. keep auto-reject (current `ReportState::Rejected`)\n"
        "2. new state `needs_review`: the report waits for a supervisor in `mpctl status`, nothing sent to the "
        "council until they decide\n"
        "3. book a return visit automatically\n\n"
        "2 keeps the 48h deadline manageable if supervisors look daily; 3 is the most expensive."
    )
    s.user(
        "2. the contract penalises us $40 per wrongly rejected complaint and GPS on the old trucks drifts like 80m "
        "near the river. also Roz — Rosalind Parr — owns lift-ingest now, Dima moved over to routing, so lift "
        "questions go to her",
        adv=95,
    )
    s.edit(
        f"{ROOT}/missed-pickup-service/src/reconcile.rs",
        "        Some(_) => ReportState::Rejected, // lift recorded, truck far away -> auto-reject",
        "        Some(_) => ReportState::NeedsReview, // lift recorded but GPS > 50 m: supervisor decides",
    )
    s.bash(
        "cargo test -p missed-pickup-service",
        "Run missed-pickup-service tests",
        "   Compiling missed-pickup-service v0.6.0\n    Finished `test` profile target(s) in 29.44s\n     Running "
        "tests/reconcile_test.rs\nthread 'gps_far_needs_review' panicked at tests/common/mod.rs:22:10:\n"
        'db setup: Database(PgDatabaseError { severity: Error, code: "42704", message: "type \\"geography\\" '
        'does not exist" })\ntest result: FAILED. 0 passed; 31 failed',
        is_error=True,
        radv=40,
    )
    s.say(
        'The test database has no PostGIS extension (`type "geography" does not exist`). The justfile has a '
        "`test-db` recipe that recreates `curbwise_test` with the extension; running it first."
    )
    s.bash(
        "just test-db && cargo test -p missed-pickup-service",
        "Recreate test DB with PostGIS and re-run tests",
        "CREATE DATABASE\nCREATE EXTENSION\nmigrations applied: 18\n     Running tests/reconcile_test.rs\n"
        "test result: ok. 31 passed; 0 failed",
        radv=52,
    )
    s.user(
        "one more while you're in lift land: rip out the fallback dedupe key. every truck got fw 2.x in the may "
        "swap, and the fallback was eating real lifts — the dual-arm trucks lift two bins within the same second "
        "and they collapsed into one. anything arriving without lift_seq goes to a dead-letter topic "
        "collection.lift-events.dlq instead",
        adv=130,
    )
    s.read(f"{ROOT}/lift-ingest/src/main.rs", LIFT_MAIN_RS, start=12)
    s.edit(
        f"{ROOT}/lift-ingest/src/consumer.rs",
        '        // fw 1.8 readers: no lift_seq\n        None => format!("{}:{}:{}", ev.reader_id, ev.tag_id, '
        "ev.lifted_at.timestamp()),",
        '        None => {\n            tracing::warn!(reader_id = %ev.reader_id, "lift without lift_seq -> dlq");\n'
        '            return send_dlq(producer, "collection.lift-events.dlq", &msg.payload).await;\n        }',
    )
    s.say(
        "Fallback removed; lifts without `lift_seq` now go to `collection.lift-events.dlq`.\n\n"
        "Side note: lift-ingest's `main.rs` now initialises `tracing_subscriber::fmt().json()`, while my notes "
        "say it logs through env_logger. Has env_logger been dropped everywhere?"
    )
    s.user(
        "yep, every service moved to tracing + tracing-subscriber with json output in may, env_logger is banned "
        "in deny.toml now. unrelated, found this sitting in city-export/deploy/sftp_key, is that supposed to be "
        "in git??\n```\n" + SFTP_KEY + "\n```",
        adv=70,
    )
    s.bash(
        "git log --oneline -- city-export/deploy/sftp_key",
        "Check history of the committed key",
        "a41c9e0 add sftp key for testing (tmp)",
    )
    s.say(
        "No — that's the private key for the council SFTP and it has been in git history since a41c9e0, so it "
        "should be treated as leaked: ask the council for a new key, remove the file, and have city-export read "
        "the key from Vault instead. Where should it live?"
    )
    s.user(
        "yes do it. vault path secret/curbwise/city-sftp, the vault agent renders it to /vault/secrets/sftp_key. "
        "Mags will get the council to issue a new key",
        adv=60,
    )
    s.bash(
        "git rm -q city-export/deploy/sftp_key && echo 'city-export/deploy/sftp_key' >> .gitignore && "
        "sed -i 's#deploy/sftp_key#/vault/secrets/sftp_key#' city-export/src/sftp.rs && git status --short",
        "Remove key from repo and point city-export at the Vault-rendered path",
        "M  .gitignore\nM  city-export/src/sftp.rs\nD  city-export/deploy/sftp_key",
    )
    s.user("thanks! that's it, the standup got moved to 9:45 so I'm off", adv=45)
    s.say(
        "Done for today: topic switched, CronJob at 15 4, `needs_review` state for far-GPS lifts, fallback "
        "dedupe removed with a DLQ, SFTP key out of the repo (still needs rotating).",
        adv=4,
    )
    s.stop_hook()
    s.title("Missed-pickup GPS review state and lift topic rename")
    return s


GOLD_A3 = {
    "session": A3,
    "project": ROOT,
    "order": 3,
    "language": "en",
    "expected": [
        {
            "id": "e1",
            "layer": "fact",
            "kind": "document",
            "lang": "en",
            "text": "Runbook 'Missed-pickup reconciliation & council escalation' (missed-pickup-service): 48h council deadline per 311 report, 30-minute grace for late lifts, states COLLECTED/RETURN_BOOKED/PENDING, mpctl commands (status, show, reconcile --date, resend, escalate, pause-sender), escalation via #cw-escalations and Mags, known failure modes (late lifts, council API key rotation in Vault secret/curbwise/council311, city-export overlap, consumer lag).",
            "must": ["Missed-pickup reconciliation", "mpctl"],
        },
        {
            "id": "e2",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "The lift events topic was renamed to `collection.lift-events` (old name only mirrored until June 15); missed-pickup-service now consumes it.",
            "must": ["collection.lift-events"],
            "supersedes": f"{A1}#e2",
        },
        {
            "id": "e3",
            "layer": "fact",
            "kind": "config",
            "lang": "en",
            "text": "city-export now runs at 04:15 (`15 4 * * *` in deploy/cron/city-export.yaml) because the council SFTP has a maintenance window 02:00-03:30.",
            "must": ["15 4 * * *"],
            "supersedes": f"{A1}#e10",
        },
        {
            "id": "e4",
            "layer": "decision",
            "kind": "decision",
            "lang": "en",
            "text": "Missed-pickup reports where a lift exists but truck GPS was >50 m from the bin go to a new needs_review state for a supervisor instead of auto-reject, because the contract penalises $40 per wrongly rejected complaint and old-truck GPS drifts ~80 m near the river.",
            "must": ["needs_review"],
            "chosen": "needs_review",
            "over": ["auto-reject"],
            "why": ["$40"],
        },
        {
            "id": "e5",
            "layer": "fact",
            "kind": "preference",
            "lang": "en",
            "text": "Rosalind Parr (Roz) owns lift-ingest now; lift questions go to her (Dima moved to routing).",
            "must": ["Rosalind Parr"],
            "supersedes": f"{A1}#e11",
        },
        {
            "id": "e6",
            "layer": "experience",
            "kind": "fix",
            "lang": "en",
            "text": "missed-pickup-service tests fail with 'type \"geography\" does not exist' when the test DB lacks PostGIS; run `just test-db` first to recreate curbwise_test with the extension.",
            "must": ["just test-db"],
        },
        {
            "id": "e7",
            "layer": "decision",
            "kind": "decision",
            "lang": "en",
            "text": "The fallback dedupe key for lifts without lift_seq is removed; such lifts go to the dead-letter topic collection.lift-events.dlq, because all trucks are on fw 2.x since the May swap and the fallback merged real lifts from dual-arm trucks lifting two bins in the same second.",
            "must": ["collection.lift-events.dlq"],
            "chosen": "dead-letter",
            "over": ["fallback"],
            "why": ["dual-arm"],
            "supersedes": f"{A1}#e5",
        },
        {
            "id": "e8",
            "layer": "fact",
            "kind": "convention",
            "lang": "en",
            "text": "All services log with tracing + tracing-subscriber (JSON output); env_logger is banned in deny.toml.",
            "must": ["tracing-subscriber"],
            "supersedes": f"{A1}#e13",
        },
        {
            "id": "e9",
            "layer": "fact",
            "kind": "convention",
            "lang": "en",
            "text": "The council SFTP private key lives in Vault at secret/curbwise/city-sftp and is rendered by the vault agent to /vault/secrets/sftp_key; it must never be committed (the old one leaked in git and is being rotated).",
            "must": ["secret/curbwise/city-sftp"],
        },
    ],
    "acceptable": [
        {"must": ["*/10 * * * *"], "note": "reconciliation tick inside missed-pickup-service"},
        {"must": ["30-minute grace"], "note": "grace period for late lifts"},
        {"must": ["port 8094"], "note": "missed-pickup-service port"},
        {"must": ["secret/curbwise/council311"], "note": "council API key rotates every 90 days"},
        {"must": ["cw.missed-pickup.reconcile"], "note": "consumer group"},
        {"must": ["June 15"], "note": "old topic mirrored until June 15"},
    ],
    "forbidden": [
        "the standup got moved to 9:45",
        "31 passed",
        "a41c9e0",
        "publishes bin-lift events to bin.lifts.v1",
        "talk to him before changing the MQTT payload format",
        "city-export is scheduled with cron 30 2 * * *",
        "Readers without lift_seq (fw 1.8) dedupe",
        "lift-ingest logs via env_logger",
    ],
    "secrets": [
        "c311_live_7fQ2mX9pLw4kZr8TbV1n",
        "https://hooks.slack.com/services/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",
        "qW3rTy7uIoP9aSdF6gHjK2lZ",
        "QyNTUxOQAAACBq8Yk2vQ7Lm3Xw9Rz4Tn6Pj1Hc5Ud8Ks0Fa2Ge7Bi4AAAAJgV1x0dFdcdHQ",
    ],
}

SESSIONS = [(build_a1, GOLD_A1), (build_a2, GOLD_A2), (build_a3, GOLD_A3)]
