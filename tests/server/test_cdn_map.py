"""The CDN rewrite map: the URL spellings MTurk pages use, versions, the operator's prefixes,
the ``/cdn/`` route and what the requester is told about URLs hitforge does not serve.

The map is read over the copies ``make`` installs (server/cdn/node_modules); a
missing install fails these tests rather than skipping them.
"""

from __future__ import annotations

import base64
import hashlib
import time
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from server import create_app
from server.cdn import CROWD_SCRIPT, MTURK_SCRIPT
from server.cdn.cdn_map import CdnMap, CdnMapError, Copy, load_cdn_map, nearest_copy
from server.cdn.page import page_report, rewrite_html
from server.cli.main import main
from tests.server.worker_helpers import HTML_NS


@pytest.fixture(scope="module")
def cdn_map() -> CdnMap:
    loaded = load_cdn_map()
    assert not loaded.missing, (
        f"CDN libraries not installed ({loaded.missing}): run make or scripts/cdn-libraries.sh"
    )
    return loaded


def served(cdn_map: CdnMap, url: str) -> tuple[str, str | None, str, bool] | None:
    found = cdn_map.resolve(url)
    return None if found is None else (found.library, found.version, found.file, found.substituted)


@pytest.mark.parametrize(
    "url",
    [
        "https://code.jquery.com/jquery-3.7.1.min.js",
        "http://code.jquery.com/jquery-3.7.1.min.js",
        "//code.jquery.com/jquery-3.7.1.min.js",
        "HTTPS://CODE.JQUERY.COM/jquery-3.7.1.min.js",
        "https://code.jquery.com/jquery-3.7.1.min.js?v=2#top",
        "  https://code.jquery.com/jquery-3.7.1.min.js ",
        "https://ajax.googleapis.com/ajax/libs/jquery/3.7.1/jquery.min.js",
        "https://cdnjs.cloudflare.com/ajax/libs/jquery/3.7.1/jquery.min.js",
        "https://cdn.jsdelivr.net/npm/jquery@3.7.1/dist/jquery.min.js",
    ],
)
def test_every_spelling_of_a_jquery_url_is_served_exactly(cdn_map: CdnMap, url: str) -> None:
    assert served(cdn_map, url) == ("jquery", "3.7.1", "dist/jquery.min.js", False)


def test_min_and_plain_variants_are_different_files(cdn_map: CdnMap) -> None:
    assert served(cdn_map, "https://code.jquery.com/jquery-3.7.1.js") == (
        "jquery",
        "3.7.1",
        "dist/jquery.js",
        False,
    )
    assert served(cdn_map, "https://code.jquery.com/jquery-3.7.1.slim.min.js")[2] == "dist/jquery.slim.min.js"  # type: ignore[index]
    css = "https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/bootstrap.css"
    assert served(cdn_map, css) == ("bootstrap", "3.4.1", "dist/css/bootstrap.css", False)
    assert served(cdn_map, css.replace(".css", ".min.css"))[2] == "dist/css/bootstrap.min.css"  # type: ignore[index]


