"""Alembic environment shared by both halves; ``side`` picks tables and version table."""

from __future__ import annotations

from alembic import context

from hits.db import MarketBase, RequesterBase, make_engine

config = context.config
side = config.attributes.get("side") or context.get_x_argument(as_dictionary=True).get("side", "market")
url: str = config.attributes.get("url") or config.get_main_option("sqlalchemy.url") or ""
if side == "market":
    import hits.market.layouts  # noqa: F401
    import hits.market.models  # noqa: F401

    metadata = MarketBase.metadata
else:
    import hits.requester.heatmaps.log  # noqa: F401
    import hits.requester.pages.gold  # noqa: F401
    import hits.requester.quality.live_copying  # noqa: F401
    import hits.requester.tables.api  # noqa: F401
    import hits.requester.tables.batches  # noqa: F401
    import hits.requester.tables.campaigns  # noqa: F401
    import hits.requester.tables.coordination  # noqa: F401

    # The schema tool sees every requester-side table, including those that the
    # qualification package (which builds on hits) defines.
    import hits.requester.tables.qualification  # noqa: F401
    import hits.requester.tables.recruiting  # noqa: F401
    import hits.requester.templates.arrangements  # noqa: F401

    metadata = RequesterBase.metadata
version_table = f"alembic_version_{side}"


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    # Both halves may share one database: each side only sees its own tables.
    if type_ == "table" and name is not None:
        return name in metadata.tables
    return True


def run() -> None:
    engine = make_engine(url)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            version_table=version_table,
            include_name=include_name,
            render_as_batch=True,
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run()
