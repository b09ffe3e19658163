"""The JSON the routes read and answer: LightRAG Server's shapes, with kgrag's fields alongside.

documents.py   document records (``DocStatusResponse``) and the paginated listing
pipeline.py    LightRAG's pipeline status, from the workspace's job records
graph.py       labels, label search, subgraphs (LightRAG's graph viewer)
entity.py      an entity and its neighbourhood (MCP's ``get_entity``)
query_body.py  the body of ``/query``, ``/query/stream``, ``/query/data``
query.py       query results in LightRAG's response shapes
"""

# A JSON object built for a client: its values are whatever JSON the route
# chose, so a reader narrows them. As a route's response model it is the
# same schema as ``dict[str, Any]`` (the pinned tests/server/openapi.json), so
# a route returns a typed record and declares ``response_model=JSONObject``.
JSONObject = dict[str, object]