@pytest.mark.parametrize(
    ("url", "library", "version", "file"),
    [
        # MTurk's classic project templates: its own Bootstrap 3.0.3.
        (
            "https://s3.amazonaws.com/mturk-public/bs30/css/bootstrap.min.css",
            "bootstrap",
            "3.4.1",
            "dist/css/bootstrap.min.css",
        ),
        (
            "https://maxcdn.bootstrapcdn.com/bootstrap/3.3.7/js/bootstrap.min.js",
            "bootstrap",
            "3.4.1",
            "dist/js/bootstrap.min.js",
        ),
        (
            "//netdna.bootstrapcdn.com/bootstrap/3.1.0/css/bootstrap.min.css",
            "bootstrap",
            "3.4.1",
            "dist/css/bootstrap.min.css",
        ),
        (
            "https://stackpath.bootstrapcdn.com/bootstrap/4.1.1/css/bootstrap.min.css",
            "bootstrap",
            "4.6.2",
            "dist/css/bootstrap.min.css",
        ),
        (
            "https://cdn.jsdelivr.net/npm/bootstrap@5.3.0/dist/js/bootstrap.bundle.min.js",
            "bootstrap",
            "5.3.8",
            "dist/js/bootstrap.bundle.min.js",
        ),
        (
            "https://cdnjs.cloudflare.com/ajax/libs/twitter-bootstrap/4.0.0/css/bootstrap.min.css",
            "bootstrap",
            "4.6.2",
            "dist/css/bootstrap.min.css",
        ),
        ("//code.jquery.com/jquery-1.11.1.min.js", "jquery", "1.12.4", "dist/jquery.min.js"),
        ("https://code.jquery.com/jquery-latest.min.js", "jquery", "1.12.4", "dist/jquery.min.js"),
        ("https://code.jquery.com/jquery.js", "jquery", "1.12.4", "dist/jquery.js"),
        (
            "https://ajax.googleapis.com/ajax/libs/jquery/2.1.4/jquery.min.js",
            "jquery",
            "2.2.4",
            "dist/jquery.min.js",
        ),
        ("https://code.jquery.com/ui/1.12.0/jquery-ui.min.js", "jquery-ui", "1.12.1", "jquery-ui.min.js"),
        (
            "https://ajax.googleapis.com/ajax/libs/jqueryui/1.13.2/jquery-ui.min.js",
            "jquery-ui",
            "1.13.3",
            "jquery-ui.min.js",
        ),
        ("https://use.fontawesome.com/releases/v5.8.1/css/all.css", "font-awesome", "5.15.4", "css/all.css"),
        (
            "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.4.0/css/all.min.css",
            "font-awesome",
            "6.7.2",
            "css/all.min.css",
        ),
        (
            "https://maxcdn.bootstrapcdn.com/font-awesome/4.5.0/css/font-awesome.min.css",
            "font-awesome",
            "4.7.0",
            "css/font-awesome.min.css",
        ),
    ],
)
def test_another_version_of_the_same_major_is_served_and_recorded(
    cdn_map: CdnMap, url: str, library: str, version: str, file: str
) -> None:
    found = cdn_map.resolve(url)
    assert found is not None
    assert (found.library, found.version, found.file) == (library, version, file)
    assert found.substituted
    assert f"is served as {version}" in "; ".join(found.notes)


def test_exact_and_partial_versions_are_not_substitutions(cdn_map: CdnMap) -> None:
    assert served(cdn_map, "https://maxcdn.bootstrapcdn.com/font-awesome/4.7.0/css/font-awesome.min.css") == (
        "font-awesome",
        "4.7.0",
        "css/font-awesome.min.css",
        False,
    )
    # jsDelivr's @3 means "the newest 3.x": the newest installed 3.x is that.
    assert served(cdn_map, "https://cdn.jsdelivr.net/npm/jquery@3/dist/jquery.min.js") == (
        "jquery",
        "3.7.1",
        "dist/jquery.min.js",
        False,
    )


def test_a_jquery_ui_theme_other_than_base_is_served_as_base_and_recorded(cdn_map: CdnMap) -> None:
    base = cdn_map.resolve("https://code.jquery.com/ui/1.12.1/themes/base/jquery-ui.css")
    smooth = cdn_map.resolve("https://code.jquery.com/ui/1.12.1/themes/smoothness/jquery-ui.css")
    assert base is not None and smooth is not None
    assert (base.file, base.substituted) == ("jquery-ui.css", False)
    assert smooth.file == "jquery-ui.css"
    assert smooth.notes == ("jQuery UI's smoothness theme is served as its base theme",)


@pytest.mark.parametrize(
    "url",
    [
        "https://code.jquery.com/jquery-4.0.0.min.js",  # no 4.x installed: nothing of another major
        "https://maxcdn.bootstrapcdn.com/bootstrap/2.3.2/css/bootstrap.min.css",
        "https://code.jquery.com/jquery-1.12.4.slim.min.js",  # 1.x has no slim build
        "https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/no-such-file.css",
        "https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/../../package.json",
        "https://code.jquery.com.evil.example/jquery-3.7.1.min.js",
        "https://evil.example/code.jquery.com/jquery-3.7.1.min.js",
        "https://kit.fontawesome.com/0123456789.js",
        "ftp://code.jquery.com/jquery-3.7.1.min.js",
        "code.jquery.com/jquery-3.7.1.min.js",  # relative: the page's own
        "javascript:alert(1)",
        "//[",
        "https://code.jquery.com:port/jquery-3.7.1.min.js",
        "",
    ],
)
def test_unknown_versions_files_and_hosts_are_not_served(cdn_map: CdnMap, url: str) -> None:
    assert cdn_map.resolve(url) is None


