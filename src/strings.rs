//! User-visible strings said in more than one place, so they are said the same way and are
//! changed once.

/// When an action needs an incident and the console has none open.
pub const NO_INCIDENT: &str = "no incident is open here: `warroom open` records one, `warroom open --incident ID` continues one";

/// A float that is not a number as Prometheus writes it (`NaN`, `+Inf`, `-Inf`); `None` for a
/// finite one, which each place writes in its own digits.
pub fn non_finite(v: f64) -> Option<&'static str> {
    if v.is_nan() {
        Some("NaN")
    } else if v == f64::INFINITY {
        Some("+Inf")
    } else if v == f64::NEG_INFINITY {
        Some("-Inf")
    } else {
        None
    }
}
