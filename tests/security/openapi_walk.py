"""Read openapi.yaml at test time: every operation, its path/query/header parameters and a minimal valid body.

The authorization matrix must cover routes other engineers add later without anyone editing it, so it walks
the committed contract (plus any route the live app has that the file does not yet list).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    spec: dict[str, Any] = field(hash=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.method.upper()} {self.path}"

    @property
    def path_params(self) -> list[str]:
        return [p["name"] for p in self.spec.get("parameters", []) if p["in"] == "path"]

    @property
    def secured(self) -> bool:
        return bool(self.spec.get("security"))

    @property
    def streaming(self) -> bool:
        content = self.spec.get("responses", {}).get("200", {}).get("content", {})
        return "text/event-stream" in content


def load_spec(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """openapi.yaml, with paths from `extra` (the live app's schema) added when the file lags behind."""
    spec: dict[str, Any] = yaml.safe_load(OPENAPI.read_text())
    for path, ops in (extra or {}).get("paths", {}).items():
        merged = spec["paths"].setdefault(path, {})
        for method, op in ops.items():
            merged.setdefault(method, op)
    for name, schema in (extra or {}).get("components", {}).get("schemas", {}).items():
        spec.setdefault("components", {}).setdefault("schemas", {}).setdefault(name, schema)
    return spec


def operations(spec: dict[str, Any]) -> list[Operation]:
    return [
        Operation(method, path, op)
        for path, ops in spec["paths"].items()
        for method, op in ops.items()
        if method in METHODS
    ]


class Examples:
    """Minimal values that satisfy a schema (required fields only), so validation never hides a 404/401."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            node: Any = self.spec
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def value(self, schema: dict[str, Any], depth: int = 0) -> Any:
        schema = self.resolve(schema)
        if "example" in schema:
            return schema["example"]
        if "default" in schema and schema["default"] is not None:
            return schema["default"]
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.resolve(s) for s in schema[key] if self.resolve(s).get("type") != "null"]
                return self.value(options[0], depth + 1) if options else None
        if "allOf" in schema:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                merged.update(self.resolve(part))
            return self.value(merged, depth + 1)
        kind = schema.get("type", "object")
        if kind == "object":
            props = schema.get("properties", {})
            return {name: self.value(props[name], depth + 1) for name in schema.get("required", []) if name in props}
        if kind == "array":
            count = schema.get("minItems", 0)
            return [self.value(schema.get("items", {}), depth + 1) for _ in range(count)]
        if kind == "string":
            return "x" * max(1, min(schema.get("minLength", 1), 64))
        if kind in ("integer", "number"):
            return schema.get("minimum", 1)
        if kind == "boolean":
            return False
        return None

    def body(self, op: Operation) -> Any:
        content = op.spec.get("requestBody", {}).get("content", {})
        if "application/json" not in content:
            return None
        return self.value(content["application/json"].get("schema", {}))

    def params(self, op: Operation, where: str) -> dict[str, Any]:
        return {
            p["name"]: self.value(p.get("schema", {}))
            for p in op.spec.get("parameters", [])
            if p["in"] == where and p.get("required")
        }