def test_nearest_version_keeps_the_major_and_prefers_the_closest_minor() -> None:
    copies = [Copy("lib", v, Path(v)) for v in ("3.1.0", "3.4.1", "4.6.2")]
    assert nearest_copy(copies, "3.3.7").version == "3.4.1"  # type: ignore[union-attr]
    assert nearest_copy(copies, "3.1.9").version == "3.1.0"  # type: ignore[union-attr]
    assert nearest_copy(copies, "3.2").version == "3.1.0"  # type: ignore[union-attr]
    assert nearest_copy(copies, "3").version == "3.4.1"  # type: ignore[union-attr]
    assert nearest_copy(copies, "4.0.0").version == "4.6.2"  # type: ignore[union-attr]
    assert nearest_copy(copies, "5.0.0") is None
    assert nearest_copy(copies, "x") is None


def _sri(data: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def test_rewrite_points_tags_and_script_strings_at_the_copies_and_drops_their_integrity(
    cdn_map: CdnMap,
) -> None:
    html = (
        '<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/3.3.7/css/bootstrap.min.css"'
        f' integrity="{_sri(b"the CDN file")}" crossorigin="anonymous">\n'
        "<script src='//code.jquery.com/jquery-3.7.1.min.js' integrity='sha256-abc'></script>\n"
        f'<script src="https://cdn.example.org/widget.js" integrity="{_sri(b"w")}"></script>\n'
        "<script>$.getScript('https://code.jquery.com/ui/1.13.3/jquery-ui.min.js');</script>\n"
        "<style>@import url(https://use.fontawesome.com/releases/v5.15.4/css/all.css);</style>\n"
        '<a href="https://code.jquery.com/">jQuery</a>'
    )
    out = rewrite_html(html, cdn_map, lambda r: f"/cdn/{r.library}/{r.version}/{r.file}")
    assert (
        '<link rel="stylesheet" href="/cdn/bootstrap/3.4.1/dist/css/bootstrap.min.css" '
        'crossorigin="anonymous">' in out
    )
    assert "<script src='/cdn/jquery/3.7.1/dist/jquery.min.js'></script>" in out
    # Not in the map: left exactly as written, its integrity too.
    assert f'<script src="https://cdn.example.org/widget.js" integrity="{_sri(b"w")}"></script>' in out
    assert "$.getScript('/cdn/jquery-ui/1.13.3/jquery-ui.min.js')" in out
    assert "@import url(/cdn/font-awesome/5.15.4/css/all.css)" in out
    assert '<a href="https://code.jquery.com/">jQuery</a>' in out


def test_report_lists_what_is_not_served_and_what_was_substituted(cdn_map: CdnMap) -> None:
    html = """<html><head>
    <script src="https://assets.crowd.aws/crowd-html-elements.js?v=2"></script>
    <script src="https://assets.crowd.aws/crowd-html-elements.js.map.js"></script>
    <script src="https://s3.amazonaws.com/mturk-public/externalHIT_v1.js"></script>
    <link rel="stylesheet" href="https://s3.amazonaws.com/mturk-public/bs30/css/bootstrap.min.css">
    <link rel="icon" href="https://example.org/favicon.ico">
    <link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">
    <script src="https://code.jquery.com/jquery-3.7.1.min.js"></script>
    <script src="https://cdn.example.org/widget.js"></script>
    <script src="https://cdn.example.org/widget.js"></script>
    <script src="${script_url}"></script>
    <script src="local.js"></script>
    <style>@import "https://cdn.example.org/theme.css";</style>
    </head><body><img src="https://example.org/cat.jpg"></body></html>"""
    report = page_report(html, cdn_map, [CROWD_SCRIPT, MTURK_SCRIPT])
    assert report.unserved == [
        "https://assets.crowd.aws/crowd-html-elements.js.map.js",
        "https://fonts.googleapis.com/css?family=Roboto",
        "https://cdn.example.org/widget.js",
        "https://cdn.example.org/theme.css",
    ]
    assert [r.url for r in report.served] == [
        "https://s3.amazonaws.com/mturk-public/bs30/css/bootstrap.min.css",
        "https://code.jquery.com/jquery-3.7.1.min.js",
    ]
    assert [r.notes for r in report.substituted] == [("bootstrap 3.0.3 is served as 3.4.1",)]


# -- the operator's own prefixes (HITFORGE_CDN_MAP) --------------------------------------------


@pytest.fixture
def operator_map(tmp_path: Path) -> Path:
    widgets = tmp_path / "widgets-2.1"
    (widgets / "css").mkdir(parents=True)
    (widgets / "widget.js").write_text("window.widgetLoaded = true;\n")
    (widgets / "css" / "widget.css").write_text(".widget { color: rgb(1, 2, 3); }\n")
    (widgets / "notes.txt").write_text("not an asset")
    (tmp_path / "jquery-1.11.1.min.js").write_text("/* the operator's exact copy */\n")
    mapping = tmp_path / "cdn-map.yaml"
    mapping.write_text(
        "prefixes:\n"
        "  https://cdn.example.org/widgets/2.1/: widgets-2.1\n"
        "  code.jquery.com/jquery-1.11.1.min.js: jquery-1.11.1.min.js\n"
    )
    return mapping


def test_operator_prefixes_map_directories_and_single_files(operator_map: Path) -> None:
    cdn_map = load_cdn_map(operator_map)
    widget = cdn_map.resolve("//cdn.example.org/widgets/2.1/css/widget.css?x=1")
    assert widget is not None and (widget.library, widget.file, widget.substituted) == (
        "site",
        "css/widget.css",
        False,
    )
    assert widget.path == operator_map.parent / "widgets-2.1" / "css" / "widget.css"
    # A specific file overrides the built-in rule that would have substituted 1.12.4.
    exact = cdn_map.resolve("https://code.jquery.com/jquery-1.11.1.min.js")
    assert exact is not None and exact.path == operator_map.parent / "jquery-1.11.1.min.js"
    assert cdn_map.resolve("https://code.jquery.com/jquery-1.11.1.min.js/more") is None
    assert cdn_map.resolve("https://cdn.example.org/widgets/2.1/missing.js") is None
    assert cdn_map.resolve("https://cdn.example.org/widgets/2.1/../../cdn-map.yaml") is None
    assert cdn_map.resolve("https://cdn.example.org/widgets/2.10/widget.js") is None
    # The built-in rules still apply.
    assert cdn_map.resolve("https://code.jquery.com/jquery-3.7.1.min.js") is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "must be a mapping"),
        ("prefixes: [a, b]\n", "'prefixes' must map URL prefixes"),
        ("prefixes:\n  cdn.example.org/x/: no-such-dir\n", "does not exist"),
        ("prefixes:\n  'mailto:x': .\n", "is not a URL"),
        ("rules: []\n", "unknown keys rules"),
        ("prefixes: {a: [\n", "not a YAML file"),
    ],
)
def test_an_unusable_operator_file_is_a_clear_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "map.yaml"
    path.write_text(text)
    with pytest.raises(CdnMapError, match=message) as caught:
        load_cdn_map(path)
    assert str(path) in str(caught.value)


