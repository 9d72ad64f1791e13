"""A local OpenAI-compatible HTTP server with scripted replies, for driving the real ChatOpenAI.

Each POST to `/v1/chat/completions` takes the next scripted reply: a content string, or a dict with
`content`, `status` (an HTTP error), `delay` (seconds before answering; a server shut down meanwhile
never answers), `usage` (False: omit it; any other value is sent as it is, `None` as null),
`tool_calls` (native tool calls, OpenAI's `{"id", "type", "function": {"name", "arguments"}}`, sent
as they are; streamed, each as a delta naming it, then its arguments 16 characters a delta),
`truncate` (stream half of the deltas, then hang up; with a `finish_reason`, end with it instead),
`finish_reason` (default `tool_calls` with tool calls, else `stop`), `message` (the whole message
object, sent as it is), `body` (the whole HTTP body, sent as it is), `headers` (extra response
headers) and `trickle` (seconds between each quarter of a JSON body: bytes keep coming, slower than
a timeout).
Requests are kept for assertions (not their times: a test checks what a run recorded, never how
long it took). A reply held back (`delay`, `trickle`) ends when the server stops, so the attempt's
thread waiting on it ends too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "warrant-test-model"


class FakeOpenAI:
    def __init__(self, script: list[str | dict[str, Any]]) -> None:
        self.script = [item if isinstance(item, dict) else {"content": item} for item in script]
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            index = len(self.requests) - 1
        return (
            self.script[index]
            if index < len(self.script)
            else {"status": 500, "content": "script exhausted"}
        )

    def env(self, model_variable: str = "WARRANT_MODEL", **extra: str) -> dict[str, str]:
        """The environment routing a command's model (or, by `model_variable`, its grader) here,
        with `extra` settings."""
        return {model_variable: MODEL, "OPENAI_BASE_URL": self.url, "OPENAI_API_KEY": "k", **extra}

    @property
    def prompts(self) -> list[str]:
        return [request["messages"][0]["content"] for request in self.requests]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                reply = fake.next_reply(body)
                if fake._stopped.wait(reply.get("delay", 0)):
                    return  # shut down while hanging: never answer
                self.extra_headers = reply.get("headers", {})
                self.trickle = reply.get("trickle", 0)
                if "body" in reply:
                    self._json(reply.get("status", 200), reply["body"])
                elif reply.get("status", 200) != 200:
                    self._json(
                        reply["status"],
                        {
                            "error": {
                                "message": reply.get("content", "error"),
                                "type": "server_error",
                            }
                        },
                    )
                elif body.get("stream"):
                    self._stream(reply, body)
                else:
                    self._json(200, _completion(reply, len(fake.requests)))

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-request-id", f"req-{len(fake.requests)}")
                for name, value in getattr(self, "extra_headers", {}).items():
                    self.send_header(name, value)
                self.end_headers()
                pause = getattr(self, "trickle", 0)
                quarter = max(1, len(data) // 4)
                pieces = [data[at : at + quarter] for at in range(0, len(data), quarter)]
                for piece in pieces if pause else [data]:
                    if pause and fake._stopped.wait(pause):
                        return  # shut down while trickling
                    self.wfile.write(piece)
                    self.wfile.flush()

            def _stream(self, reply: dict[str, Any], body: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("x-request-id", f"req-{len(fake.requests)}")
                self.end_headers()
                deltas = _deltas(reply)
                if reply.get("truncate"):
                    deltas = deltas[: len(deltas) // 2]
                for delta in deltas:
                    self._event(_chunk(delta, None))
                if reply.get("truncate") and "finish_reason" not in reply:
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._event(_chunk({}, _finish(reply)))
                usage = reply.get("usage", True)
                if usage is not False and (body.get("stream_options") or {}).get("include_usage"):
                    self._event({**_chunk({}, None), "choices": [], "usage": _usage(usage)})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())

        return Handler

    @contextmanager
    def running(self) -> Iterator[FakeOpenAI]:
        self._stopped.clear()
        # `shutdown` waits for the loop's next poll: 0.5 s by default, at the end of every run
        serve = partial(self._server.serve_forever, poll_interval=0.01)
        thread = threading.Thread(target=serve, name="fake-openai", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stopped.set()
            self._server.shutdown()
            self._server.server_close()


def _usage(given: Any = True) -> Any:
    """The scripted usage: True for the default counts, anything else as it is."""
    return (
        {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        if given is True
        else given
    )


def _finish(reply: dict[str, Any]) -> Any:
    return reply.get("finish_reason", "tool_calls" if reply.get("tool_calls") else "stop")


def _pieces(text: str) -> list[str]:
    return [text[at : at + 16] for at in range(0, len(text), 16)]


def _deltas(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The streamed message: the content 16 characters a delta (the first names the role), then
    each tool call as a delta with its id and name, then its arguments 16 characters a delta."""
    pieces = _pieces(reply.get("content", "")) or [""]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": pieces[0]}]
    deltas += [{"content": piece} for piece in pieces[1:]]
    for index, call in enumerate(reply.get("tool_calls", [])):
        function = dict(call.get("function", {}))
        arguments = function.pop("arguments", "")
        head = {**call, "index": index, "function": {**function, "arguments": ""}}
        deltas.append({"tool_calls": [head]})
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
            for piece in _pieces(arguments)
        ]
    return deltas


def _chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-s",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _message(reply: dict[str, Any]) -> dict[str, Any]:
    """The scripted message; with tool calls and no content, the content is null, as OpenAI sends."""
    if "tool_calls" not in reply:
        return {"role": "assistant", "content": reply.get("content", "")}
    return {"role": "assistant", "content": reply.get("content"), "tool_calls": reply["tool_calls"]}


def _completion(reply: dict[str, Any], number: int) -> dict[str, Any]:
    completion = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": reply.get("message", _message(reply)),
                "finish_reason": _finish(reply),
            }
        ],
    }
    if reply.get("usage", True) is not False:
        completion["usage"] = _usage(reply.get("usage", True))
    return completion
