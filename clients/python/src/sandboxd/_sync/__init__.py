# Generated from sandboxd/_async/__init__.py by scripts/unasync.py: do not edit.
"""The sync client (the source the sync client in ``_sync/`` is generated from)."""
