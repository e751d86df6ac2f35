//! The originals' words that a run description carries as values (a
//! switch's state, system memory), so the banner and the JSON `config`
//! say the same. Every other word of the originals' tables is
//! fabdiag-report's (`legacy`). Constants only.

pub const ENABLED: &str = "Enabled";
pub const DISABLED: &str = "Disabled";
pub const NOT_APPLICABLE: &str = "Disabled - Not Applicable";
pub const SYSTEM_MEM: &str = "System";
