"""The web page's server: a Starlette app over the application API, bound to 127.0.0.1.

Safe by default, because the page can change and delete memories:
- it listens on 127.0.0.1 only, and answers only requests whose Host is that address (or
  localhost) at its own port, so a web site cannot reach it by rebinding a DNS name;
- every request carries the random token of the address `maple-memory ui` opened: in the URL of
  the first page (which then sets it as a SameSite=Strict, HttpOnly cookie for the page's own
  requests) or in the X-Maple-Token header; a request without it is refused (403);
- every change is a POST that must carry the token in the header (a cross-site form cannot set
  one) and must come from the page itself (Origin this server, Sec-Fetch-Site same-origin when
  the browser sends them); anything else is refused (403);
- the page loads nothing from elsewhere (a Content-Security-Policy of 'self' says so), writes
  memory text with textContent only, and sends no Referer (the token is in its URL).

Reads and writes are calls to `memory.app.Memories` (the same scope rule and write path as the
CLI and the MCP server); the JSON the page gets is what those calls return.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memory.errors import InvalidInput, MapleError, NotFound

log = logging.getLogger("maple.ui")

STATIC = Path(__file__).parent / "static"
HEADER = "x-maple-token"
COOKIE = "maple_ui"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
REFUSED_TOKEN = (
    "this page needs the address `maple-memory ui` printed (it carries a token); open that address, or "
    "run `maple-memory ui` again for a new one"
)


def new_token() -> str:
    return secrets.token_urlsafe(24)


# -- the guard ------------------------------------------------------------------------------------


class Guard:
    """ASGI middleware: the Host, token and same-origin checks described above, and the headers
    every answer carries."""

    def __init__(self, app: Any, token: str, port: int):
        self.app, self.token, self.port = app, token, port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    def _refusal(self, scope: dict) -> str | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host") not in self.hosts:
            return "this server answers only at the address it printed (127.0.0.1)"
        given = headers.get(HEADER) or _cookie(headers.get("cookie", ""), COOKIE)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("t", [""])[0]
        if scope["method"] not in ("GET", "HEAD"):
            # a change: the header token only (a cookie is sent cross-site too), from this page only
            if not _same(headers.get(HEADER), self.token):
                return "a change needs the page's token in the X-Maple-Token header; reload the page"
            if headers.get("origin") is not None and headers["origin"] not in self.origins:
                return "a change from another site is refused"
            if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
                return "a change from another site is refused"
            return None
        if not (_same(given, self.token) or _same(query, self.token)):
            return REFUSED_TOKEN
        return None

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is not None:
            await _with_headers(JSONResponse({"error": refusal}, status_code=403))(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + _SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, send_with_headers)


_SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def _with_headers(response: Response) -> Response:
    for k, v in _SECURITY_HEADERS:
        response.headers[k.decode()] = v.decode()
    return response


def _same(given: str | None, token: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode(), token.encode())


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        k, _, v = part.strip().partition("=")
        if k == name:
            return v
    return None


# -- the app --------------------------------------------------------------------------------------


def _flag(value: str | None) -> bool | None:
    return None if value in (None, "", "any") else value in ("1", "true", "yes")


def _int(value: Any, name: str, default: int | None = None) -> int | None:
    if value in (None, ""):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidInput(f"{name} must be a whole number, got {value!r}") from None


def build(
    memories: Any,
    *,
    token: str,
    port: int,
    doctor: Callable[[], dict[str, Any]] | None = None,
    engine: Callable[[], dict[str, Any]] | None = None,
    label: str = "",
) -> Any:
    """The ASGI app for `memories` (a Memories, or anything with its methods), guarded."""
    lock = threading.Lock()  # doctor runs one at a time: it opens the database and probes the model
    index = (STATIC / "index.html").read_text(encoding="utf-8")

    def page(request: Request) -> Response:
        html = (
            index.replace("__TOKEN__", token)
            .replace("__LABEL__", _attr(label))
            .replace("__PROJECT__", _attr(getattr(memories, "project", "")))
        )
        response = Response(html, media_type="text/html; charset=utf-8")
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", path="/")
        return response

    def api(handler: Callable[..., Any]) -> Callable[[Request], Any]:
        """An endpoint: the JSON body read first for a POST, the call on a worker thread (the app's
        calls block on the store), errors as JSON with the status that fits."""

        async def endpoint(request: Request) -> Response:
            try:
                if request.method == "POST":
                    data = await _json_body(request)
                    result = await run_in_threadpool(handler, request, data)
                else:
                    result = await run_in_threadpool(handler, request)
                return JSONResponse(result)
            except NotFound as e:
                return JSONResponse({"error": str(e)}, status_code=404)
            except InvalidInput as e:
                return JSONResponse({"error": str(e)}, status_code=400)
            except MapleError as e:
                return JSONResponse({"error": str(e)}, status_code=503)

        return endpoint

    def memory_id(request: Request) -> int:
        return _int(request.path_params["id"], "memory id")  # type: ignore[return-value]

    def seen_from(scope: str | None) -> tuple[Any, str]:
        """The app and scope word for a page's scope filter: all, project, global, or (with
        --all-projects) one other project's stored scope, seen as that project."""
        scope = scope or "all"
        if scope in ("all", "project", "global"):
            return memories, scope
        return memories.within(scope), "project"

    def listing(r: Request) -> Any:
        q = r.query_params
        app, scope = seen_from(q.get("scope"))
        return app.list(
            scope=scope,
            layer=q.get("layer") or None,
            category=q.get("category") or None,
            subject=q.get("subject") or None,
            tag=q.get("tag") or None,
            pinned=_flag(q.get("pinned")),
            status=q.get("status") or "current",
            sort=q.get("sort") or "newest",
            limit=_int(q.get("limit"), "limit", 50),
            cursor=q.get("cursor") or None,
        )

    def search(r: Request) -> Any:
        q = r.query_params
        # A person browsing is not the assistant recalling: leave activation (decay input) alone.
        app, scope = seen_from(q.get("scope"))
        return app.search(
            q.get("q", ""),
            limit=_int(q.get("limit"), "limit", 20),
            scope=scope,
            layer=q.get("layer") or None,
            category=q.get("category") or None,
            since=q.get("since") or None,
            until=q.get("until") or None,
            record=False,
        )

    def graph(r: Request) -> Any:
        q = r.query_params
        entity = q.get("entity") or None
        try:
            return memories.graph(entity, hops=_int(q.get("hops"), "hops", 2), max_nodes=_int(q.get("max"), "max", 60))
        except NotFound as e:
            if entity is None:  # an empty graph is a state, not an error
                return {"nodes": [], "edges": [], "center": None, "empty": str(e)}
            raise

    def health(r: Request) -> Any:
        return {"stats": memories.stats(), "engine": engine() if engine else {}, "label": label}

    def run_doctor(r: Request) -> Any:
        if doctor is None:
            return {"ok": None, "checks": []}
        with lock:
            return doctor()

    def edit(r: Request, d: dict[str, Any]) -> Any:
        if "content" in d and not str(d["content"] or "").strip():
            raise InvalidInput(
                "a memory's text cannot be empty; write what it should say, or forget the memory instead"
            )
        fields = {k: d[k] for k in ("content", "layer", "category", "subject", "tags") if d.get(k) not in (None, "")}
        if "importance" in d and d["importance"] not in (None, ""):
            fields["importance"] = _int(d["importance"], "importance")
        return memories.update(memory_id(r), mode=d.get("mode") or "edit", reason="edited in the web page", **fields)

    def pin(r: Request, d: dict[str, Any]) -> Any:
        return memories.pin(memory_id(r), bool(d.get("pinned", True)))

    def forget(r: Request, d: dict[str, Any]) -> Any:
        return memories.forget(memory_id(r))

    def restore(r: Request, d: dict[str, Any]) -> Any:
        return memories.restore(memory_id(r))

    def delete(r: Request, d: dict[str, Any]) -> Any:
        mid = memory_id(r)
        if _int(d.get("confirm"), "confirm") != mid:
            raise InvalidInput(f"deleting for good needs confirm: {mid} (the memory's id), as the page asks")
        return memories.forget(mid, permanent=True)

    routes = [
        Route("/", page),
        Route("/api/list", api(listing)),
        Route("/api/search", api(search)),
        Route("/api/memory/{id}", api(lambda r: memories.page(memory_id(r)))),
        Route("/api/memory/{id}/edit", api(edit), methods=["POST"]),
        Route("/api/memory/{id}/pin", api(pin), methods=["POST"]),
        Route("/api/memory/{id}/forget", api(forget), methods=["POST"]),
        Route("/api/memory/{id}/restore", api(restore), methods=["POST"]),
        Route("/api/memory/{id}/delete", api(delete), methods=["POST"]),
        Route("/api/sessions", api(lambda r: memories.sessions(limit=_int(r.query_params.get("limit"), "limit", 50)))),
        Route("/api/session/{sid}", api(lambda r: memories.session(r.path_params["sid"]))),
        Route("/api/graph", api(graph)),
        Route("/api/entity", api(lambda r: memories.entity(r.query_params.get("name", "")))),
        Route("/api/health", api(health)),
        Route("/api/doctor", api(run_doctor)),
        Route("/api/pulse", api(lambda r: memories.pulse())),
        Route("/api/scopes", api(lambda r: memories.scopes_present())),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Guard(Starlette(routes=routes), token, port)


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise InvalidInput("the request body must be a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidInput("the request body must be a JSON object")
    return data


def _attr(text: str) -> str:
    import html

    return html.escape(text, quote=True)


# -- running it -----------------------------------------------------------------------------------


def bind(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` 0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as e:
        sock.close()
        raise InvalidInput(f"cannot listen on 127.0.0.1:{port} ({e.strerror}); choose another --port, or 0") from e
    sock.listen(64)
    return sock


class Running:
    """The page's server on a thread of this process (the `ui` command waits on it; tests and the
    benchmark drive it). `url` carries the token."""

    def __init__(self, memories: Any, *, port: int = 0, token: str | None = None, **options: Any):
        import uvicorn

        self.sock = bind(port)
        self.port = self.sock.getsockname()[1]
        self.token = token or new_token()
        self.url = f"http://127.0.0.1:{self.port}/?t={self.token}"
        app = build(memories, token=self.token, port=self.port, **options)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self, timeout: float = 10.0) -> Running:
        self.thread.start()
        ready = threading.Event()

        def poll() -> None:
            while not self.server.started and self.thread.is_alive():
                threading.Event().wait(0.02)
            ready.set()

        threading.Thread(target=poll, daemon=True).start()
        ready.wait(timeout)
        if not self.server.started:
            raise MapleError("the web page's server did not start; see the messages above")
        return self

    def wait(self) -> None:
        """Until the server stops (Ctrl-C stops it)."""
        try:
            while self.thread.is_alive():
                self.thread.join(0.5)
        except KeyboardInterrupt:
            self.stop()
            raise

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()
