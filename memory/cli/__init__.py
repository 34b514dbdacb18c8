"""The command line for people (`maple-memory`): one module per group of commands."""

from memory.cli.program import main

__all__ = ["main"]
