"""Teammates on one PostgreSQL database at once: each "machine" has a MAPLE home and a database role
of its own and writes and searches through the application API while the others do. Used by
tests/test_team.py (4 x 50) and tests/benchmarks/bench_team.py (4 x 500, in separate processes).

A machine writes `writes` memories: every fifth is global (personal), the rest belong to the
shared project. Every fifth write it searches for the personal and the shared kind; a result that
is another machine's personal memory is a leak. `check` then counts, from every machine, what it
sees, and from a superuser what is stored: a write whose id is missing is lost.
"""

from __future__ import annotations

import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = "github.com/acme/billing"  # what every clone's origin normalises to (memory.scope.team_key)
PERSONAL_EVERY = 5
SEARCH_EVERY = 5


def personal_text(machine: int, n: int) -> str:
    return f"Private note {n} of machine{machine}: my locker code word is tangerine{machine}x{n}"


def shared_text(machine: int, n: int) -> str:
    return f"Shared note {n} from machine{machine}: billing service {n} runs on host alpha{machine}x{n}"


@dataclass
class MachineResult:
    machine: int
    role: str
    personal: list[int] = field(default_factory=list)
    shared: list[int] = field(default_factory=list)
    leaks: list[str] = field(default_factory=list)
    own_found: int = 0  # its own personal memories among the results: the searches do reach them
    errors: list[str] = field(default_factory=list)
    write_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)

    def to_json(self) -> str:
        return json.dumps(self.__dict__)

    @classmethod
    def from_json(cls, text: str) -> MachineResult:
        return cls(**json.loads(text))


def leaks_in(results: list[dict[str, Any]], machine: int) -> list[str]:
    """Results that are another machine's personal memory."""
    return [r["content"] for r in results if r.get("scope") == "global" and f"of machine{machine}:" not in r["content"]]


def run_machine(machine: int, role: str, url: str, home: Path, writes: int) -> MachineResult:
    """One teammate's session: `writes` memories through memory.app.Memories, searching as it goes."""
    from memory import config as config_mod
    from memory.app.memories import Memories
    from memory.embed import HashEmbedder
    from memory.store import Store

    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"database": url}), encoding="utf-8")
    out = MachineResult(machine, role)
    with Store.open(config_mod.load(home=home, env={}), HashEmbedder(64)) as store:
        app = Memories(store, PROJECT)
        for n in range(writes):
            personal = n % PERSONAL_EVERY == 0
            text = personal_text(machine, n) if personal else shared_text(machine, n)
            t = time.perf_counter()
            try:
                got = app.add(text, scope="global" if personal else "project")
            except Exception as e:  # counted, not raised: the run reports every failure
                out.errors.append(f"write {n}: {type(e).__name__}: {e}")
                continue
            out.write_ms.append((time.perf_counter() - t) * 1000)
            (out.personal if personal else out.shared).append(got["memory"]["id"])
            if n % SEARCH_EVERY == SEARCH_EVERY - 1:
                for query in ("private note locker code word tangerine", "shared note billing service host"):
                    t = time.perf_counter()
                    found = app.search(query, limit=20, record=False)["results"]
                    out.search_ms.append((time.perf_counter() - t) * 1000)
                    out.leaks += leaks_in(found, machine)
                    out.own_found += sum(1 for r in found if f"of machine{machine}:" in r["content"])
    return out


@dataclass
class Verdict:
    lost: int
    leaks: int
    unseen_shared: int
    errors: int
    stored: int


def check(admin_url: str, machines: list[tuple[int, str, str, Path]], results: list[MachineResult]) -> Verdict:
    """Lost writes (ids returned that the database does not hold), leaks (during the run, and after:
    every machine lists all it sees and reads memories with plain SQL as its role), and shared
    memories a machine cannot see."""
    import psycopg

    from memory import config as config_mod
    from memory.app.memories import Memories
    from memory.store import Store

    written = {i for r in results for i in r.personal + r.shared}
    with psycopg.connect(admin_url, autocommit=True) as conn:  # a superuser: sees past the policies
        stored = {row[0] for row in conn.execute("SELECT id FROM memories WHERE parent_id IS NULL")}
    leaks = sum(len(r.leaks) for r in results)
    shared = {i for r in results for i in r.shared}
    unseen = 0
    for machine, _role, url, home in machines:
        with Store.open(config_mod.load(home=home, env={}), None) as store:
            app = Memories(store, PROJECT, all_projects=True)
            seen: list[dict[str, Any]] = []
            cursor = None
            while True:
                page = app.list(limit=500, cursor=cursor)
                seen += page["memories"]
                cursor = page.get("next_cursor")
                if not cursor:
                    break
        leaks += len(leaks_in(seen, machine))
        unseen += len(shared - {m["id"] for m in seen})
        with psycopg.connect(url, autocommit=True) as conn:
            others = conn.execute(
                "SELECT count(*) FROM memories WHERE scope = 'global' AND author <> current_user"
            ).fetchone()[0]
            leaks += others
    return Verdict(
        lost=len(written - stored),
        leaks=leaks,
        unseen_shared=unseen,
        errors=sum(len(r.errors) for r in results),
        stored=len(stored),
    )


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else float("nan")
