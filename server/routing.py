"""URL converters of the app: ``create_app`` installs them."""

from __future__ import annotations

from typing import Any

from werkzeug.routing import IntegerConverter, Map

from server import MAX_ROW_ID


class RowIdConverter(IntegerConverter):
    """``<int:...>`` bounded to the ids a row can have, so a larger number is a 404, not an overflow."""

    def __init__(self, map: Map, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max", MAX_ROW_ID)
        super().__init__(map, *args, **kwargs)
