"""`python -m wbmigrate`."""

from wbmigrate.cli import main

main()
