"""Command-line flags, in Markdown only inside code fences."""

from __future__ import annotations

from wbmigrate import find_mapping
from wbmigrate.check.flags import check_flags
from wbmigrate.check.targets import Targets
from wbmigrate.engine.model import Options

TARGETS = Targets(find_mapping("prime-rl").migration(), Options())


def test_flags_in_markdown_only_inside_code_fences():
    text = (
        "Use `--max-off-policy-steps` wisely.\n\n```bash\nrun --max-off-policy-steps 3\n```\n"
        "\n    indented --max-off-policy-steps\n"
    )
    findings = check_flags("r.md", text, TARGETS, markdown=True).findings
    assert [(f.line, f.column) for f in findings] == [(4, 5)]
