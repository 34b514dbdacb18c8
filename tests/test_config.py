"""config.example.json documents every setting, key for key, and the loader enforces it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory import config
from memory.errors import ConfigError

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.json"


def example_pairs() -> list[tuple[str, object]]:
    """The example's top-level (key, value) pairs in file order, duplicates kept (a dict hides them)."""
    pairs = json.loads(EXAMPLE.read_text(encoding="utf-8"), object_pairs_hook=lambda p: p)
    # Objects arrive as lists of pairs; JSON arrays (list settings) stay lists.
    return [(k, dict(v) if isinstance(v, list) and all(isinstance(x, tuple) for x in v) else v) for k, v in pairs]


def example() -> dict:
    return json.loads(EXAMPLE.read_text(encoding="utf-8"))


def settings(d: dict) -> dict:
    return {k: v for k, v in d.items() if not k.startswith("//")}


def write_config(home: Path, values: dict) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(values), encoding="utf-8")


# -- the example file ----------------------------------------------------------------------------


def test_example_holds_every_config_key_with_its_exact_default():
    ex = example()
    for key, default in config.documented_defaults().items():
        assert key in ex, f"config.example.json lacks {key!r}"
        assert ex[key] == default and type(ex[key]) is type(default), key


def test_every_setting_in_the_example_is_a_config_key():
    unknown = set(settings(example())) - set(config.documented_defaults())
    assert not unknown


def test_every_key_is_documented_by_a_comment_right_before_it():
    pairs = example_pairs()
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "a key appears twice in config.example.json"
    for i, (key, _) in enumerate(pairs):
        if key.startswith("//"):
            continue
        assert i > 0 and pairs[i - 1][0] == f"// {key}", f"{key!r} is not preceded by its '// {key}' doc"
        doc = pairs[i - 1][1]
        assert isinstance(doc, str) and len(doc) >= 30, f"the doc of {key!r} is too thin"


def test_every_doc_comment_names_a_real_key():
    ex = example()
    for key in ex:
        if key.startswith("// "):
            assert key[3:] in ex and key[3:] in config.documented_defaults(), f"stale doc {key!r}"


def test_home_is_not_a_setting_of_the_file():
    assert "home" not in example()


def test_the_example_loads_as_a_real_config_file(tmp_path):
    shutil.copy(EXAMPLE, tmp_path / "config.json")
    loaded = config.load(home=tmp_path, env={})
    assert loaded == config.Config(home=tmp_path)
    assert loaded.db_path == tmp_path / "memory.db"


# -- the loader ----------------------------------------------------------------------------------


def test_settings_from_the_file_are_used(tmp_path):
    write_config(tmp_path, {"search_rrf_k": 30, "search_weights": {"vector": 1.5}, "log_level": "DEBUG"})
    c = config.load(home=tmp_path, env={})
    assert c.search_rrf_k == 30
    assert c.search_weights["vector"] == 1.5
    assert c.search_weights["bm25"] == config.Config().search_weights["bm25"]  # others keep their default
    assert c.log_level == "DEBUG"


def test_an_unknown_key_is_rejected_naming_it(tmp_path):
    write_config(tmp_path, {"search_rrf": 30})
    with pytest.raises(ConfigError, match="'search_rrf'"):
        config.load(home=tmp_path, env={})


@pytest.mark.parametrize(
    "key, value",
    [
        ("search_rrf_k", "sixty"),
        ("embedding_threads", 2.5),
        ("embedding_threads", True),
        ("log_level", 3),
        ("search_weights", [1, 2]),
        ("known_entities", "postgres"),
        ("search_pool_fraction", "a lot"),
    ],
)
def test_a_wrong_type_is_rejected_naming_the_key(tmp_path, key, value):
    write_config(tmp_path, {key: value})
    with pytest.raises(ConfigError, match=f"'{key}'"):
        config.load(home=tmp_path, env={})


