"""The Question and Answer documents of MTurk's wire protocol: their namespaces and limits,
and QuestionFormAnswers, the XML answers are stored and returned in.

Both halves read these: the marketplace writes answers and serves questions, the
requester side reads the answers ``ListAssignmentsForHIT`` returns. Parsing a
Question as the marketplace accepts it is ``hits.market.questions``.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from lxml import etree

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

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _local(tag: str) -> tuple[str, str]:
    ns, _, name = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
    return ns, name


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
