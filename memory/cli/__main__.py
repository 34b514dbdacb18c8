"""`python -m memory.cli`: the same as the `maple-memory` command."""

import sys

from memory.cli.program import main

sys.exit(main())
