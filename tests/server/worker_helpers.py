"""A worker on the worker site over real HTTP, and builders for the question types."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from bs4 import BeautifulSoup, Tag

QF_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/QuestionForm.xsd"
AK_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2005-10-01/AnswerKey.xsd"
HTML_NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2011-11-11/HTMLQuestion.xsd"


class WorkerClient:
    """A signed-up worker with their own cookie jar."""

    def __init__(self, base: str, name: str = "w") -> None:
        self.base = base
        self.http = requests.Session()
        self.username = f"{name}-{uuid.uuid4().hex[:8]}"
        page = self.get("/signup")
        response = self.http.post(
            base + "/signup",
            data={"csrf_token": csrf_of(page), "username": self.username, "password": "a-long-password"},
        )
        assert response.status_code == 200, response.text
        marker = soup(response).find(string=lambda s: bool(s) and "Signed in as" in s)
        self.worker_id = str(marker).rsplit("(", 1)[-1].rstrip(")").strip()

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.http.get(self.base + path if path.startswith("/") else path, **kwargs)

    def post_form(
        self, page: requests.Response, form_selector: str, data: dict[str, Any]
    ) -> requests.Response:
        """Post the form ``form_selector`` of ``page`` with its CSRF token plus ``data``."""
        form = soup(page).select_one(form_selector)
        assert isinstance(form, Tag), f"no {form_selector} on the page"
        action = str(form.get("action") or page.url)
        url = action if action.startswith("http") else self.base + action
        return self.http.post(url, data={"csrf_token": csrf_of(page), **data})


def soup(response: requests.Response) -> BeautifulSoup:
    return BeautifulSoup(response.text, "html.parser")


def csrf_of(response: requests.Response) -> str:
    field = soup(response).find("input", attrs={"name": "csrf_token"})
    assert isinstance(field, Tag)
    return str(field["value"])


def html_question(body: str, height: int = 500) -> str:
    return (
        f'<HTMLQuestion xmlns="{HTML_NS}"><HTMLContent><![CDATA[{body}]]></HTMLContent>'
        f"<FrameHeight>{height}</FrameHeight></HTMLQuestion>"
    )


def mturk_form_page(body: str, head: str = "", script: str = "") -> str:
    """An HTMLQuestion page as MTurk requesters write them: ``externalHIT_v1.js``,
    ``mturk_form`` with its hidden ``assignmentId``, then ``body``; ``head`` goes in
    the head, and ``script`` runs after ``turkSetAssignmentID()``."""
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8">
<script src="https://s3.amazonaws.com/mturk-public/externalHIT_v1.js" type="text/javascript"></script>
{head}
</head><body>
<form name="mturk_form" method="post" id="mturk_form" action="https://www.mturk.com/mturk/externalSubmit">
<input type="hidden" value="" name="assignmentId" id="assignmentId">
{body}
</form>
<script>
  turkSetAssignmentID();
{script}
</script>
</body></html>"""


MTURK_HTML = mturk_form_page(
    """<p><label for="caption">Describe the picture</label> <input id="caption" name="caption"></p>
<p><label><input type="checkbox" name="tags" value="cat"> cat</label>
<label><input type="checkbox" name="tags" value="dog"> dog</label></p>
<p><input type="submit" id="submitButton" value="Submit"></p>"""
)


def selection(
    qid: str, text: str, choices: list[tuple[str, str]], style: str = "radiobutton", **kw: Any
) -> str:
    counts = "".join(f"<{k}>{v}</{k}>" for k, v in kw.items())
    options = "".join(
        f"<Selection><SelectionIdentifier>{i}</SelectionIdentifier><Text>{t}</Text></Selection>"
        for i, t in choices
    )
    return (
        f"<Question><QuestionIdentifier>{qid}</QuestionIdentifier><IsRequired>true</IsRequired>"
        f"<QuestionContent><Text>{text}</Text></QuestionContent><AnswerSpecification><SelectionAnswer>"
        f"{counts}<StyleSuggestion>{style}</StyleSuggestion><Selections>{options}</Selections>"
        "</SelectionAnswer></AnswerSpecification></Question>"
    )


def free_text(qid: str, text: str, constraints: str = "", required: bool = True) -> str:
    return (
        f"<Question><QuestionIdentifier>{qid}</QuestionIdentifier>"
        f"<IsRequired>{'true' if required else 'false'}</IsRequired>"
        f"<QuestionContent><Text>{text}</Text></QuestionContent><AnswerSpecification><FreeTextAnswer>"
        f"{f'<Constraints>{constraints}</Constraints>' if constraints else ''}"
        "</FreeTextAnswer></AnswerSpecification></Question>"
    )


def question_form(*questions: str, overview: str = "") -> str:
    return f'<QuestionForm xmlns="{QF_NS}">{overview}{"".join(questions)}</QuestionForm>'


def answer_key(*answers: tuple[str, str], percentage_of: int | None = None) -> str:
    parts = "".join(
        f"<Question><QuestionIdentifier>{q}</QuestionIdentifier><AnswerOption>"
        f"<SelectionIdentifier>{s}</SelectionIdentifier><AnswerScore>1</AnswerScore></AnswerOption></Question>"
        for q, s in answers
    )
    mapping = (
        "<QualificationValueMapping><PercentageMapping>"
        f"<MaximumSummedScore>{percentage_of}</MaximumSummedScore></PercentageMapping></QualificationValueMapping>"
        if percentage_of
        else ""
    )
    return f'<AnswerKey xmlns="{AK_NS}">{parts}{mapping}</AnswerKey>'


def create_hit(mturk: Any, question: str, **overrides: Any) -> str:  # type: ignore[no-untyped-def]
    params: dict[str, Any] = {
        "MaxAssignments": 1,
        "LifetimeInSeconds": 3600,
        "AssignmentDurationInSeconds": 600,
        "Reward": "0.25",
        "Title": f"Task {uuid.uuid4().hex[:8]}",
        "Description": "A small task.",
        "Question": question,
    }
    params.update(overrides)
    return str(mturk.create_hit(**params)["HIT"]["HITId"])


def frame_src(page: requests.Response) -> str:
    """The URL of the HIT page a worker-site page (a preview or an assignment's) frames."""
    frame = soup(page).find("iframe", id="hit-frame")
    assert isinstance(frame, Tag), page.text
    return str(frame["src"])


def accept_framed(base: str, hit_id: str, name: str = "w") -> tuple[WorkerClient, dict[str, str]]:
    """A new worker accepts ``hit_id`` on the worker site: the worker, and the framed page's parameters."""
    worker = WorkerClient(base, name)
    work = worker.post_form(worker.get(f"/hits/{hit_id}"), f'form[action="/hits/{hit_id}/accept"]', {})
    return worker, {k: v[0] for k, v in parse_qs(urlsplit(frame_src(work)).query).items()}
