"""Public CDN libraries (jQuery, jQuery UI, Bootstrap, Font Awesome) served from local copies.

HIT pages written for MTurk load these from public CDNs; offline, or on a
marketplace whose workers cannot reach them, such a page would not work. The
worker site rewrites each URL the map (``cdn_map.yaml`` plus the operator's
``HITFORGE_CDN_MAP`` file) knows to this site's ``/cdn/`` route when it serves
an HTMLQuestion, and ``hitforge batch check`` / ``batch publish`` tell the
requester which URLs are not served.
"""

from __future__ import annotations

import re

from flask import Flask, current_app, url_for

from hits.settings import Settings
from server.cdn.cdn_map import CdnMap, Resolution, map_for
from server.cdn.page import PageReport, page_report, rewrite_html

EXTENSION = "hitforge.cdn"

#: The scripts HIT pages load from MTurk's and AWS's hosts that the worker site serves itself
#: (server/market/worker_site/html_question.py): a report counts them as served.
# With or without a scheme: a protocol-relative "//host/..." is as common in MTurk pages.
MTURK_SCRIPT = re.compile(
    r"(?:https?:)?//(?:s3\.amazonaws\.com/mturk-public|mturk-public\.s3\.amazonaws\.com)/externalHIT_v1\.js",
    re.IGNORECASE,
)
# AWS's crowd HTML elements (and the variant without the custom-elements polyfill,
# which current browsers do not need): served from this site, so HITs work offline.
CROWD_SCRIPT = re.compile(
    r"(?:https?:)?//assets\.crowd\.aws/crowd-html-elements(?:-without-ce-polyfill)?\.js", re.IGNORECASE
)


def init_app(app: Flask, settings: Settings) -> None:
    """Load the map (an operator file that cannot be used stops the app) and add the ``/cdn/`` route."""
    from server.cdn.routes import bp

    cdn_map = map_for(settings)
    if cdn_map.missing:
        app.logger.warning(
            "CDN libraries not installed (%s): run make, or scripts/cdn-libraries.sh; "
            "HIT pages loading them from public CDNs will not work offline",
            ", ".join(cdn_map.missing),
        )
    app.extensions[EXTENSION] = cdn_map
    app.register_blueprint(bp)


def app_cdn_map() -> CdnMap:
    """The running app's map."""
    cdn_map: CdnMap = current_app.extensions[EXTENSION]
    return cdn_map


def local_url(resolution: Resolution) -> str:
    """The absolute URL of ``resolution``'s copy on this site."""
    if resolution.prefix_index is not None:
        return url_for(
            "cdn.site_file", index=resolution.prefix_index, filename=resolution.file, _external=True
        )
    return url_for(
        "cdn.library_file",
        library=resolution.library,
        version=resolution.version,
        filename=resolution.file,
        _external=True,
    )


def rewrite_page(html: str) -> str:
    """A HIT page's HTML with the CDN URLs this site serves pointing at its copies."""
    return rewrite_html(html, app_cdn_map(), local_url)


def report_for(html: str, cdn_map: CdnMap) -> PageReport:
    """The page's report; the crowd elements and externalHIT_v1.js count as served (the worker site does)."""
    return page_report(html, cdn_map, [CROWD_SCRIPT, MTURK_SCRIPT])


def unserved_urls(html: str) -> list[str]:
    """The scripts and stylesheets ``html`` loads that the running site does not serve, in page order."""
    return report_for(html, app_cdn_map()).unserved
