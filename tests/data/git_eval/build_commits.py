#!/usr/bin/env python3
"""Builds commits.json: fictional repositories' commit messages, labelled.

Each commit is written oldest-first below; the output lists each repository
newest-first, like `git log`. SHAs and dates are derived deterministically.
A keep=true commit carries its kind, `must` (substrings a memory kept from it
must contain, compared case-insensitively) and `why` (a substring of the
reason the message itself gives, or empty when it gives none).
Run: python3 build_commits.py  (writes commits.json next to this file)
"""
import datetime as dt
import hashlib
import json
import os
import random
import textwrap

REPOS = []


def C(author, msg, kind=None, must=(), why=(), ref=None, label=None):
    head, *trailers = msg.split("\x00")
    msg = textwrap.dedent(head).strip("\n")
    for name in trailers:
        msg += "\n\nSigned-off-by: " + name
    return {"author": author, "message": msg, "kind": kind or "none",
            "must": list(must), "why": list(why), "ref": ref, "label": label}


def repo(name, start, tz, commits, seed):
    REPOS.append((name, start, tz, commits, seed))


# ---------------------------------------------------------------- ledgerline
# Billing service, TypeScript; conventional commits, renovate, semantic-release.
A1 = "Mira Okonkwo <mira@ledgerline.dev>"
A2 = "Tobias Kern <tobias.kern@ledgerline.dev>"
A3 = "Sanjay Iyer <sanjay@ledgerline.dev>"
A4 = "Chloe Martin <chloe@ledgerline.dev>"
REN = "renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>"
SRB = "semantic-release-bot <semantic-release-bot@martynus.net>"

repo("ledgerline", "2024-01-08T09:12:00", {A1: "+01:00", A2: "+01:00", A3: "+05:30", A4: "+01:00", REN: "+00:00", SRB: "+00:00"}, [
    C(A2, """
        feat(billing): add proration preview endpoint

        GET /v2/subscriptions/:id/proration-preview returns what the next invoice
        would look like if the plan changed today.

        Refs: LL-118
    """),
    C(REN, """
        chore(deps): update dependency typescript to v5.3.3

        This PR contains the following updates:

        | Package | Change |
        |---|---|
        | typescript | `5.3.2` -> `5.3.3` |

        ---
        ### Configuration
        📅 **Schedule**: Branch creation - "before 6am on monday" in timezone Europe/Berlin.
        🚦 **Automerge**: Enabled.
    """),
    C(A3, """
        fix(invoices): round line totals half-even

        Stripe rounds tax lines half-to-even, we did Math.round (half-up), so
        about 0.3% of EU invoices were off by one cent against the Stripe
        receipt and finance had to reconcile them by hand.

        Anything that ends up on an invoice goes through roundHalfEven() in
        src/money.ts. Don't use Math.round / toFixed on money, ever.

        Closes #211
    """, "convention", must=["roundHalfEven"], why=["Stripe rounds tax lines half-to-even"]),
    C(A3, "test(billing): cover zero-amount invoices"),
    C(A1, """
        feat(api): require Idempotency-Key on POST /charges

        The load balancer returns 502 on slow upstreams and most client SDKs retry
        on 502, which double-charged two customers last month (INC-2291).

        - key is required, 400 without it
        - stored in redis for 24h with the response; a replay within 24h gets the
          stored response, after that it is treated as a new request
        - same key + different body -> 422

        Co-authored-by: Tobias Kern <tobias.kern@ledgerline.dev>
    """, "decision", must=["Idempotency-Key", "24h"], why=["double-charged"]),
    C(A2, "refactor(billing): extract TaxCalculator from InvoiceBuilder"),
    C(A4, "chore: fix lint"),
    C(A4, """
        fix(webhooks): verify stripe signature against the raw body

        express.json() ran before our verify step, so we were hashing the
        re-serialised JSON and the signature never matched in prod (locally
        stripe-cli forwards with the same whitespace, which is why nobody saw it).

        The webhook router has to be mounted BEFORE app.use(express.json()) and
        use express.raw({type: 'application/json'}). There's a comment in app.ts
        now, please don't reorder the middleware.
    """, "gotcha", must=["express.raw"], why=["signature never matched"]),
    C(SRB, """
        chore(release): 1.14.0 [skip ci]

        # [1.14.0](https://github.com/ledgerline/ledgerline/compare/v1.13.2...v1.14.0) (2024-01-19)

        ### Bug Fixes

        * **invoices:** round line totals half-even ([#211](https://github.com/ledgerline/ledgerline/issues/211))
        * **webhooks:** verify stripe signature against the raw body

        ### Features

        * **api:** require Idempotency-Key on POST /charges
        * **billing:** add proration preview endpoint
    """),
    C(A4, "docs: update README badges"),
    C(A1, """
        feat(dunning): retry failed payments on day 1, 3 and 7

        Schedule agreed with finance (Mira + Jens, 2024-01-24): after the day-7
        attempt fails the subscription moves to past_due, NOT canceled.
        Cancelling stays a manual decision by the account owner.
    """, "decision", must=["past_due"], why=["agreed with finance"]),
    C(REN, """
        chore(deps): update dependency @types/node to v20.11.5

        This PR contains the following updates:

        | Package | Change |
        |---|---|
        | @types/node | `20.11.0` -> `20.11.5` |
    """),
    C(A4, "fix: typo in dunning email template"),
    C(A2, """
        perf(invoices): batch line item inserts

        one INSERT per invoice instead of one per line
    """, label="batch1"),
    C(A2, """
        Revert "perf(invoices): batch line item inserts"

        This reverts commit {REF}.
    """, ref="batch1"),
    C(A2, """
        perf(invoices): batch line item inserts, take 2

        The first attempt built a single multi-row INSERT. Enterprise invoices
        with >6k lines x 11 columns blew past Postgres' limit of 65535 bind
        parameters per statement and the whole invoice run failed.

        Now chunked at 5000 rows. If you add columns to invoice_lines, lower
        LINE_CHUNK accordingly (rows * cols must stay < 65535).
    """, "gotcha", must=["65535"], why=["blew past Postgres' limit"]),
    C(A1, """
        feat(api)!: money amounts are integers in minor units

        Decimal strings ("12.30") ended up parsed into JS floats by basically every
        client we looked at, and then summed. Integers in the currency's minor unit
        (cents; yen has exponent 0) can't be misused that way.

        BREAKING CHANGE: every `amount` / `*_amount` field in /v2 is now an integer
        in minor units, with `currency` next to it. /v1 keeps decimal strings until
        it is retired.

        Closes #198
    """, "decision", must=["minor unit"], why=["parsed into JS floats"]),
    C(A4, "ci: cache pnpm store between jobs"),
    C(A3, """
        fix(ci): pin node to 20.11 in the test matrix

        20.12 changed how --experimental-vm-modules resolves and jest 29's ESM
        mode can't find our .ts mappers any more. Pin until we are on jest 30;
        don't "fix" the matrix back to `20.x`.
    """, "gotcha", must=["20.11"], why=["--experimental-vm-modules"]),
    C(SRB, """
        chore(release): 2.0.0 [skip ci]

        # [2.0.0](https://github.com/ledgerline/ledgerline/compare/v1.14.0...v2.0.0) (2024-02-06)

        ### Features

        * **api:** money amounts are integers in minor units ([#198](https://github.com/ledgerline/ledgerline/issues/198))
        * **dunning:** retry failed payments on day 1, 3 and 7

        ### BREAKING CHANGES

        * **api:** see the commit
    """),
    C(A3, """
        feat(tax): reverse charge for EU B2B

        - `reverse_charge` flag on customer
        - invoice PDF prints the legal note
        - tests for DE/FR/NL
    """),
    C(A3, """
        fix(tax): don't block checkout on VIES

        VIES (the EU VAT-number service) is down or timing out most weekday
        evenings CET. Checkout now accepts the VAT ID, stores vat_verified=false
        and the nightly job re-checks it. Never make a user-facing request wait on
        VIES.
    """, "gotcha", must=["VIES", "vat_verified"], why=["down or timing out"]),
    C(A4, "style: prettier"),
    C(REN, """
        chore(deps): update all non-major dependencies

        | Package | Change |
        |---|---|
        | eslint | `8.56.0` -> `8.57.0` |
        | pino | `8.17.2` -> `8.19.0` |
        | zod | `3.22.4` -> `3.22.5` |
    """),
    C(A2, "refactor(api): move handlers into per-resource modules"),
    C(A4, "fix(billing): handle customers without a default payment method"),
    C(A1, """
        docs(adr): ADR-007 balances come from the ledger

        Account balances are always computed from ledger_entries. accounts.balance
        is dropped in the next migration. We had three incidents where the cached
        column drifted from the sum of entries (double-applied refunds, a retried
        job) and nobody could tell which one was right.
    """, "decision", must=["ledger_entries"], why=["drifted"]),
    C(A1, """
        feat(db): migration 0042 drops accounts.balance

        Deploy order matters: run `pnpm db:backfill-ledger` against the target
        database BEFORE deploying this. The migration checks that every account
        has an opening ledger entry and refuses to run otherwise.
    """, "migration", must=["db:backfill-ledger"], why=["refuses to run otherwise"]),
    C(A3, """
        test: fix flaky invoice date test

        The fixture used new Date(), so the test failed every night between 23:00
        and 00:00 UTC (Berlin is already on the next day). Billing tests must use
        the frozen clock from test/clock.ts, never the real one.
    """, "convention", must=["test/clock.ts"], why=["between 23:00"]),
    C(A2, "chore: wip"),
    C(A2, """
        feat(reports): monthly revenue export

        CSV per month, grouped by plan and currency
    """),
    C(A2, "fixup! feat(reports): monthly revenue export"),
    C(A4, """
        fix(reports): revenue CSV opens garbled in Excel

        Excel on Windows assumes ANSI for CSV unless the file starts with a UTF-8
        BOM, so every "é" and "ü" in customer names came out as mojibake for
        finance. All CSVs we hand to humans get the \\uFEFF prefix (csvForHumans()).
    """, "gotcha", must=["BOM"], why=["Excel on Windows assumes ANSI"]),
    C(REN, """
        chore(deps): update dependency pg to v8.11.5

        | Package | Change |
        |---|---|
        | pg | `8.11.3` -> `8.11.5` |
    """),
    C(A3, "feat(auth): API key rotation with a 7 day overlap window"),
    C(A4, """
        fix(security): stop logging request bodies on payment routes

        pino logged full request bodies at debug, debug is on in staging, and
        staging is restored from prod weekly, so card fingerprints and billing
        addresses were sitting in our log provider.

        - redact list in logger.ts covers card.*, billing_address.*, iban
        - body logging is off on every /charges and /payment-methods route
          regardless of level

        Signed-off-by: Chloe Martin <chloe@ledgerline.dev>
    """, "security", must=["logger.ts"], why=["card fingerprints"]),
    C(A2, "refactor: rename chargeSvc -> chargeService"),
    C(A2, "Merge branch 'main' into feat/usage-metering"),
    C(A2, """
        feat(metering): ingest usage events from kafka

        topic usage.events.v1, one consumer group per env
    """),
    C(A2, """
        fix(metering): dedupe usage events

        Kafka delivery is at-least-once and the producer retries on timeout, so
        duplicates are expected, not a bug upstream. Consumers have to be
        idempotent: unique index on (customer_id, event_id) and
        INSERT ... ON CONFLICT DO NOTHING. Same rule for any new consumer.
    """, "convention", must=["event_id", "ON CONFLICT DO NOTHING"], why=["at-least-once"]),
    C(SRB, """
        chore(release): 2.1.0 [skip ci]

        ### Features

        * **metering:** ingest usage events from kafka
        * **reports:** monthly revenue export
        * **auth:** API key rotation with a 7 day overlap window
    """),
    C(A3, "address review comments"),
    C(A1, "fix(dunning): don't send reminder mails to churned customers"),
    C(A1, """
        feat(api): Sunset header on all /v1 routes

        /v1 is removed on 2025-03-31. Announced in the changelog and mailed to
        the 14 integrators still calling it. Don't add new /v1 endpoints or
        fields; everything new goes to /v2.
    """, "deprecation", must=["/v1", "2025-03-31"]),
    C(REN, """
        chore(deps): update dependency express to v4.19.2 [security]

        This PR contains the following updates:

        | Package | Change |
        |---|---|
        | express | `4.18.2` -> `4.19.2` |

        ### GitHub Vulnerability Alerts

        #### [CVE-2024-29041](https://nvd.nist.gov/vuln/detail/CVE-2024-29041)

        Versions of Express.js prior to 4.19.2 ... open redirect in malformed URLs.
    """),
    C(A4, "docs: fix typo in CONTRIBUTING"),
    C(A3, "test(metering): k6 load test script"),
    C(A2, """
        fix(metering): raise consumer session timeout

        CI is slow this week, bumping to 45s for now
    """),
], seed=11)

