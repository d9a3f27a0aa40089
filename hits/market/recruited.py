"""Worker accounts of participants recruited on another platform (Prolific), bound to their id there.

A recruited participant never signs up: the first time they arrive their
account is made, named after the platform and their id there, with no
password that could ever sign it in (``NO_PASSWORD`` is no hash of anything).
The same participant id always finds the same account. An ordinary account
that happens to carry such a name is never taken for the participant's.
"""

from __future__ import annotations

import re

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from hits.market.ids import new_customer_id
from hits.market.models import Worker

#: Stored in place of a password hash: no password matches it, so only the platform's entry signs in.
NO_PASSWORD = "!recruited"  # noqa: S105 - a marker no hash can equal, not a password
#: A platform's participant id as hitforge accepts it: letters and digits (Prolific's are 24 hex digits),
#: and inside, ``_ . -`` (a panel's ids: SONA's numbers, a lab's own codes). Never ``:`` (the name's
#: separator), a space or anything a URL or a page would have to escape.
PARTICIPANT_ID = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,46}[A-Za-z0-9])?")
#: A platform as accounts name it: ``prolific``, or ``panel:<panel name>`` (ids are a panel's own).
PLATFORM = re.compile(r"[a-z]+(?::[A-Za-z0-9][A-Za-z0-9_.-]{0,63})?")


class NotRecruitable(ValueError):
    """The participant id is malformed, or its name belongs to an ordinary account."""


def recruited_username(platform: str, participant_id: str) -> str:
    """The account name of a platform's participant: ``prolific:<id>``, ``panel:<panel>:<id>``."""
    return f"{platform}:{participant_id}"


def recruited_worker(session: Session, platform: str, participant_id: str) -> Worker:
    """The worker account bound to ``participant_id`` on ``platform``, made on first arrival."""
    if not PARTICIPANT_ID.fullmatch(participant_id) or not PLATFORM.fullmatch(platform):
        raise NotRecruitable("not a participant id")
    name = recruited_username(platform, participant_id)
    worker = session.scalar(select(Worker).where(Worker.username == name))
    if worker is None:
        worker = Worker(id=new_customer_id(), username=name, password_hash=NO_PASSWORD, country="US")
        try:
            with session.begin_nested():  # two first arrivals at once: the other one's row wins
                session.add(worker)
        except IntegrityError:
            worker = session.scalar(select(Worker).where(Worker.username == name))
            assert worker is not None
    if worker.password_hash != NO_PASSWORD:
        # Someone signed up under this name: it is not the participant's account.
        raise NotRecruitable(f"the account name {name} belongs to an ordinary account")
    return worker


def is_recruited(worker: Worker) -> bool:
    """Whether ``worker`` is a recruited participant's account (made by :func:`recruited_worker`)."""
    return worker.password_hash == NO_PASSWORD


def recruiting_platform(worker: Worker) -> str | None:
    """The name of the platform that recruited ``worker`` ("Prolific", a panel's name), None for others."""
    if not is_recruited(worker):
        return None
    platform, _, rest = worker.username.partition(":")
    if platform == "panel":
        return rest.rpartition(":")[0]
    return platform.title()
