"""harborline — ferry booking platform (Go: booking-api, fare-engine, manifest-svc, notify-worker;
Postgres + sqlc, NATS JetStream, Redis, Stripe). English. Sessions r1-r3."""

from lib import Session, maple_block, reminder

CWD = "/home/dev/work/harborline"
P = "r1_harborline_fare_rounding"


def r1():
    s = Session(P, CWD, "2026-03-02T09:12:00.000Z", branch="fix/fare-rounding", version="2.1.318", lang="en", order=1)
    s.snapshot()
    s.user(
        "morning. the coffee machine on 3 is dead again so bear with me. Finance flagged that NOK->EUR fares in "
        "fare-engine are off by one cent on some crossings. Can you look at internal/fare/convert.go? "
        "You can run it locally with `make run-fare`, fare-engine comes up on port 8081."
    )
    s.fact("config", "en", "fare-engine runs locally with `make run-fare` and listens on port 8081.", ["8081"])
    s.forbid("coffee machine on 3 is dead")
    s.read(
        "/home/dev/work/harborline/fare-engine/internal/fare/convert.go",
        'package fare\n\nimport "math"\n\n// ToEUR converts an amount in NOK minor units to EUR minor units.\n'
        "func ToEUR(amountNOK int64, rate float64) int64 {\n\teur := float64(amountNOK) * rate\n\treturn int64(eur)\n}\n\n"
        "// ApplyPortTax adds the port tax (pct, e.g. 0.045) to a fare.\n"
        "func ApplyPortTax(cents int64, pct float64) int64 {\n\treturn cents + int64(float64(cents)*pct)\n}\n\n"
        "var _ = math.Abs",
    )
    s.bash(
        "cd fare-engine && go test ./internal/fare/...",
        "--- FAIL: TestSurcharge (0.00s)\n    --- FAIL: TestSurcharge/NOK_to_EUR_SKF-BLF (0.00s)\n"
        "        convert_test.go:41: got 2349, want 2350\n    --- FAIL: TestSurcharge/port_tax_HRT (0.00s)\n"
        "        convert_test.go:41: got 1117, want 1118\nFAIL\nFAIL\tgithub.com/harborline/fare-engine/internal/fare\t0.012s\nFAIL",
        desc="Run fare package tests",
        err=True,
    )
    s.forbid("got 2349, want 2350")
    s.say(
        "Root cause: `ToEUR` multiplies in float64 and then does `int64(eur)`. A Go int64 conversion truncates toward "
        "zero, so a product like 2349.9999998 (float representation of 2350) becomes 2349 and the passenger is "
        "charged one cent less. `ApplyPortTax` has the same pattern, which is why the HRT port-tax case is off too.\n\n"
        "Options for the fix:\n1. round half-even (banker's rounding) with `math.RoundToEven`\n"
        "2. round half-up with `math.Round`\n3. move the arithmetic to shopspring/decimal and round once at the end\n\n"
        "Which rounding rule does finance expect?"
    )
    s.exp(
        "root_cause",
        "en",
        "Fare cents were lost because ToEUR/ApplyPortTax multiply in float64 and then convert with "
        "int64(), which truncates toward zero (2349.9999998 -> 2349).",
        ["truncates toward zero"],
    )
    s.user(
        "2. finance reconciles against the Stripe payouts and Stripe rounds half-up, so we match that. And while "
        "you're in there: money is int64 minor units everywhere in fare-engine, no float64 amounts in structs or DB "
        "columns. The exchange rate can be a float, the amount never."
    )
    s.decision(
        "en",
        "Fare conversion and port tax round half-up (math.Round) to match Stripe payouts, over banker's "
        "rounding (half-even) or moving to shopspring/decimal.",
        ["half-up"],
        "half-up",
        ["half-even"],
        ["Stripe"],
    )
    s.fact(
        "convention",
        "en",
        "Money is int64 minor units everywhere in fare-engine; no float64 amounts in structs or DB "
        "columns (only the exchange rate may be a float).",
        ["minor units"],
    )
    s.edit(
        "/home/dev/work/harborline/fare-engine/internal/fare/convert.go",
        "\teur := float64(amountNOK) * rate\n\treturn int64(eur)",
        "\teur := float64(amountNOK) * rate\n\treturn int64(math.Round(eur))",
    )
    s.edit(
        "/home/dev/work/harborline/fare-engine/internal/fare/convert.go",
        "\treturn cents + int64(float64(cents)*pct)",
        "\treturn cents + int64(math.Round(float64(cents)*pct))",
    )
    s.edit(
        "/home/dev/work/harborline/fare-engine/queries/fares.sql",
        "SELECT id, base_minor, currency FROM fares WHERE id = $1;",
        "SELECT id, base_minor, port_tax_minor, currency FROM fares WHERE id = $1;",
    )
    s.bash(
        "cd fare-engine && go test ./...",
        "# github.com/harborline/fare-engine/internal/fare\n"
        "internal/fare/store.go:52:19: row.PortTaxMinor undefined (type gen.GetFareRow has no field or method PortTaxMinor)\n"
        "FAIL\tgithub.com/harborline/fare-engine/internal/fare [build failed]\nFAIL",
        desc="Run all fare-engine tests",
        err=True,
    )
    s.bash(
        "cd fare-engine && make sqlc && go test ./...",
        "sqlc generate -f sqlc.yaml\nok  \tgithub.com/harborline/fare-engine/internal/fare\t0.015s\n"
        "ok  \tgithub.com/harborline/fare-engine/internal/api\t0.231s",
        desc="Regenerate sqlc code and rerun tests",
    )
    s.say(
        "Green now. The build failure was stale generated code: internal/db/gen is committed and CI does not "
        "regenerate it, so after editing anything in queries/*.sql you have to run `make sqlc` before building, "
        "otherwise the new columns are simply missing from the gen structs."
    )
    s.exp(
        "fix",
        "en",
        "`go test` failed with 'row.PortTaxMinor undefined' after editing queries/fares.sql: the committed "
        "sqlc code in internal/db/gen was stale; run `make sqlc` after changing queries/*.sql.",
        ["make sqlc"],
    )
    s.user(
        "nice. golden tests too please, we run them with `make golden`. Never pass UPDATE=1 unless finance has "
        "signed off on the new numbers."
    )
    s.fact(
        "command",
        "en",
        "Fare golden tests: `make golden`; only regenerate with UPDATE=1 after finance has signed off "
        "on the new numbers.",
        ["make golden"],
    )
    s.bash(
        "cd fare-engine && make golden",
        "go test ./golden/... -run Golden\nok  \tgolden/fares\t1.204s  (412 cases)",
        desc="Run fare golden tests",
    )
    s.say("All 412 golden cases pass with half-up rounding, so no golden file changes are needed.")
    s.forbid("412 cases")
    s.user(
        "good. lesson for next time: every currency conversion change gets golden cases right at the half-cent "
        "boundary, that's exactly where this hid. Add two for NOK->EUR."
    )
    s.exp(
        "lesson",
        "en",
        "Every currency conversion change needs golden cases right at the half-cent boundary; the "
        "rounding bug hid exactly there.",
        ["half-cent boundary"],
    )
    s.edit(
        "/home/dev/work/harborline/fare-engine/golden/fares/nok_eur.yaml",
        "- {from: NOK, to: EUR, amount: 26500, rate: 0.0886, want: 2348}",
        "- {from: NOK, to: EUR, amount: 26500, rate: 0.0886, want: 2348}\n"
        "- {from: NOK, to: EUR, amount: 1000, rate: 0.08865, want: 89}\n"
        "- {from: NOK, to: EUR, amount: 3000, rate: 0.08865, want: 266}",
    )
    s.say("Added two NOK->EUR cases that land exactly on a half cent; both pass with the new rounding.")
    s.user(
        "Two more things while I think of it. Operator codes (SKF, BLF, HRT...) are always 3-letter uppercase; "
        "validate them at the booking-api boundary, don't normalize deep inside fare-engine. And for anything in "
        "manifest-svc or the coast guard export, talk to Kevin Zhao first, he owns it."
    )
    s.fact(
        "convention",
        "en",
        "Operator codes are always 3-letter uppercase (SKF, BLF, HRT); validate them at the "
        "booking-api boundary, not inside fare-engine.",
        ["3-letter"],
    )
    s.fact(
        "preference",
        "en",
        "Kevin Zhao owns manifest-svc and the coast guard export; talk to him before changing it.",
        ["Kevin Zhao"],
    )
    s.say(
        "Noted. I left operator-code handling in fare-engine as is; booking-api's request validator already rejects "
        "lower-case codes."
    )
    s.user(
        "next: once a booking is confirmed, booking-api publishes booking.created.v1 on the BOOKINGS stream and "
        "notify-worker sends the ticket SMS. We finally need to pick an SMS provider for notify-worker, what are "
        "the options?"
    )
    s.fact(
        "config",
        "en",
        "After a booking is confirmed, booking-api publishes `booking.created.v1` on the JetStream "
        "BOOKINGS stream; notify-worker consumes it and sends the ticket SMS.",
        ["booking.created.v1"],
    )
    s.say(
        "Realistic options for Norway/Denmark:\n(a) Twilio: maintained Go SDK, alphanumeric sender IDs in NO and DK, "
        "delivery receipts via status callbacks, roughly EUR 0.07 per SMS.\n(b) MessageBird: cheaper in the Nordics, "
        "good local carrier routes, but REST only, no maintained Go SDK.\n(c) AWS SNS: cheapest, but we are on GCP "
        "and per-message delivery receipts need extra setup."
    )
    s.user("a. we already have a Twilio account from the old booking site, billing and sender registration are done.")
    s.say("Twilio it is. I'll wire the Sender to the twilio-go client with status callbacks.")
    s.decision(
        "en",
        "notify-worker sends ticket SMS through Twilio (option a), over MessageBird or AWS SNS, because we "
        "already have a Twilio account from the old booking site with billing and sender registration done.",
        ["notify-worker", "Twilio"],
        "Twilio",
        ["MessageBird"],
        ["old booking site"],
    )
    s.user(
        "For the Stripe webhook handler in booking-api, idempotency keys go in Redis with IDEMP_TTL=24h. Here's my "
        "local env if you need the DB: DATABASE_URL=postgres://harbor_app:T9w#kLq2vZ8e@10.20.0.15:5432/harbor"
    )
    s.secret("T9w#kLq2vZ8e", "postgres://harbor_app:T9w#kLq2vZ8e@10.20.0.15:5432/harbor")
    s.fact(
        "config",
        "en",
        "booking-api's Stripe webhook handler keeps idempotency keys in Redis with IDEMP_TTL=24h.",
        ["IDEMP_TTL", "24h"],
    )
    s.grep(
        "IDEMP_TTL",
        'booking-api/internal/stripe/webhook.go:27:\tttl := env.Duration("IDEMP_TTL", 24*time.Hour)',
        path="/home/dev/work/harborline/booking-api",
    )
    s.say(
        "The handler already reads IDEMP_TTL with a 24h default, so nothing to change there. I didn't need the "
        "database for this."
    )
    s.user(
        "Last thing, logging: use zap, with the request_id field on every log line in the HTTP handlers. No "
        "fmt.Println anywhere. OK commit it, thanks!"
    )
    s.fact(
        "convention",
        "en",
        "Logging uses zap, with the request_id field on every log line in the HTTP handlers; no fmt.Println.",
        ["zap", "request_id"],
    )
    s.bash(
        "git add -A && git commit -m 'fare: round half-up on NOK->EUR conversion and port tax'",
        "[fix/fare-rounding 3f9c2ab] fare: round half-up on NOK->EUR conversion and port tax\n 5 files changed, "
        "31 insertions(+), 6 deletions(-)",
        desc="Commit the fix",
    )
    s.say("Committed as 3f9c2ab on fix/fare-rounding. The handlers I touched already log via zap with request_id.")
    s.forbid("3f9c2ab", "5 files changed")
    s.stop(ms=412330)
    s.title("Fix NOK->EUR fare rounding in fare-engine")
    s.last_prompt("Last thing, logging: use zap")
    return s


