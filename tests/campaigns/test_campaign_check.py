"""``hitforge campaign check``: everything launch checks, a preview of the pages, and the plan (issue 25)."""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from click.testing import CliRunner, Result

from hits.requester.files.examples import example_files
from server.cli.main import main
from tests.campaigns.test_budget_refusal import launch
from tests.campaigns.test_campaign_file import GOOD, write


def check(tmp_path: Path, campaign: Path, *extra: str) -> Result:
    env = {"HITFORGE_VAR_DIR": str(tmp_path / "var"), "COLUMNS": "200"}
    return CliRunner().invoke(
        main, ["campaign", "check", str(campaign), *extra], env=env, catch_exceptions=False
    )


def said(result: Result) -> str:
    return " ".join(result.output.split())


def expected_plan(items: int, per_hit: int, assignments: int, reward: str) -> dict[str, Decimal | int]:
    """The plan's figures worked out here, from MTurk's published fee (20%, at least a cent)."""
    hits = -(-items // per_hit)
    amount = Decimal(reward)
    fee = max(Decimal("0.01"), (amount * Decimal("0.20")).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
    return {
        "hits": hits,
        "assignments": hits * assignments,
        "fee": fee,
        "cost": (amount + fee) * hits * assignments,
    }


def test_a_good_file_prints_the_plan_and_writes_the_pages(tmp_path: Path) -> None:
    items = [
        json.dumps({"id": f"i{i}", "item": {"image": "https://img/x.png", "sentence": f"Dog number {i}."}})
        for i in range(5)
    ]
    gold = [
        json.dumps(
            {
                "id": f"g{g}",
                "item": {"image": "https://img/g.png", "sentence": f"Cat {g}."},
                "answer": {"rating": 4},
            }
        )
        for g in range(3)
    ]
    path = write(tmp_path, GOOD, items=items, gold=gold)
    preview = tmp_path / "preview"
    result = check(tmp_path, path, "--preview-dir", str(preview))
    assert result.exit_code == 0, result.output
    plan = expected_plan(items=5, per_hit=2, assignments=3, reward="0.10")
    text = said(result)
    assert f"HITs: {plan['hits']}" in text
    assert "per HIT: 2 items (1 on the last HIT) + 1 gold, 3 assignments" in text
    assert f"assignments: {plan['assignments']}" in text
    assert f"reward: $0.10 per assignment + ${plan['fee']} fee = ${Decimal('0.10') + plan['fee']}" in text  # type: ignore[operator]
    assert f"total cost: ${plan['cost']}" in text
    assert f"budget: $20.00 left: ${Decimal('20.00') - plan['cost']}" in text  # type: ignore[operator]
    assert "ready to launch" in text
    # One page of each kind: the first HIT's, and the last one's, which holds fewer items.
    pages = sorted(preview.glob("*.html"))
    assert [p.name for p in pages] == ["hit-1.html", "hit-3.html"]
    first = pages[0].read_text()
    assert "Dog number 0." in first and "Dog number 1." in first and "Cat " in first
    assert "Dog number 4." in pages[1].read_text()
    assert 'href="static/hitforge.css"' in first and (preview / "static" / "hitforge.css").is_file()


def test_the_pages_hold_no_gold_answers_nor_system_names(tmp_path: Path) -> None:
    for name, hidden in (
        ("compare", ["model-a", "model-b", '"order"']),
        ("rank", ["model-a", "p1", '"ranks"']),
    ):
        folder = tmp_path / name
        folder.mkdir()
        path = example_files(name).write(folder)
        (folder / "media" / "beach.jpg").write_bytes(b"\xff\xd8picture")
        result = check(tmp_path, path, "--preview-dir", str(folder / "preview"))
        assert result.exit_code == 0, result.output
        page = (folder / "preview" / "hit-1.html").read_text()
        for word in hidden:
            assert word not in page, (name, word)
        if name == "compare":
            assert "A dog digs a hole in wet sand." in page and "A brown dog runs across a lawn." in page
            pictures = list((folder / "preview" / "pictures").iterdir())
            assert any(p.read_bytes() == b"\xff\xd8picture" for p in pictures)
            assert "beach.jpg" not in page  # the picture is copied under a name that says nothing


def test_without_a_preview_dir_the_pages_go_to_a_temporary_folder_printed_at_the_end(tmp_path: Path) -> None:
    result = check(tmp_path, write(tmp_path))
    assert result.exit_code == 0, result.output
    page = Path(result.output.split("HIT pages as workers will see them:")[1].split()[0])
    assert page.is_file() and page.name == "hit-1.html"


def test_over_budget_exits_non_zero_with_the_figures(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('budget: "20.00"', 'budget: "0.71"'))
    result = check(tmp_path, path)
    assert result.exit_code == 1, result.output
    text = said(result)
    assert "total cost: $0.72" in text and "budget: $0.71" in text and "over budget: $0.01" in text
    assert "the plan costs 0.72 but the budget is 0.71" in text
    assert "ready to launch" not in text


def test_a_bad_file_names_file_line_and_field(tmp_path: Path) -> None:
    result = check(tmp_path, write(tmp_path, GOOD + "lifetime: 86400\n"))
    assert result.exit_code == 2, result.output
    assert (
        "campaign.yaml, line 12, field 'lifetime': not a key of this file; did you mean lifetime_seconds?"
        in said(result)
    )
    assert not (tmp_path / "preview").exists()


def test_launch_prints_the_plan_and_where_to_watch(tmp_path, settings, live_server, requester, mturk) -> None:  # type: ignore[no-untyped-def]
    write(tmp_path, GOOD.replace("name: test-campaign", "name: planned-launch"))
    launched = launch(tmp_path, settings, live_server.url, requester)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    text = " ".join(launched.stdout.split())
    plan = expected_plan(items=4, per_hit=2, assignments=3, reward="0.10")
    assert f"HITs: {plan['hits']}" in text and f"total cost: ${plan['cost']}" in text
    assert "per HIT: 2 items + 1 gold, 3 assignments" in text
    assert text.index("total cost:") < text.index("campaign planned-launch is running")
    assert f"watch it at {live_server.url}/dashboard/campaigns/" in text
    assert "status: hitforge campaign status planned-launch" in text

    env = {"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)}
    status = CliRunner().invoke(
        main, ["campaign", "status", "planned-launch"], env=env, catch_exceptions=False
    )
    assert status.exit_code == 0, status.output
    assert "HITs: 2 (2 open)" in said(status) and "0 of 6 submitted" in said(status)
