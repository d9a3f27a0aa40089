"""``hitforge demo --recruit prolific``: the demo campaign's crowd recruited through a Prolific STAND-IN.

Prolific cannot be reached from here, so the demo serves the stand-in
(``hits.requester.recruit.prolific.standin``) in process and points hitforge
at it. The campaign file gains a ``recruit:`` section; launching it creates
and publishes a study on the stand-in; each simulated participant takes a
place there, follows the study's entry link (no sign-up), works their place's
HITs and goes back to "Prolific" with the completion code. The demo settles
the study every two seconds (what ``hitforge recruit sync`` does; the beat
does it every minute) so that places are approved or rejected on the
stand-in from the quality model's verdicts, and bonuses are paid there. At
the end it prints what the stand-in was asked to do.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from bs4 import BeautifulSoup, Tag
from rich.console import Console
from rich.table import Table
from sqlalchemy import func, select

from demo.crowd import PROFILES, Bot, BotResult, CrowdError, Profile
from demo.crowd import _form_fields as form_fields
from hits.db import session_scope
from hits.requester.campaigns.recruitment import launch_study, settle_places
from hits.requester.recruit.prolific.client import ProlificClient
from hits.requester.recruit.prolific.standin import ProlificStandin, RunningStandin, serve_standin
from hits.requester.tables.recruiting import Recruitment, RecruitOutboxEntry, RecruitRelay

#: The stand-in's researcher token (it is not Prolific: nothing leaves this machine).
TOKEN = "demo-standin-token"  # noqa: S105 - the demo stand-in's own, not a credential
#: HITs a participant works in their place: the quality model needs 4 gold answers (2 a HIT).
HITS_PER_PARTICIPANT = 3
#: Seconds between two settlings of the study (``hitforge recruit sync``).
SETTLE_EVERY = 2.0


def start_standin() -> RunningStandin:
    """The stand-in, served on a free local port for this demo."""
    return serve_standin(TOKEN)


def settings_env(standin: RunningStandin) -> dict[str, str]:
    """What points hitforge (server, worker, beat) at the stand-in."""
    return {"HITFORGE_PROLIFIC_API_URL": standin.api_url, "HITFORGE_PROLIFIC_TOKEN": TOKEN}


def recruit_section(title: str) -> dict[str, Any]:
    """The campaign file's ``recruit:`` section, and the bonus rule whose bonuses Prolific pays."""
    return {
        "platform": "prolific",
        "title": title,
        "description": "Rate how well short sentences describe simple drawings. About 5 minutes.",
        "reward": 75,
        "estimated_minutes": 5,
        "hits_per_participant": HITS_PER_PARTICIPANT,
        # The stand-in's workspace pays in dollars, as hitforge's budget counts them.
        "currency": "USD",
    }


def bonus_rule() -> dict[str, Any]:
    """A bonus for careful participants: paid through Prolific, as the relay does."""
    return {"amount": "0.20", "min_gold": 4, "min_gold_accuracy": 0.9, "reason": "Careful, accurate work"}


