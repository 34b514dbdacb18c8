"""What MAPLE's PostgreSQL backend will rely on, checked on a real server (tests/pg_support.py).

Each test gets a fresh database with the `vector` extension. The helpers at the top show the one
way found to fill a tsvector from tokens computed in Python (see test names for the traps).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg 3 is not installed: pip install 'psycopg[binary,pool]'")
np = pytest.importorskip("numpy")
pgvector_psycopg = pytest.importorskip("pgvector.psycopg", reason="pgvector is not installed: pip install pgvector")
psycopg_pool = pytest.importorskip("psycopg_pool", reason="psycopg_pool is not installed: pip install 'psycopg[pool]'")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pg_support import PgRole, PgServer  # noqa: E402

HalfVector = pytest.importorskip("pgvector").HalfVector
register_vector = pgvector_psycopg.register_vector


def tsvector_literal(tokens: Iterable[str]) -> str:
    """A tsvector input string keeping each token verbatim with its position (1-based, max 16383).

    Quoting: a lexeme goes inside single quotes with ' and \\ doubled. Positions are what make
    phrase queries (<->) and ts_rank_cd work; array_to_tsvector drops them.
    """
    positions: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens, start=1):
        positions.setdefault(tok, []).append(min(i, 16383))
    return " ".join(_quote_lexeme(tok) + ":" + ",".join(map(str, pos)) for tok, pos in positions.items())


def tsquery_or(terms: Iterable[Iterable[str]]) -> str:
    """A tsquery input string: each term a word or a phrase of tokens, terms joined by OR."""
    return " | ".join("(" + " <-> ".join(_quote_lexeme(t) for t in term) + ")" for term in terms)


def _quote_lexeme(tok: str) -> str:
    return "'" + tok.replace("\\", "\\\\").replace("'", "''") + "'"


def connect(url: str) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=True)
    register_vector(conn)  # after CREATE EXTENSION vector: it looks the types up in the database
    return conn


def unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- the fixtures themselves ------------------------------------------------------------------------


def test_each_test_gets_a_database_with_the_vector_extension(pg_url: str) -> None:
    with connect(pg_url) as conn:
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        assert version is not None
        assert tuple(int(p) for p in version[0].split(".")[:2]) >= (0, 7)  # halfvec arrived in 0.7
        assert conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone() == (0,)


def test_pg_role_makes_a_login_role_without_superuser_or_bypassrls(
    pg_url: str, pg_role: Callable[[str], PgRole]
) -> None:
    alice = pg_role("alice")
    with psycopg.connect(alice.url) as conn:
        assert conn.execute("SELECT current_user").fetchone() == (alice.name,)
        assert conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone() == (
            False,
            False,
        )


def test_dropping_a_test_database_drops_its_roles(pg_server: PgServer) -> None:
    url = pg_server.create_database()
    role = pg_server.create_role(url, "carol")
    pg_server.drop_database(url)
    with psycopg.connect(pg_server.admin_url) as conn:
        assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", (role.name,)).fetchone() == (0,)


# -- vector channel: halfvec + HNSW (cosine) --------------------------------------------------------


def _vector_table(conn: psycopg.Connection, vectors: np.ndarray, scopes: int) -> None:
    conn.execute(
        f"CREATE TABLE items (id bigint PRIMARY KEY, scope text NOT NULL, embedding halfvec({vectors.shape[1]}) NOT NULL)"
    )
    with conn.cursor().copy("COPY items (id, scope, embedding) FROM STDIN") as copy:
        for i, v in enumerate(vectors):
            copy.write_row((i, f"s{i % scopes}", HalfVector(v)))
    conn.execute(
        "CREATE INDEX items_hnsw ON items USING hnsw (embedding halfvec_cosine_ops) WITH (m = 16, ef_construction = 64)"
    )
    conn.execute("ANALYZE items")


def test_hnsw_on_halfvec_finds_nearly_what_exact_cosine_search_finds(pg_url: str) -> None:
    vectors, queries = unit_rows(2000, 128, seed=1), unit_rows(20, 128, seed=2)
    knn = "SELECT id FROM items ORDER BY embedding <=> %s LIMIT 10"
    with connect(pg_url) as conn:
        _vector_table(conn, vectors, scopes=1)
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + knn, (HalfVector(queries[0]),)))
        assert "Index Scan using items_hnsw" in plan
        conn.execute("SET hnsw.ef_search = 100")
        hits = 0
        for q in queries:
            approx = {r[0] for r in conn.execute(knn, (HalfVector(q),))}
            with conn.transaction():
                conn.execute("SET LOCAL enable_indexscan = off")  # the exact answer: a full scan and sort
                exact = {r[0] for r in conn.execute(knn, (HalfVector(q),))}
            hits += len(approx & exact)
    assert hits / (10 * len(queries)) >= 0.9


def test_exact_search_agrees_with_numpy_on_halfvec_rounded_vectors(pg_url: str) -> None:
    vectors, query = unit_rows(500, 384, seed=3), unit_rows(1, 384, seed=4)[0]
    with connect(pg_url) as conn:
        _vector_table(conn, vectors, scopes=1)
        conn.execute("SET enable_indexscan = off")
        got = conn.execute(
            "SELECT id, embedding <=> %s FROM items ORDER BY 2 LIMIT 10", (HalfVector(query),)
        ).fetchall()
    stored = vectors.astype(np.float16).astype(np.float64)
    q = query.astype(np.float16).astype(np.float64)
    dist = 1 - stored @ q / (np.linalg.norm(stored, axis=1) * np.linalg.norm(q))
    assert [r[0] for r in got] == list(np.argsort(dist)[:10])
    assert np.allclose([r[1] for r in got], np.sort(dist)[:10], atol=1e-6)


def test_a_numpy_query_vector_is_cast_to_halfvec_and_still_uses_the_index(pg_url: str) -> None:
    vectors = unit_rows(200, 384, seed=5)
    with connect(pg_url) as conn:
        _vector_table(conn, vectors, scopes=1)
        # register_vector sends ndarrays as `vector`; pgvector's implicit cast makes them halfvec.
        conn.execute("SET enable_seqscan = off")  # 200 rows: the planner would rather scan them all
        plan = "\n".join(
            r[0] for r in conn.execute("EXPLAIN SELECT id FROM items ORDER BY embedding <=> %s LIMIT 5", (vectors[0],))
        )
        assert "Index Scan using items_hnsw" in plan
        assert conn.execute("SELECT id FROM items ORDER BY embedding <=> %s LIMIT 1", (vectors[7],)).fetchone() == (7,)


def test_a_scope_filter_starves_hnsw_unless_iterative_scan_is_on(pg_url: str) -> None:
    vectors, queries = unit_rows(2000, 32, seed=6), unit_rows(10, 32, seed=7)
    knn = "SELECT id FROM items WHERE scope = 's3' ORDER BY embedding <=> %s LIMIT 10"
    with connect(pg_url) as conn:
        _vector_table(conn, vectors, scopes=10)
        conn.execute("SET hnsw.ef_search = 10")  # 10 candidates, about 1 in 10 in scope s3
        filtered = [len(conn.execute(knn, (HalfVector(q),)).fetchall()) for q in queries]
        assert max(filtered) < 10  # the index hands back ef_search rows; the filter runs after it
        for mode in ("relaxed_order", "strict_order"):  # pgvector >= 0.8
            conn.execute(f"SET hnsw.iterative_scan = {mode}")
            assert [len(conn.execute(knn, (HalfVector(q),)).fetchall()) for q in queries] == [10] * len(queries)


# -- keyword channel: tsvector from Python tokens + GIN ---------------------------------------------


def test_tsvector_from_python_tokens_ranks_with_a_gin_index(pg_url: str) -> None:
    docs = {
        1: "retry the fetch_user call retry twice",
        2: "retry once then give up",
        3: "cache the token in redis",
        4: "数据 据库 备份 每天",  # MAPLE's CJK bigrams for 数据库备份每天
    }
    with connect(pg_url) as conn:
        conn.execute("CREATE TABLE notes (id int PRIMARY KEY, tsv tsvector NOT NULL)")
        conn.execute("CREATE INDEX notes_tsv ON notes USING gin (tsv)")
        for i, body in docs.items():
            conn.execute("INSERT INTO notes VALUES (%s, %s::tsvector)", (i, tsvector_literal(body.split())))
        conn.execute("SET enable_seqscan = off")  # four rows: make the planner show it can use GIN
        q = tsquery_or([["retry"]])
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN SELECT id FROM notes WHERE tsv @@ %s::tsquery", (q,)))
        assert "notes_tsv" in plan
        for rank in ("ts_rank", "ts_rank_cd"):
            rows = conn.execute(
                f"SELECT id, {rank}(tsv, q) FROM notes, CAST(%s AS tsquery) q WHERE tsv @@ q ORDER BY 2 DESC", (q,)
            ).fetchall()
            assert [r[0] for r in rows] == [1, 2]  # twice beats once
            assert rows[0][1] > rows[1][1] > 0
        # Identifiers stay whole: nothing splits fetch_user again (to_tsvector would).
        assert conn.execute(
            "SELECT id FROM notes WHERE tsv @@ %s::tsquery", (tsquery_or([["fetch_user"]]),)
        ).fetchall() == [(1,)]
        # A CJK word is a phrase of adjacent bigrams, which needs positions.
        assert conn.execute(
            "SELECT id FROM notes WHERE tsv @@ %s::tsquery", (tsquery_or([["数据", "据库"]]),)
        ).fetchall() == [(4,)]
        assert (
            conn.execute("SELECT id FROM notes WHERE tsv @@ %s::tsquery", (tsquery_or([["据库", "数据"]]),)).fetchall()
            == []
        )


def test_array_to_tsvector_drops_positions_so_phrases_and_cover_density_fail(pg_url: str) -> None:
    with connect(pg_url) as conn:
        row = conn.execute(
            "SELECT v @@ $$'数据' <-> '据库'$$::tsquery, ts_rank_cd(v, 'retry'::tsquery), ts_rank(v, 'retry'::tsquery) > 0 "
            "FROM array_to_tsvector(ARRAY['retry', '数据', '据库']) v"
        ).fetchone()
    assert row == (False, 0.0, True)


def test_casting_to_tsvector_keeps_case_so_python_must_fold_it(pg_url: str) -> None:
    with connect(pg_url) as conn:
        row = conn.execute(
            "SELECT 'Retry:1'::tsvector @@ 'retry'::tsquery, to_tsvector('simple', 'user_id')::text"
        ).fetchone()
    assert row == (False, "'id':2 'user':1")  # and to_tsvector would re-split MAPLE's tokens


def test_a_lexeme_over_2046_bytes_is_an_error_not_a_silent_drop(pg_url: str) -> None:
    with connect(pg_url) as conn, pytest.raises(psycopg.errors.ProgramLimitExceeded):
        conn.execute("SELECT %s::tsvector", (tsvector_literal(["a" * 2047]),))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tokens=st.lists(
        st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), min_size=1, max_size=40),
        min_size=1,
        max_size=8,
    )
)
def test_tsvector_literal_keeps_any_token_verbatim(pg_url: str, tokens: list[str]) -> None:
    with connect(pg_url) as conn:
        got = conn.execute("SELECT tsvector_to_array(%s::tsvector)", (tsvector_literal(tokens),)).fetchone()[0]
        assert sorted(got) == sorted(set(tokens))
        for tok in tokens:
            assert conn.execute(
                "SELECT %s::tsvector @@ %s::tsquery", (tsvector_literal(tokens), tsquery_or([[tok]]))
            ).fetchone() == (True,)


# -- job queue: FOR UPDATE SKIP LOCKED --------------------------------------------------------------

CLAIM = (
    "UPDATE jobs SET state = 'running', worker = %s WHERE id = ("
    "SELECT id FROM jobs WHERE state = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"
)


def _jobs(url: str, n: int) -> None:
    with connect(url) as conn:
        conn.execute("CREATE TABLE jobs (id serial PRIMARY KEY, state text NOT NULL DEFAULT 'queued', worker text)")
        conn.execute("INSERT INTO jobs (state) SELECT 'queued' FROM generate_series(1, %s)", (n,))


def test_skip_locked_hands_one_job_to_one_of_two_concurrent_workers(pg_url: str) -> None:
    _jobs(pg_url, 1)
    both_in, both_claimed = threading.Barrier(2, timeout=30), threading.Barrier(2, timeout=30)
    got: dict[str, list[tuple[int]]] = {}

    def worker(name: str) -> None:
        with psycopg.connect(pg_url) as conn, conn.transaction():
            both_in.wait()
            got[name] = conn.execute(CLAIM, (name,)).fetchall()
            both_claimed.wait()  # neither commits before both have tried: the claims overlap

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got.values()) == [[], [(1,)]]
    with connect(pg_url) as conn:
        assert conn.execute("SELECT state, worker FROM jobs").fetchall() == [("running", "a" if got["a"] else "b")]


def test_skip_locked_workers_never_claim_the_same_job(pg_url: str) -> None:
    _jobs(pg_url, 60)
    claimed: dict[str, list[int]] = {"a": [], "b": []}
    start = threading.Barrier(2, timeout=30)

    def worker(name: str) -> None:
        with psycopg.connect(pg_url) as conn:
            start.wait()
            while True:
                with conn.transaction():
                    row = conn.execute(CLAIM, (name,)).fetchone()
                if row is None:
                    return
                claimed[name].append(row[0])

    threads = [threading.Thread(target=worker, args=(n,)) for n in claimed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed["a"] + claimed["b"]) == list(range(1, 61))


# -- privacy: row-level security --------------------------------------------------------------------

RLS_SETUP = """
CREATE TABLE memories (id serial PRIMARY KEY, owner name, body text NOT NULL);
ALTER TABLE memories ENABLE ROW LEVEL SECURITY;
-- owner NULL: a shared (team) memory; otherwise private to the role that wrote it
CREATE POLICY own_or_shared ON memories USING (owner IS NULL OR owner = current_user)
    WITH CHECK (owner IS NULL OR owner = current_user);
