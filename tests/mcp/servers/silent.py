"""A "server" that never finishes ``initialize``: it reads its stdin and answers nothing.

Options: ``--garbage`` prints lines that are not JSON-RPC on stdout first (a server that logs
to the wrong stream); ``--pidfile PATH`` writes its pid there; ``--ignore-eof`` keeps running
after its stdin closes (a well-behaved server exits); ``--ignore-term`` ignores SIGTERM, so
only SIGKILL ends it. Raw stdio on purpose: no SDK.
"""

import os
import signal
import sys
import time

args = sys.argv[1:]
if "--pidfile" in args:
    with open(args[args.index("--pidfile") + 1], "w") as fh:
        fh.write(str(os.getpid()))
if "--ignore-term" in args:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--garbage" in args:
    for i in range(3):
        print(f"INFO starting up, step {i}", flush=True)
while True:
    line = sys.stdin.readline()
    if not line:
        if "--ignore-eof" not in args:
            sys.exit(0)
        time.sleep(3600)
