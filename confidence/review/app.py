"""The review web app (Starlette): one field at a time, keyboard first, decisions to the log.

Routes: ``GET /`` the next field for this browser (a lease; a reload shows the same field),
``POST /decide`` a decision as JSON ``{"lease", "action", "value"}``, ``GET /page?doc=&n=`` a page
picture, ``GET /documents/<path>`` an original file under the documents folder,
``GET /progress`` counts per document, ``GET /static/review.{js,css}``.

Security (document text is attacker-controlled, the app may be reachable by others):

- every value, reason and name goes through Jinja2 with autoescape; JavaScript reads values only
  from ``data-`` attributes and writes them with ``textContent``; a Content-Security-Policy
  allows scripts from the app's own ``/static`` only, so even an unescaped ``<script>`` would not
  run;
- with a token (required by :func:`serve` for any host other than loopback) every request must
  carry it (``Authorization: Bearer``, the ``review_token`` cookie set by the first visit to
  ``/?token=...``, or ``?token=``), else 401;
- on a loopback bind only loopback ``Host`` headers are answered (no DNS rebinding);
- request bodies above ``max_body`` bytes are refused with 413; decisions must be JSON (a
  cross-site form cannot post one without a CORS preflight, which the app never allows);
- only files under the documents folder are read (:class:`~confidence.review.pages.DocumentFolder`),
  anything else is 404.
"""

from __future__ import annotations

import hmac
import json
import secrets
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from confidence.documents.alone import value_read_alone
from confidence.errors import DocumentError, ExtractConfError
from confidence.review.pages import DocumentFolder, PageRenderer, line_box, locate
from confidence.review.queue import LeaseError, ReviewQueue

_WORDY = frozenset({"text", "address"})
"""Field types whose second reading alone is not shown: a name or an address read word by word
is mostly noise, where a date, an amount or an id read two ways is one of two values."""

_HERE = Path(__file__).parent
_STATIC = {"review.js": "text/javascript", "review.css": "text/css"}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def _import_web():
    try:
        import jinja2
        import starlette  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the review app needs starlette, uvicorn and jinja2: pip install 'extractconf[review]'"
        ) from None
    return jinja2


class _Guard:
    """ASGI middleware: token check, Host check, body size limit, security headers."""

    def __init__(self, app, *, token: str | None, hosts: tuple[str, ...] | None, max_body: int):
        self.app, self.token, self.hosts, self.max_body = app, token, hosts, max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if self.hosts is not None:
            host = headers.get("host", "")
            name = host[1:].split("]")[0] if host.startswith("[") else host.rsplit(":", 1)[0]
            if name not in self.hosts:
                return await _plain(send, 400, "unexpected Host header")
        if self.token is not None and not self._authorised(scope, headers):
            return await _plain(send, 401, "a valid review token is required")
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return await _plain(send, 413, f"request body above {self.max_body} bytes")
        body, more = b"", True
        while more and scope["method"] in ("POST", "PUT", "PATCH"):
            msg = await receive()
            body += msg.get("body", b"")
            more = msg.get("more_body", False)
            if len(body) > self.max_body:
                return await _plain(send, 413, f"request body above {self.max_body} bytes")
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [
                    *message["headers"],
                    (b"content-security-policy", _CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
            await send(message)

        await self.app(scope, replay, with_headers)

    def _authorised(self, scope, headers) -> bool:
        given = []
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given.append(auth[7:].strip())
        if "cookie" in headers:
            jar = SimpleCookie()
            try:
                jar.load(headers["cookie"])
            except Exception:  # a malformed cookie header is simply no token
                jar = SimpleCookie()
            if "review_token" in jar:
                given.append(jar["review_token"].value)
        given += parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [])
        want = self.token.encode()
        return any(hmac.compare_digest(g.encode(), want) for g in given)


async def _plain(send, status: int, text: str) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(body)).encode())],
        }
    )  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def _pct(bbox) -> dict[str, float] | None:
    if bbox is None:
        return None
    x0, y0, x1, y1 = bbox
    pad = 0.004
    return {
        "left": max(0.0, x0 - pad) * 100,
        "top": max(0.0, y0 - pad) * 100,
        "width": (min(1.0, x1 + pad) - max(0.0, x0 - pad)) * 100,
        "height": (min(1.0, y1 + pad) - max(0.0, y0 - pad)) * 100,
    }


