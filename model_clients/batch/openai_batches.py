"""OpenAI's Batch API as a batch provider: the lines as one JSONL file, then ``batches.create``; collected
from the output and error files. Limits of one batch (50,000 requests, 200 MB read as 200,000,000
bytes): https://platform.openai.com/docs/api-reference/batch/create (also the SDK's
``batch_create_params.py``). Retryable: a 200 without choices or text, HTTP 408/409/429/5xx and the
line errors ``batch_expired`` / ``batch_cancelled`` / ``request_timeout``; any other status is final,
as is every line of a batch that ``failed`` whole; missing lines are the runner's to mark.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from model_clients.batch.provider import BatchLine, BatchState, BatchStatus
from model_clients.chat_types import LineOutcome, attempt_of

if TYPE_CHECKING:
    import openai

CHAT_ENDPOINT = "/v1/chat/completions"
MAX_LINES = 50_000
MAX_BYTES = 200_000_000
COMPLETION_WINDOW = "24h"  # the only window the API offers
RETRYABLE_CODES = frozenset({"batch_expired", "batch_cancelled", "request_timeout"})
_STATUS: dict[str, BatchStatus] = {
    "validating": "pending", "in_progress": "pending", "finalizing": "pending", "cancelling": "pending",
    "completed": "ended", "expired": "expired", "failed": "failed", "cancelled": "cancelled",
}


def jsonl_line(line: BatchLine) -> bytes:
    """One request of the input file, newline included."""
    record = {"custom_id": line.key, "method": "POST", "url": CHAT_ENDPOINT, "body": dict(line.body)}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


@dataclass
class OpenAIBatches:
    """The batch endpoints of an OpenAI-compatible server, through ``sdk`` (the client's key and URL)."""

    sdk: "openai.OpenAI"
    max_lines: int = MAX_LINES
    max_bytes: int = MAX_BYTES
    name: str = "openai"
    reports_lines_while_running: bool = True  # request_counts.completed / failed grow while it runs

    def line_bytes(self, line: BatchLine) -> int:
        return len(jsonl_line(line))

    def submit(self, lines: Sequence[BatchLine]) -> str:
        payload = b"".join(jsonl_line(line) for line in lines)
        uploaded = self.sdk.files.create(file=("batch_input.jsonl", payload), purpose="batch")
        batch = self.sdk.batches.create(input_file_id=uploaded.id, endpoint=CHAT_ENDPOINT,
                                        completion_window=COMPLETION_WINDOW)
        return batch.id

    def poll(self, batch_id: str) -> BatchState:
        batch = self.sdk.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts is not None else 0
        total = counts.total if counts is not None else 0
        return BatchState(batch_id, _STATUS.get(batch.status, "pending"), done, total, str(batch.status))

    def collect(self, batch_id: str) -> list[LineOutcome]:
        batch = self.sdk.batches.retrieve(batch_id)
        if batch.status == "failed":  # refused as a whole (e.g. its file did not validate): no line ran
            return self._refused(batch)
        outcomes: list[LineOutcome] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                outcomes += [line_outcome(json.loads(raw)) for raw in self._lines(file_id)]
        return outcomes

    def _lines(self, file_id: str) -> list[str]:
        return [raw for raw in self.sdk.files.content(file_id).text.splitlines() if raw.strip()]

    def _refused(self, batch: Any) -> list[LineOutcome]:
        """Every line of a failed batch (keys read back from its input file) with the batch's errors;
        final, as a resubmission would be refused alike."""
        reasons = "; ".join(f"{e.code}: {e.message}" for e in (batch.errors.data or []) if e) if batch.errors else ""
        error = f"the batch failed as a whole ({reasons or 'no reason given'})"
        keys = [json.loads(raw).get("custom_id", "") for raw in self._lines(batch.input_file_id)]
        return [LineOutcome(str(key), error=error, retryable=False) for key in keys]


def line_outcome(record: dict[str, Any]) -> LineOutcome:
    """One line of an output or error file as the key's outcome."""
    from openai.types.chat import ChatCompletion

    key = str(record.get("custom_id", ""))
    error = record.get("error")
    response = record.get("response") or {}
    if error:
        code = str(error.get("code") or "")
        return LineOutcome(key, error=f"batch line error {code}: {error.get('message', '')}".strip(),
                           retryable=code in RETRYABLE_CODES)
    status = int(response.get("status_code") or 0)
    body = response.get("body") or {}
    if status != 200:
        message = (body.get("error") or {}).get("message", "") if isinstance(body, dict) else str(body)
        retryable = status in (408, 409, 429) or status >= 500
        return LineOutcome(key, error=f"HTTP {status} in the batch: {message}", retryable=retryable)
    try:
        completion = ChatCompletion.model_validate(body)
    except ValueError as exc:
        return LineOutcome(key, error=f"the reply is not a valid completion ({type(exc).__name__})", retryable=True)
    return attempt_of(completion, key)
