//! Grafana threshold steps to warroom's `warn`, `crit` and `bad_when`.
//!
//! A step applies from its `value` upwards (the first step's `null` is −∞). Each step's colour
//! says how bad it is: reds are critical, oranges and yellows a warning, greens, blues, greys
//! and the text colour fine. When badness rises with the value, `bad_when` is `above`: `warn`
//! is where the first warning colour starts and `crit` where the first red one does. When the
//! red step is the lowest (green at high values: free space, instances up), `bad_when` is
//! `below`: `crit` is where red ends and `warn` where the warning colour ends. Anything else
//! (a band: red, green, red) has no one-sided equivalent and is left to the user.
//!
//! Thresholds are read only where Grafana draws them ([`drawn`]): nearly every panel carries
//! Grafana's default steps (green, red from 80), and most never show them. An informational
//! panel (a total, an uptime, a size) is told apart by the same rules and nothing else: the
//! community dashboards that showed false levels (node-exporter-full's RAM Total, Uptime,
//! RootFS Total; the postgres mixin's cache hit ratio) all turn colouring off in Grafana, so no
//! guess from units or titles is made.

use super::json::{Display, FieldSettings, GraphThreshold, Step, Thresholds};
use crate::config::panels::BadWhen;

/// warroom's thresholds for one panel.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Levels {
    pub warn: Option<f64>,
    pub crit: Option<f64>,
    pub bad_when: BadWhen,
}

/// How bad a colour reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Severity {
    Fine = 0,
    Warn = 1,
    Crit = 2,
}

/// The severity of a Grafana colour: a palette name (`red`, `semi-dark-orange`), `#rgb`,
/// `#rrggbb(aa)`, `rgb()`/`rgba()`. Unknown colours are fine.
pub(super) fn severity(color: &str) -> Severity {
    let c = color.trim().to_ascii_lowercase();
    if c.contains("red") {
        return Severity::Crit;
    }
    if c.contains("orange") || c.contains("yellow") {
        return Severity::Warn;
    }
    match rgb(&c).and_then(hue) {
        Some(h) if !(20.0..330.0).contains(&h) => Severity::Crit,
        Some(h) if h < 65.0 => Severity::Warn,
        _ => Severity::Fine,
    }
}

