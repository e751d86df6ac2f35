//! A libfabric provider's name, as `-P` gives it and as `fi_getinfo`
//! names what it found: a core provider under zero or more utility
//! layers, separated by `;` (`tcp;ofi_rxm` is tcp under ofi_rxm). Parsed
//! once; the one place above the FFI crates where a name is taken apart
//! and compared. The FFI and sysfs crates below this one are handed the
//! core name (`core()`) or the whole name as text; fabric-libfabric's
//! discovery keeps libfabric's own matching for `fi_getinfo`'s list.
//! Never asks libfabric anything: whether a provider is present is the
//! runtime's question.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A provider name: non-empty parts separated by `;`, the core first.
/// Compared as libfabric compares prov_name, ignoring ASCII case.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Provider(String);

/// A `-P` value that names no provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid provider: '{0}'")]
pub struct BadProvider(pub String);

impl Provider {
    /// `text` as a provider name; refused when empty. A name no provider
    /// has (`tcp;`, `tc p`) is libfabric's to refuse, with the list of
    /// those present.
    pub fn parse(text: &str) -> Result<Provider, BadProvider> {
        if text.is_empty() {
            return Err(BadProvider(text.into()));
        }
        Ok(Provider(text.into()))
    }

    /// A name libfabric gave (an `fi_info`'s prov_name, a peer's endpoint):
    /// taken as it is, since what libfabric names it has.
    pub fn named(name: &str) -> Provider {
        Provider(name.into())
    }

    /// The name as written (`tcp;ofi_rxm`).
    pub fn name(&self) -> &str {
        &self.0
    }

    /// The core provider, under every layer (`tcp` of `tcp;ofi_rxm`).
    pub fn core(&self) -> &str {
        self.parts().next().unwrap_or(&self.0)
    }

    /// The utility layers above the core, innermost first (`ofi_rxm`).
    pub fn layers(&self) -> impl Iterator<Item = &str> {
        self.parts().skip(1)
    }

    fn parts(&self) -> impl Iterator<Item = &str> {
        self.0.split(';')
    }

    /// Whether this provider is what `wanted` (a `-P`, or a name given in a
    /// file) asks for, as `fi_getinfo` matches prov_name: the whole name,
    /// or any one of its parts, ignoring ASCII case (`tcp` and
    /// `TCP;ofi_rxm` are both what `-P tcp` asks for; `-P tcp;ofi_rxm`
    /// only the layered one).
    pub fn matches(&self, wanted: &str) -> bool {
        self.0.eq_ignore_ascii_case(wanted) || self.parts().any(|p| p.eq_ignore_ascii_case(wanted))
    }

    /// Whether the core provider is `core` (ignoring ASCII case): what a
    /// provider's own behaviour depends on, whatever is layered above it.
    pub fn is(&self, core: &str) -> bool {
        self.core().eq_ignore_ascii_case(core)
    }

    /// Whether the core provider is one of `cores`.
    pub fn is_any(&self, cores: &[&str]) -> bool {
        cores.iter().any(|c| self.is(c))
    }

    /// Whether any part, the core or a layer, is one of `names`.
    pub fn has_any(&self, names: &[&str]) -> bool {
        self.parts().any(|p| names.iter().any(|n| p.eq_ignore_ascii_case(n)))
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Provider {
    type Error = BadProvider;
    fn try_from(s: String) -> Result<Provider, BadProvider> {
        Provider::parse(&s)
    }
}

impl From<Provider> for String {
    fn from(p: Provider) -> String {
        p.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layered_name_comes_apart_into_its_core_and_layers() {
        let p = Provider::parse("tcp;ofi_rxm").expect("a name");
        assert_eq!((p.name(), p.core()), ("tcp;ofi_rxm", "tcp"));
        assert_eq!(p.layers().collect::<Vec<_>>(), vec!["ofi_rxm"]);
        let p = Provider::parse("shm").expect("a name");
        assert_eq!((p.core(), p.layers().count()), ("shm", 0));
    }

    #[test]
    fn matching_is_fi_getinfos_whole_name_or_any_part_in_any_case() {
        let p = Provider::parse("tcp;ofi_rxm").expect("a name");
        for wanted in ["tcp", "TCP", "ofi_rxm", "tcp;ofi_rxm", "TCP;OFI_RXM"] {
            assert!(p.matches(wanted), "{wanted}");
        }
        for wanted in ["tc", "shm", "tcp;ofi_rxd", ""] {
            assert!(!p.matches(wanted), "{wanted}");
        }
        assert!(p.is("TCP") && !p.is("ofi_rxm"));
        assert!(p.has_any(&["verbs", "ofi_rxm"]) && !p.has_any(&["shm"]));
    }

    #[test]
    fn an_empty_name_is_refused() {
        assert_eq!(Provider::parse(""), Err(BadProvider(String::new())));
        assert_eq!(BadProvider(String::new()).to_string(), "Invalid provider: ''");
    }

    #[test]
    fn it_travels_as_its_name() {
        let p = Provider::parse("verbs;ofi_rxm").expect("a name");
        let text = serde_json::to_string(&p).expect("encodes");
        assert_eq!(text, "\"verbs;ofi_rxm\"");
        assert_eq!(serde_json::from_str::<Provider>(&text).expect("decodes"), p);
        assert!(serde_json::from_str::<Provider>("\"\"").is_err());
    }
}
