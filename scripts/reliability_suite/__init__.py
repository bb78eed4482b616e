"""The cases and stages of ``scripts/reliability.py``: one module per group, one shared runner (``common``)."""
