"""Campaign zips uploaded on the dashboard: unpacked safely, each into a fresh folder of its own.

A zip holds a campaign file (``campaign.yaml`` or ``campaign.yml``) at its
root or in its one top-level folder, with the items, gold and media the file
names. Nothing a zip says is trusted: a member name that is absolute, holds
``..`` or a backslash, a symlink or any other special file, an encrypted
member, too many members or too many bytes once unpacked refuses the whole
zip before (or, for bytes that lie about their size, while) anything is
written, and whatever was written is removed again. The campaign file may
name only files inside the zip (``confine_paths``).

An upload lives under ``<var dir>/uploads/<32 hex digits>/``: ``upload.json``
(who uploaded it, its file name, the campaign it launched), ``files/`` (the
zip's content) and ``preview/`` (the preview's pictures). A launched
campaign's media are served from ``files/`` for as long as it runs, so an
upload is never removed once launched.
"""

from __future__ import annotations

import fcntl
import json
import re
import secrets
import shutil
import stat
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

from hits.requester.fileerrors import InputFileError, load_yaml

#: The largest zip accepted, as sent (the app's body limit is raised to it for the upload alone).
MAX_ZIP_BYTES = 64 * 2**20
#: The most bytes a zip may unpack to: a small zip of zeros ("zip bomb") must not fill the disk.
MAX_UNPACKED_BYTES = 256 * 2**20
#: The most members a zip may hold (a media folder of pictures, with room to spare).
MAX_MEMBERS = 10_000
#: The longest member name, and the longest part of one (what file systems take).
MAX_NAME = 1024
MAX_PART = 255
CAMPAIGN_FILES = ("campaign.yaml", "campaign.yml")
#: Folders a zip tool adds that are nobody's content (macOS's resource forks).
IGNORED_FOLDERS = ("__MACOSX",)
#: The fields of a campaign file that name files or folders (relative to the campaign file).
PATH_FIELDS = ("items", "gold", "media_dir")
_UPLOAD_ID = re.compile(r"[0-9a-f]{32}")
_CHUNK = 64 * 1024


class UploadRefused(ValueError):
    """A zip that cannot be used; the message says why, for the requester to read."""


@dataclass
class Upload:
    """A stored upload: its folder, who uploaded it, its campaign file and what it launched."""

    id: str
    folder: Path
    staff_id: int
    filename: str
    #: The campaign file's path inside the zip (``campaign.yaml`` or ``folder/campaign.yaml``).
    campaign_name: str
    campaign_id: int | None = None

    @property
    def files(self) -> Path:
        """Where the zip's content is unpacked."""
        return self.folder / "files"

    @property
    def campaign_file(self) -> Path:
        return self.files / self.campaign_name

    @property
    def preview(self) -> Path:
        """Where the preview's pictures are copied."""
        return self.folder / "preview"

    def shown(self, text: str) -> str:
        """``text`` with this upload's folder taken out of its paths: names as they are in the zip."""
        return text.replace(str(self.files.resolve()) + "/", "").replace(str(self.files) + "/", "")


def uploads_dir(var_dir: Path) -> Path:
    return var_dir / "uploads"


def _member_path(info: zipfile.ZipInfo) -> PurePosixPath | None:
    """A member's path to unpack it to, or None for a folder entry; refused if it could leave the folder."""
    name = info.filename
    if any(ord(c) < 32 for c in name) or "\\" in name:
        raise UploadRefused(
            f"the zip holds a member named {name!r}: names with backslashes or control "
            "characters are not accepted (zip the folder with forward slashes)"
        )
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        raise UploadRefused(f"the zip holds an absolute path, {name!r}: every member must be relative")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UploadRefused(f"the zip holds a member named {name!r}, which reaches out of its folder (..)")
    if len(name) > MAX_NAME or any(len(p) > MAX_PART for p in parts):
        raise UploadRefused(f"the zip holds a member whose name is too long: {name[:80]!r}...")
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if info.create_system == 3 and kind == stat.S_IFLNK:
        raise UploadRefused(f"the zip holds a symbolic link, {name!r}: only files and folders are accepted")
    if info.create_system == 3 and kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise UploadRefused(f"the zip holds {name!r}, which is not a file or a folder")
    if info.flag_bits & 0x1:
        raise UploadRefused(f"the zip's member {name!r} is encrypted: upload a zip without a password")
    if info.is_dir() or not parts:
        return None
    return PurePosixPath(*parts)


