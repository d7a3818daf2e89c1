"""One writer per work folder: an OS lock on the folder, released by the kernel when its holder dies (even by SIGKILL),
so a lock left by a killed process is stale by construction and the next run simply takes it."""

from __future__ import annotations

import os
from contextlib import contextmanager

from . import texts
from .errors import HarnessError

try:
    import fcntl
except ImportError:  # Windows: no flock; the harness runs unlocked there
    fcntl = None
if not hasattr(fcntl, "flock"):  # the browser edition (Pyodide): an fcntl without flock; unlocked there too
    fcntl = None


@contextmanager
def hold_workdir(workdir):
    """Hold the work folder for this run, or refuse with a clear message if another process holds it."""
    if fcntl is None or not os.path.isdir(workdir):
        yield
        return
    fd = os.open(workdir, os.O_RDONLY)  # not inherited by child processes (O_CLOEXEC is Python's default)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise HarnessError(texts.WORKDIR_BUSY.format(path=workdir)) from None
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
