"""A worker who opened a round's HIT and returned it has seen the picture: its later rounds are not theirs."""

from __future__ import annotations

from hits.requester.workflows.publish import run_step
from tests.server.worker_helpers import WorkerClient, csrf_of, soup
from tests.workflows.helpers import accept_round, launch_refine_workflow
from tests.workflows.test_refine_blinding import _round_hit, _sync, _work


def test_a_worker_who_returned_a_round_is_refused_the_pictures_next_round(
    tmp_path, live_server, market, requester_sessions
) -> None:
    workflow_id = launch_refine_workflow(
        tmp_path, "refine-returned", market, requester_sessions, pictures=1, complete=0
    )
    hit_page = live_server.url + "/tasks/hit"
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    first_hit = _round_hit(requester_sessions, workflow_id, 1)

    # Accepts round 1, sees the picture and its text on the HIT page, and gives the HIT back.
    quitter = WorkerClient(live_server.url, "returned")
    work, frame = accept_round(quitter, first_hit)
    page = quitter.get(frame)
    assert page.status_code == 200 and soup(page).find("textarea") is not None
    returned = quitter.post_form(work, 'form[action$="/return"]', {})
    assert returned.status_code == 200 and "returned" in returned.text

    # Someone else does round 1; it is approved and round 2 is published.
    doer = WorkerClient(live_server.url, "returned-doer")
    _work(doer, first_hit, lambda old: old + " A red square sits left of a blue circle.")
    _sync(requester_sessions, market)
    assert run_step(requester_sessions, market, workflow_id, hit_page).published == 1
    second_hit = _round_hit(requester_sessions, workflow_id, 2)

    # The marketplace keeps the worker who returned round 1 out: not listed, no preview, no accept.
    assert second_hit not in quitter.get("/").text
    assert quitter.get(f"/hits/{second_hit}").status_code == 403
    group = market.get_hit(second_hit)["HITTypeId"]
    refused = quitter.http.post(
        live_server.url + f"/groups/{group}/accept", data={"csrf_token": csrf_of(quitter.get("/"))}
    )
    assert "/work/" not in refused.url
    # A newcomer may take it.
    assert WorkerClient(live_server.url, "returned-new").get(f"/hits/{second_hit}").status_code == 200
