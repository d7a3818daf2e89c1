"""`python -m harness ARGS` as a real process of its own, without paying for `import anthropic` each time.

Importing the SDK takes about a second of CPU (its types are pydantic models), and the hostile-model tests start
the real client ~170 times. A zygote, one per pytest worker, imports the SDK once; each run is a child forked from it
that then does what `python -m harness` does: its own process (own pid, own process group, own exit status or
signal), its own working folder, environment, stdin, stdout and stderr, the harness package imported fresh, then
threads joined, `atexit` run and the streams flushed at its end. What it cannot give is the interpreter's own start-up
under another environment, so there is one zygote per set of what the interpreter reads at start (PYTHON*, LANG,
LC_, TZ), what a preloaded module reads when imported (ANTHROPIC_LOG) is what the zygote had, and the runs of one
zygote share its hash seed; only runs to their end go through it (`run()`), never a Popen a test talks to or
signals. A zygote whose imports print anything is not used (a real run would print it too), and a run that leaves a
process behind is an error (subprocess.run would wait for it).
"""

from __future__ import annotations

import json
import locale
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

PRELOAD = ("anthropic", "dbos")

SERVER = r"""
import atexit, json, os, runpy, signal, socket, sys, threading, time, traceback
for name in sys.argv[2:]:
    __import__(name)
conn = socket.socket(fileno=int(sys.argv[1]))
requests = conn.makefile("r", encoding="utf-8")
conn.sendall(b"ready\n")


def child(req):
    requests.close()
    conn.close()
    os.setpgid(0, 0)
    for fd, path, flags in ((0, req["stdin"], os.O_RDONLY), (1, req["stdout"], os.O_WRONLY),
                            (2, req["stderr"], os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    time.tzset()
    sys.argv = ["-m", *req["args"]]
    sys.orig_argv = [sys.executable, "-m", req["module"], *req["args"]]
    sys.path[0] = os.getcwd()
    code, interrupted = 0, False
    try:
        runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
    except SystemExit as end:
        if end.code is None:
            code = 0
        elif isinstance(end.code, int):
            code = end.code
        else:
            print(end.code, file=sys.stderr)
            code = 1
    except BaseException as err:
        sys.excepthook(type(err), err, err.__traceback__)
        code, interrupted = 1, isinstance(err, KeyboardInterrupt)
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        if interrupted:  # as Python does after an uncaught Ctrl-C: end by the signal itself
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        os._exit(code & 0xFF)


for line in requests:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        try:
            child(req)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(70)
    conn.sendall((json.dumps({"pid": pid}) + "\n").encode())
    _, status = os.waitpid(pid, 0)
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    left = True
    for _ in range(100):  # a process of its group still there (one that just ended is gone within moments)
        try:
            os.killpg(pid, 0)
        except OSError:
            left = False
            break
        time.sleep(0.01)
    conn.sendall((json.dumps({"returncode": code, "left": left}) + "\n").encode())
"""

# What the interpreter itself reads from the environment at start: a run that sets these differently needs its own.
START_UP = ("PYTHON", "LANG", "LC_", "TZ")
# At most this many zygotes per worker (each holds the SDK and DBOS, ~100 MB): beyond it, idle ones end.
MOST = 6
READY_S = 300  # for the imports, on a machine as busy as two copies of the suite make it


class Zygote:
    def __init__(self, env: dict) -> None:
        self.env = dict(env)
        self.busy = threading.Lock()
        ours, theirs = socket.socketpair()
        self.said = tempfile.TemporaryFile()  # noqa: SIM115 (open as long as the zygote)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(theirs.fileno()), *PRELOAD],
            stdin=subprocess.DEVNULL,
            stdout=self.said,
            stderr=self.said,
            pass_fds=(theirs.fileno(),),
            env=self.env,
        )
        theirs.close()
        self.conn = ours
        self.replies = ours.makefile("r", encoding="utf-8")
        # Usable once its imports are done, if they printed nothing (a real run would print that too, every time).
        ready = self.reply(READY_S) == "ready\n"
        self.noisy = ready and os.fstat(self.said.fileno()).st_size > 0
        if not ready or self.noisy:
            self.close()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def reply(self, timeout: float) -> str:
        """The zygote's next line, or "" when it has none within timeout seconds (or is gone)."""
        self.conn.settimeout(timeout)
        try:
            return self.replies.readline()
        except OSError:  # TimeoutError included
            return ""
        finally:
            self.conn.settimeout(None)

    def run(self, module_args: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
        args = [sys.executable, *module_args]
        with tempfile.TemporaryDirectory(prefix="zygote-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            out.touch()
            err.touch()
            request = {"module": module_args[1], "args": module_args[2:], "env": env, "cwd": os.getcwd(),
                       "stdin": os.devnull, "stdout": str(out), "stderr": str(err)}  # fmt: skip
            try:
                self.conn.sendall((json.dumps(request) + "\n").encode())
                pid = json.loads(self.reply(READY_S))["pid"]
            except (OSError, ValueError):  # the zygote is gone: this run the ordinary way
                self.close()
                return subprocess.run(
                    args, capture_output=True, text=True, env=env, timeout=timeout, check=False
                )
            line = self.reply(timeout)
            if not line:  # the deadline passed (or the zygote died): end the run, and this zygote with it
                end_group(pid)
                self.close()
                raise subprocess.TimeoutExpired(args, timeout, text(out), text(err))
            ended = json.loads(line)
            if ended["left"]:  # subprocess.run would wait for them (they hold its pipes): say so instead
                end_group(pid)
                raise RuntimeError(
                    f"{args} left processes behind; run it with subprocess to see what they do"
                )
            return subprocess.CompletedProcess(args, ended["returncode"], text(out), text(err))

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.replies.close()
        self.conn.close()
        self.said.close()


def end_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass


def text(path: Path) -> str:
    """What subprocess.run(text=True) would have read: the locale's encoding, universal newlines."""
    data = path.read_bytes()
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


# This worker's zygotes, by the start-up environment they were started with; a zygote serves one run at a time, so runs
# at the same time (a test's threads) get one each. Each is started at first need and ends when the worker does (its
# socket closed), or earlier to keep at most MOST. One whose imports printed something stays as a mark: runs with its
# environment start the ordinary way.
_zygotes: list[tuple[tuple, Zygote]] = []
_choosing = threading.Lock()


def run(argv: list[str], env: dict, timeout: float) -> subprocess.CompletedProcess:
    """subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout), through one of this worker's
    zygotes when argv is `python -m MODULE ...`."""
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith(START_UP)))
    chosen = None
    with _choosing:
        mine = [z for k, z in _zygotes if k == key]
        if argv[:2] == [sys.executable, "-m"] and not any(z.noisy for z in mine):
            chosen = next((z for z in mine if z.alive() and z.busy.acquire(blocking=False)), None)
            if chosen is None:
                for pair in [p for p in _zygotes if not p[1].alive() and not p[1].noisy]:
                    _zygotes.remove(pair)
                for pair in [p for p in _zygotes if p[1].alive()][: max(0, len(_zygotes) + 1 - MOST)]:
                    if pair[1].busy.acquire(blocking=False):  # the oldest idle ones make room
                        _zygotes.remove(pair)
                        pair[1].close()
                chosen = Zygote(
                    {k: v for k, v in os.environ.items() if not k.startswith(START_UP)} | dict(key)
                )
                chosen.busy.acquire()
                _zygotes.append((key, chosen))
    if chosen is None or not chosen.alive():
        if chosen is not None:
            chosen.busy.release()
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    try:
        return chosen.run(argv[1:], env, timeout)
    finally:
        chosen.busy.release()
