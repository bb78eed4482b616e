"""A local fake of OpenAI's Batch API beside the live chat fake (tests only, stdlib).

``FakeBatchServer`` is a :class:`~tests.fake_openai_server.FakeOpenAIServer` (live chat,
embeddings, ``GET /v1/models``) that also serves ``POST /v1/files`` (multipart upload),
``POST /v1/batches``, ``GET /v1/batches/{id}`` and ``GET /v1/files/{id}/content``, in the
published shapes: a batch object with ``status`` and ``request_counts``, an output file with one
``{"custom_id", "response": {"status_code", "body"}}`` line per answered request and an error file
for the others. Each line is answered by the live fake's own ``answer_fn`` and reply builder
(:func:`tests.fake_openai_server.chat_completion`), so a batched run and a live run can be compared
record for record.

Scriptable per batch, in creation order (``script(*BatchScript)``): ``polls`` retrievals that still
say ``in_progress`` (``None``: until ``release()``), ``end`` ``completed``, ``expired`` (with
only the first ``finish`` lines answered, the rest in the error file as ``batch_expired``) or
``failed`` (refused as a whole, with an ``errors`` list and no file), and
``fail(body) -> (status, message) | None``: lines answered with an error status in the error file.
Without a script a batch completes at its first retrieval.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as default_policy
from http.server import BaseHTTPRequestHandler
from typing import Any

from model_clients.loopback import send_bytes, send_json
from tests.fake_openai_server import FakeOpenAIServer, JsonDict, chat_completion

LineFailure = Callable[[JsonDict], "tuple[int, str] | None"]


@dataclass(frozen=True)
class BatchScript:
    """How the next created batch behaves (see the module docstring)."""

    polls: int | None = 0
    end: str = "completed"  # completed | expired | failed (refused as a whole: no line runs, no file)
    finish: int | None = None  # expired: how many lines were answered before the window closed
    fail: LineFailure | None = None


@dataclass
class _Batch:
    batch_id: str
    input_file_id: str
    lines: list[JsonDict]
    script: BatchScript
    polls_seen: int = 0
    status: str = "validating"
    output_file_id: str | None = None
    error_file_id: str | None = None
    counts: dict[str, int] = field(default_factory=lambda: {"total": 0, "completed": 0, "failed": 0})
    created_at: int = field(default_factory=lambda: int(time.time()))


def parse_multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body by name (a file field: its bytes)."""
    message = BytesParser(policy=default_policy).parsebytes(
        f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode() + raw)
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        fields[str(name)] = part.get_payload(decode=True) or b""
    return fields


