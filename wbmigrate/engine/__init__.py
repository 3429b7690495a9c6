"""The pure rewrite engine: walking W&B specs, per-field rules, the boundary annotation."""
