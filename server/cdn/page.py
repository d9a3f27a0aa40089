"""A HIT page's CDN URLs: rewritten to hitforge's copies, and the ones left unserved listed."""

from __future__ import annotations

import re
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning, Tag

from server.cdn.cdn_map import CdnMap, Resolution

# An absolute or protocol-relative URL as it appears in markup, a script string or CSS url():
# it ends at whitespace, a quote, a bracket or a backslash.
URL = re.compile(r"""(?:https?:)?//(?P<host>[a-z0-9.-]+)(?::\d+)?/[^\s"'<>()\\`]*""", re.IGNORECASE)
_LOADING_TAG_START = re.compile(r"<(?:script|link)\b", re.IGNORECASE)
_INTEGRITY = re.compile(r"""\s+integrity\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""", re.IGNORECASE)
_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?["']?([^"')\s;]+)""", re.IGNORECASE)
_STYLESHEET_RELS = {"stylesheet", "preload", "modulepreload"}


def rewrite_html(html: str, cdn_map: CdnMap, local_url: Callable[[Resolution], str]) -> str:
    """``html`` with every CDN URL the map serves replaced by ``local_url`` of its copy.

    A ``<script>`` or ``<link>`` whose URL was replaced loses its ``integrity``
    attribute: the hash named the CDN's file, and a substituted version (or a
    copy built differently) would make the browser refuse our own, trusted file.
    Every other URL is left exactly as written. The work is linear in the page
    (tags are looked for only around a replaced URL), so no page makes it slow.
    """
    hosts = cdn_map.hosts
    known: dict[str, Resolution | None] = {}
    replacements: list[tuple[int, int, str]] = []
    for match in URL.finditer(html):
        if match.group("host").lower() not in hosts:
            continue  # most of a page's URLs: images, links (no parsing needed)
        url = match.group(0)
        if url not in known:
            known[url] = cdn_map.resolve(url)
        resolution = known[url]
        if resolution is not None:
            replacements.append((match.start(), match.end(), local_url(resolution)))
    if not replacements:
        return html
    tags = sorted({tag for start, _, _ in replacements if (tag := _loading_tag_around(html, start))})
    pending = deque(replacements)
    pieces: list[str] = []
    cursor = 0
    for tag_start, tag_end in tags:
        pieces.append(_replaced(html, cursor, tag_start, pending))
        pieces.append(_INTEGRITY.sub("", _replaced(html, tag_start, tag_end, pending)))
        cursor = tag_end
    pieces.append(_replaced(html, cursor, len(html), pending))
    return "".join(pieces)


def _loading_tag_around(html: str, position: int) -> tuple[int, int] | None:
    """The span of the ``<script ...>`` or ``<link ...>`` tag ``position`` is inside, if it is in one."""
    opening = html.rfind("<", 0, position)
    if opening < 0 or html.find(">", opening, position) >= 0:
        return None
    if not _LOADING_TAG_START.match(html, opening):
        return None
    closing = html.find(">", position)
    if closing < 0 or html.find("<", position, closing) >= 0:
        return None  # never closed before another tag starts: not a tag to edit
    return (opening, closing + 1)


def _replaced(html: str, start: int, end: int, pending: deque[tuple[int, int, str]]) -> str:
    """``html[start:end]`` with the pending replacements inside it made, in order, taken off ``pending``.

    Segments come in page order and a URL never spans a ``<`` or ``>``, so each
    replacement lies inside exactly one segment.
    """
    pieces: list[str] = []
    cursor = start
    while pending and pending[0][1] <= end:
        url_start, url_end, new = pending.popleft()
        pieces.append(html[cursor:url_start])
        pieces.append(new)
        cursor = url_end
    pieces.append(html[cursor:end])
    return "".join(pieces)


@dataclass
class PageReport:
    """What a page loads from elsewhere: served by hitforge (maybe substituted), or not served."""

    served: list[Resolution] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)

    @property
    def substituted(self) -> list[Resolution]:
        return [r for r in self.served if r.substituted]


def loaded_urls(html: str) -> list[str]:
    """The scripts and stylesheets ``html`` loads, in page order, each once."""
    with warnings.catch_warnings():
        # A page that is only a URL is still a page here (bs4 warns it might be meant as a locator).
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(html, "html.parser")
    urls: list[str] = []
    for element in soup.find_all(["script", "link", "style"]):
        if not isinstance(element, Tag):
            continue
        if element.name == "script" and element.get("src"):
            urls.append(str(element["src"]))
        elif element.name == "link" and element.get("href"):
            rel = element.get("rel") or ""
            rels = {r.lower() for r in (rel if isinstance(rel, list) else str(rel).split())}
            if rels & _STYLESHEET_RELS:
                urls.append(str(element["href"]))
        elif element.name == "style":
            urls.extend(_IMPORT.findall(element.get_text()))
    return list(dict.fromkeys(u.strip() for u in urls))


def page_report(html: str, cdn_map: CdnMap, served_elsewhere: Iterable[re.Pattern[str]] = ()) -> PageReport:
    """Each external script and stylesheet of ``html``: served from the map, or not served at all.

    ``served_elsewhere`` are patterns of URLs hitforge serves by other means (the
    crowd elements, MTurk's externalHIT_v1.js). URLs holding a ``${placeholder}``
    depend on a CSV row and are not judged; relative URLs are the page's own.
    """
    others = list(served_elsewhere)
    report = PageReport()
    for url in loaded_urls(html):
        if "${" in url or not URL.fullmatch(url):
            continue
        resolution = cdn_map.resolve(url)
        if resolution is not None:
            report.served.append(resolution)
        elif not any(_served_by(pattern, url) for pattern in others):
            report.unserved.append(url)
    return report


def _served_by(pattern: re.Pattern[str], url: str) -> bool:
    """Whether ``pattern`` (a whole script URL) names ``url``, a query string or fragment aside."""
    match = pattern.match(url)
    return match is not None and url[match.end() : match.end() + 1] in ("", "?", "#")
