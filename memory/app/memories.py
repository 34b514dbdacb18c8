"""The application API: everything MAPLE does for a person or an assistant, in plain data.

`Memories(store, project)` is what the MCP tools, the CLI and the hooks call, each in a few lines.
Arguments are JSON-like (str, int, float, bool, lists, dicts) and so are the results (a memory is
`Memory.to_dict()`), so any front end can hand them on as they are, including over a socket.

It holds the rules every front end shares, once:
- visibility: a caller sees its project and the global scope (`readable`), never another
  project's memories; `all_projects=True` is for the few commands a person runs across projects;
- where a new memory goes: `scope` "project" (the default) or "global";
- edit or supersede: an edit changes a memory in place and keeps the old version; a supersede
  stores the changed memory as a new one and keeps the old one as history;
- the duplicate answer: storing text already stored in that scope returns the stored memory,
  marked `duplicate`;
- serialisation: one store connection serves the threads of a process, so every call holds the
  store's lock; calls that embed text first wait (outside the lock) for a model still loading.

Errors are MapleError subclasses whose messages say what to do next.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from memory import embed
from memory.errors import InvalidInput, NotFound, already_superseded
from memory.scope import GLOBAL, resolve
from memory.store import Memory, NewMemory, Store, browse, decisions, parse_time, versions

MAX_IDS = 100  # memories one get may ask for

# What a person or an assistant stores must say something: not an acknowledgement (the prompt
# gate's list: "ok", "thanks", "好的", "没问题", "sounds good") and at least MIN_CHARS letters, digits
# or Han characters in all. "OK", "ok", "好的", "ab", "x" and "42" are refused, with one message;
# "uv run pytest", "端口 8080" and "Prefers tabs" pass. (The store keeps its own floor, two letters,
# for every other way in.) Imports are not held to it: an export comes back as it was.
MIN_CHARS = 3
_ALNUM = re.compile(r"[^\W_]")


def check_useful(content: Any) -> None:
    """Refuse content that says nothing on its own (see MIN_CHARS), saying what would do."""
    from memory.retrieval import context

    if not isinstance(content, str) or not content.strip():
        return  # the store says what is wrong with it
    letters = len(re.findall(r"[^\W\d_]", content))
    if letters >= 2 and len(_ALNUM.findall(content)) >= MIN_CHARS and not context.is_acknowledgement(content):
        return
    shown = " ".join(content.split())
    shown = shown if len(shown) <= 30 else shown[:29] + "…"
    raise InvalidInput(
        f"{shown!r} is too short to be a memory (an acknowledgement, or fewer than {MIN_CHARS} letters and "
        "digits): write the fact itself ('uv run pytest', '端口 8080'), so it makes sense later on its own"
    )


MAX_LIMIT = 100  # results one search may ask for (memory.retrieval.ranking checks it too)


def nothing_found(scopes: Sequence[str], *, meaning: bool = True, across: bool = False) -> str:
    """What an empty search says: results are only what some channel supports, never padding.
    `meaning`: the model compared meanings (not while it loads); `across`: it does so across
    Chinese and English, where it matches less surely than within one language."""
    why = "or is near enough in meaning to count" if meaning else "(meaning is compared once the model has loaded)"
    other = " (or in the language the memory may be written in)" if across else ""
    return (
        f"No memory matches this query in {', '.join(scopes)}: none shares a word, a name or a time "
        f"with it, {why}. Try other words{other}, or a wider scope."
    )


class Memories:
    """The memories one caller may see and change: its project's and the global ones."""

    def __init__(self, store: Store, project: str, *, all_projects: bool = False):
        self.store = store
        self.project = store.project_key(project)  # a path here; on a team database, the repository's remote
        self.all_projects = all_projects

    # -- the rules ------------------------------------------------------------------------------

    @property
    def readable(self) -> list[str] | None:
        """The scopes this caller sees (None: every scope, for all_projects)."""
        return None if self.all_projects else list(dict.fromkeys([self.project, GLOBAL]))

    def scopes(self, which: str = "all") -> list[str]:
        """A tool's scope choice ("project", "global" or "all") as stored scope strings."""
        if which == "all":
            return self.readable or self._every_scope()
        if which in ("project", "global"):
            return [resolve(which, self.project)]
        raise InvalidInput(f"scope must be 'project', 'global' or 'all', got {which!r}")

    def _every_scope(self) -> list[str]:
        return [r[0] for r in self.store.conn.execute("SELECT DISTINCT scope FROM memories")]

    def _visible(self, m: Memory) -> Memory:
        if self.readable is not None and m.scope not in self.readable:  # another project's: not ours
            raise NotFound(f"no memory {m.id} in this project or the global scope; search to find the right id")
        return m

    def _get(self, memory_id: int, *, archived: bool = True, read: bool = False) -> Memory:
        """The memory `memory_id`, visible here. A chunk's id is not a memory of its own (see
        `part_of`): a read gets its parent, a change is refused."""
        m = self._visible(self.store.get(memory_id, include_deleted=True))
        if m.parent_id is not None:
            if not read:
                raise InvalidInput(part_of(m.id, m.parent_id))
            m = self._visible(self.store.get(m.parent_id, include_deleted=True))
        if not archived and m.deleted_at is not None:
            raise InvalidInput(
                f"memory {memory_id} is archived; `maple-memory restore {memory_id}` brings it back "
                "before it can be changed"
            )
        return m

    def _parent_of(self, memory_id: Any) -> int | None:
        """The parent of a chunk's id; None for any other id (left to the call's own checks)."""
        if isinstance(memory_id, int) and not isinstance(memory_id, bool) and -(2**63) <= memory_id < 2**63:
            row = self.store.conn.execute("SELECT parent_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
            return None if row is None else row[0]
        return None

    def _not_part(self, memory_id: Any) -> None:
        """Refuse the id of a chunk, naming its parent, where a memory is to be changed."""
        parent = self._parent_of(memory_id)
        if parent is not None:
            raise InvalidInput(part_of(memory_id, parent))

    def _whole_id(self, memory_id: Any) -> Any:
        """For a read: the parent's id for a chunk's, any other id as given."""
        parent = self._parent_of(memory_id)
        return memory_id if parent is None else parent

    @contextmanager
    def _serial(self) -> Iterator[Store]:
        """The store, held for this call. No call waits for a model that is still loading: what
        is stored meanwhile gets its vector once it has loaded (server.state.ModelGate)."""
        with self.store.tx.lock:
            yield self.store

    def _model_loaded(self) -> None:
        """Wait, outside the lock, for a model that is still loading: a harvest compares what it
        finds with what is stored by meaning, so it waits where a single store does not."""
        wait = getattr(self.store.embedder, "wait", None)
        if wait is not None:
            wait()

    def model_state(self) -> str:
        """The embedding model: ready, loading (keyword search only meanwhile) or unavailable."""
        state = getattr(self.store.embedder, "state", None)
        if state is not None:
            return state()
        return "ready" if self.store.embedder is not None else "unavailable"

    # -- memories -------------------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        layer: str = "fact",
        category: str = "general",
        subject: str | None = None,
        importance: int = 3,
        tags: Sequence[str] | None = None,
        pinned: bool = False,
        scope: str = "project",
        occurred_at: Any = None,
        metadata: dict | None = None,
    ) -> dict[str, Any]:
        """Store a memory: {"memory", "duplicate", "supersedes"}. A duplicate is the memory already
        stored (the text of one kept as history makes it current again: `ingest.reinstate`);
        `supersedes` lists the current memories ({"id", "content"}) the new one corrects, now
        history (the harvest's rule: `ingest.supersede_corrected`); `restore` makes one current
        again."""
        from memory.extraction import ingest

        check_useful(content)
        item = NewMemory(
            content=content,
            layer=layer,
            category=category,
            subject=subject,
            scope=resolve(scope, self.project),
            importance=importance,
            tags=list(tags or []),
            pinned=pinned,
            occurred_at=occurred_at,
            metadata=metadata or {},
        )
        with self._serial() as store:
            before = _newest_id(store)
            m = store.add(item)
            duplicate = m.id <= before
            if not duplicate:
                closed = ingest.supersede_corrected(store, m)
                ingest.note_outdated(store, m.id)  # a runbook's stale values, or the runbooks this one outdates
                ingest.relate_stated(store, [m])
            elif m.superseded_by is not None:  # history said again: it holds again
                closed = ingest.reinstate(store, m, parse_time(occurred_at, "occurred_at"))
                m = store.get(m.id)
            else:
                closed = []
            replaced = [{"id": old.id, "content": old.content} for old in store.get_many(closed)]
        memory = {**m.to_dict(), "status": browse.status_of(m, store.clock())}
        return {"memory": memory, "duplicate": duplicate, "supersedes": replaced}

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        scope: str = "all",
        layer: str | None = None,
        category: str | None = None,
        since: Any = None,
        until: Any = None,
        record: bool = True,
        session_id: str | None = None,
    ) -> dict[str, Any]:
        """Ranked memories for a query, each with its score and what each channel added;
        `without_vectors`: the results that have no vector yet (found by keywords alone); `history`:
        when nothing current matches, the superseded or ended memories that would have. A result
        that replaced memories carries them in `replaces` (`versions.replaced`).
        `record`: count the results as recalled (decay input); a person browsing does not."""
        from memory.retrieval import ranking

        scopes = self.scopes(scope)
        q = ranking.make_query(query, scopes, limit=limit, layer=layer, category=category, since=since, until=until)
        with self._serial() as store:
            results = ranking.search(store, q, record=record, session_id=session_id)
            # Memories stored while no model was at hand, and long ones whose chunks still wait for
            # their vectors: they (or those parts) rank by keywords alone until the background
            # embeds them, and the caller is told so.
            without = store.without_vectors([r.memory.id for r in results], parts=True)
            # (stored by another process, a CLI call while this one loaded its model, and so never
            # handed to the background: found now, embedded now)
            store.fill_later(min(without, default=None))
            history = [] if results else ranking.search(store, replace(q, include_history=True), record=False)
            # What a result replaced: a correction restates one value, the rest of the old memory
            # may still hold (asked with `until`, the results are what held then: no successors).
            replaced = {} if q.until is not None else versions.replaced(store, [r.memory.id for r in results], scopes)
        note = ""
        if history:  # what was true once: "nothing matches" would say it was never stored
            ids = ", ".join(str(r.memory.id) for r in history[:5])
            one = len(history) == 1
            note = (
                f"No current memory matches; {'one' if one else len(history)} kept as history (superseded or ended) "
                f"{'matches' if one else 'match'}: {ids}. memory_history shows what replaced {'it' if one else 'them'}"
            )
        elif not results:
            note = self._nothing_found(scopes)
        return {
            "query": query,
            "scopes": scopes,
            "results": [
                {
                    **r.to_dict(),
                    **({"replaces": _replaced_list(replaced[r.memory.id])} if r.memory.id in replaced else {}),
                }
                for r in results
            ],
            "model": self.model_state(),
            "without_vectors": without,
            "note": note,
            "history": [r.memory.id for r in history],
        }

    def _nothing_found(self, scopes: Sequence[str]) -> str:
        from memory.retrieval import ranking

        meaning = self.model_state() == "ready"
        across = meaning and getattr(self.store.embedder, "name", "") in ranking.MULTILINGUAL
        return nothing_found(scopes, meaning=meaning, across=across)

    def get(self, ids: Sequence[int]) -> dict[str, Any]:
        """Whole memories by id (archived ones too), each with its `status` (current, superseded,
        expired, archived), in the order asked; ids not visible here are
        `missing`. The id of a chunk (a part of a long memory) reads its parent: `parts` lists such
        ids, each with the memory returned for it ({"id", "memory", "note"})."""
        ids = list(dict.fromkeys(ids))
        if not 1 <= len(ids) <= MAX_IDS:
            raise InvalidInput(f"give 1-{MAX_IDS} memory ids")
        with self._serial() as store:
            found = [m for m in store.get_many(ids) if self.readable is None or m.scope in self.readable]
            parts = {m.id: m.parent_id for m in found if m.parent_id is not None}
            parents = {p.id: p for p in store.get_many(sorted(set(parts.values())))}
        seen = {m.id for m in found}
        out: dict[int, Memory] = {}
        for m in found:
            whole = parents.get(m.parent_id) if m.parent_id is not None else m
            if whole is not None:
                out.setdefault(whole.id, whole)
        now = self.store.clock()
        return {
            "memories": [{**m.to_dict(), "status": browse.status_of(m, now)} for m in out.values()],
            "missing": [i for i in ids if i not in seen],
            "parts": [{"id": i, "memory": p, "note": part_of(i, p)} for i, p in parts.items()],
        }

    def forget(self, memory_id: int, *, permanent: bool = False) -> dict[str, Any]:
        """Archive a memory (restorable), or purge it for good: {"action", "memory"}."""
        with self._serial() as store:
            self._get(memory_id)
            before = store.forget(memory_id, permanent=permanent)
            if permanent:
                return {"action": "purged", "memory": before.to_dict()}
            return {"action": "archived", "memory": store.get(memory_id, include_deleted=True).to_dict()}

    def restore(self, memory_id: int) -> dict[str, Any]:
        """Bring an archived memory back, or make a superseded or expired one current again (a
        correction that was wrong, or closed the wrong memory): {"memory", "was": archived |
        superseded | expired}, and for a superseded one `superseded_by`, the memory that holds in
        its place (it stays current; None if none does)."""
        with self._serial() as store:
            m = self._get(memory_id)
            if m.deleted_at is not None:
                back = store.restore(memory_id)
                if m.superseded_by is not None:  # merged into another: current again and kept apart from it
                    back = self._split_off(store, back, m.superseded_by)
                return {"memory": back.to_dict(), "was": "archived"}
            if m.superseded_by is not None:
                now = versions.holds_now(store, m)
                back = store.update(memory_id, superseded_by=None, valid_to=None, reason="restored")
                return {"memory": back.to_dict(), "was": "superseded", "superseded_by": now}
            if m.valid_to is not None and m.valid_to <= store.clock():  # ended: by hand, or its successor purged
                back = store.update(memory_id, valid_to=None, reason="restored")
                return {"memory": back.to_dict(), "was": "expired", "superseded_by": None}
            raise InvalidInput(f"memory {memory_id} is current; there is nothing to restore")

    @staticmethod
    def _split_off(store: Store, m: Memory, into: int) -> Memory:
        """A memory maintenance merged into `into`, restored: current again, never merged into it
        again (`keep_separate`), and no longer listed among what `into` absorbed. (Its confidence
        before the merge comes back with the next maintenance pass, which reports the restore.)"""
        meta = {**m.metadata, "keep_separate": sorted({*m.metadata.get("keep_separate", []), into})}
        back = store.update(m.id, superseded_by=None, valid_to=None, metadata=meta, reason="restored")
        try:
            kept = store.get(into, include_deleted=True)
        except NotFound:
            return back
        merged = kept.metadata.get("merged_from") or []
        if m.id in merged:
            rest = [i for i in merged if i != m.id]
            meta = {k: v for k, v in kept.metadata.items() if k != "merged_from"} | (
                {"merged_from": rest} if rest else {}
            )
            store.update(into, metadata=meta, reason=f"memory {m.id} restored: no longer merged here")
        return back

    def update(
        self,
        memory_id: int,
        *,
        content: str | None = None,
        layer: str | None = None,
        category: str | None = None,
        subject: str | None = None,
        importance: int | None = None,
        tags: Sequence[str] | None = None,
        scope: str | None = None,
        occurred_at: Any = None,
        metadata: dict | None = None,
        mode: str = "edit",
        reason: str = "update",
        forget_old: bool = False,
    ) -> dict[str, Any]:
        """Change a memory, losing nothing: {"action": edited|unchanged|superseded, "memory",
        "replaced", "versions"}.

        edit: in place, the previous version kept in its history (a wording fixed).
        supersede: the changed memory is stored as a new one and this one retired as history (the
        fact itself changed); fields not given are carried over.
        forget_old: an edit that keeps no version and deletes the earlier ones for good, the old
        text wiped from the database file and its WAL (a pasted secret taken out)."""
        if mode not in ("edit", "supersede"):
            raise InvalidInput(f"mode must be 'edit' or 'supersede', got {mode!r}")
        if forget_old and mode == "supersede":
            raise InvalidInput("forget_old edits in place and keeps no history; use mode 'edit' with it")
        changes = {
            "content": content,
            "layer": layer,
            "category": category,
            "subject": subject,
            "importance": importance,
            "tags": list(tags) if tags is not None else None,
            "occurred_at": occurred_at,
            "metadata": metadata,
            "scope": resolve(scope, self.project) if scope else None,
        }
        if mode == "supersede" and content is None:
            raise InvalidInput("superseding needs the new content; to change other fields, edit instead")
        if content is not None:
            check_useful(content)
        with self._serial() as store:
            old = self._get(memory_id, archived=False)
            if old.superseded_by is not None:
                raise already_superseded(memory_id, old.superseded_by)
            if mode == "supersede":
                fields = {
                    k: getattr(old, k)
                    for k in (
                        "content",
                        "layer",
                        "category",
                        "subject",
                        "scope",
                        "importance",
                        "tags",
                        "pinned",
                        "metadata",
                    )
                }
                fields.update({k: v for k, v in changes.items() if v is not None})
                previous, new = versions.supersede(store, memory_id, NewMemory(**fields), reason=reason)
                return {
                    "action": "superseded",
                    "memory": new.to_dict(),
                    "replaced": previous.to_dict(),
                    "versions": _version_count(store, new.id),
                }
            m, changed = versions.edit(store, memory_id, reason=reason, keep_history=not forget_old, **changes)
            return {
                "action": "edited" if changed else "unchanged",
                "memory": m.to_dict(),
                "replaced": None,
                "versions": _version_count(store, memory_id),
            }

    def pin(self, memory_id: int, pinned: bool = True) -> dict[str, Any]:
        """Pin (always surfaced first, kept from decay) or unpin a memory."""
        with self._serial() as store:
            m = self._get(memory_id, archived=False)
            if m.superseded_by is not None:
                raise InvalidInput(f"memory {memory_id} was superseded by memory {m.superseded_by}; pin that one")
            if m.pinned != pinned:  # only a change writes a version
                m = store.update(memory_id, pinned=pinned, reason="pin" if pinned else "unpin")
            return {"memory": m.to_dict()}

    def list(
        self,
        *,
        scope: str = "all",
        layer: str | None = None,
        category: str | None = None,
        subject: str | None = None,
        tag: str | None = None,
        pinned: bool | None = None,
        status: str = "current",
        sort: str = "newest",
        limit: int = 20,
        cursor: str | None = None,
        after: int | None = None,
    ) -> dict[str, Any]:
        """One page of memories by filters: {"memories" (each with its status), "total", "next_cursor"}.
        `sort="id"` with `after` pages in id order (the CLI's listing)."""
        with self._serial() as store:
            page = browse.list_memories(
                store,
                self.scopes(scope),
                layer=layer,
                category=category,
                subject=subject,
                tag=tag,
                pinned=pinned,
                status=status,
                sort=sort,
                limit=limit,
                cursor=cursor,
                after=after,
            )
            now = store.clock()
        return {
            "memories": [{**m.to_dict(), "status": browse.status_of(m, now)} for m in page.memories],
            "total": page.total,
            "next_cursor": page.next_cursor,
        }

    def history(self, memory_id: int | None = None, subject: str | None = None) -> dict[str, Any]:
        """How a memory, or what is known about a subject, changed: {"entries", "current"}."""
        with self._serial() as store:
            memory_id = self._whole_id(memory_id)  # a chunk's history is its parent's
            entries = versions.history(store, self.scopes("all"), memory_id=memory_id, subject=subject)
        return {
            "entries": [e.to_dict() for e in entries],
            "current": [e.memory.id for e in entries if e.status == "current"],
        }

    def stats(self) -> dict[str, Any]:
        """Counts, sizes and upkeep state for what this caller sees (other projects are not named)."""
        with self._serial() as store:
            stats = browse.scoped_stats(store, self.scopes("all"))
            if stats.get("without_vectors"):
                store.fill_later(1)  # (what another process stored without a vector: see search)
        model = self.model_state()
        waiting = stats.get("without_vectors", 0)
        if model == "ready" and waiting:  # loaded, but what was stored meanwhile is not embedded yet
            stats["vectors"] = (
                f"the model is ready; {waiting} {'memory waits' if waiting == 1 else 'memories wait'} for "
                "their vectors (embedded in the background; keyword search finds them meanwhile)"
            )
        return {**stats, "model": model}

    def page(self, memory_id: int) -> dict[str, Any]:
        """Everything a person reading one memory wants: {"memory", "status", "history" (its
        supersession chain with earlier versions), "outcomes" (a decision's, oldest first),
        "entities" (what it names)}."""
        import memory.app.activity as activity

        with self._serial() as store:
            m = self._get(memory_id, read=True)
            memory_id = m.id
            chain = versions.history(store, self.scopes("all"), memory_id=memory_id)
            outcomes = decisions.outcomes_of(store, [memory_id]).get(memory_id, [])
            entities = activity.entities_of(store, memory_id)
            now = store.clock()
        return {
            "memory": m.to_dict(),
            "status": browse.status_of(m, now),
            "entities": entities,
            "history": [e.to_dict() for e in chain],
            "outcomes": [o.to_dict() for o in outcomes],
        }

    # -- what happened per session --------------------------------------------------------------

    def sessions(self, *, limit: int = 50) -> dict[str, Any]:
        """The latest sessions that were shown or stored memories here: {"sessions"}."""
        import memory.app.activity as activity

        if not 1 <= limit <= 500:
            raise InvalidInput(f"limit must be 1-500, got {limit}")
        with self._serial() as store:
            return {"sessions": activity.sessions(store, self.scopes("all"), limit=limit)}

    def session(self, session_id: str) -> dict[str, Any]:
        """One session: what was put in front of the model, for which prompt, and what its harvest
        stored, superseded or reinforced (memory.app.activity)."""
        import memory.app.activity as activity

        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInput("give a session id; the sessions list names them")
        with self._serial() as store:
            return activity.session(store, self.scopes("all"), session_id.strip())

    def scopes_present(self) -> dict[str, Any]:
        """The scopes this caller sees that hold memories: {"project", "all_projects", "scopes"
        (each {"scope", "memories"})}; another project's only for `all_projects`."""
        import memory.app.activity as activity

        with self._serial() as store:
            present = activity.scopes_present(store, self.scopes("all"))
        return {"project": self.project, "all_projects": self.all_projects, "scopes": present}

    def within(self, scope: str) -> Memories:
        """The same memories seen from one other project (`scope`, its stored scope string), for
        a caller that sees every project; InvalidInput for anyone else."""
        if not self.all_projects:
            raise InvalidInput(
                f"scope must be 'project', 'global' or 'all', got {scope!r}; another project's memories "
                "need --all-projects"
            )
        return Memories(self.store, scope)

    def pulse(self) -> dict[str, Any]:
        """A cheap fingerprint that changes when memories arrive, change or are shown (polled by
        the web page to refresh)."""
        import memory.app.activity as activity

        with self._serial() as store:
            # Scanning the memories only when something was committed since the last pulse: by
            # another connection (data_version) or by this one (total_changes).
            key = (store.conn.execute("PRAGMA data_version").fetchone()[0], store.conn.total_changes)
            cached = getattr(self, "_pulse", None)
            if cached is None or cached[0] != key:
                self._pulse = cached = (key, activity.pulse(store, self.scopes("all")))
        return {**cached[1], "model": self.model_state()}

    # -- passive recall -------------------------------------------------------------------------

    def recall(
        self,
        prompt: Any,
        *,
        session_id: str | None = None,
        hook: dict | None = None,
        segment: bool = True,
        gated: bool = False,
    ) -> dict[str, Any]:
        """What to put in front of one prompt: {"block" ("" for nothing), "ids"}, leaving out what
        the session was already shown. Records nothing: call `shown` once the block was delivered.
        `segment=False` keeps jieba out (its dictionary costs a cold process ~0.5 s): Chinese by
        bigrams. `gated`: the caller already ran the prompt gate (context.skip_reason)."""
        from memory.retrieval import context

        with self._serial():
            items = context.recall(
                self.store,
                prompt,
                self.scopes("all"),
                session_id=session_id,
                hook_input=hook,
                segment=segment,
                gated=gated,
            )
        return {"block": context.format_block(items), "ids": [i.memory.id for i in items]}

    def briefing(self, *, session_id: str | None = None, source: str | None = None) -> dict[str, Any]:
        """The SessionStart brief: {"block", "ids"}; nothing for a resumed session (its history,
        first brief included, is replayed). Records nothing: call `shown`."""
        from memory.retrieval import context

        with self._serial():
            items = context.brief_items(self.store, self.scopes("all"), session_id=session_id, source=source)
        return {"block": context.format_block(items, context.BRIEF_HEADER), "ids": [i.memory.id for i in items]}

    def shown(self, session_id: str | None, ids: Sequence[int], kind: str = "surface", prompt: Any = None) -> None:
        """Record that a session was shown these memories (it is not shown them again; they count
        as recalled). `prompt`: the prompt they answered, kept with the record as a short
        redacted excerpt (the web page shows it)."""
        from memory.retrieval import context

        if kind not in ("surface", "brief", "context"):
            raise InvalidInput(f"kind must be surface, brief or context, got {kind!r}")
        with self._serial():
            context.record_injection(self.store, session_id, [int(i) for i in ids], kind, prompt=prompt)

    def surface(
        self,
        prompt: Any,
        *,
        session_id: str | None = None,
        hook: dict | None = None,
        segment: bool = True,
        gated: bool = False,
    ) -> str:
        """`recall`, recorded as shown at once (for callers that deliver what they get)."""
        found = self.recall(prompt, session_id=session_id, hook=hook, segment=segment, gated=gated)
        self.shown(session_id, found["ids"], "surface", prompt)
        return found["block"]

    def brief(self, *, session_id: str | None = None, source: str | None = None) -> str:
        """`briefing`, recorded as shown at once."""
        found = self.briefing(session_id=session_id, source=source)
        self.shown(session_id, found["ids"], "brief")
        return found["block"]

    def context(self, query: str, *, budget: int = 800, record: bool = True, as_prompt: bool = False) -> dict[str, Any]:
        """A briefing for a task within a token budget of memory text (the header is not counted):
        {"block", "items", "skipped", "did_not_fit", "note", "model"}; the best matches are shown as fully
        as the budget allows (context.tiered_context's `fill`), and `note` names the matches that
        did not fit. `as_prompt` applies the prompt hook's gating and its shorter lines;
        `record=False` is a preview that records nothing."""
        from memory.retrieval import context

        if not 50 <= budget <= 2400:
            raise InvalidInput(f"budget must be 50-2400 tokens, got {budget}")
        skipped = context.skip_reason(query) if as_prompt else None
        unfit: list[int] = []
        with self._serial():
            items = (
                []
                if skipped
                else context.tiered_context(
                    # asked for, not passive: it answers whatever the confidence (see `recall`'s gate)
                    self.store,
                    query,
                    self.scopes("all"),
                    budget,
                    unfit=unfit,
                    min_confidence=0.0,
                    fill=not as_prompt,
                )
            )
            if record:
                context.record_injection(self.store, None, [i.memory.id for i in items], "context")
        unfit = list(dict.fromkeys(unfit))  # matched, but too long for the budget
        return {
            "query": query,
            "skipped": skipped,
            "block": context.format_block(items),
            "items": [{"id": i.memory.id, "tier": i.tier, "line": i.line} for i in items],
            "did_not_fit": unfit,
            "note": context.unfit_note(unfit, budget, shown=bool(items)),
            "model": self.model_state(),  # not "ready": picked by words alone, as the hook's cold path does
        }

    # -- the graph ------------------------------------------------------------------------------

    def entity(self, name: str | int, *, memory_limit: int = 20, include_closed: bool = True) -> dict[str, Any]:
        """An entity with its aliases, relations (closed ones marked) and linked memories."""
        from memory.retrieval import graph_query

        with self._serial():
            return graph_query.entity_detail(
                self.store, self.scopes("all"), name, memory_limit=memory_limit, include_closed=include_closed
            )

    def relate(
        self,
        source: str,
        relation: str,
        target: str,
        *,
        scope: str = "project",
        close: bool = False,
        memory_id: int | None = None,
        confidence: float = 1.0,
    ) -> dict[str, Any]:
        from memory.retrieval import graph_query

        with self._serial():
            if memory_id is not None:
                self._not_part(memory_id)
            return graph_query.relate(
                self.store,
                resolve(scope, self.project),
                source,
                relation,
                target,
                close=close,
                readable=self.scopes("all"),
                memory_id=memory_id,
                confidence=confidence,
            )

    def neighbors(
        self, entity: str | int, *, hops: int = 1, types: Sequence[str] | None = None, limit: int = 100
    ) -> dict[str, Any]:
        from memory.retrieval import graph_query

        with self._serial():
            return graph_query.neighbors(self.store, self.scopes("all"), entity, hops=hops, types=types, limit=limit)

    def path(
        self, source: str | int, target: str | int, *, max_hops: int = 4, types: Sequence[str] | None = None
    ) -> dict[str, Any]:
        from memory.retrieval import graph_query

        with self._serial():
            return graph_query.path(self.store, self.scopes("all"), source, target, max_hops=max_hops, types=types)

    def graph(self, entity: str | int | None = None, *, hops: int = 2, max_nodes: int = 80) -> dict[str, Any]:
        """Nodes, edges and each node's memories around an entity (default: the most connected)."""
        from memory.retrieval import graph_query

        if not 1 <= max_nodes <= graph_query.MAX_NODES:
            raise InvalidInput(f"max_nodes must be 1-{graph_query.MAX_NODES}")
        with self._serial():
            return graph_query.subgraph(self.store, self.scopes("all"), entity, hops=hops, max_nodes=max_nodes)

    # -- decisions ------------------------------------------------------------------------------

    def decide(
        self,
        chosen: str,
        why: str,
        *,
        alternatives: Sequence[str] | None = None,
        subject: str | None = None,
        category: str = "decision",
        importance: int = 3,
        tags: Sequence[str] | None = None,
        scope: str = "project",
        context: str | None = None,
    ) -> dict[str, Any]:
        """Record a decision (a memory in the decision layer): {"memory"}."""
        with self._serial() as store:
            m = decisions.record_decision(
                store,
                chosen,
                why,
                scope=resolve(scope, self.project),
                alternatives=list(alternatives or []),
                subject=subject,
                category=category,
                importance=importance,
                tags=list(tags or []),
                context=context,
            )
        return {"memory": m.to_dict()}

    def outcome(self, memory_id: int, outcome: str, notes: str = "") -> dict[str, Any]:
        """Record how a decision turned out: {"outcome", "decision", "outcomes"}."""
        with self._serial() as store:
            self._not_part(memory_id)
            m, o = decisions.record_outcome(store, memory_id, outcome, notes, scopes=self.scopes("all"))
        return {
            "outcome": o.to_dict(),
            "decision": m.to_dict(),
            "outcomes": m.metadata.get("outcome", {}).get("count", 1),
        }

    def lessons(self, task: str, *, limit: int = 10, include_open: bool = True) -> dict[str, Any]:
        """Past decisions relevant to a task, failures first: {"task", "lessons", "model"}."""
        from memory.retrieval import lessons

        with self._serial():
            found = lessons.lessons_for(self.store, task, self.scopes("all"), limit=limit, include_open=include_open)
        return {"task": task, "lessons": [les.to_dict() for les in found], "model": self.model_state()}

    # -- upkeep ---------------------------------------------------------------------------------

    def maintain(
        self, *, dry_run: bool = False, background: bool = False, checkpoint: Any = None, detail: bool = False
    ) -> dict[str, Any]:
        """Run the maintenance agent over what this caller sees, on a connection of its own (other
        calls go on meanwhile): the report of every change and why. `background`: a long-running
        process asked (it converts an old file to incremental vacuum only while it is small)."""
        from memory.maintenance import agent

        # The same database again: the file by its path, the team database by the configured URL
        # (its `path` is only a name for messages; opened as a file it made an empty SQLite store).
        path = None if self.store.backend == "postgresql" else self.store.path
        own = Store.open(self.store.config, self.store.embedder, path=path, clock=self.store.clock)
        try:
            # Long memories stored before chunking (or edited outside the store) get their chunks.
            chunked = own.ensure_chunks(dry_run=dry_run)
            report = agent.run_maintenance(
                own,
                dry_run=dry_run,
                scopes=self.readable,
                checkpoint=checkpoint,
                vacuum_limit_mb=agent.WORKER_VACUUM_MB if background else None,
            )
            if detail:  # table by table, for a person
                report.size_after = agent.size_report(own, detail=True)
        finally:
            own.close()
        out = report.to_dict()
        if chunked:
            out["counts"] = {**out.get("counts", {}), "chunk": chunked}
            out["total_changes"] = out.get("total_changes", 0) + chunked
            out.setdefault("notes", []).append(
                f"{chunked} long {'memory was' if chunked == 1 else 'memories were'} cut into chunks, "
                "so a search can find any part of them"
            )
        return out

    def backup(self, *, progress: Any = None) -> dict[str, Any]:
        """A consistent copy of the database in <home>/backups (the oldest beyond backup_keep go)."""
        from memory.store import backup

        with self._serial() as store:
            if store.backend == "postgresql":  # a copy of the team database as a local SQLite file
                import memory.app.transfer as transfer

                result = transfer.backup_team(store, progress=progress)
                backup.keep_authors(store, result.path)
                return result.to_dict()
            return backup.backup(store, progress=progress).to_dict()

    def restore_backup(self, path: str, *, dry_run: bool = False) -> dict[str, Any]:
        """Replace the database's content with a backup's (the current content is saved first)."""
        from pathlib import Path

        from memory.store import backup

        with self._serial() as store:
            return backup.restore_backup(store, Path(path).expanduser(), dry_run=dry_run)

    def reindex(
        self, embedder: Any, *, dry_run: bool = False, force: bool = False, progress: Any = None
    ) -> dict[str, Any]:
        """Re-embed every memory with `embedder` (resumable): {"model", "reindexed"...}; nothing to
        do when the database already uses that model, unless `force`."""
        from memory.store import backup

        with self._serial() as store:
            pending = store.conn.execute("SELECT value FROM meta WHERE key = 'reindex_model'").fetchone()
            same = (store.vector_model, store.vector_revision) == (embedder.name, embed.revision_of(embedder))
            if same and not force and not pending:
                # Same model: only long memories stored before chunking need work (their chunks).
                chunked = store.ensure_chunks(dry_run=dry_run, embedder=embedder)
                return {"model": embedder.name, "reindexed": 0, "unchanged": True, "chunked": chunked}
            backup.require_rights(store, embedder)  # a teammate on a team database: before any change
            # The reindex below embeds the new chunks with the rest.
            chunked = store.ensure_chunks(embed=False, dry_run=dry_run)
        wait = getattr(embedder, "wait", None)
        if wait is not None and not dry_run:
            wait()  # outside the lock: loading a model takes seconds
        with self._serial() as store:
            # A batch is one model call: progress shows, and a stopped run keeps, every batch.
            out = backup.reindex(
                store, embedder, dry_run=dry_run, batch=store.config.embedding_batch_size, progress=progress
            ).to_dict()
        return {**out, "chunked": chunked}

    # -- moving memories in and out ---------------------------------------------------------------

    def export_records(self) -> Iterator[dict[str, Any]]:
        """Every memory this caller sees (this project's and the global ones; every scope for
        `all_projects`), archived ones too, in id order, as export lines (a stream: callers in
        this process only)."""
        import memory.app.transfer as transfer

        with self._serial() as store:
            yield from transfer.export_records(store, scopes=self.readable)

    def export(self, path: str, *, digest: bool = False, progress: Any = None) -> dict[str, Any]:
        """Write the export to a file (never half-written): {"exported", "file"[, "sha256"]}."""
        from pathlib import Path

        import memory.app.transfer as transfer
        from memory.store.backup import export_digest

        target = Path(path).expanduser()
        with self._serial() as store:
            n = transfer.write_export(store, target, progress, scopes=self.readable)
            extra = {"sha256": export_digest(transfer.export_records(store, scopes=self.readable))[0]} if digest else {}
        return {"exported": n, "file": str(target.resolve()), **extra}

    def import_lines(self, lines: Any, *, scope: str | None = None, progress: Any = None) -> dict[str, Any]:
        """Store JSONL lines (an export or hand-written): {"imported", "duplicates", "rejected",
        "errors"[, "elsewhere": {scope: count} imported into other projects' scopes, "project": this
        one's scope]}.
        `scope` ("project" or "global") overrides each line's own."""
        import memory.app.transfer as transfer

        with self._serial() as store:
            report = transfer.import_lines(store, lines, self.project, scope, progress)
        # Lines keep the scope they were exported from: those that went to another project are
        # not seen here, and the caller is told where they went.
        elsewhere = {s: n for s, n in report.scopes.items() if s not in (self.project, GLOBAL)}
        return {**report.to_dict(), **({"elsewhere": elsewhere, "project": self.project} if elsewhere else {})}

    def extract(
        self, source: str, *, dry_run: bool = False, scope: str | None = None, llm: bool = True
    ) -> dict[str, Any]:
        """Memories from a transcript (.jsonl), a JSON message list or plain text ("-": stdin):
        what each candidate became (or would become, with `dry_run`) and why. `llm=False`: the
        heuristic rules alone, even when an LLM provider is configured.

        `scope`: "global", "project" (this caller's project), or None: the project of the
        transcript's own working directory (this caller's project when it names none)."""
        from memory.extraction import harvest

        target = None if scope is None else resolve(scope, self.project)
        if not dry_run:
            self._model_loaded()
        with self._serial():
            return harvest.extract_file(
                self.store, source, scope=target, fallback=self.project, dry_run=dry_run, llm=llm
            )

    def harvest(self, path: str, *, scope: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """Read what is new in a transcript, extract and store it (the one harvest rule that the
        hooks, the worker and backfill share): counts of what was stored, merged, superseded.
        `dry_run`: what would be, with nothing written and the transcript's cursor unmoved."""
        from memory.extraction import harvest

        if not dry_run:
            self._model_loaded()
        with self._serial():
            return harvest.harvest(self.store, path, scope=scope, dry_run=dry_run)

    def backfill(
        self,
        claude_dir: str,
        *,
        since: Any = None,
        limit: int | None = None,
        dry_run: bool = False,
        quiet_seconds: float | None = None,
        max_mb: int | None = None,
        harvest: Callable[[str, str], dict[str, Any]] | None = None,
        progress: Callable[[int, int, Any], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, Any]:
        """Harvest this project's past Claude Code sessions (every project's, each into its own
        scope, for `all_projects`) found under `claude_dir`, oldest first, with the one harvest
        rule and its ledger (memory.app.backfill): the counts of what was found, harvested,
        skipped and why, and stored. Resumable: a second run continues where the first stopped.

        `since`: only transcripts written to at or after this ISO date. `limit`: harvest at most
        this many. `harvest(path, scope)`: who harvests (default: this store; the CLI passes the
        engine's, which has the model). `progress(bytes done, bytes total, transcript)` and
        `stop()` are called between transcripts. Nothing pending means no harvest is called: a
        caller that loads a model for it loads none."""
        from pathlib import Path

        import memory.app.backfill as backfill

        if limit is not None and limit < 1:
            raise InvalidInput(f"limit must be 1 or more, got {limit}")
        plan = backfill.scan(
            self.store.conn,
            Path(claude_dir),
            project=None if self.all_projects else self.project,
            since=parse_time(since, "since"),
            quiet_seconds=backfill.QUIET_SECONDS if quiet_seconds is None else quiet_seconds,
            max_bytes=(backfill.MAX_MB if max_mb is None else max_mb) << 20,
        )
        if harvest is None:

            def harvest(path: str, scope: str) -> dict[str, Any]:
                return self.harvest(path, scope=scope, dry_run=dry_run)

        summary = backfill.run(plan, harvest, limit=limit, dry_run=dry_run, progress=progress, stop=stop)
        return {**summary.to_dict(), "root": plan.root, "transcripts": [t.to_dict() for t in plan.transcripts]}

    def backfill_git(self, directory: str, *, since: Any = None, dry_run: bool = False) -> dict[str, Any]:
        """Keep what a teammate would want remembered from the commit messages of the repository
        `directory` is in (memory.extraction.gitlog: decisions with reasons, reverts, migrations,
        conventions; never diffs), each with its commit as source and its date as when it
        happened. Continues after the last commit a previous run read."""
        import subprocess

        from memory.extraction import gitlog

        repo = gitlog.top_level(directory)
        if repo is None:
            raise InvalidInput(f"{directory} is not in a git repository (or git is not installed); --git needs one")
        if not dry_run:
            self._model_loaded()
        try:
            with self._serial():
                return gitlog.harvest_git(self.store, repo, self.project, since=since, dry_run=dry_run)
        except (OSError, subprocess.SubprocessError) as e:
            raise InvalidInput(f"git log failed in {repo}: {e}; check that `git log` works there") from e


REPLACED_CHARS = 400  # of a replaced memory's text shown under the result that replaced it


def _replaced_list(old: Sequence[Memory]) -> list[dict[str, Any]]:
    """The memories a search result replaced, as it carries them: id and text (the start of a long one)."""
    return [{"id": m.id, "content": m.content[:REPLACED_CHARS]} for m in old]


def part_of(chunk_id: int, parent_id: int) -> str:
    """What a caller is told when it names a chunk where a memory is wanted: a chunk is an index
    entry of its parent (an exact slice of its text), changed only with it."""
    return f"#{chunk_id} is part of memory #{parent_id} (a chunk of a long memory); use {parent_id}"


def _newest_id(store: Store) -> int:
    return store.conn.execute("SELECT coalesce(max(id), 0) FROM memories").fetchone()[0]


def _version_count(store: Store, memory_id: int) -> int:
    return store.conn.execute("SELECT count(*) FROM memory_versions WHERE memory_id = ?", (memory_id,)).fetchone()[0]
