"""QuestionForm documents: parsed for rendering, answers read, checked and stored as MTurk does.

The worker site renders the parsed form (``server/templates/worker/_question_form.html``)
and posts it back; ``read_answers`` checks the posted fields against each
question's AnswerSpecification and ``answers_to_qfa`` writes the
QuestionFormAnswers document MTurk would store (``FreeText`` for free-text
answers, ``SelectionIdentifier`` per chosen option, ``OtherSelectionText``,
``UploadedFileSizeInBytes`` and ``UploadedFileKey`` for a FileUploadAnswer,
whose file ``store_uploads`` keeps in ``market_uploaded_files``).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from lxml import etree
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from hits.market.errors import invalid
from hits.market.models.requests import UploadedFile
from hits.market.question_form_html import formatted_to_html, safe_url
from hits.wire.documents import QFA_NS, QUESTION_FORM_NAMESPACES

# No entities, no network: QuestionForms and AnswerKeys come from requesters.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
MAX_FREE_TEXT = 65_535
# The largest file this site stores for one FileUploadAnswer, whatever MaxFileSizeInBytes allows (2 GB).
UPLOAD_LIMIT_BYTES = 10_000_000


@dataclass(frozen=True)
class Content:
    """One block of an Overview, a QuestionContent or a Selection."""

    kind: str  # title | text | list | image | link | html | unsupported
    text: str = ""
    items: tuple[str, ...] = ()
    url: str = ""
    html: Markup = Markup("")


@dataclass(frozen=True)
class FreeTextSpec:
    """A FreeTextAnswer with its Constraints."""

    default: str = ""
    lines: int = 1
    numeric: bool = False
    min_value: Decimal | None = None
    max_value: Decimal | None = None
    min_length: int | None = None
    max_length: int | None = None
    patterns: tuple[tuple[str, str, str], ...] = ()  # (regex, flags, error text)


@dataclass(frozen=True)
class Choice:
    """One Selection of a SelectionAnswer."""

    identifier: str
    label: str  # plain text, for the accessible name
    content: tuple[Content, ...] = ()


@dataclass(frozen=True)
class SelectionSpec:
    """A SelectionAnswer: its choices, how many may be picked and how to show them."""

    choices: tuple[Choice, ...]
    min_count: int = 1
    max_count: int = 1
    style: str = "radiobutton"  # radiobutton | checkbox | dropdown | list
    other: FreeTextSpec | None = None


def file_size_text(size: int) -> str:
    """Bytes as a worker reads them: ``900 bytes``, ``12.5 kB``, ``3 MB``."""
    if size < 1000:
        return f"{size} byte{'' if size == 1 else 's'}"
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"  # pragma: no cover - the loop always returns


@dataclass(frozen=True)
class FileUploadSpec:
    """A FileUploadAnswer: the file's size bounds in bytes (the maximum capped at this site's limit)."""

    min_bytes: int
    max_bytes: int

    @property
    def bounds_text(self) -> str:
        return f"{file_size_text(self.min_bytes)} to {file_size_text(self.max_bytes)}"


@dataclass(frozen=True)
class Upload:
    """A file as posted: its name and type as the browser gave them, and its bytes."""

    filename: str
    content_type: str
    data: bytes


@dataclass(frozen=True)
class FormQuestion:
    """One Question of the form; ``name`` is its HTML field name."""

    number: int
    identifier: str
    label: str
    required: bool
    content: tuple[Content, ...]
    free_text: FreeTextSpec | None = None
    selection: SelectionSpec | None = None
    file_upload: FileUploadSpec | None = None

    @property
    def name(self) -> str:
        return f"q{self.number}"


@dataclass(frozen=True)
class Overview:
    """An Overview block between questions."""

    content: tuple[Content, ...]


@dataclass(frozen=True)
class QuestionFormDoc:
    """A parsed QuestionForm: Overviews and Questions in document order."""

    parts: tuple[Overview | FormQuestion, ...]

    @property
    def questions(self) -> list[FormQuestion]:
        return [p for p in self.parts if isinstance(p, FormQuestion)]

    @property
    def has_uploads(self) -> bool:
        return any(q.file_upload is not None for q in self.questions)


@dataclass
class Answer:
    """What a worker gave for one question."""

    free_text: str | None = None
    selections: list[str] = field(default_factory=list)
    other: str | None = None
    upload: Upload | None = None
    file_key: str | None = None  # set by store_uploads


def _name(el: etree._Element) -> str:
    return el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else ""


def _kids(el: etree._Element) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str)]


def _child(el: etree._Element, name: str) -> etree._Element | None:
    return next((c for c in _kids(el) if _name(c) == name), None)


def _text(el: etree._Element | None) -> str:
    return "" if el is None else (el.text or "").strip()


def _binary(el: etree._Element) -> Content:
    mime = _child(el, "MimeType")
    kind = _text(_child(mime, "Type")) if mime is not None else ""
    url = safe_url(_text(_child(el, "DataURL"))) or ""
    alt = _text(_child(el, "AltText"))
    if not url:
        return Content("text", text=alt)
    return Content("image" if kind == "image" else "link", text=alt or url, url=url)


def _content(el: etree._Element) -> tuple[Content, ...]:
    blocks: list[Content] = []
    for child in _kids(el):
        name = _name(child)
        if name == "SelectionIdentifier":
            continue  # a Selection's id sits beside its content
        if name == "Title":
            blocks.append(Content("title", text=_text(child)))
        elif name == "Text":
            blocks.append(Content("text", text=_text(child)))
        elif name == "List":
            blocks.append(Content("list", items=tuple(_text(i) for i in _kids(child))))
        elif name == "FormattedContent":
            blocks.append(Content("html", html=formatted_to_html(child.text or "")))
        elif name == "Binary":
            blocks.append(_binary(child))
        else:  # Application (Flash, Java), EmbeddedBinary: nothing a browser runs today
            blocks.append(Content("unsupported", text=name))
    return tuple(blocks)


def _int_attr(el: etree._Element, name: str) -> int | None:
    value = el.get(name)
    return None if value is None else int(value)


def _free_text(el: etree._Element) -> FreeTextSpec:
    spec: dict[str, object] = {}
    lines = _text(_child(el, "NumberOfLinesSuggestion"))
    spec["lines"] = max(1, min(int(lines), 30)) if lines else 1
    constraints = _child(el, "Constraints")
    patterns: list[tuple[str, str, str]] = []
    if constraints is not None:
        for c in _kids(constraints):
            if _name(c) == "IsNumeric":
                spec["numeric"] = True
                low, high = _int_attr(c, "minValue"), _int_attr(c, "maxValue")
                spec["min_value"] = None if low is None else Decimal(low)
                spec["max_value"] = None if high is None else Decimal(high)
            elif _name(c) == "Length":
                spec["min_length"], spec["max_length"] = _int_attr(c, "minLength"), _int_attr(c, "maxLength")
            elif _name(c) == "AnswerFormatRegex":
                patterns.append((c.get("regex", ""), c.get("flags", ""), c.get("errorText", "")))
    spec["patterns"] = tuple(patterns)
    spec["default"] = _text(_child(el, "DefaultText"))
    return FreeTextSpec(**spec)  # type: ignore[arg-type]


def _file_upload(el: etree._Element) -> FileUploadSpec:
    low = _text(_child(el, "MinFileSizeInBytes"))
    high = _text(_child(el, "MaxFileSizeInBytes"))
    min_bytes = max(int(low), 1) if low else 1
    max_bytes = min(int(high), UPLOAD_LIMIT_BYTES) if high else UPLOAD_LIMIT_BYTES
    return FileUploadSpec(min_bytes, max_bytes)


def _selection(el: etree._Element, required: bool) -> SelectionSpec:
    choices: list[Choice] = []
    other: FreeTextSpec | None = None
    selections = _child(el, "Selections")
    for sel in _kids(selections) if selections is not None else []:
        if _name(sel) == "OtherSelection":
            other = _free_text(sel)
            continue
        rendered = _content(sel)
        label = " ".join(b.text for b in rendered if b.kind in ("text", "image", "link") and b.text)
        if not label:
            label = _text(_child(sel, "SelectionIdentifier"))
        content = tuple(b for b in rendered if b.kind not in ("text",))
        choices.append(Choice(_text(_child(sel, "SelectionIdentifier")), label, content))
    max_text = _text(_child(el, "MaxSelectionCount"))
    min_text = _text(_child(el, "MinSelectionCount"))
    max_count = int(max_text) if max_text else 1
    min_count = int(min_text) if min_text else (1 if required else 0)
    style = _text(_child(el, "StyleSuggestion")) or ("checkbox" if max_count > 1 else "radiobutton")
    if style in ("list", "multichooser"):
        style = "list"
    elif style in ("dropdown", "combobox"):
        style = "dropdown" if max_count == 1 else "list"
    elif style == "radiobutton" and max_count > 1:
        style = "checkbox"  # a radio group cannot hold several answers
    elif style not in ("radiobutton", "checkbox"):
        style = "radiobutton" if max_count == 1 else "checkbox"
    return SelectionSpec(tuple(choices), min_count, max(max_count, 1), style, other)


def parse_question_form(xml: str) -> QuestionFormDoc:
    """Parse a QuestionForm (2005-10-01 or 2017-11-06) into what the renderer needs.

    Raises ``RequestError`` (InvalidParameterValue) if it is not a QuestionForm.
    """
    try:
        root = etree.fromstring(xml.strip().encode("utf-8"), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise invalid(f"There was an error parsing the QuestionForm: {exc}") from exc
    if (
        root.tag.rsplit("}", 1)[0].lstrip("{") not in QUESTION_FORM_NAMESPACES
        or _name(root) != "QuestionForm"
    ):
        raise invalid("Not a QuestionForm document.")
    parts: list[Overview | FormQuestion] = []
    number = 0
    for el in _kids(root):
        if _name(el) == "Overview":
            parts.append(Overview(_content(el)))
            continue
        if _name(el) != "Question":
            continue
        number += 1
        required = _text(_child(el, "IsRequired")).lower() in ("true", "1")
        content_el = _child(el, "QuestionContent")
        content = _content(content_el) if content_el is not None else ()
        texts = [c.text for c in content if c.kind in ("title", "text") and c.text]
        label = " ".join(texts) or _text(_child(el, "DisplayName")) or f"Question {number}"
        spec = _child(el, "AnswerSpecification")
        answer = _kids(spec)[0] if spec is not None and _kids(spec) else None
        kind = _name(answer) if answer is not None else ""
        parts.append(
            FormQuestion(
                number=number,
                identifier=_text(_child(el, "QuestionIdentifier")),
                label=label,
                required=required,
                content=tuple(c for c in content if c.kind not in ("title", "text")),
                free_text=_free_text(answer) if answer is not None and kind == "FreeTextAnswer" else None,
                selection=_selection(answer, required)
                if answer is not None and kind == "SelectionAnswer"
                else None,
                file_upload=_file_upload(answer)
                if answer is not None and kind == "FileUploadAnswer"
                else None,
            )
        )
    return QuestionFormDoc(tuple(parts))


def _check_free_text(spec: FreeTextSpec, value: str) -> str | None:
    """Why ``value`` breaks the constraints, or None."""
    if len(value) > MAX_FREE_TEXT:
        return f"Please keep the answer under {MAX_FREE_TEXT} characters."
    if spec.min_length is not None and len(value) < spec.min_length:
        return f"Please write at least {spec.min_length} characters."
    if spec.max_length is not None and len(value) > spec.max_length:
        return f"Please write at most {spec.max_length} characters."
    if spec.numeric:
        try:
            number = Decimal(value)
        except InvalidOperation:
            return "Please enter a number."
        if not number.is_finite():
            return "Please enter a number."
        if spec.min_value is not None and number < spec.min_value:
            return f"Please enter a number of at least {spec.min_value}."
        if spec.max_value is not None and number > spec.max_value:
            return f"Please enter a number of at most {spec.max_value}."
    for regex, flags, error in spec.patterns:
        try:
            pattern = re.compile(regex, re.IGNORECASE if "i" in flags else 0)
        except re.error:
            continue  # a broken requester pattern must not lock the worker out
        if pattern.search(value) is None:
            return error or "The answer is not in the expected format."
    return None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _read_selection(spec: SelectionSpec, picked: list[str], other: str) -> tuple[Answer, str | None]:
    known = {c.identifier for c in spec.choices}
    picked = list(dict.fromkeys(p for p in picked if p))  # each choice once, in the order sent
    answer = Answer(selections=picked, other=other or None)
    if any(p not in known for p in picked):
        return answer, "Please choose from the options shown."
    count = len(picked) + (1 if other else 0)
    if other and spec.other is not None:
        problem = _check_free_text(spec.other, other)
        if problem:
            return answer, problem
    if count and count < spec.min_count:
        return answer, f"Please choose at least {_plural(spec.min_count, 'option')}."
    if count > spec.max_count:
        return answer, f"Please choose at most {_plural(spec.max_count, 'option')}."
    return answer, None


def _check_upload(spec: FileUploadSpec, upload: Upload) -> str | None:
    size = len(upload.data)
    if size > spec.max_bytes:
        return f"Please choose a file of at most {file_size_text(spec.max_bytes)}."
    if size < spec.min_bytes:
        return f"Please choose a file of at least {file_size_text(spec.min_bytes)}."
    return None


def read_answers(
    doc: QuestionFormDoc,
    getlist: Callable[[str], list[str]],
    getfile: Callable[[str, int], Upload | None] | None = None,
) -> tuple[dict[str, Answer], dict[str, str]]:
    """The worker's answers from posted fields, and an error per question that needs fixing.

    ``getlist(name)`` returns every value posted under ``name`` (``request.form.getlist``);
    ``getfile(name, limit)`` the file posted under ``name``, read up to ``limit + 1``
    bytes, or None. Without ``getfile`` FileUploadAnswer questions are left out
    (qualification tests take no files). Errors are keyed by the question's
    field name; answers by QuestionIdentifier.
    """
    answers: dict[str, Answer] = {}
    errors: dict[str, str] = {}
    for q in doc.questions:
        problem: str | None = None
        if q.free_text is not None:
            value = (getlist(q.name) or [""])[0].strip()
            answer = Answer(free_text=value)
            empty = not value
            if value:
                problem = _check_free_text(q.free_text, value)
        elif q.selection is not None:
            other = (getlist(q.name + "-other") or [""])[0].strip() if q.selection.other else ""
            answer, problem = _read_selection(q.selection, getlist(q.name), other)
            empty = not answer.selections and not answer.other
        elif q.file_upload is not None and getfile is not None:
            upload = getfile(q.name, q.file_upload.max_bytes)
            empty = upload is None or not upload.data
            answer = Answer(upload=None if empty else upload)
            if upload is not None and not empty:
                problem = _check_upload(q.file_upload, upload)
        else:
            continue  # a FileUploadAnswer where no files are taken
        if empty and q.required:
            problem = "This question needs an answer."
        if problem:
            errors[q.name] = problem
        # Unanswered optional questions are stored empty: every question has its Answer element.
        answers[q.identifier] = answer
    return answers, errors


def answers_to_qfa(answers: dict[str, Answer]) -> str:
    """QuestionFormAnswers XML for QuestionForm answers, in MTurk's layout."""
    root = etree.Element(f"{{{QFA_NS}}}QuestionFormAnswers", nsmap={None: QFA_NS})
    for qid, answer in answers.items():
        node = etree.SubElement(root, f"{{{QFA_NS}}}Answer")
        etree.SubElement(node, f"{{{QFA_NS}}}QuestionIdentifier").text = qid
        if answer.free_text is not None:
            etree.SubElement(node, f"{{{QFA_NS}}}FreeText").text = answer.free_text
            continue
        if answer.upload is not None:
            if answer.file_key is None:
                raise ValueError("store_uploads() gives each uploaded file its key first")
            etree.SubElement(node, f"{{{QFA_NS}}}UploadedFileSizeInBytes").text = str(len(answer.upload.data))
            etree.SubElement(node, f"{{{QFA_NS}}}UploadedFileKey").text = answer.file_key
            continue
        for selection in answer.selections:
            etree.SubElement(node, f"{{{QFA_NS}}}SelectionIdentifier").text = selection
        if answer.other:
            etree.SubElement(node, f"{{{QFA_NS}}}OtherSelectionText").text = answer.other
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=False).decode()