def r2():
    s = Session(
        "r2_harborline_booking_tour",
        CWD,
        "2026-03-09T13:40:00.000Z",
        branch="main",
        version="2.1.321",
        lang="en",
        order=2,
    )
    recalled = [
        (4, "fact", "7 days ago", "Money is int64 minor units everywhere in fare-engine; no float64 amounts"),
        (9, "fact", "7 days ago", "booking-api publishes booking.created.v1 on the BOOKINGS stream after confirmation"),
        (11, "fact", "7 days ago", "Kevin Zhao owns manifest-svc and the coast guard export"),
    ]
    s.snapshot()
    s._env(
        "attachment",
        0.05,
        attachment={
            "type": "hook_additional_context",
            "content": [maple_block(recalled)],
            "hookName": "SessionStart",
            "hookEvent": "SessionStart",
        },
    )
    s.forbid(
        "no float64 amounts",
        "publishes booking.created.v1 on the BOOKINGS stream after confirmation",
        "Kevin Zhao owns manifest-svc",
    )
    s.user(
        "hi! I'm Jonas, started Monday on the booking team. Trying to get my head around how a booking flows from "
        "booking-api to the ticket SMS. Where do I start?"
    )
    s.forbid("started Monday")
    s.grep(
        "Publish\\(",
        "booking-api/internal/outbox/relay.go:58:\t\tif err := r.js.Publish(ctx, ev.Subject, ev.Payload); err != nil {\n"
        'booking-api/internal/outbox/relay_test.go:31:\tjs.Publish(ctx, "test", nil)',
        path="/home/dev/work/harborline/booking-api",
    )
    s.read(
        "/home/dev/work/harborline/booking-api/internal/booking/confirm.go",
        "func (s *Service) Confirm(ctx context.Context, id uuid.UUID) error {\n"
        "\treturn s.db.InTx(ctx, func(q *gen.Queries) error {\n"
        "\t\tif err := q.MarkConfirmed(ctx, id); err != nil {\n\t\t\treturn err\n\t\t}\n"
        "\t\treturn q.InsertOutbox(ctx, gen.InsertOutboxParams{Subject: subjects.BookingCreated, Payload: payload(id)})\n"
        "\t})\n}",
    )
    s.say(
        "Start at `booking-api/internal/booking/confirm.go`. Confirming a booking does two writes in one Postgres "
        "transaction: it marks the booking confirmed and inserts a row into the `outbox` table. A separate relay "
        "(`internal/outbox/relay.go`) polls the outbox every 500 ms, publishes each row to JetStream and marks it "
        "sent. notify-worker is a durable consumer on that stream and sends the SMS."
    )
    s.ok(["outbox"], "explanation of the existing booking -> outbox -> JetStream flow, asked by a newcomer")
    s.user("why an outbox and not just publish right after the commit?")
    s.say(
        "Because the process can die between the commit and the publish. With publish-after-commit you'd get "
        "confirmed bookings that never produce an event, so no ticket SMS. With the outbox the event is committed "
        "together with the booking, and the worst case is a duplicate publish after a crash, which consumers have "
        "to tolerate anyway."
    )
    s.user("makes sense. And which SMS provider are we on? I saw both twilio and messagebird in go.mod")
    s.maple_search(
        "SMS provider notify-worker",
        [
            (12, "decision", "notify-worker sends ticket SMS through Twilio; we already have a Twilio account"),
            (9, "fact", "booking-api publishes booking.created.v1 on the BOOKINGS stream after confirmation"),
        ],
    )
    s.forbid("we already have a Twilio account")
    s.bash(
        "grep -n 'messagebird\\|twilio' notify-worker/go.mod",
        "7:\tgithub.com/twilio/twilio-go v1.20.1\n12:\tgithub.com/messagebird/go-rest-api/v9 v9.1.0 // indirect",
        desc="Check SMS deps",
    )
    s.say("Twilio is the one in use; MessageBird is only an indirect dependency pulled in by an old test helper.")
    s.user("ok cool. how do I run the whole thing locally?")
    s.bash(
        "make e2e",
        "docker compose -f deploy/compose.e2e.yaml up -d\n"
        "Error response from daemon: driver failed programming external connectivity on endpoint harbor-nats "
        "(5c1e...): Bind for 0.0.0.0:4222 failed: port is already allocated\nmake: *** [e2e] Error 1",
        desc="Start the local e2e stack",
        err=True,
    )
    s.say(
        "`make e2e` brings up Postgres, NATS, Redis and all four services with docker compose, but something on your "
        "machine already holds port 4222 (NATS). `lsof -i :4222` will show what; usually a leftover nats-server."
    )
    s.ok(["4222"], "make e2e blocked by a local process on port 4222; left for later (unfixed)")
    s.user("yeah I have another nats running for my side project, I'll kill it later. lunch time, thanks a lot!")
    s.forbid("side project", "lunch time")
    s.say("Enjoy lunch. When you're back: stop that nats-server and rerun `make e2e`.")
    s.stop(ms=98120)
    s.title("Booking flow walkthrough for a new teammate")
    s.last_prompt("yeah I have another nats running")
    return s


