//! Where warroom keeps its files when not told otherwise (XDG directories).

use std::path::PathBuf;

const APP: &str = "warroom";

/// The default configuration file: `$XDG_CONFIG_HOME/warroom/warroom.toml`.
pub fn default_config_file() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("warroom.toml"))
}

/// The user's own runbooks: `$XDG_CONFIG_HOME/warroom/runbooks/`.
pub fn default_runbook_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("runbooks"))
}

/// The user's own signal presets: `$XDG_CONFIG_HOME/warroom/presets/`.
pub fn default_presets_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join(APP).join("presets"))
}

/// The default data directory, where incidents live.
pub fn default_data_dir() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join(APP)
}

/// The default log file.
pub fn default_log_file() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::cache_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join(APP)
        .join("warroom.log")
}
