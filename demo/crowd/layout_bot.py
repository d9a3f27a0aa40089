"""Simulated workers for HTMLQuestion HITs written as MTurk layouts (``hitforge batch``).

A :class:`LayoutBot` works the way a person with a browser does: it accepts a
HIT on the worker site, opens the HIT's page from the frame's address, reads
which questions the page asks (the form's native radio buttons, checkboxes,
selects and text fields, or a ``<crowd-form>``'s simple elements), answers
them by its profile and posts the form to ``externalSubmit`` with the
assignment id and signed token the frame was given, as the page's script
(``externalHIT_v1.js`` or ``crowd-form``) would.

A bot recognises a HIT's item by what its page shows: ``truth`` maps a piece
of text that appears on one row's page (an image address, a sentence) to that
row's true answers by field name. Nothing about gold is known to the bot.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs, urljoin, urlsplit

import requests
from bs4 import BeautifulSoup, Tag

from demo.crowd import Bot, CrowdError, Profile, _form_fields

FieldKind = Literal["choice", "multi", "text", "number", "classifier"]
#: Words a bot types into a text field it does not know the answer to.
FILLER = ("ok", "looks fine", "nothing", "good", "yes", "n/a", "none")


@dataclass
class Question:
    """One answerable field of a page: its name, kind and the choices it offers."""

    name: str
    kind: FieldKind
    options: list[str] = field(default_factory=list)
    low: float = 0
    high: float = 100
    #: Inside a crowd-form: answered as ``{"<value>": true|false}`` per option (radio buttons,
    #: checkboxes), not as the chosen value.
    flags: bool = False
    #: A crowd-radio-group: its options are its buttons' names; each button's value.
    button_values: dict[str, str] = field(default_factory=dict)


@dataclass
class PageForm:
    """What a HIT page asks: its questions, and whether a ``<crowd-form>`` submits them."""

    crowd: bool
    questions: list[Question]
    #: Hidden fields the page itself fills in (sent as they are, except assignmentId).
    hidden: dict[str, str] = field(default_factory=dict)


def _bound(tag: Tag, name: str, default: float) -> float:
    raw = tag.get(name)
    try:
        return float(str(raw)) if raw is not None else default
    except ValueError:
        return default


def _add(found: dict[str, Question], name: str, kind: FieldKind, option: str | None = None) -> None:
    question = found.setdefault(name, Question(name, kind))
    if option is not None and option not in question.options:
        question.options.append(option)


def _native_questions(root: Tag) -> dict[str, Question]:
    found: dict[str, Question] = {}
    for control in root.find_all(["input", "select", "textarea"]):
        name = str(control.get("name") or "")
        if not name or control.has_attr("disabled"):
            continue
        kind = str(control.get("type") or "text").lower() if control.name == "input" else control.name
        if kind == "radio":
            _add(found, name, "choice", str(control.get("value", "on")))
        elif kind == "checkbox":
            _add(found, name, "multi", str(control.get("value", "on")))
        elif kind == "select":
            values = [str(o.get("value", o.get_text(strip=True))) for o in control.find_all("option")]
            found[name] = Question(name, "choice", [v for v in values if v])
        elif kind == "number" or kind == "range":
            found[name] = Question(
                name, "number", low=_bound(control, "min", 0), high=_bound(control, "max", 100)
            )
        elif kind in ("text", "textarea", "email", "url", "search", "tel"):
            found[name] = Question(name, "text")
    return found


def _categories(text: str) -> list[str]:
    # crowd-classifier's categories attribute is a JavaScript-style array of quoted strings.
    try:
        return [str(c) for c in json.loads(text.replace("'", '"'))]
    except ValueError:
        return []


def _crowd_questions(form: Tag) -> dict[str, Question]:
    found = _native_questions(form)
    for question in found.values():
        question.flags = question.kind in ("choice", "multi") and bool(
            form.find("input", attrs={"name": question.name, "type": ["radio", "checkbox"]})
        )
    for element in form.find_all(True):
        name = str(element.get("name") or "")
        if element.name == "crowd-radio-group":
            buttons = element.find_all("crowd-radio-button")
            group = Question(f"group-{len(found)}", "choice", flags=True)
            for button in buttons:
                button_name = str(button.get("name") or "")
                if button_name:
                    group.options.append(button_name)
                    group.button_values[button_name] = str(button.get("value", "on"))
            if group.options:
                found[group.name] = group
        if not name or not element.name.startswith("crowd-"):
            continue
        if element.name in ("crowd-classifier", "crowd-classifier-multi-select"):
            found[name] = Question(name, "classifier", _categories(str(element.get("categories", "[]"))))
        elif element.name in ("crowd-checkbox", "crowd-toggle-button"):
            _add(found, name, "multi", str(element.get("value", "on")))
            found[name].flags = True
        elif element.name in ("crowd-input", "crowd-text-area"):
            kind: FieldKind = "number" if element.get("type") == "number" else "text"
            found[name] = Question(name, kind)
        elif element.name == "crowd-slider":
            found[name] = Question(
                name, "number", low=_bound(element, "min", 0), high=_bound(element, "max", 100)
            )
    return found


def read_page(html: str) -> PageForm:
    """The questions of a HIT page: its ``<crowd-form>``'s, else those of its MTurk form."""
    page = BeautifulSoup(html, "html.parser")
    crowd = page.find("crowd-form")
    if isinstance(crowd, Tag):
        return PageForm(True, list(_crowd_questions(crowd).values()))
    form = page.find("form", id="mturk_form") or page.find("form")
    if not isinstance(form, Tag):
        raise CrowdError("the HIT page has no form to fill in")
    hidden = {k: v for k, v in _form_fields(form).items() if k != "assignmentId"}
    return PageForm(False, list(_native_questions(form).values()), hidden)


