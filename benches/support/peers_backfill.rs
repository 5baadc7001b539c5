//! One simulated hour of planner-peak as OpenMetrics, for `benches/peers.sh` to turn into
//! Prometheus blocks (`promtool tsdb create-blocks-from openmetrics`).
//!
//! Usage: `peers_backfill OUT.om END_UNIX_SECONDS INSTANCE`: samples every 5 s over the hour
//! ending at END, labelled `job="sim"` and `instance=INSTANCE` like a live scrape of
//! `warroom sim serve` at that address, so the backfilled hour and the live one are one series.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use warroom::sim::exposition::samples;
use warroom::sim::{Scenario, Sim};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, out, end, instance] = args.as_slice() else {
        eprintln!("usage: peers_backfill OUT.om END_UNIX_SECONDS INSTANCE");
        std::process::exit(2);
    };
    let Ok(end) = end.parse::<f64>() else {
        eprintln!("peers_backfill: END must be Unix seconds, not {end:?}");
        std::process::exit(2);
    };
    let start = end - 3600.0;
    let scenario = match Scenario::load("planner-peak") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("peers_backfill: {e}");
            std::process::exit(1);
        }
    };
    let mut sim = Sim::new(scenario, 1);
    // name -> series -> lines in time order (OpenMetrics keeps a family's samples together).
    let mut by_name: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for k in 0..=720 {
        sim.run_until(k as f64 * 5.0);
        let t = start + k as f64 * 5.0;
        for x in samples(&sim) {
            let mut parts = vec![
                "job=\"sim\"".to_string(),
                format!("instance=\"{instance}\""),
            ];
            for (k, v) in &x.labels {
                let v = v.replace('\\', "\\\\").replace('"', "\\\"");
                parts.push(format!("{k}=\"{v}\""));
            }
            let series = format!("{}{{{}}}", x.name, parts.join(","));
            let line = format!("{series} {} {t}", x.value);
            by_name
                .entry(x.name.clone())
                .or_default()
                .entry(series)
                .or_default()
                .push(line);
        }
    }
    let mut om = String::new();
    for (name, series) in &by_name {
        let _ = writeln!(om, "# TYPE {name} unknown");
        for l in series.values().flatten() {
            let _ = writeln!(om, "{l}");
        }
    }
    om.push_str("# EOF\n");
    if let Err(e) = std::fs::write(out, om) {
        eprintln!("peers_backfill: cannot write {out}: {e}");
        std::process::exit(1);
    }
}
