"""`maple-memory ui`: a local web page to see and tend the memory (memory.cli.ui.web).

The page is an adapter like the CLI and the MCP server: every read and write is a call to the
application API (memory.app.Memories) on the command's project. Starlette and uvicorn come with
the MCP SDK; the page's HTML, CSS and JavaScript are files in `static/`, served as they are (no
build step, nothing fetched from the network).
"""
