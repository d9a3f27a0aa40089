"""Requester accounts with access keys, and worker sign-up and sign-in."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import Connection, Select, bindparam, select
from sqlalchemy.orm import Session
from werkzeug.security import generate_password_hash

from hits import passwords
from hits.market import ledger
from hits.market import validation as v
from hits.market.errors import RequestError
from hits.market.ids import new_access_key_id, new_customer_id, new_secret_key
from hits.market.models import AccessKey, Requester, RequesterOptions, Worker


@dataclass(frozen=True)
class IssuedKey:
    """A freshly issued access-key pair, shown to the requester once."""

    requester_id: str
    access_key_id: str
    secret_access_key: str


def create_requester(session: Session, name: str, deposit: Decimal = Decimal("0")) -> IssuedKey:
    """Create a requester with one access-key pair and an optional prepaid balance."""
    if session.scalar(select(Requester).where(Requester.name == name)):
        raise ValueError(f"a requester named {name!r} already exists")
    requester = Requester(id=new_customer_id(), name=name)
    key = AccessKey(
        access_key_id=new_access_key_id(), secret_access_key=new_secret_key(), requester=requester
    )
    session.add_all([requester, key])
    session.flush()
    if deposit > 0:
        ledger.deposit(session, requester.id, deposit, txn=f"deposit:{requester.id}:initial")
    return IssuedKey(requester.id, key.access_key_id, key.secret_access_key)


def add_funds(session: Session, requester_id: str, amount: Decimal, reference: str) -> None:
    """Prepay more money into a requester's balance; ``reference`` makes it idempotent."""
    ledger.deposit(session, requester_id, amount, txn=f"deposit:{requester_id}:{reference}")


@dataclass(frozen=True)
class Caller:
    """What an API call needs to know about the key that signed it, read in one query."""

    secret_access_key: str
    requester_id: str
    throttle_rate: float | None
    fault_rate: float | None


@cache
def _caller_query() -> Select[str, str, float | None, float | None]:
    # Built once and bound per call: composing the join cost more than running it.
    return (
        select(
            AccessKey.secret_access_key,
            AccessKey.requester_id,
            RequesterOptions.throttle_rate,
            RequesterOptions.fault_rate,
        )
        .outerjoin(RequesterOptions, RequesterOptions.requester_id == AccessKey.requester_id)
        .where(AccessKey.access_key_id == bindparam("access_key_id"), AccessKey.active.is_(True))
    )


def find_caller(connection: Connection, access_key_id: str) -> Caller | None:
    """The active key ``access_key_id`` with its requester's test options, or None.

    One plain row through Core, not the ORM: every API call starts here, so it
    is kept to a single indexed join.
    """
    row = connection.execute(_caller_query(), {"access_key_id": access_key_id}).one_or_none()
    return Caller(*row) if row is not None else None


def create_worker(session: Session, username: str, password: str, *, country: str = "US") -> Worker:
    """Sign a worker up; usernames are unique, passwords are stored hashed."""
    username = username.strip()
    if not username or len(username) > 64:
        raise RequestError("Choose a user name of 1 to 64 characters.")
    if not username.isprintable():
        # NUL cannot even be stored in PostgreSQL; line breaks, bells and invisible marks make
        # names that look like someone else's.
        raise RequestError("Choose a user name without control characters.")
    if len(password) < 8:
        raise RequestError("Choose a password of at least 8 characters.")
    country = country.strip().upper()
    if len(country) != 2 or not country.isascii() or not country.isalpha():
        raise RequestError("Give your country as a two-letter country code, such as US.")
    if session.scalar(select(Worker).where(Worker.username == username)):
        raise RequestError("That user name is taken.")
    worker = Worker(
        id=new_customer_id(),
        username=username,
        password_hash=generate_password_hash(password),
        country=country,
    )
    session.add(worker)
    session.flush()
    return worker


def find_worker(session: Session, username: str) -> Worker | None:
    """The worker whose user name is exactly ``username`` (spaces around it dropped), or None."""
    name = passwords.name_to_look_up(username)
    return session.scalar(select(Worker).where(Worker.username == name)) if name else None


def password_matches(worker: Worker | None, password: str) -> bool:
    """Whether ``password`` is ``worker``'s; no worker costs one hash too, so timing tells nothing."""
    return passwords.matches(worker.password_hash if worker is not None else None, password)


_UNCHANGED: Any = object()


def set_worker_profile(
    session: Session,
    worker_id: str,
    *,
    country: str | None = None,
    subdivision: str | None = _UNCHANGED,
    is_adult: bool | None = None,
) -> Worker:
    """Change what a worker's system qualifications are read from: Locale (country, subdivision) and Adult.

    ``subdivision=None`` clears it; a new country without a subdivision clears
    the old one (it belonged to the old country). Codes are ISO 3166, as in
    QualificationRequirements.
    """
    worker = session.get(Worker, worker_id)
    if worker is None:
        raise RequestError(f"Worker {worker_id} does not exist.", "AWS.MechanicalTurk.WorkerDoesNotExist")
    if country is not None:
        locale = v.locale_value({"Country": country})
        if locale["Country"] != worker.country and subdivision is _UNCHANGED:
            subdivision = None
        worker.country = locale["Country"]
    if subdivision is not _UNCHANGED:
        locale = v.locale_value({"Country": worker.country, "Subdivision": subdivision})
        worker.subdivision = locale.get("Subdivision")
    if is_adult is not None:
        worker.is_adult = is_adult
    session.flush()
    return worker
