"""The local model of the live acceptance: llama.cpp's OpenAI-compatible server (`.venv-llm`) with
SmolLM2-135M-Instruct, both prepared by `bash .ci/local-model`, started on a free port."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.langgraph_server import free_port, wait_until_up

ROOT = Path(__file__).resolve().parents[1]
SERVER_PYTHON = ROOT / ".venv-llm" / "bin" / "python"
CACHE = Path(os.environ.get("WARRANT_CACHE") or Path.home() / ".cache" / "warrant")
GGUF = CACHE / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
ROUTE = {
    "WARRANT_MODEL": "smollm2-135m",
    "OPENAI_API_KEY": "unused",
    "WARRANT_MODEL_DIALECT": "json_object+schema",  # llama.cpp compiles the schema into a grammar
    "WARRANT_MODEL_TOKEN_PARAM": "max_tokens",  # it ignores max_completion_tokens
    "WARRANT_MODEL_OUTPUT_TOKENS": "512",
    "WARRANT_MODEL_CONTEXT_TOKENS": "8192",  # the server's --n_ctx
    "WARRANT_MODEL_TIMEOUT": "120",
}
"""The route for the local server (with OPENAI_BASE_URL, its address)."""


def unavailable() -> str | None:
    """Why the local model cannot be started here, or None."""
    if not SERVER_PYTHON.exists():
        return f"{SERVER_PYTHON} is missing: run `bash .ci/local-model`"
    if not GGUF.exists():
        return f"{GGUF} is missing: run `bash .ci/local-model`"
    return None


@contextmanager
def llama_server(log: Path) -> Iterator[str]:
    """The server's base URL while it runs (its output in `log`); stopped afterwards."""
    port = free_port()
    command = [
        str(SERVER_PYTHON),
        "-m",
        "llama_cpp.server",
        "--model",
        str(GGUF),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "8192",
        "--logits_all",
        "false",
    ]
    with log.open("wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/v1"
            wait_until_up(url, server, timeout=120, path="/models", name="the llama.cpp server")
            yield url
        finally:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
