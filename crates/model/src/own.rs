//! This side's own settings, as the command line gives them: what the
//! user chose for this process only (provider, domain, service ID, the
//! GPU type, how it polls) and is never sent to the peer. fabdiag-session turns them
//! into its `Env`; fabdiag-gpu maps `GpuKind` to the runtime it loads.
//! Plain data: nothing here reads the environment or loads a library.

/// The originals' default service ID.
pub const DEFAULT_SVC_ID: u32 = 1;

/// `-P`, `-d`, `-v`, `--ignore-cpu-freq-mismatch` and `--poll`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnSettings {
    /// `-P`: the client's provider (None: the best one); on a server, the
    /// only provider it accepts.
    pub provider: Option<crate::Provider>,
    /// `-d`: the domain (None: the one that reaches the peer).
    pub device: Option<String>,
    /// `-v`: shown in the banner.
    pub svc_id: u32,
    /// `--ignore-cpu-freq-mismatch`, for `--clock cycles`.
    pub ignore_cpu_freq_mismatch: bool,
    /// `--poll`: what this side's threads do when a completion queue is
    /// empty.
    pub poll: PollMode,
}

/// What a thread waiting on a completion queue does when a poll finds
/// it empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PollMode {
    /// Poll again at once: the lowest latency, and a core held for the
    /// whole test (the originals' and fabtests' default).
    #[default]
    Spin,
    /// Give the CPU to any other thread that is ready to run, then poll
    /// again (fabtests' `-c yield`): for hosts with more busy ranks than
    /// cores, where spinning threads take turns in scheduler slices.
    Yield,
}

impl PollMode {
    /// `--poll`'s value.
    pub fn parse(s: &str) -> Option<PollMode> {
        match s {
            "spin" => Some(PollMode::Spin),
            "yield" => Some(PollMode::Yield),
            _ => None,
        }
    }

    /// Its name, as `--poll` takes it and the JSON records it.
    pub fn name(self) -> &'static str {
        match self {
            PollMode::Spin => "spin",
            PollMode::Yield => "yield",
        }
    }
}

impl Default for OwnSettings {
    fn default() -> Self {
        OwnSettings {
            provider: None,
            device: None,
            svc_id: DEFAULT_SVC_ID,
            ignore_cpu_freq_mismatch: false,
            poll: PollMode::Spin,
        }
    }
}

/// A GPU vendor, as `-g` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuKind {
    Amd,
    Nvidia,
    Intel,
}

impl GpuKind {
    /// `-g`'s value in any letter case (site scripts pass `Nvidia`).
    pub fn parse(s: &str) -> Option<GpuKind> {
        match s.to_ascii_uppercase().as_str() {
            "AMD" => Some(GpuKind::Amd),
            "NVIDIA" => Some(GpuKind::Nvidia),
            "INTEL" => Some(GpuKind::Intel),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_modes_by_their_names_and_back() {
        for m in [PollMode::Spin, PollMode::Yield] {
            assert_eq!(PollMode::parse(m.name()), Some(m));
        }
        assert_eq!(PollMode::parse("Yield"), None);
        assert_eq!(PollMode::parse(""), None);
    }

    #[test]
    fn gpu_types_in_any_letter_case() {
        for (s, k) in [
            ("Nvidia", GpuKind::Nvidia),
            ("amd", GpuKind::Amd),
            ("INTEL", GpuKind::Intel),
            ("NVIDIA", GpuKind::Nvidia),
            ("AMD", GpuKind::Amd),
        ] {
            assert_eq!(GpuKind::parse(s), Some(k));
        }
        assert_eq!(GpuKind::parse("nvidia "), None);
        assert_eq!(GpuKind::parse("CUDA"), None);
    }
}

/// What a server lets one client's test take (`fabdiag serve
/// --max-memory`, `--max-test-seconds`, `--max-tests-per-minute`); None:
/// no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServeLimits {
    /// Bytes one test may make this server allocate and register.
    pub max_memory_bytes: Option<u64>,
    /// Seconds one test may run.
    pub max_test_s: Option<u64>,
    /// Tests one client (one address) may start a minute.
    pub max_tests_per_minute: Option<u32>,
}
