"""What `update` says afterwards matches what it kept: a history to look at, or none."""

from __future__ import annotations

from cli_helpers import add, project, run  # noqa: F401  (project: autouse fixture)


def test_update_points_at_history_only_when_it_kept_the_previous_version(capsys):
    mid = add(capsys, "the release train leaves on Thursdays")
    code, out, _ = run(capsys, "update", str(mid), "--content", "the release train leaves on Wednesdays")
    assert code == 0 and f"history {mid}" in out
    code, out, _ = run(capsys, "update", str(mid), "--content", "the release train leaves on Fridays", "--forget-old")
    assert code == 0 and "history" not in out and "gone for good" in out
