"""A team database's URL is a URL everywhere: never a path, never in Claude Code's settings with
its password, never printed or logged with it; a URL MAPLE cannot use is a clean error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import config as config_mod
from memory.app.commands import home_env, hook_command, server_command, team_url_left_out
from memory.cli.program import main
from memory.errors import ConfigError

SECRET = "alicepw"
URL = f"postgresql://alice:{SECRET}@/maple?host=/tmp/sock"


def write_config(home: Path, **values: object) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(values), encoding="utf-8")


def test_a_url_from_config_json_goes_into_no_setting_claude_code_gets(home):
    write_config(home, database=URL)
    config = config_mod.load(home=home)
    env = home_env(config)
    assert env == {"MAPLE_HOME": str(home)}  # config.json in the home says the rest
    text = hook_command(config, "stop") + json.dumps(server_command(config))
    assert SECRET not in text and "postgresql" not in text
    assert not team_url_left_out(config)


def test_client_config_prints_no_password_and_no_path_made_of_the_url(home, capsys):
    write_config(home, database=URL)
    assert main(["client-config", "claude-desktop"]) == 0
    out, err = capsys.readouterr()
    assert SECRET not in out + err and "postgresql:" not in out + err


def test_a_url_with_a_password_from_the_environment_is_left_out_and_install_says_where_to_put_it(home, capsys):
    config = config_mod.load(home=home, env={"MAPLE_HOME": str(home), "MAPLE_DATABASE_URL": URL})
    assert "MAPLE_DATABASE_URL" not in home_env(config) and "MAPLE_DB" not in home_env(config)
    assert team_url_left_out(config)
    plain = config_mod.load(home=home, env={"MAPLE_DATABASE_URL": "postgresql://alice@db.example/maple"})
    assert home_env(plain)["MAPLE_DATABASE_URL"] == "postgresql://alice@db.example/maple"
    assert not team_url_left_out(plain)


def test_where_names_the_url_without_its_password_and_a_file_by_its_path(home):
    config = config_mod.load(home=home, database=URL)
    assert config.where == "postgresql://alice@/maple?host=%2Ftmp%2Fsock"
    query = config_mod.load(home=home, database="postgresql://db.example/maple?user=bob&password=bobpw")
    assert "bobpw" not in query.where and "user=bob" in query.where
    assert config_mod.load(home=home).where == str(home / "memory.db")


@pytest.mark.parametrize("url", [f"postgresq://alice:{SECRET}@db/maple", f"mysql://alice:{SECRET}@db/maple"])
def test_a_url_of_another_scheme_is_an_error_naming_the_accepted_forms(home, url):
    with pytest.raises(ConfigError) as e:
        config_mod.load(home=home, database=url)
    assert "postgresql://" in str(e.value) and "file path" in str(e.value) and SECRET not in str(e.value)


@pytest.mark.parametrize("url", [f"postgresql://alice:{SECRET}@[::1", f"postgresql://alice:{SECRET}@db:99999/maple"])
def test_a_malformed_url_is_a_clean_error_without_its_password(home, url, capsys):
    write_config(home, database=url)
    assert main(["stats"]) == 2
    err = capsys.readouterr().err
    assert "is not a valid URL" in err and SECRET not in err and "Traceback" not in err


def test_no_folder_named_after_the_url_appears_where_a_command_runs(home, tmp_path, monkeypatch, capsys):
    write_config(home, database=URL)
    monkeypatch.chdir(tmp_path)
    main(["client-config", "cursor"])
    capsys.readouterr()
    assert not [p for p in tmp_path.rglob("*") if "postgres" in p.name]


def test_stats_on_a_team_database_names_its_url_without_the_password(home, pg_url, pg_role, capsys):
    from memory.embed import HashEmbedder
    from memory.store import Store

    Store.open(config_mod.load(home=home / "owner", env={}, database=pg_url), HashEmbedder(64)).close()
    bob = pg_role("bob")
    write_config(home, database=bob.url, embedding_model="hash-64")
    assert main(["stats", "--json"]) == 0
    database = json.loads(capsys.readouterr().out)["database"]
    password = bob.url.split("@")[0].rsplit(":", 1)[1]
    assert database.startswith(f"postgresql://{bob.name}@") and password not in database
