"""The quality simulation: a rating campaign run in memory against the real decision model.

``run`` plays the campaign, ``config`` holds its settings and report,
``metrics`` and ``pairs`` measure it, ``cli`` is ``hitforge quality simulate``.
"""
