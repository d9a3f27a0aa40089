"""hitforge's Celery workers: the review pipeline's tasks and beat schedule."""

from workers.app import create_celery_app

__all__ = ["create_celery_app"]
