"""A draft mapping from what code logged before and after each commit (`mappings infer`), as data.

`pair` turns one commit's removed and added keys into rename candidates: an alias that keeps the
old name first, then the one key replaced in one function, then the rest ranked by name
similarity and place. `draft` makes the steps a valid mapping (no name reused, dates in order);
`mapping.draft_file` writes it. Reading git is elsewhere.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

MIN_RATIO = 0.6  # name similarity below which two keys of different places are not paired
NAMES_DIFFER = "names differ"  # the review of one key replaced by one unlike it in one function


@dataclass(frozen=True)
class Place:
    """Where a key is: file, line, the enclosing function or class, and the line of code."""

    file: str
    line: int
    scope: str
    code: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


Places = dict[str, Place]  # keys a commit removed (or added), each with where it was


@dataclass(frozen=True)
class Pair:
    """A rename candidate, with the evidence for it."""

    old: str
    new: str
    before: Place
    after: Place
    review: str = ""  # why a person must check it; empty for one key replaced in one place
    deprecation: bool = False  # the old name still validates (a config alias)


@dataclass(frozen=True)
class Gone:
    name: str
    before: Place


@dataclass(frozen=True)
class Found:
    """One commit's changes to one kind of key."""

    renamed: tuple[Pair, ...] = ()
    removed: tuple[Gone, ...] = ()
    added: tuple[str, ...] = ()


@dataclass(frozen=True)
class InferredStep:
    """One commit of the main line and what it changed."""

    rev: str
    pull: int | None
    date: dt.date
    subject: str
    metrics: Found = Found()
    config: Found = Found()
    patterns: tuple[tuple[str, str, Place], ...] = ()  # ("removed"|"added", f-string, place)
    notes: tuple[str, ...] = ()  # candidates left out of the mapping, and why
    version: str = ""
    # (set by `draft`) names an earlier step of the draft retired that this one logs again,
    # each with the version that retired it
    live_again: tuple[str, ...] = ()
    config_live_again: tuple[str, ...] = ()
    retired_by: dict[str, str] = field(default_factory=dict)

    @property
    def entries(self) -> bool:
        """Something for the mapping itself, not only for review."""
        found = self.metrics.renamed or self.metrics.removed or self.config.renamed
        return bool(found or self.live_again or self.config_live_again)

    @property
    def changed(self) -> bool:
        kinds = (self.metrics, self.config)
        return any(k.renamed or k.removed for k in kinds) or bool(self.patterns)


def pair(
    removed: Places, added: Places, aliases: dict[str, tuple[str, ...]] | None = None
) -> Found:
    """Pair removed and added keys of one commit into renames; the rest are removed or added.
    `aliases`: an added key's old names that still validate (a config field's aliases)."""
    removed, added = dict(removed), dict(added)
    pairs = []
    for new, olds in (aliases or {}).items():
        old = next((k for k in removed if k.rpartition(".")[2] in olds), None)
        if old is not None:  # one old name per field: an alias may name several
            pairs.append(Pair(old, new, removed.pop(old), added.pop(new), deprecation=True))
    for heuristic in (_one_to_one, _same_line, ranked):  # the surest first
        pairs += heuristic(removed, added)
    gone = tuple(Gone(name, place) for name, place in removed.items())
    return Found(tuple(pairs), gone, tuple(added))


def _one_to_one(removed: Places, added: Places) -> list[Pair]:
    """A key replaced by one other in the same function of the same file."""
    pairs = []
    # in the order of `removed`: a set's order, and so the draft's, changed from run to run
    for where in dict.fromkeys((p.file, p.scope) for p in removed.values()):
        olds = [k for k, p in removed.items() if (p.file, p.scope) == where]
        news = [k for k, p in added.items() if (p.file, p.scope) == where]
        if len(olds) == len(news) == 1:
            ratio = similarity(olds[0], news[0])
            review = "" if ratio >= MIN_RATIO else f"{NAMES_DIFFER} (similarity {ratio:.2f})"
            pairs.append(Pair(olds[0], news[0], removed.pop(olds[0]), added.pop(news[0]), review))
    return pairs


def _same_line(removed: Places, added: Places) -> list[Pair]:
    """A key whose line of code is the same but for the key (`"a/x": n,` -> `"b/y": n,`, or
    `self.n`): the value says which new key took which old one's place."""
    pairs = []
    for old, before in list(removed.items()):
        rest = _rest(before.code, old)
        found = [n for n, a in added.items() if _alike(_rest(a.code, n), rest)]
        # `self.n` is `n`: one line may end the other; code beside two old keys says neither
        alike = [o for o, b in removed.items() if _alike(_rest(b.code, o), rest)]
        if len(found) == 1 and alike == [old]:
            review = f"one of several changes; paired by the code beside it ({rest.strip()})"
            pairs.append(Pair(old, found[0], removed.pop(old), added.pop(found[0]), review))
    return pairs


def _rest(code: str, key: str) -> str:
    """The line after the key's closing quote and the `:` or `=` that follows it."""
    at = code.find(key)
    return code[at + len(key) + 1 :].lstrip(" :=]") if at >= 0 else ""


def _alike(one: str, other: str) -> bool:
    """The same value, when each says something, names no other key and ends on its line (a
    line that ends in a bracket, `Annotated[`, goes on)."""
    if any(len(r.strip(" ,)]}")) < 3 or "'" in r or '"' in r for r in (one, other)):
        return False
    if any(r.rstrip().endswith(("(", "[", "{")) for r in (one, other)):
        return False
    return one.endswith(other) or other.endswith(one)


