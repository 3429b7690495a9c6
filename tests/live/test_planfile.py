"""Saved plans: written object by object, named only when complete, read back and checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import FIXTURES, MIGRATION, REPO, TARGET, returns_soon, writes

from wbmigrate import find_mapping
from wbmigrate.engine.model import Mode, Options
from wbmigrate.live.client import View
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.planfile import (
    FORMAT,
    PlanFile,
    PlanFileError,
    check_options,
    check_plan,
    load_plan,
    migration_digest,
    saved_migration,
)
from wbmigrate.plan import Status, plan_one
from wbmigrate.plan_json import signature

SPEC = (FIXTURES / "cases" / "report" / "line-metrics" / "before.json").read_text()
TRIGGER = json.loads((FIXTURES / "demo-project" / "automations" / "token-max.json").read_text())
OPTIONS = Options(
    mode=Mode.REPLACE, project_keys=frozenset({"loss", "acc"}), rewrite_text=True, annotate=False
)


def view(view_id: str, title: str, spec: str, type_: str = "runs") -> LiveObject:
    node = {"id": view_id, "name": view_id.lower(), "type": type_, "displayName": title}
    node |= {"spec": spec, "updatedAt": "2026-11-01T00:00:00Z"}
    return LiveObject.of_view(View.from_node(node, "team", "async-rl"))


OBJECTS = [
    view("V1", "Line metrics", SPEC),
    view("V2", "Empty", '{"version": 5, "blocks": []}'),
    view("V3", "Broken", "{not json"),
    view("V44", "Line metrics", SPEC, "runs/draft"),
    LiveObject.of_trigger(TRIGGER, "team", "async-rl"),
]


def planned(migration=MIGRATION):
    return [(plan_one(obj.source(), migration, OPTIONS), obj) for obj in OBJECTS]


HOST = "https://api.wandb.ai"


def save(path, items, migration=MIGRATION, options=OPTIONS, target=TARGET, drafts=True):
    plan = PlanFile(path, migration, options, target, drafts, HOST)
    for p, obj in items:
        plan.add(p, obj)
    plan.close()
    return path


def test_only_a_closed_plan_takes_its_name(tmp_path):
    path = tmp_path / "plan.json"
    plan = PlanFile(path, MIGRATION, OPTIONS, TARGET, True, HOST)
    for p, obj in planned():
        plan.add(p, obj)
        assert not path.exists()
    (temporary,) = tmp_path.iterdir()
    assert temporary.name.startswith(".plan.json.")
    plan.close()
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_discard_leaves_no_plan_and_no_temporary(tmp_path):
    plan = PlanFile(tmp_path / "plan.json", MIGRATION, OPTIONS, TARGET, True, HOST)
    for p, obj in planned()[:2]:
        plan.add(p, obj)
    plan.discard()
    assert list(tmp_path.iterdir()) == []


def test_the_saved_document_parses(tmp_path):
    items = planned()
    document = json.loads(save(tmp_path / "plan.json", items).read_text())
    assert (document["format"], document["target"], document["drafts"]) == (FORMAT, TARGET, True)
    assert document["mapping"] == {"id": "prime-rl", "from": "2025.07.07", "to": "2026.10.25"}
    assert document["migration_sha256"] == migration_digest(MIGRATION)
    assert [o["id"] for o in document["objects"]] == [obj.id for obj in OBJECTS]
    assert [o["status"] for o in document["objects"]] == [p.status.value for p, _ in items]
    for entry, obj in zip(document["objects"], OBJECTS, strict=True):
        fingerprint = obj.fingerprint
        assert entry["fingerprint"] == {"updatedAt": obj.updated_at, "sha256": fingerprint.sha256}
    counts = {
        k: document["summary"][k] for k in ("objects", "to_change", "unchanged", "unreadable")
    }
    assert counts == {"objects": 5, "to_change": 3, "unchanged": 1, "unreadable": 1}


def test_load_plan_reads_back_what_was_saved(tmp_path):
    items = planned()
    saved = load_plan(save(tmp_path / "plan.json", items, drafts=False))
    mapping = (saved.mapping_id, saved.start, saved.end)
    assert (saved.target, mapping) == (TARGET, ("prime-rl", "2025.07.07", "2026.10.25"))
    assert saved.options == OPTIONS
    assert saved.drafts is False
    assert saved.migration_sha256 == migration_digest(MIGRATION)
    changed = [(p, obj) for p, obj in items if p.status is Status.CHANGES]
    assert list(saved.objects) == [obj.id for _, obj in changed] == ["V1", "V44", TRIGGER["id"]]
    for p, obj in changed:
        entry = saved.objects[obj.id]
        assert entry.fingerprint == obj.fingerprint
        assert entry.changes == signature(p.result.changes)
        assert (entry.kind, entry.name) == (obj.kind, obj.source().name)
    assert saved.objects["V44"].name == "Line metrics (draft)"


def test_an_empty_plan_round_trips(tmp_path):
    saved = load_plan(save(tmp_path / "plan.json", [], options=Options()))
    assert saved.objects == {}
    assert saved.options == Options()


def assert_one_line(error: pytest.ExceptionInfo[PlanFileError]) -> None:
    assert "\n" not in str(error.value)
    assert "Traceback" not in str(error.value)


@pytest.mark.parametrize(
    "document",
    [[], None, "plan", {"objects": []}, {"format": "wbmigrate-plan/0"}, {"format": FORMAT[:-1]}],
    ids=["list", "null", "string", "no-format", "old-format", "truncated-format"],
)
def test_load_plan_refuses_a_json_that_is_not_a_plan(tmp_path, document):
    path = tmp_path / "other.json"
    path.write_text(json.dumps(document))
    with pytest.raises(PlanFileError, match="is not a wbmigrate plan") as error:
        load_plan(path)
    assert_one_line(error)


def damage(document, where):
    *parents, key = where
    for part in parents:
        document = document[part]
    if isinstance(key, tuple):
        document[key[0]] = key[1]
    else:
        del document[key]


DAMAGE = {
    "no-options": ("options",),
    "no-target": ("target",),
    "no-mapping": ("mapping",),
    "no-mapping-to": ("mapping", "to"),
    "no-digest": ("migration_sha256",),
    "no-drafts": ("drafts",),
    "no-objects": ("objects",),
    "object-without-id": ("objects", 0, "id"),
    "object-without-fingerprint": ("objects", 0, "fingerprint"),
    "fingerprint-without-sha": ("objects", 0, "fingerprint", "sha256"),
    "fingerprint-null": ("objects", 0, ("fingerprint", None)),
    "change-without-pointer": ("objects", 0, "changes", 0, "pointer"),
    "no-mode": ("options", "mode"),
    "unknown-mode": ("options", ("mode", "sideways")),
    "project-keys-number": ("options", ("project_keys", 3)),
}


@pytest.mark.parametrize("where", list(DAMAGE.values()), ids=list(DAMAGE))
def test_load_plan_refuses_a_damaged_plan(tmp_path, where):
    path = save(tmp_path / "plan.json", planned())
    document = json.loads(path.read_text())
    damage(document, where)
    path.write_text(json.dumps(document))
    with pytest.raises(PlanFileError, match="damaged plan") as error:
        load_plan(path)
    assert_one_line(error)


def test_load_plan_refuses_objects_that_are_not_objects(tmp_path):
    path = save(tmp_path / "plan.json", planned())
    document = json.loads(path.read_text())
    document["objects"].append(1)
    path.write_text(json.dumps(document))
    with pytest.raises(PlanFileError, match="damaged plan"):
        load_plan(path)


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"", b'{"format": "wbmigrate-plan/1", ', b"\xff\xfe\x00plan", None],
    ids=["not-json", "empty", "cut-short", "not-utf8", "missing"],
)
def test_load_plan_refuses_unreadable_text(tmp_path, content):
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(PlanFileError, match="cannot read plan") as error:
        load_plan(path)
    assert_one_line(error)


def test_a_plan_for_another_target_is_refused(tmp_path):
    saved = load_plan(save(tmp_path / "plan.json", planned()))
    check_plan(saved, TARGET, MIGRATION)  # the same target and mapping: accepted
    with pytest.raises(PlanFileError, match="the plan is for team/async-rl, not team/other"):
        check_plan(saved, "team/other", MIGRATION)
    with pytest.raises(PlanFileError, match="not team/other"):
        saved_migration(saved, find_mapping("prime-rl"), "team/other")


def test_a_plan_made_with_another_mapping_range_is_refused(tmp_path):
    saved = load_plan(save(tmp_path / "plan.json", planned()))
    shorter = find_mapping("prime-rl").migration(to="2026.08.21")
    with pytest.raises(PlanFileError, match=r"prime-rl 2025\.07\.07\.\.2026\.10\.25 changed"):
        check_plan(saved, TARGET, shorter)


def test_saved_migration_composes_the_plans_range(tmp_path):
    shorter = find_mapping("prime-rl").migration(to="2026.08.21")
    items = planned(migration=shorter)
    saved = load_plan(save(tmp_path / "plan.json", items, migration=shorter))
    migration = saved_migration(saved, find_mapping("prime-rl"), TARGET)
    assert (migration.start.version, migration.end.version) == ("2025.07.07", "2026.08.21")
    assert migration_digest(migration) == migration_digest(shorter)


def test_saved_migration_refuses_a_mapping_that_changed(tmp_path):
    saved = load_plan(save(tmp_path / "plan.json", planned()))
    text = (REPO / "mappings" / "prime-rl.yaml").read_text()
    edited = tmp_path / "prime-rl.yaml"
    edited.write_text(text.replace("off_policy/mean: staleness/rollout/mean", "off_policy/mean: x"))
    with pytest.raises(PlanFileError, match="changed since the plan was made; make a new plan"):
        saved_migration(saved, find_mapping(edited), TARGET)


def test_migration_digest_is_stable_across_loads(tmp_path):
    copy = tmp_path / "prime-rl.yaml"
    copy.write_text((REPO / "mappings" / "prime-rl.yaml").read_text())
    first = migration_digest(find_mapping("prime-rl").migration())
    assert first == migration_digest(find_mapping("prime-rl").migration())
    assert first == migration_digest(find_mapping(copy).migration())
    assert first != migration_digest(find_mapping("prime-rl").migration(to="2026.08.21"))


def test_migration_digest_does_not_depend_on_hash_randomisation():
    code = "from wbmigrate import find_mapping\nfrom wbmigrate.live.planfile import "
    code += "migration_digest\nprint(migration_digest(find_mapping('prime-rl').migration()))"
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert digests == {migration_digest(MIGRATION)}


def test_a_mapping_whose_boundary_date_moved_is_refused(tmp_path):
    text = (REPO / "mappings" / "prime-rl.yaml").read_text()
    moved = tmp_path / "prime-rl.yaml"
    moved.write_text(text.replace("date: 2026-10-25", "date: 2026-10-26"))
    migration = find_mapping(moved).migration()
    before, after = (plan_one(OBJECTS[0].source(), m, Options()) for m in (MIGRATION, migration))
    assert signature(before.result.changes) != signature(after.result.changes)  # writes differ
    assert migration_digest(migration) != migration_digest(MIGRATION)


def test_a_plan_nested_too_deeply_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(PlanFileError, match="nested too deeply"):
        load_plan(path)


# --- a saved plan as an attacker edits it, applied against the local server -------------------


@pytest.fixture
def hosts(tmp_path, monkeypatch, clock):
    """Two W&B hosts holding the same organisation (runs on both sides of the boundary); the
    environment points at the first."""
    from helpers import organisation

    from testserver import WandbServer

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("NETRC", raising=False)
    monkeypatch.delenv("WANDB_ENTITY", raising=False)
    monkeypatch.chdir(tmp_path)
    first, *more = organisation()
    other, *more_other = organisation()
    with WandbServer(first, more=more) as a, WandbServer(other, more=more_other) as b:
        point_at(monkeypatch, a)
        yield a, b


def point_at(monkeypatch, server):
    monkeypatch.setenv("WANDB_API_KEY", server.api_key)
    monkeypatch.setenv("WANDB_BASE_URL", server.url)


def specs(server):
    return {i: v["spec"] for i, v in server.state.views.items()}


def plant(path, old, new):
    """Replace `old` by `new` everywhere in a saved plan, as an attacker with the file would:
    in the census and in the note text of every change, so both still agree."""
    path.write_text(path.read_text().replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))


def planted_run(hosts, run, tmp_path, url):
    """A plan of the host with the last old-key run's link replaced by `url`."""
    a, _ = hosts
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    plant(tmp_path / "plan.json", f"{a.url}/team/async-rl/runs/grpo-old-build", url)
    return tmp_path / "plan.json"


