#!/usr/bin/env python3
"""Rebuild every dev4 transcript + gold file: python3 _gen/build.py && python3 validate.py"""

import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "dev2", "_gen"))  # the dev2 split's builder (lib.py)...
import lib  # noqa: E402

lib.OUT = os.path.dirname(HERE)  # ...writing this split's files here
MODULES = ["pj_edu_paike", "pk_arena_server", "pl_mobile_release"]

for name in MODULES:
    try:
        mod = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            continue
        raise
    for fn in mod.SESSIONS:
        s = fn()
        s.write()
        print(f"wrote {s.name} ({len(s.lines)} lines, {len(s.expected)} expected)")