# -------------------------------------------------------------- harbor-infra
# Terraform / Kubernetes infra repo, free-form messages, Signed-off-by.
B1 = "Jon Abernathy <jon@harbor.io>"
B2 = "Ilse Vermeulen <ilse@harbor.io>"
B3 = "Dev Patel <dev.patel@harbor.io>"
B4 = "Marta Nowak <marta@harbor.io>"
BREN = "renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>"


def so(name):
    return "\x00" + name


repo("harbor-infra", "2023-09-04T08:03:00", {B1: "-05:00", B2: "+02:00", B3: "+01:00", B4: "+02:00", BREN: "+00:00"}, [
    C(B1, "initial terraform layout"),
    C(B1, "add eks module for staging + prod"),
    C(B3, "bump node group to m6i.xlarge"),
    C(B2, """
        Move terraform state to S3 with a DynamoDB lock

        Local state bit us twice: Jon's laptop had a stale copy and an apply went
        out over prod with it. Nobody runs apply with local state any more; every
        stack needs a backend.tf and CI rejects plans without one.
    """ + so(B2), "convention", must=["backend.tf"], why=["stale copy"]),
    C(B3, "fmt"),
    C(B3, "Add ingress-nginx"),
    C(B2, """
        Pin ingress-nginx chart to 4.7.x

        4.8 flips allow-snippet-annotations to false by default and about half of
        our ingresses still use configuration-snippet. Stay on 4.7 until those are
        migrated to proper annotations (tracked in INFRA-88).
    """ + so(B2), "gotcha", must=["allow-snippet-annotations"], why=["configuration-snippet"]),
    C(B1, "tweak alerts"),
    C(B4, "PagerDuty: route disk alerts to infra-oncall"),
    C(B2, """
        Disable autoscaler scale-down on the kafka node group

        cluster-autoscaler drained a broker in the middle of a partition
        rebalance and we were under min ISR for ~20 minutes (producers with
        acks=all just stalled). Kafka nodes are now min=max=3 with the
        scale-down-disabled annotation. Scale them by hand, after a partition
        reassignment.
    """ + so(B2), "decision", must=["kafka", "scale-down"], why=["min ISR"]),
    C(B3, "typo"),
    C(B3, "wip: karpenter", label="karp"),
    C(B3, "wip"),
    C(B3, """
        Revert "wip: karpenter"

        This reverts commit {REF}.
    """, ref="karp"),
    C(B4, "rds: enable performance insights"),
    C(B4, """
        rds: set max_connections in the parameter group

        pgbouncer's pools (default_pool_size=40 x 6 api pods = 240) must stay
        under max_connections minus ~10 that we keep for superuser/maintenance
        sessions. If you scale the api deployment up, raise max_connections in
        the same PR or the new pods will sit waiting on pgbouncer.
    """ + so(B4), "gotcha", must=["pgbouncer", "max_connections"], why=["superuser"]),
    C(B4, "Merge branch 'rds-tuning'"),
    C(BREN, """
        chore(deps): update terraform aws to v5.22.0

        | Package | Type | Update | Change |
        |---|---|---|---|
        | aws (source) | required_provider | minor | `5.17.0` -> `5.22.0` |
    """),
    C(B1, "Rotate the staging TLS cert"),
    C(B2, """
        cert-manager: DNS-01 for *.internal

        HTTP-01 cannot work for internal-only hosts, there is nothing public to
        answer the challenge. The Route53 role cert-manager assumes is scoped to
        the internal hosted zone only.
    """, "decision", must=["DNS-01"], why=["internal-only hosts"]),
    C(B3, "bump argo-cd 2.9.3 -> 2.9.6"),
    C(B1, """
        argocd: turn off auto-sync for prod

        Auto-sync picked up a bad image tag on 14 Feb and checkout was down for
        11 minutes before anyone looked. Prod apps sync manually from now on
        (someone clicks sync after checking the diff); staging keeps auto-sync.
    """ + so(B1), "decision", must=["auto-sync", "prod"], why=["checkout was down"]),
    C(B4, "fix dashboards"),
    C(B4, "grafana: SLO panel for checkout"),
    C(B2, """
        Remove the bastion host

        Everyone is on SSM Session Manager now. Port 22 is closed in every
        security group and stays closed: use `aws ssm start-session`, don't add
        an SSH rule "just for a minute".
    """ + so(B2), "security", must=["Session Manager", "22"]),
    C(B3, """
        More memory for prometheus

        OOMKilled again
    """),
    C(B3, """
        prometheus: retention 15d -> 7d, remote write to mimir

        Local TSDB hit 400GB and compaction stalled for hours, alerts went stale
        with it. Long range queries go to mimir; local prometheus only has to
        hold enough for alert rules.
    """, "decision", must=["mimir"], why=["compaction stalled"]),
    C(B4, "Merge pull request #212 from harbor/fix-sg\n\nsg cleanup"),
    C(B4, "sg cleanup, part 2"),
    C(B1, """
        Use gp3 for all new EBS volumes

        gp3 is about 20% cheaper than gp2 for the same baseline and IOPS don't
        depend on volume size. Existing gp2 volumes get converted when someone
        touches the stack anyway, no big bang.
    """, "convention", must=["gp3"], why=["20% cheaper"]),
    C(B3, "fix ci"),
    C(B3, "tflint fixes"),
    C(B1, "Add renovate config"),
    C(BREN, """
        chore(deps): update terraform aws to v5.31.0

        | Package | Type | Update | Change |
        |---|---|---|---|
        | aws (source) | required_provider | minor | `5.22.0` -> `5.31.0` |
    """),
    C(B2, """
        nodes: set maxPods explicitly on bottlerocket nodes

        With VPC CNI prefix delegation on, the ENI-based pod limit no longer
        applies, but bottlerocket doesn't know that: unless max-pods is set in
        the node settings, kubelet falls back to the ENI-based limit (29 on
        m6i.xlarge) and pods sit Pending with free CPU. Set 110 in the launch
        template for every node group that uses prefix delegation.
    """ + so(B2), "gotcha", must=["prefix delegation", "max-pods"], why=["falls back to the ENI-based limit"]),
    C(B4, "update runbook links"),
    C(B3, "argocd: enable auto-sync for prod-eu", label="autosync"),
    C(B1, """
        Revert "argocd: enable auto-sync for prod-eu"

        This reverts commit {REF}.

        Same reason as February: prod syncs stay manual. This came in by copying
        the staging Application manifest; prod-eu counts as prod.
    """ + so(B1), "revert", ref="autosync", must=["auto-sync", "prod-eu"], why=["prod syncs stay manual"]),
    C(B2, """
        k8s: PodDisruptionBudgets for everything with >1 replica

        Node drains during the 1.28 upgrade evicted both payments-api replicas at
        once. Rule from now on: every Deployment with replicas > 1 gets a PDB with
        maxUnavailable: 1. The kyverno policy require-pdb enforces it in
        staging and prod.
    """ + so(B2), "convention", must=["PDB", "maxUnavailable"], why=["evicted both payments-api replicas"]),
    C(B1, "eks 1.28 -> 1.29"),
    C(B3, "lint"),
    C(B4, "Update README"),
    C(B2, """
        s3: block public access account-wide

        Static assets are served through CloudFront with origin access control,
        so no bucket needs a public ACL or policy. If something "needs" a public
        bucket it needs a CloudFront behaviour instead.
    """ + so(B2), "security", must=["CloudFront"], why=["no bucket needs a public ACL"]),
    C(B3, "Merge branch 'main' of github.com:harbor/infra"),
    C(B4, "redis: elasticache 6.2 -> 7.1"),
    C(B3, "Fix the thing from yesterday"),
    C(B1, "velero: nightly backups, 30d retention"),
    C(B3, """
        bump coredns replicas to 3

        was 2, looked tight in the dashboards
    """),
], seed=22)

