"""The façade: :class:`KGRag` (async, ``facade.py``) and :class:`SyncKGRag` (blocking, ``blocking.py``).

``opening.py`` builds what the façade works with (store, remembered settings,
models, extractor) from its :class:`~kgrag.config.Settings`.
"""

from kgrag.api.blocking import SyncAnswerStream, SyncKGRag
from kgrag.api.facade import KGRag

__all__ = ["KGRag", "SyncAnswerStream", "SyncKGRag"]
