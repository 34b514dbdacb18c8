#!/usr/bin/env python3
"""Rebuild every dev2 transcript + gold file: python3 _gen/build.py && python3 validate.py"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lib  # noqa: E402

lib.build(["pa_pgtide", "pb_dw_acl", "pc_llm_gateway"])
