"""`mappings infer` over small git repositories made here, in a temporary folder: each commit a
squash-merged pull request, each test one kind of change to a logged key or config field."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from wbmigrate import gitlog
from wbmigrate.check.infer import infer
from wbmigrate.cli import cli
from wbmigrate.mapping.draft_file import to_yaml
from wbmigrate.mapping.infer import Place, draft, pair
from wbmigrate.mapping.parse import parse_mapping

URL = "https://github.com/me/trainer"


@pytest.fixture(autouse=True)
def _no_user_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing of the caller's git configuration is read, and commits need no identity."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.com")


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.day = 0

    def git(self, *args: str, date: str = "2026-01-01T12:00:00") -> str:
        env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        done = subprocess.run(
            ["git", "-C", str(self.path), *args],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **env},
        )
        return done.stdout.strip()

    def commit(self, subject: str, **files: str | None) -> str:
        """Write (or with None delete) files, named with `__` for `/`, and commit them."""
        for name, text in files.items():
            path = self.path / (name.replace("__", "/").removesuffix("_py") + ".py")
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        self.day += 1
        self.git("add", "-A")
        self.git("commit", "-q", "-m", subject, date=f"2026-01-{self.day:02d}T12:00:00")
        return self.git("rev-parse", "HEAD")


LOG = """import wandb

def log_step(loss, reward):
    wandb.log({{{keys}}})
"""


def logs(*keys: str) -> str:
    return LOG.format(keys=", ".join(f'"{k}": 1' for k in keys))


def run(repo: Repo, start: str, to: str = "HEAD"):
    return draft(infer(repo.path, start, to))


def test_a_rename_in_one_hunk_is_one_entry_without_review(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init (#1)", train__log_py=logs("loss/train", "reward/mean"))
    repo.commit("rename the loss (#2)", train__log_py=logs("loss/train_mean", "reward/mean"))
    (step,) = run(repo, first)
    (pair,) = step.metrics.renamed
    assert (pair.old, pair.new, pair.review) == ("loss/train", "loss/train_mean", "")
    assert (step.version, step.pull, str(step.date)) == ("2026.01.02", 2, "2026-01-02")
    assert (pair.before.file, pair.before.line, pair.before.scope) == (
        "train/log.py",
        4,
        "log_step",
    )


def test_a_form_feed_moves_no_key_off_its_line(tmp_path: Path) -> None:
    """Lines are counted as `ast` counts them: a form feed (a blank line to Python, a line
    break to `str.splitlines`) neither shows the wrong code beside a key nor splits its hunk."""
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py="\f\n" + logs("loss/train"))
    repo.commit("rename the loss (#2)", a_py="\f\n" + logs("loss/train_mean"))
    (step,) = run(repo, first)
    (pair,) = step.metrics.renamed
    assert (pair.before.line, pair.before.code) == (5, 'wandb.log({"loss/train": 1})')
    assert pair.review == ""


def test_several_changes_in_one_place_are_marked_for_review(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("d/inflight_train", "d/inflight_eval", "d/groups"))
    repo.commit("namespace (#7)", a_py=logs("d/inflight/train", "d/inflight/eval"))
    (step,) = run(repo, first)
    pairs = {p.old: p.new for p in step.metrics.renamed}
    assert pairs == {"d/inflight_train": "d/inflight/train", "d/inflight_eval": "d/inflight/eval"}
    assert all(p.review for p in step.metrics.renamed)
    assert [g.name for g in step.metrics.removed] == ["d/groups"]


def test_the_code_beside_a_key_says_which_new_key_took_its_place(tmp_path: Path) -> None:
    code = (
        "import wandb\n\ndef f(p):\n    wandb.log({{\n"
        '        "{a}": p.samples,\n        "{b}": p.problems,\n    }})\n'
    )
    repo = Repo(tmp_path)
    repo.commit("init", a_py=code.format(a="n/samples", b="n/problems"))
    head = repo.commit("names (#9)", a_py=code.format(a="n/rollouts", b="n/tasks"))
    (step,) = run(repo, head)
    pairs = {p.old: p.new for p in step.metrics.renamed}  # by name alone, crossed
    assert pairs == {"n/samples": "n/rollouts", "n/problems": "n/tasks"}


def test_a_key_moved_between_files_is_no_change(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train", "x/y"), b_py=logs("x/z"))
    repo.commit("move (#3)", a_py=logs("x/y"), b_py=logs("x/z", "loss/train"))
    assert run(repo, first) == []


def test_a_key_still_logged_elsewhere_is_not_removed(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train", "x/y"), b_py=logs("loss/train"))
    repo.commit("drop one copy (#3)", a_py=logs("x/y"))
    assert run(repo, first) == []


def test_a_key_renamed_into_one_logged_elsewhere_merges_for_review(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("len/avg", "x/y"), b_py=logs("len/mean"))
    repo.commit("one name (#5)", a_py=logs("len/mean", "x/y"))
    (step,) = run(repo, first)
    (pair,) = step.metrics.renamed
    assert (pair.old, pair.new) == ("len/avg", "len/mean")
    assert pair.review.startswith("len/mean was already logged elsewhere;")
    assert step.metrics.removed == ()


def test_a_key_renamed_into_one_a_changed_file_logs_elsewhere_merges_for_review(
    tmp_path: Path,
) -> None:
    """#1714's eval dict: `len/avg` became `len/mean`, which the trainer already logged in
    another function of a file the same commit changed."""
    repo = Repo(tmp_path)
    evaluate = 'import wandb\n\ndef evaluate():\n    wandb.log({{"len/{s}": 1, "len/max": 2}})\n'
    first = repo.commit("init", a_py=evaluate.format(s="avg"), b_py=logs("len/mean", "x/y"))
    repo.commit("move (#5)", a_py=None, c_py=evaluate.format(s="mean"), b_py=logs("len/mean"))
    (step,) = run(repo, first)
    (pair,) = step.metrics.renamed
    assert (pair.old, pair.new, pair.after.file) == ("len/avg", "len/mean", "c.py")
    assert pair.review.startswith("len/mean was already logged elsewhere;")


def test_a_key_that_only_moved_is_no_rename_target(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("x/a", "x/b"), b_py=logs("y/c"))
    other = 'import wandb\n\ndef other():\n    wandb.log({"x/b": 1, "y/c": 2})\n'
    repo.commit("drop x/a, move x/b (#6)", a_py=None, b_py=other)
    (step,) = run(repo, first)
    assert step.metrics.renamed == ()
    assert [g.name for g in step.metrics.removed] == ["x/a"]


TWO_LOGS = """import wandb

