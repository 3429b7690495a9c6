"""A report in W&B's 2019 shape (`global` + `panelGroups`) on the local W&B-compatible server:
planned, applied as the engine says, read back by the wandb SDK (whose `BetaReport.sections`
reads `panelGroups`), and rolled back byte for byte."""

from __future__ import annotations

import json

from helpers import FIXTURES, TARGET, expected_spec, snapshot

LEGACY = FIXTURES / "cases/report/legacy-2019/before.json"


def test_a_2019_report_is_migrated_read_back_and_rolled_back(run, live):
    view_id = live.state.add_view(LEGACY.read_text(), "runs", "Staleness 2019")
    before = snapshot(live)
    expected = expected_spec(live, view_id)
    plan = run("plan", TARGET)
    assert 'report "Staleness 2019"' in plan.stdout
    assert "no text block for the migration note" in plan.stdout
    assert run("apply", TARGET, "--yes", "--backup-dir", "backups").exit_code == 0
    assert live.state.views[view_id]["spec"] == expected

    import wandb

    api = wandb.Api(api_key=live.api_key, overrides={"base_url": live.url, "entity": "team"})
    (report,) = [r for r in api.reports(TARGET) if r.display_name == "Staleness 2019"]
    key = report.sections[0]["panels"]["views"]["0"]["config"][0]["config"]["key"]
    assert key == "staleness/rollout/mean"

    assert run("rollback", "backups", "--yes").exit_code == 0
    assert snapshot(live)[0] == before[0]
    assert json.loads(live.state.views[view_id]["spec"]) == json.loads(LEGACY.read_text())
