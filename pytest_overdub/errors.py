"""The one exception root of pytest-overdub and its children.

Every error a user can cause (a bad song, a refused op, a bad task file, a signal a meter cannot read)
is an :class:`OverdubError`; its message says what was passed, where (file, JSON path or op index) and
what was allowed. Anything else escaping the package is a bug.
"""


class OverdubError(Exception):
    """Root of every error pytest-overdub raises on bad input."""


class SongError(OverdubError):
    """A song file or song object that is not valid ``overdub/0``."""


class OpError(OverdubError):
    """An op (an agent's edit) that was refused; the transaction it belonged to was not applied."""


class SubmissionError(OverdubError):
    """A submission file in none of the accepted forms."""


class DeviceError(OverdubError):
    """An unknown device, or a parameter value outside its declared range."""


class RenderError(OverdubError):
    """A song that cannot be rendered at all (device faults are warnings, not this)."""


class MeasureError(OverdubError):
    """A signal a meter cannot read: wrong shape, non-finite samples, empty, or an unsupported rate."""


class TooShortError(MeasureError):
    """A signal shorter than a figure needs (e.g. integrated loudness needs one 400 ms block): the figure is
    refused rather than computed from less than its definition covers."""


class TaskError(OverdubError):
    """A task file that is not well formed."""


class KernelError(OverdubError):
    """A song-defined device kernel that could not be built or that faulted while running."""


class UsageError(OverdubError):
    """A command-line argument outside what is allowed: a bad number, a path that cannot serve."""


class StudioError(OverdubError):
    """A studio tool call that was refused (a bad op, an unknown track, section or device, nothing to undo);
    the session's song is unchanged. ``details`` holds what a client may want to show structurally (for a
    refused op: ``op_index``, ``op_type``, ``field``, ``value``, ``allowed``)."""

    def __init__(self, message: str, *, details: dict | None = None):
        super().__init__(message)
        self.details = dict(details or {})
