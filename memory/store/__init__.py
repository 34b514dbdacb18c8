"""The store: every memory, its keyword and vector index rows, entities, relations, versions,
decisions and the job queue, in one database. The one write path (`Store`) and the records it
reads and writes; the agents (retrieval, extraction, maintenance) build on it and it builds on
none of them."""

from memory.store.memories import Store, stored_model
from memory.store.records import (
    GLOBAL,
    LAYERS,
    Memory,
    NewMemory,
    content_hash,
    iso,
    parse_time,
)

__all__ = ["GLOBAL", "LAYERS", "Memory", "NewMemory", "Store", "content_hash", "stored_model", "iso", "parse_time"]
