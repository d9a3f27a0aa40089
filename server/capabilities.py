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

The last two are answered by whichever half registered an answer on the app
(``provide``): in the embedded default both halves run in one app; an app
without the other half gets "nobody" and "no tests".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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


@dataclass
class _Answers:
    signed_in_worker_id: Callable[[], str | None] = lambda: None
    graded_test_links: Callable[[Iterable[str]], dict[str, str]] = lambda ids: {}


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
) -> None:
    """Register this half's answer(s) on ``app`` (each half's ``init_app`` calls it)."""
    answers = _answers(app)
    if signed_in_worker_id is not None:
        answers.signed_in_worker_id = signed_in_worker_id
    if graded_test_links is not None:
        answers.graded_test_links = graded_test_links


def signed_in_worker_id() -> str | None:
    """The id of the worker this request's sign-in names (current, not expired), or None."""
    return _answers().signed_in_worker_id()


def graded_test_links(qtype_ids: Iterable[str]) -> dict[str, str]:
    """Qualification type id -> the URL of a test hitforge grades that grants it, for types with one."""
    return _answers().graded_test_links(qtype_ids)
