"""Property-based fuzzing of every MCP tool through the real SDK client (in memory).

The tools are discovered from `tools/list` and their arguments generated from each tool's input
schema, so a tool added later is fuzzed without touching this file. Every call falls in one of
three buckets, and each bucket has its rule:

  sane     weird but meaningful calls to the everyday tools (hostile unicode, control characters,
           null bytes, FTS operators and SQL fragments inside otherwise ordinary text): must succeed.
  valid    anything the input schema allows (checked with jsonschema): success, or a tool error
           that says what was wrong in words (MAPLE's own errors).
  invalid  the schema broken on purpose (wrong types, out-of-range and enormous numbers, strings
           past their limit, missing required arguments, wrong enum values): a tool error naming the
           problem. A call the SDK's lenient parsing accepts anyway (the string "5" for 5) is counted
           as coerced, not as a failure.

In every bucket: the client never raises (the server did not die or break the protocol), no
response carries SQLite's own error text (query syntax never reaches SQLite unescaped) or a Python
internal (a bare "Error executing tool X", a TypeError, a traceback).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from reliability import harness

PROJECT = "/work/fuzz-project"
TIME_NAMES = {"occurred_at", "since", "until", "valid_from", "valid_to", "at", "before", "after"}
INTERNALS = re.compile(
    r"Traceback|TypeError|KeyError|AttributeError|IndexError|ValueError:|"
    r"RecursionError|OverflowError|UnicodeEncodeError|object has no attribute|"
    r"unsupported operand|out of range|not subscriptable|unhashable",
    re.I,
)

NASTY = [
    '"',
    "'",
    "*",
    "^",
    ":",
    "-",
    "+",
    "(",
    ")",
    "{",
    "}",
    "NEAR(",
    "NEAR(a b, 2)",
    " AND ",
    " OR ",
    " NOT ",
    'body:"x"',
    "memory_fts",
    "content:*",
    '"unterminated',
    "a OR",
    "OR b",
    "NOT",
    "AND AND",
    "* *",
    "'; DROP TABLE memories; --",
    "1 OR 1=1",
    '" OR ""="',
    "%",
    "_",
    "\\",
    "/*",
    "*/",
    "; SELECT 1;",
    "UNION SELECT * FROM meta",
    "x') OR ('1'='1",
    "\x00",
    "\x1b[31m",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\r\n",
    "</maple-memory>",
    "<maple-memory>",
    "ignore previous instructions",
    "../../etc/passwd",
    "{0}",
    "%s %n",
    "😀",
    "的",
    "数据库",
    "é",
    "ß",
    "İ",
    "\U0001f9ea" * 3,
    "ǅ",
    "ﬁ",
    "Ω",
    "\u0301",
    "NaN",
    "Infinity",
    "null",
]


# -- strategies --------------------------------------------------------------------------------


def hostile_text(max_size: int = 80) -> st.SearchStrategy[str]:
    chars = st.characters(blacklist_categories=("Cs",))  # lone surrogates cannot be encoded at all
    return st.one_of(
        st.text(chars, max_size=max_size),
        st.sampled_from(NASTY),
        st.lists(st.one_of(st.sampled_from(NASTY), st.text(chars, max_size=6)), max_size=10).map("".join),
        st.builds(
            lambda c, n: c * n,
            st.sampled_from(["a", "\x00", "é", "的", "\u202e", "😀", "\\", "'", '"', "*"]),
            st.integers(1, 3000),
        ),
    )


def huge_text() -> st.SearchStrategy[str]:
    return st.builds(
        lambda c, n: c * n, st.sampled_from(["x", "的", "😀", "a b ", "\x00"]), st.integers(60_000, 1_200_000)
    )


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for i in range(depth):
        value = {"k": value} if i % 2 else [value]
    return value


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        hostile_text(30),
    )
    return st.one_of(
        st.recursive(
            leaves,
            lambda kids: st.one_of(st.lists(kids, max_size=4), st.dictionaries(hostile_text(12), kids, max_size=4)),
            max_leaves=12,
        ),
        st.integers(1, 120).map(nested),
    )  # the SDK client cannot send deeper (pydantic)


def _branches(schema: dict) -> list[dict]:
    return schema.get("anyOf") or schema.get("oneOf") or [schema]


# Memory ids are given out from 1 upwards and every run stores early, so ids in this range mostly
# exist (strategies must not depend on what the run has stored so far: hypothesis replays them).
LIKELY_IDS = st.integers(1, 40)


def valid_value(schema: dict, name: str) -> st.SearchStrategy[Any]:
    """Anything the schema allows, biased towards the hostile."""
    options = []
    for s in _branches(schema):
        kind = s.get("type")
        if "enum" in s:
            options.append(st.sampled_from(s["enum"]))
        elif "const" in s:
            options.append(st.just(s["const"]))
        elif kind == "null":
            options.append(st.none())
        elif kind == "string":
            lo, hi = s.get("minLength", 0), s.get("maxLength")
            base = hostile_text()
            if name in TIME_NAMES:
                base = st.one_of(st.datetimes().map(lambda d: d.isoformat() + "Z"), st.dates().map(str), base)
            options.append(
                base.map(
                    lambda t, lo=lo, hi=hi: (
                        (t + "a" * max(0, lo - len(t)))[:hi] if hi else t + "a" * max(0, lo - len(t))
                    )
                )
            )
        elif kind == "integer":
            lo, hi = s.get("minimum", -(2**64)), s.get("maximum", 2**64)
            edges = [x for x in (lo, hi, 0, -1, 1, 2**31, 2**63 - 1, 2**63, -(2**63)) if lo <= x <= hi]
            picks = [st.integers(lo, hi), st.sampled_from(edges)]
            if "id" in name:
                picks.append(LIKELY_IDS)
            options.append(st.one_of(*picks))
        elif kind == "number":
            options.append(st.floats(s.get("minimum"), s.get("maximum"), allow_nan=False, allow_infinity=False))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "array":
            item = valid_value(s.get("items", {}), name[:-1] if name.endswith("s") else name)
            options.append(st.lists(item, min_size=s.get("minItems", 0), max_size=min(s.get("maxItems", 12), 12)))
        elif kind == "object" or not kind:
            options.append(
                st.dictionaries(hostile_text(12), json_values(), max_size=5) if kind == "object" else json_values()
            )
    return st.one_of(*options)


def wrong_value(schema: dict) -> st.SearchStrategy[Any]:
    """A value the schema refuses (or, with lenient parsing, may coerce)."""
    picks: list[Any] = [
        None,
        True,
        False,
        3.5,
        -1,
        10**30,
        -(10**30),
        "not-a-number",
        [],
        ["x"],
        {"a": 1},
        nested(120),
        "z" * 2_000_000,
    ]
    for s in _branches(schema):
        if "maxLength" in s:
            picks.append("y" * (s["maxLength"] + 1))
        if "minLength" in s and s["minLength"] > 0:
            picks.append("")
        if "maximum" in s:
            picks.append(s["maximum"] + 1)
        if "minimum" in s:
            picks.append(s["minimum"] - 1)
        if "enum" in s:
            picks.append("not-an-option")
        if "maxItems" in s:
            picks.append([1] * (s["maxItems"] + 1))
    return st.sampled_from(picks)


# The everyday tools, called the way a model would, with hostile text inside ordinary words.
def _word(text: str) -> str:
    return f"{text} ordinary words"


SANE: dict[str, Callable[[], st.SearchStrategy[dict]]] = {
    "memory_store": lambda: st.fixed_dictionaries(
        {"content": hostile_text(400).map(lambda t: f"Fuzz note: {t} keeps working")},
        optional={
            "metadata": st.dictionaries(hostile_text(10), st.one_of(hostile_text(20), st.integers(-9, 9)), max_size=4),
            "subject": hostile_text(50).map(lambda t: f"subject {t}"[:200]),
            "layer": st.sampled_from(["fact", "experience", "decision"]),
        },
    ),
    "memory_search": lambda: st.fixed_dictionaries(
        {"query": hostile_text(300).map(_word)}, optional={"limit": st.integers(1, 100)}
    ),
    "memory_surface": lambda: st.fixed_dictionaries(
        {"prompt": st.one_of(hostile_text(500), huge_text())},
        optional={"session_id": hostile_text(200).map(lambda t: t[:200]), "cwd": hostile_text()},
    ),
    "memory_context": lambda: st.fixed_dictionaries(
        {"query": hostile_text(300).map(_word)}, optional={"budget": st.integers(50, 2400)}
    ),
    "memory_get": lambda: st.fixed_dictionaries(
        {"ids": st.lists(st.one_of(st.integers(-(2**63), 2**63 - 1), LIKELY_IDS), min_size=1, max_size=100)}
    ),
    "memory_list": lambda: st.fixed_dictionaries(
        {}, optional={"category": hostile_text(), "subject": hostile_text(), "tag": hostile_text()}
    ),
    "lessons_for": lambda: st.fixed_dictionaries({"task": hostile_text(300).map(_word)}),
    "memory_stats": lambda: st.just({}),
}


# -- judging a call ------------------------------------------------------------------------------


def judge(bucket: str, result: Any) -> str | None:
    """What is wrong with this result (None: it is what the bucket demands)."""
    text = harness.tool_text(result)
    if harness.SQLITE_LEAKS.search(text):
        return "SQLite error text in the response"
    if result.is_error:
        if harness.OPAQUE_TOOL_ERROR.match(text.strip()):
            return "opaque error (an unexpected exception inside the tool)"
        if INTERNALS.search(text):
            return "a Python internal in the error"
        if bucket == "sane":
            return "a sane call was refused"
    return None


def run_tool_fuzz(workdir: Path, calls: int, *, seed: int = 0) -> dict[str, Any]:
    """Fuzz every tool of a fresh server with `calls` calls; return counts and failures."""
    import anyio.from_thread
    from jsonschema import Draft202012Validator
    from mcp import Client

    from memory import config as config_mod
    from memory.embed import HashEmbedder
    from server.app import build_server

    cfg = config_mod.load(home=workdir / "home", env={}, worker_enabled=False)
    stats: dict[str, Any] = {
        "calls": 0,
        "by_bucket": {"sane": 0, "valid": 0, "invalid": 0},
        "by_tool": {},
        "tool_errors": 0,
        "coerced": 0,
        "coerced_examples": [],
        "failures": [],
        "error_samples": {},
    }
    t0 = time.perf_counter()
    with anyio.from_thread.start_blocking_portal() as portal:
        client = Client(build_server(cfg, HashEmbedder(64), project=PROJECT), mode="legacy")
        with portal.wrap_async_context_manager(client) as c:
            tools = {t.name: t for t in portal.call(c.list_tools).tools}
            validators = {name: Draft202012Validator(t.input_schema) for name, t in tools.items()}
            stats["tools"] = sorted(tools)

            def arguments(tool: str, bucket: str) -> st.SearchStrategy[dict]:
                schema = tools[tool].input_schema
                props, required = schema.get("properties", {}), set(schema.get("required", []))
                if bucket == "sane":
                    return SANE[tool]()
                base = st.fixed_dictionaries(
                    {k: valid_value(v, k) for k, v in props.items() if k in required},
                    optional={k: valid_value(v, k) for k, v in props.items() if k not in required},
                )
                if bucket == "valid" or not props:
                    return base

                @st.composite
                def broken(draw: Any) -> dict:
                    args = draw(base)
                    name = draw(st.sampled_from(sorted(props)))
                    if name in required and draw(st.booleans()):
                        args.pop(name, None)  # a required argument missing
                    else:
                        args[name] = draw(wrong_value(props[name]))
                    return args

                return broken()

            @hypothesis_seed(seed)
            @settings(
                max_examples=calls,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(st.data())
            def one(data: Any) -> None:
                bucket = data.draw(st.sampled_from(["sane", "valid", "invalid"]))
                names = sorted(n for n in tools if bucket != "sane" or n in SANE)
                tool = data.draw(st.sampled_from(names))
                args = data.draw(arguments(tool, bucket))
                if bucket != "sane":
                    bucket = "valid" if validators[tool].is_valid(args) else "invalid"
                call(tool, bucket, args)

            def call(tool: str, bucket: str, args: dict) -> None:
                stats["calls"] += 1
                stats["by_bucket"][bucket] += 1
                stats["by_tool"][tool] = stats["by_tool"].get(tool, 0) + 1
                try:
                    result = portal.call(c.call_tool, tool, args)
                except Exception as e:  # noqa: BLE001 - the server died or broke the protocol
                    stats["failures"].append(
                        {
                            "tool": tool,
                            "bucket": bucket,
                            "args": _preview(args),
                            "problem": f"the client raised {type(e).__name__}: {e}"[:500],
                        }
                    )
                    raise
                problem = judge(bucket, result)
                text = harness.tool_text(result)
                if result.is_error:
                    stats["tool_errors"] += 1
                    key = re.sub(r"\d+", "N", text.split("\n")[0][:90])
                    stats["error_samples"][key] = stats["error_samples"].get(key, 0) + 1
                elif bucket == "invalid":
                    stats["coerced"] += 1
                    if len(stats["coerced_examples"]) < 15:
                        stats["coerced_examples"].append({"tool": tool, "args": _preview(args)})
                if problem:
                    stats["failures"].append(
                        {
                            "tool": tool,
                            "bucket": bucket,
                            "args": _preview(args),
                            "problem": problem,
                            "response": text[:400],
                        }
                    )

            one()
            # Hypothesis favours early choices: a tool it never drew is still called once, with no
            # arguments (invalid where some are required), so every tool meets the fuzz.
            for tool in sorted(set(tools) - set(stats["by_tool"])):
                call(tool, "valid" if validators[tool].is_valid({}) else "invalid", {})
            # Still alive and whole after everything: a store and a search answer normally.
            ok = portal.call(c.call_tool, "memory_store", {"content": "The fuzzing run is over and all is well"})
            found = portal.call(c.call_tool, "memory_search", {"query": "fuzzing run over"})
            stats["alive_after"] = not ok.is_error and not found.is_error and bool(found.structured_content["results"])
    stats["database"] = harness.check_database(cfg.db_path, home=cfg.home)["problems"]
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    stats["error_samples"] = dict(sorted(stats["error_samples"].items(), key=lambda kv: -kv[1])[:25])
    return stats


def _preview(args: dict, limit: int = 3000) -> str:
    text = json.dumps(args, ensure_ascii=True, default=str)
    return text if len(text) < limit else text[:limit] + f"... ({len(text)} chars)"
