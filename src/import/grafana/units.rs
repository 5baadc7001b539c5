//! Grafana unit ids (`fieldConfig.defaults.unit`; the ids of grafana/grafana
//! `packages/grafana-data/src/valueFormats/categories.ts`, checked against it) mapped to
//! warroom's six units.
//!
//! warroom's units read values in base units (seconds, bytes, a 0..1 ratio for percent), so a
//! Grafana unit in another scale keeps its meaning by scaling the query: `ms` becomes seconds
//! with the query divided by 1000, `percent` (0–100) becomes percent divided by 100, and the
//! thresholds are scaled the same way.

use crate::config::panels::Unit;

/// How one Grafana unit reads in warroom.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitMapping {
    pub unit: Unit,
    /// Multiply the query (and its thresholds) by this to reach the unit's base scale.
    pub factor: Factor,
    /// Set when something about the unit is lost on the way (shown as a warning).
    pub caveat: Option<String>,
}

/// A scale that keeps decimal numbers exact: dividing by 1000 is exact where multiplying by
/// 0.001 is not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Factor {
    One,
    Mul(f64),
    Div(f64),
}

impl Factor {
    pub fn apply(self, v: f64) -> f64 {
        match self {
            Factor::One => v,
            Factor::Mul(k) => v * k,
            Factor::Div(k) => v / k,
        }
    }

    /// The query with the scale applied: `(q) / 1000`.
    pub fn wrap(self, query: &str) -> String {
        match self {
            Factor::One => query.to_string(),
            Factor::Mul(k) => format!("({query}) * {}", number(k)),
            Factor::Div(k) => format!("({query}) / {}", number(k)),
        }
    }
}

fn number(k: f64) -> String {
    if k.fract() == 0.0 && k.abs() < 1e15 {
        format!("{k:.0}")
    } else {
        format!("{k}")
    }
}

fn plain(unit: Unit) -> UnitMapping {
    UnitMapping {
        unit,
        factor: Factor::One,
        caveat: None,
    }
}

fn scaled(unit: Unit, factor: Factor) -> UnitMapping {
    UnitMapping {
        unit,
        factor,
        caveat: None,
    }
}

fn lossy(unit: Unit, factor: Factor, caveat: String) -> UnitMapping {
    UnitMapping {
        unit,
        factor,
        caveat: Some(caveat),
    }
}

const KI: f64 = 1024.0;

