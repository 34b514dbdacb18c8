"""What the page shows per session (memory/app/activity.py): deliveries from the access log,
the prompt each answered (from the transcript, redacted), what a harvest did, by scope."""

from __future__ import annotations

import json
from pathlib import Path

from memory.app import Memories
from memory.store import NewMemory, Store


def test_sessions_name_only_what_this_project_and_global_were_shown(store: Store):
    ours = store.add(NewMemory("Our port is 5433", scope="/p/ours"))
    theirs = store.add(NewMemory("Their port is 6000", scope="/p/theirs"))
    Memories(store, "/p/ours").shown("s-ours", [ours.id])
    Memories(store, "/p/theirs").shown("s-theirs", [theirs.id], "brief")
    listed = Memories(store, "/p/ours").sessions()["sessions"]
    assert [s["session_id"] for s in listed] == ["s-ours"] and listed[0]["surfaced"] == 1
    assert Memories(store, "/p/ours").session("s-theirs")["deliveries"] == []
    assert {s["session_id"] for s in Memories(store, "/p/ours", all_projects=True).sessions()["sessions"]} == {
        "s-ours",
        "s-theirs",
    }


def test_a_delivery_shows_the_prompt_it_answered_redacted(store: Store, tmp_path: Path):
    m = store.add(NewMemory("The deploy key lives in the vault", scope="/p/ours"))
    transcript = tmp_path / "t.jsonl"
    line = {
        "type": "user",
        "message": {"role": "user", "content": "where is the deploy key? my token is ghp_" + "a1B2" * 9},
        "timestamp": "2020-01-01T00:00:00.000Z",
        "sessionId": "s1",
        "uuid": "u0",
    }
    transcript.write_text(json.dumps(line) + "\n")
    store.conn.execute(
        "INSERT INTO transcript_cursors (path, session_id, offset, updated_at) VALUES (?, 's1', 0, 0)",
        (str(transcript),),
    )
    Memories(store, "/p/ours").shown("s1", [m.id])
    (delivery,) = Memories(store, "/p/ours").session("s1")["deliveries"]
    assert delivery["kind"] == "surface" and delivery["memories"][0]["id"] == m.id
    assert delivery["prompt"].startswith("where is the deploy key?") and "a1B2a1B2" not in delivery["prompt"]


def test_the_pulse_changes_when_a_memory_arrives_and_only_then(store: Store):
    app = Memories(store, "/p/ours")
    first, again = app.pulse(), app.pulse()
    assert first == again
    app.add("A new memory")
    assert app.pulse()["newest"] > first["newest"]


def test_a_delivery_shows_the_prompt_recorded_with_it_without_any_transcript(store: Store):
    m = store.add(NewMemory("The deploy key lives in the vault", scope="/p/ours"))
    key = "sk-ant-api03-" + "Qw7e" * 12
    Memories(store, "/p/ours").shown("s1", [m.id], "surface", f"where is the deploy key? here is mine: {key} " * 20)
    (delivery,) = Memories(store, "/p/ours").session("s1")["deliveries"]
    assert delivery["prompt"].startswith("where is the deploy key? here is mine: ")
    assert len(delivery["prompt"]) <= 300 and "Qw7eQw7e" not in delivery["prompt"]
    stored = [r[0] for r in store.conn.execute("SELECT prompt FROM access_log")]
    assert stored == [delivery["prompt"]]


def test_a_recorded_prompt_wins_over_a_transcript_line_with_the_same_time(store: Store, tmp_path: Path):
    first = store.add(NewMemory("The deploy key lives in the vault", scope="/p/ours"))
    second = store.add(NewMemory("Backups run at noon", scope="/p/ours"))
    transcript = tmp_path / "t.jsonl"
    lines = [
        {
            "type": "user",
            "message": {"role": "user", "content": text},
            "timestamp": "2020-01-01T00:00:00.000Z",
            "sessionId": "s1",
            "uuid": f"u{n}",
        }
        for n, text in enumerate(["where is the deploy key?", "when do backups run?"])
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store.conn.execute(
        "INSERT INTO transcript_cursors (path, session_id, offset, updated_at) VALUES (?, 's1', 0, 0)",
        (str(transcript),),
    )
    app = Memories(store, "/p/ours")
    store.clock = lambda: 1577836800.0  # both transcript lines carry this time
    app.shown("s1", [first.id], "surface", "where is the deploy key?")
    store.clock = lambda: 1577836805.0  # the next prompt, later
    app.shown("s1", [second.id], "surface", "when do backups run?")
    assert [d["prompt"] for d in app.session("s1")["deliveries"]] == [
        "where is the deploy key?",
        "when do backups run?",
    ]