def test_a_missing_operator_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CdnMapError, match="cannot be read"):
        load_cdn_map(tmp_path / "nope.yaml")


def test_operator_files_are_served_under_cdn_site(settings, operator_map: Path) -> None:  # type: ignore[no-untyped-def]
    app = create_app(settings=settings.with_overrides(cdn_map_file=str(operator_map)))
    client = app.test_client()
    index = next(p.index for p in app.extensions["hitforge.cdn"].prefixes if p.target.is_dir())
    css = client.get(f"/cdn/site/{index}/css/widget.css")
    assert css.status_code == 200 and css.mimetype == "text/css"
    assert css.headers["Cache-Control"] == "public, max-age=3600"
    assert css.headers["Access-Control-Allow-Origin"] == "*"
    assert client.get(f"/cdn/site/{index}/notes.txt").status_code == 404  # not an asset type
    assert client.get(f"/cdn/site/{index}/../cdn-map.yaml").status_code == 404
    assert client.get(f"/cdn/site/{index}/%2e%2e/jquery-1.11.1.min.js").status_code == 404
    assert client.get("/cdn/site/99/widget.js").status_code == 404


# -- the /cdn/ route of the running server ------------------------------------------------------


def test_library_files_have_their_types_long_caching_and_cors(live_server) -> None:  # type: ignore[no-untyped-def]
    base = live_server.url + "/cdn/bootstrap/3.4.1/dist/"
    css = requests.get(base + "css/bootstrap.min.css", timeout=10)
    assert css.status_code == 200
    assert css.headers["Content-Type"].startswith("text/css")
    assert css.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert css.headers["Access-Control-Allow-Origin"] == "*"
    assert css.headers["X-Content-Type-Options"] == "nosniff"
    # The stylesheet's relative font URLs resolve under the same route.
    assert "../fonts/glyphicons-halflings-regular.woff2" in css.text
    font = requests.get(base + "fonts/glyphicons-halflings-regular.woff2", timeout=10)
    assert font.status_code == 200 and font.headers["Content-Type"] == "font/woff2"
    assert font.headers["Access-Control-Allow-Origin"] == "*"
    js = requests.get(live_server.url + "/cdn/jquery/3.7.1/dist/jquery.min.js", timeout=10)
    assert js.headers["Content-Type"].startswith("text/javascript")
    revalidated = requests.get(
        base + "css/bootstrap.min.css", headers={"If-None-Match": css.headers["ETag"]}, timeout=10
    )
    assert revalidated.status_code == 304
    fa = requests.get(live_server.url + "/cdn/font-awesome/6.7.2/webfonts/fa-solid-900.woff2", timeout=10)
    assert fa.status_code == 200 and fa.headers["Content-Type"] == "font/woff2"


