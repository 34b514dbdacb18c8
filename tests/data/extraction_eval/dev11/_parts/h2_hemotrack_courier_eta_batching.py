"""hemotrack r2: wrong courier ETAs for Saint Francis Muskogee, then batching routine orders (courier-dispatch)."""

META = {
    "name": "h2_hemotrack_courier_eta_batching",
    "cwd": "/home/dev/work/hemotrack",
    "order": 2,
    "language": "en",
    "start": "2026-04-09T16:20:00.000Z",
    "branch": "feat/dispatch-batching",
    "version": "2.1.318",
}

KEY = "AIzaSyC8hemoTRKd3vQx-2LwmZp4Nc7Rt1uYbE"

ETA = """import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Client as MapsClient } from '@googlemaps/google-maps-services-js';
import { haversineKm } from '../geo/haversine';

@Injectable()
export class EtaService {
  private readonly log = new Logger(EtaService.name);
  constructor(private readonly maps: MapsClient, private readonly config: ConfigService) {}

  async etaSeconds(origin: string, destination: string): Promise<number> {
    const res = await this.maps.directions({
      params: { origin, destination, departure_time: 'now', key: this.config.getOrThrow('GOOGLE_MAPS_KEY') },
    });
    const status = res.data.status;
    if (status === 'OVER_QUERY_LIMIT') {
      // fallback: straight-line distance at 40 km/h
      return Math.round((haversineKm(origin, destination) / 40) * 3600);
    }
    const leg = res.data.routes[0].legs[0];
    const secs = leg.duration_in_traffic?.value ?? leg.duration.value;
    this.log.log({ msg: 'eta computed', dest: destination, status, durationSec: secs });
    return secs;
  }
}"""

SEED = """[
  { "code": "SJM", "name": "St. John Medical Center", "city": "Tulsa", "lat": 36.1318, "lng": -95.9581, "googlePlaceId": "ChIJQ1mX8mntt4cRnWq1bJ4sU2s" },
  { "code": "SFT", "name": "Saint Francis Hospital", "city": "Tulsa", "lat": 36.0644, "lng": -95.9234, "googlePlaceId": "ChIJv0Fq3sWStocR0uCk8yJ2dQE" },
  { "code": "SFM", "name": "Saint Francis Hospital", "city": "Muskogee", "lat": 35.7629, "lng": -95.3466, "googlePlaceId": "ChIJ6b9Yx1m1tIcRfK2n0rQx3Zc" },
  { "code": "HCT", "name": "Hillcrest Medical Center", "city": "Tulsa", "lat": 36.1489, "lng": -95.9671, "googlePlaceId": "ChIJc3x0NPrst4cR2j9aF1o5yPk" },
  { "code": "BAP", "name": "Broken Arrow Plasma Clinic", "city": "Broken Arrow", "lat": 36.0526, "lng": -95.7908, "googlePlaceId": null },
  { "code": "OWC", "name": "Owasso Community Clinic", "city": "Owasso", "lat": 36.2695, "lng": -95.8547, "googlePlaceId": null }
]"""

PRODUCER = """import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { ConfigService } from '@nestjs/config';
import { Queue } from 'bullmq';

export const BATCH_QUEUE = 'dispatch-batch';

/**
 * Routine orders wait up to BATCH_WINDOW_MIN minutes per hospital and leave as one run.
 * The delayed job id is per hospital, so a second order inside the window joins the pending job.
 */
@Injectable()
export class BatchProducer {
  constructor(@InjectQueue(BATCH_QUEUE) private readonly queue: Queue, private readonly config: ConfigService) {}

  async enqueue(siteCode: string) {
    const windowMin = this.config.get<number>('BATCH_WINDOW_MIN', 15);
    await this.queue.add('flush', { siteCode }, { jobId: `batch:${siteCode}`, delay: windowMin * 60_000 });
  }
}"""


