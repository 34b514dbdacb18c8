#!/usr/bin/env python3
"""Build ../names.json from names_data.py."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import names_data

POLICY = {
    "name": "a code-shaped identifier (kebab-case, snake_case or dotted; with or without backticks) that names a "
            "software thing a teammate would link: our services, repos, packages/modules, DB tables/views, "
            "Kafka topics, queues, consumer groups, jobs/workers, hosts/clusters, and third-party packages or "
            "CLI tools written in code shape (pg_dump, python-dateutil, kafka-consumer-groups).",
    "not_a_name": ["ordinary hyphenated/underscored words (well-known, read-only, follow-up, up_to_date, ...)",
                   "file names and paths (config.yaml, infra-live/db/ledger, recon/2024-02/report.html)",
                   "URLs and e-mail addresses", "version strings, dates, ticket ids (v1.4.2, 2024-03-18, INC-2291)",
                   "numbers with units (800ms, 5GB, 24-hour)", "e.g. / i.e. / approx.",
                   "function/method/task names and variables (finalize_invoice, send_dunning_email, tmp_fix_2)",
                   "feature-flag and config keys (billing.finalize_schedule_enabled, log_level, settings.STRIPE_TIMEOUT_S)",
                   "env vars and constants in UPPER_SNAKE (MAX_POLL_RECORDS, DEADLINE_EXCEEDED)",
                   "CLI flags (--dry-run), HTTP headers (X-Acme-Event-Id, If-None-Match), Slack channels (#billing-eng)",
                   "git branch names (BILL-1234-fix-proration), CVE ids, cloud region ids (eu-west-1)",
                   "words about naming styles (snake_case, kebab-case)",
                   "product/standard names with punctuation (Node.js, UTF-8, ISO-8601, HMAC-SHA256, x86_64, 3-D Secure)",
                   "Chinese names of services (计费服务): not code-shaped; they are aliases in team.json instead"],
}


def main():
    out = {"policy": POLICY, "sentences": names_data.S}
    with open(os.path.join(os.path.dirname(HERE), "names.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print("wrote names.json:", len(names_data.S), "sentences")


if __name__ == "__main__":
    main()
