"""Every error MAPLE raises on purpose.

    MapleError
    ├── InvalidInput        a caller passed a bad value; the message says which and what is allowed
    ├── NotFound            no memory, entity or job with that id
    ├── ConfigError         config.json or an environment override is wrong; names the key
    └── StoreError          the database cannot be used as asked
        ├── EmbeddingMismatch   the database was built with another embedding model or dimension
        └── StoreUnavailable    missing, read-only, locked too long, corrupt or full

Messages are written for the person or model that has to act on them: they say what to do next.
"""


class MapleError(Exception):
    """Base of every error MAPLE raises on purpose."""


class InvalidInput(MapleError, ValueError):
    """A caller passed a value MAPLE cannot accept."""


def already_superseded(memory_id: int, successor: int) -> InvalidInput:
    """The one refusal to change a memory another replaced meanwhile, whichever check finds it (before
    the write, or inside it when two teammates replace it at once)."""
    return InvalidInput(
        f"memory {memory_id} was superseded by memory {successor}; update that one, or restore "
        f"memory {memory_id} first if it should not have been superseded"
    )


class NotFound(MapleError, LookupError):
    """No memory, entity or job with that id."""


class ConfigError(MapleError):
    """The configuration is wrong; the message names the key."""


class StoreError(MapleError):
    """The database cannot be used as asked."""


class EmbeddingMismatch(StoreError):
    """The database's vectors come from another model or dimension than the one configured."""


class StoreUnavailable(StoreError):
    """The database file is missing, read-only, locked too long, corrupt or on a full disk."""
