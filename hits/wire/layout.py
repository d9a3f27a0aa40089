"""Project layouts: MTurk's ``${column}`` placeholders filled from one CSV row.

MTurk's requester UI stored a project's HTML layout and, for each row of the
uploaded CSV, replaced every ``${name}`` whose name is a column of the CSV with
that row's value. The same HTML often carries JavaScript template literals
(``${count + 1}``) and other ``${...}`` text that is not a column: those stay
exactly as written. Values are HTML-escaped, so a row cannot inject markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: ``${ name }``: no braces inside; spaces around the name are allowed, as MTurk allowed them.
PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
#: What a column name looks like in a placeholder; anything else (``${a + b}``) is JavaScript.
_COLUMN_LIKE = re.compile(r"^[A-Za-z_][\w .\-]*$")
_SCRIPT = re.compile(r"<script\b.*?</script\s*>", re.IGNORECASE | re.DOTALL)
#: A layout that brings its own form: a native ``<form>`` or AWS's ``<crowd-form>``, which
#: submits itself (wrapping it in MTurk's form would add a second Submit that posts only the
#: native inputs, not the crowd elements' answers).
_OWN_FORM = re.compile(r"<(?:crowd-)?form(?=[\s>/])", re.IGNORECASE)

HTML_QUESTION = (
    '<HTMLQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2011-11-11/HTMLQuestion.xsd"><HTMLContent><![CDATA[{html}]]></HTMLContent>'
    "<FrameHeight>{height}</FrameHeight></HTMLQuestion>"
)
# A layout from MTurk's requester UI is a fragment: MTurk put it inside its own page and
# form. This is that page, with the form MTurk's externalHIT_v1.js (and hitforge's
# stand-in for it) fills in and submits.
_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<script src="https://s3.amazonaws.com/mturk-public/externalHIT_v1.js" type="text/javascript"></script>
</head><body>
<form name="mturk_form" method="post" id="mturk_form" action="https://www.mturk.com/mturk/externalSubmit">
<input type="hidden" value="" name="assignmentId" id="assignmentId">
{body}
<p><input type="submit" id="submitButton" value="Submit"></p>
</form>
<script>turkSetAssignmentID();</script>
</body></html>"""
_DOCUMENT_HEAD = """<!DOCTYPE html>
<html><head><meta charset="utf-8">
<script src="https://s3.amazonaws.com/mturk-public/externalHIT_v1.js" type="text/javascript"></script>
</head><body>
{body}
<script>turkSetAssignmentID();</script>
</body></html>"""


@dataclass(frozen=True)
class Placeholder:
    """One ``${...}`` in a layout: its name (trimmed) and the line it is on."""

    name: str
    line: int
    in_script: bool


def placeholders(layout: str) -> list[Placeholder]:
    """Every ``${...}`` of the layout that looks like a column name, in order."""
    scripts = [(m.start(), m.end()) for m in _SCRIPT.finditer(layout)]
    found = []
    for match in PLACEHOLDER.finditer(layout):
        name = match.group(1).strip()
        if not _COLUMN_LIKE.match(name):
            continue
        in_script = any(start <= match.start() < end for start, end in scripts)
        found.append(Placeholder(name, layout.count("\n", 0, match.start()) + 1, in_script))
    return found


@dataclass(frozen=True)
class Parameters:
    """What a layout can be filled with: the one rule for a CSV row and for HITLayoutParameters.

    ``names`` are every ``${name}`` a value may be given for, in order, those inside
    ``<script>`` included (a row or parameter naming one fills it, as MTurk did).
    ``required`` are those of the markup. A name used only inside ``<script>`` is optional:
    there ``${x}`` is far more likely a template literal than a value the requester forgot,
    and when no value is given it stays as written.
    """

    names: list[str]
    required: list[str]

    @property
    def optional(self) -> list[str]:
        """The names used only inside ``<script>``."""
        return [n for n in self.names if n not in self.required]


def layout_parameters(layout: str) -> Parameters:
    """The layout's :class:`Parameters`."""
    found = placeholders(layout)
    return Parameters(
        names=list(dict.fromkeys(p.name for p in found)),
        required=list(dict.fromkeys(p.name for p in found if not p.in_script)),
    )


def missing_columns(layout: str, columns: Iterable[str]) -> list[Placeholder]:
    """The required placeholders (see :class:`Parameters`) that name no column, where each is used."""
    known, required = set(columns), set(layout_parameters(layout).required)
    return [p for p in placeholders(layout) if not p.in_script and p.name in required and p.name not in known]


def substitute(layout: str, row: Mapping[str, str]) -> str:
    """The layout with each ``${column}`` replaced by the row's HTML-escaped value.

    Only names that are keys of ``row`` are replaced; every other ``${...}``
    is left byte for byte as it was.
    """

    def fill(match: re.Match[str]) -> str:
        name = match.group(1).strip()
        if name in row:
            return html.escape(row[name], quote=True)
        return match.group(0)

    return PLACEHOLDER.sub(fill, layout)


def page_html(filled: str) -> str:
    """The page a worker sees: the layout as is if it is a whole document; a fragment with its
    own ``<form>`` or ``<crowd-form>`` inside a page; any other fragment wrapped as MTurk
    wrapped layouts (its page, form and submit button)."""
    if "<html" in filled.lower():
        return filled
    if _OWN_FORM.search(filled):
        return _DOCUMENT_HEAD.format(body=filled)
    return _PAGE.format(body=filled)


def html_question(filled: str, frame_height: int) -> str:
    """HTMLQuestion XML carrying one row's page."""
    # CDATA cannot hold its own terminator: split it across two sections.
    page = page_html(filled).replace("]]>", "]]]]><![CDATA[>")
    return HTML_QUESTION.format(html=page, height=frame_height)
