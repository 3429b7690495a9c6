"""The other side of each benchmark, each a small script run as a process of its own
(`python benchmarks/floors/NAME.py ...`), interpreter start included, as wbmigrate is run:
the floors of the unavoidable work, and the loop users write today. None imports wbmigrate."""
