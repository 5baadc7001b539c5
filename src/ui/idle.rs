//! What on screen changes with time alone: the key the loop compares before drawing after a
//! tick (issue 20, "idle means idle"). A tick changes the model's clock every second, but the
//! screen shows it to the minute, panel ages coarsely ([`super::panel::age`]) and a countdown
//! only while the source is down or discovery waits; when none of that reads differently, the
//! tick draws nothing.
//!
//! The key covers every text `view` derives from the clock alone: the status bar's fields (its
//! clock, the source's health and its retry countdown, discovery's line), the message shown
//! (a tick expires it), and each panel's state tag (`◷ stale 10s`: a panel still visibly goes
//! stale) and its value's age (`◷ 1m old`, shown even while the panel is failing). The charts' time axis slides with the clock too, but by less than a braille dot
//! between two refreshes of a live dashboard; it slides whenever anything else draws.

use crate::app::Model;
use std::hash::{Hash, Hasher};

/// A hash of what the clock alone changes on screen (see the module's doc).
pub fn key(model: &Model) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (model.width, model.height).hash(&mut h);
    for (_, spans) in super::statusbar::fields(model) {
        for s in spans {
            s.content.hash(&mut h);
        }
    }
    if let Some(n) = &model.notice {
        n.text.hash(&mut h);
        n.warning.hash(&mut h);
    }
    for i in 0..model.panels.len() {
        let feed = super::panel::Feed::of(model);
        let (tag, _) = super::panel::state_tag_in(&model.panel_state(i), feed, &model.theme);
        tag.hash(&mut h);
        model.value_age(i).map(super::panel::age).hash(&mut h);
    }
    if let Some(d) = &model.discovery {
        d.line(model.now).hash(&mut h);
    }
    h.finish()
}
