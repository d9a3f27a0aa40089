"""The rewrite map: which public CDN URL hitforge serves from which local file.

Read from ``cdn_map.yaml`` beside this module (rules for the libraries installed
under ``node_modules/`` by ``make``) and from the operator's own file named by
``HITFORGE_CDN_MAP`` (URL prefixes mapped to local files or directories). Nothing
here fetches anything: a URL is only ever looked up, never requested, so a page
cannot make the server reach the network on its behalf.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from hits.settings import Settings

HERE = Path(__file__).resolve().parent
BUILTIN_MAP = HERE / "cdn_map.yaml"
INSTALLED_DIR = HERE / "node_modules"

VersionKey = tuple[int, ...]
_PLACEHOLDERS = {
    "version": r"(?P<version>\d+(?:\.\d+){0,2})",
    "path": r"(?P<path>[^?#]+)",
    "name": r"(?P<name>[^/?#]+)",
}
_PLACEHOLDER = re.compile(r"\{(version|path|name)\}")


class CdnMapError(ValueError):
    """A map file that cannot be used, naming the file and what is wrong with it."""


@dataclass(frozen=True)
class Copy:
    """One installed copy of a library: its version and the directory holding its files."""

    library: str
    version: str
    directory: Path

    @property
    def key(self) -> VersionKey:
        return version_key(self.version)


@dataclass(frozen=True)
class Rule:
    """A CDN URL pattern and the file of a library it stands for."""

    library: str
    pattern: re.Pattern[str]
    file: str
    host: str
    version: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Prefix:
    """An operator's mapping: URLs starting with ``prefix`` are files under ``target``."""

    index: int
    prefix: str
    target: Path


@dataclass(frozen=True)
class Resolution:
    """Where a CDN URL is served from, and how that differs from what the URL named."""

    url: str
    library: str
    requested_version: str | None
    version: str | None
    file: str
    path: Path
    prefix_index: int | None = None
    notes: tuple[str, ...] = ()

    @property
    def substituted(self) -> bool:
        """Whether the served file is not exactly the one the URL named (another version or variant)."""
        return bool(self.notes)


@dataclass
class CdnMap:
    """The libraries installed, the built-in rules and the operator's prefixes."""

    copies: dict[str, list[Copy]] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    prefixes: list[Prefix] = field(default_factory=list)
    #: Libraries the map names whose copies are missing (``make`` not run): said at startup.
    missing: list[str] = field(default_factory=list)

    @cached_property
    def hosts(self) -> frozenset[str]:
        """Every host a rule or prefix names: a URL elsewhere is passed over without trying each."""
        return frozenset([r.host for r in self.rules] + [p.prefix.split("/", 1)[0] for p in self.prefixes])

    def copy(self, library: str, version: str) -> Copy | None:
        """The installed copy of ``library`` with exactly ``version``."""
        return next((c for c in self.copies.get(library, []) if c.version == version), None)

    def resolve(self, url: str) -> Resolution | None:
        """The local file serving ``url`` (a CDN URL in any spelling), or None when none does."""
        target = _host_and_path(url)
        if target is None or target.split("/", 1)[0] not in self.hosts:
            return None
        for prefix in self.prefixes:
            found = _resolve_prefix(prefix, url, target)
            if found is not None:
                return found
        for rule in self.rules:
            match = rule.pattern.fullmatch(target)
            if match is not None:
                return self._resolve_rule(rule, url, match)
        return None

    def _resolve_rule(self, rule: Rule, url: str, match: re.Match[str]) -> Resolution | None:
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        requested = rule.version or groups.get("version")
        if requested is None:
            return None
        copy = nearest_copy(self.copies.get(rule.library, []), requested)
        if copy is None:
            return None
        notes: list[str] = []
        if version_key(copy.version)[: len(version_key(requested))] != version_key(requested):
            notes.append(f"{rule.library} {requested} is served as {copy.version}")
        if rule.note:
            notes.append(rule.note.format(**groups))
        wanted = rule.file.format(**groups)
        file = _existing_file(copy.directory, wanted)
        if file is None:
            return None
        if file != wanted:
            notes.append(f"{wanted} is served as {file}")
        return Resolution(
            url=url,
            library=rule.library,
            requested_version=requested,
            version=copy.version,
            file=file,
            path=copy.directory / file,
            notes=tuple(notes),
        )


