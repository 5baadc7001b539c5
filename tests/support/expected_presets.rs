//! What each preset must give over the fixture expositions, written per preset from the
//! fixtures' numbers with `expect.rs`'s operations: one arm per (stack, signal, n-th preset of
//! that signal in the file). A preset without an arm fails the test.

use super::expect::*;
use super::expositions::{Labels, Val};

fn strs(g: &[String]) -> Vec<&str> {
    g.iter().map(String::as_str).collect()
}

/// PgBouncer's query time, client wait (both in seconds) and query count per second by
/// database, through exporter `n` in the preset's order: community ≥ 0.11, < 0.11, spreaker.
fn pgbouncer_stats(n: usize, f: &Fx) -> (Vector, Vector, Vector) {
    let db = &["database"][..];
    let (names, scale) = match n {
        0 => (
            [
                "pgbouncer_stats_totals_queries_duration_seconds_total",
                "pgbouncer_stats_totals_client_wait_seconds_total",
                "pgbouncer_stats_totals_queries_pooled_total",
            ],
            1.0,
        ),
        1 => (
            [
                "pgbouncer_stats_queries_duration_seconds_total",
                "pgbouncer_stats_client_wait_seconds_total",
                "pgbouncer_stats_queries_pooled_total",
            ],
            1.0,
        ),
        _ => (
            [
                "pgbouncer_stats_queries_duration_microseconds_total",
                "pgbouncer_stats_waiting_duration_microseconds_total",
                "pgbouncer_stats_queries_total",
            ],
            1e-6,
        ),
    };
    let seconds = |name| map(&sum(f.rate(name, &[]), db), |x| x * scale);
    (
        seconds(names[0]),
        seconds(names[1]),
        sum(f.rate(names[2], &[]), db),
    )
}

/// `resets(name[window])`: the restarts inside the window that the scraped history covers.
fn resets(f: &Fx, name: &str, window: f64) -> Vec<(Labels, f64)> {
    f.samples
        .iter()
        .filter(|(n, _, _)| n == name)
        .map(|(_, l, v)| {
            let n = match v {
                Val::Restart { at, .. } if *at > f.end - window && *at < f.end => 1.0,
                _ => 0.0,
            };
            (l.clone(), n)
        })
        .collect()
}

/// HAProxy's sessions of the backend's own limit, by `g`.
fn haproxy_backend_saturation(f: &Fx, g: &[&str]) -> Vector {
    div(
        &sum(f.gauge("haproxy_backend_current_sessions", &[]), g),
        &sum(f.gauge("haproxy_backend_limit_sessions", &[]), g),
    )
}

/// The worst of each group's servers that have a limit (NaN or 0: none), sessions of limit.
fn haproxy_worst_server(f: &Fx, g: &[&str]) -> Vector {
    let server: Vec<&str> = g.iter().copied().chain(["server", "instance"]).collect();
    let ratios = div(
        &sum(f.gauge("haproxy_server_current_sessions", &[]), &server),
        &sum(f.gauge("haproxy_server_limit_sessions", &[]), &server),
    );
    max(ratios.into_iter().collect(), g)
}

