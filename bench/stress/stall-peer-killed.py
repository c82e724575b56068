#!/usr/bin/env python3
"""A survivor kept off the CPU as its peer dies.

Runs comm_tcp_test RUNS times (default 4). In each case of three ranks, once
the newest rank has joined (it holds >= 4 sockets: its TCP streams) and sleeps
(test_peer_killed's 50 ms before it SIGKILLs itself), SIGSTOPs the two older
ranks for 2.5 s -- longer than strata_launch's default 2 s grace -- so they
are off the CPU as their peer dies. A test that gives its survivors less
grace than their contract (2 x the call's deadline) then fails
test_peer_killed: the launcher SIGKILLs them before they report. The stop
does not land in every run (a 1 ms poll against a 50 ms window, slower on a
loaded machine). Prints, per run, when it stopped ranks and the
test_peer_killed verdict.

    python3 bench/stress/stall-peer-killed.py COMM_TCP_TEST [RUNS]

Results (main against s11-h16) are in bench/README.md, "TCP, session 11".
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return sorted(int(p) for p in f.read().split())
    except OSError:
        return []


def sockets(pid):
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
            except OSError:
                pass
    except OSError:
        pass
    return n


def wchan(pid):
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return f.read()
    except OSError:
        return ""


def one_run(binary):
    out = tempfile.TemporaryFile(mode="w+")
    test = subprocess.Popen([binary], stdout=out, stderr=subprocess.STDOUT)
    stopped, done = [], set()
    deadline = time.monotonic() + 150
    while test.poll() is None and time.monotonic() < deadline:
        kids = children(test.pid)
        if len(kids) == 3 and tuple(kids) not in done:
            if wchan(kids[2]) == "hrtimer_nanosleep" and sockets(kids[2]) >= 4:
                done.add(tuple(kids))
                for k in kids[:2]:
                    os.kill(k, signal.SIGSTOP)
                stopped.append(time.strftime("%H:%M:%S", time.gmtime()))
                time.sleep(2.5)
                for k in kids[:2]:
                    try:
                        os.kill(k, signal.SIGCONT)
                    except ProcessLookupError:
                        pass
        time.sleep(0.001)
    if test.poll() is None:
        test.kill()
    code = test.wait()
    out.seek(0)
    verdict = re.findall(r"^\[ +(?:OK|FAILED) +\] test_peer_killed", out.read(), re.M)
    return code, stopped, verdict[0] if verdict else "test_peer_killed: no verdict"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: stall-peer-killed.py COMM_TCP_TEST [RUNS]")
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    for i in range(1, runs + 1):
        code, stopped, verdict = one_run(sys.argv[1])
        print(f"run {i}: exit {code}; stopped at: {' '.join(stopped) or 'never'}; {verdict}",
              flush=True)


if __name__ == "__main__":
    main()
