"""Checking responses against the output shapes of the botocore mturk service model."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

import botocore.session
from botocore.model import ServiceModel, Shape


@cache
def service_model() -> ServiceModel:
    return botocore.session.get_session().get_service_model("mturk")


def check_shape(shape: Shape, value: Any, path: str = "$") -> None:
    """Assert that ``value`` (as boto3 parsed it) fits ``shape``: members, types, required, enums."""
    kind = shape.type_name
    if kind == "structure":
        assert isinstance(value, dict), f"{path}: expected a structure, got {value!r}"
        for name in shape.required_members:
            assert name in value, f"{path}: required member {name} is missing"
        for name, member in value.items():
            assert name in shape.members, f"{path}: {name} is not a member of {shape.name}"
            check_shape(shape.members[name], member, f"{path}.{name}")
    elif kind == "list":
        assert isinstance(value, list), f"{path}: expected a list, got {value!r}"
        for i, item in enumerate(value):
            check_shape(shape.member, item, f"{path}[{i}]")
    elif kind == "map":
        assert isinstance(value, dict), f"{path}: expected a map"
        for key, item in value.items():
            check_shape(shape.key, key, f"{path}<key>")
            check_shape(shape.value, item, f"{path}[{key!r}]")
    elif kind == "string":
        assert isinstance(value, str), f"{path}: expected a string, got {value!r}"
        if shape.enum:
            assert value in shape.enum, f"{path}: {value!r} is not one of {shape.enum}"
    elif kind in ("integer", "long"):
        assert isinstance(value, int) and not isinstance(value, bool), f"{path}: expected an integer"
    elif kind in ("float", "double"):
        assert isinstance(value, int | float) and not isinstance(value, bool), f"{path}: expected a number"
    elif kind == "boolean":
        assert isinstance(value, bool), f"{path}: expected a boolean, got {value!r}"
    elif kind == "timestamp":
        assert isinstance(value, datetime), f"{path}: expected a timestamp, got {value!r}"
    else:  # blob and friends do not occur in mturk's outputs
        raise AssertionError(f"{path}: unexpected shape type {kind}")


def check_output(operation: str, response: dict[str, Any]) -> None:
    """Validate a boto3 response (minus ResponseMetadata) against ``operation``'s output shape."""
    body = {k: v for k, v in response.items() if k != "ResponseMetadata"}
    check_shape(service_model().operation_model(operation).output_shape, body, operation)


class Checked:
    """A boto3 mturk client whose every response (and every paginated page) is shape-checked."""

    def __init__(self, client: Any):
        self.client = client
        self.exceptions = client.exceptions
        self.called: set[str] = set()

    def __getattr__(self, method: str) -> Any:
        operation = self.client.meta.method_to_api_mapping[method]
        fn = getattr(self.client, method)

        def call(**kwargs: Any) -> dict[str, Any]:
            response: dict[str, Any] = fn(**kwargs)
            check_output(operation, response)
            self.called.add(operation)
            return response

        return call

    def pages(self, method: str, page_size: int = 2, **kwargs: Any) -> list[dict[str, Any]]:
        """Every page of a botocore paginator, each checked."""
        operation = self.client.meta.method_to_api_mapping[method]
        paginator = self.client.get_paginator(method)
        pages = list(paginator.paginate(PaginationConfig={"PageSize": page_size}, **kwargs))
        for page in pages:
            check_output(operation, page)
        self.called.add(operation)
        return pages
