//! What probing this machine's providers found: each provider and domain
//! with the operations the tools need, each provider's capabilities, and
//! each cell of the atomic support matrix. The session library fills
//! these; the renderers print them. Describes only; nothing here probes.

use serde::Serialize;

/// One provider/domain and which of the bandwidth tools' operations it has.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ProviderRow {
    pub provider: String,
    pub domain: String,
    pub fabric: String,
    pub rma_write: bool,
    pub rma_read: bool,
    pub msg: bool,
}

/// One provider, with its domains and what it can do here.
#[derive(Clone, Debug, Serialize)]
pub struct ProviderCaps {
    pub provider: String,
    pub domains: Vec<String>,
    pub rma_write: bool,
    pub rma_read: bool,
    pub msg: bool,
    pub atomic: bool,
    /// Device (GPU) memory through FI_HMEM.
    pub hmem: bool,
}

/// One cell of the atomic support matrix.
#[derive(Clone, Debug, Serialize)]
pub struct AmoSupport {
    pub provider: String,
    pub op: &'static str,
    pub cswap_op: Option<&'static str>,
    pub atomic_type: &'static str,
    pub fetching: bool,
    pub libfabric_op: &'static str,
    pub libfabric_call: &'static str,
    /// Allowed by the originals' op/type rules.
    pub allowed: bool,
    pub supported: bool,
    /// Supported, but refused: a provider defect would crash the process.
    pub defect: Option<&'static str>,
}

impl AmoSupport {
    pub fn usable(&self) -> bool {
        self.supported && self.defect.is_none()
    }
}
