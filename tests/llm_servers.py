"""Local HTTP servers for the LLM client tests (no network, no API key).

* :class:`FakeChatServer` speaks just enough of ``POST /v1/chat/completions`` to inject faults:
  each request takes the next scripted :class:`Act` (status codes, Retry-After, delays, malformed
  bodies, missing logprobs, rejecting ``json_schema``), then falls back to ``default``.
* ``llama_server`` starts the real ``llama_cpp.server`` with the SmolLM2 GGUF on a free port.

Test modules import the fixture functions (``fake_server_fixture``, ``llama_server_fixture``; the
fixtures are named ``fake_server`` / ``llama_server``) after putting this folder on ``sys.path``
(pytest runs with ``--import-mode=importlib``, which does not add it).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Act:
    """What the server does with one request.

    ``status`` != 200 sends ``body`` (an OpenAI-style error by default) with ``headers``;
    ``delay`` sleeps first; ``raw`` sends these bytes as a 200 JSON body (malformed replies);
    ``logprobs=False`` omits logprobs; ``reject_json_schema`` answers 400 to
    ``response_format.type == "json_schema"`` and succeeds otherwise.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes | None = None
    logprobs: bool = True
    reject_json_schema: bool = False
    text: str = '{"total": "12.50"}'


class FakeChatServer:
    """A threaded chat-completions server on 127.0.0.1 with a script of :class:`Act`."""

    def __init__(self, default: Act | None = None) -> None:
        self.default = default or Act()
        self.script: list[Act] = []
        self.requests: list[tuple[float, dict]] = []
        self.auth: list[str | None] = []  # the Authorization header of each request
        self.in_flight = 0
        self.max_in_flight = 0  # most requests the server held at once
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, delayed ACKs add ~40 ms.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                with server._lock:
                    server.requests.append((time.monotonic(), body))
                    server.auth.append(self.headers.get("Authorization"))
                    act = server.script.pop(0) if server.script else server.default
                if act.delay:
                    with server._lock:
                        server.in_flight += 1
                        server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    time.sleep(act.delay)
                    with server._lock:
                        server.in_flight -= 1
                if (
                    act.reject_json_schema
                    and (body.get("response_format") or {}).get("type") == "json_schema"
                ):
                    return self._send(400, _error("response_format json_schema not supported"))
                if act.status != 200:
                    return self._send(act.status, _error(f"injected {act.status}"), act.headers)
                if act.raw is not None:
                    return self._send(200, act.raw)
                return self._send(200, json.dumps(_reply(body, act)).encode())

            def _send(self, status, payload: bytes, headers=None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _error(msg: str) -> bytes:
    return json.dumps({"error": {"message": msg, "type": "invalid_request_error"}}).encode()


def _reply(req: dict, act: Act) -> dict:
    # Split the text into 3-character "tokens" with made-up, sorted alternatives.
    pieces = [act.text[i : i + 3] for i in range(0, len(act.text), 3)]
    k = int(req.get("top_logprobs") or 0)
    content = [
        {
            "token": p,
            "logprob": -0.1 * (i % 4),
            "bytes": list(p.encode()),
            "top_logprobs": [
                {"token": p if j == 0 else f"{p}{j}", "logprob": -0.1 * (i % 4) - j, "bytes": None}
                for j in range(k)
            ],
        }
        for i, p in enumerate(pieces)
    ]
    choices = [
        {
            "index": i,
            "message": {"role": "assistant", "content": act.text},
            "finish_reason": "stop",
            "logprobs": {"content": content} if act.logprobs and req.get("logprobs") else None,
        }
        for i in range(int(req.get("n") or 1))
    ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model", "fake"),
        "choices": choices,
        "usage": {"prompt_tokens": 7, "completion_tokens": len(pieces), "total_tokens": 7},
    }


@pytest.fixture(name="fake_server")
def fake_server_fixture():
    server = FakeChatServer()
    yield server
    server.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(name="llama_server", scope="session")
def llama_server_fixture(tmp_path_factory):
    """Base URL of a real ``llama_cpp.server`` serving SmolLM2 (skipped without llama-cpp)."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("uvicorn")
    from confidence.llm import find_gguf

    port = free_port()
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(find_gguf()),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--logits_all",
            "true",  # the server computes logprobs only with logits_all
            "--verbose",
            "false",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),  # a file, not a pipe: a full pipe would block the server
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not start within 90 s") from None
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str] | None = None) -> None:
    """Serve a fixed-latency fake endpoint in its own process (used by the async benchmark)."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--delay", type=float, default=0.2, help="seconds before each reply")
    args = ap.parse_args(argv)
    server = FakeChatServer(Act(delay=args.delay))
    print(server.base_url, flush=True)  # the parent reads the URL from the first line
    try:
        server._thread.join()
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
