"""The marketplace and the requester side on separate machines (``HITFORGE_SERVE``), each with its database.

Two servers, each serving one half and reaching only its own database (the
other half's URL points at a file that does not exist: a request that
touched it would fail). The requester side publishes through the market
host's MTurk API; workers use the market host's worker site, whose HIT pages
come from the requester host; the review pipeline reads and decides through
the API. Each host answers only its own half's routes, and is ready on its
own database alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests
from sqlalchemy import select

from demo.crowd import PROFILES
from demo.runner import free_port, serve_in_thread
from hits.db import make_engine, make_session_factory, session_scope
from hits.market.accounts import create_requester
from hits.requester.mturk import Marketplace
from hits.requester.tables.campaigns import OutboxEntry
from hits.schema import upgrade
from hits.settings import Settings, load_settings
from server import create_app
from tests.conftest import BACKEND, _postgres_database
from tests.helpers import campaign_bot, launch_demo_campaign
from tests.quality.test_followups import review


@dataclass
class Hosts:
    market_url: str
    requester_url: str
    market: Marketplace
    requester_sessions: Any


def _database(tmp_path: Path, name: str) -> str:
    return _postgres_database() if BACKEND == "postgres" else f"sqlite:///{tmp_path / name}.sqlite"


@pytest.fixture
def hosts(tmp_path: Path) -> Iterator[Hosts]:
    market_db, requester_db = _database(tmp_path, "market"), _database(tmp_path, "requester")
    nowhere = f"sqlite:///{tmp_path / 'not-this-host' / 'other-half.sqlite'}"  # never created
    market_port, requester_port = free_port(), free_port()

    upgrade(load_settings({"HITFORGE_VAR_DIR": str(tmp_path / "m"), "HITFORGE_DATABASE_URL": market_db}))
    upgrade(load_settings({"HITFORGE_VAR_DIR": str(tmp_path / "r"), "HITFORGE_DATABASE_URL": requester_db}))
    with session_scope(make_session_factory(make_engine(market_db))) as session:
        key = create_requester(session, f"split-{secrets.token_hex(3)}", Decimal("50.00"))

    def settings_of(serve: str, var: str, own: str, public_port: int) -> Settings:
        env = {
            "HITFORGE_VAR_DIR": str(tmp_path / var),
            "HITFORGE_SECRET_KEY": secrets.token_urlsafe(32),  # each host its own: nothing shared
            "HITFORGE_PUBLIC_URL": f"http://127.0.0.1:{public_port}",
            "HITFORGE_SERVE": serve,
            "HITFORGE_MTURK_ENDPOINT_URL": f"http://127.0.0.1:{market_port}",
        }
        if serve == "market":
            env.update(HITFORGE_MARKET_DATABASE_URL=own, HITFORGE_DATABASE_URL=nowhere)
        else:
            # The requester host checks a HIT page's assignment through the market host's API.
            env.update(
                HITFORGE_DATABASE_URL=own,
                HITFORGE_MARKET_DATABASE_URL=nowhere,
                HITFORGE_MTURK_ACCESS_KEY_ID=key.access_key_id,
                HITFORGE_MTURK_SECRET_ACCESS_KEY=key.secret_access_key,
            )
        return load_settings(env)

    market_settings = settings_of("market", "market-host", market_db, market_port)
    requester_settings = settings_of("requester", "requester-host", requester_db, requester_port)
    market_server = serve_in_thread(create_app(settings=market_settings), port=market_port)
    requester_server = serve_in_thread(create_app(settings=requester_settings), port=requester_port)
    market = Marketplace.connect(market_server.url, key.access_key_id, key.secret_access_key)
    try:
        yield Hosts(
            market_server.url, requester_server.url, market, make_session_factory(make_engine(requester_db))
        )
    finally:
        market_server.stop()
        requester_server.stop()


def test_each_host_serves_its_half_and_is_ready_on_its_own_database(hosts: Hosts) -> None:
    market_ready = requests.get(hosts.market_url + "/readyz", timeout=10).json()
    requester_ready = requests.get(hosts.requester_url + "/readyz", timeout=10).json()
    assert market_ready["status"] == "ready" and "requester_database" not in market_ready["checks"]
    assert requester_ready["status"] == "ready" and "market_database" not in requester_ready["checks"]
    assert requests.get(hosts.market_url + "/dashboard/", timeout=10).status_code == 404
    assert requests.get(hosts.requester_url + "/worker/", timeout=10).status_code == 404
    assert requests.post(hosts.requester_url + "/", data="{}", timeout=10).status_code in (404, 405)


def test_a_campaign_runs_across_the_two_hosts(tmp_path: Path, hosts: Hosts) -> None:
    campaign_id, truth = launch_demo_campaign(
        tmp_path,
        hosts.market,
        hosts.requester_sessions,
        hosts.requester_url,  # the HIT pages' address: the requester host
        hits=2,
        name="split",
        # Gold alone: two workers, each the other's only consensus (see test_stack): about the hosts.
        quality={"accuracy_threshold": 0.6, "confidence": 0.75, "min_gold": 2, "worker_model": False},
    )
    good = campaign_bot(hosts.market_url, "split-good", PROFILES["diligent"], truth, "split")
    bad = campaign_bot(hosts.market_url, "split-bad", PROFILES["spammer"], truth, "split")
    assert good.run(max_hits=2).submitted == 2, good.result.errors
    assert bad.run(max_hits=2).submitted == 2, bad.result.errors
    for _ in range(3):
        review(hosts.requester_sessions, hosts.market)
    with session_scope(hosts.requester_sessions) as session:
        entries = session.scalars(select(OutboxEntry).where(OutboxEntry.campaign_id == campaign_id)).all()
        decided = {
            e.target: e.action for e in entries if e.action in ("approve", "reject") and e.status == "done"
        }
    assert sorted(decided.values()) == ["approve"] * 2 + ["reject"] * 2, decided
    # Applied on the marketplace (its own database, read through the market host's API).
    on_market = {a: hosts.market.get_assignment(a)["AssignmentStatus"] for a in decided}
    assert on_market == {a: {"approve": "Approved", "reject": "Rejected"}[d] for a, d in decided.items()}
