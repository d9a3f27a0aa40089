"""Per-system files of the target template: CSV import errors, and the CSV + HTML export round trip."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from click.testing import CliRunner
from PIL import Image
from sqlalchemy import select

from hits.db import session_scope
from hits.requester.campaigns.service import create_campaign
from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.files.campaign import load_campaign_file
from hits.requester.tables.campaigns import PublishedHIT, Submission
from hits.requester.templates.target.files import COLUMNS, import_system_csvs, read_system_csv
from server.cli.main import main

HEADER = ",".join(COLUMNS)


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def located(exc: InputFileErrors) -> set[tuple[str, int | None, str | None]]:
    return {(Path(e.path).name, e.line, e.field) for e in exc.errors}


def test_import_errors_name_file_line_and_column(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "sysA.csv",
        HEADER + ",category",
        "1,p.png,dog,0,0,10,10,64,48,",
        '2,p.png,"a dog\nover two lines",0,0,0,10,64,48,',  # a zero-width box, reported on line 3
        "3,p.png,cat,abc,0,10,10,64,48,",
        "1,p.png,again,0,0,10,10,64,48,",
        "5,p.png,bird,60,0,10,10,64,48,",
        "6,p.png,   ,0,0,10,10,64,48,",
        "7,p.png,cow,0,0,10,10,64,48,Q",
        "8,missing.png,cow,0,0,10,10,64,48,",
        "9,p.png,cow,0,0,10,10,64,48,,extra",
    )
    media = tmp_path / "media"
    media.mkdir()
    Image.new("RGB", (64, 48)).save(media / "p.png")
    with pytest.raises(InputFileErrors) as caught:
        read_system_csv(bad, media_dir=media)
    assert located(caught.value) == {
        ("sysA.csv", 3, "box_w"),
        ("sysA.csv", 5, "box_x"),
        ("sysA.csv", 6, "id"),
        ("sysA.csv", 7, "box"),
        ("sysA.csv", 8, "expression"),
        ("sysA.csv", 9, "category"),
        ("sysA.csv", 10, "image"),
        ("sysA.csv", 11, None),
    }
    messages = "\n".join(str(e) for e in caught.value.errors)
    assert "sysA.csv, line 6, field 'id': id '1' is already on line 2" in messages
    assert "reaches outside the 64 x 48 image" in messages

    header = write(
        tmp_path / "sysB.csv", "id,image,expression,box_x,box_y,box_w,height", "1,p.png,dog,0,0,1,1"
    )
    with pytest.raises(InputFileErrors) as caught:
        read_system_csv(header)
    assert located(caught.value) == {
        ("sysB.csv", 1, "box_h"),
        ("sysB.csv", 1, "image_width"),
        ("sysB.csv", 1, "image_height"),
        ("sysB.csv", 1, "height"),
    }
    empty = write(tmp_path / "sysC.csv", HEADER)
    with pytest.raises(InputFileError, match="sysC.csv: the file holds no rows"):
        read_system_csv(empty)

    # The CLI reports every file's problems at once and writes nothing.
    out = tmp_path / "items.jsonl"
    result = CliRunner().invoke(main, ["target", "import", str(bad), str(header), "--out", str(out)])
    assert result.exit_code == 1
    assert (
        "sysA.csv, line 3, field 'box_w'" in result.output
        and "sysB.csv, line 1, field 'box_h'" in result.output
    )
    assert not out.exists()


def _system_files(folder: Path) -> list[Path]:
    """Two systems describing the same three targets; one expression tries to inject markup."""
    media = folder / "media"
    media.mkdir()
    for n, colour in enumerate(["red", "green", "blue"]):
        Image.new("RGB", (64, 48), colour).save(media / f"p{n}.png")
    boxes = ["4,6,20,30", "0,0,64,48", "10.5,2,12.25,8"]
    a = write(
        folder / "sysA.csv",
        HEADER,
        *(
            f"{n},p{n}.png,{expr},{boxes[n]},64,48"
            for n, expr in enumerate(["red cup", "bottom left", "a dog"])
        ),
    )
    b = write(
        folder / "sysB.csv",
        HEADER + ",category",
        f"0,p0.png,\"<script>alert('x')</script> & cup\",{boxes[0]},64,48,",
        f"1,p1.png,the table,{boxes[1]},64,48,",
        f"2,p2.png,zebra,{boxes[2]},64,48,",
        f"g1,p2.png,a giraffe,{boxes[2]},64,48,F",
    )
    return [a, b]


def _store_answers(sessions, campaign_id: int, truth: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Three workers answer every HIT: two give the truth, one always says O."""
    with session_scope(sessions) as session:
        hits = session.scalars(select(PublishedHIT).where(PublishedHIT.campaign_id == campaign_id)).all()
        for hit in hits:
            for w, worker in enumerate(["WTGOOD1", "WTGOOD2", "WTLAZY"]):
                answers = [
                    "O" if worker == "WTLAZY" else truth.get((slot.item or slot.gold_item).external_id, "F")  # type: ignore[union-attr]
                    for slot in hit.slots
                ]
                session.add(
                    Submission(
                        assignment_id=f"TGA{campaign_id}H{hit.id}W{w}",
                        published_hit_id=hit.id,
                        worker_id=worker,
                        answers={"answers": answers},
                    )
                )