def train(t, r):
    wandb.log({{"loss/x": 1{first}}})
    for step in range(3):
        print(step)
    wandb.log({{"loss/y": 2{second}}})
"""


def test_one_key_out_and_an_unlike_one_in_apart_in_a_function_is_no_rename(tmp_path: Path) -> None:
    """#1211: `time/eval` left one call and `val_reward/mean` came into another: the only
    change in the function, but in another place, under a name that shares nothing."""
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=TWO_LOGS.format(first=', "time/eval": t', second=""))
    repo.commit("val (#1211)", a_py=TWO_LOGS.format(first="", second=', "val_reward/mean": r'))
    (step,) = run(repo, first)
    assert step.metrics.renamed == ()
    assert [g.name for g in step.metrics.removed] == ["time/eval"]
    assert step.notes == (
        "not paired: time/eval -> val_reward/mean: the only change in train, but not in one"
        " place, and the names differ (similarity 0.00)",
    )


def test_one_key_replaced_by_an_unlike_one_in_one_place_is_a_rename(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=TWO_LOGS.format(first=', "completions": t', second=""))
    repo.commit("table (#628)", a_py=TWO_LOGS.format(first=', "samples": t', second=""))
    (step,) = run(repo, first)
    assert [(p.old, p.new, p.review) for p in step.metrics.renamed] == [
        ("completions", "samples", "names differ (similarity 0.56)")
    ]


def test_a_lookup_table_of_names_is_not_logged_keys(tmp_path: Path) -> None:
    """#2569's `{"Qwen/Qwen3-8B-FP8": "hermes"}` and #724's `{"time/step": "Step Time"}`: a
    value W&B charts is never a string written in the code."""
    table = 'PARSERS = {{{rows}}}\nLABELS = {{"time/step": "Step Time", "perf/mfu": {{}}}}\n'
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=table.format(rows='"Qwen/Qwen3-8B": "hermes"'))
    repo.commit("models (#2569)", a_py=table.format(rows='"Qwen/Qwen3.5-2B": "qwen3"'))
    repo.commit("labels (#724)", a_py="LABELS = {}\n")
    assert run(repo, first) == []


def test_a_key_gone_with_nothing_in_its_place_is_removed(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train", "loss/ema"))
    repo.commit("drop the ema (#4)", a_py=logs("loss/train"))
    (step,) = run(repo, first)
    assert [g.name for g in step.metrics.removed] == ["loss/ema"]
    assert step.metrics.renamed == ()


def test_a_key_logged_again_later_is_live_again_and_the_draft_validates(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train", "loss/ema"))
    repo.commit("drop the ema (#4)", a_py=logs("loss/train"))
    repo.commit("bring it back (#5)", a_py=logs("loss/train", "loss/ema"))
    steps = run(repo, first)
    assert [s.pull for s in steps] == [4, 5]
    assert steps[1].live_again == ("loss/ema",)
    text = to_yaml(steps, URL, "trainer", "a..b")
    assert '      live_again:\n        - "loss/ema"  # retired by step 2026.01.02\n' in text
    written = parse_mapping(text, "draft.yaml")
    assert written.steps[1].live_again == ("loss/ema",)
    assert written.migration().resolve("loss/ema").action.value == "untouched"


def test_a_rename_into_a_retired_key_is_written_with_it_live_again(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("reward/mean"))
    repo.commit("rename (#4)", a_py=logs("reward/reward"))
    repo.commit("rename back (#5)", a_py=logs("reward/mean"))
    steps = run(repo, first)
    assert [(p.old, p.new) for p in steps[1].metrics.renamed] == [("reward/reward", "reward/mean")]
    assert steps[1].live_again == ("reward/mean",)
    written = parse_mapping(to_yaml(steps, URL, "trainer", "a..b"), "draft.yaml")
    assert dict(written.migration().metrics) == {
        "reward/reward": written.migration().resolve("reward/reward")
    }
    assert written.migration().resolve("reward/reward").new == "reward/mean"


def test_a_config_field_back_after_a_rename_is_live_again(tmp_path: Path) -> None:
    config = "from pydantic import BaseModel\n\nclass Config(BaseModel):\n    {field}: int = 1\n"
    repo = Repo(tmp_path)
    first = repo.commit("init", config_py=config.format(field="seed"))
    repo.commit("rename (#4)", config_py=config.format(field="seed_value"))
    repo.commit("back (#5)", config_py=config.format(field="seed"))
    steps = run(repo, first)
    assert steps[1].config_live_again == ("seed",)
    written = parse_mapping(to_yaml(steps, URL, "trainer", "a..b"), "draft.yaml")
    assert [(c.old, c.new) for c in written.migration().config] == [("seed_value", "seed")]


def test_a_config_field_removed_then_back_is_not_live_again(tmp_path: Path) -> None:
    """A removed config field is a remark, never an entry: nothing in the mapping retired it."""
    config = "from pydantic import BaseModel\n\nclass Config(BaseModel):\n    lr: int = 1\n{more}"
    repo = Repo(tmp_path)
    first = repo.commit("init", config_py=config.format(more="    seed: int = 1\n"))
    repo.commit("drop (#4)", config_py=config.format(more=""))
    repo.commit("back (#5)", config_py=config.format(more="    seed: int = 1\n"))
    steps = run(repo, first)
    assert [s.config_live_again for s in steps] == [()]  # the return is no step at all
    assert "live_again" not in to_yaml(steps, URL, "trainer", "a..b")


def test_an_fstring_key_is_a_pattern_for_review_never_an_entry(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    fstring = 'import wandb\n\ndef f(env):\n    wandb.log({f"eval/{env}/avg": 1, "a/b": 2})\n'
    repo.commit("init", a_py=fstring)
    second = repo.commit("rename (#6)", a_py=fstring.replace("eval/{env}/avg", "eval/{env}/mean"))
    (step,) = run(repo, second)
    assert step.metrics.renamed == step.metrics.removed == ()
    assert [(c, p) for c, p, _ in step.patterns] == [
        ("removed", "eval/{env}/avg"),
        ("added", "eval/{env}/mean"),
    ]
    assert "review: f-string key added: eval/{env}/mean (a.py:4)" in to_yaml(
        steps=[step], url=URL, ident="t", span="a..b"
    )


CONFIG = """from pydantic import AliasChoices, BaseModel, Field

