"""The asyncio client (the source the sync client in ``_sync/`` is generated from)."""
