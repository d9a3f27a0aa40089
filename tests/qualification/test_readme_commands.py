"""Issue 15, item 10: the README's ``hitforge qualification`` examples run, as written.

The commands are read from README.md's "Qualification tests" section, so the
test breaks when the README and the CLI drift apart. ``BANK`` stands for the
default bank; the files the examples name are made in a scratch folder, where
the commands run; ``publish`` talks to a live server with a requester's keys.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from qualification.assembly import assemble
from qualification.bank import DEFAULT_BANK, load_bank
from server.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[list[str]]:
    """The ``hitforge qualification`` lines of the README's qualification section, as argv lists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Qualification tests", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", section, flags=re.DOTALL):
        for line in block.splitlines():
            if line.startswith("hitforge qualification "):
                # Comments follow the command after at least two spaces.
                command = re.split(r"\s{2,}#", line, maxsplit=1)[0]
                commands.append(shlex.split(command)[1:])
    return commands


def prepare(folder: Path) -> None:
    """The files the examples name: the bank folder, answers for seed 21, graded attempts."""
    (folder / "qualification").mkdir()
    (folder / "qualification" / "banks").symlink_to(DEFAULT_BANK.parent)
    bank = load_bank(DEFAULT_BANK)
    answers = {e.item_id: bank.items[e.item_id].answer for e in assemble(bank, 21).items}
    (folder / "answers.json").write_text(json.dumps(answers))
    rows = [{"correct": {"sp-001": True, "sp-002": i % 2 == 0, "gr-001": i % 3 == 0}} for i in range(6)]
    (folder / "attempts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_the_readme_examples_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, live_server, requester, settings
) -> None:
    commands = readme_commands()
    assert {argv[1] for argv in commands} >= {"show", "create", "grade", "publish", "items"}
    prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    env = {
        "HITFORGE_VAR_DIR": str(settings.var_dir),
        "HITFORGE_DATABASE_URL": settings.database_url,
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_PUBLIC_URL": live_server.url,
        "HITFORGE_MTURK_ENDPOINT_URL": live_server.url,
        "HITFORGE_MTURK_ACCESS_KEY_ID": requester.access_key_id,
        "HITFORGE_MTURK_SECRET_ACCESS_KEY": requester.secret_access_key,
    }
    for argv in commands:
        argv = ["qualification/banks/default.yaml" if arg == "BANK" else arg for arg in argv]
        result = CliRunner().invoke(main, argv, env=env, prog_name="hitforge")
        assert result.exit_code == 0, f"hitforge {shlex.join(argv)}\n{result.output}"
    assert (tmp_path / "out" / "test.xml").is_file() and len(
        list((tmp_path / "out" / "media").iterdir())
    ) == 8
