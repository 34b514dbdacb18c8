#!/usr/bin/env python3
"""The file Claude Code runs for every MAPLE hook: `python /path/to/hooks/run.py EVENT`.

Run by path, not `python -m hooks`: with -m the session's working directory comes first on
sys.path, and a project with its own `hooks` package would shadow this one.
"""

import os
import sys

if __name__ == "__main__":
    # sys.path[0] is this folder; the folder above it holds the `hooks` and `memory` packages
    # (the checkout, or site-packages when installed).
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    from hooks.common import exit_if_late
    from hooks.main import main

    main()
    exit_if_late()
    sys.exit(0)