class OrchestratorConfig(BaseModel):
    {field}
    seed: int = 0

class RLConfig(BaseModel):
    orchestrator: OrchestratorConfig
"""


def test_a_config_field_renamed_with_an_alias_is_a_deprecation(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="rollouts_per_example: int = 8"))
    alias = (
        "group_size: int = Field(8, validation_alias="
        'AliasChoices("group_size", "rollouts_per_example"))'
    )
    repo.commit("group size (#2599)", configs__rl_py=CONFIG.format(field=alias))
    (step,) = run(repo, first)
    (pair,) = step.config.renamed
    assert (pair.old, pair.new, pair.deprecation) == (
        "orchestrator.rollouts_per_example",
        "orchestrator.group_size",
        True,
    )
    mapping = parse_mapping(to_yaml([step], URL, "trainer", "a..b"), "draft.yaml")
    (rename,) = mapping.steps[0].config
    assert dict(rename.toml) == {
        "orchestrator.rollouts_per_example": "orchestrator.group_size",
        "rollouts_per_example": "group_size",
    }
    assert rename.cli["--orchestrator.rollouts-per-example"] == "--orchestrator.group-size"


def test_the_draft_of_an_aliased_rename_carries_deprecated(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="rollouts_per_example: int = 8"))
    alias = 'group_size: int = Field(8, validation_alias=AliasChoices("rollouts_per_example"))'
    repo.commit("group size (#2599)", configs__rl_py=CONFIG.format(field=alias))
    no_alias = CONFIG.format(field=alias).replace("seed: int", "random_seed: int")
    repo.commit("no alias (#2600)", configs__rl_py=no_alias)
    text = to_yaml(run(repo, first), URL, "trainer", "a..b")
    assert "deprecated: true  # the old name still validates (an alias keeps it)" in text
    steps = parse_mapping(text, "draft.yaml").steps
    assert [(c.old, c.deprecated) for s in steps for c in s.config] == [
        ("orchestrator.rollouts_per_example", True),
        ("orchestrator.seed", False),
    ]


SECTIONED = """from pydantic import BaseModel

