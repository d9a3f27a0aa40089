"""``hitforge batch check`` and ``batch publish``'s warning: the CDN URLs of a page that are not served."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from server.cdn.cdn_map import CdnMap
    from server.cdn.page import PageReport

# server.cdn is imported in the functions: it is a Flask blueprint, and ``hitforge batch --help``
# (this module joins the batch group) must not load Flask.

console = Console(stderr=True, soft_wrap=True, highlight=False)


def _cdn_map() -> CdnMap:
    from hits.settings import load_settings
    from server.cdn.cdn_map import CdnMapError, map_for

    try:
        cdn_map = map_for(load_settings())
    except CdnMapError as exc:
        console.print(f"[red]error:[/red] HITFORGE_CDN_MAP: {escape(str(exc))}")
        sys.exit(2)
    if cdn_map.missing:
        console.print(
            "[yellow]warning:[/yellow] CDN library copies not installed "
            f"({escape(', '.join(cdn_map.missing))}): run make, or scripts/cdn-libraries.sh"
        )
    return cdn_map


def check_operator_map() -> None:
    """Stop with a one-line error (exit 2) when HITFORGE_CDN_MAP names a file that cannot be used."""
    _cdn_map()


def _page_html(path: Path) -> str:
    """The HTML of a layout or page file, or of an HTMLQuestion document (as boto3 scripts keep them)."""
    from hits.market.errors import RequestError
    from hits.market.questions import parse_question

    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"{path}: cannot be read as UTF-8 text ({exc})") from None
    if "<HTMLQuestion" not in text:
        return text
    try:
        question = parse_question(text)
    except RequestError as exc:
        raise click.BadParameter(f"{path}: not a valid HTMLQuestion ({exc})") from None
    return question.html or ""


def print_unserved(label: str, report: PageReport) -> None:
    """One warning line per URL the page loads that hitforge does not serve, one note per substitution."""
    for url in report.unserved:
        console.print(
            f"[yellow]warning:[/yellow] {escape(label)}: {escape(url)} is not served by hitforge "
            "(not in its CDN map): it loads only where workers can reach it"
        )
    for resolution in report.substituted:
        console.print(
            f"[cyan]note:[/cyan] {escape(label)}: {escape(resolution.url)}: "
            + escape("; ".join(resolution.notes))
        )


def warn_unserved(layout: Path) -> None:
    """For ``batch publish``: warn about the layout's unserved URLs (publishing goes on)."""
    try:
        html = layout.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return  # the batch itself reports an unreadable layout
    from server.cdn import report_for

    print_unserved(str(layout), report_for(html, _cdn_map()))


def _hit_question(hit_id: str) -> tuple[str, str | None]:
    """HIT ``hit_id``'s question kind and HTML (None but for an HTMLQuestion), read through GetHIT."""
    from hits.market.errors import RequestError
    from hits.market.questions import parse_question
    from hits.requester.mturk import Marketplace, MarketplaceError
    from hits.settings import load_settings

    try:
        hit = Marketplace.from_settings(load_settings()).get_hit(hit_id)
    except (MarketplaceError, RuntimeError) as exc:
        console.print(f"[red]error:[/red] HIT {escape(hit_id)}: {escape(str(exc))}")
        sys.exit(2)
    try:
        question = parse_question(str(hit.get("Question") or ""))
    except RequestError:
        return "unreadable question", None
    return question.kind, question.html if question.kind == "HTMLQuestion" else None


@click.command("check")
@click.argument("page", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option(
    "--hit", "hit_id", help="Check a HIT already created (by any script): its HTMLQuestion, by GetHIT."
)
def check(page: Path | None, hit_id: str | None) -> None:
    """List the CDN scripts and stylesheets PAGE (or HIT --hit) loads and whether hitforge serves them.

    PAGE is a layout, an HTML page or an HTMLQuestion document; --hit HITID
    reads a created HIT's HTMLQuestion through the API with the
    HITFORGE_MTURK_* keys (CreateHIT's reply has no room for warnings). Exits
    with 1 when some URL is not served (the page still runs, without that
    file, where workers cannot reach the CDN).
    """
    from server.cdn import report_for

    if (page is None) == (hit_id is None):
        raise click.UsageError("give either PAGE or --hit HITID")
    if hit_id is not None:
        kind, html = _hit_question(hit_id)
        if html is None:
            click.echo(f"HIT {hit_id} has no HTMLQuestion ({kind}): no page of the requester's to check")
            return
    else:
        assert page is not None
        html = _page_html(page)
    report = report_for(html, _cdn_map())
    for resolution in report.served:
        where = f"{resolution.library} {resolution.version or ''}".rstrip()
        line = f"served      {resolution.url} -> {where} {resolution.file}"
        if resolution.substituted:
            line += f" ({'; '.join(resolution.notes)})"
        click.echo(line)
    for url in report.unserved:
        click.echo(f"not served  {url}")
    substituted = len(report.substituted)
    click.echo(f"{len(report.served)} served ({substituted} substituted), {len(report.unserved)} not served")
    if report.unserved:
        sys.exit(1)
