"""Settings: typed, validated, read from the environment once at an entry point.

``settings.py`` holds :class:`Settings`; ``check.py`` turns validation errors
into one line per problem; ``server.py`` checks the server's settings;
``languages.py`` the output language; ``registry.py`` the lazy registries of
named implementations (backends, providers).
"""

from kgrag.config.settings import Settings

__all__ = ["Settings"]
