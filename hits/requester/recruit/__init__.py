"""Recruiting a crowd on another platform into hitforge's campaigns.

One folder per platform behind one interface (``base.py``): today
``prolific/`` (its client, its wire shapes, and a stand-in of its API for
tests and the demo). This package sits at the requester side's lowest level,
beside ``mturk.py``: like the boto3 facade, it only speaks to a service
outside hitforge; what a campaign does with it lives in ``campaigns/``.
"""
