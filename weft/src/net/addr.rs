//! Address resolution: [`ToSocketAddrs`] and [`lookup_host`].
//!
//! Owns: turning what a user passes to `bind`/`connect` into socket
//! addresses. Literal addresses resolve at once; host names go through the
//! system resolver on the blocking pool, so a slow DNS lookup never blocks a
//! worker.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// What `bind`, `connect` and `send_to` accept as an address: a
/// `SocketAddr`, an `(ip, port)` pair, a `"host:port"` string, or a
/// `(host, port)` pair. Sealed: implemented for the same types as Tokio's
/// trait of the same name.
pub trait ToSocketAddrs: sealed::Sealed {}

pub(crate) mod sealed {
    use super::*;

    /// How an address is resolved.
    #[derive(Debug)]
    pub enum Resolved {
        /// One literal address: no allocation (a `send_to` per datagram
        /// resolves its address each time).
        One(SocketAddr),
        Now(Vec<SocketAddr>),
        /// A host name for the system resolver.
        Lookup(String),
        LookupWithPort(String, u16),
    }

    pub trait Sealed {
        fn to_resolved(&self) -> Resolved;
    }
}

use sealed::{Resolved, Sealed};

macro_rules! literal_addr {
    ($($t:ty),*) => {$(
        impl ToSocketAddrs for $t {}
        impl Sealed for $t {
            fn to_resolved(&self) -> Resolved {
                Resolved::One(SocketAddr::from(*self))
            }
        }
    )*};
}

literal_addr!(
    SocketAddr,
    SocketAddrV4,
    SocketAddrV6,
    (IpAddr, u16),
    (Ipv4Addr, u16),
    (Ipv6Addr, u16)
);

impl ToSocketAddrs for &[SocketAddr] {}
impl Sealed for &[SocketAddr] {
    fn to_resolved(&self) -> Resolved {
        Resolved::Now(self.to_vec())
    }
}

impl ToSocketAddrs for str {}
impl Sealed for str {
    fn to_resolved(&self) -> Resolved {
        match self.parse::<SocketAddr>() {
            Ok(addr) => Resolved::One(addr),
            Err(_) => Resolved::Lookup(self.to_owned()),
        }
    }
}

impl ToSocketAddrs for String {}
impl Sealed for String {
    fn to_resolved(&self) -> Resolved {
        self.as_str().to_resolved()
    }
}

impl ToSocketAddrs for (&str, u16) {}
impl Sealed for (&str, u16) {
    fn to_resolved(&self) -> Resolved {
        match self.0.parse::<IpAddr>() {
            Ok(ip) => Resolved::One(SocketAddr::new(ip, self.1)),
            Err(_) => Resolved::LookupWithPort(self.0.to_owned(), self.1),
        }
    }
}

impl ToSocketAddrs for (String, u16) {}
impl Sealed for (String, u16) {
    fn to_resolved(&self) -> Resolved {
        (self.0.as_str(), self.1).to_resolved()
    }
}

impl<T: ToSocketAddrs + ?Sized> ToSocketAddrs for &T {}
impl<T: Sealed + ?Sized> Sealed for &T {
    fn to_resolved(&self) -> Resolved {
        (**self).to_resolved()
    }
}

/// Resolve `addr` to its socket addresses.
pub(crate) async fn resolve<A: ToSocketAddrs>(addr: A) -> io::Result<Vec<SocketAddr>> {
    look_up(addr.to_resolved()).await
}

/// The first address `addr` resolves to, if any; a literal address
/// without an allocation.
pub(crate) async fn resolve_first<A: ToSocketAddrs>(addr: A) -> io::Result<Option<SocketAddr>> {
    match addr.to_resolved() {
        Resolved::One(addr) => Ok(Some(addr)),
        other => Ok(look_up(other).await?.into_iter().next()),
    }
}

