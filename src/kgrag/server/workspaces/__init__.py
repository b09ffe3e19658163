"""The workspaces one server process serves, each an index of its own.

pool.py       Workspaces: one open KGRag per workspace, opened on first use; names
postgres.py   named workspaces on PostgreSQL (each a PostgreSQL workspace of its own)
following.py  whether an open instance still matches what its index records
"""
