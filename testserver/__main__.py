"""`python -m testserver --demo [--port N]`: the sandbox, the demo project on 127.0.0.1:N
(8080 by default) until Ctrl-C, to try every live command without W&B.

`python -m testserver STATE_FILE [LATENCY]`: serve a state file's projects on 127.0.0.1 (the
URL and API key on stdout's first line), LATENCY seconds added to every answer (benchmarks)."""

import argparse
import sys
from pathlib import Path

from testserver.server import sandbox, serve

if __name__ == "__main__":
    if "--demo" in sys.argv[1:]:
        parser = argparse.ArgumentParser(prog="python -m testserver")
        parser.add_argument("--demo", action="store_true", help="serve the demo project")
        parser.add_argument("--port", type=int, default=8080, help="default: 8080")
        sys.exit(sandbox(parser.parse_args().port))
    serve(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
