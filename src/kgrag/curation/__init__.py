"""Curation: merges (with undo), aliases that keep resolving, manual edits that last.

Curation records are *inputs* of the canonical recompute, next to the live
chunks' facts, never patches of its output: the graph is a function of the
live documents and the curation records (docs/curation.md).

- :mod:`kgrag.knowledge.curation`: the records, their namespaces, and the
  in-memory view the planner reads (:class:`~kgrag.knowledge.curation.Curation`);
- :mod:`kgrag.indexing.curated`: planning touched keys through the records;
- :mod:`kgrag.curation.ops`: the operations (merge, unmerge, create, edit,
  rename, delete, restore) the façade and the CLI call.
"""