@pytest.mark.parametrize(
    "path",
    [
        "/cdn/bootstrap/3.3.7/dist/css/bootstrap.min.css",  # not installed: only its URL is rewritten
        "/cdn/bootstrap/3.4.1/package.json",
        "/cdn/bootstrap/3.4.1/dist/css/nope.css",
        "/cdn/bootstrap/3.4.1/../../cdn_map.yaml",
        "/cdn/bootstrap/3.4.1/%2e%2e/%2e%2e/cdn_map.yaml",
        "/cdn/nolib/1.0.0/a.js",
        "/cdn/jquery/3.7.1/dist/jquery.min.js%00.css",
        "/cdn/jquery/3.7.1/dist/" + "a" * 300 + ".js",
        "/cdn/jquery/3.7.1/" + "a/" * 1500 + "x.js",
    ],
)
def test_anything_else_under_cdn_is_not_found(live_server, path: str) -> None:  # type: ignore[no-untyped-def]
    response = requests.get(live_server.url + path, timeout=10)
    assert response.status_code in (400, 404), (path, response.status_code)
    assert "Traceback" not in response.text


# -- what the requester is told -----------------------------------------------------------------

PAGE = """<!DOCTYPE html><html><head>
<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/3.3.7/css/bootstrap.min.css">
<script src="https://code.jquery.com/jquery-3.7.1.min.js"></script>
<script src="https://cdn.example.org/widget.js"></script>
</head><body><p>${word}</p></body></html>"""


