"""Bad input: each is refused with a clear one-line error, never a traceback, and nothing is
written. (Invalid mappings, rule by rule: test_mapping_files.py; a catastrophic `metricRegex`
and a legacy `metric_filter`: fixtures/cases; 401/403/404: test_wandb_api.py, test_live.py.)"""

from __future__ import annotations

import json
import os
from itertools import chain
from pathlib import Path
from typing import Any

import pytest
import responses
import yaml
from helpers import TARGET, snapshot

from wbmigrate import find_mapping
from wbmigrate.edit.located_yaml import FAST_LOADER
from wbmigrate.engine.model import Options
from wbmigrate.live.client import Client
from wbmigrate.live.transport import ApiError
from wbmigrate.plan import Source, plan_one
from wbmigrate.rewrite import MAX_SPEC_BYTES, SpecError, rewrite_text

MIGRATION = find_mapping("prime-rl").migration()
DEEP = "[" * 10_000 + "]" * 10_000


def deep_weave(levels: int) -> str:
    """A weave expression `levels` picks deep: parseable JSON, deeper than any real spec."""
    node = '{"nodeType":"const","type":"string","val":"off_policy/mean"}'
    for _ in range(levels):
        node = (
            '{"nodeType":"output","fromOp":{"name":"pick","inputs":{"obj":' + node + ',"key":'
            '{"nodeType":"const","type":"string","val":"off_policy/mean"}}}}'
        )
    return (
        '{"version":5,"blocks":[{"type":"weave-panel","children":[{"text":""}],'
        '"config":{"panelConfig":{"exp":' + node + "}}}]}"
    )


def one_line(result) -> str:
    assert "Traceback" not in result.output
    return result.output


# --- specs that cannot be read ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"blocks": [', "not valid JSON: Expecting value (line 1, column 13)"),
        ('{"something": "else"}', "not a W&B report spec"),
        (DEEP, "JSON nested too deeply to read"),
        (" " * (MAX_SPEC_BYTES + 1), "spec is 32.0 MB, over the 32 MB wbmigrate reads"),
        (
            '{"blocks": [' + "1" * 5_000 + "]}",
            "not valid JSON: an integer of more than 4300 digits, more than Python reads "
            "(line 1, column 13)",
        ),
    ],
    ids=["not-json", "unknown-shape", "10000-deep", "too-big", "integer-too-long"],
)
def test_a_spec_that_cannot_be_read_is_an_error_of_its_own(text, error):
    planned = plan_one(Source("bad", "1", text, "report"), MIGRATION, Options())
    assert planned.error == error


def test_a_spec_readable_but_too_deep_to_rewrite_is_planned_and_refused_for_writing():
    text = deep_weave(300)  # JSON reads it; splicing the edits would recurse too deep
    planned = plan_one(Source("deep", "1", text, "report"), MIGRATION, Options())
    assert planned.error is None
    assert planned.result is not None
    assert len(planned.result.changes) == 301  # the 300 picks, and the note
    with pytest.raises(SpecError, match="spec nested too deeply to rewrite"):
        rewrite_text(text, MIGRATION)


def test_live_objects_that_cannot_be_read_are_reported_and_never_written(run, live):
    live.state.add_view('{"blocks": [', "runs", "Broken")
    live.state.add_view('{"something": "else"}', "runs", "Strange")
    live.state.add_view(DEEP, "runs", "Deep")
    before = snapshot(live)
    plan = run("plan", TARGET)
    assert plan.exit_code == 1
    assert "  error: not valid JSON: Expecting value (line 1, column 13)" in one_line(plan)
    assert "  error: not a W&B report spec" in plan.stdout
    assert "  error: JSON nested too deeply to read" in plan.stdout
    applied = run("apply", TARGET, "--yes")
    assert applied.exit_code == 1
    assert 'skipped    report "Broken"' in one_line(applied)
    assert "not read: not valid JSON" in applied.stdout
    assert "Summary: 10 applied, 3 skipped." in applied.stdout
    for title in ("Broken", "Strange", "Deep"):
        view_id = live.state.find(title)
        assert live.state.views[view_id]["spec"] == before[0][view_id]


def test_spec_files_too_big_or_too_deep(run, tmp_path):
    (tmp_path / "big.json").write_text('{"blocks": []' + " " * MAX_SPEC_BYTES + "}")
    (tmp_path / "deep.json").write_text('{"blocks": ' + DEEP + "}")  # a spec key: read
    result = run("plan", str(tmp_path))
    assert result.exit_code == 1
    assert "error: not read: 32.0 MB, over the 32 MB wbmigrate reads" in one_line(result)
    assert "error: JSON nested too deeply to read" in result.stdout
    check = run("check", str(tmp_path), "--format", "json")
    findings = {Path(f["path"]).name: f["message"] for f in json.loads(check.stdout)["findings"]}
    assert findings["big.json"] == "not read: 32.0 MB, over the 32 MB wbmigrate reads"


def test_a_spec_file_holding_an_integer_too_long_to_read_is_one_line(run, tmp_path):
    number = "1" * 5_000  # more digits than Python converts: json.loads raised a bare ValueError
    (tmp_path / "long.json").write_text('{"blocks": ["off_policy/mean", ' + number + "]}")
    result = run("plan", str(tmp_path))
    assert result.exit_code == 1
    assert "error: not valid JSON: an integer of more than 4300 digits" in one_line(result)
    check = run("check", str(tmp_path), "--format", "json")
    assert check.exit_code == 1
    findings = json.loads(check.stdout)["findings"]
    assert [(f["rule"], f["column"]) for f in findings] == [
        ("needs-review", 14),  # the name, reviewed
        ("parse-error", 32),  # at the number
    ]