# ---------------------------------------------------------------- pantry-web
# Next.js app; squash-merged PR titles with bullet bodies, dependabot, merges.
P1 = "Hana Sato <hana@pantry.app>"
P2 = "Leo Brandt <leo@pantry.app>"
P3 = "Ama Mensah <ama@pantry.app>"
P4 = "Ruth Cohen <ruth@pantry.app>"
DEP = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"


def dep(pkg, a, b, pr, extra=""):
    extra = extra.replace("\n", "\n        ")
    return C(DEP, f"""
        Bump {pkg} from {a} to {b} (#{pr})

        Bumps [{pkg}](https://github.com/{pkg}) from {a} to {b}.
        - [Release notes](https://github.com/{pkg}/releases)
        - [Changelog](https://github.com/{pkg}/blob/main/CHANGELOG.md)
        - [Commits](https://github.com/{pkg}/compare/v{a}...v{b})
        {extra}
        ---
        updated-dependencies:
        - dependency-name: {pkg}
          dependency-type: direct:production
          update-type: version-update:semver-patch
        ...

        Signed-off-by: dependabot[bot] <support@github.com>
    """)


repo("pantry-web", "2023-05-15T10:30:00", {P1: "+09:00", P2: "+02:00", P3: "+00:00", P4: "-04:00", DEP: "+00:00"}, [
    C(P1, """
        Set up Next.js app router skeleton (#1)

        * next 13.4, app dir
        * eslint + prettier
        * github actions for lint/test
    """),
    C(P2, """
        Add recipe list page (#4)

        * list page
        * fetch from api
        * loading skeleton
    """),
    dep("next", "13.4.1", "13.4.4", 7),
    C(P1, """
        Auth with next-auth (#9)

        * google + email magic link
        * sessions are JWT, not the database adapter: middleware runs on the edge
          runtime and has no database connection to check a session with
        * `session.user.id` is typed in types/next-auth.d.ts

        Co-authored-by: Leo Brandt <leo@pantry.app>
    """, "decision", must=["JWT"], why=["has no database connection"]),
    C(P3, "fix lint (#10)"),
    C(P2, """
        Image uploads straight to S3 with presigned URLs (#14)

        * the browser uploads directly, our server never sees the bytes - Vercel
          functions cap request bodies at 4.5 MB and recipe photos are bigger
        * 10 MB max enforced in the presigned POST policy, not just in the UI
        * thumbnails by a lambda on the bucket
    """, "decision", must=["presigned"], why=["4.5 MB"]),
    C(P3, "Update snapshots (#15)"),
    dep("@testing-library/react", "14.0.0", "14.1.2", 18),
    C(P4, """
        Shopping list v1 (#21)

        * add/remove items
        * check off items
        * persists per user
    """),
    C(P1, """
        Fix hydration mismatch on recipe times (#23)

        * server renders in UTC, the browser in the user's zone -> React throws
          a hydration error and the whole page re-renders client side
        * dates/times are formatted on the client only, through <LocalTime/>.
          Don't call toLocaleString / date-fns format in a server component.
    """, "gotcha", must=["LocalTime"], why=["hydration error"]),
    C(P2, "wip"),
    C(P2, "Merge branch 'main' into feature/meal-plan"),
    C(P2, """
        Meal planner (#27)

        * week view
        * drag recipes onto days
        * generates a shopping list from the week
    """),
    C(P1, """
        Move from styled-components to CSS modules (#30)

        * styled-components needs a client boundary around every styled element
          under the app router, so server components can't use it at all
        * new components: CSS modules only please
        * old components get migrated when we touch them, no big rewrite
    """, "convention", must=["CSS modules"], why=["server components can't use it"]),
    dep("postcss", "8.4.24", "8.4.31", 31, "\n- Fixed a line-return parsing issue (CVE-2023-44270).\n"),
    C(P3, "Address review comments (#30 follow-up) (#32)"),
    C(P4, """
        Search with Meilisearch (#34)

        * recipes indexed by a nightly job
        * admin edits show up in search after up to 24h - known and accepted
          for now, don't file bugs for it
        * typo tolerance on
    """, "gotcha", must=["24h"], why=[], label="meili"),
    C(P4, "Fix typo in onboarding copy (#35)"),
    C(P4, """
        Revert "Search with Meilisearch (#34)" (#36)

        This reverts commit {REF}.

        Meilisearch on the small Railway plan kept getting OOM-killed once the
        full index (~180k recipes) was loaded. Back to Postgres full text search
        until there is budget for a bigger instance.
    """, "revert", ref="meili", must=["Meilisearch", "Postgres"], why=["OOM-killed"]),
    C(P4, """
        Postgres full text search for recipes (#38)

        * generated tsvector column + GIN index
        * uses the 'simple' text search config, not 'english': recipe titles are
          in six languages and english stemming mangled the German ones
          ("Brötchen" -> "brötch")
    """, "decision", must=["simple"], why=["english stemming mangled"]),
    dep("eslint-config-next", "13.5.4", "13.5.6", 40),
    C(P3, """
        Fix flaky e2e (#41)

        * wait for network idle before clicking save
    """),
    C(P3, """
        Playwright against a production build (#43)

        * against `next dev` pages compile on first hit and tests timed out
          randomly on CI
        * `pnpm e2e` now runs `next build && next start` first
    """, "convention", must=["next build"], why=["compile on first hit"]),
    C(P2, "Merge pull request #44 from pantry/dependabot/npm_and_yarn/axios-1.6.0\n\nBump axios from 1.5.1 to 1.6.0"),
    C(P4, """
        Nutrition facts panel (#46)

        * per serving and per 100g
        * data from the recipe's ingredients
    """),
    C(P1, """
        i18n: German and French (#48)

        * next-intl
        * message keys are dotted ids (recipe.card.title), not english sentences
        * never build a sentence by concatenating translated pieces, word order
          differs between languages - use ICU placeholders
    """, "convention", must=["concatenat"], why=["word order"]),
    C(P1, "fixup! i18n: German and French"),
    dep("next", "14.0.3", "14.0.4", 50),
    C(P2, """
        Cache recipe pages with ISR (#52)

        * revalidate = 300
        * editing a recipe calls revalidatePath, so the 300s only matter for
          ratings and comment counts
    """, "decision", must=["revalidatePath"], why=["only matter for"]),
    C(P2, "Fix: ratings not updating (#53)"),
    C(P3, """
        Drop IE11 polyfills (#55)

        * IE11 was <0.1% of sessions over the last 90 days
        * browserslist is now "last 2 versions, Safari >= 15, not dead"
        * -38 KB gzipped on the main bundle
    """, "decision", must=["browserslist"], why=["<0.1%"]),
    dep("sharp", "0.32.6", "0.33.0", 57),
    C(P1, "Refactor recipe card (#58)"),
    C(P2, "Upgrade to React 19 RC (#60)", label="r19"),
    C(P2, """
        Revert "Upgrade to React 19 RC (#60)" (#61)

        This reverts commit {REF}.
    """, ref="r19"),
    C(P4, """
        Analytics with PostHog (#63)

        * self-hosted instance in eu-central-1
        * do NOT switch to PostHog Cloud US: our DPA with the B2B customers
          says their data stays in the EU
        * no session recording
    """, "decision", must=["PostHog", "EU"], why=["DPA"]),
    C(P3, "Update README (#64)"),
    C(P3, "Merge branch 'release' into main"),
    C(P4, """
        Shopping list sharing (#66)

        * share by link or by email
        * read-only or edit
    """),
    C(P4, """
        Fix: shared lists showed other users' items (#67)

        * the list items query filtered by list_id only. Every list query must
          also check ownership: owner_id = user OR a share row for the user
        * a test per list endpoint that a stranger gets 404
        * postmortem in docs/pm/2024-05-shared-lists.md
    """, "security", must=["owner"], why=["filtered by list_id only"]),
    C(P3, "bump deps (#68)"),
    C(P1, "Fix layout shift on mobile header (#70)"),
    C(P2, """
        Env vars: NEXT_PUBLIC_ only for things that may be public (#72)

        * NEXT_PUBLIC_* values are inlined into the client bundle at build
          time. The Stripe secret key was NEXT_PUBLIC_ for two days (rotated).
        * next.config.js fails the build if a NEXT_PUBLIC_ var name contains
          SECRET, KEY or TOKEN
    """, "security", must=["NEXT_PUBLIC_"], why=["inlined into the client bundle"]),
    dep("@playwright/test", "1.43.1", "1.44.0", 73),
    C(P1, """
        Dark mode (#75)

        * css variables
        * follows the OS setting, toggle in settings
    """),
    C(P3, "chore: remove unused deps (#76)"),
    C(P4, """
        Fix week start in meal planner (#78)

        * weeks start on the locale's first day via a small table in
          lib/weekStart.ts. Intl.Locale#weekInfo would do this but Firefox
          doesn't ship it, so don't "simplify" to it yet
    """, "gotcha", must=["weekInfo"], why=["Firefox"]),
    C(P3, "Merge branch 'main' into fix/share-email"),
    C(P2, "Tweak empty states (#80)"),
], seed=33)

