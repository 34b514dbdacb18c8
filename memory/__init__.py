"""MAPLE: long-term memory for coding assistants, in one local SQLite file.

Importing this package is cheap on purpose: hooks import parts of it on every prompt, so nothing
heavy (numpy, torch, jieba, mcp) is imported here or by the modules a hook uses.
"""

__version__ = "0.1.0"
