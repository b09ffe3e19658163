"""The JSON the routes read and answer: LightRAG Server's shapes, with kgrag's fields alongside.

documents.py   document records (``DocStatusResponse``) and the paginated listing
pipeline.py    LightRAG's pipeline status, from the workspace's job records
graph.py       labels, label search, subgraphs (LightRAG's graph viewer)
entity.py      an entity and its neighbourhood (MCP's ``get_entity``)
query_body.py  the body of ``/query``, ``/query/stream``, ``/query/data``
query.py       query results in LightRAG's response shapes
"""

from typing import Any

# The response model a route declares when it returns a typed record: the
# schema stays the plain JSON object it was (the pinned tests/server/openapi.json),
# while the function's return type says what the object holds.
JSON_OBJECT = dict[str, Any]
