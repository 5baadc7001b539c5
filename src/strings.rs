//! User-visible strings said in more than one place, so they are said the same way and are
//! changed once.

/// When an action needs an incident and the console has none open.
pub const NO_INCIDENT: &str = "no incident is open here: `warroom open` records one, `warroom open --incident ID` continues one";
