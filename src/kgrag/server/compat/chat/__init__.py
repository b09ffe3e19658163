"""What the Ollama- and OpenAI-compatible routes share.

names.py          model names: ``kgrag[/WORKSPACE][:MODE]`` (parse, format)
prefix.py         message prefixes (``/local``, ``/ppr[instructions]``, ``/context`` ...)
turn.py           one chat request as a question, a conversation and query parameters
run.py            the request's workspace (authorized), the answer whole or in pieces
errors.py         refusals with their HTTP status
ollama_shapes.py  Ollama's bodies and lines; openai_shapes.py: OpenAI's
"""
