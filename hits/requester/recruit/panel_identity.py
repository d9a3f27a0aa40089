"""What a panel participant can prove without a platform API: a link made for them, a code of their own.

A panel (SONA, CloudResearch Connect, a lab's mailing list) sends people to
one entry link with their id filled in; hitforge cannot ask anyone whether
the id is theirs. Two optional guards, both keyed by the server's secret:

* **signed links** (``recruit.signed_links``): the lab sends each person
  their own link (``hitforge recruit links``), carrying ``sig``, a MAC of
  the study's key and their id. A link without it, or with another id, is
  refused: nobody enters under an id the lab did not hand out.
* **per-participant codes** (``recruit.per_participant_codes``): the
  completion code a finished participant is given is derived from their
  id, so a code passed around on a forum credits nobody else; the lab
  checks what was entered on the panel against ``hitforge recruit codes``.

Derived, not stored: the same id always gets the same link and code, and
nothing needs a migration. The server's secret is never used raw: each
purpose has its own key derived from it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

#: The entry link's URL parameter carrying the signature.
SIGNATURE_PARAMETER = "sig"


def _mac(secret_key: str, purpose: str, internal_name: str, participant_id: str) -> bytes:
    key = hmac.new(secret_key.encode(), f"hitforge panel {purpose}".encode(), hashlib.sha256).digest()
    return hmac.new(key, f"{internal_name}\n{participant_id}".encode(), hashlib.sha256).digest()


def entry_signature(secret_key: str, internal_name: str, participant_id: str) -> str:
    """The ``sig`` of the participant's own entry link to the study ``internal_name``."""
    return _mac(secret_key, "entry", internal_name, participant_id)[:15].hex()


def signature_matches(secret_key: str, internal_name: str, participant_id: str, given: str) -> bool:
    """Whether ``given`` is the participant's link's signature (compared in constant time)."""
    return hmac.compare_digest(
        given.encode(), entry_signature(secret_key, internal_name, participant_id).encode()
    )


def participant_code(secret_key: str, internal_name: str, participant_id: str) -> str:
    """The participant's own completion code: 10 letters and digits, easy to copy, hard to guess."""
    digest = _mac(secret_key, "completion code", internal_name, participant_id)
    return base64.b32encode(digest[:10]).decode()[:10]
