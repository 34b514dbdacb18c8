def E(id, layer, kind, lang, text, must, **kw):
    d = {"id": id, "layer": layer, "kind": kind, "lang": lang, "text": text, "must": must}
    for k in ("chosen", "over", "why", "supersedes"):
        if k in kw:
            d[k] = kw.pop(k)
    assert not kw, kw
    return d


def A(must, note):
    return {"must": must, "note": note}


def gold(session, project, order, language, expected, acceptable, forbidden, secrets):
    return {"session": session, "project": project, "order": order, "language": language,
            "expected": expected, "acceptable": acceptable, "forbidden": forbidden, "secrets": secrets}