class Participant(Bot):
    """A simulated Prolific participant: enters by the study link, works their place, goes back."""

    def __init__(
        self,
        base_url: str,
        name: str,
        profile: Profile,
        truth: dict[str, Any],
        standin: ProlificStandin,
        study_id: str,
        **options: Any,
    ):
        super().__init__(base_url, name, profile, truth, **options)
        self.standin, self.study_id = standin, study_id
        # Prolific's ids are 24 hex digits.
        self.pid = hashlib.sha256(name.encode()).hexdigest()[:24]
        self.session_id = ""
        self.finished = False

    def sign_in(self, password: str = "") -> str:
        """Take a place on "Prolific" and follow the study's link: signed in, no sign-up."""
        self.session_id = self.standin.take_place(self.study_id, self.pid)
        entry = self.http.get(
            f"{self.base_url}/recruit/prolific/enter",
            params={"PROLIFIC_PID": self.pid, "STUDY_ID": self.study_id, "SESSION_ID": self.session_id},
            timeout=60,
        )
        if entry.status_code >= 400:
            raise CrowdError(f"the study link was refused: HTTP {entry.status_code}")
        marker = self._get("/").find(string=lambda s: bool(s) and "Signed in as" in s)
        if marker is None:
            raise CrowdError(f"{self.username} was not signed in by the study link")
        self.result.worker_id = str(marker).rsplit("(", 1)[-1].rstrip(")").strip()
        return self.result.worker_id

    def work_one(self) -> bool:
        """The place's next HIT; False once the place sends the participant back to Prolific."""
        place_url = f"{self.base_url}/recruit/place/{self.session_id}"
        place = self.http.get(place_url, allow_redirects=False, timeout=60)
        if place.is_redirect:
            self._back_to_prolific(place.headers["Location"])
            return False
        if place.status_code >= 400:
            raise CrowdError(f"the place page: HTTP {place.status_code}")
        form = BeautifulSoup(place.text, "html.parser").find("form", id="next-hit")
        if not isinstance(form, Tag):
            raise CrowdError("the place page offers no next task")
        taken = self.http.post(
            f"{self.base_url}{form['action']}", data=form_fields(form), allow_redirects=False, timeout=60
        )
        where = taken.headers.get("Location", "")
        if "/work/" not in where:
            return True  # no task now, or sent back: the place page says which
        return self.do_work_page(self.http.get(f"{self.base_url}{urlsplit(where).path}", timeout=60))

    def _back_to_prolific(self, location: str) -> None:
        """Prolific's completion URL: the participant comes back with the code (the stand-in's part)."""
        target = urlsplit(location)
        if target.netloc != "app.prolific.com":
            raise CrowdError(f"sent somewhere other than Prolific: {location}")
        code = parse_qs(target.query).get("cc", [""])[0]
        if not self.finished:
            self.standin.finish(self.session_id, code)
            self.finished = True

    def run(self, max_hits: int, on_submit: Any = None) -> BotResult:
        """Work the place; a participant who ran out of tasks still goes back to Prolific."""
        result = super().run(max_hits, on_submit)
        if self.session_id and not self.finished:
            try:
                self.work_one()
            except (CrowdError, requests.RequestException) as exc:
                result.errors.append(str(exc))
        return result


def launch(sessions: Any, standin: RunningStandin, campaign_id: int, url: str) -> tuple[str, int]:
    """Create and publish the campaign's study on the stand-in (as ``hitforge launch`` does)."""
    report = launch_study(sessions, client(standin), campaign_id, url)
    assert report is not None
    return report.study_id, report.places


def client(standin: RunningStandin) -> ProlificClient:
    """hitforge's own Prolific client, talking to the stand-in."""
    return ProlificClient(standin.api_url, TOKEN, backoff=0.1)


class Settler:
    """Settles the study every few seconds in a thread of its own, as ``hitforge recruit sync`` would."""

    def __init__(self, sessions: Any, standin: RunningStandin, campaign_id: int):
        self.sessions, self.standin, self.campaign_id = sessions, standin, campaign_id
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="recruit-settle", daemon=True)

    def start(self) -> None:
        """Begin settling."""
        self._thread.start()

    def once(self) -> None:
        """One settling: poll, decide the finished places, apply decisions and relays once each."""
        try:
            settle_places(self.sessions, client(self.standin), self.campaign_id)
        except Exception as exc:  # noqa: BLE001 - the demo reports it and keeps going
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def stop(self) -> None:
        """Stop, then settle once more."""
        self._stop.set()
        self._thread.join(10)
        self.once()

    def _loop(self) -> None:
        while not self._stop.wait(SETTLE_EVERY):
            self.once()