def test_batch_check_lists_served_substituted_and_unserved_urls(tmp_path: Path) -> None:
    layout = tmp_path / "layout.html"
    layout.write_text(PAGE)
    result = CliRunner().invoke(
        main, ["batch", "check", str(layout)], env={"HITFORGE_VAR_DIR": str(tmp_path)}
    )
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines == [
        "served      https://maxcdn.bootstrapcdn.com/bootstrap/3.3.7/css/bootstrap.min.css -> "
        "bootstrap 3.4.1 dist/css/bootstrap.min.css (bootstrap 3.3.7 is served as 3.4.1)",
        "served      https://code.jquery.com/jquery-3.7.1.min.js -> jquery 3.7.1 dist/jquery.min.js",
        "not served  https://cdn.example.org/widget.js",
        "2 served (1 substituted), 1 not served",
    ]


def test_batch_check_reads_an_htmlquestion_document_and_passes_a_page_it_serves_whole(tmp_path: Path) -> None:
    question = tmp_path / "question.xml"
    body = '<html><head><script src="//code.jquery.com/jquery-2.2.4.js"></script></head><body></body></html>'
    question.write_text(
        f'<HTMLQuestion xmlns="{HTML_NS}"><HTMLContent><![CDATA[{body}]]></HTMLContent>'
        "<FrameHeight>400</FrameHeight></HTMLQuestion>"
    )
    result = CliRunner().invoke(
        main, ["batch", "check", str(question)], env={"HITFORGE_VAR_DIR": str(tmp_path)}
    )
    assert result.exit_code == 0, result.output
    assert "1 served (0 substituted), 0 not served" in result.stdout
    broken = tmp_path / "broken.xml"
    broken.write_text(f'<HTMLQuestion xmlns="{HTML_NS}"><HTMLContent>')
    refused = CliRunner().invoke(
        main, ["batch", "check", str(broken)], env={"HITFORGE_VAR_DIR": str(tmp_path)}
    )
    assert refused.exit_code == 2 and "not a valid HTMLQuestion" in refused.output
    assert "Traceback" not in refused.output


def test_batch_check_names_an_unusable_operator_map(tmp_path: Path) -> None:
    layout = tmp_path / "layout.html"
    layout.write_text(PAGE)
    env = {"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_CDN_MAP": str(tmp_path / "missing.yaml")}
    result = CliRunner().invoke(main, ["batch", "check", str(layout)], env=env)
    assert result.exit_code == 2
    assert "HITFORGE_CDN_MAP" in result.output and "missing.yaml" in result.output


def test_batch_publish_warns_about_unserved_urls_and_still_publishes(
    tmp_path: Path,
    settings,  # type: ignore[no-untyped-def]
    requester,
    live_server,
) -> None:
    from tests.batches.test_batch_cli import cli_env, files, publish

    layout, csv = files(tmp_path, b"word\ncat\ndog\n", PAGE)
    result = publish(cli_env(settings, requester), layout, csv, f"cdn-{tmp_path.name}")
    assert result.exit_code == 0, result.output
    assert "batch cdn-" in result.stdout and "2 HITs published" in result.stdout
    warnings = result.stderr.splitlines()
    assert (
        f"warning: {layout}: https://cdn.example.org/widget.js is not served by hitforge "
        "(not in its CDN map): it loads only where workers can reach it"
    ) in warnings
    assert (
        f"note: {layout}: https://maxcdn.bootstrapcdn.com/bootstrap/3.3.7/css/bootstrap.min.css: "
        "bootstrap 3.3.7 is served as 3.4.1"
    ) in warnings
    assert not any("jquery-3.7.1" in line for line in warnings)


def test_a_page_using_an_operator_prefix_is_rewritten_to_the_served_file(
    settings, operator_map: Path
) -> None:  # type: ignore[no-untyped-def]
    from server.cdn import rewrite_page

    app = create_app(settings=settings.with_overrides(cdn_map_file=str(operator_map)))
    html = '<script src="https://cdn.example.org/widgets/2.1/widget.js"></script>'
    with app.test_request_context("/", base_url="http://127.0.0.1:5000"):
        rewritten = rewrite_page(html)
    url = rewritten.split('"')[1]
    assert url.startswith("http://127.0.0.1:5000/cdn/site/") and url.endswith("/widget.js")
    served_file = app.test_client().get(url.removeprefix("http://127.0.0.1:5000"))
    assert served_file.status_code == 200 and served_file.data == b"window.widgetLoaded = true;\n"


