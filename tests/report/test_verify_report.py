"""`verify`'s SARIF and GitHub annotations, by the writers `check` uses: capped per level."""

from __future__ import annotations

import json

from wbmigrate.report import verify as report
from wbmigrate.verify import Check, Finding, Verification


def found(count: int, check: Check = Check.SPLIT_LOST) -> list[Finding]:
    return [
        Finding(check, f'report "R{n}"', f"r{n}.json", ("panel",), "/p", "merged")
        for n in range(count)
    ]


def test_github_caps_annotations_per_level_as_check_does():
    run = Verification("t/p", [], found(12) + found(2, Check.UNLOGGED_KEY), "", files=True)
    lines = report.to_github(run).splitlines()
    assert sum(line.startswith("::error file=r") for line in lines) == 10
    assert sum(line.startswith("::warning file=r") for line in lines) == 2
    assert lines[-1] == (
        "::notice title=wbmigrate::2 more errors are not annotated (GitHub shows 10 per level); "
        "run `wbmigrate verify` locally or see the SARIF upload for the full list"
    )


def test_github_of_live_objects_names_no_file():
    (line,) = report.to_github(Verification("t/p", [], found(1), "", files=False)).splitlines()
    assert line == ('::error title=wbmigrate verify split-lost::report "R0" › panel: merged')


def test_sarif_locates_live_objects_logically_and_files_physically():
    run = Verification("t/p", [], found(1), "", files=True)
    (result,) = json.loads(report.to_sarif(run))["runs"][0]["results"]
    assert result["ruleId"] == "split-lost"
    assert result["locations"] == [
        {
            "logicalLocations": [
                {"fullyQualifiedName": 't/p › report "R0" › panel', "kind": "object"}
            ],
            "physicalLocation": {"artifactLocation": {"uri": "r0.json"}},
        }
    ]
