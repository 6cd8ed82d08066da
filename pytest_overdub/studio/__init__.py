"""The headless studio: a session over one song an agent reads, edits, measures and undoes, with the
scorer's own ops, renderer and meters (:mod:`.session`). Plain Python; the MCP server wraps it.

Importing this package imports no numpy.
"""

from .session import CONTENT_NOTICE, GUIDE_TOPICS, Studio, StudioError

__all__ = ["Studio", "StudioError", "GUIDE_TOPICS", "CONTENT_NOTICE"]
