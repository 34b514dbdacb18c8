#!/usr/bin/env python3
"""Rebuild every dev5 transcript + gold file: python3 _gen/build.py && python3 validate.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "..", "dev2", "_gen"))  # the dev2 split's builder (lib.py)...
import lib  # noqa: E402

lib.OUT = os.path.dirname(HERE)  # ...writing this split's files here
lib.build(["pm_chongdian_ops", "pn_tixdesk", "po_channel_sync"])
