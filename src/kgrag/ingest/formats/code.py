"""Source code and configuration files: the text verbatim as one code block.

The block's ``lang`` names the language (from the file's suffix), and
the block chunker marks chunks made only of code ``kind: code``: they
are embedded and searchable, but entity extraction skips them (see
docs/ingestion-structure.md). Lines are cut between, never inside.
"""

from __future__ import annotations

from kgrag.ingest.blocks import BlockBuilder, Parsed

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "jsx",
    ".ts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".scala": "scala",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".cc": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".go": "go",
    ".rs": "rust",
    ".rb": "ruby",
    ".php": "php",
    ".swift": "swift",
    ".dart": "dart",
    ".lua": "lua",
    ".pl": "perl",
    ".pm": "perl",
    ".r": "r",
    ".jl": "julia",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".clj": "clojure",
    ".sh": "bash",
    ".bash": "bash",
    ".zsh": "zsh",
    ".fish": "fish",
    ".ps1": "powershell",
    ".bat": "batch",
    ".sql": "sql",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".cfg": "ini",
    ".proto": "protobuf",
    ".graphql": "graphql",
    ".tf": "hcl",
    ".css": "css",
    ".scss": "scss",
    ".vue": "vue",
    ".cmake": "cmake",
}


def parse_code(text: str, lang: str | None = None) -> Parsed:
    """``text`` unchanged as one code block tagged ``lang``."""
    builder = BlockBuilder()
    builder.code(text, lang)
    return builder.build()
