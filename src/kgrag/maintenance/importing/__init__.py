"""``kgrag import``: graphs from elsewhere, committed as documents with their chunks' facts.

- :mod:`~kgrag.maintenance.importing.model`: the plan every source is read into;
- :mod:`~kgrag.maintenance.importing.commit`: committing a plan (one transaction);
- :mod:`~kgrag.maintenance.importing.custom_kg`: a user-built graph (``--kg``);
- :mod:`~kgrag.maintenance.importing.roundtrip`: a kgrag export (``--from kgrag``);
- :mod:`~kgrag.maintenance.importing.lightrag`: a LightRAG working directory (``--from lightrag``);
- :mod:`~kgrag.maintenance.importing.run`: reading, the vector decision, the report.

What each source maps to, and what is lost: docs/import.md.
"""
