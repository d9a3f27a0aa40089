"""CreateHIT / CreateHITWithHITType with HITLayoutId + HITLayoutParameters, through boto3,
as a requester's MTurk scripts that published a project's layout call them."""

from __future__ import annotations

import uuid

import pytest
import requests
from botocore.exceptions import ClientError
from click.testing import CliRunner

from server.cli.main import main
from tests.batches.test_batch_flow import accepted_frame
from tests.conftest import boto3_client, new_requester
from tests.server.worker_helpers import WorkerClient

LAYOUT = """<p>Is <b>${ word }</b> a ${kind}?</p>
<p><label><input type="radio" name="answer" value="yes"> yes</label>
<label><input type="radio" name="answer" value="no"> no</label></p>
<script>var shown = `${word} (${1 + 1})`;</script>
"""


# ${image_url} is used only inside <script>: a batch's CSV column fills it, so a parameter must too.
SCRIPT_LAYOUT = """<p>Describe ${word}.</p><img id="pic" alt="">
<script>document.getElementById("pic").src = "${image_url}"; var n = `${count}`;</script>
<textarea name="answer"></textarea>
"""


def store_layout(settings, requester_id: str, tmp_path, layout: str = LAYOUT) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """Store ``layout`` with ``hitforge batch layout``: its HITLayoutId and what the command printed."""
    path = tmp_path / f"layout-{uuid.uuid4().hex[:6]}.html"
    path.write_text(layout, encoding="utf-8")
    env = {
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
    }
    result = CliRunner().invoke(main, ["batch", "layout", str(path), "--requester", requester_id], env=env)
    assert result.exit_code == 0, result.output
    return result.output.split("HITLayoutId: ", 1)[1].split()[0], result.output


def store_word_layout(settings, requester_id: str, tmp_path) -> str:  # type: ignore[no-untyped-def]
    layout_id, output = store_layout(settings, requester_id, tmp_path)
    assert "HITLayoutParameters: word, kind\n" in output
    return layout_id


def params(word: str, kind: str = "noun") -> list[dict[str, str]]:
    return [{"Name": "word", "Value": word}, {"Name": "kind", "Value": kind}]


def test_hit_layout_id_fills_the_layout_and_is_worked(
    live_server, settings, mturk, requester, tmp_path
) -> None:
    layout_id = store_word_layout(settings, requester.requester_id, tmp_path)
    created = mturk.create_hit(
        MaxAssignments=1,
        LifetimeInSeconds=3600,
        AssignmentDurationInSeconds=600,
        Reward="0.05",
        Title=f"Word kinds {uuid.uuid4().hex[:6]}",
        Description="Say whether the word is of that kind.",
        HITLayoutId=layout_id,
        HITLayoutParameters=params('<i>"run"</i>', "verb"),
    )["HIT"]
    assert created["HITLayoutId"] == layout_id
    question = mturk.get_hit(HITId=created["HITId"])["HIT"]["Question"]
    assert "<b>&lt;i&gt;&quot;run&quot;&lt;/i&gt;</b> a verb?" in question
    assert "(${1 + 1})" in question  # a template literal stays as written
    again = mturk.create_hit_with_hit_type(
        HITTypeId=created["HITTypeId"],
        LifetimeInSeconds=3600,
        HITLayoutId=layout_id,
        HITLayoutParameters=params("cat"),
    )["HIT"]
    assert again["HITLayoutId"] == layout_id and "<b>cat</b> a noun?" in again["Question"]
    worker = WorkerClient(live_server.url, "layout")
    assignment_id = work_radio(worker, created["HITId"])
    got = mturk.get_assignment(AssignmentId=assignment_id)["Assignment"]
    assert got["AssignmentStatus"] == "Submitted" and "<FreeText>yes</FreeText>" in got["Answer"]


