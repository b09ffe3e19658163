"""``kgrag import``: graphs from elsewhere, committed as documents with their chunks' facts.

- :mod:`~kgrag.lifecycle.importing.model`: the plan every source is read into;
- :mod:`~kgrag.lifecycle.importing.commit`: committing a plan (one transaction);
- :mod:`~kgrag.lifecycle.importing.custom_kg`: a user-built graph (``--kg``);
- :mod:`~kgrag.lifecycle.importing.roundtrip`: a kgrag export (``--from kgrag``);
- :mod:`~kgrag.lifecycle.importing.lightrag`: a LightRAG working directory (``--from lightrag``);
- :mod:`~kgrag.lifecycle.importing.run`: reading, the vector decision, the report.

What each source maps to, and what is lost: docs/import.md.
"""
