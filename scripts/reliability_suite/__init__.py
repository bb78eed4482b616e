"""The stages of ``scripts/reliability.py``, one module each."""
