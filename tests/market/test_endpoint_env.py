"""An unchanged `boto3.client("mturk")` reaches hitforge through AWS_ENDPOINT_URL_MTURK."""

from __future__ import annotations

import subprocess
import sys


def test_an_unchanged_script_uses_the_endpoint_from_the_environment(live_server, requester) -> None:
    script = "import boto3; print(boto3.client('mturk').get_account_balance()['AvailableBalance'])"
    result = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", script],
        env={
            "PATH": "/usr/bin:/bin",
            "AWS_ENDPOINT_URL_MTURK": live_server.url,
            "AWS_ACCESS_KEY_ID": requester.access_key_id,
            "AWS_SECRET_ACCESS_KEY": requester.secret_access_key,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": "/dev/null",
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "100.00"
