//! What `update` asks the runtime to do. The runtime turns each effect into a task.

use crate::metrics::RangeQuery;

#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Query the metrics source for a panel; the answer returns as `Msg::Answer` with the same
    /// generation.
    Fetch {
        panel: usize,
        generation: u64,
        query: RangeQuery,
    },
}