# --- check: files it cannot read -------------------------------------------------------------


def test_check_skips_binary_files_and_names_non_utf8_ones(run, tmp_path):
    (tmp_path / "blob.json").write_bytes(b'{"metrics": ["off_policy/mean"]}\0\x01\x02')
    (tmp_path / "latin1.py").write_bytes('KEY = "off_policy/mean"  # caf\xe9\n'.encode("latin-1"))
    result = run("check", str(tmp_path), "--format", "json")
    findings = json.loads(result.stdout)["findings"]
    assert [(Path(f["path"]).name, f["rule"]) for f in findings] == [
        ("latin1.py", "needs-review"),  # the name, on its line
        ("latin1.py", "parse-error"),  # decoded as latin-1
    ]


def test_check_survives_symlink_loops(run, tmp_path):
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)  # a folder loop
    (tmp_path / "sub" / "ok.py").write_text('KEY = "off_policy/mean"\n')
    walked = run("check", str(tmp_path), "--format", "json")
    assert walked.exit_code == 1
    assert [Path(f["path"]).name for f in json.loads(walked.stdout)["findings"]] == ["ok.py"]
    named = run("check", str(tmp_path / "a.json"))
    assert named.exit_code == 2  # a usage error, as for any path that leads nowhere
    assert "Error: Invalid value for '[PATH]...': Path" in one_line(named)
    assert "a.json' does not exist." in named.output


def test_check_names_unreadable_files(run, tmp_path, monkeypatch):
    secret = tmp_path / "secret.json"
    secret.write_text('{"metrics": ["off_policy/mean"]}')
    secret.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make the read fail as it would for a user
        from wbmigrate.check import run as check_run
        from wbmigrate.safe_write import read_file

        def refuse(file: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(file).name == "secret.json":
                raise PermissionError(13, "Permission denied")
            return read_file(file, *args, **kwargs)

        monkeypatch.setattr(check_run, "read_file", refuse)  # what check reads with
    result = run("check", str(tmp_path))
    secret.chmod(0o600)
    assert result.exit_code == 1
    assert "parse-error         cannot read it: Permission denied" in one_line(result)


# --- YAML is data, never code ---------------------------------------------------------------

EVIL = 'title: !!python/object/apply:os.system ["touch {marker}"]\n'


def test_a_python_tag_in_a_mapping_is_refused_and_never_run(run, tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "evil.yaml").write_text("id: x\n" + EVIL.format(marker=marker))
    result = run("mappings", "validate", str(tmp_path / "evil.yaml"))
    assert result.exit_code == 2
    assert "evil.yaml:2: invalid YAML: the tag tag:yaml.org,2002:python/object/apply:os.system" in (
        one_line(result)
    )
    assert not marker.exists()


def test_a_python_tag_in_a_yaml_spec_is_a_finding_and_never_run(run, tmp_path):
    marker = tmp_path / "ran"
    spec = "metrics: [off_policy/mean]\n" + EVIL.format(marker=marker)
    (tmp_path / "spec.yaml").write_text(spec)
    result = run("check", str(tmp_path))
    assert result.exit_code == 1
    assert "not valid YAML: the tag tag:yaml.org,2002:python/object/apply" in one_line(result)
    assert not marker.exists()


def test_a_mapping_nested_too_deeply(run, tmp_path):
    (tmp_path / "deep.yaml").write_text("id: x\nsteps: " + DEEP + "\n")
    result = run("mappings", "validate", str(tmp_path / "deep.yaml"))
    assert result.exit_code == 2
    if FAST_LOADER is yaml.SafeLoader:  # pyyaml without libyaml: Python's recursion limit
        assert "deep.yaml:1: invalid YAML: YAML nested too deeply to read" in one_line(result)
    else:  # libyaml refuses the nesting itself, at the line where it passes its limit
        assert "deep.yaml:2: invalid YAML: exceeded maximum nesting depth" in one_line(result)


# --- the API ---------------------------------------------------------------------------------


@responses.activate
def test_a_200_with_errors_and_partial_data_is_an_error_not_data():
    responses.post(
        "https://api.example.com/graphql",
        json={
            "data": {"project": {"allViews": {"edges": [], "pageInfo": {"hasNextPage": False}}}},
            "errors": [{"message": "permission denied for some views"}],
        },
    )
    client = Client("https://api.example.com", "k" * 40, retries=0)
    with pytest.raises(ApiError, match="permission denied for some views"):
        list(chain.from_iterable(client.view_pages("team", "proj", "runs")))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["plan", TARGET, "--out", "/nonexistent/plan.json"],
            "Error: --out /nonexistent/plan.json",
        ),
        (["plan", "./not-there"], "Error: ./not-there: no such file or folder"),
        (["plan", ""], "Error: no TARGET: give ENTITY/PROJECT"),
        (["apply", "fixtures", "--yes"], "Error: fixtures: this is a folder or file"),
        (["plan", "a\nb/c"], "Error: a\\nb/c: no such file or folder, and not ENTITY/PROJECT"),
    ],
    ids=["out-folder-missing", "path-not-there", "empty-target", "folder-to-apply", "newline"],
)
def test_bad_targets_and_outputs_are_one_line_before_anything_is_read(run, live, args, message):
    before = len(live.requests)  # the server is there: nothing may reach it
    if args[1] == "fixtures":
        Path("fixtures").mkdir()
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(message)
    assert len(live.requests) == before
