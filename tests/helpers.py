"""Small builders shared by tests."""

from __future__ import annotations

from typing import Any

EXTERNAL_QUESTION = (
    '<ExternalQuestion xmlns="http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/'
    '2006-07-14/ExternalQuestion.xsd"><ExternalURL>{url}</ExternalURL>'
    "<FrameHeight>600</FrameHeight></ExternalQuestion>"
)


def hit_params(url: str = "https://example.org/task", **overrides: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "MaxAssignments": 2,
        "LifetimeInSeconds": 3600,
        "AssignmentDurationInSeconds": 600,
        "Reward": "0.25",
        "Title": "Rate some pictures",
        "Description": "Rate how well each sentence fits its picture.",
        "Question": EXTERNAL_QUESTION.format(url=url),
    }
    params.update(overrides)
    return params