class LayoutBot(Bot):
    """A simulated worker for layout batches; ``turn_after``: HITs done well before spamming."""

    def __init__(
        self,
        base_url: str,
        username: str,
        profile: Profile,
        truth: dict[str, dict[str, str]],
        seed: int = 0,
        turn_after: int | None = None,
    ):
        """``truth``: text shown on a row's page -> that row's true answer per field."""
        super().__init__(base_url, username, profile, truth, seed, fill_form=lambda *_: {})
        self.layout_truth = truth
        self.turn_after = turn_after
        self.seed = seed

    def _spamming(self) -> bool:
        if self.turn_after is not None:
            return self.result.submitted >= self.turn_after
        return self.profile.random_answers

    def _pick(self, question: Question, true: str | None) -> Any:
        """One answer to a question: the truth with the profile's accuracy, else a plausible miss."""
        honest = not self._spamming() and self.profile.strategy == "truth"
        if self.profile.strategy == "majority" and question.options:
            return question.options[0]  # the usual answer, without looking
        if question.kind == "text":
            if honest and true is not None and self.rng.random() < self.profile.accuracy:
                return true
            return self.rng.choice(FILLER)
        if question.kind == "number":
            if honest and true is not None and self.rng.random() < self.profile.accuracy:
                return true
            return str(self.rng.randint(int(question.low), int(question.high)))
        if not question.options:
            return None
        if question.kind == "multi":
            if honest and true is not None and self.rng.random() < self.profile.accuracy:
                return [v for v in true.split("|") if v in question.options]
            return [o for o in question.options if self.rng.random() < 0.5]
        if honest and true in question.options and self.rng.random() < self.profile.accuracy:
            return true
        others = [o for o in question.options if o != true] if honest else question.options
        return self.rng.choice(others or question.options)

    def _truth_for(self, html: str) -> tuple[str, dict[str, str]]:
        for shown, answers in self.layout_truth.items():
            if shown in html:
                return shown, answers
        return hashlib.sha256(html.encode()).hexdigest(), {}

    def answer(self, form: PageForm, html: str) -> list[tuple[str, str]]:
        """The fields to post for a page, as its form (or its crowd-form) would post them.

        The bot's luck on a row depends on the bot and the row only, not on the order the
        site handed the HITs out in, so a simulation gives the same answers on every run.
        """
        shown, truth = self._truth_for(html)
        self.rng = random.Random(f"{self.profile.name}:{self.seed}:{shown}")
        if not form.crowd:
            data = list(form.hidden.items())
            for question in form.questions:
                picked = self._pick(question, truth.get(question.name))
                if isinstance(picked, list):
                    data += [(question.name, v) for v in picked]
                elif picked is not None:
                    data.append((question.name, str(picked)))
            return data
        answer: dict[str, Any] = {}
        for question in form.questions:
            name = question.name
            if question.kind == "classifier":
                picked = self._pick(question, truth.get(f"{name}.label"))
                if picked is not None:
                    answer[name] = {"label": picked}
            elif question.button_values:
                # A radio group: each button answers {"<value>": true|false} under its own name.
                values = question.button_values
                right = next((b for b in question.options if truth.get(f"{b}.{values[b]}") == "true"), None)
                chosen = self._pick(question, right)
                for button in question.options:
                    answer[button] = {values[button]: button == chosen}
            elif question.flags:
                true = [v for v in question.options if truth.get(f"{name}.{v}") == "true"]
                picked = self._pick(
                    question, "|".join(true) if question.kind == "multi" else next(iter(true), None)
                )
                chosen = picked if isinstance(picked, list) else [picked]
                answer[name] = {v: v in chosen for v in question.options}
            else:
                picked = self._pick(question, truth.get(name))
                if picked not in (None, "", []):
                    answer[name] = float(picked) if question.kind == "number" else picked
        return [("taskAnswers", json.dumps([answer]))]

    def work_one(self) -> bool:
        """Accept a HIT of the listing, fill its page's form and submit it; False when none is left."""
        listing = self._get("/")
        rows = [
            r
            for r in listing.find_all("tr", class_="hit-group")
            if self.title_filter is None or self.title_filter in r.get_text()
        ]
        if not rows:
            return False
        accept_form = rows[0].find("form")
        assert isinstance(accept_form, Tag)
        work = BeautifulSoup(
            self._post(str(accept_form["action"]), _form_fields(accept_form)).text, "html.parser"
        )
        frame = work.find("iframe", id="hit-frame")
        if not isinstance(frame, Tag):
            return True  # someone else took the last assignment; look again
        src = urljoin(self.base_url + "/", str(frame["src"]))
        params = parse_qs(urlsplit(src).query)
        # The HIT's page runs in a sandbox that sends no cookie: the token identifies the worker.
        page = requests.get(src, timeout=60)
        if page.status_code >= 400:
            raise CrowdError(f"GET HIT page: HTTP {page.status_code}")
        data = [
            ("assignmentId", params["assignmentId"][0]),
            ("hitforgeToken", params["hitforgeToken"][0]),
            *self.answer(read_page(page.text), page.text),
        ]
        done = self.http.post(urljoin(self.base_url + "/", "/mturk/externalSubmit"), data=data, timeout=60)
        if done.status_code != 200:
            raise CrowdError(f"externalSubmit failed: HTTP {done.status_code}")
        self.result.submitted += 1
        return True
