//! Which peers the monitor watches: the lines of a peers file, or the nodes
//! of a Slurm partition as `sinfo` lists them. It parses text it is handed;
//! it never runs `sinfo`, reads a file or resolves a name.

pub use fabdiag_model::DEFAULT_PORT;

/// A peer: the name its metrics carry, and where its `fabdiag serve` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// The `peer` label: the host as written (with `:PORT` when the port is
    /// not the monitor's), or the Slurm node name.
    pub name: String,
    /// What the probe connects to: a name or an address (IPv6 bare).
    pub host: String,
    pub port: u16,
}

#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum PeersError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error("line {line}: {peer} is listed twice (first on line {first})")]
    Twice { line: usize, first: usize, peer: String },
    #[error("no peers in {0}")]
    Empty(String),
}

/// The peers of a peers file: one `HOST`, `HOST:PORT`, `[IPV6]:PORT` or
/// bare IPv6 address per line; `#` starts a comment; blank lines are
/// skipped. `port` is the port of a line without one.
pub fn parse_file(text: &str, port: u16, what: &str) -> Result<Vec<Peer>, PeersError> {
    let mut peers: Vec<(usize, Peer)> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n + 1;
        let body = raw.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let peer = parse_one(body, port).map_err(|reason| PeersError::Line { line, reason })?;
        if let Some((first, _)) = peers.iter().find(|(_, p)| p.host == peer.host && p.port == peer.port) {
            return Err(PeersError::Twice {
                line,
                first: *first,
                peer: peer.name,
            });
        }
        peers.push((line, peer));
    }
    if peers.is_empty() {
        return Err(PeersError::Empty(what.to_string()));
    }
    Ok(peers.into_iter().map(|(_, p)| p).collect())
}

/// One peer as written on a line or on the command line.
pub fn parse_one(s: &str, port: u16) -> Result<Peer, String> {
    if s.split_whitespace().nth(1).is_some() {
        return Err(format!("'{s}': one peer per line"));
    }
    let (host, given) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("'{s}': an IPv6 address in brackets lacks its ']'"))?;
        match after {
            "" => (h, None),
            _ => match after.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None => return Err(format!("'{s}': after ']' comes ':PORT'")),
            },
        }
    } else if s.matches(':').count() >= 2 {
        (s, None)
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    if host.is_empty() {
        return Err(format!("'{s}': no host"));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '%');
    if let Some(c) = host.chars().find(|&c| !allowed(c)) {
        return Err(format!("'{s}': '{c}' cannot be in a host name or address"));
    }
    let p = match given {
        None => port,
        Some(p) => match p.parse::<u16>() {
            Ok(p) if p > 0 => p,
            _ => return Err(format!("'{s}': '{p}' is not a port (1 to 65535)")),
        },
    };
    let shown = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    Ok(Peer {
        name: if p == port { shown } else { format!("{shown}:{p}") },
        host: host.to_string(),
        port: p,
    })
}

/// The peers of a Slurm partition from the output of
/// `sinfo -h -N -p PARTITION -o "%N %o"` (node name, then the address
/// Slurm reaches it at), less `own` (this node) and nodes listed twice.
pub fn from_sinfo(text: &str, own: &str, port: u16, partition: &str) -> Result<Vec<Peer>, PeersError> {
    let own_short = own.split('.').next().unwrap_or(own);
    let mut peers: Vec<Peer> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let mut fields = raw.split_whitespace();
        let Some(name) = fields.next() else { continue };
        let addr = fields.next().unwrap_or(name);
        if fields.next().is_some() {
            return Err(PeersError::Line {
                line: n + 1,
                reason: format!(
                    "sinfo printed '{}' where a node name and address were asked for",
                    raw.trim()
                ),
            });
        }
        if name == own || name == own_short || peers.iter().any(|p| p.name == name) {
            continue;
        }
        let p = parse_one(addr, port).map_err(|reason| PeersError::Line { line: n + 1, reason })?;
        peers.push(Peer {
            name: name.to_string(),
            host: p.host,
            port,
        });
    }
    if peers.is_empty() {
        return Err(PeersError::Empty(format!("partition {partition} (other than {own})")));
    }
    Ok(peers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Result<(String, String, u16), String> {
        parse_one(s, DEFAULT_PORT).map(|p| (p.name, p.host, p.port))
    }

    #[test]
    fn every_way_of_writing_a_peer() {
        let ok = |n: &str, h: &str, p: u16| Ok((n.to_string(), h.to_string(), p));
        assert_eq!(one("n001"), ok("n001", "n001", 49194));
        assert_eq!(one("n001:5000"), ok("n001:5000", "n001", 5000));
        assert_eq!(one("198.18.0.2:49194"), ok("198.18.0.2", "198.18.0.2", 49194));
        assert_eq!(one("[fd00::2]:5000"), ok("[fd00::2]:5000", "fd00::2", 5000));
        assert_eq!(one("[fd00::2]"), ok("[fd00::2]", "fd00::2", 49194));
        assert_eq!(one("fd00::2"), ok("[fd00::2]", "fd00::2", 49194));
    }

    #[test]
    fn a_bad_line_is_named() {
        for (s, says) in [
            ("n1:0", "is not a port"),
            ("n1:70000", "is not a port"),
            ("n1:", "is not a port"),
            (":80", "no host"),
            ("[fd00::2", "lacks its ']'"),
            ("[fd00::2]5000", "':PORT'"),
            ("n1 n2", "one peer per line"),
            ("n/1", "'/' cannot be"),
        ] {
            let e = one(s).expect_err(s);
            assert!(e.contains(says), "{s}: {e}");
        }
        let e = parse_file("n1\n\n  # two\nn2:x\n", DEFAULT_PORT, "peers").expect_err("bad");
        assert_eq!(e.to_string(), "line 4: 'n2:x': 'x' is not a port (1 to 65535)");
    }

    #[test]
    fn comments_blanks_and_twins() {
        let peers = parse_file("# rack 1\nn1  # first\n\nn2:49194\nn3:7\n", DEFAULT_PORT, "f").expect("parses");
        let names: Vec<&str> = peers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2", "n3:7"]);
        let e = parse_file("n1\nn2\nn1:49194\n", DEFAULT_PORT, "f").expect_err("twice");
        assert_eq!(e.to_string(), "line 3: n1 is listed twice (first on line 1)");
        let e = parse_file("# none\n\n", DEFAULT_PORT, "peers.txt").expect_err("empty");
        assert_eq!(e.to_string(), "no peers in peers.txt");
    }

    #[test]
    fn a_partition_without_this_node_and_without_twins() {
        let sinfo = "n001 10.0.0.1\nn002 10.0.0.2\nn002 10.0.0.2\nn003 n003\n";
        let peers = from_sinfo(sinfo, "n002.cluster", 49194, "gpu").expect("parses");
        let got: Vec<(&str, &str)> = peers.iter().map(|p| (p.name.as_str(), p.host.as_str())).collect();
        assert_eq!(got, [("n001", "10.0.0.1"), ("n003", "n003")]);
        let e = from_sinfo("n002 10.0.0.2\n", "n002", 49194, "gpu").expect_err("alone");
        assert_eq!(e.to_string(), "no peers in partition gpu (other than n002)");
        let e = from_sinfo("n1 a b\n", "x", 49194, "gpu").expect_err("odd");
        assert!(e.to_string().starts_with("line 1: sinfo printed"), "{e}");
    }
}
