"""Runs one command with a time limit and cleans up after it.

Every run gets a unique marker in its environment (TERN_CONFORMANCE_RUN);
when the command ends (or is killed at its time limit) every process that
still carries the marker is killed by pid, so an MPI rank that outlived its
launcher cannot disturb the next test. Shared-memory files that appeared
in /dev/shm during the run and that no live process still uses are
removed.
"""
import os
import signal
import subprocess
import time
import uuid

MARKER = "TERN_CONFORMANCE_RUN"
_STARTED = time.monotonic()


def log(msg):
    """One progress line, with the seconds since the harness started (so a
    CI log shows where its minutes go)."""
    print(f"conformance: [{time.monotonic() - _STARTED:6.0f} s] {msg}", flush=True)


class Result:
    def __init__(self, rc, output, seconds, timed_out):
        self.rc = rc            # exit status (negative: killed by that signal)
        self.output = output    # stdout and stderr together, decoded
        self.seconds = seconds
        self.timed_out = timed_out


def _marked_pids(tag):
    """Processes whose environment carries this run's marker."""
    needle = f"{MARKER}={tag}".encode()
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    pids.append(int(name))
        except OSError:
            continue
    return pids


def _kill_marked(tag):
    for _ in range(3):
        pids = [p for p in _marked_pids(tag) if p != os.getpid()]
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.2)


def _shm_in_use():
    """Names under /dev/shm that a live process maps or holds open."""
    used = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/maps") as f:
                for line in f:
                    i = line.find("/dev/shm/")
                    if i >= 0:
                        used.add(line[i + 9:].split()[0].split("/")[0])
        except OSError:
            pass
        try:
            for fd in os.listdir(f"/proc/{name}/fd"):
                target = os.readlink(f"/proc/{name}/fd/{fd}")
                if target.startswith("/dev/shm/"):
                    used.add(target[9:].split()[0].split("/")[0])
        except OSError:
            pass
    return used


def clean_shm(baseline, older_than=2.0):
    """Removes /dev/shm entries not in baseline, not in use, and not brand new
    (a concurrent test may have created one and not mapped it yet)."""
    try:
        names = set(os.listdir("/dev/shm")) - baseline
    except OSError:
        return
    if not names:
        return
    used = _shm_in_use()
    now = time.time()
    for n in names - used:
        path = os.path.join("/dev/shm", n)
        try:
            st = os.lstat(path)
            if st.st_uid != os.getuid() or now - st.st_mtime < older_than:
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                continue
            os.unlink(path)
        except OSError:
            pass


def shm_baseline():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def run(cmd, cwd, timeout, env=None, shm_base=None, max_output=200000):
    """Runs cmd (a list) in cwd; returns a Result. Never waits past timeout
    (plus a few seconds to kill)."""
    tag = uuid.uuid4().hex
    full_env = dict(os.environ if env is None else env)
    full_env[MARKER] = tag
    start = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    except OSError as e:
        return Result(127, f"cannot start {cmd[0]}: {e}\n", 0.0, False)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        _kill_marked(tag)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out = b""
    seconds = time.monotonic() - start
    _kill_marked(tag)
    if shm_base is not None:
        clean_shm(shm_base)
    text = (out or b"").decode("utf-8", "replace")
    if len(text) > max_output:
        text = text[:max_output // 2] + "\n[... output cut ...]\n" + text[-max_output // 2:]
    return Result(proc.returncode if not timed_out else -9, text, seconds, timed_out)