/// What panel `n` of `signal` in `stack` must give with `$group` = `g`. `None`: no
/// expectation written (the test fails if the query returns anything).
pub fn expected(stack: &str, signal: &str, n: usize, g: &[String], f: &Fx) -> Option<Vector> {
    use M::{Eq, Re};
    let g = strs(g);
    let g = g.as_slice();
    let db = &["database"][..];
    let pool = &["pool"][..];
    let job = &["job"][..];
    let v = match (stack, signal, n) {
        // postgres_exporter
        ("postgres", "saturation", 0) => div(
            &sum(f.gauge("pg_stat_activity_count", &[]), g),
            &positive(&sub(
                &sum(f.gauge("pg_settings_max_connections", &[]), g),
                &sum(
                    f.gauge("pg_settings_superuser_reserved_connections", &[]),
                    g,
                ),
            )),
        ),
        ("postgres", "query-latency", 0) => div(
            &sum(f.rate("pg_stat_statements_seconds_total", &[]), g),
            &sum(f.rate("pg_stat_statements_calls_total", &[]), g),
        ),
        ("postgres", "longest-transaction", 0) => max(
            f.gauge(
                "pg_stat_activity_max_tx_duration",
                &[Re("state", "active|idle in transaction.*")],
            ),
            g,
        ),
        ("postgres", "rollback-ratio", 0) => {
            let rb = sum(f.rate("pg_stat_database_xact_rollback", &[]), g);
            let cm = sum(f.rate("pg_stat_database_xact_commit", &[]), g);
            div(&rb, &add(&cm, &rb))
        }
        ("postgres", "lock-waits", 0) => sum(
            f.gauge("pg_stat_activity_count", &[Eq("wait_event_type", "Lock")]),
            g,
        ),
        ("postgres", "instances-up", 0) => avg(f.gauge("pg_up", &[]), &[]),
        ("postgres", "restarts", 0) => sum(
            f.changes("pg_postmaster_start_time_seconds", &[], 3600.0),
            g,
        ),
        ("postgres", "deadlocks", 0) => {
            sum(f.increase("pg_stat_database_deadlocks", &[], 300.0), g)
        }
        ("postgres", "exclusive-locks", 0) => sum(
            f.gauge("pg_locks_count", &[Eq("mode", "accessexclusivelock")]),
            g,
        ),
        // PgBouncer: prometheus-community, spreaker, Baines
        ("pgbouncer", "saturation", 0) => div(
            &sum(
                f.gauge("pgbouncer_pools_server_active_connections", &[]),
                db,
            ),
            &max(
                relabel(
                    f.gauge("pgbouncer_databases_pool_size", &[]),
                    "database",
                    "name",
                ),
                db,
            ),
        ),
        ("pgbouncer", "saturation", 1) => div(
            &sum(
                f.gauge("pgbouncer_pools_server_active_connections", &[]),
                db,
            ),
            &max(f.gauge("pgbouncer_databases_database_pool_size", &[]), db),
        ),
        ("pgbouncer", "saturation", 2) => div(
            &sum(f.gauge("pgbouncer_active_clients", &[]), db),
            &max(f.gauge("pgbouncer_pool_size", &[]), db),
        ),
        ("pgbouncer", "pool-wait", 0) => {
            max(f.gauge("pgbouncer_pools_client_maxwait_seconds", &[]), db)
        }
        ("pgbouncer", "waiting-clients", 0) => sum(
            f.gauge("pgbouncer_pools_client_waiting_connections", &[]),
            db,
        ),
        ("pgbouncer", "waiting-clients", 1) => sum(f.gauge("pgbouncer_waiting_clients", &[]), db),
        ("pgbouncer", "query-latency", n @ 0..=2) => {
            let (query_time, wait, queries) = pgbouncer_stats(n, f);
            div(&map(&sub(&query_time, &wait), |x| x.max(0.0)), &queries)
        }
        ("pgbouncer", "mean-client-wait", n @ 0..=2) => {
            let (_, wait, queries) = pgbouncer_stats(n, f);
            div(&wait, &queries)
        }
        ("pgbouncer", "instances-up", 0) => avg(f.gauge("pgbouncer_up", &[]), &[]),
        // HikariCP
        ("hikaricp", "saturation", 0) => div(
            &sum(f.gauge("hikaricp_connections_active", &[]), pool),
            &sum(f.gauge("hikaricp_connections_max", &[]), pool),
        ),
        ("hikaricp", "saturation", 1) => div(
            &sum(f.gauge("hikaricp_active_connections", &[]), pool),
            &sum(f.gauge("hikaricp_max_connections", &[]), pool),
        ),
        ("hikaricp", "saturation", 2) => div(
            &sum(f.gauge("jdbc_connections_active", &[]), &["name"]),
            &sum(f.gauge("jdbc_connections_max", &[]), &["name"]),
        ),
        ("hikaricp", "pool-wait", 0) => quantile(
            0.99,
            f.rate("hikaricp_connections_acquire_seconds_bucket", &[]),
            pool,
        ),
        ("hikaricp", "pool-wait", 1) => div(
            &sum(
                f.rate("hikaricp_connections_acquire_seconds_sum", &[]),
                pool,
            ),
            &sum(
                f.rate("hikaricp_connections_acquire_seconds_count", &[]),
                pool,
            ),
        ),
        ("hikaricp", "pool-wait", 2) => map(
            &max(
                f.gauge(
                    "hikaricp_connection_acquired_nanos",
                    &[Eq("quantile", "0.99")],
                ),
                pool,
            ),
            |x| x / 1e9,
        ),
        ("hikaricp", "waiting-clients", 0) => {
            sum(f.gauge("hikaricp_connections_pending", &[]), pool)
        }
        ("hikaricp", "waiting-clients", 1) => sum(f.gauge("hikaricp_pending_threads", &[]), pool),
        ("hikaricp", "pool-timeouts", 0) => sum(
            f.increase("hikaricp_connections_timeout_total", &[], 300.0),
            pool,
        ),
        ("hikaricp", "pool-timeouts", 1) => sum(
            f.increase("hikaricp_connection_timeout_total", &[], 300.0),
            pool,
        ),
        // Go database/sql and pgxpool
        ("go-sql", "saturation", 0) => div(
            &sum(f.gauge("go_sql_in_use_connections", &[]), &["db_name"]),
            &sum(f.gauge("go_sql_max_open_connections", &[]), &["db_name"]),
        ),
        ("go-sql", "saturation", 1) => div(
            &sum(f.gauge("pgxpool_acquired_conns", &[]), g),
            &sum(f.gauge("pgxpool_max_conns", &[]), g),
        ),
        ("go-sql", "pool-wait", 0) => div(
            &sum(
                f.rate("go_sql_wait_duration_seconds_total", &[]),
                &["db_name"],
            ),
            &sum(f.rate("go_sql_wait_count_total", &[]), &["db_name"]),
        ),
        ("go-sql", "pool-wait", 1) => div(
            &map(&sum(f.rate("pgxpool_acquire_duration_ns", &[]), g), |x| {
                x / 1e9
            }),
            &sum(f.rate("pgxpool_acquire_count", &[]), g),
        ),
        ("go-sql", "pool-waits", 0) => sum(f.rate("go_sql_wait_count_total", &[]), &["db_name"]),
        ("go-sql", "pool-waits", 1) => sum(f.rate("pgxpool_empty_acquire", &[]), g),
        // OpenTelemetry (the dotted variants read nothing here)
        ("otel", "saturation", 0) => div(
            &sum(
                f.gauge(
                    "db_client_connection_count",
                    &[Eq("db_client_connection_state", "used")],
                ),
                g,
            ),
            &sum(f.gauge("db_client_connection_max", &[]), g),
        ),
        ("otel", "saturation", 1) => div(
            &sum(
                f.gauge("db_client_connections_usage", &[Eq("state", "used")]),
                g,
            ),
            &sum(f.gauge("db_client_connections_max", &[]), g),
        ),
        ("otel", "saturation", 2 | 3) | ("otel", "waiting-clients", 2) => Vector::new(),
        ("otel", "pool-wait", 0) => quantile(
            0.99,
            f.rate("db_client_connection_wait_time_seconds_bucket", &[]),
            job,
        ),
        ("otel", "pool-wait", 1) => map(
            &quantile(
                0.99,
                f.rate("db_client_connections_wait_time_milliseconds_bucket", &[]),
                job,
            ),
            |x| x / 1000.0,
        ),
        ("otel", "waiting-clients", 0) => {
            sum(f.gauge("db_client_connection_pending_requests", &[]), job)
        }
        ("otel", "waiting-clients", 1) => {
            sum(f.gauge("db_client_connections_pending_requests", &[]), job)
        }
        ("otel", "query-latency", 0) => quantile(
            0.99,
            f.rate("db_client_operation_duration_seconds_bucket", &[]),
            job,
        ),
        ("otel", "request-latency", 0) => quantile(
            0.99,
            f.rate("http_server_request_duration_seconds_bucket", &[]),
            job,
        ),
        ("otel", "request-latency", 1) => map(
            &quantile(
                0.99,
                f.rate("http_server_duration_milliseconds_bucket", &[]),
                job,
            ),
            |x| x / 1000.0,
        ),
        ("otel", "error-ratio", 0) => div(
            &sum(
                f.rate(
                    "http_server_request_duration_seconds_count",
                    &[Re("http_response_status_code", "5..")],
                ),
                job,
            ),
            &sum(
                f.rate("http_server_request_duration_seconds_count", &[]),
                job,
            ),
        ),
        ("otel", "error-ratio", 1) => div(
            &sum(
                f.rate(
                    "http_server_duration_milliseconds_count",
                    &[Re("http_status_code", "5..")],
                ),
                job,
            ),
            &sum(f.rate("http_server_duration_milliseconds_count", &[]), job),
        ),
        ("otel", "pool-timeouts", 0) => sum(
            f.increase("db_client_connection_timeouts_total", &[], 300.0),
            job,
        ),
        ("otel", "pool-timeouts", 1) => sum(
            f.increase("db_client_connections_timeouts_total", &[], 300.0),
            job,
        ),
        // Rails
        ("rails", "saturation", 0) => div(
            &sum(
                f.gauge("ruby_active_record_connection_pool_busy", &[]),
                &["job", "pool_name"],
            ),
            &sum(
                f.gauge("ruby_active_record_connection_pool_size", &[]),
                &["job", "pool_name"],
            ),
        ),
        ("rails", "waiting-clients", 0) => sum(
            f.gauge("ruby_active_record_connection_pool_waiting", &[]),
            job,
        ),
        ("rails", "dead-connections", 0) => {
            sum(f.gauge("ruby_active_record_connection_pool_dead", &[]), job)
        }
        // HAProxy
        ("haproxy", "saturation", 0) => {
            // The worst server of its maxconn, else the backend of its own limit.
            let mut v = haproxy_worst_server(f, g);
            for (k, x) in haproxy_backend_saturation(f, g) {
                v.entry(k).or_insert(x);
            }
            v
        }
        ("haproxy", "saturation", 1) => haproxy_backend_saturation(f, g),
        ("haproxy", "request-latency", 0) => max(
            f.gauge("haproxy_backend_response_time_average_seconds", &[]),
            g,
        ),
        ("haproxy", "request-latency", 1) => max(
            f.gauge("haproxy_backend_http_response_time_average_seconds", &[]),
            g,
        ),
        ("haproxy", "retry-amplification", 0) => div(
            &add(
                &sum(f.rate("haproxy_backend_connection_attempts_total", &[]), g),
                &sum(f.rate("haproxy_backend_connection_reuses_total", &[]), g),
            ),
            &sum(f.rate("haproxy_backend_http_requests_total", &[]), g),
        ),
        ("haproxy", "error-ratio", 0) => div(
            &sum(
                f.rate("haproxy_backend_http_responses_total", &[Eq("code", "5xx")]),
                g,
            ),
            &sum(f.rate("haproxy_backend_http_responses_total", &[]), g),
        ),
        ("haproxy", "connection-errors", 0) => {
            sum(f.rate("haproxy_backend_connection_errors_total", &[]), g)
        }
        ("haproxy", "queue-depth", 0) => sum(f.gauge("haproxy_backend_current_queue", &[]), g),
        ("haproxy", "queue-wait", 0) => max(
            f.gauge("haproxy_backend_queue_time_average_seconds", &[]),
            g,
        ),
        ("haproxy", "instances-up", 0) => {
            let up = f.gauge("haproxy_server_status", &[Eq("state", "UP")]);
            div(&sum(up.clone(), g), &count(up, g))
        }
        ("haproxy", "restarts", 0) => sum(resets(f, "haproxy_process_uptime_seconds", 3600.0), &[]),
        ("haproxy", "restarts", 1) => sum(
            f.changes("haproxy_process_start_time_seconds", &[], 3600.0),
            &[],
        ),
        // Envoy (vanilla tags; Istio's sidecar stats fall in the label-less group)
        ("envoy", "request-latency", 0) => map(
            &quantile(
                0.99,
                f.rate("envoy_cluster_upstream_rq_time_bucket", &[]),
                &["envoy_cluster_name"],
            ),
            |x| x / 1000.0,
        ),
        ("envoy", "retry-amplification", 0) => map(
            &div(
                &sum(
                    f.rate("envoy_cluster_upstream_rq_retry", &[]),
                    &["envoy_cluster_name"],
                ),
                &sum(
                    f.rate("envoy_cluster_upstream_rq_completed", &[]),
                    &["envoy_cluster_name"],
                ),
            ),
            |x| 1.0 + x,
        ),
        ("envoy", "error-ratio", 0) => div(
            &sum(
                f.rate(
                    "envoy_cluster_upstream_rq_xx",
                    &[Eq("envoy_response_code_class", "5")],
                ),
                &["envoy_cluster_name"],
            ),
            &sum(
                f.rate("envoy_cluster_upstream_rq_xx", &[]),
                &["envoy_cluster_name"],
            ),
        ),
        ("envoy", "queue-depth", 0) => sum(
            f.gauge("envoy_cluster_upstream_rq_pending_active", &[]),
            &["envoy_cluster_name"],
        ),
        ("envoy", "load-shed", 0) => sum(
            f.increase("envoy_cluster_upstream_rq_pending_overflow", &[], 300.0),
            &["envoy_cluster_name"],
        ),
        // Istio
        ("istio", "request-latency", 0) => map(
            &quantile(
                0.99,
                f.rate(
                    "istio_request_duration_milliseconds_bucket",
                    &[Eq("reporter", "destination")],
                ),
                g,
            ),
            |x| x / 1000.0,
        ),
        ("istio", "retry-amplification", 0) => map(
            &div(
                &sum(
                    f.rate(
                        "envoy_cluster_upstream_rq_retry",
                        &[Re("cluster_name", "outbound.*")],
                    ),
                    &["cluster_name"],
                ),
                &sum(
                    f.rate(
                        "envoy_cluster_upstream_rq_completed",
                        &[Re("cluster_name", "outbound.*")],
                    ),
                    &["cluster_name"],
                ),
            ),
            |x| 1.0 + x,
        ),
        ("istio", "retry-exhausted", 0) => sum(
            f.increase(
                "istio_requests_total",
                &[Re("response_flags", ".*URX.*")],
                300.0,
            ),
            g,
        ),
        ("istio", "error-ratio", 0) => div(
            &sum(
                f.rate(
                    "istio_requests_total",
                    &[Eq("reporter", "destination"), Re("response_code", "5..")],
                ),
                g,
            ),
            &sum(
                f.rate("istio_requests_total", &[Eq("reporter", "destination")]),
                g,
            ),
        ),
        // Linkerd
        ("linkerd", "request-latency", 0) => map(
            &quantile(
                0.99,
                f.rate("response_latency_ms_bucket", &[Eq("direction", "inbound")]),
                g,
            ),
            |x| x / 1000.0,
        ),
        ("linkerd", "retry-amplification", 0) => map(
            &div(
                &sum(
                    f.rate("outbound_http_route_retry_requests_total", &[]),
                    &["parent_name"],
                ),
                &sum(
                    f.rate("outbound_http_route_request_statuses_total", &[]),
                    &["parent_name"],
                ),
            ),
            |x| 1.0 + x,
        ),
        ("linkerd", "retry-amplification", 1) => div(
            &sum(f.rate("route_actual_response_total", &[]), &[]),
            &sum(f.rate("route_response_total", &[]), &[]),
        ),
        ("linkerd", "error-ratio", 0) => div(
            &sum(
                f.rate(
                    "response_total",
                    &[Eq("direction", "inbound"), Eq("classification", "failure")],
                ),
                g,
            ),
            &sum(f.rate("response_total", &[Eq("direction", "inbound")]), g),
        ),
        // ingress-nginx
        ("ingress-nginx", "request-latency", 0) => quantile(
            0.99,
            f.rate(
                "nginx_ingress_controller_request_duration_seconds_bucket",
                &[],
            ),
            &["ingress"],
        ),
        ("ingress-nginx", "error-ratio", 0) => div(
            &sum(
                f.rate("nginx_ingress_controller_requests", &[Re("status", "5..")]),
                &["ingress"],
            ),
            &sum(
                f.rate("nginx_ingress_controller_requests", &[]),
                &["ingress"],
            ),
        ),
        // Kubernetes
        ("kube-state-metrics", "instances-up", 0) => topk(
            10,
            &div(
                &sum(
                    f.gauge("kube_deployment_status_replicas_available", &[]),
                    &["namespace", "deployment"],
                ),
                &sum(
                    f.gauge("kube_deployment_spec_replicas", &[]),
                    &["namespace", "deployment"],
                ),
            ),
            true,
        ),
        ("kube-state-metrics", "restarts", 0) => topk(
            10,
            &sum(
                f.increase("kube_pod_container_status_restarts_total", &[], 900.0),
                &["namespace", "pod"],
            ),
            false,
        ),
        ("kube-state-metrics", "oom-kills", 0) => sum(
            f.gauge(
                "kube_pod_container_status_last_terminated_reason",
                &[Eq("reason", "OOMKilled")],
            ),
            &["namespace"],
        ),
        ("cadvisor", "oom-kills", 0) => topk(
            10,
            &sum(
                f.increase("container_oom_events_total", &[], 900.0),
                &["namespace", "pod"],
            ),
            false,
        ),
        // The simulator's names are not in these fixtures.
        ("sim", _, _) => Vector::new(),
        // redis_exporter
        ("redis", "saturation", 0) => div(
            &sum(f.gauge("redis_connected_clients", &[]), g),
            &positive(&sum(f.gauge("redis_config_maxclients", &[]), g)),
        ),
        ("redis", "memory", 0) => div(
            &sum(f.gauge("redis_memory_used_bytes", &[]), g),
            &positive(&sum(f.gauge("redis_memory_max_bytes", &[]), g)),
        ),
        ("redis", "query-latency", 0) => div(
            &sum(f.rate("redis_commands_duration_seconds_total", &[]), g),
            &positive(&sum(f.rate("redis_commands_total", &[]), g)),
        ),
        ("redis", "evictions", 0) => sum(f.rate("redis_evicted_keys_total", &[]), g),
        ("redis", "blocked-clients", 0) => sum(f.gauge("redis_blocked_clients", &[]), g),
        ("redis", "queue-depth", 0) => sum(f.gauge("redis_key_size", &[]), &["key"]),
        ("redis", "instances-up", 0) => avg(f.gauge("redis_up", &[]), &[]),
        _ => return None,
    };
    Some(v)
}
