"""The one error type the harness raises for a problem a person must fix: its message is Japanese and says what to do."""


class HarnessError(Exception):
    """A refusal with a clear Japanese message (a corrupt file, a bad setting); never a bug."""