# ----------------------------------------------------------- dingdan-service
# 订单服务, Java/Spring; Chinese commit messages.
D1 = "王磊 <wanglei@shopnow.cn>"
D2 = "陈晓 <chenxiao@shopnow.cn>"
D3 = "李娜 <lina@shopnow.cn>"
D4 = "zhao.yu <zhaoyu@shopnow.cn>"

repo("dingdan-service", "2023-11-06T10:00:00", {D1: "+08:00", D2: "+08:00", D3: "+08:00", D4: "+08:00"}, [
    C(D1, "初始化项目结构"),
    C(D1, "功能: 订单创建接口"),
    C(D2, """
        修复: 订单导出时区错误

        导出用的是服务器默认时区（容器里是 UTC），财务看到的下单时间差了8小时。
        以后所有给人看的时间（导出、短信、后台页面）统一按 Asia/Shanghai 格式化，
        数据库里仍然存 UTC，不要改存储。
    """, "convention", must=["Asia/Shanghai", "UTC"], why=["差了8小时"]),
    C(D1, "更新 README"),
    C(D4, "重构: 抽取 OrderValidator"),
    C(D3, """
        修复: 退款校验金额比较

        BigDecimal.equals 会比较 scale，1.0 和 1.00 判为不相等，部分退款校验一直失败。
        金额比较一律用 compareTo，别用 equals。
    """, "gotcha", must=["compareTo"], why=["scale"]),
    C(D4, "优化: 订单列表分页查询改为 id 游标", label="cursor"),
    C(D4, "wip"),
    C(D2, "修复一个bug"),
    C(D1, """
        feat: 接入支付宝异步通知

        支付宝的异步通知会重复推送（没及时返回 success 就会重试，最多 8 次），
        处理前先按 notify_id 查是否已处理，已处理直接返回 success。
    """, "gotcha", must=["notify_id"], why=["重复推送"]),
    C(D1, "Merge branch 'dev' into master"),
    C(D4, "修改配置"),
    C(D3, """
        修复: 并发下库存扣减超卖

        原来是先 select 库存再 update，压测时并发下单超卖了 37 件。
        改成一条 SQL：UPDATE sku_stock SET stock = stock - ? WHERE sku_id = ? AND stock >= ?，
        影响行数为 0 就是库存不足。扣库存不要再写成先查后改。
    """, "gotcha", must=["stock >= ?"], why=["超卖"]),
    C(D4, "升级 spring-boot 到 3.2.4"),
    C(D2, """
        功能: 订单超时自动取消

        - 定时任务扫描未支付订单
        - 补单元测试
    """),
    C(D2, """
        修复: 多实例部署时定时任务重复执行

        生产 3 个实例，每个实例都跑了一遍超时取消，用户收到三条取消短信。
        接入 ShedLock，以后新增的 @Scheduled 任务必须同时加 @SchedulerLock。
    """, "convention", must=["@SchedulerLock"], why=["每个实例都跑了一遍"]),
    C(D1, "调整日志格式"),
    C(D4, """
        Revert "优化: 订单列表分页查询改为 id 游标"

        This reverts commit {REF}.

        改成游标之后后台管理的"跳到第 N 页"用不了了，运营那边不接受。
        先回滚：后台列表继续用 offset 分页，App 端的列表以后单独做游标接口。
    """, "revert", ref="cursor", must=["offset"], why=["跳到第 N 页"]),
    C(D4, "代码格式化"),
    C(D3, "新增: 电子发票模块"),
    C(D3, "修复: 发票抬头含特殊字符时报错"),
    C(D1, """
        数据库变更: orders 表增加 channel 字段

        上线前需要先执行 V23__add_order_channel.sql，老数据 channel 默认 'app'。
        注意生产环境 flyway 是关闭自动执行的，要提工单让 DBA 手动执行，再发版。
    """, "migration", must=["V23__add_order_channel.sql"], why=[]),
    C(D4, "更新依赖"),
    C(D2, "修复: 测试"),
    C(D2, "fix: 修复 NPE"),
    C(D3, """
        安全: 订单详情接口越权

        接口只校验了登录，没有校验订单是不是当前用户的，改 orderId 就能看别人的订单
        （白帽报告 SRC-2024-017）。所有按 ID 查用户数据的接口，查询条件里必须带 userId。
    """, "security", must=["userId"], why=["看别人的订单"]),
    C(D4, "重构: 拆分 OrderService"),
    C(D2, "Merge branch 'feature/coupon' into dev"),
    C(D2, "功能: 优惠券"),
    C(D2, """
        修复: 优惠券叠加的计算顺序

        和产品（李娜）确认过：先满减，再折扣，最后抵扣积分。顺序写在 PricingChain 里，
        要改顺序先找产品确认，别直接调。

        Co-authored-by: 李娜 <lina@shopnow.cn>
    """, "decision", must=["PricingChain"], why=["和产品（李娜）确认过"]),
    C(D4, "删除无用代码"),
    C(D1, "升级 mysql-connector-j 8.0.33 → 8.3.0"),
    C(D1, """
        修复: 升级驱动后时间又差了8小时

        mysql-connector-j 8.0.23 之后 serverTimezone 的语义变了，LocalDateTime
        会被多转一次时区。JDBC URL 里要显式加
        connectionTimeZone=UTC&forceConnectionTimeZoneToSession=true，各环境配置都已改。
    """, "gotcha", must=["connectionTimeZone"], why=["serverTimezone 的语义变了"]),
    C(D3, "补充单元测试"),
    C(D2, """
        废弃: /api/v1/order/list

        3.0 版本删除，前端已经全部切到 /api/v2/orders。新代码不要再调 v1 接口。
    """, "deprecation", must=["/api/v1/order/list"], why=[]),
    C(D4, "修改注释"),
    C(D1, "chore(release): 2.8.0"),
    C(D3, """
        优化: 订单导出改为异步

        超过 1 万行时同步导出会超过网关 60s 超时。现在导出先生成文件，完成后发站内信通知下载。
    """, "decision", must=["异步"], why=["网关 60s"]),
    C(D3, "fixup! 优化: 订单导出改为异步"),
    C(D4, "修复 review 意见"),
    C(D2, """
        修复: 订单查询缓存穿透

        有人拿不存在的订单号刷接口，请求全打到 DB。查不到的订单也缓存空值，TTL 60 秒。
    """, "decision", must=["空值"], why=["全打到 DB"]),
    C(D4, "更新 .gitignore"),
    C(D1, "Merge branch 'master' into feature/refund"),
    C(D1, "功能: 部分退款"),
    C(D3, "修复: 退款金额精度"),
    C(D4, "临时提交"),
    C(D2, """
        调整: 超时取消时间改为 15 分钟

        产品要求
    """),
], seed=44)

