"""A stand-in for LangSmith's API started by a test: it answers every request and keeps every body
it is sent (decompressed), so a test can say what reached it."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import zstandard


class _Collector(BaseHTTPRequestHandler):
    """Answers everything, keeps every body (decompressed)."""

    bodies: list[bytes]

    def do_GET(self) -> None:
        self._answer(b"{}")

    def do_POST(self) -> None:
        self._keep()

    do_PATCH = do_PUT = do_POST

    def _keep(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        encoding = self.headers.get("content-encoding", "")
        if "zstd" in encoding:
            body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
        elif "gzip" in encoding:
            body = gzip.decompress(body)
        self.bodies.append(self.path.encode() + b"\n" + body)
        self._answer(b"{}")

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def collector() -> Iterator[tuple[str, list[bytes]]]:
    """The collector's URL (for `LANGSMITH_ENDPOINT`) and the bodies it keeps."""
    kept: list[bytes] = []
    handler = type("Handler", (_Collector,), {"bodies": kept})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", kept
    finally:
        server.shutdown()
        server.server_close()