@pytest.mark.parametrize(
    "key, value",
    [
        ("search_fusion", "average"),
        ("embedding_batch_size", 0),
        ("busy_timeout_ms", -5),
        ("search_importance_floor", 7),
        ("log_level", "LOUD"),
        ("search_pool_fraction", 1.5),
        ("search_weights", {"bm25": -1}),
        ("search_weights", {"keywords": 1.0}),
        ("known_entities", {"PostgreSQL": "pg"}),
    ],
)
def test_a_bad_value_is_rejected_naming_the_key(tmp_path, key, value):
    write_config(tmp_path, {key: value})
    with pytest.raises(ConfigError, match=f"'{key}'"):
        config.load(home=tmp_path, env={})


def test_min_pool_above_max_pool_is_rejected(tmp_path):
    write_config(tmp_path, {"search_min_pool": 600})
    with pytest.raises(ConfigError, match="search_min_pool"):
        config.load(home=tmp_path, env={})


def test_a_config_file_that_is_not_json_says_where_it_is(tmp_path):
    (tmp_path / "config.json").write_text("{database: nope}", encoding="utf-8")
    with pytest.raises(ConfigError, match="config.json is not valid JSON"):
        config.load(home=tmp_path, env={})


def test_a_config_file_that_is_not_an_object_is_rejected(tmp_path):
    (tmp_path / "config.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match="JSON object"):
        config.load(home=tmp_path, env={})


# -- environment overrides -------------------------------------------------------------------------


def test_maple_home_moves_all_state(tmp_path):
    c = config.load(env={"MAPLE_HOME": str(tmp_path)})
    assert c.home == tmp_path
    assert c.db_path == tmp_path / "memory.db"


def test_maple_home_reads_the_config_file_there(tmp_path):
    write_config(tmp_path, {"search_rrf_k": 7})
    assert config.load(env={"MAPLE_HOME": str(tmp_path)}).search_rrf_k == 7


def test_maple_db_overrides_the_file_and_the_default(tmp_path):
    write_config(tmp_path, {"database": str(tmp_path / "from-file.db")})
    c = config.load(home=tmp_path, env={"MAPLE_DB": str(tmp_path / "elsewhere.db")})
    assert c.db_path == tmp_path / "elsewhere.db"


def test_maple_model_overrides_the_embedding_model(tmp_path):
    write_config(tmp_path, {"embedding_model": "all-MiniLM-L6-v2"})
    assert config.load(home=tmp_path, env={"MAPLE_MODEL": "hash-64"}).embedding_model == "hash-64"


def test_maple_log_level_overrides_the_log_level(tmp_path):
    assert config.load(home=tmp_path, env={"MAPLE_LOG_LEVEL": "DEBUG"}).log_level == "DEBUG"


def test_a_bad_environment_override_is_rejected_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match="'log_level'"):
        config.load(home=tmp_path, env={"MAPLE_LOG_LEVEL": "CHATTY"})


def test_an_empty_environment_variable_is_ignored(tmp_path):
    assert config.load(home=tmp_path, env={"MAPLE_MODEL": ""}).embedding_model == "auto"


def test_keyword_overrides_win_over_the_environment(tmp_path):
    c = config.load(home=tmp_path, env={"MAPLE_MODEL": "hash-64"}, embedding_model="hash-32")
    assert c.embedding_model == "hash-32"


def test_the_config_is_frozen(tmp_path):
    c = config.load(home=tmp_path, env={})
    with pytest.raises(AttributeError):
        c.log_level = "DEBUG"  # type: ignore[misc]


def test_every_setting_is_read_by_some_code_outside_the_config_module() -> None:
    import dataclasses
    import re

    root = Path(__file__).resolve().parent.parent
    code = "".join(
        p.read_text(encoding="utf-8")
        for top in ("memory", "server", "hooks")
        for p in (root / top).rglob("*.py")
        if p != root / "memory" / "config.py"
    )
    unread = [
        f.name for f in dataclasses.fields(config.Config) if f.name != "home" and not re.search(rf"\b{f.name}\b", code)
    ]
    assert unread == []


def test_a_retired_setting_in_an_old_config_file_is_ignored_with_a_warning(tmp_path, caplog) -> None:
    (tmp_path / "config.json").write_text('{"search_rerank_model": "cross-encoder/ms-marco"}')
    with caplog.at_level("WARNING", logger="maple.config"):
        loaded = config.load(home=tmp_path, env={})
    assert not hasattr(loaded, "search_rerank_model")
    assert "no longer used" in caplog.text