# --------------------------------------------------------------------- tessera
# Embedded key-value store in Rust; long bodies, Signed-off-by, reverts.
T1 = "Astrid Lindqvist <astrid@tessera-db.org>"
T2 = "Kenji Mori <kenji.mori@tessera-db.org>"
T3 = "ferris-fan <ferris-fan@users.noreply.github.com>"
T4 = "Olu Adeyemi <olu@tessera-db.org>"
TDEP = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"

repo("tessera", "2022-03-01T14:00:00", {T1: "+01:00", T2: "+09:00", T3: "-08:00", T4: "+00:00", TDEP: "+00:00"}, [
    C(T1, "Initial commit"),
    C(T1, """
        wal: crc32c in the record header

        Use crc32c.
    """ + so(T1)),
    C(T2, """
        memtable: switch to crossbeam-skiplist

        Our hand-rolled skiplist had a use-after-free that Miri found (#41) and
        nobody wants to maintain lock-free code of our own. crossbeam's is
        audited and is within 5% on our insert benchmark.
    """ + so(T2), "decision", must=["crossbeam"], why=["use-after-free"]),
    C(T2, "ci: add miri job"),
    C(T3, "docs: typos"),
    C(T1, """
        sstable: default block size 4 KiB -> 16 KiB

        Measured on NVMe with fio and the ycsb-c harness: point reads unchanged,
        range scans 1.7x faster, index blocks 4x smaller. 4 KiB only ever made
        sense on spinning disks.
    """ + so(T1), "decision", must=["16 KiB"], why=["1.7x faster"]),
    C(T1, """
        Bump MSRV to 1.70

        We need std::sync::OnceLock. Don't use anything newer than the MSRV:
        there is a CI job pinned to exactly 1.70 and it will fail.
    """ + so(T1), "convention", must=["MSRV", "1.70"], why=["OnceLock"]),
    C(T4, "compaction: fix off-by-one in level target size"),
    C(T1, "Merge pull request #58 from ferris-fan/patch-1\n\nFix broken link in README"),
    C(T4, """
        fsync the directory after renaming table files

        On ext4 (and xfs) a rename() is not durable until the parent directory is
        fsynced. After a power cut on a user's box MANIFEST pointed at a table
        file that did not exist. Every create/rename of a table or manifest file
        must be followed by sync_dir(); there is a debug assertion for it now.

        Fixes: #61
    """ + so(T4), "gotcha", must=["sync_dir"], why=["not durable until the parent directory is"]),
    C(T2, "clippy"),
    C(T2, "wip compaction rework"),
    C(T2, "compaction: tiered for L0..L1" + so(T2), label="tiered"),
    C(T1, """
        Revert "compaction: tiered for L0..L1"

        This reverts commit {REF}.

        Tiered L0/L1 made p99 point-read latency 3x worse on ycsb-b, because a
        lookup can now probe up to 8 overlapping runs. The ~18% write-amp win is
        not worth that for our users, who are overwhelmingly read-heavy.
    """ + so(T1), "revert", ref="tiered", must=["tiered"], why=["p99 point-read latency 3x worse"]),
    C(TDEP, """
        chore(deps): bump crc32fast from 1.3.2 to 1.4.0

        Bumps [crc32fast](https://github.com/srijs/rust-crc32fast) from 1.3.2 to 1.4.0.

        Signed-off-by: dependabot[bot] <support@github.com>
    """),
    C(T4, """
        Read sstables with pread, not mmap

        With mmap an I/O error on the device becomes SIGBUS in whatever thread
        touched the page, and a library cannot recover from that. pread plus our
        own block cache gives us an Err we can return. See Crotty, Leis, Pavlo,
        "Are You Sure You Want to Use MMAP in Your DBMS?" (CIDR 2022).
    """ + so(T4), "decision", must=["mmap", "pread"], why=["SIGBUS"]),
    C(T2, "block cache: CLOCK-Pro eviction"),
    C(T3, "tests: proptest for merging iterators"),
    C(T1, "Release 0.4.0" + so(T1)),
    C(T4, """
        api: Db::get returns Result<Option<Bytes>>

        A corrupt block used to panic inside get(). A storage library must not
        take down the host process for one bad block.

        BREAKING CHANGE: get() now returns Result<Option<Bytes>>; callers must
        handle Err(Error::Corruption { .. }) instead of catching a panic.
    """ + so(T4), "decision", must=["Result<Option<Bytes>>"], why=["take down the host process"]),
    C(T3, "typo in docs"),
    C(T2, "fix build on windows"),
    C(T2, """
        windows: close readers before replacing a table file

        Windows refuses to rename over a file that still has an open handle
        (ERROR_ACCESS_DENIED), even with FILE_SHARE_DELETE on older builds.
        Compaction has to evict the file from table_cache before the swap;
        see table_cache::evict_before_replace.
    """ + so(T2), "gotcha", must=["open handle"], why=["ERROR_ACCESS_DENIED"]),
    C(T2, "Merge branch 'windows-fixes'"),
    C(T1, "bench: ycsb harness"),
    C(T1, """
        Use jemalloc in benches only

        A library must not pick the global allocator for its users; jemalloc
        stays a dev-dependency of the bench crate.
    """ + so(T1), "convention", must=["jemalloc"], why=["must not pick the global allocator"]),
    C(T4, "refactor: split manifest.rs"),
    C(T4, "fix(manifest): handle an empty version edit"),
    C(T3, """
        Remove the unsafe in Slice::as_str

        It assumed keys are UTF-8; they are arbitrary bytes and a non-UTF-8 key
        was UB. There is no `unsafe` outside src/sys/ any more and the rest of
        the crate has #![deny(unsafe_code)]. Keep it that way.

        Co-authored-by: Astrid Lindqvist <astrid@tessera-db.org>
    """, "convention", must=["deny(unsafe_code)"], why=["arbitrary bytes"]),
    C(T1, "Release 0.5.0" + so(T1)),
    C(T3, "ci: cache cargo registry"),
    C(T2, """
        bloom: 10 bits per key by default

        False positive rate measured 0.8% at 10 bits vs 2.1% at 8; the extra
        ~0.25 byte per key is fine for everyone we know of.
    """ + so(T2), "decision", must=["10 bits"], why=["0.8%"]),
    C(T2, "fixup! bloom: 10 bits per key by default"),
    C(T1, """
        Deprecate Options::use_mmap

        It has been a no-op since 0.4 (we don't mmap any more). It goes away in 0.7.
    """ + so(T1), "deprecation", must=["use_mmap", "0.7"], why=["no-op"]),
    C(T4, "docs: explain compaction"),
    C(T3, "iter: fix seek past the last key", label="seek"),
    C(T1, """
        Revert "iter: fix seek past the last key"

        This reverts commit {REF}.
    """, ref="seek"),
    C(T3, """
        iter: fix seek past the last key (again)

        The first fix broke reverse iteration when the last block was empty.
    """),
    C(T1, "Release 0.6.0" + so(T1)),
    C(T4, """
        wal: group commit

        Writers enqueue and one leader fsyncs for the whole batch.

        Caveat for users and for us: Ok(()) from write() means durable only with
        WriteOptions { sync: true }. The default sync=false keeps the old
        behaviour (fast, may lose the last writes on a crash).
    """ + so(T4), "gotcha", must=["sync"], why=[]),
    C(T3, "update deps"),
    C(T2, "deny warnings in CI"),
    C(T1, """
        Remove Options::use_mmap

        Deprecated in 0.5.

        BREAKING CHANGE: delete `use_mmap` from your Options literal; it did
        nothing since 0.4.
    """ + so(T1), "migration", must=["use_mmap"], why=[]),
    C(T1, "Release 0.7.0" + so(T1)),
    C(T3, "readme tweaks"),
    C(T4, """
        tests: bump proptest cases to 512 on CI

        Found one more iterator bug with 2k cases locally.
    """),
], seed=55)

