"""The one harvest rule: from a transcript (or any conversation) to stored memories.

`harvest(store, path)` is what the hooks' background drain, the server's worker and backfill run
for a Claude Code transcript: read what is new since the transcript's cursor, extract (the
heuristic rules, plus the configured LLM when there is one), ingest (surprise, dedup,
supersession), and advance the cursor, all in one write transaction. Two harvests of one
transcript therefore queue on the write lock and the second finds nothing new; a crash before the
commit leaves the cursor where it was, so lines are read again, never lost.

`extract_file(store, source)` is `maple-memory extract`: the same for one whole file (a
transcript, a JSON message list or plain text), with a dry run that only says what would happen
and why. Both go through `harvest_turns`, the rule itself.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from memory.errors import InvalidInput, MapleError
from memory.extraction import transcript
from memory.extraction.heuristic import Candidate, extract
from memory.extraction.ingest import Report, ingest
from memory.scope import project_scope
from memory.store import Store

log = logging.getLogger("maple.extraction")


def harvest(
    store: Store, path: str, *, scope: str | None = None, dry_run: bool = False, llm: bool = True
) -> dict[str, Any]:
    """Read what is new in the transcript at `path`, extract, ingest and advance its cursor, in one
    transaction. `scope` defaults to the project of the transcript's own working directory.
    `dry_run`: the same reading and the same rule, nothing written, the cursor left where it was,
    no LLM asked. `llm=False`: the heuristic rules only (a rehearsal in a transaction that is
    rolled back, memory.app.backfill.rehearse, spends no tokens).

    The configured LLM is asked first, outside that transaction: a call takes seconds (the
    claude-cli provider starts a whole Claude Code), and holding the write lock that long would
    make every other writer wait and fail (a new session's brief, memory_store). Its answer is
    used when the transaction then reads from where the LLM's read started; when another harvest
    took those lines meanwhile, it asked the LLM about them itself, and what is left gets the
    heuristic rules only."""
    cfg = store.config
    asked: list[Candidate] = []
    peeked: dict[str, Any] = {}
    if llm and _llm_on(store) and not dry_run:
        seen, peeked = transcript.read_new(
            store, path, include_sidechains=cfg.extraction_include_sidechains, commit=False
        )
        asked = _llm_candidates(store, seen, scope or project_scope(_cwd(seen))) if seen else []
    with store.tx.atomic():
        turns, stats = transcript.read_new(
            store, path, include_sidechains=cfg.extraction_include_sidechains, commit=False
        )
        report = Report()
        if turns:
            fresh = asked if peeked.get("start") == stats.get("start") else []
            context = transcript.read_before(
                path, stats.get("start") or 0, include_sidechains=cfg.extraction_include_sidechains
            )
            _, report = harvest_turns(
                store,
                turns,
                scope or project_scope(_cwd(turns)),
                dry_run=dry_run,
                llm=fresh if llm else False,
                context=context,
            )
        if not stats.get("missing") and not dry_run:
            transcript.save_cursor(store, stats["cursor"])
    return {"read": {k: v for k, v in stats.items() if k != "cursor"}, **report.to_dict()}


def _cwd(turns: list[dict]) -> str | None:
    return next((t.get("cwd") for t in turns if t.get("cwd")), None)


def _llm_on(store: Store) -> bool:
    """Whether an LLM provider is configured (else there is nothing to ask before the harvest)."""
    return bool(getattr(store.config, "llm_provider", ""))


def extract_file(
    store: Store, source: str, *, scope: str | None = None, fallback: str, dry_run: bool = False, llm: bool = True
) -> dict[str, Any]:
    """Extract memories from a file ("-": standard input) and store them, or with `dry_run` only
    say what each candidate would become. `scope`: where they go; None: the project of the
    transcript's working directory, else `fallback`. `llm=False`: the heuristic rules alone, even
    when an LLM provider is configured (`maple-memory extract --no-llm`)."""
    cfg = store.config
    if source == "-":
        turns, stats = transcript.from_text(sys.stdin.read()), {"format": "text", "malformed": 0}
    else:
        try:
            turns, stats = transcript.load_file(source, include_sidechains=cfg.extraction_include_sidechains)
        except OSError as e:
            raise InvalidInput(f"cannot read {source}: {e.strerror}; give the path of a transcript or text file") from e
    cwd = _cwd(turns)
    target = scope or (project_scope(cwd) if cwd else fallback)
    cands, report = harvest_turns(store, turns, target, dry_run=dry_run, llm=llm)
    keep = ("action", "id", "supersedes", "superseded_by", "similarity", "surprise")
    return {
        "file": source,
        "scope": target,
        "dry_run": dry_run,
        "turns": len(turns),
        "malformed_lines": stats.get("malformed", 0),
        "candidates": [
            {**c.to_dict(), **{k: v for k, v in a.items() if k in keep}} for c, a in zip(cands, report.items)
        ],
        "summary": report.to_dict(),
        "summary_line": report.summary(),
    }


def harvest_turns(
    store: Store,
    turns: list[dict],
    scope: str,
    *,
    dry_run: bool = False,
    llm: bool | list[Candidate] = True,
    context: list[dict] | None = None,
) -> tuple[list[Candidate], Report]:
    """The one harvest rule, whoever reads the turns (the hooks' drain, the engine, the worker's
    backfill jobs, `maple-memory extract`): the heuristic candidates, plus the configured LLM's
    (not in a dry run: it would spend tokens to say what might happen), ingested into `scope`.
    Ingest compares by meaning when the store has a model, so every caller harvests with the
    configured model (memory.app.client, hooks/harvest.py) for the same transcript to give the
    same store. `llm`: True asks the configured LLM here, False leaves it out (`extract
    --no-llm`), a list is what it already answered for these turns (`harvest` asks before it
    takes the write lock). `context`: the turns before these, read for what they answer, never
    stored (transcript.read_before)."""
    scope = store.project_key(scope)  # a session's path names the project by its remote on a team database
    cands = extract(turns, scope=scope, known=store.config.known_entities, context=context or ())
    if isinstance(llm, list):
        cands += llm
    elif llm and not dry_run:
        cands += _llm_candidates(store, turns, scope)
    return cands, ingest(store, cands, dry_run=dry_run)


def _llm_candidates(store: Store, turns: list[dict], scope: str) -> list[Candidate]:
    """What the configured LLM adds (nothing when it is off, over budget, or failing: the
    heuristic candidates stand on their own, and ingest merges what both found)."""
    from memory import llm
    from memory.extraction.llm import llm_extract

    c = store.config
    scope = store.project_key(scope)
    try:
        provider = llm.provider_from_config(c)
        if provider is None:
            return []
        guard = llm.Guard(
            store.conn,
            daily_tokens=c.llm_daily_token_budget,
            failures=c.llm_breaker_failures,
            cooldown_s=c.llm_breaker_cooldown_s,
            clock=store.clock,
        )
        return llm_extract(
            turns,
            provider,
            guard,
            scope=scope,
            model=c.llm_model,
            max_tokens=c.llm_max_tokens,
            redact_patterns=c.redact_patterns,
        )
    except MapleError as e:
        log.warning("LLM extraction skipped: %s", e)
        return []