def version_key(version: str) -> VersionKey:
    """``"3.3.7"`` as ``(3, 3, 7)`` (parts that are not numbers end the key)."""
    parts: list[int] = []
    for part in version.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def nearest_copy(copies: list[Copy], requested: str) -> Copy | None:
    """The copy to serve for ``requested``: that version, else the nearest of the same major.

    A partial version (``3`` or ``3.3``, as jsDelivr's ``bootstrap@3`` allows) means
    the newest copy it covers. Otherwise the nearest: the closest minor, then the
    closest patch, the newer on a tie (a later patch fixes bugs, it breaks nothing).
    """
    wanted = version_key(requested)
    if not wanted:
        return None
    same_major = [c for c in copies if c.key[:1] == wanted[:1]]
    if not same_major:
        return None
    covered = [c for c in same_major if c.key[: len(wanted)] == wanted]
    if covered:
        return max(covered, key=lambda c: c.key)
    padded = wanted + (0,) * (3 - len(wanted))

    def distance(copy: Copy) -> tuple[int, int, int]:
        have = copy.key + (0,) * (3 - len(copy.key))
        return (abs(have[1] - padded[1]), abs(have[2] - padded[2]), -have[1] * 1000 - have[2])

    return min(same_major, key=distance)


def _host_and_path(url: str) -> str | None:
    """``host/path`` of an absolute or protocol-relative http(s) URL (query and fragment dropped)."""
    text = url.strip()
    if text.startswith("//"):
        text = "https:" + text
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:  # also a bracket left open ("//[")
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return parts.hostname.lower() + (parts.path or "/")


def _existing_file(directory: Path, wanted: str) -> str | None:
    """``wanted`` inside ``directory`` if it is a file there, else its ``.min`` twin (or the reverse)."""
    candidates = [wanted]
    if ".min." in wanted:
        candidates.append(wanted.replace(".min.", ".", 1))
    else:
        stem, dot, ext = wanted.rpartition(".")
        if dot and "/" not in ext:
            candidates.append(f"{stem}.min.{ext}")
    root = directory.resolve()
    for name in candidates:
        if ".." in Path(name).parts:
            continue
        try:
            path = (directory / name).resolve()
            if path.is_file() and path.is_relative_to(root):
                return name
        except (OSError, ValueError):
            continue  # a name too long for the file system, or holding a NUL: no such file
    return None


def _resolve_prefix(prefix: Prefix, url: str, target: str) -> Resolution | None:
    if not target.startswith(prefix.prefix):
        return None
    rest = target[len(prefix.prefix) :]
    if rest and not prefix.prefix.endswith("/") and not rest.startswith("/"):
        return None  # cdn.example.org/lib must not take cdn.example.org/library.js
    rest = rest.lstrip("/")
    if prefix.target.is_file():
        if rest:
            return None
        return Resolution(url, "site", None, None, prefix.target.name, prefix.target, prefix.index)
    file = _existing_file(prefix.target, rest) if rest else None
    if file is None or file != rest:
        return None
    return Resolution(url, "site", None, None, file, prefix.target / file, prefix.index)


def _compile(url: str) -> re.Pattern[str]:
    pieces: list[str] = []
    at = 0
    for placeholder in _PLACEHOLDER.finditer(url):
        pieces.append(re.escape(url[at : placeholder.start()]))
        pieces.append(_PLACEHOLDERS[placeholder.group(1)])
        at = placeholder.end()
    pieces.append(re.escape(url[at:]))
    return re.compile("".join(pieces), re.IGNORECASE)


