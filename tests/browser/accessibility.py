"""axe-core in the browser tests: a page (or a HIT page in its frame) with no accessibility violation.

axe-core comes from npm (tests/browser/axe/package.json, installed by ``make test``
as the CDN libraries are) and is injected into the page under test; the pages'
own Content-Security-Policy would refuse an injected script, so the contexts that
run it bypass CSP (``axe_context``) while everything else about the page is as served.
"""

from __future__ import annotations

from typing import Any

from tests.helpers import REPO

AXE = REPO / "tests" / "browser" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
#: The checks of WCAG 2.1 A and AA, and axe's best practices.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
_RUN = """async tags => {
    const options = {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]};
    const found = await axe.run(document, options);
    return found.violations.map(v => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ") + ": " + n.failureSummary),
    }));
}"""


def violations(target: Any) -> list[dict[str, Any]]:
    """axe's violations on a Playwright page or frame (its document as it is now)."""
    if not target.evaluate("() => typeof window.axe !== 'undefined'"):
        target.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = target.evaluate(_RUN, TAGS)
    return found


def assert_accessible(target: Any, what: str) -> None:
    """Fail, saying every violation and where, unless axe finds none."""
    found = violations(target)
    assert found == [], f"{what}: axe found\n" + "\n".join(
        f"  {v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"]) for v in found
    )


def assert_accessible_copy(page: Any, what: str, url: str | None = None) -> None:
    """Run axe on ``url`` (the page's own by default) in a CSP-bypassing copy of ``page``'s context.

    For tests that click through pages as served (their CSP in force, which
    refuses axe's injected script): the copy carries the same cookies, so the
    same person sees the same page.
    """
    browser = page.context.browser
    context = browser.new_context(bypass_csp=True)
    try:
        context.add_cookies(page.context.cookies())
        copy = context.new_page()
        copy.set_default_timeout(15_000)
        copy.goto(url or page.url)
        assert_accessible(copy, what)
    finally:
        context.close()
