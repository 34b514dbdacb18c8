"""The real embedding model (the packaged MiniLM, offline): a single query goes straight through
the network (traced with TorchScript) instead of encode(); the vectors must be the very same."""

from __future__ import annotations

import numpy as np

from memory.embed import PACKAGED_MODEL, SentenceTransformerEmbedder, _direct_path


def test_a_query_embedded_directly_equals_the_same_text_through_encode() -> None:
    embedder = SentenceTransformerEmbedder(PACKAGED_MODEL, threads=1)
    model = embedder.wait()
    tokenizer, network = _direct_path(model)  # the packaged model takes the direct path ...
    assert type(network).__name__ == "RecursiveScriptModule"  # ... through the traced network
    texts = [
        "How should errors be wrapped in Go?",
        "数据库备份在哪里",
        "x",
        "deploy " * 400,  # truncated
        "MAPLE 用 sqlite-vec 做向量检索",
    ]
    for text in texts:
        one = embedder.embed_query(text)
        assert one.shape == (384,) and abs(float(np.linalg.norm(one)) - 1) < 1e-5
        assert np.allclose(one, embedder.embed([text])[0], atol=1e-6), text