# --------------------------------------------------------------------- rivulet
# Data pipeline (Airflow, Spark, dbt); mixed Chinese/English, messy.
R1 = "xu.tian <xutian@datahub.local>"
R2 = "Priya Raman <priya@datahub.local>"
R3 = "周凯 <zhoukai@datahub.local>"
R4 = "maggie <maggie.l@datahub.local>"

repo("rivulet", "2023-06-12T11:20:00", {R1: "+08:00", R2: "+08:00", R3: "+08:00", R4: "+08:00"}, [
    C(R1, "init"),
    C(R1, "add ingestion dag for 订单表"),
    C(R1, "fix"),
    C(R3, "wip 还没跑通"),
    C(R3, """
        ingest: parquet 压缩从 gzip 换成 snappy

        gzip 压缩率是高一点, 但 spark 读的时候 executor CPU 直接打满,
        snappy 读快了 3x 左右, 存储多 15% 可以接受
    """, "decision", must=["snappy"], why=["CPU 直接打满"]),
    C(R1, "pandas 2.0 compat"),
    C(R4, """
        fix: read_csv 把门店编码 '0012' 读成 12 了

        leading zeros 丢了之后和门店维表 join 不上, 日报少了 40 多家店.
        所有 id 类的列读的时候必须 dtype=str, 列名统一维护在 schemas.py 的 ID_COLUMNS
    """, "gotcha", must=["dtype=str"], why=["leading zeros"]),
    C(R1, "lol"),
    C(R1, "update requirements"),
    C(R2, """
        dag: new dags must set catchup=False

        上周新建的 dag 没关 catchup, start_date 写的 2021, 一上线 backfill 了两年的数据,
        warehouse 被打爆 (DATA-311). default_args 模板里已经改了, 新 dag 从模板拷
    """, "convention", must=["catchup=False"], why=["backfill 了两年的数据"]),
    C(R1, "Merge branch 'master' of gitlab.internal:data/rivulet"),
    C(R3, "rename columns"),
    C(R4, "add 用户留存 report"),
    C(R4, """
        fix 留存 report 的周

        按 ISO week 算, 周一开始 (业务那边确认了). 不要用 strftime('%U'), 那个是周日开始
    """, "decision", must=["ISO week"], why=["业务那边确认了"]),
    C(R1, "tmp", label="tmp"),
    C(R1, "Revert \"tmp\"\n\nThis reverts commit {REF}.", ref="tmp"),
    C(R3, "spark: broadcast join threshold 调到 50MB"),
    C(R3, """
        spark: 关掉 AQE 的 skew join

        spark 3.3.1 上 skewJoin 和我们的 bucketed 表一起用会算出错的结果 (重复行),
        查了两天. 升到 3.4 以前别打开 spark.sql.adaptive.skewJoin.enabled
    """, "gotcha", must=["skewJoin", "3.4"], why=["算出错的结果"]),
    C(R1, "black"),
    C(R2, """
        sensitive: 手机号落 ods 之前先脱敏

        合规要求, raw/ods 层也不允许明文手机号. 统一用 utils.mask_phone(), 保留前3后4.
        以后接新的数据源有手机号字段的一样处理
    """, "security", must=["mask_phone"], why=["合规要求"]),
    C(R4, "fix typo"),
    C(R2, "add great_expectations checks"),
    C(R2, """
        dq: row count check 阈值 ±10% -> ±30%

        周末流量本来就低, ±10% 每个周六都在误报, 大家已经开始无视这个告警了
    """, "decision", must=["30%"], why=["周末流量本来就低"]),
    C(R2, "Merge remote-tracking branch 'origin/feat/dq'"),
    C(R1, "bump airflow 2.7.3 -> 2.8.1"),
    C(R1, """
        fix: airflow 升级后 factory 生成的 dag 全不见了

        DAG_DISCOVERY_SAFE_MODE 下 scheduler 只 parse 文件内容里同时出现 "airflow" 和 "dag"
        的文件. 重构之后 dags/factory_loader.py 里没有 "dag" 这个词了, 整个文件被跳过.
        加了一行注释 # airflow dag 绕过; 新的 loader 文件也要注意
    """, "gotcha", must=["DAG_DISCOVERY_SAFE_MODE"], why=["整个文件被跳过"]),
    C(R3, "refactor loaders"),
    C(R3, "cr fixes"),
    C(R2, """
        wip: 试试 polars

        pandas 太慢了, 先在 daily_sales 上试一下
    """),
    C(R2, """
        迁移: warehouse 从 hive 表切到 iceberg

        步骤:
        1. scripts/migrate_to_iceberg.py --dry-run 先看一遍
        2. 暂停所有 ingest dag
        3. 去掉 --dry-run 正式跑
        4. 改 spark catalog 配置, 重启 thrift server
        老的 hive 表保留 30 天再 drop
    """, "migration", must=["migrate_to_iceberg.py"], why=[]),
    C(R2, "oops"),
    C(R2, "fixup! 迁移: warehouse 从 hive 表切到 iceberg"),
    C(R3, """
        iceberg: 每天 expire_snapshots, 保留 7 天

        small files 太多, metadata 涨到 20GB, 一个 query 光 planning 就要 2 分钟
    """, "decision", must=["expire_snapshots"], why=["planning 就要 2 分钟"]),
    C(R4, "update docs"),
    C(R4, "add 新 dashboard 的 source"),
    C(R1, "fix timezone"),
    C(R4, """
        late data 处理

        event_time 晚到超过 48h 的直接丢进 late_events 表, 不进主表. 这个是和 BI 约好的,
        报表不回补两天以前的数.

        Co-authored-by: Priya Raman <priya@datahub.local>
    """, "decision", must=["48h", "late_events"], why=["和 BI 约好的"]),
    C(R1, "bump deps"),
    C(R3, "wip: dbt"),
    C(R3, "wip: dbt 2"),
    C(R3, """
        dbt: 所有 model 用 incremental + unique_key

        没有 unique_key 的 incremental 重跑会插重复数据, 上周 fct_orders 翻倍了一次
    """, "convention", must=["unique_key"], why=["重跑会插重复数据"]),
    C(R4, "pre-commit"),
    C(R1, "deprecate old_loader.py, 下个 sprint 删. 新东西一律用 loaders/v2",
      "deprecation", must=["old_loader.py", "loaders/v2"]),
    C(R3, "Merge branch 'feat/dbt'"),
    C(R4, "fix test"),
    C(R1, "chore: 更新 owner 信息"),
    C(R4, """
        重构: 拆 utils.py

        太长了 1200 行
    """),
], seed=66)

