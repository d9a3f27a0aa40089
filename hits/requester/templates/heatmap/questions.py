"""What a worker is asked about each heatmap, on which scale, in which rounds.

Below the template and its report, which both read it.
"""

from __future__ import annotations

#: Question id -> (short name, question, the five answers from 1 to 5).
QUESTIONS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "coverage": (
        "Coverage",
        "How much of the region the text talks about does the heatmap cover?",
        (
            "0-20%: misses it, or barely lights it",
            "20-40%",
            "40-60%: close to it, or on it but faint",
            "60-80%",
            "80-100%: the region sits inside the hot part",
        ),
    ),
    "share": (
        "Precision",
        "How much of the heatmap lies on the region the text talks about?",
        (
            "0-20%: scattered, or spread over much of the image",
            "20-40%",
            "40-60%: on the region, but also on unrelated parts",
            "60-80%",
            "80-100%: only on the relevant parts",
        ),
    ),
    "intuitive": (
        "Intuitiveness",
        "How intuitive is the heatmap, from 1 (worst) to 5 (best)?",
        (
            "1: unhelpful, misleading or backwards",
            "2: hardly like what you would expect",
            "3: shows the region, with stray parts or pieces missing",
            "4: mostly (not only) the expected regions",
            "5: nearly what you would draw yourself",
        ),
    ),
}
SCALE = range(1, 6)
ROUNDS = ("report", "custom")
