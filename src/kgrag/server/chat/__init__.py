"""What the Ollama- and OpenAI-compatible routes share.

names.py   model names: ``kgrag[/WORKSPACE][:MODE]`` (parse, format, list)
prefix.py  message prefixes (``/local``, ``/ppr[instructions]``, ``/context`` ...)
turn.py    one chat request as a question, a conversation and query parameters
run.py     the request's workspace (authorized), the answer whole or in pieces
"""
