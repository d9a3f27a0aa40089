"""What ``hitforge demo`` hands the body that runs one demo: a campaign, or the iiw workflow."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from sqlalchemy.orm import Session, sessionmaker

from hits.market.accounts import IssuedKey
from hits.requester.mturk import Marketplace
from hits.requester.recruit.prolific.standin import RunningStandin


@dataclass(frozen=True)
class DemoContext:
    """The running demo: its server, the demo requester's key and database, and what the user asked for."""

    console: Console
    #: The demo requester's key pair: the demo publishes with it, the dashboard user sees its work.
    key: IssuedKey
    #: The demo server's base URL (the worker site, the HIT pages and the MTurk API).
    url: str
    var_dir: Path
    template: str
    hit_count: int
    #: The requester side's database.
    sessions: sessionmaker[Session]
    keep_serving: bool
    #: The dashboard user ``qa``'s password, printed when the server is left up.
    staff_password: str
    #: ``time.monotonic()`` when the demo started, for the elapsed time in the summary.
    started: float
    #: The Prolific stand-in the crowd is recruited through (``--recruit prolific``), if any.
    standin: RunningStandin | None = None

    @property
    def folder(self) -> Path:
        """Where the demo writes its campaign file, items, gold and pictures."""
        return self.var_dir / "campaign"

    def connect(self) -> Marketplace:
        """The demo requester's boto3 client on the demo server."""
        return Marketplace.connect(self.url, self.key.access_key_id, self.key.secret_access_key)

    def elapsed(self) -> float:
        """Seconds since the demo started."""
        return time.monotonic() - self.started

    def finish(self, ok: bool) -> int:
        """The exit status of a demo whose outcome was ``ok``, after serving until Ctrl-C if asked to."""
        if self.keep_serving:
            print_ = self.console.print
            print_(f"\nworker site: {self.url}/   (sign up as a new worker)")
            print_(f"dashboard:   {self.url}/dashboard/   (user qa, password {self.staff_password})")
            print_("Ctrl-C to stop.")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                pass
        return 0 if ok else 1
