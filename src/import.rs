//! Importers: dashboards written for other tools, turned into warroom's `[[panel]]` entries.
//! A domain room beside [`crate::config`], which it writes for and never the other way: an
//! import may ask a Prometheus for variable values (I/O the config never does), and its output
//! is TOML that `warroom.toml` loads like any panel written by hand.

pub mod grafana;
