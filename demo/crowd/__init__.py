"""A simulated crowd: bots that use the worker site over HTTP as a person would.

Each bot signs up or in, lists HITs, accepts one, loads the framed HIT page,
answers according to its profile and submits, then hands off to the
marketplace's ``externalSubmit``, exactly the way a browser would.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

import requests
from bs4 import BeautifulSoup, Tag

from demo.picture_names import picture_name
from demo.profiles import PROFILES, Profile
from demo.tasks import FillForm
from demo.tasks.rating import fill as rating_fill

MAX_FUTILE_ROUNDS = 20


class CrowdError(RuntimeError):
    """The worker site did not behave as a worker would expect."""


@dataclass
class BotResult:
    username: str
    profile: str
    worker_id: str = ""
    submitted: int = 0
    errors: list[str] = field(default_factory=list)


def _form_fields(form: Tag) -> dict[str, str]:
    return {
        str(inp.get("name")): str(inp.get("value", ""))
        for inp in form.find_all("input")
        if inp.get("name") and inp.get("type") in ("hidden", None)
    }


class Bot:
    """One simulated worker."""

    #: Only HIT groups whose title contains this are worked on (None: any), as a
    #: person looks for the tasks they know.
    title_filter: str | None = None

    def __init__(
        self,
        base_url: str,
        username: str,
        profile: Profile,
        truth: dict[str, Any],
        seed: int = 0,
        fill_form: FillForm | None = None,
    ):
        """``fill_form`` answers one page of a template (default: the rating template's)."""
        self.fill_form: FillForm = fill_form or rating_fill
        self.base_url = base_url.rstrip("/")
        self.username = username
        self.profile = profile
        self.truth = truth
        self.rng = random.Random(f"{username}:{seed}")
        self.http = requests.Session()
        self.result = BotResult(username, profile.name)

    def _get(self, path_or_url: str) -> BeautifulSoup:
        response = self.http.get(urljoin(self.base_url + "/", path_or_url), timeout=60)
        if response.status_code >= 400:
            raise CrowdError(f"GET {path_or_url}: HTTP {response.status_code}")
        return BeautifulSoup(response.text, "html.parser")

    def _post(self, url: str, data: dict[str, str]) -> requests.Response:
        response = self.http.post(urljoin(self.base_url + "/", url), data=data, timeout=60)
        if response.status_code >= 500:
            raise CrowdError(f"POST {url}: HTTP {response.status_code}")
        return response

    def sign_in(self, password: str = "crowd-password") -> str:  # noqa: S107 - simulated workers only
        """Sign up (or in, if the account exists); return the worker id."""
        page = self._get("/signup")
        form = page.find("form", method="post")
        if not isinstance(form, Tag):
            raise CrowdError("no sign-up form")
        data = {**_form_fields(form), "username": self.username, "password": password, "country": "US"}
        response = self._post("/signup", data)
        if response.status_code == 400:
            page = self._get("/signin")
            form = page.find("form", method="post")
            assert isinstance(form, Tag)
            response = self._post(
                "/signin", {**_form_fields(form), "username": self.username, "password": password}
            )
        soup = BeautifulSoup(response.text, "html.parser")
        marker = soup.find(string=lambda s: bool(s) and "Signed in as" in s)
        if marker is None:
            raise CrowdError(f"{self.username} could not sign in")
        self.result.worker_id = str(marker).rsplit("(", 1)[-1].rstrip(")").strip()
        return self.result.worker_id

    def work_one(self) -> bool:
        """Find, accept, do and submit one HIT; False when none is left."""
        listing = self._get("/")
        rows = [
            r
            for r in listing.find_all("tr", class_="hit-group")
            if self.title_filter is None or self.title_filter in r.get_text()
        ]
        if not rows:
            return False
        row = rows[0]
        accept_form = row.find("form")
        assert isinstance(accept_form, Tag)
        response = self._post(str(accept_form["action"]), _form_fields(accept_form))
        return self.do_work_page(response)

    def do_work_page(self, response: requests.Response) -> bool:
        """Do and submit the HIT of an accepted assignment's work page (``response``); True."""
        work = BeautifulSoup(response.text, "html.parser")
        frame = work.find("iframe", id="hit-frame")
        if not isinstance(frame, Tag):
            return True  # someone else took the last slot; look again
        task_url = str(frame["src"])
        task = self._get(task_url)
        task_form = task.find("form", id="task-form")
        if not isinstance(task_form, Tag):
            raise CrowdError("HIT page has no task form")
        data = _form_fields(task_form)
        self._look_at_pictures(task_form, task_url)
        data.update(self.fill_form(task_form, self.truth, self.profile, self.rng))
        # A form's action is relative to its own page, as a browser resolves it: the HIT page may be
        # on another host than the worker site (the requester side on a machine of its own).
        answered = self._post(urljoin(urljoin(self.base_url + "/", task_url), str(task_form["action"])), data)
        out_form = BeautifulSoup(answered.text, "html.parser").find("form", id="handoff")
        if not isinstance(out_form, Tag):
            raise CrowdError(f"HIT page refused the answers: HTTP {answered.status_code}")
        done = self._post(str(out_form["action"]), _form_fields(out_form))
        if "submitted" not in done.text:
            raise CrowdError(f"externalSubmit failed: HTTP {done.status_code}")
        self.result.submitted += 1
        return True

    def _look_at_pictures(self, form: Tag, page_url: str) -> None:
        """Recognise each picture by what it shows, as a person would, not by its URL.

        HIT pages give pictures opaque URLs; the demo's pictures are named by
        their pixels, so a picture as served (re-encoded on a blinded page, or
        not) gives the name the bot's truth uses.
        """
        for img in form.find_all("img"):
            response = self.http.get(
                urljoin(urljoin(self.base_url + "/", page_url), str(img["src"])), timeout=60
            )
            if response.status_code >= 400:
                raise CrowdError(f"GET picture {img['src']}: HTTP {response.status_code}")
            img["src"] = picture_name(response.content)

    def run(self, max_hits: int, on_submit: Callable[[], None] | None = None) -> BotResult:
        """Work until no HIT is left or ``max_hits`` are done; errors are recorded, not raised."""
        futile = 0
        try:
            self.sign_in()
            while self.result.submitted < max_hits and futile < MAX_FUTILE_ROUNDS:
                before = self.result.submitted
                if not self.work_one():
                    break
                if self.result.submitted > before:
                    futile = 0
                    if on_submit:
                        on_submit()
                else:
                    futile += 1
        except (CrowdError, requests.RequestException) as exc:
            self.result.errors.append(str(exc))
        return self.result


__all__ = ["PROFILES", "Bot", "BotResult", "CrowdError", "Profile"]
