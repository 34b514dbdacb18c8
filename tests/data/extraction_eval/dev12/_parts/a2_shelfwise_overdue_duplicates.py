"""a2 — shelfwise, session 2 of 3, English: duplicate overdue e-mails."""
from _lib import Session

NAME = "a2_shelfwise_overdue_duplicates"
CWD = "/home/dev/work/shelfwise"
TOKEN = "7c4e91b2-5a3f-4d8e-b6a1-93f0d2c8e715"


def build():
    s = Session(NAME, CWD, "fix/overdue-dupes", "2026-04-09T13:40:00Z")
    s.snapshot()
    s.recall_attachment("SessionStart", [
        (14, "fact", "config", "circulation-api runs locally with `pnpm dev:circ` and listens on port 3004."),
        (17, "decision", "decision", "Holds past the pickup window are expired by a repeatable sweep job in holds-worker "
                                     "(every 15 minutes), chosen over BullMQ delayed jobs."),
    ])
    s.user("morning! two patrons complained they got the overdue notice twice this morning, identical emails both "
           "around 6:30. overdue-notifier is Tommy's baby (Tom Brandt) but hes out till thursday. can you dig in?")
    s.say("First thing I'd rule out is Postmark itself: if our send call timed out and the client retried, Postmark "
          "would accept the same message twice and it would look exactly like this. I can check the Postmark outbound "
          "messages API for one of the recipients — I'll need the server token for that.")
    s.user("sure: X-Postmark-Server-Token: " + TOKEN + "   (obviously dont commit it anywhere)", dt_s=60)
    s.bash("curl -s 'https://api.postmarkapp.com/messages/outbound?recipient=j.alvarez%40example.org&count=10&offset=0' "
           "-H 'Accept: application/json' -H 'X-Postmark-Server-Token: " + TOKEN + "' | jq '.Messages[] | "
           "{MessageID, ReceivedAt, Subject, Metadata}'", "List Postmark sends for one recipient",
           '{\n  "MessageID": "b1d3f0a2-8c1e-4f55-a0e3-6c9b2d7e4f10",\n  "ReceivedAt": "2026-04-09T06:30:02.4471-05:00",\n'
           '  "Subject": "Items overdue at Shelfwise Public Library",\n  "Metadata": { "run_id": "od-0409-7f2a" }\n}\n'
           '{\n  "MessageID": "e7a9c4d1-2b6f-4a80-9d12-0f3e5b8c6a27",\n  "ReceivedAt": "2026-04-09T06:30:03.0128-05:00",\n'
           '  "Subject": "Items overdue at Shelfwise Public Library",\n  "Metadata": { "run_id": "od-0409-c91e" }\n}')
    s.say("Postmark isn't retrying: these are two distinct MessageIDs a second apart, and the `run_id` metadata "
          "differs, so two separate notifier runs each sent a message. Checking how many of those ran.")
    s.bash("kubectl -n circ get deploy overdue-notifier -o jsonpath='{.spec.replicas}'; echo; "
           "kubectl -n circ logs -l app=overdue-notifier --since=8h --prefix | grep 'overdue run started'",
           "Check replica count and run logs",
           "2\n[pod/overdue-notifier-6b7f9c-2xkqp/app] 2026-04-09T11:30:00.012Z overdue run started run_id=od-0409-7f2a\n"
           "[pod/overdue-notifier-6b7f9c-w8d4n/app] 2026-04-09T11:30:00.019Z overdue run started run_id=od-0409-c91e")
    s.bash("git log -3 --format='%h %an %s' -- k8s/overdue-notifier/", "Who changed the deployment",
           "9e41c07 Priya Raman bump overdue-notifier to 2 replicas (HPA minReplicas 2)\n"
           "1a2b3c4 Tom Brandt overdue-notifier: postmark metadata run_id\n5d6e7f8 Tom Brandt initial overdue-notifier")
    s.say("Root cause: overdue-notifier was bumped to 2 replicas last week (HPA minReplicas 2), and the overdue job is "
          "scheduled with node-cron inside the service (`30 6 * * *`, TZ America/Chicago). Every pod runs its own "
          "node-cron, so every pod sends the whole batch.\n\nOptions:\n"
          "1. move the run out into a Kubernetes CronJob (`concurrencyPolicy: Forbid`) and delete node-cron from the service\n"
          "2. keep node-cron but take a Redis lock (`SET NX PX`) so only one pod runs per day\n"
          "3. pin the deployment to 1 replica")
    s.user("1. we wanted that out of the long running service anyway", dt_s=70)
    s.write("/home/dev/work/shelfwise/k8s/overdue-notifier/cronjob.yaml",
            "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: overdue-notices\n  namespace: circ\nspec:\n"
            "  schedule: \"30 6 * * *\"\n  timeZone: \"America/Chicago\"\n  concurrencyPolicy: Forbid\n"
            "  jobTemplate:\n    spec:\n      backoffLimit: 1\n      template:\n        spec:\n          containers:\n"
            "            - name: overdue\n              image: registry.shelfwise.internal/overdue-notifier:latest\n"
            "              args: [\"node\", \"dist/run-once.js\"]\n")
    s.bash("kubectl apply --dry-run=server -f k8s/overdue-notifier/cronjob.yaml", "Validate the CronJob",
           "The CronJob \"overdue-notices\" is invalid: spec.jobTemplate.spec.template.spec.restartPolicy: "
           "Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"", is_error=True)
    s.say("Jobs can't use the pod default `restartPolicy: Always`; it has to be set explicitly. Adding "
          "`restartPolicy: OnFailure`.")
    s.edit("/home/dev/work/shelfwise/k8s/overdue-notifier/cronjob.yaml",
           "        spec:\n          containers:", "        spec:\n          restartPolicy: OnFailure\n          containers:")
    s.bash("kubectl apply --dry-run=server -f k8s/overdue-notifier/cronjob.yaml", "Validate again",
           "cronjob.batch/overdue-notices created (server dry run)")
    s.edit("/home/dev/work/shelfwise/apps/overdue-notifier/src/main.ts",
           "  cron.schedule('30 6 * * *', () => runOverdue(), { timezone: 'America/Chicago' });\n", "")
    s.user("q while that runs, whats the difference between concurrencyPolicy Forbid and Replace again", dt_s=45)
    s.say("With `Forbid`, if the previous run is still going when the next schedule fires, the new run is skipped. "
          "`Replace` cancels the currently running job and starts the new one. For a once-a-day mailer Forbid is the "
          "safe one: a slow run never gets killed halfway through a batch.")
    s.user("k. also a rule for notices since youre touching them: overdue emails never include the title of the item. "
           "patron borrowing records are confidential under state law, so only the barcode last 4 + due date. from now "
           "on every notice template works that way, holds-ready too", dt_s=80)
    s.read("/home/dev/work/shelfwise/apps/overdue-notifier/templates/overdue.mjml",
           "<mj-text>Hi {{patron.firstName}},</mj-text>\n<mj-text>The following items are overdue:</mj-text>\n"
           "{{#each items}}\n<mj-text>{{this.title}} \u2014 due {{formatDate this.dueAt}}</mj-text>\n{{/each}}")
    s.edit("/home/dev/work/shelfwise/apps/overdue-notifier/templates/overdue.mjml",
           "<mj-text>{{this.title}} \u2014 due {{formatDate this.dueAt}}</mj-text>",
           "<mj-text>Item ending \u2026{{last4 this.barcode}} \u2014 due {{formatDate this.dueAt}}</mj-text>")
    s.bash("grep -rln 'this.title' apps/*/templates/", "Find other templates that print titles",
           "apps/circulation-api/templates/hold-ready.mjml")
    s.edit("/home/dev/work/shelfwise/apps/circulation-api/templates/hold-ready.mjml",
           "<mj-text>{{this.title}} is ready for pickup</mj-text>",
           "<mj-text>Item ending \u2026{{last4 this.barcode}} is ready for pickup</mj-text>")
    s.user("nice. ugh the book sale is saturday and we are drowning in donated Reader's Digests. anyway — remind me to "
           "tell Tommy about the replica thing when hes back", dt_s=60)
    s.say("Will do — I'll mention it in the PR description so it's there when Tom is back. Summary:\n"
          "- duplicate notices came from 2 replicas each running node-cron\n"
          "- overdue run is now the `overdue-notices` CronJob (06:30 America/Chicago, Forbid)\n"
          "- overdue and hold-ready templates show barcode last 4 + due date, no titles")
    s.stop_hook()
    s.title("Stop duplicate overdue notices")

    gold = {
        "session": NAME, "project": CWD, "order": 2, "language": "en",
        "expected": [
            {"id": "e1", "layer": "fact", "kind": "preference", "lang": "en",
             "text": "Tom Brandt (Tommy) owns overdue-notifier.", "must": ["Tom Brandt"]},
            {"id": "e2", "layer": "fact", "kind": "config", "lang": "en",
             "text": "Overdue notices go out once a day at 06:30 America/Chicago (cron `30 6 * * *`).",
             "must": ["30 6 * * *", "America/Chicago"]},
            {"id": "e3", "layer": "experience", "kind": "root_cause", "lang": "en",
             "text": "Patrons got duplicate overdue emails because overdue-notifier was scaled to 2 replicas and every pod "
                     "ran its own node-cron schedule; Postmark was ruled out (two distinct MessageIDs with different run_id).",
             "must": ["replicas", "node-cron"]},
            {"id": "e4", "layer": "decision", "kind": "decision", "lang": "en",
             "text": "The overdue run moved out of the service into a Kubernetes CronJob `overdue-notices` with "
                     "concurrencyPolicy: Forbid (option 1), over a Redis lock around node-cron or pinning 1 replica, "
                     "because the team wanted it out of the long running service anyway.",
             "must": ["CronJob", "concurrencyPolicy: Forbid"], "chosen": "CronJob", "over": ["Redis lock"],
             "why": ["long running service"]},
            {"id": "e5", "layer": "experience", "kind": "fix", "lang": "en",
             "text": "The CronJob failed validation with 'restartPolicy: Unsupported value: \"Always\"'; Job pod templates "
                     "need restartPolicy: OnFailure (or Never) set explicitly.",
             "must": ["restartPolicy"]},
            {"id": "e6", "layer": "fact", "kind": "constraint", "lang": "en",
             "text": "Patron notices (overdue, hold-ready, every template) never include the item title — borrowing records "
                     "are confidential under state law; show only the barcode last 4 and the due date.",
             "must": ["last 4", "confidential"]},
        ],
        "acceptable": [
            {"must": ["Postmark isn't retrying"], "note": "Postmark ruled out as the cause"},
            {"must": ["tell Tommy"], "note": "personal reminder"},
        ],
        "forbidden": ["listens on port 3004", "expired by a repeatable sweep job", "Reader's Digest",
                      "Replace` cancels the currently running job", "j.alvarez", "od-0409-7f2a", "9e41c07"],
        "secrets": [TOKEN],
    }
    return s, gold