fn rgb(c: &str) -> Option<(f64, f64, f64)> {
    if let Some(hex) = c.strip_prefix('#') {
        let digits: Vec<u32> = hex.chars().map(|d| d.to_digit(16)).collect::<Option<_>>()?;
        return match digits.len() {
            3 | 4 => Some((
                f64::from(digits[0] * 17),
                f64::from(digits[1] * 17),
                f64::from(digits[2] * 17),
            )),
            6 | 8 => Some((
                f64::from(digits[0] * 16 + digits[1]),
                f64::from(digits[2] * 16 + digits[3]),
                f64::from(digits[4] * 16 + digits[5]),
            )),
            _ => None,
        };
    }
    let inner = c
        .strip_prefix("rgba(")
        .or_else(|| c.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let parts: Vec<f64> = inner
        .split(',')
        .take(3)
        .map(|p| p.trim().parse::<f64>().ok())
        .collect::<Option<_>>()?;
    (parts.len() == 3).then(|| (parts[0], parts[1], parts[2]))
}

/// Hue in degrees, or `None` for a grey (too little saturation to have one).
fn hue((r, g, b): (f64, f64, f64)) -> Option<f64> {
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let delta = max - min;
    if max <= 0.0 || delta / max < 0.25 || delta < 30.0 {
        return None;
    }
    let h = if max == r {
        60.0 * (((g - b) / delta).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / delta + 2.0)
    } else {
        60.0 * ((r - g) / delta + 4.0)
    };
    Some(h)
}

/// Whether Grafana draws the thresholds of a `kind` panel with these field settings and panel
/// options; `Err` says why not. Grafana's rules, as its documentation and source give them:
///
/// - a field with no `color` takes its colour from the thresholds (`getFieldColorModeForField`
///   in grafana-data's `field/fieldColor.ts` falls back to `FieldColorModeId.Thresholds`); the
///   time series panel sets `palette-classic` as its own default instead;
/// - a time series draws thresholds only when "Show thresholds" (`custom.thresholdsStyle.mode`)
///   is on: `off` is the default (`GraphThresholdsStyleMode`, grafana.com/docs
///   packages_api/schema/graphtresholdsstylemode); with colour mode `thresholds` the series
///   itself takes the colour of the step its last value is in;
/// - stat colours its value or background from the field colour unless its `colorMode` is
///   `none` (the default is `value`: public/app/plugins/panel/stat/module.tsx; "You can control
///   the background or value color using thresholds", grafana.com/docs, Stat);
/// - gauge and bar gauge colour by the field colour; a gauge also draws threshold markers
///   (`showThresholdMarkers`, default on);
/// - a table colours only cells whose type colours (`color-background`, `color-text`,
///   gauges);
/// - state timeline and status history turn values into coloured states by thresholds when
///   the colour mode is `thresholds` (grafana.com/docs, State timeline, "Time series data
///   with thresholds");
/// - the old graph panel draws its own `thresholds` list, never field thresholds; the old
///   singlestat colours only with `colorValue`, `colorBackground` or its gauge's markers.
pub(super) fn drawn(
    kind: &str,
    thresholds: &Thresholds,
    field: &FieldSettings,
    display: &Display,
) -> Result<(), String> {
    // The graph's own list is what it draws; unreadable thresholds are reported as such.
    if matches!(thresholds, Thresholds::Graph(_) | Thresholds::Unreadable(_)) {
        return Ok(());
    }
    let mode = |default: &str| field.color_mode.clone().unwrap_or_else(|| default.into());
    let not_from_thresholds = |m: String| {
        Err(format!(
            "its colour mode is \"{}\", not from thresholds",
            crate::sanitize::sanitize(&m, false, 40)
        ))
    };
    match kind {
        "timeseries" | "trend" | "barchart" | "xychart" | "candlestick" => {
            let style = field.thresholds_style.as_deref().unwrap_or("off");
            if style != "off" || mode("palette-classic") == "thresholds" {
                Ok(())
            } else {
                Err("\"Show thresholds\" (custom.thresholdsStyle.mode) is off".into())
            }
        }
        "stat" => match mode("thresholds") {
            m if m != "thresholds" => not_from_thresholds(m),
            _ if display.stat_color.as_deref() == Some("none") => {
                Err("its \"Color mode\" (options.colorMode) is none".into())
            }
            _ => Ok(()),
        },
        "gauge" => match mode("thresholds") {
            m if m != "thresholds" && display.markers == Some(false) => not_from_thresholds(m),
            _ => Ok(()),
        },
        "bargauge" => match mode("thresholds") {
            m if m != "thresholds" => not_from_thresholds(m),
            _ => Ok(()),
        },
        "table" => match (mode("thresholds"), field.cell_type.as_deref()) {
            (m, _) if m != "thresholds" => not_from_thresholds(m),
            (_, Some(t)) if t.starts_with("color-") || t.ends_with("gauge") => Ok(()),
            _ => Err("its cells are not coloured (custom.cellOptions.type)".into()),
        },
        "state-timeline" | "status-history" => match field.color_mode.clone() {
            Some(m) if m == "thresholds" => Ok(()),
            m => not_from_thresholds(m.unwrap_or_else(|| "the default".into())),
        },
        "singlestat" if display.singlestat_colored => Ok(()),
        "singlestat" => Err("neither colorValue nor colorBackground is on".into()),
        "graph" => Err("the graph panel draws only its own \"thresholds\" list".into()),
        "" => Err("the panel has no type".into()),
        other => Err(format!(
            "a \"{}\" panel does not colour values by thresholds",
            crate::sanitize::sanitize(other, false, 40)
        )),
    }
}

/// warroom levels for `thresholds`; the `String` is a warning when something was dropped.
pub(super) fn levels(
    thresholds: &Thresholds,
    min: Option<f64>,
    max: Option<f64>,
) -> (Levels, Option<String>) {
    match thresholds {
        Thresholds::Unreadable(why) => (
            Levels::default(),
            Some(format!("thresholds not imported: {why}")),
        ),
        Thresholds::Graph(list) => graph_levels(list),
        Thresholds::Steps { percentage, steps } => {
            if *percentage {
                let (Some(lo), Some(hi)) = (min, max) else {
                    return (
                        Levels::default(),
                        Some(
                            "thresholds are percentages of the panel's min–max and the panel sets \
                             no min and max; set warn and crit by hand"
                                .into(),
                        ),
                    );
                };
                let absolute: Vec<Step> = steps
                    .iter()
                    .map(|s| Step {
                        value: s.value.map(|p| lo + (hi - lo) * p / 100.0),
                        color: s.color.clone(),
                    })
                    .collect();
                step_levels(&absolute)
            } else {
                step_levels(steps)
            }
        }
    }
}

fn step_levels(steps: &[Step]) -> (Levels, Option<String>) {
    // Grafana sorts steps by value with null first; for equal values the later one wins.
    let mut sorted: Vec<&Step> = steps.iter().collect();
    sorted.sort_by(|a, b| match (a.value, b.value) {
        (None, None) => std::cmp::Ordering::Equal,
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (Some(x), Some(y)) => x.total_cmp(&y),
    });
    let mut bands: Vec<(Option<f64>, Severity)> = Vec::new();
    for s in sorted {
        let sev = severity(&s.color);
        match bands.last_mut() {
            Some(last) if last.0 == s.value => last.1 = sev,
            _ => bands.push((s.value, sev)),
        }
    }
    // Neighbouring steps of one severity are one band.
    bands.dedup_by(|later, earlier| later.1 == earlier.1);
    let sevs: Vec<Severity> = bands.iter().map(|b| b.1).collect();
    if sevs.iter().all(|s| *s == Severity::Fine) {
        return (Levels::default(), None);
    }
    let rising = sevs.windows(2).all(|w| w[0] <= w[1]);
    let falling = sevs.windows(2).all(|w| w[0] >= w[1]);
    let start = |sev: Severity| bands.iter().find(|b| b.1 == sev).and_then(|b| b.0);
    if rising && sevs.len() > 1 {
        let mut note = None;
        if bands[0].1 != Severity::Fine {
            note = Some(format!(
                "the lowest threshold step is already {}: every value would be at least that; \
                 only the higher steps were imported",
                name(bands[0].1)
            ));
        }
        let levels = Levels {
            warn: start(Severity::Warn),
            crit: start(Severity::Crit),
            bad_when: BadWhen::Above,
        };
        return (levels, note);
    }
    if falling && sevs.len() > 1 {
        // Where a severity ends is where the next, milder step starts.
        let end = |sev: Severity| {
            bands
                .iter()
                .position(|b| b.1 == sev)
                .and_then(|i| bands.get(i + 1))
                .and_then(|b| b.0)
        };
        let levels = Levels {
            warn: end(Severity::Warn),
            crit: end(Severity::Crit),
            bad_when: BadWhen::Below,
        };
        let top = bands[bands.len() - 1].1;
        let note = (top != Severity::Fine).then(|| {
            format!(
                "the highest threshold step is still {}: warroom reads values above the lower \
                 steps as fine",
                name(top)
            )
        });
        return (levels, note);
    }
    if sevs.len() == 1 {
        return (
            Levels::default(),
            Some(format!(
                "the only threshold step is {}: every value would be; thresholds not imported",
                name(sevs[0])
            )),
        );
    }
    let shown: Vec<String> = bands
        .iter()
        .map(|(v, s)| match v {
            None => name(*s).to_string(),
            Some(v) => format!("{} from {v}", name(*s)),
        })
        .collect();
    (
        Levels::default(),
        Some(format!(
            "thresholds mark a band ({}); warroom's thresholds have one bad side, so set warn, \
             crit and bad_when by hand",
            shown.join(", ")
        )),
    )
}

fn name(s: Severity) -> &'static str {
    match s {
        Severity::Fine => "fine",
        Severity::Warn => "a warning",
        Severity::Crit => "critical",
    }
}

