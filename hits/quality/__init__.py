"""Quality control: gold scoring, worker decisions, and the review pipeline."""
