"""What the two web halves grant each other, in one module both import (neither imports the other).

* The **submit capability**: an HMAC (the app's secret) naming one assignment,
  its worker and its HIT. The worker site hands it to an ExternalQuestion page
  in ``turkSubmitTo`` (the page may live on another site, and its cross-site
  post to externalSubmit then arrives without the worker's SameSite=Lax
  cookie); the requester's HIT pages check it before showing an assignment's
  page, and the worker site before taking the post.
* **The signed-in worker**: the worker site knows who is signed in; the
  requester's qualification test pages ask here (``signed_in_worker_id``).
* **Graded qualification tests**: the requester side knows which
  qualification types a test of its own grants; the worker site asks here
  (``graded_test_links``) to link a qualification's page to its test.

* **Recruited participants** (``docs/recruiting.md``): the requester side
  knows a recruiting platform's studies and places; the marketplace makes and
  signs in the worker account bound to a participant
  (``sign_in_recruited``), accepts the next HIT of a group for the signed-in
  worker (``accept_next``) and tells what became of assignments
  (``assignment_states``); the worker site asks where a worker goes after
  submitting (``after_submit``: a participant's place page).

All but the first are answered by whichever half registered an answer on the app
(``provide``): in the embedded default both halves run in one app; an app
without the other half gets "nobody" and "no tests".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app

from server.db import runtime

SUBMIT_CAPABILITY_SALT = b"hitforge.worker-site.turk-submit-to"
EXTENSION = "hitforge.capabilities"


def submit_capability(assignment_id: str, worker_id: str, hit_id: str) -> str:
    """The right to submit one assignment: an HMAC of the assignment, its worker and its HIT."""
    message = b"\0".join(
        (SUBMIT_CAPABILITY_SALT, assignment_id.encode(), worker_id.encode(), hit_id.encode())
    )
    mac = hmac.new(str(current_app.secret_key).encode(), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def turk_submit_to(assignment_id: str, worker_id: str, hit_id: str) -> str:
    """``<public url>/s/<capability>``: the page posts to this plus ``/mturk/externalSubmit``."""
    capability = submit_capability(assignment_id, worker_id, hit_id)
    return f"{runtime().settings.public_url.rstrip('/')}/s/{capability}"


class NoHITToAccept(LookupError):
    """``accept_next`` found nothing the worker may take (the message says why)."""


def _no_marketplace(*args: object) -> object:
    raise NoHITToAccept("this server has no marketplace")


@dataclass
class _Answers:
    signed_in_worker_id: Callable[[], str | None] = lambda: None
    graded_test_links: Callable[[Iterable[str]], dict[str, str]] = lambda ids: {}
    sign_in_recruited: Callable[[str, str], str | None] = lambda platform, participant: None
    accept_next: Callable[[str], tuple[str, str]] = _no_marketplace  # type: ignore[assignment]
    assignment_states: Callable[[Iterable[str]], dict[str, str]] = lambda ids: {}
    after_submit: Callable[[str, str], str | None] = lambda worker_id, hit_type_id: None
    release_assignments: Callable[[str, Iterable[str]], int] = lambda worker_id, ids: 0


def _answers(app: Flask | None = None) -> _Answers:
    target = app if app is not None else current_app
    answers = target.extensions.get(EXTENSION)
    if answers is None:
        answers = target.extensions[EXTENSION] = _Answers()
    assert isinstance(answers, _Answers)  # noqa: S101 - only this module writes the extension
    return answers


def provide(
    app: Flask,
    *,
    signed_in_worker_id: Callable[[], str | None] | None = None,
    graded_test_links: Callable[[Iterable[str]], dict[str, str]] | None = None,
    **recruiting: Callable[..., Any],
) -> None:
    """Register this half's answer(s) on ``app`` (each half's ``init_app`` calls it).

    ``recruiting``: ``sign_in_recruited``, ``accept_next``, ``assignment_states``,
    ``release_assignments`` (the marketplace's) and ``after_submit`` (the requester side's).
    """
    answers = _answers(app)
    if signed_in_worker_id is not None:
        answers.signed_in_worker_id = signed_in_worker_id
    if graded_test_links is not None:
        answers.graded_test_links = graded_test_links
    for name, answer in recruiting.items():
        if name not in (
            "sign_in_recruited",
            "accept_next",
            "assignment_states",
            "after_submit",
            "release_assignments",
        ):
            raise TypeError(f"no capability named {name}")
        setattr(answers, name, answer)


def signed_in_worker_id() -> str | None:
    """The id of the worker this request's sign-in names (current, not expired), or None."""
    return _answers().signed_in_worker_id()


def graded_test_links(qtype_ids: Iterable[str]) -> dict[str, str]:
    """Qualification type id -> the URL of a test hitforge grades that grants it, for types with one."""
    return _answers().graded_test_links(qtype_ids)


def sign_in_recruited(platform: str, participant_id: str) -> str | None:
    """Sign in (on this request) the worker account bound to a platform's participant, made on first
    arrival; its worker id, or None when the marketplace refuses the id."""
    return _answers().sign_in_recruited(platform, participant_id)


def accept_next(hit_type_id: str) -> tuple[str, str]:
    """Accept for the signed-in worker an assignment of the group's next HIT: (assignment id, HIT id).

    Raises ``NoHITToAccept`` when there is none they may take.
    """
    return _answers().accept_next(hit_type_id)


def assignment_states(assignment_ids: Iterable[str]) -> dict[str, str]:
    """Assignment id -> its status on the marketplace (Accepted, Submitted, Approved, ...)."""
    return _answers().assignment_states(assignment_ids)


def after_submit(worker_id: str, hit_type_id: str) -> str | None:
    """Where a worker goes once they submitted a HIT of the group (a recruited place's page), if anywhere."""
    return _answers().after_submit(worker_id, hit_type_id)


def release_assignments(worker_id: str, assignment_ids: Iterable[str]) -> int:
    """Give back to their HITs the worker's assignments still in progress (a place given up); how many."""
    return _answers().release_assignments(worker_id, assignment_ids)
