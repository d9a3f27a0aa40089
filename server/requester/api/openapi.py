"""The API's OpenAPI 3.1 description, made from the operation registry (it cannot drift from the code)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from server.requester.api.dispatch import Operation

_PATH_ARG = re.compile(r"<(?:\w+:)?(\w+)>")
ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
}


def describe(operations: Iterable[Operation]) -> dict[str, Any]:
    """OpenAPI 3.1 for ``operations``: paths, parameters, request bodies, replies and errors."""
    paths: dict[str, dict[str, Any]] = {}
    for op in operations:
        path = _PATH_ARG.sub(r"{\1}", op.path)
        params = [
            {
                "name": p.name,
                "in": p.where,
                "required": p.required or p.where == "path",
                "description": p.description,
                "schema": {"type": p.kind, **({"enum": list(p.enum)} if p.enum else {})},
            }
            for p in op.params
            if p.where != "body"
        ]
        body = [p for p in op.params if p.where == "body"]
        entry: dict[str, Any] = {
            "operationId": op.name,
            "summary": op.summary,
            "parameters": params,
            "responses": {
                "201" if op.method == "POST" else "200": {
                    "description": "Done.",
                    "content": {"application/json": {"schema": op.reply}},
                },
                "default": {"description": "An error.", "content": {"application/json": {"schema": ERROR}}},
            },
        }
        if body:
            entry["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "properties": {
                                p.name: {
                                    "type": p.kind,
                                    "description": p.description,
                                    **({"enum": list(p.enum)} if p.enum else {}),
                                }
                                for p in body
                            },
                            "required": [p.name for p in body if p.required],
                        }
                    }
                },
            }
        paths.setdefault("/api/v1" + path, {})[op.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "hitforge API",
            "version": "1",
            "description": "Campaigns, their progress and results, and the review queue, for scripts. "
            "Authenticate with 'Authorization: Bearer <token>' (hitforge staff token NAME); a token "
            "sees and does what its user may on the dashboard.",
        },
        "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
        "security": [{"token": []}],
        "paths": paths,
    }
