"""``hitforge batch`` as a careless requester uses it: bad files get located errors and
store nothing; a publish that fails half way resumes without a duplicate HIT."""

from __future__ import annotations

import uuid
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import func, select

from hits.db import session_scope
from hits.market.requester_options import set_options
from hits.requester.batches.plan import BatchSettings, create_batch
from hits.requester.batches.publish import publish_batch
from hits.requester.mturk import ServiceUnavailable
from hits.requester.tables.batches import Batch, BatchRow
from server.cli.main import main
from tests.batches.test_batch_flow import accepted_frame
from tests.conftest import boto3_client
from tests.server.worker_helpers import WorkerClient

LAYOUT = '<p>${word}</p>\n<p>Say it again: <input name="again"></p>\n'


def cli_env(settings, requester) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_MTURK_ENDPOINT_URL": settings.public_url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
    }


def files(tmp_path: Path, csv: bytes, layout: str = LAYOUT) -> tuple[str, str]:
    (tmp_path / "layout.html").write_text(layout, encoding="utf-8")
    (tmp_path / "words.csv").write_bytes(csv)
    return str(tmp_path / "layout.html"), str(tmp_path / "words.csv")


def publish(env: dict[str, str], layout: str, csv: str, name: str, *extra: str):  # type: ignore[no-untyped-def]
    args = ["batch", "publish", layout, csv, "--name", name, "--title", "Say a word"]
    args += ["--description", "Type the word again.", "--reward", "0.10", *extra]
    return CliRunner().invoke(main, args, env=env)


def batches_named(requester_sessions, name: str) -> int:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return int(session.scalar(select(func.count()).where(Batch.name == name)) or 0)


