//! Listening sockets on every address, IPv6 and IPv4 alike, and socket
//! addresses in their plain form. The one place fabdiag's servers (the
//! pair tools' server, `serve`, the sweep's coordinator and its ranks)
//! open a listening socket on all interfaces. Never prints.

use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

/// The accept queue asked for. std's `TcpListener::bind` asks for 128; a
/// sweep's coordinator is reached by every rank at once, and connections
/// beyond the queue wait for a SYN retransmission (1 s, then 3 s, ...).
/// The kernel caps it at `net.core.somaxconn` (4096 on current kernels).
const BACKLOG: i32 = 4096;

/// Listens on `port` (0: a free one) on every address: one dual-stack
/// socket, so a client that reaches this host by an IPv6 name or literal
/// finds the server as an IPv4 client does. (The originals listened on
/// IPv4 alone, and such a client was told that no server was there.)
/// Where the kernel has no IPv6 at all, IPv4 alone. SO_REUSEADDR is set,
/// as the originals and std do, so a port in TIME_WAIT can be reused.
pub fn listen_any(port: u16) -> io::Result<TcpListener> {
    match listen_on(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port))) {
        Err(e) if no_ipv6(&e) => listen_on(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port))),
        other => other,
    }
}

/// Listens on one address (`listen_any` for all of them) with fabdiag's
/// accept queue.
pub fn listen_on(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    if addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// A kernel booted without IPv6 (`ipv6.disable=1`) refuses the socket or
/// the address.
fn no_ipv6(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EAFNOSUPPORT | libc::EADDRNOTAVAIL))
}

/// An address as a person and the fabric code expect it: an IPv4 peer
/// accepted on a dual-stack socket arrives as `::ffff:a.b.c.d`, which is
/// given back as `a.b.c.d`.
pub fn plain(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    #[test]
    fn one_listener_answers_ipv4_and_ipv6_and_names_both_plainly() {
        let l = listen_any(0).unwrap();
        let port = l.local_addr().unwrap().port();
        let v4 = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (_, from) = l.accept().unwrap();
        assert_eq!(plain(from), v4.local_addr().unwrap(), "an IPv4 peer reads as IPv4");
        match TcpStream::connect(("::1", port)) {
            Ok(v6) => {
                let (_, from) = l.accept().unwrap();
                assert_eq!(plain(from), v6.local_addr().unwrap());
                assert!(plain(from).is_ipv6());
            }
            // a machine whose loopback has no ::1 cannot check this half
            Err(e) => eprintln!("SKIPPED the IPv6 half: cannot connect to [::1]:{port}: {e}"),
        }
    }

    #[test]
    fn a_port_in_use_is_refused_as_in_use() {
        let l = listen_any(0).unwrap();
        let port = l.local_addr().unwrap().port();
        let e = listen_any(port).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
        // and an IPv4-only holder of the port blocks it too
        drop(l);
        let v4 = TcpListener::bind(("0.0.0.0", 0)).unwrap();
        let e = listen_any(v4.local_addr().unwrap().port()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
    }

    #[test]
    fn plain_unmaps_ipv4_and_leaves_the_rest_alone() {
        for (a, want) in [
            ("[::ffff:198.18.0.2]:4000", "198.18.0.2:4000"),
            ("198.18.0.2:4000", "198.18.0.2:4000"),
            ("[fd00::2]:4000", "[fd00::2]:4000"),
        ] {
            assert_eq!(plain(a.parse().unwrap()).to_string(), want);
        }
    }
}
