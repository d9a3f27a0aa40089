"""The service limits of MTurk's API that both halves check.

The marketplace refuses a request past them with MTurk's error; the requester
side checks them before it sends one (a redo that would need an eleventh
qualification requirement is refused before the call, not by it).
"""

from __future__ import annotations

#: Qualification requirements a HIT type may carry.
MAX_REQUIREMENTS = 10
#: The size of a Question document, in UTF-8 bytes.
MAX_QUESTION_BYTES = 65_535
