"""System qualifications workers can meet: Masters granted by the operator, Locale and Adult by profile."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hits.db import session_scope
from hits.market import assignment_ops
from hits.market.accounts import create_worker
from hits.market.errors import RequestError
from hits.market.models import Worker
from hits.market.qualification_ops import MASTERS
from server.cli.main import main
from tests.helpers import hit_params

MASTERS_PRODUCTION = "2F1QJWKUDD8XADTFD2Q0G6UTO95ALH"
MASTERS_SANDBOX = "2ARFPLSP75KLA8M8DH1HTEQVJT3SY6"
LOCALE = "00000000000000000071"
ADULT = "00000000000000000060"
NOT_MET = "AWS.MechanicalTurk.QualificationRequirementNotMet"


def hitforge(settings, *args: str) -> Result:  # type: ignore[no-untyped-def]
    """Run the ``hitforge`` command against the test databases."""
    env = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_SECRET_KEY": settings.secret_key,
    }
    return CliRunner().invoke(main, list(args), env=env)


def new_worker(market_sessions) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with session_scope(market_sessions) as session:
        worker = create_worker(session, f"w-{uuid.uuid4().hex[:8]}", "a-long-password")
        return worker.id, worker.username


def accept(market_sessions, worker_id: str, hit_id: str) -> str | None:  # type: ignore[no-untyped-def]
    """Accept as the worker site does; the refusal's TurkErrorCode, or None when accepted."""
    try:
        with session_scope(market_sessions) as session:
            assignment_ops.accept(session, session.get_one(Worker, worker_id), hit_id)
    except RequestError as exc:
        return exc.turk_error_code
    return None


def guarded_hit(mturk, qid: str, comparator: str, **values: Any) -> str:  # type: ignore[no-untyped-def]
    requirement = {"QualificationTypeId": qid, "Comparator": comparator, **values}
    return str(
        mturk.create_hit(**hit_params(MaxAssignments=5, QualificationRequirements=[requirement]))["HIT"][
            "HITId"
        ]
    )


def test_masters_is_met_only_once_the_operator_grants_it(mturk, settings, market_sessions) -> None:  # type: ignore[no-untyped-def]
    assert {MASTERS_PRODUCTION, MASTERS_SANDBOX} == MASTERS
    worker_id, username = new_worker(market_sessions)
    production = guarded_hit(mturk, MASTERS_PRODUCTION, "Exists")
    sandbox = guarded_hit(mturk, MASTERS_SANDBOX, "Exists")
    assert accept(market_sessions, worker_id, production) == NOT_MET
    granted = hitforge(settings, "workers", "masters", "grant", username)
    assert granted.exit_code == 0, granted.output
    assert accept(market_sessions, worker_id, production) is None
    assert accept(market_sessions, worker_id, sandbox) is None
    # A requester cannot grant or read it: the type is not theirs.
    with pytest.raises(mturk.exceptions.RequestError) as caught:
        mturk.associate_qualification_with_worker(
            QualificationTypeId=MASTERS_PRODUCTION, WorkerId=new_worker(market_sessions)[0], IntegerValue=1
        )
    assert caught.value.response["TurkErrorCode"] == "AWS.MechanicalTurk.QualificationTypeDoesNotExist"
    revoked = hitforge(settings, "workers", "masters", "revoke", worker_id)
    assert revoked.exit_code == 0, revoked.output
    assert accept(market_sessions, worker_id, guarded_hit(mturk, MASTERS_PRODUCTION, "Exists")) == NOT_MET
    assert accept(market_sessions, worker_id, guarded_hit(mturk, MASTERS_SANDBOX, "DoesNotExist")) is None
    again = hitforge(settings, "workers", "masters", "grant", worker_id)  # a revoked grant is granted again
    assert again.exit_code == 0, again.output
    assert accept(market_sessions, worker_id, guarded_hit(mturk, MASTERS_PRODUCTION, "Exists")) is None


def test_a_us_ca_locale_is_met_by_a_worker_in_california_only(mturk, settings, market_sessions) -> None:  # type: ignore[no-untyped-def]
    hit_id = guarded_hit(mturk, LOCALE, "EqualTo", LocaleValues=[{"Country": "US", "Subdivision": "CA"}])
    californian, new_yorker, unknown, canadian = (new_worker(market_sessions)[0] for _ in range(4))
    for worker_id, options in (
        (californian, ["--subdivision", "CA"]),
        (new_yorker, ["--subdivision", "NY"]),
        (canadian, ["--country", "CA"]),
    ):
        result = hitforge(settings, "workers", "profile", worker_id, *options)
        assert result.exit_code == 0, result.output
    assert "locale US-CA" in hitforge(settings, "workers", "profile", californian).output
    assert accept(market_sessions, californian, hit_id) is None
    for worker_id in (new_yorker, unknown, canadian):
        assert accept(market_sessions, worker_id, hit_id) == NOT_MET
    anywhere_in_us = guarded_hit(mturk, LOCALE, "In", LocaleValues=[{"Country": "US"}])
    assert accept(market_sessions, new_yorker, anywhere_in_us) is None
    assert accept(market_sessions, canadian, anywhere_in_us) == NOT_MET


def test_adult_comes_from_the_profile(mturk, settings, market_sessions) -> None:  # type: ignore[no-untyped-def]
    adult, minor = new_worker(market_sessions)[0], new_worker(market_sessions)[0]
    assert hitforge(settings, "workers", "profile", minor, "--not-adult").exit_code == 0
    hit_id = guarded_hit(mturk, ADULT, "EqualTo", IntegerValues=[1])
    assert accept(market_sessions, minor, hit_id) == NOT_MET
    assert accept(market_sessions, adult, hit_id) is None


def test_the_commands_refuse_what_cannot_be_stored(settings, market_sessions) -> None:  # type: ignore[no-untyped-def]
    worker_id, _ = new_worker(market_sessions)
    for args in (
        ["profile", worker_id, "--country", "usa"],
        ["profile", worker_id, "--subdivision", "Calif"],
        ["profile", worker_id, "--subdivision", "CA", "--no-subdivision"],
        ["masters", "grant", "nobody-" + uuid.uuid4().hex[:8]],
    ):
        result = hitforge(settings, "workers", *args)
        assert result.exit_code != 0, args
    with session_scope(market_sessions) as session:
        worker = session.get_one(Worker, worker_id)
        assert (worker.country, worker.subdivision, worker.is_adult) == ("US", None, True)