RUNBOOK = """# Runbook: Coast Guard manifest export (manifest-svc)

Owner: manifest-svc team (#manifest-oncall). Last reviewed: March 2026.

## Purpose

Every sailing must have its passenger and vehicle manifest filed with the Coast Guard reporting portal (NSW-R)
before departure. manifest-svc builds the manifest from confirmed bookings and check-in scans, seals it, and uploads
it. A sailing without an accepted manifest may not leave the quay; the harbour master can and will hold the ship.

## Timeline per sailing

| T minus | What happens | Who |
|---|---|---|
| T-90 min | Draft manifest built (`manifestctl build --sailing <id>`), visible in the ops console | manifest-svc (cron) |
| T-45 min | Upload of the draft to the portal (status DRAFT_FILED) | manifest-svc |
| T-20 min | Departure lock: check-in closes, manifest is sealed (`MANIFEST_SEAL_MINUTES=20`) | manifest-svc |
| T-15 min | Sealed manifest uploaded; portal answers with a receipt number | manifest-svc |
| T-0 | Departure. Late changes only through amendments | duty officer |

## Pre-checks (T-90 to T-45)

1. `manifestctl status --sailing <id>` must show `draft: ok`, `pax_mismatch: 0`.
2. If `pax_mismatch` is not zero, compare check-in scans with bookings: `manifestctl diff --sailing <id>`.
   Most mismatches are infants booked on a parent's ticket; these are fine once the infant line has a birth date.
3. Vehicles over 6 m need a registration plate in the manifest. Missing plates block the upload; ask the
   check-in desk to scan the vehicle again.
4. Dangerous goods declarations (class 2.1 gas bottles on campers) must be attached before T-45.

## Upload failures

- Portal returns HTTP 503 or times out: manifest-svc retries with backoff for up to 10 minutes on its own. Do
  nothing during that window except watch `manifestctl status`.
- After 10 minutes of failures: run `manifestctl upload --sailing <id> --force-now` once. If that fails too,
  call the Coast Guard duty desk and file by phone; note the reference they read out in the ops console.
- Validation error from the portal (HTTP 422): the response lists the offending lines. Fix the data in
  booking-api (never edit the sealed manifest file by hand) and run `manifestctl rebuild --sailing <id>`. A
  rebuild is only possible before the seal.

## After the seal

The sealed manifest is immutable on our side. Passengers boarding late, no-shows and vehicle swaps are reported as
amendments. Amendments have to be filed within 30 minutes of departure; later than that, the duty officer files a
written deviation report instead.

`manifestctl resend --sailing <id>` re-uploads the sealed file with the same manifest ID. Use it only when the
portal lost our upload (no receipt number after 5 minutes), never to push changes.

## Monitoring

- Grafana dashboard "Manifests / sailing" shows per sailing: draft, sealed, receipt, amendments.
- Alert `ManifestNotSealed` fires at T-18 min if a sailing has no sealed manifest.
- Alert `ManifestNoReceipt` fires at T-5 min if there is no portal receipt.
Both page #manifest-oncall.

## Known quirks

- Sailings that cross midnight are keyed by the departure date in Europe/Oslo, not UTC.
- The portal sandbox resets every Sunday night; test sailings created before that are gone on Monday.
- Receipt numbers are only unique per year; always store them together with the sailing ID.
"""