PLANTED = {
    "another-host": "https://evil.example/team/async-rl/runs/grpo-old-build",
    "breaks-out-into-an-image": "https://x.example/r) ![pixel](https://evil.example/p.png",
}


@pytest.mark.parametrize("url", list(PLANTED.values()), ids=list(PLANTED))
def test_a_planted_link_in_a_saved_plan_is_refused_and_never_written(hosts, run, tmp_path, url):
    a, _ = hosts
    path = planted_run(hosts, run, tmp_path, url)
    before = specs(a)
    shown = run("show", "plan.json")
    assert (shown.exit_code, shown.stdout) == (2, "")
    assert shown.stderr.startswith(f"Error: {path.name}: a run's link is not the project's: ")
    assert shown.stderr.count("\n") == 1
    applied = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert (applied.exit_code, applied.stderr.splitlines()[-1]) == (2, shown.stderr.strip())
    assert specs(a) == before
    assert "evil.example" not in json.dumps(specs(a))


def test_a_plan_made_on_another_host_is_refused(hosts, run, monkeypatch):
    a, b = hosts
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    point_at(monkeypatch, b)
    before = specs(b)
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: the plan was made on {a.url}, not {b.url}"
    assert specs(b) == before
    assert writes(b) == []


def test_a_plan_on_its_own_host_still_applies(hosts, run, tmp_path):
    a, _ = hosts
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    assert json.loads((tmp_path / "plan.json").read_text())["host"] == a.url
    result = run("apply", TARGET, "--plan", "plan.json", "--yes")
    assert result.exit_code == 0, result.output
    assert f"[grpo-old-build]({a.url}/team/async-rl/runs/grpo-old-build)" in json.dumps(specs(a))


