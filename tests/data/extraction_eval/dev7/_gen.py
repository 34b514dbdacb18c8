#!/usr/bin/env python3
"""Generate the dev7 extraction-eval sessions (blind trial 26) (transcripts + gold), stdlib only, deterministic.

    python3 _gen.py && python3 validate.py

Two invented projects, three sessions each, in time order:
  podhive  (podcast hosting platform, English)          a1, a2, a3
  yunpiao  (云票 演出票务平台, Chinese + code-switching) b1, b2, b3
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
NS = uuid.UUID("6f1d2c4e-26aa-4b7e-9d1a-3c0e5b7a9f26")
MODEL = "claude-sonnet-5"


def _hex(seed: str, n: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


def numbered(text: str) -> str:
    return "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(text.split("\n"), 1))


def recall_block(items):
    """MAPLE recall as it appears inside a user prompt (system-reminder form)."""
    body = "\n".join(f'- #{n} {layer} \u00b7 {kind}: "{text}"' for n, layer, kind, text in items)
    return ("<system-reminder>\n<maple-memory>\nMemories from earlier sessions (may be outdated):\n"
            + body + "\n</maple-memory>\n</system-reminder>\n")


class Transcript:
    def __init__(self, name, project, start, branch, version):
        self.name = name
        self.cwd = project
        self.sid = str(uuid.uuid5(NS, name + ":session"))
        self.t = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
        self.branch = branch
        self.version = version
        self.lines = []
        self.last = None
        self.n = 0
        self.prompt_id = None
        snap = str(uuid.uuid5(NS, name + ":snapshot"))
        self.lines.append({"type": "file-history-snapshot", "messageId": snap,
                           "snapshot": {"messageId": snap, "trackedFileBackups": {}, "timestamp": self._ts()},
                           "isSnapshotUpdate": False})

    # -- helpers -----------------------------------------------------------------
    def _ts(self):
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _tick(self, seconds):
        self.t += dt.timedelta(seconds=seconds)

    def _uid(self):
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.name}:{self.n}"))

    def _tail(self, d):
        d.update({"userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.sid,
                  "version": self.version, "gitBranch": self.branch})
        return d

    def _assistant(self, block, stop):
        u = self._uid()
        line = {"parentUuid": self.last, "isSidechain": False, "type": "assistant",
                "message": {"id": "msg_01" + _hex(u + "m", 22), "type": "message", "role": "assistant",
                            "model": MODEL, "content": [block], "stop_reason": stop, "stop_sequence": None,
                            "usage": {"input_tokens": 4, "cache_creation_input_tokens": 300 + self.n * 37,
                                      "cache_read_input_tokens": 18000 + self.n * 911,
                                      "output_tokens": 40 + (len(json.dumps(block)) // 4),
                                      "service_tier": "standard"}},
                "requestId": "req_011C" + _hex(u + "r", 20), "uuid": u, "timestamp": self._ts()}
        self.lines.append(self._tail(line))
        self.last = u
        return u

    # -- public API ----------------------------------------------------------------
    def user(self, text, dt_s=70):
        self._tick(dt_s)
        self.prompt_id = str(uuid.uuid5(NS, f"{self.name}:prompt:{self.n}"))
        u = self._uid()
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt_id, "type": "user",
                "message": {"role": "user", "content": text}, "permissionMode": "default",
                "promptSource": "user", "origin": {"kind": "human"}, "uuid": u, "timestamp": self._ts()}
        self.lines.append(self._tail(line))
        self.last = u

    def say(self, text, dt_s=6):
        self._tick(dt_s)
        self._assistant({"type": "text", "text": text}, None)

    def tool(self, name, inp, result, *, is_error=False, dt_s=3, rdt_s=2, tur=None):
        self._tick(dt_s)
        tid = "toolu_01" + _hex(f"{self.name}:{self.n}:tool", 22)
        a = self._assistant({"type": "tool_use", "id": tid, "name": name, "input": inp}, "tool_use")
        self._tick(rdt_s)
        content = result
        if tur is None:
            tur = self._default_tur(name, inp, result, is_error)
        if name == "Read" and not is_error:
            content = numbered(result)
        block = {"tool_use_id": tid, "type": "tool_result", "content": content}
        if is_error:
            block["is_error"] = True
        u = self._uid()
        line = {"parentUuid": self.last, "isSidechain": False, "promptId": self.prompt_id, "type": "user",
                "message": {"role": "user", "content": [block]}, "toolUseResult": tur,
                "sourceToolAssistantUUID": a, "uuid": u, "timestamp": self._ts()}
        self.lines.append(self._tail(line))
        self.last = u

    @staticmethod
    def _default_tur(name, inp, result, is_error):
        if name == "Bash":
            return {"stdout": "" if is_error else result, "stderr": result if is_error else "",
                    "interrupted": False, "isImage": False}
        if name == "Read":
            n = result.count("\n") + 1
            return {"type": "text", "file": {"filePath": inp["file_path"], "content": result, "numLines": n,
                                             "startLine": 1, "totalLines": n}}
        if name == "Edit":
            return {"filePath": inp["file_path"], "oldString": inp["old_string"], "newString": inp["new_string"],
                    "replaceAll": False, "userModified": False}
        if name == "Write":
            return {"type": "create", "filePath": inp["file_path"], "content": inp["content"]}
        if name == "Grep":
            files = sorted({l.split(":", 1)[0] for l in result.splitlines() if ":" in l})
            return {"mode": "content", "numFiles": len(files), "filenames": files, "content": result,
                    "numLines": result.count("\n") + 1}
        return {"result": result}

    def finish(self, title):
        # stop_reason end_turn on assistant text that closes a turn
        for i, l in enumerate(self.lines):
            if l.get("type") == "assistant" and l["message"]["content"][0]["type"] == "text":
                nxt = self.lines[i + 1] if i + 1 < len(self.lines) else None
                if nxt is None or (nxt.get("type") == "user" and isinstance(nxt["message"]["content"], str)):
                    l["message"]["stop_reason"] = "end_turn"
        self.lines.append({"type": "ai-title", "aiTitle": title, "sessionId": self.sid})
        return self.lines


def edit(path, old, new):
    return ("Edit", {"file_path": path, "old_string": old, "new_string": new},
            f"The file {path} has been updated successfully.")


def write(path, content):
    return ("Write", {"file_path": path, "content": content}, f"File created successfully at: {path}")


# =====================================================================================================
# Project A: podhive (podcast hosting platform), English
# =====================================================================================================
PA = "/home/dev/work/podhive"
A1 = "a1_podhive_enclosure_length"
A2 = "a2_podhive_private_feed_403"
A3 = "a3_podhive_r2_cutover"


def session_a1():
    s = Transcript(A1, PA, "2026-10-05T08:41:00.000Z", "fix/enclosure-length", "2.1.326")
    s.user(recall_block([
        (3, "fact", "preference", "User prefers small focused commits with imperative subject lines."),
        (7, "fact", "preference", "Answer briefly; skip long summaries at the end of a task."),
    ]) + "ok so Apple Podcasts Connect is yelling at us again: \"Your feed contains an episode with an invalid "
         "enclosure length\", on ~40 shows since the weekend. can you take a look at feed-builder? it's in "
         "services/feed-builder, `pnpm dev:feed` brings it up on port 4010 and a show's feed is at /feeds/<slug>.xml",
         dt_s=0)
    s.tool("Bash", {"command": "curl -s localhost:4010/feeds/night-shift-stories.xml | grep -n '<enclosure' | head -8",
                    "description": "Inspect enclosure tags in a sample feed"},
           "41:      <enclosure url=\"https://media.podhive.fm/e/9f1c2d/ep-112.mp3\" length=\"58213377\" type=\"audio/mpeg\"/>\n"
           "67:      <enclosure url=\"https://media.podhive.fm/e/9f1c2d/ep-111.mp3\" length=\"61002114\" type=\"audio/mpeg\"/>\n"
           "93:      <enclosure url=\"https://media.podhive.fm/e/9f1c2d/ep-110.mp3\" length=\"54470921\" type=\"audio/mpeg\"/>\n"
           "2861:      <enclosure url=\"https://media.podhive.fm/e/51aa03/ep-064.mp3\" length=\"0\" type=\"audio/mpeg\"/>\n"
           "2887:      <enclosure url=\"https://media.podhive.fm/e/51aa03/ep-063.mp3\" length=\"0\" type=\"audio/mpeg\"/>\n"
           "2913:      <enclosure url=\"https://media.podhive.fm/e/51aa03/ep-062.mp3\" length=\"0\" type=\"audio/mpeg\"/>\n"
           "2939:      <enclosure url=\"https://media.podhive.fm/e/51aa03/ep-061.mp3\" length=\"0\" type=\"audio/mpeg\"/>\n"
           "2965:      <enclosure url=\"https://media.podhive.fm/e/51aa03/ep-060.mp3\" length=\"0\" type=\"audio/mpeg\"/>")
    s.say("The recent items are fine, but everything from ep-064 down has `length=\"0\"`. Let me find where "
          "feed-builder fills that attribute.")
    s.tool("Grep", {"pattern": "length", "path": "services/feed-builder/src", "output_mode": "content", "-n": True},
           "services/feed-builder/src/render/item.ts:14:      \"@length\": String(ep.audio_size ?? 0),\n"
           "services/feed-builder/src/render/channel.ts:88:  if (desc.length > 4000) {\n"
           "services/feed-builder/src/render/chapters.ts:14:  const n = chapters.length;\n"
           "services/feed-builder/src/render/channel.ts:91:    desc = desc.slice(0, 3997) + \"...\";")
    item_ts = ("import type { EpisodeRow, RenditionRow } from \"../db/types\";\n"
               "import { cdnUrl } from \"../cdn\";\n"
               "import { log } from \"../log\";\n"
               "\n"
               "export function renderItem(ep: EpisodeRow, rendition: RenditionRow) {\n"
               "  return {\n"
               "    title: ep.title,\n"
               "    guid: { \"@isPermaLink\": \"false\", \"#\": ep.guid },\n"
               "    pubDate: ep.published_at.toUTCString(),\n"
               "    description: { \"$\": ep.description_html },\n"
               "    enclosure: {\n"
               "      \"@url\": cdnUrl(rendition.object_key),\n"
               "      \"@type\": rendition.mime_type,\n"
               "      \"@length\": String(ep.audio_size ?? 0),\n"
               "    },\n"
               "    \"itunes:duration\": rendition.duration_s,\n"
               "    \"itunes:episodeType\": ep.episode_type ?? \"full\",\n"
               "  };\n"
               "}")
    s.tool("Read", {"file_path": f"{PA}/services/feed-builder/src/render/item.ts"}, item_ts)
    s.say("`audio_size` is set by upload-worker from the HeadObject response once the upload finishes. My guess: "
          "for the big multipart uploads HeadObject can report ContentLength 0 while the multipart upload is still "
          "completing, and upload-worker stores that 0. The broken episodes look long (60+ min), which would fit. "
          "I'd like to confirm in the database; is there a read replica I can query?")
    s.user("hm, maybe. I have a feeling the zeros are all shows we imported from Libsyn in august though, not sure. "
           "replica: postgres://podhive_ro:hx8Kq2!mWz4p@pg-replica.internal.podhive.fm:5432/podhive (read-only user, "
           "don't go wild)", dt_s=95)
    s.tool("Bash", {"command": "psql 'postgres://podhive_ro:hx8Kq2!mWz4p@pg-replica.internal.podhive.fm:5432/podhive' -c "
                               "\"select source, count(*) filter (where audio_size is null) as null_size, "
                               "count(*) filter (where audio_size = 0) as zero_size, count(*) as total "
                               "from episodes group by source order by source;\"",
                    "description": "Count missing audio sizes per episode source"},
           "    source     | null_size | zero_size | total\n"
           "---------------+-----------+-----------+-------\n"
           " libsyn_import |      1372 |         0 |  1372\n"
           " rss_import    |         0 |         0 |  2210\n"
           " upload        |         0 |         0 | 18234\n"
           "(3 rows)", dt_s=5)
    s.say("You're right, and my upload theory was wrong: no uploaded episode has a zero or missing size. All 1372 "
          "`libsyn_import` episodes have `audio_size` NULL. Looking at the importer.")
    libsyn_ts = ("export async function importEpisode(tx: Tx, show: Show, item: LibsynItem) {\n"
                 "  const ep = await tx.episodes.insert({\n"
                 "    show_id: show.id,\n"
                 "    guid: item.guid, // keep Libsyn's guid, see PH-311\n"
                 "    title: item.title,\n"
                 "    published_at: new Date(item.pubDate),\n"
                 "    source: \"libsyn_import\",\n"
                 "    // no original upload for imports; audio_size stays null\n"
                 "  });\n"
                 "  const obj = await copyToBucket(item.enclosureUrl, `e/${ep.id}/${slug(item.title)}.mp3`);\n"
                 "  await tx.renditions.insert({\n"
                 "    episode_id: ep.id,\n"
                 "    object_key: obj.key,\n"
                 "    bytes: obj.size,\n"
                 "    mime_type: \"audio/mpeg\",\n"
                 "    duration_s: item.duration,\n"
                 "  });\n"
                 "}")
    s.tool("Read", {"file_path": f"{PA}/services/importer/src/libsyn.ts"}, libsyn_ts)
    s.say("Root cause: `renderItem` takes the enclosure length from `episodes.audio_size`, which is the size of the "
          "creator's *original upload*. Libsyn imports never had an original upload (the importer copies the finished "
          "MP3 straight into a rendition), so `audio_size` is NULL and `?? 0` turns it into `length=\"0\"`. The "
          "enclosure URL already points at the rendition, so the length has to come from `renditions.bytes` of that "
          "same rendition.\n\nPlan: use `rendition.bytes` in item.ts, and if it's missing skip the item with a warning "
          "instead of emitting 0. I could also add a migration that backfills `episodes.audio_size` from "
          "`renditions.bytes` for the 1372 imported episodes so the column is never null. Want that as well?")
    s.user("no backfill. audio_size means \"size of what the creator uploaded\" and the storage-usage report sums it, "
           "imports are not supposed to count against their quota. rendition bytes in item.ts, yes. skip + warn is "
           "fine, put the episode guid in the log line.\n\nand while you're in render/: episode guids are never "
           "changed once published. apps dedupe on guid, change it and every subscriber gets the whole back catalog "
           "again. so don't \"clean up\" the guid code", dt_s=120)
    s.tool(*edit(f"{PA}/services/feed-builder/src/render/item.ts",
                 "export function renderItem(ep: EpisodeRow, rendition: RenditionRow) {\n  return {",
                 "export function renderItem(ep: EpisodeRow, rendition: RenditionRow) {\n"
                 "  if (!rendition.bytes) {\n"
                 "    log.warn({ guid: ep.guid }, \"skipping item: rendition has no byte size\");\n"
                 "    return null;\n"
                 "  }\n  return {"))
    s.tool(*edit(f"{PA}/services/feed-builder/src/render/item.ts",
                 "      \"@length\": String(ep.audio_size ?? 0),",
                 "      \"@length\": String(rendition.bytes),"))
    s.tool("Bash", {"command": "pnpm --filter feed-builder test", "description": "Run feed-builder tests"},
           "Exit code 1\n\n RUN  v2.1.4 /home/dev/work/podhive/services/feed-builder\n\n"
           " \u2713 test/render.item.test.ts (31 tests) 48ms\n"
           " \u2713 test/render.channel.test.ts (22 tests) 31ms\n"
           " \u276f test/render.feed.test.ts (0 test)\n"
           " \u276f test/cache.test.ts (0 test)\n"
           " \u2713 test/chapters.test.ts (17 tests) 12ms\n"
           " \u2713 test/cdn.test.ts (9 tests) 4ms\n\n"
           "\u23af\u23af\u23af\u23af\u23af\u23af Failed Suites 2 \u23af\u23af\u23af\u23af\u23af\u23af\n\n"
           " FAIL  test/render.feed.test.ts [ test/render.feed.test.ts ]\n"
           " FAIL  test/cache.test.ts [ test/cache.test.ts ]\n"
           "Error: connect ECONNREFUSED 127.0.0.1:6380\n"
           " \u276f TCPConnectWrap.afterConnect [as oncomplete] node:net:1607:16\n\n"
           " Test Files  2 failed | 12 passed (14)\n      Tests  188 passed (188)\n   Duration  5.91s",
           is_error=True, rdt_s=9)
    s.say("Two suites can't reach Redis on 127.0.0.1:6380. That's the test Redis from docker-compose.test.yml, not "
          "the dev one on 6379. Starting it and re-running.")
    s.tool("Bash", {"command": "docker compose -f docker-compose.test.yml up -d redis-test && pnpm --filter feed-builder test",
                    "description": "Start test Redis and rerun feed-builder tests"},
           " \u2714 Container podhive-redis-test-1  Started\n\n RUN  v2.1.4 /home/dev/work/podhive/services/feed-builder\n\n"
           " \u2713 test/render.item.test.ts (31 tests) 51ms\n \u2713 test/render.channel.test.ts (22 tests) 30ms\n"
           " \u2713 test/render.feed.test.ts (14 tests) 212ms\n \u2713 test/cache.test.ts (10 tests) 97ms\n"
           " \u2713 test/chapters.test.ts (17 tests) 12ms\n \u2713 test/cdn.test.ts (9 tests) 4ms\n"
           " ...\n\n Test Files  14 passed (14)\n      Tests  212 passed (212)\n   Duration  6.84s", rdt_s=12)
    s.say("All green. Worth knowing: feed-builder's test "
          "suite needs the test Redis (`docker compose -f docker-compose.test.yml up -d redis-test`, port 6380); "
          "without it render.feed and cache fail with ECONNREFUSED.")
    s.user("nice. CI is red again btw but that's the transcoder e2e flaking, not you. so how do we stop this from "
           "shipping again? I'd like some kind of feed check in CI", dt_s=140)
    s.say("Three ways to do it:\n\n1. Call the podba.se validator API from CI on a sample of rendered feeds.\n"
          "2. An in-repo rule check (`feedlint`) over rendered fixture feeds: enclosure length > 0, guid present and "
          "unique, pubDate in RFC 2822, enclosure type set.\n"
          "3. Apple's own validator in Podcasts Connect; no API, so manual only.\n\n"
          "I'd lean to 2: no network in CI and we control the rules.", dt_s=9)
    s.user("2. podba.se rate limits and I don't want our CI depending on somebody else's uptime. put it in "
           "tools/feedlint and wire it into the lint job as `pnpm feedlint`", dt_s=80)
    s.tool(*write(f"{PA}/tools/feedlint/index.ts",
                  "import { readFileSync } from \"node:fs\";\nimport { XMLParser } from \"fast-xml-parser\";\n"
                  "// Rules: enclosure length > 0, guid present + unique per feed, RFC 2822 pubDate, enclosure type.\n"
                  "const RFC2822 = /^[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} (GMT|[+-]\\d{4})$/;\n"
                  "export function lintFeed(path: string): string[] {\n  const problems: string[] = [];\n"
                  "  const doc = new XMLParser({ ignoreAttributes: false }).parse(readFileSync(path, \"utf8\"));\n"
                  "  const seen = new Set<string>();\n  for (const [i, item] of (doc.rss.channel.item ?? []).entries()) {\n"
                  "    const len = Number(item.enclosure?.[\"@_length\"] ?? 0);\n"
                  "    if (!(len > 0)) problems.push(`${path}: item ${i}: enclosure length must be > 0`);\n"
                  "    const guid = String(item.guid?.[\"#text\"] ?? item.guid ?? \"\");\n"
                  "    if (!guid || seen.has(guid)) problems.push(`${path}: item ${i}: missing or duplicate guid`);\n"
                  "    seen.add(guid);\n"
                  "    if (!RFC2822.test(item.pubDate)) problems.push(`${path}: item ${i}: pubDate not RFC 2822`);\n"
                  "  }\n  return problems;\n}\n"))
    s.tool(*edit(f"{PA}/package.json", "    \"lint\": \"eslint . && tsc -b\",",
                 "    \"lint\": \"eslint . && tsc -b && pnpm feedlint\",\n"
                 "    \"feedlint\": \"tsx tools/feedlint/cli.ts fixtures/feeds\","))
    s.tool("Bash", {"command": "pnpm feedlint", "description": "Run feedlint over fixture feeds"},
           "> podhive@0.0.0 feedlint /home/dev/work/podhive\n> tsx tools/feedlint/cli.ts fixtures/feeds\n\n"
           "fixtures/feeds/libsyn-import.xml      ok (64 items)\nfixtures/feeds/night-shift-stories.xml ok (112 items)\n"
           "fixtures/feeds/private-premium.xml    ok (40 items)\n... 6 more\nfeedlint: checked 9 feeds, 431 items, 0 problems",
           rdt_s=4)
    s.say("feedlint passes on all 9 fixture feeds and now runs as part of `pnpm lint`.")
    s.user("good. some context since you'll be in here a lot: transcoder takes its jobs off the BullMQ queue "
           "`transcode-jobs` on the shared redis. media lives in s3, bucket `podhive-media-prod` in eu-west-1, and "
           "media.podhive.fm is the CDN in front of it. and stats-collector is Marcus Webb's baby, don't merge "
           "anything there without him. I'm off to grab lunch, commit + push when you're done", dt_s=150)
    s.say("Got it. Committing and pushing the branch now.")
    s.tool("Bash", {"command": "git add -A && git commit -m \"Use rendition bytes for enclosure length; add feedlint\" "
                               "&& git push -u origin fix/enclosure-length",
                    "description": "Commit and push the fix"},
           "[fix/enclosure-length 8d41c7e] Use rendition bytes for enclosure length; add feedlint\n"
           " 5 files changed, 187 insertions(+), 9 deletions(-)\n create mode 100644 tools/feedlint/cli.ts\n"
           " create mode 100644 tools/feedlint/index.ts\nTo github.com:podhive/podhive.git\n"
           " * [new branch]      fix/enclosure-length -> fix/enclosure-length\n"
           "branch 'fix/enclosure-length' set up to track 'origin/fix/enclosure-length'.", rdt_s=6)
    s.say("Pushed `fix/enclosure-length` (8d41c7e). Enclosure length now comes from the rendition's bytes, items "
          "without a size are skipped with a warning that carries the guid, and `pnpm feedlint` runs in the lint job. "
          "The ~40 shows get fixed on their next feed rebuild.")
    return s.finish("Fix zero enclosure length for Libsyn imports")


GOLD_A1 = {
    "session": A1, "project": PA, "order": 1, "language": "en",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
         "text": "feed-builder runs locally with `pnpm dev:feed` on port 4010; a show's feed is served at /feeds/<slug>.xml.",
         "must": ["4010", "dev:feed"]},
        {"id": "e2", "layer": "experience", "kind": "root_cause", "lang": "en",
         "text": "Feeds had enclosure length=\"0\" because feed-builder's renderItem used episodes.audio_size (the original "
                 "upload size), which is NULL for Libsyn-imported episodes; the length must come from renditions.bytes "
                 "of the linked rendition.",
         "must": ["audio_size", "Libsyn"]},
        {"id": "e3", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "Episode guids are never changed once published: podcast apps dedupe on guid, so a change re-delivers "
                 "the whole back catalog to every subscriber.",
         "must": ["guid"]},
        {"id": "e4", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "episodes.audio_size is the size of what the creator uploaded and is summed by the storage-usage report; "
                 "it stays NULL for imports and must not be backfilled.",
         "must": ["audio_size", "storage-usage"]},
        {"id": "e5", "layer": "experience", "kind": "fix", "lang": "en",
         "text": "feed-builder tests fail with ECONNREFUSED 127.0.0.1:6380 unless the test Redis is running: "
                 "`docker compose -f docker-compose.test.yml up -d redis-test`.",
         "must": ["redis-test"]},
        {"id": "e6", "layer": "decision", "kind": "decision", "lang": "en",
         "text": "Feed checks in CI use an in-repo rule check, tools/feedlint (`pnpm feedlint` in the lint job), over "
                 "the podba.se validator API, because podba.se rate limits and CI should not depend on someone else's uptime.",
         "must": ["feedlint"], "chosen": "feedlint", "over": ["podba.se"], "why": ["rate limit"]},
        {"id": "e7", "layer": "fact", "kind": "config", "lang": "en",
         "text": "transcoder takes its jobs off the BullMQ queue `transcode-jobs` on the shared Redis.",
         "must": ["transcode-jobs", "BullMQ"]},
        {"id": "e8", "layer": "fact", "kind": "config", "lang": "en",
         "text": "Media is stored in S3 bucket `podhive-media-prod` in eu-west-1, with media.podhive.fm as the CDN in front.",
         "must": ["podhive-media-prod", "eu-west-1"]},
        {"id": "e9", "layer": "fact", "kind": "preference", "lang": "en",
         "text": "stats-collector is owned by Marcus Webb; don't merge anything there without him.",
         "must": ["Marcus Webb"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "feedlint rules: enclosure length > 0, guid present and unique, pubDate in RFC 2822, enclosure type set.",
         "must": ["RFC 2822"], "note": "detail of the feedlint decision"},
        {"id": "a2", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "renderItem skips an item whose rendition has no byte size and logs a warning with the episode guid.",
         "must": ["byte size"], "note": "implementation detail of the fix"},
    ],
    "forbidden": [
        "small focused commits", "skip long summaries",
        "still completing", "CI is red again", "grab lunch", "8d41c7e", "212 passed", "night-shift-stories",
        "431 items",
    ],
    "secrets": ["hx8Kq2!mWz4p", "postgres://podhive_ro:hx8Kq2!mWz4p@pg-replica.internal.podhive.fm:5432/podhive"],
}


def session_a2():
    s = Transcript(A2, PA, "2026-10-14T13:05:00.000Z", "fix/private-feed-escaping", "2.1.329")
    s.user(recall_block([
        (21, "fact", "config", "feed-builder runs locally with `pnpm dev:feed` on port 4010; a show's feed is at /feeds/<slug>.xml."),
        (24, "fact", "convention", "Episode guids are never changed once published; podcast apps dedupe on guid."),
        (27, "fact", "preference", "stats-collector is owned by Marcus Webb; don't merge there without him."),
    ]) + "support escalated one: premium subscribers on Pocket Casts can't download episodes from their private "
         "feeds, they get a 403 from the CDN. public feeds are fine. ticket is SUP-2291. can you poke at it? "
         "feed-builder is already running locally", dt_s=0)
    s.tool("Bash", {"command": "curl -s 'localhost:4010/private/feeds/night-shift-stories.xml?token=dev-token' | grep -n '<enclosure' | head -3",
                    "description": "Fetch a private feed locally"},
           "Exit code 7\ncurl: (7) Failed to connect to localhost port 4010 after 0 ms: Couldn't connect to server",
           is_error=True)
    s.say("Nothing is listening on 4010. Is feed-builder running on a different port?")
    s.user("ah sorry, it's on 4020 now. 4010 clashed with the admin proxy so Jonas moved it last week", dt_s=40)
    s.tool("Bash", {"command": "curl -s 'localhost:4020/private/feeds/night-shift-stories.xml?token=dev-token' | grep -n '<enclosure' | head -3",
                    "description": "Fetch the private feed on port 4020"},
           "38:      <enclosure url=\"https://media.podhive.fm/e/7a2e41/ep-088.mp3?sub=u_58812&amp;amp;t=1761900000.c0ffee1d\" length=\"47718230\" type=\"audio/mpeg\"/>\n"
           "64:      <enclosure url=\"https://media.podhive.fm/e/7a2e41/ep-087.mp3?sub=u_58812&amp;amp;t=1761900000.c0ffee1d\" length=\"45102877\" type=\"audio/mpeg\"/>\n"
           "90:      <enclosure url=\"https://media.podhive.fm/e/7a2e41/ep-086.mp3?sub=u_58812&amp;amp;t=1761900000.c0ffee1d\" length=\"49930012\" type=\"audio/mpeg\"/>")
    s.say("There it is: the query string is escaped twice (`&amp;amp;t=`). An app decodes it once, requests "
          "`...?sub=u_58812&amp;t=...`, the CDN sees no `t` parameter and answers 403. Public feeds have no query "
          "string, which is why they're unaffected.")
    s.tool("Grep", {"pattern": "escapeXml", "path": "services/feed-builder/src", "output_mode": "content", "-n": True},
           "services/feed-builder/src/util/xml.ts:3:export function escapeXml(s: string): string {\n"
           "services/feed-builder/src/render/private.ts:4:import { escapeXml } from \"../util/xml\";\n"
           "services/feed-builder/src/render/private.ts:19:        \"@url\": escapeXml(signedUrl(rendition.object_key, sub)),\n"
           "services/feed-builder/src/render/channel.ts:41:    \"itunes:author\": escapeXml(show.author_name),\n"
           "services/feed-builder/src/render/channel.ts:47:    \"itunes:summary\": escapeXml(show.summary),")
    private_ts = ("import { create } from \"xmlbuilder2\";\n"
                  "import { signedUrl } from \"../cdn\";\n"
                  "import { renderChannel } from \"./channel\";\n"
                  "import { escapeXml } from \"../util/xml\";\n"
                  "\n"
                  "// Private (premium) feeds are rendered per subscriber: every URL carries the subscriber token.\n"
                  "export function renderPrivateFeed(show: ShowRow, sub: Subscriber, items: ItemInput[]) {\n"
                  "  const doc = create({ version: \"1.0\", encoding: \"UTF-8\" })\n"
                  "    .ele(\"rss\", NAMESPACES)\n"
                  "    .ele(\"channel\", renderChannel(show));\n"
                  "  for (const { ep, rendition } of items) {\n"
                  "    doc.ele(\"item\", {\n"
                  "      title: ep.title,\n"
                  "      guid: { \"@isPermaLink\": \"false\", \"#\": ep.guid },\n"
                  "      pubDate: ep.published_at.toUTCString(),\n"
                  "      enclosure: {\n"
                  "        \"@type\": rendition.mime_type,\n"
                  "        \"@length\": String(rendition.bytes),\n"
                  "        \"@url\": escapeXml(signedUrl(rendition.object_key, sub)),\n"
                  "      },\n"
                  "    });\n"
                  "  }\n"
                  "  return doc.end({ prettyPrint: true });\n"
                  "}")
    s.tool("Read", {"file_path": f"{PA}/services/feed-builder/src/render/private.ts"}, private_ts)
    s.say("Root cause: private.ts runs the signed URL through our own `escapeXml()` before handing it to xmlbuilder2, "
          "and xmlbuilder2 escapes attribute and text values itself when it serialises. So `&` becomes `&amp;` and then "
          "`&amp;amp;`. Anything passed to xmlbuilder2 has to be the raw string. The same double escaping is in "
          "`itunes:summary` and `itunes:author`, it just doesn't break a download there.\n\nWhile I'm here: should I "
          "move the renderers over to fast-xml-parser's XMLBuilder instead? That would make the escaping rules "
          "explicit in one place.")
    s.user("no, we're not swapping xml libraries over a support ticket. just remove the double escaping, all three. "
           "and fyi private feeds must never go through the feed cache: each one has the subscriber token baked into "
           "every url. only public feeds are cached (redis key feed:<slug>)", dt_s=110)
    s.tool(*edit(f"{PA}/services/feed-builder/src/render/private.ts",
                 "        \"@url\": escapeXml(signedUrl(rendition.object_key, sub)),",
                 "        \"@url\": signedUrl(rendition.object_key, sub),"))
    s.tool(*edit(f"{PA}/services/feed-builder/src/render/channel.ts",
                 "    \"itunes:author\": escapeXml(show.author_name),",
                 "    \"itunes:author\": show.author_name,"))
    s.tool(*edit(f"{PA}/services/feed-builder/src/render/channel.ts",
                 "    \"itunes:summary\": escapeXml(show.summary),",
                 "    \"itunes:summary\": show.summary,"))
    s.tool("Bash", {"command": "pnpm --filter feed-builder test -- private", "description": "Run private feed tests"},
           "Exit code 1\n\n RUN  v2.1.4 /home/dev/work/podhive/services/feed-builder\n\n"
           " FAIL  test/render.private.test.ts [ test/render.private.test.ts ]\n"
           "Error: FEED_TOKEN_SECRET must be set\n \u276f loadConfig src/config.ts:22:11\n\n"
           " Test Files  1 failed (1)\n      Tests  no tests", is_error=True, rdt_s=5)
    s.say("The private-feed tests need `FEED_TOKEN_SECRET` to sign URLs. Do you have a non-production value I can use?")
    s.user("use the staging one: FEED_TOKEN_SECRET=ftk_stg_3Vq8Rz1Lm6Xw9Tn2Bp5Kc (it's in 1password under "
           "\"feed-builder staging\" too)", dt_s=55)
    s.tool("Bash", {"command": "FEED_TOKEN_SECRET=ftk_stg_3Vq8Rz1Lm6Xw9Tn2Bp5Kc pnpm --filter feed-builder test -- private",
                    "description": "Run private feed tests with the staging token secret"},
           "\n RUN  v2.1.4 /home/dev/work/podhive/services/feed-builder\n\n"
           " \u2713 test/render.private.test.ts (17 tests) 64ms\n\n Test Files  1 passed (1)\n      Tests  17 passed (17)\n"
           "   Duration  1.42s", rdt_s=5)
    s.tool("Bash", {"command": "curl -s 'localhost:4020/private/feeds/night-shift-stories.xml?token=dev-token' | grep -n '<enclosure' | head -1",
                    "description": "Check the private feed output again"},
           "38:      <enclosure url=\"https://media.podhive.fm/e/7a2e41/ep-088.mp3?sub=u_58812&amp;t=1761900000.c0ffee1d\" length=\"47718230\" type=\"audio/mpeg\"/>")
    s.say("Single-escaped now, which is what podcast apps expect.")
    s.user("\U0001F44D I'm about to push this and then I'm off to the dentist. can you write the commit. also add a "
           "feedlint rule for `&amp;amp;` so this can't come back", dt_s=75)
    s.tool(*edit(f"{PA}/tools/feedlint/index.ts",
                 "    if (!RFC2822.test(item.pubDate)) problems.push(`${path}: item ${i}: pubDate not RFC 2822`);",
                 "    if (!RFC2822.test(item.pubDate)) problems.push(`${path}: item ${i}: pubDate not RFC 2822`);\n"
                 "    if (raw.includes(\"&amp;amp;\")) problems.push(`${path}: double-escaped entity (&amp;amp;)`);"))
    s.tool("Bash", {"command": "git add -A && git commit -m \"Stop double-escaping values passed to xmlbuilder2\" -m \"Fixes SUP-2291: "
                               "private feed enclosure URLs had &amp;amp; and the CDN answered 403.\"",
                    "description": "Commit the fix"},
           "[fix/private-feed-escaping 2c7e90b] Stop double-escaping values passed to xmlbuilder2\n"
           " 4 files changed, 21 insertions(+), 6 deletions(-)")
    s.say("Committed as 2c7e90b on `fix/private-feed-escaping`; it's ready for you to push.")
    return s.finish("Fix 403 on private feed downloads")


GOLD_A2 = {
    "session": A2, "project": PA, "order": 2, "language": "en",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
         "text": "feed-builder now runs locally on port 4020; it moved off 4010 because that clashed with the admin proxy.",
         "must": ["4020"], "supersedes": f"{A1}#e1"},
        {"id": "e2", "layer": "experience", "kind": "root_cause", "lang": "en",
         "text": "Private feed downloads got a 403 because signed enclosure URLs were passed through escapeXml() before "
                 "xmlbuilder2, which escapes values itself, giving &amp;amp; in the query string; never pre-escape values "
                 "handed to xmlbuilder2.",
         "must": ["xmlbuilder2"]},
        {"id": "e3", "layer": "fact", "kind": "constraint", "lang": "en",
         "text": "Private feeds (premium) must never go through the feed cache because every URL carries the subscriber "
                 "token; only public feeds are cached, under Redis key feed:<slug>.",
         "must": ["private feed"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "experience", "kind": "fix", "lang": "en",
         "text": "Private feed tests need FEED_TOKEN_SECRET set; the staging value is in 1password under \"feed-builder staging\".",
         "must": ["FEED_TOKEN_SECRET"], "note": "env needed for tests (value itself is a secret)"},
        {"id": "a2", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "feedlint also flags double-escaped entities (&amp;amp;).",
         "must": ["&amp;amp;"], "note": "small follow-up rule"},
    ],
    "forbidden": [
        "on port 4010; a show", "podcast apps dedupe on guid", "owned by Marcus Webb",
        "SUP-2291", "dentist", "u_58812", "2c7e90b", "17 passed", "fast-xml-parser's XMLBuilder",
    ],
    "secrets": ["ftk_stg_3Vq8Rz1Lm6Xw9Tn2Bp5Kc"],
}


def session_a3():
    s = Transcript(A3, PA, "2026-10-27T09:20:00.000Z", "chore/r2-transcoder", "2.1.334")
    s.user(recall_block([
        (30, "fact", "config", "Media is stored in S3 bucket podhive-media-prod in eu-west-1 behind the media.podhive.fm CDN."),
        (31, "fact", "config", "transcoder consumes the BullMQ queue transcode-jobs on the shared Redis."),
        (38, "experience", "root_cause", "Never pre-escape values handed to xmlbuilder2; it escapes them itself."),
    ]) + "morning. standup got moved to 10:30 so I have an hour. we're off S3 now, everything goes through Cloudflare "
         "R2 since friday, bucket is `podhive-media`. transcoder is the last thing still failing: every job dies on "
         "the upload. logs from one pod:\n\n```\n"
         "2026-10-27T08:58:12.431Z INFO  job 88213 picked from media.transcode (attempt 1)\n"
         "2026-10-27T08:58:19.902Z INFO  ffmpeg done ep=7f3a12 rendition=mp3_128k out=/tmp/88213/out.mp3 bytes=41822113\n"
         "2026-10-27T08:58:20.118Z ERROR upload failed key=e/7f3a12/ep-041.mp3 NotImplemented: Header "
         "'x-amz-checksum-crc32' with value 'kRsXnA==' not implemented\n"
         "    at de_NotImplementedRes (node_modules/@aws-sdk/client-s3/dist-cjs/index.js:6081:21)\n"
         "    at de_CommandError (node_modules/@aws-sdk/client-s3/dist-cjs/index.js:4719:14)\n"
         "2026-10-27T08:58:20.120Z WARN  job 88213 failed, will retry in 30000ms\n"
         "2026-10-27T08:58:50.277Z INFO  job 88213 picked from media.transcode (attempt 2)\n```", dt_s=0)
    s.say("My first guess is the client config: if transcoder's S3 client still has region eu-west-1 and the AWS "
          "endpoint, the PUT is going to the wrong service entirely. Checking storage.ts.")
    storage_ts = ("import { S3Client, PutObjectCommand } from \"@aws-sdk/client-s3\";\n"
                  "import { config } from \"./config\";\n"
                  "\n"
                  "export const s3 = new S3Client({\n"
                  "  region: \"auto\",\n"
                  "  endpoint: `https://${config.r2AccountId}.r2.cloudflarestorage.com`,\n"
                  "  credentials: {\n"
                  "    accessKeyId: config.r2AccessKeyId,\n"
                  "    secretAccessKey: config.r2SecretAccessKey,\n"
                  "  },\n"
                  "});\n"
                  "\n"
                  "export async function putRendition(key: string, body: Readable, bytes: number) {\n"
                  "  await s3.send(new PutObjectCommand({ Bucket: config.bucket, Key: key, Body: body, ContentLength: bytes }));\n"
                  "}")
    s.tool("Read", {"file_path": f"{PA}/services/transcoder/src/storage.ts"}, storage_ts)
    s.say("Config is fine (region `auto`, R2 endpoint), so that theory is out. The error names a header, "
          "`x-amz-checksum-crc32`. Checking which SDK version is installed.")
    s.tool("Bash", {"command": "cd services/transcoder && pnpm list @aws-sdk/client-s3",
                    "description": "Show installed S3 SDK version"},
           "Legend: production dependency, optional only, dev only\n\n"
           "transcoder@1.14.0 /home/dev/work/podhive/services/transcoder\n\ndependencies:\n@aws-sdk/client-s3 3.741.0")
    s.say("Root cause: @aws-sdk/client-s3 from 3.729.0 on computes a CRC32 checksum for every PutObject by default and "
          "sends it as `x-amz-checksum-crc32`; R2 answers NotImplemented for that header, so every upload fails. The "
          "lockfile bump to 3.741.0 came in with the R2 switch, which is why it only started now. Fix: set "
          "`requestChecksumCalculation: \"WHEN_REQUIRED\"` and `responseChecksumValidation: \"WHEN_REQUIRED\"` on the "
          "S3Client so the SDK only sends checksums when an operation requires them.")
    s.tool(*edit(f"{PA}/services/transcoder/src/storage.ts",
                 "  region: \"auto\",\n",
                 "  region: \"auto\",\n"
                 "  // R2 rejects the default x-amz-checksum-crc32 header sent by SDK >= 3.729\n"
                 "  requestChecksumCalculation: \"WHEN_REQUIRED\",\n"
                 "  responseChecksumValidation: \"WHEN_REQUIRED\",\n"))
    s.tool("Bash", {"command": "pnpm --filter transcoder test:int -- upload", "description": "Run upload integration tests"},
           "\n RUN  v2.1.4 /home/dev/work/podhive/services/transcoder\n\n"
           " \u2713 test/upload.int.test.ts (3 tests) 2114ms\n\n Test Files  1 passed (1)\n      Tests  3 passed (3)\n"
           "   Duration  3.02s", rdt_s=6)
    s.say("Upload integration tests pass with the checksum setting.")
    s.user("ok that's it?? three days of red dashboards for one flag \U0001F643 fine. r2 keys for the dev bucket if you "
           "want to try it against real storage: R2_ACCESS_KEY_ID=2f9d7c41a8e3b650c1d4 "
           "R2_SECRET_ACCESS_KEY=8b1e4f7a2c9d03e6f5a8b7c4d1e2f3a9b0c6d5e4f3a2b1c0 (don't put them in the repo)", dt_s=90)
    s.tool("Bash", {"command": "cd services/transcoder && R2_ACCESS_KEY_ID=2f9d7c41a8e3b650c1d4 "
                               "R2_SECRET_ACCESS_KEY=8b1e4f7a2c9d03e6f5a8b7c4d1e2f3a9b0c6d5e4f3a2b1c0 "
                               "R2_BUCKET=podhive-media-dev pnpm smoke:upload fixtures/audio/ep-041.mp3",
                    "description": "Smoke-test an upload against the R2 dev bucket"},
           "> transcoder@1.14.0 smoke:upload\n> tsx scripts/smoke-upload.ts fixtures/audio/ep-041.mp3\n\n"
           "uploaded smoke/ep-041.mp3 (41822113 bytes) to podhive-media-dev in 3.2s\nHEAD ok, ContentLength=41822113",
           rdt_s=5)
    s.say("Works against the dev bucket too.")
    s.user("great. next: the CDN. media.podhive.fm still points at CloudFront with the old S3 origin. how should we put "
           "it in front of R2?", dt_s=70)
    s.say("Options:\n\n1. R2 custom domain: attach media.podhive.fm to the `podhive-media` bucket in Cloudflare and let "
          "Cloudflare's cache serve it. No egress fees, nothing to run.\n"
          "2. Keep CloudFront and point its origin at R2's S3 endpoint. Works, but CloudFront bills egress again and "
          "we'd have to sign origin requests.\n"
          "3. A Worker in front of R2. Lets us check private-feed tokens at the edge, but it's code we'd have to own.\n\n"
          "I'd go with 1 now and keep 3 in mind if we want edge token checks later.", dt_s=10)
    s.user("yeah 1, the whole point of moving to R2 was the egress bill. worker maybe later, not now", dt_s=45)
    s.tool(*edit(f"{PA}/infra/cloudflare/r2.tf",
                 "resource \"cloudflare_r2_bucket\" \"media\" {\n  account_id = var.account_id\n  name       = \"podhive-media\"\n}",
                 "resource \"cloudflare_r2_bucket\" \"media\" {\n  account_id = var.account_id\n  name       = \"podhive-media\"\n}\n\n"
                 "resource \"cloudflare_r2_custom_domain\" \"media\" {\n  account_id  = var.account_id\n"
                 "  bucket_name = cloudflare_r2_bucket.media.name\n  domain      = \"media.podhive.fm\"\n"
                 "  zone_id     = var.zone_id\n  enabled     = true\n}"))
    s.tool("Bash", {"command": "cd infra/cloudflare && terraform plan -no-color | tail -22",
                    "description": "Plan the CDN change"},
           "  # cloudflare_dns_record.media_cname will be destroyed\n"
           "  - resource \"cloudflare_dns_record\" \"media_cname\" {\n"
           "      - content = \"d3k9x1v0q2m7ab.cloudfront.net\" -> null\n"
           "      - name    = \"media.podhive.fm\" -> null\n"
           "      - proxied = false -> null\n      - ttl     = 300 -> null\n      - type    = \"CNAME\" -> null\n    }\n\n"
           "  # cloudflare_r2_custom_domain.media will be created\n"
           "  + resource \"cloudflare_r2_custom_domain\" \"media\" {\n"
           "      + account_id  = (sensitive value)\n      + bucket_name = \"podhive-media\"\n"
           "      + domain      = \"media.podhive.fm\"\n      + enabled     = true\n      + id          = (known after apply)\n"
           "      + status      = (known after apply)\n      + zone_id     = (sensitive value)\n    }\n\n"
           "Plan: 1 to add, 0 to change, 1 to destroy.", rdt_s=14)
    s.say("The plan adds the R2 custom domain for media.podhive.fm and removes the CloudFront CNAME. I haven't applied it.")
    s.user("plan looks right, I'll apply it myself after standup, don't apply from your side.\n\na few more updates so "
           "you don't trip over old stuff: the queue is `media.transcode` now, we renamed all queues to domain.verb "
           "when queues got their own redis: redis-queues.internal:6379, not the shared one anymore. and "
           "stats-collector is Dana Okafor's now, Marcus moved to the ads team. if you touch download dedupe, ping Dana",
           dt_s=120)
    s.tool("Grep", {"pattern": "transcode-jobs", "path": ".", "output_mode": "content", "-n": True},
           "scripts/requeue-failed.ts:9:const queue = new Queue(\"transcode-jobs\", { connection });\n"
           "docs/architecture.md:41:Jobs are queued on `transcode-jobs` (BullMQ, shared Redis).")
    s.say("Two leftovers still use the old name. requeue-failed.ts would quietly create an empty queue under the old "
          "name and requeue nothing. Fixing both.")
    s.tool(*edit(f"{PA}/scripts/requeue-failed.ts",
                 "const queue = new Queue(\"transcode-jobs\", { connection });",
                 "const queue = new Queue(\"media.transcode\", { connection: queuesRedis });"))
    s.tool(*edit(f"{PA}/docs/architecture.md",
                 "Jobs are queued on `transcode-jobs` (BullMQ, shared Redis).",
                 "Jobs are queued on `media.transcode` (BullMQ, redis-queues.internal:6379)."))
    s.user("thx. one more rule for transcoder while you're in there: every rendition is loudness-normalized to "
           "-16 LUFS with two-pass loudnorm, no exceptions for \"already mastered\" uploads. creators keep asking, "
           "the answer is no", dt_s=85)
    s.tool("Grep", {"pattern": "loudnorm|skipNormalize", "path": "services/transcoder/src", "output_mode": "content", "-n": True},
           "services/transcoder/src/ffmpeg.ts:17:  if (job.skipNormalize) return baseArgs(job);\n"
           "services/transcoder/src/ffmpeg.ts:22:    \"-af\", `loudnorm=I=-16:TP=-1.5:LRA=11:measured_I=${m.input_i}:measured_TP=${m.input_tp}:measured_LRA=${m.input_lra}:measured_thresh=${m.input_thresh}`,\n"
           "services/transcoder/src/jobs.ts:12:  skipNormalize?: boolean;")
    s.say("Already -16 LUFS with two-pass loudnorm. But there's a `skipNormalize` flag on the job payload that "
          "bypasses it; want me to remove it?")
    s.user("yes kill it", dt_s=20)
    s.tool(*edit(f"{PA}/services/transcoder/src/ffmpeg.ts",
                 "  if (job.skipNormalize) return baseArgs(job);\n", ""))
    s.tool("Bash", {"command": "pnpm --filter transcoder test && git add -A && git commit -m \"transcoder: R2 checksum fix, "
                               "queue rename leftovers, drop skipNormalize\"",
                    "description": "Test and commit"},
           "\n Test Files  11 passed (11)\n      Tests  96 passed (96)\n   Duration  4.77s\n\n"
           "[chore/r2-transcoder 5be02d9] transcoder: R2 checksum fix, queue rename leftovers, drop skipNormalize\n"
           " 6 files changed, 24 insertions(+), 9 deletions(-)", rdt_s=9)
    s.say("Committed 5be02d9: the checksum setting for R2, the two `transcode-jobs` leftovers, `skipNormalize` "
          "removed, and the R2 custom domain in terraform (not applied).")
    return s.finish("Fix transcoder uploads to R2 and move CDN")


GOLD_A3 = {
    "session": A3, "project": PA, "order": 3, "language": "en",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "en",
         "text": "Media storage moved off S3: everything goes through Cloudflare R2, bucket `podhive-media`.",
         "must": ["R2", "podhive-media"], "supersedes": f"{A1}#e8"},
        {"id": "e2", "layer": "fact", "kind": "config", "lang": "en",
         "text": "The transcoder queue is now `media.transcode` (queues are named domain.verb).",
         "must": ["media.transcode"], "supersedes": f"{A1}#e7"},
        {"id": "e3", "layer": "fact", "kind": "config", "lang": "en",
         "text": "BullMQ queues have their own Redis, redis-queues.internal:6379, not the shared one.",
         "must": ["redis-queues.internal"]},
        {"id": "e4", "layer": "fact", "kind": "preference", "lang": "en",
         "text": "stats-collector is now owned by Dana Okafor; ping her before touching download dedupe.",
         "must": ["Dana Okafor"], "supersedes": f"{A1}#e9"},
        {"id": "e5", "layer": "experience", "kind": "root_cause", "lang": "en",
         "text": "Uploads to R2 failed with NotImplemented for header x-amz-checksum-crc32: @aws-sdk/client-s3 >= 3.729 "
                 "sends a CRC32 checksum by default; set requestChecksumCalculation and responseChecksumValidation to "
                 "\"WHEN_REQUIRED\" on the S3Client.",
         "must": ["checksum", "WHEN_REQUIRED"]},
        {"id": "e6", "layer": "decision", "kind": "decision", "lang": "en",
         "text": "media.podhive.fm is served as an R2 custom domain on the podhive-media bucket, over keeping CloudFront "
                 "(or a Worker), because avoiding the egress bill was the point of moving to R2.",
         "must": ["custom domain"], "chosen": "custom domain", "over": ["CloudFront"], "why": ["egress"]},
        {"id": "e7", "layer": "fact", "kind": "convention", "lang": "en",
         "text": "Every rendition is loudness-normalized to -16 LUFS with two-pass loudnorm, no exceptions for "
                 "\"already mastered\" uploads (skipNormalize was removed).",
         "must": ["-16 LUFS"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "fact", "kind": "config", "lang": "en",
         "text": "transcoder's S3 client for R2 uses region \"auto\" and the https://<account>.r2.cloudflarestorage.com endpoint.",
         "must": ["r2.cloudflarestorage.com"], "note": "true but visible in code"},
        {"id": "a2", "layer": "experience", "kind": "gotcha", "lang": "en",
         "text": "After renaming a BullMQ queue, grep for the old name: scripts like requeue-failed.ts silently create "
                 "an empty queue under the old name.",
         "must": ["requeue-failed"], "note": "borderline lesson"},
    ],
    "forbidden": [
        "podhive-media-prod in eu-west-1", "consumes the BullMQ queue transcode-jobs", "escapes them itself",
        "standup got moved", "still has region eu-west-1", "three days of red dashboards", "job 88213",
        "5be02d9", "Plan: 1 to add", "apply it myself after standup",
    ],
    "secrets": ["8b1e4f7a2c9d03e6f5a8b7c4d1e2f3a9b0c6d5e4f3a2b1c0", "2f9d7c41a8e3b650c1d4"],
}


# =====================================================================================================
# Project B: yunpiao 云票 演出票务平台, Chinese with code-switching
# =====================================================================================================
PB = "/home/dev/work/yunpiao"
B1 = "b1_yunpiao_seat_oversell"
B2 = "b2_yunpiao_gate_qr_expired"
B3 = "b3_yunpiao_paid_event_gap"


def session_b1():
    s = Transcript(B1, PB, "2026-11-03T06:10:00.000Z", "fix/seat-oversell", "2.1.337")
    s.user(recall_block([
        (2, "fact", "preference", "用户希望回答用中文，代码注释和 commit message 用英文。"),
        (6, "fact", "preference", "Prefer small PRs; don't reformat unrelated files."),
    ]) + "周六那场 livehouse 又超卖了，B区 7排 12号 同一个座位出了两张票 \U0001F629 客服那边已经炸了。帮我看看 seat-service "
         "和 order-service 的锁座逻辑。seat-service 本地用 `./gradlew :seat-service:bootRun` 起，端口 8086", dt_s=0)
    s.tool("Grep", {"pattern": "lockSeat|confirmSeats|lock_seat", "path": ".", "output_mode": "content", "-n": True,
                    "glob": "*.{java,lua,xml}"},
           "seat-service/src/main/java/com/yunpiao/seat/SeatLockService.java:23:    static final long SEAT_LOCK_TTL_MS = 600000L; // 10 min, contract limit\n"
           "seat-service/src/main/java/com/yunpiao/seat/SeatLockService.java:41:    Long ok = redis.execute(LOCK_SEAT, keys, token, String.valueOf(SEAT_LOCK_TTL_MS));\n"
           "seat-service/src/main/java/com/yunpiao/seat/SeatController.java:58:    public void confirmSeats(@RequestBody ConfirmReq req) {\n"
           "seat-service/src/main/resources/lua/lock_seat.lua:1:-- KEYS[1] = seat:{showId}:{seatId}\n"
           "order-service/src/main/java/com/yunpiao/order/client/SeatClient.java:19:    void confirm(@RequestParam long showId, @RequestBody List<String> seatIds);")
    s.tool("Read", {"file_path": f"{PB}/seat-service/src/main/resources/lua/lock_seat.lua"},
           "-- KEYS[1] = seat:{showId}:{seatId}\n-- ARGV[1] = lockToken, ARGV[2] = ttlMs\n"
           "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n  return 1\nend\nreturn 0")
    pay_java = ("@Transactional\n"
                "public void onPaid(PayNotify notify) {\n"
                "    Order order = orderMapper.selectByOutTradeNo(notify.getOutTradeNo());\n"
                "    if (order.getStatus() == OrderStatus.PAID) {\n"
                "        return; // duplicate notify\n"
                "    }\n"
                "    orderMapper.markPaid(order.getId(), notify.getTransactionId());\n"
                "    seatClient.confirm(order.getShowId(), order.getSeatIds());\n"
                "    kafkaTemplate.send(\"order_paid\", order.getId().toString(), OrderPaidEvent.of(order));\n"
                "}")
    s.tool("Read", {"file_path": f"{PB}/order-service/src/main/java/com/yunpiao/order/pay/PayCallbackService.java"}, pay_java)
    s.tool("Bash", {"command": "grep -n -A4 'id=\"confirm\"' seat-service/src/main/resources/mapper/SeatMapper.xml",
                    "description": "Show the confirm SQL"},
           "37:    <update id=\"confirm\">\n"
           "38-        UPDATE seat SET status = 'SOLD'\n"
           "39-        WHERE show_id = #{showId}\n"
           "40-          AND seat_no IN <foreach collection=\"seatIds\" item=\"s\" open=\"(\" separator=\",\" close=\")\">#{s}</foreach>\n"
           "41-    </update>")
    s.say("先列两个猜测：\n1. Redis 主从切换：哨兵 failover 时异步复制还没同步，新主没有这个 key，第二个用户就能再锁一次；\n"
          "2. 锁过期以后支付回调才到，而 confirm 的 UPDATE 不校验座位状态。\n\n我更倾向 1，因为 `SET NX PX` 本身是原子的。"
          "需要这两笔订单的时间线确认一下。", dt_s=8)
    s.user("failover？上周六好像没切过啊…不过你查。Loki 里捞的两单日志：\n```\n"
           "2026-11-01 19:02:11.204 INFO  [seat-service] lock ok show=88102 seat=B-07-12 order=YP20261101190211873 token=7c1e…\n"
           "2026-11-01 19:12:30.517 INFO  [seat-service] lock ok show=88102 seat=B-07-12 order=YP20261101191230102 token=a94f…\n"
           "2026-11-01 19:13:05.880 INFO  [order-service] pay notify ok order=YP20261101191230102 channel=wxpay\n"
           "2026-11-01 19:13:05.912 INFO  [seat-service] confirm show=88102 seats=[B-07-12] rows=1\n"
           "2026-11-01 19:14:40.233 INFO  [order-service] pay notify ok order=YP20261101190211873 channel=alipay\n"
           "2026-11-01 19:14:40.251 INFO  [seat-service] confirm show=88102 seats=[B-07-12] rows=1\n```", dt_s=130)
    s.say("对上了，不是 failover，猜测 1 排除。\n\n第一单 19:02:11 锁座，SEAT_LOCK_TTL 是 600000 ms（10 分钟），19:12:11 锁自动过期；"
          "19:12:30 第二单拿到同一个座位的锁，19:13:05 付款并 confirm；第一单的支付宝回调 19:14:40 才到，`onPaid` 不检查锁是否还属于"
          "这笔订单，confirm 的 UPDATE 也不带 status / lock_token 条件，rows=1 照样成功，于是两单都出票。\n\n"
          "根因：支付回调晚于锁过期时，没有任何地方校验座位锁的归属。\n\n修复方案：\n"
          "A. SEAT_LOCK_TTL 拉长到 30 分钟，覆盖支付渠道的超时时间\n"
          "B. confirm 改成条件更新：`UPDATE seat SET status='SOLD', order_id=? WHERE seat_no=? AND status='LOCKED' AND lock_token=?`，"
          "影响行数为 0 就不出票、自动退款\n"
          "C. 换 Redisson 的 RLock + watchdog 自动续期\n\n我建议 B。", dt_s=12)
    s.user("B。A 不行，主办方合同里写死了锁座最多 10 分钟，超时必须放票。C 也解决不了，续期管不了回调晚到。退款走原路退回，"
           "调 pay-callback 的 `/internal/refund`。", dt_s=100)
    s.tool(*edit(f"{PB}/seat-service/src/main/resources/mapper/SeatMapper.xml",
                 "        UPDATE seat SET status = 'SOLD'\n        WHERE show_id = #{showId}\n"
                 "          AND seat_no IN <foreach collection=\"seatIds\" item=\"s\" open=\"(\" separator=\",\" close=\")\">#{s}</foreach>",
                 "        UPDATE seat SET status = 'SOLD', order_id = #{orderId}\n        WHERE show_id = #{showId}\n"
                 "          AND seat_no = #{seatNo}\n          AND status = 'LOCKED'\n          AND lock_token = #{lockToken}"))
    s.tool(*edit(f"{PB}/order-service/src/main/java/com/yunpiao/order/pay/PayCallbackService.java",
                 "    orderMapper.markPaid(order.getId(), notify.getTransactionId());\n"
                 "    seatClient.confirm(order.getShowId(), order.getSeatIds());",
                 "    orderMapper.markPaid(order.getId(), notify.getTransactionId());\n"
                 "    ConfirmResult r = seatClient.confirm(order.getShowId(), order.getSeatLocks());\n"
                 "    if (!r.allConfirmed()) {\n"
                 "        // lock expired and the seat went to someone else: refund to the original channel\n"
                 "        refundClient.refund(order.getId(), RefundReason.SEAT_LOCK_EXPIRED);\n"
                 "        return;\n"
                 "    }"))
    s.say("还需要给 seat 表加一个 `lock_token` 列，我来加 Flyway migration。文件命名有什么规范吗？")
    s.user("有。Flyway migration 文件名一律 `V{yyyyMMddHHmm}__描述.sql`，已经合进 main 的 migration 绝对不能改，要改就新建一个。"
           "测试库连这个：jdbc:mysql://10.30.1.12:3306/yunpiao_test?user=yp_test&password=Yp#test2026!x 别提交进去啊", dt_s=75)
    s.tool(*write(f"{PB}/seat-service/src/main/resources/db/migration/V202611031430__seat_add_lock_token.sql",
                  "ALTER TABLE seat\n  ADD COLUMN lock_token VARCHAR(64) NULL AFTER status,\n"
                  "  ADD COLUMN order_id BIGINT NULL AFTER lock_token;\n"))
    s.tool("Bash", {"command": "./gradlew :seat-service:flywayMigrate -Pflyway.url='jdbc:mysql://10.30.1.12:3306/yunpiao_test' "
                               "-Pflyway.user=yp_test -Pflyway.password='Yp#test2026!x'",
                    "description": "Apply the new migration to the test DB"},
           "> Task :seat-service:flywayMigrate\nFlyway Community Edition 10.17.0 by Redgate\n"
           "Database: jdbc:mysql://10.30.1.12:3306/yunpiao_test (MySQL 8.0)\n"
           "Successfully validated 37 migrations (execution time 00:00.084s)\n"
           "Current version of schema `yunpiao_test`: 202610281120\n"
           "Migrating schema `yunpiao_test` to version \"202611031430 - seat add lock token\"\n"
           "Successfully applied 1 migration to schema `yunpiao_test`, now at version v202611031430 (execution time 00:00.412s)\n\n"
           "BUILD SUCCESSFUL in 6s\n3 actionable tasks: 1 executed, 2 up-to-date", rdt_s=8)
    s.tool("Bash", {"command": "./gradlew :order-service:integrationTest", "description": "Run order-service integration tests"},
           "Exit code 1\n> Task :order-service:integrationTest\n\n"
           "PayCallbackServiceIT > initializationError FAILED\n"
           "    java.lang.IllegalStateException: Could not find a valid Docker environment. Please see logs and check configuration\n"
           "        at org.testcontainers.dockerclient.DockerClientProviderStrategy.lambda$getFirstValidStrategy$7(DockerClientProviderStrategy.java:277)\n"
           "        at java.base/java.util.Optional.orElseThrow(Optional.java:403)\n\n"
           "OrderQueryIT > initializationError FAILED\n"
           "    java.lang.IllegalStateException at DockerClientProviderStrategy.java:277\n\n"
           "12 tests completed, 12 failed\n\nFAILURE: Build failed with an exception.\n\n"
           "* What went wrong:\nExecution failed for task ':order-service:integrationTest'.\n"
           "> There were failing tests. See the report at: file:///home/dev/work/yunpiao/order-service/build/reports/tests/integrationTest/index.html",
           is_error=True, rdt_s=21)
    s.say("Testcontainers 找不到 Docker。你本机是 colima 吧？colima 的 socket 不在 /var/run/docker.sock。")
    s.user("对，colima。README 里好像写过但我忘了", dt_s=30)
    s.tool("Bash", {"command": "DOCKER_HOST=\"unix://$HOME/.colima/default/docker.sock\" "
                               "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock ./gradlew :order-service:integrationTest",
                    "description": "Run integration tests against colima"},
           "> Task :order-service:integrationTest\n\n"
           "PayCallbackServiceIT > onPaid_marksPaidAndConfirms() PASSED\n"
           "PayCallbackServiceIT > onPaid_duplicateNotify_isNoop() PASSED\n"
           "PayCallbackServiceIT > onPaid_afterLockExpired_refunds() PASSED\n"
           "OrderQueryIT > listByUser_paginates() PASSED\n...\n\n48 tests completed, 0 failed\n\n"
           "BUILD SUCCESSFUL in 1m 12s\n9 actionable tasks: 3 executed, 6 up-to-date", rdt_s=75)
    s.say("全部通过，包括新加的 `onPaid_afterLockExpired_refunds`。记一下：本机用 colima 跑 integrationTest 要设置 "
          "`DOCKER_HOST=unix://$HOME/.colima/default/docker.sock` 和 `TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock`，"
          "否则 Testcontainers 报 Could not find a valid Docker environment。\n\n"
          "要不要顺手给 `seatClient.confirm` 加上 Spring Retry，网络抖动时自动重试三次？")
    s.user("不用，先别扩大改动范围。另外几件事你记一下：\n"
           "- 支付成功事件发 Kafka topic `order_paid`，ticket-issuer 和短信服务都订阅它\n"
           "- pay-callback 是王磊负责的，`/internal/refund` 有改动要先找他 review\n"
           "- 短信现在走阿里云短信，签名「云票演出」，模板在阿里云控制台\n\n"
           "我先去开个会，下午三点回来看 CR。CI 又挂了，不知道谁的锅 \U0001F644", dt_s=140)
    s.say("好的。我先提交并推送分支，PR 描述里写清楚时间线和修复方式。")
    s.tool("Bash", {"command": "git add -A && git commit -m \"fix(order): verify seat lock ownership on pay notify\" "
                               "&& git push -u origin fix/seat-oversell",
                    "description": "Commit and push"},
           "[fix/seat-oversell 3e7a9c0] fix(order): verify seat lock ownership on pay notify\n"
           " 4 files changed, 96 insertions(+), 11 deletions(-)\n"
           " create mode 100644 seat-service/src/main/resources/db/migration/V202611031430__seat_add_lock_token.sql\n"
           "To git.yunpiao.com:backend/yunpiao.git\n * [new branch]      fix/seat-oversell -> fix/seat-oversell", rdt_s=5)
    s.say("已推送 `fix/seat-oversell`（3e7a9c0）：confirm 改为按 lock_token 条件更新，锁已过期的支付回调会原路退款；"
          "新增 migration V202611031430。")
    return s.finish("排查座位超卖：支付回调晚于锁过期")


GOLD_B1 = {
    "session": B1, "project": PB, "order": 1, "language": "zh",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "seat-service 本地用 `./gradlew :seat-service:bootRun` 启动，端口 8086。",
         "must": ["8086", "bootRun"]},
        {"id": "e2", "layer": "experience", "kind": "root_cause", "lang": "zh",
         "text": "超卖根因：锁座过期后支付回调才到，onPaid 不校验座位锁是否还属于这笔订单，confirm 的 UPDATE 也不带 status / lock_token "
                 "条件，同一座位被两单确认。",
         "must": ["回调", "lock_token"]},
        {"id": "e3", "layer": "decision", "kind": "decision", "lang": "zh",
         "text": "修复超卖选 B：confirm 改成条件更新（status='LOCKED' AND lock_token=?），影响行数为 0 就不出票并调 pay-callback 的 "
                 "/internal/refund 原路退款；不选延长锁座 TTL（主办方合同限制锁座最多 10 分钟），也不选 Redisson watchdog 续期（解决不了回调晚到）。",
         "must": ["条件更新"], "chosen": "条件更新", "over": ["Redisson"], "why": ["主办方合同"]},
        {"id": "e4", "layer": "fact", "kind": "constraint", "lang": "zh",
         "text": "锁座时长 SEAT_LOCK_TTL = 600000 ms（10 分钟），主办方合同规定锁座超时必须放票。",
         "must": ["SEAT_LOCK_TTL", "600000"]},
        {"id": "e5", "layer": "experience", "kind": "fix", "lang": "zh",
         "text": "本机用 colima 跑 integrationTest 时要设 DOCKER_HOST=unix://$HOME/.colima/default/docker.sock 和 "
                 "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE=/var/run/docker.sock，否则 Testcontainers 报 Could not find a valid Docker environment。",
         "must": ["colima"]},
        {"id": "e6", "layer": "fact", "kind": "convention", "lang": "zh",
         "text": "Flyway migration 文件名一律 V{yyyyMMddHHmm}__描述.sql；已经合进 main 的 migration 不能改，要改就新建一个。",
         "must": ["Flyway", "yyyyMMddHHmm"]},
        {"id": "e7", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "支付成功事件发 Kafka topic `order_paid`，ticket-issuer 和短信服务都订阅它。",
         "must": ["order_paid", "短信"]},
        {"id": "e8", "layer": "fact", "kind": "preference", "lang": "zh",
         "text": "pay-callback 由王磊负责，/internal/refund 有改动要先找他 review。",
         "must": ["王磊"]},
        {"id": "e9", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "短信走阿里云短信，签名「云票演出」，模板在阿里云控制台维护。",
         "must": ["阿里云", "云票演出"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "测试库是 10.30.1.12:3306/yunpiao_test（账号 yp_test）。",
         "must": ["10.30.1.12"], "note": "host is fine to keep; the password is a secret"},
    ],
    "forbidden": [
        "commit message 用英文", "don't reformat unrelated files",
        "新主没有这个 key", "B区 7排 12号", "YP20261101190211873", "下午三点", "CI 又挂了", "3e7a9c0",
        "Spring Retry", "48 tests completed",
    ],
    "secrets": ["Yp#test2026!x", "jdbc:mysql://10.30.1.12:3306/yunpiao_test?user=yp_test&password=Yp#test2026!x"],
}


def session_b2():
    s = Transcript(B2, PB, "2026-11-12T02:30:00.000Z", "fix/qr-window", "2.1.341")
    s.user(recall_block([
        (40, "fact", "config", "seat-service 本地用 ./gradlew :seat-service:bootRun 启动，端口 8086。"),
        (43, "fact", "config", "支付成功事件发 Kafka topic order_paid，ticket-issuer 和短信服务订阅。"),
        (45, "fact", "convention", "Flyway migration 命名 V{yyyyMMddHHmm}__描述.sql，已合并的不能改。"),
    ]) + "早。昨晚深圳那场，闸机那边反馈有一批电子票扫码提示「票码已过期」，现场只能人工放行，主办方很不爽。ticket-issuer 的二维码是 "
         "30 秒一换的动态码，帮我看看是不是验签逻辑有问题", dt_s=0)
    verifier = ("public boolean verify(String payload, long nowMillis) {\n"
                "    QrPayload p = QrPayload.decode(payload);\n"
                "    long window = nowMillis / WINDOW_MS;          // WINDOW_MS = 30_000\n"
                "    if (p.window() < window) {\n"
                "        throw new QrExpiredException(p.ticketId(), p.window(), window);\n"
                "    }\n"
                "    String expected = hmac(p.ticketId() + \":\" + p.window());\n"
                "    return p.window() == window\n"
                "        && MessageDigest.isEqual(expected.getBytes(UTF_8), p.sig().getBytes(UTF_8));\n"
                "}")
    s.tool("Read", {"file_path": f"{PB}/ticket-issuer/src/main/java/com/yunpiao/ticket/qr/QrCodeVerifier.java"}, verifier)
    s.say("先排除一个可能：如果 HMAC key 最近在 Nacos 里轮换过、而闸机那边还缓存着旧 key，签名会全部对不上。不过那样报的应该是"
          "「签名错误」而不是「已过期」。能看一下 Nacos 里 `ticket.qr.hmac-key` 最近有没有改过吗？")
    s.user("Nacos 历史看了，上次改是 9 月，不是这个。key 给你本地复现用：ticket.qr.hmac-key=9c4e1b7a5f3d28e6b0a4c7d1f9e2b5a8 "
           "（这是 staging 的）", dt_s=150)
    s.tool("Bash", {"command": "kubectl -n yp-prod logs deploy/gate-verify --since=16h | grep EXPIRED | head -6; "
                               "kubectl -n yp-prod logs deploy/gate-verify --since=16h | grep -c EXPIRED",
                    "description": "Look at expired-QR rejections from last night"},
           "2026-11-11T19:41:02.118+08:00 WARN verify EXPIRED gate=SZ-G07 ticket=T88102-00412 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:02\n"
           "2026-11-11T19:41:03.004+08:00 WARN verify EXPIRED gate=SZ-G07 ticket=T88102-00977 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:03\n"
           "2026-11-11T19:41:09.561+08:00 WARN verify EXPIRED gate=SZ-G08 ticket=T88102-01530 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:09\n"
           "2026-11-11T19:41:15.230+08:00 WARN verify EXPIRED gate=SZ-G09 ticket=T88102-00088 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:15\n"
           "2026-11-11T19:41:16.774+08:00 WARN verify EXPIRED gate=SZ-G07 ticket=T88102-02214 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:16\n"
           "2026-11-11T19:41:21.002+08:00 WARN verify EXPIRED gate=SZ-G08 ticket=T88102-01101 qrWindow=58736406 gateWindow=58736402 gateClock=2026-11-11T19:39:21\n"
           "318", dt_s=5, rdt_s=4)
    s.tool("Read", {"file_path": f"{PB}/gate-agent/src/main/java/com/yunpiao/gate/HeartbeatReporter.java"},
           "@Scheduled(fixedRate = 15_000)\n"
           "public void report() {\n"
           "    Heartbeat hb = new Heartbeat(gateId, firmwareVersion, queue.size());\n"
           "    verifyClient.heartbeat(hb);\n"
           "}")
    s.say("找到了。318 条 EXPIRED 全部来自 SZ-G07～G09 三台闸机，日志里 gateClock 比服务器时间慢了整整 120 秒（4 个窗口）。闸机是"
          "离线验签的，用本地时钟算 window，场馆内网没有 NTP，时钟一漂就把当前的码当成过期码。不是 key 的问题，ticket-issuer 生成也没问题。"
          "\n\n两种改法：\n1. 让场馆给闸机开 NTP，或者闸机 agent 启动时从 gate-verify 同步时间\n"
          "2. 验签时容忍前后各 1 个窗口（±30 秒），同时心跳里上报时钟偏差，偏差超过 60 秒告警\n")
    s.user("2。场馆网络我们管不了，上次让万象那边开个 NTP 端口拖了两个月。±1 个窗口，告警阈值 60 秒可以。\n\n"
           "对了 seat-service 端口改了，现在是 9086，原来那个跟新的网关 sidecar 冲突，你本地 run config 记得改", dt_s=110)
    s.tool(*edit(f"{PB}/ticket-issuer/src/main/java/com/yunpiao/ticket/qr/QrCodeVerifier.java",
                 "    if (p.window() < window) {\n"
                 "        throw new QrExpiredException(p.ticketId(), p.window(), window);\n"
                 "    }\n"
                 "    String expected = hmac(p.ticketId() + \":\" + p.window());\n"
                 "    return p.window() == window\n"
                 "        && MessageDigest.isEqual(expected.getBytes(UTF_8), p.sig().getBytes(UTF_8));",
                 "    // gates verify offline with their own clock; tolerate one window either side\n"
                 "    if (Math.abs(p.window() - window) > 1) {\n"
                 "        throw new QrExpiredException(p.ticketId(), p.window(), window);\n"
                 "    }\n"
                 "    String expected = hmac(p.ticketId() + \":\" + p.window());\n"
                 "    return MessageDigest.isEqual(expected.getBytes(UTF_8), p.sig().getBytes(UTF_8));"))
    s.tool(*edit(f"{PB}/gate-agent/src/main/java/com/yunpiao/gate/HeartbeatReporter.java",
                 "    Heartbeat hb = new Heartbeat(gateId, firmwareVersion, queue.size());",
                 "    Heartbeat hb = new Heartbeat(gateId, firmwareVersion, queue.size(), System.currentTimeMillis());"))
    s.tool(*write(f"{PB}/deploy/prometheus/rules/gate.yml",
                  "groups:\n  - name: gate\n    rules:\n      - alert: GateClockSkew\n"
                  "        expr: abs(gate_clock_skew_seconds) > 60\n        for: 5m\n"
                  "        labels: { severity: warning }\n"
                  "        annotations: { summary: \"闸机 {{ $labels.gate }} 时钟偏差超过 60 秒\" }\n"))
    s.tool("Bash", {"command": "./gradlew :ticket-issuer:test --tests '*QrCodeVerifier*'", "description": "Run verifier tests"},
           "> Task :ticket-issuer:test\n\nQrCodeVerifierTest > acceptsCurrentWindow() PASSED\n"
           "QrCodeVerifierTest > acceptsPreviousWindow() PASSED\nQrCodeVerifierTest > acceptsNextWindow() PASSED\n"
           "QrCodeVerifierTest > rejectsTwoWindowsOld() PASSED\nQrCodeVerifierTest > rejectsBadSignature() PASSED\n\n"
           "BUILD SUCCESSFUL in 14s\n4 actionable tasks: 2 executed, 2 up-to-date", rdt_s=16)
    s.say("测试通过：当前窗口和前后各一个窗口放行，差两个窗口仍然拒绝；闸机心跳带上了本地时间，告警规则也加好了。")
    s.user("ok。谁能帮我带杯奶茶就好了\U0001F62E\u200D\U0001F4A8 话说 WINDOW_MS 当初为什么是 30 秒不是 60？", dt_s=90)
    s.tool("Bash", {"command": "git log -S'WINDOW_MS = 30_000' --format='%h %ad %an %s' --date=short -- ticket-issuer/",
                    "description": "Find when the QR window was set to 30s"},
           "a41d9e2 2025-06-18 chenyu shorten QR window to 30s (screenshot resale, see YP-1203)")
    s.say("2025 年 6 月改的，commit 说是为了防截图转卖（YP-1203）。现在容忍 ±1 个窗口后，一个码最长约 90 秒内有效，截图转卖的"
          "空间会大一点，要不要在 PR 描述里写明？")
    s.user("写上吧，让产品知道。今天先到这，我下午要去场馆踩点", dt_s=60)
    s.tool("Bash", {"command": "git add -A && git commit -m \"fix(ticket): tolerate +/-1 QR window; report gate clock skew\" "
                               "-m \"Gates verify offline with local clocks; SZ-G07..G09 were 120s behind. "
                               "Note: codes now stay valid up to ~90s (see YP-1203).\"",
                    "description": "Commit"},
           "[fix/qr-window 6d0b3f8] fix(ticket): tolerate +/-1 QR window; report gate clock skew\n"
           " 4 files changed, 38 insertions(+), 7 deletions(-)\n create mode 100644 deploy/prometheus/rules/gate.yml")
    s.say("已提交 6d0b3f8，PR 描述里写了 90 秒有效期的影响，等你推送。")
    return s.finish("闸机动态码误报过期：时钟漂移")


GOLD_B2 = {
    "session": B2, "project": PB, "order": 2, "language": "zh",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "seat-service 端口改成 9086 了（原来的端口跟新的网关 sidecar 冲突）。",
         "must": ["9086"], "supersedes": f"{B1}#e1"},
        {"id": "e2", "layer": "experience", "kind": "root_cause", "lang": "zh",
         "text": "闸机扫码报「票码已过期」的根因：闸机离线验签、用本地时钟算 window，场馆内网没有 NTP，SZ-G07～G09 时钟慢了 120 秒，"
                 "把当前动态码当成过期码；不是 HMAC key 的问题。",
         "must": ["闸机", "时钟"]},
        {"id": "e3", "layer": "decision", "kind": "decision", "lang": "zh",
         "text": "动态码验签容忍前后各 1 个窗口（±1 个窗口，±30 秒），心跳上报时钟偏差、超过 60 秒告警；不选让场馆配 NTP，"
                 "因为场馆网络我们管不了。",
         "must": ["窗口"], "chosen": "±1", "over": ["NTP"], "why": ["场馆网络"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "fact", "kind": "constraint", "lang": "zh",
         "text": "二维码 WINDOW_MS 是 30 秒，为了防截图转卖（YP-1203）；容忍 ±1 窗口后一个码最长约 90 秒有效。",
         "must": ["YP-1203"], "note": "history of the 30s window"},
    ],
    "forbidden": [
        "端口 8086。", "ticket-issuer 和短信服务订阅", "已合并的不能改",
        "轮换过", "上次改是 9 月", "奶茶", "场馆踩点", "T88102-00412", "6d0b3f8", "BUILD SUCCESSFUL in 14s",
    ],
    "secrets": ["9c4e1b7a5f3d28e6b0a4c7d1f9e2b5a8"],
}


def session_b3():
    s = Transcript(B3, PB, "2026-11-24T03:00:00.000Z", "fix/paid-event-gap", "2.1.346")
    s.user(recall_block([
        (51, "fact", "config", "短信走阿里云短信，签名「云票演出」，模板在阿里云控制台。"),
        (52, "fact", "config", "支付成功事件发 Kafka topic order_paid，ticket-issuer 和短信服务订阅。"),
        (53, "fact", "preference", "pay-callback 由王磊负责，/internal/refund 改动先找他 review。"),
    ]) + "上周五开始短信已经切到腾讯云了，阿里云那边的账号月底注销。现在的问题是：周末有 12 个用户付了钱没收到出票短信，"
         "App 里也看不到票。帮我查一下 ticket-issuer", dt_s=0)
    s.say("先看 ticket-issuer 这几天的消费日志。", dt_s=5)
    s.tool("Bash", {"command": "kubectl -n yp-prod logs deploy/ticket-issuer --since=72h | grep -E 'Subscribed|committed offset|Resetting offset' | head -12",
                    "description": "Check ticket-issuer consumer startup logs"},
           "2026-11-21T18:02:44.120+08:00 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=ticket-issuer-0, groupId=ticket-issuer-v2] Subscribed to topic(s): yp.order.paid.v2\n"
           "2026-11-21T18:02:47.918+08:00 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=ticket-issuer-0, groupId=ticket-issuer-v2] Found no committed offset for partition yp.order.paid.v2-0\n"
           "2026-11-21T18:02:47.919+08:00 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=ticket-issuer-1, groupId=ticket-issuer-v2] Found no committed offset for partition yp.order.paid.v2-1\n"
           "2026-11-21T18:02:47.919+08:00 INFO  o.a.k.c.c.i.ConsumerCoordinator - [Consumer clientId=ticket-issuer-2, groupId=ticket-issuer-v2] Found no committed offset for partition yp.order.paid.v2-2\n"
           "2026-11-21T18:02:47.921+08:00 INFO  o.a.k.c.c.i.SubscriptionState - [Consumer clientId=ticket-issuer-0, groupId=ticket-issuer-v2] Resetting offset for partition yp.order.paid.v2-0 to position FetchPosition{offset=4, offsetEpoch=Optional.empty}\n"
           "2026-11-21T18:02:47.922+08:00 INFO  o.a.k.c.c.i.SubscriptionState - [Consumer clientId=ticket-issuer-1, groupId=ticket-issuer-v2] Resetting offset for partition yp.order.paid.v2-1 to position FetchPosition{offset=5, offsetEpoch=Optional.empty}\n"
           "2026-11-21T18:02:47.922+08:00 INFO  o.a.k.c.c.i.SubscriptionState - [Consumer clientId=ticket-issuer-2, groupId=ticket-issuer-v2] Resetting offset for partition yp.order.paid.v2-2 to position FetchPosition{offset=3, offsetEpoch=Optional.empty}",
           rdt_s=4)
    s.say("ticket-issuer 周五 18:02 重新订阅了 `yp.order.paid.v2`。我先怀疑是 consumer rebalance 卡住了：要是有一个实例卡在 "
          "rebalance 里，它负责的分区就没人消费。看一下 lag。")
    s.tool("Bash", {"command": "kafka-consumer-groups.sh --bootstrap-server kafka-1.yp.internal:9092 --describe --group ticket-issuer-v2",
                    "description": "Describe the consumer group"},
           "GROUP             TOPIC             PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG  CONSUMER-ID                                      HOST          CLIENT-ID\n"
           "ticket-issuer-v2  yp.order.paid.v2  0          9311            9311            0    ticket-issuer-0-3f0c1a2e-8d7b-4c55-9e1f-2b6a0d4c7e91  /10.40.2.17  ticket-issuer-0\n"
           "ticket-issuer-v2  yp.order.paid.v2  1          9287            9287            0    ticket-issuer-1-77b2e9d4-1c3a-4f08-a6e5-90d1c2b3f4a5  /10.40.2.18  ticket-issuer-1\n"
           "ticket-issuer-v2  yp.order.paid.v2  2          9342            9342            0    ticket-issuer-2-c4d5e6f7-0a1b-4c2d-8e3f-5a6b7c8d9e0f  /10.40.2.19  ticket-issuer-2",
           rdt_s=6)
    s.say("lag 全是 0，三个实例都分到了分区，rebalance 的猜测不对。再看 producer 是什么时候切到新 topic 的。")
    s.tool("Bash", {"command": "git log --since=2026-11-18 --format='%h %ad %an %s' --date=iso -- order-service/src/main/java/com/yunpiao/order/pay/ "
                               "&& grep -n 'auto-offset-reset' ticket-issuer/src/main/resources/application.yml",
                    "description": "Find the producer switch and consumer offset policy"},
           "c81f2d4 2026-11-21 17:40:12 +0800 chensiyu switch order paid event to yp.order.paid.v2\n"
           "18:      auto-offset-reset: latest")
    s.say("根因找到了：order-service 周五 17:41 发布后就开始往 `yp.order.paid.v2` 写事件，而 ticket-issuer 18:02 才发布上线。"
          "新的 consumer group `ticket-issuer-v2` 没有已提交的 offset，`auto.offset.reset` 又配的是 `latest`，所以它直接从最新位置"
          "开始消费，17:41–18:02 之间发出的 12 条支付成功事件（三个分区 4+5+3）被整体跳过，正好是那 12 个用户。\n\n"
          "补救：写个一次性脚本，按时间段从 DB 里找出这 12 单，重新发到 `yp.order.paid.v2`。ticket-issuer 是按 order_id 幂等的，"
          "重复发也不会出两张票。")
    s.user("行，脚本你写，我来跑。话说以后这种换 topic 的事怎么避免？", dt_s=95)
    s.say("两种做法：\n1. 换 topic 时先双写：producer 同时写老 topic 和新 topic 一周，consumer 切到新 topic、确认追上以后再停老 topic\n"
          "2. 直接切换，但约定新 consumer 必须先上线、`auto.offset.reset=earliest`，然后才切 producer\n\n"
          "我倾向 1，对发布顺序不敏感，回滚也简单；代价是这一周下游要能处理重复消息（ticket-issuer 已经幂等）。", dt_s=10)
    s.user("行，就按 1，以后换 topic 都先双写一周。2 太依赖发布顺序了，这次就是这么翻车的。", dt_s=60)
    s.tool(*write(f"{PB}/scripts/oneoff/republish_paid_20261121.sh",
                  "#!/usr/bin/env bash\n# One-off: re-publish order paid events skipped on 2026-11-21 17:41-18:02 (ticket-issuer-v2 started at latest).\n"
                  "set -euo pipefail\n"
                  "mysql --defaults-extra-file=\"$HOME/.yp-prod-ro.cnf\" -N -e \"\n"
                  "  SELECT JSON_OBJECT('orderId', id, 'userId', user_id, 'showId', show_id, 'paidAt', UNIX_TIMESTAMP(paid_at)*1000)\n"
                  "  FROM orders WHERE status='PAID' AND paid_at BETWEEN '2026-11-21 17:41:00' AND '2026-11-21 18:03:00'\" \\\n"
                  "| kcat -P -b kafka-1.yp.internal:9092 -t yp.order.paid.v2 -K: \n"))
    s.say("脚本写好了：scripts/oneoff/republish_paid_20261121.sh，按 paid_at 时间段查出这批订单，用 kcat 重新发到 "
          "`yp.order.paid.v2`。需要你本机有只读库的 ~/.yp-prod-ro.cnf。")
    s.user("跑完了，12 张票都出了，短信也到了 \u2705\n\n再同步几件事，省得你以后查错：\n"
           "1. pay-callback 现在归陈思雨了，磊哥调去做会员系统了，退款相关找思雨\n"
           "2. 老的 order_paid 周五起就没人写了，月底删，以后都用 `yp.order.paid.v2`\n"
           "3. 锁座时长主办方那边重新谈了，SEAT_LOCK_TTL 改成 900000（15 分钟），在 Nacos `seat.lock.ttl-ms` 里配，以 Nacos 为准\n\n"
           "腾讯云的 key 给你本地调试用：SecretId=AKIDyp7Hq2Lm9Xw4Rt6Vb3Nc8Zk1Jd5Fs0Ga SecretKey=kT9xQ2mV7bN4cR8zL1pW6yH3jF5dS0aE",
           dt_s=900)
    s.tool("Grep", {"pattern": "template", "path": "sms-service/src/main/resources", "output_mode": "content", "-n": True, "-A": 3},
           "sms-service/src/main/resources/application.yml:14:      templates:\n"
           "sms-service/src/main/resources/application.yml-15-        ticket-issued: 2093377\n"
           "sms-service/src/main/resources/application.yml-16-        refund-done: 2093381\n"
           "sms-service/src/main/resources/application.yml-17-        seat-released: 2093390")
    s.say("sms-service 的 application.yml 里还写死着三个腾讯云模板 ID。要不要挪到 Nacos？")
    s.user("要。腾讯云短信的模板 ID 统一放 Nacos `sms.tencent.templates`，不要写死在 application.yml 里，运营改模板不用发版", dt_s=45)
    s.tool(*edit(f"{PB}/sms-service/src/main/resources/application.yml",
                 "      templates:\n        ticket-issued: 2093377\n        refund-done: 2093381\n        seat-released: 2093390\n",
                 "      # template IDs live in Nacos: sms.tencent.templates\n"))
    s.tool(*edit(f"{PB}/sms-service/src/main/java/com/yunpiao/sms/TencentSmsProperties.java",
                 "@ConfigurationProperties(prefix = \"sms.tencent\")\npublic class TencentSmsProperties {",
                 "@RefreshScope\n@ConfigurationProperties(prefix = \"sms.tencent\")\npublic class TencentSmsProperties {"))
    s.tool("Bash", {"command": "./gradlew :sms-service:test", "description": "Run sms-service tests"},
           "> Task :sms-service:test\n\nTencentSmsSenderTest > sendsTicketIssued() PASSED\n"
           "TencentSmsSenderTest > missingTemplate_failsFast() PASSED\nTemplatePropertiesTest > bindsFromNacos() PASSED\n\n"
           "BUILD SUCCESSFUL in 19s\n4 actionable tasks: 2 executed, 2 up-to-date", rdt_s=21)
    s.user("\U0001F44C 我去提 PR 了，今天先这样。复盘文档我晚上写", dt_s=50)
    s.say("好的。一次性补发脚本在 scripts/oneoff/ 下，模板 ID 已经改为从 Nacos 读取，sms-service 测试通过。")
    return s.finish("支付事件漏消费：新 consumer group 从 latest 开始")


GOLD_B3 = {
    "session": B3, "project": PB, "order": 3, "language": "zh",
    "expected": [
        {"id": "e1", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "短信已经切到腾讯云短信，不再用阿里云（阿里云账号月底注销）。",
         "must": ["腾讯云"], "supersedes": f"{B1}#e9"},
        {"id": "e2", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "支付成功事件的 topic 现在是 `yp.order.paid.v2`，老 topic 已停写、月底删除。",
         "must": ["yp.order.paid.v2"], "supersedes": f"{B1}#e7"},
        {"id": "e3", "layer": "fact", "kind": "preference", "lang": "zh",
         "text": "pay-callback 现在归陈思雨负责，退款相关找她。",
         "must": ["陈思雨"], "supersedes": f"{B1}#e8"},
        {"id": "e4", "layer": "fact", "kind": "constraint", "lang": "zh",
         "text": "锁座时长改为 SEAT_LOCK_TTL = 900000（15 分钟），在 Nacos `seat.lock.ttl-ms` 配置，以 Nacos 为准。",
         "must": ["900000"], "supersedes": f"{B1}#e4"},
        {"id": "e5", "layer": "experience", "kind": "root_cause", "lang": "zh",
         "text": "12 单没出票的根因：order-service 先切到新 topic 写事件，ticket-issuer 晚 20 分钟才上线，新 consumer group 没有已提交 "
                 "offset 且 auto.offset.reset=latest，中间的支付成功事件被整体跳过。",
         "must": ["auto.offset.reset"]},
        {"id": "e6", "layer": "decision", "kind": "decision", "lang": "zh",
         "text": "以后换 Kafka topic 一律先双写一周（producer 同时写新老 topic，consumer 追上后再停老的），不选直接切换"
                 "（新 consumer 先上线 + earliest），因为直接切换太依赖发布顺序。",
         "must": ["双写"], "chosen": "双写", "over": ["直接切换"], "why": ["发布顺序"]},
        {"id": "e7", "layer": "fact", "kind": "convention", "lang": "zh",
         "text": "腾讯云短信模板 ID 统一放 Nacos `sms.tencent.templates`，不写死在 application.yml，运营改模板不用发版。",
         "must": ["sms.tencent.templates"]},
    ],
    "acceptable": [
        {"id": "a1", "layer": "fact", "kind": "convention", "lang": "zh",
         "text": "ticket-issuer 按 order_id 幂等，重复的支付成功事件不会出两张票。",
         "must": ["幂等"], "note": "stated in passing by the assistant"},
        {"id": "a2", "layer": "fact", "kind": "config", "lang": "zh",
         "text": "ticket-issuer 的 consumer group 是 ticket-issuer-v2；Kafka 地址 kafka-1.yp.internal:9092。",
         "must": ["ticket-issuer-v2"], "note": "visible in config"},
    ],
    "forbidden": [
        "模板在阿里云控制台", "ticket-issuer 和短信服务订阅", "改动先找他 review",
        "rebalance 卡住", "12 张票都出了", "复盘文档", "c81f2d4", "republish_paid_20261121", "BUILD SUCCESSFUL in 19s",
    ],
    "secrets": ["kT9xQ2mV7bN4cR8zL1pW6yH3jF5dS0aE", "AKIDyp7Hq2Lm9Xw4Rt6Vb3Nc8Zk1Jd5Fs0Ga"],
}


SESSIONS = [
    (A1, session_a1, GOLD_A1), (A2, session_a2, GOLD_A2), (A3, session_a3, GOLD_A3),
    (B1, session_b1, GOLD_B1), (B2, session_b2, GOLD_B2), (B3, session_b3, GOLD_B3),
]


def main():
    for name, build, gold in SESSIONS:
        lines = build()
        with open(os.path.join(HERE, name + ".jsonl"), "w", encoding="utf-8") as f:
            for l in lines:
                f.write(json.dumps(l, ensure_ascii=False, separators=(",", ":")) + "\n")
        with open(os.path.join(HERE, name + ".gold.json"), "w", encoding="utf-8") as f:
            json.dump(gold, f, ensure_ascii=False, indent=2)
            f.write("\n")
        print(f"{name}: {len(lines)} lines, {len(gold['expected'])} expected")


if __name__ == "__main__":
    main()
