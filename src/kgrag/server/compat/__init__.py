"""Other tools' protocols, beyond their routes (``routes/ollama.py``, ``openai.py``, ``mcp.py``).

chat/         what the Ollama- and OpenAI-compatible chat routes share
mcp_tools.py  the MCP tools over one index (``/mcp`` in the server, ``kgrag mcp`` on stdio)
"""