async fn look_up(resolved: Resolved) -> io::Result<Vec<SocketAddr>> {
    let query = match resolved {
        Resolved::One(addr) => return Ok(vec![addr]),
        Resolved::Now(addrs) => return Ok(addrs),
        Resolved::Lookup(host) => host,
        Resolved::LookupWithPort(host, port) => format!("{host}:{port}"),
    };
    crate::task::spawn_blocking(move || {
        std::net::ToSocketAddrs::to_socket_addrs(&query).map(Iterator::collect::<Vec<_>>)
    })
    .await
    .map_err(|e| io::Error::other(format!("address lookup task failed: {e}")))?
}

/// Resolve a host name (with port) through the system resolver, off the
/// worker threads.
///
/// ```
/// # weft::runtime::Runtime::new().unwrap().block_on(async {
/// let addrs: Vec<_> = weft::net::lookup_host("localhost:80").await.unwrap().collect();
/// assert!(addrs.iter().all(|a| a.port() == 80 && a.ip().is_loopback()));
/// # });
/// ```
pub async fn lookup_host<A: ToSocketAddrs>(
    host: A,
) -> io::Result<impl Iterator<Item = SocketAddr>> {
    Ok(resolve(host).await?.into_iter())
}

/// Try each address in turn; the last error if none works.
pub(crate) async fn each_addr<A, T, F, Fut>(addr: A, mut f: F) -> io::Result<T>
where
    A: ToSocketAddrs,
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = io::Result<T>>,
{
    let addrs = resolve(addr).await?;
    let mut last_err = None;
    for addr in addrs {
        match f(addr).await {
            Ok(v) => return Ok(v),
            Err(e) => last_err = Some(e),
        }
    }
    Err(last_err.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every literal address resolves to itself without an allocation (a
    /// `send_to` resolves its address once per datagram); host names wait
    /// for the resolver.
    #[test]
    fn literal_addresses_resolve_to_one_address_at_once() {
        let v4: SocketAddr = "127.0.0.1:53".parse().unwrap();
        let v6: SocketAddr = "[::1]:53".parse().unwrap();
        let ip4 = Ipv4Addr::LOCALHOST;
        let ip6 = Ipv6Addr::LOCALHOST;
        let cases: [(&dyn Sealed, SocketAddr); 9] = [
            (&v4, v4),
            (&SocketAddrV4::new(ip4, 53), v4),
            (&SocketAddrV6::new(ip6, 53, 0, 0), v6),
            (&(IpAddr::V4(ip4), 53), v4),
            (&(ip4, 53), v4),
            (&(ip6, 53), v6),
            (&"[::1]:53", v6),
            (&("127.0.0.1", 53), v4),
            (&String::from("127.0.0.1:53"), v4),
        ];
        for (i, (addr, expected)) in cases.into_iter().enumerate() {
            match addr.to_resolved() {
                Resolved::One(got) => assert_eq!(got, expected, "case {i}"),
                other => panic!("case {i}: {other:?}"),
            }
        }
        assert!(matches!(
            "localhost:53".to_resolved(),
            Resolved::Lookup(host) if host == "localhost:53"
        ));
        assert!(matches!(
            ("localhost", 53).to_resolved(),
            Resolved::LookupWithPort(host, 53) if host == "localhost"
        ));
        let list = [v4, v6];
        assert!(matches!((&list[..]).to_resolved(), Resolved::Now(addrs) if addrs == list));
    }

    #[test]
    fn resolve_first_takes_the_first_address_or_none() {
        crate::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async {
                let first = resolve_first("127.0.0.1:9").await.unwrap();
                assert_eq!(first, Some("127.0.0.1:9".parse().unwrap()));
                let none: &[SocketAddr] = &[];
                assert_eq!(resolve_first(none).await.unwrap(), None);
                let both = resolve(("::1".parse::<IpAddr>().unwrap(), 9))
                    .await
                    .unwrap();
                assert_eq!(both, vec!["[::1]:9".parse().unwrap()]);
            });
    }
}
