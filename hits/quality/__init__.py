"""Quality control: gold scoring, worker decisions, and the review pipeline."""

#: Every aggregation a template may declare. Here, not in ``aggregation``, so the
#: CLI can offer them without importing pandas.
METHODS = (
    "majority_vote",
    "dawid_skene",
    "glad",
    "binary_relevance",
    "token_majority",
    "collect_all",
    "bradley_terry",
    "median_per_key",
    "object_clusters",
)
