"""The campaign file's ``adaptive_gold``: more gold for newcomers, less for workers the campaign trusts.

Every page keeps ``items_per_hit + gold_per_hit`` slots, so pages look alike
whoever gets them; what changes is how many of those slots are gold. The
HITs for trusted workers are published under a requirement on the
campaign's trust qualification, which the pipeline grants once a worker's
record is confidently good (``docs/quality.md``, Adaptive gold).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AdaptiveGold(BaseModel):
    """How many of a page's slots are gold for newcomers and for trusted workers."""

    model_config = ConfigDict(extra="forbid")
    newcomers: int = Field(
        ge=1,
        le=20,
        description="Gold items on the pages of HITs any worker may take (above gold_per_hit).",
    )
    trusted: int = Field(
        ge=0,
        le=20,
        description="Gold items on the pages of HITs only trusted workers may take (below gold_per_hit).",
    )
    trust_after_gold: int = Field(
        8,
        ge=1,
        le=1000,
        description="Gold answers a worker must have given, the quality rule approving them with the "
        "campaign's confidence, before they are trusted.",
    )

    def problem(self, items_per_hit: int, gold_per_hit: int) -> str | None:
        """Why these counts cannot work with the page size, or ``None``.

        Newcomers' pages must hold more gold than ``gold_per_hit`` and trusted
        workers' fewer (otherwise nothing moves), and a newcomers' page must
        keep at least one ordinary item.
        """
        if gold_per_hit < 1:
            return "adaptive_gold needs gold_per_hit of 1 or more: it moves gold between pages"
        if not self.trusted < gold_per_hit < self.newcomers:
            return (
                f"adaptive_gold needs trusted < gold_per_hit < newcomers, but they are {self.trusted}, "
                f"{gold_per_hit} and {self.newcomers}"
            )
        if self.newcomers >= items_per_hit + gold_per_hit:
            return (
                f"adaptive_gold.newcomers ({self.newcomers}) would leave no ordinary item on a page of "
                f"{items_per_hit + gold_per_hit} slots (items_per_hit + gold_per_hit)"
            )
        return None

    def counts(self) -> tuple[int, int]:
        """(newcomers, trusted), as ``pages.gold.page_plans`` takes them."""
        return (self.newcomers, self.trusted)
