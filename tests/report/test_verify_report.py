"""`verify`'s SARIF and GitHub annotations, by the writers `check` uses: capped per level."""

from __future__ import annotations

import json

from helpers import rendered_markdown

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


def test_markdown_makes_no_link_image_or_cell_of_server_text():
    hostile = "[click](https://evil.example/a) ![p](https://evil.example/p.png) \\| \\[x](//e.x)"
    finding = Finding(Check.SPLIT_LOST, f'report "{hostile}"', "V1", (hostile,), "/p", hostile)
    markdown = report.to_markdown(Verification("t/p", [], [finding], "", files=False))
    links, images, cells = rendered_markdown(markdown)
    assert (links, images, set(cells)) == ([], 0, {4})
