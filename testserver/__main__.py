"""`python -m testserver STATE_FILE [LATENCY]`: serve a state file's projects on 127.0.0.1 (the
URL and API key on stdout's first line), LATENCY seconds added to every answer."""

import sys
from pathlib import Path

from testserver.server import serve

if __name__ == "__main__":
    serve(Path(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 0.0)
