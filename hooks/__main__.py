"""`python -m hooks EVENT` (prefer `python hooks/run.py EVENT`; see run.py)."""

import sys

from hooks.main import main

main()
sys.exit(0)
