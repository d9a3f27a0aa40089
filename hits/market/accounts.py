"""Requester accounts with access keys, and worker sign-up and sign-in."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session
from werkzeug.security import check_password_hash, generate_password_hash

from hits.market import ledger
from hits.market.errors import RequestError
from hits.market.ids import new_access_key_id, new_customer_id, new_secret_key
from hits.market.models import AccessKey, Requester, Worker


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


def find_access_key(session: Session, access_key_id: str) -> AccessKey | None:
    key = session.get(AccessKey, access_key_id)
    return key if key is not None and key.active else None


def create_worker(session: Session, username: str, password: str, *, country: str = "US") -> Worker:
    """Sign a worker up; usernames are unique, passwords are stored hashed."""
    username = username.strip()
    if not username or len(username) > 64:
        raise RequestError("Choose a user name of 1 to 64 characters.")
    if len(password) < 8:
        raise RequestError("Choose a password of at least 8 characters.")
    if session.scalar(select(Worker).where(Worker.username == username)):
        raise RequestError("That user name is taken.")
    worker = Worker(
        id=new_customer_id(),
        username=username,
        password_hash=generate_password_hash(password),
        country=country.upper()[:2],
    )
    session.add(worker)
    session.flush()
    return worker


def authenticate_worker(session: Session, username: str, password: str) -> Worker | None:
    """The worker with these credentials, or None."""
    worker = session.scalar(select(Worker).where(Worker.username == username.strip()))
    if worker is None or not check_password_hash(worker.password_hash, password):
        return None
    return worker
