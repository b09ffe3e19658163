"""The HTTP server: LightRAG Server's routes, Ollama-, OpenAI- and MCP-compatible APIs, a web UI.

Folders by concern, so that a question about the server has one place to look::

    app.py        create_app(options) -> FastAPI: middleware, the one list of routers, lifespan
    deps.py       FastAPI dependencies: the caller, the request's workspace (403 on another's)
    routes/       the HTTP routes, one router per resource (documents, query, graph,
                  jobs, auth, health, docs, webui) and per compatible API (ollama, openai, mcp)
    access/       who may call and what a client may read: API keys and accounts, tokens,
                  login throttling, the gate (401/403), security headers and body limits,
                  redaction of addresses and paths
    jobs/         the write queues: one per workspace, on a thread of its own; job records
                  in the store, so any process answers for any job
    workspaces/   one open KGRag per workspace (a folder, or a PostgreSQL workspace), and
                  when an open instance must follow what another process settled
    views/        the JSON shapes the routes read and answer (LightRAG's, kgrag's fields
                  alongside): document status, pipeline status, graph, query bodies and results
    compat/       what other tools' protocols need beyond their routes: Ollama's and
                  OpenAI's chat (chat/), MCP's tools (also served on stdio by ``kgrag mcp``)
    documents/    what the document routes do: their jobs (through the index's one write
                  path), track ids, uploaded files
    ui/, static/  the web UI and the vendored API documentation page

A route module only parses a request and shapes an answer; what it does to
an index goes through :class:`~kgrag.api.facade.KGRag` (writes through a
workspace's job queue).

Install with ``pip install 'kgrag[server]'``; run with ``kgrag serve``.
"""
