"""The floor of `wbmigrate check TREE`: walk the tree, read every file, parse the JSON ones.

`python check.py TREE`
"""

import json
import os
import sys


def main(root: str) -> None:
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                text = file.read()
            if name.endswith(".json"):
                json.loads(text)


if __name__ == "__main__":
    main(sys.argv[1])
