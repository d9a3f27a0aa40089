"""MTurk's XML schemas, loaded offline, and validation of the documents requesters send.

The schemas live in ``hits/wire/schemas`` (the XHTML subset used by
FormattedContent imports ``xml.xsd``, mapped to a local copy: nothing is
fetched from the network). Documents are validated once, when they arrive
(CreateHIT, CreateQualificationType, UpdateQualificationType); a document the
schema refuses gets MTurk's parse error, with the schema's reason.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path

import xmlschema
from lxml import etree

SCHEMAS = Path(__file__).resolve().parent / "schemas"
XML_NS = "http://www.w3.org/XML/1998/namespace"
XHTML_NS = "http://www.w3.org/1999/xhtml"
_MTURK = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/"
#: Namespace of a question document -> the schema file that defines it.
QUESTION_SCHEMAS = {
    _MTURK + "2006-07-14/ExternalQuestion.xsd": "ExternalQuestion-2006-07-14.xsd",
    _MTURK + "2011-11-11/HTMLQuestion.xsd": "HTMLQuestion-2011-11-11.RECONSTRUCTED.xsd",
    _MTURK + "2005-10-01/QuestionForm.xsd": "QuestionForm-2005-10-01.xsd",
    _MTURK + "2017-11-06/QuestionForm.xsd": "QuestionForm-2017-11-06.DERIVED.xsd",
}
ANSWER_KEY_SCHEMA = "AnswerKey-2005-10-01.xsd"
ANSWERS_SCHEMA = "QuestionFormAnswers-2005-10-01.xsd"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


class SchemaViolation(ValueError):
    """A document the schema refuses; the message says where and why."""


@cache
def schema(name: str) -> xmlschema.XMLSchema:
    """A schema from ``hits/wire/schemas``, loaded offline (``xml.xsd`` mapped locally)."""
    return xmlschema.XMLSchema(
        str(SCHEMAS / name), locations=[(XML_NS, str(SCHEMAS / "xml.xsd"))], allow="local", defuse="always"
    )


def _check(name: str, xml: str) -> None:
    try:
        schema(name).validate(xml)
    except xmlschema.XMLSchemaValidationError as exc:
        where = f" at {exc.path}" if exc.path else ""
        raise SchemaViolation(f"does not validate against {name}{where}: {exc.reason}") from exc


@lru_cache(maxsize=256)
def validate_question(namespace: str, xml: str) -> None:
    """Validate a Question document of ``namespace``; QuestionForms' FormattedContent too.

    Memoised on the exact text: a campaign usually sends one ExternalQuestion for
    all its HITs, and validation is a pure function of the document (refusals
    raise, and are never cached).
    """
    if namespace not in QUESTION_SCHEMAS:
        raise SchemaViolation(f"unknown question namespace {namespace}")
    _check(QUESTION_SCHEMAS[namespace], xml)
    if "QuestionForm" in namespace:
        _check_formatted_content(namespace, xml)


def _check_formatted_content(namespace: str, xml: str) -> None:
    root = etree.fromstring(xml.strip().encode("utf-8"), _PARSER)
    for node in root.iter(f"{{{namespace}}}FormattedContent"):
        _check(
            "FormattedContentXHTMLSubset-2006-07-14.xsd",
            f'<FormattedContent xmlns="{XHTML_NS}">{node.text or ""}</FormattedContent>',
        )


def validate_answer_key(xml: str) -> None:
    """Validate an AnswerKey document."""
    _check(ANSWER_KEY_SCHEMA, xml)


def validate_answers(xml: str) -> None:
    """Validate a QuestionFormAnswers document (what the marketplace stores and returns)."""
    _check(ANSWERS_SCHEMA, xml)


def check_test_documents(test: object, answer_key: object) -> None:
    """A qualification's Test (a QuestionForm) and AnswerKey: strings, at most 65,535 bytes, valid.

    Raises ``SchemaViolation`` naming the document.
    """
    for label, doc in (("Test", test), ("AnswerKey", answer_key)):
        if doc is None:
            continue
        if not isinstance(doc, str) or not doc.strip():
            raise SchemaViolation(f"{label} must be an XML document")
        if len(doc.encode("utf-8")) > 65_535:
            raise SchemaViolation(f"{label} exceeds 65535 bytes")
        try:
            root = etree.fromstring(doc.strip().encode("utf-8"), _PARSER)
        except etree.XMLSyntaxError as exc:
            raise SchemaViolation(f"{label} is not well-formed XML: {exc}") from exc
        namespace = root.tag[1:].partition("}")[0] if root.tag.startswith("{") else ""
        try:
            if label == "Test":
                if "QuestionForm" not in namespace:
                    raise SchemaViolation("a QuestionForm document is required")
                validate_question(namespace, doc.strip())
            else:
                validate_answer_key(doc.strip())
        except SchemaViolation as exc:
            raise SchemaViolation(f"{label} {exc}") from exc