def r3():
    s = Session(
        "r3_harborline_manifest_cutover",
        CWD,
        "2026-03-17T08:55:00.000Z",
        branch="feat/manifest-amend",
        version="2.1.326",
        lang="en",
        order=3,
    )
    recalled = [
        (11, "fact", "2 weeks ago", "Kevin Zhao owns manifest-svc and the coast guard export"),
        (3, "fact", "2 weeks ago", "fare-engine runs locally with make run-fare on port 8081"),
    ]
    s.snapshot()
    s.user(
        reminder(recalled) + "\nOk, manifest cutover week, standup moved to 10:30 so we have an hour. First: Kev "
        "handed manifest-svc and the coast guard export over when he moved to the payments squad. Priya Nair owns "
        "it now, she's the one to ask."
    )
    s.forbid("Kevin Zhao owns manifest-svc", "on port 8081", "standup moved to 10:30")
    s.fact(
        "preference",
        "en",
        "Priya Nair owns manifest-svc and the coast guard export now (Kev moved to the payments squad).",
        ["Priya Nair"],
        sup=P + "#e9",
    )
    s.say("Got it, Priya for anything manifest-related.")
    s.user("Priya's runbook, read it before we touch the amendment flow:\n\n" + RUNBOOK)
    s.fact(
        "document",
        "en",
        "Runbook: Coast Guard manifest export (manifest-svc) - per-sailing timeline (draft at T-90, "
        "upload T-45, seal T-20), pre-checks with manifestctl, upload failure handling, amendments after the seal, "
        "alerts and portal quirks.",
        ["Coast Guard manifest export", "manifestctl"],
    )
    s.ok(["MANIFEST_SEAL_MINUTES"], "fact inside the runbook: manifest sealed at T-20 min")
    s.ok(["manifestctl resend"], "fact inside the runbook: resend only when the portal lost the upload")
    s.ok(["ManifestNotSealed"], "fact inside the runbook: alert at T-18 min")
    s.ok(["30 minutes of departure"], "fact inside the runbook: amendment deadline")
    s.ok(["Europe/Oslo"], "fact inside the runbook: midnight sailings keyed by Oslo date")
    s.read(
        "/home/dev/work/harborline/manifest-svc/internal/amend/amend.go",
        "package amend\n\n// Amend files late changes for a sealed manifest.\n"
        "func (h *Handler) Amend(ctx context.Context, manifestID string, changes []Change) error {\n"
        '\t// TODO(cutover): implement\n\treturn errors.New("not implemented")\n}',
    )
    s.say(
        "Read it. The runbook says sealed manifests are immutable on our side and late changes go in as amendments, "
        "but it doesn't say what an amendment looks like on the wire. Two ways to implement `Amend`:\n"
        "(a) regenerate the full manifest with the late changes and upload it again under the same manifest ID;\n"
        "(b) send a delta amendment: only ADD/REMOVE passenger and vehicle lines, referencing the original manifest "
        "ID and receipt number.\n(a) is less code since we already have the builder. Which one?"
    )
    s.user(
        "b. the portal rejects a second full upload with a duplicate manifest ID once it's sealed, Priya hit "
        "that in the pilot."
    )
    s.decision(
        "en",
        "manifest-svc files late changes as a delta amendment (ADD/REMOVE lines referencing the original "
        "manifest ID and receipt), not by the option to regenerate the full manifest, because the portal rejects a second "
        "full upload with a duplicate manifest ID once sealed.",
        ["delta amendment"],
        "delta amendment",
        ["regenerate"],
        ["duplicate manifest ID"],
    )
    s.bash(
        "curl -s -o /dev/stderr -w '%{http_code}\\n' -X POST https://sandbox.nsw-r.example/api/amendments "
        "-H @.sandbox-headers -d @testdata/amend_add_pax.xml",
        "<AmendmentResponse><Status>REJECTED</Status><Reason>receiptNumber missing</Reason></AmendmentResponse>\n200",
        desc="Try a sample amendment against the portal sandbox",
    )
    s.say(
        "Note the portal answered HTTP 200 even though it rejected the amendment: the verdict is only in "
        "`<Status>REJECTED</Status>` in the body. So the client must parse the body and treat REJECTED as a failure; "
        "checking the status code alone would silently drop amendments. I'll build it that way, with the receipt "
        "number included."
    )
    s.exp(
        "gotcha",
        "en",
        "The Coast Guard portal answers HTTP 200 even when it rejects an amendment; the verdict is "
        "`<Status>REJECTED</Status>` in the body, so the client must parse the body, not the status code.",
        ["REJECTED"],
    )
    s.edit(
        "/home/dev/work/harborline/manifest-svc/internal/amend/amend.go",
        '\t// TODO(cutover): implement\n\treturn errors.New("not implemented")',
        "\tdoc := buildDelta(manifestID, h.receipts.Get(ctx, manifestID), changes)\n"
        "\tresp, err := h.portal.PostAmendment(ctx, doc)\n\tif err != nil {\n\t\treturn err\n\t}\n"
        '\tif resp.Status != "ACCEPTED" {\n\t\treturn fmt.Errorf("amendment rejected: %s", resp.Reason)\n\t}\n'
        "\treturn nil",
    )
    s.say("Amend now sends the delta with the receipt number and fails unless the body says ACCEPTED.")
    s.user(
        "good. also we moved off zap a few weeks back, the whole repo is on log/slog with the JSON handler now. "
        "Don't add zap imports back; if you see any leftovers, convert them."
    )
    s.fact(
        "convention",
        "en",
        "The repo moved off zap: logging is log/slog with the JSON handler; no zap imports.",
        ["slog"],
        sup=P + "#e13",
    )
    s.bash(
        "grep -rln 'go.uber.org/zap' --include=*.go .",
        "./manifest-svc/internal/amend/log.go",
        desc="Find leftover zap imports",
    )
    s.edit(
        "/home/dev/work/harborline/manifest-svc/internal/amend/log.go",
        "var log = zap.L().Sugar()",
        'var log = slog.Default().With("component", "amend")',
    )
    s.say("That was the only leftover; amend/log.go uses slog now.")
    s.user(
        "Couple of things changed since the rounding work. Actually fare-engine is on 8092 now, the grpc gateway "
        "took over its old port. And scratch what we had for the webhook idempotency TTL: IDEMP_TTL=72h, Stripe "
        "keeps retrying webhooks for up to 3 days."
    )
    s.fact(
        "config",
        "en",
        "fare-engine now listens on port 8092 locally (the grpc gateway took its old port).",
        ["8092"],
        sup=P + "#e1",
    )
    s.fact(
        "config",
        "en",
        "Stripe webhook idempotency keys: IDEMP_TTL=72h, because Stripe retries webhooks for up to 3 days.",
        ["72h"],
        sup=P + "#e12",
    )
    s.say("Updated `.env.example` for both. The IDEMP_TTL default in webhook.go now matches too.")
    s.user(
        "And we renamed the JetStream subject: bookings go out as harbor.booking.created now. The version moved "
        "into a header (Harbor-Schema: 1) instead of the subject name."
    )
    s.fact(
        "config",
        "en",
        "Confirmed bookings are published on the JetStream subject `harbor.booking.created`; the "
        "schema version is a header (Harbor-Schema: 1), not part of the subject.",
        ["harbor.booking.created"],
        sup=P + "#e10",
    )
    s.say("OK. manifest-svc subscribes by constant, so only `subjects.go` needs the new name.")
    s.user(
        "one more rule for everything consuming harbor.booking.created: handlers must be idempotent on booking_id. "
        "JetStream redelivers whatever isn't acked within AckWait (30s), so you will see the same booking twice."
    )
    s.fact(
        "constraint",
        "en",
        "Every consumer of harbor.booking.created must be idempotent on booking_id; JetStream "
        "redelivers messages not acked within AckWait (30s).",
        ["booking_id"],
    )
    s.say("manifest-svc's consumer upserts on booking_id already; I'll keep that in the amendment path too.")
    s.user(
        "Different topic. Twilio's alphanumeric sender got blocked by Telenor for us last week, half of Norway "
        "didn't get tickets. So we're switching SMS to MessageBird. MessageBird key is "
        "live_k3Jf8QwRz1pXv7NbT2yLc9Hd, sketch the adapter behind the existing Sender interface."
    )
    s.secret("live_k3Jf8QwRz1pXv7NbT2yLc9Hd")
    s.decision(
        "en",
        "Ticket SMS switch from Twilio to MessageBird, because Telenor blocked our Twilio alphanumeric sender.",
        ["MessageBird"],
        "MessageBird",
        ["Twilio"],
        ["Telenor"],
        sup=P + "#e11",
    )
    s.say(
        "I won't put the key in any file; add it to Secret Manager as `sms-messagebird-key` and I'll read it from "
        "there. Adapter sketch in sms/messagebird.go implements `Sender` with the REST API and maps delivery "
        "reports onto our existing status enum."
    )
    s.user(
        "and for fare-engine money: every amount column gets a sibling currency column with the ISO 4217 code, "
        "e.g. total_minor + total_currency. thanks, that's it for today"
    )
    s.fact(
        "convention",
        "en",
        "Every money amount column in fare-engine gets a sibling currency column with the ISO "
        "4217 code (total_minor + total_currency).",
        ["ISO 4217"],
    )
    s.forbid("that's it for today")
    s.say(
        "Noted. fares already has base_minor + currency; I'll rename currency to base_currency in the next migration "
        "so it follows the pattern."
    )
    s.stop(ms=611004)
    s.title("Manifest amendments for the cutover")
    s.last_prompt("and for fare-engine money")
    return s


SESSIONS = [r1, r2, r3]
