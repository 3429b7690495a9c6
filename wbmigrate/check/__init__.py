"""`wbmigrate check`: old metric names and config keys in dashboards and configs kept as code."""