class ConcurrencyConfig(BaseModel):
    max_inflight: int = 1024
    min_inflight: int = 1

class OrchestratorConfig(BaseModel):
    concurrency: ConcurrencyConfig = ConcurrencyConfig()
    seed: int = 0

class RLConfig(BaseModel):
    orchestrator: OrchestratorConfig
"""


def test_a_field_into_a_new_section_under_another_name_is_no_rename(tmp_path: Path) -> None:
    """#3285: a fixed cap gave way to an adaptive band's section; similar names alone make no
    rename when both the section and the name changed. It stays in the draft as a note."""
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="max_inflight_episodes: int"))
    repo.commit("adaptive (#3285)", configs__rl_py=SECTIONED)
    (step,) = run(repo, first)
    assert step.config.renamed == ()
    assert [g.name for g in step.config.removed] == ["orchestrator.max_inflight_episodes"]
    assert "orchestrator.concurrency.max_inflight" in step.config.added
    assert step.notes == (
        "not paired: orchestrator.max_inflight_episodes -> orchestrator.concurrency.max_inflight:"
        " changes both its section and its name (similarity 0.72)",
    )


def test_a_field_into_a_new_section_under_its_own_name_is_a_rename(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="max_inflight: int"))
    repo.commit("section (#3286)", configs__rl_py=SECTIONED)
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.config.renamed] == [
        ("orchestrator.max_inflight", "orchestrator.concurrency.max_inflight")
    ]


ROOT = "from pydantic import BaseModel, Field\n\nclass RLConfig(BaseModel):\n"


def test_a_line_that_goes_on_does_not_pair_by_the_code_beside_it(tmp_path: Path) -> None:
    """#839's `difficulty_field: Annotated[` -> `from_scratch: Annotated[`: the line's value is
    on the lines after it."""
    field = "    {a}: Annotated[\n        bool, Field(description='x')\n    ] = False\n"
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=ROOT + field.format(a="mask") + "    n: int = 0\n")
    repo.commit("other (#839)", configs__rl_py=ROOT + field.format(a="fresh") + "    zz: int = 1\n")
    (step,) = run(repo, first)
    assert step.config.renamed == ()
    assert [g.name for g in step.config.removed] == ["mask", "n"]


def test_code_beside_two_removed_keys_pairs_neither(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=ROOT + "    x: bool = False\n    y: bool = False\n")
    repo.commit("one (#2746)", configs__rl_py=ROOT + "    z: bool = False\n    w: int = 0\n")
    (step,) = run(repo, first)
    assert step.config.renamed == ()


def test_code_beside_one_removed_and_one_added_key_pairs_them(tmp_path: Path) -> None:
    """#3256: `num_gpus: int = 1` became `num_train_gpus: int = 1`, beside a new
    `num_infer_gpus` as like it by name."""
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=ROOT + "    num_gpus: int = 1\n")
    after = "    num_infer_gpus: int = Field(1)\n    num_train_gpus: int = 1\n"
    repo.commit("sft evals (#3256)", configs__rl_py=ROOT + after)
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.config.renamed] == [("num_gpus", "num_train_gpus")]


def test_fields_of_one_section_are_alike_only_by_their_own_names(tmp_path: Path) -> None:
    """`orchestrator.` shared by two fields says nothing about them (#1404's `loss.kl_mask_type`
    was paired with `loss.token_mask_low`)."""
    repo = Repo(tmp_path)
    first = repo.commit(
        "init", configs__rl_py=CONFIG.format(field="mask: int = 0\n    keep: int = 0")
    )
    repo.commit(
        "two (#2)", configs__rl_py=CONFIG.format(field="k: int = 0\n    keep_last: int = 0")
    )
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.config.renamed] == [
        ("orchestrator.keep", "orchestrator.keep_last")
    ]
    assert [g.name for g in step.config.removed] == ["orchestrator.mask"]


def test_a_section_flattened_into_one_field_is_a_rename(tmp_path: Path) -> None:
    """#536's `weights.path` -> `weights_path`: the section and the name changed, but the words
    are the same."""
    nested = "from pydantic import BaseModel\n\nclass WeightsConfig(BaseModel):\n"
    nested += "    path: str = 'w'\n\nclass OrchestratorConfig(BaseModel):\n"
    nested += "    weights: WeightsConfig = WeightsConfig()\n    seed: int = 0\n"
    nested += "\nclass RLConfig(BaseModel):\n    orchestrator: OrchestratorConfig\n"
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=nested)
    repo.commit("flat (#536)", configs__rl_py=CONFIG.format(field="weights_path: str = 'w'"))
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.config.renamed] == [
        ("orchestrator.weights.path", "orchestrator.weights_path")
    ]


def test_a_field_given_more_words_is_alike(tmp_path: Path) -> None:
    """#2639's `filters` -> `pre_batch_filters`, beside other changes in its section."""
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="filters: list = []"))
    after = "pre_batch_filters: list = [\n        1,\n    ]\n    pool: int = 0"
    repo.commit("overlap (#2639)", configs__rl_py=CONFIG.format(field=after))
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.config.renamed] == [
        ("orchestrator.filters", "orchestrator.pre_batch_filters")
    ]


