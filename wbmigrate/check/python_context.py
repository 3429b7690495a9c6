"""What a string in Python code means, as far as `check` may act on it.

A fix rewrites a string only where its meaning is known: a key given to `wandb.log`, a name given
to `define_metric`, an argument of a `wandb_workspaces` or `wandb.automations` builder, a key
of a config dict. Code that reads history (`run.summary[...]`, `run.config.get(...)`,
`run.history(keys=...)`, `scan_history`, `Api().runs(filters=...)`) is never rewritten: old
runs keep the old names forever. Anything else is for a person to review. Names are resolved
through the module's imports, and a list bound to a name is judged by where the name is used.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

BUILDERS = ("wandb_workspaces.", "wandb.apis.reports.", "wandb.automations.")
HISTORY_CALLS = {"history", "scan_history"}
API_CALLS = {"runs", "run"}  # of a `wandb.Api()`: their filters and order read summaries
HISTORY_OBJECTS = {"summary", "config", "summary_metrics", "history"}
TRANSPARENT = {"list", "tuple", "set", "sorted", "frozenset", "dict"}  # pass values through
DEPTH = 8  # how far a name's uses are followed


class Kind(enum.Enum):
    LOG = "a key given to wandb.log"
    DEFINE = "a name given to define_metric"
    BUILDER = "an argument of a W&B builder"
    CONFIG = "a dict given to a prime-rl config class"
    HISTORY = "code that reads history"
    UNKNOWN = "a place wbmigrate cannot place"


@dataclass(frozen=True)
class Context:
    kind: Kind
    call: str = ""  # the call it belongs to, as written or resolved
    dict_key: bool = False  # the string is a key of a dict literal
    in_list: bool = False  # the string is an element of a list, tuple or set

    @property
    def known(self) -> bool:
        return self.kind in (Kind.LOG, Kind.DEFINE, Kind.BUILDER, Kind.CONFIG)


@dataclass
class Module:
    """A parsed module, with each node's parent, its imports, and the loads of each name."""

    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted origin
    loads: dict[str, list[ast.Name]] = field(default_factory=dict)
    runs: set[str] = field(default_factory=set)  # names bound to `wandb.init(...)`

    @classmethod
    def of(cls, tree: ast.AST) -> Module:
        module = cls()
        for parent, node in _edges(tree):
            module.parents[node] = parent
            if isinstance(node, ast.Import):
                for alias in node.names:  # `import a.b` binds `a`; `import a.b as c` binds a.b
                    origin = alias.name if alias.asname else alias.name.split(".")[0]
                    module.imports[alias.asname or origin] = origin
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                module.loads.setdefault(node.id, []).append(node)
        for node in module.parents:  # once every import is known
            value = node.value if isinstance(node, ast.Assign) else None
            if isinstance(value, ast.Call) and module.qualified(value.func) == "wandb.init":
                assert isinstance(node, ast.Assign)
                module.runs |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        return module

    def qualified(self, node: ast.AST) -> str:
        """`wr.LinePlot` -> `wandb_workspaces.reports.v2.LinePlot`, through the imports."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name):
            parts.append(self.imports.get(node.id, node.id))
        elif isinstance(node, ast.Call):
            parts.append(self.qualified(node.func) + "()")
        else:
            return ""
        return ".".join(reversed(parts))

    def context(self, node: ast.AST, depth: int = 0) -> Context:
        """Where `node` (a string constant, or a name bound to a literal) is used."""
        dict_key = in_list = False
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.Dict):
                dict_key = dict_key or any(k is child for k in parent.keys)
            elif isinstance(parent, ast.List | ast.Tuple | ast.Set):
                in_list = in_list or child is node
            elif isinstance(parent, ast.Call):
                found = self._call(parent, child, dict_key, in_list)
                if found is not None:
                    return found
            elif isinstance(parent, ast.Subscript):
                return self._subscript(parent, child, dict_key, in_list)
            elif isinstance(parent, ast.Assign | ast.AnnAssign):
                return self._assigned(parent, dict_key, in_list, depth)
            elif not isinstance(parent, ast.keyword | ast.Starred | ast.BinOp):
                break  # (a `+` of lists passes its elements on: `KEYS + ["x"]`)
            child, parent = parent, self.parents.get(parent)
        return Context(Kind.UNKNOWN, dict_key=dict_key, in_list=in_list)

    def _call(
        self, call: ast.Call, child: ast.AST, dict_key: bool, in_list: bool
    ) -> Context | None:
        if child is call.func:
            return Context(Kind.UNKNOWN)
        name = self.qualified(call.func)
        last = name.rpartition(".")[2]
        receiver = name.rpartition(".")[0].rpartition(".")[2]
        if name in TRANSPARENT:
            return None
        api = last in API_CALLS and (receiver.endswith("Api()") or receiver in ("api", "Api"))
        if last in HISTORY_CALLS or api or (last == "get" and receiver in HISTORY_OBJECTS):
            return Context(Kind.HISTORY, name, dict_key, in_list)
        if last == "log" and self._is_run(call.func) and dict_key:
            return Context(Kind.LOG, name, dict_key, in_list)
        if last == "define_metric":
            return Context(Kind.DEFINE, name, dict_key, in_list)
        if name.startswith(BUILDERS):
            return Context(Kind.BUILDER, name, dict_key, in_list)
        if dict_key and is_prime_rl_config(name):
            return Context(Kind.CONFIG, name, dict_key, in_list)
        return Context(Kind.UNKNOWN, name, dict_key, in_list)

    def _is_run(self, func: ast.AST) -> bool:
        """`wandb.log`, `wandb.run.log`, `run.log`, `self.run.log`, or a `wandb.init()` result."""
        receiver = func.value if isinstance(func, ast.Attribute) else None
        name = self.qualified(receiver) if receiver is not None else ""
        return name in ("wandb", "wandb.run") or name.endswith("run") or name in self.runs

    def _subscript(
        self, subscript: ast.Subscript, child: ast.AST, dict_key: bool, in_list: bool
    ) -> Context:
        if child is not subscript.slice:
            return Context(Kind.UNKNOWN, dict_key=dict_key, in_list=in_list)
        name = self.qualified(subscript.value)
        if name.rpartition(".")[2] in HISTORY_OBJECTS or isinstance(subscript.ctx, ast.Load):
            return Context(Kind.HISTORY, name, dict_key, in_list)  # a read: old data keeps it
        return Context(Kind.UNKNOWN, name, dict_key, in_list)

    def _assigned(
        self, assign: ast.Assign | ast.AnnAssign, dict_key: bool, in_list: bool, depth: int
    ) -> Context:
        """A literal bound to a name takes the context of the name's uses, if they agree."""
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        uses = [use for name in names for use in self.loads.get(name, [])]
        if not uses or depth >= DEPTH:
            return Context(Kind.UNKNOWN, dict_key=dict_key, in_list=in_list)
        found = {self.context(use, depth + 1) for use in uses}
        kinds = {c.kind for c in found}
        if len(kinds) != 1:
            kind = Kind.HISTORY if Kind.HISTORY in kinds else Kind.UNKNOWN
            return Context(kind, dict_key=dict_key, in_list=in_list)
        (use,) = list(found)[:1]
        return Context(use.kind, use.call, dict_key or use.dict_key, in_list or use.in_list)


def is_prime_rl_config(name: str) -> bool:
    """A config class of prime-rl's, resolved through imports: `prime_rl.configs...Config`."""
    return name.startswith("prime_rl.") and name.rpartition(".")[2].endswith("Config")


def _edges(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(parent, child) for every node below `tree`, each node's children in the order of
    `ast.iter_child_nodes` (inlining it saved a tenth of a second per 160,000 nodes, some 5% of
    their parse: it did not pay)."""
    stack = [tree]  # a stack, not recursion: any depth is fine
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            yield node, child
            stack.append(child)
