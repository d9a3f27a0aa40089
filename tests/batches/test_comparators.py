"""The comparator names come from botocore's mturk service model, in one place the
marketplace and ``hitforge batch`` both check against."""

from __future__ import annotations

import uuid

from botocore.config import Config
from botocore.loaders import Loader
from click.testing import CliRunner

from hits.market.validation import comparators
from server.cli.main import main
from tests.batches.test_batch_cli import cli_env, files
from tests.conftest import boto3_client

MODEL_ENUM = list(Loader().load_service_model("mturk", "service-2")["shapes"]["Comparator"]["enum"])


def test_one_comparator_list_read_from_the_service_model(live_server, settings, requester, tmp_path) -> None:
    assert list(comparators()) == MODEL_ENUM
    # The batch command names exactly the model's comparators, in the model's order.
    layout, csv = files(tmp_path, b"word\nhello\n")
    args = ["batch", "publish", layout, csv, "--name", f"w-{uuid.uuid4().hex[:6]}", "--title", "t"]
    args += ["--description", "d", "--reward", "0.10", "--qualification", "00000000000000000071:Equals:1"]
    refused = CliRunner().invoke(main, args, env=cli_env(settings, requester))
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert "COMPARATOR one of " + ", ".join(MODEL_ENUM) in " ".join(refused.output.split())
    # The marketplace takes every name of the model and refuses one outside it (botocore's
    # own enum check is off here, as in a client that skips validation).
    client = boto3_client(live_server.url, requester, Config(parameter_validation=False))
    values = {
        "Exists": {},
        "DoesNotExist": {},
        "In": {"IntegerValues": [1, 2]},
        "NotIn": {"IntegerValues": [3]},
    }
    for comparator in [*MODEL_ENUM, "Equals"]:
        requirement = {
            "QualificationTypeId": "00000000000000000040",
            "Comparator": comparator,
            **values.get(comparator, {"IntegerValues": [5]}),
        }
        try:
            client.create_hit_type(
                Title="t",
                Description="d",
                Reward="0.10",
                AssignmentDurationInSeconds=600,
                QualificationRequirements=[requirement],
            )
            outcome = "created"
        except client.exceptions.RequestError as exc:
            outcome = str(exc)
        if comparator == "Equals":
            assert "got 'Equals'" in outcome
        else:
            assert outcome == "created", (comparator, outcome)


def test_locale_values_from_the_flag(live_server, settings, requester, tmp_path) -> None:
    # MTurk's Locale qualification takes countries (LocaleValues), not integers: the flag writes them.
    layout, csv = files(tmp_path, b"word\nhello\n")
    title = f"Locale {uuid.uuid4().hex[:6]}"
    args = ["batch", "publish", layout, csv, "--name", f"w-{uuid.uuid4().hex[:6]}", "--title", title]
    args += ["--description", "d", "--reward", "0.10", "--qualification", "00000000000000000071:In:US,DE-BE"]
    published = CliRunner().invoke(main, args, env=cli_env(settings, requester))
    assert published.exit_code == 0, published.output
    client = boto3_client(live_server.url, requester)
    (hit,) = [h for h in client.list_hits(MaxResults=100)["HITs"] if h["Title"] == title]
    (requirement,) = hit["QualificationRequirements"]
    assert requirement["Comparator"] == "In"
    assert requirement["LocaleValues"] == [{"Country": "US"}, {"Country": "DE", "Subdivision": "BE"}]
