"""The throwaway servers the fleet's tests run against start, answer and stop."""

from __future__ import annotations

import socket

import psycopg

from tests.support.fleet_servers import PostgresCluster, RedisServer, running_redis


def test_redis_answers_on_loopback_and_stops(redis_server: RedisServer) -> None:
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.set("k", "v")
    assert client.get("k") == b"v"
    with running_redis() as other:
        assert other.port != redis_server.port
        port = other.port
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0


def test_postgres_gives_each_test_a_fresh_database(postgres_cluster: PostgresCluster, postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn) as connection:
        connection.execute("CREATE TABLE t (x int)")
        connection.execute("INSERT INTO t VALUES (1)")
        assert connection.execute("SELECT x FROM t").fetchone() == (1,)
        assert connection.execute("SELECT current_setting('listen_addresses')").fetchone() == ("",)
    other = postgres_cluster.new_database()
    with psycopg.connect(other) as connection:
        assert connection.execute("SELECT count(*) FROM pg_tables WHERE tablename = 't'").fetchone() == (0,)
