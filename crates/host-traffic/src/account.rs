//! From event times to each test's figures. Times are milliseconds from
//! one origin (the release of the start gate), read from CUDA events.
//! A simultaneous test lasts as long as its tile work: the host streams
//! chunks meanwhile and counts those that finished inside that window
//! (the original's host byte counts are whole multiples of its chunk), and
//! its figure is those bytes over its own span, from its start to the last
//! counted chunk's end. A host-only test lasts from its first copy's start
//! to its last copy's end; a tile-only test is its kernel's time.

use thiserror::Error;

/// What the events of one test said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// The tile kernel's start and end.
    pub tile: Option<(f64, f64)>,
    /// When the host stream started copying.
    pub host_start: Option<f64>,
    /// When each host chunk finished, in issue order.
    pub host_ends: Vec<f64>,
}

/// One test's figures, as the report shows them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    pub duration_s: f64,
    /// The host side's own span, in a simultaneous test.
    pub host_duration_s: Option<f64>,
    pub host_bytes: u64,
    pub tile_bytes: u64,
}

#[derive(Debug, Error, PartialEq)]
pub enum AccountError {
    #[error("the tile work took {tile_ms:.3} ms and no host chunk finished inside it; raise -i or lower --chunk-size")]
    NoHostChunkInWindow { tile_ms: f64 },
    #[error("the GPU's event times are out of order ({what})")]
    Disorder { what: &'static str },
    #[error("the test recorded no {0} times")]
    Missing(&'static str),
}

/// The figures of a test with the given sides, from its timeline.
pub fn figures(t: &Timeline, host: bool, tile: bool, chunk: u64, tile_bytes: u64) -> Result<Figures, AccountError> {
    let ordered = |a: f64, b: f64| a.is_finite() && b.is_finite() && a <= b;
    match (host, tile) {
        (_, true) => {
            let (s, e) = t.tile.ok_or(AccountError::Missing("tile"))?;
            if !ordered(s, e) {
                return Err(AccountError::Disorder {
                    what: "tile end before start",
                });
            }
            let (host_bytes, host_duration_s) = if host {
                let hs = t.host_start.ok_or(AccountError::Missing("host"))?;
                let counted: Vec<f64> = t
                    .host_ends
                    .iter()
                    .copied()
                    .filter(|&x| ordered(hs, x) && x <= e)
                    .collect();
                let Some(last) = counted.iter().copied().reduce(f64::max) else {
                    return Err(AccountError::NoHostChunkInWindow { tile_ms: e - s });
                };
                (counted.len() as u64 * chunk, Some((last - hs) / 1e3))
            } else {
                (0, None)
            };
            Ok(Figures {
                duration_s: (e - s) / 1e3,
                host_duration_s,
                host_bytes,
                tile_bytes,
            })
        }
        (true, false) => {
            let hs = t.host_start.ok_or(AccountError::Missing("host"))?;
            let last = t.host_ends.iter().copied().fold(f64::NAN, f64::max);
            if t.host_ends.is_empty() {
                return Err(AccountError::Missing("host chunk"));
            }
            if !ordered(hs, last) || t.host_ends.windows(2).any(|w| w[1] < w[0]) {
                return Err(AccountError::Disorder {
                    what: "host chunks ended out of order or before the start",
                });
            }
            Ok(Figures {
                duration_s: (last - hs) / 1e3,
                host_duration_s: None,
                host_bytes: t.host_ends.len() as u64 * chunk,
                tile_bytes: 0,
            })
        }
        (false, false) => Err(AccountError::Missing("host or tile")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB16: u64 = 16 << 20;

    #[test]
    fn simultaneous_tests_count_host_chunks_inside_the_tile_window() {
        let t = Timeline {
            tile: Some((0.5, 100.5)),
            host_start: Some(0.4),
            host_ends: vec![10.0, 20.0, 99.9, 100.5, 100.6, 130.0],
        };
        let f = figures(&t, true, true, MIB16, 1 << 30).unwrap();
        assert!((f.duration_s - 0.1).abs() < 1e-12);
        assert_eq!(
            f.host_bytes,
            4 * MIB16,
            "the chunk ending exactly at the tile end counts, later ones do not"
        );
        assert_eq!(f.tile_bytes, 1 << 30);
        // a tile window shorter than any chunk is an error, not a zero
        let short = Timeline {
            tile: Some((0.0, 1.0)),
            host_start: Some(0.0),
            host_ends: vec![5.0],
        };
        assert_eq!(
            figures(&short, true, true, MIB16, 1).unwrap_err(),
            AccountError::NoHostChunkInWindow { tile_ms: 1.0 }
        );
    }

    #[test]
    fn host_only_and_tile_only_use_their_own_times() {
        let t = Timeline {
            tile: None,
            host_start: Some(1.0),
            host_ends: vec![2.0, 3.0, 5001.0],
        };
        let f = figures(&t, true, false, MIB16, 0).unwrap();
        assert_eq!((f.duration_s, f.host_bytes, f.tile_bytes), (5.0, 3 * MIB16, 0));
        assert_eq!(f.host_duration_s, None, "a host-only test's duration is the host's own");
        let t = Timeline {
            tile: Some((2.0, 2502.0)),
            ..Timeline::default()
        };
        let f = figures(&t, false, true, MIB16, 77).unwrap();
        assert_eq!((f.duration_s, f.host_bytes, f.tile_bytes), (2.5, 0, 77));
    }

    #[test]
    fn broken_timelines_are_errors() {
        let backwards = Timeline {
            tile: Some((5.0, 1.0)),
            ..Timeline::default()
        };
        assert!(matches!(
            figures(&backwards, false, true, 1, 1),
            Err(AccountError::Disorder { .. })
        ));
        let nan = Timeline {
            tile: Some((0.0, f64::NAN)),
            ..Timeline::default()
        };
        assert!(figures(&nan, false, true, 1, 1).is_err());
        let out_of_order = Timeline {
            host_start: Some(0.0),
            host_ends: vec![3.0, 2.0],
            ..Timeline::default()
        };
        assert!(figures(&out_of_order, true, false, 1, 0).is_err());
        assert_eq!(
            figures(&Timeline::default(), true, false, 1, 0).unwrap_err(),
            AccountError::Missing("host")
        );
    }
}
