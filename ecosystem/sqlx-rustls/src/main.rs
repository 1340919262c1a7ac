//! sqlx with SQLite and tokio-rustls, as published, on weft (`tokio` in
//! this graph is weft-tokio): real queries on a file database through a
//! connection pool, and a TLS echo with a certificate generated on the spot.
//! Each check asserts its result; the program panics on the first that
//! fails.

use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::Row;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::{
    CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName,
};
use tokio_rustls::rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use each_driver::ok;

async fn sqlite_queries() {
    let path = std::env::temp_dir().join(format!("weft-eco-{}.db", std::process::id()));
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap();
    sqlx::query(
        "CREATE TABLE tasks (id INTEGER PRIMARY KEY, name TEXT NOT NULL, polls INTEGER NOT NULL)",
    )
    .execute(&pool)
    .await
    .unwrap();
    // Inserts from concurrent tasks, each on a pooled connection.
    let inserts: Vec<_> = (1..=20i64)
        .map(|i| {
            let pool = pool.clone();
            tokio::spawn(async move {
                sqlx::query("INSERT INTO tasks (name, polls) VALUES (?, ?)")
                    .bind(format!("task-{i}"))
                    .bind(i * 10)
                    .execute(&pool)
                    .await
                    .unwrap();
            })
        })
        .collect();
    for insert in inserts {
        insert.await.unwrap();
    }
    let row = sqlx::query("SELECT COUNT(*) AS n, SUM(polls) AS total FROM tasks")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(row.get::<i64, _>("n"), 20);
    assert_eq!(
        row.get::<i64, _>("total"),
        (1..=20).map(|i| i * 10).sum::<i64>()
    );
    let mut tx = pool.begin().await.unwrap();
    sqlx::query("DELETE FROM tasks WHERE polls > 100")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM tasks")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(n, 20, "the rolled-back delete left every row");
    pool.close().await;
    std::fs::remove_file(&path).ok();
    ok("sqlx + SQLite: pool, concurrent inserts, aggregate query, rolled-back transaction");
}

async fn tls_echo() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert_der = CertificateDer::from(cert.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let server_config = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert_der.clone()], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(server_config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut tls = acceptor.accept(tcp).await.unwrap();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = tls.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            tls.write_all(&buf[..n]).await.unwrap();
        }
        tls.shutdown().await.unwrap();
    });

    let mut roots = RootCertStore::empty();
    roots.add(cert_der).unwrap();
    let client_config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = TlsConnector::from(Arc::new(client_config));
    let tcp = TcpStream::connect(addr).await.unwrap();
    let tls = connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    let message: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let (mut reader, mut writer) = tokio::io::split(tls);
    let sent = message.clone();
    let write = tokio::spawn(async move {
        writer.write_all(&sent).await.unwrap();
        writer.shutdown().await.unwrap();
    });
    let mut echoed = Vec::new();
    reader.read_to_end(&mut echoed).await.unwrap();
    write.await.unwrap();
    server.await.unwrap();
    assert_eq!(echoed, message);
    ok("tokio-rustls: TLS 1.3 echo of 200 kB with a generated certificate");
}

async fn checks() {
    sqlite_queries().await;
    tls_echo().await;
    println!("sqlx and tokio-rustls on weft: all checks passed");
}

fn main() {
    each_driver::main(&each_driver::FLAVOURS, |flavour| {
        each_driver::block_on_within(flavour, std::time::Duration::from_secs(120), checks())
    });
}
