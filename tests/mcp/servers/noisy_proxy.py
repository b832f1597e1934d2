"""Runs an MCP server (the arguments) and copies its stdout to ours with a line of garbage
before every message — a server whose libraries print to stdout. Raw stdio on purpose: the
messages are copied byte for byte, nothing is parsed or written as JSON-RPC here.
"""

import subprocess
import sys
import threading

child = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pump_in() -> None:
    assert child.stdin is not None
    for line in sys.stdin.buffer:
        child.stdin.write(line)
        child.stdin.flush()
    child.stdin.close()


threading.Thread(target=pump_in, daemon=True).start()
assert child.stdout is not None
for line in child.stdout:
    sys.stdout.buffer.write(b"DEBUG: handling a request\n" + line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