def test_a_key_as_like_two_new_ones_pairs_with_neither(tmp_path: Path) -> None:
    """#2639: `filters` is as like `pre_batch_filters` as `post_batch_filters`; the alphabet
    is no evidence."""
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="filters: list = []"))
    after = "pre_batch_filters: list = [\n        1,\n    ]\n    post_batch_filters: list = [\n"
    repo.commit("overlap (#2639)", configs__rl_py=CONFIG.format(field=after + "        2,\n    ]"))
    (step,) = run(repo, first)
    assert step.config.renamed == ()


def test_a_word_inside_another_name_is_not_alike(tmp_path: Path) -> None:
    """#2742's `extra_env_kwargs` is not `env` with words added."""
    repo = Repo(tmp_path)
    first = repo.commit("init", configs__rl_py=CONFIG.format(field="extra_env_kwargs: dict = {}"))
    after = "env: dict = {\n        1: 2,\n    }\n    pool: int = 0"
    repo.commit("env (#2742)", configs__rl_py=CONFIG.format(field=after))
    (step,) = run(repo, first)
    assert step.config.renamed == ()


def test_path_globs_choose_the_files_read(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", src__a_py=logs("a/x"), tests__b_py=logs("b/x"))
    repo.commit("both (#2)", src__a_py=logs("a/y"), tests__b_py=logs("b/y"))
    (step,) = draft(infer(repo.path, first, "HEAD", ("src/*",)))
    assert [(p.old, p.new) for p in step.metrics.renamed] == [("a/x", "a/y")]


def test_a_config_a_root_now_holds_is_no_rename(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    alone = "from pydantic import BaseModel\n\nclass OrchestratorConfig(BaseModel):\n"
    alone += "    seed: int = 0\n"
    first = repo.commit("init", configs__orch_py=alone)
    held = alone + "\nclass RLConfig(BaseModel):\n    orchestrator: OrchestratorConfig\n"
    repo.commit("rl (#3)", configs__orch_py=held)
    assert run(repo, first) == []


def test_reading_changes_nothing_in_the_repository(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    head = repo.commit("rename (#2)", a_py=logs("train/loss"))
    (tmp_path / "a.py").write_text("work in progress\n")
    before = repo.git("status", "--porcelain")
    assert run(repo, first)
    assert repo.git("status", "--porcelain") == before
    assert repo.git("rev-parse", "HEAD") == head


def test_the_command_writes_a_draft_that_validates_and_diffs(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    first = repo.commit("init", a_py=logs("loss/train"))
    repo.commit("rename (#2)", a_py=logs("train/loss"))
    out = tmp_path / "draft.yaml"
    args = ["mappings", "infer", str(repo.path), "--from", first, "--to", "HEAD", "--url", URL]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote" in result.stderr
    assert 'source: "https://github.com/me/trainer/pull/2"' in out.read_text()
    valid = CliRunner().invoke(cli, ["mappings", "validate", str(out)])
    assert valid.exit_code == 0, valid.output
    same = CliRunner().invoke(cli, ["mappings", "diff", str(out), str(out)])
    assert (same.exit_code, same.stdout.splitlines()[-1]) == (0, f"{out} and {out} agree.")
    data = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    assert data["steps"][0]["metrics"]["renamed"][0]["new"] == "train/loss"


def test_mappings_diff_says_what_differs_step_by_step(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    text = (Path(__file__).parents[2] / "mappings" / "prime-rl.yaml").read_text()
    text = text.replace(
        "dispatcher/off_policy_level_max: dispatcher/off_policy_level/max",
        "dispatcher/off_policy_level_max: dispatcher/off_policy_level/maximum\n"
        "        dispatcher/queued_train: dispatcher/queued/train",
    )
    other.write_text(text)
    result = CliRunner().invoke(cli, ["mappings", "diff", "prime-rl", str(other)])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:3] == [
        "step 2026.08.19 (#3285) | 2026.08.19 (#3285)",
        "  + dispatcher/queued_train -> dispatcher/queued/train",
        "  ! dispatcher/off_policy_level_max: -> dispatcher/off_policy_level/max"
        " | -> dispatcher/off_policy_level/maximum",
    ]


@pytest.mark.parametrize(
    ("rev", "message"),
    [("nope", "has no commit 'nope'"), ("--all", "not a revision: '--all'")],
)
def test_a_bad_revision_is_one_error_line(tmp_path: Path, rev: str, message: str) -> None:
    repo = Repo(tmp_path)
    repo.commit("init", a_py=logs("loss/train"))
    args = ["mappings", "infer", str(tmp_path), "--from", rev, "--to", "HEAD", "--url", URL]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert message in result.stderr


def test_without_git_it_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    args = ["mappings", "infer", str(tmp_path), "--from", "a", "--to", "b", "--url", URL]
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stderr) == (2, "Error: git is not installed or not on PATH\n")


def test_code_in_an_evidence_comment_cannot_break_out_of_it(tmp_path: Path) -> None:
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    repo.commit("rename (#2)", a_py=logs("train/loss").replace(": 1})", ": 1})  # \x1bsteps: []"))
    text = to_yaml(run(repo, first), URL, "t", "a..b")
    assert "\\x1bsteps: []" in text
    assert parse_mapping(text, "draft.yaml").steps[0].renamed == {"loss/train": "train/loss"}


def test_a_file_over_the_size_cap_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    repo.commit("rename (#2)", a_py=logs("loss/train_mean"))
    monkeypatch.setattr(gitlog, "MAX_FILE", 20)
    assert run(repo, first) == []


def test_a_file_named_with_spaces_that_a_commit_deletes_is_read(tmp_path: Path) -> None:
    """git answers `rev:my file.py missing` with the name's spaces: one such answer once ended
    the command with a traceback."""
    repo = Repo(tmp_path)
    (tmp_path / "my file.py").write_text(logs("loss/train"))
    first = repo.commit("init")
    (tmp_path / "my file.py").unlink()
    repo.commit("rename (#2)", b_py=logs("loss/train_mean"))
    (step,) = run(repo, first)
    assert [(p.old, p.new) for p in step.metrics.renamed] == [("loss/train", "loss/train_mean")]


def test_a_subject_or_a_file_name_holding_the_log_separator_is_read(tmp_path: Path) -> None:
    """git's log is read commit by commit at \\x01 and a hash: a subject or a name holding
    \\x01 once ended the command with a traceback."""
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    (tmp_path / "\x01b.py").write_text("x = 1\n")
    repo.commit("odd \x01 name (#2)", a_py=logs("loss/train_mean"))
    (step,) = run(repo, first)
    assert (step.subject, step.pull) == ("odd \x01 name (#2)", 2)


def test_characters_json_and_yaml_spell_differently_are_read_back(tmp_path: Path) -> None:
    """JSON spells 🚀 as two surrogate escapes, which YAML reads as two characters or refuses;
    and YAML allows no U+FFFF, even in a comment."""
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    repo.commit("rename 🚀 (#2)", a_py=logs("loss/🚀").replace(": 1})", ": 1})  # \uffff"))
    mapping = parse_mapping(to_yaml(run(repo, first), URL, "t", "a..b"), "draft.yaml")
    assert mapping.steps[0].summary == "rename 🚀 (#2)"
    assert mapping.steps[0].renamed == {"loss/train": "loss/🚀"}


def test_more_keys_than_a_command_line_holds_are_looked_up(tmp_path: Path) -> None:
    """As arguments, 1,000 keys of 1,400 characters pass Linux's 2 MiB (OSError: a traceback)."""
    repo = Repo(tmp_path)
    repo.commit("init", a_py=logs("loss/train"))
    words = [f"k{i:06}{'x' * 1_400}" for i in range(1_000)]
    assert gitlog.mentioned(tmp_path, "HEAD", [*words, "loss/train"]) == {"loss/train"}


def test_the_caps_default_to_2_mib_a_file_and_256_mib_an_answer() -> None:
    assert (gitlog.MAX_FILE, gitlog.MAX_OUTPUT) == (2 * 1024 * 1024, 256 * 1024 * 1024)


def test_an_answer_over_the_output_cap_is_one_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    repo = Repo(tmp_path)
    first = repo.commit("init", a_py=logs("loss/train"))
    monkeypatch.setattr(gitlog, "MAX_OUTPUT", 10)
    args = ["mappings", "infer", str(tmp_path), "--from", first, "--to", "HEAD", "--url", URL]
    result = CliRunner().invoke(cli, args)
    assert (result.exit_code, result.stderr) == (
        2,
        "Error: git rev-parse answered more than 10 bytes\n",
    )


def test_keys_replaced_one_for_one_in_several_functions_pair_in_the_order_given() -> None:
    """The draft lists them as the commit's keys come, whatever the process's hash seed (a
    set of places once ordered them differently in every run)."""
    removed = {f"old/k{i}": Place(f"f{i}.py", 1, f"fn{i}", "x") for i in range(8)}
    added = {f"new/k{i}": Place(f"f{i}.py", 1, f"fn{i}", "x") for i in range(8)}
    assert [(p.old, p.new) for p in pair(removed, added).renamed] == list(
        zip(removed, added, strict=True)
    )
