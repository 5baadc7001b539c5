//! A thin Prometheus HTTP API client of our own (issue 2).