def test_export_round_trip(tmp_path, settings, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    paths = _system_files(tmp_path)
    report = import_system_csvs(paths, tmp_path / "items.jsonl", gold_out=tmp_path / "gold.jsonl")
    assert (report.items, report.gold, report.systems) == (6, 1, ["sysA", "sysB"])
    lines = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert [line["id"] for line in lines] == ["sysA/0", "sysA/1", "sysA/2", "sysB/0", "sysB/1", "sysB/2"]
    assert lines[5]["item"]["box"] == {"x": 10.5, "y": 2.0, "width": 12.25, "height": 8.0}
    gold = json.loads((tmp_path / "gold.jsonl").read_text())
    assert gold["id"] == "sysB/g1" and gold["answer"] == {"category": "F"}

    spec = {
        "name": "target-export",
        "template": "target",
        "title": "Name the framed object",
        "description": "Say whether each description names the framed object.",
        "reward": "0.05",
        "budget": "20.00",
        "assignments_per_hit": 3,
        "items_per_hit": 2,
        "gold_per_hit": 1,
        "items": "items.jsonl",
        "gold": "gold.jsonl",
        # The import gives one gold item for three HITs: it recurs, which this export test accepts.
        "allow_gold_reuse": True,
        "media_dir": "media",
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with session_scope(requester_sessions) as session:
        campaign_id = create_campaign(session, load_campaign_file(tmp_path / "campaign.yaml")).id
    truth = {"sysA/0": "A", "sysA/1": "O", "sysA/2": "A", "sysB/0": "A", "sysB/1": "M", "sysB/2": "F"}
    _store_answers(requester_sessions, campaign_id, truth)

    out = tmp_path / "export"
    result = CliRunner().invoke(
        main,
        ["target", "export", "target-export", "--out-dir", str(out)],
        env={"HITFORGE_DATABASE_URL": settings.database_url, "HITFORGE_VAR_DIR": str(settings.var_dir)},
    )
    assert result.exit_code == 0, result.output
    assert "sysB: 3 of 3 items labelled" in result.output
    for system, path in zip(["sysA", "sysB"], paths, strict=True):
        with (out / f"{system}.csv").open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        assert rows[0] == [*COLUMNS, "category"]
        original = [r[: len(COLUMNS)] for r in csv.reader(path.open(newline=""))][1:4]
        assert [r[: len(COLUMNS)] for r in rows[1:]] == original
        assert [r[-1] for r in rows[1:]] == [truth[f"{system}/{n}"] for n in range(3)]

    html = (out / "sysB.html").read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; cup" in html
    soup = BeautifulSoup(html, "html.parser")
    entries = soup.select("section.entry")
    assert [e.h2.get_text() for e in entries] == ["ID 0", "ID 1", "ID 2"]  # type: ignore[union-attr]
    boxes = [e.select_one("rect.box") for e in entries]
    assert [(b["x"], b["y"], b["width"], b["height"]) for b in boxes] == [  # type: ignore[index]
        ("4.0", "6.0", "20.0", "30.0"),
        ("0.0", "0.0", "64.0", "48.0"),
        ("10.5", "2.0", "12.25", "8.0"),
    ]
    assert all(str(e.img["src"]).startswith("data:image/png;base64,") for e in entries)  # type: ignore[index]
    assert "Label: M (Misaligned)" in entries[1].get_text(" ", strip=True)
    assert "giraffe" not in html  # gold items belong to no system's file


def test_export_refuses_other_templates_and_links_images(tmp_path, requester_sessions) -> None:  # type: ignore[no-untyped-def]
    from hits.requester.quality.aggregation import aggregate_campaign
    from hits.requester.templates.target.files import export_system_files

    paths = _system_files(tmp_path)
    import_system_csvs(paths[:1], tmp_path / "items.jsonl")
    spec = {
        "name": "target-export-links",
        "template": "target",
        "title": "T",
        "description": "D",
        "reward": "0.05",
        "budget": "5.00",
        "assignments_per_hit": 1,
        "items_per_hit": 3,
        "gold_per_hit": 0,
        "items": "items.jsonl",
        "media_dir": "media",
    }
    (tmp_path / "campaign.yaml").write_text(yaml.safe_dump(spec))
    with session_scope(requester_sessions) as session:
        campaign_id = create_campaign(session, load_campaign_file(tmp_path / "campaign.yaml")).id
        written = export_system_files(
            session,
            campaign_id,
            tmp_path / "out",
            aggregate_campaign(session, campaign_id),
            embed_images=False,
        )
        with pytest.raises(ValueError, match="does not exist"):
            export_system_files(session, 10**9, tmp_path / "out", [])
    assert [(w.system, w.rows, w.labelled) for w in written] == [("sysA", 3, 0)]
    rows = list(csv.reader((tmp_path / "out" / "sysA.csv").open(newline="")))
    assert [r[-1] for r in rows[1:]] == ["", "", ""]
    soup = BeautifulSoup((tmp_path / "out" / "sysA.html").read_text(), "html.parser")
    assert [img["src"] for img in soup.select("img")] == [
        "../media/p0.png",
        "../media/p1.png",
        "../media/p2.png",
    ]
    assert "No label yet" in soup.get_text()
