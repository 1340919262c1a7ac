//! hickory-server and hickory-resolver, as published, on weft (`tokio` in
//! this graph is weft-tokio): a DNS server on a UDP socket and a TCP
//! listener (hickory's `ServerFuture`: `recv_from`/`send_to` loops and a
//! connection per TCP client), queried by hickory's resolver over each
//! protocol. A UDP server is what weft's io_uring driver receives on
//! through the ring (net/udp.rs, runtime/io/uring/datagram.rs).
//!
//! The server answers `host-N.weft.test.` with `10.0.N/256.N%256` and
//! refuses other names (NXDOMAIN). Checks: 500 concurrent lookups over
//! UDP, 100 over TCP, answers exact; a name it does not serve fails with
//! "no records"; a graceful shutdown. Each flavour, each I/O driver (a
//! child process each). The program panics on the first check that fails.

use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::{ResolveErrorKind, Resolver};
use hickory_server::authority::MessageResponseBuilder;
use hickory_server::proto::op::{Header, ResponseCode};
use hickory_server::proto::rr::rdata::A;
use hickory_server::proto::rr::{Name, RData, Record, RecordType};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::ServerFuture;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use each_driver::ok;

/// The address `host-N.weft.test.` resolves to.
fn address_of(n: u16) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, (n / 256) as u8, (n % 256) as u8)
}

/// Answers `A host-N.weft.test.`; NXDOMAIN for anything else.
struct Hosts {
    answered: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl RequestHandler for Hosts {
    async fn handle_request<R: ResponseHandler>(
        &self,
        request: &Request,
        mut response: R,
    ) -> ResponseInfo {
        let builder = MessageResponseBuilder::from_message_request(request);
        let mut header = Header::response_from_request(request.header());
        header.set_authoritative(true);
        let info = request.request_info().expect("a query");
        let name: Name = info.query.name().into();
        let n = name
            .to_ascii()
            .strip_prefix("host-")
            .and_then(|rest| rest.strip_suffix(".weft.test."))
            .and_then(|n| n.parse::<u16>().ok());
        let records: Vec<Record> = match (n, info.query.query_type()) {
            (Some(n), RecordType::A) => {
                vec![Record::from_rdata(name, 60, RData::A(A(address_of(n))))]
            }
            _ => {
                header.set_response_code(ResponseCode::NXDomain);
                Vec::new()
            }
        };
        self.answered.fetch_add(1, Ordering::Relaxed);
        let message = builder.build(header, records.iter(), &[], &[], &[]);
        response
            .send_response(message)
            .await
            .expect("the answer is sent")
    }
}

fn resolver(addr: SocketAddr, protocol: Protocol) -> Resolver<TokioConnectionProvider> {
    let mut config = ResolverConfig::new();
    config.add_name_server(NameServerConfig::new(addr, protocol));
    let mut opts = ResolverOpts::default();
    opts.cache_size = 0;
    opts.timeout = Duration::from_secs(2);
    opts.attempts = 3;
    let mut builder = Resolver::builder_with_config(config, TokioConnectionProvider::default());
    *builder.options_mut() = opts;
    builder.build()
}

async fn lookups(resolver: &Arc<Resolver<TokioConnectionProvider>>, count: u16) {
    let lookups: Vec<_> = (0..count)
        .map(|n| {
            let resolver = resolver.clone();
            tokio::spawn(async move {
                let found = resolver
                    .lookup_ip(format!("host-{n}.weft.test."))
                    .await
                    .unwrap_or_else(|e| panic!("host-{n}: {e}"));
                let addrs: Vec<_> = found.iter().collect();
                assert_eq!(addrs, [std::net::IpAddr::V4(address_of(n))], "host-{n}");
            })
        })
        .collect();
    for lookup in lookups {
        lookup.await.unwrap();
    }
}

async fn checks() {
    let answered = Arc::new(AtomicUsize::new(0));
    let mut server = ServerFuture::new(Hosts {
        answered: answered.clone(),
    });
    let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let udp_addr = udp.local_addr().unwrap();
    server.register_socket(udp);
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tcp_addr = tcp.local_addr().unwrap();
    server.register_listener(tcp, Duration::from_secs(5));

    let over_udp = Arc::new(resolver(udp_addr, Protocol::Udp));
    lookups(&over_udp, 500).await;
    ok("500 concurrent lookups over UDP answered exactly");

    let over_tcp = Arc::new(resolver(tcp_addr, Protocol::Tcp));
    lookups(&over_tcp, 100).await;
    ok("100 concurrent lookups over TCP answered exactly");

    for resolver in [&over_udp, &over_tcp] {
        let err = resolver.lookup_ip("elsewhere.test.").await.unwrap_err();
        assert!(
            matches!(err.kind(), ResolveErrorKind::Proto(p) if p.is_no_records_found()),
            "{err:?}"
        );
    }
    ok("a name the server does not serve: no records, over both");
    assert!(answered.load(Ordering::Relaxed) >= 602);

    tokio::time::timeout(Duration::from_secs(10), server.shutdown_gracefully())
        .await
        .expect("the server did not shut down")
        .unwrap();
    ok("graceful shutdown");
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, Duration::from_secs(120), checks())
    });
}
