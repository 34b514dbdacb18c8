"""Build the trial37 transcripts and gold files: python3 _gen/build.py (from the split folder)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
OUT = os.path.dirname(HERE)

import pa_curbwise  # noqa: E402
import pb_xunhuanji  # noqa: E402
from lib import write_gold  # noqa: E402

for mod in (pa_curbwise, pb_xunhuanji):
    for build, gold in mod.SESSIONS:
        s = build()
        s.dump(os.path.join(OUT, s.name + ".jsonl"))
        write_gold(os.path.join(OUT, s.name + ".gold.json"), gold)
        print(s.name, len(s.lines))
