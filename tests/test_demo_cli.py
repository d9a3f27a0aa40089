"""``hitforge demo --template NAME``: a whole campaign of another template, as a user runs it."""

from __future__ import annotations

import errno
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from demo.tasks import demo_tasks

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.celery


def test_the_demo_runs_with_the_target_template(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo", "--template", "target"],
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(REPO),
            "COLUMNS": "120",
            # A shell set up for another deployment: the demo keeps to its own embedded files.
            "HITFORGE_DATABASE_URL": f"sqlite:///{tmp_path / 'elsewhere.sqlite'}",
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "spammers caught, diligent workers paid" in result.stdout
    assert (tmp_path / "var" / "demo" / "campaign" / "items.jsonl").exists()
    assert '"template": "target"' not in result.stdout  # the summary, not a dump


def test_an_unknown_template_is_refused_with_the_choices(tmp_path) -> None:
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "server.cli", "demo", "--template", "nonsense"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "choose one of: " + ", ".join(sorted(demo_tasks())) in result.stdout
    assert "objects" in demo_tasks() and "rank" in demo_tasks() and "heatmap" in demo_tasks()
    assert "iiw" in result.stdout


def _demo_env() -> dict[str, str]:
    # Unbuffered: the test reads the demo's lines as it prints them.
    return {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "COLUMNS": "200", "PYTHONUNBUFFERED": "1"}


def test_the_demos_port_is_its_own_from_the_moment_it_is_named(tmp_path) -> None:
    demo = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        [sys.executable, "-m", "server.cli", "demo"],
        cwd=tmp_path,
        env=_demo_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert demo.stdout is not None
    try:
        named = re.search(r"http://127\.0\.0\.1:(\d+)", demo.stdout.readline())
        assert named, "the demo's first line names its URL"
        port = int(named.group(1))
        # Another program wants the same port while the demo is still preparing its databases:
        # the demo holds it already, so the other program is refused, not the demo.
        with socket.socket() as intruder, pytest.raises(OSError) as taken:
            intruder.bind(("127.0.0.1", port))
        assert taken.value.errno == errno.EADDRINUSE
        lines = []
        for line in demo.stdout:
            lines.append(line)
            if "server at" in line or "Traceback" in line:
                break
        assert f"server at http://127.0.0.1:{port};" in lines[-1], "".join(lines)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as page:  # noqa: S310 - our server
            assert page.status == 200
    finally:
        # Ctrl+C: the demo stops its Celery worker and its server on the way out.
        demo.send_signal(signal.SIGINT)
        demo.communicate(timeout=60)


def test_a_port_in_use_is_refused_clearly_and_the_last_demo_is_kept(tmp_path) -> None:
    earlier = tmp_path / "var" / "demo" / "campaign.yaml"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("the last demo's campaign\n")
    with socket.create_server(("127.0.0.1", 0)) as other:
        port = other.getsockname()[1]
        result = subprocess.run(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-m", "server.cli", "demo", "--port", str(port)],
            cwd=tmp_path,
            env=_demo_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"error: cannot listen on 127.0.0.1:{port}: Address already in use" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert earlier.read_text() == "the last demo's campaign\n"
