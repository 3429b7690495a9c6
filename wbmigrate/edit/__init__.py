"""Editing documents as data and as text: edits (`edits`), applied to JSON text byte for byte
(`json`) and to YAML text (`yaml`, over `located_yaml`'s node positions)."""
