"""Validate the extraction-eval dev18 split (stdlib only): the dev split's checks (../dev/validate.py),
run on the files next to this one.

    python3 validate.py            # checks every NAME.jsonl / NAME.gold.json next to this file
    python3 validate.py -q         # only errors + summary

One addition: the memory kind "document" (a pasted runbook / design note stored as one memory) is
accepted on top of the dev split's kinds.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("dev_validate", os.path.join(HERE, "..", "dev", "validate.py"))
checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checks)
checks.HERE = HERE  # its `main` reads the folder it checks from here
checks.KINDS.add("document")

if __name__ == "__main__":
    sys.exit(checks.main(quiet="-q" in sys.argv))
