"""The README documents every tool (with an example that is valid for it) and every CLI command."""

from __future__ import annotations

import jsonschema
from mcp import Client
from readme_tables import cli_commands, tool_examples

from memory.cli import program as cli_main
from memory.embed import HashEmbedder
from server.app import build_server


async def test_every_server_tool_is_in_the_readme_with_an_example_its_schema_accepts(config):
    async with Client(build_server(config, HashEmbedder(64), project="/p"), mode="legacy") as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    examples = tool_examples()
    assert sorted(tools) == sorted(examples), "README's MCP tools table and tools/list differ"
    for name, args in examples.items():
        jsonschema.validate(args, tools[name].input_schema)  # a wrong type or a missing argument fails here
        assert set(args) <= set(tools[name].input_schema["properties"]), f"{name}: unknown argument in the example"


def test_every_cli_command_is_in_the_readme():
    parser = cli_main.build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    documented = cli_commands()
    assert len(documented) == len(set(documented)), "a command is documented twice"
    assert sorted(commands) == sorted(documented)