def ranked(removed: Places, added: Places) -> list[Pair]:
    """Pairs of similar names, best first (then same function, then same file); each pair
    taken out of `removed` and `added`."""
    scored = []
    for old, before in removed.items():
        for new, after in added.items():
            ratio = similarity(old, new)
            if ratio >= MIN_RATIO:
                same = (before.file, before.scope) == (after.file, after.scope)
                near = 0.1 * same + 0.05 * (before.file == after.file)
                scored.append((ratio + near, ratio, old, new))
    pairs: list[Pair] = []
    tied: set[str] = set()
    for score, ratio, old, new in sorted(scored, key=lambda s: (-s[0], s[2], s[3])):
        if old not in removed or new not in added or {old, new} & tied:
            continue
        # `old` as like another key still unpaired as `new`, or `new` as like another
        # (`filters`, `pre_batch_filters`, `post_batch_filters`): the alphabet is no evidence,
        # so neither is paired (nor with a worse one later)
        if any(
            s == score and (o == old) != (n == new) and o in removed and n in added
            for s, _, o, n in scored
        ):
            tied |= {old, new}
            continue
        before, after = removed.pop(old), added.pop(new)
        where = f"in {before.scope}" if before.scope else f"in {before.file}"
        if before.file != after.file:
            where = f"moved from {before} to {after}"
        elif before.scope != after.scope:
            where = f"moved from {before.scope or 'module'} to {after.scope or 'module'}"
        review = f"one of several changes {where}; paired by name similarity ({ratio:.2f})"
        pairs.append(Pair(old, new, before, after, review))
    return pairs


def similarity(old: str, new: str) -> float:
    """Name similarity; for dotted config paths the last part weighs half (a field moved to
    another section keeps its name), and all within one section (the prefix two of its fields
    share says nothing about them)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if "/" in old + new:  # quick_ratio bounds ratio from above, fast
        return matcher.ratio() if matcher.quick_ratio() >= MIN_RATIO else 0.0
    old_section, _, old_leaf = old.rpartition(".")
    new_section, _, new_leaf = new.rpartition(".")
    leaf = difflib.SequenceMatcher(None, old_leaf, new_leaf).ratio()
    if _qualified(old_leaf, new_leaf):  # `filters` -> `pre_batch_filters`
        leaf = max(leaf, MIN_RATIO)
    return leaf if old_section == new_section else (matcher.ratio() + leaf) / 2


def _qualified(old: str, new: str) -> bool:
    """A config field's name is the other's with words put before or after it."""
    short, long = sorted((old.split("_"), new.split("_")), key=len)
    return len(short) < len(long) and short in (long[: len(short)], long[-len(short) :])


# --- the draft mapping ------------------------------------------------------------------------


class _Used(dict[str, str]):
    """Names earlier steps renamed away or removed, each with its version: the format forbids
    using them again."""

    def clash(self, *names: str) -> str:
        return next((f"{n} (changed in {self[n]})" for n in names if n in self), "")

    def back(self, found: Found) -> dict[str, str]:
        """The retired names `found` logs again (added, or renamed into), each with the version
        that retired it; they are live from now on."""
        logged = [*found.added, *(p.new for p in found.renamed)]
        return {name: self.pop(name) for name in sorted(set(logged) & self.keys())}


def draft(steps: Iterable[InferredStep]) -> list[InferredStep]:
    """The steps that changed something, each with a unique version and a date not before the
    previous step's. A name an earlier step retired that a step logs again (added, or renamed
    into) is live again from that step; every other entry that would reuse a retired name is
    left out (as a note): the mapping validates."""
    kept: list[InferredStep] = []
    used, config_used = _Used(), _Used()
    for step in steps:
        live, config_live = used.back(step.metrics), config_used.back(step.config)
        if not (step.changed or live or config_live):
            continue
        date = max([step.date, *(s.date for s in kept[-1:])])
        version = date.strftime("%Y.%m.%d")
        if any(s.version == version for s in kept):
            version += f"-{step.pull or step.rev[:9]}"
        notes: list[str] = []
        metrics = _admit(step.metrics, used, version, notes)
        # a config field removed is a remark, never an entry: it retires nothing
        config = _admit(replace(step.config, removed=()), config_used, version, notes)
        config = replace(config, removed=step.config.removed)
        kept.append(
            replace(
                step,
                date=date,
                version=version,
                metrics=metrics,
                config=config,
                notes=step.notes + tuple(notes),
                live_again=tuple(live),
                config_live_again=tuple(config_live),
                retired_by={**live, **config_live},
            )
        )
    return kept


def _admit(found: Found, used: _Used, version: str, notes: list[str]) -> Found:
    renamed, removed = [], []
    for p in found.renamed:
        if clash := used.clash(p.old, p.new):
            notes.append(f"not written: {p.old} -> {p.new} uses {clash}")
        else:
            renamed.append(p)
    for gone in found.removed:
        if clash := used.clash(gone.name):
            notes.append(f"not written: {gone.name} removed uses {clash}")
        else:
            removed.append(gone)
    for name in [p.old for p in renamed] + [g.name for g in removed]:  # a new name may change again
        used.setdefault(name, version)
    return replace(found, renamed=tuple(renamed), removed=tuple(removed))
