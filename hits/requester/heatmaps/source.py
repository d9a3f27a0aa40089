"""What a heatmap is asked for, and what answers: below the providers, which all build on it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class ImageSource:
    """The image a heatmap is for: a file of the campaign's media folder, or a URL of its own."""

    path: Path | None = None
    url: str | None = None

    def read(self) -> bytes | None:
        """The image's bytes when it is a local file (a URL is not fetched here)."""
        return self.path.read_bytes() if self.path is not None else None


class HeatmapProvider(Protocol):
    """Anything that gives a heatmap (a 2-D array of non-negative numbers) for an image and a text."""

    def heatmap(self, image: ImageSource, text: str) -> Any: ...
