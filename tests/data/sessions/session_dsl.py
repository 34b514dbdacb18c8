"""The constructors the session files are written in (see build_sessions.py)."""

# -- the little language of a session -----------------------------------------------------------

def U(text, **kw): return ("user", text, kw)                  # a human prompt
def A(text): return ("assistant", text)                       # assistant prose
def T(text): return ("thinking", text)                        # a thinking block
def CTX(text): return ("context", text)                       # our injected memories (attachment)
def TOOL(name, inp, out, error=False, code=None): return ("tool", name, inp, out, error, code)
def CMD(name, stdout=""): return ("command", name, stdout)    # a slash command + its output
def CAVEAT(): return ("caveat",)
def COMPACT(summary): return ("compact", summary)
def TASK(text): return ("task", text)
def SIDE(prompt, answer): return ("side", prompt, answer)
def INTERRUPT(): return ("interrupt",)
