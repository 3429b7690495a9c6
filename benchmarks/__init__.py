"""Ratio benchmarks: wbmigrate side by side with the floor of the work it cannot avoid."""