def settled(sessions: Any, campaign_id: int) -> bool:
    """Whether no decision, bonus, block or message for the study is waiting to be applied.

    A finished place whose assignments are held for QA waits for a person:
    it is not waited for here (the final settling decides whatever is ready).
    """
    with session_scope(sessions) as session:
        row = session.scalar(select(Recruitment).where(Recruitment.campaign_id == campaign_id))
        if row is None:
            return True
        pending = session.scalar(
            select(func.count())
            .select_from(RecruitOutboxEntry)
            .where(RecruitOutboxEntry.recruitment_id == row.id, RecruitOutboxEntry.status != "done")
        )
        relaying = session.scalar(
            select(func.count())
            .select_from(RecruitRelay)
            .where(RecruitRelay.recruitment_id == row.id, RecruitRelay.status.not_in(("done", "held")))
        )
        return not pending and not relaying


def prolific_summary(console: Console, standin: RunningStandin) -> dict[str, int]:
    """Print what the stand-in was asked to do; the counts."""
    counts: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    paid = 0.0
    for method, path, body in standin.app.state.carried_out:
        if method == "POST" and path == "/studies/":
            counts["studies created"] += 1
        elif path.startswith("/studies/") and path.endswith("/transition/"):
            counts[f"study {body.get('action', '?')}"] += 1
        elif path.startswith("/submissions/") and path.endswith("/transition/"):
            action = str(body.get("action", "?"))
            counts[{"APPROVE": "approvals", "REJECT": "rejections"}.get(action, action)] += 1
            if action == "REJECT":
                categories[str(body.get("rejection_category"))] += 1
        elif path == "/submissions/bonus-payments/":
            counts["bonuses set up"] += 1
        elif path.startswith("/bulk-bonus-payments/"):
            counts["bonus payments"] += 1
        elif path == "/participant-groups/" and method == "POST":
            counts["participant groups created"] += 1
        elif path.endswith("/participants/") and method == "POST":
            counts["participants blocked (added to the blocklist group)"] += 1
        elif path == "/messages/":
            counts["messages"] += 1
        elif method == "GET" and path.startswith("/submissions/"):
            counts["submission reads"] += 1
    for bonus in standin.app.state.paid:
        paid += sum(float(a) for a in bonus["amounts"].values())
    table = Table(title="What Prolific (the stand-in) was asked to do")
    table.add_column("request")
    table.add_column("count", justify="right")
    for label, count in sorted(counts.items()):
        shown = label
        if label == "rejections" and categories:
            shown += " (" + ", ".join(f"{c} {n}" for c, n in sorted(categories.items())) + ")"
        table.add_row(shown, str(count))
    table.add_row("bonuses paid, in the study's currency", f"{paid:.2f}")
    statuses = Counter(s["status"] for s in standin.app.state.submissions.values())
    table.add_row("places, by status", ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())) or "-")
    console.print(table)
    return dict(counts)


def participants(
    url: str, standin: RunningStandin, study_id: str, places: int, truth: dict[str, Any], fill_form: Any
) -> list[Bot]:
    """One simulated participant a place, the profiles interleaved (diligent, careless, spammer...)."""
    order = ["diligent", "careless", "spammer"]
    return [
        Participant(
            url,
            f"{order[i % 3]}-{i // 3 + 1}",
            PROFILES[order[i % 3]],
            truth,
            standin.app,
            study_id,
            seed=i,
            fill_form=fill_form,
        )
        for i in range(places)
    ]


def report(console: Console, standin: RunningStandin, settler: Settler) -> bool:
    """Print what Prolific was asked to do; whether the study was published and places decided both ways."""
    counts = prolific_summary(console, standin)
    for error in settler.errors[:5]:
        console.print(f"[yellow]settling:[/yellow] {error}", highlight=False)
    ok = (
        counts.get("study PUBLISH", 0) == 1
        and counts.get("approvals", 0) > 0
        and counts.get("rejections", 0) > 0
    )
    console.print(
        "[green]Prolific: study published, good places approved, spammers' places rejected[/green]"
        if ok
        else "[red]Prolific: the places were not decided as expected[/red]"
    )
    return ok
