//! Grafana threshold steps to warroom's `warn`, `crit` and `bad_when`.
//!
//! A step applies from its `value` upwards (the first step's `null` is −∞). Each step's colour
//! says how bad it is: reds are critical, oranges and yellows a warning, greens, blues, greys
//! and the text colour fine. When badness rises with the value, `bad_when` is `above`: `warn`
//! is where the first warning colour starts and `crit` where the first red one does. When the
//! red step is the lowest (green at high values: free space, instances up), `bad_when` is
//! `below`: `crit` is where red ends and `warn` where the warning colour ends. Anything else
//! (a band: red, green, red) has no one-sided equivalent and is left to the user.

use super::json::{GraphThreshold, Step, Thresholds};
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
}