# -------------------------------------------------------------- kestrel-mobile
# React Native app; release commits, merge commits, hotfixes.
K1 = "Priya Desai <priya.desai@kestrel.fm>"
K2 = "Marcus Hill <marcus@kestrel.fm>"
K3 = "Yuki Tanaka <yuki@kestrel.fm>"
K4 = "Sofia Reyes <sofia@kestrel.fm>"
KREN = "renovate[bot] <29139614+renovate[bot]@users.noreply.github.com>"

repo("kestrel-mobile", "2024-02-05T16:40:00", {K1: "-08:00", K2: "-05:00", K3: "+09:00", K4: "-06:00", KREN: "+00:00"}, [
    C(K2, "Bump version to 3.0.0 (build 380)"),
    C(K1, "Merge pull request #501 from kestrel/feature/onboarding\n\nOnboarding v2"),
    C(K3, "Fix crash on Android 8 when opening the camera"),
    C(K1, """
        Don't ask for 'always' location permission

        App Review rejected 2.9.1 for requesting "always" without a feature that
        needs background location. We only request "when in use". If a feature
        really needs background location, talk to Priya first; it needs a new
        justification string and usually a second review round.
    """, "gotcha", must=["when in use"], why=["App Review rejected"]),
    C(K3, "Update pods"),
    C(K3, "hermes: enable on iOS"),
    C(K4, """
        Store auth tokens in MMKV, not AsyncStorage

        AsyncStorage is a plaintext file on Android (readable on rooted devices
        and in adb backups). Tokens go to react-native-mmkv with the encryption
        key in Keychain/Keystore. Never put auth material in AsyncStorage.
    """, "security", must=["AsyncStorage"], why=["plaintext"]),
    C(K2, "fastlane: bump build number"),
    C(K2, "Release 3.1.0 (build 391)"),
    C(K2, "Merge branch 'main' into release/3.1"),
    C(K3, """
        Android: targetSdk 34

        Google Play requires it for app updates after Aug 31. Heads up: on 34 a
        foreground service must declare a foregroundServiceType in the manifest
        or it crashes on start; the audio player uses mediaPlayback.
    """, "gotcha", must=["foregroundServiceType"], why=["Google Play requires it"]),
    C(K4, "fix lint"),
    C(K3, "Enable new architecture (Fabric)", label="fabric"),
    C(K3, """
        Revert "Enable new architecture (Fabric)"

        This reverts commit {REF}.

        react-native-maps at the version we are pinned to isn't Fabric-ready:
        map markers vanish on iOS after the first pan. Revisit once we can move
        to maps 2.x.
    """, "revert", ref="fabric", must=["Fabric", "react-native-maps"], why=["markers vanish"]),
    C(K4, "WIP push notifications"),
    C(K4, "Push notifications via FCM on both platforms"),
    C(K4, """
        Push: data-only messages on Android

        With "notification" messages Android shows them itself while the app is
        in the background and our onMessage handler never runs, so badge counts
        and the inbox were wrong. The backend sends data-only payloads and the
        app renders the notification itself. Keep it that way when adding new
        push types.
    """, "gotcha", must=["data-only"], why=["onMessage handler never runs"]),
    C(K1, "Update translations"),
    C(K2, "address PR feedback"),
    C(K2, """
        Release 3.2.0 (build 412)

        - Push notifications
        - Dark mode fixes
        - Onboarding tweaks
    """),
    C(K1, """
        Hotfix: login loop on iOS 17.4

        After 17.4 the cookie set inside the WKWebView login page is no longer
        visible to fetch(), so the app thought it was logged out and reopened the
        login page forever. The session token is now sent in the Authorization
        header; nothing should rely on the web view's cookie.
    """, "gotcha", must=["Authorization"], why=["WKWebView"]),
    C(K2, "Merge branch 'hotfix/3.2.1'"),
    C(K3, "Bump react-native 0.73.4 -> 0.73.6"),
    C(K4, """
        Sentry: strip PII from breadcrumbs

        Emails and phone numbers were showing up in Sentry through fetch
        breadcrumbs. beforeBreadcrumb drops request/response bodies; anything
        new that logs request data has to go through scrub() in lib/sentry.ts.
    """, "security", must=["scrub()"], why=["Emails and phone numbers were showing up"]),
    C(K3, "cleanup"),
    C(K2, """
        Move builds from Bitrise to EAS

        - bitrise.yml removed
        - secrets moved to EAS
    """),
    C(K3, """
        Fix deep links on Android 12+

        Android 12 only verifies app links if assetlinks.json is served with
        Content-Type application/json; our CDN sent text/plain, so every link
        opened the browser. Fixed in the CDN config (infra repo, cdn/headers.tf).
    """, "gotcha", must=["assetlinks.json"], why=["text/plain"]),
    C(K2, "Merge pull request #560 from kestrel/renovate/configure\n\nConfigure Renovate"),
    C(KREN, """
        chore(deps): update dependency @sentry/react-native to v5.20.0

        | Package | Change |
        |---|---|
        | @sentry/react-native | `5.19.1` -> `5.20.0` |
    """),
    C(K2, "Release 3.3.0 (build 430)"),
    C(K1, """
        Minimum iOS 15

        iOS 14 is under 1% of active devices and the new widgets need
        WidgetKit APIs from 15. 3.4 is the first release without iOS 14.
    """, "deprecation", must=["iOS 15"], why=["under 1%"]),
    C(K4, "fix tests"),
    C(K4, "Feature flags via Firebase remote config"),
    C(K4, """
        Flags default to false when remote config fails

        If Firebase timed out at startup we used the cached value, which on a
        fresh install was undefined, and a loose check let the unfinished
        paywall through. Flags are strictly boolean now and default to false;
        compare with === true.
    """, "gotcha", must=["default to false"], why=["loose check"]),
    C(K4, "squash! Feature flags via Firebase remote config"),
    C(K1, "Update app icon"),
    C(K2, "Release 3.4.0 (build 447)"),
    C(K3, """
        Bump Hermes heap limit in debug builds

        Metro kept crashing on my machine
    """),
], seed=77)

