"""Maintenance steps that re-read memories with what the store now knows.

infer         A memory that says "the project", "that service" or "he" (or 这个项目, 那个服务, 他) is
              linked (role 'inferred') to the entity meant, when its session makes it clear: the
              nearest earlier memory of the same session that names entities of that kind names
              exactly one. Speakers never count as "he"/"she" (people do not talk about themselves
              in the third person). The text is left as written; metadata.inferred says what was
              resolved and from which memory. Ambiguous or absent context: nothing is done.
relink        Memories with no entity link whose text names entities (stored before the store's
              rule found them, e.g. imported by an earlier release) are linked as a store links them.
review        Memories stored in the last REVIEW_DAYS days get a second look: names of entities the
              scope now knows (linked from at least two memories) that a memory mentions but is not
              linked to are linked; and a memory filed under a generic category ('general', 'note')
              whose subject is filed under one category everywhere else in its scope (at least three
              memories) is moved there.
co_retrieved  Entities whose memories answered the same search together (a search's leading
              results, `retrieval.ranking.answered`, not the filler after them) in at least CO_MIN
              distinct searches over the last CO_DAYS days, and in at least half the searches
              that were answered with either, get a `co_retrieved` relation (confidence grows
              with the count), a precomputed one-hop path for retrieval's graph channel. Generic
              names (PR, UTC, S3, API, Chinese) and hubs linked to a quarter of the scope's
              memories never take part, here or in review's links.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memory.lang.text import WORD
from memory.maintenance.base import Pass

DAY = 86400.0
REVIEW_DAYS = 7
LOOKBACK = 6  # earlier memories of the session searched for an antecedent
CO_MIN, CO_DAYS, CO_MAX_PER_EVENT = 3, 90, 30
GENERIC = ("general", "note")

# phrase pattern -> entity kinds it can refer to
VAGUE = [
    (re.compile(r"\b(?:the|this|that|our) (?:project|repo|repository|codebase)\b", re.I), ("project",)),
    (re.compile(r"\b(?:the|this|that) (?:service|server|api|backend|database|db)\b", re.I), ("service", "technology")),
    (re.compile(r"\b(?:he|him|his|she|her)\b", re.I), ("person",)),
    (re.compile(r"(?:这个|那个|该)(?:项目|仓库)"), ("project",)),
    (re.compile(r"(?:这个|那个|该)(?:服务|接口|数据库)"), ("service", "technology")),
    (re.compile(r"(?<!其)[他她](?!们)"), ("person",)),  # not 其他 (other) or 他们 (they)
]


def _hubs(conn, entity_ids: list[int], scopes: set[str]) -> set[int]:
    """Entities linked to at least HUB_SHARE of the current memories of their scope."""
    size = {
        s: n
        for s, n in conn.execute(
            f"SELECT scope, count(*) FROM memories WHERE deleted_at IS NULL AND scope IN ({','.join('?' * len(scopes))}) "
            f"GROUP BY scope",
            sorted(scopes),
        )
    }
    out = set()
    for start in range(0, len(entity_ids), 500):
        chunk = entity_ids[start : start + 500]
        for eid, scope, n in conn.execute(
            f"SELECT e.id, e.scope, count(*) FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
            f"WHERE e.id IN ({','.join('?' * len(chunk))}) GROUP BY e.id",
            chunk,
        ):
            if size.get(scope, 0) >= HUB_MIN_MEMORIES and n >= HUB_SHARE * size[scope]:
                out.add(eid)
    return out


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


# Words and characters without which no VAGUE pattern can match: a cheap test before the regexes.
CUE_WORDS = frozenset(
    "he him his she her project repo repository codebase service server api backend database db".split()
)
CUE_CHARS = frozenset("他她项仓服接数")


def _may_be_vague(content: str) -> bool:
    if CUE_CHARS.intersection(content):
        return True
    return not CUE_WORDS.isdisjoint(WORD.findall(content.lower()))


def infer(p: Pass) -> None:
    rows = [r for r in p.current() if r.session_id and not r.pinned and _may_be_vague(r.content)]
    wanted = [
        (r, phrase.group(0), kinds) for r in rows for rx, kinds in VAGUE for phrase in [rx.search(r.content)] if phrase
    ]
    if not wanted:
        return
    conn = p.store.conn
    links, updates = [], []
    for r, phrase, kinds in wanted:
        done = {e.get("phrase") for e in r.meta.get("inferred", [])}
        if phrase in done:
            continue
        earlier = conn.execute(
            "SELECT id FROM memories WHERE session_id = ? AND id < ? AND deleted_at IS NULL ORDER BY id DESC LIMIT ?",
            (r.session_id, r.id, LOOKBACK),
        ).fetchall()
        for (mid,) in earlier:
            marks = ",".join("?" * len(kinds))
            found = conn.execute(
                f"SELECT DISTINCT e.id, e.name FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
                f"WHERE l.memory_id = ? AND e.kind IN ({marks}) AND l.role NOT IN ('speaker', 'inferred')",
                (mid, *kinds),
            ).fetchall()
            if not found:
                continue
            if len(found) == 1:
                eid, name = found[0]
                if conn.execute(
                    "SELECT 1 FROM memory_entities WHERE memory_id = ? AND entity_id = ?", (r.id, eid)
                ).fetchone():
                    break  # already linked: nothing to add
                r.meta.setdefault("inferred", []).append({"phrase": phrase, "entity": name, "from": mid})
                p.report.add(
                    "infer",
                    f"{phrase!r} linked to entity {name!r}",
                    f"memory #{mid} just before it in "
                    f"session {r.session_id} names exactly one {'/'.join(kinds)}: {name!r}",
                    r.id,
                    eid,
                )
                links.append((r.id, eid))
                updates.append((dumps(r.meta), r.id))
            break  # the nearest memory naming that kind decides; more than one is ambiguous
    p.write_many("INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, role) VALUES (?, ?, 'inferred')", links)
    p.write_many("UPDATE memories SET metadata = ? WHERE id = ?", updates)


def relink(p: Pass) -> None:
    """Link memories that have no entity links although their text names entities (stored before
    the store's rule found them, e.g. imported by an earlier release): what `doctor` reports."""
    from memory.store import graph

    todo = [(mid, scope, found) for mid, scope, found in graph.unlinked(p.store.conn, p.store.config.known_entities)]
    if p.scopes is not None:
        todo = [t for t in todo if t[1] in p.scopes]
    for mid, _, found in todo:
        names = ", ".join(dict.fromkeys(n for n, *_ in found))
        p.report.add("review", f"linked to {names}", "its text names them but it had no entity links", mid)
    if p.dry_run or not todo:
        return
    for start in range(0, len(todo), 200):
        with p.store.tx.atomic() as conn:
            resolved: dict = {}
            for mid, scope, found in todo[start : start + 200]:
                graph.link_names(conn, mid, scope, found, p.now, resolved, p.store.config.known_entities)
        p.checkpoint()


def review(p: Pass) -> None:
    recent = [r for r in p.current() if r.created_at >= p.now - REVIEW_DAYS * DAY and not r.pinned]
    if not recent:
        return
    _link_known_names(p, recent)
    _refile(p, recent)


def _link_known_names(p: Pass, recent: list) -> None:
    conn = p.store.conn
    scopes = sorted({r.scope for r in recent})
    known: dict[str, dict[str, tuple[int, str]]] = {s: {} for s in scopes}
    marks = ",".join("?" * len(scopes))
    for eid, scope, norm, name in conn.execute(
        f"SELECT e.id, e.scope, e.norm, e.name FROM entities e WHERE e.scope IN ({marks}) AND length(e.norm) >= 3 "
        f"AND (SELECT count(*) FROM memory_entities l WHERE l.entity_id = e.id) >= 2 "
        f"UNION ALL SELECT e.id, e.scope, a.norm, e.name FROM entity_aliases a "
        f"JOIN entities e ON e.id = a.entity_id "
        f"WHERE e.scope IN ({marks}) AND length(a.norm) >= 3",
        (*scopes, *scopes),
    ):
        if not (generic(name) or generic(norm)):  # "api" in "ledger-api" names no entity 'API'
            known[scope].setdefault(norm, (eid, name))
    links = []
    for r in recent:
        names = known.get(r.scope)
        if not names:
            continue
        words = [w.casefold() for w in WORD.findall(r.content)]
        grams = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        # a name in capitals (CD, SERVICE) is that name only where it is written so: "cd" and "service" are words
        hits = {names[g] for g in grams if g in names and (not names[g][1].isupper() or names[g][1] in r.content)}
        if not hits:
            continue
        have = {e for (e,) in conn.execute("SELECT entity_id FROM memory_entities WHERE memory_id = ?", (r.id,))}
        for eid, name in sorted(hits):
            if eid not in have:
                p.report.add(
                    "review",
                    f"linked to entity {name!r}",
                    f"it names {name!r}, which the scope now knows (the link was missed when it was stored)",
                    r.id,
                    eid,
                )
                links.append((r.id, eid))
    p.write_many("INSERT OR IGNORE INTO memory_entities (memory_id, entity_id, role) VALUES (?, ?, 'mention')", links)


def _refile(p: Pass, recent: list) -> None:
    candidates = [r for r in recent if r.category in GENERIC and r.subject]
    if not candidates:
        return
    updates = []
    for r in candidates:
        rows = p.store.conn.execute(
            "SELECT category, count(*) FROM memories WHERE scope = ? AND subject = ? COLLATE NOCASE AND id != ? "
            "AND deleted_at IS NULL GROUP BY category",
            (r.scope, r.subject, r.id),
        ).fetchall()
        settled = [(c, n) for c, n in rows if c not in GENERIC]
        if len(settled) == 1 and settled[0][1] >= 3 and len(rows) == 1:
            category = settled[0][0]
            p.report.add(
                "review",
                f"category {r.category!r} -> {category!r}",
                f"every other memory about {r.subject!r} in this scope ({settled[0][1]}) is filed under {category!r}",
                r.id,
            )
            r.category = category
            updates.append((category, r.id))
    p.write_many("UPDATE memories SET category = ? WHERE id = ?", updates)


# Names too common in a coding team's memories to say what a memory is about: a relation through
# them joins everything to everything ("Alice Chen" co_retrieved "PR"). Also any name of at most
# four capitals and digits (S3, UTC, SLA, K8S): acronyms that are everywhere.
GENERIC_NAMES = frozenset(
    """api apis pr prs mr ci cd db sql http https json yaml xml csv url urls uri ui ux id ids utc gmt
s3 ec2 aws gcp cli sdk ssh tls ssl dns cpu gpu ram os qa sla slo eta todo fixme wip faq readme
docs doc dev prod staging test tests main master monday tuesday wednesday thursday friday saturday
sunday today yesterday tomorrow team chinese english 中文 英文 汉语 英语""".split()
)
_ACRONYM = re.compile(r"[A-Z0-9]{1,4}")


def generic(name: str) -> bool:
    """Whether an entity's name is too common to relate or link anything by (GENERIC_NAMES)."""
    return name.casefold() in GENERIC_NAMES or bool(_ACRONYM.fullmatch(name))


HUB_SHARE, HUB_MIN_MEMORIES = 0.25, 12  # an entity linked to a quarter of its scope's memories is a hub
CO_SPECIFIC = 0.5


def co_retrieved(p: Pass) -> None:
    """Relate entities recalled together often and specifically (see the module docstring).

    Evidence a pair needs: answered a search together (access_log kind 'answer': a search's
    leading results, not the filler after them, which shares a word or a vague meaning with any
    question) in at least CO_MIN distinct searches (a search repeated with the same list counts
    once), and in at least CO_SPECIFIC of the searches answered with either of them (not one
    entity that comes up everywhere). Generic names and hubs (linked to HUB_SHARE of their
    scope's memories) never take part: one ordinary search about Alice recalls PRs, UTC times
    and S3 buckets without their being related to her.
    """
    conn = p.store.conn
    since = p.now - CO_DAYS * DAY
    counts: dict[tuple[int, int], int] = {}
    events = conn.execute(
        "SELECT group_concat(memory_id), group_concat(answer) FROM (SELECT at, session_id, memory_id, "
        "CASE WHEN kind = 'answer' THEN memory_id END AS answer FROM access_log "
        "WHERE kind IN ('answer', 'search') AND at >= ?) AS e "
        "GROUP BY at, coalesce(session_id, '') HAVING count(answer) > 1",
        (since,),
    ).fetchall()
    # The same search asked again returns the same list: one piece of evidence, not several.
    # Another question answered by the same memories is another piece.
    found = {tuple(sorted(int(x) for x in listed.split(","))): answers for listed, answers in events}
    distinct = [tuple(sorted({int(x) for x in answers.split(",")})) for answers in found.values()]
    if not distinct:
        return
    entity_of: dict[int, list[int]] = {}
    scope_of: dict[int, str] = {}
    wanted_list = sorted({m for ids in distinct for m in ids})
    for start in range(0, len(wanted_list), 500):
        chunk = wanted_list[start : start + 500]
        for mid, eid, scope, name in conn.execute(
            f"SELECT l.memory_id, l.entity_id, e.scope, e.name FROM memory_entities l "
            f"JOIN entities e ON e.id = l.entity_id "
            f"WHERE l.memory_id IN ({','.join('?' * len(chunk))}) AND l.role != 'speaker'",
            chunk,
        ):
            if generic(name):
                continue
            entity_of.setdefault(mid, []).append(eid)
            scope_of[eid] = scope
    hubs = _hubs(conn, sorted(scope_of), set(scope_of.values()))
    single: dict[int, int] = {}
    for ids in distinct:
        ents = sorted({e for x in ids for e in entity_of.get(x, []) if e not in hubs})[:CO_MAX_PER_EVENT]
        for a in ents:
            single[a] = single.get(a, 0) + 1
        for i, a in enumerate(ents):
            for b in ents[i + 1 :]:
                if scope_of[a] == scope_of[b]:
                    counts[(a, b)] = counts.get((a, b), 0) + 1
    counts = {(a, b): n for (a, b), n in counts.items() if n >= CO_SPECIFIC * max(single[a], single[b])}
    frequent = {pair: n for pair, n in counts.items() if n >= CO_MIN}
    if p.scopes is not None:
        frequent = {pair: n for pair, n in frequent.items() if scope_of[pair[0]] in p.scopes}
    if not frequent:
        return
    existing = {
        (s, d): (rid, conf)
        for rid, s, d, conf in conn.execute(
            "SELECT id, src, dst, confidence FROM relations WHERE type = 'co_retrieved' AND valid_to IS NULL"
        )
    }
    names = {}
    inserts, updates = [], []
    for (a, b), n in sorted(frequent.items()):
        confidence = round(min(1.0, n / 10), 3)
        old = existing.get((a, b))
        if old and abs(old[1] - confidence) < 1e-9:
            continue
        for e in (a, b):
            if e not in names:
                names[e] = conn.execute("SELECT name FROM entities WHERE id = ?", (e,)).fetchone()[0]
        why = f"answered {n} searches together in the last {CO_DAYS} days"
        if old:
            updates.append((confidence, old[0]))
            p.report.add(
                "graph",
                f"co_retrieved {names[a]!r} - {names[b]!r}: confidence {old[1]:.2f} -> {confidence:.2f}",
                why,
                entity_id=a,
            )
        else:
            inserts.append((a, b, confidence, p.now, p.now))
            p.report.add("graph", f"co_retrieved {names[a]!r} - {names[b]!r} added", why, entity_id=a)
    p.write_many(
        "INSERT INTO relations (src, dst, type, confidence, valid_from, created_at) "
        "VALUES (?, ?, 'co_retrieved', ?, ?, ?)",
        inserts,
    )
    p.write_many("UPDATE relations SET confidence = ? WHERE id = ?", updates)
