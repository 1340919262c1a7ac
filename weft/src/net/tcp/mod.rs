//! TCP: listener, stream (with its split halves) and the socket builder.

mod listener;
mod socket;
pub(crate) mod split;
mod stream;

pub use listener::TcpListener;
pub use socket::TcpSocket;
pub use split::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, ReuniteError, WriteHalf};
pub use stream::TcpStream;
