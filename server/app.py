"""The MAPLE stdio MCP server: `build_server(config)` makes it, `serve(config)` runs it on stdio.

Start-up order matters for the client's connection timeout: server.launch answers the requests a
client sends to connect before this module (and the SDK) is even imported; the lifespan opens the
database (milliseconds), and only the first message after the handshake starts loading the
embedding model on a background thread (seconds: torch and sentence-transformers). Nothing heavy
is imported by this module.
"""

from __future__ import annotations

import inspect
import logging
import os
import shlex
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.stdio import stdio_server
from pydantic import ValidationError

from memory import embed, remote
from memory.app import client
from memory.app.commands import server_command
from memory.app.worker import HANDLERS
from memory.config import Config
from memory.embed import Embedder
from memory.errors import MapleError
from memory.scope import project_scope
from memory.store import Store, jobs, stored_model
from server import resources, tools, tools_graph, tools_memory, tools_wisdom
from server.info import INSTRUCTIONS, NAME, VERSION
from server.state import AppState, ModelGate

log = logging.getLogger("maple.server")
startup = logging.getLogger("maple.server.startup")  # also on a terminal's stderr (server.launch)
WARM_WAIT = 10.0  # seconds a closing server waits for its in-memory indexes to finish building


def build_server(config: Config, embedder: Embedder | None = None, project: str | None = None) -> MCPServer[AppState]:
    """A MAPLE MCP server for `config`.

    `embedder` defaults to the configured model (loaded lazily, after the handshake); tests pass a
    HashEmbedder. `project` defaults to the scope of $CLAUDE_PROJECT_DIR or the working directory,
    read when the server starts, not here.
    """

    @asynccontextmanager
    async def lifespan(server: MCPServer[AppState]) -> AsyncIterator[AppState]:
        scope = project or project_scope()
        startup.info("register with Claude Code: %s", registration_command(config))
        if embedder is None and client.engine_enabled(config):
            async with _through_the_engine(config, project) as state:
                yield state
            return
        gate = ModelGate(embedder if embedder is not None else embed.from_config(config, stored_model(config)))
        store: Store | None = None
        try:
            store = Store.open(config, gate)  # fast: migrations and a few pragmas, no model
        except MapleError as e:
            # Keep serving: every tool then returns this message, which the user sees in the
            # conversation; a server that dies at start only shows up as "failed" in /mcp.
            log.error("cannot open the database %s: %s", config.where, e)
            error = str(e)
        if store is None:
            yield AppState(db=None, project=scope, model=gate, error=error)
            return
        state = AppState(db=store, project=scope, model=gate)
        worker = None
        if config.worker_enabled:
            # The sleep-time worker: its own connection and thread; it drains the job queue only
            # after worker_idle_seconds without a request, and gives way when one arrives.
            worker = jobs.Worker(
                open_store=lambda: Store.open(config, gate),
                activity=state.activity,
                handlers=HANDLERS,
                idle_seconds=config.worker_idle_seconds,
            )
            worker.start()
            store.defer_checkpoints()  # the worker checkpoints when idle; searches never wait for one
        try:
            count = store.count([scope, "global"])
            startup.info("database %s (%d memories in this project and global)", store.where, count)
            startup.info("project scope %s", scope)
            startup.info("embedding model %s (loads in the background after the handshake)", gate.name)
            yield state
        finally:
            state.closing.set()
            if worker is not None:
                worker.stop()
            if state.backfill is not None:
                state.backfill.stop()
            # The indexes may still be building on the store's connection: closing it under them
            # crashed the process (a segmentation fault in CI). Wait for them; should they take
            # longer, the connection closes with the process.
            if state.warming is not None:
                state.warming.join(WARM_WAIT)
            if state.warming is None or not state.warming.is_alive():
                store.close()
            else:
                log.warning("closing while the in-memory indexes are still building: the database closes at exit")

    server: MCPServer[AppState] = MapleServer(
        NAME,
        instructions=INSTRUCTIONS,
        version=VERSION,
        lifespan=lifespan,
        middleware=[_track_activity, _load_model_after_handshake],
    )
    tools.register(server)
    for more in (tools_memory, tools_graph, tools_wisdom, resources):
        more.register(server)
    # The SDK takes a tool's description from its docstring verbatim, indentation included.
    for tool in server._tool_manager.list_tools():
        tool.description = inspect.cleandoc(tool.description)
        # An argument the tool does not have ("limt") is refused, naming the ones it has, rather
        # than ignored: a misspelt limit or scope would otherwise quietly do something else.
        model = tool.fn_metadata.arg_model
        model.model_config["extra"] = "forbid"
        model.model_rebuild(force=True)
        tools.ARGUMENTS[tool.name] = list(model.model_fields)
    return server


