"""Curation: merges (with undo), aliases that keep resolving, manual edits that last.

Curation records are *inputs* of the canonical recompute, next to the live
chunks' facts, never patches of its output: the graph is a function of the
live documents and the curation records (docs/curation.md).

- :mod:`kgrag.curation.records`: the records, their namespaces, and the
  in-memory view the planner reads (:class:`~kgrag.curation.records.Curation`);
- :mod:`kgrag.curation.plan`: planning touched keys through the records;
- :mod:`kgrag.curation.ops`: the operations (merge, unmerge, create, edit,
  rename, delete, restore) the façade and the CLI call.
"""
