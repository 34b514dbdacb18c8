"""Redaction benchmark: recall and false positives on the test corpora, and speed on code text.

    .venv/bin/python tests/benchmarks/bench_privacy.py [--mb 4] [--scan DIR [--ext .py,.md]]

Recall = share of tests/data/secrets_corpus.jsonl entries whose secret is gone after `redact`.
False-positive rate = share of tests/data/benign_corpus.jsonl entries changed at all.
Speed = MB/s of `redact` over generated code-like text (Python, JS, shell, JSON, logs, lockfiles,
Markdown, some Chinese; ordinary content with no secrets), best of three runs; any redaction
in that text is printed, since it would be a false positive. --scan DIR also times real files
(e.g. .venv/lib/python3.11/site-packages) and prints what was redacted there.
Not a pytest test: timings do not belong in unit tests.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import string
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory.lang.privacy import redact  # noqa: E402

DATA = ROOT / "tests" / "data"
LABEL = re.compile(r"\[REDACTED:[\w-]+\]")


def corpus(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def quality() -> None:
    secrets, benign = corpus("secrets_corpus.jsonl"), corpus("benign_corpus.jsonl")
    missed = [e for e in secrets if e["secret"] in redact(e["text"])]
    changed = [e for e in benign if redact(e["text"]) != e["text"]]
    print(f"recall: {len(secrets) - len(missed)}/{len(secrets)} = {1 - len(missed) / len(secrets):.1%}")
    for e in missed:
        print(f"  missed: {e['note']}")
    print(f"false positives: {len(changed)}/{len(benign)} = {len(changed) / len(benign):.1%}")
    for e in changed:
        print(f"  changed: {e['note']}: {redact(e['text'])[:120]!r}")


WORDS = (
    "user order invoice retry cache session request handler config build deploy queue worker "
    "memory store search index vector budget page cursor limit offset schema migration "
    "client server upstream timeout backoff payload result error status event stream batch"
).split()
ZH = "用户 订单 缓存 重试 部署 配置 数据库 索引 查询 会话 日志 错误 测试 接口 服务".split()


def generated_code(mb: float, seed: int = 7) -> str:
    """Deterministic code-like text with no secrets in it."""
    r = random.Random(seed)

    def w() -> str:
        return r.choice(WORDS)

    def ident() -> str:
        return w() + "".join(x.title() for x in (w() for _ in range(r.randint(0, 3))))

    def hexs(n: int) -> str:
        return "".join(r.choice("0123456789abcdef") for _ in range(n))

    lines = [
        lambda: f"def {w()}_{w()}(self, {w()}: int, {w()}: str | None = None) -> dict:",
        lambda: f"    {w()} = self.{ident()}({w()}, {w()}={r.randint(0, 999)})",
        lambda: f'    if not {w()}:\n        raise ValueError(f"{w()} {{ {w()} }} is {w()}")',
        lambda: f"const {ident()} = async ({w()}) => await fetch(`/api/v1/{w()}s/${{{w()}}}`);",
        lambda: f"import {{ {ident()}, {ident()} }} from './{w()}/{w()}';",
        lambda: f'$ git commit -m "fix {w()} {w()} in {w()}"  # {hexs(40)}',
        lambda: (
            f"{r.choice(['INFO', 'DEBUG', 'WARN'])} 2026-11-{r.randint(1, 30):02d}T10:{r.randint(0, 59):02d}:00Z "
            f"{w()}.{w()} request_id={uuid.UUID(int=r.getrandbits(128))} took {r.randint(1, 900)}ms"
        ),
        lambda: f'  "{w()}_{w()}": {{"{w()}": {r.randint(0, 99)}, "{w()}": "{w()}-{w()}", "enabled": true}},',
        lambda: (
            f'"node_modules/{w()}": {{"version": "{r.randint(0, 9)}.{r.randint(0, 20)}.{r.randint(0, 9)}", '
            f'"integrity": "sha512-{"".join(r.choice(string.ascii_letters + string.digits + "+/") for _ in range(86))}=="}}'
        ),
        lambda: f'  File "/home/dev/src/{w()}/{w()}_{w()}.py", line {r.randint(1, 999)}, in {ident()}',
        lambda: f"- The {w()} {w()} now retries {r.randint(2, 9)} times before the {w()} gives up.",
        lambda: f"FROM python:3.12-slim@sha256:{hexs(64)}",
        lambda: f"{r.choice(ZH)}{r.choice(ZH)}的{r.choice(ZH)}需要先{r.choice(ZH)}，然后 {ident()} 再跑一次。",
        lambda: f"export {w().upper()}_{w().upper()}_URL=https://{w()}.example.com/{w()}",
        lambda: f'    assert {w()}.{w()} == {r.randint(0, 100)}, "{w()} {w()} {w()}"',
    ]
    out: list[str] = []
    size, target = 0, int(mb * 1_000_000)
    while size < target:
        line = r.choice(lines)()
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def speed(text: str, label: str) -> str:
    best = float("inf")
    result = text
    for _ in range(3):
        t0 = time.perf_counter()
        result = redact(text)
        best = min(best, time.perf_counter() - t0)
    mb = len(text.encode("utf-8")) / 1e6
    print(f"{label}: {mb:.2f} MB in {best:.3f} s = {mb / best:.1f} MB/s")
    return result


def show_redactions(after: str, limit: int = 25) -> None:
    found = list(LABEL.finditer(after))
    print(f"  redactions: {len(found)}")
    for m in found[:limit]:
        print(f"    ...{after[max(0, m.start() - 70) : m.end() + 30]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=4.0, help="megabytes of generated code text to time")
    ap.add_argument("--scan", type=Path, help="also time and inspect real files under this folder")
    ap.add_argument("--ext", default=".py", help="file suffixes to read under --scan, comma-separated")
    ap.add_argument("--scan-mb", type=float, default=8.0, help="megabytes to read under --scan")
    args = ap.parse_args()
    quality()
    text = generated_code(args.mb)
    show_redactions(speed(text, "generated code"))
    if args.scan:
        files, size, limit = [], 0, args.scan_mb * 1e6
        for path in sorted(args.scan.rglob("*")):
            if path.suffix in args.ext.split(",") and path.is_file():
                try:
                    files.append(path.read_text(encoding="utf-8"))
                except (UnicodeDecodeError, OSError):
                    continue
                size += len(files[-1])
                if size > limit:
                    break
        real = "\n".join(files)
        show_redactions(speed(real, f"{len(files)} files under {args.scan}"))


if __name__ == "__main__":
    main()