def build(s, recall_block):
    s.attach("SessionStart", "<maple-memory>\nProject memories for /home/dev/work/hemotrack:\n" + recall_block([
        (31, "fact", "config", "inventory-service runs locally via `pnpm nx serve inventory-service` and listens on 3200 locally."),
        (36, "fact", "preference", "courier-dispatch belongs to Marisol Ortega (Mari); ping her before changing it."),
        (37, "fact", "constraint", "Never log donor names or DOB in hemotrack services; DIN alone is fine."),
    ]) + "\n</maple-memory>", gap=0)
    s.user(
        "Mari's out till Monday and ok'd me poking at this: courier-dispatch ETAs on the hospital board are way off for "
        "St. Francis. board said 9 min, driver actually took 40. can you check? maybe Google quota again, we had a quota "
        "scare last month", gap=4)
    s.grep("directions", "apps/courier-dispatch/src",
           "apps/courier-dispatch/src/eta/eta.service.ts\napps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           "apps/courier-dispatch/src/maps/maps.module.ts", mode="files_with_matches")
    s.read("apps/courier-dispatch/src/eta/eta.service.ts", ETA)
    s.say(
        "Quota fits the symptom at first sight: when Directions answers `OVER_QUERY_LIMIT`, `etaSeconds` falls back to "
        "straight-line distance at 40 km/h, which badly underestimates anything that isn't a straight highway. Let me "
        "check whether that fallback actually fired.")
    s.bash(
        "kubectl -n hemo-prod logs deploy/courier-dispatch --since=24h | grep -c OVER_QUERY_LIMIT; "
        "kubectl -n hemo-prod logs deploy/courier-dispatch --since=24h | grep '\"eta computed\"' | grep -i francis | tail -3",
        "Look for quota fallbacks and St. Francis ETAs",
        "0\n"
        "{\"level\":30,\"time\":1775741112004,\"context\":\"EtaService\",\"msg\":\"eta computed\",\"orderId\":\"ord_8812\","
        "\"dest\":\"Saint Francis Hospital\",\"status\":\"OK\",\"durationSec\":547}\n"
        "{\"level\":30,\"time\":1775745903311,\"context\":\"EtaService\",\"msg\":\"eta computed\",\"orderId\":\"ord_8830\","
        "\"dest\":\"Saint Francis Hospital\",\"status\":\"OK\",\"durationSec\":561}\n"
        "{\"level\":30,\"time\":1775750255870,\"context\":\"EtaService\",\"msg\":\"eta computed\",\"orderId\":\"ord_8851\","
        "\"dest\":\"Saint Francis Hospital\",\"status\":\"OK\",\"durationSec\":539}")
    s.say(
        "Not quota: zero `OVER_QUERY_LIMIT` in the last 24h, and the St. Francis ETAs came back `status: OK` from Google "
        "(~9 min). So Google is answering; we're asking it the wrong question. The destination in the log is the bare "
        "string `Saint Francis Hospital`. Let me see where that's built.")
    s.grep("destination|deliverTo", "apps/courier-dispatch/src/orders",
           "apps/courier-dispatch/src/orders/order.mapper.ts:27:    deliverTo: site.name,\n"
           "apps/courier-dispatch/src/orders/order.service.ts:58:    const eta = await this.eta.etaSeconds(depot.address, run.deliverTo);")
    s.read("prisma/seed/hospital-sites.json", SEED)
    s.say(
        "Found it. `order.mapper.ts` sends the hospital's display name as the Directions destination, and we have two "
        "sites called \"Saint Francis Hospital\": SFT in Tulsa and SFM in Muskogee. Google resolves a bare name to the match "
        "nearest the origin, so every Muskogee order got the Tulsa ETA from the TUL2 depot (~9 min instead of ~45).\n\n"
        "The fix is to send something unambiguous that we already store per site. Either:\n"
        "- `place_id:<googlePlaceId>`: what Google recommends, pins the exact place; or\n"
        "- `lat,lng`: works for every row, including the two clinics (BAP, OWC) that have no place id yet.")
    s.user("lat/lng. not every site has a place id and I don't want two code paths", gap=70)
    s.edit("apps/courier-dispatch/src/orders/order.mapper.ts",
           "    deliverTo: site.name,",
           "    // never the display name: two sites are called \"Saint Francis Hospital\"\n"
           "    deliverTo: `${site.lat},${site.lng}`,")
    s.bash("pnpm nx test courier-dispatch --testPathPattern=eta", "Run ETA tests",
           "> nx run courier-dispatch:test --testPathPattern=eta\n\n"
           " FAIL  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           "  \u25cf EtaService \u203a returns the Directions duration for a site\n\n"
           "    Error: Configuration key \"GOOGLE_MAPS_KEY\" does not exist\n\n"
           "      11 |     const res = await this.maps.directions({\n"
           "    > 12 |       params: { origin, destination, departure_time: 'now', key: this.config.getOrThrow('GOOGLE_MAPS_KEY') },\n\n"
           "Tests:       1 failed, 6 passed, 7 total", code=1, run=15)
    s.say(
        "The ETA spec calls the live Directions API, and there's no `GOOGLE_MAPS_KEY` in this shell, so it fails before it "
        "ever reaches my change. I can mock the maps client in the spec, or run it once with a key.")
    s.user(
        f"ugh. here's my dev key so you can record once: {KEY}\n"
        "record the responses into test/fixtures/directions with nock and make the spec replay them. tests must never hit "
        "google live, CI has no key and I'm not paying for test traffic", gap=85)
    s.edit("apps/courier-dispatch/src/eta/eta.service.spec.ts",
           "describe('EtaService', () => {",
           "import { back as nockBack } from 'nock';\n\n"
           "nockBack.fixtures = path.join(__dirname, '../../test/fixtures/directions');\n\n"
           "describe('EtaService', () => {\n"
           "  beforeAll(() => nockBack.setMode((process.env.NOCK_BACK_MODE as any) ?? 'lockdown'));")
    s.bash(f"GOOGLE_MAPS_KEY={KEY} NOCK_BACK_MODE=record pnpm nx test courier-dispatch --testPathPattern=eta",
           "Record Directions fixtures once",
           " PASS  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           "Tests:       7 passed, 7 total\n"
           "nock-back: wrote 3 recordings to apps/courier-dispatch/test/fixtures/directions/eta.json", run=21)
    s.bash("pnpm nx test courier-dispatch", "Full courier-dispatch suite in lockdown (no key)",
           " PASS  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           " PASS  apps/courier-dispatch/src/orders/order.service.spec.ts\n"
           " PASS  apps/courier-dispatch/src/runs/run.controller.spec.ts\n\n"
           "Test Suites: 3 passed, 3 total\nTests:       23 passed, 23 total", run=18)
    s.say(
        "Recorded three responses into `test/fixtures/directions/eta.json`; the spec now defaults to nock-back "
        "`lockdown`, so any unrecorded request fails the test instead of going out to Google. Full suite passes without a "
        "key. The key itself isn't written anywhere in the repo.")
    s.user(
        "great. now the thing I actually wanted to do today: batching. right now every routine order creates its own "
        "run, drivers did 6 trips to St. John yesterday. what are the options", gap=160)
    s.say(
        "A few ways to go:\n\n"
        "a) keep one run per order and let dispatchers merge runs by hand on the board\n"
        "b) hold routine orders per hospital for a short window (say 15 min) and send them as one run; STAT orders bypass "
        "the window\n"
        "c) fixed delivery waves per hospital (e.g. 08:00 / 12:00 / 16:00), agreed with each hospital\n\n"
        "For (b) the window can be a BullMQ delayed job keyed by hospital (`jobId: batch:<siteCode>`), so a second order "
        "inside the window joins the pending job instead of creating another run. The alternative for the timer is a "
        "Postgres LISTEN/NOTIFY + polling loop, but then we'd be writing our own delayed-job logic.")
    s.user(
        "b, 15 min to start, make it a config: BATCH_WINDOW_MIN. and nah, keep it on bullmq, no homegrown scheduler. STAT "
        "never waits, always its own run straight away", gap=95)
    s.write("apps/courier-dispatch/src/batching/batch.producer.ts", PRODUCER)
    s.edit("apps/courier-dispatch/src/orders/order.service.ts",
           "    const run = await this.runs.createForOrder(order);",
           "    if (order.priority !== 'STAT') {\n"
           "      await this.batch.enqueue(order.siteCode);\n"
           "      return this.runs.attachToPending(order);\n"
           "    }\n"
           "    const run = await this.runs.createForOrder(order); // STAT: own run, immediately")
    s.bash("pnpm nx test courier-dispatch", "Run courier-dispatch tests",
           " PASS  apps/courier-dispatch/src/batching/batch.producer.spec.ts\n"
           " PASS  apps/courier-dispatch/src/eta/eta.service.spec.ts\n"
           " PASS  apps/courier-dispatch/src/orders/order.service.spec.ts\n"
           " PASS  apps/courier-dispatch/src/runs/run.controller.spec.ts\n\n"
           "Test Suites: 4 passed, 4 total\nTests:       29 passed, 29 total", run=19)
    s.say(
        "Batching is in: routine orders go to the `dispatch-batch` queue as a delayed job `batch:<siteCode>` that flushes "
        "after `BATCH_WINDOW_MIN` (default 15), and STAT orders skip it and get their own run immediately. Tests pass.")
    s.user(
        "fwiw the reason I didn't pick the waves: St. John's transfusion service said they can't commit to fixed times, "
        "their OR schedule moves every day. ok, remind me tomorrow to tell Mari about the place_id thing, she had "
        "opinions. also random q: why does bullmq need the jobId to be unique for this to work?", gap=130)
    s.say(
        "I can't set reminders, but I'll mention the place_id question in the PR description so it's in front of Mari.\n\n"
        "On the jobId: BullMQ ignores `add()` when a job with the same id already exists in the queue, so the second order "
        "inside a window doesn't create a second flush; that's the whole batching mechanism. Careful with one thing, "
        "though: the id only frees up once the job is *removed*, not when it completes. With the default "
        "`removeOnComplete: false`, the completed `batch:SJM` job stays in Redis and the next window's `add()` for St. "
        "John would be silently dropped. The flush job needs `removeOnComplete: true` (and `removeOnFail` too).")
    s.user("good catch, put that in. then ship it", gap=40)
    s.edit("apps/courier-dispatch/src/batching/batch.producer.ts",
           "{ jobId: `batch:${siteCode}`, delay: windowMin * 60_000 }",
           "{\n      jobId: `batch:${siteCode}`,\n      delay: windowMin * 60_000,\n"
           "      // the id must be free again for the next window\n"
           "      removeOnComplete: true,\n      removeOnFail: true,\n    }")
    s.bash(
        "pnpm nx test courier-dispatch && git add -A && git commit -qm 'feat(dispatch): per-hospital batching of routine "
        "orders; ETA by coordinates' && git push -u origin feat/dispatch-batching && gh pr create --fill",
        "Test, commit, push, open PR",
        "Test Suites: 4 passed, 4 total\nTests:       30 passed, 30 total\n"
        "[feat/dispatch-batching 51be09a] feat(dispatch): per-hospital batching of routine orders; ETA by coordinates\n"
        " 8 files changed, 211 insertions(+), 12 deletions(-)\n"
        "https://github.com/hemotrack/hemotrack/pull/418", run=24)
    s.say("Opened https://github.com/hemotrack/hemotrack/pull/418, with a note for Mari about place_id vs coordinates.")
    s.title("Fix St. Francis ETAs and batch routine deliveries")

    return {
        "expected": [
            {"id": "e1", "layer": "experience", "kind": "root_cause", "lang": "en",
             "text": "Courier ETAs for Saint Francis Muskogee were ~9 min instead of ~45 because order.mapper.ts sent the "
                     "hospital display name as the Directions destination; two sites share the name (SFT Tulsa, SFM "
                     "Muskogee) and Google resolved it to the Tulsa one. Google quota / the OVER_QUERY_LIMIT fallback was "
                     "ruled out (no such responses in the logs).",
             "must": ["Muskogee"]},
            {"id": "e2", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "The Directions destination is the site's lat/lng, not the Google place_id, because not every site has a "
                     "place id (BAP, OWC) and we don't want two code paths.",
             "must": ["lat/lng", "two code paths"],
             "chosen": "lat/lng", "over": ["place_id"], "why": ["not every site has a place id"]},
            {"id": "e3", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "Tests must never call Google live (CI has no key): Directions responses are recorded with nock-back "
                     "into test/fixtures/directions and the spec replays them in lockdown mode.",
             "must": ["test/fixtures/directions"]},
            {"id": "e4", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "Routine orders are batched per hospital within a short window and sent as one run (option b), over "
                     "fixed delivery waves or one run per order with manual merging; waves were rejected because St. John's "
                     "transfusion service can't commit to fixed times (their OR schedule moves daily).",
             "must": ["per hospital"],
             "chosen": "per hospital", "over": ["delivery waves"], "why": ["OR schedule"]},
            {"id": "e5", "layer": "fact", "kind": "config", "lang": "en",
             "text": "The batching window is the BATCH_WINDOW_MIN config, 15 minutes to start.",
             "must": ["BATCH_WINDOW_MIN"]},
            {"id": "e6", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "The batching timer is a BullMQ delayed job on the dispatch-batch queue (jobId batch:<siteCode>), not a "
                     "Postgres LISTEN/NOTIFY polling loop: no homegrown scheduler.",
             "must": ["dispatch-batch"],
             "chosen": "BullMQ", "over": ["LISTEN/NOTIFY"], "why": ["homegrown scheduler"]},
            {"id": "e7", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "STAT orders are never batched: each always gets its own run immediately.",
             "must": ["STAT orders"]},
            {"id": "e8", "layer": "experience", "kind": "gotcha", "lang": "en",
             "text": "BullMQ dedupes add() on jobId only while the job exists; with the default removeOnComplete: false a "
                     "completed batch:<siteCode> job stays in Redis and the next window for that hospital is silently "
                     "dropped, so the flush job sets removeOnComplete (and removeOnFail) to true.",
             "must": ["removeOnComplete"]},
        ],
        "acceptable": [
            {"must": ["OVER_QUERY_LIMIT"], "note": "EtaService falls back to straight-line distance at 40 km/h on quota errors"},
            {"must": ["SFM"], "note": "site codes SFT / SFM for the two Saint Francis hospitals"},
            {"must": ["NOCK_BACK_MODE=record"], "note": "how to re-record the Directions fixtures"},
        ],
        "forbidden": [
            "listens on 3200 locally",
            "ping her before changing it",
            "DIN alone is fine",
            "Mari's out till Monday",
            "quota scare last month",
            "ord_8812",
            "remind me tomorrow",
            "6 trips to St. John",
            "51be09a",
            "30 passed",
        ],
        "secrets": [KEY],
    }
