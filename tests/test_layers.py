"""The house's floor plan, enforced: which part of the code may import which.

Every module of the product (and the demo) is parsed; every import it makes,
at the top or inside a function, is an edge. The rules (``docs/architecture.md``
says why):

* the **core** (``hits.db``, ``hits.money``, ... and the wire layer ``hits.wire``)
  imports neither half, the web, the workers nor the demo;
* the **marketplace** (``hits.market``) never imports the requester side;
* the **requester side** (``hits.requester``, ``qualification``, ``workers``)
  never imports the marketplace's code: it reaches the marketplace through
  boto3 (``hits.requester.mturk``), as any client does;
* one **web half** never imports the other (``server.market``,
  ``server.requester``); what they lend each other is ``server.capabilities``;
  the marketplace's web half never imports the requester side, and the
  requester's web half reads the marketplace's tables only in the places
  named in ``REQUESTER_READS_MARKET``;
* the shared web layer (``server``'s own modules, ``server.cdn``) imports neither
  web half, but for the app factory that assembles them;
* inside the requester side, a package imports only packages of its own
  level or below (``REQUESTER_LEVELS``): no two packages import each other;
* nothing but the demo imports the **demo**.

Tests, benchmarks and migrations are outside the rules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.helpers import REPO

PACKAGES = ("hits", "server", "qualification", "workers", "demo")

#: The requester side's packages from the bottom up; a package may import its own level and below.
REQUESTER_LEVELS: tuple[tuple[str, ...], ...] = (
    ("tables", "fileerrors", "mturk", "recruit", "text_metrics"),
    ("answers", "pages", "heatmaps", "seeders"),
    ("templates",),
    ("files",),
    ("quality",),
    ("batches",),
    ("campaigns",),
    ("workflows",),
)

#: The two places where the requester's web pages read marketplace tables on purpose
#: (docs/architecture.md): a HIT page checks the HIT it is shown for and who created it,
#: and the dashboard lists the API HITs whose pages load scripts the site does not serve.
REQUESTER_READS_MARKET = {
    "server.requester.hit_pages.access": {"hits.market.models"},
    "server.requester.dashboard.unserved": {
        "hits.market.models",
        "hits.market.errors",
        "hits.market.questions",
    },
}

#: The app factory: the one shared module that assembles both web halves.
APP_FACTORY = "server"


def modules() -> dict[str, Path]:
    """Every module of the product and the demo, by dotted name (packages by their own name)."""
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if "migrations" in path.parts or "node_modules" in path.parts:
                continue
            parts = path.relative_to(REPO).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` refers to: itself, or the module a ``from m import x`` name lives in."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(known: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports, anywhere in its body (late imports count)."""
    known = known if known is not None else modules()
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{alias.name}" for alias in node.names]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved is not None and resolved != name:
                    out.add(resolved)
        graph[name] = out
    return graph


