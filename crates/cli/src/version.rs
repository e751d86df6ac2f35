//! This fabdiag's version, as `-V`, every JSON document, the serve
//! worker's hello and the sweep's report name it. A leaf: imports nothing.

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
