"""A live W&B project: the GraphQL client (`client`), its objects (`objects`), the pipeline
from listing to plan (`project`), writes with backups (`apply`, `backup`), saved plans
(`planfile`) and exports (`export`). Everything that talks to W&B lives here."""

DEFAULT_BASE_URL = "https://api.forge.coreweave.com"  # wandb 0.31's default host