def _installed_copies(
    libraries: dict[str, list[str]], installed: Path
) -> tuple[dict[str, list[Copy]], list[str]]:
    copies: dict[str, list[Copy]] = {}
    missing: list[str] = []
    for library, directories in libraries.items():
        for name in directories:
            manifest = installed / name / "package.json"
            if not manifest.is_file():
                missing.append(name)
                continue
            version = str(json.loads(manifest.read_text(encoding="utf-8")).get("version", ""))
            copies.setdefault(library, []).append(Copy(library, version, installed / name))
    return copies, missing


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CdnMapError(f"{path}: cannot be read ({exc.strerror})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CdnMapError(f"{path}: not a YAML file ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CdnMapError(f"{path}: must be a mapping (libraries:, rules:, prefixes:)")
    return data


def _rules(path: Path, entries: Any, libraries: dict[str, list[str]]) -> list[Rule]:
    if not isinstance(entries, list):
        raise CdnMapError(f"{path}: 'rules' must be a list")
    rules = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not {"library", "url", "file"} <= entry.keys():
            raise CdnMapError(f"{path}: rule {number} needs library, url and file")
        library, url = str(entry["library"]), str(entry["url"])
        if library not in libraries:
            raise CdnMapError(f"{path}: rule {number} names library {library!r}, not under 'libraries'")
        if ("{version}" in url) == ("version" in entry):
            raise CdnMapError(f"{path}: rule {number} needs {{version}} in its url or a version, not both")
        version = str(entry["version"]) if "version" in entry else None
        note = str(entry["note"]) if entry.get("note") else None
        host = url.split("/", 1)[0].lower()
        if not host or "{" in host:
            raise CdnMapError(f"{path}: rule {number}'s url must start with its host")
        rules.append(Rule(library, _compile(url), str(entry["file"]), host, version, note))
    return rules


def _prefixes(path: Path, entries: Any) -> list[Prefix]:
    if not isinstance(entries, dict):
        raise CdnMapError(f"{path}: 'prefixes' must map URL prefixes to local files or directories")
    prefixes = []
    for index, (url, local) in enumerate(entries.items()):
        target = _host_and_path(url if "//" in str(url) else "//" + str(url))
        if target is None:
            raise CdnMapError(f"{path}: prefix {url!r} is not a URL (write host/path: cdn.example.org/lib/)")
        directory = (path.parent / str(local)).resolve()
        if not directory.exists():
            raise CdnMapError(f"{path}: prefix {url!r}: {directory} does not exist")
        prefixes.append(Prefix(index, target, directory))
    # The longest prefix first, so a specific file can override its directory's mapping.
    return sorted(prefixes, key=lambda p: -len(p.prefix))


def map_for(settings: Settings) -> CdnMap:
    """The map ``settings`` name: HITFORGE_CDN_MAP's prefixes over HITFORGE_CDN_LIBRARIES' copies."""
    installed = Path(settings.cdn_libraries_dir) if settings.cdn_libraries_dir else INSTALLED_DIR
    return load_cdn_map(settings.cdn_map_file or None, installed)


def load_cdn_map(operator_file: str | Path | None = None, installed: Path = INSTALLED_DIR) -> CdnMap:
    """The built-in map over the installed copies, plus the operator's prefixes (tried first)."""
    builtin = _read_yaml(BUILTIN_MAP)
    libraries = {str(k): [str(d) for d in v] for k, v in builtin.get("libraries", {}).items()}
    copies, missing = _installed_copies(libraries, installed)
    cdn_map = CdnMap(copies, _rules(BUILTIN_MAP, builtin.get("rules", []), libraries), [], missing)
    if operator_file:
        path = Path(operator_file)
        extra = _read_yaml(path)
        unknown = set(extra) - {"prefixes"}
        if unknown:
            raise CdnMapError(f"{path}: unknown keys {', '.join(sorted(unknown))} (only 'prefixes')")
        cdn_map.prefixes = _prefixes(path, extra.get("prefixes", {}))
    return cdn_map
