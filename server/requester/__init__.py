"""The requester's web half: the pages a requester's side serves.

``hit_pages`` are the HIT pages of campaigns (ExternalQuestion pages the
worker site frames), ``qualify`` the qualification tests hitforge grades,
``dashboard`` the pages of QA staff and requesters. They read and write the
requester's database; they never import the marketplace's web half, and read
the marketplace's tables in two places only, named in ``docs/architecture.md``
(a HIT page checking the HIT it is shown for, and the dashboard's list of API
HITs whose pages load scripts the site does not serve).
"""