def work_radio(worker: WorkerClient, hit_id: str) -> str:
    assignment_id, token = accepted_frame(worker, hit_id, expected={"assignmentId", "answer"})
    posted = requests.post(
        f"{worker.base}/mturk/externalSubmit",
        data={"assignmentId": assignment_id, "hitforgeToken": token, "answer": "yes"},
    )
    assert posted.status_code == 200
    return assignment_id


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"HITLayoutParameters": [{"Name": "word", "Value": "cat"}]}, "lack a value for: kind"),
        ({"HITLayoutParameters": [*params("cat"), {"Name": "colour", "Value": "red"}]}, "colour is not a"),
        ({"HITLayoutParameters": [*params("cat"), {"Name": "word", "Value": "dog"}]}, "word is given twice"),
        ({"Question": "<HTMLQuestion/>"}, "either Question or HITLayoutId"),
        ({"HITLayoutId": "NOSUCHLAYOUT"}, "HITLayoutId NOSUCHLAYOUT does not exist"),
    ],
)
def test_bad_layout_calls_are_refused(
    live_server, settings, mturk, requester, tmp_path, overrides, message
) -> None:
    layout_id = store_word_layout(settings, requester.requester_id, tmp_path)
    call = {
        "MaxAssignments": 1,
        "LifetimeInSeconds": 3600,
        "AssignmentDurationInSeconds": 600,
        "Reward": "0.05",
        "Title": "Word kinds",
        "Description": "Say whether the word is of that kind.",
        "HITLayoutId": layout_id,
        "HITLayoutParameters": params("cat"),
        **overrides,
    }
    with pytest.raises(ClientError) as refused:
        mturk.create_hit(**call)
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert message in refused.value.response["Error"]["Message"]


def test_another_requesters_layout_is_not_found(
    live_server, settings, market_sessions, requester, tmp_path
) -> None:
    layout_id = store_word_layout(settings, requester.requester_id, tmp_path)
    other = boto3_client(live_server.url, new_requester(market_sessions))
    with pytest.raises(ClientError) as refused:
        other.create_hit(
            MaxAssignments=1,
            LifetimeInSeconds=3600,
            AssignmentDurationInSeconds=600,
            Reward="0.05",
            Title="Word kinds",
            Description="Say whether the word is of that kind.",
            HITLayoutId=layout_id,
            HITLayoutParameters=params("cat"),
        )
    assert f"HITLayoutId {layout_id} does not exist" in refused.value.response["Error"]["Message"]


def test_a_placeholder_used_only_in_a_script_is_a_parameter(
    live_server, settings, mturk, requester, tmp_path
) -> None:
    layout_id, output = store_layout(settings, requester.requester_id, tmp_path, SCRIPT_LAYOUT)
    assert "HITLayoutParameters: word, image_url, count\n" in output
    assert "Optional (used only inside <script>; left as written when not given): image_url, count" in output
    hit_type = mturk.create_hit_type(
        AssignmentDurationInSeconds=600,
        Reward="0.05",
        Title=f"Describe {uuid.uuid4().hex[:6]}",
        Description="Describe the picture.",
    )["HITTypeId"]
    filled = mturk.create_hit_with_hit_type(
        HITTypeId=hit_type,
        LifetimeInSeconds=3600,
        HITLayoutId=layout_id,
        HITLayoutParameters=[
            {"Name": "word", "Value": "a dog"},
            {"Name": "image_url", "Value": "http://127.0.0.1/dog.png?a=1&b=2"},
        ],
    )["HIT"]
    question = mturk.get_hit(HITId=filled["HITId"])["HIT"]["Question"]
    # Filled as a batch's CSV row fills it (HTML-escaped); ${count} was not given and stays.
    assert '.src = "http://127.0.0.1/dog.png?a=1&amp;b=2"' in question
    assert "var n = `${count}`" in question and "<p>Describe a dog.</p>" in question
    # Only the markup's placeholders are required, as for a batch's CSV.
    with pytest.raises(ClientError) as refused:
        mturk.create_hit_with_hit_type(
            HITTypeId=hit_type,
            LifetimeInSeconds=3600,
            HITLayoutId=layout_id,
            HITLayoutParameters=[{"Name": "image_url", "Value": "x"}],
        )
    assert "lack a value for: word" in refused.value.response["Error"]["Message"]