# ---------------------------------------------------------------- quillstack
# Django monolith at a small agency: mixed style, BREAKING CHANGE, issue refs.
Q1 = "Nadia Haddad <nadia@quillstack.io>"
Q2 = "Pieter de Vries <pieter@quillstack.io>"
Q3 = "Emeka Obi <emeka@quillstack.io>"
QDEP = "dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"

repo("quillstack", "2023-02-20T09:45:00", {Q1: "+04:00", Q2: "+01:00", Q3: "+01:00", QDEP: "+00:00"}, [
    C(Q1, "Initial Django 4.1 project"),
    C(Q2, "articles app with admin"),
    C(Q2, """
        Use UUID primary keys for public models

        Sequential ids in URLs let anyone count our customers' articles and
        scrape them in order (a client noticed). New public-facing models get
        `id = UUIDField(primary_key=True, default=uuid4)`; internal tables keep
        bigint.

        Refs #14
    """, "convention", must=["UUID"], why=["scrape them in order"]),
    C(Q3, "fix tests"),
    C(Q3, "add celery for emails"),
    C(Q1, """
        celery: acks_late + idempotent tasks

        A worker killed by the OOM killer lost its in-flight email batch
        (tasks are acked on receipt by default). acks_late=True means a task
        can run twice, so every task must be safe to re-run; check
        `EmailLog.sent_at` before sending.
    """, "gotcha", must=["acks_late"], why=["lost its in-flight email batch"]),
    C(Q2, "Merge branch 'main' into feature/comments"),
    C(Q2, "comments"),
    C(Q3, """
        Don't use select_for_update in the comment counter

        It deadlocked with the moderation job under load.
    """, "gotcha", must=["select_for_update"], why=["deadlocked"]),
    C(QDEP, """
        Bump django from 4.1.7 to 4.1.9

        Bumps [django](https://github.com/django/django) from 4.1.7 to 4.1.9.
        - [Commits](https://github.com/django/django/compare/4.1.7...4.1.9)

        Signed-off-by: dependabot[bot] <support@github.com>
    """),
    C(Q1, "black + isort"),
    C(Q1, """
        Settings: one settings module, everything from env

        - removed settings/dev.py, settings/prod.py
        - django-environ
        - .env.example lists every variable
    """),
    C(Q2, """
        fix: migrations 0031 and 0032 conflict

        Merged both branches' migrations with makemigrations --merge.
    """),
    C(Q1, """
        Never edit a migration that has been applied in prod

        0027 was edited after deploying it; prod and fresh databases ended up
        with different columns and nobody noticed for a month. If a migration
        is wrong, write a new one. CI now compares the migration files against
        the hashes in migrations.lock.
    """, "convention", must=["migration", "edit"], why=["different columns"]),
    C(Q3, "typo"),
    C(Q3, "wip search"),
    C(Q3, "search with pg trigram"),
    C(Q2, """
        Rich text: sanitize with nh3 on save, not on render

        bleach is deprecated upstream. Sanitizing on save means templates can
        use |safe for article bodies, but anything that writes body_html
        outside Article.save() (imports!) must call sanitize_html() itself.
    """, "gotcha", must=["sanitize_html"], why=["bleach is deprecated"]),
    C(Q1, "update README"),
    C(Q3, "Merge pull request #41 from quillstack/fix-search-accents\n\nunaccent for search"),
    C(Q2, """
        feat(api)!: paginate /api/articles with cursors

        BREAKING CHANGE: `?page=N` is gone, use the `next` URL from the
        response. Offset pages duplicated/skipped items while editors
        published, which broke the mobile client's infinite scroll.

        Closes #44
    """, "migration", must=["cursor"], why=["duplicated/skipped items"]),
    C(Q3, "address review comments"),
    C(QDEP, """
        Bump pillow from 9.4.0 to 10.0.1

        Bumps [pillow](https://github.com/python-pillow/Pillow) from 9.4.0 to 10.0.1.
        - [Release notes](https://github.com/python-pillow/Pillow/releases)

        Signed-off-by: dependabot[bot] <support@github.com>
    """),
    C(Q1, """
        Timezone: USE_TZ stays True, editors see Asia/Dubai

        Naive datetimes from the old import script shifted scheduled posts by
        4 hours. Store aware UTC everywhere; only the admin renders local time.
    """, "convention", must=["USE_TZ"], why=["shifted scheduled posts"]),
    C(Q2, "fix flaky test"),
    C(Q2, "Release 1.6.0"),
    C(Q3, "refactor views into services"),
    C(Q1, """
        Upgrade to Django 4.2 LTS

        - STORAGES setting instead of DEFAULT_FILE_STORAGE
        - psycopg 3
    """),
    C(Q3, """
        fix: psycopg 3 + pgbouncer transaction mode

        psycopg 3 uses server-side prepared statements after 5 executions,
        which break under pgbouncer in transaction mode ("prepared statement
        _pg3_0 does not exist"). prepare_threshold=None in DATABASES OPTIONS;
        keep it unless pgbouncer is >= 1.21 with max_prepared_statements set.
    """, "gotcha", must=["prepare_threshold"], why=["pgbouncer in transaction mode"]),
    C(Q2, "wip"),
    C(Q2, "more wip"),
    C(Q1, "Release 1.7.0"),
    C(Q3, """
        Deprecate the XML feed

        Last hit from a real reader was in March, only bots since. /feed.xml
        answers 410 from 1.9; JSON Feed at /feed.json stays.
    """, "deprecation", must=["/feed.xml"], why=["only bots since"]),
    C(Q2, "bump deps"),
    C(Q1, "Merge branch 'release/1.8'"),
    C(Q2, """
        Make the image resize task faster

        Resize once to the largest size and derive the smaller ones from it.
    """),
    C(Q3, """
        Fix editor autosave race

        Co-authored-by: Nadia Haddad <nadia@quillstack.io>
    """),
], seed=88)


# ------------------------------------------------------------------- output
def main():
    out = {"repos": []}
    for name, start, tz, commits, seed in REPOS:
        rnd = random.Random(seed)
        t = dt.datetime.fromisoformat(start)
        shas = {}
        rows = []
        for i, c in enumerate(commits):
            sha = hashlib.sha1(f"{name}:{i}".encode()).hexdigest()
            if c["label"]:
                shas[c["label"]] = sha
            msg = c["message"]
            if c["ref"]:
                msg = msg.replace("{REF}", shas[c["ref"]])
            if i:
                t += dt.timedelta(minutes=rnd.randint(7, 60 * 52))
            off = tz[c["author"]]
            sign = 1 if off[0] == "+" else -1
            delta = dt.timedelta(hours=int(off[1:3]), minutes=int(off[4:6])) * sign
            local = (t + delta).replace(tzinfo=dt.timezone(delta))
            keep = c["kind"] != "none"
            rows.append({"sha": sha, "date": local.isoformat(), "author": c["author"],
                         "message": msg, "keep": keep, "kind": c["kind"],
                         "must": c["must"], "why": c["why"]})
        rows.reverse()  # newest first, like git log
        out["repos"].append({"name": name, "commits": rows})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "commits.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote", path, sum(len(r["commits"]) for r in out["repos"]), "commits")


if __name__ == "__main__":
    main()
