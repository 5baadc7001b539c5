//! How the house format writes dates, durations, times and figures ("July 17, 2026",
//! "1 hour 47 minutes", "42 milliseconds"), and how text is made safe for Markdown.

use crate::config::Unit;
use crate::sanitize;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

/// "July 17, 2026".
pub fn date(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%B %-d, %Y").to_string()
}

/// "07:18" (24-hour, as the house timelines write it).
pub fn clock(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%H:%M").to_string()
}

/// "Jul 17, 2026, 7:18 AM BST", as status pages write it.
pub fn status_time(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz)
        .format("%b %-d, %Y, %-I:%M %p %Z")
        .to_string()
}

fn plural(n: i64, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// "1 hour 47 minutes", "3 minutes", "2 days 4 hours"; under a minute, "less than a minute".
/// Rounded to the nearest minute.
pub fn duration(seconds: i64) -> String {
    let minutes = (seconds.max(0) + 30) / 60;
    if minutes == 0 {
        return "less than a minute".into();
    }
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let mut parts = Vec::new();
    if days > 0 {
        parts.push(plural(days, "day"));
    }
    if hours > 0 {
        parts.push(plural(hours, "hour"));
    }
    if mins > 0 && days == 0 {
        parts.push(plural(mins, "minute"));
    }
    parts.join(" ")
}

/// Seconds between two instants, as [`duration`] words.
pub fn between(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    duration((to - from).num_seconds())
}

/// A number with thousands separators and at most `decimals` decimals (trailing zeros cut).
pub fn number(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "unknown".into();
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let frac = frac.trim_end_matches('0');
    let sign = if v < 0.0 && (grouped != "0" || !frac.is_empty()) {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// A count rounded to three significant figures, as estimates are written ("46,200").
pub fn estimate(v: f64) -> String {
    if !v.is_finite() || v <= 0.0 {
        return number(v.max(0.0), 0);
    }
    let digits = v.log10().floor() as i32;
    let scale = 10f64.powi((digits - 2).max(0));
    number((v / scale).round() * scale, 0)
}

/// A ratio 0..1 as a percentage: whole numbers from 10 % up, one decimal below.
pub fn percent(v: f64) -> String {
    let p = v * 100.0;
    if p.abs() >= 10.0 || (p - p.round()).abs() < 0.05 {
        format!("{}%", number(p, 0))
    } else {
        format!("{}%", number(p, 1))
    }
}

/// Seconds in words: "42 milliseconds", "1.4 seconds", "11 seconds".
pub fn seconds(v: f64) -> String {
    let a = v.abs();
    if a < 1.0 {
        let ms = (v * 1000.0).round();
        if ms == 1.0 {
            "1 millisecond".into()
        } else {
            format!("{} milliseconds", number(ms, 0))
        }
    } else if a < 10.0 {
        let s = number(v, 1);
        if s == "1" {
            "1 second".into()
        } else {
            format!("{s} seconds")
        }
    } else {
        format!("{} seconds", number(v, 0))
    }
}

/// A panel value in its unit, as the draft writes it.
pub fn value(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Percent => percent(v),
        Unit::Seconds => seconds(v),
        Unit::Ratio => format!("{}×", number(v, 1)),
        Unit::Count if v.abs() >= 100.0 => number(v, 0),
        Unit::Count if v.abs() >= 10.0 => number(v, 1),
        Unit::Count => number(v, 2),
        Unit::Bytes => unit.format(v),
        Unit::PerSecond => format!("{} per second", number(v, 1)),
    }
}

/// A panel value in its unit with `extra` more decimals than [`value`] writes.
fn value_finer(unit: Unit, v: f64, extra: usize) -> String {
    if extra == 0 {
        return value(unit, v);
    }
    match unit {
        Unit::Percent => format!("{}%", number(v * 100.0, extra)),
        Unit::Seconds if v.abs() < 1.0 => {
            format!("{} milliseconds", number(v * 1000.0, extra))
        }
        Unit::Seconds => format!("{} seconds", number(v, 1 + extra)),
        Unit::Ratio => format!("{}×", number(v, 1 + extra)),
        Unit::Count => number(v, 2 + extra),
        Unit::Bytes => format!("{} bytes", number(v, extra)),
        Unit::PerSecond => format!("{} per second", number(v, 1 + extra)),
    }
}

/// Values that are set beside each other (a reading and its thresholds), written with the
/// fewest digits at which different values never read the same: "5.03%" beside "5%", "0.01%"
/// beside "0.0101%". Values too close to tell apart at six more decimals keep that precision,
/// and the caller says "just over" or "just under" ([`reading`]).
pub fn distinct(unit: Unit, values: &[f64]) -> Vec<String> {
    let texts = |extra: usize| -> Vec<String> {
        values
            .iter()
            .map(|v| value_finer(unit, *v, extra))
            .collect()
    };
    for extra in 0..=6 {
        let t = texts(extra);
        let clash = (0..values.len())
            .any(|i| (0..values.len()).any(|j| i != j && values[i] != values[j] && t[i] == t[j]));
        if !clash {
            return t;
        }
    }
    texts(6)
}

/// A reading and its threshold written so they never read the same (see [`distinct`]):
/// `(reading, threshold)`. A value exactly at the threshold reads as the threshold (the caller
/// says "reached"); one too close to tell apart reads "just over 5%" or "just under 5%".
pub fn reading_pair(unit: Unit, v: f64, threshold: f64) -> (String, String) {
    let t = distinct(unit, &[v, threshold]);
    let (r, th) = (t[0].clone(), t[1].clone());
    if v != threshold && r == th {
        let word = if v > threshold {
            "just over"
        } else {
            "just under"
        };
        return (format!("{word} {th}"), th);
    }
    (r, th)
}

/// A reading beside its threshold as [`reading_pair`] writes it.
pub fn reading(unit: Unit, v: f64, threshold: f64) -> String {
    reading_pair(unit, v, threshold).0
}

/// How a threshold crossing moved, in the house's words, for a panel where high values are
/// bad (`bad_above`) or low ones: "rose above", "fell below", "returned below", "returned
/// above".
pub fn crossing_verb(bad_above: bool, went_bad: bool) -> &'static str {
    match (bad_above, went_bad) {
        (true, true) => "rose above",
        (false, true) => "fell below",
        (true, false) => "returned below",
        (false, false) => "returned above",
    }
}

/// A delay between two moments: seconds under a minute and a half ("40 seconds"), else
/// [`duration`] (rounded to the minute).
pub fn delay(seconds: i64) -> String {
    let s = seconds.abs();
    if s < 90 {
        if s == 1 {
            "1 second".into()
        } else {
            format!("{s} seconds")
        }
    } else {
        duration(s)
    }
}

/// `text` as a sentence: trimmed, its first letter upper case, ending with a full stop unless
/// it ends with other punctuation already.
pub fn sentence(text: &str) -> String {
    let t = text.trim();
    let mut c = t.chars();
    let Some(first) = c.next() else {
        return String::new();
    };
    let mut out: String = first.to_uppercase().chain(c).collect();
    if !out.ends_with(['.', '!', '?', ':']) {
        out.push('.');
    }
    out
}

/// A note or a recorded line as a sentence, its own words kept: the first letter capitalized
/// only when the first word is a plain lower-case word ("latency rises" → "Latency rises.";
/// "planner-api-2026.07.17.1 deployed" keeps its name), a full stop added unless it ends with
/// other punctuation.
pub fn as_sentence(text: &str) -> String {
    closed(&capitalized(text))
}

/// `text` ending with a full stop unless it ends with other punctuation already.
pub fn closed(text: &str) -> String {
    let t = text.trim();
    if t.ends_with(['.', '!', '?']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// A text with its first letter capitalized when its first word is a plain lower-case word
/// ("latency rises" → "Latency rises"; "planner-api-2026.07.17.1 deployed" stays).
pub fn capitalized(text: &str) -> String {
    let first = text.split_whitespace().next().unwrap_or_default();
    if !first.is_empty() && first.chars().all(|c| c.is_ascii_lowercase()) {
        sentence(text).trim_end_matches('.').to_string()
    } else {
        text.to_string()
    }
}

/// The minute an instant falls in (what [`clock`] shows): windows and durations are taken
/// between these, so "07:00 to 07:22" is always 22 minutes.
pub fn minute(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(at.timestamp().div_euclid(60) * 60, 0).unwrap_or(at)
}

/// The duration between the minutes two instants fall in, in [`duration`] words.
pub fn between_minutes(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    duration((minute(to) - minute(from)).num_seconds())
}

/// Words joined as a list: "a", "a and b", "a, b and c".
pub fn and_list(items: &[String]) -> String {
    joined(items, "and")
}

/// Words joined as alternatives: "a, b or c".
pub fn or_list(items: &[String]) -> String {
    joined(items, "or")
}

fn joined(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}

/// A short axis label for a chart.
pub fn axis(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Percent => percent(v),
        Unit::Seconds | Unit::Bytes | Unit::Count | Unit::PerSecond => unit.format(v),
        Unit::Ratio => format!("{}×", number(v, 1)),
    }
}

/// One line of text from the journal made safe to place anywhere inline in Markdown (a
/// paragraph, a list item, a table cell): hostile characters shown escaped (again, in case a
/// snapshot file was edited by hand), line breaks as spaces, and every character Markdown or
/// HTML would act on escaped with a backslash, so text can never become a heading, a link, an
/// image, a table column, an HTML tag or a mention.
pub fn markdown(text: &str) -> String {
    let flat: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\t' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let clean = sanitize::line(flat.trim());
    let mut out = String::with_capacity(clean.len() + 8);
    let chars: Vec<char> = clean.chars().collect();
    let mut leading_digits = true;
    for (i, &c) in chars.iter().enumerate() {
        // An ordered-list marker is digits, then `.` or `)`, then a space or the end.
        let marker_end = chars.get(i + 1).is_none_or(|n| *n == ' ');
        let escape = match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '&' | '~' | '!' | '#' | '$'
            | '@' => true,
            '-' | '+' | '=' if i == 0 => true,
            '.' | ')' if leading_digits && i > 0 && marker_end => true,
            _ => false,
        };
        leading_digits &= c.is_ascii_digit();
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn house_wording_of_dates_durations_and_figures() {
        let at: DateTime<Utc> = "2026-07-17T06:18:00Z".parse().unwrap();
        assert_eq!(date(at, chrono_tz::Europe::London), "July 17, 2026");
        assert_eq!(clock(at, chrono_tz::Europe::London), "07:18");
        assert_eq!(status_time(at, chrono_tz::UTC), "Jul 17, 2026, 6:18 AM UTC");
        assert_eq!(duration(107 * 60), "1 hour 47 minutes");
        assert_eq!(duration(167 * 60 + 10), "2 hours 47 minutes");
        assert_eq!(duration(3 * 60), "3 minutes");
        assert_eq!(duration(60), "1 minute");
        assert_eq!(duration(7200), "2 hours");
        assert_eq!(duration(20), "less than a minute");
        assert_eq!(number(46_213.0, 0), "46,213");
        assert_eq!(estimate(46_213.0), "46,200");
        assert_eq!(estimate(87.4), "87");
        assert_eq!(percent(0.8123), "81%");
        assert_eq!(percent(0.024), "2.4%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(seconds(0.042), "42 milliseconds");
        assert_eq!(seconds(1.4), "1.4 seconds");
        assert_eq!(seconds(11.3), "11 seconds");
        assert_eq!(value(Unit::Ratio, 2.63), "2.6×");
        assert_eq!(reading(Unit::Percent, 0.0503, 0.05), "5.03%");
        assert_eq!(reading(Unit::Percent, 0.7, 0.7), "70%");
        assert_eq!(reading(Unit::Percent, 0.05000000001, 0.05), "just over 5%");
        assert_eq!(
            reading_pair(Unit::Percent, 0.000101, 0.0001),
            ("0.0101%".to_string(), "0.01%".to_string())
        );
        assert_eq!(reading(Unit::Ratio, 2.0299, 2.0), "2.03×");
        assert_eq!(reading(Unit::Seconds, 1.0695, 1.0), "1.1 seconds");
        assert_eq!(reading(Unit::Seconds, 1.0004, 1.0), "1.0004 seconds");
        assert_eq!(crossing_verb(false, true), "fell below");
        assert_eq!(crossing_verb(true, false), "returned below");
        assert_eq!(delay(40), "40 seconds");
        assert_eq!(delay(180), "3 minutes");
        assert_eq!(delay(119), "2 minutes");
        assert_eq!(sentence(" pools were full"), "Pools were full.");
        assert_eq!(sentence("Done?"), "Done?");
        let (a, b) = (
            "2026-07-17T07:00:54Z".parse().unwrap(),
            "2026-07-17T07:22:10Z".parse().unwrap(),
        );
        assert_eq!(between_minutes(a, b), "22 minutes");
        assert_eq!(
            and_list(&["a".into(), "b".into(), "c".into()]),
            "a, b and c"
        );
    }

    #[test]
    fn markdown_text_cannot_become_markup() {
        assert_eq!(markdown("# head"), "\\# head");
        assert_eq!(markdown("a | b <i>"), "a \\| b \\<i\\>");
        assert_eq!(markdown("1. x"), "1\\. x");
        assert_eq!(markdown("- x\ny"), "\\- x y");
        assert_eq!(markdown("plain text, 42%"), "plain text, 42%");
        for s in sanitize::HOSTILE_SAMPLES {
            let m = markdown(s);
            assert!(sanitize::is_clean(&m, false), "{s:?} -> {m:?}");
            assert!(!m.contains('\n'));
        }
    }
}
