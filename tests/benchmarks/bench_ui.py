"""The web page (`maple-memory ui`) at scale: the first page and a search, at N memories.

    MAPLE_MODEL=hash-64 .venv/bin/python tests/benchmarks/bench_ui.py [--size 10000] [--runs 30]
        [--workdir /tmp/maple-bench-ui] [--rebuild] [--no-browser]

Builds N memories in one project (kept in --workdir and reused; --rebuild starts again) through
Store.add_many (the real write path: redaction, FTS row, vector, entity links), from English and
Chinese templates made unique by a ticket number, spread over two years, a tenth of them global,
plus a session's deliveries. Then serves them with memory.cli.ui.web.Running and measures, after
3 warm-up rounds, medians and p95 of:
  * first page, HTTP: the page, its three assets, the first listing (/api/list, 50 memories) and
    the pulse, one after another as a browser without parallel connections would fetch them;
  * first page, browser: headless Chromium (Playwright) from the start of the navigation to the
    listing drawn (the page's own clock), a fresh browser context each time (no cache);
  * search, HTTP: /api/search for varied queries (English and Chinese), 20 results;
  * search, browser: from the start of the navigation to #/search?q= to the results drawn.
Targets (issue 19): first page <= 300 ms, search <= 200 ms at 10k memories. The machine is shared:
read the figures with the load average printed next to them. MAPLE_MODEL picks the embedder the
store is built and searched with (hash-64: no model to load; the default MiniLM: real vectors).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory import config as config_mod  # noqa: E402
from memory import embed  # noqa: E402
from memory.app import Memories  # noqa: E402
from memory.cli.ui import web  # noqa: E402
from memory.store import NewMemory, Store  # noqa: E402

PROJECT = "/work/bench-project"
SERVICES = ["billing", "ledger", "invoicer", "auth", "search", "notifier", "gateway", "scheduler"]
TOOLS = ["PostgreSQL", "Redis", "Celery", "uv", "pytest", "Docker", "Kafka", "nginx", "Sentry"]
PEOPLE = ["Alice", "Bob", "Chen Wei", "Dana", "Emeka", "Farah"]
EN = [
    "The {s} service talks to {t} through a pool of {n} connections (ticket {k})",
    "{p} fixed the flaky {s} test by pinning {t} (PR {k})",
    "Decided to move {s} jobs from cron to {t}; the old way lost runs on restarts (ADR {k})",
    "Incident {k}: {s} timed out because {t} ran out of memory; raised the limit to {n} MB",
    "{p} prefers {t} for local work on {s}",
    "Build {k} of {s} failed: {t} changed its default port to {n}",
]
ZH = [
    "{s} 服务通过 {t} 连接，连接池大小 {n}（工单 {k}）",
    "{p} 决定把 {s} 的定时任务迁移到 {t}（决策 {k}）",
    "事故 {k}：{s} 因为 {t} 内存不足而超时",
]
QUERIES = [
    "billing connection pool",
    "why did the scheduler lose runs",
    "Redis out of memory incident",
    "what does Alice prefer",
    "flaky pytest fix",
    "Kafka default port changed",
    "账单服务 连接池",
    "定时任务 迁移",
    "gateway nginx timeout",
    "Sentry ledger",
]


def build(config: Any, size: int) -> None:
    rng = random.Random(19)
    now = time.time()
    with Store.open(config, embed.from_config(config)) as store:
        batch: list[NewMemory] = []
        for i in range(size):
            template = rng.choice(ZH if rng.random() < 0.2 else EN)
            text = template.format(
                s=rng.choice(SERVICES), t=rng.choice(TOOLS), p=rng.choice(PEOPLE), n=rng.randint(2, 900), k=10000 + i
            )
            batch.append(
                NewMemory(
                    content=text,
                    layer="decision" if "ecided" in text or "决定" in text else rng.choice(["fact", "experience"]),
                    scope="global" if rng.random() < 0.1 else PROJECT,
                    importance=rng.randint(1, 5),
                    occurred_at=now - rng.random() * 730 * 86400,
                    session_id=f"bench-{i // 25}",
                    moods=[],  # given: skips emotion analysis at write time
                )
            )
            if len(batch) == 500:
                store.add_many(batch)
                batch = []
                print(f"  stored {i + 1}", file=sys.stderr)
        if batch:
            store.add_many(batch)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM memories ORDER BY id DESC LIMIT 200")]
        app = Memories(store, PROJECT)
        for n in range(20):
            app.shown(f"bench-{n}", ids[n * 5 : n * 5 + 5], "surface")


def stats(samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return f"median {statistics.median(ms):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ms)})"


def get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as r:
        return r.read()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--workdir", default="/tmp/maple-bench-ui")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--no-browser", action="store_true", help="HTTP figures only")
    a = ap.parse_args()
    model = os.environ.get("MAPLE_MODEL") or "minilm (default)"
    home = Path(a.workdir) / f"{a.size}-{model.replace('/', '_')}"
    if a.rebuild and home.exists():
        shutil.rmtree(home)
    os.environ["MAPLE_HOME"] = str(home)
    os.environ["MAPLE_HOOK_RESIDENT_MINUTES"] = "0"
    config = config_mod.load(home=home)
    if not config.db_path.exists():
        print(f"building {a.size} memories in {home} ...", file=sys.stderr)
        t0 = time.perf_counter()
        build(config, a.size)
        print(f"built in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    embedder = embed.from_config(config)
    wait = getattr(embedder, "wait", None)
    if wait is not None:
        wait()  # measured warm, as a page open for a while is
    store = Store.open(config, embedder)
    app = Memories(store, PROJECT)
    running = web.Running(app).start()
    base, t = f"http://127.0.0.1:{running.port}", f"t={running.token}"
    print(f"MAPLE ui benchmark: {app.stats()['memories']} memories, model {model}, load {os.getloadavg()[0]:.2f}")

    def first_page() -> None:
        get(f"{base}/?{t}")
        for asset in ("app.css", "graph.js", "app.js"):
            get(f"{base}/static/{asset}?{t}")
        get(f"{base}/api/list?limit=50&{t}")
        get(f"{base}/api/pulse?{t}")

    def timed(fn: Any, runs: int) -> list[float]:
        out = []
        for i in range(runs + 3):
            t0 = time.perf_counter()
            fn(i)
            if i >= 3:
                out.append(time.perf_counter() - t0)
        return out

    def search(i: int) -> None:
        q = urllib.parse.quote(QUERIES[i % len(QUERIES)])
        get(f"{base}/api/search?q={q}&limit=20&{t}")

    try:
        print(f"first page, HTTP:     {stats(timed(lambda i: first_page(), a.runs))}")
        print(f"  /api/list alone:    {stats(timed(lambda i: get(f'{base}/api/list?limit=50&{t}'), a.runs))}")
        print(f"search, HTTP:         {stats(timed(search, a.runs))}")
        print(f"  sessions page API:  {stats(timed(lambda i: get(f'{base}/api/sessions?{t}'), a.runs))}")
        print(f"  health API:         {stats(timed(lambda i: get(f'{base}/api/health?{t}'), a.runs))}")
        if not a.no_browser:
            browser_figures(running, a.runs)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    finally:
        running.stop()
        store.close()


def browser_figures(running: web.Running, runs: int) -> None:
    chromium = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser figures skipped: Playwright is not installed (pip install playwright)")
        return
    if chromium is None:
        print("browser figures skipped: no chromium on PATH")
        return
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])

        def load(url: str, view: str) -> float:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector(f'main[data-view="{view}"][data-ready="1"]')
            # From the navigation's start (the page's time origin) to the view drawn, as the
            # page itself saw it: Playwright's own round trips are not the page's time.
            spent = page.evaluate("Number(document.querySelector('main').dataset.readyAt)") / 1000
            context.close()
            return spent

        first = [load(running.url, "browse") for _ in range(runs + 3)][3:]
        print(f"first page, browser:  {stats(first)}")
        searches = [
            load(running.url + "#/search?q=" + urllib.parse.quote(QUERIES[i % len(QUERIES)]), "search")
            for i in range(runs + 3)
        ][3:]
        print(f"search page, browser: {stats(searches)}")
        browser.close()


if __name__ == "__main__":
    main()
