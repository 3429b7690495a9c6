"""Which files `check` reads: the discovery `plan DIR` shares (`wbmigrate.discover`), named here
for the checks of each file kind."""

from __future__ import annotations

from wbmigrate.discover import SKIPPED_FOLDERS, Refusal, find_files, is_binary, tell_stderr

__all__ = ["SKIPPED_FOLDERS", "Refusal", "find_files", "is_binary", "tell_stderr"]
