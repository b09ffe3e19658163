"""The HTTP server: LightRAG Server's routes, Ollama-, OpenAI- and MCP-compatible APIs, a web UI.

Layers (each module one job)::

    app.py         create_app(settings) -> FastAPI: middleware, routers, lifespan
    workspaces.py  Workspaces: one open KGRag per workspace (folder, or PostgreSQL workspace)
    jobs.py        the write queues; job records in the store, so any process answers for any job
    auth.py        who is calling (API key, JWT account) and which workspaces they may use
    deps.py        FastAPI dependencies: the caller, the request's workspace (403 on another's)
    routes/        one router per concern (health, documents, query, graph, ollama, openai, mcp)

Install with ``pip install 'kgrag[server]'``; run with ``kgrag serve``.
"""
