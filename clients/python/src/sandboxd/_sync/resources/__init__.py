# Generated from sandboxd/_async/resources/__init__.py by scripts/unasync.py: do not edit.
"""One module per area of the API."""
