"""A model served elsewhere, asked over HTTP for each heatmap.

The provider POSTs ``{"text": ..., "image": <base64 of the image file> or
null, "image_url": <the item's URL> or null}`` as JSON to the model's URL and
expects ``200`` with ``{"heatmap": [[...], ...]}``: a 2-D array of
non-negative numbers, at most :data:`hits.requester.heatmaps.arrays.MAX_SIDE` cells on a
side. The URL is the campaign's, so the connection follows the
marketplace's rules for outbound requests (``hits.wire.destinations``):
public addresses only unless the operator allows private ones, checked again
when connecting, no redirects, no proxies from the environment. The answer
is read up to :data:`MAX_BYTES`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import requests

from hits.requester.heatmaps import HeatmapError
from hits.requester.heatmaps.source import ImageSource
from hits.wire.destinations import DestinationRefused, check_destination, checked_session

MAX_BYTES = 16 * 1024 * 1024
#: Seconds to wait for a connection and for each read; the caller's time limit bounds the whole call.
SOCKET_TIMEOUT = 30.0


@dataclass(frozen=True)
class HttpProvider:
    """Heatmaps from ``url``; ``allow_private``: the operator lets it be on a private address."""

    url: str
    allow_private: bool = False
    timeout: float = SOCKET_TIMEOUT

    def heatmap(self, image: ImageSource, text: str) -> Any:
        """POST the text and image, return the answer's ``heatmap``; ``HeatmapError`` on any failure."""
        data = image.read()
        document = {
            "text": text,
            "image": base64.b64encode(data).decode() if data is not None else None,
            "image_url": image.url,
        }
        try:
            check_destination(self.url, self.allow_private)
            with checked_session(self.allow_private) as http:
                response = http.post(
                    self.url,
                    data=json.dumps(document),
                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                    timeout=self.timeout,
                    allow_redirects=False,
                    stream=True,
                )
                with response:
                    if response.status_code != 200:
                        raise HeatmapError(f"the model's server answered HTTP {response.status_code}")
                    body = bytearray()
                    for chunk in response.iter_content(64 * 1024):
                        body += chunk
                        if len(body) > MAX_BYTES:
                            raise HeatmapError(f"the model's answer is larger than {MAX_BYTES} bytes")
        except DestinationRefused as exc:
            raise HeatmapError(f"the model's URL may not be called: {exc}") from exc
        except requests.RequestException as exc:
            raise HeatmapError(f"the model's server could not be reached: {type(exc).__name__}") from exc
        try:
            answer = json.loads(bytes(body))
        except ValueError as exc:
            raise HeatmapError("the model's answer is not JSON") from exc
        if not isinstance(answer, dict) or "heatmap" not in answer:
            raise HeatmapError('the model\'s answer has no "heatmap" member')
        return answer["heatmap"]
