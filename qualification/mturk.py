"""Exporting a paper as an MTurk-native qualification test, and grading MTurk answers.

``question_form(bank, paper, media_url)`` writes the ``Test`` (QuestionForm
2005-10-01) and ``answer_key(bank, paper)`` the ``AnswerKey``; both validate
against the schemas in ``hits/market/schemas`` without network access (the
XHTML subset used by FormattedContent imports ``xml.xsd``, which is mapped to
a local copy). MTurk shows every worker the same QuestionForm, so an export is
one paper, one seed. ``grade_answers(answer_key_xml, answers_xml)`` computes the
qualification value MTurk would from a QuestionFormAnswers document.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from lxml import etree

from hits.market.xml_schemas import schema
from qualification.assembly import Paper
from qualification.bank import Bank

XML_NS = "http://www.w3.org/XML/1998/namespace"
XHTML_NS = "http://www.w3.org/1999/xhtml"
_BASE = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/"
QF_NS = _BASE + "QuestionForm.xsd"
AK_NS = _BASE + "AnswerKey.xsd"
QFA_NS = _BASE + "QuestionFormAnswers.xsd"

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


def _el(parent: etree._Element, tag: str, text: str | None = None, ns: str = QF_NS) -> etree._Element:
    node = etree.SubElement(parent, f"{{{ns}}}{tag}")
    if text is not None:
        node.text = text
    return node


def _formatted(parent: etree._Element, xhtml: str) -> None:
    _el(parent, "FormattedContent").text = etree.CDATA(xhtml)


def question_form(bank: Bank, paper: Paper, media_url: str) -> str:
    """The QuestionForm XML (the ``Test`` of CreateQualificationType) for ``paper``.

    ``media_url`` is the http(s) URL images are served under, by their served names
    (``<media_url>/<bank.image_name(item)>``, see ``qualification.media``).
    """
    root = etree.Element(f"{{{QF_NS}}}QuestionForm", nsmap={None: QF_NS})
    number = 0
    for section in bank.sections:
        overview = _el(root, "Overview")
        _el(overview, "Title", section.title or section.id.title())
        _formatted(overview, f"<p>{escape(section.instructions)}</p>")
        for entry in (e for e in paper.items if e.section == section.id):
            number += 1
            item = bank.items[entry.item_id]
            question = _el(root, "Question")
            _el(question, "QuestionIdentifier", item.id)
            _el(question, "DisplayName", f"Question {number}")
            _el(question, "IsRequired", "true")
            content = _el(question, "QuestionContent")
            if item.prompt:
                _el(content, "Text", item.prompt)
            if item.sentence:
                _el(content, "Text", item.sentence)
            image = bank.image_name(item)
            if image:
                src = media_url.rstrip("/") + "/" + image
                _formatted(content, f"<p><img src={quoteattr(src)} alt={quoteattr(item.alt or '')}/></p>")
            spec = _el(_el(question, "AnswerSpecification"), "SelectionAnswer")
            _el(spec, "StyleSuggestion", "radiobutton")
            selections = _el(spec, "Selections")
            texts = {c.id: c.text for c in bank.choices(item)}
            for choice_id in entry.choice_order:
                selection = _el(selections, "Selection")
                _el(selection, "SelectionIdentifier", choice_id)
                _el(selection, "Text", texts[choice_id])
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True).decode()


def answer_key(bank: Bank, paper: Paper) -> str:
    """The AnswerKey XML: one point per correct selection, PercentageMapping to 0..100."""
    root = etree.Element(f"{{{AK_NS}}}AnswerKey", nsmap={None: AK_NS})
    for entry in paper.items:
        question = _el(root, "Question", ns=AK_NS)
        _el(question, "QuestionIdentifier", entry.item_id, ns=AK_NS)
        option = _el(question, "AnswerOption", ns=AK_NS)
        _el(option, "SelectionIdentifier", bank.items[entry.item_id].answer, ns=AK_NS)
        _el(option, "AnswerScore", "1", ns=AK_NS)
        _el(question, "DefaultScore", "0", ns=AK_NS)
    mapping = _el(_el(root, "QualificationValueMapping", ns=AK_NS), "PercentageMapping", ns=AK_NS)
    _el(mapping, "MaximumSummedScore", str(len(paper.items)), ns=AK_NS)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True).decode()


def selection_answers_xml(answers: dict[str, str]) -> str:
    """QuestionFormAnswers XML for single-choice answers (question id -> selection id)."""
    root = etree.Element(f"{{{QFA_NS}}}QuestionFormAnswers", nsmap={None: QFA_NS})
    for qid, selection in answers.items():
        answer = _el(root, "Answer", ns=QFA_NS)
        _el(answer, "QuestionIdentifier", qid, ns=QFA_NS)
        _el(answer, "SelectionIdentifier", selection, ns=QFA_NS)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode()


def validate_question_form(xml: str) -> None:
    """Raise ``xmlschema.XMLSchemaValidationError`` unless ``xml`` is a valid QuestionForm.

    Each FormattedContent payload is also checked against the XHTML subset MTurk accepts.
    """
    schema("QuestionForm-2005-10-01.xsd").validate(xml)
    root = etree.fromstring(xml.encode("utf-8"), _PARSER)
    xhtml = schema("FormattedContentXHTMLSubset-2006-07-14.xsd")
    for node in root.iter(f"{{{QF_NS}}}FormattedContent"):
        xhtml.validate(f'<FormattedContent xmlns="{XHTML_NS}">{node.text or ""}</FormattedContent>')


def validate_answer_key(xml: str) -> None:
    """Raise ``xmlschema.XMLSchemaValidationError`` unless ``xml`` is a valid AnswerKey."""
    schema("AnswerKey-2005-10-01.xsd").validate(xml)


def _children(node: etree._Element, name: str, ns: str) -> list[etree._Element]:
    return node.findall(f"{{{ns}}}{name}")


def _int(node: etree._Element, name: str, ns: str, default: int | None = None) -> int:
    child = node.find(f"{{{ns}}}{name}")
    if child is None:
        if default is None:
            raise ValueError(f"missing {name}")
        return default
    return int((child.text or "").strip())


def grade_answers(answer_key_xml: str, answers_xml: str) -> int:
    """The qualification value MTurk computes from an AnswerKey and QuestionFormAnswers.

    Per question, the worker earns the AnswerScore of the first AnswerOption whose
    SelectionIdentifiers equal the worker's selections exactly, else the
    DefaultScore (0 when absent). The summed score goes through the
    QualificationValueMapping: PercentageMapping is ``100 * sum // max``
    (rounded down, as ``grading.percentage``), ScaleMapping multiplies, RangeMapping
    looks the sum up; with no mapping the value is the sum. A FreeText answer
    counts as a single selection (the worker site posts form fields as FreeText).
    """
    schema("QuestionFormAnswers-2005-10-01.xsd").validate(answers_xml)
    selected: dict[str, set[str]] = {}
    for answer in _children(etree.fromstring(answers_xml.encode("utf-8"), _PARSER), "Answer", QFA_NS):
        qid = (answer.findtext(f"{{{QFA_NS}}}QuestionIdentifier") or "").strip()
        values = [(n.text or "").strip() for n in _children(answer, "SelectionIdentifier", QFA_NS)]
        values += [(n.text or "").strip() for n in _children(answer, "FreeText", QFA_NS)]
        selected.setdefault(qid, set()).update(v for v in values if v)
    key = etree.fromstring(answer_key_xml.encode("utf-8"), _PARSER)
    total = 0
    for question in _children(key, "Question", AK_NS):
        qid = (question.findtext(f"{{{AK_NS}}}QuestionIdentifier") or "").strip()
        mine = selected.get(qid, set())
        score = _int(question, "DefaultScore", AK_NS, default=0)
        for option in _children(question, "AnswerOption", AK_NS):
            wanted = {(n.text or "").strip() for n in _children(option, "SelectionIdentifier", AK_NS)}
            if wanted == mine:
                score = _int(option, "AnswerScore", AK_NS)
                break
        total += score
    mapping = key.find(f"{{{AK_NS}}}QualificationValueMapping")
    if mapping is None:
        return total
    percentage = mapping.find(f"{{{AK_NS}}}PercentageMapping")
    if percentage is not None:
        maximum = _int(percentage, "MaximumSummedScore", AK_NS)
        return 100 * total // maximum if maximum else 0
    scale = mapping.find(f"{{{AK_NS}}}ScaleMapping")
    if scale is not None:
        return int(total * float(scale.findtext(f"{{{AK_NS}}}SummedScoreMultiplier") or "1"))
    ranges = mapping.find(f"{{{AK_NS}}}RangeMapping")
    assert ranges is not None  # noqa: S101 - the schema allows exactly these three mappings
    for bucket in _children(ranges, "SummedScoreRange", AK_NS):
        if _int(bucket, "InclusiveLowerBound", AK_NS) <= total <= _int(bucket, "InclusiveUpperBound", AK_NS):
            return _int(bucket, "QualificationValue", AK_NS)
    return _int(ranges, "OutOfRangeQualificationValue", AK_NS)
