"""Markdown: prose, and code blocks read as the language they are written in.

Prose is for people: an old name in it is a note (the residual pass gives it). A fenced block
(```toml, ~~~python, or none: shell) or an indented one is checked by the checker of its
language on its own text, so a TOML snippet in a README is fixed as precisely as a TOML file;
its findings are then moved to where the block is in the file. A block that does not parse as
its language (a fragment, a doctest) is no error of the Markdown file: its old names go to the
residual pass, for a person to review.

A block inside a list item or a block quote is read without its indentation and `>` markers,
so Python and YAML in it parse; a fix puts them back on every line it writes.

Finding the blocks is `markdown_blocks`; moving a block's findings and fixes into the file is
`snippets`, shared with notebooks, whose cells are texts inside a JSON document.
"""

from __future__ import annotations

from collections.abc import Callable

from wbmigrate.check.documents import check_json, check_yaml, minimal
from wbmigrate.check.flags import check_flags
from wbmigrate.check.markdown_blocks import Block, code_blocks
from wbmigrate.check.model import Checked, Finding, Place, Rule, apply_fixes
from wbmigrate.check.places import PROSE
from wbmigrate.check.python_code import check_python
from wbmigrate.check.snippets import Fix, Part, constant, lift, no_fix
from wbmigrate.check.targets import Targets
from wbmigrate.check.toml_config import check_toml
from wbmigrate.edit.replacement import Replacement

Checker = Callable[[str, str, Targets], Checked]

# info-string word -> (the language's name, its checkers in the order their fixes are made)
LANGUAGES: dict[str, tuple[str, tuple[Checker, ...]]] = {
    "toml": ("TOML", (check_toml,)),
    "python": ("Python", (check_python,)),
    "py": ("Python", (check_python,)),
    "sh": ("shell", (check_flags,)),
    "bash": ("shell", (check_flags,)),
    "shell": ("shell", (check_flags,)),
    "console": ("shell", (check_flags,)),
    "zsh": ("shell", (check_flags,)),
    "": ("shell", (check_flags,)),  # an unlabelled block: most often commands
    "yaml": ("YAML", (check_yaml, check_flags)),  # CI steps run commands: flags, as in .yml files
    "yml": ("YAML", (check_yaml, check_flags)),
    "json": ("JSON", (check_json,)),
}


def check_markdown(label: str, text: str, targets: Targets) -> Checked:
    """Findings of the code blocks, at their place in the file; prose is left to the
    residual pass, as notes."""
    parts = [
        _block_part(label, block, targets)
        for block in code_blocks(text)
        if targets.may_contain(block.text)
    ]
    return lift(label, text, parts, PROSE)


def _block_part(label: str, block: Block, targets: Targets) -> Part:
    known = LANGUAGES.get(block.language)
    fix: Fix
    shown = f"a `{block.language}` code block" if block.language else "a code block"
    if known is None:
        checked, fix = Checked(place=constant(Place(shown))), no_fix
    else:
        name, checkers = known
        checked, fix = _check_block(label, block.text, targets, checkers)
        if any(f.rule is Rule.PARSE_ERROR for f in checked.findings):
            broken = Place(f"{shown} that is not valid {name}")
            checked, fix = Checked(place=constant(broken)), no_fix
    inner_place = checked.place or constant(Place(shown))

    def place(offset: int) -> Place:
        inner = block.inner(offset)
        return PROSE if inner is None else inner_place(inner)

    def move(edit: Replacement) -> Replacement:
        return Replacement(
            block.outer(edit.start), block.outer(edit.end), block.fix_lines(edit.text)
        )

    def encode(new: str) -> tuple[Replacement, ...]:
        return (move(minimal(block.text, new)[0]),)

    start, end = block.region
    return Part(start, end, block.text, checked, block.outer, encode, move, fix, place)


def _check_block(
    label: str, text: str, targets: Targets, checkers: tuple[Checker, ...]
) -> tuple[Checked, Fix]:
    """The block's findings from each of its language's checkers, and the fix that makes the
    chosen ones with each checker in turn, as `check` fixes a file."""
    results = [checker(label, text, targets) for checker in checkers]
    merged = Checked(
        [f for r in results for f in r.findings],
        seen=[s for r in results for s in r.seen],
        place=results[0].place,
    )

    def fix(chosen: list[Finding]) -> str | None:
        current = text
        for checker, checked in zip(checkers, results, strict=True):
            picked = [f for f in checked.findings if f in chosen]
            if not picked:
                continue
            if current != text:  # an earlier checker changed the text: find them again there
                checked = checker(label, current, targets)
                picked = same_findings(picked, checked.findings)
            new = checked.fix_text(picked) if checked.fix_text else apply_fixes(current, picked)
            current = new if new is not None else current
        return current

    return merged, fix


def same_findings(wanted: list[Finding], found: list[Finding]) -> list[Finding]:
    """The findings of `found` that are `wanted` ones, by rule, message and order, in a text
    another checker's fixes have moved."""
    left: dict[tuple[Rule, str], int] = {}
    for finding in wanted:
        left[finding.rule, finding.message] = left.get((finding.rule, finding.message), 0) + 1
    picked = []
    for finding in found:
        if left.get((finding.rule, finding.message), 0) > 0:
            left[finding.rule, finding.message] -= 1
            picked.append(finding)
    return picked
