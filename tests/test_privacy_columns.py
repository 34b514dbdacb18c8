"""The redaction choke point (memory.store.columns): every TEXT column of the schema is either
redacted on write by the connection, whoever writes it, or kept for a stated reason; hostile
characters are normalised there too; and text deleted for good leaves the database file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory import config as config_mod
from memory.app import transfer
from memory.embed import HashEmbedder
from memory.store import NewMemory, Store, backup, columns, graph, jobs
from memory.store import decisions as decisions_mod

TOKEN = "ghp_R8f2kLq9Zx7mN3vB5cT1yW4hJ6gD0sAe2Pq4"  # a made-up token with GitHub's shape
CORE = TOKEN[4:]


def open_store(home: Path, **settings: Any) -> Store:
    return Store.open(config_mod.load(home=home, env={}, **settings), HashEmbedder(64))


def file_bytes(s: Store) -> bytes:
    """The database file and its WAL as they are on disk now (no checkpoint first)."""
    return b"".join(p.read_bytes() for p in s.path.parent.glob(s.path.name + "*") if p.is_file())


def text_columns(s: Store) -> list[tuple[str, str]]:
    """(table, column) of every column of the schema that can hold text: declared TEXT, or with
    no declared type (SQLite stores text there as readily)."""
    out = []
    for (table,) in s.conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"):
        if table.startswith(columns.INTERNAL_PREFIXES):
            continue
        for _, name, decl, *_ in s.conn.execute(f'PRAGMA table_info("{table}")'):
            affinity = decl.upper()
            if not any(t in affinity for t in ("INT", "REAL", "FLOA", "DOUB", "BLOB")):
                out.append((table, name))
    return out


@pytest.fixture
def full(tmp_path: Path) -> Store:
    """A store with a row in every table."""
    s = open_store(tmp_path / "home")
    m = s.add(NewMemory("The deploy runs from the ops repo", scope="global", entities=[("ops repo", "project")]))
    s.update(m.id, content="The deploy runs from the infra repo")
    s.record_activation([m.id], session_id="s-1")
    with s.tx.atomic() as conn:
        graph.relate(conn, "global", "billing", "uses", "postgres", s.clock())
        graph.upsert_entity(conn, "global", "postgres", "tool", s.clock(), aliases=["pg"])
        conn.execute("INSERT INTO injections (session_id, memory_id, at) VALUES ('s-1', ?, 0)", (m.id,))
        conn.execute(
            "INSERT INTO transcript_cursors (path, session_id, offset, head, updated_at) VALUES ('/t.jsonl', 's', 0, 'h', 0)"
        )
        conn.execute("INSERT INTO entity_vectors (entity_id, model, vector) VALUES (1, 'hash-64', x'00')")
    d = decisions_mod.record_decision(s, "Use the config store", "one audit trail", scope="global")
    decisions_mod.record_outcome(s, d.id, "worked", "fine", scopes=["global"])
    jobs.enqueue(s, "maintain", dedup_key="maintain")
    yield s
    s.close()


def test_every_text_column_of_the_schema_is_redacted_on_write_or_kept_for_a_stated_reason(full):
    missing = [tc for tc in text_columns(full) if tc not in columns.POLICY]
    assert missing == [], f"say in memory.store.columns.POLICY what happens to {missing}"
    for key, policy in columns.POLICY.items():  # a kept column says why
        assert policy in (columns.TEXT, columns.LABEL, columns.JSON, columns.LABELS) or (
            policy[0] == columns.KEEP and len(policy[1]) > 10
        ), key


def test_the_fixture_fills_every_table_the_column_test_writes_to(full):
    empty = [t for t in {t for t, _ in text_columns(full)} if not full.conn.execute(f'SELECT 1 FROM "{t}"').fetchone()]
    assert empty == []


def _first_row_key(s: Store, table: str) -> tuple[str, list[Any]]:
    pk = [r[1] for r in s.conn.execute(f'PRAGMA table_info("{table}")') if r[5]]
    cols = pk or ["rowid"]
    row = s.conn.execute(f'SELECT {", ".join(cols)} FROM "{table}" LIMIT 1').fetchone()
    return " AND ".join(f"{c} = ?" for c in cols), list(row)


def test_a_secret_written_by_raw_sql_into_any_redacted_column_is_stored_redacted(full):
    """Not through the store's writers: a plain UPDATE on the connection, as a module added later
    might write. Every TEXT and JSON column of the schema is tried."""
    tried = []
    for table, column in text_columns(full):
        policy = columns.policy_of(table, column)
        if policy == columns.KEEP or table in ("memory_fts",):
            continue
        where, key = _first_row_key(full, table)
        value = (
            json.dumps({f"k {TOKEN}": [f"v {TOKEN}"]})
            if policy in (columns.JSON, columns.LABELS)
            else f"see {TOKEN} here"
        )
        with full.tx.atomic() as conn:
            conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE {where}', (value, *key))
        values = [r[0] for r in full.conn.execute(f'SELECT "{column}" FROM "{table}"')]  # a key may have changed
        assert not any(CORE in str(v) for v in values), (table, column)
        (stored,) = [v for v in values if "[REDACTED:" in str(v) or "[redacted:" in str(v)][:1] or [None]
        assert stored is not None, (table, column, values)
        if policy in (columns.JSON, columns.LABELS):
            assert json.loads(stored) == {"k [REDACTED:github-token]": ["v [REDACTED:github-token]"]}
        tried.append((table, column))
    assert len(tried) >= 20
    full.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert CORE.encode() not in file_bytes(full)


@pytest.mark.parametrize("label", ["DxMUcF9BJhTdtWY!cR", "MCRoJp1HxTN1cG"])
def test_a_bare_generated_value_in_a_label_field_is_redacted_where_prose_would_keep_it(full, label):
    """A password cut from its line ("password: |" above it) arrives alone in a category."""
    m = full.add(NewMemory(f"note {label}", category=label, tags=[label]))
    assert m.category == "[REDACTED:secret]" and m.tags == ["[redacted:secret]"]
    with full.tx.atomic() as conn:
        rid = graph.relate(conn, "global", f"svc {label}", label, "db", full.clock())
        (t,) = conn.execute("SELECT type FROM relations WHERE id = ?", (rid,)).fetchone()
    assert label.lower() not in t.lower()


@pytest.mark.parametrize(
    "label", ["PostgreSQL15", "ISO-8601", "v2.3.1-rc1", "Win32API", "gpt-4o-mini", "OAuth2", "x86_64"]
)
def test_an_ordinary_label_with_digits_is_kept(full, label):
    assert full.add(NewMemory(f"note {label}", category=label)).category == label


def test_a_kept_column_is_written_as_given(full):
    scope = "/home/u/src/Rk9x2LmQ7vZ3pT8wN4yB6cH1"  # a project folder with a random-looking name
    m = full.add(NewMemory("A note about the build", scope=scope, session_id="0b7c1a52-9a43-4d6e-8f0e-2f1d9c3b7a61"))
    assert (m.scope, m.session_id) == (scope, "0b7c1a52-9a43-4d6e-8f0e-2f1d9c3b7a61")


def test_an_insert_and_an_update_of_every_shape_the_code_uses_are_mapped_to_their_columns():
    plan = columns.plan
    T, J, K, L = columns.TEXT, columns.JSON, columns.KEEP, columns.LABEL
    assert plan("INSERT INTO memories (content, scope, metadata, tags) VALUES (?, ?, ?, ?)") == (
        T,
        K,
        J,
        columns.LABELS,
    )
    assert plan("INSERT OR REPLACE INTO meta (key, value) VALUES ('a', ?), ('b', ?)") == (T, T)
    assert plan(
        "INSERT INTO memory_vec (rowid, embedding, scope, coarse) VALUES (?, ?, ?, vec_quantize_binary(?))"
    ) == (
        K,
        K,
        K,
        K,
    )
    assert plan(
        "INSERT INTO access_log (memory_id, at, kind, session_id) SELECT ?, ?, ?, ? "
        "WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?)"
    ) == (T, T, K, K, None)
    assert plan("UPDATE memories SET superseded_by = coalesce(?, superseded_by), category = ? WHERE id = ?") == (
        T,
        L,
        None,
    )
    assert plan(
        "INSERT INTO transcript_cursors (path, head) VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET head = excluded.head"
    ) == (K, K)
    assert plan("UPDATE relations SET type = 'a,b' WHERE id = ?") == (None,)
    assert plan("SELECT * FROM memories WHERE content = ?") is None
    assert plan("DELETE FROM memories WHERE id = ?") is None


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO memories VALUES (?, ?)",
        "INSERT INTO memories (content) VALUES (?) ON CONFLICT DO UPDATE SET content = ?",
        "INSERT INTO memories (content, subject) VALUES (?)",
    ],
)
def test_a_write_the_choke_point_cannot_map_is_refused_rather_than_written_unchecked(sql):
    with pytest.raises(columns.UnplannedWrite):
        columns.plan(sql)


def test_a_scratch_database_in_memory_is_not_cleaned(tmp_path):
    from memory.store import db

    conn = db.connect(":memory:", vectors=False)
    conn.execute("CREATE TABLE t (body TEXT)")
    conn.execute("INSERT INTO t (body) VALUES (?)", (TOKEN,))
    assert conn.execute("SELECT body FROM t").fetchone()[0] == TOKEN


# -- hostile strings ----------------------------------------------------------------------------

HOSTILE = {
    "a NUL": ("ab\x00cd", "abcd"),
    "a lone surrogate": ("half \ud83d of an emoji", "half \ufffd of an emoji"),
    "a zero-width space inside a token": (f"token {TOKEN[:12]}\u200b{TOKEN[12:]}", "token [REDACTED:github-token]"),
    "a word joiner": ("pass\u2060word", "password"),
    "a bidi override": ("abc\u202edef", "abcdef"),
    "a soft hyphen": ("de\u00adploy", "deploy"),
    "a BOM": ("\ufeffnote", "note"),
    "a zero-width joiner between Han characters": ("陈\u200d爱丽", "陈爱丽"),
    "a zero-width non-joiner inside a Latin word": ("pass\u200cword", "password"),
}
KEPT = [
    "family 👨\u200d👩\u200d👧 emoji",  # ZWJ between emoji joins them
    "می\u200cخواهم",  # Persian: ZWNJ between letters
    "क्\u200dष",  # Devanagari: ZWJ asks for a half form
    "👩\u200d💻 at work",  # woman technologist
    "עברית \u200fRTL mark",  # an RLM stays
    "tabs\tand\nnew lines",
    "中文：密码策略",
]


@pytest.mark.parametrize("name", list(HOSTILE))
@pytest.mark.parametrize("field", ["content", "category", "subject", "tags", "metadata"])
def test_a_hostile_character_is_normalised_in_every_field_a_caller_fills(tmp_path, name, field):
    given, stored = HOSTILE[name]
    with open_store(tmp_path / "home") as s:
        kw: dict[str, Any] = {"content": f"note {field}"}
        kw[field] = {
            "content": given,
            "category": given,
            "subject": given,
            "tags": [given],
            "metadata": {given: given},
        }[field]
        m = s.add(NewMemory(**kw))
        got = {
            "content": m.content,
            "category": m.category,
            "subject": m.subject,
            "tags": m.tags[0] if m.tags else "",
            "metadata": list(m.metadata.items())[0][1] if m.metadata else "",
        }[field]
    assert got == (stored.lower() if field == "tags" else stored)


@pytest.mark.parametrize("text", KEPT)
def test_text_whose_invisible_characters_carry_meaning_is_kept_exactly(tmp_path, text):
    with open_store(tmp_path / "home") as s:
        assert s.add(NewMemory(text)).content == text


def test_a_hostile_query_searches_instead_of_failing(tmp_path):
    from memory.retrieval import ranking

    with open_store(tmp_path / "home") as s:
        s.add(NewMemory("the deploy checklist"))
        for q in ("deploy \ud800", "dep\x00loy", "de\u200bploy"):
            ranking.search(s, ranking.Query(q, ["global"]))


def test_what_is_accepted_survives_export_import_and_backup_unchanged(tmp_path):
    home = tmp_path / "home"
    texts = [*KEPT, *(stored for _, stored in HOSTILE.values())]
    with open_store(home) as s:
        for i, t in enumerate(texts):
            s.add(NewMemory(t, category=f"c{i}", subject=t[:50], tags=[t[:20]], metadata={"k": t}, scope="global"))
        s.add(NewMemory("from a hostile caller", category="a\ud800b", subject="x\x00y", metadata={"z\u200bw": "q"}))
        result = backup.backup(s)
        exported = [json.dumps(r, ensure_ascii=False) for r in transfer.export_records(s)]
        before = [{k: v for k, v in r.items() if k != "id"} for r in transfer.export_records(s)]
    with open_store(tmp_path / "fresh") as s:
        report = transfer.import_lines(s, [line.encode() for line in exported], project="global")
        assert not report.rejected
        after = [{k: v for k, v in r.items() if k != "id"} for r in transfer.export_records(s)]
    assert [r["content"] for r in after] == [r["content"] for r in before]
    assert after == before
    with Store.open(config_mod.load(home=tmp_path / "restored", env={}), HashEmbedder(64), path=result.path) as b:
        assert [m.content for m in b.list(limit=100)] == [r["content"] for r in before]


# -- text deleted for good ----------------------------------------------------------------------

MISSED = "door code QX7f93ALPHAzeta"  # no rule knows it: only a deletion can take it away


def test_forget_permanent_leaves_no_byte_of_the_text_in_the_database_or_its_wal(tmp_path):
    with open_store(tmp_path / "home") as s:
        keep = s.add(NewMemory("The deploy checklist lives in the ops repo"))
        m = s.add(NewMemory(f"The lab {MISSED} opens the back door", subject=MISSED, tags=["lab"]))
        s.update(m.id, content=f"The lab {MISSED} opens both doors")  # a version holds it too
        assert MISSED.encode() in file_bytes(s)
        s.forget(m.id, permanent=True)
        raw = file_bytes(s)
        assert b"QX7f93ALPHAzeta" not in raw and b"qx7f93alphazeta" not in raw.lower()
        assert s.get(keep.id).content.startswith("The deploy")


def test_a_redacting_update_leaves_no_byte_of_the_old_text_in_the_database_or_its_wal(tmp_path):
    with open_store(tmp_path / "home") as s:
        m = s.add(NewMemory(f"The lab {MISSED} opens the back door"))
        s.update(m.id, content="The lab code opens both doors")  # an ordinary edit keeps the old text
        new = s.update(m.id, content="The lab door code is in the vault", keep_history=False)
        raw = file_bytes(s)
        assert b"QX7f93ALPHAzeta" not in raw and b"qx7f93alphazeta" not in raw.lower()
        assert new.content == "The lab door code is in the vault"
        assert s.conn.execute("SELECT count(*) FROM memory_versions WHERE memory_id = ?", (m.id,)).fetchone()[0] == 0


def test_a_backup_made_before_the_deletion_still_holds_the_text(tmp_path):
    """What the README says: deleting for good does not reach copies made earlier."""
    with open_store(tmp_path / "home") as s:
        m = s.add(NewMemory(f"The lab {MISSED} opens the back door"))
        earlier = backup.backup(s)
        s.forget(m.id, permanent=True)
        later = backup.backup(s)
    assert MISSED.encode() in earlier.path.read_bytes()
    assert MISSED.encode() not in later.path.read_bytes()
