//! Files: the ramfs, open files and descriptor tables, pipes, the console.

pub mod console;
pub mod export;
pub mod file;
pub mod filedata;
pub mod pipe;
pub mod ramfs;
