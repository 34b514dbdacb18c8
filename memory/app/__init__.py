"""The application API under the CLI, the MCP server and the hooks: `Memories(store, project)`
(memory/app/memories.py), plain data in and out. Only those three adapters import this package."""

from memory.app.memories import Memories

__all__ = ["Memories"]
