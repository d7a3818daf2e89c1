"""Every process a learner's code starts ends with the check, and the check says so when it had to end one.

A check starts its child (a learner's script, or the fix runner) in a session of its own, with its output going to
files, not pipes: a background child that keeps stdout open cannot make a finished script look endless. The child
runs under a subreaper (Linux prctl PR_SET_CHILD_SUBREAPER), so even a daemon that double-forks into a session of
its own comes back to it as an orphan; when the script is done, every descendant still alive is killed and
counted. Elsewhere the session's process group is killed (a double-forked daemon could then escape).

Run as a script, `python harness/exercises/jail.py TIME_LIMIT RESULT_JSON -- ARGV...` (it needs only the standard
library, so it starts without importing the package), it is that subreaper.
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The limits the notebooks state (a test keeps the notebooks' text and these numbers the same).
TIME_LIMIT_S = 5  # each run of a learner's function (one situation of the fix check)
SCRIPT_TIME_LIMIT_S = 10  # each run of a learner's script as a process (CPU seconds)
OUTPUT_LIMIT = 2000  # characters of a learner's output that a check shows; the rest is counted and dropped
# A script whose processes stay this many seconds without a CPU tick, and none starts or ends, waits for nothing.
IDLE_LIMIT_S = 10


SKIPPED = {"__pycache__", "node_modules", "_work", "_build", "site-packages"}
# What the repo's own tools rebuild while a check may run (.gitignore: the site, the browser tests' screenshots, the
# default work folder): another process changing them is not the learner's code.
REBUILT = ("site", "test-artifacts", "harness-work")
WATCH_DEPTH, WATCH_MAX = 3, 20000


def repo_root() -> Path:
    import harness

    return Path(harness.__file__).resolve().parents[1]


def watched_folders() -> list[Path]:
    """The folders a learner's code has no business changing: the home folder, the notebook's folder, the repo."""
    return [Path.home(), Path.cwd(), repo_root()]


def snapshot(folders: list[Path]) -> dict:
    """Every file and folder (not hidden, not a cache) a few levels down, with its size and time of change; a folder
    too large to list is left out rather than half-watched."""
    seen: dict = {}
    rebuilt = {str(repo_root() / name) for name in REBUILT}
    for root in dict.fromkeys(f.resolve() for f in folders):
        if root == Path(root.anchor) or root == Path(tempfile.gettempdir()).resolve():
            continue
        found: dict = {}
        frontier = [(root, 0)]
        while frontier and len(found) <= WATCH_MAX:
            folder, depth = frontier.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in SKIPPED or entry.path in rebuilt:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                found[entry.path] = (is_dir, None if is_dir else (st.st_size, st.st_mtime_ns))
                if is_dir and depth + 1 < WATCH_DEPTH:
                    frontier.append((Path(entry.path), depth + 1))
        if len(found) <= WATCH_MAX:
            seen.update(found)
    return seen


def outside_changes(before: dict, after: dict) -> tuple[list[str], list[str]]:
    """What changed between two snapshots (a notebook saving itself is not a change), as the check lists it: the
    deleted paths, then the created or changed ones, each sorted."""
    from .. import texts

    words = texts.FIX_OUTSIDE_CHANGES
    deleted = [words["deleted"].format(path=p) for p in before if p not in after]
    written = [words["created"].format(path=p) for p in after if p not in before]
    written += [
        words["changed"].format(path=p)
        for p, v in after.items()
        if p in before and before[p] != v and not p.endswith(".ipynb") and not v[0]
    ]
    return sorted(deleted), sorted(written)


def outside(verdict, before: dict) -> None:
    """✗ when the learner's code deleted or wrote files the check watches (the harness never deletes what it did not
    create, and a judge never blesses code that does)."""
    from .. import texts

    deleted, written = outside_changes(before, snapshot(watched_folders()))
    if deleted:  # nothing but the learner's code deletes there while a check runs
        verdict.fail(texts.JUDGE_OUTSIDE_DELETED.format(count=len(deleted), first=listing(deleted)))
    if written:  # an editor saving a file is a write too: said, never held against the answer
        verdict.notes.append(texts.JUDGE_OUTSIDE_WRITTEN.format(count=len(written), first=listing(written)))


def listing(items: list[str], shown: int = 3) -> str:
    """The first few items, joined, and how many more there are."""
    from .. import texts

    more = texts.LIST_MORE.format(count=len(items) - shown) if len(items) > shown else ""
    return texts.LIST_JOIN.join(items[:shown]) + more


def become_subreaper() -> bool:
    """Orphaned descendants of this process come back to it (Linux); False where that is not possible."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def living() -> dict[int, list[str]]:
    """Every living (not zombie) process, with the fields of its /proc stat after the name (state, parent, group,
    session, ...)."""
    found: dict[int, list[str]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 3 and fields[0] not in ("Z", "X"):
            found[int(name)] = fields
    return found


def activity(root: int) -> dict[int, tuple[str, str]] | None:
    """Every living process below root with its CPU time so far (user, system): when nothing in it changes, none of
    them ran, started or ended. None where there is no /proc to tell (macOS): then only the clock limit stops it."""
    if not os.path.isdir("/proc/self"):
        return None
    procs = living()
    return {pid: (procs[pid][11], procs[pid][12]) for pid in descendants(root, procs) if len(procs[pid]) > 12}


def descendants(root: int, procs: dict | None = None) -> list[int]:
    """Every living process below root."""
    parent = {pid: int(fields[1]) for pid, fields in (procs or living()).items()}
    found: list[int] = []
    frontier = [root]
    while frontier:
        p = frontier.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        found += kids
        frontier += kids
    return found


def reap() -> None:
    """Collect every finished child of this process (killed leftovers come back here as zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_leftovers(root: int | None = None) -> int:
    """SIGKILL every descendant of root (this process) until none is left; how many there were."""
    root = os.getpid() if root is None else root
    return kill_until_none(lambda: descendants(root), reap if root == os.getpid() else None)


def end_session(sid: int) -> int:
    """SIGKILL every process of the session sid (a check's runner and whatever its children became, even orphaned
    after the runner was killed) until none is left; how many there were."""
    return kill_until_none(lambda: session_members(sid), None)


def session_members(sid: int) -> list[int]:
    """The living processes of session sid."""
    return [pid for pid, fields in living().items() if int(fields[3]) == sid]


def kill_until_none(alive_now, reap_them) -> int:
    """SIGKILL what alive_now() lists, again and again (a process may start another meanwhile), until it lists none;
    how many processes were killed. reap_them collects the killed ones when they are this process's children."""
    ended: set[int] = set()
    for _ in range(100):
        alive = alive_now()
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        ended.update(alive)
        time.sleep(0.01)
        if reap_them is not None:
            reap_them()
    return len(ended)


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Finished:
    """One jailed run: return code (-9 when killed), its output as text (cut), and what had to be ended."""

    def __init__(
        self,
        argv,
        returncode,
        stdout,
        stderr,
        timed_out,
        cut,
        output_bytes,
        leftovers,
        ended=None,
        idle=False,
    ) -> None:
        self.args, self.returncode, self.stdout, self.stderr = argv, returncode, stdout, stderr
        self.timed_out, self.cut, self.output_bytes, self.leftovers = timed_out, cut, output_bytes, leftovers
        self.idle = idle  # stopped because nothing of it ran for IDLE_LIMIT_S (timed_out is then True too)
        self.ended_check = ended  # the signal that ended the check's own wrapper (sent by the learner's code)


def _read_cut(path: Path, max_chars: int | None) -> tuple[str, int]:
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            data = f.read(None if max_chars is None else max_chars * 4)
    except OSError:
        return "", 0
    text = data.decode("utf-8", errors="replace")
    return (text if max_chars is None else text[:max_chars]), size


def run_jailed(
    argv: list[str],
    *,
    env: dict | None = None,
    cwd: Path | None = None,
    timeout: float = SCRIPT_TIME_LIMIT_S,
    max_chars: int | None = OUTPUT_LIMIT,
) -> Finished:
    """Run argv under the subreaper in a session of its own: stdin empty, output into files (kept up to max_chars a
    stream), stopped at the time limit; nothing it started outlives the call (Finished.leftovers counts them)."""
    from ..lab.process import child_env

    with tempfile.TemporaryDirectory(prefix="harness-jail-") as tmp:
        out, err, result = Path(tmp) / "out", Path(tmp) / "err", Path(tmp) / "result.json"
        with open(out, "wb") as o, open(err, "wb") as e:
            wrapper = subprocess.Popen(
                [
                    sys.executable,
                    "-W",
                    "ignore::RuntimeWarning",
                    str(Path(__file__).resolve()),  # as a script (standard library only)
                    str(timeout),
                    str(result),
                    "--",
                    *argv,
                ],
                stdin=subprocess.DEVNULL,
                stdout=o,
                stderr=e,
                env=child_env(env),
                cwd=cwd,
                start_new_session=True,
            )
        stuck = False
        try:
            wrapper.wait(
                timeout=wall_limit(timeout) + 30
            )  # the wrapper keeps the time limit; this only stops a stuck one
        except subprocess.TimeoutExpired:
            stuck = True
        finally:
            kill_group(wrapper.pid)  # the wrapper's own session: whatever is left in it
            wrapper.wait()
            try:  # the script's session, even when the script killed the wrapper and was orphaned
                end_session(int((Path(tmp) / "child.pid").read_text(encoding="utf-8")))
            except (OSError, ValueError):
                pass
        try:
            facts = json.loads(result.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            ended = signal.SIGSTOP if stuck else -wrapper.returncode if wrapper.returncode < 0 else None
            facts = {"returncode": wrapper.returncode, "timed_out": not ended, "leftovers": 0, "ended": ended}
        stdout, n_out = _read_cut(out, max_chars)
        stderr, n_err = _read_cut(err, max_chars)
    total = n_out + n_err
    cut = max_chars is not None and (len(stdout.encode()) < n_out or len(stderr.encode()) < n_err)
    return Finished(
        argv,
        facts["returncode"],
        stdout,
        stderr,
        facts["timed_out"],
        cut,
        total,
        facts["leftovers"],
        signal.Signals(facts["ended"]).name if facts.get("ended") else None,
        facts.get("idle", False),
    )


def wall_limit(time_limit: float) -> float:
    """How long a run may take on the clock when its limit is on CPU time: a busy machine never makes a right answer
    look endless, and a process that keeps waking up without finishing is still stopped (one that sleeps and does
    nothing at all is stopped sooner, after IDLE_LIMIT_S)."""
    return time_limit * 6 + 10


def _cpu_limit(seconds: int):
    import resource  # (not in the browser edition, which runs no script as a process)

    return lambda: resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def _main(args: list[str]) -> int:
    """The subreaper: run ARGV, stop it at the time limit (CPU time, wall_limit on the clock), end every leftover,
    write what happened as JSON."""
    limit, result, argv = float(args[0]), Path(args[1]), args[3:]
    become_subreaper()
    cpu = math.ceil(limit)
    child = subprocess.Popen(  # (this process runs no threads)
        argv,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_cpu_limit(cpu),  # noqa: PLW1509
    )
    result.with_name("child.pid").write_text(str(child.pid), encoding="utf-8")
    timed_out = idle = False
    deadline, seen, still_since = time.monotonic() + wall_limit(limit), None, time.monotonic()
    while True:
        try:
            returncode = child.wait(timeout=1)
            break
        except subprocess.TimeoutExpired:
            pass
        now, seen_now = time.monotonic(), activity(os.getpid())
        if seen_now != seen:
            seen, still_since = seen_now, now
        idle = seen is not None and now - still_since >= IDLE_LIMIT_S
        if idle or now >= deadline:
            timed_out = True
            kill_group(child.pid)
            returncode = child.wait()
            break
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL) and used.ru_utime + used.ru_stime >= cpu - 0.5:
        timed_out = True  # its CPU time ran out (SIGXCPU, or SIGKILL at the hard limit when it ignored that)
    leftovers = end_leftovers()
    result.write_text(
        json.dumps({"returncode": returncode, "timed_out": timed_out, "idle": idle, "leftovers": leftovers}),
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