def test_malformed_inputs_name_file_line_and_field(
    live_server, settings, requester, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    name = f"words-{uuid.uuid4().hex[:6]}"
    cases = [
        (b"word\nhello\nw\xe9rld\n", "words.csv, line 3: byte 0xe9 at column 2 is not UTF-8"),
        (b"word,note,word\nhello,a,b\n", "words.csv, line 1, field 'word': the column name is repeated"),
        (b"wrd\nhello\n", "words.csv, line 1, field 'word': the layout"),
        (b"word\nhello\nthere,extra\n", "words.csv, line 3: the row has 2 fields, the header 1"),
    ]
    for content, expected in cases:
        layout, csv = files(tmp_path, content)
        result = publish(env, layout, csv, name)
        assert result.exit_code == 2, result.output
        assert expected in result.output, result.output
        assert "Traceback" not in result.output
        assert batches_named(requester_sessions, name) == 0
    layout, csv = files(tmp_path, b"word\nhello\n")
    bad_flag = publish(env, layout, csv, name, "--reward", "ten cents")
    assert bad_flag.exit_code == 2 and "field '--reward'" in bad_flag.output
    (tmp_path / "batch.yaml").write_text("title: Say a word\nassignments: 0\n", encoding="utf-8")
    bad_yaml = CliRunner().invoke(
        main,
        ["batch", "publish", layout, csv, "--name", name, "--settings", str(tmp_path / "batch.yaml")],
        env=env,
    )
    assert bad_yaml.exit_code == 2
    assert "batch.yaml, line 2, field 'assignments'" in bad_yaml.output
    assert batches_named(requester_sessions, name) == 0


def test_publish_interrupted_half_way_resumes_without_duplicates(
    live_server, settings, requester, market, market_sessions, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    name = f"words-{uuid.uuid4().hex[:6]}"
    layout, csv = files(tmp_path, b"word\none\ntwo\nthree\nfour\n")
    with session_scope(requester_sessions) as session:
        batch_id = create_batch(
            session,
            name,
            Path(layout),
            Path(csv),
            BatchSettings(title="Say a word", description="Type it.", reward=Decimal("0.10")),
        ).id

    def marketplace_fails_after_two(done: int, total: int) -> None:
        # The marketplace's own fault injection: every call of this requester now fails.
        if done == 2:
            with session_scope(market_sessions) as session:
                set_options(session, requester.requester_id, fault_rate=1.0)

    with pytest.raises(ServiceUnavailable):
        publish_batch(requester_sessions, market, batch_id, progress=marketplace_fails_after_two)
    assert len(recorded_hits(requester_sessions, name)) == 2
    # One HIT made whose id was then lost (a crash right after the call returned).
    with session_scope(requester_sessions) as session:
        row = session.scalars(
            select(BatchRow).where(BatchRow.batch_id == batch_id, BatchRow.mturk_hit_id.isnot(None))
        ).first()
        assert row is not None
        row.mturk_hit_id = None
    with session_scope(market_sessions) as session:
        set_options(session, requester.requester_id)
    second = CliRunner().invoke(main, ["batch", "publish", layout, csv, "--name", name, "--resume"], env=env)
    assert second.exit_code == 0, second.output
    assert "2 HITs published, 1 already there" in second.output
    recorded = recorded_hits(requester_sessions, name)
    mturk = boto3_client(live_server.url, requester)
    on_market = [h["HITId"] for h in mturk.list_hits(MaxResults=100)["HITs"]]
    assert len(recorded) == 4 and sorted(on_market) == sorted(recorded)
    # Running it yet again is harmless.
    third = CliRunner().invoke(main, ["batch", "publish", layout, csv, "--name", name, "--resume"], env=env)
    assert third.exit_code == 0 and "0 HITs published, 0 already there" in third.output


def recorded_hits(requester_sessions, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    with session_scope(requester_sessions) as session:
        return [
            str(h)
            for h in session.scalars(
                select(BatchRow.mturk_hit_id)
                .join(Batch)
                .where(Batch.name == name, BatchRow.mturk_hit_id.isnot(None))
            )
        ]


def test_results_and_review_from_the_command_line(
    live_server, settings, requester, requester_sessions, tmp_path
) -> None:
    env = cli_env(settings, requester)
    name = f"words-{uuid.uuid4().hex[:6]}"
    layout, csv = files(tmp_path, b"\xef\xbb\xbfword\nhello\n")  # Excel's UTF-8 byte-order mark
    published = publish(env, layout, csv, name, "--assignments", "2")
    assert published.exit_code == 0 and "1 HITs published" in published.output, published.output
    (hit_id,) = recorded_hits(requester_sessions, name)
    done = []
    for who in ("ann", "ben"):
        worker = WorkerClient(live_server.url, who)
        assignment_id, token = accepted_frame(worker, hit_id, {"assignmentId", "again"})
        posted = requests.post(
            f"{live_server.url}/mturk/externalSubmit",
            data={"assignmentId": assignment_id, "hitforgeToken": token, "again": f"hello from {who}"},
        )
        assert posted.status_code == 200
        done.append(assignment_id)
    out = tmp_path / "results.csv"
    written = CliRunner().invoke(main, ["batch", "results", name, "--out", str(out)], env=env)
    assert written.exit_code == 0, written.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(frame.columns[-4:]) == ["Input.word", "Answer.again", "Approve", "Reject"]
    assert sorted(frame["Answer.again"]) == ["hello from ann", "hello from ben"]
    frame.loc[frame["AssignmentId"] == done[0], "Approve"] = "x"
    frame.loc[frame["AssignmentId"] == done[1], "Reject"] = "Copy the word, please."
    frame.to_csv(out, index=False)
    first = CliRunner().invoke(main, ["batch", "review", name, str(out)], env=env)
    assert first.exit_code == 0 and "2 marks: 2 applied now, 0 applied before, 0 failed" in first.output
    again = CliRunner().invoke(main, ["batch", "review", name, str(out)], env=env)
    assert again.exit_code == 0 and "2 marks: 0 applied now, 2 applied before, 0 failed" in again.output
    mturk = boto3_client(live_server.url, requester)
    statuses = [mturk.get_assignment(AssignmentId=a)["Assignment"]["AssignmentStatus"] for a in done]
    assert statuses == ["Approved", "Rejected"]
    # Changing one's mind in the file is refused, naming the line; nothing else moves.
    frame.loc[frame["AssignmentId"] == done[1], ["Approve", "Reject"]] = ["x", ""]
    frame.to_csv(out, index=False)
    flipped = CliRunner().invoke(main, ["batch", "review", name, str(out)], env=env)
    line = 2 + int(frame.index[frame["AssignmentId"] == done[1]][0])
    assert flipped.exit_code == 2
    assert (
        f"results.csv, line {line}, field 'Approve': assignment {done[1]} is marked to reject"
        in flipped.output
    )
    out.write_bytes(out.read_bytes() + b"\xff\n")
    garbled = CliRunner().invoke(main, ["batch", "review", name, str(out)], env=env)
    assert garbled.exit_code == 2 and "is not UTF-8" in garbled.output and "Traceback" not in garbled.output
