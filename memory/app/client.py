"""The application API as a process other than the engine gets it: through the warm engine when
it answers, else in this process (memory.remote explains the engine).

`connect(config, project_dir)` gives an object with Memories' methods. A call goes to the
engine; when no engine takes it, one is started for the next calls and this call is done here,
on a store opened for it, with the embedding model only if it loads at once (a real model costs a
process seconds and hundreds of MB: what is stored without a vector gets one from the engine).
A call the engine took but did not answer is not done again here (remote.EngineLost).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory import embed, remote
from memory.app.memories import Memories
from memory.config import Config
from memory.scope import project_scope
from memory.store import Store, stored_model


def engine_enabled(config: Config) -> bool:
    """Whether processes hand work to the warm engine: one per database, a local SQLite file or a
    team database (server/engine.py), which embeds what a process stored here without a vector.
    Not where no engine can run (`remote.possible`: a MAPLE home whose path is too long for a
    socket): a process that left the model to an engine that never comes would never compare by
    meaning, and its memories would wait for vectors forever."""
    return config.hook_resident_minutes > 0 and remote.possible(config.home, config.db_path)


def local_embedder(config: Config) -> Any:
    """The configured embedder when it needs no loading (the test embedder), else None."""
    if not embed.loads_instantly(config.embedding_model):
        return None
    e = embed.from_config(config, stored_model(config))  # the database's own model, which may need loading
    return e if embed.loads_instantly(e.name) else None


class Connection:
    """Memories' methods, answered by the engine or, failing that, in this process."""

    def __init__(
        self,
        config: Config,
        project_dir: str,
        *,
        wait: float = 0.0,
        all_projects: bool = False,
        embedder: bool = True,
        model: bool = False,
    ):
        self.config, self.project_dir, self.wait, self.all_projects = config, project_dir, wait, all_projects
        self.embedder = embedder  # whether a call done here may need to embed (else the store opens without a model)
        # A call done here loads the configured model even when an engine could have answered: a
        # harvest compares by meaning, whoever runs it (memory.extraction.harvest.harvest_turns).
        self.model = model
        self._remote = remote.RemoteMemories(config.home, config.db_path, project_dir)
        self._local: Memories | None = None
        self._tried_start = False

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)

        def call(*args: Any, **kwargs: Any) -> Any:
            if engine_enabled(self.config) and not self.all_projects:
                try:
                    return getattr(self._remote, method)(*args, **kwargs)
                except remote.EngineUnavailable:
                    if self._start_and_wait():
                        try:
                            return getattr(self._remote, method)(*args, **kwargs)
                        except remote.EngineUnavailable:
                            pass
            answer = getattr(self.local(), method)(*args, **kwargs)
            if isinstance(answer, dict) and answer.get("model") == "unavailable" and self._tried_start:
                answer["model"] = "loading"  # the engine that was just started is loading it
            return answer

        return call

    def engine_status(self) -> dict[str, Any]:
        """What the engine says about itself (model, indexes), or {} when none answers."""
        try:
            return remote.call(self.config.home, self.config.db_path, "ping", project="", timeout=1.0)
        except remote.EngineUnavailable:
            return {}

    def _start_and_wait(self) -> bool:
        if self._tried_start or not self.embedder:
            return False  # a call that needs no model (list, stats, show) starts no engine
        self._tried_start = True
        if not self.config.database_url and not self.config.db_path.exists():
            return False  # the first write creates it here; the engine starts with the next call
        started = remote.start(self.config.home, self.config.db_path)
        if not (started or remote.running(self.config.home, self.config.db_path)) or self.wait <= 0:
            return False
        return remote.wait_until_up(self.config.home, self.config.db_path, self.wait)

    def local(self) -> Memories:
        """The application API in this process (opened on first use)."""
        if self._local is None:
            if not self.embedder:
                embedder = None  # reading a database built with another model still works
            elif engine_enabled(self.config) and not self.model:
                embedder = local_embedder(self.config)
            else:
                embedder = embed.from_config(self.config, stored_model(self.config))
            store = Store.open(self.config, embedder)
            self._local = Memories(store, project_scope(self.project_dir), all_projects=self.all_projects)
        return self._local

    def close(self) -> None:
        if self._local is not None:
            self._local.store.close()
            self._local = None


def embed_later(config: Config) -> None:
    """Have the engine give vectors to what was just stored without one: poke the running engine
    (it embeds what is missing with the harvest), else start one (it does so once loaded)."""
    try:
        remote.call(config.home, config.db_path, "drain", project="", timeout=2.0)
    except remote.EngineUnavailable:
        remote.start(config.home, config.db_path)


def connect(config: Config, project_dir: str | Path, **options: Any) -> Connection:
    return Connection(config, str(project_dir), **options)
