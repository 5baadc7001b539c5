//! One line per measured figure, for `benches/all.sh` to gather into one table:
//! `figure<TAB>name<TAB>value<TAB>unit<TAB>target`, where target is `< N`, `>= N` or `-`.
#![allow(dead_code)]

/// The warroom binary a benchmark of the process runs: `WARROOM_BIN` when set (`benches/all.sh`
/// sets it to a copy of the release build, the binary that ships), else the one cargo built for the
/// benchmarks (the bench profile: the release profile's code without its LTO, larger and a
/// little slower to start).
pub fn warroom_bin() -> String {
    let bin = std::env::var("WARROOM_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_warroom").into());
    eprintln!("benchmarking {bin}");
    bin
}

/// What a figure must be to hold.
#[derive(Debug, Clone, Copy)]
pub enum Target {
    /// Must stay under the value.
    Under(f64),
    /// Must reach at least the value.
    AtLeast(f64),
    /// Reported for information; no target.
    None,
}

/// Print one figure line (besides whatever readable output the benchmark prints).
pub fn report(name: &str, value: f64, unit: &str, target: Target) {
    let target = match target {
        Target::Under(t) => format!("< {t}"),
        Target::AtLeast(t) => format!(">= {t}"),
        Target::None => "-".into(),
    };
    println!("figure\t{name}\t{value:.3}\t{unit}\t{target}");
}

/// The `q` quantile (0..=1) of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
