#!/usr/bin/env python3
"""Rebuild every dev6 transcript + gold file: python3 _gen/build.py && python3 validate.py

Reuses dev2's stdlib transcript library (../../dev2/_gen/lib.py) with its output folder pointed here.
Deterministic: uuids are uuid5 over (session name, counter), timestamps advance by fixed steps.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "dev2", "_gen"))
import lib  # noqa: E402

lib.OUT = os.path.dirname(HERE)  # write into dev6/, not dev2/
lib.build(["pr_harborline", "ps_tingche_cloud", "pt_quanzi_feed"])
