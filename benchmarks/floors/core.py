"""The floor of `wbmigrate plan FOLDER` over spec files: read each, `json.loads` and
`json.dumps` it (what any tool that rewrites specs must at least do).

`python core.py FOLDER`
"""

import json
import os
import sys


def main(root: str) -> None:
    for name in sorted(os.listdir(root)):
        with open(os.path.join(root, name), encoding="utf-8") as file:
            json.dumps(json.loads(file.read()))


if __name__ == "__main__":
    main(sys.argv[1])
