//! Running [hyper](https://docs.rs/hyper) 1.x on weft (feature `hyper`).
//!
//! hyper is runtime-agnostic: it reads and writes through its own
//! [`hyper::rt::Read`] / [`hyper::rt::Write`] traits, spawns background work
//! through a [`hyper::rt::Executor`], and sleeps through a
//! [`hyper::rt::Timer`]. This module provides the three weft pieces:
//!
//! - [`TcpStream`](crate::net::TcpStream) and
//!   [`UnixStream`](crate::net::UnixStream) implement hyper's traits
//!   themselves (reading straight into hyper's uninitialized buffer), so an
//!   accepted stream goes to hyper as it is;
//! - [`WeftIo`] wraps any other weft stream (anything with weft's
//!   [`AsyncRead`](crate::io::AsyncRead) / [`AsyncWrite`](crate::io::AsyncWrite),
//!   such as a [`DuplexStream`](crate::io::DuplexStream)) for hyper, and the
//!   other way round;
//! - [`WeftExecutor`] spawns hyper's tasks with [`crate::spawn`] (needed for
//!   HTTP/2);
//! - [`WeftTimer`] gives hyper weft's [`sleep`](crate::time::sleep) (needed
//!   for hyper's timeouts and HTTP/2 keep-alive).
//!
//! A server and a client in one program (hyper with its `http1`, `server`
//! and `client` features, plus `http-body-util` for the `Full` body):
//!
//! ```
//! use http_body_util::{BodyExt, Full};
//! use hyper::body::{Bytes, Incoming};
//! use hyper::{Request, Response};
//! use std::convert::Infallible;
//! use weft::hyper::{WeftIo, WeftTimer};
//! use weft::net::{TcpListener, TcpStream};
//!
//! async fn hello(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
//!     let text = format!("hello, {}", req.uri().path());
//!     Ok(Response::new(Full::new(Bytes::from(text))))
//! }
//!
//! # type Error = Box<dyn std::error::Error + Send + Sync>;
//! weft::runtime::Runtime::new().unwrap().block_on(async {
//!     // The server: one task per connection.
//!     let listener = TcpListener::bind("127.0.0.1:0").await?;
//!     let addr = listener.local_addr()?;
//!     weft::spawn(async move {
//!         loop {
//!             let Ok((stream, _)) = listener.accept().await else { break };
//!             weft::spawn(async move {
//!                 let conn = hyper::server::conn::http1::Builder::new()
//!                     .timer(WeftTimer::new())
//!                     .serve_connection(stream, hyper::service::service_fn(hello));
//!                 if let Err(e) = conn.await {
//!                     eprintln!("connection error: {e}");
//!                 }
//!             });
//!         }
//!     });
//!
//!     // The client: a handshake, then the connection runs in its own task.
//!     let stream = TcpStream::connect(addr).await?;
//!     let (mut sender, conn) = hyper::client::conn::http1::handshake(WeftIo::new(stream)).await?;
//!     weft::spawn(conn);
//!
//!     let req = Request::get("/weft").body(Full::new(Bytes::new()))?;
//!     let res = sender.send_request(req).await?;
//!     assert_eq!(res.status(), 200);
//!     let body = res.into_body().collect().await?.to_bytes();
//!     assert_eq!(body, "hello, /weft");
//!     Ok::<(), Error>(())
//! })
//! .unwrap();
//! ```
//!
//! For HTTP/2, give the builders a [`WeftExecutor`] (and a [`WeftTimer`]):
//! `hyper::server::conn::http2::Builder::new(WeftExecutor::new())` and
//! `hyper::client::conn::http2::Builder::new(WeftExecutor::new())`.

mod io;
mod rt;
mod socket;

pub use io::WeftIo;
pub use rt::{WeftExecutor, WeftSleep, WeftTimer};
