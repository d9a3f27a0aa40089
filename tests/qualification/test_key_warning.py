"""Issue 15, item 13: publishing with keys other than the review worker's warns: at publish, on the dashboard.

Requester A's keys run the review worker (here its apply code, as the
``hitforge.apply_decisions`` task runs it, with A's boto3 client); requester B
publishes a test with the CLI. B's qualification may be granted only by B, so
the value of a worker who passes B's test stays pending: ``publish`` says so,
naming both requesters, and so does the dashboard, with the count waiting.
"""

from __future__ import annotations

from bs4 import BeautifulSoup
from click.testing import CliRunner
from sqlalchemy import select

from hits.db import session_scope, utcnow
from hits.requester.mturk import Marketplace
from hits.requester.quality.outbox import apply_entries
from hits.requester.tables.campaigns import OutboxEntry
from hits.requester.tables.qualification import QualificationTest
from qualification.bank import DEFAULT_BANK
from qualification.delivery import STUCK_AFTER, waiting_tests
from qualification.service import publish_test
from server.cli.main import main
from tests.conftest import new_requester
from tests.qualification.test_value_means_passed import granted, outbox_entry, take_test
from tests.server.test_dashboard import staff_session
from tests.server.test_dashboard_roles import Dashboard, make_user
from tests.server.worker_helpers import WorkerClient, soup


def test_publishing_with_other_keys_than_the_review_workers_warns_naming_both(
    live_server, market, requester, requester_sessions, market_sessions, settings
) -> None:
    # Requester A's review worker has applied a value: it is known to hold A's keys.
    with session_scope(requester_sessions) as session:
        test_a = publish_test(session, market, name="Keys A", bank_path=DEFAULT_BANK).id
    first = WorkerClient(live_server.url, "first")
    take_test(first, test_a, wrong_judgments=0)
    assert apply_entries(requester_sessions, market, [outbox_entry(requester_sessions, first)]).outcomes

    other = new_requester(market_sessions)
    env = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_PUBLIC_URL": live_server.url,
        "HITFORGE_MTURK_ENDPOINT_URL": live_server.url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": other.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": other.secret_access_key,
    }
    published = CliRunner().invoke(
        main, ["qualification", "publish", str(DEFAULT_BANK), "--name", "Keys B"], env=env
    )
    assert published.exit_code == 0, published.output
    said = " ".join(published.output.split())
    assert f"published by requester {other.access_key_id}" in said
    assert f"applies decisions with the keys of requester {requester.access_key_id}" in said
    assert f"HITFORGE_MTURK_ACCESS_KEY_ID={other.access_key_id}" in said

    # A worker passes B's test; the review worker, with A's keys, cannot apply the value.
    with session_scope(requester_sessions) as session:
        test_b = session.scalar(select(QualificationTest).where(QualificationTest.name == "Keys B"))
        assert test_b is not None
        test_b_id, qtype_b = test_b.id, test_b.qualification_type_id
    second = WorkerClient(live_server.url, "second")
    assert "You passed" in take_test(second, test_b_id, wrong_judgments=0)
    entry_id = outbox_entry(requester_sessions, second)
    report = apply_entries(requester_sessions, market, [entry_id])
    assert "another access key" in report.outcomes[entry_id]
    with session_scope(requester_sessions) as session:
        entry = session.get(OutboxEntry, entry_id)
        assert entry is not None and entry.status == "pending"
    b_market = Marketplace.connect(live_server.url, other.access_key_id, other.secret_access_key)
    assert second.worker_id not in granted(b_market, qtype_b)

    # The dashboard says so, naming both requesters and the count waiting.
    page = staff_session(live_server.url, requester_sessions).get(live_server.url + "/dashboard/")
    alert = soup(page).select_one(f"#waiting-test-{test_b_id}")
    assert alert is not None, page.text
    text = " ".join(alert.get_text().split())
    assert "1 qualification value of test 'Keys B' waits:" in text
    assert other.access_key_id in text and requester.access_key_id in text
    assert soup(page).select_one(f"#waiting-test-{test_a}") is None

    # Only staff who may see B's tests are told: B's requester user is, A's is not.
    b_user = Dashboard(live_server.url, make_user(requester_sessions, "requester", other.access_key_id))
    assert soup_text(b_user.home()).count("test 'Keys B'") == 1
    a_user = Dashboard(live_server.url, make_user(requester_sessions, "requester", requester.access_key_id))
    assert "Keys B" not in soup_text(a_user.home())


def soup_text(html: str) -> str:
    return " ".join(BeautifulSoup(html, "html.parser").get_text().split())


def test_a_value_pending_for_long_is_shown_even_with_the_right_keys(
    live_server, market, requester, requester_sessions
) -> None:
    """The review worker has this requester's keys but stopped: after a while the dashboard says so."""
    with session_scope(requester_sessions) as session:
        earlier = publish_test(session, market, name="Applied once", bank_path=DEFAULT_BANK).id
        test_id = publish_test(session, market, name="Nobody applies", bank_path=DEFAULT_BANK).id
    done = WorkerClient(live_server.url, "served")
    take_test(done, earlier, wrong_judgments=0)
    apply_entries(requester_sessions, market, [outbox_entry(requester_sessions, done)])
    worker = WorkerClient(live_server.url, "patient")
    take_test(worker, test_id, wrong_judgments=0)
    with session_scope(requester_sessions) as session:
        assert test_id not in [w.test_id for w in waiting_tests(session, utcnow())]
        later = {w.test_id: w for w in waiting_tests(session, utcnow() + STUCK_AFTER)}
    message = later[test_id].message
    assert "1 qualification value of test 'Nobody applies' has waited since" in message
    assert f"HITFORGE_MTURK_ACCESS_KEY_ID={requester.access_key_id}" in message