fn graph_levels(list: &[GraphThreshold]) -> (Levels, Option<String>) {
    let sev = |t: &GraphThreshold| match t.mode.as_str() {
        "critical" => Severity::Crit,
        "warning" => Severity::Warn,
        "ok" => Severity::Fine,
        _ => t.color.as_deref().map(severity).unwrap_or(Severity::Fine),
    };
    let below = list.first().is_some_and(|t| t.below);
    if list.iter().any(|t| t.below != below) {
        return (
            Levels::default(),
            Some(
                "the graph's thresholds point both ways (gt and lt); set warn, crit and bad_when \
                 by hand"
                    .into(),
            ),
        );
    }
    let pick = |s: Severity| {
        let vals = list.iter().filter(|t| sev(t) == s).map(|t| t.value);
        if below {
            vals.reduce(f64::max)
        } else {
            vals.reduce(f64::min)
        }
    };
    let mut levels = Levels {
        warn: pick(Severity::Warn),
        crit: pick(Severity::Crit),
        bad_when: if below {
            BadWhen::Below
        } else {
            BadWhen::Above
        },
    };
    if let (Some(w), Some(c)) = (levels.warn, levels.crit) {
        let ordered = if below { w >= c } else { w <= c };
        if !ordered {
            levels = Levels::default();
            return (
                levels,
                Some(
                    "the graph's warning threshold lies past its critical one; not imported".into(),
                ),
            );
        }
    }
    (levels, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(list: &[(Option<f64>, &str)]) -> Thresholds {
        Thresholds::Steps {
            percentage: false,
            steps: list
                .iter()
                .map(|(v, c)| Step {
                    value: *v,
                    color: c.to_string(),
                })
                .collect(),
        }
    }

    #[test]
    fn colours_read_as_severities() {
        for (c, s) in [
            ("red", Severity::Crit),
            ("dark-red", Severity::Crit),
            ("#F2495C", Severity::Crit),
            ("#d44a3a", Severity::Crit),
            ("rgba(245, 54, 54, 0.9)", Severity::Crit),
            ("#EAB839", Severity::Warn),
            ("semi-dark-orange", Severity::Warn),
            ("rgba(237, 129, 40, 0.89)", Severity::Warn),
            ("#FADE2A", Severity::Warn),
            ("green", Severity::Fine),
            ("#73BF69", Severity::Fine),
            ("#299c46", Severity::Fine),
            ("blue", Severity::Fine),
            ("transparent", Severity::Fine),
            ("text", Severity::Fine),
            ("#808080", Severity::Fine),
            ("#zzz", Severity::Fine),
            ("", Severity::Fine),
        ] {
            assert_eq!(severity(c), s, "{c}");
        }
    }

    #[test]
    fn rising_steps_are_above() {
        let (l, note) = levels(
            &steps(&[
                (None, "green"),
                (Some(80.0), "#EAB839"),
                (Some(90.0), "red"),
            ]),
            None,
            None,
        );
        assert_eq!(
            l,
            Levels {
                warn: Some(80.0),
                crit: Some(90.0),
                bad_when: BadWhen::Above
            }
        );
        assert_eq!(note, None);
        // Order in the file does not matter; only green and red gives crit alone.
        let (l, _) = levels(&steps(&[(Some(5.0), "red"), (None, "green")]), None, None);
        assert_eq!((l.warn, l.crit), (None, Some(5.0)));
    }

    #[test]
    fn red_at_the_bottom_is_below() {
        let (l, note) = levels(
            &steps(&[(None, "red"), (Some(0.5), "orange"), (Some(0.9), "green")]),
            None,
            None,
        );
        assert_eq!(
            l,
            Levels {
                warn: Some(0.9),
                crit: Some(0.5),
                bad_when: BadWhen::Below
            }
        );
        assert_eq!(note, None);
    }

    #[test]
    fn bands_and_lone_steps_are_left_to_the_user() {
        let (l, note) = levels(
            &steps(&[(None, "red"), (Some(10.0), "green"), (Some(90.0), "red")]),
            None,
            None,
        );
        assert_eq!(l, Levels::default());
        assert!(note.unwrap().contains("band"));
        let (l, note) = levels(&steps(&[(None, "green")]), None, None);
        assert_eq!((l, note), (Levels::default(), None));
        let (l, note) = levels(&steps(&[(None, "red")]), None, None);
        assert_eq!(l, Levels::default());
        assert!(note.is_some());
    }

    #[test]
    fn percentages_need_min_and_max() {
        let t = Thresholds::Steps {
            percentage: true,
            steps: vec![
                Step {
                    value: None,
                    color: "green".into(),
                },
                Step {
                    value: Some(50.0),
                    color: "red".into(),
                },
            ],
        };
        assert!(levels(&t, None, Some(10.0)).1.is_some());
        assert_eq!(levels(&t, Some(0.0), Some(200.0)).0.crit, Some(100.0));
    }

    #[test]
    fn graph_thresholds_keep_their_direction() {
        let t = |value, below, mode: &str| GraphThreshold {
            value,
            below,
            mode: mode.into(),
            color: None,
        };
        let (l, _) = graph_levels(&[t(80.0, false, "warning"), t(95.0, false, "critical")]);
        assert_eq!(
            (l.warn, l.crit, l.bad_when),
            (Some(80.0), Some(95.0), BadWhen::Above)
        );
        let (l, _) = graph_levels(&[t(2.0, true, "critical"), t(3.0, true, "warning")]);
        assert_eq!(
            (l.warn, l.crit, l.bad_when),
            (Some(3.0), Some(2.0), BadWhen::Below)
        );
        let (l, note) = graph_levels(&[t(2.0, true, "critical"), t(3.0, false, "warning")]);
        assert_eq!(l, Levels::default());
        assert!(note.is_some());
    }

    #[test]
    fn thresholds_count_only_where_grafana_draws_them() {
        let t = steps(&[(None, "green"), (Some(80.0), "red")]);
        let field = |mode: Option<&str>, style: Option<&str>| FieldSettings {
            color_mode: mode.map(str::to_string),
            thresholds_style: style.map(str::to_string),
            ..FieldSettings::default()
        };
        let none = Display::default();
        let stat_none = Display {
            stat_color: Some("none".into()),
            ..Display::default()
        };
        let no_markers = Display {
            markers: Some(false),
            ..Display::default()
        };
        for (kind, f, d, shown) in [
            // Time series: only with "Show thresholds" on, or coloured by them.
            ("timeseries", field(None, None), &none, false),
            (
                "timeseries",
                field(Some("palette-classic"), Some("off")),
                &none,
                false,
            ),
            ("timeseries", field(None, Some("line")), &none, true),
            ("timeseries", field(Some("thresholds"), None), &none, true),
            // Stat: colour from thresholds by default, unless its colour mode is none.
            ("stat", field(None, None), &none, true),
            ("stat", field(None, None), &stat_none, false),
            ("stat", field(Some("fixed"), None), &none, false),
            // Gauge: colours or draws markers; bar gauge colours.
            ("gauge", field(Some("fixed"), None), &none, true),
            ("gauge", field(Some("fixed"), None), &no_markers, false),
            ("bargauge", field(None, None), &none, true),
            (
                "bargauge",
                field(Some("continuous-GrYlRd"), None),
                &none,
                false,
            ),
            ("table", field(None, None), &none, false),
            ("heatmap", field(Some("thresholds"), None), &none, false),
            ("graph", field(None, None), &none, false),
            ("singlestat", field(None, None), &none, false),
        ] {
            assert_eq!(drawn(kind, &t, &f, d).is_ok(), shown, "{kind} {f:?} {d:?}");
        }
        let table = FieldSettings {
            cell_type: Some("color-background".into()),
            ..FieldSettings::default()
        };
        assert!(drawn("table", &t, &table, &none).is_ok());
        // The graph panel's own list is what it draws.
        let list = Thresholds::Graph(vec![GraphThreshold {
            value: 1.0,
            below: false,
            mode: "critical".into(),
            color: None,
        }]);
        assert!(drawn("graph", &list, &FieldSettings::default(), &none).is_ok());
    }
}