def test_a_plan_that_records_no_host_is_refused(tmp_path):
    path = save(tmp_path / "plan.json", planned())
    document = json.loads(path.read_text())
    del document["host"]
    path.write_text(json.dumps(document))
    with pytest.raises(PlanFileError, match="records no host") as error:
        load_plan(path)
    assert_one_line(error)


def test_a_fifo_given_as_a_plan_is_refused_without_waiting(tmp_path):
    os.mkfifo(tmp_path / "plan.json")
    with pytest.raises(PlanFileError, match="a FIFO is not a regular file") as error:
        returns_soon(load_plan, tmp_path / "plan.json")
    assert_one_line(error)


@pytest.mark.parametrize(
    ("given", "expected"),
    [({"mode"}, "--mode differs from"), ({"mode", "drafts"}, "--mode and --drafts differ from")],
    ids=["one", "two"],
)
def test_options_that_contradict_the_plan_are_named_in_english(tmp_path, given, expected):
    saved = load_plan(save(tmp_path / "plan.json", planned()))
    with pytest.raises(PlanFileError, match=f"^{expected} the saved plan, which"):
        check_options(saved, Options(), drafts=False, given=given)


def test_a_plan_saved_in_the_first_layout_still_loads(tmp_path):
    """wbmigrate-plan/1 differs only in its summary's counts, which `apply --plan` never reads."""
    path = save(tmp_path / "plan.json", planned())
    document = json.loads(path.read_text())
    document["format"] = "wbmigrate-plan/1"
    path.write_text(json.dumps(document))
    assert load_plan(path) == load_plan(save(tmp_path / "again.json", planned()))