"""


def _rls(url: str, *roles: PgRole) -> None:
    with connect(url) as conn:
        conn.execute(RLS_SETUP)
        for role in roles:
            conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON memories TO {role.name}")
            conn.execute(f"GRANT USAGE ON SEQUENCE memories_id_seq TO {role.name}")
            conn.execute("INSERT INTO memories (owner, body) VALUES (%s, %s)", (role.name, f"{role.name} private"))
        conn.execute("INSERT INTO memories (owner, body) VALUES (NULL, 'team shared')")


def _bodies(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT body FROM memories ORDER BY body")]


def test_rls_shows_each_role_its_own_rows_and_the_shared_ones(pg_url: str, pg_role: Callable[[str], PgRole]) -> None:
    alice, bob = pg_role("alice"), pg_role("bob")
    _rls(pg_url, alice, bob)
    assert _bodies(alice.url) == [f"{alice.name} private", "team shared"]
    assert _bodies(bob.url) == [f"{bob.name} private", "team shared"]
    with psycopg.connect(bob.url, autocommit=True) as conn:  # not even by id, update or delete
        assert conn.execute("SELECT count(*) FROM memories WHERE owner = %s", (alice.name,)).fetchone() == (0,)
        assert conn.execute("UPDATE memories SET body = 'x' WHERE owner = %s", (alice.name,)).rowcount == 0
        assert conn.execute("DELETE FROM memories WHERE owner = %s", (alice.name,)).rowcount == 0
    assert len(_bodies(pg_url)) == 3  # a superuser sees everything


def test_rls_refuses_a_row_written_in_someone_elses_name(pg_url: str, pg_role: Callable[[str], PgRole]) -> None:
    alice, bob = pg_role("alice"), pg_role("bob")
    _rls(pg_url, alice, bob)
    with psycopg.connect(bob.url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("INSERT INTO memories (owner, body) VALUES (%s, 'forged')", (alice.name,))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            conn.execute("UPDATE memories SET owner = %s WHERE owner = current_user", (alice.name,))


def test_rls_does_not_bind_the_tables_owner_until_forced(pg_url: str, pg_role: Callable[[str], PgRole]) -> None:
    alice, app = pg_role("alice"), pg_role("app")
    _rls(pg_url, alice)
    with connect(pg_url) as conn:
        conn.execute(f"ALTER TABLE memories OWNER TO {app.name}")
    assert len(_bodies(app.url)) == 2  # the owner skips its own policies...
    with connect(pg_url) as conn:
        conn.execute("ALTER TABLE memories FORCE ROW LEVEL SECURITY")
    assert _bodies(app.url) == ["team shared"]  # ...until FORCE ROW LEVEL SECURITY


def test_bypassrls_role_reads_every_row(pg_url: str, pg_role: Callable[[str], PgRole]) -> None:
    alice, admin = pg_role("alice"), pg_role("admin")
    _rls(pg_url, alice, admin)
    with connect(pg_url) as conn:
        conn.execute(f"ALTER ROLE {admin.name} BYPASSRLS")
    assert len(_bodies(admin.url)) == 3


def test_set_local_role_applies_one_users_policies_for_one_transaction(
    pg_url: str, pg_role: Callable[[str], PgRole]
) -> None:
    """The shape for one shared pool: the server's login role is a member of each user role."""
    alice, bob, app = pg_role("alice"), pg_role("bob"), pg_role("app")
    _rls(pg_url, alice, bob)
    with connect(pg_url) as conn:
        # WITH INHERIT FALSE (PostgreSQL 16+): app may SET ROLE to them but holds none of their grants.
        conn.execute(f"GRANT {alice.name}, {bob.name} TO {app.name} WITH INHERIT FALSE")
    with psycopg.connect(app.url) as conn:
        with conn.transaction():
            conn.execute(f"SET LOCAL ROLE {alice.name}")
            assert [r[0] for r in conn.execute("SELECT body FROM memories ORDER BY body")] == [
                f"{alice.name} private",
                "team shared",
            ]
        assert conn.execute("SELECT current_user").fetchone() == (app.name,)  # back after COMMIT
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT count(*) FROM memories")  # and app itself was granted nothing


