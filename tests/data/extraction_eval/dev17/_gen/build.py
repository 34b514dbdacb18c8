"""Rebuild the trial-36 transcripts and gold files: python3 _gen/build.py (from the split folder)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pa_xingbo_live  # noqa: E402
import pb_tallyshift  # noqa: E402

OUT = os.path.dirname(HERE)

if __name__ == "__main__":
    pa_xingbo_live.build(OUT)
    pb_tallyshift.build(OUT)
    print("built into", OUT)