def _clean_filename(name: str) -> str:
    base = re.split(r"[\\/]", name)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    return base[:255] or "upload"


def store_uploads(session: Session, assignment_id: str, answers: dict[str, Answer]) -> None:
    """Keep each uploaded file of an assignment's answers and give the answer its UploadedFileKey.

    Call once, for an assignment still in progress; the files are written in the
    caller's transaction, so a submission that is refused keeps none of them.
    """
    for qid, answer in answers.items():
        if answer.upload is None:
            continue
        answer.file_key = secrets.token_hex(16)
        session.add(
            UploadedFile(
                key=answer.file_key,
                assignment_id=assignment_id,
                question_identifier=qid,
                filename=_clean_filename(answer.upload.filename),
                content_type=answer.upload.content_type[:255] or "application/octet-stream",
                size_bytes=len(answer.upload.data),
                data=answer.upload.data,
            )
        )
    session.flush()


def uploaded_file_key(session: Session, assignment_id: str, question_identifier: str) -> str | None:
    """The UploadedFileKey of the file given for one question of an assignment, if any."""
    return session.scalar(
        select(UploadedFile.key).where(
            UploadedFile.assignment_id == assignment_id,
            UploadedFile.question_identifier == question_identifier,
        )
    )


def form_values(doc: QuestionFormDoc, getlist: Callable[[str], list[str]]) -> dict[str, list[str]]:
    """The posted values by field name, to show the worker's input again after an error."""
    values: dict[str, list[str]] = {}
    for q in doc.questions:
        values[q.name] = getlist(q.name)
        values[q.name + "-other"] = getlist(q.name + "-other")
    return values
