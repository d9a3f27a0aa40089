"""A HIT created by any boto3 script whose HTMLQuestion loads a URL hitforge does not serve.

CreateHIT's reply has no field for a warning, so the requester learns it from a
server log line, ``hitforge batch check --hit HITID`` (GetHIT through the API),
the dashboard's list of open HITs per HIT type and, for a batch, its campaign list.
"""

from __future__ import annotations

import logging
import uuid

from click.testing import CliRunner

from hits.db import session_scope
from hits.requester.tables.batches import Batch
from hits.requester.tables.campaigns import BATCH_STATUS, Campaign
from server.cli.main import main
from tests.batches.test_batch_cli import cli_env
from tests.server.test_dashboard import staff_session
from tests.server.worker_helpers import create_hit, html_question

UNSERVED = "https://cdn.example.org/widget.js"
SERVED = "https://code.jquery.com/jquery-3.7.1.min.js"
PAGE = f"""<!DOCTYPE html><html><head>
<script src="{SERVED}"></script><script src="{UNSERVED}"></script>
<script src="https://assets.crowd.aws/crowd-html-elements.js"></script>
</head><body><crowd-form><crowd-input name="word"></crowd-input></crowd-form></body></html>"""


def test_create_hit_logs_the_unserved_urls_and_batch_check_hit_lists_them(  # type: ignore[no-untyped-def]
    settings, requester, mturk, caplog
) -> None:
    with caplog.at_level(logging.WARNING):
        hit_id = create_hit(mturk, html_question(PAGE))
    logged = [r.getMessage() for r in caplog.records if hit_id in r.getMessage()]
    assert logged == [
        f"HIT {hit_id} (requester {requester.requester_id}) loads URLs hitforge does not serve: {UNSERVED}"
    ]
    result = CliRunner().invoke(main, ["batch", "check", "--hit", hit_id], env=cli_env(settings, requester))
    assert result.exit_code == 1, result.output
    assert f"not served  {UNSERVED}\n" in result.output
    assert f"served      {SERVED} -> jquery 3.7.1" in result.output
    assert "1 served (0 substituted), 1 not served" in result.output


def test_batch_check_hit_refuses_clearly(settings, requester, mturk, caplog) -> None:  # type: ignore[no-untyped-def]
    env = cli_env(settings, requester)
    with caplog.at_level(logging.WARNING):
        served_only = create_hit(
            mturk, html_question(PAGE.replace(f'<script src="{UNSERVED}"></script>', ""))
        )
    assert not [r for r in caplog.records if served_only in r.getMessage()]
    passed = CliRunner().invoke(main, ["batch", "check", "--hit", served_only], env=env)
    assert passed.exit_code == 0 and "1 served (0 substituted), 0 not served" in passed.output
    missing = CliRunner().invoke(
        main, ["batch", "check", "--hit", "3NOSUCHHIT000000000000000000000"], env=env
    )
    assert missing.exit_code == 2 and "error: HIT 3NOSUCHHIT" in missing.output
    neither = CliRunner().invoke(main, ["batch", "check"], env=env)
    assert neither.exit_code == 2 and "give either PAGE or --hit HITID" in neither.output


def test_the_dashboard_lists_a_batchs_unserved_urls(live_server, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    name = f"unserved-{uuid.uuid4().hex[:8]}"
    with session_scope(requester_sessions) as session:
        campaign = Campaign(name=name, template="layout", spec={}, budget=0, status=BATCH_STATUS)
        session.add(campaign)
        session.flush()
        layout = f'<script src="{UNSERVED}"></script><script src="{SERVED}"></script><p>${{word}}</p>'
        session.add(Batch(campaign_id=campaign.id, name=name, layout=layout, columns=["word"], settings={}))
        campaign_id = campaign.id
    page = staff_session(live_server.url, requester_sessions).get(live_server.url + "/dashboard/").text
    from bs4 import BeautifulSoup

    note = BeautifulSoup(page, "html.parser").find(id=f"unserved-{campaign_id}")
    assert note is not None
    assert [code.get_text() for code in note.find_all("code")] == [UNSERVED]


def unserved_rows(http, base: str) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """The dashboard's HIT types with unserved URLs: row id to the URLs listed."""
    from bs4 import BeautifulSoup

    table = BeautifulSoup(http.get(base + "/dashboard/").text, "html.parser").find(id="unserved-hits")
    if table is None:
        return {}
    return {
        str(row["id"]): [li.get_text() for li in row.find_all("li")]
        for row in table.find_all("tr", id=True)  # type: ignore[union-attr]
    }


def test_the_dashboard_lists_a_boto3_hits_unserved_urls(  # type: ignore[no-untyped-def]
    live_server, requester_sessions, requester, mturk, market_sessions
) -> None:
    from tests.conftest import new_requester

    hit_id = create_hit(mturk, html_question(PAGE))
    hit_type_id = mturk.get_hit(HITId=hit_id)["HIT"]["HITTypeId"]
    served_only = create_hit(mturk, html_question(PAGE.replace(f'<script src="{UNSERVED}"></script>', "")))
    row = f"unserved-type-{hit_type_id}"
    # The requester's own dashboard user sees it, with the unserved URL only (not jQuery, not AWS's script).
    own = staff_session(live_server.url, requester_sessions, "requester", requester.access_key_id)
    assert unserved_rows(own, live_server.url)[row] == [UNSERVED]
    page = own.get(live_server.url + "/dashboard/").text
    assert hit_id in page and served_only not in page
    assert unserved_rows(staff_session(live_server.url, requester_sessions), live_server.url)[row] == [
        UNSERVED
    ]
    # Another account's user and a QA reviewer do not.
    other_key = new_requester(market_sessions)
    other = staff_session(live_server.url, requester_sessions, "requester", other_key.access_key_id)
    assert row not in unserved_rows(other, live_server.url)
    qa = staff_session(live_server.url, requester_sessions, "qa")
    assert unserved_rows(qa, live_server.url) == {}
