"""The Question and Answer XML that HITs carry, in MTurk's formats.

Only what the marketplace needs to serve a HIT and store an answer lives here:
recognising the question type, reading an ExternalQuestion's URL, and writing
and reading QuestionFormAnswers, the XML MTurk stores submitted answers in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from xml.sax.saxutils import escape

from lxml import etree

from hits.market.errors import invalid
from hits.market.xml_schemas import QUESTION_SCHEMAS, SchemaViolation, validate_question

EXTERNAL_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
)
HTML_QUESTION_NS = (
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2011-11-11/HTMLQuestion.xsd"
)
QUESTION_FORM_NAMESPACES = {
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionForm.xsd",
    "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2017-11-06/QuestionForm.xsd",
}
QFA_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionFormAnswers.xsd"
MAX_QUESTION_BYTES = 65_535

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


@dataclass(frozen=True)
class ParsedQuestion:
    """A HIT's question: its kind and what the worker site needs to show it."""

    kind: str  # "ExternalQuestion" | "HTMLQuestion" | "QuestionForm"
    external_url: str | None = None
    frame_height: int = 0
    html: str | None = None


def _local(tag: str) -> tuple[str, str]:
    ns, _, name = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return ns, name


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


#: Characters XML 1.0 cannot hold, even escaped: C0 controls but tab, newline and carriage
#: return, surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` escaped for XML, each character XML cannot hold replaced by U+FFFD.

    A worker's answer may hold one (a vertical tab pasted from a word processor): written as
    it is, the stored answer would be XML no parser reads, and every sync, review and export
    that reads it would fail. The replacement keeps the rest of the answer, and shows where.
    """
    return escape(_NOT_XML.sub("\ufffd", text))


def answers_to_xml(fields: list[tuple[str, str]]) -> str:
    """QuestionFormAnswers XML for submitted form fields, as MTurk stores them."""
    parts = [
        f'<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<QuestionFormAnswers xmlns="{QFA_NS}">'
    ]
    for name, value in fields:
        parts.append(
            f"<Answer><QuestionIdentifier>{xml_text(name)}</QuestionIdentifier>"
            f"<FreeText>{xml_text(value)}</FreeText></Answer>"
        )
    parts.append("</QuestionFormAnswers>")
    return "".join(parts)


def xml_to_answers(xml: str) -> dict[str, str]:
    """Read QuestionFormAnswers back into ``{QuestionIdentifier: text}``.

    Repeated identifiers (multi-valued fields) are joined with ``|``, as MTurk's
    batch-results CSV does.
    """
    try:
        root = etree.fromstring(xml.encode("utf-8"), _PARSER)
    except etree.XMLSyntaxError:
        # Stored before such characters were replaced on submit (answers_to_xml): read it the same way.
        root = etree.fromstring(_NOT_XML.sub("\ufffd", xml).encode("utf-8"), _PARSER)
    out: dict[str, str] = {}
    for answer in root:
        if not isinstance(answer.tag, str):
            continue
        qid = ""
        values: list[str] = []
        for part in answer:
            if not isinstance(part.tag, str):
                continue
            name = _local(part.tag)[1]
            if name == "QuestionIdentifier":
                qid = part.text or ""
            elif name == "FreeText" or name == "SelectionIdentifier":
                values.append(part.text or "")
        out[qid] = "|".join([out[qid], *values]) if qid in out else "|".join(values)
    return out
