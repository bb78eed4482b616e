"""Fixture answers for the fake OpenAI server when a library asks for structured output.

``schema_answer(builders)`` answers each request with schema-valid JSON (a scripted builder per
schema name, else the schema's minimal instance), reading the schema from ``response_format``;
``tool_call_answer`` replies with a tool call (which the fake server sends as native ``tool_calls``).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from tests.fake_openai_server import JsonDict, default_answer

def requested_schema(body: JsonDict) -> tuple[str, JsonDict] | None:
    """The JSON schema a request asks the reply to follow (``response_format`` ``json_schema``), and its name."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        return str(spec.get("name", "response")), dict(spec.get("schema") or {})
    return None


def minimal_instance(schema: JsonDict, defs: JsonDict | None = None) -> Any:
    """The smallest value valid against ``schema``: required properties only, empty arrays."""
    defs = schema.get("$defs", {}) if defs is None else defs
    if "$ref" in schema:
        return minimal_instance(defs[schema["$ref"].split("/")[-1]], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return minimal_instance(schema[key][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required", [])
        return {name: minimal_instance(sub, defs) for name, sub in schema.get("properties", {}).items() if name in required}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def schema_answer(
    builders: dict[str, Callable[[JsonDict], Any]] | None = None,
    fallback: Callable[[JsonDict], str] = default_answer,
) -> Callable[[JsonDict], str]:
    """An ``answer_fn`` for structured-output requests: ``builders[name](body)`` for a schema the test
    scripts, a minimal valid instance for any other schema, ``fallback`` when no schema is asked for."""
    builders = builders or {}

    def answer(body: JsonDict) -> str:
        found = requested_schema(body)
        if found is None:
            return fallback(body)
        name, schema = found
        return json.dumps(builders[name](body) if name in builders else minimal_instance(schema))

    return answer


def tool_call_answer(name: str, arguments: JsonDict) -> Callable[[JsonDict], str]:
    """An ``answer_fn`` that calls tool ``name`` the way the harness proxy asks a text-only model to."""
    return lambda body: json.dumps({"tool_calls": [{"name": name, "arguments": arguments}]})