_HOW = {"exact": "", "typed": "", "folded": ", OCR look-alike", "fuzzy": ", similar text",
        "line": ", the line it was read from"}  # fmt: skip


def _where(found) -> str | None:
    """Where a value was found, for the reviewer: ``"page 2, similar text"``."""
    return None if found is None else f"page {found[0] + 1}{_HOW.get(found[2], '')}"


def create_app(
    queue: ReviewQueue,
    folder: DocumentFolder,
    *,
    schema=None,
    reviewer: str = "reviewer",
    token: str | None = None,
    local_only: bool = True,
    max_body: int = 64 * 1024,
    renderer: PageRenderer | None = None,
):
    """The ASGI app serving ``queue`` with the documents of ``folder``.

    ``schema`` (a :class:`~confidence.schema.Schema`) gives the field descriptions; ``reviewer``
    the name logged with each decision unless the browser sends its own; ``token`` protects
    every request; ``local_only`` answers loopback Host headers only.
    """
    jinja2 = _import_web()
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    page_tpl = env.get_template("review.html")
    renderer = renderer or PageRenderer()
    schema = schema or folder.schema
    described = {f.name: f.description for f in schema.fields} if schema is not None else {}

    def client_of(request: Request) -> tuple[str, bool]:
        cid = request.cookies.get("review_client", "")
        if len(cid) == 32 and all(c in "0123456789abcdef" for c in cid):
            return cid, False
        return secrets.token_hex(16), True

    def cookies(response: Response, request: Request, cid: str, new: bool) -> Response:
        opts = {"httponly": True, "samesite": "strict", "path": "/"}
        if new:
            response.set_cookie("review_client", cid, **opts)
        if token is not None and request.query_params.get("token") == token:
            response.set_cookie("review_token", token, **opts)
        return response

    async def home(request: Request):
        cid, new = client_of(request)
        got = queue.next(cid)
        if got is None:
            ctx: dict[str, Any] = {"item": None, "progress": queue.progress()}
            return cookies(HTMLResponse(page_tpl.render(**ctx)), request, cid, new)
        item, lease = got
        upcoming = queue.peek()
        if upcoming is not None and upcoming.doc_id != item.doc_id:
            renderer.prefetch(folder, upcoming.doc_id)  # ready when the reviewer moves on
        doc = folder.document(item.doc_id)
        value_box = other_box = alone = None
        # the shown value is the reported one: the Mapper's (the layout reader, with the
        # embedded model) or the Hunter's (an LLM's, with a remote one); the *other* reading is
        # the first of Mapper and Hunter that says something else, and is boxed dashed
        readings = (("Mapper", item.mapper_value, item.mapper_line),
                    ("Hunter", item.hunter_value, item.hunter_line))  # fmt: skip
        other = next((r for r in readings if r[1] is not None and r[1] != item.value), None)
        n_pages = 0
        if doc is not None:
            n_pages = len(doc.pages)
            if item.field_type not in _WORDY:
                alone = value_read_alone(doc, item.value, item.field_type)
            value_box = locate(doc, item.value, item.field_type)
            if value_box is None:
                same = [ln for _, v, ln in readings if v is not None and v == item.value]
                value_box = line_box(doc, same[0] if same else None)
            if other is not None:
                other_box = locate(doc, other[1], item.field_type) or line_box(doc, other[2])
        shown_page = value_box[0] if value_box else other_box[0] if other_box else 0
        try:
            shown_page = min(max(int(request.query_params.get("p", shown_page)), 0), n_pages - 1)
        except ValueError:
            pass

        def status(name: str, value: str | None) -> dict[str, str | None]:
            """What a reading's row says beside it: its swatch and place, or a word."""
            if value is not None and value == item.value:
                box, swatch = value_box, "value"
            elif other is not None and name == other[0]:
                box, swatch = other_box, "other"
            else:
                return {"swatch": None, "text": None if value is None else "disagrees"}
            if box is None:
                return {"swatch": None, "text": "not found on the page" if doc else None}
            return {"swatch": swatch, "text": _where(box)}

        ctx = {
            "item": item,
            "lease": lease,
            "description": described.get(item.field, ""),
            "progress": queue.progress(item.doc_id),
            "has_picture": doc is not None,
            "n_pages": n_pages,
            "page": max(shown_page, 0),
            "value_box": _pct(value_box[1]) if value_box and value_box[0] == shown_page else None,
            "other_box": _pct(other_box[1]) if other_box and other_box[0] == shown_page else None,
            "other_name": other[0] if other else None,
            "hunter_status": status("Hunter", item.hunter_value),
            "mapper_status": status("Mapper", item.mapper_value),
            "alone_value": alone,
        }
        return cookies(HTMLResponse(page_tpl.render(**ctx)), request, cid, new)

    async def decide(request: Request):
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the decision as application/json"}, 415)
        try:
            body = json.loads(await request.body())
            lease, action = str(body["lease"]), str(body["action"])
            value = body.get("value")
            value = None if value is None or action in ("absent", "skip") else str(value)
        except (ValueError, KeyError, TypeError, AttributeError):
            return JSONResponse({"error": "expected {lease, action, value}"}, 400)
        who = str(body.get("reviewer") or reviewer)[:100]
        try:
            d = queue.submit(lease, action, value, who)
        except LeaseError as e:
            return JSONResponse({"error": str(e)}, 409)
        except ExtractConfError as e:
            return JSONResponse({"error": str(e)}, 400)
        return JSONResponse({"logged": d is not None, "progress": queue.progress().__dict__})

    async def page_picture(request: Request):
        doc_id = request.query_params.get("doc", "")
        path = folder.path_of(doc_id)
        doc = folder.document(doc_id) if path is not None else None
        try:
            n = int(request.query_params.get("n", "1")) - 1
            if doc is None:
                raise DocumentError(doc_id, "no such document")
            data = await run_in_threadpool(renderer.picture, path, doc, n)
        except (ValueError, DocumentError):
            return Response("not found", 404, media_type="text/plain")
        return Response(data, media_type="image/jpeg")

    async def original(request: Request):
        from starlette.responses import FileResponse

        p = folder.safe_file(request.path_params["path"])
        if p is None:
            return Response("not found", 404, media_type="text/plain")
        return FileResponse(p)

    async def static(request: Request):
        name = request.path_params["name"]
        if name not in _STATIC:
            return Response("not found", 404, media_type="text/plain")
        return Response((_HERE / "static" / name).read_bytes(), media_type=_STATIC[name])

    async def progress(request: Request):
        docs = [{"doc_id": d, "done": k, "total": n} for d, k, n in queue.documents()]
        return JSONResponse({**queue.progress().__dict__, "documents": docs})

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/decide", decide, methods=["POST"]),
            Route("/page", page_picture),
            Route("/progress", progress),
            Route("/documents/{path:path}", original),
            Route("/static/{name}", static),
        ]
    )
    hosts = _LOOPBACK if local_only else None
    return _Guard(app, token=token, hosts=hosts, max_body=max_body)


def serve(app_factory_kwargs: dict[str, Any], *, host: str, port: int, token: str | None) -> None:
    """Run the app with uvicorn on ``host:port`` (blocking).

    Refuses any host other than loopback without a token: the app shows documents and writes
    decisions, so on a shared network it must not be open to everyone.
    """
    local = host in _LOOPBACK
    if not local and not token:
        raise ExtractConfError(
            f"--host {host} makes the app reachable from other machines; pass --token SECRET "
            "(every request must then carry it)"
        )
    try:
        import uvicorn
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the review app needs uvicorn: pip install 'extractconf[review]'"
        ) from None
    app = create_app(**app_factory_kwargs, token=token, local_only=local)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
