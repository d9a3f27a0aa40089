"""Questions as the marketplace accepts them: the document's kind and what serving it needs.

The namespaces and the answer documents both halves share are ``hits.wire.documents``.
"""

from __future__ import annotations

from dataclasses import dataclass

from lxml import etree

from hits.market.errors import invalid
from hits.wire.documents import EXTERNAL_QUESTION_NS, HTML_QUESTION_NS, QUESTION_FORM_NAMESPACES
from hits.wire.limits import MAX_QUESTION_BYTES
from hits.wire.xml_schemas import QUESTION_SCHEMAS, SchemaViolation, validate_question

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _local(tag: str) -> tuple[str, str]:
    ns, _, name = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return ns, name


@dataclass(frozen=True)
class ParsedQuestion:
    """A HIT's question: its kind and what the worker site needs to show it."""

    kind: str  # "ExternalQuestion" | "HTMLQuestion" | "QuestionForm"
    external_url: str | None = None
    frame_height: int = 0
    html: str | None = None


def parse_question(xml: str) -> ParsedQuestion:
    """Validate the shape of a Question and extract what serving it needs.

    Raises ``RequestError`` (InvalidParameterValue) for anything MTurk would refuse.
    """
    if len(xml.encode("utf-8")) > MAX_QUESTION_BYTES:
        raise invalid(f"Question exceeds {MAX_QUESTION_BYTES} bytes.")
    try:
        root = etree.fromstring(xml.strip().encode("utf-8"), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise invalid(f"There was an error parsing the XML question or answer data: {exc}") from exc
    ns, name = _local(root.tag)
    if ns in QUESTION_SCHEMAS:
        try:
            validate_question(ns, xml.strip())
        except SchemaViolation as exc:
            raise invalid(f"The {name} document {exc}.") from exc
    children = {_local(child.tag)[1]: child for child in root if isinstance(child.tag, str)}
    if name == "ExternalQuestion" and ns == EXTERNAL_QUESTION_NS:
        url_el, height_el = children.get("ExternalURL"), children.get("FrameHeight")
        if url_el is None or not (url_el.text or "").strip():
            raise invalid("ExternalQuestion requires an ExternalURL.")
        url = (url_el.text or "").strip()
        if not url.startswith(("https://", "http://")):
            raise invalid("ExternalURL must be an http or https URL.")
        return ParsedQuestion("ExternalQuestion", external_url=url, frame_height=_height(height_el))
    if name == "HTMLQuestion" and ns == HTML_QUESTION_NS:
        content, height_el = children.get("HTMLContent"), children.get("FrameHeight")
        if content is None or not (content.text or "").strip():
            raise invalid("HTMLQuestion requires HTMLContent.")
        return ParsedQuestion("HTMLQuestion", html=content.text, frame_height=_height(height_el))
    if name == "QuestionForm" and ns in QUESTION_FORM_NAMESPACES:
        return ParsedQuestion("QuestionForm")
    raise invalid("Question must be an ExternalQuestion, HTMLQuestion or QuestionForm document.")


def _height(el: etree._Element | None) -> int:
    if el is None:
        raise invalid("FrameHeight is required.")
    try:
        value = int((el.text or "").strip())
    except ValueError as exc:
        raise invalid("FrameHeight must be an integer.") from exc
    if value < 0:
        raise invalid("FrameHeight must not be negative.")
    return value