def _members(archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """The zip's files with the paths to unpack them to, every member checked first."""
    infos = archive.infolist()
    if len(infos) > MAX_MEMBERS:
        raise UploadRefused(f"the zip holds {len(infos)} members; at most {MAX_MEMBERS} are accepted")
    files = []
    for info in infos:
        path = _member_path(info)
        if path is not None and path.parts[0] not in IGNORED_FOLDERS:
            files.append((info, path))
    if not files:
        raise UploadRefused("the zip is empty: it holds no files")
    # What the members say they unpack to; what they really do is counted while unpacking too.
    declared = sum(info.file_size for info, _ in files)
    if declared > MAX_UNPACKED_BYTES:
        raise UploadRefused(_too_big())
    return files


def _too_big() -> str:
    return f"the zip unpacks to more than {MAX_UNPACKED_BYTES // 2**20} MB, the most accepted"


def find_campaign_file(paths: list[PurePosixPath]) -> PurePosixPath:
    """The campaign file: at the zip's root, else in its one top-level folder."""
    at_root = [p for p in paths if len(p.parts) == 1 and p.name in CAMPAIGN_FILES]
    if len(at_root) > 1:
        raise UploadRefused("the zip holds both campaign.yaml and campaign.yml at its root: keep one")
    if at_root:
        return at_root[0]
    nested = [p for p in paths if len(p.parts) == 2 and p.name in CAMPAIGN_FILES]
    if len(nested) > 1:
        found = ", ".join(sorted(p.as_posix() for p in nested))
        raise UploadRefused(f"the zip holds several campaign files ({found}): upload one campaign a zip")
    if not nested:
        raise UploadRefused(
            "the zip holds no campaign.yaml (or campaign.yml) at its root or in its top-level folder"
        )
    return nested[0]


def _unpack(archive: zipfile.ZipFile, files: list[tuple[zipfile.ZipInfo, PurePosixPath]], to: Path) -> None:
    written = 0
    for info, path in files:
        target = to.joinpath(*path.parts)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, target.open("xb") as out:
                while chunk := source.read(_CHUNK):
                    written += len(chunk)
                    if written > MAX_UNPACKED_BYTES:
                        raise UploadRefused(_too_big())
                    out.write(chunk)
        except FileExistsError:
            raise UploadRefused(f"the zip holds {path.as_posix()} twice") from None
        except (OSError, zipfile.BadZipFile, EOFError) as exc:
            raise UploadRefused(f"{path.as_posix()} could not be unpacked ({exc})") from None


def store_zip(var_dir: Path, stream: IO[bytes], filename: str, staff_id: int) -> Upload:
    """Check and unpack an uploaded zip into a fresh folder; refused (nothing kept) if it cannot be used."""
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError, ValueError):
        raise UploadRefused(
            f"{filename or 'the file'} is not a zip archive: upload the campaign folder as a .zip"
        ) from None
    with archive:
        files = _members(archive)
        campaign = find_campaign_file([path for _, path in files])
        upload_id = secrets.token_hex(16)
        folder = uploads_dir(var_dir) / upload_id
        folder.mkdir(parents=True)
        upload = Upload(upload_id, folder, staff_id, filename[:200], campaign.as_posix())
        try:
            _unpack(archive, files, upload.files)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    save(upload, uploaded_at=datetime.now(UTC).isoformat())
    return upload


def save(upload: Upload, **extra: Any) -> None:
    """Write the upload's record (atomically: a reader never sees half of it)."""
    record_path = upload.folder / "upload.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    record.update(
        staff_id=upload.staff_id,
        filename=upload.filename,
        campaign_file=upload.campaign_name,
        campaign_id=upload.campaign_id,
        **extra,
    )
    partial = upload.folder / "upload.json.partial"
    partial.write_text(json.dumps(record))
    partial.replace(record_path)


def load_upload(var_dir: Path, upload_id: str, staff_id: int) -> Upload | None:
    """The upload ``upload_id`` if ``staff_id`` made it; None otherwise (as if there were none)."""
    if not _UPLOAD_ID.fullmatch(upload_id):
        return None
    folder = uploads_dir(var_dir) / upload_id
    try:
        record = json.loads((folder / "upload.json").read_text())
    except (OSError, ValueError):
        return None
    if record.get("staff_id") != staff_id:
        return None
    return Upload(
        upload_id,
        folder,
        staff_id,
        str(record.get("filename", "")),
        str(record["campaign_file"]),
        record.get("campaign_id"),
    )


def discard(upload: Upload) -> None:
    """Remove an upload that will not be launched (never one that was: its media are served)."""
    if upload.campaign_id is None:
        shutil.rmtree(upload.folder, ignore_errors=True)


@contextmanager
def launch_lock(upload: Upload) -> Iterator[None]:
    """Hold the upload's launch lock: a second post of the same launch waits, then finds it launched."""
    with (upload.folder / "launch.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def confine_paths(upload: Upload) -> None:
    """Refuse a campaign file that names a file or folder outside its zip (``/etc``, ``../..``).

    Checked before the campaign file is loaded, so nothing outside the upload is ever read.
    """
    path = upload.campaign_file
    data, lines = load_yaml(path)
    if not isinstance(data, dict):
        return  # loading it says what is wrong
    root = upload.files.resolve()
    for key in PATH_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and not (path.parent / value).resolve().is_relative_to(root):
            raise InputFileError(
                path, lines.get((key,)), key, f"{value!r} is outside the zip: name a file inside it"
            )
