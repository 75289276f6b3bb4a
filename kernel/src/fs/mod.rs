//! Files: the ramfs, open files and descriptor tables, pipes, Unix-domain
//! sockets, epoll instances, the console, pseudo-terminals and the other devices of `/dev`, record locks.

pub mod console;
pub mod dev;
pub mod epoll;
pub mod eventfd;
pub mod export;
pub mod ext2;
pub mod file;
pub mod filedata;
pub mod lease;
pub mod lock;
pub mod mount;
pub mod pidfd;
pub mod pipe;
pub mod procfs;
pub mod pty;
pub mod ramfs;
pub mod sigio;
pub mod socket;