class FakeBatchServer(FakeOpenAIServer):
    """The live fake plus the files and batches endpoints of OpenAI's Batch API."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._batch_lock = threading.Lock()
        self._files: dict[str, bytes] = {}
        self._batches: dict[str, _Batch] = {}
        self._scripts: list[BatchScript] = []
        self._released = threading.Event()
        self.uploads: list[list[JsonDict]] = []  # each uploaded input file, parsed
        self.upload_purposes: list[str] = []
        self.batch_creates: list[JsonDict] = []  # each POST /v1/batches body
        self.batch_polls = 0

    # ----------------------------------------------------------------- scripting
    def script(self, *scripts: BatchScript) -> None:
        with self._batch_lock:
            self._scripts.extend(scripts)

    def release(self) -> None:
        """Batches scripted with ``polls=None`` end at their next retrieval."""
        self._released.set()

    def batch_ids(self) -> list[str]:
        with self._batch_lock:
            return list(self._batches)

    # ----------------------------------------------------------------- serving
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        route = handler.path.rstrip("/")
        if route not in ("/v1/files", "/v1/batches"):
            super()._handle(handler)
            return
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        if route == "/v1/files":
            fields = parse_multipart(handler.headers.get("Content-Type", ""), raw)
            with self._batch_lock:
                file_id = f"file-fake-{len(self._files)}"
                self._files[file_id] = fields.get("file", b"")
                self.upload_purposes.append(fields.get("purpose", b"").decode())
                self.uploads.append([json.loads(line) for line in fields.get("file", b"").splitlines() if line.strip()])
            send_json(handler, 200, self._file_object(file_id, "batch_input.jsonl", "batch"))
            return
        body = json.loads(raw or b"{}")
        with self._batch_lock:
            self.batch_creates.append(body)
            source = self._files.get(body.get("input_file_id", ""))
            if source is None:
                send_json(handler, 404, {"error": {"message": "no such file", "type": "invalid_request_error"}})
                return
            lines = [json.loads(line) for line in source.splitlines() if line.strip()]
            script = self._scripts.pop(0) if self._scripts else BatchScript()
            batch = _Batch(f"batch_fake_{len(self._batches)}", body["input_file_id"], lines, script)
            batch.counts["total"] = len(lines)
            self._batches[batch.batch_id] = batch
            payload = self._batch_object(batch, body.get("endpoint", ""), body.get("completion_window", ""))
        send_json(handler, 200, payload)

    def _handle_get(self, handler: BaseHTTPRequestHandler) -> None:
        route = handler.path.rstrip("/")
        batch_match = re.fullmatch(r"/v1/batches/([\w-]+)", route)
        content_match = re.fullmatch(r"/v1/files/([\w-]+)/content", route)
        if batch_match:
            with self._batch_lock:
                self.batch_polls += 1
                batch = self._batches.get(batch_match.group(1))
                if batch is not None:
                    self._advance(batch)
                    payload = self._batch_object(batch, "/v1/chat/completions", "24h")
            if batch is None:
                send_json(handler, 404, {"error": {"message": "no such batch", "type": "invalid_request_error"}})
            else:
                send_json(handler, 200, payload)
            return
        if content_match:
            with self._batch_lock:
                data = self._files.get(content_match.group(1))
            if data is None:
                send_json(handler, 404, {"error": {"message": "no such file", "type": "invalid_request_error"}})
            else:
                send_bytes(handler, 200, data)
            return
        super()._handle_get(handler)

    # ----------------------------------------------------------------- the batch's work
    def _advance(self, batch: _Batch) -> None:
        """One retrieval: still in progress, or the batch ends now and writes its files."""
        if batch.status in ("completed", "expired", "failed"):
            return
        batch.polls_seen += 1
        waiting = (not self._released.is_set()) if batch.script.polls is None else batch.polls_seen <= batch.script.polls
        if waiting:
            batch.status = "in_progress"
            return
        if batch.script.end == "failed":
            batch.status = "failed"
            return
        output: list[bytes] = []
        errors: list[bytes] = []
        finish = len(batch.lines) if batch.script.end != "expired" or batch.script.finish is None else batch.script.finish
        for index, line in enumerate(batch.lines):
            request_id = f"batch_req_{batch.batch_id}_{index}"
            if index >= finish:
                record = {"id": request_id, "custom_id": line["custom_id"], "response": None,
                          "error": {"code": "batch_expired", "message": "not executed before the window closed"}}
                errors.append(json.dumps(record).encode())
                continue
            failure = batch.script.fail(line["body"]) if batch.script.fail else None
            if failure is not None:
                status, message = failure
                response = {"status_code": status, "request_id": request_id,
                            "body": {"error": {"message": message, "type": "scripted_error"}}}
                errors.append(json.dumps({"id": request_id, "custom_id": line["custom_id"], "response": response,
                                          "error": None}).encode())
                batch.counts["failed"] += 1
                continue
            completion = chat_completion(line["body"], self.answer_fn(line["body"]), f"chatcmpl-{request_id}")
            response = {"status_code": 200, "request_id": request_id, "body": completion}
            output.append(json.dumps({"id": request_id, "custom_id": line["custom_id"], "response": response,
                                      "error": None}).encode())
            batch.counts["completed"] += 1
        if output:
            batch.output_file_id = f"file-fake-{len(self._files)}"
            self._files[batch.output_file_id] = b"\n".join(output) + b"\n"
        if errors:
            batch.error_file_id = f"file-fake-{len(self._files)}"
            self._files[batch.error_file_id] = b"\n".join(errors) + b"\n"
        batch.status = "expired" if batch.script.end == "expired" else "completed"

    @staticmethod
    def _file_object(file_id: str, filename: str, purpose: str) -> JsonDict:
        return {"id": file_id, "object": "file", "bytes": 0, "created_at": int(time.time()), "filename": filename,
                "purpose": purpose, "status": "processed"}

    @staticmethod
    def _batch_object(batch: _Batch, endpoint: str, window: str) -> JsonDict:
        errors = ({"object": "list", "data": [{"code": "invalid_request", "message": "scripted refusal", "line": 1,
                                               "param": None}]} if batch.status == "failed" else None)
        return {"id": batch.batch_id, "object": "batch", "endpoint": endpoint, "errors": errors,
                "input_file_id": batch.input_file_id, "completion_window": window, "status": batch.status,
                "output_file_id": batch.output_file_id, "error_file_id": batch.error_file_id,
                "created_at": batch.created_at, "request_counts": dict(batch.counts), "metadata": None}