/// Map a Grafana unit id; `None` (no unit set) is a plain count.
pub fn map_unit(id: Option<&str>) -> UnitMapping {
    use Factor::{Div, Mul, One};
    let Some(id) = id.map(str::trim).filter(|s| !s.is_empty()) else {
        return plain(Unit::Count);
    };
    let shown = crate::sanitize::sanitize(id, false, 40);
    let rate = |what: &str, factor: Factor| {
        lossy(
            Unit::PerSecond,
            factor,
            format!(
                "unit \"{shown}\" ({what} per second) is shown as a plain per-second rate; the \
                 {what} are not named"
            ),
        )
    };
    match id {
        "percentunit" => plain(Unit::Percent),
        "percent" => scaled(Unit::Percent, Div(100.0)),
        "s" | "dtdurations" | "dthms" | "dtdhms" | "clocks" => plain(Unit::Seconds),
        "ms" | "dtdurationms" | "clockms" => scaled(Unit::Seconds, Div(1e3)),
        "µs" | "μs" | "us" => scaled(Unit::Seconds, Div(1e6)),
        "ns" => scaled(Unit::Seconds, Div(1e9)),
        "timeticks" => scaled(Unit::Seconds, Div(100.0)),
        "m" => scaled(Unit::Seconds, Mul(60.0)),
        "h" => scaled(Unit::Seconds, Mul(3600.0)),
        "d" => scaled(Unit::Seconds, Mul(86_400.0)),
        "bytes" | "decbytes" => plain(Unit::Bytes),
        "bits" | "decbits" => scaled(Unit::Bytes, Div(8.0)),
        "kbytes" => scaled(Unit::Bytes, Mul(KI)),
        "mbytes" => scaled(Unit::Bytes, Mul(KI * KI)),
        "gbytes" => scaled(Unit::Bytes, Mul(KI * KI * KI)),
        "tbytes" => scaled(Unit::Bytes, Mul(KI * KI * KI * KI)),
        "pbytes" => scaled(Unit::Bytes, Mul(KI * KI * KI * KI * KI)),
        "deckbytes" => scaled(Unit::Bytes, Mul(1e3)),
        "decmbytes" => scaled(Unit::Bytes, Mul(1e6)),
        "decgbytes" => scaled(Unit::Bytes, Mul(1e9)),
        "dectbytes" => scaled(Unit::Bytes, Mul(1e12)),
        "decpbytes" => scaled(Unit::Bytes, Mul(1e15)),
        "reqps" | "rps" | "wps" | "iops" | "ops" | "cps" | "pps" | "hertz" => {
            plain(Unit::PerSecond)
        }
        "rpm" | "wpm" | "opm" | "cpm" => scaled(Unit::PerSecond, Div(60.0)),
        "Bps" | "binBps" => rate("bytes", One),
        "bps" | "binbps" => rate("bits", One),
        "KBs" => rate("bytes", Mul(1e3)),
        "MBs" => rate("bytes", Mul(1e6)),
        "GBs" => rate("bytes", Mul(1e9)),
        "TBs" => rate("bytes", Mul(1e12)),
        "PBs" => rate("bytes", Mul(1e15)),
        "Kbits" => rate("bits", Mul(1e3)),
        "Mbits" => rate("bits", Mul(1e6)),
        "Gbits" => rate("bits", Mul(1e9)),
        "Tbits" => rate("bits", Mul(1e12)),
        "Pbits" => rate("bits", Mul(1e15)),
        "short" | "none" | "sishort" | "locale" | "sci" => plain(Unit::Count),
        _ => {
            if let Some(suffix) = id.strip_prefix("suffix:") {
                let s = suffix.trim();
                if ["x", "×", "X"].contains(&s) {
                    return plain(Unit::Ratio);
                }
                if s == "%" {
                    return scaled(Unit::Percent, Div(100.0));
                }
                if s == "/s" {
                    return plain(Unit::PerSecond);
                }
            }
            if id.starts_with("count:") {
                return plain(Unit::Count);
            }
            lossy(
                Unit::Count,
                One,
                format!("unit \"{shown}\" has no warroom equivalent; shown as a plain count"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_reach_base_units() {
        let ms = map_unit(Some("ms"));
        assert_eq!(ms.unit, Unit::Seconds);
        assert_eq!(ms.factor.apply(250.0), 0.25);
        assert_eq!(ms.factor.wrap("x"), "(x) / 1000");
        assert_eq!(map_unit(Some("ns")).factor.apply(5e8), 0.5);
        assert_eq!(map_unit(Some("µs")).factor.apply(1500.0), 0.0015);
        assert_eq!(map_unit(Some("percent")).factor.apply(80.0), 0.8);
        assert_eq!(map_unit(Some("mbytes")).factor.apply(1.0), 1_048_576.0);
        assert_eq!(map_unit(Some("mbytes")).factor.wrap("m"), "(m) * 1048576");
        assert_eq!(map_unit(Some("bits")).factor.apply(16.0), 2.0);
        assert_eq!(map_unit(Some("rpm")).factor.apply(120.0), 2.0);
        assert_eq!(map_unit(Some("h")).factor.apply(2.0), 7200.0);
    }

    #[test]
    fn every_unit_lands_somewhere() {
        assert_eq!(map_unit(None), plain(Unit::Count));
        assert_eq!(map_unit(Some("")), plain(Unit::Count));
        assert_eq!(map_unit(Some("percentunit")), plain(Unit::Percent));
        assert_eq!(map_unit(Some("reqps")), plain(Unit::PerSecond));
        assert_eq!(map_unit(Some("short")), plain(Unit::Count));
        assert_eq!(map_unit(Some("suffix:×")), plain(Unit::Ratio));
        let bps = map_unit(Some("Bps"));
        assert_eq!(bps.unit, Unit::PerSecond);
        assert!(bps.caveat.unwrap().contains("bytes"));
        let mbs = map_unit(Some("MBs"));
        assert_eq!(mbs.factor.apply(2.0), 2e6);
        assert!(mbs.caveat.unwrap().contains("bytes"));
        assert_eq!(map_unit(Some("timeticks")).factor.apply(250.0), 2.5);
        assert_eq!(map_unit(Some("hertz")), plain(Unit::PerSecond));
        let odd = map_unit(Some("celsius"));
        assert_eq!(odd.unit, Unit::Count);
        assert!(odd.caveat.unwrap().contains("\"celsius\""));
        let hostile = map_unit(Some("\u{1b}[2J"));
        assert!(crate::sanitize::is_clean(&hostile.caveat.unwrap(), false));
    }
}
