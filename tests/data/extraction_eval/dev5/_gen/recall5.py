"""Small dev5 helpers on top of dev2's lib: recall blocks whose memories are registered as `forbidden`.

Every recalled item is (id, layer, age, text, forbidden_substring); the substring must occur in the text.
"""
from lib import reminder


def _check(items, k):
    for it in items:
        assert it[k] in it[k - 1], it


def attach(s, items, event="UserPromptSubmit"):
    """hook_additional_context attachment (UserPromptSubmit / SessionStart)."""
    _check(items, 4)
    s.recall([it[:4] for it in items], event)
    s.forbid(*[it[4] for it in items])


def remind(s, items):
    """`<system-reminder>` text carrying a <maple-memory> block, to put into a user prompt."""
    _check(items, 4)
    s.forbid(*[it[4] for it in items])
    return reminder([it[:4] for it in items])


def search(s, query, items):
    """mcp__maple__memory_search call; items are (id, layer, content, forbidden_substring)."""
    _check(items, 3)
    s.maple_search(query, [it[:3] for it in items])
    s.forbid(*[it[3] for it in items])