def test_storing_a_layout_warns_about_unserved_urls(settings, requester, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    layout = tmp_path / "layout.html"
    layout.write_text(PAGE)
    env = {
        "HITFORGE_MARKET_DATABASE_URL": settings.market_database_url,
        "HITFORGE_VAR_DIR": str(settings.var_dir),
    }
    result = CliRunner().invoke(
        main, ["batch", "layout", str(layout), "--requester", requester.requester_id], env=env
    )
    assert result.exit_code == 0, result.output
    assert "HITLayoutId: " in result.stdout
    assert f"warning: {layout}: https://cdn.example.org/widget.js is not served by hitforge" in result.stderr


@pytest.mark.parametrize("production", [[], ["--production"]])
def test_serve_refuses_an_unusable_operator_map_with_one_line(tmp_path: Path, production: list[str]) -> None:
    bad = tmp_path / "map.yaml"
    bad.write_text("prefixes:\n  cdn.example.org/x/: no-such-dir\n")
    env = {"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_CDN_MAP": str(bad)}
    result = CliRunner().invoke(main, ["serve", "--port", "1", *production], env=env)
    assert result.exit_code == 2, result.output
    assert (
        result.output.startswith("error: HITFORGE_CDN_MAP: ")
        and "no-such-dir does not exist" in result.output
    )
    assert "Traceback" not in result.output


def test_batch_check_says_when_the_copies_are_not_installed(tmp_path: Path) -> None:
    # As on a checkout where make never ran: the directory of copies is empty.
    layout = tmp_path / "layout.html"
    layout.write_text(PAGE)
    env = {"HITFORGE_VAR_DIR": str(tmp_path), "HITFORGE_CDN_LIBRARIES": str(tmp_path / "node_modules")}
    result = CliRunner().invoke(main, ["batch", "check", str(layout)], env=env)
    assert result.exit_code == 1
    assert "warning: CDN library copies not installed (jquery-1, " in result.stderr
    assert "0 served (0 substituted), 3 not served" in result.stdout


def test_copies_installed_elsewhere_are_served_from_there(settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from server.cdn.cdn_map import INSTALLED_DIR

    elsewhere = tmp_path / "libs"
    (elsewhere / "jquery-3" / "dist").mkdir(parents=True)
    (elsewhere / "jquery-3" / "package.json").write_text('{"name": "jquery", "version": "3.6.0"}')
    (elsewhere / "jquery-3" / "dist" / "jquery.min.js").write_bytes(
        (INSTALLED_DIR / "jquery-3" / "dist" / "jquery.min.js").read_bytes()
    )
    app = create_app(settings=settings.with_overrides(cdn_libraries_dir=str(elsewhere)))
    cdn_map = app.extensions["hitforge.cdn"]
    assert "bootstrap-3" in cdn_map.missing and "jquery-3" not in cdn_map.missing
    found = cdn_map.resolve("https://code.jquery.com/jquery-3.6.0.min.js")
    assert found is not None and (found.version, found.substituted) == ("3.6.0", False)
    assert app.test_client().get("/cdn/jquery/3.6.0/dist/jquery.min.js").status_code == 200
    assert cdn_map.resolve("https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/bootstrap.min.css") is None


@pytest.mark.parametrize(
    "unclosed", ["<script ", "<link ", "<script src=//code.jquery.com/jquery-3.7.1.min.js "]
)
def test_a_hostile_page_of_unclosed_tags_is_rewritten_in_linear_time(cdn_map: CdnMap, unclosed: str) -> None:
    # The largest HTMLQuestion MTurk takes, all unclosed tags: a scan from each "<" to the next ">"
    # was quadratic (over a second a frame load, the server's thread held all along).
    tail = '<script src="https://code.jquery.com/jquery-3.7.1.min.js" integrity="sha256-x"></script>'
    html = tail + unclosed * ((65_535 - len(tail)) // len(unclosed))
    # This thread's CPU time, not the wall clock: on a loaded machine the thread waits for a core too.
    started = time.thread_time()
    out = rewrite_html(html, cdn_map, lambda r: f"/cdn/{r.library}/{r.version}/{r.file}")
    assert time.thread_time() - started < 0.3
    assert out.startswith('<script src="/cdn/jquery/3.7.1/dist/jquery.min.js"></script><')
    assert out.count("/cdn/jquery/3.7.1/") == html.count("code.jquery.com")


def test_tags_sharing_a_closing_bracket_are_rewritten_without_losing_text(cdn_map: CdnMap) -> None:
    html = (
        'a<script src="https://code.jquery.com/jquery-3.7.1.min.js" integrity="one" '
        '<link rel="stylesheet" href="https://maxcdn.bootstrapcdn.com/bootstrap/3.4.1/css/bootstrap.min.css"'
        ' integrity="two">b'
    )
    out = rewrite_html(html, cdn_map, lambda r: f"/cdn/{r.library}/{r.version}/{r.file}")
    assert out == (
        'a<script src="/cdn/jquery/3.7.1/dist/jquery.min.js" integrity="one" '
        '<link rel="stylesheet" href="/cdn/bootstrap/3.4.1/dist/css/bootstrap.min.css">b'
    )


def test_batch_check_refuses_a_missing_or_non_utf8_file_in_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "page.html"
    binary.write_bytes(b'\xff\xfe<script src="https://code.jquery.com/jquery-3.7.1.min.js">')
    for path in (binary, tmp_path / "missing.html"):
        result = CliRunner().invoke(
            main, ["batch", "check", str(path)], env={"HITFORGE_VAR_DIR": str(tmp_path)}
        )
        assert result.exit_code == 2
        assert f"{path}: cannot be read as UTF-8 text" in result.output
        assert "Traceback" not in result.output


LONG_AND_NUL = [
    "https://code.jquery.com/jquery-3.7.1" + "a" * 300 + ".js",  # a file name longer than the OS takes
    "https://cdn.jsdelivr.net/npm/jquery@3.7.1/" + "a/" * 3000 + "x.js",  # a path longer than the OS takes
    "https://code.jquery.com/jquery-3.7.1.min\x00.js",
]


@pytest.mark.parametrize("url", LONG_AND_NUL)
def test_urls_no_file_system_can_hold_are_not_served(cdn_map: CdnMap, url: str) -> None:
    assert cdn_map.resolve(url) is None


def test_a_page_with_such_urls_is_still_served_to_the_worker(live_server, mturk) -> None:  # type: ignore[no-untyped-def]
    from tests.server.worker_helpers import accept_framed, create_hit, html_question

    body = "".join(f'<script src="{url}"></script>' for url in LONG_AND_NUL[:2])
    hit_id = create_hit(mturk, html_question(f"<html><body>{body}<p>ok</p></body></html>"))
    worker, params = accept_framed(live_server.url, hit_id)
    page = worker.get(f"/hits/{hit_id}/html", params=params)
    assert page.status_code == 200, page.text[:300]
    assert LONG_AND_NUL[0] in page.text and "<p>ok</p>" in page.text


PAGE_PIECES = st.sampled_from(
    ["https:", "//", "code.jquery.com", "cdn.jsdelivr.net/npm/bootstrap@", "evil.example", "/", "jquery-"]
    + ["3.7.1", "5", ".min", ".js", ".css", "[", "]", ":", "\x00", "..", "?", "#", "<script src=", ">", "'"]
    + ['"', " integrity=x", "<link rel=stylesheet href=", "a" * 300, "ui/", "themes/", "<style>@import "]
    + ["url(", ")", "</style>", "\\", " ", "<"]
)


@hypothesis_settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(html=st.lists(PAGE_PIECES, max_size=30).map("".join))
def test_any_page_text_is_rewritten_and_reported_without_an_error(cdn_map: CdnMap, html: str) -> None:
    cdn_map.resolve(html)
    out = rewrite_html(html, cdn_map, lambda r: "/cdn/x")
    report = page_report(html, cdn_map)
    if "/cdn/x" not in out:
        assert out == html  # nothing the map serves: the page is left exactly as written
    assert all(r.path.is_file() for r in report.served)
