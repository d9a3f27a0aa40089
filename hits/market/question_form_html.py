"""QuestionForm ``FormattedContent`` rebuilt as safe HTML.

MTurk lets requesters put a subset of XHTML in ``FormattedContent``. The worker
site never passes that text through: it parses it and writes a new document
from an allow-list of elements and attributes, escaping every text node and
attribute value, dropping scripts, styles, event handlers and any URL that is
not http(s). What comes out is ``Markup`` because it was built here, escaped
piece by piece, not because the requester's text was trusted.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from lxml import etree
from markupsafe import Markup, escape

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=False)

# The XHTML subset of MTurk's FormattedContent, without anything active.
ALLOWED_TAGS = frozenset(
    [
        "a",
        "abbr",
        "acronym",
        "address",
        "b",
        "big",
        "blockquote",
        "br",
        "caption",
        "cite",
        "code",
        "col",
        "colgroup",
        "dd",
        "del",
        "dfn",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "q",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "tt",
        "u",
        "ul",
        "var",
    ]
)
VOID_TAGS = frozenset({"br", "hr", "img", "col"})
DROPPED_WITH_CONTENT = frozenset({"script", "style", "object", "embed", "iframe", "applet", "form"})
ALLOWED_ATTRS = frozenset(
    [
        "alt",
        "title",
        "width",
        "height",
        "colspan",
        "rowspan",
        "align",
        "valign",
        "border",
        "cellpadding",
        "cellspacing",
        "summary",
        "scope",
        "lang",
        "dir",
        "start",
        "abbr",
    ]
)
URL_ATTRS = frozenset({"href", "src", "cite"})


def safe_url(url: str) -> str | None:
    """``url`` if it is an absolute http(s) URL, else None (no javascript:, data:, relative)."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _attrs(el: etree._Element, tag: str) -> str:
    out: list[str] = []
    for raw_name, raw_value in el.attrib.items():
        name = _local(raw_name)
        value = str(raw_value)
        if name in URL_ATTRS:
            url = safe_url(value)
            if url is None:
                continue
            value = url
        elif name not in ALLOWED_ATTRS:
            continue  # on*, style, class, id: nothing that can run or restyle the site
        out.append(f' {name}="{escape(value)}"')
    if tag == "a":
        out.append(' rel="noopener noreferrer" target="_blank"')
    return "".join(out)


def _render(el: etree._Element, out: list[str]) -> None:
    tag = _local(el.tag)
    if tag in DROPPED_WITH_CONTENT or not isinstance(el.tag, str):
        if el.tail:
            out.append(str(escape(el.tail)))
        return
    allowed = tag in ALLOWED_TAGS
    if allowed:
        out.append(f"<{tag}{_attrs(el, tag)}>")
    if el.text and tag not in VOID_TAGS:
        out.append(str(escape(el.text)))
    for child in el:
        _render(child, out)
    if allowed and tag not in VOID_TAGS:
        out.append(f"</{tag}>")
    if el.tail:
        out.append(str(escape(el.tail)))


def formatted_to_html(xhtml: str) -> Markup:
    """Safe HTML for a FormattedContent payload; unparseable content is shown as plain text."""
    try:
        root = etree.fromstring(f"<root>{xhtml}</root>".encode(), _PARSER)
    except etree.XMLSyntaxError:
        return Markup("<p>{}</p>").format(xhtml)
    out: list[str] = [str(escape(root.text or ""))]
    for child in root:
        _render(child, out)
    return Markup("".join(out))  # noqa: S704 - every piece above was escaped or allow-listed