class MapleServer(MCPServer[AppState]):
    """The SDK's server, with arguments that fail validation reported in MAPLE's words (which
    argument, what it must be, what to do) instead of pydantic's text and documentation links."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError) and not isinstance(e, UnexpectedToolError):
                raise ToolError(tools.invalid_arguments(name, cause)) from cause
            raise


async def _track_activity(ctx: Any, call_next: Any) -> Any:
    """Count requests in flight, so the sleep-time worker never competes with a tool call."""
    activity = getattr(ctx.lifespan_context, "activity", None)
    if activity is None:
        return await call_next(ctx)
    activity.begin()
    try:
        return await call_next(ctx)
    finally:
        activity.end()


async def _load_model_after_handshake(ctx: Any, call_next: Any) -> Any:
    """Start loading the model, and building the in-memory indexes, on the first message after
    `initialize`.

    Loading imports torch on a thread, which competes for the GIL; starting it only after the
    `initialize` answer has gone out keeps the handshake fast. Under the handshake-less 2026
    protocol the first request starts it instead. `start()` is idempotent.
    """
    result = await call_next(ctx)
    state: AppState = ctx.lifespan_context
    if ctx.method != "initialize" and state.db is not None:
        state.model.start()
        state.warm()
    return result


@asynccontextmanager
async def _through_the_engine(config: Config, project: str | None) -> AsyncIterator[AppState]:
    """The server as a thin client of the warm engine (memory.remote): the engine holds the model,
    the indexes and the job queue for every session; this process answers the protocol. The
    engine is started now, so that it is warm by the first tool call; until it answers, calls are
    done here without vectors (and say so)."""
    where = project or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    error = None
    try:
        Store.open(config, None).close()  # the database exists (and is migrated) before the engine starts
        remote.start(config.home, config.db_path)
    except MapleError as e:
        log.error("cannot open the database %s: %s", config.where, e)
        error = str(e)
    # No waiting for the engine to come up: until it answers, calls are done here (keyword-only,
    # saying the model is loading), which is all an engine that is still loading could do too.
    connection = client.connect(config, where)
    startup.info("project %s; the engine for %s answers this server", project_scope(where), config.where)
    try:
        yield AppState(
            db=None,
            project=project_scope(where),
            model=ModelGate(None),
            error=error,
            connection=None if error else connection,
        )
    finally:
        connection.close()


def validate_message(line: str) -> Any:
    """The SDK's own parsing of one line from the client (raises what it cannot take)."""
    import mcp_types

    return mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)


def registration_command(config: Config) -> str:
    """The exact `claude mcp add` line that registers this installation for every project."""
    command, args, env = server_command(config)
    pairs = [x for k, v in env.items() for x in ("--env", f"{k}={v}")]
    # The server name goes before --env: `--env` takes several pairs and would swallow it.
    return shlex.join(["claude", "mcp", "add", "--scope", "user", "maple", *pairs, "--", command, *args])


async def _run_until_client_goes(
    server: MCPServer[AppState], streams: tuple[Any, Any] | None = None, parent: int | None = None
) -> None:
    """Serve stdio (or the given text streams); also exit if the client process disappears
    without closing our stdin."""
    parent = os.getppid() if parent is None else parent
    async with anyio.create_task_group() as tg:

        async def watch_parent() -> None:
            while os.getppid() == parent:
                await anyio.sleep(2)
            log.warning("client process %d went away; exiting", parent)
            # Not a cancel: the SDK reads stdin on a worker thread that a cancel cannot interrupt
            # while another process still holds the pipe open. SQLite rolls back any write cut
            # short here, and no client is left to answer.
            os._exit(0)

        tg.start_soon(watch_parent)
        if streams is None:
            await server.run_stdio_async()
        else:
            # What run_stdio_async does, on streams server.launch prepared (it has answered the
            # connect requests already and replays them). The low-level server is the SDK's
            # documented way to run on custom streams; MCPServer keeps it as _lowlevel_server.
            async with stdio_server(stdin=streams[0], stdout=streams[1]) as (read, write):
                low = server._lowlevel_server
                await low.run(read, write, low.create_initialization_options())
        tg.cancel_scope.cancel()


def run_stdio(config: Config, embedder: Embedder | None = None) -> None:
    """Serve on the process's stdin/stdout through the SDK's own transport."""
    anyio.run(_run_until_client_goes, build_server(config, embedder))


def run_on(config: Config, embedder: Embedder | None, stdin: Any, stdout: Any, parent: int) -> None:
    """Serve on text streams (see server.launch), exiting when process `parent` goes away."""
    anyio.run(
        _run_until_client_goes,
        build_server(config, embedder),
        (anyio.wrap_file(stdin), anyio.wrap_file(stdout)),
        parent,
    )
