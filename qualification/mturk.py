"""Exporting a paper as an MTurk-native qualification test, and grading MTurk answers.

``question_form(bank, paper, media_url)`` writes the ``Test`` (QuestionForm
2005-10-01) and ``answer_key(bank, paper)`` the ``AnswerKey``; both validate
against the schemas in ``hits/wire/schemas`` without network access (the
XHTML subset used by FormattedContent imports ``xml.xsd``, which is mapped to
a local copy). MTurk shows every worker the same QuestionForm, so an export is
one paper, one seed. The AnswerKey yields hitforge's qualification value (the
score if passed, else 0) through a RangeMapping (``answer_key``).
``grade_answers(answer_key_xml, answers_xml)`` computes the qualification value
MTurk would from a QuestionFormAnswers document.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from lxml import etree

from hits.wire.xml_schemas import schema
from qualification.assembly import Paper
from qualification.bank import Bank
from qualification.grading import qualification_value, verdict

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


def section_weights(bank: Bank, paper: Paper) -> list[int]:
    """The points a correct answer earns in each section, so that the sum names every section's count.

    Weights grow like the places of a number whose digits are the sections'
    counts: the first section's answers are worth 1, the next section's
    ``n1 + 1`` (``n1`` being how many questions the first has), and so on. A
    summed score then decodes to exactly one count per section.
    """
    weights, place = [], 1
    for section in bank.sections:
        weights.append(place)
        place *= sum(1 for e in paper.items if e.section == section.id) + 1
    return weights


def value_ranges(bank: Bank, paper: Paper) -> list[tuple[int, int, int]]:
    """(lowest sum, highest sum, qualification value) for every summed score the key can give.

    Each sum is decoded into per-section counts and judged as ``grade`` judges
    them, so the exported key gives the same value as hitforge's own grading,
    including 0 for a high score with a failed section. Neighbouring sums with
    the same value share one range.
    """
    weights = section_weights(bank, paper)
    sizes = [sum(1 for e in paper.items if e.section == s.id) for s in bank.sections]
    highest = sum(w * n for w, n in zip(weights, sizes, strict=True))
    ranges: list[tuple[int, int, int]] = []
    for total in range(highest + 1):
        counts = [(total // w) % (n + 1) for w, n in zip(weights, sizes, strict=True)]
        value = qualification_value(*verdict(bank, counts))
        if ranges and ranges[-1][2] == value:
            ranges[-1] = (ranges[-1][0], total, value)
        else:
            ranges.append((total, total, value))
    return ranges


def answer_key(bank: Bank, paper: Paper) -> str:
    """The AnswerKey XML: a RangeMapping that turns the summed score into hitforge's qualification value.

    A PercentageMapping cannot see sections: it would give 82 to a worker who
    failed one. Correct answers earn their section's weight
    (``section_weights``) and the RangeMapping lists the value of every sum
    (``value_ranges``).
    """
    root = etree.Element(f"{{{AK_NS}}}AnswerKey", nsmap={None: AK_NS})
    weights = dict(zip((s.id for s in bank.sections), section_weights(bank, paper), strict=True))
    for entry in paper.items:
        question = _el(root, "Question", ns=AK_NS)
        _el(question, "QuestionIdentifier", entry.item_id, ns=AK_NS)
        option = _el(question, "AnswerOption", ns=AK_NS)
        _el(option, "SelectionIdentifier", bank.items[entry.item_id].answer, ns=AK_NS)
        _el(option, "AnswerScore", str(weights[entry.section]), ns=AK_NS)
        _el(question, "DefaultScore", "0", ns=AK_NS)
    mapping = _el(_el(root, "QualificationValueMapping", ns=AK_NS), "RangeMapping", ns=AK_NS)
    for low, high, value in value_ranges(bank, paper):
        bucket = _el(mapping, "SummedScoreRange", ns=AK_NS)
        _el(bucket, "InclusiveLowerBound", str(low), ns=AK_NS)
        _el(bucket, "InclusiveUpperBound", str(high), ns=AK_NS)
        _el(bucket, "QualificationValue", str(value), ns=AK_NS)
    _el(mapping, "OutOfRangeQualificationValue", "0", ns=AK_NS)
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