# -- schema migrations ------------------------------------------------------------------------------


def test_a_failing_migration_leaves_neither_its_ddl_nor_its_record(pg_url: str) -> None:
    with connect(pg_url) as conn:
        conn.execute("CREATE TABLE migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
        with pytest.raises(psycopg.errors.UndefinedTable), conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(4242)")  # one migrator at a time across processes
            conn.execute("CREATE TABLE memories (id serial PRIMARY KEY, body text)")
            conn.execute("CREATE INDEX memories_body ON memories (body)")
            conn.execute("INSERT INTO migrations (name) VALUES ('m0001_memories')")
            conn.execute("ALTER TABLE no_such_table ADD COLUMN x int")
        assert conn.execute("SELECT to_regclass('memories'), to_regclass('memories_body')").fetchone() == (None, None)
        assert conn.execute("SELECT count(*) FROM migrations").fetchone() == (0,)


# -- connection pooling -----------------------------------------------------------------------------


def test_a_pool_serves_two_threads_at_once_on_separate_connections(pg_url: str) -> None:
    with connect(pg_url) as conn:
        conn.execute("CREATE TABLE items (id int PRIMARY KEY, embedding halfvec(3))")
    both = threading.Barrier(2, timeout=30)
    pids: dict[int, int] = {}
    # open=False then open(wait=True): no deprecation warning, and connections are ready before use.
    with psycopg_pool.ConnectionPool(pg_url, min_size=2, max_size=2, open=False, configure=register_vector) as pool:
        pool.wait(timeout=30)

        def worker(i: int) -> None:
            with pool.connection() as conn:
                both.wait()  # both connections are checked out at the same moment
                pids[i] = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                conn.execute("INSERT INTO items VALUES (%s, %s)", (i, HalfVector([i, 1.0, 0.0])))

        threads = [threading.Thread(target=worker, args=(i,)) for i in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with pool.connection() as conn:  # configure= ran on every pooled connection: halfvec loads
            rows = conn.execute("SELECT id, embedding FROM items ORDER BY id").fetchall()
    assert len(set(pids.values())) == 2
    assert rows == [(1, HalfVector([1.0, 1.0, 0.0])), (2, HalfVector([2.0, 1.0, 0.0]))]


def test_inherited_membership_lets_a_role_read_shared_rows_without_set_role(
    pg_url: str, pg_role: Callable[[str], PgRole]
) -> None:
    """A plain GRANT alice TO app (INHERIT) hands app alice's table grants, while current_user stays app."""
    alice, app = pg_role("alice"), pg_role("app")
    _rls(pg_url, alice)
    with connect(pg_url) as conn:
        conn.execute(f"GRANT {alice.name} TO {app.name}")
    assert _bodies(app.url) == ["team shared"]
