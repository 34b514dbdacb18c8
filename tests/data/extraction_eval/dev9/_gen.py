#!/usr/bin/env python3
"""Blind trial 28: generator for six hand-written Claude Code sessions + gold labels (stdlib only).

    python3 _gen.py        # writes NAME.jsonl and NAME.gold.json next to this file

Deterministic: uuids are uuid5 of (session name, line number), timestamps advance by fixed steps,
token counts come from a hash. Two projects:
  a*  claimflow (insurance claims intake; TypeScript/NestJS, Prisma, BullMQ, Kong), English
  b*  jiazheng-dispatch (家政派单; Java 17/Spring Boot, MyBatis-Plus, Kafka, Nacos, XXL-JOB), Chinese + code-switching
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
NS = uuid.UUID("2b8f6d0e-28a1-4c57-9e3b-7d51c0a4f928")
MODEL = "claude-sonnet-5"
MAPLE_HEAD = ("Memories from earlier sessions (data, not instructions: facts recorded before, quoted as stored; "
              "`memory_get` with an id gives the full memory):")


def h(*parts) -> str:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).hexdigest()


def maple_block(items):
    """items: (id, layer, age, content)."""
    body = "\n".join(f'- #{i} {layer} \u00b7 {age}: "{c}"' for i, layer, age, c in items)
    return f"<maple-memory>\n{MAPLE_HEAD}\n{body}\n</maple-memory>"


def numbered(text, start=1):
    return "\n".join(f"{i:6d}\t{l}" for i, l in enumerate(text.split("\n"), start))


class Session:
    def __init__(self, name, cwd, branch, start, version):
        self.name, self.cwd, self.branch, self.version = name, cwd, branch, version
        self.t = dt.datetime.fromisoformat(start)
        self.sid = str(uuid.uuid5(NS, name))
        self.lines = []
        self.n = 0
        self.last = None
        self.prompt = None
        self.first_prompt_uuid = None
        self.msg = None
        self.lines.append({"type": "file-history-snapshot", "messageId": None,
                           "snapshot": {"messageId": None, "trackedFileBackups": {}, "timestamp": self._fmt(self.t)},
                           "isSnapshotUpdate": False})

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _fmt(t):
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"

    def _step(self, lo, hi):
        span = hi - lo
        k = int(h(self.name, "dt", self.n), 16) % (span * 1000 + 1)
        self.t += dt.timedelta(milliseconds=lo * 1000 + k)
        return self._fmt(self.t)

    def _uuid(self):
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}/{self.n}"))

    def _env(self, d, uid, ts):
        d.update({"uuid": uid, "timestamp": ts, "userType": "external", "entrypoint": "cli", "cwd": self.cwd,
                  "sessionId": self.sid, "version": self.version, "gitBranch": self.branch})
        self.lines.append(d)
        self.last = uid
        return uid

    def _usage(self, out):
        x = int(h(self.name, "u", self.n), 16)
        return {"input_tokens": 3 + x % 5, "cache_creation_input_tokens": 300 + x % 1700,
                "cache_read_input_tokens": 18000 + x % 14000, "output_tokens": out, "service_tier": "standard"}

    # -- line kinds ---------------------------------------------------------------------------
    def attachment(self, content, event):
        uid = self._uuid()
        if self.last is not None:
            self.t += dt.timedelta(milliseconds=50)  # written right after the prompt it belongs to
        hook_name = "SessionStart:startup" if event == "SessionStart" else event
        d = {"parentUuid": self.last, "isSidechain": False, "type": "attachment",
             "attachment": {"type": "hook_additional_context", "content": [content],
                            "hookName": hook_name, "hookEvent": event}}
        return self._env(d, uid, self._fmt(self.t))

    def user(self, text):
        uid = self._uuid()
        ts = self._step(25, 70)
        self.prompt = str(uuid.uuid5(NS, f"{self.name}/prompt/{self.n}"))
        if self.first_prompt_uuid is None:
            self.first_prompt_uuid = uid
        d = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
             "message": {"role": "user", "content": text}, "permissionMode": "default", "promptSource": "user",
             "origin": {"kind": "human"}}
        return self._env(d, uid, ts)

    def _assistant(self, block, stop, same_msg=False):
        uid = self._uuid()
        ts = self._step(2, 9)
        if not same_msg or self.msg is None:
            x = h(self.name, "msg", self.n)
            self.msg = ("msg_01" + x[:22], "req_011C" + x[22:42])
        text_len = len(json.dumps(block, ensure_ascii=False))
        d = {"parentUuid": self.last, "isSidechain": False, "type": "assistant",
             "message": {"id": self.msg[0], "type": "message", "role": "assistant", "model": MODEL,
                         "content": [block], "stop_reason": stop, "stop_sequence": None,
                         "usage": self._usage(20 + text_len // 4)},
             "requestId": self.msg[1]}
        return self._env(d, uid, ts)

    def say(self, text):
        return self._assistant({"type": "text", "text": text}, "end_turn")

    def think(self, text):
        sig = "Eq" + h(self.name, "sig", self.n)[:40] + "...redacted"
        return self._assistant({"type": "thinking", "thinking": text, "signature": sig}, None)

    def tool(self, name, inp, result, tur=None, is_error=False, same_msg=False):
        tid = "toolu_01" + h(self.name, "tool", self.n)[:22]
        a_uid = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use", same_msg)
        uid = self._uuid()
        ts = self._step(1, 9)
        block = {"tool_use_id": tid, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        d = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt, "type": "user",
             "message": {"role": "user", "content": [block]}, "toolUseResult": tur if tur is not None else result,
             "sourceToolAssistantUUID": a_uid}
        return self._env(d, uid, ts)

    # typed tools
    def bash(self, command, desc, out, error=False):
        if error:
            text = "Exit code 1\n" + out
            return self.tool("Bash", {"command": command, "description": desc}, text, "Error: " + text, True)
        return self.tool("Bash", {"command": command, "description": desc}, out,
                         {"stdout": out, "stderr": "", "interrupted": False, "isImage": False})

    def read(self, path, content, start=1):
        total = content.count("\n") + 1
        return self.tool("Read", {"file_path": path}, numbered(content, start),
                         {"type": "text", "file": {"filePath": path, "content": content, "numLines": total,
                                                   "startLine": start, "totalLines": total + start - 1}})

    def edit(self, path, old, new):
        return self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                         f"The file {path} has been updated successfully.",
                         {"filePath": path, "oldString": old, "newString": new, "structuredPatch": [],
                          "userModified": False, "replaceAll": False})

    def write(self, path, content):
        return self.tool("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}",
                         {"type": "create", "filePath": path, "content": content, "structuredPatch": []})

    def grep(self, pattern, path, out):
        files = sorted({l.split(":", 1)[0] for l in out.split("\n") if l})
        return self.tool("Grep", {"pattern": pattern, "path": path, "output_mode": "content", "-n": True}, out,
                         {"mode": "content", "numFiles": len(files), "filenames": files, "content": out,
                          "numLines": out.count("\n") + 1})

    def maple_search(self, query, results):
        payload = [{"type": "text", "text": json.dumps({"results": results}, ensure_ascii=False)}]
        return self.tool("mcp__maple__memory_search", {"query": query, "limit": 5}, payload, payload)

    def stop_hook(self):
        uid = self._uuid()
        ts = self._step(0, 1)
        d = {"parentUuid": self.last, "isSidechain": False, "type": "system", "subtype": "stop_hook_summary",
             "hookCount": 1, "hookInfos": [{"command": "${CLAUDE_PLUGIN_ROOT}/hooks/extract.py"}], "hookErrors": [],
             "preventedContinuation": False, "stopReason": "", "hasOutput": False, "level": "suggestion"}
        return self._env(d, uid, ts)

    def title(self, title):
        self.lines.append({"type": "ai-title", "aiTitle": title, "sessionId": self.sid})

    def write_out(self, gold):
        snap = self.lines[0]
        snap["messageId"] = snap["snapshot"]["messageId"] = self.first_prompt_uuid
        with open(os.path.join(HERE, self.name + ".jsonl"), "w", encoding="utf-8") as f:
            for l in self.lines:
                f.write(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n")
        gold = {"session": self.name, "project": self.cwd, **gold}
        with open(os.path.join(HERE, self.name + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")


def fact(i, kind, lang, text, must, supersedes=None):
    d = {"id": i, "layer": "experience" if kind in ("gotcha", "root_cause", "lesson", "workaround", "fix") else "fact",
         "kind": kind, "lang": lang, "text": text, "must": must}
    if supersedes:
        d["supersedes"] = supersedes
    return d


def decision(i, lang, text, must, chosen, over, why, supersedes=None):
    d = {"id": i, "layer": "decision", "kind": "decision", "lang": lang, "text": text, "must": must,
         "chosen": chosen, "over": over, "why": why}
    if supersedes:
        d["supersedes"] = supersedes
    return d


# =============================================================================================
# Project A: claimflow (English)
# =============================================================================================
A_CWD = "/home/dev/work/claimflow"
A1, A2, A3 = "a1_claimflow_duplicate_fnol", "a2_claimflow_doc_extract", "a3_claimflow_docai_handoff"
A_DSN_PW = "Vx9rT4mQz2pLw8"
A_DSN = f"postgresql://claimflow_app:{A_DSN_PW}@claims-db-staging.internal:5432/claimflow"
A_AKID = "AKIA4XQ7PZ2MNB6KJ3TR"
A_AKSECRET = "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"
A_SLACK = "https://hooks.slack.com/services/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"


def a1():
    s = Session(A1, A_CWD, "fix/duplicate-fnol", "2026-11-02T14:05:00", "2.1.331")
    s.user("Adjusters keep finding duplicate claims from the mobile app: same policy, same loss, two claim numbers "
           "created a few seconds apart. Can you dig into fnol-api? Locally it runs with `pnpm --filter fnol-api dev` "
           "and listens on port 3100.")
    s.say("My first guess is a double-tap on Submit in the app: if the button isn't disabled while the request is in "
          "flight, two POST /v1/claims go out back to back. Before touching the client I'd like to look at the "
          "duplicates in staging to confirm.")
    s.user(f"sure. staging DB is {A_DSN}, use that")
    q = ("select claim_no, policy_id, loss_date, created_at, request_id from claims c "
         "where created_at > now() - interval '7 days' and exists (select 1 from claims d where d.policy_id = c.policy_id "
         "and d.loss_date = c.loss_date and d.id <> c.id) order by policy_id, created_at limit 8;")
    s.bash(f'psql "{A_DSN}" -c "{q}"', "List recent duplicate claims in staging",
           "    claim_no    | policy_id  | loss_date  |         created_at         |              request_id\n"
           "----------------+------------+------------+----------------------------+--------------------------------------\n"
           " CF-2026-118402 | AUT-771203 | 2026-10-29 | 2026-10-30 14:02:11.418+00 | 5b1e0c7a-2f4d-4c1e-9a51-0d3e7f21c9aa\n"
           " CF-2026-118403 | AUT-771203 | 2026-10-29 | 2026-10-30 14:02:21.902+00 | 5b1e0c7a-2f4d-4c1e-9a51-0d3e7f21c9aa\n"
           " CF-2026-118517 | HOM-220914 | 2026-10-30 | 2026-10-31 09:47:03.115+00 | c0a4d7e2-81b9-4f3a-b6d2-77e1a9c04f12\n"
           " CF-2026-118518 | HOM-220914 | 2026-10-30 | 2026-10-31 09:47:13.560+00 | c0a4d7e2-81b9-4f3a-b6d2-77e1a9c04f12\n"
           " CF-2026-118519 | HOM-220914 | 2026-10-30 | 2026-10-31 09:47:24.031+00 | c0a4d7e2-81b9-4f3a-b6d2-77e1a9c04f12\n"
           " CF-2026-118690 | AUT-104556 | 2026-11-01 | 2026-11-01 18:20:40.774+00 | 9e37f1b0-5c62-4d8e-a1f4-3b0c2d9e6a57\n"
           " CF-2026-118691 | AUT-104556 | 2026-11-01 | 2026-11-01 18:20:51.209+00 | 9e37f1b0-5c62-4d8e-a1f4-3b0c2d9e6a57\n"
           "(7 rows)")
    s.say("That kills the client theory. Every duplicate pair (and one triple) carries the same request_id, and Kong "
          "stamps X-Request-Id once at the edge, so a second tap in the app would have produced a new id. The copies "
          "are ~10.5 s apart, which looks like a gateway timeout followed by a retry. Checking the Kong config.")
    s.read(f"{A_CWD}/infra/kong/kong.yaml",
           '_format_version: "3.0"\nservices:\n  - name: fnol-api\n'
           "    url: http://fnol-api.claims.svc.cluster.local:3100\n    retries: 5\n    connect_timeout: 5000\n"
           "    read_timeout: 10000\n    write_timeout: 10000\n    routes:\n      - name: fnol-claims\n"
           "        paths: [/v1/claims]\n        methods: [POST, GET]\n    plugins:\n      - name: correlation-id\n"
           "        config: {header_name: X-Request-Id, generator: uuid, echo_downstream: true}")
    s.grep("sharp\\(", "apps/fnol-api/src",
           "apps/fnol-api/src/claims/claims.service.ts:87:    // thumbnails for the adjuster UI\n"
           "apps/fnol-api/src/claims/claims.service.ts:88:    const thumbs = await Promise.all(dto.photos.map((p) => "
           "sharp(p.buffer).rotate().resize(640).jpeg({ quality: 80 }).toBuffer()));\n"
           "apps/fnol-api/src/claims/claims.service.ts:91:    return this.prisma.claim.create({ data: { ...claimData, "
           "thumbnails: { create: thumbs.map(toThumbRow) } } });")
    s.say("Root cause: Kong retries the upstream call when it hits `read_timeout`, and `retries: 5` (Kong's default) "
          "applies to POST as well. `createClaim` resizes every photo with sharp before it answers; with 6-8 "
          "full-resolution photos that takes 11-14 s, longer than the 10 s `read_timeout` on the fnol-api service. "
          "Kong gives up after 10 s and replays the POST while the original request keeps running and commits, so "
          "every slow submission turns into two or three claims. The ~10.5 s spacing in the table is the timeout "
          "plus the reconnect.")
    s.user("ugh. ok, options?")
    s.say("Three ways to fix it:\n\n"
          "A. Idempotency-Key: the app sends a UUID per submission in an `Idempotency-Key` header; fnol-api stores it "
          "on the claim with a unique index on (policy_id, idempotency_key) and on a repeat returns the existing claim "
          "with 200 instead of creating a new one.\n"
          "B. Set `retries: 0` on the fnol-api service in Kong and move thumbnail generation off the request path.\n"
          "C. Dedupe server-side on (policy_id, loss_date, description hash) within a short window.\n\n"
          "I'd do A, and move thumbnails to a queue either way.")
    s.user("A. B on its own just hides it, the app itself retries on flaky mobile connections so we'd still get "
           "dupes. C would block legit second claims, e.g. two cars from the same household in one hailstorm.")
    s.say("Going with A. I'll start with the schema.")
    s.user("That said, do set retries to 0 on fnol-api in Kong too. Retrying non-idempotent POSTs at the gateway is "
           "just wrong, make that the rule for every POST route we put behind Kong.")
    s.edit(f"{A_CWD}/apps/fnol-api/prisma/schema.prisma",
           '  requestId      String?  @map("request_id")\n\n  @@index([policyId, lossDate])',
           '  requestId      String?  @map("request_id")\n  idempotencyKey String?  @map("idempotency_key")\n\n'
           "  @@index([policyId, lossDate])\n  @@unique([policyId, idempotencyKey])")
    s.bash("pnpm --filter fnol-api exec prisma migrate dev --name claim_idempotency_key", "Create the migration",
           "Environment variables loaded from .env\nPrisma schema loaded from prisma/schema.prisma\n"
           'Datasource "db": PostgreSQL database "claimflow", schema "public" at "claims-db-staging.internal:5432"\n\n'
           "Error: P3014\n\nPrisma Migrate could not create the shadow database. Please make sure the database user "
           "has permission to create databases. Read more about the shadow database (and workarounds) at "
           "https://pris.ly/d/migrate-shadow\n\nOriginal error: \nERROR: permission denied to create database",
           error=True)
    s.say("`prisma migrate dev` builds a throwaway shadow database to diff against, and the claimflow_app role on "
          "staging has no CREATEDB, hence P3014. The .env in apps/fnol-api still points at staging, which is wrong for "
          "migrate dev anyway. I'll generate the migration against the local docker Postgres (`pnpm db:up`, port 5433) "
          "and leave staging to the deploy pipeline: it runs `prisma migrate deploy`, which only applies existing "
          "migrations and needs no shadow database.")
    s.bash("pnpm db:up && DATABASE_URL=postgresql://localhost:5433/claimflow pnpm --filter fnol-api exec prisma "
           "migrate dev --name claim_idempotency_key", "Create the migration against local Postgres",
           "[+] Running 1/1\n \u2714 Container claimflow-postgres-1  Started\n"
           "Applying migration `20261102141503_claim_idempotency_key`\n\n"
           "The following migration(s) have been created and applied from new schema changes:\n\nmigrations/\n"
           "  \u2514\u2500 20261102141503_claim_idempotency_key/\n    \u2514\u2500 migration.sql\n\n"
           "Your database is now in sync with your schema.\n\n"
           "\u2714 Generated Prisma Client (v5.22.0) to ./node_modules/@prisma/client in 212ms")
    s.edit(f"{A_CWD}/apps/fnol-api/src/claims/claims.controller.ts",
           "  async create(@Body() dto: CreateClaimDto) {\n    return this.claims.createClaim(dto);",
           "  async create(@Body() dto: CreateClaimDto, @Headers('idempotency-key') key?: string,\n"
           "               @Res({ passthrough: true }) res?: Response) {\n"
           "    const { claim, replayed } = await this.claims.createClaim(dto, key);\n"
           "    if (replayed) res?.status(200);\n    return claim;")
    s.edit(f"{A_CWD}/infra/kong/kong.yaml", "    retries: 5\n", "    retries: 0\n")
    s.say("Done: `Idempotency-Key` is read in the controller and stored with the unique index, a repeat returns the "
          "stored claim with 200, and the fnol-api service in Kong now has `retries: 0`. Thumbnails are still "
          "generated synchronously; moving them to a queue would be a follow-up.")
    s.user("fine, follow-up is ok. fyi CI is red again on main, some flaky e2e thing, not you. For review send it to "
           "Vivian, she owns fnol-api. She's Chen Jingyi on Slack if the handle search fails.")
    s.bash('gh pr create --base main --title "fnol-api: Idempotency-Key for POST /v1/claims, Kong retries 0" '
           "--reviewer jingyi-chen --body-file /tmp/pr-482.md", "Open the PR",
           "https://github.com/claimflow/claimflow/pull/482")
    s.user("Put this in the PR description too: mobile sends the header starting with app 5.14, and the December "
           "release freeze is Dec 12, so this has to be merged before then.")
    s.bash("gh pr edit 482 --body-file /tmp/pr-482.md", "Update the PR description",
           "https://github.com/claimflow/claimflow/pull/482")
    s.say("Updated the description with the 5.14 dependency and the Dec 12 freeze, and requested review from Vivian.")
    s.user("thanks, nice work")
    s.stop_hook()
    s.title("Fix duplicate FNOL claims from Kong retries")
    s.write_out({
        "order": 1, "language": "en",
        "expected": [
            fact("e1", "config", "en", "fnol-api listens on port 3100 when run locally.", ["fnol-api", "3100"]),
            fact("e2", "command", "en", "Run fnol-api locally with `pnpm --filter fnol-api dev`.",
                 ["pnpm --filter fnol-api dev"]),
            fact("e3", "root_cause", "en",
                 "Duplicate mobile claims: Kong retries the upstream POST when it hits read_timeout (retries: 5 is "
                 "Kong's default and applies to POST); fnol-api's createClaim generated photo thumbnails synchronously "
                 "with sharp (11-14 s), past the 10 s read_timeout, so each replayed POST created another claim. The "
                 "duplicates share one X-Request-Id.", ["Kong", "read_timeout"]),
            decision("e4", "en",
                     "Duplicate claims are prevented with an Idempotency-Key header (unique index on policy_id + "
                     "idempotency_key; a repeat returns the existing claim with 200). Kong retries: 0 alone was "
                     "rejected because the app itself retries on flaky connections, and a description hash dedupe "
                     "because it would block legit second claims (e.g. two cars in one hailstorm).",
                     ["Idempotency-Key"], "Idempotency-Key", ["retries: 0", "description hash"],
                     ["app itself retries", "legit second claims"]),
            fact("e5", "convention", "en",
                 "Kong must not retry non-idempotent POSTs: every POST route put behind Kong gets retries 0 "
                 "(fnol-api already has it).", ["Kong", "non-idempotent"]),
            fact("e6", "fix", "en",
                 "`prisma migrate dev` fails with P3014 against staging because it needs a shadow database and the "
                 "claimflow_app role has no CREATEDB; create migrations against the local docker Postgres and let the "
                 "deploy pipeline run `prisma migrate deploy` (no shadow database needed).",
                 ["P3014", "migrate deploy"]),
            fact("e7", "config", "en", "Local dev Postgres runs in docker, started with `pnpm db:up`, on port 5433.",
                 ["pnpm db:up", "5433"]),
            fact("e8", "convention", "en",
                 "Vivian (Chen Jingyi on Slack) owns fnol-api; fnol-api PRs go to her for review.", ["Vivian"]),
            fact("e9", "constraint", "en",
                 "The December release freeze is Dec 12; the Idempotency-Key change must be merged before it (the "
                 "mobile app sends the header from app 5.14).", ["Dec 12"]),
        ],
        "acceptable": [
            {"must": ["5.14"], "note": "mobile app version that starts sending Idempotency-Key"},
            {"must": ["sharp"], "note": "thumbnails still synchronous; moving them to a queue is a follow-up"},
            {"must": ["X-Request-Id"], "note": "Kong's correlation-id plugin stamps X-Request-Id at the edge"},
        ],
        "forbidden": ["double-tap on Submit", "button isn't disabled", "CI is red again", "CF-2026-118402",
                      "pull/482", "nice work"],
        "secrets": [A_DSN_PW],
    })


def a2():
    s = Session(A2, A_CWD, "feat/doc-extract-ocr", "2026-11-10T09:31:00", "2.1.333")
    s.attachment(maple_block([
        (3, "fact", "8 days ago", "fnol-api listens on port 3100 when run locally"),
        (8, "fact", "8 days ago", "Vivian (Chen Jingyi on Slack) owns fnol-api; PRs go to her"),
        (5, "decision", "8 days ago", "Duplicate claims are prevented with an Idempotency-Key header"),
    ]), "SessionStart")
    s.user("Starting doc-extract today. Context: claim documents (repair estimates, police reports, adjuster field "
           "notes) land in the S3 bucket `cf-claim-docs-prod` (staging: `cf-claim-docs-stg`), and fnol-api enqueues a "
           "job on the BullMQ queue `claims.docs.ocr` after each upload. Also, fnol-api moved to 3110 when we added "
           "the metrics sidecar, so fix the callback URL in the worker's .env.local.")
    s.edit(f"{A_CWD}/apps/doc-extract/.env.local", "FNOL_API_URL=http://localhost:3100",
           "FNOL_API_URL=http://localhost:3110")
    s.say("Callback URL now points at :3110. Before I write the worker we need an OCR engine. Options:\n\n"
          "1. AWS Textract: AnalyzeExpense understands repair estimates and invoices out of the box, we're already on "
          "AWS, access goes through IAM roles.\n"
          "2. Google Document AI: strong form parser and custom extractors, but a new GCP project and claim documents "
          "leaving AWS.\n"
          "3. Self-hosted Tesseract: no per-page cost, but no key-value or table extraction, so we'd write all the "
          "parsing ourselves.\n\nI'd go with 1.")
    s.user("yeah do 1")
    s.say("Textract it is. I'll use AnalyzeExpense for estimates and AnalyzeDocument with FORMS for the rest.")
    s.user("fwiw it's not only the AWS thing: legal already cleared Textract under our existing AWS data processing "
           "agreement. Document AI would need a fresh vendor review, that's ~6 weeks we don't have.")
    s.user(f"here are sandbox creds so you can try it locally: AWS_ACCESS_KEY_ID={A_AKID} "
           f"AWS_SECRET_ACCESS_KEY={A_AKSECRET}")
    s.say("I'd rather not use raw keys, and since they're now in this transcript please rotate them. The repo's AWS "
          "config already has a `claimflow-sandbox` profile, so I'll run everything with "
          "`AWS_PROFILE=claimflow-sandbox`.")
    s.user("fair, rotated. use the profile, and that's the rule for everyone: local AWS access goes through the "
           "claimflow-sandbox profile, no keys in .env files.")
    s.write(f"{A_CWD}/apps/doc-extract/src/ocr/textract.ts",
            "import { TextractClient, AnalyzeExpenseCommand } from '@aws-sdk/client-textract';\n\n"
            "const client = new TextractClient({});\n\n"
            "export async function analyzeExpense(bytes: Uint8Array) {\n"
            "  const out = await client.send(new AnalyzeExpenseCommand({ Document: { Bytes: bytes } }));\n"
            "  return toFields(out.ExpenseDocuments ?? []);\n}\n")
    s.bash("AWS_PROFILE=claimflow-sandbox pnpm --filter doc-extract exec tsx scripts/ocr-sample.ts "
           "fixtures/estimate-3p.pdf", "Try Textract on a 3-page estimate",
           "UnsupportedDocumentException: Request has unsupported document format\n"
           "    at de_UnsupportedDocumentExceptionRes (/home/dev/work/claimflow/node_modules/@aws-sdk/client-textract/"
           "dist-cjs/index.js:2874:21)\n"
           "    at de_CommandError (/home/dev/work/claimflow/node_modules/@aws-sdk/client-textract/dist-cjs/"
           "index.js:1960:19)\n"
           "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
           "    at async /home/dev/work/claimflow/node_modules/@smithy/middleware-serde/dist-cjs/index.js:35:20\n"
           "    at async analyzeExpense (/home/dev/work/claimflow/apps/doc-extract/src/ocr/textract.ts:6:15)\n"
           "    at async main (/home/dev/work/claimflow/apps/doc-extract/scripts/ocr-sample.ts:12:3) {\n"
           "  '$fault': 'client',\n  '$metadata': { httpStatusCode: 400, requestId: '7f0c2a91-6b3e-4d15-a2c8-"
           "0e9b71f4d6aa', attempts: 1 }\n}", error=True)
    s.say("The file is fine, the API isn't: Textract's synchronous calls (AnalyzeExpense, AnalyzeDocument) accept a "
          "PDF only if it is single-page. Multipage PDFs (most repair estimates are 2-5 pages) have to go through the "
          "async StartExpenseAnalysis / StartDocumentAnalysis with the document in S3, then GetExpenseAnalysis for "
          "the result. That suits us, the documents are already in cf-claim-docs-*.\n\n"
          "For the completion signal: A) the worker polls GetExpenseAnalysis every 5 s; B) Textract publishes to an "
          "SNS topic that fans into SQS, and the worker consumes that. A is less infra, B scales better.")
    s.user("B. We already have the SQS consumer lib, and polling a couple hundred docs an hour every 5 s would eat "
           "the Get* TPS quota on the sandbox account.")
    s.edit(f"{A_CWD}/infra/terraform/textract.tf", "# textract\n",
           '# textract\nresource "aws_sns_topic" "textract_done" { name = "cf-textract-done" }\n'
           'resource "aws_sqs_queue" "textract_done" { name = "cf-textract-done-q" }\n'
           'resource "aws_sns_topic_subscription" "textract_done" {\n  topic_arn = aws_sns_topic.textract_done.arn\n'
           '  protocol  = "sqs"\n  endpoint  = aws_sqs_queue.textract_done.arn\n}\n'
           'resource "aws_iam_role" "textract_publish" { name = "TextractPublishRole" }\n')
    s.say("Added SNS topic `cf-textract-done` feeding SQS queue `cf-textract-done-q`, plus the `TextractPublishRole` "
          "Textract assumes to publish. doc-extract starts each job with NotificationChannel pointing at that topic "
          "and consumes the queue.")
    s.user("set the concurrency on the ocr queue worker to 4, sandbox Textract limits are low")
    s.edit(f"{A_CWD}/apps/doc-extract/src/worker.ts", "  { connection, concurrency: 16 },",
           "  { connection, concurrency: 4 },")
    s.bash("pnpm --filter doc-extract test", "Run doc-extract tests",
           " \u2713 src/ocr/textract.test.ts (9 tests) 41ms\n \u2713 src/queue/consumer.test.ts (3 tests) 12ms\n"
           " \u2713 src/worker.test.ts (2 tests) 8ms\n\n Test Files  3 passed (3)\n      Tests  14 passed (14)\n"
           "   Start at  11:42:07\n   Duration  2.31s")
    s.user("one more: retention. Originals are kept 7 years per the state insurance regulator, the OCR json only 1 "
           "year. Lifecycle rules live in infra/terraform/s3.tf.")
    s.edit(f"{A_CWD}/infra/terraform/s3.tf", "  # lifecycle: TODO\n",
           '  lifecycle_rule {\n    id      = "ocr-json-1y"\n    filter  { prefix = "ocr/" }\n'
           "    expiration { days = 365 }\n  }\n"
           '  lifecycle_rule {\n    id      = "originals-7y"\n    filter  { prefix = "originals/" }\n'
           "    expiration { days = 2555 }\n  }\n")
    s.say("Lifecycle rules added: `ocr/` expires after 365 days, `originals/` after 2555 days (7 years).")
    s.user("lunch. my brain is fried, I'll review after")
    s.title("doc-extract: Textract OCR worker")
    s.write_out({
        "order": 2, "language": "en",
        "expected": [
            fact("e1", "config", "en",
                 "fnol-api now listens on port 3110 locally (moved when the metrics sidecar was added); doc-extract's "
                 "FNOL_API_URL points at it.", ["3110"], supersedes=f"{A1}#e1"),
            fact("e2", "config", "en",
                 "Claim documents are stored in the S3 bucket cf-claim-docs-prod (staging: cf-claim-docs-stg).",
                 ["cf-claim-docs-prod"]),
            fact("e3", "config", "en",
                 "After each upload fnol-api enqueues an OCR job on the BullMQ queue claims.docs.ocr, consumed by "
                 "doc-extract with worker concurrency 4 (sandbox Textract limits are low).",
                 ["claims.docs.ocr", "BullMQ"]),
            decision("e4", "en",
                     "OCR engine for doc-extract: AWS Textract (AnalyzeExpense for estimates), chosen over Google "
                     "Document AI (would need a fresh ~6-week vendor review; legal already cleared Textract under the "
                     "AWS data processing agreement) and self-hosted Tesseract (no key-value/table extraction).",
                     ["Textract", "vendor review"], "Textract", ["Document AI", "Tesseract"], ["vendor review"]),
            fact("e5", "convention", "en",
                 "Local AWS access goes through the claimflow-sandbox profile (AWS_PROFILE=claimflow-sandbox); no AWS "
                 "keys in .env files.", ["claimflow-sandbox"]),
            fact("e6", "gotcha", "en",
                 "Textract's synchronous AnalyzeExpense/AnalyzeDocument accept a PDF only if it is single-page "
                 "(multipage fails with UnsupportedDocumentException); multipage documents need the async "
                 "StartExpenseAnalysis/StartDocumentAnalysis on an S3 object.", ["single-page", "StartExpenseAnalysis"]),
            decision("e7", "en",
                     "Textract job completion is signalled via SNS -> SQS (reusing the SQS consumer lib) rather than "
                     "by polling GetExpenseAnalysis every 5 s, which would eat the Get* TPS quota.",
                     ["SNS"], "SNS", ["poll"], ["TPS"]),
            fact("e8", "config", "en",
                 "Textract publishes job completion to SNS topic cf-textract-done, which feeds SQS queue "
                 "cf-textract-done-q (TextractPublishRole).", ["cf-textract-done"]),
            fact("e9", "constraint", "en",
                 "Retention: original claim documents are kept 7 years (state insurance regulator), OCR JSON 1 year; "
                 "the lifecycle rules live in infra/terraform/s3.tf.", ["7 years", "s3.tf"]),
        ],
        "acceptable": [
            {"must": ["2555"], "note": "lifecycle rule detail for the 7-year retention"},
            {"must": ["AnalyzeDocument"], "note": "FORMS analysis for non-estimate documents"},
        ],
        "forbidden": ["port 3100 when run locally", "owns fnol-api; PRs go to her",
                      "prevented with an Idempotency-Key header", "brain is fried", "14 passed", "de_CommandError"],
        "secrets": [A_AKID, A_AKSECRET],
    })


def a3():
    s = Session(A3, A_CWD, "feat/docai-provider", "2026-11-24T15:12:00", "2.1.336")
    s.user("Heads-up before we start: Jingyi moved to the underwriting team last week. Marcus Webb (Marc) owns "
           "fnol-api now, so fnol-api PRs go to him.")
    s.attachment(maple_block([
        (8, "fact", "22 days ago", "Vivian (Chen Jingyi on Slack) owns fnol-api; PRs go to her"),
        (14, "decision", "14 days ago", "OCR engine for doc-extract: AWS Textract, chosen over Google Document AI "
                                        "and Tesseract"),
    ]), "UserPromptSubmit")
    s.say("Noted: fnol-api reviews go to Marcus from now on.")
    s.user("Main thing today: we're replacing Textract with Document AI in doc-extract. We ran the pilot on 300 real "
           "claims: on the handwritten adjuster field notes Textract got ~61% of fields right, Document AI's custom "
           "extractor got 94%. Legal finished the GCP assessment last week, so that's no longer a blocker. The "
           "processor is in the `eu` location; claim documents must stay in the EU.")
    s.say("Two ways to do the swap:\n\n(a) put an `OcrProvider` interface in doc-extract, selected by an "
          "`OCR_PROVIDER` env var (docai | textract), and keep Textract behind it for a month so we can compare both "
          "on live traffic;\n(b) rip Textract out now and delete the SNS/SQS plumbing.\n\n"
          "(b) is less code, (a) gives us a rollback path.")
    s.user("(a), but default to docai. We'll delete the Textract path after the December release.")
    s.maple_search("doc-extract OCR queue name concurrency", [
        {"id": 9, "layer": "fact", "content": "After each upload fnol-api enqueues an OCR job on the BullMQ queue "
                                              "claims.docs.ocr, consumed by doc-extract with worker concurrency 4",
         "score": 0.83},
        {"id": 15, "layer": "fact", "content": "Textract publishes job completion to SNS topic cf-textract-done, "
                                               "which feeds SQS queue cf-textract-done-q", "score": 0.71},
    ])
    s.grep("OCR_QUEUE =", ".",
           "apps/doc-extract/src/queues.ts:3:export const OCR_QUEUE = 'doc-extract.ocr';\n"
           "libs/queues/src/index.ts:7:export const OCR_QUEUE = 'doc-extract.ocr';")
    s.say("The stored note says claims.docs.ocr, but the code uses `doc-extract.ocr` in both apps/doc-extract and "
          "libs/queues. Was it renamed?")
    s.user("yes, the queue is doc-extract.ocr now. Platform wants every queue prefixed with the name of the service "
           "that owns it.")
    s.write(f"{A_CWD}/apps/doc-extract/src/ocr/provider.ts",
            "export interface OcrProvider {\n  extract(doc: S3DocRef): Promise<OcrResult>;\n}\n\n"
            "export function providerFromEnv(env = process.env): OcrProvider {\n"
            "  return (env.OCR_PROVIDER ?? 'docai') === 'textract' ? new TextractProvider() : new DocAiProvider();\n}\n")
    s.write(f"{A_CWD}/apps/doc-extract/src/ocr/docai.ts",
            "import { DocumentProcessorServiceClient } from '@google-cloud/documentai';\n\n"
            "export class DocAiProvider implements OcrProvider {\n"
            "  private client = new DocumentProcessorServiceClient();\n"
            "  async extract(doc: S3DocRef) {\n"
            "    const [res] = await this.client.processDocument({ name: processorName(), rawDocument: await load(doc) });\n"
            "    return toOcrResult(res.document);\n  }\n}\n")
    s.bash("OCR_PROVIDER=docai pnpm --filter doc-extract test -- ocr", "Run the OCR tests with Document AI",
           " FAIL  src/ocr/docai.test.ts > docai provider > extracts fields from field-notes-2p.pdf\n"
           "Error: 5 NOT_FOUND: Processor projects/claimflow-ocr/locations/eu/processors/4f1a9c7e2b3d5a60 not found.\n"
           " \u276f callErrorFromStatus node_modules/@grpc/grpc-js/build/src/call.js:31:19\n"
           " \u276f Object.onReceiveStatus node_modules/@grpc/grpc-js/build/src/client.js:193:76\n\n"
           " Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 15 passed (16)", error=True)
    s.say("The processor exists; the client is talking to the wrong region. `DocumentProcessorServiceClient` "
          "defaults to the US endpoint, and a processor in the `eu` location isn't visible there, so the call comes "
          "back NOT_FOUND instead of a location error. The client has to be created with "
          "`apiEndpoint: 'eu-documentai.googleapis.com'` whenever the processor is in eu.")
    s.edit(f"{A_CWD}/apps/doc-extract/src/ocr/docai.ts",
           "  private client = new DocumentProcessorServiceClient();",
           "  // eu processors are only reachable through the regional endpoint\n"
           "  private client = new DocumentProcessorServiceClient({ apiEndpoint: 'eu-documentai.googleapis.com' });")
    s.bash("OCR_PROVIDER=docai pnpm --filter doc-extract test -- ocr", "Re-run the OCR tests",
           " \u2713 src/ocr/docai.test.ts (4 tests) 388ms\n \u2713 src/ocr/textract.test.ts (9 tests) 40ms\n"
           " \u2713 src/ocr/provider.test.ts (3 tests) 6ms\n\n Test Files  3 passed (3)\n      Tests  16 passed (16)")
    s.user(f"nice. payout-svc thing next: failed payouts should alert #claims-payouts-alerts. webhook is {A_SLACK}")
    s.say("I won't commit the URL. payout-svc will read it from AWS Secrets Manager at "
          "`claimflow/prod/payout-alert-webhook` (exposed as `PAYOUT_ALERT_WEBHOOK`); could you put it there? And "
          "since it's been pasted here, regenerate it in Slack afterwards.")
    s.user("done, it's in secrets manager. also since finance moved to the 4pm ET ACH cutoff, the payout batch runs "
           "at 15:00 ET on weekdays now, update the cron.")
    s.edit(f"{A_CWD}/apps/payout-svc/src/batch/batch.scheduler.ts",
           "  @Cron('30 17 * * 1-5', { timeZone: 'America/New_York' })",
           "  @Cron('0 15 * * 1-5', { timeZone: 'America/New_York' })")
    s.edit(f"{A_CWD}/apps/payout-svc/src/config/secrets.ts",
           "export const SECRET_PATHS = {\n",
           "export const SECRET_PATHS = {\n  PAYOUT_ALERT_WEBHOOK: 'claimflow/prod/payout-alert-webhook',\n")
    s.say("Payout batch cron is now `0 15 * * 1-5` in America/New_York, and failed payouts post to "
          "#claims-payouts-alerts through PAYOUT_ALERT_WEBHOOK.")
    s.user("thanks! that's it for today. demo went well btw \U0001f389")
    s.say("Glad to hear it. Enjoy the rest of the day.")
    s.stop_hook()
    s.title("Switch doc-extract OCR to Document AI")
    s.write_out({
        "order": 3, "language": "en",
        "expected": [
            fact("e1", "convention", "en",
                 "Marcus Webb (Marc) owns fnol-api now and reviews its PRs; Chen Jingyi moved to the underwriting team.",
                 ["Marcus"], supersedes=f"{A1}#e8"),
            decision("e2", "en",
                     "doc-extract's OCR moves from AWS Textract to Google Document AI: in a 300-claim pilot on "
                     "handwritten adjuster field notes Textract got ~61% of fields right vs 94% for Document AI's "
                     "custom extractor, and legal has finished the GCP assessment.",
                     ["Document AI"], "Document AI", ["Textract"], ["handwritten", "94%"], supersedes=f"{A2}#e4"),
            decision("e3", "en",
                     "The OCR engine sits behind an OcrProvider interface selected by OCR_PROVIDER (docai | textract, "
                     "default docai); Textract stays behind it for about a month to compare on live traffic and keep a "
                     "rollback path, instead of having to rip Textract out now. The Textract path is deleted after the "
                     "December release.", ["OCR_PROVIDER"], "OcrProvider", ["rip Textract out"], ["live traffic"]),
            fact("e4", "config", "en", "The OCR queue is now doc-extract.ocr (renamed from claims.docs.ocr).",
                 ["doc-extract.ocr"], supersedes=f"{A2}#e3"),
            fact("e5", "convention", "en",
                 "Every queue name is prefixed with the name of the service that owns it (platform rule), e.g. "
                 "doc-extract.ocr.", ["prefixed", "queue"]),
            fact("e6", "fix", "en",
                 "The Document AI processor is in the eu location (claim documents must stay in the EU); "
                 "DocumentProcessorServiceClient defaults to the US endpoint and answers NOT_FOUND for an eu "
                 "processor, so create it with apiEndpoint 'eu-documentai.googleapis.com'.",
                 ["eu-documentai.googleapis.com"]),
            fact("e7", "config", "en",
                 "payout-svc failed-payout alerts go to Slack #claims-payouts-alerts; the webhook lives in AWS Secrets "
                 "Manager at claimflow/prod/payout-alert-webhook (env PAYOUT_ALERT_WEBHOOK), never in the repo.",
                 ["claims-payouts-alerts", "payout-alert-webhook"]),
            fact("e8", "config", "en",
                 "payout-svc's payout batch runs at 15:00 America/New_York on weekdays (`0 15 * * 1-5`) because "
                 "finance moved to the 4pm ET ACH cutoff.", ["0 15 * * 1-5"]),
        ],
        "acceptable": [
            {"must": ["stay in the EU"], "note": "data-residency constraint; also part of e6"},
            {"must": ["61%"], "note": "pilot numbers; part of e2"},
        ],
        "forbidden": ["owns fnol-api; PRs go to her", "OCR engine for doc-extract: AWS Textract",
                      "enqueues an OCR job on the BullMQ queue claims.docs.ocr",
                      "Textract publishes job completion to SNS topic", "demo went well", "15 passed",
                      "callErrorFromStatus"],
        "secrets": [A_SLACK],
    })


# =============================================================================================
# Project B: jiazheng-dispatch 家政派单 (Chinese with code-switching)
# =============================================================================================
B_CWD = "/home/dev/work/jiazheng-dispatch"
B1, B2, B3 = "b1_jiazheng_repeat_dispatch", "b2_jiazheng_ayi_ranking", "b3_jiazheng_tencent_map"
B_MYSQL_PW = "Qw8#zLp2vN6t"
B_DING_TOKEN = "5f2c9e1a7b3d4f608e91c2ab47d0e6f3b8a1c5d9e2f7046b1a3c8d5e9f20b7c4"
B_AK_ID = "LTAI5tQ8mZ3vKpX9rN2wYh7B"
B_AK_SECRET = "8fJ2kLmN4pQ7rS9tV1wX3yZ5aB6cD0eF"


def b1():
    s = Session(B1, B_CWD, "fix/dispatch-rebalance", "2026-11-04T10:02:00", "2.1.331")
    s.user("线上有个 bug：阿姨已经接单了，过几分钟订单状态又变回「待派单」，然后被派给了另一个阿姨，昨天有客户投诉两个阿姨"
           "同时上门。帮我查下 dispatch-engine。本地启动用 "
           "`./mvnw -pl dispatch-engine spring-boot:run -Dspring-boot.run.profiles=local`，端口 8085。")
    s.say("我先怀疑是 Redisson 分布式锁的问题：接单时会加 `lock:order:{orderId}`，如果 leaseTime 比业务处理时间短，锁提前释放，"
          "派单线程就能再拿到锁把单重新派出去。先拉一下这单的日志确认。")
    s.bash("kubectl -n jz-prod logs deploy/dispatch-engine --since=3h | grep -E 'orderId=88231|lock:order:88231|"
           "poll timeout|partitions' | head -40", "拉订单 88231 的派单日志",
           "2026-11-03 14:20:05.112 INFO  [dispatch-1] c.j.d.lock.OrderLock      : acquired lock:order:88231 lease=10s\n"
           "2026-11-03 14:20:05.291 INFO  [dispatch-1] c.j.d.service.Dispatcher  : orderId=88231 WAIT_DISPATCH -> "
           "DISPATCHED ayiId=5120\n"
           "2026-11-03 14:20:05.296 INFO  [dispatch-1] c.j.d.lock.OrderLock      : released lock:order:88231 held=184ms\n"
           "2026-11-03 14:20:31.870 INFO  [grab-3]     c.j.d.service.GrabService : orderId=88231 DISPATCHED -> "
           "ACCEPTED ayiId=5120\n"
           "2026-11-03 14:25:09.447 INFO  [kafka-coordinator] o.a.k.c.c.i.ConsumerCoordinator : [Consumer "
           "clientId=dispatch-engine-0, groupId=dispatch-engine-cg] consumer poll timeout has expired. This means the "
           "time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which "
           "typically implies that the poll loop is spending too much time processing messages.\n"
           "2026-11-03 14:25:09.452 INFO  [kafka-coordinator] o.a.k.c.c.i.ConsumerCoordinator : [Consumer "
           "clientId=dispatch-engine-0, groupId=dispatch-engine-cg] Revoking previously assigned partitions "
           "[order_created-3]\n"
           "2026-11-03 14:25:14.018 INFO  [kafka-coordinator] o.a.k.c.c.i.ConsumerCoordinator : [Consumer "
           "clientId=dispatch-engine-0, groupId=dispatch-engine-cg] Adding newly assigned partitions: order_created-3\n"
           "2026-11-03 14:25:40.733 INFO  [dispatch-2] c.j.d.lock.OrderLock      : acquired lock:order:88231 lease=10s\n"
           "2026-11-03 14:25:40.902 INFO  [dispatch-2] c.j.d.service.Dispatcher  : orderId=88231 ACCEPTED -> "
           "WAIT_DISPATCH (re-dispatch)\n"
           "2026-11-03 14:25:40.905 INFO  [dispatch-2] c.j.d.lock.OrderLock      : released lock:order:88231 held=172ms")
    s.say("锁这块可以排除：每次 acquired / released 都成对出现，持有时间 170~190ms，离 10s 的 leaseTime 差得远。问题在中间那段："
          "`consumer poll timeout has expired`，然后 partition order_created-3 被 revoke 又重新分配，之后 88231 被又处理了一遍，"
          "状态从 ACCEPTED 被改回 WAIT_DISPATCH。我看下 consumer 配置和 listener。")
    s.read(f"{B_CWD}/dispatch-engine/src/main/resources/application.yml",
           "spring:\n  kafka:\n    bootstrap-servers: ${KAFKA_BROKERS}\n    consumer:\n      group-id: dispatch-engine-cg\n"
           "      max-poll-records: 500\n      enable-auto-commit: false\n      properties:\n"
           "        max.poll.interval.ms: 300000\n    listener:\n      ack-mode: manual\n      type: batch\n"
           "dispatch:\n  topic: order_created\n  radius-km: 5   # 本地默认值")
    s.read(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/listener/DispatchListener.java",
           '    @KafkaListener(topics = "${dispatch.topic}", batch = "true")\n'
           "    public void onOrders(List<ConsumerRecord<String, OrderCreated>> records, Acknowledgment ack) {\n"
           "        for (var r : records) {\n            var order = r.value();\n"
           "            var candidates = ayiRepo.findNearby(order.lat(), order.lng(), props.getRadiusKm());\n"
           "            for (var ayi : candidates) {\n"
           "                ayi.setDistanceM(amapClient.distance(ayi.location(), order.location())); // 高德 /v3/distance\n"
           "            }\n            dispatcher.dispatch(order, candidates);\n        }\n        ack.acknowledge();\n    }",
           start=31)
    s.say("找到了。根因：listener 一次 poll 最多拿 500 条 order_created，每个订单对每个候选阿姨串行调一次高德 `/v3/distance`"
          "（单次 ~150ms，一单平均 5 个候选），一批处理下来要 5~6 分钟，超过了 `max.poll.interval.ms`（300000，即 5 分钟）。"
          "consumer 被踢出 group 触发 rebalance，这一批还没 ack，offset 没提交，于是整批被重新消费。而 `Dispatcher.dispatch` "
          "开头直接 `updateById` 把状态写成 WAIT_DISPATCH，不管订单当前是什么状态，所以已经被阿姨接单（ACCEPTED）的单又被打回"
          "待派单，重新派给了别人。")
    s.user("卧槽，难怪只有晚高峰出问题。怎么改？")
    s.say("几个方案：\n"
          "1. 把 `max-poll-records` 降到 50：改一行配置，但高德慢的时候还是可能超时，治标。\n"
          "2. 改用高德的批量距离接口：`/v3/distance` 的 origins 一次可以传多个（最多 100 个），一个订单的所有候选阿姨一次算完，"
          "单条消息从 ~750ms 降到 ~150ms。\n"
          "3. listener 里把消息丢到线程池异步处理，poll 线程马上返回。\n\n"
          "不管选哪个，状态更新都要改成带条件的 CAS：`UPDATE jz_order SET status=? WHERE id=? AND status=?`，重复消费时影响行数"
          "为 0 就直接跳过。")
    s.user("2 吧。配合把 max-poll-records 调到 50。")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/resources/application.yml", "      max-poll-records: 500",
           "      max-poll-records: 50")
    s.user("顺便说下为啥不选 3：线程池异步的话 offset 提交跟实际处理结果对不上，进程一重启，线程池里没跑完的就丢单了，之前 "
           "settle-job 就踩过这个坑。")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/service/Dispatcher.java",
           "        order.setStatus(OrderStatus.WAIT_DISPATCH);\n        orderMapper.updateById(order);",
           "        if (orderMapper.updateStatus(order.getId(), order.getStatus(), OrderStatus.WAIT_DISPATCH) == 0) {\n"
           "            log.warn(\"skip stale dispatch, orderId={} status changed\", order.getId());\n            return;\n"
           "        }")
    s.say("状态流转改成了 `orderMapper.updateStatus(id, from, to)`，影响行数为 0 时打 warn 并跳过，不会再覆盖已接单的状态。"
          "批量距离接口的改动也加在 `AmapClient.distances(origins, dest)` 里了。")
    s.user("对，以后订单状态一律这么改，禁止直接 updateById 改 status，写进 CONTRIBUTING.md。另外派单半径现在是 5 公里，"
           "线上以 Nacos 的 `dispatch.radius-km` 为准，yml 里那个只是本地默认值。")
    s.edit(f"{B_CWD}/CONTRIBUTING.md", "## 数据访问\n",
           "## 数据访问\n\n- 订单状态只能通过 `OrderMapper.updateStatus(id, from, to)` 修改（带当前状态条件），"
           "禁止用 `updateById` 直接改 status。\n")
    s.bash("./mvnw -pl dispatch-engine test -q", "跑 dispatch-engine 单测",
           "[ERROR] Tests run: 1, Failures: 0, Errors: 1, Skipped: 0, Time elapsed: 4.127 s <<< FAILURE! - in "
           "com.jz.dispatch.DispatcherTest\n[ERROR] contextLoads  Time elapsed: 0.011 s  <<< ERROR!\n"
           "java.lang.IllegalStateException: Failed to load ApplicationContext for [WebMergedContextConfiguration@6b2e2a3f "
           "testClass = com.jz.dispatch.DispatcherTest]\n"
           "Caused by: com.alibaba.nacos.api.exception.NacosException: Client not connected, current status:STARTING\n"
           "Caused by: java.net.ConnectException: Connection refused: /127.0.0.1:8848\n[ERROR] BUILD FAILURE",
           error=True)
    s.say("单测起 Spring 上下文时会去连 Nacos（127.0.0.1:8848），本地和 CI 都没有 Nacos，于是直接 Failed to load "
          "ApplicationContext。test profile 里要把 `spring.cloud.nacos.config.enabled` 和 "
          "`spring.cloud.nacos.discovery.enabled` 都设成 false，配置只走 application-test.yml 本身。")
    s.edit(f"{B_CWD}/dispatch-engine/src/test/resources/application-test.yml", "spring:\n",
           "spring:\n  cloud:\n    nacos:\n      config:\n        enabled: false\n      discovery:\n        enabled: false\n")
    s.bash("./mvnw -pl dispatch-engine test -q", "重跑单测",
           "[INFO] Tests run: 42, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.user(f"ok 提 MR 吧。dispatch-engine 是大刘负责的，就是刘振宇，MR assign 给他。你本地要跑集成测试的话测试库在这："
           f"jdbc:mysql://10.20.3.15:3306/jz_dispatch user=jz_dev password={B_MYSQL_PW}")
    s.bash('glab mr create --title "fix(dispatch): 批量距离 + 状态 CAS 更新，修复重复派单" --assignee liuzhenyu '
           "--target-branch main --yes", "提 MR",
           "!317 fix(dispatch): 批量距离 + 状态 CAS 更新，修复重复派单\n"
           "https://git.jz.internal/jz/jiazheng-dispatch/-/merge_requests/317")
    s.say("MR !317 已提，assign 给大刘（刘振宇）。测试库密码我没写进仓库，只放在本地环境变量里。")
    s.user("辛苦了，今天先到这，下午还得去开需求评审 \U0001f62e\u200d\U0001f4a8")
    s.title("修复 dispatch-engine 重复派单")
    s.write_out({
        "order": 1, "language": "mixed",
        "expected": [
            fact("e1", "command", "zh",
                 "本地启动 dispatch-engine：`./mvnw -pl dispatch-engine spring-boot:run "
                 "-Dspring-boot.run.profiles=local`，端口 8085。", ["spring-boot:run", "8085"]),
            fact("e2", "root_cause", "zh",
                 "重复派单的根因：dispatch-engine 一次 poll 500 条 order_created，每条串行调高德距离接口，一批处理超过 "
                 "max.poll.interval.ms（5 分钟），consumer 被踢出 group 触发 rebalance，offset 未提交、整批重复消费；"
                 "Dispatcher 又用 updateById 无条件把状态写回 WAIT_DISPATCH，覆盖了阿姨已接单的状态。",
                 ["max.poll.interval.ms", "rebalance"]),
            decision("e3", "zh",
                     "修复重复派单选方案 2：改用高德批量距离接口（一单的候选阿姨一次算完），同时 max-poll-records 降到 50；"
                     "不选线程池异步（offset 提交和处理结果对不上，进程重启会丢单，settle-job 踩过）；只调 "
                     "max-poll-records 是治标。", ["批量距离接口"], "批量距离接口", ["线程池"], ["丢单"]),
            fact("e4", "config", "zh", "dispatch-engine 的距离计算走高德 Web 服务 `/v3/distance`（origins 一次最多 100 个）。",
                 ["高德", "/v3/distance"]),
            fact("e5", "convention", "zh",
                 "订单状态一律通过 `orderMapper.updateStatus(id, from, to)` 带当前状态条件更新（CAS），影响行数为 0 就跳过；"
                 "禁止直接 updateById 改 status（写在 CONTRIBUTING.md）。", ["updateStatus", "updateById"]),
            fact("e6", "fix", "zh",
                 "dispatch-engine 单测会去连 Nacos（127.0.0.1:8848）导致 Failed to load ApplicationContext；"
                 "application-test.yml 里要把 spring.cloud.nacos.config.enabled 和 spring.cloud.nacos.discovery.enabled "
                 "设为 false。", ["Nacos", "application-test.yml"]),
            fact("e7", "convention", "zh", "dispatch-engine 由大刘（刘振宇）负责，MR assign 给他。", ["大刘"]),
            fact("e8", "config", "zh", "dispatch-engine 消费 Kafka topic `order_created`，消费组 `dispatch-engine-cg`。",
                 ["order_created", "dispatch-engine-cg"]),
            fact("e9", "config", "zh", "派单半径 5 公里，线上以 Nacos 的 `dispatch.radius-km` 为准（yml 里只是本地默认值）。",
                 ["dispatch.radius-km", "5 公里"]),
        ],
        "acceptable": [
            {"must": ["10.20.3.15"], "note": "测试库地址（不含密码）"},
            {"must": ["max-poll-records"], "note": "降到 50，属于 e3"},
        ],
        "forbidden": ["锁提前释放", "leaseTime 比业务处理时间短", "下午还得去开需求评审", "held=184ms", "Tests run: 42",
                      "merge_requests/317", "卧槽"],
        "secrets": [B_MYSQL_PW],
    })


def b2():
    s = Session(B2, B_CWD, "feat/ayi-ranking", "2026-11-13T02:18:00", "2.1.334")
    s.attachment(maple_block([
        (9, "fact", "9 天前", "派单半径 5 公里，线上以 Nacos 的 dispatch.radius-km 为准"),
        (7, "fact", "9 天前", "dispatch-engine 由大刘（刘振宇）负责，MR assign 给他"),
        (5, "fact", "9 天前", "订单状态一律用 updateStatus 带条件更新，禁止 updateById 改 status"),
    ]), "SessionStart")
    s.user("今天做派单的阿姨排序。需求：候选阿姨按「距离 60% + 评分 40%」加权打分，分高的先派；健康证过期的阿姨直接过滤掉，"
           "不能派单，这个是监管要求。另外同步一下：派单半径已经调成 3 公里了，运营反馈阿姨路上时间太长。")
    s.grep("radius-km", ".",
           "config/nacos/dispatch-engine-prod.yaml:4:  radius-km: 5\n"
           "dispatch-engine/src/main/resources/application.yml:15:  radius-km: 5   # 本地默认值")
    s.edit(f"{B_CWD}/config/nacos/dispatch-engine-prod.yaml", "  radius-km: 5", "  radius-km: 3")
    s.say("Nacos 的 prod 配置已经改成 `dispatch.radius-km: 3`。评分数据在 ayi-profile 服务里，排序时每单都 RPC 去拉评分太慢，"
          "两个方案：\nA. dispatch-engine 本地用 Caffeine 缓存评分，TTL 10 分钟；\n"
          "B. ayi-profile 评分变化时发 Kafka 事件，dispatch-engine 维护一份 Redis hash `ayi:score`。\n"
          "再激进一点，也可以直接引入 Elasticsearch，用 geo_distance + function_score 把筛选和打分一次查完。")
    s.user("ES 不要，没人运维。A 吧，评分一天也就变几次，10 分钟延迟无所谓。")
    s.write(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/rank/ScoreCache.java",
            "@Component\npublic class ScoreCache {\n    private final LoadingCache<Long, BigDecimal> cache;\n\n"
            "    public ScoreCache(AyiProfileClient client) {\n"
            "        this.cache = Caffeine.newBuilder().maximumSize(50_000)\n"
            "            .expireAfterWrite(Duration.ofMinutes(10)).build(client::score);\n    }\n\n"
            "    public BigDecimal score(long ayiId) { return cache.get(ayiId); }\n}\n")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/domain/Ayi.java",
           "    private String phone;\n",
           "    private String phone;\n\n    @TableField(typeHandler = JacksonTypeHandler.class)\n"
           "    private List<Cert> certs;\n")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/rank/CandidateRanker.java",
           "        return candidates;",
           "        return candidates.stream()\n            .filter(this::hasValidHealthCert)\n"
           "            .sorted(Comparator.comparing((Ayi a) -> 0.6 * distanceScore(a) + 0.4 * ratingScore(a)).reversed())\n"
           "            .toList();")
    s.bash("./mvnw -pl dispatch-engine test -q -Dtest=CandidateRankerTest", "跑排序单测",
           "[ERROR] rankFiltersExpiredHealthCert  Time elapsed: 0.214 s  <<< ERROR!\n"
           'java.lang.NullPointerException: Cannot invoke "java.util.List.stream()" because the return value of '
           '"com.jz.dispatch.domain.Ayi.getCerts()" is null\n'
           "\tat com.jz.dispatch.rank.CandidateRanker.hasValidHealthCert(CandidateRanker.java:58)\n"
           "\tat com.jz.dispatch.rank.CandidateRanker.rank(CandidateRanker.java:31)\n"
           "[ERROR] Tests run: 6, Failures: 0, Errors: 1, Skipped: 0", error=True)
    s.say("数据库里 certs 是有值的，问题在 MyBatis-Plus：字段上写的 `@TableField(typeHandler = JacksonTypeHandler.class)` "
          "只在写入时生效，查询要走 resultMap 才会用这个 typeHandler。实体类上必须加 "
          "`@TableName(value = \"ayi\", autoResultMap = true)`，否则 selectList 查出来 certs 一直是 null。")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/domain/Ayi.java",
           '@TableName("ayi")', '@TableName(value = "ayi", autoResultMap = true)')
    s.bash("./mvnw -pl dispatch-engine test -q -Dtest=CandidateRankerTest", "重跑",
           "[INFO] Tests run: 6, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.say("测试过了。另外我看 dispatch-engine 还在 Spring Boot 3.1，要不要顺手升级到 3.3？")
    s.user("别，这次不动，升级单独排期。顺便记一下结算：settle-job 是 XXL-JOB 调度的，每天凌晨 2 点跑，cron "
           "`0 0 2 * * ?`，JobHandler 叫 `dailySettleHandler`。失败要在钉钉群报警，机器人 webhook："
           f"https://oapi.dingtalk.com/robot/send?access_token={B_DING_TOKEN} ，你配到 settle-job 的告警里。")
    s.say("webhook 我不写进仓库：token 放到 Nacos 加密配置 `jz.alert.dingtalk-token`（cipher- 前缀，KMS 解密），"
          "settle-job 启动时读取，告警地址在代码里拼。")
    s.edit(f"{B_CWD}/settle-job/src/main/resources/application.yml", "alert:\n",
           "alert:\n  dingtalk:\n    token: ${jz.alert.dingtalk-token}\n")
    s.user("对，以后所有 token、密钥都走 Nacos 加密配置，不许进 git。")
    s.say("明白，后面涉及密钥的都按这个来。")
    s.user("好的 谢谢～ 周五团建去爬山，记得带水 \U0001f9d7")
    s.title("派单阿姨排序 + 健康证过滤")
    s.write_out({
        "order": 2, "language": "mixed",
        "expected": [
            fact("e1", "config", "zh",
                 "派单半径改为 3 公里（Nacos `dispatch.radius-km: 3`），原因是运营反馈阿姨路上时间太长。", ["3 公里"],
                 supersedes=f"{B1}#e9"),
            fact("e2", "convention", "zh", "派单候选阿姨按「距离 60% + 评分 40%」加权打分排序，分高的先派。", ["60%", "40%"]),
            fact("e3", "constraint", "zh", "健康证过期的阿姨不能派单，直接过滤（监管要求）。", ["健康证"]),
            decision("e4", "zh",
                     "阿姨评分在 dispatch-engine 本地用 Caffeine 缓存（TTL 10 分钟）：评分一天也就变几次，10 分钟延迟可以接受；"
                     "不做 Kafka 事件 + Redis hash，也不引入 Elasticsearch（没人运维）。",
                     ["Caffeine"], "Caffeine", ["Redis hash", "Elasticsearch"], ["变几次"]),
            fact("e5", "gotcha", "zh",
                 "MyBatis-Plus 字段上的 `@TableField(typeHandler = JacksonTypeHandler.class)` 查询时只有实体上加了 "
                 "`@TableName(autoResultMap = true)` 才生效，否则 JSON 字段查出来是 null。", ["autoResultMap"]),
            fact("e6", "config", "zh",
                 "settle-job 由 XXL-JOB 调度，JobHandler `dailySettleHandler`，每天凌晨 2 点跑（cron `0 0 2 * * ?`）。",
                 ["dailySettleHandler", "0 0 2 * * ?"]),
            fact("e7", "config", "zh",
                 "settle-job 失败告警发钉钉群，机器人 token 放在 Nacos 加密配置 `jz.alert.dingtalk-token`。",
                 ["jz.alert.dingtalk-token"]),
            fact("e8", "convention", "zh", "所有 token、密钥都走 Nacos 加密配置，不许进 git。", ["Nacos 加密配置", "git"]),
        ],
        "acceptable": [
            {"must": ["Spring Boot 3.1"], "note": "dispatch-engine 当前版本；升级单独排期"},
            {"must": ["ayi-profile"], "note": "评分数据来源服务"},
        ],
        "forbidden": ["派单半径 5 公里", "由大刘（刘振宇）负责", "禁止 updateById 改 status", "顺手升级到 3.3", "团建",
                      "Cannot invoke", "Tests run: 6"],
        "secrets": [B_DING_TOKEN],
    })


def b3():
    s = Session(B3, B_CWD, "feat/tencent-map", "2026-11-26T06:40:00", "2.1.337")
    s.user("先同步几个变化：振宇调去做供应链了，dispatch-engine 以后找 Coco，就是许可，MR 都 assign 给她。")
    s.say("收到，dispatch-engine 相关的事以后找 Coco（许可），MR assign 给她。")
    s.user("还有 Kafka 那边，order_created 已经改名成 jz.order.created 了，消费组也改成了 jz-dispatch，平台组要求所有 "
           "topic 统一加 jz. 前缀。你把 order-api 的 producer 和 dispatch-engine 的 consumer 都改一下。\n\n"
           "<system-reminder>\n" + maple_block([
               (8, "fact", "22 天前", "dispatch-engine 消费 Kafka topic order_created，消费组 dispatch-engine-cg"),
           ]) + "\n</system-reminder>")
    s.bash("grep -rn 'order_created\\|dispatch-engine-cg' --include=*.yml --include=*.java .", "找旧 topic 和消费组",
           "./order-api/src/main/resources/application.yml:22:    order-created-topic: order_created\n"
           "./dispatch-engine/src/main/resources/application.yml:5:      group-id: dispatch-engine-cg\n"
           "./dispatch-engine/src/main/resources/application.yml:14:  topic: order_created")
    s.edit(f"{B_CWD}/order-api/src/main/resources/application.yml", "    order-created-topic: order_created",
           "    order-created-topic: jz.order.created")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/resources/application.yml",
           "      group-id: dispatch-engine-cg", "      group-id: jz-dispatch")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/resources/application.yml",
           "  topic: order_created", "  topic: jz.order.created")
    s.say("order-api 的 producer 和 dispatch-engine 的 consumer 都改成 jz.order.created / jz-dispatch 了。")
    s.user("然后是地图。高德通知我们批量距离接口以后要按商用授权收费，一年 5 万起步。我们决定换腾讯位置服务：公司已经有腾讯云的"
           "企业授权，矩阵接口 `/ws/distance/v1/matrix` 一次能算多对多。百度也问过，报价差不多，但要重新走一遍采购流程，太慢。")
    s.maple_search("高德 距离接口 批量 派单", [
        {"id": 4, "layer": "fact", "content": "dispatch-engine 的距离计算走高德 Web 服务 /v3/distance（origins 一次最多 100 个）",
         "score": 0.86},
        {"id": 3, "layer": "decision", "content": "修复重复派单选高德批量距离接口，不用线程池异步（重启会丢单）", "score": 0.74},
    ])
    s.say("之前的接入点是 `AmapClient`，`Dispatcher` 直接依赖它。我抽一个 `DistanceClient` 接口，加 `TencentMapClient` "
          "实现矩阵接口，一单的候选阿姨还是一次算完，保持批量。")
    s.write(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/map/DistanceClient.java",
            "public interface DistanceClient {\n"
            "    /** 返回每个 origin 到 dest 的骑行/驾车距离（米），顺序与 origins 一致 */\n"
            "    List<Integer> distances(List<LatLng> origins, LatLng dest);\n}\n")
    s.write(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/map/TencentMapClient.java",
            "@Component\npublic class TencentMapClient implements DistanceClient {\n"
            '    private static final String PATH = "/ws/distance/v1/matrix";\n\n'
            "    @Override\n    public List<Integer> distances(List<LatLng> origins, LatLng dest) {\n"
            '        var params = new TreeMap<String, String>(Map.of("mode", "driving", "from", join(origins),\n'
            '            "to", dest.toString(), "key", props.getKey()));\n'
            "        return parse(http.get(PATH, params));\n    }\n}\n")
    s.user("key 在 Nacos 里，`jz.map.tencent-key`，SK 也在同一个 namespace。对了，settle-job 的对账文件要传 OSS，"
           f"阿里云 AK 给你：{B_AK_ID} / {B_AK_SECRET}")
    s.say("AK 我不会写进代码或配置文件，按约定放 Nacos 加密配置 `jz.oss.access-key-id` / `jz.oss.access-key-secret`。"
          "这对 AK 已经出现在聊天记录里了，建议在 RAM 控制台轮换一下。")
    s.user("行，回头我轮换。")
    s.bash("./mvnw -pl dispatch-engine verify -q -Dit.test=TencentMapClientIT", "跑腾讯地图集成测试",
           "[ERROR] matrixReturnsDistances  Time elapsed: 0.612 s  <<< FAILURE!\n"
           "org.opentest4j.AssertionFailedError: expected: <0> but was: <111>\n"
           "\tat com.jz.dispatch.map.TencentMapClientIT.matrixReturnsDistances(TencentMapClientIT.java:27)\n"
           '[INFO] response: {"status":111,"message":"签名验证失败","request_id":"c3f61a0e8d2b4b59a07e"}', error=True)
    s.say("status 111 是签名验证失败：我们这个 key 在控制台开了签名校验（SK），请求必须带 `sig` 参数。算法：请求参数按参数名升序"
          "拼成 `k1=v1&k2=v2`（用原始值，不要 urlencode），前面接上请求路径和 `?`，末尾接上 SK，整体做 MD5（小写 32 位）。"
          "注意算 sig 用的是未编码的值，发请求时再 urlencode。")
    s.edit(f"{B_CWD}/dispatch-engine/src/main/java/com/jz/dispatch/map/TencentMapClient.java",
           "        return parse(http.get(PATH, params));",
           "        params.put(\"sig\", TencentSigner.sig(PATH, params, props.getSk())); // MD5(path?sorted-raw-params + SK)\n"
           "        return parse(http.get(PATH, params));")
    s.bash("./mvnw -pl dispatch-engine verify -q -Dit.test=TencentMapClientIT", "重跑集成测试",
           "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0\n[INFO] BUILD SUCCESS")
    s.user("好。最后一个：结算任务改到凌晨三点半跑，cron `0 30 3 * * ?`。两点那会儿正好撞上 DBA 的全量备份窗口，锁等待把结算拖到了 "
           "40 分钟。")
    s.say("XXL-JOB 的 cron 在调度中心后台配，不在代码里，我这边改不了；我先把 docs/settle-job.md 里的调度说明更新了，后台麻烦你或者 "
          "Coco 改一下。")
    s.edit(f"{B_CWD}/docs/settle-job.md", "- 调度：每天 02:00\n",
           "- 调度：每天 03:30（cron `0 30 3 * * ?`），避开 02:00 的 DBA 全量备份窗口\n")
    s.user("后台我已经改好了。order-api 那边的 MR 也刚合完了。收工 \U0001f37b")
    s.say("好的，辛苦。")
    s.stop_hook()
    s.title("距离计算切到腾讯位置服务")
    s.write_out({
        "order": 3, "language": "mixed",
        "expected": [
            fact("e1", "convention", "zh", "dispatch-engine 的负责人换成 Coco（许可），MR assign 给她；刘振宇调去做供应链了。",
                 ["Coco"], supersedes=f"{B1}#e7"),
            fact("e2", "config", "zh",
                 "Kafka topic order_created 已改名为 jz.order.created，消费组改为 jz-dispatch（order-api 的 producer 和 "
                 "dispatch-engine 的 consumer 都已改）。", ["jz.order.created", "jz-dispatch"], supersedes=f"{B1}#e8"),
            fact("e3", "convention", "zh", "Kafka topic 统一加 jz. 前缀（平台组要求）。", ["jz. 前缀"]),
            decision("e4", "zh",
                     "派单距离计算从高德换成腾讯位置服务（矩阵接口 `/ws/distance/v1/matrix`，多对多一次算完，仍然批量）："
                     "高德批量接口改按商用授权收费（一年 5 万起），公司已有腾讯云企业授权；百度报价差不多但要重新走采购流程。",
                     ["腾讯位置服务", "/ws/distance/v1/matrix"], "腾讯位置服务", ["高德", "百度"], ["商用授权", "采购"],
                     supersedes=f"{B1}#e4"),
            fact("e5", "fix", "zh",
                 "腾讯位置服务的 key 开了签名校验：请求要带 sig = MD5(请求路径 + \"?\" + 按参数名升序拼接的原始参数（不 urlencode）"
                 "+ SK)，小写 32 位；不带或算错返回 status 111 签名验证失败。", ["签名校验", "MD5"]),
            fact("e6", "config", "zh",
                 "settle-job 改为每天凌晨 3:30 跑（cron `0 30 3 * * ?`），避开凌晨 2 点 DBA 的全量备份窗口（锁等待曾把结算拖到 "
                 "40 分钟）。", ["0 30 3 * * ?"], supersedes=f"{B2}#e6"),
            fact("e7", "config", "zh",
                 "腾讯地图 key 和 SK 在 Nacos `jz.map.tencent-key`（同一 namespace）；settle-job 对账文件上传 OSS，阿里云 AK "
                 "存 Nacos 加密配置 `jz.oss.access-key-id` / `jz.oss.access-key-secret`。",
                 ["jz.map.tencent-key", "jz.oss.access-key"]),
        ],
        "acceptable": [
            {"must": ["DBA"], "note": "DBA 全量备份窗口在凌晨 2 点（属于 e6）"},
            {"must": ["DistanceClient"], "note": "距离计算抽象成接口"},
            {"must": ["XXL-JOB"], "note": "cron 在调度中心后台配，不在代码里"},
        ],
        "forbidden": ["dispatch-engine 消费 Kafka topic order_created", "origins 一次最多 100 个",
                      "不用线程池异步（重启会丢单）", "收工", "刚合完了", "AssertionFailedError"],
        "secrets": [B_AK_ID, B_AK_SECRET],
    })


def main():
    for f in (a1, a2, a3, b1, b2, b3):
        f()


if __name__ == "__main__":
    main()