def _under(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _zone(module: str) -> str:
    """Which part of the house ``module`` belongs to."""
    if _under(module, "demo"):
        return "demo"
    if _under(module, "hits.market"):
        return "market"
    if _under(module, "hits.requester", "qualification", "workers"):
        return "requester"
    if _under(module, "hits"):
        return "core"
    if _under(module, "server.market"):
        return "market web"
    if _under(module, "server.requester"):
        return "requester web"
    if _under(module, "server.cli"):
        return "cli"
    return "shared web"


def _requester_level(module: str) -> int | None:
    if not module.startswith("hits.requester."):
        return None
    package = module.split(".")[2]
    for level, names in enumerate(REQUESTER_LEVELS):
        if package in names:
            return level
    raise AssertionError(f"{module}: hits.requester.{package} is in no level of REQUESTER_LEVELS")


#: (zone of the importer, zones it must not import).
FORBIDDEN = {
    "core": {"market", "requester", "market web", "requester web", "shared web", "cli", "demo"},
    "market": {"requester", "market web", "requester web", "shared web", "cli", "demo"},
    "requester": {"market", "market web", "requester web", "shared web", "cli", "demo"},
    "market web": {"requester", "requester web", "cli", "demo"},
    "requester web": {"market web", "cli", "demo"},
    "shared web": {"cli", "demo"},
    "cli": {"demo"},
    "demo": set(),
}


def violations(graph: dict[str, set[str]]) -> list[str]:
    """Each import that breaks a rule, said as a sentence."""
    found = []
    for importer, imported in sorted(graph.items()):
        zone = _zone(importer)
        for target in sorted(imported):
            target_zone = _zone(target)
            if target_zone in FORBIDDEN[zone]:
                found.append(f"{importer} ({zone}) imports {target} ({target_zone})")
            elif zone == "requester web" and target_zone == "market":
                allowed = REQUESTER_READS_MARKET.get(importer, set())
                if target not in allowed:
                    found.append(
                        f"{importer} (requester web) imports {target}: the requester's pages read the "
                        "marketplace only in REQUESTER_READS_MARKET"
                    )
            elif zone == "shared web" and importer != APP_FACTORY and target_zone.endswith(" web"):
                if target_zone != "shared web":
                    found.append(f"{importer} (shared web) imports {target} ({target_zone})")
            else:
                low, high = _requester_level(target), _requester_level(importer)
                if low is not None and high is not None and low > high:
                    found.append(
                        f"{importer} imports {target}: {target.split('.')[2]} is above "
                        f"{importer.split('.')[2]} in REQUESTER_LEVELS"
                    )
    return found


def test_every_import_keeps_to_the_floor_plan() -> None:
    found = violations(import_graph())
    assert found == [], "imports against the layers (docs/architecture.md):\n  " + "\n  ".join(found)


def test_every_requester_package_has_a_level() -> None:
    packages = {name.split(".")[2] for name in modules() if name.startswith("hits.requester.")}
    levelled = {name for level in REQUESTER_LEVELS for name in level}
    assert packages == levelled


#: The imports the house issue found (in today's names): putting any one back must fail the test.
BROKEN_IMPORTS = [
    # marketplace -> requester side
    ("hits.market.layouts", "hits.requester.batches.plan"),
    # requester side -> marketplace internals
    ("hits.requester.quality.pipeline", "hits.market.questions"),
    ("hits.requester.batches.results", "hits.market.questions"),
    ("hits.requester.quality.outbox", "hits.market.validation"),
    ("hits.requester.heatmaps.remote", "hits.market.hit_ops"),
    ("hits.requester.seeders", "hits.market.events"),
    ("qualification.mturk", "hits.market.qualification_ops"),
    ("workers.tasks", "hits.market.decisions"),
    # one web half -> the other
    ("server.requester.hit_pages.access", "server.market.worker_site.work"),
    ("server.requester.qualify", "server.market.worker_site.base"),
    ("server.market.worker_site.quals", "server.requester.qualify"),
    ("server.market.mturk_api.ops_hits", "server.requester.dashboard.unserved"),
    # the shared web layer -> a web half
    ("server.cdn", "server.market.worker_site.html_question"),
    # the requester's pages reading marketplace tables outside the two named places
    ("server.requester.dashboard.views", "hits.market.models"),
    # product -> demo
    ("qualification.bank", "demo.data"),
    ("hits.requester.quality.review", "demo.simulation.run"),
    ("server.cli.main", "demo.cli"),
    ("workers.tasks", "demo.crowd"),
    # requester packages importing each other back and forth
    ("hits.requester.templates.arrangements", "hits.requester.campaigns.service"),
    ("hits.requester.quality.followups", "hits.requester.campaigns.service"),
    ("hits.requester.files.campaign", "hits.requester.workflows.engine"),
    ("hits.requester.templates.rank.model", "hits.requester.quality.aggregation"),
    ("hits.requester.tables.campaigns", "hits.requester.quality.copying"),
    ("hits.requester.batches.plan", "hits.requester.campaigns.service"),
]


@pytest.mark.parametrize(("importer", "imported"), BROKEN_IMPORTS)
def test_putting_back_a_broken_import_fails(importer: str, imported: str) -> None:
    graph = import_graph()
    assert importer in graph and imported in graph, "the example names modules that no longer exist"
    assert violations(graph) == []
    graph[importer] = graph[importer] | {imported}
    assert any(v.startswith(f"{importer} ") for v in violations(graph))


def test_the_check_reads_late_imports_too(tmp_path: Path) -> None:
    """An import inside a function is an import: the checker cannot be dodged by importing late."""
    known = {"hits.market.hit_ops": tmp_path / "a.py", "hits.requester.mturk": tmp_path / "b.py"}
    known["hits.market.hit_ops"].write_text("def f():\n    from hits.requester.mturk import Marketplace\n")
    known["hits.requester.mturk"].write_text("")
    assert violations(import_graph(known)) == [
        "hits.market.hit_ops (market) imports hits.requester.mturk (requester)"
    ]


def _names(graph: dict[str, set[str]], zone: str) -> Iterable[str]:
    return (name for name in graph if _zone(name) == zone)


def test_every_zone_is_populated() -> None:
    """A rename that empties a zone would make its rules vacuous: each zone holds modules."""
    graph = import_graph()
    for zone in FORBIDDEN:
        assert list(_names(graph, zone)), zone