def test_a_plan_shows_each_objects_link_and_show_shows_it_again(hosts, run):
    a, _ = hosts
    planned = run("plan", TARGET, "--out", "plan.json")
    report_id = a.state.find("Async health")
    link = f"{a.url}/team/async-rl/reports/Async-health--{report_id.rstrip('=')}"
    assert f'report "Async health"  ({report_id})  {link}\n' in planned.stdout
    assert run("show", "plan.json").stdout == planned.stdout
    markdown = run("show", "plan.json", "--format", "markdown").stdout
    assert f"<{link}>" in markdown


@pytest.mark.parametrize(
    "url",
    ["https://evil.example/team/async-rl/automations", "{a}/team/async-rl/automations> ![x](y)"],
    ids=["another-host", "breaks-out"],
)
def test_a_planted_object_link_in_a_saved_plan_is_refused(hosts, run, tmp_path, url):
    a, _ = hosts
    assert run("plan", TARGET, "--out", "plan.json").exit_code == 0
    plant(tmp_path / "plan.json", f"{a.url}/team/async-rl/automations", url.format(a=a.url))
    shown = run("show", "plan.json")
    assert (shown.exit_code, shown.stdout) == (2, "")
    assert shown.stderr.startswith("Error: plan.json: an object's link is not the project's: ")


def test_plan_json_matches_its_schema(hosts, run, tmp_path):
    """Folder and live plans (a census, links, an unreadable object), printed and shown."""
    import jsonschema

    schema = json.loads((REPO / "schemas" / "plan.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    a, _ = hosts
    a.state.add_view("{not json", "runs", "Broken")
    live = run("plan", TARGET, "--format", "json", "--out", "plan.json").stdout
    files = run("plan", str(FIXTURES / "demo-project"), "--format", "json").stdout
    shown = run("show", "plan.json", "--format", "json").stdout
    for document in map(json.loads, (live, files, shown)):
        jsonschema.validate(document, schema)
    assert json.loads(live)["summary"]["unreadable"] == 1
    assert all(o["url"].startswith(f"{a.url}/team/async-rl") for o in json.loads(live)["objects"])
