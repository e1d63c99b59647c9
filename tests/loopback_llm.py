"""A loopback HTTP server that speaks just enough of the OpenAI (chat completions, responses) and
Anthropic (messages) APIs for the real SDK clients, with scripted behaviours per request."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANSWER = """Here is a faster version.

```python
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x)
```
"""

BEHAVIOURS = ("ok", "429_then_ok", "500", "401", "empty", "malformed", "slow", "hang")


def chat_body(text: str, model: str) -> dict:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 45, "total_tokens": 165}}


def responses_body(text: str, model: str) -> dict:
    return {"id": "resp_1", "object": "response", "created_at": 0, "model": model, "status": "completed",
            "incomplete_details": None, "error": None, "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": [], "output": [{"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                                     "content": [{"type": "output_text", "text": text, "annotations": []}]}],
            "usage": {"input_tokens": 120, "output_tokens": 45, "total_tokens": 165,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def messages_body(text: str, model: str) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "thinking", "thinking": "draft ```python\nclass ModelNew: pass\n```",
                         "signature": "sig"},
                        {"type": "text", "text": text}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 45}}


ROUTES = {"/v1/chat/completions": chat_body, "/v1/responses": responses_body, "/v1/messages": messages_body}


class LoopbackLLM:
    """Behaviours are taken from `queue` in request order, then `default`. `slow` answers after
    `slow_seconds` (meant to exceed the client's timeout); `hang` waits until the server closes."""

    def __init__(self, answer: str = ANSWER, slow_seconds: float = 3.0):
        self.answer = answer
        self.slow_seconds = slow_seconds
        self.queue: list[str] = []
        self.default = "ok"
        self.requests: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        self.closing = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        # A short poll interval: shutdown() waits for one poll, and every test closes a server.
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> "LoopbackLLM":
        self.thread.start()
        return self

    def close(self) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def next_behaviour(self, path: str, body: dict) -> str:
        with self.lock:
            self.requests.append((path, body))
            return self.queue.pop(0) if self.queue else self.default

    def _handler(self):
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest output clean
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw or b"{}")
                build = ROUTES.get(self.path)
                if build is None:
                    return self._send(404, b'{"error": "no such route"}')
                behaviour = llm.next_behaviour(self.path, body)
                if behaviour == "429_then_ok":
                    with llm.lock:
                        llm.queue.insert(0, "ok")
                    return self._send(429, b'{"error": {"message": "rate limited"}}', {"retry-after-ms": "10"})
                if behaviour == "500":
                    return self._send(500, b'{"error": {"message": "internal error"}}')
                if behaviour == "401":
                    return self._send(401, b'{"error": {"message": "invalid api key"}}')
                if behaviour == "empty":
                    return self._send(200, b"")
                if behaviour == "malformed":
                    return self._send(200, b'{"choices": [oops')
                if behaviour == "slow":
                    llm.closing.wait(llm.slow_seconds)
                if behaviour == "hang":
                    llm.closing.wait(120)
                    return
                payload = build(llm.answer, body.get("model", "m"))
                self._send(200, json.dumps(payload).encode())

            def _send(self, status: int, data: bytes, headers: dict | None = None):
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        return Handler
