"""Placeholder substitution as MTurk's project layouts did it, on the edge cases requesters hit."""

from __future__ import annotations

from hits.market.questions import parse_question
from hits.wire.layout import html_question, missing_columns, page_html, substitute


def test_only_column_placeholders_are_filled_and_escaped() -> None:
    layout = "<a title='${ name }' href=\"${url}\">${name}</a> ${Name} ${ } ${a+b} $name {name} $${name}"
    row = {"name": 'O\'Brien <x> & "co"', "url": "https://e.org/?a=1&b=2"}
    assert substitute(layout, row) == (
        "<a title='O&#x27;Brien &lt;x&gt; &amp; &quot;co&quot;' href=\"https://e.org/?a=1&amp;b=2\">"
        "O&#x27;Brien &lt;x&gt; &amp; &quot;co&quot;</a> ${Name} ${ } ${a+b} $name {name} $O&#x27;Brien "
        "&lt;x&gt; &amp; &quot;co&quot;"
    )


def test_missing_columns_are_those_of_the_markup_not_of_scripts() -> None:
    layout = "<p>${title}</p>\n<p>${ image url }</p>\n<script>`${count} ${total + 1}`</script>\n<i>${a+b}</i>"
    missing = missing_columns(layout, ["title"])
    assert [(p.name, p.line) for p in missing] == [("image url", 2)]
    assert missing_columns(layout, ["title", "image url"]) == []


def test_pages_round_trip_through_htmlquestion() -> None:
    fragment = "<p>${x}</p><script>if (a[b[0]]>1) {}</script>"
    question = html_question(substitute(fragment, {"x": "]]> sneaky"}), 0)
    parsed = parse_question(question)
    assert parsed.kind == "HTMLQuestion" and parsed.html is not None
    # The layout's own "]]>" survives the CDATA section; a value's is escaped anyway.
    assert "a[b[0]]>1" in parsed.html and "<p>]]&gt; sneaky</p>" in parsed.html
    assert 'id="mturk_form"' in parsed.html and "externalHIT_v1.js" in parsed.html
    own_form = "<form><input name='q'></form>"
    assert page_html(own_form).count("<form") == 1
    document = "<!DOCTYPE html><html><body><form id='mturk_form'></form></body></html>"
    assert page_html(document) == document


def test_a_fragment_with_its_own_crowd_form_gets_no_classic_form() -> None:
    for fragment in (
        "<crowd-form><crowd-input name='a'></crowd-input></crowd-form>",
        "<CROWD-FORM\n>x</CROWD-FORM>",
    ):
        page = page_html(fragment)
        assert "mturk_form" not in page and "submitButton" not in page and fragment in page
    # A tag that only starts like one is not a form: that fragment is wrapped.
    assert 'id="mturk_form"' in page_html("<formula-box name='x'></formula-box>")
